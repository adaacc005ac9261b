//! Sweep results: weighted averages and the paper's table layouts (Tables 3, 4, 6, 7, 8 of
//! `shared/seeds/003_…`), as text, CSV and JSON.

use std::fmt::Write as _;
use std::io::{self, Write};

use serde::{Deserialize, Serialize};
use streamtrace_model::{Config, Scheme};

use super::SweepRow;

/// Everything a sweep (or a merge of shards) produced.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SweepResults {
    /// How the rows were made, when known (files of older versions have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<SweepMeta>,
    pub rows: Vec<SweepRow>,
}

/// What produced a set of rows, as gem5's stats.txt records its command line and version:
/// `# key: value` lines at the top of the CSV, `meta` in the JSON (docs/sweeps.md,
/// "Metadata").
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct SweepMeta {
    /// The command line, shell-quoted where needed.
    pub command: String,
    /// streamtrace's version.
    pub version: String,
    /// The git commit streamtrace was built from, when the build knew it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// When the file was written, UTC, ISO 8601.
    pub date: String,
    /// Where retire cycles came from (`ipc1`, `xscale`, `xscale-HASH` for a timing file).
    pub timing: String,
    /// The instruction cap of every program's run.
    pub max_insns: u64,
    /// `k/N` for one shard of a sharded sweep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// The sweep was interrupted: the rows are the jobs that finished.
    pub partial: bool,
    /// The files a merge read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<String>,
}

impl SweepMeta {
    /// The `# key: value` lines of the CSV header.
    fn write_comments<W: Write>(&self, w: &mut W) -> io::Result<()> {
        writeln!(w, "# streamtrace sweep results (docs/sweeps.md)")?;
        writeln!(w, "# command: {}", self.command)?;
        writeln!(w, "# version: {}", self.version)?;
        if let Some(c) = &self.commit {
            writeln!(w, "# commit: {c}")?;
        }
        writeln!(w, "# date: {}", self.date)?;
        writeln!(w, "# timing: {}", self.timing)?;
        writeln!(w, "# max_insns: {}", self.max_insns)?;
        if let Some(s) = &self.shard {
            writeln!(w, "# shard: {s}")?;
        }
        writeln!(w, "# partial: {}", self.partial)?;
        for s in &self.sources {
            writeln!(w, "# source: {s}")?;
        }
        Ok(())
    }

    /// One `key: value` comment (without `# `) into `self`; unknown keys are left alone
    /// so that newer files still merge.
    fn read_comment(&mut self, text: &str, at: &str) -> Result<(), String> {
        let Some((key, value)) = text.split_once(": ") else { return Ok(()) };
        let value = value.to_string();
        match key {
            "command" => self.command = value,
            "version" => self.version = value,
            "commit" => self.commit = Some(value),
            "date" => self.date = value,
            "timing" => self.timing = value,
            "max_insns" => self.max_insns = value.parse().map_err(|_| format!("{at}: max_insns '{value}' is not a number"))?,
            "shard" => self.shard = Some(value),
            "partial" => self.partial = value == "true",
            "source" => self.sources.push(value),
            _ => {}
        }
        Ok(())
    }
}

/// Averages over programs of one configuration and buffer setting, weighted by instruction
/// count as the paper does (so bits/instruction is total bits over total instructions).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Average {
    pub config: String,
    pub buffers: String,
    pub programs: usize,
    pub instructions: u64,
    pub bits_per_instruction: f64,
    pub min_bits_per_instruction: f64,
    pub max_bits_per_instruction: f64,
    pub hr_sdc: f64,
    pub hr_lsp: f64,
    pub lsp_hit_share: f64,
    pub sdc_hit_share: f64,
    pub miss_share: f64,
    pub storage_bits: u64,
    pub stall_cycles: u64,
    pub overflows: u64,
    pub sdb_needed: u32,
    pub obuf_needed_bits: u64,
}

/// Columns of the rows CSV.
const COLUMNS: usize = 28;

impl SweepResults {
    /// Rows in a canonical order that does not depend on how they were produced (shards
    /// merge into the same file): scheme, SDC entries, ways, configuration text, buffers,
    /// program.
    pub fn sort(&mut self) {
        fn key(r: &SweepRow) -> (usize, u32, u32, String, String, String) {
            let (scheme, entries, ways) = match r.config.parse::<Config>() {
                Ok(c) => (Scheme::ALL.iter().position(|s| *s == c.scheme).unwrap_or(99), c.sets * c.ways, c.ways),
                Err(_) => (99, 0, 0),
            };
            (scheme, entries, ways, r.config.clone(), r.buffers.clone(), r.program.clone())
        }
        self.rows.sort_by_cached_key(key);
    }

    /// Configurations and buffer settings in order of first appearance.
    fn groups(&self) -> Vec<(String, String)> {
        let mut seen = Vec::new();
        for r in &self.rows {
            let k = (r.config.clone(), r.buffers.clone());
            if !seen.contains(&k) {
                seen.push(k);
            }
        }
        seen
    }

    pub fn programs(&self) -> Vec<String> {
        let mut p: Vec<String> = Vec::new();
        for r in &self.rows {
            if !p.contains(&r.program) {
                p.push(r.program.clone());
            }
        }
        p
    }

    pub fn averages(&self) -> Vec<Average> {
        self.groups()
            .into_iter()
            .map(|(config, buffers)| {
                let rs: Vec<&SweepRow> =
                    self.rows.iter().filter(|r| r.config == config && r.buffers == buffers).collect();
                let ic: u64 = rs.iter().map(|r| r.instructions).sum();
                let wavg = |f: &dyn Fn(&SweepRow) -> f64| {
                    if ic == 0 {
                        0.0
                    } else {
                        rs.iter().map(|r| f(r) * r.instructions as f64).sum::<f64>() / ic as f64
                    }
                };
                let bits: u64 = rs.iter().map(|r| r.total_bits).sum();
                let comp: u64 = rs.iter().map(|r| r.lsp_hit_bits + r.sdc_hit_bits + r.miss_bits).sum();
                let share = |f: &dyn Fn(&SweepRow) -> u64| {
                    if comp == 0 {
                        0.0
                    } else {
                        rs.iter().map(|r| f(r)).sum::<u64>() as f64 / comp as f64
                    }
                };
                let bpi = rs.iter().map(|r| r.bits_per_instruction);
                Average {
                    programs: rs.len(),
                    instructions: ic,
                    bits_per_instruction: if ic == 0 { 0.0 } else { bits as f64 / ic as f64 },
                    min_bits_per_instruction: bpi.clone().fold(f64::INFINITY, f64::min),
                    max_bits_per_instruction: bpi.fold(0.0, f64::max),
                    hr_sdc: wavg(&|r| r.hr_sdc),
                    hr_lsp: wavg(&|r| r.hr_lsp),
                    lsp_hit_share: share(&|r| r.lsp_hit_bits),
                    sdc_hit_share: share(&|r| r.sdc_hit_bits),
                    miss_share: share(&|r| r.miss_bits),
                    // Equal for every program unless a buffer is unbounded (counted at the
                    // size each program needed): then the largest.
                    storage_bits: rs.iter().map(|r| r.storage_bits).max().unwrap_or(0),
                    stall_cycles: rs.iter().map(|r| r.stall_cycles).sum(),
                    overflows: rs.iter().map(|r| r.overflows).sum(),
                    sdb_needed: rs.iter().map(|r| r.sdb_needed).max().unwrap_or(0),
                    obuf_needed_bits: rs.iter().map(|r| r.obuf_needed_bits).max().unwrap_or(0),
                    config,
                    buffers,
                }
            })
            .collect()
    }

    /// The rows of the first buffer setting (the tables of bits and hit rates do not depend
    /// on buffers unless records were dropped).
    fn primary(&self) -> Vec<&SweepRow> {
        let Some(first) = self.rows.first() else { return Vec::new() };
        self.rows.iter().filter(|r| r.buffers == first.buffers).collect()
    }

    pub fn write_csv<W: Write>(&self, mut w: W) -> io::Result<()> {
        if let Some(m) = &self.meta {
            m.write_comments(&mut w)?;
        }
        writeln!(
            w,
            "program,config,buffers,timing,exit_code,truncated,instructions,streams,total_bits,bits_per_instruction,hr_sdc,hr_lsp,\
sdc_lookups,sdc_hits,lsp_hits,lsp_hit_bits,sdc_hit_bits,miss_bits,escape_bits,storage_bits,cycles,stall_cycles,\
overflows,lost_instructions,max_sdb,max_obuf_bits,sdb_needed,obuf_needed_bits"
        )?;
        for r in &self.rows {
            writeln!(
                w,
                "{},{},\"{}\",{},{},{},{},{},{},{:.6},{:.6},{:.6},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                csv_field(&r.program),
                csv_field(&r.config),
                r.buffers,
                r.timing,
                r.exit_code.map_or(String::new(), |c| c.to_string()),
                r.truncated,
                r.instructions,
                r.streams,
                r.total_bits,
                r.bits_per_instruction,
                r.hr_sdc,
                r.hr_lsp,
                r.sdc_lookups,
                r.sdc_hits,
                r.lsp_hits,
                r.lsp_hit_bits,
                r.sdc_hit_bits,
                r.miss_bits,
                r.escape_bits,
                r.storage_bits,
                r.cycles,
                r.stall_cycles,
                r.overflows,
                r.lost_instructions,
                r.max_sdb,
                r.max_obuf_bits,
                r.sdb_needed,
                r.obuf_needed_bits
            )?;
        }
        Ok(())
    }

    /// Read rows (and the metadata comments) back from the CSV [`SweepResults::write_csv`]
    /// writes (for `merge`).
    pub fn read_csv(text: &str, source: &str) -> Result<SweepResults, String> {
        let mut meta: Option<SweepMeta> = None;
        let mut lines = text.lines().enumerate();
        let (hi, header) = loop {
            let (i, line) = lines.next().ok_or_else(|| format!("{source}: no CSV header"))?;
            match line.strip_prefix('#') {
                Some(c) => meta.get_or_insert_with(SweepMeta::default).read_comment(c.trim_start(), &format!("{source}:{}", i + 1))?,
                None => break (i, line),
            }
        };
        let names: Vec<&str> = header.split(',').collect();
        if names.first() != Some(&"program") || names.len() != COLUMNS {
            return Err(format!(
                "{source}:{}: not a streamtrace sweep CSV header of this version ({} columns, expected {COLUMNS} from `program` to `obuf_needed_bits`)",
                hi + 1,
                names.len()
            ));
        }
        let mut rows = Vec::new();
        for (i, line) in lines {
            if line.trim().is_empty() {
                continue;
            }
            let fields = split_csv(line).map_err(|e| format!("{source}:{}: {e}", i + 1))?;
            if fields.len() != COLUMNS {
                return Err(format!("{source}:{}: {} fields, expected {COLUMNS}", i + 1, fields.len()));
            }
            let at = |k: usize| -> &str { &fields[k] };
            let num = |k: usize| -> Result<u64, String> {
                at(k).parse().map_err(|_| format!("{source}:{}: {} = '{}' is not an integer", i + 1, names[k], at(k)))
            };
            let real = |k: usize| -> Result<f64, String> {
                at(k).parse().map_err(|_| format!("{source}:{}: {} = '{}' is not a number", i + 1, names[k], at(k)))
            };
            let bad = |k: usize| format!("{source}:{}: {} = '{}' is not valid", i + 1, names[k], at(k));
            rows.push(SweepRow {
                program: at(0).into(),
                config: at(1).into(),
                buffers: at(2).into(),
                timing: at(3).into(),
                exit_code: if at(4).is_empty() { None } else { Some(at(4).parse().map_err(|_| bad(4))?) },
                truncated: at(5).parse().map_err(|_| bad(5))?,
                instructions: num(6)?,
                streams: num(7)?,
                total_bits: num(8)?,
                bits_per_instruction: real(9)?,
                hr_sdc: real(10)?,
                hr_lsp: real(11)?,
                sdc_lookups: num(12)?,
                sdc_hits: num(13)?,
                lsp_hits: num(14)?,
                lsp_hit_bits: num(15)?,
                sdc_hit_bits: num(16)?,
                miss_bits: num(17)?,
                escape_bits: num(18)?,
                storage_bits: num(19)?,
                cycles: num(20)?,
                stall_cycles: num(21)?,
                overflows: num(22)?,
                lost_instructions: num(23)?,
                max_sdb: num(24)? as u32,
                max_obuf_bits: num(25)?,
                sdb_needed: num(26)? as u32,
                obuf_needed_bits: num(27)?,
            });
        }
        Ok(SweepResults { meta, rows })
    }

    /// The paper's table layouts for whatever configurations the sweep holds: Table 3
    /// (bSDC-LSP hit rates and bits/instruction by size), 4 (trace components), 6 and 7
    /// (e/rSDC-LSP bits/instruction by size), 8 (every scheme at one size), plus the buffer
    /// sizing table of section 4.2.
    pub fn tables(&self) -> Vec<Table> {
        let rows = self.primary();
        let programs = self.programs();
        let mut out = Vec::new();
        let series = |scheme: Scheme| size_series(&rows, scheme, 4);
        let bsdc = series(Scheme::BSdc);
        if !bsdc.is_empty() {
            let mut t = Table::new("table3", "Table 3: hit rates and trace port bandwidth of bSDC-LSP", "Program/Size");
            for metric in ["hrSDC", "hrLSP", "bits/ins"] {
                for (entries, _) in &bsdc {
                    t.header.push(format!("{metric} {entries}"));
                }
            }
            for p in programs.iter().map(Some).chain([None]) {
                let mut cells = Vec::new();
                for f in 0..3 {
                    for (_, cfg) in &bsdc {
                        cells.push(metric_cell(&rows, cfg, p, f));
                    }
                }
                t.rows.push((p.cloned().unwrap_or_else(|| "Average".into()), cells));
            }
            out.push(t);
        }
        let picks: Vec<String> = pick_component_configs(&bsdc);
        if !picks.is_empty() {
            let mut t = Table::new("table4", "Table 4: distribution of trace components (bSDC-LSP)", "[SDC, LSP] Size");
            for c in &picks {
                for comp in ["mSDCt", "hSDCt", "hLSPt"] {
                    t.header.push(format!("{c} {comp}"));
                }
            }
            for p in programs.iter().map(Some).chain([None]) {
                let mut cells = Vec::new();
                for c in &picks {
                    let sel: Vec<&&SweepRow> = rows.iter().filter(|r| &r.config == c && p.is_none_or(|p| &r.program == p)).collect();
                    let m: u64 = sel.iter().map(|r| r.miss_bits).sum();
                    let h: u64 = sel.iter().map(|r| r.sdc_hit_bits).sum();
                    let l: u64 = sel.iter().map(|r| r.lsp_hit_bits).sum();
                    let tot = (m + h + l).max(1) as f64;
                    for v in [m, h, l] {
                        cells.push(Cell::Percent(v as f64 / tot));
                    }
                }
                t.rows.push((p.cloned().unwrap_or_else(|| "Average".into()), cells));
            }
            out.push(t);
        }
        for (id, scheme, title) in [
            ("table6", Scheme::ESdc, "Table 6: trace port bandwidth of eSDC-LSP (bits/ins)"),
            ("table7", Scheme::RSdc, "Table 7: trace port bandwidth of rSDC-LSP (bits/ins)"),
        ] {
            let s = series(scheme);
            if s.is_empty() {
                continue;
            }
            let mut t = Table::new(id, title, "Program/Size");
            t.header.extend(s.iter().map(|(e, _)| e.to_string()));
            for p in programs.iter().map(Some).chain([None]) {
                let cells = s.iter().map(|(_, cfg)| metric_cell(&rows, cfg, p, 2)).collect();
                t.rows.push((p.cloned().unwrap_or_else(|| "Average".into()), cells));
            }
            out.push(t);
        }
        let mut shown: Vec<String> = bsdc.iter().map(|(_, c)| c.clone()).collect();
        for scheme in [Scheme::ESdc, Scheme::RSdc] {
            shown.extend(series(scheme).into_iter().map(|(_, c)| c));
        }
        let columns = table8_columns(&rows);
        if columns.len() > 1 {
            shown.extend(columns.iter().map(|(_, c)| c.clone()));
            let mut t = Table::new("table8", "Table 8: trace port bandwidth by scheme (bits/ins)", "Program");
            t.header.extend(columns.iter().map(|(label, _)| label.clone()));
            for p in programs.iter().map(Some).chain([None]) {
                let cells = columns.iter().map(|(_, cfg)| metric_cell(&rows, cfg, p, 2)).collect();
                t.rows.push((p.cloned().unwrap_or_else(|| "Average".into()), cells));
            }
            out.push(t);
        }
        // Configurations none of the paper's layouts has a place for (custom keys such as
        // `repl=lru`, 1/2/8-way eSDC, a lone configuration): one row each.
        let mut others: Vec<&str> = Vec::new();
        for r in &rows {
            if !shown.contains(&r.config) && !others.contains(&r.config.as_str()) {
                others.push(&r.config);
            }
        }
        if !others.is_empty() {
            let mut t = Table::new("others", "Other configurations: trace port bandwidth (bits/ins)", "Configuration");
            t.header.extend(programs.iter().cloned().chain(["Average".to_string()]));
            for c in others {
                let cells = programs.iter().map(Some).chain([None]).map(|p| metric_cell(&rows, c, p, 2)).collect();
                t.rows.push((c.to_string(), cells));
            }
            out.push(t);
        }
        let mut t = Table::new("buffers", "Buffer sizing (paper section 4.2): worst program per configuration", "Configuration");
        t.header = ["buffers", "SDB needed", "obuf needed (bits)", "stall cycles", "overflows", "storage bits"]
            .map(String::from)
            .to_vec();
        for a in self.averages() {
            // SW-GZIP sends everything after the run (trace-format.md section 10): it is a
            // software bound with no buffer sizes to speak of.
            let software = a.config.parse::<Config>().is_ok_and(|c| c.scheme == Scheme::Gzip);
            let hw = |v: u64| if software { Cell::Missing } else { Cell::Int(v) };
            t.rows.push((
                a.config.clone(),
                vec![
                    Cell::Text(a.buffers.clone()),
                    hw(a.sdb_needed.into()),
                    hw(a.obuf_needed_bits),
                    hw(a.stall_cycles),
                    Cell::Int(a.overflows),
                    hw(a.storage_bits),
                ],
            ));
        }
        out.push(t);
        out
    }
}

fn csv_field(s: &str) -> String {
    if s.contains(',') || s.contains('"') {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn split_csv(line: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', true) => quoted = false,
            ('"', false) if cur.is_empty() => quoted = true,
            (',', false) => out.push(std::mem::take(&mut cur)),
            (c, _) => cur.push(c),
        }
    }
    if quoted {
        return Err("unterminated quote".into());
    }
    out.push(cur);
    Ok(out)
}

/// Configurations of `scheme` with `ways` ways, LSP entries = SDC entries and every other
/// key at its default, by SDC size: the paper's size grid [8x4, 32] .. [256x4, 1024].
pub fn size_series(rows: &[&SweepRow], scheme: Scheme, ways: u32) -> Vec<(u32, String)> {
    let mut s: Vec<(u32, String)> = Vec::new();
    for r in rows {
        let Ok(cfg) = r.config.parse::<Config>() else { continue };
        if cfg.scheme != scheme || cfg.ways != ways || cfg.lsp_entries != cfg.sets * cfg.ways {
            continue;
        }
        let plain = Config::new(scheme, cfg.sets, cfg.ways, cfg.lsp_entries);
        if plain != cfg || s.iter().any(|(_, c)| c == &r.config) {
            continue;
        }
        s.push((cfg.sets * cfg.ways, r.config.clone()));
    }
    s.sort();
    s
}

fn pick_component_configs(bsdc: &[(u32, String)]) -> Vec<String> {
    let want: Vec<String> =
        bsdc.iter().filter(|(e, _)| *e == 64 || *e == 256).map(|(_, c)| c.clone()).collect();
    if want.len() == 2 {
        return want;
    }
    match (bsdc.first(), bsdc.last()) {
        (Some(a), Some(b)) if a != b => vec![a.1.clone(), b.1.clone()],
        (Some(a), _) => vec![a.1.clone()],
        _ => Vec::new(),
    }
}

/// Table 8 columns in the paper's order: the baselines, TSLZ-256 and TSLZ-1K, SC-T8HT,
/// each SDC scheme at [32x4, 128] (or the size closest to it that the sweep has), SW-GZIP.
pub(crate) fn table8_columns(rows: &[&SweepRow]) -> Vec<(String, String)> {
    let mut cols = Vec::new();
    let fixed = |cols: &mut Vec<(String, String)>, label: &str, config: String| {
        if rows.iter().any(|r| r.config == config) {
            cols.push((label.to_string(), config));
        }
    };
    for (scheme, label) in [(Scheme::FBase, "fBASE"), (Scheme::Base, "BASE"), (Scheme::Nexs, "NEXS")] {
        fixed(&mut cols, label, Config::new(scheme, 0, 0, 0).to_string());
    }
    fixed(&mut cols, "TSLZ-256", "tslz-256".into());
    fixed(&mut cols, "TSLZ-1K", "tslz-1024".into());
    fixed(&mut cols, "SC-T8HT", "sct8ht-128x4-255x8".into());
    for (scheme, label) in [(Scheme::BSdc, "bSDC-LSP"), (Scheme::ESdc, "eSDC-LSP"), (Scheme::RSdc, "rSDC-LSP")] {
        let s = size_series(rows, scheme, 4);
        if let Some((entries, c)) = s.iter().min_by_key(|(e, _)| e.abs_diff(128)) {
            cols.push((format!("{label} [{}x4,{entries}]", entries / 4), c.clone()));
        }
    }
    fixed(&mut cols, "SW-GZIP", "gzip-1".into());
    // Our own scheme, when the rows have it (`report schemes`; sweeps cannot run it).
    fixed(&mut cols, "pft", "pft".into());
    cols
}

/// metric 0 = hrSDC, 1 = hrLSP, 2 = bits/instruction; `program` None = weighted average.
fn metric_cell(rows: &[&SweepRow], config: &str, program: Option<&String>, metric: usize) -> Cell {
    let sel: Vec<&&SweepRow> =
        rows.iter().filter(|r| r.config == config && program.is_none_or(|p| &r.program == p)).collect();
    if sel.is_empty() {
        return Cell::Missing;
    }
    let ic: u64 = sel.iter().map(|r| r.instructions).sum();
    let v = match metric {
        0 => sel.iter().map(|r| r.hr_sdc * r.instructions as f64).sum::<f64>() / ic.max(1) as f64,
        1 => sel.iter().map(|r| r.hr_lsp * r.instructions as f64).sum::<f64>() / ic.max(1) as f64,
        _ => sel.iter().map(|r| r.total_bits).sum::<u64>() as f64 / ic.max(1) as f64,
    };
    Cell::Num(v, 3)
}

/// A table cell: shown as text, written to JSON as a number (or null, or a string for text).
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    /// A number shown with this many decimals.
    Num(f64, usize),
    /// A share shown as a percentage with one decimal; JSON has the fraction.
    Percent(f64),
    Int(u64),
    Text(String),
    /// No value: `-`, JSON null.
    Missing,
}

impl std::fmt::Display for Cell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cell::Num(v, d) => write!(f, "{v:.d$}"),
            Cell::Percent(v) => write!(f, "{:.1}%", 100.0 * v),
            Cell::Int(v) => write!(f, "{v}"),
            Cell::Text(t) => f.write_str(t),
            Cell::Missing => f.write_str("-"),
        }
    }
}

impl Serialize for Cell {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Cell::Num(v, _) | Cell::Percent(v) => s.serialize_f64(*v),
            Cell::Int(v) => s.serialize_u64(*v),
            Cell::Text(t) => s.serialize_str(t),
            Cell::Missing => s.serialize_none(),
        }
    }
}

/// A table in one of the paper's layouts.
#[derive(Clone, Debug, Serialize)]
pub struct Table {
    pub id: String,
    pub title: String,
    /// Header of the first (row label) column, then one per data column.
    pub corner: String,
    pub header: Vec<String>,
    pub rows: Vec<(String, Vec<Cell>)>,
}

impl Table {
    fn new(id: &str, title: &str, corner: &str) -> Table {
        Table { id: id.into(), title: title.into(), corner: corner.into(), header: Vec::new(), rows: Vec::new() }
    }

    pub fn to_text(&self) -> String {
        let mut widths: Vec<usize> = std::iter::once(self.corner.len())
            .chain(self.header.iter().map(String::len))
            .collect();
        for (label, cells) in &self.rows {
            widths[0] = widths[0].max(label.len());
            for (i, c) in cells.iter().enumerate() {
                widths[i + 1] = widths[i + 1].max(c.to_string().len());
            }
        }
        let mut s = format!("{}\n", self.title);
        let line = |s: &mut String, first: &str, cells: &[String]| {
            let _ = write!(s, "{first:<w$}", w = widths[0]);
            for (i, c) in cells.iter().enumerate() {
                let _ = write!(s, "  {c:>w$}", w = widths[i + 1]);
            }
            s.push('\n');
        };
        line(&mut s, &self.corner, &self.header);
        for (label, cells) in &self.rows {
            line(&mut s, label, &texts(cells));
        }
        s
    }

    pub fn to_csv(&self) -> String {
        let mut s = String::new();
        let row = |s: &mut String, first: &str, cells: &[String]| {
            s.push_str(&csv_field(first));
            for c in cells {
                s.push(',');
                s.push_str(&csv_field(c));
            }
            s.push('\n');
        };
        row(&mut s, &self.corner, &self.header);
        for (label, cells) in &self.rows {
            row(&mut s, label, &texts(cells));
        }
        s
    }

    pub fn to_markdown(&self) -> String {
        let mut s = format!("| {} |", self.corner);
        for h in &self.header {
            let _ = write!(s, " {h} |");
        }
        s.push_str("\n|---|");
        for _ in &self.header {
            s.push_str("---:|");
        }
        s.push('\n');
        for (label, cells) in &self.rows {
            let _ = write!(s, "| {label} |");
            for c in &texts(cells) {
                let _ = write!(s, " {c} |");
            }
            s.push('\n');
        }
        s
    }
}

/// `1234567` -> `1,234,567`.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn texts(cells: &[Cell]) -> Vec<String> {
    cells.iter().map(Cell::to_string).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(program: &str, config: &str, ic: u64, bits: u64, hr: f64) -> SweepRow {
        SweepRow {
            program: program.into(),
            config: config.into(),
            buffers: "sdb=2,obuf=80,port=1,ratio=1,svc_hit=1,svc_miss=2,policy=stall".into(),
            timing: "ipc1".into(),
            instructions: ic,
            total_bits: bits,
            bits_per_instruction: bits as f64 / ic as f64,
            hr_sdc: hr,
            miss_bits: bits / 2,
            sdc_hit_bits: bits / 4,
            lsp_hit_bits: bits / 4,
            ..Default::default()
        }
    }

    #[test]
    fn averages_are_weighted_by_instruction_count() {
        let res = SweepResults { meta: None, rows: vec![r("a", "bsdc-8x4-32", 100, 100, 1.0), r("b", "bsdc-8x4-32", 300, 30, 0.5)] };
        let a = &res.averages()[0];
        assert_eq!(a.instructions, 400);
        assert!((a.bits_per_instruction - 130.0 / 400.0).abs() < 1e-12);
        assert!((a.hr_sdc - (100.0 + 150.0) / 400.0).abs() < 1e-12);
        assert_eq!((a.min_bits_per_instruction, a.max_bits_per_instruction), (0.1, 1.0));
    }

    #[test]
    fn csv_round_trips_and_reports_bad_lines() {
        let meta = SweepMeta {
            command: "streamtrace sweep -o 'a b.csv'".into(),
            version: "0.1.0".into(),
            commit: Some("0123abcd".into()),
            date: "2026-11-24T21:00:00Z".into(),
            timing: "xscale".into(),
            max_insns: 1000,
            shard: Some("2/3".into()),
            partial: true,
            sources: vec!["p1.csv".into(), "p2.json".into()],
        };
        let mut rows = vec![r("a", "bsdc-8x4-32", 100, 100, 1.0), r("b,c", "rsdc-32x4-128,u=12", 3, 2, 0.25)];
        rows[0].exit_code = Some(-3);
        rows[1].truncated = true;
        let res = SweepResults { meta: Some(meta.clone()), rows };
        let mut buf = Vec::new();
        res.write_csv(&mut buf).unwrap();
        let text = String::from_utf8(buf).unwrap();
        let back = SweepResults::read_csv(&text, "x.csv").unwrap();
        assert_eq!(back.meta, Some(meta));
        assert_eq!((back.rows[0].exit_code, back.rows[0].truncated), (Some(-3), false));
        assert_eq!((back.rows[1].exit_code, back.rows[1].truncated), (None, true));
        assert_eq!(back.rows.len(), 2);
        assert_eq!(back.rows[1].program, "b,c");
        assert_eq!(back.rows[1].config, "rsdc-32x4-128,u=12");
        assert_eq!(back.rows[0].total_bits, 100);
        let header_line = text.lines().position(|l| l.starts_with("program,")).unwrap() + 1;
        let bad = text.replacen(",100,", ",1x0,", 1);
        let e = SweepResults::read_csv(&bad, "x.csv").unwrap_err();
        assert!(e.starts_with(&format!("x.csv:{}:", header_line + 1)), "{e}");
        let bad = text.replace("# max_insns: 1000", "# max_insns: lots");
        let e = SweepResults::read_csv(&bad, "x.csv").unwrap_err();
        assert!(e.starts_with("x.csv:7: max_insns 'lots'"), "{e}");
    }

    #[test]
    fn tables_follow_the_paper_layouts() {
        let mut rows = Vec::new();
        for (i, p) in ["p1", "p2"].iter().enumerate() {
            for c in ["bsdc-8x4-32", "bsdc-16x4-64", "bsdc-64x4-256", "rsdc-32x4-128", "fbase", "base"] {
                rows.push(r(p, c, 100 * (i as u64 + 1), 50, 0.9));
            }
        }
        let res = SweepResults { meta: None, rows };
        let tables = res.tables();
        let ids: Vec<&str> = tables.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["table3", "table4", "table7", "table8", "buffers"]);
        let t3 = &tables[0];
        assert_eq!(t3.header.len(), 9);
        assert_eq!(t3.rows.len(), 3);
        assert_eq!(t3.rows[2].0, "Average");
        // p1: 50 bits / 100 instructions; average 100 bits / 300 instructions.
        assert_eq!(t3.rows[0].1[6].to_string(), "0.500");
        assert_eq!(t3.rows[2].1[6].to_string(), "0.333");
        let t8 = &tables[3];
        assert_eq!(t8.header, ["fBASE", "BASE", "bSDC-LSP [16x4,64]", "rSDC-LSP [32x4,128]"]);
        assert!(t8.to_text().contains("Average"));
        assert_eq!(tables[1].header[0], "bsdc-16x4-64 mSDCt");
        // JSON: numbers, fractions for shares, null for a missing value.
        let j = serde_json::to_value(&tables).unwrap();
        assert_eq!(j[0]["rows"][0][1][6], 0.5);
        // 50 bits: 25 miss, 12 + 12 hit bits.
        assert_eq!(tables[1].rows[0].1[0].to_string(), "51.0%");
        assert_eq!(j[1]["rows"][0][1][0], 25.0 / 49.0);
        assert_eq!(serde_json::to_value(Cell::Missing).unwrap(), serde_json::Value::Null);
    }

    #[test]
    fn configurations_outside_the_paper_layouts_get_the_others_table() {
        let mut rows = Vec::new();
        for p in ["p1", "p2"] {
            for c in ["bsdc-8x4-32", "esdc-64x4-256,repl=lru", "bsdc-32x1-32"] {
                rows.push(r(p, c, 100, 50, 0.9));
            }
        }
        let tables = SweepResults { meta: None, rows }.tables();
        let others = tables.iter().find(|t| t.id == "others").expect("others table");
        assert_eq!(others.header, ["p1", "p2", "Average"]);
        let labels: Vec<&str> = others.rows.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(labels, ["esdc-64x4-256,repl=lru", "bsdc-32x1-32"]);
        assert_eq!(others.rows[0].1[2].to_string(), "0.500");
    }
}

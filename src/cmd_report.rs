//! `streamtrace report refs`: memory reference traces of the test programs through the
//! host stages (issue 6), laid out like Table 4 of Johnson's PDATS II paper
//! (000_51288972862903bc.txt): per program the sizes of the dinero text, PDATS and PDATS II
//! files alone and followed by gzip, xz and zstd, as compression ratios against din text and
//! as references per byte; and SAD reduction ratios for r = 16, 32 and 64 pages.
//!
//! Everything streams: the simulator's references go straight into the three writers, each
//! writer's bytes straight into the three compressors, and only byte counts are kept, so
//! memory stays bounded whatever the run length. Compression levels are each library's
//! default: gzip 6 (flate2 `Compression::default()`), xz 6 (liblzma preset 6), zstd 3
//! (`zstd::DEFAULT_COMPRESSION_LEVEL`).

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, Subcommand};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use streamtrace_model::RetireEvent;
use streamtrace_sim::{Machine, MemAccess, RetireHook, Semihost, StepOutcome};
use streamtrace_stages::din::DinWriter;
use streamtrace_stages::laplace::RawRecord;
use streamtrace_stages::pdats::{PdatsEncoder, PdatsOptions};
use streamtrace_stages::pdats2::{Pdats2Encoder, Pdats2Options};
use streamtrace_stages::sad::{PageSplitter, Reducer, DEFAULT_PAGE_SIZE};

use crate::io_util::thousands;
use crate::refs::{for_each_ref, SimRef, SIM_ASID};
use crate::table::Table;

#[derive(Args, Debug)]
pub struct ReportArgs {
    #[command(subcommand)]
    pub kind: ReportKind,
}

#[derive(Subcommand, Debug)]
pub enum ReportKind {
    /// Memory reference traces of the test programs: dinero, PDATS, PDATS II, each alone and
    /// with gzip, xz and zstd (Table 4 of the PDATS II paper), and SAD reduction ratios.
    Refs(RefsReportArgs),
    /// Whole Execution Traces of the test programs: sizes before and after each tier by label
    /// category (Tables 1-3 of the WET paper), build time and query rates (Tables 5-9).
    Wet(WetReportArgs),
    /// Trace-port bits of many configurations from one functional run per program (schemes
    /// that need retire events, such as pft, beside the paper's): averages, storage, the
    /// per-program table, pft's predictor statistics, and a Pareto plot of bits/instruction
    /// against storage bits.
    Schemes(SchemesReportArgs),
}

#[derive(Args, Debug)]
pub struct SchemesReportArgs {
    #[command(flatten)]
    pub common: ReportCommon,
    /// Configurations and presets separated by `;` or repeated: `paper`, `table8`,
    /// `pft-sizes`, `pft-ablation`, `pft-all` (both pft lists), or any configuration string.
    #[arg(long, default_value = "table8;pft-all")]
    pub configs: Vec<String>,
    /// Stop each program after this many instructions (the tables say so).
    #[arg(long, value_name = "N")]
    pub max_insns: Option<u64>,
    /// Write the Pareto plot (schemes-pareto.svg and .png) and the sweep's plots that the
    /// configurations support (Fig. 6 with pft among the Table 8 schemes, Figs. 5 and 7
    /// with the paper grid) into this directory.
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
    /// Write the sweep's tables (Table 8 with a pft column, and the others the
    /// configurations support) as text, CSV and Markdown into this directory.
    #[arg(long, value_name = "DIR")]
    pub tables: Option<PathBuf>,
    /// Cycle mode with these buffers (docs/trace-timing.md; e.g. `sdb=2,obuf=80`): adds stall
    /// cycles, overflows and the needed sizes per configuration.
    #[arg(long, value_name = "BUFFERS")]
    pub buffers: Option<String>,
    /// Retire cycles from the XScale-like timing model (`--timing=FILE.toml` overrides
    /// parameters) instead of one instruction per cycle; needs `--buffers`.
    #[arg(long, value_name = "FILE.toml", num_args = 0..=1, default_missing_value = "", requires = "buffers")]
    pub timing: Option<String>,
}

/// What every report takes: the programs, the output form, the workers.
#[derive(Args, Debug)]
pub struct ReportCommon {
    /// Program manifest (programs run from its directory with the argv it records).
    #[arg(long, value_name = "programs.json", default_value = "testbenches/programs/programs.json")]
    pub programs: PathBuf,
    /// Only these programs (repeatable; default: all).
    #[arg(long = "program", value_name = "NAME")]
    pub only: Vec<String>,
    /// Print everything as one JSON object.
    #[arg(long, conflicts_with_all = ["csv", "markdown"])]
    pub json: bool,
    /// Print the tables as CSV.
    #[arg(long, conflicts_with = "markdown")]
    pub csv: bool,
    /// Print the tables as Markdown (as in docs/results.md).
    #[arg(long)]
    pub markdown: bool,
    /// Also write everything as JSON to this file.
    #[arg(long, value_name = "FILE.json")]
    pub stats_out: Option<PathBuf>,
    /// Worker threads (default: one per core).
    #[arg(short, long, value_name = "N")]
    pub jobs: Option<usize>,
}

impl ReportCommon {
    /// The program manifest. A relative path that does not exist here is looked up in the
    /// parent directories too, so the default works from anywhere inside the repository
    /// (`cd testbenches/programs && streamtrace report refs`).
    pub fn manifest(&self) -> Result<PathBuf> {
        let given = &self.programs;
        if given.is_absolute() || given.exists() {
            return Ok(given.clone());
        }
        let cwd = std::env::current_dir().context("cannot read the current directory")?;
        match cwd.ancestors().map(|d| d.join(given)).find(|p| p.is_file()) {
            Some(found) => Ok(found),
            None => anyhow::bail!(
                "cannot find the program manifest {} in {} or any directory above it: run this inside the repository, or give --programs FILE",
                given.display(),
                cwd.display()
            ),
        }
    }
}

#[derive(Args, Debug)]
pub struct RefsReportArgs {
    #[command(flatten)]
    pub common: ReportCommon,
    /// Stop each program after this many instructions (the table says so).
    #[arg(long, value_name = "N")]
    pub max_insns: Option<u64>,
}

#[derive(Args, Debug)]
pub struct WetReportArgs {
    #[command(flatten)]
    pub common: ReportCommon,
    /// Stop each program after this many instructions.
    #[arg(long, value_name = "N", default_value_t = 2_000_000)]
    pub max_insns: u64,
    /// Backward slices per program.
    #[arg(long, default_value_t = 25)]
    pub slices: usize,
    /// No progress lines on stderr.
    #[arg(short, long)]
    pub quiet: bool,
}

pub fn run(a: &ReportArgs) -> Result<()> {
    match &a.kind {
        ReportKind::Refs(r) => run_refs(r),
        ReportKind::Wet(w) => run_wet(w),
        ReportKind::Schemes(r) => crate::cmd_report_schemes::run(r),
    }
}

/// The reduction memories of the SAD columns.
const SAD_RS: [usize; 3] = [16, 32, 64];

#[derive(Deserialize)]
struct ManifestEntry {
    name: String,
    elf: String,
    cmdline: String,
    /// "arm" or "thumb": the state of the program's own code, which sets PDATS II's stride.
    #[serde(default)]
    state: Option<String>,
}

#[derive(Deserialize)]
struct Manifest {
    programs: Vec<ManifestEntry>,
}

/// Bytes of one format alone and after each compressor.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Sizes {
    pub raw: u64,
    pub gzip: u64,
    pub xz: u64,
    pub zstd: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct SadRow {
    pub r: usize,
    pub output_refs: u64,
    /// Input references per output record.
    pub ratio: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct ProgramRefs {
    pub program: String,
    pub instructions: u64,
    pub references: u64,
    /// Ran to its exit (not cut by --max-insns).
    pub complete: bool,
    pub exit_code: Option<i32>,
    pub pdats2_stride: u64,
    pub din: Sizes,
    pub pdats: Sizes,
    pub pdats2: Sizes,
    pub page_refs: u64,
    pub sad: Vec<SadRow>,
    pub seconds: f64,
}

/// Counts bytes and drops them.
struct Counted(u64);

impl Write for Counted {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.0 += b.len() as u64;
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Counts a stream and feeds it to gzip, xz and zstd at once.
struct Compressed {
    raw: u64,
    gz: flate2::write::GzEncoder<Counted>,
    xz: liblzma::write::XzEncoder<Counted>,
    zst: zstd::stream::write::Encoder<'static, Counted>,
}

impl Compressed {
    fn new() -> io::Result<Self> {
        Ok(Compressed {
            raw: 0,
            gz: flate2::write::GzEncoder::new(Counted(0), flate2::Compression::default()),
            xz: liblzma::write::XzEncoder::new(Counted(0), 6),
            zst: zstd::stream::write::Encoder::new(Counted(0), zstd::DEFAULT_COMPRESSION_LEVEL)?,
        })
    }

    fn finish(self) -> io::Result<Sizes> {
        Ok(Sizes {
            raw: self.raw,
            gzip: self.gz.finish()?.0,
            xz: self.xz.finish()?.0,
            zstd: self.zst.finish()?.0,
        })
    }
}

impl Write for Compressed {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.gz.write_all(b)?;
        self.xz.write_all(b)?;
        self.zst.write_all(b)?;
        self.raw += b.len() as u64;
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

type Sink = BufWriter<Compressed>;

fn sink() -> io::Result<Sink> {
    // Large chunks keep the per-call overhead of the three compressors low.
    Ok(BufWriter::with_capacity(1 << 18, Compressed::new()?))
}

/// Sizes of `bytes` raw and after gzip 6, xz 6 and zstd 3 (one buffer).
pub fn compressed_sizes(bytes: &[u8]) -> Result<Sizes> {
    let mut s = sink()?;
    s.write_all(bytes)?;
    close(s)
}

fn close(s: Sink) -> Result<Sizes> {
    let c = s.into_inner().map_err(|e| anyhow!("{}", e.error()))?;
    Ok(c.finish()?)
}

/// The retire hook: every reference into din, PDATS, PDATS II and the SAD reducers.
struct Pipeline {
    din: DinWriter<Sink>,
    pdats: PdatsEncoder<Sink>,
    pdats2: Pdats2Encoder<Sink>,
    splitter: PageSplitter,
    reducers: Vec<Reducer>,
    page_refs: u64,
    refs: u64,
    error: Option<anyhow::Error>,
}

impl Pipeline {
    fn push(&mut self, r: SimRef, cycle: u64) -> Result<()> {
        let d = r.din();
        self.din.write(&d)?;
        self.pdats.push(d)?;
        self.pdats2.push(d)?;
        let parts = self.splitter.split(&RawRecord {
            kind: r.kind,
            cycle: if cycle != 0 { cycle } else { self.refs },
            len: r.size as u64,
            asid: SIM_ASID,
            vaddr: r.addr as u64,
        })?;
        for &p in parts.as_slice() {
            self.page_refs += 1;
            for red in &mut self.reducers {
                red.push(p);
                // Only the counts are needed; popping keeps the reducer's queue bounded.
                while red.pop().is_some() {}
            }
        }
        self.refs += 1;
        Ok(())
    }
}

impl RetireHook for Pipeline {
    fn retire(&mut self, ev: &RetireEvent, accesses: &[MemAccess]) {
        if self.error.is_some() {
            return;
        }
        let mut res = Ok(());
        for_each_ref(ev, accesses, |r| {
            if res.is_ok() {
                res = self.push(r, ev.cycle);
            }
        });
        if let Err(e) = res {
            self.error = Some(e);
        }
    }
}

fn measure(p: &ManifestEntry, dir: &std::path::Path, max_insns: Option<u64>) -> Result<ProgramRefs> {
    let start = Instant::now();
    let path = dir.join(&p.elf);
    let elf = crate::io_util::load_elf(&path).with_context(|| format!("loading {}", path.display()))?;
    let thumb = p.state.as_deref() == Some("thumb");
    let stride_log2 = if thumb { 1 } else { 2 };
    let comment = format!("streamtrace report refs: {}", p.cmdline);
    let mut pipe = Pipeline {
        din: DinWriter::new(sink()?),
        pdats: PdatsEncoder::new(sink()?, &PdatsOptions { comment: comment.clone(), ..Default::default() })?,
        pdats2: Pdats2Encoder::new(sink()?, &Pdats2Options { stride_log2, comment, ..Default::default() })?,
        splitter: PageSplitter::new(DEFAULT_PAGE_SIZE)?,
        reducers: SAD_RS.iter().map(|&r| Reducer::new(r)).collect::<Result<_, _>>()?,
        page_refs: 0,
        refs: 0,
        error: None,
    };
    let semihost = Semihost::new()
        .with_cmdline(p.cmdline.clone())
        .with_workdir(dir.to_path_buf())
        .with_stdin(io::empty())
        .with_stdout(io::sink())
        .with_stderr(io::sink())
        .with_deterministic_clock(100_000_000);
    let mut m = Machine::load(&elf, semihost)?;
    m.log_accesses = true;
    let limit = max_insns.unwrap_or(u64::MAX);
    let exit = loop {
        if m.retired >= limit {
            break None;
        }
        match m.step(&mut pipe) {
            Ok(StepOutcome::Running) => {}
            Ok(StepOutcome::Exited(code)) => break Some(code),
            Err(e) => bail!("{}: {e} after {} instructions", p.name, m.retired),
        }
        if let Some(e) = pipe.error.take() {
            let hint = if thumb { "" } else { " (Thumb code in a program the manifest calls \"arm\"?)" };
            return Err(e.context(format!("{}: reference {}{hint}", p.name, pipe.refs)));
        }
    };
    let din = close(pipe.din.into_inner()?)?;
    let pdats = close(pipe.pdats.finish()?)?;
    let pdats2 = close(pipe.pdats2.finish()?)?;
    let refs = pipe.refs;
    let sad = pipe
        .reducers
        .iter_mut()
        .zip(SAD_RS)
        .map(|(red, r)| {
            red.finish();
            while red.pop().is_some() {}
            let out = red.stats().output_refs;
            SadRow { r, output_refs: out, ratio: if out == 0 { 0.0 } else { refs as f64 / out as f64 } }
        })
        .collect();
    Ok(ProgramRefs {
        program: p.name.clone(),
        instructions: m.retired,
        references: refs,
        complete: exit.is_some(),
        exit_code: exit,
        pdats2_stride: 1 << stride_log2,
        din,
        pdats,
        pdats2,
        page_refs: pipe.page_refs,
        sad,
        seconds: start.elapsed().as_secs_f64(),
    })
}

fn run_refs(a: &RefsReportArgs) -> Result<()> {
    let programs = a.common.manifest()?;
    let text = std::fs::read_to_string(&programs)
        .with_context(|| format!("cannot read the program manifest {}", programs.display()))?;
    let manifest: Manifest =
        serde_json::from_str(&text).with_context(|| format!("{}: not a program manifest", programs.display()))?;
    let dir = programs.parent().unwrap_or(std::path::Path::new(".")).to_path_buf();
    for name in &a.common.only {
        if !manifest.programs.iter().any(|p| &p.name == name) {
            crate::usage::bail_usage!("--program {name}: not in {}", a.common.programs.display());
        }
    }
    let chosen: Vec<&ManifestEntry> =
        manifest.programs.iter().filter(|p| a.common.only.is_empty() || a.common.only.contains(&p.name)).collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(a.common.jobs.unwrap_or(0))
        .build()
        .context("starting worker threads")?;
    let start = Instant::now();
    let results: Vec<ProgramRefs> = pool.install(|| {
        chosen
            .par_iter()
            .map(|p| {
                let r = measure(p, &dir, a.max_insns)?;
                eprintln!(
                    "{}: {} instructions, {} references, {:.1} s",
                    r.program,
                    thousands(r.instructions),
                    thousands(r.references),
                    r.seconds
                );
                Ok(r)
            })
            .collect::<Result<_>>()
    })?;
    let seconds = start.elapsed().as_secs_f64();
    let out = &mut io::stdout().lock();
    let v = serde_json::json!({
        "max_insns": a.max_insns,
        "compression_levels": {"gzip": 6, "xz": 6, "zstd": zstd::DEFAULT_COMPRESSION_LEVEL},
        "page_size": DEFAULT_PAGE_SIZE,
        "seconds": seconds,
        "programs": results,
    });
    if let Some(p) = &a.common.stats_out {
        std::fs::write(p, serde_json::to_string_pretty(&v)? + "\n")
            .with_context(|| format!("cannot write {}", p.display()))?;
    }
    if a.common.json {
        writeln!(out, "{v}")?;
        return Ok(());
    }
    let tables = [
        ("Compression ratio against din text (Table 4 layout); last rows: mean ratio and mean references per byte", table4(&results)),
        ("Sizes in bytes", sizes_table(&results)),
        ("SAD reduction (4 KiB pages): input references per output record", sad_table(&results)),
    ];
    print_tables(out, &tables, a.common.markdown, a.common.csv)?;
    if !a.common.csv {
        let capped = results.iter().filter(|r| !r.complete).count();
        writeln!(
            out,
            "\n{} programs, {} references in {seconds:.0} s; compression levels gzip 6, xz 6, zstd {}; {}",
            results.len(),
            thousands(results.iter().map(|r| r.references).sum()),
            zstd::DEFAULT_COMPRESSION_LEVEL,
            match (a.max_insns, capped) {
                (Some(n), c) if c > 0 => format!("{c} program(s) stopped at the cap of {} instructions", thousands(n)),
                _ => "every program ran to its exit".to_string(),
            }
        )?;
    }
    Ok(())
}

pub(crate) type Rows = (Vec<String>, Vec<Vec<String>>);

fn div(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

fn mean(v: impl Iterator<Item = f64>) -> f64 {
    let (s, n) = v.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    if n == 0 {
        0.0
    } else {
        s / n as f64
    }
}

/// The eleven size columns of Table 4 (plus din itself), in order.
fn columns(r: &ProgramRefs) -> [u64; 12] {
    [
        r.din.raw, r.din.gzip, r.din.xz, r.din.zstd, r.pdats.raw, r.pdats.gzip, r.pdats.xz, r.pdats.zstd, r.pdats2.raw,
        r.pdats2.gzip, r.pdats2.xz, r.pdats2.zstd,
    ]
}

const COLUMN_NAMES: [&str; 12] =
    ["din", "din.gz", "din.xz", "din.zst", "pdt", "pdt.gz", "pdt.xz", "pdt.zst", "pdt2", "pdt2.gz", "pdt2.xz", "pdt2.zst"];

fn table4(results: &[ProgramRefs]) -> Rows {
    let header = std::iter::once("program".to_string()).chain(COLUMN_NAMES.iter().map(|s| s.to_string())).collect();
    let mut rows: Vec<Vec<String>> = results
        .iter()
        .map(|r| {
            let name = if r.complete { r.program.clone() } else { format!("{} (capped)", r.program) };
            std::iter::once(name).chain(columns(r).iter().map(|&b| format!("{:.2}", div(r.din.raw, b)))).collect()
        })
        .collect();
    let avg = |f: &dyn Fn(&ProgramRefs, u64) -> f64, label: &str| -> Vec<String> {
        std::iter::once(label.to_string())
            .chain((0..12).map(|i| format!("{:.2}", mean(results.iter().map(|r| f(r, columns(r)[i]))))))
            .collect()
    };
    rows.push(avg(&|r, b| div(r.din.raw, b), "average ratio"));
    rows.push(avg(&|r, b| div(r.references, b), "average refs/byte"));
    (header, rows)
}

fn sizes_table(results: &[ProgramRefs]) -> Rows {
    let header = ["program", "instructions", "references"]
        .iter()
        .map(|s| s.to_string())
        .chain(COLUMN_NAMES.iter().map(|s| s.to_string()))
        .collect();
    let rows = results
        .iter()
        .map(|r| {
            [r.program.clone(), r.instructions.to_string(), r.references.to_string()]
                .into_iter()
                .chain(columns(r).iter().map(|b| b.to_string()))
                .collect()
        })
        .collect();
    (header, rows)
}

fn sad_table(results: &[ProgramRefs]) -> Rows {
    let mut header = vec!["program".to_string(), "references".into(), "page refs".into()];
    for r in SAD_RS {
        header.push(format!("r={r} out"));
        header.push(format!("r={r} ratio"));
    }
    let mut rows: Vec<Vec<String>> = results
        .iter()
        .map(|p| {
            let mut row = vec![p.program.clone(), p.references.to_string(), p.page_refs.to_string()];
            for s in &p.sad {
                row.push(s.output_refs.to_string());
                row.push(format!("{:.1}", s.ratio));
            }
            row
        })
        .collect();
    let mut avg = vec!["average ratio".to_string(), String::new(), String::new()];
    for i in 0..SAD_RS.len() {
        avg.push(String::new());
        avg.push(format!("{:.1}", mean(results.iter().map(|p| p.sad[i].ratio))));
    }
    rows.push(avg);
    (header, rows)
}

/// Titled tables as text, CSV or Markdown.
pub(crate) fn print_tables(out: &mut impl Write, tables: &[(&str, Rows)], as_markdown: bool, csv: bool) -> io::Result<()> {
    for (i, (title, (header, rows))) in tables.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        if as_markdown {
            writeln!(out, "**{title}**\n")?;
            markdown(out, header, rows)?;
        } else {
            let mut t = Table::new(header.iter().cloned());
            rows.iter().for_each(|r| t.row(r.iter().cloned()));
            if csv {
                t.print_csv(out)?;
            } else {
                writeln!(out, "{title}")?;
                t.print(out)?;
            }
        }
    }
    Ok(())
}

fn markdown(out: &mut impl Write, header: &[String], rows: &[Vec<String>]) -> io::Result<()> {
    writeln!(out, "| {} |", header.join(" | "))?;
    let align: Vec<&str> = (0..header.len()).map(|i| if i == 0 { "---" } else { "---:" }).collect();
    writeln!(out, "|{}|", align.join("|"))?;
    for r in rows {
        writeln!(out, "| {} |", r.join(" | "))?;
    }
    Ok(())
}

fn run_wet(a: &WetReportArgs) -> Result<()> {
    use streamtrace_stages::wet::build::LabelBits;
    use streamtrace_stages::wet::report::{measure, WetMeasurement};
    let mut programs = streamtrace_sim::sweep::programs_from_manifest(&a.common.manifest()?).map_err(|e| anyhow!(e))?;
    if !a.common.only.is_empty() {
        for name in &a.common.only {
            if !programs.iter().any(|p| &p.name == name) {
                crate::usage::bail_usage!("--program {name}: not in {}", a.common.programs.display());
            }
        }
        programs.retain(|p| a.common.only.contains(&p.name));
    }
    let pool = rayon::ThreadPoolBuilder::new().num_threads(a.common.jobs.unwrap_or(0)).build()?;
    let start = Instant::now();
    let bar = if a.quiet { indicatif::ProgressBar::hidden() } else { indicatif::ProgressBar::new(programs.len() as u64) };
    let done = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<WetMeasurement> = pool.install(|| {
        programs
            .par_iter()
            .map(|p| {
                let t = Instant::now();
                let m = measure(p, a.max_insns, a.slices);
                let k = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                // A line per program, also when stderr is not a terminal (the bar is then
                // hidden): a run takes minutes.
                if !a.quiet {
                    bar.suspend(|| eprintln!("report wet: [{k}/{}] {} ({:.1} s)", programs.len(), p.name, t.elapsed().as_secs_f64()));
                }
                bar.inc(1);
                m
            })
            .collect::<std::result::Result<Vec<_>, String>>()
    })
    .map_err(|e| anyhow!(e))?;
    bar.finish_and_clear();
    let seconds = start.elapsed().as_secs_f64();
    let v = serde_json::json!({"max_insns": a.max_insns, "seconds": seconds, "programs": results});
    if let Some(p) = &a.common.stats_out {
        std::fs::write(p, serde_json::to_string_pretty(&v)? + "\n").with_context(|| format!("cannot write {}", p.display()))?;
    }
    let out = &mut io::stdout().lock();
    if a.common.json {
        writeln!(out, "{v}")?;
        return Ok(());
    }
    let mb = |bits: u64| format!("{:.2}", bits as f64 / 8e6);
    let x = |a: u64, b: u64| format!("{:.1}", a as f64 / b.max(1) as f64);
    let mut sizes = Vec::new();
    let mut cats = Vec::new();
    let mut speed = Vec::new();
    let (mut o_all, mut t1_all, mut t2_all) = (LabelBits::default(), LabelBits::default(), LabelBits::default());
    for r in &results {
        o_all += r.original;
        t1_all += r.tier1;
        t2_all += r.tier2;
        let (o, t1, t2) = (r.original.total(), r.tier1.total(), r.tier2.total());
        sizes.push(vec![
            r.program.clone(),
            thousands(r.counts.instructions),
            mb(o),
            mb(t1),
            mb(t2),
            x(o, t1),
            x(t1, t2),
            x(o, t2),
            format!("{:.2}", r.file_bytes as f64 / 1e6),
        ]);
        let pair = |f: &dyn Fn(&LabelBits) -> u64| {
            [x(f(&r.original), f(&r.tier1)), x(f(&r.tier1), f(&r.tier2)), x(f(&r.original), f(&r.tier2))]
        };
        let mut row = vec![r.program.clone()];
        row.extend(pair(&|b| b.timestamps));
        row.extend(pair(&|b| b.values));
        row.extend(pair(&|b| b.edge_labels));
        row.extend(pair(&|b| b.addresses));
        cats.push(row);
        let n = r.counts.instructions as f64;
        speed.push(vec![
            r.program.clone(),
            format!("{:.2}", n / r.build_seconds / 1e6),
            format!("{:.2}", r.compress_seconds),
            format!("{:.1}", n / r.cf_forward_seconds / 1e6),
            format!("{:.1}", n / r.cf_backward_seconds / 1e6),
            format!("{:.2}", r.load_value_instances as f64 / r.loads_seconds / 1e6),
            format!("{:.2}", r.address_instances as f64 / r.addrs_seconds / 1e6),
            format!("{:.1}", r.slice_seconds * 1e3 / r.slices.max(1) as f64),
            format!("{:.0}", r.slice_items as f64 / r.slices.max(1) as f64),
        ]);
    }
    let (o, t1, t2) = (o_all.total(), t1_all.total(), t2_all.total());
    let insns: u64 = results.iter().map(|r| r.counts.instructions).sum();
    sizes.push(vec!["all".into(), thousands(insns), mb(o), mb(t1), mb(t2), x(o, t1), x(t1, t2), x(o, t2), String::new()]);
    let mut row = vec!["all".to_string()];
    for f in [
        &(|b: &LabelBits| b.timestamps) as &dyn Fn(&LabelBits) -> u64,
        &|b: &LabelBits| b.values,
        &|b: &LabelBits| b.edge_labels,
        &|b: &LabelBits| b.addresses,
    ] {
        row.push(x(f(&o_all), f(&t1_all)));
        row.push(x(f(&t1_all), f(&t2_all)));
        row.push(x(f(&o_all), f(&t2_all)));
    }
    cats.push(row);
    let h = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let tables = [
        (
            "WET sizes (MB): original, after tier 1, after tier 2, and ratios (Table 1 layout)",
            (h(&["program", "instructions", "original", "tier 1", "tier 2", "orig/t1", "t1/t2", "orig/t2", ".wet file MB"]), sizes),
        ),
        (
            "Compression factor by label category: tier 1 (orig/t1), tier 2 (t1/t2) and both (orig/t2) (Tables 2 and 3)",
            (
                h(&[
                    "program", "timestamps t1", "t2", "both", "values t1", "t2", "both", "edge labels t1", "t2", "both", "addresses t1", "t2", "both",
                ]),
                cats,
            ),
        ),
        (
            "Build and query speed on the tier-2 WET",
            (
                h(&["program", "build M insns/s", "tier 2 s", "CF forward M insns/s", "CF backward M insns/s", "loads M values/s", "addresses M/s", "slice ms", "slice size"]),
                speed,
            ),
        ),
    ];
    print_tables(out, &tables, a.common.markdown, a.common.csv)?;
    if !a.common.csv {
        writeln!(out, "\n{} programs, at most {} instructions each, in {seconds:.0} s", results.len(), thousands(a.max_insns))?;
    }
    Ok(())
}

//! `streamtrace sweep` and `streamtrace merge`: design-space sweeps over programs and trace
//! module configurations (the work is in `streamtrace_sim::sweep`; docs/sweeps.md).

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Instant, SystemTime};

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use streamtrace_model::{BufferConfig, Config, Scheme};
use streamtrace_sim::sweep::plot::write_plots;
use streamtrace_sim::TimingConfig;
use streamtrace_sim::sweep::report::{SweepMeta, SweepResults};
use streamtrace_sim::sweep::schemes::{measure_schemes, SchemeOptions};
use streamtrace_sim::sweep::{
    ensure_captures, load_capture, resolve_programs, sweep_program, CaptureOptions, CycleSource, ProgramSpec, SweepPlan, SweepRow, INTERRUPTED,
};

use crate::io_util::parse_config;
use crate::usage::{bail_usage, usage};

#[derive(Args, Debug)]
pub struct SweepArgs {
    /// Programs: a directory with programs.json (testbenches/programs), a manifest file, or a
    /// comma list of programs, each an ELF path and its arguments separated by spaces
    /// (`--programs "bin/a.elf 100,bin/b.elf"`; docs/sweeps.md).
    #[arg(long, value_name = "DIR|LIST", default_value = "testbenches/programs")]
    pub programs: String,
    /// Configurations separated by ';' (keys use ','), or a preset: `paper` (b/e/rSDC-LSP
    /// from \[8x4,32\] to \[256x4,1024\], bSDC-LSP also 1/2/8-way, and the Table 8 set),
    /// `table8` (fBASE, BASE, NEXS, TSLZ-256, TSLZ-1K, SC-T8HT, SW-GZIP and the three SDC
    /// schemes at \[32x4,128\]). Repeatable.
    #[arg(long, value_name = "LIST", default_value = "table8")]
    pub configs: Vec<String>,
    /// Buffer settings every row starts from (docs/trace-timing.md section 1).
    #[arg(long, value_name = "BUFFERS", default_value = "sdb=2,obuf=80,port=1,ratio=1,svc_hit=1,svc_miss=2,policy=stall")]
    pub buffers: String,
    /// Trace port widths to sweep (comma list), overriding `port` of --buffers.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub port_widths: Vec<u32>,
    /// SDB depths to sweep (comma list; `inf` allowed).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub sdb: Vec<String>,
    /// Output buffer sizes in bits to sweep (comma list; `inf` allowed).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub obuf: Vec<String>,
    /// Rows as CSV.
    #[arg(short, long, value_name = "FILE.csv")]
    pub output: Option<PathBuf>,
    /// Rows, weighted averages and tables as JSON.
    #[arg(long, value_name = "FILE.json")]
    pub json: Option<PathBuf>,
    /// Write the tables as text, CSV and Markdown into this directory.
    #[arg(long, value_name = "DIR")]
    pub tables: Option<PathBuf>,
    /// Write the plots (SVG and PNG) into this directory.
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
    /// Run only shard k of N (1-based, e.g. 3/16), for cluster array jobs; join with `merge`.
    #[arg(long, value_name = "k/N")]
    pub shard: Option<String>,
    /// Where captures are kept and reused.
    #[arg(long, value_name = "DIR", default_value = ".streamtrace/captures")]
    pub capture_dir: PathBuf,
    /// Take retire cycles from the XScale-like timing model (docs/timing.md) instead of one
    /// instruction per cycle; `--timing=FILE.toml` overrides its parameters.
    #[arg(long, value_name = "FILE.toml", num_args = 0..=1, require_equals = true)]
    pub timing: Option<Option<PathBuf>>,
    /// Stop each program after this many instructions.
    #[arg(long, value_name = "N", default_value_t = 1_000_000_000)]
    pub max_insns: u64,
    /// Worker threads (default: all cores).
    #[arg(short = 'j', long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Exit 0 even when a program exits with a non-zero status or is cut at --max-insns
    /// (its rows are written either way, with `exit_code` and `truncated`).
    #[arg(long)]
    pub allow_failures: bool,
    /// Do not print the tables.
    #[arg(short, long)]
    pub quiet: bool,
}

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Shard outputs: CSV (`-o`) or JSON (`--json`) files of `streamtrace sweep --shard`.
    #[arg(required = true, value_name = "FILE")]
    pub inputs: Vec<PathBuf>,
    /// Write the joined rows as CSV (rows byte-identical to an unsharded sweep's).
    #[arg(short, long, value_name = "FILE.csv")]
    pub output: Option<PathBuf>,
    /// Write the joined rows, weighted averages and tables as JSON.
    #[arg(long, value_name = "FILE.json")]
    pub json: Option<PathBuf>,
    /// Write the tables as text, CSV and Markdown into this directory.
    #[arg(long, value_name = "DIR")]
    pub tables: Option<PathBuf>,
    /// Write the plots (SVG and PNG) into this directory.
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
    /// Do not print the tables.
    #[arg(short, long)]
    pub quiet: bool,
}

/// The paper's size grid: \[8x4,32\] .. \[256x4,1024\], LSP entries = SDC entries.
const PAPER_ENTRIES: [u32; 6] = [32, 64, 128, 256, 512, 1024];

/// pft sizes from about 1.4 k to 58 k bits of state (docs/results.md, "Ablation and sizes").
pub const PFT_SIZES: [&str; 6] = [
    // (Keys the default had before 2026-11-26 are written out, so these keep their sizes.)
    "pft,bim=64,tsize=16,tag=6,hlen=4-16,ras=4,itp=4,itt=4,ttag=7,rtc=2",
    "pft,tsize=16,hlen=2-4-8-16-32,ras=8,itp=8,itt=8,ttag=7,rtc=4",
    "pft",
    // The default until 2026-11-26: 5,150 bits with the paper's buffers, over 5,000.
    "pft,tag=8,hlen=2-4-8-15-28-48,ras=8,ttag=7",
    "pft,tsize=64,tag=8,hlen=2-3-5-8-13-21-34-64,ras=16,itp=32,itt=32,ttag=7",
    "pft,bim=4096,tsize=512,tag=10,hlen=2-5-11-23-45-64,ras=32,itp=64,itt=64,ttag=9,rtc=16",
];

/// The default pft with one mechanism changed or removed at a time.
pub const PFT_ABLATION: [&str; 13] = [
    "pft,hlen=none",
    "pft,hlen=8",
    "pft,hlen=4-20",
    "pft,ras=0",
    "pft,itt=0",
    "pft,itp=0",
    "pft,itp=0,itt=0",
    "pft,rtc=0",
    "pft,ras=0,itp=0,itt=0,rtc=0",
    "pft,bim=2,hlen=none,ras=0,itp=0,itt=0,rtc=0",
    "pft,tw=32",
    "pft,rate=5",
    "pft,rate=7",
];

/// Configurations of `--configs`: `;`-separated configurations and presets (`paper`,
/// `table8`, `pft-sizes`, `pft-ablation`, `pft-all` = both pft lists; `pft` alone is the
/// default pft configuration).
pub fn expand_config_list(items: &[String]) -> Result<Vec<Config>> {
    let mut out: Vec<Config> = Vec::new();
    let mut push = |c: Config| {
        if !out.contains(&c) {
            out.push(c);
        }
    };
    for item in items {
        for part in item.split(';').map(str::trim).filter(|p| !p.is_empty()) {
            match part {
                "paper" | "table8" => {
                    for s in [Scheme::FBase, Scheme::Base, Scheme::Nexs] {
                        push(Config::new(s, 0, 0, 0));
                    }
                    // The paper's competitors (Table 8): TSLZ-256, TSLZ-1K, SC-T8HT, SW-GZIP.
                    for c in ["tslz-256", "tslz-1024", "sct8ht-128x4-255x8", "gzip-1"] {
                        push(parse_config(c)?);
                    }
                    let entries: &[u32] = if part == "paper" { &PAPER_ENTRIES } else { &[128] };
                    for s in [Scheme::BSdc, Scheme::ESdc, Scheme::RSdc] {
                        for &e in entries {
                            push(Config::new(s, e / 4, 4, e));
                        }
                    }
                    if part == "paper" {
                        for ways in [1, 2, 8] {
                            for &e in &PAPER_ENTRIES {
                                push(Config::new(Scheme::BSdc, e / ways, ways, e));
                            }
                        }
                    }
                }
                "pft-sizes" | "pft-ablation" | "pft-all" => {
                    let sizes = part != "pft-ablation";
                    let ablation = part != "pft-sizes";
                    let lists: [(&[&str], bool); 2] = [(&PFT_SIZES, sizes), (&PFT_ABLATION, ablation)];
                    for (list, on) in lists {
                        for c in list.iter().filter(|_| on) {
                            push(parse_config(c)?);
                        }
                    }
                }
                text => push(parse_config(text)?),
            }
        }
    }
    if out.is_empty() {
        bail_usage!("--configs named no configuration");
    }
    Ok(out)
}

fn expand_buffers(a: &SweepArgs) -> Result<Vec<BufferConfig>> {
    let base: BufferConfig = a.buffers.parse().map_err(|e| usage(format!("--buffers: {e}")))?;
    let mut list = vec![base];
    let vary = |list: Vec<BufferConfig>, key: &str, values: &[String]| -> Result<Vec<BufferConfig>> {
        if values.is_empty() {
            return Ok(list);
        }
        let mut out = Vec::new();
        for b in &list {
            for v in values {
                let text = format!("{b},{key}={v}");
                out.push(text.parse::<BufferConfig>().map_err(|e| usage(format!("--{key} {v}: {e}")))?);
            }
        }
        Ok(out)
    };
    let ports: Vec<String> = a.port_widths.iter().map(u32::to_string).collect();
    list = vary(list, "port", &ports)?;
    list = vary(list, "sdb", &a.sdb)?;
    list = vary(list, "obuf", &a.obuf)?;
    Ok(list)
}

fn parse_shard(s: Option<&str>) -> Result<(usize, usize)> {
    let Some(s) = s else { return Ok((0, 1)) };
    let (k, n) = s.split_once('/').ok_or_else(|| usage(format!("--shard {s}: expected k/N")))?;
    let k: usize = k.parse().map_err(|_| usage(format!("--shard {s}: k is not a number")))?;
    let n: usize = n.parse().map_err(|_| usage(format!("--shard {s}: N is not a number")))?;
    if n == 0 || k == 0 || k > n {
        bail_usage!("--shard {s}: need 1 <= k <= N");
    }
    Ok((k - 1, n))
}

/// Set by SIGINT during a sweep; read by the capture loop and the replay jobs.
static INTERRUPT: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// Exit status of an interrupted sweep (128 + SIGINT, as a shell reports it).
const EXIT_INTERRUPTED: u8 = 130;

#[cfg(unix)]
extern "C" fn on_sigint(_: libc::c_int) {
    // Only async-signal-safe work: an atomic store, and the default disposition back so
    // that a second Ctrl-C ends the process at once.
    if let Some(flag) = INTERRUPT.get() {
        flag.store(true, Ordering::SeqCst);
    }
    // SAFETY: `signal` is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_DFL);
    }
}

/// The flag a SIGINT sets from now on.
fn catch_sigint() -> Arc<AtomicBool> {
    let flag = INTERRUPT.get_or_init(|| Arc::new(AtomicBool::new(false))).clone();
    #[cfg(unix)]
    // SAFETY: installs a handler that only stores to an atomic and resets the disposition.
    unsafe {
        libc::signal(libc::SIGINT, on_sigint as extern "C" fn(libc::c_int) as libc::sighandler_t);
    }
    flag
}

/// The command line as a shell would need it (arguments with special characters quoted).
fn command_line() -> String {
    std::env::args()
        .map(|a| {
            let plain = !a.is_empty() && a.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
            if plain { a } else { format!("'{}'", a.replace('\'', r"'\''")) }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Now, UTC, as `YYYY-MM-DDTHH:MM:SSZ`.
fn utc_now() -> String {
    let secs = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (proleptic Gregorian, eras of 400 years).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem / 60 % 60, rem % 60)
}

/// Metadata of a file this invocation writes.
pub(crate) fn meta(timing: String, max_insns: u64, shard: Option<String>) -> SweepMeta {
    SweepMeta {
        command: command_line(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        commit: option_env!("STREAMTRACE_GIT_COMMIT").map(String::from),
        date: utc_now(),
        timing,
        max_insns,
        shard,
        partial: false,
        sources: Vec::new(),
    }
}

/// Programs that did not run to the exit status their manifest records (0 when it records
/// none): (name, why), once per program.
fn failures(rows: &[SweepRow], programs: &[ProgramSpec]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for r in rows {
        if out.iter().any(|(p, _)| *p == r.program) {
            continue;
        }
        let expected = programs.iter().find(|p| p.name == r.program).and_then(|p| p.expected_exit).unwrap_or(0);
        let why = match r.exit_code {
            _ if r.truncated => format!("stopped at the --max-insns limit after {} instructions; its rows cover only that prefix", r.instructions),
            Some(c) if c == expected => continue,
            Some(c) if expected != 0 => {
                format!("exited with status {c} after {} instructions (its manifest records {expected})", r.instructions)
            }
            Some(c) => format!("exited with status {c} after {} instructions", r.instructions),
            None => "has no exit status".to_string(),
        };
        out.push((r.program.clone(), why));
    }
    out
}

/// Returns the exit status: 0, or 130 when interrupted (the rows done so far are written,
/// marked partial).
pub fn run_sweep(a: &SweepArgs) -> Result<u8> {
    let all_configs = expand_config_list(&a.configs)?;
    // pft works on retire events, not stream descriptors: its rows come from a run of the
    // program per buffer setting (as `report schemes` does), the others from the captures.
    // Jobs are numbered stream configurations first, then pft's, so shards split both.
    let (pft_configs, configs): (Vec<Config>, Vec<Config>) = all_configs.iter().partition(|c| c.scheme == Scheme::Pft);
    let buffers = expand_buffers(a)?;
    for c in &all_configs {
        for b in &buffers {
            b.check_scheme(c).map_err(|e| usage(format!("--buffers {b}: {e}")))?;
        }
    }
    let shard = parse_shard(a.shard.as_deref())?;
    let programs = resolve_programs(&a.programs).map_err(|e| anyhow!("--programs: {e}"))?;
    if programs.is_empty() {
        bail_usage!("--programs {}: no programs", a.programs);
    }
    if let Some(j) = a.jobs {
        rayon::ThreadPoolBuilder::new().num_threads(j.max(1)).build_global().context("starting worker threads")?;
    }
    let mut max_sls: Vec<u32> = configs.iter().map(|c| c.max_sl).collect();
    max_sls.sort_unstable();
    max_sls.dedup();
    let cycles = match &a.timing {
        None => CycleSource::Ipc1,
        Some(None) => CycleSource::Timing(Box::default()),
        Some(Some(path)) => CycleSource::Timing(Box::new(TimingConfig::from_toml_file(path)?)),
    };
    let interrupt = catch_sigint();
    let mut results = SweepResults {
        meta: Some(meta(cycles.label(), a.max_insns, a.shard.clone())),
        rows: Vec::new(),
    };
    let pft_timing = match &cycles {
        CycleSource::Ipc1 => None,
        CycleSource::Timing(t) => Some((**t).clone()),
    };
    let opts = CaptureOptions { dir: a.capture_dir.clone(), cycles, max_insns: a.max_insns, cancel: Some(interrupt.clone()) };
    let start = Instant::now();
    let bar = ProgressBar::new(programs.len() as u64 * 2).with_style(
        ProgressStyle::with_template("{elapsed:>4} [{bar:30}] {pos}/{len} {msg}").expect("valid template").progress_chars("=> "),
    );
    // Programs run in parallel as well as their jobs, so that no core waits at the end
    // of a program for its last job; rows stay in program order. After an error, programs
    // not started yet are skipped.
    let failed = AtomicBool::new(false);
    let per_program = programs
        .par_iter()
        .enumerate()
        .map(|(pi, p)| -> Result<Option<(Vec<SweepRow>, u64)>> {
            if interrupt.load(Ordering::SeqCst) || failed.load(Ordering::SeqCst) {
                return Ok(None);
            }
            // Jobs are numbered program-major so shards spread every program: the stream
            // configurations first (their capture replays), then pft's.
            let offset = pi * all_configs.len();
            let is_mine = |i: usize| (offset + i) % shard.1 == shard.0;
            let my_pft: Vec<Config> =
                pft_configs.iter().enumerate().filter(|(j, _)| is_mine(configs.len() + j)).map(|(_, &c)| c).collect();
            let mine = (0..configs.len()).any(is_mine);
            if !mine && my_pft.is_empty() {
                bar.inc(2);
                return Ok(None);
            }
            let mut rows = Vec::new();
            if !my_pft.is_empty() {
                for b in &buffers {
                    if interrupt.load(Ordering::SeqCst) {
                        return Ok(None);
                    }
                    bar.set_message(format!("running {} for pft ({b})", p.name));
                    let pft_opts = SchemeOptions { max_insns: a.max_insns, buffers: Some(*b), timing: pft_timing.clone() };
                    let run = measure_schemes(p, &my_pft, &pft_opts).map_err(|e| anyhow!("{e}"))?;
                    rows.extend(run.results.into_iter().map(|r| r.row));
                }
            }
            if !mine {
                bar.inc(2);
                return Ok(Some((rows, 0)));
            }
            bar.set_message(format!("capturing {}", p.name));
            let paths = match ensure_captures(p, &max_sls, &opts) {
                Ok(paths) => paths,
                Err(e) if e == INTERRUPTED => return Ok(None),
                Err(e) => bail!("{e}"),
            };
            bar.inc(1);
            bar.set_message(format!("replaying {}", p.name));
            let captures = max_sls
                .iter()
                .zip(&paths)
                .map(|(m, path)| Ok((*m, load_capture(path).map_err(|e| anyhow!("{e}"))?)))
                .collect::<Result<Vec<_>>>()?;
            let plan = SweepPlan { configs: configs.clone(), buffers: buffers.clone(), shard, cancel: Some(interrupt.clone()) };
            let counted = std::sync::atomic::AtomicU64::new(0);
            rows.extend(
                sweep_program(&captures, &plan, offset, &|n| {
                    counted.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
                })
                .map_err(|e| anyhow!("{e}"))?,
            );
            bar.inc(1);
            Ok(Some((rows, counted.into_inner())))
        })
        .inspect(|r| {
            if r.is_err() {
                failed.store(true, Ordering::SeqCst);
            }
        })
        .collect::<Vec<_>>();
    let mut descriptors = 0u64;
    for r in per_program {
        if let Some((rows, n)) = r? {
            results.rows.extend(rows);
            descriptors += n;
        }
    }
    bar.finish_and_clear();
    let secs = start.elapsed().as_secs_f64();
    eprintln!(
        "sweep: {} rows ({} programs x {} configurations x {} buffer settings{}), {} descriptors replayed in {:.1} s",
        results.rows.len(),
        programs.len(),
        all_configs.len(),
        buffers.len(),
        if shard.1 > 1 { format!(", shard {}/{}", shard.0 + 1, shard.1) } else { String::new() },
        descriptors,
        secs
    );
    let interrupted = interrupt.load(Ordering::SeqCst);
    if let Some(m) = results.meta.as_mut() {
        m.partial = interrupted;
    }
    let failed = failures(&results.rows, &programs);
    for (program, why) in &failed {
        eprintln!("streamtrace: warning: {program} {why}");
    }
    emit(&mut results, a.output.as_deref(), a.json.as_deref(), a.tables.as_deref(), a.plot.as_deref(), a.quiet)?;
    if interrupted {
        eprintln!("sweep: interrupted; the {} rows done so far are written, marked partial", results.rows.len());
        return Ok(EXIT_INTERRUPTED);
    }
    if !failed.is_empty() && !a.allow_failures {
        bail!(
            "{} program(s) failed or were cut at --max-insns (warnings above); their rows are written, marked by exit_code and truncated; --allow-failures accepts them",
            failed.len()
        );
    }
    Ok(0)
}

pub fn run_merge(a: &MergeArgs) -> Result<()> {
    let mut results = SweepResults::default();
    let mut metas: Vec<(String, SweepMeta)> = Vec::new();
    for path in &a.inputs {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let part = if text.trim_start().starts_with('{') {
            serde_json::from_str::<SweepResults>(&text).with_context(|| format!("{}: not a sweep JSON file", path.display()))?
        } else {
            SweepResults::read_csv(&text, &path.display().to_string()).map_err(|e| anyhow!("{e}"))?
        };
        if let Some(m) = part.meta {
            metas.push((path.display().to_string(), m));
        }
        for r in part.rows {
            if results.rows.iter().any(|x| x.program == r.program && x.config == r.config && x.buffers == r.buffers) {
                bail!("{}: row {} / {} / {} appears in more than one input", path.display(), r.program, r.config, r.buffers);
            }
            results.rows.push(r);
        }
    }
    // Shards of one sweep share the cycle source and the instruction cap; rows of different
    // ones would average incomparable runs.
    if let Some((first, m0)) = metas.first() {
        for (file, m) in &metas[1..] {
            if (m.timing.as_str(), m.max_insns) != (m0.timing.as_str(), m0.max_insns) {
                bail!(
                    "{file}: timing {} and max_insns {} differ from {first}'s ({}, {}): not shards of one sweep",
                    m.timing,
                    m.max_insns,
                    m0.timing,
                    m0.max_insns
                );
            }
        }
        let mut m = meta(m0.timing.clone(), m0.max_insns, None);
        m.partial = metas.iter().any(|(_, x)| x.partial);
        m.sources = a.inputs.iter().map(|p| p.display().to_string()).collect();
        results.meta = Some(m);
    }
    emit(&mut results, a.output.as_deref(), a.json.as_deref(), a.tables.as_deref(), a.plot.as_deref(), a.quiet)
}

fn create(path: &Path) -> Result<BufWriter<std::fs::File>> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    Ok(BufWriter::new(std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?))
}

fn emit(
    results: &mut SweepResults,
    csv: Option<&Path>,
    json: Option<&Path>,
    tables_dir: Option<&Path>,
    plot_dir: Option<&Path>,
    quiet: bool,
) -> Result<()> {
    results.sort();
    let tables = results.tables();
    if let Some(path) = csv {
        let mut w = create(path)?;
        results.write_csv(&mut w)?;
        w.flush()?;
    }
    if let Some(path) = json {
        let doc = serde_json::json!({
            "meta": results.meta,
            "rows": results.rows,
            "averages": results.averages(),
            "tables": tables,
        });
        let mut w = create(path)?;
        serde_json::to_writer_pretty(&mut w, &doc)?;
        writeln!(w)?;
        w.flush()?;
    }
    if let Some(dir) = tables_dir {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        for t in &tables {
            for (ext, body) in [("txt", t.to_text()), ("csv", t.to_csv()), ("md", t.to_markdown())] {
                let path = dir.join(format!("{}.{ext}", t.id));
                std::fs::write(&path, body).with_context(|| format!("writing {}", path.display()))?;
            }
        }
    }
    if let Some(dir) = plot_dir {
        let files = write_plots(results, dir).map_err(|e| anyhow!("{e}"))?;
        eprintln!("plots: {}", files.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "));
    }
    if !quiet {
        let mut out = std::io::stdout().lock();
        for t in &tables {
            writeln!(out, "{}", t.to_text())?;
        }
    }
    Ok(())
}

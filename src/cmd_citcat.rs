//! `streamtrace citcat`: record a system-mode run's cache-filtered bus trace, extract its
//! IMS and AES, replay them without devices, verify (docs/citcat.md), and the report of
//! docs/results.md.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use serde::Serialize;
use serde_json::json;
use streamtrace_sim::system::SystemConfig;
use streamtrace_sim::TimingConfig;
use streamtrace_stages::citcat::extract::extract;
use streamtrace_stages::citcat::monitor::BusMonitor;
use streamtrace_stages::citcat::format::{
    trace_from_bytes, Aes, Cat, Ims, NoTrace, TraceEntry, TraceSink, TraceWriter, AES_SECTIONS,
};
use streamtrace_stages::citcat::record::{record, RecordOptions, Recording};
use streamtrace_stages::citcat::replay::{replay, Replay};
use streamtrace_stages::citcat::verify::{compare_cats, compare_traces, Mismatch};

use crate::cmd_report::{compressed_sizes, Sizes};
use crate::io_util::{load_elf, read_file, thousands, write_file};
use crate::usage::{bail_usage, usage};

#[derive(Args, Debug)]
pub struct CitcatArgs {
    #[command(subcommand)]
    pub op: CitcatOp,
}

#[derive(Subcommand, Debug)]
pub enum CitcatOp {
    /// Phase I: run a bare-metal program in system mode and write the CAT.
    Record(RecordArgs),
    /// IMS and AES from a CAT.
    Extract(ExtractArgs),
    /// Phase II: replay IMS + AES without devices; write the instruction trace (and the CAT).
    Replay(ReplayArgs),
    /// Compare instruction traces (V1) and/or CATs (V2); exit status 1 on a difference.
    Verify(VerifyArgs),
    /// Record, extract, replay and verify in one go, with sizes (no files needed).
    Check(CheckArgs),
    /// The docs/results.md report over several programs: sizes, compression, ratios, the
    /// CAT-bytes-per-instruction plot.
    Report(ReportArgs),
}

/// Options shared by the commands that run the platform.
#[derive(Args, Debug, Clone)]
pub struct PlatformArgs {
    /// Seed of the devices' arrival times, jitter and data (overrides the --system file's).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Device parameters (TOML: seed, timer_jitter, uart_gap_min, uart_gap_max, dma_delay,
    /// dma_burst_gap; docs/citcat.md 1.1).
    #[arg(long, value_name = "FILE.toml")]
    pub system: Option<PathBuf>,
    /// Core timing and cache configuration (TOML, docs/timing.md); the bus monitor takes
    /// its cache geometry and policy from it. Replay must be given the recording's.
    #[arg(long, value_name = "FILE.toml")]
    pub timing: Option<PathBuf>,
    /// Stop after this many instructions.
    #[arg(long, default_value_t = 100_000_000)]
    pub max_insns: u64,
}

impl PlatformArgs {
    fn timing(&self) -> Result<TimingConfig> {
        timing_from(self.timing.as_deref())
    }

    fn record_options(&self) -> Result<RecordOptions> {
        let mut system = match &self.system {
            // Unreadable: an I/O error (exit 1); readable but bad: a configuration error (2).
            Some(p) => SystemConfig::from_toml_str(&String::from_utf8_lossy(&read_file(p)?))
                .map_err(|e| usage(format!("{}: {e}", p.display())))?,
            None => SystemConfig::default(),
        };
        if let Some(seed) = self.seed {
            system.seed = seed;
        }
        Ok(RecordOptions {
            system,
            timing: self.timing()?,
            max_insns: self.max_insns,
        })
    }
}

#[derive(Args, Debug)]
pub struct RecordArgs {
    /// The bare-metal program (ELF linked for the platform's RAM at 0).
    pub program: PathBuf,
    /// Where to write the CAT.
    #[arg(short, long, value_name = "RUN.cat")]
    pub output: PathBuf,
    /// Also write the recorded run's instruction trace (the ground truth for `verify`).
    #[arg(long, value_name = "FILE.trace")]
    pub insns: Option<PathBuf>,
    #[command(flatten)]
    pub platform: PlatformArgs,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct ExtractArgs {
    pub cat: PathBuf,
    /// The IMS and the AES files.
    #[arg(short, long, num_args = 2, value_names = ["RUN.ims", "RUN.aes"], required = true)]
    pub output: Vec<PathBuf>,
    /// Print the results as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct ReplayArgs {
    pub ims: PathBuf,
    pub aes: PathBuf,
    /// Where to write the replayed instruction trace.
    #[arg(long, value_name = "OUT.trace")]
    pub insns: PathBuf,
    /// Also write the regenerated CAT.
    #[arg(long, value_name = "OUT.cat")]
    pub cat: Option<PathBuf>,
    /// Timing configuration of the recording (for the monitor's caches).
    #[arg(long, value_name = "FILE.toml")]
    pub timing: Option<PathBuf>,
    /// Give up after this many instructions without reaching the end key.
    #[arg(long, default_value_t = 100_000_000)]
    pub max_insns: u64,
    /// Print the results as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// Two instruction traces: recorded, replayed (V1).
    #[arg(long, num_args = 2, value_names = ["RECORDED.trace", "REPLAYED.trace"])]
    pub insns: Vec<PathBuf>,
    /// Two CATs: recorded, regenerated (V2: CPU-originated records).
    #[arg(long, num_args = 2, value_names = ["RECORDED.cat", "REPLAYED.cat"])]
    pub cat: Vec<PathBuf>,
    /// Print the results as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    pub program: PathBuf,
    #[command(flatten)]
    pub platform: PlatformArgs,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The bare-metal programs.
    #[arg(required = true)]
    pub programs: Vec<PathBuf>,
    #[command(flatten)]
    pub platform: PlatformArgs,
    /// Write the plot (SVG and PNG) and the CSV of CAT bytes over time here.
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
    /// Print the results as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: &CitcatArgs) -> Result<u8> {
    match &a.op {
        CitcatOp::Record(a) => run_record(a).map(|()| 0),
        CitcatOp::Extract(a) => run_extract(a).map(|()| 0),
        CitcatOp::Replay(a) => run_replay(a).map(|()| 0),
        CitcatOp::Verify(a) => run_verify(a),
        CitcatOp::Check(a) => run_check(a),
        CitcatOp::Report(a) => run_report(a).map(|()| 0),
    }
}

fn read_cat(path: &Path) -> Result<Cat> {
    Cat::from_bytes(&read_file(path)?).with_context(|| path.display().to_string())
}

fn read_trace(path: &Path) -> Result<Vec<TraceEntry>> {
    trace_from_bytes(&read_file(path)?).with_context(|| path.display().to_string())
}

fn progress(n: u64) {
    if n.is_multiple_of(10_000_000) {
        eprintln!("  {} instructions", thousands(n));
    }
}

fn do_record(program: &Path, p: &PlatformArgs, trace: &mut dyn TraceSink) -> Result<Recording> {
    let elf = load_elf(program)?;
    record(&elf, &p.record_options()?, trace, progress).with_context(|| format!("recording {}", program.display()))
}

/// A trace file written as the run goes.
fn trace_file(path: &Path) -> Result<TraceWriter<BufWriter<File>>> {
    let f = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    TraceWriter::new(BufWriter::with_capacity(1 << 16, f)).with_context(|| format!("cannot write {}", path.display()))
}

/// Runs `f` with a sink writing to `path`, or with none.
fn with_trace<T>(path: Option<&Path>, f: impl FnOnce(&mut dyn TraceSink) -> Result<T>) -> Result<T> {
    match path {
        None => f(&mut NoTrace),
        Some(p) => {
            let mut w = trace_file(p)?;
            let out = f(&mut w)?;
            w.finish().with_context(|| format!("cannot write {}", p.display()))?;
            Ok(out)
        }
    }
}

fn run_record(a: &RecordArgs) -> Result<()> {
    let rec = with_trace(a.insns.as_deref(), |t| do_record(&a.program, &a.platform, t))?;
    write_file(&a.output, &rec.cat.to_bytes())?;
    let s = &rec.stats;
    let bytes = rec.cat.file_bytes();
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "program": a.program.display().to_string(),
                "stats": s,
                "cat_records": rec.cat.records.len(),
                "cat_bytes": bytes,
            }))?
        );
    } else {
        println!(
            "{}: {} instructions traced ({} before the trace start), {} cycles, exit {}",
            a.program.display(),
            thousands(s.instructions),
            thousands(s.before_trace),
            thousands(s.cycles),
            s.exit_code.map_or("none (instruction limit)".into(), |c| c.to_string())
        );
        println!(
            "  {} IRQs, {} DMA bursts, {} counter reads; CAT {} records, {} bytes ({:.3} bytes/instruction) -> {}",
            s.irqs,
            s.dma_bursts,
            s.counter_reads,
            thousands(rec.cat.records.len() as u64),
            thousands(bytes as u64),
            bytes as f64 / s.instructions.max(1) as f64,
            a.output.display()
        );
    }
    Ok(())
}

fn run_extract(a: &ExtractArgs) -> Result<()> {
    let cat = read_cat(&a.cat)?;
    let (ims, aes) = extract(&cat).with_context(|| a.cat.display().to_string())?;
    write_file(&a.output[0], &ims.to_bytes())?;
    write_file(&a.output[1], &aes.to_bytes())?;
    // Sizes of the content, without the files' trailers (docs/citcat.md 8).
    let (ims_bytes, aes_bytes) = (ims.content_bytes(), aes.content_bytes());
    let counts = json!({"INT": aes.ints.len(), "IOQ": aes.ioq.len(), "DMA": aes.dma.len(), "CNT": aes.cnt.len()});
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "ims_bytes": ims_bytes.len(), "ims_runs": ims.runs.len(), "ims_image_bytes": ims.image_bytes(),
                "aes_bytes": aes_bytes.len(), "aes_entries": counts,
                "end": {"tbc": aes.end_tbc, "pc": aes.end_pc},
            }))?
        );
    } else {
        println!(
            "IMS: {} bytes ({} memory bytes in {} runs) -> {}",
            thousands(ims_bytes.len() as u64),
            thousands(ims.image_bytes() as u64),
            ims.runs.len(),
            a.output[0].display()
        );
        println!(
            "AES: {} bytes (INT {}, IOQ {}, DMA {}, CNT {}; end at tbc {} pc {:#010x}) -> {}",
            thousands(aes_bytes.len() as u64),
            aes.ints.len(),
            aes.ioq.len(),
            aes.dma.len(),
            aes.cnt.len(),
            aes.end_tbc,
            aes.end_pc,
            a.output[1].display()
        );
    }
    Ok(())
}

/// The `--timing` file, or the defaults; a configuration the bus monitor cannot record
/// (docs/citcat.md) is a configuration error, found before anything is allocated or run.
fn timing_from(path: Option<&Path>) -> Result<TimingConfig> {
    let t = match path {
        Some(p) => TimingConfig::from_toml_file(p)?,
        None => TimingConfig::default(),
    };
    BusMonitor::check(&t).map_err(|e| usage(format!("{}: {e}", path.map_or("the default timing".into(), |p| p.display().to_string()))))?;
    Ok(t)
}

fn run_replay(a: &ReplayArgs) -> Result<()> {
    let ims = Ims::from_bytes(&read_file(&a.ims)?).with_context(|| a.ims.display().to_string())?;
    let aes = Aes::from_bytes(&read_file(&a.aes)?).with_context(|| a.aes.display().to_string())?;
    let timing = timing_from(a.timing.as_deref())?;
    // A divergence comes from the inputs' content: name them (found by tests/cli_malformed.rs).
    let out = with_trace(Some(&a.insns), |t| {
        replay(&ims, &aes, &timing, a.max_insns, t).with_context(|| format!("replay of {} and {}", a.ims.display(), a.aes.display()))
    })?;
    if let Some(p) = &a.cat {
        write_file(p, &out.cat.to_bytes())?;
    }
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "instructions": out.instructions, "cat_records": out.cat.records.len(), "events_consumed": true,
            }))?
        );
    } else {
        println!(
            "replayed {} instructions to the end key, every AES entry consumed (V3) -> {}",
            thousands(out.instructions),
            a.insns.display()
        );
    }
    Ok(())
}

fn mismatch_json(m: &Option<Mismatch>) -> serde_json::Value {
    match m {
        None => json!({"equal": true}),
        Some(m) => json!({"equal": false, "first_difference": m}),
    }
}

fn run_verify(a: &VerifyArgs) -> Result<u8> {
    if a.insns.is_empty() && a.cat.is_empty() {
        bail_usage!("nothing to compare: give --insns RECORDED REPLAYED and/or --cat RECORDED REPLAYED");
    }
    let v1 = if a.insns.is_empty() { None } else { Some(compare_traces(&read_trace(&a.insns[0])?, &read_trace(&a.insns[1])?)) };
    let v2 = if a.cat.is_empty() { None } else { Some(compare_cats(&read_cat(&a.cat[0])?, &read_cat(&a.cat[1])?)) };
    let failed = v1.as_ref().is_some_and(Option::is_some) || v2.as_ref().is_some_and(Option::is_some);
    if a.json {
        let mut o = serde_json::Map::new();
        if let Some(v) = &v1 {
            o.insert("v1_instruction_trace".into(), mismatch_json(v));
        }
        if let Some(v) = &v2 {
            o.insert("v2_cat".into(), mismatch_json(v));
        }
        o.insert("pass".into(), json!(!failed));
        println!("{}", serde_json::to_string_pretty(&o)?);
    } else {
        for (name, v) in [("V1 instruction trace", &v1), ("V2 CAT (CPU records)", &v2)] {
            match v {
                None => {}
                Some(None) => println!("{name}: equal"),
                Some(Some(m)) => println!("{name}: DIFFERENT at {m}"),
            }
        }
    }
    Ok(failed as u8)
}

/// One program through both phases, with the report's figures.
#[derive(Serialize)]
struct CheckRow {
    program: String,
    instructions: u64,
    before_trace: u64,
    handler_instructions: u64,
    dump_instructions: u64,
    cycles: u64,
    irqs: u64,
    dma_bursts: u64,
    counter_reads: u64,
    cat_records: usize,
    cat_bytes: usize,
    cat_bytes_per_instruction: f64,
    /// CAT bytes per instruction over the second half of the trace (after warm-up).
    cat_bytes_per_instruction_steady: f64,
    ims: Sizes,
    ims_image_bytes: usize,
    aes: Sizes,
    aes_sections: Vec<(String, Sizes)>,
    aes_entries: [usize; 4],
    instructions_per_aes_byte_raw: f64,
    instructions_per_aes_byte_gzip: f64,
    /// (10 bytes x instructions) / gzip AES, and with the gzip IMS added.
    ratio_gzip: f64,
    ratio_gzip_with_ims: f64,
    /// What the thesis's software driver would add: 9 instructions per interrupt and 3 per
    /// counter read, as a share of the traced instructions.
    software_driver_perturbation: f64,
    v1: bool,
    v2: bool,
    v3: bool,
    #[serde(skip)]
    cat_over_time: Vec<(u64, u64)>,
}

fn check_one(program: &Path, p: &PlatformArgs) -> Result<CheckRow> {
    let mut recorded = Vec::new();
    let rec = do_record(program, p, &mut recorded)?;
    let cat = Cat::from_bytes(&rec.cat.to_bytes()).context("the recorded CAT does not read back")?;
    let (ims, aes) = extract(&cat)?;
    let mut replayed = Vec::new();
    let out: Result<Replay, _> = replay(&ims, &aes, &p.timing()?, p.max_insns.saturating_mul(2), &mut replayed);
    let (v1, v2, v3) = match &out {
        Ok(o) => (compare_traces(&recorded, &replayed).is_none(), compare_cats(&rec.cat, &o.cat).is_none(), true),
        Err(e) => {
            eprintln!("{}: replay: {e}", program.display());
            (false, false, false)
        }
    };
    let s = &rec.stats;
    let n = s.instructions.max(1) as f64;
    let ims_sizes = compressed_sizes(&ims.content_bytes())?;
    let aes_sizes = compressed_sizes(&aes.content_bytes())?;
    let mut aes_sections = Vec::new();
    for (name, bytes) in AES_SECTIONS.iter().zip(aes.sections()) {
        aes_sections.push((name.to_string(), compressed_sizes(&bytes)?));
    }
    let bytes = rec.cat.file_bytes();
    let over = &s.cat_bytes_over_time;
    let steady = match (over.get(over.len() / 2), over.last()) {
        (Some(a), Some(b)) if b.0 > a.0 => (b.1 - a.1) as f64 / (b.0 - a.0) as f64,
        _ => f64::NAN,
    };
    Ok(CheckRow {
        program: program.file_stem().map_or_else(|| program.display().to_string(), |s| s.to_string_lossy().into_owned()),
        instructions: s.instructions,
        before_trace: s.before_trace,
        handler_instructions: s.handler_instructions,
        dump_instructions: s.dump_instructions,
        cycles: s.cycles,
        irqs: s.irqs,
        dma_bursts: s.dma_bursts,
        counter_reads: s.counter_reads,
        cat_records: rec.cat.records.len(),
        cat_bytes: bytes,
        cat_bytes_per_instruction: bytes as f64 / n,
        cat_bytes_per_instruction_steady: steady,
        ims_image_bytes: ims.image_bytes(),
        instructions_per_aes_byte_raw: n / aes_sizes.raw as f64,
        instructions_per_aes_byte_gzip: n / aes_sizes.gzip as f64,
        ratio_gzip: 10.0 * n / aes_sizes.gzip as f64,
        ratio_gzip_with_ims: 10.0 * n / (aes_sizes.gzip + ims_sizes.gzip) as f64,
        software_driver_perturbation: (9 * s.irqs + 3 * s.counter_reads) as f64 / n,
        ims: ims_sizes,
        aes: aes_sizes,
        aes_sections,
        aes_entries: [aes.ints.len(), aes.ioq.len(), aes.dma.len(), aes.cnt.len()],
        v1,
        v2,
        v3,
        cat_over_time: s.cat_bytes_over_time.clone(),
    })
}

fn print_row(r: &CheckRow) {
    let ok = |b: bool| if b { "pass" } else { "FAIL" };
    println!(
        "{}: {} instructions, {} IRQs, {} DMA bursts, {} counter reads; V1 {} V2 {} V3 {}",
        r.program,
        thousands(r.instructions),
        r.irqs,
        r.dma_bursts,
        r.counter_reads,
        ok(r.v1),
        ok(r.v2),
        ok(r.v3)
    );
    println!(
        "  CAT {} bytes: {:.3} bytes/instruction ({:.3} in the second half)",
        thousands(r.cat_bytes as u64),
        r.cat_bytes_per_instruction,
        r.cat_bytes_per_instruction_steady
    );
    for (name, s) in [("IMS", &r.ims), ("AES", &r.aes)] {
        println!("  {name} raw {} gzip {} xz {} zstd {}", thousands(s.raw), thousands(s.gzip), thousands(s.xz), thousands(s.zstd));
    }
    println!(
        "  {:.1} instructions per raw AES byte, {:.1} per gzip AES byte; ratio {:.0}:1 without the IMS, {:.1}:1 with it",
        r.instructions_per_aes_byte_raw, r.instructions_per_aes_byte_gzip, r.ratio_gzip, r.ratio_gzip_with_ims
    );
}

fn run_check(a: &CheckArgs) -> Result<u8> {
    let r = check_one(&a.program, &a.platform)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        print_row(&r);
    }
    Ok(!(r.v1 && r.v2 && r.v3) as u8)
}

fn run_report(a: &ReportArgs) -> Result<()> {
    let mut rows = Vec::new();
    for p in &a.programs {
        eprintln!("{}", p.display());
        rows.push(check_one(p, &a.platform)?);
    }
    if let Some(dir) = &a.out_dir {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let mut csv = String::from("program,instructions,cat_bytes\n");
        let mut series = Vec::new();
        for r in &rows {
            // Bytes per instruction over windows of 2,000 instructions (the thesis's Fig. 4
            // plots the cumulative CAT size; the windowed slope shows warm-up and steady state).
            let mut pts = Vec::new();
            let mut prev = (0u64, 0u64);
            for &(n, b) in &r.cat_over_time {
                csv.push_str(&format!("{},{n},{b}\n", r.program));
                if n - prev.0 >= 2000 {
                    pts.push((n as f64 / 1000.0, (b - prev.1) as f64 / (n - prev.0) as f64));
                    prev = (n, b);
                }
            }
            series.push((r.program.clone(), pts));
        }
        write_file(&dir.join("citcat-cat-over-time.csv"), csv.as_bytes())?;
        let written = streamtrace_sim::sweep::plot::write_line_plot(
            dir,
            "citcat-cat-bytes",
            "CAT bytes per instruction (2,000-instruction windows)",
            "instructions traced (thousands)",
            "CAT bytes / instruction",
            &series,
        )
        .map_err(anyhow::Error::msg)?;
        for w in written {
            eprintln!("wrote {}", w.display());
        }
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        for r in &rows {
            print_row(r);
        }
        let n: u64 = rows.iter().map(|r| r.instructions).sum();
        let aes_gz: u64 = rows.iter().map(|r| r.aes.gzip).sum();
        let ims_gz: u64 = rows.iter().map(|r| r.ims.gzip).sum();
        println!(
            "all: {} instructions, {:.1} per gzip AES byte, {:.0}:1 without the IMS, {:.1}:1 with it",
            thousands(n),
            n as f64 / aes_gz as f64,
            10.0 * n as f64 / aes_gz as f64,
            10.0 * n as f64 / (aes_gz + ims_gz) as f64
        );
    }
    if rows.iter().any(|r| !(r.v1 && r.v2 && r.v3)) {
        bail!("a replay did not verify (see above)");
    }
    Ok(())
}

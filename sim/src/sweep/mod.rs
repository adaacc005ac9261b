//! Design-space sweeps (issue 4, docs/sweeps.md): run each program once on the core model,
//! capture its stream descriptors with retire cycles, then replay every trace module
//! configuration from the capture in cycle mode, in parallel. A sweep's cost is per stream,
//! not per instruction, and captures are reused across invocations.

pub mod plot;
pub mod report;
pub mod schemes;

use std::fs::File;
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use streamtrace_isa::ElfImage;
use streamtrace_model::capture::{Capture, CaptureInfo, CaptureWriter};
use streamtrace_model::stats::count_unique_streams;
use streamtrace_model::{
    storage_bits, BufferConfig, Config, CycleOutput, CycleStats, CycleTraceModule, EncodedStreams, FullPolicy, IsaMode, PlainRun, Scheme,
    Stats, StreamDescriptor, StreamDetector,
};

use crate::machine::{Machine, MemAccess, RetireHook, SimError};
use crate::semihost::Semihost;
use crate::timing::TimingConfig;

/// One program of a sweep: an ELF, its arguments and the directory it runs in.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ProgramSpec {
    pub name: String,
    pub elf: PathBuf,
    /// argv\[0\] and the arguments joined by spaces (what SYS_GET_CMDLINE returns).
    pub cmdline: String,
    pub workdir: PathBuf,
    /// The arguments one by one (a manifest's `argv`, for arguments with spaces); empty:
    /// `cmdline` split at spaces.
    #[serde(default)]
    pub argv: Vec<String>,
    /// A file (relative to `workdir`) the program reads as its stdin; none: empty input.
    #[serde(default)]
    pub stdin: Option<PathBuf>,
    /// The exit status a manifest records for the program (busybox `cmp -l` of two
    /// different files exits 1); none: 0 is expected.
    #[serde(default)]
    pub expected_exit: Option<i32>,
}

impl ProgramSpec {
    /// A program run with `cmdline` (split at spaces) in `workdir`, empty stdin.
    pub fn new(name: impl Into<String>, elf: impl Into<PathBuf>, cmdline: impl Into<String>, workdir: impl Into<PathBuf>) -> Self {
        ProgramSpec { name: name.into(), elf: elf.into(), cmdline: cmdline.into(), workdir: workdir.into(), argv: Vec::new(), stdin: None, expected_exit: None }
    }

    /// Semihosting (or Linux system calls) as the sweeps and the host stages run programs:
    /// the program's arguments, working directory and stdin, output discarded, a
    /// deterministic clock (so runs repeat exactly).
    pub fn semihost(&self) -> Result<Semihost, String> {
        let mut s = Semihost::new().with_cmdline(self.cmdline.clone());
        if !self.argv.is_empty() {
            s = s.with_args(&self.argv);
        }
        let stdin: Box<dyn io::Read + Send> = match &self.stdin {
            Some(f) => {
                let path = self.workdir.join(f);
                Box::new(File::open(&path).map_err(|e| format!("{}: stdin {}: {e}", self.name, path.display()))?)
            }
            None => Box::new(io::empty()),
        };
        Ok(s.with_workdir(self.workdir.clone())
            .with_stdin(stdin)
            .with_stdout(io::sink())
            .with_stderr(io::sink())
            .with_deterministic_clock(100_000_000))
    }

    /// A machine with the program loaded (a Linux program in Linux mode) and
    /// [`ProgramSpec::semihost`].
    pub fn machine(&self) -> Result<Machine, String> {
        let elf = ElfImage::open(&self.elf).map_err(|e| format!("{}: {e}", self.elf.display()))?;
        self.machine_for(&elf)
    }

    /// [`ProgramSpec::machine`] with the ELF already loaded.
    pub fn machine_for(&self, elf: &ElfImage) -> Result<Machine, String> {
        Machine::load(elf, self.semihost()?).map_err(|e| format!("{}: {e}", self.elf.display()))
    }
}

#[derive(Deserialize)]
struct ManifestEntry {
    name: String,
    elf: String,
    cmdline: String,
    #[serde(default)]
    argv: Vec<String>,
    #[serde(default)]
    stdin: Option<PathBuf>,
    #[serde(default)]
    exit_code: Option<i32>,
}

#[derive(Deserialize)]
struct Manifest {
    programs: Vec<ManifestEntry>,
}

/// The programs of a `programs.json` manifest (testbenches/programs), which run from the
/// manifest's directory with the command lines it records.
pub fn programs_from_manifest(path: &Path) -> Result<Vec<ProgramSpec>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let m: Manifest = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
    Ok(m.programs
        .into_iter()
        .map(|p| ProgramSpec {
            name: p.name,
            elf: dir.join(&p.elf),
            cmdline: p.cmdline,
            workdir: dir.clone(),
            argv: p.argv,
            stdin: p.stdin,
            expected_exit: p.exit_code,
        })
        .collect())
}

/// `--programs` argument: a directory with `programs.json`, a manifest file, or a comma
/// list of programs, each an ELF path followed by its arguments separated by spaces
/// (`bin/a.elf 100,bin/b.elf`), run in the current directory. A program with arguments is
/// named by its file stem and the arguments (`a 100`), so one ELF can appear with several
/// inputs; arguments with spaces or commas need a manifest.
pub fn resolve_programs(arg: &str) -> Result<Vec<ProgramSpec>, String> {
    let p = Path::new(arg);
    if p.is_dir() {
        return programs_from_manifest(&p.join("programs.json"));
    }
    if p.extension().is_some_and(|e| e == "json") {
        return programs_from_manifest(p);
    }
    let mut out: Vec<ProgramSpec> = Vec::new();
    for item in arg.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let mut words = item.split_whitespace();
        let elf = words.next().unwrap_or_default();
        let args: Vec<&str> = words.collect();
        let path = PathBuf::from(elf);
        if !path.is_file() {
            return Err(format!("{elf}: no such program"));
        }
        let stem = path.file_stem().map_or(elf.to_string(), |n| n.to_string_lossy().into_owned());
        let name = if args.is_empty() { stem } else { format!("{stem} {}", args.join(" ")) };
        if out.iter().any(|o| o.name == name) {
            return Err(format!("{item}: named twice (program {name})"));
        }
        let cmdline = std::iter::once(elf).chain(args.iter().copied()).collect::<Vec<_>>().join(" ");
        out.push(ProgramSpec::new(name, path, cmdline, "."));
    }
    Ok(out)
}

/// Where retire cycles come from.
#[derive(Clone, Debug, PartialEq)]
pub enum CycleSource {
    /// Instruction *i* retires at cycle *i* (the paper's bandwidth assumption).
    Ipc1,
    /// Retire cycles of the XScale-like timing model (docs/timing.md) with this configuration.
    Timing(Box<TimingConfig>),
}

impl CycleSource {
    /// Names the source in rows and capture keys; a timing configuration other than the
    /// defaults is told apart by a hash of its settings.
    pub fn label(&self) -> String {
        match self {
            CycleSource::Ipc1 => timing_label(None),
            CycleSource::Timing(cfg) => timing_label(Some(cfg)),
        }
    }
}

/// The `timing` of a row: `ipc1` without the timing model, `xscale` with its defaults,
/// `xscale-HASH` with other parameters (rows of different parameters never average together).
pub fn timing_label(timing: Option<&TimingConfig>) -> String {
    match timing {
        None => "ipc1".into(),
        Some(cfg) if *cfg == TimingConfig::default() => "xscale".into(),
        Some(cfg) => format!("xscale-{:08x}", fnv1a(format!("{cfg:?}").as_bytes()) as u32),
    }
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// Capture options shared by every program of a sweep.
#[derive(Clone, Debug)]
pub struct CaptureOptions {
    pub dir: PathBuf,
    pub cycles: CycleSource,
    pub max_insns: u64,
    /// Set (e.g. by a SIGINT handler) to stop a capture early: it is then discarded and
    /// [`ensure_captures`] returns [`INTERRUPTED`].
    pub cancel: Option<Arc<AtomicBool>>,
}

/// The error of a capture or replay stopped through [`CaptureOptions::cancel`] or
/// [`SweepPlan::cancel`].
pub const INTERRUPTED: &str = "interrupted";

fn cancelled(flag: &Option<Arc<AtomicBool>>) -> bool {
    flag.as_ref().is_some_and(|f| f.load(Ordering::Relaxed))
}

fn capture_path(dir: &Path, key: &str, max_sl: u32) -> PathBuf {
    dir.join(format!("{key}-sl{max_sl}.stcap"))
}

fn capture_key(p: &ProgramSpec, elf_bytes: &[u8], opts: &CaptureOptions) -> String {
    let mut id = elf_bytes.to_vec();
    id.extend_from_slice(p.cmdline.as_bytes());
    for a in &p.argv {
        id.push(0);
        id.extend_from_slice(a.as_bytes());
    }
    if let Some(f) = &p.stdin {
        id.push(1);
        id.extend_from_slice(f.as_os_str().as_encoded_bytes());
    }
    id.extend_from_slice(opts.cycles.label().as_bytes());
    id.extend_from_slice(&opts.max_insns.to_le_bytes());
    let clean: String = p.name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '-' }).collect();
    format!("{clean}-{:016x}", fnv1a(&id))
}

/// Make sure a capture exists for `program` at every `max_sl` (one simulation writes all
/// missing ones); returns their paths in the order of `max_sls`.
pub fn ensure_captures(p: &ProgramSpec, max_sls: &[u32], opts: &CaptureOptions) -> Result<Vec<PathBuf>, String> {
    let elf_bytes = streamtrace_isa::read_program(&p.elf).map_err(|e| e.to_string())?;
    let key = capture_key(p, &elf_bytes, opts);
    let paths: Vec<PathBuf> = max_sls.iter().map(|&m| capture_path(&opts.dir, &key, m)).collect();
    let missing: Vec<(u32, PathBuf)> = max_sls
        .iter()
        .zip(&paths)
        .filter(|(_, path)| {
            std::fs::read(path).ok().and_then(|b| Capture::read_info(&b).ok()).is_none_or(|(i, _)| i.key != key)
        })
        .map(|(&m, path)| (m, path.clone()))
        .collect();
    if missing.is_empty() {
        return Ok(paths);
    }
    std::fs::create_dir_all(&opts.dir).map_err(|e| format!("{}: {e}", opts.dir.display()))?;
    let elf = ElfImage::from_bytes_named(&elf_bytes, &p.elf.display().to_string()).map_err(|e| e.to_string())?;
    capture_run(p, &elf, &key, &missing, opts)?;
    Ok(paths)
}

/// Instructions a capture runs between two reads of the cancel flag.
const CANCEL_SLICE: u64 = 1 << 16;

/// The capture's run hook: every sink's stream detector, with the instructions inside a
/// stream in plain runs ([`RetireHook::plain_budget`]); the first and last retire cycles.
struct CaptureHook<'a> {
    sinks: &'a mut [CaptureSink],
    /// Cycles are instruction indices (one instruction per cycle).
    ipc1: bool,
    index: u64,
    first: Option<u64>,
    last: u64,
    io_error: Option<io::Error>,
}

impl RetireHook for CaptureHook<'_> {
    #[inline]
    fn retire(&mut self, ev: &streamtrace_model::RetireEvent, _: &[MemAccess]) {
        let cycle = if self.ipc1 { self.index } else { ev.cycle };
        self.index += 1;
        let f = *self.first.get_or_insert(cycle);
        self.last = cycle;
        for s in self.sinks.iter_mut() {
            if let Some(d) = s.detector.push(ev) {
                if let Err(e) = s.writer.push(&d, cycle, f) {
                    self.io_error.get_or_insert(e);
                }
            }
        }
    }

    /// As many as every sink's current stream takes without ending (none before the
    /// first instruction, which sets the first cycle).
    #[inline]
    fn plain_budget(&self) -> u32 {
        if self.first.is_none() {
            return 0;
        }
        self.sinks.iter().map(|s| s.detector.plain_room()).min().unwrap_or(u32::MAX)
    }

    #[inline(always)]
    fn retire_plain(&mut self, run: &PlainRun) {
        let n = run.count as u64;
        self.last = if self.ipc1 { self.index + n - 1 } else { run.last_cycle };
        self.index += n;
        for s in self.sinks.iter_mut() {
            s.detector.extend_plain_run(run.pc | run.thumb as u32, run.count);
        }
    }
}

struct CaptureSink {
    detector: StreamDetector,
    writer: CaptureWriter<BufWriter<File>>,
    tmp: PathBuf,
    path: PathBuf,
    max_sl: u32,
}

fn capture_run(
    p: &ProgramSpec,
    elf: &ElfImage,
    key: &str,
    targets: &[(u32, PathBuf)],
    opts: &CaptureOptions,
) -> Result<(), String> {
    let mut sinks = targets
        .iter()
        .map(|(m, path)| {
            // Write beside the target and rename at the end, so an interrupted capture never
            // looks complete.
            let tmp = path.with_extension(format!("tmp{}", std::process::id()));
            let f = File::create(&tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
            let writer = CaptureWriter::new(BufWriter::with_capacity(1 << 20, f)).map_err(|e| e.to_string())?;
            Ok(CaptureSink { detector: StreamDetector::new(*m), writer, tmp, path: path.clone(), max_sl: *m })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let mut m = p.machine_for(elf)?;
    if let CycleSource::Timing(cfg) = &opts.cycles {
        m.enable_timing((**cfg).clone()).map_err(|e| format!("timing configuration: {e}"))?;
    }
    let mut hook = CaptureHook { sinks: &mut sinks, ipc1: opts.cycles == CycleSource::Ipc1, index: 0, first: None, last: 0, io_error: None };
    let mut interrupted = false;
    let exit = loop {
        if m.retired >= opts.max_insns {
            break None;
        }
        if cancelled(&opts.cancel) {
            interrupted = true;
            break None;
        }
        // In slices of 64 Ki instructions, between which the cancel flag is read.
        let slice_end = opts.max_insns.min(m.retired.saturating_add(CANCEL_SLICE));
        match m.run(slice_end, &mut hook) {
            Ok(code) => break Some(code),
            Err(SimError::InstructionLimit { .. }) => {}
            Err(e) => return Err(format!("{}: {e} after {} instructions", p.name, m.retired)),
        }
    };
    let CaptureHook { first, last, io_error, .. } = hook;
    if interrupted {
        for s in sinks {
            drop(s.writer);
            let _ = std::fs::remove_file(&s.tmp);
        }
        return Err(INTERRUPTED.into());
    }
    if let Some(e) = io_error {
        return Err(format!("writing the capture of {}: {e}", p.name));
    }
    let first = first.unwrap_or(0);
    for mut s in sinks {
        // The partial last stream is produced one cycle after the last retirement
        // (docs/trace-timing.md section 2).
        if let Some(d) = s.detector.cut() {
            s.writer.push(&d, last + 1, first).map_err(|e| e.to_string())?;
        }
        let info = CaptureInfo {
            program: p.name.clone(),
            cmdline: p.cmdline.clone(),
            max_sl: s.max_sl,
            timing: opts.cycles.label(),
            instructions: m.retired,
            descriptors: s.writer.count(),
            first_cycle: first,
            last_cycle: last,
            exit_code: exit,
            key: key.to_string(),
        };
        s.writer.finish(&info).map_err(|e| format!("{}: {e}", s.tmp.display()))?;
        std::fs::rename(&s.tmp, &s.path).map_err(|e| format!("{}: {e}", s.path.display()))?;
    }
    Ok(())
}

/// Load a capture file.
pub fn load_capture(path: &Path) -> Result<Capture, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Capture::parse(&bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// Replay a capture through the trace module in cycle mode.
pub fn replay(capture: &Capture, cfg: &Config, buf: &BufferConfig) -> CycleOutput {
    let mut m = CycleTraceModule::new(cfg, buf);
    m.start_at(capture.info.first_cycle);
    for t in &capture.descriptors {
        m.push_descriptor(&t.descriptor, t.end_cycle);
    }
    m.finish()
}

/// One result row: a program under one configuration and buffer setting.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct SweepRow {
    pub program: String,
    pub config: String,
    pub buffers: String,
    pub timing: String,
    /// The program's exit status; none when it was stopped at the instruction cap.
    pub exit_code: Option<i32>,
    /// The run was cut at the instruction cap (`--max-insns`), so the rows cover a prefix.
    #[serde(default)]
    pub truncated: bool,
    pub instructions: u64,
    pub streams: u64,
    pub total_bits: u64,
    pub bits_per_instruction: f64,
    pub hr_sdc: f64,
    pub hr_lsp: f64,
    pub sdc_lookups: u64,
    pub sdc_hits: u64,
    pub lsp_hits: u64,
    pub lsp_hit_bits: u64,
    pub sdc_hit_bits: u64,
    pub miss_bits: u64,
    pub escape_bits: u64,
    /// Storage bits of the configuration with this row's SDB depth and output buffer.
    pub storage_bits: u64,
    pub cycles: u64,
    pub stall_cycles: u64,
    pub overflows: u64,
    pub lost_instructions: u64,
    pub max_sdb: u32,
    pub max_obuf_bits: u64,
    /// Sizes measured with unbounded buffers (never stall or drop for this run).
    pub sdb_needed: u32,
    pub obuf_needed_bits: u64,
}

/// What to sweep.
#[derive(Clone, Debug)]
pub struct SweepPlan {
    pub configs: Vec<Config>,
    /// Buffer settings; their port width / ratio / service times also define sizing runs.
    pub buffers: Vec<BufferConfig>,
    /// Run only jobs `i` with `i % shard.1 == shard.0` (0-based).
    pub shard: (usize, usize),
    /// When set, jobs not yet started are skipped (an interrupted sweep keeps the rows of
    /// the jobs that finished).
    pub cancel: Option<Arc<AtomicBool>>,
}

/// A unit of parallel work: one program capture, one configuration, every buffer setting.
struct Job {
    config: Config,
    /// Indices into the plan's buffers sharing one sizing run.
    groups: Vec<(BufferConfig, Vec<BufferConfig>)>,
}

fn sizing_groups(buffers: &[BufferConfig]) -> Vec<(BufferConfig, Vec<BufferConfig>)> {
    let mut groups: Vec<(BufferConfig, Vec<BufferConfig>)> = Vec::new();
    for b in buffers {
        let key = b.unbounded();
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(*b),
            None => groups.push((key, vec![*b])),
        }
    }
    groups
}

/// A row from a run and the needed sizes of its sizing run (`sizing`).
fn row(info: &CaptureInfo, cfg: &Config, buf: &BufferConfig, out: &CycleOutput, sizing: &CycleStats) -> SweepRow {
    let storage = buffered_storage_bits(cfg, buf, sizing);
    let mut r = sweep_row(&info.program, &info.timing, cfg, buf.to_string(), storage, &out.stats, &out.cycle, sizing);
    r.exit_code = info.exit_code;
    r.truncated = info.exit_code.is_none();
    r
}

/// Storage bits of `cfg` with the buffers of `buf`; an unbounded (`inf`) SDB or output
/// buffer counts at the size this run needed (`sizing`, the unbounded run), the smallest
/// buffer that behaves exactly like it (docs/sweeps.md, "Row fields").
pub fn buffered_storage_bits(cfg: &Config, buf: &BufferConfig, sizing: &CycleStats) -> u64 {
    let sdb = buf.sdb.unwrap_or(sizing.sdb_needed);
    let obuf = buf.obuf.unwrap_or(sizing.obuf_needed_bits).min(u32::MAX as u64) as u32;
    storage_bits(cfg, sdb, obuf).total
}

/// A row from a run's statistics, its cycle-mode figures and the needed sizes of its
/// sizing run (`sizing`; the run itself when it had unbounded buffers).
#[allow(clippy::too_many_arguments)]
pub(crate) fn sweep_row(
    program: &str,
    timing: &str,
    cfg: &Config,
    buffers: String,
    storage_bits: u64,
    s: &Stats,
    c: &CycleStats,
    sizing: &CycleStats,
) -> SweepRow {
    SweepRow {
        program: program.to_string(),
        config: cfg.to_string(),
        buffers,
        timing: timing.to_string(),
        exit_code: None,
        truncated: false,
        instructions: s.instructions,
        streams: s.streams,
        total_bits: s.total_bits,
        bits_per_instruction: s.bits_per_instruction,
        hr_sdc: s.hr_sdc,
        hr_lsp: s.hr_lsp,
        sdc_lookups: s.sdc_lookups,
        sdc_hits: s.sdc_hits,
        lsp_hits: s.lsp_hits,
        lsp_hit_bits: s.bits.lsp_hit,
        sdc_hit_bits: s.bits.sdc_hit,
        miss_bits: s.bits.miss,
        escape_bits: s.bits.escape,
        storage_bits,
        cycles: c.cycles,
        stall_cycles: c.stall_cycles,
        overflows: c.overflows,
        lost_instructions: c.lost_instructions,
        max_sdb: c.max_sdb,
        max_obuf_bits: c.max_obuf_bits,
        sdb_needed: sizing.sdb_needed,
        obuf_needed_bits: sizing.obuf_needed_bits,
    }
}

/// A capture's descriptors and their end cycles in separate arrays.
struct SplitCapture {
    descriptors: Vec<StreamDescriptor>,
    end_cycles: Vec<u64>,
    /// The unique-stream count every configuration reports.
    unique_streams: u64,
}

impl SplitCapture {
    fn new(c: &Capture) -> Self {
        let descriptors: Vec<StreamDescriptor> = c.descriptors.iter().map(|t| t.descriptor).collect();
        SplitCapture {
            unique_streams: count_unique_streams(&descriptors),
            end_cycles: c.descriptors.iter().map(|t| t.end_cycle).collect(),
            descriptors,
        }
    }
}

/// Run the jobs of one program's captures (`captures[i]` was cut with `max_sls[i]`).
/// `progress` is called with the number of descriptors replayed by each finished job.
pub fn sweep_program(
    captures: &[(u32, Capture)],
    plan: &SweepPlan,
    job_offset: usize,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<SweepRow>, String> {
    if let Some(c) = plan.configs.iter().find(|c| c.scheme == Scheme::Pft) {
        return Err(format!("{c}: pft works on retire events and cannot replay stream captures"));
    }
    let groups = sizing_groups(&plan.buffers);
    let jobs: Vec<Job> = plan
        .configs
        .iter()
        .enumerate()
        .filter(|(i, _)| (job_offset + i) % plan.shard.1 == plan.shard.0)
        .map(|(_, c)| Job { config: *c, groups: groups.clone() })
        .collect();
    // The captures as separate descriptor and end-cycle arrays (each job reads the
    // descriptors once to encode and the end cycles once per replay) and their unique-stream
    // count, once for all jobs.
    let split: Vec<SplitCapture> = captures.iter().map(|(_, c)| SplitCapture::new(c)).collect();
    let done = AtomicU64::new(0);
    let rows: Vec<Result<Vec<SweepRow>, String>> = jobs
        .par_iter()
        .map(|job| {
            if cancelled(&plan.cancel) {
                return Ok(Vec::new());
            }
            let (cap, split) = captures
                .iter()
                .zip(&split)
                .find(|((m, _), _)| *m == job.config.max_sl)
                .map(|((_, c), s)| (c, s))
                .ok_or_else(|| format!("no capture for maxsl={}", job.config.max_sl))?;
            if job.config.isa == IsaMode::ArmOnly && split.descriptors.iter().any(|d| d.sa & 1 == 1) {
                return Err(format!("{}: {} has isa=arm but the program runs Thumb code", cap.info.program, job.config));
            }
            let mut out_rows = Vec::new();
            // The encoder's work does not depend on buffers that never drop: encode once,
            // replay the encoding under every such setting.
            let Some((first_sizing, _)) = job.groups.first() else { return Ok(Vec::new()) };
            // (The first sizing run's sizes come from the encoding pass.)
            let first = cap.info.first_cycle;
            let (encoded, first_sizes) = EncodedStreams::with_needed_sizes(
                &job.config,
                &split.descriptors,
                split.unique_streams,
                first_sizing,
                first,
                &split.end_cycles,
            );
            let replay = |b: &BufferConfig| {
                if b.policy == FullPolicy::Stall || b.sdb.is_none() {
                    let ends = split.end_cycles.iter().copied();
                    CycleTraceModule::replay_encoded(&job.config, b, &encoded, cap.info.first_cycle, ends)
                } else {
                    replay(cap, &job.config, b)
                }
            };
            for (g, (unbounded, settings)) in job.groups.iter().enumerate() {
                // What the sizing run (unbounded buffers, which never drop) needs, from the
                // service times; the run itself only when a setting is at least that large.
                let (sdb_needed, obuf_needed_bits) = if g == 0 {
                    first_sizes
                } else {
                    encoded.needed_sizes(&job.config, unbounded, first, split.end_cycles.iter().copied())
                };
                let sizing = CycleStats { sdb_needed, obuf_needed_bits, ..Default::default() };
                let mut sizing_run = None;
                let mut replays = 1;
                for b in settings {
                    let fits = b.sdb.is_none_or(|d| d >= sdb_needed) && b.obuf.is_none_or(|o| o >= obuf_needed_bits);
                    if fits {
                        // Buffers at least the needed sizes behave exactly as unbounded ones
                        // (docs/trace-timing.md section 5): the sizing run is the row's.
                        let run = sizing_run.get_or_insert_with(|| {
                            replays += 1;
                            replay(unbounded)
                        });
                        out_rows.push(row(&cap.info, &job.config, b, run, &sizing));
                    } else {
                        let constrained = replay(b);
                        replays += 1;
                        out_rows.push(row(&cap.info, &job.config, b, &constrained, &sizing));
                    }
                }
                progress(cap.descriptors.len() as u64 * replays);
            }
            done.fetch_add(1, Ordering::Relaxed);
            Ok(out_rows)
        })
        .collect();
    let mut all = Vec::new();
    for r in rows {
        all.extend(r?);
    }
    Ok(all)
}

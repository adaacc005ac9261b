//! Verilator co-simulation: export the configuration's Verilog, build it with the C++ bench
//! of testbenches/cosim/harness.cpp, write the stimulus and the model's expectations, run
//! the bench and read its verdict.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use streamtrace_model::{BufferConfig, Config, RetireEvent};

use crate::config::HwConfig;
use crate::pft::PftHwConfig;
use crate::golden::{expected_run, Expected, Stimulus};
use crate::tools::require_tool;
use crate::verilog::export_verilog;

/// The bench's source, compiled into this crate so a build directory needs nothing else.
pub const HARNESS_CPP: &str = include_str!("../../testbenches/cosim/harness.cpp");

/// A waveform of a co-simulation: the file, its format and the module cycles it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Waveform {
    pub path: PathBuf,
    pub format: WaveFormat,
    /// First module cycle dumped (0: from reset).
    pub from: u64,
    /// Last module cycle dumped (inclusive; `u64::MAX`: to the end).
    pub to: u64,
}

/// Waveform file formats of the Verilated bench.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaveFormat {
    /// Value change dump (`--trace`): text, any viewer.
    Vcd,
    /// GTKWave's compressed Fast Signal Trace (`--trace-fst`): several times smaller.
    Fst,
}

impl WaveFormat {
    fn verilator_flag(self) -> &'static str {
        match self {
            WaveFormat::Vcd => "--trace",
            WaveFormat::Fst => "--trace-fst",
        }
    }

    fn bench_name(self) -> &'static str {
        match self {
            WaveFormat::Vcd => "bench_vcd",
            WaveFormat::Fst => "bench_fst",
        }
    }
}

/// What a co-simulation run found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every cycle agreed.
    Agree { cycles: u64, beats: u64, bits: u64, stalls: u64, cycles_per_second: u64 },
    /// The bench's first-mismatch line (cycle and both values).
    Mismatch(String),
}

/// Build (or reuse) the Verilated bench for `h` in `dir`, with waveform tracing in `wave`
/// format if given; returns the executable.
pub fn build_bench(h: &HwConfig, dir: &Path, wave: Option<WaveFormat>) -> Result<PathBuf, String> {
    build_bench_for(&h.module_name(), &export_verilog(h)?, false, dir, wave)
}

/// Build (or reuse) the bench for a module `name` whose Verilog is `verilog`; `pft_ports`:
/// the module has pft's `insn` and `next_pc` inputs.
pub fn build_bench_for(name: &str, verilog: &str, pft_ports: bool, dir: &Path, wave: Option<WaveFormat>) -> Result<PathBuf, String> {
    let mut extra = Vec::new();
    extra.extend(wave.map(WaveFormat::verilator_flag));
    if pft_ports {
        extra.extend(["-CFLAGS", "-DPFT_PORTS"]);
    }
    verilate(dir, name, verilog, HARNESS_CPP, wave.map_or("bench", WaveFormat::bench_name), &extra)
}

/// Verilator options for simulation speed (docs/performance.md): inline every module (rust-hdl
/// writes each flip-flop as a module, and the blocks' `always @(*)` feed each other) and
/// compile the model with -O2 instead of Verilator's default -Os. testbenches/cosim/Makefile
/// uses the same, and the same compiler choice ([`model_cxx`]).
pub const VERILATOR_SPEED_FLAGS: &[&str] = &["--flatten", "-MAKEFLAGS", "OPT_FAST=-O2 OPT_SLOW=-O1 OPT_GLOBAL=-O2"];

/// The C++ compiler of the Verilated model: `$STREAMTRACE_MODEL_CXX` when set (the Makefile's
/// `MODEL_CXX`), else `clang++` when it is installed (scripts/setup.sh installs it), else
/// `g++`, Verilator's default. clang 14 compiles rust-hdl's wide `always @(*)` blocks into a
/// model 1.8x as fast as g++ 12's (the SDC bench, 3.0 M against 1.7 M cycles/s; pft's 1.4x;
/// docs/performance.md).
pub fn model_cxx() -> String {
    if let Some(cxx) = std::env::var_os("STREAMTRACE_MODEL_CXX").filter(|v| !v.is_empty()) {
        return cxx.to_string_lossy().into_owned();
    }
    // Probed once per process (a cosim asks for the compiler for the build and its report).
    static CLANG: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let clang = *CLANG.get_or_init(|| Command::new("clang++").arg("--version").output().is_ok_and(|o| o.status.success()));
    if clang { "clang++" } else { "g++" }.to_string()
}

/// The Verilator arguments of a bench build after the fixed ones: the speed flags, the C++
/// compiler `cxx` and `extra`. They are stored beside the build, which is redone when they
/// change (a bench built by g++ is not reused once clang++ is installed).
fn build_args(cxx: &str, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = VERILATOR_SPEED_FLAGS.iter().map(|s| s.to_string()).collect();
    args.extend(["-MAKEFLAGS".to_string(), format!("CXX={cxx} LINK={cxx}")]);
    // clang warns about the doubled parentheses of Verilator's generated comparisons: noise
    // (testbenches/cosim/Makefile does the same).
    if cxx.contains("clang") {
        args.extend(["-CFLAGS".to_string(), "-Wno-parentheses-equality".to_string()]);
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

/// Verilate `verilog` (top module `name`) with the C++ bench `harness` into `dir/obj/exe_name`
/// (`extra`: more Verilator arguments); a build whose Verilog, bench and arguments are unchanged is
/// reused. Returns the executable. The module benches and the block benches share it.
pub fn verilate(dir: &Path, name: &str, verilog: &str, harness: &str, exe_name: &str, extra: &[&str]) -> Result<PathBuf, String> {
    require_tool("verilator")?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let vpath = dir.join(format!("{name}.v"));
    let cpp = dir.join("harness.cpp");
    let exe = dir.join("obj").join(exe_name);
    let args = build_args(&model_cxx(), extra);
    let args_path = dir.join(format!("{exe_name}.args"));
    let args_text = args.join("\n");
    // Rebuild only when the Verilog, the bench or the build arguments changed.
    let same = |p: &Path, text: &str| std::fs::read_to_string(p).is_ok_and(|t| t == text);
    if exe.exists() && same(&vpath, verilog) && same(&cpp, harness) && same(&args_path, &args_text) {
        return Ok(exe);
    }
    std::fs::write(&vpath, verilog).map_err(|e| format!("{}: {e}", vpath.display()))?;
    std::fs::write(&cpp, harness).map_err(|e| format!("{}: {e}", cpp.display()))?;
    // Written only after a successful build, so a failed one is never taken for current.
    let _ = std::fs::remove_file(&args_path);
    let out = Command::new("verilator")
        .current_dir(dir)
        .args(["--cc", "--exe", "--build", "-j", "2", "-O3", "--prefix", "Vtop", "--top-module", name])
        .args(["-Wno-fatal", "-Wno-lint", "-Wno-style", "-Wno-UNOPTFLAT", "-Mdir", "obj", "-o", exe_name])
        .args(&args)
        .arg(format!("{name}.v"))
        .arg("harness.cpp")
        .output()
        .map_err(|e| format!("running verilator: {e}"))?;
    if !out.status.success() || !exe.exists() {
        return Err(format!(
            "verilator build failed in {}:\n{}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr).lines().rev().take(20).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join("\n")
        ));
    }
    std::fs::write(&args_path, &args_text).map_err(|e| format!("{}: {e}", args_path.display()))?;
    Ok(exe)
}

/// Run a replay bench: `Ok(Ok(last line))` when it exits 0 (every cycle agreed),
/// `Ok(Err(last line))` at exit 1 (the first mismatch), `Err` when it could not run.
pub fn run_replay(exe: &Path, args: &[&Path]) -> Result<Result<String, String>, String> {
    let out = Command::new(exe).args(args).output().map_err(|e| format!("running {}: {e}", exe.display()))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().last().unwrap_or("").to_string();
    match out.status.code() {
        Some(0) => Ok(Ok(line)),
        Some(1) => Ok(Err(line)),
        _ => Err(format!("bench failed: {}{}", stdout.trim(), String::from_utf8_lossy(&out.stderr).trim())),
    }
}

/// The stimulus file: one retirement per line (see harness.cpp).
pub fn stimulus_text(stimuli: &[Stimulus]) -> String {
    let mut s = String::with_capacity(stimuli.len() * 24);
    s.push_str("# cycle valid pc class taken exception insn next_pc\n");
    for e in stimuli {
        let _ = writeln!(
            s,
            "{} 1 {:08x} {} {} {} {:08x} {:08x}",
            e.cycle, e.pc, e.class, e.taken as u8, e.exception as u8, e.insn, e.next_pc
        );
    }
    s
}

/// The expectation file: `C cycles`, `B cycle bits data` per beat, `S cycle` per stall.
pub fn expected_text(exp: &Expected) -> String {
    let mut s = String::with_capacity(exp.beats.len() * 16);
    let _ = writeln!(s, "C {}", exp.cycles);
    for b in &exp.beats {
        let _ = writeln!(s, "B {} {} {:x}", b.cycle, b.bits, b.data);
    }
    for c in &exp.stall_cycles {
        let _ = writeln!(s, "S {c}");
    }
    s
}

/// Run a built bench on stimulus and expectation files (and write `wave`: the bench must
/// have been built for its format).
pub fn run_bench(exe: &Path, stimulus: &Path, expected: &Path, wave: Option<&Waveform>) -> Result<Verdict, String> {
    let window: Vec<PathBuf> = wave.map_or(Vec::new(), |w| vec![PathBuf::from(w.from.to_string()), PathBuf::from(w.to.to_string())]);
    let mut args = vec![stimulus, expected];
    if let Some(w) = wave {
        args.push(w.path.as_path());
        args.extend(window.iter().map(PathBuf::as_path));
    }
    match run_replay(exe, &args)? {
        Ok(line) => {
            let field = |key: &str| -> u64 {
                line.split_whitespace()
                    .find_map(|kv| kv.strip_prefix(key).and_then(|v| v.strip_prefix('=')))
                    .and_then(|v| v.parse::<f64>().ok())
                    .map_or(0, |v| v as u64)
            };
            Ok(Verdict::Agree {
                cycles: field("cycles"),
                beats: field("beats"),
                bits: field("bits"),
                stalls: field("stalls"),
                cycles_per_second: field("cycles_per_second"),
            })
        }
        Err(line) => Ok(Verdict::Mismatch(line)),
    }
}

/// Expectations from the model for `events` (edited by `tamper` if given: tests use it to
/// show that a wrong expectation is caught), and the stimulus and expectation files written
/// into `dir`; returns their paths. Shared by the Verilator and Icarus flows.
pub fn write_run_files(
    h: &HwConfig,
    events: &[(RetireEvent, u64)],
    dir: &Path,
    tamper: Option<&dyn Fn(&mut Expected)>,
) -> Result<(PathBuf, PathBuf), String> {
    write_run_files_for(&h.model, &h.buffers, events, dir, tamper)
}

/// As [`write_run_files`] for any configuration and buffers.
pub fn write_run_files_for(
    cfg: &Config,
    buffers: &BufferConfig,
    events: &[(RetireEvent, u64)],
    dir: &Path,
    tamper: Option<&dyn Fn(&mut Expected)>,
) -> Result<(PathBuf, PathBuf), String> {
    let mut exp = expected_run(cfg, buffers, events).map_err(|e| format!("model: {e}"))?;
    if let Some(t) = tamper {
        t(&mut exp);
    }
    let stimuli: Vec<Stimulus> = events.iter().map(|(e, c)| Stimulus::from_event(e, *c)).collect();
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let stim_path = dir.join("stimulus.txt");
    let exp_path = dir.join("expected.txt");
    std::fs::write(&stim_path, stimulus_text(&stimuli)).map_err(|e| format!("{}: {e}", stim_path.display()))?;
    std::fs::write(&exp_path, expected_text(&exp)).map_err(|e| format!("{}: {e}", exp_path.display()))?;
    Ok((stim_path, exp_path))
}

/// The whole flow for a run of events with their retire cycles: expectations from the
/// model (a model error stops before the build), files in `dir`, build, run.
pub fn cosimulate(
    h: &HwConfig,
    events: &[(RetireEvent, u64)],
    dir: &Path,
    wave: Option<&Waveform>,
    tamper: Option<&dyn Fn(&mut Expected)>,
) -> Result<Verdict, String> {
    let (stim_path, exp_path) = write_run_files(h, events, dir, tamper)?;
    let exe = build_bench(h, dir, wave.map(|w| w.format))?;
    run_bench(&exe, &stim_path, &exp_path, wave)
}

/// The same flow for a pft module.
pub fn cosimulate_pft(
    h: &PftHwConfig,
    events: &[(RetireEvent, u64)],
    dir: &Path,
    wave: Option<&Waveform>,
    tamper: Option<&dyn Fn(&mut Expected)>,
) -> Result<Verdict, String> {
    let (stim_path, exp_path) = write_run_files_for(&h.model, &h.buffers, events, dir, tamper)?;
    let exe = build_bench_for(&h.module_name(), &crate::pft::export_verilog(h)?, true, dir, wave.map(|w| w.format))?;
    run_bench(&exe, &stim_path, &exp_path, wave)
}

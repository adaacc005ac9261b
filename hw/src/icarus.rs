//! Icarus Verilog co-simulation: a second, independent simulator for the exported Verilog.
//! The bench of testbenches/icarus/tb.v reads the same stimulus and expectation files as
//! the Verilator bench (cosim.rs, testbenches/cosim/harness.cpp), applies the same
//! schedule and compares the trace port, `stall` and `trace_done` every cycle.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use streamtrace_model::RetireEvent;

use crate::config::HwConfig;
use crate::cosim::{write_run_files, write_run_files_for, Verdict};
use crate::golden::Expected;
use crate::pft::PftHwConfig;
use crate::tools::require_tool;
use crate::verilog::export_verilog;

/// The bench's source, compiled into this crate so a build directory needs nothing else.
pub const TB_V: &str = include_str!("../../testbenches/icarus/tb.v");

/// Build (or reuse) the Icarus simulation of `h` in `dir`; returns the compiled `sim.vvp`.
pub fn build_icarus(h: &HwConfig, dir: &Path) -> Result<PathBuf, String> {
    build_icarus_for(&h.module_name(), &export_verilog(h)?, false, dir)
}

/// Build (or reuse) the Icarus simulation of module `name` whose Verilog is `verilog`;
/// `pft_ports`: the module has pft's `insn` and `next_pc` inputs.
pub fn build_icarus_for(name: &str, verilog: &str, pft_ports: bool, dir: &Path) -> Result<PathBuf, String> {
    require_tool("iverilog")?;
    require_tool("vvp")?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let vpath = dir.join(format!("{name}.v"));
    let tb = dir.join("tb.v");
    let vvp = dir.join("sim.vvp");
    let same = |p: &Path, text: &str| std::fs::read_to_string(p).is_ok_and(|t| t == text);
    if vvp.exists() && same(&vpath, verilog) && same(&tb, TB_V) {
        return Ok(vvp);
    }
    let _ = std::fs::remove_file(&vvp);
    std::fs::write(&vpath, verilog).map_err(|e| format!("{}: {e}", vpath.display()))?;
    std::fs::write(&tb, TB_V).map_err(|e| format!("{}: {e}", tb.display()))?;
    let defines: &[&str] = if pft_ports { &["-DPFT_PORTS"] } else { &[] };
    let out = Command::new("iverilog")
        .current_dir(dir)
        .args(["-g2005", &format!("-DTOP={name}"), "-s", "tb", "-o", "sim.vvp", "tb.v"])
        .args(defines)
        .arg(format!("{name}.v"))
        .output()
        .map_err(|e| format!("running iverilog: {e}"))?;
    if !out.status.success() || !vvp.exists() {
        let err = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = err.lines().collect();
        return Err(format!(
            "iverilog build failed in {}:\n{}",
            dir.display(),
            lines[lines.len().saturating_sub(20)..].join("\n")
        ));
    }
    Ok(vvp)
}

/// Icarus runs the exports at a few thousand cycles per second; a run slower than this
/// (plus [`START_UP_SECONDS`]) has stopped advancing and is stopped (see [`run_icarus`]).
pub const MIN_CYCLES_PER_SECOND: u64 = 200;
/// Time allowed on top of the cycles for `vvp` to start and read the files.
pub const START_UP_SECONDS: u64 = 30;

/// Run a compiled simulation on stimulus and expectation files (`vcd`: dump a waveform).
/// The bench's verdict is its last `AGREE`/`MISMATCH` line; `cycles_per_second` is measured
/// here over the whole `vvp` run (start-up and file reading included).
///
/// A design whose combinational blocks keep re-triggering each other never leaves a time
/// step under an event-driven simulator; the run is stopped after the time that
/// [`MIN_CYCLES_PER_SECOND`] allows for the expectation's cycles and reported as an error
/// naming the cycle it was stuck in.
pub fn run_icarus(vvp: &Path, stimulus: &Path, expected: &Path, vcd: Option<&Path>) -> Result<Verdict, String> {
    require_tool("vvp")?;
    let exp_text = std::fs::read_to_string(expected).map_err(|e| format!("{}: {e}", expected.display()))?;
    let exp_cycles = exp_text
        .lines()
        .find_map(|l| l.strip_prefix("C ").and_then(|c| c.trim().parse::<u64>().ok()))
        .ok_or_else(|| format!("{}: no C line", expected.display()))?;
    let limit = Duration::from_secs(START_UP_SECONDS + exp_cycles / MIN_CYCLES_PER_SECOND);
    let mut cmd = Command::new("vvp");
    cmd.arg("-n").arg(vvp);
    cmd.arg(plusarg("stimulus", stimulus)?).arg(plusarg("expected", expected)?).arg("+progress");
    if let Some(v) = vcd {
        cmd.arg(plusarg("vcd", v)?);
    }
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd.spawn().map_err(|e| format!("running vvp {}: {e}", vvp.display()))?;
    let drain = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut buf);
            }
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out_reader = drain(child.stdout.take().map(|r| Box::new(r) as Box<dyn Read + Send>));
    let err_reader = drain(child.stderr.take().map(|r| Box::new(r) as Box<dyn Read + Send>));
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if start.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                timed_out = true;
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(format!("waiting for vvp: {e}")),
        }
    };
    let secs = start.elapsed().as_secs_f64();
    let stdout = out_reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    let at = stdout
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("AT cycle="))
        .map_or_else(|| "before cycle 0".to_string(), |c| format!("in module cycle {c}"));
    if timed_out {
        return Err(format!(
            "icarus bench: no verdict after {} s for {} cycles; the simulation stopped advancing {at} \
             (a zero-delay loop between combinational blocks?)",
            limit.as_secs(),
            exp_cycles + 1
        ));
    }
    let verdict = stdout.lines().rev().find(|l| l.starts_with("AGREE ") || l.starts_with("MISMATCH "));
    match verdict {
        Some(line) if line.starts_with("MISMATCH ") => Ok(Verdict::Mismatch(line.to_string())),
        Some(line) => {
            let field = |key: &str| -> Result<u64, String> {
                line.split_whitespace()
                    .find_map(|kv| kv.strip_prefix(key).and_then(|v| v.strip_prefix('=')))
                    .and_then(|v| v.parse::<u64>().ok())
                    .ok_or_else(|| format!("icarus bench: no {key}= in `{line}`"))
            };
            let cycles = field("cycles")?;
            Ok(Verdict::Agree {
                cycles,
                beats: field("beats")?,
                bits: field("bits")?,
                stalls: field("stalls")?,
                cycles_per_second: if secs > 0.0 { (cycles as f64 / secs) as u64 } else { 0 },
            })
        }
        None => {
            let text: Vec<&str> = stdout.lines().filter(|l| !l.starts_with("AT cycle=")).collect();
            Err(format!(
                "icarus bench failed (status {:?}, {at}): {}{}",
                status.and_then(|s| s.code()),
                text.join("\n").trim(),
                stderr.trim()
            ))
        }
    }
}

/// `+key=path` for the bench's `$value$plusargs` (its file-name registers hold 1024 bytes).
fn plusarg(key: &str, path: &Path) -> Result<String, String> {
    let p = path.to_str().ok_or_else(|| format!("{}: not a UTF-8 path", path.display()))?;
    if p.len() > 1000 {
        return Err(format!("{p}: path too long for the bench (1000 bytes)"));
    }
    Ok(format!("+{key}={p}"))
}

/// The whole flow, as [`crate::cosim::cosimulate`] for Verilator: expectations from the
/// model (optionally edited by `tamper`), stimulus and expectation files in `dir`, build,
/// run.
pub fn cosimulate_icarus(
    h: &HwConfig,
    events: &[(RetireEvent, u64)],
    dir: &Path,
    vcd: Option<&Path>,
    tamper: Option<&dyn Fn(&mut Expected)>,
) -> Result<Verdict, String> {
    let (stim_path, exp_path) = write_run_files(h, events, dir, tamper)?;
    let vvp = build_icarus(h, dir)?;
    run_icarus(&vvp, &stim_path, &exp_path, vcd)
}

/// The same flow against the module's **iCE40 netlist**: Yosys `synth_ice40` maps the export
/// to LUT4s, carries, flip-flops and block RAMs, and Icarus simulates those cells with
/// Yosys's own models of them, so what synthesis made of the RTL (the tables' block-RAM
/// inference and read-during-write behaviour included) is checked against the model every
/// cycle. Gate-level simulation runs at a few hundred cycles per second: keep `events` short.
pub fn cosimulate_icarus_ice40(h: &HwConfig, events: &[(RetireEvent, u64)], dir: &Path) -> Result<Verdict, String> {
    let (stim_path, exp_path) = write_run_files(h, events, dir, None)?;
    let name = h.module_name();
    let rtl = dir.join(format!("{name}.rtl.v"));
    std::fs::write(&rtl, export_verilog(h)?).map_err(|e| format!("{}: {e}", rtl.display()))?;
    let netlist = dir.join(format!("{name}.ice40.v"));
    crate::tools::ice40_netlist(&rtl, &name, &netlist)?;
    let cells = std::fs::read_to_string(&netlist).map_err(|e| format!("{}: {e}", netlist.display()))?;
    // The models' default port assignments are SystemVerilog; the netlist connects every port.
    let text = format!("`define NO_ICE40_DEFAULT_ASSIGNMENTS\n{cells}\n{}", crate::tools::ice40_cell_models()?);
    let vvp = build_icarus_for(&name, &text, false, &dir.join("gate-level"))?;
    run_icarus(&vvp, &stim_path, &exp_path, None)
}

/// The same flow for a pft module (the bench built with `-DPFT_PORTS`).
pub fn cosimulate_icarus_pft(
    h: &PftHwConfig,
    events: &[(RetireEvent, u64)],
    dir: &Path,
    vcd: Option<&Path>,
    tamper: Option<&dyn Fn(&mut Expected)>,
) -> Result<Verdict, String> {
    let (stim_path, exp_path) = write_run_files_for(&h.model, &h.buffers, events, dir, tamper)?;
    let vvp = build_icarus_for(&h.module_name(), &crate::pft::export_verilog(h)?, true, dir)?;
    run_icarus(&vvp, &stim_path, &exp_path, vcd)
}

//! Simulation speed with the XScale timing model, next to the functional simulator and
//! qemu-arm on the same ELF in the same run: `cargo bench -p streamtrace-sim --bench timing`.
//!
//! Per program: functional MIPS (no hook, no timing), timing MIPS (timing model on, no hook),
//! timing + trace MIPS (timing model feeding the trace module's cycle mode, rsdc-32x4-128
//! with the paper's buffers: the whole pipeline an architect's run uses) and QEMU MIPS (translated mode, no logging, start-up included), each the median of
//! `STREAMTRACE_BENCH_RUNS` (5) runs, with the ratios timing/functional and timing/QEMU, and the CPI the model
//! computes. The simulator is timed on thread CPU time where the system provides it (the
//! machine is shared: wall time moves by 10-15 % with other jobs), QEMU on wall time.
//! Arguments: program names to run (default: all); `timing-only` / `functional-only` / `traced-only`
//! run one mode alone (for profiling; `traced-only` is timing + trace module).

use std::process::Command;
use std::time::Instant;

use streamtrace_isa::ElfImage;
use streamtrace_model::{BufferConfig, CycleTraceModule};
use streamtrace_sim::{CycleModuleHook, Machine, NoHook, TimingConfig};

/// Runs per measurement (median); `STREAMTRACE_BENCH_RUNS` overrides (e.g. 1 under a profiler).
fn runs() -> usize {
    std::env::var("STREAMTRACE_BENCH_RUNS").ok().and_then(|v| v.parse().ok()).filter(|&n| n > 0).unwrap_or(5)
}

#[path = "support/programs.rs"]
mod support;
use support::{median, programs_dir, qemu_seconds, quiet_semihost};

/// Seconds this thread has run on a CPU (/proc/thread-self/schedstat, nanoseconds).
fn thread_cpu_seconds() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    Some(s.split_whitespace().next()?.parse::<u64>().ok()? as f64 * 1e-9)
}

/// A stopwatch on thread CPU time when the system has it, else on wall time.
struct Stopwatch {
    wall: Instant,
    cpu: Option<f64>,
}

impl Stopwatch {
    fn start() -> Self {
        Stopwatch { wall: Instant::now(), cpu: thread_cpu_seconds() }
    }

    fn seconds(&self) -> f64 {
        let wall = self.wall.elapsed().as_secs_f64();
        match (self.cpu, thread_cpu_seconds()) {
            // The kernel updates the figure at scheduler ticks: short runs read wall time.
            (Some(a), Some(b)) if b - a >= 0.01 => b - a,
            _ => wall,
        }
    }
}


/// (instructions, seconds, CPI when timed). `trace`: the retire events (with their timed
/// retire cycles) go through the trace module's cycle mode.
fn run_sim(elf: &ElfImage, cmdline: &str, timing: bool, trace: bool) -> (u64, f64, f64) {
    let mut m = Machine::for_elf(elf, quiet_semihost(cmdline));
    if timing {
        m.enable_timing(TimingConfig::default()).expect("default configuration is valid");
    }
    let t = Stopwatch::start();
    if trace {
        let cfg = "rsdc-32x4-128".parse().unwrap();
        let mut hook = CycleModuleHook::new(CycleTraceModule::new(&cfg, &BufferConfig::default()));
        m.run(u64::MAX, &mut hook).expect("test programs exit cleanly");
        std::hint::black_box(hook.finish().expect("retire cycles increase"));
    } else {
        m.run(u64::MAX, &mut NoHook).expect("test programs exit cleanly");
    }
    let secs = t.seconds();
    let cpi = m.timing_report().map_or(0.0, |r| r.cpi);
    (m.retired, secs, cpi)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let timing_only = args.iter().any(|a| a == "timing-only");
    let functional_only = args.iter().any(|a| a == "functional-only");
    let traced_only = args.iter().any(|a| a == "traced-only");
    let only: Vec<String> =
        args.into_iter().filter(|a| !a.starts_with('-') && !a.ends_with("-only")).collect();
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(programs_dir().join("programs.json")).unwrap()).unwrap();
    let qemu = !timing_only && !functional_only && !traced_only && Command::new("qemu-arm").arg("--version").output().is_ok();
    let clock = if thread_cpu_seconds().is_some() { "thread CPU time" } else { "wall time" };
    let runs = runs();
    println!("medians of {runs} runs; MIPS = millions of simulated instructions per second");
    println!("simulator on {clock}; QEMU on wall time, its start-up included");
    println!(
        "{:<14} {:>11} {:>9} {:>9} {:>8} {:>9} {:>9} {:>8} {:>6}",
        "program", "instrs", "func", "timing", "tim/fn", "tim+trc", "qemu", "tim/qemu", "CPI"
    );
    let (mut n_all, mut s_func, mut s_tim, mut s_trc, mut s_qemu) = (0u64, 0f64, 0f64, 0f64, 0f64);
    for prog in manifest["programs"].as_array().unwrap() {
        let name = prog["name"].as_str().unwrap();
        if !only.is_empty() && !only.iter().any(|o| o == name) {
            continue;
        }
        let elf = ElfImage::open(programs_dir().join(prog["elf"].as_str().unwrap())).unwrap();
        let cmdline = prog["cmdline"].as_str().unwrap();
        // Interleave the two modes so that load changes on the machine hit both alike.
        let (mut func, mut tim, mut trc) = (Vec::new(), Vec::new(), Vec::new());
        let (mut insns, mut cpi) = (0, 0.0);
        if traced_only {
            let t: Vec<f64> = (0..runs).map(|_| run_sim(&elf, cmdline, true, true)).map(|(n, s, c)| {
                insns = n;
                cpi = c;
                s
            }).collect();
            println!("{name:<14} {insns:>11} {:>9} {:>9} {:>8} {:>9.1} {:>9} {:>8} {cpi:>6.2}", "-", "-", "-", insns as f64 / median(t) / 1e6, "-", "-");
            continue;
        }
        for _ in 0..runs {
            if !timing_only {
                let (n, s, _) = run_sim(&elf, cmdline, false, false);
                func.push(s);
                insns = n;
            }
            if functional_only {
                continue;
            }
            let (n, s, c) = run_sim(&elf, cmdline, true, false);
            assert!(timing_only || n == insns, "{name}: timing changed the instruction count");
            tim.push(s);
            if !timing_only {
                trc.push(run_sim(&elf, cmdline, true, true).1);
            }
            insns = n;
            cpi = c;
        }
        let mips = |s: f64| insns as f64 / s / 1e6;
        if functional_only {
            println!("{name:<14} {insns:>11} {:>9.1}", mips(median(func)));
            continue;
        }
        let tim = median(tim);
        if timing_only {
            println!("{name:<14} {insns:>11} {:>9} {:>9.1} {:>8} {:>9} {:>8} {cpi:>6.2}", "-", mips(tim), "-", "-", "-");
            continue;
        }
        let func = median(func);
        let trc = median(trc);
        n_all += insns;
        s_func += func;
        s_tim += tim;
        s_trc += trc;
        let (q, r) = if qemu {
            let q = median((0..runs).map(|_| qemu_seconds(prog)).collect());
            s_qemu += q;
            (format!("{:.1}", mips(q)), format!("{:.3}", q / tim))
        } else {
            ("-".into(), "-".into())
        };
        println!(
            "{name:<14} {insns:>11} {:>9.1} {:>9.1} {:>8.2} {:>9.1} {q:>9} {r:>8} {cpi:>6.2}",
            mips(func),
            mips(tim),
            func / tim,
            mips(trc)
        );
    }
    if timing_only || functional_only || traced_only {
        return;
    }
    let all = |s: f64| n_all as f64 / s / 1e6;
    println!(
        "{:<14} {:>11} {:>9.1} {:>9.1} {:>8.2} {:>9.1} {:>9} {:>8}",
        "all",
        n_all,
        all(s_func),
        all(s_tim),
        s_func / s_tim,
        all(s_trc),
        if s_qemu > 0.0 { format!("{:.1}", all(s_qemu)) } else { "-".into() },
        if s_qemu > 0.0 { format!("{:.3}", s_qemu / s_tim) } else { "-".into() }
    );
    println!("(tim/fn = timing MIPS / functional MIPS; tim+trc = timing model and trace module cycle mode; tim/qemu = timing MIPS / QEMU MIPS)");
}

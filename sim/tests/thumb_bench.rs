//! Micro-benchmark of the Thumb executor (ignored by default; run in release):
//!   cargo test --release -p streamtrace-sim --test thumb_bench -- --ignored --nocapture
//! The loop is `bench` in tests/data/thumb_programs.s (10 instructions: ALU, shift,
//! load, store, hi-register MOV/CMP, Bcc) run 10M times, and `calls` (BL pair, PUSH,
//! LDR sp, POP {pc}, Bcc). The rate is given per second of this thread's CPU time
//! (/proc/thread-self/schedstat) as well as of wall time: on a loaded machine the wall
//! figure says more about the other processes.

mod thumb_common;
use std::time::Instant;
use streamtrace_sim::{Bus, Flow, NoHook, SimError};
use thumb_common::*;

const ITERS: u32 = 10_000_000;

/// CPU time of this thread in seconds (0 if the kernel does not report it).
fn cpu_time() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|t| t.parse::<u64>().ok()))
        .map_or(0.0, |ns| ns as f64 * 1e-9)
}

struct Timer(Instant, f64);

impl Timer {
    fn start() -> Timer {
        Timer(Instant::now(), cpu_time())
    }

    fn report(self, what: &str, insns: u64) {
        let (wall, cpu) = (self.0.elapsed().as_secs_f64(), cpu_time() - self.1);
        let rate = |s: f64| insns as f64 / s / 1e6;
        println!("{what}: {insns} instructions, {:.1} M instr/s of CPU time ({cpu:.3} s), {:.1} M instr/s wall ({wall:.3} s)", rate(cpu), rate(wall));
    }
}

#[test]
#[ignore]
fn bench_machine_loop() {
    for (sym, per_iter, end) in [("bench", 10, "bkpt 0x0001"), ("calls", 8, "bkpt 0x0002")] {
        let mut m = machine();
        load_listing(&mut m, PROGRAMS_LST);
        m.cpu.r[15] = symbol(PROGRAMS_LST, sym);
        m.cpu.r[5] = DATA;
        m.cpu.r[6] = ITERS;
        let t = Timer::start();
        let e = m.run(u64::MAX, &mut NoHook).unwrap_err();
        t.report(&format!("machine loop, `{sym}`"), m.retired);
        let end = line(PROGRAMS_LST, end).addr;
        assert_eq!(e, SimError::UnhandledException { pc: end, what: "prefetch abort" });
        assert_eq!(m.retired, per_iter * ITERS as u64, "the faulting BKPT does not retire");
    }
}

#[test]
#[ignore]
fn bench_executor_only() {
    let mut m = machine();
    load_listing(&mut m, PROGRAMS_LST);
    m.cpu.r[15] = symbol(PROGRAMS_LST, "bench");
    m.cpu.r[5] = DATA;
    m.cpu.r[6] = ITERS;
    let mut log = Vec::new();
    let mut n = 0u64;
    let t = Timer::start();
    loop {
        let pc = m.cpu.r[15];
        let hw = m.mem.read16(pc).unwrap();
        let mut bus = Bus::new(&mut m.mem, &mut log, false);
        match streamtrace_sim::thumb::execute(&mut m.cpu, &mut bus, hw).unwrap() {
            Flow::Next => m.cpu.r[15] = pc + 2,
            Flow::Jump => {}
            _ => break,
        }
        n += 1;
    }
    t.report("executor only (fetch + execute), `bench`", n);
    assert_eq!(n, 10 * ITERS as u64);
}

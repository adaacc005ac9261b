//! Micro-benchmark of the ARM executor through the whole machine loop (ignored by default):
//!
//! ```text
//! cargo test --release -p streamtrace-sim --test arm_bench -- --ignored --nocapture
//! ```
//!
//! A 10-instruction loop (ALU, shifts, load, store, multiply-accumulate, compare, branch) runs
//! 10 M times; the test prints instructions per second for `Machine::run` with `NoHook` and
//! for `arm::execute` alone. The non-ignored test checks the loop computes what it should.

mod arm_support;

use std::time::Instant;

/// CPU time of this thread in seconds (from /proc, 10 ms resolution): the rate per CPU
/// second is less sensitive to a loaded machine than the wall-clock rate.
fn thread_cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default();
    // Fields after the parenthesised command: state is field 3; utime, stime are 14, 15.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<f64> = rest.split_whitespace().map(|x| x.parse().unwrap_or(0.0)).collect();
    if f.len() > 13 {
        (f[11] + f[12]) / 100.0
    } else {
        f64::NAN
    }
}

use arm_support::*;
use streamtrace_sim::{Bus, Flow, Machine, NoHook};

const LOOP: [u32; 11] = [
    0xe2800001, /* add r0, r0, #1 */
    0xe0211180, /* eor r1, r1, r0, lsl #3 */
    0xe51d2004, /* ldr r2, [sp, #-4] */
    0xe50d1008, /* str r1, [sp, #-8] */
    0xe0233190, /* mla r3, r0, r1, r3 */
    0xe1b04121, /* movs r4, r1, lsr #2 */
    0xe0455004, /* sub r5, r5, r4 */
    0xe1877002, /* orr r7, r7, r2 */
    0xe1500006, /* cmp r0, r6 */
    0x1afffff5, /* bne .-36 */
    0xe7f000f0, /* .inst 0xe7f000f0 @ udf #0: stops the run */
];

fn bench_machine(iterations: u32) -> Machine {
    let mut m = machine(&LOOP);
    m.cpu.r[6] = iterations;
    m
}

#[test]
fn loop_computes() {
    let mut m = bench_machine(100);
    let n = 10 * 100;
    run(&mut m, n);
    assert_eq!(m.cpu.r[0], 100);
    assert_eq!(m.cpu.r[15], CODE + 40, "falls through to the udf");
    // r1 = r1 ^ (r0 << 3) for r0 = 1..=100, checked against a direct computation.
    let (mut r1, mut r3, mut r5) = (0u32, 0u32, 0u32);
    for r0 in 1..=100u32 {
        r1 ^= r0 << 3;
        r3 = r3.wrapping_add(r0.wrapping_mul(r1));
        r5 = r5.wrapping_sub(r1 >> 2);
    }
    assert_eq!((m.cpu.r[1], m.cpu.r[3], m.cpu.r[5]), (r1, r3, r5));
    assert_eq!(m.mem.read32(STACK_TOP - 8).unwrap(), r1);
}

#[test]
#[ignore]
fn arm_loop_speed() {
    let iterations = 10_000_000;
    let mut m = bench_machine(iterations);
    let (t, cpu0) = (Instant::now(), thread_cpu_seconds());
    let r = m.run(u64::MAX, &mut NoHook);
    let (dt, dcpu) = (t.elapsed().as_secs_f64(), thread_cpu_seconds() - cpu0);
    assert!(matches!(r, Err(streamtrace_sim::SimError::Undefined { .. })), "{r:?}");
    let n = m.retired;
    assert_eq!(n, 10 * iterations as u64, "the final udf does not retire");
    println!(
        "machine loop: {n} instructions in {dt:.3} s = {:.1} M instr/s ({:.1} M per CPU second)",
        n as f64 / dt / 1e6,
        n as f64 / dcpu / 1e6
    );

    // The executor alone: fetch from a slice, no classification, no retire events.
    let mut m = bench_machine(iterations);
    let mut log = Vec::new();
    let (t, cpu0) = (Instant::now(), thread_cpu_seconds());
    let mut n = 0u64;
    loop {
        let pc = m.cpu.r[15];
        let word = LOOP[((pc - CODE) / 4) as usize];
        if pc == CODE + 40 {
            break;
        }
        let mut bus = Bus::new(&mut m.mem, &mut log, false);
        match streamtrace_sim::arm::execute(&mut m.cpu, &mut bus, word).unwrap() {
            Flow::Next => m.cpu.r[15] = pc + 4,
            Flow::Jump => {}
            f => panic!("{f:?}"),
        }
        n += 1;
    }
    let (dt, dcpu) = (t.elapsed().as_secs_f64(), thread_cpu_seconds() - cpu0);
    println!(
        "execute alone: {n} instructions in {dt:.3} s = {:.1} M instr/s ({:.1} M per CPU second)",
        n as f64 / dt / 1e6,
        n as f64 / dcpu / 1e6
    );
}

//! The whole pft trace module against the model's cycle mode (docs/trace-timing.md 7),
//! every cycle: the RustHDL simulation and the exported Verilog in Verilator, on test
//! program traces, under the stall and drop policies, with periodic syncs; the export lints
//! clean. A corrupted expectation must be caught.

mod common;

use std::path::PathBuf;

use streamtrace_hw::cosim::{cosimulate_pft, Verdict};
use streamtrace_hw::golden::{expected_run, Expected};
use streamtrace_hw::pft::{compare_with_model, export_verilog, PftHwConfig};
use streamtrace_hw::tools::verilator_lint;
use common::program_events;
use streamtrace_model::RetireEvent;


fn hw(cfg: &str, buffers: &str) -> PftHwConfig {
    PftHwConfig::new(&cfg.parse().unwrap(), &buffers.parse().unwrap()).unwrap()
}

fn dir(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("hw-pft-cosim").join(name)
}

/// Stall cycles, overflows and port bits the model expects: the runs below must exercise
/// what they claim to.
fn expected(h: &PftHwConfig, ev: &[(RetireEvent, u64)]) -> Expected {
    expected_run(&h.model, &h.buffers, ev).unwrap()
}

#[test]
fn rusthdl_module_equals_the_model_every_cycle() {
    let qsort = program_events("qsort_structs", 12_000);
    let thumb = program_events("sha256_thumb", 12_000);
    // A sync after every instruction: every job has a start word, and those with an
    // exception or a missed target two (trace-timing.md 7, version 1.5).
    let short = program_events("bitcount", 1_500);
    for (cfg, buffers, ev) in [
        ("pft", "", &qsort),
        ("pft,sync=1", "sdb=2,obuf=80", &short),
        ("pft,sync=1", "sdb=3,obuf=40,policy=drop", &short),
        ("pft", "sdb=1,obuf=40", &thumb),
        ("pft,sync=3000", "sdb=1,obuf=40,policy=drop", &qsort),
        ("pft,hlen=none,ras=0,itp=0,itt=0,rtc=0", "port=4,ratio=2", &thumb),
    ] {
        let h = hw(cfg, buffers);
        let a = compare_with_model(&h, ev).unwrap_or_else(|m| panic!("{cfg} {buffers}: {m}"));
        assert!(a.bits > 500, "{cfg} {buffers}: {} bits", a.bits);
    }
}

#[test]
fn verilated_module_equals_the_model_on_program_traces() {
    let runs = [
        ("pft", "", "dijkstra", 300_000u64),
        ("pft", "", "sha256_thumb", 200_000),
        ("pft", "sdb=1,obuf=40", "qsort_structs", 200_000),
        ("pft,sync=20000", "sdb=1,obuf=40,policy=drop", "adpcm", 200_000),
        ("pft,isa=arm", "port=2", "bitcount", 200_000),
    ];
    let mut stalls = 0;
    let mut overflows = 0;
    for (cfg, buffers, prog, n) in runs {
        let h = hw(cfg, buffers);
        let ev = program_events(prog, n);
        let exp = expected(&h, &ev);
        stalls += exp.stall_cycles.len();
        overflows += exp.stats.overflows;
        let d = dir(&format!("{}-{prog}", h.module_name()));
        match cosimulate_pft(&h, &ev, &d, None, None).unwrap() {
            Verdict::Agree { bits, cycles, .. } => {
                assert_eq!(bits, exp.trace.bit_len, "{cfg} {buffers} {prog}");
                assert!(cycles as usize >= ev.len(), "{cfg} {buffers} {prog}: {cycles} cycles");
            }
            Verdict::Mismatch(m) => panic!("{cfg} {buffers} {prog}: {m}"),
        }
    }
    assert!(stalls > 0, "the runs include stall cycles");
    assert!(overflows > 0, "the runs include overflows");
}

#[test]
fn a_corrupted_expectation_is_caught() {
    let h = hw("pft", "");
    let ev = program_events("crc32", 30_000);
    let flip = |e: &mut Expected| {
        let b = e.beats.len() / 2;
        e.beats[b].data ^= 1 << (h.buffers.port - 1);
    };
    match cosimulate_pft(&h, &ev, &dir("tamper"), None, Some(&flip)).unwrap() {
        Verdict::Mismatch(m) => assert!(m.contains("port"), "{m}"),
        v => panic!("a flipped bit went unnoticed: {v:?}"),
    }
}

#[test]
fn exports_lint_clean() {
    for (cfg, buffers) in [
        ("pft", ""),
        ("pft,hlen=none,ras=0,itp=0,itt=0,rtc=0", ""),
        ("pft,sync=1000,isa=arm", "policy=drop"),
        // One target table of the two.
        ("pft,itp=0,ttag=15,rtc=1", ""),
        ("pft,itt=0", ""),
    ] {
        let h = hw(cfg, buffers);
        let d = dir("lint");
        std::fs::create_dir_all(&d).unwrap();
        let path = d.join(format!("{}.v", h.module_name()));
        std::fs::write(&path, export_verilog(&h).unwrap()).unwrap();
        let warnings = verilator_lint(&path, &h.module_name()).unwrap();
        assert!(warnings.is_empty(), "{cfg}: {}", warnings.join("\n"));
    }
}

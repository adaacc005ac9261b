//! The pft range coder block alone: its Verilog, linted by Verilator, and Verilated against
//! the model's bytes for random operation sequences (testbenches/cosim/pft_coder_harness.cpp),
//! including a deliberately wrong expectation that the bench must catch.
//! Needs Verilator: without it the tests fail with the install command.

use std::path::PathBuf;

use streamtrace_hw::pft::coder::{
    build_bench, export_verilog, model_outputs, random_stims, run_bench, straddling_stims, vectors_text, CoderStim,
};
use streamtrace_hw::pft::PftHwConfig;
use streamtrace_hw::tools::verilator_lint;
use streamtrace_model::BufferConfig;

fn hw(cfg: &str) -> PftHwConfig {
    PftHwConfig::new(&cfg.parse().unwrap(), &BufferConfig::default()).unwrap()
}

fn dir(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("pft-coder").join(name)
}

#[test]
fn pft_coder_verilog_lints_clean() {
    let configs = [
        ("pft", "pft_coder"),
        ("pft,rate=1,hlen=3-8-20-50", "pft_coder_t4"),
        ("pft,hlen=1-2-4-8-16-32-48-64", "pft_coder_t8"),
    ];
    for (cfg, name) in configs {
        let d = dir("lint");
        std::fs::create_dir_all(&d).unwrap();
        let path = d.join(format!("{name}.v"));
        std::fs::write(&path, export_verilog(&hw(cfg), name).unwrap()).unwrap();
        let lines = verilator_lint(&path, name).unwrap();
        assert!(lines.is_empty(), "{cfg}: {}", lines.join("\n"));
    }
}

/// The Verilated block replays random and pending-limit sequences with the model's bytes
/// as expectations: 0 mismatches; then one corrupted expected byte must be reported at its
/// vector line.
#[test]
fn pft_coder_verilated_agrees_and_a_broken_expectation_fails() {
    for (cfg, name, seed) in [("pft", "pft_coder", 21), ("pft,rate=8,hlen=3-8-20-50", "pft_coder_t4", 22)] {
        let h = hw(cfg);
        let d = dir(name);
        let exe = build_bench(&h, name, &d).unwrap();
        let mut stims = random_stims(&h, seed, 200_000);
        stims.extend(straddling_stims(&h, seed, 20_000).unwrap());
        let mut outs = model_outputs(&h, &stims);
        let vectors = d.join("vectors.txt");
        std::fs::write(&vectors, vectors_text(&stims, &outs)).unwrap();
        let summary = run_bench(&exe, &vectors).unwrap().unwrap_or_else(|m| panic!("{cfg}: {m}"));
        let ops = stims.iter().filter(|s| matches!(s, CoderStim::Op(_))).count();
        let bytes: usize = outs.iter().map(Vec::len).sum();
        assert_eq!(summary, format!("OK cycles={} ops={ops} bytes={bytes}", stims.len()), "{cfg}");
        eprintln!("{cfg}: {summary}");

        // One wrong expected byte (the second of a multi-byte output): line 1 is the header.
        let at = (stims.len() / 3..).find(|&i| outs[i].len() >= 2).unwrap();
        outs[at][1] ^= 0x01;
        let bad = d.join("vectors_bad.txt");
        std::fs::write(&bad, vectors_text(&stims, &outs)).unwrap();
        match run_bench(&exe, &bad).unwrap() {
            Err(m) => assert!(m.starts_with(&format!("MISMATCH line={} cycle={at} ", at + 2)), "{m}"),
            Ok(s) => panic!("{cfg}: a wrong expectation passed: {s}"),
        }
    }
}

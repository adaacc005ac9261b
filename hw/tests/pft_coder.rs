//! The pft range coder block alone: its Verilog, linted by Verilator, and Verilated against
//! the model's bytes for random operation sequences (testbenches/cosim/pft_coder_harness.cpp),
//! including a deliberately wrong expectation that the bench must catch.
//! Needs Verilator: without it the tests fail with the install command.

use std::path::PathBuf;

use streamtrace_hw::pft::coder::{
    build_bench, export_verilog, random_stims, run_bench, schedule, straddling_stims, vectors_text, CoderStim,
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

/// The Verilated block replays random and pending-limit sequences, with held cycles, with
/// the model's `busy` and bytes as expectations: 0 mismatches; then one corrupted expected
/// byte, and one wrong `busy`, must be reported at their vector lines.
#[test]
fn pft_coder_verilated_agrees_and_a_broken_expectation_fails() {
    for (cfg, name, seed) in [("pft", "pft_coder", 21), ("pft,rate=8,hlen=3-8-20-50", "pft_coder_t4", 22)] {
        let h = hw(cfg);
        let d = dir(name);
        let exe = build_bench(&h, name, &d).unwrap();
        let mut stims = random_stims(&h, seed, 200_000);
        stims.extend(straddling_stims(&h, seed, 20_000));
        let mut cycles = schedule(&h, &stims, seed, 9);
        let vectors = d.join("vectors.txt");
        std::fs::write(&vectors, vectors_text(&cycles)).unwrap();
        let summary = run_bench(&exe, &vectors).unwrap().unwrap_or_else(|m| panic!("{cfg}: {m}"));
        let ops = stims.iter().filter(|s| matches!(s, CoderStim::Op(_))).count();
        let bytes = cycles.iter().filter(|c| c.byte.is_some()).count();
        assert_eq!(summary, format!("OK cycles={} ops={ops} bytes={bytes}", cycles.len()), "{cfg}");
        eprintln!("{cfg}: {summary}");

        // One wrong expected byte, then one wrong busy flag: line 1 is the header.
        let at = (cycles.len() / 3..).find(|&i| cycles[i].byte.is_some()).unwrap();
        let good = cycles[at];
        cycles[at].byte = good.byte.map(|b| b ^ 0x01);
        let busy_at = (cycles.len() / 2..).find(|&i| cycles[i].busy).unwrap();
        for (i, wrong) in [(at, cycles.clone()), (busy_at, {
            let mut c = cycles.clone();
            c[at] = good;
            c[busy_at].busy = false;
            c
        })] {
            let bad = d.join("vectors_bad.txt");
            std::fs::write(&bad, vectors_text(&wrong)).unwrap();
            match run_bench(&exe, &bad).unwrap() {
                Err(m) => assert!(m.starts_with(&format!("MISMATCH line={} cycle={i} ", i + 2)), "{m}"),
                Ok(s) => panic!("{cfg}: a wrong expectation passed: {s}"),
            }
        }
    }
}

//! End-to-end tests of `streamtrace wet` (issue 7) on the built binary: build a WET of a
//! test program (tier 1 and tier 2 files), its statistics, and every query against what
//! `streamtrace run` reports of the same run; bad inputs give clear errors.

mod common;

use std::path::Path;

use common::{exits, fails, ok, programs_dir, streamtrace_in};
use tempfile::TempDir;

#[test]
fn build_stats_and_queries_agree_with_the_run() {
    let tmp = TempDir::new().unwrap();
    let dir = programs_dir();
    let pcs = tmp.path().join("pcs.txt");
    ok(&streamtrace_in(&dir, &["run", "--pc-trace", pcs.to_str().unwrap(), "--addr-format", "plain", "bin/tiny.elf"]));
    let expected: Vec<String> = std::fs::read_to_string(&pcs).unwrap().lines().map(|l| l.trim().to_string()).collect();
    for tier in ["1", "2"] {
        let wet = tmp.path().join(format!("tiny{tier}.wet"));
        let w = wet.to_str().unwrap();
        let out = ok(&streamtrace_in(&dir, &["wet", "build", "bin/tiny.elf", "-o", w, "--tier", tier, "--json"]));
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["counts"]["instructions"].as_u64(), Some(expected.len() as u64), "tier {tier}");
        assert!(v["bits"]["stored"]["timestamps"].as_u64().unwrap() > 0);
        let stats = ok(&streamtrace_in(&dir, &["wet", "stats", w]));
        assert!(stats.contains("total"), "{stats}");

        let fwd = ok(&streamtrace_in(&dir, &["wet", "query", w, "cf", "--forward"]));
        let got: Vec<String> = fwd.lines().map(|l| l.split_whitespace().next().unwrap().to_string()).collect();
        assert_eq!(got, expected, "tier {tier}: forward control flow against run --pc-trace");
        let back = ok(&streamtrace_in(&dir, &["wet", "query", w, "cf", "--backward", "--limit", "100"]));
        let got: Vec<String> = back.lines().map(|l| l.split_whitespace().next().unwrap().to_string()).collect();
        let mut rev = expected.clone();
        rev.reverse();
        assert_eq!(got, rev[..100], "tier {tier}: backward control flow");

        // The most executed load of the run: its values and addresses, one line per instance.
        let load_pc = most_executed_load(&dir, w);
        let loads = ok(&streamtrace_in(&dir, &["wet", "query", w, "loads", &load_pc]));
        let addrs = ok(&streamtrace_in(&dir, &["wet", "query", w, "addrs", &load_pc]));
        assert!(loads.lines().count() > 1, "{load_pc}: {loads}");
        assert_eq!(loads.lines().count(), addrs.lines().count());
        let n = expected.iter().filter(|p| format!("0x{p}") == load_pc).count();
        assert_eq!(loads.lines().count(), n, "instances of {load_pc}");

        let slice = ok(&streamtrace_in(&dir, &["wet", "query", w, "slice", &load_pc, "--instance", "1", "--json"]));
        let s: serde_json::Value = serde_json::from_str(&slice).unwrap();
        let items = s["slice"].as_array().unwrap();
        assert!(items.len() > 1, "a load depends on something: {slice}");
        assert!(items.iter().any(|i| i["pc"].as_str().unwrap().starts_with(&load_pc[2..])), "the criterion is in its slice");
    }
}

/// The address of the most executed instruction that loads a register from memory.
fn most_executed_load(dir: &Path, wet: &str) -> String {
    let fwd = ok(&streamtrace_in(dir, &["wet", "query", wet, "cf", "--forward"]));
    let mut counts = std::collections::HashMap::new();
    for l in fwd.lines() {
        *counts.entry(l.split_whitespace().next().unwrap().to_string()).or_insert(0u32) += 1;
    }
    let mut by_count: Vec<(u32, String)> = counts.into_iter().map(|(pc, n)| (n, pc)).collect();
    by_count.sort_unstable_by(|a, b| b.cmp(a));
    for (_, pc) in by_count {
        let pc = format!("0x{pc}");
        let out = ok(&streamtrace_in(dir, &["wet", "query", wet, "loads", &pc]));
        if out.lines().next().is_some_and(|l| l.split_whitespace().count() > 1) {
            return pc;
        }
    }
    panic!("no load in the run");
}

#[test]
fn bad_inputs_give_clear_errors() {
    let tmp = TempDir::new().unwrap();
    let dir = programs_dir();
    fails(&streamtrace_in(&dir, &["wet", "build", "-o", "/dev/null", "no/such.elf"]), "no such program");
    let o = streamtrace_in(&dir, &["wet", "build", "bin/tiny.elf", "5", "-o", "x.wet"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.code() == Some(2) && err.contains("options go before the program"), "usage error: {err}");
    let junk = tmp.path().join("junk.wet");
    std::fs::write(&junk, b"not a wet file at all").unwrap();
    fails(&streamtrace_in(&dir, &["wet", "stats", junk.to_str().unwrap()]), "bad magic");
    // A real file cut short: the error names a byte offset.
    let wet = tmp.path().join("t.wet");
    ok(&streamtrace_in(&dir, &["wet", "build", "bin/tiny.elf", "-o", wet.to_str().unwrap()]));
    let bytes = std::fs::read(&wet).unwrap();
    let cut = tmp.path().join("cut.wet");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    fails(&streamtrace_in(&dir, &["wet", "query", cut.to_str().unwrap(), "cf", "--forward"]), "byte ");
    // Cut or with one bit flipped (in a value stream, in the middle), the file is refused by
    // `stats` and `query` alike, naming the file and the trailer's offset (docs/wet.md 7.1):
    // a flip used to load, `stats` exited 0 and `query` failed without a file or offset.
    let c = cut.to_str().unwrap();
    let cut_at = format!("cut.wet: WET file, byte {}: no WEND trailer at the end", bytes.len() / 2);
    exits(&streamtrace_in(&dir, &["wet", "stats", c]), 1, &[&cut_at]);
    let mut flipped = bytes.clone();
    flipped[bytes.len() / 2] ^= 0x10;
    let flip = tmp.path().join("flip.wet");
    std::fs::write(&flip, &flipped).unwrap();
    let f = flip.to_str().unwrap();
    let at = format!("flip.wet: WET file, byte {}: file CRC", bytes.len() - 4);
    exits(&streamtrace_in(&dir, &["wet", "stats", f]), 1, &[&at, "the file is damaged"]);
    exits(&streamtrace_in(&dir, &["wet", "query", f, "cf", "--forward"]), 1, &[&at, "the file is damaged"]);
    fails(&streamtrace_in(&dir, &["wet", "query", wet.to_str().unwrap(), "slice", "0x4"]), "no instruction at 0x4");
    // Bad command lines are usage errors: exit 2.
    for (args, needle) in [(&["loads", "xyz"][..], "not a hexadecimal"), (&["cf"][..], "--forward or --backward")] {
        let o = streamtrace_in(&dir, &[&["wet", "query", wet.to_str().unwrap()][..], args].concat());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.code() == Some(2) && err.contains(needle) && !err.contains("panicked"), "{:?}: {err}", o.status);
    }
}

/// `report wet` takes minutes on every program: a line per finished program on stderr, none
/// with `-q`.
#[test]
fn report_wet_shows_progress_unless_quiet() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let args = ["report", "wet", "--program", "tiny", "--max-insns", "20000", "--slices", "2", "--json"];
    let out = streamtrace_in(root, &args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && err.contains("report wet: [1/1] tiny ("), "{err}");
    let mut quiet = args.to_vec();
    quiet.push("-q");
    let out = streamtrace_in(root, &quiet);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("report wet:"), "{}", String::from_utf8_lossy(&out.stderr));
}

//! `streamtrace sweep` and `merge` end to end on the test programs (capped runs): rows,
//! tables, plots, capture reuse, shards that merge into the unsharded result, bad input.

use std::path::Path;
use std::process::{Command, Output};

use tempfile::TempDir;

fn streamtrace(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_streamtrace"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .expect("run streamtrace")
}

#[track_caller]
fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[track_caller]
fn fails(o: &Output, needle: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains(needle), "expected failure with '{needle}', got {:?}: {err}", o.status.code());
    assert!(!err.contains("panicked"), "{err}");
}

const CONFIGS: &str = "fbase;nexs;bsdc-8x4-32;bsdc-16x4-64;bsdc-64x4-256;bsdc-16x1-16;esdc-32x4-128;rsdc-32x4-128";

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn sweep(caps: &Path, extra: &[&str]) -> String {
    let mut args = vec![
        "sweep",
        "--configs",
        CONFIGS,
        "--max-insns",
        "150000",
        "--capture-dir",
        p(caps),
        "-j",
        "2",
    ];
    args.extend_from_slice(extra);
    ok(&streamtrace(&args))
}

#[test]
fn sweep_writes_rows_tables_and_plots_and_reuses_captures() {
    let dir = TempDir::new().unwrap();
    let caps = dir.path().join("caps");
    let csv = dir.path().join("r.csv");
    let json = dir.path().join("r.json");
    let tables = dir.path().join("tables");
    let plots = dir.path().join("plots");
    let out = sweep(&caps, &["-o", p(&csv), "--json", p(&json), "--tables", p(&tables), "--plot", p(&plots)]);
    assert!(out.contains("Table 3") && out.contains("Table 8") && out.contains("Average"), "{out}");
    let text = std::fs::read_to_string(&csv).unwrap();
    let programs = 14;
    assert_eq!(text.lines().count(), 1 + programs * 8, "{text}");
    // Every row: positive bits, hit rates in [0, 1], needed SDB >= 1.
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let n = f.len();
        let bpi: f64 = f[n - 19].parse().unwrap();
        assert!(bpi > 0.0, "{line}");
    }
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["rows"].as_array().unwrap().len(), programs * 8);
    assert_eq!(doc["averages"].as_array().unwrap().len(), 8);
    for id in ["table3", "table4", "table6", "table7", "table8", "buffers"] {
        for ext in ["txt", "csv", "md"] {
            assert!(tables.join(format!("{id}.{ext}")).is_file(), "{id}.{ext}");
        }
    }
    for name in ["fig5-sdc-size", "fig6-schemes", "fig7-storage"] {
        let png = std::fs::read(plots.join(format!("{name}.png"))).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        let svg = std::fs::read_to_string(plots.join(format!("{name}.svg"))).unwrap();
        assert!(svg.contains("<svg") && svg.contains("bits/ins"), "{name}");
    }
    // Captures: one per program (one maxsl), reused by a second sweep without rewriting.
    let stamp = |d: &Path| -> Vec<(String, std::time::SystemTime)> {
        let mut v: Vec<_> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap())
            .map(|e| (e.file_name().to_string_lossy().into_owned(), e.metadata().unwrap().modified().unwrap()))
            .collect();
        v.sort();
        v
    };
    let before = stamp(&caps);
    assert_eq!(before.len(), programs);
    let csv2 = dir.path().join("r2.csv");
    sweep(&caps, &["-o", p(&csv2), "-q"]);
    assert_eq!(stamp(&caps), before);
    assert!(std::fs::read_to_string(&csv2).unwrap() == text, "a second sweep over the same captures differs");
}

#[test]
fn shards_merge_into_the_unsharded_result() {
    let dir = TempDir::new().unwrap();
    let caps = dir.path().join("caps");
    let whole = dir.path().join("whole.csv");
    sweep(&caps, &["-o", p(&whole), "-q", "--sdb", "1,2", "--port-widths", "1,2"]);
    let mut parts = Vec::new();
    for k in 1..=3 {
        let part = dir.path().join(format!("part{k}.csv"));
        let shard = format!("{k}/3");
        sweep(&caps, &["-o", p(&part), "-q", "--shard", &shard, "--sdb", "1,2", "--port-widths", "1,2"]);
        parts.push(part);
    }
    let merged = dir.path().join("merged.csv");
    let json_part = dir.path().join("part3.json");
    // One shard as JSON: merge reads both forms.
    sweep(&caps, &["--json", p(&json_part), "-q", "--shard", "3/3", "--sdb", "1,2", "--port-widths", "1,2"]);
    ok(&streamtrace(&["merge", p(&parts[0]), p(&parts[1]), p(&json_part), "-o", p(&merged), "-q"]));
    let whole_text = std::fs::read_to_string(&whole).unwrap();
    assert_eq!(whole_text.lines().count(), 1 + 14 * 8 * 4);
    let merged_text = std::fs::read_to_string(&merged).unwrap();
    let diff = whole_text.lines().zip(merged_text.lines()).position(|(a, b)| a != b);
    assert!(merged_text == whole_text, "merged CSV differs from the unsharded one at line {diff:?}");
    // A row in two inputs is an error, as is a malformed line.
    fails(&streamtrace(&["merge", p(&parts[0]), p(&parts[0])]), "more than one input");
    let bad = dir.path().join("bad.csv");
    let broken = whole_text.replacen(",ipc1,", ",ipc1,x", 1);
    std::fs::write(&bad, broken).unwrap();
    fails(&streamtrace(&["merge", p(&bad)]), "bad.csv:2:");
}

#[test]
fn sweep_bad_arguments_fail_clearly() {
    let dir = TempDir::new().unwrap();
    let caps = dir.path().join("caps");
    let c = p(&caps);
    fails(&streamtrace(&["sweep", "--capture-dir", c, "--shard", "3/2"]), "1 <= k <= N");
    fails(&streamtrace(&["sweep", "--capture-dir", c, "--configs", "qsdc-8x4-32"]), "qsdc");
    fails(&streamtrace(&["sweep", "--capture-dir", c, "--buffers", "sdb=0"]), "at least 1");
    fails(&streamtrace(&["sweep", "--capture-dir", c, "--obuf", "80,x"]), "--obuf x");
    fails(&streamtrace(&["sweep", "--capture-dir", c, "--programs", "/nonexistent.elf"]), "no such program");
    fails(
        &streamtrace(&["sweep", "--capture-dir", c, "--configs", "rsdc-32x4-128,isa=arm", "--programs", "testbenches/programs/bin/sha256_thumb.elf", "--max-insns", "20000"]),
        "isa=arm",
    );
}

/// pft needs retire events: `sweep` refuses it by name and points at `report schemes`, which
/// runs it (beside any other scheme) from one functional run per program.
#[test]
fn report_schemes_runs_pft_beside_the_others_and_sweep_refuses_it() {
    let dir = TempDir::new().unwrap();
    fails(
        &streamtrace(&["sweep", "--configs", "rsdc-32x4-128;pft,ras=4", "--max-insns", "1000", "--capture-dir", p(dir.path())]),
        "pft,ras=4: pft has no cycle mode yet",
    );
    let plots = dir.path().join("plots");
    let out = ok(&streamtrace(&[
        "report",
        "schemes",
        "--configs",
        "rsdc-32x4-128;pft-sizes",
        "--program",
        "tiny",
        "--program",
        "crc32",
        "--max-insns",
        "300000",
        "--plot",
        p(&plots),
        "--tables",
        p(&dir.path().join("tables")),
        "--json",
    ]));
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    let summary = j["summary"].as_array().unwrap();
    assert_eq!(summary.len(), 6, "rSDC and the five pft sizes");
    let bits = |c: &str| summary.iter().find(|s| s["config"] == c).unwrap()["bits_per_instruction"].as_f64().unwrap();
    assert!(bits("pft") < bits("rsdc-32x4-128") / 3.0, "pft {} rsdc {}", bits("pft"), bits("rsdc-32x4-128"));
    assert_eq!(summary.iter().find(|s| s["config"] == "pft").unwrap()["storage_bits"], 4986);
    let programs = j["programs"].as_array().unwrap();
    assert_eq!(programs.len(), 2);
    assert!(programs.iter().any(|p| p["program"] == "crc32" && p["complete"] == false), "crc32 is capped");
    let pft = &programs[0]["results"].as_array().unwrap().iter().find(|r| r["config"] == "pft").unwrap()["pft"];
    assert!(pft["direction_points"].as_u64().unwrap() > 100);
    for f in ["schemes-pareto.svg", "schemes-pareto.png", "fig6-schemes.svg"] {
        assert!(std::fs::metadata(plots.join(f)).unwrap().len() > 1000, "{f}");
    }
    // Table 8 of the sweep, with a pft column beside rSDC's.
    let t8 = std::fs::read_to_string(dir.path().join("tables/table8.md")).unwrap();
    let header = t8.lines().find(|l| l.starts_with("| Program")).unwrap();
    assert!(header.contains("rSDC-LSP [32x4,128]") && header.ends_with("| pft |"), "{header}");
    assert!(t8.lines().any(|l| l.starts_with("| crc32 |")), "{t8}");
    // The text form: the summary and the per-program table with pft first.
    let text = ok(&streamtrace(&["report", "schemes", "--configs", "pft;gzip-1", "--program", "tiny"]));
    assert!(text.contains("Bits/instruction program by program") && text.contains("direction hit rate"), "{text}");
    assert!(text.contains("2 configurations"), "`pft` is one configuration, not a preset: {text}");
    fails(&streamtrace(&["report", "schemes", "--configs", "pft,maxsl=9"]), "does not apply to pft");
    fails(&streamtrace(&["report", "schemes", "--program", "nosuch"]), "--program nosuch");
}

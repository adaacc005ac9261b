//! `streamtrace sweep` and `merge` end to end on the test programs (capped runs): rows,
//! tables, plots, capture reuse, shards that merge into the unsharded result, bad input,
//! failing and truncated programs, metadata, SIGINT, JSON types.

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

const CONFIGS: &str = "fbase;nexs;bsdc-8x4-32;bsdc-16x4-64;bsdc-64x4-256;bsdc-16x1-16;esdc-32x4-128;rsdc-32x4-128;pft";
/// Configurations in CONFIGS.
const NCONFIGS: usize = 9;

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
        // Every program is cut at the cap above.
        "--allow-failures",
    ];
    args.extend_from_slice(extra);
    ok(&streamtrace(&args))
}

/// The CSV without its `#` metadata lines.
fn body(csv: &str) -> String {
    csv.lines().filter(|l| !l.starts_with('#')).map(|l| format!("{l}\n")).collect()
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
    let text = body(&std::fs::read_to_string(&csv).unwrap());
    let programs = 14;
    assert_eq!(text.lines().count(), 1 + programs * NCONFIGS, "{text}");
    // Every row: positive bits, hit rates in [0, 1], needed SDB >= 1.
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let n = f.len();
        let bpi: f64 = f[n - 19].parse().unwrap();
        assert!(bpi > 0.0, "{line}");
    }
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["rows"].as_array().unwrap().len(), programs * NCONFIGS);
    assert_eq!(doc["averages"].as_array().unwrap().len(), NCONFIGS);
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
        // The footnote: timing mode, cap, version.
        let note = format!("timing ipc1 | cap 150,000 instructions (13 programs cut) | sdb=2,obuf=80,port=1 | streamtrace {}", env!("CARGO_PKG_VERSION"));
        assert!(svg.contains(&note), "{name}: no footnote '{note}'");
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
    assert!(body(&std::fs::read_to_string(&csv2).unwrap()) == text, "a second sweep over the same captures differs");
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
    let whole_file = std::fs::read_to_string(&whole).unwrap();
    let whole_text = body(&whole_file);
    assert_eq!(whole_text.lines().count(), 1 + 14 * NCONFIGS * 4);
    let merged_file = std::fs::read_to_string(&merged).unwrap();
    let merged_text = body(&merged_file);
    let diff = whole_text.lines().zip(merged_text.lines()).position(|(a, b)| a != b);
    assert!(merged_text == whole_text, "merged CSV differs from the unsharded one at line {diff:?}");
    // The merge's metadata: its own command, the shards' cap and timing, its sources.
    assert!(merged_file.contains("# command: ") && merged_file.contains(" merge "), "{merged_file}");
    assert!(merged_file.contains("# max_insns: 150000\n# partial: false\n"), "{merged_file}");
    assert!(merged_file.contains(&format!("# source: {}\n", p(&json_part))), "{merged_file}");
    assert!(!merged_file.contains("# shard:") && whole_file.lines().all(|l| !l.starts_with("# shard:")));
    // Shards of sweeps with different caps do not merge.
    let other = dir.path().join("other.csv");
    std::fs::write(&other, std::fs::read_to_string(&parts[1]).unwrap().replace("# max_insns: 150000", "# max_insns: 9")).unwrap();
    fails(&streamtrace(&["merge", p(&parts[0]), p(&other)]), "max_insns 9 differ");
    // A row in two inputs is an error, as is a malformed line.
    fails(&streamtrace(&["merge", p(&parts[0]), p(&parts[0])]), "more than one input");
    let bad = dir.path().join("bad.csv");
    let broken = whole_file.replacen(",ipc1,", ",ipc1,x", 1);
    std::fs::write(&bad, broken).unwrap();
    let first_row = whole_file.lines().position(|l| l.contains(",ipc1,")).unwrap() + 1;
    fails(&streamtrace(&["merge", p(&bad)]), &format!("bad.csv:{first_row}: exit_code = 'x"));
}

/// A program that exits with a non-zero status or is cut at the cap: rows with `exit_code`
/// and `truncated`, a warning naming it, exit 1 unless `--allow-failures`.
#[test]
fn failing_and_truncated_programs_are_flagged_and_fail_the_sweep() {
    let dir = TempDir::new().unwrap();
    let caps = dir.path().join("caps");
    let csv = dir.path().join("r.csv");
    let json = dir.path().join("r.json");
    // From the repository root, crc32 cannot open data/lorem.txt and exits with status 2;
    // the arguments come after the ELF in the comma list.
    let programs = "testbenches/programs/bin/crc32.elf data/lorem.txt 12,testbenches/programs/bin/tiny.elf";
    let args = ["sweep", "--programs", programs, "--configs", "fbase;bsdc-8x4-32", "--capture-dir", p(&caps), "-q", "-o", p(&csv), "--json", p(&json)];
    let o = streamtrace(&args);
    fails(&o, "--allow-failures accepts them");
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("warning: crc32 data/lorem.txt 12 exited with status 2"), "{err}");
    assert!(!err.contains("warning: tiny"), "{err}");
    // The rows are written all the same.
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.lines().any(|l| l.starts_with("crc32 data/lorem.txt 12,fbase,") && l.contains(",ipc1,2,false,")), "{text}");
    assert!(text.lines().any(|l| l.starts_with("tiny,fbase,") && l.contains(",ipc1,0,false,")), "{text}");
    let mut allowed = args.to_vec();
    allowed.push("--allow-failures");
    ok(&streamtrace(&allowed));
    // Cut at the cap: truncated, no exit code (empty in CSV, null in JSON).
    let mut capped = args.to_vec();
    capped[2] = "testbenches/programs/bin/tiny.elf";
    capped.extend(["--max-insns", "1000"]);
    let o = streamtrace(&capped);
    fails(&o, "tiny stopped at the --max-insns limit after 1000 instructions");
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.lines().any(|l| l.starts_with("tiny,fbase,") && l.contains(",ipc1,,true,1000,")), "{text}");
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let row = &doc["rows"][0];
    assert!(row["exit_code"].is_null() && row["truncated"] == true, "{row}");
}

/// A manifest's `exit_code` is the status expected of its program (busybox `cmp -l` of two
/// different files exits 1): that status is no failure, and another one (0 included) is.
#[test]
fn the_manifest_exit_code_is_the_expected_status() {
    let dir = TempDir::new().unwrap();
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("testbenches/programs/bin");
    let manifest = dir.path().join("programs.json");
    let entry = |name: &str, elf: &str, cmdline: &str, code: i32| {
        serde_json::json!({"name": name, "elf": bin.join(elf), "cmdline": cmdline, "exit_code": code})
    };
    let doc = serde_json::json!({"programs": [
        entry("crc32_missing", "crc32.elf", "crc32.elf no-such-file.txt 1", 2),
        entry("tiny", "tiny.elf", "tiny.elf", 0),
    ]});
    std::fs::write(&manifest, doc.to_string()).unwrap();
    let caps = dir.path().join("caps");
    let args = ["sweep", "--programs", p(&manifest), "--configs", "fbase", "--capture-dir", p(&caps), "-q"];
    let o = streamtrace(&args);
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("warning"), "{err}");
    let doc = serde_json::json!({"programs": [entry("tiny", "tiny.elf", "tiny.elf", 1)]});
    std::fs::write(&manifest, doc.to_string()).unwrap();
    let o = streamtrace(&args);
    fails(&o, "warning: tiny exited with status 0 after");
    assert!(String::from_utf8_lossy(&o.stderr).contains("(its manifest records 1)"), "{}", String::from_utf8_lossy(&o.stderr));
}

/// Metadata as `#` lines in the CSV and `meta` in the JSON; every number of the JSON a JSON
/// number, table cells included; custom-key configurations in the `others` table; storage
/// of unbounded buffers counted at the needed size.
#[test]
fn outputs_carry_metadata_numbers_and_every_configuration() {
    let dir = TempDir::new().unwrap();
    let caps = dir.path().join("caps");
    let csv = dir.path().join("r.csv");
    let json = dir.path().join("r.json");
    let out = ok(&streamtrace(&[
        "sweep", "--programs", "testbenches/programs/bin/tiny.elf", "--configs", "esdc-64x4-256,repl=lru", "--max-insns", "150000",
        "--capture-dir", p(&caps), "--obuf", "40,inf", "--sdb", "1", "--shard", "1/1", "-o", p(&csv), "--json", p(&json),
    ]));
    assert!(out.contains("Other configurations") && out.contains("esdc-64x4-256,repl=lru"), "{out}");
    let text = std::fs::read_to_string(&csv).unwrap();
    let meta: Vec<&str> = text.lines().take_while(|l| l.starts_with('#')).collect();
    let value = |key: &str| meta.iter().find_map(|l| l.strip_prefix(&format!("# {key}: "))).unwrap_or_else(|| panic!("no {key} in {meta:?}"));
    assert!(value("command").contains(" sweep --programs testbenches/programs/bin/tiny.elf --configs esdc-64x4-256,repl=lru "), "{meta:?}");
    assert_eq!(value("version"), env!("CARGO_PKG_VERSION"));
    assert_eq!(value("timing"), "ipc1");
    assert_eq!(value("max_insns"), "150000");
    assert_eq!(value("shard"), "1/1");
    assert_eq!(value("partial"), "false");
    let date = value("date");
    assert!(date.len() == 20 && date.starts_with("20") && date.ends_with('Z'), "{date}");
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["meta"]["max_insns"], 150000);
    assert_eq!(doc["meta"]["date"], date);
    assert_eq!(doc["meta"]["partial"], false);
    // Rows: storage of obuf=inf is the needed buffer's, above the 40-bit one's.
    let rows = doc["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    let storage = |obuf: &str| rows.iter().find(|r| r["buffers"].as_str().unwrap().contains(obuf)).unwrap()["storage_bits"].as_u64().unwrap();
    let needed = rows[0]["obuf_needed_bits"].as_u64().unwrap();
    assert!(needed > 40);
    assert_eq!(storage("obuf=inf"), storage("obuf=40,") - 40 + needed);
    // Tables: numbers are numbers, a missing value null, text text.
    let tables = doc["tables"].as_array().unwrap();
    let others = tables.iter().find(|t| t["id"] == "others").unwrap();
    let cells = &others["rows"][0][1];
    assert!(cells[0].is_f64() && cells[1].is_f64(), "{others}");
    let buffers = tables.iter().find(|t| t["id"] == "buffers").unwrap();
    let cells = &buffers["rows"][0][1];
    assert!(cells[0].is_string() && cells[1].is_u64() && cells[5].is_u64(), "{buffers}");
    let rows_ok = rows.iter().all(|r| r["bits_per_instruction"].is_f64() && r["total_bits"].is_u64());
    assert!(rows_ok, "{rows:?}");
}

/// SIGINT: the rows of finished jobs are written, marked partial, exit 130, no half capture.
#[cfg(unix)]
#[test]
fn an_interrupted_sweep_writes_its_rows_marked_partial() {
    let dir = TempDir::new().unwrap();
    let caps = dir.path().join("caps");
    let csv = dir.path().join("r.csv");
    let json = dir.path().join("r.json");
    // tiny finishes at once; bitcount with 10^8 iterations would run for hours.
    let child = Command::new(env!("CARGO_BIN_EXE_streamtrace"))
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("testbenches/programs"))
        .args(["sweep", "--programs", "bin/tiny.elf,bin/bitcount.elf 100000000", "--configs", "fbase;bsdc-8x4-32"])
        .args(["--capture-dir", p(&caps), "-q", "-o", p(&csv), "--json", p(&json)])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Programs run in order: once bitcount's capture is being written, tiny's rows are done.
    let start = std::time::Instant::now();
    while !std::fs::read_dir(&caps).is_ok_and(|d| d.filter_map(|e| e.ok()).any(|e| e.file_name().to_string_lossy().starts_with("bitcount"))) {
        assert!(start.elapsed().as_secs() < 120, "bitcount's capture never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // SAFETY: sends a signal to our own child.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) }, 0);
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted") && !err.contains("panicked"), "{err}");
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.contains("# partial: true\n"), "{text}");
    let rows: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).skip(1).collect();
    assert_eq!(rows.len(), 2, "{text}");
    assert!(rows.iter().all(|r| r.starts_with("tiny,")), "{text}");
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["meta"]["partial"], true);
    assert_eq!(doc["rows"].as_array().unwrap().len(), 2);
    // The cut capture is gone; tiny's complete one stays.
    let left: Vec<String> = std::fs::read_dir(&caps).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(left.len() == 1 && left[0].starts_with("tiny-") && left[0].ends_with(".stcap"), "{left:?}");
}

#[test]
fn merge_help_describes_every_option() {
    let help = ok(&streamtrace(&["merge", "--help"]));
    for (option, words) in [("-o, --output", "CSV"), ("--json", "JSON"), ("--tables", "tables"), ("--plot", "plots"), ("-q, --quiet", "print")] {
        let line = help.lines().find(|l| l.trim_start().starts_with(option)).unwrap_or_else(|| panic!("{option}: {help}"));
        let next = help.lines().skip_while(|l| *l != line).nth(1).unwrap_or("");
        assert!(line.contains(words) || next.contains(words), "{option} has no description: {help}");
    }
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

/// pft works on retire events, not stream captures: `sweep` runs the program once per
/// buffer setting for it, and its rows equal `report schemes`' cycle-mode figures. `report
/// schemes` runs it beside any other scheme from one run per program.
#[test]
fn report_schemes_runs_pft_beside_the_others_and_sweep_runs_it_too() {
    let dir = TempDir::new().unwrap();
    let json = dir.path().join("pft.json");
    // The manifest's programs (as `report schemes` runs them), cut at 20,000 instructions:
    // tiny runs to its exit.
    ok(&streamtrace(&[
        "sweep", "--configs", "rsdc-32x4-128;pft,ras=4", "--sdb", "1,2", "--max-insns", "20000", "--allow-failures",
        "--capture-dir", p(dir.path()), "-q", "--json", p(&json),
    ]));
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = doc["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 14 * 2 * 2, "14 programs x two configurations x two SDB depths");
    for sdb in ["1", "2"] {
        let row = rows
            .iter()
            .find(|r| {
                r["program"] == "tiny" && r["config"] == "pft,ras=4" && r["buffers"].as_str().unwrap().starts_with(&format!("sdb={sdb},"))
            })
            .unwrap_or_else(|| panic!("no pft row for tiny with sdb={sdb}"));
        assert_eq!(row["exit_code"], 0);
        let report = ok(&streamtrace(&[
            "report", "schemes", "--configs", "pft,ras=4", "--program", "tiny", "--buffers", &format!("sdb={sdb},obuf=80"), "--json",
        ]));
        let j: serde_json::Value = serde_json::from_str(&report).unwrap();
        let r = &j["programs"][0]["results"][0];
        assert_eq!(row["total_bits"], r["total_bits"], "sdb={sdb}");
        assert_eq!(row["stall_cycles"], r["cycle"]["stall_cycles"], "sdb={sdb}");
        assert_eq!(row["cycles"], r["cycle"]["cycles"], "sdb={sdb}");
        assert_eq!(row["timing"], "ipc1");
    }
    // Unbounded buffers count at the sizes the run needed (as the sweep's rows do), not as
    // empty: the job buffer's 48-bit control entries and max(sdb, 2) 32-bit words, and the
    // output buffer's bits.
    let report = ok(&streamtrace(&[
        "report", "schemes", "--configs", "pft", "--program", "tiny", "--buffers", "sdb=inf,obuf=inf", "--json",
    ]));
    let j: serde_json::Value = serde_json::from_str(&report).unwrap();
    let r = &j["programs"][0]["results"][0];
    let (sdb, obuf) = (r["cycle"]["sdb_needed"].as_u64().unwrap(), r["cycle"]["obuf_needed_bits"].as_u64().unwrap());
    assert!(sdb >= 1 && obuf >= 8, "{r}");
    assert_eq!(r["storage_bits"].as_u64().unwrap(), 4753 + 48 * sdb + 32 * sdb.max(2) + obuf, "{r}");
    assert_eq!(j["summary"][0]["storage_bits"], r["storage_bits"]);
    // Timing parameters of the user's own: pft's rows carry the same `xscale-HASH` label
    // as the capture replays', so they average and tabulate together.
    let toml = dir.path().join("timing.toml");
    std::fs::write(&toml, "[memory]\nlatency = 40\n").unwrap();
    let timed = dir.path().join("timed.json");
    let timing_arg = format!("--timing={}", p(&toml));
    ok(&streamtrace(&[
        "sweep", "--programs", "testbenches/programs/bin/tiny.elf", "--configs", "rsdc-32x4-128;pft", &timing_arg,
        "--capture-dir", p(dir.path()), "-q", "--json", p(&timed),
    ]));
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&timed).unwrap()).unwrap();
    let labels: Vec<&str> = doc["rows"].as_array().unwrap().iter().map(|r| r["timing"].as_str().unwrap()).collect();
    assert_eq!(labels.len(), 2);
    assert!(labels[0].starts_with("xscale-") && labels[0] == labels[1], "{labels:?}");
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
    assert_eq!(summary.len(), 7, "rSDC and the six pft sizes");
    let bits = |c: &str| summary.iter().find(|s| s["config"] == c).unwrap()["bits_per_instruction"].as_f64().unwrap();
    assert!(bits("pft") < bits("rsdc-32x4-128") / 3.0, "pft {} rsdc {}", bits("pft"), bits("rsdc-32x4-128"));
    assert_eq!(summary.iter().find(|s| s["config"] == "pft").unwrap()["storage_bits"], 4753 + 2 * (48 + 32) + 80, "predictors, job buffer, output buffer");
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

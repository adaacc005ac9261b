//! The command-line conventions users rely on (issue 23): `run` passes everything after the
//! program to it and has no instruction limit unless asked; `--max-insns` cuts a run
//! cleanly; `run --events-out` feeds `decode --verify` (also from a sync marker); one
//! address-list format for `run --pc-trace` and `decode -o`; `dump`'s offsets, raw bits,
//! instruction count, start options and JSON types; and the smaller fixes (errors printed
//! once, `lru --opt` in text mode, `report` from any directory).

mod common;

use std::path::Path;

use common::{ok, programs_dir, streamtrace_in};
use serde_json::Value;
use tempfile::TempDir;

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The last line of stdout as JSON (`run --json` prints it after the program's output).
fn last_json(o: &std::process::Output) -> Value {
    let out = stdout(o);
    serde_json::from_str(out.lines().last().expect("a JSON line")).expect("JSON")
}

#[test]
fn run_passes_everything_after_the_program_to_it() {
    let progs = programs_dir();
    // crc32 opens argv[1]: options of ours after the program are the program's, dashes and all.
    for arg in ["-d", "--json", "--", "-c"] {
        let o = streamtrace_in(&progs, &["run", "bin/crc32.elf", arg, "-fps", "-c", "FILE"]);
        assert_eq!(o.status.code(), Some(2), "the program's own exit status: {}", stderr(&o));
        assert!(stdout(&o).contains(&format!("crc32: cannot open {arg}\n")), "{}", stdout(&o));
        assert!(!stdout(&o).contains("\"instructions\""), "--json after the program is not ours");
    }
    // `--` may end our options before the program, as with any command.
    let o = streamtrace_in(&progs, &["run", "--", "bin/crc32.elf", "-d"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stdout(&o).contains("crc32: cannot open -d\n"), "{}", stdout(&o));
    // JSON and a data stream cannot share stdout: a usage error.
    let o = streamtrace_in(&progs, &["run", "--json", "--events-out", "-", "bin/tiny.elf"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--json and --events-out - would mix on stdout"), "{}", stderr(&o));
    // Options go before the program.
    let o = streamtrace_in(&progs, &["run", "--json", "-c", "fbase", "bin/crc32.elf", "data/lorem.txt", "1"]);
    let j = last_json(&o);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(j["exit_code"], 0);
    assert_eq!(j["truncated"], false);
    assert!(j["max_insns"].is_null(), "no limit by default: {j}");
    assert_eq!(j["trace"][0]["config"], "fbase");
    assert!(stdout(&o).contains("crc32: file=data/lorem.txt"), "{}", stdout(&o));
}

#[test]
fn max_insns_cuts_the_run_cleanly_and_the_trace_still_decodes() {
    let tmp = TempDir::new().unwrap();
    let progs = programs_dir();
    let (trace, events) = (tmp.path().join("t"), tmp.path().join("e"));
    for cfg in ["rsdc-32x4-128", "pft"] {
        let o = streamtrace_in(
            &progs,
            &["run", "--json", "-c", cfg, "--trace-out", p(&trace), "--events-out", p(&events), "--max-insns", "25000", "bin/sha256.elf", "768"],
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let err = stderr(&o);
        let notes: Vec<&str> = err.lines().filter(|l| l.contains("note:")).map(str::trim).collect();
        assert_eq!(notes.len(), 1, "{}", stderr(&o));
        assert!(notes[0].starts_with("streamtrace: note: stopped at the --max-insns limit of 25,000 instructions"), "{}", notes[0]);
        let j = last_json(&o);
        assert_eq!(j["truncated"], true);
        assert!(j["exit_code"].is_null());
        assert!(j["error"].is_null());
        assert_eq!(j["instructions"], 25_000);
        assert_eq!(j["max_insns"], 25_000);
        // The trace ends with END and decodes to the events of the window.
        let o = streamtrace_in(
            &progs,
            &["decode", "-c", cfg, "--elf", "bin/sha256.elf", "-t", p(&trace), "--verify", p(&events), "--json"],
        );
        let d: Value = serde_json::from_str(&ok(&o)).unwrap();
        assert_eq!(d["ended_cleanly"], true, "{cfg}");
        assert_eq!(d["verified"], true, "{cfg}");
        assert_eq!(d["instructions"], 25_000, "{cfg}");
        assert_eq!(std::fs::read_to_string(&events).unwrap().lines().count(), 25_000);
    }
    // A program that finishes under the limit is not truncated, and keeps its exit status.
    let o = streamtrace_in(&progs, &["run", "--json", "--max-insns", "100000000", "bin/tiny.elf"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(last_json(&o)["truncated"], false);
    assert!(!stderr(&o).contains("note:"), "{}", stderr(&o));
}

#[test]
fn events_out_round_trips_through_decode_verify_also_from_a_sync() {
    let tmp = TempDir::new().unwrap();
    let progs = programs_dir();
    let (trace, events) = (tmp.path().join("t"), tmp.path().join("e"));
    for cfg in ["esdc-32x4-128,sync=3000", "pft,sync=2000", "nexs,sync=500", "rsdc-8x2-16,sync=1"] {
        ok(&streamtrace_in(
            &progs,
            &["run", "-c", cfg, "--trace-out", p(&trace), "--events-out", p(&events), "--max-insns", "40000", "bin/sha256_thumb.elf", "96"],
        ));
        let base = ["decode", "-c", cfg, "--elf", "bin/sha256_thumb.elf", "-t", p(&trace), "--verify", p(&events), "--json"];
        let full: Value = serde_json::from_str(&ok(&streamtrace_in(&progs, &base))).unwrap();
        assert_eq!(full["verified"], true, "{cfg}");
        assert!(full["syncs"].as_u64().unwrap() > 1, "{cfg}: {full}");
        let mut a = base.to_vec();
        a.push("--from-sync");
        let tail: Value = serde_json::from_str(&ok(&streamtrace_in(&progs, &a))).unwrap();
        assert_eq!(tail["verified"], true, "{cfg}: {tail}");
        assert!(tail["start_bit"].as_u64().unwrap() > 0, "{cfg}");
        let (all, after) = (full["instructions"].as_u64().unwrap(), tail["instructions"].as_u64().unwrap());
        assert!(after > 0 && after < all, "{cfg}: {after} of {all}");
    }
    // Events that stop short of the trace: the first decoded instruction past their end is
    // named by its index in the whole run, not in the part after the sync.
    let cfg = "esdc-32x4-128,sync=3000";
    let short = tmp.path().join("short");
    ok(&streamtrace_in(&progs, &["run", "-c", cfg, "--trace-out", p(&trace), "--max-insns", "40000", "bin/sha256_thumb.elf", "96"]));
    ok(&streamtrace_in(&progs, &["run", "--events-out", p(&short), "--max-insns", "39000", "bin/sha256_thumb.elf", "96"]));
    let o = streamtrace_in(
        &progs,
        &["decode", "-c", cfg, "--elf", "bin/sha256_thumb.elf", "-t", p(&trace), "--verify", p(&short), "--from-sync"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("verification failed at instruction 39000: decoded"), "{}", stderr(&o));
    // An events file that is not a run is refused with its line.
    let text = std::fs::read_to_string(&short).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    lines[20_000] = lines[20_000].replacen(' ', "0 ", 1);
    std::fs::write(&short, lines.join("\n") + "\n").unwrap();
    let o = streamtrace_in(
        &progs,
        &["decode", "-c", cfg, "--elf", "bin/sha256_thumb.elf", "-t", p(&trace), "--verify", p(&short), "--from-sync"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("short:20001"), "{}", stderr(&o));
    // The events are read twice: not from a pipe.
    let o = streamtrace_in(&progs, &["decode", "-c", cfg, "--elf", "bin/sha256_thumb.elf", "-t", p(&trace), "--verify", "-", "--from-sync"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn pc_trace_and_decode_out_share_one_address_format() {
    let tmp = TempDir::new().unwrap();
    let progs = programs_dir();
    let (trace, pcs, addrs) = (tmp.path().join("t"), tmp.path().join("pcs"), tmp.path().join("addrs"));
    let mut annotated = Vec::new();
    for form in [None, Some("annotated"), Some("plain"), Some("binary")] {
        let mut run = vec!["run", "-c", "rsdc-32x4-128", "--trace-out", p(&trace), "--pc-trace", p(&pcs)];
        let mut dec = vec!["decode", "-c", "rsdc-32x4-128", "--elf", "bin/sha256_thumb.elf", "-t", p(&trace), "-o", p(&addrs)];
        if let Some(f) = form {
            run.extend(["--addr-format", f]);
            dec.extend(["--addr-format", f]);
        }
        run.extend(["bin/sha256_thumb.elf", "8"]);
        ok(&streamtrace_in(&progs, &run));
        ok(&streamtrace_in(&progs, &dec));
        let (a, b) = (std::fs::read(&pcs).unwrap(), std::fs::read(&addrs).unwrap());
        assert_eq!(a, b, "{form:?}: the files differ");
        if form == Some("binary") {
            // The annotated lines, as 32-bit words with the Thumb state in bit 0.
            let words: Vec<u32> = a.chunks_exact(4).map(|w| u32::from_le_bytes(w.try_into().unwrap())).collect();
            let text: Vec<u32> = String::from_utf8_lossy(&annotated)
                .lines()
                .map(|l| u32::from_str_radix(&l[..8], 16).unwrap() | l.ends_with(" T") as u32)
                .collect();
            assert_eq!((a.len() % 4, words), (0, text));
            let o = streamtrace_in(&progs, &[&dec[..], &["--symbols"]].concat());
            assert_eq!(o.status.code(), Some(2), "--symbols with binary: {}", stderr(&o));
            continue;
        }
        if form.is_none() {
            annotated = a.clone();
        }
        let first = String::from_utf8_lossy(&a).lines().nth(100).unwrap().to_string();
        if form == Some("plain") {
            assert!(first.len() == 8 && u32::from_str_radix(&first, 16).is_ok(), "{first}");
        } else {
            // sha256_thumb runs its kernels in Thumb state.
            assert!(String::from_utf8_lossy(&a).lines().any(|l| l.ends_with(" T")), "{form:?}");
            assert!(first.len() == 10 && (first.ends_with(" A") || first.ends_with(" T")), "{first}");
        }
    }
}

/// `dump` output of the tiny events under `cfg`, with `extra` options.
fn dump(dir: &Path, cfg: &str, extra: &[&str]) -> std::process::Output {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let trace = dir.join(format!("{cfg}.trace"));
    if !trace.exists() {
        // A bare bit stream, so that the records' bits and offsets are the file's.
        ok(&streamtrace_in(root, &["encode", "--raw", "-c", cfg, "-e", "tests/data/tiny.events", "-o", p(&trace)]));
    }
    let mut a = vec!["dump", "--raw", "-c", cfg, "--elf", "isa/tests/data/tiny.elf", "-t", p(&trace)];
    a.extend_from_slice(extra);
    streamtrace_in(root, &a)
}

#[test]
fn dump_raw_bits_offsets_and_counts_cover_the_whole_trace() {
    let tmp = TempDir::new().unwrap();
    // (pft has no record reporting: dump lists the SDC schemes and the baselines.)
    for cfg in ["esdc-32x4-128", "bsdc-16x2-32,sync=30", "fbase", "tslz-256"] {
        let o = dump(tmp.path(), cfg, &["--bits", "--json"]);
        let recs: Vec<Value> = serde_json::from_str(&ok(&o)).unwrap();
        let bytes = std::fs::read(tmp.path().join(format!("{cfg}.trace"))).unwrap();
        // The raw bits of all records, in order, are the file: nothing skipped, nothing twice.
        let raw: String = recs.iter().map(|r| r["raw"].as_str().unwrap()).collect();
        let file: String = bytes.iter().map(|b| format!("{b:08b}")).collect();
        assert_eq!(raw, file, "{cfg}");
        let mut bit = 0;
        let mut icount = 0;
        for r in &recs {
            assert_eq!(r["bit"], bit, "{cfg}: {r}");
            assert_eq!(r["byte"], bit / 8, "{cfg}: {r}");
            assert_eq!(r["icount"], icount, "{cfg}: {r}");
            bit += r["len"].as_u64().unwrap();
            for s in r["streams"].as_array().into_iter().flatten() {
                // Addresses are integers everywhere.
                let sa = s["sa"].as_u64().unwrap();
                assert_eq!(s["pc"].as_u64(), Some(sa & !1), "{s}");
                assert_eq!(s["state"], if sa & 1 == 1 { "T" } else { "A" });
                assert_eq!(s["icount"], icount);
                icount += s["sl"].as_u64().unwrap();
            }
            if !r["addr"].is_null() {
                assert!(r["addr"].is_u64(), "{r}");
            }
        }
        // END last, or END and then the zero padding of a scheme whose END leaves it out.
        let kinds: Vec<&str> = recs.iter().rev().take(2).map(|r| r["kind"].as_str().unwrap()).collect();
        assert!(kinds[0] == "END" || kinds == ["PADDING", "END"], "{cfg}: {kinds:?}");
        assert_eq!(icount, 120, "{cfg}: ten passes of tiny's loop");
    }
    // Text: every line carries the bit and byte offsets and the count; --bits adds the bits.
    let o = dump(tmp.path(), "esdc-32x4-128", &["--bits"]);
    let text = ok(&o);
    for line in text.lines() {
        assert!(line.starts_with("bit ") && line.contains(" byte ") && line.contains(" icount "), "{line}");
    }
    let first = text.lines().next().unwrap().split_whitespace().collect::<Vec<_>>().join(" ");
    assert_eq!(
        first,
        "bit 000000 byte 000000.0 len 35 icount 0 SDC-MISS sl=8 addr=0x00008000 lvsa=hit -> stream 0x00008000 A len 8 \
         raw=00000000000010001001000000000000000"
    );
    let end = text.lines().last().unwrap().split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(end.starts_with("bit 000169 byte 000021.1 len 23 icount 120 END raw="), "{end}");
}

#[test]
fn dump_starts_at_a_sync_marker_or_an_offset() {
    let tmp = TempDir::new().unwrap();
    let cfg = "esdc-32x4-128,sync=30";
    let all: Vec<Value> = serde_json::from_str(&ok(&dump(tmp.path(), cfg, &["--json"]))).unwrap();
    let syncs: Vec<&Value> = all.iter().filter(|r| r["kind"] == "SYNC").collect();
    assert!(syncs.len() >= 2, "{all:?}");
    let after = |s: &Value| s["bit"].as_u64().unwrap() + s["len"].as_u64().unwrap();
    // --from-sync: the records after the first marker, with the file's offsets.
    let tail: Vec<Value> = serde_json::from_str(&ok(&dump(tmp.path(), cfg, &["--json", "--from-sync"]))).unwrap();
    assert_eq!(tail[0]["bit"].as_u64(), Some(after(syncs[0])));
    assert_eq!(tail[0]["icount"], 0, "the count starts where the dump starts");
    let first_after = all.iter().position(|r| r["bit"].as_u64() == Some(after(syncs[0]))).unwrap();
    assert_eq!(tail.len(), all.len() - first_after);
    for (t, a) in tail.iter().zip(&all[first_after..]) {
        assert_eq!((&t["bit"], &t["kind"], &t["len"]), (&a["bit"], &a["kind"], &a["len"]));
    }
    // --start-offset: the first marker at or after that byte.
    let byte = (after(syncs[0]) / 8).to_string();
    let from: Vec<Value> = serde_json::from_str(&ok(&dump(tmp.path(), cfg, &["--json", "--start-offset", &byte]))).unwrap();
    assert_eq!(from[0]["bit"].as_u64(), Some(after(syncs[1])));
    // No marker after the offset, an offset past the end, a scheme without syncs: exit 1.
    let o = dump(tmp.path(), cfg, &["--start-offset", "100000"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("--start-offset 100000 is beyond the end"), "{}", stderr(&o));
    let o = dump(tmp.path(), "fbase", &["--from-sync"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("no sync marker at or after byte 0"), "{}", stderr(&o));
}

#[test]
fn a_missing_elf_is_reported_once() {
    let o = streamtrace_in(
        &programs_dir(),
        &["decode", "-c", "fbase", "--elf", "/nonexistent.elf", "-t", "/nonexistent.trace"],
    );
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(err.matches("No such file or directory").count(), 1, "{err}");
    assert!(err.contains("/nonexistent.elf"), "{err}");
}

#[test]
fn lru_prints_the_opt_count_in_text_mode() {
    let tmp = TempDir::new().unwrap();
    let progs = programs_dir();
    let lap = tmp.path().join("crc.lap");
    ok(&streamtrace_in(&progs, &["run", "--refs", p(&lap), "--format", "laplace", "bin/crc32.elf", "data/lorem.txt", "1"]));
    let o = streamtrace_in(&progs, &["lru", "--pages", "4", "--opt", "--from", "laplace", p(&lap)]);
    let faults = ok(&o).lines().count();
    let evictions = ok(&o).lines().filter(|l| !l.ends_with("- - -")).count();
    assert!(evictions > 0, "the example needs evictions");
    // Counts print with thousands separators.
    let err = stderr(&o).replace(',', "");
    assert!(err.contains(&format!("{faults} faults {evictions} evictions")), "{err}");
    let j = streamtrace_in(&progs, &["lru", "--pages", "4", "--opt", "--from", "laplace", p(&lap), "-o", p(&tmp.path().join("f")), "--json"]);
    let j: Value = serde_json::from_str(&ok(&j)).unwrap();
    let opt = j["opt_faults"].as_u64().unwrap();
    assert!(opt <= j["faults"].as_u64().unwrap());
    assert!(err.contains(&format!("; OPT: {opt} faults")), "{err}");
}

#[test]
fn report_refs_works_from_below_the_root_and_says_where_to_run_it() {
    let progs = programs_dir();
    let o = streamtrace_in(&progs.join("bin"), &["report", "refs", "--program", "tiny", "--json"]);
    let j: Value = serde_json::from_str(&ok(&o)).unwrap();
    assert!(j.to_string().contains("tiny"), "{j}");
    let outside = TempDir::new().unwrap();
    let o = streamtrace_in(outside.path(), &["report", "refs", "--program", "tiny"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("run this inside the repository, or give --programs FILE"), "{}", stderr(&o));
}

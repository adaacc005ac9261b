//! End-to-end tests of `streamtrace citcat` (issue 8) on the built binary: the four-step
//! file workflow verifies, `verify` fails (exit 1) on a different run, and corrupt or
//! truncated CAT/IMS/AES files give errors that name the file and the byte.

mod common;

use common::{fails, ok, programs_dir, streamtrace_in};
use tempfile::TempDir;

/// Recomputes the CRC of a file's trailer after an edit (docs/citcat.md 8).
fn reclose(b: &mut [u8]) {
    let n = b.len();
    let crc = streamtrace_model::checksum::crc32c(&b[..n - 4]);
    b[n - 4..].copy_from_slice(&crc.to_le_bytes());
}

fn system_program(name: &str) -> String {
    programs_dir().join("system/bin").join(format!("{name}.elf")).to_str().unwrap().to_string()
}

#[test]
fn record_extract_replay_verify() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    let prog = system_program("sys_io_thumb");
    let out = ok(&streamtrace_in(d, &["citcat", "record", &prog, "-o", "run.cat", "--insns", "rec.trace", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["stats"]["exit_code"], 0);
    assert!(v["stats"]["irqs"].as_u64().unwrap() > 20);
    ok(&streamtrace_in(d, &["citcat", "extract", "run.cat", "-o", "run.ims", "run.aes"]));
    let out = ok(&streamtrace_in(d, &["citcat", "replay", "run.ims", "run.aes", "--insns", "out.trace", "--cat", "out.cat"]));
    assert!(out.contains("every AES entry consumed"), "{out}");
    let out = ok(&streamtrace_in(d, &["citcat", "verify", "--insns", "rec.trace", "out.trace", "--cat", "run.cat", "out.cat", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["pass"], true, "{out}");

    // A run with another seed is a different run: verify must say so and exit 1.
    ok(&streamtrace_in(d, &["citcat", "record", &prog, "-o", "other.cat", "--insns", "other.trace", "--seed", "5"]));
    let o = streamtrace_in(d, &["citcat", "verify", "--insns", "rec.trace", "other.trace", "--cat", "run.cat", "other.cat"]);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("V1 instruction trace: DIFFERENT at entry"), "{out}");
    assert!(out.contains("V2 CAT (CPU records): DIFFERENT at entry"), "{out}");

    // check: all phases in memory.
    let out = ok(&streamtrace_in(d, &["citcat", "check", &system_program("sys_timer"), "--json"]));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!((v["v1"].as_bool(), v["v2"].as_bool(), v["v3"].as_bool()), (Some(true), Some(true), Some(true)));
    assert!(v["counter_reads"].as_u64().unwrap() > 0);
}

#[test]
fn damaged_files_give_clear_errors() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    ok(&streamtrace_in(d, &["citcat", "record", &system_program("sys_timer"), "-o", "run.cat", "--insns", "rec.trace"]));
    ok(&streamtrace_in(d, &["citcat", "extract", "run.cat", "-o", "run.ims", "run.aes"]));
    let cat = std::fs::read(d.join("run.cat")).unwrap();
    let ims = std::fs::read(d.join("run.ims")).unwrap();
    let aes = std::fs::read(d.join("run.aes")).unwrap();

    // A cut: no trailer, named at the file's end (docs/citcat.md 8).
    std::fs::write(d.join("cut.cat"), &cat[..cat.len() - 5]).unwrap();
    let at = format!("cut.cat: CAT file, byte {}: no CEND trailer", cat.len() - 5);
    fails(&streamtrace_in(d, &["citcat", "extract", "cut.cat", "-o", "x.ims", "x.aes"]), &at);
    // A changed byte: the CRC says damaged, before any field is used.
    let mut bad = cat.clone();
    bad[16] = 77; // the first record's kind
    std::fs::write(d.join("bad.cat"), &bad).unwrap();
    let at = format!("bad.cat: CAT file, byte {}: file CRC", cat.len() - 4);
    fails(&streamtrace_in(d, &["citcat", "extract", "bad.cat", "-o", "x.ims", "x.aes"]), &at);
    // The same change under a recomputed CRC (a hostile or faulty writer): the field check.
    reclose(&mut bad);
    std::fs::write(d.join("bad.cat"), &bad).unwrap();
    fails(&streamtrace_in(d, &["citcat", "extract", "bad.cat", "-o", "x.ims", "x.aes"]), "CAT file, byte 16: record 0: unknown kind 77");

    std::fs::write(d.join("cut.aes"), &aes[..aes.len() / 2]).unwrap();
    fails(&streamtrace_in(d, &["citcat", "replay", "run.ims", "cut.aes", "--insns", "o.trace"]), "AES file, byte");
    std::fs::write(d.join("cut.ims"), &ims[..100]).unwrap();
    fails(&streamtrace_in(d, &["citcat", "replay", "cut.ims", "run.aes", "--insns", "o.trace"]), "IMS file, byte 100: no CEND trailer");
    let mut bad = ims.clone();
    bad[12 + 16 * 4] = 0x05; // CPSR mode bits 0b00101: no such mode
    reclose(&mut bad);
    std::fs::write(d.join("bad.ims"), &bad).unwrap();
    fails(&streamtrace_in(d, &["citcat", "replay", "bad.ims", "run.aes", "--insns", "o.trace"]), "has no valid mode");
    let mut short = b"STITR1\0\0\x01\x02".to_vec();
    short.extend_from_slice(b"CEND\0\0\0\0\0\0\0\0\0\0\0\0");
    reclose(&mut short);
    std::fs::write(d.join("x.trace"), &short).unwrap();
    fails(&streamtrace_in(d, &["citcat", "verify", "--insns", "rec.trace", "x.trace"]), "instruction trace file, byte 9");
    // A recorded trace cut short or with a bit flipped.
    let trace = std::fs::read(d.join("rec.trace")).unwrap();
    std::fs::write(d.join("cut.trace"), &trace[..trace.len() - 16]).unwrap();
    fails(&streamtrace_in(d, &["citcat", "verify", "--insns", "rec.trace", "cut.trace"]), "cut.trace: instruction trace file, byte");
    let mut flip = trace.clone();
    flip[trace.len() / 3] ^= 4;
    std::fs::write(d.join("flip.trace"), &flip).unwrap();
    fails(&streamtrace_in(d, &["citcat", "verify", "--insns", "flip.trace", "rec.trace"]), "the file is damaged");
    fails(&streamtrace_in(d, &["citcat", "record", "run.cat", "-o", "y.cat"]), "run.cat");
    std::fs::write(d.join("sys.toml"), "uart_gap_min = 0\n").unwrap();
    let prog = system_program("sys_timer");
    // A bad system file is a configuration error: exit 2.
    let usage = |o: std::process::Output, needle: &str| {
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(needle) && !err.contains("panicked"), "{err}");
    };
    usage(streamtrace_in(d, &["citcat", "check", &prog, "--system", "sys.toml"]), "sys.toml: uart_gap_min (0) must be at least 1");
    std::fs::write(d.join("sys.toml"), "timer_jiter = 5\n").unwrap();
    usage(streamtrace_in(d, &["citcat", "check", &prog, "--system", "sys.toml"]), "unknown field `timer_jiter`");
}

#[test]
fn a_program_without_trace_start_is_refused() {
    let tmp = TempDir::new().unwrap();
    let prog = programs_dir().join("bin/crc32.elf");
    let o = streamtrace_in(tmp.path(), &["citcat", "record", prog.to_str().unwrap(), "-o", "x.cat", "--max-insns", "100000"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("recording") && !err.contains("panicked"), "{err}");
}

//! `streamtrace run --timing[=FILE.toml]`: the XScale timing report on stderr and in --json,
//! parameters from a file, and clear errors for bad configuration files.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn streamtrace(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_streamtrace")).args(args).output().expect("run streamtrace")
}

fn tiny() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testbenches/programs/bin/tiny.elf")
}

fn json_of(o: &Output) -> serde_json::Value {
    let out = String::from_utf8_lossy(&o.stdout);
    serde_json::from_str(out.lines().last().expect("a JSON line")).expect("JSON summary")
}

#[test]
fn timing_report_in_text_and_json() {
    let elf = tiny();
    let o = streamtrace(&["run", "--timing", elf.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    for needle in ["timing:", "CPI", "I-cache", "D-cache", "BTB", "load-use", "external (trace module)"] {
        assert!(err.contains(needle), "{needle} in\n{err}");
    }
    let j = json_of(&streamtrace(&["run", "--timing", "--json", elf.to_str().unwrap()]));
    let t = &j["timing"];
    assert_eq!(t["instructions"], j["instructions"]);
    let (cycles, insns, stalls) =
        (t["cycles"].as_u64().unwrap(), t["instructions"].as_u64().unwrap(), t["stalls"]["total"].as_u64().unwrap());
    assert_eq!(cycles, insns + stalls);
    // Without --timing there is no report.
    let j = json_of(&streamtrace(&["run", "--json", elf.to_str().unwrap()]));
    assert!(j["timing"].is_null());
}

#[test]
fn timing_parameters_from_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let elf = tiny();
    let base = json_of(&streamtrace(&["run", "--timing", "--json", elf.to_str().unwrap()]));
    // A slower memory makes the same run take more cycles; nothing else changes.
    let slow = dir.path().join("slow.toml");
    std::fs::write(&slow, "# only what differs from the defaults\n[memory]\nlatency = 100\n").unwrap();
    let arg = format!("--timing={}", slow.display());
    let j = json_of(&streamtrace(&["run", &arg, "--json", elf.to_str().unwrap()]));
    assert_eq!(j["instructions"], base["instructions"]);
    assert!(j["timing"]["cycles"].as_u64() > base["timing"]["cycles"].as_u64());
}

#[test]
fn bad_timing_files_fail_with_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let elf = tiny();
    let elf = elf.to_str().unwrap();
    for (text, needles) in [
        ("[memory]\nlatncy = 80\n", &["bad.toml", "latncy"][..]),
        ("[icache]\nways = 3\n", &["bad.toml", "icache.size_bytes"][..]),
        ("[branch]\nbtb_entries = \"many\"\n", &["bad.toml", "btb_entries"][..]),
        ("[[[", &["bad.toml"][..]),
    ] {
        let path = dir.path().join("bad.toml");
        std::fs::write(&path, text).unwrap();
        let o = streamtrace(&["run", &format!("--timing={}", path.display()), elf]);
        let err = String::from_utf8_lossy(&o.stderr);
        // A configuration error: exit 2 (an unreadable file would be 1).
        assert_eq!(o.status.code(), Some(2), "{text}: {err}");
        for n in needles {
            assert!(err.contains(n), "{n} in {err}");
        }
        assert!(!err.contains("panicked"), "{err}");
    }
    let o = streamtrace(&["run", &format!("--timing={}", dir.path().join("none.toml").display()), elf]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("none.toml"));
    // `--timing FILE.toml` without `=` would run the file: say what to write instead.
    let path = dir.path().join("cfg.toml");
    std::fs::write(&path, "").unwrap();
    let o = streamtrace(&["run", "--timing", path.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("--timing="), "{}", String::from_utf8_lossy(&o.stderr));
}

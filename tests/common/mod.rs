//! Helpers shared by the CLI integration tests that run the built binary in a directory
//! and expect exit status 1 with a message on bad input (`cli_wet`, `cli_citcat`,
//! `cli_reliability`, `cli_stages`, `cli_container`).
// Each test binary uses its own subset.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub fn streamtrace_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_streamtrace")).current_dir(dir).args(args).output().expect("run streamtrace")
}

/// Runs `args` in `dir` with `input` on stdin.
pub fn streamtrace_stdin_in(dir: &Path, args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_streamtrace"))
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run streamtrace");
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

pub fn programs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testbenches/programs")
}

#[track_caller]
pub fn ok(o: &Output) -> String {
    assert!(o.status.success(), "failed: {}\n{}", String::from_utf8_lossy(&o.stderr), String::from_utf8_lossy(&o.stdout));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[track_caller]
pub fn fails(o: &Output, needle: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "expected exit 1: {err}");
    assert!(err.contains(needle), "stderr lacks '{needle}': {err}");
    assert!(!err.contains("panicked"), "panic: {err}");
}

/// Exit status `code` with every one of `needles` on stderr, and no panic.
#[track_caller]
pub fn exits(o: &Output, code: i32, needles: &[&str]) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(code), "stderr:\n{err}");
    for n in needles {
        assert!(err.contains(n), "stderr lacks {n:?}:\n{err}");
    }
    assert!(!err.contains("panicked"), "panic:\n{err}");
}

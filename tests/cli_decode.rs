//! `streamtrace decode` as a debugger uses it: the trace streamed from a pipe (`-t -`), and
//! the symbolized views (`--symbols`, `--tail`, `--calls`, `--profile`).

mod common;

use std::path::Path;

use common::{ok, programs_dir, streamtrace_in, streamtrace_stdin_in};
use tempfile::TempDir;

/// Run `prog args` and write its trace under `cfg` to `dir/t.trace`.
fn trace_of(dir: &Path, cfg: &str, prog: &str, args: &[&str]) -> std::path::PathBuf {
    let out = dir.join("t.trace");
    let mut a = vec!["run", prog];
    a.extend_from_slice(args);
    a.extend_from_slice(&["-c", cfg, "--trace-out", out.to_str().unwrap()]);
    ok(&streamtrace_in(&programs_dir(), &a));
    out
}

#[test]
fn decode_reads_the_trace_from_a_pipe() {
    let dir = TempDir::new().unwrap();
    for cfg in ["rsdc-32x4-128,sync=5000", "pft", "gzip-6"] {
        let trace = trace_of(dir.path(), cfg, "bin/sha256_thumb.elf", &["96"]);
        let from_file = dir.path().join("file.txt");
        let from_pipe = dir.path().join("pipe.txt");
        let base = ["decode", "-c", cfg, "--elf", "bin/sha256_thumb.elf", "--json"];
        let mut a = base.to_vec();
        a.extend_from_slice(&["-t", trace.to_str().unwrap(), "-o", from_file.to_str().unwrap()]);
        let file_json = ok(&streamtrace_in(&programs_dir(), &a));
        let mut a = base.to_vec();
        a.extend_from_slice(&["-t", "-", "-o", from_pipe.to_str().unwrap()]);
        let pipe_json = ok(&streamtrace_stdin_in(&programs_dir(), &a, &std::fs::read(&trace).unwrap()));
        let f: serde_json::Value = serde_json::from_str(&file_json).unwrap();
        let p: serde_json::Value = serde_json::from_str(&pipe_json).unwrap();
        assert_eq!(p["trace"], "<stdin>");
        for key in ["instructions", "streams", "trace_bytes", "ended_cleanly", "end_bit", "syncs", "errors"] {
            assert_eq!(f[key], p[key], "{cfg}: {key}");
        }
        assert!(f["instructions"].as_u64().unwrap() > 100_000, "{cfg}: {file_json}");
        let a = std::fs::read(&from_file).unwrap();
        assert!(a == std::fs::read(&from_pipe).unwrap() && !a.is_empty(), "{cfg}: addresses differ");
    }
}

#[test]
fn a_truncated_pipe_reports_the_bit_offset() {
    let dir = TempDir::new().unwrap();
    let trace = trace_of(dir.path(), "esdc-32x4-128", "bin/tiny.elf", &[]);
    let bytes = std::fs::read(&trace).unwrap();
    let o = streamtrace_stdin_in(
        &programs_dir(),
        &["decode", "-c", "esdc-32x4-128", "--elf", "bin/tiny.elf", "-t", "-"],
        &bytes[..bytes.len() / 2],
    );
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("<stdin>: bit ") && err.contains("truncated"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

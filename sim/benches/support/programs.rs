//! What the simulator benches share: the test programs, a quiet semihosting setup, QEMU as
//! the peer, medians. Included with `#[path]` by `programs.rs` and `timing.rs`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use streamtrace_sim::semihost::SharedBuffer;
use streamtrace_sim::Semihost;

pub fn programs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testbenches/programs")
}

pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Semihosting for a program of the manifest: its command line, no input, output kept.
pub fn quiet_semihost(cmdline: &str) -> Semihost {
    Semihost::new()
        .with_cmdline(cmdline)
        .with_workdir(programs_dir())
        .with_stdin(std::io::empty())
        .with_stdout(SharedBuffer::new())
        .with_stderr(SharedBuffer::new())
}

/// Wall seconds of one `qemu-arm -cpu pxa270` run of a manifest program (start-up included).
pub fn qemu_seconds(prog: &serde_json::Value) -> f64 {
    let elf_rel = prog["elf"].as_str().unwrap();
    let t = Instant::now();
    let st = Command::new("qemu-arm")
        .current_dir(programs_dir())
        .env_clear()
        .args(["-cpu", "pxa270", elf_rel])
        .args(prog["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()))
        .stdout(Stdio::null())
        .stdin(Stdio::null())
        .status()
        .unwrap();
    assert!(st.success(), "{elf_rel} under qemu");
    t.elapsed().as_secs_f64()
}

//! scripts/readme-examples.sh, the README examples test, on READMEs of its own: a passing
//! block passes, a failing command fails the script and is named by its line (also the
//! first command of an `&&` list, which `set -e` alone would let through), and blocks marked
//! skip or slow are left out of the quick run.

use std::path::Path;
use std::process::Output;

fn run_script(readme: &str, extra: &[&str]) -> Output {
    let dir = tempfile::TempDir::new().unwrap();
    let file = dir.path().join("README.md");
    std::fs::write(&file, readme).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::process::Command::new("bash")
        .arg(root.join("scripts/readme-examples.sh"))
        .args(extra)
        .env("README_FILE", &file)
        .env("STREAMTRACE_BIN", env!("CARGO_BIN_EXE_streamtrace"))
        .current_dir(root)
        .output()
        .expect("run bash")
}

const ALIAS: &str = "```sh\nalias streamtrace=\"$PWD/target/release/streamtrace\"\n```\n\n";

#[test]
fn passing_blocks_pass_and_marked_blocks_are_left_out() {
    let readme = format!(
        "# t\n\n{ALIAS}```sh\ncd testbenches/programs\nstreamtrace config \\\n    rsdc-32x4-128   # a comment\n```\n\n\
         <!-- readme-examples: skip (the reason) -->\n```sh\nfalse\n```\n\n<!-- readme-examples: slow -->\n```sh\nexit 3\n```\n"
    );
    let o = run_script(&readme, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("all 2 blocks passed"), "{err}");
    // --all runs the slow block too, and it fails.
    let o = run_script(&readme, &["--all"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(err.contains("block 4 (README.md:20) failed with status 3"), "{err}");
}

#[test]
fn a_failing_command_fails_the_script_and_is_named() {
    // The cd fails inside an && list: the next line must not run as if it had worked.
    let readme = format!("{ALIAS}```sh\nstreamtrace config rsdc-32x4-128\ncd nowhere && streamtrace config fbase\ntouch ran-on\n```\n");
    let o = run_script(&readme, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(err.contains("block 2 (README.md:7) failed with status 1"), "{err}");
    // A bad option of ours: exit 2, named as well.
    let o = run_script(&format!("{ALIAS}```sh\nstreamtrace config rsdc-24x4-128\n```\n"), &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("block 2 (README.md:6) failed with status 2"), "{err}");
}

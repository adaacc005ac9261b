//! Records the git commit streamtrace is built from (`STREAMTRACE_GIT_COMMIT`), for the
//! metadata of sweep outputs; a build outside a git checkout simply has none.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string()).filter(|s| !s.is_empty())
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if let Some(commit) = git(&["rev-parse", "--short=12", "HEAD"]) {
        println!("cargo:rustc-env=STREAMTRACE_GIT_COMMIT={commit}");
        // Rebuild when HEAD moves: HEAD itself and the branch it points at.
        // (Only files that exist: a missing one would rerun this script on every build.)
        let branch = git(&["symbolic-ref", "-q", "HEAD"]);
        for path in ["HEAD", "packed-refs"].into_iter().chain(branch.as_deref()) {
            if let Some(p) = git(&["rev-parse", "--git-path", path]).filter(|p| std::path::Path::new(p).exists()) {
                println!("cargo:rerun-if-changed={p}");
            }
        }
    }
}

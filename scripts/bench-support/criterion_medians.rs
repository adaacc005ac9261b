//! Reading criterion's own medians back after a run, so a bench can print ratios against
//! the peer it measured in the same run. Included by model/benches/encoder.rs and
//! sw-decoder/benches/decoder.rs with `#[path]`.

use std::path::PathBuf;

/// Where criterion writes its results.
pub fn criterion_dir() -> Option<PathBuf> {
    if let Some(h) = std::env::var_os("CRITERION_HOME") {
        return Some(PathBuf::from(h));
    }
    if let Some(t) = std::env::var_os("CARGO_TARGET_DIR") {
        return Some(PathBuf::from(t).join("criterion"));
    }
    if std::env::var_os("CARGO").is_none() {
        // Not run by cargo (the bench binary started by hand): criterion then writes to
        // target/criterion under the working directory, so read there, not beside the
        // binary, where an earlier `cargo bench` left results that would be printed as
        // this run's.
        return Some(PathBuf::from("target/criterion"));
    }
    // Run by cargo, criterion asks `cargo metadata` for the target directory: the binary's,
    // target/release/deps/<bench>-xxxx -> target/criterion.
    let exe = std::env::current_exe().ok()?;
    Some(exe.parent()?.parent()?.parent()?.join("criterion"))
}

/// Median time per iteration (ns) of a bench, from `<dir>/<group>/<id>/new/estimates.json`.
pub fn median_ns(group: &str, id: &str) -> Option<f64> {
    let path = criterion_dir()?
        .join(group.replace('/', "_"))
        .join(id)
        .join("new/estimates.json");
    let text = std::fs::read_to_string(path).ok()?;
    let rest = &text[text.find("\"median\"")?..];
    let rest = &rest[rest.find("\"point_estimate\":")? + "\"point_estimate\":".len()..];
    let end = rest.find([',', '}'])?;
    rest[..end].trim().parse().ok()
}

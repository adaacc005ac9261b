//! `streamtrace decode` as a debugger uses it: the trace streamed from a pipe (`-t -`), and
//! the symbolized views (`--symbols`, `--tail`, `--calls`, `--profile`).

mod common;

use std::path::Path;

use common::{ok, programs_dir, streamtrace_in, streamtrace_stdin_in};
use tempfile::TempDir;

/// Run `prog args` and write its trace under `cfg` to `dir/t.trace`.
fn trace_of(dir: &Path, cfg: &str, prog: &str, args: &[&str]) -> std::path::PathBuf {
    let out = dir.join("t.trace");
    let mut a = vec!["run", "-c", cfg, "--trace-out", out.to_str().unwrap(), prog];
    a.extend_from_slice(args);
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

/// Code symbols of `elf` by `arm-none-eabi-nm` (binutils-arm-none-eabi, installed by
/// scripts/setup.sh): the independent reference for the symbolized views.
fn nm_code_symbols(elf: &Path) -> Vec<(u32, String)> {
    let o = std::process::Command::new("arm-none-eabi-nm")
        .args(["--defined-only", elf.to_str().unwrap()])
        .output()
        .expect("arm-none-eabi-nm runs (scripts/setup.sh installs binutils-arm-none-eabi)");
    assert!(o.status.success());
    let mut v: Vec<(u32, String)> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let [a, k, n] = f[..] else { return None };
            (matches!(k, "T" | "t" | "W" | "w") && !n.starts_with('$'))
                .then(|| (u32::from_str_radix(a, 16).unwrap() & !1, n.to_string()))
        })
        .collect();
    v.sort();
    v
}

#[test]
fn tail_with_symbols_names_the_functions_nm_names() {
    let dir = TempDir::new().unwrap();
    for (prog, args, cfg) in [("qsort_structs", vec!["6000"], "rsdc-32x4-128"), ("sha256_thumb", vec!["96"], "pft")] {
        let elf = programs_dir().join(format!("bin/{prog}.elf"));
        let trace = trace_of(dir.path(), cfg, &format!("bin/{prog}.elf"), &args);
        let all = dir.path().join("all.txt");
        let t = trace.to_str().unwrap();
        let e = elf.to_str().unwrap();
        ok(&streamtrace_in(&programs_dir(), &["decode", "-c", cfg, "--elf", e, "-t", t, "-o", all.to_str().unwrap()]));
        let out = ok(&streamtrace_in(&programs_dir(), &["decode", "-c", cfg, "--elf", e, "-t", t, "--tail", "20", "--symbols"]));
        let rows: Vec<&str> = out.lines().skip_while(|l| !l.starts_with("last 20 instructions")).skip(1).take(20).collect();
        let all = std::fs::read_to_string(&all).unwrap();
        let want: Vec<&str> = all.lines().rev().take(20).collect::<Vec<_>>().into_iter().rev().collect();
        assert_eq!(rows.len(), 20, "{out}");
        let nm = nm_code_symbols(&elf);
        for (row, addr_line) in rows.iter().zip(&want) {
            let f: Vec<&str> = row.split_whitespace().collect();
            assert_eq!(format!("{} {}", f[0], f[1]), *addr_line, "{prog}: the tail is the trace's last 20 instructions");
            let pc = u32::from_str_radix(f[0], 16).unwrap();
            let (name, off) = f[2].split_once('+').map_or((f[2], 0), |(n, o)| (n, u32::from_str_radix(&o[2..], 16).unwrap()));
            // nm: the code symbol with the greatest address at or below pc (any alias there).
            let i = nm.partition_point(|s| s.0 <= pc) - 1;
            let at = nm[i].0;
            let names: Vec<&str> = nm.iter().filter(|s| s.0 == at).map(|s| s.1.as_str()).collect();
            assert!(names.contains(&name) && off == pc - at, "{prog}: {row}: nm says {names:?} at {at:#x}");
        }
    }
}

#[test]
fn profile_and_call_tree_of_a_program() {
    let dir = TempDir::new().unwrap();
    let trace = trace_of(dir.path(), "esdc-32x4-128", "bin/qsort_structs.elf", &["6000"]);
    let t = trace.to_str().unwrap();
    let args = ["decode", "-c", "esdc-32x4-128", "--elf", "bin/qsort_structs.elf", "-t", t, "--profile", "--calls", "--json"];
    let v: serde_json::Value = serde_json::from_str(&ok(&streamtrace_in(&programs_dir(), &args))).unwrap();
    let n = v["instructions"].as_u64().unwrap();
    let profile = v["profile"].as_array().unwrap();
    let sum: u64 = profile.iter().map(|r| r["instructions"].as_u64().unwrap()).sum();
    assert_eq!(sum, n, "every instruction is in one function");
    let counts: Vec<u64> = profile.iter().map(|r| r["instructions"].as_u64().unwrap()).collect();
    assert!(counts.windows(2).all(|w| w[0] >= w[1]), "sorted, most first");
    let names: Vec<&str> = profile.iter().map(|r| r["function"].as_str().unwrap()).collect();
    assert!(names[..3].contains(&"qsort") && names.contains(&"main") && !names.contains(&"??"), "{names:?}");
    // The tree: _mainCRTStartup at the root, main under it called once, and the sort's
    // comparison function called from qsort as often as the comparisons the program made.
    let calls = v["calls"].as_array().unwrap();
    assert_eq!(calls[0]["function"], "_mainCRTStartup");
    assert_eq!(calls[0]["depth"], 0);
    assert!(calls.iter().any(|r| r["function"] == "main" && r["depth"] == 1 && r["calls"] == 1), "{calls:?}");
    let under_qsort = |f: &str| {
        let mut in_qsort = None;
        calls.iter().any(|r| {
            let d = r["depth"].as_u64().unwrap();
            if in_qsort.is_some_and(|q| d <= q) {
                in_qsort = None;
            }
            if r["function"] == "qsort" && in_qsort.is_none() {
                in_qsort = Some(d);
            }
            in_qsort.is_some_and(|q| d == q + 1) && r["function"] == f && r["calls"].as_u64().unwrap() > 1000
        })
    };
    assert!(under_qsort("by_distance") && under_qsort("by_name"), "{calls:?}");
}

/// `--symbols` with DWARF: a test program built with `-g` (as a static ARM Linux program by
/// gcc-arm-linux-gnueabi, which scripts/setup.sh installs) gets ` at FILE:LINE` on every
/// address the line programs cover, and exactly what `addr2line` says there; addresses
/// addr2line cannot place (glibc, built without -g) get none.
#[test]
fn symbols_carry_the_source_lines_addr2line_gives() {
    let dir = TempDir::new().unwrap();
    let src = programs_dir().join("src");
    for state in ["arm", "thumb"] {
        let elf = dir.path().join(format!("sha256_{state}_g"));
        let cc = std::process::Command::new("arm-linux-gnueabi-gcc")
            .args(["-static", "-O2", "-g", "-march=armv5te", &format!("-m{state}"), "-I"])
            .arg(&src)
            .arg(src.join("sha256.c"))
            .arg("-o")
            .arg(&elf)
            .output()
            .expect("arm-linux-gnueabi-gcc runs (scripts/setup.sh installs gcc-arm-linux-gnueabi)");
        assert!(cc.status.success(), "{}", String::from_utf8_lossy(&cc.stderr));
        let e = elf.to_str().unwrap();
        let trace = trace_of(dir.path(), "pft", e, &["4"]);
        let listing = dir.path().join("symbols.txt");
        let t = trace.to_str().unwrap();
        ok(&streamtrace_in(&programs_dir(), &["decode", "--elf", e, "-t", t, "--symbols", "-o", listing.to_str().unwrap()]));
        // Each address once, in first-executed order.
        let text = std::fs::read_to_string(&listing).unwrap();
        let mut seen = std::collections::HashSet::new();
        let rows: Vec<(&str, Option<&str>)> = text
            .lines()
            .filter(|l| seen.insert(&l[..8]))
            .map(|l| (&l[..8], l.split_once(" at ").map(|(_, line)| line)))
            .collect();
        let mut a2l = std::process::Command::new("arm-linux-gnueabi-addr2line")
            .args(["-e", e])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("arm-linux-gnueabi-addr2line runs (binutils-arm-linux-gnueabi, with the cross gcc)");
        let input: String = rows.iter().map(|(a, _)| format!("0x{a}\n")).collect();
        use std::io::Write as _;
        a2l.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
        let out = a2l.wait_with_output().unwrap();
        let want: Vec<String> = String::from_utf8_lossy(&out.stdout).lines().map(|l| l.split(" (discriminator").next().unwrap().to_string()).collect();
        assert_eq!(want.len(), rows.len());
        let mut with_lines = 0;
        for ((addr, got), want) in rows.iter().zip(&want) {
            // `??:?`, or `unit.o:?` where a unit without line information covers it.
            if want.ends_with(":?") || want.ends_with(":0") {
                assert_eq!(*got, None, "{state}: {addr}: addr2line has no line ({want})");
            } else {
                assert_eq!(*got, Some(want.as_str()), "{state}: {addr}");
                with_lines += 1;
            }
        }
        assert!(with_lines > 100 && rows.len() > with_lines, "{state}: {with_lines} of {} addresses with lines", rows.len());
        // The post-mortem view shows them too.
        let tail = ok(&streamtrace_in(&programs_dir(), &["decode", "--elf", e, "-t", t, "--symbols", "--tail", "5", "--json"]));
        let v: serde_json::Value = serde_json::from_str(&tail).unwrap();
        assert_eq!(v["tail"].as_array().unwrap().len(), 5, "{tail}");
    }
}

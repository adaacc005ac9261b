//! The robustness suite (docs/fuzzing.md "Malformed-input suite"): for each kind of input the
//! CLI reads, a corpus of malformed inputs generated from one valid, small input (cuts at
//! many points, single-bit flips at many points, huge count fields, trailing bytes, wrong
//! configurations), each run through the command that reads it. Every run must end with
//! exit status 1 or 2, or 0 where the damage is undetectable by the format (listed per
//! kind below), never a panic (101, "panicked") or a signal, and a failure must name the
//! input. Points are sampled deterministically so the suite stays fast.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use common::{ok, programs_dir, streamtrace_in};
use tempfile::TempDir;

/// How much of the damage a format can see.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Detects {
    /// A trailer with a count and CRC (or a CRC per block): every mutation is an error.
    All,
    /// Laplace text: a cut inside a line is an error; a cut at a line end, a flip that
    /// leaves a valid line, trailing records cannot be seen.
    CutInsideLine,
    /// No integrity data (ELF, bare bit stream, events text, din, TOML, configuration
    /// strings): exit 0 is allowed; the run must still end cleanly.
    Nothing,
}

/// The command line reading `file`, given the file and a fresh path for any output.
type CommandLine = Box<dyn Fn(&str, &str) -> Vec<String> + Sync>;

/// One input kind: its valid bytes and how the CLI reads a file of it.
struct Kind {
    name: &'static str,
    ext: &'static str,
    valid: Vec<u8>,
    detects: Detects,
    /// The command line reading `file`; `out` is a fresh path for any output.
    args: CommandLine,
    /// The valid input with a count field made huge (and the trailer's CRC recomputed
    /// where there is one, so that the parser sees the count).
    huge: Vec<Vec<u8>>,
}

/// One malformed input.
struct Case {
    kind: usize,
    what: String,
    bytes: Vec<u8>,
    must_fail: bool,
    /// A wrong configuration: `-c` and its value, replacing the kind's `-c` if it has one.
    extra: Vec<String>,
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

/// Cut points: the first bytes (magic, header), 23 evenly spaced, the last bytes (trailer).
fn cut_points(len: usize) -> Vec<usize> {
    let mut v: Vec<usize> = [0, 1, 4, 7, 8, 9, 12, 16, 17].into_iter().collect();
    v.extend((1..24).map(|k| len * k / 24));
    v.extend([len.saturating_sub(17), len.saturating_sub(16), len.saturating_sub(12), len.saturating_sub(4), len.saturating_sub(1)]);
    v.retain(|&n| n < len);
    v.sort_unstable();
    v.dedup();
    v
}

/// Bit flips: 40 points spread over the file, each with another bit, plus the first and
/// last bytes.
fn flip_points(len: usize) -> Vec<(usize, u8)> {
    let mut v: Vec<(usize, u8)> = (0..40).map(|k| ((len - 1) * k / 39, (k % 8) as u8)).collect();
    v.extend([(0, 1), (len / 2, 7), (len - 1, 7)]);
    v.sort_unstable();
    v.dedup();
    v
}

/// `v` with the `w` little-endian bytes at `at` all ones; the trailer's CRC recomputed when
/// `closed`.
fn ones(v: &[u8], at: usize, w: usize, closed: bool) -> Vec<u8> {
    let mut b = v.to_vec();
    b[at..at + w].fill(0xFF);
    if closed {
        reclose(&mut b);
    }
    b
}

/// A `.wet` file with its `i`-th varint after the 10-byte header (0-6 the counts, 7 and 8 the
/// first and last node, 9 the node count) replaced by u64::MAX, the CRC recomputed.
fn wet_huge(v: &[u8], i: usize) -> Vec<u8> {
    let mut at = 10;
    for _ in 0..i {
        while v[at] & 0x80 != 0 {
            at += 1;
        }
        at += 1;
    }
    let mut end = at;
    while v[end] & 0x80 != 0 {
        end += 1;
    }
    let mut b = v[..at].to_vec();
    b.extend_from_slice(&[0xFF; 9]);
    b.push(0x01);
    b.extend_from_slice(&v[end + 1..]);
    reclose(&mut b);
    b
}

/// Recomputes the CRC-32C of a little-endian trailer after an edit (docs/wet.md 7.1,
/// docs/citcat.md 8).
fn reclose(b: &mut [u8]) {
    let n = b.len();
    let crc = streamtrace_model::checksum::crc32c(&b[..n - 4]);
    b[n - 4..].copy_from_slice(&crc.to_le_bytes());
}

fn corpus(kinds: &[Kind]) -> Vec<Case> {
    let mut out = Vec::new();
    for (k, kind) in kinds.iter().enumerate() {
        let v = &kind.valid;
        let ends_line = |n: usize| n == 0 || v[n - 1] == b'\n';
        for n in cut_points(v.len()) {
            let must_fail = match kind.detects {
                Detects::All => true,
                Detects::CutInsideLine => !ends_line(n),
                Detects::Nothing => false,
            };
            out.push(Case { kind: k, what: format!("cut at {n}"), bytes: v[..n].to_vec(), must_fail, extra: vec![] });
        }
        for (i, bit) in flip_points(v.len()) {
            let mut b = v.clone();
            b[i] ^= 1 << bit;
            out.push(Case { kind: k, what: format!("bit {bit} of byte {i} flipped"), bytes: b, must_fail: kind.detects == Detects::All, extra: vec![] });
        }
        for (j, b) in kind.huge.iter().enumerate() {
            out.push(Case { kind: k, what: format!("huge count field {j}"), bytes: b.clone(), must_fail: kind.detects == Detects::All, extra: vec![] });
        }
        let all = kind.detects == Detects::All;
        let mut one = v.clone();
        one.push(0);
        // A text file then ends inside a line.
        let line = kind.detects == Detects::CutInsideLine;
        out.push(Case { kind: k, what: "one byte appended".into(), bytes: one, must_fail: all || line, extra: vec![] });
        let mut twice = v.clone();
        twice.extend_from_slice(v);
        out.push(Case { kind: k, what: "the file twice".into(), bytes: twice, must_fail: all, extra: vec![] });
        let mut junk = v.clone();
        junk.extend_from_slice(b"junk\n");
        out.push(Case { kind: k, what: "text appended".into(), bytes: junk, must_fail: all || line, extra: vec![] });
    }
    out
}

/// The valid inputs, small: tiny.elf's trace (container and bare), references, WET;
/// 3,000 instructions of sys_io for CITCAT.
fn valid_inputs(dir: &Path) -> impl Fn(&str) -> Vec<u8> + '_ {
    let progs = programs_dir();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let f = |n: &str| dir.join(n).to_str().unwrap().to_string();
    ok(&streamtrace_in(&progs, &["run", "-c", "rsdc-32x4-128", "--trace-out", &f("t.trace"), "bin/tiny.elf"]));
    ok(&streamtrace_in(&progs, &["run", "-c", "rsdc-32x4-128", "--trace-out", &f("t.raw"), "--raw", "bin/tiny.elf"]));
    ok(&streamtrace_in(&progs, &["run", "--refs", &f("t.din"), "--max-insns", "2000", "bin/tiny.elf"]));
    ok(&streamtrace_in(&progs, &["run", "--refs", &f("t.lap"), "--format", "laplace", "--max-insns", "2000", "bin/tiny.elf"]));
    ok(&streamtrace_in(&root, &["pdats", "encode", &f("t.din"), "-o", &f("t.pdats")]));
    ok(&streamtrace_in(&root, &["pdats2", "encode", &f("t.din"), "-o", &f("t.pdats2")]));
    ok(&streamtrace_in(&root, &["diff", "encode", &f("t.lap"), "-o", &f("t.diff")]));
    for t in ["1", "2"] {
        ok(&streamtrace_in(&progs, &["wet", "build", "-o", &f(&format!("t{t}.wet")), "--tier", t, "--max-insns", "3000", "bin/tiny.elf"]));
    }
    let sys = "system/bin/sys_io.elf";
    ok(&streamtrace_in(&progs, &["citcat", "record", sys, "-o", &f("r.cat"), "--insns", &f("r.trace"), "--max-insns", "3000"]));
    ok(&streamtrace_in(&root, &["citcat", "extract", &f("r.cat"), "-o", &f("r.ims"), &f("r.aes")]));
    std::fs::copy(progs.join("bin/tiny.elf"), dir.join("tiny.elf")).unwrap();
    std::fs::copy(root.join("tests/data/tiny.events"), dir.join("tiny.events")).unwrap();
    std::fs::write(dir.join("timing.toml"), "[dcache]\nsize_bytes = 16384\nways = 4\nline_bytes = 32\n\n[memory]\nlatency = 40\n").unwrap();
    std::fs::write(dir.join("system.toml"), "seed = 3\ntimer_jitter = 32\nuart_gap_min = 200\nuart_gap_max = 2000\n").unwrap();
    move |n: &str| std::fs::read(dir.join(n)).unwrap()
}

#[test]
fn malformed_inputs_end_cleanly_and_are_refused_where_detectable() {
    let start = Instant::now();
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path();
    let read = valid_inputs(dir);
    let good = |n: &str| dir.join(n).to_str().unwrap().to_string();
    let (g_ims, g_aes, g_trace) = (good("r.ims"), good("r.aes"), good("r.trace"));
    let elf = programs_dir().join("bin/tiny.elf").to_str().unwrap().to_string();
    let e2 = elf.clone();
    let e3 = elf.clone();
    let sys = programs_dir().join("system/bin/sys_io.elf").to_str().unwrap().to_string();
    let aes_len = read("r.aes").len();
    let kinds = vec![
        Kind {
            name: "container trace",
            ext: "trace",
            valid: read("t.trace"),
            detects: Detects::All,
            args: Box::new(move |f, o| s(&["decode", "--elf", &elf, "-t", f, "-o", o])),
            huge: vec![],
        },
        Kind {
            name: "bare trace (-c)",
            ext: "raw",
            valid: read("t.raw"),
            detects: Detects::Nothing,
            args: Box::new(move |f, o| s(&["decode", "--raw", "-c", "rsdc-32x4-128", "--elf", &e2, "-t", f, "-o", o])),
            huge: vec![],
        },
        Kind {
            name: "ELF",
            ext: "elf",
            valid: read("tiny.elf"),
            detects: Detects::Nothing,
            args: Box::new(|f, _| s(&["run", "--max-insns", "20000", f])),
            // e_phoff, e_shoff, e_phentsize and e_phnum.
            huge: [(28, 4), (32, 4), (42, 4)].map(|(a, w)| ones(&read("tiny.elf"), a, w, false)).to_vec(),
        },
        Kind {
            name: "events file",
            ext: "events",
            valid: read("tiny.events"),
            detects: Detects::Nothing,
            args: Box::new(|f, o| s(&["encode", "-c", "rsdc-32x4-128", "-e", f, "-o", o])),
            huge: vec![],
        },
        Kind {
            name: "PDATS",
            ext: "pdats",
            valid: read("t.pdats"),
            detects: Detects::All,
            args: Box::new(|f, o| s(&["pdats", "decode", f, "-o", o])),
            huge: vec![],
        },
        Kind {
            name: "PDATS II",
            ext: "pdats2",
            valid: read("t.pdats2"),
            detects: Detects::All,
            args: Box::new(|f, o| s(&["pdats2", "decode", f, "-o", o])),
            huge: vec![],
        },
        Kind {
            name: "din",
            ext: "din",
            valid: read("t.din"),
            detects: Detects::Nothing,
            args: Box::new(|f, o| s(&["pdats", "encode", f, "-o", o])),
            huge: vec![],
        },
        Kind {
            name: "Laplace raw",
            ext: "lap",
            valid: read("t.lap"),
            detects: Detects::CutInsideLine,
            args: Box::new(|f, o| s(&["diff", "encode", f, "-o", o])),
            huge: vec![],
        },
        Kind {
            name: "Laplace difference",
            ext: "diff",
            valid: read("t.diff"),
            detects: Detects::CutInsideLine,
            args: Box::new(|f, o| s(&["diff", "decode", f, "-o", o])),
            huge: vec![],
        },
        Kind {
            name: "WET tier 1",
            ext: "wet",
            valid: read("t1.wet"),
            detects: Detects::All,
            args: Box::new(|f, _| s(&["wet", "stats", f])),
            // The instruction count (the trailer's), the node count.
            huge: vec![wet_huge(&read("t1.wet"), 0), wet_huge(&read("t1.wet"), 9)],
        },
        Kind {
            name: "WET tier 2",
            ext: "wet",
            valid: read("t2.wet"),
            detects: Detects::All,
            args: Box::new(|f, o| s(&["wet", "query", f, "cf", "--backward", "-o", o])),
            huge: vec![wet_huge(&read("t2.wet"), 0), wet_huge(&read("t2.wet"), 9)],
        },
        Kind {
            name: "CITCAT CAT",
            ext: "cat",
            valid: read("r.cat"),
            detects: Detects::All,
            args: Box::new(|f, o| s(&["citcat", "extract", f, "-o", &format!("{o}.ims"), &format!("{o}.aes")])),
            // record_count; the first record's size byte.
            huge: [(12, 4), (17, 1)].map(|(a, w)| ones(&read("r.cat"), a, w, true)).to_vec(),
        },
        Kind {
            name: "CITCAT IMS",
            ext: "ims",
            valid: read("r.ims"),
            detects: Detects::All,
            args: Box::new(move |f, o| s(&["citcat", "replay", f, &g_aes, "--insns", o])),
            // register_count; run_count (after 45 u32 registers and the u64 accumulator).
            huge: [(8, 4), (12 + 45 * 4 + 8, 4)].map(|(a, w)| ones(&read("r.ims"), a, w, true)).to_vec(),
        },
        Kind {
            name: "CITCAT AES",
            ext: "aes",
            valid: read("r.aes"),
            detects: Detects::All,
            args: Box::new(move |f, o| s(&["citcat", "replay", &g_ims, f, "--insns", o])),
            // INT count; end_tbc (before end_pc and the trailer): a replay that cannot reach
            // its end key.
            huge: [(8, 4), (aes_len - 16 - 12, 8)].map(|(a, w)| ones(&read("r.aes"), a, w, true)).to_vec(),
        },
        Kind {
            name: "CITCAT instruction trace",
            ext: "itr",
            valid: read("r.trace"),
            detects: Detects::All,
            args: Box::new(move |f, _| s(&["citcat", "verify", "--insns", f, &g_trace])),
            // The first instruction's access count.
            huge: vec![ones(&read("r.trace"), 8 + 17, 1, true)],
        },
        Kind {
            name: "timing TOML",
            ext: "toml",
            valid: read("timing.toml"),
            detects: Detects::Nothing,
            args: Box::new(move |f, _| s(&["run", &format!("--timing={f}"), "--max-insns", "5000", &e3])),
            huge: vec![],
        },
        Kind {
            name: "system TOML",
            ext: "toml",
            valid: read("system.toml"),
            detects: Detects::Nothing,
            args: Box::new(move |f, o| s(&["citcat", "record", &sys, "--system", f, "--max-insns", "2000", "-o", o])),
            huge: vec![],
        },
    ];
    // Each valid input passes its command, so the failures below come from the damage.
    for (k, kind) in kinds.iter().enumerate() {
        let file = dir.join(format!("valid{k}.{}", kind.ext));
        std::fs::write(&file, &kind.valid).unwrap();
        let args = (kind.args)(file.to_str().unwrap(), dir.join(format!("valid-out{k}")).to_str().unwrap());
        let o = Command::new(env!("CARGO_BIN_EXE_streamtrace")).current_dir(dir).args(&args).output().unwrap();
        assert!(o.status.success(), "{}: the valid input fails: {}", kind.name, String::from_utf8_lossy(&o.stderr));
    }
    let mut cases = corpus(&kinds);
    // Wrong configurations: a container decoded with another configuration is refused; a
    // bare stream decoded with another one is undetectable (it has no header).
    for cfg in ["fbase", "rsdc-16x2-16", "pft"] {
        let extra = s(&["-c", cfg]);
        cases.push(Case { kind: 0, what: format!("decoded with -c {cfg}"), bytes: read("t.trace"), must_fail: true, extra: extra.clone() });
        cases.push(Case { kind: 1, what: format!("decoded with -c {cfg} (bare)"), bytes: read("t.raw"), must_fail: false, extra });
    }

    // Configuration strings: mutations of a valid one (`config` exits 0 or 2).
    let config = "rsdc-32x4-128,sync=100";
    let mut configs: Vec<String> = (0..config.len()).map(|n| config[..n].to_string()).collect();
    for i in 0..config.len() {
        for c in ['x', '9', '-', ',', '='] {
            let mut t = config.to_string();
            t.replace_range(i..i + 1, &c.to_string());
            configs.push(t);
        }
    }
    configs.extend(["rsdc-99999999999999999999x4-128", "rsdc-32x4294967296-128", "rsdc-32x4-128,sync=18446744073709551616", "pft,u=99999", "bsdc-0x0-0"].map(String::from));

    let runs = std::sync::atomic::AtomicUsize::new(0);
    let failures = std::sync::Mutex::new(Vec::<String>::new());
    // Per kind: inputs, and how many of them exited 0 (undetected, or undamaged).
    let tally = std::sync::Mutex::new(std::collections::BTreeMap::<&str, (usize, usize)>::new());
    let check = |kind: &'static str, label: &str, out: &std::process::Output, must_fail: bool, name: &str| {
        runs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut t = tally.lock().unwrap();
        let e = t.entry(kind).or_default();
        e.0 += 1;
        e.1 += out.status.success() as usize;
        drop(t);
        let err = String::from_utf8_lossy(&out.stderr);
        let bad = match out.status.code() {
            None => Some(format!("killed by a signal ({:?})", out.status)),
            Some(101) => Some("exit 101 (panic)".into()),
            _ if err.contains("panicked") => Some("\"panicked\" on stderr".into()),
            Some(0) if must_fail => Some("exit 0 on a damaged input".into()),
            Some(0) => None,
            Some(1 | 2) if !err.contains(name) => Some(format!("the message does not name {name}")),
            Some(1 | 2) => None,
            Some(c) => Some(format!("exit {c}")),
        };
        if let Some(why) = bad {
            let head: String = err.chars().take(300).collect();
            failures.lock().unwrap().push(format!("{label}: {why}\n  stderr: {head}"));
        }
    };
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|sc| {
        for _ in 0..2 {
            sc.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= cases.len() + configs.len() {
                    break;
                }
                if i >= cases.len() {
                    let c = &configs[i - cases.len()];
                    let out = Command::new(env!("CARGO_BIN_EXE_streamtrace")).current_dir(dir).args(["config", "--", c]).output().unwrap();
                    // The message quotes the configuration (or its start, if long).
                    let quoted: String = c.chars().take(40).collect();
                    check("configuration string", &format!("configuration {c:?}"), &out, false, &quoted);
                    continue;
                }
                let case = &cases[i];
                let kind = &kinds[case.kind];
                let name = format!("bad{i}.{}", kind.ext);
                let file = dir.join(&name);
                std::fs::write(&file, &case.bytes).unwrap();
                let outp = dir.join(format!("out{i}"));
                let mut args = (kind.args)(file.to_str().unwrap(), outp.to_str().unwrap());
                match (args.iter().position(|a| a == "-c"), case.extra.get(1)) {
                    (Some(at), Some(cfg)) => args[at + 1] = cfg.clone(),
                    _ => args.extend(case.extra.iter().cloned()),
                }
                let out = Command::new(env!("CARGO_BIN_EXE_streamtrace")).current_dir(dir).args(&args).output().unwrap();
                check(kind.name, &format!("{} ({}): {}", kind.name, name, case.what), &out, case.must_fail, &name);
                let _ = std::fs::remove_file(&file);
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    eprintln!("malformed-input suite: {} runs in {:.1} s; per kind (inputs, exit 0):", runs.into_inner(), start.elapsed().as_secs_f64());
    for (k, (n, zero)) in tally.into_inner().unwrap() {
        eprintln!("  {k}: {n}, {zero}");
    }
    assert!(failures.is_empty(), "{} of the malformed inputs misbehaved:\n{}", failures.len(), failures.join("\n"));
}

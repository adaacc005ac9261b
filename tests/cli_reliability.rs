//! The error convention of issue 22 on the built binary: every subcommand ends quietly when
//! its stdout is closed (SIGPIPE, never a panic), usage and configuration errors exit 2 and
//! data and I/O errors 1, `-` names stdin/stdout wherever a file is named, errors name the
//! file and quote little of the input, and hostile inputs (huge caches, huge ELFs, a CITCAT
//! end key out of reach) are refused before they cost memory or output.

mod common;

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::{exits, fails, ok, programs_dir, streamtrace_in, streamtrace_stdin_in};
use tempfile::TempDir;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs `args` in `dir` with a stdout pipe whose reading end is already closed, as in
/// `streamtrace ... | true` when `true` has exited.
fn with_closed_stdout(dir: &Path, args: &[&str]) -> Output {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let child = Command::new(env!("CARGO_BIN_EXE_streamtrace"))
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .expect("run streamtrace");
    child.wait_with_output().expect("wait")
}

/// Inputs every command of the closed-stdout test needs, made with normal stdout.
struct Fixtures {
    tmp: TempDir,
}

impl Fixtures {
    fn path(&self, name: &str) -> String {
        self.tmp.path().join(name).to_str().unwrap().to_string()
    }
}

fn fixtures() -> Fixtures {
    let f = Fixtures { tmp: TempDir::new().unwrap() };
    let progs = programs_dir();
    let r = root();
    ok(&streamtrace_in(&r, &["encode", "-c", "rsdc-32x4-128", "-e", "tests/data/tiny.events", "-o", &f.path("tiny.trace")]));
    ok(&streamtrace_in(&progs, &["run", "--refs", &f.path("s.din"), "bin/sha256.elf", "1"]));
    ok(&streamtrace_in(&progs, &["run", "--refs", &f.path("s.raw"), "--format", "laplace", "bin/sha256.elf", "1"]));
    ok(&streamtrace_in(&r, &["pdats", "encode", &f.path("s.din"), "-o", &f.path("s.pdats")]));
    ok(&streamtrace_in(&r, &["pdats2", "encode", &f.path("s.din"), "-o", &f.path("s.pdats2")]));
    ok(&streamtrace_in(&r, &["diff", "encode", &f.path("s.raw"), "-o", &f.path("s.diff")]));
    ok(&streamtrace_in(&r, &["sad", "--r", "8", &f.path("s.raw"), "-o", &f.path("s.sad")]));
    ok(&streamtrace_in(&progs, &["wet", "build", "-o", &f.path("t.wet"), "bin/tiny.elf"]));
    let sys = "system/bin/sys_io.elf";
    ok(&streamtrace_in(&progs, &["citcat", "record", sys, "-o", &f.path("r.cat"), "--insns", &f.path("r.trace"), "--max-insns", "3000"]));
    ok(&streamtrace_in(&r, &["citcat", "extract", &f.path("r.cat"), "-o", &f.path("r.ims"), &f.path("r.aes")]));
    ok(&streamtrace_in(&r, &["citcat", "replay", &f.path("r.ims"), &f.path("r.aes"), "--insns", &f.path("p.trace"), "--cat", &f.path("p.cat")]));
    ok(&streamtrace_in(&r, &[
        "sweep", "--configs", "fbase;rsdc-32x4-128", "--max-insns", "20000", "--allow-failures", "--capture-dir", &f.path("caps"), "-o", &f.path("sweep.csv"), "-q",
    ]));
    f
}

/// Every subcommand (and each mode that prints to stdout) with a closed stdout: killed by
/// SIGPIPE (status 141 in a shell) or done before writing, with no message, never a panic.
#[test]
fn a_closed_stdout_ends_every_command_quietly() {
    let f = fixtures();
    let progs = programs_dir();
    let manifest = progs.join("programs.json");
    let manifest = p(&manifest);
    let cosim_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cosim").join("reliability");
    let fp = |n: &str| f.path(n);
    let stage_out = |n: &str| fp(&format!("out-{n}"));
    let commands: Vec<Vec<String>> = vec![
        vec!["--help".into()],
        vec!["config".into(), "rsdc-32x4-128".into()],
        vec!["config".into(), "rsdc-32x4-128".into(), "--json".into()],
        vec!["run".into(), "bin/sha256.elf".into(), "16".into()],
        vec!["run".into(), "--json".into(), "bin/sha256.elf".into(), "16".into()],
        vec!["run".into(), "--pc-trace".into(), "-".into(), "bin/tiny.elf".into()],
        vec!["run".into(), "--events-out".into(), "-".into(), "bin/tiny.elf".into()],
        vec!["encode".into(), "-c".into(), "rsdc-32x4-128".into(), "-e".into(), p(&root().join("tests/data/tiny.events")).into(), "-o".into(), fp("e.trace")],
        vec!["decode".into(), "-c".into(), "rsdc-32x4-128".into(), "--elf".into(), "bin/tiny.elf".into(), "-t".into(), fp("tiny.trace")],
        vec!["decode".into(), "-c".into(), "rsdc-32x4-128".into(), "--elf".into(), "bin/tiny.elf".into(), "-t".into(), fp("tiny.trace"), "-o".into(), "-".into()],
        vec!["dump".into(), "-c".into(), "rsdc-32x4-128".into(), "--elf".into(), "bin/tiny.elf".into(), "-t".into(), fp("tiny.trace")],
        vec!["demo".into(), "-n".into(), "20000".into()],
        vec!["sweep".into(), "--configs".into(), "fbase;rsdc-32x4-128".into(), "--max-insns".into(), "20000".into(), "--allow-failures".into(), "--capture-dir".into(), fp("caps"), "--programs".into(), ".".into()],
        vec!["merge".into(), fp("sweep.csv")],
        vec!["pdats".into(), "encode".into(), fp("s.din"), "-o".into(), stage_out("p1"), "--json".into()],
        vec!["pdats".into(), "decode".into(), fp("s.pdats"), "-o".into(), stage_out("p1d"), "--json".into()],
        vec!["pdats".into(), "decode".into(), fp("s.pdats")],
        vec!["pdats2".into(), "encode".into(), fp("s.din"), "-o".into(), stage_out("p2"), "--json".into()],
        vec!["pdats2".into(), "decode".into(), fp("s.pdats2"), "-o".into(), stage_out("p2d"), "--json".into()],
        vec!["diff".into(), "encode".into(), fp("s.raw"), "-o".into(), stage_out("d"), "--json".into()],
        vec!["diff".into(), "decode".into(), fp("s.diff")],
        vec!["sad".into(), "--r".into(), "8".into(), fp("s.raw"), "-o".into(), stage_out("sad"), "--json".into()],
        vec!["lru".into(), "--pages".into(), "4".into(), fp("s.sad"), "-o".into(), stage_out("lru"), "--json".into()],
        vec!["report".into(), "refs".into(), "--programs".into(), manifest.into(), "--program".into(), "tiny".into(), "--max-insns".into(), "20000".into()],
        vec!["report".into(), "schemes".into(), "--programs".into(), manifest.into(), "--program".into(), "tiny".into(), "--configs".into(), "rsdc-32x4-128".into(), "--max-insns".into(), "20000".into()],
        vec!["report".into(), "wet".into(), "--programs".into(), manifest.into(), "--program".into(), "tiny".into(), "--max-insns".into(), "20000".into()],
        vec!["verilog".into(), "-c".into(), "rsdc-32x4-128".into(), "-o".into(), fp("v")],
        vec!["area".into(), "--configs".into(), "bsdc-8x1-8".into()],
        vec![
            "cosim".into(), "-c".into(), "rsdc-32x4-128".into(), "--max-insns".into(), "1000".into(), "--work-dir".into(), p(&cosim_dir).into(),
            "bin/sha256.elf".into(), "768".into(),
        ],
        vec!["wet".into(), "build".into(), "-o".into(), fp("t2.wet"), "--json".into(), "bin/tiny.elf".into()],
        vec!["wet".into(), "stats".into(), fp("t.wet")],
        vec!["wet".into(), "query".into(), fp("t.wet"), "cf".into(), "--forward".into()],
        vec!["citcat".into(), "record".into(), "system/bin/sys_io.elf".into(), "-o".into(), fp("r2.cat"), "--max-insns".into(), "3000".into()],
        vec!["citcat".into(), "record".into(), "system/bin/sys_io.elf".into(), "-o".into(), fp("r3.cat"), "--max-insns".into(), "3000".into(), "--json".into()],
        vec!["citcat".into(), "extract".into(), fp("r.cat"), "-o".into(), fp("x.ims"), fp("x.aes")],
        vec!["citcat".into(), "replay".into(), fp("r.ims"), fp("r.aes"), "--insns".into(), fp("q.trace")],
        vec!["citcat".into(), "verify".into(), "--insns".into(), fp("r.trace"), fp("p.trace"), "--cat".into(), fp("r.cat"), fp("p.cat")],
        vec!["citcat".into(), "check".into(), "system/bin/sys_io.elf".into(), "--max-insns".into(), "3000".into()],
        vec!["citcat".into(), "report".into(), "system/bin/sys_io.elf".into(), "--max-insns".into(), "3000".into()],
    ];
    for args in &commands {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = with_closed_stdout(&progs, &args);
        let err = stderr(&o);
        let what = args.join(" ");
        assert!(!err.contains("panicked") && o.status.code() != Some(101), "{what}: panic:\n{err}");
        assert!(
            o.status.signal() == Some(libc_sigpipe()) || o.status.success(),
            "{what}: expected SIGPIPE or success, got {:?}:\n{err}",
            o.status
        );
        assert!(!err.contains("error"), "{what}: not quiet:\n{err}");
    }
}

/// SIGPIPE's number on Linux (the tests run there; the binary restores its default action).
fn libc_sigpipe() -> i32 {
    13
}

#[test]
fn usage_and_configuration_errors_exit_2() {
    let tmp = TempDir::new().unwrap();
    let r = root();
    let progs = programs_dir();
    let empty = tmp.path().join("empty");
    std::fs::write(&empty, "").unwrap();
    let e = p(&empty);
    let bad_timing = tmp.path().join("bad.toml");
    std::fs::write(&bad_timing, "[dcache]\nline_bytes = 24\n").unwrap();
    let bad_system = tmp.path().join("sys.toml");
    std::fs::write(&bad_system, "uart_gap_min = 0\n").unwrap();
    let caps = tmp.path().join("caps");
    let c = p(&caps);
    let timing_arg = format!("--timing={}", p(&bad_timing));
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["sad", "--r", "0", e], "--r 0"),
        (vec!["sad", "--r", "4", "--page-size", "3", e], "--page-size 3"),
        (vec!["lru", "--pages", "0", e], "--pages 0"),
        (vec!["pdats2", "encode", "--stride", "3", e], "--stride 3"),
        (vec!["pdats", "encode", "--stride", "2", e], "--stride applies to pdats2 only"),
        (vec!["wet", "query", e, "cf"], "say --forward or --backward"),
        (vec!["demo", "-n", "0"], "1..=10000000"),
        (vec!["citcat", "verify"], "nothing to compare"),
        (vec!["sweep", "--capture-dir", c, "--shard", "0/0"], "--shard 0/0"),
        (vec!["sweep", "--capture-dir", c, "--sdb", "0"], "--sdb 0"),
        (vec!["sweep", "--capture-dir", c, "--buffers", "policy=xyz"], "--buffers"),
        (vec!["run", "-c", "fbase", "-c", "rsdc-32x4-128", "--trace-out", "x", "bin/tiny.elf"], "exactly one --config"),
        (vec!["run", &timing_arg, "bin/tiny.elf"], "dcache.line_bytes"),
        (vec!["citcat", "record", "system/bin/sys_io.elf", "-o", "x.cat", "--timing", p(&bad_timing)], "dcache.line_bytes"),
        (vec!["citcat", "record", "system/bin/sys_io.elf", "-o", "x.cat", "--system", p(&bad_system)], "uart_gap_min"),
        (vec!["config", "qsdc-8x4-32"], "qsdc"),
    ];
    for (args, needle) in cases {
        let o = streamtrace_in(&progs, &args);
        exits(&o, 2, &[needle]);
    }
    // A timing file that cannot be read is an I/O error, not a bad configuration.
    exits(&streamtrace_in(&r, &["run", "--timing=/nonexistent/t.toml", "isa/tests/data/tiny.elf"]), 1, &["/nonexistent/t.toml"]);
    assert!(!progs.join("x.cat").exists() && !progs.join("x").exists());
}

#[test]
fn demo_size_is_capped_without_panics() {
    for n in ["18446744073709551615", "1000000000", "10000001"] {
        exits(&streamtrace_in(&root(), &["demo", "-n", n]), 2, &["1..=10000000"]);
    }
}

#[test]
fn dash_means_stdin_and_stdout() {
    let tmp = TempDir::new().unwrap();
    let progs = programs_dir();
    let r = root();
    // run --pc-trace - and --refs - give what the files get.
    let pcs = tmp.path().join("pcs");
    ok(&streamtrace_in(&progs, &["run", "--pc-trace", p(&pcs), "bin/tiny.elf"]));
    // The program's own output goes to stderr then.
    let o = streamtrace_in(&progs, &["run", "--pc-trace", "-", "bin/tiny.elf"]);
    assert_eq!(ok(&o), std::fs::read_to_string(&pcs).unwrap());
    assert!(stderr(&o).contains("fib(20)"), "{}", stderr(&o));
    assert!(!progs.join("-").exists(), "`-` was taken as a file name");
    let refs = tmp.path().join("refs");
    ok(&streamtrace_in(&progs, &["run", "--refs", p(&refs), "bin/tiny.elf"]));
    let out = ok(&streamtrace_in(&progs, &["run", "--refs", "-", "bin/tiny.elf"]));
    assert_eq!(out, std::fs::read_to_string(&refs).unwrap());
    let both = streamtrace_in(&progs, &["run", "--refs", "-", "--pc-trace", "-", "bin/tiny.elf"]);
    exits(&both, 2, &["would mix on stdout"]);
    // encode -e - reads the events from stdin.
    let events = std::fs::read(r.join("tests/data/tiny.events")).unwrap();
    let (t1, t2) = (tmp.path().join("a.trace"), tmp.path().join("b.trace"));
    ok(&streamtrace_in(&r, &["encode", "-c", "esdc-32x4-128", "-e", "tests/data/tiny.events", "-o", p(&t1)]));
    ok(&streamtrace_stdin_in(&r, &["encode", "-c", "esdc-32x4-128", "-e", "-", "-o", p(&t2)], &events));
    assert_eq!(std::fs::read(&t1).unwrap(), std::fs::read(&t2).unwrap());
    // decode -o - writes the addresses to stdout and its summary to stderr.
    let addrs = tmp.path().join("addrs");
    let dec = ["decode", "-c", "esdc-32x4-128", "--elf", "isa/tests/data/tiny.elf", "-t", p(&t1), "-o"];
    ok(&streamtrace_in(&r, &[&dec[..], &[p(&addrs)]].concat()));
    let o = streamtrace_in(&r, &[&dec[..], &["-"]].concat());
    assert_eq!(ok(&o), std::fs::read_to_string(&addrs).unwrap());
    assert!(stderr(&o).contains("instructions"), "{}", stderr(&o));
    assert!(!r.join("-").exists());
}

#[test]
fn errors_name_the_file_and_quote_little() {
    let tmp = TempDir::new().unwrap();
    let progs = programs_dir();
    fails(&streamtrace_in(&progs, &["run", "--pc-trace", "/dev/full", "bin/tiny.elf"]), "/dev/full");
    exits(&streamtrace_in(&progs, &["run", "--refs", "/dev/full", "bin/tiny.elf"]), 1, &["/dev/full"]);
    // A 1 MB field of an events file is quoted in part.
    let events = tmp.path().join("huge.events");
    std::fs::write(&events, format!("{} 0 A none 0 4\n", "Z".repeat(1 << 20))).unwrap();
    let o = streamtrace_in(tmp.path(), &["encode", "-c", "fbase", "-e", p(&events), "-o", "t"]);
    exits(&o, 1, &["huge.events:1:", "(1048576 bytes)"]);
    assert!(stderr(&o).len() < 400, "{}", stderr(&o));
}

#[test]
fn wet_errors_name_the_file_and_count_instances() {
    let tmp = TempDir::new().unwrap();
    let progs = programs_dir();
    let wet = tmp.path().join("t.wet");
    ok(&streamtrace_in(&progs, &["wet", "build", "-o", p(&wet), "bin/tiny.elf"]));
    let first = ok(&streamtrace_in(&progs, &["wet", "query", p(&wet), "cf", "--forward", "--limit", "1"]));
    let pc = format!("0x{}", first.split_whitespace().next().unwrap());
    let o = streamtrace_in(&progs, &["wet", "query", p(&wet), "slice", &pc, "--instance", "18446744073709551615"]);
    exits(&o, 1, &["no instance 18446744073709551615", "instances count from 0"]);
    // Bit flips in the second half of the file (the label streams): a query that fails names
    // the file, and none panics.
    let bytes = std::fs::read(&wet).unwrap();
    let flipped = tmp.path().join("flipped.wet");
    let mut failures = 0;
    for i in (bytes.len() / 2..bytes.len()).step_by((bytes.len() / 80).max(1)) {
        let mut b = bytes.clone();
        b[i] ^= 0x04;
        std::fs::write(&flipped, &b).unwrap();
        let o = streamtrace_in(&progs, &["wet", "query", p(&flipped), "cf", "--backward"]);
        let err = stderr(&o);
        assert!(!err.contains("panicked"), "{err}");
        if !o.status.success() {
            failures += 1;
            exits(&o, 1, &["flipped.wet"]);
        }
    }
    assert!(failures > 0, "no flip made the query fail");
}

#[test]
fn hostile_inputs_are_refused_before_they_cost() {
    let tmp = TempDir::new().unwrap();
    let progs = programs_dir();
    // An endless "ELF" is read up to the cap, then refused.
    exits(&streamtrace_in(&progs, &["run", "/dev/zero"]), 1, &["/dev/zero", "larger than 268435456 bytes"]);
    // A (sparse) regular file over the cap is refused by its size, by `run` and by `wet
    // build` (which loads programs through the sweep's program spec).
    let big = tmp.path().join("big.elf");
    std::fs::File::create(&big).unwrap().set_len((256 << 20) + 1).unwrap();
    exits(&streamtrace_in(&progs, &["run", p(&big)]), 1, &["big.elf", "larger than 268435456 bytes"]);
    let wet = tmp.path().join("x.wet");
    exits(&streamtrace_in(&progs, &["wet", "build", "-o", p(&wet), p(&big)]), 1, &["big.elf", "larger than 268435456 bytes"]);
    // A 2 GiB direct-mapped cache of 4-byte lines: refused before allocating (exit 2), by
    // `run` and by `citcat record`.
    let huge = tmp.path().join("huge.toml");
    std::fs::write(&huge, "[dcache]\nsize_bytes = 2147483648\nways = 1\nline_bytes = 4\n").unwrap();
    let timing = format!("--timing={}", p(&huge));
    exits(&streamtrace_in(&progs, &["run", &timing, "bin/tiny.elf"]), 2, &["dcache.size_bytes", "64 MiB"]);
    let cat = tmp.path().join("r.cat");
    let rec = ["citcat", "record", "system/bin/sys_io.elf", "-o", p(&cat), "--max-insns", "3000"];
    exits(&streamtrace_in(&progs, &[&rec[..], &["--timing", p(&huge)]].concat()), 2, &["dcache.size_bytes"]);
    // A CITCAT AES whose end key is out of reach (end_tbc = 2^64-1): the replay stops in
    // the final loop instead of writing --max-insns instructions (2.25 GB by default).
    ok(&streamtrace_in(&progs, &rec));
    let (ims, aes) = (tmp.path().join("r.ims"), tmp.path().join("r.aes"));
    ok(&streamtrace_in(&progs, &["citcat", "extract", p(&cat), "-o", p(&ims), p(&aes)]));
    let mut bytes = std::fs::read(&aes).unwrap();
    // end_tbc sits before end_pc and the 16-byte trailer, whose CRC is recomputed (a hostile
    // file, not a damaged one: docs/citcat.md 8).
    let n = bytes.len() - 16;
    bytes[n - 12..n - 4].copy_from_slice(&u64::MAX.to_le_bytes());
    let crc = streamtrace_model::checksum::crc32c(&bytes[..bytes.len() - 4]);
    let len = bytes.len();
    bytes[len - 4..].copy_from_slice(&crc.to_le_bytes());
    let bad = tmp.path().join("bad.aes");
    std::fs::write(&bad, &bytes).unwrap();
    let trace = tmp.path().join("out.trace");
    let o = streamtrace_in(&progs, &["citcat", "replay", p(&ims), p(&bad), "--insns", p(&trace)]);
    exits(&o, 1, &["end key (tbc 18446744073709551615", "beyond the limit"]);
    assert!(std::fs::metadata(&trace).unwrap().len() < 1 << 20);
    // The undamaged AES still replays to its end key inside the same loop.
    ok(&streamtrace_in(&progs, &["citcat", "replay", p(&ims), p(&aes), "--insns", p(&trace)]));
}

#[test]
fn cosim_refuses_an_unwritable_waveform() {
    let progs = programs_dir();
    let o = streamtrace_in(
        &progs,
        &["cosim", "-c", "rsdc-32x4-128", "--max-insns", "1000", "--vcd", "/nonexistent/x.vcd", "bin/sha256.elf", "768"],
    );
    exits(&o, 1, &["/nonexistent/x.vcd"]);
    assert!(!stderr(&o).contains("waveform: "), "{}", stderr(&o));
}

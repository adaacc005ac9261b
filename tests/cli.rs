//! End-to-end tests of the `streamtrace` binary: encode -> decode --verify round trips on a
//! real ARM ELF (isa/tests/data/tiny.elf), the paper's Fig. 4 record listing, bad inputs
//! (each a clear message and the right exit code, never a panic), `demo` and `config`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use streamtrace_isa::{ElfImage, ProgramImage};
use streamtrace_model::events_file::format_event_line;
use streamtrace_model::{BranchClass, RetireEvent};
use tempfile::TempDir;

fn streamtrace(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_streamtrace"))
        .args(args)
        .output()
        .expect("run streamtrace")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[track_caller]
fn assert_ok(o: &Output) {
    assert!(
        o.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        stdout(o),
        stderr(o)
    );
}

#[track_caller]
fn assert_fails(o: &Output, code: i32, needles: &[&str]) {
    assert_eq!(
        o.status.code(),
        Some(code),
        "stdout:\n{}\nstderr:\n{}",
        stdout(o),
        stderr(o)
    );
    let err = stderr(o);
    for n in needles {
        assert!(err.contains(n), "stderr lacks {n:?}:\n{err}");
    }
    assert!(!err.contains("panicked"), "panic:\n{err}");
}

fn p(path: &Path) -> &str {
    path.to_str().expect("utf-8 temp path")
}

fn tiny_elf() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("isa/tests/data/tiny.elf")
}

/// Retire events of `iterations` passes through tiny.s's loop: `_start` (ARM) calls
/// `thumb_func` with BLX, which calls `leaf` with a Thumb BL pair; `leaf` returns with
/// `bx lr`, `thumb_func` with `pop {r4, pc}` back to ARM, and `b _start` closes the loop.
/// Classes and direct targets come from the shared classifier over the ELF image.
fn tiny_events(iterations: usize) -> Vec<RetireEvent> {
    let img = ElfImage::open(tiny_elf()).expect("tiny.elf");
    let mut evs = Vec::new();
    let mut iw = 0x8000u32;
    for _ in 0..iterations * 12 {
        let c = img.classify(iw).expect("mapped");
        let thumb = iw & 1 == 1;
        let pc = iw & !1;
        let insn = if thumb {
            img.read_u16(pc).unwrap() as u32
        } else {
            img.read_u32(pc).unwrap()
        };
        let next = match (iw, c.class) {
            (0x802b, BranchClass::Return) => 0x8029, // leaf: bx lr, back after the BL pair
            (0x8029, BranchClass::Return) => 0x800c, // pop {r4, pc}: back to ARM after the BLX
            (_, BranchClass::DirectUncond) => c.target.unwrap(),
            (_, BranchClass::None) => (pc + if thumb { 2 } else { 4 }) | thumb as u32,
            other => panic!("unexpected {other:x?}"),
        };
        evs.push(RetireEvent {
            pc,
            insn,
            thumb,
            class: c.class,
            taken: c.class != BranchClass::None,
            next_pc: next,
            ..Default::default()
        });
        iw = next;
    }
    evs
}

fn write_events(path: &Path, evs: &[RetireEvent]) {
    let mut text = String::from("# pc insn state class taken next_pc\n");
    for e in evs {
        text.push_str(&format_event_line(e));
        text.push('\n');
    }
    std::fs::write(path, text).unwrap();
}

/// A minimal ELF32 little-endian executable: the header and one PT_LOAD of `code` at `base`.
/// (A test fixture writer; the reader under test is the isa crate's.)
fn elf32(machine: u16, base: u32, code: &[u8]) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&[0x7f, b'E', b'L', b'F', 1, 1, 1, 0]);
    b.extend_from_slice(&[0; 8]);
    let h16 = |b: &mut Vec<u8>, v: u16| b.extend_from_slice(&v.to_le_bytes());
    let h32 = |b: &mut Vec<u8>, v: u32| b.extend_from_slice(&v.to_le_bytes());
    h16(&mut b, 2); // ET_EXEC
    h16(&mut b, machine);
    h32(&mut b, 1); // EV_CURRENT
    h32(&mut b, base); // e_entry
    h32(&mut b, 52); // e_phoff
    h32(&mut b, 0); // e_shoff
    h32(&mut b, 0x0500_0000); // e_flags: EABI5
    h16(&mut b, 52); // e_ehsize
    h16(&mut b, 32); // e_phentsize
    h16(&mut b, 1); // e_phnum
    h16(&mut b, 40); // e_shentsize
    h16(&mut b, 0); // e_shnum
    h16(&mut b, 0); // e_shstrndx
    assert_eq!(b.len(), 52);
    for v in [
        1,
        84,
        base,
        base,
        code.len() as u32,
        code.len() as u32,
        5,
        4,
    ] {
        h32(&mut b, v); // PT_LOAD, offset, vaddr, paddr, filesz, memsz, R+X, align
    }
    b.extend_from_slice(code);
    b
}

const FIG4_LOOP: u32 = 0x0200_01f4;

/// The paper's Fig. 4 loop body and the `bx lr` after it.
const FIG4_WORDS: [u32; 10] = [
    0xE1A0_110C, // mov r1, r12, lsl #2
    0xE794_2001, // ldr r2, [r4, r1]
    0xE79E_3001, // ldr r3, [r14, r1]
    0xE020_3892, // mla r0, r2, r8, r3
    0xE28C_C001, // add r12, r12, #1
    0xE35C_0063, // cmp r12, #99
    0xE086_6000, // add r6, r6, r0
    0xE785_0001, // str r0, [r5, r1]
    0xDAFF_FFF6, // ble 0x020001f4
    0xE12F_FF1E, // bx lr
];

/// 100 iterations of the loop, then `bx lr` (to 0x8000, outside the image: never replayed).
fn fig4_events() -> Vec<RetireEvent> {
    let mut evs = Vec::new();
    for iter in 0..100 {
        for i in 0..9u32 {
            let pc = FIG4_LOOP + 4 * i;
            let last = i == 8;
            let taken = last && iter < 99;
            evs.push(RetireEvent {
                pc,
                insn: FIG4_WORDS[i as usize],
                class: if last {
                    BranchClass::DirectCond
                } else {
                    BranchClass::None
                },
                taken,
                next_pc: if taken { FIG4_LOOP } else { pc + 4 },
                ..Default::default()
            });
        }
    }
    let pc = FIG4_LOOP + 36;
    evs.push(RetireEvent {
        pc,
        insn: FIG4_WORDS[9],
        class: BranchClass::Return,
        taken: true,
        next_pc: 0x8000,
        ..Default::default()
    });
    evs
}

fn fig4_fixture(dir: &Path) -> (PathBuf, PathBuf) {
    let code: Vec<u8> = FIG4_WORDS.iter().flat_map(|w| w.to_le_bytes()).collect();
    let elf = dir.join("fig4.elf");
    std::fs::write(&elf, elf32(40, FIG4_LOOP, &code)).unwrap();
    let events = dir.join("fig4.events");
    write_events(&events, &fig4_events());
    (elf, events)
}

const ROUNDTRIP_CONFIGS: &[&str] = &[
    "fbase",
    "base",
    "nexs",
    "bsdc-16x4-64",
    "bsdc-8x2-16,repl=lru,hist=2",
    "esdc-32x4-128",
    "esdc-8x4-32,olc=1,olcmax=3",
    "rsdc-32x4-128",
    "rsdc-8x4-32,maxsl=5,sync=30",
    "nexs,maxsl=4",
];

#[test]
fn encode_decode_verify_roundtrip_on_tiny_elf() {
    let dir = TempDir::new().unwrap();
    let events = dir.path().join("tiny.events");
    let evs = tiny_events(40);
    write_events(&events, &evs);
    let elf = tiny_elf();
    for cfg in ROUNDTRIP_CONFIGS {
        let trace = dir.path().join("tiny.trace");
        let stats = dir.path().join("stats.json");
        let o = streamtrace(&[
            "encode",
            "-c",
            cfg,
            "-e",
            p(&events),
            "-o",
            p(&trace),
            "--stats-out",
            p(&stats),
        ]);
        assert_ok(&o);
        let text = stdout(&o);
        assert!(
            text.contains("bits/instr") && text.contains("hLSPt"),
            "{cfg}: {text}"
        );
        let s: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
        assert_eq!(s["instructions"], evs.len() as u64, "{cfg}");

        let addrs = dir.path().join("addrs.txt");
        let o = streamtrace(&[
            "decode",
            "-c",
            cfg,
            "--elf",
            p(&elf),
            "-t",
            p(&trace),
            "--verify",
            p(&events),
            "--out",
            p(&addrs),
        ]);
        assert_ok(&o);
        assert!(
            stdout(&o).contains(&format!("yes: all {} instructions match", evs.len())),
            "{}",
            stdout(&o)
        );
        let lines: Vec<String> = std::fs::read_to_string(&addrs)
            .unwrap()
            .lines()
            .map(String::from)
            .collect();
        let want: Vec<String> = evs
            .iter()
            .map(|e| format!("{:08x} {}", e.pc, if e.thumb { 'T' } else { 'A' }))
            .collect();
        assert_eq!(lines, want, "{cfg}");

        let o = streamtrace(&[
            "decode",
            "-c",
            cfg,
            "--elf",
            p(&elf),
            "-t",
            p(&trace),
            "--json",
        ]);
        assert_ok(&o);
        let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(j["instructions"], evs.len() as u64);
        assert_eq!(j["ended_cleanly"], true);
        assert_eq!(j["errors"].as_array().unwrap().len(), 0);
    }
}

#[test]
fn verify_names_the_first_mismatch() {
    let dir = TempDir::new().unwrap();
    let events = dir.path().join("tiny.events");
    let mut evs = tiny_events(5);
    write_events(&events, &evs);
    let trace = dir.path().join("t.bin");
    assert_ok(&streamtrace(&[
        "encode",
        "-c",
        "bsdc-16x4-64",
        "-e",
        p(&events),
        "-o",
        p(&trace),
    ]));

    // Wrong pc at instruction 7 (file line 9: one comment line, 1-based).
    evs[7].pc += 4;
    let bad = dir.path().join("bad.events");
    write_events(&bad, &evs);
    let elf = tiny_elf();
    let o = streamtrace(&[
        "decode",
        "-c",
        "bsdc-16x4-64",
        "--elf",
        p(&elf),
        "-t",
        p(&trace),
        "--verify",
        p(&bad),
    ]);
    let expect_pc = format!("expected {:08x} T", evs[7].pc);
    let got_pc = format!("decoded {:08x} T", evs[7].pc - 4);
    assert_fails(
        &o,
        1,
        &["instruction 7", "bad.events:9", &expect_pc, &got_pc],
    );

    // Fewer events than decoded instructions, and more.
    let short = dir.path().join("short.events");
    write_events(&short, &tiny_events(5)[..50]);
    let o = streamtrace(&[
        "decode",
        "-c",
        "bsdc-16x4-64",
        "--elf",
        p(&elf),
        "-t",
        p(&trace),
        "--verify",
        p(&short),
    ]);
    assert_fails(&o, 1, &["instruction 50", "ends after 50 instructions"]);
    let long = dir.path().join("long.events");
    write_events(&long, &tiny_events(6));
    let o = streamtrace(&[
        "decode",
        "-c",
        "bsdc-16x4-64",
        "--elf",
        p(&elf),
        "-t",
        p(&trace),
        "--verify",
        p(&long),
    ]);
    assert_fails(&o, 1, &["instruction 60", "produced only 60 instructions"]);
}

#[test]
fn dump_lists_fig4_records() {
    let dir = TempDir::new().unwrap();
    let (elf, events) = fig4_fixture(dir.path());
    let trace = dir.path().join("fig4.trace");
    let o = streamtrace(&[
        "encode",
        "-c",
        "bsdc-16x4-64",
        "-e",
        p(&events),
        "-o",
        p(&trace),
        "--json",
    ]);
    assert_ok(&o);
    let stats: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(stats["streams"], 100);
    assert_eq!(
        stats["total_bits"],
        47 + 14 + 96 + 15 + 17 + 3,
        "records, END, padding"
    );

    let o = streamtrace(&[
        "dump",
        "-c",
        "bsdc-16x4-64",
        "--elf",
        p(&elf),
        "-t",
        p(&trace),
    ]);
    assert_ok(&o);
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 101, "{text}");
    let norm = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    assert_eq!(
        norm(lines[0]),
        "bit 000000 byte 000000.0 len 47 icount 0 SDC-MISS sl=9 addr=0x020001f4 -> stream 0x020001f4 A len 9"
    );
    assert_eq!(
        norm(lines[1]),
        "bit 000047 byte 000005.7 len 7 icount 9 SDC-HIT si=24 -> stream 0x020001f4 A len 9"
    );
    assert_eq!(
        norm(lines[2]),
        "bit 000054 byte 000006.6 len 7 icount 18 SDC-HIT si=24 -> stream 0x020001f4 A len 9"
    );
    for (i, line) in lines[3..99].iter().enumerate() {
        assert_eq!(
            norm(line),
            format!(
                "bit {:06} byte {:06}.{} len 1 icount {} LSP-HIT -> stream 0x020001f4 A len 9",
                61 + i,
                (61 + i) / 8,
                (61 + i) % 8,
                27 + 9 * i
            )
        );
    }
    assert_eq!(
        norm(lines[99]),
        "bit 000157 byte 000019.5 len 15 icount 891 SDC-MISS sl=10 inferred -> stream 0x020001f4 A len 10"
    );
    assert_eq!(
        norm(lines[100]),
        "bit 000172 byte 000021.4 len 20 icount 901 END",
        "END + 3 padding bits"
    );

    // --limit counts records.
    let o = streamtrace(&[
        "dump",
        "-c",
        "bsdc-16x4-64",
        "--elf",
        p(&elf),
        "-t",
        p(&trace),
        "--limit",
        "3",
    ]);
    assert_ok(&o);
    assert_eq!(stdout(&o).lines().count(), 3);

    // JSON: one object per record.
    let o = streamtrace(&[
        "dump",
        "-c",
        "bsdc-16x4-64",
        "--elf",
        p(&elf),
        "-t",
        p(&trace),
        "--json",
    ]);
    assert_ok(&o);
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let recs = j.as_array().unwrap();
    assert_eq!(recs.len(), 101);
    assert_eq!(recs[1]["kind"], "SDC-HIT");
    assert_eq!(recs[1]["si"], 24);
    assert_eq!(recs[1]["bit"], 47);
    assert_eq!(recs[1]["streams"][0]["sl"], 9);
    assert_eq!(recs[100]["kind"], "END");
}

#[test]
fn dump_shows_aolc_runs_with_their_streams() {
    let dir = TempDir::new().unwrap();
    let (elf, events) = fig4_fixture(dir.path());
    let trace = dir.path().join("fig4.trace");
    assert_ok(&streamtrace(&[
        "encode",
        "-c",
        "esdc-16x4-64",
        "-e",
        p(&events),
        "-o",
        p(&trace),
    ]));
    let o = streamtrace(&[
        "dump",
        "-c",
        "esdc-16x4-64",
        "--elf",
        p(&elf),
        "-t",
        p(&trace),
    ]);
    assert_ok(&o);
    let text = stdout(&o);
    let runs: Vec<&str> = text.lines().filter(|l| l.contains("LSP-RUN")).collect();
    assert!(!runs.is_empty(), "{text}");
    // eSDC's first miss carries L = '0' + A(32) (the LVSA is 0 after reset): 48 bits, then
    // two 7-bit SDC hits; the first run record fills the initial 4-bit counter: 16 hits in
    // 5 bits at bit 62.
    let first = runs[0].split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        first.starts_with("bit 000062 byte 000007.6 len 5 icount 27 LSP-RUN n=16 s=4"),
        "{first}"
    );
    let indented = text
        .lines()
        .filter(|l| {
            // A stream under a run: the run's offsets, no length of its own, no record name.
            let t: Vec<&str> = l.split_whitespace().collect();
            t[4] == "len" && t[5] == "icount" && l.ends_with(" -> stream 0x020001f4 A len 9")
        })
        .count();
    assert_eq!(indented, 96, "{text}");
    // --limit 4: miss, 2 SDC hits, and the first run with its 16 streams.
    let o = streamtrace(&[
        "dump",
        "-c",
        "esdc-16x4-64",
        "--elf",
        p(&elf),
        "-t",
        p(&trace),
        "-n",
        "4",
    ]);
    assert_ok(&o);
    assert_eq!(stdout(&o).lines().count(), 3 + 1 + 16, "{}", stdout(&o));
}

#[test]
fn from_sync_decodes_the_tail() {
    let dir = TempDir::new().unwrap();
    let events = dir.path().join("tiny.events");
    let evs = tiny_events(20);
    write_events(&events, &evs);
    let trace = dir.path().join("t.bin");
    let cfg = "rsdc-32x4-128,sync=50";
    // A probe's capture: the bare bit stream.
    assert_ok(&streamtrace(&[
        "encode",
        "-c",
        cfg,
        "-e",
        p(&events),
        "-o",
        p(&trace),
        "--raw",
    ]));
    // Drop the first 5 bytes, as if capture started late.
    let bytes = std::fs::read(&trace).unwrap();
    let late = dir.path().join("late.bin");
    std::fs::write(&late, &bytes[5..]).unwrap();
    let elf = tiny_elf();
    let addrs = dir.path().join("addrs.txt");
    let o = streamtrace(&[
        "decode",
        "--raw",
        "-c",
        cfg,
        "--elf",
        p(&elf),
        "-t",
        p(&late),
        "--from-sync",
        "--out",
        p(&addrs),
    ]);
    assert_ok(&o);
    let lines: Vec<String> = std::fs::read_to_string(&addrs)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    assert!(!lines.is_empty() && lines.len() < evs.len());
    let want: Vec<String> = evs[evs.len() - lines.len()..]
        .iter()
        .map(|e| format!("{:08x} {}", e.pc, if e.thumb { 'T' } else { 'A' }))
        .collect();
    assert_eq!(lines, want, "the decoded tail equals the run's tail");
    assert!(stdout(&o).contains("first sync marker"));

    // No marker at all.
    let o = streamtrace(&[
        "decode",
        "--raw",
        "-c",
        cfg,
        "--elf",
        p(&elf),
        "-t",
        p(&late),
        "--from-sync",
        "--verify",
        p(&events),
    ]);
    // --from-sync with --verify places the sync by re-encoding the events: a trace cut at
    // its front cannot be placed, and says so (the whole trace verifies from its first
    // sync: tests/cli_conventions.rs).
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("needs the trace as written from its start"), "{}", stderr(&o));
    let plain = dir.path().join("plain.bin");
    assert_ok(&streamtrace(&[
        "encode",
        "-c",
        "bsdc-16x4-64",
        "-e",
        p(&events),
        "-o",
        p(&plain),
    ]));
    let o = streamtrace(&[
        "decode",
        "-c",
        "bsdc-16x4-64",
        "--elf",
        p(&elf),
        "-t",
        p(&plain),
        "--from-sync",
    ]);
    assert_fails(&o, 1, &["plain.bin", "no sync marker"]);
}

#[test]
fn truncated_and_corrupt_traces_report_bit_offsets() {
    let dir = TempDir::new().unwrap();
    let events = dir.path().join("tiny.events");
    write_events(&events, &tiny_events(10));
    // Bare bit streams: the decoder's own checks (trace files: tests/cli_container.rs).
    let trace = dir.path().join("t.bin");
    assert_ok(&streamtrace(&[
        "encode",
        "-c",
        "esdc-32x4-128",
        "-e",
        p(&events),
        "-o",
        p(&trace),
        "--raw",
    ]));
    let bytes = std::fs::read(&trace).unwrap();
    let elf = tiny_elf();
    for cut in [0, 1, bytes.len() / 2, bytes.len() - 1] {
        let t = dir.path().join(format!("cut{cut}.bin"));
        std::fs::write(&t, &bytes[..cut]).unwrap();
        for cmd in ["decode", "dump"] {
            let o = streamtrace(&[cmd, "--raw", "-c", "esdc-32x4-128", "--elf", p(&elf), "-t", p(&t)]);
            assert_fails(&o, 1, &[&format!("cut{cut}.bin"), "bit ", "truncated"]);
        }
    }
    // Garbage: an error with an offset, never a panic.
    let junk = dir.path().join("junk.bin");
    std::fs::write(&junk, [0xFFu8; 64]).unwrap();
    for cfg in [
        "bsdc-16x4-64",
        "esdc-32x4-128",
        "rsdc-32x4-128",
        "fbase",
        "base",
        "nexs",
    ] {
        let o = streamtrace(&["decode", "--raw", "-c", cfg, "--elf", p(&elf), "-t", p(&junk)]);
        assert_fails(&o, 1, &["junk.bin", "bit "]);
        let o = streamtrace(&["dump", "--raw", "-c", cfg, "--elf", p(&elf), "-t", p(&junk)]);
        assert_fails(&o, 1, &["junk.bin", "decode error"]);
    }
    // The wrong configuration for a bare trace.
    let o = streamtrace(&[
        "decode",
        "--raw",
        "-c",
        "bsdc-16x4-64",
        "--elf",
        p(&elf),
        "-t",
        p(&trace),
    ]);
    assert_fails(&o, 1, &["t.bin", "bit "]);
}

#[test]
fn bad_inputs_get_clear_errors() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    let out = d.join("out.bin");
    let elf = tiny_elf();

    let o = streamtrace(&[
        "encode",
        "-c",
        "bsdc-16x4-64",
        "-e",
        p(&d.join("nope.events")),
        "-o",
        p(&out),
    ]);
    assert_fails(&o, 1, &["nope.events", "cannot open events file"]);

    let ev = d.join("bad.events");
    std::fs::write(
        &ev,
        "# header\n00008000 e59f0010 A none 0 00008004\n00008004 e5900000 A nonsense 0 00008008\n",
    )
    .unwrap();
    let o = streamtrace(&["encode", "-c", "bsdc-16x4-64", "-e", p(&ev), "-o", p(&out)]);
    assert_fails(&o, 1, &["bad.events:3:", "unknown branch class 'nonsense'"]);

    std::fs::write(
        &ev,
        "00008000 e59f0010 A none 0 00008004\n00008010 e5900000 A none 0 00008014\n",
    )
    .unwrap();
    let o = streamtrace(&["encode", "-c", "bsdc-16x4-64", "-e", p(&ev), "-o", p(&out)]);
    assert_fails(&o, 1, &["bad.events:2:", "does not follow"]);

    // Events that contradict themselves, under a stream scheme and under pft (which used to
    // leave a slot symbol open on the first: a debug assertion, a corrupt trace in release).
    for (line, want) in [
        ("00008004 e12fff13 A iuncond 0 00008008", "class iuncond always changes the PC but the event says not taken"),
        ("00008004 0000 T ret 0 00008007", "class ret always changes the PC"),
        ("00008004 e5900000 A none 1 00008100", "class none cannot change the PC but the event says taken"),
        ("00008004 1a000010 A dcond 0 00008100", "not taken but next_pc 0x00008100 is not the next instruction 0x00008008"),
    ] {
        // (The Thumb case is entered by a BX to 0x8004 | 1.)
        let first = if line.contains(" T ") { "00008000 e12fff13 A iuncond 1 00008005" } else { "00008000 e59f0010 A none 0 00008004" };
        std::fs::write(&ev, format!("{first}\n{line}\n")).unwrap();
        for cfg in ["bsdc-16x4-64", "pft"] {
            let o = streamtrace(&["encode", "-c", cfg, "-e", p(&ev), "-o", p(&out)]);
            assert_fails(&o, 1, &["bad.events:2:", "event 1: pc 0x00008004 (state ", want]);
        }
    }
    // A conditional return that fails its condition is fine; so is an exception from any class.
    std::fs::write(
        &ev,
        "00008000 e59f0010 A none 0 00008004\n00008004 18bd8010 A ret 0 00008008\n00008008 e12fff13 A iuncond 0 00000008 exc\n",
    )
    .unwrap();
    for cfg in ["bsdc-16x4-64", "pft"] {
        assert_ok(&streamtrace(&["encode", "-c", cfg, "-e", p(&ev), "-o", p(&out)]));
    }

    // A malformed line in the file given to --verify.
    let good = d.join("good.events");
    write_events(&good, &tiny_events(2));
    assert_ok(&streamtrace(&[
        "encode",
        "-c",
        "base",
        "-e",
        p(&good),
        "-o",
        p(&out),
    ]));
    let mut text = std::fs::read_to_string(&good).unwrap();
    text = text.replacen(" A none ", " Q none ", 1);
    std::fs::write(&ev, text).unwrap();
    let o = streamtrace(&[
        "decode",
        "-c",
        "base",
        "--elf",
        p(&elf),
        "-t",
        p(&out),
        "--verify",
        p(&ev),
    ]);
    assert_fails(&o, 1, &["bad.events:2:", "state 'Q'"]);

    for args in [
        vec![
            "encode",
            "-c",
            "rsdc-24x4-128",
            "-e",
            p(&good),
            "-o",
            p(&out),
        ],
        vec![
            "decode",
            "-c",
            "rsdc-24x4-128",
            "--elf",
            p(&elf),
            "-t",
            p(&out),
        ],
        vec!["demo", "-c", "rsdc-24x4-128", "-n", "100"],
        vec!["config", "rsdc-24x4-128"],
    ] {
        let o = streamtrace(&args);
        assert_fails(
            &o,
            2,
            &["bad configuration 'rsdc-24x4-128'", "not a power of two"],
        );
    }
    let o = streamtrace(&["config", "bsdc-16x4-64,colour=red"]);
    assert_fails(&o, 2, &["unknown key 'colour'"]);

    // Not an ELF, a non-ARM ELF, a truncated ELF, a missing ELF, a missing trace.
    let txt = d.join("notes.txt");
    std::fs::write(&txt, "hello").unwrap();
    let o = streamtrace(&["decode", "-c", "base", "--elf", p(&txt), "-t", p(&out)]);
    assert_fails(&o, 1, &["notes.txt", "not an ELF file"]);
    let x86 = d.join("x86.elf");
    std::fs::write(&x86, elf32(3, 0x8000, &[0x90; 16])).unwrap();
    let o = streamtrace(&["dump", "-c", "base", "--elf", p(&x86), "-t", p(&out)]);
    assert_fails(
        &o,
        1,
        &["x86.elf", "x86", "expected 32-bit little-endian ARM"],
    );
    let half = d.join("half.elf");
    let full = std::fs::read(elf).unwrap();
    std::fs::write(&half, &full[..40]).unwrap();
    let o = streamtrace(&["decode", "-c", "base", "--elf", p(&half), "-t", p(&out)]);
    assert_fails(&o, 1, &["half.elf", "truncated"]);
    let o = streamtrace(&[
        "decode",
        "-c",
        "base",
        "--elf",
        p(&d.join("none.elf")),
        "-t",
        p(&out),
    ]);
    assert_fails(&o, 1, &["none.elf"]);
    let o = streamtrace(&[
        "decode",
        "-c",
        "base",
        "--elf",
        p(&tiny_elf()),
        "-t",
        p(&d.join("none.bin")),
    ]);
    assert_fails(&o, 1, &["none.bin", "cannot open trace file"]);

    // Usage errors exit 2.
    let o = streamtrace(&["encode", "-c", "base"]);
    assert_eq!(o.status.code(), Some(2));
    let o = streamtrace(&["frobnicate"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn demo_verifies_every_default_config() {
    let o = streamtrace(&["demo", "--instructions", "30000", "--seed", "3"]);
    assert_ok(&o);
    let text = stdout(&o);
    for cfg in [
        "fbase",
        "base",
        "nexs",
        "bsdc-32x4-128",
        "esdc-32x4-128",
        "rsdc-32x4-128",
    ] {
        let row = text
            .lines()
            .find(|l| l.starts_with(&format!("{cfg} ")))
            .unwrap_or_else(|| panic!("{cfg}: {text}"));
        assert!(row.contains(" yes "), "{row}");
    }
    assert!(text.contains("verified: 6 of 6"), "{text}");

    let o = streamtrace(&[
        "demo",
        "-n",
        "20000",
        "--json",
        "-c",
        "bsdc-16x4-64",
        "-c",
        "rsdc-32x4-128,isa=arm",
    ]);
    assert_ok(&o);
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("demo --json is JSON");
    let rows = j["results"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert!(rows.iter().all(|r| r["verified"] == true), "{j}");
    assert_eq!(rows[1]["config"], "rsdc-32x4-128,isa=arm");
    assert_eq!(rows[0]["stats"]["instructions"], 20000);
    assert_eq!(j["program"]["arm_only_variant"], true);

    let o = streamtrace(&["demo", "-n", "5000", "--csv"]);
    assert_ok(&o);
    let csv = stdout(&o);
    let mut lines = csv.lines();
    assert!(lines
        .next()
        .unwrap()
        .starts_with("config,bits_per_instruction,"));
    assert_eq!(lines.count(), 6);
}

#[test]
fn config_prints_canonical_form_and_derived_parameters() {
    let o = streamtrace(&["config", "RSDC-32x4-128,shift=4,u=12"]);
    assert_ok(&o);
    let text = stdout(&o);
    assert!(
        text.lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["canonical", "rsdc-32x4-128"]),
        "{text}"
    );
    assert!(text.contains("127 entries"), "{text}");

    let o = streamtrace(&["config", "rsdc-32x4-128,isa=arm", "--json"]);
    assert_ok(&o);
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(j["canonical"], "rsdc-32x4-128,isa=arm");
    assert_eq!(j["index_bits"], 7);
    assert_eq!(j["sl_bits"], 8);
    assert_eq!(j["enhanced"]["u"], 12);
    assert_eq!(j["record_bits"]["sdc_hit"], 8);
    assert_eq!(j["record_bits"]["inferred"], 16);
    assert_eq!(j["record_bits"]["address_lvsa_hit"], 16 + 1 + 18);
    assert_eq!(j["storage"]["total"], 4042, "the paper's storage figure");

    let o = streamtrace(&["config", "bsdc-16x4-64", "--json"]);
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        (
            j["record_bits"]["sdc_hit"].as_u64(),
            j["record_bits"]["address"].as_u64()
        ),
        (Some(7), Some(47))
    );

    // pft: its own keys and storage by component (docs/trace-format.md 11.1, 11.8).
    let o = streamtrace(&["config", "PFT,ras=9,hlen=3-5-9-16-30-64,itt=16,tw=21,sync=1000", "--json"]);
    assert_ok(&o);
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(j["canonical"], "pft,sync=1000");
    assert_eq!(j["pft"]["hlen"], serde_json::json!([3, 5, 9, 16, 30, 64]));
    assert_eq!(j["pft"]["tw"], 21);
    assert_eq!(
        j["pft"]["storage"]["direction"],
        2 * 256 + 6 * 32 * 11 + 64 + 3 + (2 + 5 + 3),
        "the 3-bit allocation register, the 2-bit ageing counter and the sweep pointer (entry 5 bits, table 3)"
    );
    // 21 low target bits and the top-region flag per entry, a confidence bit per base entry,
    // 4-bit tags and a useful bit per tagged entry.
    assert_eq!(j["pft"]["storage"]["itp"], 16 * (22 + 1) + 16 * (4 + 22 + 1) + 8);
    // RTC entries held as ITP entries: 22 bits each, and the 4-bit fill count.
    assert_eq!(j["pft"]["storage"]["rtc"], 8 * 22 + 4);
    assert_eq!(j["storage"]["pft"], 4753 + 32, "the sync counter adds 32 bits");
    assert_eq!(j["storage"]["sdb"], 2 * 48 + 2 * 32, "two 48-bit control entries and two 32-bit words (trace-timing.md 7)");
    assert_eq!(j["storage"]["total"], 4753 + 32 + 2 * 48 + 2 * 32 + 80);
    let o = streamtrace(&["config", "pft,tw=32", "--json"]);
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(j["pft"]["storage"]["itp"], 16 * 33 + 16 * (4 + 33) + 8, "tw=32: whole targets");
    assert_fails(&streamtrace(&["config", "pft,tw=1"]), 2, &["tw=1"]);
    let o = streamtrace(&["config", "pft"]);
    assert!(stdout(&o).contains("pft storage   4753"), "{}", stdout(&o));
    assert!(stdout(&o).contains("storage bits  4993 (pft 4753, job buffer 160, output buffer 80)"), "{}", stdout(&o));
    assert_fails(&streamtrace(&["config", "pft,maxsl=100"]), 2, &["does not apply to pft"]);
}

#[test]
fn help_lists_every_subcommand() {
    let o = streamtrace(&["--help"]);
    assert_ok(&o);
    let text = stdout(&o);
    for sub in ["encode", "decode", "dump", "demo", "config"] {
        assert!(text.contains(sub), "{text}");
    }
}

/// tests/data/tiny.events (used by the README's examples) is what the classifier says.
#[test]
fn checked_in_tiny_events_match_the_elf() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tiny.events");
    let text = std::fs::read_to_string(&path).unwrap();
    let evs = streamtrace_model::events_file::read_events(text.as_bytes(), "tiny.events").unwrap();
    assert_eq!(evs, tiny_events(10));
    let dir = TempDir::new().unwrap();
    let trace = dir.path().join("tiny.trace");
    assert_ok(&streamtrace(&[
        "encode",
        "-c",
        "rsdc-32x4-128",
        "-e",
        p(&path),
        "-o",
        p(&trace),
    ]));
    let o = streamtrace(&[
        "decode",
        "-c",
        "rsdc-32x4-128",
        "--elf",
        p(&tiny_elf()),
        "-t",
        p(&trace),
        "--verify",
        p(&path),
    ]);
    assert_ok(&o);
}

// ---- run: the core model on real programs --------------------------------------------------

fn programs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testbenches/programs")
}

#[test]
fn run_builtin_program_reports_and_exits_with_its_status() {
    let o = streamtrace(&["run", "--json"]);
    assert_ok(&o);
    let out = stdout(&o);
    assert!(out.starts_with("jpeg_dct: 128x96"), "program output passes through first: {out}");
    let json: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(json["exit_code"], 0);
    assert!(json["instructions"].as_u64().unwrap() > 5_000_000);
    assert!(json["mips"].as_f64().unwrap() > 0.0);
    assert_eq!(json["profile"]["instructions"], json["instructions"]);
}

#[test]
fn run_trace_out_decodes_to_the_pc_trace() {
    let dir = TempDir::new().unwrap();
    let elf = programs_dir().join("bin/tiny.elf");
    let pcs = dir.path().join("pcs.txt");
    let trace = dir.path().join("t.bin");
    let addrs = dir.path().join("addrs.txt");
    let (elf_s, pcs_s, trace_s, addrs_s) =
        (elf.to_str().unwrap(), pcs.to_str().unwrap(), trace.to_str().unwrap(), addrs.to_str().unwrap());
    for cfg in ["rsdc-32x4-128", "nexs", "esdc-8x4-32,sync=500", "pft", "pft,sync=700,isa=arm"] {
        let o = streamtrace(&["run", "--config", cfg, "--trace-out", trace_s, "--pc-trace", pcs_s, elf_s]);
        assert_ok(&o);
        assert!(stdout(&o).contains("fib(20)=6765"), "{}", stdout(&o));
        assert!(stderr(&o).contains("bits/instr"), "{}", stderr(&o));
        assert_ok(&streamtrace(&["decode", "--config", cfg, "--elf", elf_s, "--trace", trace_s, "--out", addrs_s]));
        // One address-list format on both sides: the files are equal byte for byte.
        let want = std::fs::read_to_string(&pcs).unwrap();
        assert!(want.lines().count() > 4000, "{cfg}: {} PCs", want.lines().count());
        assert_eq!(std::fs::read_to_string(&addrs).unwrap(), want, "{cfg}");
    }
}

#[test]
fn run_bad_inputs_fail_clearly() {
    let dir = TempDir::new().unwrap();
    let elf = programs_dir().join("bin/tiny.elf");
    let o = streamtrace(&["run", "/bin/true"]);
    assert_fails(&o, 1, &["/bin/true", "x86-64"]);
    let o = streamtrace(&["run", dir.path().join("missing.elf").to_str().unwrap()]);
    assert_fails(&o, 1, &["missing.elf"]);
    let o = streamtrace(&["run", "-c", "rsdc-33x4-128", elf.to_str().unwrap()]);
    assert_fails(&o, 2, &["not a power of two"]);
    let o = streamtrace(&["run", "-c", "base", "-c", "nexs", "--trace-out", "x.bin", elf.to_str().unwrap()]);
    assert_fails(&o, 2, &["exactly one --config"]);
}

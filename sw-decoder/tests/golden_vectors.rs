//! Golden vectors: self-describing .stv files in testbenches/vectors/ (format:
//! docs/vectors-format.md) that let decoder writers check their decoders bit for bit.
//!
//! * `golden_vector_files`: every scenario of `golden::scenarios` rendered again must equal
//!   its file, byte for byte, and every file must pass the independent checker
//!   (`golden::verify`: parse, spec field layouts, encode with the model, decode with the
//!   sw-decoder). A disagreement FAILS; nothing is rewritten unless the files are
//!   regenerated explicitly:
//!
//!   STREAMTRACE_REGEN_VECTORS=1 cargo test -p streamtrace-sw-decoder --test golden_vectors
//!
//! * `tampered_vectors_are_rejected`: the checker catches edits to bytes, fields,
//!   addresses and elements.
//! * `hand_checked_records`: record bits derived by hand from docs/trace-format.md.

mod golden;

use std::collections::BTreeSet;
use std::fs;
use std::path::PathBuf;
use std::sync::Mutex;

use golden::{render, scenarios, verify};

/// Serializes the tests that read the files with the one that may regenerate them.
static FILES: Mutex<()> = Mutex::new(());

fn vectors_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testbenches/vectors")
}

fn regen() -> bool {
    std::env::var("STREAMTRACE_REGEN_VECTORS").is_ok_and(|v| v == "1")
}

fn first_difference(a: &str, b: &str) -> String {
    for (i, (x, y)) in a.lines().zip(b.lines()).enumerate() {
        if x != y {
            return format!("line {}:\n  file:      {x}\n  generated: {y}", i + 1);
        }
    }
    format!("lengths differ: file {} lines, generated {} lines", a.lines().count(), b.lines().count())
}

fn stv_files() -> Vec<(String, PathBuf)> {
    let mut v: Vec<(String, PathBuf)> = fs::read_dir(vectors_dir())
        .expect("testbenches/vectors exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "stv"))
        .map(|p| (p.file_stem().unwrap().to_string_lossy().into_owned(), p))
        .collect();
    v.sort();
    v
}

#[test]
fn golden_vector_files() {
    let _files = FILES.lock().unwrap_or_else(|e| e.into_inner());
    let dir = vectors_dir();
    let mut problems = Vec::new();
    let all = scenarios::all();
    let names: BTreeSet<&str> = all.iter().map(|s| s.name).collect();
    assert_eq!(names.len(), all.len(), "scenario names are unique");
    for s in &all {
        let text = render::render(s);
        let path = dir.join(format!("{}.stv", s.name));
        if regen() {
            fs::write(&path, &text).unwrap();
            continue;
        }
        match fs::read_to_string(&path) {
            Ok(old) if old == text => {}
            Ok(old) => problems.push(format!(
                "{}: the file differs from what the model, decoder and scenario produce now ({})",
                path.display(),
                first_difference(&old, &text)
            )),
            Err(e) => problems.push(format!("{}: {e}", path.display())),
        }
    }
    let files = stv_files();
    for (name, path) in &files {
        if !names.contains(name.as_str()) {
            problems.push(format!("{}: no scenario of that name (stale file?)", path.display()));
        }
        let text = fs::read_to_string(path).unwrap();
        if let Err(e) = verify::verify(name, &text) {
            problems.push(format!("{}: {e}", path.display()));
        }
    }
    let readme = fs::read_to_string(dir.join("README.md")).unwrap_or_default();
    for (name, _) in &files {
        if !readme.contains(&format!("{name}.stv")) {
            problems.push(format!("README.md does not list {name}.stv"));
        }
    }
    assert!(
        problems.is_empty(),
        "{} problem(s):\n{}\n(if the change is intended, regenerate with STREAMTRACE_REGEN_VECTORS=1 and review the diff)",
        problems.len(),
        problems.join("\n")
    );
}

/// Edits that the checker must catch (on an in-memory copy of a rendered vector).
#[test]
fn tampered_vectors_are_rejected() {
    let s = scenarios::all().into_iter().find(|s| s.name == "records").unwrap();
    let good = render::render(&s);
    verify::verify("records", &good).expect("the rendered vector verifies");
    let replace_first = |pat: &str, with: &dyn Fn(&str) -> String| -> String {
        let mut done = false;
        good.lines()
            .map(|l| {
                if !done && l.starts_with(pat) {
                    done = true;
                    with(l)
                } else {
                    l.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let cases: Vec<(&str, String)> = vec![
        ("a trace byte", replace_first("bytes ", &|l| l.replacen("bytes 00", "bytes 01", 1))),
        ("the bit length", replace_first("bits ", &|l| l.replacen("bits 307", "bits 306", 1))),
        (
            "a field split",
            replace_first("rec @0 ", &|l| l.replacen("0 | 000000 | 00000011", "0 | 00000 | 000000011", 1)),
        ),
        ("a record kind", replace_first("rec @0 +34", &|l| l.replacen("miss-lvsa-hit ", "miss-lvsa-miss", 1))),
        ("a record length", replace_first("rec @0 ", &|l| l.replacen("+47", "+46", 1))),
        ("a stream element", replace_first("stream 02000200", &|l| l.replacen("02000200", "02000204", 1))),
        ("an element offset", replace_first("end @", &|l| format!("{l}0"))),
        ("an address", replace_first("addr ", &|l| l.replacen("00008004", "00008008", 1))),
        ("the address checksum", replace_first("checksum", &|_| "checksum 00000000".to_string())),
        ("an event", replace_first("0000800c e2544001", &|l| l.replacen(" none ", " dcond ", 1))),
        ("an image word", replace_first("mem 00008014", &|l| l.replacen("e12fff1e", "e12fff1f", 1))),
        ("a config name", good.replacen("config bsdc-16x4-64\n", "config bsdc-16x4-64,shift=4\n", 1)),
    ];
    for (what, text) in cases {
        assert_ne!(text, good, "{what}: the edit did not apply");
        assert!(verify::verify("records", &text).is_err(), "changing {what} was not detected");
    }
}

/// Record bits derived by hand from docs/trace-format.md (sections 3, 5 and 6), written
/// down independently of the encoder, compared with the trace bits in the vector files.
#[test]
fn hand_checked_records() {
    let _files = FILES.lock().unwrap_or_else(|e| e.into_inner());
    fn trace_bits(file: &str, config: &str) -> String {
        let text = fs::read_to_string(vectors_dir().join(format!("{file}.stv"))).unwrap();
        let stv = verify::parse(&text).unwrap();
        let t = stv.traces.iter().find(|t| t.config == config).unwrap();
        let bits: String = t.bytes.iter().map(|b| format!("{b:08b}")).collect();
        let (content, pad) = bits.split_at(t.bits.unwrap() as usize);
        assert!(pad.len() < 8 && !pad.contains('1'), "{file} {config}: END padding");
        content.to_string()
    }
    let cat = |parts: &[&str]| -> String { parts.concat().replace(' ', "") };
    let a = |v: u32| format!("{v:032b}");

    // Fig. 4, bsdc-16x4-64: k = 6, slw = 8. (0x020001f4, 9) -> iSet = 0xf ^ 9 = 6, way 0,
    // SI = 6 << 2 = 0b011000.
    let fig4_addr = a(0x0200_01f4);
    let mut fig4 = cat(&["0 000000 00001001", &fig4_addr, "0 011000", "0 011000"]);
    fig4 += &"1".repeat(96); // LSP[24] = 24
    fig4 += &cat(&["0 000000 00001010", "0 000000 00000000 00"]); // inferred, END (189 bits, spec 9.1)
    assert_eq!(trace_bits("fig4", "bsdc-16x4-64"), fig4);

    // Fig. 4, esdc-16x4-64 (and rsdc, whose LVSA also misses on the first stream):
    // L = '0' A[31:0] because A[31:18] = 0x80 != 0; runs 16,16,16 (s 4 -> 5), 32, 16.
    let fig4e = cat(&[
        "0 000000 00001001 0",
        &fig4_addr,
        "0 011000 0 011000",
        "1 1111 1 1111 1 1111",
        "1 11111",
        "1 01111",
        "0 000000 00001010",
        "0 000000 00000000 00",
    ]);
    assert_eq!(fig4e.len(), 121, "spec 9.2");
    assert_eq!(trace_bits("fig4", "esdc-16x4-64"), fig4e);
    assert_eq!(trace_bits("fig4", "rsdc-16x4-64"), fig4e);

    // Fig. 4, rsdc-32x4-128,isa=arm (spec 9.3): k = 7, u = 12, low = 2. iSet = 0x1f ^ 9 = 22,
    // SI = 88 = 1011000; L = '0' A[31:2] (LVSA 0 != 0x020), A[31:2] = 0x0080007d in 30 bits.
    // (The bit string printed in spec 9.3, 000010000000000000000001111101, is A[31:2] of
    // 0x080001f4; the hex dump printed there agrees with the bits below.)
    let fig4r = cat(&[
        "0 0000000 00001001 0 000000100000000000000001111101",
        "0 1011000 0 1011000",
        "1 1111 1 1111 1 1111 1 11111 1 01111",
        "0 0000000 00001010",
        "0 0000000 00000000 00",
    ]);
    assert_eq!(fig4r.len(), 124, "spec 9.3");
    assert_eq!(trace_bits("fig4", "rsdc-32x4-128,isa=arm"), fig4r);

    // Fig. 4, nexs: D = 0x020001f4 in 5 groups 0x34 0x07 0x00 0x00 0x02, then 99 inferred.
    let mut nexs = cat(&["00001001", "00 110100 00 000111 00 000000 00 000000 01 000010"]);
    nexs += &"00001001".repeat(98);
    nexs += &cat(&["00001010", "00000000 00"]);
    assert_eq!(trace_bits("fig4", "nexs"), nexs);

    // records, esdc-16x4-64 (u = 14): L hit '1' A[17:0] / miss '0' A[31:0]; SIs: set 2
    // holds F=8, G=9, R=10, M=11; five LSP hits -> one run n=5 ('1' '0100').
    let rec_e = cat(&[
        "0 000000 00000011 1 001000000000000000", // (0x8000,3): LVSA 0 hit
        "0 000000 00000010 0",
        &a(0x0200_0100),                          // F: LVSA miss, LVSA := 0x80
        "0 000000 00000010 1 000000001000000000", // G: LVSA hit, A[17:0] = 0x200
        "0 000000 00000010 0",
        &a(0x0000_800c),                                // R: LVSA miss, LVSA := 0
        "0 000000 00000010",                            // M: inferred
        "0 001000 0 001001 0 001010 0 001011 0 001000", // SDC hits F G R M F
        "1 0100",                                       // run of 5: G R M F G
        "0 000000 00000011 1 001000000000001100",       // (0x800c,3): LVSA 0 hit
        "0 000000 00000000 00",
    ]);
    assert_eq!(trace_bits("records", "esdc-16x4-64"), rec_e);

    // records, rsdc-16x4-64 (u = 12, LVSA updated after every stream): the streams of
    // the far region and the stream after each return are forced misses.
    let f = cat(&["0 000000 00000010 0", &a(0x0200_0100)]);
    let r = cat(&["0 000000 00000010 0", &a(0x0000_800c)]);
    let rec_r = cat(&[
        "0 000000 00000011 1 00001000000000000000", // (0x8000,3): '1' A[19:0]
        &f,
        "0 000000 00000010 1 00000000001000000000", // G: '1' A[19:0] = 0x00200
        &r,
        "0 000000 00000010", // M inferred
        &f,
        "0 001001", // G: SDC hit, LSP[0] = 0
        &r,
        "0 001011", // M
        &f,
        "0 001001",
        &r,
        "0 001011",
        &f,
        "0 001001",
        "0 000000 00000011 0",
        &a(0x0000_800c), // (0x800c,3) after LVSA = 0x020
        "0 000000 00000000 00",
    ]);
    assert_eq!(trace_bits("records", "rsdc-16x4-64"), rec_r);
}

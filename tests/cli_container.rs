//! Trace files (docs/trace-format.md section 12) through the built binary: a trace file
//! decodes like the bare stream it wraps, names its configuration and program, and every
//! kind of damage (a flipped bit anywhere, truncation at a block boundary, trailing bytes, a
//! second container, a wrong count) is an error that names the byte offset; it never decodes
//! to other addresses with exit status 0.

mod common;

use std::path::Path;
use std::process::Output;

use common::{exits, ok, programs_dir, streamtrace_in};
use streamtrace_isa::ElfImage;
use streamtrace_model::container::{to_container, ContainerHeader, MAGIC};
use tempfile::TempDir;

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn run(args: &[&str]) -> Output {
    streamtrace_in(&programs_dir(), args)
}

/// The bare stream of `cfg` on tiny.elf, and the tiny program.
fn raw_stream(dir: &Path, cfg: &str) -> Vec<u8> {
    let raw = dir.join("t.raw");
    ok(&run(&["run", "-c", cfg, "--trace-out", p(&raw), "--raw", "bin/tiny.elf"]));
    std::fs::read(raw).unwrap()
}

fn tiny() -> ElfImage {
    ElfImage::open(programs_dir().join("bin/tiny.elf")).unwrap()
}

/// Decoded addresses of a trace file or (with `raw`) bare stream, as `decode -o` writes them.
fn decode_addresses(dir: &Path, trace: &Path, extra: &[&str]) -> (Output, String) {
    let out = dir.join("addrs.txt");
    let _ = std::fs::remove_file(&out);
    let mut args = vec!["decode", "--elf", "bin/tiny.elf", "-t", p(trace), "-o", p(&out)];
    args.extend_from_slice(extra);
    let o = run(&args);
    (o, std::fs::read_to_string(&out).unwrap_or_default())
}

#[test]
fn trace_file_decodes_like_the_raw_stream_and_names_its_configuration() {
    let d = TempDir::new().unwrap();
    for cfg in ["rsdc-16x2-16,sync=100", "pft", "nexs", "gzip-1"] {
        let raw = raw_stream(d.path(), cfg);
        let file = d.path().join("t.st");
        ok(&run(&["run", "-c", cfg, "--trace-out", p(&file), "bin/tiny.elf"]));
        let bytes = std::fs::read(&file).unwrap();
        assert!(bytes.starts_with(&MAGIC) && bytes.len() > raw.len(), "{cfg}");
        let (o, from_file) = decode_addresses(d.path(), &file, &[]);
        ok(&o);
        let raw_path = d.path().join("t.raw");
        let (o, from_raw) = decode_addresses(d.path(), &raw_path, &["--raw", "-c", cfg]);
        ok(&o);
        assert!(!from_file.is_empty() && from_file == from_raw, "{cfg}: the trace file decodes differently");
        // -c in the file's canonical form, or another spelling of it, is accepted.
        let (o, _) = decode_addresses(d.path(), &file, &["-c", cfg]);
        ok(&o);
        // dump reads it too (it lists no records for pft, which has none).
        let o = run(&["dump", "--elf", "bin/tiny.elf", "-t", p(&file), "-n", "3"]);
        assert!(!ok(&o).is_empty() || cfg == "pft", "{cfg}");
    }
}

#[test]
fn a_raw_stream_needs_raw_and_a_configuration() {
    let d = TempDir::new().unwrap();
    raw_stream(d.path(), "nexs");
    let raw = d.path().join("t.raw");
    let o = run(&["decode", "--elf", "bin/tiny.elf", "-t", p(&raw), "-c", "nexs"]);
    exits(&o, 2, &["t.raw", "no container magic at byte 0", "--raw -c CONFIG"]);
    let o = run(&["dump", "--elf", "bin/tiny.elf", "-t", p(&raw)]);
    exits(&o, 2, &["t.raw", "--raw -c CONFIG"]);
    let o = run(&["decode", "--elf", "bin/tiny.elf", "-t", p(&raw), "--raw"]);
    exits(&o, 2, &["--raw needs the configuration"]);
}

#[test]
fn wrong_configuration_and_other_program_are_refused_before_decoding() {
    let d = TempDir::new().unwrap();
    let file = d.path().join("t.st");
    ok(&run(&["run", "-c", "rsdc-16x2-16", "--trace-out", p(&file), "bin/tiny.elf"]));
    let out = d.path().join("addrs.txt");
    for cmd in ["decode", "dump"] {
        let mut args = vec![cmd, "--elf", "bin/tiny.elf", "-t", p(&file), "-c", "esdc-16x2-16"];
        if cmd == "decode" {
            args.extend_from_slice(&["-o", p(&out)]);
        }
        exits(&run(&args), 2, &["t.st", "'rsdc-16x2-16'", "'esdc-16x2-16'"]);
        assert!(!out.exists(), "{cmd}: output written before the check");
        let mut args = vec![cmd, "--elf", "bin/sha256.elf", "-t", p(&file)];
        if cmd == "decode" {
            args.extend_from_slice(&["-o", p(&out)]);
        }
        exits(&run(&args), 1, &["t.st", "another program", "bin/sha256.elf", "segment hash", "--force"]);
        assert!(!out.exists(), "{cmd}: output written before the check");
    }
    // --force decodes anyway, with a warning (here the records then make no sense).
    let o = run(&["decode", "--elf", "bin/sha256.elf", "-t", p(&file), "--force"]);
    assert!(stderr(&o).contains("warning") && stderr(&o).contains("--force"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("panicked"));
}

/// The container of `stream` with small blocks, for tiny.elf: many blocks in little data.
fn small_block_file(stream: &[u8], cfg: &str, block_size: u32, instructions: u64) -> Vec<u8> {
    let header = ContainerHeader { block_size, config: cfg.parse::<streamtrace_model::Config>().unwrap().to_string(), identity: tiny().identity() };
    to_container(&header, stream, instructions)
}

/// Instructions of the tiny run (what its trace file's trailer counts).
fn tiny_instructions(dir: &Path, cfg: &str) -> u64 {
    let (o, addrs) = decode_addresses(dir, &dir.join("t.raw"), &["--raw", "-c", cfg]);
    ok(&o);
    addrs.lines().count() as u64
}

#[test]
fn every_single_bit_flip_is_reported_with_its_block() {
    let d = TempDir::new().unwrap();
    for (cfg, block) in [("rsdc-16x2-16,sync=100", 256u32), ("pft,sync=200", 128)] {
        let stream = raw_stream(d.path(), cfg);
        let n = tiny_instructions(d.path(), cfg);
        let file = small_block_file(&stream, cfg, block, n);
        let good = d.path().join("good.st");
        std::fs::write(&good, &file).unwrap();
        let (o, want) = decode_addresses(d.path(), &good, &[]);
        ok(&o);
        let header_len = file.len() - 24 - stream.len() - 8 * stream.len().div_ceil(block as usize);
        let bad = d.path().join("bad.st");
        for at in 0..file.len() {
            let mut b = file.clone();
            b[at] ^= 1 << (at % 8);
            std::fs::write(&bad, &b).unwrap();
            let (o, got) = decode_addresses(d.path(), &bad, &[]);
            let err = stderr(&o);
            assert!(o.status.code().is_some_and(|c| c != 0), "{cfg}: flip at byte {at} decoded with exit 0");
            assert!(!err.contains("panicked"), "{err}");
            // The block holding the byte: a flip in its payload or CRC fails its CRC; one in
            // its length field may also break the framing. Header and trailer flips are
            // refused with their offset.
            let block_at = (0..stream.len().div_ceil(block as usize))
                .map(|i| header_len + i * (block as usize + 8))
                .rfind(|&start| start <= at && at < file.len() - 24);
            match block_at {
                Some(start) if at >= start + 4 => {
                    assert!(err.contains(&format!("byte {start}: block CRC-32C failed")), "{cfg}: flip at byte {at}, block at {start}:\n{err}");
                    // What was decoded is a prefix of the good addresses and, after a sync
                    // marker, a suffix of them: never an address the trace does not hold there.
                    let got: Vec<&str> = got.lines().collect();
                    let want: Vec<&str> = want.lines().collect();
                    let prefix = got.iter().zip(&want).take_while(|(a, b)| a == b).count();
                    assert!(want.ends_with(&got[prefix..]), "{cfg}: flip at byte {at}: addresses after the damage are not the trace's tail");
                }
                _ => assert!(err.contains("byte "), "{cfg}: flip at byte {at}:\n{err}"),
            }
        }
    }
}

#[test]
fn truncation_at_every_block_boundary_is_an_error() {
    let d = TempDir::new().unwrap();
    let cfg = "rsdc-16x2-16,sync=100";
    let stream = raw_stream(d.path(), cfg);
    let n = tiny_instructions(d.path(), cfg);
    let block = 256usize;
    let file = small_block_file(&stream, cfg, block as u32, n);
    let header_len = file.len() - 24 - stream.len() - 8 * stream.len().div_ceil(block);
    let cut_file = d.path().join("cut.st");
    let mut cuts: Vec<usize> = (0..stream.len().div_ceil(block)).map(|i| header_len + i * (block + 8)).collect();
    cuts.push(file.len() - 24);
    cuts.push(file.len() - 1);
    assert!(cuts.len() >= 8);
    for cut in cuts {
        std::fs::write(&cut_file, &file[..cut]).unwrap();
        for cmd in ["decode", "dump"] {
            let o = run(&[cmd, "--elf", "bin/tiny.elf", "-t", p(&cut_file)]);
            exits(&o, 1, &["cut.st", &format!("byte {cut}: file truncated")]);
        }
    }
}

#[test]
fn trailing_bytes_a_second_container_and_a_wrong_count_are_errors() {
    let d = TempDir::new().unwrap();
    let cfg = "nexs";
    let stream = raw_stream(d.path(), cfg);
    let n = tiny_instructions(d.path(), cfg);
    let file = small_block_file(&stream, cfg, 1024, n);
    let t = d.path().join("x.st");
    let mut twice = file.clone();
    twice.extend_from_slice(&file);
    std::fs::write(&t, &twice).unwrap();
    for cmd in ["decode", "dump"] {
        exits(&run(&[cmd, "--elf", "bin/tiny.elf", "-t", p(&t)]), 1, &[&format!("byte {}: {} byte(s) after the trailer", file.len(), file.len())]);
    }
    let mut one = file.clone();
    one.push(0x0a);
    std::fs::write(&t, &one).unwrap();
    exits(&run(&["decode", "--elf", "bin/tiny.elf", "-t", p(&t)]), 1, &["1 byte(s) after the trailer"]);
    // A trailer whose count differs from the decode (written consistently, CRC and all).
    std::fs::write(&t, small_block_file(&stream, cfg, 1024, n + 1)).unwrap();
    exits(&run(&["decode", "--elf", "bin/tiny.elf", "-t", p(&t)]), 1, &[&format!("trailer counts {} instructions, the trace decoded to {n}", n + 1)]);
    // The exact count passes: the check is not vacuous.
    std::fs::write(&t, &file).unwrap();
    ok(&run(&["decode", "--elf", "bin/tiny.elf", "-t", p(&t)]));
}

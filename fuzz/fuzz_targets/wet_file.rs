//! Fuzz target `wet_file`: arbitrary bytes as a `.wet` file (docs/wet.md section 7) must
//! parse or give an error with an offset inside the input, never a panic; a file that
//! parses must answer every query without panicking and write itself back to bytes that
//! parse to the same bytes again.
//!
//! Input: byte 0 picks the stream kind (bit 0: bidirectional), whether a valid magic and
//! kind are put in front of the rest (bit 1), and whether the result is closed with a valid
//! trailer (bit 2: `WEND`, the instruction count read from the file's first count field,
//! and the CRC-32C, docs/wet.md 7.1), so most inputs get past the CRC to the body parser;
//! inputs without bit 2 exercise the trailer checks.

#![no_main]

use libfuzzer_sys::fuzz_target;
use streamtrace_stages::wet::bidir::BiStream;
use streamtrace_stages::wet::build::WetGraph;
use streamtrace_stages::wet::file::StoredStream;
use streamtrace_stages::wet::RawStream;
use streamtrace_model::checksum::crc32c;

/// The first varint after the 10-byte header (the instruction count), or 0.
fn first_count(bytes: &[u8]) -> u64 {
    let mut v = 0u64;
    for (i, &b) in bytes.iter().skip(10).take(10).enumerate() {
        v |= ((b & 0x7F) as u64).checked_shl(7 * i as u32).unwrap_or(0);
        if b & 0x80 == 0 {
            break;
        }
    }
    v
}

fn exercise<S: StoredStream>(bytes: &[u8]) {
    let mut g = match WetGraph::<S>::from_bytes(bytes) {
        Ok(g) => g,
        Err(e) => {
            assert!(e.offset <= bytes.len(), "error offset {} beyond {}: {e}", e.offset, bytes.len());
            return;
        }
    };
    let again = g.to_bytes();
    let g2 = WetGraph::<S>::from_bytes(&again).expect("a parsed file written back parses");
    assert_eq!(g2.to_bytes(), again, "writing is not idempotent");
    let _ = g.cf_forward();
    let _ = g.cf_backward();
    let _ = g.label_bits();
    let pcs: Vec<u32> = g.stmts.iter().map(|s| s.iw).take(8).collect();
    for pc in pcs {
        let _ = g.values(pc);
        let _ = g.load_values(pc);
        let _ = g.addresses(pc);
        if let Some(it) = g.instance_of(pc, 0) {
            let _ = g.backward_slice(it.stmt, it.inst);
            let _ = g.timestamp(it.stmt, it.inst);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&sel, rest)) = data.split_first() else { return };
    let mut bytes = Vec::with_capacity(rest.len() + 10);
    if sel & 2 != 0 {
        bytes.extend_from_slice(b"STWET\x001\x00");
        bytes.push(sel & 1);
    }
    bytes.extend_from_slice(rest);
    if sel & 4 != 0 {
        let count = first_count(&bytes);
        bytes.extend_from_slice(b"WEND");
        bytes.extend_from_slice(&count.to_le_bytes());
        let crc = crc32c(&bytes);
        bytes.extend_from_slice(&crc.to_le_bytes());
    }
    if sel & 1 == 1 {
        exercise::<BiStream>(&bytes);
    } else {
        exercise::<RawStream>(&bytes);
    }
});

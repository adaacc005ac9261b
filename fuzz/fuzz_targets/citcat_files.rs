//! Fuzz target `citcat_files`: arbitrary bytes as a CITCAT CAT, IMS, AES or instruction
//! trace (docs/citcat.md 3, 4.2, 4.3, 6) must parse or give an error with an offset inside
//! the input, never a panic. A file that parses writes back to the same bytes; a CAT that
//! parses goes through IMS/AES extraction, and a parsed IMS + AES through a short replay,
//! neither of which may panic.
//!
//! Input: byte 0 picks the file kind (bits 0-1), whether the kind's magic is put in front
//! of the rest (bit 2) and whether the result is closed with a valid trailer (bit 3: then
//! byte 1 is the trailer's count, and `CEND`, the count and the CRC-32C are appended,
//! docs/citcat.md 8), so most inputs get past the CRC to the body parsers; inputs without
//! bit 3 exercise the trailer checks.

#![no_main]

use libfuzzer_sys::fuzz_target;
use streamtrace_stages::citcat::extract::extract;
use streamtrace_stages::citcat::format::{
    trace_from_bytes, trace_to_bytes, Aes, Cat, FileError, Ims, NoTrace, AES_MAGIC, CAT_MAGIC, IMS_MAGIC, ITR_MAGIC,
};
use streamtrace_stages::citcat::replay::replay;
use streamtrace_sim::TimingConfig;

fn check_offset(e: &FileError, len: usize) {
    assert!(e.offset <= len, "error offset {} beyond {len}: {e}", e.offset);
}

fuzz_target!(|data: &[u8]| {
    let Some((&sel, rest)) = data.split_first() else { return };
    let (count, rest) = match rest.split_first() {
        Some((&c, r)) if sel & 8 != 0 => (c as u64, r),
        _ => (0, rest),
    };
    let magic = [CAT_MAGIC, IMS_MAGIC, AES_MAGIC, ITR_MAGIC][(sel & 3) as usize];
    let mut bytes = Vec::with_capacity(rest.len() + 8);
    if sel & 4 != 0 {
        bytes.extend_from_slice(magic);
    }
    bytes.extend_from_slice(rest);
    if sel & 8 != 0 {
        bytes.extend_from_slice(b"CEND");
        bytes.extend_from_slice(&count.to_le_bytes());
        let crc = streamtrace_model::checksum::crc32c(&bytes);
        bytes.extend_from_slice(&crc.to_le_bytes());
    }
    match sel & 3 {
        0 => match Cat::from_bytes(&bytes) {
            Ok(c) => {
                assert_eq!(c.to_bytes(), bytes, "CAT does not write back identically");
                if let Ok((ims, aes)) = extract(&c) {
                    let _ = replay(&ims, &aes, &TimingConfig::default(), 10_000, &mut NoTrace);
                }
            }
            Err(e) => check_offset(&e, bytes.len()),
        },
        1 => match Ims::from_bytes(&bytes) {
            Ok(i) => {
                assert_eq!(i.to_bytes(), bytes, "IMS does not write back identically");
                let _ = replay(&i, &Aes::default(), &TimingConfig::default(), 10_000, &mut NoTrace);
            }
            Err(e) => check_offset(&e, bytes.len()),
        },
        2 => match Aes::from_bytes(&bytes) {
            Ok(a) => assert_eq!(a.to_bytes(), bytes, "AES does not write back identically"),
            Err(e) => check_offset(&e, bytes.len()),
        },
        _ => match trace_from_bytes(&bytes) {
            Ok(t) => assert_eq!(trace_to_bytes(&t), bytes, "instruction trace does not write back identically"),
            Err(e) => check_offset(&e, bytes.len()),
        },
    }
});

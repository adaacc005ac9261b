//! Fuzz target `pdats_decode`: arbitrary bytes into the PDATS decoder must give references
//! or an error with a byte offset inside the input, never a panic (docs/fuzzing.md).
//!
//! Input: byte 0 bit 0 set: a valid 16-byte header (flags = bits 1-3 of byte 0) is put in
//! front of the rest, so most inputs reach the record parser; clear: the rest is the whole
//! file. Checks besides "no panic": error offsets lie inside the input; the decoder stops
//! after an error; a decoded file re-encodes (with the header's options) to a file that
//! decodes to the same timed references.

#![no_main]

use libfuzzer_sys::fuzz_target;
use streamtrace_stages::pdats::{decode_timed, encode_timed, PdatsDecoder, PdatsOptions};
use streamtrace_stages::header::{FLAG_64BIT, FLAG_DATA_DEFAULT_OFFSET, FLAG_TIME};

/// Repeat counts make ~128 references per input byte possible; this caps the work.
const BUDGET: usize = 1 << 20;

fuzz_target!(|data: &[u8]| {
    let Some((&sel, rest)) = data.split_first() else { return };
    let mut bytes = Vec::with_capacity(rest.len() + 16);
    if sel & 1 == 1 {
        bytes.extend_from_slice(&[b'P', b'D', b'A', b'T', 1, (sel >> 1) & 7, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    }
    bytes.extend_from_slice(rest);
    let len = bytes.len() as u64;

    let mut dec = match PdatsDecoder::new(&bytes[..]) {
        Ok(d) => d,
        Err(e) => {
            assert!(e.offset() <= len, "header error offset {} beyond {len}: {e}", e.offset());
            let _ = e.to_string();
            return;
        }
    };
    let flags = dec.header().flags;
    let mut refs = Vec::new();
    let mut failed = false;
    while let Some(r) = dec.next_timed() {
        match r {
            Ok(r) => refs.push(r),
            Err(e) => {
                assert!(e.offset() <= len, "error offset {} beyond {len}: {e}", e.offset());
                let _ = e.to_string();
                failed = true;
                break;
            }
        }
        if refs.len() > BUDGET {
            return;
        }
    }
    if failed {
        assert!(dec.next_timed().is_none(), "decoder continued after an error");
        return;
    }
    let opts = PdatsOptions {
        wide: flags & FLAG_64BIT != 0,
        time: flags & FLAG_TIME != 0,
        data_default_offset: flags & FLAG_DATA_DEFAULT_OFFSET != 0,
        comment: dec.header().comment.clone(),
    };
    let again = encode_timed(&refs, &opts).expect("decoded references re-encode");
    let (_, back) = decode_timed(&again).expect("re-encoded file decodes");
    assert_eq!(back, refs, "re-encoded file decodes differently");
});

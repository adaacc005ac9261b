//! Fuzz target `pdats2_decode`: arbitrary bytes into the PDATS II decoder must give
//! references or an error with a byte offset inside the input, never a panic
//! (docs/fuzzing.md).
//!
//! Input: byte 0 bit 0 set: a valid 16-byte header (64-bit flag = bit 1, log2 stride = bits
//! 2-3 of byte 0) is put in front of the rest; clear: the rest is the whole file. Checks
//! besides "no panic": error offsets lie inside the input; the decoder stops after an error;
//! a decoded file re-encodes (same wide mode and stride) canonically: its re-encoding
//! decodes to the same references and re-encodes to the same bytes.

#![no_main]

use libfuzzer_sys::fuzz_target;
use streamtrace_stages::pdats2::{decode, encode, Pdats2Decoder, Pdats2Options};

/// Counts make 32 references per input byte possible; this caps the work.
const BUDGET: usize = 1 << 20;

fuzz_target!(|data: &[u8]| {
    let Some((&sel, rest)) = data.split_first() else { return };
    let mut bytes = Vec::with_capacity(rest.len() + 16);
    if sel & 1 == 1 {
        bytes.extend_from_slice(&[b'P', b'D', b'A', b'T', 2, (sel >> 1) & 1, (sel >> 2) & 3, 2, 0, 0, 0, 0, 0, 0, 0, 0]);
    }
    bytes.extend_from_slice(rest);
    let len = bytes.len() as u64;

    let dec = match Pdats2Decoder::new(&bytes[..]) {
        Ok(d) => d,
        Err(e) => {
            assert!(e.offset() <= len, "header error offset {} beyond {len}: {e}", e.offset());
            let _ = e.to_string();
            return;
        }
    };
    let opts = Pdats2Options {
        wide: dec.header().wide(),
        stride_log2: dec.header().stride_log2,
        comment: dec.header().comment.clone(),
    };
    let mut dec = dec;
    let mut refs = Vec::new();
    for r in dec.by_ref() {
        match r {
            Ok(r) => refs.push(r),
            Err(e) => {
                assert!(e.offset() <= len, "error offset {} beyond {len}: {e}", e.offset());
                let _ = e.to_string();
                assert!(dec.next().is_none(), "decoder continued after an error");
                return;
            }
        }
        if refs.len() > BUDGET {
            return;
        }
    }
    // Every decoded ifetch lies on the stride grid, so the encoder accepts the sequence.
    let again = encode(&refs, &opts).expect("decoded references re-encode");
    let (_, back) = decode(&again).expect("re-encoded file decodes");
    assert_eq!(back, refs, "re-encoded file decodes differently");
    assert_eq!(encode(&back, &opts).unwrap(), again, "encoder output is not canonical");
});

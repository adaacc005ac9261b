//! Fuzz target `pft_decode`: arbitrary bytes into the pft decoder (docs/trace-format.md
//! section 11) must never panic.
//!
//! Input: 4 bytes select a pft configuration (`pft_config_from_bytes`), the rest is the
//! trace, decoded against the fixed synthetic image of the `decode` target. A range coder
//! turns any bytes into some symbol sequence, so most inputs decode into long walks: the
//! decoder's instruction limit bounds them. Checks, besides "no panic": error offsets lie
//! inside the input, `decode_trace` agrees with the element loop, and a decoder that joins
//! in the middle (`resync`) obeys the same rules.

#![no_main]

use libfuzzer_sys::fuzz_target;
use streamtrace_fuzz::{image, pft_config_from_bytes};
use streamtrace_isa::MemoryImage;
use streamtrace_model::Config;
use streamtrace_sw_decoder::{CountingSink, DecodeError, Decoder, TraceElement};

const LIMIT: u64 = 1 << 16;

fn run(cfg: &Config, trace: &[u8], image: &MemoryImage, resync_first: bool) -> (CountingSink, Vec<DecodeError>, bool) {
    let bits = trace.len() as u64 * 8;
    let mut dec = Decoder::new(cfg, trace, image).instruction_limit(LIMIT);
    let mut sink = CountingSink::default();
    let mut errors = Vec::new();
    let mut ended = false;
    if resync_first && dec.resync().is_none() {
        return (sink, errors, ended);
    }
    loop {
        match dec.next_element(&mut sink) {
            Ok(Some(el)) => {
                assert!(dec.position() <= bits, "position {} beyond input {bits}", dec.position());
                if let TraceElement::End { .. } = el {
                    ended = true;
                }
            }
            Ok(None) => break,
            Err(e) => {
                assert!(e.offset() <= bits + 8 * 16, "{cfg}: error offset beyond input {bits}: {e}");
                let _ = e.to_string();
                let stop = matches!(e, DecodeError::InstructionLimit { .. });
                errors.push(e);
                if stop || dec.resync().is_none() {
                    break;
                }
            }
        }
    }
    (sink, errors, ended)
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let (head, trace) = data.split_at(4);
    let Some(cfg) = pft_config_from_bytes(head.try_into().unwrap()) else {
        return;
    };
    let image = image(cfg.isa);
    let (sink, errors, _) = run(&cfg, trace, image, false);
    assert!(sink.count <= LIMIT + 65_536, "{cfg}: {} addresses past the limit", sink.count);
    if !errors.iter().any(|e| matches!(e, DecodeError::InstructionLimit { .. })) {
        let again = run(&cfg, trace, image, false);
        assert_eq!((again.0.count, again.0.checksum), (sink.count, sink.checksum), "{cfg}: decoding is deterministic");
    }
    if !trace.is_empty() {
        let start = head[3] as usize * trace.len() / 256;
        run(&cfg, &trace[start..], image, true);
    }
});

//! Fuzz target `stream_decode`: arbitrary bytes through the streaming decoder
//! (`StreamDecoder`), pushed in chunks, must never panic and must give what the
//! whole-buffer decoder gives.
//!
//! Input: `CONFIG_BYTES` bytes select a configuration (`config_from_bytes`), one byte the
//! chunk sizes (1..=8 and 1..=512 alternating), the rest is the trace, decoded against the
//! fixed synthetic program image. Checks, besides "no panic": the addresses (count and
//! checksum), the errors (kind and bit offset) and END equal the loop of `decode_trace`
//! over the whole buffer, unless either side passed `BUDGET` addresses (a few bits of a run
//! record can expand into many) or the scheme is gzip (inflated as it arrives: a damaged
//! member shows later than in the whole-buffer decoder, sw-decoder/src/stream.rs); error
//! offsets lie inside the input; the input buffer stays bounded.

#![no_main]

use libfuzzer_sys::fuzz_target;
use streamtrace_fuzz::{config_from_bytes, image, CONFIG_BYTES};
use streamtrace_model::Scheme;
use streamtrace_sw_decoder::{AddressSink, DecodeError, Decoder, Step, StreamDecoder};

const BUDGET: u64 = 1 << 17;

#[derive(Default, Debug, PartialEq, Eq)]
struct Sum {
    count: u64,
    checksum: u32,
}

impl AddressSink for Sum {
    fn addresses(&mut self, addrs: &[u32]) {
        self.count += addrs.len() as u64;
        self.checksum = addrs.iter().fold(self.checksum, |s, &a| s.wrapping_mul(31).wrapping_add(a));
    }
}

fuzz_target!(|data: &[u8]| {
    if data.len() < CONFIG_BYTES + 1 {
        return;
    }
    let (head, rest) = data.split_at(CONFIG_BYTES);
    let Some(cfg) = config_from_bytes(head.try_into().unwrap()) else {
        return;
    };
    let (sizes, trace) = rest.split_at(1);
    let chunks = [1 + (sizes[0] & 7) as usize, 1 + (sizes[0] as usize >> 3) * 16];
    let image = image(cfg.isa);
    let bits = trace.len() as u64 * 8;

    // Whole buffer, as decode_trace runs it.
    let mut want = Sum::default();
    let mut want_errors: Vec<DecodeError> = Vec::new();
    let mut want_end = false;
    let mut dec = Decoder::new(&cfg, trace, image).instruction_limit(BUDGET);
    while want.count <= BUDGET {
        match dec.next_element(&mut want) {
            Ok(Some(el)) => want_end |= matches!(el, streamtrace_sw_decoder::TraceElement::End { .. }),
            Ok(None) => break,
            Err(e) => {
                want_errors.push(e);
                if dec.resync().is_none() {
                    break;
                }
            }
        }
    }

    // Streamed.
    let mut got = Sum::default();
    let mut got_errors = Vec::new();
    let mut got_end = false;
    let mut s = StreamDecoder::new(&cfg, image).instruction_limit(BUDGET);
    let mut at = 0;
    let mut i = 0;
    'outer: loop {
        loop {
            if got.count > BUDGET {
                break 'outer;
            }
            match s.next(&mut got) {
                Step::NeedInput => break,
                Step::Finished => break 'outer,
                Step::Element(el) => got_end |= matches!(el, streamtrace_sw_decoder::TraceElement::End { .. }),
                Step::Error(e) => {
                    assert!(e.offset() <= bits, "{cfg}: error offset beyond input {bits}: {e}");
                    got_errors.push(e);
                }
                Step::Resynced { bit } => assert!(bit <= bits, "{cfg}: resync at {bit} beyond {bits}"),
                Step::Progress => {}
            }
        }
        if at == trace.len() {
            s.finish();
        } else {
            let n = chunks[i % 2].min(trace.len() - at);
            s.push(&trace[at..at + n]);
            at += n;
            i += 1;
            assert!(s.buffered() <= 64 * 1024 + 1024 || cfg.scheme == Scheme::Gzip, "{cfg}: {} bytes buffered", s.buffered());
        }
    }
    if want.count <= BUDGET && got.count <= BUDGET && cfg.scheme != Scheme::Gzip {
        assert_eq!(got, want, "{cfg}: chunks {chunks:?}: addresses");
        assert_eq!(got_errors, want_errors, "{cfg}: chunks {chunks:?}: errors");
        assert_eq!(got_end, want_end, "{cfg}: END");
    }
});

//! Fuzz target `decode`: arbitrary bytes into the software decoder must never panic.
//!
//! Input: `CONFIG_BYTES` bytes select a configuration (`config_from_bytes`; invalid ones are
//! skipped), the rest is the trace, decoded against a fixed synthetic program image.
//!
//! Checks, besides "no panic":
//! * every stream element delivers exactly `sl` addresses (`1 <= sl <= maxSL`) starting at
//!   its `sa`, in one sink call;
//! * error and record offsets lie inside the input;
//! * when the output is small enough, `decode_trace` and a decoder with record reporting
//!   on agree with the element-by-element loop;
//! * a second decoder joins in the middle (`Decoder::resync`) with record reporting on.
//!
//! The element loops stop after `BUDGET` addresses: a few bits of a run record can
//! legitimately expand into 2^olcmax * maxSL addresses.

#![no_main]

use libfuzzer_sys::fuzz_target;
use streamtrace_fuzz::{config_from_bytes, image, CONFIG_BYTES};
use streamtrace_isa::MemoryImage;
use streamtrace_model::Config;
use streamtrace_sw_decoder::{decode_trace, AddressSink, DecodeError, Decoder, TraceElement};

const BUDGET: u64 = 1 << 17;

#[derive(Default)]
struct CheckSink {
    count: u64,
    checksum: u32,
    calls: u64,
    last_first: Option<u32>,
    last_len: usize,
}

impl AddressSink for CheckSink {
    fn addresses(&mut self, addrs: &[u32]) {
        self.calls += 1;
        self.count += addrs.len() as u64;
        self.checksum = addrs
            .iter()
            .fold(self.checksum, |s, &a| s.wrapping_mul(31).wrapping_add(a));
        self.last_first = addrs.first().copied();
        self.last_len = addrs.len();
    }
}

struct Outcome {
    sink: CheckSink,
    errors: Vec<DecodeError>,
    ended: bool,
    over_budget: bool,
}

/// The loop of `decode_trace`, one element at a time, with the invariants above.
fn decode_checked(cfg: &Config, trace: &[u8], image: &MemoryImage, report: bool, resync_first: bool) -> Outcome {
    let bits = trace.len() as u64 * 8;
    let mut dec = Decoder::new(cfg, trace, image).report_records(report);
    let mut out = Outcome {
        sink: CheckSink::default(),
        errors: Vec::new(),
        ended: false,
        over_budget: false,
    };
    if resync_first && dec.resync().is_none() {
        return out;
    }
    loop {
        if out.sink.count > BUDGET {
            out.over_budget = true;
            break;
        }
        let calls = out.sink.calls;
        match dec.next_element(&mut out.sink) {
            Ok(Some(el)) => {
                assert!(
                    dec.position() <= bits,
                    "position {} beyond input {bits}",
                    dec.position()
                );
                match el {
                    TraceElement::Stream { sa, sl, offset, .. } => {
                        assert!(sl >= 1 && sl <= cfg.max_sl, "{cfg}: stream length {sl}");
                        assert!(offset < bits, "{cfg}: stream offset {offset} beyond input {bits}");
                        if !report {
                            assert_eq!(out.sink.calls, calls + 1, "{cfg}: one sink call per stream");
                            assert_eq!(
                                out.sink.last_len, sl as usize,
                                "{cfg}: stream ({sa:#x}, {sl}) delivered {} addresses",
                                out.sink.last_len
                            );
                            assert_eq!(
                                out.sink.last_first,
                                Some(sa),
                                "{cfg}: stream ({sa:#x}, {sl}) started elsewhere"
                            );
                        }
                    }
                    TraceElement::Record(info) => {
                        assert!(
                            info.offset + info.bits <= bits,
                            "{cfg}: record {info:?} beyond input {bits}"
                        );
                    }
                    TraceElement::End { .. } => out.ended = true,
                    _ => {}
                }
                if !matches!(el, TraceElement::Stream { .. } | TraceElement::Record(_)) && !report {
                    assert_eq!(out.sink.calls, calls, "{cfg}: {el:?} delivered addresses");
                }
            }
            Ok(None) => break,
            Err(e) => {
                assert!(e.offset() <= bits, "{cfg}: error offset beyond input {bits}: {e}");
                let _ = e.to_string();
                out.errors.push(e);
                if dec.resync().is_none() {
                    break;
                }
            }
        }
    }
    out
}

fuzz_target!(|data: &[u8]| {
    if data.len() < CONFIG_BYTES {
        return;
    }
    let (head, trace) = data.split_at(CONFIG_BYTES);
    let Some(cfg) = config_from_bytes(head.try_into().unwrap()) else {
        return;
    };
    let image = image(cfg.isa);

    let full = decode_checked(&cfg, trace, image, false, false);
    if !full.over_budget {
        let out = decode_trace(&cfg, trace, image, false);
        assert_eq!(
            out.addresses.len() as u64,
            full.sink.count,
            "{cfg}: decode_trace address count"
        );
        let sum = out
            .addresses
            .iter()
            .fold(0u32, |s, &a| s.wrapping_mul(31).wrapping_add(a));
        assert_eq!(sum, full.sink.checksum, "{cfg}: decode_trace addresses");
        assert_eq!(out.errors, full.errors, "{cfg}: decode_trace errors");
        assert_eq!(out.ended, full.ended, "{cfg}: decode_trace END");
        // Record reporting changes what is returned, never what is decoded.
        let rep = decode_checked(&cfg, trace, image, true, false);
        assert_eq!(
            (rep.sink.count, rep.sink.checksum),
            (full.sink.count, full.sink.checksum),
            "{cfg}: report_records"
        );
        assert_eq!(rep.errors, full.errors, "{cfg}: report_records errors");
    }

    // Join in the middle: from the byte the last config byte points at.
    if !trace.is_empty() {
        let start = (head[CONFIG_BYTES - 1] as usize * trace.len()) / 256;
        decode_checked(&cfg, &trace[start..], image, true, true);
    }
});

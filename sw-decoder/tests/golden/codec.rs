//! Thin wrappers over the model's Encoder and the sw-decoder's Decoder used by both the
//! generator and the file checker.

use std::ops::Range;

use streamtrace_isa::MemoryImage;
use streamtrace_model::{Config, EncodedTrace, Encoder, RetireEvent};
use streamtrace_sw_decoder::{Decoder, RecordInfo, TraceElement};

/// Encode `events`, calling `request_sync()` before each event index in `sync_before` and
/// then `overflow(lost)` before each event index in `overflow_before`.
pub fn encode(
    cfg: &Config,
    events: &[RetireEvent],
    sync_before: &[usize],
    overflow_before: &[(usize, u64)],
) -> Result<EncodedTrace, String> {
    let mut enc = Encoder::new(cfg);
    let directives = |enc: &mut Encoder, i: usize| {
        for _ in sync_before.iter().filter(|&&s| s == i) {
            enc.request_sync();
        }
        for &(_, lost) in overflow_before.iter().filter(|o| o.0 == i) {
            enc.overflow(lost);
        }
    };
    for (i, ev) in events.iter().enumerate() {
        directives(&mut enc, i);
        enc.push(ev).map_err(|e| format!("{cfg}: {e}"))?;
    }
    directives(&mut enc, events.len());
    Ok(enc.finish().0)
}

/// The addresses a decoder delivers: the events' interworking addresses without the
/// `lost` events before each overflow point (the stream they formed was dropped).
pub fn expected_addresses(events: &[RetireEvent], overflow_before: &[(usize, u64)]) -> Vec<u32> {
    events
        .iter()
        .enumerate()
        .filter(|(i, _)| !overflow_before.iter().any(|&(at, lost)| *i < at && *i as u64 + lost >= at as u64))
        .map(|(_, e)| e.iw_addr())
        .collect()
}

/// One record and the elements it produced (an LSP-hit run produces n streams).
pub struct Group {
    pub record: RecordInfo,
    /// Elements with the range of `Decoded::addrs` each stream produced.
    pub elements: Vec<(TraceElement, Range<usize>)>,
}

pub struct Decoded {
    pub groups: Vec<Group>,
    pub addrs: Vec<u32>,
}

impl Decoded {
    pub fn records(&self) -> Vec<RecordInfo> {
        self.groups.iter().map(|g| g.record).collect()
    }
    pub fn elements(&self) -> Vec<TraceElement> {
        self.groups.iter().flat_map(|g| g.elements.iter().map(|e| e.0)).collect()
    }
}

pub fn shift_element(el: TraceElement, delta: u64) -> TraceElement {
    match el {
        TraceElement::Record(mut r) => {
            r.offset += delta;
            TraceElement::Record(r)
        }
        TraceElement::Stream { sa, sl, record, offset } => {
            TraceElement::Stream { sa, sl, record, offset: offset + delta }
        }
        TraceElement::Exception { offset } => TraceElement::Exception { offset: offset + delta },
        TraceElement::Sync { offset } => TraceElement::Sync { offset: offset + delta },
        TraceElement::Overflow { lost, offset } => TraceElement::Overflow { lost, offset: offset + delta },
        TraceElement::End { offset } => TraceElement::End { offset: offset + delta },
    }
}

/// Decode with record reporting. `from_byte`: hand the decoder `bytes[from_byte..]`, let it
/// search the next sync marker, and report offsets relative to the whole trace.
pub fn decode(cfg: &Config, bytes: &[u8], img: &MemoryImage, from_byte: Option<u64>) -> Result<Decoded, String> {
    let start = from_byte.unwrap_or(0) as usize;
    if start > bytes.len() {
        return Err(format!("from-byte {start} is past the end of the trace ({} bytes)", bytes.len()));
    }
    let delta = start as u64 * 8;
    let mut dec = Decoder::new(cfg, &bytes[start..], img).report_records(true);
    if from_byte.is_some() && dec.resync().is_none() {
        return Err(format!("no sync marker at or after byte {start}"));
    }
    let mut out = Decoded { groups: Vec::new(), addrs: Vec::new() };
    loop {
        let before = out.addrs.len();
        match dec.next_element(&mut out.addrs) {
            Ok(None) => break,
            Ok(Some(el)) => {
                let el = shift_element(el, delta);
                match el {
                    TraceElement::Record(r) => out.groups.push(Group { record: r, elements: Vec::new() }),
                    other => {
                        let g = out.groups.last_mut().ok_or("element before any record")?;
                        g.elements.push((other, before..out.addrs.len()));
                    }
                }
            }
            Err(e) => {
                let e = format!("{cfg}: decoder error at bit {}: {e}", e.offset() + delta);
                return Err(e);
            }
        }
    }
    Ok(out)
}

pub fn checksum(addrs: &[u32]) -> u32 {
    addrs.iter().fold(0u32, |s, &a| s.wrapping_add(a))
}

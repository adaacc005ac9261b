//! Streaming decode: push trace bytes in chunks of any size, pull elements until the decoder
//! needs more input. Memory stays bounded by the largest chunk plus the decoder's state,
//! whatever the trace length: bytes before the next record are dropped as decoding moves on.
//!
//! The elements, errors and addresses are those of the whole-buffer [`Decoder`] run as
//! [`decode_trace`](crate::decode_trace) runs it (after an error, decoding resumes after the
//! next sync marker), whatever the chunking. The one exception is `gzip-L`: the whole-buffer
//! decoder inflates the member first and reports a damaged member before any element, while
//! the streaming decoder inflates as bytes arrive and reports the damage where it shows.
//!
//! How it works: a record is decoded only when at least `INPUT_MARGIN` bytes are buffered
//! beyond its start (longer than any record of any scheme: the longest, an OVERFLOW escape
//! with its 16-byte marker, or a pft escape with a range-coded address, is under 64 bytes),
//! or once [`StreamDecoder::finish`] said no more input comes. So a record is never started
//! on input that a later push would extend, and the decoders need no way to back out of a
//! half-read record. Between calls the inner decoder is parked on an empty window and no
//! image ([`NoImage`]); each call binds it to the buffer and the caller's image again.

use std::io::Write;
use std::ops::ControlFlow;

use streamtrace_isa::ProgramImage;
use streamtrace_model::format::find_sync_marker;
use streamtrace_model::{Config, Scheme};

use crate::pft::PftDecoder;
use crate::{AddressSink, DecodeError, Decoder, TraceElement};

/// Bytes that must be buffered beyond the next record before it is decoded (unless the
/// input is finished).
pub(crate) const INPUT_MARGIN: usize = 256;

/// Consumed bytes are dropped from the buffer once there are at least this many of them
/// (or they are more than half of it).
const COMPACT_BYTES: usize = 64 * 1024;

/// pft decodes slot after slot until an escape; a streaming call stops after about this
/// many instructions ([`Step::Progress`]) so one call's addresses stay bounded.
const PFT_PAUSE_INSTRUCTIONS: u64 = 4096;

/// An image with nothing mapped: where a parked decoder points between calls.
pub struct NoImage;

impl ProgramImage for NoImage {
    fn read_u32(&self, _: u32) -> Option<u32> {
        None
    }
    fn read_u16(&self, _: u32) -> Option<u16> {
        None
    }
}

static NO_IMAGE: NoImage = NoImage;

/// What one step of the streaming decoder produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// An element; a stream's addresses went to the sink first.
    Element(TraceElement),
    /// A decode error (offset in bits from the start of the trace). The decoder then skips
    /// to the next sync marker, as [`decode_trace`](crate::decode_trace) does.
    Error(DecodeError),
    /// Decoding resumed in the reset state after the sync marker ending at this bit.
    Resynced { bit: u64 },
    /// pft only: instructions went to the sink, but no element ended yet. Call again.
    Progress,
    /// Every buffered byte that can be decoded was: push more, or call `finish`.
    NeedInput,
    /// END was decoded, or the input finished (after an error with no sync marker left, or
    /// a truncated trace, whose error came first). Nothing more will come.
    Finished,
}

// Inline, not boxed: it is moved out and back on every call, which a box would turn into
// an allocation per call.
#[allow(clippy::large_enum_variant)]
enum Inner {
    Records(Decoder<'static, NoImage>),
    Pft(Box<PftDecoder<'static, NoImage>>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Decoding,
    /// Looking for a sync marker from this absolute byte on.
    Seeking { from: u64 },
    Finished,
}

/// Decodes a trace pushed in chunks. `M` is the program image, owned (an `ElfImage`, an
/// `Arc<...>`) or borrowed (`&ElfImage`).
///
/// ```ignore
/// let mut dec = StreamDecoder::new(&cfg, &image);
/// let mut addrs = Vec::new();
/// for chunk in chunks {
///     dec.push(chunk);
///     loop {
///         match dec.next(&mut addrs) {
///             Step::NeedInput => break,
///             step => handle(step),
///         }
///     }
/// }
/// dec.finish();
/// while !matches!(dec.next(&mut addrs), Step::Finished) {}
/// ```
pub struct StreamDecoder<M: ProgramImage> {
    image: M,
    inner: Option<Inner>,
    /// Unconsumed input; `buf[0]` is byte `base` of the (inflated) trace.
    buf: Vec<u8>,
    base: u64,
    finished: bool,
    mode: Mode,
    /// gzip-L: the member is inflated as it arrives.
    gunzip: Option<Box<flate2::write::GzDecoder<Vec<u8>>>>,
    /// A damaged gzip member, reported at the next step.
    gzip_error: Option<DecodeError>,
    pushed: u64,
    compact_bytes: usize,
    /// Lost stretches of input ([`push_lost`](Self::push_lost)), absolute byte ranges, in
    /// order; their place in `buf` holds filler bytes.
    gaps: std::collections::VecDeque<(u64, u64)>,
}

/// What stands in the buffer for lost bytes: never zero, so no sync marker forms in it.
const LOST_FILLER: u8 = 0xFF;

impl<M: ProgramImage> StreamDecoder<M> {
    /// A decoder for a trace that starts at bit 0 in the reset state.
    pub fn new(cfg: &Config, image: M) -> Self {
        let (inner, gunzip) = match cfg.scheme {
            Scheme::Pft => {
                let mut p = PftDecoder::new(cfg, &[], &NO_IMAGE);
                p.more_input = true;
                (Inner::Pft(Box::new(p)), None)
            }
            Scheme::Gzip => {
                let base = Config { max_sl: cfg.max_sl, isa: cfg.isa, ..Config::new(Scheme::Base, 0, 0, 0) };
                let gz = flate2::write::GzDecoder::new(Vec::new());
                (Inner::Records(Decoder::new(&base, &[], &NO_IMAGE)), Some(Box::new(gz)))
            }
            _ => (Inner::Records(Decoder::new(cfg, &[], &NO_IMAGE)), None),
        };
        StreamDecoder {
            image,
            inner: Some(inner),
            buf: Vec::new(),
            base: 0,
            finished: false,
            mode: Mode::Decoding,
            gunzip,
            gzip_error: None,
            pushed: 0,
            compact_bytes: COMPACT_BYTES,
            gaps: Default::default(),
        }
    }

    /// Drop consumed bytes once there are `n` of them (default 64 KiB); tests set it low
    /// to move the window often.
    #[doc(hidden)]
    pub fn compact_after(mut self, n: usize) -> Self {
        self.compact_bytes = n;
        self
    }

    /// Start at the first sync marker instead of bit 0 (a capture that begins in the
    /// middle of a trace); [`Step::Resynced`] says where decoding starts.
    pub fn from_sync(mut self) -> Self {
        self.mode = Mode::Seeking { from: 0 };
        self
    }

    /// Also yield a `TraceElement::Record` before each record's elements (not pft).
    pub fn report_records(mut self, on: bool) -> Self {
        self.inner = match self.inner.take() {
            Some(Inner::Records(d)) => Some(Inner::Records(d.report_records(on))),
            other => other,
        };
        self
    }

    /// pft only: stop with an error after this many instructions (fuzzing, untrusted input).
    pub fn instruction_limit(mut self, limit: u64) -> Self {
        if let Some(Inner::Pft(p)) = &mut self.inner {
            p.instruction_limit = limit;
        }
        self
    }

    /// The program image.
    pub fn image(&self) -> &M {
        &self.image
    }

    /// Bytes pushed so far (before inflating, for gzip).
    pub fn bytes_pushed(&self) -> u64 {
        self.pushed
    }

    /// Bytes held in the input buffer now.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// Append the next bytes of the trace. Ignored after [`finish`](Self::finish).
    pub fn push(&mut self, bytes: &[u8]) {
        if self.finished {
            return;
        }
        self.pushed += bytes.len() as u64;
        self.compact();
        match &mut self.gunzip {
            Some(gz) => {
                if self.gzip_error.is_none() {
                    if let Err(e) = gz.write_all(bytes) {
                        self.gzip_error = Some(gzip_error(e));
                    }
                    self.buf.append(gz.get_mut());
                }
            }
            None => self.buf.extend_from_slice(bytes),
        }
    }

    /// The next `len` bytes of the trace are lost (a trace file block whose CRC failed,
    /// docs/trace-format.md 12.4). Records that end before them are decoded; the record
    /// they cut is dropped with a [`DecodeError::LostInput`] at the gap, and decoding
    /// resumes after the next sync marker behind them. Not for gzip-L.
    pub fn push_lost(&mut self, len: usize) {
        if self.finished || len == 0 {
            return;
        }
        let start = self.base + self.buf.len() as u64;
        self.pushed += len as u64;
        if self.gunzip.is_some() {
            // A gzip member cannot be inflated past a hole: decoding ends there.
            if self.gzip_error.is_none() {
                self.gzip_error = Some(DecodeError::LostInput { bytes: len as u64, offset: (self.pushed - len as u64) * 8 });
            }
            return;
        }
        self.compact();
        self.buf.resize(self.buf.len() + len, LOST_FILLER);
        self.gaps.push_back((start, start + len as u64));
    }

    /// No more input: the rest of the buffer is decoded to its end.
    pub fn finish(&mut self) {
        if self.finished {
            return;
        }
        if let Some(gz) = &mut self.gunzip {
            if self.gzip_error.is_none() {
                if let Err(e) = gz.try_finish() {
                    self.gzip_error = Some(gzip_error(e));
                }
                self.buf.append(gz.get_mut());
            }
        }
        self.finished = true;
        if let Some(Inner::Pft(p)) = &mut self.inner {
            p.more_input = false;
        }
    }

    /// The next step; a stream's addresses go to `sink` before its element is returned.
    pub fn next<S: AddressSink + ?Sized>(&mut self, sink: &mut S) -> Step {
        let mut got = None;
        let stop = self.run(sink, |step, _| {
            got = Some(step);
            ControlFlow::Break(())
        });
        got.unwrap_or(stop)
    }

    /// Decode everything the buffered input allows, handing each step but the last to
    /// `on_step` (which can stop early with `Break`); returns [`Step::NeedInput`] or
    /// [`Step::Finished`] (or [`Step::Progress`] after a `Break`). Faster than calling
    /// [`next`](Self::next) per element: the decoder is bound to the buffer once.
    pub fn run<S: AddressSink + ?Sized>(
        &mut self,
        sink: &mut S,
        mut on_step: impl FnMut(Step, &mut S) -> ControlFlow<()>,
    ) -> Step {
        if let Some(e) = self.gzip_error.take() {
            self.mode = Mode::Finished;
            if on_step(Step::Error(e), sink).is_break() {
                return Step::Progress;
            }
        }
        while let Some(&(start, end)) = self.gaps.front() {
            // Decode up to the gap as if the input ended there: a record the gap cuts
            // reports `Truncated`, which becomes the gap's error.
            let window = start.saturating_sub(self.base) as usize;
            let decode_to_gap = match self.mode {
                Mode::Decoding => true,
                Mode::Seeking { from } => {
                    let from_rel = from.saturating_sub(self.base) as usize;
                    from_rel <= window && find_sync_marker(&self.buf[..window], from_rel).is_some()
                }
                Mode::Finished => false,
            };
            let mut cut = false;
            if decode_to_gap {
                let stop = self.run_window(window, true, sink, |step, sink| match step {
                    Step::Error(DecodeError::Truncated { .. }) => {
                        cut = true;
                        ControlFlow::Break(())
                    }
                    step => on_step(step, sink),
                });
                if stop == Step::Progress && !cut {
                    return Step::Progress;
                }
            }
            self.gaps.pop_front();
            if cut || self.mode != Mode::Finished {
                self.mode = Mode::Seeking { from: end };
            }
            let lost = DecodeError::LostInput { bytes: end - start, offset: start * 8 };
            if on_step(Step::Error(lost), sink).is_break() {
                return Step::Progress;
            }
        }
        let (len, finished) = (self.buf.len(), self.finished);
        self.run_window(len, finished, sink, on_step)
    }

    /// [`run`](Self::run) over the first `window` bytes of the buffer, which end the input
    /// if `finished`.
    fn run_window<S: AddressSink + ?Sized>(
        &mut self,
        window: usize,
        finished: bool,
        sink: &mut S,
        mut on_step: impl FnMut(Step, &mut S) -> ControlFlow<()>,
    ) -> Step {
        let inner = self.inner.take().expect("the decoder is parked between calls");
        let StreamDecoder { image, buf, base, mode, .. } = self;
        let buf = &buf[..window];
        let base = *base;
        let (inner, stop) = match inner {
            Inner::Records(d) => {
                let mut d = d.rebind(buf, base * 8, image);
                let stop = drive_records(&mut d, buf, base, finished, mode, sink, &mut on_step);
                (Inner::Records(d.rebind(&[], base * 8, &NO_IMAGE)), stop)
            }
            Inner::Pft(p) => {
                let mut p = p.rebind(buf, image, 0);
                let more_input = p.more_input;
                p.more_input = !finished;
                let stop = drive_pft(&mut p, buf, base, finished, mode, sink, &mut on_step);
                p.more_input = more_input;
                (Inner::Pft(Box::new(p.rebind(&[], &NO_IMAGE, 0))), stop)
            }
        };
        self.inner = Some(inner);
        stop
    }

    /// Drop the consumed bytes at the front of the buffer once they are many.
    fn compact(&mut self) {
        let first = match (&self.mode, &self.inner) {
            (Mode::Finished, _) => self.base + self.buf.len() as u64,
            (Mode::Seeking { from }, _) => *from,
            (Mode::Decoding, Some(Inner::Records(d))) => d.first_needed_byte(),
            (Mode::Decoding, Some(Inner::Pft(p))) => self.base + p.next_byte() as u64,
            (_, None) => return,
        };
        let n = first.saturating_sub(self.base).min(self.buf.len() as u64) as usize;
        if n == 0 || (n < self.compact_bytes && n * 2 < self.buf.len()) {
            return;
        }
        self.buf.drain(..n);
        self.base += n as u64;
        self.inner = match self.inner.take() {
            Some(Inner::Pft(p)) => Some(Inner::Pft(Box::new(p.rebind(&[], &NO_IMAGE, n)))),
            other => other,
        };
    }
}

fn gzip_error(e: std::io::Error) -> DecodeError {
    DecodeError::Corrupt { reason: format!("gzip member: {e}"), offset: 0 }
}

/// Look for a sync marker from absolute byte `from`; `Some(at)` is the absolute byte after it.
/// When none is buffered, `from` moves up to where the search must go on (a marker's zeros
/// may already have arrived).
fn seek(buf: &[u8], base: u64, from: &mut u64) -> Option<u64> {
    let rel = from.saturating_sub(base) as usize;
    if rel <= buf.len() {
        if let Some(at) = find_sync_marker(buf, rel) {
            return Some(base + at as u64);
        }
    }
    let keep = streamtrace_model::format::SYNC_MARKER.len() as u64 - 1;
    *from = (*from).max((base + buf.len() as u64).saturating_sub(keep));
    None
}

fn drive_records<I: ProgramImage + ?Sized, S: AddressSink + ?Sized>(
    d: &mut Decoder<'_, I>,
    buf: &[u8],
    base: u64,
    finished: bool,
    mode: &mut Mode,
    sink: &mut S,
    on_step: &mut impl FnMut(Step, &mut S) -> ControlFlow<()>,
) -> Step {
    let end_bit = (base + buf.len() as u64) * 8;
    loop {
        let step = match *mode {
            Mode::Finished => return Step::Finished,
            Mode::Seeking { mut from } => match seek(buf, base, &mut from) {
                Some(at) => {
                    d.resume_at(at);
                    *mode = Mode::Decoding;
                    Step::Resynced { bit: at * 8 }
                }
                None if finished => {
                    *mode = Mode::Finished;
                    return Step::Finished;
                }
                None => {
                    *mode = Mode::Seeking { from };
                    return Step::NeedInput;
                }
            },
            Mode::Decoding => {
                if !finished && end_bit.saturating_sub(d.position()) < INPUT_MARGIN as u64 * 8 {
                    return Step::NeedInput;
                }
                match d.next_element(sink) {
                    Ok(Some(el)) => Step::Element(el),
                    Ok(None) => {
                        *mode = Mode::Finished;
                        return Step::Finished;
                    }
                    Err(e) => {
                        debug_assert!(finished || !matches!(e, DecodeError::Truncated { .. }), "{e}");
                        *mode = match d.resync_from() {
                            Some(from) => Mode::Seeking { from },
                            None => Mode::Finished,
                        };
                        Step::Error(e)
                    }
                }
            }
        };
        if on_step(step, sink).is_break() {
            return Step::Progress;
        }
    }
}

fn drive_pft<I: ProgramImage + ?Sized, S: AddressSink + ?Sized>(
    p: &mut PftDecoder<'_, I>,
    buf: &[u8],
    base: u64,
    finished: bool,
    mode: &mut Mode,
    sink: &mut S,
    on_step: &mut impl FnMut(Step, &mut S) -> ControlFlow<()>,
) -> Step {
    loop {
        let step = match *mode {
            Mode::Finished => return Step::Finished,
            Mode::Seeking { mut from } => match seek(buf, base, &mut from) {
                Some(at) => {
                    p.resume_at((at - base) as usize);
                    *mode = Mode::Decoding;
                    Step::Resynced { bit: at * 8 }
                }
                None if finished => {
                    *mode = Mode::Finished;
                    return Step::Finished;
                }
                None => {
                    *mode = Mode::Seeking { from };
                    return Step::NeedInput;
                }
            },
            Mode::Decoding => {
                p.pause_at = p.instructions.saturating_add(PFT_PAUSE_INSTRUCTIONS);
                match p.next_element(sink) {
                    Ok(Some(el)) => Step::Element(el.shifted(base * 8)),
                    Ok(None) if p.is_done() => {
                        *mode = Mode::Finished;
                        return Step::Finished;
                    }
                    Ok(None) if p.instructions >= p.pause_at => Step::Progress,
                    Ok(None) => return Step::NeedInput,
                    Err(e) => {
                        debug_assert!(finished || !matches!(e, DecodeError::Truncated { .. }), "{e}");
                        *mode = Mode::Seeking { from: base + p.next_byte() as u64 };
                        Step::Error(e.shifted(base * 8))
                    }
                }
            }
        };
        if on_step(step, sink).is_break() {
            return Step::Progress;
        }
    }
}

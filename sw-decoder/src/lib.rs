//! streamtrace-sw-decoder: the debugger-side decompressor. It reads trace-port bits with the
//! configuration that produced them, mirrors the trace module's state through
//! `streamtrace_model::CompressorState` (the very transitions the encoder applies), walks the
//! program image, and yields typed trace elements plus the instruction address sequence.

pub mod address_file;
pub mod synthetic;
mod walk;

use thiserror::Error;

use streamtrace_isa::ProgramImage;
use streamtrace_model::bits::{BitReader, OutOfBits};
use streamtrace_model::format::{
    find_sync_marker, read_nexs_diff, EscapeType, NexsError, ESCAPE_TYPE_BITS, OVERFLOW_COUNT_BITS, SYNC_MARKER,
};
use streamtrace_model::tslz::{Token, TokenError, TslzDecoder};
use streamtrace_model::tuple_history::TupleDecoder;
use streamtrace_model::{BranchClass, CompressorState, Config, IsaMode, RetireEvent, Scheme, StreamDescriptor};

pub mod pft;
pub mod stream;
pub mod views;
pub use pft::PftDecoder;
pub use stream::{Step, StreamDecoder};
pub use walk::{walk_stream, StreamCache, StreamEnd, WalkError};

/// How a stream was recorded (Table 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamRecord {
    LspHit,
    SdcHit { si: u32 },
    /// SDC miss (or a baseline descriptor); `inferred`: the address came from the image.
    Miss { inferred: bool },
}

/// One record as it appears in the bitstream (for `streamtrace dump`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordKind {
    /// bSDC `1`.
    LspHit,
    /// e/rSDC `1` + count: `n` hits in a counter of `width` bits.
    LspRun { n: u32, width: u32 },
    SdcHit { si: u32 },
    MissInferred { sl: u32 },
    /// `lvsa_hit`: e/rSDC only, whether the address was LVSA-compressed.
    MissAddress { sl: u32, addr: u32, lvsa_hit: Option<bool> },
    Escape { kind: EscapeType, lost: u32 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordInfo {
    pub offset: u64,
    pub bits: u64,
    pub kind: RecordKind,
}

/// Typed decoder output, in trace order (in the spirit of OpenCSD's generic elements).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceElement {
    /// Emitted before the elements of each record when record reporting is on.
    Record(RecordInfo),
    /// A stream was replayed: its addresses went to the sink.
    Stream { sa: u32, sl: u32, record: StreamRecord, offset: u64 },
    /// The previous stream ended because an exception was taken.
    Exception { offset: u64 },
    /// State reset at a sync marker; decoding can start here.
    Sync { offset: u64 },
    /// Records were dropped in the trace module: `lost` instructions are missing here.
    Overflow { lost: u32, offset: u64 },
    /// The trace ended cleanly.
    End { offset: u64 },
}

impl TraceElement {
    /// The bit offset of the record the element comes from.
    pub fn offset(&self) -> u64 {
        match *self {
            TraceElement::Record(r) => r.offset,
            TraceElement::Stream { offset, .. }
            | TraceElement::Exception { offset }
            | TraceElement::Sync { offset }
            | TraceElement::Overflow { offset, .. }
            | TraceElement::End { offset } => offset,
        }
    }

    /// The same element with its bit offset moved by `bits` (a streaming window's start).
    pub(crate) fn shifted(mut self, bits: u64) -> TraceElement {
        match &mut self {
            TraceElement::Record(r) => r.offset += bits,
            TraceElement::Stream { offset, .. }
            | TraceElement::Exception { offset }
            | TraceElement::Sync { offset }
            | TraceElement::Overflow { offset, .. }
            | TraceElement::End { offset } => *offset += bits,
        }
        self
    }
}

#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum DecodeError {
    #[error("bit {offset}: trace truncated (input ended inside a record or before END)")]
    Truncated { offset: u64 },
    #[error("bit {offset}: impossible stream index {si} (entry does not exist or is invalid)")]
    ImpossibleIndex { si: u32, offset: u64 },
    #[error("bit {offset}: stream of length {sl} exceeds maxSL {max}")]
    BadLength { sl: u32, max: u32, offset: u64 },
    #[error("bit {offset}: stream at {addr:#010x} runs into unmapped memory at {at:#010x}")]
    OutsideImage { addr: u32, at: u32, offset: u64 },
    #[error("bit {offset}: trace and image disagree: {reason}")]
    ImageMismatch { reason: String, offset: u64 },
    #[error("bit {offset}: corrupt record: {reason}")]
    Corrupt { reason: String, offset: u64 },
    #[error("bit {offset}: sync marker expected after SYNC/OVERFLOW escape")]
    BadSyncMarker { offset: u64 },
    #[error("bit {offset}: stopped after the limit of {limit} instructions")]
    InstructionLimit { limit: u64, offset: u64 },
    /// Input known to be lost here (a trace file block whose CRC failed); decoding resumes
    /// after the next sync marker behind it.
    #[error("bit {offset}: {bytes} byte(s) of trace lost (a damaged block); the record they cut is dropped")]
    LostInput { bytes: u64, offset: u64 },
}

impl DecodeError {
    /// The same error with its bit offset moved by `bits` (a streaming window's start).
    pub(crate) fn shifted(mut self, bits: u64) -> DecodeError {
        match &mut self {
            DecodeError::Truncated { offset }
            | DecodeError::ImpossibleIndex { offset, .. }
            | DecodeError::BadLength { offset, .. }
            | DecodeError::OutsideImage { offset, .. }
            | DecodeError::ImageMismatch { offset, .. }
            | DecodeError::Corrupt { offset, .. }
            | DecodeError::BadSyncMarker { offset }
            | DecodeError::InstructionLimit { offset, .. }
            | DecodeError::LostInput { offset, .. } => *offset += bits,
        }
        self
    }

    pub fn offset(&self) -> u64 {
        match self {
            DecodeError::Truncated { offset }
            | DecodeError::ImpossibleIndex { offset, .. }
            | DecodeError::BadLength { offset, .. }
            | DecodeError::OutsideImage { offset, .. }
            | DecodeError::ImageMismatch { offset, .. }
            | DecodeError::Corrupt { offset, .. }
            | DecodeError::BadSyncMarker { offset }
            | DecodeError::InstructionLimit { offset, .. }
            | DecodeError::LostInput { offset, .. } => *offset,
        }
    }
}

/// Receives the instruction addresses (interworking form: bit 0 = Thumb) of each stream.
pub trait AddressSink {
    fn addresses(&mut self, addrs: &[u32]);
}

impl AddressSink for Vec<u32> {
    #[inline]
    fn addresses(&mut self, addrs: &[u32]) {
        self.extend_from_slice(addrs);
    }
}

/// Counts addresses without keeping them.
#[derive(Default, Debug, Clone, Copy)]
pub struct CountingSink {
    pub count: u64,
    /// Wrapping sum of the addresses, so benchmarks cannot skip the work.
    pub checksum: u32,
}

impl AddressSink for CountingSink {
    #[inline]
    fn addresses(&mut self, addrs: &[u32]) {
        self.count += addrs.len() as u64;
        self.checksum = addrs.iter().fold(self.checksum, |s, &a| s.wrapping_add(a));
    }
}

/// Discards addresses.
pub struct NullSink;

impl AddressSink for NullSink {
    #[inline]
    fn addresses(&mut self, _: &[u32]) {}
}

const STREAM_CACHE_SLOTS: usize = 1 << 14;

/// The token decoders of the competitor schemes (docs/trace-format.md section 10).
enum Competitor<'a> {
    None,
    Tslz(Box<TslzDecoder<'a>>),
    Tuple(Box<TupleDecoder<'a>>),
    /// gzip traces must be inflated first ([`inflate_gzip`]).
    Gzip,
}

impl<'a> Competitor<'a> {
    fn rebind<'b>(self, bytes: &'b [u8], base: u64) -> Competitor<'b> {
        match self {
            Competitor::None => Competitor::None,
            Competitor::Tslz(d) => Competitor::Tslz(Box::new(d.rebind(bytes, base))),
            Competitor::Tuple(d) => Competitor::Tuple(Box::new(d.rebind(bytes, base))),
            Competitor::Gzip => Competitor::Gzip,
        }
    }
}

/// SW-GZIP traces are BASE traces in a gzip member: returns the BASE configuration and
/// the inflated bytes; other configurations are returned unchanged.
pub fn inflate_gzip(cfg: &Config, bytes: &[u8]) -> Result<(Config, Vec<u8>), DecodeError> {
    use std::io::Read;
    if cfg.scheme != Scheme::Gzip {
        return Ok((*cfg, bytes.to_vec()));
    }
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes)
        .read_to_end(&mut out)
        .map_err(|e| DecodeError::Corrupt { reason: format!("gzip member: {e}"), offset: 0 })?;
    let base = Config { max_sl: cfg.max_sl, isa: cfg.isa, ..Config::new(Scheme::Base, 0, 0, 0) };
    Ok((base, out))
}

pub struct Decoder<'a, I: ProgramImage + ?Sized> {
    cfg: Config,
    competitor: Competitor<'a>,
    state: CompressorState,
    image: &'a I,
    bytes: &'a [u8],
    reader: BitReader<'a>,
    cache: StreamCache,
    /// Remaining hits of an AOLC run record, and that record's offset.
    pending_hits: u32,
    pending_offset: u64,
    /// How the previous stream ended (for inferred start addresses).
    last_end: Option<StreamEnd>,
    report_records: bool,
    queued: Option<TraceElement>,
    done: bool,
    k: u32,
    slw: u32,
    /// pft traces (section 11) have a decoder of their own.
    pft: Option<Box<PftDecoder<'a, I>>>,
}

impl<'a, I: ProgramImage + ?Sized> Decoder<'a, I> {
    /// A decoder for a trace that starts at bit 0 in the reset state.
    pub fn new(cfg: &Config, bytes: &'a [u8], image: &'a I) -> Self {
        Decoder {
            cfg: *cfg,
            competitor: match cfg.scheme {
                Scheme::Tslz => Competitor::Tslz(Box::new(TslzDecoder::new(cfg.param, bytes))),
                Scheme::ScT8ht => Competitor::Tuple(Box::new(TupleDecoder::new(cfg, bytes))),
                Scheme::Gzip => Competitor::Gzip,
                _ => Competitor::None,
            },
            state: CompressorState::new(cfg),
            image,
            bytes,
            reader: BitReader::new(bytes),
            cache: StreamCache::new(STREAM_CACHE_SLOTS),
            pending_hits: 0,
            pending_offset: 0,
            last_end: None,
            report_records: false,
            queued: None,
            done: false,
            k: cfg.index_bits(),
            slw: cfg.sl_bits(),
            pft: (cfg.scheme == Scheme::Pft).then(|| Box::new(PftDecoder::new(cfg, bytes, image))),
        }
    }

    /// The same decoder (not pft) over another window of the input whose first byte is
    /// absolute bit `base`, reading code through `image` (streaming, [`StreamDecoder`]).
    pub(crate) fn rebind<'b, J: ProgramImage + ?Sized>(self, bytes: &'b [u8], base: u64, image: &'b J) -> Decoder<'b, J> {
        debug_assert!(self.pft.is_none());
        Decoder {
            cfg: self.cfg,
            competitor: self.competitor.rebind(bytes, base),
            state: self.state,
            image,
            bytes,
            reader: self.reader.rebased(bytes, base),
            cache: self.cache,
            pending_hits: self.pending_hits,
            pending_offset: self.pending_offset,
            last_end: self.last_end,
            report_records: self.report_records,
            queued: self.queued,
            done: self.done,
            k: self.k,
            slw: self.slw,
            pft: None,
        }
    }

    /// Streaming: where [`Decoder::resync`] would start looking for a sync marker (a byte),
    /// and the first byte any later read may need.
    /// None for the competitor schemes, which have no sync records.
    pub(crate) fn resync_from(&self) -> Option<u64> {
        matches!(self.competitor, Competitor::None).then(|| self.reader.position().div_ceil(8))
    }

    pub(crate) fn first_needed_byte(&self) -> u64 {
        self.position() / 8
    }

    /// Streaming: continue in the reset state at absolute byte `at` (just after a sync
    /// marker), as [`Decoder::resync`] does once it found the marker.
    pub(crate) fn resume_at(&mut self, at: u64) {
        self.reader.seek(at * 8);
        self.reset();
        self.done = false;
    }

    /// pft only: stop with an error after this many instructions (fuzzing, untrusted input).
    pub fn instruction_limit(mut self, limit: u64) -> Self {
        if let Some(p) = &mut self.pft {
            p.instruction_limit = limit;
        }
        self
    }

    /// Also yield a `TraceElement::Record` before each record's elements.
    pub fn report_records(mut self, on: bool) -> Self {
        self.report_records = on;
        self
    }

    /// Current bit position.
    pub fn position(&self) -> u64 {
        if let Some(p) = &self.pft {
            return p.position();
        }
        match &self.competitor {
            Competitor::Tslz(d) => d.position(),
            Competitor::Tuple(d) => d.position(),
            _ => self.reader.position(),
        }
    }

    pub fn state(&self) -> &CompressorState {
        &self.state
    }

    /// Skip to the next sync marker at or after the current byte and continue from there in
    /// the reset state (start in the middle of a trace, or recover after an error). Returns
    /// the bit offset where decoding resumes, or None if no marker follows.
    pub fn resync(&mut self) -> Option<u64> {
        if let Some(p) = &mut self.pft {
            return p.resync();
        }
        // The competitor schemes have no sync records (section 10): nothing to resume at.
        if !matches!(self.competitor, Competitor::None) {
            return None;
        }
        let from = self.reader.position().div_ceil(8) as usize;
        let at = find_sync_marker(self.bytes, from)?;
        self.reader.seek(at as u64 * 8);
        self.reset();
        self.done = false;
        Some(at as u64 * 8)
    }

    fn reset(&mut self) {
        self.state.reset();
        self.pending_hits = 0;
        self.last_end = None;
        self.queued = None;
    }

    fn out_of_bits(&self, e: OutOfBits, record: u64) -> DecodeError {
        let _ = e;
        DecodeError::Truncated { offset: record }
    }

    /// The next element; `Ok(None)` after END. Stream addresses go to `sink`.
    pub fn next_element<S: AddressSink + ?Sized>(&mut self, sink: &mut S) -> Result<Option<TraceElement>, DecodeError> {
        if let Some(p) = &mut self.pft {
            return p.next_element(sink);
        }
        if let Some(q) = self.queued.take() {
            return Ok(Some(q));
        }
        if self.pending_hits > 0 {
            self.pending_hits -= 1;
            let offset = self.pending_offset;
            return self.lsp_hit_stream(offset, sink).map(Some);
        }
        if self.done {
            return Ok(None);
        }
        let offset = self.position();
        let result = if !matches!(self.competitor, Competitor::None) {
            self.competitor_record(offset, sink)
        } else if self.cfg.scheme.uses_sdc() {
            self.sdc_record(offset, sink)
        } else {
            self.baseline_record(offset, sink)
        };
        match result {
            Ok((info, element)) => {
                if self.report_records {
                    self.queued = Some(element);
                    Ok(Some(TraceElement::Record(RecordInfo { offset, bits: self.position() - offset, kind: info })))
                } else {
                    Ok(Some(element))
                }
            }
            Err(e) => Err(e),
        }
    }

    fn get(&mut self, n: u32, record: u64) -> Result<u64, DecodeError> {
        self.reader.get(n).map_err(|e| self.out_of_bits(e, record))
    }

    fn sdc_record<S: AddressSink + ?Sized>(
        &mut self,
        offset: u64,
        sink: &mut S,
    ) -> Result<(RecordKind, TraceElement), DecodeError> {
        if self.get(1, offset)? == 1 {
            let Some(aolc) = &self.state.aolc else {
                let el = self.lsp_hit_stream(offset, sink)?;
                return Ok((RecordKind::LspHit, el));
            };
            let width = aolc.width();
            let n = self.get(width, offset)? as u32 + 1;
            if let Some(a) = &mut self.state.aolc {
                a.after_run(n);
            }
            self.pending_hits = n - 1;
            self.pending_offset = offset;
            let el = self.lsp_hit_stream(offset, sink)?;
            return Ok((RecordKind::LspRun { n, width }, el));
        }
        let si = self.get(self.k, offset)? as u32;
        if si != 0 {
            let lsp = self.state.lsp.as_ref().expect("SDC scheme");
            if lsp.predict() == si as u16 {
                return Err(DecodeError::Corrupt {
                    reason: format!("SDC-hit record for index {si}, which the LSP predicts (would be an LSP hit)"),
                    offset,
                });
            }
            let (a, sl) = self.state.entry_address(si).ok_or(DecodeError::ImpossibleIndex { si, offset })?;
            self.state.replay_indexed(si);
            let el = self.replay(a, sl, StreamRecord::SdcHit { si }, offset, sink)?;
            return Ok((RecordKind::SdcHit { si }, el));
        }
        let sl = self.get(self.slw, offset)? as u32;
        if sl == 0 {
            return self.escape(offset);
        }
        self.check_sl(sl, offset)?;
        let (a, kind) = if self.state.infer {
            (self.inferred_address(offset)?, RecordKind::MissInferred { sl })
        } else {
            let (a, lvsa_hit) = self.read_sdc_address(offset)?;
            (a, RecordKind::MissAddress { sl, addr: a, lvsa_hit })
        };
        let found = self.state.sdc.as_ref().expect("SDC scheme").lookup(a, sl);
        if let Some(si) = found {
            // Only an rSDC LVSA miss can send a miss for a stream the SDC holds.
            let lvsa_miss =
                self.cfg.scheme == Scheme::RSdc && !self.state.lvsa.as_ref().is_some_and(|v| v.matches(a));
            if !lvsa_miss {
                return Err(DecodeError::Corrupt {
                    reason: format!("miss record for ({a:#010x}, {sl}) which SDC entry {si} holds"),
                    offset,
                });
            }
        }
        self.state.replay_miss(a, sl, found);
        let inferred = matches!(kind, RecordKind::MissInferred { .. });
        let el = self.replay(a, sl, StreamRecord::Miss { inferred }, offset, sink)?;
        Ok((kind, el))
    }

    fn baseline_record<S: AddressSink + ?Sized>(
        &mut self,
        offset: u64,
        sink: &mut S,
    ) -> Result<(RecordKind, TraceElement), DecodeError> {
        let sl = self.get(self.slw, offset)? as u32;
        if sl == 0 {
            return self.escape(offset);
        }
        self.check_sl(sl, offset)?;
        let (a, kind) = if self.cfg.scheme != Scheme::FBase && self.state.infer {
            (self.inferred_address(offset)?, RecordKind::MissInferred { sl })
        } else {
            let a = if self.cfg.scheme == Scheme::Nexs {
                let d = read_nexs_diff(&mut self.reader).map_err(|e| match e {
                    NexsError::Truncated(_) => DecodeError::Truncated { offset },
                    NexsError::BadGroup { offset: g } => {
                        DecodeError::Corrupt { reason: format!("bad NEXS address group at bit {g}"), offset }
                    }
                })?;
                d ^ self.state.prev_sa
            } else {
                self.get(32, offset)? as u32
            };
            (a, RecordKind::MissAddress { sl, addr: a, lvsa_hit: None })
        };
        let inferred = matches!(kind, RecordKind::MissInferred { .. });
        let el = self.replay(a, sl, StreamRecord::Miss { inferred }, offset, sink)?;
        Ok((kind, el))
    }

    /// One token of a competitor scheme (section 10). TSLZ records hold several streams and
    /// a stream can span records, so offsets are those of the token decoder's position.
    fn competitor_record<S: AddressSink + ?Sized>(
        &mut self,
        offset: u64,
        sink: &mut S,
    ) -> Result<(RecordKind, TraceElement), DecodeError> {
        let map = |e: TokenError| {
            if e.truncated {
                DecodeError::Truncated { offset: e.offset }
            } else {
                DecodeError::Corrupt { reason: e.reason, offset: e.offset }
            }
        };
        let token = match &mut self.competitor {
            Competitor::Tslz(d) => d.next_token().map_err(map)?,
            Competitor::Tuple(d) => d.next_token().map_err(map)?,
            Competitor::Gzip => {
                return Err(DecodeError::Corrupt {
                    reason: "a gzip trace must be inflated first (sw_decoder::inflate_gzip)".into(),
                    offset,
                })
            }
            Competitor::None => unreachable!("competitor_record is only called for competitor schemes"),
        };
        match token {
            None | Some(Token::End) => {
                self.done = true;
                Ok((RecordKind::Escape { kind: EscapeType::End, lost: 0 }, TraceElement::End { offset }))
            }
            Some(Token::Exception) => {
                self.state.infer = false;
                Ok((RecordKind::Escape { kind: EscapeType::Exception, lost: 0 }, TraceElement::Exception { offset }))
            }
            Some(Token::Stream { sa, sl }) => {
                if sl == 0 {
                    return Err(DecodeError::Corrupt { reason: "stream of length 0".into(), offset });
                }
                self.check_sl(sl, offset)?;
                let (a, kind) = match sa {
                    None => (self.inferred_address(offset)?, RecordKind::MissInferred { sl }),
                    Some(a) => (a, RecordKind::MissAddress { sl, addr: a, lvsa_hit: None }),
                };
                if matches!(self.competitor, Competitor::Tslz(_)) && sa.is_some() && self.state.infer {
                    return Err(DecodeError::Corrupt {
                        reason: "TSLZ stream carries an address that is inferable".into(),
                        offset,
                    });
                }
                let inferred = sa.is_none();
                let el = self.replay(a, sl, StreamRecord::Miss { inferred }, offset, sink)?;
                if let Competitor::Tslz(d) = &mut self.competitor {
                    d.set_prev_sa(a);
                }
                Ok((kind, el))
            }
        }
    }

    fn check_sl(&self, sl: u32, offset: u64) -> Result<(), DecodeError> {
        if sl > self.cfg.max_sl {
            Err(DecodeError::BadLength { sl, max: self.cfg.max_sl, offset })
        } else {
            Ok(())
        }
    }

    fn inferred_address(&self, offset: u64) -> Result<u32, DecodeError> {
        match self.last_end {
            Some(StreamEnd { class: BranchClass::DirectCond, target: Some(t) }) => Ok(t),
            other => Err(DecodeError::ImageMismatch {
                reason: format!(
                    "inferable start address, but the previous stream did not end in a direct conditional branch ({:?})",
                    other.map(|e| e.class)
                ),
                offset,
            }),
        }
    }

    /// The address field of an SDC-scheme miss record (section 6.1).
    fn read_sdc_address(&mut self, offset: u64) -> Result<(u32, Option<bool>), DecodeError> {
        let Some(lvsa) = self.state.lvsa else {
            return Ok((self.get(32, offset)? as u32, None));
        };
        let low = self.cfg.low_bits();
        let u = lvsa.width();
        let hit = self.get(1, offset)? == 1;
        let a = if hit {
            let lower = (self.get(32 - u - low, offset)? as u32) << low;
            lvsa.combine(lower)
        } else {
            (self.get(32 - low, offset)? as u32) << low
        };
        if self.cfg.scheme == Scheme::ESdc {
            if let Some(v) = &mut self.state.lvsa {
                v.update(a);
            }
        }
        Ok((a, Some(hit)))
    }

    fn escape(&mut self, offset: u64) -> Result<(RecordKind, TraceElement), DecodeError> {
        let kind = EscapeType::from_bits(self.get(ESCAPE_TYPE_BITS, offset)?);
        let mut lost = 0;
        let element = match kind {
            EscapeType::End => {
                let pad = self.reader.align_to_byte().map_err(|_| DecodeError::Truncated { offset })?;
                if pad != 0 {
                    return Err(DecodeError::Corrupt { reason: "non-zero padding after END".into(), offset });
                }
                self.done = true;
                TraceElement::End { offset }
            }
            EscapeType::Exception => {
                // The next start address is never inferred after an exception (section 3.1).
                self.state.infer = false;
                TraceElement::Exception { offset }
            }
            EscapeType::Sync => {
                self.marker(offset)?;
                TraceElement::Sync { offset }
            }
            EscapeType::Overflow => {
                lost = self.get(OVERFLOW_COUNT_BITS, offset)? as u32;
                self.marker(offset)?;
                TraceElement::Overflow { lost, offset }
            }
        };
        Ok((RecordKind::Escape { kind, lost }, element))
    }

    fn marker(&mut self, offset: u64) -> Result<(), DecodeError> {
        let pad = self.reader.align_to_byte().map_err(|_| DecodeError::Truncated { offset })?;
        for &b in SYNC_MARKER.iter() {
            let got = self.reader.get(8).map_err(|_| DecodeError::Truncated { offset })?;
            if got != b as u64 || pad != 0 {
                return Err(DecodeError::BadSyncMarker { offset });
            }
        }
        self.reset();
        Ok(())
    }

    #[inline(always)]
    fn lsp_hit_stream<S: AddressSink + ?Sized>(&mut self, offset: u64, sink: &mut S) -> Result<TraceElement, DecodeError> {
        let si = self.state.lsp.as_ref().expect("SDC scheme").predict() as u32;
        let (a, sl) = self.state.entry_address(si).ok_or(DecodeError::ImpossibleIndex { si, offset })?;
        // An entry was found, so `si` is not 0: the predicted entry's replay.
        self.state.replay_predicted(si);
        self.replay(a, sl, StreamRecord::LspHit, offset, sink)
    }

    /// Replay one stream: addresses to the sink, then the shared after-stream bookkeeping.
    /// (Inlined into its three callers: per stream it is most of the decoder's work, and a
    /// call returning the element through memory cost about a tenth of the decode.)
    #[inline(always)]
    fn replay<S: AddressSink + ?Sized>(
        &mut self,
        a: u32,
        sl: u32,
        record: StreamRecord,
        offset: u64,
        sink: &mut S,
    ) -> Result<TraceElement, DecodeError> {
        if a & 1 == 1 && self.cfg.isa == IsaMode::ArmOnly {
            return Err(DecodeError::ImageMismatch { reason: format!("Thumb address {a:#010x} with isa=arm"), offset });
        }
        let (addrs, end) = self.cache.get(self.image, a, sl).map_err(|e| match e {
            WalkError::Unmapped { addr } => DecodeError::OutsideImage { addr: a, at: addr, offset },
            WalkError::Misaligned { addr } => {
                DecodeError::ImageMismatch { reason: format!("misaligned ARM address {addr:#010x}"), offset }
            }
        })?;
        sink.addresses(addrs);
        self.last_end = Some(end);
        let d = StreamDescriptor { sa: a, sl, last_class: end.class, exception: false };
        self.state.after_stream(&d);
        Ok(TraceElement::Stream { sa: a, sl, record, offset })
    }
}

/// Everything a whole-trace decode produced.
#[derive(Clone, Debug, Default)]
pub struct DecodedTrace {
    /// Instruction addresses in interworking form.
    pub addresses: Vec<u32>,
    pub elements: Vec<TraceElement>,
    /// Errors met, each followed by a resync (if a marker was found).
    pub errors: Vec<DecodeError>,
    /// Where OVERFLOW records said instructions are missing.
    pub gaps: Vec<Gap>,
    pub ended: bool,
}

/// `lost` instructions are missing before `addresses[at]` (an OVERFLOW record).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gap {
    pub at: usize,
    pub lost: u64,
}

/// Decode a whole trace from bit 0, resynchronizing after errors. Streams are kept as
/// elements only when `keep_elements` (they are many).
pub fn decode_trace<I: ProgramImage + ?Sized>(cfg: &Config, bytes: &[u8], image: &I, keep_elements: bool) -> DecodedTrace {
    let mut out = DecodedTrace::default();
    let inflated: Vec<u8>;
    let (cfg, bytes): (Config, &[u8]) = if cfg.scheme == Scheme::Gzip {
        match inflate_gzip(cfg, bytes) {
            Ok((c, b)) => {
                inflated = b;
                (c, &inflated)
            }
            Err(e) => {
                out.errors.push(e);
                return out;
            }
        }
    } else {
        (*cfg, bytes)
    };
    let cfg = &cfg;
    let mut dec = Decoder::new(cfg, bytes, image);
    loop {
        match dec.next_element(&mut out.addresses) {
            Ok(Some(el)) => {
                match el {
                    TraceElement::End { .. } => out.ended = true,
                    TraceElement::Overflow { lost, .. } => {
                        out.gaps.push(Gap { at: out.addresses.len(), lost: lost as u64 })
                    }
                    _ => {}
                }
                if keep_elements || !matches!(el, TraceElement::Stream { .. }) {
                    out.elements.push(el);
                }
            }
            Ok(None) => break,
            Err(e) => {
                out.errors.push(e);
                if dec.resync().is_none() {
                    break;
                }
            }
        }
    }
    out
}

/// First difference between decoded addresses and the retire events they should equal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    pub index: usize,
    pub expected: Option<u32>,
    pub got: Option<u32>,
}

/// Compare decoded interworking addresses with the events' addresses.
pub fn verify_addresses(decoded: &[u32], events: &[RetireEvent]) -> Result<(), Mismatch> {
    verify_against(decoded, events.iter().map(RetireEvent::iw_addr))
}

/// Compare decoded addresses that have overflow gaps with the complete expected sequence:
/// every decoded address must equal the expected one once the lost instructions of each
/// gap before it are skipped, and nothing may be missing or extra. `index` in a mismatch
/// is the position in `expected`.
pub fn verify_addresses_with_gaps(decoded: &[u32], gaps: &[Gap], expected: &[u32]) -> Result<(), Mismatch> {
    let mut e = 0usize;
    let mut d = 0usize;
    let mut gap = gaps.iter().peekable();
    loop {
        while let Some(g) = gap.peek() {
            if g.at != d {
                break;
            }
            e = e.saturating_add(g.lost as usize);
            gap.next();
        }
        match (decoded.get(d), expected.get(e)) {
            (None, None) => return Ok(()),
            (got, want) if got == want => {}
            (got, want) => return Err(Mismatch { index: e, expected: want.copied(), got: got.copied() }),
        }
        d += 1;
        e += 1;
    }
}

/// Compare decoded interworking addresses with expected interworking addresses.
pub fn verify_addresses_iw(decoded: &[u32], expected: &[u32]) -> Result<(), Mismatch> {
    verify_against(decoded, expected.iter().copied())
}

fn verify_against(decoded: &[u32], expected: impl Iterator<Item = u32>) -> Result<(), Mismatch> {
    let mut n = 0;
    for (i, want) in expected.enumerate() {
        let got = decoded.get(i).copied();
        if got != Some(want) {
            return Err(Mismatch { index: i, expected: Some(want), got });
        }
        n = i + 1;
    }
    if decoded.len() > n {
        return Err(Mismatch { index: n, expected: None, got: Some(decoded[n]) });
    }
    Ok(())
}

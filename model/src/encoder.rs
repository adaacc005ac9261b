//! Functional-mode trace encoder: retire events (or captured stream descriptors) in,
//! trace-port bits out (docs/trace-format.md sections 3 and 6).

use thiserror::Error;

use crate::bits::BitWriter;
use crate::compressor::{CompressorState, StreamOutcome};
use crate::config::{Config, IsaMode, Scheme};
use crate::detector::{StreamDescriptor, StreamDetector};
use crate::event::{BranchClass, PlainRun, RetireEvent};
use crate::pft::PftEncoder;
use crate::format::{write_nexs_diff, EscapeType, ESCAPE_TYPE_BITS, OVERFLOW_COUNT_BITS, SYNC_MARKER};
use crate::stats::{unique_key, DescriptorSet, Stats};
use crate::tslz::{stream_words, LzEncoder, END_WORD};
use crate::tuple_history::TupleEncoder;

/// The paper's competitor schemes have formats of their own (docs/trace-format.md
/// section 10); gzip is BASE plus a transform at the end and needs no state here.
enum Competitor {
    None,
    Tslz(Box<LzEncoder>),
    Tuple(Box<TupleEncoder>),
}

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum EncodeError {
    #[error("event {index}: Thumb instruction at {pc:#010x} but the configuration has isa=arm")]
    ThumbInArmOnly { index: u64, pc: u32 },
    #[error("event {index}: pc {pc:#010x} is not aligned for the {state} instruction set")]
    Misaligned { index: u64, pc: u32, state: &'static str },
    #[error("event {index}: pc {pc:#010x} (state {state}) does not follow the previous event's next_pc {expected:#010x}")]
    Discontinuity { index: u64, pc: u32, state: &'static str, expected: u32 },
    #[error("event {index}: pc {pc:#010x} (state {state}): {reason}")]
    Inconsistent { index: u64, pc: u32, state: &'static str, reason: String },
    #[error("events {index}..{end}: a run of {count} plain instructions {reason}", end = index + *count as u64)]
    PlainRun { index: u64, count: u32, reason: &'static str },
}

/// A plain run that a consumer (the encoder, the cycle module) does not take in one step,
/// offered `budget` when it was event `index`: an empty run does nothing; the first
/// instruction goes through `push_first`, the consumer's path for single events (with its
/// errors); a longer run is refused after it, naming why (`cycles_increase`: whether the
/// run's first and last retire cycles leave room for one cycle per instruction).
pub(crate) fn refuse_plain_run<E: From<EncodeError>>(
    run: &PlainRun,
    index: u64,
    budget: u32,
    cycles_increase: bool,
    push_first: impl FnOnce(&RetireEvent) -> Result<(), E>,
) -> Result<(), E> {
    if run.count == 0 {
        return Ok(());
    }
    push_first(&run.first_event())?;
    if run.count == 1 {
        return Ok(());
    }
    let reason = if run.count > budget {
        "exceeds the plain budget"
    } else if !cycles_increase {
        "has retire cycles that do not increase"
    } else {
        "does not follow the previous event"
    };
    Err(EncodeError::PlainRun { index, count: run.count, reason }.into())
}

/// Which component a bit belongs to, for the statistics.
#[derive(Clone, Copy)]
enum Component {
    LspHit,
    SdcHit,
    Miss,
    Escape,
}

/// The encoded trace: bytes, ending with END and its zero padding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncodedTrace {
    pub bytes: Vec<u8>,
    /// Bits in `bytes` (a multiple of 8: the padding after END is included).
    pub bit_len: u64,
}

pub struct Encoder {
    cfg: Config,
    detector: StreamDetector,
    state: CompressorState,
    out: BitWriter,
    stats: Stats,
    unique: DescriptorSet,
    /// The unique-stream count given by the caller ([`Encoder::with_unique_streams`]):
    /// the set is then not kept.
    unique_known: Option<u64>,
    /// Per SDC entry, the unique-stream key last added for a stream found there: a stream
    /// found where it was found before (most SDC hits) is already in `unique`, so it
    /// costs a compare instead of a probe of the set. (Empty without an SDC.)
    unique_at_entry: Vec<u64>,
    sum_sl: u64,
    events: u64,
    /// next_pc of the previous event (interworking form), for the continuity check.
    expected_pc: Option<u32>,
    k: u32,
    slw: u32,
    competitor: Competitor,
    /// pft (section 11) consumes events itself: it has no stream detector.
    pft: Option<Box<PftEncoder>>,
    /// An SDC scheme (none of them a competitor), decided here instead of per stream.
    sdc_records: bool,
}

impl Encoder {
    /// `cfg` must be valid (`Config::validate`); parsing from text guarantees it.
    pub fn new(cfg: &Config) -> Self {
        debug_assert!(cfg.validate().is_ok());
        Encoder {
            cfg: *cfg,
            detector: StreamDetector::new(cfg.max_sl),
            state: CompressorState::new(cfg),
            out: BitWriter::with_capacity(1 << 16),
            stats: Stats { config: cfg.to_string(), ..Default::default() },
            unique: DescriptorSet::new(),
            unique_known: None,
            unique_at_entry: if cfg.scheme.uses_sdc() { vec![0; (cfg.sets * cfg.ways) as usize] } else { Vec::new() },
            sum_sl: 0,
            events: 0,
            expected_pc: None,
            k: cfg.index_bits(),
            slw: cfg.sl_bits(),
            competitor: match cfg.scheme {
                Scheme::Tslz => Competitor::Tslz(Box::new(LzEncoder::new(cfg.param))),
                Scheme::ScT8ht => Competitor::Tuple(Box::new(TupleEncoder::new(cfg))),
                _ => Competitor::None,
            },
            pft: (cfg.scheme == Scheme::Pft)
                .then(|| Box::new(PftEncoder::new(&cfg.pft, cfg.low_bits(), cfg.sync_period))),
            sdc_records: cfg.scheme.uses_sdc(),
        }
    }

    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// Report `n` unique streams instead of counting them: for callers that encode the
    /// same descriptors under many configurations and count them once
    /// ([`crate::stats::count_unique_streams`] of everything this encoder will see).
    pub(crate) fn with_unique_streams(mut self, n: u64) -> Self {
        self.unique_known = Some(n);
        self
    }

    fn unique_streams(&self) -> u64 {
        self.unique_known.unwrap_or(self.unique.len() as u64)
    }

    /// Instructions in the stream the detector is building (not yet encoded).
    pub fn current_stream_len(&self) -> u32 {
        self.detector.current_len()
    }

    /// Bits emitted so far.
    pub fn bit_len(&self) -> u64 {
        match &self.pft {
            Some(p) => p.bit_len(),
            None => self.record_bit_len(),
        }
    }

    /// [`Encoder::bit_len`] of every scheme but pft (whose bits its coder holds).
    #[inline]
    fn record_bit_len(&self) -> u64 {
        debug_assert!(self.pft.is_none());
        // SW-GZIP keeps its BASE records in a buffer and sends all of its bits at END
        // (trace-format.md section 10): nothing has reached the port before.
        if self.cfg.scheme == Scheme::Gzip {
            0
        } else {
            self.out.bit_len()
        }
    }

    /// Sync markers emitted so far (each SYNC and OVERFLOW ends with one). With
    /// [`Encoder::bit_len`] after each push this places every marker, which is how
    /// `decode --from-sync --verify` finds the instruction a decoder restarts at.
    pub fn markers(&self) -> u64 {
        match &self.pft {
            Some(p) => p.front.stats.syncs,
            None => self.stats.syncs,
        }
    }

    /// One retired instruction. Checks the event against the configuration and against the
    /// previous event, so a corrupt event source is reported instead of silently producing a
    /// trace that decodes to something else.
    pub fn push(&mut self, ev: &RetireEvent) -> Result<(), EncodeError> {
        self.accept(ev)?;
        if let Some(p) = &mut self.pft {
            p.push(ev);
            return Ok(());
        }
        if let Some(d) = self.detector.push(ev) {
            let _ = self.encode_stream(&d);
        }
        Ok(())
    }

    /// How many plain instructions (see [`PlainRun`]) [`Encoder::push_plain_run`] takes in
    /// one run now: as many as the scheme only counts (the stream detector's room in the
    /// current stream; pft: its front end's, [`crate::pft::PftFrontEnd`]); 0 before the
    /// first event.
    #[inline]
    pub fn plain_budget(&self) -> u32 {
        if self.expected_pc.is_none() {
            return 0;
        }
        match &self.pft {
            Some(p) => p.front.plain_budget(),
            None => self.detector.plain_room(),
        }
    }

    /// A run of plain instructions, exactly as [`Encoder::push`] of each would take them,
    /// for a run of at most [`Encoder::plain_budget`] instructions. The first instruction's
    /// own errors are `push`'s; a longer run is refused after its first instruction.
    #[inline]
    pub fn push_plain_run(&mut self, run: &PlainRun) -> Result<(), EncodeError> {
        if run.count >= 1 && run.count <= self.plain_budget() && self.accepts_plain_run(run) {
            self.count_plain_run(run);
            self.extend_plain_run(run);
            return Ok(());
        }
        self.refuse_plain_run(run)
    }

    /// The stream detector's or pft's front end's part of a run [`Encoder::push_plain_run`]
    /// takes (the cycle mode calls it for pft).
    #[inline(always)]
    pub(crate) fn extend_plain_run(&mut self, run: &PlainRun) {
        match &mut self.pft {
            Some(p) => p.front.extend_plain(run.count),
            None => self.detector.extend_plain_run(run.pc | run.thumb as u32, run.count),
        }
    }

    /// (See [`refuse_plain_run`].)
    #[cold]
    #[inline(never)]
    fn refuse_plain_run(&mut self, run: &PlainRun) -> Result<(), EncodeError> {
        let (index, budget) = (self.events, self.plain_budget());
        refuse_plain_run(run, index, budget, true, |first| self.push(first))
    }

    /// Check one event and count it, without stream detection (cycle mode runs its own
    /// detector and feeds descriptors later, through the buffers).
    #[inline]
    pub(crate) fn accept(&mut self, ev: &RetireEvent) -> Result<(), EncodeError> {
        let misaligned = ev.pc & (ev.size() - 1) != 0;
        let thumb_in_arm = ev.thumb && self.cfg.isa == IsaMode::ArmOnly;
        let discontinuous = self.expected_pc.is_some_and(|e| e != ev.iw_addr());
        // (An exception leaves for its vector whatever the class and the taken flag say.)
        let inconsistent = !ev.exception
            && if ev.taken {
                ev.class == BranchClass::None
            } else {
                ev.next_pc != ev.sequential_next() || ev.always_taken()
            };
        if thumb_in_arm | misaligned | discontinuous | inconsistent {
            return Err(self.event_error(ev));
        }
        self.count_plain(ev);
        Ok(())
    }

    /// Whether [`Encoder::accept`] takes `ev` as an instruction that changes no flow: class
    /// none, not taken, no exception, at the expected address (so not the first event),
    /// aligned, allowed in the ISA mode, followed by the next instruction. The common case
    /// in one test, for the cycle mode's per-instruction path; [`Encoder::count_plain`]
    /// then does what `accept` would.
    #[inline(always)]
    pub(crate) fn accepts_plain(&self, ev: &RetireEvent) -> bool {
        ev.class == BranchClass::None
            && !ev.taken
            && !ev.exception
            && self.accepts_plain_at(ev.pc, ev.thumb)
            && ev.next_pc == ev.sequential_next()
    }

    /// [`Encoder::accepts_plain`] of the run's first instruction ([`PlainRun::first_event`]),
    /// without building it: class none, not taken, no exception and the next instruction
    /// after it hold for every run.
    #[inline(always)]
    pub(crate) fn accepts_plain_run(&self, run: &PlainRun) -> bool {
        self.accepts_plain_at(run.pc, run.thumb)
    }

    /// The checks of [`Encoder::accepts_plain`] that depend on the address and the state:
    /// the expected address, aligned, allowed in the ISA mode.
    #[inline(always)]
    fn accepts_plain_at(&self, pc: u32, thumb: bool) -> bool {
        let size = if thumb { 2 } else { 4 };
        self.expected_pc == Some(pc | thumb as u32) && pc & (size - 1) == 0 && !(thumb && self.cfg.isa == IsaMode::ArmOnly)
    }

    /// [`Encoder::accept`]'s effects on an event it takes (all [`Encoder::accept`] does
    /// after its checks; the cycle mode calls it after [`Encoder::accepts_plain`]).
    #[inline(always)]
    pub(crate) fn count_plain(&mut self, ev: &RetireEvent) {
        self.count_plain_n(ev.next_pc, 1);
    }

    /// [`Encoder::count_plain`] for a run of instructions that [`Encoder::accepts_plain`]
    /// takes one after the other (it took the first; the others follow it).
    #[inline(always)]
    pub(crate) fn count_plain_run(&mut self, run: &PlainRun) {
        self.count_plain_n(run.next_iw(), run.count as u64);
    }

    #[inline(always)]
    fn count_plain_n(&mut self, next_iw: u32, n: u64) {
        self.expected_pc = Some(next_iw);
        self.events += n;
        self.stats.instructions += n;
    }

    /// What is wrong with `ev` (which [`Encoder::accept`] refused), in the order it checks.
    #[cold]
    fn event_error(&self, ev: &RetireEvent) -> EncodeError {
        let index = self.events;
        let state = if ev.thumb { "Thumb" } else { "ARM" };
        if ev.thumb && self.cfg.isa == IsaMode::ArmOnly {
            return EncodeError::ThumbInArmOnly { index, pc: ev.pc };
        }
        if ev.pc & (ev.size() - 1) != 0 {
            return EncodeError::Misaligned { index, pc: ev.pc, state };
        }
        if let Some(expected) = self.expected_pc.filter(|&e| e != ev.iw_addr()) {
            return EncodeError::Discontinuity { index, pc: ev.pc, state, expected };
        }
        let reason = if ev.taken {
            "class none cannot change the PC but the event says taken".to_string()
        } else if ev.always_taken() {
            format!("class {} always changes the PC but the event says not taken", ev.class)
        } else {
            format!("not taken but next_pc {:#010x} is not the next instruction {:#010x}", ev.next_pc, ev.sequential_next())
        };
        EncodeError::Inconsistent { index, pc: ev.pc, state, reason }
    }

    /// Encode one descriptor whose instructions were already counted; returns the bits it
    /// produced (records and escapes) and whether it missed in the SDC, which decides its
    /// service time in cycle mode (docs/trace-timing.md section 3).
    /// (Inlined with the stream's encoding into its callers, the cycle module's one path
    /// per descriptor and the sweeps' loop: a call and its register saves less per stream.)
    #[inline(always)]
    pub(crate) fn service_descriptor(&mut self, d: &StreamDescriptor) -> (u64, bool) {
        // (pft has no descriptors: its bits need no test per stream.)
        let before = self.record_bit_len();
        let miss = self.encode_stream_inline(d);
        (self.record_bit_len() - before, miss)
    }

    /// Emit an OVERFLOW escape for `lost` instructions and reset (cycle mode's overflow
    /// entry); returns the bits produced.
    pub(crate) fn service_overflow(&mut self, lost: u64) -> u64 {
        let before = self.bit_len();
        self.overflow_record(lost);
        self.bit_len() - before
    }

    /// Count instructions that arrive as a captured descriptor (cycle-mode replay).
    pub(crate) fn count_instructions(&mut self, n: u64) {
        self.stats.instructions += n;
    }

    /// Encode a whole slice of events.
    pub fn push_all(&mut self, events: &[RetireEvent]) -> Result<(), EncodeError> {
        events.iter().try_for_each(|e| self.push(e))
    }

    /// Replay a stream descriptor captured earlier (sweeps use this instead of re-simulating;
    /// the descriptor's instructions count toward the statistics). Not for pft, which needs
    /// every retire event (sweeps refuse it).
    #[inline]
    pub fn push_descriptor(&mut self, d: &StreamDescriptor) {
        debug_assert!(self.pft.is_none(), "pft cannot encode stream descriptors");
        self.stats.instructions += d.sl as u64;
        let _ = self.encode_stream(d);
    }

    /// Cut the current stream and emit SYNC (section 7, requested sync).
    /// The competitor schemes (section 10) have no SYNC record: for them this does nothing.
    pub fn request_sync(&mut self) {
        if let Some(p) = &mut self.pft {
            p.sync();
            return;
        }
        // The competitors have no sync record, and a stream cut without one would leave their
        // decoders inferring a branch target where execution went on sequentially
        // (trace-format.md section 10): nothing happens.
        if !matches!(self.competitor, Competitor::None) || self.cfg.scheme == Scheme::Gzip {
            return;
        }
        if let Some(d) = self.detector.cut() {
            let _ = self.encode_stream(&d);
        }
        self.sync();
    }

    /// Records were dropped (cycle mode): discard the stream in progress, emit OVERFLOW with
    /// `lost_instructions` (which must count the dropped records' instructions plus
    /// [`Encoder::current_stream_len`], docs/trace-format.md section 7) and reset.
    pub fn overflow(&mut self, lost_instructions: u64) {
        if let Some(p) = &mut self.pft {
            p.overflow(lost_instructions);
            return;
        }
        let _discarded = self.detector.cut();
        self.overflow_record(lost_instructions);
    }

    fn overflow_record(&mut self, lost_instructions: u64) {
        self.flush_run();
        self.escape(EscapeType::Overflow);
        let lost = lost_instructions.min(u32::MAX as u64);
        self.put(Component::Escape, lost, OVERFLOW_COUNT_BITS);
        self.marker_and_reset();
    }

    /// Flush the partial stream, emit END, and return the trace and statistics.
    pub fn finish(mut self) -> (EncodedTrace, Stats) {
        if let Some(p) = self.pft.take() {
            return self.finish_pft(*p);
        }
        if let Some(d) = self.detector.cut() {
            let _ = self.encode_stream(&d);
        }
        if !matches!(self.competitor, Competitor::None) {
            return self.finish_competitor();
        }
        self.flush_run();
        self.escape(EscapeType::End);
        let before = self.out.bit_len();
        self.out.pad_to_byte();
        self.stats.bits.escape += self.out.bit_len() - before;
        let bit_len = self.out.bit_len();
        self.stats.unique_streams = self.unique_streams();
        if let Some(a) = &self.state.aolc {
            self.stats.aolc_resizes = a.resizes();
        }
        self.stats.finish(self.sum_sl);
        if self.cfg.scheme == Scheme::Gzip {
            return self.gzip();
        }
        (EncodedTrace { bytes: self.out.into_bytes(), bit_len }, self.stats)
    }

    /// SW-GZIP: the BASE trace as one gzip member; its bits are the figure reported.
    fn gzip(self) -> (EncodedTrace, Stats) {
        use std::io::Write;
        let mut stats = self.stats;
        let sum_sl = self.sum_sl;
        let base = self.out.into_bytes();
        let mut gz = flate2::GzBuilder::new().mtime(0).write(Vec::new(), flate2::Compression::new(self.cfg.param));
        gz.write_all(&base).expect("writing to memory");
        let bytes = gz.finish().expect("writing to memory");
        let bit_len = bytes.len() as u64 * 8;
        stats.bits = Default::default();
        stats.bits.miss = bit_len;
        stats.finish(sum_sl);
        (EncodedTrace { bytes, bit_len }, stats)
    }

    /// pft: END, the coder's last bytes; the bits are the bytes (the coder is byte-oriented).
    fn finish_pft(mut self, mut p: PftEncoder) -> (EncodedTrace, Stats) {
        p.end();
        let bytes = std::mem::take(&mut p.coder.out);
        let bit_len = bytes.len() as u64 * 8;
        self.stats.bits.miss = bit_len;
        let pft = p.stats();
        self.stats.exceptions = pft.exceptions;
        self.stats.syncs = pft.syncs;
        self.stats.pft = Some(pft);
        self.stats.finish(0);
        (EncodedTrace { bytes, bit_len }, self.stats)
    }

    /// pft's encoder, for cycle mode (front end and coder run apart there).
    pub(crate) fn pft_mut(&mut self) -> Option<&mut PftEncoder> {
        self.pft.as_deref_mut()
    }

    fn finish_competitor(mut self) -> (EncodedTrace, Stats) {
        let before = self.out.bit_len();
        match &mut self.competitor {
            Competitor::Tslz(lz) => {
                lz.push(END_WORD, &mut self.out);
                lz.finish(&mut self.out);
                self.stats.run_records = lz.records;
            }
            Competitor::Tuple(t) => t.finish(&mut self.out),
            Competitor::None => unreachable!("only competitors finish here"),
        }
        self.out.pad_to_byte();
        self.stats.bits.miss += self.out.bit_len() - before;
        let bit_len = self.out.bit_len();
        self.stats.unique_streams = self.unique_streams();
        self.stats.finish(self.sum_sl);
        (EncodedTrace { bytes: self.out.into_bytes(), bit_len }, self.stats)
    }

    /// (Inlined: a few instructions, where a call costs as many again.)
    #[inline(always)]
    fn put(&mut self, c: Component, value: u64, n: u32) {
        self.out.put_wide(value, n);
        let b = &mut self.stats.bits;
        match c {
            Component::LspHit => b.lsp_hit += n as u64,
            Component::SdcHit => b.sdc_hit += n as u64,
            Component::Miss => b.miss += n as u64,
            Component::Escape => b.escape += n as u64,
        }
    }

    /// Encode one descriptor; returns whether it missed in the SDC (always false for the
    /// baselines). The functional mode's callers take it as a plain `#[inline]` call.
    #[inline]
    fn encode_stream(&mut self, d: &StreamDescriptor) -> bool {
        self.encode_stream_inline(d)
    }

    /// [`Encoder::encode_stream`], always inlined: into [`Encoder::service_descriptor`],
    /// the cycle module's and the sweeps' path per descriptor (forcing it into the
    /// functional callers too would only grow them).
    #[inline(always)]
    fn encode_stream_inline(&mut self, d: &StreamDescriptor) -> bool {
        self.stats.streams += 1;
        self.sum_sl += d.sl as u64;
        self.stats.max_sl = self.stats.max_sl.max(d.sl);
        // (The SDC path adds the stream to the unique set itself, see `unique_at_entry`.)
        let sdc = self.sdc_records;
        debug_assert_eq!(sdc, matches!(self.competitor, Competitor::None) && self.cfg.scheme.uses_sdc());
        if !sdc {
            self.note_unique(d);
        }
        let miss = match &mut self.competitor {
            Competitor::None if sdc => self.encode_sdc_stream(d),
            Competitor::None => {
                self.encode_baseline_stream(d);
                false
            }
            Competitor::Tslz(lz) => {
                let before = self.out.bit_len();
                let out = &mut self.out;
                if !self.state.infer {
                    self.stats.address_records += 1;
                }
                stream_words(d, self.state.infer, self.state.prev_sa, &mut |w| lz.push(w, out));
                self.stats.bits.miss += self.out.bit_len() - before;
                false
            }
            Competitor::Tuple(t) => {
                let before = self.out.bit_len();
                self.stats.sdc_lookups += 1;
                let miss = t.push(d, &mut self.out);
                self.stats.sdc_hits += !miss as u64;
                self.stats.bits.miss += self.out.bit_len() - before;
                miss
            }
        };
        self.state.after_stream(d);
        if d.exception {
            self.stats.exceptions += 1;
            // TSLZ's exception word is part of its stream words; SC-T8HT does not report
            // exceptions (section 10.2).
            if matches!(self.competitor, Competitor::None) {
                self.flush_run();
                self.escape(EscapeType::Exception);
            }
        }
        if self.state.sync_due() {
            self.sync();
        }
        miss
    }

    /// Count `d` among the unique streams (unless the count was given).
    #[inline]
    fn note_unique(&mut self, d: &StreamDescriptor) {
        if self.unique_known.is_none() {
            self.unique.insert(unique_key(d));
        }
    }

    /// [`Encoder::note_unique`] for a stream found at SDC entry `si`: only when it is not
    /// the stream last counted there.
    #[inline(always)]
    fn note_unique_at(&mut self, si: u32, d: &StreamDescriptor) {
        let key = unique_key(d);
        let seen = &mut self.unique_at_entry[si as usize];
        if *seen != key {
            *seen = key;
            self.note_unique(d);
        }
    }

    /// (Inlined into its one caller, [`Encoder::encode_stream_inline`]: a call and its
    /// register saves less per stream.)
    #[inline(always)]
    fn encode_sdc_stream(&mut self, d: &StreamDescriptor) -> bool {
        self.stats.sdc_lookups += 1;
        match self.state.access(d.sa, d.sl) {
            StreamOutcome::LspHit { si } => {
                self.note_unique_at(si, d);
                self.stats.sdc_hits += 1;
                self.stats.lsp_hits += 1;
                match &mut self.state.aolc {
                    None => self.put(Component::LspHit, 1, 1),
                    Some(aolc) => {
                        let width = aolc.width();
                        if let Some(n) = aolc.count_hit() {
                            self.put_run(n, width);
                        }
                    }
                }
                false
            }
            StreamOutcome::SdcHit { si } => {
                self.note_unique_at(si, d);
                self.stats.sdc_hits += 1;
                self.flush_run();
                self.put(Component::SdcHit, si as u64, 1 + self.k);
                false
            }
            StreamOutcome::SdcMiss { forced } => {
                self.note_unique(d);
                self.stats.forced_misses += forced as u64;
                self.flush_run();
                // '0' + SI=0 is 1 + k zero bits, then SL.
                self.put(Component::Miss, d.sl as u64, 1 + self.k + self.slw);
                if self.state.infer {
                    self.stats.inferred_records += 1;
                } else {
                    self.stats.address_records += 1;
                    self.put_address(d.sa);
                }
                true
            }
        }
    }

    /// The address field of a miss record: A(32) for bSDC, `L` for e/rSDC.
    fn put_address(&mut self, a: u32) {
        let Some(lvsa) = &mut self.state.lvsa else {
            self.put(Component::Miss, a as u64, 32);
            return;
        };
        let low = self.cfg.low_bits();
        let u = lvsa.width();
        let hit = lvsa.matches(a);
        if self.cfg.scheme == Scheme::ESdc {
            lvsa.update(a);
        }
        if hit {
            self.stats.lvsa_hits += 1;
            let lower = (a & (u32::MAX >> u)) >> low;
            self.put(Component::Miss, (1u64 << (32 - u - low)) | lower as u64, 1 + 32 - u - low);
        } else {
            self.put(Component::Miss, (a >> low) as u64, 1 + 32 - low);
        }
    }

    fn encode_baseline_stream(&mut self, d: &StreamDescriptor) {
        self.put(Component::Miss, d.sl as u64, self.slw);
        match self.cfg.scheme {
            Scheme::FBase => self.put(Component::Miss, d.sa as u64, 32),
            _ if self.state.infer => self.stats.inferred_records += 1,
            Scheme::Base | Scheme::Gzip => {
                self.stats.address_records += 1;
                self.put(Component::Miss, d.sa as u64, 32)
            }
            Scheme::Nexs => {
                self.stats.address_records += 1;
                let n = write_nexs_diff(&mut self.out, d.sa ^ self.state.prev_sa);
                self.stats.bits.miss += n as u64;
            }
            _ => unreachable!("SDC schemes take the other path"),
        }
    }

    #[inline(never)]
    fn put_run(&mut self, n: u32, width: u32) {
        self.stats.run_records += 1;
        self.put(Component::LspHit, (1u64 << width) | (n - 1) as u64, 1 + width);
        if let Some(a) = &mut self.state.aolc {
            a.after_run(n);
        }
    }

    /// (Inlined: the SDC hits of the path per stream take it; the run record, only
    /// after LSP hits, stays out of line.)
    #[inline(always)]
    fn flush_run(&mut self) {
        if let Some(aolc) = &mut self.state.aolc {
            let width = aolc.width();
            if let Some(n) = aolc.take_pending() {
                self.put_run(n, width);
            }
        }
    }

    fn escape(&mut self, t: EscapeType) {
        let prefix = if self.cfg.scheme.uses_sdc() { 1 + self.k + self.slw } else { self.slw };
        self.put(Component::Escape, 0, prefix);
        self.put(Component::Escape, t as u64, ESCAPE_TYPE_BITS);
    }

    fn sync(&mut self) {
        self.flush_run();
        self.escape(EscapeType::Sync);
        self.marker_and_reset();
    }

    fn marker_and_reset(&mut self) {
        let before = self.out.bit_len();
        self.out.pad_to_byte();
        for b in SYNC_MARKER {
            self.out.put(b as u64, 8);
        }
        self.stats.bits.escape += self.out.bit_len() - before;
        self.stats.syncs += 1;
        self.state.reset();
    }
}

/// Encode a slice of events in one call.
pub fn encode_events(cfg: &Config, events: &[RetireEvent]) -> Result<(EncodedTrace, Stats), EncodeError> {
    let mut e = Encoder::new(cfg);
    e.push_all(events)?;
    Ok(e.finish())
}

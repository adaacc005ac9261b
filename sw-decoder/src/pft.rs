//! Decoder of `pft` traces (docs/trace-format.md section 11.9): mirrors the encoder's
//! predictors ([`PftState`], shared with the model), walks the program image from slot to
//! slot, and range-decodes whether each prediction was right.
//!
//! The walk between two slots depends only on the start address, so it is cached: a block
//! holds the addresses up to and including the next slot instruction, the return-address
//! pushes on the way, and what the slot instruction is.

use std::sync::atomic::{AtomicBool, Ordering};

use streamtrace_isa::{insn_size, ProgramImage};
use streamtrace_model::format::{SYNC_MARKER, find_sync_marker};
use streamtrace_model::pft::coder::{CoderError, Prob, RangeDecoder};
use streamtrace_model::pft::predict::{BranchKey, DirectionPredictor, Lookup};
use streamtrace_model::pft::{
    high_page_bits, offset_target, InsnFlow, EscapeType, PftState, TargetContexts, ESCAPE_TYPE_BITS, GAP_BITS,
    LOST_LEN_BITS, MAX_GAP, HIGH_PAGE, OFFSET_WIDTHS,
};
use streamtrace_model::{BranchClass, Config, IsaMode};

use crate::{AddressSink, DecodeError, TraceElement};

/// How a block ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BlockEnd {
    /// The last address is a slot instruction; `direct` is the taken target of a direct
    /// conditional branch (the only slot whose taken target the image gives).
    Slot { flow: InsnFlow, direct: Option<u32> },
    /// The common slot, a direct conditional branch that neither links nor pushes: the
    /// next address is `taken` or `seq` by its outcome alone.
    Conditional { taken: u32, seq: u32 },
    /// MAX_GAP instructions without a slot: a virtual slot follows the last one.
    Virtual { next: u32 },
    /// The walk met an unmapped or misaligned instruction after the addresses held.
    Error { at: u32, misaligned: bool },
}

#[derive(Clone, Debug)]
struct Block {
    start: u32,
    addrs: Vec<u32>,
    /// (index of the pushing instruction, return address pushed), in order.
    pushes: Vec<(u32, u32)>,
    /// (index of a direct call, bit 2 of its target): the history bits of trace-format.md
    /// 11.3's *Calls*, in order.
    calls: Vec<(u32, bool)>,
    end: BlockEnd,
    /// The direction predictor's key of the slot instruction (when it is a direction point).
    key: BranchKey,
    /// The common block, which `slot` tests first with one load: a `Conditional` end
    /// (its targets in `taken` and `seq`) and no pushes or calls.
    simple: bool,
    taken: u32,
    seq: u32,
}

/// Walk the block at `start` into `b` (a block-cache miss: out of line).
#[inline(never)]
fn walk_block<I: ProgramImage + ?Sized>(image: &I, dir: &DirectionPredictor, start: u32, b: &mut Block) {
    b.start = start;
    b.addrs.clear();
    b.pushes.clear();
    b.calls.clear();
    b.simple = false;
    let mut pc = start;
    loop {
        if pc & 3 == 2 {
            b.end = BlockEnd::Error { at: pc, misaligned: true };
            return;
        }
        let thumb = pc & 1 != 0;
        let word = if thumb { image.read_u16(pc & !1).map(u32::from) } else { image.read_u32(pc) };
        let (Some(word), Some(c)) = (word, image.classify(pc)) else {
            b.end = BlockEnd::Error { at: pc, misaligned: false };
            return;
        };
        let flow = InsnFlow::of(c.class, word, thumb);
        let seq = pc.wrapping_add(insn_size(thumb));
        b.addrs.push(pc);
        if flow.is_slot() {
            let direct = if c.class == BranchClass::DirectCond { c.target } else { None };
            let plain = InsnFlow { direction: true, target: false, ret: false, link: false, mov_lr_pc: false, table: false };
            b.end = match direct {
                Some(taken) if flow == plain => BlockEnd::Conditional { taken, seq },
                _ => BlockEnd::Slot { flow, direct },
            };
            b.key = dir.key(pc);
            if let BlockEnd::Conditional { taken, seq } = b.end {
                (b.simple, b.taken, b.seq) = (b.pushes.is_empty() && b.calls.is_empty(), taken, seq);
            }
            return;
        }
        let i = b.addrs.len() as u32 - 1;
        if flow.mov_lr_pc {
            b.pushes.push((i, pc.wrapping_add(8)));
        }
        // A non-slot instruction that links is a direct branch with link: always taken.
        if flow.link {
            b.pushes.push((i, streamtrace_model::pft::return_address(pc)));
            if let (BranchClass::DirectUncond, Some(t)) = (c.class, c.target) {
                b.calls.push((i, t & 4 != 0));
            }
        }
        pc = match (c.class, c.target) {
            (BranchClass::DirectUncond, Some(t)) => t,
            _ => seq,
        };
        if b.addrs.len() as u32 == MAX_GAP {
            b.end = BlockEnd::Virtual { next: pc };
            return;
        }
    }
}

/// Direct-mapped cache of blocks keyed by start address.
struct BlockCache {
    /// Every slot starts as the block of address 2 (a misaligned ARM address: no
    /// addresses, an error end), which is what a walk from 2 gives, so no slot is ever
    /// invalid and a lookup is one compare.
    slots: Vec<Block>,
    mask: usize,
}

/// The start address of an unused slot (see `BlockCache::slots`).
const UNUSED_START: u32 = 2;

impl BlockCache {
    fn new(n: usize) -> Self {
        assert!(n.is_power_of_two());
        let unused = Block {
            start: UNUSED_START,
            addrs: Vec::new(),
            pushes: Vec::new(),
            calls: Vec::new(),
            end: BlockEnd::Error { at: UNUSED_START, misaligned: true },
            key: BranchKey::default(),
            simple: false,
            taken: 0,
            seq: 0,
        };
        BlockCache { slots: vec![unused; n], mask: n - 1 }
    }

    /// The block at `start`: the hit (most slots) inline, the walk of a miss out of line.
    #[inline(always)]
    fn get<I: ProgramImage + ?Sized>(&mut self, image: &I, dir: &DirectionPredictor, start: u32) -> &Block {
        let i = ((start as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) as usize & self.mask;
        debug_assert!(i < self.slots.len());
        // SAFETY: `mask` is `slots.len() - 1` (a power of two), so `i` is in bounds.
        let b = unsafe { self.slots.get_unchecked_mut(i) };
        if b.start != start {
            walk_block(image, dir, start, b);
        }
        b
    }
}

const BLOCK_CACHE_SLOTS: usize = 1 << 12;

/// Decode with the baseline build of the slot loop even where the host has BMI2.
static PORTABLE_ONLY: AtomicBool = AtomicBool::new(false);

/// Use only the baseline (portable) build of the pft decoder's slot loop, or (`false`,
/// the default) the BMI2 build where the host has it. Both are the same source; tests
/// decode with each.
pub fn use_portable_build(on: bool) {
    PORTABLE_ONLY.store(on, Ordering::Relaxed);
}

impl From<CoderError> for DecodeError {
    #[cold]
    fn from(e: CoderError) -> DecodeError {
        match e {
            CoderError::Truncated { at } => DecodeError::Truncated { offset: at as u64 * 8 },
            CoderError::BadStuffing { at } => DecodeError::Corrupt {
                reason: "the byte after 14 zero bytes is not the stuffing byte 0x01".into(),
                offset: at as u64 * 8,
            },
            CoderError::RawOutOfRange { at } => DecodeError::Corrupt {
                reason: "a raw field decodes to a value wider than the field".into(),
                offset: at as u64 * 8,
            },
        }
    }
}

/// The coder of a new segment reads its first bytes (cold: once per segment).
#[cold]
fn start_coder(bytes: &[u8], pos: usize) -> Result<RangeDecoder, CoderError> {
    RangeDecoder::new(bytes, pos)
}

/// An adaptive decision: the coder and the context probabilities are separate borrows, so
/// the coder can be a local of the slot loop.
#[inline(always)]
fn bit(c: &mut RangeDecoder, probs: &mut [Prob], ctx: usize, rate: u32, bytes: &[u8]) -> Result<bool, CoderError> {
    c.bit(&mut probs[ctx], rate, bytes)
}

/// Count the addresses of a walk against the limit (an error before any reaches the
/// sink), then send them.
#[inline(always)]
fn deliver<S: AddressSink + ?Sized>(
    instructions: &mut u64,
    limit: u64,
    addrs: &[u32],
    sink: &mut S,
    offset: u64,
) -> Result<(), DecodeError> {
    *instructions += addrs.len() as u64;
    if *instructions > limit {
        return Err(DecodeError::InstructionLimit { limit, offset });
    }
    sink.addresses(addrs);
    Ok(())
}

/// The pft decoder. Addresses go to a sink; [`PftDecoder::next_element`] returns the typed
/// events between them (exception, sync, overflow, end).
pub struct PftDecoder<'a, I: ProgramImage + ?Sized> {
    image: &'a I,
    bytes: &'a [u8],
    state: PftState,
    /// The context probabilities (the coder's half of the state).
    probs: Vec<Prob>,
    isa_arm: bool,
    /// The segment's coder, valid when `live` (started at the segment's first decision).
    coder: RangeDecoder,
    live: bool,
    /// Byte where the current coder segment starts (for errors before it is set up).
    segment: usize,
    /// The next instruction's address (valid once a start address was decoded).
    pc: u32,
    cache: BlockCache,
    done: bool,
    /// Instructions delivered so far, and the limit after which decoding stops with an
    /// error (a corrupt trace over an idle loop could otherwise run for a very long time).
    pub instructions: u64,
    pub instruction_limit: u64,
    /// Streaming ([`crate::StreamDecoder`]): more input may follow `bytes`, so the slot loop
    /// pauses (between slots) when fewer than [`crate::stream::INPUT_MARGIN`] bytes remain;
    /// it also pauses once `instructions` reaches `pause_at`. A paused `next_element`
    /// returns `Ok(None)` without being done.
    pub(crate) more_input: bool,
    pub(crate) pause_at: u64,
}

impl<'a, I: ProgramImage + ?Sized> PftDecoder<'a, I> {
    pub fn new(cfg: &Config, bytes: &'a [u8], image: &'a I) -> Self {
        PftDecoder {
            image,
            bytes,
            state: PftState::new(&cfg.pft, cfg.low_bits()),
            probs: vec![Prob::default(); cfg.pft.contexts()],
            isa_arm: cfg.isa == IsaMode::ArmOnly,
            // Replaced before use (`live` is false).
            coder: RangeDecoder::default(),
            live: false,
            segment: 0,
            pc: 0,
            cache: BlockCache::new(BLOCK_CACHE_SLOTS),
            done: false,
            instructions: 0,
            instruction_limit: u64::MAX,
            more_input: false,
            pause_at: u64::MAX,
        }
    }

    /// The same decoder over another window of the input (streaming): `bytes` is the
    /// input with its first `shift` bytes (all before the next input byte) dropped.
    pub(crate) fn rebind<'b, J: ProgramImage + ?Sized>(self, bytes: &'b [u8], image: &'b J, shift: usize) -> PftDecoder<'b, J> {
        let mut coder = self.coder;
        coder.pos -= shift.min(coder.pos);
        PftDecoder {
            image,
            bytes,
            state: self.state,
            probs: self.probs,
            isa_arm: self.isa_arm,
            coder,
            live: self.live,
            segment: self.segment - shift.min(self.segment),
            pc: self.pc,
            cache: self.cache,
            done: self.done,
            instructions: self.instructions,
            instruction_limit: self.instruction_limit,
            more_input: self.more_input,
            pause_at: self.pause_at,
        }
    }

    /// Continue in the reset state at byte `at`, just after a sync marker (streaming resync).
    pub(crate) fn resume_at(&mut self, at: usize) {
        self.restart(at);
        self.done = false;
    }

    /// END was decoded.
    pub(crate) fn is_done(&self) -> bool {
        self.done
    }

    /// Byte of the next input (streaming: what may be dropped before it).
    pub(crate) fn next_byte(&self) -> usize {
        self.byte_pos()
    }

    /// Streaming: pause before the next slot (see `more_input`).
    #[inline(always)]
    fn paused(&self, pos: usize) -> bool {
        self.instructions >= self.pause_at
            || (self.more_input && self.bytes.len().saturating_sub(pos) < crate::stream::INPUT_MARGIN)
    }

    /// Byte of the next input.
    fn byte_pos(&self) -> usize {
        if self.live {
            self.coder.pos
        } else {
            self.segment
        }
    }

    /// Bit position of the next input byte.
    pub fn position(&self) -> u64 {
        self.byte_pos() as u64 * 8
    }

    pub fn state(&self) -> &PftState {
        &self.state
    }

    /// Continue after the next sync marker at or after the current byte in the reset state.
    pub fn resync(&mut self) -> Option<u64> {
        let at = find_sync_marker(self.bytes, self.byte_pos())?;
        self.restart(at);
        self.done = false;
        Some(at as u64 * 8)
    }

    fn restart(&mut self, at: usize) {
        self.state.reset();
        self.probs.fill(Prob::default());
        self.segment = at;
        self.live = false;
    }

    /// The upper-bits decision and the field of an address (start, vector, missed target).
    /// Out of line: rare next to slots, and inlined its parameter loads were hoisted to the
    /// top of every slot.
    #[inline(never)]
    fn address(&mut self, c: &mut RangeDecoder) -> Result<u32, CoderError> {
        let rate = self.state.params.rate;
        let ctx = self.state.target_ctx(TargetContexts::UPPER_SAME);
        let (narrow, wide) = (self.state.address_bits(true), self.state.address_bits(false));
        let (same, v) = c.address(&mut self.probs[ctx], rate, narrow, wide, self.bytes)?;
        let low = self.state.low;
        let u = self.state.params.u;
        let a = if same { (self.state.upper << (32 - u)) | (v << low) } else { v << low };
        self.state.set_upper(a);
        Ok(a)
    }

    /// A mispredicted target of the point at `a` (mirror of the encoder's `target`).
    #[inline]
    fn target(
        &mut self,
        c: &mut RangeDecoder,
        a: u32,
        ret: bool,
        alt: Option<u32>,
        table: bool,
        offset: u64,
    ) -> Result<u32, DecodeError> {
        let rate = self.state.params.rate;
        let bytes = self.bytes;
        if let Some(alt) = alt {
            if bit(c, &mut self.probs, self.state.target_ctx(TargetContexts::ALT), rate, bytes)? {
                return Ok(alt);
            }
        }
        if !ret
            && !self.state.ras.is_empty()
            && bit(c, &mut self.probs, self.state.target_ctx(TargetContexts::RAS_TOP), rate, bytes)?
        {
            return Ok(self.state.ras.pop());
        }
        let n = self.state.rtc.capacity();
        if n > 0 && bit(c, &mut self.probs, self.state.target_ctx(TargetContexts::RTC_HIT), rate, bytes)? {
            let mut i = 0;
            for j in 0..n.trailing_zeros() as usize {
                let zero = bit(c, &mut self.probs, self.state.target_ctx(TargetContexts::RTC_INDEX + j), rate, bytes)?;
                i = 2 * i + !zero as usize;
            }
            let Some(a) = self.state.rtc.get(i, a) else {
                return Err(DecodeError::Corrupt {
                    reason: format!("recent-target index {i} beyond the cache's fill"),
                    offset,
                });
            };
            self.state.rtc.touch(Some(i), a);
            return Ok(a);
        }
        let t = self.offset(c, a, table)?;
        self.state.rtc.touch(None, t);
        Ok(t)
    }

    /// A target sent as an offset from the branch at `a` (section 11.5, *offset*).
    fn offset(&mut self, c: &mut RangeDecoder, a: u32, table: bool) -> Result<u32, CoderError> {
        let rate = self.state.params.rate;
        let bytes = self.bytes;
        let thumb = if self.state.low == 0 {
            let same = bit(c, &mut self.probs, self.state.target_ctx(TargetContexts::SAME_STATE), rate, bytes)?;
            (a & 1 != 0) == same
        } else {
            false
        };
        let mut node = 1;
        for _ in 0..3 {
            let zero = bit(c, &mut self.probs, self.state.target_ctx(TargetContexts::LEN + node - 1), rate, bytes)?;
            node = 2 * node + !zero as usize;
        }
        let class = node - 8;
        if class == OFFSET_WIDTHS.len() - 1 && c.raw_wide(1, bytes)? != 0 {
            let s = if thumb { 1 } else { 2 };
            let f = c.raw_wide(high_page_bits(thumb), bytes)?;
            return Ok(HIGH_PAGE | f << s | thumb as u32);
        }
        let z = c.raw_wide(OFFSET_WIDTHS[class], bytes)?;
        Ok(offset_target(a, z, thumb, table))
    }

    fn check_start(&self, a: u32, offset: u64) -> Result<(), DecodeError> {
        if a & 1 == 1 && self.isa_arm {
            return Err(Self::thumb_with_arm(a, offset));
        }
        Ok(())
    }

    #[cold]
    fn thumb_with_arm(a: u32, offset: u64) -> DecodeError {
        DecodeError::ImageMismatch { reason: format!("Thumb address {a:#010x} with isa=arm"), offset }
    }

    /// Walk `n` instructions of the block at `pc` as the prefix of an escape; the `n`-th is
    /// the excepting instruction when `exception` (its pushes are not applied). The caller
    /// sets the next address (the vector) or stops.
    fn walk_prefix<S: AddressSink + ?Sized>(
        &mut self,
        n: u32,
        exception: bool,
        sink: &mut S,
        offset: u64,
    ) -> Result<(), DecodeError> {
        if n == 0 {
            return Ok(());
        }
        let image = self.image;
        let pc = self.pc;
        let block = self.cache.get(image, &self.state.dir, pc);
        let len = block.addrs.len() as u32;
        let non_slot = match block.end {
            BlockEnd::Slot { .. } | BlockEnd::Conditional { .. } => len - 1,
            _ => len,
        };
        // Instructions before the excepting one must not be slots; the excepting one may be.
        let allowed = if exception { (non_slot + 1).min(len) } else { non_slot };
        if n > allowed {
            return Err(match block.end {
                BlockEnd::Error { at, misaligned: false } if n > len => DecodeError::OutsideImage { addr: pc, at, offset },
                BlockEnd::Error { at, misaligned: true } if n > len => {
                    DecodeError::ImageMismatch { reason: format!("misaligned ARM address {at:#010x}"), offset }
                }
                _ => DecodeError::Corrupt {
                    reason: format!("escape after {n} instructions from {pc:#010x}, but a prediction point comes first"),
                    offset,
                },
            });
        }
        let pushing = if exception { n - 1 } else { n };
        for &(i, ra) in &block.pushes {
            if i < pushing {
                self.state.ras.push(ra);
            }
        }
        for &(i, bit) in &block.calls {
            if i < pushing {
                self.state.dir.push_history(bit);
            }
        }
        deliver(&mut self.instructions, self.instruction_limit, &block.addrs[..n as usize], sink, offset)?;
        self.state.gap = 0;
        Ok(())
    }

    /// The next typed element; addresses go to `sink`. `Ok(None)` after END.
    pub fn next_element<S: AddressSink + ?Sized>(&mut self, sink: &mut S) -> Result<Option<TraceElement>, DecodeError> {
        if self.done {
            return Ok(None);
        }
        if !self.live {
            if self.paused(self.segment) {
                return Ok(None);
            }
            self.coder = start_coder(self.bytes, self.segment)?;
            self.live = true;
        }
        // The coder lives in a local through the run of slots up to the element, and the
        // predictor is specialized on the number of tagged tables once per run.
        let mut c = self.coder;
        let r = streamtrace_model::dispatch_tables!(self.state.dir.tables(), T => if self.state.dir.lane_bits() == 8 {
            self.run_best::<T, 8, S>(&mut c, sink)
        } else {
            self.run_best::<T, 16, S>(&mut c, sink)
        });
        self.coder = c;
        r
    }

    /// `run` compiled for the host's BMI2 and LZCNT when it has them (one-instruction
    /// variable shifts in the predictor; about 5 % faster), else for the baseline.
    #[inline(always)]
    fn run_best<const T: usize, const W: u32, S: AddressSink + ?Sized>(
        &mut self,
        c: &mut RangeDecoder,
        sink: &mut S,
    ) -> Result<Option<TraceElement>, DecodeError> {
        #[cfg(target_arch = "x86_64")]
        if !PORTABLE_ONLY.load(Ordering::Relaxed)
            && std::arch::is_x86_feature_detected!("bmi2")
            && std::arch::is_x86_feature_detected!("lzcnt")
        {
            // SAFETY: the features were detected on this host.
            return unsafe { self.run_bmi2::<T, W, S>(c, sink) };
        }
        self.run::<T, W, S>(c, sink)
    }

    /// `run_slots` for a host with BMI2 and LZCNT.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "bmi1,bmi2,lzcnt")]
    #[inline(never)]
    unsafe fn run_bmi2<const T: usize, const W: u32, S: AddressSink + ?Sized>(
        &mut self,
        c: &mut RangeDecoder,
        sink: &mut S,
    ) -> Result<Option<TraceElement>, DecodeError> {
        self.run_slots::<T, W, S, true>(c, sink)
    }

    /// `run_slots` for any host.
    #[inline(never)]
    fn run<const T: usize, const W: u32, S: AddressSink + ?Sized>(
        &mut self,
        c: &mut RangeDecoder,
        sink: &mut S,
    ) -> Result<Option<TraceElement>, DecodeError> {
        self.run_slots::<T, W, S, false>(c, sink)
    }

    /// Slots up to the next escape, whose element is returned (None: paused, streaming).
    /// `T` and `W` are the predictor's tables and lane width (checked here, once per run:
    /// the lookups and updates of the slots rely on them); `BMI2`: compiled for a host with
    /// BMI2 (`run_bmi2`).
    #[inline(always)]
    fn run_slots<const T: usize, const W: u32, S: AddressSink + ?Sized, const BMI2: bool>(
        &mut self,
        c: &mut RangeDecoder,
        sink: &mut S,
    ) -> Result<Option<TraceElement>, DecodeError> {
        assert!(T == self.state.dir.tables() && W == self.state.dir.lane_bits());
        // `paused` in one compare per input: the bytes fixed for the run, the input
        // position past which fewer than the margin remain (any, when no more input comes).
        let last_pos =
            if self.more_input { self.bytes.len() as isize - crate::stream::INPUT_MARGIN as isize } else { isize::MAX };
        loop {
            if self.instructions >= self.pause_at || c.pos as isize > last_pos {
                debug_assert!(self.paused(c.pos));
                return Ok(None);
            }
            debug_assert!(!self.paused(c.pos));
            let offset = c.pos as u64 * 8;
            if c.slot_escape(self.bytes)? {
                return self.escape(c, offset, sink).map(Some);
            }
            if self.state.awaiting_start {
                let a = self.address(c)?;
                self.check_start(a, offset)?;
                self.pc = a;
                self.state.awaiting_start = false;
                continue;
            }
            self.slot::<T, W, S, BMI2>(c, offset, sink)?;
        }
    }

    #[inline(never)]
    fn escape<S: AddressSink + ?Sized>(
        &mut self,
        c: &mut RangeDecoder,
        offset: u64,
        sink: &mut S,
    ) -> Result<TraceElement, DecodeError> {
        let bytes = self.bytes;
        let kind = EscapeType::from_bits(c.raw(ESCAPE_TYPE_BITS, bytes)? as u64);
        let n = c.raw(GAP_BITS, bytes)?;
        if self.state.awaiting_start && (n != 0 || kind == EscapeType::Exception) {
            return Err(DecodeError::Corrupt {
                reason: format!("{kind:?} escape covering {n} instructions before any start address"),
                offset,
            });
        }
        match kind {
            EscapeType::Exception => {
                if n == 0 {
                    return Err(DecodeError::Corrupt { reason: "exception escape at offset 0".into(), offset });
                }
                self.walk_prefix(n, true, sink, offset)?;
                let v = self.address(c)?;
                self.check_start(v, offset)?;
                self.pc = v;
                Ok(TraceElement::Exception { offset })
            }
            EscapeType::End => {
                self.walk_prefix(n, false, sink, offset)?;
                self.done = true;
                Ok(TraceElement::End { offset })
            }
            EscapeType::Overflow => {
                // The state is kept (section 11.7): the count, then a start.
                self.walk_prefix(n, false, sink, offset)?;
                let below = c.raw(LOST_LEN_BITS, bytes)?;
                let rest = if below > 0 { c.raw_wide(below, bytes)? } else { 0 };
                let lost = (1u32 << below) | rest;
                self.state.gap = 0;
                self.state.awaiting_start = true;
                Ok(TraceElement::Overflow { lost, offset })
            }
            EscapeType::Sync => {
                self.walk_prefix(n, false, sink, offset)?;
                let end = c.pos;
                let marker_end = end + SYNC_MARKER.len();
                if self.bytes.get(end..marker_end) != Some(&SYNC_MARKER[..]) {
                    return Err(DecodeError::BadSyncMarker { offset: end as u64 * 8 });
                }
                self.restart(marker_end);
                Ok(TraceElement::Sync { offset })
            }
        }
    }

    /// The direction predictor's lookup for `key`, with `T` and `W` as checked by
    /// `run_slots`.
    #[inline(always)]
    fn lookup<const T: usize, const W: u32>(&self, key: &BranchKey) -> (bool, usize, Lookup) {
        // SAFETY: only `run_slots` (through `slot`) calls this, after checking that T and W
        // are the predictor's, which no slot changes.
        unsafe { self.state.dir.lookup_tw::<T, W>(key) }
    }

    /// The direction predictor's update, by PEXT in the BMI2 build.
    #[inline(always)]
    fn update<const T: usize, const W: u32, const BMI2: bool>(&mut self, lookup: &Lookup, taken: bool) {
        // SAFETY: as in `lookup`; BMI2 is set only in `run_bmi2`, entered after detecting
        // BMI2.
        unsafe { self.state.dir.update_tw::<T, W, BMI2>(lookup, taken) }
    }

    /// A direct conditional branch that neither links nor pushes (`BlockEnd::Conditional`):
    /// its outcome, then the next address `to` (taken) or `seq`.
    #[inline(always)]
    fn conditional<const T: usize, const W: u32, const BMI2: bool>(
        &mut self,
        c: &mut RangeDecoder,
        key: &BranchKey,
        to: u32,
        seq: u32,
    ) -> Result<(), CoderError> {
        let (pred, ctx, lookup) = self.lookup::<T, W>(key);
        let hit = bit(c, &mut self.probs, ctx, self.state.params.rate, self.bytes)?;
        // A branch on the outcome with an update specialised to each side, not selects:
        // the host predicts the traced program's branches about as well as the predictor
        // does, and goes on to the next slot before the lookup and the coder have decided
        // (3 % on the test programs). Same state as the branch (B<cond> does not
        // interwork): no start check.
        if pred == hit {
            self.update::<T, W, BMI2>(&lookup, true);
            self.pc = to;
        } else {
            self.update::<T, W, BMI2>(&lookup, false);
            self.pc = seq;
        }
        Ok(())
    }

    /// No escape: walk to the next slot and decode its points.
    #[inline(always)]
    fn slot<const T: usize, const W: u32, S: AddressSink + ?Sized, const BMI2: bool>(
        &mut self,
        c: &mut RangeDecoder,
        offset: u64,
        sink: &mut S,
    ) -> Result<(), DecodeError> {
        let pc = self.pc;
        let block = self.cache.get(self.image, &self.state.dir, pc);
        if block.simple {
            // The common block in a path of its own (7 % fewer instructions than sharing
            // the general one's tests).
            deliver(&mut self.instructions, self.instruction_limit, &block.addrs, sink, offset)?;
            let (key, to, seq) = (block.key, block.taken, block.seq);
            return Ok(self.conditional::<T, W, BMI2>(c, &key, to, seq)?);
        }
        for &(_, ra) in &block.pushes {
            self.state.ras.push(ra);
        }
        for &(_, bit) in &block.calls {
            // SAFETY: as in `update`.
            unsafe { self.state.dir.push_history_tw::<T, W, BMI2>(bit) };
        }
        deliver(&mut self.instructions, self.instruction_limit, &block.addrs, sink, offset)?;
        let bytes = self.bytes;
        if let BlockEnd::Conditional { taken: to, seq } = block.end {
            let key = block.key;
            return Ok(self.conditional::<T, W, BMI2>(c, &key, to, seq)?);
        }
        let end = block.end;
        let key = block.key;
        let last = block.addrs.last().copied().unwrap_or(pc);
        match end {
            BlockEnd::Conditional { .. } => unreachable!("handled above"),
            BlockEnd::Slot { flow, direct } => {
                let a = last;
                let thumb = a & 1 != 0;
                let seq = a.wrapping_add(insn_size(thumb));
                let mut taken = flow.target && !flow.direction;
                if flow.direction {
                    let (pred, ctx, lookup) = self.lookup::<T, W>(&key);
                    let hit = bit(c, &mut self.probs, ctx, self.state.params.rate, bytes)?;
                    taken = pred == hit;
                    self.update::<T, W, BMI2>(&lookup, taken);
                }
                let next = if flow.target {
                    if taken {
                        let (pred, ctx, alt) = self.state.predict_target(&flow, a);
                        let t = if bit(c, &mut self.probs, ctx, self.state.params.rate, bytes)? {
                            pred
                        } else {
                            self.target(c, a, flow.ret, alt, flow.table, offset)?
                        };
                        self.state.after_target(&flow, t);
                        t
                    } else {
                        seq
                    }
                } else {
                    // A direct conditional branch: a select, not a branch on the outcome.
                    match direct {
                        Some(t) => {
                            if taken {
                                t
                            } else {
                                seq
                            }
                        }
                        None if taken => return Err(Self::no_target(a, offset)),
                        None => seq,
                    }
                };
                self.state.pushes(&flow, a, taken);
                self.check_start(next, offset)?;
                self.pc = next;
                Ok(())
            }
            BlockEnd::Virtual { next } => {
                if !c.bit_fixed(streamtrace_model::pft::coder::PROB_INIT, bytes)? {
                    return Err(DecodeError::Corrupt { reason: "a virtual slot decided a miss".into(), offset });
                }
                self.pc = next;
                Ok(())
            }
            BlockEnd::Error { at, misaligned } => Err(if misaligned {
                DecodeError::ImageMismatch { reason: format!("misaligned ARM address {at:#010x}"), offset }
            } else {
                DecodeError::OutsideImage { addr: pc, at, offset }
            }),
        }
    }

    #[cold]
    fn no_target(a: u32, offset: u64) -> DecodeError {
        DecodeError::ImageMismatch { reason: format!("taken branch at {a:#010x} without a target"), offset }
    }
}

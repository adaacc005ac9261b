//! Decoder of `pft` traces (docs/trace-format.md section 11.9): mirrors the encoder's
//! predictors ([`PftState`], shared with the model), walks the program image from slot to
//! slot, and range-decodes whether each prediction was right.
//!
//! The walk between two slots depends only on the start address, so it is cached: a block
//! holds the addresses up to and including the next slot instruction, the return-address
//! pushes on the way, and what the slot instruction is.

use streamtrace_isa::ProgramImage;
use streamtrace_model::format::{SYNC_MARKER, find_sync_marker};
use streamtrace_model::pft::coder::{CoderError, Prob, RangeDecoder};
use streamtrace_model::pft::{
    InsnFlow, EscapeType, PftState, TargetContexts, ESCAPE_TYPE_BITS, GAP_BITS, LOST_BITS, MAX_GAP,
};
use streamtrace_model::{BranchClass, Config, IsaMode};

use crate::{AddressSink, DecodeError, TraceElement};

/// How a block ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BlockEnd {
    /// The last address is a slot instruction.
    Slot { flow: InsnFlow, class: BranchClass, target: Option<u32> },
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
    end: BlockEnd,
}

fn walk_block<I: ProgramImage + ?Sized>(image: &I, start: u32, b: &mut Block) {
    b.start = start;
    b.addrs.clear();
    b.pushes.clear();
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
        b.addrs.push(pc);
        if flow.is_slot() {
            b.end = BlockEnd::Slot { flow, class: c.class, target: c.target };
            return;
        }
        let i = b.addrs.len() as u32 - 1;
        if flow.mov_lr_pc {
            b.pushes.push((i, pc.wrapping_add(8)));
        }
        // A non-slot instruction that links is a direct branch with link: always taken.
        if flow.link {
            b.pushes.push((i, streamtrace_model::pft::return_address(pc)));
        }
        pc = match (c.class, c.target) {
            (BranchClass::DirectUncond, Some(t)) => t,
            _ => pc.wrapping_add(if thumb { 2 } else { 4 }),
        };
        if b.addrs.len() as u32 == MAX_GAP {
            b.end = BlockEnd::Virtual { next: pc };
            return;
        }
    }
}

/// Direct-mapped cache of blocks keyed by start address.
struct BlockCache {
    slots: Vec<Option<Block>>,
    mask: usize,
}

impl BlockCache {
    fn new(n: usize) -> Self {
        BlockCache { slots: (0..n).map(|_| None).collect(), mask: n - 1 }
    }

    #[inline]
    fn get<I: ProgramImage + ?Sized>(&mut self, image: &I, start: u32) -> &Block {
        let i = ((start as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) as usize & self.mask;
        let slot = &mut self.slots[i];
        match slot {
            Some(b) if b.start == start => {}
            Some(b) => walk_block(image, start, b),
            None => {
                let mut b = Block { start, addrs: Vec::new(), pushes: Vec::new(), end: BlockEnd::Virtual { next: 0 } };
                walk_block(image, start, &mut b);
                *slot = Some(b);
            }
        }
        slot.as_ref().expect("filled above")
    }
}

const BLOCK_CACHE_SLOTS: usize = 1 << 12;

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
fn start_coder<'c>(slot: &'c mut Option<RangeDecoder>, bytes: &[u8], pos: usize) -> Result<&'c mut RangeDecoder, CoderError> {
    Ok(slot.insert(RangeDecoder::new(bytes, pos)?))
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
    coder: Option<RangeDecoder>,
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
}

impl<'a, I: ProgramImage + ?Sized> PftDecoder<'a, I> {
    pub fn new(cfg: &Config, bytes: &'a [u8], image: &'a I) -> Self {
        PftDecoder {
            image,
            bytes,
            state: PftState::new(&cfg.pft, cfg.low_bits()),
            probs: vec![Prob::default(); cfg.pft.contexts()],
            isa_arm: cfg.isa == IsaMode::ArmOnly,
            coder: None,
            segment: 0,
            pc: 0,
            cache: BlockCache::new(BLOCK_CACHE_SLOTS),
            done: false,
            instructions: 0,
            instruction_limit: u64::MAX,
        }
    }

    /// Bit position of the next input byte.
    pub fn position(&self) -> u64 {
        self.coder.as_ref().map_or(self.segment, |c| c.pos) as u64 * 8
    }

    pub fn state(&self) -> &PftState {
        &self.state
    }

    /// Continue after the next sync marker at or after the current byte in the reset state.
    pub fn resync(&mut self) -> Option<u64> {
        let from = self.coder.as_ref().map_or(self.segment, |c| c.pos);
        let at = find_sync_marker(self.bytes, from)?;
        self.restart(at);
        self.done = false;
        Some(at as u64 * 8)
    }

    fn restart(&mut self, at: usize) {
        self.state.reset();
        self.probs.fill(Prob::default());
        self.segment = at;
        self.coder = None;
    }

    /// The segment's coder, started if needed. Coder errors are small (`CoderError`); `?`
    /// turns them into a `DecodeError` where it leaves the hot path.
    #[inline]
    fn coder(&mut self) -> Result<&mut RangeDecoder, CoderError> {
        if self.coder.is_none() {
            start_coder(&mut self.coder, self.bytes, self.segment)?;
        }
        // Started above; the error is unreachable (and panic-free).
        self.coder.as_mut().ok_or(CoderError::Truncated { at: self.segment })
    }

    #[inline]
    fn bit(&mut self, ctx: usize) -> Result<bool, CoderError> {
        let rate = self.state.params.rate;
        let bytes = self.bytes;
        // Disjoint fields: the coder and the context probabilities.
        let coder = match &mut self.coder {
            Some(c) => c,
            None => start_coder(&mut self.coder, bytes, self.segment)?,
        };
        coder.bit(&mut self.probs[ctx], rate, bytes)
    }

    /// A raw field of `n <= 32` bits (two coder steps above 16).
    #[inline]
    fn raw(&mut self, n: u32) -> Result<u32, CoderError> {
        let bytes = self.bytes;
        self.coder()?.raw_wide(n, bytes)
    }

    /// The escape branch of the next slot symbol.
    #[inline]
    fn slot_escape(&mut self) -> Result<bool, CoderError> {
        let bytes = self.bytes;
        self.coder()?.slot_escape(bytes)
    }

    fn bit_fixed(&mut self, p: u16) -> Result<bool, CoderError> {
        let bytes = self.bytes;
        self.coder()?.bit_fixed(p, bytes)
    }

    fn address(&mut self) -> Result<u32, DecodeError> {
        let same = self.bit(self.state.target_ctx(TargetContexts::UPPER_SAME))?;
        let n = self.state.address_bits(same);
        let v = self.raw(n)?;
        let low = self.state.low;
        let u = self.state.params.u;
        let a = if same { (self.state.upper << (32 - u)) | (v << low) } else { v << low };
        self.state.set_upper(a);
        Ok(a)
    }

    /// A mispredicted target (mirror of the encoder's `target`).
    fn target(&mut self, ret: bool, offset: u64) -> Result<u32, DecodeError> {
        if !ret && !self.state.ras.is_empty() && self.bit(self.state.target_ctx(TargetContexts::RAS_TOP))? {
            return Ok(self.state.ras.pop());
        }
        let n = self.state.rtc.capacity();
        if n > 0 && self.bit(self.state.target_ctx(TargetContexts::RTC_HIT))? {
            let i = self.raw(n.trailing_zeros())? as usize;
            let a = self.state.rtc.get(i).ok_or_else(|| DecodeError::Corrupt {
                reason: format!("recent-target index {i} beyond the cache's fill"),
                offset,
            })?;
            self.state.rtc.touch(Some(i), a);
            return Ok(a);
        }
        let a = self.address()?;
        self.state.rtc.touch(None, a);
        Ok(a)
    }

    fn check_start(&self, a: u32, offset: u64) -> Result<(), DecodeError> {
        if a & 1 == 1 && self.isa_arm {
            return Err(DecodeError::ImageMismatch { reason: format!("Thumb address {a:#010x} with isa=arm"), offset });
        }
        Ok(())
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
        let block = self.cache.get(image, pc);
        let len = block.addrs.len() as u32;
        let non_slot = match block.end {
            BlockEnd::Slot { .. } => len - 1,
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
        self.instructions += n as u64;
        if self.instructions > self.instruction_limit {
            return Err(DecodeError::InstructionLimit { limit: self.instruction_limit, offset });
        }
        sink.addresses(&block.addrs[..n as usize]);
        self.state.gap = 0;
        Ok(())
    }

    /// The next typed element; addresses go to `sink`. `Ok(None)` after END.
    pub fn next_element<S: AddressSink + ?Sized>(&mut self, sink: &mut S) -> Result<Option<TraceElement>, DecodeError> {
        if self.done {
            return Ok(None);
        }
        loop {
            let offset = self.position();
            if self.slot_escape()? {
                return self.escape(offset, sink).map(Some);
            }
            if self.state.awaiting_start {
                let a = self.address()?;
                self.check_start(a, offset)?;
                self.pc = a;
                self.state.awaiting_start = false;
                continue;
            }
            self.slot(offset, sink)?;
        }
    }

    fn escape<S: AddressSink + ?Sized>(&mut self, offset: u64, sink: &mut S) -> Result<TraceElement, DecodeError> {
        let kind = EscapeType::from_bits(self.raw(ESCAPE_TYPE_BITS)? as u64);
        let n = self.raw(GAP_BITS)?;
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
                let v = self.address()?;
                self.check_start(v, offset)?;
                self.pc = v;
                Ok(TraceElement::Exception { offset })
            }
            EscapeType::End => {
                self.walk_prefix(n, false, sink, offset)?;
                self.done = true;
                Ok(TraceElement::End { offset })
            }
            EscapeType::Sync | EscapeType::Overflow => {
                self.walk_prefix(n, false, sink, offset)?;
                let lost = if kind == EscapeType::Overflow { self.raw(LOST_BITS)? } else { 0 };
                let end = self.coder.as_ref().map_or(self.segment, |c| c.pos);
                let marker_end = end + SYNC_MARKER.len();
                if self.bytes.get(end..marker_end) != Some(&SYNC_MARKER[..]) {
                    return Err(DecodeError::BadSyncMarker { offset: end as u64 * 8 });
                }
                self.restart(marker_end);
                Ok(if kind == EscapeType::Sync {
                    TraceElement::Sync { offset }
                } else {
                    TraceElement::Overflow { lost, offset }
                })
            }
        }
    }

    /// No escape: walk to the next slot and decode its points.
    fn slot<S: AddressSink + ?Sized>(&mut self, offset: u64, sink: &mut S) -> Result<(), DecodeError> {
        let image = self.image;
        let pc = self.pc;
        let block = self.cache.get(image, pc);
        let end = block.end;
        let len = block.addrs.len();
        let last = block.addrs.last().copied().unwrap_or(pc);
        for &(_, ra) in &block.pushes {
            self.state.ras.push(ra);
        }
        self.instructions += len as u64;
        if self.instructions > self.instruction_limit {
            return Err(DecodeError::InstructionLimit { limit: self.instruction_limit, offset });
        }
        sink.addresses(&block.addrs);
        match end {
            BlockEnd::Virtual { next } => {
                if !self.bit_fixed(streamtrace_model::pft::coder::PROB_INIT)? {
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
            BlockEnd::Slot { flow, class, target } => {
                let a = last;
                let thumb = a & 1 != 0;
                let seq = a.wrapping_add(if thumb { 2 } else { 4 });
                let mut taken = flow.target && !flow.direction;
                if flow.direction {
                    let (pred, ctx) = self.state.dir.predict(a);
                    let hit = self.bit(ctx)?;
                    taken = pred == hit;
                    self.state.dir.update(taken);
                }
                let next = if !taken {
                    seq
                } else if flow.target {
                    let (pred, ctx) = self.state.predict_target(&flow, a);
                    let t = if self.bit(ctx)? { pred } else { self.target(flow.ret, offset)? };
                    self.state.after_target(&flow, a, t);
                    t
                } else {
                    match (class, target) {
                        (BranchClass::DirectCond, Some(t)) => t,
                        _ => {
                            return Err(DecodeError::ImageMismatch {
                                reason: format!("taken branch at {a:#010x} without a target"),
                                offset,
                            })
                        }
                    }
                };
                self.state.pushes(&flow, a, taken);
                self.check_start(next, offset)?;
                self.pc = next;
                Ok(())
            }
        }
    }
}

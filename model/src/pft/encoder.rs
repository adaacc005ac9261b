//! The pft encoder in two halves (docs/trace-timing.md section 7): the **front end** runs the
//! predictors on each retired instruction and turns what must be sent into a **job** of
//! coder operations with their decisions fixed; the **coder** runs jobs through the range
//! coder, owning the context probabilities. Functional mode runs each job at once; cycle
//! mode queues them, so both produce the same bytes by construction.

use super::coder::{Prob, RangeEncoder, ESCAPE_SHIFT, PROB_INIT, RAW_MAX_BITS};
use super::{
    high_page_field, in_high_page, offset_code, EscapeType, InsnFlow, PftParams, PftState, PftStats, TargetCode,
    TargetContexts, ESCAPE_TYPE_BITS, GAP_BITS, LOST_LEN_BITS, MAX_GAP, OFFSET_WIDTHS, lost_code,
};
use crate::event::{PlainRun, RetireEvent};
use crate::format::SYNC_MARKER;

/// Which statistic a decision's information counts toward.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Info {
    Direction,
    Target,
    Address,
}

/// One coder operation (trace-format.md 11.5) with its decision fixed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoderOp {
    /// A slot symbol: the escape branch, or the decision `hit` with context `ctx` (`None`:
    /// the virtual slot's fixed probability 1/2).
    Slot { escape: bool, hit: bool, ctx: Option<u16>, info: Info },
    /// A context bit.
    Bit { hit: bool, ctx: u16, info: Info },
    /// A raw field of 1..=16 bits.
    Raw { value: u32, bits: u8, info: Info },
    /// Terminate the coder.
    Flush,
    /// The sync marker, then a new coder with reset probabilities.
    Marker,
}

/// Operations of one instruction (or of END, or of an overflow): at most a start (3), a slot
/// with a missed target (direction, target, ALT, RAS_TOP, RTC_HIT, SAME_STATE, three
/// class bits, the high-page flag, two raw fields: 12) and a periodic SYNC (5), 20
/// operations. (Equality and `Debug` look at the operations in use only: the front end
/// empties its job for each instruction without rewriting the array.)
#[derive(Clone, Copy)]
pub struct CoderJob {
    ops: [CoderOp; CoderJob::CAPACITY],
    len: u8,
    /// The front end's gap before the instruction (an overflow's offset when it is dropped).
    pub gap_before: u32,
    /// Address words the job occupies in the job buffer (docs/trace-timing.md 7, version
    /// 1.5): one per start address, exception vector, missed target's offset code or
    /// OVERFLOW count; at most 2.
    words: u8,
    /// The job's word bound (trace-timing 7, version 1.7): what the buffer's full flag
    /// compares with the free words, known before the predictions: a start, plus an
    /// exception or a taken target point (whose offset needs a word only if its target
    /// misses); an OVERFLOW job 1. At least `words`.
    bound: u8,
}

impl CoderJob {
    pub const CAPACITY: usize = 20;

    fn new(gap_before: u32) -> Self {
        CoderJob { ops: [CoderOp::Flush; Self::CAPACITY], len: 0, gap_before, words: 0, bound: 0 }
    }

    /// Empty again, for an instruction after a gap of `gap_before` (the operations past
    /// `len` are never read, so the array is left as it is: the front end does this at
    /// every instruction).
    #[inline]
    fn clear(&mut self, gap_before: u32) {
        self.len = 0;
        self.gap_before = gap_before;
        self.words = 0;
        self.bound = 0;
    }

    #[inline]
    fn push(&mut self, op: CoderOp) {
        self.ops[self.len as usize] = op;
        self.len += 1;
    }

    fn raw_wide(&mut self, value: u32, n: u32, info: Info) {
        if n > RAW_MAX_BITS {
            self.push(CoderOp::Raw { value: value >> RAW_MAX_BITS, bits: (n - RAW_MAX_BITS) as u8, info });
            self.push(CoderOp::Raw { value: value & 0xFFFF, bits: RAW_MAX_BITS as u8, info });
        } else if n > 0 {
            self.push(CoderOp::Raw { value: value & ((1 << n) - 1), bits: n as u8, info });
        }
    }

    /// An escape: the slot symbol's escape branch, the type, the offset.
    fn escape(&mut self, kind: EscapeType, offset: u32) {
        self.push(CoderOp::Slot { escape: true, hit: false, ctx: None, info: Info::Address });
        self.push(CoderOp::Raw { value: kind as u32, bits: ESCAPE_TYPE_BITS as u8, info: Info::Address });
        self.push(CoderOp::Raw { value: offset, bits: GAP_BITS as u8, info: Info::Address });
    }

    pub fn ops(&self) -> &[CoderOp] {
        &self.ops[..self.len as usize]
    }

    /// Address words the job needs in the job buffer (0, 1 or 2).
    pub fn words(&self) -> usize {
        self.words as usize
    }

    /// The word bound the job buffer's full flag uses (0, 1 or 2; at least [`Self::words`]).
    pub fn word_bound(&self) -> usize {
        self.bound as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl PartialEq for CoderJob {
    fn eq(&self, other: &Self) -> bool {
        self.ops() == other.ops()
            && (self.gap_before, self.words, self.bound) == (other.gap_before, other.words, other.bound)
    }
}

impl Eq for CoderJob {}

impl std::fmt::Debug for CoderJob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CoderJob")
            .field("ops", &self.ops())
            .field("gap_before", &self.gap_before)
            .field("words", &self.words)
            .field("bound", &self.bound)
            .finish()
    }
}

/// The predictor front end: retire events in, coder jobs out.
#[derive(Clone, Debug)]
pub struct PftFrontEnd {
    pub state: PftState,
    pub stats: PftStats,
    sync_period: u64,
    job: CoderJob,
    /// The next slot symbol's decision is still open (set by `open_slot`).
    slot_open: bool,
}

impl PftFrontEnd {
    pub fn new(params: &PftParams, low: u32, sync_period: u64) -> Self {
        PftFrontEnd {
            state: PftState::new(params, low),
            stats: PftStats::default(),
            sync_period,
            job: CoderJob::new(0),
            slot_open: false,
        }
    }

    /// Start a slot symbol without an escape; the next decision completes it.
    #[inline]
    fn open_slot(&mut self) {
        self.slot_open = true;
    }

    /// A decision: the open slot symbol's, or a context bit.
    #[inline]
    fn decide(&mut self, hit: bool, ctx: usize, info: Info) {
        let ctx = ctx as u16;
        if std::mem::take(&mut self.slot_open) {
            self.job.push(CoderOp::Slot { escape: false, hit, ctx: Some(ctx), info });
        } else {
            self.job.push(CoderOp::Bit { hit, ctx, info });
        }
    }

    fn escape(&mut self, kind: EscapeType, offset: u32) {
        debug_assert!(!self.slot_open);
        self.job.escape(kind, offset);
    }

    /// An address (start, vector, missed target): the upper-bits decision, then the field.
    fn address(&mut self, a: u32) {
        let same = self.state.upper_matches(a);
        self.decide(same, self.state.target_ctx(TargetContexts::UPPER_SAME), Info::Address);
        let n = self.state.address_bits(same);
        self.job.raw_wide(a >> self.state.low, n, Info::Address);
        self.job.words += 1;
        // A start or an exception vector: known before any prediction.
        self.job.bound += 1;
        self.state.set_upper(a);
    }

    /// A mispredicted target `t` of the point at `a` (trace-format.md 11.5).
    fn target(&mut self, a: u32, t: u32, ret: bool, alt: Option<u32>, table: bool) {
        let code = self.state.classify_target(a, t, ret, alt);
        if alt.is_some() {
            let hit = code == TargetCode::Alt;
            self.decide(hit, self.state.target_ctx(TargetContexts::ALT), Info::Address);
            if hit {
                self.stats.target_alt += 1;
                return;
            }
        }
        if !ret && !self.state.ras.is_empty() {
            let hit = code == TargetCode::RasTop;
            self.decide(hit, self.state.target_ctx(TargetContexts::RAS_TOP), Info::Address);
            if hit {
                self.state.ras.pop();
                self.stats.target_ras_top += 1;
                return;
            }
        }
        let n = self.state.rtc.capacity();
        if n > 0 {
            let hit = matches!(code, TargetCode::Recent(_));
            self.decide(hit, self.state.target_ctx(TargetContexts::RTC_HIT), Info::Address);
            if let TargetCode::Recent(i) = code {
                // The index, most significant bit first, bit j with context RTC_INDEX_j
                // ("hit" is 0).
                let k = n.trailing_zeros();
                for j in 0..k {
                    let bit = (i >> (k - 1 - j)) & 1 != 0;
                    self.decide(!bit, self.state.target_ctx(TargetContexts::RTC_INDEX + j as usize), Info::Address);
                }
                self.state.rtc.touch(Some(i), t);
                self.stats.target_recent += 1;
                return;
            }
        }
        self.stats.target_offset += 1;
        self.offset(a, t, table);
        self.state.rtc.touch(None, t);
    }

    /// A target as an offset from the branch: state bit (isa=iw), class, field (zigzag, or
    /// unsigned from a + 8 for a jump table); class 7 first sends whether the target lies in
    /// the high page, and then only its bits \[11:s\].
    fn offset(&mut self, a: u32, t: u32, table: bool) {
        if self.state.low == 0 {
            self.decide(t & 1 == a & 1, self.state.target_ctx(TargetContexts::SAME_STATE), Info::Address);
        }
        let (z, class) = offset_code(a, t, table);
        let mut node = 1;
        for b in (0..3).rev() {
            let bit = (class >> b) & 1 != 0;
            // A class bit: "hit" is 0, the likelier branch of the tree's near classes.
            self.decide(!bit, self.state.target_ctx(TargetContexts::LEN + node - 1), Info::Address);
            node = 2 * node + bit as usize;
        }
        if class == OFFSET_WIDTHS.len() - 1 {
            let high = in_high_page(t);
            self.job.raw_wide(high as u32, 1, Info::Address);
            if high {
                let (field, bits) = high_page_field(t);
                self.job.raw_wide(field, bits, Info::Address);
                self.job.words += 1;
                return;
            }
        }
        self.job.raw_wide(z, OFFSET_WIDTHS[class], Info::Address);
        self.job.words += 1;
    }

    /// One retired instruction (already checked for continuity and alignment); the job it
    /// needs, if any. Most instructions take `push_plain`, inline; the rest the general
    /// path, out of line.
    #[inline]
    pub fn push(&mut self, ev: &RetireEvent) -> Option<CoderJob> {
        if self.push_plain(ev) {
            return None;
        }
        self.push_general(ev).copied()
    }

    /// Take `ev` if it is the common case, and say whether it was: an instruction of class
    /// none (so no prediction point and no link, `InsnFlow::of`) that is not ARM's
    /// `MOV lr, pc`, with no exception, no start before it, and no virtual slot or SYNC
    /// after it. All [`Self::push_general`] would do with it is count it.
    #[inline(always)]
    fn push_plain(&mut self, ev: &RetireEvent) -> bool {
        let since = self.state.since_reset + 1;
        let plain = PlainRun::may_contain(ev.class, ev.thumb, ev.insn)
            && !ev.exception
            && !self.state.awaiting_start
            && self.state.gap + 1 < MAX_GAP
            && (self.sync_period == 0 || since < self.sync_period);
        if plain {
            debug_assert!({
                let flow = InsnFlow::of(ev.class, ev.insn, ev.thumb);
                !flow.is_slot() && !flow.mov_lr_pc && !flow.link
            });
            self.state.since_reset = since;
            self.state.gap += 1;
        }
        plain
    }

    /// How many plain instructions in a row (see [`crate::PlainRun`]: class none, no
    /// exception, not ARM's `MOV lr, pc`) [`Self::push_plain`] would take, each only
    /// counted: none while a start is pending; fewer than the gap field's maximum and
    /// than the sync period allow.
    #[inline]
    pub(crate) fn plain_budget(&self) -> u32 {
        if self.state.awaiting_start {
            return 0;
        }
        let gap_room = MAX_GAP - 1 - self.state.gap.min(MAX_GAP - 1);
        if self.sync_period == 0 {
            return gap_room;
        }
        let sync_room = (self.sync_period - 1).saturating_sub(self.state.since_reset);
        gap_room.min(sync_room.min(u32::MAX as u64) as u32)
    }

    /// [`Self::push_plain`] of `count` plain instructions, at most [`Self::plain_budget`].
    #[inline(always)]
    pub(crate) fn extend_plain(&mut self, count: u32) {
        debug_assert!(count <= self.plain_budget());
        self.state.since_reset += count as u64;
        self.state.gap += count;
    }

    /// [`Self::push`] for any instruction, the job left in place (functional mode codes it
    /// from there).
    #[inline(never)]
    fn push_general(&mut self, ev: &RetireEvent) -> Option<&CoderJob> {
        self.job.clear(self.state.gap);
        let a = ev.iw_addr();
        if self.state.awaiting_start {
            self.open_slot();
            self.address(a);
            self.state.awaiting_start = false;
        }
        self.state.since_reset += 1;
        if ev.exception {
            // The instruction's own points are not evaluated: the vector follows it.
            let offset = self.state.gap + 1;
            self.stats.exceptions += 1;
            self.escape(EscapeType::Exception, offset);
            self.address(ev.next_pc);
            self.state.gap = 0;
        } else {
            let flow = InsnFlow::of(ev.class, ev.insn, ev.thumb);
            if flow.is_slot() {
                self.open_slot();
                self.stats.slots += 1;
                self.slot(&flow, ev, a);
                self.state.gap = 0;
            } else {
                self.state.pushes(&flow, a, ev.taken);
                self.state.call_bit(&flow, ev.taken, ev.next_pc);
                self.state.gap += 1;
                if self.state.gap == MAX_GAP {
                    // A hit at a fixed 1/2: a virtual slot costs a whole bit, so a corrupt
                    // trace over code without prediction points cannot expand without bound.
                    self.job.push(CoderOp::Slot { escape: false, hit: true, ctx: None, info: Info::Address });
                    self.stats.virtual_slots += 1;
                    self.state.gap = 0;
                }
            }
        }
        if self.sync_period != 0 && self.state.since_reset >= self.sync_period {
            self.sync_ops();
        }
        (!self.job.is_empty()).then_some(&self.job)
    }

    #[inline]
    fn slot(&mut self, flow: &InsnFlow, ev: &RetireEvent, a: u32) {
        let taken = ev.taken;
        if flow.direction {
            // (The decision only records the prediction's outcome: the update may come first.)
            let (pred, ctx) = self.state.dir.predict_update(a, taken);
            self.stats.direction_points += 1;
            self.stats.direction_misses += (pred != taken) as u64;
            self.decide(pred == taken, ctx, Info::Direction);
        }
        if flow.target && taken {
            // The offset's word, should the target miss.
            self.job.bound += 1;
            let (pred, ctx, alt) = self.state.predict_target(flow, a);
            let hit = pred == ev.next_pc;
            if flow.ret {
                self.stats.return_points += 1;
                self.stats.return_misses += !hit as u64;
            } else {
                self.stats.indirect_points += 1;
                self.stats.indirect_misses += !hit as u64;
            }
            self.decide(hit, ctx, Info::Target);
            if !hit {
                self.target(a, ev.next_pc, flow.ret, alt, flow.table);
            }
            self.state.after_target(flow, ev.next_pc);
        }
        self.state.pushes(flow, a, taken);
    }

    /// SYNC after the current instruction: offset, flush, marker; the front end resets now.
    fn sync_ops(&mut self) {
        let gap = self.state.gap;
        self.escape(EscapeType::Sync, gap);
        self.job.push(CoderOp::Flush);
        self.job.push(CoderOp::Marker);
        self.state.reset();
        self.stats.syncs += 1;
    }

    /// A requested sync after the last instruction pushed.
    pub fn sync_job(&mut self) -> CoderJob {
        self.job = CoderJob::new(self.state.gap);
        self.sync_ops();
        self.job
    }

    /// The OVERFLOW job for `lost` instructions after `gap` traced ones: the escape and
    /// the count, no flush, marker or reset (section 11.7). It depends on no state, so cycle
    /// mode can build it before it knows the job buffer has room; `overflow_pushed` follows
    /// once it is pushed.
    pub fn overflow_job(gap: u32, lost: u64) -> CoderJob {
        let mut job = CoderJob::new(gap);
        job.escape(EscapeType::Overflow, gap);
        let (below, rest) = lost_code(lost);
        job.raw_wide(below, LOST_LEN_BITS, Info::Address);
        if below > 0 {
            job.raw_wide(rest, below, Info::Address);
        }
        job.words = 1;
        job.bound = 1;
        job
    }

    /// The OVERFLOW job went out: the state is kept (the lost instructions changed
    /// nothing); the gap restarts and the next instruction sends its address.
    pub fn overflow_pushed(&mut self) {
        self.state.gap = 0;
        self.state.awaiting_start = true;
    }

    /// END after the last instruction pushed, and the coder's last bytes.
    pub fn end_job(&mut self) -> CoderJob {
        self.job = CoderJob::new(self.state.gap);
        let gap = self.state.gap;
        self.escape(EscapeType::End, gap);
        self.job.push(CoderOp::Flush);
        self.job
    }
}

/// -log2 of the slot symbol's "no escape" share (computed once: it is added at every slot).
fn no_escape_cost() -> f64 {
    static COST: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *COST.get_or_init(|| -(1.0 - 1.0 / (1u64 << ESCAPE_SHIFT) as f64).log2())
}

/// The coder half: range coder, context probabilities, the bytes on the port.
#[derive(Clone, Debug)]
pub struct PftCoder {
    coder: RangeEncoder,
    probs: Vec<Prob>,
    rate: u32,
    pub out: Vec<u8>,
    /// Information of each component (filled into the front end's statistics at the end).
    pub direction_bits: f64,
    pub target_bits: f64,
    pub address_bits: f64,
    pub escape_flag_bits: f64,
}

impl PftCoder {
    pub fn new(params: &PftParams) -> Self {
        PftCoder {
            coder: RangeEncoder::new(),
            probs: vec![Prob::default(); params.contexts()],
            rate: params.rate,
            out: Vec::with_capacity(1 << 12),
            direction_bits: 0.0,
            target_bits: 0.0,
            address_bits: 0.0,
            escape_flag_bits: 0.0,
        }
    }

    /// The range coder's `low`, `range` and pending count ([`RangeEncoder::state`]).
    pub fn coder_state(&self) -> (u64, u32, u8) {
        self.coder.state()
    }

    /// Bits on the port so far, counting the bytes the coder still holds back.
    pub fn bit_len(&self) -> u64 {
        (self.out.len() as u64 + self.coder.pending_bytes()) * 8
    }

    fn count(&mut self, info: Info, bits: f64) {
        match info {
            Info::Direction => self.direction_bits += bits,
            Info::Target => self.target_bits += bits,
            Info::Address => self.address_bits += bits,
        }
    }

    #[inline(always)]
    fn bit(&mut self, hit: bool, ctx: u16, info: Info) {
        let p = &mut self.probs[ctx as usize];
        let cost = p.cost(hit);
        self.coder.bit(hit, p, self.rate, &mut self.out);
        self.count(info, cost);
    }

    /// Run one operation; returns the bytes it put on the port (cycle mode moves them into
    /// the record register as they are coded).
    #[inline]
    pub fn run_op(&mut self, op: CoderOp) -> u64 {
        let before = self.out.len();
        match op {
            CoderOp::Slot { escape, hit, ctx, info } => {
                self.coder.slot_escape(escape, &mut self.out);
                if !escape {
                    self.escape_flag_bits += no_escape_cost();
                    match ctx {
                        Some(c) => self.bit(hit, c, info),
                        None => {
                            self.coder.bit_fixed(hit, PROB_INIT, &mut self.out);
                            self.count(info, 1.0);
                        }
                    }
                }
            }
            CoderOp::Bit { hit, ctx, info } => self.bit(hit, ctx, info),
            CoderOp::Raw { value, bits, info } => {
                self.coder.raw(value, bits as u32, &mut self.out);
                self.count(info, bits as f64);
            }
            CoderOp::Flush => self.coder.flush(&mut self.out),
            CoderOp::Marker => {
                self.out.extend_from_slice(&SYNC_MARKER);
                self.coder = RangeEncoder::new();
                self.probs.fill(Prob::default());
            }
        }
        (self.out.len() - before) as u64
    }

    /// Run one operation as cycle mode's coder does (docs/trace-timing.md section 7): after
    /// the operation's own step, `steps` gets one entry per further step, `true` for a step
    /// that emits a byte: for each shift a step, then one per byte it released; the
    /// marker's 16 bytes.
    pub fn run_op_steps(&mut self, op: CoderOp, steps: &mut std::collections::VecDeque<bool>) {
        self.coder.clear_shifts();
        let bytes = self.run_op(op);
        if let CoderOp::Marker = op {
            steps.extend(std::iter::repeat_n(true, bytes as usize));
            return;
        }
        let mut released = 0;
        for &k in self.coder.shifts() {
            steps.push_back(false);
            steps.extend(std::iter::repeat_n(true, k as usize));
            released += k as u64;
        }
        debug_assert_eq!(released, bytes, "every byte comes from a logged shift");
    }

    /// Run a job; returns the bytes it put on the port.
    #[inline]
    pub fn run(&mut self, job: &CoderJob) -> u64 {
        job.ops().iter().map(|&op| self.run_op(op)).sum()
    }
}

/// Cycle mode's sequencer, operation register and coder steps (docs/trace-timing.md
/// section 7, version 1.7): the job whose operations are still to be loaded, the operation
/// loaded and not yet performed, and the shifts and bytes of the last operation performed.
#[derive(Clone, Debug, Default)]
pub struct CoderPipeline {
    /// The job the sequencer holds and the index of its next operation to load; `None`
    /// once its last operation is loaded.
    job: Option<(CoderJob, usize)>,
    /// The operation register.
    staged: Option<CoderOp>,
    /// The coder's steps still to come: `true` emits a byte, `false` is a shift.
    steps: std::collections::VecDeque<bool>,
}

impl CoderPipeline {
    /// Nothing held: no job in the sequencer, the register empty, no shift or byte left.
    #[inline]
    pub fn is_idle(&self) -> bool {
        self.job.is_none() && self.staged.is_none() && self.steps.is_empty()
    }

    /// The sequencer takes the buffer's head in a cycle whose record register is empty at
    /// start (`act`) or not: it holds no job, and the register is empty or performed now.
    /// From the state at start of cycle, as the RTL's take is from registers.
    #[inline]
    pub fn takes(&self, act: bool) -> bool {
        self.job.is_none() && (self.staged.is_none() || (act && self.steps.is_empty()))
    }

    /// A cycle without a step (record register full) changes nothing: the register is
    /// full, or there is nothing to load (`head`: the buffer, or END, has a job to take).
    #[inline]
    pub fn waits_for_step(&self, head: bool) -> bool {
        self.staged.is_some() || (self.job.is_none() && !head)
    }

    /// One cycle: the coder's step (when `act`, the record register empty at start of
    /// cycle), then the register's load, from the held job or from `take` (called only when
    /// [`Self::takes`] held at start of cycle; `None`: nothing to take). Returns whether the
    /// step emitted a byte.
    #[inline]
    pub fn cycle(&mut self, act: bool, coder: &mut PftCoder, take: impl FnOnce() -> Option<CoderJob>) -> bool {
        let takes = self.takes(act);
        let mut emit = false;
        if act {
            if let Some(e) = self.steps.pop_front() {
                emit = e;
            } else if let Some(op) = self.staged.take() {
                coder.run_op_steps(op, &mut self.steps);
            }
        }
        if self.staged.is_none() {
            if takes {
                self.job = take().map(|j| (j, 0));
            }
            if let Some((job, next)) = &mut self.job {
                let ops = job.ops();
                debug_assert!(!ops.is_empty(), "every job has an operation");
                self.staged = Some(ops[*next]);
                *next += 1;
                if *next == ops.len() {
                    self.job = None;
                }
            }
        }
        emit
    }
}

/// The pft encoder of functional mode: each job runs as soon as the front end makes it.
#[derive(Clone, Debug)]
pub struct PftEncoder {
    pub front: PftFrontEnd,
    pub coder: PftCoder,
    ended: bool,
}

impl PftEncoder {
    pub fn new(params: &PftParams, low: u32, sync_period: u64) -> Self {
        PftEncoder { front: PftFrontEnd::new(params, low, sync_period), coder: PftCoder::new(params), ended: false }
    }

    pub fn bit_len(&self) -> u64 {
        self.coder.bit_len()
    }

    /// One retired instruction: the common case inline, the rest (and the coding of a job)
    /// out of line.
    #[inline]
    pub fn push(&mut self, ev: &RetireEvent) {
        if !self.front.push_plain(ev) {
            self.push_job(ev);
        }
    }

    #[inline(never)]
    fn push_job(&mut self, ev: &RetireEvent) {
        if let Some(job) = self.front.push_general(ev) {
            self.coder.run(job);
        }
    }

    pub fn sync(&mut self) {
        let job = self.front.sync_job();
        self.coder.run(&job);
    }

    /// OVERFLOW: `lost` instructions were not traced after the last one pushed.
    pub fn overflow(&mut self, lost: u64) {
        let job = PftFrontEnd::overflow_job(self.front.state.gap, lost);
        self.front.overflow_pushed();
        self.coder.run(&job);
    }

    /// END, once; nothing the second time.
    pub fn end(&mut self) {
        if let Some(job) = self.end_job() {
            self.coder.run(&job);
        }
    }

    /// The END job, once (cycle mode codes it one operation per cycle); `None` after.
    pub fn end_job(&mut self) -> Option<CoderJob> {
        (!std::mem::replace(&mut self.ended, true)).then(|| self.front.end_job())
    }

    /// The statistics with the coder's information counts.
    pub fn stats(&self) -> PftStats {
        let mut s = self.front.stats;
        s.direction_bits = self.coder.direction_bits;
        s.target_bits = self.coder.target_bits;
        s.address_bits = self.coder.address_bits;
        s.escape_flag_bits = self.coder.escape_flag_bits;
        s
    }
}

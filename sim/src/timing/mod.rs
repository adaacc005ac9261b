//! XScale-like core timing: an issue-time model of the single-issue, in-order XScale
//! pipeline with out-of-order completion (shared/reference/xscale-timing.md section 1).
//!
//! # How it works
//!
//! Each retired instruction gets an *issue cycle*: the first cycle at which
//! 1. the previous instruction has finished issuing (its issue latency, plus a branch,
//!    PC-write or exception penalty, plus any cycles the memory pipe waited for a buffer),
//! 2. its instruction word has arrived (I-cache, fetch buffers),
//! 3. every source register is ready (a per-register ready cycle: the scoreboard on load
//!    and multiply destinations; ALU results are bypassed but reach the shifter one cycle
//!    later),
//! 4. the multiplier is free (resource latency) and, after an LDRD, the memory pipe.
//!
//! The stall cycles between `previous issue + 1` and the issue cycle are charged to the
//! constraints above in that order, each getting the cycles it adds beyond the ones before
//! it, so `cycles = instructions + stalls` exactly. Results then get ready cycles from the
//! latencies of [`TimingConfig`] (multiplies by the pre-execution value of Rs; loads by the
//! D-cache, fill/pend/write buffers). The retire cycle is `issue + 2` (`issue + 3` for loads
//! and stores), pushed later where needed so that retire cycles strictly increase (the trace
//! interface takes one instruction per cycle, docs/trace-timing.md section 2). This is the
//! scheme the reference calls cheap and exact for the manual's tables: no pipeline latches
//! are simulated.
//!
//! # Use
//!
//! `Machine::enable_timing(cfg)` attaches a model; every retire event then carries its
//! retire cycle and `Machine::timing_report()` gives the summary. A trace module that must
//! freeze the core calls [`TimingModel::stall`] (or [`StallHandle::stall`] from inside a
//! retire hook): every later instruction moves that many cycles later.

mod blocks;
mod btb;
mod buffers;
pub mod cache;
pub mod config;
pub mod decode;
mod memsys;
mod report;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use streamtrace_model::RetireEvent;

use crate::cpu::Cpu;
use crate::decoded::{new_id, DecodedCache, SLOTS};
use crate::machine::MemAccess;

pub use config::{
    BranchConfig, BySize, CacheConfig, ConfigError, CoreConfig, DataCacheConfig, MemoryConfig, MultiplyConfig,
    TimingConfig,
};
pub use decode::{Kind, Op};
pub use report::{BtbReport, CacheReport, Cause, DataCacheReport, Stalls, TimingReport};

use blocks::{StaticBlock, UNTRIED};
use btb::Btb;
use decode::{DecodeCache, DecodeParams, F_COND, F_MAC, F_MANY, F_MEM, F_PC, F_THUMB, F_UNSIGNED_RS};
use memsys::{DataSide, FetchSide};
use report::{ratio, CAUSES};

/// What the model needs from before an instruction executes: where its decoded facts are,
/// whether its condition passes, and the multiplier's Rs value. Small on purpose: it lives
/// in registers across the execution of the instruction.
#[derive(Clone, Copy, Debug, Default)]
pub struct Captured {
    slot: u32,
    executed: bool,
    rs_value: u32,
}

/// Whether the ARM condition of `word` passes with the flags of `cpu`. The outcome is
/// data-dependent: a table, not a branch per condition.
#[inline(always)]
fn condition_passes(cpu: &Cpu, word: u32) -> bool {
    let nzcv = (cpu.n as usize) << 3 | (cpu.z as usize) << 2 | (cpu.c as usize) << 1 | cpu.v as usize;
    (COND_PASS[nzcv] >> (word >> 28)) & 1 != 0
}

/// An op in `TimingModel::slot_ops`, padded to a decoded slot's size (32 bytes): the run
/// loop's byte offset of a slot is then the byte offset of its op too. With it, the index
/// in `TimingModel::blocks` of the static block starting at the slot (built for the address
/// it names; [`UNTRIED`] before the first).
#[derive(Clone, Copy)]
#[repr(align(32))]
struct SlotOp {
    op: Op,
    block: u32,
}

const _: () = assert!(size_of::<SlotOp>() == size_of::<crate::decoded::Decoded>(), "a slot's offset is its op's");

/// The index in `TimingModel::slot_ops` of the op of the decoded slot at byte offset
/// `offset` of the run loop's slots.
#[inline(always)]
fn op_index(offset: usize) -> usize {
    (offset / size_of::<SlotOp>()) & (SLOTS - 1)
}

/// What the data side did with a load's words ([`Pipeline::load_words`]).
struct LoadWords {
    /// Cycles each word's result comes later than the load's own latency: the memory
    /// pipe's wait before it plus the data's lateness.
    delay: [u64; 2],
    /// Each word missed in the D-cache.
    missed: [bool; 2],
    /// The first word's lateness beyond the pipe's wait (a loaded PC's).
    late: u64,
    /// Cycles the memory pipe waited for a buffer.
    mem_stall: u64,
}

/// What the timing model needs of a retire event.
#[derive(Clone, Copy, Debug)]
struct Outcome {
    pc: u32,
    taken: bool,
    next_pc: u32,
    exception: bool,
}

/// A cloneable, thread-safe way to freeze the core from inside a retire hook: the cycles
/// requested are applied before the next instruction issues.
#[derive(Clone, Debug, Default)]
pub struct StallHandle(Arc<AtomicU64>);

impl StallHandle {
    /// Freeze the core for `cycles` more cycles.
    pub fn stall(&self, cycles: u64) {
        self.0.fetch_add(cycles, Ordering::Relaxed);
    }
}

/// Latencies the per-instruction path uses, converted once.
#[derive(Clone, Debug)]
struct Params {
    shift_extra: u64,
    load_result: u64,
    ldrd_result: u64,
    ldrd_result_second: u64,
    ldrd_next_mem_stall: u64,
    ldm_result_base: u64,
    swp_result: u64,
    exception_issue: u64,
    retire_offset: u64,
    retire_offset_mem: u64,
    mispredict_arm: u64,
    mispredict_thumb: u64,
    bx_issue: u64,
    blx_imm_issue: u64,
    dp_pc_extra: u64,
    ldr_pc_issue: u64,
    ldr_pc_not_taken_issue: u64,
    ldm_pc_issue_base: u64,
    ldm_pc_not_taken_base: u64,
    thumb_pc_extra: u64,
}

/// Scoreboard size: indexed by a `u8`, so no index needs a bounds check (only 0..=17 are
/// used: 16 is `ZERO_REG`, 17 `NO_REG`).
const REGS: usize = 256;

/// A multiply's latencies: (issue, result of rd, result of rd2, resource).
type MulTiming = (u64, u64, u64, u64);

/// The timing model: the decoded-op cache and the pipeline state, kept apart so the
/// per-instruction path can read an op in place while it updates the pipeline.
pub struct TimingModel {
    decode: DecodeCache,
    /// The run loop's ops, per state, parallel to the functional decoded slots (indexed
    /// like them): a slot whose `timed` flag is set has its op here, found without the
    /// key compares of `decode` (which `Machine::step` and held captures use).
    slot_ops: [Box<[SlotOp; SLOTS]>; 2],
    /// This model's identity, and the decoded cache whose `timed` flags match `slot_ops`
    /// (see `DecodedCache::claim_timed`).
    id: u64,
    served: u64,
    pipe: Pipeline,
    /// The capture of an instruction the machine's run loop hands on to be completed
    /// outside it (a system call, an exception): kept here rather than in what the loop
    /// returns, which the functional loop shares.
    held: Option<Captured>,
    /// Static blocks (see `blocks`), at most one per slot and state, and whether the run
    /// loop uses them.
    blocks: Vec<StaticBlock>,
    static_blocks: bool,
    /// Instructions timed from static blocks so far.
    static_instructions: u64,
}

struct Pipeline {
    cfg: TimingConfig,
    p: Params,
    /// Multiply timing by kind and Rs size, precomputed.
    mul: [[MulTiming; 3]; 11],
    fetch: FetchSide,
    data: DataSide,
    btb: Btb,
    /// Per register: cycle a consumer may issue, the same for a shifter operand, and the
    /// cause charged when it stalls one. Index 16 (`ZERO_REG`) is never written, 17
    /// (`NO_REG`) absorbs writes that go nowhere: decoded ops need no branches for either.
    ready: [u64; REGS],
    sready: [u64; REGS],
    cause: [u8; REGS],
    /// At least every `sready` of a scoreboarded result (`write_reg`: loads, multiplies):
    /// with `alu_reach` (ALU-like results are shifter-ready at most that many cycles after
    /// their issue, so before `next - 1 + alu_reach`), a bound on every register's, which
    /// spares a static block's entry its checks one register at a time.
    horizon: u64,
    alu_reach: u64,
    acc_ready: u64,
    mac_free: u64,
    mem_free: u64,
    /// Earliest issue of the next instruction with no stall (previous issue + 1; 0 before
    /// the first instruction). The previous issue cycle is kept only in this form.
    next: u64,
    /// Later earliest-issue bounds left by the previous instruction, increasing, with causes.
    pend: [(u64, u8); 4],
    npend: usize,
    next_retire: u64,
    last_retire: u64,
    /// Cycles the core was frozen from outside; added to every reported cycle.
    frozen: u64,
    handle: Option<StallHandle>,
    stalls: [u64; CAUSES],
    instructions: u64,
    pc_writes: u64,
}

/// Index of a multiply kind in `TimingModel::mul`.
fn mul_index(k: Kind) -> Option<usize> {
    Some(match k {
        Kind::Mul => 0,
        Kind::MulS => 1,
        Kind::MulLong => 2,
        Kind::MulLongS => 3,
        Kind::MulHalf => 4,
        Kind::MulWord => 5,
        Kind::MulHalfLong => 6,
        Kind::Mia => 7,
        Kind::Miaph => 8,
        Kind::Miaxy => 9,
        Kind::Mar => 10,
        _ => return None,
    })
}

/// For each NZCV (N = bit 3), the set of condition codes that pass (bit `cond`); AL and
/// the unconditional space (0xF) always pass.
const COND_PASS: [u16; 16] = {
    let mut t = [0u16; 16];
    let mut f = 0;
    while f < 16 {
        let (n, z, c, v) = (f & 8 != 0, f & 4 != 0, f & 2 != 0, f & 1 != 0);
        let pass = [z, !z, c, !c, n, !n, v, !v, c && !z, !c || z, n == v, n != v, !z && n == v, z || n != v, true, true];
        let mut cond = 0;
        while cond < 16 {
            if pass[cond] {
                t[f] |= 1 << cond;
            }
            cond += 1;
        }
        f += 1;
    }
    t
};

fn preload(cache: &mut cache::Cache, start: u32, len: u32) {
    if !cache.enabled || len == 0 {
        return;
    }
    let first = cache.line_of(start);
    let last = cache.line_of(start.saturating_add(len - 1));
    for line in first..=last {
        if cache.find(line).is_none() {
            cache.allocate(line);
        }
    }
}

/// Rs size class for the early-terminating multiplier: 0 small, 1 medium, 2 large.
#[inline]
pub fn rs_size(v: u32, unsigned: bool) -> usize {
    let small = |bits: u32| {
        let top = v >> (32 - bits);
        top == 0 || (!unsigned && top == (1 << bits) - 1)
    };
    if small(17) {
        0
    } else if small(5) {
        1
    } else {
        2
    }
}

impl TimingModel {
    /// A model with `cfg` (checked first: every error names its key).
    pub fn new(cfg: TimingConfig) -> Result<TimingModel, ConfigError> {
        cfg.validate()?;
        let empty = || -> Box<[SlotOp; SLOTS]> {
            let ops = vec![SlotOp { op: decode::decode_arm(0, &DecodeParams::new(&cfg)), block: UNTRIED }; SLOTS].into_boxed_slice();
            ops.try_into().ok().expect("SLOTS ops")
        };
        Ok(TimingModel {
            decode: DecodeCache::new(&cfg),
            slot_ops: [empty(), empty()],
            id: new_id(),
            served: 0,
            pipe: Pipeline::new(cfg),
            held: None,
            blocks: Vec::new(),
            static_blocks: true,
            static_instructions: 0,
        })
    }

    pub fn config(&self) -> &TimingConfig {
        &self.pipe.cfg
    }

    /// Freeze the core for `cycles` cycles from now: every later instruction issues and
    /// retires that much later. Counted as external stall cycles.
    pub fn stall(&mut self, cycles: u64) {
        self.pipe.stall(cycles);
    }

    /// A handle a retire hook can keep to call [`StallHandle::stall`]; its requests apply
    /// before the next instruction issues.
    pub fn stall_handle(&mut self) -> StallHandle {
        self.pipe.handle.get_or_insert_with(StallHandle::default).clone()
    }

    /// Make `[base, base + len)` uncached on the data side (system mode: device registers).
    pub fn set_uncached_region(&mut self, base: u32, len: u32) {
        self.pipe.data.set_uncached(base, len);
    }

    /// Clean and invalidate both caches in zero time (the CITCAT trace-start driver,
    /// docs/citcat.md 2.2); statistics stay.
    pub fn invalidate_caches(&mut self) {
        self.pipe.fetch.invalidate();
        self.pipe.data.invalidate();
    }

    /// Put the lines of `[start, start + len)` in the I-cache without timing anything
    /// (warm-cache studies, and tests that want no cold misses).
    pub fn preload_icache(&mut self, start: u32, len: u32) {
        preload(&mut self.pipe.fetch.cache, start, len);
    }

    /// Put the lines of `[start, start + len)` in the D-cache (clean) without timing anything.
    pub fn preload_dcache(&mut self, start: u32, len: u32) {
        preload(&mut self.pipe.data.cache, start, len);
    }

    /// Issue cycle of the last instruction (0 before the first).
    pub fn last_issue_cycle(&self) -> u64 {
        self.pipe.next.saturating_sub(1) + self.pipe.frozen
    }

    /// Retire cycle of the last instruction (0 before the first).
    pub fn last_retire_cycle(&self) -> u64 {
        self.pipe.last_retire
    }

    /// Instructions timed so far.
    pub fn instructions(&self) -> u64 {
        self.pipe.instructions
    }

    /// Cycles so far: instructions + stalls.
    pub fn cycles(&self) -> u64 {
        self.pipe.cycles()
    }

    /// Capture what the instruction `word` at `iw` (pc | Thumb) needs from the state before
    /// it executes.
    #[inline]
    pub fn before(&mut self, cpu: &Cpu, iw: u32, word: u32) -> Captured {
        let slot = self.decode.lookup(iw, word);
        Self::capture(self.decode.op(slot), cpu, slot, word)
    }

    /// Before a timed run over `cache`'s slots: make their `timed` flags refer to this
    /// model's `slot_ops` (clearing them if they referred to anything else).
    #[inline]
    pub(crate) fn claim_slots(&mut self, cache: &mut DecodedCache) {
        let served = cache.claim_timed(self.id, self.served);
        if served != self.served {
            // Another memory's code: the blocks were built from the old one's.
            self.blocks.clear();
            for ops in &mut self.slot_ops {
                ops.iter_mut().for_each(|o| o.block = UNTRIED);
            }
        }
        self.served = served;
    }

    /// Time straight-line blocks from their static schedule where it applies (the
    /// default), or every instruction on its own. The cycles, stall causes and statistics
    /// are the same either way (tests compare them); only the speed differs.
    pub fn set_static_blocks(&mut self, on: bool) {
        self.static_blocks = on;
    }

    /// Instructions timed from static blocks so far (of [`TimingModel::instructions`]).
    pub fn static_block_instructions(&self) -> u64 {
        self.static_instructions
    }

    /// Decode `word` (an instruction of the state `thumb`) into the op of decoded slot
    /// `index`, and return the op's `rs` for the slot's `timed_rs`; the caller then sets
    /// the slot's `timed` flag.
    #[cold]
    #[inline(never)]
    pub(crate) fn fill_slot(&mut self, thumb: bool, index: usize, word: u32) -> u8 {
        let op = decode::decode(thumb, word, self.decode.params());
        // Thumb ops have no F_COND (their conditional branches are timed as taken or not):
        // `before_slot` relies on it.
        debug_assert!(!thumb || op.flags & F_COND == 0);
        // (The slot's block stays: it is checked against the address when used.)
        self.slot_ops[thumb as usize][index & (SLOTS - 1)].op = op;
        op.rs
    }

    /// [`TimingModel::before`] for the instruction `word` in the decoded slot at byte
    /// offset `offset` of the state `THUMB`, whose `timed` flag is set and whose op's `rs`
    /// is `rs`: the op itself is not read (the capture is taken before the handler runs,
    /// the op needed after). The capture's `slot` is the byte offset (the op's offset in
    /// `slot_ops` too).
    #[inline(always)]
    pub(crate) fn before_slot<const THUMB: bool>(cpu: &Cpu, offset: usize, word: u32, rs: u8) -> Captured {
        // ARM: what `capture` computes, from the word alone: an op has F_COND exactly when
        // its condition is neither AL nor the unconditional space, which always pass.
        let executed = THUMB || condition_passes(cpu, word);
        // NO_REG reads r15: harmless, the value is only used by multiplies.
        Captured { slot: offset as u32, executed, rs_value: cpu.r[rs as usize & 15] }
    }

    /// What `op` (the instruction `word`, whose op sits at `slot`) needs from before it executes.
    #[inline(always)]
    fn capture(op: &Op, cpu: &Cpu, slot: usize, word: u32) -> Captured {
        let executed = op.flags & F_COND == 0 || condition_passes(cpu, word);
        // NO_REG reads r15: harmless, the value is only used by multiplies.
        let rs_value = cpu.r[op.rs as usize & 15];
        Captured { slot: slot as u32, executed, rs_value }
    }

    /// Keep `pre`, a capture of [`TimingModel::before_slot`] for the instruction `word` at
    /// `iw`, for [`TimingModel::take_held`] (an instruction completed outside the run loop):
    /// with the slot of `decode` that holds the same op, since `slot_ops` may be refilled
    /// before the held capture is used.
    #[cold]
    pub(crate) fn hold_slot(&mut self, pre: Captured, iw: u32, word: u32) {
        let slot = self.decode.lookup(iw, word);
        self.held = Some(Captured { slot: slot as u32, ..pre });
    }

    /// [`TimingModel::retire_parts`] for a capture of [`TimingModel::before_slot`].
    /// `accesses` gives the instruction's data accesses: called only on the paths that
    /// time memory, so the others do not load (and keep) the log's slice.
    #[inline(always)]
    pub(crate) fn retire_slot_parts<'a, const THUMB: bool>(
        &mut self,
        pre: Captured,
        pc: u32,
        taken: bool,
        next_pc: u32,
        accesses: impl Fn() -> &'a [MemAccess],
    ) -> u64 {
        // The op is still there: nothing fills `slot_ops` between before and retire.
        let op = &self.slot_ops[THUMB as usize][op_index(pre.slot as usize)].op;
        // No poll of the stall handle: the run loop polls after each hook call instead; nor
        // a count: it adds its instructions on exit (`count_slot_retires`).
        self.pipe.retire(op, pre, Outcome { pc, taken, next_pc, exception: false }, accesses)
    }

    /// Count `n` instructions timed by [`TimingModel::retire_slot_parts`] (which does not
    /// count them: the run loop knows how many it timed when it returns).
    #[inline]
    pub(crate) fn count_slot_retires(&mut self, n: u64) {
        self.pipe.instructions += n;
    }

    /// Whether a [`StallHandle`] exists (the run loop then polls it after each hook call).
    #[inline]
    pub(crate) fn has_stall_handle(&self) -> bool {
        self.pipe.handle.is_some()
    }

    /// Apply the stall cycles requested through the handle so far. Requests come from
    /// retire hooks and apply before the next instruction issues: a caller that times
    /// instructions without [`TimingModel::retire_parts`] (which polls) calls this after
    /// every hook call and before its first instruction.
    #[inline]
    pub(crate) fn poll_stall_handle(&mut self) {
        self.pipe.poll_handle();
    }

    /// The capture kept by [`TimingModel::hold_slot`].
    pub(crate) fn take_held(&mut self) -> Captured {
        self.held.take().expect("the run loop held the capture of the instruction it handed on")
    }

    /// Time the retired instruction `ev` (with its data accesses) and return its retire
    /// cycle. `pre` comes from [`TimingModel::before`] on the same instruction.
    #[inline]
    pub fn retire(&mut self, pre: Captured, ev: &RetireEvent, accesses: &[MemAccess]) -> u64 {
        self.retire_parts(pre, ev.pc, ev.taken, ev.next_pc, ev.exception, accesses)
    }

    /// [`TimingModel::retire`] with the event's fields (what the machine has at hand).
    /// Always inlined into the machine's timed step: as a call it spent a fifth of its
    /// instructions saving and restoring registers (callgrind).
    #[inline(always)]
    pub fn retire_parts(
        &mut self,
        pre: Captured,
        pc: u32,
        taken: bool,
        next_pc: u32,
        exception: bool,
        accesses: &[MemAccess],
    ) -> u64 {
        // The slot still holds this instruction: nothing decodes between before and retire.
        let op = self.decode.op(pre.slot as usize);
        self.pipe.poll_handle();
        self.pipe.instructions += 1;
        self.pipe.retire(op, pre, Outcome { pc, taken, next_pc, exception }, || accesses)
    }

    /// The summary so far.
    pub fn report(&self) -> TimingReport {
        self.pipe.report()
    }
}

impl Pipeline {
    fn new(cfg: TimingConfig) -> Pipeline {
        let c = &cfg.core;
        let b = &cfg.branch;
        let p = Params {
            shift_extra: c.shift_operand_extra as u64,
            load_result: c.load_result as u64,
            ldrd_result: c.ldrd_result as u64,
            ldrd_result_second: c.ldrd_result_second as u64,
            ldrd_next_mem_stall: c.ldrd_next_mem_stall as u64,
            ldm_result_base: c.ldm_result_base as u64,
            swp_result: c.swp_result as u64,
            exception_issue: c.exception_issue as u64,
            retire_offset: c.retire_offset as u64,
            retire_offset_mem: c.retire_offset_mem as u64,
            mispredict_arm: b.mispredict_penalty_arm as u64,
            mispredict_thumb: b.mispredict_penalty_thumb as u64,
            bx_issue: b.bx_issue as u64,
            blx_imm_issue: b.blx_imm_issue as u64,
            dp_pc_extra: b.dp_pc_extra as u64,
            ldr_pc_issue: b.ldr_pc_issue as u64,
            ldr_pc_not_taken_issue: b.ldr_pc_not_taken_issue as u64,
            ldm_pc_issue_base: b.ldm_pc_issue_base as u64,
            ldm_pc_not_taken_base: b.ldm_pc_not_taken_base as u64,
            thumb_pc_extra: b.thumb_pc_write_extra as u64,
        };
        let m = &cfg.multiply;
        let by = |f: &dyn Fn(usize) -> (u32, u32, u32, u32)| -> [MulTiming; 3] {
            let t = |i: usize| {
                let (a, b, c, d) = f(i);
                (a as u64, b as u64, c as u64, d as u64)
            };
            [t(0), t(1), t(2)]
        };
        let mul = [
            by(&|i| (1, m.mul_result[i], 0, m.mul_resource[i])),
            by(&|i| (m.muls_issue[i], m.muls_issue[i], 0, m.muls_issue[i])),
            by(&|i| (m.mull_issue, m.mull_result_lo[i], m.mull_result_hi[i], m.mull_resource[i])),
            by(&|i| (m.mulls_issue[i], m.mulls_issue[i], m.mulls_issue[i], m.mulls_issue[i])),
            by(&|_| (1, m.smulxy_result, 0, m.smulxy_resource)),
            by(&|_| (1, m.smulwy_result, 0, m.smulwy_resource)),
            by(&|_| (m.smlalxy_issue, m.smlalxy_result_lo, m.smlalxy_result_hi, m.smlalxy_resource)),
            by(&|i| (1, m.mia_result[i], 0, m.mia_resource[i])),
            by(&|_| (1, m.miaph_result, 0, m.miaph_resource)),
            by(&|_| (1, m.miaxy_result, 0, m.miaxy_resource)),
            by(&|_| (m.mar_issue, m.mar_result, 0, m.mar_resource)),
        ];
        Pipeline {
            p,
            mul,
            fetch: FetchSide::new(&cfg),
            data: DataSide::new(&cfg),
            btb: Btb::new(b.btb_enabled, b.btb_entries, b.btb_initial_counter),
            ready: [0; REGS],
            sready: [0; REGS],
            cause: [Cause::ResultLatency as u8; REGS],
            horizon: 0,
            alu_reach: DecodeParams::new(&cfg).alu_reach() as u64 + c.shift_operand_extra as u64,
            acc_ready: 0,
            mac_free: 0,
            mem_free: 0,
            next: 0,
            pend: [(0, 0); 4],
            npend: 0,
            next_retire: 0,
            last_retire: 0,
            frozen: 0,
            handle: None,
            stalls: [0; CAUSES],
            instructions: 0,
            pc_writes: 0,
            cfg,
        }
    }

    fn stall(&mut self, cycles: u64) {
        self.frozen += cycles;
        self.stalls[Cause::External as usize] += cycles;
    }

    #[inline]
    fn poll_handle(&mut self) {
        if let Some(h) = &self.handle {
            if h.0.load(Ordering::Relaxed) != 0 {
                let n = h.0.swap(0, Ordering::Relaxed);
                self.stall(n);
            }
        }
    }

    fn cycles(&self) -> u64 {
        if self.instructions == 0 {
            self.frozen
        } else {
            self.next + self.frozen
        }
    }

    #[inline(always)]
    fn wait(&mut self, t: &mut u64, until: u64, cause: u8) {
        if until > *t {
            self.stalls[cause as usize] += until - *t;
            *t = until;
        }
    }

    /// Charge the stall cycles of operands that are not ready at `t`, in register order,
    /// and return the cycle they are all ready. (`t` by value: a reference would keep the
    /// caller's issue cycle in memory on the common path too.)
    #[cold]
    fn operand_stalls(&mut self, op: &Op, mut t: u64) -> u64 {
        let t = &mut t;
        let mut m = op.src;
        while m != 0 {
            let r = m.trailing_zeros() as usize;
            m &= m - 1;
            let (at, c) = (self.ready[r], self.cause[r]);
            self.wait(t, at, c);
        }
        let mut m = op.ssrc;
        while m != 0 {
            let r = m.trailing_zeros() as usize;
            m &= m - 1;
            let (at, c) = (self.ready[r], self.cause[r]);
            self.wait(t, at, c);
            let at = self.sready[r];
            self.wait(t, at, Cause::Shifter as u8);
        }
        *t
    }

    #[inline(always)]
    fn write_alu(&mut self, op: &Op, at: u64) {
        let shifted = at + self.p.shift_extra;
        if op.flags & F_MANY == 0 {
            for r in op.d {
                let r = r as usize;
                self.ready[r] = at;
                self.sready[r] = shifted;
                self.cause[r] = Cause::ResultLatency as u8;
            }
        } else {
            let mut m = op.dst;
            while m != 0 {
                let r = m.trailing_zeros() as usize;
                m &= m - 1;
                self.ready[r] = at;
                self.sready[r] = shifted;
                self.cause[r] = Cause::ResultLatency as u8;
            }
        }
    }

    /// The data side of a load's words (at most two: LDRD's second word, SWP's write),
    /// one per cycle after `issue`, each waiting for the memory pipe as the ones before.
    #[inline(always)]
    fn load_words(&mut self, issue: u64, accesses: &[MemAccess]) -> LoadWords {
        let mut w = LoadWords { delay: [0; 2], missed: [false; 2], late: 0, mem_stall: 0 };
        for (k, a) in accesses.iter().take(2).enumerate() {
            let before = w.mem_stall;
            let r = self.data.access(a.addr, a.write, issue + 1 + k as u64 + before);
            w.mem_stall += r.stall;
            w.delay[k] = before + r.extra;
            w.missed[k] = r.extra > 0;
            if k == 0 {
                // Data lateness beyond the pipe's own wait (which `mem_stall` holds).
                w.late = r.extra - r.stall;
            }
        }
        w
    }

    /// A scoreboarded result (load, multiply); `r` may be `NO_REG`.
    #[inline(always)]
    fn write_reg(&mut self, r: u8, at: u64, cause: Cause) {
        self.horizon = self.horizon.max(at);
        let r = r as usize;
        self.ready[r] = at;
        self.sready[r] = at;
        self.cause[r] = cause as u8;
    }

    #[inline(always)]
    fn push_bound(&mut self, at: u64, cause: Cause) {
        if self.npend < self.pend.len() {
            self.pend[self.npend] = (at, cause as u8);
            self.npend += 1;
        }
    }

    /// The latest cycle `op`'s operands are ready (shifter operands: shifter-ready).
    #[inline(always)]
    fn operands_ready(&self, op: &Op) -> u64 {
        if op.flags & F_MANY == 0 {
            let r = &self.ready;
            r[op.s[0] as usize].max(r[op.s[1] as usize]).max(r[op.s[2] as usize]).max(self.sready[op.ss as usize])
        } else {
            let mut latest = 0;
            let mut m = op.src;
            while m != 0 {
                latest = latest.max(self.ready[m.trailing_zeros() as usize]);
                m &= m - 1;
            }
            let mut m = op.ssrc;
            while m != 0 {
                latest = latest.max(self.sready[m.trailing_zeros() as usize]);
                m &= m - 1;
            }
            latest
        }
    }

    /// The issue cycle of `op` (the instruction at `pc`), with its stall cycles charged.
    #[inline(always)]
    fn issue_cycle(&mut self, op: &Op, executed: bool, pc: u32) -> u64 {
        let latest = self.operands_ready(op);
        self.issue_cycle_after(op, executed, pc, latest)
    }

    /// [`Pipeline::issue_cycle`] with `latest`, the cycle `op`'s operands are ready.
    #[inline(always)]
    fn issue_cycle_after(&mut self, op: &Op, executed: bool, pc: u32, latest: u64) -> u64 {
        let mut t = self.next;
        // 1. Whatever the previous instruction left: multi-cycle issue, penalties.
        if self.npend > 0 {
            for i in 0..self.npend {
                let (at, cause) = self.pend[i];
                self.wait(&mut t, at, cause);
            }
            self.npend = 0;
        }
        // 2. The instruction word.
        let fetched = self.fetch.fetch(pc, t);
        self.wait(&mut t, fetched, Cause::IcacheMiss as u8);
        // 3. Operands: scoreboard, then the shifter's extra cycle on ALU results. Most
        // instructions do not wait: find the latest ready cycle without branching, and
        // charge the causes only when it is late (sready >= ready always).
        if latest > t {
            t = self.operand_stalls(op, t);
        }
        // 4. Resources.
        if op.flags & (F_MAC | F_MEM) != 0 && executed {
            if op.flags & F_MAC != 0 {
                if op.kind == Kind::Mra {
                    let at = self.acc_ready;
                    self.wait(&mut t, at, Cause::MulResult as u8);
                }
                let at = self.mac_free;
                self.wait(&mut t, at, Cause::MacResource as u8);
            } else {
                let at = self.mem_free;
                self.wait(&mut t, at, Cause::MultiCycle as u8);
            }
        }
        t
    }

    // Inlined into the machine's timed step: a call here costs as much as a simple
    // instruction's whole timing.
    #[inline(always)]
    fn retire<'a>(&mut self, op: &Op, pre: Captured, ev: Outcome, accesses: impl Fn() -> &'a [MemAccess]) -> u64 {
        let issue = self.issue_cycle(op, pre.executed, ev.pc);
        self.next = issue + 1;

        // Plain ALU work: what the general path below does for kind `Alu` without a PC
        // write, issued in one cycle (no memory, no control penalty, no exception: a retire
        // event of the run loop never has one), without its bookkeeping of the cases that
        // cannot arise.
        if op.simple && !ev.exception {
            if pre.executed {
                let (at, shifted) = (issue + op.lat as u64, issue + op.lat as u64 + self.p.shift_extra);
                for r in op.d {
                    let r = r as usize;
                    self.ready[r] = at;
                    self.sready[r] = shifted;
                    self.cause[r] = Cause::ResultLatency as u8;
                }
            }
            return self.retire_cycle(issue + self.p.retire_offset);
        }
        // A branch the BTB predicts: the general path's work for kind `Branch` (a link
        // register result, the prediction, a mispredict penalty), likewise.
        if op.kind == Kind::Branch && !ev.exception {
            if pre.executed {
                self.write_alu(op, issue + op.lat as u64);
            }
            let bound = issue + op.issue as u64;
            if op.issue > 1 {
                self.push_bound(bound, Cause::MultiCycle);
            }
            if self.btb.predict_and_update(ev.pc, ev.taken, ev.next_pc).mispredicted {
                let penalty = if op.flags & F_THUMB != 0 { self.p.mispredict_thumb } else { self.p.mispredict_arm };
                if penalty > 0 {
                    self.push_bound(bound + penalty, Cause::Mispredict);
                }
            }
            return self.retire_cycle(issue + self.p.retire_offset);
        }
        // A single load that does not load the PC: the general path's work for kind `Load`
        // without a PC write (base writeback, the data side, the loaded register, the
        // memory pipe's wait), likewise.
        if op.kind == Kind::Load && op.flags & F_PC == 0 && !ev.exception {
            let mut mem_stall = 0u64;
            if pre.executed {
                self.write_alu(op, issue + op.lat as u64);
                // (A second word, never seen for a single load, is timed as there.)
                let words = self.load_words(issue, accesses());
                mem_stall = words.mem_stall;
                let cause = if words.missed[0] { Cause::DcacheMiss } else { Cause::LoadUse };
                self.write_reg(op.rd, issue + self.p.load_result + words.delay[0], cause);
            }
            let mut bound = issue + op.issue as u64;
            if op.issue > 1 {
                self.push_bound(bound, Cause::MultiCycle);
            }
            if mem_stall > 0 {
                bound += mem_stall;
                self.push_bound(bound, Cause::BufferFull);
            }
            return self.retire_cycle(issue + self.p.retire_offset_mem);
        }

        // Effects: results, memory, control.
        let thumb = op.flags & F_THUMB != 0;
        let thumb_extra = if thumb { self.p.thumb_pc_extra } else { 0 };
        let mut issue_lat = op.issue as u64;
        let mut mem_stall = 0u64; // memory pipe waited for a buffer
        let mut late_pc = 0u64; // a loaded PC arrived late (D-cache miss)
        let mut ctrl = 0u64;
        let mut ctrl_cause = Cause::PcWrite;
        let mut offset = self.p.retire_offset;
        let executed = pre.executed;
        // ALU-like results (data processing, base writeback, BL's lr) of every kind; for
        // branches `executed` is `taken`. A loaded value written below wins over a writeback.
        if executed {
            self.write_alu(op, issue + op.lat as u64);
        }
        match op.kind {
            Kind::Alu => {
                if op.flags & F_PC != 0 && ev.taken {
                    ctrl = self.p.dp_pc_extra + thumb_extra;
                }
            }
            Kind::Load | Kind::LoadDouble | Kind::Swap => {
                offset = self.p.retire_offset_mem;
                if executed {
                    let (lat0, lat1) = match op.kind {
                        Kind::Load => (self.p.load_result, 0),
                        Kind::LoadDouble => (self.p.ldrd_result, self.p.ldrd_result_second),
                        _ => (self.p.swp_result, 0),
                    };
                    let words = self.load_words(issue, accesses());
                    mem_stall = words.mem_stall;
                    let ready = [issue + lat0 + words.delay[0], issue + lat1 + words.delay[1]];
                    let missed = words.missed;
                    let late = words.late;
                    let cause = |m: bool| if m { Cause::DcacheMiss } else { Cause::LoadUse };
                    self.write_reg(op.rd, ready[0], cause(missed[0]));
                    if op.kind == Kind::LoadDouble {
                        self.write_reg(op.rd2, ready[1], cause(missed[1]));
                        self.mem_free = issue + 1 + self.p.ldrd_next_mem_stall;
                    }
                    if op.flags & F_PC != 0 && ev.taken {
                        ctrl = self.p.ldr_pc_issue.saturating_sub(issue_lat) + thumb_extra;
                        late_pc = late;
                    }
                } else if op.flags & F_PC != 0 {
                    issue_lat = self.p.ldr_pc_not_taken_issue;
                }
            }
            Kind::Store | Kind::StoreDouble | Kind::Stm => {
                offset = self.p.retire_offset_mem;
                if executed {
                    for (k, a) in accesses().iter().enumerate() {
                        let r = self.data.access(a.addr, a.write, issue + 1 + k as u64 + mem_stall);
                        mem_stall += r.stall;
                    }
                }
            }
            Kind::Ldm => {
                offset = self.p.retire_offset_mem;
                let n = op.count() as u64;
                if executed {
                    // Words in ascending register order, one per cycle.
                    let mut list = op.list;
                    for (k, a) in accesses().iter().enumerate() {
                        let before = mem_stall;
                        let r = self.data.access(a.addr, a.write, issue + 1 + k as u64 + before);
                        mem_stall += r.stall;
                        if list == 0 {
                            continue;
                        }
                        let reg = list.trailing_zeros() as u8;
                        list &= list - 1;
                        if reg == 15 {
                            late_pc = r.extra - r.stall;
                        } else {
                            let ready = issue + self.p.ldm_result_base + k as u64 + before + r.extra;
                            let cause = if r.extra > 0 { Cause::DcacheMiss } else { Cause::LoadUse };
                            self.write_reg(reg, ready, cause);
                        }
                    }
                    if op.flags & F_PC != 0 && ev.taken {
                        let total = self.p.ldm_pc_issue_base + n.saturating_sub(3);
                        ctrl = total.saturating_sub(issue_lat) + thumb_extra;
                    }
                } else if op.flags & F_PC != 0 {
                    issue_lat = self.p.ldm_pc_not_taken_base + n;
                }
            }
            Kind::Branch => {
                let pred = self.btb.predict_and_update(ev.pc, ev.taken, ev.next_pc);
                if pred.mispredicted {
                    ctrl = if thumb { self.p.mispredict_thumb } else { self.p.mispredict_arm };
                    ctrl_cause = Cause::Mispredict;
                }
            }
            Kind::BranchImm | Kind::BranchReg => {
                if ev.taken {
                    let total = if op.kind == Kind::BranchImm { self.p.blx_imm_issue } else { self.p.bx_issue };
                    ctrl = total.saturating_sub(1) + thumb_extra;
                }
            }
            // A failed condition keeps the static issue latency (ID sequences the
            // instruction before X1 cancels it).
            Kind::Swi | Kind::Other | Kind::Msr => {}
            _ => {
                // Multiplies and the accumulator: latencies by kind and the size of Rs.
                if executed {
                    if let Some(i) = mul_index(op.kind) {
                        let size = rs_size(pre.rs_value, op.flags & F_UNSIGNED_RS != 0);
                        let (il, r1, r2, res) = self.mul[i][size];
                        issue_lat = il;
                        self.mac_free = issue + res;
                        match op.kind {
                            Kind::Mia | Kind::Miaph | Kind::Miaxy | Kind::Mar => self.acc_ready = issue + r1,
                            _ => {
                                self.write_reg(op.rd, issue + r1, Cause::MulResult);
                                self.write_reg(op.rd2, issue + r2, Cause::MulResult);
                            }
                        }
                    } else {
                        // MRA: acc0 -> RdLo, RdHi.
                        let mm = &self.cfg.multiply;
                        let (lo, hi, res) = (mm.mra_result_lo as u64, mm.mra_result_hi as u64, mm.mra_resource as u64);
                        self.mac_free = issue + res;
                        self.write_reg(op.rd, issue + lo, Cause::MulResult);
                        self.write_reg(op.rd2, issue + hi, Cause::MulResult);
                    }
                } else {
                    issue_lat = 1;
                }
            }
        }
        if (op.kind == Kind::Swi && executed) || ev.exception {
            ctrl = self.p.exception_issue.saturating_sub(issue_lat);
            ctrl_cause = Cause::Exception;
        } else if ctrl > 0 && ctrl_cause == Cause::PcWrite {
            self.pc_writes += 1;
        }

        // Bounds for the next instruction, in pipeline order.
        let mut bound = issue + issue_lat;
        if issue_lat > 1 {
            self.push_bound(bound, Cause::MultiCycle);
        }
        if mem_stall > 0 {
            bound += mem_stall;
            self.push_bound(bound, Cause::BufferFull);
        }
        if late_pc > 0 {
            bound += late_pc;
            self.push_bound(bound, Cause::DcacheMiss);
        }
        if ctrl > 0 {
            bound += ctrl;
            self.push_bound(bound, ctrl_cause);
        }

        self.retire_cycle(issue + offset)
    }

    /// The retire cycle of an instruction that could retire at `earliest`: one per cycle,
    /// in order.
    #[inline(always)]
    fn retire_cycle(&mut self, earliest: u64) -> u64 {
        let retire = earliest.max(self.next_retire);
        self.next_retire = retire + 1;
        self.last_retire = retire + self.frozen;
        self.last_retire
    }

    fn report(&self) -> TimingReport {
        let mut stalls = self.stalls;
        // Requests through a handle that no instruction has seen yet still froze the core.
        let pending = self.handle.as_ref().map_or(0, |h| h.0.load(Ordering::Relaxed));
        stalls[Cause::External as usize] += pending;
        let cycles = self.cycles() + pending;
        let d = &self.data;
        TimingReport {
            cycles,
            instructions: self.instructions,
            cpi: ratio(cycles, self.instructions),
            last_retire_cycle: self.last_retire,
            icache: CacheReport {
                accesses: self.instructions,
                misses: self.fetch.cache.misses,
                miss_rate: ratio(self.fetch.cache.misses, self.instructions),
            },
            dcache: DataCacheReport {
                accesses: d.cache.accesses,
                misses: d.cache.misses,
                miss_rate: ratio(d.cache.misses, d.cache.accesses),
                read_misses: d.read_misses,
                write_misses: d.write_misses,
                writebacks: d.writebacks,
                pend_hits: d.pend_hits,
                write_buffer_writes: d.writes.pushes,
                write_buffer_coalesced: d.writes.coalesced,
            },
            btb: BtbReport {
                lookups: self.btb.lookups,
                hits: self.btb.hits,
                mispredicts: self.btb.mispredicts,
                accuracy: if self.btb.lookups == 0 { 1.0 } else { 1.0 - ratio(self.btb.mispredicts, self.btb.lookups) },
            },
            unpredicted_pc_writes: self.pc_writes,
            stalls: Stalls::from_array(&stalls),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn condition_table_matches_the_cpu() {
        for (f, &pass) in COND_PASS.iter().enumerate() {
            let mut cpu = Cpu::new();
            (cpu.n, cpu.z, cpu.c, cpu.v) = (f & 8 != 0, f & 4 != 0, f & 2 != 0, f & 1 != 0);
            for cond in 0..15u32 {
                assert_eq!(pass >> cond & 1 != 0, cpu.cond_passed(cond), "nzcv {f:04b} cond {cond}");
            }
            assert!(pass >> 15 & 1 != 0);
        }
    }

    #[test]
    fn rs_size_classes() {
        assert_eq!(rs_size(0, false), 0);
        assert_eq!(rs_size(0x7FFF, false), 0);
        assert_eq!(rs_size(0xFFFF_8000, false), 0); // -32768
        assert_eq!(rs_size(0x8000, false), 1);
        assert_eq!(rs_size(0x07FF_FFFF, false), 1);
        assert_eq!(rs_size(0xF800_0000, false), 1);
        assert_eq!(rs_size(0x0800_0000, false), 2);
        assert_eq!(rs_size(0x8000_0000, false), 2);
        // Unsigned (UMULL/UMLAL): ones at the top are large.
        assert_eq!(rs_size(0xFFFF_FFFF, true), 2);
        assert_eq!(rs_size(0x7FFF, true), 0);
    }
}

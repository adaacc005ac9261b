//! Static timing of straight-line blocks (issue 19's "timing per block").
//!
//! Most of an instruction's timing depends only on the instructions before it in its block:
//! its issue cycle relative to the block's first, the stalls between them, the ready cycles
//! of the results it leaves. [`analyze`] computes those once per block, with the rules of
//! `Pipeline::retire`, assuming that nothing outside the block delays it after its first
//! instruction issues: every register the block reads before writing it is ready when first
//! needed, the fetch lines after the first are resident with no fetch buffer busy, and every
//! data access hits with no fill in flight. The run loop checks those assumptions once the
//! block's first instruction has run (`TimingModel::block_first`) and at each data access;
//! where one fails, the instructions timed so far are written back as the per-instruction
//! model would have left them, and the rest are timed one by one. Either way the cycles, stall causes and
//! statistics are the per-instruction model's, exactly (tests compare the two).
//!
//! A block starts at any instruction and takes the instructions after it while they are
//! unconditional (ARM condition AL, or Thumb), write no PC, use no multiplier, are ALU work,
//! single loads and stores, LDM/STM or STRD, and are plain for a retire hook (branch class
//! none, no ARM `MOV lr, pc`: [`PlainRun::may_contain`]). The run loop runs such a block
//! in a loop of its own (`machine::run_static_block`), reporting it to the hook as a plain
//! run: no per-instruction timing, no per-instruction bookkeeping.

use streamtrace_model::PlainRun;

use super::decode::{Kind, Op, F_COND, F_MAC, F_MANY, F_MEM, F_PC, NO_REG};
use super::{op_index, Captured, Cause, Params, Pipeline, TimingModel, REGS};
use crate::decoded::{Decoded, NO_STATIC_BLOCK, SLOTS, STATIC_BLOCK};
use crate::machine::MemAccess;

/// A slot's block index before its first block is built.
pub(super) const UNTRIED: u32 = u32::MAX;

/// Longest block (instructions).
const MAX_LEN: usize = 32;

/// Shortest block: shorter ones cost more to enter and leave than their static timing
/// saves (callgrind, traced runs of dijkstra, qsort_structs and jpeg_dct: 2, 3 and 5 cost
/// more over the three).
const MIN_LEN: usize = 4;

/// Whether `op` can be in a block (see the module).
fn in_block(op: &Op) -> bool {
    op.flags & (F_COND | F_PC | F_MAC) == 0
        && matches!(op.kind, Kind::Alu | Kind::Load | Kind::Store | Kind::StoreDouble | Kind::Stm | Kind::Ldm)
}

/// A register result (cycles relative to the issue of the block's first instruction).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Write {
    reg: u8,
    cause: u8,
    ready: u16,
    sready: u16,
}

/// One instruction's static timing; cycles relative to the issue of the block's first.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct StaticInsn {
    issue: u16,
    /// Its retire cycle if the block's first retired no earlier than it could: the
    /// retire-order chain from the block's start.
    retire: u16,
    /// Where its fetch is timed (after the previous instruction's issue bound, before its
    /// operand wait).
    fetch_at: u16,
    /// The issue bound it leaves for the next instruction (multi-cycle issue), 0 if none.
    bound: u16,
    /// Its results: `StaticBlock::writes[previous end..writes_end]`.
    writes_end: u16,
    /// Its stalls: `StaticBlock::stalls[previous end..stalls_end]`.
    stalls_end: u8,
    /// Data accesses it makes (the i-th at `issue + 1 + i`).
    accesses: u8,
    /// It starts a fetch line the previous instruction was not in.
    new_line: bool,
}

/// A register the block reads before writing it: ready (and shifter-ready) at the latest
/// these many cycles after the first instruction's issue, or the block is not timed
/// statically.
#[derive(Clone, Copy, Debug)]
struct LiveIn {
    reg: u8,
    ready: u32,
    sready: u32,
}

/// A block's static timing (no `insns`: no block starts at `pc`).
#[derive(Clone, Debug)]
pub(super) struct StaticBlock {
    pc: u32,
    /// The decoded cache's code epoch it was built in (a rewritten instruction ends it).
    epoch: u64,
    insns: Box<[StaticInsn]>,
    /// The memory pipe must be free by then (`mem_free`, after an LDRD); `u32::MAX`: no
    /// access.
    mem_need: u32,
    live: Box<[LiveIn]>,
    /// The fetch lines after the first: (byte offset of the instruction starting one, its
    /// `fetch_at`).
    lines: Box<[(u32, u32)]>,
    writes: Box<[Write]>,
    stalls: Box<[(u8, u32)]>,
    /// The earliest cycle a register of `live` must be ready by (`u32::MAX`: none), and the
    /// latest cycle a load of the block makes its result ready (see `Pipeline::horizon`).
    min_need: u32,
    load_horizon: u32,
    /// The whole block's results (the last write of each register) and stalls by cause.
    out: Box<[Write]>,
    stall_total: Box<[(u8, u32)]>,
}

impl StaticBlock {
    fn none(pc: u32, epoch: u64) -> StaticBlock {
        StaticBlock {
            pc,
            epoch,
            insns: Box::new([]),
            mem_need: u32::MAX,
            min_need: u32::MAX,
            load_horizon: 0,
            live: Box::new([]),
            lines: Box::new([]),
            writes: Box::new([]),
            stalls: Box::new([]),
            out: Box::new([]),
            stall_total: Box::new([]),
        }
    }
}

fn bits(mut m: u16) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (m != 0).then(|| {
            let r = m.trailing_zeros() as usize;
            m &= m - 1;
            r
        })
    })
}

/// The static timing of the block of `ops` (each [`in_block`]) starting at `pc`, instructions `size` bytes, fetch lines of
/// `1 << line_shift` bytes. Mirrors `Pipeline::retire` for these kinds with every outside
/// delay absent; the first instruction's own wait is the entry's.
fn analyze(pc: u32, size: u32, ops: &[Op], p: &Params, line_shift: u32, epoch: u64) -> StaticBlock {
    // The block's own scoreboard; registers it has not written are ready at 0.
    let mut ready = [0u64; REGS];
    let mut sready = [0u64; REGS];
    let mut cause = [0u8; REGS];
    let mut written = 0u32;
    let mut need = [(u64::MAX, u64::MAX); 16];
    let mut mem_need = u64::MAX;
    let (mut insns, mut writes, mut stalls, mut lines) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut next, mut bound, mut last_retire) = (0u64, 0u64, None::<u64>);
    let wait = |t: &mut u64, until: u64, c: u8, stalls: &mut Vec<(u8, u32)>| {
        if until > *t {
            stalls.push((c, (until - *t) as u32));
            *t = until;
        }
    };
    for (k, op) in ops.iter().enumerate() {
        let at_pc = pc.wrapping_add(k as u32 * size);
        let mut t = next;
        wait(&mut t, bound, Cause::MultiCycle as u8, &mut stalls);
        let fetch_at = t;
        let new_line = k > 0 && at_pc >> line_shift != at_pc.wrapping_sub(size) >> line_shift;
        // The first instruction's operands and resources are waited for at the entry.
        if k > 0 {
            let live = |r: &usize| *r < 15 && written & (1 << *r) == 0;
            for r in bits(op.src).filter(live) {
                need[r].0 = need[r].0.min(t);
            }
            for r in bits(op.ssrc).filter(live) {
                need[r].1 = need[r].1.min(t);
            }
            // `operand_stalls`' order: sources, then shifter sources and their extra cycle.
            for r in bits(op.src) {
                wait(&mut t, ready[r], cause[r], &mut stalls);
            }
            for r in bits(op.ssrc) {
                wait(&mut t, ready[r], cause[r], &mut stalls);
                wait(&mut t, sready[r], Cause::Shifter as u8, &mut stalls);
            }
            if op.flags & F_MEM != 0 {
                mem_need = mem_need.min(t);
            }
        }
        let issue = t;
        next = issue + 1;
        if issue + 64 > u16::MAX as u64 || writes.len() > u16::MAX as usize - 32 || stalls.len() > u8::MAX as usize - 8 {
            // (Never for real code: a block has at most `MAX_LEN` instructions.)
            return StaticBlock::none(pc, epoch);
        }
        let first_write = writes.len();
        // ALU-like results (data processing, base writeback).
        let at = issue + op.lat as u64;
        let mut alu =
            |r: usize| writes.push(Write { reg: r as u8, cause: Cause::ResultLatency as u8, ready: at as u16, sready: (at + p.shift_extra) as u16 });
        if op.flags & F_MANY == 0 {
            op.d.iter().map(|&r| r as usize).filter(|&r| r != NO_REG as usize).for_each(&mut alu);
        } else {
            bits(op.dst).for_each(&mut alu);
        }
        let mut load = |r: u8, at: u64| {
            if r != NO_REG {
                writes.push(Write { reg: r, cause: Cause::LoadUse as u8, ready: at as u16, sready: at as u16 });
            }
        };
        let accesses = match op.kind {
            Kind::Load => {
                load(op.rd, issue + p.load_result);
                1
            }
            Kind::Store => 1,
            Kind::StoreDouble => 2,
            Kind::Stm => op.count(),
            Kind::Ldm => {
                // Words in ascending register order, one per cycle.
                for (w, r) in bits(op.list).enumerate() {
                    load(r as u8, issue + p.ldm_result_base + w as u64);
                }
                op.count()
            }
            _ => 0,
        };
        for w in &writes[first_write..] {
            let r = w.reg as usize;
            (ready[r], sready[r], cause[r]) = (w.ready as u64, w.sready as u64, w.cause);
            written |= 1 << r;
        }
        bound = if op.issue > 1 { issue + op.issue as u64 } else { 0 };
        let memory = op.kind != Kind::Alu;
        let earliest = issue + if memory { p.retire_offset_mem } else { p.retire_offset };
        let retire = last_retire.map_or(earliest, |r| earliest.max(r + 1));
        last_retire = Some(retire);
        if new_line {
            lines.push((k as u32 * size, fetch_at as u32));
        }
        insns.push(StaticInsn {
            issue: issue as u16,
            retire: retire as u16,
            fetch_at: fetch_at as u16,
            bound: bound as u16,
            writes_end: writes.len() as u16,
            stalls_end: stalls.len() as u8,
            accesses: accesses as u8,
            new_line,
        });
    }
    let mut live = Vec::new();
    let mut min_need = u32::MAX;
    for (r, &(nr, ns)) in need.iter().enumerate() {
        if nr != u64::MAX || ns != u64::MAX {
            // A shifter read needs the shifter-ready cycle, never before the ready one.
            let nr = nr.min(ns);
            live.push(LiveIn { reg: r as u8, ready: nr as u32, sready: ns.min(u32::MAX as u64) as u32 });
            min_need = min_need.min(nr as u32);
        }
    }
    let mut out: Vec<Write> = Vec::new();
    for w in &writes {
        match out.iter_mut().find(|o| o.reg == w.reg) {
            Some(o) => *o = *w,
            None => out.push(*w),
        }
    }
    let mut stall_total: Vec<(u8, u32)> = Vec::new();
    for &(c, n) in &stalls {
        match stall_total.iter_mut().find(|s| s.0 == c) {
            Some(s) => s.1 += n,
            None => stall_total.push((c, n)),
        }
    }
    StaticBlock {
        pc,
        epoch,
        insns: insns.into(),
        mem_need: mem_need.min(u32::MAX as u64) as u32,
        min_need,
        load_horizon: writes.iter().filter(|w| w.cause == Cause::LoadUse as u8).map(|w| w.sready as u32).max().unwrap_or(0),
        live: live.into(),
        lines: lines.into(),
        writes: writes.into(),
        stalls: stalls.into(),
        out: out.into(),
        stall_total: stall_total.into(),
    }
}

/// A static block being run (see [`TimingModel::block_at`]).
pub(crate) struct BlockRun {
    /// The block, in `TimingModel::blocks`, and its first instruction's op, in
    /// `TimingModel::slot_ops`: neither moves while it runs (blocks are built only between
    /// runs, and the op table is a fixed allocation).
    block: *const StaticBlock,
    op: *const Op,
    /// The issue cycle of the first instruction (once timed).
    entry: u64,
    /// The retire-order bound before the first instruction (once timed).
    next_retire: u64,
}

impl BlockRun {
    /// Instructions in the block.
    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        // SAFETY: see the field.
        let b = unsafe { &*self.block };
        b.insns.len()
    }
}

impl TimingModel {
    /// The static block starting at the instruction at `pc` (the decoded slot at byte
    /// offset `offset` of the state `THUMB`, in `slots`, whose `block` says
    /// [`STATIC_BLOCK`]), built again first if the code changed since it was built (`epoch`
    /// is the decoded cache's); `None` if there is none (or blocks are off).
    #[inline(always)]
    pub(crate) fn block_at<const THUMB: bool>(&mut self, slots: *mut Decoded, offset: usize, pc: u32, epoch: u64) -> Option<BlockRun> {
        if !self.static_blocks {
            return None;
        }
        let slot = op_index(offset);
        let mut index = self.slot_ops[THUMB as usize][slot].block as usize;
        if !matches!(self.blocks.get(index), Some(b) if b.pc == pc && b.epoch == epoch) {
            index = self.build_block::<THUMB>(slots, slot, pc, epoch)?;
        }
        // SAFETY: `index` is the slot's block (checked above, or just built).
        let b = unsafe { self.blocks.get_unchecked(index) };
        let op = &self.slot_ops[THUMB as usize][slot].op;
        Some(BlockRun { block: b, op, entry: 0, next_retire: 0 })
    }

    /// Before the instruction at `pc` (as for [`TimingModel::block_at`]) executes, for the
    /// first time since its slot was filled: build its static block.
    #[cold]
    #[inline(never)]
    pub(crate) fn block_build<const THUMB: bool>(&mut self, slots: *mut Decoded, offset: usize, pc: u32, epoch: u64) {
        let slot = op_index(offset);
        self.build_block::<THUMB>(slots, slot, pc, epoch);
    }

    /// Build (or build again) the static block starting at `slot` (address `pc`) and store
    /// it as the slot's: its index, or `None` if no block starts there. The slot's `block`
    /// says which, or stays untried when the instructions after it have not run yet.
    fn build_block<const THUMB: bool>(&mut self, slots: *mut Decoded, slot: usize, pc: u32, epoch: u64) -> Option<usize> {
        let size = if THUMB { 2 } else { 4 };
        let mut ops = Vec::new();
        let mut complete = true;
        for k in 0..MAX_LEN.min(SLOTS - slot) {
            // SAFETY: `slot + k < SLOTS`, and the run loop's slot array outlives the call;
            // no reference into it is kept.
            let d = unsafe { &*slots.add(slot + k) };
            if d.key != pc.wrapping_add(k as u32 * size) || !d.timed {
                // Not run yet (or evicted): the block may go on, so build it again later.
                complete = false;
                break;
            }
            let op = self.slot_ops[THUMB as usize][slot + k].op;
            if !in_block(&op) || !PlainRun::may_contain(d.class, THUMB, d.word) {
                break;
            }
            ops.push(op);
        }
        // (Built whether blocks are on or not: `block_at` decides whether they are used.)
        let found = ops.len() >= MIN_LEN;
        if found || complete {
            // SAFETY: as above (`slot < SLOTS`).
            unsafe { (*slots.add(slot)).block = if found { STATIC_BLOCK } else { NO_STATIC_BLOCK } };
        }
        if !found {
            return None;
        }
        let b = analyze(pc, size, &ops, &self.pipe.p, self.pipe.fetch.cache.line_shift, epoch);
        let mut index = self.slot_ops[THUMB as usize][slot].block as usize;
        if index < self.blocks.len() {
            self.blocks[index] = b;
        } else {
            index = self.blocks.len();
            self.blocks.push(b);
            self.slot_ops[THUMB as usize][slot].block = index as u32;
        }
        Some(index)
    }

    /// After the first instruction of `run` (at `pc`) executed with the data accesses
    /// `log`: if nothing outside the block delays it after that instruction issues (see the
    /// module), time the instruction and return its retire cycle; else `None`, with nothing
    /// changed (the instruction is to be timed on its own, and the block is not run).
    #[inline(always)]
    pub(crate) fn block_first(&mut self, run: &mut BlockRun, pc: u32, log: &[MemAccess]) -> Option<u64> {
        // SAFETY: see the fields.
        let (b, op) = unsafe { (&*run.block, &*run.op) };
        let p = &mut self.pipe;
        let (t, latest, entry) = p.block_entry(b, op, pc)?;
        // SAFETY: a block has instructions.
        let first = unsafe { b.insns.get_unchecked(0) };
        if !p.block_data(first, entry, log) {
            return None;
        }
        if p.npend == 0 && entry == t {
            // No wait: the issue is the fetch (at once) alone.
            p.fetch.fetch(pc, t);
        } else {
            let issue = p.issue_cycle_after(op, true, pc, latest);
            debug_assert_eq!(issue, entry);
        }
        (run.entry, run.next_retire) = (entry, p.next_retire);
        Some((entry + first.retire as u64).max(p.next_retire) + p.frozen)
    }

    /// After the `k`-th instruction (k > 0) of `run` (at `pc`) executed with the data
    /// accesses `log`: time it (true), or leave it to be timed on its own (false; the
    /// caller ends the run with [`TimingModel::block_finish`]`(run, k)` first).
    #[inline(always)]
    pub(crate) fn block_next(&mut self, run: &BlockRun, k: usize, pc: u32, log: &[MemAccess]) -> bool {
        // SAFETY: see the field; k < the block's length (the caller's loop bound).
        let b = unsafe { &*run.block };
        let ins = unsafe { b.insns.get_unchecked(k) };
        if !ins.new_line && ins.accesses == 0 {
            return true;
        }
        if ins.new_line {
            let at = run.entry + ins.fetch_at as u64;
            let fetched = self.pipe.fetch.fetch(pc, at);
            debug_assert_eq!(fetched, at, "a block's later lines were checked at its entry");
        }
        self.pipe.block_data(ins, run.entry, log)
    }

    /// End `run` after its first `n` instructions (n > 0): the pipeline as the
    /// per-instruction model leaves it after them. Returns the retire cycle of the last.
    #[inline(always)]
    pub(crate) fn block_finish(&mut self, run: &BlockRun, n: usize) -> u64 {
        // SAFETY: see the field.
        let b = unsafe { &*run.block };
        self.static_instructions += n as u64;
        let p = &mut self.pipe;
        p.horizon = p.horizon.max(run.entry + b.load_horizon as u64);
        if n == b.insns.len() {
            self.pipe.block_results(&b.out, &b.stall_total, run.entry);
        } else {
            self.block_results_part(b, n, run.entry);
        }
        // SAFETY: 0 < n <= the block's length.
        let last = unsafe { b.insns.get_unchecked(n - 1) };
        let p = &mut self.pipe;
        p.next = run.entry + last.issue as u64 + 1;
        if last.bound != 0 {
            p.push_bound(run.entry + last.bound as u64, Cause::MultiCycle);
        }
        let retire = (run.entry + last.retire as u64).max(run.next_retire + n as u64 - 1);
        p.next_retire = retire + 1;
        p.last_retire = retire + p.frozen;
        p.last_retire
    }

    /// [`Pipeline::block_results`] of the first `n` instructions of `b`.
    #[cold]
    fn block_results_part(&mut self, b: &StaticBlock, n: usize, entry: u64) {
        let last = &b.insns[n - 1];
        self.pipe.block_results(&b.writes[..last.writes_end as usize], &b.stalls[..last.stalls_end as usize], entry);
    }

    /// The capture of an instruction of a static block (the slot at byte offset `offset` of
    /// the state `THUMB`), made after it executed: a block's instructions are
    /// unconditional and no multiply (no Rs value).
    #[inline]
    pub(crate) fn block_capture<const THUMB: bool>(&self, offset: usize) -> Captured {
        let op = &self.slot_ops[THUMB as usize][op_index(offset)].op;
        debug_assert!(in_block(op));
        Captured { slot: offset as u32, executed: true, rs_value: 0 }
    }
}

impl Pipeline {
    /// The entry of static block `b`, whose first instruction `op` is at `pc`: the cycle
    /// after the bounds the previous instruction left, when the operands are ready, and the
    /// issue cycle, if nothing outside the block delays the block after it (see the
    /// module); else `None`. Changes nothing.
    #[inline(always)]
    fn block_entry(&self, b: &StaticBlock, op: &Op, pc: u32) -> Option<(u64, u64, u64)> {
        // The first instruction's issue, as `issue_cycle` finds it when its word is there
        // at once (else the block is not run).
        let mut t = self.next;
        for &(at, _) in &self.pend[..self.npend] {
            t = t.max(at);
        }
        let latest = self.operands_ready(op);
        let mut entry = t.max(latest);
        if op.flags & F_MEM != 0 {
            entry = entry.max(self.mem_free);
        }
        // Registers read before written: all ready in time if every result is.
        if self.horizon.max(self.next + self.alu_reach - 1) > entry + b.min_need as u64 {
            for l in &b.live[..] {
                let r = l.reg as usize;
                if self.ready[r] > entry + l.ready as u64 || self.sready[r] > entry + l.sready as u64 {
                    return None;
                }
            }
        }
        if self.mem_free > entry + b.mem_need as u64 {
            return None;
        }
        for &(offset, at) in &b.lines[..] {
            if !self.fetch.new_line_at_once(pc.wrapping_add(offset), entry + at as u64) {
                return None;
            }
        }
        self.fetch.at_once(pc, t).then_some((t, latest, entry))
    }

    /// Write results `writes` and stalls of a block whose first instruction issued at
    /// `entry`.
    #[inline(always)]
    fn block_results(&mut self, writes: &[Write], stalls: &[(u8, u32)], entry: u64) {
        for w in writes {
            let r = w.reg as usize;
            self.ready[r] = entry + w.ready as u64;
            self.sready[r] = entry + w.sready as u64;
            self.cause[r] = w.cause;
        }
        for &(c, k) in stalls {
            self.stalls[c as usize] += k as u64;
        }
    }

    /// The data accesses `log` of the static instruction `ins` (of the block whose first
    /// instruction issued at `entry`) when they all hit at once: true; else false, with
    /// nothing changed.
    #[inline(always)]
    fn block_data(&mut self, ins: &StaticInsn, entry: u64, log: &[MemAccess]) -> bool {
        if ins.accesses == 0 {
            // (None, or an instruction the model times without its accesses.)
            return true;
        }
        if log.len() != ins.accesses as usize {
            return false;
        }
        let at = entry + ins.issue as u64 + 1;
        for (w, a) in log.iter().enumerate() {
            if !self.data.access_at_once(a.addr, a.write, at + w as u64) {
                self.data.uncount_accesses(w as u64);
                return false;
            }
        }
        true
    }
}

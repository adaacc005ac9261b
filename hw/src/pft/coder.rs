//! The range coder of `pft` (docs/trace-format.md section 11.6) as one RustHDL block that
//! works in **steps**, one per cycle in which `step` is high (docs/trace-timing.md section 7,
//! version 1.3), bit-exact with the model's `PftCoder::run_op_steps`:
//!
//! 1. **emit** one byte it holds (the bytes a shift released, a stuffing byte, the marker);
//! 2. else **shift** `low` once, when the range is below `2^24` after a coding operation or a
//!    flush has shifts left; the bytes the shift releases become the bytes to emit;
//! 3. else, when `op_valid`, perform an **operation**: a slot symbol, context bit or raw
//!    field changes `low`, `range` and the context's probability (the products
//!    `(range >> 14) * p` and `v * (range >> n)` share one multiplier, as no operation needs
//!    both; rust-hdl multiplies only 16-bit operands, so the 32 x 16-bit product modulo 2^32
//!    is two 16 x 16-bit products); a flush starts five shifts; the marker resets the coder
//!    and makes its 16 bytes the bytes to emit.
//!
//! `busy` says the next step is not an operation (step 1 or 2 applies); the sequencer offers
//! an operation only in a cycle with `step` high and `busy` low.
//!
//! The bytes to emit are never more than one shift's: the cached byte plus the carry (unless
//! it is the coder's very first byte, which is dropped), up to three pending bytes (0xFF, or
//! 0x00 with the carry), and a stuffing byte after the 14th zero byte, which is inserted when
//! that byte is emitted. So three small registers hold them, not a byte queue.
//!
//! The coder must not code after a flush without a marker (the model's rule: a flushed
//! coder is not used again); the range a flush leaves may be below 2^24, so a flushed coder
//! does not normalize.

use std::fmt::Write as _;

use rust_hdl::prelude::*;
use streamtrace_model::format::SYNC_MARKER;
use streamtrace_model::pft::coder::{PENDING_MAX, PROB_BITS, PROB_INIT, RAW_MAX_BITS, STUFF_BYTE, ZERO_RUN_LIMIT};
use streamtrace_model::pft::{CoderOp, PftCoder};

use crate::mem::{FlagArray, TableRam, ADDR_BITS};

use super::{PftHwConfig, OP_BIT, OP_FLUSH, OP_MARKER, OP_RAW, OP_SLOT};

/// Shifts of a flush.
const FLUSH_SHIFTS: u64 = 5;
/// Width of the shared multiplier's second operand: the raw field's 16 value bits (the
/// probability has 14).
const MUL_B_BITS: usize = RAW_MAX_BITS as usize;

// `p_use` is PROB_BITS wide (14); the marker counter counts 16 bytes in 5 bits.
const _: () = assert!(MUL_B_BITS == 16 && PROB_BITS == 14 && SYNC_MARKER.len() == 16);
const _: () = assert!(ZERO_RUN_LIMIT == 14 && PENDING_MAX == 4);

#[derive(LogicBlock)]
pub struct PftRangeCoder {
    pub clock: Signal<In, Clock>,
    /// Synchronous: afterwards a new coder (and every probability 1/2).
    pub reset: Signal<In, Bit>,
    /// The coder may take a step this cycle (the record register is empty at start of cycle).
    pub step: Signal<In, Bit>,
    /// Perform one operation this cycle (only with `step` high and `busy` low).
    pub op_valid: Signal<In, Bit>,
    /// `OP_SLOT`, `OP_BIT`, `OP_RAW`, `OP_FLUSH` or `OP_MARKER`.
    pub op_kind: Signal<In, Bits<3>>,
    /// Slot: take the escape branch.
    pub op_escape: Signal<In, Bit>,
    /// The decision: hit (the likely outcome, bottom of the range) or miss.
    pub op_hit: Signal<In, Bit>,
    /// Slot without a context (virtual slot): probability 1/2, no adaptation.
    pub op_fixed: Signal<In, Bit>,
    pub op_ctx: Signal<In, Bits<8>>,
    /// Raw field value (the low `op_bits` bits count) and width 1..=16.
    pub op_value: Signal<In, Bits<16>>,
    pub op_bits: Signal<In, Bits<8>>,
    /// The next step is a byte or a shift, not an operation (from registers only).
    pub busy: Signal<Out, Bit>,
    /// A byte leaves the coder this cycle: `out_byte`.
    pub out_valid: Signal<Out, Bit>,
    pub out_byte: Signal<Out, Bits<8>>,

    // Coder state: low (32 bits and the carry bit 32), range, cached byte, pending count
    // (1..=4), first-byte flag, zero-run count, probabilities.
    low: DFF<Bits<32>>,
    low_carry: DFF<Bit>,
    rng: DFF<Bits<32>>,
    cache: DFF<Bits<8>>,
    pend: DFF<Bits<3>>,
    first_byte: DFF<Bit>,
    zeros: DFF<Bits<4>>,
    /// The context probabilities in a table RAM (one read and one write per operation, the
    /// same context), with a valid flag per context so that a marker or reset sets every
    /// probability to 1/2 in one cycle: an invalid entry reads as 1/2.
    prob_ram: TableRam,
    prob_valid: FlagArray,
    /// Shifts of a flush still to do; set once a flush started (no normalization after it).
    flush_left: DFF<Bits<3>>,
    flushed: DFF<Bit>,
    /// The bytes to emit: the released cached byte (`q_b0v`), `q_nff` pending bytes
    /// (0x00 with `q_carry`, else 0xFF), a stuffing byte first when `q_stuff`, and the
    /// marker's bytes still to send (`marker_left`, 16..=1, 0 for none).
    q_b0v: DFF<Bit>,
    q_b0: DFF<Bits<8>>,
    q_nff: DFF<Bits<3>>,
    q_carry: DFF<Bit>,
    q_stuff: DFF<Bit>,
    marker_left: DFF<Bits<5>>,

    // Which step.
    norm: Signal<Local, Bit>,
    emitting: Signal<Local, Bit>,
    shifting: Signal<Local, Bit>,
    busy_int: Signal<Local, Bit>,
    do_emit: Signal<Local, Bit>,
    do_shift: Signal<Local, Bit>,
    /// This cycle's step is an operation (`op_valid` says which); a marker restarts the coder
    /// (with `reset`), a decision writes its probability back.
    op_step: Signal<Local, Bit>,
    restart: Signal<Local, Bit>,
    prob_we: Signal<Local, Bit>,
    // Operation decode.
    /// The operation's kind alone, for the arithmetic's selects (they need not wait for
    /// `op_valid`, which depends on the step logic: only the writes do).
    kind_slot: Signal<Local, Bit>,
    kind_bit: Signal<Local, Bit>,
    kind_raw: Signal<Local, Bit>,
    /// The operation performed this cycle is of that kind (for the writes).
    is_slot: Signal<Local, Bit>,
    is_bit: Signal<Local, Bit>,
    is_raw: Signal<Local, Bit>,
    is_flush: Signal<Local, Bit>,
    is_marker: Signal<Local, Bit>,
    upd_prob: Signal<Local, Bit>,
    // The operation's arithmetic.
    e_part: Signal<Local, Bits<32>>,
    rest: Signal<Local, Bits<32>>,
    rb: Signal<Local, Bits<32>>,
    rb_hi: Signal<Local, Bits<32>>,
    ctx_addr: Signal<Local, Bits<ADDR_BITS>>,
    /// Bits above a probability (Verilator's lint skips `unused_` names).
    unused_prob: Signal<Local, Bits<16>>,
    p_ctx: Signal<Local, Bits<16>>,
    p_use: Signal<Local, Bits<14>>,
    mul_a: Signal<Local, Bits<32>>,
    mul_b: Signal<Local, Bits<16>>,
    mul_lo: Signal<Local, Bits<32>>,
    mul_hi: Signal<Local, Bits<32>>,
    mul: Signal<Local, Bits<32>>,
    diff: Signal<Local, Bits<32>>,
    raw_r: Signal<Local, Bits<32>>,
    ones_sh: Signal<Local, Bits<16>>,
    vmask: Signal<Local, Bits<16>>,
    v_masked: Signal<Local, Bits<16>>,
    add: Signal<Local, Bits<32>>,
    op_rng: Signal<Local, Bits<32>>,
    op_low: Signal<Local, Bits<32>>,
    /// `low + add` with its carry out in bit 32 (the carry into `low_carry`).
    op_low33: Signal<Local, Bits<33>>,
    // Probability update.
    p_dec: Signal<Local, Bits<16>>,
    p_hit_new: Signal<Local, Bits<16>>,
    p_room: Signal<Local, Bits<16>>,
    p_inc: Signal<Local, Bits<16>>,
    p_miss_new: Signal<Local, Bits<16>>,
    p_new: Signal<Local, Bits<16>>,
    // The shift.
    sh_top: Signal<Local, Bits<8>>,
    sh_rel: Signal<Local, Bit>,
    sh_trunc: Signal<Local, Bit>,
    sh_room: Signal<Local, Bits<32>>,
    sh_rt: Signal<Local, Bits<32>>,
    // The emitted byte.
    em_byte: Signal<Local, Bits<8>>,
    /// The emitted byte counts in the zero run (not stuffing, not the marker).
    em_coded: Signal<Local, Bit>,
    marker_pos: Signal<Local, Bits<5>>,
    marker_idx: Signal<Local, Bits<8>>,
    /// The marker shifted to the byte to send, of which only the low byte is read (the
    /// `unused` in its name tells Verilator's lint, default `--unused-regexp`).
    marker_wide_unused: Signal<Local, Bits<128>>,

    k_op_slot: Constant<Bits<3>>,
    k_op_bit: Constant<Bits<3>>,
    k_op_raw: Constant<Bits<3>>,
    k_op_flush: Constant<Bits<3>>,
    k_op_marker: Constant<Bits<3>>,
    k_zero3: Constant<Bits<3>>,
    k_one3: Constant<Bits<3>>,
    k_four3: Constant<Bits<3>>,
    k_flush3: Constant<Bits<3>>,
    k_zero4: Constant<Bits<4>>,
    k_one4: Constant<Bits<4>>,
    k_run_last4: Constant<Bits<4>>,
    k_zero5: Constant<Bits<5>>,
    k_one5: Constant<Bits<5>>,
    k_marker5: Constant<Bits<5>>,
    k_zero8: Constant<Bits<8>>,
    k_one8: Constant<Bits<8>>,
    k_three8: Constant<Bits<8>>,
    k_eight8: Constant<Bits<8>>,
    k_prob_bits8: Constant<Bits<8>>,
    k_sixteen8: Constant<Bits<8>>,
    k_ff8: Constant<Bits<8>>,
    k_rate8: Constant<Bits<8>>,
    k_stuff8: Constant<Bits<8>>,
    k_prob_init: Constant<Bits<16>>,
    k_prob_init14: Constant<Bits<14>>,
    k_ones16: Constant<Bits<16>>,
    k_prob_one: Constant<Bits<16>>,
    k_prob_mask: Constant<Bits<16>>,
    k_zero32: Constant<Bits<32>>,
    k_one32: Constant<Bits<32>>,
    k_top32: Constant<Bits<32>>,
    k_mask24: Constant<Bits<32>>,
    k_range_init: Constant<Bits<32>>,
    /// The marker, its first byte in bits 7:0 (byte i at 8i).
    k_marker: Constant<Bits<128>>,
}

fn c<const N: usize>(v: u64) -> Constant<Bits<N>> {
    Constant::new(v.into())
}

impl PftRangeCoder {
    pub fn new(h: &PftHwConfig) -> PftRangeCoder {
        assert!((1..=256).contains(&h.contexts), "op_ctx addresses at most 256 contexts");
        assert!((1..=8).contains(&h.params.rate), "rate {} outside 1..=8", h.params.rate);
        // Byte i of the marker at bits 8i..8i+7, so the byte to send is the word shifted
        // right by 8 x (its index).
        let mut marker: Bits<128> = Default::default();
        for (i, &b) in SYNC_MARKER.iter().enumerate() {
            for k in 0..8 {
                marker = marker.replace_bit(8 * i + k, (b >> k) & 1 != 0);
            }
        }
        PftRangeCoder {
            clock: Default::default(),
            reset: Default::default(),
            step: Default::default(),
            op_valid: Default::default(),
            op_kind: Default::default(),
            op_escape: Default::default(),
            op_hit: Default::default(),
            op_fixed: Default::default(),
            op_ctx: Default::default(),
            op_value: Default::default(),
            op_bits: Default::default(),
            busy: Default::default(),
            out_valid: Default::default(),
            out_byte: Default::default(),
            low: Default::default(),
            low_carry: Default::default(),
            rng: Default::default(),
            cache: Default::default(),
            pend: Default::default(),
            first_byte: Default::default(),
            zeros: Default::default(),
            prob_ram: TableRam::new(h.contexts, PROB_BITS as usize),
            prob_valid: FlagArray::decoded(h.contexts.next_power_of_two(), 1),
            flush_left: Default::default(),
            flushed: Default::default(),
            q_b0v: Default::default(),
            q_b0: Default::default(),
            q_nff: Default::default(),
            q_carry: Default::default(),
            q_stuff: Default::default(),
            marker_left: Default::default(),
            norm: Default::default(),
            emitting: Default::default(),
            shifting: Default::default(),
            busy_int: Default::default(),
            do_emit: Default::default(),
            do_shift: Default::default(),
            op_step: Default::default(),
            restart: Default::default(),
            prob_we: Default::default(),
            kind_slot: Default::default(),
            kind_bit: Default::default(),
            kind_raw: Default::default(),
            is_slot: Default::default(),
            is_bit: Default::default(),
            is_raw: Default::default(),
            is_flush: Default::default(),
            is_marker: Default::default(),
            upd_prob: Default::default(),
            e_part: Default::default(),
            rest: Default::default(),
            rb: Default::default(),
            rb_hi: Default::default(),
            ctx_addr: Default::default(),
            unused_prob: Default::default(),
            p_ctx: Default::default(),
            p_use: Default::default(),
            mul_a: Default::default(),
            mul_b: Default::default(),
            mul_lo: Default::default(),
            mul_hi: Default::default(),
            mul: Default::default(),
            diff: Default::default(),
            raw_r: Default::default(),
            ones_sh: Default::default(),
            vmask: Default::default(),
            v_masked: Default::default(),
            add: Default::default(),
            op_rng: Default::default(),
            op_low: Default::default(),
            op_low33: Default::default(),
            p_dec: Default::default(),
            p_hit_new: Default::default(),
            p_room: Default::default(),
            p_inc: Default::default(),
            p_miss_new: Default::default(),
            p_new: Default::default(),
            sh_top: Default::default(),
            sh_rel: Default::default(),
            sh_trunc: Default::default(),
            sh_room: Default::default(),
            sh_rt: Default::default(),
            em_byte: Default::default(),
            em_coded: Default::default(),
            marker_pos: Default::default(),
            marker_idx: Default::default(),
            marker_wide_unused: Default::default(),
            k_op_slot: c(OP_SLOT),
            k_op_bit: c(OP_BIT),
            k_op_raw: c(OP_RAW),
            k_op_flush: c(OP_FLUSH),
            k_op_marker: c(OP_MARKER),
            k_zero3: c(0),
            k_one3: c(1),
            k_four3: c(PENDING_MAX as u64),
            k_flush3: c(FLUSH_SHIFTS),
            k_zero4: c(0),
            k_one4: c(1),
            k_run_last4: c(ZERO_RUN_LIMIT as u64 - 1),
            k_zero5: c(0),
            k_one5: c(1),
            k_marker5: c(SYNC_MARKER.len() as u64),
            k_zero8: c(0),
            k_one8: c(1),
            k_three8: c(3),
            k_eight8: c(8),
            k_prob_bits8: c(PROB_BITS as u64),
            k_sixteen8: c(16),
            k_ff8: c(0xFF),
            k_rate8: c(h.params.rate as u64),
            k_stuff8: c(STUFF_BYTE as u64),
            k_prob_init: c(PROB_INIT as u64),
            k_prob_init14: c(PROB_INIT as u64),
            k_ones16: c(0xFFFF),
            k_prob_one: c(1 << PROB_BITS),
            k_prob_mask: c((1 << PROB_BITS) - 1),
            k_zero32: c(0),
            k_one32: c(1),
            k_top32: c(1 << 24),
            k_mask24: c(0xFF_FFFF),
            k_range_init: c(0xFFFF_FFFF),
            k_marker: Constant::new(marker),
        }
    }
}

impl Logic for PftRangeCoder {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, low, low_carry, rng, cache, pend, first_byte, zeros, flush_left, flushed, q_b0v, q_b0, q_nff,
            q_carry, q_stuff, marker_left
        );

        // Which step: a byte to emit first, then a shift, else an operation.
        self.norm.next = !self.flushed.q.val() & (self.rng.q.val() < self.k_top32.val());
        self.emitting.next = ((self.q_stuff.q.val() | self.q_b0v.q.val()) | (self.q_nff.q.val() != self.k_zero3.val()))
            | (self.marker_left.q.val() != self.k_zero5.val());
        self.shifting.next = self.norm.val() | (self.flush_left.q.val() != self.k_zero3.val());
        self.busy_int.next = self.emitting.val() | self.shifting.val();
        self.busy.next = self.busy_int.val();
        self.do_emit.next = self.step.val() & self.emitting.val();
        self.do_shift.next = (self.step.val() & !self.emitting.val()) & self.shifting.val();
        self.op_step.next = self.step.val() & !self.busy_int.val();

        // Operation decode.
        self.kind_slot.next = self.op_kind.val() == self.k_op_slot.val();
        self.kind_bit.next = self.op_kind.val() == self.k_op_bit.val();
        self.kind_raw.next = self.op_kind.val() == self.k_op_raw.val();
        self.is_slot.next = self.op_valid.val() & self.kind_slot.val();
        self.is_bit.next = self.op_valid.val() & self.kind_bit.val();
        self.is_raw.next = self.op_valid.val() & self.kind_raw.val();
        self.is_flush.next = self.op_valid.val() & (self.op_kind.val() == self.k_op_flush.val());
        self.is_marker.next = self.op_valid.val() & (self.op_kind.val() == self.k_op_marker.val());

        // Slot: e = range >> 16; without an escape the decision splits range - e.
        self.e_part.next = self.rng.q.val() >> self.k_sixteen8.val();
        self.rest.next = self.rng.q.val() - self.e_part.val();
        self.rb.next = self.rng.q.val();
        if self.kind_slot.val() {
            self.rb.next = self.rest.val();
        }
        self.rb_hi.next = self.rb.val() >> self.k_prob_bits8.val();

        // The context's probability (a fixed slot: 1/2).
        self.ctx_addr.next = bit_cast::<ADDR_BITS, 8>(self.op_ctx.val());
        self.prob_ram.clock.next = self.clock.val();
        self.prob_valid.clock.next = self.clock.val();
        self.prob_ram.raddr.next = self.ctx_addr.val();
        self.prob_ram.waddr.next = self.ctx_addr.val();
        self.prob_valid.raddr.next = self.ctx_addr.val();
        self.prob_valid.waddr.next = self.ctx_addr.val();
        self.unused_prob.next = self.prob_ram.rdata.val().get_bits::<16>(16);
        self.p_ctx.next = self.k_prob_init.val();
        if self.prob_valid.rdata.val() != self.k_zero32.val() {
            self.p_ctx.next = self.prob_ram.rdata.val().get_bits::<16>(0);
        }
        self.p_use.next = bit_cast::<14, 16>(self.p_ctx.val());
        if self.kind_slot.val() & self.op_fixed.val() {
            self.p_use.next = self.k_prob_init14.val();
        }

        // Raw field: r = range >> n, v * r over the 16 bits of v (v < 2^n, so v * r < 2^32).
        self.raw_r.next = self.rng.q.val() >> self.op_bits.val();
        self.ones_sh.next = self.k_ones16.val() << self.op_bits.val();
        self.vmask.next = !self.ones_sh.val();
        self.v_masked.next = self.op_value.val() & self.vmask.val();

        // One multiplier for both products, as no operation needs both: bound = (rb >> 14)
        // * p for a decision, v * r for a raw field; each fits in 32 bits. a * b mod 2^32 =
        // a[15:0] * b + ((a[31:16] * b) << 16).
        self.mul_a.next = self.rb_hi.val();
        self.mul_b.next = bit_cast::<16, 14>(self.p_use.val());
        if self.kind_raw.val() {
            self.mul_a.next = self.raw_r.val();
            self.mul_b.next = self.v_masked.val();
        }
        self.mul_lo.next = self.mul_a.val().get_bits::<16>(0) * self.mul_b.val();
        self.mul_hi.next = self.mul_a.val().get_bits::<16>(16) * self.mul_b.val();
        self.mul.next = self.mul_lo.val() + (self.mul_hi.val() << self.k_sixteen8.val());
        self.diff.next = self.rb.val() - self.mul.val();

        // The operation: what low gains and the new range (no normalization).
        self.add.next = self.k_zero32.val();
        self.op_rng.next = self.rng.q.val();
        if self.kind_slot.val() & self.op_escape.val() {
            self.add.next = self.rest.val();
            self.op_rng.next = self.e_part.val();
        } else if self.kind_slot.val() | self.kind_bit.val() {
            self.op_rng.next = self.diff.val();
            if !self.op_hit.val() {
                self.add.next = self.diff.val();
                self.op_rng.next = self.mul.val();
            }
        } else if self.kind_raw.val() {
            self.add.next = self.mul.val();
            self.op_rng.next = self.raw_r.val();
        }
        // low + range < 2^33 always, so the 32-bit sum wraps at most once.
        self.op_low33.next = bit_cast::<33, 32>(self.low.q.val()) + bit_cast::<33, 32>(self.add.val());
        self.op_low.next = self.op_low33.val().get_bits::<32>(0);

        // Probability update (a slot's escape and a fixed slot adapt nothing).
        self.upd_prob.next = self.is_bit.val() | ((self.is_slot.val() & !self.op_escape.val()) & !self.op_fixed.val());
        self.p_dec.next = self.p_ctx.val() >> self.k_rate8.val();
        self.p_hit_new.next = self.p_ctx.val() - self.p_dec.val();
        self.p_room.next = self.k_prob_one.val() - self.p_ctx.val();
        self.p_inc.next = self.p_room.val() >> self.k_rate8.val();
        self.p_miss_new.next = self.p_ctx.val() + self.p_inc.val();
        // p stays within 1..=16383: the mask changes nothing but says the upper 2 bits are 0.
        self.p_new.next = self.p_miss_new.val() & self.k_prob_mask.val();
        if self.op_hit.val() {
            self.p_new.next = self.p_hit_new.val() & self.k_prob_mask.val();
        }

        // The shift (trace-format.md 11.6): release the cached byte and the pending bytes
        // when low is below 0xFF000000 or carried, or at the pending limit (truncating the
        // range to 2^32 - low, low != 0 there, so no carry can come); else one more pending.
        self.sh_top.next = self.low.q.val().get_bits::<8>(24);
        self.sh_rel.next = ((self.sh_top.val() != self.k_ff8.val()) | self.low_carry.q.val())
            | (self.pend.q.val() == self.k_four3.val());
        self.sh_trunc.next = ((self.sh_top.val() == self.k_ff8.val()) & !self.low_carry.q.val())
            & (self.pend.q.val() == self.k_four3.val());
        self.sh_room.next = self.k_zero32.val() - self.low.q.val();
        self.sh_rt.next = self.rng.q.val();
        if self.sh_trunc.val() & (self.sh_room.val() < self.rng.q.val()) {
            self.sh_rt.next = self.sh_room.val();
        }

        // The byte to emit: stuffing first, then the cached byte, the pending bytes; the
        // marker's bytes alone.
        self.marker_pos.next = self.k_marker5.val() - self.marker_left.q.val();
        self.marker_idx.next = bit_cast::<8, 5>(self.marker_pos.val()) << self.k_three8.val();
        self.marker_wide_unused.next = self.k_marker.val() >> self.marker_idx.val();
        self.em_coded.next = false;
        if self.marker_left.q.val() != self.k_zero5.val() {
            self.em_byte.next = self.marker_wide_unused.val().get_bits::<8>(0);
        } else if self.q_stuff.q.val() {
            self.em_byte.next = self.k_stuff8.val();
        } else if self.q_b0v.q.val() {
            self.em_byte.next = self.q_b0.q.val();
            self.em_coded.next = true;
        } else if self.q_carry.q.val() {
            self.em_byte.next = self.k_zero8.val();
            self.em_coded.next = true;
        } else {
            self.em_byte.next = self.k_ff8.val();
            self.em_coded.next = true;
        }
        // (Each output written once per evaluation: no glitch for an event-driven simulator.)
        if self.do_emit.val() {
            self.out_valid.next = true;
            self.out_byte.next = self.em_byte.val();
        } else {
            self.out_valid.next = false;
            self.out_byte.next = self.k_zero8.val();
        }

        // State at the clock edge.
        if self.do_emit.val() {
            if self.marker_left.q.val() != self.k_zero5.val() {
                self.marker_left.d.next = self.marker_left.q.val() - self.k_one5.val();
            } else if self.q_stuff.q.val() {
                self.q_stuff.d.next = false;
            } else if self.q_b0v.q.val() {
                self.q_b0v.d.next = false;
            } else {
                self.q_nff.d.next = self.q_nff.q.val() - self.k_one3.val();
            }
            if self.em_coded.val() {
                self.zeros.d.next = self.k_zero4.val();
                if self.em_byte.val() == self.k_zero8.val() {
                    self.zeros.d.next = self.zeros.q.val() + self.k_one4.val();
                    if self.zeros.q.val() == self.k_run_last4.val() {
                        self.zeros.d.next = self.k_zero4.val();
                        self.q_stuff.d.next = true;
                    }
                }
            }
        } else if self.do_shift.val() {
            self.low.d.next = (self.low.q.val() & self.k_mask24.val()) << self.k_eight8.val();
            self.low_carry.d.next = false;
            if self.flush_left.q.val() != self.k_zero3.val() {
                self.flush_left.d.next = self.flush_left.q.val() - self.k_one3.val();
                self.rng.d.next = self.sh_rt.val();
            } else {
                self.rng.d.next = self.sh_rt.val() << self.k_eight8.val();
            }
            if self.sh_rel.val() {
                self.q_b0v.d.next = !self.first_byte.q.val();
                self.first_byte.d.next = false;
                self.q_b0.d.next = self.cache.q.val();
                if self.low_carry.q.val() {
                    self.q_b0.d.next = self.cache.q.val() + self.k_one8.val();
                }
                self.q_nff.d.next = self.pend.q.val() - self.k_one3.val();
                self.q_carry.d.next = self.low_carry.q.val();
                self.cache.d.next = self.sh_top.val();
                self.pend.d.next = self.k_one3.val();
            } else {
                self.pend.d.next = self.pend.q.val() + self.k_one3.val();
            }
        } else if self.op_step.val() & ((self.is_slot.val() | self.is_bit.val()) | self.is_raw.val()) {
            self.low.d.next = self.op_low.val();
            self.low_carry.d.next = self.low_carry.q.val() | self.op_low33.val().get_bit(32);
            self.rng.d.next = self.op_rng.val();
        } else if self.op_step.val() & self.is_flush.val() {
            self.flush_left.d.next = self.k_flush3.val();
            self.flushed.d.next = true;
        }
        // The probability written back; a marker or reset clears every valid flag (the
        // clear wins over the write).
        self.prob_we.next = self.op_step.val() & self.upd_prob.val();
        self.restart.next = self.reset.val() | (self.op_step.val() & self.is_marker.val());
        self.prob_ram.we.next = self.prob_we.val();
        self.prob_ram.wdata.next = bit_cast::<32, 16>(self.p_new.val());
        self.prob_valid.we.next = self.prob_we.val();
        self.prob_valid.wdata.next = self.k_one32.val();
        self.prob_valid.clear.next = self.restart.val();
        if self.restart.val() {
            self.low.d.next = self.k_zero32.val();
            self.low_carry.d.next = false;
            self.rng.d.next = self.k_range_init.val();
            self.cache.d.next = self.k_zero8.val();
            self.pend.d.next = self.k_one3.val();
            self.first_byte.d.next = true;
            self.zeros.d.next = self.k_zero4.val();
            self.flush_left.d.next = self.k_zero3.val();
            self.flushed.d.next = false;
            self.q_b0v.d.next = false;
            self.q_nff.d.next = self.k_zero3.val();
            self.q_stuff.d.next = false;
            self.marker_left.d.next = self.k_zero5.val();
        }
        if !self.reset.val() & (self.op_step.val() & self.is_marker.val()) {
            self.marker_left.d.next = self.k_marker5.val();
        }
    }
}

// ---------------------------------------------------------------------------------------
// Stimulus, the model's bytes and the RustHDL simulation, for the tests.

/// One cycle of stimulus for the coder block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoderStim {
    /// `reset` high, no operation.
    Reset,
    /// `step` high, no operation (`op_valid` low): the coder takes a step if it is busy.
    Idle,
    /// `step` low: the record register holds a byte back, the coder waits.
    Hold,
    /// One operation (`step` high; only when the coder is not busy).
    Op(CoderOp),
}

/// The block's input pins for one cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CoderPins {
    pub reset: bool,
    pub step: bool,
    pub valid: bool,
    pub kind: u64,
    pub escape: bool,
    pub hit: bool,
    pub fixed: bool,
    pub ctx: u64,
    pub value: u64,
    pub bits: u64,
}

impl CoderStim {
    pub fn pins(&self) -> CoderPins {
        let op = |kind: u64| CoderPins { step: true, valid: true, kind, ..Default::default() };
        match *self {
            CoderStim::Reset => CoderPins { reset: true, ..Default::default() },
            CoderStim::Idle => CoderPins { step: true, ..Default::default() },
            CoderStim::Hold => CoderPins::default(),
            CoderStim::Op(CoderOp::Slot { escape, hit, ctx, .. }) => {
                CoderPins { escape, hit, fixed: ctx.is_none(), ctx: ctx.unwrap_or(0) as u64, ..op(OP_SLOT) }
            }
            CoderStim::Op(CoderOp::Bit { hit, ctx, .. }) => CoderPins { hit, ctx: ctx as u64, ..op(OP_BIT) },
            CoderStim::Op(CoderOp::Raw { value, bits, .. }) => {
                CoderPins { value: (value & 0xFFFF) as u64, bits: bits as u64, ..op(OP_RAW) }
            }
            CoderStim::Op(CoderOp::Flush) => op(OP_FLUSH),
            CoderStim::Op(CoderOp::Marker) => op(OP_MARKER),
        }
    }
}

/// One cycle of the block's stimulus and what the model says it shows: `busy` at start of
/// cycle (not checked in a reset cycle) and the byte it emits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoderCycle {
    pub stim: CoderStim,
    pub busy: bool,
    pub byte: Option<u8>,
}

/// Expand a sequence of operations (with resets and idle cycles between them) into the
/// block's cycles: after each operation, the further steps the model's
/// `PftCoder::run_op_steps` gives, each an `Idle` cycle that emits its byte or shifts, with
/// a `Hold` cycle before a step one time in `hold_den` (0: never). The coder must be reset
/// before its first operation, as the block must.
pub fn schedule(h: &PftHwConfig, stims: &[CoderStim], seed: u64, hold_den: u32) -> Vec<CoderCycle> {
    let mut coder = PftCoder::new(&h.params);
    let mut g = Lcg(seed);
    let mut steps = std::collections::VecDeque::new();
    let mut out = Vec::with_capacity(stims.len() * 2);
    let idle = |stim| CoderCycle { stim, busy: false, byte: None };
    for &st in stims {
        match st {
            CoderStim::Reset => {
                coder = PftCoder::new(&h.params);
                out.push(idle(st));
            }
            CoderStim::Idle | CoderStim::Hold => out.push(idle(st)),
            CoderStim::Op(op) => {
                out.push(idle(st));
                let before = coder.out.len();
                coder.run_op_steps(op, &mut steps);
                let mut bytes = coder.out[before..].iter().copied();
                for emit in steps.drain(..) {
                    if hold_den > 0 && g.chance(1, hold_den) {
                        out.push(CoderCycle { stim: CoderStim::Hold, busy: true, byte: None });
                    }
                    let byte = if emit { Some(bytes.next().expect("a byte for every emitting step")) } else { None };
                    out.push(CoderCycle { stim: CoderStim::Idle, busy: true, byte });
                }
                assert!(bytes.next().is_none(), "every byte has its step");
            }
        }
    }
    out
}

/// A small deterministic generator for the random operation sequences.
#[derive(Clone, Debug)]
pub struct Lcg(pub u64);

impl Lcg {
    pub fn next_u32(&mut self) -> u32 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) as u32
    }
    pub fn below(&mut self, n: u32) -> u32 {
        self.next_u32() % n
    }
    /// True with probability `num / den`.
    pub fn chance(&mut self, num: u32, den: u32) -> bool {
        self.below(den) < num
    }
}

/// A random operation sequence of `n` cycles for `h`, in phases that stress different
/// parts of the coder: skewed decisions as in real traces (hits, rare escapes, virtual
/// slots), all-ones raw fields (0xFF bytes: the pending count reaches its limit), zero raw
/// fields (zero runs: stuffing), uniform choices, and miss-heavy decisions. Phases end now
/// and then with a flush and the marker; a few idle cycles and one reset in the middle.
pub fn random_stims(h: &PftHwConfig, seed: u64, n: usize) -> Vec<CoderStim> {
    use streamtrace_model::pft::Info;
    let info = Info::Address;
    let mut g = Lcg(seed);
    let ctxs = h.contexts as u32;
    let mut v = vec![CoderStim::Reset];
    let reset_at = n / 2 + g.below(n as u32 / 4 + 1) as usize;
    let mut reset_done = false;
    while v.len() < n {
        let mode = g.below(6);
        let len = 32 + g.below(224) as usize;
        for _ in 0..len {
            if g.chance(1, 40) {
                v.push(CoderStim::Idle);
                continue;
            }
            let ctx = g.below(ctxs) as u16;
            let width = 1 + g.below(16) as u8;
            let junk = g.next_u32() << 16;
            let op = match mode {
                // Skewed: mostly hits, escapes 1 in 60 slots, virtual slots 1 in 20.
                0 => match g.below(20) {
                    0..=5 => CoderOp::Slot {
                        escape: g.chance(1, 60),
                        hit: !g.chance(1, 12),
                        ctx: if g.chance(1, 20) { None } else { Some(ctx) },
                        info,
                    },
                    6..=14 => CoderOp::Bit { hit: !g.chance(1, 9), ctx, info },
                    _ => CoderOp::Raw { value: g.next_u32() & 0xFFFF | junk, bits: width, info },
                },
                // All-ones raw fields, with hits in between (they leave low alone).
                1 => match g.below(8) {
                    0 => CoderOp::Bit { hit: true, ctx, info },
                    1 => CoderOp::Slot { escape: false, hit: true, ctx: Some(ctx), info },
                    2 => CoderOp::Raw { value: 0xFFFF, bits: width, info },
                    _ => CoderOp::Raw { value: 0xFFFF, bits: 16, info },
                },
                // Zero raw fields: zero bytes, stuffing.
                2 => match g.below(6) {
                    0 => CoderOp::Bit { hit: true, ctx, info },
                    1 => CoderOp::Raw { value: junk, bits: width, info },
                    _ => CoderOp::Raw { value: 0, bits: 16, info },
                },
                // Uniform.
                3 => match g.below(3) {
                    0 => CoderOp::Slot {
                        escape: g.chance(1, 4),
                        hit: g.chance(1, 2),
                        ctx: if g.chance(1, 4) { None } else { Some(ctx) },
                        info,
                    },
                    1 => CoderOp::Bit { hit: g.chance(1, 2), ctx, info },
                    _ => CoderOp::Raw { value: g.next_u32(), bits: width, info },
                },
                // All-ones raw fields and raw fields of any value: the interval often
                // straddles 2^32 while bytes are pending, so the pending limit cuts the range.
                4 => match g.below(10) {
                    0..=5 => CoderOp::Raw { value: 0xFFFF, bits: 16, info },
                    6 => CoderOp::Bit { hit: g.chance(1, 2), ctx, info },
                    _ => CoderOp::Raw { value: g.next_u32(), bits: width, info },
                },
                // Misses on a few contexts (their probabilities climb towards 4095).
                _ => match g.below(4) {
                    0 => CoderOp::Slot { escape: false, hit: g.chance(1, 10), ctx: Some(ctx % 3), info },
                    _ => CoderOp::Bit { hit: g.chance(1, 10), ctx: ctx % 3, info },
                },
            };
            v.push(CoderStim::Op(op));
        }
        if g.chance(1, 4) {
            v.push(CoderStim::Op(CoderOp::Flush));
            v.push(CoderStim::Op(CoderOp::Marker));
        }
        if !reset_done && v.len() >= reset_at {
            v.push(CoderStim::Reset);
            reset_done = true;
        }
    }
    v.truncate(n);
    // A flush is always followed by the marker (a flushed coder codes nothing more).
    if let Some(CoderStim::Op(CoderOp::Flush)) = v.last() {
        v.push(CoderStim::Op(CoderOp::Marker));
    }
    v
}

/// Delta passes allowed for the block to settle in the RustHDL simulation (the multiplier's
/// chain is the longest).
pub const SETTLE_ITERS: usize = 2000;

/// What one cycle of the RustHDL simulation showed on the outputs and inside the block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoderSeen {
    pub busy: bool,
    pub byte: Option<u8>,
    /// A shift this cycle.
    pub shifted: bool,
    /// The shift hit the pending limit; and the truncation cut the range (2^32 - low < range).
    pub truncated: bool,
    pub cut: bool,
    /// The shift released bytes that took a carry.
    pub carried: bool,
}

/// Direct-drive RustHDL simulation of the block (set inputs, settle, sample, clock).
pub struct CoderSim {
    uut: PftRangeCoder,
}

impl CoderSim {
    pub fn new(h: &PftHwConfig) -> Result<CoderSim, String> {
        let mut uut = PftRangeCoder::new(h);
        uut.connect_all();
        check_all(&uut).map_err(|e| format!("rust-hdl design check failed: {e:?}"))?;
        Ok(CoderSim { uut })
    }

    fn settle(&mut self) -> Result<(), String> {
        if simulate(&mut self.uut, SETTLE_ITERS) {
            Ok(())
        } else {
            Err("the design did not settle".into())
        }
    }

    /// One cycle: apply the stimulus, sample the outputs, clock.
    pub fn step(&mut self, st: &CoderStim) -> Result<CoderSeen, String> {
        let p = st.pins();
        let u = &mut self.uut;
        u.reset.next = p.reset;
        u.step.next = p.step;
        u.op_valid.next = p.valid;
        u.op_kind.next = p.kind.into();
        u.op_escape.next = p.escape;
        u.op_hit.next = p.hit;
        u.op_fixed.next = p.fixed;
        u.op_ctx.next = p.ctx.into();
        u.op_value.next = p.value.into();
        u.op_bits.next = p.bits.into();
        self.settle()?;
        let u = &self.uut;
        let shifted = u.do_shift.val();
        let seen = CoderSeen {
            busy: u.busy.val(),
            byte: u.out_valid.val().then(|| u.out_byte.val().to_u64() as u8),
            shifted,
            truncated: shifted && u.sh_trunc.val(),
            cut: shifted && u.sh_trunc.val() && u.sh_room.val() < u.rng.q.val(),
            carried: shifted && u.sh_rel.val() && u.low_carry.q.val(),
        };
        self.uut.clock.next = Clock::from(true);
        self.settle()?;
        self.uut.clock.next = Clock::from(false);
        self.settle()?;
        Ok(seen)
    }
}

/// The point a raw field should keep inside the interval `[low, low + rng)` so that the
/// pending bytes stay undecided: 2^32 while the interval straddles it, else the highest
/// multiple of 2^24 (then of 2^16) inside it, which the next shifts move to 2^32.
fn straddle_point(low: u64, rng: u64) -> Option<u64> {
    let top = low + rng;
    if low < 1 << 32 && top > 1 << 32 {
        return Some(1 << 32);
    }
    [24u32, 16].iter().find_map(|&k| {
        let m = (top - 1) >> k << k;
        (m > low).then_some(m)
    })
}

/// A sequence of `n` operations (after a reset) that drives the coder into the pending
/// limit with a range worth cutting: raw fields chosen from the coder's state (the model's,
/// which the block's equals after each operation's steps) keep the interval across the
/// point where a carry would come, so pending bytes pile up to the limit and the truncation
/// cuts the range, down to a few units when low lies just below 2^32. One operation in six
/// is random, so straddles resolve both ways (carry or not); a flush and the marker every
/// 2000 operations.
pub fn straddling_stims(h: &PftHwConfig, seed: u64, n: usize) -> Vec<CoderStim> {
    use streamtrace_model::pft::Info;
    let info = Info::Address;
    let mut g = Lcg(seed);
    let mut model = PftCoder::new(&h.params);
    let mut v = vec![CoderStim::Reset];
    let ctxs = h.contexts as u32;
    for i in 0..n {
        let (low, rng, pend) = model.coder_state();
        let rng = rng as u64;
        let mut op = None;
        if !g.chance(1, 6) {
            if let Some(t) = straddle_point(low, rng) {
                // Widths whose sub-interval [low + v r, low + (v + 1) r) holds t inside.
                let mut fits: Vec<(u8, u64, u64)> = Vec::new();
                for bits in 1..=16u8 {
                    let r = rng >> bits;
                    if r == 0 {
                        continue;
                    }
                    let val = (t - low) / r;
                    let lo1 = low + val * r;
                    if val >> bits == 0 && lo1 < t {
                        fits.push((bits, val, lo1));
                    }
                }
                // With 3 or 4 bytes pending, prefer low just below t: the cut range is tiny.
                let tight: Vec<_> = fits.iter().copied().filter(|&(_, _, lo1)| t - lo1 < 256).collect();
                let pick = if pend >= 3 && !tight.is_empty() && !g.chance(1, 4) { &tight } else { &fits };
                if !pick.is_empty() {
                    let (bits, val, _) = pick[g.below(pick.len() as u32) as usize];
                    op = Some(CoderOp::Raw { value: val as u32, bits, info });
                }
            }
        }
        let op = op.unwrap_or_else(|| {
            let ctx = g.below(ctxs) as u16;
            match g.below(6) {
                0 => CoderOp::Slot { escape: g.chance(1, 8), hit: g.chance(3, 4), ctx: Some(ctx), info },
                1 => CoderOp::Slot { escape: false, hit: g.chance(1, 2), ctx: None, info },
                2 | 3 => CoderOp::Bit { hit: g.chance(2, 3), ctx, info },
                _ => CoderOp::Raw { value: g.next_u32(), bits: 1 + g.below(16) as u8, info },
            }
        });
        let mut add = vec![op];
        if i % 2000 == 1999 {
            add.extend([CoderOp::Flush, CoderOp::Marker]);
        }
        for op in add {
            model.run_op(op);
            v.push(CoderStim::Op(op));
        }
    }
    v
}

// ---------------------------------------------------------------------------------------
// Verilog export and the Verilator replay of this block alone.

/// The replay file of the Verilator harness: per cycle the input pins and the expected
/// outputs, `RESET STEP VALID KIND ESCAPE HIT FIXED CTX VALUE BITS BUSY OUT_VALID OUT_BYTE`
/// (VALUE and OUT_BYTE in hex; BUSY 2 in a reset cycle: not checked).
pub fn vectors_text(cycles: &[CoderCycle]) -> String {
    let mut s = String::with_capacity(cycles.len() * 40);
    s.push_str("# reset step valid kind escape hit fixed ctx value bits busy out_valid out_byte\n");
    for c in cycles {
        let p = c.stim.pins();
        let busy = if p.reset { 2 } else { c.busy as u8 };
        let _ = writeln!(
            s,
            "{} {} {} {} {} {} {} {} {:x} {} {} {} {:x}",
            p.reset as u8,
            p.step as u8,
            p.valid as u8,
            p.kind,
            p.escape as u8,
            p.hit as u8,
            p.fixed as u8,
            p.ctx,
            p.value,
            p.bits,
            busy,
            c.byte.is_some() as u8,
            c.byte.unwrap_or(0)
        );
    }
    s
}

/// The block's Verilog alone, checked and sanitized (top module named `name`).
pub fn export_verilog(h: &PftHwConfig, name: &str) -> Result<String, String> {
    let header = format!(
        "// {name}: the pft range coder (docs/trace-format.md 11.6) of configuration {}.\n\
         // Generated from hw/src/pft/coder.rs (do not edit).\n",
        h.model
    );
    crate::verilog::export_block(PftRangeCoder::new(h), name, &header)
}

/// The replay bench's source (testbenches/cosim/pft_coder_harness.cpp).
pub const HARNESS_CPP: &str = include_str!("../../../testbenches/cosim/pft_coder_harness.cpp");

/// Build the Verilated block with the replay bench in `dir`; returns the executable.
pub fn build_bench(h: &PftHwConfig, name: &str, dir: &std::path::Path) -> Result<std::path::PathBuf, String> {
    crate::cosim::verilate(dir, name, &export_verilog(h, name)?, HARNESS_CPP, "bench", &[])
}

/// Run the bench on a vector file: `Ok(Ok(summary))` when every cycle agrees,
/// `Ok(Err(first mismatch))` otherwise.
pub fn run_bench(exe: &std::path::Path, vectors: &std::path::Path) -> Result<Result<String, String>, String> {
    crate::cosim::run_replay(exe, &[vectors])
}

#[cfg(test)]
mod tests {
    use super::*;
    use streamtrace_model::BufferConfig;

    fn hw(cfg: &str) -> PftHwConfig {
        PftHwConfig::new(&cfg.parse().unwrap(), &BufferConfig::default()).unwrap()
    }

    #[derive(Debug, Default)]
    struct Tally {
        cycles: usize,
        ops: usize,
        holds: usize,
        bytes: usize,
        /// Shifts at the pending limit, those where it cut the range, and releases that took
        /// a carry.
        truncations: usize,
        cuts: usize,
        carries: usize,
        stuffings: usize,
        markers: usize,
        /// The model's largest pending count, the most shifts of a slot/bit/raw operation,
        /// the most bytes of an operation other than the marker.
        most_pending: u8,
        most_shifts: usize,
        most_bytes: usize,
    }

    /// Run the block (RustHDL direct drive) through `cycles` and compare `busy` and the
    /// emitted byte with the model's on every cycle. `tamper` flips a bit of the expected
    /// byte in one cycle (to show that a wrong expectation is caught). Returns the first
    /// mismatch.
    fn compare(h: &PftHwConfig, cycles: &[CoderCycle], tamper: Option<usize>) -> Result<Tally, String> {
        let mut sim = CoderSim::new(h)?;
        let mut model = PftCoder::new(&h.params);
        let mut t = Tally::default();
        let (mut shifts, mut bytes, mut last_op) = (0, 0, None);
        let end_op = |t: &mut Tally, op: Option<CoderOp>, shifts: usize, bytes: usize| match op {
            Some(CoderOp::Marker) | None => {}
            Some(CoderOp::Flush) => t.most_bytes = t.most_bytes.max(bytes),
            Some(_) => {
                t.most_bytes = t.most_bytes.max(bytes);
                t.most_shifts = t.most_shifts.max(shifts);
            }
        };
        for (i, c) in cycles.iter().enumerate() {
            let mut want = c.byte;
            if tamper == Some(i) {
                want = want.map(|b| b ^ 0x10);
            }
            let seen = sim.step(&c.stim)?;
            if (c.stim != CoderStim::Reset && seen.busy != c.busy) || seen.byte != want {
                return Err(format!(
                    "cycle {i} ({:?}, config {}): RTL busy {} byte {:02x?}, model busy {} byte {want:02x?}",
                    c.stim, h.model, seen.busy, seen.byte, c.busy
                ));
            }
            t.cycles += 1;
            t.truncations += seen.truncated as usize;
            t.cuts += seen.cut as usize;
            t.carries += seen.carried as usize;
            shifts += seen.shifted as usize;
            bytes += seen.byte.is_some() as usize;
            t.bytes += seen.byte.is_some() as usize;
            match c.stim {
                CoderStim::Op(op) => {
                    end_op(&mut t, last_op, shifts, bytes);
                    (shifts, bytes, last_op) = (0, 0, Some(op));
                    t.ops += 1;
                    t.markers += (op == CoderOp::Marker) as usize;
                    // Stuffing bytes: the model's 0x01 after 14 zero bytes.
                    let before = model.out.len();
                    model.run_op(op);
                    if op != CoderOp::Marker {
                        let out = &model.out;
                        t.stuffings += (before..out.len())
                            .filter(|&k| {
                                k >= ZERO_RUN_LIMIT as usize
                                    && out[k] == STUFF_BYTE
                                    && out[k - ZERO_RUN_LIMIT as usize..k].iter().all(|&z| z == 0)
                            })
                            .count();
                    }
                    t.most_pending = t.most_pending.max(model.coder_state().2);
                }
                CoderStim::Reset => {
                    end_op(&mut t, last_op.take(), shifts, bytes);
                    model = PftCoder::new(&h.params);
                }
                CoderStim::Hold => t.holds += 1,
                CoderStim::Idle => {}
            }
        }
        Ok(t)
    }

    /// Random sequences (skewed decisions, escapes, virtual slots, raw fields of every width
    /// with all-ones and zero phases, flushes and markers, a reset, held cycles) under five
    /// configurations: both rate extremes, 47 contexts (the default's six tagged tables, and
    /// the most: three or more tables have 26 direction contexts, and 8 RTC entries three
    /// RTC_INDEX contexts), 39 (two tables) and eight tables. Every cycle's `busy` and byte equal the model's.
    #[test]
    fn pft_coder_rusthdl_matches_model_on_random_ops() {
        let mut total = 0;
        let configs = [
            ("pft,rate=1", 1, 47),
            ("pft", 2, 47),
            ("pft,rate=8", 3, 47),
            ("pft,hlen=8-40", 4, 39),
            ("pft,hlen=1-2-4-8-16-32-48-64,rate=3", 9, 47),
        ];
        for (cfg, seed, contexts) in configs {
            let h = hw(cfg);
            assert_eq!(h.contexts, contexts, "{cfg}");
            let cycles = schedule(&h, &random_stims(&h, seed, 25_000), seed, 7);
            let t = compare(&h, &cycles, None).unwrap();
            eprintln!("{cfg}: {t:?}");
            assert!(t.ops > 24_000 && t.bytes > 15_000 && t.holds > 1_000, "{cfg}: {t:?}");
            assert_eq!(t.most_pending, PENDING_MAX, "{cfg}: the pending limit is reached");
            assert!(t.truncations > 100 && t.carries > 100 && t.stuffings > 50 && t.markers > 5, "{cfg}: {t:?}");
            total += t.ops;
        }
        eprintln!("{total} operations compared");
    }

    /// Operations chosen to keep the interval across the carry point: the pending limit
    /// truncates, and cuts, the range thousands of times; three shifts after one operation.
    #[test]
    fn pft_coder_rusthdl_matches_model_at_the_pending_limit() {
        for (cfg, seed) in [("pft", 5), ("pft,rate=1,hlen=3-8-20-50", 6)] {
            let h = hw(cfg);
            let cycles = schedule(&h, &straddling_stims(&h, seed, 20_000), seed, 0);
            let t = compare(&h, &cycles, None).unwrap();
            eprintln!("{cfg}: {t:?}");
            assert_eq!(t.most_pending, PENDING_MAX);
            assert!(t.cuts > 1000 && t.carries > 100, "{cfg}: {t:?}");
            assert_eq!(t.most_shifts, 3, "{cfg}: a cut range needs a third shift");
        }
    }

    /// The comparison can fail: one wrong expected byte, and one wrong `busy`, are reported
    /// at their cycles.
    #[test]
    fn pft_coder_rusthdl_comparison_catches_a_wrong_byte_and_busy() {
        let h = hw("pft");
        let mut cycles = schedule(&h, &random_stims(&h, 7, 3_000), 7, 5);
        let at = (1_000..).find(|&i| cycles[i].byte.is_some()).unwrap();
        let err = compare(&h, &cycles, Some(at)).unwrap_err();
        assert!(err.starts_with(&format!("cycle {at} ")), "{err}");
        compare(&h, &cycles, None).unwrap();
        let busy_at = (1_000..).find(|&i| cycles[i].busy).unwrap();
        cycles[busy_at].busy = false;
        let err = compare(&h, &cycles, None).unwrap_err();
        assert!(err.starts_with(&format!("cycle {busy_at} ")), "{err}");
    }

    /// Markers: the 16 marker bytes one per step, then a new coder with probabilities 1/2
    /// (the same operations after it give the same bytes as after a reset); an idle coder
    /// emits nothing and is not busy.
    #[test]
    fn pft_coder_marker_output_and_reset() {
        let h = hw("pft");
        let body: Vec<CoderStim> =
            random_stims(&h, 8, 400).into_iter().skip(1).filter(|s| *s != CoderStim::Reset).collect();
        let run = |sim: &mut CoderSim, stims: &[CoderStim]| -> Vec<CoderSeen> {
            schedule(&h, stims, 0, 0).iter().map(|c| sim.step(&c.stim).unwrap()).collect()
        };
        let mut sim = CoderSim::new(&h).unwrap();
        let mut with_reset = vec![CoderStim::Reset];
        with_reset.extend(&body);
        let first = run(&mut sim, &with_reset);
        let m = sim.step(&CoderStim::Op(CoderOp::Marker)).unwrap();
        assert_eq!((m.busy, m.byte), (false, None));
        let marker: Vec<Option<u8>> = (0..16).map(|_| sim.step(&CoderStim::Idle).unwrap().byte).collect();
        let want: Vec<Option<u8>> = SYNC_MARKER.iter().map(|&b| Some(b)).collect();
        assert_eq!(marker, want);
        let again = run(&mut sim, &body);
        assert_eq!(again, first[1..]);
        let idle = sim.step(&CoderStim::Idle).unwrap();
        assert_eq!((idle.busy, idle.byte), (false, None));
    }
}

//! The range coder of `pft` (docs/trace-format.md section 11.6) as one RustHDL block: one
//! coder operation per cycle, bit-exact with the model's `PftCoder::run_op`.
//!
//! An operation (slot symbol, context bit, raw field, flush, marker) is decoded, applied to
//! `low`/`range` (the products `(range >> 14) * p` and `v * (range >> n)` share one
//! multiplier, as no operation needs both; rust-hdl multiplies only 16-bit operands, so the
//! 32 x 16-bit product modulo 2^32 is two 16 x 16-bit products, which synthesis maps to
//! adder trees), then normalized by a fixed number of unrolled **shift stages**, and the bytes
//! the stages release pass through the first-byte drop and the zero stuffing into a
//! right-aligned output word, all in the same cycle.
//!
//! How many stages: at the start of an operation `range >= 2^24` (a new coder has 2^32 - 1,
//! every operation ends normalized), so an operation leaves `range >= 2^8` (escape and raw
//! fields: `range >> 16`; a decision at least `(range - (range >> 16)) >> 14 >= 2^10`) and two
//! shifts normalize it, unless a shift hits the pending limit and truncates the range to
//! `2^32 - low`. At the first shift that is at least 1, and two more shifts follow; at the
//! second shift `low` is a multiple of 2^8 (the first shift moved it up a byte), so the range
//! keeps at least 2^8 and one more shift follows; a truncation leaves one pending byte, so
//! there is no second one before the range is normalized. So a slot, bit or raw operation
//! needs at most 3 shifts (the tests reach 3); a flush does exactly 5. Five stages.
//!
//! How many bytes: every shift adds one byte to the held-back (cached and pending) bytes and
//! at least one stays held, so an operation releases at most 4 + 5 - 1 = 8 bytes (a flush;
//! 4 + 3 - 1 = 6 otherwise), and one stuffing byte at most (14 zero bytes between two):
//! 9 bytes, 9 byte lanes. The marker's 16 bytes bypass the coder.
//!
//! The coder must not code after a flush without a marker (the model's rule: a flushed
//! coder is not used again); the range a flush leaves may be below 2^24.

use std::fmt::Write as _;

use rust_hdl::prelude::*;
use streamtrace_model::format::SYNC_MARKER;
use streamtrace_model::pft::coder::{PENDING_MAX, PROB_BITS, PROB_INIT, RAW_MAX_BITS, STUFF_BYTE, ZERO_RUN_LIMIT};
use streamtrace_model::pft::{CoderOp, PftCoder};

use super::config::OP_BYTES_MAX;
use super::{PftHwConfig, OP_BIT, OP_FLUSH, OP_MARKER, OP_RAW, OP_SLOT};

/// Shift stages: the 5 shifts of a flush (at most 3 for any other operation).
const NSTAGE: usize = 5;
/// Bytes a stage can release: the cached byte and the pending 0xFF bytes behind it.
const STAGE_BYTES: usize = PENDING_MAX as usize;
/// Byte slots of the emission chain.
const NSLOT: usize = NSTAGE * STAGE_BYTES;
/// Bytes of one coding operation at most (8 released + 1 stuffing byte).
const ACC_BYTES: usize = 9;
/// Width of the shared multiplier's second operand: the raw field's 16 value bits (the
/// probability has 14).
const MUL_B_BITS: usize = RAW_MAX_BITS as usize;

// The kernel reads the last element of each chain by a literal index (rust-hdl cannot put
// a Rust constant into a Verilog index): keep these in step with it.
// `p_use` is PROB_BITS wide (14).
const _: () = assert!(NSTAGE == 5 && NSLOT == 20 && MUL_B_BITS == 16 && PROB_BITS == 14);
const _: () = assert!(ACC_BYTES == 9 && ACC_BYTES <= OP_BYTES_MAX && SYNC_MARKER.len() == OP_BYTES_MAX);
const _: () = assert!(ZERO_RUN_LIMIT == 14 && PENDING_MAX == 4);

// Lane tags. A released byte is a stage's first byte (cache + carry), or 0xFF / 0x00 (the
// pending bytes, one bit of information), or the stuffing byte, so the emission chain
// shifts 3-bit tags and the 9 output lanes decode them once (tag 0 is the empty lane's 0x00).
const TAG_ZERO: u64 = 0;
const TAG_FF: u64 = 1;
const TAG_STUFF: u64 = 2;
/// Stage s's first byte: TAG_B0 + s.
const TAG_B0: u64 = 3;
const _: () = assert!(TAG_B0 + NSTAGE as u64 <= 8);

#[derive(LogicBlock)]
pub struct PftRangeCoder {
    pub clock: Signal<In, Clock>,
    /// Synchronous: afterwards a new coder (and every probability 1/2).
    pub reset: Signal<In, Bit>,
    /// Perform one operation this cycle.
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
    /// The bytes this operation emits, right-aligned, the first in the most significant
    /// position of the `out_len`-bit value; `out_len` = 8 x count. Zero without `op_valid`.
    pub out_bytes: Signal<Out, Bits<128>>,
    pub out_len: Signal<Out, Bits<16>>,

    // Coder state: low (32 bits and the carry bit 32), range, cached byte, pending count
    // (1..=4), first-byte flag, zero-run count, probabilities.
    low: DFF<Bits<32>>,
    low_carry: DFF<Bit>,
    rng: DFF<Bits<32>>,
    cache: DFF<Bits<8>>,
    pend: DFF<Bits<3>>,
    first_byte: DFF<Bit>,
    zeros: DFF<Bits<4>>,
    probs: Vec<DFF<Bits<16>>>,

    // Operation decode.
    is_slot: Signal<Local, Bit>,
    is_bit: Signal<Local, Bit>,
    is_raw: Signal<Local, Bit>,
    is_flush: Signal<Local, Bit>,
    is_marker: Signal<Local, Bit>,
    is_coding: Signal<Local, Bit>,
    upd_prob: Signal<Local, Bit>,
    // The step before normalization.
    e_part: Signal<Local, Bits<32>>,
    rest: Signal<Local, Bits<32>>,
    rb: Signal<Local, Bits<32>>,
    rb_hi: Signal<Local, Bits<32>>,
    p_ctx: Signal<Local, Bits<16>>,
    p_use: Signal<Local, Bits<14>>,
    mul_a: Signal<Local, Bits<32>>,
    mul_b: Signal<Local, Bits<16>>,
    mul_lo: Signal<Local, Bits<32>>,
    mul_hi: Signal<Local, Bits<32>>,
    mul: Signal<Local, Bits<32>>,
    bound: Signal<Local, Bits<32>>,
    diff: Signal<Local, Bits<32>>,
    raw_r: Signal<Local, Bits<32>>,
    ones_sh: Signal<Local, Bits<16>>,
    vmask: Signal<Local, Bits<16>>,
    v_masked: Signal<Local, Bits<16>>,
    vr: Signal<Local, Bits<32>>,
    add: Signal<Local, Bits<32>>,
    // Probability update.
    p_dec: Signal<Local, Bits<16>>,
    p_hit_new: Signal<Local, Bits<16>>,
    p_room: Signal<Local, Bits<16>>,
    p_inc: Signal<Local, Bits<16>>,
    p_miss_new: Signal<Local, Bits<16>>,
    p_new: Signal<Local, Bits<16>>,
    // Shift stages: element s is the state before stage s (0: after the operation's step).
    st_low: Vec<Signal<Local, Bits<32>>>,
    st_carry: Vec<Signal<Local, Bit>>,
    /// The carry as a stage's bytes see it: only the first stage's (see the stage loop).
    st_first: Vec<Signal<Local, Bit>>,
    st_cin: Vec<Signal<Local, Bit>>,
    st_rng: Vec<Signal<Local, Bits<32>>>,
    st_cache: Vec<Signal<Local, Bits<8>>>,
    st_pend: Vec<Signal<Local, Bits<3>>>,
    st_top: Vec<Signal<Local, Bits<8>>>,
    st_act: Vec<Signal<Local, Bit>>,
    st_rel: Vec<Signal<Local, Bit>>,
    st_trunc: Vec<Signal<Local, Bit>>,
    st_room: Vec<Signal<Local, Bits<32>>>,
    st_rt: Vec<Signal<Local, Bits<32>>>,
    st_lsh: Vec<Signal<Local, Bits<32>>>,
    st_b0: Vec<Signal<Local, Bits<8>>>,
    st_bf: Vec<Signal<Local, Bits<8>>>,
    // Byte slots (stage s, position j at 4s + j) and the emission chain.
    sl_valid: Vec<Signal<Local, Bit>>,
    sl_byte: Vec<Signal<Local, Bits<8>>>,
    /// A slot's byte as a 3-bit lane tag: the emission chain moves tags, not bytes.
    sl_tag: Vec<Signal<Local, Bits<3>>>,
    st_tf: Vec<Signal<Local, Bits<3>>>,
    em_lane: Vec<Signal<Local, Bits<3>>>,
    dec_lane: Vec<Signal<Local, Bits<8>>>,
    em_cnt: Vec<Signal<Local, Bits<8>>>,
    em_zeros: Vec<Signal<Local, Bits<4>>>,
    em_first: Vec<Signal<Local, Bit>>,
    out_lane: Vec<Signal<Local, Bits<128>>>,
    out_word: Vec<Signal<Local, Bits<128>>>,
    cnt16: Signal<Local, Bits<16>>,

    k_op_slot: Constant<Bits<3>>,
    k_op_bit: Constant<Bits<3>>,
    k_op_raw: Constant<Bits<3>>,
    k_op_flush: Constant<Bits<3>>,
    k_op_marker: Constant<Bits<3>>,
    k_one3: Constant<Bits<3>>,
    k_two3: Constant<Bits<3>>,
    k_three3: Constant<Bits<3>>,
    k_four3: Constant<Bits<3>>,
    k_zero4: Constant<Bits<4>>,
    k_one4: Constant<Bits<4>>,
    k_run_last4: Constant<Bits<4>>,
    k_zero8: Constant<Bits<8>>,
    k_one8: Constant<Bits<8>>,
    k_two8: Constant<Bits<8>>,
    k_three8: Constant<Bits<8>>,
    k_eight8: Constant<Bits<8>>,
    k_prob_bits8: Constant<Bits<8>>,
    k_sixteen8: Constant<Bits<8>>,
    k_ff8: Constant<Bits<8>>,
    k_rate8: Constant<Bits<8>>,
    k_prob_init: Constant<Bits<16>>,
    k_prob_init14: Constant<Bits<14>>,
    k_ones16: Constant<Bits<16>>,
    k_prob_one: Constant<Bits<16>>,
    k_prob_mask: Constant<Bits<16>>,
    k_zero32: Constant<Bits<32>>,
    k_top32: Constant<Bits<32>>,
    k_mask24: Constant<Bits<32>>,
    k_range_init: Constant<Bits<32>>,
    k_stuff8: Constant<Bits<8>>,
    k_tag_zero: Constant<Bits<3>>,
    k_tag_ff: Constant<Bits<3>>,
    k_tag_stuff: Constant<Bits<3>>,
    k_tag_b0_0: Constant<Bits<3>>,
    k_tag_b0_1: Constant<Bits<3>>,
    k_tag_b0_2: Constant<Bits<3>>,
    k_tag_b0_3: Constant<Bits<3>>,
    k_tag_b0_4: Constant<Bits<3>>,
    k_zero128: Constant<Bits<128>>,
    k_marker: Constant<Bits<128>>,
    k_marker_len: Constant<Bits<16>>,
    _contexts: usize,
}

fn locals<T: Default>(n: usize) -> Vec<T> {
    (0..n).map(|_| T::default()).collect()
}

impl PftRangeCoder {
    pub fn new(h: &PftHwConfig) -> PftRangeCoder {
        assert!((1..=256).contains(&h.contexts), "op_ctx addresses at most 256 contexts");
        assert!((1..=8).contains(&h.params.rate), "rate {} outside 1..=8", h.params.rate);
        let marker = SYNC_MARKER.iter().fold(0u128, |a, &b| (a << 8) | b as u128);
        assert!(marker < 1 << 64, "the marker constant is built from a u64");
        PftRangeCoder {
            clock: Default::default(),
            reset: Default::default(),
            op_valid: Default::default(),
            op_kind: Default::default(),
            op_escape: Default::default(),
            op_hit: Default::default(),
            op_fixed: Default::default(),
            op_ctx: Default::default(),
            op_value: Default::default(),
            op_bits: Default::default(),
            out_bytes: Default::default(),
            out_len: Default::default(),
            low: Default::default(),
            low_carry: Default::default(),
            rng: Default::default(),
            cache: Default::default(),
            pend: Default::default(),
            first_byte: Default::default(),
            zeros: Default::default(),
            probs: locals(h.contexts),
            is_slot: Default::default(),
            is_bit: Default::default(),
            is_raw: Default::default(),
            is_flush: Default::default(),
            is_marker: Default::default(),
            is_coding: Default::default(),
            upd_prob: Default::default(),
            e_part: Default::default(),
            rest: Default::default(),
            rb: Default::default(),
            rb_hi: Default::default(),
            p_ctx: Default::default(),
            p_use: Default::default(),
            mul_a: Default::default(),
            mul_b: Default::default(),
            mul_lo: Default::default(),
            mul_hi: Default::default(),
            mul: Default::default(),
            bound: Default::default(),
            diff: Default::default(),
            raw_r: Default::default(),
            ones_sh: Default::default(),
            vmask: Default::default(),
            v_masked: Default::default(),
            vr: Default::default(),
            add: Default::default(),
            p_dec: Default::default(),
            p_hit_new: Default::default(),
            p_room: Default::default(),
            p_inc: Default::default(),
            p_miss_new: Default::default(),
            p_new: Default::default(),
            st_low: locals(NSTAGE + 1),
            st_carry: locals(NSTAGE + 1),
            st_first: locals(NSTAGE),
            st_cin: locals(NSTAGE),
            st_rng: locals(NSTAGE + 1),
            st_cache: locals(NSTAGE + 1),
            st_pend: locals(NSTAGE + 1),
            st_top: locals(NSTAGE),
            st_act: locals(NSTAGE),
            st_rel: locals(NSTAGE),
            st_trunc: locals(NSTAGE),
            st_room: locals(NSTAGE),
            st_rt: locals(NSTAGE),
            st_lsh: locals(NSTAGE),
            st_b0: locals(NSTAGE),
            st_bf: locals(NSTAGE),
            sl_valid: locals(NSLOT),
            sl_byte: locals(NSLOT),
            sl_tag: locals(NSLOT),
            st_tf: locals(NSTAGE),
            em_lane: locals(ACC_BYTES * (NSLOT + 1)),
            dec_lane: locals(ACC_BYTES),
            em_cnt: locals(NSLOT + 1),
            em_zeros: locals(NSLOT + 1),
            em_first: locals(NSLOT + 1),
            out_lane: locals(ACC_BYTES),
            out_word: locals(ACC_BYTES + 1),
            cnt16: Default::default(),
            k_op_slot: Constant::new(OP_SLOT.into()),
            k_op_bit: Constant::new(OP_BIT.into()),
            k_op_raw: Constant::new(OP_RAW.into()),
            k_op_flush: Constant::new(OP_FLUSH.into()),
            k_op_marker: Constant::new(OP_MARKER.into()),
            k_one3: Constant::new(1u64.into()),
            k_two3: Constant::new(2u64.into()),
            k_three3: Constant::new(3u64.into()),
            k_four3: Constant::new((PENDING_MAX as u64).into()),
            k_zero4: Constant::new(0u64.into()),
            k_one4: Constant::new(1u64.into()),
            k_run_last4: Constant::new((ZERO_RUN_LIMIT as u64 - 1).into()),
            k_zero8: Constant::new(0u64.into()),
            k_one8: Constant::new(1u64.into()),
            k_two8: Constant::new(2u64.into()),
            k_three8: Constant::new(3u64.into()),
            k_eight8: Constant::new(8u64.into()),
            k_prob_bits8: Constant::new((PROB_BITS as u64).into()),
            k_sixteen8: Constant::new(16u64.into()),
            k_ff8: Constant::new(0xFFu64.into()),
            k_rate8: Constant::new((h.params.rate as u64).into()),
            k_prob_init: Constant::new((PROB_INIT as u64).into()),
            k_prob_init14: Constant::new((PROB_INIT as u64).into()),
            k_ones16: Constant::new(0xFFFFu64.into()),
            k_prob_one: Constant::new((1u64 << PROB_BITS).into()),
            k_prob_mask: Constant::new(((1u64 << PROB_BITS) - 1).into()),
            k_zero32: Constant::new(0u64.into()),
            k_top32: Constant::new((1u64 << 24).into()),
            k_mask24: Constant::new(0xFF_FFFFu64.into()),
            k_range_init: Constant::new(0xFFFF_FFFFu64.into()),
            k_stuff8: Constant::new((STUFF_BYTE as u64).into()),
            k_tag_zero: Constant::new(TAG_ZERO.into()),
            k_tag_ff: Constant::new(TAG_FF.into()),
            k_tag_stuff: Constant::new(TAG_STUFF.into()),
            k_tag_b0_0: Constant::new(TAG_B0.into()),
            k_tag_b0_1: Constant::new((TAG_B0 + 1).into()),
            k_tag_b0_2: Constant::new((TAG_B0 + 2).into()),
            k_tag_b0_3: Constant::new((TAG_B0 + 3).into()),
            k_tag_b0_4: Constant::new((TAG_B0 + 4).into()),
            k_zero128: Constant::new(0u64.into()),
            k_marker: Constant::new((marker as u64).into()),
            k_marker_len: Constant::new((8 * SYNC_MARKER.len() as u64).into()),
            _contexts: h.contexts,
        }
    }
}

impl Logic for PftRangeCoder {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, low, low_carry, rng, cache, pend, first_byte, zeros);

        // Decode.
        self.is_slot.next = self.op_valid.val() & (self.op_kind.val() == self.k_op_slot.val());
        self.is_bit.next = self.op_valid.val() & (self.op_kind.val() == self.k_op_bit.val());
        self.is_raw.next = self.op_valid.val() & (self.op_kind.val() == self.k_op_raw.val());
        self.is_flush.next = self.op_valid.val() & (self.op_kind.val() == self.k_op_flush.val());
        self.is_marker.next = self.op_valid.val() & (self.op_kind.val() == self.k_op_marker.val());
        self.is_coding.next = (self.is_slot.val() | self.is_bit.val()) | self.is_raw.val();

        // Slot: e = range >> 16; without an escape the decision splits range - e.
        self.e_part.next = self.rng.q.val() >> self.k_sixteen8.val();
        self.rest.next = self.rng.q.val() - self.e_part.val();
        self.rb.next = self.rng.q.val();
        if self.is_slot.val() {
            self.rb.next = self.rest.val();
        }
        self.rb_hi.next = self.rb.val() >> self.k_prob_bits8.val();

        // The context's probability (a fixed slot: 1/2).
        self.p_ctx.next = self.k_prob_init.val();
        for i in 0..self._contexts {
            if self.op_ctx.val().index() == i {
                self.p_ctx.next = self.probs[i].q.val();
            }
        }
        self.p_use.next = bit_cast::<14, 16>(self.p_ctx.val());
        if self.is_slot.val() & self.op_fixed.val() {
            self.p_use.next = self.k_prob_init14.val();
        }

        // Raw field: r = range >> n, v * r over the 16 bits of v (v < 2^n, so v * r < 2^32).
        self.raw_r.next = self.rng.q.val() >> self.op_bits.val();
        self.ones_sh.next = self.k_ones16.val() << self.op_bits.val();
        self.vmask.next = !self.ones_sh.val();
        self.v_masked.next = self.op_value.val() & self.vmask.val();

        // One shift-and-add multiplier for both products, as no operation needs both:
        // bound = (rb >> 14) * p (14 bits of p) for a decision, v * r for a raw field. Each
        // fits in 32 bits, so the shared 32-bit accumulator gives the same values.
        self.mul_a.next = self.rb_hi.val();
        self.mul_b.next = bit_cast::<16, 14>(self.p_use.val());
        if self.is_raw.val() {
            self.mul_a.next = self.raw_r.val();
            self.mul_b.next = self.v_masked.val();
        }
        // a * b mod 2^32 = a[15:0] * b + ((a[31:16] * b) << 16): two 16 x 16-bit products
        // that synthesis builds as adder trees (a chain of 16 conditional 32-bit adds was
        // 130 gates deep and 800 cells larger).
        self.mul_lo.next = self.mul_a.val().get_bits::<16>(0) * self.mul_b.val();
        self.mul_hi.next = self.mul_a.val().get_bits::<16>(16) * self.mul_b.val();
        self.mul.next = self.mul_lo.val() + (self.mul_hi.val() << self.k_sixteen8.val());
        self.bound.next = self.mul.val();
        self.diff.next = self.rb.val() - self.bound.val();
        self.vr.next = self.mul.val();

        // The operation's step: what low gains and the new range.
        self.add.next = self.k_zero32.val();
        self.st_rng[0].next = self.rng.q.val();
        if self.is_slot.val() & self.op_escape.val() {
            self.add.next = self.rest.val();
            self.st_rng[0].next = self.e_part.val();
        } else if self.is_slot.val() | self.is_bit.val() {
            self.st_rng[0].next = self.diff.val();
            if !self.op_hit.val() {
                self.add.next = self.diff.val();
                self.st_rng[0].next = self.bound.val();
            }
        } else if self.is_raw.val() {
            self.add.next = self.vr.val();
            self.st_rng[0].next = self.raw_r.val();
        }
        // low + range < 2^33 always, so the 32-bit sum wraps at most once.
        self.st_low[0].next = self.low.q.val() + self.add.val();
        self.st_carry[0].next = self.low_carry.q.val() | (self.st_low[0].val() < self.low.q.val());
        self.st_cache[0].next = self.cache.q.val();
        self.st_pend[0].next = self.pend.q.val();

        // Probability update (a slot's escape and a fixed slot adapt nothing).
        self.upd_prob.next = self.is_bit.val() | ((self.is_slot.val() & !self.op_escape.val()) & !self.op_fixed.val());
        self.p_dec.next = self.p_ctx.val() >> self.k_rate8.val();
        self.p_hit_new.next = self.p_ctx.val() - self.p_dec.val();
        self.p_room.next = self.k_prob_one.val() - self.p_ctx.val();
        self.p_inc.next = self.p_room.val() >> self.k_rate8.val();
        self.p_miss_new.next = self.p_ctx.val() + self.p_inc.val();
        // p stays within 1..=4095: the mask changes nothing but lets synthesis drop the
        // upper 4 bits of each 16-bit probability register.
        self.p_new.next = self.p_miss_new.val() & self.k_prob_mask.val();
        if self.op_hit.val() {
            self.p_new.next = self.p_hit_new.val() & self.k_prob_mask.val();
        }

        // Shift stages: normalization (range < 2^24), or one of a flush's five shifts.
        // A later stage acts only after the first one did (a flush acts in all; otherwise the
        // range stays >= 2^24 when the first does not shift), and the first shift clears the
        // carry, so only the first stage's bytes can take a carry: `st_cin` says so in a way
        // synthesis sees (constant false after stage 0), which drops the later stages' carry
        // adders and leaves their pending bytes the constant 0xFF.
        self.st_first[0].next = true;
        for s in 1..NSTAGE {
            self.st_first[s].next = false;
        }
        for s in 0..NSTAGE {
            self.st_cin[s].next = self.st_carry[s].val() & self.st_first[s].val();
            self.st_top[s].next = self.st_low[s].val().get_bits::<8>(24);
            self.st_act[s].next =
                self.is_flush.val() | (self.is_coding.val() & (self.st_rng[s].val() < self.k_top32.val()));
            self.st_rel[s].next = self.st_act[s].val()
                & (((self.st_top[s].val() != self.k_ff8.val()) | self.st_cin[s].val())
                    | (self.st_pend[s].val() == self.k_four3.val()));
            self.st_trunc[s].next = ((self.st_act[s].val() & (self.st_top[s].val() == self.k_ff8.val()))
                & !self.st_cin[s].val())
                & (self.st_pend[s].val() == self.k_four3.val());
            // The pending limit: range := min(range, 2^32 - low) (here low < 2^32, low != 0).
            self.st_room[s].next = self.k_zero32.val() - self.st_low[s].val();
            self.st_rt[s].next = self.st_rng[s].val();
            if self.st_trunc[s].val() & (self.st_room[s].val() < self.st_rng[s].val()) {
                self.st_rt[s].next = self.st_room[s].val();
            }
            self.st_lsh[s].next = (self.st_low[s].val() & self.k_mask24.val()) << self.k_eight8.val();
            // Released bytes: the cached byte plus the carry, then 0xFF plus the carry.
            self.st_b0[s].next = self.st_cache[s].val();
            self.st_bf[s].next = self.k_ff8.val();
            if self.st_cin[s].val() {
                self.st_b0[s].next = self.st_cache[s].val() + self.k_one8.val();
                self.st_bf[s].next = self.k_zero8.val();
            }
            self.st_low[s + 1].next = self.st_low[s].val();
            self.st_carry[s + 1].next = self.st_carry[s].val();
            self.st_rng[s + 1].next = self.st_rng[s].val();
            self.st_cache[s + 1].next = self.st_cache[s].val();
            self.st_pend[s + 1].next = self.st_pend[s].val();
            if self.st_act[s].val() {
                self.st_low[s + 1].next = self.st_lsh[s].val();
                self.st_carry[s + 1].next = false;
                self.st_rng[s + 1].next = self.st_rt[s].val() << self.k_eight8.val();
                if self.is_flush.val() {
                    self.st_rng[s + 1].next = self.st_rt[s].val();
                }
                self.st_pend[s + 1].next = self.st_pend[s].val() + self.k_one3.val();
                if self.st_rel[s].val() {
                    self.st_cache[s + 1].next = self.st_top[s].val();
                    self.st_pend[s + 1].next = self.k_one3.val();
                }
            }
            self.sl_valid[4 * s].next = self.st_rel[s].val();
            self.sl_byte[4 * s].next = self.st_b0[s].val();
            self.sl_valid[4 * s + 1].next = self.st_rel[s].val() & (self.st_pend[s].val() > self.k_one3.val());
            self.sl_byte[4 * s + 1].next = self.st_bf[s].val();
            self.sl_valid[4 * s + 2].next = self.st_rel[s].val() & (self.st_pend[s].val() > self.k_two3.val());
            self.sl_byte[4 * s + 2].next = self.st_bf[s].val();
            self.sl_valid[4 * s + 3].next = self.st_rel[s].val() & (self.st_pend[s].val() > self.k_three3.val());
            self.sl_byte[4 * s + 3].next = self.st_bf[s].val();
        }

        // Emission: drop the coder's first byte; after 14 zero bytes insert 0x01. The bytes
        // so far are a shift register of 9 lanes of tags (lane 0 the newest): element
        // 9u + k is lane k before slot u. (Lanes rather than one word: rust-hdl cannot widen
        // a value with `bit_cast` inside a loop.)
        for s in 0..NSTAGE {
            self.st_tf[s].next = self.k_tag_ff.val();
            if self.st_cin[s].val() {
                self.st_tf[s].next = self.k_tag_zero.val();
            }
            self.sl_tag[4 * s + 1].next = self.st_tf[s].val();
            self.sl_tag[4 * s + 2].next = self.st_tf[s].val();
            self.sl_tag[4 * s + 3].next = self.st_tf[s].val();
        }
        self.sl_tag[0].next = self.k_tag_b0_0.val();
        self.sl_tag[4].next = self.k_tag_b0_1.val();
        self.sl_tag[8].next = self.k_tag_b0_2.val();
        self.sl_tag[12].next = self.k_tag_b0_3.val();
        self.sl_tag[16].next = self.k_tag_b0_4.val();
        for k in 0..ACC_BYTES {
            self.em_lane[k].next = self.k_tag_zero.val();
        }
        self.em_cnt[0].next = self.k_zero8.val();
        self.em_zeros[0].next = self.zeros.q.val();
        self.em_first[0].next = self.first_byte.q.val();
        for u in 0..NSLOT {
            for k in 0..ACC_BYTES {
                self.em_lane[9 * u + 9 + k].next = self.em_lane[9 * u + k].val();
            }
            self.em_cnt[u + 1].next = self.em_cnt[u].val();
            self.em_zeros[u + 1].next = self.em_zeros[u].val();
            self.em_first[u + 1].next = self.em_first[u].val() & !self.sl_valid[u].val();
            if self.sl_valid[u].val() & !self.em_first[u].val() {
                self.em_lane[9 * u + 9].next = self.sl_tag[u].val();
                for k in 1..ACC_BYTES {
                    self.em_lane[9 * u + 9 + k].next = self.em_lane[9 * u + k - 1].val();
                }
                self.em_cnt[u + 1].next = self.em_cnt[u].val() + self.k_one8.val();
                self.em_zeros[u + 1].next = self.k_zero4.val();
                if self.sl_byte[u].val() == self.k_zero8.val() {
                    self.em_zeros[u + 1].next = self.em_zeros[u].val() + self.k_one4.val();
                    if self.em_zeros[u].val() == self.k_run_last4.val() {
                        self.em_lane[9 * u + 9].next = self.k_tag_stuff.val();
                        self.em_lane[9 * u + 10].next = self.sl_tag[u].val();
                        for k in 2..ACC_BYTES {
                            self.em_lane[9 * u + 9 + k].next = self.em_lane[9 * u + k - 2].val();
                        }
                        self.em_cnt[u + 1].next = self.em_cnt[u].val() + self.k_two8.val();
                        self.em_zeros[u + 1].next = self.k_zero4.val();
                    }
                }
            }
        }

        // Outputs: the lanes after the last slot (elements 180..188) decoded, right-aligned.
        for k in 0..ACC_BYTES {
            self.dec_lane[k].next = self.k_zero8.val();
            if self.em_lane[180 + k].val() == self.k_tag_ff.val() {
                self.dec_lane[k].next = self.k_ff8.val();
            }
            if self.em_lane[180 + k].val() == self.k_tag_stuff.val() {
                self.dec_lane[k].next = self.k_stuff8.val();
            }
            if self.em_lane[180 + k].val() == self.k_tag_b0_0.val() {
                self.dec_lane[k].next = self.st_b0[0].val();
            }
            if self.em_lane[180 + k].val() == self.k_tag_b0_1.val() {
                self.dec_lane[k].next = self.st_b0[1].val();
            }
            if self.em_lane[180 + k].val() == self.k_tag_b0_2.val() {
                self.dec_lane[k].next = self.st_b0[2].val();
            }
            if self.em_lane[180 + k].val() == self.k_tag_b0_3.val() {
                self.dec_lane[k].next = self.st_b0[3].val();
            }
            if self.em_lane[180 + k].val() == self.k_tag_b0_4.val() {
                self.dec_lane[k].next = self.st_b0[4].val();
            }
        }
        self.out_lane[0].next = bit_cast::<128, 8>(self.dec_lane[0].val());
        self.out_lane[1].next = bit_cast::<128, 8>(self.dec_lane[1].val());
        self.out_lane[2].next = bit_cast::<128, 8>(self.dec_lane[2].val());
        self.out_lane[3].next = bit_cast::<128, 8>(self.dec_lane[3].val());
        self.out_lane[4].next = bit_cast::<128, 8>(self.dec_lane[4].val());
        self.out_lane[5].next = bit_cast::<128, 8>(self.dec_lane[5].val());
        self.out_lane[6].next = bit_cast::<128, 8>(self.dec_lane[6].val());
        self.out_lane[7].next = bit_cast::<128, 8>(self.dec_lane[7].val());
        self.out_lane[8].next = bit_cast::<128, 8>(self.dec_lane[8].val());
        self.out_word[0].next = self.k_zero128.val();
        for k in 0..ACC_BYTES {
            self.out_word[k + 1].next = (self.out_word[k].val() << self.k_eight8.val()) | self.out_lane[8 - k].val();
        }
        self.cnt16.next = bit_cast::<16, 8>(self.em_cnt[20].val());
        // (Each output written once per evaluation: no glitch for an event-driven simulator.)
        if self.is_marker.val() {
            self.out_bytes.next = self.k_marker.val();
            self.out_len.next = self.k_marker_len.val();
        } else {
            self.out_bytes.next = self.out_word[9].val();
            self.out_len.next = self.cnt16.val() << self.k_three8.val();
        }

        // State at the clock edge.
        self.low.d.next = self.st_low[5].val();
        self.low_carry.d.next = self.st_carry[5].val();
        self.rng.d.next = self.st_rng[5].val();
        self.cache.d.next = self.st_cache[5].val();
        self.pend.d.next = self.st_pend[5].val();
        self.zeros.d.next = self.em_zeros[20].val();
        self.first_byte.d.next = self.em_first[20].val();
        for i in 0..self._contexts {
            self.probs[i].clock.next = self.clock.val();
            self.probs[i].d.next = self.probs[i].q.val();
            if self.upd_prob.val() & (self.op_ctx.val().index() == i) {
                self.probs[i].d.next = self.p_new.val();
            }
            if self.reset.val() | self.is_marker.val() {
                self.probs[i].d.next = self.k_prob_init.val();
            }
        }
        if self.reset.val() | self.is_marker.val() {
            self.low.d.next = self.k_zero32.val();
            self.low_carry.d.next = false;
            self.rng.d.next = self.k_range_init.val();
            self.cache.d.next = self.k_zero8.val();
            self.pend.d.next = self.k_one3.val();
            self.first_byte.d.next = true;
            self.zeros.d.next = self.k_zero4.val();
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
    /// No operation (`op_valid` low).
    Idle,
    /// One operation.
    Op(CoderOp),
}

/// The block's input pins for one cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CoderPins {
    pub reset: bool,
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
        let op = |kind: u64| CoderPins { valid: true, kind, ..Default::default() };
        match *self {
            CoderStim::Reset => CoderPins { reset: true, ..Default::default() },
            CoderStim::Idle => CoderPins::default(),
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

/// `out_len` and `out_bytes` for the bytes one operation emits (first byte most significant).
pub fn output_word(bytes: &[u8]) -> (u64, u128) {
    assert!(bytes.len() <= OP_BYTES_MAX, "{} bytes in one operation", bytes.len());
    (8 * bytes.len() as u64, bytes.iter().fold(0u128, |a, &b| (a << 8) | b as u128))
}

/// What the model's `PftCoder::run_op` emits in each cycle (a reset starts a new coder).
/// The coder must be reset before its first operation, as the block must.
pub fn model_outputs(h: &PftHwConfig, stims: &[CoderStim]) -> Vec<Vec<u8>> {
    let mut coder = PftCoder::new(&h.params);
    stims
        .iter()
        .map(|s| match *s {
            CoderStim::Reset => {
                coder = PftCoder::new(&h.params);
                Vec::new()
            }
            CoderStim::Idle => Vec::new(),
            CoderStim::Op(op) => {
                let before = coder.out.len();
                coder.run_op(op);
                coder.out[before..].to_vec()
            }
        })
        .collect()
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

/// Delta passes allowed for the block to settle in the RustHDL simulation: its longest
/// combinational chain (multiplier, five shift stages, twenty byte slots) takes about a
/// hundred.
pub const SETTLE_ITERS: usize = 2000;

/// What one cycle of the RustHDL simulation showed on the outputs and inside the block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoderSeen {
    pub len: u64,
    pub word: u128,
    /// A shift hit the pending limit; and the truncation cut the range (2^32 - low < range).
    pub truncated: bool,
    pub cut: bool,
    /// Released bytes took a carry.
    pub carried: bool,
    /// Shift stages active.
    pub shifts: usize,
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
        let seen = CoderSeen {
            len: u.out_len.val().to_u64(),
            word: u.out_bytes.val().to_u128(),
            truncated: u.st_trunc.iter().any(|t| t.val()),
            cut: (0..NSTAGE).any(|s| u.st_trunc[s].val() && u.st_room[s].val() < u.st_rng[s].val()),
            carried: (0..NSTAGE).any(|s| u.st_rel[s].val() && u.st_carry[s].val()),
            shifts: u.st_act.iter().filter(|a| a.val()).count(),
        };
        self.uut.clock.next = Clock::from(true);
        self.settle()?;
        self.uut.clock.next = Clock::from(false);
        self.settle()?;
        Ok(seen)
    }

    /// The coder state: low (with the carry as bit 32), range, pending count.
    pub fn state(&self) -> (u64, u64, u64) {
        let u = &self.uut;
        let low = u.low.q.val().to_u64() | (u.low_carry.q.val() as u64) << 32;
        (low, u.rng.q.val().to_u64(), u.pend.q.val().to_u64())
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
/// limit with a range worth cutting: raw fields chosen from the coder's state (run in the
/// RustHDL simulation of the block) keep the interval across the point where a carry would
/// come, so pending bytes pile up to the limit and the truncation cuts the range, down to a
/// few units when low lies just below 2^32. One operation in six is random, so straddles
/// resolve both ways (carry or not); a flush and the marker every 2000 operations.
pub fn straddling_stims(h: &PftHwConfig, seed: u64, n: usize) -> Result<Vec<CoderStim>, String> {
    use streamtrace_model::pft::Info;
    let info = Info::Address;
    let mut g = Lcg(seed);
    let mut sim = CoderSim::new(h)?;
    let mut v = vec![CoderStim::Reset];
    sim.step(&v[0])?;
    let ctxs = h.contexts as u32;
    for i in 0..n {
        let (low, rng, pend) = sim.state();
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
        let mut add = vec![CoderStim::Op(op)];
        if i % 2000 == 1999 {
            add.extend([CoderStim::Op(CoderOp::Flush), CoderStim::Op(CoderOp::Marker)]);
        }
        for st in add {
            sim.step(&st)?;
            v.push(st);
        }
    }
    Ok(v)
}

// ---------------------------------------------------------------------------------------
// Verilog export and the Verilator replay of this block alone.

/// The replay file of the Verilator harness: per cycle the input pins and the expected
/// outputs, `RESET VALID KIND ESCAPE HIT FIXED CTX VALUE BITS OUT_LEN OUT_BYTES` (VALUE and
/// OUT_BYTES in hex, OUT_BYTES as 32 digits).
pub fn vectors_text(stims: &[CoderStim], outputs: &[Vec<u8>]) -> String {
    assert_eq!(stims.len(), outputs.len());
    let mut s = String::with_capacity(stims.len() * 64);
    s.push_str("# reset valid kind escape hit fixed ctx value bits out_len out_bytes\n");
    for (st, bytes) in stims.iter().zip(outputs) {
        let p = st.pins();
        let (len, word) = output_word(bytes);
        let _ = writeln!(
            s,
            "{} {} {} {} {} {} {} {:x} {} {} {:032x}",
            p.reset as u8,
            p.valid as u8,
            p.kind,
            p.escape as u8,
            p.hit as u8,
            p.fixed as u8,
            p.ctx,
            p.value,
            p.bits,
            len,
            word
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
        bytes: usize,
        /// Operations with a shift at the pending limit, and those where it cut the range.
        truncations: usize,
        cuts: usize,
        /// Operations whose released bytes took a carry.
        carries: usize,
        stuffings: usize,
        markers: usize,
        /// The model's largest pending count, the most shifts of a slot/bit/raw operation,
        /// the most bytes of an operation other than the marker.
        most_pending: u64,
        most_shifts: usize,
        most_bytes: usize,
    }

    /// Run the block (RustHDL direct drive) and the model side by side through `stims` and
    /// compare the outputs on every cycle. `tamper` flips a bit of the model's bytes in one
    /// cycle (to show that a wrong expectation is caught). Returns the first mismatch.
    fn compare(h: &PftHwConfig, stims: &[CoderStim], tamper: Option<usize>) -> Result<Tally, String> {
        let mut sim = CoderSim::new(h)?;
        let mut model = PftCoder::new(&h.params);
        let mut t = Tally::default();
        let zeros = ZERO_RUN_LIMIT as usize;
        let mut run: Vec<u8> = Vec::new();
        for (cycle, st) in stims.iter().enumerate() {
            let mut bytes = match *st {
                CoderStim::Reset => {
                    model = PftCoder::new(&h.params);
                    run.clear();
                    Vec::new()
                }
                CoderStim::Idle => Vec::new(),
                CoderStim::Op(op) => {
                    let before = model.out.len();
                    model.run_op(op);
                    model.out[before..].to_vec()
                }
            };
            if tamper == Some(cycle) {
                bytes[0] ^= 0x10;
            }
            let seen = sim.step(st)?;
            let (len, word) = output_word(&bytes);
            if (seen.len, seen.word) != (len, word) {
                return Err(format!(
                    "cycle {cycle} ({st:?}, config {}): RTL {} bits {:#x}, model {} bits {:#x} ({bytes:02x?})",
                    h.model, seen.len, seen.word, len, word
                ));
            }
            t.cycles += 1;
            if let CoderStim::Op(op) = *st {
                t.ops += 1;
                t.bytes += bytes.len();
                t.truncations += seen.truncated as usize;
                t.cuts += seen.cut as usize;
                t.carries += seen.carried as usize;
                if op == CoderOp::Marker {
                    t.markers += 1;
                    run.clear();
                } else {
                    t.most_bytes = t.most_bytes.max(bytes.len());
                    if op != CoderOp::Flush {
                        t.most_shifts = t.most_shifts.max(seen.shifts);
                    }
                    // Stuffing: 0x01 after 14 zero bytes of the same coder.
                    for &b in &bytes {
                        if run.len() >= zeros && run[run.len() - zeros..].iter().all(|&z| z == 0) {
                            assert_eq!(b, STUFF_BYTE, "cycle {cycle}: no stuffing after {zeros} zero bytes");
                            t.stuffings += 1;
                            run.clear();
                        } else {
                            run.push(b);
                        }
                    }
                }
            }
            // The model's pending count from its public bit count: bit_len = 8 (out +
            // pending + 4 - first), and `first` is clear once the coder has sent a byte.
            if !model.out.is_empty() {
                t.most_pending = t.most_pending.max(model.bit_len() / 8 - model.out.len() as u64 - 4);
            }
        }
        Ok(t)
    }

    /// Random sequences (skewed decisions, escapes, virtual slots, raw fields of every width
    /// with all-ones and zero phases, flushes and markers, a reset) under five configurations:
    /// both rate extremes, 42 contexts (the default's six tagged tables, and the most: three
    /// or more tables have 26 direction contexts), 34 (two tables) and eight tables. Every
    /// cycle's bytes equal the model's.
    #[test]
    fn pft_coder_rusthdl_matches_model_on_random_ops() {
        let mut total = 0;
        let configs = [
            ("pft,rate=1", 1, 42),
            ("pft", 2, 42),
            ("pft,rate=8", 3, 42),
            ("pft,hlen=8-40", 4, 34),
            ("pft,hlen=1-2-4-8-16-32-48-64,rate=3", 9, 42),
        ];
        for (cfg, seed, contexts) in configs {
            let h = hw(cfg);
            assert_eq!(h.contexts, contexts, "{cfg}");
            let stims = random_stims(&h, seed, 25_000);
            let t = compare(&h, &stims, None).unwrap();
            eprintln!("{cfg}: {t:?}");
            assert!(t.ops > 24_000 && t.bytes > 15_000, "{cfg}: {t:?}");
            assert_eq!(t.most_pending, PENDING_MAX as u64, "{cfg}: the pending limit is reached");
            assert!(t.truncations > 100 && t.carries > 100 && t.stuffings > 50 && t.markers > 5, "{cfg}: {t:?}");
            total += t.ops;
        }
        eprintln!("{total} operations compared");
    }

    /// Operations chosen to keep the interval across the carry point: the pending limit
    /// truncates, and cuts, the range thousands of times; three shifts in one operation.
    #[test]
    fn pft_coder_rusthdl_matches_model_at_the_pending_limit() {
        for (cfg, seed) in [("pft", 5), ("pft,rate=1,hlen=3-8-20-50", 6)] {
            let h = hw(cfg);
            let stims = straddling_stims(&h, seed, 20_000).unwrap();
            let t = compare(&h, &stims, None).unwrap();
            eprintln!("{cfg}: {t:?}");
            assert_eq!(t.most_pending, PENDING_MAX as u64);
            assert!(t.cuts > 1000 && t.carries > 100, "{cfg}: {t:?}");
            assert_eq!(t.most_shifts, 3, "{cfg}: a cut range needs a third shift");
        }
    }

    /// The comparison can fail: one wrong expected byte is reported at its cycle.
    #[test]
    fn pft_coder_rusthdl_comparison_catches_a_wrong_byte() {
        let h = hw("pft");
        let stims = random_stims(&h, 7, 3_000);
        let outs = model_outputs(&h, &stims);
        let at = (1_000..).find(|&i| !outs[i].is_empty()).unwrap();
        let err = compare(&h, &stims, Some(at)).unwrap_err();
        assert!(err.starts_with(&format!("cycle {at} ")), "{err}");
        compare(&h, &stims, None).unwrap();
    }

    /// Markers: the 16 marker bytes as the output, then a new coder with probabilities
    /// 1/2 (the same operations after it give the same bytes as after a reset).
    #[test]
    fn pft_coder_marker_output_and_reset() {
        let h = hw("pft");
        let mut sim = CoderSim::new(&h).unwrap();
        let body: Vec<CoderStim> =
            random_stims(&h, 8, 400).into_iter().skip(1).filter(|s| *s != CoderStim::Reset).collect();
        let mut first = Vec::new();
        sim.step(&CoderStim::Reset).unwrap();
        for st in &body {
            first.push(sim.step(st).unwrap());
        }
        let m = sim.step(&CoderStim::Op(CoderOp::Marker)).unwrap();
        assert_eq!((m.len, m.word), output_word(&SYNC_MARKER));
        assert_eq!(m.word, 0x80);
        for (st, want) in body.iter().zip(&first) {
            assert_eq!(sim.step(st).unwrap(), *want);
        }
        let idle = sim.step(&CoderStim::Idle).unwrap();
        assert_eq!((idle.len, idle.word), (0, 0));
    }
}

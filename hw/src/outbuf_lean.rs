//! Trace output buffer, record register and port serializer without a queue-wide barrel
//! shifter: the same cycle behaviour and ports as [`crate::outbuf::OutputBuffer`]
//! (docs/trace-timing.md steps 1 and 4), with the bits kept where they are cheapest to move.
//!
//! * The **record register** holds the record in service or waiting, as the encoder built
//!   it (right-aligned, first bit at `rem - 1`), loaded once when its service starts; `rem`
//!   = `P + H` bits of it have not moved yet, always its last ones. Nothing shifts it. With
//!   staged records (`held`) the top's staging register is the record register.
//! * The **output buffer** is a shift register whose tail is bit 0: bits enter at the
//!   bottom, so its oldest bit, the port's next, is its highest.
//!
//! Two ways to move bits, chosen by the configuration:
//!
//! * **In place** (the SDC modules with the paper's one-pin port, `port = 1`): the
//!   counters follow steps 1 and 4 exactly (`O`, `rem`), but the bits that move stay in
//!   the record (`kept` of them, the record's bits `rem .. rem + kept - 1`). The output-buffer register holds only the
//!   older bits (`pb_count`); the port sends its highest while it holds any, else the
//!   record's bit `kept_next_bit`. In the first cycle whose record register is empty at
//!   start of cycle, the kept bits not yet sent are the record's last ones and enter the
//!   register at the bottom in one shift (`settle`), before any other record is loaded or
//!   staged. So no shifter takes bits out of the record: the move is counting, and the only
//!   data shifter is the settle's, as wide as the output buffer.
//! * **Moved** (wider ports, and pft's byte records, which are cheaper to move): the bits
//!   that move enter the register in the cycle they move (`obuf << moved | chunk`), the
//!   chunk taken out of the record by a staged shifter, and the port picks its
//!   `min(port, O)` bits at bit `O - 1` with a read multiplexer.
//!
//! Shift amounts and counters are masked to the widths their values can reach, so synthesis
//! builds no more levels and bits than the configuration needs.
//!
//! Contract (the SDC top and its compressor keep it): a record is appended only in a cycle
//! whose record register is empty at start of cycle (`P = H = 0`), as a compressor that
//! starts only when idle does. With `held`, `append_bits` keeps the appended record until the
//! record register is empty again, and a record is appended only when the register was also
//! empty at the start of the cycle before (a staged record comes at the end of a service of
//! at least two cycles, which started with the register empty), so the settle of the
//! previous record never meets a restaged one.

use rust_hdl::prelude::*;

use streamtrace_model::BufferConfig;

use crate::config::{amount_mask, HwConfig, RECORD_BITS};
use crate::outbuf::LONGEST_RECORD;

/// Output-buffer register bits (the largest `obuf` the RTL builds fits).
pub const OBUF_REG_BITS: usize = 256;

#[derive(LogicBlock)]
pub struct LeanOutputBuffer {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// A record enters the record register (its service starts this cycle).
    pub append: Signal<In, Bit>,
    pub append_bits: Signal<In, Bits<RECORD_BITS>>,
    pub append_len: Signal<In, Bits<16>>,
    /// The appended record is still in service after this cycle (held back until `complete`).
    pub append_hidden: Signal<In, Bit>,
    /// The record in service completes this cycle.
    pub complete: Signal<In, Bit>,
    /// With the free space in a register (records from a register): whether the next cycle
    /// appends a record and its length, known in this cycle, so that the next cycle's
    /// `rem` is a register too. Ignored otherwise.
    pub append_next: Signal<In, Bit>,
    pub append_len_next: Signal<In, Bits<16>>,
    pub port_data: Signal<Out, Bits<64>>,
    pub port_valid: Signal<Out, Bits<8>>,
    /// Record-register bits at start of cycle (the compressor is busy while nonzero).
    pub record_bits: Signal<Out, Bits<16>>,
    /// Nothing buffered at all.
    pub empty: Signal<Out, Bit>,
    obuf_bits: DFF<Bits<OBUF_REG_BITS>>,
    rec: DFF<Bits<RECORD_BITS>>,
    obuf: DFF<Bits<16>>,
    record: DFF<Bits<16>>,
    hidden: DFF<Bits<16>>,
    ratio_count: DFF<Bits<16>>,
    /// The free space after this cycle's port send, `obuf - (O - sent)`, computed in the
    /// cycle before from that cycle's next state, so that the move's arithmetic starts from
    /// a register: used when records arrive from a register (`k_registered_free`, the SDC
    /// modules with two-cycle services), where that arithmetic was the critical path. With
    /// records straight from the compressor the precomputation would lengthen the path from
    /// the record's length instead, so the free space is computed in the cycle (synthesis
    /// removes the unused logic).
    free_r: DFF<Bits<16>>,
    /// With the free space in a register: this cycle's `rem`, computed in the cycle before,
    /// so that the move's amounts and `rem - free` start from flip-flops. (`rem - free`
    /// itself in a register was measured and not kept: with three-cycle services the staged
    /// record's length is ready only in the cycle before its append, and the subtraction
    /// then lengthened the compressor's assembly path.)
    rem_r: DFF<Bits<16>>,
    rem_now: Signal<Local, Bits<16>>,
    record_next: Signal<Local, Bits<16>>,
    hidden_next: Signal<Local, Bits<16>>,
    rem_next: Signal<Local, Bits<16>>,
    rc_next: Signal<Local, Bits<16>>,
    obuf_next: Signal<Local, Bits<16>>,
    sent_next: Signal<Local, Bits<16>>,
    sent: Signal<Local, Bits<16>>,
    full_word: Signal<Local, Bit>,
    head_shift: Signal<Local, Bits<16>>,
    tail_shift: Signal<Local, Bits<16>>,
    /// Shifted output buffer and record register of which only the low bits are read (the
    /// `unused` in their names tells Verilator's lint, default `--unused-regexp`).
    window_wide_unused: Signal<Local, Bits<OBUF_REG_BITS>>,
    window64: Signal<Local, Bits<64>>,
    low64: Signal<Local, Bits<64>>,
    short_word: Signal<Local, Bits<64>>,
    obuf_after_send: Signal<Local, Bits<16>>,
    /// The record in the register stays this cycle (hidden, its service not complete).
    hold: Signal<Local, Bit>,
    /// `rem - free` with its borrow in bit 16.
    over: Signal<Local, Bits<17>>,
    /// Reassociated sums of the unregistered form (from registers and the record's length,
    /// so that the port's `sent` enters each of them last): `rem + O - obuf`, `O + rem`,
    /// `obuf - O`, and the kept count plus `rem` or plus `obuf - O`.
    over_base: Signal<Local, Bits<17>>,
    obuf_plus_rem: Signal<Local, Bits<16>>,
    room_before_send: Signal<Local, Bits<16>>,
    kept_plus_rem: Signal<Local, Bits<16>>,
    kept_plus_room: Signal<Local, Bits<16>>,
    kept_fill: Signal<Local, Bits<16>>,
    fits: Signal<Local, Bit>,
    src: Signal<Local, Bits<RECORD_BITS>>,
    src_rem: Signal<Local, Bits<16>>,
    free: Signal<Local, Bits<16>>,
    moved: Signal<Local, Bits<16>>,
    take_shift_wide_unused: Signal<Local, Bits<16>>,
    taken_wide_unused: Signal<Local, Bits<RECORD_BITS>>,
    st8: Signal<Local, Bits<RECORD_BITS>>,
    st7: Signal<Local, Bits<RECORD_BITS>>,
    st6: Signal<Local, Bits<RECORD_BITS>>,
    st5: Signal<Local, Bits<RECORD_BITS>>,
    st4: Signal<Local, Bits<RECORD_BITS>>,
    st3: Signal<Local, Bits<RECORD_BITS>>,
    st2: Signal<Local, Bits<RECORD_BITS>>,
    st1: Signal<Local, Bits<RECORD_BITS>>,
    taken_narrow: Signal<Local, Bits<OBUF_REG_BITS>>,
    keep_mask: Signal<Local, Bits<OBUF_REG_BITS>>,
    chunk: Signal<Local, Bits<OBUF_REG_BITS>>,
    shifted: Signal<Local, Bits<OBUF_REG_BITS>>,
    /// The two outcomes of the move with a registered free space: the whole record moves
    /// (`fit_*`), or the buffer fills (`part_*`).
    fit_shifted: Signal<Local, Bits<OBUF_REG_BITS>>,
    fit_chunk: Signal<Local, Bits<OBUF_REG_BITS>>,
    src_narrow: Signal<Local, Bits<OBUF_REG_BITS>>,
    part_shifted: Signal<Local, Bits<OBUF_REG_BITS>>,
    part_chunk: Signal<Local, Bits<OBUF_REG_BITS>>,
    k_registered_free: Constant<Bit>,
    /// In place (one-pin port): the bits that move stay where the record is kept until the
    /// record register is empty, and only then enter the output buffer register (see the
    /// module doc); no shifter takes them out of the record.
    k_in_place: Constant<Bit>,
    /// In-place mode: output-buffer bits held in `obuf_bits` (the oldest), bits moved but
    /// still in the record (`kept`, the newest), and the record bit the port reads next
    /// from there.
    pb_count: DFF<Bits<16>>,
    kept: DFF<Bits<16>>,
    kept_next_bit: DFF<Bits<16>>,
    kept_src: Signal<Local, Bits<RECORD_BITS>>,
    from_reg: Signal<Local, Bit>,
    reg_head_wide_unused: Signal<Local, Bits<OBUF_REG_BITS>>,
    kept_head_wide_unused: Signal<Local, Bits<RECORD_BITS>>,
    pb_after: Signal<Local, Bits<16>>,
    kept_after: Signal<Local, Bits<16>>,
    kept_bit_after: Signal<Local, Bits<16>>,
    settle: Signal<Local, Bit>,
    in_place_bit: Signal<Local, Bit>,
    k_one64: Constant<Bits<64>>,
    /// The settle's shift, `kept_after`, chosen between the registered `kept` and `kept - 1`
    /// (the port sends the oldest kept bit this cycle, `sent_kept`: one bit, as in place
    /// means one pin) rather than subtracted after the port's decision. `pb_count + kept`
    /// likewise: the port's bit leaves that sum whichever part it comes from.
    sent_kept: Signal<Local, Bit>,
    /// The port sends this cycle (`sent != 0`), from the registers directly rather than
    /// through `sent`'s compare and multiplexer.
    sending: Signal<Local, Bit>,
    kept_less: Signal<Local, Bits<16>>,
    settle_amount: Signal<Local, Bits<16>>,
    kept_low: Signal<Local, Bits<OBUF_REG_BITS>>,
    pb_plus_kept: Signal<Local, Bits<16>>,
    /// The record stays in `append_bits` while it moves (staged records): `rec` is unused.
    k_held: Constant<Bit>,
    k_port: Constant<Bits<16>>,
    k_port_mask: Constant<Bits<64>>,
    k_ratio_last: Constant<Bits<16>>,
    k_obuf: Constant<Bits<16>>,
    /// Masks for the shift amounts and the counters: the output buffer's size, the record's
    /// and the ratio's, rounded up to all-ones, so synthesis sees how many shifter levels and
    /// counter bits each needs (it cannot bound a register's value by itself).
    k_obuf_amount: Constant<Bits<16>>,
    k_port_amount: Constant<Bits<16>>,
    k_ratio_amount: Constant<Bits<16>>,
    k_record_amount: Constant<Bits<16>>,
    /// The bits moved in a cycle are at most the output buffer's size and at most the
    /// longest record's (pft's byte records: four shifter levels instead of seven).
    k_move_amount: Constant<Bits<16>>,
    /// Output-buffer bits that can hold data, and record-register bits (longest record).
    k_obuf_live: Constant<Bits<OBUF_REG_BITS>>,
    k_rec_live: Constant<Bits<RECORD_BITS>>,
    k_ones: Constant<Bits<OBUF_REG_BITS>>,
    k_s256: Constant<Bits<16>>,
    k_s128: Constant<Bits<16>>,
    k_s64: Constant<Bits<16>>,
    k_s32: Constant<Bits<16>>,
    k_s16: Constant<Bits<16>>,
    k_s8: Constant<Bits<16>>,
    k_s4: Constant<Bits<16>>,
    k_s2: Constant<Bits<16>>,
    k_s1: Constant<Bits<16>>,
    k_zero16: Constant<Bits<16>>,
    k_zero17: Constant<Bits<17>>,
    k_one16: Constant<Bits<16>>,
    k_zero64: Constant<Bits<64>>,
    k_zero_obuf: Constant<Bits<OBUF_REG_BITS>>,
    k_zero_rec: Constant<Bits<RECORD_BITS>>,
}

impl LeanOutputBuffer {
    pub fn new(h: &HwConfig) -> LeanOutputBuffer {
        // Services of two cycles or more append records from the top's staging register,
        // which keeps each record until the record register is empty (a service starts only
        // then, and the register is restaged only by a service).
        // The precomputed free space shortens the moved form's data path; the in-place move
        // (one pin) has none, and without it two- and three-cycle builds measured 31 and 42
        // LUT4 fewer and 1-2 % faster.
        let staged = h.staged();
        let in_place = h.buffers.port == 1;
        LeanOutputBuffer::with(&h.buffers, h.obuf_bits, LONGEST_RECORD, staged && !in_place, staged, in_place)
    }

    /// The port, ratio and output buffer of `buffers`, `obuf_bits` deep, behind which at
    /// most `longest_record` bits wait; `registered_free`: records arrive from a register,
    /// so the free space is precomputed (the `free_r` register); `held`: `append_bits` keeps
    /// the appended record until the record register is empty, so the record register's
    /// copy of it is not built; `in_place`: the bits that move stay in the record until it
    /// has moved whole (one-pin ports only; it pays for long records: pft's byte records
    /// are cheaper to move).
    pub fn with(
        buffers: &BufferConfig,
        obuf_bits: u32,
        longest_record: usize,
        registered_free: bool,
        held: bool,
        in_place: bool,
    ) -> LeanOutputBuffer {
        assert!(!in_place || buffers.port == 1, "moving in place needs a one-pin port");
        assert!(longest_record <= RECORD_BITS && RECORD_BITS < 512, "the record shifter has 9 stages");
        assert!(obuf_bits as usize <= OBUF_REG_BITS && buffers.port <= 64 && buffers.port <= obuf_bits.max(1) * 64);
        let c16 = |v: u64| Constant::new(v.into());
        let ones = |n: usize, width: usize| {
            let mut m: Bits<OBUF_REG_BITS> = Default::default();
            for i in 0..n.min(width) {
                m = m.replace_bit(i, true);
            }
            m
        };
        let mut rec_live: Bits<RECORD_BITS> = Default::default();
        for i in 0..longest_record {
            rec_live = rec_live.replace_bit(i, true);
        }
        let port = buffers.port as u64;
        LeanOutputBuffer {
            clock: Default::default(),
            reset: Default::default(),
            append: Default::default(),
            append_bits: Default::default(),
            append_len: Default::default(),
            append_hidden: Default::default(),
            complete: Default::default(),
            append_next: Default::default(),
            append_len_next: Default::default(),
            port_data: Default::default(),
            port_valid: Default::default(),
            record_bits: Default::default(),
            empty: Default::default(),
            obuf_bits: Default::default(),
            rec: Default::default(),
            obuf: Default::default(),
            record: Default::default(),
            hidden: Default::default(),
            ratio_count: Default::default(),
            free_r: Default::default(),
            rem_r: Default::default(),
            rem_now: Default::default(),
            record_next: Default::default(),
            hidden_next: Default::default(),
            rem_next: Default::default(),
            rc_next: Default::default(),
            obuf_next: Default::default(),
            sent_next: Default::default(),
            sent: Default::default(),
            full_word: Default::default(),
            head_shift: Default::default(),
            tail_shift: Default::default(),
            window_wide_unused: Default::default(),
            window64: Default::default(),
            low64: Default::default(),
            short_word: Default::default(),
            obuf_after_send: Default::default(),
            hold: Default::default(),
            over_base: Default::default(),
            obuf_plus_rem: Default::default(),
            room_before_send: Default::default(),
            kept_plus_rem: Default::default(),
            kept_plus_room: Default::default(),
            kept_fill: Default::default(),
            over: Default::default(),
            fits: Default::default(),
            src: Default::default(),
            src_rem: Default::default(),
            free: Default::default(),
            moved: Default::default(),
            take_shift_wide_unused: Default::default(),
            taken_wide_unused: Default::default(),
            st8: Default::default(),
            st7: Default::default(),
            st6: Default::default(),
            st5: Default::default(),
            st4: Default::default(),
            st3: Default::default(),
            st2: Default::default(),
            st1: Default::default(),
            taken_narrow: Default::default(),
            keep_mask: Default::default(),
            chunk: Default::default(),
            shifted: Default::default(),
            fit_shifted: Default::default(),
            fit_chunk: Default::default(),
            src_narrow: Default::default(),
            part_shifted: Default::default(),
            part_chunk: Default::default(),
            k_registered_free: Constant::new(registered_free),
            k_in_place: Constant::new(in_place),
            pb_count: Default::default(),
            kept: Default::default(),
            kept_next_bit: Default::default(),
            kept_src: Default::default(),
            from_reg: Default::default(),
            reg_head_wide_unused: Default::default(),
            kept_head_wide_unused: Default::default(),
            pb_after: Default::default(),
            kept_after: Default::default(),
            kept_bit_after: Default::default(),
            settle: Default::default(),
            in_place_bit: Default::default(),
            k_one64: Constant::new(1u64.into()),
            sent_kept: Default::default(),
            sending: Default::default(),
            kept_less: Default::default(),
            settle_amount: Default::default(),
            kept_low: Default::default(),
            pb_plus_kept: Default::default(),
            k_held: Constant::new(held),
            k_port: c16(port),
            k_port_mask: Constant::new((if port == 64 { u64::MAX } else { (1u64 << port) - 1 }).into()),
            k_ratio_last: c16(buffers.ratio as u64 - 1),
            k_obuf: c16(obuf_bits as u64),
            k_obuf_amount: c16(amount_mask(obuf_bits as u64)),
            k_port_amount: c16(amount_mask(port)),
            k_ratio_amount: c16(amount_mask(buffers.ratio as u64 - 1)),
            k_record_amount: c16(amount_mask(longest_record as u64)),
            k_move_amount: c16(amount_mask((obuf_bits as u64).min(longest_record as u64))),
            k_obuf_live: Constant::new(ones(obuf_bits as usize, OBUF_REG_BITS)),
            k_rec_live: Constant::new(rec_live),
            k_ones: Constant::new(ones(OBUF_REG_BITS, OBUF_REG_BITS)),
            k_s256: c16(256),
            k_s128: c16(128),
            k_s64: c16(64),
            k_s32: c16(32),
            k_s16: c16(16),
            k_s8: c16(8),
            k_s4: c16(4),
            k_s2: c16(2),
            k_s1: c16(1),
            k_zero16: c16(0),
            k_zero17: Constant::new(0u64.into()),
            k_one16: c16(1),
            k_zero64: Constant::new(0u64.into()),
            k_zero_obuf: Constant::new(Default::default()),
            k_zero_rec: Constant::new(Default::default()),
        }
    }
}

impl Logic for LeanOutputBuffer {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, obuf_bits, rec, obuf, record, hidden, ratio_count, free_r, rem_r, pb_count, kept, kept_next_bit);
        // 1. Port: min(port, O) bits on port cycles, the oldest (bit O-1) on pin port-1.
        self.sent.next = self.k_zero16.val();
        self.full_word.next = false;
        if self.ratio_count.q.val() == self.k_zero16.val() {
            if self.obuf.q.val() < self.k_port.val() {
                self.sent.next = self.obuf.q.val();
            } else {
                self.sent.next = self.k_port.val();
                self.full_word.next = true;
            }
        }
        // A full word: bits O-1 .. O-port, which the right shift brings to port-1 .. 0.
        self.head_shift.next = (self.obuf.q.val() - self.k_port.val()) & self.k_obuf_amount.val();
        self.window_wide_unused.next = self.obuf_bits.q.val() >> self.head_shift.val();
        self.window64.next = bit_cast::<64, OBUF_REG_BITS>(self.window_wide_unused.val());
        // A partial word (O < port): bits O-1 .. 0 up to pin port-1, zeros below.
        self.tail_shift.next = (self.k_port.val() - self.obuf.q.val()) & self.k_port_amount.val();
        self.low64.next = bit_cast::<64, OBUF_REG_BITS>(self.obuf_bits.q.val());
        self.short_word.next = self.low64.val() << self.tail_shift.val();
        // In place (one pin): the oldest bit is the register's (bit pb_count - 1) while it
        // holds any, else the record's next kept bit.
        if self.k_held.val() {
            self.kept_src.next = self.append_bits.val() & self.k_rec_live.val();
        } else {
            self.kept_src.next = self.rec.q.val();
        }
        self.from_reg.next = self.pb_count.q.val() != self.k_zero16.val();
        self.reg_head_wide_unused.next =
            self.obuf_bits.q.val() >> ((self.pb_count.q.val() - self.k_one16.val()) & self.k_obuf_amount.val());
        self.kept_head_wide_unused.next = self.kept_src.val() >> (self.kept_next_bit.q.val() & self.k_record_amount.val());
        self.in_place_bit.next = (self.from_reg.val() & self.reg_head_wide_unused.val().get_bit(0))
            | (!self.from_reg.val() & self.kept_head_wide_unused.val().get_bit(0));
        if self.k_in_place.val() & (self.sent.val() != self.k_zero16.val()) {
            if self.in_place_bit.val() {
                self.port_data.next = self.k_one64.val();
            } else {
                self.port_data.next = self.k_zero64.val();
            }
        } else if self.full_word.val() {
            self.port_data.next = self.window64.val() & self.k_port_mask.val();
        } else if self.sent.val() != self.k_zero16.val() {
            self.port_data.next = self.short_word.val() & self.k_port_mask.val();
        } else {
            self.port_data.next = self.k_zero64.val();
        }
        self.port_valid.next = bit_cast::<8, 16>(self.sent.val());
        self.rc_next.next = self.ratio_count.q.val() + self.k_one16.val();
        if self.ratio_count.q.val() == self.k_ratio_last.val() {
            self.rc_next.next = self.k_zero16.val();
        }
        self.ratio_count.d.next = self.rc_next.val() & self.k_ratio_amount.val();
        self.obuf_after_send.next = self.obuf.q.val() - self.sent.val();

        // 3. A new record is loaded whole; it joins the record register's movable bits now
        // (one-cycle service) or when its service completes. P and H are never both
        // nonzero (a record is appended only into an empty register, and its hidden bits
        // become movable all at once), so P + H is P | H, and a record moves whole or not
        // at all this cycle (`hold`).
        self.hold.next = (self.append.val() & self.append_hidden.val())
            | (!self.append.val() & (self.hidden.q.val() != self.k_zero16.val()) & !self.complete.val());
        self.hidden_next.next = self.hidden.q.val();
        if self.complete.val() {
            self.hidden_next.next = self.k_zero16.val();
        }
        if self.append.val() & self.append_hidden.val() {
            self.hidden_next.next = self.append_len.val();
        }
        self.hidden.d.next = self.hidden_next.val() & self.k_record_amount.val();
        if self.append.val() {
            self.rem_now.next = self.append_len.val() & self.k_record_amount.val();
        } else {
            self.rem_now.next = self.record.q.val() | self.hidden.q.val();
        }
        if self.append.val() | self.k_held.val() {
            self.src.next = self.append_bits.val() & self.k_rec_live.val();
        } else {
            self.src.next = self.rec.q.val();
        }
        self.rec.d.next = self.src.val();

        // 4. Record register -> output buffer, as much as fits: the next `moved` bits of the
        // record (rem-1 .. rem-moved) enter the output buffer at the bottom. `rem - free`
        // decides both whether it fits and, when it does not, how many bits stay behind
        // (one subtraction from the record's length, where a sum, a minimum and a
        // difference in series were on the path before).
        // With staged records (`held`: the record's length comes from a register) the sums
        // are reassociated so that `sent` (the port's decision, from the occupancy and the
        // ratio counter) comes last: `rem - (obuf - (O - sent))` is `(rem + O - obuf) - sent`
        // (the same 17-bit value: free never wraps). With records from the compressor in
        // the same cycle the length is the late operand, and the first form is kept.
        self.room_before_send.next = self.k_obuf.val() - self.obuf.q.val();
        self.over_base.next = (bit_cast::<17, 16>(self.rem_now.val()) + bit_cast::<17, 16>(self.obuf.q.val()))
            - bit_cast::<17, 16>(self.k_obuf.val());
        self.obuf_plus_rem.next = self.obuf.q.val() + self.rem_now.val();
        if self.k_registered_free.val() {
            self.free.next = self.free_r.q.val();
            self.src_rem.next = self.rem_r.q.val();
            self.over.next = bit_cast::<17, 16>(self.src_rem.val()) - bit_cast::<17, 16>(self.free.val());
        } else if self.k_held.val() {
            self.free.next = self.room_before_send.val() + self.sent.val();
            self.src_rem.next = self.rem_now.val();
            self.over.next = self.over_base.val() - bit_cast::<17, 16>(self.sent.val());
        } else {
            self.free.next = self.k_obuf.val() - self.obuf_after_send.val();
            self.src_rem.next = self.rem_now.val();
            self.over.next = bit_cast::<17, 16>(self.src_rem.val()) - bit_cast::<17, 16>(self.free.val());
        }
        self.fits.next = self.over.val().get_bit(16) | (self.over.val() == self.k_zero17.val());
        self.take_shift_wide_unused.next = self.k_zero16.val();
        if !self.fits.val() {
            self.take_shift_wide_unused.next = bit_cast::<16, 17>(self.over.val()) & self.k_record_amount.val();
        }
        if self.hold.val() {
            self.moved.next = self.k_zero16.val();
            self.record_next.next = self.k_zero16.val();
        } else if self.fits.val() {
            self.moved.next = self.src_rem.val();
            self.record_next.next = self.k_zero16.val();
        } else {
            self.moved.next = self.free.val();
            self.record_next.next = bit_cast::<16, 17>(self.over.val());
        }
        self.record.d.next = self.record_next.val() & self.k_record_amount.val();
        // The record's bits at rem-1 .. rem-moved down to the bottom: a right shift built
        // stage by stage from the largest step down, so each stage keeps only the bits the
        // narrower stages after it can still bring into the output buffer's width.
        if self.take_shift_wide_unused.val().get_bit(8) {
            self.st8.next = self.src.val() >> self.k_s256.val();
        } else {
            self.st8.next = self.src.val();
        }
        if self.take_shift_wide_unused.val().get_bit(7) {
            self.st7.next = self.st8.val() >> self.k_s128.val();
        } else {
            self.st7.next = self.st8.val();
        }
        if self.take_shift_wide_unused.val().get_bit(6) {
            self.st6.next = self.st7.val() >> self.k_s64.val();
        } else {
            self.st6.next = self.st7.val();
        }
        if self.take_shift_wide_unused.val().get_bit(5) {
            self.st5.next = self.st6.val() >> self.k_s32.val();
        } else {
            self.st5.next = self.st6.val();
        }
        if self.take_shift_wide_unused.val().get_bit(4) {
            self.st4.next = self.st5.val() >> self.k_s16.val();
        } else {
            self.st4.next = self.st5.val();
        }
        if self.take_shift_wide_unused.val().get_bit(3) {
            self.st3.next = self.st4.val() >> self.k_s8.val();
        } else {
            self.st3.next = self.st4.val();
        }
        if self.take_shift_wide_unused.val().get_bit(2) {
            self.st2.next = self.st3.val() >> self.k_s4.val();
        } else {
            self.st2.next = self.st3.val();
        }
        if self.take_shift_wide_unused.val().get_bit(1) {
            self.st1.next = self.st2.val() >> self.k_s2.val();
        } else {
            self.st1.next = self.st2.val();
        }
        if self.take_shift_wide_unused.val().get_bit(0) {
            self.taken_wide_unused.next = self.st1.val() >> self.k_s1.val();
        } else {
            self.taken_wide_unused.next = self.st1.val();
        }
        self.taken_narrow.next = bit_cast::<OBUF_REG_BITS, RECORD_BITS>(self.taken_wide_unused.val());
        self.keep_mask.next = !(self.k_ones.val() << (self.moved.val() & self.k_move_amount.val()));
        self.chunk.next = self.taken_narrow.val() & self.keep_mask.val();
        self.shifted.next = self.obuf_bits.q.val() << (self.moved.val() & self.k_move_amount.val());
        // O - sent + moved (staged: O - sent if the record waits, O + rem - sent if it fits,
        // else full).
        if !self.k_held.val() {
            self.obuf_next.next = self.obuf_after_send.val() + self.moved.val();
        } else if self.hold.val() {
            self.obuf_next.next = self.obuf_after_send.val();
        } else if self.fits.val() {
            self.obuf_next.next = self.obuf_plus_rem.val() - self.sent.val();
        } else {
            self.obuf_next.next = self.k_obuf.val();
        }
        // With the free space in a register, both outcomes of the move are built in
        // parallel from amounts known early, the record's length (the whole record moves)
        // and the free space (the buffer fills), and `fits`, which waits on `rem - free`,
        // only selects at the end; the record's shift by `rem - free` is needed only when it
        // does not fit. The same bits as the serial form above.
        self.fit_shifted.next = self.obuf_bits.q.val() << (self.src_rem.val() & self.k_move_amount.val());
        self.src_narrow.next = bit_cast::<OBUF_REG_BITS, RECORD_BITS>(self.src.val());
        self.fit_chunk.next = self.src_narrow.val() & !(self.k_ones.val() << (self.src_rem.val() & self.k_move_amount.val()));
        self.part_shifted.next = self.obuf_bits.q.val() << (self.free.val() & self.k_move_amount.val());
        self.part_chunk.next = self.taken_narrow.val() & !(self.k_ones.val() << (self.free.val() & self.k_move_amount.val()));
        if !self.k_registered_free.val() {
            self.obuf_bits.d.next = (self.shifted.val() | self.chunk.val()) & self.k_obuf_live.val();
        } else if self.hold.val() {
            self.obuf_bits.d.next = self.obuf_bits.q.val() & self.k_obuf_live.val();
            self.obuf_next.next = self.obuf_after_send.val();
        } else if self.fits.val() {
            self.obuf_bits.d.next = (self.fit_shifted.val() | self.fit_chunk.val()) & self.k_obuf_live.val();
            self.obuf_next.next = self.obuf_after_send.val() + self.src_rem.val();
        } else {
            self.obuf_bits.d.next = (self.part_shifted.val() | self.part_chunk.val()) & self.k_obuf_live.val();
            self.obuf_next.next = self.k_obuf.val();
        }
        // In place: the bits that moved this cycle stay in the record (`kept`). Once the
        // record register is empty at start of cycle, the kept bits not yet sent are the
        // record's last ones (bits kept - 1 .. 0) and enter the output-buffer register at
        // the bottom (`settle`), before a service can load or restage another record.
        if self.from_reg.val() {
            self.pb_after.next = self.pb_count.q.val() - self.sent.val();
            self.kept_after.next = self.kept.q.val();
            self.kept_bit_after.next = self.kept_next_bit.q.val();
        } else {
            self.pb_after.next = self.pb_count.q.val();
            self.kept_after.next = self.kept.q.val() - self.sent.val();
            self.kept_bit_after.next = self.kept_next_bit.q.val() - self.sent.val();
        }
        // kept_after + moved, with staged records reassociated as O is above.
        self.kept_plus_rem.next = self.kept.q.val() + self.rem_now.val();
        self.kept_plus_room.next = self.kept.q.val() + self.room_before_send.val();
        if !self.k_held.val() {
            self.kept_fill.next = self.kept_after.val() + self.moved.val();
        } else if self.hold.val() {
            self.kept_fill.next = self.kept_after.val();
        } else if self.fits.val() {
            if self.from_reg.val() {
                self.kept_fill.next = self.kept_plus_rem.val();
            } else {
                self.kept_fill.next = self.kept_plus_rem.val() - self.sent.val();
            }
        } else if self.from_reg.val() {
            self.kept_fill.next = self.kept_plus_room.val() + self.sent.val();
        } else {
            self.kept_fill.next = self.kept_plus_room.val();
        }
        self.sending.next = (self.ratio_count.q.val() == self.k_zero16.val()) & (self.obuf.q.val() != self.k_zero16.val());
        self.sent_kept.next = !self.from_reg.val() & self.sending.val();
        // kept_after != 0, from registers but for the port's bit: kept - 1 when the port
        // takes a kept bit (then kept >= 1), else kept.
        self.settle.next = (self.record.q.val() == self.k_zero16.val())
            & (self.hidden.q.val() == self.k_zero16.val())
            & (self.kept.q.val() != self.k_zero16.val())
            & !(self.sent_kept.val() & (self.kept.q.val() == self.k_one16.val()));
        self.kept_less.next = self.kept.q.val() - self.k_one16.val();
        if self.sent_kept.val() {
            self.settle_amount.next = self.kept_less.val() & self.k_move_amount.val();
        } else {
            self.settle_amount.next = self.kept.q.val() & self.k_move_amount.val();
        }
        self.kept_low.next =
            bit_cast::<OBUF_REG_BITS, RECORD_BITS>(self.kept_src.val()) & !(self.k_ones.val() << self.settle_amount.val());
        self.pb_plus_kept.next = self.pb_count.q.val() + self.kept.q.val();
        if self.k_in_place.val() {
            if self.settle.val() {
                self.obuf_bits.d.next =
                    ((self.obuf_bits.q.val() << self.settle_amount.val()) | self.kept_low.val()) & self.k_obuf_live.val();
                self.pb_count.d.next = (self.pb_plus_kept.val() - self.sent.val()) & self.k_obuf_amount.val();
                self.kept.d.next = self.moved.val() & self.k_obuf_amount.val();
            } else {
                self.obuf_bits.d.next = self.obuf_bits.q.val() & self.k_obuf_live.val();
                self.pb_count.d.next = self.pb_after.val() & self.k_obuf_amount.val();
                self.kept.d.next = self.kept_fill.val() & self.k_obuf_amount.val();
            }
            if self.append.val() {
                self.kept_next_bit.d.next = (self.append_len.val() - self.k_one16.val()) & self.k_record_amount.val();
            } else {
                self.kept_next_bit.d.next = self.kept_bit_after.val() & self.k_record_amount.val();
            }
        }
        self.obuf.d.next = self.obuf_next.val() & self.k_obuf_amount.val();
        // Next cycle's free space (step 1 of that cycle from its start-of-cycle state).
        self.sent_next.next = self.k_zero16.val();
        if self.rc_next.val() == self.k_zero16.val() {
            if self.obuf_next.val() < self.k_port.val() {
                self.sent_next.next = self.obuf_next.val();
            } else {
                self.sent_next.next = self.k_port.val();
            }
        }
        self.free_r.d.next = (self.k_obuf.val() - self.obuf_next.val() + self.sent_next.val()) & self.k_obuf_amount.val();
        // Next cycle's rem (used with the free space in a register).
        self.rem_next.next = self.record_next.val() | self.hidden_next.val();
        if self.append_next.val() {
            self.rem_next.next = self.append_len_next.val() & self.k_record_amount.val();
        }
        self.rem_r.d.next = self.rem_next.val() & self.k_record_amount.val();

        self.record_bits.next = self.record.q.val();
        self.empty.next = (self.obuf.q.val() == self.k_zero16.val())
            & (self.record.q.val() == self.k_zero16.val())
            & (self.hidden.q.val() == self.k_zero16.val());
        if self.reset.val() {
            self.obuf_bits.d.next = self.k_zero_obuf.val();
            self.rec.d.next = self.k_zero_rec.val();
            self.obuf.d.next = self.k_zero16.val();
            self.record.d.next = self.k_zero16.val();
            self.hidden.d.next = self.k_zero16.val();
            self.ratio_count.d.next = self.k_zero16.val();
            self.free_r.d.next = self.k_obuf.val();
            self.rem_r.d.next = self.k_zero16.val();
            self.pb_count.d.next = self.k_zero16.val();
            self.kept.d.next = self.k_zero16.val();
            self.kept_next_bit.d.next = self.k_zero16.val();
        }
    }
}

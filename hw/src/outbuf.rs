//! Trace output buffer, record register and port serializer (docs/trace-timing.md steps 1
//! and 4). One bit queue holds, oldest first from the MSB, the `O` output-buffer bits, the
//! `P` record-register bits and the `H` bits of a record still in service (a service longer
//! than one cycle). Moving bits from the record register into the output buffer changes
//! only the counts, so a record is written once, at its position, when its service starts.
//!
//! Per cycle: on a port cycle (`cycle mod ratio == 0`) the port sends `min(port, O)` bits
//! from the head (pin `port-1` carries the earliest bit; unused low pins are 0); a record
//! that completes joins the record register; then `min(P, obuf - O')` bits move into the
//! output buffer.

use rust_hdl::prelude::*;

use streamtrace_model::BufferConfig;

use crate::config::{HwConfig, QUEUE_BITS, RECORD_BITS};

const _: () = assert!(QUEUE_BITS == 512, "the port taps queue bits 511..448");

#[derive(LogicBlock)]
pub struct OutputBuffer {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// A record enters the queue (its service starts this cycle).
    pub append: Signal<In, Bit>,
    pub append_bits: Signal<In, Bits<RECORD_BITS>>,
    pub append_len: Signal<In, Bits<16>>,
    /// The appended record is still in service after this cycle (held back until `complete`).
    pub append_hidden: Signal<In, Bit>,
    /// The record in service completes this cycle.
    pub complete: Signal<In, Bit>,
    pub port_data: Signal<Out, Bits<64>>,
    pub port_valid: Signal<Out, Bits<8>>,
    /// Record-register bits at start of cycle (the compressor is busy while nonzero).
    pub record_bits: Signal<Out, Bits<16>>,
    /// Nothing buffered at all.
    pub empty: Signal<Out, Bit>,
    queue: DFF<Bits<QUEUE_BITS>>,
    obuf: DFF<Bits<16>>,
    record: DFF<Bits<16>>,
    hidden: DFF<Bits<16>>,
    ratio_count: DFF<Bits<16>>,
    sent: Signal<Local, Bits<16>>,
    obuf_after_send: Signal<Local, Bits<16>>,
    record_eff: Signal<Local, Bits<16>>,
    free: Signal<Local, Bits<16>>,
    moved: Signal<Local, Bits<16>>,
    fill_after_send: Signal<Local, Bits<16>>,
    place_shift: Signal<Local, Bits<16>>,
    placed: Signal<Local, Bits<QUEUE_BITS>>,
    wide_record: Signal<Local, Bits<QUEUE_BITS>>,
    shifted: Signal<Local, Bits<QUEUE_BITS>>,
    head: Signal<Local, Bits<64>>,
    k_port: Constant<Bits<16>>,
    k_ratio_last: Constant<Bits<16>>,
    k_obuf: Constant<Bits<16>>,
    k_queue_bits: Constant<Bits<16>>,
    k_sixty_four: Constant<Bits<16>>,
    /// Queue bits that can ever hold data (output buffer + longest record): lets synthesis
    /// drop the rest of the 512-bit register.
    k_queue_mask: Constant<Bits<QUEUE_BITS>>,
    k_zero16: Constant<Bits<16>>,
    k_one16: Constant<Bits<16>>,
    k_zero_queue: Constant<Bits<QUEUE_BITS>>,
}

/// Bits of the longest record (docs: AOLC run + miss + EXCEPTION + SYNC + padding + marker).
pub const LONGEST_RECORD: usize = 288;

impl OutputBuffer {
    pub fn new(h: &HwConfig) -> OutputBuffer {
        OutputBuffer::with(&h.buffers, h.obuf_bits, LONGEST_RECORD)
    }

    /// For any scheme: the port, ratio and output buffer of `buffers`, `obuf_bits` deep,
    /// behind which at most `longest_record` bits wait (pft: one coder operation's bytes).
    pub fn with(buffers: &BufferConfig, obuf_bits: u32, longest_record: usize) -> OutputBuffer {
        assert!(longest_record <= RECORD_BITS);
        let c16 = |v: u64| Constant::new(v.into());
        let live = (obuf_bits as usize + longest_record).min(QUEUE_BITS);
        let mut mask: Bits<QUEUE_BITS> = Default::default();
        for i in QUEUE_BITS - live..QUEUE_BITS {
            mask = mask.replace_bit(i, true);
        }
        OutputBuffer {
            clock: Default::default(),
            reset: Default::default(),
            append: Default::default(),
            append_bits: Default::default(),
            append_len: Default::default(),
            append_hidden: Default::default(),
            complete: Default::default(),
            port_data: Default::default(),
            port_valid: Default::default(),
            record_bits: Default::default(),
            empty: Default::default(),
            queue: Default::default(),
            obuf: Default::default(),
            record: Default::default(),
            hidden: Default::default(),
            ratio_count: Default::default(),
            sent: Default::default(),
            obuf_after_send: Default::default(),
            record_eff: Default::default(),
            free: Default::default(),
            moved: Default::default(),
            fill_after_send: Default::default(),
            place_shift: Default::default(),
            placed: Default::default(),
            wide_record: Default::default(),
            shifted: Default::default(),
            head: Default::default(),
            k_port: c16(buffers.port as u64),
            k_ratio_last: c16(buffers.ratio as u64 - 1),
            k_obuf: c16(obuf_bits as u64),
            k_queue_bits: c16(QUEUE_BITS as u64),
            k_sixty_four: c16(64),
            k_queue_mask: Constant::new(mask),
            k_zero16: c16(0),
            k_one16: c16(1),
            k_zero_queue: Constant::new(Default::default()),
        }
    }
}

impl Logic for OutputBuffer {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, queue, obuf, record, hidden, ratio_count);
        // 1. Port: min(port, O) bits on port cycles.
        self.sent.next = self.k_zero16.val();
        if self.ratio_count.q.val() == self.k_zero16.val() {
            self.sent.next = self.k_port.val();
            if self.obuf.q.val() < self.k_port.val() {
                self.sent.next = self.obuf.q.val();
            }
        }
        self.head.next = self.queue.q.val().get_bits::<64>(448);
        self.port_data.next = (self.head.val() >> (self.k_sixty_four.val() - self.sent.val())) << (self.k_port.val() - self.sent.val());
        self.port_valid.next = bit_cast::<8, 16>(self.sent.val());
        self.ratio_count.d.next = self.ratio_count.q.val() + self.k_one16.val();
        if self.ratio_count.q.val() == self.k_ratio_last.val() {
            self.ratio_count.d.next = self.k_zero16.val();
        }
        self.obuf_after_send.next = self.obuf.q.val() - self.sent.val();
        self.shifted.next = self.queue.q.val() << self.sent.val();

        // 3. A new record lands behind everything queued; it joins the record register now
        // (one-cycle service) or when its service completes.
        self.fill_after_send.next = (self.obuf_after_send.val() + self.record.q.val()) + self.hidden.q.val();
        self.place_shift.next = (self.k_queue_bits.val() - self.fill_after_send.val()) - self.append_len.val();
        self.wide_record.next = bit_cast::<QUEUE_BITS, RECORD_BITS>(self.append_bits.val());
        self.placed.next = self.k_zero_queue.val();
        if self.append.val() {
            self.placed.next = self.wide_record.val() << self.place_shift.val();
        }
        self.queue.d.next = (self.shifted.val() | self.placed.val()) & self.k_queue_mask.val();
        self.record_eff.next = self.record.q.val();
        if self.complete.val() {
            self.record_eff.next = self.record.q.val() + self.hidden.q.val();
        }
        if self.append.val() & !self.append_hidden.val() {
            self.record_eff.next = self.record.q.val() + self.append_len.val();
        }
        self.hidden.d.next = self.hidden.q.val();
        if self.complete.val() {
            self.hidden.d.next = self.k_zero16.val();
        }
        if self.append.val() & self.append_hidden.val() {
            self.hidden.d.next = self.append_len.val();
        }

        // 4. Record register -> output buffer, as much as fits.
        self.free.next = self.k_obuf.val() - self.obuf_after_send.val();
        self.moved.next = self.free.val();
        if self.record_eff.val() < self.free.val() {
            self.moved.next = self.record_eff.val();
        }
        self.obuf.d.next = self.obuf_after_send.val() + self.moved.val();
        self.record.d.next = self.record_eff.val() - self.moved.val();

        self.record_bits.next = self.record.q.val();
        self.empty.next = (self.obuf.q.val() == self.k_zero16.val())
            & (self.record.q.val() == self.k_zero16.val())
            & (self.hidden.q.val() == self.k_zero16.val());
        if self.reset.val() {
            self.queue.d.next = self.k_zero_queue.val();
            self.obuf.d.next = self.k_zero16.val();
            self.record.d.next = self.k_zero16.val();
            self.hidden.d.next = self.k_zero16.val();
            self.ratio_count.d.next = self.k_zero16.val();
        }
    }
}

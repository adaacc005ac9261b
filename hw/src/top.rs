//! The trace module (paper Fig. 1): stream detector -> stream descriptor buffer ->
//! compressor (SDC, LSP, LVSA, AOLC, record assembly) -> output buffer -> trace port, with
//! the cycle behaviour of docs/trace-timing.md.
//!
//! Ports: `pc` is the interworking address of the retiring instruction (`pc | Thumb`),
//! `class` the model's branch-class code (0 none, 1 dcond, 2 duncond, 3 icond, 4 iuncond,
//! 5 ret). `stall` (policy=stall) asks the core to hold the retiring instruction: it ends a
//! stream and the SDB is full at start of cycle. `trace_end` (held while `stall` is high,
//! with no retirement) ends the trace: the partial stream, the drain, then END.
//! `port_valid` bits of `port_data` are sent this cycle, the earliest on pin `port-1`.
//! `reset` is synchronous and must be high for at least one cycle before the first
//! retirement (flip-flops power up at 0, not at the reset state).

use rust_hdl::prelude::*;

use crate::config::{HwConfig, RECORD_BITS};
use crate::detector::StreamDetector;
use crate::encoder::RecordEncoder;
use crate::outbuf::LONGEST_RECORD;
use crate::outbuf_lean::LeanOutputBuffer;
use crate::sdb::DescriptorBuffer;

#[derive(LogicBlock)]
pub struct TraceModule {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub retire_valid: Signal<In, Bit>,
    pub pc: Signal<In, Bits<32>>,
    pub branch_class: Signal<In, Bits<3>>,
    pub taken: Signal<In, Bit>,
    pub exception: Signal<In, Bit>,
    pub trace_end: Signal<In, Bit>,
    pub stall: Signal<Out, Bit>,
    pub port_data: Signal<Out, Bits<64>>,
    pub port_valid: Signal<Out, Bits<8>>,
    /// END has been sent and nothing is left to send.
    pub trace_done: Signal<Out, Bit>,
    detector: StreamDetector,
    sdb: DescriptorBuffer,
    encoder: RecordEncoder,
    outbuf: LeanOutputBuffer,
    dropping: DFF<Bit>,
    lost: DFF<Bits<32>>,
    ending: DFF<Bit>,
    end_started: DFF<Bit>,
    svc_left: DFF<Bits<8>>,
    /// With `svc_hit >= 2`, the record computed in the start cycle (with `svc_hit >= 3` in
    /// the cycle after it) waits here until its service completes: the compressor's logic
    /// ends at these flip-flops and the move into the output buffer starts from them, two
    /// (three) cycles' paths instead of one.
    staged_bits: DFF<Bits<RECORD_BITS>>,
    staged_len: DFF<Bits<16>>,
    end_active: Signal<Local, Bit>,
    lost_sum: Signal<Local, Bits<32>>,
    sl32: Signal<Local, Bits<32>>,
    push_now: Signal<Local, Bit>,
    push_ovf: Signal<Local, Bit>,
    ovf_count: Signal<Local, Bits<32>>,
    busy: Signal<Local, Bit>,
    idle: Signal<Local, Bit>,
    start_entry: Signal<Local, Bit>,
    start_end: Signal<Local, Bit>,
    service: Signal<Local, Bits<8>>,
    /// `svc_left` and the staged record's length after this cycle (the output buffer
    /// prepares the next cycle's append from them with staged records).
    svc_next: Signal<Local, Bits<8>>,
    staged_len_next: Signal<Local, Bits<16>>,
    k_drop: Constant<Bit>,
    k_staged: Constant<Bit>,
    k_two_stage: Constant<Bit>,
    k_two8: Constant<Bits<8>>,
    k_svc_hit: Constant<Bits<8>>,
    k_svc_miss: Constant<Bits<8>>,
    k_one8: Constant<Bits<8>>,
    /// All-ones covering the longest record and the longest service: what the staged
    /// length and the service counter can hold (synthesis cannot bound a register itself).
    k_record_mask: Constant<Bits<16>>,
    k_svc_mask: Constant<Bits<8>>,
    /// svc_miss - svc_hit - 1 (mod 256): the count a miss found in a service's second cycle
    /// adds instead of counting down.
    k_miss_step: Constant<Bits<8>>,
    /// svc_miss > svc_hit.
    k_miss_longer: Constant<Bit>,
    k_zero8: Constant<Bits<8>>,
    k_zero16: Constant<Bits<16>>,
    k_zero32: Constant<Bits<32>>,
    k_max32: Constant<Bits<32>>,
}

impl TraceModule {
    pub fn new(h: &HwConfig) -> TraceModule {
        TraceModule {
            clock: Default::default(),
            reset: Default::default(),
            retire_valid: Default::default(),
            pc: Default::default(),
            branch_class: Default::default(),
            taken: Default::default(),
            exception: Default::default(),
            trace_end: Default::default(),
            stall: Default::default(),
            port_data: Default::default(),
            port_valid: Default::default(),
            trace_done: Default::default(),
            detector: StreamDetector::new(h.max_sl, h.low),
            sdb: DescriptorBuffer::new(h.sdb_depth as usize, h.max_sl),
            encoder: RecordEncoder::new(h),
            outbuf: LeanOutputBuffer::new(h),
            dropping: Default::default(),
            lost: Default::default(),
            ending: Default::default(),
            end_started: Default::default(),
            svc_left: Default::default(),
            staged_bits: Default::default(),
            staged_len: Default::default(),
            end_active: Default::default(),
            lost_sum: Default::default(),
            sl32: Default::default(),
            push_now: Default::default(),
            push_ovf: Default::default(),
            ovf_count: Default::default(),
            busy: Default::default(),
            idle: Default::default(),
            start_entry: Default::default(),
            start_end: Default::default(),
            service: Default::default(),
            svc_next: Default::default(),
            staged_len_next: Default::default(),
            k_drop: Constant::new(h.drop_policy()),
            k_staged: Constant::new(h.staged()),
            k_two_stage: Constant::new(h.two_stage()),
            k_two8: Constant::new(2u64.into()),
            k_svc_hit: Constant::new((h.buffers.svc_hit as u64).into()),
            k_svc_miss: Constant::new((h.buffers.svc_miss as u64).into()),
            k_one8: Constant::new(1u64.into()),
            k_record_mask: Constant::new(crate::config::amount_mask(LONGEST_RECORD as u64).into()),
            k_miss_longer: Constant::new(h.buffers.svc_miss > h.buffers.svc_hit),
            k_miss_step: Constant::new((((h.buffers.svc_miss + 255 - h.buffers.svc_hit) & 0xFF) as u64).into()),
            k_svc_mask: Constant::new(crate::config::amount_mask(h.buffers.svc_hit.max(h.buffers.svc_miss) as u64).into()),
            k_zero8: Constant::new(0u64.into()),
            k_zero16: Constant::new(0u64.into()),
            k_zero32: Constant::new(0u64.into()),
            k_max32: Constant::new((u32::MAX as u64).into()),
        }
    }
}

impl Logic for TraceModule {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, dropping, lost, ending, end_started, svc_left, staged_bits, staged_len);
        self.detector.clock.next = self.clock.val();
        self.sdb.clock.next = self.clock.val();
        self.encoder.clock.next = self.clock.val();
        self.outbuf.clock.next = self.clock.val();
        self.detector.reset.next = self.reset.val();
        self.sdb.reset.next = self.reset.val();
        self.encoder.reset.next = self.reset.val();
        self.outbuf.reset.next = self.reset.val();

        // Step 5: stream detector and the SDB (full flag = count at start of cycle).
        self.detector.retire_valid.next = self.retire_valid.val();
        self.detector.pc.next = self.pc.val();
        self.detector.branch_class.next = self.branch_class.val();
        self.detector.taken.next = self.taken.val();
        self.detector.exception.next = self.exception.val();
        self.detector.cut.next = self.trace_end.val();
        self.stall.next = !self.k_drop.val() & self.detector.desc_valid.val() & self.sdb.full.val();
        self.detector.hold.next = self.stall.val();
        self.end_active.next = self.ending.q.val() | (self.trace_end.val() & !self.stall.val());

        self.sl32.next = bit_cast::<32, 16>(self.detector.desc_sl.val());
        self.lost_sum.next = self.lost.q.val() + self.sl32.val();
        if self.lost.q.val() > (self.k_max32.val() - self.sl32.val()) {
            self.lost_sum.next = self.k_max32.val();
        }
        // Which entry goes to the SDB (decided in locals; each SDB input is then written
        // once, so no glitch wakes the SDB block: docs in verilog::repeated_cross_block_writes).
        self.push_now.next = false;
        self.push_ovf.next = false;
        self.ovf_count.next = self.lost_sum.val();
        if self.detector.desc_valid.val() {
            if !self.sdb.full.val() {
                self.push_now.next = true;
                if self.dropping.q.val() {
                    // The stream that ends when there is room again is lost too.
                    self.push_ovf.next = true;
                    self.dropping.d.next = false;
                    self.lost.d.next = self.k_zero32.val();
                }
            } else if self.k_drop.val() {
                self.dropping.d.next = true;
                self.lost.d.next = self.lost_sum.val();
            }
        } else if self.end_active.val() & self.dropping.q.val() & !self.sdb.full.val() {
            // The trace ends while dropping: the overflow entry as soon as there is room.
            self.push_now.next = true;
            self.push_ovf.next = true;
            self.ovf_count.next = self.lost.q.val();
            self.dropping.d.next = false;
            self.lost.d.next = self.k_zero32.val();
        }
        if self.push_ovf.val() {
            self.sdb.push_sa.next = self.ovf_count.val();
            self.sdb.push_sl.next = self.k_zero16.val();
            self.sdb.push_exc.next = false;
            self.sdb.push_dcond.next = false;
        } else {
            self.sdb.push_sa.next = self.detector.desc_sa.val();
            self.sdb.push_sl.next = self.detector.desc_sl.val();
            self.sdb.push_exc.next = self.detector.desc_exc.val();
            self.sdb.push_dcond.next = self.detector.desc_dcond.val();
        }
        self.sdb.push.next = self.push_now.val();

        // Steps 2-3: the compressor starts when idle at start of cycle; END once the SDB,
        // the compressor and the record register are empty after the end of the trace.
        self.busy.next = self.svc_left.q.val() != self.k_zero8.val();
        self.idle.next = !self.busy.val() & (self.outbuf.record_bits.val() == self.k_zero16.val());
        self.start_entry.next = self.idle.val() & !self.sdb.empty.val();
        // With the SDB empty at start of cycle it is not full, so nothing stalls
        // (end_active is `ending | trace_end`) and, while not dropping, a push is exactly a
        // descriptor: the same condition without the stall and push logic on the path into
        // the encoder.
        self.start_end.next = self.idle.val()
            & self.sdb.empty.val()
            & (self.ending.q.val() | self.trace_end.val())
            & !self.end_started.q.val()
            & !self.detector.desc_valid.val()
            & !self.dropping.q.val();
        self.sdb.pop.next = self.start_entry.val();
        self.encoder.start.next = self.start_entry.val() | self.start_end.val();
        self.encoder.is_end.next = self.start_end.val();
        self.encoder.sa.next = self.sdb.head_sa.val();
        self.encoder.sl.next = self.sdb.head_sl.val();
        self.encoder.exc.next = self.sdb.head_exc.val();
        self.encoder.dcond.next = self.sdb.head_dcond.val();
        self.encoder.next_sa.next = self.sdb.next_sa.val();
        self.encoder.next_sl.next = self.sdb.next_sl.val();
        // With two stages the compressor says in the cycle after the start whether the entry
        // missed; the service counter then adds the miss's extra cycles (it holds at least
        // svc_hit - 1 >= 2 then, so nothing that tests it for 0 or 1 sees the difference).
        self.service.next = self.k_svc_hit.val();
        if self.encoder.miss.val() & !self.k_two_stage.val() {
            self.service.next = self.k_svc_miss.val();
        }
        // Step 3: the record enters the record register when its service completes. With
        // one-cycle services it is appended in the start cycle (hidden while a miss's
        // second cycle runs); with svc_hit >= 2 every service has a second cycle, so the
        // record is registered at the end of the start cycle and appended from there
        // when the service completes (docs/trace-timing.md section 3, steps 2-4: the same
        // cycles either way).
        if self.k_staged.val() {
            self.outbuf.append.next = self.svc_left.q.val() == self.k_one8.val();
            self.outbuf.append_bits.next = self.staged_bits.q.val();
            self.outbuf.append_len.next = self.staged_len.q.val();
            self.outbuf.append_hidden.next = false;
            self.outbuf.complete.next = false;
        } else {
            self.outbuf.append.next = self.start_entry.val() | self.start_end.val();
            self.outbuf.append_bits.next = self.encoder.rec_bits.val();
            self.outbuf.append_len.next = self.encoder.rec_len.val();
            self.outbuf.append_hidden.next = self.service.val() != self.k_one8.val();
            self.outbuf.complete.next = self.svc_left.q.val() == self.k_one8.val();
        }
        // (dff_setup! makes the staging register hold otherwise.) The record is ready in the
        // start cycle, or with `svc_hit >= 3` in the cycle after it (the compressor's two
        // stages, encoder.rs); either way before the service completes.
        self.staged_len_next.next = self.staged_len.q.val();
        if self.encoder.rec_ready.val() {
            self.staged_bits.d.next = self.encoder.rec_bits.val();
            self.staged_len_next.next = self.encoder.rec_len.val();
        }
        self.staged_len.d.next = self.staged_len_next.val() & self.k_record_mask.val();
        self.svc_next.next = self.svc_left.q.val();
        if self.busy.val() {
            self.svc_next.next = self.svc_left.q.val() - self.k_one8.val();
            if self.encoder.miss.val() & self.k_two_stage.val() {
                self.svc_next.next = self.svc_left.q.val() + self.k_miss_step.val();
            }
        }
        if self.start_entry.val() | self.start_end.val() {
            self.svc_next.next = self.service.val() - self.k_one8.val();
        }
        if self.reset.val() {
            self.svc_next.next = self.k_zero8.val();
        }
        self.svc_left.d.next = self.svc_next.val() & self.k_svc_mask.val();
        // Staged records: the next cycle appends when its service completes then. With
        // services of three cycles or more that is a service two cycles from its end (one
        // starting now has at least two more), a register compare that keeps the SDC lookup,
        // which decides a starting service's length, off this path; a miss reported in the
        // service's second cycle (when the counter holds svc_hit - 1) lengthens it instead.
        if self.k_two_stage.val() {
            self.outbuf.append_next.next =
                (self.svc_left.q.val() == self.k_two8.val()) & !(self.encoder.miss.val() & self.k_miss_longer.val());
        } else {
            self.outbuf.append_next.next = self.k_staged.val() & (self.svc_next.val() == self.k_one8.val());
        }
        self.outbuf.append_len_next.next = self.staged_len_next.val();
        if self.trace_end.val() & !self.stall.val() {
            self.ending.d.next = true;
        }
        if self.start_end.val() {
            self.end_started.d.next = true;
        }

        // Step 1: the port.
        self.port_data.next = self.outbuf.port_data.val();
        self.port_valid.next = self.outbuf.port_valid.val();
        self.trace_done.next = self.end_started.q.val() & !self.busy.val() & self.outbuf.empty.val();

        if self.reset.val() {
            self.dropping.d.next = false;
            self.lost.d.next = self.k_zero32.val();
            self.ending.d.next = false;
            self.end_started.d.next = false;
        }
    }
}

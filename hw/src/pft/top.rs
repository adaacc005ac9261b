//! The pft trace module (docs/trace-timing.md section 7): front end and direction predictor
//! -> job buffer -> sequencer -> range coder -> output buffer -> trace port.
//!
//! Ports as the SDC module's ([`crate::top::TraceModule`]) plus `insn` (the instruction
//! word; Thumb: the halfword in the low bits) and `next_pc` (the interworking address of
//! the next instruction), which pft's points and targets need. `stall` (policy=stall) holds
//! the retiring instruction whose job finds the job buffer full at start of cycle.
//! `trace_end` (after the last retirement) drains the buffer and the coder, then codes END.

use rust_hdl::prelude::*;

use super::coder::PftRangeCoder;
use super::front::PftFrontEnd;
use super::jobbuf::{JobBuffer, JobWords};
use super::seq::JobSequencer;
use super::tage::DirectionPredictorBlock;
use super::config::CODER_RECORD_BITS;
use super::{PftHwConfig, ESC_END, ESC_OVERFLOW};
use crate::config::RECORD_BITS;
use crate::outbuf_lean::LeanOutputBuffer;

#[derive(LogicBlock)]
pub struct PftTraceModule {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub retire_valid: Signal<In, Bit>,
    pub pc: Signal<In, Bits<32>>,
    pub insn: Signal<In, Bits<32>>,
    pub branch_class: Signal<In, Bits<3>>,
    pub taken: Signal<In, Bit>,
    pub exception: Signal<In, Bit>,
    pub next_pc: Signal<In, Bits<32>>,
    pub trace_end: Signal<In, Bit>,
    pub stall: Signal<Out, Bit>,
    pub port_data: Signal<Out, Bits<64>>,
    pub port_valid: Signal<Out, Bits<8>>,
    /// END has been coded and nothing is left to send.
    pub trace_done: Signal<Out, Bit>,
    front: PftFrontEnd,
    direction: DirectionPredictorBlock,
    jobs: JobBuffer,
    seq: JobSequencer,
    coder: PftRangeCoder,
    outbuf: LeanOutputBuffer,
    dropping: DFF<Bit>,
    drop_gap: DFF<Bits<16>>,
    lost: DFF<Bits<32>>,
    ending: DFF<Bit>,
    end_started: DFF<Bit>,
    end_now: Signal<Local, Bit>,
    lost_inc: Signal<Local, Bits<32>>,
    push_job: Signal<Local, Bit>,
    push_overflow: Signal<Local, Bit>,
    /// The module is drained at start of cycle (trace-timing.md 7, versions 1.6-1.7).
    drained: Signal<Local, Bit>,
    /// This cycle's instruction is lost (dropping, or its job finds the buffer full).
    lose_now: Signal<Local, Bit>,
    overflow_w1: Signal<Local, Bits<64>>,
    end_w1: Signal<Local, Bits<64>>,
    start_end: Signal<Local, Bit>,
    act: Signal<Local, Bit>,
    /// The coder's next step is an operation: the sequencer may issue one.
    op_act: Signal<Local, Bit>,
    /// The job buffer is full for this cycle's job: after the sequencer's take (version
    /// 1.4) it holds `sdb` jobs or fewer free address words than the job needs (1.5).
    buf_full: Signal<Local, Bit>,
    /// Address words of the job the front end offers (trace-timing.md 7, version 1.5),
    /// and of the job the buffer may take this cycle (an OVERFLOW job's 1 while dropping).
    offer_words: JobWords,
    want_words: Signal<Local, Bits<2>>,
    /// The offered job's word bound: its words with a taken target point counted as a miss.
    offer_bound: JobWords,
    bound_words: Signal<Local, Bits<2>>,
    k_drop: Constant<Bit>,
    k_zero16: Constant<Bits<16>>,
    k_byte16: Constant<Bits<16>>,
    k_zero32: Constant<Bits<32>>,
    k_max32: Constant<Bits<32>>,
    k_one32: Constant<Bits<32>>,
    k_zero64: Constant<Bits<64>>,
    k_sh32: Constant<Bits<8>>,
    k_overflow_tail: Constant<Bits<64>>,
    k_one2: Constant<Bits<2>>,
    k_end_tail: Constant<Bits<64>>,
}

impl PftTraceModule {
    pub fn new(h: &PftHwConfig) -> PftTraceModule {
        // Word 1 of a tail-only record: tail (bit 50) and its type (bits 49:48).
        let tail = |kind: u8| Constant::new(((1u64 << 50) | (kind as u64) << 48).into());
        PftTraceModule {
            clock: Default::default(),
            reset: Default::default(),
            retire_valid: Default::default(),
            pc: Default::default(),
            insn: Default::default(),
            branch_class: Default::default(),
            taken: Default::default(),
            exception: Default::default(),
            next_pc: Default::default(),
            trace_end: Default::default(),
            stall: Default::default(),
            port_data: Default::default(),
            port_valid: Default::default(),
            trace_done: Default::default(),
            front: PftFrontEnd::new(h),
            direction: DirectionPredictorBlock::new(h),
            jobs: JobBuffer::new(h.sdb_depth as usize),
            seq: JobSequencer::new(h),
            coder: PftRangeCoder::new(h),
            outbuf: LeanOutputBuffer::with(&h.buffers, h.obuf_bits, CODER_RECORD_BITS, false, false, false),
            dropping: Default::default(),
            drop_gap: Default::default(),
            lost: Default::default(),
            ending: Default::default(),
            end_started: Default::default(),
            end_now: Default::default(),
            lost_inc: Default::default(),
            push_job: Default::default(),
            push_overflow: Default::default(),
            drained: Default::default(),
            lose_now: Default::default(),
            overflow_w1: Default::default(),
            end_w1: Default::default(),
            start_end: Default::default(),
            act: Default::default(),
            op_act: Default::default(),
            buf_full: Default::default(),
            offer_words: Default::default(),
            want_words: Default::default(),
            offer_bound: Default::default(),
            bound_words: Default::default(),
            k_drop: Constant::new(h.drop_policy()),
            k_zero16: Constant::new(0u64.into()),
            k_byte16: Constant::new(8u64.into()),
            k_zero32: Constant::new(0u64.into()),
            k_max32: Constant::new((u32::MAX as u64).into()),
            k_one32: Constant::new(1u64.into()),
            k_zero64: Constant::new(0u64.into()),
            k_sh32: Constant::new(32u64.into()),
            k_overflow_tail: tail(ESC_OVERFLOW),
            k_one2: Constant::new(1u64.into()),
            k_end_tail: tail(ESC_END),
        }
    }
}

impl Logic for PftTraceModule {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, dropping, drop_gap, lost, ending, end_started);
        self.front.clock.next = self.clock.val();
        self.direction.clock.next = self.clock.val();
        self.jobs.clock.next = self.clock.val();
        self.seq.clock.next = self.clock.val();
        self.coder.clock.next = self.clock.val();
        self.outbuf.clock.next = self.clock.val();
        self.front.reset.next = self.reset.val();
        self.direction.reset.next = self.reset.val();
        self.jobs.reset.next = self.reset.val();
        self.seq.reset.next = self.reset.val();
        self.coder.reset.next = self.reset.val();
        self.outbuf.reset.next = self.reset.val();

        // Front end and direction predictor.
        self.front.retire_valid.next = self.retire_valid.val();
        self.front.pc.next = self.pc.val();
        self.front.insn.next = self.insn.val();
        self.front.branch_class.next = self.branch_class.val();
        self.front.taken.next = self.taken.val();
        self.front.exception.next = self.exception.val();
        self.front.next_pc.next = self.next_pc.val();
        self.direction.iw_addr.next = self.front.dir_addr.val();
        self.direction.update.next = self.front.dir_update.val();
        self.direction.taken.next = self.front.dir_taken.val();
        self.direction.push.next = self.front.dir_push.val();
        self.direction.clear.next = self.front.dir_clear.val();
        self.front.dir_pred.next = self.direction.pred.val();
        self.front.dir_ctx.next = self.direction.ctx.val();

        // Coder: one step in each cycle whose record register is empty at start of cycle, the
        // registered operation when it has no byte or shift left. The operation register
        // loads when empty or performed; holding no job, the sequencer then takes the
        // buffer's head, and that entry is free for this cycle's job (the take from
        // registers, the job's words from the front end: the full flag does not depend on the
        // push below; trace-timing.md 7, version 1.7).
        self.act.next = self.outbuf.record_bits.val() == self.k_zero16.val();
        self.op_act.next = self.act.val() & !self.coder.busy.val();
        self.jobs.take.next = self.seq.take.val();
        // The words of the job that may enter (JobWords, which also decodes the buffer's
        // head): the front end's, or the OVERFLOW job's count while dropping. From the front
        // end's outputs and registers, never from the push below.
        self.offer_words.has_start.next = self.front.job_w0.val().get_bit(60);
        self.offer_words.exc.next = self.front.job_w0.val().get_bit(62);
        self.offer_words.off.next = self.front.job_w1.val().get_bit(59);
        self.offer_words.tail.next = self.front.job_w1.val().get_bit(50);
        self.offer_words.tail_type.next = self.front.job_w1.val().get_bits::<2>(48);
        // The full flag counts the word bound (trace-timing.md 7, version 1.7): the start
        // and exception flags and the taken target point (`tgt`, from the instruction alone)
        // in place of the missed target's offset, which waits for the target prediction.
        self.offer_bound.has_start.next = self.front.job_w0.val().get_bit(60);
        self.offer_bound.exc.next = self.front.job_w0.val().get_bit(62);
        self.offer_bound.off.next = self.front.job_w1.val().get_bit(53);
        self.offer_bound.tail.next = self.front.job_w1.val().get_bit(50);
        self.offer_bound.tail_type.next = self.front.job_w1.val().get_bits::<2>(48);
        self.want_words.next = self.offer_words.words.val();
        self.bound_words.next = self.offer_bound.words.val();
        if self.dropping.q.val() {
            self.want_words.next = self.k_one2.val();
            self.bound_words.next = self.k_one2.val();
        }
        self.jobs.want.next = self.want_words.val();
        self.jobs.bound.next = self.bound_words.val();
        self.buf_full.next = self.jobs.full.val();

        // Job buffer (trace-timing.md 7): stall holds the instruction; drop loses it and
        // every instruction after it until one retires in a cycle that starts drained (the
        // buffer, the coder, the record register and the output buffer empty: registers
        // only), whose place goes to the OVERFLOW job. A lost instruction changes nothing in
        // the front end, as a held one does not.
        self.stall.next = (!self.k_drop.val() & self.front.job_valid.val()) & self.buf_full.val();
        self.drained.next = ((self.jobs.empty.val() & !self.seq.busy.val()) & (!self.seq.staged.val() & !self.coder.busy.val()))
            & self.outbuf.empty.val();
        self.lose_now.next =
            self.k_drop.val() & (self.dropping.q.val() | (self.front.job_valid.val() & self.buf_full.val()));
        self.front.hold.next = self.stall.val() | self.lose_now.val();
        // The trace has ended: before this cycle, or in it (no instruction retires in the
        // cycle of `trace_end` or after it, verilog-out/README.md, so no job is offered
        // then). From the input and a register only: END's take stays off the front end's
        // paths.
        self.end_now.next = self.ending.q.val() | self.trace_end.val();
        self.lost_inc.next = self.lost.q.val() + self.k_one32.val();
        if self.lost.q.val() == self.k_max32.val() {
            self.lost_inc.next = self.lost.q.val();
        }
        self.push_job.next = false;
        self.push_overflow.next = false;
        if self.dropping.q.val() {
            if self.retire_valid.val() {
                self.lost.d.next = self.lost_inc.val();
                if self.drained.val() {
                    self.push_overflow.next = true;
                }
            } else if self.end_now.val() & self.drained.val() {
                self.push_overflow.next = true;
            }
        } else if self.front.job_valid.val() & !self.buf_full.val() {
            self.push_job.next = true;
        } else if (self.front.job_valid.val() & self.buf_full.val()) & self.k_drop.val() {
            self.dropping.d.next = true;
            self.drop_gap.d.next = self.front.gap.val();
            self.lost.d.next = self.k_one32.val();
        }
        self.overflow_w1.next = bit_cast::<64, 32>(self.lost.q.val())
            | (bit_cast::<64, 16>(self.drop_gap.q.val()) << self.k_sh32.val())
            | self.k_overflow_tail.val();
        if self.retire_valid.val() {
            self.overflow_w1.next = bit_cast::<64, 32>(self.lost_inc.val())
                | (bit_cast::<64, 16>(self.drop_gap.q.val()) << self.k_sh32.val())
                | self.k_overflow_tail.val();
        }
        if self.push_overflow.val() {
            self.dropping.d.next = false;
            self.lost.d.next = self.k_zero32.val();
        }
        // Inputs of the other blocks are written once per evaluation (if/else, not a default
        // and an override): an event-driven simulator would chase the glitch around the
        // loop through the sequencer and the coder.
        self.front.restart.next = self.push_overflow.val();
        self.jobs.push.next = self.push_job.val() | self.push_overflow.val();
        if self.push_overflow.val() {
            self.jobs.push_w0.next = self.k_zero64.val();
            self.jobs.push_w1.next = self.overflow_w1.val();
        } else {
            self.jobs.push_w0.next = self.front.job_w0.val();
            self.jobs.push_w1.next = self.front.job_w1.val();
        }

        // END once the trace has ended and everything before it is out.
        self.start_end.next = self.seq.take.val()
            & (self.jobs.empty.val() & self.end_now.val())
            & !self.end_started.q.val()
            & !self.dropping.q.val();
        self.end_w1.next = (bit_cast::<64, 16>(self.front.gap.val()) << self.k_sh32.val()) | self.k_end_tail.val();
        self.seq.act.next = self.op_act.val();
        self.coder.step.next = self.act.val();
        self.seq.buf_empty.next = self.jobs.empty.val() & !self.start_end.val();
        if self.start_end.val() {
            self.seq.head_w0.next = self.k_zero64.val();
            self.seq.head_w1.next = self.end_w1.val();
        } else {
            self.seq.head_w0.next = self.jobs.head_w0.val();
            self.seq.head_w1.next = self.jobs.head_w1.val();
        }
        self.jobs.pop.next = self.seq.pop.val() & !self.start_end.val();
        self.coder.op_valid.next = self.seq.op_valid.val();
        self.coder.op_kind.next = self.seq.op_kind.val();
        self.coder.op_escape.next = self.seq.op_escape.val();
        self.coder.op_hit.next = self.seq.op_hit.val();
        self.coder.op_fixed.next = self.seq.op_fixed.val();
        self.coder.op_ctx.next = self.seq.op_ctx.val();
        self.coder.op_value.next = self.seq.op_value.val();
        self.coder.op_bits.next = self.seq.op_bits.val();

        // The byte a step emits enters the record register in the same cycle (the buffer
        // reads the length only with `append`).
        self.outbuf.append.next = self.coder.out_valid.val();
        self.outbuf.append_bits.next = bit_cast::<RECORD_BITS, 8>(self.coder.out_byte.val());
        self.outbuf.append_len.next = self.k_byte16.val();
        self.outbuf.append_hidden.next = false;
        self.outbuf.complete.next = false;
        // (Only for records from a register: the free space here is computed in the cycle.)
        self.outbuf.append_next.next = false;
        self.outbuf.append_len_next.next = self.k_byte16.val();
        if self.trace_end.val() {
            self.ending.d.next = true;
        }
        if self.start_end.val() {
            self.end_started.d.next = true;
        }

        self.port_data.next = self.outbuf.port_data.val();
        self.port_valid.next = self.outbuf.port_valid.val();
        self.trace_done.next =
            ((self.end_started.q.val() & !self.seq.busy.val()) & (!self.seq.staged.val() & !self.coder.busy.val()))
            & self.outbuf.empty.val();

        if self.reset.val() {
            self.dropping.d.next = false;
            self.drop_gap.d.next = self.k_zero16.val();
            self.lost.d.next = self.k_zero32.val();
            self.ending.d.next = false;
            self.end_started.d.next = false;
        }
    }
}

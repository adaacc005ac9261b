//! The pft job buffer (docs/trace-timing.md section 7: it takes the SDB's place): a
//! first-word-fall-through FIFO of job records (two 64-bit words each) in registers, any
//! depth 1..=64. `fill` is registered, so "full at start of cycle" is `fill == depth`.

use rust_hdl::prelude::*;

/// Each entry is two 64-bit words: the record width the model's storage count uses.
const _: () = assert!(2 * 64 == streamtrace_model::pft::JOB_RECORD_BITS);

#[derive(LogicBlock)]
pub struct JobBuffer {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub push: Signal<In, Bit>,
    pub push_w0: Signal<In, Bits<64>>,
    pub push_w1: Signal<In, Bits<64>>,
    pub pop: Signal<In, Bit>,
    pub head_w0: Signal<Out, Bits<64>>,
    pub head_w1: Signal<Out, Bits<64>>,
    pub full: Signal<Out, Bit>,
    pub empty: Signal<Out, Bit>,
    w0: Vec<DFF<Bits<64>>>,
    w1: Vec<DFF<Bits<64>>>,
    /// The head entry, selected here and written to the outputs once (no default-then-
    /// override glitch on signals the sequencer reads).
    head_sel0: Signal<Local, Bits<64>>,
    head_sel1: Signal<Local, Bits<64>>,
    rd_ptr: DFF<Bits<8>>,
    wr_ptr: DFF<Bits<8>>,
    fill: DFF<Bits<8>>,
    k_last: Constant<Bits<8>>,
    k_depth: Constant<Bits<8>>,
    k_one: Constant<Bits<8>>,
    k_zero: Constant<Bits<8>>,
    k_zero64: Constant<Bits<64>>,
    _depth: usize,
}

impl JobBuffer {
    pub fn new(depth: usize) -> JobBuffer {
        assert!((1..=64).contains(&depth));
        JobBuffer {
            clock: Default::default(),
            reset: Default::default(),
            push: Default::default(),
            push_w0: Default::default(),
            push_w1: Default::default(),
            pop: Default::default(),
            head_w0: Default::default(),
            head_w1: Default::default(),
            head_sel0: Default::default(),
            head_sel1: Default::default(),
            full: Default::default(),
            empty: Default::default(),
            w0: (0..depth).map(|_| Default::default()).collect(),
            w1: (0..depth).map(|_| Default::default()).collect(),
            rd_ptr: Default::default(),
            wr_ptr: Default::default(),
            fill: Default::default(),
            k_last: Constant::new(((depth - 1) as u64).into()),
            k_depth: Constant::new((depth as u64).into()),
            k_one: Constant::new(1u64.into()),
            k_zero: Constant::new(0u64.into()),
            k_zero64: Constant::new(0u64.into()),
            _depth: depth,
        }
    }
}

impl Logic for JobBuffer {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, rd_ptr, wr_ptr, fill);
        self.head_sel0.next = self.k_zero64.val();
        self.head_sel1.next = self.k_zero64.val();
        for i in 0..self._depth {
            self.w0[i].clock.next = self.clock.val();
            self.w1[i].clock.next = self.clock.val();
            self.w0[i].d.next = self.w0[i].q.val();
            self.w1[i].d.next = self.w1[i].q.val();
            if self.push.val() & (self.wr_ptr.q.val().index() == i) {
                self.w0[i].d.next = self.push_w0.val();
                self.w1[i].d.next = self.push_w1.val();
            }
            if self.rd_ptr.q.val().index() == i {
                self.head_sel0.next = self.w0[i].q.val();
                self.head_sel1.next = self.w1[i].q.val();
            }
        }
        self.head_w0.next = self.head_sel0.val();
        self.head_w1.next = self.head_sel1.val();
        self.full.next = self.fill.q.val() == self.k_depth.val();
        self.empty.next = self.fill.q.val() == self.k_zero.val();
        if self.push.val() {
            self.wr_ptr.d.next = self.wr_ptr.q.val() + self.k_one.val();
            if self.wr_ptr.q.val() == self.k_last.val() {
                self.wr_ptr.d.next = self.k_zero.val();
            }
        }
        if self.pop.val() {
            self.rd_ptr.d.next = self.rd_ptr.q.val() + self.k_one.val();
            if self.rd_ptr.q.val() == self.k_last.val() {
                self.rd_ptr.d.next = self.k_zero.val();
            }
        }
        if self.push.val() & !self.pop.val() {
            self.fill.d.next = self.fill.q.val() + self.k_one.val();
        }
        if !self.push.val() & self.pop.val() {
            self.fill.d.next = self.fill.q.val() - self.k_one.val();
        }
        if self.reset.val() {
            self.rd_ptr.d.next = self.k_zero.val();
            self.wr_ptr.d.next = self.k_zero.val();
            self.fill.d.next = self.k_zero.val();
        }
    }
}

//! Stream descriptor buffer: a first-word-fall-through FIFO of any depth in registers
//! (docs/trace-timing.md). An entry is `{SA, SL, exception, dcond}`; `SL = 0` marks an
//! overflow entry whose SA field holds the lost-instruction count (section 4).
//! `fill` is registered, so "full at start of cycle" is `fill == depth`.
//!
//! Entries shift towards slot 0 on a pop, so the head is always slot 0: the `head_*`
//! outputs are flip-flop outputs (no read multiplexer, nothing to glitch), and the head of
//! the next cycle is slot 0's next value, `next_*`.

use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct DescriptorBuffer {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub push: Signal<In, Bit>,
    pub push_sa: Signal<In, Bits<32>>,
    pub push_sl: Signal<In, Bits<16>>,
    pub push_exc: Signal<In, Bit>,
    pub push_dcond: Signal<In, Bit>,
    pub pop: Signal<In, Bit>,
    pub head_sa: Signal<Out, Bits<32>>,
    pub head_sl: Signal<Out, Bits<16>>,
    pub head_exc: Signal<Out, Bit>,
    pub head_dcond: Signal<Out, Bit>,
    /// The head at start of next cycle (meaningful when the SDB will not be empty): the
    /// compressor reads its synchronous tables for it one cycle ahead.
    pub next_sa: Signal<Out, Bits<32>>,
    pub next_sl: Signal<Out, Bits<16>>,
    pub full: Signal<Out, Bit>,
    pub empty: Signal<Out, Bit>,
    sa: Vec<DFF<Bits<32>>>,
    sl: Vec<DFF<Bits<16>>>,
    exc: Vec<DFF<Bit>>,
    dcond: Vec<DFF<Bit>>,
    fill: DFF<Bits<8>>,
    target: Signal<Local, Bits<8>>,
    k_depth: Constant<Bits<8>>,
    k_one: Constant<Bits<8>>,
    k_zero: Constant<Bits<8>>,
    k_sl_mask: Constant<Bits<16>>,
    _depth: usize,
}

impl DescriptorBuffer {
    /// `depth` entries of streams of at most `max_sl` instructions.
    pub fn new(depth: usize, max_sl: u32) -> DescriptorBuffer {
        assert!((1..=64).contains(&depth));
        DescriptorBuffer {
            clock: Default::default(),
            reset: Default::default(),
            push: Default::default(),
            push_sa: Default::default(),
            push_sl: Default::default(),
            push_exc: Default::default(),
            push_dcond: Default::default(),
            pop: Default::default(),
            head_sa: Default::default(),
            head_sl: Default::default(),
            head_exc: Default::default(),
            head_dcond: Default::default(),
            next_sa: Default::default(),
            next_sl: Default::default(),
            full: Default::default(),
            empty: Default::default(),
            sa: (0..depth).map(|_| Default::default()).collect(),
            sl: (0..depth).map(|_| Default::default()).collect(),
            exc: (0..depth).map(|_| Default::default()).collect(),
            dcond: (0..depth).map(|_| Default::default()).collect(),
            fill: Default::default(),
            target: Default::default(),
            k_depth: Constant::new((depth as u64).into()),
            k_one: Constant::new(1u64.into()),
            k_zero: Constant::new(0u64.into()),
            k_sl_mask: Constant::new(crate::config::amount_mask(max_sl as u64).into()),
            _depth: depth,
        }
    }
}

impl Logic for DescriptorBuffer {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, fill);
        // A push lands behind the entries that stay: slot fill - pop.
        self.target.next = self.fill.q.val();
        if self.pop.val() {
            self.target.next = self.fill.q.val() - self.k_one.val();
        }
        for i in 0..self._depth {
            self.sa[i].clock.next = self.clock.val();
            self.sl[i].clock.next = self.clock.val();
            self.exc[i].clock.next = self.clock.val();
            self.dcond[i].clock.next = self.clock.val();
            self.sa[i].d.next = self.sa[i].q.val();
            self.sl[i].d.next = self.sl[i].q.val();
            self.exc[i].d.next = self.exc[i].q.val();
            self.dcond[i].d.next = self.dcond[i].q.val();
        }
        if self.pop.val() {
            for i in 0..(self._depth - 1) {
                self.sa[i].d.next = self.sa[i + 1].q.val();
                self.sl[i].d.next = self.sl[i + 1].q.val();
                self.exc[i].d.next = self.exc[i + 1].q.val();
                self.dcond[i].d.next = self.dcond[i + 1].q.val();
            }
        }
        for i in 0..self._depth {
            if self.push.val() & (self.target.val().index() == i) {
                self.sa[i].d.next = self.push_sa.val();
                self.sl[i].d.next = self.push_sl.val();
                self.exc[i].d.next = self.push_exc.val();
                self.dcond[i].d.next = self.push_dcond.val();
            }
        }
        self.head_sa.next = self.sa[0].q.val();
        // SL never exceeds maxSL (the pushed values come masked from the detector): the
        // masks let synthesis drop the entries' constant upper bits.
        self.head_sl.next = self.sl[0].q.val() & self.k_sl_mask.val();
        self.head_exc.next = self.exc[0].q.val();
        self.head_dcond.next = self.dcond[0].q.val();
        self.next_sa.next = self.sa[0].d.val();
        self.next_sl.next = self.sl[0].d.val() & self.k_sl_mask.val();
        self.full.next = self.fill.q.val() == self.k_depth.val();
        self.empty.next = self.fill.q.val() == self.k_zero.val();
        if self.push.val() & !self.pop.val() {
            self.fill.d.next = self.fill.q.val() + self.k_one.val();
        }
        if !self.push.val() & self.pop.val() {
            self.fill.d.next = self.fill.q.val() - self.k_one.val();
        }
        if self.reset.val() {
            self.fill.d.next = self.k_zero.val();
        }
    }
}

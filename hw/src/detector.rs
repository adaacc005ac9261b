//! Stream detector (docs/trace-format.md section 3; paper Fig. 2): the SA and SL registers
//! and the termination rules. A descriptor leaves in the cycle its last instruction retires
//! (`desc_valid`); `cut` ends a partial stream at the end of the trace. While `hold` is high
//! (the core is stalled) the registers keep their values: the core presents the same
//! instruction again next cycle.

use rust_hdl::prelude::*;

/// Branch class codes on the `class` input (the model's `BranchClass` discriminants).
pub const CLASS_NONE: u64 = 0;
pub const CLASS_DCOND: u64 = 1;
pub const CLASS_DUNCOND: u64 = 2;

#[derive(LogicBlock)]
pub struct StreamDetector {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub retire_valid: Signal<In, Bit>,
    /// Interworking address of the retiring instruction (pc | Thumb).
    pub pc: Signal<In, Bits<32>>,
    pub branch_class: Signal<In, Bits<3>>,
    pub taken: Signal<In, Bit>,
    pub exception: Signal<In, Bit>,
    pub cut: Signal<In, Bit>,
    pub hold: Signal<In, Bit>,
    pub desc_valid: Signal<Out, Bit>,
    pub desc_sa: Signal<Out, Bits<32>>,
    pub desc_sl: Signal<Out, Bits<16>>,
    pub desc_exc: Signal<Out, Bit>,
    /// The stream's last instruction is a direct conditional branch (address inference).
    pub desc_dcond: Signal<Out, Bit>,
    sa: DFF<Bits<32>>,
    sl: DFF<Bits<16>>,
    last_dcond: DFF<Bit>,
    cur_sa: Signal<Local, Bits<32>>,
    sl_inc: Signal<Local, Bits<16>>,
    sl_next: Signal<Local, Bits<16>>,
    /// All-ones covering maxSL (SL and its increment never exceed maxSL).
    k_sl_mask: Constant<Bits<16>>,
    ends: Signal<Local, Bit>,
    is_dcond: Signal<Local, Bit>,
    /// maxSL - 1: SL reaches maxSL with this instruction when SL is one below (a compare of
    /// the register, not of its increment: the carry chain stays off the stall path).
    k_max_sl_less1: Constant<Bits<16>>,
    k_one16: Constant<Bits<16>>,
    k_zero16: Constant<Bits<16>>,
    k_zero32: Constant<Bits<32>>,
    /// Clears A[1:0] for ARM-only configurations, where they are always 0.
    k_addr_mask: Constant<Bits<32>>,
    k_none: Constant<Bits<3>>,
    k_dcond: Constant<Bits<3>>,
    k_duncond: Constant<Bits<3>>,
}

impl StreamDetector {
    pub fn new(max_sl: u32, low_bits: u32) -> StreamDetector {
        assert!(max_sl >= 1, "maxSL {max_sl} below 1");
        StreamDetector {
            clock: Default::default(),
            reset: Default::default(),
            retire_valid: Default::default(),
            pc: Default::default(),
            branch_class: Default::default(),
            taken: Default::default(),
            exception: Default::default(),
            cut: Default::default(),
            hold: Default::default(),
            desc_valid: Default::default(),
            desc_sa: Default::default(),
            desc_sl: Default::default(),
            desc_exc: Default::default(),
            desc_dcond: Default::default(),
            sa: Default::default(),
            sl: Default::default(),
            last_dcond: Default::default(),
            cur_sa: Default::default(),
            sl_inc: Default::default(),
            sl_next: Default::default(),
            k_sl_mask: Constant::new(crate::config::amount_mask(max_sl as u64).into()),
            ends: Default::default(),
            is_dcond: Default::default(),
            k_max_sl_less1: Constant::new(((max_sl - 1) as u64).into()),
            k_one16: Constant::new(1u64.into()),
            k_zero16: Constant::new(0u64.into()),
            k_zero32: Constant::new(0u64.into()),
            k_addr_mask: Constant::new(((u32::MAX << low_bits) as u64).into()),
            k_none: Constant::new(CLASS_NONE.into()),
            k_dcond: Constant::new(CLASS_DCOND.into()),
            k_duncond: Constant::new(CLASS_DUNCOND.into()),
        }
    }
}

impl Logic for StreamDetector {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, sa, sl, last_dcond);
        // A new stream starts with the instruction retiring while SL is 0.
        self.cur_sa.next = self.sa.q.val();
        if self.sl.q.val() == self.k_zero16.val() {
            self.cur_sa.next = self.pc.val() & self.k_addr_mask.val();
        }
        self.sl_inc.next = (self.sl.q.val() + self.k_one16.val()) & self.k_sl_mask.val();
        self.is_dcond.next = self.branch_class.val() == self.k_dcond.val();
        // Rules (a) taken dcond/icond/iuncond/ret, (b) exception, (c) SL reaches maxSL.
        self.ends.next = self.retire_valid.val()
            & ((self.taken.val() & (self.branch_class.val() != self.k_none.val()) & (self.branch_class.val() != self.k_duncond.val()))
                | self.exception.val()
                | (self.sl.q.val() == self.k_max_sl_less1.val()));
        // Each output written once (an else branch, not an override): see
        // verilog::repeated_cross_block_writes.
        if !self.retire_valid.val() & self.cut.val() & (self.sl.q.val() != self.k_zero16.val()) {
            // End of trace: the partial stream, never ended by an exception.
            self.desc_valid.next = true;
            self.desc_sa.next = self.sa.q.val();
            self.desc_sl.next = self.sl.q.val();
            self.desc_exc.next = false;
            self.desc_dcond.next = self.last_dcond.q.val();
        } else {
            self.desc_valid.next = self.ends.val();
            self.desc_sa.next = self.cur_sa.val();
            self.desc_sl.next = self.sl_inc.val();
            self.desc_exc.next = self.exception.val();
            self.desc_dcond.next = self.is_dcond.val();
        }
        self.sl_next.next = self.sl.q.val();
        if !self.hold.val() {
            if self.retire_valid.val() {
                self.sa.d.next = self.cur_sa.val();
                self.last_dcond.d.next = self.is_dcond.val();
                self.sl_next.next = self.sl_inc.val();
                if self.ends.val() {
                    self.sl_next.next = self.k_zero16.val();
                }
            } else if self.cut.val() {
                self.sl_next.next = self.k_zero16.val();
            }
        }
        if self.reset.val() {
            self.sa.d.next = self.k_zero32.val();
            self.sl_next.next = self.k_zero16.val();
            self.last_dcond.d.next = false;
        }
        // SL never exceeds maxSL: the bits above are constant zero (synthesis cannot bound
        // the register by itself).
        self.sl.d.next = self.sl_next.val() & self.k_sl_mask.val();
    }
}

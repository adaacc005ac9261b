//! Last stream predictor (docs/trace-format.md section 5.2, hist = 1): N_P entries of k
//! bits indexed by the previous stream index. The table is a `SyncTableRam` (block RAM),
//! read one cycle ahead at the history's next value, so the entry for the next lookup is on
//! its output at the start of the cycle (a write to it in this cycle is forwarded); a flag per entry
//! says whether it was written since the last reset, so a sync clears the predictor in one
//! cycle (an unwritten entry reads as 0, the reset value). The flags are read the same way,
//! one cycle ahead into a register, so their row multiplexer is off the lookup's path.
//!
//! `predicted` is `LSP[p]`; the lookup's hit is `si != 0 and LSP[p] == si`, which the
//! encoder tests against the SDC's ways in parallel with the SDC's own compare
//! (`StreamDescriptorCache::probe_hit`) instead of after it, and passes back as `hit`
//! (one compare, not two). With `access` high the clock edge writes `LSP[p] := si` when
//! `hit` is low and shifts `si` into the history.

use rust_hdl::prelude::*;

use crate::config::HwConfig;
use crate::mem::{FlagArray, SyncTableRam, ADDR_BITS};

#[derive(LogicBlock)]
pub struct LastStreamPredictor {
    pub clock: Signal<In, Clock>,
    pub clear: Signal<In, Bit>,
    pub si: Signal<In, Bits<16>>,
    pub access: Signal<In, Bit>,
    /// The lookup's verdict, `si != 0 and predicted == si`, from the encoder.
    pub hit: Signal<In, Bit>,
    pub predicted: Signal<Out, Bits<16>>,
    entries: SyncTableRam,
    written: FlagArray,
    history: DFF<Bits<16>>,
    index: Signal<Local, Bits<ADDR_BITS>>,
    next_index: Signal<Local, Bits<ADDR_BITS>>,
    /// The table's word; an SI has 16 bits, so the upper ones are never read.
    prediction_wide_unused: Signal<Local, Bits<32>>,
    si32: Signal<Local, Bits<32>>,
    k_index_mask: Constant<Bits<16>>,
    k_zero16: Constant<Bits<16>>,
    k_zero32: Constant<Bits<32>>,
    k_one32: Constant<Bits<32>>,
}

impl LastStreamPredictor {
    pub fn new(h: &HwConfig) -> LastStreamPredictor {
        LastStreamPredictor {
            clock: Default::default(),
            clear: Default::default(),
            si: Default::default(),
            access: Default::default(),
            hit: Default::default(),
            predicted: Default::default(),
            prediction_wide_unused: Default::default(),
            si32: Default::default(),
            entries: SyncTableRam::new(h.lsp_entries as usize, h.k as usize),
            written: FlagArray::registered_read(h.lsp_entries as usize, 1),
            history: Default::default(),
            index: Default::default(),
            next_index: Default::default(),
            k_index_mask: Constant::new(((h.lsp_entries - 1) as u64).into()),
            k_zero16: Constant::new(0u64.into()),
            k_zero32: Constant::new(0u64.into()),
            k_one32: Constant::new(1u64.into()),
        }
    }
}

impl Logic for LastStreamPredictor {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, history);
        self.entries.clock.next = self.clock.val();
        self.written.clock.next = self.clock.val();
        self.index.next = self.history.q.val() & self.k_index_mask.val();
        self.si32.next = bit_cast::<32, 16>(self.si.val());
        self.prediction_wide_unused.next = self.k_zero32.val();
        if self.written.rdata.val() != self.k_zero32.val() {
            self.prediction_wide_unused.next = self.entries.rdata.val();
        }
        self.predicted.next = self.prediction_wide_unused.val().get_bits::<16>(0);
        self.entries.waddr.next = self.index.val();
        self.entries.wdata.next = self.si32.val();
        self.entries.we.next = self.access.val() & !self.hit.val();
        self.written.waddr.next = self.index.val();
        self.written.wdata.next = self.k_one32.val();
        self.written.we.next = self.access.val() & !self.hit.val();
        self.written.clear.next = self.clear.val();
        if self.access.val() {
            self.history.d.next = self.si.val();
        }
        if self.clear.val() {
            self.history.d.next = self.k_zero16.val();
        }
        self.next_index.next = self.history.d.val() & self.k_index_mask.val();
        self.entries.raddr.next = self.next_index.val();
        self.written.raddr.next = self.next_index.val();
    }
}

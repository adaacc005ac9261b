//! Adaptive one-length counter (docs/trace-format.md section 5.4): counts LSP hits and
//! writes a run record `1 (n-1)(s)` when the count reaches 2^s or when another record (or
//! escape) needs a pending run flushed; then the 4-bit monitor adapts the width s.
//!
//! One service per cycle at most (`active`). An LSP hit adds one to the count and emits the
//! run when the counter fills or when `flush_after` says an escape follows the hit; any
//! other service flushes a pending run first. At most one run record leaves per service.
//!
//! `delayed` (the two-stage compressor, where services are at least three cycles apart):
//! the monitor's verdict on an emitted run is registered and the monitor and width update a
//! cycle later, so the width's shifter and the count's compare do not lie on one path with
//! the monitor's arithmetic and the width's update. The next service must not be in the
//! cycle right after one (it would see the old width); a clear in the service's cycle wins
//! over the delayed update, as it wins over the undelayed one.

use rust_hdl::prelude::*;

use crate::config::HwConfig;

/// The monitor's value after reset and after a resize. DFFs power up at 0, so the block
/// needs a `clear` pulse before use (the top module's reset gives it).
pub const MONITOR_RESET: u64 = 8;

#[derive(LogicBlock)]
pub struct AdaptiveOneLengthCounter {
    pub clock: Signal<In, Clock>,
    pub clear: Signal<In, Bit>,
    pub active: Signal<In, Bit>,
    pub lsp_hit: Signal<In, Bit>,
    pub flush_after: Signal<In, Bit>,
    pub emit: Signal<Out, Bit>,
    pub run_value: Signal<Out, Bits<32>>,
    pub run_len: Signal<Out, Bits<16>>,
    width: DFF<Bits<8>>,
    monitor: DFF<Bits<8>>,
    pending: DFF<Bits<32>>,
    full: Signal<Local, Bits<32>>,
    half: Signal<Local, Bits<32>>,
    pending_inc: Signal<Local, Bits<32>>,
    /// The run's count n is `pending + 1` with an LSP hit, else `pending`; the run value
    /// needs `n - 1`, so that is `pending` or `pending - 1`, the subtraction made from the
    /// register rather than after the late hit.
    pending_dec: Signal<Local, Bits<32>>,
    run_n_less: Signal<Local, Bits<32>>,
    /// `2^s - 1`: with `k_mask_compare` an LSP hit fills the counter when `pending` equals
    /// it (where `pending + 1 == 2^s` puts the increment's carry chain before the emit
    /// decision and so before the record's length). Only the two-stage compressor uses
    /// it (`delayed`): it costs a second shifter, and the one-cycle build's longest path
    /// does not run through it.
    full_mask: Signal<Local, Bits<32>>,
    k_mask_compare: Constant<Bit>,
    /// The width register's next value (masked into `width` below).
    width_next: Signal<Local, Bits<8>>,
    pending_next: Signal<Local, Bits<32>>,
    /// What the registers and the run value can hold: the width is at most `olcmax` (16)
    /// and the count below `2^olcmax`, so the bits above are constant zero. Synthesis cannot
    /// see those bounds through the registers; without the masks it built 32-bit counters,
    /// shifters and compares (450 of the rSDC module's iCE40 LUT4).
    k_width_mask: Constant<Bits<8>>,
    k_count_mask: Constant<Bits<32>>,
    /// run_n == 2^s and run_n < 2^(s-1).
    run_full: Signal<Local, Bit>,
    run_short: Signal<Local, Bit>,
    run_fire: Signal<Local, Bit>,
    monitor_after: Signal<Local, Bits<8>>,
    /// The verdict on the emitted run and its registered copy; `w_*` is what the monitor
    /// update works on (this cycle's, or delayed the last cycle's).
    r_emit: DFF<Bit>,
    r_run_full: DFF<Bit>,
    r_run_short: DFF<Bit>,
    w_emit: Signal<Local, Bit>,
    w_run_full: Signal<Local, Bit>,
    w_run_short: Signal<Local, Bit>,
    k_delayed: Constant<Bit>,
    k_init: Constant<Bits<8>>,
    k_min: Constant<Bits<8>>,
    k_max: Constant<Bits<8>>,
    k_one8: Constant<Bits<8>>,
    k_three8: Constant<Bits<8>>,
    k_twelve8: Constant<Bits<8>>,
    k_zero8: Constant<Bits<8>>,
    k_monitor_max: Constant<Bits<8>>,
    k_monitor_reset: Constant<Bits<8>>,
    k_one16: Constant<Bits<16>>,
    k_one32: Constant<Bits<32>>,
    k_zero32: Constant<Bits<32>>,
    k_ones32: Constant<Bits<32>>,
}

impl AdaptiveOneLengthCounter {
    /// `delayed`: update the monitor and width a cycle after the service (module doc).
    pub fn new(h: &HwConfig, delayed: bool) -> AdaptiveOneLengthCounter {
        let c8 = |v: u64| Constant::new(v.into());
        AdaptiveOneLengthCounter {
            clock: Default::default(),
            clear: Default::default(),
            active: Default::default(),
            lsp_hit: Default::default(),
            flush_after: Default::default(),
            emit: Default::default(),
            run_value: Default::default(),
            run_len: Default::default(),
            width: Default::default(),
            monitor: Default::default(),
            pending: Default::default(),
            full: Default::default(),
            half: Default::default(),
            pending_inc: Default::default(),
            pending_dec: Default::default(),
            run_n_less: Default::default(),
            full_mask: Default::default(),
            k_mask_compare: Constant::new(delayed),
            width_next: Default::default(),
            pending_next: Default::default(),
            k_width_mask: c8(crate::config::amount_mask(h.model.olc_max as u64)),
            k_count_mask: Constant::new(((2u64 << h.model.olc_max) - 1).into()),
            run_full: Default::default(),
            run_short: Default::default(),
            run_fire: Default::default(),
            monitor_after: Default::default(),
            r_emit: Default::default(),
            r_run_full: Default::default(),
            r_run_short: Default::default(),
            w_emit: Default::default(),
            w_run_full: Default::default(),
            w_run_short: Default::default(),
            k_delayed: Constant::new(delayed),
            k_init: c8(h.model.olc_init as u64),
            k_min: c8(h.model.olc_min as u64),
            k_max: c8(h.model.olc_max as u64),
            k_one8: c8(1),
            k_three8: c8(3),
            k_twelve8: c8(12),
            k_zero8: c8(0),
            k_monitor_max: c8(15),
            k_monitor_reset: c8(MONITOR_RESET),
            k_one16: Constant::new(1u64.into()),
            k_one32: Constant::new(1u64.into()),
            k_zero32: Constant::new(0u64.into()),
            k_ones32: Constant::new((u32::MAX as u64).into()),
        }
    }
}

impl Logic for AdaptiveOneLengthCounter {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, width, monitor, pending, r_emit, r_run_full, r_run_short);
        self.full.next = self.k_one32.val() << self.width.q.val();
        self.half.next = self.full.val() >> self.k_one8.val();
        self.pending_inc.next = self.pending.q.val() + self.k_one32.val();
        self.full_mask.next = !(self.k_ones32.val() << self.width.q.val());
        self.pending_dec.next = self.pending.q.val() - self.k_one32.val();
        self.run_n_less.next = self.pending_dec.val();
        self.run_fire.next = self.pending.q.val() != self.k_zero32.val();
        if self.lsp_hit.val() {
            self.run_n_less.next = self.pending.q.val();
            if self.k_mask_compare.val() {
                self.run_fire.next = (self.pending.q.val() == self.full_mask.val()) | self.flush_after.val();
            } else {
                self.run_fire.next = (self.pending_inc.val() == self.full.val()) | self.flush_after.val();
            }
        }
        self.emit.next = self.active.val() & self.run_fire.val();
        // Read only when a run is emitted (n >= 1): n - 1 < 2^s.
        self.run_value.next = (self.full.val() | self.run_n_less.val()) & self.k_count_mask.val();
        self.run_len.next = bit_cast::<16, 8>(self.width.q.val()) + self.k_one16.val();

        // Monitor rule after a run of run_n hits. Both compares are made for either value of
        // run_n from the counter alone, and `lsp_hit` (late: the lookup's result) selects.
        if self.lsp_hit.val() {
            self.run_full.next = self.pending.q.val() == self.full_mask.val();
            self.run_short.next = self.pending_inc.val() < self.half.val();
        } else {
            self.run_full.next = self.pending.q.val() == self.full.val();
            self.run_short.next = self.pending.q.val() < self.half.val();
        }
        self.r_emit.d.next = self.emit.val() & !self.clear.val();
        self.r_run_full.d.next = self.run_full.val();
        self.r_run_short.d.next = self.run_short.val();
        if self.k_delayed.val() {
            self.w_emit.next = self.r_emit.q.val();
            self.w_run_full.next = self.r_run_full.q.val();
            self.w_run_short.next = self.r_run_short.q.val();
        } else {
            self.w_emit.next = self.emit.val();
            self.w_run_full.next = self.run_full.val();
            self.w_run_short.next = self.run_short.val();
        }
        self.monitor_after.next = self.monitor.q.val();
        if self.w_run_full.val() {
            self.monitor_after.next = self.monitor.q.val() + self.k_three8.val();
            if self.monitor.q.val() > self.k_twelve8.val() {
                self.monitor_after.next = self.k_monitor_max.val();
            }
        } else if self.w_run_short.val() & (self.monitor.q.val() != self.k_zero8.val()) {
            self.monitor_after.next = self.monitor.q.val() - self.k_one8.val();
        }
        self.pending_next.next = self.pending.q.val();
        if self.active.val() {
            self.pending_next.next = self.k_zero32.val();
            if self.lsp_hit.val() & !self.run_fire.val() {
                self.pending_next.next = self.pending_inc.val();
            }
        }
        self.width_next.next = self.width.q.val();
        if self.w_emit.val() {
            self.monitor.d.next = self.monitor_after.val();
            if (self.monitor_after.val() == self.k_monitor_max.val()) & (self.width.q.val() < self.k_max.val()) {
                self.width_next.next = self.width.q.val() + self.k_one8.val();
                self.monitor.d.next = self.k_monitor_reset.val();
            } else if (self.monitor_after.val() == self.k_zero8.val()) & (self.width.q.val() > self.k_min.val()) {
                self.width_next.next = self.width.q.val() - self.k_one8.val();
                self.monitor.d.next = self.k_monitor_reset.val();
            }
        }
        if self.clear.val() {
            self.width_next.next = self.k_init.val();
            self.monitor.d.next = self.k_monitor_reset.val();
            self.pending_next.next = self.k_zero32.val();
        }
        self.width.d.next = self.width_next.val() & self.k_width_mask.val();
        self.pending.d.next = self.pending_next.val() & self.k_count_mask.val();
    }
}

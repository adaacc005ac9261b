//! The compressor: services one SDB entry (or the END record) per `start` and assembles its
//! record, docs/trace-format.md section 6, bit for bit. It owns the compressor state of
//! section 5: SDC, LSP, LVSA, AOLC, `infer`, the periodic-sync counter, and the trace bit
//! position modulo 8 (for the padding before a sync marker and after END).
//!
//! Everything is combinational from the entry and the state at start of cycle; the state
//! updates at the clock edge that ends the start cycle. A record is at most
//! `[AOLC run][SDC hit or miss + address][EXCEPTION][SYNC|OVERFLOW|END + padding + marker]`,
//! at most 288 bits, assembled right-aligned (the first bit is bit `rec_len - 1`) in a chain
//! of registers that grows with the fields that can precede it.
//!
//! A sync or overflow resets the state after this record (section 7): `clear` wins over the
//! updates the record itself makes, as the model resets after applying them.
//!
//! With `svc_hit >= 3` (every service at least three cycles) the compressor is two stages:
//! the start cycle looks the descriptor up in the SDC (and compares the LVSA, counts to the
//! periodic sync) and updates `infer` and the sync counter; registers carry what the
//! lookup decided into the next cycle, which makes the SDC's update (delayed, see
//! `StreamDescriptorCache`) and the LVSA's, looks up and updates the LSP, runs the AOLC and assembles the
//! record (`rec_ready` high), updating the AOLC's count and the bit position (the AOLC's
//! monitor and width a cycle later still, `AdaptiveOneLengthCounter`). A sync or overflow
//! clears the SDC, LSP and AOLC in that second cycle. The next service starts three cycles
//! after the start at the earliest, so neither stage sees a state the other has not
//! finished: the same records as in one cycle, with the SDC's compare alone in the first
//! stage and the LSP's compare and the tables' writes in the second.

use rust_hdl::prelude::*;
use streamtrace_model::Scheme;

use crate::aolc::AdaptiveOneLengthCounter;
use crate::config::{amount_mask, HwConfig, RECORD_BITS};
use crate::lsp::LastStreamPredictor;
use crate::sdc::StreamDescriptorCache;

#[derive(LogicBlock)]
pub struct RecordEncoder {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Service the presented entry (or END) in this cycle.
    pub start: Signal<In, Bit>,
    pub is_end: Signal<In, Bit>,
    pub sa: Signal<In, Bits<32>>,
    /// 0 marks an overflow entry (then `sa` is the lost-instruction count).
    pub sl: Signal<In, Bits<16>>,
    pub exc: Signal<In, Bit>,
    pub dcond: Signal<In, Bit>,
    /// The entry presented next cycle (the SDB's next head): the SDC reads its tables one
    /// cycle ahead.
    pub next_sa: Signal<In, Bits<32>>,
    pub next_sl: Signal<In, Bits<16>>,
    pub rec_bits: Signal<Out, Bits<RECORD_BITS>>,
    pub rec_len: Signal<Out, Bits<16>>,
    /// The entry missed in the SDC (forced rSDC misses included): svc_miss cycles. In the
    /// start cycle, or with two stages in the cycle after it (with `rec_ready`), so that
    /// the SDC's compare does not decide the service counter's next value in its own cycle.
    pub miss: Signal<Out, Bit>,
    /// `rec_bits`/`rec_len` hold this cycle's record: the start cycle, or with two stages
    /// (`svc_hit >= 3`) the cycle after it.
    pub rec_ready: Signal<Out, Bit>,
    sdc: StreamDescriptorCache,
    lsp: LastStreamPredictor,
    aolc: AdaptiveOneLengthCounter,
    lvsa: DFF<Bits<32>>,
    infer: DFF<Bit>,
    since_reset: DFF<Bits<32>>,
    bitpos: DFF<Bits<8>>,
    /// The lookup's results, registered for the assembly stage (two stages only).
    p_start: DFF<Bit>,
    p_is_end: DFF<Bit>,
    p_exc: DFF<Bit>,
    p_hit_raw: DFF<Bit>,
    p_probe_hit: DFF<Bit>,
    p_lvsa_match: DFF<Bit>,
    p_sync_reached: DFF<Bit>,
    p_infer: DFF<Bit>,
    p_sa: DFF<Bits<32>>,
    p_sl32: DFF<Bits<32>>,
    /// SL == 0 (an overflow entry), registered as a bit of its own so the assembly stage's
    /// kind of entry does not wait for a wide compare of the registered SL.
    p_sl_zero: DFF<Bit>,
    p_found_si: DFF<Bits<16>>,
    /// What the assembly stage works on: the lookup's signals, or with two stages their
    /// registered copies.
    b_start: Signal<Local, Bit>,
    b_is_end: Signal<Local, Bit>,
    b_is_ovf: Signal<Local, Bit>,
    b_is_stream: Signal<Local, Bit>,
    b_exc: Signal<Local, Bit>,
    b_sdc_hit: Signal<Local, Bit>,
    b_hit_raw: Signal<Local, Bit>,
    b_probe_hit: Signal<Local, Bit>,
    b_sync_reached: Signal<Local, Bit>,
    /// The SDC found the entry and (rSDC) the LVSA matches: a hit if the entry is a stream.
    hit_raw: Signal<Local, Bit>,
    sync_reached: Signal<Local, Bit>,
    /// The reset of the SDC, LSP and AOLC, made in the assembly stage.
    stage_clear: Signal<Local, Bit>,
    b_lsp_hit: Signal<Local, Bit>,
    b_is_miss: Signal<Local, Bit>,
    b_lvsa_match: Signal<Local, Bit>,
    b_sync_due: Signal<Local, Bit>,
    b_infer: Signal<Local, Bit>,
    b_sa: Signal<Local, Bits<32>>,
    b_sl32: Signal<Local, Bits<32>>,
    b_sl_zero: Signal<Local, Bit>,
    b_found_si: Signal<Local, Bits<16>>,
    is_ovf: Signal<Local, Bit>,
    is_stream: Signal<Local, Bit>,
    upper: Signal<Local, Bits<32>>,
    /// The assembly stage's SA's upper bits: with two stages the LVSA is updated there (its
    /// eSDC update depends on the lookup's miss; the next lookup is two cycles later still).
    b_upper: Signal<Local, Bits<32>>,
    lvsa_match: Signal<Local, Bit>,
    sdc_hit: Signal<Local, Bit>,
    is_miss: Signal<Local, Bit>,
    sl32: Signal<Local, Bits<32>>,
    since_sum: Signal<Local, Bits<32>>,
    sync_due: Signal<Local, Bit>,
    state_clear: Signal<Local, Bit>,
    run_val: Signal<Local, Bits<32>>,
    /// Whether field 1 is sent (the AOLC emits; bSDC: the LSP hit) and its length if so.
    /// The decision is the assembly stage's latest signal, so the length sums and the
    /// padding are computed for both outcomes and it selects at the end.
    run_on: Signal<Local, Bit>,
    run_len_on: Signal<Local, Bits<16>>,
    head_val: Signal<Local, Bits<32>>,
    head_len: Signal<Local, Bits<16>>,
    addr_val: Signal<Local, Bits<32>>,
    addr_len: Signal<Local, Bits<16>>,
    exc_val: Signal<Local, Bits<32>>,
    exc_len: Signal<Local, Bits<16>>,
    esc_val: Signal<Local, Bits<32>>,
    esc_len: Signal<Local, Bits<16>>,
    lost_val: Signal<Local, Bits<32>>,
    lost_len: Signal<Local, Bits<16>>,
    tail_off: Signal<Local, Bits<16>>,
    tail_on: Signal<Local, Bits<16>>,
    tail_val: Signal<Local, Bits<RECORD_BITS>>,
    padded: Signal<Local, Bits<RECORD_BITS>>,
    pad: Signal<Local, Bits<8>>,
    pad_off: Signal<Local, Bits<8>>,
    pad_on: Signal<Local, Bits<8>>,
    /// The record ends in padding to the byte (SYNC, OVERFLOW, END), and the marker's
    /// length (SYNC, OVERFLOW; else 0).
    padded_rec: Signal<Local, Bit>,
    marker_len: Signal<Local, Bits<16>>,
    a1: Signal<Local, Bits<64>>,
    h1: Signal<Local, Bits<64>>,
    a2: Signal<Local, Bits<64>>,
    a2w: Signal<Local, Bits<128>>,
    addr_w: Signal<Local, Bits<128>>,
    exc_w: Signal<Local, Bits<128>>,
    a3: Signal<Local, Bits<128>>,
    a4: Signal<Local, Bits<128>>,
    a4w: Signal<Local, Bits<192>>,
    esc_w: Signal<Local, Bits<192>>,
    lost_w: Signal<Local, Bits<192>>,
    a5: Signal<Local, Bits<192>>,
    a6: Signal<Local, Bits<192>>,
    a6w: Signal<Local, Bits<RECORD_BITS>>,
    /// Fields 2-6's length; with field 1's added.
    len_off: Signal<Local, Bits<16>>,
    len_on: Signal<Local, Bits<16>>,
    rec_len_off: Signal<Local, Bits<16>>,
    rec_len_on: Signal<Local, Bits<16>>,
    lvsa_hit_addr: Signal<Local, Bits<32>>,
    k_two_stage: Constant<Bit>,
    k_enhanced: Constant<Bit>,
    k_rsdc: Constant<Bit>,
    k_esdc: Constant<Bit>,
    k_sync_on: Constant<Bit>,
    k_sync_period: Constant<Bits<32>>,
    k_max_sl: Constant<Bits<16>>,
    k_sl_mask: Constant<Bits<32>>,
    k_si_mask: Constant<Bits<16>>,
    k_lvsa_shift: Constant<Bits<8>>,
    k_low: Constant<Bits<8>>,
    k_below_lvsa: Constant<Bits<32>>,
    k_lvsa_hit_flag: Constant<Bits<32>>,
    k_sdc_hit_len: Constant<Bits<16>>,
    k_miss_len: Constant<Bits<16>>,
    k_escape_len: Constant<Bits<16>>,
    k_addr_len_bsdc: Constant<Bits<16>>,
    k_addr_len_lvsa_hit: Constant<Bits<16>>,
    k_addr_len_lvsa_miss: Constant<Bits<16>>,
    k_marker_len: Constant<Bits<16>>,
    k_lost_len: Constant<Bits<16>>,
    k_marker: Constant<Bits<RECORD_BITS>>,
    k_exc_type: Constant<Bits<32>>,
    k_sync_type: Constant<Bits<32>>,
    k_ovf_type: Constant<Bits<32>>,
    k_one32: Constant<Bits<32>>,
    k_one16: Constant<Bits<16>>,
    k_max32: Constant<Bits<32>>,
    k_zero32: Constant<Bits<32>>,
    k_zero16: Constant<Bits<16>>,
    k_zero8: Constant<Bits<8>>,
    k_seven8: Constant<Bits<8>>,
}

impl RecordEncoder {
    pub fn new(h: &HwConfig) -> RecordEncoder {
        let scheme = h.scheme();
        let c16 = |v: u32| Constant::new((v as u64).into());
        let c32 = |v: u64| Constant::new(v.into());
        let u = h.u;
        let escape_len = 1 + h.k + h.slw + 2;
        RecordEncoder {
            clock: Default::default(),
            reset: Default::default(),
            start: Default::default(),
            is_end: Default::default(),
            sa: Default::default(),
            sl: Default::default(),
            exc: Default::default(),
            dcond: Default::default(),
            next_sa: Default::default(),
            next_sl: Default::default(),
            rec_bits: Default::default(),
            rec_len: Default::default(),
            miss: Default::default(),
            rec_ready: Default::default(),
            sdc: StreamDescriptorCache::new(h, h.two_stage()),
            lsp: LastStreamPredictor::new(h),
            aolc: AdaptiveOneLengthCounter::new(h, h.two_stage()),
            lvsa: Default::default(),
            infer: Default::default(),
            since_reset: Default::default(),
            bitpos: Default::default(),
            p_start: Default::default(),
            p_is_end: Default::default(),
            p_exc: Default::default(),
            p_hit_raw: Default::default(),
            p_probe_hit: Default::default(),
            p_lvsa_match: Default::default(),
            p_sync_reached: Default::default(),
            p_infer: Default::default(),
            p_sa: Default::default(),
            p_sl32: Default::default(),
            p_sl_zero: Default::default(),
            p_found_si: Default::default(),
            b_start: Default::default(),
            b_is_end: Default::default(),
            b_is_ovf: Default::default(),
            b_is_stream: Default::default(),
            b_exc: Default::default(),
            b_sdc_hit: Default::default(),
            b_hit_raw: Default::default(),
            b_probe_hit: Default::default(),
            b_sync_reached: Default::default(),
            hit_raw: Default::default(),
            sync_reached: Default::default(),
            b_lsp_hit: Default::default(),
            b_is_miss: Default::default(),
            b_lvsa_match: Default::default(),
            b_sync_due: Default::default(),
            b_infer: Default::default(),
            b_sa: Default::default(),
            b_sl32: Default::default(),
            b_sl_zero: Default::default(),
            b_found_si: Default::default(),
            is_ovf: Default::default(),
            is_stream: Default::default(),
            upper: Default::default(),
            b_upper: Default::default(),
            lvsa_match: Default::default(),
            sdc_hit: Default::default(),
            is_miss: Default::default(),
            sl32: Default::default(),
            since_sum: Default::default(),
            sync_due: Default::default(),
            state_clear: Default::default(),
            stage_clear: Default::default(),
            run_val: Default::default(),
            run_on: Default::default(),
            run_len_on: Default::default(),
            head_val: Default::default(),
            head_len: Default::default(),
            addr_val: Default::default(),
            addr_len: Default::default(),
            exc_val: Default::default(),
            exc_len: Default::default(),
            esc_val: Default::default(),
            esc_len: Default::default(),
            lost_val: Default::default(),
            lost_len: Default::default(),
            tail_off: Default::default(),
            tail_on: Default::default(),
            tail_val: Default::default(),
            padded: Default::default(),
            pad: Default::default(),
            pad_off: Default::default(),
            pad_on: Default::default(),
            padded_rec: Default::default(),
            marker_len: Default::default(),
            a1: Default::default(),
            h1: Default::default(),
            a2: Default::default(),
            a2w: Default::default(),
            addr_w: Default::default(),
            exc_w: Default::default(),
            a3: Default::default(),
            a4: Default::default(),
            a4w: Default::default(),
            esc_w: Default::default(),
            lost_w: Default::default(),
            a5: Default::default(),
            a6: Default::default(),
            a6w: Default::default(),
            len_off: Default::default(),
            len_on: Default::default(),
            rec_len_off: Default::default(),
            rec_len_on: Default::default(),
            lvsa_hit_addr: Default::default(),
            k_two_stage: Constant::new(h.two_stage()),
            k_enhanced: Constant::new(scheme.enhanced()),
            k_rsdc: Constant::new(scheme == Scheme::RSdc),
            k_esdc: Constant::new(scheme == Scheme::ESdc),
            k_sync_on: Constant::new(h.model.sync_period != 0),
            // Off: the largest period, so the comparison is not constant (lint).
            k_sync_period: c32(if h.model.sync_period == 0 { u32::MAX as u64 } else { h.model.sync_period }),
            k_max_sl: c16(h.max_sl),
            k_sl_mask: c32(amount_mask(h.max_sl as u64)),
            k_si_mask: c16(amount_mask((h.sets * h.ways - 1) as u64) as u32),
            // bSDC has no LVSA: shifting by 32 makes its (unused) upper part 0.
            k_lvsa_shift: Constant::new(((32 - u) as u64).into()),
            k_low: Constant::new((h.low as u64).into()),
            k_below_lvsa: c32(if u == 0 { u32::MAX as u64 } else { (1u64 << (32 - u)) - 1 }),
            k_lvsa_hit_flag: c32(if u == 0 { 0 } else { 1u64 << (32 - u - h.low) }),
            k_sdc_hit_len: c16(1 + h.k),
            k_miss_len: c16(1 + h.k + h.slw),
            k_escape_len: c16(escape_len),
            k_addr_len_bsdc: c16(32),
            k_addr_len_lvsa_hit: c16(if u == 0 { 0 } else { 1 + 32 - u - h.low }),
            k_addr_len_lvsa_miss: c16(1 + 32 - h.low),
            k_marker_len: c16(128),
            k_lost_len: c16(32),
            k_marker: Constant::new(0x80u64.into()),
            k_exc_type: c32(0b10),
            k_sync_type: c32(0b01),
            k_ovf_type: c32(0b11),
            k_one32: c32(1),
            k_one16: c16(1),
            k_max32: c32(u32::MAX as u64),
            k_zero32: c32(0),
            k_zero16: c16(0),
            k_zero8: Constant::new(0u64.into()),
            k_seven8: Constant::new(7u64.into()),
        }
    }
}

impl Logic for RecordEncoder {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, lvsa, infer, since_reset, bitpos, p_start, p_is_end, p_exc, p_hit_raw, p_probe_hit, p_lvsa_match,
            p_sync_reached, p_infer, p_sa, p_sl32, p_sl_zero, p_found_si
        );
        self.sdc.clock.next = self.clock.val();
        self.lsp.clock.next = self.clock.val();
        self.aolc.clock.next = self.clock.val();

        // Lookup stage (the start cycle). What is being serviced.
        self.is_ovf.next = !self.is_end.val() & (self.sl.val() == self.k_zero16.val());
        self.is_stream.next = !self.is_end.val() & (self.sl.val() != self.k_zero16.val());
        self.sl32.next = bit_cast::<32, 16>(self.sl.val());

        // SDC lookup; rSDC forces a miss when the upper bits differ from the LVSA.
        self.sdc.sa.next = self.sa.val();
        self.sdc.sl.next = self.sl.val();
        self.sdc.next_sa.next = self.next_sa.val();
        self.sdc.next_sl.next = self.next_sl.val();
        self.upper.next = self.sa.val() >> self.k_lvsa_shift.val();
        self.lvsa_match.next = self.upper.val() == self.lvsa.q.val();
        self.hit_raw.next = self.sdc.found.val() & (self.lvsa_match.val() | !self.k_rsdc.val());
        self.sdc_hit.next = self.is_stream.val() & self.hit_raw.val();
        self.is_miss.next = self.is_stream.val() & !self.sdc_hit.val();
        // LSP lookup: its prediction tested against the SDC's ways, beside the SDC's compare
        // (an LSP hit is an SDC hit whose entry is the prediction: `b_lsp_hit` below).
        self.sdc.probe_si.next = self.lsp.predicted.val();

        // Periodic sync after the stream that reaches the period (counter saturates).
        self.since_sum.next = self.since_reset.q.val() + self.sl32.val();
        if self.since_reset.q.val() > (self.k_max32.val() - self.sl32.val()) {
            self.since_sum.next = self.k_max32.val();
        }
        self.sync_reached.next = self.k_sync_on.val() & (self.since_sum.val() >= self.k_sync_period.val());
        self.sync_due.next = self.is_stream.val() & self.sync_reached.val();

        // Into the assembly stage: the same cycle, or registered (two stages). Only what the
        // lookup decided is registered; the assembly stage derives the rest as the lookup
        // does, so that synthesis sees the same exclusions (an entry is a stream, an
        // overflow or END; an LSP hit is an SDC hit) in both.
        self.p_start.d.next = self.start.val();
        self.p_is_end.d.next = self.is_end.val();
        self.p_exc.d.next = self.exc.val();
        self.p_hit_raw.d.next = self.hit_raw.val();
        self.p_probe_hit.d.next = self.sdc.probe_hit.val();
        self.p_lvsa_match.d.next = self.lvsa_match.val();
        self.p_sync_reached.d.next = self.sync_reached.val();
        self.p_infer.d.next = self.infer.q.val();
        self.p_sa.d.next = self.sa.val();
        self.p_sl32.d.next = self.sl32.val();
        self.p_sl_zero.d.next = self.sl.val() == self.k_zero16.val();
        self.p_found_si.d.next = self.sdc.found_si.val();
        if self.k_two_stage.val() {
            self.b_start.next = self.p_start.q.val();
            self.b_is_end.next = self.p_is_end.q.val();
            self.b_exc.next = self.p_exc.q.val();
            self.b_hit_raw.next = self.p_hit_raw.q.val();
            self.b_probe_hit.next = self.p_probe_hit.q.val();
            self.b_lvsa_match.next = self.p_lvsa_match.q.val();
            self.b_sync_reached.next = self.p_sync_reached.q.val();
            self.b_infer.next = self.p_infer.q.val();
            self.b_sa.next = self.p_sa.q.val();
            // Masked to the values they can hold, so that synthesis knows their upper bits
            // are zero (as it does for the unregistered signals of one stage).
            self.b_sl32.next = self.p_sl32.q.val() & self.k_sl_mask.val();
            self.b_sl_zero.next = self.p_sl_zero.q.val();
            self.b_found_si.next = self.p_found_si.q.val() & self.k_si_mask.val();
        } else {
            self.b_start.next = self.start.val();
            self.b_is_end.next = self.is_end.val();
            self.b_exc.next = self.exc.val();
            self.b_hit_raw.next = self.hit_raw.val();
            self.b_probe_hit.next = self.sdc.probe_hit.val();
            self.b_lvsa_match.next = self.lvsa_match.val();
            self.b_sync_reached.next = self.sync_reached.val();
            self.b_infer.next = self.infer.q.val();
            self.b_sa.next = self.sa.val();
            self.b_sl32.next = self.sl32.val();
            self.b_sl_zero.next = self.sl.val() == self.k_zero16.val();
            self.b_found_si.next = self.sdc.found_si.val();
        }
        self.b_is_ovf.next = !self.b_is_end.val() & self.b_sl_zero.val();
        self.b_is_stream.next = !self.b_is_end.val() & !self.b_sl_zero.val();
        self.b_sdc_hit.next = self.b_is_stream.val() & self.b_hit_raw.val();
        self.b_is_miss.next = self.b_is_stream.val() & !self.b_sdc_hit.val();
        self.b_lsp_hit.next = self.b_sdc_hit.val() & self.b_probe_hit.val();
        self.b_sync_due.next = self.b_is_stream.val() & self.b_sync_reached.val();
        self.rec_ready.next = self.b_start.val();
        self.miss.next = self.b_start.val() & self.b_is_miss.val();

        // LSP update, in the assembly stage: with two stages a cycle after the lookup (the
        // next lookup is two cycles later still). Its lookup is `b_lsp_hit` above.
        if self.b_sdc_hit.val() {
            self.lsp.si.next = self.b_found_si.val();
        } else {
            self.lsp.si.next = self.k_zero16.val();
        }

        // Assembly stage. AOLC (eSDC, rSDC).
        self.aolc.active.next = self.b_start.val() & self.k_enhanced.val();
        self.aolc.lsp_hit.next = self.b_lsp_hit.val();
        self.aolc.flush_after.next = self.b_exc.val() | self.b_sync_due.val();

        // Field 1: the LSP-hit run (eSDC/rSDC) or the single LSP-hit bit (bSDC).
        if self.k_enhanced.val() {
            self.run_on.next = self.aolc.emit.val();
            self.run_len_on.next = self.aolc.run_len.val();
        } else {
            self.run_on.next = self.b_lsp_hit.val();
            self.run_len_on.next = self.k_one16.val();
        }
        self.run_val.next = self.k_zero32.val();
        if self.run_on.val() {
            if self.k_enhanced.val() {
                self.run_val.next = self.aolc.run_value.val();
            } else {
                self.run_val.next = self.k_one32.val();
            }
        }
        // Field 2: SDC hit `0 SI` or miss `0 0^k SL`.
        self.head_val.next = self.k_zero32.val();
        self.head_len.next = self.k_zero16.val();
        if self.b_sdc_hit.val() & !self.b_lsp_hit.val() {
            self.head_val.next = bit_cast::<32, 16>(self.b_found_si.val());
            self.head_len.next = self.k_sdc_hit_len.val();
        }
        if self.b_is_miss.val() {
            self.head_val.next = self.b_sl32.val();
            self.head_len.next = self.k_miss_len.val();
        }
        // Field 3: the address of a miss that is not inferable: A(32), or L.
        self.lvsa_hit_addr.next = self.k_lvsa_hit_flag.val() | ((self.b_sa.val() & self.k_below_lvsa.val()) >> self.k_low.val());
        self.addr_val.next = self.k_zero32.val();
        self.addr_len.next = self.k_zero16.val();
        if self.b_is_miss.val() & !self.b_infer.val() {
            if !self.k_enhanced.val() {
                self.addr_val.next = self.b_sa.val();
                self.addr_len.next = self.k_addr_len_bsdc.val();
            } else if self.b_lvsa_match.val() {
                self.addr_val.next = self.lvsa_hit_addr.val();
                self.addr_len.next = self.k_addr_len_lvsa_hit.val();
            } else {
                self.addr_val.next = self.b_sa.val() >> self.k_low.val();
                self.addr_len.next = self.k_addr_len_lvsa_miss.val();
            }
        }
        // Field 4: EXCEPTION escape after the stream the exception ended.
        self.exc_val.next = self.k_zero32.val();
        self.exc_len.next = self.k_zero16.val();
        if self.b_is_stream.val() & self.b_exc.val() {
            self.exc_val.next = self.k_exc_type.val();
            self.exc_len.next = self.k_escape_len.val();
        }
        // Field 5: SYNC, OVERFLOW or END escape; field 6: the lost count of OVERFLOW.
        self.esc_val.next = self.k_zero32.val();
        self.esc_len.next = self.k_zero16.val();
        if self.b_sync_due.val() {
            self.esc_val.next = self.k_sync_type.val();
            self.esc_len.next = self.k_escape_len.val();
        }
        if self.b_is_ovf.val() {
            self.esc_val.next = self.k_ovf_type.val();
            self.esc_len.next = self.k_escape_len.val();
        }
        if self.b_is_end.val() {
            self.esc_len.next = self.k_escape_len.val();
        }
        self.lost_val.next = self.k_zero32.val();
        self.lost_len.next = self.k_zero16.val();
        if self.b_is_ovf.val() {
            self.lost_val.next = self.b_sa.val();
            self.lost_len.next = self.k_lost_len.val();
        }

        // Assembly, field by field; every value is already masked to its length. Each field
        // has one or a few possible lengths, so each step is a choice between shifts by
        // constants (wiring), not a barrel shifter.
        self.a1.next = bit_cast::<64, 32>(self.run_val.val());
        self.h1.next = bit_cast::<64, 32>(self.head_val.val());
        if self.b_is_miss.val() {
            self.a2.next = (self.a1.val() << self.k_miss_len.val()) | self.h1.val();
        } else if self.b_sdc_hit.val() & !self.b_lsp_hit.val() {
            self.a2.next = (self.a1.val() << self.k_sdc_hit_len.val()) | self.h1.val();
        } else {
            self.a2.next = self.a1.val();
        }
        self.a2w.next = bit_cast::<128, 64>(self.a2.val());
        self.addr_w.next = bit_cast::<128, 32>(self.addr_val.val());
        self.exc_w.next = bit_cast::<128, 32>(self.exc_val.val());
        self.a3.next = self.a2w.val();
        if self.b_is_miss.val() & !self.b_infer.val() {
            if !self.k_enhanced.val() {
                self.a3.next = (self.a2w.val() << self.k_addr_len_bsdc.val()) | self.addr_w.val();
            } else if self.b_lvsa_match.val() {
                self.a3.next = (self.a2w.val() << self.k_addr_len_lvsa_hit.val()) | self.addr_w.val();
            } else {
                self.a3.next = (self.a2w.val() << self.k_addr_len_lvsa_miss.val()) | self.addr_w.val();
            }
        }
        if self.b_is_stream.val() & self.b_exc.val() {
            self.a4.next = (self.a3.val() << self.k_escape_len.val()) | self.exc_w.val();
        } else {
            self.a4.next = self.a3.val();
        }
        self.a4w.next = bit_cast::<192, 128>(self.a4.val());
        self.esc_w.next = bit_cast::<192, 32>(self.esc_val.val());
        self.lost_w.next = bit_cast::<192, 32>(self.lost_val.val());
        if self.b_sync_due.val() | self.b_is_ovf.val() | self.b_is_end.val() {
            self.a5.next = (self.a4w.val() << self.k_escape_len.val()) | self.esc_w.val();
        } else {
            self.a5.next = self.a4w.val();
        }
        if self.b_is_ovf.val() {
            self.a6.next = (self.a5.val() << self.k_lost_len.val()) | self.lost_w.val();
        } else {
            self.a6.next = self.a5.val();
        }
        // The lengths: fields 2-6 as a balanced sum, field 1's added last.
        self.len_off.next = (self.head_len.val() + self.addr_len.val()) + ((self.exc_len.val() + self.esc_len.val()) + self.lost_len.val());
        self.len_on.next = self.len_off.val() + self.run_len_on.val();
        self.a6w.next = bit_cast::<RECORD_BITS, 192>(self.a6.val());
        // Padding to the byte boundary (0 to 7 zero bits, a 3-level shift) and the sync marker
        // (a constant shift), for either outcome of field 1.
        self.pad_off.next = (self.k_zero8.val() - (self.bitpos.q.val() + bit_cast::<8, 16>(self.len_off.val()))) & self.k_seven8.val();
        self.pad_on.next = (self.k_zero8.val() - (self.bitpos.q.val() + bit_cast::<8, 16>(self.len_on.val()))) & self.k_seven8.val();
        self.padded_rec.next = self.b_sync_due.val() | self.b_is_ovf.val() | self.b_is_end.val();
        self.marker_len.next = self.k_zero16.val();
        if self.b_sync_due.val() | self.b_is_ovf.val() {
            self.marker_len.next = self.k_marker_len.val();
        }
        self.tail_off.next = self.k_zero16.val();
        self.tail_on.next = self.k_zero16.val();
        if self.padded_rec.val() {
            self.tail_off.next = bit_cast::<16, 8>(self.pad_off.val()) + self.marker_len.val();
            self.tail_on.next = bit_cast::<16, 8>(self.pad_on.val()) + self.marker_len.val();
        }
        self.rec_len_off.next = self.len_off.val() + self.tail_off.val();
        self.rec_len_on.next = self.len_on.val() + self.tail_on.val();
        if self.run_on.val() {
            self.pad.next = self.pad_on.val();
            self.rec_len.next = self.rec_len_on.val();
        } else {
            self.pad.next = self.pad_off.val();
            self.rec_len.next = self.rec_len_off.val();
        }
        self.padded.next = self.a6w.val() << self.pad.val();
        self.tail_val.next = self.a6w.val();
        if self.b_sync_due.val() | self.b_is_ovf.val() {
            self.tail_val.next = (self.padded.val() << self.k_marker_len.val()) | self.k_marker.val();
        }
        if self.b_is_end.val() {
            self.tail_val.next = self.padded.val();
        }
        self.rec_bits.next = self.tail_val.val();

        // State updates: the lookup's at the end of the start cycle, the assembly's at the end
        // of its cycle (the same edge with one stage).
        self.sdc.access.next = self.start.val() & self.is_stream.val() & !self.reset.val();
        self.lsp.access.next = self.b_start.val() & self.b_is_stream.val() & !self.reset.val();
        self.lsp.hit.next = self.b_lsp_hit.val();
        if self.b_start.val() {
            self.bitpos.d.next = (self.bitpos.q.val() + bit_cast::<8, 16>(self.rec_len.val())) & self.k_seven8.val();
        }
        if self.start.val() & self.is_stream.val() {
            self.infer.d.next = self.dcond.val() & (self.sl.val() < self.k_max_sl.val()) & !self.exc.val();
            self.since_reset.d.next = self.since_sum.val();
            if !self.k_two_stage.val() & (self.k_rsdc.val() | (self.k_esdc.val() & self.is_miss.val() & !self.infer.q.val())) {
                self.lvsa.d.next = self.upper.val();
            }
        }
        self.b_upper.next = self.b_sa.val() >> self.k_lvsa_shift.val();
        if self.k_two_stage.val()
            & self.b_start.val()
            & self.b_is_stream.val()
            & (self.k_rsdc.val() | (self.k_esdc.val() & self.b_is_miss.val() & !self.b_infer.val()))
        {
            self.lvsa.d.next = self.b_upper.val();
        }
        self.state_clear.next = self.reset.val() | (self.start.val() & (self.sync_due.val() | self.is_ovf.val()));
        // The SDC and the LSP update in the assembly stage (the SDC's update is delayed with
        // two stages), so they clear there: the clear still wins over the updates of the
        // record that ends in a sync.
        self.stage_clear.next = self.reset.val() | (self.b_start.val() & (self.b_sync_due.val() | self.b_is_ovf.val()));
        self.sdc.clear.next = self.stage_clear.val();
        self.lsp.clear.next = self.stage_clear.val();
        self.aolc.clear.next = self.stage_clear.val();
        if (self.state_clear.val() & !self.k_two_stage.val()) | (self.stage_clear.val() & self.k_two_stage.val()) {
            self.lvsa.d.next = self.k_zero32.val();
        }
        if self.state_clear.val() {
            self.infer.d.next = false;
            self.since_reset.d.next = self.k_zero32.val();
        }
        if self.reset.val() {
            self.bitpos.d.next = self.k_zero8.val();
            self.p_start.d.next = false;
        }
    }
}

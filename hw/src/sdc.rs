//! Stream descriptor cache (docs/trace-format.md section 5.1): N_SET x N_WAY entries, set
//! index `((A >> shift) XOR SL) AND (N_SET - 1)`, MRU-bit replacement, entry 0 absent.
//!
//! Per way, a tag table and an SL table (`SyncTableRam`, synchronous read: block RAM) hold
//! the entry; valid and MRU bits are flag rows per set (`FlagArray`, cleared in one cycle at
//! a sync). The tables are read one cycle ahead: `next_sa`/`next_sl` are the descriptor
//! that will be presented on `sa`/`sl` in the next cycle (the SDB's next head), so its set's
//! tags and SLs are on the table outputs when it is serviced; a fill in this cycle of the
//! set read for the next is forwarded by the tables. The lookup stays within one cycle of
//! the service (docs/trace-timing.md is unchanged).
//! The stored tag is the entry layout of the scheme: `A[31:low]` for bSDC/eSDC, and for
//! rSDC the reduced entry `A[31-u:low]` without `A[shift+log2(N_SET)-1:shift]` (those bits
//! equal `iSet XOR SL`, so comparing the reduced tag and SL within a set is exact).
//!
//! One lookup per cycle: `found`/`found_si` describe the matching entry combinationally;
//! with `access` high the clock edge applies the model's update: touch the matching entry,
//! else fill the victim (lowest invalid way, else lowest way with a clear MRU bit, else
//! the lowest existing way) and touch it.
//!
//! Delayed update ([`StreamDescriptorCache::new`] with `delayed`, for services of three
//! cycles or more): the lookup registers what the update needs (the set, the entry, the
//! matching way, the set's valid and MRU rows) and the update is made a cycle later, so the
//! victim choice and the table and flag writes are off the lookup's path. The next lookup
//! comes three cycles after the access at the earliest, so it sees every update; `clear`
//! must then come a cycle later too (the encoder delays it), so that it still wins over
//! the update of the record that ends in a sync. (The flag rows stay read in the lookup's
//! cycle, from the head's set: read a cycle ahead, from the SDB's next head, they put the
//! SDB's push logic in front of their row multiplexer, which measured slower.)

use rust_hdl::prelude::*;

use crate::config::HwConfig;
use crate::mem::{FlagArray, SyncTableRam, ADDR_BITS};

#[derive(LogicBlock)]
pub struct StreamDescriptorCache {
    pub clock: Signal<In, Clock>,
    pub clear: Signal<In, Bit>,
    pub sa: Signal<In, Bits<32>>,
    pub sl: Signal<In, Bits<16>>,
    /// The descriptor presented in the next cycle (for the one-cycle-ahead table read).
    pub next_sa: Signal<In, Bits<32>>,
    pub next_sl: Signal<In, Bits<16>>,
    pub access: Signal<In, Bit>,
    pub found: Signal<Out, Bit>,
    pub found_si: Signal<Out, Bits<16>>,
    /// A stream index to test against the lookup (the LSP's prediction).
    pub probe_si: Signal<In, Bits<16>>,
    /// `found` and `found_si == probe_si`, from the ways' compares in parallel with
    /// `found_si` (the probe's set against the looked-up set, its way's match selected).
    pub probe_hit: Signal<Out, Bit>,
    tags: Vec<SyncTableRam>,
    sls: Vec<SyncTableRam>,
    valid: FlagArray,
    mru: FlagArray,
    way_match: Vec<Signal<Local, Bit>>,
    /// The set index at 32 bits (upper bits 0 and never read, as for the next set below).
    set_wide_unused: Signal<Local, Bits<32>>,
    set16: Signal<Local, Bits<ADDR_BITS>>,
    next_set16: Signal<Local, Bits<ADDR_BITS>>,
    /// The next set index at 32 bits; the bits above the index are 0 and never read, which
    /// the `unused` in its name tells Verilator's lint (its default `--unused-regexp`).
    next_set_wide_unused: Signal<Local, Bits<32>>,
    next_sl32: Signal<Local, Bits<32>>,
    masked: Signal<Local, Bits<32>>,
    tag_low: Signal<Local, Bits<32>>,
    tag_high: Signal<Local, Bits<32>>,
    tag: Signal<Local, Bits<32>>,
    sl32: Signal<Local, Bits<32>>,
    exist: Signal<Local, Bits<32>>,
    cand_invalid: Signal<Local, Bits<32>>,
    cand_mru: Signal<Local, Bits<32>>,
    pick: Signal<Local, Bits<32>>,
    victim_onehot: Signal<Local, Bits<32>>,
    victim_way: Signal<Local, Bits<16>>,
    found_way: Signal<Local, Bits<16>>,
    any_found: Signal<Local, Bit>,
    access_onehot: Signal<Local, Bits<32>>,
    do_access: Signal<Local, Bit>,
    mru_set: Signal<Local, Bits<32>>,
    set_base: Signal<Local, Bits<16>>,
    way_hits: Signal<Local, Bits<32>>,
    probe_set: Signal<Local, Bits<16>>,
    probe_way: Signal<Local, Bits<16>>,
    probe_way_hit: Signal<Local, Bit>,
    /// The lookup's results for the delayed update.
    r_access: DFF<Bit>,
    r_set16: DFF<Bits<ADDR_BITS>>,
    r_tag: DFF<Bits<32>>,
    r_sl32: DFF<Bits<32>>,
    r_hits: DFF<Bits<32>>,
    r_valid: DFF<Bits<32>>,
    r_mru: DFF<Bits<32>>,
    /// What the update works on: the lookup's signals, or (delayed) their registered copies.
    w_access: Signal<Local, Bit>,
    w_set16: Signal<Local, Bits<ADDR_BITS>>,
    w_set_zero: Signal<Local, Bit>,
    w_tag: Signal<Local, Bits<32>>,
    w_sl32: Signal<Local, Bits<32>>,
    w_hits: Signal<Local, Bits<32>>,
    w_valid: Signal<Local, Bits<32>>,
    w_mru: Signal<Local, Bits<32>>,
    k_delayed: Constant<Bit>,
    k_way_mask: Constant<Bits<16>>,
    k_shift: Constant<Bits<8>>,
    k_set_mask: Constant<Bits<32>>,
    k_tag_mask: Constant<Bits<32>>,
    k_inf_lo_mask: Constant<Bits<32>>,
    k_inf_lo: Constant<Bits<8>>,
    k_inf_hi: Constant<Bits<8>>,
    k_low: Constant<Bits<8>>,
    k_way_bits: Constant<Bits<8>>,
    k_all_ways: Constant<Bits<32>>,
    k_zero32: Constant<Bits<32>>,
    k_one32: Constant<Bits<32>>,
    k_zero16: Constant<Bits<16>>,
    k_zero_set: Constant<Bits<ADDR_BITS>>,
    _ways: usize,
}

impl StreamDescriptorCache {
    /// `delayed`: make the update a cycle after the lookup (module doc); only for services
    /// of three cycles or more.
    pub fn new(h: &HwConfig, delayed: bool) -> StreamDescriptorCache {
        let sets = h.sets as usize;
        let ways = h.ways as usize;
        let mask = |bits: u32| if bits >= 32 { u32::MAX as u64 } else { (1u64 << bits) - 1 };
        StreamDescriptorCache {
            clock: Default::default(),
            clear: Default::default(),
            sa: Default::default(),
            sl: Default::default(),
            next_sa: Default::default(),
            next_sl: Default::default(),
            access: Default::default(),
            found: Default::default(),
            found_si: Default::default(),
            tags: (0..ways).map(|_| SyncTableRam::new(sets, h.tag_bits as usize)).collect(),
            sls: (0..ways).map(|_| SyncTableRam::new(sets, h.slw as usize)).collect(),
            valid: FlagArray::decoded(sets, ways),
            mru: FlagArray::decoded(sets, ways),
            way_match: (0..ways).map(|_| Default::default()).collect(),
            set_wide_unused: Default::default(),
            set16: Default::default(),
            next_set16: Default::default(),
            next_set_wide_unused: Default::default(),
            next_sl32: Default::default(),
            masked: Default::default(),
            tag_low: Default::default(),
            tag_high: Default::default(),
            tag: Default::default(),
            sl32: Default::default(),
            exist: Default::default(),
            cand_invalid: Default::default(),
            cand_mru: Default::default(),
            pick: Default::default(),
            victim_onehot: Default::default(),
            victim_way: Default::default(),
            found_way: Default::default(),
            any_found: Default::default(),
            access_onehot: Default::default(),
            do_access: Default::default(),
            mru_set: Default::default(),
            set_base: Default::default(),
            way_hits: Default::default(),
            probe_si: Default::default(),
            probe_hit: Default::default(),
            probe_set: Default::default(),
            probe_way: Default::default(),
            probe_way_hit: Default::default(),
            k_way_mask: Constant::new(((h.ways - 1) as u64).into()),
            r_access: Default::default(),
            r_set16: Default::default(),
            r_tag: Default::default(),
            r_sl32: Default::default(),
            r_hits: Default::default(),
            r_valid: Default::default(),
            r_mru: Default::default(),
            w_access: Default::default(),
            w_set16: Default::default(),
            w_set_zero: Default::default(),
            w_tag: Default::default(),
            w_sl32: Default::default(),
            w_hits: Default::default(),
            w_valid: Default::default(),
            w_mru: Default::default(),
            k_delayed: Constant::new(delayed),
            k_shift: Constant::new((h.shift as u64).into()),
            k_set_mask: Constant::new(((h.sets - 1) as u64).into()),
            k_tag_mask: Constant::new(mask(h.tag_hi).into()),
            k_inf_lo_mask: Constant::new(mask(h.inf_lo).into()),
            k_inf_lo: Constant::new((h.inf_lo as u64).into()),
            k_inf_hi: Constant::new((h.inf_hi as u64).into()),
            k_low: Constant::new((h.low as u64).into()),
            k_way_bits: Constant::new((h.way_bits as u64).into()),
            k_all_ways: Constant::new(mask(h.ways).into()),
            k_zero32: Constant::new(0u64.into()),
            k_one32: Constant::new(1u64.into()),
            k_zero16: Constant::new(0u64.into()),
            k_zero_set: Constant::new(0u64.into()),
            _ways: ways,
        }
    }
}

impl Logic for StreamDescriptorCache {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, r_access, r_set16, r_tag, r_sl32, r_hits, r_valid, r_mru);
        // Set index and the scheme's stored tag.
        self.sl32.next = bit_cast::<32, 16>(self.sl.val());
        self.set_wide_unused.next = ((self.sa.val() >> self.k_shift.val()) ^ self.sl32.val()) & self.k_set_mask.val();
        self.set16.next = bit_cast::<ADDR_BITS, 32>(self.set_wide_unused.val());
        self.next_sl32.next = bit_cast::<32, 16>(self.next_sl.val());
        self.next_set_wide_unused.next = ((self.next_sa.val() >> self.k_shift.val()) ^ self.next_sl32.val()) & self.k_set_mask.val();
        self.next_set16.next = bit_cast::<ADDR_BITS, 32>(self.next_set_wide_unused.val());
        self.masked.next = self.sa.val() & self.k_tag_mask.val();
        self.tag_low.next = self.masked.val() & self.k_inf_lo_mask.val();
        self.tag_high.next = self.masked.val() >> self.k_inf_hi.val();
        self.tag.next = ((self.tag_high.val() << self.k_inf_lo.val()) | self.tag_low.val()) >> self.k_low.val();
        // sets x ways <= 65536, so the stream index fits 16 bits.
        self.set_base.next = self.set16.val() << self.k_way_bits.val();

        self.valid.clock.next = self.clock.val();
        self.mru.clock.next = self.clock.val();
        self.valid.clear.next = self.clear.val();
        self.mru.clear.next = self.clear.val();
        self.valid.raddr.next = self.set16.val();
        self.mru.raddr.next = self.set16.val();

        // Lookup: at most one way of a set holds a given (tag, SL).
        self.found_way.next = self.k_zero16.val();
        self.any_found.next = false;
        for w in 0..self._ways {
            self.tags[w].clock.next = self.clock.val();
            self.sls[w].clock.next = self.clock.val();
            self.tags[w].raddr.next = self.next_set16.val();
            self.sls[w].raddr.next = self.next_set16.val();
            self.way_match[w].next = self.valid.rdata.val().get_bit(w)
                & (self.tags[w].rdata.val() == self.tag.val())
                & (self.sls[w].rdata.val() == self.sl32.val());
            if self.way_match[w].val() {
                self.found_way.next = w.to_bits();
                self.any_found.next = true;
            }
        }
        // The probe: SI = set << way_bits | way, so it is found iff its set is this set and
        // its way matched.
        self.probe_set.next = self.probe_si.val() >> self.k_way_bits.val();
        self.probe_way.next = self.probe_si.val() & self.k_way_mask.val();
        self.probe_way_hit.next = false;
        for w in 0..self._ways {
            if self.way_match[w].val() & (self.probe_way.val().index() == w) {
                self.probe_way_hit.next = true;
            }
        }
        self.probe_hit.next = self.probe_way_hit.val() & (self.probe_set.val() == bit_cast::<16, ADDR_BITS>(self.set16.val()));
        self.way_hits.next = self.k_zero32.val();
        if self.any_found.val() {
            self.way_hits.next = self.k_one32.val() << self.found_way.val();
        }

        // What the update works on: this cycle's lookup, or (delayed) the last cycle's.
        self.r_access.d.next = self.access.val();
        self.r_set16.d.next = self.set16.val();
        self.r_tag.d.next = self.tag.val();
        self.r_sl32.d.next = self.sl32.val();
        self.r_hits.d.next = self.way_hits.val();
        self.r_valid.d.next = self.valid.rdata.val();
        self.r_mru.d.next = self.mru.rdata.val();
        if self.k_delayed.val() {
            self.w_access.next = self.r_access.q.val();
            self.w_set16.next = self.r_set16.q.val();
            self.w_tag.next = self.r_tag.q.val();
            self.w_sl32.next = self.r_sl32.q.val();
            self.w_hits.next = self.r_hits.q.val();
            self.w_valid.next = self.r_valid.q.val();
            self.w_mru.next = self.r_mru.q.val();
        } else {
            self.w_access.next = self.access.val();
            self.w_set16.next = self.set16.val();
            self.w_tag.next = self.tag.val();
            self.w_sl32.next = self.sl32.val();
            self.w_hits.next = self.way_hits.val();
            self.w_valid.next = self.valid.rdata.val();
            self.w_mru.next = self.mru.rdata.val();
        }

        // Victim: entry 0 (set 0, way 0) does not exist.
        self.w_set_zero.next = self.w_set16.val() == self.k_zero_set.val();
        self.exist.next = self.k_all_ways.val();
        if self.w_set_zero.val() {
            self.exist.next = self.k_all_ways.val() & !self.k_one32.val();
        }
        self.cand_invalid.next = !self.w_valid.val() & self.exist.val();
        self.cand_mru.next = !self.w_mru.val() & self.exist.val();
        self.pick.next = self.exist.val();
        if self.cand_mru.val() != self.k_zero32.val() {
            self.pick.next = self.cand_mru.val();
        }
        if self.cand_invalid.val() != self.k_zero32.val() {
            self.pick.next = self.cand_invalid.val();
        }
        // Lowest set bit.
        self.victim_onehot.next = self.pick.val() & (!self.pick.val() + self.k_one32.val());
        self.victim_way.next = self.k_zero16.val();
        for w in 0..self._ways {
            if self.victim_onehot.val().get_bit(w) {
                self.victim_way.next = w.to_bits();
            }
        }

        // Access: touch the match, else fill the victim; MRU bits saturate to one-hot.
        self.access_onehot.next = self.victim_onehot.val();
        if self.w_hits.val() != self.k_zero32.val() {
            self.access_onehot.next = self.w_hits.val();
        }
        self.do_access.next = self.w_access.val() & ((self.w_hits.val() != self.k_zero32.val()) | (self.exist.val() != self.k_zero32.val()));
        self.mru_set.next = self.w_mru.val() | self.access_onehot.val();
        if (self.mru_set.val() & self.exist.val()) == self.exist.val() {
            self.mru.wdata.next = self.access_onehot.val();
        } else {
            self.mru.wdata.next = self.mru_set.val();
        }
        self.mru.we.next = self.do_access.val();
        self.mru.waddr.next = self.w_set16.val();
        self.valid.wdata.next = self.w_valid.val() | self.access_onehot.val();
        self.valid.we.next = self.do_access.val() & (self.w_hits.val() == self.k_zero32.val());
        self.valid.waddr.next = self.w_set16.val();
        for w in 0..self._ways {
            self.tags[w].waddr.next = self.w_set16.val();
            self.sls[w].waddr.next = self.w_set16.val();
            self.tags[w].wdata.next = self.w_tag.val();
            self.sls[w].wdata.next = self.w_sl32.val();
            self.tags[w].we.next = self.do_access.val() & (self.w_hits.val() == self.k_zero32.val()) & (self.victim_way.val().index() == w);
            self.sls[w].we.next = self.do_access.val() & (self.w_hits.val() == self.k_zero32.val()) & (self.victim_way.val().index() == w);
        }

        self.found.next = self.any_found.val();
        self.found_si.next = self.set_base.val() | self.found_way.val();
    }
}

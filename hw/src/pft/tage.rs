//! pft's direction predictor (docs/trace-format.md section 11.3): a bimodal base table and
//! up to 8 tagged tables indexed with folded global history, as the model's
//! `DirectionPredictor` (model/src/pft/predict.rs), bit for bit.
//!
//! One branch per cycle: `pred`/`ctx` are the combinational prediction for `iw_addr` in the
//! current state; with `update` high the clock edge applies the model's `update(taken)` for
//! that same prediction (provider counter and useful bit, or base counter; allocation or
//! the ageing sweep on a misprediction; history and folded registers). `clear` (or `reset`)
//! puts everything in the reset state of section 11.7 at the edge and wins over an update.
//!
//! Tables are `TableRam`s (asynchronous read, synchronous write) with a `FlagArray` of valid
//! flags beside each: a RAM cannot be cleared in one cycle, so `clear` drops the valid flags
//! and an invalid entry reads as its reset value (base counter 2, tagged entry zero). Every
//! write stores a whole entry and sets its flag; the base table keeps 16 counters to a row
//! and a flag per row, so a write stores the whole row. A tagged table's useful bits are a
//! RAM of their own, so that the ageing sweep (11.3) clears one at another index than the
//! lookup's. Each RAM is written at most once per cycle: the provider update and the
//! allocation go to different tables, and the sweep skips the provider's.
//!
//! Per tagged table ([`TaggedBank`], a sub-block, so each level has one array dimension)
//! three folded-history registers (widths e = log2(tsize), w = tag, w - 1) follow the
//! global history incrementally, as the model's `shift_fold`.

use rust_hdl::prelude::*;

use super::PftHwConfig;
use streamtrace_model::pft::predict::{index_shift, DirectionPredictor, AGE_BITS, ALLOC_LFSR_RESET};
use crate::mem::{FlagArray, TableRam, ADDR_BITS};

/// A folded-history register of width `n` (1..=15) over the last `len` outcomes: at a
/// shift it rotates left by one within `n` bits, takes the new outcome into bit 0 and
/// removes the outcome leaving the window (`leaving`, history bit len-1) at bit len mod n.
#[derive(LogicBlock)]
pub struct FoldedHistory {
    pub clock: Signal<In, Clock>,
    pub clear: Signal<In, Bit>,
    pub shift: Signal<In, Bit>,
    pub taken: Signal<In, Bit>,
    pub leaving: Signal<In, Bit>,
    pub value: Signal<Out, Bits<16>>,
    fold: DFF<Bits<16>>,
    up: Signal<Local, Bits<16>>,
    down: Signal<Local, Bits<16>>,
    rot: Signal<Local, Bits<16>>,
    new_bit: Signal<Local, Bits<16>>,
    exit_bit: Signal<Local, Bits<16>>,
    k_zero: Constant<Bits<16>>,
    k_one: Constant<Bits<16>>,
    k_top: Constant<Bits<16>>,
    k_mask: Constant<Bits<16>>,
    k_exit: Constant<Bits<16>>,
}

impl FoldedHistory {
    pub fn new(len: u32, n: u32) -> FoldedHistory {
        assert!((1..=15).contains(&n) && (1..=64).contains(&len));
        FoldedHistory {
            clock: Default::default(),
            clear: Default::default(),
            shift: Default::default(),
            taken: Default::default(),
            leaving: Default::default(),
            value: Default::default(),
            fold: Default::default(),
            up: Default::default(),
            down: Default::default(),
            rot: Default::default(),
            new_bit: Default::default(),
            exit_bit: Default::default(),
            k_zero: Constant::new(0u64.into()),
            k_one: Constant::new(1u64.into()),
            k_top: Constant::new(((n - 1) as u64).into()),
            k_mask: Constant::new(((1u64 << n) - 1).into()),
            k_exit: Constant::new((1u64 << (len % n)).into()),
        }
    }
}

impl Logic for FoldedHistory {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, fold);
        self.up.next = self.fold.q.val() << self.k_one.val();
        self.down.next = self.fold.q.val() >> self.k_top.val();
        self.rot.next = (self.up.val() | self.down.val()) & self.k_mask.val();
        self.new_bit.next = self.k_zero.val();
        if self.taken.val() {
            self.new_bit.next = self.k_one.val();
        }
        self.exit_bit.next = self.k_zero.val();
        if self.leaving.val() {
            self.exit_bit.next = self.k_exit.val();
        }
        if self.shift.val() {
            self.fold.d.next = self.rot.val() ^ self.new_bit.val() ^ self.exit_bit.val();
        }
        if self.clear.val() {
            self.fold.d.next = self.k_zero.val();
        }
        self.value.next = self.fold.q.val();
    }
}

/// Tagged table `i`: entries `{ctr: 3-bit signed, tag: w bits}` stored as `ctr | tag << 3`,
/// their useful bits in a RAM beside them, a valid flag per entry (for both), and the
/// table's folded history. Outputs describe the entry at this cycle's index; the parent picks at most one
/// write operation per cycle.
#[derive(LogicBlock)]
pub struct TaggedBank {
    pub clock: Signal<In, Clock>,
    /// Reset state at the edge (wins over everything).
    pub clear: Signal<In, Bit>,
    pub hpc: Signal<In, Bits<32>>,
    /// The outcome leaving this table's window at a shift: global history bit `L - 1`.
    pub leaving: Signal<In, Bit>,
    /// History shift at the edge (an update), with the new outcome `taken`.
    pub shift: Signal<In, Bit>,
    pub taken: Signal<In, Bit>,
    /// Write operations (at most one high): provider update (counter toward `taken`,
    /// useful := `useful_val` when `set_useful`), allocation, the sweep's useful clear of
    /// entry `sweep_addr` (the useful RAM only; no flag is set).
    pub op_update: Signal<In, Bit>,
    pub set_useful: Signal<In, Bit>,
    pub useful_val: Signal<In, Bit>,
    pub op_alloc: Signal<In, Bit>,
    pub op_sweep: Signal<In, Bit>,
    pub sweep_addr: Signal<In, Bits<ADDR_BITS>>,
    /// The entry at this cycle's index: tag match, its prediction (ctr >= 0), its context
    /// as a provider (2 + 4i + strength) and its useful bit.
    pub hit: Signal<Out, Bit>,
    pub pred: Signal<Out, Bit>,
    pub ctx: Signal<Out, Bits<8>>,
    pub useful: Signal<Out, Bit>,
    entries: TableRam,
    useful_ram: TableRam,
    valid: FlagArray,
    f_idx: FoldedHistory,
    f_tag: FoldedHistory,
    f_tag1: FoldedHistory,
    hsh: Signal<Local, Bits<32>>,
    fe32: Signal<Local, Bits<32>>,
    fw32: Signal<Local, Bits<32>>,
    fw1_32: Signal<Local, Bits<32>>,
    fw1_sh: Signal<Local, Bits<32>>,
    idx32: Signal<Local, Bits<32>>,
    idx16: Signal<Local, Bits<ADDR_BITS>>,
    /// Index bits above the address bus (zero by construction; `unused*` names are exempt
    /// from Verilator's unused-signal lint).
    unused_idx: Signal<Local, Bits<16>>,
    tag32: Signal<Local, Bits<32>>,
    is_valid: Signal<Local, Bit>,
    eff: Signal<Local, Bits<32>>,
    ectr: Signal<Local, Bits<3>>,
    etag_sh: Signal<Local, Bits<32>>,
    etag: Signal<Local, Bits<32>>,
    euse: Signal<Local, Bit>,
    smask: Signal<Local, Bits<2>>,
    strength: Signal<Local, Bits<2>>,
    strength8: Signal<Local, Bits<8>>,
    ctr_new: Signal<Local, Bits<3>>,
    use_new: Signal<Local, Bit>,
    wctr: Signal<Local, Bits<3>>,
    wtag: Signal<Local, Bits<32>>,
    wuse: Signal<Local, Bit>,
    wctr32: Signal<Local, Bits<32>>,
    wtag_sh: Signal<Local, Bits<32>>,
    wuse32: Signal<Local, Bits<32>>,
    wr: Signal<Local, Bit>,
    uwr: Signal<Local, Bit>,
    /// The useful RAM's write address: the lookup's, or the sweep pointer's.
    uaddr: Signal<Local, Bits<ADDR_BITS>>,
    /// The address shift of this table's index, `max(1, e - i)`.
    k_index_shift: Constant<Bits<8>>,
    k_three: Constant<Bits<8>>,
    k_one8: Constant<Bits<8>>,
    k_idx_mask: Constant<Bits<32>>,
    k_tag_mask: Constant<Bits<32>>,
    k_zero32: Constant<Bits<32>>,
    k_one32: Constant<Bits<32>>,
    k_zero2: Constant<Bits<2>>,
    k_three2: Constant<Bits<2>>,
    k_ctr_max: Constant<Bits<3>>,
    k_ctr_min: Constant<Bits<3>>,
    k_ctr_one: Constant<Bits<3>>,
    k_ctr_zero: Constant<Bits<3>>,
    k_ctr_m1: Constant<Bits<3>>,
    k_ctx_base: Constant<Bits<8>>,
}

impl TaggedBank {
    /// Table `i` of `h` (history length `h.hlen[i]`).
    pub fn new(h: &PftHwConfig, i: usize) -> TaggedBank {
        let len = h.hlen[i];
        let e = h.index_bits;
        let w = h.params.tag;
        assert!((1..=12).contains(&e) && (4..=15).contains(&w) && (1..=64).contains(&len));
        let tsize = 1usize << e;
        TaggedBank {
            clock: Default::default(),
            clear: Default::default(),
            hpc: Default::default(),
            leaving: Default::default(),
            shift: Default::default(),
            taken: Default::default(),
            op_update: Default::default(),
            set_useful: Default::default(),
            useful_val: Default::default(),
            op_alloc: Default::default(),
            op_sweep: Default::default(),
            sweep_addr: Default::default(),
            hit: Default::default(),
            pred: Default::default(),
            ctx: Default::default(),
            useful: Default::default(),
            entries: TableRam::new(tsize, 3 + w as usize),
            useful_ram: TableRam::new(tsize, 1),
            valid: FlagArray::decoded(tsize, 1),
            f_idx: FoldedHistory::new(len, e),
            f_tag: FoldedHistory::new(len, w),
            f_tag1: FoldedHistory::new(len, w - 1),
            hsh: Default::default(),
            fe32: Default::default(),
            fw32: Default::default(),
            fw1_32: Default::default(),
            fw1_sh: Default::default(),
            idx32: Default::default(),
            idx16: Default::default(),
            unused_idx: Default::default(),
            tag32: Default::default(),
            is_valid: Default::default(),
            eff: Default::default(),
            ectr: Default::default(),
            etag_sh: Default::default(),
            etag: Default::default(),
            euse: Default::default(),
            smask: Default::default(),
            strength: Default::default(),
            strength8: Default::default(),
            ctr_new: Default::default(),
            use_new: Default::default(),
            wctr: Default::default(),
            wtag: Default::default(),
            wuse: Default::default(),
            wctr32: Default::default(),
            wtag_sh: Default::default(),
            wuse32: Default::default(),
            wr: Default::default(),
            uwr: Default::default(),
            uaddr: Default::default(),
            k_index_shift: Constant::new((index_shift(e, i) as u64).into()),
            k_three: Constant::new(3u64.into()),
            k_one8: Constant::new(1u64.into()),
            k_idx_mask: Constant::new(((tsize - 1) as u64).into()),
            k_tag_mask: Constant::new(((1u64 << w) - 1).into()),
            k_zero32: Constant::new(0u64.into()),
            k_one32: Constant::new(1u64.into()),
            k_zero2: Constant::new(0u64.into()),
            k_three2: Constant::new(3u64.into()),
            k_ctr_max: Constant::new(0b011u64.into()),
            k_ctr_min: Constant::new(0b100u64.into()),
            k_ctr_one: Constant::new(1u64.into()),
            k_ctr_zero: Constant::new(0u64.into()),
            k_ctr_m1: Constant::new(0b111u64.into()),
            // 2 + 8g for the table's provider group g (trace-format 11.3); the strength adds
            // 2s here, the parent adds the alternate's agreement.
            k_ctx_base: Constant::new((DirectionPredictor::tagged_context(i, h.hlen.len(), 0, false) as u64).into()),
        }
    }
}

impl Logic for TaggedBank {
    #[hdl_gen]
    fn update(&mut self) {
        // Folded history.
        self.f_idx.clock.next = self.clock.val();
        self.f_tag.clock.next = self.clock.val();
        self.f_tag1.clock.next = self.clock.val();
        self.f_idx.clear.next = self.clear.val();
        self.f_tag.clear.next = self.clear.val();
        self.f_tag1.clear.next = self.clear.val();
        self.f_idx.shift.next = self.shift.val();
        self.f_tag.shift.next = self.shift.val();
        self.f_tag1.shift.next = self.shift.val();
        self.f_idx.taken.next = self.taken.val();
        self.f_tag.taken.next = self.taken.val();
        self.f_tag1.taken.next = self.taken.val();
        self.f_idx.leaving.next = self.leaving.val();
        self.f_tag.leaving.next = self.leaving.val();
        self.f_tag1.leaving.next = self.leaving.val();

        // index = (hpc ^ (hpc >> s_i) ^ fold_e) & (tsize - 1), s_i = max(1, e - i)
        self.hsh.next = self.hpc.val() >> self.k_index_shift.val();
        self.fe32.next = bit_cast::<32, 16>(self.f_idx.value.val());
        self.idx32.next = (self.hpc.val() ^ self.hsh.val() ^ self.fe32.val()) & self.k_idx_mask.val();
        self.idx16.next = bit_cast::<ADDR_BITS, 32>(self.idx32.val());
        self.unused_idx.next = self.idx32.val().get_bits::<16>(16);
        // tag = (hpc ^ fold_w ^ (fold_{w-1} << 1)) & (2^w - 1)
        self.fw32.next = bit_cast::<32, 16>(self.f_tag.value.val());
        self.fw1_32.next = bit_cast::<32, 16>(self.f_tag1.value.val());
        self.fw1_sh.next = self.fw1_32.val() << self.k_one8.val();
        self.tag32.next = (self.hpc.val() ^ self.fw32.val() ^ self.fw1_sh.val()) & self.k_tag_mask.val();

        // The entry; an invalid one reads as zero.
        self.entries.clock.next = self.clock.val();
        self.useful_ram.clock.next = self.clock.val();
        self.valid.clock.next = self.clock.val();
        self.valid.clear.next = self.clear.val();
        self.entries.raddr.next = self.idx16.val();
        self.entries.waddr.next = self.idx16.val();
        self.useful_ram.raddr.next = self.idx16.val();
        self.valid.raddr.next = self.idx16.val();
        self.valid.waddr.next = self.idx16.val();
        self.is_valid.next = self.valid.rdata.val() != self.k_zero32.val();
        self.eff.next = self.k_zero32.val();
        if self.is_valid.val() {
            self.eff.next = self.entries.rdata.val();
        }
        self.ectr.next = self.eff.val().get_bits::<3>(0);
        self.etag_sh.next = self.eff.val() >> self.k_three.val();
        self.etag.next = self.etag_sh.val() & self.k_tag_mask.val();
        self.euse.next = self.is_valid.val() & (self.useful_ram.rdata.val() != self.k_zero32.val());

        // Lookup: strength = ctr for ctr >= 0, -1 - ctr (= !ctr) otherwise.
        self.hit.next = self.etag.val() == self.tag32.val();
        self.pred.next = !self.ectr.val().get_bit(2);
        self.smask.next = self.k_zero2.val();
        if self.ectr.val().get_bit(2) {
            self.smask.next = self.k_three2.val();
        }
        self.strength.next = self.ectr.val().get_bits::<2>(0) ^ self.smask.val();
        self.strength8.next = bit_cast::<8, 2>(self.strength.val());
        self.ctx.next = self.k_ctx_base.val() + (self.strength8.val() << self.k_one8.val());
        self.useful.next = self.euse.val();

        // Provider update: saturating counter, useful when the parent says so.
        self.ctr_new.next = self.ectr.val();
        if self.taken.val() {
            if self.ectr.val() != self.k_ctr_max.val() {
                self.ctr_new.next = self.ectr.val() + self.k_ctr_one.val();
            }
        } else if self.ectr.val() != self.k_ctr_min.val() {
            self.ctr_new.next = self.ectr.val() - self.k_ctr_one.val();
        }
        self.use_new.next = self.euse.val();
        if self.set_useful.val() {
            self.use_new.next = self.useful_val.val();
        }

        // The written entry: update {ctr', tag, u'}, allocation {taken ? 0 : -1, tag_i, 0};
        // the sweep writes 0 into the useful RAM at its own index.
        self.wctr.next = self.ctr_new.val();
        self.wtag.next = self.etag.val();
        self.wuse.next = self.use_new.val();
        if self.op_alloc.val() {
            self.wctr.next = self.k_ctr_m1.val();
            if self.taken.val() {
                self.wctr.next = self.k_ctr_zero.val();
            }
            self.wtag.next = self.tag32.val();
            self.wuse.next = false;
        }
        self.wctr32.next = bit_cast::<32, 3>(self.wctr.val());
        self.wtag_sh.next = self.wtag.val() << self.k_three.val();
        self.wuse32.next = self.k_zero32.val();
        if self.wuse.val() & !self.op_sweep.val() {
            self.wuse32.next = self.k_one32.val();
        }
        self.wr.next = (self.op_update.val() | self.op_alloc.val()) & !self.clear.val();
        self.uwr.next = (self.op_update.val() | self.op_alloc.val() | self.op_sweep.val()) & !self.clear.val();
        self.entries.we.next = self.wr.val();
        self.entries.wdata.next = self.wctr32.val() | self.wtag_sh.val();
        self.useful_ram.we.next = self.uwr.val();
        self.uaddr.next = self.idx16.val();
        if self.op_sweep.val() {
            self.uaddr.next = self.sweep_addr.val();
        }
        self.useful_ram.waddr.next = self.uaddr.val();
        self.useful_ram.wdata.next = self.wuse32.val();
        self.valid.we.next = self.wr.val();
        self.valid.wdata.next = self.k_one32.val();
    }
}

/// The direction predictor of one pft configuration (T = 0..=8 tagged tables).
#[derive(LogicBlock)]
pub struct DirectionPredictorBlock {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: the reset state at the edge.
    pub reset: Signal<In, Bit>,
    /// Reset state at the edge (sync, overflow), winning over an update in the same cycle.
    pub clear: Signal<In, Bit>,
    /// Interworking address of the branch (bit 0 set: Thumb).
    pub iw_addr: Signal<In, Bits<32>>,
    /// Prediction for `iw_addr` in the current state: taken?, coding context.
    pub pred: Signal<Out, Bit>,
    pub ctx: Signal<Out, Bits<8>>,
    /// Apply the update with outcome `taken` at the edge.
    pub update: Signal<In, Bit>,
    pub taken: Signal<In, Bit>,
    /// A call's history bit (11.3, *Calls*) at the edge: `G := G << 1 | taken`, no table
    /// change (never with `update`).
    pub push: Signal<In, Bit>,
    base_ram: TableRam,
    base_valid: FlagArray,
    banks: Vec<TaggedBank>,
    hist: DFF<Bits<64>>,
    clr: Signal<Local, Bit>,
    hpc: Signal<Local, Bits<32>>,
    bidx32: Signal<Local, Bits<32>>,
    /// The base table's row (`base_counters_per_row` counters) and the counter's bit
    /// position in it (before its cast to a shift amount: its upper bits are zero).
    brow32: Signal<Local, Bits<32>>,
    brow16: Signal<Local, Bits<ADDR_BITS>>,
    bpos_wide_unused: Signal<Local, Bits<32>>,
    bpos: Signal<Local, Bits<8>>,
    /// The row as the table holds it (an invalid row reads as all counters 2), and the row
    /// with the updated counter.
    brow: Signal<Local, Bits<32>>,
    bmask: Signal<Local, Bits<32>>,
    bnew_sh: Signal<Local, Bits<32>>,
    brow_new: Signal<Local, Bits<32>>,
    /// Bits that are zero or unused by design (exempt from the unused-signal lint by name):
    /// the base row above the address bus, the row shifted to the counter (the other
    /// counters above it), the end of the above-provider chain.
    unused_bidx: Signal<Local, Bits<16>>,
    unused_brow_sh: Signal<Local, Bits<32>>,
    unused_above: Signal<Local, Bit>,
    /// With no tagged table (`hlen=none`) the update logic of the tables feeds nothing.
    unused_t0: Signal<Local, Bit>,
    bctr: Signal<Local, Bits<2>>,
    bctr_new: Signal<Local, Bits<2>>,
    base_pred: Signal<Local, Bit>,
    base_ctx: Signal<Local, Bits<8>>,
    /// Ripple chains over the tables, lowest first (element i: tables below i).
    c_any: Vec<Signal<Local, Bit>>,
    c_pred: Vec<Signal<Local, Bit>>,
    c_alt: Vec<Signal<Local, Bit>>,
    c_ctx: Vec<Signal<Local, Bits<8>>>,
    c_pidx: Vec<Signal<Local, Bits<4>>>,
    /// Element i: table i is above the provider (every table when there is none).
    c_above: Vec<Signal<Local, Bit>>,
    /// Element i: a free (useful = 0) table above the provider exists below table i.
    c_free: Vec<Signal<Local, Bit>>,
    /// Element i: two or more such tables exist below table i.
    c_free2: Vec<Signal<Local, Bit>>,
    /// The allocation register R (11.3), its next bit `R[2] ^ R[1]`, and whether this
    /// misprediction allocates in the second candidate.
    alloc_r: DFF<Bits<3>>,
    alloc_b: Signal<Local, Bit>,
    alloc_second: Signal<Local, Bit>,
    /// R shifted left by one (the new bit enters at bit 0 in `alloc_next`).
    alloc_shl: Signal<Local, Bits<3>>,
    alloc_next: Signal<Local, Bits<3>>,
    two_free: Signal<Local, Bit>,
    /// The ageing counter A (2 bits) and the sweep pointer (entry, table) of 11.3; a failed
    /// allocation steps A, and its wrap clears the useful bit under the pointer.
    age: DFF<Bits<2>>,
    sw_entry: DFF<Bits<ADDR_BITS>>,
    sw_table: DFF<Bits<4>>,
    fail: Signal<Local, Bit>,
    sweep_now: Signal<Local, Bit>,
    sw_wrap: Signal<Local, Bit>,
    is_prov: Vec<Signal<Local, Bit>>,
    cand: Vec<Signal<Local, Bit>>,
    prov_any: Signal<Local, Bit>,
    prov_idx: Signal<Local, Bits<4>>,
    pred_f: Signal<Local, Bit>,
    alt_f: Signal<Local, Bit>,
    ctx_f: Signal<Local, Bits<8>>,
    free_any: Signal<Local, Bit>,
    mispredict: Signal<Local, Bit>,
    /// The history shifts at the edge: an update or a call's push.
    shift: Signal<Local, Bit>,
    hist_sh: Signal<Local, Bits<64>>,
    new64: Signal<Local, Bits<64>>,
    k_lm1: Vec<Constant<Bits<6>>>,
    k_one8: Constant<Bits<8>>,
    k_two8: Constant<Bits<8>>,
    k_bim_mask: Constant<Bits<32>>,
    k_brow_shift: Constant<Bits<8>>,
    k_bpos_mask: Constant<Bits<32>>,
    k_brow_reset: Constant<Bits<32>>,
    k_three32: Constant<Bits<32>>,
    k_zero32: Constant<Bits<32>>,
    k_one32: Constant<Bits<32>>,
    k_zero64: Constant<Bits<64>>,
    k_one64: Constant<Bits<64>>,
    k_b1: Constant<Bits<2>>,
    k_b2: Constant<Bits<2>>,
    k_b3: Constant<Bits<2>>,
    k_b0: Constant<Bits<2>>,
    k_ctx0: Constant<Bits<8>>,
    k_ctx1: Constant<Bits<8>>,
    k_zero4: Constant<Bits<4>>,
    k_r_reset: Constant<Bits<3>>,
    k_r_mask: Constant<Bits<3>>,
    k_one3: Constant<Bits<3>>,
    k_age_last: Constant<Bits<2>>,
    k_one2: Constant<Bits<2>>,
    k_zero2: Constant<Bits<2>>,
    k_last_entry: Constant<Bits<ADDR_BITS>>,
    k_one16: Constant<Bits<ADDR_BITS>>,
    k_zero16: Constant<Bits<ADDR_BITS>>,
    k_last_table: Constant<Bits<4>>,
    k_one4: Constant<Bits<4>>,
    k_table_mask: Constant<Bits<4>>,
    _tables: usize,
}

impl DirectionPredictorBlock {
    pub fn new(h: &PftHwConfig) -> DirectionPredictorBlock {
        let t = h.tables;
        assert!(t <= 8 && h.hlen.len() == t);
        let bim = 1usize << h.bim_bits;
        let per_row = base_counters_per_row(bim);
        let chain = |n: usize| -> Vec<Signal<Local, Bit>> { (0..n).map(|_| Default::default()).collect() };
        DirectionPredictorBlock {
            clock: Default::default(),
            reset: Default::default(),
            clear: Default::default(),
            iw_addr: Default::default(),
            pred: Default::default(),
            ctx: Default::default(),
            update: Default::default(),
            taken: Default::default(),
            push: Default::default(),
            base_ram: TableRam::new(bim / per_row, 2 * per_row),
            base_valid: FlagArray::decoded(bim / per_row, 1),
            banks: (0..t).map(|i| TaggedBank::new(h, i)).collect(),
            hist: Default::default(),
            clr: Default::default(),
            hpc: Default::default(),
            bidx32: Default::default(),
            brow32: Default::default(),
            brow16: Default::default(),
            bpos_wide_unused: Default::default(),
            bpos: Default::default(),
            brow: Default::default(),
            bmask: Default::default(),
            bnew_sh: Default::default(),
            brow_new: Default::default(),
            unused_bidx: Default::default(),
            unused_brow_sh: Default::default(),
            unused_above: Default::default(),
            unused_t0: Default::default(),
            bctr: Default::default(),
            bctr_new: Default::default(),
            base_pred: Default::default(),
            base_ctx: Default::default(),
            c_any: chain(t + 1),
            c_pred: chain(t + 1),
            c_alt: chain(t + 1),
            c_ctx: (0..=t).map(|_| Default::default()).collect(),
            c_pidx: (0..=t).map(|_| Default::default()).collect(),
            c_above: chain(t + 1),
            c_free: chain(t + 1),
            c_free2: chain(t + 1),
            alloc_r: Default::default(),
            alloc_b: Default::default(),
            alloc_second: Default::default(),
            alloc_shl: Default::default(),
            alloc_next: Default::default(),
            two_free: Default::default(),
            age: Default::default(),
            sw_entry: Default::default(),
            sw_table: Default::default(),
            fail: Default::default(),
            sweep_now: Default::default(),
            sw_wrap: Default::default(),
            is_prov: chain(t),
            cand: chain(t),
            prov_any: Default::default(),
            prov_idx: Default::default(),
            pred_f: Default::default(),
            alt_f: Default::default(),
            ctx_f: Default::default(),
            free_any: Default::default(),
            mispredict: Default::default(),
            shift: Default::default(),
            hist_sh: Default::default(),
            new64: Default::default(),
            k_lm1: h.hlen.iter().map(|&l| Constant::new(((l - 1) as u64).into())).collect(),
            k_one8: Constant::new(1u64.into()),
            k_two8: Constant::new(2u64.into()),
            k_bim_mask: Constant::new(((bim - 1) as u64).into()),
            k_brow_shift: Constant::new((per_row.trailing_zeros() as u64).into()),
            k_bpos_mask: Constant::new(((per_row - 1) as u64).into()),
            // Every counter of a row 2 (0b10).
            k_brow_reset: Constant::new((0xAAAA_AAAAu64 & ((1u64 << (2 * per_row)) - 1)).into()),
            k_three32: Constant::new(3u64.into()),
            k_zero32: Constant::new(0u64.into()),
            k_one32: Constant::new(1u64.into()),
            k_zero64: Constant::new(0u64.into()),
            k_one64: Constant::new(1u64.into()),
            k_b0: Constant::new(0u64.into()),
            k_b1: Constant::new(1u64.into()),
            k_b2: Constant::new(2u64.into()),
            k_b3: Constant::new(3u64.into()),
            k_ctx0: Constant::new(0u64.into()),
            k_ctx1: Constant::new(1u64.into()),
            k_zero4: Constant::new(0u64.into()),
            k_r_reset: Constant::new((ALLOC_LFSR_RESET as u64).into()),
            k_r_mask: Constant::new(7u64.into()),
            k_one3: Constant::new(1u64.into()),
            k_age_last: Constant::new(((1u64 << AGE_BITS) - 1).into()),
            k_one2: Constant::new(1u64.into()),
            k_zero2: Constant::new(0u64.into()),
            k_last_entry: Constant::new(((1u64 << h.index_bits) - 1).into()),
            k_one16: Constant::new(1u64.into()),
            k_zero16: Constant::new(0u64.into()),
            k_last_table: Constant::new((t.saturating_sub(1) as u64).into()),
            k_one4: Constant::new(1u64.into()),
            // Up to 8 tables: a 3-bit table pointer.
            k_table_mask: Constant::new(7u64.into()),
            _tables: t,
        }
    }
}

impl Logic for DirectionPredictorBlock {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, hist, alloc_r, age, sw_entry, sw_table);
        self.clr.next = self.reset.val() | self.clear.val();

        // hpc = A >> 1 (Thumb) or A >> 2 (ARM).
        self.hpc.next = self.iw_addr.val() >> self.k_two8.val();
        if self.iw_addr.val().get_bit(0) {
            self.hpc.next = self.iw_addr.val() >> self.k_one8.val();
        }

        // Base table, `per_row` counters to a RAM row with one valid flag per row; an invalid
        // row reads as counters of 2.
        self.bidx32.next = self.hpc.val() & self.k_bim_mask.val();
        self.brow32.next = self.bidx32.val() >> self.k_brow_shift.val();
        self.brow16.next = bit_cast::<ADDR_BITS, 32>(self.brow32.val());
        self.unused_bidx.next = self.brow32.val().get_bits::<16>(16);
        self.bpos_wide_unused.next = (self.bidx32.val() & self.k_bpos_mask.val()) << self.k_one8.val();
        self.bpos.next = bit_cast::<8, 32>(self.bpos_wide_unused.val());
        self.base_ram.clock.next = self.clock.val();
        self.base_valid.clock.next = self.clock.val();
        self.base_valid.clear.next = self.clr.val();
        self.base_ram.raddr.next = self.brow16.val();
        self.base_ram.waddr.next = self.brow16.val();
        self.base_valid.raddr.next = self.brow16.val();
        self.base_valid.waddr.next = self.brow16.val();
        self.brow.next = self.k_brow_reset.val();
        if self.base_valid.rdata.val() != self.k_zero32.val() {
            self.brow.next = self.base_ram.rdata.val();
        }
        self.unused_brow_sh.next = self.brow.val() >> self.bpos.val();
        self.bctr.next = self.unused_brow_sh.val().get_bits::<2>(0);
        self.base_pred.next = self.bctr.val().get_bit(1);
        self.base_ctx.next = self.k_ctx1.val();
        if (self.bctr.val() == self.k_b1.val()) | (self.bctr.val() == self.k_b2.val()) {
            self.base_ctx.next = self.k_ctx0.val();
        }

        self.shift.next = self.update.val() | self.push.val();

        // Provider (highest hit), its prediction and context, the alternate (the next lower
        // hit's prediction, else the base's), as ripple chains from table 0 up.
        self.c_any[0].next = false;
        self.c_pred[0].next = self.base_pred.val();
        self.c_alt[0].next = self.base_pred.val();
        self.c_ctx[0].next = self.base_ctx.val();
        self.c_pidx[0].next = self.k_zero4.val();
        self.prov_any.next = self.c_any[0].val();
        self.pred_f.next = self.c_pred[0].val();
        self.alt_f.next = self.c_alt[0].val();
        self.ctx_f.next = self.c_ctx[0].val();
        self.prov_idx.next = self.c_pidx[0].val();
        for i in 0..self._tables {
            self.banks[i].clock.next = self.clock.val();
            self.banks[i].clear.next = self.clr.val();
            self.banks[i].hpc.next = self.hpc.val();
            self.banks[i].shift.next = self.shift.val();
            self.banks[i].taken.next = self.taken.val();
            self.banks[i].leaving.next = self.hist.q.val().get_bit(self.k_lm1[i].val().index());
            self.c_any[i + 1].next = self.c_any[i].val() | self.banks[i].hit.val();
            self.c_pred[i + 1].next = self.c_pred[i].val();
            self.c_alt[i + 1].next = self.c_alt[i].val();
            self.c_ctx[i + 1].next = self.c_ctx[i].val();
            self.c_pidx[i + 1].next = self.c_pidx[i].val();
            if self.banks[i].hit.val() {
                self.c_pred[i + 1].next = self.banks[i].pred.val();
                self.c_alt[i + 1].next = self.c_pred[i].val();
                self.c_ctx[i + 1].next = self.banks[i].ctx.val();
                self.c_pidx[i + 1].next = i.to_bits();
            }
            // Last write wins: the chains' final elements.
            self.prov_any.next = self.c_any[i + 1].val();
            self.pred_f.next = self.c_pred[i + 1].val();
            self.alt_f.next = self.c_alt[i + 1].val();
            self.ctx_f.next = self.c_ctx[i + 1].val();
            self.prov_idx.next = self.c_pidx[i + 1].val();
        }
        self.pred.next = self.pred_f.val();
        // A tagged provider's context is odd when the alternate agrees with it (11.3).
        if self.prov_any.val() & (self.pred_f.val() == self.alt_f.val()) {
            self.ctx.next = self.ctx_f.val() + self.k_ctx1.val();
        } else {
            self.ctx.next = self.ctx_f.val();
        }

        // Update: provider, tables above it, the first free one of those.
        self.mispredict.next = self.update.val() & (self.pred_f.val() != self.taken.val());
        self.c_above[0].next = !self.prov_any.val();
        self.c_free[0].next = false;
        self.c_free2[0].next = false;
        self.free_any.next = self.c_free[0].val();
        self.two_free.next = self.c_free2[0].val();
        self.unused_above.next = self.c_above[0].val();
        for i in 0..self._tables {
            self.is_prov[i].next = self.prov_any.val() & (self.prov_idx.val().index() == i);
            self.c_above[i + 1].next = self.c_above[i].val() | self.is_prov[i].val();
            self.cand[i].next = self.c_above[i].val() & !self.banks[i].useful.val();
            self.c_free[i + 1].next = self.c_free[i].val() | self.cand[i].val();
            self.c_free2[i + 1].next = self.c_free2[i].val() | (self.c_free[i].val() & self.cand[i].val());
            self.free_any.next = self.c_free[i + 1].val();
            self.two_free.next = self.c_free2[i + 1].val();
            self.unused_above.next = self.c_above[i + 1].val();
        }
        // Two or more candidates: R steps, and its new bit picks the first (0) or the second.
        self.alloc_b.next = self.alloc_r.q.val().get_bit(2) ^ self.alloc_r.q.val().get_bit(1);
        self.alloc_second.next = self.two_free.val() & self.alloc_b.val();
        self.alloc_shl.next = (self.alloc_r.q.val() << self.k_one8.val()) & self.k_r_mask.val();
        self.alloc_next.next = self.alloc_shl.val();
        if self.alloc_b.val() {
            self.alloc_next.next = self.alloc_shl.val() | self.k_one3.val();
        }
        if self.mispredict.val() & self.two_free.val() {
            self.alloc_r.d.next = self.alloc_next.val();
        }
        if self.clr.val() {
            self.alloc_r.d.next = self.k_r_reset.val();
        }
        // No candidate: the ageing counter steps; from 3 to 0 the sweep clears the useful
        // bit under its pointer (not in the provider's table) and moves on.
        self.fail.next = self.mispredict.val() & !self.free_any.val();
        self.sweep_now.next = self.fail.val() & (self.age.q.val() == self.k_age_last.val());
        self.sw_wrap.next = self.sw_entry.q.val() == self.k_last_entry.val();
        if self.fail.val() {
            self.age.d.next = self.age.q.val() + self.k_one2.val();
        }
        if self.sweep_now.val() {
            // Masked to the pointer's range (tsize is a power of two), so the entry wraps to
            // 0 by itself and synthesis sees the upper bits stay 0.
            self.sw_entry.d.next = (self.sw_entry.q.val() + self.k_one16.val()) & self.k_last_entry.val();
            if self.sw_wrap.val() {
                self.sw_table.d.next = (self.sw_table.q.val() + self.k_one4.val()) & self.k_table_mask.val();
                if self.sw_table.q.val() == self.k_last_table.val() {
                    self.sw_table.d.next = self.k_zero4.val();
                }
            }
        }
        if self.clr.val() {
            self.age.d.next = self.k_zero2.val();
            self.sw_entry.d.next = self.k_zero16.val();
            self.sw_table.d.next = self.k_zero4.val();
        }
        for i in 0..self._tables {
            self.banks[i].op_update.next = self.update.val() & self.is_prov[i].val();
            self.banks[i].set_useful.next = self.pred_f.val() != self.alt_f.val();
            self.banks[i].useful_val.next = self.pred_f.val() == self.taken.val();
            // The first candidate (none below), or the second (exactly one below).
            if self.alloc_second.val() {
                self.banks[i].op_alloc.next =
                    self.mispredict.val() & self.cand[i].val() & self.c_free[i].val() & !self.c_free2[i].val();
            } else {
                self.banks[i].op_alloc.next = self.mispredict.val() & self.cand[i].val() & !self.c_free[i].val();
            }
            self.banks[i].op_sweep.next =
                self.sweep_now.val() & (self.sw_table.q.val().index() == i) & !self.is_prov[i].val();
            self.banks[i].sweep_addr.next = self.sw_entry.q.val();
        }

        self.unused_t0.next = self.mispredict.val()
            | self.free_any.val()
            | self.alloc_second.val()
            | self.alt_f.val()
            | (self.prov_idx.val() == self.k_zero4.val())
            | self.sweep_now.val()
            | (self.sw_table.q.val() == self.k_zero4.val())
            | (self.sw_entry.q.val() == self.k_zero16.val());

        // Base counter when there is no provider.
        self.bctr_new.next = self.bctr.val();
        if self.taken.val() {
            if self.bctr.val() != self.k_b3.val() {
                self.bctr_new.next = self.bctr.val() + self.k_b1.val();
            }
        } else if self.bctr.val() != self.k_b0.val() {
            self.bctr_new.next = self.bctr.val() - self.k_b1.val();
        }
        self.bmask.next = self.k_three32.val() << self.bpos.val();
        self.bnew_sh.next = bit_cast::<32, 2>(self.bctr_new.val()) << self.bpos.val();
        self.brow_new.next = (self.brow.val() & !self.bmask.val()) | self.bnew_sh.val();
        self.base_ram.we.next = self.update.val() & !self.prov_any.val() & !self.clr.val();
        self.base_ram.wdata.next = self.brow_new.val();
        self.base_valid.we.next = self.update.val() & !self.prov_any.val() & !self.clr.val();
        self.base_valid.wdata.next = self.k_one32.val();

        // G := (G << 1) | taken.
        self.hist_sh.next = self.hist.q.val() << self.k_one8.val();
        self.new64.next = self.k_zero64.val();
        if self.taken.val() {
            self.new64.next = self.k_one64.val();
        }
        if self.shift.val() {
            self.hist.d.next = self.hist_sh.val() | self.new64.val();
        }
        if self.clr.val() {
            self.hist.d.next = self.k_zero64.val();
        }
    }
}

/// Base-table counters per RAM row: up to 16 (a 32-bit row), so the table needs one valid
/// flag per row instead of one per counter (a flag is a flip-flop with a clear and a write
/// enable, about 16 gate equivalents with its share of the read and write decoders); a
/// write rewrites the row's other counters as read (as 2 when the row is invalid).
pub fn base_counters_per_row(bim: usize) -> usize {
    bim.min(16)
}

/// Verilog module name of the block for configuration `h`.
pub fn module_name(h: &PftHwConfig) -> String {
    let cfg: String = h.model.to_string().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    format!("pft_tage_{cfg}")
}

/// The block alone as sanitized Verilog (top module [`module_name`]).
pub fn export_verilog(h: &PftHwConfig) -> Result<String, String> {
    let header = format!(
        "// {}: pft direction predictor (docs/trace-format.md 11.3), configuration {}.\n\
         // Generated from hw/src/pft/tage.rs (do not edit).\n",
        module_name(h),
        h.model
    );
    crate::verilog::export_block(DirectionPredictorBlock::new(h), &module_name(h), &header)
}

#[cfg(test)]
mod tests {
    use super::*;
    use streamtrace_model::pft::predict::fold;

    /// The folded register equals the definition `fold(G, L, n)` after every shift, for
    /// index-, tag- and (tag-1)-sized registers, short and long windows, and after a clear.
    #[test]
    fn tage_folded_history_equals_the_fold_of_the_history() {
        for (len, n) in [(1, 1), (3, 6), (8, 7), (20, 6), (50, 15), (64, 14), (64, 4), (7, 7), (5, 1)] {
            let mut uut = FoldedHistory::new(len, n);
            uut.connect_all();
            check_all(&uut).unwrap();
            let mut g = 0u64;
            let mut s = 0x9E37_79B9_7F4A_7C15u64 ^ (len as u64) << 8 ^ n as u64;
            for step in 0..600 {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let bit = (s >> 33) & 1 != 0;
                let shift = (s >> 40) & 7 != 0;
                let clear = step == 300;
                uut.taken.next = bit;
                uut.shift.next = shift;
                uut.clear.next = clear;
                uut.leaving.next = (g >> (len - 1)) & 1 != 0;
                assert!(simulate(&mut uut, 100));
                assert_eq!(uut.value.val().to_u32(), fold(g, len, n), "len {len} n {n} step {step}");
                uut.clock.next = Clock::from(true);
                assert!(simulate(&mut uut, 100));
                uut.clock.next = Clock::from(false);
                assert!(simulate(&mut uut, 100));
                if clear {
                    g = 0;
                } else if shift {
                    g = (g << 1) | bit as u64;
                }
            }
        }
    }
}

//! The job sequencer and the operation register (docs/trace-timing.md 7, version 1.7): the
//! sequencer holds a job and loads its operations into the register one at a time; the
//! coder performs the registered operation, so every input of its arithmetic comes from
//! flip-flops.
//!
//! A job is a [`JobRecord`](super::JobRecord); its operations are **phases** in a fixed
//! order, each present or not according to the record's flags. The register loads in every
//! cycle in which it is empty or its operation is performed (`act`): holding no job, the
//! sequencer pops the buffer's head and loads its first present phase; holding one, the
//! phase after the last one loaded. The job is held until its last present phase is loaded.

use rust_hdl::prelude::*;

use super::{PftHwConfig, OP_BIT, OP_FLUSH, OP_MARKER, OP_RAW, OP_SLOT};
use streamtrace_model::pft::{high_page_bits, TargetContexts, LOST_LEN_BITS, OFFSET_WIDTHS};

/// Phases in issue order (see `JobRecord::ops`).
pub const PHASES: usize = 32;

#[derive(LogicBlock)]
pub struct JobSequencer {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// The coder may perform an operation this cycle (the record register empty at start of
    /// cycle, no byte or shift left): the registered one is performed.
    pub act: Signal<In, Bit>,
    pub buf_empty: Signal<In, Bit>,
    pub head_w0: Signal<In, Bits<64>>,
    pub head_w1: Signal<In, Bits<64>>,
    /// Take the buffer's head this cycle.
    pub pop: Signal<Out, Bit>,
    /// The sequencer would take the head this cycle if the buffer had one (from registers
    /// only: the job buffer's full flag depends on it).
    pub take: Signal<Out, Bit>,
    /// The sequencer holds a job (operations left to load) at start of cycle.
    pub busy: Signal<Out, Bit>,
    /// The operation register holds an operation at start of cycle.
    pub staged: Signal<Out, Bit>,
    /// The registered operation is performed this cycle (`act` with one staged); `op_*`
    /// are the register's outputs.
    pub op_valid: Signal<Out, Bit>,
    pub op_kind: Signal<Out, Bits<3>>,
    pub op_escape: Signal<Out, Bit>,
    pub op_hit: Signal<Out, Bit>,
    pub op_fixed: Signal<Out, Bit>,
    pub op_ctx: Signal<Out, Bits<8>>,
    pub op_value: Signal<Out, Bits<16>>,
    pub op_bits: Signal<Out, Bits<8>>,
    rec0: DFF<Bits<64>>,
    rec1: DFF<Bits<64>>,
    phase: DFF<Bits<8>>,
    in_service: DFF<Bit>,
    /// The operation register.
    q_valid: DFF<Bit>,
    q_kind: DFF<Bits<3>>,
    q_escape: DFF<Bit>,
    q_hit: DFF<Bit>,
    q_fixed: DFF<Bit>,
    q_ctx: DFF<Bits<8>>,
    q_value: DFF<Bits<16>>,
    q_bits: DFF<Bits<8>>,
    /// The register loads this cycle; it loads an operation (of the held job or the head).
    fill: Signal<Local, Bit>,
    issue: Signal<Local, Bit>,
    load: Signal<Local, Bit>,
    sel_kind: Signal<Local, Bits<3>>,
    sel_escape: Signal<Local, Bit>,
    sel_hit: Signal<Local, Bit>,
    sel_fixed: Signal<Local, Bit>,
    sel_ctx: Signal<Local, Bits<8>>,
    sel_value: Signal<Local, Bits<16>>,
    sel_bits: Signal<Local, Bits<8>>,
    src0: Signal<Local, Bits<64>>,
    src1: Signal<Local, Bits<64>>,
    ph: Signal<Local, Bits<8>>,
    first: Signal<Local, Bits<8>>,
    ph1: Signal<Local, Bits<8>>,
    /// Bits unused by design (Verilator's lint skips `unused_` names).
    unused_first_found: Signal<Local, Bit>,
    more: Signal<Local, Bit>,
    next: Signal<Local, Bits<8>>,
    present: Vec<Signal<Local, Bit>>,
    first_found: Vec<Signal<Local, Bit>>,
    first_idx: Vec<Signal<Local, Bits<8>>>,
    next_found: Vec<Signal<Local, Bit>>,
    next_idx: Vec<Signal<Local, Bits<8>>>,
    /// The second present phase (a new job's phase after its first), found beside the
    /// first rather than after it: the two searches are not chained.
    second_found: Vec<Signal<Local, Bit>>,
    second_idx: Vec<Signal<Local, Bits<8>>>,
    second: Signal<Local, Bits<8>>,
    has_second: Signal<Local, Bit>,
    /// The phase after the held job's last loaded one (from the phase register).
    next_held: Signal<Local, Bits<8>>,
    more_held: Signal<Local, Bit>,
    start: Signal<Local, Bit>,
    start_same: Signal<Local, Bit>,
    exc: Signal<Local, Bit>,
    virt: Signal<Local, Bit>,
    tail: Signal<Local, Bit>,
    dir: Signal<Local, Bit>,
    dir_hit: Signal<Local, Bit>,
    tgt: Signal<Local, Bit>,
    tgt_hit: Signal<Local, Bit>,
    alt: Signal<Local, Bit>,
    alt_hit: Signal<Local, Bit>,
    ras_top: Signal<Local, Bit>,
    ras_top_hit: Signal<Local, Bit>,
    rtc: Signal<Local, Bit>,
    rtc_hit: Signal<Local, Bit>,
    off: Signal<Local, Bit>,
    off_same: Signal<Local, Bit>,
    /// A target in the high page: class 7, the flag, then bits \[11:s\] of the target
    /// (`addr_field` holds \[11:0\]; bit 0 says Thumb).
    off_high: Signal<Local, Bit>,
    hp_field: Signal<Local, Bits<16>>,
    hp_bits: Signal<Local, Bits<8>>,
    /// The RTC position moved to the top of 4 bits (the index bits in issue order).
    rtc_msb: Signal<Local, Bits<8>>,
    /// OVERFLOW's count (trace-format.md 11.5): bitlen - 1, and the bits below the leading
    /// one.
    cnt_below: Signal<Local, Bits<8>>,
    cnt_rest: Signal<Local, Bits<32>>,
    /// The count smeared right from its leading one (five shift-or steps), the leading one
    /// alone, and the weight of each bit of its position (0 or 2^k): a search of logarithmic
    /// depth (its value feeds the coder's raw-field arithmetic in the same cycle).
    cnt_smear: Vec<Signal<Local, Bits<32>>>,
    cnt_lead: Signal<Local, Bits<32>>,
    cnt_pos: Vec<Signal<Local, Bits<8>>>,
    cnt_lo_bits: Signal<Local, Bits<8>>,
    cnt_hi_bits: Signal<Local, Bits<8>>,
    /// Bits unused by design (Verilator's lint skips `unused_` names).
    unused_rtc_msb: Signal<Local, Bits<4>>,
    addr_same: Signal<Local, Bit>,
    start_field: Signal<Local, Bits<32>>,
    addr_field: Signal<Local, Bits<32>>,
    exc_offset: Signal<Local, Bits<16>>,
    tail_offset: Signal<Local, Bits<16>>,
    dir_ctx: Signal<Local, Bits<5>>,
    tgt_sel: Signal<Local, Bits<3>>,
    rtc_pos: Signal<Local, Bits<4>>,
    tail_type: Signal<Local, Bits<2>>,
    start_wide: Signal<Local, Bit>,
    addr_wide: Signal<Local, Bit>,
    /// The offset's class (from z in the address field), its width split into raw fields.
    off_class: Signal<Local, Bits<3>>,
    off_wide: Signal<Local, Bit>,
    off_hi_bits: Signal<Local, Bits<8>>,
    off_lo_bits: Signal<Local, Bits<8>>,
    field_wide: Signal<Local, Bit>,
    overflow: Signal<Local, Bit>,
    marker: Signal<Local, Bit>,
    k_slot: Constant<Bits<3>>,
    k_bit: Constant<Bits<3>>,
    k_raw: Constant<Bits<3>>,
    k_flush: Constant<Bits<3>>,
    k_marker: Constant<Bits<3>>,
    k_ctx_upper: Constant<Bits<8>>,
    k_ctx_ras_top: Constant<Bits<8>>,
    k_ctx_rtc: Constant<Bits<8>>,
    k_ctx_return: Constant<Bits<8>>,
    k_ctx_return_empty: Constant<Bits<8>>,
    k_ctx_indirect: Constant<Bits<8>>,
    k_ctx_indirect_tagged: Constant<Bits<8>>,
    k_ctx_indirect_conf: Constant<Bits<8>>,
    k_ctx_indirect_tagged_useful: Constant<Bits<8>>,
    /// RTC_INDEX_1 .. RTC_INDEX_4 (a position has at most 4 bits: `rtc` <= 16).
    k_ctx_rtc_index1: Constant<Bits<8>>,
    k_ctx_rtc_index2: Constant<Bits<8>>,
    k_ctx_rtc_index3: Constant<Bits<8>>,
    k_ctx_rtc_index4: Constant<Bits<8>>,
    k_ctx_alt: Constant<Bits<8>>,
    k_ctx_same_state: Constant<Bits<8>>,
    /// LEN_1 .. LEN_7.
    k_ctx_len1: Constant<Bits<8>>,
    k_ctx_len2: Constant<Bits<8>>,
    k_ctx_len3: Constant<Bits<8>>,
    k_ctx_len4: Constant<Bits<8>>,
    k_ctx_len5: Constant<Bits<8>>,
    k_ctx_len6: Constant<Bits<8>>,
    k_ctx_len7: Constant<Bits<8>>,
    /// The largest z of each class but the last ((1 << OFFSET_WIDTHS[i]) - 1), and the
    /// class widths in raw fields (the low field at most 16 bits, the high one the rest).
    k_zmax0: Constant<Bits<32>>,
    k_zmax1: Constant<Bits<32>>,
    k_zmax2: Constant<Bits<32>>,
    k_zmax3: Constant<Bits<32>>,
    k_zmax4: Constant<Bits<32>>,
    k_zmax5: Constant<Bits<32>>,
    k_zmax6: Constant<Bits<32>>,
    k_class1: Constant<Bits<3>>,
    k_class2: Constant<Bits<3>>,
    k_class3: Constant<Bits<3>>,
    k_class4: Constant<Bits<3>>,
    k_class5: Constant<Bits<3>>,
    k_class6: Constant<Bits<3>>,
    k_class7: Constant<Bits<3>>,
    k_wlo0: Constant<Bits<8>>,
    k_wlo1: Constant<Bits<8>>,
    k_wlo2: Constant<Bits<8>>,
    k_wlo3: Constant<Bits<8>>,
    k_wlo4: Constant<Bits<8>>,
    k_wlo5: Constant<Bits<8>>,
    k_wlo6: Constant<Bits<8>>,
    k_wlo7: Constant<Bits<8>>,
    k_whi6: Constant<Bits<8>>,
    k_whi7: Constant<Bits<8>>,
    /// Interworking: offsets start with the SAME_STATE bit.
    k_iw: Constant<Bit>,
    k_wide_same: Constant<Bit>,
    k_wide_full: Constant<Bit>,
    k_hi_same: Constant<Bits<8>>,
    k_hi_full: Constant<Bits<8>>,
    k_lo_same: Constant<Bits<8>>,
    k_lo_full: Constant<Bits<8>>,
    /// 4 - log2(rtc): the shift that puts the position's first bit at bit 3.
    k_rtc_align: Constant<Bits<8>>,
    /// The position has a bit j (j = 1..4).
    k_rtc_idx1: Constant<Bit>,
    k_rtc_idx2: Constant<Bit>,
    k_rtc_idx3: Constant<Bit>,
    k_rtc_idx4: Constant<Bit>,
    k_hp_arm: Constant<Bits<8>>,
    k_hp_thumb: Constant<Bits<8>>,
    k_two8: Constant<Bits<8>>,
    k_sixteen8: Constant<Bits<8>>,
    k_esc_exception: Constant<Bits<16>>,
    k_esc_overflow: Constant<Bits<2>>,
    k_esc_sync: Constant<Bits<2>>,
    k_zero3: Constant<Bits<3>>,
    k_zero8: Constant<Bits<8>>,
    k_one8: Constant<Bits<8>>,
    k_zero16: Constant<Bits<16>>,
    k_one16: Constant<Bits<16>>,
    k_one32: Constant<Bits<32>>,
    k_zero32: Constant<Bits<32>>,
    k_four8: Constant<Bits<8>>,
    k_eight8: Constant<Bits<8>>,
    /// The bit positions whose bit k is set (k = 0..4).
    k_pos_mask0: Constant<Bits<32>>,
    k_pos_mask1: Constant<Bits<32>>,
    k_pos_mask2: Constant<Bits<32>>,
    k_pos_mask3: Constant<Bits<32>>,
    k_pos_mask4: Constant<Bits<32>>,
    /// The largest count whose bits below the leading one fit one raw field (16 bits).
    k_count_one_field: Constant<Bits<32>>,
    k_lost_len_bits: Constant<Bits<8>>,
    k_zero64: Constant<Bits<64>>,
}

impl JobSequencer {
    pub fn new(h: &PftHwConfig) -> JobSequencer {
        let c8 = |v: u64| Constant::<Bits<8>>::new(v.into());
        let tc = |which: usize| c8((h.direction_contexts + which) as u64);
        let (n_same, n_full) = (h.address_bits(true) as u64, h.address_bits(false) as u64);
        let hi = |n: u64| n.saturating_sub(16);
        let vec_bit = |n: usize| (0..n).map(|_| Default::default()).collect::<Vec<Signal<Local, Bit>>>();
        let vec_idx = |n: usize| (0..n).map(|_| Default::default()).collect::<Vec<Signal<Local, Bits<8>>>>();
        let w = |i: usize| OFFSET_WIDTHS[i] as u64;
        let zmax = |i: usize| Constant::<Bits<32>>::new(((1u64 << w(i)) - 1).into());
        let class = |i: u64| Constant::<Bits<3>>::new(i.into());
        // The sequencer splits a field of more than 16 bits into two raw fields only in the
        // last two classes; a class width change in the model must revisit it.
        assert!(OFFSET_WIDTHS[..6].iter().all(|&w| w <= 16) && OFFSET_WIDTHS[6] > 16);
        JobSequencer {
            clock: Default::default(),
            reset: Default::default(),
            act: Default::default(),
            buf_empty: Default::default(),
            head_w0: Default::default(),
            head_w1: Default::default(),
            pop: Default::default(),
            take: Default::default(),
            busy: Default::default(),
            staged: Default::default(),
            op_valid: Default::default(),
            op_kind: Default::default(),
            op_escape: Default::default(),
            op_hit: Default::default(),
            op_fixed: Default::default(),
            op_ctx: Default::default(),
            op_value: Default::default(),
            op_bits: Default::default(),
            rec0: Default::default(),
            rec1: Default::default(),
            phase: Default::default(),
            in_service: Default::default(),
            q_valid: Default::default(),
            q_kind: Default::default(),
            q_escape: Default::default(),
            q_hit: Default::default(),
            q_fixed: Default::default(),
            q_ctx: Default::default(),
            q_value: Default::default(),
            q_bits: Default::default(),
            fill: Default::default(),
            issue: Default::default(),
            load: Default::default(),
            sel_kind: Default::default(),
            sel_escape: Default::default(),
            sel_hit: Default::default(),
            sel_fixed: Default::default(),
            sel_ctx: Default::default(),
            sel_value: Default::default(),
            sel_bits: Default::default(),
            src0: Default::default(),
            src1: Default::default(),
            ph: Default::default(),
            first: Default::default(),
            ph1: Default::default(),
            unused_first_found: Default::default(),
            more: Default::default(),
            next: Default::default(),
            present: vec_bit(PHASES),
            first_found: vec_bit(PHASES + 1),
            first_idx: vec_idx(PHASES + 1),
            next_found: vec_bit(PHASES + 1),
            next_idx: vec_idx(PHASES + 1),
            second_found: vec_bit(PHASES + 1),
            second_idx: vec_idx(PHASES + 1),
            second: Default::default(),
            has_second: Default::default(),
            next_held: Default::default(),
            more_held: Default::default(),
            start: Default::default(),
            start_same: Default::default(),
            exc: Default::default(),
            virt: Default::default(),
            tail: Default::default(),
            dir: Default::default(),
            dir_hit: Default::default(),
            tgt: Default::default(),
            tgt_hit: Default::default(),
            alt: Default::default(),
            alt_hit: Default::default(),
            ras_top: Default::default(),
            ras_top_hit: Default::default(),
            rtc: Default::default(),
            rtc_hit: Default::default(),
            off: Default::default(),
            off_same: Default::default(),
            off_high: Default::default(),
            hp_field: Default::default(),
            hp_bits: Default::default(),
            rtc_msb: Default::default(),
            cnt_below: Default::default(),
            cnt_rest: Default::default(),
            cnt_smear: (0..6).map(|_| Default::default()).collect(),
            cnt_lead: Default::default(),
            cnt_pos: (0..5).map(|_| Default::default()).collect(),
            cnt_lo_bits: Default::default(),
            cnt_hi_bits: Default::default(),
            unused_rtc_msb: Default::default(),
            addr_same: Default::default(),
            start_field: Default::default(),
            addr_field: Default::default(),
            exc_offset: Default::default(),
            tail_offset: Default::default(),
            dir_ctx: Default::default(),
            tgt_sel: Default::default(),
            rtc_pos: Default::default(),
            tail_type: Default::default(),
            start_wide: Default::default(),
            addr_wide: Default::default(),
            off_class: Default::default(),
            off_wide: Default::default(),
            off_hi_bits: Default::default(),
            off_lo_bits: Default::default(),
            field_wide: Default::default(),
            overflow: Default::default(),
            marker: Default::default(),
            k_slot: Constant::new(OP_SLOT.into()),
            k_bit: Constant::new(OP_BIT.into()),
            k_raw: Constant::new(OP_RAW.into()),
            k_flush: Constant::new(OP_FLUSH.into()),
            k_marker: Constant::new(OP_MARKER.into()),
            k_ctx_upper: tc(TargetContexts::UPPER_SAME),
            k_ctx_ras_top: tc(TargetContexts::RAS_TOP),
            k_ctx_rtc: tc(TargetContexts::RTC_HIT),
            k_ctx_return: tc(TargetContexts::RETURN),
            k_ctx_return_empty: tc(TargetContexts::RETURN_EMPTY),
            k_ctx_indirect: tc(TargetContexts::INDIRECT),
            k_ctx_indirect_tagged: tc(TargetContexts::INDIRECT_TAGGED),
            k_ctx_indirect_conf: tc(TargetContexts::INDIRECT_CONF),
            k_ctx_indirect_tagged_useful: tc(TargetContexts::INDIRECT_TAGGED_USEFUL),
            k_ctx_rtc_index1: tc(TargetContexts::RTC_INDEX),
            k_ctx_rtc_index2: tc(TargetContexts::RTC_INDEX + 1),
            k_ctx_rtc_index3: tc(TargetContexts::RTC_INDEX + 2),
            k_ctx_rtc_index4: tc(TargetContexts::RTC_INDEX + 3),
            k_ctx_alt: tc(TargetContexts::ALT),
            k_ctx_same_state: tc(TargetContexts::SAME_STATE),
            k_ctx_len1: tc(TargetContexts::LEN),
            k_ctx_len2: tc(TargetContexts::LEN + 1),
            k_ctx_len3: tc(TargetContexts::LEN + 2),
            k_ctx_len4: tc(TargetContexts::LEN + 3),
            k_ctx_len5: tc(TargetContexts::LEN + 4),
            k_ctx_len6: tc(TargetContexts::LEN + 5),
            k_ctx_len7: tc(TargetContexts::LEN + 6),
            k_zmax0: zmax(0),
            k_zmax1: zmax(1),
            k_zmax2: zmax(2),
            k_zmax3: zmax(3),
            k_zmax4: zmax(4),
            k_zmax5: zmax(5),
            k_zmax6: zmax(6),
            k_class1: class(1),
            k_class2: class(2),
            k_class3: class(3),
            k_class4: class(4),
            k_class5: class(5),
            k_class6: class(6),
            k_class7: class(7),
            k_wlo0: c8(w(0)),
            k_wlo1: c8(w(1)),
            k_wlo2: c8(w(2)),
            k_wlo3: c8(w(3)),
            k_wlo4: c8(w(4)),
            k_wlo5: c8(w(5)),
            k_wlo6: c8(w(6).min(16)),
            k_wlo7: c8(w(7).min(16)),
            k_whi6: c8(w(6) - 16),
            k_whi7: c8(w(7) - 16),
            k_iw: Constant::new(h.low == 0),
            k_wide_same: Constant::new(n_same > 16),
            k_wide_full: Constant::new(n_full > 16),
            k_hi_same: c8(hi(n_same)),
            k_hi_full: c8(hi(n_full)),
            k_lo_same: c8(n_same.min(16)),
            k_lo_full: c8(n_full.min(16)),
            k_rtc_align: c8(4 - h.rtc_pos_bits as u64),
            k_rtc_idx1: Constant::new(h.rtc_pos_bits >= 1),
            k_rtc_idx2: Constant::new(h.rtc_pos_bits >= 2),
            k_rtc_idx3: Constant::new(h.rtc_pos_bits >= 3),
            k_rtc_idx4: Constant::new(h.rtc_pos_bits >= 4),
            k_hp_arm: c8(high_page_bits(false) as u64),
            k_hp_thumb: c8(high_page_bits(true) as u64),
            k_two8: c8(2),
            k_sixteen8: c8(16),
            k_esc_exception: Constant::new((super::ESC_EXCEPTION as u64).into()),
            k_esc_overflow: Constant::new((super::ESC_OVERFLOW as u64).into()),
            k_esc_sync: Constant::new((super::ESC_SYNC as u64).into()),
            k_zero3: Constant::new(0u64.into()),
            k_zero8: c8(0),
            k_one8: c8(1),
            k_zero16: Constant::new(0u64.into()),
            k_one16: Constant::new(1u64.into()),
            k_one32: Constant::new(1u64.into()),
            k_zero32: Constant::new(0u64.into()),
            k_four8: c8(4),
            k_eight8: c8(8),
            k_pos_mask0: Constant::new(0xAAAA_AAAAu64.into()),
            k_pos_mask1: Constant::new(0xCCCC_CCCCu64.into()),
            k_pos_mask2: Constant::new(0xF0F0_F0F0u64.into()),
            k_pos_mask3: Constant::new(0xFF00_FF00u64.into()),
            k_pos_mask4: Constant::new(0xFFFF_0000u64.into()),
            k_count_one_field: Constant::new(0x1_FFFFu64.into()),
            k_lost_len_bits: c8(LOST_LEN_BITS as u64),
            k_zero64: Constant::new(0u64.into()),
        }
    }
}

impl Logic for JobSequencer {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, rec0, rec1, phase, in_service, q_valid, q_kind, q_escape, q_hit, q_fixed, q_ctx, q_value, q_bits);
        // The registered operation is performed when the coder may; the register loads when
        // it was empty or is performed now (registers only).
        self.op_valid.next = self.act.val() & self.q_valid.q.val();
        self.fill.next = !self.q_valid.q.val() | self.act.val();
        self.take.next = self.fill.val() & !self.in_service.q.val();
        self.load.next = self.take.val() & !self.buf_empty.val();
        self.issue.next = self.fill.val() & (self.in_service.q.val() | self.load.val());
        self.pop.next = self.load.val();
        self.busy.next = self.in_service.q.val();
        self.staged.next = self.q_valid.q.val();
        self.src0.next = self.rec0.q.val();
        self.src1.next = self.rec1.q.val();
        if self.load.val() {
            self.src0.next = self.head_w0.val();
            self.src1.next = self.head_w1.val();
            self.rec0.d.next = self.head_w0.val();
            self.rec1.d.next = self.head_w1.val();
        }

        // The record's fields (layout: JobRecord::pack).
        self.start_field.next = self.src0.val().get_bits::<32>(0);
        self.exc_offset.next = self.src0.val().get_bits::<16>(32);
        self.dir_ctx.next = self.src0.val().get_bits::<5>(48);
        self.tgt_sel.next = self.src0.val().get_bits::<3>(53);
        self.rtc_pos.next = self.src0.val().get_bits::<4>(56);
        self.start.next = self.src0.val().get_bit(60);
        self.start_same.next = self.src0.val().get_bit(61);
        self.exc.next = self.src0.val().get_bit(62);
        self.virt.next = self.src0.val().get_bit(63);
        self.addr_field.next = self.src1.val().get_bits::<32>(0);
        self.tail_offset.next = self.src1.val().get_bits::<16>(32);
        self.tail_type.next = self.src1.val().get_bits::<2>(48);
        self.tail.next = self.src1.val().get_bit(50);
        self.dir.next = self.src1.val().get_bit(51);
        self.dir_hit.next = self.src1.val().get_bit(52);
        self.tgt.next = self.src1.val().get_bit(53);
        self.tgt_hit.next = self.src1.val().get_bit(54);
        self.ras_top.next = self.src1.val().get_bit(55);
        self.ras_top_hit.next = self.src1.val().get_bit(56);
        self.rtc.next = self.src1.val().get_bit(57);
        self.rtc_hit.next = self.src1.val().get_bit(58);
        self.off.next = self.src1.val().get_bit(59);
        self.addr_same.next = self.src1.val().get_bit(60);
        self.alt.next = self.src1.val().get_bit(61);
        self.alt_hit.next = self.src1.val().get_bit(62);
        self.off_same.next = self.src1.val().get_bit(63);
        self.off_high.next = self.off.val() & self.src0.val().get_bit(56);
        self.rtc_msb.next = bit_cast::<8, 4>(self.rtc_pos.val()) << self.k_rtc_align.val();
        self.unused_rtc_msb.next = self.rtc_msb.val().get_bits::<4>(4);
        self.hp_field.next = self.addr_field.val().get_bits::<16>(2);
        self.hp_bits.next = self.k_hp_arm.val();
        if self.addr_field.val().get_bit(0) {
            self.hp_field.next = self.addr_field.val().get_bits::<16>(1);
            self.hp_bits.next = self.k_hp_thumb.val();
        }
        self.start_wide.next = self.k_wide_full.val();
        if self.start_same.val() {
            self.start_wide.next = self.k_wide_same.val();
        }
        self.addr_wide.next = self.k_wide_full.val();
        if self.addr_same.val() {
            self.addr_wide.next = self.k_wide_same.val();
        }
        // The offset's class: the first with z <= (1 << OFFSET_WIDTHS[class]) - 1.
        self.off_class.next = self.k_class7.val();
        if self.addr_field.val() <= self.k_zmax6.val() {
            self.off_class.next = self.k_class6.val();
        }
        if self.addr_field.val() <= self.k_zmax5.val() {
            self.off_class.next = self.k_class5.val();
        }
        if self.addr_field.val() <= self.k_zmax4.val() {
            self.off_class.next = self.k_class4.val();
        }
        if self.addr_field.val() <= self.k_zmax3.val() {
            self.off_class.next = self.k_class3.val();
        }
        if self.addr_field.val() <= self.k_zmax2.val() {
            self.off_class.next = self.k_class2.val();
        }
        if self.addr_field.val() <= self.k_zmax1.val() {
            self.off_class.next = self.k_class1.val();
        }
        if self.addr_field.val() <= self.k_zmax0.val() {
            self.off_class.next = self.k_zero3.val();
        }
        if self.off_high.val() {
            self.off_class.next = self.k_class7.val();
        }
        self.off_wide.next = false;
        self.off_hi_bits.next = self.k_whi7.val();
        self.off_lo_bits.next = self.k_wlo7.val();
        match self.off_class.val().index() {
            0 => {
                self.off_lo_bits.next = self.k_wlo0.val();
            }
            1 => {
                self.off_lo_bits.next = self.k_wlo1.val();
            }
            2 => {
                self.off_lo_bits.next = self.k_wlo2.val();
            }
            3 => {
                self.off_lo_bits.next = self.k_wlo3.val();
            }
            4 => {
                self.off_lo_bits.next = self.k_wlo4.val();
            }
            5 => {
                self.off_lo_bits.next = self.k_wlo5.val();
            }
            6 => {
                self.off_wide.next = true;
                self.off_hi_bits.next = self.k_whi6.val();
                self.off_lo_bits.next = self.k_wlo6.val();
            }
            _ => {
                self.off_wide.next = !self.off_high.val();
                if self.off_high.val() {
                    self.off_lo_bits.next = self.hp_bits.val();
                }
            }
        }
        // The address field's raw phases serve the exception vector and the offset.
        self.field_wide.next = (self.exc.val() & self.addr_wide.val()) | (self.off.val() & self.off_wide.val());
        self.overflow.next = self.tail_type.val() == self.k_esc_overflow.val();
        // OVERFLOW's count (at least 1): its leading one isolated (smear right, then the step
        // down), the bits below it, and the one's position from the positions' masks.
        self.cnt_smear[0].next = self.addr_field.val();
        self.cnt_smear[1].next = self.cnt_smear[0].val() | (self.cnt_smear[0].val() >> self.k_one8.val());
        self.cnt_smear[2].next = self.cnt_smear[1].val() | (self.cnt_smear[1].val() >> self.k_two8.val());
        self.cnt_smear[3].next = self.cnt_smear[2].val() | (self.cnt_smear[2].val() >> self.k_four8.val());
        self.cnt_smear[4].next = self.cnt_smear[3].val() | (self.cnt_smear[3].val() >> self.k_eight8.val());
        self.cnt_smear[5].next = self.cnt_smear[4].val() | (self.cnt_smear[4].val() >> self.k_sixteen8.val());
        self.cnt_lead.next = self.cnt_smear[5].val() ^ (self.cnt_smear[5].val() >> self.k_one8.val());
        self.cnt_rest.next = self.addr_field.val() ^ self.cnt_lead.val();
        self.cnt_pos[0].next = self.k_zero8.val();
        if (self.cnt_lead.val() & self.k_pos_mask0.val()) != self.k_zero32.val() {
            self.cnt_pos[0].next = self.k_one8.val();
        }
        self.cnt_pos[1].next = self.k_zero8.val();
        if (self.cnt_lead.val() & self.k_pos_mask1.val()) != self.k_zero32.val() {
            self.cnt_pos[1].next = self.k_two8.val();
        }
        self.cnt_pos[2].next = self.k_zero8.val();
        if (self.cnt_lead.val() & self.k_pos_mask2.val()) != self.k_zero32.val() {
            self.cnt_pos[2].next = self.k_four8.val();
        }
        self.cnt_pos[3].next = self.k_zero8.val();
        if (self.cnt_lead.val() & self.k_pos_mask3.val()) != self.k_zero32.val() {
            self.cnt_pos[3].next = self.k_eight8.val();
        }
        self.cnt_pos[4].next = self.k_zero8.val();
        if (self.cnt_lead.val() & self.k_pos_mask4.val()) != self.k_zero32.val() {
            self.cnt_pos[4].next = self.k_sixteen8.val();
        }
        self.cnt_below.next = (self.cnt_pos[0].val() | self.cnt_pos[1].val())
            | ((self.cnt_pos[2].val() | self.cnt_pos[3].val()) | self.cnt_pos[4].val());
        self.cnt_lo_bits.next = self.cnt_below.val();
        self.cnt_hi_bits.next = self.k_zero8.val();
        if self.cnt_below.val() > self.k_sixteen8.val() {
            self.cnt_lo_bits.next = self.k_sixteen8.val();
            self.cnt_hi_bits.next = self.cnt_below.val() - self.k_sixteen8.val();
        }
        self.marker.next = self.tail_type.val() == self.k_esc_sync.val();

        // Which phases the job has.
        self.present[0].next = self.start.val();
        self.present[1].next = self.start.val() & self.start_wide.val();
        self.present[2].next = self.start.val();
        self.present[3].next = self.exc.val();
        self.present[4].next = self.exc.val();
        self.present[5].next = self.exc.val();
        self.present[6].next = self.dir.val();
        self.present[7].next = self.tgt.val();
        self.present[8].next = self.alt.val();
        self.present[9].next = self.ras_top.val();
        self.present[10].next = self.rtc.val();
        self.present[11].next = (self.rtc.val() & self.rtc_hit.val()) & self.k_rtc_idx1.val();
        self.present[12].next = (self.rtc.val() & self.rtc_hit.val()) & self.k_rtc_idx2.val();
        self.present[13].next = (self.rtc.val() & self.rtc_hit.val()) & self.k_rtc_idx3.val();
        self.present[14].next = (self.rtc.val() & self.rtc_hit.val()) & self.k_rtc_idx4.val();
        self.present[15].next = self.exc.val();
        self.present[16].next = self.off.val() & self.k_iw.val();
        self.present[17].next = self.off.val();
        self.present[18].next = self.off.val();
        self.present[19].next = self.off.val();
        self.present[20].next = self.off.val() & (self.off_class.val() == self.k_class7.val());
        self.present[21].next = self.field_wide.val();
        self.present[22].next = self.exc.val() | self.off.val();
        self.present[23].next = self.virt.val();
        self.present[24].next = self.tail.val();
        self.present[25].next = self.tail.val();
        self.present[26].next = self.tail.val();
        self.present[27].next = self.tail.val() & self.overflow.val();
        // (From the count itself, not its leading one's position: the phase choice stays
        // off the priority encoder.)
        self.present[28].next = (self.tail.val() & self.overflow.val()) & (self.addr_field.val() > self.k_count_one_field.val());
        self.present[29].next = (self.tail.val() & self.overflow.val()) & (self.addr_field.val() > self.k_one32.val());
        // OVERFLOW codes no flush or marker (trace-format.md 11.7); SYNC both, END the flush.
        self.present[30].next = self.tail.val() & !self.overflow.val();
        self.present[31].next = self.tail.val() & self.marker.val();

        // A new job's first and second present phases (two searches side by side), and the
        // phase after the held job's last loaded one.
        self.first_found[0].next = false;
        self.first_idx[0].next = self.k_zero8.val();
        self.second_found[0].next = false;
        self.second_idx[0].next = self.k_zero8.val();
        for i in 0..PHASES {
            self.first_found[i + 1].next = self.first_found[i].val() | self.present[i].val();
            self.first_idx[i + 1].next = self.first_idx[i].val();
            if self.present[i].val() & !self.first_found[i].val() {
                self.first_idx[i + 1].next = i.to_bits();
            }
            self.second_found[i + 1].next = self.second_found[i].val() | (self.present[i].val() & self.first_found[i].val());
            self.second_idx[i + 1].next = self.second_idx[i].val();
            if (self.present[i].val() & self.first_found[i].val()) & !self.second_found[i].val() {
                self.second_idx[i + 1].next = i.to_bits();
            }
            // The last iteration's value is the chain's result (an index by a named
            // constant cannot be emitted as Verilog).
            self.first.next = self.first_idx[i + 1].val();
            self.unused_first_found.next = self.first_found[i + 1].val();
            self.second.next = self.second_idx[i + 1].val();
            self.has_second.next = self.second_found[i + 1].val();
        }
        self.ph.next = self.phase.q.val();
        if self.load.val() {
            self.ph.next = self.first.val();
        }
        self.ph1.next = self.phase.q.val() + self.k_one8.val();
        self.next_found[0].next = false;
        self.next_idx[0].next = self.k_zero8.val();
        for i in 0..PHASES {
            self.next_found[i + 1].next = self.next_found[i].val() | (self.present[i].val() & (self.ph1.val().index() <= i));
            self.next_idx[i + 1].next = self.next_idx[i].val();
            if (self.present[i].val() & (self.ph1.val().index() <= i)) & !self.next_found[i].val() {
                self.next_idx[i + 1].next = i.to_bits();
            }
            self.more_held.next = self.next_found[i + 1].val();
            self.next_held.next = self.next_idx[i + 1].val();
        }
        self.more.next = self.more_held.val();
        self.next.next = self.next_held.val();
        if self.load.val() {
            self.more.next = self.has_second.val();
            self.next.next = self.second.val();
        }

        // The operation of phase `ph`, gathered in locals (defaults, then the phase's
        // fields) and loaded into the register.
        self.sel_kind.next = self.k_raw.val();
        self.sel_escape.next = false;
        self.sel_hit.next = false;
        self.sel_fixed.next = false;
        self.sel_ctx.next = self.k_zero8.val();
        self.sel_value.next = self.k_zero16.val();
        self.sel_bits.next = self.k_sixteen8.val();
        match self.ph.val().index() {
            0 => {
                self.sel_kind.next = self.k_slot.val();
                self.sel_hit.next = self.start_same.val();
                self.sel_ctx.next = self.k_ctx_upper.val();
            }
            1 => {
                self.sel_value.next = self.start_field.val().get_bits::<16>(16);
                self.sel_bits.next = self.k_hi_full.val();
                if self.start_same.val() {
                    self.sel_bits.next = self.k_hi_same.val();
                }
            }
            2 => {
                self.sel_value.next = self.start_field.val().get_bits::<16>(0);
                self.sel_bits.next = self.k_lo_full.val();
                if self.start_same.val() {
                    self.sel_bits.next = self.k_lo_same.val();
                }
            }
            3 => {
                self.sel_kind.next = self.k_slot.val();
                self.sel_escape.next = true;
            }
            4 => {
                self.sel_value.next = self.k_esc_exception.val();
                self.sel_bits.next = self.k_two8.val();
            }
            5 => {
                self.sel_value.next = self.exc_offset.val();
            }
            6 => {
                self.sel_kind.next = self.k_slot.val();
                self.sel_hit.next = self.dir_hit.val();
                self.sel_ctx.next = bit_cast::<8, 5>(self.dir_ctx.val());
            }
            7 => {
                self.sel_kind.next = self.k_slot.val();
                if self.dir.val() {
                    self.sel_kind.next = self.k_bit.val();
                }
                self.sel_hit.next = self.tgt_hit.val();
                match self.tgt_sel.val().index() {
                    0 => {
                        self.sel_ctx.next = self.k_ctx_return.val();
                    }
                    1 => {
                        self.sel_ctx.next = self.k_ctx_return_empty.val();
                    }
                    2 => {
                        self.sel_ctx.next = self.k_ctx_indirect.val();
                    }
                    3 => {
                        self.sel_ctx.next = self.k_ctx_indirect_tagged.val();
                    }
                    4 => {
                        self.sel_ctx.next = self.k_ctx_indirect_conf.val();
                    }
                    _ => {
                        self.sel_ctx.next = self.k_ctx_indirect_tagged_useful.val();
                    }
                }
            }
            8 => {
                self.sel_kind.next = self.k_bit.val();
                self.sel_hit.next = self.alt_hit.val();
                self.sel_ctx.next = self.k_ctx_alt.val();
            }
            9 => {
                self.sel_kind.next = self.k_bit.val();
                self.sel_hit.next = self.ras_top_hit.val();
                self.sel_ctx.next = self.k_ctx_ras_top.val();
            }
            10 => {
                self.sel_kind.next = self.k_bit.val();
                self.sel_hit.next = self.rtc_hit.val();
                self.sel_ctx.next = self.k_ctx_rtc.val();
            }
            // The RTC position, most significant bit first, RTC_INDEX_j; a hit is a 0.
            11 => {
                self.sel_kind.next = self.k_bit.val();
                self.sel_hit.next = !self.rtc_msb.val().get_bit(3);
                self.sel_ctx.next = self.k_ctx_rtc_index1.val();
            }
            12 => {
                self.sel_kind.next = self.k_bit.val();
                self.sel_hit.next = !self.rtc_msb.val().get_bit(2);
                self.sel_ctx.next = self.k_ctx_rtc_index2.val();
            }
            13 => {
                self.sel_kind.next = self.k_bit.val();
                self.sel_hit.next = !self.rtc_msb.val().get_bit(1);
                self.sel_ctx.next = self.k_ctx_rtc_index3.val();
            }
            14 => {
                self.sel_kind.next = self.k_bit.val();
                self.sel_hit.next = !self.rtc_msb.val().get_bit(0);
                self.sel_ctx.next = self.k_ctx_rtc_index4.val();
            }
            15 => {
                self.sel_kind.next = self.k_bit.val();
                self.sel_hit.next = self.addr_same.val();
                self.sel_ctx.next = self.k_ctx_upper.val();
            }
            16 => {
                self.sel_kind.next = self.k_bit.val();
                self.sel_hit.next = self.off_same.val();
                self.sel_ctx.next = self.k_ctx_same_state.val();
            }
            // The class tree: LEN_1, LEN_(2 + c[2]), LEN_(4 + 2 c[2] + c[1]); a hit is a 0.
            17 => {
                self.sel_kind.next = self.k_bit.val();
                self.sel_hit.next = !self.off_class.val().get_bit(2);
                self.sel_ctx.next = self.k_ctx_len1.val();
            }
            18 => {
                self.sel_kind.next = self.k_bit.val();
                self.sel_hit.next = !self.off_class.val().get_bit(1);
                self.sel_ctx.next = self.k_ctx_len2.val();
                if self.off_class.val().get_bit(2) {
                    self.sel_ctx.next = self.k_ctx_len3.val();
                }
            }
            19 => {
                self.sel_kind.next = self.k_bit.val();
                self.sel_hit.next = !self.off_class.val().get_bit(0);
                match self.off_class.val().get_bits::<2>(1).index() {
                    0 => {
                        self.sel_ctx.next = self.k_ctx_len4.val();
                    }
                    1 => {
                        self.sel_ctx.next = self.k_ctx_len5.val();
                    }
                    2 => {
                        self.sel_ctx.next = self.k_ctx_len6.val();
                    }
                    _ => {
                        self.sel_ctx.next = self.k_ctx_len7.val();
                    }
                }
            }
            // Class 7: the high-page flag.
            20 => {
                if self.off_high.val() {
                    self.sel_value.next = self.k_one16.val();
                }
                self.sel_bits.next = self.k_one8.val();
            }
            21 => {
                self.sel_value.next = self.addr_field.val().get_bits::<16>(16);
                self.sel_bits.next = self.off_hi_bits.val();
                if self.exc.val() {
                    self.sel_bits.next = self.k_hi_full.val();
                    if self.addr_same.val() {
                        self.sel_bits.next = self.k_hi_same.val();
                    }
                }
            }
            22 => {
                self.sel_value.next = self.addr_field.val().get_bits::<16>(0);
                if self.off_high.val() {
                    self.sel_value.next = self.hp_field.val();
                }
                self.sel_bits.next = self.off_lo_bits.val();
                if self.exc.val() {
                    self.sel_bits.next = self.k_lo_full.val();
                    if self.addr_same.val() {
                        self.sel_bits.next = self.k_lo_same.val();
                    }
                }
            }
            23 => {
                self.sel_kind.next = self.k_slot.val();
                self.sel_hit.next = true;
                self.sel_fixed.next = true;
            }
            24 => {
                self.sel_kind.next = self.k_slot.val();
                self.sel_escape.next = true;
            }
            25 => {
                self.sel_value.next = bit_cast::<16, 2>(self.tail_type.val());
                self.sel_bits.next = self.k_two8.val();
            }
            26 => {
                self.sel_value.next = self.tail_offset.val();
            }
            27 => {
                self.sel_value.next = bit_cast::<16, 8>(self.cnt_below.val());
                self.sel_bits.next = self.k_lost_len_bits.val();
            }
            28 => {
                self.sel_value.next = self.cnt_rest.val().get_bits::<16>(16);
                self.sel_bits.next = self.cnt_hi_bits.val();
            }
            29 => {
                self.sel_value.next = self.cnt_rest.val().get_bits::<16>(0);
                self.sel_bits.next = self.cnt_lo_bits.val();
            }
            30 => {
                self.sel_kind.next = self.k_flush.val();
            }
            _ => {
                self.sel_kind.next = self.k_marker.val();
            }
        }

        self.op_kind.next = self.q_kind.q.val();
        self.op_escape.next = self.q_escape.q.val();
        self.op_hit.next = self.q_hit.q.val();
        self.op_fixed.next = self.q_fixed.q.val();
        self.op_ctx.next = self.q_ctx.q.val();
        self.op_value.next = self.q_value.q.val();
        self.op_bits.next = self.q_bits.q.val();
        if self.fill.val() {
            self.q_valid.d.next = self.issue.val();
            self.q_kind.d.next = self.sel_kind.val();
            self.q_escape.d.next = self.sel_escape.val();
            self.q_hit.d.next = self.sel_hit.val();
            self.q_fixed.d.next = self.sel_fixed.val();
            self.q_ctx.d.next = self.sel_ctx.val();
            self.q_value.d.next = self.sel_value.val();
            self.q_bits.d.next = self.sel_bits.val();
        }

        if self.issue.val() {
            self.in_service.d.next = self.more.val();
            self.phase.d.next = self.next.val();
        }
        if self.reset.val() {
            self.q_valid.d.next = false;
            self.in_service.d.next = false;
            self.phase.d.next = self.k_zero8.val();
            self.rec0.d.next = self.k_zero64.val();
            self.rec1.d.next = self.k_zero64.val();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pft::{JobRecord, ESC_END, ESC_OVERFLOW, ESC_SYNC};
    use std::collections::VecDeque;
    use streamtrace_model::pft::{CoderOp, Info};
    use streamtrace_model::{BufferConfig, Config};

    fn lcg(s: &mut u64) -> u64 {
        *s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        *s >> 33
    }

    fn random_record(s: &mut u64) -> JobRecord {
        let mut b = |n: u64| lcg(s).is_multiple_of(n);
        let mut r = JobRecord {
            start: b(4),
            start_same: b(2),
            exc: b(6),
            dir: b(2),
            dir_hit: b(2),
            tgt: b(3),
            tgt_hit: b(2),
            alt: b(4),
            alt_hit: b(2),
            ras_top: b(4),
            ras_top_hit: b(2),
            rtc: b(3),
            rtc_hit: b(2),
            off: b(3),
            off_same: b(2),
            addr_same: b(2),
            virt: b(8),
            tail: b(4),
            ..Default::default()
        };
        r.start_field = lcg(s) as u32 & if r.start_same { 0xF_FFFF } else { u32::MAX };
        // An exception has no target point: the address field is its vector's or an offset's.
        if r.exc {
            r.off = false;
        }
        r.addr_field = if r.off {
            // z of every class, mostly short ones.
            let z = ((lcg(s) << 1) as u32) ^ lcg(s) as u32;
            z >> [29, 27, 25, 23, 21, 19, 15, 0, 31, 28][(lcg(s) % 10) as usize]
        } else {
            lcg(s) as u32 & if r.addr_same { 0xF_FFFF } else { u32::MAX }
        };
        r.exc_offset = lcg(s) as u16;
        r.tail_offset = lcg(s) as u16;
        r.dir_ctx = (lcg(s) % 26) as u8;
        r.tgt_sel = (lcg(s) % 6) as u8;
        r.rtc_pos = (lcg(s) % 16) as u8;
        // A target in the high page: its bits [11:0], ARM or Thumb (never with an RTC
        // position, whose bits the flag shares: the front end codes one or the other).
        if r.off && !(r.rtc && r.rtc_hit) && lcg(s).is_multiple_of(4) {
            r.off_high = true;
            let thumb = lcg(s) & 1 != 0;
            r.addr_field = if thumb { lcg(s) as u32 & 0xFFE | 1 } else { lcg(s) as u32 & 0xFFC };
        }
        // An offset has no RTC position (the two share the record's bits).
        if r.off {
            r.rtc_pos = 0;
        }
        r.tail_type = [ESC_END, ESC_SYNC, ESC_OVERFLOW][(lcg(s) % 3) as usize];
        // An OVERFLOW job carries its lost count in the address field: no address then.
        if r.tail && r.tail_type == ESC_OVERFLOW {
            r.exc = false;
            r.off = false;
        }
        if !(r.start || r.exc || r.dir || r.tgt || r.alt || r.ras_top || r.rtc || r.off || r.virt || r.tail) {
            r.virt = true;
        }
        r
    }

    fn op_of(s: &JobSequencer) -> CoderOp {
        let info = Info::Address;
        let ctx = s.op_ctx.val().to_u32() as u16;
        match s.op_kind.val().to_u64() {
            OP_SLOT => {
                let escape = s.op_escape.val();
                let fixed = s.op_fixed.val();
                CoderOp::Slot { escape, hit: s.op_hit.val() && !escape, ctx: (!escape && !fixed).then_some(ctx), info }
            }
            OP_BIT => CoderOp::Bit { hit: s.op_hit.val(), ctx, info },
            OP_RAW => CoderOp::Raw { value: s.op_value.val().to_u32(), bits: s.op_bits.val().to_u32() as u8, info },
            OP_FLUSH => CoderOp::Flush,
            _ => CoderOp::Marker,
        }
    }

    /// Random records through the sequencer with the coder acting in random cycles: the
    /// operations issued are the records' software expansion, in order, one per acting cycle.
    #[test]
    fn sequencer_issues_each_records_operations_in_order() {
        for text in ["pft", "pft,u=20,rtc=1", "pft,isa=arm,rtc=16,hlen=none"] {
            let cfg: Config = text.parse().unwrap();
            let h = PftHwConfig::new(&cfg, &BufferConfig::default()).unwrap();
            let mut uut = JobSequencer::new(&h);
            uut.connect_all();
            check_all(&uut).unwrap();
            let mut s = 3u64;
            let mut queue: VecDeque<JobRecord> = VecDeque::new();
            let mut expected: VecDeque<CoderOp> = VecDeque::new();
            let mut issued = 0;
            let step = |uut: &mut JobSequencer| {
                uut.clock.next = Clock::from(true);
                assert!(simulate(uut, 200));
                uut.clock.next = Clock::from(false);
                assert!(simulate(uut, 200));
            };
            uut.reset.next = true;
            assert!(simulate(&mut uut, 200));
            step(&mut uut);
            uut.reset.next = false;
            for _ in 0..20_000 {
                if queue.len() < 3 && lcg(&mut s).is_multiple_of(3) {
                    let mut r = random_record(&mut s);
                    r.rtc_pos &= ((1u32 << h.rtc_pos_bits) - 1) as u8;
                    let same_mask = |v: u32, same: bool| v & (u32::MAX >> (32 - h.address_bits(same)));
                    r.start_field = same_mask(r.start_field, r.start_same);
                    if r.exc {
                        r.addr_field = same_mask(r.addr_field, r.addr_same);
                    }
                    queue.push_back(r);
                }
                let act = !lcg(&mut s).is_multiple_of(4);
                let head = queue.front().copied().unwrap_or_default();
                let (w0, w1) = head.pack();
                uut.act.next = act;
                uut.buf_empty.next = queue.is_empty();
                uut.head_w0.next = w0.into();
                uut.head_w1.next = w1.into();
                assert!(simulate(&mut uut, 200));
                // Nothing loaded and not performed (nothing in the register, no job held): the
                // head is taken whether or not the coder acts; the register holding a job's
                // last operation (one left, as a held job keeps the register full): the head
                // is taken in the cycle that performs it (trace-timing 1.7).
                let idle = expected.is_empty();
                let last = expected.len() == 1 && act;
                assert_eq!(uut.pop.val(), (idle || last) && !queue.is_empty(), "{text}: take");
                if uut.op_valid.val() {
                    let want = expected.pop_front().expect("an operation with none expected");
                    assert_eq!(op_of(&uut), want, "{text}: operation {issued}");
                    issued += 1;
                } else {
                    // An acting cycle performs an operation whenever one was loaded before.
                    assert!(!act || idle, "{text}: idle with work");
                }
                if uut.pop.val() {
                    let r = queue.pop_front().unwrap();
                    expected.extend(r.ops(&h));
                }
                step(&mut uut);
            }
            assert!(issued > 10_000, "{text}: {issued} operations");
        }
    }
}

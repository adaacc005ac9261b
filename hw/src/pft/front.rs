//! The pft predictor front end (docs/trace-timing.md section 7, trace-format.md 11.2-11.7):
//! in the cycle an instruction retires it classifies it (points, links), asks the
//! direction predictor (a separate block, wired by the top: `dir_*` ports), predicts and
//! codes targets with the return address stack, the indirect target predictor and the
//! recent-target cache, counts the gap, and produces the instruction's coder job as a
//! [`JobRecord`](super::JobRecord) (two words). All state updates happen at the clock edge
//! of a cycle with `retire_valid` high and `hold` low (a stalled instruction is presented
//! again, a dropped one is lost; the front end sees it once or not at all, as the model's
//! front end does).
//!
//! `restart` (the top pushed an OVERFLOW job) zeroes the gap and expects a start, keeping
//! everything else (trace-format.md 11.7); a periodic SYNC puts every table in the reset
//! state of 11.7 at the clock edge. The RAS is a table RAM with a top pointer and a count (a
//! reset empties it; an empty stack's entries are never read); the RTC is registers with a
//! count (every entry, held as an ITP entry, is compared at once); the ITP's base and tagged
//! tables are table RAMs with valid flags (an invalid entry reads as the reset value 0, tag,
//! confidence and useful bits included, and a write stores a whole entry), so a reset is
//! one cycle.

use rust_hdl::prelude::*;

use super::{
    PftHwConfig, ESC_SYNC, TGT_INDIRECT, TGT_INDIRECT_CONF, TGT_INDIRECT_TAGGED, TGT_INDIRECT_TAGGED_USEFUL, TGT_RETURN,
    TGT_RETURN_EMPTY,
};
use crate::mem::{FlagArray, TableRam, ADDR_BITS};
use streamtrace_model::pft::{
    ARM_MOV_LR_PC, HIGH_PAGE, LDR_PC_SP, LDR_PC_SP_MASK, MAX_GAP, OFFSET_WIDTHS, TABLE_JUMP, TABLE_JUMP_MASK,
};

#[derive(LogicBlock)]
pub struct PftFrontEnd {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub retire_valid: Signal<In, Bit>,
    /// The retiring instruction is held (stall) or dropped this cycle: no state changes.
    pub hold: Signal<In, Bit>,
    /// An OVERFLOW job went into the buffer: at this clock edge the gap becomes 0 and a
    /// start is expected; nothing else changes.
    pub restart: Signal<In, Bit>,
    /// Interworking address `pc | Thumb`, the instruction word (Thumb: low half), the
    /// model's branch-class code, taken, exception flag, and the interworking next address.
    pub pc: Signal<In, Bits<32>>,
    pub insn: Signal<In, Bits<32>>,
    pub branch_class: Signal<In, Bits<3>>,
    pub taken: Signal<In, Bit>,
    pub exception: Signal<In, Bit>,
    pub next_pc: Signal<In, Bits<32>>,
    /// The direction predictor's prediction for `dir_addr` (combinational).
    pub dir_pred: Signal<In, Bit>,
    pub dir_ctx: Signal<In, Bits<8>>,
    pub dir_addr: Signal<Out, Bits<32>>,
    pub dir_update: Signal<Out, Bit>,
    pub dir_taken: Signal<Out, Bit>,
    /// A direct call (a link that is not a slot) shifts its target's bit 2 into the
    /// history (11.3, *Calls*); `dir_taken` is then that bit.
    pub dir_push: Signal<Out, Bit>,
    pub dir_clear: Signal<Out, Bit>,
    /// This instruction needs the coder: its job record.
    pub job_valid: Signal<Out, Bit>,
    pub job_w0: Signal<Out, Bits<64>>,
    pub job_w1: Signal<Out, Bits<64>>,
    /// Instructions since the last slot, before this one (an overflow's or END's offset).
    pub gap: Signal<Out, Bits<16>>,
    started: DFF<Bit>,
    gap_q: DFF<Bits<16>>,
    since: DFF<Bits<32>>,
    upper: DFF<Bits<32>>,
    /// The RAS entries (none without a RAS): read at the top, written at the new top.
    ras: Vec<TableRam>,
    ras_top: DFF<Bits<8>>,
    ras_count: DFF<Bits<8>>,
    /// RTC entries, held as ITP entries are (`tw` low bits and the top-region flag).
    rtc: Vec<DFF<Bits<32>>>,
    rtc_len: DFF<Bits<8>>,
    /// ITP base table (targets by address, confidence bits) and tagged table (tags,
    /// targets by address and path, useful bits), each with its valid flags.
    itb: Vec<TableRam>,
    itb_conf: Vec<TableRam>,
    itb_valid: Vec<FlagArray>,
    itt_tag: Vec<TableRam>,
    itt_target: Vec<TableRam>,
    itt_useful: Vec<TableRam>,
    itt_valid: Vec<FlagArray>,
    path: DFF<Bits<32>>,
    // Decode.
    thumb: Signal<Local, Bit>,
    cls_none: Signal<Local, Bit>,
    cls_icond: Signal<Local, Bit>,
    cls_ret: Signal<Local, Bit>,
    /// A return point's instruction: class ret, or ARM `LDR pc, [sp], #imm` (11.2).
    is_return: Signal<Local, Bit>,
    /// The history bit for the direction predictor: the outcome, or a call's target bit 2.
    dir_bit: Signal<Local, Bit>,
    arm_cond: Signal<Local, Bit>,
    thumb_link: Signal<Local, Bit>,
    arm_link: Signal<Local, Bit>,
    links: Signal<Local, Bit>,
    link: Signal<Local, Bit>,
    mov_lr_pc: Signal<Local, Bit>,
    /// ARM `ADD{cond} pc, pc, Rm{, shift #imm}`: a jump table (11.5, *offset*).
    table_jump: Signal<Local, Bit>,
    direction: Signal<Local, Bit>,
    target: Signal<Local, Bit>,
    slot: Signal<Local, Bit>,
    tgt_pt: Signal<Local, Bit>,
    hw_top5: Signal<Local, Bits<5>>,
    hw_top9: Signal<Local, Bits<9>>,
    cond4: Signal<Local, Bits<4>>,
    op3: Signal<Local, Bits<3>>,
    hpc: Signal<Local, Bits<32>>,
    // Start and addresses.
    enable: Signal<Local, Bit>,
    awaiting: Signal<Local, Bit>,
    upper_pc: Signal<Local, Bits<32>>,
    upper_next: Signal<Local, Bits<32>>,
    start_same: Signal<Local, Bit>,
    start_field: Signal<Local, Bits<32>>,
    upper1: Signal<Local, Bits<32>>,
    addr_same: Signal<Local, Bit>,
    addr_field: Signal<Local, Bits<32>>,
    // Targets.
    ras_empty: Signal<Local, Bit>,
    ras_top_val: Signal<Local, Bits<32>>,
    itb_index: Signal<Local, Bits<ADDR_BITS>>,
    /// The branch's address above the `tw` target bits an ITP entry holds.
    tgt_upper: Signal<Local, Bits<32>>,
    /// The ITP entries as read (low bits and top-region flag) and what they predict.
    itb_entry: Signal<Local, Bits<32>>,
    itt_entry: Signal<Local, Bits<32>>,
    /// The entry an ITP write stores: the target's low bits and its top-region flag.
    tgt_top: Signal<Local, Bit>,
    tgt_entry: Signal<Local, Bits<32>>,
    base_val: Signal<Local, Bits<32>>,
    itt_hash: Signal<Local, Bits<32>>,
    itt_index: Signal<Local, Bits<ADDR_BITS>>,
    itt_tag_calc: Signal<Local, Bits<32>>,
    itt_tag_val: Signal<Local, Bits<32>>,
    itt_target_val: Signal<Local, Bits<32>>,
    tagged_hit: Signal<Local, Bit>,
    /// The base entry's confidence bit and the tagged entry's useful bit as read.
    base_conf: Signal<Local, Bit>,
    itt_useful_val: Signal<Local, Bit>,
    itp_train: Signal<Local, Bit>,
    /// The update of 11.4: the tagged entry provided the target; the base entry's is wrong.
    tagged_right: Signal<Local, Bit>,
    base_wrong: Signal<Local, Bit>,
    itt_write: Signal<Local, Bit>,
    /// The tagged entry takes the new tag and target (else it keeps what it holds).
    itt_replace: Signal<Local, Bit>,
    itt_wtag: Signal<Local, Bits<32>>,
    itt_wentry: Signal<Local, Bits<32>>,
    itb_write: Signal<Local, Bit>,
    itb_wentry: Signal<Local, Bits<32>>,
    itb_wconf: Signal<Local, Bits<32>>,
    itt_wuseful: Signal<Local, Bits<32>>,
    pred_tgt: Signal<Local, Bits<32>>,
    tgt_sel: Signal<Local, Bits<3>>,
    tgt_hit: Signal<Local, Bit>,
    miss: Signal<Local, Bit>,
    alt_present: Signal<Local, Bit>,
    alt_hit: Signal<Local, Bit>,
    alt_taken: Signal<Local, Bit>,
    ras_top_present: Signal<Local, Bit>,
    ras_top_hit: Signal<Local, Bit>,
    ras_top_taken: Signal<Local, Bit>,
    rtc_present: Signal<Local, Bit>,
    /// The RTC can name the target for this branch: it lies in the branch's `tw` region or
    /// in the top region (11.4).
    rtc_nameable: Signal<Local, Bit>,
    rtc_match: Vec<Signal<Local, Bit>>,
    rtc_found: Vec<Signal<Local, Bit>>,
    rtc_pos_v: Vec<Signal<Local, Bits<8>>>,
    rtc_any: Signal<Local, Bit>,
    rtc_pos: Signal<Local, Bits<8>>,
    rtc_hit: Signal<Local, Bit>,
    off: Signal<Local, Bit>,
    off_same: Signal<Local, Bit>,
    off_shift: Signal<Local, Bits<8>>,
    off_a: Signal<Local, Bits<32>>,
    off_t: Signal<Local, Bits<32>>,
    off_d: Signal<Local, Bits<32>>,
    off_sign: Signal<Local, Bits<32>>,
    off_z: Signal<Local, Bits<32>>,
    off_zigzag: Signal<Local, Bits<32>>,
    /// Class 7 and a target in the high page: the flag and the target's bits [11:0].
    off_high: Signal<Local, Bit>,
    rec_aux: Signal<Local, Bits<8>>,
    rtc_len_grown: Signal<Local, Bits<8>>,
    rtc_from: Signal<Local, Bits<8>>,
    rtc_touch: Signal<Local, Bit>,
    // RAS update.
    pop: Signal<Local, Bit>,
    push: Signal<Local, Bit>,
    push_val: Signal<Local, Bits<32>>,
    top1: Signal<Local, Bits<8>>,
    count1: Signal<Local, Bits<8>>,
    top2: Signal<Local, Bits<8>>,
    count2: Signal<Local, Bits<8>>,
    // Gap, virtual slot, sync.
    gap_inc: Signal<Local, Bits<16>>,
    gap_next: Signal<Local, Bits<16>>,
    exc_offset: Signal<Local, Bits<16>>,
    virt: Signal<Local, Bit>,
    since_inc: Signal<Local, Bits<32>>,
    sync_now: Signal<Local, Bit>,
    reset_state: Signal<Local, Bit>,
    // Record.
    dir_ctx5: Signal<Local, Bits<5>>,
    /// Bits unused by design (Verilator's lint skips `unused_` names).
    unused_dir_ctx: Signal<Local, Bits<3>>,
    unused_itp_writes: Signal<Local, Bits<32>>,
    unused_itp_write_enables: Signal<Local, Bit>,
    unused_itt_hash: Signal<Local, Bits<16>>,
    unused_itb_valid: Signal<Local, Bits<32>>,
    unused_itt_valid: Signal<Local, Bits<32>>,
    unused_itb_index: Signal<Local, Bits<ADDR_BITS>>,
    unused_itt_index: Signal<Local, Bits<ADDR_BITS>>,
    unused_itt_write: Signal<Local, Bit>,
    unused_rtc_from: Signal<Local, Bits<8>>,
    unused_push_val: Signal<Local, Bits<32>>,
    unused_rtc_chain: Signal<Local, Bit>,
    fields0: Signal<Local, Bits<64>>,
    fields1: Signal<Local, Bits<64>>,
    f_start: Signal<Local, Bits<64>>,
    f_start_same: Signal<Local, Bits<64>>,
    f_exc: Signal<Local, Bits<64>>,
    f_virt: Signal<Local, Bits<64>>,
    f_tail: Signal<Local, Bits<64>>,
    f_dir: Signal<Local, Bits<64>>,
    f_dir_hit: Signal<Local, Bits<64>>,
    f_tgt: Signal<Local, Bits<64>>,
    f_tgt_hit: Signal<Local, Bits<64>>,
    f_ras_top: Signal<Local, Bits<64>>,
    f_ras_top_hit: Signal<Local, Bits<64>>,
    f_rtc: Signal<Local, Bits<64>>,
    f_rtc_hit: Signal<Local, Bits<64>>,
    f_alt: Signal<Local, Bits<64>>,
    f_alt_hit: Signal<Local, Bits<64>>,
    f_off: Signal<Local, Bits<64>>,
    f_off_same: Signal<Local, Bits<64>>,
    f_addr_same: Signal<Local, Bits<64>>,
    tail_bits: Signal<Local, Bits<64>>,
    // Constants.
    k_c0: Constant<Bits<3>>,
    k_c1: Constant<Bits<3>>,
    k_c3: Constant<Bits<3>>,
    k_c4: Constant<Bits<3>>,
    k_c5: Constant<Bits<3>>,
    k_cond_al: Constant<Bits<4>>,
    k_cond_nv: Constant<Bits<4>>,
    k_bl_op: Constant<Bits<3>>,
    k_thumb_bl: Constant<Bits<5>>,
    k_thumb_blx: Constant<Bits<5>>,
    k_thumb_blx_reg: Constant<Bits<9>>,
    k_blx_reg_mask: Constant<Bits<32>>,
    k_ldr_pc_sp_mask: Constant<Bits<32>>,
    k_ldr_pc_sp: Constant<Bits<32>>,
    k_blx_reg: Constant<Bits<32>>,
    k_mov_lr_pc: Constant<Bits<32>>,
    k_upper_shift: Constant<Bits<8>>,
    k_low: Constant<Bits<8>>,
    k_mask_same: Constant<Bits<32>>,
    k_mask_full: Constant<Bits<32>>,
    k_one32: Constant<Bits<32>>,
    k_two32: Constant<Bits<32>>,
    k_four32: Constant<Bits<32>>,
    k_eight32: Constant<Bits<32>>,
    k_zero32: Constant<Bits<32>>,
    k_ones32: Constant<Bits<32>>,
    k_path_mask: Constant<Bits<32>>,
    k_tgt_upper_mask: Constant<Bits<32>>,
    k_tgt_low_mask: Constant<Bits<32>>,
    k_tgt_flag: Constant<Bits<32>>,
    k_itb_mask: Constant<Bits<ADDR_BITS>>,
    k_itt_mask: Constant<Bits<ADDR_BITS>>,
    k_itt_shift: Constant<Bits<8>>,
    k_ttag_shift: Constant<Bits<8>>,
    k_ttag_mask: Constant<Bits<32>>,
    k_has_itt: Constant<Bit>,
    k_two8: Constant<Bits<8>>,
    k_three8: Constant<Bits<8>>,
    k_five8: Constant<Bits<8>>,
    k_has_ras: Constant<Bit>,
    k_has_rtc: Constant<Bit>,
    k_ras_last: Constant<Bits<8>>,
    k_ras_depth: Constant<Bits<8>>,
    k_rtc_size: Constant<Bits<8>>,
    k_one8: Constant<Bits<8>>,
    k_zero8: Constant<Bits<8>>,
    k_one16: Constant<Bits<16>>,
    k_zero16: Constant<Bits<16>>,
    k_max_gap: Constant<Bits<16>>,
    k_sync_on: Constant<Bit>,
    k_sync_period: Constant<Bits<32>>,
    k_sel_return: Constant<Bits<3>>,
    k_sel_return_empty: Constant<Bits<3>>,
    k_sel_indirect: Constant<Bits<3>>,
    k_sel_indirect_tagged: Constant<Bits<3>>,
    k_sel_indirect_conf: Constant<Bits<3>>,
    k_sel_indirect_tagged_useful: Constant<Bits<3>>,
    k_table_mask: Constant<Bits<32>>,
    k_table: Constant<Bits<32>>,
    k_page_mask: Constant<Bits<32>>,
    k_high_page: Constant<Bits<32>>,
    k_low12: Constant<Bits<32>>,
    /// The largest z below class 7.
    k_zmax6: Constant<Bits<32>>,
    k_sh32: Constant<Bits<8>>,
    k_sh48: Constant<Bits<8>>,
    k_sh53: Constant<Bits<8>>,
    k_sh56: Constant<Bits<8>>,
    k_tail_sync: Constant<Bits<64>>,
    k_b_start: Constant<Bits<64>>,
    k_b_start_same: Constant<Bits<64>>,
    k_b_exc: Constant<Bits<64>>,
    k_b_virt: Constant<Bits<64>>,
    k_b_tail: Constant<Bits<64>>,
    k_b_dir: Constant<Bits<64>>,
    k_b_dir_hit: Constant<Bits<64>>,
    k_b_tgt: Constant<Bits<64>>,
    k_b_tgt_hit: Constant<Bits<64>>,
    k_b_ras_top: Constant<Bits<64>>,
    k_b_ras_top_hit: Constant<Bits<64>>,
    k_b_rtc: Constant<Bits<64>>,
    k_b_rtc_hit: Constant<Bits<64>>,
    k_b_off: Constant<Bits<64>>,
    k_b_addr_same: Constant<Bits<64>>,
    k_b_alt: Constant<Bits<64>>,
    k_b_alt_hit: Constant<Bits<64>>,
    k_b_off_same: Constant<Bits<64>>,
    k_zero64: Constant<Bits<64>>,
    /// RAS tables: 1 with a RAS, 0 without.
    _ras: usize,
    _rtc: usize,
    /// 1 with an RTC (its entry 0 takes a new front), 0 without.
    _rtc_front: usize,
    /// 1 with a base / tagged target table, 0 without.
    _itb_tables: usize,
    _itt_tables: usize,
}

impl PftFrontEnd {
    pub fn new(h: &PftHwConfig) -> PftFrontEnd {
        let p = &h.params;
        let c32 = |v: u64| Constant::<Bits<32>>::new(v.into());
        let c8 = |v: u64| Constant::<Bits<8>>::new(v.into());
        let c64 = |v: u64| Constant::<Bits<64>>::new(v.into());
        let bit = |i: u32| c64(1u64 << i);
        let mask = |n: u32| c32(if n >= 32 { u32::MAX as u64 } else { (1u64 << n) - 1 });
        let itb_tables = (p.itp > 0) as usize;
        let itt_tables = (p.itt > 0) as usize;
        PftFrontEnd {
            clock: Default::default(),
            reset: Default::default(),
            retire_valid: Default::default(),
            hold: Default::default(),
            restart: Default::default(),
            pc: Default::default(),
            insn: Default::default(),
            branch_class: Default::default(),
            taken: Default::default(),
            exception: Default::default(),
            next_pc: Default::default(),
            dir_pred: Default::default(),
            dir_ctx: Default::default(),
            dir_addr: Default::default(),
            dir_update: Default::default(),
            dir_taken: Default::default(),
            dir_push: Default::default(),
            dir_clear: Default::default(),
            job_valid: Default::default(),
            job_w0: Default::default(),
            job_w1: Default::default(),
            gap: Default::default(),
            started: Default::default(),
            gap_q: Default::default(),
            since: Default::default(),
            upper: Default::default(),
            ras: (0..(p.ras > 0) as usize).map(|_| TableRam::new(p.ras as usize, 32)).collect(),
            ras_top: Default::default(),
            ras_count: Default::default(),
            rtc: (0..p.rtc).map(|_| Default::default()).collect(),
            rtc_len: Default::default(),
            itb: (0..itb_tables).map(|_| TableRam::new(p.itp as usize, p.target_entry_bits() as usize)).collect(),
            itb_conf: (0..itb_tables).map(|_| TableRam::new(p.itp as usize, 1)).collect(),
            itb_valid: (0..itb_tables).map(|_| FlagArray::decoded(p.itp as usize, 1)).collect(),
            itt_tag: (0..itt_tables).map(|_| TableRam::new(p.itt as usize, p.ttag as usize)).collect(),
            itt_target: (0..itt_tables).map(|_| TableRam::new(p.itt as usize, p.target_entry_bits() as usize)).collect(),
            itt_useful: (0..itt_tables).map(|_| TableRam::new(p.itt as usize, 1)).collect(),
            itt_valid: (0..itt_tables).map(|_| FlagArray::decoded(p.itt as usize, 1)).collect(),
            path: Default::default(),
            thumb: Default::default(),
            cls_none: Default::default(),
            cls_icond: Default::default(),
            cls_ret: Default::default(),
            is_return: Default::default(),
            dir_bit: Default::default(),
            arm_cond: Default::default(),
            thumb_link: Default::default(),
            arm_link: Default::default(),
            links: Default::default(),
            link: Default::default(),
            mov_lr_pc: Default::default(),
            table_jump: Default::default(),
            direction: Default::default(),
            target: Default::default(),
            slot: Default::default(),
            tgt_pt: Default::default(),
            hw_top5: Default::default(),
            hw_top9: Default::default(),
            cond4: Default::default(),
            op3: Default::default(),
            hpc: Default::default(),
            enable: Default::default(),
            awaiting: Default::default(),
            upper_pc: Default::default(),
            upper_next: Default::default(),
            start_same: Default::default(),
            start_field: Default::default(),
            upper1: Default::default(),
            addr_same: Default::default(),
            addr_field: Default::default(),
            ras_empty: Default::default(),
            ras_top_val: Default::default(),
            itb_index: Default::default(),
            tgt_upper: Default::default(),
            itb_entry: Default::default(),
            itt_entry: Default::default(),
            tgt_top: Default::default(),
            tgt_entry: Default::default(),
            base_val: Default::default(),
            itt_hash: Default::default(),
            itt_index: Default::default(),
            itt_tag_calc: Default::default(),
            itt_tag_val: Default::default(),
            itt_target_val: Default::default(),
            tagged_hit: Default::default(),
            base_conf: Default::default(),
            itt_useful_val: Default::default(),
            itp_train: Default::default(),
            tagged_right: Default::default(),
            base_wrong: Default::default(),
            itt_write: Default::default(),
            itt_replace: Default::default(),
            itt_wtag: Default::default(),
            itt_wentry: Default::default(),
            itb_write: Default::default(),
            itb_wentry: Default::default(),
            itb_wconf: Default::default(),
            itt_wuseful: Default::default(),
            pred_tgt: Default::default(),
            tgt_sel: Default::default(),
            tgt_hit: Default::default(),
            miss: Default::default(),
            alt_present: Default::default(),
            alt_hit: Default::default(),
            alt_taken: Default::default(),
            ras_top_present: Default::default(),
            ras_top_hit: Default::default(),
            ras_top_taken: Default::default(),
            rtc_present: Default::default(),
            rtc_nameable: Default::default(),
            rtc_match: (0..p.rtc).map(|_| Default::default()).collect(),
            rtc_found: (0..=p.rtc).map(|_| Default::default()).collect(),
            rtc_pos_v: (0..=p.rtc).map(|_| Default::default()).collect(),
            rtc_any: Default::default(),
            rtc_pos: Default::default(),
            rtc_hit: Default::default(),
            off: Default::default(),
            off_same: Default::default(),
            off_shift: Default::default(),
            off_a: Default::default(),
            off_t: Default::default(),
            off_d: Default::default(),
            off_sign: Default::default(),
            off_z: Default::default(),
            off_zigzag: Default::default(),
            off_high: Default::default(),
            rec_aux: Default::default(),
            rtc_len_grown: Default::default(),
            rtc_from: Default::default(),
            rtc_touch: Default::default(),
            pop: Default::default(),
            push: Default::default(),
            push_val: Default::default(),
            top1: Default::default(),
            count1: Default::default(),
            top2: Default::default(),
            count2: Default::default(),
            gap_inc: Default::default(),
            gap_next: Default::default(),
            exc_offset: Default::default(),
            virt: Default::default(),
            since_inc: Default::default(),
            sync_now: Default::default(),
            reset_state: Default::default(),
            dir_ctx5: Default::default(),
            unused_dir_ctx: Default::default(),
            unused_itp_writes: Default::default(),
            unused_itp_write_enables: Default::default(),
            unused_itt_hash: Default::default(),
            unused_itb_valid: Default::default(),
            unused_itt_valid: Default::default(),
            unused_itb_index: Default::default(),
            unused_itt_index: Default::default(),
            unused_itt_write: Default::default(),
            unused_rtc_from: Default::default(),
            unused_push_val: Default::default(),
            unused_rtc_chain: Default::default(),
            fields0: Default::default(),
            fields1: Default::default(),
            f_start: Default::default(),
            f_start_same: Default::default(),
            f_exc: Default::default(),
            f_virt: Default::default(),
            f_tail: Default::default(),
            f_dir: Default::default(),
            f_dir_hit: Default::default(),
            f_tgt: Default::default(),
            f_tgt_hit: Default::default(),
            f_ras_top: Default::default(),
            f_ras_top_hit: Default::default(),
            f_rtc: Default::default(),
            f_rtc_hit: Default::default(),
            f_alt: Default::default(),
            f_alt_hit: Default::default(),
            f_off: Default::default(),
            f_off_same: Default::default(),
            f_addr_same: Default::default(),
            tail_bits: Default::default(),
            k_c0: Constant::new(0u64.into()),
            k_c1: Constant::new(1u64.into()),
            k_c3: Constant::new(3u64.into()),
            k_c4: Constant::new(4u64.into()),
            k_c5: Constant::new(5u64.into()),
            k_cond_al: Constant::new(0xEu64.into()),
            k_cond_nv: Constant::new(0xFu64.into()),
            k_bl_op: Constant::new(0b101u64.into()),
            k_thumb_bl: Constant::new(0b11111u64.into()),
            k_thumb_blx: Constant::new(0b11101u64.into()),
            k_thumb_blx_reg: Constant::new(0b0_1000_1111u64.into()),
            k_blx_reg_mask: c32(0x0FFF_FFF0),
            k_ldr_pc_sp_mask: c32(LDR_PC_SP_MASK as u64),
            k_ldr_pc_sp: c32(LDR_PC_SP as u64),
            k_blx_reg: c32(0x012F_FF30),
            k_mov_lr_pc: c32(ARM_MOV_LR_PC as u64),
            k_upper_shift: c8(32 - p.u as u64),
            k_low: c8(h.low as u64),
            k_mask_same: mask(h.address_bits(true)),
            k_mask_full: mask(h.address_bits(false)),
            k_one32: c32(1),
            k_two32: c32(2),
            k_four32: c32(4),
            k_eight32: c32(8),
            k_zero32: c32(0),
            k_ones32: c32(u32::MAX as u64),
            k_path_mask: c32(0xFF),
            k_tgt_upper_mask: c32(if p.tw >= 32 { 0 } else { !((1u64 << p.tw) - 1) & 0xFFFF_FFFF }),
            k_tgt_low_mask: mask(p.tw),
            k_tgt_flag: c32(if p.tw >= 32 { 0 } else { 1u64 << p.tw }),
            k_itb_mask: Constant::new((p.itp.max(1) as u64 - 1).into()),
            k_itt_mask: Constant::new((p.itt.max(1) as u64 - 1).into()),
            k_itt_shift: c8(h.itt_bits as u64),
            k_ttag_shift: c8(p.ttag as u64),
            k_ttag_mask: mask(p.ttag),
            k_has_itt: Constant::new(p.itt > 0),
            k_two8: c8(2),
            k_three8: c8(3),
            k_five8: c8(5),
            k_has_ras: Constant::new(p.ras > 0),
            k_has_rtc: Constant::new(p.rtc > 0),
            k_ras_last: c8((p.ras.max(1) - 1) as u64),
            k_ras_depth: c8(p.ras as u64),
            k_rtc_size: c8(p.rtc as u64),
            k_one8: c8(1),
            k_zero8: c8(0),
            k_one16: Constant::new(1u64.into()),
            k_zero16: Constant::new(0u64.into()),
            k_max_gap: Constant::new((MAX_GAP as u64).into()),
            k_sync_on: Constant::new(h.model.sync_period != 0),
            // Off: a period the 32-bit count only meets at its top (and k_sync_on masks it).
            k_sync_period: c32(if h.model.sync_period == 0 { u32::MAX as u64 } else { h.model.sync_period }),
            k_sel_return: Constant::new((TGT_RETURN as u64).into()),
            k_sel_return_empty: Constant::new((TGT_RETURN_EMPTY as u64).into()),
            k_sel_indirect: Constant::new((TGT_INDIRECT as u64).into()),
            k_sel_indirect_tagged: Constant::new((TGT_INDIRECT_TAGGED as u64).into()),
            k_sel_indirect_conf: Constant::new((TGT_INDIRECT_CONF as u64).into()),
            k_sel_indirect_tagged_useful: Constant::new((TGT_INDIRECT_TAGGED_USEFUL as u64).into()),
            k_table_mask: c32(TABLE_JUMP_MASK as u64),
            k_table: c32(TABLE_JUMP as u64),
            k_page_mask: c32(0xFFFF_F000),
            k_high_page: c32(HIGH_PAGE as u64),
            k_low12: c32(0xFFF),
            k_zmax6: c32((1u64 << OFFSET_WIDTHS[6]) - 1),
            k_sh32: c8(32),
            k_sh48: c8(48),
            k_sh53: c8(53),
            k_sh56: c8(56),
            k_tail_sync: c64((ESC_SYNC as u64) << 48),
            k_b_start: bit(60),
            k_b_start_same: bit(61),
            k_b_exc: bit(62),
            k_b_virt: bit(63),
            k_b_tail: bit(50),
            k_b_dir: bit(51),
            k_b_dir_hit: bit(52),
            k_b_tgt: bit(53),
            k_b_tgt_hit: bit(54),
            k_b_ras_top: bit(55),
            k_b_ras_top_hit: bit(56),
            k_b_rtc: bit(57),
            k_b_rtc_hit: bit(58),
            k_b_off: bit(59),
            k_b_addr_same: bit(60),
            k_b_alt: bit(61),
            k_b_alt_hit: bit(62),
            k_b_off_same: bit(63),
            k_zero64: c64(0),
            _ras: (p.ras > 0) as usize,
            _rtc: p.rtc as usize,
            _rtc_front: p.rtc.min(1) as usize,
            _itb_tables: itb_tables,
            _itt_tables: itt_tables,
        }
    }
}

impl Logic for PftFrontEnd {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, started, gap_q, since, upper, ras_top, ras_count, rtc_len, path);
        self.enable.next = self.retire_valid.val() & !self.hold.val();

        // Points and links (trace-format.md 11.2; model InsnFlow::of).
        self.thumb.next = self.pc.val().get_bit(0);
        self.cls_none.next = self.branch_class.val() == self.k_c0.val();
        self.cls_icond.next = self.branch_class.val() == self.k_c3.val();
        self.cls_ret.next = self.branch_class.val() == self.k_c5.val();
        self.hw_top5.next = self.insn.val().get_bits::<5>(11);
        self.hw_top9.next = self.insn.val().get_bits::<9>(7);
        self.cond4.next = self.insn.val().get_bits::<4>(28);
        self.op3.next = self.insn.val().get_bits::<3>(25);
        self.arm_cond.next = !self.thumb.val() & (self.cond4.val() < self.k_cond_al.val());
        self.thumb_link.next = (self.hw_top5.val() == self.k_thumb_bl.val())
            | (self.hw_top5.val() == self.k_thumb_blx.val())
            | (self.hw_top9.val() == self.k_thumb_blx_reg.val());
        self.arm_link.next = ((self.op3.val() == self.k_bl_op.val()) & self.insn.val().get_bit(24))
            | ((self.insn.val() & self.k_blx_reg_mask.val()) == self.k_blx_reg.val());
        if self.cond4.val() == self.k_cond_nv.val() {
            self.arm_link.next = self.op3.val() == self.k_bl_op.val();
        }
        self.links.next = self.arm_link.val();
        if self.thumb.val() {
            self.links.next = self.thumb_link.val();
        }
        self.link.next = !self.cls_none.val() & self.links.val();
        self.mov_lr_pc.next = !self.thumb.val() & (self.insn.val() == self.k_mov_lr_pc.val());
        self.table_jump.next = (!self.thumb.val() & (self.cond4.val() != self.k_cond_nv.val()))
            & ((self.insn.val() & self.k_table_mask.val()) == self.k_table.val());
        self.direction.next = (self.branch_class.val() == self.k_c1.val())
            | self.cls_icond.val()
            | (self.cls_ret.val() & self.arm_cond.val());
        self.target.next = self.cls_icond.val() | (self.branch_class.val() == self.k_c4.val()) | self.cls_ret.val();
        self.is_return.next = self.cls_ret.val()
            | ((self.target.val() & !self.thumb.val()) & ((self.insn.val() & self.k_ldr_pc_sp_mask.val()) == self.k_ldr_pc_sp.val()));
        self.slot.next = !self.exception.val() & (self.direction.val() | self.target.val());
        self.tgt_pt.next = (self.slot.val() & self.target.val()) & self.taken.val();
        self.hpc.next = self.pc.val() >> self.k_two32.val();
        if self.thumb.val() {
            self.hpc.next = self.pc.val() >> self.k_one32.val();
        }

        // Start: the address of the first instruction after a reset.
        self.awaiting.next = !self.started.q.val();
        self.upper_pc.next = self.pc.val() >> self.k_upper_shift.val();
        self.upper_next.next = self.next_pc.val() >> self.k_upper_shift.val();
        self.start_same.next = self.upper_pc.val() == self.upper.q.val();
        self.start_field.next = (self.pc.val() >> self.k_low.val()) & self.k_mask_full.val();
        if self.start_same.val() {
            self.start_field.next = (self.pc.val() >> self.k_low.val()) & self.k_mask_same.val();
        }
        self.upper1.next = self.upper.q.val();
        if self.awaiting.val() {
            self.upper1.next = self.upper_pc.val();
        }

        // Direction point: the predictor block answers for `dir_addr`.
        self.dir_addr.next = self.pc.val();
        self.dir_update.next = (self.enable.val() & self.slot.val()) & self.direction.val();
        self.dir_push.next = ((self.enable.val() & !self.exception.val()) & !self.slot.val()) & (self.link.val() & self.taken.val());
        self.dir_bit.next = self.taken.val();
        if self.dir_push.val() {
            self.dir_bit.next = self.next_pc.val().get_bit(2);
        }
        self.dir_taken.next = self.dir_bit.val();

        // Target point: RAS for returns, ITP for the others (11.4).
        self.ras_empty.next = !self.k_has_ras.val() | (self.ras_count.q.val() == self.k_zero8.val());
        self.ras_top_val.next = self.k_zero32.val();
        for t in 0..self._ras {
            self.ras[t].clock.next = self.clock.val();
            self.ras[t].raddr.next = bit_cast::<ADDR_BITS, 8>(self.ras_top.q.val());
            self.ras_top_val.next = self.ras[t].rdata.val();
        }
        // ITP base table: indexed by hpc alone; an entry (0 without one) holds the low `tw`
        // bits of a target, the branch's address gives the rest.
        // (11.4: an entry with the top-region flag names the top region instead.)
        self.tgt_upper.next = self.pc.val() & self.k_tgt_upper_mask.val();
        self.itb_index.next = bit_cast::<ADDR_BITS, 32>(self.hpc.val()) & self.k_itb_mask.val();
        self.itb_entry.next = self.k_zero32.val();
        self.base_conf.next = false;
        self.unused_itb_valid.next = self.k_zero32.val();
        for t in 0..self._itb_tables {
            self.unused_itb_valid.next = self.itb_valid[t].rdata.val();
            self.itb[t].clock.next = self.clock.val();
            self.itb_conf[t].clock.next = self.clock.val();
            self.itb_valid[t].clock.next = self.clock.val();
            self.itb[t].raddr.next = self.itb_index.val();
            self.itb_conf[t].raddr.next = self.itb_index.val();
            self.itb_valid[t].raddr.next = self.itb_index.val();
            if self.itb_valid[t].rdata.val().get_bit(0) {
                self.itb_entry.next = self.itb[t].rdata.val();
                self.base_conf.next = self.itb_conf[t].rdata.val() != self.k_zero32.val();
            }
        }
        if (self.itb_entry.val() & self.k_tgt_flag.val()) != self.k_zero32.val() {
            self.base_val.next = self.k_tgt_upper_mask.val() | (self.itb_entry.val() & self.k_tgt_low_mask.val());
        } else {
            self.base_val.next = self.tgt_upper.val() | (self.itb_entry.val() & self.k_tgt_low_mask.val());
        }
        // The entry that holds the actual target (ITP and RTC writes, RTC lookups).
        self.tgt_top.next = (self.next_pc.val() & self.k_tgt_upper_mask.val()) == self.k_tgt_upper_mask.val();
        if self.tgt_top.val() {
            self.tgt_entry.next = (self.next_pc.val() & self.k_tgt_low_mask.val()) | self.k_tgt_flag.val();
        } else {
            self.tgt_entry.next = self.next_pc.val() & self.k_tgt_low_mask.val();
        }
        // ITP tagged table: index (h ^ h >> e ^ P ^ P >> e), tag (h ^ h >> w ^ P << 3 ^ P >> 5);
        // an entry matches when its tag (0 after a reset) equals the computed one.
        self.itt_hash.next = (self.hpc.val() ^ (self.hpc.val() >> self.k_itt_shift.val()))
            ^ (self.path.q.val() ^ (self.path.q.val() >> self.k_itt_shift.val()));
        self.itt_index.next = bit_cast::<ADDR_BITS, 32>(self.itt_hash.val()) & self.k_itt_mask.val();
        self.itt_tag_calc.next = ((self.hpc.val() ^ (self.hpc.val() >> self.k_ttag_shift.val()))
            ^ ((self.path.q.val() << self.k_three8.val()) ^ (self.path.q.val() >> self.k_five8.val())))
            & self.k_ttag_mask.val();
        self.itt_tag_val.next = self.k_zero32.val();
        self.itt_entry.next = self.k_zero32.val();
        self.itt_useful_val.next = false;
        self.unused_itt_valid.next = self.k_zero32.val();
        for t in 0..self._itt_tables {
            self.unused_itt_valid.next = self.itt_valid[t].rdata.val();
            self.itt_tag[t].clock.next = self.clock.val();
            self.itt_target[t].clock.next = self.clock.val();
            self.itt_useful[t].clock.next = self.clock.val();
            self.itt_valid[t].clock.next = self.clock.val();
            self.itt_tag[t].raddr.next = self.itt_index.val();
            self.itt_target[t].raddr.next = self.itt_index.val();
            self.itt_useful[t].raddr.next = self.itt_index.val();
            self.itt_valid[t].raddr.next = self.itt_index.val();
            if self.itt_valid[t].rdata.val().get_bit(0) {
                self.itt_tag_val.next = self.itt_tag[t].rdata.val();
                self.itt_entry.next = self.itt_target[t].rdata.val();
                self.itt_useful_val.next = self.itt_useful[t].rdata.val() != self.k_zero32.val();
            }
        }
        if (self.itt_entry.val() & self.k_tgt_flag.val()) != self.k_zero32.val() {
            self.itt_target_val.next = self.k_tgt_upper_mask.val() | (self.itt_entry.val() & self.k_tgt_low_mask.val());
        } else {
            self.itt_target_val.next = self.tgt_upper.val() | (self.itt_entry.val() & self.k_tgt_low_mask.val());
        }
        self.tagged_hit.next = self.k_has_itt.val() & (self.itt_tag_val.val() == self.itt_tag_calc.val());
        // The context says whether the providing entry's confidence or useful bit is set.
        self.pred_tgt.next = self.base_val.val();
        self.tgt_sel.next = self.k_sel_indirect.val();
        if self.base_conf.val() {
            self.tgt_sel.next = self.k_sel_indirect_conf.val();
        }
        if self.tagged_hit.val() {
            self.pred_tgt.next = self.itt_target_val.val();
            self.tgt_sel.next = self.k_sel_indirect_tagged.val();
            if self.itt_useful_val.val() {
                self.tgt_sel.next = self.k_sel_indirect_tagged_useful.val();
            }
        }
        if self.is_return.val() {
            self.pred_tgt.next = self.ras_top_val.val();
            self.tgt_sel.next = self.k_sel_return.val();
            if self.ras_empty.val() {
                self.pred_tgt.next = self.k_zero32.val();
                self.tgt_sel.next = self.k_sel_return_empty.val();
            }
        }
        self.tgt_hit.next = self.pred_tgt.val() == self.next_pc.val();
        self.miss.next = self.tgt_pt.val() & !self.tgt_hit.val();

        // A missed target (11.5): the alternate (when the tagged table provided and the base
        // entry differs), the RAS top (non-returns), recent targets, else an offset.
        self.alt_present.next = (self.miss.val() & !self.is_return.val())
            & (self.tagged_hit.val() & (self.base_val.val() != self.itt_target_val.val()));
        self.alt_hit.next = self.base_val.val() == self.next_pc.val();
        self.alt_taken.next = self.alt_present.val() & self.alt_hit.val();
        self.ras_top_present.next =
            ((self.miss.val() & !self.is_return.val()) & !self.alt_taken.val()) & !self.ras_empty.val();
        self.ras_top_hit.next = self.ras_top_val.val() == self.next_pc.val();
        self.ras_top_taken.next = self.ras_top_present.val() & self.ras_top_hit.val();
        self.rtc_present.next =
            ((self.miss.val() & !self.alt_taken.val()) & !self.ras_top_taken.val()) & self.k_has_rtc.val();
        // An entry names a target for this branch as an ITP entry does (11.4): compare the
        // entry the target would have, where the RTC can name it at all.
        self.rtc_nameable.next =
            self.tgt_top.val() | ((self.next_pc.val() & self.k_tgt_upper_mask.val()) == self.tgt_upper.val());
        self.rtc_found[0].next = false;
        self.rtc_pos_v[0].next = self.k_zero8.val();
        self.rtc_any.next = false;
        self.rtc_pos.next = self.k_zero8.val();
        for j in 0..self._rtc {
            self.rtc_match[j].next = ((self.rtc_len.q.val().index() > j) & (self.rtc[j].q.val() == self.tgt_entry.val()))
                & self.rtc_nameable.val();
            self.rtc_found[j + 1].next = self.rtc_found[j].val() | self.rtc_match[j].val();
            self.rtc_pos_v[j + 1].next = self.rtc_pos_v[j].val();
            if self.rtc_match[j].val() & !self.rtc_found[j].val() {
                self.rtc_pos_v[j + 1].next = j.to_bits();
            }
            // The last iteration's values are the chain's results.
            self.rtc_any.next = self.rtc_found[j + 1].val();
            self.rtc_pos.next = self.rtc_pos_v[j + 1].val();
        }
        self.rtc_hit.next = self.rtc_present.val() & self.rtc_any.val();
        self.off.next = ((self.miss.val() & !self.alt_taken.val()) & !self.ras_top_taken.val()) & !self.rtc_hit.val();

        // The offset of the target T from the branch A: in units of s (1 for a Thumb target,
        // 2 for an ARM one), d = (T >> s) - (A >> s), zigzag z = (d << 1) ^ (d >> 31); for a
        // jump table z = (T >> s) - ((A + 8) >> s), unsigned. Class 7 (z above 17 bits) with a
        // target in the high page sends the target's bits [11:s] instead (the record holds
        // [11:0]).
        self.off_same.next = self.next_pc.val().get_bit(0) == self.pc.val().get_bit(0);
        self.off_shift.next = self.k_two8.val();
        if self.next_pc.val().get_bit(0) {
            self.off_shift.next = self.k_one8.val();
        }
        self.off_a.next = self.pc.val() >> self.off_shift.val();
        if self.table_jump.val() {
            self.off_a.next = (self.pc.val() + self.k_eight32.val()) >> self.off_shift.val();
        }
        self.off_t.next = self.next_pc.val() >> self.off_shift.val();
        self.off_d.next = self.off_t.val() - self.off_a.val();
        self.off_sign.next = self.k_zero32.val();
        if self.off_d.val().get_bit(31) {
            self.off_sign.next = self.k_ones32.val();
        }
        self.off_zigzag.next = (self.off_d.val() << self.k_one8.val()) ^ self.off_sign.val();
        self.off_z.next = self.off_zigzag.val();
        if self.table_jump.val() {
            self.off_z.next = self.off_d.val();
        }
        self.off_high.next = (self.off_z.val() > self.k_zmax6.val())
            & ((self.next_pc.val() & self.k_page_mask.val()) == self.k_high_page.val());

        // An exception's vector is an address (UPPER_SAME, then the field); the record's
        // address field carries it, or the offset's z (an exception has no target point).
        self.addr_same.next = self.upper_next.val() == self.upper1.val();
        self.addr_field.next = (self.next_pc.val() >> self.k_low.val()) & self.k_mask_full.val();
        if self.addr_same.val() {
            self.addr_field.next = (self.next_pc.val() >> self.k_low.val()) & self.k_mask_same.val();
        }
        if self.off.val() {
            self.addr_field.next = self.off_z.val();
            if self.off_high.val() {
                self.addr_field.next = self.next_pc.val() & self.k_low12.val();
            }
        }

        // RTC: a hit moves to the front; a new address enters at the front.
        self.rtc_len_grown.next = self.rtc_len.q.val() + self.k_one8.val();
        if self.rtc_len.q.val() == self.k_rtc_size.val() {
            self.rtc_len_grown.next = self.rtc_len.q.val();
        }
        self.rtc_from.next = self.rtc_len_grown.val() - self.k_one8.val();
        if self.rtc_hit.val() {
            self.rtc_from.next = self.rtc_pos.val();
        }
        self.rtc_touch.next = (self.enable.val() & self.k_has_rtc.val()) & (self.rtc_hit.val() | self.off.val());
        for j in 0..self._rtc {
            self.rtc[j].clock.next = self.clock.val();
            self.rtc[j].d.next = self.rtc[j].q.val();
        }
        if self.rtc_touch.val() {
            for j in 1..self._rtc {
                if self.rtc_from.val().index() >= j {
                    self.rtc[j].d.next = self.rtc[j - 1].q.val();
                }
            }
            for j in 0..self._rtc_front {
                self.rtc[j].d.next = self.tgt_entry.val();
            }
            if self.off.val() {
                self.rtc_len.d.next = self.rtc_len_grown.val();
            }
        }

        // ITP, after a non-return target point (11.4, *update*). Tagged entry, when it matched
        // or the base entry was wrong: useful := (it provided the target); it keeps its tag
        // and target when it provided them or was useful, else takes the new ones. Base entry,
        // unless the tagged one provided the target: confidence := (its target was right); it
        // takes the new target when wrong and not confident. Each table writes its entry whole
        // (read values where they stay), so the valid flag covers all of it.
        self.itp_train.next = (self.enable.val() & self.tgt_pt.val()) & !self.is_return.val();
        self.tagged_right.next = self.tagged_hit.val() & (self.itt_target_val.val() == self.next_pc.val());
        self.base_wrong.next = self.base_val.val() != self.next_pc.val();
        self.itt_write.next = self.itp_train.val() & (self.tagged_hit.val() | self.base_wrong.val());
        self.itt_replace.next = !self.tagged_right.val() & !self.itt_useful_val.val();
        self.itt_wtag.next = self.itt_tag_val.val();
        self.itt_wentry.next = self.itt_entry.val();
        if self.itt_replace.val() {
            self.itt_wtag.next = self.itt_tag_calc.val();
            self.itt_wentry.next = self.tgt_entry.val();
        }
        self.itt_wuseful.next = self.k_zero32.val();
        if self.tagged_right.val() {
            self.itt_wuseful.next = self.k_one32.val();
        }
        self.itb_write.next = self.itp_train.val() & !self.tagged_right.val();
        self.itb_wentry.next = self.itb_entry.val();
        if self.base_wrong.val() & !self.base_conf.val() {
            self.itb_wentry.next = self.tgt_entry.val();
        }
        self.itb_wconf.next = self.k_zero32.val();
        if !self.base_wrong.val() {
            self.itb_wconf.next = self.k_one32.val();
        }
        for t in 0..self._itb_tables {
            self.itb[t].waddr.next = self.itb_index.val();
            self.itb[t].wdata.next = self.itb_wentry.val();
            self.itb[t].we.next = self.itb_write.val();
            self.itb_conf[t].waddr.next = self.itb_index.val();
            self.itb_conf[t].wdata.next = self.itb_wconf.val();
            self.itb_conf[t].we.next = self.itb_write.val();
            self.itb_valid[t].waddr.next = self.itb_index.val();
            self.itb_valid[t].wdata.next = self.k_one32.val();
            self.itb_valid[t].we.next = self.itb_write.val();
        }
        for t in 0..self._itt_tables {
            self.itt_tag[t].waddr.next = self.itt_index.val();
            self.itt_tag[t].wdata.next = self.itt_wtag.val();
            self.itt_tag[t].we.next = self.itt_write.val();
            self.itt_target[t].waddr.next = self.itt_index.val();
            self.itt_target[t].wdata.next = self.itt_wentry.val();
            self.itt_target[t].we.next = self.itt_write.val();
            self.itt_useful[t].waddr.next = self.itt_index.val();
            self.itt_useful[t].wdata.next = self.itt_wuseful.val();
            self.itt_useful[t].we.next = self.itt_write.val();
            self.itt_valid[t].waddr.next = self.itt_index.val();
            self.itt_valid[t].wdata.next = self.k_one32.val();
            self.itt_valid[t].we.next = self.itt_write.val();
        }
        if self.itp_train.val() {
            self.path.d.next = ((self.path.q.val() << self.k_two32.val()) ^ (self.next_pc.val() >> self.k_two32.val()))
                & self.k_path_mask.val();
        }

        // RAS: at most one pop (a return's prediction or a RAS-top target), then one push.
        self.pop.next = (self.tgt_pt.val() & self.is_return.val() & !self.ras_empty.val()) | self.ras_top_taken.val();
        self.push.next = (!self.exception.val() & self.k_has_ras.val())
            & (self.mov_lr_pc.val() | (self.link.val() & self.taken.val()));
        self.push_val.next = self.pc.val() + self.k_four32.val();
        if self.thumb.val() {
            self.push_val.next = self.pc.val() + self.k_two32.val();
        }
        if self.mov_lr_pc.val() {
            self.push_val.next = self.pc.val() + self.k_eight32.val();
        }
        self.top1.next = self.ras_top.q.val();
        self.count1.next = self.ras_count.q.val();
        if self.pop.val() {
            self.top1.next = self.ras_top.q.val() - self.k_one8.val();
            if self.ras_top.q.val() == self.k_zero8.val() {
                self.top1.next = self.k_ras_last.val();
            }
            self.count1.next = self.ras_count.q.val() - self.k_one8.val();
        }
        self.top2.next = self.top1.val();
        self.count2.next = self.count1.val();
        if self.push.val() {
            self.top2.next = self.top1.val() + self.k_one8.val();
            if self.top1.val() == self.k_ras_last.val() {
                self.top2.next = self.k_zero8.val();
            }
            self.count2.next = self.count1.val() + self.k_one8.val();
            if self.count1.val() == self.k_ras_depth.val() {
                self.count2.next = self.count1.val();
            }
        }
        for t in 0..self._ras {
            self.ras[t].we.next = self.enable.val() & self.push.val();
            self.ras[t].waddr.next = bit_cast::<ADDR_BITS, 8>(self.top2.val());
            self.ras[t].wdata.next = self.push_val.val();
        }

        // Gap, virtual slot, exception offset, periodic sync.
        self.gap.next = self.gap_q.q.val();
        self.exc_offset.next = self.gap_q.q.val() + self.k_one16.val();
        self.gap_inc.next = self.gap_q.q.val() + self.k_one16.val();
        self.virt.next = (!self.exception.val() & !self.slot.val()) & (self.gap_inc.val() == self.k_max_gap.val());
        self.gap_next.next = self.gap_inc.val();
        if self.exception.val() | self.slot.val() | self.virt.val() {
            self.gap_next.next = self.k_zero16.val();
        }
        self.since_inc.next = self.since.q.val() + self.k_one32.val();
        self.sync_now.next = self.k_sync_on.val() & (self.since_inc.val() >= self.k_sync_period.val());

        // The job record (JobRecord::pack).
        self.dir_ctx5.next = self.dir_ctx.val().get_bits::<5>(0);
        self.unused_dir_ctx.next = self.dir_ctx.val().get_bits::<3>(5);
        self.unused_itp_writes.next = (self.itb_wentry.val() ^ self.itb_wconf.val())
            ^ ((self.itt_wtag.val() ^ self.itt_wentry.val()) ^ self.itt_wuseful.val());
        self.unused_itp_write_enables.next = self.itb_write.val();
        // The record's RTC position, or for an offset the high-page flag (they share bits).
        self.rec_aux.next = self.k_zero8.val();
        if self.rtc_hit.val() {
            self.rec_aux.next = self.rtc_pos.val();
        }
        if self.off.val() & self.off_high.val() {
            self.rec_aux.next = self.k_one8.val();
        }
        self.unused_itt_hash.next = self.itt_hash.val().get_bits::<16>(16);
        // Without ITP tables, an RTC or a RAS these feed nothing.
        self.unused_itb_index.next = self.itb_index.val();
        self.unused_itt_index.next = self.itt_index.val();
        self.unused_itt_write.next = self.itt_write.val();
        self.unused_rtc_from.next = self.rtc_from.val();
        self.unused_push_val.next = self.push_val.val();
        self.unused_rtc_chain.next =
            (self.rtc_found[0].val() & (self.rtc_pos_v[0].val() == self.k_zero8.val())) & self.rtc_nameable.val();
        self.fields0.next = bit_cast::<64, 32>(self.start_field.val())
            | (bit_cast::<64, 16>(self.exc_offset.val()) << self.k_sh32.val())
            | (bit_cast::<64, 5>(self.dir_ctx5.val()) << self.k_sh48.val())
            | (bit_cast::<64, 3>(self.tgt_sel.val()) << self.k_sh53.val())
            | (bit_cast::<64, 8>(self.rec_aux.val()) << self.k_sh56.val());
        self.fields1.next = bit_cast::<64, 32>(self.addr_field.val());
        self.tail_bits.next = self.k_zero64.val();
        if self.sync_now.val() {
            self.tail_bits.next = (bit_cast::<64, 16>(self.gap_next.val()) << self.k_sh32.val()) | self.k_tail_sync.val();
        }
        self.f_start.next = self.k_zero64.val();
        if self.awaiting.val() {
            self.f_start.next = self.k_b_start.val();
        }
        self.f_start_same.next = self.k_zero64.val();
        if self.start_same.val() {
            self.f_start_same.next = self.k_b_start_same.val();
        }
        self.f_exc.next = self.k_zero64.val();
        if self.exception.val() {
            self.f_exc.next = self.k_b_exc.val();
        }
        self.f_virt.next = self.k_zero64.val();
        if self.virt.val() {
            self.f_virt.next = self.k_b_virt.val();
        }
        self.f_tail.next = self.k_zero64.val();
        if self.sync_now.val() {
            self.f_tail.next = self.k_b_tail.val();
        }
        self.f_dir.next = self.k_zero64.val();
        if self.slot.val() & self.direction.val() {
            self.f_dir.next = self.k_b_dir.val();
        }
        self.f_dir_hit.next = self.k_zero64.val();
        if self.dir_pred.val() == self.taken.val() {
            self.f_dir_hit.next = self.k_b_dir_hit.val();
        }
        self.f_tgt.next = self.k_zero64.val();
        if self.tgt_pt.val() {
            self.f_tgt.next = self.k_b_tgt.val();
        }
        self.f_tgt_hit.next = self.k_zero64.val();
        if self.tgt_hit.val() {
            self.f_tgt_hit.next = self.k_b_tgt_hit.val();
        }
        self.f_ras_top.next = self.k_zero64.val();
        if self.ras_top_present.val() {
            self.f_ras_top.next = self.k_b_ras_top.val();
        }
        self.f_ras_top_hit.next = self.k_zero64.val();
        if self.ras_top_hit.val() {
            self.f_ras_top_hit.next = self.k_b_ras_top_hit.val();
        }
        self.f_rtc.next = self.k_zero64.val();
        if self.rtc_present.val() {
            self.f_rtc.next = self.k_b_rtc.val();
        }
        self.f_rtc_hit.next = self.k_zero64.val();
        if self.rtc_hit.val() {
            self.f_rtc_hit.next = self.k_b_rtc_hit.val();
        }
        self.f_alt.next = self.k_zero64.val();
        if self.alt_present.val() {
            self.f_alt.next = self.k_b_alt.val();
        }
        self.f_alt_hit.next = self.k_zero64.val();
        if self.alt_hit.val() {
            self.f_alt_hit.next = self.k_b_alt_hit.val();
        }
        self.f_off.next = self.k_zero64.val();
        if self.off.val() {
            self.f_off.next = self.k_b_off.val();
        }
        self.f_off_same.next = self.k_zero64.val();
        if self.off_same.val() {
            self.f_off_same.next = self.k_b_off_same.val();
        }
        self.f_addr_same.next = self.k_zero64.val();
        if self.addr_same.val() {
            self.f_addr_same.next = self.k_b_addr_same.val();
        }
        self.job_w0.next = self.fields0.val() | self.f_start.val() | self.f_start_same.val() | self.f_exc.val() | self.f_virt.val();
        self.job_w1.next = self.fields1.val()
            | self.tail_bits.val()
            | self.f_tail.val()
            | self.f_dir.val()
            | self.f_dir_hit.val()
            | self.f_tgt.val()
            | self.f_tgt_hit.val()
            | self.f_ras_top.val()
            | self.f_ras_top_hit.val()
            | self.f_rtc.val()
            | self.f_rtc_hit.val()
            | self.f_alt.val()
            | self.f_alt_hit.val()
            | self.f_off.val()
            | self.f_off_same.val()
            | self.f_addr_same.val();
        self.job_valid.next = self.retire_valid.val()
            & (self.awaiting.val() | self.exception.val() | self.slot.val() | self.virt.val() | self.sync_now.val());

        // State at the clock edge.
        if self.enable.val() {
            self.started.d.next = true;
            self.upper.d.next = self.upper1.val();
            if self.exception.val() {
                self.upper.d.next = self.upper_next.val();
            }
            self.gap_q.d.next = self.gap_next.val();
            self.since.d.next = self.since_inc.val();
            self.ras_top.d.next = self.top2.val();
            self.ras_count.d.next = self.count2.val();
        }
        if self.restart.val() {
            self.started.d.next = false;
            self.gap_q.d.next = self.k_zero16.val();
        }
        self.reset_state.next = self.reset.val() | (self.enable.val() & self.sync_now.val());
        self.dir_clear.next = self.reset_state.val();
        // The target tables' valid bits clear with the rest of the state (one write each).
        for t in 0..self._itb_tables {
            self.itb_valid[t].clear.next = self.reset_state.val();
        }
        for t in 0..self._itt_tables {
            self.itt_valid[t].clear.next = self.reset_state.val();
        }
        if self.reset_state.val() {
            self.started.d.next = false;
            self.upper.d.next = self.k_zero32.val();
            self.gap_q.d.next = self.k_zero16.val();
            self.since.d.next = self.k_zero32.val();
            self.ras_top.d.next = self.k_zero8.val();
            self.ras_count.d.next = self.k_zero8.val();
            self.rtc_len.d.next = self.k_zero8.val();
            self.path.d.next = self.k_zero32.val();
        }
    }
}

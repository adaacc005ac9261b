//! `pft`, the predictor-filtered trace (docs/trace-format.md section 11): the trace module
//! mirrors a direction predictor, a return address stack and an indirect target predictor,
//! and a binary range coder sends whether each prediction was right, with probabilities
//! that depend on the predictor's confidence. A decoder holding the program image and the
//! same predictors rebuilds every instruction address.
//!
//! [`PftState`] holds everything the encoder and the decoder share, with the transitions
//! both apply; [`PftEncoder`] turns retire events into bytes.

pub mod coder;
pub mod encoder;
pub mod predict;

pub use encoder::{CoderJob, CoderOp, CoderPipeline, Info, PftCoder, PftEncoder, PftFrontEnd};

use std::fmt;

use crate::event::BranchClass;
/// The escape types and their 2-bit codes are those of section 6.3.
pub use crate::format::{EscapeType, ESCAPE_TYPE_BITS};
use predict::{DirectionPredictor, IndirectTargetPredictor, RecentTargets, ReturnAddressStack};

/// Instructions without a prediction point after which a slot is placed anyway, so a
/// decoder never walks further without reading the escape flag (section 11.2).
pub const MAX_GAP: u32 = 65_535;
/// Width of escape offsets.
pub const GAP_BITS: u32 = 16;
/// Width of the length field of OVERFLOW's lost-instruction count (`bitlen(lost) - 1`,
/// section 11.5); the count saturates at 32 bits.
pub const LOST_LEN_BITS: u32 = 5;

/// OVERFLOW's count as sent (section 11.5): `(L - 1, the L - 1 bits below the leading one)`
/// with `L = bitlen(lost)`; `lost` saturates at 2^32 - 1 and is at least 1.
#[inline]
pub fn lost_code(lost: u64) -> (u32, u32) {
    let n = lost.clamp(1, u32::MAX as u64) as u32;
    let below = 31 - n.leading_zeros();
    (below, n & ((1u32 << below) - 1))
}
/// ARM `MOV lr, pc` (cond AL): the call idiom before an indirect branch in ARMv4T code.
pub const ARM_MOV_LR_PC: u32 = 0xE1A0_E00F;

/// ARM `LDR pc, [sp], #imm` (post-indexed, added, word; any condition and immediate):
/// `insn & LDR_PC_SP_MASK == LDR_PC_SP` (section 11.2, *Returns*).
pub const LDR_PC_SP_MASK: u32 = 0x0FFF_F000;
pub const LDR_PC_SP: u32 = 0x049D_F000;

/// The configuration keys of `pft` (section 11.1), all with defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PftParams {
    /// Entries of the bimodal base table (power of two, 2..=65536).
    pub bim: u32,
    /// Entries of each tagged table (power of two, 2..=4096).
    pub tsize: u32,
    /// Tag width of the tagged tables, 4..=15.
    pub tag: u32,
    /// History lengths of the tagged tables, strictly increasing, 1..=64; 0 ends the list.
    pub hlen: [u8; 8],
    /// Return address stack depth, 0..=64.
    pub ras: u32,
    /// Entries of the indirect target predictor's base table (0 or a power of two up to 4096).
    pub itp: u32,
    /// Entries of its tagged table (0 or a power of two up to 4096).
    pub itt: u32,
    /// Tag width of the tagged target table, 4..=15.
    pub ttag: u32,
    /// Low target bits an indirect-target-predictor entry holds, 2..=32 (the rest come
    /// from the branch's address).
    pub tw: u32,
    /// Recent-target cache entries (0, 1, 2, 4, 8 or 16).
    pub rtc: u32,
    /// Upper address bits predicted by the address register, 1..=(31 - low).
    pub u: u32,
    /// Probability adaptation shift, 1..=8.
    pub rate: u32,
}

pub const DEFAULT_HLEN: [u8; 8] = [3, 5, 9, 16, 30, 64, 0, 0];

impl Default for PftParams {
    fn default() -> Self {
        PftParams { bim: 256, tsize: 32, tag: 7, hlen: DEFAULT_HLEN, ras: 9, itp: 16, itt: 16, ttag: 4, tw: 21, rtc: 8, u: 12, rate: 6 }
    }
}

impl PftParams {
    /// The tagged tables' history lengths.
    pub fn history_lengths(&self) -> Vec<u32> {
        self.hlen.iter().take_while(|&&h| h != 0).map(|&h| h as u32).collect()
    }

    pub fn tables(&self) -> usize {
        self.hlen.iter().take_while(|&&h| h != 0).count()
    }

    /// `hlen` as written in a configuration: lengths joined by `-`, or `none`.
    pub fn hlen_text(&self) -> String {
        let h = self.history_lengths();
        if h.is_empty() {
            "none".into()
        } else {
            h.iter().map(|v| v.to_string()).collect::<Vec<_>>().join("-")
        }
    }

    pub fn parse_hlen(text: &str) -> Result<[u8; 8], String> {
        let mut out = [0u8; 8];
        if text == "none" {
            return Ok(out);
        }
        let parts: Vec<&str> = text.split('-').collect();
        if parts.len() > 8 {
            return Err(format!("hlen={text}: at most 8 tagged tables"));
        }
        let mut prev = 0;
        for (i, p) in parts.iter().enumerate() {
            let v: u32 = p.parse().map_err(|_| format!("hlen={text}: '{p}' is not a number"))?;
            if !(1..=64).contains(&v) || v <= prev {
                return Err(format!("hlen={text}: lengths must increase strictly within 1..=64"));
            }
            prev = v;
            out[i] = v as u8;
        }
        Ok(out)
    }

    /// Check the ranges of section 11.1; `low` is 0 (isa=iw) or 2 (isa=arm).
    pub fn validate(&self, low: u32) -> Result<(), String> {
        let pow2 = |v: u32| v.is_power_of_two();
        if !pow2(self.bim) || !(2..=65536).contains(&self.bim) {
            return Err(format!("bim={} must be a power of two in 2..=65536", self.bim));
        }
        if !pow2(self.tsize) || !(2..=4096).contains(&self.tsize) {
            return Err(format!("tsize={} must be a power of two in 2..=4096", self.tsize));
        }
        if !(4..=15).contains(&self.tag) {
            return Err(format!("tag={} out of range 4..=15", self.tag));
        }
        let mut prev = 0;
        for h in self.history_lengths() {
            if h <= prev || h > 64 {
                return Err(format!("hlen={}: lengths must increase strictly within 1..=64", self.hlen_text()));
            }
            prev = h;
        }
        if self.ras > 64 {
            return Err(format!("ras={} out of range 0..=64", self.ras));
        }
        if self.itp != 0 && (!pow2(self.itp) || self.itp > 4096) {
            return Err(format!("itp={} must be 0 or a power of two up to 4096", self.itp));
        }
        if self.itt != 0 && (!pow2(self.itt) || self.itt > 4096) {
            return Err(format!("itt={} must be 0 or a power of two up to 4096", self.itt));
        }
        if !(4..=15).contains(&self.ttag) {
            return Err(format!("ttag={} out of range 4..=15", self.ttag));
        }
        if !(2..=32).contains(&self.tw) {
            return Err(format!("tw={} out of range 2..=32", self.tw));
        }
        if !matches!(self.rtc, 0 | 1 | 2 | 4 | 8 | 16) {
            return Err(format!("rtc={} must be 0, 1, 2, 4, 8 or 16", self.rtc));
        }
        let umax = 31 - low;
        if !(1..=umax).contains(&self.u) {
            return Err(format!("u={} out of range 1..={umax}", self.u));
        }
        if !(1..=8).contains(&self.rate) {
            return Err(format!("rate={} out of range 1..=8", self.rate));
        }
        Ok(())
    }

    /// Number of adaptive contexts (section 11.6): the direction contexts, the fixed target
    /// contexts and one RTC_INDEX context per bit of a recent-target index.
    pub fn contexts(&self) -> usize {
        DirectionPredictor::contexts(self.tables()) + TargetContexts::COUNT + self.rtc_index_bits() as usize
    }

    /// Bits of a recent-target index (log2 of `rtc`; 0 without the cache).
    pub fn rtc_index_bits(&self) -> u32 {
        if self.rtc == 0 {
            0
        } else {
            self.rtc.trailing_zeros()
        }
    }

    /// Bits of a target in an ITP entry: `tw` low bits and the top-region flag, or 32.
    pub fn target_entry_bits(&self) -> u64 {
        if self.tw >= 32 {
            32
        } else {
            self.tw as u64 + 1
        }
    }

    /// Storage bits of the trace module's pft state (section 11.8), by component.
    pub fn storage(&self, sync: bool) -> PftStorage {
        let bitlen = |v: u32| 32 - v.leading_zeros();
        let t = self.tables() as u64;
        let hmax = self.history_lengths().last().copied().unwrap_or(0) as u64;
        PftStorage {
            // The allocation register steps only with two or more tagged tables; the ageing
            // counter and the sweep pointer (table, entry) exist with one or more.
            direction: 2 * self.bim as u64
                + t * self.tsize as u64 * (3 + self.tag as u64 + 1)
                + hmax
                + if t >= 2 { predict::ALLOC_LFSR_BITS as u64 } else { 0 }
                + if t >= 1 {
                    predict::AGE_BITS as u64 + self.tsize.trailing_zeros() as u64 + bitlen(t as u32 - 1) as u64
                } else {
                    0
                },
            ras: self.ras as u64 * 32 + 2 * bitlen(self.ras) as u64,
            itp: self.itp as u64 * (self.target_entry_bits() + 1)
                + self.itt as u64 * (self.ttag as u64 + self.target_entry_bits() + 1)
                + if self.itp + self.itt > 0 { 8 } else { 0 },
            rtc: self.rtc as u64 * self.target_entry_bits() + bitlen(self.rtc) as u64,
            coder: self.contexts() as u64 * coder::PROB_BITS as u64 + self.u as u64 + CODER_REGISTER_BITS,
            control: GAP_BITS as u64 + 1 + if sync { 32 } else { 0 },
        }
    }
}

/// Bits of a job-buffer control entry (docs/trace-timing.md section 7, version 1.5: flags,
/// tail type, direction context, target selector, RTC position and one 16-bit offset; the
/// RTL's `JobRecord::control`).
pub const JOB_CONTROL_BITS: u64 = 48;

/// Bits of a job-buffer address word (a start address field, a vector's address field, a
/// missed target's offset code or an OVERFLOW count).
pub const JOB_WORD_BITS: u64 = 32;

/// Address words of a job buffer of `sdb` entries: enough for any one job (2) and one per
/// entry.
pub fn job_buffer_words(sdb: u32) -> u32 {
    sdb.max(2)
}

/// Storage bits of a job buffer of `sdb` entries (`storage_bits` counts it in the SDB's
/// place).
pub fn job_buffer_bits(sdb: u32) -> u64 {
    if sdb == 0 {
        return 0;
    }
    sdb as u64 * JOB_CONTROL_BITS + job_buffer_words(sdb) as u64 * JOB_WORD_BITS
}

/// low (33) + range (32) + cache (8) + pending count (3: 1..=4) + zero-run count (4) +
/// first-byte flag (1).
pub const CODER_REGISTER_BITS: u64 = 33 + 32 + 8 + 3 + 4 + 1;

/// Storage of the pft state by component (section 11.8).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct PftStorage {
    /// Base table, tagged tables (3-bit counter, tag, useful bit) and the global history.
    pub direction: u64,
    /// Entries and top/count pointers.
    pub ras: u64,
    /// Base table (target, confidence bit), tagged table (tag, target, useful bit) and the
    /// 8-bit path history.
    pub itp: u64,
    /// Targets (held as ITP entries are: `tw` bits and the top-region flag) and the fill
    /// count.
    pub rtc: u64,
    /// Context probabilities, the address register and the range coder's registers.
    pub coder: u64,
    /// Gap counter, start flag and the sync counter.
    pub control: u64,
}

impl PftStorage {
    pub fn total(&self) -> u64 {
        self.direction + self.ras + self.itp + self.rtc + self.coder + self.control
    }
}

impl fmt::Display for PftParams {
    /// Keys that differ from the defaults, in the spec's order, each preceded by a comma.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = PftParams::default();
        if self.bim != d.bim {
            write!(f, ",bim={}", self.bim)?;
        }
        if self.tsize != d.tsize {
            write!(f, ",tsize={}", self.tsize)?;
        }
        if self.tag != d.tag {
            write!(f, ",tag={}", self.tag)?;
        }
        if self.hlen != d.hlen {
            write!(f, ",hlen={}", self.hlen_text())?;
        }
        if self.ras != d.ras {
            write!(f, ",ras={}", self.ras)?;
        }
        if self.itp != d.itp {
            write!(f, ",itp={}", self.itp)?;
        }
        if self.itt != d.itt {
            write!(f, ",itt={}", self.itt)?;
        }
        if self.ttag != d.ttag {
            write!(f, ",ttag={}", self.ttag)?;
        }
        if self.tw != d.tw {
            write!(f, ",tw={}", self.tw)?;
        }
        if self.rtc != d.rtc {
            write!(f, ",rtc={}", self.rtc)?;
        }
        if self.u != d.u {
            write!(f, ",u={}", self.u)?;
        }
        if self.rate != d.rate {
            write!(f, ",rate={}", self.rate)?;
        }
        Ok(())
    }
}

/// What an instruction means to pft, from its class and encoding alone (section 11.2), so
/// the encoder (from the retire event) and the decoder (from the image) agree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct InsnFlow {
    /// Direction point: the outcome (taken or not) is predicted.
    pub direction: bool,
    /// Target point when taken: the target is predicted.
    pub target: bool,
    /// The target comes from the return address stack.
    pub ret: bool,
    /// Taken, it writes the return address to lr: push it.
    pub link: bool,
    /// ARM `MOV lr, pc`: push pc + 8.
    pub mov_lr_pc: bool,
    /// ARM `ADD pc, pc, Rm{, shift #imm}` (a jump table): a missed target's offset is
    /// coded unsigned from pc + 8 (section 11.5, *offset*).
    pub table: bool,
}

impl InsnFlow {
    /// A slot instruction: it has at least one prediction point.
    #[inline]
    pub fn is_slot(&self) -> bool {
        self.direction || self.target
    }
}

/// ARM-state instruction with a condition other than AL (and not the unconditional space).
#[inline]
pub fn arm_conditional(insn: u32, thumb: bool) -> bool {
    !thumb && (insn >> 28) < 0xE
}

/// Branch-with-link encodings: ARM BL, BLX (immediate), BLX (register); Thumb BL/BLX
/// suffix and BLX (register).
#[inline]
pub fn links(insn: u32, thumb: bool) -> bool {
    if thumb {
        let hw = insn & 0xFFFF;
        matches!(hw >> 11, 0b11111 | 0b11101) || hw >> 7 == 0b0_1000_1111
    } else if insn >> 28 == 0xF {
        (insn >> 25) & 7 == 0b101
    } else {
        ((insn >> 25) & 7 == 0b101 && insn & (1 << 24) != 0) || insn & 0x0FFF_FFF0 == 0x012F_FF30
    }
}

impl InsnFlow {
    #[inline]
    pub fn of(class: BranchClass, insn: u32, thumb: bool) -> InsnFlow {
        let cond = arm_conditional(insn, thumb);
        let (direction, target, ret) = match class {
            BranchClass::None | BranchClass::DirectUncond => (false, false, false),
            BranchClass::DirectCond => (true, false, false),
            BranchClass::IndirectCond => (true, true, false),
            BranchClass::IndirectUncond => (false, true, false),
            BranchClass::Return => (cond, true, true),
        };
        // A pop of the return address that releases more than its own word (libgcc's
        // soft-float comparisons end with `ldr pc, [sp], #8`) is a return for pft too.
        let ret = ret || (target && !thumb && insn & LDR_PC_SP_MASK == LDR_PC_SP);
        InsnFlow {
            direction,
            target,
            ret,
            link: class != BranchClass::None && links(insn, thumb),
            mov_lr_pc: !thumb && insn == ARM_MOV_LR_PC,
            table: table_jump(insn, thumb),
        }
    }
}

/// ARM `ADD{cond} pc, pc, Rm{, shift #imm}` (not the unconditional space, S clear, shift
/// by an immediate): `insn & TABLE_JUMP_MASK == TABLE_JUMP`.
pub const TABLE_JUMP_MASK: u32 = 0x0FFF_F010;
pub const TABLE_JUMP: u32 = 0x008F_F000;

/// A jump table's `ADD pc, pc, Rm{, shift #imm}` (ARM state).
#[inline]
pub fn table_jump(insn: u32, thumb: bool) -> bool {
    !thumb && insn >> 28 != 0xF && insn & TABLE_JUMP_MASK == TABLE_JUMP
}

/// Return address of a linking instruction at `iw_addr` (interworking form).
#[inline]
pub fn return_address(iw_addr: u32) -> u32 {
    if iw_addr & 1 != 0 {
        iw_addr.wrapping_add(2)
    } else {
        iw_addr.wrapping_add(4)
    }
}

/// Contexts of target points and target coding, after the direction contexts.
pub struct TargetContexts;

impl TargetContexts {
    pub const RETURN: usize = 0;
    pub const RETURN_EMPTY: usize = 1;
    pub const INDIRECT: usize = 2;
    pub const RAS_TOP: usize = 3;
    pub const RTC_HIT: usize = 4;
    pub const UPPER_SAME: usize = 5;
    pub const INDIRECT_TAGGED: usize = 6;
    pub const ALT: usize = 7;
    pub const SAME_STATE: usize = 8;
    /// LEN_1..LEN_7, the nodes of the offset class tree: LEN_k is `LEN + k - 1`.
    pub const LEN: usize = 9;
    /// A base-table prediction from a confident entry.
    pub const INDIRECT_CONF: usize = 16;
    /// A tagged-table prediction from a useful entry.
    pub const INDIRECT_TAGGED_USEFUL: usize = 17;
    /// The fixed target contexts; RTC_INDEX_1..RTC_INDEX_k (one per bit of a recent-target
    /// index, most significant first) follow them: RTC_INDEX_j is `RTC_INDEX + j - 1`.
    pub const COUNT: usize = 18;
    pub const RTC_INDEX: usize = 18;
}

/// Widths of the offset classes (section 11.5, *offset*).
pub const OFFSET_WIDTHS: [u32; 8] = [3, 5, 7, 9, 11, 13, 17, 32];

/// The page of the high exception vectors and the kernel's user helpers (0xFFFF0FA0..):
/// a class-7 offset is sent as a flag and, in the page, the target's bits \[11:s\].
pub const HIGH_PAGE: u32 = 0xFFFF_0000;

/// `target` lies in [`HIGH_PAGE`].
#[inline]
pub fn in_high_page(target: u32) -> bool {
    target & 0xFFFF_F000 == HIGH_PAGE
}

/// The code `z` of a missed target's offset from the branch at `a` (interworking
/// addresses), and its class: zigzag from the branch, or, for a jump table (`table`),
/// unsigned from a + 8 (modulo 2^32, in units of the target's instruction size).
#[inline]
pub fn offset_code(a: u32, target: u32, table: bool) -> (u32, usize) {
    let s = if target & 1 != 0 { 1 } else { 2 };
    let z = if table {
        (target >> s).wrapping_sub(a.wrapping_add(8) >> s)
    } else {
        let d = (target >> s).wrapping_sub(a >> s) as i32;
        ((d << 1) ^ (d >> 31)) as u32
    };
    let n = 32 - z.leading_zeros();
    let class = OFFSET_WIDTHS.iter().position(|&w| n <= w).unwrap_or(OFFSET_WIDTHS.len() - 1);
    (z, class)
}

/// The target an offset code names: `thumb` is the target's state, `table` as for
/// [`offset_code`].
#[inline]
pub fn offset_target(a: u32, z: u32, thumb: bool, table: bool) -> u32 {
    let s = if thumb { 1 } else { 2 };
    if table {
        return ((a.wrapping_add(8) >> s).wrapping_add(z) << s) | thumb as u32;
    }
    let d = (z >> 1) ^ (z & 1).wrapping_neg();
    ((a >> s).wrapping_add(d) << s) | thumb as u32
}

/// A high-page target's field from its bits \[11:0\] (bit 0 says Thumb): bits \[11:s\] and
/// their width.
#[inline]
pub fn high_page_field(low12: u32) -> (u32, u32) {
    let thumb = low12 & 1 != 0;
    ((low12 & 0xFFF) >> if thumb { 1 } else { 2 }, high_page_bits(thumb))
}

/// Width of a high-page target's field: bits \[11:s\].
#[inline]
pub fn high_page_bits(thumb: bool) -> u32 {
    if thumb {
        11
    } else {
        10
    }
}

/// How a mispredicted target was sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetCode {
    Alt,
    RasTop,
    Recent(usize),
    Offset,
}

/// The predictor state encoder and decoder share (section 11.3-11.5, 11.7); the context
/// probabilities belong to the coder (encoder) or sit beside this state (decoder).
#[derive(Clone, Debug)]
pub struct PftState {
    pub params: PftParams,
    /// Address bits below `low` are not sent (isa=arm: 2).
    pub low: u32,
    pub dir: DirectionPredictor,
    pub ras: ReturnAddressStack,
    pub itp: IndirectTargetPredictor,
    pub rtc: RecentTargets,
    /// Upper `u` bits of the last address sent.
    pub upper: u32,
    /// Instructions since the last slot.
    pub gap: u32,
    /// No address has been sent since the last reset.
    pub awaiting_start: bool,
    /// Instructions since the last reset (periodic sync).
    pub since_reset: u64,
}

impl PftState {
    pub fn new(params: &PftParams, low: u32) -> Self {
        PftState {
            params: *params,
            low,
            dir: DirectionPredictor::new(params),
            ras: ReturnAddressStack::new(params.ras),
            itp: IndirectTargetPredictor::new(params.itp, params.itt, params.ttag, params.tw),
            rtc: RecentTargets::new(params.rtc, params.tw),
            upper: 0,
            gap: 0,
            awaiting_start: true,
            since_reset: 0,
        }
    }

    /// The reset state (section 11.7).
    pub fn reset(&mut self) {
        self.dir.reset();
        self.ras.reset();
        self.itp.reset();
        self.rtc.reset();
        self.upper = 0;
        self.gap = 0;
        self.awaiting_start = true;
        self.since_reset = 0;
    }

    /// Index of a target context in `probs`.
    #[inline]
    pub fn target_ctx(&self, which: usize) -> usize {
        DirectionPredictor::contexts(self.dir.tables()) + which
    }

    /// Target prediction of a taken target point: (predicted address, context, the
    /// alternate when the tagged target table provided). Returns pop the return address
    /// stack.
    #[inline]
    pub fn predict_target(&mut self, flow: &InsnFlow, iw_addr: u32) -> (u32, usize, Option<u32>) {
        if flow.ret {
            let ctx = if self.ras.is_empty() { TargetContexts::RETURN_EMPTY } else { TargetContexts::RETURN };
            (self.ras.pop(), self.target_ctx(ctx), None)
        } else {
            let p = self.itp.predict(iw_addr);
            let sure = self.itp.confident();
            if p.tagged {
                let ctx = if sure { TargetContexts::INDIRECT_TAGGED_USEFUL } else { TargetContexts::INDIRECT_TAGGED };
                (p.target, self.target_ctx(ctx), (p.alt != p.target).then_some(p.alt))
            } else {
                let ctx = if sure { TargetContexts::INDIRECT_CONF } else { TargetContexts::INDIRECT };
                (p.target, self.target_ctx(ctx), None)
            }
        }
    }

    /// After a taken target point: train the indirect predictor (non-returns).
    #[inline]
    pub fn after_target(&mut self, flow: &InsnFlow, target: u32) {
        if !flow.ret {
            self.itp.update(target);
        }
    }

    /// A linking instruction that is not a slot (taken: a direct call) shifts bit 2 of its
    /// target into the direction history (section 11.3, *Calls*).
    #[inline]
    pub fn call_bit(&mut self, flow: &InsnFlow, taken: bool, next_pc: u32) {
        if flow.link && taken {
            self.dir.push_history(next_pc & 4 != 0);
        }
    }

    /// Return-address pushes of an instruction that was not an exception.
    #[inline]
    pub fn pushes(&mut self, flow: &InsnFlow, iw_addr: u32, taken: bool) {
        if flow.mov_lr_pc {
            self.ras.push(iw_addr.wrapping_add(8));
        }
        if flow.link && taken {
            self.ras.push(return_address(iw_addr));
        }
    }

    /// How a mispredicted target `a` of the point at `branch` is sent (`ret`: the RAS was
    /// the prediction; `alt`: the alternate target, when there is one).
    pub fn classify_target(&self, branch: u32, a: u32, ret: bool, alt: Option<u32>) -> TargetCode {
        if alt == Some(a) {
            return TargetCode::Alt;
        }
        if !ret && !self.ras.is_empty() && self.ras.peek() == a {
            return TargetCode::RasTop;
        }
        if let Some(i) = self.rtc.find(branch, a) {
            return TargetCode::Recent(i);
        }
        TargetCode::Offset
    }

    #[inline]
    pub fn upper_matches(&self, a: u32) -> bool {
        a >> (32 - self.params.u) == self.upper
    }

    /// Width of the address field: all of A\[31:low\], or A\[31-u:low\] when the upper bits match.
    #[inline]
    pub fn address_bits(&self, upper_same: bool) -> u32 {
        if upper_same {
            32 - self.params.u - self.low
        } else {
            32 - self.low
        }
    }

    #[inline]
    pub fn set_upper(&mut self, a: u32) {
        self.upper = a >> (32 - self.params.u);
    }
}

/// pft statistics (bits by component, predictor hit rates).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct PftStats {
    pub direction_points: u64,
    pub direction_misses: u64,
    pub return_points: u64,
    pub return_misses: u64,
    pub indirect_points: u64,
    pub indirect_misses: u64,
    /// Mispredicted targets sent as the alternate, the RAS top, from the recent-target
    /// cache, as offsets.
    pub target_alt: u64,
    pub target_ras_top: u64,
    pub target_recent: u64,
    pub target_offset: u64,
    pub slots: u64,
    pub virtual_slots: u64,
    pub exceptions: u64,
    /// SYNC and OVERFLOW escapes (each resets the state).
    pub syncs: u64,
    /// Information content of each component in bits (sum of -log2 p), which the range
    /// coder realizes to within its termination bytes.
    pub direction_bits: f64,
    pub target_bits: f64,
    pub address_bits: f64,
    /// The escape branch's share of the slot symbols that did not escape.
    pub escape_flag_bits: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flow_of_each_class() {
        let f = InsnFlow::of(BranchClass::DirectCond, 0x1A00_0010, false);
        assert!(f.direction && !f.target && !f.link);
        let blgt = InsnFlow::of(BranchClass::DirectCond, 0xCB00_0010, false);
        assert!(blgt.direction && blgt.link);
        let bl = InsnFlow::of(BranchClass::DirectUncond, 0xEB00_0010, false);
        assert!(!bl.is_slot() && bl.link);
        let bx_lr = InsnFlow::of(BranchClass::Return, 0xE12F_FF1E, false);
        assert!(bx_lr.target && bx_lr.ret && !bx_lr.direction);
        let bxne_lr = InsnFlow::of(BranchClass::Return, 0x112F_FF1E, false);
        assert!(bxne_lr.target && bxne_lr.direction);
        let blx_r3 = InsnFlow::of(BranchClass::IndirectUncond, 0xE12F_FF33, false);
        assert!(blx_r3.target && !blx_r3.ret && blx_r3.link);
        let pop_pc = InsnFlow::of(BranchClass::Return, 0xBD10, true);
        assert!(pop_pc.ret && !pop_pc.direction, "Thumb returns are unconditional");
        let thumb_bl = InsnFlow::of(BranchClass::DirectUncond, 0xF800, true);
        assert!(thumb_bl.link && !thumb_bl.is_slot());
        let thumb_blx_reg = InsnFlow::of(BranchClass::IndirectUncond, 0x4798, true);
        assert!(thumb_blx_reg.link && thumb_blx_reg.target);
        let mov = InsnFlow::of(BranchClass::None, ARM_MOV_LR_PC, false);
        assert!(mov.mov_lr_pc && !mov.is_slot());
        let blx_imm = InsnFlow::of(BranchClass::DirectUncond, 0xFA00_0001, false);
        assert!(blx_imm.link);
        assert!(!InsnFlow::of(BranchClass::None, 0xEB00_0010, false).link, "class none never links");
        // LDR pc, [sp], #8 (the classifier: indirect) is a return, conditional or not.
        let pop8 = InsnFlow::of(BranchClass::IndirectUncond, 0xE49D_F008, false);
        assert!(pop8.ret && pop8.target && !pop8.direction);
        let pop8ne = InsnFlow::of(BranchClass::IndirectCond, 0x149D_F008, false);
        assert!(pop8ne.ret && pop8ne.direction);
        // Not a pop: pre-indexed, subtracted, another base register, a byte load.
        for insn in [0xE59D_F008u32, 0xE41D_F008, 0xE493_F008, 0xE4DD_F008] {
            assert!(!InsnFlow::of(BranchClass::IndirectUncond, insn, false).ret, "{insn:08x}");
        }
        assert!(!InsnFlow::of(BranchClass::IndirectUncond, 0xF008, true).ret, "Thumb halfwords are not ARM words");
    }

    #[test]
    fn params_parse_print_validate() {
        let d = PftParams::default();
        assert_eq!(d.to_string(), "");
        assert_eq!(d.history_lengths(), vec![3, 5, 9, 16, 30, 64]);
        assert_eq!(PftParams::parse_hlen("none").unwrap(), [0; 8]);
        assert!(PftParams::parse_hlen("4-4").is_err());
        assert!(PftParams::parse_hlen("1-2-3-4-5-6-7-8-9").is_err());
        assert!(PftParams::parse_hlen("65").is_err());
        assert!(d.validate(0).is_ok());
        for (p, needle) in [
            (PftParams { bim: 3, ..d }, "bim=3"),
            (PftParams { tsize: 8192, ..d }, "tsize=8192"),
            (PftParams { tag: 3, ..d }, "tag=3"),
            (PftParams { ras: 65, ..d }, "ras=65"),
            (PftParams { itp: 24, ..d }, "itp=24"),
            (PftParams { itt: 3, ..d }, "itt=3"),
            (PftParams { ttag: 16, ..d }, "ttag=16"),
            (PftParams { tw: 1, ..d }, "tw=1"),
            (PftParams { tw: 33, ..d }, "tw=33"),
            (PftParams { rtc: 3, ..d }, "rtc=3"),
            (PftParams { u: 30, ..d }, "u=30"),
            (PftParams { rate: 0, ..d }, "rate=0"),
        ] {
            let e = p.validate(2).unwrap_err();
            assert!(e.contains(needle), "{e}");
        }
    }

    #[test]
    fn default_storage_is_under_5000_bits() {
        let s = PftParams::default().storage(false);
        // 2*256 + 6*32*11 + 64 + 3 + (2 + 5 + 3) | 9*32 + 8 | 16*23 + 16*(4+22+1) + 8 | 8*22 + 4 | 47*14 + 12 + 81 | 17
        assert_eq!(s.direction, 512 + 2112 + 64 + 3 + 10);
        assert_eq!(s.ras, 296);
        assert_eq!(s.itp, 368 + 432 + 8);
        assert_eq!(s.rtc, 180);
        assert_eq!(s.coder, 47 * 14 + 12 + 81);
        assert_eq!(s.total(), 2701 + 296 + 808 + 180 + 751 + 17);
        assert_eq!(s.total(), 4753);
        // One tagged table or none: the allocation register never steps and is not counted.
        let one = PftParams { hlen: PftParams::parse_hlen("8").unwrap(), ..PftParams::default() }.storage(false);
        assert_eq!(one.direction, 512 + 32 * 11 + 8 + 2 + 5);
        let none = PftParams { hlen: [0; 8], ..PftParams::default() }.storage(false);
        assert_eq!(none.direction, 512);
        let whole = PftParams { tw: 32, ..PftParams::default() }.storage(false);
        assert_eq!(whole.itp, 16 * 33 + 16 * (4 + 33) + 8, "tw=32: whole targets, no flag");
        assert_eq!(whole.rtc, 8 * 32 + 4);
        assert!(s.total() + job_buffer_bits(2) + 80 <= 5000, "with the paper's buffers: 2 jobs, 80 bits");
    }

    #[test]
    fn offsets_round_trip() {
        for (a, t) in [
            (0x8000u32, 0x8004u32),
            (0x8000, 0x7ff0),
            (0x8001, 0x8101),
            (0x8001, 0x9000),
            (0x9000, 0x8001),
            (0x0001_0424, 0xffff_0fe0),
            (0xffff_0fe0, 0x0001_0428),
            (0, 0xffff_fffc),
            (0x8000, 0x8000),
        ] {
            for table in [false, true] {
                let (z, c) = offset_code(a, t, table);
                assert!(32 - z.leading_zeros() <= OFFSET_WIDTHS[c], "{a:x} {t:x}");
                assert!(c == 0 || 32 - z.leading_zeros() > OFFSET_WIDTHS[c - 1]);
                assert_eq!(offset_target(a, z, t & 1 != 0, table), t, "{a:x} -> {t:x}");
            }
        }
        assert_eq!(offset_code(0x8000, 0x8004, false), (2, 0), "one instruction forward: z = 2");
        assert_eq!(offset_code(0x8000, 0x7ffc, false), (1, 0), "one back: z = 1");
        assert_eq!(offset_code(0x8000, 0x8008, true), (0, 0), "a table's first entry: z = 0");
        assert_eq!(offset_code(0x8000, 0x80a8, true), (40, 2));
        assert!(table_jump(0x908F_F103, false) && table_jump(0xE08F_F00C, false));
        assert!(!table_jump(0xE08F_F00C, true) && !table_jump(0xE28F_F004, false) && !table_jump(0xE09F_F00C, false));
        assert!(in_high_page(0xFFFF_0FE0) && !in_high_page(0xFFFE_0FE0));
    }

    #[test]
    fn lost_counts_go_as_length_and_rest() {
        assert_eq!(lost_code(1), (0, 0), "one lost instruction: the length field alone");
        assert_eq!(lost_code(80), (6, 16), "0b1010000: L = 7");
        assert_eq!(lost_code(0xFFFF_FFFF), (31, 0x7FFF_FFFF));
        assert_eq!(lost_code(1 << 40), (31, 0x7FFF_FFFF), "saturates at 2^32 - 1");
        for n in [2u64, 3, 255, 256, 65_535, 65_536, 1 << 31] {
            let (below, rest) = lost_code(n);
            assert_eq!((1u64 << below) | rest as u64, n);
        }
    }
}

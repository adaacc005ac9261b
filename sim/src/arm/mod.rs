//! ARM-state (A32, ARMv5TE) instruction execution, with the XScale extensions (CP0
//! accumulator: MIA, MIAPH, MIAxy, MAR, MRA) and the CP15 registers startup code reads.
//!
//! # Structure
//!
//! [`execute`] checks the condition first (`cond = 1111` goes to the unconditional space:
//! BLX(imm), PLD, everything else undefined), then dispatches through a 4096-entry table of
//! handlers indexed by instruction bits\[27:20\] and \[7:4\]. The table is a `static` built
//! by a `const fn` at compile time; its entries are const-generic instantiations, so e.g.
//! `ADDS r0, r1, r2, LSL #3` runs a handler specialised for opcode ADD, S = 1 and the
//! "register shifted by immediate" operand. The decoding boundaries are those of
//! `streamtrace_isa::classify_arm` (see its module doc): the only instructions that return
//! [`Flow::Jump`] are B, BL, BLX(imm), BX, BLX(reg), data processing with Rd = pc outside the
//! multiply/extra-load-store and miscellaneous spaces, LDR (word) into pc and LDM with pc in
//! the list.
//!
//! # PC reads
//!
//! `cpu.r[15]` holds the address of the current instruction. Reading pc as an operand
//! gives `r[15] + 8`, except for Rn and Rm of a data-processing instruction whose shift
//! amount comes from a register, which read `r[15] + 12` (the ARM ARM calls any pc operand
//! there UNPREDICTABLE; +12 is what ARM7/ARM9/XScale pipelines deliver). Storing pc (STR, STM)
//! stores `r[15] + 8` (ARM ARM: IMPLEMENTATION DEFINED, +8 or +12; we choose +8).
//!
//! # Choices where the ARM ARM says UNPREDICTABLE or IMPLEMENTATION DEFINED
//!
//! Returned as [`SimError::Unpredictable`] (compilers never emit these; the model would have
//! to guess):
//! * data processing with S = 1 and Rd = pc (exception return) in User or System mode, or
//!   when the SPSR holds an invalid mode;
//! * MRS of the SPSR / MSR to the SPSR in User or System mode; MRS with Rd = pc; MSR that
//!   would set an invalid mode; MSR with Rm = pc;
//! * loads other than LDR (word) into pc: LDRB, LDRH, LDRSB, LDRSH, LDRT, LDRD with Rd = 14;
//!   LDRD/STRD with an odd Rd; LDRD with writeback and Rn = Rd or Rd+1, or with Rm = Rd or Rd+1;
//! * any base writeback with Rn = pc (single, extra, block transfers); LDM/STM with Rn = pc;
//! * load with writeback and Rn = Rd; extra load/store post-indexed with W = 1;
//! * a word loaded into pc (LDR, LDM without `^`) or a BX/BLX target with bits\[1:0\] = `10`;
//! * BX/BLX(reg) with the should-be-one bits\[19:8\] not all ones (the classifier does not call
//!   those a branch); BLX(reg) with Rm = pc;
//! * LDM/STM with an empty register list; STM with writeback and Rn in the list but not the
//!   lowest register; LDM^/STM^ (user registers, no pc) with writeback or in User/System mode;
//!   LDM^ with pc in User/System mode;
//! * multiplies with pc as any operand or destination, long multiplies (and SMLALxy, MRA)
//!   with RdHi = RdLo; CLZ, QADD..QDSUB, SMLAxy.. with pc operands;
//! * SWP/SWPB with pc as any register, or Rn = Rd or Rn = Rm (Rd = Rm is fine);
//! * MIA* with pc operands, accumulator other than acc0 or an undefined opcode_3; MAR/MRA with
//!   pc or an accumulator other than acc0.
//!
//! Modelled choices (no error):
//! * MUL/MLA with Rd = Rm: operands are read before the write (the v6 behaviour).
//! * TST/TEQ/CMP/CMN ignore Rd (the should-be-zero field): with Rd = pc (26-bit `TEQP`) they
//!   only set the flags, as the classifier says (no branch).
//! * STR/STRH/STRD with writeback and Rn = Rd: the original register value is stored.
//! * LDM with writeback and Rn in the list: the loaded value wins (ARMv4/ARM7 and ARMv6+
//!   behaviour); STM with writeback and Rn the lowest listed register stores the original base.
//! * LDM/STM addresses ignore bits\[1:0\] of the base. Unaligned LDR (and SWP) read the word
//!   at `addr & !3` rotated right by `8 * addr[1:0]` (ARMv5/XScale); unaligned STR writes the
//!   word at `addr & !3`. LDRH/LDRSH/STRH at an odd address access `addr & !1` (XScale ignores
//!   bit 0 when alignment checking is off). LDRD/STRD use `addr & !3` and `(addr & !3) + 4`
//!   and do not require 8-byte alignment (the ARM ARM makes `addr[2] = 1` UNPREDICTABLE
//!   without the v6 U bit; QEMU performs the two word accesses). CP15 alignment checking
//!   (control bit A) is not modelled.
//! * LDRT/STRT/LDRBT/STRBT access the same memory as the normal forms (no MMU).
//! * MSR never changes the T bit (writes to it are ignored); in User mode MSR CPSR writes only
//!   the flags byte (bits\[31:24\]), silently ignoring the other fields (architectural).
//! * PLD is a no-op without a memory access. BKPT raises a prefetch abort. SWI 0x123456 is
//!   the semihosting trap ([`Flow::Semihost`]); other SWIs raise the SWI exception.
//! * CP15 (MRC/MCR p15) is privileged: in User mode it is undefined. c0: opcode_2 = 1 reads
//!   the cache type register `0x0D172172`, every other c0 read the main ID `0x69054110`
//!   (both as QEMU's `-cpu pxa270`, an alias of pxa270-a0, the functional oracle; a C5-stepping
//!   PXA270 would read `0x69054117`). c1 opcode_2 = 0 is the control register
//!   (`cpu.cp15_control`, writes stored verbatim); every other CP15 register reads 0 and
//!   ignores writes. MRC with Rd = pc copies bits\[31:28\] of the value to N, Z, C, V.
//! * CP0 (the XScale accumulator) is accessible in every mode (the coprocessor access register
//!   is not modelled; QEMU's linux-user mode enables CP0 too). `cpu.acc0` holds the 40-bit
//!   accumulator zero-extended (bits\[63:40\] always 0); MRA sign-extends bit 39 into RdHi.
//! * LDC/STC on CP0 and CP1 are the iWMMXt loads and stores of the PXA27x (WLDRB/H/W/D,
//!   WSTRB/H/W/D on `cpu.wr`, as QEMU's `pxa270` decodes them): glibc's setjmp/longjmp save
//!   and restore wR10-wR15 with them when `AT_HWCAP` says IWMMXT, as QEMU's does. No other
//!   iWMMXt instruction exists here, and `cpu.wr[0]` is not the accumulator acc0.
//! * Every other coprocessor instruction (CDP, LDC, STC, MCR, MRC, MCRR, MRRC on other
//!   coprocessors or other CP0 operations; all of CDP2/LDC2/STC2/MCR2/MRC2) is undefined, as
//!   are BXJ, the v6 encodings (LDREX, UMAAL, media space) and the unallocated
//!   miscellaneous encodings.

use crate::cpu::{Cpu, ExceptionKind};
use crate::machine::{Bus, Flow, SimError, Unpredictable};

/// Run a bus access; a fault makes the instruction take a data abort (the bus records the
/// faulting address). Nothing the instruction would write is committed before its last load.
macro_rules! mem_try {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(_) => return Ok(Flow::Exception(ExceptionKind::DataAbort)),
        }
    };
}

mod block;
mod coproc;
mod dp;
mod misc;
pub(crate) use misc::branch_target;
mod mul;
mod single;

/// Main ID register (CP15 c0, opcode_2 = 0) of QEMU's `pxa270` CPU (= pxa270-a0).
pub const CP15_MAIN_ID: u32 = 0x6905_4110;
/// Cache type register (CP15 c0, opcode_2 = 1) of QEMU's `pxa270` CPU.
pub const CP15_CACHE_TYPE: u32 = 0x0D17_2172;

/// An instruction handler; the table holds one per bits\[27:20\]:\[7:4\] pattern.
///
/// A handler reports an UNPREDICTABLE instruction with [`Unpredictable`]; the caller adds the
/// instruction's address and word (which the handler has not changed by then).
pub(crate) type Handler = fn(&mut Cpu, &mut Bus<'_>, u32) -> Result<Flow, Unpredictable>;

/// Execute one ARM instruction located at `cpu.r[15]`.
// Always inlined into the machine's (timed and untimed) steps.
#[inline(always)]
pub fn execute(cpu: &mut Cpu, bus: &mut Bus<'_>, word: u32) -> Result<Flow, SimError> {
    let pc = cpu.r[15];
    let (handler, cond) = decode_word(word);
    if cond != COND_ALWAYS && !cpu.cond_passed(cond as u32) {
        return Ok(Flow::Next);
    }
    handler(cpu, bus, word).map_err(|e| e.at(pc, word))
}

/// Condition field value of instructions that always execute.
pub(crate) const COND_ALWAYS: u8 = 0xE;

/// The handler of `word` and the condition the machine checks before calling it (the
/// unconditional space `cond = 1111` has one handler, called unconditionally): `execute`
/// split in two, for the predecoded-instruction cache.
///
/// Some words get a handler specialised further than the table's (same behaviour, fewer
/// steps): data processing with an unshifted register operand (`LSL #0`) or without pc
/// operands, single and halfword/signed loads and stores with an offset, no writeback and no
/// pc operand (but the base).
pub(crate) fn decode_word(word: u32) -> (Handler, u8) {
    match word >> 28 {
        0xF => (misc::unconditional as Handler, COND_ALWAYS),
        cond => (specialised(word).unwrap_or(TABLE[table_index(word)]), cond as u8),
    }
}

/// A handler for `word` (condition not 1111) specialised beyond the table's, if any.
fn specialised(word: u32) -> Option<Handler> {
    let hi = (word >> 20) & 0xFF;
    let lo = (word >> 4) & 0xF;
    let (opcode, s) = ((hi >> 1) & 0xF, hi & 1 != 0);
    let not_pc = |lsb: u32| field(word, lsb) != 15;
    // Data processing, register shifted by immediate, outside the multiply, extra
    // load/store and miscellaneous spaces (the table's own test): shift LSL #0 is F_REG,
    // and without pc in Rn, Rd, Rm the form is F_PLAIN too.
    if hi >> 5 == 0 && lo & 1 == 0 && hi & 0x19 != 0x10 {
        let form = if (word >> 5) & 0x7F == 0 { dp::F_REG } else { dp::F_SHIFT_IMM };
        let plain = if not_pc(16) && not_pc(12) && not_pc(0) { dp::F_PLAIN } else { 0 };
        if form == dp::F_SHIFT_IMM && plain == 0 {
            return None;
        }
        // Plain with a nonzero shift amount: the shift type is known too.
        let typed = if form == dp::F_SHIFT_IMM && (word >> 7) & 31 != 0 {
            (((word >> 5) & 3) + 1) << dp::F_TYPE_SHIFT
        } else {
            0
        };
        return Some(dp::select_dp(opcode, s, form | plain | typed));
    }
    // Data processing with an immediate operand (not MSR / undefined) and no pc in Rn, Rd;
    // an unrotated one (bits[11:8] = 0) is F_IMM8 too.
    if hi >> 5 == 1 && hi & 0x19 != 0x10 && not_pc(16) && not_pc(12) {
        let imm8 = if (word >> 8) & 0xF == 0 { dp::F_IMM8 } else { 0 };
        return Some(dp::select_dp(opcode, s, dp::F_IMM | dp::F_PLAIN | imm8));
    }
    // LDR/STR/LDRB/STRB with Rd != pc: immediate offset, or (bit 4 = 0) a register offset
    // with Rm != pc; P = 1, W = 0, or with writeback (P = 1, W = 1 or P = 0, W = 0; not the
    // T forms P = 0, W = 1) Rn != pc and Rn != Rd.
    let reg = hi >> 5 == 0b011;
    if (hi >> 5 == 0b010 || reg && lo & 1 == 0 && not_pc(0)) && not_pc(12) {
        let wb_ok = not_pc(16) && field(word, 16) != field(word, 12);
        let wb = match hi & 0x12 {
            0x10 => Some(single::WB_NONE),
            0x12 if wb_ok => Some(single::WB_PRE),
            0x00 if wb_ok => Some(single::WB_POST),
            _ => None,
        };
        if let Some(wb) = wb {
            return Some(single::select_single_offset(hi, reg, wb));
        }
    }
    // STRH/LDRH/LDRSB/LDRSH (the extra load/store space: bit 7 = bit 4 = 1, not the multiply
    // space), P = 1, W = 0, Rd != pc, and for a register offset Rm != pc.
    if hi >> 5 == 0 && lo != 0b1001 && lo & 0b1001 == 0b1001 && hi & 0x12 == 0x10 && not_pc(12) && (hi & 4 != 0 || not_pc(0)) {
        return single::select_extra_offset(hi, lo);
    }
    None
}

#[inline(always)]
const fn table_index(word: u32) -> usize {
    (((word >> 16) & 0xFF0) | ((word >> 4) & 0xF)) as usize
}

static TABLE: [Handler; 4096] = build_table();

const fn build_table() -> [Handler; 4096] {
    let mut t = [undefined as Handler; 4096];
    let mut i = 0;
    while i < 4096 {
        t[i] = decode((i as u32) >> 4, (i as u32) & 0xF);
        i += 1;
    }
    t
}

/// The handler for instructions with bits\[27:20\] = `hi` and bits\[7:4\] = `lo`.
const fn decode(hi: u32, lo: u32) -> Handler {
    let opcode = (hi >> 1) & 0xF;
    let s = hi & 1 != 0;
    match hi >> 5 {
        0b000 => {
            if lo == 0b1001 {
                // Multiply and swap space (bits[7:4] = 1001).
                if hi & 0x1C == 0x00 {
                    mul::select_mul(hi)
                } else if hi & 0x18 == 0x08 {
                    mul::select_mull(hi)
                } else if hi & 0x1B == 0x10 {
                    single::select_swp(hi)
                } else {
                    undefined
                }
            } else if lo & 0b1001 == 0b1001 {
                // Extra load/store space (bit 7 = bit 4 = 1, bits[6:5] != 00).
                single::select_extra(hi, lo)
            } else if hi & 0x19 == 0x10 {
                // Opcode 10xx with S = 0: miscellaneous instructions.
                misc::select_misc(hi, lo)
            } else if lo & 1 == 0 {
                dp::select_dp(opcode, s, dp::F_SHIFT_IMM)
            } else {
                dp::select_dp(opcode, s, dp::F_SHIFT_REG)
            }
        }
        0b001 => {
            if hi & 0x19 == 0x10 {
                // MSR immediate (bit 21 = 1); 0011 0x00 is undefined.
                if hi & 0x02 != 0 {
                    dp::msr::<true>
                } else {
                    undefined
                }
            } else {
                dp::select_dp(opcode, s, dp::F_IMM)
            }
        }
        0b010 => single::select_single(hi, false),
        0b011 => {
            if lo & 1 != 0 {
                undefined
            } else {
                single::select_single(hi, true)
            }
        }
        0b100 => {
            if hi & 1 != 0 {
                block::ldm
            } else {
                block::stm
            }
        }
        0b101 => {
            if hi & 0x10 != 0 {
                misc::branch::<true>
            } else {
                misc::branch::<false>
            }
        }
        0b110 => {
            // 1100 010L: MCRR/MRRC; other LDC/STC: iWMMXt loads and stores on CP0/CP1.
            if hi & 0x1E == 0x04 {
                coproc::mcrr_mrrc
            } else {
                coproc::ldc_stc
            }
        }
        _ => {
            if hi & 0x10 != 0 {
                misc::swi
            } else if lo & 1 != 0 {
                coproc::mcr_mrc
            } else {
                undefined
            }
        }
    }
}

/// Undefined instruction.
pub(crate) fn undefined(_: &mut Cpu, _: &mut Bus<'_>, _: u32) -> Result<Flow, Unpredictable> {
    Ok(Flow::Exception(ExceptionKind::Undefined))
}

/// Register field at bits\[lsb+3:lsb\] as an index.
#[inline(always)]
pub(crate) fn field(word: u32, lsb: u32) -> usize {
    ((word >> lsb) & 0xF) as usize
}

/// Register operand: pc reads as the instruction address + 8.
#[inline(always)]
pub(crate) fn read_reg(cpu: &Cpu, n: usize) -> u32 {
    if n == 15 {
        cpu.r[15].wrapping_add(8)
    } else {
        cpu.r[n & 15]
    }
}

#[cold]
#[inline(never)]
pub(crate) fn unpredictable(reason: &'static &'static str) -> Result<Flow, Unpredictable> {
    Err(Unpredictable::new(reason))
}

/// Load a word into pc with ARMv5T interworking (LDR pc, LDM {..pc}, BX, BLX): bit 0 of
/// `value` selects Thumb state.
#[inline]
pub(crate) fn interwork_to(cpu: &mut Cpu, value: u32) -> Result<Flow, Unpredictable> {
    if value & 1 != 0 {
        cpu.thumb = true;
        cpu.r[15] = value & !1;
    } else if value & 2 != 0 {
        return unpredictable(&"branch to an ARM-state address with bit 1 set");
    } else {
        cpu.thumb = false;
        cpu.r[15] = value;
    }
    Ok(Flow::Jump)
}

/// Signed 16-bit half of `v`: top half if `top`.
#[inline(always)]
pub(crate) fn half(v: u32, top: bool) -> i32 {
    if top {
        (v as i32) >> 16
    } else {
        v as i16 as i32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_index_uses_bits_27_20_and_7_4() {
        assert_eq!(table_index(0xE091_2083), 0x098);
        assert_eq!(table_index(0xFFFF_FFFF), 0xFFF);
    }
}

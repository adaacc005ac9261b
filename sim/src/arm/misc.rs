//! Branches (B, BL, BLX, BX), the miscellaneous space (CLZ, QADD.., BKPT, MRS/MSR dispatch,
//! halfword multiplies dispatch), SWI and the unconditional (cond = 1111) space.

use super::{dp, field, interwork_to, mul, read_reg, undefined, unpredictable, Handler};
use crate::cpu::{saturate_i32, Cpu, ExceptionKind};
use crate::machine::{Bus, Flow, Unpredictable};

/// sext(imm24) << 2.
#[inline(always)]
fn branch_offset(word: u32) -> u32 {
    (((word << 8) as i32) >> 6) as u32
}

/// The target of B / BL at `pc`: pc + 8 + offset (also the functional run loop's, which
/// executes direct branches without their handler).
#[inline(always)]
pub(crate) fn branch_target(pc: u32, word: u32) -> u32 {
    pc.wrapping_add(8).wrapping_add(branch_offset(word))
}

/// B / BL (`LINK`): target = pc + 8 + offset; lr = pc + 4.
pub(super) fn branch<const LINK: bool>(cpu: &mut Cpu, _bus: &mut Bus<'_>, word: u32) -> Result<Flow, Unpredictable> {
    let pc = cpu.r[15];
    if LINK {
        cpu.r[14] = pc.wrapping_add(4);
    }
    cpu.r[15] = branch_target(pc, word);
    Ok(Flow::Jump)
}

/// BX and BLX(reg) require bits[19:8] = all ones (the classifier's encoding).
#[inline(always)]
fn bx_sbo_ok(word: u32) -> bool {
    word & 0x000F_FF00 == 0x000F_FF00
}

/// BX Rm: bit 0 of Rm selects Thumb state.
pub(super) fn bx(cpu: &mut Cpu, _bus: &mut Bus<'_>, word: u32) -> Result<Flow, Unpredictable> {
    if !bx_sbo_ok(word) {
        return unpredictable(&"BX with should-be-one bits [19:8] not all ones");
    }
    let target = read_reg(cpu, field(word, 0));
    interwork_to(cpu, target)
}

/// BLX Rm: lr = pc + 4, then as BX (Rm is read before lr is written).
pub(super) fn blx_reg(cpu: &mut Cpu, _bus: &mut Bus<'_>, word: u32) -> Result<Flow, Unpredictable> {
    if !bx_sbo_ok(word) {
        return unpredictable(&"BLX with should-be-one bits [19:8] not all ones");
    }
    let rm = field(word, 0);
    if rm == 15 {
        return unpredictable(&"BLX with Rm = pc");
    }
    let target = cpu.r[rm];
    cpu.r[14] = cpu.r[15].wrapping_add(4);
    interwork_to(cpu, target)
}

/// CLZ Rd, Rm.
pub(super) fn clz(cpu: &mut Cpu, _bus: &mut Bus<'_>, word: u32) -> Result<Flow, Unpredictable> {
    let (rd, rm) = (field(word, 12), field(word, 0));
    if rd == 15 || rm == 15 {
        return unpredictable(&"CLZ with pc as a register");
    }
    cpu.r[rd] = cpu.r[rm].leading_zeros();
    Ok(Flow::Next)
}

/// QADD (OP = 0), QSUB (1), QDADD (2), QDSUB (3): Rd = sat(Rm +/- [sat(2 *)] Rn); Q sticky.
pub(super) fn qarith<const OP: u32>(cpu: &mut Cpu, _bus: &mut Bus<'_>, word: u32) -> Result<Flow, Unpredictable> {
    let (rn, rd, rm) = (field(word, 16), field(word, 12), field(word, 0));
    if rn == 15 || rd == 15 || rm == 15 {
        return unpredictable(&"saturating add/subtract with pc as a register");
    }
    let a = cpu.r[rm] as i32 as i64;
    let mut b = cpu.r[rn] as i32 as i64;
    let mut saturated = false;
    if OP & 2 != 0 {
        let (d, s) = saturate_i32(2 * b);
        b = d as i32 as i64;
        saturated = s;
    }
    let (r, s) = saturate_i32(if OP & 1 != 0 { a - b } else { a + b });
    cpu.r[rd] = r;
    if saturated || s {
        cpu.q = true;
    }
    Ok(Flow::Next)
}

/// BKPT: prefetch abort.
pub(super) fn bkpt(_cpu: &mut Cpu, _bus: &mut Bus<'_>, _word: u32) -> Result<Flow, Unpredictable> {
    Ok(Flow::Exception(ExceptionKind::PrefetchAbort))
}

/// SWI: `SWI 0x123456` is the semihosting trap, every other number the SWI exception.
pub(super) fn swi(_cpu: &mut Cpu, _bus: &mut Bus<'_>, word: u32) -> Result<Flow, Unpredictable> {
    if word & 0x00FF_FFFF == 0x12_3456 {
        Ok(Flow::Semihost)
    } else {
        Ok(Flow::Exception(ExceptionKind::Swi))
    }
}

/// Handler of the miscellaneous space: bits[27:23] = 00010, bit 20 = 0, not bits[7:4] = 1xx1.
pub(super) const fn select_misc(hi: u32, lo: u32) -> Handler {
    let op = (hi >> 1) & 3; // bits[22:21]
    match lo {
        0b0000 => {
            if op & 1 == 0 {
                dp::mrs
            } else {
                dp::msr::<false>
            }
        }
        0b0001 => match op {
            1 => bx,
            3 => clz,
            _ => undefined,
        },
        0b0011 => {
            if op == 1 {
                blx_reg
            } else {
                undefined
            }
        }
        0b0101 => match op {
            0 => qarith::<0>,
            1 => qarith::<1>,
            2 => qarith::<2>,
            _ => qarith::<3>,
        },
        0b0111 => {
            if op == 1 {
                bkpt
            } else {
                undefined
            }
        }
        0b1000 | 0b1010 | 0b1100 | 0b1110 => match op {
            0 => mul::smla_xy,
            1 => mul::smlaw_smulw,
            2 => mul::smlal_xy,
            _ => mul::smul_xy,
        },
        _ => undefined,
    }
}

/// cond = 1111: BLX(imm) and PLD; everything else is undefined on ARMv5TE.
#[inline(never)]
pub(super) fn unconditional(cpu: &mut Cpu, _bus: &mut Bus<'_>, word: u32) -> Result<Flow, Unpredictable> {
    if word & 0x0E00_0000 == 0x0A00_0000 {
        // BLX(imm): lr = pc + 4; target = pc + 8 + (sext(imm24) << 2) + (H << 1), Thumb.
        let pc = cpu.r[15];
        cpu.r[14] = pc.wrapping_add(4);
        cpu.r[15] = pc.wrapping_add(8).wrapping_add(branch_offset(word)).wrapping_add((word >> 23) & 2);
        cpu.thumb = true;
        return Ok(Flow::Jump);
    }
    // PLD: 1111 01I1 U101 Rn 1111 ...; the register form with bit 4 set is undefined.
    if word & 0x0D70_F000 == 0x0550_F000 && !(word & (1 << 25) != 0 && word & (1 << 4) != 0) {
        return Ok(Flow::Next);
    }
    Ok(Flow::Exception(ExceptionKind::Undefined))
}

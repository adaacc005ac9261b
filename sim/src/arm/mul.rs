//! Multiplies: MUL, MLA, UMULL, UMLAL, SMULL, SMLAL and the ARMv5TE DSP multiplies
//! SMLAxy, SMULxy, SMLAWy, SMULWy, SMLALxy.

use super::{field, half, unpredictable, Handler};
use crate::cpu::{add_with_carry, Cpu};
use crate::machine::{Bus, Flow, Unpredictable};

/// MUL (`A` = false) / MLA: Rd = bits[19:16], Rn = [15:12], Rs = [11:8], Rm = [3:0].
/// With S: N and Z from the result; C and V are unaffected (ARMv5).
pub(super) fn mul<const A: bool, const S: bool>(
    cpu: &mut Cpu,
    _bus: &mut Bus<'_>,
    word: u32,
) -> Result<Flow, Unpredictable> {
    let (rd, rn, rs, rm) = (field(word, 16), field(word, 12), field(word, 8), field(word, 0));
    if rd == 15 || rs == 15 || rm == 15 || (A && rn == 15) {
        return unpredictable(&"multiply with pc as an operand or destination");
    }
    let mut r = cpu.r[rm].wrapping_mul(cpu.r[rs]);
    if A {
        r = r.wrapping_add(cpu.r[rn]);
    }
    cpu.r[rd] = r;
    if S {
        cpu.set_nz(r);
    }
    Ok(Flow::Next)
}

/// UMULL/UMLAL/SMULL/SMLAL: RdHi = bits[19:16], RdLo = [15:12], Rs = [11:8], Rm = [3:0].
/// With S: N and Z from the 64-bit result; C and V unaffected (ARMv5).
pub(super) fn mull<const SIGNED: bool, const A: bool, const S: bool>(
    cpu: &mut Cpu,
    _bus: &mut Bus<'_>,
    word: u32,
) -> Result<Flow, Unpredictable> {
    let (hi, lo, rs, rm) = (field(word, 16), field(word, 12), field(word, 8), field(word, 0));
    if hi == 15 || lo == 15 || rs == 15 || rm == 15 {
        return unpredictable(&"long multiply with pc as an operand or destination");
    }
    if hi == lo {
        return unpredictable(&"long multiply with RdHi = RdLo");
    }
    let (a, b) = (cpu.r[rm], cpu.r[rs]);
    let product = if SIGNED { (a as i32 as i64).wrapping_mul(b as i32 as i64) as u64 } else { a as u64 * b as u64 };
    let result = if A { product.wrapping_add(((cpu.r[hi] as u64) << 32) | cpu.r[lo] as u64) } else { product };
    cpu.r[lo] = result as u32;
    cpu.r[hi] = (result >> 32) as u32;
    if S {
        cpu.n = result >> 63 != 0;
        cpu.z = result == 0;
    }
    Ok(Flow::Next)
}

pub(super) const fn select_mul(hi: u32) -> Handler {
    match hi & 3 {
        0 => mul::<false, false>,
        1 => mul::<false, true>,
        2 => mul::<true, false>,
        _ => mul::<true, true>,
    }
}

pub(super) const fn select_mull(hi: u32) -> Handler {
    match hi & 7 {
        0 => mull::<false, false, false>,
        1 => mull::<false, false, true>,
        2 => mull::<false, true, false>,
        3 => mull::<false, true, true>,
        4 => mull::<true, false, false>,
        5 => mull::<true, false, true>,
        6 => mull::<true, true, false>,
        _ => mull::<true, true, true>,
    }
}

/// Operands of the halfword multiplies: (Rm.x, Rs.y) with x = bit 5, y = bit 6.
#[inline(always)]
fn halves(cpu: &Cpu, word: u32) -> (i32, i32) {
    (half(cpu.r[field(word, 0)], word & (1 << 5) != 0), half(cpu.r[field(word, 8)], word & (1 << 6) != 0))
}

#[inline(always)]
fn any_pc(regs: &[usize]) -> bool {
    regs.contains(&15)
}

/// SMLAxy Rd, Rm, Rs, Rn: Rd = bits[19:16], Rn = [15:12]. Q is set on signed overflow of the
/// accumulation (the result wraps).
pub(super) fn smla_xy(cpu: &mut Cpu, _bus: &mut Bus<'_>, word: u32) -> Result<Flow, Unpredictable> {
    let (rd, rn) = (field(word, 16), field(word, 12));
    if any_pc(&[rd, rn, field(word, 8), field(word, 0)]) {
        return unpredictable(&"SMLA<x><y> with pc as an operand or destination");
    }
    let (a, b) = halves(cpu, word);
    let (r, _, v) = add_with_carry(a.wrapping_mul(b) as u32, cpu.r[rn], false);
    cpu.r[rd] = r;
    if v {
        cpu.q = true;
    }
    Ok(Flow::Next)
}

/// SMULxy Rd, Rm, Rs: Rd = bits[19:16].
pub(super) fn smul_xy(cpu: &mut Cpu, _bus: &mut Bus<'_>, word: u32) -> Result<Flow, Unpredictable> {
    let rd = field(word, 16);
    if any_pc(&[rd, field(word, 8), field(word, 0)]) {
        return unpredictable(&"SMUL<x><y> with pc as an operand or destination");
    }
    let (a, b) = halves(cpu, word);
    cpu.r[rd] = a.wrapping_mul(b) as u32;
    Ok(Flow::Next)
}

/// SMLAWy (bit 5 = 0) / SMULWy (bit 5 = 1): Rd = (Rm * Rs.y)[47:16] (+ Rn, Q on overflow).
pub(super) fn smlaw_smulw(cpu: &mut Cpu, _bus: &mut Bus<'_>, word: u32) -> Result<Flow, Unpredictable> {
    let (rd, rn, rs, rm) = (field(word, 16), field(word, 12), field(word, 8), field(word, 0));
    let accumulate = word & (1 << 5) == 0;
    if any_pc(&[rd, rs, rm]) || (accumulate && rn == 15) {
        return unpredictable(&"SMLAW<y>/SMULW<y> with pc as an operand or destination");
    }
    let y = half(cpu.r[rs], word & (1 << 6) != 0) as i64;
    let product = (((cpu.r[rm] as i32 as i64) * y) >> 16) as u32;
    if accumulate {
        let (r, _, v) = add_with_carry(product, cpu.r[rn], false);
        cpu.r[rd] = r;
        if v {
            cpu.q = true;
        }
    } else {
        cpu.r[rd] = product;
    }
    Ok(Flow::Next)
}

/// SMLALxy RdLo, RdHi, Rm, Rs: RdHi = bits[19:16], RdLo = [15:12]; 64-bit accumulate, no flags.
pub(super) fn smlal_xy(cpu: &mut Cpu, _bus: &mut Bus<'_>, word: u32) -> Result<Flow, Unpredictable> {
    let (hi, lo) = (field(word, 16), field(word, 12));
    if any_pc(&[hi, lo, field(word, 8), field(word, 0)]) {
        return unpredictable(&"SMLAL<x><y> with pc as an operand or destination");
    }
    if hi == lo {
        return unpredictable(&"SMLAL<x><y> with RdHi = RdLo");
    }
    let (a, b) = halves(cpu, word);
    let acc = ((cpu.r[hi] as u64) << 32) | cpu.r[lo] as u64;
    let r = acc.wrapping_add(a.wrapping_mul(b) as i64 as u64);
    cpu.r[lo] = r as u32;
    cpu.r[hi] = (r >> 32) as u32;
    Ok(Flow::Next)
}

//! Coprocessor register transfers: CP15 (ID, cache type, control) and the XScale CP0
//! accumulator (MIA, MIAPH, MIAxy through MCR space; MAR/MRA through MCRR/MRRC).

use super::{field, half, read_reg, unpredictable, CP15_CACHE_TYPE, CP15_MAIN_ID};
use crate::cpu::{Cpu, ExceptionKind};
use crate::machine::{Bus, CoprocOp, Flow, Unpredictable};

const ACC_MASK: u64 = (1 << 40) - 1;

const UNDEFINED: Result<Flow, Unpredictable> = Ok(Flow::Exception(ExceptionKind::Undefined));

/// MCR/MRC (bits[27:24] = 1110, bit 4 = 1).
pub(super) fn mcr_mrc(cpu: &mut Cpu, bus: &mut Bus<'_>, word: u32) -> Result<Flow, Unpredictable> {
    let load = word & (1 << 20) != 0;
    let opc1 = (word >> 21) & 7;
    let crn = (word >> 16) & 15;
    let rd = field(word, 12);
    let opc2 = (word >> 5) & 7;
    match (word >> 8) & 15 {
        15 => {
            if !cpu.mode().is_privileged() {
                return UNDEFINED;
            }
            if load {
                let v = match (opc1, crn, opc2) {
                    (0, 0, 1) => CP15_CACHE_TYPE,
                    (0, 0, _) => CP15_MAIN_ID,
                    (0, 1, 0) => cpu.cp15_control,
                    _ => 0,
                };
                if rd == 15 {
                    cpu.set_nzcv(v);
                } else {
                    cpu.r[rd] = v;
                }
            } else if (opc1, crn, opc2) == (0, 1, 0) {
                cpu.cp15_control = read_reg(cpu, rd);
            }
            Ok(Flow::Next)
        }
        0 if !load && opc1 == 1 => mia(cpu, word),
        // The system platform's coprocessors (CP14 clock counter, the p7 trace-start
        // marker: docs/citcat.md); without a platform they do not exist.
        cp @ (7 | 14) => {
            let op = CoprocOp { opc1, crn, crm: word & 15, opc2 };
            let value = if load { 0 } else { read_reg(cpu, rd) };
            let Some(v) = bus.coproc(cp, load, op, value) else { return UNDEFINED };
            if load {
                if rd == 15 {
                    cpu.set_nzcv(v);
                } else {
                    cpu.r[rd] = v;
                }
            }
            Ok(Flow::Next)
        }
        _ => UNDEFINED,
    }
}

/// MIA (opcode_3 = 0000), MIAPH (1000), MIAxy (11xy): acc0 += products, 40-bit wrap.
/// opcode_3 = bits[19:16], Rs = [15:12], acc = [7:5], Rm = [3:0].
fn mia(cpu: &mut Cpu, word: u32) -> Result<Flow, Unpredictable> {
    let (rs, rm) = (field(word, 12), field(word, 0));
    if rs == 15 || rm == 15 {
        return unpredictable(&"MIA with pc as an operand");
    }
    if (word >> 5) & 7 != 0 {
        return unpredictable(&"MIA on an accumulator other than acc0");
    }
    let (a, b) = (cpu.r[rm], cpu.r[rs]);
    let add = match (word >> 16) & 15 {
        0b0000 => (a as i32 as i64).wrapping_mul(b as i32 as i64),
        0b1000 => (half(a, true) as i64 * half(b, true) as i64) + (half(a, false) as i64 * half(b, false) as i64),
        op @ 0b1100..=0b1111 => half(a, op & 2 != 0) as i64 * half(b, op & 1 != 0) as i64,
        _ => return unpredictable(&"MIA with an undefined opcode_3"),
    };
    cpu.acc0 = cpu.acc0.wrapping_add(add as u64) & ACC_MASK;
    Ok(Flow::Next)
}

/// LDC/STC (bits[27:25] = 110, not MCRR/MRRC): on CP0/CP1 the iWMMXt WLDR/WSTR. CP1 moves
/// a word (N = 0) or doubleword (N = 1) with the offset in words, CP0 a byte or halfword
/// with the offset in bytes; loads zero-extend into wRd. P = 0 is post-indexed with W = 1
/// and unindexed with W = 0 (then U must be 1). Every other coprocessor is undefined.
pub(super) fn ldc_stc(cpu: &mut Cpu, bus: &mut Bus<'_>, word: u32) -> Result<Flow, Unpredictable> {
    let cp = (word >> 8) & 15;
    if cp > 1 {
        return UNDEFINED;
    }
    let (pre, up, wide, writeback, load) =
        (word & (1 << 24) != 0, word & (1 << 23) != 0, word & (1 << 22) != 0, word & (1 << 21) != 0, word & (1 << 20) != 0);
    if !pre && !writeback && !up {
        return UNDEFINED;
    }
    let rn = field(word, 16);
    if rn == 15 && writeback {
        return unpredictable(&"iWMMXt load/store writing back to the pc");
    }
    let wrd = field(word, 12);
    let offset = (word & 0xFF) << if cp == 1 { 2 } else { 0 };
    let base = read_reg(cpu, rn);
    let indexed = if up { base.wrapping_add(offset) } else { base.wrapping_sub(offset) };
    let addr = if pre { indexed } else { base };
    let size = match (cp, wide) {
        (0, false) => 1,
        (0, true) => 2,
        (_, false) => 4,
        (_, true) => 8,
    };
    if load {
        cpu.wr[wrd] = match size {
            1 => mem_try!(bus.read8(addr)) as u64,
            2 => mem_try!(bus.read16(addr)) as u64,
            4 => mem_try!(bus.read32(addr)) as u64,
            _ => {
                let lo = mem_try!(bus.read32(addr));
                let hi = mem_try!(bus.read32(addr.wrapping_add(4)));
                (hi as u64) << 32 | lo as u64
            }
        };
    } else {
        let v = cpu.wr[wrd];
        match size {
            1 => mem_try!(bus.write8(addr, v as u8)),
            2 => mem_try!(bus.write16(addr, v as u16)),
            4 => mem_try!(bus.write32(addr, v as u32)),
            _ => {
                mem_try!(bus.write32(addr, v as u32));
                mem_try!(bus.write32(addr.wrapping_add(4), (v >> 32) as u32));
            }
        }
    }
    if writeback {
        cpu.r[rn] = indexed;
    }
    Ok(Flow::Next)
}

/// MCRR/MRRC (bits[27:21] = 1100010): only MAR/MRA (p0, opcode 0, acc0) exist.
pub(super) fn mcrr_mrrc(cpu: &mut Cpu, _bus: &mut Bus<'_>, word: u32) -> Result<Flow, Unpredictable> {
    if (word >> 8) & 15 != 0 || (word >> 4) & 15 != 0 {
        return UNDEFINED;
    }
    let (hi, lo) = (field(word, 16), field(word, 12));
    if hi == 15 || lo == 15 {
        return unpredictable(&"MAR/MRA with pc as a register");
    }
    if word & 15 != 0 {
        return unpredictable(&"MAR/MRA on an accumulator other than acc0");
    }
    if word & (1 << 20) == 0 {
        // MAR acc0, RdLo, RdHi
        cpu.acc0 = ((cpu.r[hi] as u64 & 0xFF) << 32) | cpu.r[lo] as u64;
    } else {
        // MRA RdLo, RdHi, acc0
        if hi == lo {
            return unpredictable(&"MRA with RdHi = RdLo");
        }
        cpu.r[lo] = cpu.acc0 as u32;
        cpu.r[hi] = ((cpu.acc0 >> 32) as u8) as i8 as i32 as u32;
    }
    Ok(Flow::Next)
}

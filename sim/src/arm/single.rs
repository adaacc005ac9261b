//! Single data transfers: LDR/STR/LDRB/STRB (and the T forms), the extra load/stores
//! LDRH/STRH/LDRSB/LDRSH/LDRD/STRD, and SWP/SWPB.

use super::{field, interwork_to, read_reg, unpredictable, Handler};
use crate::cpu::{shift_imm, Cpu, ExceptionKind, ShiftType};
use crate::machine::{Bus, Flow, Unpredictable};

const P: u32 = 1 << 24;
const U: u32 = 1 << 23;
const W: u32 = 1 << 21;

/// Word load with the ARMv5 unaligned rule: the aligned word rotated right by 8 * addr[1:0].
#[inline(always)]
fn load_word_rotated(bus: &mut Bus<'_>, addr: u32) -> Result<u32, crate::memory::MemFault> {
    let v = bus.read32(addr & !3)?;
    Ok(v.rotate_right(8 * (addr & 3)))
}

/// Address computation shared by the single and extra transfers:
/// (access address, address written back).
#[inline(always)]
fn addresses(word: u32, base: u32, offset: u32) -> (u32, u32) {
    let offset_addr = if word & U != 0 { base.wrapping_add(offset) } else { base.wrapping_sub(offset) };
    let addr = if word & P != 0 { offset_addr } else { base };
    (addr, offset_addr)
}

/// LDR/STR/LDRB/STRB: `L` load, `B` byte, `REG` scaled register offset (else imm12).
/// P = 0 forms always write back (W = 1 there means the T variants: user-mode access, which
/// is the same memory in this model).
pub(super) fn single<const L: bool, const B: bool, const REG: bool>(
    cpu: &mut Cpu,
    bus: &mut Bus<'_>,
    word: u32,
) -> Result<Flow, Unpredictable> {
    let (rn, rd) = (field(word, 16), field(word, 12));
    let offset = if REG {
        let rm = read_reg(cpu, field(word, 0));
        shift_imm(rm, ShiftType::from_bits(word >> 5), (word >> 7) & 31, cpu.c).0
    } else {
        word & 0xFFF
    };
    let (addr, wb_addr) = addresses(word, read_reg(cpu, rn), offset);
    let writeback = word & P == 0 || word & W != 0;
    if writeback && rn == 15 {
        return unpredictable(&"load/store with base writeback and Rn = pc");
    }
    if L {
        if writeback && rn == rd {
            return unpredictable(&"load with base writeback and Rn = Rd");
        }
        if rd == 15 && (B || word & (P | W) == W) {
            return unpredictable(&"LDRB/LDRT/LDRBT into pc");
        }
        let v = if B { mem_try!(bus.read8(addr)) as u32 } else { mem_try!(load_word_rotated(bus, addr)) };
        if writeback {
            cpu.r[rn] = wb_addr;
        }
        if rd == 15 {
            return interwork_to(cpu, v);
        }
        cpu.r[rd] = v;
    } else {
        let v = read_reg(cpu, rd);
        if B {
            mem_try!(bus.write8(addr, v as u8));
        } else {
            mem_try!(bus.write32(addr & !3, v));
        }
        if writeback {
            cpu.r[rn] = wb_addr;
        }
    }
    Ok(Flow::Next)
}

/// Writeback modes of [`single_offset`]: none (P = 1, W = 0), pre-indexed (P = 1, W = 1),
/// post-indexed (P = 0, W = 0).
pub(super) const WB_NONE: u32 = 0;
pub(super) const WB_PRE: u32 = 1;
pub(super) const WB_POST: u32 = 2;

/// LDR/STR/LDRB/STRB with an offset (`REG`: a scaled register Rm != pc, else imm12), Rd != pc
/// and writeback mode `WB` (with writeback: Rn != pc, Rn != Rd): [`single`] without the
/// checks those words cannot fail (picked by `super::decode_word`). The common case (nothing
/// logged, one allocated page) is done here without a call; the others go on to
/// [`single_offset_full`] as a tail call, so that the handler saves no registers.
pub(super) fn single_offset<const L: bool, const B: bool, const REG: bool, const WB: u32, const UP: bool>(
    cpu: &mut Cpu,
    bus: &mut Bus<'_>,
    word: u32,
) -> Result<Flow, Unpredictable> {
    let (rn, rd, offset_addr, addr) = single_offset_addresses::<REG, WB, UP>(cpu, word);
    let done = if L {
        let v = if B {
            bus.peek::<1>(addr).map(|b| b[0] as u32)
        } else {
            bus.peek::<4>(addr & !3).map(|b| u32::from_le_bytes(b).rotate_right(8 * (addr & 3)))
        };
        match v {
            Some(v) => {
                cpu.r[rd] = v;
                true
            }
            None => false,
        }
    } else {
        let v = cpu.r[rd];
        if B {
            bus.poke(addr, [v as u8])
        } else {
            bus.poke(addr & !3, v.to_le_bytes())
        }
    };
    if !done {
        return single_offset_full::<L, B, REG, WB, UP>(cpu, bus, word);
    }
    if WB != WB_NONE {
        cpu.r[rn & 15] = offset_addr;
    }
    Ok(Flow::Next)
}

/// (Rn, Rd, offset address, access address) of a [`single_offset`] word; `UP` is its U bit.
#[inline(always)]
fn single_offset_addresses<const REG: bool, const WB: u32, const UP: bool>(cpu: &Cpu, word: u32) -> (usize, usize, u32, u32) {
    debug_assert_eq!(word & U != 0, UP);
    let (rn, rd) = (field(word, 16), field(word, 12) & 15);
    let base = if WB == WB_NONE { read_reg(cpu, rn) } else { cpu.r[rn & 15] };
    let offset = if REG {
        shift_imm(cpu.r[field(word, 0)], ShiftType::from_bits(word >> 5), (word >> 7) & 31, cpu.c).0
    } else {
        word & 0xFFF
    };
    let offset_addr = if UP { base.wrapping_add(offset) } else { base.wrapping_sub(offset) };
    let addr = if WB == WB_POST { base } else { offset_addr };
    (rn, rd, offset_addr, addr)
}

/// [`single_offset`] through the bus accessors (logging, faults, devices, code-page reports).
#[inline(never)]
fn single_offset_full<const L: bool, const B: bool, const REG: bool, const WB: u32, const UP: bool>(
    cpu: &mut Cpu,
    bus: &mut Bus<'_>,
    word: u32,
) -> Result<Flow, Unpredictable> {
    let (rn, rd, offset_addr, addr) = single_offset_addresses::<REG, WB, UP>(cpu, word);
    if L {
        let v = if B { mem_try!(bus.read8(addr)) as u32 } else { mem_try!(load_word_rotated(bus, addr)) };
        cpu.r[rd] = v;
    } else {
        let v = cpu.r[rd];
        if B {
            mem_try!(bus.write8(addr, v as u8));
        } else {
            mem_try!(bus.write32(addr & !3, v));
        }
    }
    if WB != WB_NONE {
        cpu.r[rn & 15] = offset_addr;
    }
    Ok(Flow::Next)
}

const fn select_single_offset_wb<const L: bool, const B: bool, const REG: bool>(wb: u32, up: bool) -> Handler {
    match (wb, up) {
        (WB_NONE, false) => single_offset::<L, B, REG, WB_NONE, false>,
        (WB_PRE, false) => single_offset::<L, B, REG, WB_PRE, false>,
        (_, false) => single_offset::<L, B, REG, WB_POST, false>,
        (WB_NONE, true) => single_offset::<L, B, REG, WB_NONE, true>,
        (WB_PRE, true) => single_offset::<L, B, REG, WB_PRE, true>,
        (_, true) => single_offset::<L, B, REG, WB_POST, true>,
    }
}

/// The [`single_offset`] handler for bits[27:20] = `hi` (`reg`: register offset) and
/// writeback mode `wb` (the U bit, `hi` bit 3, is a parameter of the handler too: the
/// offset's sign is not tested at run time).
pub(super) const fn select_single_offset(hi: u32, reg: bool, wb: u32) -> Handler {
    let up = hi & 8 != 0;
    match (hi & 1 != 0, hi & 4 != 0, reg) {
        (false, false, false) => select_single_offset_wb::<false, false, false>(wb, up),
        (false, true, false) => select_single_offset_wb::<false, true, false>(wb, up),
        (true, false, false) => select_single_offset_wb::<true, false, false>(wb, up),
        (true, true, false) => select_single_offset_wb::<true, true, false>(wb, up),
        (false, false, true) => select_single_offset_wb::<false, false, true>(wb, up),
        (false, true, true) => select_single_offset_wb::<false, true, true>(wb, up),
        (true, false, true) => select_single_offset_wb::<true, false, true>(wb, up),
        (true, true, true) => select_single_offset_wb::<true, true, true>(wb, up),
    }
}

/// Handler for bits[27:25] = 010 (`reg` = false) or 011 with bit 4 = 0 (`reg` = true).
pub(super) const fn select_single(hi: u32, reg: bool) -> Handler {
    let l = hi & 1 != 0;
    let b = hi & 4 != 0;
    match (l, b, reg) {
        (false, false, false) => single::<false, false, false>,
        (false, false, true) => single::<false, false, true>,
        (false, true, false) => single::<false, true, false>,
        (false, true, true) => single::<false, true, true>,
        (true, false, false) => single::<true, false, false>,
        (true, false, true) => single::<true, false, true>,
        (true, true, false) => single::<true, true, false>,
        (true, true, true) => single::<true, true, true>,
    }
}

const STRH: u32 = 0;
const LDRH: u32 = 1;
const LDRSB: u32 = 2;
const LDRSH: u32 = 3;
const LDRD: u32 = 4;
const STRD: u32 = 5;

/// Extra load/store `KIND`; `IMM`: offset = bits[11:8]:[3:0], else Rm.
pub(super) fn extra<const KIND: u32, const IMM: bool>(
    cpu: &mut Cpu,
    bus: &mut Bus<'_>,
    word: u32,
) -> Result<Flow, Unpredictable> {
    let (rn, rd, rm) = (field(word, 16), field(word, 12), field(word, 0));
    let offset = if IMM { ((word >> 4) & 0xF0) | (word & 0xF) } else { read_reg(cpu, rm) };
    let (addr, wb_addr) = addresses(word, read_reg(cpu, rn), offset);
    let writeback = word & P == 0 || word & W != 0;
    if word & (P | W) == W {
        return unpredictable(&"post-indexed halfword/doubleword transfer with W = 1");
    }
    if writeback && rn == 15 {
        return unpredictable(&"load/store with base writeback and Rn = pc");
    }
    match KIND {
        STRH => {
            let v = read_reg(cpu, rd);
            mem_try!(bus.write16(addr & !1, v as u16));
        }
        LDRH | LDRSB | LDRSH => {
            if rd == 15 {
                return unpredictable(&"halfword or signed byte load into pc");
            }
            if writeback && rn == rd {
                return unpredictable(&"load with base writeback and Rn = Rd");
            }
            let v = match KIND {
                LDRH => mem_try!(bus.read16(addr & !1)) as u32,
                LDRSB => mem_try!(bus.read8(addr)) as i8 as i32 as u32,
                _ => mem_try!(bus.read16(addr & !1)) as i16 as i32 as u32,
            };
            if writeback {
                cpu.r[rn] = wb_addr;
            }
            cpu.r[rd] = v;
            return Ok(Flow::Next);
        }
        _ => {
            if rd & 1 != 0 {
                return unpredictable(&"LDRD/STRD with an odd Rd");
            }
            if rd == 14 {
                return unpredictable(&"LDRD/STRD with Rd = lr (second register pc)");
            }
            let a = addr & !3;
            if KIND == LDRD {
                if writeback && (rn == rd || rn == rd + 1) {
                    return unpredictable(&"LDRD with writeback and Rn = Rd or Rd+1");
                }
                if !IMM && (rm == rd || rm == rd + 1) {
                    return unpredictable(&"LDRD with Rm = Rd or Rd+1");
                }
                let lo = mem_try!(bus.read32(a));
                let hi = mem_try!(bus.read32(a.wrapping_add(4)));
                if writeback {
                    cpu.r[rn] = wb_addr;
                }
                cpu.r[rd] = lo;
                cpu.r[rd + 1] = hi;
                return Ok(Flow::Next);
            }
            let (lo, hi) = (cpu.r[rd], cpu.r[rd + 1]);
            mem_try!(bus.write32(a, lo));
            mem_try!(bus.write32(a.wrapping_add(4), hi));
        }
    }
    if writeback {
        cpu.r[rn] = wb_addr;
    }
    Ok(Flow::Next)
}

/// STRH/LDRH/LDRSB/LDRSH (`KIND`) with an offset (`IMM`: bits[11:8]:[3:0], else Rm != pc),
/// P = 1, W = 0 (no writeback) and Rd != pc: [`extra`] without the checks those words cannot
/// fail (picked by `super::decode_word`).
pub(super) fn extra_offset<const KIND: u32, const IMM: bool>(
    cpu: &mut Cpu,
    bus: &mut Bus<'_>,
    word: u32,
) -> Result<Flow, Unpredictable> {
    let (rd, addr) = extra_offset_address::<IMM>(cpu, word);
    // The common case (nothing logged, one allocated page) without a call; the others go on
    // to `extra_offset_full` as a tail call, so that the handler saves no registers.
    let v = match KIND {
        STRH => bus.poke(addr & !1, (cpu.r[rd & 15] as u16).to_le_bytes()).then_some(0),
        LDRH => bus.peek::<2>(addr & !1).map(|b| u16::from_le_bytes(b) as u32),
        LDRSB => bus.peek::<1>(addr).map(|b| b[0] as i8 as i32 as u32),
        _ => bus.peek::<2>(addr & !1).map(|b| u16::from_le_bytes(b) as i16 as i32 as u32),
    };
    match v {
        None => extra_offset_full::<KIND, IMM>(cpu, bus, word),
        Some(v) => {
            if KIND != STRH {
                cpu.r[rd & 15] = v;
            }
            Ok(Flow::Next)
        }
    }
}

/// (Rd, access address) of an [`extra_offset`] word.
#[inline(always)]
fn extra_offset_address<const IMM: bool>(cpu: &Cpu, word: u32) -> (usize, u32) {
    let rd = field(word, 12);
    let offset = if IMM { ((word >> 4) & 0xF0) | (word & 0xF) } else { cpu.r[field(word, 0)] };
    let base = read_reg(cpu, field(word, 16));
    let addr = if word & U != 0 { base.wrapping_add(offset) } else { base.wrapping_sub(offset) };
    (rd, addr)
}

/// [`extra_offset`] through the bus accessors (logging, faults, devices, code-page reports).
#[inline(never)]
fn extra_offset_full<const KIND: u32, const IMM: bool>(
    cpu: &mut Cpu,
    bus: &mut Bus<'_>,
    word: u32,
) -> Result<Flow, Unpredictable> {
    let (rd, addr) = extra_offset_address::<IMM>(cpu, word);
    let v = match KIND {
        STRH => {
            mem_try!(bus.write16(addr & !1, cpu.r[rd & 15] as u16));
            return Ok(Flow::Next);
        }
        LDRH => mem_try!(bus.read16(addr & !1)) as u32,
        LDRSB => mem_try!(bus.read8(addr)) as i8 as i32 as u32,
        _ => mem_try!(bus.read16(addr & !1)) as i16 as i32 as u32,
    };
    cpu.r[rd & 15] = v;
    Ok(Flow::Next)
}

/// The [`extra_offset`] handler for bits[27:20] = `hi`, bits[7:4] = `lo`, if the kind is one
/// it handles (not LDRD/STRD).
pub(super) const fn select_extra_offset(hi: u32, lo: u32) -> Option<Handler> {
    let imm = hi & 4 != 0;
    Some(match (hi & 1, (lo >> 1) & 3, imm) {
        (0, 1, false) => extra_offset::<STRH, false>,
        (0, 1, true) => extra_offset::<STRH, true>,
        (1, 1, false) => extra_offset::<LDRH, false>,
        (1, 1, true) => extra_offset::<LDRH, true>,
        (1, 2, false) => extra_offset::<LDRSB, false>,
        (1, 2, true) => extra_offset::<LDRSB, true>,
        (1, 3, false) => extra_offset::<LDRSH, false>,
        (1, 3, true) => extra_offset::<LDRSH, true>,
        _ => return None,
    })
}

/// Handler of the extra load/store space (bits[27:25] = 000, bit 7 = bit 4 = 1, bits[6:5] != 00).
pub(super) const fn select_extra(hi: u32, lo: u32) -> Handler {
    let imm = hi & 4 != 0;
    let kind = match (hi & 1, (lo >> 1) & 3) {
        (0, 1) => STRH,
        (1, 1) => LDRH,
        (1, 2) => LDRSB,
        (1, 3) => LDRSH,
        (0, 2) => LDRD,
        _ => STRD,
    };
    match (kind, imm) {
        (STRH, false) => extra::<STRH, false>,
        (STRH, true) => extra::<STRH, true>,
        (LDRH, false) => extra::<LDRH, false>,
        (LDRH, true) => extra::<LDRH, true>,
        (LDRSB, false) => extra::<LDRSB, false>,
        (LDRSB, true) => extra::<LDRSB, true>,
        (LDRSH, false) => extra::<LDRSH, false>,
        (LDRSH, true) => extra::<LDRSH, true>,
        (LDRD, false) => extra::<LDRD, false>,
        (LDRD, true) => extra::<LDRD, true>,
        (_, false) => extra::<STRD, false>,
        (_, true) => extra::<STRD, true>,
    }
}

/// SWP/SWPB Rd, Rm, [Rn]: read, then write Rm; Rd gets the value read.
pub(super) fn swp<const B: bool>(cpu: &mut Cpu, bus: &mut Bus<'_>, word: u32) -> Result<Flow, Unpredictable> {
    let (rn, rd, rm) = (field(word, 16), field(word, 12), field(word, 0));
    if rn == 15 || rd == 15 || rm == 15 {
        return unpredictable(&"SWP with pc as a register");
    }
    if rn == rd || rn == rm {
        return unpredictable(&"SWP with Rn = Rd or Rn = Rm");
    }
    let addr = cpu.r[rn];
    let store = cpu.r[rm];
    let v = if B {
        let v = mem_try!(bus.read8(addr));
        mem_try!(bus.write8(addr, store as u8));
        v as u32
    } else {
        let v = mem_try!(load_word_rotated(bus, addr));
        mem_try!(bus.write32(addr & !3, store));
        v
    };
    cpu.r[rd] = v;
    Ok(Flow::Next)
}

pub(super) const fn select_swp(hi: u32) -> Handler {
    if hi & 4 != 0 {
        swp::<true>
    } else {
        swp::<false>
    }
}

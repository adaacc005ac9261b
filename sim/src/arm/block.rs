//! Block data transfers LDM/STM: the four addressing modes, writeback, pc in the list and
//! the `^` forms (user-bank registers, exception return).

use super::dp::exception_return;
use super::{field, interwork_to, unpredictable};
use crate::cpu::{list_registers, Cpu, ExceptionKind};
use crate::machine::{Bus, Flow, Unpredictable};

const P: u32 = 1 << 24;
const U: u32 = 1 << 23;
const S: u32 = 1 << 22;
const W: u32 = 1 << 21;

/// (lowest address accessed, written-back base). Bits[1:0] of the base are ignored for the
/// accesses.
#[inline(always)]
fn block_addresses(word: u32, base: u32, count: u32) -> (u32, u32) {
    let size = count * 4;
    let (start, new_base) = if word & U != 0 {
        let start = if word & P != 0 { base.wrapping_add(4) } else { base };
        (start, base.wrapping_add(size))
    } else {
        let start = if word & P != 0 { base.wrapping_sub(size) } else { base.wrapping_sub(size).wrapping_add(4) };
        (start, base.wrapping_sub(size))
    };
    (start & !3, new_base)
}

/// LDM (all addressing modes, with or without `^`).
pub(super) fn ldm(cpu: &mut Cpu, bus: &mut Bus<'_>, word: u32) -> Result<Flow, Unpredictable> {
    let rn = field(word, 16);
    let list = word & 0xFFFF;
    if list == 0 {
        return unpredictable(&"LDM with an empty register list");
    }
    if rn == 15 {
        return unpredictable(&"LDM with Rn = pc");
    }
    let writeback = word & W != 0;
    let pc_in_list = list & 0x8000 != 0;
    let user_bank = word & S != 0 && !pc_in_list;
    if user_bank {
        if writeback {
            return unpredictable(&"LDM^ (user registers) with writeback");
        }
        if !cpu.mode().has_spsr() {
            return unpredictable(&"LDM^ in User or System mode");
        }
    }
    let (start, new_base) = block_addresses(word, cpu.r[rn], list.count_ones());
    // Load everything first: a fault leaves the registers untouched.
    let mut values = [0u32; 16];
    if let Some(span) = bus.fast_read_span(start, 4 * list.count_ones() as usize) {
        // One page, nothing logged: the same words without a check per word.
        for (w, i) in span.chunks_exact(4).zip(list_registers(list)) {
            values[i & 15] = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
        }
    } else {
        let mut addr = start;
        for i in list_registers(list) {
            values[i & 15] = mem_try!(bus.read32(addr));
            addr = addr.wrapping_add(4);
        }
    }
    if writeback {
        // Rn in the list: the loaded value (written below) wins.
        cpu.r[rn] = new_base;
    }
    for i in list_registers(list & 0x7FFF) {
        if user_bank {
            cpu.set_user_reg(i, values[i & 15]);
        } else {
            cpu.r[i & 15] = values[i & 15];
        }
    }
    if pc_in_list {
        if word & S != 0 {
            return exception_return(cpu, values[15]);
        }
        return interwork_to(cpu, values[15]);
    }
    Ok(Flow::Next)
}

/// STM (all addressing modes, with or without `^`). pc is stored as its address + 8.
pub(super) fn stm(cpu: &mut Cpu, bus: &mut Bus<'_>, word: u32) -> Result<Flow, Unpredictable> {
    let rn = field(word, 16);
    let list = word & 0xFFFF;
    if list == 0 {
        return unpredictable(&"STM with an empty register list");
    }
    if rn == 15 {
        return unpredictable(&"STM with Rn = pc");
    }
    let writeback = word & W != 0;
    let user_bank = word & S != 0;
    if user_bank {
        if writeback {
            return unpredictable(&"STM^ (user registers) with writeback");
        }
        if !cpu.mode().has_spsr() {
            return unpredictable(&"STM^ in User or System mode");
        }
    }
    if writeback && list & (1 << rn) != 0 && list & ((1 << rn) - 1) != 0 {
        return unpredictable(&"STM with writeback and Rn in the list but not the lowest register");
    }
    let (start, new_base) = block_addresses(word, cpu.r[rn], list.count_ones());
    let stored = |cpu: &Cpu, i: usize| {
        if i == 15 {
            cpu.r[15].wrapping_add(8)
        } else if user_bank {
            cpu.user_reg(i)
        } else {
            cpu.r[i & 15]
        }
    };
    if let Some(span) = bus.fast_write_span(start, 4 * list.count_ones() as usize) {
        // One plain page, nothing logged or saved: the same stores without a check per word.
        for (w, i) in span.chunks_exact_mut(4).zip(list_registers(list)) {
            w.copy_from_slice(&stored(cpu, i).to_le_bytes());
        }
    } else {
        let mut addr = start;
        for i in list_registers(list) {
            mem_try!(bus.write32(addr, stored(cpu, i)));
            addr = addr.wrapping_add(4);
        }
    }
    if writeback {
        cpu.r[rn] = new_base;
    }
    Ok(Flow::Next)
}

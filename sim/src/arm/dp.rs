//! Data processing (all 16 opcodes, three operand forms) and the status register transfers
//! MRS/MSR.

use super::{field, read_reg, unpredictable, Handler};
use crate::cpu::{add_with_carry, shift_imm, shift_reg, Cpu, Mode, ShiftType, CPSR_T};
use crate::machine::{Bus, Flow, Unpredictable};

/// Operand 2 forms.
pub(super) const F_IMM: u32 = 0;
pub(super) const F_SHIFT_IMM: u32 = 1;
pub(super) const F_SHIFT_REG: u32 = 2;
/// "Register shifted by immediate" with bits[11:5] = 0 (`LSL #0`: Rm unshifted, carry kept).
/// Not a table entry: [`super::decode_word`] picks it for those words.
pub(super) const F_REG: u32 = 3;
/// Added to a form (other than [`F_SHIFT_REG`]): no register field of the word is 15, so no
/// operand reads pc and Rd is not pc. Picked by [`super::decode_word`] too.
pub(super) const F_PLAIN: u32 = 4;

/// Added to [`F_IMM`] | [`F_PLAIN`]: the rotation (bits[11:8]) is 0, so the operand is
/// bits[7:0] and the shifter carry is C. Picked by [`super::decode_word`].
pub(super) const F_IMM8: u32 = 8;

/// Added to [`F_SHIFT_IMM`] | [`F_PLAIN`]: `(type + 1) << F_TYPE_SHIFT` for a known shift type
/// (bits[6:5]) and a nonzero amount (no `#32` / RRX cases). Picked by [`super::decode_word`].
pub(super) const F_TYPE_SHIFT: u32 = 3;

/// A register operand of a form: with [`F_PLAIN`] the index is known not to be pc.
#[inline(always)]
fn operand<const F: u32>(cpu: &Cpu, n: usize) -> u32 {
    if F & F_PLAIN != 0 {
        cpu.r[n & 15]
    } else {
        read_reg(cpu, n)
    }
}

const AND: u32 = 0x0;
const EOR: u32 = 0x1;
const SUB: u32 = 0x2;
const RSB: u32 = 0x3;
const ADD: u32 = 0x4;
const ADC: u32 = 0x5;
const SBC: u32 = 0x6;
const RSC: u32 = 0x7;
const TST: u32 = 0x8;
const TEQ: u32 = 0x9;
const CMP: u32 = 0xA;
const CMN: u32 = 0xB;
const ORR: u32 = 0xC;
const MOV: u32 = 0xD;
const BIC: u32 = 0xE;

/// Register operand of a register-shifted-by-register instruction: pc reads as + 12.
#[inline(always)]
fn read_reg12(cpu: &Cpu, n: usize) -> u32 {
    if n == 15 {
        cpu.r[15].wrapping_add(12)
    } else {
        cpu.r[n & 15]
    }
}

/// Rotated 8-bit immediate and its shifter carry-out.
#[inline(always)]
pub(super) fn rotated_imm(word: u32, carry_in: bool) -> (u32, bool) {
    let rot = (word >> 7) & 0x1E;
    let v = (word & 0xFF).rotate_right(rot);
    (v, if rot == 0 { carry_in } else { v >> 31 != 0 })
}

/// Data processing instruction with opcode `OP`, S bit `S` and operand form `F`.
pub(super) fn dp<const OP: u32, const S: bool, const F: u32>(
    cpu: &mut Cpu,
    _bus: &mut Bus<'_>,
    word: u32,
) -> Result<Flow, Unpredictable> {
    let rn_idx = field(word, 16);
    let (op2, shifter_carry, rn) = match F & 3 {
        F_IMM => {
            let (v, c) = if F & F_IMM8 != 0 { (word & 0xFF, cpu.c) } else { rotated_imm(word, cpu.c) };
            (v, c, operand::<F>(cpu, rn_idx))
        }
        F_REG => (operand::<F>(cpu, field(word, 0)), cpu.c, operand::<F>(cpu, rn_idx)),
        F_SHIFT_IMM => {
            let rm = operand::<F>(cpu, field(word, 0));
            let n = (word >> 7) & 31;
            // A known type has n in 1..=31: the cases of `shift_imm` for a nonzero amount.
            let (v, c) = match F >> F_TYPE_SHIFT {
                0 => shift_imm(rm, ShiftType::from_bits(word >> 5), n, cpu.c),
                1 => (rm << n, (rm >> (32 - n)) & 1 == 1),
                2 => (rm >> n, (rm >> (n - 1)) & 1 == 1),
                3 => (((rm as i32) >> n) as u32, (rm >> (n - 1)) & 1 == 1),
                _ => (rm.rotate_right(n), (rm >> (n - 1)) & 1 == 1),
            };
            (v, c, operand::<F>(cpu, rn_idx))
        }
        _ => {
            let amount = read_reg12(cpu, field(word, 8)) & 0xFF;
            let rm = read_reg12(cpu, field(word, 0));
            let (v, c) = shift_reg(rm, ShiftType::from_bits(word >> 5), amount, cpu.c);
            (v, c, read_reg12(cpu, rn_idx))
        }
    };
    let c_in = cpu.c;
    // (result, carry, overflow, arithmetic?)
    let (result, carry, overflow, arith) = match OP {
        AND | TST => (rn & op2, shifter_carry, false, false),
        EOR | TEQ => (rn ^ op2, shifter_carry, false, false),
        ORR => (rn | op2, shifter_carry, false, false),
        MOV => (op2, shifter_carry, false, false),
        BIC => (rn & !op2, shifter_carry, false, false),
        SUB | CMP => with_flags(add_with_carry(rn, !op2, true)),
        RSB => with_flags(add_with_carry(op2, !rn, true)),
        ADD | CMN => with_flags(add_with_carry(rn, op2, false)),
        ADC => with_flags(add_with_carry(rn, op2, c_in)),
        SBC => with_flags(add_with_carry(rn, !op2, c_in)),
        RSC => with_flags(add_with_carry(op2, !rn, c_in)),
        _ => (!op2, shifter_carry, false, false), // MVN
    };
    let writes_rd = !matches!(OP, TST | TEQ | CMP | CMN);
    if writes_rd {
        let rd = field(word, 12);
        if F & F_PLAIN == 0 && rd == 15 {
            return write_pc::<S>(cpu, result);
        }
        cpu.r[rd] = result;
    }
    if S {
        cpu.set_nz(result);
        cpu.c = carry;
        if arith {
            cpu.v = overflow;
        }
    }
    Ok(Flow::Next)
}

#[inline(always)]
fn with_flags((r, c, v): (u32, bool, bool)) -> (u32, bool, bool, bool) {
    (r, c, v, true)
}

/// Data processing with Rd = pc: a plain branch (ARMv5: no interworking, bits[1:0] cleared)
/// or, with S, an exception return.
#[inline(never)]
fn write_pc<const S: bool>(cpu: &mut Cpu, target: u32) -> Result<Flow, Unpredictable> {
    if S {
        return exception_return(cpu, target);
    }
    cpu.r[15] = target & !3;
    Ok(Flow::Jump)
}

/// CPSR := SPSR, then pc := `target` (aligned for the restored state).
pub(super) fn exception_return(cpu: &mut Cpu, target: u32) -> Result<Flow, Unpredictable> {
    let Some(spsr) = cpu.spsr() else {
        return unpredictable(&"exception return (CPSR := SPSR) in User or System mode");
    };
    if Mode::from_bits(spsr).is_none() {
        return unpredictable(&"exception return to an SPSR with an invalid mode field");
    }
    cpu.set_cpsr(spsr);
    cpu.r[15] = if cpu.thumb { target & !1 } else { target & !3 };
    Ok(Flow::Jump)
}

const fn select_op<const S: bool, const F: u32>(opcode: u32) -> Handler {
    match opcode {
        0x0 => dp::<0x0, S, F>,
        0x1 => dp::<0x1, S, F>,
        0x2 => dp::<0x2, S, F>,
        0x3 => dp::<0x3, S, F>,
        0x4 => dp::<0x4, S, F>,
        0x5 => dp::<0x5, S, F>,
        0x6 => dp::<0x6, S, F>,
        0x7 => dp::<0x7, S, F>,
        0x8 => dp::<0x8, S, F>,
        0x9 => dp::<0x9, S, F>,
        0xA => dp::<0xA, S, F>,
        0xB => dp::<0xB, S, F>,
        0xC => dp::<0xC, S, F>,
        0xD => dp::<0xD, S, F>,
        0xE => dp::<0xE, S, F>,
        _ => dp::<0xF, S, F>,
    }
}

/// The data-processing handler for an opcode, S bit and operand form.
pub(super) const fn select_dp(opcode: u32, s: bool, form: u32) -> Handler {
    match (s, form) {
        (false, F_IMM) => select_op::<false, F_IMM>(opcode),
        (false, F_SHIFT_IMM) => select_op::<false, F_SHIFT_IMM>(opcode),
        (false, F_REG) => select_op::<false, F_REG>(opcode),
        (false, F_SHIFT_REG) => select_op::<false, F_SHIFT_REG>(opcode),
        (false, 4) => select_op::<false, 4>(opcode),
        (false, 12) => select_op::<false, 12>(opcode),
        (false, 5) => select_op::<false, 5>(opcode),
        (false, 13) => select_op::<false, 13>(opcode),
        (false, 21) => select_op::<false, 21>(opcode),
        (false, 29) => select_op::<false, 29>(opcode),
        (false, 37) => select_op::<false, 37>(opcode),
        (false, _) => select_op::<false, 7>(opcode),
        (true, F_IMM) => select_op::<true, F_IMM>(opcode),
        (true, F_SHIFT_IMM) => select_op::<true, F_SHIFT_IMM>(opcode),
        (true, F_REG) => select_op::<true, F_REG>(opcode),
        (true, F_SHIFT_REG) => select_op::<true, F_SHIFT_REG>(opcode),
        (true, 4) => select_op::<true, 4>(opcode),
        (true, 12) => select_op::<true, 12>(opcode),
        (true, 5) => select_op::<true, 5>(opcode),
        (true, 13) => select_op::<true, 13>(opcode),
        (true, 21) => select_op::<true, 21>(opcode),
        (true, 29) => select_op::<true, 29>(opcode),
        (true, 37) => select_op::<true, 37>(opcode),
        (true, _) => select_op::<true, 7>(opcode),
    }
}

/// MRS Rd, CPSR / SPSR.
pub(super) fn mrs(cpu: &mut Cpu, _bus: &mut Bus<'_>, word: u32) -> Result<Flow, Unpredictable> {
    let rd = field(word, 12);
    if rd == 15 {
        return unpredictable(&"MRS with Rd = pc");
    }
    let v = if word & (1 << 22) != 0 {
        match cpu.spsr() {
            Some(v) => v,
            None => return unpredictable(&"MRS of the SPSR in User or System mode"),
        }
    } else {
        cpu.cpsr()
    };
    cpu.r[rd] = v;
    Ok(Flow::Next)
}

/// MSR CPSR/SPSR_<fields>, #imm (`IMM`) or Rm.
pub(super) fn msr<const IMM: bool>(cpu: &mut Cpu, _bus: &mut Bus<'_>, word: u32) -> Result<Flow, Unpredictable> {
    let operand = if IMM {
        rotated_imm(word, false).0
    } else {
        let rm = field(word, 0);
        if rm == 15 {
            return unpredictable(&"MSR with Rm = pc");
        }
        cpu.r[rm]
    };
    // Field mask bits[19:16] = f s x c, one byte each.
    let mut mask = 0u32;
    for i in 0..4 {
        if word & (1 << (16 + i)) != 0 {
            mask |= 0xFF << (8 * i);
        }
    }
    if word & (1 << 22) != 0 {
        let Some(old) = cpu.spsr() else {
            return unpredictable(&"MSR to the SPSR in User or System mode");
        };
        cpu.set_spsr((old & !mask) | (operand & mask));
        return Ok(Flow::Next);
    }
    if !cpu.mode().is_privileged() {
        mask &= 0xFF00_0000;
    }
    let old = cpu.cpsr();
    // The T bit is never changed by MSR (ARM ARM: UNPREDICTABLE; we ignore the write).
    let new = (((old & !mask) | (operand & mask)) & !CPSR_T) | (old & CPSR_T);
    if Mode::from_bits(new).is_none() {
        return unpredictable(&"MSR sets an invalid processor mode");
    }
    cpu.set_cpsr(new);
    Ok(Flow::Next)
}

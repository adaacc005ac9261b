//! Thumb-state instruction execution: the ARMv5T Thumb instruction set (Thumb-1, formats
//! 1-19 of the classic encoding table) as implemented by XScale (PXA270).
//!
//! # Dispatch
//!
//! Every encoding is decided by `hw[15:6]`, so [`execute`] indexes a 1024-entry table of
//! handlers built at compile time (`hw >> 6`). Handlers are monomorphised on the fields
//! that lie in those ten bits (ALU opcode, shift type, load/store opcode, condition).
//!
//! # Semantics and the choices this model makes
//!
//! * `r[15]` is the address of the current instruction; the PC operand of the hi-register
//!   operations (ADD/CMP/MOV/BX with Rm or Rn = 15) reads `r[15] + 4`; `LDR Rd, [PC, #imm]`
//!   and `ADD Rd, PC, #imm` use `(r[15] + 4) & !3`.
//! * PC writes happen only where the classifier (`streamtrace_isa::classify_thumb`) sees a
//!   control-flow instruction: Bcc, B, the BL/BLX suffix, BX/BLX register, hi-register
//!   MOV/ADD with Rd = 15 and POP with pc.
//! * Hi-register `MOV pc, Rm` / `ADD pc, Rm` write `result & !1` and stay in Thumb state
//!   (on ARMv5 they do not interwork). BX, BLX (register) and POP {pc} interwork: bit 0 of
//!   the value selects Thumb state. An ARM-state target with bit 1 set is UNPREDICTABLE and
//!   reported as [`SimError::Unpredictable`].
//! * BL/BLX are two instructions, as the ARMv5T architecture defines them and as the
//!   classifier's table counts them: the prefix (`11110`) sets
//!   `lr = pc + 4 + (sext(imm11) << 12)`; the BL suffix (`11111`) branches to
//!   `lr + (imm11 << 1)` in Thumb state, the BLX suffix (`11101`) to
//!   `(lr + (imm11 << 1)) & !3` in ARM state; both set `lr = (pc + 2) | 1`. A BLX suffix
//!   with bit 0 set is undefined. (QEMU 7.2 `-cpu pxa270` retires a prefix and the suffix
//!   after it as *one* instruction, unless the prefix is the last halfword of a 4 KiB page;
//!   a comparison of PC streams with QEMU has to merge the two.)
//! * Flags: logical ALU operations, MOV #imm8, the shifts and MUL set N and Z only (shifts
//!   also C, from the shifter; `LSL #0` leaves C alone). MUL leaves C and V unchanged
//!   (ARMv5 behaviour; ARMv4 left C UNPREDICTABLE). Register shifts use `Rs[7:0]`.
//! * Unaligned accesses (no alignment checking, CP15 c1.A = 0): LDR (every form) loads the
//!   word at `addr & !3` rotated right by `8 * (addr & 3)`, as ARM-state LDR does on ARMv5;
//!   STR writes the word at `addr & !3`; LDRH/LDRSH/STRH use `addr & !1` (ARMv5 leaves
//!   unaligned halfword accesses UNPREDICTABLE; the model ignores bit 0). PUSH, POP,
//!   LDMIA and STMIA ignore address bits \[1:0\] for every transfer (the written-back SP or Rn
//!   keeps them).
//! * Data aborts: a faulting access returns `Flow::Exception(DataAbort)` (the [`Bus`]
//!   remembers the address). Loads commit no register — not even the base of LDMIA/POP —
//!   unless every load succeeded. Stores commit the base (SP of PUSH, Rn of STMIA) only if
//!   every store succeeded; the words stored before the fault stay in memory (ARMv5 allows
//!   this for an aborted STM).
//!
//! ## UNPREDICTABLE / IMPLEMENTATION DEFINED cases
//!
//! | Case | This model |
//! | --- | --- |
//! | PUSH/POP/LDMIA/STMIA with an empty list | `SimError::Unpredictable` |
//! | `BLX pc` | `SimError::Unpredictable` |
//! | interworking branch (BX, BLX reg, POP {pc}) to an ARM address with bit 1 set (includes `BX pc` at an address ≡ 2 mod 4) | `SimError::Unpredictable` |
//! | hi-register ADD/CMP/MOV with two low registers (H1 = H2 = 0) | executed as the obvious operation (their ARMv6 meaning): ADD/MOV without flags, CMP with flags |
//! | BX/BLX with hw\[2:0\] != 0 (SBZ) | the bits are ignored |
//! | `LDMIA Rn!, {..Rn..}` | Rn gets the loaded value, no writeback (ARMv5 ARM ARM rule) |
//! | `STMIA Rn!, {..Rn..}` with Rn not the lowest register | the original Rn is stored (as for lowest); Rn is written back |
//! | `MUL Rd, Rm` with Rd = Rm (UNPREDICTABLE before ARMv6) | `Rd := Rd * Rd` |
//! | unaligned LDRH/LDRSH/STRH | address bit 0 ignored |
//! | `CMP`/`ADD`/`MOV` hi with Rn/Rm = pc | pc reads as `r[15] + 4` |
//!
//! Undefined encodings (`Flow::Exception(Undefined)`): `1101 1110 xxxxxxxx` (the
//! permanently undefined space), the BLX suffix with bit 0 set, and the `1011` miscellaneous
//! space apart from ADD/SUB SP, PUSH, POP and BKPT (ARMv6+ SXTH/REV/CPS/SETEND and the
//! Thumb-2 CBZ/IT/hints are not ARMv5T). BKPT gives `Flow::Exception(PrefetchAbort)`;
//! `SWI 0xAB` gives `Flow::Semihost`, every other SWI `Flow::Exception(Swi)`.

use crate::cpu::{add_with_carry, list_registers, shift_imm, shift_reg, Cpu, ExceptionKind, ShiftType};
use crate::machine::{Bus, Flow, SimError, Unpredictable};

/// A handler gets the halfword zero-extended, so that the predecoded-instruction cache holds
/// one handler type for both states.
pub(crate) type Handler = fn(&mut Cpu, &mut Bus<'_>, u32) -> Result<Flow, Unpredictable>;

/// Handler table indexed by `hw >> 6`.
pub(crate) static TABLE: [Handler; 1024] = build_table();

/// Execute one Thumb instruction `hw` located at `cpu.r[15]`.
// Always inlined into the machine's (timed and untimed) steps.
#[inline(always)]
pub fn execute(cpu: &mut Cpu, bus: &mut Bus<'_>, hw: u16) -> Result<Flow, SimError> {
    let pc = cpu.r[15];
    TABLE[(hw >> 6) as usize](cpu, bus, hw as u32).map_err(|e| e.at(pc, hw as u32))
}

/// The handler for `hw` that the predecoded-instruction cache keeps: the table's, or for a
/// hi-register ADD/CMP/MOV without pc operands one that skips the pc checks (same behaviour).
pub(crate) fn decode(hw: u16) -> Handler {
    let hw32 = hw as u32;
    if hw32 >> 10 == 0b010001 {
        let (rd, rm) = hi_regs(hw32);
        if rd != 15 && rm != 15 {
            match (hw32 >> 8) & 3 {
                0 => return hi_add_plain,
                1 => return hi_cmp_plain,
                2 => return hi_mov_plain,
                _ => {}
            }
        }
    }
    TABLE[(hw >> 6) as usize]
}

const DATA_ABORT: Flow = Flow::Exception(ExceptionKind::DataAbort);

/// Unwrap a bus access, turning a fault into a data abort of the instruction.
macro_rules! mem {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(_) => return Ok(DATA_ABORT),
        }
    };
}

/// Pick the monomorphised handler `$f::<N>` for a runtime value in `0..=15` (const context).
macro_rules! pick {
    ($f:ident, $v:expr) => {
        match $v {
            0 => $f::<0> as Handler,
            1 => $f::<1>,
            2 => $f::<2>,
            3 => $f::<3>,
            4 => $f::<4>,
            5 => $f::<5>,
            6 => $f::<6>,
            7 => $f::<7>,
            8 => $f::<8>,
            9 => $f::<9>,
            10 => $f::<10>,
            11 => $f::<11>,
            12 => $f::<12>,
            13 => $f::<13>,
            14 => $f::<14>,
            _ => $f::<15>,
        }
    };
}

const fn build_table() -> [Handler; 1024] {
    let mut t: [Handler; 1024] = [undefined as Handler; 1024];
    let mut i = 0;
    while i < 1024 {
        t[i] = select(i as u32);
        i += 1;
    }
    t
}

/// The format 1 handler for shift type `TY` and amount field `n` (0..=31).
const fn pick_shift<const TY: u32>(n: u32) -> Handler {
    match n {
        0 => shift_by_imm::<TY, 0> as Handler,
        1 => shift_by_imm::<TY, 1>,
        2 => shift_by_imm::<TY, 2>,
        3 => shift_by_imm::<TY, 3>,
        4 => shift_by_imm::<TY, 4>,
        5 => shift_by_imm::<TY, 5>,
        6 => shift_by_imm::<TY, 6>,
        7 => shift_by_imm::<TY, 7>,
        8 => shift_by_imm::<TY, 8>,
        9 => shift_by_imm::<TY, 9>,
        10 => shift_by_imm::<TY, 10>,
        11 => shift_by_imm::<TY, 11>,
        12 => shift_by_imm::<TY, 12>,
        13 => shift_by_imm::<TY, 13>,
        14 => shift_by_imm::<TY, 14>,
        15 => shift_by_imm::<TY, 15>,
        16 => shift_by_imm::<TY, 16>,
        17 => shift_by_imm::<TY, 17>,
        18 => shift_by_imm::<TY, 18>,
        19 => shift_by_imm::<TY, 19>,
        20 => shift_by_imm::<TY, 20>,
        21 => shift_by_imm::<TY, 21>,
        22 => shift_by_imm::<TY, 22>,
        23 => shift_by_imm::<TY, 23>,
        24 => shift_by_imm::<TY, 24>,
        25 => shift_by_imm::<TY, 25>,
        26 => shift_by_imm::<TY, 26>,
        27 => shift_by_imm::<TY, 27>,
        28 => shift_by_imm::<TY, 28>,
        29 => shift_by_imm::<TY, 29>,
        30 => shift_by_imm::<TY, 30>,
        _ => shift_by_imm::<TY, 31>,
    }
}

/// The handler for every halfword whose bits [15:6] are `idx`.
const fn select(idx: u32) -> Handler {
    let hw = idx << 6;
    match hw >> 11 {
        // Format 1: LSL/LSR/ASR Rd, Rm, #imm5.
        // (The amount, hw[10:6], is part of the index: each amount has its handler.)
        0b00000 => pick_shift::<0>(idx & 31),
        0b00001 => pick_shift::<1>(idx & 31),
        0b00010 => pick_shift::<2>(idx & 31),
        // Format 2: ADD/SUB Rd, Rn, Rm / #imm3 (bit 10 = immediate, bit 9 = subtract).
        0b00011 => pick!(add_sub, (hw >> 9) & 3),
        // Format 3: MOV/CMP/ADD/SUB Rd, #imm8.
        0b00100..=0b00111 => pick!(imm8, (hw >> 11) & 3),
        0b01000 => {
            if hw & (1 << 10) == 0 {
                // Format 4: ALU operations.
                pick!(alu, (hw >> 6) & 15)
            } else {
                // Format 5: hi-register operations and BX/BLX.
                match (hw >> 8) & 3 {
                    0 => hi_add,
                    1 => hi_cmp,
                    2 => hi_mov,
                    _ => {
                        if hw & (1 << 7) == 0 {
                            bx
                        } else {
                            blx_reg
                        }
                    }
                }
            }
        }
        // Format 6: LDR Rd, [PC, #imm8 * 4].
        0b01001 => ldr_pc,
        // Formats 7/8: load/store with register offset (opcode = hw[11:9]).
        0b01010 | 0b01011 => pick!(ldst_reg, (hw >> 9) & 7),
        // Format 9: LDR/STR{B} Rd, [Rn, #imm5].
        0b01100 => ldst_imm::<OP_STR, 4>,
        0b01101 => ldst_imm::<OP_LDR, 4>,
        0b01110 => ldst_imm::<OP_STRB, 1>,
        0b01111 => ldst_imm::<OP_LDRB, 1>,
        // Format 10: LDRH/STRH Rd, [Rn, #imm5 * 2].
        0b10000 => ldst_imm::<OP_STRH, 2>,
        0b10001 => ldst_imm::<OP_LDRH, 2>,
        // Format 11: LDR/STR Rd, [SP, #imm8 * 4].
        0b10010 => ldst_sp::<OP_STR>,
        0b10011 => ldst_sp::<OP_LDR>,
        // Format 12: ADD Rd, PC/SP, #imm8 * 4.
        0b10100 => add_pc,
        0b10101 => add_sp,
        // Miscellaneous (hw[11:8]).
        0b10110 | 0b10111 => match (hw >> 8) & 15 {
            0b0000 => adjust_sp,
            0b0100 | 0b0101 => push,
            0b1100 | 0b1101 => pop,
            0b1110 => bkpt,
            _ => undefined,
        },
        // Format 15: STMIA/LDMIA Rn!, {list}.
        0b11000 => stmia,
        0b11001 => ldmia,
        // Format 16/17: Bcc, undefined (1110), SWI (1111).
        0b11010 | 0b11011 => match (hw >> 8) & 15 {
            14 => undefined,
            15 => swi,
            c => pick!(bcc, c),
        },
        // Format 18: B.
        0b11100 => b,
        // Format 19: BLX suffix, BL/BLX prefix, BL suffix.
        0b11101 => blx_suffix,
        0b11110 => bl_prefix,
        _ => bl_suffix,
    }
}

// ---------------------------------------------------------------------------------------
// Helpers

/// Low register number at bit `shift`.
#[inline(always)]
fn lo(hw: u32, shift: u32) -> usize {
    ((hw >> shift) & 7) as usize
}

/// Read a register as an operand of a hi-register instruction (pc reads as pc + 4).
#[inline(always)]
fn read_hi(cpu: &Cpu, r: usize) -> u32 {
    if r == 15 {
        cpu.r[15].wrapping_add(4)
    } else {
        cpu.r[r]
    }
}

#[inline(always)]
fn set_nzcv(cpu: &mut Cpu, (result, c, v): (u32, bool, bool)) -> u32 {
    cpu.set_nz(result);
    cpu.c = c;
    cpu.v = v;
    result
}

#[inline(always)]
fn sub(a: u32, b: u32) -> (u32, bool, bool) {
    add_with_carry(a, !b, true)
}

#[inline(always)]
fn sext(value: u32, bits: u32) -> u32 {
    let s = 32 - bits;
    (((value << s) as i32) >> s) as u32
}

/// Decode an interworking branch target: (pc, thumb), or None if UNPREDICTABLE (ARM
/// target with bit 1 set).
#[inline(always)]
fn interwork_target(target: u32) -> Option<(u32, bool)> {
    if target & 1 == 1 {
        Some((target & !1, true))
    } else if target & 2 == 0 {
        Some((target, false))
    } else {
        None
    }
}

/// ARMv5 word load: the aligned word rotated so that the addressed byte is the LSB.
#[inline(always)]
fn load_word(bus: &mut Bus<'_>, addr: u32) -> Result<u32, crate::memory::MemFault> {
    let w = bus.read32(addr & !3)?;
    Ok(w.rotate_right((addr & 3) * 8))
}

// ---------------------------------------------------------------------------------------
// Data processing

/// Format 1: `LSL/LSR/ASR Rd, Rm, #imm5` (LSR/ASR #0 encode #32), with shift type `TY` and
/// amount field `N` (hw\[10:6\]) constants: `shift_imm` folds to the one case.
fn shift_by_imm<const TY: u32, const N: u32>(cpu: &mut Cpu, _: &mut Bus<'_>, hw: u32) -> Result<Flow, Unpredictable> {
    debug_assert_eq!((hw >> 6) & 31, N);
    let (v, c) = shift_imm(cpu.r[lo(hw, 3)], ShiftType::from_bits(TY), N, cpu.c);
    cpu.r[lo(hw, 0)] = v;
    cpu.c = c;
    cpu.set_nz(v);
    Ok(Flow::Next)
}

/// Format 2: `ADD/SUB Rd, Rn, Rm` (OP 0/1) and `ADD/SUB Rd, Rn, #imm3` (OP 2/3).
fn add_sub<const OP: u32>(cpu: &mut Cpu, _: &mut Bus<'_>, hw: u32) -> Result<Flow, Unpredictable> {
    let field = (hw >> 6) & 7;
    let b = if OP & 2 != 0 { field } else { cpu.r[field as usize] };
    let a = cpu.r[lo(hw, 3)];
    let res = if OP & 1 != 0 { sub(a, b) } else { add_with_carry(a, b, false) };
    cpu.r[lo(hw, 0)] = set_nzcv(cpu, res);
    Ok(Flow::Next)
}

/// Format 3: `MOV/CMP/ADD/SUB Rd, #imm8`.
fn imm8<const OP: u32>(cpu: &mut Cpu, _: &mut Bus<'_>, hw: u32) -> Result<Flow, Unpredictable> {
    let rd = lo(hw, 8);
    let imm = hw & 0xFF;
    match OP {
        0 => {
            cpu.r[rd] = imm;
            cpu.set_nz(imm);
        }
        1 => {
            set_nzcv(cpu, sub(cpu.r[rd], imm));
        }
        2 => cpu.r[rd] = set_nzcv(cpu, add_with_carry(cpu.r[rd], imm, false)),
        _ => cpu.r[rd] = set_nzcv(cpu, sub(cpu.r[rd], imm)),
    }
    Ok(Flow::Next)
}

/// Format 4: the sixteen ALU operations `op Rd, Rm` (Rs for the register shifts).
fn alu<const OP: u32>(cpu: &mut Cpu, _: &mut Bus<'_>, hw: u32) -> Result<Flow, Unpredictable> {
    let rd = lo(hw, 0);
    let a = cpu.r[rd];
    let b = cpu.r[lo(hw, 3)];
    let logical = |cpu: &mut Cpu, r: u32| {
        cpu.set_nz(r);
        r
    };
    let shift = |cpu: &mut Cpu, ty: ShiftType| {
        let (r, c) = shift_reg(a, ty, b & 0xFF, cpu.c);
        cpu.c = c;
        cpu.set_nz(r);
        r
    };
    match OP {
        0x0 => cpu.r[rd] = logical(cpu, a & b),                         // AND
        0x1 => cpu.r[rd] = logical(cpu, a ^ b),                         // EOR
        0x2 => cpu.r[rd] = shift(cpu, ShiftType::Lsl),                  // LSL
        0x3 => cpu.r[rd] = shift(cpu, ShiftType::Lsr),                  // LSR
        0x4 => cpu.r[rd] = shift(cpu, ShiftType::Asr),                  // ASR
        0x5 => cpu.r[rd] = set_nzcv(cpu, add_with_carry(a, b, cpu.c)),  // ADC
        0x6 => cpu.r[rd] = set_nzcv(cpu, add_with_carry(a, !b, cpu.c)), // SBC
        0x7 => cpu.r[rd] = shift(cpu, ShiftType::Ror),                  // ROR
        0x8 => {
            logical(cpu, a & b); // TST
        }
        0x9 => cpu.r[rd] = set_nzcv(cpu, sub(0, b)), // NEG
        0xA => {
            set_nzcv(cpu, sub(a, b)); // CMP
        }
        0xB => {
            set_nzcv(cpu, add_with_carry(a, b, false)); // CMN
        }
        0xC => cpu.r[rd] = logical(cpu, a | b),             // ORR
        0xD => cpu.r[rd] = logical(cpu, b.wrapping_mul(a)), // MUL: N, Z only (ARMv5)
        0xE => cpu.r[rd] = logical(cpu, a & !b),            // BIC
        _ => cpu.r[rd] = logical(cpu, !b),                  // MVN
    }
    Ok(Flow::Next)
}

/// Format 5 register fields: (Rd/Rn with H1, Rm with H2).
#[inline(always)]
fn hi_regs(hw: u32) -> (usize, usize) {
    let hw = hw as usize;
    (((hw >> 4) & 8) | (hw & 7), (hw >> 3) & 15)
}

/// `ADD Rd, Rm` (hi registers, no flags). Rd = pc branches, staying in Thumb state.
fn hi_add(cpu: &mut Cpu, _: &mut Bus<'_>, hw: u32) -> Result<Flow, Unpredictable> {
    let (rd, rm) = hi_regs(hw);
    let r = read_hi(cpu, rd).wrapping_add(read_hi(cpu, rm));
    if rd == 15 {
        cpu.r[15] = r & !1;
        return Ok(Flow::Jump);
    }
    cpu.r[rd] = r;
    Ok(Flow::Next)
}

/// `CMP Rn, Rm` (hi registers).
fn hi_cmp(cpu: &mut Cpu, _: &mut Bus<'_>, hw: u32) -> Result<Flow, Unpredictable> {
    let (rn, rm) = hi_regs(hw);
    set_nzcv(cpu, sub(read_hi(cpu, rn), read_hi(cpu, rm)));
    Ok(Flow::Next)
}

/// `MOV Rd, Rm` (hi registers, no flags). Rd = pc branches, staying in Thumb state.
fn hi_mov(cpu: &mut Cpu, _: &mut Bus<'_>, hw: u32) -> Result<Flow, Unpredictable> {
    let (rd, rm) = hi_regs(hw);
    let v = read_hi(cpu, rm);
    if rd == 15 {
        cpu.r[15] = v & !1;
        return Ok(Flow::Jump);
    }
    cpu.r[rd] = v;
    Ok(Flow::Next)
}

/// [`hi_add`] with neither register pc.
fn hi_add_plain(cpu: &mut Cpu, _: &mut Bus<'_>, hw: u32) -> Result<Flow, Unpredictable> {
    let (rd, rm) = hi_regs(hw);
    cpu.r[rd & 15] = cpu.r[rd & 15].wrapping_add(cpu.r[rm & 15]);
    Ok(Flow::Next)
}

/// [`hi_cmp`] with neither register pc.
fn hi_cmp_plain(cpu: &mut Cpu, _: &mut Bus<'_>, hw: u32) -> Result<Flow, Unpredictable> {
    let (rn, rm) = hi_regs(hw);
    set_nzcv(cpu, sub(cpu.r[rn & 15], cpu.r[rm & 15]));
    Ok(Flow::Next)
}

/// [`hi_mov`] with neither register pc.
fn hi_mov_plain(cpu: &mut Cpu, _: &mut Bus<'_>, hw: u32) -> Result<Flow, Unpredictable> {
    let (rd, rm) = hi_regs(hw);
    cpu.r[rd & 15] = cpu.r[rm & 15];
    Ok(Flow::Next)
}

/// `BX Rm`: interworking branch.
fn bx(cpu: &mut Cpu, _: &mut Bus<'_>, hw: u32) -> Result<Flow, Unpredictable> {
    let (_, rm) = hi_regs(hw);
    let Some((pc, thumb)) = interwork_target(read_hi(cpu, rm)) else {
        return Err(Unpredictable::new("BX to an ARM-state address with bit 1 set"));
    };
    cpu.r[15] = pc;
    cpu.thumb = thumb;
    Ok(Flow::Jump)
}

/// `BLX Rm`: interworking call, lr = next instruction | 1.
fn blx_reg(cpu: &mut Cpu, _: &mut Bus<'_>, hw: u32) -> Result<Flow, Unpredictable> {
    let (_, rm) = hi_regs(hw);
    if rm == 15 {
        return Err(Unpredictable::new("BLX pc"));
    }
    let Some((pc, thumb)) = interwork_target(cpu.r[rm]) else {
        return Err(Unpredictable::new("BLX to an ARM-state address with bit 1 set"));
    };
    cpu.r[14] = cpu.r[15].wrapping_add(2) | 1;
    cpu.r[15] = pc;
    cpu.thumb = thumb;
    Ok(Flow::Jump)
}

/// Format 12: `ADD Rd, PC, #imm8 * 4` (PC word-aligned).
fn add_pc(cpu: &mut Cpu, _: &mut Bus<'_>, hw: u32) -> Result<Flow, Unpredictable> {
    cpu.r[lo(hw, 8)] = (cpu.r[15].wrapping_add(4) & !3).wrapping_add((hw & 0xFF) << 2);
    Ok(Flow::Next)
}

/// Format 12: `ADD Rd, SP, #imm8 * 4`.
fn add_sp(cpu: &mut Cpu, _: &mut Bus<'_>, hw: u32) -> Result<Flow, Unpredictable> {
    cpu.r[lo(hw, 8)] = cpu.r[13].wrapping_add((hw & 0xFF) << 2);
    Ok(Flow::Next)
}

/// Format 13: `ADD SP, #imm7 * 4` / `SUB SP, #imm7 * 4` (bit 7).
fn adjust_sp(cpu: &mut Cpu, _: &mut Bus<'_>, hw: u32) -> Result<Flow, Unpredictable> {
    let off = (hw & 0x7F) << 2;
    cpu.r[13] = if hw & 0x80 != 0 { cpu.r[13].wrapping_sub(off) } else { cpu.r[13].wrapping_add(off) };
    Ok(Flow::Next)
}

// ---------------------------------------------------------------------------------------
// Loads and stores

const OP_STR: u32 = 0;
const OP_STRH: u32 = 1;
const OP_STRB: u32 = 2;
const OP_LDRSB: u32 = 3;
const OP_LDR: u32 = 4;
const OP_LDRH: u32 = 5;
const OP_LDRB: u32 = 6;
const OP_LDRSH: u32 = 7;

/// One single-register transfer with the format 7/8 opcode `OP` (see the `OP_*` constants).
/// The common case (nothing logged, one allocated page) is done here without a call; the
/// others go on to [`transfer_full`] as a tail call, so that the handlers save no registers.
#[inline(always)]
fn transfer<const OP: u32>(cpu: &mut Cpu, bus: &mut Bus<'_>, rd: usize, addr: u32) -> Result<Flow, Unpredictable> {
    let loaded = |cpu: &mut Cpu, v: Option<u32>| match v {
        Some(v) => {
            cpu.r[rd] = v;
            true
        }
        None => false,
    };
    let done = match OP {
        OP_STR => bus.poke(addr & !3, cpu.r[rd].to_le_bytes()),
        OP_STRH => bus.poke(addr & !1, (cpu.r[rd] as u16).to_le_bytes()),
        OP_STRB => bus.poke(addr, [cpu.r[rd] as u8]),
        OP_LDRSB => loaded(cpu, bus.peek::<1>(addr).map(|b| b[0] as i8 as u32)),
        OP_LDR => loaded(cpu, bus.peek::<4>(addr & !3).map(|b| u32::from_le_bytes(b).rotate_right((addr & 3) * 8))),
        OP_LDRH => loaded(cpu, bus.peek::<2>(addr & !1).map(|b| u16::from_le_bytes(b) as u32)),
        OP_LDRB => loaded(cpu, bus.peek::<1>(addr).map(|b| b[0] as u32)),
        _ => loaded(cpu, bus.peek::<2>(addr & !1).map(|b| u16::from_le_bytes(b) as i16 as u32)),
    };
    if done {
        return Ok(Flow::Next);
    }
    transfer_full::<OP>(cpu, bus, rd, addr)
}

/// [`transfer`] through the bus accessors (logging, faults, devices, code-page reports).
#[inline(never)]
fn transfer_full<const OP: u32>(cpu: &mut Cpu, bus: &mut Bus<'_>, rd: usize, addr: u32) -> Result<Flow, Unpredictable> {
    match OP {
        OP_STR => mem!(bus.write32(addr & !3, cpu.r[rd])),
        OP_STRH => mem!(bus.write16(addr & !1, cpu.r[rd] as u16)),
        OP_STRB => mem!(bus.write8(addr, cpu.r[rd] as u8)),
        OP_LDRSB => cpu.r[rd] = mem!(bus.read8(addr)) as i8 as u32,
        OP_LDR => cpu.r[rd] = mem!(load_word(bus, addr)),
        OP_LDRH => cpu.r[rd] = mem!(bus.read16(addr & !1)) as u32,
        OP_LDRB => cpu.r[rd] = mem!(bus.read8(addr)) as u32,
        OP_LDRSH => cpu.r[rd] = mem!(bus.read16(addr & !1)) as i16 as u32,
        _ => unreachable!("format 7/8 opcodes are 3 bits"),
    }
    Ok(Flow::Next)
}

/// Formats 7/8: `op Rd, [Rn, Rm]`.
fn ldst_reg<const OP: u32>(cpu: &mut Cpu, bus: &mut Bus<'_>, hw: u32) -> Result<Flow, Unpredictable> {
    let addr = cpu.r[lo(hw, 3)].wrapping_add(cpu.r[lo(hw, 6)]);
    transfer::<OP>(cpu, bus, lo(hw, 0), addr)
}

/// Formats 9/10: `op Rd, [Rn, #imm5 * SCALE]`.
fn ldst_imm<const OP: u32, const SCALE: u32>(cpu: &mut Cpu, bus: &mut Bus<'_>, hw: u32) -> Result<Flow, Unpredictable> {
    let addr = cpu.r[lo(hw, 3)].wrapping_add(((hw >> 6) & 31) * SCALE);
    transfer::<OP>(cpu, bus, lo(hw, 0), addr)
}

/// Format 11: `LDR/STR Rd, [SP, #imm8 * 4]`.
fn ldst_sp<const OP: u32>(cpu: &mut Cpu, bus: &mut Bus<'_>, hw: u32) -> Result<Flow, Unpredictable> {
    let addr = cpu.r[13].wrapping_add((hw & 0xFF) << 2);
    transfer::<OP>(cpu, bus, lo(hw, 8), addr)
}

/// Format 6: `LDR Rd, [PC, #imm8 * 4]`.
fn ldr_pc(cpu: &mut Cpu, bus: &mut Bus<'_>, hw: u32) -> Result<Flow, Unpredictable> {
    let addr = (cpu.r[15].wrapping_add(4) & !3).wrapping_add((hw & 0xFF) << 2);
    // (Word-aligned: the plain read is the rotated one of `transfer`.)
    transfer::<OP_LDR>(cpu, bus, lo(hw, 8), addr)
}

/// Format 14: `PUSH {list[, lr]}` (full descending: lowest register at the lowest address).
fn push(cpu: &mut Cpu, bus: &mut Bus<'_>, hw: u32) -> Result<Flow, Unpredictable> {
    let list = hw & 0xFF;
    let with_lr = hw & 0x100 != 0;
    let n = list.count_ones() + with_lr as u32;
    if n == 0 {
        return Err(Unpredictable::new("PUSH with an empty register list"));
    }
    let start = cpu.r[13].wrapping_sub(4 * n);
    if start & 3 == 0 {
        if let Some(span) = bus.fast_write_span(start, 4 * n as usize) {
            // One plain page, nothing logged or saved: the same stores without a check per word.
            let mut bits = list;
            for w in span.chunks_exact_mut(4) {
                if bits == 0 {
                    w.copy_from_slice(&cpu.r[14].to_le_bytes());
                    break;
                }
                let i = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                w.copy_from_slice(&cpu.r[i].to_le_bytes());
            }
            cpu.r[13] = start;
            return Ok(Flow::Next);
        }
    }
    let mut addr = start;
    for i in list_registers(list) {
        mem!(bus.write32(addr & !3, cpu.r[i]));
        addr = addr.wrapping_add(4);
    }
    if with_lr {
        mem!(bus.write32(addr & !3, cpu.r[14]));
    }
    cpu.r[13] = start;
    Ok(Flow::Next)
}

/// Format 14: `POP {list[, pc]}`; a loaded pc interworks (bit 0 selects Thumb state).
fn pop(cpu: &mut Cpu, bus: &mut Bus<'_>, hw: u32) -> Result<Flow, Unpredictable> {
    let list = hw & 0xFF;
    let with_pc = hw & 0x100 != 0;
    let n = list.count_ones() + with_pc as u32;
    let base = cpu.r[13];
    if n != 0 && base & 3 == 0 {
        if let Some(span) = bus.fast_read_span(base, 4 * n as usize) {
            // One page, nothing logged: no load can fault, so the registers are written as
            // the words are read (pc's word is the last one).
            let word = |k: usize| u32::from_le_bytes([span[k], span[k + 1], span[k + 2], span[k + 3]]);
            let target = if with_pc {
                match interwork_target(word(4 * (n as usize - 1))) {
                    Some(t) => Some(t),
                    None => return Err(Unpredictable::new("POP {pc} of an ARM-state address with bit 1 set")),
                }
            } else {
                None
            };
            for (w, i) in span.chunks_exact(4).zip(list_registers(list)) {
                cpu.r[i & 7] = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
            }
            cpu.r[13] = base.wrapping_add(4 * n);
            return Ok(match target {
                Some((pc, thumb)) => {
                    cpu.r[15] = pc;
                    cpu.thumb = thumb;
                    Flow::Jump
                }
                None => Flow::Next,
            });
        }
    }
    pop_general(cpu, bus, hw)
}

/// [`pop`] access by access (a fault commits no register).
#[inline(never)]
fn pop_general(cpu: &mut Cpu, bus: &mut Bus<'_>, hw: u32) -> Result<Flow, Unpredictable> {
    let list = hw & 0xFF;
    let with_pc = hw & 0x100 != 0;
    let n = list.count_ones() + with_pc as u32;
    if n == 0 {
        return Err(Unpredictable::new("POP with an empty register list"));
    }
    let mut vals = [0u32; 8];
    // The word loaded into pc (read when `with_pc`).
    let mut pc_word = 0;
    let mut addr = cpu.r[13];
    for i in list_registers(list) {
        vals[i] = mem!(bus.read32(addr & !3));
        addr = addr.wrapping_add(4);
    }
    if with_pc {
        pc_word = mem!(bus.read32(addr & !3));
    }
    let target = if with_pc {
        match interwork_target(pc_word) {
            Some(t) => Some(t),
            None => return Err(Unpredictable::new("POP {pc} of an ARM-state address with bit 1 set")),
        }
    } else {
        None
    };
    for i in list_registers(list) {
        cpu.r[i] = vals[i];
    }
    cpu.r[13] = cpu.r[13].wrapping_add(4 * n);
    match target {
        Some((pc, thumb)) => {
            cpu.r[15] = pc;
            cpu.thumb = thumb;
            Ok(Flow::Jump)
        }
        None => Ok(Flow::Next),
    }
}

/// Format 15: `STMIA Rn!, {list}`. The original Rn is stored if Rn is in the list.
fn stmia(cpu: &mut Cpu, bus: &mut Bus<'_>, hw: u32) -> Result<Flow, Unpredictable> {
    let rn = lo(hw, 8);
    let list = hw & 0xFF;
    if list == 0 {
        return Err(Unpredictable::new("STMIA with an empty register list"));
    }
    let base = cpu.r[rn];
    let mut addr = base;
    for i in list_registers(list) {
        mem!(bus.write32(addr & !3, cpu.r[i]));
        addr = addr.wrapping_add(4);
    }
    cpu.r[rn] = addr;
    Ok(Flow::Next)
}

/// Format 15: `LDMIA Rn!, {list}`. If Rn is in the list it gets the loaded value and is
/// not written back (ARMv5).
fn ldmia(cpu: &mut Cpu, bus: &mut Bus<'_>, hw: u32) -> Result<Flow, Unpredictable> {
    let rn = lo(hw, 8);
    let list = hw & 0xFF;
    if list == 0 {
        return Err(Unpredictable::new("LDMIA with an empty register list"));
    }
    let mut vals = [0u32; 8];
    let mut addr = cpu.r[rn];
    for i in list_registers(list) {
        vals[i] = mem!(bus.read32(addr & !3));
        addr = addr.wrapping_add(4);
    }
    cpu.r[rn] = addr;
    for i in list_registers(list) {
        cpu.r[i] = vals[i];
    }
    Ok(Flow::Next)
}

// ---------------------------------------------------------------------------------------
// Branches and exceptions

/// Format 16: `B<cond> label` (cond 0..=13).
fn bcc<const COND: u32>(cpu: &mut Cpu, _: &mut Bus<'_>, hw: u32) -> Result<Flow, Unpredictable> {
    if !cpu.cond_passed(COND) {
        return Ok(Flow::Next);
    }
    cpu.r[15] = bcc_target(cpu.r[15], hw);
    Ok(Flow::Jump)
}

/// The target of the conditional branch (format 16) at `pc` (also the functional run
/// loop's, which executes direct branches without their handler).
#[inline(always)]
pub(crate) fn bcc_target(pc: u32, hw: u32) -> u32 {
    pc.wrapping_add(4).wrapping_add(sext(hw & 0xFF, 8) << 1)
}

/// Format 18: `B label`.
fn b(cpu: &mut Cpu, _: &mut Bus<'_>, hw: u32) -> Result<Flow, Unpredictable> {
    cpu.r[15] = b_target(cpu.r[15], hw);
    Ok(Flow::Jump)
}

/// The target of the unconditional branch (format 18) at `pc` (as [`bcc_target`]).
#[inline(always)]
pub(crate) fn b_target(pc: u32, hw: u32) -> u32 {
    pc.wrapping_add(4).wrapping_add(sext(hw & 0x7FF, 11) << 1)
}

/// Format 19, first half: `lr = pc + 4 + (sext(imm11) << 12)`.
fn bl_prefix(cpu: &mut Cpu, _: &mut Bus<'_>, hw: u32) -> Result<Flow, Unpredictable> {
    cpu.r[14] = cpu.r[15].wrapping_add(4).wrapping_add(sext(hw & 0x7FF, 11) << 12);
    Ok(Flow::Next)
}

/// Format 19, BL second half: branch to `lr + (imm11 << 1)` in Thumb state.
fn bl_suffix(cpu: &mut Cpu, _: &mut Bus<'_>, hw: u32) -> Result<Flow, Unpredictable> {
    let target = cpu.r[14].wrapping_add((hw & 0x7FF) << 1);
    cpu.r[14] = cpu.r[15].wrapping_add(2) | 1;
    cpu.r[15] = target & !1;
    Ok(Flow::Jump)
}

/// Format 19, BLX second half: branch to `(lr + (imm11 << 1)) & !3` in ARM state.
fn blx_suffix(cpu: &mut Cpu, _: &mut Bus<'_>, hw: u32) -> Result<Flow, Unpredictable> {
    if hw & 1 != 0 {
        return Ok(Flow::Exception(ExceptionKind::Undefined));
    }
    let target = cpu.r[14].wrapping_add((hw & 0x7FF) << 1);
    cpu.r[14] = cpu.r[15].wrapping_add(2) | 1;
    cpu.r[15] = target & !3;
    cpu.thumb = false;
    Ok(Flow::Jump)
}

/// Format 17: `SWI imm8`; `SWI 0xAB` is the semihosting trap.
fn swi(_: &mut Cpu, _: &mut Bus<'_>, hw: u32) -> Result<Flow, Unpredictable> {
    Ok(if hw & 0xFF == 0xAB { Flow::Semihost } else { Flow::Exception(ExceptionKind::Swi) })
}

/// `BKPT imm8` (ARMv5T): prefetch abort.
fn bkpt(_: &mut Cpu, _: &mut Bus<'_>, _: u32) -> Result<Flow, Unpredictable> {
    Ok(Flow::Exception(ExceptionKind::PrefetchAbort))
}

fn undefined(_: &mut Cpu, _: &mut Bus<'_>, _: u32) -> Result<Flow, Unpredictable> {
    Ok(Flow::Exception(ExceptionKind::Undefined))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::memory::Memory;
    use crate::MemAccess;

    /// Run the table entry for `hw` on a small machine (SP = 0x1000, LR = 0x2001, r0 = 0x3000,
    /// PC = 0x100) and return the flow and the CPU after it.
    fn run(hw: u16) -> (Flow, Cpu) {
        let mut mem = Memory::new();
        mem.map_region(0, 0x1_0000);
        let mut log: Vec<MemAccess> = Vec::new();
        let mut cpu = Cpu::new();
        cpu.thumb = true;
        cpu.r[13] = 0x1000;
        cpu.r[14] = 0x2001;
        cpu.r[0] = 0x3000;
        cpu.r[15] = 0x100;
        mem.write32(0x1000, 0x4001).unwrap();
        let mut bus = Bus::new(&mut mem, &mut log, false);
        let flow = execute(&mut cpu, &mut bus, hw).unwrap();
        (flow, cpu)
    }

    #[test]
    fn table_covers_the_formats() {
        // Spot checks of the decode table at the format boundaries, by behaviour (function
        // pointer identity is not stable across codegen units in optimised builds).
        let exc = |k| Flow::Exception(k);
        assert_eq!(run(0xDE00).0, exc(ExceptionKind::Undefined));
        assert_eq!(run(0xDF00).0, exc(ExceptionKind::Swi));
        assert_eq!(run(0xDFAB).0, Flow::Semihost);
        assert_eq!(run(0xBE00).0, exc(ExceptionKind::PrefetchAbort));
        assert_eq!(run(0xB200).0, exc(ExceptionKind::Undefined));
        // PUSH {lr}
        let (f, c) = run(0xB500);
        assert_eq!((f, c.r[13]), (Flow::Next, 0x0FFC));
        // POP {pc}: loads 0x4001, stays in Thumb
        let (f, c) = run(0xBD00);
        assert_eq!((f, c.r[15], c.r[13], c.thumb), (Flow::Jump, 0x4000, 0x1004, true));
        // SUB SP, #4
        let (f, c) = run(0xB081);
        assert_eq!((f, c.r[13]), (Flow::Next, 0x0FFC));
        // BX LR
        let (f, c) = run(0x4770);
        assert_eq!((f, c.r[15], c.thumb), (Flow::Jump, 0x2000, true));
        // BLX r0: to ARM state, LR = next | 1
        let (f, c) = run(0x4780);
        assert_eq!((f, c.r[15], c.thumb, c.r[14]), (Flow::Jump, 0x3000, false, 0x103));
        // BL prefix with offset 0: LR = PC + 4
        let (f, c) = run(0xF000);
        assert_eq!((f, c.r[14]), (Flow::Next, 0x104));
        // BL suffix with offset 0: to LR, Thumb
        let (f, c) = run(0xF800);
        assert_eq!((f, c.r[15], c.thumb), (Flow::Jump, 0x2000, true));
        // BLX suffix with offset 0: to LR & !3, ARM
        let (f, c) = run(0xE800);
        assert_eq!((f, c.r[15], c.thumb), (Flow::Jump, 0x2000, false));
    }
}

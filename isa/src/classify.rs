//! ARMv5TE control-flow classifier.
//!
//! [`classify_arm`] and [`classify_thumb`] map one instruction encoding to the
//! [`BranchClass`] the trace module sees, plus the target address for direct
//! branches. They are pure functions of the encoding and its address, never
//! panic, never allocate, and are meant to be called once per simulated
//! instruction.
//!
//! # Contract
//!
//! This table is relied upon by the core model and by the decoder; both sides must
//! classify identically, so changes here are format changes.
//!
//! Targets are *interworking* addresses: bit 0 set means the target executes in
//! Thumb state. A target is given for direct branches only; every other class has
//! `target == None`. All address arithmetic wraps modulo 2^32.
//!
//! ## ARM state (`cond` = bits\[31:28\], AL = `1110`)
//!
//! | Encoding | Class | Target |
//! | --- | --- | --- |
//! | B/BL: bits\[27:25\] = `101`, cond != `1111` | `DirectUncond` if cond = AL, else `DirectCond` | `pc + 8 + (sext(imm24) << 2)` (ARM) |
//! | BLX(imm): cond = `1111`, bits\[27:25\] = `101` | `DirectUncond` | `(pc + 8 + (sext(imm24) << 2) + (H << 1)) \| 1`, H = bit 24 (Thumb) |
//! | BX Rm: `word & 0x0FFFFFF0 == 0x012FFF10` | `Return` if Rm = lr, else Indirect | – |
//! | BLX Rm: `word & 0x0FFFFFF0 == 0x012FFF30` | Indirect (also for Rm = lr: that is a call) | – |
//! | Data processing with Rd = pc (see below) | `Return` for `MOV{S} pc, lr` (register form, no shift), else Indirect | – |
//! | LDR (word, not byte) with Rd = pc | `Return` for `LDR pc, [sp], #4` (post-indexed +4, i.e. pop), else Indirect | – |
//! | LDM with pc in the list | `Return` if Rn = sp, else Indirect | – |
//! | anything else with cond = `1111` (PLD, CDP2, MCR2, …) | `None` | – |
//! | anything else (SWI, coprocessor, multiplies, LDRH/LDRD/LDRB into pc, stores, undefined, …) | `None` | – |
//!
//! "Indirect" means `IndirectUncond` when cond = AL and `IndirectCond` otherwise.
//! `Return` is `Return` whatever its condition.
//!
//! A data-processing instruction writes pc when bits\[27:26\] = `00`, Rd (bits\[15:12\])
//! = `1111`, it is not in the multiply / extra load-store space (bit 25 = 0 and
//! bit 7 = 1 and bit 4 = 1), and its opcode (bits\[24:21\]) is not `10xx`: with S = 1
//! those are TST/TEQ/CMP/CMN, which write no register, and with S = 0 they are the
//! miscellaneous space (MRS, MSR, BX, CLZ, QADD, BKPT, SMLAxy, …), of which only BX and
//! BLX(reg) are branches. The immediate form (`MOV pc, #imm`, `ADD pc, r1, #8`) is
//! Indirect. `MOV pc, lr` means opcode `1101`, bit 25 = 0, bits\[11:4\] = 0, Rm = 14,
//! either value of S.
//!
//! The single-register load must have bits\[27:26\] = `01`, L (bit 20) = 1, B (bit 22) = 0;
//! the register-offset form with bit 4 set (bits\[27:25\] = `011`) is the undefined space
//! and gives `None`. The pop form is exactly `word & 0x0FFFFFFF == 0x049DF004`
//! (P = 0, U = 1, W = 0, immediate offset 4, Rn = 13, Rd = 15).
//!
//! LDM is bits\[27:25\] = `100`, L (bit 20) = 1, bit 15 = 1, for every addressing mode
//! and with or without the `^` (S) bit.
//!
//! ## Thumb state (ARMv5T Thumb, no Thumb-2)
//!
//! | Encoding | Class | Target |
//! | --- | --- | --- |
//! | Bcc: hw\[15:12\] = `1101`, cond = hw\[11:8\] not `1110`/`1111` | `DirectCond` | `(pc + 4 + (sext(imm8) << 1)) \| 1` |
//! | `1101 1110` (undefined), `1101 1111` (SWI) | `None` | – |
//! | B: hw\[15:11\] = `11100` | `DirectUncond` | `(pc + 4 + (sext(imm11) << 1)) \| 1` |
//! | BL/BLX prefix: hw\[15:11\] = `11110` | `None` (it only sets lr) | – |
//! | BL suffix: hw\[15:11\] = `11111`, prefix at pc − 2 | `DirectUncond` | `(pc + 2 + (sext(prefix_imm11) << 12) + (imm11 << 1)) \| 1` |
//! | BLX suffix: hw\[15:11\] = `11101`, prefix at pc − 2 | `DirectUncond` | `(pc + 2 + (sext(prefix_imm11) << 12) + (imm11 << 1)) & !3` (ARM) |
//! | BL/BLX suffix without a prefix at pc − 2 | `IndirectUncond` (target comes from lr) | – |
//! | BX Rm: hw\[15:7\] = `010001110` | `Return` if Rm = lr, else `IndirectUncond` | – |
//! | BLX Rm: hw\[15:7\] = `010001111` | `IndirectUncond` | – |
//! | MOV/ADD (hi registers), hw\[15:8\] = `01000110`/`01000100`, Rd = 15 | `Return` for `MOV pc, lr`, else `IndirectUncond` | – |
//! | POP with pc: hw\[15:8\] = `10111101` | `Return` | – |
//! | everything else (including CMP hi `01000101`, which never writes) | `None` | – |
//!
//! Rm of BX/BLX/MOV/ADD is hw\[6:3\]; Rd of MOV/ADD is `(hw[7] << 3) | hw[2:0]`.
//! Thumb-1 has no conditional indirect branch, so `IndirectCond` never occurs in Thumb state.
//!
//! "Prefix at pc − 2" means the caller passed `prev_hw = Some(h)` with h\[15:11\] = `11110`.
//! The classifier cannot know whether that halfword was really executed as the prefix;
//! a program that branches straight to a suffix whose preceding halfword happens to
//! look like a prefix is classified as if the pair were executed together.

use streamtrace_model::BranchClass;

/// Classification of one instruction: its control-flow class and, for direct
/// branches, the interworking target address (bit 0 = 1: Thumb target).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Classified {
    pub class: BranchClass,
    /// Target of a direct branch as an interworking address; `None` for every other class.
    pub target: Option<u32>,
}

impl Classified {
    /// Not a control-flow instruction.
    pub const NONE: Classified = Classified {
        class: BranchClass::None,
        target: None,
    };

    #[inline(always)]
    const fn new(class: BranchClass) -> Classified {
        Classified {
            class,
            target: None,
        }
    }

    #[inline(always)]
    const fn direct(class: BranchClass, target: u32) -> Classified {
        Classified {
            class,
            target: Some(target),
        }
    }
}

/// Size in bytes of an instruction in the given state (ARMv5: 4 in ARM, 2 in Thumb;
/// a Thumb BL/BLX pair is two 2-byte instructions).
#[inline(always)]
pub const fn insn_size(thumb: bool) -> u32 {
    if thumb {
        2
    } else {
        4
    }
}

/// True if `hw` is the first half (prefix, hw\[15:11\] = `11110`) of a Thumb BL/BLX pair.
#[inline(always)]
pub const fn is_thumb_bl_prefix(hw: u16) -> bool {
    hw >> 11 == 0b11110
}

/// True if `hw` is the second half (suffix) of a Thumb BL (`11111`) or BLX (`11101`) pair,
/// i.e. an instruction whose classification depends on the preceding halfword.
#[inline(always)]
pub const fn is_thumb_bl_suffix(hw: u16) -> bool {
    matches!(hw >> 11, 0b11111 | 0b11101)
}

/// Sign-extend the low `bits` bits of `value` (1 <= bits <= 32).
#[inline(always)]
const fn sign_extend(value: u32, bits: u32) -> u32 {
    let shift = 32 - bits;
    (((value << shift) as i32) >> shift) as u32
}

#[inline(always)]
const fn indirect(al: bool) -> BranchClass {
    if al {
        BranchClass::IndirectUncond
    } else {
        BranchClass::IndirectCond
    }
}

const COND_AL: u32 = 0b1110;
const COND_NV: u32 = 0b1111;
const REG_SP: u32 = 13;
const REG_LR: u32 = 14;
const REG_PC: u32 = 15;

/// Classify the ARM-state instruction `word` located at `pc` (word aligned).
#[inline]
pub fn classify_arm(word: u32, pc: u32) -> Classified {
    let cond = word >> 28;
    let op = (word >> 25) & 0b111;

    if cond == COND_NV {
        // Unconditional space: only BLX(imm) changes the flow.
        if op == 0b101 {
            let h = (word >> 24) & 1;
            let target = pc
                .wrapping_add(8)
                .wrapping_add(sign_extend(word & 0x00FF_FFFF, 24) << 2)
                .wrapping_add(h << 1)
                | 1;
            return Classified::direct(BranchClass::DirectUncond, target);
        }
        return Classified::NONE;
    }

    let al = cond == COND_AL;
    match op {
        0b101 => {
            let class = if al {
                BranchClass::DirectUncond
            } else {
                BranchClass::DirectCond
            };
            let target = pc
                .wrapping_add(8)
                .wrapping_add(sign_extend(word & 0x00FF_FFFF, 24) << 2);
            Classified::direct(class, target)
        }
        0b000 | 0b001 => classify_arm_dp(word, al),
        0b010 | 0b011 => {
            // Single data transfer. Register-offset form with bit 4 set is undefined.
            if op == 0b011 && word & (1 << 4) != 0 {
                return Classified::NONE;
            }
            let load = word & (1 << 20) != 0;
            let byte = word & (1 << 22) != 0;
            let rd = (word >> 12) & 0xF;
            if !load || byte || rd != REG_PC {
                return Classified::NONE;
            }
            // LDR pc, [sp], #4: P=0 U=1 B=0 W=0 L=1 Rn=13 Rd=15 imm12=4.
            if word & 0x0FFF_FFFF == 0x049D_F004 {
                Classified::new(BranchClass::Return)
            } else {
                Classified::new(indirect(al))
            }
        }
        0b100 => {
            let load = word & (1 << 20) != 0;
            let has_pc = word & (1 << 15) != 0;
            if !load || !has_pc {
                return Classified::NONE;
            }
            if (word >> 16) & 0xF == REG_SP {
                Classified::new(BranchClass::Return)
            } else {
                Classified::new(indirect(al))
            }
        }
        // 110, 111: coprocessor and SWI.
        _ => Classified::NONE,
    }
}

/// bits\[27:26\] = 00: data processing, miscellaneous, multiply and extra load/store.
#[inline(always)]
fn classify_arm_dp(word: u32, al: bool) -> Classified {
    // BX / BLX(reg): cond 0001 0010 1111 1111 1111 00L1 Rm
    if word & 0x0FFF_FFD0 == 0x012F_FF10 {
        let rm = word & 0xF;
        let is_blx = word & (1 << 5) != 0;
        if !is_blx && rm == REG_LR {
            return Classified::new(BranchClass::Return);
        }
        return Classified::new(indirect(al));
    }
    let imm_form = word & (1 << 25) != 0;
    // Multiply, swap and extra load/store (LDRH, LDRD, ...) space.
    if !imm_form && word & (1 << 7) != 0 && word & (1 << 4) != 0 {
        return Classified::NONE;
    }
    let opcode = (word >> 21) & 0xF;
    // 10xx: TST/TEQ/CMP/CMN with S=1 write no register; with S=0 this is the
    // miscellaneous space (MRS, MSR, CLZ, QADD, BKPT, ...) apart from BX/BLX above.
    if opcode & 0b1100 == 0b1000 {
        return Classified::NONE;
    }
    if (word >> 12) & 0xF != REG_PC {
        return Classified::NONE;
    }
    // MOV{S} pc, lr: opcode 1101, register form, shift field zero, Rm = lr.
    if opcode == 0b1101 && !imm_form && word & 0xFFF == REG_LR {
        return Classified::new(BranchClass::Return);
    }
    Classified::new(indirect(al))
}

/// Classify the Thumb-state instruction `hw` located at `pc` (halfword aligned).
///
/// `prev_hw` is the halfword at `pc - 2` if it is readable; it only matters when `hw`
/// is the suffix of a BL/BLX pair.
#[inline]
pub fn classify_thumb(hw: u16, prev_hw: Option<u16>, pc: u32) -> Classified {
    let hw = hw as u32;
    match hw >> 11 {
        // 1101 cccc: conditional branch, undefined (cccc = 1110) or SWI (1111).
        0b11010 | 0b11011 => {
            let cond = (hw >> 8) & 0xF;
            if cond >= 0b1110 {
                return Classified::NONE;
            }
            let target = pc
                .wrapping_add(4)
                .wrapping_add(sign_extend(hw & 0xFF, 8) << 1)
                | 1;
            Classified::direct(BranchClass::DirectCond, target)
        }
        0b11100 => {
            let target = pc
                .wrapping_add(4)
                .wrapping_add(sign_extend(hw & 0x7FF, 11) << 1)
                | 1;
            Classified::direct(BranchClass::DirectUncond, target)
        }
        // BL/BLX prefix: only writes lr.
        0b11110 => Classified::NONE,
        // BL suffix (11111) and BLX suffix (11101).
        0b11111 | 0b11101 => match prev_hw {
            Some(prefix) if is_thumb_bl_prefix(prefix) => {
                // lr = (pc - 2) + 4 + (sext(prefix_imm11) << 12); target = lr + (imm11 << 1).
                let base = pc
                    .wrapping_add(2)
                    .wrapping_add(sign_extend(prefix as u32 & 0x7FF, 11) << 12)
                    .wrapping_add((hw & 0x7FF) << 1);
                let target = if hw >> 11 == 0b11111 {
                    base | 1
                } else {
                    base & !3
                };
                Classified::direct(BranchClass::DirectUncond, target)
            }
            _ => Classified::new(BranchClass::IndirectUncond),
        },
        // 01000x: data processing and hi-register operations / BX.
        0b01000 => match hw >> 8 {
            // 0100 0111 L Rm 000: BX (L = 0) / BLX (L = 1).
            0b0100_0111 => {
                let rm = (hw >> 3) & 0xF;
                let is_blx = hw & (1 << 7) != 0;
                if !is_blx && rm == REG_LR {
                    Classified::new(BranchClass::Return)
                } else {
                    Classified::new(BranchClass::IndirectUncond)
                }
            }
            // MOV (0110) / ADD (0100) with hi registers.
            0b0100_0110 | 0b0100_0100 => {
                let rd = ((hw >> 4) & 0b1000) | (hw & 0b111);
                if rd != REG_PC {
                    return Classified::NONE;
                }
                let rm = (hw >> 3) & 0xF;
                if hw >> 8 == 0b0100_0110 && rm == REG_LR {
                    Classified::new(BranchClass::Return)
                } else {
                    Classified::new(BranchClass::IndirectUncond)
                }
            }
            _ => Classified::NONE,
        },
        // 1011 1101: POP with pc in the list.
        0b10111 if hw >> 8 == 0b1011_1101 => Classified::new(BranchClass::Return),
        _ => Classified::NONE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sign_extend_works() {
        assert_eq!(sign_extend(0xFF, 8), 0xFFFF_FFFF);
        assert_eq!(sign_extend(0x7F, 8), 0x7F);
        assert_eq!(sign_extend(0x80_0000, 24), 0xFF80_0000);
        assert_eq!(sign_extend(0x400, 11), 0xFFFF_FC00);
        assert_eq!(sign_extend(0x3FF, 11), 0x3FF);
    }

    #[test]
    fn helpers() {
        assert_eq!(insn_size(true), 2);
        assert_eq!(insn_size(false), 4);
        assert!(is_thumb_bl_prefix(0xF000));
        assert!(!is_thumb_bl_prefix(0xF800));
        assert!(is_thumb_bl_suffix(0xF800));
        assert!(is_thumb_bl_suffix(0xE800));
        assert!(!is_thumb_bl_suffix(0xE000));
    }
}

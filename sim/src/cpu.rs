//! Architectural state of the ARMv5TE core: registers with mode banking, CPSR/SPSR,
//! condition codes, exception entry, and the ALU/shifter helpers that the ARM and Thumb
//! executors share.

/// Processor modes (CPSR\[4:0\]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Mode {
    User = 0x10,
    Fiq = 0x11,
    Irq = 0x12,
    Supervisor = 0x13,
    Abort = 0x17,
    Undefined = 0x1B,
    System = 0x1F,
}

impl Mode {
    pub fn from_bits(bits: u32) -> Option<Mode> {
        Some(match bits & 0x1F {
            0x10 => Mode::User,
            0x11 => Mode::Fiq,
            0x12 => Mode::Irq,
            0x13 => Mode::Supervisor,
            0x17 => Mode::Abort,
            0x1B => Mode::Undefined,
            0x1F => Mode::System,
            _ => return None,
        })
    }

    /// Index of the r13/r14/SPSR bank: 0 = user/system, 1 fiq, 2 irq, 3 svc, 4 abt, 5 und.
    #[inline]
    fn bank(self) -> usize {
        match self {
            Mode::User | Mode::System => 0,
            Mode::Fiq => 1,
            Mode::Irq => 2,
            Mode::Supervisor => 3,
            Mode::Abort => 4,
            Mode::Undefined => 5,
        }
    }

    pub fn is_privileged(self) -> bool {
        self != Mode::User
    }

    pub fn has_spsr(self) -> bool {
        !matches!(self, Mode::User | Mode::System)
    }
}

/// Exceptions of the ARM exception model, with their vectors (low vectors).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExceptionKind {
    Reset,
    Undefined,
    Swi,
    PrefetchAbort,
    DataAbort,
    Irq,
    Fiq,
}

impl ExceptionKind {
    pub fn vector(self) -> u32 {
        match self {
            ExceptionKind::Reset => 0x00,
            ExceptionKind::Undefined => 0x04,
            ExceptionKind::Swi => 0x08,
            ExceptionKind::PrefetchAbort => 0x0C,
            ExceptionKind::DataAbort => 0x10,
            ExceptionKind::Irq => 0x18,
            ExceptionKind::Fiq => 0x1C,
        }
    }

    pub fn mode(self) -> Mode {
        match self {
            ExceptionKind::Reset | ExceptionKind::Swi => Mode::Supervisor,
            ExceptionKind::Undefined => Mode::Undefined,
            ExceptionKind::PrefetchAbort | ExceptionKind::DataAbort => Mode::Abort,
            ExceptionKind::Irq => Mode::Irq,
            ExceptionKind::Fiq => Mode::Fiq,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ExceptionKind::Reset => "reset",
            ExceptionKind::Undefined => "undefined instruction",
            ExceptionKind::Swi => "SWI",
            ExceptionKind::PrefetchAbort => "prefetch abort",
            ExceptionKind::DataAbort => "data abort",
            ExceptionKind::Irq => "IRQ",
            ExceptionKind::Fiq => "FIQ",
        }
    }
}

pub const CPSR_N: u32 = 1 << 31;
pub const CPSR_Z: u32 = 1 << 30;
pub const CPSR_C: u32 = 1 << 29;
pub const CPSR_V: u32 = 1 << 28;
pub const CPSR_Q: u32 = 1 << 27;
pub const CPSR_I: u32 = 1 << 7;
pub const CPSR_F: u32 = 1 << 6;
pub const CPSR_T: u32 = 1 << 5;

/// Registers in [`Cpu::dump_registers`].
pub const DUMP_REGISTERS: usize = 46;

/// The register file and status registers.
///
/// `r[15]` holds the address of the instruction being executed; executors read the
/// architectural PC operand as `r[15] + 8` (ARM) or `+ 4` (Thumb) themselves.
#[derive(Clone, Debug)]
pub struct Cpu {
    pub r: [u32; 16],
    pub n: bool,
    pub z: bool,
    pub c: bool,
    pub v: bool,
    pub q: bool,
    pub thumb: bool,
    pub irq_disabled: bool,
    pub fiq_disabled: bool,
    mode: Mode,
    /// r13, r14 of each bank (index by `Mode::bank`); the live bank is in `r`.
    banked_sp_lr: [[u32; 2]; 6],
    /// r8-r12 of user/other modes and of FIQ mode; the live set is in `r`.
    banked_r8_r12_usr: [u32; 5],
    banked_r8_r12_fiq: [u32; 5],
    spsr: [u32; 6],
    /// CP15 c1 control register (read by startup code).
    pub cp15_control: u32,
    /// XScale CP0 40-bit accumulator acc0 (MIA/MAR/MRA).
    pub acc0: u64,
    /// iWMMXt data registers wR0-wR15 (PXA27x), reached only by WLDR/WSTR.
    pub wr: [u64; 16],
}

impl Default for Cpu {
    fn default() -> Self {
        Self::new()
    }
}

impl Cpu {
    /// Reset state for a user program: User mode, ARM state, interrupts enabled.
    pub fn new() -> Self {
        Cpu {
            r: [0; 16],
            n: false,
            z: false,
            c: false,
            v: false,
            q: false,
            thumb: false,
            irq_disabled: false,
            fiq_disabled: false,
            mode: Mode::User,
            banked_sp_lr: [[0; 2]; 6],
            banked_r8_r12_usr: [0; 5],
            banked_r8_r12_fiq: [0; 5],
            spsr: [0; 6],
            // XScale reset value of the control register: MMU/caches off, 32-bit, little endian.
            cp15_control: 0x0000_0078,
            acc0: 0,
            wr: [0; 16],
        }
    }

    #[inline]
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Change mode, swapping banked registers.
    pub fn set_mode(&mut self, new: Mode) {
        let old = self.mode;
        if old == new {
            return;
        }
        let (ob, nb) = (old.bank(), new.bank());
        if ob != nb {
            self.banked_sp_lr[ob] = [self.r[13], self.r[14]];
            [self.r[13], self.r[14]] = self.banked_sp_lr[nb];
        }
        if (old == Mode::Fiq) != (new == Mode::Fiq) {
            let live: [u32; 5] = self.r[8..13].try_into().expect("5 registers");
            if old == Mode::Fiq {
                self.banked_r8_r12_fiq = live;
                self.r[8..13].copy_from_slice(&self.banked_r8_r12_usr);
            } else {
                self.banked_r8_r12_usr = live;
                self.r[8..13].copy_from_slice(&self.banked_r8_r12_fiq);
            }
        }
        self.mode = new;
    }

    /// The CPSR as a word.
    pub fn cpsr(&self) -> u32 {
        (self.n as u32) << 31
            | (self.z as u32) << 30
            | (self.c as u32) << 29
            | (self.v as u32) << 28
            | (self.q as u32) << 27
            | (self.irq_disabled as u32) << 7
            | (self.fiq_disabled as u32) << 6
            | (self.thumb as u32) << 5
            | self.mode as u32
    }

    /// Write the CPSR (all fields; an invalid mode field leaves the mode unchanged and is
    /// reported as false).
    pub fn set_cpsr(&mut self, v: u32) -> bool {
        self.set_flags(v);
        self.irq_disabled = v & CPSR_I != 0;
        self.fiq_disabled = v & CPSR_F != 0;
        self.thumb = v & CPSR_T != 0;
        match Mode::from_bits(v) {
            Some(m) => {
                self.set_mode(m);
                true
            }
            None => false,
        }
    }

    /// Write N, Z, C, V, Q from a PSR word.
    #[inline]
    pub fn set_flags(&mut self, v: u32) {
        self.set_nzcv(v);
        self.q = v & CPSR_Q != 0;
    }

    /// Every architectural register in the dump order of docs/citcat.md section 4.1: r0-r15 of
    /// the current mode, CPSR, r8-r12 usr and fiq, r13/r14 of usr, fiq, irq, svc, abt, und,
    /// SPSR of fiq, irq, svc, abt, und, CP15 c1, acc0.
    pub fn dump_registers(&self) -> [u64; DUMP_REGISTERS] {
        let (mut usr, mut fiq, mut sp_lr) = (self.banked_r8_r12_usr, self.banked_r8_r12_fiq, self.banked_sp_lr);
        let live: [u32; 5] = self.r[8..13].try_into().expect("5 registers");
        if self.mode == Mode::Fiq {
            fiq = live;
        } else {
            usr = live;
        }
        sp_lr[self.mode.bank()] = [self.r[13], self.r[14]];
        let mut out = Vec::with_capacity(DUMP_REGISTERS);
        out.extend(self.r.iter().map(|&v| v as u64));
        out.push(self.cpsr() as u64);
        out.extend(usr.iter().chain(&fiq).map(|&v| v as u64));
        out.extend(sp_lr.iter().flatten().map(|&v| v as u64));
        out.extend(self.spsr[1..].iter().map(|&v| v as u64));
        out.push(self.cp15_control as u64);
        out.push(self.acc0);
        out.try_into().expect("the dump order has DUMP_REGISTERS entries")
    }

    /// The inverse of [`Cpu::dump_registers`]; an invalid CPSR mode is an error.
    pub fn restore_registers(&mut self, d: &[u64; DUMP_REGISTERS]) -> Result<(), String> {
        let w = |i: usize| d[i] as u32;
        let cpsr = w(16);
        let mode = Mode::from_bits(cpsr).ok_or_else(|| format!("CPSR {cpsr:#010x} has no valid mode"))?;
        for i in 0..5 {
            self.banked_r8_r12_usr[i] = w(17 + i);
            self.banked_r8_r12_fiq[i] = w(22 + i);
        }
        for b in 0..6 {
            self.banked_sp_lr[b] = [w(27 + 2 * b), w(28 + 2 * b)];
        }
        self.spsr[0] = 0;
        for b in 1..6 {
            self.spsr[b] = w(38 + b);
        }
        self.cp15_control = w(44);
        self.acc0 = d[45] & ((1 << 40) - 1);
        for i in 0..16 {
            self.r[i] = w(i);
        }
        self.mode = mode;
        self.set_flags(cpsr);
        self.irq_disabled = cpsr & CPSR_I != 0;
        self.fiq_disabled = cpsr & CPSR_F != 0;
        self.thumb = cpsr & CPSR_T != 0;
        Ok(())
    }

    /// Write N, Z, C, V only (MRC to r15).
    #[inline]
    pub fn set_nzcv(&mut self, v: u32) {
        self.n = v & CPSR_N != 0;
        self.z = v & CPSR_Z != 0;
        self.c = v & CPSR_C != 0;
        self.v = v & CPSR_V != 0;
    }

    /// SPSR of the current mode (None in User and System mode).
    pub fn spsr(&self) -> Option<u32> {
        self.mode.has_spsr().then(|| self.spsr[self.mode.bank()])
    }

    pub fn set_spsr(&mut self, v: u32) -> bool {
        if self.mode.has_spsr() {
            self.spsr[self.mode.bank()] = v;
            true
        } else {
            false
        }
    }

    /// User-bank register `i` (LDM/STM with `^`), whatever the current mode.
    pub fn user_reg(&self, i: usize) -> u32 {
        match i {
            8..=12 if self.mode == Mode::Fiq => self.banked_r8_r12_usr[i - 8],
            13 | 14 if self.mode.bank() != 0 => self.banked_sp_lr[0][i - 13],
            _ => self.r[i],
        }
    }

    pub fn set_user_reg(&mut self, i: usize, v: u32) {
        match i {
            8..=12 if self.mode == Mode::Fiq => self.banked_r8_r12_usr[i - 8] = v,
            13 | 14 if self.mode.bank() != 0 => self.banked_sp_lr[0][i - 13] = v,
            _ => self.r[i] = v,
        }
    }

    /// Condition check (cond = instruction bits 31:28). 0b1111 is the caller's business.
    #[inline]
    pub fn cond_passed(&self, cond: u32) -> bool {
        match cond & 0xF {
            0x0 => self.z,
            0x1 => !self.z,
            0x2 => self.c,
            0x3 => !self.c,
            0x4 => self.n,
            0x5 => !self.n,
            0x6 => self.v,
            0x7 => !self.v,
            0x8 => self.c && !self.z,
            0x9 => !self.c || self.z,
            0xA => self.n == self.v,
            0xB => self.n != self.v,
            0xC => !self.z && self.n == self.v,
            0xD => self.z || self.n != self.v,
            _ => true,
        }
    }

    /// Take an exception: save CPSR in the new mode's SPSR, LR = `return_link`, switch to
    /// ARM state with IRQs (and for reset/FIQ, FIQs) disabled, PC = vector.
    pub fn enter_exception(&mut self, kind: ExceptionKind, return_link: u32) {
        let old = self.cpsr();
        self.set_mode(kind.mode());
        self.spsr[kind.mode().bank()] = old;
        self.r[14] = return_link;
        self.thumb = false;
        self.irq_disabled = true;
        if matches!(kind, ExceptionKind::Reset | ExceptionKind::Fiq) {
            self.fiq_disabled = true;
        }
        self.r[15] = kind.vector();
    }

    /// Set N and Z from a result.
    #[inline]
    pub fn set_nz(&mut self, result: u32) {
        self.n = result >> 31 == 1;
        self.z = result == 0;
    }
}

/// `a + b + carry_in` with carry out and signed overflow.
#[inline]
pub fn add_with_carry(a: u32, b: u32, carry_in: bool) -> (u32, bool, bool) {
    let wide = a as u64 + b as u64 + carry_in as u64;
    let result = wide as u32;
    let carry = wide >> 32 != 0;
    let overflow = ((a ^ result) & (b ^ result)) >> 31 != 0;
    (result, carry, overflow)
}

/// Barrel shifter types (instruction bits 6:5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShiftType {
    Lsl = 0,
    Lsr = 1,
    Asr = 2,
    Ror = 3,
}

impl ShiftType {
    #[inline]
    pub fn from_bits(b: u32) -> ShiftType {
        match b & 3 {
            0 => ShiftType::Lsl,
            1 => ShiftType::Lsr,
            2 => ShiftType::Asr,
            _ => ShiftType::Ror,
        }
    }
}

/// Shift by an immediate amount (0..=31) with the ARM encoding rules: LSR/ASR #0 mean #32,
/// ROR #0 means RRX. Returns (value, carry out).
#[inline]
pub fn shift_imm(value: u32, ty: ShiftType, amount: u32, carry_in: bool) -> (u32, bool) {
    match (ty, amount) {
        (ShiftType::Lsl, 0) => (value, carry_in),
        (ShiftType::Lsl, n) => (value << n, (value >> (32 - n)) & 1 == 1),
        (ShiftType::Lsr, 0) => (0, value >> 31 == 1),
        (ShiftType::Lsr, n) => (value >> n, (value >> (n - 1)) & 1 == 1),
        (ShiftType::Asr, 0) => (((value as i32) >> 31) as u32, value >> 31 == 1),
        (ShiftType::Asr, n) => (((value as i32) >> n) as u32, (value >> (n - 1)) & 1 == 1),
        (ShiftType::Ror, 0) => (((carry_in as u32) << 31) | (value >> 1), value & 1 == 1),
        (ShiftType::Ror, n) => (value.rotate_right(n), (value >> (n - 1)) & 1 == 1),
    }
}

/// Shift by a register amount (bottom byte of Rs, 0..=255) with the ARM rules.
#[inline]
pub fn shift_reg(value: u32, ty: ShiftType, amount: u32, carry_in: bool) -> (u32, bool) {
    let n = amount & 0xFF;
    if n == 0 {
        return (value, carry_in);
    }
    match ty {
        ShiftType::Lsl => match n {
            1..=31 => (value << n, (value >> (32 - n)) & 1 == 1),
            32 => (0, value & 1 == 1),
            _ => (0, false),
        },
        ShiftType::Lsr => match n {
            1..=31 => (value >> n, (value >> (n - 1)) & 1 == 1),
            32 => (0, value >> 31 == 1),
            _ => (0, false),
        },
        ShiftType::Asr => match n {
            1..=31 => (((value as i32) >> n) as u32, (value >> (n - 1)) & 1 == 1),
            _ => (((value as i32) >> 31) as u32, value >> 31 == 1),
        },
        ShiftType::Ror => {
            let r = n & 31;
            if r == 0 {
                (value, value >> 31 == 1)
            } else {
                (value.rotate_right(r), (value >> (r - 1)) & 1 == 1)
            }
        }
    }
}

/// Saturate a signed 64-bit value to i32; returns (value, saturated).
#[inline]
pub fn saturate_i32(v: i64) -> (u32, bool) {
    if v > i32::MAX as i64 {
        (i32::MAX as u32, true)
    } else if v < i32::MIN as i64 {
        (i32::MIN as u32, true)
    } else {
        (v as i32 as u32, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn banking_keeps_each_modes_registers() {
        let mut c = Cpu::new();
        c.r[13] = 0x1000;
        c.r[14] = 0x2000;
        c.r[8] = 8;
        c.set_mode(Mode::Supervisor);
        assert_eq!(c.r[13], 0);
        c.r[13] = 0x3000;
        c.set_mode(Mode::Fiq);
        assert_eq!((c.r[8], c.r[13]), (0, 0));
        c.r[8] = 88;
        assert_eq!(c.user_reg(8), 8);
        assert_eq!(c.user_reg(13), 0x1000);
        c.set_mode(Mode::System);
        assert_eq!((c.r[8], c.r[13], c.r[14]), (8, 0x1000, 0x2000), "system shares user's bank");
        c.set_mode(Mode::Supervisor);
        assert_eq!(c.r[13], 0x3000);
        c.set_mode(Mode::Fiq);
        assert_eq!(c.r[8], 88);
    }

    #[test]
    fn exception_entry_and_cpsr() {
        let mut c = Cpu::new();
        c.thumb = true;
        c.n = true;
        let before = c.cpsr();
        assert_eq!(before, CPSR_N | CPSR_T | 0x10);
        c.enter_exception(ExceptionKind::Irq, 0x8004);
        assert_eq!(c.mode(), Mode::Irq);
        assert_eq!((c.r[15], c.r[14], c.thumb, c.irq_disabled), (0x18, 0x8004, false, true));
        assert_eq!(c.spsr(), Some(before));
        assert!(c.set_cpsr(before));
        assert_eq!(c.mode(), Mode::User);
        assert!(c.thumb);
        assert!(!c.set_cpsr(0x15), "invalid mode");
    }

    #[test]
    fn conditions_and_alu() {
        let mut c = Cpu::new();
        c.z = true;
        assert!(c.cond_passed(0x0) && !c.cond_passed(0x1) && c.cond_passed(0xD) && !c.cond_passed(0xC));
        assert_eq!(add_with_carry(0xFFFF_FFFF, 1, false), (0, true, false));
        assert_eq!(add_with_carry(0x7FFF_FFFF, 1, false), (0x8000_0000, false, true));
        // SUB a - b = a + !b + 1: 5 - 7 borrows (C = 0), 0x80000000 - 1 overflows.
        assert_eq!(add_with_carry(5, !7, true), (0xFFFF_FFFE, false, false));
        assert_eq!(add_with_carry(0x8000_0000, !1, true), (0x7FFF_FFFF, true, true));
    }

    #[test]
    fn shifter_corner_cases() {
        assert_eq!(shift_imm(0x8000_0001, ShiftType::Lsl, 1, false), (2, true));
        assert_eq!(shift_imm(0x8000_0001, ShiftType::Lsr, 0, false), (0, true), "LSR #32");
        assert_eq!(shift_imm(0x8000_0000, ShiftType::Asr, 0, false), (0xFFFF_FFFF, true), "ASR #32");
        assert_eq!(shift_imm(0x0000_0003, ShiftType::Ror, 0, true), (0x8000_0001, true), "RRX");
        assert_eq!(shift_reg(0x8000_0001, ShiftType::Lsl, 32, false), (0, true));
        assert_eq!(shift_reg(0x8000_0001, ShiftType::Lsl, 33, true), (0, false));
        assert_eq!(shift_reg(0x8000_0001, ShiftType::Lsr, 32, false), (0, true));
        assert_eq!(shift_reg(0x8000_0000, ShiftType::Asr, 200, false), (0xFFFF_FFFF, true));
        assert_eq!(shift_reg(0x8000_0001, ShiftType::Ror, 32, false), (0x8000_0001, true));
        assert_eq!(shift_reg(0x1234, ShiftType::Ror, 0x100, true), (0x1234, true), "only the low byte counts");
        assert_eq!(saturate_i32(1 << 40), (0x7FFF_FFFF, true));
    }
}

#[cfg(test)]
mod dump_tests {
    use super::*;

    #[test]
    fn dump_and_restore_round_trip_in_every_mode() {
        for mode in [Mode::User, Mode::Fiq, Mode::Irq, Mode::Supervisor, Mode::Abort, Mode::Undefined, Mode::System] {
            let mut a = Cpu::new();
            // Give every bank distinct values by visiting each mode.
            for (k, m) in [Mode::Fiq, Mode::Irq, Mode::Supervisor, Mode::Abort, Mode::Undefined, Mode::User].into_iter().enumerate() {
                a.set_mode(m);
                for i in 0..15 {
                    a.r[i] = (k as u32 + 1) * 0x100 + i as u32;
                }
                a.set_spsr(0x6000_0010 + k as u32);
            }
            a.set_mode(mode);
            a.r[15] = 0x1234;
            a.c = true;
            a.acc0 = 0xAB_1234_5678;
            let d = a.dump_registers();
            let mut b = Cpu::new();
            b.restore_registers(&d).unwrap();
            assert_eq!(b.dump_registers(), d, "{mode:?}");
            assert_eq!(b.mode(), mode);
            // The banks really moved: switching both to Irq shows the same r13.
            a.set_mode(Mode::Irq);
            b.set_mode(Mode::Irq);
            assert_eq!(a.r, b.r);
        }
        let mut bad = Cpu::new().dump_registers();
        bad[16] = 0x0000_0001;
        assert!(Cpu::new().restore_registers(&bad).is_err());
    }
}

/// The register numbers of an LDM/STM/PUSH/POP register list, lowest first: the order in
/// which the block transfers move them.
#[inline(always)]
pub fn list_registers(list: u32) -> impl Iterator<Item = usize> {
    let mut bits = list;
    std::iter::from_fn(move || {
        (bits != 0).then(|| {
            let i = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            i
        })
    })
}

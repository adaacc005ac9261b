//! Timing-relevant facts of an instruction, decoded once per (address, word) and cached:
//! what kind of pipeline work it is, which registers it reads (and which of those go
//! through the shifter), which it writes with an ALU-like latency, its issue and result
//! latencies where they are static, and which register's value selects a multiply's
//! latency. Thumb instructions decode as their ARM equivalents (the XScale's ID stage
//! expands Thumb to ARM), plus a Thumb flag for the PC-write penalties.

use super::config::TimingConfig;

/// Pipeline work of an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// Integer pipe: data processing, CLZ, saturating arithmetic, MRS, MRC, BL prefix.
    Alu,
    /// Single load (word, byte, halfword), `rd` gets the data.
    Load,
    /// LDRD: `rd` and `rd + 1`.
    LoadDouble,
    Store,
    StoreDouble,
    /// LDM/POP: `list` loaded in ascending order.
    Ldm,
    /// STM/PUSH.
    Stm,
    /// SWP/SWPB: a read and a write; `rd` gets the data.
    Swap,
    /// MUL/MLA (S = 0).
    Mul,
    /// MULS/MLAS (also Thumb MUL).
    MulS,
    /// UMULL/UMLAL/SMULL/SMLAL, S = 0: `rd` = RdLo, `rd2` = RdHi.
    MulLong,
    MulLongS,
    /// SMULxy/SMLAxy.
    MulHalf,
    /// SMULWy/SMLAWy.
    MulWord,
    /// SMLALxy: `rd` = RdLo, `rd2` = RdHi.
    MulHalfLong,
    /// MIA (acc0 += Rm * Rs), latency by the size of Rs.
    Mia,
    Miaph,
    Miaxy,
    /// MAR acc0, RdLo, RdHi.
    Mar,
    /// MRA RdLo, RdHi, acc0: `rd` = RdLo, `rd2` = RdHi.
    Mra,
    /// Branch the BTB predicts: ARM B/BL, Thumb B and B\<cond\>.
    Branch,
    /// BLX(immediate), Thumb BL/BLX second half: direct but never predicted.
    BranchImm,
    /// BX/BLX(register).
    BranchReg,
    /// SWI (including the semihosting trap).
    Swi,
    /// MSR.
    Msr,
    /// Anything else: PLD, CP15 writes, undefined encodings (their exception is charged
    /// when the retire event says so), coprocessor no-ops.
    Other,
}

/// Flag bits of [`Op::flags`].
pub const F_COND: u8 = 1; // ARM condition other than AL (checked before execution)
pub const F_PC: u8 = 2; // writes the PC when executed (DP Rd = pc, LDR pc, LDM with pc)
pub const F_THUMB: u8 = 4;
pub const F_MEM: u8 = 8; // uses the memory pipe (for the LDRD rule)
pub const F_UNSIGNED_RS: u8 = 16; // UMULL/UMLAL: Rs size rule for unsigned operands
pub const F_REG_SHIFT: u8 = 32; // data processing with a register shift or RRX
pub const F_MAC: u8 = 64; // needs the multiplier (resource latency)
pub const F_MANY: u8 = 128; // registers do not fit `s`/`ss`/`d`: use the masks

/// Register index whose ready cycle is always 0 (an unused source slot).
pub const ZERO_REG: u8 = 16;
/// Register index that absorbs writes (no destination, or the pc).
pub const NO_REG: u8 = 17;

/// The decoded facts; small and `Copy` so the machine can carry it across execution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Op {
    pub kind: Kind,
    pub flags: u8,
    /// Static issue latency when executed (multiplies: filled in from Rs at run time).
    pub issue: u8,
    /// Static result latency of `dst` (ALU-like destinations).
    pub lat: u8,
    /// Register whose pre-execution value selects the multiply latency.
    pub rs: u8,
    /// Load destination / multiply RdLo / MRA RdLo.
    pub rd: u8,
    /// Second destination (RdHi, LDRD's Rd + 1).
    pub rd2: u8,
    /// Registers read (the pc reads as always ready).
    pub src: u16,
    /// Registers read through the shifter (shift by immediate, QDADD/QDSUB Rn).
    pub ssrc: u16,
    /// Registers written with latency `lat` (ALU results, base writeback, BL's lr).
    pub dst: u16,
    /// LDM/STM register list (pc included).
    pub list: u16,
    /// `src` as up to three indices (`ZERO_REG` fills), `ssrc` as one, `dst` as up to two
    /// (`NO_REG` fills), so the common case needs no loops; `F_MANY` when they do not fit.
    pub s: [u8; 3],
    pub ss: u8,
    pub d: [u8; 2],
    /// Plain ALU work: kind `Alu`, no PC write, registers in the index forms, issue in a
    /// cycle. Its timing is the operand wait and the ALU results alone, which the pipeline
    /// times on a short path (most instructions are such).
    pub simple: bool,
}

impl Op {
    fn new(kind: Kind) -> Op {
        Op {
            kind,
            flags: 0,
            issue: 1,
            lat: 1,
            rs: NO_REG,
            rd: NO_REG,
            rd2: NO_REG,
            src: 0,
            ssrc: 0,
            dst: 0,
            list: 0,
            s: [ZERO_REG; 3],
            ss: ZERO_REG,
            d: [NO_REG; 2],
            simple: false,
        }
    }

    /// Fill the index forms from the masks; a pc destination (never scoreboarded) goes to
    /// the sink.
    fn finish(mut self) -> Op {
        let sink = |r: u8| if r == 15 { NO_REG } else { r };
        self.rd = sink(self.rd);
        self.rd2 = sink(self.rd2);
        self.dst &= 0x7FFF;
        if self.src.count_ones() > 3 || self.ssrc.count_ones() > 1 || self.dst.count_ones() > 2 {
            self.flags |= F_MANY;
            return self;
        }
        let mut m = self.src;
        let mut i = 0;
        while m != 0 {
            self.s[i] = m.trailing_zeros() as u8;
            m &= m - 1;
            i += 1;
        }
        if self.ssrc != 0 {
            self.ss = self.ssrc.trailing_zeros() as u8;
        }
        let mut m = self.dst;
        let mut i = 0;
        while m != 0 {
            self.d[i] = m.trailing_zeros() as u8;
            m &= m - 1;
            i += 1;
        }
        self.simple = self.kind == Kind::Alu && self.flags & F_PC == 0 && self.issue <= 1;
        self
    }

    #[inline]
    pub fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }

    /// Registers in `list`, pc included.
    #[inline]
    pub fn count(&self) -> u32 {
        self.list.count_ones()
    }
}

#[inline(always)]
fn bit(r: u32) -> u16 {
    1 << (r & 15)
}

fn sat8(v: u32) -> u8 {
    v.min(255) as u8
}

/// Static latencies the decoder bakes into each op.
#[derive(Clone, Copy, Debug)]
pub struct DecodeParams {
    alu_result: u8,
    reg_shift_issue: u8,
    reg_shift_result: u8,
    saturate_result: u8,
    mrs_result: u8,
    msr_issue: u8,
    msr_control_issue: u8,
    strd_issue: u8,
    ldm_issue_base: u32,
    stm_issue_base: u32,
    ldrd_r12_extra_issue: u8,
    swp_issue: u8,
}

impl DecodeParams {
    /// The longest result latency an op's ALU-like results (`lat`) have.
    pub fn alu_reach(&self) -> u8 {
        [1, self.alu_result, self.reg_shift_result, self.saturate_result, self.mrs_result].into_iter().max().unwrap_or(1)
    }

    pub fn new(cfg: &TimingConfig) -> Self {
        let c = &cfg.core;
        DecodeParams {
            alu_result: sat8(c.alu_result),
            reg_shift_issue: sat8(c.reg_shift_issue),
            reg_shift_result: sat8(c.reg_shift_result),
            saturate_result: sat8(c.saturate_result),
            mrs_result: sat8(c.mrs_result),
            msr_issue: sat8(c.msr_issue),
            msr_control_issue: sat8(c.msr_control_issue),
            strd_issue: sat8(c.strd_issue),
            ldm_issue_base: c.ldm_issue_base,
            stm_issue_base: c.stm_issue_base,
            ldrd_r12_extra_issue: sat8(c.ldrd_r12_extra_issue),
            swp_issue: sat8(c.swp_issue),
        }
    }

    fn alu(&self) -> Op {
        let mut o = Op::new(Kind::Alu);
        o.lat = self.alu_result;
        o
    }
}

/// Decode the instruction `word` of the state `thumb` (a Thumb halfword in the low bits).
pub fn decode(thumb: bool, word: u32, p: &DecodeParams) -> Op {
    if thumb {
        decode_thumb(word as u16, p)
    } else {
        decode_arm(word, p)
    }
}

/// Decode an ARM instruction.
pub fn decode_arm(w: u32, p: &DecodeParams) -> Op {
    let cond = w >> 28;
    let mut o = decode_arm_body(w, p);
    if cond != 0xE && cond != 0xF {
        o.flags |= F_COND;
    }
    o.finish()
}

fn decode_arm_body(w: u32, p: &DecodeParams) -> Op {
    let rn = (w >> 16) & 15;
    let rd = (w >> 12) & 15;
    let rs = (w >> 8) & 15;
    let rm = w & 15;
    if w >> 28 == 0xF {
        return match (w >> 25) & 7 {
            0b101 => {
                // BLX(immediate): lr written like an ALU result.
                let mut o = Op::new(Kind::BranchImm);
                o.dst = bit(14);
                o.lat = p.alu_result;
                o
            }
            0b010 | 0b011 if w & 0x0D70_F000 == 0x0550_F000 => {
                // PLD: reads its address operands, no data access is modelled.
                let mut o = Op::new(Kind::Other);
                o.src = bit(rn) | if w & (1 << 25) != 0 { bit(rm) } else { 0 };
                o
            }
            _ => Op::new(Kind::Other),
        };
    }
    match (w >> 25) & 7 {
        0b000 => {
            if w & 0x90 == 0x90 {
                if (w >> 5) & 3 == 0 {
                    multiply_or_swap(w, p)
                } else {
                    extra_load_store(w, p)
                }
            } else if (w >> 23) & 3 == 0b10 && w & (1 << 20) == 0 {
                miscellaneous(w, p)
            } else {
                data_processing(w, p)
            }
        }
        0b001 => {
            if (w >> 23) & 3 == 0b10 && w & (1 << 20) == 0 {
                if w & (1 << 21) != 0 {
                    msr(w, p, 0)
                } else {
                    Op::new(Kind::Other)
                }
            } else {
                data_processing(w, p)
            }
        }
        0b010 => single_load_store(w, 0, 0, p),
        0b011 => {
            if w & 0x10 != 0 {
                Op::new(Kind::Other)
            } else if (w >> 5) & 0x7F != 0 {
                // Scaled register offset: the index goes through the shifter.
                single_load_store(w, 0, bit(rm), p)
            } else {
                single_load_store(w, bit(rm), 0, p)
            }
        }
        0b100 => block(w & 0xFFFF, rn, w & (1 << 20) != 0, w & (1 << 21) != 0, p),
        0b101 => {
            let mut o = Op::new(Kind::Branch);
            if w & (1 << 24) != 0 {
                o.dst = bit(14);
                o.lat = p.alu_result;
            }
            o
        }
        0b110 => {
            // MCRR/MRRC on CP0 with opcode 0: MAR / MRA.
            if (w >> 21) & 0x7F == 0b110_0010 && rs == 0 && (w >> 4) & 15 == 0 {
                if w & (1 << 20) == 0 {
                    let mut o = Op::new(Kind::Mar);
                    o.src = bit(rn) | bit(rd);
                    o.flags |= F_MAC;
                    o
                } else {
                    let mut o = Op::new(Kind::Mra);
                    o.rd = rd as u8;
                    o.rd2 = rn as u8;
                    o.flags |= F_MAC;
                    o
                }
            } else {
                Op::new(Kind::Other)
            }
        }
        _ => {
            if w & (1 << 24) != 0 {
                Op::new(Kind::Swi)
            } else if w & 0x10 != 0 {
                coprocessor_transfer(w, p)
            } else {
                Op::new(Kind::Other)
            }
        }
    }
}

fn data_processing(w: u32, p: &DecodeParams) -> Op {
    let opcode = (w >> 21) & 15;
    let rn = (w >> 16) & 15;
    let rd = (w >> 12) & 15;
    let rm = w & 15;
    let mut o = p.alu();
    // MOV and MVN ignore Rn.
    if opcode != 13 && opcode != 15 {
        o.src |= bit(rn);
    }
    if w & (1 << 25) == 0 {
        if w & 0x10 != 0 {
            // Register-specified shift.
            o.src |= bit(rm) | bit((w >> 8) & 15);
            o.issue = p.reg_shift_issue;
            o.lat = p.reg_shift_result;
            o.flags |= F_REG_SHIFT;
        } else {
            let amount = (w >> 7) & 31;
            let ty = (w >> 5) & 3;
            if amount == 0 && ty == 3 {
                // RRX costs as a register shift.
                o.src |= bit(rm);
                o.issue = p.reg_shift_issue;
                o.lat = p.reg_shift_result;
                o.flags |= F_REG_SHIFT;
            } else if amount == 0 && ty == 0 {
                o.src |= bit(rm);
            } else {
                o.ssrc |= bit(rm);
            }
        }
    }
    // TST/TEQ/CMP/CMN only set flags (Rd = pc there is the 26-bit TEQP: no branch).
    if !(8..=11).contains(&opcode) {
        if rd == 15 {
            o.flags |= F_PC;
        } else {
            o.dst |= bit(rd);
        }
    }
    o
}

fn msr(w: u32, p: &DecodeParams, src: u16) -> Op {
    let mut o = Op::new(Kind::Msr);
    o.src = src;
    // Field mask bit 16 = control field (mode bits): the slow form.
    o.issue = if w & (1 << 16) != 0 { p.msr_control_issue } else { p.msr_issue };
    o
}

fn miscellaneous(w: u32, p: &DecodeParams) -> Op {
    let op = (w >> 21) & 3;
    let rn = (w >> 16) & 15;
    let rd = (w >> 12) & 15;
    let rs = (w >> 8) & 15;
    let rm = w & 15;
    match (w >> 4) & 15 {
        0b0000 => {
            if op & 1 == 0 {
                let mut o = p.alu();
                o.dst = bit(rd) & 0x7FFF;
                o.lat = p.mrs_result;
                o
            } else {
                msr(w, p, bit(rm))
            }
        }
        0b0001 if op == 0b01 => {
            let mut o = Op::new(Kind::BranchReg);
            o.src = bit(rm);
            o
        }
        0b0001 if op == 0b11 => {
            let mut o = p.alu();
            o.src = bit(rm);
            o.dst = bit(rd);
            o
        }
        0b0011 if op == 0b01 => {
            let mut o = Op::new(Kind::BranchReg);
            o.src = bit(rm);
            o.dst = bit(14);
            o.lat = p.alu_result;
            o
        }
        0b0101 => {
            // QADD/QSUB/QDADD/QDSUB: the doubling of Rn uses the shifter.
            let mut o = p.alu();
            o.src = bit(rm);
            if op & 2 != 0 {
                o.ssrc = bit(rn);
            } else {
                o.src |= bit(rn);
            }
            o.dst = bit(rd);
            o.lat = p.saturate_result;
            o
        }
        x if x & 0b1001 == 0b1000 => {
            // Signed halfword multiplies: Rd = [19:16], Rn = [15:12].
            let mut o;
            match op {
                0b00 => {
                    o = Op::new(Kind::MulHalf);
                    o.src = bit(rm) | bit(rs) | bit(rd);
                    o.rd = rn as u8;
                }
                0b01 => {
                    o = Op::new(Kind::MulWord);
                    o.src = bit(rm) | bit(rs);
                    if x & 0b0010 == 0 {
                        o.src |= bit(rd); // SMLAWy accumulates
                    }
                    o.rd = rn as u8;
                }
                0b10 => {
                    o = Op::new(Kind::MulHalfLong);
                    o.src = bit(rm) | bit(rs) | bit(rd) | bit(rn);
                    o.rd = rd as u8;
                    o.rd2 = rn as u8;
                }
                _ => {
                    o = Op::new(Kind::MulHalf);
                    o.src = bit(rm) | bit(rs);
                    o.rd = rn as u8;
                }
            }
            o.flags |= F_MAC;
            o
        }
        _ => Op::new(Kind::Other),
    }
}

fn multiply_or_swap(w: u32, p: &DecodeParams) -> Op {
    let rhi = (w >> 16) & 15;
    let rlo = (w >> 12) & 15;
    let rs = (w >> 8) & 15;
    let rm = w & 15;
    let a = w & (1 << 21) != 0;
    let s = w & (1 << 20) != 0;
    if (w >> 22) & 0x3F == 0 {
        let mut o = Op::new(if s { Kind::MulS } else { Kind::Mul });
        o.src = bit(rm) | bit(rs) | if a { bit(rlo) } else { 0 };
        o.rd = rhi as u8;
        o.rs = rs as u8;
        o.flags |= F_MAC;
        o
    } else if (w >> 23) & 0x1F == 0b00001 {
        let mut o = Op::new(if s { Kind::MulLongS } else { Kind::MulLong });
        o.src = bit(rm) | bit(rs) | if a { bit(rlo) | bit(rhi) } else { 0 };
        o.rd = rlo as u8;
        o.rd2 = rhi as u8;
        o.rs = rs as u8;
        o.flags |= F_MAC;
        if w & (1 << 22) == 0 {
            o.flags |= F_UNSIGNED_RS;
        }
        o
    } else if (w >> 23) & 0x1F == 0b00010 && (w >> 20) & 3 == 0 {
        let mut o = Op::new(Kind::Swap);
        o.src = bit(rhi) | bit(rm);
        o.rd = rlo as u8;
        o.issue = p.swp_issue;
        o.flags |= F_MEM;
        o
    } else {
        Op::new(Kind::Other)
    }
}

fn writes_back(w: u32) -> bool {
    w & (1 << 24) == 0 || w & (1 << 21) != 0
}

fn extra_load_store(w: u32, p: &DecodeParams) -> Op {
    let rn = (w >> 16) & 15;
    let rd = (w >> 12) & 15;
    let load = w & (1 << 20) != 0;
    let sh = (w >> 5) & 3;
    let mut o = Op::new(Kind::Load);
    o.src = bit(rn);
    if w & (1 << 22) == 0 {
        o.src |= bit(w & 15);
    }
    match (load, sh) {
        (true, _) => o.rd = rd as u8,
        (false, 0b01) => {
            o.kind = Kind::Store;
            o.src |= bit(rd);
        }
        (false, 0b10) => {
            o.kind = Kind::LoadDouble;
            o.rd = rd as u8;
            o.rd2 = (rd + 1) as u8 & 15;
            if rd == 12 {
                o.issue = 1u8.saturating_add(p.ldrd_r12_extra_issue);
            }
        }
        _ => {
            o.kind = Kind::StoreDouble;
            o.src |= bit(rd) | bit(rd + 1);
            o.issue = p.strd_issue;
        }
    }
    if writes_back(w) {
        o.dst = bit(rn);
        o.lat = p.alu_result;
    }
    o.flags |= F_MEM;
    o
}

fn single_load_store(w: u32, index: u16, shifted_index: u16, p: &DecodeParams) -> Op {
    let rn = (w >> 16) & 15;
    let rd = (w >> 12) & 15;
    let mut o = Op::new(Kind::Load);
    o.src = bit(rn) | index;
    o.ssrc = shifted_index;
    if w & (1 << 20) != 0 {
        if rd == 15 {
            o.flags |= F_PC;
        } else {
            o.rd = rd as u8;
        }
    } else {
        o.kind = Kind::Store;
        o.src |= bit(rd);
    }
    if writes_back(w) {
        o.dst = bit(rn);
        o.lat = p.alu_result;
    }
    o.flags |= F_MEM;
    o
}

/// LDM/STM (and the Thumb forms): `list` may include the pc.
fn block(list: u32, rn: u32, load: bool, writeback: bool, p: &DecodeParams) -> Op {
    let list = list as u16;
    let n = list.count_ones();
    let mut o = Op::new(if load { Kind::Ldm } else { Kind::Stm });
    o.list = list;
    o.src = bit(rn);
    o.flags |= F_MEM;
    if load {
        o.issue = sat8(p.ldm_issue_base + n);
        if list & 0x8000 != 0 {
            o.flags |= F_PC;
        }
        // With Rn in the list the loaded value wins over the writeback.
        if writeback && list & bit(rn) == 0 {
            o.dst = bit(rn);
        }
    } else {
        o.issue = sat8(p.stm_issue_base + n);
        o.src |= list;
        if writeback {
            o.dst = bit(rn);
        }
    }
    o.lat = p.alu_result;
    o
}

fn coprocessor_transfer(w: u32, p: &DecodeParams) -> Op {
    let rd = (w >> 12) & 15;
    let load = w & (1 << 20) != 0;
    match (w >> 8) & 15 {
        15 => {
            let mut o = p.alu();
            if load {
                o.dst = bit(rd) & 0x7FFF;
                o.lat = p.mrs_result;
            } else {
                o.kind = Kind::Other;
                o.src = bit(rd);
            }
            o
        }
        0 if !load && (w >> 21) & 7 == 1 => {
            // MIA family: opcode_3 = [19:16], Rs = [15:12], Rm = [3:0].
            let kind = match (w >> 16) & 15 {
                0b0000 => Kind::Mia,
                0b1000 => Kind::Miaph,
                _ => Kind::Miaxy,
            };
            let mut o = Op::new(kind);
            o.src = bit(rd) | bit(w & 15);
            o.rs = rd as u8;
            o.flags |= F_MAC;
            o
        }
        _ => Op::new(Kind::Other),
    }
}

/// Decode a Thumb instruction (its ARM equivalent's timing).
pub fn decode_thumb(hw: u16, p: &DecodeParams) -> Op {
    let mut o = decode_thumb_body(hw as u32, p);
    o.flags |= F_THUMB;
    o.finish()
}

fn decode_thumb_body(h: u32, p: &DecodeParams) -> Op {
    let lo = |s: u32| (h >> s) & 7;
    match h >> 11 {
        0b00000..=0b00010 => {
            // LSL/LSR/ASR Rd, Rm, #imm: MOV Rd, Rm, <shift> #imm; LSL #0 is a plain move.
            let mut o = p.alu();
            if h >> 11 == 0 && (h >> 6) & 31 == 0 {
                o.src = bit(lo(3));
            } else {
                o.ssrc = bit(lo(3));
            }
            o.dst = bit(lo(0));
            o
        }
        0b00011 => {
            let mut o = p.alu();
            o.src = bit(lo(3)) | if h & (1 << 10) == 0 { bit(lo(6)) } else { 0 };
            o.dst = bit(lo(0));
            o
        }
        0b00100..=0b00111 => {
            let rd = lo(8);
            let mut o = p.alu();
            match (h >> 11) & 3 {
                0 => o.dst = bit(rd),
                1 => o.src = bit(rd),
                _ => {
                    o.src = bit(rd);
                    o.dst = bit(rd);
                }
            }
            o
        }
        0b01000 => {
            if h & (1 << 10) == 0 {
                thumb_alu(h, p)
            } else {
                thumb_hi(h, p)
            }
        }
        0b01001 => {
            // LDR Rd, [pc, #imm]
            let mut o = Op::new(Kind::Load);
            o.rd = lo(8) as u8;
            o.flags |= F_MEM;
            o
        }
        0b01010 | 0b01011 => {
            // Register offset: STR, STRH, STRB, LDRSB, LDR, LDRH, LDRB, LDRSH.
            let mut o = Op::new(Kind::Load);
            o.src = bit(lo(3)) | bit(lo(6));
            if (h >> 9) & 7 < 3 {
                o.kind = Kind::Store;
                o.src |= bit(lo(0));
            } else {
                o.rd = lo(0) as u8;
            }
            o.flags |= F_MEM;
            o
        }
        0b01100..=0b10001 => {
            // Immediate offset word/byte/halfword; bit 11 = load.
            let mut o = Op::new(Kind::Load);
            o.src = bit(lo(3));
            if h & (1 << 11) == 0 {
                o.kind = Kind::Store;
                o.src |= bit(lo(0));
            } else {
                o.rd = lo(0) as u8;
            }
            o.flags |= F_MEM;
            o
        }
        0b10010 | 0b10011 => {
            let mut o = Op::new(Kind::Load);
            o.src = bit(13);
            if h & (1 << 11) == 0 {
                o.kind = Kind::Store;
                o.src |= bit(lo(8));
            } else {
                o.rd = lo(8) as u8;
            }
            o.flags |= F_MEM;
            o
        }
        0b10100 | 0b10101 => {
            let mut o = p.alu();
            o.src = if h & (1 << 11) != 0 { bit(13) } else { 0 };
            o.dst = bit(lo(8));
            o
        }
        0b10110 | 0b10111 => match (h >> 8) & 15 {
            0b0000 => {
                let mut o = p.alu();
                o.src = bit(13);
                o.dst = bit(13);
                o
            }
            0b0100 | 0b0101 => {
                let list = (h & 0xFF) | if h & 0x100 != 0 { 1 << 14 } else { 0 };
                block(list, 13, false, true, p)
            }
            0b1100 | 0b1101 => {
                let list = (h & 0xFF) | if h & 0x100 != 0 { 1 << 15 } else { 0 };
                block(list, 13, true, true, p)
            }
            _ => Op::new(Kind::Other),
        },
        0b11000 => block(h & 0xFF, lo(8), false, true, p),
        0b11001 => block(h & 0xFF, lo(8), true, true, p),
        0b11010 | 0b11011 => match (h >> 8) & 15 {
            14 => Op::new(Kind::Other),
            15 => Op::new(Kind::Swi),
            _ => Op::new(Kind::Branch),
        },
        0b11100 => Op::new(Kind::Branch),
        0b11110 => {
            // BL/BLX first half: lr = pc + offset, an ALU operation.
            let mut o = p.alu();
            o.dst = bit(14);
            o
        }
        _ => {
            // BL/BLX second half: reads and writes lr, branches (not predicted).
            let mut o = Op::new(Kind::BranchImm);
            o.src = bit(14);
            o.dst = bit(14);
            o.lat = p.alu_result;
            o
        }
    }
}

fn thumb_alu(h: u32, p: &DecodeParams) -> Op {
    let rd = h & 7;
    let rm = (h >> 3) & 7;
    let mut o = p.alu();
    match (h >> 6) & 15 {
        // LSL/LSR/ASR/ROR by register: MOVS Rd, Rd, <shift> Rm.
        0x2 | 0x3 | 0x4 | 0x7 => {
            o.src = bit(rd) | bit(rm);
            o.dst = bit(rd);
            o.issue = p.reg_shift_issue;
            o.lat = p.reg_shift_result;
            o.flags |= F_REG_SHIFT;
        }
        0x8 | 0xA | 0xB => o.src = bit(rd) | bit(rm),
        0x9 | 0xF => {
            o.src = bit(rm);
            o.dst = bit(rd);
        }
        0xD => {
            // MUL Rd, Rm = MULS Rd, Rm, Rd: Rs is Rd.
            o = Op::new(Kind::MulS);
            o.src = bit(rd) | bit(rm);
            o.rd = rd as u8;
            o.rs = rd as u8;
            o.flags |= F_MAC;
        }
        _ => {
            o.src = bit(rd) | bit(rm);
            o.dst = bit(rd);
        }
    }
    o
}

fn thumb_hi(h: u32, p: &DecodeParams) -> Op {
    let rd = ((h >> 4) & 8) | (h & 7);
    let rm = (h >> 3) & 15;
    let mut o = p.alu();
    match (h >> 8) & 3 {
        0 => {
            o.src = bit(rd) | bit(rm);
            if rd == 15 {
                o.flags |= F_PC;
            } else {
                o.dst = bit(rd);
            }
        }
        1 => o.src = bit(rd) | bit(rm),
        2 => {
            o.src = bit(rm);
            if rd == 15 {
                o.flags |= F_PC;
            } else {
                o.dst = bit(rd);
            }
        }
        _ => {
            o.kind = Kind::BranchReg;
            o.src = bit(rm);
            if h & 0x80 != 0 {
                o.dst = bit(14);
            }
        }
    }
    o
}

/// Direct-mapped cache of decoded ops keyed by (pc | Thumb, word), like the machine's
/// class cache: the word check keeps it exact for self-modifying code. One entry holds key,
/// word and op together so a lookup touches one cache line.
pub struct DecodeCache {
    /// A fixed-size array: masked indices need no bounds check.
    entries: Box<[Entry; DECODE_CACHE]>,
    params: DecodeParams,
}

#[derive(Clone, Copy)]
struct Entry {
    key: u32,
    word: u32,
    op: Op,
}

const DECODE_CACHE: usize = 1 << 14;

impl DecodeCache {
    pub fn new(cfg: &TimingConfig) -> Self {
        // Never a false hit: key u32::MAX is Thumb state, where words are below 0x1_0000.
        let empty = Entry { key: u32::MAX, word: u32::MAX, op: Op::new(Kind::Other) };
        let entries = vec![empty; DECODE_CACHE].into_boxed_slice().try_into().unwrap_or_else(|_| unreachable!());
        DecodeCache { entries, params: DecodeParams::new(cfg) }
    }

    /// The slot holding the op of `word` at `iw`, decoding it on a miss.
    #[inline]
    pub fn lookup(&mut self, iw: u32, word: u32) -> usize {
        let i = Self::index(iw);
        let e = &self.entries[i];
        if e.key != iw || e.word != word {
            self.fill(i, iw, word);
        }
        i
    }

    /// The latencies ops are decoded with.
    pub fn params(&self) -> &DecodeParams {
        &self.params
    }

    #[inline]
    pub fn op(&self, slot: usize) -> &Op {
        &self.entries[slot & (DECODE_CACHE - 1)].op
    }

    /// ARM instructions by word index, Thumb by halfword index: consecutive instructions
    /// use consecutive entries.
    #[inline(always)]
    fn index(iw: u32) -> usize {
        (iw >> (2 - (iw & 1))) as usize & (DECODE_CACHE - 1)
    }

    #[cold]
    fn fill(&mut self, i: usize, iw: u32, word: u32) {
        let op = decode(iw & 1 != 0, word, &self.params);
        self.entries[i] = Entry { key: iw, word, op };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arm(w: u32) -> Op {
        decode_arm(w, &DecodeParams::new(&TimingConfig::default()))
    }
    fn thumb(h: u16) -> Op {
        decode_thumb(h, &DecodeParams::new(&TimingConfig::default()))
    }

    #[test]
    fn arm_data_processing_operands() {
        // add r0, r1, r2, lsl #2: r2 through the shifter.
        let o = arm(0xe0810102);
        assert_eq!((o.kind, o.src, o.ssrc, o.dst, o.issue), (Kind::Alu, 1 << 1, 1 << 2, 1, 1));
        // add r0, r1, r2: plain operand.
        let o = arm(0xe0810002);
        assert_eq!((o.src, o.ssrc), (0b110, 0));
        // add r0, r1, r2, lsl r3: register shift, issue 2, result 2.
        let o = arm(0xe0810312);
        assert_eq!((o.src, o.issue, o.lat), (0b1110, 2, 2));
        // mov r0, r1, rrx: register-shift timing.
        let o = arm(0xe1a00061);
        assert_eq!((o.src, o.issue), (0b10, 2));
        // cmp r1, #3: no destination.
        let o = arm(0xe3510003);
        assert_eq!((o.src, o.dst), (0b10, 0));
        // mov pc, lr: PC write, no register destination.
        let o = arm(0xe1a0f00e);
        assert!(o.has(F_PC));
        assert_eq!((o.src, o.dst), (1 << 14, 0));
        // moveq r0, #1: conditional.
        assert!(arm(0x03a00001).has(F_COND));
    }

    #[test]
    fn arm_loads_stores_and_blocks() {
        // ldr r0, [r1, #4]!
        let o = arm(0xe5b10004);
        assert_eq!((o.kind, o.rd, o.src, o.dst), (Kind::Load, 0, 0b10, 0b10));
        // ldr r0, [r1, r2, lsl #2]
        let o = arm(0xe7910102);
        assert_eq!((o.src, o.ssrc), (0b10, 0b100));
        // ldr pc, [sp], #4
        assert!(arm(0xe49df004).has(F_PC));
        // strd r2, [r0]
        let o = arm(0xe1c020f0);
        assert_eq!((o.kind, o.src, o.issue), (Kind::StoreDouble, 0b1101, 2));
        // ldrd r12, [r0]: one more issue cycle.
        let o = arm(0xe1c0c0d0);
        assert_eq!((o.kind, o.rd, o.rd2, o.issue), (Kind::LoadDouble, 12, 13, 2));
        // ldmia r0!, {r1-r3}
        let o = arm(0xe8b0000e);
        assert_eq!((o.kind, o.issue, o.list, o.dst), (Kind::Ldm, 5, 0b1110, 1));
        // ldmfd sp!, {r4, pc}
        let o = arm(0xe8bd8010);
        assert!(o.has(F_PC));
        assert_eq!(o.issue, 4);
        // stmfd sp!, {r4, lr}
        let o = arm(0xe92d4010);
        assert_eq!((o.kind, o.src, o.issue), (Kind::Stm, (1 << 13) | (1 << 4) | (1 << 14), 4));
    }

    #[test]
    fn arm_multiplies_and_branches() {
        // mul r0, r1, r2: Rs = r2.
        let o = arm(0xe0000291);
        assert_eq!((o.kind, o.rd, o.rs, o.src), (Kind::Mul, 0, 2, 0b110));
        // umlal r0, r1, r2, r3
        let o = arm(0xe0a10392);
        assert_eq!((o.kind, o.rd, o.rd2, o.rs, o.src), (Kind::MulLong, 0, 1, 3, 0b1111));
        assert!(o.has(F_UNSIGNED_RS));
        // smlabb r0, r1, r2, r3
        let o = arm(0xe1003281);
        assert_eq!((o.kind, o.rd, o.src), (Kind::MulHalf, 0, 0b1110));
        // bl: lr written.
        let o = arm(0xeb000000);
        assert_eq!((o.kind, o.dst), (Kind::Branch, 1 << 14));
        // bx lr, blx r3
        assert_eq!(arm(0xe12fff1e).kind, Kind::BranchReg);
        assert_eq!(arm(0xe12fff33).dst, 1 << 14);
        // blx #imm
        assert_eq!(arm(0xfa000000).kind, Kind::BranchImm);
        // swi
        assert_eq!(arm(0xef123456).kind, Kind::Swi);
        // mia acc0, r1, r2 (Rs = r2 in [15:12]); mar / mra
        let o = arm(0xee202011);
        assert_eq!((o.kind, o.rs), (Kind::Mia, 2));
        assert_eq!(arm(0xec410000).kind, Kind::Mar);
        assert_eq!(arm(0xec510000).kind, Kind::Mra);
        // qdadd r0, r1, r2: Rn = r2 through the shifter.
        let o = arm(0xe1420051);
        assert_eq!((o.src, o.ssrc), (0b10, 0b100));
    }

    #[test]
    fn index_forms_match_the_masks() {
        // add r0, r1, r2, lsl #2: s = [r1], ss = r2, d = [r0].
        let o = arm(0xe0810102);
        assert_eq!((o.s, o.ss, o.d, o.has(F_MANY)), ([1, ZERO_REG, ZERO_REG], 2, [0, NO_REG], false));
        // ldr r0, [r1, #4]!: base writeback in d, load destination in rd.
        let o = arm(0xe5b10004);
        assert_eq!((o.s[0], o.d, o.rd), (1, [1, NO_REG], 0));
        // stmfd sp!, {r4, lr}: three sources fit.
        assert!(!arm(0xe92d4010).has(F_MANY));
        // stmia r0, {r1-r4}: five sources do not.
        assert!(arm(0xe880001e).has(F_MANY));
        // ldr pc: no scoreboarded destination.
        assert_eq!(arm(0xe49df004).rd, NO_REG);
    }

    #[test]
    fn thumb_forms() {
        // lsls r0, r1, #2: shifter operand; movs r0, r1 (lsl #0): plain.
        assert_eq!(thumb(0x0088).ssrc, 0b10);
        assert_eq!(thumb(0x0008).src, 0b10);
        // lsls r0, r1 (register): issue 2.
        assert_eq!(thumb(0x4088).issue, 2);
        // muls r0, r1: Rs = Rd.
        let o = thumb(0x4348);
        assert_eq!((o.kind, o.rs, o.rd), (Kind::MulS, 0, 0));
        // pop {r4, pc}: LDM with pc, writeback sp.
        let o = thumb(0xbd10);
        assert_eq!((o.kind, o.list, o.dst), (Kind::Ldm, 0x8010, 1 << 13));
        assert!(o.has(F_PC) && o.has(F_THUMB));
        // push {r4, lr}
        let o = thumb(0xb510);
        assert_eq!((o.kind, o.list), (Kind::Stm, 0x4010));
        // mov pc, lr (hi) / bx lr / beq / b / bl pair
        assert!(thumb(0x46f7).has(F_PC));
        assert_eq!(thumb(0x4770).kind, Kind::BranchReg);
        assert_eq!(thumb(0xd0fe).kind, Kind::Branch);
        assert_eq!(thumb(0xe7fe).kind, Kind::Branch);
        assert_eq!(thumb(0xf000).kind, Kind::Alu);
        assert_eq!(thumb(0xf800).kind, Kind::BranchImm);
        assert_eq!(thumb(0xdfab).kind, Kind::Swi);
        // ldr r0, [r1, #4]
        let o = thumb(0x6848);
        assert_eq!((o.kind, o.rd, o.src), (Kind::Load, 0, 0b10));
    }
}

//! Retire events: what the core tells the trace module about each retired instruction.

use std::fmt;
use std::str::FromStr;

/// Control-flow class of an instruction, as the trace module's interface sees it
/// (paper Fig. 1: direct/indirect, conditional/unconditional, plus returns).
///
/// The class is a property of the instruction *encoding*; whether it was taken is
/// carried separately. Exceptions are a separate flag on [`RetireEvent`] because an
/// exception can follow an instruction of any class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum BranchClass {
    /// Not a control-flow instruction (includes SWI: its departure is the exception flag).
    #[default]
    None = 0,
    /// Conditional branch whose target is in the encoding (ARM B/BL with cond != AL, Thumb Bcc).
    DirectCond = 1,
    /// Unconditional branch whose target is in the encoding (B, BL, BLX imm, Thumb B, BL pair).
    DirectUncond = 2,
    /// Conditional instruction that writes the PC from a register or memory.
    IndirectCond = 3,
    /// Unconditional instruction that writes the PC from a register or memory.
    IndirectUncond = 4,
    /// Function return (BX lr, MOV pc,lr, POP/LDM sp with pc, LDR pc,\[sp\]...), any condition.
    Return = 5,
}

impl BranchClass {
    pub const ALL: [BranchClass; 6] = [
        BranchClass::None,
        BranchClass::DirectCond,
        BranchClass::DirectUncond,
        BranchClass::IndirectCond,
        BranchClass::IndirectUncond,
        BranchClass::Return,
    ];

    /// True if a *taken* instruction of this class ends a stream (paper Fig. 2, condition (a)).
    /// Direct unconditional branches are followed inside a stream.
    #[inline]
    pub fn ends_stream_when_taken(self) -> bool {
        !matches!(self, BranchClass::None | BranchClass::DirectUncond)
    }

    /// True if the target is not in the encoding.
    #[inline]
    pub fn is_indirect(self) -> bool {
        matches!(
            self,
            BranchClass::IndirectCond | BranchClass::IndirectUncond | BranchClass::Return
        )
    }

    pub fn name(self) -> &'static str {
        match self {
            BranchClass::None => "none",
            BranchClass::DirectCond => "dcond",
            BranchClass::DirectUncond => "duncond",
            BranchClass::IndirectCond => "icond",
            BranchClass::IndirectUncond => "iuncond",
            BranchClass::Return => "ret",
        }
    }
}

impl fmt::Display for BranchClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for BranchClass {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        BranchClass::ALL
            .iter()
            .copied()
            .find(|c| c.name() == s)
            .ok_or_else(|| {
                format!("unknown branch class '{s}' (expected none, dcond, duncond, icond, iuncond or ret)")
            })
    }
}

/// One retired instruction, as delivered by the core (DESIGN.md "RetireEvent").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct RetireEvent {
    /// Address of the instruction (halfword aligned in Thumb, word aligned in ARM state).
    pub pc: u32,
    /// Instruction word (Thumb: the halfword in the low 16 bits).
    pub insn: u32,
    /// Executed in Thumb state.
    pub thumb: bool,
    /// Static control-flow class of the encoding.
    pub class: BranchClass,
    /// The instruction changed the PC (a branch whose condition passed).
    pub taken: bool,
    /// Address of the next instruction to execute (with bit 0 = Thumb state of that instruction).
    pub next_pc: u32,
    /// Control leaves this instruction for an exception vector (SWI, undefined, abort, or an
    /// interrupt taken right after it). `next_pc` is then the vector.
    pub exception: bool,
    /// Retire cycle (0 when the producer has no timing).
    pub cycle: u64,
}

/// Consecutive ordinary instructions reported at once: each falling through to the next in
/// the same state (none taken, none an exception), and each either of class none, executed
/// or not, but not ARM's `MOV lr, pc` (class none, but pft takes it as the link of a call
/// through a register: [`crate::pft::ARM_MOV_LR_PC`]), or, for a consumer that asks for
/// them, a conditional branch not taken ([`PlainRun::may_contain_branch`]).
/// A run hook that offers a budget receives them this way instead of one event each
/// (`streamtrace_sim::RetireHook::plain_budget`, `streamtrace_sim::RetireHook::plain_branches`);
/// the instruction words, the classes and the memory accesses are not reported, nor the
/// retire cycles between the first and the last.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct PlainRun {
    /// Address of the first instruction.
    pub pc: u32,
    pub thumb: bool,
    /// Instructions in the run (at least one).
    pub count: u32,
    /// Retire cycles of the first and the last instruction (0 when the producer has no
    /// timing). A timed core's retire cycles increase by at least one per instruction.
    pub first_cycle: u64,
    pub last_cycle: u64,
}

impl PlainRun {
    /// Whether an instruction of `class` (with word `insn`, in Thumb state or not) may be
    /// in a run, provided it falls through in the same state without an exception: class
    /// none, and not ARM's `MOV lr, pc`.
    #[inline(always)]
    pub fn may_contain(class: BranchClass, thumb: bool, insn: u32) -> bool {
        class == BranchClass::None && (thumb || insn != crate::pft::ARM_MOV_LR_PC)
    }

    /// Whether a conditional branch of `class` that was not taken may be in a run for a
    /// consumer that asks for such branches: dcond and icond, which fall through whenever
    /// they are not taken. (Not `ret`: in some states and encodings it is always taken,
    /// which a run could not check. pft sees every direction point and does not ask; the
    /// other schemes' streams go on past a branch not taken, and their runs hold it.)
    #[inline(always)]
    pub fn may_contain_branch(class: BranchClass) -> bool {
        matches!(class, BranchClass::DirectCond | BranchClass::IndirectCond)
    }

    /// The first instruction's event (its word unknown: 0; its class taken as none).
    #[inline]
    pub fn first_event(&self) -> RetireEvent {
        let size = if self.thumb { 2 } else { 4 };
        RetireEvent {
            pc: self.pc,
            insn: 0,
            thumb: self.thumb,
            class: BranchClass::None,
            taken: false,
            next_pc: (self.pc | self.thumb as u32).wrapping_add(size),
            exception: false,
            cycle: self.first_cycle,
        }
    }

    /// Where the instruction after the run is, in interworking form.
    #[inline]
    pub fn next_iw(&self) -> u32 {
        let size: u32 = if self.thumb { 2 } else { 4 };
        (self.pc | self.thumb as u32).wrapping_add(size.wrapping_mul(self.count))
    }
}

impl RetireEvent {
    /// The instruction's address in interworking form: bit 0 carries the Thumb state.
    #[inline]
    pub fn iw_addr(&self) -> u32 {
        self.pc | self.thumb as u32
    }

    /// The next instruction in the same state, in interworking form: `next_pc` of an event
    /// that did not change the PC.
    #[inline]
    pub fn sequential_next(&self) -> u32 {
        self.iw_addr().wrapping_add(self.size())
    }

    /// The class's instructions change the PC whenever they execute: `duncond`, `iuncond`,
    /// and `ret` in Thumb state or with ARM condition AL / `0xF` (trace-format.md section 2).
    #[inline]
    pub fn always_taken(&self) -> bool {
        match self.class {
            BranchClass::DirectUncond | BranchClass::IndirectUncond => true,
            BranchClass::Return => self.thumb || self.insn >> 28 >= 0xE,
            _ => false,
        }
    }

    /// Size of the instruction in bytes.
    #[inline]
    pub fn size(&self) -> u32 {
        if self.thumb {
            2
        } else {
            4
        }
    }
}

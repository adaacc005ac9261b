//! Capture of what a Whole Execution Trace needs, per retired instruction (algorithms.md
//! §6.5): the registers and flags it read, the registers and flags it defined with their
//! values, and its memory accesses with addresses and values.
//!
//! Defs and uses come from the static operand decoding the timing model already does
//! (`streamtrace_sim::timing::decode`), so there is one ARM/Thumb operand decoder; this
//! module only adds the NZCV flags, which the pipeline model does not need. A test checks
//! on every test program that each register or flag value that changed is among the defs.
//!
//! Scope: user-mode programs (no banked registers); semihosting calls read r0 and r1 and
//! define r0 (memory they write on the program's behalf, e.g. a file read into a buffer,
//! is not a def of any instruction, so later loads from it have no data parent).

use streamtrace_model::BranchClass;
use streamtrace_sim::timing::decode::{DecodeCache, Kind, Op};
use streamtrace_sim::timing::TimingConfig;
use streamtrace_sim::{Cpu, Machine, MemAccess, SimError, StepOutcome};

/// An operand port: registers r0-r14 by number, and the NZCV flags.
pub type Port = u8;
/// The NZCV flags as one port (value: N<<3 | Z<<2 | C<<1 | V).
pub const FLAGS: Port = 16;

/// Everything the WET builder sees of one retired instruction.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Step {
    pub pc: u32,
    pub thumb: bool,
    /// The instruction (a Thumb halfword in the low bits).
    pub word: u32,
    pub class: BranchClass,
    /// The instruction wrote the PC (a taken branch).
    pub taken: bool,
    pub exception: bool,
    /// Address of the next instruction, bit 0 set for Thumb.
    pub next_pc: u32,
    /// A call: a control transfer that writes the link register.
    pub call: bool,
    /// The condition passed (always true for unconditional instructions). A failed
    /// instruction reads the flags and defines nothing.
    pub executed: bool,
    /// Ports read, ascending (the pc, which reads as a constant, is not a port).
    pub uses: Vec<Port>,
    /// Ports defined with their values after the instruction, ascending by port.
    pub defs: Vec<(Port, u32)>,
    /// Registers that receive memory data (load destinations, LDM lists), as a mask.
    pub loaded: u16,
    /// Data accesses in program order.
    pub accesses: Vec<MemAccess>,
}

impl Step {
    /// The instruction address with the state in bit 0, the identity of a statement.
    pub fn iw(&self) -> u32 {
        self.pc | self.thumb as u32
    }
}

/// Receives the steps of a run in order.
pub trait StepSink {
    fn step(&mut self, s: &Step);
}

impl<F: FnMut(&Step)> StepSink for F {
    fn step(&mut self, s: &Step) {
        self(s)
    }
}

fn nzcv(cpu: &Cpu) -> u32 {
    (cpu.n as u32) << 3 | (cpu.z as u32) << 2 | (cpu.c as u32) << 1 | cpu.v as u32
}

/// Flag effects the operand decoder does not record: (reads NZCV, writes NZCV).
pub fn flag_effects(word: u32, thumb: bool) -> (bool, bool) {
    if thumb {
        let hw = word as u16;
        let reads = (hw >> 12 == 0b1101 && (hw >> 8) & 15 < 14) // B<cond>
            || hw >> 6 == 0b01_0000_0101 // ADC
            || hw >> 6 == 0b01_0000_0110; // SBC
        let writes = hw >> 13 == 0 // shifts by immediate, ADD/SUB 3-bit
            || hw >> 13 == 1 // MOV/CMP/ADD/SUB 8-bit immediate
            || hw >> 10 == 0b010000 // ALU operations
            || hw >> 8 == 0b0100_0101; // CMP with a high register
        return (reads, writes);
    }
    let cond = word >> 28;
    let mut reads = cond < 0xE;
    let mut writes = false;
    if cond == 0xF {
        return (false, false);
    }
    let s = word & (1 << 20) != 0;
    match (word >> 25) & 7 {
        0b000 | 0b001 => {
            let imm = word & (1 << 25) != 0;
            let op = (word >> 21) & 15;
            if !imm && word & 0x90 == 0x90 {
                // Multiplies: MUL/MLA and the long forms set N and Z with S.
                if (word >> 5) & 3 == 0 && (word >> 24) & 1 == 0 && s {
                    writes = true;
                }
            } else if (word >> 23) & 3 == 0b10 && !s {
                // Miscellaneous: MRS reads the flags, MSR with the f field writes them.
                if !imm && word & 0x0FBF_0FFF == 0x010F_0000 {
                    reads = true;
                } else if word & (1 << 21) != 0 && word & (1 << 19) != 0 && word & (1 << 22) == 0 {
                    writes = true;
                }
            } else {
                writes = s;
                // ADC, SBC, RSC take the carry in; RRX (ROR #0) shifts it in.
                if matches!(op, 5..=7) || (!imm && word & 0xFF0 == 0x060) {
                    reads = true;
                }
            }
        }
        _ => {}
    }
    (reads, writes)
}

/// The registers an op reads and writes, and those of the writes that receive memory data,
/// as bit masks over r0-r14.
fn register_masks(op: &Op) -> (u16, u16, u16) {
    let mut uses = op.src | op.ssrc;
    if op.rs < 16 {
        uses |= 1 << op.rs;
    }
    let mut defs = op.dst;
    for r in [op.rd, op.rd2] {
        if r < 15 {
            defs |= 1 << r;
        }
    }
    let mut loaded = 0u16;
    for r in [op.rd, op.rd2] {
        if r < 15 && matches!(op.kind, Kind::Load | Kind::LoadDouble | Kind::Swap) {
            loaded |= 1 << r;
        }
    }
    match op.kind {
        Kind::Ldm => {
            defs |= op.list;
            loaded |= op.list;
        }
        Kind::Stm => uses |= op.list,
        // Semihosting: the operation number and the parameter block in, the result out.
        Kind::Swi => {
            uses |= 0b11;
            defs |= 0b1;
        }
        _ => {}
    }
    (uses & 0x7FFF, defs & 0x7FFF, loaded & 0x7FFF)
}

#[derive(Clone, Copy)]
struct Operands {
    uses: u16,
    defs: u16,
    loaded: u16,
    reads_flags: bool,
    writes_flags: bool,
    conditional: bool,
}

/// Operands of each instruction: the timing model's decode cache (one decode per address
/// and word), plus the flag effects, which are a few bit tests.
struct OperandCache {
    decode: DecodeCache,
}

impl OperandCache {
    fn new() -> Self {
        OperandCache { decode: DecodeCache::new(&TimingConfig::default()) }
    }

    fn get(&mut self, iw: u32, word: u32) -> Operands {
        let thumb = iw & 1 == 1;
        let slot = self.decode.lookup(iw, word);
        let (uses, defs, loaded) = register_masks(self.decode.op(slot));
        let (reads_flags, writes_flags) = flag_effects(word, thumb);
        Operands { uses, defs, loaded, reads_flags, writes_flags, conditional: !thumb && word >> 28 < 0xE }
    }
}

/// Run `machine` to its exit or `max_insns` instructions, giving `sink` each step.
/// Returns the exit code (None when the cap stopped the run).
pub fn capture<S: StepSink + ?Sized>(machine: &mut Machine, max_insns: u64, sink: &mut S) -> Result<Option<i32>, SimError> {
    capture_impl(machine, max_insns, sink, None)
}

/// As [`capture`], and also compare the register file before and after every step: each
/// register or flag whose value changed must be among the step's defs. Returns the
/// violations found (at most `limit`), naming the instruction.
pub fn capture_checking_defs<S: StepSink + ?Sized>(
    machine: &mut Machine,
    max_insns: u64,
    sink: &mut S,
    limit: usize,
) -> Result<Vec<String>, SimError> {
    let mut problems = Vec::new();
    capture_impl(machine, max_insns, sink, Some((&mut problems, limit)))?;
    Ok(problems)
}

fn capture_impl<S: StepSink + ?Sized>(
    machine: &mut Machine,
    max_insns: u64,
    sink: &mut S,
    mut check: Option<(&mut Vec<String>, usize)>,
) -> Result<Option<i32>, SimError> {
    let mut ops = OperandCache::new();
    let mut step = Step::default();
    let mut ev_copy: Option<streamtrace_model::RetireEvent> = None;
    while machine.retired < max_insns {
        let pc = machine.cpu.r[15];
        let thumb = machine.cpu.thumb;
        let word = if thumb { machine.mem.read16(pc).map(|h| h as u32) } else { machine.mem.read32(pc) };
        // A fetch fault is reported by the step itself.
        let cond_ok = word.map(|w| thumb || machine.cpu.cond_passed(w >> 28)).unwrap_or(true);
        let before = check.is_some().then(|| (machine.cpu.r, nzcv(&machine.cpu)));
        step.accesses.clear();
        let accesses = &mut step.accesses;
        let mut hook = |ev: &streamtrace_model::RetireEvent, acc: &[MemAccess]| {
            ev_copy = Some(*ev);
            accesses.extend_from_slice(acc);
        };
        let logging = machine.log_accesses;
        machine.log_accesses = true;
        let outcome = machine.step(&mut hook);
        machine.log_accesses = logging;
        let outcome = outcome?;
        if let StepOutcome::Exited(code) = outcome {
            if ev_copy.is_none() {
                return Ok(Some(code));
            }
        }
        let ev = ev_copy.take().expect("a running step retires an instruction");
        let o = ops.get(ev.pc | ev.thumb as u32, ev.insn);
        step.pc = ev.pc;
        step.thumb = ev.thumb;
        step.word = ev.insn;
        step.class = ev.class;
        step.taken = ev.taken;
        step.exception = ev.exception;
        step.next_pc = ev.next_pc;
        step.executed = !o.conditional || cond_ok;
        step.call = ev.class != BranchClass::None && ev.class != BranchClass::Return && o.defs & (1 << 14) != 0;
        step.loaded = if step.executed { o.loaded } else { 0 };
        step.uses.clear();
        step.defs.clear();
        if step.executed {
            step.uses.extend((0..15u8).filter(|r| o.uses & (1 << r) != 0));
            step.defs.extend((0..15u8).filter(|r| o.defs & (1 << r) != 0).map(|r| (r, machine.cpu.r[r as usize])));
            if o.writes_flags {
                step.defs.push((FLAGS, nzcv(&machine.cpu)));
            }
        }
        if o.reads_flags || o.conditional {
            step.uses.push(FLAGS);
        }
        if let (Some((problems, limit)), Some((regs, flags))) = (check.as_mut(), before) {
            let declared = |p: Port| step.defs.iter().any(|d| d.0 == p);
            for r in 0..15u8 {
                if regs[r as usize] != machine.cpu.r[r as usize] && !declared(r) && problems.len() < *limit {
                    problems.push(format!("{:#010x} ({:#010x}): r{r} changed but is not a def", step.pc, ev.insn));
                }
            }
            if flags != nzcv(&machine.cpu) && !declared(FLAGS) && problems.len() < *limit {
                problems.push(format!("{:#010x} ({:#010x}): NZCV changed but is not a def", step.pc, ev.insn));
            }
        }
        sink.step(&step);
        if let StepOutcome::Exited(code) = outcome {
            return Ok(Some(code));
        }
    }
    Ok(None)
}

/// Run a program as `streamtrace run` and the sweeps do (its command line, working
/// directory, output discarded, deterministic clock), giving `sink` each step.
pub fn capture_program<S: StepSink + ?Sized>(
    p: &streamtrace_sim::sweep::ProgramSpec,
    max_insns: u64,
    sink: &mut S,
) -> Result<Option<i32>, String> {
    let mut m = p.machine()?;
    capture(&mut m, max_insns, sink).map_err(|e| format!("{}: {e}", p.name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thumb_flag_effects() {
        assert_eq!(flag_effects(0xD001, true), (true, false)); // BEQ
        assert_eq!(flag_effects(0xE001, true), (false, false)); // B
        assert_eq!(flag_effects(0x2001, true), (false, true)); // MOVS r0, #1
        assert_eq!(flag_effects(0x4148, true), (true, true)); // ADCS r0, r1
        assert_eq!(flag_effects(0x4448, true), (false, false)); // ADD r0, r9 (high register)
        assert_eq!(flag_effects(0x4548, true), (false, true)); // CMP r0, r9
    }

    #[test]
    fn arm_flag_effects() {
        assert_eq!(flag_effects(0xE080_0001, false), (false, false)); // ADD r0, r0, r1
        assert_eq!(flag_effects(0xE090_0001, false), (false, true)); // ADDS
        assert_eq!(flag_effects(0xE350_0000, false), (false, true)); // CMP r0, #0
        assert_eq!(flag_effects(0x0080_0001, false), (true, false)); // ADDEQ
        assert_eq!(flag_effects(0xE0A0_0001, false), (true, false)); // ADC
        assert_eq!(flag_effects(0xE1A0_0060, false), (true, false)); // MOV r0, r0, RRX
        assert_eq!(flag_effects(0xE10F_0000, false), (true, false)); // MRS r0, CPSR
        assert_eq!(flag_effects(0xE128_F000, false), (false, true)); // MSR CPSR_f, r0
        assert_eq!(flag_effects(0xE012_0091, false), (false, true)); // MULS r2, r1, r0
        assert_eq!(flag_effects(0xE59F_0000, false), (false, false)); // LDR r0, [pc]
    }
}

//! The machine: CPU + memory + semihosting, the fetch/execute loop, and retire events.
//!
//! The loop is the one place every instruction passes through; a retire hook (the trace
//! module, a timing model, a PC trace writer) sees each retired instruction with its memory
//! accesses. Hooks are generic parameters, so the functional path pays nothing for them
//! when the hook is empty.

use thiserror::Error;

use streamtrace_isa::ElfImage;
use streamtrace_model::{BranchClass, PlainRun, RetireEvent};

use crate::arm::COND_ALWAYS;
use crate::cpu::{Cpu, ExceptionKind};
use crate::decoded;
use crate::linux::LinuxProcess;
use crate::memory::{MemFault, Memory};
use crate::semihost::{Semihost, SemihostOutcome};
use crate::timing::{Captured, ConfigError, TimingConfig, TimingModel, TimingReport};

/// One data access of an instruction, for the host-side stages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct MemAccess {
    pub addr: u32,
    /// 1, 2 or 4 bytes.
    pub size: u8,
    pub write: bool,
    /// Value read or written (zero-extended).
    pub value: u32,
}

/// Devices behind the addresses no RAM region covers, and the coprocessors a system
/// platform adds (system mode, docs/citcat.md). Only consulted when RAM faults, so the
/// functional path pays nothing for it.
pub trait IoBus {
    /// A load of `size` bytes; `None` is a data abort.
    fn read(&mut self, addr: u32, size: u8) -> Option<u32>;
    /// A store; `false` is a data abort.
    fn write(&mut self, addr: u32, size: u8, value: u32) -> bool;
    /// MRC (`load`) or MCR on coprocessor `cp` (7 or 14): the value read, or for MCR any
    /// `Some`; `None` makes the instruction undefined.
    fn coproc(&mut self, cp: u32, load: bool, op: CoprocOp, value: u32) -> Option<u32>;
}

/// The register selector of an MCR/MRC: opcode_1, CRn, CRm, opcode_2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoprocOp {
    pub opc1: u32,
    pub crn: u32,
    pub crm: u32,
    pub opc2: u32,
}

/// Memory as the executors see it: every access is checked and, when logging is on,
/// recorded for the retire hook. (The accessors are always inlined: a load or store is a
/// few instructions on the fast path, and a call would double them.)
pub struct Bus<'a> {
    pub mem: &'a mut Memory,
    pub log: &'a mut Vec<MemAccess>,
    pub logging: bool,
    /// The first access that faulted (executors turn it into a data abort).
    pub fault: Option<MemFault>,
    /// Devices (system mode).
    pub io: Option<&'a mut dyn IoBus>,
    /// When set, every RAM byte a store overwrites is pushed with its old value first
    /// (the CITCAT monitor shows fills as they were before the instruction).
    pub prior: Option<&'a mut Vec<(u32, u8)>>,
}

impl<'a> Bus<'a> {
    pub fn new(mem: &'a mut Memory, log: &'a mut Vec<MemAccess>, logging: bool) -> Self {
        Bus { mem, log, logging, fault: None, io: None, prior: None }
    }

    #[inline]
    fn check<T>(&mut self, r: Result<T, MemFault>) -> Result<T, MemFault> {
        if let Err(f) = &r {
            self.fault.get_or_insert(*f);
        }
        r
    }

    /// RAM faulted: try the devices. (Out of line: the accessors' callers stay small.)
    #[cold]
    #[inline(never)]
    fn io_read(&mut self, addr: u32, size: u8, f: MemFault) -> Result<u32, MemFault> {
        match self.io.as_deref_mut().and_then(|io| io.read(addr, size)) {
            Some(v) => Ok(v),
            None => self.check(Err(f)),
        }
    }

    #[cold]
    #[inline(never)]
    fn io_write(&mut self, addr: u32, size: u8, value: u32, f: MemFault) -> Result<(), MemFault> {
        match self.io.as_deref_mut().map(|io| io.write(addr, size, value)) {
            Some(true) => Ok(()),
            _ => self.check(Err(f)),
        }
    }

    #[inline(always)]
    fn save_prior(&mut self, addr: u32, size: u8) {
        if self.prior.is_some() {
            self.save_prior_bytes(addr, size);
        }
    }

    /// (Out of line: the store handlers stay small when no monitor asks for prior bytes.)
    #[inline(never)]
    fn save_prior_bytes(&mut self, addr: u32, size: u8) {
        if let Some(p) = self.prior.as_deref_mut() {
            for i in 0..size as u32 {
                if let Ok(b) = self.mem.read8(addr.wrapping_add(i)) {
                    p.push((addr.wrapping_add(i), b));
                }
            }
        }
    }

    /// The bytes of a block load `[addr, addr + len)` at once: `Some` when nothing is logged
    /// and they lie in one allocated page, where the loads one by one could not fault and
    /// would read the same.
    #[inline(always)]
    pub fn fast_read_span(&self, addr: u32, len: usize) -> Option<&[u8]> {
        if self.logging {
            return None;
        }
        self.mem.span(addr, len)
    }

    /// The bytes of a block store `[addr, addr + len)` at once: `Some` when nothing is logged
    /// or saved and they lie in one allocated page without decoded instructions, where the
    /// stores one by one would be plain writes.
    #[inline(always)]
    pub fn fast_write_span(&mut self, addr: u32, len: usize) -> Option<&mut [u8]> {
        if self.logging || self.prior.is_some() {
            return None;
        }
        self.mem.plain_span_mut(addr, len)
    }

    /// A load's bytes when nothing is logged and they lie in one allocated page, where the
    /// access cannot fault: the handlers' fast path, which needs no call (and so no saved
    /// registers); `None`: make the full access.
    #[inline(always)]
    pub fn peek<const N: usize>(&self, addr: u32) -> Option<[u8; N]> {
        if self.logging {
            return None;
        }
        self.mem.peek::<N>(addr)
    }

    /// A store when nothing is logged or saved and it lies in one allocated page without
    /// decoded instructions (a plain write): the handlers' fast path; false: nothing written,
    /// make the full access.
    #[inline(always)]
    pub fn poke<const N: usize>(&mut self, addr: u32, bytes: [u8; N]) -> bool {
        if self.logging || self.prior.is_some() {
            return false;
        }
        self.mem.poke::<N>(addr, bytes)
    }

    /// MRC/MCR on a coprocessor the platform provides; `None` = undefined.
    pub fn coproc(&mut self, cp: u32, load: bool, op: CoprocOp, value: u32) -> Option<u32> {
        self.io.as_deref_mut()?.coproc(cp, load, op, value)
    }

    #[inline(always)]
    fn record(&mut self, addr: u32, size: u8, write: bool, value: u32) {
        if self.logging {
            let access = MemAccess { addr, size, write, value };
            // The log is cleared every instruction and made with room for the longest one,
            // so the push inline is the one that cannot grow (the capacity test lets the
            // compiler drop the growth path); a full log takes the call.
            if self.log.len() < self.log.capacity() {
                self.log.push(access);
            } else {
                self.push_record(access);
            }
        }
    }

    /// (Out of line: with the push and its growth path inlined, every load and store
    /// handler saved and restored all callee-saved registers, logging or not.)
    #[cold]
    #[inline(never)]
    fn push_record(&mut self, access: MemAccess) {
        self.log.push(access);
    }

    #[inline(always)]
    pub fn read8(&mut self, addr: u32) -> Result<u8, MemFault> {
        let v = match self.mem.read8(addr) {
            Ok(v) => v,
            Err(f) => self.io_read(addr, 1, f)? as u8,
        };
        self.record(addr, 1, false, v as u32);
        Ok(v)
    }

    #[inline(always)]
    pub fn read16(&mut self, addr: u32) -> Result<u16, MemFault> {
        let v = match self.mem.read16(addr) {
            Ok(v) => v,
            Err(f) => self.io_read(addr, 2, f)? as u16,
        };
        self.record(addr, 2, false, v as u32);
        Ok(v)
    }

    /// Word read at `addr` exactly (no alignment or rotation: that is the executor's rule).
    #[inline(always)]
    pub fn read32(&mut self, addr: u32) -> Result<u32, MemFault> {
        let v = match self.mem.read32(addr) {
            Ok(v) => v,
            Err(f) => self.io_read(addr, 4, f)?,
        };
        self.record(addr, 4, false, v);
        Ok(v)
    }

    #[inline(always)]
    pub fn write8(&mut self, addr: u32, v: u8) -> Result<(), MemFault> {
        self.save_prior(addr, 1);
        if let Err(f) = self.mem.write8(addr, v) {
            self.io_write(addr, 1, v as u32, f)?;
        }
        self.record(addr, 1, true, v as u32);
        Ok(())
    }

    #[inline(always)]
    pub fn write16(&mut self, addr: u32, v: u16) -> Result<(), MemFault> {
        self.save_prior(addr, 2);
        if let Err(f) = self.mem.write16(addr, v) {
            self.io_write(addr, 2, v as u32, f)?;
        }
        self.record(addr, 2, true, v as u32);
        Ok(())
    }

    #[inline(always)]
    pub fn write32(&mut self, addr: u32, v: u32) -> Result<(), MemFault> {
        self.save_prior(addr, 4);
        if let Err(f) = self.mem.write32(addr, v) {
            self.io_write(addr, 4, v, f)?;
        }
        self.record(addr, 4, true, v);
        Ok(())
    }
}

/// What an executed instruction did to control flow.
// (`repr(u8)`: `Next` is tag 0, so the run loop tests its common case with one compare.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Flow {
    /// Continue with the next sequential instruction (also: condition failed).
    Next,
    /// The instruction wrote the PC: `cpu.r[15]` and `cpu.thumb` hold the target.
    Jump,
    /// The instruction raises an exception. Architectural state is as the ARM ARM leaves
    /// it before the exception entry (the machine performs the entry).
    Exception(ExceptionKind),
    /// Semihosting trap (SVC 0x123456 in ARM state, SVC 0xAB in Thumb state).
    Semihost,
}

/// A handler's report that its instruction is UNPREDICTABLE. The reason is kept aside (in a
/// thread-local, set by [`Unpredictable::new`] and read by [`Unpredictable::reason`] on the
/// same thread right after the handler returns), so that the marker has no size: a handler's
/// `Result<Flow, Unpredictable>` is then two bytes, returned in a register rather than
/// through memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unpredictable(());

thread_local! {
    static UNPREDICTABLE_REASON: std::cell::Cell<&'static str> = const { std::cell::Cell::new("") };
}

impl Unpredictable {
    /// Report `reason` (the error returned next on this thread names it).
    #[cold]
    #[inline(never)]
    pub fn new(reason: &'static str) -> Self {
        UNPREDICTABLE_REASON.with(|r| r.set(reason));
        Unpredictable(())
    }

    /// The reason given to the latest [`Unpredictable::new`] on this thread.
    pub fn reason(self) -> &'static str {
        UNPREDICTABLE_REASON.with(|r| r.get())
    }

    /// The error of the instruction `insn` at `pc`.
    #[cold]
    pub fn at(self, pc: u32, insn: u32) -> SimError {
        SimError::Unpredictable { pc, insn, reason: self.reason() }
    }
}

/// Why a run stopped abnormally. Every variant names where.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum SimError {
    #[error("undefined instruction {insn:#010x} at {pc:#010x} ({state} state)")]
    Undefined { pc: u32, insn: u32, state: &'static str },
    #[error("instruction fetch from unmapped address {pc:#010x}")]
    FetchFault { pc: u32 },
    #[error("data {kind} of unmapped address {addr:#010x} by the instruction at {pc:#010x}")]
    DataFault { pc: u32, addr: u32, kind: &'static str },
    #[error("{what} at {pc:#010x}: no handler in a user program (use system mode for vectors)")]
    UnhandledException { pc: u32, what: &'static str },
    #[error("unpredictable instruction {insn:#010x} at {pc:#010x}: {reason}")]
    Unpredictable { pc: u32, insn: u32, reason: &'static str },
    #[error("semihosting call at {pc:#010x}: {reason}")]
    Semihosting { pc: u32, reason: String },
    #[error("instruction limit of {limit} reached at {pc:#010x}")]
    InstructionLimit { limit: u64, pc: u32 },
    #[error("system call at {pc:#010x}: {reason}")]
    Syscall { pc: u32, reason: String },
    #[error("{0}")]
    Start(String),
}

/// Receives every retired instruction.
pub trait RetireHook {
    /// `accesses` is empty unless the machine logs memory accesses.
    fn retire(&mut self, ev: &RetireEvent, accesses: &[MemAccess]);

    /// How many plain instructions (class none, falling through in the same state, not
    /// ARM's `MOV lr, pc`, and conditional branches not taken if
    /// [`RetireHook::plain_branches`]: see [`PlainRun`]) the hook takes from now on as one run through
    /// [`RetireHook::retire_plain`] instead of one [`RetireHook::retire`] each. [`Machine::run`]
    /// asks after every `retire` and reports at most that many in a run, always before the
    /// next `retire` and before it returns; [`Machine::step`] never batches. The default,
    /// 0, asks for every instruction (a hook that needs the instruction words, the memory
    /// accesses or every retire cycle keeps it).
    #[inline(always)]
    fn plain_budget(&self) -> u32 {
        0
    }

    /// Whether the hook's runs may also hold conditional branches that were not taken
    /// ([`PlainRun::may_contain_branch`]; they count against the budget like the others).
    /// The default, false, reports each of them through [`RetireHook::retire`] (a hook
    /// that needs every direction point, or the class of the instruction before a run's
    /// end, keeps it). Asked only for such a branch.
    #[inline(always)]
    fn plain_branches(&self) -> bool {
        false
    }

    /// A run of plain instructions, at most the budget last offered; called only by hooks
    /// that offer one.
    #[inline(always)]
    fn retire_plain(&mut self, _run: &PlainRun) {
        unreachable!("retire_plain called on a hook that offers no plain budget")
    }

    /// Whether the hook does nothing with what it is given (a timed run then times static
    /// blocks whole without reporting them, although the hook offers no plain budget).
    #[inline(always)]
    fn ignores_events(&self) -> bool {
        false
    }
}

/// A hook that does nothing (functional runs).
pub struct NoHook;

impl RetireHook for NoHook {
    #[inline]
    fn retire(&mut self, _: &RetireEvent, _: &[MemAccess]) {}

    #[inline(always)]
    fn ignores_events(&self) -> bool {
        true
    }
}

impl<F: FnMut(&RetireEvent, &[MemAccess])> RetireHook for F {
    #[inline]
    fn retire(&mut self, ev: &RetireEvent, accesses: &[MemAccess]) {
        self(ev, accesses)
    }
}

/// How exceptions other than semihosting are handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExceptionPolicy {
    /// User programs (newlib): an exception is an error that stops the run.
    Stop,
    /// Bare-metal programs with vectors: take the exception.
    Vector,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepOutcome {
    Running,
    Exited(i32),
}

pub struct Machine {
    pub cpu: Cpu,
    /// The memory (replacing it with a new [`Memory`] is fine: the decoded-instruction cache
    /// is the memory's, and a new memory starts with an empty one).
    pub mem: Memory,
    pub semihost: Semihost,
    pub policy: ExceptionPolicy,
    /// Record data accesses for the retire hook.
    pub log_accesses: bool,
    pub retired: u64,
    accesses: Vec<MemAccess>,
    /// SVC 0x123456 / 0xAB call the host; off (system mode) they are ordinary SWIs. Honoured
    /// by [`Machine::step_with_io`] only: the user-program step is compiled without it.
    pub semihosting: bool,
    /// Record the old value of every RAM byte a store overwrites (see [`Bus::prior`]).
    /// Honoured by [`Machine::step_with_io`] only.
    pub log_prior: bool,
    prior: Vec<(u32, u8)>,
    exit: Option<i32>,
    /// The optional timing model (boxed: the functional path only tests the option).
    timing: Option<Box<TimingModel>>,
    /// A Linux program's process state: its `svc` instructions are system calls served
    /// with `semihost`'s console, working directory and clock (docs/linux.md).
    pub linux: Option<Box<LinuxProcess>>,
}

/// Where user programs get their stack (the same value QEMU's linux-user reports is not
/// needed for the PC stream; HEAPINFO returns it).
pub const DEFAULT_STACK_TOP: u32 = 0x4080_0000;
pub const DEFAULT_STACK_SIZE: u32 = 8 << 20;
pub const DEFAULT_HEAP_SIZE: u32 = 128 << 20;

impl Machine {
    pub fn new(mem: Memory, semihost: Semihost) -> Self {
        Machine {
            cpu: Cpu::new(),
            mem,
            semihost,
            policy: ExceptionPolicy::Stop,
            log_accesses: false,
            retired: 0,
            accesses: Vec::with_capacity(32),
            semihosting: true,
            log_prior: false,
            prior: Vec::new(),
            exit: None,
            timing: None,
            linux: None,
        }
    }

    /// Time every following instruction with an XScale-like model (retire events then carry
    /// their retire cycle; data accesses are logged internally whatever `log_accesses` says).
    pub fn enable_timing(&mut self, cfg: TimingConfig) -> Result<(), ConfigError> {
        self.timing = Some(Box::new(TimingModel::new(cfg)?));
        Ok(())
    }

    /// Detach the timing model (retire cycles go back to 0).
    pub fn disable_timing(&mut self) -> Option<Box<TimingModel>> {
        self.timing.take()
    }

    pub fn timing(&self) -> Option<&TimingModel> {
        self.timing.as_deref()
    }

    /// The model, e.g. to [`TimingModel::stall`] the core between steps.
    pub fn timing_mut(&mut self) -> Option<&mut TimingModel> {
        self.timing.as_deref_mut()
    }

    pub fn timing_report(&self) -> Option<TimingReport> {
        self.timing.as_ref().map(|t| t.report())
    }

    /// A user-mode machine for a newlib program: segments loaded, heap after the highest
    /// segment, stack below `DEFAULT_STACK_TOP`, PC at the entry point.
    pub fn for_elf(elf: &ElfImage, semihost: Semihost) -> Machine {
        let mut mem = Memory::new();
        mem.load_image(elf.memory()).expect("ELF segments were validated by the loader");
        let heap_base = elf
            .memory()
            .segments()
            .iter()
            .map(|s| s.end())
            .max()
            .unwrap_or(0)
            .next_multiple_of(8) as u32;
        mem.map_region(heap_base, DEFAULT_HEAP_SIZE as u64);
        mem.map_region(DEFAULT_STACK_TOP - DEFAULT_STACK_SIZE, DEFAULT_STACK_SIZE as u64 + 0x1_0000);
        let mut m = Machine::new(mem, semihost);
        m.semihost.set_memory_layout(heap_base, heap_base.wrapping_add(DEFAULT_HEAP_SIZE), DEFAULT_STACK_TOP, 0);
        let entry = elf.entry();
        m.cpu.thumb = entry & 1 == 1;
        m.cpu.r[15] = entry & !1;
        m.cpu.r[13] = DEFAULT_STACK_TOP;
        m
    }

    /// A machine for `elf`: a Linux program (its ABI note names Linux, docs/linux.md)
    /// starts as under Linux with `semihost`'s argv, console, working directory and clock;
    /// any other program as a semihosting (newlib) program ([`Machine::for_elf`]).
    pub fn load(elf: &ElfImage, semihost: Semihost) -> Result<Machine, SimError> {
        if !elf.exec_info().is_linux() {
            return Ok(Machine::for_elf(elf, semihost));
        }
        let mut m = Machine::new(Memory::new(), semihost);
        let process = LinuxProcess::start(elf, &m.semihost, &mut m.cpu, &mut m.mem).map_err(SimError::Start)?;
        m.linux = Some(Box::new(process));
        Ok(m)
    }

    /// Serve a Linux system call (the `svc` at `pc` has retired).
    #[cold]
    #[inline(never)]
    fn linux_syscall(&mut self, pc: u32) -> Result<(), SimError> {
        self.semihost.set_retired(self.retired);
        let Some(linux) = self.linux.as_deref_mut() else { return Ok(()) };
        match linux.syscall(&mut self.cpu, &mut self.mem, &mut self.semihost).map_err(|reason| SimError::Syscall { pc, reason })? {
            SemihostOutcome::Continue => {}
            SemihostOutcome::Exit(code) => self.exit = Some(code),
        }
        Ok(())
    }

    pub fn exit_code(&self) -> Option<i32> {
        self.exit
    }

    /// Execute one instruction and report it to `hook`.
    /// One instruction of a user program (semihosting on, no devices; `semihosting` and
    /// `log_prior` are system-mode settings that only [`Machine::step_with_io`] honours).
    #[inline]
    pub fn step<H: RetireHook + ?Sized>(&mut self, hook: &mut H) -> Result<StepOutcome, SimError> {
        if self.timing.is_some() {
            return self.step_timed(hook);
        }
        self.step_impl::<false, false, H>(hook, None)
    }

    /// Out of line, so that the functional step inlined into callers stays as small as it
    /// was without timing.
    #[inline(never)]
    fn step_timed<H: RetireHook + ?Sized>(&mut self, hook: &mut H) -> Result<StepOutcome, SimError> {
        self.step_impl::<true, false, H>(hook, None)
    }

    /// One instruction of a system-mode machine: addresses outside RAM and the platform's
    /// coprocessors go to `io`; `semihosting` and `log_prior` apply.
    #[inline(never)]
    pub fn step_with_io<H: RetireHook + ?Sized>(&mut self, hook: &mut H, io: &mut dyn IoBus) -> Result<StepOutcome, SimError> {
        if self.timing.is_some() {
            self.step_impl::<true, true, H>(hook, Some(io))
        } else {
            self.step_impl::<false, true, H>(hook, Some(io))
        }
    }

    /// RAM bytes the last instruction overwrote, with their old values, in store order
    /// (filled only when `log_prior` is set).
    pub fn prior_bytes(&self) -> &[(u32, u8)] {
        &self.prior
    }

    /// Take an IRQ at the current instruction boundary (system mode): LR_irq = next PC + 4.
    pub fn take_irq(&mut self) {
        let next = self.cpu.r[15];
        self.cpu.enter_exception(ExceptionKind::Irq, next.wrapping_add(4));
    }

    /// The step, specialised at compile time: with `TIMED = false` it is the plain
    /// functional step (the timing code is not even compiled in); with `SYSTEM = false` the
    /// system-mode features (old bytes of stores, semihosting off) are compiled out. (Each
    /// extra instance per hook type also cost the timed step its inlined hook: cachegrind,
    /// docs/performance.md.)
    #[inline]
    fn step_impl<const TIMED: bool, const SYSTEM: bool, H: RetireHook + ?Sized>(
        &mut self,
        hook: &mut H,
        io: Option<&mut dyn IoBus>,
    ) -> Result<StepOutcome, SimError> {
        if let Some(code) = self.exit {
            return Ok(StepOutcome::Exited(code));
        }
        let pc = self.cpu.r[15];
        let thumb = self.cpu.thumb;
        let iw = pc | thumb as u32;
        let decoded = decoded::get(&mut self.mem, pc, thumb).map_err(|_| SimError::FetchFault { pc })?;
        let (word, class) = (decoded.word, decoded.class);
        // Timing needs operand values from before execution (multiplier Rs, condition).
        let captured = if TIMED { self.timing.as_deref_mut().map(|t| t.before(&self.cpu, iw, word)) } else { None };
        self.accesses.clear();
        let (flow, fault) = {
            let logging = self.log_accesses | TIMED;
            let prior = if SYSTEM && self.log_prior {
                self.prior.clear();
                Some(&mut self.prior)
            } else {
                None
            };
            // (Shortens the trait object's lifetime to the bus's.)
            let io = io.map(|d| d as &mut dyn IoBus);
            let mut bus = Bus { mem: &mut self.mem, log: &mut self.accesses, logging, fault: None, io, prior };
            let flow = if decoded.cond == COND_ALWAYS || self.cpu.cond_passed(decoded.cond as u32) {
                (decoded.handler)(&mut self.cpu, &mut bus, word).map_err(|e| e.at(pc, word))?
            } else {
                Flow::Next
            };
            (flow, bus.fault)
        };
        let flow = if SYSTEM && !self.semihosting && matches!(flow, Flow::Semihost) { Flow::Exception(ExceptionKind::Swi) } else { flow };
        let mut exception = false;
        let taken;
        match flow {
            Flow::Next => {
                taken = false;
                self.cpu.r[15] = pc.wrapping_add(if thumb { 2 } else { 4 });
            }
            Flow::Jump => {
                taken = true;
                if class == BranchClass::None {
                    return Err(pc_write_error(pc, word));
                }
            }
            _ => {
                taken = false;
                exception = self.finish_special::<SYSTEM>(flow, pc, word, thumb, fault)?;
            }
        }
        self.retired += 1;
        let next_pc = self.cpu.r[15] | self.cpu.thumb as u32;
        let cycle = match (self.timing.as_deref_mut(), captured) {
            (Some(t), Some(c)) if TIMED => t.retire_parts(c, pc, taken, next_pc, exception, &self.accesses),
            _ => 0,
        };
        // (With TIMED = false the match folds to 0 and the event is built as before.)
        let ev = RetireEvent { pc, insn: word, thumb, class, taken, next_pc, exception, cycle };
        hook.retire(&ev, &self.accesses);
        Ok(match self.exit {
            Some(code) => StepOutcome::Exited(code),
            None => StepOutcome::Running,
        })
    }

    /// Complete an instruction whose flow is neither `Next` nor `Jump` (a system call, a
    /// semihosting call, an exception): true if it took an exception. Out of line: the
    /// common instructions never come here.
    #[cold]
    #[inline(never)]
    fn finish_special<const SYSTEM: bool>(
        &mut self,
        flow: Flow,
        pc: u32,
        word: u32,
        thumb: bool,
        fault: Option<MemFault>,
    ) -> Result<bool, SimError> {
        let size = if thumb { 2 } else { 4 };
        match flow {
            // In a Linux program every SVC is a system call (EABI: the number is in r7).
            Flow::Semihost | Flow::Exception(ExceptionKind::Swi) if !SYSTEM && self.linux.is_some() => {
                self.cpu.r[15] = pc.wrapping_add(size);
                self.linux_syscall(pc)?;
                Ok(false)
            }
            Flow::Semihost => {
                self.cpu.r[15] = pc.wrapping_add(size);
                self.semihost.set_retired(self.retired);
                match self.semihost.call(&mut self.cpu, &mut self.mem).map_err(|reason| SimError::Semihosting { pc, reason })? {
                    SemihostOutcome::Continue => {}
                    SemihostOutcome::Exit(code) => self.exit = Some(code),
                }
                Ok(false)
            }
            Flow::Exception(kind) => {
                if self.policy == ExceptionPolicy::Stop {
                    return Err(match kind {
                        ExceptionKind::Undefined => {
                            SimError::Undefined { pc, insn: word, state: if thumb { "Thumb" } else { "ARM" } }
                        }
                        ExceptionKind::DataAbort => SimError::DataFault {
                            pc,
                            addr: fault.map_or(0, |f| f.addr),
                            kind: if fault.is_some_and(|f| f.write) { "write" } else { "read" },
                        },
                        other => SimError::UnhandledException { pc, what: other.name() },
                    });
                }
                // Return links: SWI/UND -> next instruction; aborts -> +8/+4 per the ARM ARM.
                let link = match kind {
                    ExceptionKind::Swi | ExceptionKind::Undefined => pc.wrapping_add(size),
                    ExceptionKind::PrefetchAbort => pc.wrapping_add(4),
                    ExceptionKind::DataAbort => pc.wrapping_add(8),
                    _ => pc.wrapping_add(4),
                };
                self.cpu.enter_exception(kind, link);
                Ok(true)
            }
            Flow::Next | Flow::Jump => unreachable!("the step completes these itself"),
        }
    }

    /// Run until the program exits or `max_insns` instructions retired.
    pub fn run<H: RetireHook + ?Sized>(&mut self, max_insns: u64, hook: &mut H) -> Result<i32, SimError> {
        if self.timing.is_some() {
            return self.run_timed(max_insns, hook);
        }
        self.run_loop::<H, false>(max_insns, hook)
    }

    #[inline(never)]
    fn run_timed<H: RetireHook + ?Sized>(&mut self, max_insns: u64, hook: &mut H) -> Result<i32, SimError> {
        self.run_loop::<H, true>(max_insns, hook)
    }

    /// The run: the steps of `step_impl::<TIMED, false>` (same events, same errors, same
    /// retire cycles), with the ordinary instructions in a loop of their own
    /// ([`Machine::run_plain`]) and the others completed here. Timed runs log accesses
    /// whatever `log_accesses` says (the timing model needs them).
    #[inline(always)]
    fn run_loop<H: RetireHook + ?Sized, const TIMED: bool>(&mut self, max_insns: u64, hook: &mut H) -> Result<i32, SimError> {
        loop {
            if self.retired >= max_insns {
                return Err(SimError::InstructionLimit { limit: max_insns, pc: self.cpu.r[15] });
            }
            if let Some(code) = self.exit {
                return Ok(code);
            }
            let plain = match (self.cpu.thumb, self.log_accesses | TIMED) {
                (true, true) => self.run_plain::<H, true, true, TIMED>(max_insns, hook)?,
                (true, false) => self.run_plain::<H, true, false, TIMED>(max_insns, hook)?,
                (false, true) => self.run_plain::<H, false, true, TIMED>(max_insns, hook)?,
                (false, false) => self.run_plain::<H, false, false, TIMED>(max_insns, hook)?,
            };
            let Some(s) = plain else { continue };
            let exception = self.finish_special::<false>(s.flow, s.pc, s.word, s.thumb, s.fault)?;
            self.retired += 1;
            let next_pc = self.cpu.r[15] | self.cpu.thumb as u32;
            let cycle = match self.timing.as_deref_mut() {
                Some(t) if TIMED => {
                    let c = t.take_held();
                    t.retire_parts(c, s.pc, false, next_pc, exception, &self.accesses)
                }
                _ => 0,
            };
            let ev = RetireEvent {
                pc: s.pc,
                insn: s.word,
                thumb: s.thumb,
                class: s.class,
                taken: false,
                next_pc,
                exception,
                cycle,
            };
            hook.retire(&ev, &self.accesses);
            if let Some(code) = self.exit {
                return Ok(code);
            }
        }
    }

    /// Run instructions in the state `THUMB` (which `cpu.thumb` holds on entry) until
    /// `max_insns` have retired or a jump changes the state (`None`), or one needs more than
    /// the next PC or a jump (`Some`: executed, not yet retired; [`Machine::finish_special`]
    /// completes it). The loop counts the instructions left down in a register and builds
    /// the bus once; with the state a constant, the decoded-cache slot and the sequential step
    /// are plain shifts and additions. (Only jumps change the state: `Flow::Next` never does.)
    /// Direct branches (ARM B/BL, Thumb Bcc/B: marked in their slot's condition byte) run in
    /// the loop without a handler call. Not
    /// inlined: the loop gets a register allocation of its own. `LOG` is whether accesses are
    /// logged: without, the log is emptied once (nothing is added to it) rather than before
    /// every instruction.
    /// `TIMED`: the timing model (present, `LOG` true) times every instruction, with what
    /// it needs from before execution captured before the handler runs.
    #[inline(never)]
    fn run_plain<H: RetireHook + ?Sized, const THUMB: bool, const LOG: bool, const TIMED: bool>(
        &mut self,
        max_insns: u64,
        hook: &mut H,
    ) -> Result<Option<Special>, SimError> {
        debug_assert_eq!(self.cpu.thumb, THUMB);
        debug_assert!(if TIMED { LOG && self.timing.is_some() } else { self.log_accesses == LOG });
        if self.retired >= max_insns {
            return Ok(None);
        }
        // Instructions left before the limit, counted down (`self.retired` is updated on exit).
        let mut left = max_insns - self.retired;
        let start_left = left;
        let cpu = &mut self.cpu;
        let mut bus = Bus::new(&mut self.mem, &mut self.accesses, LOG);
        bus.log.clear();
        let mut timing = if TIMED { self.timing.as_deref_mut() } else { None };
        // A timed loop has a model (checked once here: the loop takes it without a test).
        assert!(!TIMED || timing.is_some(), "a timed run without a timing model");
        // Whether the model has a stall handle to poll: requests come from retire hooks, so
        // the loop polls it here and after each hook call, not per instruction.
        let mut polls = false;
        if let Some(t) = timing.as_deref_mut() {
            // The slots' `timed` flags must refer to this model's ops before the loop trusts them.
            t.claim_slots(&mut bus.mem.decoded);
            polls = t.has_stall_handle();
            if polls {
                t.poll_stall_handle();
            }
        }
        // The decoded-cache slots of the state, read through a pointer field by field: a
        // handler's store to a code page drops slots through `bus.mem` (which owns the cache),
        // so no reference into them is held across a call. (With the drops done by the stores
        // themselves, the loop checks no code-change report before an instruction.)
        let slots = bus.mem.decoded.slots(THUMB);
        // `cpu.r[15]` and its decoded-cache slot, carried from one instruction to the next (a
        // sequential step finds the next slot without recomputing it).
        let mut next_pc = cpu.r[15];
        let mut s = decoded::slot_offset(next_pc, THUMB);
        // A handler records a fault only with the data abort it returns, which ends the loop:
        // the bus comes back to the top of the loop without one.
        bus.fault = None;
        // Plain instructions the hook still takes in one run, and the run so far: its
        // first address, length and first and last retire cycles.
        let mut budget = hook.plain_budget();
        let (mut run_pc, mut run_count, mut run_first, mut run_last) = (0u32, 0u32, 0u64, 0u64);
        let result = 'run: loop {
            if left == 0 {
                break Ok(None);
            }
            let pc = next_pc;
            let thumb = THUMB;
            // SAFETY (all slot reads): `s` is the offset of a slot or of the guard slot after
            // the last one, and the arrays live as long as the memory.
            if unsafe { (*slots.byte_add(s)).key } != pc {
                // Not decoded yet, or the sequential step ran onto the guard slot.
                match decoded::miss(bus.mem, pc, THUMB) {
                    Ok(offset) => s = offset,
                    Err(_) => break Err(SimError::FetchFault { pc }),
                }
            }
            let slot = unsafe { slots.byte_add(s) };
            if LOG {
                bus.log.clear();
            }
            debug_assert!(bus.fault.is_none());
            // A static block starting here runs in a loop of its own, as a plain run
            // (`run_static_block`).
            if TIMED && unsafe { (*slot).block } != decoded::NO_STATIC_BLOCK && (budget != 0 || hook.ignores_events()) {
                // SAFETY: as for the capture below.
                let t = unsafe { timing.as_deref_mut().unwrap_unchecked() };
                let limit = if hook.ignores_events() { left } else { (budget as u64).min(left) } as usize;
                let (n, first, last, stop) = match run_static_block::<THUMB>(cpu, &mut bus, t, slots, s, pc, limit) {
                    StaticRun::No => (0, 0, 0, None),
                    StaticRun::Ran { n, first, last } => (n, first, last, None),
                    StaticRun::Stop { n, first, last, stop } => (n, first, last, Some(stop)),
                };
                if n != 0 {
                    if !hook.ignores_events() {
                        if run_count == 0 {
                            run_pc = pc;
                            run_first = first;
                        }
                        run_count += n;
                        run_last = last;
                        budget -= n;
                    }
                    left -= n as u64;
                }
                if let Some(stop) = stop {
                    break stop;
                }
                if n != 0 {
                    next_pc = pc.wrapping_add(n << (2 - THUMB as u32));
                    s += n as usize * size_of::<decoded::Decoded>();
                    continue;
                }
            }
            // Timing needs operand values from before execution (multiplier Rs, condition).
            // Its op is in the model's table parallel to the slots (same index), decoded
            // there when the slot's `timed` flag is clear: no lookup of its own.
            // (Not an `Option`: untimed loops compile the capture out.)
            let captured = if TIMED {
                // SAFETY: a timed loop has a model (asserted on entry) and nothing removes it.
                let t = unsafe { timing.as_deref_mut().unwrap_unchecked() };
                let word = unsafe { (*slot).word };
                if !unsafe { (*slot).timed } {
                    let rs = t.fill_slot(THUMB, s / size_of::<decoded::Decoded>(), word);
                    // SAFETY: as for the reads; no reference into the slots is live.
                    unsafe { ((*slot).timed, (*slot).timed_rs) = (true, rs) };
                }
                TimingModel::before_slot::<THUMB>(cpu, s, word, unsafe { (*slot).timed_rs })
            } else {
                Captured::default()
            };
            // (The slot is read again after the handler for what only the rare paths need:
            // the values need no registers across the call. A store of the handler may have
            // dropped the slot meanwhile, which changes its key only.)
            // (taken, whether the state changed)
            let (taken, switched) = 'executed: {
                let result = if unsafe { (*slot).cond } == COND_ALWAYS {
                    unsafe { ((*slot).handler)(cpu, &mut bus, (*slot).word) }
                } else {
                    // (Read again, volatile: the common test above then compares the byte in
                    // memory instead of loading it into a register for this path.)
                    let cond = unsafe { std::ptr::read_volatile(&raw const (*slot).cond) };
                    if cond < decoded::BRANCH {
                        if cpu.cond_passed(cond as u32) {
                            unsafe { ((*slot).handler)(cpu, &mut bus, (*slot).word) }
                        } else {
                            Ok(Flow::Next)
                        }
                    } else if cpu.cond_passed(cond as u32 & 15) {
                        // A direct branch, taken: what its handler does (`arm::misc::branch`,
                        // `thumb::bcc`, `thumb::b`), without the call; it stays in the state.
                        let word = unsafe { (*slot).word };
                        let long = cond & decoded::BRANCH_LONG != 0;
                        next_pc = if THUMB {
                            if long {
                                crate::thumb::b_target(pc, word)
                            } else {
                                crate::thumb::bcc_target(pc, word)
                            }
                        } else {
                            if long {
                                cpu.r[14] = pc.wrapping_add(4);
                            }
                            crate::arm::branch_target(pc, word)
                        };
                        cpu.r[15] = next_pc;
                        s = decoded::slot_offset(next_pc, THUMB);
                        break 'executed (true, false);
                    } else {
                        Ok(Flow::Next)
                    }
                };
                // (One match on the result's byte: `Ok(Flow::Next)` is 0.)
                match result {
                    Ok(Flow::Next) => {
                        debug_assert_eq!(cpu.thumb, THUMB, "Flow::Next changed the state");
                        next_pc = pc.wrapping_add(if thumb { 2 } else { 4 });
                        cpu.r[15] = next_pc;
                        s = decoded::next_slot_offset(s);
                        (false, false)
                    }
                    Ok(Flow::Jump) if unsafe { (*slot).class } != BranchClass::None => {
                        next_pc = cpu.r[15];
                        s = decoded::slot_offset(next_pc, THUMB);
                        (true, cpu.thumb != THUMB)
                    }
                    _ => {
                        // SAFETY: as for the capture.
                        let held = if TIMED { Some((unsafe { timing.as_deref_mut().unwrap_unchecked() }, captured)) } else { None };
                        break 'run stop_at::<THUMB>(result, pc, slot, bus.fault, held);
                    }
                }
            };
            left -= 1;
            let next_iw = next_pc | (THUMB != switched) as u32;
            let cycle = if TIMED {
                // SAFETY: as for the capture.
                let t = unsafe { timing.as_deref_mut().unwrap_unchecked() };
                t.retire_slot_parts::<THUMB>(captured, pc, taken, next_iw, || bus.log.as_slice())
            } else {
                0
            };
            let class = unsafe { (*slot).class };
            // Class none and not taken: it fell through in the same state. (ARM's `MOV lr,
            // pc` is a call's link to pft: see `PlainRun`.) So does a conditional branch not
            // taken, which the hook may take in its runs.
            if budget != 0
                && !taken
                && (PlainRun::may_contain(class, THUMB, unsafe { (*slot).word })
                    || PlainRun::may_contain_branch(class) && hook.plain_branches())
            {
                if run_count == 0 {
                    run_pc = pc;
                    run_first = cycle;
                }
                run_count += 1;
                run_last = cycle;
                budget -= 1;
                continue;
            }
            if run_count != 0 {
                hook.retire_plain(&PlainRun { pc: run_pc, thumb, count: run_count, first_cycle: run_first, last_cycle: run_last });
                run_count = 0;
            }
            let ev = RetireEvent {
                pc,
                insn: unsafe { (*slot).word },
                thumb,
                class,
                taken,
                next_pc: next_iw,
                exception: false,
                cycle,
            };
            hook.retire(&ev, bus.log);
            budget = hook.plain_budget();
            if TIMED && polls {
                // SAFETY: as for the capture.
                unsafe { timing.as_deref_mut().unwrap_unchecked() }.poll_stall_handle();
            }
            if switched {
                break Ok(None);
            }
        };
        if run_count != 0 {
            hook.retire_plain(&PlainRun { pc: run_pc, thumb: THUMB, count: run_count, first_cycle: run_first, last_cycle: run_last });
        }
        if let Some(t) = timing {
            // Every instruction counted down here was timed (a handed-on one is not counted).
            t.count_slot_retires(start_left - left);
        }
        self.retired = max_insns - left;
        result
    }
}

/// What [`run_static_block`] did.
enum StaticRun {
    /// Nothing: the instruction is to be run and timed on its own.
    No,
    /// Ran and timed `n` instructions (n > 0), all plain, retiring at `first` ..= `last`.
    Ran { n: u32, first: u64, last: u64 },
    /// Ran and timed `n` instructions as for `Ran` (n may be 0), then ran one that ends the
    /// run loop with `stop` (an error or a special flow).
    Stop { n: u32, first: u64, last: u64, stop: Result<Option<Special>, SimError> },
}

/// Run the static block of the timing model `t` that starts at `pc` (the slot at byte
/// offset `s` of `slots`), at most `limit` instructions: each instruction executes, and the
/// block's static timing times them, until the block ends, an instruction does not return
/// `Flow::Next`, or a slot no longer holds the block's instruction (code rewritten or
/// evicted). An instruction whose accesses do not hit at once ends the block and is timed
/// on its own.
#[inline(never)]
fn run_static_block<const THUMB: bool>(
    cpu: &mut Cpu,
    bus: &mut Bus<'_>,
    t: &mut TimingModel,
    slots: *mut decoded::Decoded,
    s: usize,
    pc: u32,
    limit: usize,
) -> StaticRun {
    // SAFETY (all slot reads): `s` and the offsets after it below the block's length are
    // slots (a block ends before the guard slot), and no reference into them is kept
    // across a handler call.
    let slot = unsafe { slots.byte_add(s) };
    if !unsafe { (*slot).timed } {
        return StaticRun::No;
    }
    let epoch = bus.mem.decoded.epoch();
    if unsafe { (*slot).block } == decoded::STATIC_BLOCK_UNTRIED {
        t.block_build::<THUMB>(slots, s, pc, epoch);
        if unsafe { (*slot).block } != decoded::STATIC_BLOCK {
            return StaticRun::No;
        }
    }
    let Some(mut run) = t.block_at::<THUMB>(slots, s, pc, epoch) else {
        return StaticRun::No;
    };
    let n = run.len().min(limit);
    let size = if THUMB { 2 } else { 4 };
    let offset = |k: usize| s + k * size_of::<decoded::Decoded>();
    // The log holds the accesses of the instruction run last (the run loop cleared it).
    debug_assert!(bus.log.is_empty());
    let mut first = 0;
    let mut k = 0;
    while k < n {
        let at = pc.wrapping_add(k as u32 * size);
        let slot = unsafe { slots.byte_add(offset(k)) };
        if k > 0 && unsafe { (*slot).key != at || !(*slot).timed } {
            break;
        }
        // A block's instructions are unconditional: what the run loop does for `COND_ALWAYS`.
        debug_assert_eq!(unsafe { (*slot).cond }, COND_ALWAYS);
        let result = unsafe { ((*slot).handler)(cpu, bus, (*slot).word) };
        if !matches!(result, Ok(Flow::Next)) {
            // (A block's instructions are of class none: a jump is an error, and every
            // result but `Flow::Next` ends the run loop.)
            let last = if k > 0 { t.block_finish(&run, k) } else { 0 };
            let pre = t.block_capture::<THUMB>(offset(k));
            let stop = stop_at::<THUMB>(result, at, slot, bus.fault, Some((t, pre)));
            return StaticRun::Stop { n: k as u32, first, last, stop };
        }
        let next = at.wrapping_add(size);
        cpu.r[15] = next;
        let timed = if k == 0 {
            t.block_first(&mut run, at, bus.log).map(|c| first = c).is_some()
        } else {
            t.block_next(&run, k, at, bus.log)
        };
        if !timed {
            // The block does not start (k = 0) or ends before this instruction (an access
            // that does not hit at once), which is timed on its own.
            if k > 0 {
                t.block_finish(&run, k);
            }
            let pre = t.block_capture::<THUMB>(offset(k));
            let cycle = t.retire_slot_parts::<THUMB>(pre, at, false, next | THUMB as u32, || bus.log.as_slice());
            if k == 0 {
                first = cycle;
            }
            return StaticRun::Ran { n: k as u32 + 1, first, last: cycle };
        }
        bus.log.clear();
        k += 1;
    }
    if k == 0 {
        return StaticRun::No;
    }
    let last = t.block_finish(&run, k);
    StaticRun::Ran { n: k as u32, first, last }
}

/// Where a run loop ends at the instruction at `pc` (in `slot`, of the state `THUMB`) whose
/// handler returned `result`, neither `Ok(Flow::Next)` nor a jump of a control-flow
/// instruction: its error, or the special flow handed on (its capture held by the timing
/// model of `timed`, if any).
#[cold]
fn stop_at<const THUMB: bool>(
    result: Result<Flow, Unpredictable>,
    pc: u32,
    slot: *const decoded::Decoded,
    fault: Option<MemFault>,
    timed: Option<(&mut TimingModel, Captured)>,
) -> Result<Option<Special>, SimError> {
    // SAFETY: the run loop's slot; a store of the handler may have dropped it, which
    // changes its key only.
    let (word, class) = unsafe { ((*slot).word, (*slot).class) };
    match result {
        Err(e) => Err(e.at(pc, word)),
        Ok(Flow::Jump) => Err(pc_write_error(pc, word)),
        Ok(flow) => {
            if let Some((t, captured)) = timed {
                t.hold_slot(captured, pc | THUMB as u32, word);
            }
            Ok(Some(Special { flow, pc, word, thumb: THUMB, class, fault }))
        }
    }
}

/// An executed instruction that [`Machine::finish_special`] completes.
struct Special {
    flow: Flow,
    pc: u32,
    word: u32,
    thumb: bool,
    class: BranchClass,
    fault: Option<MemFault>,
}

#[cold]
fn pc_write_error(pc: u32, word: u32) -> SimError {
    SimError::Unpredictable {
        pc,
        insn: word,
        reason: "writes the PC but is not a control-flow instruction of the ARMv5TE classifier",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::semihost::SharedBuffer;

    /// The self-modifying test program (sim/tests/data/self_modifying.s): it rewrites ARM
    /// and Thumb instructions that ran and runs them again.
    fn self_modifying() -> Machine {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/self_modifying.elf");
        let elf = ElfImage::open(path).unwrap();
        let sh = Semihost::new().with_cmdline("self_modifying.elf").with_stdout(SharedBuffer::new());
        let mut m = Machine::load(&elf, sh).unwrap();
        m.enable_timing(TimingConfig::default()).unwrap();
        m
    }

    /// Every retire event (with its cycle) of a timed machine, by runs or by single steps;
    /// after `restart` instructions the timing model is replaced by a new one.
    fn timed_events(by_steps: bool, restart: u64) -> Vec<RetireEvent> {
        let mut events = Vec::new();
        let mut m = self_modifying();
        let mut hook = |e: &RetireEvent, _: &[MemAccess]| events.push(*e);
        if by_steps {
            while m.exit_code().is_none() {
                if m.retired == restart {
                    m.enable_timing(TimingConfig::default()).unwrap();
                }
                m.step(&mut hook).unwrap();
            }
        } else {
            let r = m.run(restart, &mut hook);
            assert!(matches!(r, Err(SimError::InstructionLimit { .. })), "{r:?} after {}", m.retired);
            m.enable_timing(TimingConfig::default()).unwrap();
            m.run(u64::MAX, &mut hook).unwrap();
        }
        events
    }

    /// The run loop times from ops kept beside the decoded slots (flagged per slot), the step
    /// from the model's own keyed cache: rewritten code and a new model must not leave the
    /// run loop a stale op.
    #[test]
    fn timed_runs_and_steps_agree_on_rewritten_code_and_a_new_model() {
        for restart in [20, 50] {
            let run = timed_events(false, restart);
            assert!(run.len() as u64 > restart);
            assert_eq!(run, timed_events(true, restart), "restart at {restart}");
        }
    }

    const LDR_R0_R3: u32 = 0xE593_0000; // ldr r0, [r3]: r0 ready late
    const MOV_R0_1: u32 = 0xE3A0_0001; // mov r0, #1: r0 ready at once
    const ADD_R4_R0_R0: u32 = 0xE080_4000; // add r4, r0, r0: waits for r0

    fn memory_with(code: &[(u32, u32)]) -> Memory {
        let mut mem = Memory::new();
        mem.map_region(0, 0x2000);
        for &(addr, word) in code {
            mem.write32(addr, word).unwrap();
        }
        mem
    }

    /// The timed events of the same two instructions at 0x100, run (or stepped) from two
    /// memories in turn whose first instruction differs, then from one of them before and
    /// after that instruction is rewritten.
    fn swapped_memory_events(by_steps: bool) -> Vec<RetireEvent> {
        let mut events = Vec::new();
        let mut m = Machine::new(memory_with(&[(0x100, LDR_R0_R3), (0x104, ADD_R4_R0_R0)]), Semihost::default());
        m.enable_timing(TimingConfig::default()).unwrap();
        let mut other = memory_with(&[(0x100, MOV_R0_1), (0x104, ADD_R4_R0_R0)]);
        for round in 0..6 {
            if round == 5 {
                m.mem.write32(0x100, MOV_R0_1).unwrap();
            }
            (m.cpu.r[15], m.cpu.r[3]) = (0x100, 0x1000);
            let mut hook = |e: &RetireEvent, _: &[MemAccess]| events.push(*e);
            if by_steps {
                for _ in 0..2 {
                    m.step(&mut hook).unwrap();
                }
            } else {
                assert!(matches!(m.run(m.retired + 2, &mut hook), Err(SimError::InstructionLimit { .. })));
            }
            if round < 4 {
                std::mem::swap(&mut m.mem, &mut other);
            }
        }
        events
    }

    /// Retire cycles and external stall cycles of three timed instructions at 0x100 whose
    /// hook asks a stall handle for 10 cycles after the second (and 3 are asked before the
    /// first), run or stepped.
    fn handle_stall_events(by_steps: bool) -> (Vec<u64>, u64) {
        const ADD_R1_1: u32 = 0xE281_1001; // add r1, r1, #1
        let code = [(0x100, ADD_R1_1), (0x104, ADD_R1_1), (0x108, ADD_R1_1)];
        let mut m = Machine::new(memory_with(&code), Semihost::default());
        m.enable_timing(TimingConfig::default()).unwrap();
        m.cpu.r[15] = 0x100;
        let handle = m.timing_mut().unwrap().stall_handle();
        handle.stall(3);
        let mut cycles = Vec::new();
        let mut hook = |e: &RetireEvent, _: &[MemAccess]| {
            cycles.push(e.cycle);
            if e.pc == 0x104 {
                handle.stall(10);
            }
        };
        if by_steps {
            for _ in 0..3 {
                m.step(&mut hook).unwrap();
            }
        } else {
            assert!(matches!(m.run(3, &mut hook), Err(SimError::InstructionLimit { .. })));
        }
        (cycles, m.timing_report().unwrap().stalls.external)
    }

    /// The run loop polls the stall handle after hook calls, the step before every
    /// instruction: requests must apply at the same instruction either way.
    #[test]
    fn handle_stalls_apply_alike_in_runs_and_steps() {
        let (cycles, external) = handle_stall_events(false);
        assert_eq!(external, 13);
        assert_eq!((cycles, external), handle_stall_events(true));
    }

    /// A memory the model timed before it timed another keeps its slots' flags, which must
    /// not vouch for the ops the other memory's instructions left in the model's table.
    #[test]
    fn timed_runs_and_steps_agree_across_memories_and_rewrites() {
        let run = swapped_memory_events(false);
        assert_eq!(run.len(), 12);
        assert_eq!(run, swapped_memory_events(true));
    }
}

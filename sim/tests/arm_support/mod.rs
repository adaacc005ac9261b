//! Shared harness of the ARM executor tests (sim/tests/arm_*.rs): a small machine with code,
//! data and stack regions, and direct single-instruction execution.

#![allow(dead_code)]

use streamtrace_sim::cpu::{CPSR_C, CPSR_N, CPSR_V, CPSR_Z};
use streamtrace_sim::{Bus, Cpu, Flow, Machine, MemAccess, MemFault, Memory, Mode, Semihost, SimError};

/// Code at 0x8000 (4 KiB), data at 0x10000 (8 KiB), stack below 0x20000 (4 KiB).
pub const CODE: u32 = 0x8000;
pub const DATA: u32 = 0x1_0000;
pub const STACK_TOP: u32 = 0x2_0000;
/// Nothing is mapped here.
pub const UNMAPPED: u32 = 0x5000_0000;

pub fn memory() -> Memory {
    let mut mem = Memory::new();
    mem.map_region(CODE, 0x1000);
    mem.map_region(DATA, 0x2000);
    mem.map_region(STACK_TOP - 0x1000, 0x1000);
    mem
}

/// A User-mode machine with `code` at `CODE`, pc = `CODE`, sp = `STACK_TOP`.
pub fn machine(code: &[u32]) -> Machine {
    let mut mem = memory();
    for (i, w) in code.iter().enumerate() {
        mem.write32(CODE + 4 * i as u32, *w).unwrap();
    }
    let mut m = Machine::new(mem, Semihost::default());
    m.cpu.r[15] = CODE;
    m.cpu.r[13] = STACK_TOP;
    m
}

/// Step `n` instructions; any error fails the test.
pub fn run(m: &mut Machine, n: usize) {
    for i in 0..n {
        let pc = m.cpu.r[15];
        if let Err(e) = m.step(&mut streamtrace_sim::NoHook) {
            panic!("step {i} at {pc:#x}: {e}");
        }
    }
}

/// Run `code` from a fresh machine after `setup`, one step per instruction.
pub fn exec(code: &[u32], setup: impl FnOnce(&mut Machine)) -> Machine {
    let mut m = machine(code);
    setup(&mut m);
    run(&mut m, code.len());
    m
}

/// Result of executing one instruction directly with `execute`.
pub struct One {
    pub flow: Result<Flow, SimError>,
    pub log: Vec<MemAccess>,
    pub fault: Option<MemFault>,
}

/// Execute `word` at `cpu.r[15]` directly (no machine), logging accesses.
pub fn exec_one(cpu: &mut Cpu, mem: &mut Memory, word: u32) -> One {
    let mut log = Vec::new();
    let mut bus = Bus::new(mem, &mut log, true);
    let flow = streamtrace_sim::arm::execute(cpu, &mut bus, word);
    let fault = bus.fault;
    One { flow, log, fault }
}

/// A CPU at `CODE` in `mode` with the given registers.
pub fn cpu_in(mode: Mode, regs: &[(usize, u32)]) -> Cpu {
    let mut cpu = Cpu::new();
    cpu.set_mode(mode);
    for &(i, v) in regs {
        cpu.r[i] = v;
    }
    cpu.r[15] = CODE;
    cpu
}

/// NZCV as a string like "nZcV" (capital = set), for readable flag assertions.
pub fn flags(cpu: &Cpu) -> String {
    let f = |set: bool, c: char| if set { c.to_ascii_uppercase() } else { c };
    [f(cpu.n, 'n'), f(cpu.z, 'z'), f(cpu.c, 'c'), f(cpu.v, 'v')].iter().collect()
}

/// Set NZCV from a string like "nZcV".
pub fn set_flags(cpu: &mut Cpu, s: &str) {
    let b: Vec<bool> = s.chars().map(|c| c.is_ascii_uppercase()).collect();
    let word = (b[0] as u32 * CPSR_N) | (b[1] as u32 * CPSR_Z) | (b[2] as u32 * CPSR_C) | (b[3] as u32 * CPSR_V);
    cpu.n = word & CPSR_N != 0;
    cpu.z = word & CPSR_Z != 0;
    cpu.c = word & CPSR_C != 0;
    cpu.v = word & CPSR_V != 0;
}

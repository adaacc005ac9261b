//! ARM semihosting (rdimon ABI, shared/reference/xscale-timing.md section 5).
//! STUB: to be completed (issue 3).

use crate::cpu::Cpu;
use crate::memory::Memory;

pub enum SemihostOutcome {
    Continue,
    Exit(i32),
}

#[derive(Default)]
pub struct Semihost {
    heap_base: u32,
    heap_limit: u32,
    stack_base: u32,
    stack_limit: u32,
}

impl Semihost {
    pub fn set_memory_layout(&mut self, heap_base: u32, heap_limit: u32, stack_base: u32, stack_limit: u32) {
        self.heap_base = heap_base;
        self.heap_limit = heap_limit;
        self.stack_base = stack_base;
        self.stack_limit = stack_limit;
    }

    /// Perform the call in r0/r1; result in r0.
    pub fn call(&mut self, cpu: &mut Cpu, mem: &mut Memory) -> Result<SemihostOutcome, String> {
        let _ = mem;
        Err(format!("semihosting operation {:#x} not implemented yet", cpu.r[0]))
    }
}

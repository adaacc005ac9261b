//! ARM-state (A32, ARMv5TE) instruction execution. STUB: to be completed (issue 3).

use crate::cpu::{Cpu, ExceptionKind};
use crate::machine::{Bus, Flow, SimError};

/// Execute one ARM instruction at `cpu.r[15]`.
pub fn execute(cpu: &mut Cpu, bus: &mut Bus<'_>, word: u32) -> Result<Flow, SimError> {
    let _ = (cpu, bus, word);
    Ok(Flow::Exception(ExceptionKind::Undefined))
}

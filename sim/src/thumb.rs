//! Thumb-state (ARMv5T) instruction execution. STUB: to be completed (issue 3).

use crate::cpu::{Cpu, ExceptionKind};
use crate::machine::{Bus, Flow, SimError};

/// Execute one Thumb instruction at `cpu.r[15]`.
pub fn execute(cpu: &mut Cpu, bus: &mut Bus<'_>, hw: u16) -> Result<Flow, SimError> {
    let _ = (cpu, bus, hw);
    Ok(Flow::Exception(ExceptionKind::Undefined))
}

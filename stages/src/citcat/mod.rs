//! CITCAT (seed 004, Rose 1999; docs/citcat.md): exact instruction traces rebuilt from a
//! cache-filtered bus trace.
//!
//! * [`record`] (phase I): runs a bare-metal program on the system-mode core model with
//!   devices and interrupts, and writes what a bus monitor below the caches sees (the CAT)
//!   and, as ground truth, the instruction trace.
//! * [`extract`]: the initial machine state (IMS: registers, first-touch memory) and the
//!   asynchronous event schedule (AES: interrupts and DMA keyed by control-flow count and
//!   PC, device input queue, counter reads) from the CAT alone.
//! * [`replay`] (phase II): replays IMS + AES on the core model without devices,
//!   regenerating the instruction trace and the CAT.
//! * [`verify`]: V1-V3 of docs/citcat.md 7.
//! * [`format`](mod@format): the four files.

pub mod extract;
pub mod format;
pub mod monitor;
pub mod record;
pub mod replay;
pub mod verify;

use format::{Access, FileError, TraceEntry, TraceSink};
use monitor::BusMonitor;
use streamtrace_model::RetireEvent;
use streamtrace_sim::system::changes_control;
use streamtrace_sim::{Cpu, Machine, MemAccess, RetireHook, SimError};

/// Why a CITCAT phase failed; every variant names where.
#[derive(Debug, thiserror::Error)]
pub enum CitcatError {
    #[error("{0}")]
    Config(String),
    #[error("the program stopped after {instructions} instructions: {source}")]
    Sim { instructions: u64, source: SimError },
    #[error("the program never executed the trace-start marker (MCR p7, 0, Rd, c0, c0, 0) in {0} instructions")]
    NoTraceStart(u64),
    #[error(transparent)]
    File(#[from] FileError),
    #[error("CAT record {index}: {what}")]
    Cat { index: usize, what: String },
    #[error("replay diverged at instruction {index} (pc {pc:#010x}): {what}")]
    Divergence { index: u64, pc: u32, what: String },
    #[error("writing the instruction trace: {0}")]
    TraceOutput(std::io::Error),
}

/// The instruction-trace entry of a retired instruction (`cpu` is the state after it).
pub(crate) fn insn_entry(ev: &RetireEvent, accesses: &[MemAccess], cpu: &Cpu) -> TraceEntry {
    let mut words = [0u32; 17];
    words[..16].copy_from_slice(&cpu.r);
    words[16] = cpu.cpsr();
    TraceEntry::Insn {
        pc: ev.iw_addr(),
        opcode: ev.insn,
        regs: format::fnv1a64(&words),
        accesses: accesses.iter().map(|a| Access { addr: a.addr, size: a.size, write: a.write, value: a.value }).collect(),
    }
}

/// The retire hook of the recorder and the replayer: keeps the last retired instruction
/// and its accesses, and counts control-flow changes (the replay keeps its own `tbc`).
#[derive(Default)]
pub(crate) struct LastRetired {
    pub ev: Option<RetireEvent>,
    pub accesses: Vec<MemAccess>,
    pub changes: u64,
}

impl RetireHook for LastRetired {
    fn retire(&mut self, ev: &RetireEvent, accesses: &[MemAccess]) {
        self.changes += changes_control(ev) as u64;
        self.ev = Some(*ev);
        self.accesses.clear();
        self.accesses.extend_from_slice(accesses);
    }
}

/// What both phases do with a retired instruction: its bus records into the monitor, its
/// entry into the instruction trace. `m` is the machine after it.
pub(crate) fn emit_instruction(
    monitor: &mut BusMonitor,
    trace: &mut dyn TraceSink,
    ev: &RetireEvent,
    accesses: &[MemAccess],
    m: &Machine,
    privileged: bool,
    counters: &[u32],
) -> Result<(), CitcatError> {
    monitor.instruction(ev, accesses, &m.mem, m.prior_bytes(), privileged, counters);
    if trace.wants() {
        trace.entry(insn_entry(ev, accesses, &m.cpu)).map_err(CitcatError::TraceOutput)?;
    }
    Ok(())
}

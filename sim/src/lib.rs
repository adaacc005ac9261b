//! streamtrace-sim: the XScale-like ARMv5TE core model. It loads ELF programs, executes ARM
//! and Thumb code with the ARM exception model, rdimon semihosting or Linux system calls
//! (static ARM EABI Linux programs, `linux`), and reports every
//! retired instruction (with its memory accesses) to a hook: the trace module, a PC trace
//! writer. An optional XScale-like timing model (`timing`) stamps each retire event with its
//! retire cycle. `system` is the bare-metal platform of CITCAT (devices, interrupts, DMA,
//! cycle counter; docs/citcat.md).

pub mod arm;
pub mod cpu;
mod decoded;
pub mod linux;
pub mod machine;
pub mod memory;
pub mod report;
pub mod semihost;
pub mod sweep;
pub mod system;
pub mod thumb;
pub mod timing;
pub mod trace_hook;

pub use cpu::{Cpu, ExceptionKind, Mode, DUMP_REGISTERS};
pub use machine::{Bus, CoprocOp, ExceptionPolicy, IoBus, Flow, Machine, MemAccess, NoHook, RetireHook, SimError, StepOutcome, Unpredictable};
pub use memory::{MemFault, Memory};
pub use report::{ProfileHook, ProgramProfile};
pub use linux::LinuxProcess;
pub use semihost::{Semihost, SemihostOutcome};
pub use timing::{StallHandle, TimingConfig, TimingModel, TimingReport};
pub use trace_hook::CycleModuleHook;

//! The simulator's memory references as host-stage traces: one place that turns a retired
//! instruction and its logged accesses into references, shared by `run --refs` and
//! `report refs`.
//!
//! Order per instruction: the instruction fetch (dinero label 2, the PC, 2 bytes in Thumb
//! state and 4 in ARM state), then the instruction's data reads (0) and writes (1) in the
//! order the core performed them. Semihosting calls touch memory outside the core and are
//! not references.

use std::io::{self, Write};

use clap::ValueEnum;
use streamtrace_model::RetireEvent;
use streamtrace_sim::MemAccess;
use streamtrace_stages::din::{DinWriter, XKind, XdinRef, XdinWriter};
use streamtrace_stages::laplace::{Access, LaplaceWriteError, RawRecord, RawWriter};
use streamtrace_stages::Ref;

/// ASID of every simulated reference: user programs run without an MMU (algorithms.md §4.1
/// uses 1 when the MMU is off).
pub const SIM_ASID: u64 = 1;

/// One memory reference of the simulated core.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimRef {
    pub kind: Access,
    pub addr: u32,
    /// Access size in bytes.
    pub size: u8,
}

impl SimRef {
    /// The dinero form (label and exact address).
    pub fn din(&self) -> Ref {
        Ref::new(self.kind.label(), self.addr as u64)
    }
}

/// Call `f` for each reference of one retired instruction, in trace order.
#[inline]
pub fn for_each_ref(ev: &RetireEvent, accesses: &[MemAccess], mut f: impl FnMut(SimRef)) {
    f(SimRef {
        kind: Access::Ifetch,
        addr: ev.pc,
        size: if ev.thumb { 2 } else { 4 },
    });
    for a in accesses {
        f(SimRef {
            kind: if a.write { Access::Write } else { Access::Read },
            addr: a.addr,
            size: a.size,
        });
    }
}

/// Text formats of `run --refs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RefsFormat {
    /// dinero III `LABEL ADDRESS`.
    Din,
    /// Dinero IV extended `r|w|i ADDRESS SIZE`.
    Xdin,
    /// Laplace raw `TYPE CYCLE LEN ASID VADDR` (CYCLE: the retire cycle, or the reference
    /// index when the core has no timing; ASID 1).
    Laplace,
}

impl RefsFormat {
    pub fn name(self) -> &'static str {
        match self {
            RefsFormat::Din => "din",
            RefsFormat::Xdin => "xdin",
            RefsFormat::Laplace => "laplace",
        }
    }
}

enum Sink<W: Write> {
    Din(DinWriter<W>),
    Xdin(XdinWriter<W>),
    Laplace(RawWriter<W>),
}

/// Writes the references of retired instructions in one of the [`RefsFormat`]s.
pub struct RefsWriter<W: Write> {
    sink: Sink<W>,
    refs: u64,
}

impl<W: Write> RefsWriter<W> {
    pub fn new(out: W, format: RefsFormat) -> Self {
        let sink = match format {
            RefsFormat::Din => Sink::Din(DinWriter::new(out)),
            RefsFormat::Xdin => Sink::Xdin(XdinWriter::new(out)),
            RefsFormat::Laplace => Sink::Laplace(RawWriter::new(out)),
        };
        RefsWriter { sink, refs: 0 }
    }

    /// References written so far.
    pub fn refs(&self) -> u64 {
        self.refs
    }

    /// Write one reference; `cycle` is the retire cycle (0 without timing).
    pub fn write(&mut self, r: SimRef, cycle: u64) -> io::Result<()> {
        match &mut self.sink {
            Sink::Din(w) => w.write(&r.din())?,
            Sink::Xdin(w) => w.write(&XdinRef {
                kind: match r.kind {
                    Access::Read => XKind::Read,
                    Access::Write => XKind::Write,
                    Access::Ifetch => XKind::Ifetch,
                },
                addr: r.addr as u64,
                size: r.size as u64,
            })?,
            Sink::Laplace(w) => w
                .write(&RawRecord {
                    kind: r.kind,
                    cycle: if cycle != 0 { cycle } else { self.refs },
                    len: r.size as u64,
                    asid: SIM_ASID,
                    vaddr: r.addr as u64,
                })
                .map_err(|e| match e {
                    LaplaceWriteError::Io(e) => e,
                    other => io::Error::new(io::ErrorKind::InvalidData, other.to_string()),
                })?,
        }
        self.refs += 1;
        Ok(())
    }

    /// Write every reference of one retired instruction.
    pub fn write_instruction(&mut self, ev: &RetireEvent, accesses: &[MemAccess]) -> io::Result<()> {
        let mut res = Ok(());
        for_each_ref(ev, accesses, |r| {
            if res.is_ok() {
                res = self.write(r, ev.cycle);
            }
        });
        res
    }

    /// Flush and return the writer.
    pub fn finish(self) -> io::Result<W> {
        match self.sink {
            Sink::Din(w) => w.into_inner(),
            Sink::Xdin(w) => w.into_inner(),
            Sink::Laplace(w) => w.into_inner(),
        }
    }
}

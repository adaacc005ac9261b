//! Phase II (docs/citcat.md 5): replay IMS + AES on the core model without devices.

use super::format::{Aes, Cat, CatRecord, Ims, IoEntry, TraceEntry, TraceSink, MON_DMA, MON_END, MON_IRQ};
use super::monitor::BusMonitor;
use super::{emit_instruction, CitcatError, LastRetired};
use streamtrace_sim::system::{is_register_access, platform_machine, platform_memory, DEV_BASE, DEV_SIZE, EXIT};
use streamtrace_sim::{CoprocOp, IoBus, MemAccess, TimingConfig, DUMP_REGISTERS};

/// The devices' stand-in: answers device loads from the IOQ, accepts device stores and CCNT reads from CNT,
/// and records the first mismatch.
struct ReplayIo<'a> {
    ioq: &'a [IoEntry],
    io_pos: usize,
    cnt: &'a [u32],
    cnt_pos: usize,
    error: Option<String>,
    /// The program wrote `EXIT`: the recorded run ended there (docs/citcat.md 2.3).
    exited: bool,
}

impl ReplayIo<'_> {
    fn load(&mut self, addr: u32, size: u8) -> Option<u32> {
        let Some(e) = self.ioq.get(self.io_pos) else {
            self.error.get_or_insert_with(|| format!("device load at {addr:#010x} but the IOQ is exhausted"));
            return None;
        };
        if (e.addr, e.size) != (addr, size) {
            self.error.get_or_insert_with(|| {
                format!(
                    "device load of {size} bytes at {addr:#010x} does not match IOQ entry {} ({} bytes at {:#010x})",
                    self.io_pos, e.size, e.addr
                )
            });
            return None;
        }
        self.io_pos += 1;
        Some(e.value)
    }
}

impl IoBus for ReplayIo<'_> {
    fn read(&mut self, addr: u32, size: u8) -> Option<u32> {
        if !is_register_access(addr, size, false) {
            return None;
        }
        self.load(addr, size)
    }

    fn write(&mut self, addr: u32, size: u8, _value: u32) -> bool {
        let ok = is_register_access(addr, size, true);
        self.exited |= ok && addr == EXIT;
        ok
    }

    fn coproc(&mut self, cp: u32, load: bool, op: CoprocOp, _value: u32) -> Option<u32> {
        let zero = CoprocOp { opc1: 0, crn: 0, crm: 0, opc2: 0 };
        match (cp, load) {
            (14, true) if op == CoprocOp { crn: 1, ..zero } => {
                let Some(&v) = self.cnt.get(self.cnt_pos) else {
                    self.error.get_or_insert_with(|| "CCNT read but the CNT queue is exhausted".into());
                    return Some(0);
                };
                self.cnt_pos += 1;
                Some(v)
            }
            (14, false) if op == CoprocOp { crn: 1, ..zero } => Some(0),
            // The trace-start marker is a no-op in the replay.
            (7, false) if op == zero => Some(0),
            _ => None,
        }
    }
}

/// Finds a replay loop that cannot reach its end key within the instruction budget, before
/// it writes that budget's worth of trace. Once every INT, IOQ, DMA and CNT entry is consumed,
/// nothing outside the core changes its state, so the same architectural state (every
/// register, CP15, the accumulator) at two control-flow changes with no RAM store in between
/// repeats forever: `period_tbc` changes and `period_insns` instructions per turn. States are
/// compared with Brent's method (a snapshot kept for 1, 2, 4, ... changes), which finds a loop
/// of any length within about twice that length. Every turn advances `tbc` by the same
/// amount, which gives a lower bound on the instructions left to reach the end key's `tbc`.
/// (A recording stopped by its instruction limit can end inside such a loop, so a loop alone
/// is no divergence.) This bounds what a damaged or hostile end key (e.g. `end_tbc` = 2^64-1)
/// makes the replay write to a few turns of the final loop.
struct SpinCheck {
    /// The state, `tbc` and instruction count at the snapshot.
    snapshot: Option<([u64; DUMP_REGISTERS], u64, u64)>,
    since: u64,
    period: u64,
}

/// A loop found by [`SpinCheck`]: per turn, control-flow changes and instructions.
struct Turn {
    period_tbc: u64,
    period_insns: u64,
}

impl SpinCheck {
    fn new() -> SpinCheck {
        SpinCheck { snapshot: None, since: 0, period: 1 }
    }

    /// Call after an instruction with its accesses, `tbc` and the instruction count after
    /// it; returns the loop once the state repeats.
    fn check(&mut self, m: &streamtrace_sim::Machine, accesses: &[MemAccess], changed_control: bool, tbc: u64) -> Option<Turn> {
        if accesses.iter().any(|a| a.write && !(DEV_BASE..DEV_BASE + DEV_SIZE).contains(&a.addr)) {
            *self = SpinCheck::new();
            return None;
        }
        if !changed_control {
            return None;
        }
        let state = m.cpu.dump_registers();
        if let Some((snap, snap_tbc, snap_insns)) = &self.snapshot {
            if *snap == state {
                return Some(Turn { period_tbc: tbc - snap_tbc, period_insns: m.retired - snap_insns });
            }
        }
        self.since += 1;
        if self.snapshot.is_none() || self.since >= self.period {
            self.snapshot = Some((state, tbc, m.retired));
            self.since = 0;
            self.period = self.period.saturating_mul(2);
        }
        None
    }
}

/// What the replay produced.
pub struct Replay {
    pub cat: Cat,
    pub instructions: u64,
}

/// Replay `ims` + `aes`. The monitor's caches take the geometry and policy of `timing` (the
/// recording's). Stops at the AES end key; runs of more than `max_insns` instructions are a
/// divergence (a replay that never reaches the end key).
/// The instruction trace goes to `trace`.
pub fn replay(ims: &Ims, aes: &Aes, timing: &TimingConfig, max_insns: u64, trace: &mut dyn TraceSink) -> Result<Replay, CitcatError> {
    let mut mem = platform_memory();
    for (i, (addr, bytes)) in ims.runs.iter().enumerate() {
        mem.write_bytes(*addr, bytes)
            .map_err(|f| CitcatError::Config(format!("IMS run {i} at {addr:#010x}: address {:#010x} is not RAM", f.addr)))?;
    }
    let mut m = platform_machine(mem);
    m.log_prior = true;
    m.cpu.restore_registers(&ims.registers).map_err(|e| CitcatError::Config(format!("IMS registers: {e}")))?;

    let mut monitor = BusMonitor::new(timing).map_err(CitcatError::Config)?;
    monitor.push(CatRecord::begin(m.cpu.mode().is_privileged(), 0));

    let mut io = ReplayIo { ioq: &aes.ioq, io_pos: 0, cnt: &aes.cnt, cnt_pos: 0, error: None, exited: false };
    let mut spin = SpinCheck::new();
    let (mut tbc, mut next_int, mut next_dma) = (0u64, 0usize, 0usize);
    let mut hook = LastRetired::default();
    loop {
        let pc = m.cpu.r[15] | m.cpu.thumb as u32;
        let index = m.retired;
        let diverged = |what: String| CitcatError::Divergence { index, pc, what };
        // 1. DMA bursts keyed to this boundary.
        if aes.dma.get(next_dma).is_some_and(|d| (d.tbc, d.pc) == (tbc, pc)) {
            monitor.push(CatRecord::monitor(MON_DMA, tbc, pc, 0));
            while let Some(d) = aes.dma.get(next_dma).filter(|d| (d.tbc, d.pc) == (tbc, pc)) {
                m.mem.write_bytes(d.addr, &d.data).map_err(|f| diverged(format!("DMA burst {next_dma} writes {:#010x}, which is not RAM", f.addr)))?;
                monitor.push(CatRecord::dma_write(d.addr, 0, &d.data));
                next_dma += 1;
            }
        }
        if let Some(d) = aes.dma.get(next_dma).filter(|d| d.tbc < tbc) {
            return Err(diverged(format!("DMA burst {next_dma} keyed to (tbc {}, pc {:#010x}) was never reached; now at tbc {tbc}", d.tbc, d.pc)));
        }
        // 2. The interrupt keyed to this boundary.
        if aes.ints.get(next_int).is_some_and(|e| (e.tbc, e.pc) == (tbc, pc)) {
            if m.cpu.irq_disabled {
                return Err(diverged(format!("INT {next_int} is due here but IRQs are masked (CPSR.I set)")));
            }
            monitor.push(CatRecord::monitor(MON_IRQ, tbc, pc, 0));
            trace.entry(TraceEntry::Irq { tbc, pc }).map_err(CitcatError::TraceOutput)?;
            m.take_irq();
            tbc += 1;
            next_int += 1;
            continue;
        }
        if let Some(e) = aes.ints.get(next_int).filter(|e| e.tbc < tbc) {
            return Err(diverged(format!("INT {next_int} keyed to (tbc {}, pc {:#010x}) was never reached; now at tbc {tbc}", e.tbc, e.pc)));
        }
        // 3. The end key.
        if (tbc, pc) == (aes.end_tbc, aes.end_pc) {
            break;
        }
        if io.exited {
            return Err(diverged(format!(
                "the program wrote EXIT, which ends a recorded run, but the end key is (tbc {}, pc {:#010x})",
                aes.end_tbc, aes.end_pc
            )));
        }
        if tbc > aes.end_tbc {
            return Err(diverged(format!("ran past the end key (tbc {}, pc {:#010x})", aes.end_tbc, aes.end_pc)));
        }
        if index >= max_insns {
            return Err(diverged(format!("no end key after {max_insns} instructions")));
        }
        // 4. One instruction.
        let mode = m.cpu.mode();
        let cnt_before = io.cnt_pos;
        m.step_with_io(&mut hook, &mut io).map_err(|e| diverged(e.to_string()))?;
        if let Some(what) = io.error.take() {
            return Err(diverged(what));
        }
        let changes = std::mem::take(&mut hook.changes);
        tbc += changes;
        let ev = hook.ev.take().expect("a step that returned retired an instruction");
        let counters = &aes.cnt[cnt_before..io.cnt_pos];
        emit_instruction(&mut monitor, trace, &ev, &hook.accesses, &m, mode.is_privileged(), counters)?;
        let drained = next_int == aes.ints.len() && next_dma == aes.dma.len() && io.io_pos == aes.ioq.len() && io.cnt_pos == aes.cnt.len();
        if let Some(turn) = drained.then(|| spin.check(&m, &hook.accesses, changes > 0, tbc)).flatten() {
            // Whole turns needed before `tbc` reaches the end key's; none if it is behind.
            let turns = aes.end_tbc.saturating_sub(tbc) / turn.period_tbc;
            let needed = u128::from(turns) * u128::from(turn.period_insns);
            if needed > u128::from(max_insns.saturating_sub(m.retired)) {
                return Err(CitcatError::Divergence {
                    index: m.retired,
                    pc: m.cpu.r[15] | m.cpu.thumb as u32,
                    what: format!(
                        "every AES entry is consumed and the program loops ({} instructions and {} control-flow changes per turn): \
                         reaching the end key (tbc {}, pc {:#010x}) would take at least {needed} more instructions, beyond the limit of {max_insns}",
                        turn.period_insns, turn.period_tbc, aes.end_tbc, aes.end_pc
                    ),
                });
            }
        }
    }
    // V3: every event consumed.
    let left = [
        ("INT", aes.ints.len() - next_int),
        ("IOQ", aes.ioq.len() - io.io_pos),
        ("DMA", aes.dma.len() - next_dma),
        ("CNT", aes.cnt.len() - io.cnt_pos),
    ];
    if let Some((name, n)) = left.iter().find(|(_, n)| *n > 0) {
        return Err(CitcatError::Divergence {
            index: m.retired,
            pc: aes.end_pc,
            what: format!("reached the end key with {n} {name} entries not consumed"),
        });
    }
    monitor.push(CatRecord::monitor(MON_END, tbc, aes.end_pc, 0));
    trace.entry(TraceEntry::End { instructions: m.retired }).map_err(CitcatError::TraceOutput)?;
    Ok(Replay { cat: monitor.cat, instructions: m.retired })
}

//! Phase I (docs/citcat.md 2): run a program in system mode and record the CAT, with the
//! instruction trace as ground truth.

use super::format::{Cat, CatRecord, TraceEntry, TraceSink, MON_DMA, MON_END, MON_IRQ};
use super::monitor::BusMonitor;
use super::{emit_instruction, CitcatError, LastRetired};
use streamtrace_isa::ElfImage;
use streamtrace_sim::system::{in_dump_region, System, SystemConfig};
use streamtrace_sim::{Mode, StepOutcome, TimingConfig, DUMP_REGISTERS};

/// What to run.
#[derive(Clone, Debug)]
pub struct RecordOptions {
    pub system: SystemConfig,
    pub timing: TimingConfig,
    /// Stop after this many instructions (all, including those before the trace start).
    pub max_insns: u64,
}

impl Default for RecordOptions {
    fn default() -> Self {
        RecordOptions { system: SystemConfig::default(), timing: TimingConfig::default(), max_insns: 100_000_000 }
    }
}

/// Figures of a recording (the perturbation and the report's time line).
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct RecordStats {
    /// The program's exit code; `None` when the instruction limit stopped it.
    pub exit_code: Option<i32>,
    /// Instructions before the trace start (the start-of-trace driver and the program's
    /// set-up), not traced.
    pub before_trace: u64,
    /// Traced instructions.
    pub instructions: u64,
    /// Traced instructions up to the driver's last register-dump store (the driver's cost
    /// after the signal; docs/citcat.md 2.2).
    pub dump_instructions: u64,
    /// Of the traced instructions, executed in IRQ mode (the interrupt handlers: the perturbation the events
    /// cost the program).
    pub handler_instructions: u64,
    /// Retire cycle of the last traced instruction minus that of the trace start.
    pub cycles: u64,
    pub irqs: u64,
    pub dma_bursts: u64,
    pub counter_reads: u64,
    /// The timing model's cache misses over the traced part: I-cache misses, D-cache read
    /// misses, write misses and write-backs. The core's caches are invalidated with the
    /// monitor's at the trace start, so these match the CAT's IFILL, DFILL and WRITE counts
    /// (a cross-check of the monitor against the timing model).
    pub timing_misses: [u64; 4],
    /// UART bytes the program transmitted.
    pub uart_output: String,
    /// `(instructions traced, CAT bytes so far)` every `sample_every` instructions.
    pub cat_bytes_over_time: Vec<(u64, u64)>,
}

/// A recorded run.
pub struct Recording {
    pub cat: Cat,
    pub stats: RecordStats,
    /// The core's registers at S0 (after the signal), read from the model: what the
    /// driver's dump must reproduce (a check of the driver, not part of the CAT).
    pub s0_registers: [u64; DUMP_REGISTERS],
}

/// Instructions between two samples of the CAT size.
pub const SAMPLE_EVERY: u64 = 1000;

/// Run `elf` to its EXIT (or the limit) and record from its trace-start signal on; the
/// recorded run's instruction trace (the ground truth) goes to `trace`. `progress` is
/// called every million instructions with the count so far.
pub fn record(
    elf: &ElfImage,
    opts: &RecordOptions,
    trace: &mut dyn TraceSink,
    mut progress: impl FnMut(u64),
) -> Result<Recording, CitcatError> {
    // The monitor checks the cache geometry (and the CAT's line size) first: a rejected
    // configuration allocates nothing.
    let mut monitor = BusMonitor::new(&opts.timing).map_err(CitcatError::Config)?;
    let mut sys = System::for_elf(elf, opts.system.clone(), opts.timing.clone()).map_err(CitcatError::Config)?;
    sys.machine.log_prior = true;
    let mut stats = RecordStats::default();
    let mut recording = false;
    let mut s0_registers = [0u64; DUMP_REGISTERS];
    let mut misses_at_start = [0u64; 4];
    let mut start_cycle = 0;
    let mut hook = LastRetired::default();
    let mut cat_bytes = Cat::HEADER_BYTES as u64;
    let mut counted = 0;
    while sys.machine.retired < opts.max_insns {
        let b = sys.boundary();
        if recording {
            if let Some(first) = b.bursts.first() {
                monitor.push(CatRecord::monitor(MON_DMA, b.tbc, b.pc, first.cycle));
                for burst in &b.bursts {
                    monitor.push(CatRecord::dma_write(burst.addr, burst.cycle, &burst.data));
                }
                stats.dma_bursts += b.bursts.len() as u64;
            }
            if b.irq {
                monitor.push(CatRecord::monitor(MON_IRQ, b.tbc, b.pc, sys.now()));
                trace.entry(TraceEntry::Irq { tbc: b.tbc, pc: b.pc }).map_err(CitcatError::TraceOutput)?;
                stats.irqs += 1;
            }
        }
        let mode = sys.machine.cpu.mode();
        let outcome = sys.step(&mut hook).map_err(|source| CitcatError::Sim { instructions: sys.machine.retired, source })?;
        let counters = std::mem::take(&mut sys.devices.counter_reads);
        let ev = hook.ev.take().expect("a step that returned retired an instruction");
        if recording {
            emit_instruction(&mut monitor, trace, &ev, &hook.accesses, &sys.machine, mode.is_privileged(), &counters)?;
            stats.instructions += 1;
            if hook.accesses.iter().any(|a| a.write && in_dump_region(a.addr)) {
                stats.dump_instructions = stats.instructions;
            }
            stats.handler_instructions += (mode == Mode::Irq) as u64;
            stats.counter_reads += counters.len() as u64;
            if stats.instructions % SAMPLE_EVERY == 0 {
                let recs = &monitor.cat.records[counted..];
                cat_bytes += recs.iter().map(|r| r.file_bytes() as u64).sum::<u64>();
                counted = monitor.cat.records.len();
                stats.cat_bytes_over_time.push((stats.instructions, cat_bytes));
            }
        } else {
            stats.before_trace += 1;
        }
        if std::mem::take(&mut sys.devices.trace_start) && !recording {
            recording = true;
            sys.tbc = 0;
            start_cycle = sys.now();
            monitor.invalidate();
            // The driver's cache invalidation, on the core too (in zero time).
            if let Some(t) = sys.machine.timing_mut() {
                t.invalidate_caches();
            }
            misses_at_start = timing_misses(&sys);
            s0_registers = sys.machine.cpu.dump_registers();
            // The registers reach the CAT through the driver's dump stores that follow.
            monitor.push(CatRecord::begin(sys.machine.cpu.mode().is_privileged(), sys.now()));
        }
        if sys.machine.retired % 1_000_000 == 0 {
            progress(sys.machine.retired);
        }
        if let StepOutcome::Exited(code) = outcome {
            stats.exit_code = Some(code);
            break;
        }
    }
    if !recording {
        return Err(CitcatError::NoTraceStart(sys.machine.retired));
    }
    monitor.push(CatRecord::monitor(MON_END, sys.tbc, sys.pc(), sys.now()));
    trace.entry(TraceEntry::End { instructions: stats.instructions }).map_err(CitcatError::TraceOutput)?;
    stats.cycles = sys.now() - start_cycle;
    let end = timing_misses(&sys);
    stats.timing_misses = std::array::from_fn(|i| end[i] - misses_at_start[i]);
    stats.uart_output = String::from_utf8_lossy(sys.devices.uart_output()).into_owned();
    Ok(Recording { cat: monitor.cat, stats, s0_registers })
}

/// I-cache misses, D-cache read misses, write misses, write-backs of the timing model.
fn timing_misses(sys: &System) -> [u64; 4] {
    sys.machine.timing_report().map_or([0; 4], |r| [r.icache.misses, r.dcache.read_misses, r.dcache.write_misses, r.dcache.writebacks])
}

//! What the trace module must do, cycle by cycle, for a run of retire events: the model's
//! cycle mode (`CycleTraceModule` with its port log) turned into per-cycle expectations
//! (port beats with their data, stall cycles, the last cycle), plus the input schedule
//! rule that the RustHDL driver and the Verilator harness both follow.

use streamtrace_model::{
    BufferConfig, Config, CycleError, CycleStats, CycleTraceModule, EncodedTrace, RetireEvent,
};

/// One retirement as the hardware sees it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stimulus {
    /// Retire cycle before any stall (strictly increasing).
    pub cycle: u64,
    /// Interworking address `pc | Thumb`.
    pub pc: u32,
    /// Branch-class code (the model's `BranchClass` discriminant).
    pub class: u8,
    pub taken: bool,
    pub exception: bool,
    /// The instruction word and the interworking next address (pft's ports; the SDC
    /// schemes do not look at them).
    pub insn: u32,
    pub next_pc: u32,
}

impl Stimulus {
    pub fn from_event(ev: &RetireEvent, cycle: u64) -> Stimulus {
        Stimulus {
            cycle,
            pc: ev.iw_addr(),
            class: ev.class as u8,
            taken: ev.taken,
            exception: ev.exception,
            insn: ev.insn,
            next_pc: ev.next_pc,
        }
    }
}

/// One port beat: `bits` bits sent in module cycle `cycle`; `data` as on the pins (the
/// earliest bit on pin `port-1`, unused low pins 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Beat {
    pub cycle: u64,
    pub bits: u32,
    pub data: u64,
}

pub struct Expected {
    /// Module cycles simulated: the port sends its last bit in cycle `cycles - 1`.
    pub cycles: u64,
    pub beats: Vec<Beat>,
    /// Module cycles in which `stall` is high, ascending.
    pub stall_cycles: Vec<u64>,
    pub trace: EncodedTrace,
    pub stats: CycleStats,
}

/// Run the model's cycle mode over `events` (with their retire cycles) and list what the
/// port and the stall output must show. Module cycle 0 is the first event's retire cycle.
pub fn expected_run(cfg: &Config, buffers: &BufferConfig, events: &[(RetireEvent, u64)]) -> Result<Expected, CycleError> {
    let mut m = CycleTraceModule::new(cfg, buffers).with_port_log();
    let origin = events.first().map_or(0, |e| e.1);
    let mut stall_cycles = Vec::new();
    let mut delay = 0u64;
    for (ev, cycle) in events {
        m.push_at(ev, *cycle)?;
        let total = m.stall_cycles();
        let presented = cycle - origin + delay;
        stall_cycles.extend(presented..presented + (total - delay));
        delay = total;
    }
    let end_cycle = events.last().map_or(0, |e| e.1 - origin + 1) + delay;
    let out = m.finish();
    // Only the final partial stream can stall after the last event.
    let end_stalls = out.cycle.stall_cycles - delay;
    stall_cycles.extend(end_cycle..end_cycle + end_stalls);
    let port = buffers.port;
    let mut beats = Vec::new();
    let mut pos = 0u64;
    for b in out.port_log.as_deref().unwrap_or_default() {
        let value = read_bits(&out.trace.bytes, pos, b.bits);
        pos += b.bits as u64;
        beats.push(Beat { cycle: b.cycle, bits: b.bits, data: value << (port - b.bits) });
    }
    Ok(Expected { cycles: out.cycle.cycles, beats, stall_cycles, trace: out.trace, stats: out.cycle })
}

/// `n` (<= 64) bits of an MSB-first byte stream starting at bit `pos`, as an integer.
pub fn read_bits(bytes: &[u8], pos: u64, n: u32) -> u64 {
    (0..n as u64).fold(0u64, |acc, i| {
        let p = pos + i;
        let bit = bytes.get((p / 8) as usize).map_or(0, |b| (b >> (7 - p % 8)) & 1);
        (acc << 1) | bit as u64
    })
}

/// What the driver presents in one module cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CycleInputs {
    pub retire: Option<Stimulus>,
    pub trace_end: bool,
}

/// The input schedule: event `i` is presented in module cycle `cycle_i - cycle_0 + delay`,
/// where `delay` counts the stall cycles so far; a stalled event (or `trace_end`) is
/// presented again the next cycle. `trace_end` comes one cycle after the last retirement.
pub struct Schedule<'a> {
    events: &'a [Stimulus],
    next: usize,
    delay: u64,
    end_done: bool,
}

impl<'a> Schedule<'a> {
    pub fn new(events: &'a [Stimulus]) -> Self {
        Schedule { events, next: 0, delay: 0, end_done: false }
    }

    /// Inputs for module cycle `mc`.
    pub fn inputs(&self, mc: u64) -> CycleInputs {
        let origin = self.events.first().map_or(0, |e| e.cycle);
        if let Some(e) = self.events.get(self.next) {
            if e.cycle - origin + self.delay == mc {
                return CycleInputs { retire: Some(*e), trace_end: false };
            }
            return CycleInputs::default();
        }
        let end = self.events.last().map_or(0, |e| e.cycle - origin + 1) + self.delay;
        CycleInputs { retire: None, trace_end: !self.end_done && mc >= end }
    }

    /// After module cycle `mc` with inputs `inp` and the module's `stall` output.
    pub fn advance(&mut self, inp: &CycleInputs, stall: bool) {
        if inp.retire.is_none() && !inp.trace_end {
            return;
        }
        if stall {
            self.delay += 1;
        } else if inp.retire.is_some() {
            self.next += 1;
        } else {
            self.end_done = true;
        }
    }
}

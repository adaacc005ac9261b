//! Direct-drive RustHDL simulation of the top module (settle, sample, clock: much faster
//! than rust-hdl's threaded `Simulation`) and a cycle-by-cycle comparison with the model.

use std::fmt;

use rust_hdl::prelude::*;
use streamtrace_model::RetireEvent;

use crate::config::HwConfig;
use crate::golden::{expected_run, CycleInputs, Expected, Schedule, Stimulus};
use crate::top::TraceModule;

/// Delta iterations allowed for the design to settle (it converges in far fewer).
const SETTLE_ITERS: usize = 500;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CycleOutputs {
    pub stall: bool,
    pub port_bits: u32,
    pub port_data: u64,
    pub trace_done: bool,
}

/// A top module the direct driver can run: reset and clock, the cycle's inputs, its outputs.
pub trait DrivenTop: Block {
    fn set_clock(&mut self, high: bool);
    fn set_reset(&mut self, high: bool);
    fn apply(&mut self, inp: &CycleInputs);
    fn outputs(&self) -> CycleOutputs;
}

impl DrivenTop for TraceModule {
    fn set_clock(&mut self, high: bool) {
        self.clock.next = Clock::from(high);
    }

    fn set_reset(&mut self, high: bool) {
        self.reset.next = high;
    }

    fn apply(&mut self, inp: &CycleInputs) {
        let r = inp.retire.unwrap_or_default();
        self.retire_valid.next = inp.retire.is_some();
        self.pc.next = (r.pc as u64).into();
        self.branch_class.next = (r.class as u64).into();
        self.taken.next = r.taken;
        self.exception.next = r.exception;
        self.trace_end.next = inp.trace_end;
    }

    fn outputs(&self) -> CycleOutputs {
        CycleOutputs {
            stall: self.stall.val(),
            port_bits: self.port_valid.val().to_u32(),
            port_data: self.port_data.val().to_u64(),
            trace_done: self.trace_done.val(),
        }
    }
}

pub struct RtlSim<T: DrivenTop = TraceModule> {
    uut: T,
}

impl RtlSim<TraceModule> {
    /// Build, check and reset the SDC module (one reset cycle).
    pub fn new(h: &HwConfig) -> Result<RtlSim<TraceModule>, String> {
        RtlSim::start(TraceModule::new(h))
    }
}

impl<T: DrivenTop> RtlSim<T> {
    /// Connect, check and reset `uut` (one reset cycle).
    pub fn start(mut uut: T) -> Result<RtlSim<T>, String> {
        uut.connect_all();
        check_all(&uut).map_err(|e| format!("rust-hdl design check failed: {e:?}"))?;
        let mut sim = RtlSim { uut };
        sim.uut.set_reset(true);
        sim.settle()?;
        sim.clock()?;
        sim.uut.set_reset(false);
        Ok(sim)
    }

    fn settle(&mut self) -> Result<(), String> {
        if simulate(&mut self.uut, SETTLE_ITERS) {
            Ok(())
        } else {
            Err("the design did not settle (combinational loop?)".into())
        }
    }

    fn clock(&mut self) -> Result<(), String> {
        self.uut.set_clock(true);
        self.settle()?;
        self.uut.set_clock(false);
        self.settle()
    }

    /// One module cycle: apply the inputs, sample the outputs, clock.
    pub fn step(&mut self, inp: &CycleInputs) -> Result<CycleOutputs, String> {
        self.uut.apply(inp);
        self.settle()?;
        let out = self.uut.outputs();
        self.clock()?;
        Ok(out)
    }
}

/// The first difference between the RTL and the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    pub cycle: u64,
    pub what: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cycle {}: {}", self.cycle, self.what)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Agreement {
    pub cycles: u64,
    pub beats: u64,
    pub bits: u64,
    pub stall_cycles: u64,
}

/// Compare the RustHDL module with the model's cycle mode on every cycle of a run.
pub fn compare_with_model(h: &HwConfig, events: &[(RetireEvent, u64)]) -> Result<Agreement, Mismatch> {
    let exp = expected_run(&h.model, &h.buffers, events).map_err(|e| Mismatch { cycle: 0, what: format!("model: {e}") })?;
    let stimuli: Vec<Stimulus> = events.iter().map(|(e, c)| Stimulus::from_event(e, *c)).collect();
    let mut sim = RtlSim::new(h).map_err(|what| Mismatch { cycle: 0, what })?;
    run_against(&mut |inp| sim.step(inp), &stimuli, &exp)
}

/// Drive any implementation of one module cycle through the schedule and check it.
pub fn run_against(
    step: &mut dyn FnMut(&CycleInputs) -> Result<CycleOutputs, String>,
    stimuli: &[Stimulus],
    exp: &Expected,
) -> Result<Agreement, Mismatch> {
    let mut sched = Schedule::new(stimuli);
    let mut beats = exp.beats.iter().peekable();
    let mut stalls = exp.stall_cycles.iter().peekable();
    let mut bits = 0u64;
    for mc in 0..=exp.cycles {
        let inp = sched.inputs(mc);
        let out = step(&inp).map_err(|what| Mismatch { cycle: mc, what })?;
        let want = beats.next_if(|b| b.cycle == mc).copied();
        let (want_bits, want_data) = want.map_or((0, 0), |b| (b.bits, b.data));
        if out.port_bits != want_bits || out.port_data != want_data {
            return Err(Mismatch {
                cycle: mc,
                what: format!(
                    "port: RTL sent {} bits {:#x}, model sent {} bits {:#x} (after {} bits agreed)",
                    out.port_bits, out.port_data, want_bits, want_data, bits
                ),
            });
        }
        bits += want_bits as u64;
        let want_stall = stalls.next_if(|&&c| c == mc).is_some();
        if out.stall != want_stall {
            return Err(Mismatch {
                cycle: mc,
                what: format!("stall: RTL {}, model {} (inputs {:?})", out.stall as u8, want_stall as u8, inp),
            });
        }
        if mc == exp.cycles && !out.trace_done {
            return Err(Mismatch { cycle: mc, what: "trace_done is low after the model's last port bit".into() });
        }
        sched.advance(&inp, out.stall);
    }
    Ok(Agreement { cycles: exp.cycles, beats: exp.beats.len() as u64, bits, stall_cycles: exp.stall_cycles.len() as u64 })
}

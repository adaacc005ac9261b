//! Retire events fed with the plain ones in runs ([`PlainRun`]), as
//! `streamtrace_sim::Machine::run` reports them to a hook that offers a budget, for event
//! sources other than the core model: tests and fuzzers that check a consumer takes runs
//! exactly as it takes their instructions one by one.

use crate::cycle::{CycleError, CycleTraceModule};
use crate::encoder::{EncodeError, Encoder};
use crate::event::{PlainRun, RetireEvent};

/// A consumer of retire events that also takes plain runs.
pub trait PlainRunSink {
    type Error;
    fn plain_budget(&self) -> u32;
    /// Whether its runs may hold conditional branches not taken (as
    /// `streamtrace_sim::RetireHook::plain_branches`).
    fn plain_branches(&self) -> bool {
        false
    }
    /// One event, retired in `cycle`.
    fn take_event(&mut self, ev: &RetireEvent, cycle: u64) -> Result<(), Self::Error>;
    fn take_run(&mut self, run: &PlainRun) -> Result<(), Self::Error>;
}

impl PlainRunSink for Encoder {
    type Error = EncodeError;
    fn plain_budget(&self) -> u32 {
        Encoder::plain_budget(self)
    }
    fn take_event(&mut self, ev: &RetireEvent, _: u64) -> Result<(), EncodeError> {
        self.push(ev)
    }
    fn take_run(&mut self, run: &PlainRun) -> Result<(), EncodeError> {
        self.push_plain_run(run)
    }
}

impl PlainRunSink for CycleTraceModule {
    type Error = CycleError;
    fn plain_budget(&self) -> u32 {
        CycleTraceModule::plain_budget(self)
    }
    fn plain_branches(&self) -> bool {
        CycleTraceModule::plain_branches(self)
    }
    fn take_event(&mut self, ev: &RetireEvent, cycle: u64) -> Result<(), CycleError> {
        self.push_at(ev, cycle)
    }
    fn take_run(&mut self, run: &PlainRun) -> Result<(), CycleError> {
        self.push_plain_run(run)
    }
}

/// What the core model reports in runs: class none, not taken, no exception, falling
/// through to the next instruction, not ARM's `MOV lr, pc`; with `branches`, conditional
/// branches not taken too ([`PlainRun::may_contain_branch`]).
pub fn is_plain(ev: &RetireEvent, branches: bool) -> bool {
    (PlainRun::may_contain(ev.class, ev.thumb, ev.insn) || branches && PlainRun::may_contain_branch(ev.class))
        && !ev.taken
        && !ev.exception
        && ev.next_pc == ev.sequential_next()
}

/// What [`feed_in_plain_runs`] did: instructions taken before the first error (or all),
/// runs reported, and the first error.
pub struct Fed<E> {
    pub taken: u64,
    pub runs: u64,
    pub error: Option<E>,
}

/// Feed `events` (each with its retire cycle) as the core model would: consecutive plain
/// instructions, each where the one before it said, in runs within the budget the sink
/// offered after the last single event; every other event alone. Stops at the first error.
pub fn feed_in_plain_runs<S: PlainRunSink>(sink: &mut S, events: &[(RetireEvent, u64)]) -> Fed<S::Error> {
    let mut fed = Fed { taken: 0, runs: 0, error: None };
    let (mut budget, mut run, mut next) = (sink.plain_budget(), None::<PlainRun>, None::<u32>);
    for (e, cycle) in events {
        if budget > 0 && is_plain(e, sink.plain_branches()) && (run.is_none() || next == Some(e.iw_addr())) {
            match &mut run {
                Some(r) => {
                    r.count += 1;
                    r.last_cycle = *cycle;
                }
                None => run = Some(PlainRun { pc: e.pc, thumb: e.thumb, count: 1, first_cycle: *cycle, last_cycle: *cycle }),
            }
            budget -= 1;
            next = Some(e.next_pc);
            continue;
        }
        if let Some(r) = run.take() {
            if let Err(err) = sink.take_run(&r) {
                fed.error = Some(err);
                return fed;
            }
            fed.taken += r.count as u64;
            fed.runs += 1;
        }
        if let Err(err) = sink.take_event(e, *cycle) {
            fed.error = Some(err);
            return fed;
        }
        fed.taken += 1;
        budget = sink.plain_budget();
        next = Some(e.next_pc);
    }
    if let Some(r) = run.take() {
        match sink.take_run(&r) {
            Ok(()) => {
                fed.taken += r.count as u64;
                fed.runs += 1;
            }
            Err(err) => fed.error = Some(err),
        }
    }
    fed
}

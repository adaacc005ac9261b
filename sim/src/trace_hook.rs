//! The trace module's cycle mode fed straight from [`Machine::run`](crate::Machine::run):
//! a timed run's retire events, with the plain instructions inside a stream in runs
//! ([`RetireHook::plain_budget`]), so that the module does per-instruction work only where a
//! stream can end (docs/performance.md, "Plain runs").

use streamtrace_model::{CycleError, CycleOutput, CycleTraceModule, PlainRun, RetireEvent};

use crate::machine::{MemAccess, RetireHook};

/// A [`CycleTraceModule`] as a run hook, on the retire cycles of the timing model (a
/// machine without timing reports cycle 0 for every instruction, which the module refuses
/// at the second event). The first error stops the feeding; [`CycleModuleHook::finish`]
/// returns it.
pub struct CycleModuleHook {
    module: CycleTraceModule,
    error: Option<CycleError>,
}

impl CycleModuleHook {
    pub fn new(module: CycleTraceModule) -> Self {
        CycleModuleHook { module, error: None }
    }

    /// The first error the module reported, if any.
    pub fn error(&self) -> Option<&CycleError> {
        self.error.as_ref()
    }

    /// The module's output, or the first error it reported.
    pub fn finish(self) -> Result<CycleOutput, CycleError> {
        match self.error {
            Some(e) => Err(e),
            None => Ok(self.module.finish()),
        }
    }
}

impl RetireHook for CycleModuleHook {
    #[inline]
    fn retire(&mut self, ev: &RetireEvent, _: &[MemAccess]) {
        if self.error.is_none() {
            if let Err(e) = self.module.push(ev) {
                self.error = Some(e);
            }
        }
    }

    #[inline]
    fn plain_budget(&self) -> u32 {
        if self.error.is_some() {
            return 0;
        }
        self.module.plain_budget()
    }

    #[inline(always)]
    fn retire_plain(&mut self, run: &PlainRun) {
        if self.error.is_none() {
            if let Err(e) = self.module.push_plain_run(run) {
                self.error = Some(e);
            }
        }
    }
}

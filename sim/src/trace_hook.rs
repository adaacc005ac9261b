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
    /// Boxed: the run loop tests it for every report, and a pointer is tested in one
    /// instruction where the error's own niche takes a wide constant.
    error: Option<Box<CycleError>>,
}

impl CycleModuleHook {
    pub fn new(module: CycleTraceModule) -> Self {
        CycleModuleHook { module, error: None }
    }

    /// The first error the module reported, if any.
    pub fn error(&self) -> Option<&CycleError> {
        self.error.as_deref()
    }

    /// The module's output, or the first error it reported.
    pub fn finish(self) -> Result<CycleOutput, CycleError> {
        match self.error {
            Some(e) => Err(*e),
            None => Ok(self.module.finish()),
        }
    }

    /// A run [`CycleTraceModule::try_plain_run`] did not take (pft's runs, refusals):
    /// the general path, out of line. (`try_plain_run` itself is inlined into the run
    /// loop: called out of line, the call clobbers registers the loop then spills around
    /// every instruction, which costs more than the inlined tests.)
    #[inline(never)]
    fn retire_plain_other(&mut self, run: &PlainRun) {
        if let Err(e) = self.module.push_plain_run(run) {
            self.error = Some(Box::new(e));
        }
    }
}

impl RetireHook for CycleModuleHook {
    /// Out of line, with the module's event path inlined into it: one call per
    /// instruction that is not in a run (the run loop would otherwise grow by all of it).
    #[inline(never)]
    fn retire(&mut self, ev: &RetireEvent, _: &[MemAccess]) {
        if self.error.is_none() {
            if let Err(e) = self.module.push_inline(ev) {
                self.error = Some(Box::new(e));
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

    /// Not-taken conditional branches in the runs too (not pft): most events that end no
    /// stream are such branches.
    #[inline(always)]
    fn plain_branches(&self) -> bool {
        self.module.plain_branches()
    }

    #[inline(always)]
    fn retire_plain(&mut self, run: &PlainRun) {
        if self.error.is_none() && !self.module.try_plain_run(run) {
            self.retire_plain_other(run);
        }
    }
}

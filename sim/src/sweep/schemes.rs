//! Whole-program bits of many configurations from one run per program, straight from retire
//! events (functional mode, no capture): how schemes that do not work on stream
//! descriptors, such as pft (docs/trace-format.md section 11), are compared with the rest
//! (`streamtrace report schemes`).

use serde::Serialize;
use streamtrace_model::storage::{PAPER_OUTPUT_BUFFER_BITS, PAPER_SDB_ENTRIES};
use streamtrace_model::{storage_bits, BufferConfig, CycleStats, CycleTraceModule, Config, Encoder, PlainRun, RetireEvent};

use super::report::SweepResults;
use super::{buffered_storage_bits, sweep_row, ProgramSpec, SweepRow};
use crate::machine::{MemAccess, RetireHook, SimError};

/// One program under one configuration.
#[derive(Clone, Debug, Serialize)]
pub struct SchemeResult {
    pub config: String,
    pub total_bits: u64,
    pub bits_per_instruction: f64,
    /// Storage bits with the paper's buffer sizing (SDB 2, 80-bit output buffer).
    pub storage_bits: u64,
    /// pft only: points and predictor hit rates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pft: Option<streamtrace_model::pft::PftStats>,
    /// Cycle mode (with `--buffers`): stalls, overflows, needed sizes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cycle: Option<CycleStats>,
    /// The same result as a sweep row, for the sweep's tables and plots.
    #[serde(skip)]
    pub row: SweepRow,
}

/// Every result as sweep rows (Table 8, Fig. 6 and the rest of the sweep's tables and
/// plots take them).
pub fn sweep_results(programs: &[ProgramSchemes]) -> SweepResults {
    SweepResults { meta: None, rows: programs.iter().flat_map(|p| p.results.iter().map(|r| r.row.clone())).collect() }
}

/// How the configurations see the run.
#[derive(Clone, Debug, Default)]
pub struct SchemeOptions {
    pub max_insns: u64,
    /// Cycle mode with these buffers (else functional).
    pub buffers: Option<BufferConfig>,
    /// Retire cycles from the XScale-like timing model (else one instruction per cycle).
    pub timing: Option<crate::TimingConfig>,
}

enum Unit {
    Functional(Box<Encoder>),
    Cycle(Box<CycleTraceModule>),
}

/// Feeds every unit; the first error stops the feeding. Plain instructions go in runs
/// while every unit offers a budget.
struct SchemesHook<'a> {
    units: &'a mut [Unit],
    configs: &'a [Config],
    program: &'a str,
    /// Retire cycles from the timing model (else instruction *i* retires in cycle *i*).
    timed: bool,
    index: u64,
    error: Option<String>,
}

impl SchemesHook<'_> {
    #[cold]
    fn fail(&mut self, config: usize, err: String) {
        self.error = Some(format!("{}: {}: {err}", self.program, self.configs[config]));
    }
}

impl RetireHook for SchemesHook<'_> {
    fn retire(&mut self, ev: &RetireEvent, _: &[MemAccess]) {
        let cycle = if self.timed { ev.cycle } else { self.index };
        self.index += 1;
        if self.error.is_some() {
            return;
        }
        for i in 0..self.units.len() {
            let r = match &mut self.units[i] {
                Unit::Functional(e) => e.push(ev).map_err(|e| e.to_string()),
                Unit::Cycle(m) => m.push_at(ev, cycle).map_err(|e| e.to_string()),
            };
            if let Err(err) = r {
                return self.fail(i, err);
            }
        }
    }

    fn plain_budget(&self) -> u32 {
        if self.error.is_some() {
            return 0;
        }
        self.units.iter().fold(u32::MAX, |b, u| {
            b.min(match u {
                Unit::Functional(e) => e.plain_budget(),
                Unit::Cycle(m) => m.plain_budget(),
            })
        })
    }

    fn retire_plain(&mut self, run: &PlainRun) {
        let n = run.count as u64;
        let run = if self.timed { *run } else { PlainRun { first_cycle: self.index, last_cycle: self.index + n - 1, ..*run } };
        self.index += n;
        if self.error.is_some() {
            return;
        }
        for i in 0..self.units.len() {
            let r = match &mut self.units[i] {
                Unit::Functional(e) => e.push_plain_run(&run).map_err(|e| e.to_string()),
                Unit::Cycle(m) => m.push_plain_run(&run).map_err(|e| e.to_string()),
            };
            if let Err(err) = r {
                return self.fail(i, err);
            }
        }
    }
}

/// One program's run.
#[derive(Clone, Debug, Serialize)]
pub struct ProgramSchemes {
    pub program: String,
    pub instructions: u64,
    /// The program exited (false: stopped at the instruction cap).
    pub complete: bool,
    /// Its exit status (none when stopped at the cap).
    pub exit_code: Option<i32>,
    pub results: Vec<SchemeResult>,
}

/// Run `p` once (at most `opts.max_insns` instructions) with a trace module per
/// configuration, functional or in cycle mode.
pub fn measure_schemes(p: &ProgramSpec, configs: &[Config], opts: &SchemeOptions) -> Result<ProgramSchemes, String> {
    let mut m = p.machine()?;
    if let Some(t) = &opts.timing {
        m.enable_timing(t.clone()).map_err(|e| format!("timing configuration: {e}"))?;
    }
    let timed = opts.timing.is_some();
    let timing = super::timing_label(opts.timing.as_ref());
    if let Some(b) = &opts.buffers {
        for c in configs {
            b.check_scheme(c).map_err(|e| format!("--buffers {b}: {e}"))?;
        }
    }
    let mut units: Vec<Unit> = configs
        .iter()
        .map(|c| match &opts.buffers {
            Some(b) => Unit::Cycle(Box::new(CycleTraceModule::new(c, b))),
            None => Unit::Functional(Box::new(Encoder::new(c))),
        })
        .collect();
    let mut hook = SchemesHook { units: &mut units, configs, program: &p.name, timed, index: 0, error: None };
    let exit_code = match m.run(opts.max_insns, &mut hook) {
        Ok(code) => Some(code),
        Err(SimError::InstructionLimit { .. }) => None,
        Err(e) => return Err(format!("{}: {e} after {} instructions", p.name, m.retired)),
    };
    if let Some(e) = hook.error {
        return Err(e);
    }
    let results = configs
        .iter()
        .zip(units)
        .map(|(cfg, u)| {
            let (trace, stats, cycle) = match u {
                Unit::Functional(e) => {
                    let (t, s) = e.finish();
                    (t, s, None)
                }
                Unit::Cycle(m) => {
                    let out = m.finish();
                    (out.trace, out.stats, Some(out.cycle))
                }
            };
            let c = cycle.clone().unwrap_or_default();
            // An unbounded buffer counts at the size this run needed, as in the sweep's rows.
            let storage = match &opts.buffers {
                Some(b) => buffered_storage_bits(cfg, b, &c),
                None => storage_bits(cfg, PAPER_SDB_ENTRIES, PAPER_OUTPUT_BUFFER_BITS).total,
            };
            let buffers = opts.buffers.map_or("functional".to_string(), |b| b.to_string());
            let mut row = sweep_row(&p.name, &timing, cfg, buffers, storage, &stats, &c, &c);
            row.exit_code = exit_code;
            row.truncated = exit_code.is_none();
            SchemeResult {
                config: cfg.to_string(),
                total_bits: trace.bit_len,
                bits_per_instruction: stats.bits_per_instruction,
                storage_bits: storage,
                pft: stats.pft,
                cycle,
                row,
            }
        })
        .collect();
    Ok(ProgramSchemes { program: p.name.clone(), instructions: m.retired, complete: exit_code.is_some(), exit_code, results })
}

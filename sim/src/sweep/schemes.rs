//! Whole-program bits of many configurations from one run per program, straight from retire
//! events (functional mode, no capture): how schemes that do not work on stream
//! descriptors, such as pft (docs/trace-format.md section 11), are compared with the rest
//! (`streamtrace report schemes`).

use serde::Serialize;
use streamtrace_model::storage::{PAPER_OUTPUT_BUFFER_BITS, PAPER_SDB_ENTRIES};
use streamtrace_model::{storage_bits, BufferConfig, CycleStats, CycleTraceModule, Config, Encoder, RetireEvent};

use super::report::SweepResults;
use super::{buffered_storage_bits, sweep_row, ProgramSpec, SweepRow};
use crate::machine::MemAccess;
use crate::StepOutcome;

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
    let mut error: Option<String> = None;
    let mut index = 0u64;
    let exit_code = {
        let mut hook = |ev: &RetireEvent, _: &[MemAccess]| {
            let cycle = if timed { ev.cycle } else { index };
            index += 1;
            if error.is_some() {
                return;
            }
            for (u, c) in units.iter_mut().zip(configs) {
                let r = match u {
                    Unit::Functional(e) => e.push(ev).map_err(|e| e.to_string()),
                    Unit::Cycle(m) => m.push_at(ev, cycle).map_err(|e| e.to_string()),
                };
                if let Err(err) = r {
                    error = Some(format!("{}: {c}: {err}", p.name));
                    return;
                }
            }
        };
        loop {
            if m.retired >= opts.max_insns {
                break None;
            }
            match m.step(&mut hook) {
                Ok(StepOutcome::Running) => {}
                Ok(StepOutcome::Exited(code)) => break Some(code),
                Err(e) => return Err(format!("{}: {e} after {} instructions", p.name, m.retired)),
            }
        }
    };
    if let Some(e) = error {
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

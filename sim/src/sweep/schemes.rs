//! Whole-program bits of many configurations from one run per program, straight from retire
//! events (functional mode, no capture): how schemes that do not work on stream
//! descriptors, such as pft (docs/trace-format.md section 11), are compared with the rest
//! (`streamtrace report schemes`).

use serde::Serialize;
use streamtrace_model::storage::{PAPER_OUTPUT_BUFFER_BITS, PAPER_SDB_ENTRIES};
use streamtrace_model::{storage_bits, Config, Encoder, RetireEvent};

use super::ProgramSpec;
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
}

/// One program's run.
#[derive(Clone, Debug, Serialize)]
pub struct ProgramSchemes {
    pub program: String,
    pub instructions: u64,
    /// The program exited (false: stopped at the instruction cap).
    pub complete: bool,
    pub results: Vec<SchemeResult>,
}

/// Run `p` once (at most `max_insns` instructions) with an encoder per configuration.
pub fn measure_schemes(p: &ProgramSpec, configs: &[Config], max_insns: u64) -> Result<ProgramSchemes, String> {
    let mut m = p.machine()?;
    let mut encoders: Vec<Encoder> = configs.iter().map(Encoder::new).collect();
    let mut error: Option<String> = None;
    let complete = {
        let mut hook = |ev: &RetireEvent, _: &[MemAccess]| {
            if error.is_some() {
                return;
            }
            for e in encoders.iter_mut() {
                if let Err(err) = e.push(ev) {
                    error = Some(format!("{}: {}: {err}", p.name, e.config()));
                    return;
                }
            }
        };
        loop {
            if m.retired >= max_insns {
                break false;
            }
            match m.step(&mut hook) {
                Ok(StepOutcome::Running) => {}
                Ok(StepOutcome::Exited(_)) => break true,
                Err(e) => return Err(format!("{}: {e} after {} instructions", p.name, m.retired)),
            }
        }
    };
    if let Some(e) = error {
        return Err(e);
    }
    let results = configs
        .iter()
        .zip(encoders)
        .map(|(cfg, e)| {
            let (trace, stats) = e.finish();
            SchemeResult {
                config: cfg.to_string(),
                total_bits: trace.bit_len,
                bits_per_instruction: stats.bits_per_instruction,
                storage_bits: storage_bits(cfg, PAPER_SDB_ENTRIES, PAPER_OUTPUT_BUFFER_BITS).total,
                pft: stats.pft,
            }
        })
        .collect();
    Ok(ProgramSchemes { program: p.name.clone(), instructions: m.retired, complete, results })
}

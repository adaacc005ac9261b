//! Shared by the hw integration tests: the test programs' retire events and a seeded
//! random generator. (Each test crate uses part of it.)
#![allow(dead_code)]

use std::path::PathBuf;

use streamtrace_model::RetireEvent;
use streamtrace_sim::sweep::programs_from_manifest;
use streamtrace_sim::{SimError, StepOutcome};

pub fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testbenches/programs/programs.json")
}

/// The first `max` retire events of a test program (run as its manifest says), each with
/// its index as the retire cycle (IPC = 1).
pub fn program_events(name: &str, max: u64) -> Vec<(RetireEvent, u64)> {
    let programs = programs_from_manifest(&manifest()).unwrap();
    let p = programs.iter().find(|p| p.name == name).unwrap_or_else(|| panic!("{name} is not in the manifest"));
    let mut machine = p.machine().unwrap();
    let mut events: Vec<(RetireEvent, u64)> = Vec::new();
    let mut hook = |ev: &RetireEvent, _: &[streamtrace_sim::MemAccess]| {
        let n = events.len() as u64;
        events.push((*ev, n));
    };
    while machine.retired < max {
        match machine.step(&mut hook) {
            Ok(StepOutcome::Running) => {}
            Ok(StepOutcome::Exited(_)) | Err(SimError::InstructionLimit { .. }) => break,
            Err(e) => panic!("{name}: {e} after {} instructions", machine.retired),
        }
    }
    events
}

/// xorshift64*: reproducible stimulus without a dependency.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    pub fn chance(&mut self, per_mille: u64) -> bool {
        self.below(1000) < per_mille
    }
}

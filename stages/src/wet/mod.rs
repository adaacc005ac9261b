//! Whole Execution Traces (Zhang & Gupta, MICRO 2004; algorithms.md §6).
//!
//! * [`capture`](mod@capture): per retired instruction, the ports it read and defined, with values,
//!   and its memory accesses (§6.5).
//! * [`build`]: the graph of path nodes, timestamps, values and labelled dependence edges
//!   (§6.1, tier 1 (a), (c), (e)).
//! * [`cd`]: post-dominators of the run's control-flow graph and dynamic control
//!   dependences.
//! * [`query`]: control flow both ways, load values, addresses, backward slices (§6.6).
//! * [`record`]: the uncompressed execution record and the same queries by brute force.
//! * [`report`]: sizes, build time and query rates of one program (`report wet`).
//! * [`tier2`]: every label stream made a bidirectional stream (§6.3).
//! * [`file`](mod@file): the `.wet` file (docs/wet.md section 7).
//! * [`stream`]: the cursor interface shared by raw and compressed streams.
//! * [`bidir`]: tier-2 bidirectional stream compression (FCM, DFCM, last-n,
//!   last-n-stride), traversable forwards and backwards without decompression (§6.3).

pub mod bidir;
pub mod build;
pub mod capture;
pub mod cd;
pub mod file;
pub mod query;
pub mod record;
pub mod report;
pub mod stream;
pub mod tier2;

pub use build::{WetBuilder, WetGraph, CONTROL, MEM};
pub use capture::{capture, capture_program, Step, StepSink, FLAGS};
pub use record::ExecRecord;
pub use stream::{Cursor, RawStream};

use streamtrace_sim::sweep::ProgramSpec;

/// Build the WET of a program run (capped at `max_insns` instructions): with `control`, a
/// first run finds the post-dominators (docs/wet.md section 3), the second builds.
pub fn build_program(p: &ProgramSpec, max_insns: u64, control: bool) -> Result<WetGraph, String> {
    build_program_exit(p, max_insns, control).map(|(g, _)| g)
}

/// [`build_program`], with the program's exit status: `None` when `max_insns` stopped it.
pub fn build_program_exit(p: &ProgramSpec, max_insns: u64, control: bool) -> Result<(WetGraph, Option<i32>), String> {
    let mut builder = if control {
        let mut cfg = cd::CfgBuilder::default();
        capture_program(p, max_insns, &mut cfg)?;
        WetBuilder::with_control(cfg.finish())
    } else {
        WetBuilder::new()
    };
    let exit = capture_program(p, max_insns, &mut builder)?;
    Ok((builder.finish()?, exit))
}

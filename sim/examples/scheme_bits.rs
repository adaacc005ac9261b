//! Whole-program bits/instruction of trace module configurations on the test programs,
//! straight from retire events (no capture), with the instruction-weighted total that
//! docs/results.md reports. pft needs retire events (it has no stream descriptors), so this
//! is how its figures were measured until `sweep` runs it.
//!
//! ```sh
//! cargo run --release -p streamtrace-sim --example scheme_bits -- pft rsdc-32x4-128 "pft,hlen=none"
//! ```
//! (from the repository root; programs from testbenches/programs/programs.json)
use std::path::Path;
use streamtrace_model::{Config, Encoder, RetireEvent};
use streamtrace_sim::sweep::programs_from_manifest;
use streamtrace_sim::MemAccess;

fn main() {
    let progs = programs_from_manifest(Path::new("testbenches/programs/programs.json")).unwrap();
    let cfgs: Vec<Config> = std::env::args()
        .skip(1)
        .map(|c| c.parse().unwrap_or_else(|e| panic!("{e}")))
        .collect();
    let mut tot_bits = vec![0u64; cfgs.len()];
    let mut tot_insn = 0u64;
    for p in &progs {
        let mut m = p.machine().unwrap();
        let mut encs: Vec<Encoder> = cfgs.iter().map(Encoder::new).collect();
        let mut hook = |e: &RetireEvent, _: &[MemAccess]| {
            for en in &mut encs {
                en.push(e).unwrap();
            }
        };
        m.run(u64::MAX, &mut hook).unwrap();
        let mut line = format!("{:14}", p.name);
        let mut n = 0;
        for (i, e) in encs.into_iter().enumerate() {
            let (t, s) = e.finish();
            n = s.instructions;
            tot_bits[i] += t.bit_len;
            line += &format!(" {:.4}", s.bits_per_instruction);
            if let Some(ps) = s.pft {
                if i == 0 {
                    line += &format!(" [dmiss {:.2}% ret {}/{} ind {}/{} rt {} rc {} ad {}]", 100.0 * ps.direction_misses as f64 / ps.direction_points.max(1) as f64, ps.return_misses, ps.return_points, ps.indirect_misses, ps.indirect_points, ps.target_ras_top, ps.target_recent, ps.target_address);
                }
            }
        }
        tot_insn += n;
        println!("{line}");
    }
    for (i, c) in cfgs.iter().enumerate() {
        println!("TOTAL {c}: {:.4} bits/insn ({} insns)", tot_bits[i] as f64 / tot_insn as f64, tot_insn);
    }
}

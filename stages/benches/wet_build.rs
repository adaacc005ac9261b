//! WET build and query rates (docs/performance.md, issue 7), on test programs capped at
//! 500,000 instructions:
//!
//! * `wet/build/<program>`: the graph builder fed steps captured beforehand, in
//!   instructions/s; peer `record` copies the same steps into an `ExecRecord`.
//! * `wet/capture/<program>`: the core model with operand capture, into an empty sink.
//! * `wet/cf-forward|cf-backward/<program>/tier1|tier2`: the control-flow walk on the
//!   uncompressed and the compressed graph, in instructions/s.
//! * `wet/loads/<program>/tier1|tier2`: load values of every memory instruction.
//! * `wet/slice/<program>/tier1|tier2`: 25 backward slices.
//!
//! After the run the medians are printed with the tier-2/tier-1 ratios.

#[path = "../../scripts/bench-support/criterion_medians.rs"]
mod criterion_medians;
use criterion_medians::median_ns;

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, SamplingMode, Throughput};
use streamtrace_sim::sweep::{programs_from_manifest, ProgramSpec};
use streamtrace_stages::wet::build::WetGraph;
use streamtrace_stages::wet::cd::CfgBuilder;
use streamtrace_stages::wet::{capture_program, Cursor, ExecRecord, Step, StepSink, WetBuilder};

const CAP: u64 = 500_000;
const PROGRAMS: [&str; 2] = ["sha256", "qsort_structs"];

fn program(name: &str) -> ProgramSpec {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testbenches/programs/programs.json");
    programs_from_manifest(&manifest).unwrap().into_iter().find(|p| p.name == name).unwrap()
}

fn mem_pcs<S: Cursor>(g: &WetGraph<S>) -> Vec<u32> {
    let mut v: Vec<u32> = g.stmts.iter().filter(|s| s.loaded != 0).map(|s| s.iw).collect();
    v.sort_unstable();
    v.dedup();
    v
}

fn criteria<S: Cursor>(g: &WetGraph<S>) -> Vec<(u32, u64)> {
    (0..25)
        .map(|i| {
            let sid = (i * g.stmts.len() / 25) as u32;
            let node = g.stmts[sid as usize].node as usize;
            (sid, g.nodes[node].ts.len() as u64 - 1)
        })
        .collect()
}

fn queries<S: Cursor>(c: &mut Criterion, name: &str, tier: &str, g: &mut WetGraph<S>) {
    let n = g.counts.instructions;
    let mut grp = c.benchmark_group(format!("wet/cf-forward/{name}"));
    grp.sampling_mode(SamplingMode::Flat).sample_size(10).throughput(Throughput::Elements(n));
    grp.bench_function(tier, |b| b.iter(|| black_box(g.cf_forward().unwrap().len())));
    grp.finish();
    let mut grp = c.benchmark_group(format!("wet/cf-backward/{name}"));
    grp.sampling_mode(SamplingMode::Flat).sample_size(10).throughput(Throughput::Elements(n));
    grp.bench_function(tier, |b| b.iter(|| black_box(g.cf_backward().unwrap().len())));
    grp.finish();
    let pcs = mem_pcs(g);
    let mut grp = c.benchmark_group(format!("wet/loads/{name}"));
    grp.sampling_mode(SamplingMode::Flat).sample_size(10);
    grp.bench_function(tier, |b| b.iter(|| pcs.iter().map(|&pc| g.load_values(pc).len()).sum::<usize>()));
    grp.finish();
    let crit = criteria(g);
    let mut grp = c.benchmark_group(format!("wet/slice/{name}"));
    grp.sampling_mode(SamplingMode::Flat).sample_size(10);
    grp.bench_function(tier, |b| b.iter(|| crit.iter().map(|&(s, k)| g.backward_slice(s, k).len()).sum::<usize>()));
    grp.finish();
}

fn main() {
    // No HTML plots: the medians are printed below (and criterion's PDF plot needs a font).
    let mut c = Criterion::default().without_plots().configure_from_args();
    let mut summary = Vec::new();
    for name in PROGRAMS {
        let p = program(name);
        let mut cfg = CfgBuilder::default();
        capture_program(&p, CAP, &mut cfg).unwrap();
        let pd = cfg.finish();
        let mut record = ExecRecord::default();
        capture_program(&p, CAP, &mut record).unwrap();
        let n = record.steps.len() as u64;

        let mut grp = c.benchmark_group(format!("wet/build/{name}"));
        grp.sampling_mode(SamplingMode::Flat).sample_size(10).throughput(Throughput::Elements(n));
        grp.bench_function("wet", |b| {
            b.iter(|| {
                let mut w = WetBuilder::with_control(pd.clone());
                record.steps.iter().for_each(|s| w.step(s));
                black_box(w.finish().unwrap().nodes.len())
            })
        });
        grp.bench_function("record", |b| {
            b.iter(|| {
                let mut r = ExecRecord::default();
                record.steps.iter().for_each(|s| r.step(s));
                black_box(r.steps.len())
            })
        });
        grp.finish();
        let mut grp = c.benchmark_group(format!("wet/capture/{name}"));
        grp.sampling_mode(SamplingMode::Flat).sample_size(10).throughput(Throughput::Elements(n));
        grp.bench_function("capture", |b| b.iter(|| capture_program(&p, CAP, &mut |_: &Step| {}).unwrap()));
        grp.finish();

        let mut w = WetBuilder::with_control(pd);
        record.steps.iter().for_each(|s| w.step(s));
        let mut g1 = w.finish().unwrap();
        let mut g2 = g1.clone().compress();
        queries(&mut c, name, "tier1", &mut g1);
        queries(&mut c, name, "tier2", &mut g2);
        summary.push((name, n));
    }
    c.final_summary();
    println!("\nWET medians ({CAP} instructions per program):");
    for (name, n) in summary {
        let m = |g: &str, id: &str| median_ns(&format!("wet/{g}/{name}"), id);
        if let (Some(w), Some(r), Some(cap)) = (m("build", "wet"), m("build", "record"), m("capture", "capture")) {
            println!(
                "  {name}: build {:.2} M insns/s (record copy {:.1} M/s, x{:.1}); capture {:.1} M insns/s",
                n as f64 / w * 1e3,
                n as f64 / r * 1e3,
                w / r,
                n as f64 / cap * 1e3
            );
        }
        for q in ["cf-forward", "cf-backward", "loads", "slice"] {
            if let (Some(a), Some(b)) = (m(q, "tier1"), m(q, "tier2")) {
                println!("  {name} {q}: tier 1 {:.2} ms, tier 2 {:.2} ms (x{:.2})", a / 1e6, b / 1e6, b / a);
            }
        }
    }
}

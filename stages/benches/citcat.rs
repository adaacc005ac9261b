//! CITCAT rates (docs/performance.md, issue 8) on the system-mode programs:
//!
//! * `citcat/<program>/system-run`: the peer, the timed system-mode machine with its
//!   devices and no monitor;
//! * `citcat/<program>/record`: the same run recorded (bus monitor, CAT, the instruction
//!   trace into memory);
//! * `citcat/<program>/extract`: IMS and AES from the CAT;
//! * `citcat/<program>/replay`: the untimed replay without devices, regenerating the
//!   instruction trace (into memory) and the CAT; `replay-no-trace` without the trace
//!   (the CAT and V3 only).
//!
//! After the run the medians are printed in instructions per second, with record and
//! replay as ratios to the plain system run.

#[path = "../../scripts/bench-support/criterion_medians.rs"]
mod criterion_medians;
use criterion_medians::median_ns;

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, SamplingMode, Throughput};
use streamtrace_isa::ElfImage;
use streamtrace_sim::system::{System, SystemConfig};
use streamtrace_sim::TimingConfig;
use streamtrace_stages::citcat::extract::extract;
use streamtrace_stages::citcat::format::NoTrace;
use streamtrace_stages::citcat::record::{record, RecordOptions};
use streamtrace_stages::citcat::replay::replay;

const PROGRAMS: [&str; 2] = ["sys_timer", "sys_io"];

fn main() {
    let mut c = Criterion::default().without_plots().configure_from_args();
    let mut summary = Vec::new();
    for name in PROGRAMS {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../testbenches/programs/system/bin/{name}.elf"));
        let elf = ElfImage::open(path).unwrap();
        let opts = RecordOptions::default();
        let rec = record(&elf, &opts, &mut NoTrace, |_| {}).unwrap();
        let (ims, aes) = extract(&rec.cat).unwrap();
        let n = rec.stats.instructions + rec.stats.before_trace;
        let mut grp = c.benchmark_group(format!("citcat/{name}"));
        grp.sampling_mode(SamplingMode::Flat).sample_size(10).throughput(Throughput::Elements(n));
        grp.bench_function("system-run", |b| {
            b.iter(|| {
                let mut s = System::for_elf(&elf, SystemConfig::default(), TimingConfig::default()).unwrap();
                black_box(s.run(u64::MAX).unwrap())
            })
        });
        grp.bench_function("record", |b| b.iter(|| black_box(record(&elf, &opts, &mut Vec::new(), |_| {}).unwrap().cat.records.len())));
        grp.bench_function("extract", |b| b.iter(|| black_box(extract(&rec.cat).unwrap().1.ioq.len())));
        grp.bench_function("replay", |b| {
            b.iter(|| black_box(replay(&ims, &aes, &TimingConfig::default(), u64::MAX, &mut Vec::new()).unwrap().instructions))
        });
        grp.bench_function("replay-no-trace", |b| {
            b.iter(|| black_box(replay(&ims, &aes, &TimingConfig::default(), u64::MAX, &mut NoTrace).unwrap().instructions))
        });
        grp.finish();
        summary.push((name, n, rec.stats.instructions));
    }
    c.final_summary();
    println!("\nCITCAT medians (instructions of the whole run; replay covers the traced part):");
    for (name, n, traced) in summary {
        let m = |id: &str| median_ns(&format!("citcat/{name}"), id);
        if let (Some(run), Some(rec), Some(ex), Some(rep), Some(bare)) =
            (m("system-run"), m("record"), m("extract"), m("replay"), m("replay-no-trace"))
        {
            println!(
                "  {name}: system run {:.1} M insns/s; record {:.1} M/s (x{:.2} the run's time); extract {:.1} M traced insns/s; replay {:.1} M/s (x{:.2} the run's time per instruction), without the trace {:.1} M/s (x{:.2})",
                n as f64 / run * 1e3,
                n as f64 / rec * 1e3,
                rec / run,
                traced as f64 / ex * 1e3,
                traced as f64 / rep * 1e3,
                (rep / traced as f64) / (run / n as f64),
                traced as f64 / bare * 1e3,
                (bare / traced as f64) / (run / n as f64)
            );
        }
    }
}

//! Decoder throughput, docs/performance.md.
//!
//! Two synthetic runs (sw-decoder `synthetic::generate`, 2M instructions each over a 64 KB
//! ARM + 32 KB Thumb image) are encoded once per scheme; each bench decodes a whole trace
//! from bit 0, in instruction addresses per second:
//!
//! * workload `loops`: 8 indirect-branch targets (low entropy, like real call/return
//!   behaviour), so the run stays in a small hot set with high SDC hit rates;
//! * workload `wide`: 256 indirect targets: ~10x more unique streams, mostly SDC misses,
//!   the decoder's slow path (address fields, stream-cache misses).
//!
//! * `decoder/counting/<workload>/<scheme>`: into a `CountingSink` (count + checksum of every
//!   address); peer `decoder/counting/memcpy-u32` copies the same number of u32 addresses.
//! * `decoder/vec/loops/<scheme>`: into a `Vec<u32>` (cleared, capacity kept between
//!   iterations); same peer.
//!
//! * `decoder/program/<program>/<scheme>`: real code, rSDC against pft only: the core model
//!   (streamtrace-sim) runs a test program of testbenches/programs (prebuilt ELF, the
//!   arguments of programs.json) to its exit, the model's encoder encodes its retire events,
//!   and each bench decodes the whole trace with the ELF as the image into a `CountingSink`.
//!   Every program of the manifest but `tiny` (start-up only). The traces are built on first
//!   use, so a filter that leaves these rows out skips the simulation.
//! * `decoder/program-file/<program>/<form>`: the rSDC trace decoded into a file of
//!   addresses in a temporary directory, as `decode -o` writes it (`AddressFileWriter`):
//!   `binary` (32-bit words) or `text` (`%08x A` lines, the default form); peer
//!   `write-peer` writes the binary file's number of bytes from a buffer, no decoding. Each
//!   iteration writes a new file (the previous one is removed untimed).
//!
//! After the run the medians are read back from criterion's `estimates.json` and printed as
//! ratios against the memcpy peer, pft's speed as a ratio of rSDC's, and for the programs
//! the addresses per second over all of them (total addresses / total median time).

use std::hint::black_box;
#[path = "../../scripts/bench-support/criterion_medians.rs"]
mod criterion_medians;
use criterion_medians::median_ns;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use criterion::{BatchSize, BenchmarkId, Criterion, SamplingMode, Throughput};
use streamtrace_isa::{ElfImage, MemoryImage, ProgramImage};
use streamtrace_model::{Config, Encoder, RetireEvent};
use streamtrace_sim::semihost::SharedBuffer;
use streamtrace_sim::{Machine, MemAccess, Semihost};
use streamtrace_sw_decoder::address_file::{AddressFileWriter, AddressForm};
use streamtrace_sw_decoder::synthetic::{generate, SyntheticSpec};
use streamtrace_sw_decoder::{AddressSink, CountingSink, Decoder, Step, StreamDecoder};

const INSTRUCTIONS: usize = 2_000_000;
const SCHEMES: &[&str] = &["base", "nexs", "bsdc-32x4-128", "esdc-32x4-128", "rsdc-32x4-128", "pft"];
const VEC_SCHEMES: &[&str] = &["base", "rsdc-32x4-128", "pft"];
const STREAM_SCHEMES: &[&str] = &["base", "rsdc-32x4-128", "pft"];
/// The schemes compared on the real programs (testbenches/programs/programs.json).
const PROGRAM_SCHEMES: &[&str] = &["rsdc-32x4-128", "pft"];
/// Forms of the address files the rSDC program traces are decoded into.
const FILE_FORMS: &[&str] = &["binary", "text"];

/// Workload names and their specs (docs/performance.md explains the choice): `loops` has an
/// average stream length of ~12 instructions and ~90 unique streams; `wide` ~800 unique
/// streams and mostly SDC misses.
fn workloads() -> Vec<(&'static str, SyntheticSpec)> {
    let base = |targets: u32, density: u64, taken: u64| {
        let mut s = SyntheticSpec::new(1, INSTRUCTIONS);
        s.arm_words = 16 * 1024;
        s.thumb_halfwords = 16 * 1024;
        s.branch_density = density;
        s.taken_bias = taken;
        s.exception_rate = 0; // SWIs in the code still raise exceptions
        s.indirect_targets = targets;
        s
    };
    vec![("loops", base(8, 150, 600)), ("wide", base(256, 150, 600))]
}

fn encode(cfg: &Config, events: &[RetireEvent]) -> Vec<u8> {
    let mut enc = Encoder::new(cfg);
    for e in events {
        enc.push(e).expect("synthetic events are consistent");
    }
    let (trace, stats) = enc.finish();
    eprintln!(
        "  {:>14}: {:>9} bytes, {:.4} bits/instr, avg SL {:.2}, {} unique streams, hrSDC {:.3}, hrLSP {:.3}",
        cfg.to_string(),
        trace.bytes.len(),
        stats.bits_per_instruction,
        stats.avg_sl,
        stats.unique_streams,
        stats.hr_sdc,
        stats.hr_lsp
    );
    trace.bytes
}

fn decode_into<I: ProgramImage, S: AddressSink>(cfg: &Config, bytes: &[u8], image: &I, sink: &mut S) {
    let mut dec = Decoder::new(cfg, bytes, image);
    while dec.next_element(sink).expect("valid trace").is_some() {}
}

struct Prepared {
    workload: &'static str,
    image: MemoryImage,
    n: u64,
    traces: Vec<(Config, Vec<u8>)>,
}

/// A test program's run, encoded under `PROGRAM_SCHEMES`.
struct ProgramTrace {
    image: ElfImage,
    n: u64,
    traces: Vec<(Config, Vec<u8>)>,
}

fn programs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testbenches/programs")
}

/// Run `name` on the core model to its exit with the command line of programs.json, encoding
/// every retire event as it comes (the events are not kept: sha256 retires 45 M).
fn program_trace(name: &str) -> ProgramTrace {
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(programs_dir().join("programs.json")).unwrap()).unwrap();
    let prog = manifest["programs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("{name} is not in programs.json"));
    let image = ElfImage::open(programs_dir().join(prog["elf"].as_str().unwrap())).unwrap();
    let semihost = Semihost::new()
        .with_cmdline(prog["cmdline"].as_str().unwrap())
        .with_workdir(programs_dir())
        .with_stdin(std::io::empty())
        .with_stdout(SharedBuffer::new())
        .with_stderr(SharedBuffer::new());
    let configs: Vec<Config> = PROGRAM_SCHEMES.iter().map(|s| s.parse().unwrap()).collect();
    let mut encoders: Vec<Encoder> = configs.iter().map(Encoder::new).collect();
    let mut m = Machine::for_elf(&image, semihost);
    let mut hook = |ev: &RetireEvent, _: &[MemAccess]| {
        for e in &mut encoders {
            e.push(ev).expect("the core model's events are consistent");
        }
    };
    let code = m.run(u64::MAX, &mut hook).expect("test programs run to their exit");
    assert_eq!(code as i64, prog["exit_code"].as_i64().unwrap(), "{name}'s exit code");
    let n = m.retired;
    eprintln!("program {name}: {n} instructions; traces:");
    let traces = configs
        .into_iter()
        .zip(encoders)
        .map(|(cfg, enc)| {
            let (trace, stats) = enc.finish();
            eprintln!(
                "  {:>14}: {:>9} bytes, {:.4} bits/instr",
                cfg.to_string(),
                trace.bytes.len(),
                stats.bits_per_instruction
            );
            (cfg, trace.bytes)
        })
        .collect();
    ProgramTrace { image, n, traces }
}

/// The program traces, each built when its first bench runs: every program of the manifest
/// but `tiny`, which is all start-up.
fn program_traces() -> &'static [(String, OnceLock<ProgramTrace>)] {
    static TRACES: OnceLock<Vec<(String, OnceLock<ProgramTrace>)>> = OnceLock::new();
    TRACES.get_or_init(|| {
        let manifest: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(programs_dir().join("programs.json")).unwrap()).unwrap();
        manifest["programs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap().to_string())
            .filter(|n| n != "tiny")
            .map(|n| (n, OnceLock::new()))
            .collect()
    })
}

fn benches(c: &mut Criterion, work: &[Prepared]) {
    let n = work[0].n;
    assert!(work.iter().all(|w| w.n == n));
    let src: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(4)).collect();
    let mut dst = vec![0u32; n as usize];

    let mut g = c.benchmark_group("decoder/counting");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_millis(1500));
    g.sampling_mode(SamplingMode::Flat);
    g.throughput(Throughput::Elements(n));
    g.bench_function("memcpy-u32", |b| {
        b.iter(|| {
            dst.copy_from_slice(black_box(&src));
            black_box(&dst);
        })
    });
    for w in work {
        for (cfg, bytes) in &w.traces {
            g.bench_function(BenchmarkId::new(w.workload, cfg), |b| {
                b.iter(|| {
                    let mut sink = CountingSink::default();
                    decode_into(cfg, black_box(bytes), &w.image, &mut sink);
                    assert_eq!(sink.count, n);
                    sink.checksum
                })
            });
        }
    }
    g.finish();

    let mut g = c.benchmark_group("decoder/vec");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_millis(1500));
    g.sampling_mode(SamplingMode::Flat);
    g.throughput(Throughput::Elements(n));
    let mut out: Vec<u32> = Vec::with_capacity(n as usize);
    let w = &work[0];
    for (cfg, bytes) in w
        .traces
        .iter()
        .filter(|(c, _)| VEC_SCHEMES.contains(&c.to_string().as_str()))
    {
        g.bench_function(BenchmarkId::new(w.workload, cfg), |b| {
            b.iter(|| {
                out.clear();
                decode_into(cfg, black_box(bytes), &w.image, &mut out);
                assert_eq!(out.len() as u64, n);
                black_box(&out);
            })
        });
    }
    g.finish();

    // The streaming decoder against the whole-buffer one on the same traces: the trace
    // pushed in 64 KiB chunks and pulled with `run` (what `streamtrace decode` does) or
    // with `next` per element (what the C API's st_decoder_next does).
    let mut g = c.benchmark_group("decoder/stream");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_millis(1500));
    g.sampling_mode(SamplingMode::Flat);
    g.throughput(Throughput::Elements(n));
    let w = &work[0];
    for (cfg, bytes) in w.traces.iter().filter(|(c, _)| STREAM_SCHEMES.contains(&c.to_string().as_str())) {
        g.bench_function(BenchmarkId::new(format!("{}/whole", w.workload), cfg), |b| {
            b.iter(|| {
                let mut sink = CountingSink::default();
                decode_into(cfg, black_box(bytes), &w.image, &mut sink);
                assert_eq!(sink.count, n);
                sink.checksum
            })
        });
        for per_step in [false, true] {
            let how = if per_step { "next" } else { "run" };
            g.bench_function(BenchmarkId::new(format!("{}/stream-{how}", w.workload), cfg), |b| {
                b.iter(|| {
                    let mut sink = CountingSink::default();
                    let mut dec = StreamDecoder::new(cfg, &w.image);
                    let mut chunks = black_box(bytes).chunks(64 * 1024);
                    loop {
                        let stop = if per_step {
                            loop {
                                if let s @ (Step::NeedInput | Step::Finished) = dec.next(&mut sink) {
                                    break s;
                                }
                            }
                        } else {
                            dec.run(&mut sink, |_, _| std::ops::ControlFlow::Continue(()))
                        };
                        match (stop, chunks.next()) {
                            (Step::NeedInput, Some(c)) => dec.push(c),
                            (Step::NeedInput, None) => dec.finish(),
                            _ => break,
                        }
                    }
                    assert_eq!(sink.count, n);
                    sink.checksum
                })
            });
        }
    }
    g.finish();

    // Real programs: the instruction count is known only once a trace is built, so
    // throughput is left to the summary.
    let mut g = c.benchmark_group("decoder/program");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_millis(1500));
    g.sampling_mode(SamplingMode::Flat);
    for (name, cell) in program_traces() {
        for (k, scheme) in PROGRAM_SCHEMES.iter().enumerate() {
            g.bench_function(BenchmarkId::new(name, scheme), |b| {
                let p = cell.get_or_init(|| program_trace(name));
                let (cfg, bytes) = &p.traces[k];
                b.iter(|| {
                    let mut sink = CountingSink::default();
                    decode_into(cfg, black_box(bytes), &p.image, &mut sink);
                    assert_eq!(sink.count, p.n);
                    sink.checksum
                })
            });
        }
    }
    g.finish();

    // The same rSDC traces into files of addresses.
    let dir = std::env::temp_dir().join(format!("streamtrace-decoder-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut g = c.benchmark_group("decoder/program-file");
    g.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_millis(1500));
    g.sampling_mode(SamplingMode::Flat);
    for (name, cell) in program_traces() {
        for form in FILE_FORMS {
            g.bench_function(BenchmarkId::new(name, form), |b| {
                let p = cell.get_or_init(|| program_trace(name));
                let (cfg, bytes) = &p.traces[0];
                let path = dir.join(format!("{name}.{form}"));
                let form = if *form == "binary" { AddressForm::Binary } else { AddressForm::Annotated };
                // A new file each time: the previous iteration's file is removed untimed
                // (truncating it in `create` made the file system free 40-180 MB of blocks
                // inside the timed region, which `decode -o` into a new file never does).
                b.iter_batched(
                    || remove_if_there(&path),
                    |()| {
                        let mut sink = AddressFileWriter::new(Box::new(std::fs::File::create(&path).unwrap()), form);
                        decode_into(cfg, black_box(bytes), &p.image, &mut sink);
                        sink.finish().unwrap();
                    },
                    BatchSize::PerIteration,
                )
            });
        }
        // Peer: the same number of bytes as the binary file, written from a buffer with no
        // decoding (what the file system alone costs).
        g.bench_function(BenchmarkId::new(name, "write-peer"), |b| {
            let p = cell.get_or_init(|| program_trace(name));
            let path = dir.join(format!("{name}.peer"));
            let block = vec![0x5au8; 1 << 20];
            b.iter_batched(
                || remove_if_there(&path),
                |()| {
                    let mut file = std::fs::File::create(&path).unwrap();
                    let mut left = 4 * p.n as usize;
                    while left > 0 {
                        let n = left.min(block.len());
                        std::io::Write::write_all(&mut file, &block[..n]).unwrap();
                        left -= n;
                    }
                },
                BatchSize::PerIteration,
            )
        });
    }
    g.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

fn remove_if_there(path: &Path) {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => panic!("{}: {e}", path.display()),
        _ => {}
    }
}

fn summary(n: u64) {
    let peer = median_ns("decoder/counting", "memcpy-u32");
    eprintln!("\nratio summary (criterion medians of this run; ratio = decode time / memcpy time):");
    if let Some(p) = peer {
        eprintln!("  {:>28}: {:8.1} M addresses/s", "memcpy-u32", n as f64 / p * 1e3);
    }
    for group in ["decoder/counting", "decoder/vec"] {
        for (workload, _) in workloads() {
            for s in SCHEMES {
                if let Some(t) = median_ns(group, &format!("{workload}/{s}")) {
                    let ratio = peer.map_or(String::from("-"), |p| format!("{:.1}x", t / p));
                    let name = format!("{}/{workload}/{s}", &group["decoder/".len()..]);
                    eprintln!(
                        "  {name:>28}: {:8.1} M addresses/s, {ratio} the memcpy time",
                        n as f64 / t * 1e3
                    );
                }
            }
            // pft against the rSDC decoder it must at least match (issue 25).
            let pft = median_ns(group, &format!("{workload}/pft"));
            let rsdc = median_ns(group, &format!("{workload}/rsdc-32x4-128"));
            if let (Some(p), Some(r)) = (pft, rsdc) {
                let name = format!("{}/{workload}", &group["decoder/".len()..]);
                eprintln!("  {name:>28}: pft decodes at {:.2}x the rSDC decoder's speed", r / p);
            }
        }
    }
    // Programs whose traces this run built (their benches ran), and all of them together:
    // total addresses over the sum of the medians.
    let mut totals: Vec<(String, u64, f64)> = Vec::new();
    let mut add = |row: String, n: u64, t: f64| match totals.iter_mut().find(|(r, _, _)| *r == row) {
        Some(e) => {
            e.1 += n;
            e.2 += t;
        }
        None => totals.push((row, n, t)),
    };
    for (name, cell) in program_traces() {
        let Some(p) = cell.get() else { continue };
        let t = |group: &str, s: &str| median_ns(group, &format!("{name}/{s}"));
        for s in PROGRAM_SCHEMES {
            if let Some(t) = t("decoder/program", s) {
                eprintln!("  {:>28}: {:8.1} M addresses/s", format!("program/{name}/{s}"), p.n as f64 / t * 1e3);
                add(format!("program/all/{s}"), p.n, t);
            }
        }
        if let (Some(pf), Some(r)) = (t("decoder/program", "pft"), t("decoder/program", "rsdc-32x4-128")) {
            eprintln!("  {:>28}: pft decodes at {:.2}x the rSDC decoder's speed", format!("program/{name}"), r / pf);
        }
        for form in FILE_FORMS.iter().chain(&["write-peer"]) {
            if let Some(t) = t("decoder/program-file", form) {
                eprintln!("  {:>28}: {:8.1} M addresses/s", format!("program-file/{name}/{form}"), p.n as f64 / t * 1e3);
                add(format!("program-file/all/{form}"), p.n, t);
            }
        }
    }
    for (row, n, t) in &totals {
        eprintln!("  {row:>28}: {:8.1} M addresses/s ({n} addresses)", *n as f64 / t * 1e3);
    }
    let all = |s: &str| totals.iter().find(|(r, _, _)| r == s).map(|e| e.2);
    if let (Some(pf), Some(r)) = (all("program/all/pft"), all("program/all/rsdc-32x4-128")) {
        eprintln!("  {:>28}: pft decodes at {:.2}x the rSDC decoder's speed", "program/all", r / pf);
    }
    if let (Some(d), Some(w)) = (all("program-file/all/binary"), all("program-file/all/write-peer")) {
        eprintln!("  {:>28}: decoding into the binary file takes {:.2}x the time of writing its bytes alone", "program-file/all", d / w);
    }
}

fn main() {
    let work: Vec<Prepared> = workloads()
        .into_iter()
        .map(|(workload, spec)| {
            let run = generate(&spec).unwrap();
            let n = run.events.len() as u64;
            eprintln!(
                "workload {workload}: {n} instructions, image {} bytes; traces:",
                run.image.mapped_bytes()
            );
            let traces = SCHEMES
                .iter()
                .map(|text| {
                    let cfg: Config = text.parse().unwrap();
                    let bytes = encode(&cfg, &run.events);
                    (cfg, bytes)
                })
                .collect();
            Prepared {
                workload,
                image: run.image,
                n,
                traces,
            }
        })
        .collect();
    // Fewer bootstrap resamples than the default 100 000: the analysis otherwise costs more
    // than the measurement on this 2-core machine.
    // No plots: the simulator (program rows) enables plotters' font backend, with which
    // criterion's plots fail on a machine without fonts; the summary below is the report.
    let mut c = Criterion::default().nresamples(10_000).without_plots().configure_from_args();
    benches(&mut c, &work);
    c.final_summary();
    if std::env::args().any(|a| a == "--bench") {
        summary(work[0].n);
    }
}

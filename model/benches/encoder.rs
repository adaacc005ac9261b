//! Encoder throughput (functional mode), docs/performance.md.
//!
//! * `encoder/descriptors/<scheme>`: `Encoder::push_descriptor` over a pre-generated
//!   `Vec<StreamDescriptor>`, for every scheme at the paper's recommended size, in stream
//!   descriptors per second. The peer `encoder/descriptors/serialize-5B` writes the same
//!   descriptors as 5 plain bytes each (SA as 4 bytes, SL as 1) into a `Vec<u8>`: the cost
//!   of "just storing" the descriptors, for ratio context.
//! * `encoder/events/rsdc-32x4-128`: `Encoder::push` over the retire events that expand to
//!   the same streams (stream detector + continuity checks + compression), in instructions
//!   per second; peer `encoder/events/copy-events` reads every event once.
//!
//! The model crate cannot depend on sw-decoder, so the descriptors come from a small
//! deterministic generator in this file that mimics a real program's stream behaviour:
//! a few thousand unique (SA, SL) streams reached through a Markov chain whose successors
//! are mostly loops (same or nearby stream) or Zipf-distributed popular streams, ~10-12% of
//! streams ending in an indirect branch or return (so the next start address is sent), and
//! an exception about every 5000 streams.
//!
//! * `encoder/cycle/<scheme>`: cycle-mode replay of the same descriptors
//!   (`CycleTraceModule::push_descriptor`, IPC = 1 end cycles, the paper's buffers: SDB 2,
//!   80 bits, one bit per cycle), what a sweep does per configuration; the ratio is against
//!   the functional `encoder/descriptors/<scheme>` of the same run.
//!
//! After the criterion run, the medians of the run are read back from criterion's
//! `estimates.json` and printed as ratios against the peer.

use std::hint::black_box;
#[path = "../../scripts/bench-support/criterion_medians.rs"]
mod criterion_medians;
use criterion_medians::median_ns;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput};
use streamtrace_model::{BranchClass, BufferConfig, Config, CycleTraceModule, Encoder, RetireEvent, StreamDescriptor};

/// Schemes at the paper's recommended sizes.
const SCHEMES: &[&str] = &[
    "fbase",
    "base",
    "nexs",
    "bsdc-32x4-128",
    "esdc-32x4-128",
    "rsdc-32x4-128",
];
const EVENT_SCHEME: &str = "rsdc-32x4-128";
/// Schemes replayed in cycle mode.
const CYCLE_SCHEMES: &[&str] = &["nexs", "bsdc-32x4-128", "rsdc-32x4-128"];
/// Descriptors per iteration of the descriptor benches.
const DESCRIPTORS: usize = 1_000_000;
/// Descriptors whose retire events make one iteration of the event bench.
const EVENT_DESCRIPTORS: usize = 200_000;
const UNIQUE_STREAMS: usize = 4096;
const SEED: u64 = 0x005E_ED0F_57AE_A115;

// ---------------------------------------------------------------------------------------------
// Deterministic workload generator.

#[path = "../../scripts/bench-support/splitmix.rs"]
mod splitmix;
use splitmix::Rng;

/// Zipf(s) sampler over ranks 0..n through a cumulative table.
struct Zipf {
    cdf: Vec<f64>,
}

impl Zipf {
    fn new(n: usize, s: f64) -> Self {
        let mut cdf = Vec::with_capacity(n);
        let mut acc = 0.0;
        for r in 0..n {
            acc += 1.0 / ((r + 1) as f64).powf(s);
            cdf.push(acc);
        }
        cdf.iter_mut().for_each(|c| *c /= acc);
        Zipf { cdf }
    }

    fn sample(&self, rng: &mut Rng) -> usize {
        let u = rng.unit();
        self.cdf.partition_point(|&c| c < u).min(self.cdf.len() - 1)
    }
}

/// One static stream of the synthetic program.
#[derive(Clone)]
struct Proto {
    sa: u32,
    sl: u32,
    class: BranchClass,
    /// Successor stream ids with cumulative probabilities (the last is 1.0).
    succ: [(usize, f64); 3],
}

/// Exception handler streams live at the ARM vectors.
const HANDLERS: usize = 3;
/// Share of descriptors that end in an indirect branch or return.
const INDIRECT_SHARE: f64 = 0.10;

/// The static streams; every one starts as a direct conditional branch (classes are
/// assigned after the walk, see `generate_descriptors`).
fn build_program(rng: &mut Rng) -> Vec<Proto> {
    let zipf = Zipf::new(UNIQUE_STREAMS, 1.1);
    // Popularity rank -> stream id, so popular streams are scattered over the code.
    let mut rank_to_id: Vec<usize> = (0..UNIQUE_STREAMS).collect();
    for i in (1..rank_to_id.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        rank_to_id.swap(i, j);
    }
    let mut protos: Vec<Proto> = Vec::with_capacity(UNIQUE_STREAMS);
    for id in 0..UNIQUE_STREAMS {
        let sl = if rng.below(100) == 0 {
            50 + rng.below(206) as u32 // a long straight-line block (memcpy, unrolled loop)
        } else {
            // Geometric, mean ~8 instructions per stream.
            let mut sl = 1;
            while sl < 255 && rng.below(8) != 0 {
                sl += 1;
            }
            sl
        };
        let sa = if id < HANDLERS {
            [0x08u32, 0x0C, 0x18][id] // SWI, prefetch abort, IRQ vectors
        } else if id > HANDLERS && rng.below(10) == 0 {
            protos[HANDLERS + rng.below((id - HANDLERS) as u64) as usize].sa // same start, another length
        } else if rng.below(5) == 0 {
            (0x0005_0000 + 2 * rng.below(32 * 1024) as u32) | 1 // Thumb, 64 KB region
        } else {
            0x0000_8000 + 4 * rng.below(64 * 1024) as u32 // ARM, 256 KB region
        };
        protos.push(Proto {
            sa,
            sl,
            class: BranchClass::DirectCond,
            succ: [(0, 1.0); 3],
        });
    }
    for (id, proto) in protos.iter_mut().enumerate() {
        let pick = |rng: &mut Rng| -> usize {
            if rng.below(10) < 4 {
                // Loop back to this stream or one just before it.
                id.saturating_sub(rng.below(4) as usize).max(HANDLERS)
            } else {
                rank_to_id[zipf.sample(rng)].max(HANDLERS)
            }
        };
        // Loop-closing branches are strongly biased, others less so.
        let bias = [0.5, 0.8, 0.95, 0.99][rng.below(4) as usize];
        let second = bias + (1.0 - bias) * 0.7;
        let far = rank_to_id[zipf.sample(rng)].max(HANDLERS);
        proto.succ = [(pick(rng), bias), (pick(rng), second), (far, 1.0)];
    }
    protos
}

/// `n` descriptors of one run over the synthetic program.
fn generate_descriptors(n: usize, seed: u64) -> Vec<StreamDescriptor> {
    let mut rng = Rng(seed);
    let mut protos = build_program(&mut rng);
    // The walk: stream ids and exception flags.
    let mut walk: Vec<(usize, bool)> = Vec::with_capacity(n);
    let mut visits = vec![0u64; protos.len()];
    let mut cur = HANDLERS;
    while walk.len() < n {
        let p = &protos[cur];
        let exception = rng.below(5000) == 0;
        walk.push((cur, exception));
        visits[cur] += 1;
        cur = if exception {
            rng.below(HANDLERS as u64) as usize
        } else if rng.below(300) == 0 {
            // Phase change: somewhere cold.
            HANDLERS + rng.below((UNIQUE_STREAMS - HANDLERS) as u64) as usize
        } else {
            let u = rng.unit();
            p.succ.iter().find(|&&(_, c)| u < c).map_or(p.succ[2].0, |&(s, _)| s)
        };
    }
    // Make streams end in returns / indirect branches, in random order, until they cover
    // INDIRECT_SHARE of the descriptors (none of them alone more than 2%).
    let mut order: Vec<usize> = (HANDLERS..protos.len()).collect();
    for i in (1..order.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        order.swap(i, j);
    }
    let mut covered = 0u64;
    for id in order {
        if covered as f64 >= INDIRECT_SHARE * n as f64 {
            break;
        }
        if visits[id] as f64 > 0.02 * n as f64 {
            continue;
        }
        covered += visits[id];
        protos[id].class = match rng.below(10) {
            0..=4 => BranchClass::Return,
            5..=7 => BranchClass::IndirectUncond,
            _ => BranchClass::IndirectCond,
        };
    }
    walk.iter()
        .map(|&(id, exception)| {
            let p = &protos[id];
            StreamDescriptor {
                sa: p.sa,
                sl: p.sl,
                last_class: p.class,
                exception,
            }
        })
        .collect()
}

/// Retire events that the stream detector turns back into `descs` (continuity holds:
/// each event's next_pc is the next event's address). Intermediate instructions are
/// mostly ALU, with some not-taken conditional branches.
fn expand_to_events(descs: &[StreamDescriptor]) -> Vec<RetireEvent> {
    let total: usize = descs.iter().map(|d| d.sl as usize).sum();
    let mut ev = Vec::with_capacity(total);
    for (i, d) in descs.iter().enumerate() {
        let thumb = d.sa & 1 == 1;
        let size = if thumb { 2 } else { 4 };
        let base = d.sa & !1;
        let next_sa = descs.get(i + 1).map_or(0x8000, |n| n.sa);
        for j in 0..d.sl {
            let pc = base + j * size;
            let last = j + 1 == d.sl;
            let (class, taken, next_pc) = if last {
                // A stream cut at maxSL may end on any instruction; keep it a taken branch.
                (d.last_class, true, next_sa)
            } else if j % 5 == 3 {
                (BranchClass::DirectCond, false, (pc + size) | thumb as u32)
            } else {
                (BranchClass::None, false, (pc + size) | thumb as u32)
            };
            ev.push(RetireEvent {
                pc,
                insn: 0,
                thumb,
                class,
                taken,
                next_pc,
                exception: last && d.exception,
                cycle: 0,
            });
        }
    }
    ev
}

// ---------------------------------------------------------------------------------------------
// Peers.

/// Plain serialization: SA (4 bytes LE) + SL (1 byte) per descriptor.
fn serialize_5b(descs: &[StreamDescriptor]) -> Vec<u8> {
    let mut out = Vec::with_capacity(descs.len() * 5);
    for d in descs {
        out.extend_from_slice(&d.sa.to_le_bytes());
        out.push(d.sl as u8);
    }
    out
}

fn encode_descriptors(cfg: &Config, descs: &[StreamDescriptor]) -> u64 {
    let mut enc = Encoder::new(cfg);
    for d in descs {
        enc.push_descriptor(d);
    }
    let (trace, _) = enc.finish();
    trace.bit_len
}

fn replay_cycle(cfg: &Config, buf: &BufferConfig, descs: &[(StreamDescriptor, u64)]) -> u64 {
    let mut m = CycleTraceModule::new(cfg, buf);
    m.start_at(0);
    for (d, c) in descs {
        m.push_descriptor(d, *c);
    }
    m.finish().cycle.cycles
}

fn encode_events(cfg: &Config, events: &[RetireEvent]) -> u64 {
    let mut enc = Encoder::new(cfg);
    for e in events {
        enc.push(e).expect("consistent events");
    }
    let (trace, _) = enc.finish();
    trace.bit_len
}

// ---------------------------------------------------------------------------------------------

fn describe_workload(descs: &[StreamDescriptor], events: usize) {
    let instructions: u64 = descs.iter().map(|d| d.sl as u64).sum();
    let mut unique: Vec<u64> = descs.iter().map(|d| ((d.sa as u64) << 16) | d.sl as u64).collect();
    unique.sort_unstable();
    unique.dedup();
    let indirect = descs.iter().filter(|d| d.last_class.is_indirect()).count();
    let exc = descs.iter().filter(|d| d.exception).count();
    eprintln!(
        "workload: {} descriptors, {} instructions (avg SL {:.2}), {} unique streams, {:.1}% end indirect, {} exceptions; event bench: {} events",
        descs.len(),
        instructions,
        instructions as f64 / descs.len() as f64,
        unique.len(),
        100.0 * indirect as f64 / descs.len() as f64,
        exc,
        events
    );
    for text in SCHEMES {
        let cfg: Config = text.parse().unwrap();
        let mut enc = Encoder::new(&cfg);
        descs.iter().for_each(|d| enc.push_descriptor(d));
        let (_, s) = enc.finish();
        eprintln!(
            "  {text:>14}: {:.4} bits/instr, {:.2} bits/descriptor, hrSDC {:.3}, hrLSP {:.3}",
            s.bits_per_instruction,
            s.total_bits as f64 / s.streams as f64,
            s.hr_sdc,
            s.hr_lsp
        );
    }
}

fn benches(c: &mut Criterion, descs: &[StreamDescriptor], events: &[RetireEvent]) {
    let mut g = c.benchmark_group("encoder/descriptors");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_millis(1500));
    g.sampling_mode(SamplingMode::Flat);
    g.throughput(Throughput::Elements(descs.len() as u64));
    g.bench_function("serialize-5B", |b| b.iter(|| serialize_5b(black_box(descs))));
    for text in SCHEMES {
        let cfg: Config = text.parse().unwrap();
        g.bench_with_input(BenchmarkId::from_parameter(text), &cfg, |b, cfg| {
            b.iter(|| encode_descriptors(cfg, black_box(descs)))
        });
    }
    g.finish();

    let timed: Vec<(StreamDescriptor, u64)> = descs
        .iter()
        .scan(0u64, |end, d| {
            *end += d.sl as u64;
            Some((*d, *end - 1))
        })
        .collect();
    let buf = BufferConfig::default();
    let mut g = c.benchmark_group("encoder/cycle");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_millis(1500));
    g.sampling_mode(SamplingMode::Flat);
    g.throughput(Throughput::Elements(descs.len() as u64));
    for text in CYCLE_SCHEMES {
        let cfg: Config = text.parse().unwrap();
        g.bench_with_input(BenchmarkId::from_parameter(text), &cfg, |b, cfg| {
            b.iter(|| replay_cycle(cfg, &buf, black_box(&timed)))
        });
    }
    g.finish();

    let mut g = c.benchmark_group("encoder/events");
    g.sample_size(15)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    g.sampling_mode(SamplingMode::Flat);
    g.throughput(Throughput::Elements(events.len() as u64));
    g.bench_function("copy-events", |b| {
        // Peer: touch every event once (sum of the addresses).
        b.iter(|| {
            black_box(events)
                .iter()
                .fold(0u32, |s, e| s.wrapping_add(e.pc ^ e.next_pc))
        })
    });
    let cfg: Config = EVENT_SCHEME.parse().unwrap();
    g.bench_function(EVENT_SCHEME, |b| b.iter(|| encode_events(&cfg, black_box(events))));
    g.finish();
}

// ---------------------------------------------------------------------------------------------
// Ratio summary from criterion's own estimates.

fn summary(descriptors: usize, events: usize) {
    let peer = median_ns("encoder/descriptors", "serialize-5B");
    eprintln!("\nratio summary (criterion medians of this run; ratio = scheme time / peer time):");
    if let Some(p) = peer {
        eprintln!(
            "  {:>14}: {:8.1} M descriptors/s",
            "serialize-5B",
            descriptors as f64 / p * 1e3
        );
    }
    for text in SCHEMES {
        if let Some(t) = median_ns("encoder/descriptors", text) {
            let rate = descriptors as f64 / t * 1e3;
            let ratio = peer.map_or(String::from("-"), |p| format!("{:.1}x", t / p));
            eprintln!("  {text:>14}: {rate:8.1} M descriptors/s, {ratio} the serialize-5B time");
        }
    }
    for text in CYCLE_SCHEMES {
        if let (Some(t), Some(f)) = (median_ns("encoder/cycle", text), median_ns("encoder/descriptors", text)) {
            eprintln!(
                "  cycle {text:>14}: {:8.1} M descriptors/s, {:.2}x the functional time",
                descriptors as f64 / t * 1e3,
                t / f
            );
        }
    }
    let peer = median_ns("encoder/events", "copy-events");
    if let (Some(t), Some(p)) = (median_ns("encoder/events", EVENT_SCHEME), peer) {
        eprintln!(
            "  events {EVENT_SCHEME}: {:.1} M instructions/s (copy-events {:.1} M/s, {:.1}x)",
            events as f64 / t * 1e3,
            events as f64 / p * 1e3,
            t / p
        );
    }
}

fn main() {
    let descs = generate_descriptors(DESCRIPTORS, SEED);
    let events = expand_to_events(&descs[..EVENT_DESCRIPTORS]);
    describe_workload(&descs, events.len());
    // Fewer bootstrap resamples than the default 100 000: the analysis otherwise costs more
    // than the measurement on this 2-core machine.
    let mut c = Criterion::default().nresamples(10_000).configure_from_args();
    benches(&mut c, &descs, &events);
    c.final_summary();
    // `cargo bench` passes --bench; `cargo test --benches` runs each bench once and has no
    // medians to compare.
    if std::env::args().any(|a| a == "--bench") {
        summary(descs.len(), events.len());
    }
}

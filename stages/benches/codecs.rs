//! Throughput of the host-stage codecs (docs/performance.md, issue 6).
//!
//! * `stages/encode/<codec>`: din text, PDATS, PDATS II, Laplace difference encoding and SAD
//!   reduction (r = 32 pages of 4 KiB) over a pre-generated trace, in references per
//!   second; the peer `copy-5B` writes every reference as 5 plain bytes (label + 32-bit
//!   address) into a `Vec<u8>`.
//! * `stages/decode/<codec>`: the matching readers and decoders over the encoded bytes; the
//!   peer `sum-refs` reads every reference once.
//! * `stages/decode-sad/sad-diff`: reading back the difference-encoded SAD output, per SAD
//!   record.
//! * `stages/stream/pdats2-generated`: PDATS II encoding of references made on the fly
//!   into a byte counter, so nothing but the encoder's constant state is in memory.
//!
//! After `cargo bench` the criterion medians are read back (scripts/bench-support) and
//! printed as M references/s, MB/s of the encoded format and ratios against the peers;
//! then each codec is timed once more in thread CPU time, which other jobs on a shared
//! machine disturb far less than wall-clock time.

use std::hint::black_box;
use std::io::{self, Write};
use std::time::Duration;

#[path = "../../scripts/bench-support/criterion_medians.rs"]
mod criterion_medians;
use criterion_medians::median_ns;

use criterion::{Criterion, SamplingMode, Throughput};
use streamtrace_stages::din::{DinReader, DinWriter};
use streamtrace_stages::laplace::{
    Access, RawDiffReader, RawDiffWriter, RawRecord, SadDiffReader, SadDiffWriter,
};
use streamtrace_stages::pdats::{PdatsDecoder, PdatsEncoder};
use streamtrace_stages::pdats2::{Pdats2Decoder, Pdats2Encoder};
use streamtrace_stages::sad::{reduce_raw, PageSplitter, Reducer};
use streamtrace_stages::Ref;

/// References per iteration of the encode/decode benches.
const REFS: usize = 2_000_000;
/// References per iteration of the streaming bench.
const STREAM_REFS: u64 = 20_000_000;
const SAD_R: usize = 32;
const SEED: u64 = 0x5EED_0006;

#[path = "../../scripts/bench-support/splitmix.rs"]
mod splitmix;
use splitmix::Rng;

/// A program-like reference stream: 4-byte ifetches that run sequentially until a branch
/// (1 in 6 instructions: mostly short loop-backs, some calls into 64 KB of code), a load
/// after ~25 % and a store after ~12 % of instructions (stack slots near a slowly moving
/// stack pointer, array walks with stride 4, scattered heap words). Measured on the test
/// programs, the core model makes ~1.3 references per instruction; this makes ~1.37.
struct Workload {
    rng: Rng,
    pc: u64,
    sp: u64,
    array: u64,
    pending: Option<Ref>,
}

impl Workload {
    fn new(seed: u64) -> Self {
        Workload { rng: Rng(seed), pc: 0x8000, sp: 0x7fff_f000, array: 0x2_0000, pending: None }
    }
}

impl Iterator for Workload {
    type Item = Ref;
    fn next(&mut self) -> Option<Ref> {
        if let Some(r) = self.pending.take() {
            return Some(r);
        }
        let r = &mut self.rng;
        let fetch = Ref::new(2, self.pc);
        self.pc += 4;
        let x = r.below(1000);
        if x < 250 {
            let addr = match r.below(3) {
                0 => self.sp + 4 * r.below(16),
                1 => {
                    self.array = 0x2_0000 + (self.array - 0x2_0000 + 4) % 0x1_0000;
                    self.array
                }
                _ => 0x10_0000 + 4 * r.below(1 << 16),
            };
            self.pending = Some(Ref::new(0, addr));
        } else if x < 370 {
            let addr = if r.below(2) == 0 { self.sp + 4 * r.below(16) } else { self.array };
            self.pending = Some(Ref::new(1, addr));
        }
        if r.below(6) == 0 {
            if r.below(5) == 0 {
                self.pc = 0x8000 + 4 * r.below(1 << 14);
                self.sp = (self.sp as i64 + [-32i64, 32][r.below(2) as usize]).clamp(0x7ffe_0000, 0x7fff_f000) as u64;
            } else {
                self.pc -= 4 * (1 + r.below(24));
            }
        }
        Some(fetch)
    }
}

fn raw_records(refs: &[Ref]) -> Vec<RawRecord> {
    refs.iter()
        .enumerate()
        .map(|(i, r)| RawRecord {
            kind: Access::from_label(r.kind).unwrap(),
            cycle: i as u64,
            len: 4,
            asid: 1,
            vaddr: r.addr,
        })
        .collect()
}

struct Encoded {
    din: Vec<u8>,
    pdats: Vec<u8>,
    pdats2: Vec<u8>,
    diff: Vec<u8>,
    sad_diff: Vec<u8>,
    sad_records: usize,
}

fn copy_5b(refs: &[Ref], out: &mut Vec<u8>) -> usize {
    out.clear();
    for r in refs {
        out.push(r.kind);
        out.extend_from_slice(&(r.addr as u32).to_le_bytes());
    }
    out.len()
}

fn enc_din(refs: &[Ref], out: Vec<u8>) -> Vec<u8> {
    let mut w = DinWriter::new(out);
    refs.iter().for_each(|r| w.write(r).unwrap());
    w.into_inner().unwrap()
}

fn enc_pdats(refs: &[Ref], out: Vec<u8>) -> Vec<u8> {
    let mut e = PdatsEncoder::new(out, &Default::default()).unwrap();
    refs.iter().for_each(|&r| e.push(r).unwrap());
    e.finish().unwrap()
}

fn enc_pdats2(refs: &[Ref], out: Vec<u8>) -> Vec<u8> {
    let mut e = Pdats2Encoder::new(out, &Default::default()).unwrap();
    refs.iter().for_each(|&r| e.push(r).unwrap());
    e.finish().unwrap()
}

fn enc_diff(raw: &[RawRecord], out: Vec<u8>) -> Vec<u8> {
    let mut w = RawDiffWriter::new(out);
    raw.iter().for_each(|r| w.write(r).unwrap());
    w.into_inner().unwrap()
}

fn sad(raw: &[RawRecord]) -> u64 {
    let mut sp = PageSplitter::new(4096).unwrap();
    let mut red = Reducer::new(SAD_R).unwrap();
    let mut n = 0;
    for r in raw {
        for &p in sp.split(r).unwrap().as_slice() {
            red.push(p);
            while red.pop().is_some() {
                n += 1;
            }
        }
    }
    red.finish();
    while red.pop().is_some() {
        n += 1;
    }
    n
}

fn checksum(refs: impl Iterator<Item = Ref>) -> u64 {
    refs.fold(0u64, |s, r| s.wrapping_mul(31).wrapping_add(r.addr ^ r.kind as u64))
}

/// Counts bytes and drops them.
struct Count(u64);

impl Write for Count {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.0 += b.len() as u64;
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn stream_pdats2(n: u64) -> u64 {
    let mut e = Pdats2Encoder::new(io::BufWriter::with_capacity(1 << 16, Count(0)), &Default::default()).unwrap();
    Workload::new(SEED ^ 1).take(n as usize).for_each(|r| e.push(r).unwrap());
    e.finish().unwrap().into_inner().ok().unwrap().0
}

fn benches(c: &mut Criterion, refs: &[Ref], raw: &[RawRecord], enc: &Encoded) {
    let n = refs.len();
    let mut g = c.benchmark_group("stages/encode");
    g.sample_size(15).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    g.sampling_mode(SamplingMode::Flat);
    g.throughput(Throughput::Elements(n as u64));
    let mut buf = Vec::with_capacity(5 * n);
    g.bench_function("copy-5B", |b| b.iter(|| copy_5b(black_box(refs), &mut buf)));
    let cap = |v: &Vec<u8>| v.len() + 64;
    g.bench_function("din", |b| b.iter(|| enc_din(black_box(refs), Vec::with_capacity(cap(&enc.din))).len()));
    g.bench_function("pdats", |b| b.iter(|| enc_pdats(black_box(refs), Vec::with_capacity(cap(&enc.pdats))).len()));
    g.bench_function("pdats2", |b| b.iter(|| enc_pdats2(black_box(refs), Vec::with_capacity(cap(&enc.pdats2))).len()));
    g.bench_function("laplace-diff", |b| b.iter(|| enc_diff(black_box(raw), Vec::with_capacity(cap(&enc.diff))).len()));
    g.bench_function(format!("sad-r{SAD_R}"), |b| b.iter(|| sad(black_box(raw))));
    g.finish();

    let mut g = c.benchmark_group("stages/decode");
    g.sample_size(15).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    g.sampling_mode(SamplingMode::Flat);
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function("sum-refs", |b| b.iter(|| checksum(black_box(refs).iter().copied())));
    g.bench_function("din", |b| b.iter(|| checksum(DinReader::new(black_box(&enc.din[..])).map(Result::unwrap))));
    g.bench_function("pdats", |b| {
        b.iter(|| checksum(PdatsDecoder::new(black_box(&enc.pdats[..])).unwrap().map(Result::unwrap)))
    });
    g.bench_function("pdats2", |b| {
        b.iter(|| checksum(Pdats2Decoder::new(black_box(&enc.pdats2[..])).unwrap().map(Result::unwrap)))
    });
    g.bench_function("laplace-diff", |b| {
        b.iter(|| {
            RawDiffReader::new(black_box(&enc.diff[..]))
                .map(Result::unwrap)
                .fold(0u64, |s, r| s.wrapping_add(r.vaddr ^ r.cycle))
        })
    });
    g.finish();

    let mut g = c.benchmark_group("stages/decode-sad");
    g.sample_size(15).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(1));
    g.sampling_mode(SamplingMode::Flat);
    g.throughput(Throughput::Elements(enc.sad_records as u64));
    g.bench_function("sad-diff", |b| {
        b.iter(|| {
            SadDiffReader::new(black_box(&enc.sad_diff[..]))
                .map(Result::unwrap)
                .fold(0u64, |s, r| s.wrapping_add(r.vpn ^ r.rtime))
        })
    });
    g.finish();

    let mut g = c.benchmark_group("stages/stream");
    g.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(5));
    g.sampling_mode(SamplingMode::Flat);
    g.throughput(Throughput::Elements(STREAM_REFS));
    g.bench_function("pdats2-generated", |b| b.iter(|| stream_pdats2(black_box(STREAM_REFS))));
    g.finish();
}

fn describe(refs: &[Ref], enc: &Encoded) {
    let fetches = refs.iter().filter(|r| r.kind == 2).count();
    eprintln!(
        "workload: {} references ({} ifetches, {:.2} references per instruction); encoded: din {} B, PDATS {} B ({:.2} refs/B), PDATS II {} B ({:.2} refs/B), Laplace diff {} B, SAD r={SAD_R}: {} records ({:.1}x), {} B as diff text",
        refs.len(),
        fetches,
        refs.len() as f64 / fetches as f64,
        enc.din.len(),
        enc.pdats.len(),
        refs.len() as f64 / enc.pdats.len() as f64,
        enc.pdats2.len(),
        refs.len() as f64 / enc.pdats2.len() as f64,
        enc.diff.len(),
        enc.sad_records,
        refs.len() as f64 / enc.sad_records as f64,
        enc.sad_diff.len(),
    );
}

fn summary(n: usize, enc: &Encoded) {
    let rate = |t: f64, items: f64| items / t * 1e3; // M items/s from ns per iteration
    let mbs = |t: f64, bytes: usize| bytes as f64 / t * 1e3; // MB/s (1e6 bytes)
    eprintln!("\nsummary (criterion medians of this run):");
    let peer = median_ns("stages/encode", "copy-5B");
    if let Some(p) = peer {
        eprintln!("  encode {:>13}: {:7.1} M refs/s, {:7.1} MB/s out", "copy-5B", rate(p, n as f64), mbs(p, 5 * n));
    }
    let sad_id = format!("sad-r{SAD_R}");
    for (id, bytes) in [
        ("din", enc.din.len()),
        ("pdats", enc.pdats.len()),
        ("pdats2", enc.pdats2.len()),
        ("laplace-diff", enc.diff.len()),
        (sad_id.as_str(), 0),
    ] {
        if let Some(t) = median_ns("stages/encode", id) {
            let out = if bytes > 0 { format!("{:7.1} MB/s out", mbs(t, bytes)) } else { "in memory".into() };
            let ratio = peer.map_or(String::from("-"), |p| format!("{:.1}x", t / p));
            eprintln!("  encode {id:>13}: {:7.1} M refs/s, {out}, {ratio} the copy-5B time", rate(t, n as f64));
        }
    }
    let peer = median_ns("stages/decode", "sum-refs");
    for (id, bytes) in [
        ("din", enc.din.len()),
        ("pdats", enc.pdats.len()),
        ("pdats2", enc.pdats2.len()),
        ("laplace-diff", enc.diff.len()),
    ] {
        if let Some(t) = median_ns("stages/decode", id) {
            let ratio = peer.map_or(String::from("-"), |p| format!("{:.0}x", t / p));
            eprintln!(
                "  decode {id:>13}: {:7.1} M refs/s, {:7.1} MB/s in, {ratio} the sum-refs time",
                rate(t, n as f64),
                mbs(t, bytes)
            );
        }
    }
    if let Some(t) = median_ns("stages/decode-sad", "sad-diff") {
        eprintln!(
            "  decode {:>13}: {:7.1} M records/s, {:7.1} MB/s in",
            "sad-diff",
            rate(t, enc.sad_records as f64),
            mbs(t, enc.sad_diff.len())
        );
    }
    if let Some(t) = median_ns("stages/stream", "pdats2-generated") {
        eprintln!(
            "  stream pdats2 (generated, constant memory): {:.1} M refs/s including generation",
            rate(t, STREAM_REFS as f64)
        );
    }
    if let Ok(s) = std::fs::read_to_string("/proc/self/status") {
        if let Some(l) = s.lines().find(|l| l.starts_with("VmHWM")) {
            let kb = l.split_whitespace().skip(1).collect::<Vec<_>>().join(" ");
            eprintln!("  peak resident memory of the bench process (inputs included): {kb}");
        }
    }
}

/// CPU seconds of this thread (utime + stime from /proc/thread-self/stat, in clock ticks).
fn thread_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split(' ').collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    let hz = std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok()?.trim().parse::<f64>().ok())
        .unwrap_or(100.0);
    Some(ticks / hz)
}

/// Rates in thread CPU time, steadier than criterion's wall clock when other jobs load the
/// machine: repeat `f` until at least 1 s of CPU time has passed.
fn cpu_rates(refs: &[Ref], raw: &[RawRecord], enc: &Encoded) {
    let Some(_) = thread_cpu_seconds() else { return };
    let n = refs.len() as f64;
    let measure = |name: &str, items: f64, f: &mut dyn FnMut() -> usize| {
        let start = thread_cpu_seconds().unwrap();
        let mut iters = 0u32;
        let mut sink = 0usize;
        while thread_cpu_seconds().unwrap() - start < 1.0 || iters < 3 {
            sink = sink.wrapping_add(f());
            iters += 1;
        }
        let cpu = thread_cpu_seconds().unwrap() - start;
        black_box(sink);
        eprintln!("  {name:>22}: {:7.1} M/s of CPU time ({iters} iterations)", items * iters as f64 / cpu / 1e6);
    };
    eprintln!("\nCPU-time rates (references, or SAD records for sad-diff):");
    measure("encode pdats2", n, &mut || enc_pdats2(refs, Vec::with_capacity(enc.pdats2.len() + 64)).len());
    measure("encode pdats", n, &mut || enc_pdats(refs, Vec::with_capacity(enc.pdats.len() + 64)).len());
    measure("encode din", n, &mut || enc_din(refs, Vec::with_capacity(enc.din.len() + 64)).len());
    measure("encode laplace-diff", n, &mut || enc_diff(raw, Vec::with_capacity(enc.diff.len() + 64)).len());
    measure("sad r=32", n, &mut || sad(raw) as usize);
    measure("decode pdats2", n, &mut || {
        checksum(Pdats2Decoder::new(&enc.pdats2[..]).unwrap().map(Result::unwrap)) as usize
    });
    measure("decode pdats", n, &mut || {
        checksum(PdatsDecoder::new(&enc.pdats[..]).unwrap().map(Result::unwrap)) as usize
    });
    measure("decode din", n, &mut || checksum(DinReader::new(&enc.din[..]).map(Result::unwrap)) as usize);
    measure("decode laplace-diff", n, &mut || {
        RawDiffReader::new(&enc.diff[..]).map(Result::unwrap).fold(0usize, |s, r| s.wrapping_add(r.vaddr as usize))
    });
    measure("decode sad-diff", enc.sad_records as f64, &mut || {
        SadDiffReader::new(&enc.sad_diff[..]).map(Result::unwrap).fold(0usize, |s, r| s.wrapping_add(r.vpn as usize))
    });
}

fn main() {
    let refs: Vec<Ref> = Workload::new(SEED).take(REFS).collect();
    let raw = raw_records(&refs);
    let (sad_out, _) = reduce_raw(&raw, SAD_R, 4096).unwrap();
    let mut w = SadDiffWriter::new(Vec::new());
    sad_out.iter().for_each(|r| w.write(r).unwrap());
    let enc = Encoded {
        din: enc_din(&refs, Vec::new()),
        pdats: enc_pdats(&refs, Vec::new()),
        pdats2: enc_pdats2(&refs, Vec::new()),
        diff: enc_diff(&raw, Vec::new()),
        sad_diff: w.into_inner().unwrap(),
        sad_records: sad_out.len(),
    };
    // The decoders must give back the workload before their speed means anything.
    assert_eq!(checksum(PdatsDecoder::new(&enc.pdats[..]).unwrap().map(Result::unwrap)), checksum(refs.iter().copied()));
    assert_eq!(checksum(Pdats2Decoder::new(&enc.pdats2[..]).unwrap().map(Result::unwrap)), checksum(refs.iter().copied()));
    describe(&refs, &enc);
    let mut c = Criterion::default().nresamples(10_000).configure_from_args();
    benches(&mut c, &refs, &raw, &enc);
    c.final_summary();
    if std::env::args().any(|a| a == "--bench") {
        summary(refs.len(), &enc);
        cpu_rates(&refs, &raw, &enc);
    }
}

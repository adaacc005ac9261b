//! Each RustHDL block against the model's structure of the same name, on random inputs,
//! compared every cycle (direct drive: settle the inputs, compare, clock).

mod common;

use common::Rng;

use std::collections::VecDeque;

use rust_hdl::prelude::*;
use streamtrace_hw::aolc::AdaptiveOneLengthCounter as HwAolc;
use streamtrace_hw::detector::StreamDetector as HwDetector;
use streamtrace_hw::encoder::RecordEncoder;
use streamtrace_hw::golden::read_bits;
use streamtrace_hw::lsp::LastStreamPredictor as HwLsp;
use streamtrace_hw::outbuf::OutputBuffer;
use streamtrace_hw::outbuf_lean::LeanOutputBuffer;
use streamtrace_hw::sdb::DescriptorBuffer;
use streamtrace_hw::sdc::StreamDescriptorCache as HwSdc;
use streamtrace_hw::HwConfig;
use streamtrace_model::{
    AdaptiveOneLengthCounter, BranchClass, BufferConfig, Config, Encoder, LastStreamPredictor, RetireEvent,
    StreamDescriptor, StreamDescriptorCache, StreamDetector,
};

macro_rules! settle {
    ($uut:expr) => {
        assert!(simulate(&mut $uut, 500), "design did not settle")
    };
}

macro_rules! tick {
    ($uut:expr) => {
        $uut.clock.next = Clock::from(true);
        settle!($uut);
        $uut.clock.next = Clock::from(false);
        settle!($uut);
    };
}

fn hw(cfg: &str) -> HwConfig {
    HwConfig::new(&cfg.parse().unwrap(), &BufferConfig::default()).unwrap()
}

fn ready<B: Block>(mut uut: B) -> B {
    uut.connect_all();
    check_all(&uut).unwrap();
    uut
}

#[test]
fn stream_detector_matches_the_model() {
    for max_sl in [3u32, 255] {
        let mut rng = Rng(7 + max_sl as u64);
        let mut uut = ready(HwDetector::new(max_sl, 0));
        let mut model = StreamDetector::new(max_sl);
        uut.reset.next = true;
        tick!(uut);
        uut.reset.next = false;
        let mut pc = 0x8000u32;
        let mut produced = 0;
        for cycle in 0..20_000 {
            let retire = rng.chance(800);
            let class = BranchClass::ALL[rng.below(6) as usize];
            let ev = RetireEvent {
                pc,
                class,
                taken: rng.chance(500),
                exception: rng.chance(20),
                thumb: rng.chance(300),
                ..Default::default()
            };
            let hold = rng.chance(150);
            let cut = !retire && rng.chance(10);
            uut.retire_valid.next = retire;
            uut.pc.next = (ev.iw_addr() as u64).into();
            uut.branch_class.next = (class as u64).into();
            uut.taken.next = ev.taken;
            uut.exception.next = ev.exception;
            uut.cut.next = cut;
            uut.hold.next = hold;
            settle!(uut);
            // The model sees the event only when the detector is not held.
            let want = if hold {
                let mut probe = model.clone();
                if retire { probe.push(&ev) } else if cut { probe.cut() } else { None }
            } else if retire {
                model.push(&ev)
            } else if cut {
                model.cut()
            } else {
                None
            };
            assert_eq!(uut.desc_valid.val(), want.is_some(), "cycle {cycle}: desc_valid");
            if let Some(d) = want {
                produced += 1;
                let got = (
                    uut.desc_sa.val().to_u32(),
                    uut.desc_sl.val().to_u32(),
                    uut.desc_exc.val(),
                    uut.desc_dcond.val(),
                );
                assert_eq!(got, (d.sa, d.sl, d.exception, d.last_class == BranchClass::DirectCond), "cycle {cycle}");
            }
            tick!(uut);
            pc = pc.wrapping_add(4 * (1 + rng.below(3) as u32)) & 0xFFFF_FFFC;
        }
        assert!(produced > 1000, "the stimulus must produce streams ({produced})");
    }
}

#[test]
fn descriptor_buffer_is_a_fifo_of_any_depth() {
    for depth in [1usize, 2, 3, 5] {
        let mut rng = Rng(depth as u64);
        let mut uut = ready(DescriptorBuffer::new(depth, 255));
        let mut model: VecDeque<(u32, u32, bool, bool)> = VecDeque::new();
        uut.reset.next = true;
        tick!(uut);
        uut.reset.next = false;
        for cycle in 0..5_000 {
            settle!(uut);
            assert_eq!(uut.full.val(), model.len() == depth, "depth {depth} cycle {cycle}: full");
            assert_eq!(uut.empty.val(), model.is_empty(), "depth {depth} cycle {cycle}: empty");
            if let Some(&(sa, sl, exc, dcond)) = model.front() {
                let got = (uut.head_sa.val().to_u32(), uut.head_sl.val().to_u32(), uut.head_exc.val(), uut.head_dcond.val());
                assert_eq!(got, (sa, sl, exc, dcond), "depth {depth} cycle {cycle}: head");
            }
            // Push only with room at start of cycle (the top's rule); pop when not empty.
            let push = model.len() < depth && rng.chance(600);
            let pop = !model.is_empty() && rng.chance(500);
            let entry = (rng.next() as u32, rng.below(256) as u32, rng.chance(100), rng.chance(300));
            uut.push.next = push;
            uut.pop.next = pop;
            uut.push_sa.next = (entry.0 as u64).into();
            uut.push_sl.next = (entry.1 as u64).into();
            uut.push_exc.next = entry.2;
            uut.push_dcond.next = entry.3;
            tick!(uut);
            if pop {
                model.pop_front();
            }
            if push {
                model.push_back(entry);
            }
        }
    }
}

/// Streams drawn from a small pool so sets conflict and entries get evicted and hit again.
fn stream_pool(rng: &mut Rng, n: usize, arm_only: bool) -> Vec<(u32, u32)> {
    (0..n)
        .map(|_| {
            let a = (rng.next() as u32) & if arm_only { 0x00FF_FFFC } else { 0x00FF_FFFF };
            // A few far addresses exercise the rSDC aliasing of the upper bits.
            let a = if rng.chance(100) { a | 0x7F00_0000 } else { a };
            (a, 1 + rng.below(12) as u32)
        })
        .collect()
}

#[test]
fn stream_descriptor_cache_matches_the_model() {
    // Immediate update (a lookup every cycle), and the delayed update of services of three
    // cycles or more (a lookup every third cycle, its update and clear in the cycle after it).
    for delayed in [false, true] {
        for text in ["bsdc-4x4-16", "bsdc-4x1-4", "bsdc-1x8-8", "esdc-8x2-16", "rsdc-8x4-16,isa=arm", "rsdc-16x2-16,shift=2"] {
            let cfg: Config = text.parse().unwrap();
            let h = hw(text);
            let entries = h.sets * h.ways;
            let gap = if delayed { 3 } else { 1 };
            let mut rng = Rng(99);
            let pool = stream_pool(&mut rng, 40, text.contains("isa=arm"));
            let mut uut = ready(HwSdc::new(&h, delayed));
            let mut model = StreamDescriptorCache::new(&cfg);
            // The tables are read one cycle ahead: each cycle also presents the next cycle's
            // descriptor.
            let lookups: Vec<(u32, u32)> = (0..6_001).map(|_| pool[rng.below(pool.len() as u64) as usize]).collect();
            // Between lookups other descriptors are presented (the SDB's next head), so a
            // delayed update must work from what it registered.
            let idle: Vec<(u32, u32)> = (0..6_000 * gap).map(|_| pool[rng.below(pool.len() as u64) as usize]).collect();
            let presented = |cycle: usize| if cycle.is_multiple_of(gap) { lookups[cycle / gap] } else { idle[cycle] };
            uut.clear.next = true;
            uut.next_sa.next = (lookups[0].0 as u64).into();
            uut.next_sl.next = (lookups[0].1 as u64).into();
            tick!(uut);
            uut.clear.next = false;
            let (mut hits, mut probe_hits) = (0, 0);
            let mut clear_next = false;
            for cycle in 0..6_000 * gap {
                let (i, phase) = (cycle / gap, cycle % gap);
                let (a, sl) = presented(cycle);
                let next = presented(cycle + 1);
                let lookup = phase == 0;
                let clear = if delayed { std::mem::take(&mut clear_next) } else { lookup && rng.chance(3) };
                uut.sa.next = (a as u64).into();
                uut.sl.next = (sl as u64).into();
                uut.next_sa.next = (next.0 as u64).into();
                uut.next_sl.next = (next.1 as u64).into();
                uut.access.next = lookup;
                uut.clear.next = clear;
                let want = if lookup { model.lookup(a, sl) } else { None };
                // The probe: the found SI, another SI, or 0.
                let probe = match (rng.below(3), want) {
                    (0, Some(si)) => si,
                    (1, _) => rng.below(entries as u64) as u32,
                    _ => 0,
                };
                uut.probe_si.next = (probe as u64).into();
                settle!(uut);
                if lookup {
                    let why = format!("{text} delayed {delayed} lookup {i}");
                    assert_eq!(uut.found.val(), want.is_some(), "{why}: found for ({a:#x}, {sl})");
                    assert_eq!(uut.probe_hit.val(), want == Some(probe), "{why}: probe {probe}, found {want:?}");
                    probe_hits += uut.probe_hit.val() as u32;
                    if let Some(si) = want {
                        hits += 1;
                        assert_eq!(uut.found_si.val().to_u32(), si, "{why}: SI");
                        model.touch(si);
                    } else {
                        model.fill(a, sl);
                    }
                    if delayed {
                        clear_next = rng.chance(3);
                        if clear_next {
                            model.reset();
                        }
                    } else if clear {
                        model.reset();
                    }
                }
                tick!(uut);
            }
            assert!(hits > 300, "{text}: the pool must produce hits ({hits})");
            assert!(probe_hits > 50, "{text}: the probe must hit ({probe_hits})");
        }
    }
}

#[test]
fn last_stream_predictor_matches_the_model() {
    for text in ["bsdc-16x4-64", "bsdc-16x4-1", "rsdc-32x4-8"] {
        let cfg: Config = text.parse().unwrap();
        let h = hw(text);
        let mut rng = Rng(5);
        let mut uut = ready(HwLsp::new(&h));
        let mut model = LastStreamPredictor::new(&cfg);
        uut.clear.next = true;
        tick!(uut);
        uut.clear.next = false;
        let mut hits = 0;
        // A short repeating pattern with noise, as loops give.
        let pattern: Vec<u16> = (0..6).map(|_| rng.below(64) as u16).collect();
        for cycle in 0..6_000 {
            let si = if rng.chance(150) { rng.below(64) as u16 } else { pattern[cycle % pattern.len()] };
            let clear = rng.chance(2);
            uut.si.next = (si as u64).into();
            uut.access.next = true;
            uut.clear.next = clear;
            settle!(uut);
            let want = model.access(si);
            hits += want as u32;
            // The prediction is registered state (it does not depend on this cycle's si);
            // the encoder's verdict on it drives the write.
            let hit = si != 0 && uut.predicted.val().to_u32() == si as u32;
            assert_eq!(hit, want, "{text} cycle {cycle}: si {si}");
            uut.hit.next = hit;
            settle!(uut);
            if clear {
                model.reset();
            }
            tick!(uut);
        }
        assert!(hits > 500, "{text}: {hits} hits");
    }
}

#[test]
fn aolc_matches_the_model() {
    let texts = ["esdc-16x4-64", "esdc-16x4-64,olc=1,olcmin=1,olcmax=3", "rsdc-16x4-64,olc=6,olcmin=2,olcmax=16"];
    // Delayed (the two-stage compressor's): the monitor updates a cycle after the service,
    // so no service may follow in the next cycle.
    for (text, delayed) in texts.iter().flat_map(|t| [(*t, false), (*t, true)]) {
        let cfg: Config = text.parse().unwrap();
        let h = hw(text);
        let mut rng = Rng(11);
        let mut uut = ready(HwAolc::new(&h, delayed));
        let mut model = AdaptiveOneLengthCounter::new(&cfg);
        uut.clear.next = true;
        tick!(uut);
        uut.clear.next = false;
        let mut runs = 0;
        let mut was_active = false;
        // Phases of long and short hit runs make the width grow and shrink.
        for cycle in 0..20_000u64 {
            let long_phase = (cycle / 2000) % 2 == 0;
            let active = rng.chance(900) && !(delayed && was_active);
            was_active = active;
            let lsp_hit = rng.chance(if long_phase { 995 } else { 600 });
            let flush_after = rng.chance(5);
            let clear = rng.chance(1);
            uut.active.next = active;
            uut.lsp_hit.next = lsp_hit;
            uut.flush_after.next = flush_after;
            uut.clear.next = clear;
            settle!(uut);
            let width = model.width();
            let want = if !active {
                None
            } else if lsp_hit {
                model.count_hit().or_else(|| if flush_after { model.take_pending() } else { None })
            } else {
                model.take_pending()
            };
            assert_eq!(uut.emit.val(), want.is_some(), "{text} (delayed {delayed}) cycle {cycle}: emit");
            if let Some(n) = want {
                runs += 1;
                let value = (1u32 << width) | (n - 1);
                assert_eq!(uut.run_value.val().to_u32(), value, "{text} (delayed {delayed}) cycle {cycle}: run value (s={width}, n={n})");
                assert_eq!(uut.run_len.val().to_u32(), 1 + width, "{text} cycle {cycle}: run length");
                model.after_run(n);
            }
            if clear {
                model.reset();
            }
            tick!(uut);
        }
        assert!(runs > 200, "{text} (delayed {delayed}): {runs} runs");
    }
}

/// Descriptors of random control flow for the encoder: loops (LSP hits), repeats (SDC
/// hits), new streams (misses), exceptions, inferable starts, and far addresses (LVSA).
fn descriptors(rng: &mut Rng, n: usize, max_sl: u32, arm_only: bool, pool: usize) -> Vec<StreamDescriptor> {
    let pool: Vec<(u32, u32)> = stream_pool(rng, pool, arm_only)
        .into_iter()
        .map(|(a, sl)| (a, sl.min(max_sl)))
        .collect();
    let classes = [BranchClass::DirectCond, BranchClass::IndirectUncond, BranchClass::Return, BranchClass::IndirectCond];
    let mut out = Vec::with_capacity(n);
    let mut i = 0usize;
    while out.len() < n {
        let (a, sl) = if rng.chance(700) { pool[i % pool.len().min(4)] } else { pool[rng.below(pool.len() as u64) as usize] };
        i += 1;
        out.push(StreamDescriptor {
            sa: a,
            sl,
            last_class: classes[rng.below(4) as usize],
            exception: rng.chance(15),
        });
    }
    out
}

#[test]
fn record_encoder_matches_the_functional_encoder() {
    // One stage (services of one or two cycles: the record in the start cycle), and two
    // (three cycles or more: the record in the cycle after, the SDC's and LSP's updates and
    // a sync's clear there too).
    for (text, buffers) in [
        "bsdc-16x4-64",
        "esdc-16x4-64",
        "rsdc-32x4-128",
        "rsdc-32x4-128,isa=arm,sync=700",
        "esdc-8x2-4,maxsl=9,olc=2,olcmax=5,u=20",
        "bsdc-4x1-4,sync=300",
        // Syncs every few streams of a three-stream loop: after each sync a stream the SDC
        // and LSP held just before it must miss again (the sync's clear wins over the
        // updates of the stream that ends in it).
        "bsdc-16x4-64,sync=25",
        "rsdc-32x4-128,sync=40",
    ]
    .into_iter()
    .flat_map(|t| [(t, ""), (t, "svc_hit=3,svc_miss=4")])
    {
        let text = &format!("{text} {buffers}");
        let cfg: Config = text.split(' ').next().unwrap().parse().unwrap();
        let h = HwConfig::new(&cfg, &buffers.parse().unwrap()).unwrap();
        let two_stage = !buffers.is_empty();
        let mut rng = Rng(21);
        let pool = if cfg.sync_period != 0 && cfg.sync_period < 100 { 3 } else { 60 };
        let descs = descriptors(&mut rng, 3000, cfg.max_sl, text.contains("isa=arm"), pool);
        // Every 997th service is an overflow entry (lost count in SA, SL = 0).
        let entries: Vec<(u32, u32, Option<StreamDescriptor>)> = descs
            .iter()
            .enumerate()
            .flat_map(|(n, d)| {
                let ovf = (n % 997 == 500).then_some((1000 + n as u32, 0, None));
                ovf.into_iter().chain(std::iter::once((d.sa, d.sl, Some(*d))))
            })
            .collect();
        // The model first: the length of every record and the whole trace.
        let mut model = Encoder::new(&cfg);
        let mut lens = Vec::new();
        for (sa, _, d) in &entries {
            let before = model.bit_len();
            match d {
                Some(d) => model.push_descriptor(d),
                None => model.overflow(*sa as u64),
            }
            lens.push(model.bit_len() - before);
        }
        let (trace, _) = model.finish();

        let mut uut = ready(RecordEncoder::new(&h));
        uut.reset.next = true;
        // The SDC reads its tables one cycle ahead: the entry of the next service is
        // presented on next_sa/next_sl from the cycle before it (here, from the service before).
        uut.next_sa.next = (entries[0].0 as u64).into();
        uut.next_sl.next = (entries[0].1 as u64).into();
        tick!(uut);
        uut.reset.next = false;
        let mut bits: Vec<bool> = Vec::new();
        let mut service = |sa: u32, sl: u32, d: Option<&StreamDescriptor>, end: bool, next: (u32, u32)| -> usize {
            uut.next_sa.next = (next.0 as u64).into();
            uut.next_sl.next = (next.1 as u64).into();
            uut.start.next = true;
            uut.is_end.next = end;
            uut.sa.next = (sa as u64).into();
            uut.sl.next = (sl as u64).into();
            uut.exc.next = d.is_some_and(|d| d.exception);
            uut.dcond.next = d.is_some_and(|d| d.last_class == BranchClass::DirectCond);
            settle!(uut);
            assert_eq!(uut.rec_ready.val(), !two_stage, "rec_ready in the start cycle");
            if two_stage {
                tick!(uut);
                uut.start.next = false;
                settle!(uut);
                assert!(uut.rec_ready.val(), "rec_ready in the cycle after the start");
            }
            let len = uut.rec_len.val().to_u32() as usize;
            let rec = uut.rec_bits.val();
            for i in (0..len).rev() {
                bits.push(rec.get_bit(i));
            }
            tick!(uut);
            uut.start.next = false;
            settle!(uut);
            tick!(uut); // an idle cycle between services changes nothing
            len
        };
        for (n, (sa, sl, d)) in entries.iter().enumerate() {
            let next = entries.get(n + 1).map_or((0, 0), |e| (e.0, e.1));
            let len = service(*sa, *sl, d.as_ref(), false, next);
            assert_eq!(len as u64, lens[n], "{text}: entry {n} {d:?}: record length");
        }
        service(0, 0, None, true, (0, 0));
        assert_eq!(bits.len() as u64, trace.bit_len, "{text}: trace length with END");
        let first_diff = (0..bits.len()).find(|&i| (read_bits(&trace.bytes, i as u64, 1) == 1) != bits[i]);
        assert_eq!(first_diff, None, "{text}: first differing trace bit");
    }
}

/// Steps 1, 3 and 4 of docs/trace-timing.md against a software mirror, for either output
/// buffer (`$ty`: a block with `new(&HwConfig)` and the output-buffer ports; `$announce`
/// tells it in each cycle whether the next appends a record and how long, as the SDC top
/// does for the lean buffer with staged records).
macro_rules! output_buffer_test {
    ($name:ident, $ty:ty, $announce:expr) => {
#[test]
fn $name() {
    // Two-cycle services make the lean buffer precompute its free space (`registered_free`).
    // One-pin ports move the lean buffer's bits in place (with a port clock ratio too).
    for (obuf, port, ratio, svc) in [(80u32, 1u32, 1u32, ""), (16, 4, 1, ""), (40, 8, 3, ""), (224, 64, 1, ""), (80, 1, 1, ",svc_hit=2,svc_miss=3"), (16, 4, 1, ",svc_hit=2,svc_miss=3"), (40, 8, 3, ",svc_hit=2,svc_miss=3"), (24, 2, 2, ",svc_hit=2,svc_miss=3"), (24, 1, 3, ""), (200, 1, 2, ",svc_hit=3,svc_miss=4")] {
        let buffers: BufferConfig = format!("obuf={obuf},port={port},ratio={ratio}{svc}").parse().unwrap();
        let h = HwConfig::new(&"rsdc-32x4-128".parse().unwrap(), &buffers).unwrap();
        let mut rng = Rng(obuf as u64 * 31 + port as u64);
        let mut uut = ready(<$ty>::new(&h));
        uut.reset.next = true;
        tick!(uut);
        uut.reset.next = false;
        // Software mirror of steps 1, 3 and 4 (docs/trace-timing.md).
        let (mut o, mut p, mut hidden, mut left) = (0u64, 0u64, 0u64, 0u32);
        let mut sent_bits: Vec<bool> = Vec::new();
        let mut appended: Vec<bool> = Vec::new();
        // Each cycle's append (whether, the record, its service) is drawn in the cycle before.
        let plan = |rng: &mut Rng, left: u32, p: u64| {
            let can_start = left == 0 && p == 0 && rng.chance(300);
            let len = 1 + rng.below(288) as usize;
            let service = 1 + rng.below(3) as u32;
            let rec: Vec<bool> = (0..len).map(|_| rng.chance(500)).collect();
            (can_start, len, service, rec)
        };
        let staged = h.buffers.svc_hit >= 2;
        let mut held: Bits<{ streamtrace_hw::config::RECORD_BITS }> = Default::default();
        let mut next = plan(&mut rng, left, p);
        next.0 = false; // nothing appends in the cycle after reset (the SDC top's services are idle)
        for cycle in 0..20_000u64 {
            let empty_at_start = p == 0 && hidden == 0;
            let complete = left == 1;
            let (can_start, len, service, rec) = next;
            let mut wide: Bits<{ streamtrace_hw::config::RECORD_BITS }> = Default::default();
            for (i, &b) in rec.iter().enumerate() {
                wide = wide.replace_bit(len - 1 - i, b);
            }
            // With staged records the appended record stays on `append_bits` until it has
            // moved (the SDC top's staging register), and the lean buffer reads it there;
            // otherwise the bits are only valid in the cycle of the append.
            if can_start {
                held = wide;
            }
            uut.append.next = can_start;
            uut.append_bits.next = if can_start || !staged { wide } else { held };
            uut.append_len.next = (len as u64).into();
            uut.append_hidden.next = service > 1;
            uut.complete.next = complete;
            settle!(uut);
            let port_cycle = cycle % ratio as u64 == 0;
            let sent = if port_cycle { o.min(port as u64) } else { 0 };
            assert_eq!(uut.port_valid.val().to_u64(), sent, "obuf {obuf} port {port} cycle {cycle}: bits sent");
            let data = uut.port_data.val().to_u64();
            for i in 0..sent {
                sent_bits.push((data >> (port as u64 - 1 - i)) & 1 == 1);
            }
            assert_eq!(data & 1u64.checked_shl((port as u64 - sent) as u32).map_or(u64::MAX, |m| m - 1), 0, "unused pins are 0");
            assert_eq!(uut.record_bits.val().to_u64(), p, "cycle {cycle}: record register");
            o -= sent;
            if complete {
                p += hidden;
                hidden = 0;
            }
            if can_start {
                appended.extend(&rec);
                if service > 1 {
                    hidden = len as u64;
                } else {
                    p += len as u64;
                }
                left = service;
            }
            left = left.saturating_sub(1);
            let moved = p.min(obuf as u64 - o);
            o += moved;
            p -= moved;
            next = plan(&mut rng, left, p);
            // A staged record is appended when its service completes, at least a cycle after
            // the service started, which needed the record register empty: so the register
            // was empty at the start of the cycle before the append too.
            if staged && !empty_at_start {
                next.0 = false;
            }
            ($announce)(&mut uut, next.0, next.1 as u64);
            settle!(uut);
            tick!(uut);
        }
        // A one-pin port sends at most one bit per port cycle (20,000 / ratio here).
        let least = if port == 1 { 10_000 / ratio as usize } else { 10_000 };
        assert!(sent_bits.len() > least, "{} bits sent", sent_bits.len());
        assert_eq!(sent_bits[..], appended[..sent_bits.len()], "obuf {obuf} port {port}: the port sends the records' bits in order");
    }
}
    };
}

output_buffer_test!(output_buffer_sends_records_in_order_with_the_timing_rules, OutputBuffer, |_: &mut OutputBuffer, _: bool, _: u64| {});
output_buffer_test!(
    lean_output_buffer_sends_records_in_order_with_the_timing_rules,
    LeanOutputBuffer,
    |u: &mut LeanOutputBuffer, append: bool, len: u64| {
        u.append_next.next = append;
        u.append_len_next.next = len.into();
    }
);

//! The paper's competitor schemes (docs/trace-format.md section 10): decode(encode(x)) == x
//! on random synthetic programs, for ARM-only and interworking runs, several window and
//! table sizes, and corrupt input reported, never a panic.

use proptest::prelude::*;
use streamtrace_model::{BufferConfig, Config, CycleTraceModule, Encoder, RetireEvent};
use streamtrace_sw_decoder::synthetic::{generate, SyntheticSpec};
use streamtrace_sw_decoder::{decode_trace, verify_addresses};

const CONFIGS: &[&str] = &[
    "tslz-16",
    "tslz-256",
    "tslz-1024",
    "tslz-8192,maxsl=1023",
    "tslz-256,maxsl=20",
    "sct8ht-128x4-255x8",
    "sct8ht-8x2-3x1",
    "sct8ht-16x4-15x16,shift=2,maxsl=31",
    "gzip-1",
    "gzip-9",
];

fn check(events: &[RetireEvent], image: &streamtrace_isa::MemoryImage, text: &str) -> Result<(), TestCaseError> {
    let cfg: Config = text.parse().unwrap();
    let mut enc = Encoder::new(&cfg);
    for e in events {
        enc.push(e).unwrap();
    }
    let (trace, stats) = enc.finish();
    prop_assert_eq!(stats.instructions, events.len() as u64);
    prop_assert_eq!(trace.bit_len, trace.bytes.len() as u64 * 8);
    let d = decode_trace(&cfg, &trace.bytes, image, false);
    prop_assert!(d.errors.is_empty(), "{}: {:?}", text, d.errors);
    prop_assert!(d.ended, "{}", text);
    if let Err(m) = verify_addresses(&d.addresses, events) {
        return Err(TestCaseError::fail(format!("{text}: first mismatch {m:?}")));
    }
    // Every truncation is an error or a shorter decode, never a panic.
    for cut in [1, trace.bytes.len() / 2, trace.bytes.len().saturating_sub(1)] {
        let d = decode_trace(&cfg, &trace.bytes[..cut.min(trace.bytes.len())], image, false);
        prop_assert!(!d.errors.is_empty() || !d.ended || cut == trace.bytes.len(), "{text}: cut at {cut} decoded cleanly");
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn competitors_round_trip(seed in any::<u64>(), n in 500usize..8000) {
        let spec = SyntheticSpec::new(seed, n);
        let iw = generate(&spec).unwrap();
        let arm = generate(&spec.arm_only()).unwrap();
        for text in CONFIGS {
            check(&iw.events, &iw.image, text)?;
            check(&arm.events, &arm.image, &format!("{text},isa=arm"))?;
        }
    }
}

#[test]
fn tslz_windows_order_as_the_paper_says() {
    // Larger windows find more repeats: TSLZ-256 >= TSLZ-1K >= TSLZ-8K in bits.
    let run = generate(&SyntheticSpec::new(3, 60_000)).unwrap();
    let bits = |text: &str| {
        let cfg: Config = text.parse().unwrap();
        let mut enc = Encoder::new(&cfg);
        run.events.iter().for_each(|e| enc.push(e).unwrap());
        enc.finish().1.total_bits
    };
    let (w256, w1k, w8k) = (bits("tslz-256"), bits("tslz-1024"), bits("tslz-8192"));
    assert!(w256 >= w1k && w1k >= w8k, "{w256} {w1k} {w8k}");
    // gzip -9 is never worse than gzip -1 by more than the header noise.
    assert!(bits("gzip-9") <= bits("gzip-1") + 64);
}

/// Cycle mode (docs/trace-timing.md) with the paper's buffers sends the functional bits for
/// every competitor, and SW-GZIP sends all of them after the last instruction.
#[test]
fn competitors_in_cycle_mode_send_the_functional_bits() {
    let run = generate(&SyntheticSpec::new(11, 20_000)).unwrap();
    let buf: BufferConfig = "sdb=2,obuf=80,port=1,policy=stall".parse().unwrap();
    for text in CONFIGS {
        let cfg: Config = text.parse().unwrap();
        let mut enc = Encoder::new(&cfg);
        let mut module = CycleTraceModule::new(&cfg, &buf);
        for (i, e) in run.events.iter().enumerate() {
            enc.push(e).unwrap();
            module.push_at(e, i as u64).unwrap();
        }
        let (trace, _) = enc.finish();
        let out = module.finish();
        assert!(out.trace == trace, "{text}: cycle-mode bits differ from functional mode");
        // The port sends every bit once, one per cycle, so the run lasts at least that long.
        assert!(out.cycle.cycles >= trace.bit_len, "{text}: {} cycles for {} bits", out.cycle.cycles, trace.bit_len);
        if text.starts_with("gzip") {
            assert!(out.cycle.cycles >= run.events.len() as u64 + trace.bit_len, "{text}: gzip bits leave after END");
        }
    }
}

/// Fuzzer finding (roundtrip, 2026-11-25): a sync request on TSLZ cut the stream after a
/// not-taken conditional branch, and the next start address was sent as inferable, so the
/// decoder took the branch target. The competitors have no sync record, so a request does
/// nothing on them (trace-format.md section 10): every decode equals the run, and the trace
/// equals the one without requests.
#[test]
fn a_sync_request_changes_nothing_on_the_competitors() {
    let mut spec = SyntheticSpec::new(18_012_703_034_198_524_153, 301);
    spec.arm_words = 64;
    spec.thumb_halfwords = 64;
    spec.branch_density = 316;
    spec.taken_bias = 447;
    spec.exception_rate = 6;
    spec.indirect_targets = 64;
    let run = generate(&spec).unwrap();
    // Before event 245 the stream in progress ends in a not-taken conditional branch.
    assert_eq!(run.events[244].class, streamtrace_model::BranchClass::DirectCond);
    assert!(!run.events[244].taken);
    for text in ["tslz-256,maxsl=3", "tslz-256", "gzip-1,maxsl=3", "sct8ht-16x4-15x16,maxsl=3"] {
        let cfg: Config = text.parse().unwrap();
        let encode = |sync_before: &[usize]| {
            let mut enc = Encoder::new(&cfg);
            for (i, e) in run.events.iter().enumerate() {
                if sync_before.contains(&i) {
                    enc.request_sync();
                }
                enc.push(e).unwrap();
            }
            enc.finish().0
        };
        let trace = encode(&[0, 245]);
        assert_eq!(trace.bytes, encode(&[]).bytes, "{text}: a request changed the trace");
        let out = decode_trace(&cfg, &trace.bytes, &run.image, false);
        assert!(out.errors.is_empty() && out.ended, "{text}: {:?}", out.errors);
        verify_addresses(&out.addresses, &run.events).unwrap_or_else(|m| panic!("{text}: {m:?}"));
    }
}

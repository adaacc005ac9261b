//! decode(encode(x)) == x for every scheme and a spread of sizes, on random synthetic
//! programs with calls/returns, indirect jumps, Thumb interworking, exceptions and syncs.

use proptest::prelude::*;
use streamtrace_model::{Config, Encoder, IsaMode, RetireEvent};
use streamtrace_sw_decoder::synthetic::{generate, SyntheticSpec};
use streamtrace_sw_decoder::{decode_trace, verify_addresses, Decoder, TraceElement};

const CONFIGS: &[&str] = &[
    "fbase",
    "base",
    "nexs",
    "fbase,maxsl=16",
    "nexs,maxsl=31",
    "bsdc-8x4-32",
    "bsdc-16x4-64",
    "bsdc-32x4-128",
    "bsdc-64x1-64",
    "bsdc-16x8-128",
    "bsdc-256x4-1024",
    "bsdc-32x4-128,repl=lru",
    "bsdc-32x4-128,repl=fifo,hist=3",
    "bsdc-32x4-128,repl=random,maxsl=20",
    "bsdc-32x2-256,hist=2",
    "esdc-8x4-32",
    "esdc-32x4-128",
    "esdc-64x4-256,repl=lru",
    "esdc-16x4-64,u=20,olc=1,olcmax=3",
    "esdc-128x1-128,shift=2,maxsl=12",
    "esdc-32x8-256,olc=8,olcmin=6,olcmax=10,repl=random",
    "rsdc-8x4-32",
    "rsdc-32x4-128",
    "rsdc-32x4-128,u=20",
    "rsdc-256x4-1024,repl=fifo",
    "rsdc-64x1-64,maxsl=40",
    "rsdc-16x8-128,u=24,repl=lru,hist=4",
    "rsdc-32x4-128,isa=arm",
    "esdc-32x4-128,isa=arm",
    "bsdc-16x4-64,sync=2000",
    "rsdc-32x4-128,sync=1500",
    "nexs,sync=700",
    // The predictor-filtered trace (section 11): default, ARM-only, periodic sync, no
    // predictors at all, every table at its smallest with eight tagged tables, and two
    // with tags or indices wider than 8 bits (the predictor's 16-bit lane layout; the
    // others use 8-bit lanes).
    "pft",
    "pft,bim=4096,tsize=512,tag=10,hlen=2-5-11-23-45-64,ras=32,itp=64,itt=64,ttag=9,rtc=16",
    "pft,tsize=64,tag=9,hlen=2-3-5-8-13-21-34-64",
    "pft,isa=arm",
    "pft,sync=1800",
    "pft,bim=2,hlen=none,ras=0,itp=0,itt=0,rtc=0,u=1,rate=1",
    "pft,bim=4,tsize=2,tag=4,hlen=1-2-3-5-8-13-21-64,ras=1,itp=1,rtc=1,u=31,rate=8",
];

fn encode(cfg: &Config, events: &[RetireEvent], sync_at: &[usize]) -> (Vec<u8>, u64) {
    let mut enc = Encoder::new(cfg);
    for (i, e) in events.iter().enumerate() {
        if sync_at.contains(&i) {
            enc.request_sync();
        }
        enc.push(e).unwrap_or_else(|err| panic!("{cfg}: {err}"));
    }
    let (t, stats) = enc.finish();
    (t.bytes, stats.syncs)
}

fn check_roundtrip(spec: &SyntheticSpec, sync_at: &[usize]) {
    check_configs(CONFIGS, spec, sync_at);
}

fn check_configs(configs: &[&str], spec: &SyntheticSpec, sync_at: &[usize]) {
    let run_iw = generate(spec).unwrap();
    let run_arm = generate(&spec.arm_only()).unwrap();
    for text in configs {
        let cfg: Config = text.parse().unwrap();
        let run = if cfg.isa == IsaMode::ArmOnly { &run_arm } else { &run_iw };
        let (bytes, syncs) = encode(&cfg, &run.events, sync_at);
        let out = decode_trace(&cfg, &bytes, &run.image, false);
        assert!(out.errors.is_empty(), "{text}: {:?}", out.errors);
        assert!(out.ended, "{text}: no END");
        if let Err(m) = verify_addresses(&out.addresses, &run.events) {
            panic!("{text}: first mismatch {m:?}");
        }
        let n_exc = out.elements.iter().filter(|e| matches!(e, TraceElement::Exception { .. })).count();
        let n_sync = out.elements.iter().filter(|e| matches!(e, TraceElement::Sync { .. })).count();
        assert_eq!(n_exc, run.events.iter().filter(|e| e.exception).count(), "{text}: exceptions");
        assert_eq!(n_sync as u64, syncs, "{text}: syncs");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]
    #[test]
    fn every_scheme_roundtrips(
        seed in any::<u64>(),
        instructions in 1usize..12_000,
        density in 20u64..400,
        taken in 0u64..1000,
        exc in 0u64..20,
        targets in 1u32..64,
        small in any::<bool>(),
        sync_at in proptest::collection::vec(0usize..12_000, 0..4),
    ) {
        let mut spec = SyntheticSpec::new(seed, instructions);
        spec.branch_density = density;
        spec.taken_bias = taken;
        spec.exception_rate = exc;
        spec.indirect_targets = targets;
        if small {
            spec.arm_words = 64;
            spec.thumb_halfwords = 64;
        }
        check_roundtrip(&spec, &sync_at);
    }
}

#[test]
fn long_run_every_scheme() {
    check_roundtrip(&SyntheticSpec::new(0xC0FFEE, 150_000), &[10, 70_000]);
}

/// The pft decoder's slot loop has a BMI2 build, used where the host has BMI2, and the
/// baseline build; decode with the baseline too. (Other tests of this binary may run
/// meanwhile with the baseline: the same source, so the same results.)
#[test]
fn pft_portable_build_roundtrips() {
    let pft: Vec<&str> = CONFIGS.iter().copied().filter(|c| c.starts_with("pft")).collect();
    streamtrace_sw_decoder::pft::use_portable_build(true);
    check_configs(&pft, &SyntheticSpec::new(0xBEEF, 60_000), &[5, 30_000]);
    streamtrace_sw_decoder::pft::use_portable_build(false);
}

/// A decoder that joins at a sync marker rebuilds exactly the instructions after it.
#[test]
fn decoding_from_the_middle_resumes_at_a_sync() {
    let run = generate(&SyntheticSpec::new(99, 60_000)).unwrap();
    for text in ["rsdc-32x4-128,sync=4000", "esdc-16x4-64,sync=2500", "bsdc-64x4-256,sync=3000", "nexs,sync=1000", "pft,sync=3000"] {
        let cfg: Config = text.parse().unwrap();
        let (bytes, _) = encode(&cfg, &run.events, &[]);
        for start in [bytes.len() / 5, bytes.len() / 2, bytes.len() * 4 / 5] {
            let tail = &bytes[start..];
            let mut dec = Decoder::new(&cfg, tail, &run.image);
            dec.resync().expect("a sync marker follows");
            let mut addrs = Vec::new();
            while let Some(el) = dec.next_element(&mut addrs).unwrap_or_else(|e| panic!("{text}: {e}")) {
                let _ = el;
            }
            assert!(!addrs.is_empty());
            let skip = run.events.len() - addrs.len();
            verify_addresses(&addrs, &run.events[skip..]).unwrap_or_else(|m| panic!("{text} from byte {start}: {m:?}"));
        }
    }
}

/// Truncated and corrupted traces give errors with offsets, never panics, and what was
/// decoded before the damage is a correct prefix.
#[test]
fn damaged_traces_fail_cleanly() {
    let run = generate(&SyntheticSpec::new(5, 20_000)).unwrap();
    for text in ["bsdc-32x4-128", "esdc-32x4-128", "rsdc-32x4-128", "base", "nexs", "fbase", "pft", "pft,sync=3000"] {
        let cfg: Config = text.parse().unwrap();
        let (bytes, _) = encode(&cfg, &run.events, &[]);
        for cut in [1, bytes.len() / 3, bytes.len() - 1] {
            let out = decode_trace(&cfg, &bytes[..cut], &run.image, false);
            assert!(!out.ended, "{text}: cut at {cut} still ended");
            assert!(!out.errors.is_empty(), "{text}: cut at {cut} reported nothing");
            assert!(out.errors[0].offset() <= cut as u64 * 8);
            let n = out.addresses.len().min(run.events.len());
            verify_addresses(&out.addresses[..n], &run.events[..n]).unwrap();
        }
        let mut rng = streamtrace_sw_decoder::synthetic::SplitMix64::new(1);
        for _ in 0..200 {
            let mut bad = bytes.clone();
            let i = rng.below(bad.len() as u64) as usize;
            bad[i] ^= 1 << rng.below(8);
            let _ = decode_trace(&cfg, &bad, &run.image, false);
        }
    }
}

/// pft: an idle loop without prediction points (`b .`) runs past several virtual slots,
/// then an interrupt takes it to a vector; the decoder rebuilds every address.
#[test]
fn pft_idle_loop_virtual_slots_and_exception() {
    use streamtrace_isa::MemoryImage;
    use streamtrace_model::BranchClass;
    let mut image = MemoryImage::new();
    image.add_segment(0x1000, 0xEAFF_FFFEu32.to_le_bytes().to_vec()).unwrap(); // b .
    image.add_segment(0x18, [0xE1A0_0000u32.to_le_bytes(), 0xE1A0_0000u32.to_le_bytes()].concat()).unwrap();
    let spin = RetireEvent { pc: 0x1000, insn: 0xEAFF_FFFE, class: BranchClass::DirectUncond, taken: true, next_pc: 0x1000, ..Default::default() };
    let mut events = vec![spin; 200_000];
    events.push(RetireEvent { exception: true, next_pc: 0x18, ..spin });
    events.push(RetireEvent { pc: 0x18, insn: 0xE1A0_0000, next_pc: 0x1C, ..Default::default() });
    events.push(RetireEvent { pc: 0x1C, insn: 0xE1A0_0000, next_pc: 0x20, ..Default::default() });
    let cfg: Config = "pft".parse().unwrap();
    let mut enc = Encoder::new(&cfg);
    enc.push_all(&events).unwrap();
    let (trace, stats) = enc.finish();
    let pft = stats.pft.unwrap();
    assert_eq!(pft.virtual_slots, 200_000 / 65_535);
    assert_eq!((pft.slots, pft.exceptions), (0, 1));
    assert!(trace.bytes.len() < 40, "{} bytes", trace.bytes.len());
    let out = decode_trace(&cfg, &trace.bytes, &image, true);
    assert!(out.errors.is_empty() && out.ended, "{:?}", out.errors);
    verify_addresses(&out.addresses, &events).unwrap();
    assert_eq!(out.elements.iter().filter(|e| matches!(e, TraceElement::Exception { .. })).count(), 1);
}

//! Cycle mode (docs/trace-timing.md) against functional mode and the decoder, on random
//! synthetic programs with random retire timing and random buffer parameters:
//! * with the stall policy the bits equal functional mode's, whatever the buffers;
//! * with the drop policy the decoder rebuilds every instruction outside the reported
//!   overflow gaps, and the gaps add up to the reported lost instructions;
//! * the needed sizes of an unbounded run are exact: those sizes reproduce the run, and one
//!   less stalls (SDB) or holds the compressor back (output buffer).

use proptest::prelude::*;
use streamtrace_model::{encode_events, BufferConfig, Config, CycleOutput, CycleTraceModule, FullPolicy, RetireEvent};
use streamtrace_sw_decoder::synthetic::{generate, SplitMix64, SyntheticSpec};
use streamtrace_sw_decoder::{decode_trace, verify_addresses_with_gaps};

const CONFIGS: &[&str] =
    &["fbase", "base", "nexs", "bsdc-16x4-64", "esdc-32x4-128", "rsdc-32x4-128", "rsdc-8x2-16,sync=3000", "pft", "pft,sync=1500,rtc=0"];

/// Retire cycles with random gaps (cache misses, multi-cycle instructions).
fn cycles(n: usize, seed: u64) -> Vec<u64> {
    let mut rng = SplitMix64::new(seed);
    let mut c = rng.below(5);
    (0..n)
        .map(|_| {
            let now = c;
            c += 1 + if rng.chance(100) { rng.below(60) } else { rng.below(2) };
            now
        })
        .collect()
}

fn run(cfg: &Config, buf: &BufferConfig, events: &[RetireEvent], cyc: &[u64]) -> CycleOutput {
    let mut m = CycleTraceModule::new(cfg, buf);
    for (e, &c) in events.iter().zip(cyc) {
        m.push_at(e, c).unwrap();
    }
    m.finish()
}

fn buffers(rng: &mut SplitMix64, policy: FullPolicy) -> BufferConfig {
    let svc_hit = 1 + rng.below(2) as u32;
    BufferConfig {
        sdb: Some(1 + rng.below(4) as u32),
        obuf: Some(8 + rng.below(200)),
        port: 1 + rng.below(4) as u32,
        ratio: 1 + rng.below(3) as u32,
        svc_hit,
        svc_miss: svc_hit + rng.below(3) as u32,
        policy,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn stall_policy_keeps_functional_bits(seed in any::<u64>()) {
        let run_ = generate(&SyntheticSpec::new(seed, 6000)).unwrap();
        let cyc = cycles(run_.events.len(), seed);
        let mut rng = SplitMix64::new(seed ^ 0xB0FF);
        for text in CONFIGS {
            let cfg: Config = text.parse().unwrap();
            let buf = buffers(&mut rng, FullPolicy::Stall);
            let out = run(&cfg, &buf, &run_.events, &cyc);
            let (functional, fstats) = encode_events(&cfg, &run_.events).unwrap();
            prop_assert!(out.trace == functional, "{text} {buf}: cycle-mode bits differ");
            prop_assert_eq!(out.stats.total_bits, fstats.total_bits);
            prop_assert_eq!(out.cycle.port_bits, functional.bit_len);
            prop_assert_eq!(out.cycle.overflows, 0);
        }
    }

    #[test]
    fn drop_policy_decodes_outside_the_gaps(seed in any::<u64>()) {
        let run_ = generate(&SyntheticSpec::new(seed, 6000)).unwrap();
        let expected: Vec<u32> = run_.events.iter().map(RetireEvent::iw_addr).collect();
        // IPC = 1 and one bit per two cycles: the port cannot keep up, so records drop.
        let cyc: Vec<u64> = (0..run_.events.len() as u64).collect();
        let mut rng = SplitMix64::new(seed ^ 0xD20B);
        for text in CONFIGS {
            let cfg: Config = text.parse().unwrap();
            let mut buf = buffers(&mut rng, FullPolicy::Drop);
            buf.ratio = 2;
            buf.port = 1;
            let out = run(&cfg, &buf, &run_.events, &cyc);
            let d = decode_trace(&cfg, &out.trace.bytes, &run_.image, false);
            prop_assert!(d.errors.is_empty(), "{text} {buf}: {:?}", d.errors);
            prop_assert!(d.ended);
            let lost: u64 = d.gaps.iter().map(|g| g.lost).sum();
            prop_assert_eq!(lost, out.cycle.lost_instructions, "{} {}", text, buf);
            prop_assert_eq!(d.gaps.len() as u64, out.cycle.overflows);
            // A trace that needs more than twice what the port carries (half a bit per
            // instruction here) must drop; fbase usually needs ~5 bits per instruction, but
            // a random program of long straight runs can need less than the port carries.
            let (functional, _) = encode_events(&cfg, &run_.events).unwrap();
            if functional.bit_len > run_.events.len() as u64 {
                prop_assert!(out.cycle.overflows > 0, "{text}: {:?}", out.cycle);
            }
            if let Err(m) = verify_addresses_with_gaps(&d.addresses, &d.gaps, &expected) {
                return Err(TestCaseError::fail(format!("{text} {buf}: {m:?}")));
            }
        }
    }

    #[test]
    fn needed_sizes_are_exact(seed in any::<u64>()) {
        let run_ = generate(&SyntheticSpec::new(seed, 4000)).unwrap();
        let cyc = cycles(run_.events.len(), seed ^ 7);
        let mut rng = SplitMix64::new(seed ^ 0x512E);
        for text in CONFIGS {
            let cfg: Config = text.parse().unwrap();
            let base = buffers(&mut rng, FullPolicy::Stall);
            let sizing = run(&cfg, &base.unbounded(), &run_.events, &cyc).cycle;
            prop_assert_eq!(sizing.stall_cycles, 0);
            let exact = BufferConfig { sdb: Some(sizing.sdb_needed), obuf: Some(sizing.obuf_needed_bits), ..base };
            let again = run(&cfg, &exact, &run_.events, &cyc).cycle;
            prop_assert_eq!((again.stall_cycles, again.obuf_full_cycles, again.cycles), (0, 0, sizing.cycles), "{} {}", text, exact);
            if sizing.sdb_needed > 1 {
                let small = BufferConfig { sdb: Some(sizing.sdb_needed - 1), ..exact };
                prop_assert!(run(&cfg, &small, &run_.events, &cyc).cycle.stall_cycles > 0);
            }
            let small = BufferConfig { obuf: Some(sizing.obuf_needed_bits - 1), ..exact };
            prop_assert!(run(&cfg, &small, &run_.events, &cyc).cycle.obuf_full_cycles > 0);
        }
    }
}

/// A drop-mode run that really drops: the check above is not vacuous.
#[test]
fn a_slow_port_drops_on_the_baselines() {
    let run_ = generate(&SyntheticSpec::new(11, 6000)).unwrap();
    let cyc: Vec<u64> = (0..run_.events.len() as u64).collect();
    let cfg: Config = "fbase".parse().unwrap();
    let buf: BufferConfig = "sdb=2,obuf=80,ratio=4,policy=drop".parse().unwrap();
    let out = run(&cfg, &buf, &run_.events, &cyc);
    assert!(out.cycle.overflows > 10 && out.cycle.lost_instructions > 1000, "{:?}", out.cycle);
}

/// pft drops too when its port is slow enough, and decodes exactly outside the gaps (its
/// overflow jobs: offset, lost count, reset, new start).
#[test]
fn a_slow_port_drops_pft_and_the_gaps_decode() {
    let run_ = generate(&SyntheticSpec::new(11, 20_000)).unwrap();
    let expected: Vec<u32> = run_.events.iter().map(RetireEvent::iw_addr).collect();
    let cyc: Vec<u64> = (0..run_.events.len() as u64).collect();
    for text in ["pft", "pft,sync=2000,itp=0"] {
        let cfg: Config = text.parse().unwrap();
        let buf: BufferConfig = "sdb=2,obuf=32,ratio=32,policy=drop".parse().unwrap();
        let out = run(&cfg, &buf, &run_.events, &cyc);
        assert!(out.cycle.overflows > 3 && out.cycle.lost_instructions > 100, "{text}: {:?}", out.cycle);
        let d = decode_trace(&cfg, &out.trace.bytes, &run_.image, false);
        assert!(d.errors.is_empty() && d.ended, "{text}: {:?}", d.errors);
        assert_eq!(d.gaps.iter().map(|g| g.lost).sum::<u64>(), out.cycle.lost_instructions, "{text}");
        verify_addresses_with_gaps(&d.addresses, &d.gaps, &expected).unwrap_or_else(|m| panic!("{text}: {m:?}"));
    }
}

//! The RustHDL trace module against the model's cycle mode, every cycle (port bits, port
//! data, stall, and the end of the trace), on synthetic programs, for several scheme,
//! geometry and buffer configurations.

use streamtrace_hw::drive::{compare_with_model, run_against, RtlSim};
use streamtrace_hw::golden::{expected_run, Stimulus};
use streamtrace_hw::HwConfig;
use streamtrace_model::RetireEvent;
use streamtrace_sw_decoder::synthetic::{generate, SyntheticSpec};

fn program(seed: u64, n: usize, arm_only: bool) -> Vec<RetireEvent> {
    let spec = SyntheticSpec::new(seed, n);
    generate(&if arm_only { spec.arm_only() } else { spec }).unwrap().events
}

/// IPC = 1: instruction i retires in cycle i.
fn ipc1(events: &[RetireEvent]) -> Vec<(RetireEvent, u64)> {
    events.iter().enumerate().map(|(i, e)| (*e, i as u64)).collect()
}

fn check(cfg: &str, buffers: &str, events: &[(RetireEvent, u64)]) -> streamtrace_hw::drive::Agreement {
    let h = HwConfig::new(&cfg.parse().unwrap(), &buffers.parse().unwrap()).unwrap();
    match compare_with_model(&h, events) {
        Ok(a) => a,
        Err(m) => panic!("{cfg} [{buffers}]: {m}"),
    }
}

#[test]
fn committed_configurations_agree_every_cycle() {
    let events = ipc1(&program(1, 12_000, false));
    for cfg in ["rsdc-32x4-128", "esdc-32x4-128", "bsdc-32x4-128"] {
        let a = check(cfg, "", &events);
        assert!(a.bits > 1000 && a.cycles >= 12_000, "{cfg}: {a:?}");
    }
}

#[test]
fn small_buffers_stall_the_core_and_still_agree() {
    let events = ipc1(&program(2, 6_000, false));
    let a = check("bsdc-8x4-16", "sdb=1,obuf=24", &events);
    assert!(a.stall_cycles > 500, "the configuration must stall: {a:?}");
    let a = check("rsdc-32x4-128,sync=1500", "sdb=2,obuf=40", &events);
    assert!(a.stall_cycles > 100, "{a:?}");
}

#[test]
fn drop_policy_sends_overflow_records() {
    let events = ipc1(&program(3, 6_000, false));
    let h = HwConfig::new(&"esdc-32x4-128".parse().unwrap(), &"sdb=1,obuf=16,policy=drop".parse().unwrap()).unwrap();
    let exp = expected_run(&h.model, &h.buffers, &events).unwrap();
    assert!(exp.stats.overflows > 10, "the run must overflow: {:?}", exp.stats);
    let a = compare_with_model(&h, &events).unwrap_or_else(|m| panic!("{m}"));
    assert_eq!(a.stall_cycles, 0);
}

#[test]
fn wide_slow_ports_and_long_services_agree() {
    let events = ipc1(&program(4, 5_000, true));
    check("rsdc-16x2-64,isa=arm", "port=4,ratio=2,svc_hit=2,svc_miss=3", &events);
    check("esdc-64x8-256,maxsl=16,olc=2", "port=8,obuf=64,sdb=3", &events);
    check("bsdc-4x1-1,shift=2", "port=64,obuf=224,svc_miss=4", &events);
    // Two compressor stages (svc_hit >= 3): lookup, then assembly in the next cycle.
    check("rsdc-32x4-128,sync=1500", "sdb=1,obuf=40,svc_hit=3,svc_miss=4", &events);
    check("esdc-16x2-64,sync=900", "port=2,svc_hit=3,svc_miss=3", &events);
}

#[test]
fn retire_gaps_and_tiny_traces_agree() {
    // A core that does not retire every cycle.
    let evs = program(5, 4_000, false);
    let mut cycle = 100u64;
    let gapped: Vec<(RetireEvent, u64)> = evs
        .iter()
        .enumerate()
        .map(|(i, e)| {
            cycle += 1 + (i as u64 * 7919 % 5) / 3;
            (*e, cycle)
        })
        .collect();
    check("rsdc-32x4-128", "", &gapped);
    check("rsdc-32x4-128", "", &[]);
    check("bsdc-32x4-128", "sdb=1", &gapped[..1]);
    check("esdc-32x4-128", "sdb=1,obuf=8", &gapped[..3]);
}

#[test]
fn a_wrong_expectation_is_reported_with_its_cycle() {
    let events = ipc1(&program(6, 2_000, false));
    let h = HwConfig::new(&"rsdc-32x4-128".parse().unwrap(), &Default::default()).unwrap();
    let stimuli: Vec<Stimulus> = events.iter().map(|(e, c)| Stimulus::from_event(e, *c)).collect();
    // Flip one bit of one beat: the comparison must stop exactly there.
    let mut exp = expected_run(&h.model, &h.buffers, &events).unwrap();
    let victim = exp.beats.len() / 2;
    exp.beats[victim].data ^= 1 << (h.buffers.port - 1);
    let mut sim = RtlSim::new(&h).unwrap();
    let err = run_against(&mut |inp| sim.step(inp), &stimuli, &exp).unwrap_err();
    assert_eq!(err.cycle, exp.beats[victim].cycle, "{err}");
    assert!(err.what.contains("port"), "{err}");
    // A stall the model does not have.
    let mut exp = expected_run(&h.model, &h.buffers, &events).unwrap();
    exp.stall_cycles.insert(0, 3);
    let mut sim = RtlSim::new(&h).unwrap();
    let err = run_against(&mut |inp| sim.step(inp), &stimuli, &exp).unwrap_err();
    assert_eq!(err.cycle, 3, "{err}");
    assert!(err.what.contains("stall"), "{err}");
}

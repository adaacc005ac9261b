//! The emitted Verilog under a second, independent simulator: Icarus Verilog with the bench
//! of testbenches/icarus/tb.v, on test programs of testbenches/programs run on the core
//! model (IPC = 1, as `streamtrace cosim`). Icarus must agree with the model's cycle mode
//! every cycle, and with Verilator on the same expectations; a wrong expectation must be
//! caught at its cycle. Needs Icarus and Verilator: without them the tests fail with the
//! install command.
//!
//! Icarus simulates the export at a few thousand cycles per second, so the programs are
//! capped at a few thousand instructions.

mod common;

use std::path::PathBuf;

use streamtrace_hw::cosim::{cosimulate, cosimulate_pft, Verdict};
use streamtrace_hw::golden::{expected_run, Expected};
use streamtrace_hw::icarus::{cosimulate_icarus, cosimulate_icarus_ice40, cosimulate_icarus_pft};
use streamtrace_hw::pft::PftHwConfig;
use streamtrace_hw::HwConfig;
use streamtrace_model::RetireEvent;
use common::manifest;
use streamtrace_sim::sweep::programs_from_manifest;

/// Instructions per program: ~1.1 module cycles each, at ~3,000 Icarus cycles/s.
const CAP: u64 = 4_000;

/// Retire events of manifest program `name` on the core model, at most `max`, with retire
/// cycle = index (as `streamtrace cosim`, src/cmd_hw.rs).
fn program_events(name: &str, max: u64) -> Vec<(RetireEvent, u64)> {
    let events = common::program_events(name, max);
    assert!(events.len() as u64 >= max.min(1000), "{name}: only {} instructions", events.len());
    events
}

fn dir(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("hw-icarus").join(name)
}

fn hw(cfg: &str, buffers: &str) -> HwConfig {
    HwConfig::new(&cfg.parse().unwrap(), &buffers.parse().unwrap()).unwrap()
}

/// (cycles, beats, bits, stalls) as the benches report them for `exp`.
fn figures(exp: &Expected) -> (u64, u64, u64, u64) {
    let bits = exp.beats.iter().map(|b| b.bits as u64).sum();
    (exp.cycles + 1, exp.beats.len() as u64, bits, exp.stall_cycles.len() as u64)
}

fn agreed(v: Verdict, what: &str) -> (u64, u64, u64, u64) {
    match v {
        Verdict::Agree { cycles, beats, bits, stalls, cycles_per_second } => {
            eprintln!("{what}: {cycles} cycles, {beats} beats, {bits} bits, {stalls} stalls, {cycles_per_second} cycles/s");
            (cycles, beats, bits, stalls)
        }
        Verdict::Mismatch(m) => panic!("{what}: {m}"),
    }
}

/// Icarus and Verilator on the same events (so on the same expectation file): both agree
/// with the model every cycle and report the same figures, which are the model's.
fn both_agree(config: &str, buffers: &str, programs: &[&str], cap: u64) -> Vec<(u64, u64, u64, u64)> {
    let h = hw(config, buffers);
    let label = h.module_name();
    let ic = dir(&format!("{label}-icarus"));
    let vl = dir(&format!("{label}-verilator"));
    let mut all = Vec::new();
    for &name in programs {
        let ev = program_events(name, cap);
        let want = figures(&expected_run(&h.model, &h.buffers, &ev).unwrap());
        let icarus = agreed(cosimulate_icarus(&h, &ev, &ic, None, None).unwrap(), &format!("icarus {config} {name}"));
        let verilator = agreed(cosimulate(&h, &ev, &vl, None, None).unwrap(), &format!("verilator {config} {name}"));
        assert_eq!(icarus, want, "{config} {name}: Icarus figures differ from the model's");
        assert_eq!(verilator, want, "{config} {name}: Verilator figures differ from the model's");
        assert_eq!(
            std::fs::read_to_string(ic.join("expected.txt")).unwrap(),
            std::fs::read_to_string(vl.join("expected.txt")).unwrap(),
            "{config} {name}: the two benches were given different expectations"
        );
        assert!(want.2 > 0, "{config} {name}: no trace bits");
        all.push(want);
    }
    all
}

/// Instructions of the gate-level runs: Icarus simulates the iCE40 netlist at a few hundred
/// cycles per second.
const GATE_CAP: u64 = 2_000;

/// The FPGA flow's netlist (`synth_ice40`: LUT4s, carries, flip-flops, block RAMs) under
/// Yosys's cell models agrees with the model every cycle, for the paper's one-cycle build
/// and the three-cycle FPGA build: synthesis (block-RAM inference included) kept the
/// behaviour the RTL co-simulations check.
#[test]
fn the_ice40_netlist_agrees_with_the_model() {
    for buffers in ["", "svc_hit=3,svc_miss=4"] {
        let h = hw("rsdc-32x4-128,isa=arm", buffers);
        let ev = program_events("crc32", GATE_CAP);
        let want = figures(&expected_run(&h.model, &h.buffers, &ev).unwrap());
        let label = format!("ice40 netlist {} {buffers}", h.module_name());
        let got = agreed(cosimulate_icarus_ice40(&h, &ev, &dir(&format!("{}-ice40", h.module_name()))).unwrap(), &label);
        assert_eq!(got, want, "{label}: figures differ from the model's");
        assert!(want.2 > 0, "{label}: no trace bits");
    }
}

#[test]
fn icarus_agrees_with_model_and_verilator_rsdc() {
    // ARM with semihosted file reads, Thumb, ARM with a function-pointer table.
    both_agree("rsdc-32x4-128", "", &["crc32", "dijkstra", "bitcount"], CAP);
}

#[test]
fn icarus_agrees_with_model_and_verilator_bsdc() {
    both_agree("bsdc-32x4-128", "", &["stringsearch"], CAP);
}

/// A 4-pin port with a clock ratio, a one-entry descriptor buffer and a slow miss service:
/// beats of several bits (placement on the pins matters) and many stalls.
#[test]
fn icarus_agrees_on_a_wide_port() {
    let figs = both_agree("esdc-16x2-64,sync=4000", "sdb=1,obuf=20,port=4,ratio=2,svc_miss=3", &["aes"], CAP);
    assert!(figs[0].3 > 0, "the small buffers stall");
    assert!(figs[0].2 > figs[0].1, "some beats carry more than one bit");
}

/// The same with the drop policy. This ran into a zero-delay loop under Icarus until every
/// signal another block reads was written once per evaluation (the top block's SDB inputs
/// and the SDB's head outputs glitched each other after a drop; `exports.rs` checks the rule).
#[test]
fn icarus_agrees_with_the_drop_policy() {
    let (cfg, buf) = ("esdc-16x2-64,sync=4000", "sdb=1,obuf=20,port=4,ratio=2,svc_miss=3,policy=drop");
    let figs = both_agree(cfg, buf, &["aes"], CAP);
    assert_eq!(figs[0].3, 0, "the drop policy never stalls");
    let h = hw(cfg, buf);
    let exp = expected_run(&h.model, &h.buffers, &program_events("aes", CAP)).unwrap();
    assert!(exp.stats.overflows > 0, "the small buffers must drop");
}

/// Two-cycle services (the record registered between the compressor and the output buffer,
/// `svc_hit >= 2`) and three-cycle ones (the compressor in two stages as well), with the
/// stall and the drop policy: the same cycles in all three.
#[test]
fn icarus_agrees_with_two_cycle_services() {
    let stall = both_agree("rsdc-32x4-128", "sdb=1,obuf=24,svc_hit=2,svc_miss=3", &["crc32"], CAP);
    assert!(stall[0].3 > 0, "the small buffers stall");
    let (cfg, buf) = ("rsdc-32x4-128", "sdb=1,obuf=24,svc_hit=2,svc_miss=3,policy=drop");
    both_agree(cfg, buf, &["crc32"], CAP);
    let h = hw(cfg, buf);
    let exp = expected_run(&h.model, &h.buffers, &program_events("crc32", CAP)).unwrap();
    assert!(exp.stats.overflows > 0, "the small buffers must drop");
    // Three-cycle services: the compressor's lookup and assembly in two stages.
    let stall = both_agree("rsdc-32x4-128", "sdb=1,obuf=24,svc_hit=3,svc_miss=4", &["crc32"], CAP);
    assert!(stall[0].3 > 0, "the small buffers stall");
    both_agree("rsdc-32x4-128", "sdb=1,obuf=24,svc_hit=3,svc_miss=4,policy=drop", &["crc32"], CAP);
}

/// rSDC with the drop policy on a one-entry SDB and a small output buffer, on two programs:
/// overflows and the records after them agree in all three.
#[test]
fn icarus_agrees_with_the_drop_policy_rsdc() {
    let (cfg, buf) = ("rsdc-32x4-128", "sdb=1,obuf=24,policy=drop");
    both_agree(cfg, buf, &["crc32", "dijkstra"], CAP);
    let h = hw(cfg, buf);
    for name in ["crc32", "dijkstra"] {
        let exp = expected_run(&h.model, &h.buffers, &program_events(name, CAP)).unwrap();
        assert!(exp.stats.overflows > 0, "{name}: the small buffers must drop");
    }
}

/// pft (the committed export, the default configuration, a one-entry job buffer under the
/// stall policy, where the coder's take frees the entry in the same cycle, trace-timing 1.4,
/// and a drop run with small buffers and syncs) under Icarus, Verilator and the model: ARM
/// with a function-pointer table, Thumb, ARM with semihosted file reads.
#[test]
fn icarus_agrees_with_model_and_verilator_pft() {
    for (cfg, buffers, programs) in [
        ("pft", "", &["bitcount", "dijkstra"][..]),
        ("pft", "sdb=1,obuf=40", &["qsort_structs"][..]),
        ("pft,sync=1500", "sdb=1,obuf=40,policy=drop", &["crc32"][..]),
    ] {
        let h = PftHwConfig::new(&cfg.parse().unwrap(), &buffers.parse().unwrap()).unwrap();
        let label = h.module_name();
        let (ic, vl) = (dir(&format!("{label}-icarus")), dir(&format!("{label}-verilator")));
        for &name in programs {
            let ev = program_events(name, CAP);
            let exp = expected_run(&h.model, &h.buffers, &ev).unwrap();
            let want = figures(&exp);
            let what = format!("{cfg} {buffers} {name}");
            let icarus = agreed(cosimulate_icarus_pft(&h, &ev, &ic, None, None).unwrap(), &format!("icarus {what}"));
            let verilator = agreed(cosimulate_pft(&h, &ev, &vl, None, None).unwrap(), &format!("verilator {what}"));
            assert_eq!(icarus, want, "{what}: Icarus figures differ from the model's");
            assert_eq!(verilator, want, "{what}: Verilator figures differ from the model's");
            assert!(want.2 > 100, "{what}: {} trace bits", want.2);
            if buffers.contains("drop") {
                assert!(exp.stats.overflows > 0, "{what}: the small buffers must drop");
            }
        }
    }
}

/// A wrong pft expectation is caught by Icarus at its cycle.
#[test]
fn icarus_catches_a_wrong_pft_beat() {
    let h = PftHwConfig::new(&"pft".parse().unwrap(), &"".parse().unwrap()).unwrap();
    let ev = program_events("dijkstra", 2_000);
    let flip = |e: &mut Expected| {
        let mid = e.beats.len() / 2;
        e.beats[mid].data ^= 1;
    };
    let cycle = {
        let mut e = expected_run(&h.model, &h.buffers, &ev).unwrap();
        flip(&mut e);
        e.beats[e.beats.len() / 2].cycle
    };
    match cosimulate_icarus_pft(&h, &ev, &dir("pft-tampered"), None, Some(&flip)).unwrap() {
        Verdict::Mismatch(m) => assert!(m.contains(&format!("cycle={cycle}")), "{m}"),
        v => panic!("a flipped port bit went unnoticed: {v:?}"),
    }
}

/// Every test program under the three committed configurations, 20,000 instructions each
/// (several minutes): `cargo test -p streamtrace-hw --test icarus -- --ignored`.
#[test]
#[ignore]
fn soak_icarus_every_program_committed_configurations() {
    let names: Vec<String> = programs_from_manifest(&manifest()).unwrap().into_iter().map(|p| p.name).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    for config in ["rsdc-32x4-128", "esdc-32x4-128", "bsdc-32x4-128"] {
        both_agree(config, "", &names, 20_000);
    }
}

/// Wrong expectations are caught at their cycle, with the signal named.
#[test]
fn icarus_catches_a_broken_expectation() {
    let h = hw("rsdc-32x4-128", "");
    let ev = program_events("crc32", CAP / 2);
    let d = dir("tamper");
    let exp = expected_run(&h.model, &h.buffers, &ev).unwrap();
    let k = exp.beats.len() / 3;
    let beat = exp.beats[k];
    assert!(!exp.stall_cycles.is_empty(), "crc32 stalls the default buffers");
    let stall = exp.stall_cycles[exp.stall_cycles.len() / 3];

    // One flipped data bit.
    let flip = |e: &mut Expected| e.beats[k].data ^= 1;
    match cosimulate_icarus(&h, &ev, &d, None, Some(&flip)).unwrap() {
        Verdict::Mismatch(m) => {
            assert!(m.contains(&format!("cycle={} ", beat.cycle)) && m.contains("signal=port"), "{m}");
        }
        v => panic!("a flipped beat passed: {v:?}"),
    }
    // A beat's length off by one.
    let longer = |e: &mut Expected| e.beats[k].bits += 1;
    match cosimulate_icarus(&h, &ev, &d, None, Some(&longer)).unwrap() {
        Verdict::Mismatch(m) => assert!(m.contains(&format!("cycle={} signal=port", beat.cycle)), "{m}"),
        v => panic!("a wrong beat length passed: {v:?}"),
    }
    // A missing stall cycle.
    let no_stall = |e: &mut Expected| e.stall_cycles.retain(|&c| c != stall);
    match cosimulate_icarus(&h, &ev, &d, None, Some(&no_stall)).unwrap() {
        Verdict::Mismatch(m) => assert!(m.contains(&format!("cycle={stall} signal=stall rtl=1 model=0")), "{m}"),
        v => panic!("a missing stall passed: {v:?}"),
    }
    // The untouched expectations still agree in the same directory (the bench is reused).
    agreed(cosimulate_icarus(&h, &ev, &d, None, None).unwrap(), "icarus rsdc crc32 untampered");
}

#[test]
fn icarus_writes_a_waveform() {
    let h = hw("rsdc-32x4-128", "");
    let ev = program_events("tiny", 500);
    let d = dir("wave");
    let vcd = d.join("t.vcd");
    std::fs::create_dir_all(&d).unwrap();
    let _ = std::fs::remove_file(&vcd);
    agreed(cosimulate_icarus(&h, &ev, &d, Some(&vcd), None).unwrap(), "icarus rsdc tiny with VCD");
    let wave = std::fs::read_to_string(&vcd).unwrap();
    assert!(wave.contains("$enddefinitions") && wave.contains("port_data"), "not a VCD with the ports");
}

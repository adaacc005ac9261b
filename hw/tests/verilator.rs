//! The emitted Verilog, Verilated, against the model's cycle mode (through the C++ bench of
//! testbenches/cosim/), including a deliberately wrong expectation that the bench must catch.
//! Needs Verilator: without it the tests fail with the install command.

use std::path::PathBuf;

use streamtrace_hw::cosim::{cosimulate, Verdict};
use streamtrace_hw::HwConfig;
use streamtrace_model::RetireEvent;
use streamtrace_sw_decoder::synthetic::{generate, SyntheticSpec};

fn events(seed: u64, n: usize) -> Vec<(RetireEvent, u64)> {
    generate(&SyntheticSpec::new(seed, n)).unwrap().events.into_iter().enumerate().map(|(i, e)| (e, i as u64)).collect()
}

fn dir(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("hw-verilator").join(name)
}

fn hw(cfg: &str, buffers: &str) -> HwConfig {
    HwConfig::new(&cfg.parse().unwrap(), &buffers.parse().unwrap()).unwrap()
}

#[test]
fn verilated_module_agrees_and_a_broken_expectation_fails() {
    let h = hw("rsdc-32x4-128", "");
    let ev = events(1, 30_000);
    let d = dir("rsdc");
    match cosimulate(&h, &ev, &d, None, None).unwrap() {
        Verdict::Agree { bits, cycles, .. } => assert!(bits > 1000 && cycles > 30_000),
        Verdict::Mismatch(m) => panic!("{m}"),
    }
    // One flipped data bit: the bench stops at that beat's cycle and names the port.
    let flip = |e: &mut streamtrace_hw::golden::Expected| {
        let b = &mut e.beats[1000];
        b.data ^= 1;
    };
    let want_cycle = {
        let exp = streamtrace_hw::golden::expected_run(&h.model, &h.buffers, &ev).unwrap();
        exp.beats[1000].cycle
    };
    match cosimulate(&h, &ev, &d, None, Some(&flip)).unwrap() {
        Verdict::Mismatch(m) => {
            assert!(m.contains(&format!("cycle={want_cycle} ")) && m.contains("signal=port"), "{m}");
        }
        v => panic!("a wrong expectation passed: {v:?}"),
    }
    // A missing stall.
    let no_stall = |e: &mut streamtrace_hw::golden::Expected| {
        e.stall_cycles.remove(0);
    };
    match cosimulate(&h, &ev, &d, None, Some(&no_stall)).unwrap() {
        Verdict::Mismatch(m) => assert!(m.contains("signal=stall"), "{m}"),
        v => panic!("a wrong expectation passed: {v:?}"),
    }
}

#[test]
fn verilated_drop_policy_and_wide_port_agree() {
    let ev = events(2, 20_000);
    let h = hw("esdc-16x2-64,sync=4000", "sdb=1,obuf=20,port=4,ratio=2,svc_miss=3,policy=drop");
    match cosimulate(&h, &ev, &dir("drop"), None, None).unwrap() {
        Verdict::Agree { stalls, .. } => assert_eq!(stalls, 0),
        Verdict::Mismatch(m) => panic!("{m}"),
    }
}

/// With `svc_hit >= 2` the top registers each record in the start cycle and appends it to the
/// record register when its service completes (two cycles' paths instead of one); with
/// `svc_hit >= 3` the compressor's lookup and assembly are two stages as well: the same
/// cycles as the model for both policies, small buffers so that stalls, drops and held-back
/// records happen, periodic syncs so that the state resets cross the stages.
#[test]
fn verilated_two_cycle_services_agree() {
    let ev = events(4, 20_000);
    for (cfg, buffers) in [
        ("rsdc-32x4-128,sync=3000", "sdb=1,obuf=24,svc_hit=2,svc_miss=3"),
        ("esdc-16x2-64", "sdb=1,obuf=20,port=2,svc_hit=3,svc_miss=4,policy=drop"),
        ("rsdc-32x4-128,sync=2500", "sdb=1,obuf=24,svc_hit=3,svc_miss=4"),
        ("rsdc-16x2-64,sync=4000", "sdb=2,obuf=40,port=2,svc_hit=3,svc_miss=5,policy=drop"),
        ("bsdc-8x4-16", "sdb=2,obuf=32,svc_hit=4,svc_miss=4"),
    ] {
        let h = hw(cfg, buffers);
        match cosimulate(&h, &ev, &dir(&format!("staged-{}", h.module_name())), None, None).unwrap() {
            Verdict::Agree { bits, .. } => assert!(bits > 1000, "{cfg} {buffers}: {bits} bits"),
            Verdict::Mismatch(m) => panic!("{cfg} {buffers}: {m}"),
        }
    }
}

/// The standalone bench of testbenches/cosim/Makefile (no Rust): built from an export and
/// run on the stimulus and expectation files the Rust side writes; it agrees, and it stops
/// with status 1 at a wrong expectation.
#[test]
fn the_makefile_bench_runs_without_rust() {
    use std::process::Command;
    let h = hw("rsdc-16x4-64", "sdb=1,obuf=24");
    let d = dir("makefile");
    let verilog = streamtrace_hw::verilog::write_export(&h, &d).unwrap();
    let ev = events(3, 5_000);
    let (stim, exp) = streamtrace_hw::cosim::write_run_files(&h, &ev, &d, None).unwrap();
    let cosim_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testbenches/cosim");
    let make_with = |expected: &std::path::Path, more: &[String]| {
        Command::new("make")
            .arg("-C")
            .arg(&cosim_dir)
            .arg("run")
            .arg(format!("MODULE={}", h.module_name()))
            .arg(format!("VERILOG={}", verilog.display()))
            .arg(format!("OBJ={}", d.join("obj").display()))
            .arg(format!("STIMULUS={}", stim.display()))
            .arg(format!("EXPECTED={}", expected.display()))
            .args(more)
            .output()
            .expect("run make")
    };
    let make = |expected: &std::path::Path| make_with(expected, &[]);
    // A VCD of module cycles 10 to 19 only (a separate traced build).
    let vcd = d.join("window.vcd");
    let more = ["WAVE=vcd".to_string(), format!("WAVE_FILE={}", vcd.display()), "FROM=10".into(), "TO=19".into()];
    let out = make_with(&exp, &more);
    assert!(out.status.success(), "{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let wave = std::fs::read_to_string(&vcd).unwrap();
    let times: Vec<&str> = wave.lines().filter(|l| l.starts_with('#')).collect();
    assert_eq!((times.len(), times[0], times[19]), (20, "#22", "#41"), "{times:?}");
    assert!(d.join("obj_vcd/bench").is_file(), "the traced bench is its own build");
    let out = make(&exp);
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("OK cycles="), "{text}");
    // One beat's data flipped: make fails and the bench names the cycle.
    let mut e = streamtrace_hw::golden::expected_run(&h.model, &h.buffers, &ev).unwrap();
    e.beats[100].data ^= 1;
    let bad = d.join("bad_expected.txt");
    std::fs::write(&bad, streamtrace_hw::cosim::expected_text(&e)).unwrap();
    let out = make(&bad);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(!out.status.success(), "{text}");
    assert!(text.contains(&format!("MISMATCH cycle={} signal=port", e.beats[100].cycle)), "{text}");
    // Malformed files: status 2 and the file and line named (the bench's own scanner).
    let bench = d.join("obj").join("bench");
    let stim_text = std::fs::read_to_string(&stim).unwrap();
    let exp_text = std::fs::read_to_string(&exp).unwrap();
    let cases: [(&str, String, String, &str); 5] = [
        ("stimulus", stim_text.replacen(" 1 0000", " 1 zz00", 1), exp_text.clone(), ":2: expected CYCLE VALID PC CLASS TAKEN EXCEPTION"),
        ("stimulus", stim_text.lines().take(3).collect::<Vec<_>>().join("\n") + "\n99999999 1 00008000 0 0 0 e1a00000\n", exp_text.clone(), ":4: INSN and NEXT_PC"),
        ("stimulus", format!("{stim_text}3 1 00008000 0 0 0\n"), exp_text.clone(), "cycles must increase strictly"),
        ("expected", stim_text.clone(), exp_text.replacen("B ", "B x", 1), ": expected B CYCLE BITS DATA"),
        ("expected", stim_text.clone(), exp_text.lines().filter(|l| !l.starts_with("C ")).collect::<Vec<_>>().join("\n"), "missing the C line"),
    ];
    for (which, s_text, e_text, want) in cases {
        let (s_path, e_path) = (d.join("malformed_stimulus.txt"), d.join("malformed_expected.txt"));
        std::fs::write(&s_path, s_text).unwrap();
        std::fs::write(&e_path, e_text).unwrap();
        let out = Command::new(&bench).arg(&s_path).arg(&e_path).output().expect("run the bench");
        let err = String::from_utf8_lossy(&out.stderr);
        let file = if which == "stimulus" { "malformed_stimulus.txt" } else { "malformed_expected.txt" };
        assert_eq!(out.status.code(), Some(2), "{which}: {err}");
        assert!(err.contains(file) && err.contains(want), "{which}: wanted {want:?} in {err}");
    }
}

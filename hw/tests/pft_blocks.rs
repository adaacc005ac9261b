//! The pft RTL blocks against the model, on real program traces: the front end's job
//! records (expanded to coder operations) equal the model front end's jobs instruction by
//! instruction, with the direction predictor's answers supplied by the model's predictor.

mod common;


use rust_hdl::prelude::*;
use streamtrace_hw::pft::front::PftFrontEnd;
use streamtrace_hw::pft::{strip_info, JobRecord, PftHwConfig};
use streamtrace_model::pft::predict::DirectionPredictor;
use streamtrace_model::pft::PftFrontEnd as ModelFrontEnd;
use streamtrace_model::{BufferConfig, Config, RetireEvent};

fn program_events(name: &str, max: u64) -> Vec<RetireEvent> {
    common::program_events(name, max).into_iter().map(|(e, _)| e).collect()
}

fn lcg(s: &mut u64) -> u64 {
    *s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    *s >> 33
}

fn settle(uut: &mut PftFrontEnd) {
    assert!(simulate(uut, 500), "the front end did not settle");
}

fn clock(uut: &mut PftFrontEnd) {
    uut.clock.next = Clock::from(true);
    settle(uut);
    uut.clock.next = Clock::from(false);
    settle(uut);
}

/// Drive `events` through the RTL front end and the model's; `clear_every`: an OVERFLOW
/// reset after roughly one instruction in that many; `exception_every`: mark an
/// instruction as excepting (its vector is its real successor) about that often; `hold_every`:
/// present an instruction held for a cycle first (a stall).
fn compare(cfg: &str, events: &[RetireEvent], clear_every: u64, exception_every: u64, hold_every: u64) -> u64 {
    let cfg: Config = cfg.parse().unwrap();
    let h = PftHwConfig::new(&cfg, &BufferConfig::default()).unwrap();
    let mut uut = PftFrontEnd::new(&h);
    uut.connect_all();
    check_all(&uut).unwrap();
    let mut model = ModelFrontEnd::new(&cfg.pft, h.low, cfg.sync_period);
    let mut dir = DirectionPredictor::new(&cfg.pft);
    uut.reset.next = true;
    settle(&mut uut);
    clock(&mut uut);
    uut.reset.next = false;
    let mut s = 5u64;
    let mut jobs = 0u64;
    for (i, ev0) in events.iter().enumerate() {
        let mut ev = *ev0;
        if exception_every > 0 && lcg(&mut s).is_multiple_of(exception_every) {
            ev.exception = true;
        }
        let holds = if hold_every > 0 && lcg(&mut s).is_multiple_of(hold_every) { 1 } else { 0 };
        for held in (0..=holds).rev() {
            let (pred, ctx) = dir.predict(ev.iw_addr());
            uut.retire_valid.next = true;
            uut.hold.next = held > 0;
            uut.clear.next = false;
            uut.pc.next = (ev.iw_addr() as u64).into();
            uut.insn.next = (ev.insn as u64).into();
            uut.branch_class.next = (ev.class as u64).into();
            uut.taken.next = ev.taken;
            uut.exception.next = ev.exception;
            uut.next_pc.next = (ev.next_pc as u64).into();
            uut.dir_pred.next = pred;
            uut.dir_ctx.next = (ctx as u64).into();
            settle(&mut uut);
            if held > 0 {
                assert!(!uut.dir_update.val(), "event {i}: a held instruction updates the predictor");
                clock(&mut uut);
                continue;
            }
            let gap_before = uut.gap.val().to_u32();
            let want = model.push(&ev);
            assert_eq!(uut.job_valid.val(), want.is_some(), "event {i} {ev:?}: job or not");
            if let Some(job) = want {
                let rec = JobRecord::unpack(uut.job_w0.val().to_u64(), uut.job_w1.val().to_u64());
                assert_eq!(rec.ops(&h), strip_info(job.ops()), "event {i} {ev:?}: {rec:?}");
                assert_eq!(gap_before, job.gap_before, "event {i}: gap before");
                jobs += 1;
            }
            if uut.dir_update.val() {
                dir.update(ev.taken);
            }
            let clear = clear_every > 0 && lcg(&mut s).is_multiple_of(clear_every);
            if clear {
                uut.clear.next = true;
                settle(&mut uut);
                model.overflow_pushed();
            }
            if uut.dir_clear.val() {
                dir.reset();
            }
            clock(&mut uut);
        }
    }
    jobs
}

#[test]
fn front_end_jobs_equal_the_models_on_program_traces() {
    let qsort = program_events("qsort_structs", 25_000);
    let thumb = program_events("sha256_thumb", 25_000);
    let dijkstra = program_events("dijkstra", 25_000);
    for (cfg, ev, clear, exc, hold) in [
        ("pft", &qsort, 0, 0, 0),
        ("pft", &thumb, 0, 0, 0),
        ("pft", &dijkstra, 3000, 500, 7),
        ("pft,sync=2000", &thumb, 0, 300, 0),
        ("pft,ras=0,itp=0,rtc=0,hlen=none", &dijkstra, 0, 0, 0),
        ("pft,rtc=1,u=20,itp=4,ras=2", &qsort, 5000, 0, 0),
        ("pft,rtc=16,ras=64", &dijkstra, 0, 0, 3),
    ] {
        let jobs = compare(cfg, ev, clear, exc, hold);
        assert!(jobs > 1000, "{cfg}: only {jobs} jobs compared");
    }
}

#[test]
fn front_end_under_isa_arm() {
    let ev = program_events("qsort_structs", 20_000);
    assert!(compare("pft,isa=arm", &ev, 0, 400, 0) > 1000);
}

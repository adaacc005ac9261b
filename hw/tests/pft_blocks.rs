//! The pft RTL blocks against the model, on real program traces: the front end's job
//! records (expanded to coder operations) equal the model front end's jobs instruction by
//! instruction, with the direction predictor's answers supplied by the model's predictor.

mod common;


use rust_hdl::prelude::*;
use streamtrace_hw::pft::front::PftFrontEnd;
use streamtrace_hw::pft::{
    strip_info, JobRecord, PftHwConfig, TGT_INDIRECT_CONF, TGT_INDIRECT_TAGGED, TGT_INDIRECT_TAGGED_USEFUL,
};
use streamtrace_model::pft::predict::DirectionPredictor;
use streamtrace_model::pft::{table_jump, PftFrontEnd as ModelFrontEnd};
use streamtrace_model::{BranchClass, BufferConfig, Config, RetireEvent};

fn program_events(name: &str, max: u64) -> Vec<RetireEvent> {
    common::program_events(name, max).into_iter().map(|(e, _)| e).collect()
}

fn lcg(s: &mut u64) -> u64 {
    *s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    *s >> 33
}

/// A synthetic interpreter loop, the target coding's hard case: a dispatch jump whose
/// targets follow a repeating pattern with random departures (the tagged target table and
/// its alternate), handlers in ARM and Thumb state, near and far (the kernel helper page:
/// every offset class and the high-page field; another 2 MiB region, which the RTC cannot
/// name), calls and returns, a `pop {r3}; bx r3` return (RAS top), and now and then a jump
/// table (`addls pc, pc, r0, lsl #2`, offsets from pc + 8) in front of the handler.
fn ev(v: &mut Vec<RetireEvent>, pc: u32, insn: u32, class: BranchClass, taken: bool, next_pc: u32) {
    let thumb = pc & 1 != 0;
    v.push(RetireEvent { pc: pc & !1, insn, thumb, class, taken, next_pc, ..Default::default() });
}

fn dispatch_events(n: usize) -> Vec<RetireEvent> {
    use streamtrace_model::BranchClass::{DirectCond, DirectUncond, IndirectCond, IndirectUncond, Return};
    const NOP: u32 = 0xE1A0_0000;
    let mut v: Vec<RetireEvent> = Vec::new();
    let handler = |k: u32| match k {
        0..=9 => 0x8400 + 0x40 * k,
        10..=12 => 0xA001 + 0x20 * (k - 10),
        13 => 0x0040_0000,
        14 => 0xFFFF_0FE0,
        _ => 0x0002_0000 + 0x100 * (k - 15),
    };
    let pattern = [0, 1, 0, 2, 3, 1, 0, 4, 7, 10];
    let mut s = 11u64;
    let mut i = 0;
    while v.len() < n {
        let r = lcg(&mut s);
        let k = if r.is_multiple_of(16) { (lcg(&mut s) % 20) as u32 } else { pattern[i % pattern.len()] };
        i += 1;
        let h = handler(k);
        ev(&mut v, 0x8000, NOP, BranchClass::None, false, 0x8004);
        let skip = r % 4 == 1;
        ev(&mut v, 0x8004, 0x1A00_0000, DirectCond, skip, if skip { 0x800C } else { 0x8008 });
        if !skip {
            ev(&mut v, 0x8008, NOP, BranchClass::None, false, 0x800C);
        }
        if r % 8 == 3 {
            // A jump table of 64 cases, each a branch to the handler.
            let case = 0x8014 + 4 * (lcg(&mut s) % 64) as u32;
            ev(&mut v, 0x800C, 0x908F_F100, IndirectCond, true, case);
            ev(&mut v, case, 0xEA00_0000, DirectUncond, true, h);
        } else {
            ev(&mut v, 0x800C, 0xE791_F100, IndirectUncond, true, h);
        }
        if h & 1 != 0 {
            // Thumb: a nop, then back to the dispatcher through `bx r3`.
            ev(&mut v, h, 0x46C0, BranchClass::None, false, h + 2);
            ev(&mut v, h + 2, 0x4718, IndirectUncond, true, 0x8000);
            continue;
        }
        ev(&mut v, h, NOP, BranchClass::None, false, h + 4);
        match k % 4 {
            0 => {
                // A call and its return.
                ev(&mut v, h + 4, 0xEB00_0000, DirectUncond, true, 0xC000);
                ev(&mut v, 0xC000, NOP, BranchClass::None, false, 0xC004);
                ev(&mut v, 0xC004, 0xE12F_FF1E, Return, true, h + 8);
            }
            1 => {
                // A call returning through `pop {r3}; bx r3`: the RAS top as a missed target.
                ev(&mut v, h + 4, 0xEB00_0000, DirectUncond, true, 0xD000);
                ev(&mut v, 0xD000, 0xE49D_3004, BranchClass::None, false, 0xD004);
                ev(&mut v, 0xD004, 0xE12F_FF13, IndirectUncond, true, h + 8);
            }
            2 => {
                // A conditional indirect jump between two targets.
                let t = lcg(&mut s) % 3;
                let to = [h + 8, 0x9000, 0x9101][t as usize];
                ev(&mut v, h + 4, 0x1592_F000, IndirectCond, t != 0, if t == 0 { h + 8 } else { to });
                if t != 0 {
                    ev(&mut v, to & !1, NOP, BranchClass::None, false, (to & !1) + 4);
                    ev(&mut v, (to & !1) + 4, 0xEA00_0000, DirectUncond, true, h + 8);
                }
            }
            _ => {
                // A call returning through `ldr pc, [sp], #8` (libgcc's soft-float
                // comparisons): a return for pft (11.2), unconditional or `ldrne`, taken or not.
                ev(&mut v, h + 4, 0xEB00_0000, DirectUncond, true, 0xE000);
                match lcg(&mut s) % 4 {
                    0 => {
                        ev(&mut v, 0xE000, 0x149D_F008, IndirectCond, false, 0xE004);
                        ev(&mut v, 0xE004, 0xE49D_F008, IndirectUncond, true, h + 8);
                    }
                    1 => ev(&mut v, 0xE000, 0x149D_F008, IndirectCond, true, h + 8),
                    _ => ev(&mut v, 0xE000, 0xE49D_F008, IndirectUncond, true, h + 8),
                }
            }
        }
        ev(&mut v, h + 8, 0xEA00_0000, DirectUncond, true, 0x8000);
    }
    v
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

/// What the compared jobs contained: jobs, tagged-table predictions, ALT bits, offsets.
#[derive(Debug, Default)]
struct Seen {
    jobs: u64,
    /// Direct calls' history bits.
    calls: u64,
    tagged: u64,
    /// Target points in the contexts of a confident base or useful tagged entry.
    confident: u64,
    alts: u64,
    rtc_hits: u64,
    offsets: u64,
    /// Offsets of a jump table, and class-7 offsets into the high page.
    tables: u64,
    high: u64,
}

/// Drive `events` through the RTL front end and the model's; `clear_every`: an OVERFLOW
/// restart (gap 0, a start expected, the state kept) after roughly one instruction in that many; `exception_every`: mark an
/// instruction as excepting (its vector is its real successor) about that often; `hold_every`:
/// present an instruction held for a cycle first (a stall).
fn compare(cfg: &str, events: &[RetireEvent], clear_every: u64, exception_every: u64, hold_every: u64) -> Seen {
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
    let mut seen = Seen::default();
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
            uut.restart.next = false;
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
                assert!(!uut.dir_update.val() && !uut.dir_push.val(), "event {i}: a held instruction updates the predictor");
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
                seen.jobs += 1;
                let sel = if rec.tgt { Some(rec.tgt_sel) } else { None };
                seen.tagged += matches!(sel, Some(TGT_INDIRECT_TAGGED | TGT_INDIRECT_TAGGED_USEFUL)) as u64;
                seen.confident += matches!(sel, Some(TGT_INDIRECT_CONF | TGT_INDIRECT_TAGGED_USEFUL)) as u64;
                seen.alts += rec.alt as u64;
                seen.rtc_hits += rec.rtc_hit as u64;
                seen.offsets += rec.off as u64;
                seen.tables += (rec.off && table_jump(ev.insn, ev.thumb)) as u64;
                seen.high += rec.off_high as u64;
            }
            if uut.dir_update.val() {
                dir.update(ev.taken);
            } else if uut.dir_push.val() {
                // A direct call's history bit (11.3): the front end names it in `dir_taken`.
                dir.push_history(uut.dir_taken.val());
                seen.calls += 1;
            }
            let clear = clear_every > 0 && lcg(&mut s).is_multiple_of(clear_every);
            if clear {
                uut.restart.next = true;
                settle(&mut uut);
                model.overflow_pushed();
            }
            if uut.dir_clear.val() {
                dir.reset();
            }
            clock(&mut uut);
        }
    }
    seen
}

#[test]
fn front_end_jobs_equal_the_models_on_program_traces() {
    let qsort = program_events("qsort_structs", 25_000);
    let thumb = program_events("sha256_thumb", 25_000);
    let dijkstra = program_events("dijkstra", 25_000);
    let dispatch = dispatch_events(25_000);
    let mut all = Seen::default();
    for (cfg, ev, clear, exc, hold) in [
        ("pft", &qsort, 0, 0, 0),
        ("pft", &thumb, 0, 0, 0),
        ("pft", &dijkstra, 3000, 500, 7),
        ("pft,sync=2000", &thumb, 0, 300, 0),
        ("pft,ras=0,itp=0,itt=0,rtc=0,hlen=none", &dijkstra, 0, 0, 0),
        ("pft,rtc=1,u=20,itp=4,itt=2,ttag=4,ras=2", &qsort, 5000, 0, 0),
        ("pft,rtc=16,ras=64", &dijkstra, 0, 0, 3),
        // A RAS depth that is not a power of two (its table RAM has addresses without a word).
        ("pft,ras=5", &dijkstra, 0, 0, 0),
        // One table of the two: the tagged table alone (its alternate is 0), the base alone.
        ("pft", &dispatch, 0, 0, 0),
        ("pft,sync=3000", &dispatch, 4000, 600, 5),
        ("pft,rtc=1,u=20,itp=4,itt=2,ttag=4,ras=2", &dispatch, 0, 0, 0),
        ("pft,itp=0,itt=64,ttag=15,rtc=0", &dispatch, 0, 0, 0),
        ("pft,itt=0,rtc=2", &dispatch, 0, 0, 0),
        ("pft,itp=0,itt=0,ras=0", &dispatch, 0, 0, 0),
    ] {
        let seen = compare(cfg, ev, clear, exc, hold);
        eprintln!("{cfg}: {seen:?}");
        assert!(seen.jobs > 1000, "{cfg}: only {} jobs compared", seen.jobs);
        if cfg.contains("itt=0") {
            assert_eq!(seen.tagged, 0, "{cfg}: no tagged target table");
        }
        all.jobs += seen.jobs;
        all.tagged += seen.tagged;
        all.confident += seen.confident;
        all.alts += seen.alts;
        all.rtc_hits += seen.rtc_hits;
        all.offsets += seen.offsets;
        all.tables += seen.tables;
        all.high += seen.high;
        all.calls += seen.calls;
    }
    assert!(all.tagged > 100 && all.alts > 10 && all.offsets > 100, "the traces exercise the target coding: {all:?}");
    assert!(
        all.confident > 100 && all.rtc_hits > 100 && all.tables > 50 && all.high > 10,
        "the traces exercise the confidence and useful bits, the RTC, jump tables and the high page: {all:?}"
    );
    assert!(all.calls > 2000, "the traces exercise the calls' history bits: {all:?}");
}

#[test]
fn front_end_under_isa_arm() {
    let ev = program_events("qsort_structs", 20_000);
    assert!(compare("pft,isa=arm", &ev, 0, 400, 0).jobs > 1000);
}

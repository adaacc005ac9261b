//! pft's direction predictor block (hw/src/pft/tage.rs) against the model's
//! `DirectionPredictor`, every cycle: `pred` and `ctx` must equal `predict(iw_addr)`, then
//! both apply the same update (or reset, for `clear`). Stimulus: synthetic branch streams
//! (loops, periodic, biased and random branches over a few hundred ARM and Thumb addresses,
//! idle cycles, occasional clears) and the direction points of real test programs run on
//! the core model. The same vectors are replayed in Verilator on the exported Verilog
//! (testbenches/cosim/pft_tage_harness.cpp), which must also catch a corrupted expectation.
//! The Verilator tests need Verilator on PATH (they fail with the install command without it).

mod common;

use common::Rng;

use std::path::{Path, PathBuf};

use rust_hdl::prelude::*;
use streamtrace_hw::pft::tage::{export_verilog, module_name, DirectionPredictorBlock};
use streamtrace_hw::pft::PftHwConfig;
use streamtrace_hw::cosim::{run_replay, verilate};
use streamtrace_hw::tools::verilator_lint;
use streamtrace_model::pft::predict::DirectionPredictor;
use streamtrace_model::pft::InsnFlow;
use streamtrace_model::{BufferConfig, Config};

const CONFIGS: &[&str] = &[
    "pft",
    "pft,hlen=none",
    "pft,bim=64,tsize=16,tag=6,hlen=4-16",
    "pft,tsize=256,tag=9,hlen=2-4-8-16-32-64",
    "pft,hlen=1-64",
];

/// Edge geometries beyond the list above: eight tables with the widest tag (19-bit entries,
/// contexts up to 33), and the smallest tables (1-bit index folds, 4-bit tags).
const EDGE_CONFIGS: &[&str] = &["pft,bim=1024,tsize=128,tag=15,hlen=1-2-3-5-8-13-21-64", "pft,bim=2,tsize=2,tag=4,hlen=5-63"];

/// Synthetic cycles per configuration.
const RANDOM_STEPS: usize = 100_000;

fn hw(cfg: &str) -> PftHwConfig {
    let c: Config = cfg.parse().unwrap();
    PftHwConfig::new(&c, &BufferConfig::default()).unwrap()
}

/// One cycle's inputs.
#[derive(Clone, Copy, Debug, Default)]
struct Step {
    clear: bool,
    update: bool,
    /// A call's history bit (`taken`), 11.3: never with `update`.
    push: bool,
    taken: bool,
    addr: u32,
}

#[derive(Clone, Copy)]
enum Behavior {
    /// Taken `pattern >> (n mod period) & 1`.
    Periodic { pattern: u64, period: u32 },
    Biased { per_mille: u64 },
    Random,
    /// The XOR of the last two outcomes (global correlation).
    Correlated,
}

struct Site {
    addr: u32,
    behavior: Behavior,
    count: u32,
}

/// Loops over groups of sites (the last site is the back-edge, taken until the trip count),
/// other sites periodic, biased, random or correlated; random noise branches, idle cycles
/// (no update) and a clear about every `clear_every` cycles (its update, if any, is dropped).
/// Every other phase of 2,500 cycles is quiet: no noise branches, and the biased and random
/// sites follow fixed patterns, so long histories repeat and the long tables provide.
fn synthetic(seed: u64, n: usize, clear_every: u64) -> Vec<Step> {
    let mut r = Rng(seed | 1);
    let mut sites: Vec<Site> = (0..320)
        .map(|k| {
            let addr = if k % 2 == 0 {
                0x8000 + 4 * r.below(0x4000) as u32
            } else {
                (0x2_0000 + 2 * r.below(0x8000) as u32) | 1
            };
            let behavior = match r.below(10) {
                0..=3 => Behavior::Periodic { pattern: r.next(), period: 1 + r.below(24) as u32 },
                4..=6 => Behavior::Biased { per_mille: [20, 100, 900, 980][r.below(4) as usize] },
                7 | 8 => Behavior::Correlated,
                _ => Behavior::Random,
            };
            Site { addr, behavior, count: 0 }
        })
        .collect();
    let loops: Vec<Vec<usize>> =
        (0..48).map(|_| (0..2 + r.below(5)).map(|_| r.below(sites.len() as u64) as usize).collect()).collect();
    let trips: Vec<u32> = (0..loops.len()).map(|_| 1 + r.below(40) as u32).collect();
    let (mut cur, mut pos, mut iter) = (0usize, 0usize, 0u32);
    let mut trip = trips[0];
    let mut last = [false; 2];
    let mut steps = Vec::with_capacity(n);
    while steps.len() < n {
        let quiet = (steps.len() / 2500) % 2 == 1;
        let mut s = Step { update: true, ..Default::default() };
        if r.chance(40) {
            // Idle cycle: a prediction nobody uses; some are a call's history bit (the last
            // outcome again, so the longest histories still repeat).
            s.update = false;
            s.addr = r.next() as u32;
            s.taken = r.chance(500);
            if r.chance(200) {
                s.push = true;
                s.taken = last[0];
            }
        } else if !quiet && r.chance(80) {
            let site = &sites[r.below(sites.len() as u64) as usize];
            s.addr = site.addr;
            s.taken = r.chance(500);
        } else {
            let body = &loops[cur];
            if pos + 1 == body.len() {
                s.addr = sites[body[pos]].addr;
                iter += 1;
                s.taken = iter < trip;
                pos = 0;
                if !s.taken {
                    iter = 0;
                    cur = r.below(loops.len() as u64) as usize;
                    // Some loops have a data-dependent trip count.
                    trip = if r.chance(200) { 1 + r.below(40) as u32 } else { trips[cur] };
                }
            } else {
                let site = &mut sites[body[pos]];
                s.addr = site.addr;
                s.taken = match site.behavior {
                    Behavior::Periodic { pattern, period } => (pattern >> (site.count % period)) & 1 != 0,
                    Behavior::Biased { .. } | Behavior::Random if quiet => (site.addr >> (site.count % 7)) & 1 != 0,
                    Behavior::Biased { per_mille } => r.chance(per_mille),
                    Behavior::Random => r.chance(500),
                    Behavior::Correlated => last[0] ^ last[1],
                };
                site.count += 1;
                pos += 1;
            }
        }
        if s.update {
            last = [s.taken, last[0]];
        }
        if clear_every > 0 && r.below(clear_every) == 0 {
            s.clear = true;
        }
        steps.push(s);
    }
    steps
}

/// Direction points (interworking address, taken) of a manifest program on the core
/// model, at most `max` instructions; exception instructions are not evaluated.
fn program_branches(name: &str, max: u64) -> Vec<Step> {
    common::program_events(name, max)
        .into_iter()
        .filter_map(|(ev, _)| {
            let flow = InsnFlow::of(ev.class, ev.insn, ev.thumb);
            if ev.exception {
                None
            } else if flow.direction {
                Some(Step { update: true, taken: ev.taken, addr: ev.iw_addr(), ..Default::default() })
            } else if flow.link && !flow.is_slot() {
                // A direct call: its target's bit 2 into the history.
                Some(Step { push: true, taken: ev.next_pc & 4 != 0, addr: ev.iw_addr(), ..Default::default() })
            } else {
                None
            }
        })
        .collect()
}

/// The model's (pred, ctx) for every cycle.
fn model_run(h: &PftHwConfig, steps: &[Step]) -> Vec<(bool, u8)> {
    let mut m = DirectionPredictor::new(&h.params);
    steps
        .iter()
        .map(|s| {
            let (pred, ctx) = m.predict(s.addr);
            if s.clear {
                m.reset();
            } else if s.update {
                m.update(s.taken);
            } else if s.push {
                m.push_history(s.taken);
            }
            (pred, ctx as u8)
        })
        .collect()
}

/// What a stimulus exercised, from the model's side.
#[derive(Debug, Default)]
struct Coverage {
    branches: usize,
    mispredicted: usize,
    clears: usize,
    /// History bits of calls.
    calls: usize,
    /// Cycles whose provider was table i (the model's lookup).
    provider: [usize; 8],
}

fn coverage(h: &PftHwConfig, steps: &[Step], exp: &[(bool, u8)]) -> Coverage {
    let mut c = Coverage::default();
    let mut m = DirectionPredictor::new(&h.params);
    for (s, &(pred, _)) in steps.iter().zip(exp) {
        m.predict(s.addr);
        if let Some(p) = m.provider() {
            c.provider[p] += 1;
        }
        if s.clear {
            m.reset();
        } else if s.update {
            m.update(s.taken);
        } else if s.push {
            m.push_history(s.taken);
        }
        if s.clear {
            c.clears += 1;
        } else if s.update {
            c.branches += 1;
            c.mispredicted += (pred != s.taken) as usize;
        } else if s.push {
            c.calls += 1;
        }
    }
    c
}

macro_rules! settle {
    ($uut:expr) => {
        assert!(simulate(&mut $uut, 500), "design did not settle")
    };
}

/// Drive the RustHDL block through `steps`: one reset cycle, then per cycle apply the
/// inputs, compare with `exp`, clock. Returns the cycles compared.
fn drive(h: &PftHwConfig, steps: &[Step], exp: &[(bool, u8)]) -> Result<usize, String> {
    let mut uut = DirectionPredictorBlock::new(h);
    uut.connect_all();
    check_all(&uut).map_err(|e| format!("{e:?}"))?;
    let tick = |uut: &mut DirectionPredictorBlock| {
        uut.clock.next = Clock::from(true);
        settle!(*uut);
        uut.clock.next = Clock::from(false);
        settle!(*uut);
    };
    uut.reset.next = true;
    settle!(uut);
    tick(&mut uut);
    uut.reset.next = false;
    for (k, (s, &(pred, ctx))) in steps.iter().zip(exp).enumerate() {
        uut.clear.next = s.clear;
        uut.update.next = s.update;
        uut.push.next = s.push;
        uut.taken.next = s.taken;
        uut.iw_addr.next = (s.addr as u64).into();
        settle!(uut);
        let (got_pred, got_ctx) = (uut.pred.val(), uut.ctx.val().to_u32() as u8);
        if got_pred != pred || got_ctx != ctx {
            return Err(format!(
                "cycle {k} ({s:?}): RTL pred {} ctx {got_ctx}, model pred {} ctx {ctx}",
                got_pred as u8, pred as u8
            ));
        }
        tick(&mut uut);
    }
    Ok(steps.len())
}

fn check_config(cfg: &str, steps: &[Step], what: &str) -> Coverage {
    let h = hw(cfg);
    let exp = model_run(&h, steps);
    let cov = coverage(&h, steps, &exp);
    let t = std::time::Instant::now();
    let n = drive(&h, steps, &exp).unwrap_or_else(|e| panic!("{cfg} ({what}): {e}"));
    eprintln!("{cfg} ({what}): {n} cycles agree in {:.1} s; {cov:?}", t.elapsed().as_secs_f64());
    cov
}

#[test]
fn tage_matches_the_model_on_synthetic_streams() {
    for (k, cfg) in CONFIGS.iter().chain(EDGE_CONFIGS).enumerate() {
        // The edge geometries get twice the cycles: with eight tables the longest history
        // repeats rarely enough that 100,000 cycles left it under 20 predictions.
        let n = if k >= CONFIGS.len() { 2 * RANDOM_STEPS } else { RANDOM_STEPS };
        let steps = synthetic(0x7A6E + k as u64, n, 5000);
        let cov = check_config(cfg, &steps, "synthetic");
        let h = hw(cfg);
        assert!(cov.branches > 90_000 && cov.clears >= 10 && cov.calls > 500, "{cfg}: {cov:?}");
        assert!(cov.mispredicted > 1000, "{cfg}: {cov:?}");
        // Every tagged table provides predictions.
        for i in 0..h.tables {
            assert!(cov.provider[i] >= 20, "{cfg}: table {i} rarely provides: {cov:?}");
        }
    }
}

/// The same for the direction points of real programs: ARM (bitcount, dijkstra) and Thumb
/// (sha256_thumb), one stream per configuration.
fn program_stream() -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    for (name, max) in [("bitcount", 150_000), ("dijkstra", 150_000), ("sha256_thumb", 150_000)] {
        let s = program_branches(name, max);
        assert!(s.len() > 5_000, "{name}: {} direction points", s.len());
        // Each program starts from the reset state.
        if let Some(last) = steps.last_mut() {
            last.clear = true;
        }
        steps.extend(s);
    }
    steps
}

#[test]
fn tage_matches_the_model_on_program_branches() {
    let steps = program_stream();
    assert!(steps.iter().any(|s| s.addr & 1 != 0) && steps.iter().any(|s| s.addr & 1 == 0));
    for cfg in CONFIGS {
        let cov = check_config(cfg, &steps, "programs");
        assert!(cov.branches > 20_000 && cov.calls > 500, "{cfg}: {cov:?}");
    }
}

fn dir(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("pft-tage").join(name)
}

const HARNESS: &str = include_str!("../../testbenches/cosim/pft_tage_harness.cpp");

/// Export, lint (must be clean) and build the Verilated bench for `cfg` in `d`.
fn build_bench(cfg: &str, d: &Path) -> PathBuf {
    let h = hw(cfg);
    let name = module_name(&h);
    // The lint copy lives apart from the bench's Verilog: `verilate` reuses its build when
    // `d/{name}.v` already holds this Verilog, so writing it there first kept a stale bench.
    let lint_dir = d.join("lint");
    std::fs::create_dir_all(&lint_dir).unwrap();
    let v = lint_dir.join(format!("{name}.v"));
    let verilog = export_verilog(&h).unwrap();
    std::fs::write(&v, &verilog).unwrap();
    let lint = verilator_lint(&v, &name).unwrap();
    assert!(lint.is_empty(), "{cfg}: Verilator lint:\n{}", lint.join("\n"));
    verilate(d, &name, &verilog, HARNESS, "bench", &[]).unwrap_or_else(|e| panic!("{cfg}: {e}"))
}

fn vectors(steps: &[Step], exp: &[(bool, u8)]) -> String {
    let mut s = String::from("# clear update push taken iw_addr pred ctx\n");
    for (x, &(pred, ctx)) in steps.iter().zip(exp) {
        s.push_str(&format!(
            "{} {} {} {} {:08x} {} {}\n",
            x.clear as u8, x.update as u8, x.push as u8, x.taken as u8, x.addr, pred as u8, ctx
        ));
    }
    s
}

/// Run the bench on vectors: Ok(the OK line) or Err(the mismatch line).
fn replay(exe: &Path, file: &Path) -> Result<String, String> {
    run_replay(exe, &[file]).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn tage_verilog_is_lint_clean_and_agrees_in_verilator() {
    let programs = program_stream();
    for (k, cfg) in CONFIGS.iter().chain(EDGE_CONFIGS).enumerate() {
        let h = hw(cfg);
        let d = dir(&module_name(&h));
        let exe = build_bench(cfg, &d);
        let mut steps = synthetic(0x7A6E + k as u64, RANDOM_STEPS, 5000);
        // The program stream after a clear.
        steps.last_mut().unwrap().clear = true;
        steps.extend_from_slice(&programs);
        let exp = model_run(&h, &steps);
        let file = d.join("vectors.txt");
        std::fs::write(&file, vectors(&steps, &exp)).unwrap();
        let ok = replay(&exe, &file).unwrap_or_else(|m| panic!("{cfg}: {m}"));
        assert!(ok.contains(&format!("rows={} ", steps.len())), "{cfg}: {ok}");
        eprintln!("{cfg}: Verilator {ok}");
        if k == 0 {
            // A corrupted expectation must be caught at its row: a flipped prediction, and a
            // context off by one (deep in the program stream, after many updates).
            for (row, flip) in [(12_345usize, true), (steps.len() - 777, false)] {
                let mut bad = exp.clone();
                if flip {
                    bad[row].0 = !bad[row].0;
                } else {
                    bad[row].1 ^= 1;
                }
                let f = d.join("vectors_bad.txt");
                std::fs::write(&f, vectors(&steps, &bad)).unwrap();
                let m = replay(&exe, &f).expect_err("a corrupted expectation passed");
                assert!(m.starts_with(&format!("MISMATCH row={row} ")), "{m}");
                eprintln!("{cfg}: corrupted row {row} caught: {m}");
            }
        }
    }
}

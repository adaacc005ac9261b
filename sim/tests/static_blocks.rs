//! Static blocks (issue 19: a block's timing computed once) against the per-instruction
//! timing model: on every test program and the self-modifying program, a timed run whose
//! hook takes plain runs (so that the run loop times static blocks whole) must report every
//! instruction with the retire cycle, and end with the timing report, of the same run timed
//! one instruction at a time. Budgets of several sizes cut blocks short; a hook that
//! ignores everything (`NoHook`) runs blocks without any budget; configurations with small
//! caches, slow memory, write-through, other latencies and the caches off make blocks
//! leave early.

use std::path::{Path, PathBuf};

use streamtrace_isa::ElfImage;
use streamtrace_model::{PlainRun, RetireEvent};
use streamtrace_sim::sweep::{programs_from_manifest, ProgramSpec};
use streamtrace_sim::{Machine, MemAccess, NoHook, RetireHook, TimingConfig, TimingReport};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn programs() -> Vec<ProgramSpec> {
    let mut p = programs_from_manifest(&root().join("testbenches/programs/programs.json")).unwrap();
    let data = root().join("sim/tests/data");
    p.push(ProgramSpec::new("self_modifying", data.join("self_modifying.elf"), "self_modifying.elf", data));
    p
}

fn machine(p: &ProgramSpec, elf: &ElfImage, cfg: &TimingConfig, blocks: bool) -> Machine {
    let mut m = p.machine_for(elf).unwrap();
    m.enable_timing(cfg.clone()).unwrap();
    m.timing_mut().unwrap().set_static_blocks(blocks);
    m
}

/// What a hook was told about one instruction: its address and state, and its retire
/// cycle where it was told (a run tells only its first and last).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Seen {
    iw: u32,
    cycle: Option<u64>,
}

/// Takes plain runs of at most the budgets of `pattern` in turn.
struct RunHook {
    pattern: &'static [u32],
    turn: usize,
    seen: Vec<Seen>,
}

impl RetireHook for RunHook {
    fn retire(&mut self, ev: &RetireEvent, _: &[MemAccess]) {
        self.seen.push(Seen { iw: ev.iw_addr(), cycle: Some(ev.cycle) });
        self.turn += 1;
    }

    fn plain_budget(&self) -> u32 {
        self.pattern[self.turn % self.pattern.len()]
    }

    fn retire_plain(&mut self, run: &PlainRun) {
        assert!(run.count <= self.plain_budget(), "a run longer than offered");
        let size = if run.thumb { 2 } else { 4 };
        for i in 0..run.count {
            let cycle = if i == 0 {
                Some(run.first_cycle)
            } else if i + 1 == run.count {
                Some(run.last_cycle)
            } else {
                None
            };
            self.seen.push(Seen { iw: (run.pc + i * size) | run.thumb as u32, cycle });
        }
        self.turn += 1;
    }
}

/// Every instruction with its cycle, timed one at a time (a hook without runs), and the report.
fn reference(p: &ProgramSpec, elf: &ElfImage, cfg: &TimingConfig) -> (Vec<RetireEvent>, TimingReport) {
    let mut m = machine(p, elf, cfg, true);
    let mut events = Vec::new();
    let mut hook = |ev: &RetireEvent, _: &[MemAccess]| events.push(*ev);
    m.run(u64::MAX, &mut hook).unwrap_or_else(|e| panic!("{}: {e}", p.name));
    assert_eq!(m.timing().unwrap().static_block_instructions(), 0, "{}: a hook without runs gets no blocks", p.name);
    (events, m.timing_report().unwrap())
}

/// Checks `p` under `cfg`; returns (instructions timed from static blocks, instructions)
/// of the run with an unlimited budget.
fn check(p: &ProgramSpec, elf: &ElfImage, cfg: &TimingConfig, what: &str) -> (u64, u64) {
    let (events, report) = reference(p, elf, cfg);
    let mut counts = (0, events.len() as u64);
    for (pattern, blocks) in [(&[u32::MAX][..], true), (&[u32::MAX][..], false), (&[3, 1, 7, 40, 2][..], true)] {
        let mut m = machine(p, elf, cfg, blocks);
        let mut hook = RunHook { pattern, turn: 0, seen: Vec::new() };
        m.run(u64::MAX, &mut hook).unwrap_or_else(|e| panic!("{}: {e}", p.name));
        let name = format!("{} ({what}, budgets {pattern:?}, blocks {blocks})", p.name);
        assert_eq!(hook.seen.len(), events.len(), "{name}: instructions");
        for (i, (s, e)) in hook.seen.iter().zip(&events).enumerate() {
            assert_eq!(s.iw, e.iw_addr(), "{name}: instruction {i}");
            if let Some(c) = s.cycle {
                assert_eq!(c, e.cycle, "{name}: the retire cycle of instruction {i} at {:#x}", e.pc);
            }
        }
        assert_eq!(m.timing_report().unwrap(), report, "{name}: the report");
        let statically = m.timing().unwrap().static_block_instructions();
        if !blocks {
            assert_eq!(statically, 0, "{name}: blocks switched off");
        } else if pattern.len() == 1 {
            counts.0 = statically;
        }
    }
    let mut m = machine(p, elf, cfg, true);
    m.run(u64::MAX, &mut NoHook).unwrap_or_else(|e| panic!("{}: {e}", p.name));
    assert_eq!(m.timing_report().unwrap(), report, "{} ({what}): the report with NoHook", p.name);
    assert_eq!(m.timing().unwrap().last_retire_cycle(), events.last().unwrap().cycle, "{} ({what}): the last retire cycle", p.name);
    counts
}

fn elf(p: &ProgramSpec) -> ElfImage {
    ElfImage::open(&p.elf).unwrap_or_else(|e| panic!("{}: {e}", p.elf.display()))
}

#[test]
fn static_blocks_time_every_program_as_one_instruction_at_a_time() {
    let (mut timed_statically, mut total) = (0, 0);
    for p in programs() {
        let (s, n) = check(&p, &elf(&p), &TimingConfig::default(), "default timing");
        (timed_statically, total) = (timed_statically + s, total + n);
    }
    eprintln!("{timed_statically} of {total} instructions timed from static blocks");
    // Most instructions of the test programs are in blocks (a test that times none checks
    // nothing).
    assert!(timed_statically * 2 > total, "{timed_statically} of {total} instructions timed from static blocks");
}

#[test]
fn static_blocks_time_other_configurations_as_one_instruction_at_a_time() {
    // Small caches, slow memory, write-through with allocation on stores, other latencies.
    let mut slow = TimingConfig::default();
    (slow.icache.size_bytes, slow.icache.ways) = (1024, 2);
    (slow.dcache.size_bytes, slow.dcache.ways, slow.dcache.write_back, slow.dcache.write_allocate) = (1024, 2, false, true);
    (slow.memory.latency, slow.memory.write_buffer_entries) = (40, 2);
    (slow.core.shift_operand_extra, slow.core.alu_result, slow.core.load_result, slow.core.ldm_result_base) = (0, 2, 4, 3);
    slow.core.retire_offset_mem = 5;
    let mut off = TimingConfig::default();
    (off.icache.enabled, off.dcache.enabled) = (false, false);
    let mut timed_statically = 0;
    for p in programs().iter().filter(|p| ["bitcount", "sha256_thumb", "qsort_structs", "fft", "self_modifying"].contains(&p.name.as_str())) {
        let elf = elf(p);
        timed_statically += check(p, &elf, &slow, "small caches, slow memory").0;
        check(p, &elf, &off, "caches off");
    }
    assert!(timed_statically > 0, "no static blocks with small caches");
}

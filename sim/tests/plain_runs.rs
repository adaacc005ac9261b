//! `Machine::run` with a hook that takes plain instructions in runs
//! (`RetireHook::plain_budget`): the hook must see every instruction once, in order, with
//! the same addresses, states and retire cycles as a hook called for each, never more in a
//! run than it offered, and every run before the next single event and before `run`
//! returns (through semihosting calls, state changes, exceptions, self-modifying code and
//! the instruction limit).

use std::path::{Path, PathBuf};

use streamtrace_isa::ElfImage;
use streamtrace_model::pft::ARM_MOV_LR_PC;
use streamtrace_model::{BranchClass, PlainRun, RetireEvent};
use streamtrace_sim::semihost::SharedBuffer;
use streamtrace_sim::{Machine, MemAccess, RetireHook, Semihost, SimError, TimingConfig};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// (ELF, command line): ARM and Thumb test programs, and the self-modifying Linux program.
fn programs() -> [(PathBuf, &'static str); 4] {
    let bin = root().join("testbenches/programs/bin");
    [
        (bin.join("bitcount.elf"), "bin/bitcount.elf 1500"),
        (bin.join("sha256_thumb.elf"), "bin/sha256_thumb.elf 96"),
        (bin.join("qsort_structs.elf"), "bin/qsort_structs.elf 6000"),
        (root().join("sim/tests/data/self_modifying.elf"), "self_modifying.elf"),
    ]
}

fn machine(elf: &Path, cmdline: &str, timed: bool) -> Machine {
    let image = ElfImage::open(elf).unwrap_or_else(|e| panic!("{}: {e}", elf.display()));
    let sh = Semihost::new()
        .with_cmdline(cmdline)
        .with_workdir(root().join("testbenches/programs"))
        .with_stdin(std::io::empty())
        .with_stdout(SharedBuffer::new())
        .with_stderr(SharedBuffer::new());
    let mut m = Machine::load(&image, sh).unwrap();
    if timed {
        m.enable_timing(TimingConfig::default()).unwrap();
    }
    m
}

/// One instruction as a hook saw it: interworking address, class, taken, and the retire
/// cycle where the hook was told it (a run tells only its first and last).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Seen {
    iw: u32,
    class: BranchClass,
    taken: bool,
    cycle: Option<u64>,
    /// The instruction word where the hook was told it (not in runs).
    insn: Option<u32>,
}

impl Seen {
    fn of(ev: &RetireEvent) -> Seen {
        Seen { iw: ev.iw_addr(), class: ev.class, taken: ev.taken, cycle: Some(ev.cycle), insn: Some(ev.insn) }
    }
}

/// Offers the budgets of `pattern` in turn and records what it is told.
struct RunHook {
    pattern: &'static [u32],
    turn: usize,
    offered: u32,
    seen: Vec<Seen>,
    runs: usize,
    longest: u32,
}

impl RetireHook for RunHook {
    fn retire(&mut self, ev: &RetireEvent, _: &[MemAccess]) {
        self.seen.push(Seen::of(ev));
        self.turn += 1;
        self.offered = self.pattern[self.turn % self.pattern.len()];
    }

    fn plain_budget(&self) -> u32 {
        self.offered
    }

    fn retire_plain(&mut self, run: &PlainRun) {
        assert!(run.count >= 1 && run.count <= self.offered, "a run of {} after an offer of {}", run.count, self.offered);
        assert!(run.last_cycle >= run.first_cycle + (run.count as u64 - 1) || run.last_cycle == 0, "{run:?}");
        let size = if run.thumb { 2 } else { 4 };
        for i in 0..run.count {
            let cycle = if i == 0 {
                Some(run.first_cycle)
            } else if i == run.count - 1 {
                Some(run.last_cycle)
            } else {
                None
            };
            self.seen.push(Seen { iw: (run.pc | run.thumb as u32) + i * size, class: BranchClass::None, taken: false, cycle, insn: None });
        }
        assert_eq!(self.seen.last().unwrap().iw + size, run.next_iw());
        // No offer until the next single event.
        self.offered = 0;
        self.runs += 1;
        self.longest = self.longest.max(run.count);
    }
}

fn outcome(r: Result<i32, SimError>) -> String {
    match r {
        Ok(code) => format!("exit {code}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn runs_of_plain_instructions_are_the_instructions_one_by_one() {
    // (An offer of 0 now and then; of 1, the shortest run; and larger than any stream.)
    const PATTERN: &[u32] = &[5, 0, 1, 254, 3, 100_000, 2];
    const LIMIT: u64 = 1_500_000;
    let mut total_links = 0;
    for (elf, cmdline) in programs() {
        for timed in [false, true] {
            let name = format!("{} ({})", elf.display(), if timed { "timed" } else { "functional" });
            let mut single = Vec::new();
            let mut m = machine(&elf, cmdline, timed);
            let end_single = outcome(m.run(LIMIT, &mut |ev: &RetireEvent, _: &[MemAccess]| single.push(Seen::of(ev))));
            let retired_single = m.retired;

            let mut hook = RunHook { pattern: PATTERN, turn: 0, offered: PATTERN[0], seen: Vec::new(), runs: 0, longest: 0 };
            let mut m = machine(&elf, cmdline, timed);
            let end_runs = outcome(m.run(LIMIT, &mut hook));
            assert_eq!(end_runs, end_single, "{name}");
            assert_eq!(m.retired, retired_single, "{name}");
            assert_eq!(hook.seen.len(), single.len(), "{name}: instructions reported");
            let mut links = 0;
            for (i, (a, b)) in hook.seen.iter().zip(&single).enumerate() {
                let same = a.iw == b.iw
                    && a.class == b.class
                    && a.taken == b.taken
                    && a.cycle.is_none_or(|c| Some(c) == b.cycle)
                    && a.insn.is_none_or(|w| Some(w) == b.insn);
                assert!(same, "{name}: instruction {i}: {a:?} in runs, {b:?} one by one");
                // ARM's `MOV lr, pc` is never in a run.
                if b.iw & 1 == 0 && b.insn == Some(ARM_MOV_LR_PC) {
                    assert_eq!(a.insn, b.insn, "{name}: instruction {i}: MOV lr, pc in a run");
                    links += 1;
                }
            }
            total_links += links;
            assert!(hook.runs >= 20 && hook.longest > 3, "{name}: {} runs, the longest {}", hook.runs, hook.longest);
        }
    }
    assert!(total_links > 0, "no MOV lr, pc ran");
}

/// A sweep's capture (which runs with plain runs) replayed in cycle mode gives what the
/// trace module fed one instruction at a time gives: timed and at one instruction per
/// cycle, at the default maximum stream length and a short one (where plain instructions
/// end streams and budgets run out), with a stop at the instruction cap.
#[test]
fn captures_replay_to_the_cycle_mode_of_single_instructions() {
    use streamtrace_model::{BufferConfig, Config, CycleTraceModule};
    use streamtrace_sim::sweep::{ensure_captures, load_capture, replay, CaptureOptions, CycleSource, ProgramSpec};
    const LIMIT: u64 = 400_000;
    let dir = std::env::temp_dir().join(format!("streamtrace-plain-runs-{}", std::process::id()));
    let buf: BufferConfig = "sdb=1,obuf=24".parse().unwrap();
    for (elf, cmdline) in programs() {
        let name = elf.file_stem().unwrap().to_string_lossy().into_owned();
        let spec = ProgramSpec::new(name, &elf, cmdline, root().join("testbenches/programs"));
        for timed in [false, true] {
            let cycles = if timed { CycleSource::Timing(Box::default()) } else { CycleSource::Ipc1 };
            let opts = CaptureOptions { dir: dir.clone(), cycles, max_insns: LIMIT, cancel: None };
            let paths = ensure_captures(&spec, &[255, 6], &opts).unwrap();
            for (path, config) in paths.iter().zip(["rsdc-32x4-128", "rsdc-32x4-128,maxsl=6"]) {
                let cfg: Config = config.parse().unwrap();
                let capture = load_capture(path).unwrap();
                let replayed = replay(&capture, &cfg, &buf);
                let mut module = CycleTraceModule::new(&cfg, &buf);
                let mut index = 0u64;
                // (The capture's machine: the sweep's semihosting, with its fixed clock.)
                let mut m = spec.machine().unwrap();
                if timed {
                    m.enable_timing(TimingConfig::default()).unwrap();
                }
                let _ = m.run(LIMIT, &mut |ev: &RetireEvent, _: &[MemAccess]| {
                    module.push_at(ev, if timed { ev.cycle } else { index }).unwrap();
                    index += 1;
                });
                let direct = module.finish();
                let name = format!("{} {config} ({})", spec.name, if timed { "timed" } else { "ipc1" });
                assert_eq!(capture.info.instructions, m.retired, "{name}");
                assert!(replayed.trace == direct.trace, "{name}: bits");
                assert_eq!(replayed.stats, direct.stats, "{name}");
                assert_eq!(replayed.cycle, direct.cycle, "{name}");
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

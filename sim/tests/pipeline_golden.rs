//! The core model's outputs, pinned (issue 19): speed work on the functional core, the
//! timing model or the trace module's cycle mode must leave every one of them unchanged.
//!
//! For every test program (whole run) and every Linux workload (its first
//! `LINUX_LIMIT` instructions, run from the fixed directory `LINUX_RUNDIR`) this runs
//! * the functional core with memory logging: the retired instruction count, the exit
//!   status and a hash of every retire event and every logged data access (its value too,
//!   except in the Linux workloads, which read the host's file metadata);
//! * the XScale-like timing model feeding the trace module's cycle mode (rsdc-32x4-128,
//!   SDB 2, 80-bit output buffer, stall policy: the run an architect makes): a hash of every
//!   retire event with its retire cycle, the timing report, the cycle-mode statistics and a
//!   hash of the trace-port bits;
//! * the same events through pft's cycle mode: its statistics and port-bit hash,
//!
//! and compares them with `data/pipeline-golden.json`, recorded by the code before the
//! speed work. `STREAMTRACE_RECORD_GOLDEN=1 cargo test -p streamtrace-sim --test
//! pipeline_golden` rewrites that file; do so only for a deliberate change of the model's
//! behaviour, and say so in the commit message.

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde_json::{json, Value};
use streamtrace_isa::ElfImage;
use streamtrace_model::{BufferConfig, Config, CycleTraceModule, RetireEvent};
use streamtrace_sim::sweep::{programs_from_manifest, ProgramSpec};
use streamtrace_sim::{CycleModuleHook, MemAccess, SimError, TimingConfig};

/// Instructions of each Linux workload (their whole runs total 1.2 G instructions).
const LINUX_LIMIT: u64 = 2_000_000;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Where the Linux workloads run: a Linux program sees its own canonical path
/// (`/proc/self/exe`, the auxiliary vector) and its working directory, and the lengths of
/// those strings change what it executes, so the manifest's files are copied to this fixed
/// directory (as scripts/linux-manifest.py runs QEMU from one) and run from there.
const LINUX_RUNDIR: &str = "/tmp/streamtrace-pipeline-golden";

/// Copy `src` (a file, or a directory recursively; symbolic links followed) to `dst`,
/// rewriting only files whose bytes differ, each through a rename so that a concurrent run
/// never reads a half-written file.
fn sync_copy(src: &Path, dst: &Path) {
    if src.is_dir() {
        std::fs::create_dir_all(dst).unwrap();
        for e in std::fs::read_dir(src).unwrap() {
            let e = e.unwrap();
            sync_copy(&e.path(), &dst.join(e.file_name()));
        }
        return;
    }
    let bytes = std::fs::read(src).unwrap_or_else(|e| panic!("{}: {e}", src.display()));
    if std::fs::read(dst).is_ok_and(|b| b == bytes) {
        return;
    }
    std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
    let tmp = dst.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, &bytes).unwrap();
    std::fs::set_permissions(&tmp, std::fs::metadata(src).unwrap().permissions()).unwrap();
    std::fs::rename(&tmp, dst).unwrap();
}

fn linux_programs() -> Vec<ProgramSpec> {
    let src = root().join("testbenches/linux");
    let dst = Path::new(LINUX_RUNDIR);
    for part in ["programs.json", "bin", "data"] {
        sync_copy(&src.join(part), &dst.join(part));
    }
    programs_from_manifest(&dst.join("programs.json")).expect("the Linux workloads (scripts/setup.sh fetches and builds them)")
}

fn golden_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/pipeline-golden.json")
}

/// FNV-1a over 64-bit words: cheap per event, and any changed field changes the hash.
#[derive(Clone, Copy)]
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    fn word(&mut self, w: u64) {
        for b in w.to_le_bytes() {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    fn event(&mut self, ev: &RetireEvent, with_cycle: bool) {
        self.word(ev.pc as u64 | (ev.insn as u64) << 32);
        self.word(ev.next_pc as u64 | (ev.thumb as u64) << 32 | (ev.taken as u64) << 33 | (ev.exception as u64) << 34);
        self.word(ev.class as u64);
        if with_cycle {
            self.word(ev.cycle);
        }
    }

    fn hex(&self) -> String {
        format!("{:016x}", self.0)
    }
}

fn bytes_hash(bytes: &[u8]) -> String {
    let mut h = Fnv::new();
    for c in bytes.chunks(8) {
        let mut w = [0u8; 8];
        w[..c.len()].copy_from_slice(c);
        h.word(u64::from_le_bytes(w));
    }
    h.word(bytes.len() as u64);
    h.hex()
}

/// A run's end: the exit status, or the instruction limit.
fn outcome(r: Result<i32, SimError>, name: &str) -> Value {
    match r {
        Ok(code) => json!({ "exit": code }),
        Err(SimError::InstructionLimit { limit, pc }) => json!({ "limit": limit, "pc": pc }),
        Err(e) => panic!("{name}: {e}"),
    }
}

/// `with_values`: the values read and written go into the hash too. Not for Linux programs:
/// their `stat` calls return the host's metadata of the input files (inode numbers, times,
/// the device), which differ between checkouts and change as the files are read; what the
/// program does with them still shows in the addresses and the retire events.
fn functional(p: &ProgramSpec, elf: &ElfImage, limit: u64, with_values: bool) -> Value {
    let mut m = p.machine_for(elf).unwrap();
    m.log_accesses = true;
    let mut h = Fnv::new();
    let mut accesses = 0u64;
    let mut hook = |ev: &RetireEvent, acc: &[MemAccess]| {
        h.event(ev, false);
        for a in acc {
            h.word(a.addr as u64 | (a.size as u64) << 32 | (a.write as u64) << 40);
            if with_values {
                h.word(a.value as u64);
            }
        }
        accesses += acc.len() as u64;
    };
    let end = outcome(m.run(limit, &mut hook), &p.name);
    json!({ "end": end, "instructions": m.retired, "accesses": accesses, "hash": h.hex() })
}

fn timed(p: &ProgramSpec, elf: &ElfImage, limit: u64) -> Value {
    let mut m = p.machine_for(elf).unwrap();
    m.enable_timing(TimingConfig::default()).unwrap();
    let buffers = BufferConfig::default();
    let rsdc: Config = "rsdc-32x4-128".parse().unwrap();
    let pft: Config = "pft".parse().unwrap();
    let mut rsdc_module = CycleTraceModule::new(&rsdc, &buffers);
    let mut pft_module = CycleTraceModule::new(&pft, &buffers);
    let mut h = Fnv::new();
    let mut hook = |ev: &RetireEvent, _: &[MemAccess]| {
        h.event(ev, true);
        rsdc_module.push(ev).expect("retire cycles increase");
        pft_module.push(ev).expect("retire cycles increase");
    };
    let end = outcome(m.run(limit, &mut hook), &p.name);
    // The same rSDC module fed by the run loop itself, plain instructions in runs
    // (`CycleModuleHook`): the same output as one event at a time.
    let mut batched = p.machine_for(elf).unwrap();
    batched.enable_timing(TimingConfig::default()).unwrap();
    let mut batched_hook = CycleModuleHook::new(CycleTraceModule::new(&rsdc, &buffers));
    assert_eq!(outcome(batched.run(limit, &mut batched_hook), &p.name), end, "{}", p.name);
    let batched_out = batched_hook.finish().unwrap_or_else(|e| panic!("{}: {e}", p.name));
    let module = |out: streamtrace_model::CycleOutput| {
        json!({
            "cycle": serde_json::to_value(&out.cycle).unwrap(),
            "bits": out.trace.bit_len,
            "port_hash": bytes_hash(&out.trace.bytes),
        })
    };
    let rsdc_out = rsdc_module.finish();
    assert!(batched_out.trace == rsdc_out.trace && batched_out.stats == rsdc_out.stats, "{}: plain runs changed the bits", p.name);
    assert_eq!(batched_out.cycle, rsdc_out.cycle, "{}: plain runs changed the cycle statistics", p.name);
    json!({
        "end": end,
        "instructions": m.retired,
        "hash": h.hex(),
        "timing": counts_only(serde_json::to_value(m.timing_report().unwrap()).unwrap()),
        "rsdc-32x4-128": module(rsdc_out),
        "pft": module(pft_module.finish()),
    })
}

/// The report without its ratios (CPI, miss rates: derived from the counts it keeps, and
/// serde_json's float parsing does not round-trip every last digit).
fn counts_only(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(m.into_iter().filter(|(_, x)| !x.is_f64()).map(|(k, x)| (k, counts_only(x))).collect()),
        v => v,
    }
}

fn record(p: &ProgramSpec, limit: u64) -> (String, Value) {
    let elf = ElfImage::open(&p.elf).unwrap_or_else(|e| panic!("{}: {e}", p.elf.display()));
    let set = if p.elf.starts_with(LINUX_RUNDIR) { "linux" } else { "programs" };
    let name = format!("{set}: {}", p.name);
    let linux = limit != u64::MAX;
    (name, json!({ "functional": functional(p, &elf, limit, !linux), "timed": timed(p, &elf, limit) }))
}

#[test]
fn functional_timed_and_traced_runs_match_the_recorded_values() {
    let mut programs: Vec<(ProgramSpec, u64)> =
        programs_from_manifest(&root().join("testbenches/programs/programs.json")).unwrap().into_iter().map(|p| (p, u64::MAX)).collect();
    programs.extend(linux_programs().into_iter().map(|p| (p, LINUX_LIMIT)));
    let runs: Vec<(String, Value)> = programs.par_iter().map(|(p, limit)| record(p, *limit)).collect();
    let got = Value::Object(runs.into_iter().collect());
    if std::env::var_os("STREAMTRACE_RECORD_GOLDEN").is_some() {
        std::fs::write(golden_path(), serde_json::to_string_pretty(&got).unwrap() + "\n").unwrap();
        return;
    }
    let want: Value = serde_json::from_str(&std::fs::read_to_string(golden_path()).unwrap()).unwrap();
    let (got, want) = (got.as_object().unwrap(), want.as_object().unwrap());
    let mut diffs = Vec::new();
    for (name, w) in want {
        match got.get(name) {
            None => diffs.push(format!("{name}: not run")),
            Some(g) if g != w => diffs.push(format!("{name}:\n  recorded {w}\n  now      {g}")),
            _ => {}
        }
    }
    for name in got.keys().filter(|n| !want.contains_key(*n)) {
        diffs.push(format!("{name}: run but not recorded"));
    }
    assert!(diffs.is_empty(), "{} of {} runs differ from data/pipeline-golden.json:\n{}", diffs.len(), want.len(), diffs.join("\n"));
}

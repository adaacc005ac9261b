//! CITCAT end to end (docs/citcat.md 7): every system-mode program is recorded, IMS and AES
//! are extracted from the CAT bytes alone, the replay without devices regenerates the
//! instruction trace (V1) and the CAT (V2) and consumes every event (V3). Then each kind of
//! damage to the AES or IMS must make the replay fail, and say where.

use std::path::PathBuf;

use streamtrace_isa::ElfImage;
use streamtrace_stages::citcat::extract::extract;
use streamtrace_stages::citcat::format::{self, Aes, Cat, Ims, NoTrace, TraceEntry};
use streamtrace_stages::citcat::record::{record, RecordOptions, RecordStats};
use streamtrace_stages::citcat::replay::replay;
use streamtrace_stages::citcat::verify::{compare_cats, compare_traces};
use streamtrace_stages::citcat::CitcatError;
use streamtrace_sim::system::SystemConfig;
use streamtrace_sim::{TimingConfig, DUMP_REGISTERS};

const PROGRAMS: [&str; 3] = ["sys_timer", "sys_io", "sys_io_thumb"];
const LIMIT: u64 = 20_000_000;

fn elf(name: &str) -> ElfImage {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testbenches/programs/system/bin").join(format!("{name}.elf"));
    ElfImage::open(p).unwrap()
}

/// A recording with its ground-truth instruction trace.
struct Recorded {
    cat: Cat,
    trace: Vec<TraceEntry>,
    stats: RecordStats,
    s0_registers: [u64; DUMP_REGISTERS],
}

/// A replay with its instruction trace.
struct Replayed {
    cat: Cat,
    trace: Vec<TraceEntry>,
    instructions: u64,
}

fn run_replay(ims: &Ims, aes: &Aes, timing: &TimingConfig, limit: u64) -> Result<Replayed, CitcatError> {
    let mut trace = Vec::new();
    let out = replay(ims, aes, timing, limit, &mut trace)?;
    Ok(Replayed { cat: out.cat, trace, instructions: out.instructions })
}

fn recorded(name: &str, seed: u64) -> (Recorded, Ims, Aes) {
    recorded_with(name, seed, TimingConfig::default())
}

fn recorded_with(name: &str, seed: u64, timing: TimingConfig) -> (Recorded, Ims, Aes) {
    let opts = RecordOptions { system: SystemConfig { seed, ..SystemConfig::default() }, timing, ..RecordOptions::default() };
    let mut trace = Vec::new();
    let r = record(&elf(name), &opts, &mut trace, |_| {}).unwrap();
    let rec = Recorded { cat: r.cat, trace, stats: r.stats, s0_registers: r.s0_registers };
    assert_eq!(rec.stats.exit_code, Some(0), "{name}: {}", rec.stats.uart_output);
    // Extraction works on the file bytes, as the CLI does.
    let cat = Cat::from_bytes(&rec.cat.to_bytes()).unwrap();
    assert_eq!(cat, rec.cat);
    let (ims, aes) = extract(&cat).unwrap();
    let ims = Ims::from_bytes(&ims.to_bytes()).unwrap();
    let aes = Aes::from_bytes(&aes.to_bytes()).unwrap();
    (rec, ims, aes)
}

#[test]
fn every_program_replays_exactly() {
    for name in PROGRAMS {
        for seed in 1..=6 {
            let (rec, ims, aes) = recorded(name, seed);
            assert!(rec.stats.irqs >= 20, "{name}: only {} interrupts", rec.stats.irqs);
            // The monitor's caches follow the timing model's exactly (both invalidated at the
            // trace start, same geometry and round robin).
            let count = |k: u8| rec.cat.records.iter().filter(|r| r.kind == k).count() as u64;
            let [imiss, rmiss, wmiss, wbacks] = rec.stats.timing_misses;
            assert_eq!(count(format::IFILL), imiss, "{name}: IFILL records against I-cache misses");
            assert_eq!(count(format::DFILL), rmiss, "{name}: DFILL records against D-cache read misses");
            assert_eq!(count(format::WRITE), wmiss + wbacks, "{name}: WRITE records against store misses + write-backs");
            // The driver's uncached dump gives exactly the core's registers after the signal.
            assert_eq!(ims.registers, rec.s0_registers, "{name}: the dumped registers differ from S0");
            assert_eq!(aes.ints.len() as u64, rec.stats.irqs);
            let out = run_replay(&ims, &aes, &TimingConfig::default(), LIMIT).unwrap_or_else(|e| panic!("{name} seed {seed}: {e}"));
            assert_eq!(out.instructions, rec.stats.instructions);
            if let Some(m) = compare_traces(&rec.trace, &out.trace) {
                panic!("{name} seed {seed}: V1 fails at {m}");
            }
            if let Some(m) = compare_cats(&rec.cat, &out.cat) {
                panic!("{name} seed {seed}: V2 fails at {m}");
            }
            assert!(matches!(out.trace.last(), Some(TraceEntry::End { .. })));
        }
    }
}

#[test]
fn other_cache_policies_replay_exactly() {
    // Small caches force evictions (write-backs of dirty halves); write-through and
    // write-allocate take the other store paths of the monitor.
    let mut small = TimingConfig::default();
    for c in [&mut small.icache.size_bytes, &mut small.dcache.size_bytes] {
        *c = 1024;
    }
    small.icache.ways = 2;
    small.dcache.ways = 2;
    let mut through = small.clone();
    through.dcache.write_back = false;
    through.dcache.write_allocate = true;
    let mut alloc = small.clone();
    alloc.dcache.write_allocate = true;
    for (what, timing) in [("small write-back", small), ("small write-through allocate", through), ("small write-back allocate", alloc)] {
        for name in PROGRAMS {
            let (rec, ims, aes) = recorded_with(name, 3, timing.clone());
            let count = |k: u8| rec.cat.records.iter().filter(|r| r.kind == k).count() as u64;
            let writes = count(format::WRITE);
            assert!(writes >= 5, "{what} {name}: only {writes} WRITE records");
            // The monitor against the timing model's caches, per policy.
            let [imiss, rmiss, wmiss, wbacks] = rec.stats.timing_misses;
            assert_eq!(count(format::IFILL), imiss, "{what} {name}");
            let allocate = timing.dcache.write_allocate;
            assert_eq!(count(format::DFILL), rmiss + if allocate { wmiss } else { 0 }, "{what} {name}");
            if timing.dcache.write_back {
                assert_eq!(writes, wbacks + if allocate { 0 } else { wmiss }, "{what} {name}");
            }
            let out = run_replay(&ims, &aes, &timing, LIMIT).unwrap_or_else(|e| panic!("{what} {name}: {e}"));
            assert_eq!(compare_traces(&rec.trace, &out.trace), None, "{what} {name}");
            assert_eq!(compare_cats(&rec.cat, &out.cat), None, "{what} {name}");
            // The CAT of one policy does not verify against another's.
            let other = run_replay(&ims, &aes, &TimingConfig::default(), LIMIT).unwrap();
            assert!(compare_cats(&rec.cat, &other.cat).is_some(), "{what} {name}: policy not visible in the CAT");
        }
    }
}

#[test]
fn the_programs_exercise_every_event_kind() {
    let mut dma = 0;
    let mut cnt = 0;
    let mut reads = 0;
    for name in PROGRAMS {
        let (_, _, aes) = recorded(name, 1);
        dma += aes.dma.len();
        cnt += aes.cnt.len();
        reads += aes.ioq.len();
    }
    assert!(dma > 0 && cnt > 0 && reads > 0, "DMA {dma}, CNT {cnt}, device reads {reads}");
}

#[test]
fn shifted_or_missing_events_make_the_replay_diverge() {
    let (rec, ims, aes) = recorded("sys_io", 1);
    // Each damage must be reported as a divergence (or leftover events), never pass.
    // (what, damaged schedule, the replay itself must stop: events that the control flow or
    // a device load depends on; data-only damage may replay and must then fail V1 or V2)
    let mut cases: Vec<(&str, Aes, bool)> = Vec::new();
    let mut a = aes.clone();
    a.ints[3].tbc += 1;
    cases.push(("INT shifted one control-flow change later", a, false));
    let mut a = aes.clone();
    a.ints[3].tbc -= 1;
    cases.push(("INT shifted one control-flow change earlier", a, false));
    let mut a = aes.clone();
    a.ints[5].pc += 4;
    cases.push(("INT moved one instruction on", a, false));
    let mut a = aes.clone();
    a.ints.remove(2);
    cases.push(("INT removed", a, true));
    let mut a = aes.clone();
    a.dma.remove(0);
    cases.push(("DMA burst removed", a, false));
    let mut a = aes.clone();
    a.dma[1].data[0] ^= 0x55;
    cases.push(("DMA byte changed", a, false));
    let mut a = aes.clone();
    a.ioq.swap(10, 11);
    cases.push(("IOQ entries swapped", a, true));
    let mut a = aes.clone();
    a.ioq.pop();
    cases.push(("IOQ entry removed", a, true));
    let mut a = aes.clone();
    a.end_tbc -= 1;
    cases.push(("end key moved", a, true));
    for (what, damaged, must_stop) in cases {
        assert_ne!(damaged, aes, "{what}: the damage did not change the schedule");
        // Detected by the replay itself (a divergence or leftover events), or else by V1/V2.
        let found = match run_replay(&ims, &damaged, &TimingConfig::default(), LIMIT) {
            Err(e) => {
                assert!(matches!(e, CitcatError::Divergence { .. }), "{what}: {e}");
                format!("replay: {e}")
            }
            Ok(_) if must_stop => panic!("{what}: the replay did not stop"),
            Ok(out) => match (compare_traces(&rec.trace, &out.trace), compare_cats(&rec.cat, &out.cat)) {
                (Some(m), _) => format!("V1: {m}"),
                (None, Some(m)) => format!("V2: {m}"),
                (None, None) => panic!("{what}: the damaged schedule replayed and verified"),
            },
        };
        eprintln!("{what}: {found}");
    }
}

#[test]
fn a_changed_dma_byte_or_memory_byte_shows_in_v1() {
    // Data damage may not stop the replay; it must then show in the trace or the CAT.
    let (rec, ims, aes) = recorded("sys_io", 1);
    let mut a = aes.clone();
    a.dma[1].data[0] ^= 0x55;
    let mut i = ims.clone();
    let run = i.runs.iter_mut().max_by_key(|(_, b)| b.len()).unwrap();
    let mid = run.1.len() / 2;
    run.1[mid] ^= 0xFF;
    for (what, ims, aes) in [("DMA byte", &ims, &a), ("IMS byte", &i, &aes)] {
        match run_replay(ims, aes, &TimingConfig::default(), LIMIT) {
            Err(_) => {}
            Ok(out) => assert!(
                compare_traces(&rec.trace, &out.trace).is_some() || compare_cats(&rec.cat, &out.cat).is_some(),
                "{what}: damaged replay verified"
            ),
        }
    }
}

#[test]
fn a_program_without_the_marker_is_an_error() {
    // The user-mode test programs never execute the trace-start MCR (and use semihosting,
    // which system mode does not have: they stop on the SWI vector's trap or run out).
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testbenches/programs/bin/crc32.elf");
    let opts = RecordOptions { max_insns: 200_000, ..RecordOptions::default() };
    match record(&ElfImage::open(p).unwrap(), &opts, &mut NoTrace, |_| {}) {
        Err(e) => assert!(e.to_string().contains("trace-start") || e.to_string().contains("stopped"), "{e}"),
        Ok(_) => panic!("recorded a program without a trace start"),
    }
}


#[test]
fn a_cat_without_a_register_of_the_dump_is_refused() {
    let (rec, _, _) = recorded("sys_timer", 1);
    let cpsr_word = streamtrace_sim::system::REG_DUMP + 16 * 4;
    let mut cat = rec.cat.clone();
    let before = cat.records.len();
    cat.records.retain(|r| r.addr != cpsr_word);
    assert_eq!(cat.records.len(), before - 1, "the driver stores the CPSR word once");
    let e = extract(&cat).unwrap_err().to_string();
    assert!(e.contains("never stored word 16 of the register dump region (0x8000f040)"), "{e}");
    // Without BEGIN there is no trace start.
    let mut cat = rec.cat.clone();
    cat.records.remove(0);
    assert!(extract(&cat).unwrap_err().to_string().contains("does not start with MAGIC BEGIN"));
    // Without END the recording was cut short.
    let mut cat = rec.cat;
    cat.records.pop();
    assert!(extract(&cat).unwrap_err().to_string().contains("no END sample"));
}

#[test]
fn a_recording_cut_by_the_instruction_limit_replays_to_its_end() {
    let opts = RecordOptions { max_insns: 20_000, ..RecordOptions::default() };
    let mut trace = Vec::new();
    let rec = record(&elf("sys_io"), &opts, &mut trace, |_| {}).unwrap();
    assert_eq!(rec.stats.exit_code, None);
    assert_eq!(rec.stats.instructions + rec.stats.before_trace, 20_000);
    let (ims, aes) = extract(&rec.cat).unwrap();
    let out = run_replay(&ims, &aes, &TimingConfig::default(), LIMIT).unwrap();
    assert_eq!(compare_traces(&trace, &out.trace), None);
    assert_eq!(compare_cats(&rec.cat, &out.cat), None);
    assert_eq!(out.instructions, rec.stats.instructions);
}

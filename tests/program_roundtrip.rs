//! Real programs through the whole chain: the core model runs each test program of
//! testbenches/programs, the trace module encodes its retire events under every scheme, and
//! the decoder rebuilds the exact retired PC sequence from the bits and the program's ELF.

use std::path::{Path, PathBuf};

use streamtrace_isa::ElfImage;
use streamtrace_model::{BufferConfig, Config, CycleTraceModule, Encoder, RetireEvent};
use streamtrace_sim::semihost::SharedBuffer;
use streamtrace_sim::{Machine, MemAccess, Semihost, StepOutcome};
use streamtrace_sw_decoder::{decode_trace, verify_addresses_iw, verify_addresses_with_gaps};

/// Instructions per program: enough to cover start-up, printf and the hot loops.
const LIMIT: u64 = 1_500_000;

const CONFIGS: &[&str] = &[
    "fbase",
    "base",
    "nexs",
    "bsdc-32x4-128",
    "esdc-32x4-128",
    "rsdc-32x4-128",
    "bsdc-8x4-32,repl=lru",
    "rsdc-64x4-256,maxsl=64,sync=200000",
    // The paper's competitors (issue 9).
    "tslz-256",
    "tslz-8192",
    "sct8ht-128x4-255x8",
    "gzip-1",
    // The predictor-filtered trace (issue 25): default, with periodic sync, and stripped of
    // every predictor but the bimodal table (all targets sent).
    "pft",
    "pft,sync=200000",
    "pft,bim=2,hlen=none,ras=0,itp=0,itt=0,rtc=0,u=1,rate=1",
    // Only the tagged target table, and the earlier default's shape (one table, rtc 4).
    "pft,itp=0,ttag=4",
    "pft,bim=256,tsize=64,tag=7,hlen=3-8-20-50,itt=0,rtc=4",
    // The rest of the pft-sizes preset (src/cmd_sweep.rs PFT_SIZES).
    "pft,bim=64,tsize=16,tag=6,hlen=4-16,ras=4,itp=4,itt=4,ttag=7,rtc=2",
    "pft,tsize=16,hlen=2-4-8-16-32,ras=8,itp=8,itt=8,ttag=7,rtc=4",
    "pft,tag=8,hlen=2-4-8-15-28-48,ras=8,ttag=7",
    "pft,tsize=64,tag=8,hlen=2-3-5-8-13-21-34-64,ras=16,itp=32,itt=32,ttag=7",
    "pft,bim=4096,tsize=512,tag=10,hlen=2-5-11-23-45-64,ras=32,itp=64,itt=64,ttag=9,rtc=16",
];

fn programs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testbenches/programs")
}

fn manifest_programs() -> Vec<serde_json::Value> {
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(programs_dir().join("programs.json")).unwrap()).unwrap();
    let programs = manifest["programs"].as_array().unwrap().clone();
    assert!(programs.len() >= 12);
    programs
}

/// Run one manifest program for at most LIMIT instructions, calling `hook` per retirement;
/// returns its ELF.
fn run_program(prog: &serde_json::Value, mut hook: impl FnMut(&RetireEvent)) -> ElfImage {
    let name = prog["name"].as_str().unwrap();
    let elf_path = programs_dir().join(prog["elf"].as_str().unwrap());
    let elf = ElfImage::open(&elf_path).unwrap();
    let sh = Semihost::new()
        .with_cmdline(prog["cmdline"].as_str().unwrap())
        .with_workdir(programs_dir())
        .with_stdin(std::io::empty())
        .with_stdout(SharedBuffer::new())
        .with_stderr(SharedBuffer::new());
    let mut m = Machine::for_elf(&elf, sh);
    let mut h = |ev: &RetireEvent, _: &[MemAccess]| hook(ev);
    while m.retired < LIMIT {
        match m.step(&mut h).unwrap_or_else(|e| panic!("{name}: {e}")) {
            StepOutcome::Running => {}
            StepOutcome::Exited(code) => {
                assert_eq!(code, prog["exit_code"].as_i64().unwrap() as i32, "{name}");
                break;
            }
        }
    }
    elf
}

#[test]
fn every_program_decodes_exactly_under_every_scheme() {
    for prog in manifest_programs() {
        let name = prog["name"].as_str().unwrap();
        let configs: Vec<Config> = CONFIGS.iter().map(|c| c.parse().unwrap()).collect();
        let mut encoders: Vec<Encoder> = configs.iter().map(Encoder::new).collect();
        let mut pcs: Vec<u32> = Vec::with_capacity(LIMIT as usize);
        let elf = run_program(&prog, |ev| {
            pcs.push(ev.iw_addr());
            for e in &mut encoders {
                e.push(ev).unwrap_or_else(|err| panic!("{name}: {err}"));
            }
        });
        assert!(pcs.len() > 1000, "{name}: ran {} instructions", pcs.len());
        for (cfg, enc) in configs.iter().zip(encoders) {
            let (trace, stats) = enc.finish();
            let decoded = decode_trace(cfg, &trace.bytes, &elf, false);
            assert!(decoded.errors.is_empty(), "{name} {cfg}: {:?}", decoded.errors);
            assert!(decoded.ended, "{name} {cfg}");
            if let Err(mm) = verify_addresses_iw(&decoded.addresses, &pcs) {
                panic!("{name} {cfg}: first mismatch {mm:?}");
            }
            assert_eq!(stats.instructions, pcs.len() as u64);
        }
    }
}

/// Cycle mode (docs/trace-timing.md) on every program at IPC = 1, one bit per cycle: with
/// the stall policy the bits equal functional mode's; with a tiny buffer and the drop
/// policy the decoder rebuilds every instruction outside the reported lost ranges.
#[test]
fn cycle_mode_on_every_program() {
    let configs: Vec<Config> = ["nexs", "rsdc-32x4-128", "pft"].iter().map(|c| c.parse().unwrap()).collect();
    let stall: BufferConfig = "sdb=2,obuf=80,policy=stall".parse().unwrap();
    let drop: BufferConfig = "sdb=1,obuf=24,policy=drop".parse().unwrap();
    let mut total_stalls = 0;
    let mut total_overflows = 0;
    for prog in manifest_programs() {
        let name = prog["name"].as_str().unwrap();
        let mut functional: Vec<Encoder> = configs.iter().map(Encoder::new).collect();
        let mut modules: Vec<CycleTraceModule> = configs
            .iter()
            .flat_map(|c| [CycleTraceModule::new(c, &stall), CycleTraceModule::new(c, &drop)])
            .collect();
        let mut pcs: Vec<u32> = Vec::with_capacity(LIMIT as usize);
        let elf = run_program(&prog, |ev| {
            let cycle = pcs.len() as u64;
            pcs.push(ev.iw_addr());
            for e in &mut functional {
                e.push(ev).unwrap();
            }
            for m in &mut modules {
                m.push_at(ev, cycle).unwrap();
            }
        });
        let mut modules = modules.into_iter();
        for (cfg, f) in configs.iter().zip(functional) {
            let (ftrace, _) = f.finish();
            let stalled = modules.next().unwrap().finish();
            assert_eq!(stalled.cycle.overflows, 0);
            assert!(stalled.trace == ftrace, "{name} {cfg}: stall-policy bits differ from functional mode");
            total_stalls += stalled.cycle.stall_cycles;
            let dropped = modules.next().unwrap().finish();
            assert_eq!(dropped.cycle.stall_cycles, 0);
            assert_eq!(dropped.trace == ftrace, dropped.cycle.overflows == 0, "{name} {cfg}");
            total_overflows += dropped.cycle.overflows;
            let decoded = decode_trace(cfg, &dropped.trace.bytes, &elf, false);
            assert!(decoded.errors.is_empty() && decoded.ended, "{name} {cfg}: {:?}", decoded.errors);
            assert_eq!(decoded.gaps.iter().map(|g| g.lost).sum::<u64>(), dropped.cycle.lost_instructions);
            if let Err(mm) = verify_addresses_with_gaps(&decoded.addresses, &decoded.gaps, &pcs) {
                panic!("{name} {cfg} (drop): first mismatch {mm:?}");
            }
        }
    }
    // NEXS needs about a bit per instruction: one bit per cycle must stall and drop.
    assert!(total_stalls > 0 && total_overflows > 0, "stalls {total_stalls}, overflows {total_overflows}");
}

/// The bare-metal system programs (docs/citcat.md): timer, UART and DMA interrupts land
/// between arbitrary instructions, so every scheme's EXCEPTION path, and pft's exception
/// escape with its instruction offset and vector address, meet real interrupt traffic.
#[test]
fn system_programs_with_interrupts_decode_exactly() {
    use streamtrace_sim::system::{System, SystemConfig};
    use streamtrace_sim::TimingConfig;
    let configs: Vec<Config> =
        ["rsdc-32x4-128", "pft", "pft,sync=20000,rtc=0"].iter().map(|c| c.parse().unwrap()).collect();
    for name in ["sys_timer", "sys_io", "sys_io_thumb"] {
        let elf = ElfImage::open(programs_dir().join("system/bin").join(format!("{name}.elf"))).unwrap();
        let mut sys = System::for_elf(&elf, SystemConfig::default(), TimingConfig::default()).unwrap();
        let mut encoders: Vec<Encoder> = configs.iter().map(Encoder::new).collect();
        let mut pcs = Vec::new();
        let mut exceptions = 0;
        // System mode takes an IRQ between two steps, after the previous instruction's retire
        // event went out; the trace module's interface flags that instruction (section 2),
        // so each event is held back until the next boundary says whether an IRQ follows.
        let mut held: Option<RetireEvent> = None;
        let mut deliver = |ev: RetireEvent, pcs: &mut Vec<u32>, exceptions: &mut u64| {
            pcs.push(ev.iw_addr());
            *exceptions += ev.exception as u64;
            for e in &mut encoders {
                e.push(&ev).unwrap_or_else(|err| panic!("{name}: {err}"));
            }
        };
        loop {
            assert!(sys.machine.retired < 5_000_000, "{name} did not exit");
            if sys.boundary().irq {
                let mut ev = held.take().expect("an IRQ follows an instruction");
                ev.exception = true;
                ev.next_pc = sys.pc();
                deliver(ev, &mut pcs, &mut exceptions);
            } else if let Some(ev) = held.take() {
                deliver(ev, &mut pcs, &mut exceptions);
            }
            let mut last = None;
            let out = sys.step(&mut |ev: &RetireEvent, _: &[MemAccess]| last = Some(*ev)).unwrap();
            if let Some(ev) = last {
                // An instruction that raised an exception itself (SWI, abort) is already flagged.
                if ev.exception {
                    deliver(ev, &mut pcs, &mut exceptions);
                } else {
                    held = Some(ev);
                }
            }
            if let StepOutcome::Exited(code) = out {
                assert_eq!(code, 0, "{name}");
                if let Some(ev) = held.take() {
                    deliver(ev, &mut pcs, &mut exceptions);
                }
                break;
            }
        }
        assert!(exceptions >= 6, "{name}: {exceptions} exceptions");
        for (cfg, enc) in configs.iter().zip(encoders) {
            let (trace, stats) = enc.finish();
            eprintln!("{name} {cfg}: {} instructions, {exceptions} exceptions, {:.4} bits/instruction", pcs.len(), stats.bits_per_instruction);
            assert_eq!(stats.exceptions, exceptions, "{name} {cfg}");
            let decoded = decode_trace(cfg, &trace.bytes, &elf, true);
            assert!(decoded.errors.is_empty() && decoded.ended, "{name} {cfg}: {:?}", decoded.errors);
            let n_exc = decoded.elements.iter().filter(|e| matches!(e, streamtrace_sw_decoder::TraceElement::Exception { .. })).count();
            assert_eq!(n_exc as u64, exceptions, "{name} {cfg}");
            if let Err(mm) = verify_addresses_iw(&decoded.addresses, &pcs) {
                panic!("{name} {cfg}: first mismatch {mm:?}");
            }
        }
    }
}

/// The Linux workloads (testbenches/linux, docs/linux.md): busybox and our programs as
/// static glibc binaries, through the kernel helper page and many indirect calls. The first
/// million instructions of each decode address by address under the main schemes.
#[test]
fn linux_workloads_decode_exactly() {
    use streamtrace_sim::sweep::programs_from_manifest;
    const LINUX_LIMIT: u64 = 1_000_000;
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("testbenches/linux/programs.json");
    let programs = programs_from_manifest(&manifest).unwrap();
    assert!(programs.len() >= 12, "{} workloads", programs.len());
    let configs: Vec<Config> = ["nexs", "bsdc-32x4-128", "rsdc-32x4-128", "tslz-256", "pft", "pft,sync=200000"]
        .iter()
        .map(|c| c.parse().unwrap())
        .collect();
    let mut kuser = 0u64;
    for p in programs {
        assert!(p.elf.is_file(), "{}: {} is missing: run scripts/setup.sh", p.name, p.elf.display());
        let elf = ElfImage::open(&p.elf).unwrap();
        let mut m = p.machine_for(&elf).unwrap();
        let mut encoders: Vec<Encoder> = configs.iter().map(Encoder::new).collect();
        let mut pcs: Vec<u32> = Vec::with_capacity(LINUX_LIMIT as usize);
        let mut hook = |ev: &RetireEvent, _: &[MemAccess]| {
            pcs.push(ev.iw_addr());
            for e in &mut encoders {
                e.push(ev).unwrap();
            }
        };
        while m.retired < LINUX_LIMIT {
            if let StepOutcome::Exited(_) = m.step(&mut hook).unwrap_or_else(|e| panic!("{}: {e}", p.name)) {
                break;
            }
        }
        kuser += pcs.iter().filter(|&&pc| pc >= streamtrace_isa::linux::KUSER_PAGE).count() as u64;
        for (cfg, enc) in configs.iter().zip(encoders) {
            let (trace, _) = enc.finish();
            let decoded = decode_trace(cfg, &trace.bytes, &elf, false);
            assert!(decoded.errors.is_empty() && decoded.ended, "{} {cfg}: {:?}", p.name, decoded.errors);
            if let Err(mm) = verify_addresses_iw(&decoded.addresses, &pcs) {
                panic!("{} {cfg}: first mismatch {mm:?}", p.name);
            }
        }
    }
    assert!(kuser > 0, "no workload ran the kernel helper page");
}

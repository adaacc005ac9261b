//! Self-modifying code and other changes to code the machine has decoded (the
//! predecoded-instruction cache must drop its stale decodings; sim/src/decoded.rs).
//!
//! `data/self_modifying.elf` (source and build line in `data/self_modifying.s`) is a static
//! Linux program that overwrites ARM and Thumb instructions in its own text and runs them
//! again, and replaces the prefix of a Thumb BL pair. Its exit status is the sum the patched
//! instructions compute, derived from the architecture in the source (191); it runs here in
//! every way the machine steps (functional run, single steps, timed run) with the same retire
//! events, and against QEMU in lock step. The other tests change code behind the machine's
//! back: bulk writes (a loader, DMA), unmapping, a new memory, a store in system mode.

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{parse_exec_bytes, Qemu};
use streamtrace_isa::ElfImage;
use streamtrace_model::{BranchClass, RetireEvent};
use streamtrace_sim::semihost::SharedBuffer;
use streamtrace_sim::{CoprocOp, IoBus, Machine, MemAccess, Memory, NoHook, Semihost, SimError, StepOutcome, TimingConfig};

/// What the program's patched instructions add up to (see data/self_modifying.s).
const EXIT_STATUS: i32 = 191;
const LIMIT: u64 = 10_000;

fn elf_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/self_modifying.elf")
}

fn machine() -> Machine {
    let elf = ElfImage::open(elf_path()).unwrap();
    let sh = Semihost::new().with_cmdline("self_modifying.elf").with_stdout(SharedBuffer::new());
    Machine::load(&elf, sh).unwrap()
}

/// The events of a functional run ([`Machine::run`]), of single steps and of a timed run
/// (cycles cleared), each with its exit status.
fn runs() -> [(Vec<RetireEvent>, i32); 3] {
    let mut events = Vec::new();
    let mut m = machine();
    let code = m.run(LIMIT, &mut |e: &RetireEvent, _: &[MemAccess]| events.push(*e)).unwrap();
    let run = (events, code);

    let mut events = Vec::new();
    let mut m = machine();
    let code = loop {
        match m.step(&mut |e: &RetireEvent, _: &[MemAccess]| events.push(*e)).unwrap() {
            StepOutcome::Exited(code) => break code,
            StepOutcome::Running => assert!(m.retired < LIMIT),
        }
    };
    let steps = (events, code);

    let mut events = Vec::new();
    let mut m = machine();
    m.enable_timing(TimingConfig::default()).unwrap();
    let code = m.run(LIMIT, &mut |e: &RetireEvent, _: &[MemAccess]| events.push(RetireEvent { cycle: 0, ..*e })).unwrap();
    [run, steps, (events, code)]
}

#[test]
fn patched_instructions_run_as_patched_in_every_step_mode() {
    let elf = ElfImage::open(elf_path()).unwrap();
    let sym = |name: &str| elf.symbol(name).unwrap_or_else(|| panic!("{name}")).addr;
    let [run, steps, timed] = runs();
    for (what, (events, code)) in [("run", &run), ("steps", &steps), ("timed run", &timed)] {
        assert_eq!(*code, EXIT_STATUS, "{what}: exit status");
        // The ARM site retired the three words stored there, in order.
        let at = |pc: u32| events.iter().filter(move |e| e.pc == pc).map(|e| e.insn).collect::<Vec<_>>();
        assert_eq!(at(sym("arm_site")), [0xE285_5001, 0xE285_5002, 0xE285_5004], "{what}: ARM site");
        assert_eq!(at(sym("thumb_site")), [0x3508, 0x3510, 0x3520], "{what}: Thumb site");
        // The BL suffix: direct after its prefix, indirect after the MOV that replaced it.
        let suffix = sym("pair_prefix") + 2;
        let classes: Vec<BranchClass> = events.iter().filter(|e| e.pc == suffix).map(|e| e.class).collect();
        assert_eq!(classes, [BranchClass::DirectUncond, BranchClass::IndirectUncond], "{what}: BL suffix");
        assert_eq!(at(sym("pair_prefix")), [0xF000, 0x469E], "{what}: the pair's first halfword");
    }
    assert!(run.0 == steps.0 && run.0 == timed.0, "the step modes retire the same events");
}

/// The program's PCs against QEMU's exec log, one instruction per translation block (as in
/// qemu_linux.rs: a BL pair is one QEMU line and two model instructions).
#[test]
fn patched_instructions_match_qemu() {
    let qemu = Qemu::find();
    let mut child = Command::new(&qemu.path)
        .env_clear()
        .args(["-cpu", "pxa270", qemu.one_insn, "-d", "exec,nochain", "-D", "/dev/stderr"])
        .arg(elf_path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn qemu-arm");
    let reader = BufReader::new(child.stderr.take().expect("piped"));
    let thumb_bit = qemu.thumb_in_cs_base();
    let mut m = machine();
    let mut lines = 0;
    for line in reader.split(b'\n') {
        let Some(q) = parse_exec_bytes(&line.unwrap(), thumb_bit) else { continue };
        assert!(m.exit_code().is_none(), "QEMU line {lines} at {:#x}: the model's program has exited", q.pc);
        assert_eq!((m.cpu.r[15], q.thumb.unwrap_or(m.cpu.thumb)), (q.pc, m.cpu.thumb), "QEMU line {lines}");
        let pair = m.cpu.thumb && m.mem.read16(q.pc).is_ok_and(|hw| hw >> 11 == 0x1E);
        for _ in 0..if pair { 2 } else { 1 } {
            m.step(&mut NoHook).unwrap();
        }
        lines += 1;
    }
    assert!(lines > 50, "QEMU logged {lines} instructions");
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(EXIT_STATUS), "QEMU's exit status");
    assert_eq!(m.exit_code(), Some(EXIT_STATUS), "the model ran to the same end ({lines} QEMU lines)");
}

// Hand-assembled ARM words.
const MOV_R0_1: u32 = 0xE3A0_0001;
const MOV_R0_2: u32 = 0xE3A0_0002;
const MOV_R0_3: u32 = 0xE3A0_0003;
const STR_R1_R2: u32 = 0xE582_1000; // str r1, [r2]

fn bare_machine(code: &[(u32, u32)]) -> Machine {
    let mut mem = Memory::new();
    mem.map_region(0, 0x2000);
    for &(addr, word) in code {
        mem.write32(addr, word).unwrap();
    }
    Machine::new(mem, Semihost::default())
}

/// Step the instruction at `pc` and return its retire event.
fn step_at(m: &mut Machine, pc: u32) -> Result<RetireEvent, SimError> {
    m.cpu.r[15] = pc;
    let mut ev = None;
    m.step(&mut |e: &RetireEvent, _: &[MemAccess]| ev = Some(*e))?;
    Ok(ev.unwrap())
}

#[test]
fn bulk_writes_unmapping_and_a_new_memory_drop_decoded_instructions() {
    let mut m = bare_machine(&[(0x100, MOV_R0_1)]);
    step_at(&mut m, 0x100).unwrap();
    assert_eq!(m.cpu.r[0], 1);
    // A loader (or a DMA burst) writes over the code.
    m.mem.write_bytes(0x100, &MOV_R0_2.to_le_bytes()).unwrap();
    assert_eq!(step_at(&mut m, 0x100).unwrap().insn, MOV_R0_2);
    assert_eq!(m.cpu.r[0], 2);
    // An unaligned bulk write that covers only the last byte of the word.
    m.mem.write_bytes(0x103, &[0xE2]).unwrap(); // E3A00002 -> E2A00002 (adc r0, r0, #2)
    assert_eq!(step_at(&mut m, 0x100).unwrap().insn, 0xE2A0_0002);
    assert_eq!(m.cpu.r[0], 4);
    // Unmapped, the fetch faults; mapped again, the page reads zeros (andeq r0, r0, r0).
    m.mem.unmap_region(0, 0x1000);
    assert_eq!(step_at(&mut m, 0x100), Err(SimError::FetchFault { pc: 0x100 }));
    m.mem.map_region(0, 0x1000);
    assert_eq!(step_at(&mut m, 0x100).unwrap().insn, 0);
    // A new memory: nothing decoded from the old one survives.
    let mut mem = Memory::new();
    mem.map_region(0, 0x1000);
    mem.write32(0x100, MOV_R0_3).unwrap();
    m.mem = mem;
    assert_eq!(step_at(&mut m, 0x100).unwrap().insn, MOV_R0_3);
    assert_eq!(m.cpu.r[0], 3);
    // The same through the functional run: store a new instruction, then run it.
    let mut m = bare_machine(&[(0x100, MOV_R0_1), (0x200, STR_R1_R2), (0x204, 0xEAFF_FFBD)]); // b 0x100
    m.cpu.r[15] = 0x100;
    m.run(1, &mut NoHook).unwrap_err();
    assert_eq!(m.cpu.r[0], 1);
    m.cpu.r[15] = 0x200;
    (m.cpu.r[1], m.cpu.r[2]) = (MOV_R0_2, 0x100);
    m.run(4, &mut NoHook).unwrap_err(); // str, b, mov
    assert_eq!((m.cpu.r[15], m.cpu.r[0]), (0x104, 2));
}

/// No devices: RAM only.
struct NoDevices;

impl IoBus for NoDevices {
    fn read(&mut self, _: u32, _: u8) -> Option<u32> {
        None
    }
    fn write(&mut self, _: u32, _: u8, _: u32) -> bool {
        false
    }
    fn coproc(&mut self, _: u32, _: bool, _: CoprocOp, _: u32) -> Option<u32> {
        None
    }
}

#[test]
fn a_store_in_system_mode_replaces_an_instruction_that_ran() {
    // mov r0, #1 runs; str r1, [r2] overwrites it with mov r0, #3, which then runs.
    let mut m = bare_machine(&[(0x100, MOV_R0_1), (0x104, STR_R1_R2), (0x108, 0xEAFF_FFFC)]); // b 0x100
    m.log_prior = true;
    m.cpu.r[15] = 0x100;
    (m.cpu.r[1], m.cpu.r[2]) = (MOV_R0_3, 0x100);
    let mut r0 = Vec::new();
    for _ in 0..4 {
        m.step_with_io(&mut NoHook, &mut NoDevices).unwrap();
        r0.push(m.cpu.r[0]);
    }
    assert_eq!(r0, [1, 1, 1, 3]);
    assert_eq!(m.prior_bytes(), [] as [(u32, u8); 0], "the last instruction stored nothing");
}

/// Straight-line code across the decoded cache's last slot (ARM 0xFFFC, Thumb 0x7FFE: the
/// next instruction has slot 0), run twice: the second time every slot is filled and the
/// functional loop steps past the last slot onto the guard slot and must find slot 0.
#[test]
fn straight_line_code_across_the_last_decoded_slot() {
    for thumb in [false, true] {
        let mut mem = Memory::new();
        mem.map_region(0, 0x2_0000);
        // mov(s) r0, #1; then add(s) r0, r0, #1 three times; every one retires in sequence.
        let start = if thumb { 0x7FFC } else { 0xFFF8 };
        let size = if thumb { 2 } else { 4 };
        for i in 0..4u32 {
            let addr = start + i * size;
            if thumb {
                mem.write16(addr, if i == 0 { 0x2001 } else { 0x3001 }).unwrap();
            } else {
                mem.write32(addr, if i == 0 { MOV_R0_1 } else { 0xE280_0001 }).unwrap();
            }
        }
        let mut m = Machine::new(mem, Semihost::default());
        for round in 0..2 {
            m.cpu.r[15] = start;
            m.cpu.thumb = thumb;
            m.retired = 0;
            let mut pcs = Vec::new();
            let err = m.run(4, &mut |e: &RetireEvent, _: &[MemAccess]| pcs.push(e.pc)).unwrap_err();
            assert_eq!(err, SimError::InstructionLimit { limit: 4, pc: start + 4 * size }, "thumb {thumb}, round {round}");
            assert_eq!(pcs, (0..4).map(|i| start + i * size).collect::<Vec<_>>(), "thumb {thumb}, round {round}");
            assert_eq!(m.cpu.r[0], 4, "thumb {thumb}, round {round}");
        }
    }
}

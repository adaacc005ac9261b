//! Thumb control flow and exceptions (formats 5 BX/BLX and PC writes, 14 POP {pc}, 16-19):
//! targets checked against the addresses binutils resolved in the listings, state changes,
//! link registers, SWI/semihosting, BKPT and undefined encodings.

mod thumb_common;
use streamtrace_isa::{classify_thumb, BranchClass};
use streamtrace_sim::{ExceptionKind, ExceptionPolicy, Flow, Mode, NoHook, SimError, StepOutcome};
use thumb_common::*;

/// Every direct branch of both listings, executed at its linked address (a BL/BLX pair as
/// its two halves), must land where objdump says.
#[test]
fn direct_branches_match_the_assembler() {
    let mut checked = 0;
    for lst in [FORMATS_LST, FARCALL_LST] {
        for l in parse_listing(lst) {
            let mnemonic = l.text.split(' ').next().unwrap();
            let (arm, cond) = match mnemonic {
                "b.n" => (false, None),
                "beq.n" => (false, Some("Z")),
                "bne.n" => (false, Some("")),
                "bgt.n" => (false, Some("")),
                "bl" => (false, None),
                "blx" if l.hws.len() == 2 => (true, None),
                _ => continue,
            };
            let target = l.text.split(' ').nth(1).unwrap();
            let target = u32::from_str_radix(target, 16).unwrap();
            let mut m = machine();
            m.mem.map_region(l.addr & !0xFFF, 0x2000);
            load(&mut m, l.addr, &l.hws);
            m.cpu.r[15] = l.addr;
            set_flags(&mut m, cond.unwrap_or(""));
            for _ in 0..l.hws.len() {
                assert_eq!(m.step(&mut NoHook), Ok(StepOutcome::Running), "{}", l.text);
            }
            assert_eq!((m.cpu.r[15], m.cpu.thumb), (target, !arm), "{:#x}: {}", l.addr, l.text);
            if l.hws.len() == 2 {
                assert_eq!(m.cpu.r[14], (l.addr + 4) | 1, "BL/BLX link: {}", l.text);
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 11);
}

#[test]
fn conditional_branch_not_taken() {
    let mut m = machine();
    set_flags(&mut m, "");
    assert_eq!(exec(&mut m, enc("beq.n 8000 <_start>")), Ok(Flow::Next));
    assert_eq!(m.cpu.r[15], CODE);
    // BGT: Z = 0 and N = V.
    for (fl, taken) in [("", true), ("NV", true), ("N", false), ("V", false), ("Z", false)] {
        let mut m = machine();
        m.cpu.r[15] = 0x80a4;
        set_flags(&mut m, fl);
        let want = if taken { Flow::Jump } else { Flow::Next };
        assert_eq!(exec(&mut m, enc("bgt.n 80a4 <fwd>")), Ok(want), "flags {fl}");
        assert_eq!(m.cpu.r[15], 0x80a4);
    }
    // All 14 conditions against the CPU's condition check.
    for cond in 0..14u16 {
        for fl in ["", "N", "Z", "C", "V", "NZCV", "NV", "ZC"] {
            let mut m = machine();
            set_flags(&mut m, fl);
            let expect = m.cpu.cond_passed(cond as u32);
            let r = exec(&mut m, 0xD000 | cond << 8 | 0x10).unwrap();
            assert_eq!(r == Flow::Jump, expect, "cond {cond} flags {fl}");
            assert_eq!(m.cpu.r[15], if expect { CODE + 4 + 0x20 } else { CODE });
        }
    }
}

#[test]
fn bl_pair_with_negative_offsets() {
    // thumb_farcall.lst: 208004: f5ff fffc  bl 8000 <_start> (prefix imm11 negative).
    let l = line(FARCALL_LST, "bl 8000 <_start>");
    assert_eq!(l.hws, vec![0xF5FF, 0xFFFC]);
    let mut m = machine();
    m.mem.map_region(0x0020_8000, 0x1000);
    load(&mut m, l.addr, &l.hws);
    m.cpu.r[15] = l.addr;
    assert_eq!(exec(&mut m, l.hws[0]), Ok(Flow::Next), "the prefix only sets lr");
    assert_eq!(m.cpu.r[14], 0x0020_8008u32.wrapping_sub(0x0020_1000));
    m.cpu.r[15] = l.addr + 2;
    assert_eq!(exec(&mut m, l.hws[1]), Ok(Flow::Jump));
    assert_eq!((m.cpu.r[15], m.cpu.thumb, m.cpu.r[14]), (0x8000, true, 0x0020_8009));
    // The classifier agrees (prefix at pc - 2).
    let c = classify_thumb(l.hws[1], Some(l.hws[0]), l.addr + 2);
    assert_eq!((c.class, c.target), (BranchClass::DirectUncond, Some(0x8001)));
    // bl to itself: prefix imm11 = -1, suffix imm11 = 0x7fc.
    let l = line(FARCALL_LST, "bl 208004 <far_call>");
    load(&mut m, l.addr, &l.hws);
    m.cpu.r[15] = l.addr;
    m.step(&mut NoHook).unwrap();
    m.step(&mut NoHook).unwrap();
    assert_eq!((m.cpu.r[15], m.cpu.r[14]), (0x0020_8004, 0x0020_800D));
}

#[test]
fn bl_suffix_alone_uses_lr() {
    let mut m = machine();
    m.cpu.r[14] = 0x9001; // odd lr (a previous BL's link): bit 0 is dropped
    assert_eq!(exec(&mut m, 0xF801), Ok(Flow::Jump));
    assert_eq!((m.cpu.r[15], m.cpu.thumb, m.cpu.r[14]), (0x9002, true, CODE + 3));
    // Through the machine: the classifier calls it IndirectUncond, which allows the jump.
    let mut m = machine();
    m.cpu.r[14] = 0x9000;
    m.cpu.r[15] = CODE + 2;
    m.mem.write16(CODE, 0x2000).unwrap(); // movs r0, #0: not a prefix
    assert_eq!(step(&mut m, 0xF801), Ok(StepOutcome::Running));
    assert_eq!(m.cpu.r[15], 0x9002);
}

#[test]
fn blx_pair_switches_to_arm() {
    let l = line(FORMATS_LST, "blx 80c0 <armfunc>");
    assert_eq!(l.hws, vec![0xF000, 0xE804]);
    let mut m = machine();
    load(&mut m, l.addr, &l.hws);
    m.cpu.r[15] = l.addr;
    m.step(&mut NoHook).unwrap();
    assert_eq!((m.cpu.r[15], m.cpu.r[14]), (l.addr + 2, l.addr + 4));
    let mut seen = None;
    m.step(&mut |ev: &streamtrace_model::RetireEvent, _: &[streamtrace_sim::MemAccess]| seen = Some(*ev)).unwrap();
    assert_eq!((m.cpu.r[15], m.cpu.thumb, m.cpu.r[14]), (0x80c0, false, (l.addr + 4) | 1));
    let ev = seen.unwrap();
    assert_eq!((ev.class, ev.taken, ev.next_pc, ev.thumb), (BranchClass::DirectUncond, true, 0x80c0, true));
    // lr + offset is not word-aligned: the BLX suffix aligns it down.
    let mut m = machine();
    m.cpu.r[14] = 0x9002;
    assert_eq!(exec(&mut m, 0xE800), Ok(Flow::Jump));
    assert_eq!((m.cpu.r[15], m.cpu.thumb), (0x9000, false));
    // BLX suffix with bit 0 set is undefined and changes nothing.
    let mut m = machine();
    m.cpu.r[14] = 0x9000;
    assert_eq!(exec(&mut m, 0xE805), Ok(Flow::Exception(ExceptionKind::Undefined)));
    assert_eq!((m.cpu.r[14], m.cpu.r[15], m.cpu.thumb), (0x9000, CODE, true));
}

#[test]
fn bx_and_blx_register() {
    let mut m = machine();
    m.cpu.r[3] = 0x9000;
    assert_eq!(exec(&mut m, enc("bx r3")), Ok(Flow::Jump));
    assert_eq!((m.cpu.r[15], m.cpu.thumb), (0x9000, false), "BX to ARM");
    let mut m = machine();
    m.cpu.r[14] = 0x9001;
    assert_eq!(exec(&mut m, enc("bx lr")), Ok(Flow::Jump));
    assert_eq!((m.cpu.r[15], m.cpu.thumb, m.cpu.r[14]), (0x9000, true, 0x9001));
    // BX pc at a word-aligned address: ARM state at pc + 4.
    let mut m = machine();
    assert_eq!(exec(&mut m, enc("bx pc")), Ok(Flow::Jump));
    assert_eq!((m.cpu.r[15], m.cpu.thumb), (CODE + 4, false));
    // ... and at pc = 2 mod 4 the ARM target has bit 1 set: UNPREDICTABLE.
    let mut m = machine();
    m.cpu.r[15] = CODE + 2;
    assert!(matches!(exec(&mut m, enc("bx pc")), Err(SimError::Unpredictable { pc, .. }) if pc == CODE + 2));
    let mut m = machine();
    m.cpu.r[3] = 0x9006;
    assert!(matches!(exec(&mut m, enc("bx r3")), Err(SimError::Unpredictable { .. })));
    // BLX Rm: lr = next | 1.
    let mut m = machine();
    m.cpu.r[4] = 0x9000;
    assert_eq!(step(&mut m, enc("blx r4")), Ok(StepOutcome::Running));
    assert_eq!((m.cpu.r[15], m.cpu.thumb, m.cpu.r[14]), (0x9000, false, CODE + 3));
    // BLX lr reads lr before writing it.
    let mut m = machine();
    m.cpu.r[14] = 0x9101;
    assert_eq!(exec(&mut m, enc("blx lr")), Ok(Flow::Jump));
    assert_eq!((m.cpu.r[15], m.cpu.thumb, m.cpu.r[14]), (0x9100, true, CODE + 3));
    // BLX pc is UNPREDICTABLE; lr is not written.
    let mut m = machine();
    m.cpu.r[14] = 7;
    assert!(matches!(exec(&mut m, 0x47F8), Err(SimError::Unpredictable { .. })));
    assert_eq!(m.cpu.r[14], 7);
}

#[test]
fn hi_register_writes_to_pc_stay_in_thumb() {
    // mov pc, lr: an ARM-looking (even) lr does not switch state on ARMv5.
    for lr in [0x9000u32, 0x9001] {
        let mut m = machine();
        m.cpu.r[14] = lr;
        assert_eq!(step(&mut m, enc("mov pc, lr")), Ok(StepOutcome::Running));
        assert_eq!((m.cpu.r[15], m.cpu.thumb), (0x9000, true), "lr = {lr:#x}");
    }
    let mut m = machine();
    m.cpu.r[3] = 0x9123;
    assert_eq!(exec(&mut m, enc("mov pc, r3")), Ok(Flow::Jump));
    assert_eq!((m.cpu.r[15], m.cpu.thumb), (0x9122, true));
    // add pc, r1: pc reads as pc + 4.
    let mut m = machine();
    m.cpu.r[15] = CODE + 2;
    m.cpu.r[1] = 0x101;
    set_flags(&mut m, "NZ");
    assert_eq!(step(&mut m, enc("add pc, r1")), Ok(StepOutcome::Running));
    assert_eq!((m.cpu.r[15], m.cpu.thumb, flags(&m)), (CODE + 6 + 0x100, true, "NZ--".to_string()));
    // CMP with pc never writes it.
    let mut m = machine();
    m.cpu.r[8] = CODE + 4;
    assert_eq!(exec(&mut m, 0x45C7), Ok(Flow::Next)); // cmp pc, r8
    assert_eq!((flags(&m), m.cpu.r[15]), ("-ZC-".to_string(), CODE));
}

#[test]
fn call_and_return_program() {
    // thumb_programs.s `calls`: bl leaf; subs r6, #1; bne calls — leaf pushes {r4, lr},
    // and returns with pop {r4, pc}.
    let mut m = machine();
    load_listing(&mut m, PROGRAMS_LST);
    m.cpu.r[15] = symbol(PROGRAMS_LST, "calls");
    m.cpu.r[6] = 3;
    m.cpu.r[4] = 0x44;
    let end = line(PROGRAMS_LST, "bkpt 0x0002").addr;
    let mut classes = Vec::new();
    while m.cpu.r[15] != end {
        m.step(&mut |ev: &streamtrace_model::RetireEvent, _: &[streamtrace_sim::MemAccess]| {
            if ev.class != BranchClass::None {
                classes.push(ev.class)
            }
        })
        .unwrap();
        assert!(m.retired < 100);
    }
    assert_eq!(m.retired, 3 * 8);
    let bl_ret_bne = [BranchClass::DirectUncond, BranchClass::Return, BranchClass::DirectCond];
    assert_eq!(classes, bl_ret_bne.repeat(3));
    // leaf loaded the pushed r4 into r0; r4 was restored; the stack is balanced.
    assert_eq!((m.cpu.r[0], m.cpu.r[4], m.cpu.r[13], m.cpu.thumb), (0x44, 0x44, STACK_TOP, true));
    assert_eq!(m.cpu.r[14], symbol(PROGRAMS_LST, "calls") + 5);
}

#[test]
fn swi_semihosting_bkpt_and_undefined() {
    let mut m = machine();
    assert_eq!(exec(&mut m, enc("svc 171")), Ok(Flow::Semihost));
    assert_eq!(exec(&mut m, enc("svc 18")), Ok(Flow::Exception(ExceptionKind::Swi)));
    assert_eq!(exec(&mut m, enc("bkpt 0x0001")), Ok(Flow::Exception(ExceptionKind::PrefetchAbort)));
    assert_eq!(exec(&mut m, enc("udf #0")), Ok(Flow::Exception(ExceptionKind::Undefined)));
    for hw in
        [0xDEFFu16, 0xB100, 0xB200, 0xB2C0, 0xB300, 0xB600, 0xB650, 0xB900, 0xBA00, 0xBAC0, 0xBB00, 0xBF00, 0xBF08]
    {
        assert_eq!(exec(&mut m, hw), Ok(Flow::Exception(ExceptionKind::Undefined)), "{hw:#06x}");
    }
    assert_eq!(m.cpu.r[15], CODE);

    // Through the machine (Stop policy): errors naming the instruction.
    let mut m = machine();
    assert_eq!(step(&mut m, enc("udf #0")), Err(SimError::Undefined { pc: CODE, insn: 0xDE00, state: "Thumb" }));
    let mut m = machine();
    assert_eq!(step(&mut m, enc("svc 18")), Err(SimError::UnhandledException { pc: CODE, what: "SWI" }));
    let mut m = machine();
    assert_eq!(
        step(&mut m, enc("bkpt 0x0001")),
        Err(SimError::UnhandledException { pc: CODE, what: "prefetch abort" })
    );

    // Vector policy: SWI enters supervisor mode with the Thumb CPSR saved.
    let mut m = machine();
    m.mem.map_region(0, 0x1000);
    m.policy = ExceptionPolicy::Vector;
    assert_eq!(step(&mut m, enc("svc 18")), Ok(StepOutcome::Running));
    assert_eq!((m.cpu.mode(), m.cpu.r[15], m.cpu.r[14], m.cpu.thumb), (Mode::Supervisor, 0x08, CODE + 2, false));
    assert_eq!(m.cpu.spsr().unwrap() & (1 << 5), 1 << 5);
}

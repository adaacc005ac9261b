//! ARM executor: branches and interworking, SWI/semihosting, BKPT, undefined instructions,
//! CP15. Encodings from binutils (tests/data/arm_control.s).

mod arm_support;

use arm_support::*;
use streamtrace_isa::classify_arm;
use streamtrace_model::BranchClass;
use streamtrace_sim::{Cpu, ExceptionKind, ExceptionPolicy, Flow, Mode, NoHook, SimError};

fn one(cpu: &mut Cpu, word: u32) -> Result<Flow, SimError> {
    let mut mem = memory();
    exec_one(cpu, &mut mem, word).flow
}

#[test]
fn b_and_bl() {
    let m = exec(&[0xea000002 /* b .+16 */], |_| {});
    assert_eq!(m.cpu.r[15], CODE + 16);
    let m = exec(&[0xeb00003e /* bl .+0x100 */], |_| {});
    assert_eq!((m.cpu.r[15], m.cpu.r[14]), (CODE + 0x100, CODE + 4));
    // Backwards: from CODE + 8 to CODE.
    let mut m = machine(&[0xe1a00000 /* nop */, 0xe1a00000 /* nop */, 0xeafffffc /* b .-8 */]);
    run(&mut m, 3);
    assert_eq!(m.cpu.r[15], CODE);
    // The executor agrees with the classifier's target.
    let w = 0xeb00003e /* bl .+0x100 */;
    assert_eq!(classify_arm(w, CODE).target, Some(CODE + 0x100));
}

#[test]
fn blx_immediate_switches_to_thumb() {
    // H = 1: target = pc + 8 + 0 + 2.
    let w = 0xfb000000 /* blx .+10 */;
    let m = exec(&[w], |_| {});
    assert_eq!((m.cpu.r[15], m.cpu.thumb, m.cpu.r[14]), (CODE + 10, true, CODE + 4));
    assert_eq!(classify_arm(w, CODE).target, Some((CODE + 10) | 1));
    let w = 0xfa00007e /* blx .+0x200 */;
    let m = exec(&[w], |_| {});
    assert_eq!((m.cpu.r[15], m.cpu.thumb), (CODE + 0x200, true));
}

#[test]
fn bx_and_blx_register() {
    let m = exec(&[0xe12fff10 /* bx r0 */], |m| m.cpu.r[0] = 0x9001);
    assert_eq!((m.cpu.r[15], m.cpu.thumb), (0x9000, true));
    let m = exec(&[0xe12fff1e /* bx lr */], |m| m.cpu.r[14] = 0x9000);
    assert_eq!((m.cpu.r[15], m.cpu.thumb), (0x9000, false));
    let m = exec(&[0xe12fff33 /* blx r3 */], |m| m.cpu.r[3] = 0x8801);
    assert_eq!((m.cpu.r[15], m.cpu.thumb, m.cpu.r[14]), (0x8800, true, CODE + 4));
    // BLX lr branches to the old lr.
    let m = exec(&[0xe12fff3e /* blx lr */], |m| m.cpu.r[14] = 0x8800);
    assert_eq!((m.cpu.r[15], m.cpu.thumb, m.cpu.r[14]), (0x8800, false, CODE + 4));
    // Conditional BX not taken.
    let m = exec(&[0x012fff10 /* bxeq r0 */], |m| m.cpu.r[0] = 0x9001);
    assert_eq!((m.cpu.r[15], m.cpu.thumb), (CODE + 4, false));
    // ARM target with bit 1 set: unpredictable.
    let mut cpu = cpu_in(Mode::User, &[(0, 0x9002)]);
    assert!(matches!(one(&mut cpu, 0xe12fff10 /* bx r0 */), Err(SimError::Unpredictable { .. })));
}

#[test]
fn swi_semihosting_and_bkpt() {
    let mut cpu = cpu_in(Mode::User, &[]);
    assert_eq!(one(&mut cpu, 0xef123456 /* svc 0x123456 */), Ok(Flow::Semihost));
    assert_eq!(one(&mut cpu, 0xef000010 /* svc 0x10 */), Ok(Flow::Exception(ExceptionKind::Swi)));
    assert_eq!(one(&mut cpu, 0xe1200172 /* bkpt 0x12 */), Ok(Flow::Exception(ExceptionKind::PrefetchAbort)));
    // A failed condition is not a trap.
    assert_eq!(one(&mut cpu, 0x0f123456 /* svceq 0x123456 */), Ok(Flow::Next));
    // Through the machine: a user program stops on a non-semihosting SWI ...
    let mut m = machine(&[0xef000010 /* svc 0x10 */]);
    assert_eq!(m.step(&mut NoHook), Err(SimError::UnhandledException { pc: CODE, what: "SWI" }));
    // ... and a bare-metal one takes the vector.
    let mut m = machine(&[0xef000010 /* svc 0x10 */]);
    m.policy = ExceptionPolicy::Vector;
    run(&mut m, 1);
    assert_eq!((m.cpu.mode(), m.cpu.r[15], m.cpu.r[14]), (Mode::Supervisor, 0x08, CODE + 4));
}

/// LDC/STC on CP0/CP1 are the PXA27x's iWMMXt WLDR/WSTR (as QEMU's pxa270 decodes them),
/// which glibc's setjmp/longjmp use on wR10-wR15.
#[test]
fn iwmmxt_loads_and_stores() {
    let mut cpu = cpu_in(Mode::User, &[(12, DATA)]);
    cpu.wr[10] = 0x1122_3344_5566_7788;
    let mut mem = memory();
    // stcl p1, c10, [r12], #8  (WSTRD wR10, [r12], #8: post-indexed)
    let o = exec_one(&mut cpu, &mut mem, 0xecec_a102);
    assert_eq!(o.flow, Ok(Flow::Next));
    assert_eq!((mem.read32(DATA), mem.read32(DATA + 4)), (Ok(0x5566_7788), Ok(0x1122_3344)));
    assert_eq!(cpu.r[12], DATA + 8, "written back");
    assert_eq!(o.log.iter().map(|a| (a.addr, a.size, a.write)).collect::<Vec<_>>(), [(DATA, 4, true), (DATA + 4, 4, true)]);
    // ldcl p1, c11, [r12, #-8]  (WLDRD wR11, [r12, #-8]: pre-indexed, no write-back)
    assert_eq!(exec_one(&mut cpu, &mut mem, 0xed5c_b102).flow, Ok(Flow::Next));
    assert_eq!((cpu.wr[11], cpu.r[12]), (0x1122_3344_5566_7788, DATA + 8));
    // ldc p1, c3, [r12, #-8]  (WLDRW wR3: a word, zero-extended)
    assert_eq!(exec_one(&mut cpu, &mut mem, 0xed1c_3102).flow, Ok(Flow::Next));
    assert_eq!(cpu.wr[3], 0x5566_7788);
    // ldcl p0, c4, [r12, #-7]  (WLDRH wR4: CP0 offsets count bytes)
    assert_eq!(exec_one(&mut cpu, &mut mem, 0xed5c_4007).flow, Ok(Flow::Next));
    assert_eq!(cpu.wr[4], u16::from_le_bytes([0x77, 0x66]) as u64);
    // P = 0, W = 0, U = 0 is not an addressing mode.
    assert_eq!(exec_one(&mut cpu, &mut mem, 0xec1c_3102).flow, Ok(Flow::Exception(ExceptionKind::Undefined)));
}

#[test]
fn undefined_instructions() {
    let mut cpu = cpu_in(Mode::Supervisor, &[(0, DATA)]);
    for w in [
        0xe7f000f0, /* .inst 0xe7f000f0 @ udf #0 (the permanently undefined space, bits[27:25] = 011, bit 4 = 1) */
        0xee010502, /* cdp p5, 0, c0, c1, c2, 0 */
        0xed900200, /* ldc p2, c0, [r0] (p0/p1 are iWMMXt loads: iwmmxt_loads_and_stores) */
        0xeda01602, /* stc p6, c1, [r0, #8]! */
        0xee010e10, /* mcr p14, 0, r0, c1, c0, 0 */
        0xee110710, /* mrc p7, 0, r0, c1, c0, 0 */
        0xfe000000, /* .inst 0xfe000000 @ cdp2 p0, 0, c0, c0, c0, 0 */
        0xe1a00f90, /* .inst 0xe1a00f90 @ multiply space with bits[24:21] = 1101: unallocated */
        0xe3000000, /* .inst 0xe3000000 @ movw r0, #0 (ARMv6T2; undefined on v5) */
        0xe1900f9f, /* .inst 0xe1900f9f @ ldrex r0, [r0] (ARMv6) */
        0xe12fff20, /* .inst 0xe12fff20 @ bxj r0 (no Jazelle) */
    ] {
        assert_eq!(one(&mut cpu, w), Ok(Flow::Exception(ExceptionKind::Undefined)), "{w:#010x}");
    }
    let mut m = machine(&[0xee010502 /* cdp p5, 0, c0, c1, c2, 0 */]);
    assert_eq!(
        m.step(&mut NoHook),
        Err(SimError::Undefined { pc: CODE, insn: 0xee010502 /* cdp p5, 0, c0, c1, c2, 0 */, state: "ARM" })
    );
}

#[test]
fn cp15_identification_and_control() {
    let mut cpu = cpu_in(Mode::Supervisor, &[]);
    one(&mut cpu, 0xee100f10 /* mrc p15, 0, r0, c0, c0, 0 */).unwrap();
    assert_eq!(cpu.r[0], 0x6905_4110, "main ID of QEMU's pxa270");
    one(&mut cpu, 0xee100f30 /* mrc p15, 0, r0, c0, c0, 1 */).unwrap();
    assert_eq!(cpu.r[0], 0x0D17_2172, "cache type");
    one(&mut cpu, 0xee110f10 /* mrc p15, 0, r0, c1, c0, 0 */).unwrap();
    assert_eq!(cpu.r[0], 0x78, "control register reset value");
    cpu.r[1] = 0xA000_107D;
    one(&mut cpu, 0xee011f10 /* mcr p15, 0, r1, c1, c0, 0 */).unwrap();
    assert_eq!(cpu.cp15_control, 0xA000_107D);
    one(&mut cpu, 0xee120f10 /* mrc p15, 0, r0, c2, c0, 0 */).unwrap();
    assert_eq!(cpu.r[0], 0, "other registers read zero");
    one(&mut cpu, 0xee071f17 /* mcr p15, 0, r1, c7, c7, 0 */).unwrap();
    // Rd = pc: bits[31:28] of the value go to NZCV (0xA -> N and C).
    set_flags(&mut cpu, "nZcV");
    one(&mut cpu, 0xee11ff10 /* mrc p15, 0, APSR_nzcv, c1, c0, 0 */).unwrap();
    assert_eq!((flags(&cpu).as_str(), cpu.r[15]), ("NzCv", CODE));
    // CP15 is privileged.
    let mut cpu = cpu_in(Mode::User, &[]);
    assert_eq!(
        one(&mut cpu, 0xee100f10 /* mrc p15, 0, r0, c0, c0, 0 */),
        Ok(Flow::Exception(ExceptionKind::Undefined))
    );
}

#[test]
fn every_pc_write_is_a_classified_branch() {
    // A spread of pc-writing instructions run through the machine (which rejects a Jump
    // the classifier calls BranchClass::None); each must be reported taken.
    let cases: &[(u32, BranchClass)] = &[
        (0xe1a0f00e /* mov pc, lr */, BranchClass::Return),
        (0x11a0f002 /* movne pc, r2 */, BranchClass::IndirectCond),
        (0xe282f008 /* add pc, r2, #8 */, BranchClass::IndirectUncond),
        (0xe49df004 /* ldr pc, [sp], #4 */, BranchClass::Return),
        (0xe512f008 /* ldr pc, [r2, #-8] */, BranchClass::IndirectUncond),
        (0xe8928008 /* ldmia r2, {r3, pc} */, BranchClass::IndirectUncond),
        (0xe8bd8010 /* pop {r4, pc} */, BranchClass::Return),
        (0xe12fff1e /* bx lr */, BranchClass::Return),
        (0xe12fff32 /* blx r2 */, BranchClass::IndirectUncond),
        (0xfa000006 /* blx .+0x20 */, BranchClass::DirectUncond),
        (0xcafffff6 /* bgt .-0x20 */, BranchClass::DirectCond),
    ];
    for &(w, class) in cases {
        let mut m = machine(&[w]);
        m.cpu.r[14] = 0x8800;
        m.cpu.r[2] = DATA + 0x10;
        m.mem.write32(DATA + 8, 0x8900).unwrap();
        m.mem.write32(DATA + 0x14, 0x8A00).unwrap();
        m.mem.write32(STACK_TOP - 4, 0x8B00).unwrap();
        m.cpu.r[13] = STACK_TOP - 8;
        m.mem.write32(STACK_TOP - 8, 0x8C00).unwrap();
        let mut seen = None;
        m.step(&mut |ev: &streamtrace_model::RetireEvent, _: &[streamtrace_sim::MemAccess]| {
            seen = Some((ev.class, ev.taken))
        })
        .unwrap_or_else(|e| panic!("{w:#010x}: {e}"));
        assert_eq!(seen, Some((class, true)), "{w:#010x}");
    }
}

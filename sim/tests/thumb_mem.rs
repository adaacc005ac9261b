//! Thumb loads and stores (formats 6-11, 14, 15): addressing, sign extension, unaligned
//! accesses, PUSH/POP, LDMIA/STMIA writeback and data aborts. Encodings come from
//! tests/data/thumb_formats.lst (binutils).

mod thumb_common;
use streamtrace_sim::{ExceptionKind, Flow, MemAccess, SimError, StepOutcome};
use thumb_common::*;

const ABORT: Flow = Flow::Exception(ExceptionKind::DataAbort);

fn rd32(m: &streamtrace_sim::Machine, a: u32) -> u32 {
    m.mem.read32(a).unwrap()
}

#[test]
fn format6_pc_relative_load_is_word_aligned() {
    for pc in [CODE, CODE + 2] {
        let mut m = machine();
        m.mem.write32(CODE + 8, 0xDEAD_BEEF).unwrap();
        m.cpu.r[15] = pc;
        // (pc + 4) & !3 + 4 = CODE + 8 from both addresses.
        let (r, log) = exec_logged(&mut m, enc("ldr r0, [pc, #4]"));
        assert_eq!(r, Ok(Flow::Next));
        assert_eq!(m.cpu.r[0], 0xDEAD_BEEF, "at {pc:#x}");
        assert_eq!(log, vec![MemAccess { addr: CODE + 8, size: 4, write: false, value: 0xDEAD_BEEF }]);
    }
}

#[test]
fn formats7_8_register_offset() {
    let mut m = machine();
    m.cpu.r[1] = DATA;
    m.cpu.r[2] = 8;
    m.cpu.r[0] = 0x8765_4321;
    exec(&mut m, enc("str r0, [r1, r2]")).unwrap();
    assert_eq!(rd32(&m, DATA + 8), 0x8765_4321);
    m.cpu.r[2] = 16;
    exec(&mut m, enc("strh r0, [r1, r2]")).unwrap();
    exec(&mut m, enc("strb r0, [r1, r2]")).unwrap();
    assert_eq!(rd32(&m, DATA + 16), 0x0000_4321, "STRB over the low byte of the STRH");
    m.cpu.r[2] = 17;
    exec(&mut m, enc("strb r0, [r1, r2]")).unwrap();
    assert_eq!(rd32(&m, DATA + 16), 0x0000_2121);

    // Sign and zero extension.
    m.mem.write32(DATA + 0x20, 0x7F80_8001).unwrap(); // bytes 01 80 80 7f
    let load = |m: &mut streamtrace_sim::Machine, text: &str, off: u32| {
        m.cpu.r[2] = 0x20 + off;
        m.cpu.r[0] = 0x5555_5555;
        assert_eq!(exec(m, enc(text)), Ok(Flow::Next));
        m.cpu.r[0]
    };
    assert_eq!(load(&mut m, "ldrsb r0, [r1, r2]", 0), 0x0000_0001);
    assert_eq!(load(&mut m, "ldrsb r0, [r1, r2]", 1), 0xFFFF_FF80);
    assert_eq!(load(&mut m, "ldrsb r0, [r1, r2]", 3), 0x0000_007F);
    assert_eq!(load(&mut m, "ldrb r0, [r1, r2]", 1), 0x0000_0080);
    assert_eq!(load(&mut m, "ldrh r0, [r1, r2]", 0), 0x0000_8001);
    assert_eq!(load(&mut m, "ldrsh r0, [r1, r2]", 0), 0xFFFF_8001);
    assert_eq!(load(&mut m, "ldrsh r0, [r1, r2]", 2), 0x0000_7F80);
    assert_eq!(load(&mut m, "ldr r0, [r1, r2]", 0), 0x7F80_8001);
}

#[test]
fn unaligned_word_loads_rotate_and_halfwords_align_down() {
    let mut m = machine();
    m.mem.write32(DATA, 0x4433_2211).unwrap();
    m.mem.write32(DATA + 4, 0x8877_6655).unwrap();
    m.cpu.r[1] = DATA;
    for (off, want) in [(0, 0x4433_2211), (1, 0x1144_3322), (2, 0x2211_4433), (3, 0x3322_1144), (5, 0x5588_7766)] {
        m.cpu.r[2] = off;
        let (r, log) = exec_logged(&mut m, enc("ldr r0, [r1, r2]"));
        assert_eq!(r, Ok(Flow::Next));
        assert_eq!(m.cpu.r[0], want, "LDR at DATA+{off}");
        assert_eq!(log[0].addr, DATA + (off & !3), "one aligned word access");
    }
    // Immediate and SP-relative forms rotate too.
    m.cpu.r[1] = DATA + 2;
    exec(&mut m, enc("ldr r0, [r1, #0]")).unwrap();
    assert_eq!(m.cpu.r[0], 0x2211_4433);
    m.cpu.r[13] = DATA + 1 - 1020;
    exec(&mut m, enc("ldr r3, [sp, #1020]")).unwrap();
    assert_eq!(m.cpu.r[3], 0x1144_3322);
    // Halfword loads use addr & !1.
    m.cpu.r[1] = DATA;
    m.cpu.r[2] = 3;
    exec(&mut m, enc("ldrh r0, [r1, r2]")).unwrap();
    assert_eq!(m.cpu.r[0], 0x4433);
    exec(&mut m, enc("ldrsh r0, [r1, r2]")).unwrap();
    assert_eq!(m.cpu.r[0], 0x4433);
    // Word stores go to addr & !3, halfword stores to addr & !1.
    m.cpu.r[0] = 0xCAFE_F00D;
    m.cpu.r[2] = 0x13;
    exec(&mut m, enc("str r0, [r1, r2]")).unwrap();
    assert_eq!(rd32(&m, DATA + 0x10), 0xCAFE_F00D);
    m.cpu.r[2] = 0x19;
    exec(&mut m, enc("strh r0, [r1, r2]")).unwrap();
    assert_eq!(rd32(&m, DATA + 0x18), 0x0000_F00D);
}

#[test]
fn formats9_10_11_immediate_offsets() {
    let mut m = machine();
    m.cpu.r[1] = DATA;
    m.cpu.r[0] = 0x1234_5678;
    exec(&mut m, enc("str r0, [r1, #4]")).unwrap();
    exec(&mut m, enc("strb r0, [r1, #31]")).unwrap();
    exec(&mut m, enc("strh r0, [r1, #2]")).unwrap();
    assert_eq!((rd32(&m, DATA), rd32(&m, DATA + 4), rd32(&m, DATA + 28)), (0x5678_0000, 0x1234_5678, 0x7800_0000));
    m.mem.write32(DATA + 124, 0xA1B2_C3D4).unwrap();
    m.mem.write32(DATA + 60, 0xBEEF_0000).unwrap();
    exec(&mut m, enc("ldr r0, [r1, #124]")).unwrap();
    assert_eq!(m.cpu.r[0], 0xA1B2_C3D4);
    exec(&mut m, enc("ldrh r0, [r1, #62]")).unwrap();
    assert_eq!(m.cpu.r[0], 0xBEEF);
    m.cpu.r[1] = DATA + 4;
    exec(&mut m, enc("ldrb r0, [r1, #1]")).unwrap();
    assert_eq!(m.cpu.r[0], 0x56);
    // SP-relative.
    m.cpu.r[13] = DATA + 0x100;
    m.cpu.r[2] = 0x600D;
    exec(&mut m, enc("str r2, [sp, #8]")).unwrap();
    assert_eq!(rd32(&m, DATA + 0x108), 0x600D);
    m.cpu.r[13] = DATA + 0x108 - 1020;
    exec(&mut m, enc("ldr r3, [sp, #1020]")).unwrap();
    assert_eq!(m.cpu.r[3], 0x600D);
}

#[test]
fn push_pop_order_and_sp() {
    let mut m = machine();
    for (i, v) in [(0, 0xA0), (1, 0xA1), (4, 0xA4), (7, 0xA7), (14, 0x9001)] {
        m.cpu.r[i] = v;
    }
    let (r, log) = exec_logged(&mut m, enc("push {r0, r1, r4, lr}"));
    assert_eq!(r, Ok(Flow::Next));
    let sp = STACK_TOP - 16;
    assert_eq!(m.cpu.r[13], sp);
    assert_eq!([rd32(&m, sp), rd32(&m, sp + 4), rd32(&m, sp + 8), rd32(&m, sp + 12)], [0xA0, 0xA1, 0xA4, 0x9001]);
    assert_eq!(
        log.iter().map(|a| (a.addr, a.write)).collect::<Vec<_>>(),
        vec![(sp, true), (sp + 4, true), (sp + 8, true), (sp + 12, true)]
    );
    exec(&mut m, enc("push {r7}")).unwrap();
    assert_eq!((m.cpu.r[13], rd32(&m, sp - 4)), (sp - 4, 0xA7));
    m.cpu.r[..8].fill(0);
    exec(&mut m, enc("pop {r2, r3}")).unwrap();
    assert_eq!((m.cpu.r[2], m.cpu.r[3], m.cpu.r[13]), (0xA7, 0xA0, sp + 4));
    m.cpu.r[13] = sp;
    // POP {.., pc} with a Thumb return address.
    assert_eq!(exec(&mut m, enc("pop {r0, r1, r4, pc}")), Ok(Flow::Jump));
    assert_eq!((m.cpu.r[0], m.cpu.r[1], m.cpu.r[4]), (0xA0, 0xA1, 0xA4));
    assert_eq!((m.cpu.r[13], m.cpu.r[15], m.cpu.thumb), (STACK_TOP, 0x9000, true));
}

#[test]
fn pop_pc_interworks_to_arm() {
    let mut m = machine();
    m.cpu.r[13] = STACK_TOP - 4;
    m.mem.write32(STACK_TOP - 4, 0x0001_2344).unwrap();
    let hw = enc("pop {pc}");
    assert_eq!(step(&mut m, hw), Ok(StepOutcome::Running), "POP {{pc}} is classified Return");
    assert_eq!((m.cpu.r[15], m.cpu.thumb, m.cpu.r[13]), (0x0001_2344, false, STACK_TOP));
    // An ARM address with bit 1 set is UNPREDICTABLE; nothing is committed.
    let mut m = machine();
    m.cpu.r[13] = STACK_TOP - 4;
    m.mem.write32(STACK_TOP - 4, 0x0001_2346).unwrap();
    assert!(matches!(exec(&mut m, hw), Err(SimError::Unpredictable { pc: CODE, .. })));
    assert_eq!((m.cpu.r[13], m.cpu.r[15], m.cpu.thumb), (STACK_TOP - 4, CODE, true));
}

#[test]
fn empty_register_lists_are_unpredictable() {
    for hw in [0xB400u16, 0xBC00, 0xC000, 0xC800] {
        let mut m = machine();
        match exec(&mut m, hw) {
            Err(SimError::Unpredictable { pc, insn, reason }) => {
                assert_eq!((pc, insn), (CODE, hw as u32));
                assert!(reason.contains("empty"), "{reason}");
            }
            other => panic!("{hw:#06x}: {other:?}"),
        }
    }
}

#[test]
fn ldmia_stmia_writeback() {
    let mut m = machine();
    m.cpu.r[0] = DATA;
    m.cpu.r[1..4].copy_from_slice(&[11, 22, 33]);
    exec(&mut m, enc("stmia r0!, {r1, r2, r3}")).unwrap();
    assert_eq!((rd32(&m, DATA), rd32(&m, DATA + 4), rd32(&m, DATA + 8), m.cpu.r[0]), (11, 22, 33, DATA + 12));
    m.cpu.r[0] = DATA + 4;
    exec(&mut m, enc("ldmia r0!, {r1, r2}")).unwrap();
    assert_eq!((m.cpu.r[1], m.cpu.r[2], m.cpu.r[0]), (22, 33, DATA + 12));
    // Base in the list: Rn gets the loaded value, no writeback.
    m.mem.write32(DATA + 0x40, 0x1234).unwrap();
    m.mem.write32(DATA + 0x44, 0x5678).unwrap();
    m.cpu.r[0] = DATA + 0x40;
    let hw = enc("ldmia r0, {r0, r1}");
    assert_eq!(hw, 0xC803, "the 16-bit LDMIA always has the writeback form");
    exec(&mut m, hw).unwrap();
    assert_eq!((m.cpu.r[0], m.cpu.r[1]), (0x1234, 0x5678));
    m.cpu.r[1] = DATA + 0x40;
    exec(&mut m, enc("ldmia r1!, {r0, r2}")).unwrap();
    assert_eq!((m.cpu.r[0], m.cpu.r[2], m.cpu.r[1]), (0x1234, 0x5678, DATA + 0x48));
    // STMIA with the base in the list stores the original base (lowest or not).
    m.cpu.r[1] = DATA + 0x80;
    m.cpu.r[2] = 0x22;
    exec(&mut m, enc("stmia r1!, {r1, r2}")).unwrap();
    assert_eq!((rd32(&m, DATA + 0x80), rd32(&m, DATA + 0x84), m.cpu.r[1]), (DATA + 0x80, 0x22, DATA + 0x88));
    m.cpu.r[0] = 0x11;
    m.cpu.r[1] = DATA + 0x90;
    exec(&mut m, enc("stmia r1!, {r0, r1}")).unwrap();
    assert_eq!((rd32(&m, DATA + 0x90), rd32(&m, DATA + 0x94), m.cpu.r[1]), (0x11, DATA + 0x90, DATA + 0x98));
    // Unaligned base: transfers ignore bits [1:0], the written-back base keeps them.
    m.cpu.r[0] = DATA + 0x41;
    exec(&mut m, enc("ldmia r0!, {r1, r2}")).unwrap();
    assert_eq!((m.cpu.r[1], m.cpu.r[2], m.cpu.r[0]), (0x1234, 0x5678, DATA + 0x49));
}

#[test]
fn loads_commit_nothing_on_a_data_abort() {
    // LDMIA whose second word is outside the data page.
    let mut m = machine();
    m.cpu.r[0] = DATA + 0xFFC;
    m.cpu.r[1] = 0x111;
    m.cpu.r[2] = 0x222;
    assert_eq!(exec(&mut m, enc("ldmia r0!, {r1, r2}")), Ok(ABORT));
    assert_eq!((m.cpu.r[0], m.cpu.r[1], m.cpu.r[2]), (DATA + 0xFFC, 0x111, 0x222));
    // POP running off the stack top.
    m.cpu.r[13] = STACK_TOP - 8;
    m.cpu.r[15] = CODE;
    assert_eq!(exec(&mut m, enc("pop {r0, r1, r4, pc}")), Ok(ABORT));
    assert_eq!((m.cpu.r[13], m.cpu.r[15], m.cpu.r[1]), (STACK_TOP - 8, CODE, 0x111));
    // PUSH whose third word is outside the data page: SP is not updated; the words
    // before the fault stay written (allowed for an aborted STM).
    m.cpu.r[13] = DATA + 0x1008;
    m.cpu.r[0] = 0xA0;
    assert_eq!(exec(&mut m, enc("push {r0, r1, r4, lr}")), Ok(ABORT));
    assert_eq!(m.cpu.r[13], DATA + 0x1008);
    assert_eq!((rd32(&m, DATA + 0xFF8), rd32(&m, DATA + 0xFFC)), (0xA0, 0x111));
    // Single loads.
    m.cpu.r[1] = UNMAPPED;
    m.cpu.r[0] = 7;
    assert_eq!(exec(&mut m, enc("ldr r0, [r1, #0]")), Ok(ABORT));
    assert_eq!(m.cpu.r[0], 7);
}

#[test]
fn machine_reports_data_faults_with_the_address() {
    let mut m = machine();
    m.cpu.r[1] = UNMAPPED;
    let e = step(&mut m, enc("ldr r0, [r1, #124]")).unwrap_err();
    assert_eq!(e, SimError::DataFault { pc: CODE, addr: UNMAPPED + 124, kind: "read" });
    assert!(e.to_string().contains("0x5000007c"), "{e}");

    let mut m = machine();
    m.cpu.r[1] = UNMAPPED;
    m.cpu.r[2] = 2;
    let e = step(&mut m, enc("strh r0, [r1, r2]")).unwrap_err();
    assert_eq!(e, SimError::DataFault { pc: CODE, addr: UNMAPPED + 2, kind: "write" });

    let mut m = machine();
    m.cpu.r[0] = DATA + 0xFF8;
    let e = step(&mut m, enc("stmia r0!, {r1, r2, r3}")).unwrap_err();
    assert_eq!(e, SimError::DataFault { pc: CODE, addr: DATA + 0x1000, kind: "write" });
    assert_eq!(m.cpu.r[0], DATA + 0xFF8, "base not written back");
}

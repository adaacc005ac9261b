//! Thumb data processing (formats 1-5 without branches, 12, 13): results and flags,
//! hand-checked. Encodings come from tests/data/thumb_formats.lst (binutils).

mod thumb_common;
use streamtrace_sim::Flow;
use thumb_common::*;

/// Run `text` with r0..r(n) = `regs` and flags `f` ("NZCV" letters); return (r0, flags).
fn op2(text: &str, regs: &[u32], f: &str) -> (u32, String) {
    let mut m = machine();
    m.cpu.r[..regs.len()].copy_from_slice(regs);
    set_flags(&mut m, f);
    assert_eq!(exec(&mut m, enc(text)), Ok(Flow::Next), "{text}");
    assert_eq!(m.cpu.r[15], CODE, "Flow::Next leaves the PC alone");
    (m.cpu.r[0], flags(&m))
}

fn f(s: &str) -> String {
    s.to_string()
}

#[test]
fn format1_shift_by_immediate() {
    assert_eq!(op2("lsls r0, r1, #1", &[0, 0x8000_0001], ""), (2, f("--C-")));
    assert_eq!(op2("lsls r0, r1, #1", &[0, 0x4000_0000], "C"), (0x8000_0000, f("N---")));
    // LSL #0 is MOVS: C (and V) untouched.
    assert_eq!(op2("movs r0, r1", &[0, 0x8000_0000], "CV"), (0x8000_0000, f("N-CV")));
    assert_eq!(op2("movs r0, r1", &[7, 0], ""), (0, f("-Z--")));
    // LSR #32 / ASR #32 are encoded with imm5 = 0.
    assert_eq!(enc("lsrs r0, r1, #32") & 0x07C0, 0);
    assert_eq!(op2("lsrs r0, r1, #32", &[0, 0x8000_0000], ""), (0, f("-ZC-")));
    assert_eq!(op2("lsrs r0, r1, #32", &[0, 0x7FFF_FFFF], "C"), (0, f("-Z--")));
    assert_eq!(op2("asrs r0, r1, #32", &[0, 0x8000_0000], ""), (0xFFFF_FFFF, f("N-C-")));
    assert_eq!(op2("asrs r0, r1, #32", &[0, 0x7FFF_FFFF], "NC"), (0, f("-Z--")));
    let mut m = machine();
    m.cpu.r[3] = 0xF000_0008;
    exec(&mut m, enc("asrs r2, r3, #4")).unwrap();
    assert_eq!((m.cpu.r[2], flags(&m)), (0xFF00_0000, f("N-C-")));
    m.cpu.r[3] = 1;
    exec(&mut m, enc("lsrs r2, r3, #1")).unwrap();
    assert_eq!((m.cpu.r[2], flags(&m)), (0, f("-ZC-")));
}

#[test]
fn format2_add_sub_register_and_imm3() {
    assert_eq!(op2("adds r0, r1, r2", &[9, 0xFFFF_FFFF, 1], ""), (0, f("-ZC-")));
    assert_eq!(op2("adds r0, r1, r2", &[9, 0x7FFF_FFFF, 1], ""), (0x8000_0000, f("N--V")));
    assert_eq!(op2("adds r0, r1, r2", &[9, 0x8000_0000, 0x8000_0000], ""), (0, f("-ZCV")));
    assert_eq!(op2("subs r0, r1, r2", &[9, 5, 7], "C"), (0xFFFF_FFFE, f("N---")));
    assert_eq!(op2("subs r0, r1, r2", &[9, 7, 5], ""), (2, f("--C-")));
    assert_eq!(op2("subs r0, r1, r2", &[9, 5, 5], ""), (0, f("-ZC-")));
    assert_eq!(op2("subs r0, r1, r2", &[9, 0x8000_0000, 1], ""), (0x7FFF_FFFF, f("--CV")));
    assert_eq!(op2("subs r0, r1, r2", &[9, 0x7FFF_FFFF, 0xFFFF_FFFF], ""), (0x8000_0000, f("N--V")));
    let mut m = machine();
    m.cpu.r[4] = 0xFFFF_FFFA;
    exec(&mut m, enc("adds r3, r4, #7")).unwrap();
    assert_eq!((m.cpu.r[3], flags(&m)), (1, f("--C-")));
    m.cpu.r[4] = 0;
    exec(&mut m, enc("subs r3, r4, #1")).unwrap();
    assert_eq!((m.cpu.r[3], flags(&m)), (0xFFFF_FFFF, f("N---")));
}

#[test]
fn format3_immediate_operations() {
    let mut m = machine();
    set_flags(&mut m, "NCV");
    m.cpu.r[5] = 99;
    exec(&mut m, enc("movs r5, #0")).unwrap();
    assert_eq!((m.cpu.r[5], flags(&m)), (0, f("-ZCV")), "MOV #imm sets N, Z only");
    exec(&mut m, enc("movs r5, #255")).unwrap();
    assert_eq!((m.cpu.r[5], flags(&m)), (255, f("--CV")));
    for (r6, fl) in [(128, "-ZC-"), (0, "N---"), (0x8000_0000, "--CV"), (200, "--C-")] {
        m.cpu.r[6] = r6;
        exec(&mut m, enc("cmp r6, #128")).unwrap();
        assert_eq!((m.cpu.r[6], flags(&m)), (r6, f(fl)), "cmp {r6:#x}, #128");
    }
    m.cpu.r[7] = 0xFFFF_FFFF;
    exec(&mut m, enc("adds r7, #1")).unwrap();
    assert_eq!((m.cpu.r[7], flags(&m)), (0, f("-ZC-")));
    exec(&mut m, enc("subs r7, #1")).unwrap();
    assert_eq!((m.cpu.r[7], flags(&m)), (0xFFFF_FFFF, f("N---")));
    m.cpu.r[7] = 0x7FFF_FFFF;
    exec(&mut m, enc("adds r7, #1")).unwrap();
    assert_eq!((m.cpu.r[7], flags(&m)), (0x8000_0000, f("N--V")));
}

#[test]
fn format4_logical_operations_keep_c_and_v() {
    assert_eq!(op2("ands r0, r1", &[0xF0F0, 0xFF00], "CV"), (0xF000, f("--CV")));
    assert_eq!(op2("ands r0, r1", &[0xF0F0, 0x0F0F], ""), (0, f("-Z--")));
    assert_eq!(op2("eors r0, r1", &[0xFFFF_FFFF, 0x7FFF_FFFF], "C"), (0x8000_0000, f("N-C-")));
    assert_eq!(op2("orrs r0, r1", &[0x8000_0000, 1], "V"), (0x8000_0001, f("N--V")));
    assert_eq!(op2("bics r0, r1", &[0xFF, 0x0F], ""), (0xF0, f("----")));
    assert_eq!(op2("mvns r0, r1", &[5, 0], ""), (0xFFFF_FFFF, f("N---")));
    assert_eq!(op2("mvns r0, r1", &[5, 0xFFFF_FFFF], "C"), (0, f("-ZC-")));
    // TST writes no register.
    assert_eq!(op2("tst r0, r1", &[0x0F, 0xF0], "NCV"), (0x0F, f("-ZCV")));
    assert_eq!(op2("tst r0, r1", &[0x8000_000F, 0x8000_0000], "Z"), (0x8000_000F, f("N---")));
}

#[test]
fn format4_register_shifts_by_0_32_33() {
    // LSL
    assert_eq!(op2("lsls r0, r1", &[0x8000_0001, 0], "C"), (0x8000_0001, f("N-C-")), "by 0: C kept");
    assert_eq!(op2("lsls r0, r1", &[0x8000_0001, 0], ""), (0x8000_0001, f("N---")), "by 0: C kept");
    assert_eq!(op2("lsls r0, r1", &[0x8000_0001, 1], ""), (2, f("--C-")));
    assert_eq!(op2("lsls r0, r1", &[0x8000_0001, 31], ""), (0x8000_0000, f("N---")));
    assert_eq!(op2("lsls r0, r1", &[0x8000_0001, 32], ""), (0, f("-ZC-")), "by 32: C = bit 0");
    assert_eq!(op2("lsls r0, r1", &[0x8000_0001, 33], "C"), (0, f("-Z--")), "by 33: C = 0");
    assert_eq!(op2("lsls r0, r1", &[0x8000_0001, 0x101], ""), (2, f("--C-")), "only Rs[7:0]");
    assert_eq!(op2("lsls r0, r1", &[3, 0x100], "V"), (3, f("---V")), "Rs[7:0] = 0");
    // LSR
    assert_eq!(op2("lsrs r0, r1", &[0x8000_0001, 0], "C"), (0x8000_0001, f("N-C-")));
    assert_eq!(op2("lsrs r0, r1", &[0x8000_0001, 1], ""), (0x4000_0000, f("--C-")));
    assert_eq!(op2("lsrs r0, r1", &[0x8000_0001, 32], ""), (0, f("-ZC-")), "by 32: C = bit 31");
    assert_eq!(op2("lsrs r0, r1", &[0x8000_0001, 33], "C"), (0, f("-Z--")));
    assert_eq!(op2("lsrs r0, r1", &[0x8000_0001, 255], "C"), (0, f("-Z--")));
    // ASR
    assert_eq!(op2("asrs r0, r1", &[0x8000_0000, 0], ""), (0x8000_0000, f("N---")));
    assert_eq!(op2("asrs r0, r1", &[0x8000_0000, 31], ""), (0xFFFF_FFFF, f("N---")));
    assert_eq!(op2("asrs r0, r1", &[0x8000_0000, 32], ""), (0xFFFF_FFFF, f("N-C-")));
    assert_eq!(op2("asrs r0, r1", &[0x8000_0000, 33], ""), (0xFFFF_FFFF, f("N-C-")));
    assert_eq!(op2("asrs r0, r1", &[0x4000_0000, 200], "C"), (0, f("-Z--")));
    // ROR
    assert_eq!(op2("rors r0, r1", &[0x8000_0001, 0], ""), (0x8000_0001, f("N---")));
    assert_eq!(op2("rors r0, r1", &[0x8000_0001, 1], ""), (0xC000_0000, f("N-C-")));
    assert_eq!(op2("rors r0, r1", &[0x8000_0001, 4], "C"), (0x1800_0000, f("----")));
    assert_eq!(op2("rors r0, r1", &[0x8000_0001, 32], ""), (0x8000_0001, f("N-C-")), "by 32: C = bit 31");
    assert_eq!(op2("rors r0, r1", &[0x0000_0001, 32], "C"), (1, f("----")));
    assert_eq!(op2("rors r0, r1", &[0x8000_0001, 33], ""), (0xC000_0000, f("N-C-")), "by 33 = by 1");
    assert_eq!(op2("rors r0, r1", &[0x8000_0001, 36], "C"), (0x1800_0000, f("----")));
}

#[test]
fn format4_arithmetic_flags() {
    // ADC
    assert_eq!(op2("adcs r0, r1", &[0xFFFF_FFFF, 0], "C"), (0, f("-ZC-")));
    assert_eq!(op2("adcs r0, r1", &[0xFFFF_FFFF, 0], ""), (0xFFFF_FFFF, f("N---")));
    assert_eq!(op2("adcs r0, r1", &[0x7FFF_FFFF, 0], "C"), (0x8000_0000, f("N--V")));
    assert_eq!(op2("adcs r0, r1", &[0xFFFF_FFFF, 0xFFFF_FFFF], "C"), (0xFFFF_FFFF, f("N-C-")));
    // SBC: a - b - !C
    assert_eq!(op2("sbcs r0, r1", &[5, 5, 0], ""), (0xFFFF_FFFF, f("N---")));
    assert_eq!(op2("sbcs r0, r1", &[5, 5], "C"), (0, f("-ZC-")));
    assert_eq!(op2("sbcs r0, r1", &[0x8000_0000, 0], ""), (0x7FFF_FFFF, f("--CV")));
    assert_eq!(op2("sbcs r0, r1", &[0, 0xFFFF_FFFF], ""), (0, f("-Z--")));
    // NEG = 0 - Rm
    assert_eq!(op2("negs r0, r1", &[7, 0], ""), (0, f("-ZC-")));
    assert_eq!(op2("negs r0, r1", &[7, 1], "C"), (0xFFFF_FFFF, f("N---")));
    assert_eq!(op2("negs r0, r1", &[7, 0x8000_0000], ""), (0x8000_0000, f("N--V")));
    assert_eq!(op2("negs r0, r1", &[7, 0xFFFF_FFFF], ""), (1, f("----")));
    // CMP / CMN write no register.
    assert_eq!(op2("cmp r0, r1", &[1, 2], "ZC"), (1, f("N---")));
    assert_eq!(op2("cmp r0, r1", &[2, 2], ""), (2, f("-ZC-")));
    assert_eq!(op2("cmp r0, r1", &[0x8000_0000, 1], ""), (0x8000_0000, f("--CV")));
    assert_eq!(op2("cmn r0, r1", &[0xFFFF_FFFF, 1], ""), (0xFFFF_FFFF, f("-ZC-")));
    assert_eq!(op2("cmn r0, r1", &[0x7FFF_FFFF, 1], "C"), (0x7FFF_FFFF, f("N--V")));
}

#[test]
fn format4_mul_sets_only_n_and_z() {
    assert_eq!(op2("muls r0, r1", &[0x1_0000, 0x1_0000], "CV"), (0, f("-ZCV")));
    assert_eq!(op2("muls r0, r1", &[0x1_0000, 0x1_0000], ""), (0, f("-Z--")));
    assert_eq!(op2("muls r0, r1", &[0xFFFF_FFFD, 5], ""), (0xFFFF_FFF1, f("N---")));
    assert_eq!(op2("muls r0, r1", &[0xFFFF_FFFD, 5], "ZCV"), (0xFFFF_FFF1, f("N-CV")));
    assert_eq!(op2("muls r0, r1", &[12345, 678], "N"), (12345 * 678, f("----")));
}

#[test]
fn format5_hi_register_operations() {
    let mut m = machine();
    set_flags(&mut m, "ZV");
    m.cpu.r[8] = 10;
    m.cpu.r[1] = 0xFFFF_FFFB;
    exec(&mut m, enc("add r8, r1")).unwrap();
    assert_eq!((m.cpu.r[8], flags(&m)), (5, f("-Z-V")), "hi ADD sets no flags");
    // PC operand = pc + 4, not word-aligned for the hi-register ADD.
    m.cpu.r[15] = CODE + 2;
    m.cpu.r[0] = 1;
    assert_eq!(exec(&mut m, enc("add r0, pc")), Ok(Flow::Next));
    assert_eq!((m.cpu.r[0], m.cpu.r[15]), (CODE + 6 + 1, CODE + 2));
    m.cpu.r[15] = CODE;
    m.cpu.r[2] = (-16i32) as u32;
    exec(&mut m, enc("add sp, r2")).unwrap();
    assert_eq!(m.cpu.r[13], STACK_TOP - 16);
    m.cpu.r[2] = 0xABCD;
    exec(&mut m, enc("mov r9, r2")).unwrap();
    exec(&mut m, enc("mov r3, sp")).unwrap();
    assert_eq!((m.cpu.r[9], m.cpu.r[3], flags(&m)), (0xABCD, STACK_TOP - 16, f("-Z-V")));
    // CMP hi sets flags.
    m.cpu.r[8] = 3;
    m.cpu.r[9] = 3;
    exec(&mut m, enc("cmp r8, r9")).unwrap();
    assert_eq!(flags(&m), "-ZC-");
    m.cpu.r[0] = 0;
    m.cpu.r[10] = 1;
    exec(&mut m, enc("cmp r0, sl")).unwrap();
    assert_eq!(flags(&m), "N---");
    m.cpu.r[0] = 0x8000_0000;
    exec(&mut m, enc("cmp r0, sl")).unwrap();
    assert_eq!(flags(&m), "--CV");
    // Hi-register encodings with two low registers (UNPREDICTABLE on v5) run as on v6.
    m.cpu.r[1] = 4;
    m.cpu.r[2] = 5;
    assert_eq!(exec(&mut m, 0x4411), Ok(Flow::Next)); // add r1, r2
    assert_eq!(exec(&mut m, 0x4610), Ok(Flow::Next)); // mov r0, r2
    assert_eq!((m.cpu.r[1], m.cpu.r[0], flags(&m)), (9, 5, f("--CV")));
}

#[test]
fn format12_13_address_generation_and_sp_adjust() {
    let mut m = machine();
    // ADD Rd, PC, #imm uses (pc + 4) & !3.
    for pc in [CODE, CODE + 2] {
        m.cpu.r[15] = pc;
        exec(&mut m, enc("add r0, pc, #8")).unwrap();
        assert_eq!(m.cpu.r[0], CODE + 4 + 8, "at {pc:#x}");
    }
    exec(&mut m, enc("add r1, sp, #1020")).unwrap();
    assert_eq!(m.cpu.r[1], STACK_TOP + 1020);
    exec(&mut m, enc("add sp, #508")).unwrap();
    assert_eq!(m.cpu.r[13], STACK_TOP + 508);
    exec(&mut m, enc("sub sp, #16")).unwrap();
    exec(&mut m, enc("sub sp, #16")).unwrap();
    assert_eq!(m.cpu.r[13], STACK_TOP + 508 - 32);
    assert_eq!(flags(&m), "----");
}

/// A small program through the machine loop: sum 1..=10 with a Bcc loop
/// (thumb_programs.s, `_start`).
#[test]
fn loop_through_the_machine() {
    let mut m = machine();
    load_listing(&mut m, PROGRAMS_LST);
    let end = line(PROGRAMS_LST, "bkpt 0x0000").addr;
    let mut n = 0;
    while m.cpu.r[15] != end {
        m.step(&mut streamtrace_sim::NoHook).unwrap();
        n += 1;
        assert!(n < 100);
    }
    assert_eq!((m.cpu.r[0], m.cpu.r[1], n), (55, 0, 2 + 3 * 10));
    assert_eq!(m.retired, 32);
    assert!(m.cpu.thumb);
}

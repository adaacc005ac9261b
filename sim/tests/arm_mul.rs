//! ARM executor: multiplies, DSP (saturating arithmetic, halfword multiplies, CLZ) and the
//! XScale CP0 accumulator. Encodings from binutils (tests/data/arm_mul.s).

mod arm_support;

use arm_support::*;
use streamtrace_sim::{Cpu, Flow, Mode, SimError};

fn mul(word: u32, regs: &[u32], f: &str) -> Cpu {
    let mut cpu = cpu_in(Mode::User, &regs.iter().copied().enumerate().collect::<Vec<_>>());
    set_flags(&mut cpu, f);
    let mut mem = memory();
    let one = exec_one(&mut cpu, &mut mem, word);
    assert_eq!(one.flow, Ok(Flow::Next), "{word:#010x}");
    cpu
}

fn unpredictable(word: u32, regs: &[u32]) -> bool {
    let mut cpu = cpu_in(Mode::User, &regs.iter().copied().enumerate().collect::<Vec<_>>());
    let mut mem = memory();
    matches!(exec_one(&mut cpu, &mut mem, word).flow, Err(SimError::Unpredictable { pc: CODE, .. }))
}

#[test]
fn mul_and_mla_set_only_n_and_z() {
    let c = mul(0xe0000291 /* mul r0, r1, r2 */, &[0, 7, 6], "nzcv");
    assert_eq!(c.r[0], 42);
    // MULS: N from the result; C and V unaffected on ARMv5.
    let c = mul(0xe0100291 /* muls r0, r1, r2 */, &[0, 0xFFFF_FFFF, 2], "nZCV");
    assert_eq!((c.r[0], flags(&c).as_str()), (0xFFFF_FFFE, "NzCV"));
    let c = mul(0xe0100291 /* muls r0, r1, r2 */, &[0, 0x1_0000, 0x1_0000], "Nzcv");
    assert_eq!((c.r[0], flags(&c).as_str()), (0, "nZcv"));
    // MLA: 3 * 4 + 5; wraps modulo 2^32.
    let c = mul(0xe0203291 /* mla r0, r1, r2, r3 */, &[0, 3, 4, 5], "nzcv");
    assert_eq!(c.r[0], 17);
    let c = mul(0xe0303291 /* mlas r0, r1, r2, r3 */, &[0, 0x1_0000, 0x1_0000, 1], "nzCv");
    assert_eq!((c.r[0], flags(&c).as_str()), (1, "nzCv"));
    // Rd = Rm is accepted (operands are read first).
    let c = mul(0xe0010291 /* mul r1, r1, r2 */, &[0, 5, 6], "nzcv");
    assert_eq!(c.r[1], 30);
    assert!(unpredictable(
        0xe00f0291, /* .inst 0xe00f0291 @ mul pc, r1, r2 (gas refuses; mul r0, r1, r2 = 0xe0000291) */
        &[]
    ));
}

#[test]
fn long_multiplies_signed_and_unsigned() {
    // UMULL: 0xFFFFFFFF^2 = 0xFFFFFFFE_00000001.
    let c = mul(0xe0810392 /* umull r0, r1, r2, r3 */, &[0, 0, 0xFFFF_FFFF, 0xFFFF_FFFF], "nzcv");
    assert_eq!((c.r[0], c.r[1]), (1, 0xFFFF_FFFE));
    // SMULL: (-1) * (-1) = 1; (-2) * 3 = -6.
    let c = mul(0xe0c10392 /* smull r0, r1, r2, r3 */, &[0, 0, 0xFFFF_FFFF, 0xFFFF_FFFF], "nzcv");
    assert_eq!((c.r[0], c.r[1]), (1, 0));
    let c = mul(0xe0d10392 /* smulls r0, r1, r2, r3 */, &[0, 0, (-2i32) as u32, 3], "nZCV");
    assert_eq!((c.r[0], c.r[1], flags(&c).as_str()), (0xFFFF_FFFA, 0xFFFF_FFFF, "NzCV"));
    // Z needs all 64 bits zero: 0x10000^2 = 1 << 32.
    let c = mul(0xe0910392 /* umulls r0, r1, r2, r3 */, &[0, 0, 0x1_0000, 0x1_0000], "nZcv");
    assert_eq!((c.r[0], c.r[1], flags(&c).as_str()), (0, 1, "nzcv"));
    let c = mul(0xe0910392 /* umulls r0, r1, r2, r3 */, &[5, 5, 0, 0x1234], "nzcv");
    assert_eq!((c.r[0], c.r[1], flags(&c).as_str()), (0, 0, "nZcv"));
    // UMLAL: 0x1_FFFFFFFF + 1 * 1 = 0x2_00000000.
    let c = mul(0xe0a10392 /* umlal r0, r1, r2, r3 */, &[0xFFFF_FFFF, 1, 1, 1], "nzcv");
    assert_eq!((c.r[0], c.r[1]), (0, 2));
    // SMLAL: 0 + (-1) * 1 = -1 (64-bit).
    let c = mul(0xe0e10392 /* smlal r0, r1, r2, r3 */, &[0, 0, 0xFFFF_FFFF, 1], "nzcv");
    assert_eq!((c.r[0], c.r[1]), (0xFFFF_FFFF, 0xFFFF_FFFF));
    // Same operands unsigned: 0 + 0xFFFFFFFF * 1.
    let c = mul(0xe0a10392 /* umlal r0, r1, r2, r3 */, &[0, 0, 0xFFFF_FFFF, 1], "nzcv");
    assert_eq!((c.r[0], c.r[1]), (0xFFFF_FFFF, 0));
    assert!(unpredictable(
        0xe0800392, /* .inst 0xe0800392 @ umull r0, r0, r2, r3 (gas refuses RdHi = RdLo; umull r0, r1, r2, r3 = 0xe0810392) */
        &[]
    ));
}

#[test]
fn smlaxy_smulxy_and_q() {
    // Halves: r1 = (3, -2), r2 = (5, 4).
    let regs = [0, 0x0003_FFFE, 0x0005_0004, 10];
    assert_eq!(mul(0xe1003281 /* smlabb r0, r1, r2, r3 */, &regs, "nzcv").r[0], (-8i32 + 10) as u32);
    assert_eq!(mul(0xe10032c1 /* smlabt r0, r1, r2, r3 */, &regs, "nzcv").r[0], (-10i32 + 10) as u32);
    assert_eq!(mul(0xe10032a1 /* smlatb r0, r1, r2, r3 */, &regs, "nzcv").r[0], 12 + 10);
    assert_eq!(mul(0xe10032e1 /* smlatt r0, r1, r2, r3 */, &regs, "nzcv").r[0], 15 + 10);
    assert_eq!(mul(0xe1600281 /* smulbb r0, r1, r2 */, &regs, "nzcv").r[0], (-8i32) as u32);
    assert_eq!(mul(0xe16002a1 /* smultb r0, r1, r2 */, &regs, "nzcv").r[0], 12);
    assert_eq!(mul(0xe16002c1 /* smulbt r0, r1, r2 */, &regs, "nzcv").r[0], (-10i32) as u32);
    // (-32768)^2 = 0x40000000, + 0x40000000 overflows: wraps, Q set, flags untouched.
    let c = mul(0xe1003281 /* smlabb r0, r1, r2, r3 */, &[0, 0x8000, 0x8000, 0x4000_0000], "nzcv");
    assert_eq!((c.r[0], c.q, flags(&c).as_str()), (0x8000_0000, true, "nzcv"));
    // Q is sticky: a later non-overflowing SMLA leaves it set.
    let mut cpu = cpu_in(Mode::User, &[(1, 2), (2, 3), (3, 4)]);
    cpu.q = true;
    let mut mem = memory();
    exec_one(&mut cpu, &mut mem, 0xe1003281 /* smlabb r0, r1, r2, r3 */).flow.unwrap();
    assert_eq!((cpu.r[0], cpu.q), (10, true));
    cpu.q = false;
    exec_one(&mut cpu, &mut mem, 0xe1003281 /* smlabb r0, r1, r2, r3 */).flow.unwrap();
    assert!(!cpu.q);
}

#[test]
fn smulwy_and_smlawy() {
    // (65536 * -1) >> 16 = -1.
    assert_eq!(mul(0xe12002a1 /* smulwb r0, r1, r2 */, &[0, 0x1_0000, 0x0000_FFFF], "nzcv").r[0], 0xFFFF_FFFF);
    // (0x12345678 * 2) >> 16 = 0x2468.
    assert_eq!(mul(0xe12002e1 /* smulwt r0, r1, r2 */, &[0, 0x1234_5678, 0x0002_0000], "nzcv").r[0], 0x2468);
    // Negative product keeps bits[47:16]: (-0x10000 * 3) >> 16 = -3.
    assert_eq!(mul(0xe12002a1 /* smulwb r0, r1, r2 */, &[0, 0xFFFF_0000, 3], "nzcv").r[0], (-3i32) as u32);
    // SMLAWB: 0x7FFFFFFF * 0x7FFF = 0x3FFF_7FFF_8001; >> 16 = 0x3FFF7FFF; + 0x7FFFFFFF overflows.
    let c = mul(0xe1203281 /* smlawb r0, r1, r2, r3 */, &[0, 0x7FFF_FFFF, 0x7FFF, 0x7FFF_FFFF], "nzcv");
    assert_eq!((c.r[0], c.q), (0xBFFF_7FFE, true));
    let c = mul(0xe12032c1 /* smlawt r0, r1, r2, r3 */, &[0, 0x1234_5678, 0x0002_0000, 1], "nzcv");
    assert_eq!((c.r[0], c.q), (0x2469, false));
}

#[test]
fn smlalxy_accumulates_64_bits() {
    // RdLo = r0, RdHi = r1: 0x0_FFFFFFFF + (-1 * 2) = 0x0_FFFFFFFD.
    let c = mul(0xe1410382 /* smlalbb r0, r1, r2, r3 */, &[0xFFFF_FFFF, 0, 0xFFFF, 2], "nzcv");
    assert_eq!((c.r[0], c.r[1]), (0xFFFF_FFFD, 0));
    // Carry into the high word: 0x0_FFFFFFFF + 2 * 1.
    let c = mul(0xe1410382 /* smlalbb r0, r1, r2, r3 */, &[0xFFFF_FFFF, 0, 2, 1], "nzcv");
    assert_eq!((c.r[0], c.r[1]), (1, 1));
    // Negative product borrows from the high word: 0 + (-3 * 1) = -3; and TT halves.
    let c = mul(0xe14103e2 /* smlaltt r0, r1, r2, r3 */, &[0, 0, 0xFFFD_0000, 0x0001_0000], "nzcv");
    assert_eq!((c.r[0], c.r[1]), (0xFFFF_FFFD, 0xFFFF_FFFF));
    // No flags, no Q, even on 64-bit wrap.
    let c = mul(0xe1410382 /* smlalbb r0, r1, r2, r3 */, &[0xFFFF_FFFF, 0xFFFF_FFFF, 1, 1], "nzcv");
    assert_eq!((c.r[0], c.r[1], c.q, flags(&c).as_str()), (0, 0, false, "nzcv"));
}

#[test]
fn saturating_arithmetic() {
    // QADD r0, r1, r2 = sat(r1 + r2).
    let c = mul(0xe1020051 /* qadd r0, r1, r2 */, &[0, 0x7FFF_FFFF, 1], "nzcv");
    assert_eq!((c.r[0], c.q), (0x7FFF_FFFF, true));
    let c = mul(0xe1020051 /* qadd r0, r1, r2 */, &[0, 1, 2], "nzcv");
    assert_eq!((c.r[0], c.q), (3, false));
    // QSUB r0, r1, r2 = sat(r1 - r2).
    let c = mul(0xe1220051 /* qsub r0, r1, r2 */, &[0, 0x8000_0000, 1], "nzcv");
    assert_eq!((c.r[0], c.q), (0x8000_0000, true));
    // QDADD: sat(r1 + sat(2 * r2)); doubling 0x40000000 saturates (Q) to 0x7FFFFFFF.
    let c = mul(0xe1420051 /* qdadd r0, r1, r2 */, &[0, 0, 0x4000_0000], "nzcv");
    assert_eq!((c.r[0], c.q), (0x7FFF_FFFF, true));
    // ... and the sum may saturate the other way: -5 + sat(2 * -0x40000000) = -5 - 0x80000000.
    let c = mul(0xe1420051 /* qdadd r0, r1, r2 */, &[0, (-5i32) as u32, 0xC000_0000], "nzcv");
    assert_eq!((c.r[0], c.q), (0x8000_0000, true));
    let c = mul(0xe1420051 /* qdadd r0, r1, r2 */, &[0, 1, 3], "nzcv");
    assert_eq!((c.r[0], c.q), (7, false));
    // QDSUB: 0 - 2 * (-0x40000000) = 0x80000000 -> saturates to 0x7FFFFFFF.
    let c = mul(0xe1620051 /* qdsub r0, r1, r2 */, &[0, 0, 0xC000_0000], "nzcv");
    assert_eq!((c.r[0], c.q), (0x7FFF_FFFF, true));
    // Flags are never touched.
    assert_eq!(flags(&mul(0xe1020051 /* qadd r0, r1, r2 */, &[0, 0x7FFF_FFFF, 1], "NzCv")), "NzCv");
}

#[test]
fn count_leading_zeros() {
    for (v, n) in [(0u32, 32), (1, 31), (0x8000_0000, 0), (0x0001_FFFF, 15)] {
        assert_eq!(mul(0xe16f0f11 /* clz r0, r1 */, &[99, v], "nzcv").r[0], n, "clz({v:#x})");
    }
    assert!(unpredictable(
        0xe16fff11, /* .inst 0xe16fff11 @ clz pc, r1 (gas refuses; clz r0, r1 = 0xe16f0f11) */
        &[]
    ));
}

#[test]
fn xscale_accumulator() {
    let mut cpu = cpu_in(Mode::User, &[(1, (-3i32) as u32), (2, 5)]);
    let mut mem = memory();
    let mut ex = |cpu: &mut Cpu, w: u32| assert_eq!(exec_one(cpu, &mut mem, w).flow, Ok(Flow::Next), "{w:#x}");
    // MIA: acc0 = -15, kept as 40 bits.
    ex(&mut cpu, 0xee202011 /* mia acc0, r1, r2 */);
    assert_eq!(cpu.acc0, 0xFF_FFFF_FFF1);
    // MRA sign-extends bit 39 into RdHi.
    ex(&mut cpu, 0xec543000 /* mra r3, r4, acc0 */);
    assert_eq!((cpu.r[3], cpu.r[4]), (0xFFFF_FFF1, 0xFFFF_FFFF));
    // MAR takes RdHi[7:0].
    cpu.r[5] = 0x1234_5678;
    cpu.r[6] = 0xABCD_EF80;
    ex(&mut cpu, 0xec465000 /* mar acc0, r5, r6 */);
    assert_eq!(cpu.acc0, 0x80_1234_5678);
    ex(&mut cpu, 0xec543000 /* mra r3, r4, acc0 */);
    assert_eq!((cpu.r[3], cpu.r[4]), (0x1234_5678, 0xFFFF_FF80));
    // MIAPH: 2 * 4 + 3 * (-1) = 5 from zero.
    cpu.r[7] = 0;
    ex(&mut cpu, 0xec477000 /* mar acc0, r7, r7 */);
    cpu.r[1] = 0x0002_0003;
    cpu.r[2] = 0x0004_FFFF;
    ex(&mut cpu, 0xee282011 /* miaph acc0, r1, r2 */);
    assert_eq!(cpu.acc0, 5);
    // MIAxy: x = half of Rm (r1 = 7:2), y = half of Rs (r2 = 3:5).
    cpu.r[1] = 0x0007_0002;
    cpu.r[2] = 0x0003_0005;
    ex(&mut cpu, 0xee2c2011 /* miabb acc0, r1, r2 */); // + 2 * 5
    assert_eq!(cpu.acc0, 15);
    ex(&mut cpu, 0xee2d2011 /* miabt acc0, r1, r2 */); // + 2 * 3
    assert_eq!(cpu.acc0, 21);
    ex(&mut cpu, 0xee2e2011 /* miatb acc0, r1, r2 */); // + 7 * 5
    assert_eq!(cpu.acc0, 56);
    ex(&mut cpu, 0xee2f2011 /* miatt acc0, r1, r2 */); // + 7 * 3
    assert_eq!(cpu.acc0, 77);
    // 40-bit wrap: 0xFF_FFFFFFFF + 1 * 1 = 0.
    cpu.r[8] = 0xFFFF_FFFF;
    cpu.r[9] = 0xFF;
    ex(&mut cpu, 0xec498000 /* mar acc0, r8, r9 */);
    cpu.r[1] = 1;
    cpu.r[2] = 1;
    ex(&mut cpu, 0xee202011 /* mia acc0, r1, r2 */);
    assert_eq!(cpu.acc0, 0);
    // MIA of large operands keeps product bits[39:0]: 0x10000 * 0x10000000 = 1 << 44 -> 0.
    cpu.r[1] = 0x1_0000;
    cpu.r[2] = 0x1000_0000;
    ex(&mut cpu, 0xee202011 /* mia acc0, r1, r2 */);
    assert_eq!(cpu.acc0, 0);
}

#[test]
fn other_coprocessor_0_operations_are_undefined() {
    let mut cpu = cpu_in(Mode::Supervisor, &[]);
    let mut mem = memory();
    for w in [
        0xec410100, /* mcrr p1, 0, r0, r1, c0 */
        0xec510010, /* mrrc p0, 1, r0, r1, c0 */
        0xee000010, /* mcr p0, 0, r0, c0, c0, 0 */
        0xee300010, /* mrc p0, 1, r0, c0, c0, 0 */
    ] {
        assert_eq!(
            exec_one(&mut cpu, &mut mem, w).flow,
            Ok(Flow::Exception(streamtrace_sim::ExceptionKind::Undefined)),
            "{w:#010x}"
        );
    }
}

//! ARM executor: data processing (flags, shifter corner cases, pc operands and pc writes),
//! exception return, condition codes, MRS/MSR. Encodings come from binutils (see
//! tests/data/arm_alu.s); expected values are worked out by hand in the comments.

mod arm_support;

use arm_support::*;
use streamtrace_sim::cpu::{CPSR_C, CPSR_F, CPSR_I, CPSR_N, CPSR_Q, CPSR_T, CPSR_Z};
use streamtrace_sim::{Cpu, Flow, Memory, Mode, SimError};

/// Execute one instruction with r0.. = `regs` and flags `f`; returns the CPU.
fn alu(word: u32, regs: &[u32], f: &str) -> Cpu {
    let mut cpu = cpu_in(Mode::User, &regs.iter().copied().enumerate().collect::<Vec<_>>());
    set_flags(&mut cpu, f);
    let mut mem = memory();
    let one = exec_one(&mut cpu, &mut mem, word);
    assert_eq!(one.flow, Ok(Flow::Next), "{word:#010x}");
    assert!(one.log.is_empty());
    assert_eq!(cpu.r[15], CODE, "sequential instructions leave r15 to the machine");
    cpu
}

#[test]
fn add_overflow_and_carry() {
    // 0x7FFFFFFF + 1 = 0x80000000: signed overflow, no carry.
    let c = alu(0xe0902001 /* adds r2, r0, r1 */, &[0x7FFF_FFFF, 1], "nzcv");
    assert_eq!((c.r[2], flags(&c).as_str()), (0x8000_0000, "NzcV"));
    // 0xFFFFFFFF + 1 = 0 with carry, no overflow.
    let c = alu(0xe0902001 /* adds r2, r0, r1 */, &[0xFFFF_FFFF, 1], "nzcV");
    assert_eq!((c.r[2], flags(&c).as_str()), (0, "nZCv"));
    // Without S nothing changes in the flags.
    let c = alu(0xe0802001 /* add r2, r0, r1 */, &[0xFFFF_FFFF, 1], "NzcV");
    assert_eq!((c.r[2], flags(&c).as_str()), (0, "NzcV"));
    // ADC: 0xFFFFFFFF + 0 + C = 0, carry out.
    let c = alu(0xe0b02001 /* adcs r2, r0, r1 */, &[0xFFFF_FFFF, 0], "nzCv");
    assert_eq!((c.r[2], flags(&c).as_str()), (0, "nZCv"));
    let c = alu(0xe0a02001 /* adc r2, r0, r1 */, &[1, 2], "nzCv");
    assert_eq!(c.r[2], 4);
    // CMN 0x7FFFFFFF, 1: like ADDS, no register written.
    let c = alu(0xe1700001 /* cmn r0, r1 */, &[0x7FFF_FFFF, 1, 0xAAAA], "nzcv");
    assert_eq!((c.r[2], flags(&c).as_str()), (0xAAAA, "NzcV"));
}

#[test]
fn subtract_borrow_and_overflow() {
    // 0x80000000 - 1 = 0x7FFFFFFF: overflow, no borrow (C = 1).
    let c = alu(0xe0502001 /* subs r2, r0, r1 */, &[0x8000_0000, 1], "nzcv");
    assert_eq!((c.r[2], flags(&c).as_str()), (0x7FFF_FFFF, "nzCV"));
    // 5 - 7: borrow (C = 0), negative.
    let c = alu(0xe0502001 /* subs r2, r0, r1 */, &[5, 7], "nzCv");
    assert_eq!((c.r[2], flags(&c).as_str()), (0xFFFF_FFFE, "Nzcv"));
    // CMP equal: Z and C.
    let c = alu(0xe1500001 /* cmp r0, r1 */, &[5, 5], "Nzcv");
    assert_eq!(flags(&c), "nZCv");
    // CMP 0, 1 (unsigned lower): C clear -> LO.
    let c = alu(0xe3500001 /* cmp r0, #1 */, &[0], "nzCv");
    assert_eq!(flags(&c), "Nzcv");
    // SBC with C = 0 subtracts one more: 10 - 3 - 1.
    let c = alu(0xe0c02001 /* sbc r2, r0, r1 */, &[10, 3], "nzcv");
    assert_eq!(c.r[2], 6);
    // SBCS 0 - 0 - 1 = 0xFFFFFFFF, borrow.
    let c = alu(0xe0d02001 /* sbcs r2, r0, r1 */, &[0, 0], "nzcv");
    assert_eq!((c.r[2], flags(&c).as_str()), (0xFFFF_FFFF, "Nzcv"));
    // RSB r2, r0, #0 negates; RSBS of 0 gives Z and C (0 - 0, no borrow).
    let c = alu(0xe2602000 /* rsb r2, r0, #0 */, &[5], "nzcv");
    assert_eq!(c.r[2], (-5i32) as u32);
    let c = alu(0xe2702000 /* rsbs r2, r0, #0 */, &[0], "nzcv");
    assert_eq!((c.r[2], flags(&c).as_str()), (0, "nZCv"));
    // RSBS 0 - 0x80000000 overflows (result 0x80000000, borrow).
    let c = alu(0xe2702000 /* rsbs r2, r0, #0 */, &[0x8000_0000], "nzcv");
    assert_eq!((c.r[2], flags(&c).as_str()), (0x8000_0000, "NzcV"));
    // RSC: op2 - Rn - !C = 10 - 3 - 1.
    let c = alu(0xe0e02001 /* rsc r2, r0, r1 */, &[3, 10], "nzcv");
    assert_eq!(c.r[2], 6);
    let c = alu(0xe0f02001 /* rscs r2, r0, r1 */, &[3, 10], "nzCv");
    assert_eq!((c.r[2], flags(&c).as_str()), (7, "nzCv"));
}

#[test]
fn logical_ops_take_carry_from_the_shifter_and_keep_v() {
    // Immediate with rotation: C = bit 31 of the immediate (0xFF000000 -> 1).
    let c = alu(0xe21024ff /* ands r2, r0, #0xFF000000 */, &[0x8000_0001], "nzcV");
    assert_eq!((c.r[2], flags(&c).as_str()), (0x8000_0000, "NzCV"));
    // Immediate without rotation: C unchanged.
    let c = alu(0xe3b02001 /* movs r2, #1 */, &[], "nzCv");
    assert_eq!((c.r[2], flags(&c).as_str()), (1, "nzCv"));
    let c = alu(0xe3b02000 /* movs r2, #0 */, &[], "Nzcv");
    assert_eq!((c.r[2], flags(&c).as_str()), (0, "nZcv"));
    // 0x104 = 0x41 ror 30: rotated immediate with bit 31 clear -> C = 0.
    let c = alu(0xe3902f41 /* orrs r2, r0, #0x104 */, &[0], "nzCv");
    assert_eq!((c.r[2], flags(&c).as_str()), (0x104, "nzcv"));
    let c = alu(0xe0302001 /* eors r2, r0, r1 */, &[0xF0F0, 0xFF00], "nzCV");
    assert_eq!((c.r[2], flags(&c).as_str()), (0x0FF0, "nzCV"));
    let c = alu(0xe3c020ff /* bic r2, r0, #0xFF */, &[0x1234], "nzcv");
    assert_eq!(c.r[2], 0x1200);
    let c = alu(0xe1f02000 /* mvns r2, r0 */, &[0], "nZcv");
    assert_eq!((c.r[2], flags(&c).as_str()), (0xFFFF_FFFF, "Nzcv"));
    // TST/TEQ: flags only. TST with LSL #1 of 0x80000000: result 0, C = 1.
    let c = alu(0xe1100081 /* tst r0, r1, lsl #1 */, &[0xFFFF_FFFF, 0x8000_0000, 7], "nzcV");
    assert_eq!((c.r[2], flags(&c).as_str()), (7, "nZCV"));
    let c = alu(0xe1300000 /* teq r0, r0 */, &[0x1234], "Nzcv");
    assert_eq!(flags(&c), "nZcv");
}

#[test]
fn immediate_shift_corner_cases() {
    // LSR #32 (encoded as LSR #0): result 0, C = bit 31.
    let c = alu(0xe1b02020 /* movs r2, r0, lsr #32 */, &[0x8000_0001], "nzcv");
    assert_eq!((c.r[2], flags(&c).as_str()), (0, "nZCv"));
    // ASR #32: all sign bits, C = bit 31.
    let c = alu(0xe1b02040 /* movs r2, r0, asr #32 */, &[0x8000_0000], "nzcv");
    assert_eq!((c.r[2], flags(&c).as_str()), (0xFFFF_FFFF, "NzCv"));
    let c = alu(0xe1b02040 /* movs r2, r0, asr #32 */, &[0x7FFF_FFFF], "NzCv");
    assert_eq!((c.r[2], flags(&c).as_str()), (0, "nZcv"));
    // RRX: C into bit 31, bit 0 into C.
    let c = alu(0xe1b02060 /* movs r2, r0, rrx */, &[3], "nzCv");
    assert_eq!((c.r[2], flags(&c).as_str()), (0x8000_0001, "NzCv"));
    let c = alu(0xe1b02060 /* movs r2, r0, rrx */, &[2], "nzCv");
    assert_eq!((c.r[2], flags(&c).as_str()), (0x8000_0001, "Nzcv"));
    // LSL #1 out of bit 31; ROR #4.
    let c = alu(0xe1b02080 /* movs r2, r0, lsl #1 */, &[0x8000_0001], "nzcv");
    assert_eq!((c.r[2], flags(&c).as_str()), (2, "nzCv"));
    let c = alu(0xe1b02260 /* movs r2, r0, ror #4 */, &[0x0000_0018], "nzcv");
    assert_eq!((c.r[2], flags(&c).as_str()), (0x8000_0001, "NzCv"));
    // ADD with a shifted operand: r0 + (r1 LSL #2).
    let c = alu(0xe0802101 /* add r2, r0, r1, lsl #2 */, &[1, 3], "nzcv");
    assert_eq!(c.r[2], 13);
}

#[test]
fn register_shift_by_0_32_33_and_only_the_low_byte() {
    // Shift by 0: value and C unchanged.
    let c = alu(0xe1b02110 /* movs r2, r0, lsl r1 */, &[0x8000_0001, 0], "nzCv");
    assert_eq!((c.r[2], flags(&c).as_str()), (0x8000_0001, "NzCv"));
    let c = alu(0xe1b02110 /* movs r2, r0, lsl r1 */, &[0x8000_0001, 0], "nzcv");
    assert_eq!(flags(&c), "Nzcv");
    // LSL by 32: 0, C = bit 0. By 33: 0, C = 0.
    let c = alu(0xe1b02110 /* movs r2, r0, lsl r1 */, &[0x8000_0001, 32], "nzcv");
    assert_eq!((c.r[2], flags(&c).as_str()), (0, "nZCv"));
    let c = alu(0xe1b02110 /* movs r2, r0, lsl r1 */, &[0x8000_0001, 33], "nzCv");
    assert_eq!((c.r[2], flags(&c).as_str()), (0, "nZcv"));
    // LSR by 32: C = bit 31; by 33: C = 0.
    let c = alu(0xe1b02130 /* movs r2, r0, lsr r1 */, &[0x8000_0000, 32], "nzcv");
    assert_eq!((c.r[2], flags(&c).as_str()), (0, "nZCv"));
    let c = alu(0xe1b02130 /* movs r2, r0, lsr r1 */, &[0x8000_0000, 33], "nzCv");
    assert_eq!((c.r[2], flags(&c).as_str()), (0, "nZcv"));
    // ASR by 33 (>= 32): sign fill, C = bit 31.
    let c = alu(0xe1b02150 /* movs r2, r0, asr r1 */, &[0x8000_0000, 33], "nzcv");
    assert_eq!((c.r[2], flags(&c).as_str()), (0xFFFF_FFFF, "NzCv"));
    // ROR by 32: value unchanged, C = bit 31.
    let c = alu(0xe1b02170 /* movs r2, r0, ror r1 */, &[0x8000_0001, 32], "nzcv");
    assert_eq!((c.r[2], flags(&c).as_str()), (0x8000_0001, "NzCv"));
    // Only Rs[7:0] counts: 0x101 shifts by 1.
    let c = alu(0xe1a02110 /* mov r2, r0, lsl r1 */, &[3, 0x101], "nzcv");
    assert_eq!(c.r[2], 6);
}

#[test]
fn pc_as_operand_reads_plus_8_and_plus_12_for_register_shifts() {
    let c = alu(0xe1a0100f /* mov r1, pc */, &[], "nzcv");
    assert_eq!(c.r[1], CODE + 8);
    let c = alu(0xe28f0004 /* add r0, pc, #4 */, &[], "nzcv");
    assert_eq!(c.r[0], CODE + 12);
    // Register-specified shift: pc reads as the instruction address + 12.
    let c = alu(0xe08f2413 /* add r2, pc, r3, lsl r4 */, &[0, 0, 0, 1, 2], "nzcv");
    assert_eq!(c.r[2], CODE + 12 + 4);
}

/// Step one instruction through the machine (so the classifier check runs).
fn jump(word: u32, setup: impl FnOnce(&mut Cpu)) -> streamtrace_sim::Machine {
    let mut m = machine(&[word]);
    setup(&mut m.cpu);
    run(&mut m, 1);
    m
}

#[test]
fn data_processing_pc_writes_do_not_interwork() {
    // MOV pc, r0 with bit 0 set: ARMv5 clears bits[1:0], stays in ARM state.
    let m = jump(0xe1a0f000 /* mov pc, r0 */, |c| c.r[0] = 0x9001);
    assert_eq!((m.cpu.r[15], m.cpu.thumb), (0x9000, false));
    // Switch table: ADD pc, pc, r0, LSL #2 -> insn + 8 + 4 * r0.
    let m = jump(0xe08ff100 /* add pc, pc, r0, lsl #2 */, |c| c.r[0] = 3);
    assert_eq!(m.cpu.r[15], CODE + 8 + 12);
    // MOV pc, lr (a return).
    let m = jump(0xe1a0f00e /* mov pc, lr */, |c| c.r[14] = 0x8400);
    assert_eq!(m.cpu.r[15], 0x8400);
}

#[test]
fn exception_return_with_subs_pc_lr_from_irq() {
    let mut m = machine(&[0xe25ef004 /* subs pc, lr, #4 */]);
    m.cpu.r[14] = 0x1111; // user lr
    m.cpu.r[13] = 0x2222; // user sp
    m.cpu.set_mode(Mode::Irq);
    m.cpu.irq_disabled = true;
    m.cpu.r[14] = 0x9004;
    m.cpu.r[13] = 0x3333;
    m.cpu.set_spsr(0x10 | CPSR_Z | CPSR_C);
    m.cpu.r[15] = CODE;
    run(&mut m, 1);
    let c = &m.cpu;
    assert_eq!((c.r[15], c.mode(), c.thumb, c.irq_disabled), (0x9000, Mode::User, false, false));
    assert_eq!(flags(c), "nZCv", "flags come from the SPSR, not from the subtraction");
    assert_eq!((c.r[13], c.r[14]), (0x2222, 0x1111), "user bank restored");
}

#[test]
fn exception_return_with_movs_pc_lr_to_thumb() {
    let mut m = machine(&[0xe1b0f00e /* movs pc, lr */]);
    m.cpu.set_mode(Mode::Supervisor);
    m.cpu.r[14] = 0x9003;
    m.cpu.set_spsr(0x1F | CPSR_T | CPSR_N);
    m.cpu.r[15] = CODE;
    run(&mut m, 1);
    assert_eq!((m.cpu.r[15], m.cpu.mode(), m.cpu.thumb, m.cpu.n), (0x9002, Mode::System, true, true));
}

#[test]
fn exception_return_in_user_mode_is_unpredictable() {
    let mut m = machine(&[0xe1b0f00e /* movs pc, lr */]);
    m.cpu.r[14] = 0x9000;
    assert!(matches!(m.step(&mut streamtrace_sim::NoHook), Err(SimError::Unpredictable { pc: CODE, .. })));
}

#[test]
fn condition_failed_instructions_have_no_effect() {
    let mut m = machine(&[
        0x02800001, /* addeq r0, r0, #1 */
        0x12800002, /* addne r0, r0, #2 */
        0x1a00003e, /* bne .+0x100 */
    ]);
    let mut taken = Vec::new();
    for _ in 0..3 {
        m.step(&mut |ev: &streamtrace_model::RetireEvent, _: &[streamtrace_sim::MemAccess]| taken.push(ev.taken))
            .unwrap();
    }
    // Z = 0: addeq skipped, addne done, bne taken to CODE + 8 + 0x100.
    assert_eq!(m.cpu.r[0], 2);
    assert_eq!(m.cpu.r[15], CODE + 8 + 0x100);
    assert_eq!(taken, [false, false, true]);

    // A failed MOVS pc, lr in User mode is not an error (never executed).
    let mut m = machine(&[0x01b0f00e /* movseq pc, lr */]);
    run(&mut m, 1);
    assert_eq!(m.cpu.r[15], CODE + 4);
}

#[test]
fn all_condition_codes() {
    // add r0, r0, #1 under each condition; expected outcome for each NZCV setting.
    let add = 0xe2800001 /* add r0, r0, #1 */ & 0x0FFF_FFFF;
    // (flags, [EQ NE CS CC MI PL VS VC HI LS GE LT GT LE AL])
    let table: &[(&str, [u32; 15])] = &[
        ("nzcv", [0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 1, 0, 1, 0, 1]),
        ("nZCv", [1, 0, 1, 0, 0, 1, 0, 1, 0, 1, 1, 0, 0, 1, 1]),
        ("nzCv", [0, 1, 1, 0, 0, 1, 0, 1, 1, 0, 1, 0, 1, 0, 1]),
        ("Nzcv", [0, 1, 0, 1, 1, 0, 0, 1, 0, 1, 0, 1, 0, 1, 1]),
        ("NzcV", [0, 1, 0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 1, 0, 1]),
        ("nzcV", [0, 1, 0, 1, 0, 1, 1, 0, 0, 1, 0, 1, 0, 1, 1]),
    ];
    for (f, expect) in table {
        for (cond, &e) in expect.iter().enumerate() {
            let c = alu(((cond as u32) << 28) | add, &[0], f);
            assert_eq!(c.r[0], e, "cond {cond:#x} with {f}");
        }
    }
}

/// Execute one instruction in `mode` with `regs`; returns (flow, cpu).
fn psr(word: u32, mode: Mode, regs: &[(usize, u32)]) -> (Result<Flow, SimError>, Cpu) {
    let mut cpu = cpu_in(mode, regs);
    let mut mem = Memory::new();
    let one = exec_one(&mut cpu, &mut mem, word);
    (one.flow, cpu)
}

#[test]
fn mrs_reads_cpsr_and_spsr() {
    let mut cpu = cpu_in(Mode::User, &[]);
    set_flags(&mut cpu, "NzCv");
    cpu.q = true;
    let mut mem = Memory::new();
    assert_eq!(exec_one(&mut cpu, &mut mem, 0xe10f0000 /* mrs r0, cpsr */).flow, Ok(Flow::Next));
    assert_eq!(cpu.r[0], CPSR_N | CPSR_C | CPSR_Q | 0x10);
    // SPSR in User mode: unpredictable.
    assert!(matches!(
        exec_one(&mut cpu, &mut mem, 0xe14f0000 /* mrs r0, spsr */).flow,
        Err(SimError::Unpredictable { .. })
    ));
    cpu.set_mode(Mode::Abort);
    cpu.set_spsr(0x6000_00D3);
    exec_one(&mut cpu, &mut mem, 0xe14f3000 /* mrs r3, spsr */).flow.unwrap();
    assert_eq!(cpu.r[3], 0x6000_00D3);
}

#[test]
fn msr_in_user_mode_writes_only_the_flags() {
    // r0 = NZCV + Q, I, F, SVC mode: only bits[31:24] take effect.
    let (f, c) = psr(0xe129f000 /* msr cpsr_fc, r0 */, Mode::User, &[(0, 0xF800_00D3)]);
    assert_eq!(f, Ok(Flow::Next));
    assert_eq!((flags(&c).as_str(), c.q), ("NZCV", true));
    assert_eq!((c.mode(), c.irq_disabled, c.fiq_disabled), (Mode::User, false, false));
    let (_, c) = psr(0xe321f0d3 /* msr cpsr_c, #0xd3 */, Mode::User, &[]);
    assert_eq!(c.mode(), Mode::User);
}

#[test]
fn msr_field_masks_in_privileged_mode() {
    // Control field only: mode IRQ, I and F set; flags untouched.
    let mut cpu = cpu_in(Mode::Supervisor, &[(0, 0)]);
    set_flags(&mut cpu, "NzcV");
    let mut mem = Memory::new();
    exec_one(&mut cpu, &mut mem, 0xe321f0d2 /* msr cpsr_c, #0xd2 */).flow.unwrap();
    assert_eq!((cpu.mode(), cpu.irq_disabled, cpu.fiq_disabled, flags(&cpu).as_str()), (Mode::Irq, true, true, "NzcV"));
    // Flags field only with an immediate: bits[31:24] = 0x40 -> Z only; mode untouched.
    exec_one(&mut cpu, &mut mem, 0xe328f101 /* msr cpsr_f, #0x40000000 */).flow.unwrap();
    assert_eq!((cpu.mode(), flags(&cpu).as_str(), cpu.q), (Mode::Irq, "nZcv", false));
    // x and s fields hold nothing in ARMv5: no effect.
    cpu.r[1] = 0x00FF_FF00;
    exec_one(&mut cpu, &mut mem, 0xe126f001 /* msr cpsr_sx, r1 */).flow.unwrap();
    assert_eq!(cpu.cpsr(), CPSR_Z | CPSR_I | CPSR_F | 0x12);
    // The T bit is never written by MSR.
    cpu.r[2] = 0x1F | CPSR_T;
    exec_one(&mut cpu, &mut mem, 0xe121f002 /* msr cpsr_c, r2 */).flow.unwrap();
    assert_eq!((cpu.mode(), cpu.thumb, cpu.irq_disabled), (Mode::System, false, false));
    // An invalid mode is unpredictable.
    cpu.r[2] = 0x15;
    assert!(matches!(
        exec_one(&mut cpu, &mut mem, 0xe121f002 /* msr cpsr_c, r2 */).flow,
        Err(SimError::Unpredictable { .. })
    ));
}

#[test]
fn msr_spsr_fields() {
    let mut cpu = cpu_in(Mode::Irq, &[(0, 0x1234_5678), (1, 0xF000_0000)]);
    cpu.set_spsr(0);
    let mut mem = Memory::new();
    exec_one(&mut cpu, &mut mem, 0xe16ff000 /* msr spsr_fsxc, r0 */).flow.unwrap();
    assert_eq!(cpu.spsr(), Some(0x1234_5678));
    exec_one(&mut cpu, &mut mem, 0xe168f001 /* msr spsr_f, r1 */).flow.unwrap();
    assert_eq!(cpu.spsr(), Some(0xF034_5678));
    exec_one(&mut cpu, &mut mem, 0xe361f010 /* msr spsr_c, #0x10 */).flow.unwrap();
    assert_eq!(cpu.spsr(), Some(0xF034_5610));
    assert_eq!(cpu.mode(), Mode::Irq, "SPSR writes leave the CPSR alone");
    let (f, _) = psr(0xe168f001 /* msr spsr_f, r1 */, Mode::System, &[]);
    assert!(matches!(f, Err(SimError::Unpredictable { .. })));
}

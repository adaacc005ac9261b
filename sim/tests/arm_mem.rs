//! ARM executor: loads and stores (single, halfword/signed, doubleword, block, swap), their
//! alignment rules, pc in transfers, the `^` forms, and data aborts. Encodings from binutils
//! (tests/data/arm_mem.s).

mod arm_support;

use arm_support::*;
use streamtrace_sim::cpu::CPSR_C;
use streamtrace_sim::{Cpu, ExceptionKind, ExceptionPolicy, Flow, MemAccess, Memory, Mode, SimError};

fn acc(addr: u32, size: u8, write: bool, value: u32) -> MemAccess {
    MemAccess { addr, size, write, value }
}

/// Execute one instruction with registers `regs` and memory `mem`; must be sequential.
fn ld(cpu: &mut Cpu, mem: &mut Memory, word: u32) -> Vec<MemAccess> {
    let one = exec_one(cpu, mem, word);
    assert_eq!(one.flow, Ok(Flow::Next), "{word:#010x}");
    one.log
}

fn data_mem(words: &[u32]) -> Memory {
    let mut mem = memory();
    for (i, w) in words.iter().enumerate() {
        mem.write32(DATA + 4 * i as u32, *w).unwrap();
    }
    mem
}

#[test]
fn ldr_str_addressing_modes() {
    let mut mem = data_mem(&[0x1111_1111, 0x2222_2222, 0x3333_3333, 0x4444_4444]);
    let mut cpu = cpu_in(Mode::User, &[(0, 0xCAFE), (1, DATA)]);
    // Pre-indexed with writeback.
    let log = ld(&mut cpu, &mut mem, 0xe5a10004 /* str r0, [r1, #4]! */);
    assert_eq!(log, [acc(DATA + 4, 4, true, 0xCAFE)]);
    assert_eq!(cpu.r[1], DATA + 4);
    // Post-indexed, negative offset.
    ld(&mut cpu, &mut mem, 0xe4112004 /* ldr r2, [r1], #-4 */);
    assert_eq!((cpu.r[2], cpu.r[1]), (0xCAFE, DATA));
    // Offset without writeback.
    ld(&mut cpu, &mut mem, 0xe5913008 /* ldr r3, [r1, #8] */);
    assert_eq!((cpu.r[3], cpu.r[1]), (0x3333_3333, DATA));
    // Scaled register offsets.
    cpu.r[4] = 3;
    ld(&mut cpu, &mut mem, 0xe7915104 /* ldr r5, [r1, r4, lsl #2] */);
    assert_eq!(cpu.r[5], 0x4444_4444);
    cpu.r[6] = DATA + 12;
    cpu.r[4] = 16;
    ld(&mut cpu, &mut mem, 0xe7365144 /* ldr r5, [r6, -r4, asr #2]! */);
    assert_eq!((cpu.r[5], cpu.r[6]), (0x3333_3333, DATA + 8));
    // RRX offset uses C: (2 >> 1) | C << 31 with C = 0 -> 1 byte.
    cpu.r[4] = 2;
    let log = ld(&mut cpu, &mut mem, 0xe7d15064 /* ldrb r5, [r1, r4, rrx] */);
    assert_eq!((cpu.r[5], log), (0x11, vec![acc(DATA + 1, 1, false, 0x11)]));
    // Byte store writes the low byte only.
    cpu.r[0] = 0x1234_56AB;
    ld(&mut cpu, &mut mem, 0xe5c10003 /* strb r0, [r1, #3] */);
    assert_eq!(mem.read32(DATA).unwrap(), 0xAB11_1111);
    // User-mode (T) forms access the same memory and always write back.
    ld(&mut cpu, &mut mem, 0xe4b17004 /* ldrt r7, [r1], #4 */);
    assert_eq!((cpu.r[7], cpu.r[1]), (0xAB11_1111, DATA + 4));
    ld(&mut cpu, &mut mem, 0xe4e10001 /* strbt r0, [r1], #1 */);
    assert_eq!((mem.read8(DATA + 4).unwrap(), cpu.r[1]), (0xAB, DATA + 5));
    // Literal load relative to pc + 8.
    mem.write32(CODE + 4, 0x5A5A_5A5A).unwrap();
    ld(&mut cpu, &mut mem, 0xe51f0004 /* ldr r0, [pc, #-4] */);
    assert_eq!(cpu.r[0], 0x5A5A_5A5A);
}

#[test]
fn unaligned_ldr_rotates_and_str_aligns() {
    let mut mem = data_mem(&[0x4433_2211]);
    let mut cpu = cpu_in(Mode::User, &[]);
    for (off, v) in [(0u32, 0x4433_2211u32), (1, 0x1144_3322), (2, 0x2211_4433), (3, 0x3322_1144)] {
        cpu.r[1] = DATA + off;
        let log = ld(&mut cpu, &mut mem, 0xe5910000 /* ldr r0, [r1] */);
        assert_eq!(cpu.r[0], v, "offset {off}");
        assert_eq!(log, [acc(DATA, 4, false, 0x4433_2211)], "the access is the aligned word");
    }
    cpu.r[1] = DATA + 6;
    cpu.r[0] = 0xDEAD_BEEF;
    let log = ld(&mut cpu, &mut mem, 0xe5810000 /* str r0, [r1] */);
    assert_eq!(log, [acc(DATA + 4, 4, true, 0xDEAD_BEEF)]);
}

#[test]
fn halfword_and_signed_loads() {
    let mut mem = data_mem(&[0x7F80_8001, 0x0000_FF7F]);
    let mut cpu = cpu_in(Mode::User, &[(1, DATA)]);
    ld(&mut cpu, &mut mem, 0xe1d100d2 /* ldrsb r0, [r1, #2] */);
    assert_eq!(cpu.r[0], 0xFFFF_FF80);
    ld(&mut cpu, &mut mem, 0xe1d100d3 /* ldrsb r0, [r1, #3] */);
    assert_eq!(cpu.r[0], 0x7F);
    ld(&mut cpu, &mut mem, 0xe1d100f0 /* ldrsh r0, [r1] */);
    assert_eq!(cpu.r[0], 0xFFFF_8001);
    ld(&mut cpu, &mut mem, 0xe1d100b0 /* ldrh r0, [r1] */);
    assert_eq!(cpu.r[0], 0x8001);
    ld(&mut cpu, &mut mem, 0xe1d100f4 /* ldrsh r0, [r1, #4] */);
    assert_eq!(cpu.r[0], 0xFFFF_FF7F);
    // Register offset, post-index and pre-index with writeback.
    cpu.r[2] = 2;
    ld(&mut cpu, &mut mem, 0xe19100b2 /* ldrh r0, [r1, r2] */);
    assert_eq!(cpu.r[0], 0x7F80);
    let log = ld(&mut cpu, &mut mem, 0xe0d100b2 /* ldrh r0, [r1], #2 */);
    assert_eq!((cpu.r[0], cpu.r[1], log), (0x8001, DATA + 2, vec![acc(DATA, 2, false, 0x8001)]));
    ld(&mut cpu, &mut mem, 0xe17100f2 /* ldrsh r0, [r1, #-2]! */);
    assert_eq!((cpu.r[0], cpu.r[1]), (0xFFFF_8001, DATA));
    // Halfword store.
    cpu.r[0] = 0xABCD_1234;
    let log = ld(&mut cpu, &mut mem, 0xe1c100b6 /* strh r0, [r1, #6] */);
    assert_eq!((mem.read32(DATA + 4).unwrap(), log), (0x1234_FF7F, vec![acc(DATA + 6, 2, true, 0x1234)]));
    // Odd address: bit 0 ignored (documented choice).
    cpu.r[1] = DATA + 1;
    let log = ld(&mut cpu, &mut mem, 0xe1d100b0 /* ldrh r0, [r1] */);
    assert_eq!((cpu.r[0], log), (0x8001, vec![acc(DATA, 2, false, 0x8001)]));
}

#[test]
fn ldrd_strd() {
    let mut mem = data_mem(&[0, 0, 0x1111_1111, 0x2222_2222]);
    let mut cpu = cpu_in(Mode::User, &[(1, DATA)]);
    let log = ld(&mut cpu, &mut mem, 0xe1c120d8 /* ldrd r2, [r1, #8] */);
    assert_eq!((cpu.r[2], cpu.r[3], cpu.r[1]), (0x1111_1111, 0x2222_2222, DATA));
    assert_eq!(log, [acc(DATA + 8, 4, false, 0x1111_1111), acc(DATA + 12, 4, false, 0x2222_2222)]);
    cpu.r[4] = 0xAAAA;
    cpu.r[5] = 0xBBBB;
    cpu.r[1] = DATA + 24;
    ld(&mut cpu, &mut mem, 0xe16140f8 /* strd r4, [r1, #-8]! */);
    assert_eq!(cpu.r[1], DATA + 16);
    assert_eq!((mem.read32(DATA + 16).unwrap(), mem.read32(DATA + 20).unwrap()), (0xAAAA, 0xBBBB));
    cpu.r[0] = 8;
    ld(&mut cpu, &mut mem, 0xe00160d0 /* ldrd r6, [r1], -r0 */);
    assert_eq!((cpu.r[6], cpu.r[7], cpu.r[1]), (0xAAAA, 0xBBBB, DATA + 8));
    // Odd Rd and Rd = lr are unpredictable (gas refuses them).
    for w in [
        0xe1c130d8, /* .inst 0xe1c130d8 @ ldrd r3, [r1, #8] (from ldrd r2, [r1, #8] = 0xe1c120d8) */
        0xe1c1e0d8, /* .inst 0xe1c1e0d8 @ ldrd lr, [r1, #8] */
    ] {
        assert!(matches!(exec_one(&mut cpu, &mut mem, w).flow, Err(SimError::Unpredictable { .. })));
    }
}

#[test]
fn ldm_stm_addressing_modes_and_order() {
    let mut mem = memory();
    let mut cpu = cpu_in(Mode::User, &[(1, 0x11), (2, 0x22), (3, 0x33), (0, DATA + 0x40)]);
    // Decrement before: lowest register at the lowest address, base - 12.
    let log = ld(&mut cpu, &mut mem, 0xe920000e /* stmdb r0!, {r1, r2, r3} */);
    assert_eq!(
        log,
        [acc(DATA + 0x34, 4, true, 0x11), acc(DATA + 0x38, 4, true, 0x22), acc(DATA + 0x3C, 4, true, 0x33)]
    );
    assert_eq!(cpu.r[0], DATA + 0x34);
    // Increment after from there reloads them.
    ld(&mut cpu, &mut mem, 0xe8900070 /* ldmia r0, {r4, r5, r6} */);
    assert_eq!((cpu.r[4], cpu.r[5], cpu.r[6], cpu.r[0]), (0x11, 0x22, 0x33, DATA + 0x34));
    // Increment before: first access at base + 4.
    let log = ld(&mut cpu, &mut mem, 0xe9b00180 /* ldmib r0!, {r7, r8} */);
    assert_eq!((cpu.r[7], cpu.r[8], cpu.r[0]), (0x22, 0x33, DATA + 0x3C));
    assert_eq!(log[0].addr, DATA + 0x38);
    // Decrement after: last access at the base.
    let log = ld(&mut cpu, &mut mem, 0xe8300600 /* ldmda r0!, {r9, r10} */);
    assert_eq!((cpu.r[9], cpu.r[10], cpu.r[0]), (0x22, 0x33, DATA + 0x34));
    assert_eq!((log[0].addr, log[1].addr), (DATA + 0x38, DATA + 0x3C));
    // STMIB / STMDA.
    let log = ld(&mut cpu, &mut mem, 0xe9800006 /* stmib r0, {r1, r2} */);
    assert_eq!((log[0].addr, log[1].addr), (DATA + 0x38, DATA + 0x3C));
    let log = ld(&mut cpu, &mut mem, 0xe8000006 /* stmda r0, {r1, r2} */);
    assert_eq!((log[0].addr, log[1].addr), (DATA + 0x30, DATA + 0x34));
}

#[test]
fn push_and_pop_with_pc_interworks() {
    let mut m = machine(&[0xe92d4003 /* push {r0, r1, lr} */, 0xe8bd800c /* pop {r2, r3, pc} */]);
    m.cpu.r[0] = 0xA0;
    m.cpu.r[1] = 0xA1;
    m.cpu.r[14] = 0x9001; // a Thumb return address
    run(&mut m, 2);
    assert_eq!((m.cpu.r[2], m.cpu.r[3]), (0xA0, 0xA1));
    assert_eq!((m.cpu.r[15], m.cpu.thumb, m.cpu.r[13]), (0x9000, true, STACK_TOP));
    assert_eq!(m.mem.read32(STACK_TOP - 4).unwrap(), 0x9001);
}

#[test]
fn ldr_pc_interworks() {
    let mut m = machine(&[0xe49df004 /* ldr pc, [sp], #4 */]);
    m.cpu.r[13] = STACK_TOP - 4;
    m.mem.write32(STACK_TOP - 4, 0x9101).unwrap();
    run(&mut m, 1);
    assert_eq!((m.cpu.r[15], m.cpu.thumb, m.cpu.r[13]), (0x9100, true, STACK_TOP));
    let mut m = machine(&[0xe590f004 /* ldr pc, [r0, #4] */]);
    m.cpu.r[0] = DATA;
    m.mem.write32(DATA + 4, 0x8800).unwrap();
    run(&mut m, 1);
    assert_eq!((m.cpu.r[15], m.cpu.thumb), (0x8800, false));
    // An ARM target with bit 1 set is unpredictable.
    let mut m = machine(&[0xe590f004 /* ldr pc, [r0, #4] */]);
    m.cpu.r[0] = DATA;
    m.mem.write32(DATA + 4, 0x8802).unwrap();
    assert!(matches!(m.step(&mut streamtrace_sim::NoHook), Err(SimError::Unpredictable { .. })));
}

#[test]
fn loads_into_pc_that_are_not_branches_are_unpredictable() {
    let mut mem = data_mem(&[0x9000]);
    for w in [
        0xe5d0f000, /* .inst 0xe5d0f000 @ ldrb pc, [r0] (gas refuses; ldrb r1, [r0] = 0xe5d01000) */
        0xe1d0f0b0, /* .inst 0xe1d0f0b0 @ ldrh pc, [r0] (gas refuses; ldrh r1, [r0] = 0xe1d010b0) */
        0xe1d0f0d0, /* .inst 0xe1d0f0d0 @ ldrsb pc, [r0] */
        0xe4b0f004, /* .inst 0xe4b0f004 @ ldrt pc, [r0], #4 */
    ] {
        let mut cpu = cpu_in(Mode::User, &[(0, DATA)]);
        assert!(matches!(exec_one(&mut cpu, &mut mem, w).flow, Err(SimError::Unpredictable { .. })), "{w:#x}");
    }
}

#[test]
fn stores_of_pc_store_address_plus_8() {
    let mut mem = memory();
    let mut cpu = cpu_in(Mode::User, &[(0, DATA)]);
    ld(&mut cpu, &mut mem, 0xe580f000 /* str pc, [r0] */);
    assert_eq!(mem.read32(DATA).unwrap(), CODE + 8);
    ld(&mut cpu, &mut mem, 0xe8808001 /* stmia r0, {r0, pc} */);
    assert_eq!(mem.read32(DATA + 4).unwrap(), CODE + 8);
}

#[test]
fn base_register_in_the_list() {
    let mut mem = data_mem(&[0x100, 0x200, 0x300]);
    // STM with writeback, base lowest: the original base is stored.
    let mut cpu = cpu_in(Mode::User, &[(1, DATA + 0x20), (2, 0x22)]);
    ld(&mut cpu, &mut mem, 0xe8a10006 /* stmia r1!, {r1, r2} */);
    assert_eq!((mem.read32(DATA + 0x20).unwrap(), cpu.r[1]), (DATA + 0x20, DATA + 0x28));
    // STM with writeback, base not lowest: unpredictable.
    let w = 0xe8a20006 /* stmia r2!, {r1, r2} */;
    assert!(matches!(exec_one(&mut cpu, &mut mem, w).flow, Err(SimError::Unpredictable { .. })));
    // STM without writeback, base anywhere: just the register value.
    cpu.r[2] = DATA + 0x30;
    ld(&mut cpu, &mut mem, 0xe8820006 /* stmia r2, {r1, r2} */);
    assert_eq!(mem.read32(DATA + 0x34).unwrap(), DATA + 0x30);
    // LDM with writeback and the base in the list: the loaded value wins.
    cpu.r[1] = DATA;
    ld(&mut cpu, &mut mem, 0xe8b10007 /* ldmia r1!, {r0, r1, r2} */);
    assert_eq!((cpu.r[0], cpu.r[1], cpu.r[2]), (0x100, 0x200, 0x300));
}

#[test]
fn empty_register_list_is_unpredictable() {
    let mut mem = memory();
    let mut cpu = cpu_in(Mode::User, &[(0, DATA)]);
    for w in [
        0xe8900000, /* .inst 0xe8900000 @ ldmia r0, {} (from ldmia r0, {r1} = 0xe8900002) */
        0xe8800000, /* .inst 0xe8800000 @ stmia r0, {} */
    ] {
        assert!(matches!(exec_one(&mut cpu, &mut mem, w).flow, Err(SimError::Unpredictable { .. })));
    }
}

#[test]
fn stm_and_ldm_user_bank() {
    let mut mem = memory();
    let mut cpu = Cpu::new();
    cpu.r[13] = 0x1300; // user sp
    cpu.r[14] = 0x1400; // user lr
    cpu.set_mode(Mode::Irq);
    cpu.r[13] = 0x2300;
    cpu.r[14] = 0x2400;
    cpu.r[0] = DATA;
    cpu.r[15] = CODE;
    ld(&mut cpu, &mut mem, 0xe8c06000 /* stmia r0, {sp, lr}^ */);
    assert_eq!((mem.read32(DATA).unwrap(), mem.read32(DATA + 4).unwrap()), (0x1300, 0x1400));
    // LDM^ without pc loads the user registers, not the IRQ ones.
    mem.write32(DATA, 0x5300).unwrap();
    mem.write32(DATA + 4, 0x5400).unwrap();
    ld(&mut cpu, &mut mem, 0xe8d06000 /* ldmia r0, {sp, lr}^ */);
    assert_eq!((cpu.r[13], cpu.r[14]), (0x2300, 0x2400));
    assert_eq!((cpu.user_reg(13), cpu.user_reg(14)), (0x5300, 0x5400));
    // In User mode the ^ forms are unpredictable.
    let mut cpu = cpu_in(Mode::User, &[(0, DATA)]);
    let w = 0xe8c06000 /* stmia r0, {sp, lr}^ */;
    assert!(matches!(exec_one(&mut cpu, &mut mem, w).flow, Err(SimError::Unpredictable { .. })));
}

#[test]
fn ldm_with_pc_and_caret_returns_from_exception() {
    let mut m = machine(&[0xe8fd8001 /* ldmfd sp!, {r0, pc}^ */]);
    m.cpu.r[13] = 0x1300;
    m.cpu.set_mode(Mode::Irq);
    m.cpu.r[13] = STACK_TOP - 8;
    m.cpu.set_spsr(0x10 | CPSR_C);
    m.cpu.r[15] = CODE;
    m.mem.write32(STACK_TOP - 8, 0x77).unwrap();
    m.mem.write32(STACK_TOP - 4, 0x9004).unwrap();
    run(&mut m, 1);
    assert_eq!((m.cpu.mode(), m.cpu.r[15], m.cpu.r[0], m.cpu.c), (Mode::User, 0x9004, 0x77, true));
    assert_eq!(m.cpu.r[13], 0x1300, "user sp is live again");
    m.cpu.set_mode(Mode::Irq);
    assert_eq!(m.cpu.r[13], STACK_TOP, "the IRQ sp was written back before the mode change");
}

#[test]
fn swp_and_swpb() {
    let mut mem = data_mem(&[0x1111_1111]);
    let mut cpu = cpu_in(Mode::User, &[(0, 0x2222_2222), (2, DATA)]);
    let log = ld(&mut cpu, &mut mem, 0xe1021090 /* swp r1, r0, [r2] */);
    assert_eq!((cpu.r[1], mem.read32(DATA).unwrap()), (0x1111_1111, 0x2222_2222));
    assert_eq!(log, [acc(DATA, 4, false, 0x1111_1111), acc(DATA, 4, true, 0x2222_2222)]);
    // Rd = Rm swaps a register with memory.
    cpu.r[0] = 0x33;
    ld(&mut cpu, &mut mem, 0xe1420090 /* swpb r0, r0, [r2] */);
    assert_eq!((cpu.r[0], mem.read32(DATA).unwrap()), (0x22, 0x2222_2233));
    // Rn = Rd is unpredictable.
    let w = 0xe1022090 /* .inst 0xe1022090 @ swp r2, r0, [r2] (from swp r1, r0, [r2] = 0xe1021090) */;
    assert!(matches!(exec_one(&mut cpu, &mut mem, w).flow, Err(SimError::Unpredictable { .. })));
}

#[test]
fn pld_is_not_a_memory_access() {
    let mut mem = memory();
    let mut cpu = cpu_in(Mode::User, &[(1, UNMAPPED), (2, 4)]);
    for w in [0xf5d1f004 /* pld [r1, #4] */, 0xf751f102 /* pld [r1, -r2, lsl #2] */] {
        let one = exec_one(&mut cpu, &mut mem, w);
        assert_eq!((one.flow, one.log.len(), one.fault), (Ok(Flow::Next), 0, None));
    }
}

#[test]
fn data_abort_reports_the_address() {
    let mut m = machine(&[0xe5910008 /* ldr r0, [r1, #8] */]);
    m.cpu.r[1] = UNMAPPED;
    assert_eq!(
        m.step(&mut streamtrace_sim::NoHook),
        Err(SimError::DataFault { pc: CODE, addr: UNMAPPED + 8, kind: "read" })
    );
    let mut m = machine(&[0xe3a00000 /* mov r0, #0 */, 0xe1c100b0 /* strh r0, [r1] */]);
    m.cpu.r[1] = UNMAPPED + 2;
    run(&mut m, 1);
    assert_eq!(
        m.step(&mut streamtrace_sim::NoHook),
        Err(SimError::DataFault { pc: CODE + 4, addr: UNMAPPED + 2, kind: "write" })
    );
}

#[test]
fn faulting_loads_commit_nothing() {
    // LDM whose last word is unmapped: no register and no base writeback change.
    let mut mem = memory();
    let end = DATA + 0x2000; // first unmapped address after the data region
    let mut cpu = cpu_in(Mode::User, &[(0, end - 8), (1, 1), (2, 2), (3, 3)]);
    let before = cpu.r;
    let one = exec_one(&mut cpu, &mut mem, 0xe8b0000e /* ldmia r0!, {r1, r2, r3} */);
    assert_eq!(one.flow, Ok(Flow::Exception(ExceptionKind::DataAbort)));
    assert_eq!(one.fault.map(|f| f.addr), Some(end));
    assert_eq!(cpu.r, before);
    // LDRD with the second word unmapped.
    let mut cpu = cpu_in(Mode::User, &[(0, end - 4)]);
    let before = cpu.r;
    let one = exec_one(&mut cpu, &mut mem, 0xe0c020d8 /* ldrd r2, [r0], #8 */);
    assert_eq!(one.flow, Ok(Flow::Exception(ExceptionKind::DataAbort)));
    assert_eq!(cpu.r, before);
    // SWP of an unmapped word: Rd unchanged.
    let mut cpu = cpu_in(Mode::User, &[(2, UNMAPPED)]);
    let one = exec_one(&mut cpu, &mut mem, 0xe1021090 /* swp r1, r0, [r2] */);
    assert_eq!((one.flow, cpu.r[1]), (Ok(Flow::Exception(ExceptionKind::DataAbort)), 0));
}

#[test]
fn data_abort_is_taken_with_the_vector_policy() {
    let mut m = machine(&[0xe5810000 /* str r0, [r1] */]);
    m.policy = ExceptionPolicy::Vector;
    m.cpu.r[1] = UNMAPPED;
    run(&mut m, 1);
    assert_eq!((m.cpu.mode(), m.cpu.r[15], m.cpu.r[14]), (Mode::Abort, 0x10, CODE + 8));
    assert_eq!(m.cpu.r[1], UNMAPPED);
}

//! Classifier test vectors assembled by GNU binutils (arm-none-eabi-as -march=armv5te)
//! from tests/data/vectors.s. Expected targets are the ones arm-none-eabi-objdump printed
//! for the same words (plus bit 0 for Thumb targets).

use streamtrace_isa::{
    classify_arm, classify_thumb, BranchClass, Classified, MemoryImage, ProgramImage,
};
use BranchClass::{
    DirectCond as DC, DirectUncond as DU, IndirectCond as IC, IndirectUncond as IU, None as NO,
    Return as RET,
};

/// (address in vectors.o, word, class, target)
const ARM: &[(u32, u32, BranchClass, Option<u32>)] = &[
    (0x00, 0xea00003a, DU, Some(0xf0)),  // b a_fwd
    (0x04, 0x1afffffd, DC, Some(0x00)),  // bne (negative)
    (0x08, 0xeb000038, DU, Some(0xf0)),  // bl
    (0x0c, 0x0bfffffb, DC, Some(0x00)),  // bleq (negative)
    (0x10, 0xfa000038, DU, Some(0xf9)),  // blx imm, H=0 -> thumb 0xf8
    (0x14, 0xfb000037, DU, Some(0xfb)),  // blx imm, H=1 -> thumb 0xfa
    (0x18, 0xfa000035, DU, Some(0xf5)),  // blx imm -> thumb 0xf4
    (0x1c, 0xe12fff1e, RET, None),       // bx lr
    (0x20, 0x112fff1e, RET, None),       // bxne lr
    (0x24, 0xe12fff13, IU, None),        // bx r3
    (0x28, 0xc12fff10, IC, None),        // bxgt r0
    (0x2c, 0xe12fff32, IU, None),        // blx r2
    (0x30, 0x012fff3c, IC, None),        // blxeq ip
    (0x34, 0xe12fff3e, IU, None),        // blx lr (a call)
    (0x38, 0xe1a0f00e, RET, None),       // mov pc, lr
    (0x3c, 0xe1b0f00e, RET, None),       // movs pc, lr
    (0x40, 0x11a0f00e, RET, None),       // movne pc, lr
    (0x44, 0xe1a0f004, IU, None),        // mov pc, r4
    (0x48, 0xe1a0f08e, IU, None),        // mov pc, lr, lsl #1
    (0x4c, 0xe08ff100, IU, None),        // add pc, pc, r0, lsl #2
    (0x50, 0x0281f008, IC, None),        // addeq pc, r1, #8
    (0x54, 0xe25ef004, IU, None),        // subs pc, lr, #4
    (0x58, 0xe49df004, RET, None),       // ldr pc, [sp], #4
    (0x5c, 0x149df004, RET, None),       // ldrne pc, [sp], #4
    (0x60, 0xe590f000, IU, None),        // ldr pc, [r0]
    (0x64, 0xe51ff004, IU, None),        // ldr pc, [pc, #-4]
    (0x68, 0xb791f102, IC, None),        // ldrlt pc, [r1, r2, lsl #2]
    (0x6c, 0xe59df004, IU, None),        // ldr pc, [sp, #4]
    (0x70, 0xe49df008, IU, None),        // ldr pc, [sp], #8
    (0x74, 0xe8bd8010, RET, None),       // pop {r4, pc}
    (0x78, 0xe8bd8ff0, RET, None),       // pop {r4-r11, pc}
    (0x7c, 0x149df004, RET, None),       // popne {pc} (as chose LDR)
    (0x80, 0xe8908002, IU, None),        // ldm r0, {r1, pc}
    (0x84, 0xe91ba810, IU, None),        // ldmdb fp, {r4, fp, sp, pc}
    (0x88, 0x08fd800f, RET, None),       // ldmeq sp!, {r0-r3, pc}^
    (0x8c, 0xe15f0000, NO, None),        // cmp pc, r0
    (0x90, 0xe1100001, NO, None),        // tst r0, r1
    (0x94, 0xe110f001, NO, None),        // tst r0, r1 with Rd field 15
    (0x98, 0xe0000291, NO, None),        // mul r0, r1, r2
    (0x9c, 0xe1d0f0b0, NO, None),        // ldrh pc, [r0]
    (0xa0, 0xf5d0f000, NO, None),        // pld [r0]
    (0xa4, 0xee17ff7a, NO, None),        // mrc p15, 0, APSR_nzcv, c7, c10, 3
    (0xa8, 0xe49d0004, NO, None),        // pop {r0}
    (0xac, 0xe8bd000f, NO, None),        // pop {r0-r3}
    (0xb0, 0xe92d4010, NO, None),        // push {r4, lr}
    (0xb4, 0xef000000, NO, None),        // svc 0
    (0xb8, 0xe10f0000, NO, None),        // mrs r0, cpsr
    (0xbc, 0xe16fff10, NO, None),        // clz pc, r0
    (0xc0, 0xe1020051, NO, None),        // qadd r0, r1, r2
    (0xc4, 0xe1a0000e, NO, None),        // mov r0, lr
    (0xc8, 0xe5d0f000, NO, None),        // ldrb pc, [r0]
    (0xcc, 0xe1cd00d0, NO, None),        // ldrd r0, [sp]
    (0xd0, 0xe02f2190, NO, None),        // mla pc, r0, r1, r2
    (0xd4, 0xfe000100, NO, None),        // cdp2
    (0xd8, 0xe52df004, NO, None),        // str pc, [sp, #-4]!
    (0xdc, 0xe328f20f, NO, None),        // msr cpsr_f, #0xf0000000
    (0xe0, 0xe28f0008, NO, None),        // add r0, pc, #8
    (0xe4, 0xe1200070, NO, None),        // bkpt 0
    (0xe8, 0xe1cd00f0, NO, None),        // strd r0, [sp]
    (0xec, 0xe1a0f04e, IU, None),        // mov pc, lr, asr #32
    (0xf0, 0xe1a00000, NO, None),        // nop
    (0x13c, 0xfaffffec, DU, Some(0xf5)), // blx imm, negative, H=0 -> thumb 0xf4
    (0x140, 0xfbffffec, DU, Some(0xfb)), // blx imm, negative, H=1 -> thumb 0xfa
    (0x144, 0xe8bd8000, RET, None),      // ldmfd sp!, {pc}
    (0x148, 0xe41df004, IU, None),       // ldr pc, [sp], #-4
    (0x14c, 0x4bffffab, DC, Some(0x00)), // blmi (negative)
    (0x150, 0xeaffffaa, DU, Some(0x00)), // bal (negative)
    (0x154, 0x19108010, IC, None),       // ldmdbne r0, {r4, pc}
    (0x158, 0xf12fff1e, NO, None),       // bx lr with cond 1111
    (0x15c, 0xe1a0f10e, IU, None),       // mov pc, lr, lsl #2
    (0x160, 0xe3a0f000, IU, None),       // mov pc, #0
];

/// Contiguous Thumb code from 0xf4 (t_neg) to 0x13a; (class, target) per halfword.
const THUMB_BASE: u32 = 0xf4;
const THUMB: &[(u16, BranchClass, Option<u32>)] = &[
    (0x46c0, NO, None),        // 0xf4  nop
    (0x46c0, NO, None),        // 0xf6  nop (alignment)
    (0xd0fe, DC, Some(0xf9)),  // 0xf8  beq .
    (0xd11d, DC, Some(0x139)), // 0xfa  bne t_fwd
    (0xdcfc, DC, Some(0xf9)),  // 0xfc  bgt (negative)
    (0xe7fb, DU, Some(0xf9)),  // 0xfe  b (negative)
    (0xe01a, DU, Some(0x139)), // 0x100 b t_fwd
    (0xf000, NO, None),        // 0x102 bl prefix
    (0xf819, DU, Some(0x139)), // 0x104 bl suffix -> 0x138
    (0xf7ff, NO, None),        // 0x106 bl prefix (negative)
    (0xff7b, DU, Some(0x001)), // 0x108 bl suffix -> 0x0
    (0xf7ff, NO, None),        // 0x10a blx prefix (negative)
    (0xef7a, DU, Some(0x000)), // 0x10c blx suffix -> arm 0x0
    (0x4770, RET, None),       // 0x10e bx lr
    (0x4718, IU, None),        // 0x110 bx r3
    (0x4790, IU, None),        // 0x112 blx r2
    (0x47f0, IU, None),        // 0x114 blx lr
    (0x46f7, RET, None),       // 0x116 mov pc, lr
    (0x46c7, IU, None),        // 0x118 mov pc, r8
    (0x4487, IU, None),        // 0x11a add pc, r0
    (0x44f7, IU, None),        // 0x11c add pc, lr
    (0xbd00, RET, None),       // 0x11e pop {pc}
    (0xbdf0, RET, None),       // 0x120 pop {r4-r7, pc}
    (0x4587, NO, None),        // 0x122 cmp pc, r0 (hi)
    (0x45f7, NO, None),        // 0x124 cmp pc, lr (hi)
    (0x46f0, NO, None),        // 0x126 mov r8, lr
    (0xbc10, NO, None),        // 0x128 pop {r4}
    (0xb510, NO, None),        // 0x12a push {r4, lr}
    (0xdf00, NO, None),        // 0x12c svc 0
    (0xde00, NO, None),        // 0x12e undefined
    (0xa002, NO, None),        // 0x130 add r0, pc, #8
    (0x4801, NO, None),        // 0x132 ldr r0, [pc, #4]
    (0x1c08, NO, None),        // 0x134 adds r0, r1, #0
    (0x46c0, NO, None),        // 0x136 nop
    (0x46c0, NO, None),        // 0x138 nop (t_fwd)
    (0x46c0, NO, None),        // 0x13a nop
];

fn expect(class: BranchClass, target: Option<u32>) -> Classified {
    Classified { class, target }
}

#[test]
fn arm_vectors() {
    for &(pc, word, class, target) in ARM {
        assert_eq!(
            classify_arm(word, pc),
            expect(class, target),
            "ARM {word:#010x} at {pc:#x}"
        );
    }
}

#[test]
fn thumb_vectors() {
    let mut prev = None;
    for (i, &(hw, class, target)) in THUMB.iter().enumerate() {
        let pc = THUMB_BASE + 2 * i as u32;
        assert_eq!(
            classify_thumb(hw, prev, pc),
            expect(class, target),
            "Thumb {hw:#06x} at {pc:#x}"
        );
        prev = Some(hw);
    }
}

/// The same vectors laid out in memory as the assembler did, classified through
/// ProgramImage::classify (which must find prev_hw by itself).
#[test]
fn vectors_through_image() {
    let mut m = MemoryImage::new();
    m.add_zeroed(0, 0x164).unwrap();
    for &(pc, word, ..) in ARM {
        m.write_u32(pc, word).unwrap();
    }
    for (i, &(hw, ..)) in THUMB.iter().enumerate() {
        m.write_u16(THUMB_BASE + 2 * i as u32, hw).unwrap();
    }
    for &(pc, _, class, target) in ARM {
        assert_eq!(
            m.classify(pc),
            Some(expect(class, target)),
            "ARM at {pc:#x}"
        );
    }
    for (i, &(_, class, target)) in THUMB.iter().enumerate() {
        let pc = THUMB_BASE + 2 * i as u32;
        assert_eq!(
            m.classify(pc | 1),
            Some(expect(class, target)),
            "Thumb at {pc:#x}"
        );
    }
}

#[test]
fn thumb_suffix_without_prefix_is_indirect() {
    for (hw, pc) in [(0xf819u16, 0x104u32), (0xff7b, 0x108), (0xef7a, 0x10c)] {
        for prev in [None, Some(0x46c0), Some(0xf819), Some(0xef7a), Some(0xe7fb)] {
            assert_eq!(
                classify_thumb(hw, prev, pc),
                expect(IU, None),
                "{hw:#06x} after {prev:x?}"
            );
        }
    }
}

#[test]
fn thumb_conditional_codes() {
    // beq .. ble: every condition 0000..1101 is a DirectCond branch; 1110/1111 are not.
    for cond in 0u16..16 {
        let hw = 0xd000 | (cond << 8) | 0x02; // offset +4
        let c = classify_thumb(hw, None, 0x200);
        if cond < 14 {
            assert_eq!(c, expect(DC, Some(0x209)), "cond {cond}");
        } else {
            assert_eq!(c, Classified::NONE, "cond {cond}");
        }
    }
}

#[test]
fn arm_condition_codes() {
    // Same encoding under every condition: AL -> unconditional, others -> conditional,
    // NV -> None (except BLX imm). Returns stay returns.
    let cases: &[(u32, BranchClass, BranchClass)] = &[
        (0x0a000000, DU, DC),   // b
        (0x0b000000, DU, DC),   // bl
        (0x012fff13, IU, IC),   // bx r3
        (0x012fff1e, RET, RET), // bx lr
        (0x01a0f00e, RET, RET), // mov pc, lr
        (0x0081f002, IU, IC),   // add pc, r1, r2
        (0x0590f000, IU, IC),   // ldr pc, [r0]
        (0x049df004, RET, RET), // ldr pc, [sp], #4
        (0x08bd8010, RET, RET), // ldm sp!, {r4, pc}
        (0x08908002, IU, IC),   // ldm r0, {r1, pc}
    ];
    for (i, &(base, al, other)) in cases.iter().enumerate() {
        for cond in 0u32..15 {
            let word = base | (cond << 28);
            let want = if cond == 14 { al } else { other };
            assert_eq!(classify_arm(word, 0x1000).class, want, "{word:#010x}");
        }
        if i >= 2 {
            // (B/BL with cond NV is BLX imm, checked below.)
            assert_eq!(
                classify_arm(base | 0xf000_0000, 0x1000).class,
                NO,
                "{base:#010x} with cond NV"
            );
        }
    }
    // B with cond NV is BLX imm.
    assert_eq!(classify_arm(0xfa000000, 0x1000), expect(DU, Some(0x1009)));
}

#[test]
fn address_arithmetic_wraps() {
    // ARM B at 0 back by 16 bytes.
    assert_eq!(classify_arm(0xeafffffa, 0), expect(DU, Some(0xffff_fff0)));
    // ARM BL near the top forward.
    assert_eq!(
        classify_arm(0xeb000010, 0xffff_fff0),
        expect(DU, Some(0x38))
    );
    // BLX imm, H=1, wrapping.
    assert_eq!(classify_arm(0xfb000000, 0xffff_fffc), expect(DU, Some(0x7)));
    // Thumb B at the top of memory.
    assert_eq!(
        classify_thumb(0xe002, None, 0xffff_fffe),
        expect(DU, Some(0x7))
    );
    // Thumb Bcc at 0 backwards.
    assert_eq!(
        classify_thumb(0xd0f0, None, 0),
        expect(DC, Some(0xffff_ffe5))
    );
    // BL pair: largest negative and positive offsets.
    assert_eq!(
        classify_thumb(0xf800, Some(0xf400), 0x2),
        expect(DU, Some(0xffc0_0005))
    );
    assert_eq!(
        classify_thumb(0xffff, Some(0xf3ff), 0x1002),
        expect(DU, Some(0x0040_1003))
    );
    assert_eq!(
        classify_thumb(0xefff, Some(0xf3ff), 0x1002),
        expect(DU, Some(0x0040_1000))
    );
}

#[test]
fn arm_extra_cases() {
    // LDRT pc, [r0] (P=0, W=1): still a word load into pc.
    assert_eq!(classify_arm(0xe4b0f000, 0).class, IU);
    // LDR pc, [sp, #4]! and LDR pc, [sp], -r0: indirect, not a return.
    assert_eq!(classify_arm(0xe5bdf004, 0).class, IU);
    assert_eq!(classify_arm(0xe61df000, 0).class, IU);
    // Register-offset LDR with bit 4 set is the undefined space.
    assert_eq!(classify_arm(0xe79df010, 0).class, NO);
    // STM with pc in the list is a store.
    assert_eq!(classify_arm(0xe92d8000, 0).class, NO);
    // TEQ/CMN with Rd=15 (legacy TEQP/CMNP) write nothing; MSR spsr (register) neither.
    assert_eq!(classify_arm(0xe13ff000, 0).class, NO);
    assert_eq!(classify_arm(0xe17ff000, 0).class, NO);
    assert_eq!(classify_arm(0xe169f000, 0).class, NO);
    // MOV pc, lr, LSL r1 (register-specified shift, bit7=0, bit4=1): indirect.
    assert_eq!(classify_arm(0xe1a0f11e, 0).class, IU);
    // ORR pc, r0, r1 / RSB pc, r0, #0: indirect.
    assert_eq!(classify_arm(0xe180f001, 0).class, IU);
    assert_eq!(classify_arm(0xe260f000, 0).class, IU);
    // MOV pc, lr with a nonzero Rn field (SBZ): still MOV pc, lr.
    assert_eq!(classify_arm(0xe1a3f00e, 0).class, RET);
    // SWP into pc (multiply/swap space) and LDRSB into pc: none.
    assert_eq!(classify_arm(0xe100f091, 0).class, NO);
    assert_eq!(classify_arm(0xe1d0f0d0, 0).class, NO);
    // Coprocessor load, MCR, SWI with any condition.
    assert_eq!(classify_arm(0xed90f000, 0).class, NO);
    assert_eq!(classify_arm(0x1e07ff1a, 0).class, NO);
    assert_eq!(classify_arm(0x1f123456, 0).class, NO);
}

#[test]
fn thumb_extra_cases() {
    // BX pc / BLX r0 / BX r8.
    assert_eq!(classify_thumb(0x4778, None, 0).class, IU);
    assert_eq!(classify_thumb(0x4780, None, 0).class, IU);
    assert_eq!(classify_thumb(0x4740, None, 0).class, IU);
    // MOV r7, lr (Rd=7, H1=0) and ADD r7, lr: not pc.
    assert_eq!(classify_thumb(0x4677, None, 0).class, NO);
    assert_eq!(classify_thumb(0x4477, None, 0).class, NO);
    // ADD pc, pc (Rm=15).
    assert_eq!(classify_thumb(0x44ff, None, 0).class, IU);
    // Format-4 data processing (0100 00xx) never writes pc.
    assert_eq!(classify_thumb(0x4307, None, 0).class, NO);
    // POP without pc, PUSH with lr.
    assert_eq!(classify_thumb(0xbc01, None, 0).class, NO);
    assert_eq!(classify_thumb(0xb500, None, 0).class, NO);
    // LDMIA/STMIA, LDR sp-relative.
    assert_eq!(classify_thumb(0xc8ff, None, 0).class, NO);
    assert_eq!(classify_thumb(0x9f01, None, 0).class, NO);
}

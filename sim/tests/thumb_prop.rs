//! Properties of the Thumb executor over arbitrary halfwords and machine states: it never
//! panics, PC writes coincide with the classifier's table, direct targets agree with the
//! classifier, and an exception or UNPREDICTABLE error leaves the registers untouched.

mod thumb_common;
use proptest::prelude::*;
use streamtrace_isa::{classify_thumb, is_thumb_bl_prefix, BranchClass};
use streamtrace_sim::{Bus, ExceptionKind, Flow, Machine, SimError};
use thumb_common::*;

fn run(m: &mut Machine, hw: u16) -> (Result<Flow, SimError>, bool) {
    let mut log = Vec::new();
    let mut bus = Bus::new(&mut m.mem, &mut log, true);
    let r = streamtrace_sim::thumb::execute(&mut m.cpu, &mut bus, hw);
    let faulted = bus.fault.is_some();
    (r, faulted)
}

/// Execute `hw` at `pc` (after `prev` at pc - 2 if that is a BL prefix) and check the
/// properties. Returns the flow for statistics.
fn check(m: &mut Machine, pc: u32, prev: u16, hw: u16) -> Result<Flow, SimError> {
    m.mem.write16(pc - 2, prev).unwrap();
    m.mem.write16(pc, hw).unwrap();
    if is_thumb_bl_prefix(prev) {
        m.cpu.r[15] = pc - 2;
        assert_eq!(run(m, prev).0, Ok(Flow::Next));
    }
    m.cpu.r[15] = pc;
    let before = m.cpu.clone();
    let (r, faulted) = run(m, hw);
    let c = classify_thumb(hw, Some(prev), pc);
    match &r {
        Ok(Flow::Next) => {
            assert_eq!((m.cpu.r[15], m.cpu.thumb), (pc, true), "{hw:#06x}: Next must not move the PC");
            assert!(!faulted, "{hw:#06x}: a fault must become a data abort");
            assert!(
                c.class == BranchClass::None || c.class == BranchClass::DirectCond,
                "{hw:#06x}: the classifier says {:?} but the PC was not written",
                c.class
            );
            if c.class == BranchClass::DirectCond {
                assert!(!before.cond_passed((hw as u32 >> 8) & 15));
            }
        }
        Ok(Flow::Jump) => {
            assert_ne!(c.class, BranchClass::None, "{hw:#06x} wrote the PC but is not a branch");
            assert_eq!(m.cpu.r[15] & 1, 0);
            if !m.cpu.thumb {
                assert_eq!(m.cpu.r[15] & 3, 0, "{hw:#06x}: unaligned ARM target");
            }
            if let Some(t) = c.target {
                assert_eq!(m.cpu.r[15] | m.cpu.thumb as u32, t, "{hw:#06x} after {prev:#06x}");
            }
            if c.class == BranchClass::DirectCond {
                assert!(before.cond_passed((hw as u32 >> 8) & 15));
            }
        }
        Ok(Flow::Exception(kind)) => {
            assert_eq!(*kind == ExceptionKind::DataAbort, faulted, "{hw:#06x}");
            assert_eq!(m.cpu.r, before.r, "{hw:#06x}: {kind:?} must leave the registers alone");
            assert_eq!(m.cpu.cpsr(), before.cpsr());
        }
        Ok(Flow::Semihost) => assert_eq!(hw, 0xDFAB),
        Err(SimError::Unpredictable { pc: p, insn, .. }) => {
            assert_eq!((*p, *insn), (pc, hw as u32));
            assert_eq!(m.cpu.r, before.r, "{hw:#06x}: UNPREDICTABLE must leave the registers alone");
        }
        Err(e) => panic!("{hw:#06x}: unexpected error {e}"),
    }
    r
}

/// Fresh CPU state (Thumb, user mode) with the given registers and NZCV.
fn state(m: &mut Machine, regs: &[u32; 15], flags: u8) {
    m.cpu = streamtrace_sim::Cpu::new();
    m.cpu.thumb = true;
    m.cpu.r[..15].copy_from_slice(regs);
    m.cpu.n = flags & 8 != 0;
    m.cpu.z = flags & 4 != 0;
    m.cpu.c = flags & 2 != 0;
    m.cpu.v = flags & 1 != 0;
}

/// Every halfword, from two register states (pointers into the data page; pointers near
/// the page end so multi-word transfers fault).
#[test]
fn every_halfword_is_handled() {
    let mut counts = [0usize; 6];
    for (k, base) in [DATA + 0x100, DATA + 0xFF4].into_iter().enumerate() {
        let mut m = machine();
        for hw in 0..=u16::MAX {
            let mut regs = [0u32; 15];
            for (i, r) in regs.iter_mut().enumerate() {
                *r = base + 4 * i as u32 + (k as u32 & 1);
            }
            regs[14] = 0x9000 | (hw as u32 & 1);
            state(&mut m, &regs, (hw >> 4) as u8 & 15);
            let r = check(&mut m, CODE + 0x100, 0x2000, hw);
            counts[match r {
                Ok(Flow::Next) => 0,
                Ok(Flow::Jump) => 1,
                Ok(Flow::Exception(ExceptionKind::DataAbort)) => 2,
                Ok(Flow::Exception(_)) => 3,
                Ok(Flow::Semihost) => 4,
                Err(_) => 5,
            }] += 1;
        }
    }
    // Undefined/SWI/BKPT space: DE (256) + DF (255 non-0xAB) + BE (256) + BLX suffix with
    // bit 0 set (1024) + the 1011 misc holes (10 x 256), per register state.
    assert_eq!(counts[3], 2 * (256 + 255 + 256 + 1024 + 10 * 256), "{counts:?}");
    assert_eq!(counts[4], 2);
    assert!(counts[1] > 0 && counts[2] > 0 && counts[5] > 0, "{counts:?}");
}

fn reg() -> impl Strategy<Value = u32> {
    prop_oneof![
        (0u32..0x1000).prop_map(|o| DATA + o),
        (0u32..0x100).prop_map(|o| STACK_TOP - o),
        any::<u32>(),
        0u32..64,
    ]
}

thread_local! {
    static MACHINE: std::cell::RefCell<Machine> = std::cell::RefCell::new(machine());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20_000))]

    #[test]
    fn random_halfwords_never_panic(
        hw in any::<u16>(),
        prev in prop_oneof![any::<u16>(), (0xF000u16..0xF800)],
        regs in proptest::array::uniform15(reg()),
        flags in 0u8..16,
        pc_off in 1u32..0x3000,
    ) {
        MACHINE.with_borrow_mut(|m| {
            state(m, &regs, flags);
            let _ = check(m, CODE + 2 * pc_off, prev, hw);
        });
    }
}

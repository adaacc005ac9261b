//! ARM executor properties over random encodings and states: never panics; only
//! instructions the classifier calls branches write the pc; sequential instructions leave
//! r15 alone; data aborts commit no register.

mod arm_support;

use arm_support::*;
use proptest::prelude::*;
use streamtrace_isa::classify_arm;
use streamtrace_model::BranchClass;
use streamtrace_sim::{Cpu, ExceptionKind, Flow, Mode, SimError};

const MODES: [Mode; 7] =
    [Mode::User, Mode::Fiq, Mode::Irq, Mode::Supervisor, Mode::Abort, Mode::Undefined, Mode::System];

/// Observable state (Cpu has no PartialEq).
fn snapshot(c: &Cpu) -> ([u32; 16], u32, Option<u32>, u64, u32) {
    (c.r, c.cpsr(), c.spsr(), c.acc0, c.cp15_control)
}

fn check(word: u32, regs: [u32; 15], base_sel: [u8; 15], mode: usize, nzcvq: u8) -> Result<(), TestCaseError> {
    let mut cpu = Cpu::new();
    cpu.set_mode(MODES[mode % MODES.len()]);
    cpu.set_spsr(0x10 | ((nzcvq as u32) << 27));
    for i in 0..15 {
        // Some registers point into mapped memory so that transfers get exercised.
        cpu.r[i] = match base_sel[i] % 4 {
            0 => DATA + (regs[i] & 0x1FFC),
            1 => STACK_TOP - 4 - (regs[i] & 0xFFC),
            _ => regs[i],
        };
    }
    cpu.r[15] = CODE;
    cpu.n = nzcvq & 16 != 0;
    cpu.z = nzcvq & 8 != 0;
    cpu.c = nzcvq & 4 != 0;
    cpu.v = nzcvq & 2 != 0;
    let before = snapshot(&cpu);
    // One memory per thread: building a Memory costs far more than executing a word.
    thread_local!(static MEM: std::cell::RefCell<streamtrace_sim::Memory> = std::cell::RefCell::new(memory()));
    let one = MEM.with(|m| exec_one(&mut cpu, &mut m.borrow_mut(), word));
    let class = classify_arm(word, CODE).class;
    match one.flow {
        Ok(Flow::Jump) => {
            prop_assert_ne!(class, BranchClass::None, "{:#010x} wrote the pc", word);
        }
        Ok(Flow::Exception(ExceptionKind::DataAbort)) => {
            prop_assert!(one.fault.is_some());
            prop_assert_eq!(snapshot(&cpu), before, "{:#010x}: abort changed registers", word);
        }
        Ok(_) => {
            prop_assert_eq!(cpu.r[15], CODE, "{:#010x} moved r15 without a jump", word);
            prop_assert!(one.fault.is_none());
        }
        Err(SimError::Unpredictable { pc, insn, .. }) => {
            prop_assert_eq!((pc, insn), (CODE, word));
        }
        Err(e) => prop_assert!(false, "{:#010x}: unexpected error {}", word, e),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10_000))]

    #[test]
    fn random_words_never_panic(word in any::<u32>(), regs in any::<[u32; 15]>(), sel in any::<[u8; 15]>(),
                                mode in 0usize..7, f in any::<u8>()) {
        check(word, regs, sel, mode, f)?;
    }

    /// Always-executed words of the interesting spaces (cond = AL or 1111, bits[27:25] forced
    /// to every value evenly).
    #[test]
    fn random_unconditional_words(low in any::<u32>(), space in 0u32..8, nv in any::<bool>(),
                                  regs in any::<[u32; 15]>(), sel in any::<[u8; 15]>(), mode in 0usize..7) {
        let cond = if nv { 0xF } else { 0xE };
        let word = (cond << 28) | (space << 25) | (low & 0x01FF_FFFF);
        check(word, regs, sel, mode, 0)?;
    }
}

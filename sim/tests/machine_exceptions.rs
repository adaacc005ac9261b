//! The machine loop: exception entry under the vector policy (as retire events see it), and
//! faults that stop a user program.

use streamtrace_model::{BranchClass, RetireEvent};
use streamtrace_sim::{ExceptionPolicy, Machine, MemAccess, Memory, Mode, Semihost, SimError};

fn machine(code: &[(u32, u32)]) -> Machine {
    let mut mem = Memory::new();
    mem.map_region(0, 0x2000);
    for &(addr, word) in code {
        mem.write32(addr, word).unwrap();
    }
    Machine::new(mem, Semihost::default())
}

#[test]
fn swi_takes_the_vector_and_movs_returns() {
    let mut m = machine(&[
        (0x08, 0xE1B0_F00E),  // movs pc, lr   (SWI handler: return)
        (0x100, 0xEF00_0010), // swi #16
        (0x104, 0xE1A0_0000), // mov r0, r0
    ]);
    m.policy = ExceptionPolicy::Vector;
    m.cpu.r[15] = 0x100;
    m.cpu.z = true;
    let mut evs: Vec<RetireEvent> = Vec::new();
    let mut hook = |e: &RetireEvent, _: &[MemAccess]| evs.push(*e);
    m.step(&mut hook).unwrap();
    assert_eq!(m.cpu.mode(), Mode::Supervisor);
    assert_eq!((m.cpu.r[14], m.cpu.r[15], m.cpu.irq_disabled), (0x104, 0x08, true));
    m.step(&mut hook).unwrap();
    m.step(&mut hook).unwrap();
    assert_eq!(m.cpu.mode(), Mode::User);
    assert!(m.cpu.z, "CPSR restored from SPSR");
    assert_eq!(evs[0].pc, 0x100);
    assert!(evs[0].exception && !evs[0].taken);
    assert_eq!((evs[0].class, evs[0].next_pc), (BranchClass::None, 0x08));
    assert_eq!((evs[1].pc, evs[1].class, evs[1].taken, evs[1].next_pc), (0x08, BranchClass::Return, true, 0x104));
    assert_eq!((evs[2].pc, evs[2].exception), (0x104, false));
}

#[test]
fn user_programs_stop_on_exceptions_and_faults() {
    let mut m = machine(&[(0x100, 0xEF00_0010)]);
    m.cpu.r[15] = 0x100;
    assert_eq!(
        m.step(&mut streamtrace_sim::NoHook),
        Err(SimError::UnhandledException { pc: 0x100, what: "SWI" })
    );
    // bx r0 to an unmapped address, then the fetch there faults.
    let mut m = machine(&[(0x100, 0xE12F_FF10)]);
    m.cpu.r[15] = 0x100;
    m.cpu.r[0] = 0x0040_0000;
    m.step(&mut streamtrace_sim::NoHook).unwrap();
    assert_eq!(m.step(&mut streamtrace_sim::NoHook), Err(SimError::FetchFault { pc: 0x0040_0000 }));
    // ldr r1, [r0] from unmapped memory: a data fault naming the address.
    let mut m = machine(&[(0x100, 0xE590_1000)]);
    m.cpu.r[15] = 0x100;
    m.cpu.r[0] = 0x0050_0004;
    let err = m.step(&mut streamtrace_sim::NoHook).unwrap_err();
    assert_eq!(err, SimError::DataFault { pc: 0x100, addr: 0x0050_0004, kind: "read" });
    assert!(err.to_string().contains("0x00500004"));
    // A runaway loop hits the instruction limit.
    let mut m = machine(&[(0x100, 0xEAFF_FFFE)]); // b .
    m.cpu.r[15] = 0x100;
    assert_eq!(m.run(1000, &mut streamtrace_sim::NoHook), Err(SimError::InstructionLimit { limit: 1000, pc: 0x100 }));
}

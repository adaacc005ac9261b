//! Semihosting through the machine: the SVC traps of both states retire like ordinary
//! instructions (PC+4 / PC+2, no exception), the deterministic clock counts retired
//! instructions, and the exit status reaches the caller.

use streamtrace_model::{BranchClass, RetireEvent};
use streamtrace_sim::semihost::SharedBuffer;
use streamtrace_sim::{Machine, MemAccess, Memory, Semihost};

const BASE: u32 = 0x8000;
const STRING: u32 = 0x8040;
const BLOCK: u32 = 0x8060;

fn machine(code: &[u8], thumb: bool, out: &SharedBuffer) -> Machine {
    let mut mem = Memory::new();
    mem.map_region(BASE, 0x1000);
    mem.write_bytes(BASE, code).unwrap();
    mem.write_bytes(STRING, b"semihosted\n\0").unwrap();
    mem.write32(BLOCK, 0x20026).unwrap();
    mem.write32(BLOCK + 4, 7).unwrap();
    let sh = Semihost::new().with_stdout(out.clone()).with_deterministic_clock(100);
    let mut m = Machine::new(mem, sh);
    m.cpu.r[15] = BASE;
    m.cpu.thumb = thumb;
    m
}

fn words(ws: &[u32]) -> Vec<u8> {
    ws.iter().flat_map(|w| w.to_le_bytes()).collect()
}

#[test]
fn arm_svc_0x123456() {
    let code = words(&[
        0xE3A0_0004, // 8000 mov r0, #4 (WRITE0)
        0xE28F_1034, // 8004 add r1, pc, #0x34 -> 0x8040
        0xEF12_3456, // 8008 svc 0x123456
        0xE3A0_0010, // 800c mov r0, #0x10 (CLOCK)
        0xEF12_3456, // 8010 svc 0x123456
        0xE1A0_4000, // 8014 mov r4, r0
        0xE3A0_0020, // 8018 mov r0, #0x20 (EXIT_EXTENDED)
        0xE28F_103C, // 801c add r1, pc, #0x3c -> 0x8060
        0xEF12_3456, // 8020 svc 0x123456
    ]);
    let out = SharedBuffer::new();
    let mut m = machine(&code, false, &out);
    let mut events: Vec<RetireEvent> = Vec::new();
    let mut hook = |ev: &RetireEvent, _: &[MemAccess]| events.push(*ev);
    let code = m.run(100, &mut hook).expect("runs to the exit call");
    assert_eq!(code, 7);
    assert_eq!(m.retired, 9);
    assert_eq!(out.text(), "semihosted\n");
    assert_eq!(m.cpu.r[4], 4, "CLOCK after 4 retired instructions at 100 instructions/s = 4 cs");
    let svc = events[2];
    assert_eq!((svc.pc, svc.insn, svc.thumb), (0x8008, 0xEF12_3456, false));
    assert_eq!((svc.class, svc.taken, svc.exception, svc.next_pc), (BranchClass::None, false, false, 0x800C));
    let pcs: Vec<u32> = events.iter().map(|e| e.pc).collect();
    assert_eq!(pcs, (0..9).map(|i| BASE + 4 * i).collect::<Vec<_>>());
}

#[test]
fn thumb_svc_0xab() {
    let hw: [u16; 6] = [
        0x2004, // 8000 movs r0, #4 (WRITE0)
        0xA10F, // 8002 adr r1, 0x8040
        0xDFAB, // 8004 svc 0xab
        0x2020, // 8006 movs r0, #0x20 (EXIT_EXTENDED)
        0xA115, // 8008 adr r1, 0x8060
        0xDFAB, // 800a svc 0xab
    ];
    let code: Vec<u8> = hw.iter().flat_map(|h| h.to_le_bytes()).collect();
    let out = SharedBuffer::new();
    let mut m = machine(&code, true, &out);
    let mut events: Vec<RetireEvent> = Vec::new();
    let mut hook = |ev: &RetireEvent, _: &[MemAccess]| events.push(*ev);
    assert_eq!(m.run(100, &mut hook).expect("runs to the exit call"), 7);
    assert_eq!(out.text(), "semihosted\n");
    let pcs: Vec<u32> = events.iter().map(|e| e.pc).collect();
    assert_eq!(pcs, [0x8000, 0x8002, 0x8004, 0x8006, 0x8008, 0x800A]);
    assert!(events.iter().all(|e| e.thumb && !e.exception));
    assert_eq!(events[2].next_pc, 0x8006 | 1, "next_pc carries the Thumb bit");
}

#[test]
fn malformed_call_stops_the_machine_with_its_address() {
    let code = words(&[
        0xE3A0_0005, // mov r0, #5 (WRITE)
        0xE3A0_1309, // mov r1, #0x24000000 (unmapped block)
        0xEF12_3456, // svc 0x123456
    ]);
    let out = SharedBuffer::new();
    let mut m = machine(&code, false, &out);
    let e = m.run(100, &mut streamtrace_sim::NoHook).unwrap_err().to_string();
    assert!(e.contains("0x00008008") && e.contains("SYS_WRITE") && e.contains("0x24000000"), "{e}");
}

//! A backward WET slice on a hand-written program whose slice is known: data through
//! registers, flags and memory, and a control dependence on a branch not taken.

use streamtrace_sim::{Machine, Memory, Semihost};
use streamtrace_stages::wet::capture::capture;
use streamtrace_stages::wet::cd::CfgBuilder;
use streamtrace_stages::wet::{ExecRecord, Step, StepSink, WetBuilder};

const CODE: [(u32, &str); 12] = [
    (0xE3A0_0005, "mov r0, #5"),
    (0xE3A0_1007, "mov r1, #7"),
    (0xE3A0_700B, "mov r7, #11"),
    (0xE080_2000, "add r2, r0, r0"),
    (0xE351_0003, "cmp r1, #3"),
    (0xDA00_0000, "ble 0x801c"),
    (0xE1A0_3002, "mov r3, r2"),
    (0xE52D_3004, "str r3, [sp, #-4]!"),
    (0xE3A0_4001, "mov r4, #1"),
    (0xE087_7004, "add r7, r7, r4"),
    (0xE59D_5000, "ldr r5, [sp]"),
    (0xE085_6004, "add r6, r5, r4"),
];

fn machine() -> Machine {
    let mut mem = Memory::new();
    mem.map_region(0x8000, 0x1000);
    mem.map_region(0x10_0000, 0x1000);
    for (i, (w, _)) in CODE.iter().enumerate() {
        mem.write32(0x8000 + 4 * i as u32, *w).unwrap();
    }
    let mut m = Machine::new(mem, Semihost::new());
    m.cpu.r[15] = 0x8000;
    m.cpu.r[13] = 0x10_0800;
    m
}

#[test]
fn slice_of_a_known_program() {
    let n = CODE.len() as u64;
    let mut cfg = CfgBuilder::default();
    capture(&mut machine(), n, &mut cfg).unwrap();
    let pd = cfg.finish();
    assert_eq!(pd.ipdom[&0x8014], 0x801C, "the branch's region ends at the store");
    let mut b = WetBuilder::with_control(pd.clone());
    let mut r = ExecRecord::default();
    capture(
        &mut machine(),
        n,
        &mut |s: &Step| {
            b.step(s);
            r.step(s);
        },
    )
    .unwrap();
    assert_eq!(r.steps.len(), CODE.len(), "every instruction runs once (the branch is not taken)");
    let mut g = b.finish().unwrap();
    let criterion = g.stmts_of(0x802C).next().unwrap();
    let mut pcs: Vec<u32> = g.backward_slice(criterion, 0).iter().map(|it| g.stmts[it.stmt as usize].iw).collect();
    pcs.sort_unstable();
    let expected = [0x8000, 0x8004, 0x800C, 0x8010, 0x8014, 0x8018, 0x801C, 0x8020, 0x8028, 0x802C];
    let name = |pc: &u32| CODE[((pc - 0x8000) / 4) as usize].1;
    assert_eq!(
        pcs.iter().map(name).collect::<Vec<_>>(),
        expected.iter().map(name).collect::<Vec<_>>(),
        "slice of add r6, r5, r4"
    );
    // The record's brute-force slice agrees (step i is the instruction at 0x8000 + 4i).
    let parents = r.parents(Some(&pd));
    let brute: Vec<u32> = ExecRecord::backward_slice(&parents, 11).iter().map(|&i| 0x8000 + 4 * i as u32).collect();
    assert_eq!(brute, expected);
}

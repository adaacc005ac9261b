//! XScale timing model: short sequences whose cycle counts are worked out by hand from the
//! manual's rules (shared/reference/xscale-timing.md section 1, defaults of 1.6), and every
//! test program run with timing on.
//!
//! Conventions of the derivations: `i(k)` is the issue cycle of the k-th instruction of the
//! sequence. With no stall, `i(k+1) = i(k) + 1`. A consumer of register r issues no earlier
//! than `i(producer) + result latency`. Unless a test says otherwise, the code is preloaded
//! into the I-cache and the data into the D-cache, so the first instruction issues at 0.
//! Retire cycle = issue + 2 (+3 for loads and stores), pushed up to keep retire cycles
//! strictly increasing. Encodings from binutils (arm-none-eabi-as -mcpu=xscale).

mod common;

use streamtrace_model::RetireEvent;
use streamtrace_sim::{Machine, MemAccess, Memory, Semihost, TimingConfig, TimingReport};

const CODE: u32 = 0x8000;
const DATA: u32 = 0x1_0000;
/// 64 KiB of data: enough for 33 lines that share a D-cache set (1 KiB apart).
const DATA_LEN: u32 = 0x1_0000;
const STACK_TOP: u32 = 0x4_0000;

/// Large / medium / small Rs values for the multiplier's early termination.
const LARGE: u32 = 0x1000_0000;
const MEDIUM: u32 = 0x0001_0000;
const SMALL: u32 = 100;

fn machine(cfg: TimingConfig, warm_code: bool) -> Machine {
    let mut mem = Memory::new();
    mem.map_region(CODE, 0x1000);
    mem.map_region(DATA, DATA_LEN as u64);
    mem.map_region(STACK_TOP - 0x1000, 0x1000);
    let mut m = Machine::new(mem, Semihost::default());
    m.cpu.r[15] = CODE;
    m.cpu.r[13] = STACK_TOP;
    m.enable_timing(cfg).unwrap();
    if warm_code {
        m.timing_mut().unwrap().preload_icache(CODE, 0x1000);
    }
    m
}

fn arm(code: &[u32]) -> Machine {
    arm_with(code, TimingConfig::default(), true)
}

fn arm_with(code: &[u32], cfg: TimingConfig, warm_code: bool) -> Machine {
    let mut m = machine(cfg, warm_code);
    for (i, w) in code.iter().enumerate() {
        m.mem.write32(CODE + 4 * i as u32, *w).unwrap();
    }
    m
}

fn thumb(code: &[u16]) -> Machine {
    let mut m = machine(TimingConfig::default(), true);
    for (i, h) in code.iter().enumerate() {
        m.mem.write16(CODE + 2 * i as u32, *h).unwrap();
    }
    m.cpu.thumb = true;
    m
}

/// Warm `n` data lines starting at `addr`.
fn warm_data(m: &mut Machine, addr: u32, len: u32) {
    m.timing_mut().unwrap().preload_dcache(addr, len);
}

/// Issue and retire cycles of the next `n` instructions.
fn run(m: &mut Machine, n: usize) -> (Vec<u64>, Vec<u64>) {
    let (mut issue, mut retire) = (Vec::new(), Vec::new());
    for k in 0..n {
        let mut cycle = None;
        let pc = m.cpu.r[15];
        m.step(&mut |ev: &RetireEvent, _: &[MemAccess]| cycle = Some(ev.cycle))
            .unwrap_or_else(|e| panic!("step {k} at {pc:#x}: {e}"));
        retire.push(cycle.expect("retired"));
        issue.push(m.timing().unwrap().last_issue_cycle());
    }
    (issue, retire)
}

fn issues(m: &mut Machine, n: usize) -> Vec<u64> {
    run(m, n).0
}

fn report(m: &Machine) -> TimingReport {
    m.timing_report().unwrap()
}

#[test]
fn load_use_stalls_two_cycles() {
    // ldr r0,[r1]: i=0, r0 ready at 0+3. add r2,r0: i=3 (load-use 2). add r3,r2: i=4 (ALU
    // result latency 1). Retire: ldr 0+3=3, add 3+2=5, add 4+2=6. Cycles = 3 + 2 stalls.
    let mut m = arm(&[0xe5910000 /* ldr r0, [r1] */, 0xe2802001 /* add r2, r0, #1 */, 0xe2823001 /* add r3, r2, #1 */]);
    m.cpu.r[1] = DATA;
    warm_data(&mut m, DATA, 4);
    assert_eq!(run(&mut m, 3), (vec![0, 3, 4], vec![3, 5, 6]));
    let r = report(&m);
    assert_eq!((r.cycles, r.instructions, r.stalls.load_use, r.stalls.total), (5, 3, 2, 2));
    assert_eq!((r.dcache.accesses, r.dcache.misses), (1, 0));

    // One independent instruction in between hides one of the two cycles: ldr i=0, add r3
    // i=1, add r2,r0 i=3. Retire: ldr 3, add r3 would be 1+2=3 but retire cycles strictly
    // increase: 4; add r2 3+2=5.
    let mut m = arm(&[0xe5910000 /* ldr r0, [r1] */, 0xe2833001 /* add r3, r3, #1 */, 0xe2802001 /* add r2, r0, #1 */]);
    m.cpu.r[1] = DATA;
    warm_data(&mut m, DATA, 4);
    assert_eq!(run(&mut m, 3), (vec![0, 1, 3], vec![3, 4, 5]));
    assert_eq!(report(&m).stalls.load_use, 1);
}

#[test]
fn multiply_result_latency_depends_on_rs() {
    // mul r0,r1,r2 (Rs = r2) at i=0; add r3,r0 issues at the MUL result latency: 2 for a
    // small Rs (bits 31:15 all 0 or all 1), 3 for medium (31:27), 4 for large.
    let code = [0xe0000291 /* mul r0, r1, r2 */, 0xe2803001 /* add r3, r0, #1 */];
    for (rs, expect) in [(SMALL, 2), (0xFFFF_FFFB /* -5: small */, 2), (MEDIUM, 3), (0xF800_0000, 3), (LARGE, 4), (0x8000_0000, 4)] {
        let mut m = arm(&code);
        m.cpu.r[1] = 3;
        m.cpu.r[2] = rs;
        assert_eq!(issues(&mut m, 2), vec![0, expect], "Rs = {rs:#x}");
        assert_eq!(report(&m).stalls.mul_result, expect - 1, "Rs = {rs:#x}");
    }
    // MULS blocks the pipeline: issue latency = 2/3/4, so even an independent add waits.
    for (rs, expect) in [(SMALL, 2), (MEDIUM, 3), (LARGE, 4)] {
        let mut m = arm(&[0xe0100291 /* muls r0, r1, r2 */, 0xe2833001 /* add r3, r3, #1 */]);
        m.cpu.r[2] = rs;
        assert_eq!(issues(&mut m, 2), vec![0, expect]);
        assert_eq!(report(&m).stalls.multi_cycle_issue, expect - 1);
    }
    // UMULL issues over 2 cycles; RdHi is ready at 3/4/5. Unsigned rule: 0xFFFFFFFF is large.
    // add r6,r5: base 1 -> issue-latency bound 2 -> RdHi bound 3 (small) or 5 (large).
    for (rs, expect) in [(SMALL, 3), (MEDIUM, 4), (0xFFFF_FFFF, 5)] {
        let mut m = arm(&[0xe0854291 /* umull r4, r5, r1, r2 */, 0xe2856001 /* add r6, r5, #1 */]);
        m.cpu.r[2] = rs;
        assert_eq!(issues(&mut m, 2), vec![0, expect], "Rs = {rs:#x}");
        let r = report(&m);
        assert_eq!((r.stalls.multi_cycle_issue, r.stalls.mul_result), (1, expect - 2));
    }
    // The IXP2800 manual's example: UMLAL r6,r8 with a large Rs, the RdHi consumer issues at 5.
    let mut m = arm(&[0xe0a86291 /* umlal r6, r8, r1, r2 */, 0xe2889001 /* add r9, r8, #1 */]);
    m.cpu.r[2] = LARGE;
    assert_eq!(issues(&mut m, 2), vec![0, 5]);
    // Thumb MUL Rd, Rm is MULS Rd, Rm, Rd: Rs is Rd's old value. Medium -> issue latency 3.
    let mut m = thumb(&[0x4348 /* muls r0, r1, r0 */, 0x3101 /* adds r1, #1 */]);
    m.cpu.r[0] = MEDIUM;
    assert_eq!(issues(&mut m, 2), vec![0, 3]);
}

#[test]
fn multiplier_resource_and_out_of_order_completion() {
    // mul (large Rs) at 0: resource latency 3, result 4. The next mul waits for the MAC until
    // 3 (MAC resource 2); add r6 follows at 4.
    let mut m = arm(&[0xe0000291 /* mul r0, r1, r2 */, 0xe0030594 /* mul r3, r4, r5 */, 0xe2866001 /* add r6, r6, #1 */]);
    m.cpu.r[2] = LARGE;
    m.cpu.r[5] = 7;
    assert_eq!(issues(&mut m, 3), vec![0, 3, 4]);
    assert_eq!(report(&m).stalls.mac_resource, 2);
    // Independent instructions issue under the multiply (out-of-order completion): adds at
    // 1 and 2, the consumer of r0 at the result latency 4 (one stall cycle).
    let mut m = arm(&[
        0xe0000291, /* mul r0, r1, r2 */
        0xe2866001, /* add r6, r6, #1 */
        0xe2877001, /* add r7, r7, #1 */
        0xe2808001, /* add r8, r0, #1 */
    ]);
    m.cpu.r[2] = LARGE;
    assert_eq!(issues(&mut m, 4), vec![0, 1, 2, 4]);
    let r = report(&m);
    assert_eq!((r.stalls.mul_result, r.stalls.mac_resource, r.cycles), (1, 0, 5));
    // MIA (small Rs) writes acc0 at 0+1; MRA waits for acc0 and the MAC (both free at 1),
    // RdLo is ready at 1+2 = 3, RdHi at 1+3 = 4: add r2,r1 issues at 4.
    let mut m = arm(&[0xee202011 /* mia acc0, r1, r2 */, 0xec510000 /* mra r0, r1, acc0 */, 0xe2812001 /* add r2, r1, #1 */]);
    m.cpu.r[2] = SMALL;
    assert_eq!(issues(&mut m, 3), vec![0, 1, 4]);
}

#[test]
fn alu_result_feeding_the_shifter_costs_one_cycle() {
    // add r0 at 0: r0 is ready at 1 for plain use but at 2 for the shifter (RF shifts).
    let mut m = arm(&[0xe2810001 /* add r0, r1, #1 */, 0xe0832100 /* add r2, r3, r0, lsl #2 */, 0xe0854000 /* add r4, r5, r0 */]);
    assert_eq!(issues(&mut m, 3), vec![0, 2, 3]);
    assert_eq!(report(&m).stalls.shifter, 1);
    // The same operand unshifted: no stall.
    let mut m = arm(&[0xe2810001 /* add r0, r1, #1 */, 0xe0832000 /* add r2, r3, r0 */]);
    assert_eq!(issues(&mut m, 2), vec![0, 1]);
    // A load result has no shifter penalty beyond its own latency 3.
    let mut m = arm(&[0xe5910000 /* ldr r0, [r1] */, 0xe0832100 /* add r2, r3, r0, lsl #2 */]);
    m.cpu.r[1] = DATA;
    warm_data(&mut m, DATA, 4);
    assert_eq!(issues(&mut m, 2), vec![0, 3]);
    assert_eq!(report(&m).stalls.shifter, 0);
    // Thumb LSLS Rd, Rm, #2 is MOV Rd, Rm, LSL #2: the same rule.
    let mut m = thumb(&[0x1c42 /* adds r2, r0, #1 */, 0x0090 /* lsls r0, r2, #2 */]);
    assert_eq!(issues(&mut m, 2), vec![0, 2]);
}

#[test]
fn register_shift_and_rrx_issue_in_two_cycles() {
    // add r0,r1,r2,lsl r3: issue 2, result 2 -> add r4,r0 at 2 (one multi-cycle stall).
    let mut m = arm(&[0xe0810312 /* add r0, r1, r2, lsl r3 */, 0xe2804001 /* add r4, r0, #1 */]);
    assert_eq!(issues(&mut m, 2), vec![0, 2]);
    let r = report(&m);
    assert_eq!((r.stalls.multi_cycle_issue, r.stalls.total), (1, 1));
    // RRX costs the same.
    let mut m = arm(&[0xe1a00061 /* rrx r0, r1 */, 0xe2833001 /* add r3, r3, #1 */]);
    assert_eq!(issues(&mut m, 2), vec![0, 2]);
    // Thumb LSLS by register is MOVS Rd, Rd, LSL Rs: two cycles.
    let mut m = thumb(&[0x4088 /* lsls r0, r1 */, 0x3101 /* adds r1, #1 */]);
    assert_eq!(issues(&mut m, 2), vec![0, 2]);
}

#[test]
fn ldm_and_stm_issue_in_two_plus_n_cycles() {
    // ldm {r1-r4}: issue latency 2+4 = 6; registers ready at 5, 6, 7, 8 (LDM result latency
    // 5 for the first, +1 each). add r5 at 6; add r6,r4 at 8 (load-use 1).
    let mut m = arm(&[0xe890001e /* ldm r0, {r1-r4} */, 0xe2855001 /* add r5, r5, #1 */, 0xe2846001 /* add r6, r4, #1 */]);
    m.cpu.r[0] = DATA;
    warm_data(&mut m, DATA, 16);
    assert_eq!(run(&mut m, 3), (vec![0, 6, 8], vec![3, 8, 10]));
    let r = report(&m);
    assert_eq!((r.stalls.multi_cycle_issue, r.stalls.load_use, r.dcache.accesses), (5, 1, 4));
    // DM p.211: `stm {r2,r3}; add` takes 5 cycles: stm issues over 2+2 = 4, add at 4.
    let mut m = arm(&[0xe880000c /* stm r0, {r2, r3} */, 0xe2811001 /* add r1, r1, #1 */]);
    m.cpu.r[0] = DATA;
    warm_data(&mut m, DATA, 8);
    assert_eq!(issues(&mut m, 2), vec![0, 4]);
    assert_eq!(report(&m).cycles, 5);
    // Thumb PUSH {r4, lr} is STMDB sp!, {r4, lr}: also 2+2.
    let mut m = thumb(&[0xb510 /* push {r4, lr} */, 0x3101 /* adds r1, #1 */]);
    warm_data(&mut m, STACK_TOP - 8, 8);
    assert_eq!(issues(&mut m, 2), vec![0, 4]);
}

#[test]
fn strd_and_ldrd() {
    // DM p.211: `strd; add` takes 3 cycles: STRD issues over 2.
    let mut m = arm(&[0xe1c020f0 /* strd r2, [r0] */, 0xe2811001 /* add r1, r1, #1 */]);
    m.cpu.r[0] = DATA;
    warm_data(&mut m, DATA, 8);
    assert_eq!(issues(&mut m, 2), vec![0, 2]);
    assert_eq!(report(&m).cycles, 3);
    // ldrd r2 at 0: r2 ready 3, r3 ready 4, and the next memory operation waits one cycle:
    // ldr r4 at 2 (not 1); add r5,r3 base 3, r3 ready 4 -> 4.
    let mut m = arm(&[0xe1c020d0 /* ldrd r2, [r0] */, 0xe5914000 /* ldr r4, [r1] */, 0xe2835001 /* add r5, r3, #1 */]);
    m.cpu.r[0] = DATA;
    m.cpu.r[1] = DATA + 8;
    warm_data(&mut m, DATA, 16);
    assert_eq!(issues(&mut m, 3), vec![0, 2, 4]);
    let r = report(&m);
    assert_eq!((r.stalls.multi_cycle_issue, r.stalls.load_use), (1, 1));
}

/// mov r0,#3; loop: subs r0,r0,#1; bne loop; add r1,r1,#1 -- 8 instructions retire.
const LOOP: [u32; 4] = [0xe3a00003 /* mov r0, #3 */, 0xe2500001 /* subs r0, r0, #1 */, 0x1afffffd /* bne loop */, 0xe2811001 /* add r1, r1, #1 */];

#[test]
fn btb_miss_then_hit_in_a_loop() {
    // mov 0, subs 1, bne 2: first execution misses the BTB and is taken: mispredicted, +4
    // -> subs 7. bne 8 hits (allocated weakly taken): predicted taken, correct -> subs 9.
    // bne 10 is not taken but predicted taken (now strongly): +4 -> add 15.
    let mut m = arm(&LOOP);
    assert_eq!(issues(&mut m, 8), vec![0, 1, 2, 7, 8, 9, 10, 15]);
    let r = report(&m);
    assert_eq!((r.btb.lookups, r.btb.hits, r.btb.mispredicts), (3, 2, 2));
    assert_eq!((r.stalls.branch_mispredict, r.cycles), (8, 16));
    assert!((r.btb.accuracy - 1.0 / 3.0).abs() < 1e-9);

    // With the BTB off every branch is predicted not taken: both taken executions pay 4, the
    // final not-taken one is correct.
    let mut cfg = TimingConfig::default();
    cfg.branch.btb_enabled = false;
    let mut m = arm_with(&LOOP, cfg, true);
    assert_eq!(issues(&mut m, 8), vec![0, 1, 2, 7, 8, 13, 14, 15]);
    let r = report(&m);
    assert_eq!((r.btb.hits, r.btb.mispredicts), (0, 2));
}

#[test]
fn thumb_mispredict_costs_five() {
    // movs 0, subs 1, bne 2 (miss, taken: +5) -> subs 8, bne 9 (hit, correct), subs 10,
    // bne 11 (predicted taken, falls through: +5) -> adds 17.
    let mut m = thumb(&[0x2003 /* movs r0, #3 */, 0x3801 /* subs r0, #1 */, 0xd1fd /* bne loop */, 0x3101 /* adds r1, #1 */]);
    assert_eq!(issues(&mut m, 8), vec![0, 1, 2, 8, 9, 10, 11, 17]);
    assert_eq!(report(&m).stalls.branch_mispredict, 10);
}

#[test]
fn unpredicted_pc_writes() {
    // Each case: add r1 at 0, the PC write at 1, the instruction at the target issues at
    // 1 + the table's issue latency (IXP45x Tables 81/82).
    let target = CODE + 0x10;
    let cases: [(u32, &str, u64); 5] = [
        (0xe12fff12, "bx r2: 5", 5),
        (0xe1a0f002, "mov pc, r2: 4 + 1", 5),
        (0xe084f312, "add pc, r4, r2, lsl r3: 4 + 2", 6),
        (0xe590f000, "ldr pc, [r0]: 8", 8),
        (0xe8908010, "ldm r0, {r4, pc}: 10 + max(0, 2 - 3)", 10),
    ];
    for (word, what, lat) in cases {
        let mut m = arm(&[0xe2811001 /* add r1, r1, #1 */, word, 0xe1a00000, 0xe1a00000, 0xe2833001 /* add r3, r3, #1 */]);
        m.cpu.r[2] = target;
        m.cpu.r[0] = DATA;
        m.mem.write32(DATA, target).unwrap();
        m.mem.write32(DATA + 4, target).unwrap();
        warm_data(&mut m, DATA, 8);
        assert_eq!(issues(&mut m, 3), vec![0, 1, 1 + lat], "{what}");
        assert_eq!(m.cpu.r[15], target + 4, "{what}");
        assert_eq!(report(&m).unpredicted_pc_writes, 1, "{what}");
    }
    // LDM with five registers including pc: 10 + (5 - 3) = 12; its own 2 + 5 cycles are
    // multi-cycle issue, the other 5 the PC write.
    let mut m = arm(&[0xe2811001 /* add r1, r1, #1 */, 0xe89080f0 /* ldm r0, {r4-r7, pc} */, 0, 0, 0xe2833001]);
    m.cpu.r[0] = DATA;
    m.mem.write32(DATA + 16, target).unwrap();
    warm_data(&mut m, DATA, 32);
    assert_eq!(issues(&mut m, 3), vec![0, 1, 13]);
    let r = report(&m);
    assert_eq!((r.stalls.multi_cycle_issue, r.stalls.unpredicted_pc_write), (6, 5));
    // ldr pc whose word misses in the D-cache: the target is known 50 cycles late, so the
    // next instruction issues at 1 + 8 + 50 = 59.
    let mut m = arm(&[0xe2811001 /* add r1, r1, #1 */, 0xe590f000 /* ldr pc, [r0] */, 0, 0, 0xe2833001]);
    m.cpu.r[0] = DATA;
    m.mem.write32(DATA, target).unwrap();
    assert_eq!(issues(&mut m, 3), vec![0, 1, 59]);
    let r = report(&m);
    assert_eq!((r.stalls.dcache_miss, r.stalls.unpredicted_pc_write), (50, 7));
    // bxne with the condition failing: 1 cycle, no PC write.
    let mut m = arm(&[0xe2811001 /* add r1, r1, #1 */, 0x112fff12 /* bxne r2 */, 0xe2833001 /* add r3, r3, #1 */]);
    m.cpu.z = true;
    assert_eq!(issues(&mut m, 3), vec![0, 1, 2]);
    assert_eq!(report(&m).unpredicted_pc_writes, 0);
    // ldrne pc with the condition failing: the table's 2 cycles.
    let mut m = arm(&[0x1590f000 /* ldrne pc, [r0] */, 0xe2833001 /* add r3, r3, #1 */]);
    m.cpu.z = true;
    assert_eq!(issues(&mut m, 2), vec![0, 2]);
}

#[test]
fn thumb_pc_writes_pay_one_more() {
    // bx r2 in Thumb state: 5 + 1 = 6 -> target at 6.
    let mut m = thumb(&[0x4710 /* bx r2 */, 0x46c0, 0x46c0, 0x46c0, 0x3101 /* adds r1, #1 */]);
    m.cpu.r[2] = (CODE + 8) | 1;
    assert_eq!(issues(&mut m, 2), vec![0, 6]);
    // BL pair: the prefix is a data-processing op (writes lr at 0, ready at 1); the suffix at
    // 1 is an unpredicted direct branch, 5 + 1 -> target at 7.
    let mut m = thumb(&[0xf000 /* bl CODE+0x20 (prefix) */, 0xf80e /* (suffix) */]);
    m.mem.write16(CODE + 0x20, 0x3101 /* adds r1, #1 */).unwrap();
    assert_eq!(issues(&mut m, 3), vec![0, 1, 7]);
    assert_eq!(m.cpu.r[15], CODE + 0x22);
    assert_eq!(report(&m).stalls.unpredicted_pc_write, 5);
}

#[test]
fn icache_cold_miss_then_warm() {
    // Nine adds over two 32-byte lines, I-cache cold: the first word arrives 50 cycles after
    // the request at 0 (critical word first), the next ones 3 cycles apart (i = 50 + 3k for
    // the 8 words of line 0). Line 1 is requested at 72 (the second fetch buffer is free):
    // i(8) = 72 + 50 = 122.
    let code: Vec<u32> = (0..9).map(|k| 0xe2800001 | ((k % 8 + 1) << 12) | ((k % 8 + 1) << 16)).collect(); // add rK, rK, #1
    let mut m = arm_with(&code, TimingConfig::default(), false);
    assert_eq!(issues(&mut m, 9), vec![50, 53, 56, 59, 62, 65, 68, 71, 122]);
    let r = report(&m);
    assert_eq!((r.icache.accesses, r.icache.misses, r.stalls.icache_miss, r.cycles), (9, 2, 114, 123));
    // Run the same code again: both lines hit, one instruction per cycle.
    m.cpu.r[15] = CODE;
    assert_eq!(issues(&mut m, 9), (123..132).collect::<Vec<u64>>());
    assert_eq!(report(&m).icache.misses, 2);
}

#[test]
fn dcache_miss_and_eviction() {
    // Set 0 of the 32-way D-cache holds lines DATA + k KiB, k = 0..31 (preloaded in way order,
    // so the round-robin pointer is back at way 0).
    let code = [
        0xe5815000, /* str r5, [r1]   hit: dirties the lower half of line DATA */
        0xe5920000, /* ldr r0, [r2]   r2 = DATA + 32 KiB: miss, evicts DATA (way 0) */
        0xe2803001, /* add r3, r0, #1 */
        0xe5914000, /* ldr r4, [r1]   miss: DATA was evicted */
        0xe2846001, /* add r6, r4, #1 */
    ];
    let mut m = arm(&code);
    m.cpu.r[1] = DATA;
    m.cpu.r[2] = DATA + 32 * 1024;
    for k in 0..32 {
        warm_data(&mut m, DATA + k * 1024, 4);
    }
    // str 0; ldr at 1 accesses at 2, misses: r0 ready at 1 + 3 + 50 = 54 -> add at 54
    // (52 D-cache stall cycles). The dirty half goes to the (empty) write buffer: no stall.
    // ldr r4 at 55 misses again: ready 55 + 3 + 50 = 108 -> add at 108.
    assert_eq!(issues(&mut m, 5), vec![0, 1, 54, 55, 108]);
    let r = report(&m);
    assert_eq!((r.dcache.accesses, r.dcache.misses, r.dcache.read_misses), (3, 2, 2));
    assert_eq!((r.dcache.writebacks, r.dcache.write_buffer_writes, r.stalls.dcache_miss), (1, 1, 104));
}

#[test]
fn hit_under_miss_and_full_fill_buffer() {
    // ldr r0 at 0 misses (request at 1, critical word 0 at 51, word k at 51 + 3k). ldr r3 of
    // word 1 at 1 hits the line being filled (pend buffer): data at 54, so r3 is ready at
    // 1 + 3 + (54 - 2) = 56 and add r4,r3 issues at 56.
    let mut m = arm(&[0xe5910000 /* ldr r0, [r1] */, 0xe5913004 /* ldr r3, [r1, #4] */, 0xe2834001 /* add r4, r3, #1 */]);
    m.cpu.r[1] = DATA;
    assert_eq!(issues(&mut m, 3), vec![0, 1, 56]);
    let r = report(&m);
    assert_eq!((r.dcache.misses, r.dcache.pend_hits), (1, 1));
    // Five independent loads to five lines: four fills run in parallel (requests at 1..4,
    // the first done at 1 + 50 + 7 * 3 = 72); the fifth (issued at 4, access at 5) waits for
    // a fill buffer until 72, and the next instruction with it: add at 4 + 1 + 67 = 72.
    let mut m = arm(&[
        0xe5910000, /* ldr r0, [r1] */
        0xe5912020, /* ldr r2, [r1, #32] */
        0xe5913040, /* ldr r3, [r1, #64] */
        0xe5914060, /* ldr r4, [r1, #96] */
        0xe5915080, /* ldr r5, [r1, #128] */
        0xe2866001, /* add r6, r6, #1 */
    ]);
    m.cpu.r[1] = DATA;
    assert_eq!(issues(&mut m, 6), vec![0, 1, 2, 3, 4, 72]);
    assert_eq!(report(&m).stalls.buffer_full, 67);
}

#[test]
fn write_buffer_fills_up_and_coalesces() {
    // Ten store misses to distinct 16-byte blocks (no write-allocate: each takes a write
    // buffer entry), one per cycle from 0. Entries drain one after another, 12 cycles each:
    // store k (access at k+1) drains until 13 + 12k. Store 8 (access at 9) finds all 8
    // entries busy and waits until 13 (4 cycles): the add-equivalent next store issues at
    // 8 + 1 + 4 = 13; store 9 (access at 14) waits until 25 (11 cycles): add at 25.
    let mut code = vec![0xe4810010u32; 10]; // str r0, [r1], #16
    code.push(0xe2866001); // add r6, r6, #1
    let mut m = arm(&code);
    m.cpu.r[1] = DATA;
    assert_eq!(issues(&mut m, 11), vec![0, 1, 2, 3, 4, 5, 6, 7, 8, 13, 25]);
    let r = report(&m);
    assert_eq!((r.stalls.buffer_full, r.dcache.write_misses, r.dcache.write_buffer_writes), (15, 10, 10));
    // A store to a block whose entry waits behind another merges into it.
    let mut m = arm(&[0xe5810000 /* str r0, [r1] */, 0xe5820000 /* str r0, [r2] */, 0xe5820004 /* str r0, [r2, #4] */]);
    m.cpu.r[1] = DATA;
    m.cpu.r[2] = DATA + 0x100;
    assert_eq!(issues(&mut m, 3), vec![0, 1, 2]);
    let r = report(&m);
    assert_eq!((r.dcache.write_buffer_writes, r.dcache.write_buffer_coalesced), (3, 1));
}

#[test]
fn external_stall_shifts_everything_after_it() {
    let code = [0xe2811001 /* add r1, r1, #1 */, 0xe2822001 /* add r2, r2, #1 */, 0xe2833001 /* add r3, r3, #1 */];
    // Frozen for 10 cycles after the first instruction: the others issue at 1+10 and 2+10 and
    // retire 10 later than they would (3, 4 -> 13, 14).
    let mut m = arm(&code);
    let (i, r) = run(&mut m, 1);
    assert_eq!((i, r), (vec![0], vec![2]));
    m.timing_mut().unwrap().stall(10);
    assert_eq!(run(&mut m, 2), (vec![11, 12], vec![13, 14]));
    let rep = report(&m);
    assert_eq!((rep.stalls.external, rep.cycles, rep.stalls.total), (10, 13, 10));
    // The same through a handle held by the retire hook.
    let mut m = arm(&code);
    let handle = m.timing_mut().unwrap().stall_handle();
    let mut cycles = Vec::new();
    for _ in 0..3 {
        m.step(&mut |ev: &RetireEvent, _: &[MemAccess]| {
            cycles.push(ev.cycle);
            if ev.pc == CODE {
                handle.stall(10);
            }
        })
        .unwrap();
    }
    assert_eq!(cycles, vec![2, 13, 14]);
    assert_eq!(report(&m).stalls.external, 10);
}

#[test]
fn report_serializes_and_prints() {
    let mut m = arm(&LOOP);
    run(&mut m, 8);
    let r = report(&m);
    let j = serde_json::to_value(&r).unwrap();
    assert_eq!(j["cycles"], 16);
    assert_eq!(j["btb"]["mispredicts"], 2);
    assert_eq!(j["stalls"]["branch_mispredict"], 8);
    let text = r.to_string();
    for needle in ["CPI 2.000", "I-cache", "D-cache", "BTB", "branch mispredict", "external (trace module)"] {
        assert!(text.contains(needle), "{needle} in\n{text}");
    }
    // Timing off: retire cycles are 0.
    let mut m = arm(&LOOP);
    m.disable_timing();
    let mut seen = Vec::new();
    m.step(&mut |ev: &RetireEvent, _: &[MemAccess]| seen.push(ev.cycle)).unwrap();
    assert_eq!(seen, vec![0]);
    assert!(m.timing_report().is_none());
}

#[test]
fn bad_configurations_are_rejected_with_the_key() {
    let mut cfg = TimingConfig::default();
    cfg.dcache.ways = 0;
    let mut m = arm(&LOOP);
    let e = m.enable_timing(cfg).unwrap_err().to_string();
    assert!(e.contains("dcache.ways"), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.toml");
    std::fs::write(&path, "[memory]\nlatency = 80\nfill_bufers = 2\n").unwrap();
    let e = TimingConfig::from_toml_file(&path).unwrap_err().to_string();
    assert!(e.contains("t.toml") && e.contains("fill_bufers"), "{e}");
    std::fs::write(&path, "[memory]\nlatency = 80\n").unwrap();
    assert_eq!(TimingConfig::from_toml_file(&path).unwrap().memory.latency, 80);
    let e = TimingConfig::from_toml_file(&dir.path().join("missing.toml")).unwrap_err().to_string();
    assert!(e.contains("missing.toml"), "{e}");
}

/// Every test program with timing on: same exit code and output as without timing (and as
/// the manifest), strictly increasing retire cycles, a plausible CPI.
#[test]
fn every_program_runs_with_timing() {
    let manifest = common::manifest();
    for p in &manifest.programs {
        let stack = u32::from_str_radix(p.qemu_stack_base.trim_start_matches("0x"), 16).unwrap();
        let limit = 2 * p.qemu_instructions + 1000;
        let (mut plain, out_plain, _) = common::sim_like_qemu(p, stack);
        let code_plain = plain.run(limit, &mut streamtrace_sim::NoHook).unwrap_or_else(|e| panic!("{}: {e}", p.name));

        let (mut timed, out_timed, _) = common::sim_like_qemu(p, stack);
        timed.enable_timing(TimingConfig::default()).unwrap();
        let (mut last, mut ok, mut first_bad) = (None::<u64>, true, None);
        let code = timed
            .run(limit, &mut |ev: &RetireEvent, _: &[MemAccess]| {
                if let Some(l) = last {
                    if ev.cycle <= l && ok {
                        ok = false;
                        first_bad = Some((ev.pc, l, ev.cycle));
                    }
                }
                last = Some(ev.cycle);
            })
            .unwrap_or_else(|e| panic!("{} with timing: {e}", p.name));
        assert!(ok, "{}: retire cycles not strictly increasing at (pc, previous, cycle) {first_bad:x?}", p.name);
        assert_eq!((code, out_timed.text()), (code_plain, out_plain.text()), "{}", p.name);
        assert_eq!((code, out_timed.text()), (p.exit_code, p.stdout.clone()), "{}", p.name);
        assert_eq!(timed.retired, plain.retired, "{}", p.name);
        let r = timed.timing_report().unwrap();
        assert_eq!(r.instructions, timed.retired);
        assert_eq!(r.cycles, r.instructions + r.stalls.total, "{}", p.name);
        assert!(r.last_retire_cycle >= r.cycles - 1, "{}", p.name);
        assert!((1.0..=10.0).contains(&r.cpi), "{}: CPI {}", p.name, r.cpi);
        eprintln!(
            "{:<14} CPI {:.3}  I$ miss {:.4}%  D$ miss {:.3}%  BTB acc {:.2}%  stalls {}",
            p.name,
            r.cpi,
            100.0 * r.icache.miss_rate,
            100.0 * r.dcache.miss_rate,
            100.0 * r.btb.accuracy,
            serde_json::to_string(&r.stalls).unwrap()
        );
    }
}

//! The scenario definitions: program (encodings checked with arm-none-eabi-as -march=armv5te
//! and objdump), execution path, configurations, and the text that explains them.

use streamtrace_model::RetireEvent;

use super::program::{arm, data, thumb, Program, Run, Unit};

/// Where a mid-trace decoder joins (section 6.3: search for the sync marker from a byte).
#[derive(Clone, Copy, Debug)]
pub enum Join {
    /// The decoder is handed the trace from this byte on.
    Byte(u64),
    /// From the byte right after the first sync marker (so it finds the second one).
    AfterFirstMarker,
}

pub struct Scenario {
    pub name: &'static str,
    pub title: &'static str,
    /// Sections of docs/trace-format.md the scenario exercises.
    pub spec: &'static str,
    pub about: &'static [&'static str],
    pub configs: &'static [&'static str],
    pub program: Program,
    pub events: Vec<RetireEvent>,
    pub sync_before: Vec<usize>,
    /// `Encoder::overflow(lost)` before these event indices.
    pub overflow_before: Vec<(usize, u64)>,
    pub joins: &'static [Join],
}

/// Return address of the code that "called" each scenario; never executed.
const EXIT: u32 = 0x0000_1000;

pub fn all() -> Vec<Scenario> {
    vec![
        fig4(),
        records(),
        aolc(),
        rsdc_forced_miss(),
        exception_after_dcond(),
        maxsl_cut(),
        interworking(),
        isa_arm(),
        sync_requested(),
        sync_periodic(),
        nexs_groups(),
        replacement(),
        end_flush(),
        sdc_entry0(),
        overflow(),
    ]
}

// ---------------------------------------------------------------------------------------

const FIG4_LOOP: u32 = 0x0200_01f4;
const FIG4: &[Unit] = &[
    arm(0x0200_01f4, 0xe1a0110c, "loop: mov   r1, r12, lsl #2"),
    arm(0x0200_01f8, 0xe7942001, "ldr   r2, [r4, r1]"),
    arm(0x0200_01fc, 0xe79e3001, "ldr   r3, [r14, r1]"),
    arm(0x0200_0200, 0xe0203892, "mla   r0, r2, r8, r3"),
    arm(0x0200_0204, 0xe28cc001, "add   r12, r12, #1"),
    arm(0x0200_0208, 0xe35c0063, "cmp   r12, #99"),
    arm(0x0200_020c, 0xe0866000, "add   r6, r6, r0"),
    arm(0x0200_0210, 0xe7850001, "str   r0, [r5, r1]"),
    arm(0x0200_0214, 0xdafffff6, "ble   loop (0x020001f4)"),
    arm(0x0200_0218, 0xe12fff1e, "bx    lr"),
];

fn fig4() -> Scenario {
    let program = Program::new(&[FIG4]);
    let mut r = Run::new(&program, FIG4_LOOP);
    for iter in 0..100 {
        r.seq(8);
        if iter < 99 {
            r.taken(FIG4_LOOP);
        } else {
            r.not_taken();
        }
    }
    r.taken(0x0000_8000);
    Scenario {
        name: "fig4",
        title: "The paper's Fig. 4: a 100-iteration loop at 0x020001f4, record for record",
        spec: "3 3.1 5.1 5.2 5.4 6.1 6.2 6.3",
        about: &[
            "The loop body (9 instructions ending in a taken BLE) is one stream (0x020001f4, 9).",
            "bsdc-16x4-64 gives the paper's records: an address miss (47 bits), two SDC hits",
            "'0 011000' (set 6 = SA[7:4] xor SL[3:0] = 0xf xor 0x9, way 0), then 96 one-bit LSP",
            "hits. The last iteration falls through the BLE into BX LR (a not-taken branch does",
            "not end a stream, section 3), making (0x020001f4, 10), whose start address is",
            "inferable (section 3.1: the previous stream ended in a taken dcond). Under esdc",
            "and rsdc the 96 hits become AOLC run records (section 5.4): three full runs of 16",
            "grow the counter from 4 to 5 bits, then a full run of 32 and a flushed run of 16.",
            "rsdc-32x4-128,isa=arm is the paper's recommended rSDC (spec 9.3): k = 7, and the",
            "address field drops A[1:0]. The baselines show the same streams as full",
            "descriptors (fbase), with inference (base), and as NEXS XOR differences (nexs, 6.2).",
            "Spec section 9 lists the bsdc, esdc and rsdc-32x4-128,isa=arm bits of this file.",
        ],
        configs: &["bsdc-16x4-64", "esdc-16x4-64", "rsdc-16x4-64", "rsdc-32x4-128,isa=arm", "fbase", "base", "nexs"],
        program,
        events: r.events.clone(),
        sync_before: vec![],
        overflow_before: vec![],
        joins: &[],
    }
}

// ---------------------------------------------------------------------------------------

const REC_MAIN: &[Unit] = &[
    arm(0x8000, 0xe3a04004, "mov   r4, #4"),
    arm(0x8004, 0xe59f300c, "1: ldr r3, [pc, #12]   @ r3 = 0x02000100"),
    arm(0x8008, 0xe12fff33, "blx   r3"),
    arm(0x800c, 0xe2544001, "subs  r4, r4, #1"),
    arm(0x8010, 0x1afffffb, "bne   1b (0x8004)"),
    arm(0x8014, 0xe12fff1e, "bx    lr"),
    data(0x8018, 0x02000100, ".word 0x02000100   (literal, not executed)"),
];
const REC_FAR: &[Unit] = &[
    arm(0x0200_0100, 0xe51f5000, "ldr   r5, [pc, #-0]   @ r5 = 0x02000200"),
    arm(0x0200_0104, 0xe12fff15, "bx    r5"),
    data(0x0200_0108, 0x02000200, ".word 0x02000200   (literal, not executed)"),
    arm(0x0200_0200, 0xe2800001, "add   r0, r0, #1"),
    arm(0x0200_0204, 0xe12fff1e, "bx    lr"),
];

fn records() -> Scenario {
    let program = Program::new(&[REC_MAIN, REC_FAR]);
    let mut r = Run::new(&program, 0x8000);
    r.seq(2).taken(0x0200_0100);
    for i in 0..4 {
        r.seq(1).taken(0x0200_0200); // ldr r5; bx r5
        r.seq(1).taken(0x800c); // add; bx lr
        r.seq(1); // subs
        if i < 3 {
            r.taken(0x8004).seq(1).taken(0x0200_0100);
        } else {
            r.not_taken().taken(EXIT);
        }
    }
    Scenario {
        name: "records",
        title: "Every record type of Table 2 and the e/rSDC address field L (LVSA hit and miss)",
        spec: "3.1 5.1 5.2 5.3 5.4 6.1 6.3",
        about: &[
            "A loop at 0x8000 calls a function in another 256 KiB region (0x02000100) through",
            "BLX r3; that function jumps on with BX r5 to 0x02000200, which returns with BX LR.",
            "Four streams per iteration: (0x8004,2) ending in BLX r3, (0x02000100,2) ending in",
            "BX r5, (0x02000200,2) ending in BX LR, (0x800c,2) ending in the taken BNE; the",
            "first iteration starts at 0x8000 (SL 3) and the last ends with BX LR (0x800c,3).",
            "bsdc: address misses (section 6.1, A(32)), an inferable miss (section 3.1: after",
            "the taken BNE), SDC hits (LSP miss) and one-bit LSP hits.",
            "esdc: the address field is L (section 6.1): '1' A[17:0] when A[31:18] equals the",
            "LVSA, else '0' A[31:0]; the LVSA is updated by address records only (5.3). The",
            "five LSP hits of iterations 3 and 4 form one AOLC run record (n=5 in s=4 bits),",
            "emitted before the final miss record (5.4); 5 < 2^(4-1) so the monitor drops to 7.",
            "rsdc: the LVSA (A[31:20]) is compared and updated for every stream (5.3), so each",
            "switch between the two regions forces an SDC hit to a miss with a full address.",
            "bsdc with hist=2: the LSP index is h0 xor (h1 << 1) (section 5.2), so the first",
            "LSP hit comes one stream later than with hist=1.",
        ],
        configs: &["bsdc-16x4-64", "esdc-16x4-64", "rsdc-16x4-64", "bsdc-16x4-64,hist=2"],
        program,
        events: r.events.clone(),
        sync_before: vec![],
        overflow_before: vec![],
        joins: &[],
    }
}

// ---------------------------------------------------------------------------------------

const AOLC_MAIN: &[Unit] = &[
    arm(0x8000, 0xe3a0001b, "mov   r0, #27"),
    arm(0x8004, 0xe2500001, "1: subs r0, r0, #1"),
    arm(0x8008, 0x1afffffd, "bne   1b (0x8004)"),
    arm(0x800c, 0xe12fff1e, "bx    lr"),
];

fn aolc() -> Scenario {
    let program = Program::new(&[AOLC_MAIN]);
    let mut r = Run::new(&program, 0x8000);
    r.seq(1);
    for i in 0..27 {
        r.seq(1);
        if i < 26 {
            r.taken(0x8004);
        } else {
            r.not_taken();
        }
    }
    r.taken(EXIT);
    Scenario {
        name: "aolc",
        title: "AOLC run records: a counter that fills, growth after three full runs, a limit",
        spec: "5.4 6.1",
        about: &[
            "A two-instruction loop (SUBS; BNE) runs 27 times: (0x8000,3), then 25 streams",
            "(0x8004,2), then (0x8004,3) falling through into BX LR. The 25 repeated streams",
            "are an inferable miss, two SDC hits and 22 LSP hits.",
            "With olc=2 (s = 2 bits, n = 1..4): three full runs of 4 take the monitor",
            "8 -> 11 -> 14 -> 15, so s grows to 3 and the monitor restarts at 8 (section 5.4);",
            "a full run of 8 (monitor 11), then the last 2 hits are flushed as a run of 2 before",
            "the final miss record; 2 < 2^(3-1), so the monitor drops to 10.",
            "With olcmax=2 the width cannot grow: the monitor saturates at 15 and stays there.",
            "With the default olc=4: one full run of 16 (monitor 11) and a flushed run of 6.",
            "bsdc sends the same 22 hits as 22 one-bit records.",
        ],
        configs: &[
            "bsdc-16x4-64",
            "esdc-16x4-64",
            "esdc-16x4-64,olc=2",
            "esdc-16x4-64,olc=2,olcmax=2",
            "rsdc-16x4-64,olc=2",
        ],
        program,
        events: r.events.clone(),
        sync_before: vec![],
        overflow_before: vec![],
        joins: &[],
    }
}

// ---------------------------------------------------------------------------------------

const FORCED_MAIN: &[Unit] = &[
    arm(0x8000, 0xe3a04002, "mov   r4, #2"),
    arm(0x8004, 0xe59f3014, "1: ldr r3, [pc, #20]   @ r3 = 0x00200100 (f)"),
    arm(0x8008, 0xe12fff33, "blx   r3"),
    arm(0x800c, 0xe59f3010, "ldr   r3, [pc, #16]   @ r3 = 0x00300100 (g)"),
    arm(0x8010, 0xe12fff33, "blx   r3"),
    arm(0x8014, 0xe2544001, "subs  r4, r4, #1"),
    arm(0x8018, 0x1afffff9, "bne   1b (0x8004)"),
    arm(0x801c, 0xe12fff1e, "bx    lr"),
    data(0x8020, 0x00200100, ".word 0x00200100   (literal, not executed)"),
    data(0x8024, 0x00300100, ".word 0x00300100   (literal, not executed)"),
];
const FORCED_F: &[Unit] =
    &[arm(0x0020_0100, 0xe2800001, "f: add r0, r0, #1"), arm(0x0020_0104, 0xe12fff1e, "bx    lr")];
const FORCED_G: &[Unit] =
    &[arm(0x0030_0100, 0xe2800002, "g: add r0, r0, #2"), arm(0x0030_0104, 0xe12fff1e, "bx    lr")];

fn rsdc_forced_miss() -> Scenario {
    let program = Program::new(&[FORCED_MAIN, FORCED_F, FORCED_G]);
    let mut r = Run::new(&program, 0x8000);
    r.seq(2).taken(0x0020_0100);
    for i in 0..2 {
        r.seq(1).taken(0x800c); // f: add; bx lr
        r.seq(1).taken(0x0030_0100); // ldr r3; blx r3
        r.seq(1).taken(0x8014); // g: add; bx lr
        r.seq(1); // subs
        if i == 0 {
            r.taken(0x8004).seq(1).taken(0x0020_0100);
        } else {
            r.not_taken().taken(EXIT);
        }
    }
    Scenario {
        name: "rsdc-forced-miss",
        title: "rSDC forced misses: the SDC entry matches but the LVSA (A[31:20]) does not",
        spec: "5.1 5.3 6.1 8",
        about: &[
            "main (0x8000) calls f at 0x00200100 and g at 0x00300100 through BLX r3, twice.",
            "In rsdc-16x4-64 (u = 12) an entry stores A[19:0] and SL; A[31:20] come from the",
            "LVSA, which is compared and updated for every stream (section 5.3). f and g have",
            "equal A[19:0] (0x00100) and SL (2), so g's lookup matches f's entry (aliasing):",
            "the LVSA (0x000 after main's stream) differs from A[31:20] = 0x003, the SDC hit is",
            "forced to a miss, the full address is sent ('0' A[31:0]), and the matching entry",
            "is accessed instead of filling a victim (no duplicate entries). In the second",
            "iteration f, g and the stream after each return are all in the SDC but every one",
            "follows a region switch: all are forced misses. esdc (full tags) gets SDC hits;",
            "rsdc with u=8 has A[31:24] = 0 everywhere, so nothing is forced and f and g are",
            "different entries (tags A[23:0]).",
        ],
        configs: &["rsdc-16x4-64", "esdc-16x4-64", "rsdc-16x4-64,u=8"],
        program,
        events: r.events.clone(),
        sync_before: vec![],
        overflow_before: vec![],
        joins: &[],
    }
}

// ---------------------------------------------------------------------------------------

const VECTORS_LOW: &[Unit] = &[
    arm(0x00, 0xeafffffe, "b     .            (reset, not executed)"),
    arm(0x04, 0xeafffffe, "b     .            (undefined, not executed)"),
    arm(0x08, 0xe1b0f00e, "movs  pc, lr       (SWI vector: return)"),
    arm(0x0c, 0xeafffffe, "b     .            (prefetch abort, not executed)"),
    arm(0x10, 0xeafffffe, "b     .            (data abort, not executed)"),
    arm(0x14, 0xeafffffe, "b     .            (reserved, not executed)"),
    arm(0x18, 0xe25ef004, "subs  pc, lr, #4   (IRQ vector: return)"),
    arm(0x1c, 0xeafffffe, "b     .            (FIQ, not executed)"),
];
const EXC_MAIN: &[Unit] = &[
    arm(0x8000, 0xe3a00002, "mov   r0, #2"),
    arm(0x8004, 0xe2500001, "1: subs r0, r0, #1"),
    arm(0x8008, 0x1afffffd, "bne   1b (0x8004)"),
    arm(0x800c, 0xef000000, "swi   #0"),
    arm(0x8010, 0xe12fff1e, "bx    lr"),
];

fn exception_after_dcond() -> Scenario {
    let program = Program::new(&[VECTORS_LOW, EXC_MAIN]);
    let mut r = Run::new(&program, 0x8000);
    r.seq(2); // mov, subs
    r.exception(0x18, true); // BNE taken, then IRQ
    r.taken(0x8004); // subs pc, lr, #4
    r.seq(1).not_taken(); // subs, bne
    r.exception(0x08, false); // swi
    r.taken(0x8010); // movs pc, lr
    r.taken(EXIT); // bx lr
    Scenario {
        name: "exception-after-dcond",
        title: "An exception right after a taken direct conditional branch (EXCEPTION escape)",
        spec: "2 3 3.1 6.1 6.2 6.3",
        about: &[
            "The first BNE at 0x8008 is taken and an IRQ is taken right after it (the event has",
            "exc set, next_pc = vector 0x18). The stream (0x8000,3) ends by rule (b) of",
            "section 3; its record is followed by an EXCEPTION escape (6.3), so the next",
            "stream's start address (the vector) is sent in full even though the stream ended",
            "with a dcond (section 3.1, the paper's open case). The handler returns with",
            "SUBS pc, lr, #4 (iuncond) to the BNE's target 0x8004. The second time the BNE",
            "falls through and SWI at 0x800c raises an exception (exc on a class-none",
            "instruction): stream (0x8004,3), EXCEPTION, then (0x08,1) MOVS pc, lr and",
            "(0x8010,1) BX LR, all with full addresses.",
            "bsdc-16x4-64,sync=3: both exception-ended streams also reach the sync period; the",
            "encoder emits the EXCEPTION escape first, then SYNC (the spec states each rule",
            "but not their order; see docs/vectors-format.md, notes).",
        ],
        configs: &["bsdc-16x4-64", "esdc-16x4-64", "rsdc-16x4-64", "fbase", "base", "nexs", "bsdc-16x4-64,sync=3"],
        program,
        events: r.events.clone(),
        sync_before: vec![],
        overflow_before: vec![],
        joins: &[],
    }
}

// ---------------------------------------------------------------------------------------

const MAXSL_MAIN: &[Unit] = &[
    arm(0x8000, 0xe3a00000, "mov   r0, #0"),
    arm(0x8004, 0xe2811001, "add   r1, r1, #1"),
    arm(0x8008, 0xe2811002, "add   r1, r1, #2"),
    arm(0x800c, 0xe2811003, "add   r1, r1, #3"),
    arm(0x8010, 0xe2811004, "add   r1, r1, #4"),
    arm(0x8014, 0xe2811005, "add   r1, r1, #5"),
    arm(0x8018, 0xe2811006, "add   r1, r1, #6"),
    arm(0x801c, 0xe2811007, "add   r1, r1, #7"),
    arm(0x8020, 0xe2822001, "add   r2, r2, #1"),
    arm(0x8024, 0xe2822002, "add   r2, r2, #2"),
    arm(0x8028, 0xe2822003, "add   r2, r2, #3"),
    arm(0x802c, 0xe2822004, "add   r2, r2, #4"),
    arm(0x8030, 0xe2822005, "add   r2, r2, #5"),
    arm(0x8034, 0xe2822006, "add   r2, r2, #6"),
    arm(0x8038, 0xe2822007, "add   r2, r2, #7"),
    arm(0x803c, 0xea000007, "b     2f (0x8060)"),
];
const MAXSL_TAIL: &[Unit] = &[
    arm(0x8060, 0xe2833001, "2: add r3, r3, #1"),
    arm(0x8064, 0xe2833002, "add   r3, r3, #2"),
    arm(0x8068, 0xe2833003, "add   r3, r3, #3"),
    arm(0x806c, 0xe2833004, "add   r3, r3, #4"),
    arm(0x8070, 0xe2833005, "add   r3, r3, #5"),
    arm(0x8074, 0xe2833006, "add   r3, r3, #6"),
    arm(0x8078, 0xe3500000, "cmp   r0, #0"),
    arm(0x807c, 0x0a000007, "beq   3f (0x80a0)"),
    arm(0x80a0, 0xe2844001, "3: add r4, r4, #1"),
    arm(0x80a4, 0x0a000005, "beq   4f (0x80c0)"),
    arm(0x80c0, 0xe12fff1e, "4: bx lr"),
];

fn maxsl_cut() -> Scenario {
    let program = Program::new(&[MAXSL_MAIN, MAXSL_TAIL]);
    let mut r = Run::new(&program, 0x8000);
    r.seq(16); // 15 ALU instructions and B 0x8060 (followed)
    r.seq(7).taken(0x80a0); // 7 instructions, BEQ taken
    r.seq(1).taken(0x80c0); // add, BEQ taken
    r.taken(EXIT); // bx lr
    Scenario {
        name: "maxsl-cut",
        title: "Streams cut at maxSL = 8, and the full start address of the stream after a cut",
        spec: "3 3.1 4 6.1 6.2",
        about: &[
            "With maxsl=8 the SL field has slw = bitlength(8) = 4 bits (section 3/4).",
            "(0x8000,8): eight ALU instructions, cut by rule (c). The next stream (0x8020,8)",
            "starts at the sequentially next instruction, but its address is sent (3.1: after",
            "a maxSL cut). Its 8th instruction is B 0x8060 (duncond): the cut comes first, so",
            "0x8060 starts a stream whose address is sent (3.1, last paragraph). (0x8060,8)",
            "ends with a taken BEQ at SL = maxSL: the stream is still not a source of inference",
            "(3.1 requires SL < maxSL), so 0x80a0 is sent. (0x80a0,2) ends with a taken BEQ",
            "at SL 2 < maxSL, so (0x80c0,1) BX LR is inferable. The default maxsl=255 config",
            "shows the same run as three streams only.",
        ],
        configs: &["bsdc-16x4-64,maxsl=8", "esdc-16x4-64,maxsl=8", "base,maxsl=8", "nexs,maxsl=8", "bsdc-16x4-64"],
        program,
        events: r.events.clone(),
        sync_before: vec![],
        overflow_before: vec![],
        joins: &[],
    }
}

// ---------------------------------------------------------------------------------------

const IW_MAIN: &[Unit] = &[
    arm(0x8000, 0xe3a04002, "mov   r4, #2"),
    arm(0x8004, 0xe3a00001, "1: mov r0, #1"),
    arm(0x8008, 0xfa00003c, "blx   f (0x8100, Thumb; H=0, imm24=0x3c)"),
    arm(0x800c, 0xe2544001, "subs  r4, r4, #1"),
    arm(0x8010, 0x1afffffb, "bne   1b (0x8004)"),
    arm(0x8014, 0xe12fff1e, "bx    lr"),
];
const IW_THUMB: &[Unit] = &[
    thumb(0x8100, 0x4677, "f: mov r7, lr        (Thumb)"),
    thumb(0x8102, 0x3001, "adds  r0, #1"),
    thumb(0x8104, 0xf000, "bl    g  (prefix: lr = pc + 4 + (0 << 12))"),
    thumb(0x8106, 0xf80c, "bl    g  (suffix: 0x8108 + (0xc << 1) = 0x8120)"),
    thumb(0x8108, 0x46be, "mov   lr, r7"),
    thumb(0x810a, 0x4770, "bx    lr             (to ARM 0x800c)"),
    thumb(0x8120, 0x3002, "g: adds r0, #2"),
    thumb(0x8122, 0x4770, "bx    lr             (to Thumb 0x8108)"),
];

fn interworking() -> Scenario {
    let program = Program::new(&[IW_MAIN, IW_THUMB]);
    let mut r = Run::new(&program, 0x8000);
    r.seq(1);
    for i in 0..2 {
        r.seq(2); // mov r0; blx f (followed into Thumb)
        r.seq(4); // mov r7, lr; adds; bl prefix; bl suffix (followed)
        r.seq(1).taken(0x8109); // g: adds; bx lr
        r.seq(1).taken(0x800c); // mov lr, r7; bx lr
        r.seq(1); // subs
        if i == 0 {
            r.taken(0x8004);
        } else {
            r.not_taken().taken(EXIT);
        }
    }
    Scenario {
        name: "interworking",
        title: "ARM <-> Thumb: BLX immediate, a Thumb BL pair, BX LR back; Thumb addresses with bit 0",
        spec: "2 3 5.1 6.1 6.2 8",
        about: &[
            "Every address in the trace is the interworking address A = pc | T (section 2).",
            "ARM BLX f (0xfa00003c) and the Thumb BL pair (prefix: class none; suffix: duncond)",
            "are direct unconditional branches: the stream follows them, switching instruction",
            "set at the BLX (section 8, step 3). So (0x8000,9) runs 0x8000 0x8004 0x8008 (ARM),",
            "0x8101 0x8103 0x8105 0x8107 0x8121 0x8123 (Thumb) and ends with g's BX LR. The",
            "stream after it starts at the Thumb address 0x8109 (A[0] = 1, sent with bit 0 in",
            "A(32) and in L), and its BX LR returns to ARM 0x800c. Second iteration: the",
            "inferable miss (0x8004,8), then SDC hits.",
        ],
        configs: &["bsdc-16x4-64", "esdc-16x4-64", "rsdc-16x4-64", "fbase", "nexs"],
        program,
        events: r.events.clone(),
        sync_before: vec![],
        overflow_before: vec![],
        joins: &[],
    }
}

// ---------------------------------------------------------------------------------------

const ISA_MAIN: &[Unit] = &[
    arm(0x8000, 0xe3a04002, "mov   r4, #2"),
    arm(0x8004, 0xe3a00001, "1: mov r0, #1"),
    arm(0x8008, 0xeb00003c, "bl    f (0x8100)"),
    arm(0x800c, 0xe2544001, "subs  r4, r4, #1"),
    arm(0x8010, 0x1afffffb, "bne   1b (0x8004)"),
    arm(0x8014, 0xe12fff1e, "bx    lr"),
    arm(0x8100, 0xe52de004, "f: push {lr}       (str lr, [sp, #-4]!)"),
    arm(0x8104, 0xe59f3004, "ldr   r3, [pc, #4]   @ r3 = 0x02000100"),
    arm(0x8108, 0xe12fff33, "blx   r3"),
    arm(0x810c, 0xe49df004, "pop   {pc}         (ldr pc, [sp], #4)"),
    data(0x8110, 0x02000100, ".word 0x02000100   (literal, not executed)"),
];
const ISA_FAR: &[Unit] = &[arm(0x0200_0100, 0xe2800002, "add   r0, r0, #2"), arm(0x0200_0104, 0xe12fff1e, "bx    lr")];

fn isa_arm() -> Scenario {
    let program = Program::new(&[ISA_MAIN, ISA_FAR]);
    let mut r = Run::new(&program, 0x8000);
    r.seq(1);
    for i in 0..2 {
        r.seq(4).taken(0x0200_0100); // mov r0; bl f (followed); push; ldr r3; blx r3
        r.seq(1).taken(0x810c); // add; bx lr
        r.taken(0x800c); // pop {pc}
        r.seq(1); // subs
        if i == 0 {
            r.taken(0x8004);
        } else {
            r.not_taken().taken(EXIT);
        }
    }
    Scenario {
        name: "isa-arm",
        title: "ARM-only traces with isa=arm: address fields without A[1:0] (30-bit full address)",
        spec: "4 5.1 6.1",
        about: &[
            "The ARM-only counterpart of the interworking scenario: BL f is followed, f calls",
            "0x02000100 through BLX r3 and returns with POP {pc}. With isa=arm, low = 2: the",
            "e/rSDC field L is '1' A[31-u:2] (LVSA hit) or '0' A[31:2] (30 bits; section 6.1).",
            "esdc-16x4-64,isa=arm: LVSA hit 1+16 bits, miss 1+30 bits; the same events under",
            "isa=iw (esdc-16x4-64) carry 1+18 and 1+32. bsdc always sends A(32) (6.1); isa=arm",
            "only changes what an rSDC entry would store (5.1) and rejects Thumb events.",
        ],
        configs: &["esdc-16x4-64,isa=arm", "esdc-16x4-64", "rsdc-16x4-64,isa=arm", "bsdc-16x4-64,isa=arm"],
        program,
        events: r.events.clone(),
        sync_before: vec![],
        overflow_before: vec![],
        joins: &[],
    }
}

// ---------------------------------------------------------------------------------------

const SYNC_MAIN6: &[Unit] = &[
    arm(0x8000, 0xe3a00006, "mov   r0, #6"),
    arm(0x8004, 0xe0811000, "1: add r1, r1, r0"),
    arm(0x8008, 0xe2500001, "subs  r0, r0, #1"),
    arm(0x800c, 0x1afffffc, "bne   1b (0x8004)"),
    arm(0x8010, 0xe12fff1e, "bx    lr"),
];

fn sync_requested() -> Scenario {
    let program = Program::new(&[SYNC_MAIN6]);
    let mut r = Run::new(&program, 0x8000);
    r.seq(1);
    for i in 0..6 {
        if i == 4 {
            r.seq(1).request_sync().seq(1);
        } else {
            r.seq(2);
        }
        if i < 5 {
            r.taken(0x8004);
        } else {
            r.not_taken();
        }
    }
    r.taken(EXIT);
    Scenario {
        name: "sync-requested",
        title: "A requested sync in the middle of a stream, and a decoder joining at the marker",
        spec: "3 6.3 7",
        about: &[
            "A 6-iteration loop (ADD; SUBS; BNE). Encoder::request_sync() is called between",
            "the ADD and the SUBS of the 5th iteration (header key request-sync-before): the",
            "current stream is cut and emitted as an ordinary stream (0x8004,1) (section 7),",
            "then SYNC: '0' 0^k 0^slw '01', zero bits to the byte boundary, and the 16-byte",
            "marker 00 x 15, 80 (6.3). Everything is reset (7): the next stream (0x8008,2)",
            "is an SDC miss with its full address (infer = false after reset), and the last",
            "stream (0x8004,4) is an inferable miss into an empty SDC.",
            "The decode-from section hands the decoder the trace from byte 1: it searches",
            "the first 0x80 preceded by at least 15 zero bytes, starts after it in the reset",
            "state and delivers the streams after the sync only.",
        ],
        configs: &["bsdc-16x4-64", "esdc-16x4-64", "rsdc-16x4-64", "nexs"],
        program,
        events: r.events.clone(),
        sync_before: r.sync_before.clone(),
        overflow_before: vec![],
        joins: &[Join::Byte(1)],
    }
}

const SYNC_MAIN8: &[Unit] = &[
    arm(0x8000, 0xe3a00008, "mov   r0, #8"),
    arm(0x8004, 0xe0811000, "1: add r1, r1, r0"),
    arm(0x8008, 0xe2500001, "subs  r0, r0, #1"),
    arm(0x800c, 0x1afffffc, "bne   1b (0x8004)"),
    arm(0x8010, 0xe12fff1e, "bx    lr"),
];

fn sync_periodic() -> Scenario {
    let program = Program::new(&[SYNC_MAIN8]);
    let mut r = Run::new(&program, 0x8000);
    r.seq(1);
    for i in 0..8 {
        r.seq(2);
        if i < 7 {
            r.taken(0x8004);
        } else {
            r.not_taken();
        }
    }
    r.taken(EXIT);
    Scenario {
        name: "sync-periodic",
        title: "Periodic sync (sync=8) and decoders joining at the first and second markers",
        spec: "4 6.3 7",
        about: &[
            "An 8-iteration loop (ADD; SUBS; BNE): streams (0x8000,4), (0x8004,3) x 6,",
            "(0x8004,4). With sync=8 a SYNC follows the stream that brings the instruction",
            "count since the last reset to at least 8 (section 7): after 4+3+3 = 10 and after",
            "3+3+3 = 9; the last two streams (3+4 = 7) end the trace before the next period.",
            "Each SYNC resets the SDC, LSP, LVSA, AOLC, inference and the count,",
            "so the stream after it is sent with its full address.",
            "Two decode-from sections: from byte 1 (the decoder finds the first marker) and",
            "from the byte after the first marker (it finds the second one).",
        ],
        configs: &["bsdc-16x4-64,sync=8", "esdc-16x4-64,sync=8", "base,sync=8"],
        program,
        events: r.events.clone(),
        sync_before: vec![],
        overflow_before: vec![],
        joins: &[Join::Byte(1), Join::AfterFirstMarker],
    }
}

// ---------------------------------------------------------------------------------------

const NEXS_MAIN: &[Unit] = &[
    arm(0x8000, 0xe59f301c, "ldr   r3, [pc, #28]   @ r3 = 0x02000100"),
    arm(0x8004, 0xe12fff33, "blx   r3"),
    arm(0x8008, 0xef000000, "swi   #0             (high vectors: 0xffff0008)"),
    arm(0x800c, 0xe3a00003, "mov   r0, #3"),
    arm(0x8010, 0xe28f5000, "add   r5, pc, #0     @ r5 = 0x8018"),
    arm(0x8014, 0xe1a00000, "nop                  (mov r0, r0)"),
    arm(0x8018, 0xe2500001, "1: subs r0, r0, #1"),
    arm(0x801c, 0x112fff15, "bxne  r5             (icond)"),
    arm(0x8020, 0xe12fff1e, "bx    lr"),
    data(0x8024, 0x02000100, ".word 0x02000100   (literal, not executed)"),
];
const NEXS_FAR: &[Unit] = &[arm(0x0200_0100, 0xe2800001, "add   r0, r0, #1"), arm(0x0200_0104, 0xe12fff1e, "bx    lr")];
const VECTORS_HIGH: &[Unit] = &[
    arm(0xffff_0000, 0xeafffffe, "b     .            (reset, not executed)"),
    arm(0xffff_0004, 0xeafffffe, "b     .            (undefined, not executed)"),
    arm(0xffff_0008, 0xe1b0f00e, "movs  pc, lr       (SWI vector: return)"),
    arm(0xffff_000c, 0xeafffffe, "b     .            (prefetch abort, not executed)"),
    arm(0xffff_0010, 0xeafffffe, "b     .            (data abort, not executed)"),
    arm(0xffff_0014, 0xeafffffe, "b     .            (reserved, not executed)"),
    arm(0xffff_0018, 0xe25ef004, "subs  pc, lr, #4   (IRQ, not executed)"),
    arm(0xffff_001c, 0xeafffffe, "b     .            (FIQ, not executed)"),
];

fn nexs_groups() -> Scenario {
    let program = Program::new(&[NEXS_MAIN, NEXS_FAR, VECTORS_HIGH]);
    let mut r = Run::new(&program, 0x8000);
    r.seq(1).taken(0x0200_0100); // ldr r3; blx r3
    r.seq(1).taken(0x8008); // add; bx lr
    r.exception(0xffff_0008, false); // swi
    r.taken(0x800c); // movs pc, lr
    r.seq(4).taken(0x8018); // mov, add, nop, subs; bxne taken
    r.seq(1).taken(0x8018); // subs; bxne taken
    r.seq(1).not_taken().taken(EXIT); // subs; bxne not taken; bx lr
    Scenario {
        name: "nexs-groups",
        title: "NEXS: XOR differences sent as 1 to 6 groups of 6 bits",
        spec: "5.5 6.2 6.3",
        about: &[
            "Each stream's address (unless inferable) is sent as D = A xor prevSA in 6-bit",
            "groups, least significant first, each behind a 2-bit header: '00' = another",
            "group follows, '01' = last group (section 6.2). prevSA is the previous stream's",
            "SA (any record form), 0 after reset (5.5).",
            "D = 0x00008000 (3 groups), 0x02008100 (5 groups: bit 25 set), 0x02008108,",
            "0xffff8000 and 0xffff8004 (6 groups; g5 = D[31:30] zero-extended) around a SWI",
            "into high vectors at 0xffff0008, then D = 0x14 (1 group) and D = 0 (one group",
            "'01 000000') for a loop closed by BXNE r5 (icond; not inferable).",
            "fbase and base send the same streams with A(32).",
        ],
        configs: &["nexs", "base", "fbase"],
        program,
        events: r.events.clone(),
        sync_before: vec![],
        overflow_before: vec![],
        joins: &[],
    }
}

// ---------------------------------------------------------------------------------------

const REPL_BLOCKS: &[Unit] = &[
    arm(0x8010, 0xe2811001, "A: add r1, r1, #1"),
    arm(0x8014, 0xe490f004, "ldr   pc, [r0], #4   (iuncond: next block from a table)"),
    arm(0x8030, 0xe2811002, "B: add r1, r1, #2"),
    arm(0x8034, 0xe490f004, "ldr   pc, [r0], #4"),
    arm(0x8050, 0xe2811003, "C: add r1, r1, #3"),
    arm(0x8054, 0xe490f004, "ldr   pc, [r0], #4"),
    arm(0x8070, 0xe2811004, "D: add r1, r1, #4"),
    arm(0x8074, 0xe490f004, "ldr   pc, [r0], #4"),
    arm(0x8090, 0xe2811005, "E: add r1, r1, #5"),
    arm(0x8094, 0xe490f004, "ldr   pc, [r0], #4"),
];

fn replacement() -> Scenario {
    let program = Program::new(&[REPL_BLOCKS]);
    let block = |c: char| 0x8010 + 0x20 * (c as u32 - 'A' as u32);
    let pattern: Vec<char> = "ABCDCBADEABCD".chars().collect();
    let mut r = Run::new(&program, block(pattern[0]));
    for (i, &c) in pattern.iter().enumerate() {
        assert_eq!(r.events.last().map_or(block(c), |e| e.next_pc), block(c));
        let next = pattern.get(i + 1).map_or(EXIT, |&n| block(n));
        r.seq(1).taken(next);
    }
    Scenario {
        name: "replacement",
        title: "SDC replacement: mru, lru, fifo and random choose four different victims",
        spec: "5.1 7",
        about: &[
            "Five 2-instruction blocks A..E at 0x8010 + 0x20*i, each ending in LDR pc, [r0], #4",
            "(iuncond), executed in the order A B C D C B A D E A B C D. With shift=4 and SL = 2,",
            "iSet = (A[4] xor 0) = 1 for all five streams: set 1 of bsdc-2x4-8 (ways 0..3,",
            "SI 4..7; section 5.1). A..D fill ways 0..3 (lowest invalid way first), the hits",
            "C B A D update the replacement state, and E needs a victim:",
            "  mru:    MRU bits after the hits: D's fill set all bits -> only way 3 kept; C, B",
            "          set ways 2, 1; A makes all four set -> only way 0 kept; D sets way 3.",
            "          Lowest clear bit: way 1 = B.",
            "  lru:    recency D A B C -> least recent C (way 2).",
            "  fifo:   the pointer is at way 0 (hits do not move it) -> A.",
            "  random: LFSR 0xace1 -> 0x59c3 (feedback bit 1^1^0^1 = 1); 0x59c3 mod 4 = 3 -> D.",
            "The second round A B C D then misses on whichever streams were evicted.",
            "The LSP (8 entries) only ever sees SDC misses or changing successors here.",
        ],
        configs: &["bsdc-2x4-8", "bsdc-2x4-8,repl=lru", "bsdc-2x4-8,repl=fifo", "bsdc-2x4-8,repl=random"],
        program,
        events: r.events.clone(),
        sync_before: vec![],
        overflow_before: vec![],
        joins: &[],
    }
}

// ---------------------------------------------------------------------------------------

const FLUSH_MAIN: &[Unit] = &[
    arm(0x8000, 0xe3a00008, "mov   r0, #8"),
    arm(0x8004, 0xe2500001, "1: subs r0, r0, #1"),
    arm(0x8008, 0x1afffffd, "bne   1b (0x8004)"),
    arm(0x800c, 0xe12fff1e, "bx    lr            (not reached: the trace stops before)"),
];

fn end_flush() -> Scenario {
    let program = Program::new(&[FLUSH_MAIN]);
    let mut r = Run::new(&program, 0x8000);
    r.seq(1);
    for i in 0..8 {
        r.seq(1);
        if i < 7 {
            r.taken(0x8004);
        } else {
            r.not_taken();
        }
    }
    Scenario {
        name: "end-flush",
        title: "END flushes a partial stream (and a pending AOLC run)",
        spec: "3 5.4 6.1 6.3",
        about: &[
            "The events stop right after the last BNE, which is not taken: no stream-ending",
            "condition has occurred, so the stream (0x8004,2) is still open. Encoder::finish",
            "emits it as an ordinary stream (section 3: flush), then END. Here the partial",
            "stream equals the loop's stream, so it is an LSP hit: bsdc sends '1', esdc adds it",
            "to the pending run, which is emitted (n=4) before the END escape (5.4, 6.3).",
            "The decoder replays the flushed stream like any other; the END after it tells it",
            "that nothing is inferred from its final BNE.",
        ],
        configs: &["bsdc-16x4-64", "esdc-16x4-64", "base", "nexs"],
        program,
        events: r.events.clone(),
        sync_before: vec![],
        overflow_before: vec![],
        joins: &[],
    }
}

// ---------------------------------------------------------------------------------------

const ENTRY0_MAIN: &[Unit] = &[
    arm(0x801c, 0xe3a00006, "mov   r0, #6"),
    arm(0x8020, 0xe2500001, "1: subs r0, r0, #1"),
    arm(0x8024, 0x1afffffd, "bne   1b (0x8020)"),
    arm(0x8028, 0xe12fff1e, "bx    lr"),
];

fn sdc_entry0() -> Scenario {
    let program = Program::new(&[ENTRY0_MAIN]);
    let mut r = Run::new(&program, 0x801c);
    r.seq(1);
    for i in 0..6 {
        r.seq(1);
        if i < 5 {
            r.taken(0x8020);
        } else {
            r.not_taken();
        }
    }
    r.taken(EXIT);
    Scenario {
        name: "sdc-entry0",
        title: "SDC entry 0 does not exist: a direct-mapped SDC never caches streams of set 0",
        spec: "5.1 5.2 6.1",
        about: &[
            "SI = 0 means 'SDC miss', so entry 0 (set 0, way 0) does not exist (section 5.1).",
            "The loop stream (0x8020,2) has iSet = ((0x8020 >> 4) xor 2) and 15 = 2 xor 2 = 0.",
            "bsdc-16x1-16 (one way): set 0 has no entry at all, so the stream misses every",
            "time; each miss is inferable (after the taken BNE), 1+4+8 = 13 bits.",
            "bsdc-16x2-32: set 0 has only way 1, SI = 1 = '00001': one fill, then SDC hits",
            "and LSP hits. esdc-16x1-16 shows the same misses with AOLC and L fields.",
        ],
        configs: &["bsdc-16x1-16", "bsdc-16x2-32", "esdc-16x1-16"],
        program,
        events: r.events.clone(),
        sync_before: vec![],
        overflow_before: vec![],
        joins: &[],
    }
}

// ---------------------------------------------------------------------------------------

fn overflow() -> Scenario {
    let program = Program::new(&[SYNC_MAIN6]);
    let mut r = Run::new(&program, 0x8000);
    r.seq(1);
    for i in 0..6 {
        if i == 4 {
            r.seq(2).overflow(2).taken(0x8004);
            continue;
        }
        r.seq(2);
        if i < 5 {
            r.taken(0x8004);
        } else {
            r.not_taken();
        }
    }
    r.taken(EXIT);
    Scenario {
        name: "overflow",
        title: "OVERFLOW: records dropped, lost-instruction count, marker and reset",
        spec: "6.3 7",
        about: &[
            "The loop of sync-requested.stv. Before the 5th iteration's BNE the trace module",
            "overflows (header key overflow-before: Encoder::overflow(2) is called before that",
            "event). The unfinished stream (ADD, SUBS at 0x8004, 0x8008) is dropped; the",
            "OVERFLOW escape carries lost = 2 in 32 bits, then zero bits to the byte boundary",
            "and the sync marker, and everything is reset (sections 6.3, 7). Decoding resumes",
            "with the stream (0x800c,1), the BNE alone, sent with its full address; the",
            "decoder delivers every address except the two lost ones ([addresses]).",
            "The decode-from section joins at the OVERFLOW marker like at a SYNC marker.",
        ],
        configs: &["bsdc-16x4-64", "esdc-16x4-64", "base"],
        program,
        events: r.events.clone(),
        sync_before: vec![],
        overflow_before: r.overflow_before.clone(),
        joins: &[Join::Byte(1)],
    }
}

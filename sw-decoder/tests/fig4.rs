//! The worked example of the paper's Fig. 4: a 100-iteration loop at 0x020001f4 traced with a
//! 64-entry 4-way SDC (iSet = SA[7:4] xor SL[3:0]) and a 64-entry LSP.

use streamtrace_isa::{MemoryImage, ProgramImage};
use streamtrace_model::bits::BitReader;
use streamtrace_model::{encode_events, BranchClass, Config, RetireEvent};
use streamtrace_sw_decoder::{decode_trace, verify_addresses, StreamRecord, TraceElement};

const LOOP: u32 = 0x0200_01f4;

/// The loop body of Fig. 4, then `bx lr` after it.
fn fig4_image() -> MemoryImage {
    let words: [u32; 10] = [
        0xE1A0_110C, // mov r1, r12, lsl #2
        0xE794_2001, // ldr r2, [r4, r1]
        0xE79E_3001, // ldr r3, [r14, r1]
        0xE020_3892, // mla r0, r2, r8, r3
        0xE28C_C001, // add r12, r12, #1
        0xE35C_0063, // cmp r12, #99
        0xE086_6000, // add r6, r6, r0
        0xE785_0001, // str r0, [r5, r1]
        0xDAFF_FFF6, // ble 0x020001f4
        0xE12F_FF1E, // bx lr
    ];
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let mut img = MemoryImage::new();
    img.add_segment(LOOP, bytes).unwrap();
    img
}

/// Retire events of 100 iterations and the final `bx lr` (to 0x8000).
fn fig4_events(img: &MemoryImage) -> Vec<RetireEvent> {
    let mut evs = Vec::new();
    for iter in 0..100 {
        for i in 0..9u32 {
            let pc = LOOP + 4 * i;
            let c = img.classify(pc).unwrap();
            let last = i == 8;
            let taken = last && iter < 99;
            let next_pc = if taken { LOOP } else { pc + 4 };
            evs.push(RetireEvent { pc, insn: img.read_u32(pc).unwrap(), class: c.class, taken, next_pc, ..Default::default() });
        }
    }
    let pc = LOOP + 36;
    assert_eq!(img.classify(pc).unwrap().class, BranchClass::Return);
    evs.push(RetireEvent { pc, insn: 0xE12F_FF1E, class: BranchClass::Return, taken: true, next_pc: 0x8000, ..Default::default() });
    evs
}

#[test]
fn fig4_records_bit_for_bit() {
    let img = fig4_image();
    let events = fig4_events(&img);
    assert_eq!(img.classify(LOOP + 32).unwrap().class, BranchClass::DirectCond);
    assert_eq!(img.classify(LOOP + 32).unwrap().target, Some(LOOP));
    let cfg: Config = "bsdc-16x4-64".parse().unwrap();
    let (trace, stats) = encode_events(&cfg, &events).unwrap();
    let mut r = BitReader::with_bit_len(&trace.bytes, trace.bit_len);
    // Record 1: h='0', SI='000000', SL=9 (8 bits), SA=0x020001f4 (32 bits): 47 bits.
    assert_eq!(r.get(1).unwrap(), 0);
    assert_eq!(r.get(6).unwrap(), 0);
    assert_eq!(r.get(8).unwrap(), 9);
    assert_eq!(r.get(32).unwrap(), LOOP as u64);
    assert_eq!(r.position(), 47);
    // Records 2 and 3: h='0', SI='011000'.
    for _ in 0..2 {
        assert_eq!(r.get(7).unwrap(), 0b0_011000);
    }
    // Records 4..99: 96 single '1' bits.
    for i in 0..96 {
        assert_eq!(r.get(1).unwrap(), 1, "hit record {}", i + 4);
    }
    // Record 100: the last iteration falls through into bx lr: a new stream (SA, 10). Its
    // start address follows the taken ble, so it is inferable: '0' '000000' SL=10.
    assert_eq!(r.get(7).unwrap(), 0);
    assert_eq!(r.get(8).unwrap(), 10);
    // Then END: '0' 0^6 0^8 '00', zero padding.
    assert_eq!(r.get(17).unwrap(), 0);
    assert_eq!(trace.bit_len, 47 + 14 + 96 + 15 + 17 + 3, "padding to a byte boundary");
    assert_eq!(stats.streams, 100);
    assert_eq!(stats.instructions, 901);
    assert_eq!((stats.sdc_lookups, stats.sdc_hits, stats.lsp_hits), (100, 98, 96));
    assert_eq!(stats.bits.miss, 47 + 15);
    assert_eq!(stats.bits.sdc_hit, 14);
    assert_eq!(stats.bits.lsp_hit, 96);

    // The decoder replays 9 instructions per iteration from the same bits.
    let out = decode_trace(&cfg, &trace.bytes, &img, true);
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert!(out.ended);
    verify_addresses(&out.addresses, &events).unwrap();
    let streams: Vec<_> = out
        .elements
        .iter()
        .filter_map(|e| match e {
            TraceElement::Stream { sa, sl, record, .. } => Some((*sa, *sl, *record)),
            _ => None,
        })
        .collect();
    assert_eq!(streams.len(), 100);
    assert_eq!(streams[0], (LOOP, 9, StreamRecord::Miss { inferred: false }));
    assert_eq!(streams[1], (LOOP, 9, StreamRecord::SdcHit { si: 0b011000 }));
    assert_eq!(streams[2], (LOOP, 9, StreamRecord::SdcHit { si: 0b011000 }));
    assert!(streams[3..99].iter().all(|s| *s == (LOOP, 9, StreamRecord::LspHit)));
    assert_eq!(streams[99], (LOOP, 10, StreamRecord::Miss { inferred: true }));
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The same loop under the other schemes. The expected bits were derived by hand from
/// docs/trace-format.md (section 9 lists them field by field), not from the encoder.
#[test]
fn fig4_under_every_scheme() {
    let img = fig4_image();
    let events = fig4_events(&img);
    for (cfg, bits, hex_expected) in [
        ("bsdc-16x4-64", 189, "0012040003e860c7fffffffffffffffffffffff800a00000"),
        // LVSA miss on the first record; AOLC runs 16,16,16 (s=4) then grows to s=5: 32, 16.
        ("esdc-16x4-64", 121, "0012020001f43063fffff7800a000000"),
        // isa=arm: 30-bit address field; set 22, SI 88.
        ("rsdc-32x4-128,isa=arm", 124, "0009010000fab0b1fffffbc002800000"),
    ] {
        let cfg: Config = cfg.parse().unwrap();
        let (trace, _) = encode_events(&cfg, &events).unwrap();
        assert_eq!(trace.bit_len.div_ceil(8) * 8, trace.bit_len, "{cfg}: padded to bytes");
        assert_eq!(trace.bit_len, (bits as u64).div_ceil(8) * 8, "{cfg}");
        assert_eq!(hex(&trace.bytes), hex_expected, "{cfg}");
        let out = decode_trace(&cfg, &trace.bytes, &img, false);
        assert!(out.errors.is_empty() && out.ended, "{cfg}: {:?}", out.errors);
        verify_addresses(&out.addresses, &events).unwrap();
    }
    // NEXS: (SL, 5 groups for 0x020001f4 ^ 0) = 48 bits, then 99 inferable SL-only records and END.
    let nexs: Config = "nexs".parse().unwrap();
    let (_, stats) = encode_events(&nexs, &events).unwrap();
    assert_eq!(stats.total_bits - stats.bits.escape, 48 + 99 * 8);
    let fbase: Config = "fbase".parse().unwrap();
    let (_, stats) = encode_events(&fbase, &events).unwrap();
    assert_eq!(stats.bits.miss, 100 * 40, "fBASE: 40 bits per stream, as the paper's 40-bit (SA, SL)");
}

/// pft on the same loop (docs/trace-format.md section 11.10): the coder operations derived
/// by hand from section 11.5, the bytes they give, and the decoder back to the addresses.
#[test]
fn fig4_under_pft() {
    use streamtrace_model::pft::{CoderOp, Info, PftFrontEnd, PftParams, TargetContexts};
    let img = fig4_image();
    let events = fig4_events(&img);
    let cfg: Config = "pft".parse().unwrap();
    let p = PftParams::default();
    let mut front = PftFrontEnd::new(&p, 0, 0);
    let mut ops: Vec<CoderOp> = Vec::new();
    for e in &events {
        if let Some(job) = front.push(e) {
            ops.extend_from_slice(job.ops());
        }
    }
    ops.extend_from_slice(front.end_job().ops());
    // Context numbers: 26 direction contexts (2 + 8 x 3 groups of tables), then the target contexts.
    let t = |c: usize| 26 + c as u16;
    let mut want = vec![
        // Start: slot symbol deciding UPPER_SAME (0x020 vs the reset register 0: miss), then
        // A[31:0] in two raw fields.
        CoderOp::Slot { escape: false, hit: false, ctx: Some(t(TargetContexts::UPPER_SAME)), info: Info::Address },
        CoderOp::Raw { value: LOOP >> 16, bits: 16, info: Info::Address },
        CoderOp::Raw { value: LOOP & 0xFFFF, bits: 16, info: Info::Address },
    ];
    // 100 slots at the ble, predicted by section 11.3 as written (SpecTage below, not the
    // model's predictor): taken 99 times, then not taken.
    let mut tage = SpecTage::new();
    let h = LOOP + 32;
    for iter in 0..100 {
        let taken = iter < 99;
        let (pred, ctx) = tage.predict(h);
        want.push(CoderOp::Slot { escape: false, hit: pred == taken, ctx: Some(ctx), info: Info::Direction });
        tage.update(taken);
    }
    // bx lr at 0x02000218: a return with an empty RAS (predicts 0: miss); no alternate (a
    // return) and the RTC is empty (miss); 0x8000 as an offset: ARM to ARM (SAME_STATE hit),
    // d = 0x2000 - 0x800086 = -0x7fe086, z = 2|d| - 1 = 0xffc10b (24 bits: class 7, binary
    // 111, so LEN_1, LEN_3 and LEN_7 all miss), class 7's high-page bit (0x8000 is not in
    // 0xFFFF0000..0xFFFF0FFF: a raw 0), z in 32 bits; END with offset 0.
    let bx = LOOP + 32 + 4;
    assert_eq!(bx >> 2, 0x0080_0086);
    let d = (0x8000i64 >> 2) - (bx as i64 >> 2);
    assert_eq!(d, -0x7f_e086);
    let z = (2 * -d - 1) as u32;
    assert_eq!(z, 0x00ff_c10b);
    want.extend([
        CoderOp::Slot { escape: false, hit: false, ctx: Some(t(TargetContexts::RETURN_EMPTY)), info: Info::Target },
        CoderOp::Bit { hit: false, ctx: t(TargetContexts::RTC_HIT), info: Info::Address },
        CoderOp::Bit { hit: true, ctx: t(TargetContexts::SAME_STATE), info: Info::Address },
        CoderOp::Bit { hit: false, ctx: t(TargetContexts::LEN), info: Info::Address },
        CoderOp::Bit { hit: false, ctx: t(TargetContexts::LEN + 2), info: Info::Address },
        CoderOp::Bit { hit: false, ctx: t(TargetContexts::LEN + 6), info: Info::Address },
        CoderOp::Raw { value: 0, bits: 1, info: Info::Address },
        CoderOp::Raw { value: z >> 16, bits: 16, info: Info::Address },
        CoderOp::Raw { value: z & 0xFFFF, bits: 16, info: Info::Address },
        CoderOp::Slot { escape: true, hit: false, ctx: None, info: Info::Address },
        CoderOp::Raw { value: 0, bits: 2, info: Info::Address },
        CoderOp::Raw { value: 0, bits: 16, info: Info::Address },
        CoderOp::Flush,
    ]);
    assert_eq!(ops.len(), want.len());
    for (i, (got, w)) in ops.iter().zip(&want).enumerate() {
        assert_eq!(got, w, "operation {i}");
    }
    let (trace, stats) = encode_events(&cfg, &events).unwrap();
    // The bytes of section 11.10 (the arithmetic of 11.6 applied to the operations above).
    let hex: String = trace.bytes.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(hex, PFT_FIG4_BYTES, "the bytes of trace-format.md 11.10");
    assert_eq!(stats.pft.unwrap().direction_misses, 1);
    let out = decode_trace(&cfg, &trace.bytes, &img, false);
    assert!(out.errors.is_empty() && out.ended, "{:?}", out.errors);
    verify_addresses(&out.addresses, &events).unwrap();
}

const PFT_FIG4_BYTES: &str = "80ff7ef9fe0c000000027795ea7547ce3f72d000000000";

/// Section 11.3 with the default keys (bim 256, six tables of 32 entries, 7-bit tags,
/// histories 3-5-9-16-30-64, index shifts max(1, 5 - i)), written from the text: folds
/// computed from their definition.
struct SpecTage {
    base: Vec<u8>,
    tables: Vec<Vec<(i8, u16, bool)>>,
    g: u64,
    last: Option<Looked>,
    age: u8,
    sweep: (usize, usize),
}

/// What a prediction looked at: base index, indices, tags, prediction, alternate, provider.
type Looked = (usize, [usize; 6], [u16; 6], bool, bool, usize);

impl SpecTage {
    const L: [u32; 6] = [3, 5, 9, 16, 30, 64];

    fn new() -> Self {
        SpecTage { base: vec![2; 256], tables: vec![vec![(0, 0, false); 32]; 6], g: 0, last: None, age: 0, sweep: (0, 0) }
    }

    fn fold(g: u64, len: u32, n: u32) -> u32 {
        let mut f = 0u64;
        for i in 0..len {
            f ^= ((g >> i) & 1) << (i % n);
        }
        f as u32
    }

    /// (taken?, context) for the ARM instruction at `a`.
    fn predict(&mut self, a: u32) -> (bool, u16) {
        let hpc = a >> 2;
        let mut idx = [0usize; 6];
        let mut tag = [0u16; 6];
        for i in 0..6 {
            let l = Self::L[i];
            let shift = 5u32.saturating_sub(i as u32).max(1);
            idx[i] = ((hpc ^ (hpc >> shift) ^ Self::fold(self.g, l, 5)) & 31) as usize;
            tag[i] = ((hpc ^ Self::fold(self.g, l, 7) ^ (Self::fold(self.g, l, 6) << 1)) & 127) as u16;
        }
        let b = self.base[(hpc & 255) as usize];
        let matches: Vec<usize> = (0..6).rev().filter(|&i| self.tables[i][idx[i]].1 == tag[i]).collect();
        let (pred, ctx, alt, provider) = match matches.first() {
            Some(&p) => {
                let ctr = self.tables[p][idx[p]].0;
                let alt = match matches.get(1) {
                    Some(&q) => self.tables[q][idx[q]].0 >= 0,
                    None => b >= 2,
                };
                let s = if ctr >= 0 { ctr } else { -1 - ctr } as usize;
                // Six tables in three groups of two: 2 + 8g + 2s + (alternate agrees).
                (ctr >= 0, 2 + 8 * (p / 2) + 2 * s + (alt == (ctr >= 0)) as usize, alt, p)
            }
            None => (b >= 2, if b == 1 || b == 2 { 0 } else { 1 }, b >= 2, usize::MAX),
        };
        self.last = Some(((hpc & 255) as usize, idx, tag, pred, alt, provider));
        (pred, ctx as u16)
    }

    fn update(&mut self, t: bool) {
        let (bi, idx, tag, pred, alt, provider) = self.last.take().unwrap();
        if provider != usize::MAX {
            let e = &mut self.tables[provider][idx[provider]];
            e.0 = if t { (e.0 + 1).min(3) } else { (e.0 - 1).max(-4) };
            if pred != alt {
                e.2 = pred == t;
            }
        } else {
            let c = &mut self.base[bi];
            *c = if t { (*c + 1).min(3) } else { c.saturating_sub(1) };
        }
        if pred != t {
            let start = if provider == usize::MAX { 0 } else { provider + 1 };
            match (start..6).find(|&j| !self.tables[j][idx[j]].2) {
                Some(j) => self.tables[j][idx[j]] = (if t { 0 } else { -1 }, tag[j], false),
                // The ageing counter and the sweep pointer (table, entry).
                None => {
                    self.age = (self.age + 1) % 4;
                    if self.age == 0 {
                        let (st, k) = self.sweep;
                        if st != provider {
                            self.tables[st][k].2 = false;
                        }
                        self.sweep = if k + 1 == 32 { ((st + 1) % 6, 0) } else { (st, k + 1) };
                    }
                }
            }
        }
        self.g = (self.g << 1) | t as u64;
    }
}

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

//! Fuzz target `roundtrip`: decode(encode(run)) must give back the run's addresses.
//!
//! Input bytes drive a configuration (`config_from_bytes`, including periodic sync), a
//! synthetic program and run (seed, size, branch density and bias, exception rate,
//! indirect targets) and up to three requested syncs. The run is encoded with
//! `Encoder::push`, decoded with `decode_trace`, and must come back exactly: no errors, END
//! seen, every address equal, one exception element per exception (none for SC-T8HT, which
//! does not send them), one sync element per sync. If the trace has a sync marker, a decoder that joins at the middle of the trace
//! (`Decoder::resync`) must rebuild exactly the tail of the run.

#![no_main]

use libfuzzer_sys::fuzz_target;
use streamtrace_fuzz::{config_from_bytes, Cursor, CONFIG_BYTES};
use streamtrace_model::{Encoder, IsaMode, Scheme};
use streamtrace_sw_decoder::synthetic::{generate, SyntheticSpec};
use streamtrace_sw_decoder::{decode_trace, verify_addresses, Decoder, TraceElement};

fuzz_target!(|data: &[u8]| {
    let mut c = Cursor::new(data);
    let head: [u8; CONFIG_BYTES] = c.array();
    let Some(cfg) = config_from_bytes(&head) else {
        return;
    };
    let mut spec = SyntheticSpec::new(c.u64(), 1 + (c.u16() % 6000) as usize);
    let sizes = c.u8();
    spec.arm_words = [64, 256, 2048, 64][(sizes & 3) as usize];
    spec.thumb_halfwords = [64, 256, 2048, 64][((sizes >> 2) & 3) as usize];
    spec.branch_density = 20 + c.u16() as u64 % 380;
    spec.taken_bias = c.u16() as u64 % 1001;
    spec.exception_rate = (c.u8() % 20) as u64;
    spec.indirect_targets = 1 + (c.u8() % 64) as u32;
    if cfg.isa == IsaMode::ArmOnly {
        spec = spec.arm_only();
    }
    let syncs_at: Vec<usize> = (0..c.u8() % 4).map(|_| c.u16() as usize % spec.instructions).collect();

    let run = generate(&spec).unwrap();
    let mut enc = Encoder::new(&cfg);
    for (i, e) in run.events.iter().enumerate() {
        if syncs_at.contains(&i) {
            enc.request_sync();
        }
        enc.push(e)
            .unwrap_or_else(|err| panic!("{cfg}: encoder rejected a synthetic event: {err}"));
    }
    let (trace, stats) = enc.finish();
    assert_eq!(trace.bit_len % 8, 0, "{cfg}: trace not padded to bytes");

    let out = decode_trace(&cfg, &trace.bytes, &run.image, false);
    assert!(out.errors.is_empty(), "{cfg} {spec:?}: decode errors {:?}", out.errors);
    assert!(out.ended, "{cfg}: no END");
    if let Err(m) = verify_addresses(&out.addresses, &run.events) {
        panic!("{cfg} {spec:?}: first mismatch {m:?}");
    }
    let exceptions = out
        .elements
        .iter()
        .filter(|e| matches!(e, TraceElement::Exception { .. }))
        .count();
    let syncs = out
        .elements
        .iter()
        .filter(|e| matches!(e, TraceElement::Sync { .. }))
        .count();
    // SC-T8HT sends no exception records (trace-format.md 10.2: every start address is in
    // its SDC or sent in full), so its decoder reports none.
    let expected = if cfg.scheme == Scheme::ScT8ht { 0 } else { run.events.iter().filter(|e| e.exception).count() };
    assert_eq!(exceptions, expected, "{cfg}: exceptions");
    assert_eq!(syncs as u64, stats.syncs, "{cfg}: syncs");

    // Join in the middle.
    if stats.syncs > 0 {
        let start = trace.bytes.len() / 2;
        let mut dec = Decoder::new(&cfg, &trace.bytes[start..], &run.image);
        if dec.resync().is_some() {
            let mut addrs = Vec::new();
            while let Some(_) = dec
                .next_element(&mut addrs)
                .unwrap_or_else(|e| panic!("{cfg}: after resync: {e}"))
            {}
            assert!(addrs.len() <= run.events.len());
            let skip = run.events.len() - addrs.len();
            if let Err(m) = verify_addresses(&addrs, &run.events[skip..]) {
                panic!("{cfg}: resync from byte {start}: {m:?}");
            }
        }
    }
});

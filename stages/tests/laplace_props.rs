//! Round trips of the Laplace text codecs (algorithms.md §4.4: both encodings exactly
//! invertible) on random traces, canonical text, and "never panics" on random text.
//! PDATS and PDATS II have their round-trip properties in their own modules.

use proptest::prelude::*;
use streamtrace_stages::laplace::{
    Access, RawDiffReader, RawDiffWriter, RawReader, RawRecord, RawWriter, SadDiffReader,
    SadDiffWriter, SadReader, SadRecord, SadWriter,
};
use streamtrace_stages::sad::reduce_raw;

fn access() -> impl Strategy<Value = Access> {
    prop_oneof![Just(Access::Read), Just(Access::Write), Just(Access::Ifetch)]
}

/// Address steps: mostly small, some large, some to the extremes of the 64-bit range.
fn addr_step() -> impl Strategy<Value = i128> {
    prop_oneof![
        6 => -16i128..16,
        2 => -70_000i128..70_000,
        1 => any::<i64>().prop_map(|v| v as i128),
        1 => Just(1i128 << 70),
        1 => Just(-(1i128 << 70)),
    ]
}

fn clamp_add(a: u64, d: i128) -> u64 {
    (a as i128 + d).clamp(0, u64::MAX as i128) as u64
}

fn raw_trace() -> impl Strategy<Value = Vec<RawRecord>> {
    proptest::collection::vec(
        (
            access(),
            prop_oneof![4 => 0u64..4, 1 => any::<u32>().prop_map(u64::from)],
            1u64..=8,
            prop_oneof![8 => Just(0u64), 1 => 1u64..0x100000, 1 => Just(u64::MAX)],
            addr_step(),
        ),
        0..120,
    )
    .prop_map(|ops| {
        let (mut cycle, mut asid, mut addr) = (0u64, 1u64, 0u64);
        ops.into_iter()
            .map(|(kind, dc, len, new_asid, step)| {
                cycle = cycle.saturating_add(dc);
                if new_asid != 0 {
                    asid = new_asid;
                }
                addr = clamp_add(addr, step);
                RawRecord { kind, cycle, len, asid, vaddr: addr }
            })
            .collect()
    })
}

fn sad_trace() -> impl Strategy<Value = Vec<SadRecord>> {
    proptest::collection::vec(
        (
            access(),
            (0u64..300, 0u64..3, 0u64..5),
            prop_oneof![8 => Just(0u64), 1 => 1u64..0x100000],
            addr_step(),
        ),
        0..120,
    )
    .prop_map(|ops| {
        let (mut cycle, mut itime, mut rtime, mut asid, mut vpn) = (0u64, 0u64, 0u64, 1u64, 0u64);
        ops.into_iter()
            .map(|(kind, (dc, di, dr), new_asid, step)| {
                cycle += dc;
                itime += di;
                rtime += dr;
                if new_asid != 0 {
                    asid = new_asid;
                }
                vpn = clamp_add(vpn, step);
                SadRecord { kind, cycle, itime, rtime, asid, vpn }
            })
            .collect()
    })
}

macro_rules! write_all {
    ($writer:ident, $recs:expr) => {{
        let mut w = $writer::new(Vec::new());
        for r in $recs {
            w.write(r).unwrap();
        }
        w.into_inner().unwrap()
    }};
}

proptest! {
    #[test]
    fn raw_and_raw_diff_round_trip(recs in raw_trace()) {
        let raw = write_all!(RawWriter, &recs);
        let back: Vec<RawRecord> = RawReader::new(&raw[..]).collect::<Result<_, _>>().unwrap();
        prop_assert_eq!(&back, &recs);
        let diff = write_all!(RawDiffWriter, &recs);
        let back: Vec<RawRecord> = RawDiffReader::new(&diff[..]).collect::<Result<_, _>>().unwrap();
        prop_assert_eq!(&back, &recs);
        // Canonical text: re-encoding the decoded records gives the same bytes.
        prop_assert_eq!(write_all!(RawDiffWriter, &back), diff.clone());
        prop_assert_eq!(diff.iter().filter(|&&c| c == b'\n').count(), recs.len());
    }

    #[test]
    fn sad_and_sad_diff_round_trip(recs in sad_trace()) {
        let text = write_all!(SadWriter, &recs);
        let back: Vec<SadRecord> = SadReader::new(&text[..]).collect::<Result<_, _>>().unwrap();
        prop_assert_eq!(&back, &recs);
        let diff = write_all!(SadDiffWriter, &recs);
        let back: Vec<SadRecord> = SadDiffReader::new(&diff[..]).collect::<Result<_, _>>().unwrap();
        prop_assert_eq!(&back, &recs);
        prop_assert_eq!(write_all!(SadDiffWriter, &back), diff);
    }

    /// The real pipeline: SAD output always difference-encodes and decodes back exactly.
    #[test]
    fn sad_output_round_trips_through_diff(recs in raw_trace(), r in 1usize..8) {
        let recs: Vec<RawRecord> = recs.into_iter().map(|x| RawRecord { vaddr: x.vaddr & 0xffff_ffff, ..x }).collect();
        let (red, _) = reduce_raw(&recs, r, 4096).unwrap();
        let diff = write_all!(SadDiffWriter, &red);
        let back: Vec<SadRecord> = SadDiffReader::new(&diff[..]).collect::<Result<_, _>>().unwrap();
        prop_assert_eq!(back, red);
    }

    /// Random bytes and mutated valid text: an error with a line number in range, never a
    /// panic.
    #[test]
    fn readers_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300), recs in raw_trace(), flip in any::<prop::sample::Index>(), byte in any::<u8>()) {
        let lines = bytes.iter().filter(|&&c| c == b'\n').count() as u64 + 1;
        for e in RawReader::new(&bytes[..]).filter_map(Result::err) { prop_assert!(e.line() <= lines); }
        for e in RawDiffReader::new(&bytes[..]).filter_map(Result::err) { prop_assert!(e.line() <= lines); }
        for e in SadReader::new(&bytes[..]).filter_map(Result::err) { prop_assert!(e.line() <= lines); }
        for e in SadDiffReader::new(&bytes[..]).filter_map(Result::err) { prop_assert!(e.line() <= lines); }
        let mut diff = write_all!(RawDiffWriter, &recs);
        if !diff.is_empty() {
            let i = flip.index(diff.len());
            diff[i] = byte;
            let n = diff.iter().filter(|&&c| c == b'\n').count() as u64 + 1;
            for e in RawDiffReader::new(&diff[..]).filter_map(Result::err) { prop_assert!(e.line() <= n); }
        }
    }
}

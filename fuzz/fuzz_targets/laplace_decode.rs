//! Fuzz target `laplace_decode`: arbitrary text into the four Laplace readers (raw,
//! difference-encoded raw, SAD-reduced, difference-encoded SAD) must give records or an
//! error naming a line of the input, never a panic (docs/fuzzing.md).
//!
//! Input: byte 0 selects the reader (bits 0-1), a SAD reduction memory r = 1 + bits 2-4 and
//! a page size 2^(4 + bits 5-7); the rest is the text. Checks besides "no panic": error
//! lines lie inside the input and the reader stops after an error; the records read
//! re-encode with the matching writer to text that reads back to the same records; raw
//! records also go through SAD reduction (page splitting errors allowed), whose output must
//! be a subsequence in RTIME order and reduce to itself again.

#![no_main]

use libfuzzer_sys::fuzz_target;
use streamtrace_stages::laplace::{
    LaplaceError, RawDiffReader, RawDiffWriter, RawReader, RawRecord, RawWriter, SadDiffReader,
    SadDiffWriter, SadReader, SadRecord, SadWriter,
};
use streamtrace_stages::sad::{reduce_pages, reduce_raw};

fn check_errors<T>(
    items: impl Iterator<Item = Result<T, LaplaceError>>,
    lines: u64,
) -> Option<Vec<T>> {
    let mut out = Vec::new();
    let mut items = items;
    while let Some(r) = items.next() {
        match r {
            Ok(x) => out.push(x),
            Err(e) => {
                assert!(e.line() >= 1 && e.line() <= lines, "line {} of {lines}: {e}", e.line());
                let _ = e.to_string();
                assert!(items.next().is_none(), "reader continued after an error");
                return None;
            }
        }
    }
    Some(out)
}

fn check_sad(raw: &[RawRecord], r: usize, page: u64) {
    if let Ok((red, st)) = reduce_raw(raw, r, page) {
        assert_eq!(st.output_refs as usize, red.len());
        assert!(red.windows(2).all(|w| w[0].rtime <= w[1].rtime));
        assert_eq!(reduce_pages(&red, r).unwrap().0, red, "SAD is not idempotent");
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&sel, text)) = data.split_first() else { return };
    let lines = text.iter().filter(|&&c| c == b'\n').count() as u64 + 1;
    let r = 1 + ((sel >> 2) & 7) as usize;
    let page = 1u64 << (4 + (sel >> 5));
    match sel & 3 {
        0 => {
            let Some(recs) = check_errors(RawReader::new(text), lines) else { return };
            let mut w = RawWriter::new(Vec::new());
            recs.iter().for_each(|x| w.write(x).expect("a record read is writable"));
            let out = w.into_inner().unwrap();
            let back: Vec<RawRecord> = RawReader::new(&out[..]).collect::<Result<_, _>>().unwrap();
            assert_eq!(back, recs);
            check_sad(&recs, r, page);
        }
        1 => {
            let Some(recs) = check_errors(RawDiffReader::new(text), lines) else { return };
            let mut w = RawDiffWriter::new(Vec::new());
            recs.iter().for_each(|x| w.write(x).expect("decoded records re-encode"));
            let out = w.into_inner().unwrap();
            let back: Vec<RawRecord> = RawDiffReader::new(&out[..]).collect::<Result<_, _>>().unwrap();
            assert_eq!(back, recs);
            check_sad(&recs, r, page);
        }
        2 => {
            let Some(recs) = check_errors(SadReader::new(text), lines) else { return };
            let mut w = SadWriter::new(Vec::new());
            recs.iter().for_each(|x| w.write(x).expect("a record read is writable"));
            let out = w.into_inner().unwrap();
            let back: Vec<SadRecord> = SadReader::new(&out[..]).collect::<Result<_, _>>().unwrap();
            assert_eq!(back, recs);
        }
        _ => {
            let Some(recs) = check_errors(SadDiffReader::new(text), lines) else { return };
            let mut w = SadDiffWriter::new(Vec::new());
            recs.iter().for_each(|x| w.write(x).expect("decoded records re-encode"));
            let out = w.into_inner().unwrap();
            let back: Vec<SadRecord> = SadDiffReader::new(&out[..]).collect::<Result<_, _>>().unwrap();
            assert_eq!(back, recs);
            let _ = reduce_pages(&recs, r).unwrap();
        }
    }
});

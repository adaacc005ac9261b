//! PDATS (Johnson & Ha 1994) encoder and decoder, algorithms.md §2.
//!
//! Record (§2.1): `header(1) | repeat count(0|1) | address offset(0|1|2|4, or 8 in 64-bit mode) | time delta(0..2)`.
//! Header byte: bit 7 repeat, bits 6–5 address code (0 = exactly +4, 1/2/3 = 1/2/4-byte
//! signed BE offset), bits 4–3 time code, bits 2–0 type (= dinero label 0..=4).
//!
//! * Offsets are per-type: `addr - last[type]`, every `last` starting at 0 (§2.1 \[INF\]).
//! * A run of N ≥ 2 contiguous same-type references with equal offset is one record
//!   with repeat count byte N−1, so N ≤ 256 (§2.1 \[INF\]).
//! * The encoder is the canonical one of §2.2: address code 0 only for ifetch (type 2),
//!   or for any type when the header flag `DATA_DEFAULT_OFFSET` is set; otherwise the
//!   minimum offset width among 1, 2, 4 (8 in 64-bit mode).
//! * The decoder reads code 0 as +4 for every type, as Table 1 literally says (§2.1 \[PROP\]).
//! * File header: §2.5, see [`crate::header`]; format byte 1, stride byte 2, zone count 0.
//!
//! Choices and limits of this implementation:
//! * Time stamps (§2.4 \[PROP\]) are optional ([`PdatsOptions::time`], header flag bit 1).
//!   Without them every time code is 0 and a non-zero time code is corrupt input. With them
//!   the time field follows the offset: time code 0 = delta 0 (no field; our choice, §2.4
//!   leaves code 0 implicit), 1 = 1-byte, 2 = 2-byte unsigned BE delta, 3 reserved (corrupt).
//!   The delta is from the previous reference of any type, starting at time 0; a run
//!   requires equal deltas. A delta above 65,535 is preceded by time-only records
//!   `37 00 ff ff` (type 7, addr code 1, offset 0, time code 2, delta 65,535 each) until the
//!   rest fits. Times must not decrease ([`EncodeError::BadTime`]). Use
//!   [`PdatsEncoder::push_timed`] and [`PdatsDecoder::next_timed`].
//! * Types 5 and 6 are reserved (§2.1 \[PROP\]) and rejected; type 7 is accepted only as a
//!   time-only record (no repeat, addr code 1, offset 0) in a file with time fields.
//! * 64-bit mode (header flag bit 0): offsets are 64-bit differences and code 3 is an
//!   8-byte offset (§2.5). In 32-bit mode arithmetic wraps at 32 bits (§0) and the encoder
//!   rejects addresses above `u32::MAX`.
//! * A repeat count byte of 0 (N = 1) is never written but is accepted by the decoder.

use crate::arith::{add, fits, sdiff};
use crate::header::{
    write_be_signed, ByteReader, CheckedWriter, DecodeError, EncodeError, FileHeader, FLAG_64BIT,
    FLAG_DATA_DEFAULT_OFFSET, FLAG_TIME, FORMAT_PDATS,
};
use crate::Ref;
use std::io::{Read, Write};

/// Largest time delta one record can carry (§2.4).
pub const MAX_TIME_DELTA: u64 = 0xffff;

/// The time-only record: type 7, addr code 1, offset 0, time code 2, delta 65,535.
const TIME_ONLY_MAX: [u8; 4] = [0x37, 0x00, 0xff, 0xff];

/// Encoder options.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PdatsOptions {
    /// 64-bit addresses.
    pub wide: bool,
    /// Header flag `DATA_DEFAULT_OFFSET`: allow address code 0 (+4) for data types too.
    pub data_default_offset: bool,
    /// Header flag bit 1: records carry time deltas (§2.4).
    pub time: bool,
    /// Provenance comment stored in the file header.
    pub comment: String,
}

impl PdatsOptions {
    fn header(&self) -> FileHeader {
        let mut flags = 0;
        if self.wide {
            flags |= FLAG_64BIT;
        }
        if self.time {
            flags |= FLAG_TIME;
        }
        if self.data_default_offset {
            flags |= FLAG_DATA_DEFAULT_OFFSET;
        }
        FileHeader {
            format: FORMAT_PDATS,
            flags,
            stride_log2: 2,
            zones: 0,
            comment: self.comment.clone(),
        }
    }
}

struct Run {
    kind: u8,
    off: i64,
    count: u32,
    prev: u64,
    delta: u64,
}

/// Streaming PDATS encoder. Call [`push`](Self::push) (or
/// [`push_timed`](Self::push_timed)) per reference, then [`finish`](Self::finish); it
/// holds at most one pending run.
pub struct PdatsEncoder<W: Write> {
    out: Option<CheckedWriter<W>>,
    wide: bool,
    data_default: bool,
    timed: bool,
    now: u64,
    last: [u64; 8],
    run: Option<Run>,
    index: u64,
}

impl<W: Write> PdatsEncoder<W> {
    /// Write the file header and return the encoder.
    pub fn new(out: W, opts: &PdatsOptions) -> Result<Self, EncodeError> {
        let mut out = CheckedWriter::new(out);
        opts.header().write_to(&mut out)?;
        Ok(PdatsEncoder {
            out: Some(out),
            wide: opts.wide,
            data_default: opts.data_default_offset,
            timed: opts.time,
            now: 0,
            last: [0; 8],
            run: None,
            index: 0,
        })
    }

    /// Encode one reference. In a file with time fields it gets the time of the previous
    /// reference (delta 0).
    pub fn push(&mut self, r: Ref) -> Result<(), EncodeError> {
        self.push_timed(r, self.now)
    }

    /// Encode one reference with its time stamp. Without time fields `time` must be 0.
    pub fn push_timed(&mut self, r: Ref, time: u64) -> Result<(), EncodeError> {
        if self.out.is_none() {
            return Err(EncodeError::Finished);
        }
        let index = self.index;
        self.index += 1;
        if r.kind > 4 {
            return Err(EncodeError::UnsupportedType {
                index,
                kind: r.kind,
            });
        }
        if !self.wide && r.addr > u32::MAX as u64 {
            return Err(EncodeError::AddressTooWide {
                index,
                addr: r.addr,
            });
        }
        if time < self.now || (!self.timed && time != 0) {
            return Err(EncodeError::BadTime {
                index,
                time,
                prev: self.now,
                timed: self.timed,
            });
        }
        let mut delta = time - self.now;
        self.now = time;
        if let Some(run) = &mut self.run {
            if run.kind == r.kind
                && run.count < 256
                && run.delta == delta
                && sdiff(r.addr, run.prev, self.wide) == run.off
            {
                run.prev = r.addr;
                run.count += 1;
                return Ok(());
            }
        }
        self.flush_run()?;
        while delta > MAX_TIME_DELTA {
            self.out
                .as_mut()
                .ok_or(EncodeError::Finished)?
                .write_all(&TIME_ONLY_MAX)?;
            delta -= MAX_TIME_DELTA;
        }
        let off = sdiff(r.addr, self.last[r.kind as usize], self.wide);
        self.run = Some(Run {
            kind: r.kind,
            off,
            count: 1,
            prev: r.addr,
            delta,
        });
        Ok(())
    }

    fn flush_run(&mut self) -> Result<(), EncodeError> {
        let Some(run) = self.run.take() else {
            return Ok(());
        };
        let out = self.out.as_mut().ok_or(EncodeError::Finished)?;
        self.last[run.kind as usize] = run.prev;
        let (code, nbytes): (u8, usize) = if run.off == 4 && (run.kind == 2 || self.data_default) {
            (0, 0)
        } else if fits(run.off, 1) {
            (1, 1)
        } else if fits(run.off, 2) {
            (2, 2)
        } else {
            (3, if self.wide { 8 } else { 4 })
        };
        let (tcode, tbytes): (u8, usize) = match run.delta {
            0 => (0, 0),
            1..=0xff => (1, 1),
            _ => (2, 2),
        };
        let mut rec = [0u8; 12];
        let mut n = 0;
        rec[n] = (u8::from(run.count > 1) << 7) | (code << 5) | (tcode << 3) | run.kind;
        n += 1;
        if run.count > 1 {
            rec[n] = (run.count - 1) as u8;
            n += 1;
        }
        let mut tail = &mut rec[n..];
        write_be_signed(&mut tail, run.off, nbytes)?;
        write_be_signed(&mut tail, run.delta as i64, tbytes)?;
        n += nbytes + tbytes;
        out.write_all(&rec[..n])?;
        Ok(())
    }

    /// Flush the pending run and return the writer (flushed).
    pub fn finish(mut self) -> Result<W, EncodeError> {
        self.flush_run()?;
        let out = self.out.take().ok_or(EncodeError::Finished)?;
        Ok(out.finish(self.index)?)
    }
}

/// Encode a whole sequence into a byte vector.
pub fn encode(refs: &[Ref], opts: &PdatsOptions) -> Result<Vec<u8>, EncodeError> {
    let mut e = PdatsEncoder::new(Vec::new(), opts)?;
    for &r in refs {
        e.push(r)?;
    }
    e.finish()
}

/// Encode a sequence of time-stamped references (`opts.time` must be set).
pub fn encode_timed(refs: &[(Ref, u64)], opts: &PdatsOptions) -> Result<Vec<u8>, EncodeError> {
    let mut e = PdatsEncoder::new(Vec::new(), opts)?;
    for &(r, t) in refs {
        e.push_timed(r, t)?;
    }
    e.finish()
}

/// Streaming PDATS decoder: an iterator of references (use
/// [`next_timed`](Self::next_timed) for time stamps). After the first error it yields
/// `None`.
pub struct PdatsDecoder<R> {
    rd: ByteReader<R>,
    header: FileHeader,
    wide: bool,
    timed: bool,
    now: u64,
    last: [u64; 8],
    /// (kind, offset, time delta, remaining repetitions)
    pending: Option<(u8, i64, u64, u32)>,
    failed: bool,
    /// References returned so far.
    refs: u64,
}

impl<R: Read> PdatsDecoder<R> {
    /// Read and validate the file header.
    pub fn new(inner: R) -> Result<Self, DecodeError> {
        let mut rd = ByteReader::new(inner);
        let header = FileHeader::read_from(&mut rd, FORMAT_PDATS)?;
        rd.expect_trailer();
        let wide = header.wide();
        let timed = header.flags & FLAG_TIME != 0;
        Ok(PdatsDecoder {
            rd,
            header,
            wide,
            timed,
            now: 0,
            last: [0; 8],
            pending: None,
            failed: false,
            refs: 0,
        })
    }

    /// The file header.
    pub fn header(&self) -> &FileHeader {
        &self.header
    }

    fn emit(&mut self, kind: u8, off: i64, delta: u64) -> (Ref, u64) {
        let a = add(self.last[kind as usize], off, self.wide);
        self.last[kind as usize] = a;
        self.now = self.now.wrapping_add(delta);
        (Ref { kind, addr: a }, self.now)
    }

    fn read_record(&mut self) -> Result<Option<(Ref, u64)>, DecodeError> {
        loop {
            let start = self.rd.offset();
            let Some(h) = self.rd.read_u8_opt()? else {
                return Ok(None);
            };
            let kind = h & 7;
            let tcode = (h >> 3) & 3;
            let code = (h >> 5) & 3;
            if kind == 5 || kind == 6 {
                return Err(DecodeError::corrupt(
                    start,
                    format!("reserved record type {kind}"),
                ));
            }
            if !self.timed && (tcode != 0 || kind == 7) {
                return Err(DecodeError::corrupt(
                    start,
                    "time code or time-only record in a file without time fields",
                ));
            }
            if tcode == 3 {
                return Err(DecodeError::corrupt(start, "reserved time code 3"));
            }
            if kind == 7 && (h & 0x80 != 0 || code != 1) {
                return Err(DecodeError::corrupt(
                    start,
                    "time-only record must have no repeat and addr code 1",
                ));
            }
            let count = if h & 0x80 != 0 {
                self.rd.read_u8("repeat count")? as u32 + 1
            } else {
                1
            };
            let off = match code {
                0 => 4,
                1 => self.rd.read_be_signed(1, "address offset")?,
                2 => self.rd.read_be_signed(2, "address offset")?,
                _ => self
                    .rd
                    .read_be_signed(if self.wide { 8 } else { 4 }, "address offset")?,
            };
            let delta = match tcode {
                0 => 0,
                1 => self.rd.read_be_signed(1, "time delta")? as u64 & 0xff,
                _ => self.rd.read_be_signed(2, "time delta")? as u64 & 0xffff,
            };
            if kind == 7 {
                if off != 0 {
                    return Err(DecodeError::corrupt(
                        start,
                        "time-only record with non-zero offset",
                    ));
                }
                self.now = self.now.wrapping_add(delta);
                continue;
            }
            if count > 1 {
                self.pending = Some((kind, off, delta, count - 1));
            }
            return Ok(Some(self.emit(kind, off, delta)));
        }
    }

    /// Next reference with its time stamp (0 throughout in a file without time fields).
    pub fn next_timed(&mut self) -> Option<Result<(Ref, u64), DecodeError>> {
        if self.failed {
            return None;
        }
        if let Some((kind, off, delta, rem)) = self.pending {
            self.pending = if rem > 1 {
                Some((kind, off, delta, rem - 1))
            } else {
                None
            };
            self.refs += 1;
            return Some(Ok(self.emit(kind, off, delta)));
        }
        let r = self.read_record();
        self.rd.record_step(r, &mut self.refs, &mut self.failed)
    }
}

impl<R: Read> Iterator for PdatsDecoder<R> {
    type Item = Result<Ref, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_timed().map(|r| r.map(|(r, _)| r))
    }
}

/// Decode a whole file from bytes.
pub fn decode(bytes: &[u8]) -> Result<(FileHeader, Vec<Ref>), DecodeError> {
    let d = PdatsDecoder::new(bytes)?;
    let h = d.header().clone();
    let refs = d.collect::<Result<Vec<_>, _>>()?;
    Ok((h, refs))
}

/// Decode a whole file from bytes, with time stamps.
pub fn decode_timed(bytes: &[u8]) -> Result<(FileHeader, Vec<(Ref, u64)>), DecodeError> {
    let mut d = PdatsDecoder::new(bytes)?;
    let mut v = Vec::new();
    while let Some(r) = d.next_timed() {
        v.push(r?);
    }
    Ok((d.header().clone(), v))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::header::TRAILER_LEN;
    use proptest::prelude::*;

    /// Johnson, PDATS II paper, Table 3: the first 29 references of the `tex` DLX trace.
    pub(crate) fn table3() -> Vec<Ref> {
        let raw: [(u8, u32); 29] = [
            (2, 0x430d70),
            (2, 0x430d74),
            (2, 0x415130),
            (0, 0x1000acac),
            (2, 0x415134),
            (2, 0x415138),
            (2, 0x41513c),
            (2, 0x415140),
            (2, 0x430c20),
            (2, 0x430c24),
            (1, 0x7fff00ac),
            (2, 0x430c28),
            (1, 0x7fff00a8),
            (2, 0x430c2c),
            (1, 0x7fff00a4),
            (2, 0x430c30),
            (1, 0x7fff009c),
            (2, 0x430c34),
            (1, 0x7fff00a0),
            (2, 0x430c38),
            (1, 0x7fff0098),
            (2, 0x430c3c),
            (2, 0x430c40),
            (2, 0x430c44),
            (2, 0x430c48),
            (2, 0x430c4c),
            (2, 0x430c50),
            (2, 0x430c54),
            (2, 0x430c58),
        ];
        raw.iter().map(|&(k, a)| Ref::new(k, a as u64)).collect()
    }

    pub(crate) fn hex(s: &str) -> Vec<u8> {
        s.split(|c: char| c.is_whitespace() || c == '|')
            .filter(|t| !t.is_empty())
            .map(|t| u8::from_str_radix(t, 16).unwrap())
            .collect()
    }

    /// algorithms.md §2.3, verbatim.
    const GOLDEN: &str =
        "62 00 43 0d 70 | 02 | 62 ff fe 43 bc | 60 10 00 ac ac | 82 03 | 62 00 01 ba e0 | 02 |
61 7f ff 00 ac | 02 | 21 fc | 02 | 21 fc | 02 | 21 f8 | 02 | 21 04 | 02 | 21 f8 | 82 07";

    #[test]
    fn golden_table3_pdats() {
        let out = encode(&table3(), &PdatsOptions::default()).unwrap();
        assert_eq!(
            &out[..16],
            &[b'P', b'D', b'A', b'T', 1, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0]
        );
        let golden = hex(GOLDEN);
        assert_eq!(golden.len(), 46);
        assert_eq!(&out[16..out.len() - TRAILER_LEN], &golden[..]);
        let (h, back) = decode(&out).unwrap();
        assert_eq!(h.format, 1);
        assert_eq!(back, table3());
    }

    #[test]
    fn golden_record_sizes() {
        // Per-record sizes of §2.3 / Table 3's PDATS column.
        let sizes = [5, 1, 5, 5, 2, 5, 1, 5, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 2];
        assert_eq!(sizes.iter().sum::<usize>(), 46);
        let golden = hex(GOLDEN);
        let mut pos = 0;
        for &s in &sizes {
            let h = golden[pos];
            let code = (h >> 5) & 3;
            let len = 1 + usize::from(h & 0x80 != 0) + [0, 1, 2, 4][code as usize];
            assert_eq!(len, s);
            pos += s;
        }
    }

    /// docs/pdats.md: a file cut anywhere (at a record boundary included) or with any bit
    /// flipped is an error, never a shorter or other answer.
    #[test]
    fn truncation_and_bit_flips_are_errors() {
        let good = encode(&table3(), &PdatsOptions::default()).unwrap();
        assert_eq!(decode(&good).unwrap().1, table3());
        crate::header::tests::assert_damage_is_an_error(&good, |b| decode(b).is_ok());
    }

    #[test]
    fn comment_and_data_default_offset() {
        let refs = vec![Ref::new(0, 4), Ref::new(0, 8), Ref::new(1, 4)];
        let opts = PdatsOptions {
            data_default_offset: true,
            comment: "hé".into(),
            ..Default::default()
        };
        let out = encode(&refs, &opts).unwrap();
        assert_eq!(out[5], FLAG_DATA_DEFAULT_OFFSET);
        assert_eq!(&out[16..19], "hé".as_bytes());
        assert_eq!(&out[19..out.len() - TRAILER_LEN], &[0x80, 0x01, 0x01]);
        let (h, back) = decode(&out).unwrap();
        assert_eq!(h.comment, "hé");
        assert_eq!(back, refs);
    }

    #[test]
    fn encoder_errors() {
        assert!(matches!(
            encode(&[Ref::new(5, 0)], &PdatsOptions::default()),
            Err(EncodeError::UnsupportedType { index: 0, kind: 5 })
        ));
        assert!(matches!(
            encode(
                &[Ref::new(0, 0), Ref::new(0, 1 << 32)],
                &PdatsOptions::default()
            ),
            Err(EncodeError::AddressTooWide { index: 1, .. })
        ));
    }

    #[test]
    fn decoder_errors_have_offsets() {
        let good = encode(&table3(), &PdatsOptions::default()).unwrap();
        // Truncate inside the first record (header 16 + 3 bytes of a 5-byte record).
        let e = decode(&good[..19]).unwrap_err();
        assert!(
            matches!(e, DecodeError::Truncated { offset: 19, .. }),
            "{e}"
        );
        let e = decode(&good[..10]).unwrap_err();
        assert!(
            matches!(e, DecodeError::Truncated { offset: 10, .. }),
            "{e}"
        );
        let mut bad = good.clone();
        bad[16 + 5] = 0x07; // reserved type 7 at the second record
        let e = decode(&bad).unwrap_err();
        assert_eq!(e.offset(), 21);
        let mut bad = good.clone();
        bad[16] |= 0x08; // time code
        assert_eq!(decode(&bad).unwrap_err().offset(), 16);
        let mut bad = good.clone();
        bad[0] = b'X';
        assert_eq!(decode(&bad).unwrap_err().offset(), 0);
        let mut bad = good;
        bad[5] = 0x08; // unknown flag bit
        assert_eq!(decode(&bad).unwrap_err().offset(), 5);
    }

    #[test]
    fn long_runs_split_at_256() {
        let refs: Vec<Ref> = (0..600u64).map(|i| Ref::new(2, 0x1000 + 4 * i)).collect();
        let out = encode(&refs, &PdatsOptions::default()).unwrap();
        // first: 0x1000 with code 2 (42 10 00); then ifetch runs of 256, 256, 87 of +4
        assert_eq!(
            &out[16..out.len() - TRAILER_LEN],
            &[0x42, 0x10, 0x00, 0x82, 0xff, 0x82, 0xff, 0x82, 86]
        );
        assert_eq!(decode(&out).unwrap().1, refs);
    }

    #[test]
    fn wide_mode_round_trip() {
        let refs = vec![
            Ref::new(0, 0xffff_ffff_0000_0000),
            Ref::new(0, 0x10),
            Ref::new(2, 1 << 40),
        ];
        let opts = PdatsOptions {
            wide: true,
            ..Default::default()
        };
        let out = encode(&refs, &opts).unwrap();
        assert_eq!(out[16], 0x60);
        assert_eq!(out.len(), 16 + 9 + 9 + 9 + TRAILER_LEN);
        assert_eq!(decode(&out).unwrap().1, refs);
    }

    #[test]
    fn time_fields() {
        let refs = vec![
            (Ref::new(2, 0x100), 0),
            (Ref::new(2, 0x104), 3),
            (Ref::new(2, 0x108), 6),
            (Ref::new(2, 0x10c), 9),
            (Ref::new(0, 0x20), 9 + 300),
            (Ref::new(1, 0x40), 309 + 65_535 * 2 + 7),
        ];
        let opts = PdatsOptions {
            time: true,
            ..Default::default()
        };
        let out = encode_timed(&refs, &opts).unwrap();
        assert_eq!(out[5], FLAG_TIME);
        assert_eq!(
            &out[16..out.len() - TRAILER_LEN],
            &[
                0x42, 0x01, 0x00, // ifetch 0x100, delta 0
                0x8a, 0x02, 0x03, // ifetch +4 x3, delta 3 each (tcode 1)
                0x30, 0x20, 0x01, 0x2c, // read 0x20, delta 300 (tcode 2)
                0x37, 0x00, 0xff, 0xff, 0x37, 0x00, 0xff, 0xff, // two time-only records
                0x29, 0x40, 0x07, // write 0x40, delta 7 (tcode 1)
            ]
        );
        assert_eq!(decode_timed(&out).unwrap().1, refs);
        assert_eq!(
            decode(&out).unwrap().1,
            refs.iter().map(|p| p.0).collect::<Vec<_>>()
        );
        // Decreasing time, and time without the flag, are encode errors.
        assert!(matches!(
            encode_timed(&[(Ref::new(0, 0), 5), (Ref::new(0, 0), 4)], &opts),
            Err(EncodeError::BadTime { index: 1, .. })
        ));
        assert!(matches!(
            encode_timed(&[(Ref::new(0, 0), 5)], &PdatsOptions::default()),
            Err(EncodeError::BadTime { index: 0, .. })
        ));
        // Reserved time code 3 and a malformed time-only record are corrupt.
        let mut bad = out.clone();
        bad[16] |= 0x18;
        assert_eq!(decode(&bad).unwrap_err().offset(), 16);
        let mut bad = out;
        bad[16 + 11] = 0x01; // non-zero offset in the first time-only record
        assert_eq!(decode(&bad).unwrap_err().offset(), 16 + 10);
    }

    /// Random traces mixing sequential and jumping ifetches and data strides of 0, ±4,
    /// ±8, small, large and wrapping (§2.6).
    pub(crate) fn trace_strategy(wide: bool) -> impl Strategy<Value = Vec<Ref>> {
        let step = prop_oneof![
            4 => Just(4i64),
            2 => Just(0i64),
            2 => Just(-4i64),
            1 => Just(8i64),
            1 => Just(-8i64),
            2 => -300i64..300,
            1 => -100_000i64..100_000,
            1 => any::<i32>().prop_map(|v| v as i64),
            1 => any::<i64>(),
        ];
        proptest::collection::vec((0u8..=4, step, 1usize..6), 0..120).prop_map(move |ops| {
            let mut cur = [0u64; 5];
            let mut out = Vec::new();
            for (k, s, rep) in ops {
                for _ in 0..rep {
                    let mut a = cur[k as usize].wrapping_add(s as u64);
                    if !wide {
                        a &= 0xffff_ffff;
                    }
                    cur[k as usize] = a;
                    out.push(Ref::new(k, a));
                }
            }
            out
        })
    }

    proptest! {
        #[test]
        fn round_trip_32(refs in trace_strategy(false), dd in any::<bool>()) {
            let opts = PdatsOptions { data_default_offset: dd, ..Default::default() };
            let out = encode(&refs, &opts).unwrap();
            prop_assert!(out.len() - 16 - TRAILER_LEN <= 5 * refs.len());
            let (_, back) = decode(&out).unwrap();
            prop_assert_eq!(back, refs);
        }

        #[test]
        fn round_trip_64(refs in trace_strategy(true)) {
            let opts = PdatsOptions { wide: true, ..Default::default() };
            let out = encode(&refs, &opts).unwrap();
            prop_assert!(out.len() - 16 - TRAILER_LEN <= 9 * refs.len());
            let (_, back) = decode(&out).unwrap();
            prop_assert_eq!(back, refs);
        }

        #[test]
        fn streaming_decode_through_reader(refs in trace_strategy(false)) {
            let out = encode(&refs, &PdatsOptions::default()).unwrap();
            let d = PdatsDecoder::new(std::io::Cursor::new(out)).unwrap();
            let back: Vec<Ref> = d.collect::<Result<_, _>>().unwrap();
            prop_assert_eq!(back, refs);
        }

        #[test]
        fn round_trip_timed(refs in trace_strategy(false), deltas in proptest::collection::vec(prop_oneof![
            3 => Just(0u64), 3 => Just(1u64), 2 => 0u64..300, 1 => 0u64..70_000, 1 => 0u64..1_000_000,
        ], 0..1200), wide in any::<bool>()) {
            let mut t = 0u64;
            let timed: Vec<(Ref, u64)> = refs.iter().zip(deltas.iter().chain(std::iter::repeat(&0)))
                .map(|(r, d)| { t += d; (*r, t) }).collect();
            let opts = PdatsOptions { time: true, wide, ..Default::default() };
            let out = encode_timed(&timed, &opts).unwrap();
            let (_, back) = decode_timed(&out).unwrap();
            prop_assert_eq!(back, timed);
        }

        #[test]
        fn random_bytes_never_panic(body in proptest::collection::vec(any::<u8>(), 0..200), flags in 0u8..8, raw in any::<bool>()) {
            let mut bytes = if raw { Vec::new() } else {
                vec![b'P', b'D', b'A', b'T', 1, flags, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0]
            };
            bytes.extend_from_slice(&body);
            if let Ok(d) = PdatsDecoder::new(&bytes[..]) {
                for r in d.take(100_000) { if let Err(e) = r { prop_assert!(e.offset() <= bytes.len() as u64); } }
            }
        }

        #[test]
        fn truncation_is_error(refs in trace_strategy(false), cut in any::<prop::sample::Index>()) {
            let out = encode(&refs, &PdatsOptions::default()).unwrap();
            let cut = cut.index(out.len() + 1);
            // Any prefix either decodes to a prefix of the refs or errors; never panics.
            match decode(&out[..cut]) {
                Ok((_, back)) => prop_assert!(refs.starts_with(&back)),
                Err(e) => prop_assert!(e.offset() <= cut as u64),
            }
        }
    }
}

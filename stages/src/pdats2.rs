//! PDATS II (Johnson, IPCCC 1999) encoder and decoder, algorithms.md §3.
//!
//! Records are 1–5 bytes (1–9 in 64-bit mode): a header byte and an optional big-endian
//! two's-complement offset. Bit layout (§3.2, **\[PROP\]**, Figures 7/8 of the paper are lost):
//!
//! ```text
//! Instruction header (bit7 = 0):  0 | icode(2) | count(5)
//!   icode 0 = +1 stride unit (no offset bytes); 1/2/3 = i8/i16/i32 (i64 in 64-bit mode),
//!   in stride units
//! Data header (bit7 = 1):         1 | R/W(1) | zone(1) | dcode(3) | count(2)
//!   R/W 0 = read, 1 = write; dcode 0 = offset 0, 1/2/3 = i8/i16/i32 (i64 in 64-bit mode)
//!   true byte offsets, 4 = +4, 5 = -4, 6 = +8, 7 = -8
//! ```
//!
//! `count` is the number of sequential ifetches (each at the last instruction address plus
//! the stride) that follow the record's own reference.
//!
//! Semantics fixed by the source or Table 3 (§3.1): the last instruction address and both
//! zone bases start at 0; a zone base becomes the address just referenced; count-implied
//! ifetches advance the last instruction address; a count continues the instruction stream,
//! not the data address; counts are capped (31 / 3) and the remainder starts a new
//! instruction record with icode 0 ("+1").
//!
//! Encoder (§3.3): zone choice is the shortest encoding, ties to the least recently used
//! zone, then zone 0 (§3.3 \[INF\], pinned by Table 3's Zone column).
//!
//! Open choices (§3.5) and how this module resolves them:
//! 1. I/D flag polarity/position, 2. field order, 3. small-offset dcode mapping: as in the
//!    §3.2 proposal above.
//! 4. Offset byte order: big-endian (§3.2).
//! 5. File header: the shared §2.5 header, format 2, flags bit 0 only (bits 1 and 2 are
//!    PDATS-only and rejected), byte 6 = log2 stride, zone count 2. See [`crate::header`].
//! 6. 64-bit code-3 width: 8 bytes, for both icode 3 and dcode 3.
//! * Thumb/unaligned (§3.5 \[PROP\]): stride is `1 << stride_log2`; this implementation
//!   accepts `stride_log2` 0..=3 (encoder config error / decoder corrupt header otherwise).
//!   An instruction offset that is not a multiple of the stride is an encode error
//!   ([`EncodeError::NotStrideAligned`]).
//! * Din labels 3 and 4 are rejected ([`EncodeError::UnsupportedType`]); the optional
//!   escape of §3.5 is not implemented.
//! * The decoder accepts the never-canonical encodings (icode 1 with `u == 1`, dcode 1 for
//!   a small offset, a data record whose zone is not the encoder's choice); they decode to
//!   the obvious references.
//! * In 32-bit mode address arithmetic wraps at 32 bits (§0); the encoder rejects addresses
//!   above `u32::MAX`.

use crate::arith::{add, fits, sdiff};
use crate::header::{
    ByteReader, CheckedWriter, DecodeError, EncodeError, FileHeader, FLAG_64BIT, FORMAT_PDATS2,
};
use crate::Ref;
use std::io::{Read, Write};

/// Largest count in an instruction header.
pub const ICOUNT_MAX: u8 = 31;
/// Largest count in a data header.
pub const DCOUNT_MAX: u8 = 3;

/// Encoder options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pdats2Options {
    /// 64-bit addresses.
    pub wide: bool,
    /// log2 of the instruction stride: 2 for ARM (default), 1 for Thumb-mixed traces.
    pub stride_log2: u8,
    /// Provenance comment stored in the file header.
    pub comment: String,
}

impl Default for Pdats2Options {
    fn default() -> Self {
        Pdats2Options {
            wide: false,
            stride_log2: 2,
            comment: String::new(),
        }
    }
}

struct Pending {
    hdr: u8,
    val: i64,
    nbytes: usize,
    cnt: u8,
    cap: u8,
}

fn wide_bytes(wide: bool) -> usize {
    if wide {
        8
    } else {
        4
    }
}

/// Encoded bytes collected before one `write_all` to the output: a call per record costs
/// more than the encoding itself (docs/performance.md).
const OUT_CHUNK: usize = 1 << 14;

/// Streaming PDATS II encoder; holds at most one pending record and one output chunk.
pub struct Pdats2Encoder<W: Write> {
    out: Option<CheckedWriter<W>>,
    buf: Vec<u8>,
    wide: bool,
    stride_log2: u8,
    last_i: u64,
    base: [u64; 2],
    used: [u64; 2],
    tick: u64,
    pending: Option<Pending>,
    index: u64,
}

impl<W: Write> Pdats2Encoder<W> {
    /// Write the file header and return the encoder.
    pub fn new(out: W, opts: &Pdats2Options) -> Result<Self, EncodeError> {
        if opts.stride_log2 > 3 {
            return Err(EncodeError::Config("stride_log2 must be 0..=3"));
        }
        let header = FileHeader {
            format: FORMAT_PDATS2,
            flags: if opts.wide { FLAG_64BIT } else { 0 },
            stride_log2: opts.stride_log2,
            zones: 2,
            comment: opts.comment.clone(),
        };
        let mut out = CheckedWriter::new(out);
        header.write_to(&mut out)?;
        Ok(Pdats2Encoder {
            out: Some(out),
            buf: Vec::with_capacity(OUT_CHUNK + 16),
            wide: opts.wide,
            stride_log2: opts.stride_log2,
            last_i: 0,
            base: [0; 2],
            used: [0; 2],
            tick: 0,
            pending: None,
            index: 0,
        })
    }

    fn stride(&self) -> u64 {
        1u64 << self.stride_log2
    }

    /// Width code and byte count for a ranged value.
    fn range_code(&self, v: i64) -> (u8, usize) {
        if fits(v, 1) {
            (1, 1)
        } else if fits(v, 2) {
            (2, 2)
        } else {
            (3, wide_bytes(self.wide))
        }
    }

    /// Data offset code and byte count: the five common offsets cost no bytes.
    #[inline]
    fn data_code(&self, off: i64) -> (u8, usize) {
        match off {
            0 => (0, 0),
            4 => (4, 0),
            -4 => (5, 0),
            8 => (6, 0),
            -8 => (7, 0),
            _ => self.range_code(off),
        }
    }

    /// Encode one reference.
    #[inline]
    pub fn push(&mut self, r: Ref) -> Result<(), EncodeError> {
        // Fast path, most references of a program trace: the next sequential ifetch joins
        // the pending record's count. An address equal to a wrapped sum is in range.
        if r.kind == 2 {
            if let Some(p) = &mut self.pending {
                if p.cnt < p.cap && r.addr == add(self.last_i, 1i64 << self.stride_log2, self.wide) {
                    p.cnt += 1;
                    self.last_i = r.addr;
                    self.index += 1;
                    return Ok(());
                }
            }
        }
        self.push_record(r)
    }

    /// Start a new record for `r` (flushing the pending one).
    fn push_record(&mut self, r: Ref) -> Result<(), EncodeError> {
        if self.out.is_none() {
            return Err(EncodeError::Finished);
        }
        let index = self.index;
        self.index += 1;
        if r.kind > 2 {
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
        let stride = self.stride();
        self.flush()?;
        if r.kind == 2 {
            let d = sdiff(r.addr, self.last_i, self.wide);
            if d & (stride as i64 - 1) != 0 {
                return Err(EncodeError::NotStrideAligned {
                    index,
                    addr: r.addr,
                    prev: self.last_i,
                    stride,
                });
            }
            let u = d >> self.stride_log2;
            let (icode, nbytes) = if u == 1 { (0, 0) } else { self.range_code(u) };
            self.last_i = r.addr;
            self.pending = Some(Pending {
                hdr: icode << 5,
                val: u,
                nbytes,
                cnt: 0,
                cap: ICOUNT_MAX,
            });
        } else {
            let off = [
                sdiff(r.addr, self.base[0], self.wide),
                sdiff(r.addr, self.base[1], self.wide),
            ];
            let code = [self.data_code(off[0]), self.data_code(off[1])];
            // Shortest encoding; on a tie the least recently used zone; then zone 0 (§3.3).
            let z = usize::from(
                code[1].1 < code[0].1 || (code[1].1 == code[0].1 && self.used[1] < self.used[0]),
            );
            let ((dcode, nbytes), off) = (code[z], off[z]);
            self.base[z] = r.addr;
            self.tick += 1;
            self.used[z] = self.tick;
            let hdr = 0x80 | (r.kind << 6) | ((z as u8) << 5) | (dcode << 2);
            self.pending = Some(Pending {
                hdr,
                val: off,
                nbytes,
                cnt: 0,
                cap: DCOUNT_MAX,
            });
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), EncodeError> {
        let Some(p) = self.pending.take() else {
            return Ok(());
        };
        self.buf.push(p.hdr | p.cnt);
        self.buf
            .extend_from_slice(&p.val.to_be_bytes()[8 - p.nbytes..]);
        if self.buf.len() >= OUT_CHUNK {
            self.write_chunk()?;
        }
        Ok(())
    }

    fn write_chunk(&mut self) -> Result<(), EncodeError> {
        let out = self.out.as_mut().ok_or(EncodeError::Finished)?;
        out.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }

    /// Flush the pending record and return the writer (flushed).
    pub fn finish(mut self) -> Result<W, EncodeError> {
        self.flush()?;
        self.write_chunk()?;
        let out = self.out.take().ok_or(EncodeError::Finished)?;
        Ok(out.finish(self.index)?)
    }
}

/// Encode a whole sequence into a byte vector.
pub fn encode(refs: &[Ref], opts: &Pdats2Options) -> Result<Vec<u8>, EncodeError> {
    let mut e = Pdats2Encoder::new(Vec::new(), opts)?;
    for &r in refs {
        e.push(r)?;
    }
    e.finish()
}

/// Streaming PDATS II decoder: an iterator of references; `None` after the first error.
pub struct Pdats2Decoder<R> {
    rd: ByteReader<R>,
    header: FileHeader,
    wide: bool,
    stride: u64,
    last_i: u64,
    base: [u64; 2],
    /// Count-implied ifetches still to emit.
    pending: u8,
    failed: bool,
    /// References returned so far.
    refs: u64,
}

impl<R: Read> Pdats2Decoder<R> {
    /// Read and validate the file header.
    pub fn new(inner: R) -> Result<Self, DecodeError> {
        let mut rd = ByteReader::new(inner);
        let header = FileHeader::read_from(&mut rd, FORMAT_PDATS2)?;
        rd.expect_trailer();
        if header.stride_log2 > 3 {
            return Err(DecodeError::corrupt(
                6,
                format!("stride log2 {} is not in 0..=3", header.stride_log2),
            ));
        }
        let wide = header.wide();
        let stride = 1u64 << header.stride_log2;
        Ok(Pdats2Decoder {
            rd,
            header,
            wide,
            stride,
            last_i: 0,
            base: [0; 2],
            pending: 0,
            failed: false,
            refs: 0,
        })
    }

    /// The file header.
    pub fn header(&self) -> &FileHeader {
        &self.header
    }

    fn next_ifetch(&mut self) -> Ref {
        self.last_i = add(self.last_i, self.stride as i64, self.wide);
        Ref {
            kind: 2,
            addr: self.last_i,
        }
    }

    fn ranged(&mut self, code: u8) -> Result<i64, DecodeError> {
        let n = match code {
            1 => 1,
            2 => 2,
            _ => wide_bytes(self.wide),
        };
        self.rd.read_be_signed(n, "offset")
    }

    fn read_record(&mut self) -> Result<Option<Ref>, DecodeError> {
        let Some(h) = self.rd.read_u8_opt()? else {
            return Ok(None);
        };
        if h & 0x80 == 0 {
            let icode = (h >> 5) & 3;
            let u = if icode == 0 { 1 } else { self.ranged(icode)? };
            self.last_i = add(
                self.last_i,
                (u as u64).wrapping_mul(self.stride) as i64,
                self.wide,
            );
            self.pending = h & 0x1f;
            Ok(Some(Ref {
                kind: 2,
                addr: self.last_i,
            }))
        } else {
            let kind = (h >> 6) & 1;
            let z = ((h >> 5) & 1) as usize;
            let off = match (h >> 2) & 7 {
                0 => 0,
                4 => 4,
                5 => -4,
                6 => 8,
                7 => -8,
                c => self.ranged(c)?,
            };
            let a = add(self.base[z], off, self.wide);
            self.base[z] = a;
            self.pending = h & 3;
            Ok(Some(Ref { kind, addr: a }))
        }
    }
}

impl<R: Read> Iterator for Pdats2Decoder<R> {
    type Item = Result<Ref, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        if self.pending > 0 {
            self.pending -= 1;
            self.refs += 1;
            return Some(Ok(self.next_ifetch()));
        }
        let r = self.read_record();
        self.rd.record_step(r, &mut self.refs, &mut self.failed)
    }
}

/// Decode a whole file from bytes.
pub fn decode(bytes: &[u8]) -> Result<(FileHeader, Vec<Ref>), DecodeError> {
    let d = Pdats2Decoder::new(bytes)?;
    let h = d.header().clone();
    let refs = d.collect::<Result<Vec<_>, _>>()?;
    Ok((h, refs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::header::TRAILER_LEN;
    use crate::pdats::tests::{hex, table3};
    use proptest::prelude::*;

    /// algorithms.md §3.4, verbatim.
    const GOLDEN: &str = "61 00 10 c3 5c | 40 90 ef | 8f 10 00 ac ac | 00 | 41 6e b8 | ed 7f ff 00 ac | f5 | f5 | fd | f1 | ff | 04";

    #[test]
    fn golden_table3_pdats2() {
        let out = encode(&table3(), &Pdats2Options::default()).unwrap();
        assert_eq!(
            &out[..16],
            &[b'P', b'D', b'A', b'T', 2, 0, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0]
        );
        let golden = hex(GOLDEN);
        assert_eq!(golden.len(), 28);
        assert_eq!(&out[16..out.len() - TRAILER_LEN], &golden[..]);
        let (h, back) = decode(&out).unwrap();
        assert_eq!(h.zones, 2);
        assert_eq!(back, table3());
    }

    #[test]
    fn golden_columns() {
        // Table 3 PDATS II columns: sizes, and for data records Zone and Count.
        let golden = hex(GOLDEN);
        let sizes = [5, 3, 5, 1, 3, 5, 1, 1, 1, 1, 1, 1];
        let mut pos = 0;
        let mut zones = Vec::new();
        let mut counts = Vec::new();
        for &s in &sizes {
            let h = golden[pos];
            let len = if h & 0x80 == 0 {
                counts.push(h & 0x1f);
                1 + [0, 1, 2, 4][((h >> 5) & 3) as usize]
            } else {
                zones.push((h >> 5) & 1);
                counts.push(h & 3);
                1 + [0, 1, 2, 4, 0, 0, 0, 0][((h >> 2) & 7) as usize]
            };
            assert_eq!(len, s);
            pos += s;
        }
        assert_eq!(pos, golden.len());
        assert_eq!(zones, vec![0, 1, 1, 1, 1, 1, 1]);
        assert_eq!(counts, vec![1, 0, 3, 0, 1, 1, 1, 1, 1, 1, 3, 4]);
    }

    #[test]
    fn encoder_errors() {
        let o = Pdats2Options::default();
        assert!(matches!(
            encode(&[Ref::new(3, 0)], &o),
            Err(EncodeError::UnsupportedType { index: 0, kind: 3 })
        ));
        assert!(matches!(
            encode(&[Ref::new(4, 0)], &o),
            Err(EncodeError::UnsupportedType { .. })
        ));
        assert!(matches!(
            encode(&[Ref::new(2, 4), Ref::new(2, 6)], &o),
            Err(EncodeError::NotStrideAligned {
                index: 1,
                addr: 6,
                prev: 4,
                stride: 4
            })
        ));
        assert!(matches!(
            encode(&[Ref::new(0, 1 << 33)], &o),
            Err(EncodeError::AddressTooWide { .. })
        ));
        let bad = Pdats2Options {
            stride_log2: 4,
            ..Default::default()
        };
        assert!(matches!(encode(&[], &bad), Err(EncodeError::Config(_))));
    }

    #[test]
    fn thumb_stride() {
        let refs = vec![
            Ref::new(2, 0x1000),
            Ref::new(2, 0x1002),
            Ref::new(2, 0x1006),
            Ref::new(2, 0x1008),
        ];
        let o = Pdats2Options {
            stride_log2: 1,
            ..Default::default()
        };
        let out = encode(&refs, &o).unwrap();
        assert_eq!(out[6], 1);
        // +0x800 units, count 1 | +2 units (i8), count 1
        assert_eq!(&out[16..out.len() - TRAILER_LEN], &[0x41, 0x08, 0x00, 0x21, 0x02]);
        assert_eq!(decode(&out).unwrap().1, refs);
    }

    /// docs/pdats.md: a file cut anywhere (at a record boundary included) or with any bit
    /// flipped is an error, never a shorter or other answer.
    #[test]
    fn truncation_and_bit_flips_are_errors() {
        let good = encode(&table3(), &Pdats2Options::default()).unwrap();
        assert_eq!(decode(&good).unwrap().1, table3());
        crate::header::tests::assert_damage_is_an_error(&good, |b| decode(b).is_ok());
    }

    #[test]
    fn count_caps() {
        let refs: Vec<Ref> = (0..70u64).map(|i| Ref::new(2, 4 + 4 * i)).collect();
        let out = encode(&refs, &Pdats2Options::default()).unwrap();
        // 1 + 31, 1 + 31, 1 + 5: all "+1" records
        assert_eq!(&out[16..out.len() - TRAILER_LEN], &[0x1f, 0x1f, 0x05]);
        assert_eq!(decode(&out).unwrap().1, refs);
    }

    #[test]
    fn decoder_errors_have_offsets() {
        let good = encode(&table3(), &Pdats2Options::default()).unwrap();
        let e = decode(&good[..18]).unwrap_err();
        assert!(
            matches!(e, DecodeError::Truncated { offset: 18, .. }),
            "{e}"
        );
        let mut bad = good.clone();
        bad[7] = 3;
        assert_eq!(decode(&bad).unwrap_err().offset(), 7);
        let mut bad = good.clone();
        bad[5] = 4;
        assert_eq!(decode(&bad).unwrap_err().offset(), 5);
        let mut bad = good.clone();
        bad[6] = 9;
        assert_eq!(decode(&bad).unwrap_err().offset(), 6);
        let mut bad = good;
        bad[4] = 1;
        assert_eq!(decode(&bad).unwrap_err().offset(), 4);
    }

    fn trace_strategy(wide: bool, stride_log2: u8) -> impl Strategy<Value = Vec<Ref>> {
        let step = prop_oneof![
            6 => Just(1i64),
            2 => Just(0i64),
            1 => Just(-1i64),
            1 => Just(2i64),
            1 => Just(-2i64),
            2 => -300i64..300,
            1 => -100_000i64..100_000,
            1 => any::<i32>().prop_map(|v| v as i64),
            1 => any::<i64>(),
        ];
        proptest::collection::vec((0u8..=2, step, 1usize..8), 0..120).prop_map(move |ops| {
            let mask = if wide { u64::MAX } else { 0xffff_ffff };
            let mut cur = [0u64; 3];
            let mut out = Vec::new();
            for (k, s, rep) in ops {
                for _ in 0..rep {
                    // ifetch steps are in stride units so they stay aligned; data steps of
                    // 0, ±1, ±2 mean 0, ±4, ±8 bytes, others are raw byte steps.
                    let s = if k == 2 {
                        (s as u64).wrapping_shl(stride_log2 as u32)
                    } else if (-2..=2).contains(&s) {
                        (s as u64).wrapping_mul(4)
                    } else {
                        s as u64
                    };
                    let a = cur[k as usize].wrapping_add(s) & mask;
                    cur[k as usize] = a;
                    out.push(Ref::new(k, a));
                }
            }
            out
        })
    }

    proptest! {
        #[test]
        fn round_trip_and_canonical_32(refs in trace_strategy(false, 2)) {
            let out = encode(&refs, &Pdats2Options::default()).unwrap();
            prop_assert!(out.len() - 16 - TRAILER_LEN <= 5 * refs.len());
            let (_, back) = decode(&out).unwrap();
            prop_assert_eq!(&back, &refs);
            prop_assert_eq!(encode(&back, &Pdats2Options::default()).unwrap(), out);
        }

        #[test]
        fn round_trip_and_canonical_64(refs in trace_strategy(true, 2)) {
            let o = Pdats2Options { wide: true, ..Default::default() };
            let out = encode(&refs, &o).unwrap();
            prop_assert!(out.len() - 16 - TRAILER_LEN <= 9 * refs.len());
            let (_, back) = decode(&out).unwrap();
            prop_assert_eq!(&back, &refs);
            prop_assert_eq!(encode(&back, &o).unwrap(), out);
        }

        #[test]
        fn round_trip_thumb(refs in trace_strategy(false, 1)) {
            let o = Pdats2Options { stride_log2: 1, ..Default::default() };
            let out = encode(&refs, &o).unwrap();
            let (_, back) = decode(&out).unwrap();
            prop_assert_eq!(back, refs);
        }

        #[test]
        fn record_size_bound(refs in trace_strategy(false, 2)) {
            // Every record is at most 5 bytes and covers at least one reference; a record
            // count equals the number of references not covered by a count.
            let out = encode(&refs, &Pdats2Options::default()).unwrap();
            let body = &out[16..out.len() - TRAILER_LEN];
            let mut pos = 0;
            let mut covered = 0usize;
            let mut records = 0usize;
            while pos < body.len() {
                let h = body[pos];
                let (len, cnt) = if h & 0x80 == 0 {
                    (1 + [0, 1, 2, 4][((h >> 5) & 3) as usize], (h & 0x1f) as usize)
                } else {
                    (1 + [0, 1, 2, 4, 0, 0, 0, 0][((h >> 2) & 7) as usize], (h & 3) as usize)
                };
                prop_assert!(len <= 5);
                covered += 1 + cnt;
                records += 1;
                pos += len;
            }
            prop_assert_eq!(pos, body.len());
            prop_assert_eq!(covered, refs.len());
            prop_assert!(records <= refs.len());
        }

        #[test]
        fn random_bytes_never_panic(body in proptest::collection::vec(any::<u8>(), 0..200), flags in 0u8..2, sl in 0u8..5, raw in any::<bool>()) {
            let mut bytes = if raw { Vec::new() } else {
                vec![b'P', b'D', b'A', b'T', 2, flags, sl, 2, 0, 0, 0, 0, 0, 0, 0, 0]
            };
            bytes.extend_from_slice(&body);
            if let Ok(d) = Pdats2Decoder::new(&bytes[..]) {
                for r in d.take(100_000) { if let Err(e) = r { prop_assert!(e.offset() <= bytes.len() as u64); } }
            }
        }

        #[test]
        fn truncation_never_reads_past_eof(refs in trace_strategy(false, 2), cut in any::<prop::sample::Index>()) {
            let out = encode(&refs, &Pdats2Options::default()).unwrap();
            let cut = cut.index(out.len() + 1);
            match decode(&out[..cut]) {
                Ok((_, back)) => prop_assert!(refs.starts_with(&back)),
                Err(e) => prop_assert!(e.offset() <= cut as u64),
            }
        }
    }
}

//! File header shared by PDATS and PDATS II (algorithms.md §2.5, **\[PROP\]**), the
//! offset-tracking byte reader used by both decoders, and the error types.
//!
//! Layout (16 bytes, then an `L`-byte UTF-8 comment, then records, then the 16-byte
//! trailer of docs/pdats.md: `PEND`, reference count, CRC-32C):
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 4 | magic `"PDAT"` |
//! | 4 | 1 | format: 1 = PDATS, 2 = PDATS II |
//! | 5 | 1 | flags: bit0 64-bit, bit1 time fields (PDATS), bit2 `DATA_DEFAULT_OFFSET` (PDATS) |
//! | 6 | 1 | log2(instruction stride) (PDATS writes 2) |
//! | 7 | 1 | zone count (PDATS II: 2, PDATS: 0) |
//! | 8 | 4 | comment length `L`, u32 BE |
//! | 12 | 4 | reserved, 0 |
//!
//! Strictness choices (ours): unknown flag bits, a non-zero reserved field, flags that
//! do not belong to the format, a wrong zone count and invalid UTF-8 in the comment are
//! all decode errors.

use std::io::{self, Read, Write};

/// Magic bytes at offset 0.
pub const MAGIC: [u8; 4] = *b"PDAT";
/// Format byte for PDATS.
pub const FORMAT_PDATS: u8 = 1;
/// Format byte for PDATS II.
pub const FORMAT_PDATS2: u8 = 2;
/// Flag bit 0: 64-bit addresses (4-byte offset codes become 8-byte).
pub const FLAG_64BIT: u8 = 1;
/// Flag bit 1: time fields present (PDATS only).
pub const FLAG_TIME: u8 = 2;
/// Flag bit 2: `DATA_DEFAULT_OFFSET` (PDATS only).
pub const FLAG_DATA_DEFAULT_OFFSET: u8 = 4;
/// Size of the fixed part of the header.
pub const HEADER_LEN: usize = 16;

/// Decoded file header (algorithms.md §2.5).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileHeader {
    /// 1 = PDATS, 2 = PDATS II.
    pub format: u8,
    /// Flag bits (`FLAG_*`).
    pub flags: u8,
    /// log2 of the instruction stride.
    pub stride_log2: u8,
    /// Zone count.
    pub zones: u8,
    /// Provenance comment.
    pub comment: String,
}

impl FileHeader {
    /// True when the 64-bit flag is set.
    pub fn wide(&self) -> bool {
        self.flags & FLAG_64BIT != 0
    }

    /// Serialise the header.
    pub fn write_to<W: Write>(&self, w: &mut W) -> Result<(), EncodeError> {
        let len = u32::try_from(self.comment.len()).map_err(|_| EncodeError::CommentTooLong)?;
        let mut b = [0u8; HEADER_LEN];
        b[0..4].copy_from_slice(&MAGIC);
        b[4] = self.format;
        b[5] = self.flags;
        b[6] = self.stride_log2;
        b[7] = self.zones;
        b[8..12].copy_from_slice(&len.to_be_bytes());
        w.write_all(&b)?;
        w.write_all(self.comment.as_bytes())?;
        Ok(())
    }

    /// Read and validate a header of the expected `format`.
    pub(crate) fn read_from<R: Read>(
        r: &mut ByteReader<R>,
        format: u8,
    ) -> Result<Self, DecodeError> {
        let mut b = [0u8; HEADER_LEN];
        for (i, slot) in b.iter_mut().enumerate() {
            *slot = r.read_u8(if i < 4 { "file magic" } else { "file header" })?;
        }
        if b[0..4] != MAGIC {
            return Err(DecodeError::corrupt(0, "bad magic, expected \"PDAT\""));
        }
        if b[4] != format {
            return Err(DecodeError::corrupt(
                4,
                format!("format byte {} (expected {format})", b[4]),
            ));
        }
        let flags = b[5];
        let allowed = if format == FORMAT_PDATS {
            FLAG_64BIT | FLAG_TIME | FLAG_DATA_DEFAULT_OFFSET
        } else {
            FLAG_64BIT
        };
        if flags & !allowed != 0 {
            return Err(DecodeError::corrupt(
                5,
                format!("flags {flags:#04x} not valid for this format"),
            ));
        }
        let stride_log2 = b[6];
        let zones = b[7];
        let want_zones = if format == FORMAT_PDATS2 { 2 } else { 0 };
        if zones != want_zones {
            return Err(DecodeError::corrupt(
                7,
                format!("zone count {zones} (expected {want_zones})"),
            ));
        }
        if b[12..16] != [0; 4] {
            return Err(DecodeError::corrupt(
                12,
                "reserved header field is not zero",
            ));
        }
        let len = u32::from_be_bytes([b[8], b[9], b[10], b[11]]) as u64;
        let start = r.offset();
        // Grown with the data actually present, so a corrupt huge length cannot trigger a
        // huge allocation.
        let mut comment = Vec::new();
        while (comment.len() as u64) < len {
            comment.push(r.read_u8("header comment")?);
        }
        let comment = String::from_utf8(comment).map_err(|e| {
            DecodeError::corrupt(
                start + e.utf8_error().valid_up_to() as u64,
                "comment is not UTF-8",
            )
        })?;
        Ok(FileHeader {
            format,
            flags,
            stride_log2,
            zones,
            comment,
        })
    }
}

/// Error decoding PDATS / PDATS II input. Every variant carries the byte offset
/// (from the start of the file) where the problem was found.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    /// The underlying reader failed.
    #[error("I/O error at byte {offset}: {source}")]
    Io {
        /// Byte offset.
        offset: u64,
        /// Cause.
        source: io::Error,
    },
    /// Input ended inside a header or record.
    #[error("truncated input at byte {offset}: unexpected end of file in {what}")]
    Truncated {
        /// Byte offset where more input was needed.
        offset: u64,
        /// What was being read.
        what: &'static str,
    },
    /// Input is structurally invalid.
    #[error("corrupt input at byte {offset}: {what}")]
    Corrupt {
        /// Byte offset of the offending byte.
        offset: u64,
        /// Description.
        what: String,
    },
}

impl DecodeError {
    pub(crate) fn corrupt(offset: u64, what: impl Into<String>) -> Self {
        DecodeError::Corrupt {
            offset,
            what: what.into(),
        }
    }

    /// Byte offset of the error.
    pub fn offset(&self) -> u64 {
        match self {
            DecodeError::Io { offset, .. }
            | DecodeError::Truncated { offset, .. }
            | DecodeError::Corrupt { offset, .. } => *offset,
        }
    }
}

/// Error encoding a reference sequence. `index` is the 0-based position of the
/// offending reference in the input sequence.
#[derive(Debug, thiserror::Error)]
pub enum EncodeError {
    /// Writing failed.
    #[error("I/O error: {0}")]
    Io(#[from] io::Error),
    /// The reference type cannot be represented in this format.
    #[error("reference {index}: type {kind} is not representable in this format")]
    UnsupportedType {
        /// Reference index.
        index: u64,
        /// Offending label.
        kind: u8,
    },
    /// Address wider than 32 bits while 64-bit mode is off.
    #[error("reference {index}: address {addr:#x} is wider than 32 bits (64-bit mode is off)")]
    AddressTooWide {
        /// Reference index.
        index: u64,
        /// Offending address.
        addr: u64,
    },
    /// PDATS II instruction offset not a multiple of the stride (algorithms.md §3.3).
    #[error("reference {index}: instruction address {addr:#x} is not stride-aligned relative to {prev:#x} (stride {stride})")]
    NotStrideAligned {
        /// Reference index.
        index: u64,
        /// Offending address.
        addr: u64,
        /// Previous instruction address.
        prev: u64,
        /// Stride in bytes.
        stride: u64,
    },
    /// PDATS time stamp decreasing, or non-zero in a file without time fields (§2.4).
    #[error("reference {index}: time {time} is invalid after time {prev} (time fields enabled: {timed})")]
    BadTime {
        /// Reference index.
        index: u64,
        /// Offending time.
        time: u64,
        /// Previous time.
        prev: u64,
        /// Whether the file carries time fields.
        timed: bool,
    },
    /// Invalid encoder configuration.
    #[error("invalid configuration: {0}")]
    Config(&'static str),
    /// Comment longer than u32::MAX bytes.
    #[error("header comment longer than 4 GiB")]
    CommentTooLong,
    /// `push` after `finish` or after an error.
    #[error("encoder already finished or failed")]
    Finished,
}

/// A byte reader that tracks the file offset.
/// The trailer of a PDATS or PDATS II file (docs/pdats.md): `"PEND"`, the reference
/// count (u64 BE) and the CRC-32C of every byte before the CRC (u32 BE).
pub const TRAILER_MAGIC: [u8; 4] = *b"PEND";
pub const TRAILER_LEN: usize = 16;

/// A writer that keeps the CRC-32C of what passes through it, for the trailer.
pub(crate) struct CheckedWriter<W> {
    pub(crate) inner: W,
    crc: streamtrace_model::checksum::Crc32c,
}

impl<W: Write> CheckedWriter<W> {
    pub(crate) fn new(inner: W) -> Self {
        CheckedWriter { inner, crc: Default::default() }
    }

    /// Write the trailer for `refs` references and return the writer.
    pub(crate) fn finish(mut self, refs: u64) -> io::Result<W> {
        let mut t = [0u8; TRAILER_LEN];
        t[..4].copy_from_slice(&TRAILER_MAGIC);
        t[4..12].copy_from_slice(&refs.to_be_bytes());
        self.crc.update(&t[..12]);
        t[12..].copy_from_slice(&self.crc.value().to_be_bytes());
        self.inner.write_all(&t)?;
        self.inner.flush()?;
        Ok(self.inner)
    }
}

impl<W: Write> Write for CheckedWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.crc.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Reads bytes with their file offset. With a trailer (`with_trailer`), the last
/// [`TRAILER_LEN`] bytes of the input are held back: records end where only they remain,
/// and [`check_trailer`](Self::check_trailer) checks them.
pub(crate) struct ByteReader<R> {
    pub(crate) inner: R,
    pub(crate) offset: u64,
    /// Bytes read from `inner` but not yet returned (trailer mode).
    ahead: std::collections::VecDeque<u8>,
    hold: usize,
    crc: streamtrace_model::checksum::Crc32c,
}

impl<R: Read> ByteReader<R> {
    pub(crate) fn new(inner: R) -> Self {
        ByteReader { inner, offset: 0, ahead: Default::default(), hold: 0, crc: Default::default() }
    }

    /// From here on the file ends with a trailer (called after the header, so that a short
    /// header is reported as such).
    pub(crate) fn expect_trailer(&mut self) {
        self.hold = TRAILER_LEN;
    }

    pub(crate) fn offset(&self) -> u64 {
        self.offset
    }

    fn read_inner(&mut self) -> Result<Option<u8>, DecodeError> {
        let mut b = [0u8; 1];
        loop {
            match self.inner.read(&mut b) {
                Ok(0) => return Ok(None),
                Ok(_) => return Ok(Some(b[0])),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(DecodeError::Io {
                        offset: self.offset + self.ahead.len() as u64,
                        source: e,
                    })
                }
            }
        }
    }

    pub(crate) fn read_u8_opt(&mut self) -> Result<Option<u8>, DecodeError> {
        while self.ahead.len() <= self.hold {
            match self.read_inner()? {
                Some(b) => self.ahead.push_back(b),
                None => break,
            }
        }
        if self.ahead.len() <= self.hold {
            return Ok(None);
        }
        let b = self.ahead.pop_front().expect("more than `hold` bytes ahead");
        self.offset += 1;
        self.crc.update(&[b]);
        Ok(Some(b))
    }

    /// A decoder's next item from the result of reading a record: a reference is counted
    /// in `refs`; the end of the records checks the trailer; an error or the end sets
    /// `failed`, so nothing follows.
    pub(crate) fn record_step<T>(
        &mut self,
        r: Result<Option<T>, DecodeError>,
        refs: &mut u64,
        failed: &mut bool,
    ) -> Option<Result<T, DecodeError>> {
        match r {
            Ok(Some(x)) => {
                *refs += 1;
                Some(Ok(x))
            }
            Ok(None) => {
                *failed = true;
                self.check_trailer(*refs).err().map(Err)
            }
            Err(e) => {
                *failed = true;
                Some(Err(e))
            }
        }
    }

    /// At the end of the records: the held-back bytes must be the trailer of a file of
    /// `refs` references whose CRC matches.
    pub(crate) fn check_trailer(&mut self, refs: u64) -> Result<(), DecodeError> {
        let t: Vec<u8> = self.ahead.iter().copied().collect();
        let at = self.offset;
        if t.len() < TRAILER_LEN || t[..4] != TRAILER_MAGIC {
            return Err(DecodeError::Truncated { offset: at + t.len() as u64, what: "the trailer (file cut short, or damaged)" });
        }
        let mut crc = self.crc;
        crc.update(&t[..12]);
        let stored = u32::from_be_bytes(t[12..16].try_into().unwrap());
        if crc.value() != stored {
            return Err(DecodeError::corrupt(
                at + 12,
                format!("file CRC {stored:08x} does not match the file ({:08x}): the file is damaged", crc.value()),
            ));
        }
        let count = u64::from_be_bytes(t[4..12].try_into().unwrap());
        if count != refs {
            return Err(DecodeError::corrupt(at + 4, format!("the trailer counts {count} references, the file holds {refs}")));
        }
        Ok(())
    }

    pub(crate) fn read_u8(&mut self, what: &'static str) -> Result<u8, DecodeError> {
        self.read_u8_opt()?.ok_or(DecodeError::Truncated {
            offset: self.offset,
            what,
        })
    }

    /// `n`-byte (0, 1, 2, 4 or 8) big-endian two's-complement value.
    pub(crate) fn read_be_signed(
        &mut self,
        n: usize,
        what: &'static str,
    ) -> Result<i64, DecodeError> {
        if n == 0 {
            return Ok(0);
        }
        let mut v: u64 = 0;
        for _ in 0..n {
            v = (v << 8) | self.read_u8(what)? as u64;
        }
        let shift = 64 - 8 * n as u32;
        Ok(((v << shift) as i64) >> shift)
    }
}

/// Write the low `n` bytes of `v` big-endian (two's complement).
pub(crate) fn write_be_signed<W: Write>(w: &mut W, v: i64, n: usize) -> io::Result<()> {
    let b = v.to_be_bytes();
    w.write_all(&b[8 - n..])
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn hdr(len: u32) -> Vec<u8> {
        let mut b = vec![b'P', b'D', b'A', b'T', 2, 0, 2, 2];
        b.extend_from_slice(&len.to_be_bytes());
        b.extend_from_slice(&[0; 4]);
        b
    }

    /// docs/pdats.md: `good` decodes, and every cut of it (at a record boundary included),
    /// every single-bit flip and an appended byte make `decodes` fail.
    pub(crate) fn assert_damage_is_an_error(good: &[u8], decodes: impl Fn(&[u8]) -> bool) {
        assert!(decodes(good));
        for cut in 0..good.len() {
            assert!(!decodes(&good[..cut]), "cut at {cut} decodes");
        }
        for at in 0..good.len() {
            for bit in 0..8 {
                let mut bad = good.to_vec();
                bad[at] ^= 1 << bit;
                assert!(!decodes(&bad), "flip at byte {at} bit {bit} decodes");
            }
        }
        let mut long = good.to_vec();
        long.push(0);
        assert!(!decodes(&long), "a byte after the trailer is accepted");
    }

    #[test]
    fn header_round_trip() {
        let h = FileHeader {
            format: 2,
            flags: 1,
            stride_log2: 1,
            zones: 2,
            comment: "from sim".into(),
        };
        let mut v = Vec::new();
        h.write_to(&mut v).unwrap();
        assert_eq!(v.len(), 16 + 8);
        let mut r = ByteReader::new(&v[..]);
        assert_eq!(FileHeader::read_from(&mut r, 2).unwrap(), h);
        assert_eq!(r.offset(), 24);
    }

    #[test]
    fn huge_comment_length_is_truncation_not_allocation() {
        let mut b = hdr(u32::MAX);
        b.extend_from_slice(b"abc");
        let e = FileHeader::read_from(&mut ByteReader::new(&b[..]), 2).unwrap_err();
        assert!(
            matches!(e, DecodeError::Truncated { offset: 19, .. }),
            "{e}"
        );
    }

    #[test]
    fn bad_utf8_and_reserved() {
        let mut b = hdr(3);
        b.extend_from_slice(&[b'a', 0xff, b'b']);
        let e = FileHeader::read_from(&mut ByteReader::new(&b[..]), 2).unwrap_err();
        assert_eq!(e.offset(), 17);
        let mut b = hdr(0);
        b[13] = 1;
        let e = FileHeader::read_from(&mut ByteReader::new(&b[..]), 2).unwrap_err();
        assert_eq!(e.offset(), 12);
        let e = FileHeader::read_from(&mut ByteReader::new(&b[..5]), 2).unwrap_err();
        assert!(matches!(e, DecodeError::Truncated { offset: 5, .. }), "{e}");
    }

    #[test]
    fn be_signed() {
        let mut v = Vec::new();
        write_be_signed(&mut v, -0x6f11, 2).unwrap();
        assert_eq!(v, [0x90, 0xef]);
        let mut r = ByteReader::new(&v[..]);
        assert_eq!(r.read_be_signed(2, "x").unwrap(), -0x6f11);
    }
}

//! Dinero `din` and Dinero IV extended `xdin` text traces (algorithms.md §1).
//!
//! `din`: one record per line, `LABEL ADDRESS`, separated by blanks or tabs; the rest
//! of the line is ignored (comments). Labels 0 read, 1 write, 2 ifetch, 3 misc escape,
//! 4 flush escape. Both fields are hexadecimal; an optional `0x`/`0X` prefix and
//! upper-case digits are accepted (Dinero IV), so a multi-digit hex label such as
//! `00` or `0x2` is accepted as long as its value is at most 4.
//!
//! `xdin` (Dinero IV `-informat D`): `r|w|i|m|c|v ADDRESS SIZE`, both hex.
//!
//! Strictness (algorithms.md §1, **\[PROP\]**): empty (or blank-only) lines, non-hex
//! digits, labels above 4, missing fields and addresses wider than 32 bits (unless
//! 64-bit mode is configured) are errors naming the 1-based line number. Addresses are
//! kept exactly: no `& ~3` masking as Dinero IV's reader does. A final line without a
//! newline is accepted; a trailing `\r` is treated as whitespace.
//!
//! The readers are iterators over a [`BufRead`] and hold only the current line.

use crate::Ref;
use std::io::{self, BufRead, Write};

/// Error reading a din/xdin trace; always names the 1-based line number.
#[derive(Debug, thiserror::Error)]
pub enum DinError {
    /// Malformed line.
    #[error("line {line}: {what}")]
    Parse {
        /// 1-based line number.
        line: u64,
        /// What is wrong.
        what: String,
    },
    /// Reading failed.
    #[error("line {line}: I/O error: {source}")]
    Io {
        /// 1-based line number being read.
        line: u64,
        /// Cause.
        source: io::Error,
    },
}

impl DinError {
    /// The 1-based line number of the error.
    pub fn line(&self) -> u64 {
        match self {
            DinError::Parse { line, .. } | DinError::Io { line, .. } => *line,
        }
    }
}

/// One line: its 1-based number and its whitespace-separated fields.
type Fields<'a> = (u64, Vec<&'a [u8]>);

/// Line source shared by the two readers.
struct Lines<R> {
    inner: R,
    buf: Vec<u8>,
    line: u64,
    done: bool,
}

impl<R: BufRead> Lines<R> {
    fn new(inner: R) -> Self {
        Lines {
            inner,
            buf: Vec::new(),
            line: 0,
            done: false,
        }
    }

    /// Next line's fields (split on ASCII whitespace), or `None` at EOF.
    fn next_fields(&mut self) -> Option<Result<Fields<'_>, DinError>> {
        if self.done {
            return None;
        }
        self.buf.clear();
        self.line += 1;
        match self.inner.read_until(b'\n', &mut self.buf) {
            Ok(0) => {
                self.done = true;
                None
            }
            Ok(_) => {
                let fields: Vec<&[u8]> = self
                    .buf
                    .split(|b| b.is_ascii_whitespace())
                    .filter(|f| !f.is_empty())
                    .collect();
                Some(Ok((self.line, fields)))
            }
            Err(e) => {
                self.done = true;
                Some(Err(DinError::Io {
                    line: self.line,
                    source: e,
                }))
            }
        }
    }
}

fn show(tok: &[u8]) -> String {
    String::from_utf8_lossy(tok).into_owned()
}

/// Parse a hexadecimal field (optional `0x`), rejecting values wider than `bits`.
fn parse_hex(tok: &[u8], field: &str, bits: u32) -> Result<u64, String> {
    let digits = tok
        .strip_prefix(b"0x")
        .or_else(|| tok.strip_prefix(b"0X"))
        .unwrap_or(tok);
    if digits.is_empty() {
        return Err(format!("{field} '{}' has no hex digits", show(tok)));
    }
    let mut v: u64 = 0;
    for &c in digits {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => {
                return Err(format!(
                    "{field} '{}' has non-hex character '{}'",
                    show(tok),
                    (c as char).escape_default()
                ))
            }
        };
        if v >> 60 != 0 {
            return Err(format!("{field} '{}' is wider than 64 bits", show(tok)));
        }
        v = (v << 4) | d as u64;
    }
    if bits < 64 && v >> bits != 0 {
        return Err(format!("{field} '{}' is wider than {bits} bits", show(tok)));
    }
    Ok(v)
}

fn addr_bits(wide: bool) -> u32 {
    if wide {
        64
    } else {
        32
    }
}

/// Parse one `din` line's fields.
fn parse_din(fields: &[&[u8]], wide: bool) -> Result<Ref, String> {
    let label = fields.first().ok_or("empty line")?;
    let addr = fields.get(1).ok_or("missing address field")?;
    let kind = parse_hex(label, "label", 64)?;
    if kind > 4 {
        return Err(format!("label '{}' is out of range 0..=4", show(label)));
    }
    let addr = parse_hex(addr, "address", addr_bits(wide))?;
    Ok(Ref {
        kind: kind as u8,
        addr,
    })
}

/// Streaming `din` reader: an iterator of [`Ref`] over a [`BufRead`].
pub struct DinReader<R> {
    lines: Lines<R>,
    wide: bool,
}

impl<R: BufRead> DinReader<R> {
    /// Reader in 32-bit mode.
    pub fn new(inner: R) -> Self {
        DinReader {
            lines: Lines::new(inner),
            wide: false,
        }
    }

    /// Enable or disable 64-bit addresses.
    pub fn with_64bit(mut self, wide: bool) -> Self {
        self.wide = wide;
        self
    }
}

impl<R: BufRead> Iterator for DinReader<R> {
    type Item = Result<Ref, DinError>;

    fn next(&mut self) -> Option<Self::Item> {
        let wide = self.wide;
        Some(match self.lines.next_fields()? {
            Err(e) => Err(e),
            Ok((line, fields)) => {
                parse_din(&fields, wide).map_err(|what| DinError::Parse { line, what })
            }
        })
    }
}

/// `din` writer: `LABEL ADDRESS\n`, both lower-case hex without prefix.
pub struct DinWriter<W> {
    inner: W,
}

impl<W: Write> DinWriter<W> {
    /// Wrap a writer.
    pub fn new(inner: W) -> Self {
        DinWriter { inner }
    }

    /// Write one record. Labels above 4 are rejected with `InvalidInput`.
    pub fn write(&mut self, r: &Ref) -> io::Result<()> {
        if r.kind > 4 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("din label {} > 4", r.kind),
            ));
        }
        writeln!(self.inner, "{} {:x}", r.kind, r.addr)
    }

    /// Flush and return the inner writer.
    pub fn into_inner(mut self) -> io::Result<W> {
        self.inner.flush()?;
        Ok(self.inner)
    }
}

/// Access type of an `xdin` record (Dinero IV `xdinfmt.c` letters).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum XKind {
    /// `r`: data read.
    Read,
    /// `w`: data write.
    Write,
    /// `i`: instruction fetch.
    Ifetch,
    /// `m`: miscellaneous access.
    Misc,
    /// `c`: copy-back.
    Copyback,
    /// `v`: invalidate.
    Invalidate,
}

impl XKind {
    /// The xdin letter.
    pub fn letter(self) -> char {
        match self {
            XKind::Read => 'r',
            XKind::Write => 'w',
            XKind::Ifetch => 'i',
            XKind::Misc => 'm',
            XKind::Copyback => 'c',
            XKind::Invalidate => 'v',
        }
    }

    fn from_token(t: &[u8]) -> Option<Self> {
        Some(match t {
            b"r" => XKind::Read,
            b"w" => XKind::Write,
            b"i" => XKind::Ifetch,
            b"m" => XKind::Misc,
            b"c" => XKind::Copyback,
            b"v" => XKind::Invalidate,
            _ => return None,
        })
    }
}

/// One `xdin` record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct XdinRef {
    /// Access type.
    pub kind: XKind,
    /// Exact address.
    pub addr: u64,
    /// Access size in bytes.
    pub size: u64,
}

fn parse_xdin(fields: &[&[u8]], wide: bool) -> Result<XdinRef, String> {
    let label = fields.first().ok_or("empty line")?;
    let addr = fields.get(1).ok_or("missing address field")?;
    let size = fields.get(2).ok_or("missing size field")?;
    let kind = XKind::from_token(label)
        .ok_or_else(|| format!("label '{}' is not one of r, w, i, m, c, v", show(label)))?;
    let addr = parse_hex(addr, "address", addr_bits(wide))?;
    let size = parse_hex(size, "size", 64)?;
    Ok(XdinRef { kind, addr, size })
}

/// Streaming `xdin` reader.
pub struct XdinReader<R> {
    lines: Lines<R>,
    wide: bool,
}

impl<R: BufRead> XdinReader<R> {
    /// Reader in 32-bit mode.
    pub fn new(inner: R) -> Self {
        XdinReader {
            lines: Lines::new(inner),
            wide: false,
        }
    }

    /// Enable or disable 64-bit addresses.
    pub fn with_64bit(mut self, wide: bool) -> Self {
        self.wide = wide;
        self
    }
}

impl<R: BufRead> Iterator for XdinReader<R> {
    type Item = Result<XdinRef, DinError>;

    fn next(&mut self) -> Option<Self::Item> {
        let wide = self.wide;
        Some(match self.lines.next_fields()? {
            Err(e) => Err(e),
            Ok((line, fields)) => {
                parse_xdin(&fields, wide).map_err(|what| DinError::Parse { line, what })
            }
        })
    }
}

/// `xdin` writer: `LETTER ADDRESS SIZE\n`, hex without prefix.
pub struct XdinWriter<W> {
    inner: W,
}

impl<W: Write> XdinWriter<W> {
    /// Wrap a writer.
    pub fn new(inner: W) -> Self {
        XdinWriter { inner }
    }

    /// Write one record.
    pub fn write(&mut self, r: &XdinRef) -> io::Result<()> {
        writeln!(self.inner, "{} {:x} {:x}", r.kind.letter(), r.addr, r.size)
    }

    /// Flush and return the inner writer.
    pub fn into_inner(mut self) -> io::Result<W> {
        self.inner.flush()?;
        Ok(self.inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn read_all(s: &str) -> Result<Vec<Ref>, DinError> {
        DinReader::new(s.as_bytes()).collect()
    }

    #[test]
    fn parses_paper_segment_with_comments_and_variants() {
        let s = "2 430d70\n2\t430D74 a comment\n0x2 0x415130\n0 1000acac\r\n00 0\n4 ffffffff";
        let v = read_all(s).unwrap();
        assert_eq!(
            v,
            vec![
                Ref::new(2, 0x430d70),
                Ref::new(2, 0x430d74),
                Ref::new(2, 0x415130),
                Ref::new(0, 0x1000acac),
                Ref::new(0, 0),
                Ref::new(4, 0xffff_ffff),
            ]
        );
    }

    #[test]
    fn no_masking() {
        assert_eq!(read_all("0 1003\n").unwrap(), vec![Ref::new(0, 0x1003)]);
    }

    fn err_of(s: &str) -> DinError {
        read_all(s).unwrap_err()
    }

    #[test]
    fn errors_name_line_and_problem() {
        let e = err_of("2 0\n\n2 4\n");
        assert_eq!(e.line(), 2);
        assert!(e.to_string().contains("empty line"), "{e}");
        let e = err_of("2 0\n   \t\n");
        assert_eq!(e.line(), 2);
        let e = err_of("2 0\n2 4\n5 8\n");
        assert_eq!(e.line(), 3);
        assert!(e.to_string().contains("out of range"), "{e}");
        let e = err_of("2 4g\n");
        assert_eq!(e.line(), 1);
        assert!(e.to_string().contains("non-hex"), "{e}");
        let e = err_of("2\n");
        assert!(e.to_string().contains("missing address"), "{e}");
        let e = err_of("2 100000000\n");
        assert!(e.to_string().contains("wider than 32 bits"), "{e}");
        let e = err_of("2 0x\n");
        assert!(e.to_string().contains("no hex digits"), "{e}");
        let e = err_of("2 10000000000000000\n");
        assert!(e.to_string().contains("wider than 64 bits"), "{e}");
        let e = err_of("x 0\n");
        assert!(e.to_string().contains("label"), "{e}");
    }

    #[test]
    fn wide_mode() {
        let v: Vec<Ref> = DinReader::new("1 123456789abcdef0\n".as_bytes())
            .with_64bit(true)
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(v, vec![Ref::new(1, 0x1234_5678_9abc_def0)]);
    }

    #[test]
    fn reader_continues_after_parse_error() {
        let mut r = DinReader::new("9 0\n2 4\n".as_bytes());
        assert!(r.next().unwrap().is_err());
        assert_eq!(r.next().unwrap().unwrap(), Ref::new(2, 4));
        assert!(r.next().is_none());
    }

    #[test]
    fn xdin_round_trip_and_errors() {
        let s = "r 1000 4\nw 0x2000 8 trailing\ni 430d70 4\nm 0 1\nc 10 20\nv ff 40\n";
        let v: Vec<XdinRef> = XdinReader::new(s.as_bytes())
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(v.len(), 6);
        assert_eq!(
            v[1],
            XdinRef {
                kind: XKind::Write,
                addr: 0x2000,
                size: 8
            }
        );
        let mut w = XdinWriter::new(Vec::new());
        for r in &v {
            w.write(r).unwrap();
        }
        let out = w.into_inner().unwrap();
        let back: Vec<XdinRef> = XdinReader::new(&out[..]).collect::<Result<_, _>>().unwrap();
        assert_eq!(back, v);
        let e = XdinReader::new("r 10\n".as_bytes())
            .next()
            .unwrap()
            .unwrap_err();
        assert!(e.to_string().contains("line 1: missing size"), "{e}");
        let e = XdinReader::new("r 10 4\nx 10 4\n".as_bytes())
            .nth(1)
            .unwrap()
            .unwrap_err();
        assert_eq!(e.line(), 2);
    }

    #[test]
    fn writer_rejects_bad_label() {
        let mut w = DinWriter::new(Vec::new());
        assert!(w.write(&Ref::new(5, 0)).is_err());
    }

    proptest! {
        #[test]
        fn din_round_trip(refs in proptest::collection::vec((0u8..=4, any::<u32>()), 0..200)) {
            let refs: Vec<Ref> = refs.into_iter().map(|(k, a)| Ref::new(k, a as u64)).collect();
            let mut w = DinWriter::new(Vec::new());
            for r in &refs { w.write(r).unwrap(); }
            let out = w.into_inner().unwrap();
            let back: Vec<Ref> = DinReader::new(&out[..]).collect::<Result<_, _>>().unwrap();
            prop_assert_eq!(back, refs);
        }

        #[test]
        fn din_reader_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            for r in DinReader::new(&bytes[..]) { let _ = r; }
            for r in XdinReader::new(&bytes[..]) { let _ = r; }
        }
    }
}

//! Laplace text formats (algorithms.md §4, after Kaplan's "Laplace: Trace Reduction" page,
//! seed 001): raw reference records, their difference encoding, SAD-reduced records and
//! their difference encoding.
//!
//! | format | fields (all numbers hexadecimal) |
//! |---|---|
//! | raw (§4.1) | `TYPE CYCLE LEN ASID VADDR` |
//! | raw, difference-encoded (§4.1) | `TYPE dCYCLE LEN ASID' SIGN \|dVADDR\|` |
//! | SAD-reduced (§4.2) | `TYPE CYCLE ITIME RTIME ASID VPN` |
//! | SAD, difference-encoded (§4.3) | `TYPE dCYCLE dITIME dRTIME ASID' SIGN \|dVPN\|` |
//!
//! `TYPE` is `r`, `w` or `i`. Time fields are differences from the previous record and must
//! not decrease; `ASID'` is 0 when the ASID is unchanged, else the new ASID (so a real ASID
//! is never 0); the address (page) difference is against the previous record of any type,
//! as a sign and a magnitude. The state before the first record is all zeros, so the first
//! record carries absolute values with `+`.
//!
//! Choices of this implementation (algorithms.md §4 **\[PROP\]** where it has one):
//! * Writers emit the canonical text: lower-case hex without `0x` and without leading zeros
//!   (`0` for zero), single spaces, `\n`. A zero address difference is `+ 0`.
//! * Readers accept any run of blanks or tabs between fields (the seed page aligns its
//!   columns), upper-case digits, leading zeros and `\r\n`, but nothing else: every line
//!   ends with a line end (the last included, see below), exactly the
//!   format's number of fields, a hex number of at most 64 bits in every numeric field, a
//!   sign of `+` or `-`. Every error names the 1-based line. After the first error a reader
//!   yields nothing more (the difference state is lost).
//! * ASID 0 is rejected everywhere (it is the "no change" code); LEN 0 is rejected.
//! * Differences are exact: an address or page difference is `|a - b|` with a sign, never
//!   wrapped, so every 64-bit value round-trips; a decoded value that leaves 0..2^64, or a
//!   time that overflows, is an error.
//! * **No trailer \[decision\]**, unlike PDATS and the binary files: the published format has
//!   no comment or closing line, so other Laplace tools would reject or misread one; our
//!   traces go through pipes (`run --refs - | sad`, `lru ... | cmp`) and from hand-written
//!   files, and a required closing line would make every such input an error unless each of
//!   `run`, `diff`, `sad`, `lru` and `opt` grew an escape hatch. Instead the reader requires
//!   every line, the last included, to end with `\n`: a file cut inside a line (the usual
//!   cut, at a buffer or block boundary) is an error naming that line. Every field is checked
//!   as above, so most damage inside a line is an error too. What it cannot see: a cut at a
//!   line boundary, and damage that leaves a valid line (a hex digit turned into another).
//!   Traces stored for later should be compressed with a checksumming compressor (gzip, xz
//!   and zstd carry a CRC or hash) or kept as PDATS / PDATS II, whose trailer detects both.

use std::io::{self, BufRead, Write};

/// Access type of a Laplace record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Access {
    /// `r`: data read (dinero label 0).
    Read,
    /// `w`: data write (dinero label 1).
    Write,
    /// `i`: instruction fetch (dinero label 2).
    Ifetch,
}

impl Access {
    /// The record letter.
    pub fn letter(self) -> u8 {
        match self {
            Access::Read => b'r',
            Access::Write => b'w',
            Access::Ifetch => b'i',
        }
    }

    /// Parse a record letter.
    pub fn from_letter(c: u8) -> Option<Self> {
        match c {
            b'r' => Some(Access::Read),
            b'w' => Some(Access::Write),
            b'i' => Some(Access::Ifetch),
            _ => None,
        }
    }

    /// The dinero label (0 read, 1 write, 2 ifetch).
    pub fn label(self) -> u8 {
        match self {
            Access::Read => crate::READ,
            Access::Write => crate::WRITE,
            Access::Ifetch => crate::IFETCH,
        }
    }

    /// From a dinero label; the escapes 3 and 4 have no Laplace type.
    pub fn from_label(label: u8) -> Option<Self> {
        match label {
            crate::READ => Some(Access::Read),
            crate::WRITE => Some(Access::Write),
            crate::IFETCH => Some(Access::Ifetch),
            _ => None,
        }
    }
}

/// A raw Laplace reference record (§4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RawRecord {
    /// Access type.
    pub kind: Access,
    /// Cycle counter at issue.
    pub cycle: u64,
    /// Access length in bytes (non-zero).
    pub len: u64,
    /// Address space identifier (non-zero).
    pub asid: u64,
    /// Virtual address.
    pub vaddr: u64,
}

/// A SAD-reduced record (§4.2): a page reference with three time stamps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SadRecord {
    /// Access type (`w` also when a dropped write was folded into this record, §5.2).
    pub kind: Access,
    /// Cycle counter at issue (or RTIME when no cycle count is available).
    pub cycle: u64,
    /// Number of ifetch references before this one in the original trace.
    pub itime: u64,
    /// 0-based index of the reference in the original, unsplit, unreduced trace.
    pub rtime: u64,
    /// Address space identifier (non-zero).
    pub asid: u64,
    /// Virtual page number.
    pub vpn: u64,
}

/// Error reading a Laplace text trace; always names the 1-based line.
#[derive(Debug, thiserror::Error)]
pub enum LaplaceError {
    /// Malformed or inconsistent line.
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
        /// 1-based line being read.
        line: u64,
        /// Cause.
        source: io::Error,
    },
}

impl LaplaceError {
    /// The 1-based line number of the error.
    pub fn line(&self) -> u64 {
        match self {
            LaplaceError::Parse { line, .. } | LaplaceError::Io { line, .. } => *line,
        }
    }
}

/// Error writing (encoding) a Laplace text trace.
#[derive(Debug, thiserror::Error)]
pub enum LaplaceWriteError {
    /// Writing failed.
    #[error("I/O error: {0}")]
    Io(#[from] io::Error),
    /// The record cannot be written in this format.
    #[error("record {index}: {what}")]
    Invalid {
        /// 0-based index of the record among those written.
        index: u64,
        /// What is wrong.
        what: String,
    },
}

// ---------------------------------------------------------------------------------------
// Text helpers.

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Append `v` as canonical lower-case hex (no prefix, no leading zeros).
fn push_hex(buf: &mut Vec<u8>, v: u64) {
    if v == 0 {
        buf.push(b'0');
        return;
    }
    let digits = (64 - v.leading_zeros()).div_ceil(4);
    for i in (0..digits).rev() {
        buf.push(HEX[((v >> (4 * i)) & 0xf) as usize]);
    }
}

/// Append a signed difference `b - a` as `SIGN MAG` (exact, no wrapping).
fn push_signed_diff(buf: &mut Vec<u8>, from: u64, to: u64) {
    if to >= from {
        buf.extend_from_slice(b"+ ");
        push_hex(buf, to - from);
    } else {
        buf.extend_from_slice(b"- ");
        push_hex(buf, from - to);
    }
}

fn show(tok: &[u8]) -> String {
    String::from_utf8_lossy(tok).into_owned()
}

/// A hex field of at most 64 bits; leading zeros and upper case are accepted.
fn parse_hex(tok: &[u8], field: &str) -> Result<u64, String> {
    if tok.is_empty() {
        return Err(format!("{field} is empty"));
    }
    let mut v: u64 = 0;
    for &c in tok {
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
    Ok(v)
}

fn parse_type(tok: &[u8]) -> Result<Access, String> {
    match tok {
        [c] => Access::from_letter(*c),
        _ => None,
    }
    .ok_or_else(|| format!("type '{}' is not one of r, w, i", show(tok)))
}

fn parse_sign(tok: &[u8]) -> Result<bool, String> {
    match tok {
        b"+" => Ok(true),
        b"-" => Ok(false),
        _ => Err(format!("sign '{}' is not + or -", show(tok))),
    }
}

/// Apply a sign and magnitude to `base` exactly.
fn apply_signed(base: u64, plus: bool, mag: u64, field: &str) -> Result<u64, String> {
    if plus {
        base.checked_add(mag)
            .ok_or_else(|| format!("{field} {base:#x} + {mag:#x} exceeds 64 bits"))
    } else {
        base.checked_sub(mag)
            .ok_or_else(|| format!("{field} {base:#x} - {mag:#x} is negative"))
    }
}

fn add_time(base: u64, delta: u64, field: &str) -> Result<u64, String> {
    base.checked_add(delta)
        .ok_or_else(|| format!("{field} {base:#x} + {delta:#x} exceeds 64 bits"))
}

/// Most fields on one line of any Laplace format (the SAD difference format).
const MAX_FIELDS: usize = 7;

/// Line source: reads one line at a time and splits it into blank-separated fields
/// without allocating per line.
struct FieldLines<R> {
    inner: R,
    buf: Vec<u8>,
    spans: [(usize, usize); MAX_FIELDS],
    line: u64,
    done: bool,
}

impl<R: BufRead> FieldLines<R> {
    fn new(inner: R) -> Self {
        FieldLines {
            inner,
            buf: Vec::with_capacity(80),
            spans: [(0, 0); MAX_FIELDS],
            line: 0,
            done: false,
        }
    }

    /// Read the next line and check it has exactly `want` fields. `Ok(None)` at EOF.
    fn next_line(&mut self, want: usize) -> Result<Option<()>, LaplaceError> {
        self.buf.clear();
        self.line += 1;
        match self.inner.read_until(b'\n', &mut self.buf) {
            Ok(0) => return Ok(None),
            Ok(_) => {}
            Err(e) => {
                return Err(LaplaceError::Io {
                    line: self.line,
                    source: e,
                })
            }
        }
        // Every line ends with `\n`, the last included: a last line without one is a file
        // cut inside a line, which could otherwise still parse as a shorter record (module
        // doc: the format has no trailer).
        let Some(b) = self.buf.strip_suffix(b"\n") else {
            let what = format!("no line end after {} bytes: the file is cut short inside this line", self.buf.len());
            return Err(self.err(what));
        };
        let body = b.strip_suffix(b"\r").unwrap_or(b);
        let mut n = 0;
        let mut i = 0;
        while i < body.len() {
            if body[i] == b' ' || body[i] == b'\t' {
                i += 1;
                continue;
            }
            let start = i;
            while i < body.len() && body[i] != b' ' && body[i] != b'\t' {
                i += 1;
            }
            if n == want {
                return Err(self.err(format!(
                    "more than {want} fields (unexpected '{}')",
                    show(&body[start..i])
                )));
            }
            self.spans[n] = (start, i);
            n += 1;
        }
        if n == 0 {
            return Err(self.err("empty line".into()));
        }
        if n < want {
            return Err(self.err(format!("{n} fields, expected {want}")));
        }
        Ok(Some(()))
    }

    fn fields(&self) -> Fields<'_> {
        Fields {
            buf: &self.buf,
            spans: &self.spans,
        }
    }

    fn err(&self, what: String) -> LaplaceError {
        LaplaceError::Parse {
            line: self.line,
            what,
        }
    }
}

/// The fields of the current line.
#[derive(Clone, Copy)]
struct Fields<'a> {
    buf: &'a [u8],
    spans: &'a [(usize, usize); MAX_FIELDS],
}

impl<'a> Fields<'a> {
    fn get(self, i: usize) -> &'a [u8] {
        let (a, b) = self.spans[i];
        &self.buf[a..b]
    }
}

/// One record format: its field count and how a line becomes a record, given the
/// difference state (unused by the absolute formats).
trait LineFormat {
    type Record;
    const FIELDS: usize;
    fn parse(&mut self, f: Fields<'_>) -> Result<Self::Record, String>;
}

/// Generic streaming reader over a [`LineFormat`].
struct Reader<R, F> {
    lines: FieldLines<R>,
    format: F,
}

impl<R: BufRead, F: LineFormat> Reader<R, F> {
    fn next_record(&mut self) -> Option<Result<F::Record, LaplaceError>> {
        if self.lines.done {
            return None;
        }
        let res = match self.lines.next_line(F::FIELDS) {
            Ok(None) => {
                self.lines.done = true;
                return None;
            }
            Ok(Some(())) => {
                let lines = &self.lines;
                self.format
                    .parse(lines.fields())
                    .map_err(|what| lines.err(what))
            }
            Err(e) => Err(e),
        };
        if res.is_err() {
            self.lines.done = true;
        }
        Some(res)
    }
}

fn nonzero_asid(asid: u64) -> Result<u64, String> {
    if asid == 0 {
        Err("ASID 0 is reserved (it means \"unchanged\" in the difference encoding)".into())
    } else {
        Ok(asid)
    }
}

// ---------------------------------------------------------------------------------------
// Raw records.

struct RawFormat;

impl LineFormat for RawFormat {
    type Record = RawRecord;
    const FIELDS: usize = 5;
    fn parse(&mut self, f: Fields<'_>) -> Result<RawRecord, String> {
        let kind = parse_type(f.get(0))?;
        let cycle = parse_hex(f.get(1), "cycle")?;
        let len = parse_hex(f.get(2), "length")?;
        if len == 0 {
            return Err("length 0".into());
        }
        let asid = nonzero_asid(parse_hex(f.get(3), "ASID")?)?;
        let vaddr = parse_hex(f.get(4), "address")?;
        Ok(RawRecord {
            kind,
            cycle,
            len,
            asid,
            vaddr,
        })
    }
}

/// Difference state of the raw format: the previous record's cycle, ASID and address.
#[derive(Clone, Copy, Debug, Default)]
struct RawDiffState {
    cycle: u64,
    asid: u64,
    vaddr: u64,
}

struct RawDiffFormat(RawDiffState);

impl LineFormat for RawDiffFormat {
    type Record = RawRecord;
    const FIELDS: usize = 6;
    fn parse(&mut self, f: Fields<'_>) -> Result<RawRecord, String> {
        let st = &mut self.0;
        let kind = parse_type(f.get(0))?;
        let cycle = add_time(st.cycle, parse_hex(f.get(1), "cycle difference")?, "cycle")?;
        let len = parse_hex(f.get(2), "length")?;
        if len == 0 {
            return Err("length 0".into());
        }
        let asid = match parse_hex(f.get(3), "ASID")? {
            0 if st.asid == 0 => return Err("ASID 0 (unchanged) but no ASID was set yet".into()),
            0 => st.asid,
            a => a,
        };
        let plus = parse_sign(f.get(4))?;
        let vaddr = apply_signed(st.vaddr, plus, parse_hex(f.get(5), "address difference")?, "address")?;
        *st = RawDiffState { cycle, asid, vaddr };
        Ok(RawRecord {
            kind,
            cycle,
            len,
            asid,
            vaddr,
        })
    }
}

/// Streaming reader of raw records `TYPE CYCLE LEN ASID VADDR`.
pub struct RawReader<R>(Reader<R, RawFormat>);

impl<R: BufRead> RawReader<R> {
    /// Wrap a buffered reader.
    pub fn new(inner: R) -> Self {
        RawReader(Reader {
            lines: FieldLines::new(inner),
            format: RawFormat,
        })
    }
}

impl<R: BufRead> Iterator for RawReader<R> {
    type Item = Result<RawRecord, LaplaceError>;
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next_record()
    }
}

/// Streaming decoder of difference-encoded raw records `TYPE dCYCLE LEN ASID' SIGN |dVADDR|`.
pub struct RawDiffReader<R>(Reader<R, RawDiffFormat>);

impl<R: BufRead> RawDiffReader<R> {
    /// Wrap a buffered reader.
    pub fn new(inner: R) -> Self {
        RawDiffReader(Reader {
            lines: FieldLines::new(inner),
            format: RawDiffFormat(RawDiffState::default()),
        })
    }
}

impl<R: BufRead> Iterator for RawDiffReader<R> {
    type Item = Result<RawRecord, LaplaceError>;
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next_record()
    }
}

/// Line-buffered writer shared by the four formats.
struct LineWriter<W> {
    inner: W,
    line: Vec<u8>,
    index: u64,
}

impl<W: Write> LineWriter<W> {
    fn new(inner: W) -> Self {
        LineWriter {
            inner,
            line: Vec::with_capacity(96),
            index: 0,
        }
    }

    fn invalid(&self, what: impl Into<String>) -> LaplaceWriteError {
        LaplaceWriteError::Invalid {
            index: self.index,
            what: what.into(),
        }
    }

    fn emit(&mut self) -> Result<(), LaplaceWriteError> {
        self.line.push(b'\n');
        self.inner.write_all(&self.line)?;
        self.line.clear();
        self.index += 1;
        Ok(())
    }

    fn into_inner(mut self) -> io::Result<W> {
        self.inner.flush()?;
        Ok(self.inner)
    }
}

fn check_raw(r: &RawRecord) -> Result<(), &'static str> {
    if r.len == 0 {
        Err("length 0")
    } else if r.asid == 0 {
        Err("ASID 0 is reserved")
    } else {
        Ok(())
    }
}

/// Writer of raw records.
pub struct RawWriter<W>(LineWriter<W>);

impl<W: Write> RawWriter<W> {
    /// Wrap a writer (give it a `BufWriter` for files).
    pub fn new(inner: W) -> Self {
        RawWriter(LineWriter::new(inner))
    }

    /// Write one record.
    pub fn write(&mut self, r: &RawRecord) -> Result<(), LaplaceWriteError> {
        let w = &mut self.0;
        check_raw(r).map_err(|e| w.invalid(e))?;
        w.line.push(r.kind.letter());
        for v in [r.cycle, r.len, r.asid, r.vaddr] {
            w.line.push(b' ');
            push_hex(&mut w.line, v);
        }
        w.emit()
    }

    /// Flush and return the inner writer.
    pub fn into_inner(self) -> io::Result<W> {
        self.0.into_inner()
    }
}

/// Difference encoder of raw records (writes `TYPE dCYCLE LEN ASID' SIGN |dVADDR|`).
pub struct RawDiffWriter<W> {
    w: LineWriter<W>,
    state: RawDiffState,
}

impl<W: Write> RawDiffWriter<W> {
    /// Wrap a writer (give it a `BufWriter` for files).
    pub fn new(inner: W) -> Self {
        RawDiffWriter {
            w: LineWriter::new(inner),
            state: RawDiffState::default(),
        }
    }

    /// Encode one record. Cycles must not decrease.
    pub fn write(&mut self, r: &RawRecord) -> Result<(), LaplaceWriteError> {
        let (w, st) = (&mut self.w, &mut self.state);
        check_raw(r).map_err(|e| w.invalid(e))?;
        if r.cycle < st.cycle {
            return Err(w.invalid(format!(
                "cycle {:#x} is before the previous record's {:#x}",
                r.cycle, st.cycle
            )));
        }
        w.line.push(r.kind.letter());
        w.line.push(b' ');
        push_hex(&mut w.line, r.cycle - st.cycle);
        w.line.push(b' ');
        push_hex(&mut w.line, r.len);
        w.line.push(b' ');
        push_hex(&mut w.line, if r.asid == st.asid { 0 } else { r.asid });
        w.line.push(b' ');
        push_signed_diff(&mut w.line, st.vaddr, r.vaddr);
        w.emit()?;
        *st = RawDiffState {
            cycle: r.cycle,
            asid: r.asid,
            vaddr: r.vaddr,
        };
        Ok(())
    }

    /// Flush and return the inner writer.
    pub fn into_inner(self) -> io::Result<W> {
        self.w.into_inner()
    }
}

// ---------------------------------------------------------------------------------------
// SAD-reduced records.

struct SadFormat;

impl LineFormat for SadFormat {
    type Record = SadRecord;
    const FIELDS: usize = 6;
    fn parse(&mut self, f: Fields<'_>) -> Result<SadRecord, String> {
        Ok(SadRecord {
            kind: parse_type(f.get(0))?,
            cycle: parse_hex(f.get(1), "cycle")?,
            itime: parse_hex(f.get(2), "instruction time")?,
            rtime: parse_hex(f.get(3), "reference time")?,
            asid: nonzero_asid(parse_hex(f.get(4), "ASID")?)?,
            vpn: parse_hex(f.get(5), "page number")?,
        })
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct SadDiffState {
    cycle: u64,
    itime: u64,
    rtime: u64,
    asid: u64,
    vpn: u64,
}

struct SadDiffFormat(SadDiffState);

impl LineFormat for SadDiffFormat {
    type Record = SadRecord;
    const FIELDS: usize = 7;
    fn parse(&mut self, f: Fields<'_>) -> Result<SadRecord, String> {
        let st = &mut self.0;
        let kind = parse_type(f.get(0))?;
        let cycle = add_time(st.cycle, parse_hex(f.get(1), "cycle difference")?, "cycle")?;
        let itime = add_time(
            st.itime,
            parse_hex(f.get(2), "instruction time difference")?,
            "instruction time",
        )?;
        let rtime = add_time(
            st.rtime,
            parse_hex(f.get(3), "reference time difference")?,
            "reference time",
        )?;
        let asid = match parse_hex(f.get(4), "ASID")? {
            0 if st.asid == 0 => return Err("ASID 0 (unchanged) but no ASID was set yet".into()),
            0 => st.asid,
            a => a,
        };
        let plus = parse_sign(f.get(5))?;
        let vpn = apply_signed(st.vpn, plus, parse_hex(f.get(6), "page difference")?, "page number")?;
        *st = SadDiffState {
            cycle,
            itime,
            rtime,
            asid,
            vpn,
        };
        Ok(SadRecord {
            kind,
            cycle,
            itime,
            rtime,
            asid,
            vpn,
        })
    }
}

/// Streaming reader of SAD-reduced records `TYPE CYCLE ITIME RTIME ASID VPN`.
pub struct SadReader<R>(Reader<R, SadFormat>);

impl<R: BufRead> SadReader<R> {
    /// Wrap a buffered reader.
    pub fn new(inner: R) -> Self {
        SadReader(Reader {
            lines: FieldLines::new(inner),
            format: SadFormat,
        })
    }
}

impl<R: BufRead> Iterator for SadReader<R> {
    type Item = Result<SadRecord, LaplaceError>;
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next_record()
    }
}

/// Streaming decoder of difference-encoded SAD records
/// `TYPE dCYCLE dITIME dRTIME ASID' SIGN |dVPN|`.
pub struct SadDiffReader<R>(Reader<R, SadDiffFormat>);

impl<R: BufRead> SadDiffReader<R> {
    /// Wrap a buffered reader.
    pub fn new(inner: R) -> Self {
        SadDiffReader(Reader {
            lines: FieldLines::new(inner),
            format: SadDiffFormat(SadDiffState::default()),
        })
    }
}

impl<R: BufRead> Iterator for SadDiffReader<R> {
    type Item = Result<SadRecord, LaplaceError>;
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next_record()
    }
}

/// Writer of SAD-reduced records.
pub struct SadWriter<W>(LineWriter<W>);

impl<W: Write> SadWriter<W> {
    /// Wrap a writer (give it a `BufWriter` for files).
    pub fn new(inner: W) -> Self {
        SadWriter(LineWriter::new(inner))
    }

    /// Write one record.
    pub fn write(&mut self, r: &SadRecord) -> Result<(), LaplaceWriteError> {
        let w = &mut self.0;
        if r.asid == 0 {
            return Err(w.invalid("ASID 0 is reserved"));
        }
        w.line.push(r.kind.letter());
        for v in [r.cycle, r.itime, r.rtime, r.asid, r.vpn] {
            w.line.push(b' ');
            push_hex(&mut w.line, v);
        }
        w.emit()
    }

    /// Flush and return the inner writer.
    pub fn into_inner(self) -> io::Result<W> {
        self.0.into_inner()
    }
}

/// Difference encoder of SAD records (writes `TYPE dCYCLE dITIME dRTIME ASID' SIGN |dVPN|`).
pub struct SadDiffWriter<W> {
    w: LineWriter<W>,
    state: SadDiffState,
}

impl<W: Write> SadDiffWriter<W> {
    /// Wrap a writer (give it a `BufWriter` for files).
    pub fn new(inner: W) -> Self {
        SadDiffWriter {
            w: LineWriter::new(inner),
            state: SadDiffState::default(),
        }
    }

    /// Encode one record. None of the three time stamps may decrease.
    pub fn write(&mut self, r: &SadRecord) -> Result<(), LaplaceWriteError> {
        let (w, st) = (&mut self.w, &mut self.state);
        if r.asid == 0 {
            return Err(w.invalid("ASID 0 is reserved"));
        }
        for (name, now, prev) in [
            ("cycle", r.cycle, st.cycle),
            ("instruction time", r.itime, st.itime),
            ("reference time", r.rtime, st.rtime),
        ] {
            if now < prev {
                return Err(w.invalid(format!(
                    "{name} {now:#x} is before the previous record's {prev:#x}"
                )));
            }
        }
        w.line.push(r.kind.letter());
        for d in [r.cycle - st.cycle, r.itime - st.itime, r.rtime - st.rtime] {
            w.line.push(b' ');
            push_hex(&mut w.line, d);
        }
        w.line.push(b' ');
        push_hex(&mut w.line, if r.asid == st.asid { 0 } else { r.asid });
        w.line.push(b' ');
        push_signed_diff(&mut w.line, st.vpn, r.vpn);
        w.emit()?;
        *st = SadDiffState {
            cycle: r.cycle,
            itime: r.itime,
            rtime: r.rtime,
            asid: r.asid,
            vpn: r.vpn,
        };
        Ok(())
    }

    /// Flush and return the inner writer.
    pub fn into_inner(self) -> io::Result<W> {
        self.w.into_inner()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(kind: Access, cycle: u64, len: u64, asid: u64, vaddr: u64) -> RawRecord {
        RawRecord {
            kind,
            cycle,
            len,
            asid,
            vaddr,
        }
    }

    /// §4.1 worked example (seed 001), raw side.
    const SEED_RAW: &str = "r 4132ff93 4 1015a 80b1d32\nw 4132ff95 2 1015a 80b1000\nr 4132ff96 4 1015a 80b2152\n";
    /// §4.1 worked example, difference-encoded side, canonical spacing.
    const SEED_DIFF: &str = "r 4132ff93 4 1015a + 80b1d32\nw 2 2 0 - d32\nr 1 4 0 + 1152\n";

    fn seed_records() -> Vec<RawRecord> {
        vec![
            raw(Access::Read, 0x4132ff93, 4, 0x1015a, 0x80b1d32),
            raw(Access::Write, 0x4132ff95, 2, 0x1015a, 0x80b1000),
            raw(Access::Read, 0x4132ff96, 4, 0x1015a, 0x80b2152),
        ]
    }

    fn write_raw(recs: &[RawRecord]) -> String {
        let mut w = RawWriter::new(Vec::new());
        recs.iter().for_each(|r| w.write(r).unwrap());
        String::from_utf8(w.into_inner().unwrap()).unwrap()
    }

    fn write_diff(recs: &[RawRecord]) -> String {
        let mut w = RawDiffWriter::new(Vec::new());
        recs.iter().for_each(|r| w.write(r).unwrap());
        String::from_utf8(w.into_inner().unwrap()).unwrap()
    }

    #[test]
    fn seed_raw_and_diff_golden() {
        let recs: Vec<RawRecord> = RawReader::new(SEED_RAW.as_bytes())
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(recs, seed_records());
        assert_eq!(write_raw(&recs), SEED_RAW);
        assert_eq!(write_diff(&recs), SEED_DIFF);
        let back: Vec<RawRecord> = RawDiffReader::new(SEED_DIFF.as_bytes())
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(back, recs);
    }

    #[test]
    fn seed_diff_as_printed_on_the_page_parses() {
        // The seed page aligns its columns with runs of blanks.
        let page = "    r 4132ff93 4 1015a + 80b1d32\n    w        2 2     0 -     d32\n    r        1 4     0 +    1152\n";
        let back: Vec<RawRecord> = RawDiffReader::new(page.as_bytes())
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(back, seed_records());
    }

    /// §4.2 example record and §4.3 example difference line.
    #[test]
    fn seed_sad_record_and_diff_golden() {
        let line = "r 123456789abcdef0 1bd8ef123 2ca4563118 9f8e7 800a3\n";
        let rec = SadReader::new(line.as_bytes()).next().unwrap().unwrap();
        assert_eq!(
            rec,
            SadRecord {
                kind: Access::Read,
                cycle: 0x1234_5678_9abc_def0,
                itime: 0x1_bd8e_f123,
                rtime: 0x2c_a456_3118,
                asid: 0x9f8e7,
                vpn: 0x800a3
            }
        );
        let mut w = SadWriter::new(Vec::new());
        w.write(&rec).unwrap();
        assert_eq!(w.into_inner().unwrap(), line.as_bytes());

        let next = SadRecord {
            cycle: rec.cycle + 0x100,
            itime: rec.itime + 0x232,
            rtime: rec.rtime + 0x25e,
            vpn: rec.vpn + 0xa3,
            ..rec
        };
        let mut w = SadDiffWriter::new(Vec::new());
        w.write(&rec).unwrap();
        w.write(&next).unwrap();
        let text = String::from_utf8(w.into_inner().unwrap()).unwrap();
        assert_eq!(
            text,
            "r 123456789abcdef0 1bd8ef123 2ca4563118 9f8e7 + 800a3\nr 100 232 25e 0 + a3\n"
        );
        let back: Vec<SadRecord> = SadDiffReader::new(text.as_bytes())
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(back, vec![rec, next]);
    }

    #[test]
    fn zero_difference_and_asid_change() {
        let recs = vec![
            raw(Access::Ifetch, 0, 4, 1, 0x8000),
            raw(Access::Read, 0, 4, 1, 0x8000),
            raw(Access::Write, 5, 1, 7, 0),
            raw(Access::Read, 5, 8, 1, u64::MAX),
        ];
        let text = write_diff(&recs);
        assert_eq!(
            text,
            "i 0 4 1 + 8000\nr 0 4 0 + 0\nw 5 1 7 - 8000\nr 0 8 1 + ffffffffffffffff\n"
        );
        let back: Vec<RawRecord> = RawDiffReader::new(text.as_bytes())
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(back, recs);
    }

    fn raw_err(text: &str) -> LaplaceError {
        RawReader::new(text.as_bytes())
            .find_map(Result::err)
            .expect("an error")
    }

    fn diff_err(text: &str) -> LaplaceError {
        RawDiffReader::new(text.as_bytes())
            .find_map(Result::err)
            .expect("an error")
    }

    #[test]
    fn reader_errors_name_the_line() {
        for (text, line, needle) in [
            ("r 1 4 1 10\n\n", 2, "empty line"),
            ("r 1 4 1 10\nx 1 4 1 10\n", 2, "type 'x'"),
            ("rw 1 4 1 10\n", 1, "type 'rw'"),
            ("r 1 4 1\n", 1, "4 fields, expected 5"),
            ("r 1 4 1 10 extra\n", 1, "unexpected 'extra'"),
            ("r 1 4 0 10\n", 1, "ASID 0"),
            ("r 1 0 1 10\n", 1, "length 0"),
            ("r 1 4 1 1g\n", 1, "non-hex"),
            ("r 1 4 1 0x10\n", 1, "non-hex character 'x'"),
            ("r 1 4 1 10000000000000000\n", 1, "wider than 64 bits"),
        ] {
            let e = raw_err(text);
            assert_eq!(e.line(), line, "{text:?}: {e}");
            assert!(e.to_string().contains(needle), "{text:?}: {e}");
        }
        for (text, line, needle) in [
            ("r 1 4 0 + 10\n", 1, "no ASID was set"),
            ("r 1 4 1 * 10\n", 1, "sign '*'"),
            ("r 1 4 1 - 10\n", 1, "negative"),
            ("r 1 4 1 + ffffffffffffffff\nr 1 4 0 + 1\n", 2, "exceeds 64 bits"),
            ("r ffffffffffffffff 4 1 + 0\nr 1 4 0 + 1\n", 2, "cycle"),
            ("r 1 4 1 + 10\nr 1 4 1 +\n", 2, "5 fields, expected 6"),
        ] {
            let e = diff_err(text);
            assert_eq!(e.line(), line, "{text:?}: {e}");
            assert!(e.to_string().contains(needle), "{text:?}: {e}");
        }
    }

    #[test]
    fn reader_stops_after_first_error() {
        let mut r = RawDiffReader::new("r 1 4 1 * 10\nr 1 4 1 + 10\n".as_bytes());
        assert!(r.next().unwrap().is_err());
        assert!(r.next().is_none());
    }

    #[test]
    fn crlf_and_a_last_line_without_newline() {
        let v: Vec<RawRecord> = RawReader::new("i 0 4 1 8000\r\ni 1 4 1 8004\r\n".as_bytes())
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(v[1].vaddr, 0x8004);
        // Cut inside the last line: "8004" cut to "80" would read as another address.
        let v: Vec<_> = RawReader::new("i 0 4 1 8000\r\ni 1 4 1 80".as_bytes()).collect();
        assert!(v[0].is_ok());
        let e = v[1].as_ref().unwrap_err().to_string();
        assert!(e.starts_with("line 2: no line end after 10 bytes: the file is cut short"), "{e}");
        assert_eq!(v.len(), 2);
    }

    #[test]
    fn writers_reject_what_they_cannot_encode() {
        let mut w = RawDiffWriter::new(Vec::new());
        w.write(&raw(Access::Read, 10, 4, 1, 0)).unwrap();
        let e = w.write(&raw(Access::Read, 9, 4, 1, 0)).unwrap_err();
        assert!(e.to_string().starts_with("record 1: cycle"), "{e}");
        let e = w.write(&raw(Access::Read, 11, 4, 0, 0)).unwrap_err();
        assert!(e.to_string().contains("ASID 0"), "{e}");
        let e = RawWriter::new(Vec::new())
            .write(&raw(Access::Read, 1, 0, 1, 0))
            .unwrap_err();
        assert!(e.to_string().contains("length 0"), "{e}");
        let mut w = SadDiffWriter::new(Vec::new());
        let rec = SadRecord {
            kind: Access::Write,
            cycle: 5,
            itime: 5,
            rtime: 5,
            asid: 1,
            vpn: 0,
        };
        w.write(&rec).unwrap();
        let e = w.write(&SadRecord { rtime: 4, ..rec }).unwrap_err();
        assert!(e.to_string().contains("reference time"), "{e}");
        let e = w.write(&SadRecord { itime: 4, ..rec }).unwrap_err();
        assert!(e.to_string().contains("instruction time"), "{e}");
    }

    #[test]
    fn push_hex_is_canonical() {
        for (v, s) in [
            (0u64, "0"),
            (1, "1"),
            (0xf, "f"),
            (0x10, "10"),
            (0xabc, "abc"),
            (u64::MAX, "ffffffffffffffff"),
        ] {
            let mut b = Vec::new();
            push_hex(&mut b, v);
            assert_eq!(b, s.as_bytes());
        }
    }
}

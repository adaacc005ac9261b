//! The trace file container of docs/trace-format.md section 12: a header naming the
//! configuration and the program, the unchanged trace-port bit stream in CRC-32C blocks, and
//! a trailer with the instruction count and bit length. [`ContainerWriter`] writes it in one
//! pass; [`ContainerReader`] reads it from chunks of any size, in memory bounded by one block.

use std::fmt;
use std::io::{self, Write};

use thiserror::Error;

use crate::checksum::{Crc32c, Fnv1a64};
use crate::config::Config;

/// `\x89STRC\r\n\x1a`: not text, and damaged by a text-mode transfer.
pub const MAGIC: [u8; 8] = *b"\x89STRC\r\n\x1a";
pub const VERSION: u16 = 1;
pub const MIN_BLOCK_SIZE: u32 = 64;
pub const MAX_BLOCK_SIZE: u32 = 65_536;
pub const DEFAULT_BLOCK_SIZE: u32 = 16_384;
pub const MAX_CONFIG_LEN: usize = 256;
pub const MAX_IDENTITY_LEN: usize = 64;
/// Trailer bytes after its zero length field: count, bit length, CRC.
const TRAILER_BYTES: usize = 8 + 8 + 4;

/// Does `prefix` (the first bytes of a file) start like a container? Needs 8 bytes.
pub fn is_container(prefix: &[u8]) -> bool {
    prefix.starts_with(&MAGIC)
}

/// What identifies the traced program (section 12.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProgramIdentity {
    /// Not recorded: matches any program.
    None,
    /// The ELF's `NT_GNU_BUILD_ID` note.
    BuildId(Vec<u8>),
    /// FNV-1a 64 of the loaded segments ([`SegmentHasher`]).
    SegmentHash(u64),
}

impl ProgramIdentity {
    fn kind(&self) -> u8 {
        match self {
            ProgramIdentity::None => 0,
            ProgramIdentity::BuildId(_) => 1,
            ProgramIdentity::SegmentHash(_) => 2,
        }
    }

    fn bytes(&self) -> Vec<u8> {
        match self {
            ProgramIdentity::None => Vec::new(),
            ProgramIdentity::BuildId(b) => b.clone(),
            ProgramIdentity::SegmentHash(h) => h.to_le_bytes().to_vec(),
        }
    }

    /// Whether a program of identity `program` may be the one this file recorded.
    pub fn matches(&self, program: &ProgramIdentity) -> bool {
        matches!(self, ProgramIdentity::None) || self == program
    }
}

impl fmt::Display for ProgramIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProgramIdentity::None => write!(f, "none"),
            ProgramIdentity::BuildId(b) => {
                write!(f, "build-id ")?;
                b.iter().try_for_each(|x| write!(f, "{x:02x}"))
            }
            ProgramIdentity::SegmentHash(h) => write!(f, "segment hash {h:016x}"),
        }
    }
}

/// The segment hash of section 12.1: feed each loaded segment in address order.
#[derive(Default)]
pub struct SegmentHasher(Fnv1a64);

impl SegmentHasher {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn segment(&mut self, base: u32, bytes: &[u8]) {
        self.0.update(&base.to_le_bytes());
        self.0.update(&(bytes.len() as u32).to_le_bytes());
        self.0.update(bytes);
    }

    pub fn identity(&self) -> ProgramIdentity {
        ProgramIdentity::SegmentHash(self.0.value())
    }
}

/// The header fields a writer chooses and a reader reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContainerHeader {
    pub block_size: u32,
    /// The canonical configuration string.
    pub config: String,
    pub identity: ProgramIdentity,
}

impl ContainerHeader {
    /// A header with the default block size for `cfg` (stored in canonical form).
    pub fn new(cfg: &Config, identity: ProgramIdentity) -> Self {
        ContainerHeader { block_size: DEFAULT_BLOCK_SIZE, config: cfg.to_string(), identity }
    }

    /// The header bytes, its CRC included; panics on fields out of range (a writer bug).
    fn to_bytes(&self) -> Vec<u8> {
        assert!((MIN_BLOCK_SIZE..=MAX_BLOCK_SIZE).contains(&self.block_size), "block size {}", self.block_size);
        assert!((1..=MAX_CONFIG_LEN).contains(&self.config.len()), "configuration length");
        let id = self.identity.bytes();
        assert!(id.len() <= MAX_IDENTITY_LEN && (id.is_empty() == (self.identity.kind() == 0)), "identity length");
        let mut h = Vec::with_capacity(24 + self.config.len() + id.len());
        h.extend_from_slice(&MAGIC);
        h.extend_from_slice(&VERSION.to_le_bytes());
        h.extend_from_slice(&0u16.to_le_bytes());
        h.extend_from_slice(&self.block_size.to_le_bytes());
        h.extend_from_slice(&(self.config.len() as u16).to_le_bytes());
        h.extend_from_slice(self.config.as_bytes());
        h.push(self.identity.kind());
        h.push(id.len() as u8);
        h.extend_from_slice(&id);
        let crc = crate::checksum::crc32c(&h);
        h.extend_from_slice(&crc.to_le_bytes());
        h
    }
}

/// The trailer's facts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContainerTrailer {
    /// Decoded instructions plus the `lost` of every OVERFLOW.
    pub instructions: u64,
    /// 8 x the bytes of the bit stream.
    pub bit_len: u64,
}

/// The CRC of a block: its stream offset, its length, its payload.
fn block_crc(stream_offset: u64, payload: &[u8]) -> u32 {
    let mut c = Crc32c::new();
    c.update(&stream_offset.to_le_bytes());
    c.update(&(payload.len() as u32).to_le_bytes());
    c.update(payload);
    c.value()
}

/// Writes a container in one pass: header now, blocks as the stream fills them, trailer at
/// [`finish`](Self::finish).
pub struct ContainerWriter<W: Write> {
    out: W,
    /// CRC over the header, continued over the trailer.
    file_crc: Crc32c,
    block: Vec<u8>,
    block_size: usize,
    stream_bytes: u64,
}

impl<W: Write> ContainerWriter<W> {
    pub fn new(mut out: W, header: &ContainerHeader) -> io::Result<Self> {
        let h = header.to_bytes();
        out.write_all(&h)?;
        let mut file_crc = Crc32c::new();
        file_crc.update(&h);
        let block_size = header.block_size as usize;
        Ok(ContainerWriter { out, file_crc, block: Vec::with_capacity(block_size), block_size, stream_bytes: 0 })
    }

    /// Append bytes of the bit stream.
    pub fn write(&mut self, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            let n = (self.block_size - self.block.len()).min(bytes.len());
            self.block.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
            if self.block.len() == self.block_size {
                self.flush_block()?;
            }
        }
        Ok(())
    }

    fn flush_block(&mut self) -> io::Result<()> {
        if self.block.is_empty() {
            return Ok(());
        }
        let offset = self.stream_bytes;
        self.out.write_all(&(self.block.len() as u32).to_le_bytes())?;
        self.out.write_all(&self.block)?;
        self.out.write_all(&block_crc(offset, &self.block).to_le_bytes())?;
        self.stream_bytes += self.block.len() as u64;
        self.block.clear();
        Ok(())
    }

    /// Write the last block and the trailer; `instructions` is what the trace stands for.
    pub fn finish(mut self, instructions: u64) -> io::Result<W> {
        self.flush_block()?;
        let mut t = Vec::with_capacity(4 + TRAILER_BYTES);
        t.extend_from_slice(&0u32.to_le_bytes());
        t.extend_from_slice(&instructions.to_le_bytes());
        t.extend_from_slice(&(self.stream_bytes * 8).to_le_bytes());
        self.file_crc.update(&t);
        t.extend_from_slice(&self.file_crc.value().to_le_bytes());
        self.out.write_all(&t)?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// The container of `stream` in memory.
pub fn to_container(header: &ContainerHeader, stream: &[u8], instructions: u64) -> Vec<u8> {
    let mut w = ContainerWriter::new(Vec::new(), header).expect("writing to memory");
    w.write(stream).expect("writing to memory");
    w.finish(instructions).expect("writing to memory")
}

/// What is wrong with a container; `offset` is the byte offset in the file.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum ContainerError {
    #[error("byte 0: not a streamtrace trace container (no magic)")]
    NotContainer,
    #[error("byte {offset}: file truncated {what}")]
    Truncated { offset: u64, what: &'static str },
    #[error("byte {offset}: {what}")]
    Invalid { offset: u64, what: String },
    #[error("byte {offset}: {bytes} byte(s) after the trailer (a second container or garbage)")]
    TrailingBytes { offset: u64, bytes: u64 },
}

impl ContainerError {
    fn invalid(offset: u64, what: impl Into<String>) -> Self {
        ContainerError::Invalid { offset, what: what.into() }
    }
}

/// One thing read from a container, in file order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ContainerItem {
    /// The header, checked (first, always).
    Header(ContainerHeader),
    /// Good bytes of the bit stream starting at `stream_offset`.
    Data { stream_offset: u64, bytes: Vec<u8> },
    /// A block whose CRC failed: `len` bytes of the stream from `stream_offset` are lost.
    Damaged { file_offset: u64, stream_offset: u64, len: u32 },
    /// The trailer, checked against the blocks read (last).
    Trailer(ContainerTrailer),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Header,
    Blocks,
    Done,
    Failed,
}

/// Reads a container pushed in chunks: [`push`](Self::push) bytes, then take items with
/// [`next_item`](Self::next_item) until it returns `Ok(None)` (more input needed); after
/// [`finish`](Self::finish), `Ok(None)` means the container was read to its end. Errors are
/// final.
pub struct ContainerReader {
    buf: Vec<u8>,
    /// Bytes of `buf` already read.
    used: usize,
    /// File offset of `buf[0]`.
    base: u64,
    finished: bool,
    state: State,
    file_crc: Crc32c,
    block_size: u32,
    stream_bytes: u64,
    /// The last block was shorter than the block size: only the trailer may follow.
    short_block_at: Option<u64>,
    /// Bytes after the trailer (counted, not kept; an error once the input is finished).
    trailing: u64,
}

impl Default for ContainerReader {
    fn default() -> Self {
        Self::new()
    }
}

impl ContainerReader {
    pub fn new() -> Self {
        ContainerReader {
            buf: Vec::new(),
            used: 0,
            base: 0,
            finished: false,
            state: State::Header,
            file_crc: Crc32c::new(),
            block_size: 0,
            stream_bytes: 0,
            short_block_at: None,
            trailing: 0,
        }
    }

    pub fn push(&mut self, bytes: &[u8]) {
        if self.state == State::Done {
            self.trailing += bytes.len() as u64;
            return;
        }
        if self.used > 0 && self.used * 2 >= self.buf.len() {
            self.buf.drain(..self.used);
            self.base += self.used as u64;
            self.used = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// No more input comes.
    pub fn finish(&mut self) {
        self.finished = true;
    }

    /// Bytes of the bit stream read so far (good and damaged blocks).
    pub fn stream_bytes(&self) -> u64 {
        self.stream_bytes
    }

    fn avail(&self) -> &[u8] {
        &self.buf[self.used..]
    }

    fn offset(&self) -> u64 {
        self.base + self.used as u64
    }

    /// `Ok(true)` when `n` bytes are buffered; `Ok(false)`: push more; an error once the
    /// input is finished.
    fn need(&self, n: usize, what: &'static str) -> Result<bool, ContainerError> {
        if self.avail().len() >= n {
            Ok(true)
        } else if self.finished {
            Err(ContainerError::Truncated { offset: self.base + self.buf.len() as u64, what })
        } else {
            Ok(false)
        }
    }

    pub fn next_item(&mut self) -> Result<Option<ContainerItem>, ContainerError> {
        let r = match self.state {
            State::Header => self.header(),
            State::Blocks => self.block(),
            // Reported once all of them are counted, so the error does not depend on chunking.
            State::Done if self.finished && self.trailing > 0 => {
                Err(ContainerError::TrailingBytes { offset: self.offset(), bytes: self.trailing })
            }
            State::Done => Ok(None),
            State::Failed => Ok(None),
        };
        if r.is_err() {
            self.state = State::Failed;
        }
        r
    }

    fn header(&mut self) -> Result<Option<ContainerItem>, ContainerError> {
        let a = self.avail();
        let magic_seen = a.len().min(MAGIC.len());
        if a[..magic_seen] != MAGIC[..magic_seen] || (self.finished && magic_seen < MAGIC.len()) {
            return Err(ContainerError::NotContainer);
        }
        const FIXED: usize = 18;
        if !self.need(FIXED, "inside the header")? {
            return Ok(None);
        }
        let a = self.avail();
        let u16_at = |i: usize| u16::from_le_bytes([a[i], a[i + 1]]);
        let version = u16_at(8);
        if version != VERSION {
            return Err(ContainerError::invalid(8, format!("container version {version}; this reader knows {VERSION}")));
        }
        let flags = u16_at(10);
        if flags != 0 {
            return Err(ContainerError::invalid(10, format!("unknown header flags {flags:#06x}")));
        }
        let block_size = u32::from_le_bytes(a[12..16].try_into().unwrap());
        if !(MIN_BLOCK_SIZE..=MAX_BLOCK_SIZE).contains(&block_size) {
            return Err(ContainerError::invalid(
                12,
                format!("block size {block_size} outside {MIN_BLOCK_SIZE}..={MAX_BLOCK_SIZE}"),
            ));
        }
        let n = u16_at(16) as usize;
        if !(1..=MAX_CONFIG_LEN).contains(&n) {
            return Err(ContainerError::invalid(16, format!("configuration length {n} outside 1..={MAX_CONFIG_LEN}")));
        }
        if !self.need(FIXED + n + 2, "inside the header")? {
            return Ok(None);
        }
        let a = self.avail();
        let (kind, m) = (a[FIXED + n], a[FIXED + n + 1] as usize);
        let id_at = (FIXED + n) as u64;
        match kind {
            0 if m != 0 => return Err(ContainerError::invalid(id_at + 1, format!("identity of kind none with {m} bytes"))),
            1 if m == 0 || m > MAX_IDENTITY_LEN => {
                return Err(ContainerError::invalid(id_at + 1, format!("build-id length {m} outside 1..={MAX_IDENTITY_LEN}")))
            }
            2 if m != 8 => return Err(ContainerError::invalid(id_at + 1, format!("segment hash of {m} bytes, not 8"))),
            0..=2 => {}
            k => return Err(ContainerError::invalid(id_at, format!("unknown program identity kind {k}"))),
        }
        let len = FIXED + n + 2 + m + 4;
        if !self.need(len, "inside the header")? {
            return Ok(None);
        }
        let a = self.avail();
        let stored = u32::from_le_bytes(a[len - 4..len].try_into().unwrap());
        let crc = crate::checksum::crc32c(&a[..len - 4]);
        if stored != crc {
            return Err(ContainerError::invalid(
                (len - 4) as u64,
                format!("header CRC {stored:08x} does not match the header ({crc:08x}): the header is damaged"),
            ));
        }
        let config = std::str::from_utf8(&a[FIXED..FIXED + n])
            .map_err(|_| ContainerError::invalid(FIXED as u64, "configuration is not text"))?
            .to_string();
        config
            .parse::<Config>()
            .map_err(|e| ContainerError::invalid(FIXED as u64, format!("bad configuration '{config}': {e}")))?;
        let id = &a[FIXED + n + 2..FIXED + n + 2 + m];
        let identity = match kind {
            0 => ProgramIdentity::None,
            1 => ProgramIdentity::BuildId(id.to_vec()),
            _ => ProgramIdentity::SegmentHash(u64::from_le_bytes(id.try_into().unwrap())),
        };
        let mut file_crc = Crc32c::new();
        file_crc.update(&a[..len]);
        self.file_crc = file_crc;
        self.used += len;
        self.block_size = block_size;
        self.state = State::Blocks;
        Ok(Some(ContainerItem::Header(ContainerHeader { block_size, config, identity })))
    }

    fn block(&mut self) -> Result<Option<ContainerItem>, ContainerError> {
        if !self.need(4, "before the trailer (no trailer)")? {
            return Ok(None);
        }
        let at = self.offset();
        let a = self.avail();
        let len = u32::from_le_bytes(a[..4].try_into().unwrap());
        if len == 0 {
            return self.trailer();
        }
        if len > self.block_size {
            return Err(ContainerError::invalid(at, format!("block length {len} above the block size {}", self.block_size)));
        }
        if let Some(short) = self.short_block_at {
            return Err(ContainerError::invalid(
                at,
                format!("a block follows the short block at byte {short}; only the last block may be short"),
            ));
        }
        let total = 4 + len as usize + 4;
        if !self.need(total, "inside a block (no trailer)")? {
            return Ok(None);
        }
        let a = self.avail();
        let payload = &a[4..4 + len as usize];
        let stored = u32::from_le_bytes(a[total - 4..total].try_into().unwrap());
        let stream_offset = self.stream_bytes;
        let item = if block_crc(stream_offset, payload) == stored {
            ContainerItem::Data { stream_offset, bytes: payload.to_vec() }
        } else {
            ContainerItem::Damaged { file_offset: at, stream_offset, len }
        };
        if len < self.block_size {
            self.short_block_at = Some(at);
        }
        self.used += total;
        self.stream_bytes += len as u64;
        Ok(Some(item))
    }

    fn trailer(&mut self) -> Result<Option<ContainerItem>, ContainerError> {
        if !self.need(4 + TRAILER_BYTES, "inside the trailer")? {
            return Ok(None);
        }
        let at = self.offset();
        let a = self.avail();
        let instructions = u64::from_le_bytes(a[4..12].try_into().unwrap());
        let bit_len = u64::from_le_bytes(a[12..20].try_into().unwrap());
        let stored = u32::from_le_bytes(a[20..24].try_into().unwrap());
        let mut crc = self.file_crc;
        crc.update(&a[..20]);
        if crc.value() != stored {
            return Err(ContainerError::invalid(
                at + 20,
                format!("file CRC {stored:08x} does not match header and trailer ({:08x})", crc.value()),
            ));
        }
        if bit_len != self.stream_bytes * 8 {
            return Err(ContainerError::invalid(
                at + 12,
                format!("trailer says {bit_len} bits, the blocks hold {} (a block is missing or extra)", self.stream_bytes * 8),
            ));
        }
        self.used += 4 + TRAILER_BYTES;
        self.state = State::Done;
        self.trailing = self.avail().len() as u64;
        Ok(Some(ContainerItem::Trailer(ContainerTrailer { instructions, bit_len })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(block_size: u32) -> ContainerHeader {
        ContainerHeader {
            block_size,
            config: "rsdc-32x4-128".into(),
            identity: ProgramIdentity::BuildId(vec![0xde, 0xad, 0xbe, 0xef]),
        }
    }

    fn stream(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 31 + 7) as u8).collect()
    }

    /// Everything a reader yields for `file` pushed in chunks of `chunk` bytes.
    fn read_all(file: &[u8], chunk: usize) -> Result<Vec<ContainerItem>, ContainerError> {
        let mut r = ContainerReader::new();
        let mut items = Vec::new();
        for part in file.chunks(chunk.max(1)) {
            r.push(part);
            while let Some(it) = r.next_item()? {
                items.push(it);
            }
        }
        r.finish();
        while let Some(it) = r.next_item()? {
            items.push(it);
        }
        Ok(items)
    }

    fn data_of(items: &[ContainerItem]) -> Vec<u8> {
        let mut out = Vec::new();
        for it in items {
            if let ContainerItem::Data { stream_offset, bytes } = it {
                assert_eq!(*stream_offset, out.len() as u64);
                out.extend_from_slice(bytes);
            }
        }
        out
    }

    #[test]
    fn round_trip_any_chunking() {
        for len in [0usize, 1, 63, 64, 65, 200, 1000] {
            let s = stream(len);
            let file = to_container(&header(64), &s, 12345);
            for chunk in [1, 7, 64, 5000] {
                let items = read_all(&file, chunk).unwrap();
                assert_eq!(items[0], ContainerItem::Header(header(64)));
                assert_eq!(data_of(&items), s, "len {len} chunk {chunk}");
                assert_eq!(
                    items.last(),
                    Some(&ContainerItem::Trailer(ContainerTrailer { instructions: 12345, bit_len: len as u64 * 8 }))
                );
                assert_eq!(items.len(), 2 + len.div_ceil(64));
            }
        }
    }

    #[test]
    fn layout_is_the_documented_one() {
        let h = ContainerHeader { block_size: 64, config: "fbase".into(), identity: ProgramIdentity::SegmentHash(7) };
        let file = to_container(&h, &[0xAB, 0xCD], 3);
        assert_eq!(&file[..8], &MAGIC);
        assert_eq!(&file[8..18], &[1, 0, 0, 0, 64, 0, 0, 0, 5, 0]);
        assert_eq!(&file[18..23], b"fbase");
        assert_eq!(&file[23..25], &[2, 8]);
        assert_eq!(&file[25..33], &7u64.to_le_bytes());
        let hlen = 37;
        assert_eq!(&file[33..37], &crate::checksum::crc32c(&file[..33]).to_le_bytes());
        assert_eq!(&file[hlen..hlen + 6], &[2, 0, 0, 0, 0xAB, 0xCD]);
        let mut c = Crc32c::new();
        c.update(&0u64.to_le_bytes());
        c.update(&2u32.to_le_bytes());
        c.update(&[0xAB, 0xCD]);
        assert_eq!(&file[hlen + 6..hlen + 10], &c.value().to_le_bytes());
        let t = hlen + 10;
        assert_eq!(&file[t..t + 20], &[0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 16, 0, 0, 0, 0, 0, 0, 0]);
        let mut c = Crc32c::new();
        c.update(&file[..hlen]);
        c.update(&file[t..t + 20]);
        assert_eq!(&file[t + 20..], &c.value().to_le_bytes());
    }

    /// Every single-bit flip is noticed: as a damaged block, or an error, never a clean read
    /// of other data.
    #[test]
    fn every_bit_flip_is_noticed() {
        let s = stream(300);
        let file = to_container(&header(64), &s, 99);
        for byte in 0..file.len() {
            for bit in 0..8 {
                let mut bad = file.clone();
                bad[byte] ^= 1 << bit;
                match read_all(&bad, 50) {
                    Err(_) => {}
                    Ok(items) => {
                        let damaged: Vec<_> = items
                            .iter()
                            .filter_map(|it| match it {
                                ContainerItem::Damaged { file_offset, .. } => Some(*file_offset),
                                _ => None,
                            })
                            .collect();
                        assert_eq!(damaged.len(), 1, "flip at byte {byte} bit {bit}");
                        // The damaged block is the one holding the flipped byte.
                        assert!(damaged[0] <= byte as u64 && byte as u64 <= damaged[0] + 4 + 64 + 4);
                    }
                }
            }
        }
    }

    #[test]
    fn truncation_anywhere_is_an_error() {
        let file = to_container(&header(64), &stream(200), 5);
        for cut in 0..file.len() {
            let e = read_all(&file[..cut], 13).unwrap_err();
            match (cut, e) {
                (0..=7, ContainerError::NotContainer) => {}
                (8.., ContainerError::Truncated { offset, .. }) => assert_eq!(offset, cut as u64),
                (_, e) => panic!("cut {cut}: {e}"),
            }
        }
    }

    #[test]
    fn trailing_bytes_and_concatenation_are_errors() {
        let file = to_container(&header(64), &stream(100), 5);
        let mut twice = file.clone();
        twice.extend_from_slice(&file);
        assert_eq!(
            read_all(&twice, 4096).unwrap_err(),
            ContainerError::TrailingBytes { offset: file.len() as u64, bytes: file.len() as u64 }
        );
        let mut one = file.clone();
        one.push(0);
        assert!(matches!(read_all(&one, 1).unwrap_err(), ContainerError::TrailingBytes { bytes: 1, .. }));
    }

    #[test]
    fn dropped_or_swapped_blocks_are_errors() {
        let s = stream(64 * 3);
        let file = to_container(&header(64), &s, 5);
        let hlen = file.len() - 3 * 72 - 24;
        // Drop the second block: its neighbour's CRC no longer matches its stream offset.
        let mut dropped = file[..hlen + 72].to_vec();
        dropped.extend_from_slice(&file[hlen + 144..]);
        let items = read_all(&dropped, 4096).unwrap_err();
        assert!(matches!(items, ContainerError::Invalid { .. }), "{items}");
        let mut swapped = file.clone();
        swapped[hlen..hlen + 72].copy_from_slice(&file[hlen + 72..hlen + 144]);
        swapped[hlen + 72..hlen + 144].copy_from_slice(&file[hlen..hlen + 72]);
        let items = read_all(&swapped, 4096).unwrap();
        let damaged = items.iter().filter(|i| matches!(i, ContainerItem::Damaged { .. })).count();
        assert_eq!(damaged, 2);
    }

    #[test]
    fn header_fields_are_checked() {
        let file = to_container(&header(64), &stream(10), 1);
        let mut v2 = file.clone();
        v2[8] = 2;
        assert!(read_all(&v2, 4096).unwrap_err().to_string().contains("version 2"));
        assert!(matches!(read_all(b"hello world, no magic", 4096), Err(ContainerError::NotContainer)));
        let bad_cfg = ContainerHeader { config: "rsdc-24x4-128".into(), ..header(64) };
        let file = to_container(&bad_cfg, &[], 0);
        let e = read_all(&file, 4096).unwrap_err();
        assert!(e.to_string().starts_with("byte 18: bad configuration 'rsdc-24x4-128'"), "{e}");
    }

    #[test]
    fn identities_match() {
        let a = ProgramIdentity::SegmentHash(1);
        assert!(a.matches(&a));
        assert!(!a.matches(&ProgramIdentity::SegmentHash(2)));
        assert!(ProgramIdentity::None.matches(&a));
        assert_eq!(ProgramIdentity::BuildId(vec![0xab, 1]).to_string(), "build-id ab01");
    }
}

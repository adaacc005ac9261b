//! The CITCAT files (docs/citcat.md sections 3, 4.2, 4.3 and 6): the cache-filtered address
//! trace (CAT), the initial machine state (IMS), the asynchronous event schedule (AES) and
//! the instruction trace. Readers check every field and name the byte offset of what is
//! wrong; they never panic on untrusted bytes. Every file ends with a trailer (count +
//! CRC-32C, docs/citcat.md 8), checked before the body is read.

use crate::bytes::{put_trailer, split_trailer, trailer, ByteReader, TRAILER_LEN};
use streamtrace_model::checksum::{Crc32c, Fnv1a64};
use streamtrace_sim::DUMP_REGISTERS;

pub const CAT_MAGIC: &[u8; 8] = b"STCAT1\0\0";
pub const IMS_MAGIC: &[u8; 8] = b"STIMS1\0\0";
pub const AES_MAGIC: &[u8; 8] = b"STAES1\0\0";
pub const ITR_MAGIC: &[u8; 8] = b"STITR1\0\0";
/// The tag of every CITCAT file's trailer.
pub const TRAILER_TAG: [u8; 4] = *b"CEND";

/// CAT record kinds.
pub const IFILL: u8 = 1;
pub const DFILL: u8 = 2;
pub const WRITE: u8 = 3;
pub const UNC_READ: u8 = 4;
pub const UNC_WRITE: u8 = 5;
pub const DMA_WRITE: u8 = 6;
pub const MAGIC: u8 = 8;
pub const MONITOR: u8 = 9;
pub const COUNTER: u8 = 10;

/// CAT record flags.
pub const FLAG_DEVICE: u16 = 1;
pub const FLAG_PRIVILEGED: u16 = 2;
/// Why a `MONITOR` sample was taken (flags bits 8..15).
pub const MON_IRQ: u8 = 1;
pub const MON_DMA: u8 = 2;
pub const MON_END: u8 = 3;

/// `MAGIC` address of the BEGIN marker (the trace-start signal).
pub const MAGIC_BEGIN: u32 = 0;

/// The IRQ vector, the only vector an INT event names.
pub const IRQ_VECTOR: u8 = 0x18;

/// The record header: kind, size, flags, address, cycle.
const CAT_RECORD_HEADER: usize = 16;

/// Short name of a record kind (reports and errors).
pub fn kind_name(kind: u8) -> &'static str {
    match kind {
        IFILL => "IFILL",
        DFILL => "DFILL",
        WRITE => "WRITE",
        UNC_READ => "UNC_READ",
        UNC_WRITE => "UNC_WRITE",
        DMA_WRITE => "DMA_WRITE",
        MAGIC => "MAGIC",
        MONITOR => "MONITOR",
        COUNTER => "COUNTER",
        _ => "unknown",
    }
}

/// Records the CPU originates (compared by V2).
pub fn is_cpu_record(kind: u8) -> bool {
    matches!(kind, IFILL | DFILL | WRITE | UNC_READ | UNC_WRITE | COUNTER)
}

/// What is wrong with a CITCAT file, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file} file, byte {offset}: {what}")]
pub struct FileError {
    pub file: &'static str,
    pub offset: usize,
    pub what: String,
}

fn magic(file: &'static str, r: &mut ByteReader, want: &[u8; 8]) -> Result<(), FileError> {
    let got = r.take(8, "magic").map_err(|what| FileError { file, offset: 0, what })?;
    if got != want {
        return Err(FileError {
            file,
            offset: 0,
            what: format!("bad magic {:?} (expected {:?})", String::from_utf8_lossy(got), String::from_utf8_lossy(want)),
        });
    }
    Ok(())
}

/// Reads a fixed-width little-endian value, naming the offset where it started.
fn val(file: &'static str, r: &mut ByteReader, w: usize, what: &str) -> Result<u64, FileError> {
    let start = r.pos;
    r.value(w, what).map_err(|what| FileError { file, offset: start, what })
}

fn finished(file: &'static str, r: &ByteReader) -> Result<(), FileError> {
    if r.left() != 0 {
        return Err(FileError { file, offset: r.pos, what: format!("{} bytes between the end and the trailer", r.left()) });
    }
    Ok(())
}

/// Checks the magic, then the trailer (so that a cut or damaged file is reported as such
/// before any field is used): a reader of the body after the magic, and the trailer's count.
fn open<'a>(file: &'static str, bytes: &'a [u8], want: &[u8; 8]) -> Result<(ByteReader<'a>, u64), FileError> {
    magic(file, &mut ByteReader::new(bytes), want)?;
    let (body, count) = split_trailer(bytes, TRAILER_TAG, want.len()).map_err(|(offset, what)| FileError { file, offset, what })?;
    let mut r = ByteReader::new(body);
    r.pos = want.len();
    Ok((r, count))
}

/// The trailer's count must equal what the body holds (`have` of `what`).
fn check_count(file: &'static str, r: &ByteReader, count: u64, have: usize, what: &str) -> Result<(), FileError> {
    if count != have as u64 {
        // The count field sits 4 bytes into the trailer, which starts where the body ends.
        return Err(FileError { file, offset: r.bytes.len() + 4, what: format!("the trailer counts {count} {what}, the file holds {have}") });
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// CAT

/// One bus record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatRecord {
    pub kind: u8,
    pub flags: u16,
    pub addr: u32,
    pub cycle: u64,
    pub data: Vec<u8>,
}

impl CatRecord {
    /// A `MONITOR` sample of boundary `(tbc, pc)` taken for `reason`.
    pub fn monitor(reason: u8, tbc: u64, pc: u32, cycle: u64) -> CatRecord {
        CatRecord { kind: MONITOR, flags: (reason as u16) << 8, addr: pc, cycle, data: tbc.to_le_bytes().to_vec() }
    }

    /// `MAGIC BEGIN`, the trace-start signal.
    pub fn begin(privileged: bool, cycle: u64) -> CatRecord {
        let flags = if privileged { FLAG_PRIVILEGED } else { 0 };
        CatRecord { kind: MAGIC, flags, addr: MAGIC_BEGIN, cycle, data: vec![0; 4] }
    }

    /// A DMA burst as it landed.
    pub fn dma_write(addr: u32, cycle: u64, data: &[u8]) -> CatRecord {
        CatRecord { kind: DMA_WRITE, flags: 0, addr, cycle, data: data.to_vec() }
    }

    /// The reason of a `MONITOR` record.
    pub fn reason(&self) -> u8 {
        (self.flags >> 8) as u8
    }

    /// The data as a little-endian number (up to 8 bytes).
    pub fn value(&self) -> u64 {
        let mut a = [0u8; 8];
        let n = self.data.len().min(8);
        a[..n].copy_from_slice(&self.data[..n]);
        u64::from_le_bytes(a)
    }

    /// Bytes of the record in the file.
    pub fn file_bytes(&self) -> usize {
        CAT_RECORD_HEADER + self.data.len()
    }

    /// The fields V2 compares (everything but the cycle).
    pub fn same_as(&self, o: &CatRecord) -> bool {
        self.kind == o.kind && self.flags == o.flags && self.addr == o.addr && self.data == o.data
    }
}

impl std::fmt::Display for CatRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} addr {:#010x} flags {:#06x} size {} cycle {}", kind_name(self.kind), self.addr, self.flags, self.data.len(), self.cycle)?;
        if self.data.len() <= 8 {
            write!(f, " value {:#x}", self.value())?;
        }
        Ok(())
    }
}

/// A whole CAT: the monitor's cache policy and the records in time order.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Cat {
    pub line_bytes: u8,
    pub write_back: bool,
    pub write_allocate: bool,
    pub records: Vec<CatRecord>,
}

impl Cat {
    pub const HEADER_BYTES: usize = 16;

    /// Bytes of the content: the file without its trailer (the size reports print,
    /// docs/citcat.md 8).
    pub fn file_bytes(&self) -> usize {
        Self::HEADER_BYTES + self.records.iter().map(CatRecord::file_bytes).sum::<usize>()
    }

    /// The file: content and trailer.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut o = self.content_bytes();
        put_trailer(&mut o, TRAILER_TAG, self.records.len() as u64);
        o
    }

    /// The file without its trailer.
    pub fn content_bytes(&self) -> Vec<u8> {
        let mut o = Vec::with_capacity(self.file_bytes() + TRAILER_LEN);
        o.extend_from_slice(CAT_MAGIC);
        o.push(self.line_bytes);
        o.push(self.write_back as u8 | (self.write_allocate as u8) << 1);
        o.extend_from_slice(&0u16.to_le_bytes());
        o.extend_from_slice(&(self.records.len() as u32).to_le_bytes());
        for r in &self.records {
            o.push(r.kind);
            o.push(r.data.len() as u8);
            o.extend_from_slice(&r.flags.to_le_bytes());
            o.extend_from_slice(&r.addr.to_le_bytes());
            o.extend_from_slice(&r.cycle.to_le_bytes());
            o.extend_from_slice(&r.data);
        }
        o
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Cat, FileError> {
        const F: &str = "CAT";
        let (mut r, trailer_count) = open(F, bytes, CAT_MAGIC)?;
        let line_bytes = val(F, &mut r, 1, "line size")? as u8;
        if !line_bytes.is_power_of_two() || line_bytes < 4 {
            return Err(FileError { file: F, offset: 8, what: format!("line size {line_bytes} is not a power of two from 4 to 128") });
        }
        let flags = val(F, &mut r, 1, "flags")? as u8;
        if flags & !3 != 0 {
            return Err(FileError { file: F, offset: 9, what: format!("unknown flag bits {flags:#04x}") });
        }
        if val(F, &mut r, 2, "reserved field")? != 0 {
            return Err(FileError { file: F, offset: 10, what: "reserved field is not 0".into() });
        }
        let count = val(F, &mut r, 4, "record count")? as usize;
        // Every record takes at least its header: bound the allocation by the input.
        if count > r.left() / CAT_RECORD_HEADER {
            return Err(FileError { file: F, offset: 12, what: format!("record count {count} exceeds what the {} bytes left can hold", r.left()) });
        }
        let mut records = Vec::with_capacity(count);
        for i in 0..count {
            let start = r.pos;
            let bad = |what: String| FileError { file: F, offset: start, what: format!("record {i}: {what}") };
            let head = r.take(CAT_RECORD_HEADER, "record header").map_err(bad)?;
            let kind = head[0];
            let size = head[1] as usize;
            let flags = u16::from_le_bytes([head[2], head[3]]);
            let addr = u32::from_le_bytes(head[4..8].try_into().expect("4 bytes"));
            let cycle = u64::from_le_bytes(head[8..16].try_into().expect("8 bytes"));
            let size_ok = match kind {
                IFILL | DFILL => size == line_bytes as usize,
                WRITE | DMA_WRITE => size >= 1,
                UNC_READ | UNC_WRITE => matches!(size, 1 | 2 | 4),
                MAGIC => size == 4,
                MONITOR => size == 8,
                COUNTER => size == 4,
                _ => return Err(bad(format!("unknown kind {kind}"))),
            };
            if !size_ok {
                return Err(bad(format!("{} with size {size}", kind_name(kind))));
            }
            if kind == MONITOR && !matches!((flags >> 8) as u8, MON_IRQ | MON_DMA | MON_END) {
                return Err(bad(format!("MONITOR with unknown reason {}", flags >> 8)));
            }
            let data = r.take(size, "record data").map_err(bad)?.to_vec();
            records.push(CatRecord { kind, flags, addr, cycle, data });
        }
        finished(F, &r)?;
        check_count(F, &r, trailer_count, records.len(), "records")?;
        Ok(Cat { line_bytes, write_back: flags & 1 != 0, write_allocate: flags & 2 != 0, records })
    }
}

// ---------------------------------------------------------------------------------------
// IMS

/// The initial machine state: the register dump and the first-touch memory image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ims {
    pub registers: [u64; DUMP_REGISTERS],
    /// `(address, bytes)` in increasing address order, non-overlapping, non-adjacent.
    pub runs: Vec<(u32, Vec<u8>)>,
}

impl Ims {
    /// Bytes of memory image.
    pub fn image_bytes(&self) -> usize {
        self.runs.iter().map(|(_, b)| b.len()).sum()
    }

    /// The file: content and trailer.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut o = self.content_bytes();
        put_trailer(&mut o, TRAILER_TAG, self.runs.len() as u64);
        o
    }

    /// The file without its trailer (the size reports print).
    pub fn content_bytes(&self) -> Vec<u8> {
        let mut o = Vec::with_capacity(16 + 8 * DUMP_REGISTERS + self.image_bytes() + 8 * self.runs.len() + TRAILER_LEN);
        o.extend_from_slice(IMS_MAGIC);
        o.extend_from_slice(&(DUMP_REGISTERS as u32).to_le_bytes());
        for (i, &v) in self.registers.iter().enumerate() {
            if i == DUMP_REGISTERS - 1 {
                o.extend_from_slice(&v.to_le_bytes());
            } else {
                o.extend_from_slice(&(v as u32).to_le_bytes());
            }
        }
        o.extend_from_slice(&(self.runs.len() as u32).to_le_bytes());
        for (a, b) in &self.runs {
            o.extend_from_slice(&a.to_le_bytes());
            o.extend_from_slice(&(b.len() as u32).to_le_bytes());
            o.extend_from_slice(b);
        }
        o
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Ims, FileError> {
        const F: &str = "IMS";
        let (mut r, trailer_count) = open(F, bytes, IMS_MAGIC)?;
        let n = val(F, &mut r, 4, "register count")?;
        if n != DUMP_REGISTERS as u64 {
            return Err(FileError { file: F, offset: 8, what: format!("register count {n} (expected {DUMP_REGISTERS})") });
        }
        let mut registers = [0u64; DUMP_REGISTERS];
        for (i, reg) in registers.iter_mut().enumerate() {
            let w = if i == DUMP_REGISTERS - 1 { 8 } else { 4 };
            *reg = val(F, &mut r, w, "registers")?;
        }
        let count_at = r.pos;
        let count = val(F, &mut r, 4, "run count")? as usize;
        if count > r.left() / 9 {
            return Err(FileError { file: F, offset: count_at, what: format!("run count {count} exceeds what the {} bytes left can hold", r.left()) });
        }
        let mut runs: Vec<(u32, Vec<u8>)> = Vec::with_capacity(count);
        let mut end_of_last: Option<u64> = None;
        for i in 0..count {
            let start = r.pos;
            let addr = val(F, &mut r, 4, "run address")? as u32;
            let len = val(F, &mut r, 4, "run length")? as usize;
            let bad = |what: String| FileError { file: F, offset: start, what: format!("run {i} at {addr:#010x}: {what}") };
            if len == 0 {
                return Err(bad("empty run".into()));
            }
            if addr as u64 + len as u64 > 1 << 32 {
                return Err(bad(format!("length {len} runs past the end of the address space")));
            }
            if end_of_last.is_some_and(|e| addr as u64 <= e) {
                return Err(bad("overlaps, touches or precedes the previous run".into()));
            }
            let data = r.take(len, "run bytes").map_err(bad)?.to_vec();
            end_of_last = Some(addr as u64 + len as u64);
            runs.push((addr, data));
        }
        finished(F, &r)?;
        check_count(F, &r, trailer_count, runs.len(), "runs")?;
        Ok(Ims { registers, runs })
    }
}

// ---------------------------------------------------------------------------------------
// AES

/// An interrupt, keyed by the boundary it was taken at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntEvent {
    pub tbc: u64,
    pub pc: u32,
    pub vector: u8,
}

/// One device register load, in program order (the device input queue).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoEntry {
    pub addr: u32,
    pub size: u8,
    pub value: u32,
}

/// One DMA burst, keyed by the boundary before which it landed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DmaEvent {
    pub tbc: u64,
    pub pc: u32,
    pub addr: u32,
    pub data: Vec<u8>,
}

/// The asynchronous event schedule.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Aes {
    pub ints: Vec<IntEvent>,
    pub ioq: Vec<IoEntry>,
    pub dma: Vec<DmaEvent>,
    pub cnt: Vec<u32>,
    pub end_tbc: u64,
    pub end_pc: u32,
}

/// Names of the AES sections in file order (reports).
pub const AES_SECTIONS: [&str; 4] = ["INT", "IOQ", "DMA", "CNT"];

impl Aes {
    /// The bytes of each section (count included), in file order.
    pub fn sections(&self) -> [Vec<u8>; 4] {
        let mut int = (self.ints.len() as u32).to_le_bytes().to_vec();
        for e in &self.ints {
            int.extend_from_slice(&e.tbc.to_le_bytes());
            int.extend_from_slice(&e.pc.to_le_bytes());
            int.push(e.vector);
        }
        let mut io = (self.ioq.len() as u32).to_le_bytes().to_vec();
        for e in &self.ioq {
            io.extend_from_slice(&e.addr.to_le_bytes());
            io.push(e.size);
            io.extend_from_slice(&e.value.to_le_bytes());
        }
        let mut dma = (self.dma.len() as u32).to_le_bytes().to_vec();
        for e in &self.dma {
            dma.extend_from_slice(&e.tbc.to_le_bytes());
            dma.extend_from_slice(&e.pc.to_le_bytes());
            dma.extend_from_slice(&e.addr.to_le_bytes());
            dma.extend_from_slice(&(e.data.len() as u16).to_le_bytes());
            dma.extend_from_slice(&e.data);
        }
        let mut cnt = (self.cnt.len() as u32).to_le_bytes().to_vec();
        for v in &self.cnt {
            cnt.extend_from_slice(&v.to_le_bytes());
        }
        [int, io, dma, cnt]
    }

    /// Entries of the four sections together (the trailer's count).
    pub fn entries(&self) -> usize {
        self.ints.len() + self.ioq.len() + self.dma.len() + self.cnt.len()
    }

    /// The file: content and trailer.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut o = self.content_bytes();
        put_trailer(&mut o, TRAILER_TAG, self.entries() as u64);
        o
    }

    /// The file without its trailer (the size reports print).
    pub fn content_bytes(&self) -> Vec<u8> {
        let mut o = AES_MAGIC.to_vec();
        for s in self.sections() {
            o.extend_from_slice(&s);
        }
        o.extend_from_slice(&self.end_tbc.to_le_bytes());
        o.extend_from_slice(&self.end_pc.to_le_bytes());
        o
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Aes, FileError> {
        const F: &str = "AES";
        let (mut r, trailer_count) = open(F, bytes, AES_MAGIC)?;
        let mut a = Aes::default();
        for (s, (name, width)) in AES_SECTIONS.iter().zip([13usize, 9, 18, 4]).enumerate() {
            let count_at = r.pos;
            let count = val(F, &mut r, 4, &format!("{name} count"))? as usize;
            if count > r.left() / width {
                return Err(FileError {
                    file: F,
                    offset: count_at,
                    what: format!("{name} count {count} exceeds what the {} bytes left can hold", r.left()),
                });
            }
            for i in 0..count {
                let start = r.pos;
                let bad = |what: String| FileError { file: F, offset: start, what: format!("{name} entry {i}: {what}") };
                match s {
                    0 => {
                        let tbc = val(F, &mut r, 8, "INT tbc")?;
                        let pc = val(F, &mut r, 4, "INT pc")? as u32;
                        let vector = val(F, &mut r, 1, "INT vector")? as u8;
                        if vector != IRQ_VECTOR {
                            return Err(bad(format!("vector {vector:#04x} (only the IRQ vector 0x18 is raised)")));
                        }
                        if a.ints.last().is_some_and(|p| p.tbc >= tbc) {
                            return Err(bad(format!("tbc {tbc} does not increase")));
                        }
                        a.ints.push(IntEvent { tbc, pc, vector });
                    }
                    1 => {
                        let addr = val(F, &mut r, 4, "IOQ address")? as u32;
                        let size = val(F, &mut r, 1, "IOQ size")? as u8;
                        let value = val(F, &mut r, 4, "IOQ value")? as u32;
                        if !matches!(size, 1 | 2 | 4) {
                            return Err(bad(format!("size {size}")));
                        }
                        a.ioq.push(IoEntry { addr, size, value });
                    }
                    2 => {
                        let tbc = val(F, &mut r, 8, "DMA tbc")?;
                        let pc = val(F, &mut r, 4, "DMA pc")? as u32;
                        let addr = val(F, &mut r, 4, "DMA address")? as u32;
                        let len = val(F, &mut r, 2, "DMA length")? as usize;
                        if len == 0 {
                            return Err(bad("empty burst".into()));
                        }
                        if a.dma.last().is_some_and(|p| p.tbc > tbc) {
                            return Err(bad(format!("tbc {tbc} goes back")));
                        }
                        let data = r.take(len, "DMA data").map_err(bad)?.to_vec();
                        a.dma.push(DmaEvent { tbc, pc, addr, data });
                    }
                    _ => a.cnt.push(val(F, &mut r, 4, "CNT value")? as u32),
                }
            }
        }
        a.end_tbc = val(F, &mut r, 8, "end tbc")?;
        a.end_pc = val(F, &mut r, 4, "end pc")? as u32;
        finished(F, &r)?;
        check_count(F, &r, trailer_count, a.entries(), "entries")?;
        Ok(a)
    }
}

// ---------------------------------------------------------------------------------------
// Instruction trace

/// A data access of a traced instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    pub addr: u32,
    pub size: u8,
    pub write: bool,
    pub value: u32,
}

/// One entry of the instruction trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TraceEntry {
    /// A retired instruction: address (bit 0 = Thumb), opcode, FNV-1a 64 of r0-r15 and CPSR
    /// after it, its data accesses.
    Insn { pc: u32, opcode: u32, regs: u64, accesses: Vec<Access> },
    /// An IRQ taken at boundary `(tbc, pc)`.
    Irq { tbc: u64, pc: u32 },
    /// The end: instructions in the trace.
    End { instructions: u64 },
}

impl std::fmt::Display for TraceEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TraceEntry::Insn { pc, opcode, regs, accesses } => {
                write!(f, "insn {pc:#010x} opcode {opcode:#010x} regs {regs:#018x}")?;
                for a in accesses {
                    write!(f, " {}{}@{:#010x}={:#x}", if a.write { "W" } else { "R" }, a.size, a.addr, a.value)?;
                }
                Ok(())
            }
            TraceEntry::Irq { tbc, pc } => write!(f, "IRQ at tbc {tbc} pc {pc:#010x}"),
            TraceEntry::End { instructions } => write!(f, "end after {instructions} instructions"),
        }
    }
}

/// FNV-1a 64 over the little-endian bytes of `words` (the shared FNV-1a 64 of
/// `streamtrace_model::checksum`).
pub fn fnv1a64(words: &[u32]) -> u64 {
    let mut h = Fnv1a64::new();
    for w in words {
        h.update(&w.to_le_bytes());
    }
    h.value()
}

/// Appends one entry's bytes.
pub fn put_trace_entry(o: &mut Vec<u8>, e: &TraceEntry) {
    match e {
        TraceEntry::Insn { pc, opcode, regs, accesses } => {
            o.push(1);
            o.extend_from_slice(&pc.to_le_bytes());
            o.extend_from_slice(&opcode.to_le_bytes());
            o.extend_from_slice(&regs.to_le_bytes());
            // An instruction makes at most 16 + 2 accesses (LDM of 16 words, SWP).
            o.push(accesses.len() as u8);
            for a in accesses {
                o.extend_from_slice(&a.addr.to_le_bytes());
                o.push(a.size | if a.write { 0x80 } else { 0 });
                o.extend_from_slice(&a.value.to_le_bytes());
            }
        }
        TraceEntry::Irq { tbc, pc } => {
            o.push(2);
            o.extend_from_slice(&tbc.to_le_bytes());
            o.extend_from_slice(&pc.to_le_bytes());
        }
        TraceEntry::End { instructions } => {
            o.push(3);
            o.extend_from_slice(&instructions.to_le_bytes());
        }
    }
}

/// Receives instruction-trace entries as a recording or a replay produces them, so that a
/// long run's trace need not be held in memory.
pub trait TraceSink {
    /// `false`: the producer need not build the entries at all.
    fn wants(&self) -> bool {
        true
    }
    fn entry(&mut self, e: TraceEntry) -> std::io::Result<()>;
}

impl TraceSink for Vec<TraceEntry> {
    fn entry(&mut self, e: TraceEntry) -> std::io::Result<()> {
        self.push(e);
        Ok(())
    }
}

/// Drops the trace.
pub struct NoTrace;

impl TraceSink for NoTrace {
    fn wants(&self) -> bool {
        false
    }
    fn entry(&mut self, _: TraceEntry) -> std::io::Result<()> {
        Ok(())
    }
}

/// Writes an instruction trace file as the entries come; [`finish`](Self::finish) closes it
/// with the trailer (a writer dropped without it leaves a file no reader accepts).
pub struct TraceWriter<W: std::io::Write> {
    out: W,
    buf: Vec<u8>,
    crc: Crc32c,
    entries: u64,
}

impl<W: std::io::Write> TraceWriter<W> {
    pub fn new(mut out: W) -> std::io::Result<Self> {
        out.write_all(ITR_MAGIC)?;
        let mut crc = Crc32c::new();
        crc.update(ITR_MAGIC);
        Ok(TraceWriter { out, buf: Vec::with_capacity(256), crc, entries: 0 })
    }

    pub fn finish(mut self) -> std::io::Result<W> {
        self.out.write_all(&trailer(self.crc, TRAILER_TAG, self.entries))?;
        self.out.flush()?;
        Ok(self.out)
    }
}

impl<W: std::io::Write> TraceSink for TraceWriter<W> {
    fn entry(&mut self, e: TraceEntry) -> std::io::Result<()> {
        self.buf.clear();
        put_trace_entry(&mut self.buf, &e);
        self.crc.update(&self.buf);
        self.entries += 1;
        self.out.write_all(&self.buf)
    }
}

/// A whole instruction trace file.
pub fn trace_to_bytes(entries: &[TraceEntry]) -> Vec<u8> {
    let mut o = ITR_MAGIC.to_vec();
    for e in entries {
        put_trace_entry(&mut o, e);
    }
    put_trailer(&mut o, TRAILER_TAG, entries.len() as u64);
    o
}

/// Parses an instruction trace; it must end with exactly one `End` entry whose count
/// matches the instructions before it.
pub fn trace_from_bytes(bytes: &[u8]) -> Result<Vec<TraceEntry>, FileError> {
    const F: &str = "instruction trace";
    let (mut r, trailer_count) = open(F, bytes, ITR_MAGIC)?;
    let mut out = Vec::new();
    let mut insns = 0u64;
    loop {
        let start = r.pos;
        let bad = |what: String| FileError { file: F, offset: start, what: format!("entry {}: {what}", out.len()) };
        if r.left() == 0 {
            return Err(bad("truncated: no end entry".into()));
        }
        match val(F, &mut r, 1, "tag")? {
            1 => {
                let pc = val(F, &mut r, 4, "pc")? as u32;
                let opcode = val(F, &mut r, 4, "opcode")? as u32;
                let regs = val(F, &mut r, 8, "register hash")?;
                let n = val(F, &mut r, 1, "access count")? as usize;
                let mut accesses = Vec::with_capacity(n);
                for _ in 0..n {
                    let addr = val(F, &mut r, 4, "access address")? as u32;
                    let sz = val(F, &mut r, 1, "access size")? as u8;
                    let value = val(F, &mut r, 4, "access value")? as u32;
                    let size = sz & 0x7F;
                    if !matches!(size, 1 | 2 | 4) {
                        return Err(bad(format!("access size {size}")));
                    }
                    accesses.push(Access { addr, size, write: sz & 0x80 != 0, value });
                }
                insns += 1;
                out.push(TraceEntry::Insn { pc, opcode, regs, accesses });
            }
            2 => {
                let tbc = val(F, &mut r, 8, "IRQ tbc")?;
                let pc = val(F, &mut r, 4, "IRQ pc")? as u32;
                out.push(TraceEntry::Irq { tbc, pc });
            }
            3 => {
                let instructions = val(F, &mut r, 8, "instruction count")?;
                if instructions != insns {
                    return Err(bad(format!("end says {instructions} instructions, the trace has {insns}")));
                }
                out.push(TraceEntry::End { instructions });
                finished(F, &r)?;
                check_count(F, &r, trailer_count, out.len(), "entries")?;
                return Ok(out);
            }
            t => return Err(bad(format!("unknown tag {t}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_cat() -> Cat {
        Cat {
            line_bytes: 32,
            write_back: true,
            write_allocate: false,
            records: vec![
                CatRecord { kind: MAGIC, flags: 2, addr: 0, cycle: 5, data: vec![0; 4] },
                CatRecord { kind: IFILL, flags: 2, addr: 0x100, cycle: 9, data: (0..32).collect() },
                CatRecord::monitor(MON_IRQ, 7, 0x1235, 11),
                CatRecord { kind: UNC_READ, flags: 3, addr: 0x8000_1000, cycle: 12, data: vec![0x41, 0, 0, 0] },
            ],
        }
    }

    fn sample_aes() -> Aes {
        Aes {
            ints: vec![IntEvent { tbc: 3, pc: 0x100, vector: 0x18 }],
            ioq: vec![IoEntry { addr: 0x8000_1000, size: 4, value: 0x41 }],
            dma: vec![DmaEvent { tbc: 4, pc: 0x201, addr: 0x4000, data: vec![1, 2, 3, 4] }],
            cnt: vec![77, 99],
            end_tbc: 9,
            end_pc: 0x300,
        }
    }

    fn sample_ims() -> Ims {
        let mut registers = [0u64; DUMP_REGISTERS];
        registers[15] = 0x8000;
        registers[16] = 0xD3;
        registers[45] = 0xAB_0000_0001;
        Ims { registers, runs: vec![(0, vec![1, 2, 3]), (0x100, vec![9; 40])] }
    }

    #[test]
    fn round_trips() {
        let c = sample_cat();
        assert_eq!(Cat::from_bytes(&c.to_bytes()).unwrap(), c);
        let a = sample_aes();
        assert_eq!(Aes::from_bytes(&a.to_bytes()).unwrap(), a);
        let i = sample_ims();
        assert_eq!(Ims::from_bytes(&i.to_bytes()).unwrap(), i);
        let t = vec![
            TraceEntry::Insn { pc: 0x101, opcode: 0x4770, regs: 5, accesses: vec![Access { addr: 4, size: 2, write: true, value: 7 }] },
            TraceEntry::Irq { tbc: 2, pc: 0x104 },
            TraceEntry::End { instructions: 1 },
        ];
        assert_eq!(trace_from_bytes(&trace_to_bytes(&t)).unwrap(), t);
    }

    type Parse = fn(&[u8]) -> Option<FileError>;

    /// A valid file of each kind with its parser.
    fn sample_files() -> [(Vec<u8>, Parse); 4] {
        [
            (sample_cat().to_bytes(), |b| Cat::from_bytes(b).err()),
            (sample_aes().to_bytes(), |b| Aes::from_bytes(b).err()),
            (sample_ims().to_bytes(), |b| Ims::from_bytes(b).err()),
            (trace_to_bytes(&[TraceEntry::Irq { tbc: 1, pc: 2 }, TraceEntry::End { instructions: 0 }]), |b| trace_from_bytes(b).err()),
        ]
    }

    /// Recomputes the trailer's CRC after an edit (a hostile file, or a faulty writer's), so
    /// that the field checks behind the CRC are reached.
    fn reclose(b: &mut [u8]) {
        let n = b.len();
        let crc = streamtrace_model::checksum::crc32c(&b[..n - 4]);
        b[n - 4..].copy_from_slice(&crc.to_le_bytes());
    }

    /// Every strict prefix of a valid file, every single-bit flip and bytes after the
    /// trailer are errors with an offset inside the file (docs/citcat.md 8).
    #[test]
    fn every_cut_and_bit_flip_is_an_error() {
        for (bytes, parse) in sample_files() {
            assert!(parse(&bytes).is_none());
            for n in 0..bytes.len() {
                let e = parse(&bytes[..n]).unwrap_or_else(|| panic!("prefix of {n} bytes parsed"));
                assert!(e.offset <= n, "{e}");
            }
            for i in 0..bytes.len() * 8 {
                let mut d = bytes.clone();
                d[i / 8] ^= 1 << (i % 8);
                let e = parse(&d).unwrap_or_else(|| panic!("bit {i} flipped parsed"));
                assert!(e.offset <= d.len(), "{e}");
            }
            let mut more = bytes.clone();
            more.push(0);
            assert!(parse(&more).unwrap().what.contains("no CEND trailer"));
        }
    }

    /// A trailer whose CRC matches but whose count does not is named at the count field.
    #[test]
    fn a_wrong_count_is_named() {
        for (mut bytes, parse) in sample_files() {
            let n = bytes.len();
            bytes[n - 12] ^= 1;
            reclose(&mut bytes);
            let e = parse(&bytes).unwrap();
            assert_eq!(e.offset, n - 12, "{e}");
            assert!(e.what.contains("the trailer counts"), "{e}");
        }
    }

    #[test]
    fn corrupt_fields_name_their_offset() {
        let mut b = sample_cat().to_bytes();
        b[16 + 20] = 42; // kind of the second record
        let e = Cat::from_bytes(&b).unwrap_err();
        assert!(e.to_string().contains("the file is damaged"), "{e}");
        reclose(&mut b);
        let e = Cat::from_bytes(&b).unwrap_err();
        assert_eq!(e.offset, 16 + 20);
        assert!(e.to_string().contains("record 1: unknown kind 42"), "{e}");

        let mut b = sample_cat().to_bytes();
        b[8] = 24; // line size
        reclose(&mut b);
        assert!(Cat::from_bytes(&b).unwrap_err().to_string().contains("line size 24"));

        let mut b = sample_aes().to_bytes();
        b[8 + 4 + 12] = 0x1C; // INT vector
        reclose(&mut b);
        let e = Aes::from_bytes(&b).unwrap_err();
        assert_eq!(e.offset, 12);
        assert!(e.to_string().contains("INT entry 0: vector 0x1c"), "{e}");

        let mut i = sample_ims();
        i.runs[1].0 = 2; // overlaps run 0
        let e = Ims::from_bytes(&i.to_bytes()).unwrap_err();
        assert!(e.to_string().contains("run 1 at 0x00000002: overlaps"), "{e}");

        let mut b = sample_ims().to_bytes();
        b[0] = b'X';
        assert!(Ims::from_bytes(&b).unwrap_err().to_string().contains("bad magic"));
    }

    /// The shared FNV-1a 64 gives what the local loop it replaced gave (bit-identical
    /// register hashes in instruction traces written before the change).
    #[test]
    fn fnv_is_the_replaced_loop() {
        let old = |words: &[u32]| {
            let mut h: u64 = 0xcbf2_9ce4_8422_2325;
            for w in words {
                for b in w.to_le_bytes() {
                    h ^= b as u64;
                    h = h.wrapping_mul(0x0000_0100_0000_01b3);
                }
            }
            h
        };
        let words: Vec<u32> = (0..17u32).map(|i| i.wrapping_mul(0x9E37_79B9) ^ 0xD3).collect();
        for n in 0..=words.len() {
            assert_eq!(fnv1a64(&words[..n]), old(&words[..n]));
        }
    }

    #[test]
    fn fnv_matches_the_reference_vector() {
        // FNV-1a 64 of the empty input is the offset basis; of "a\0\0\0" by hand.
        assert_eq!(fnv1a64(&[]), 0xcbf2_9ce4_8422_2325);
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in [0x61u8, 0, 0, 0] {
            h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
        assert_eq!(fnv1a64(&[0x61]), h);
        // Published vector: FNV-1a 64 of "a" is 0xaf63dc4c8601ec8c.
        let mut one: u64 = 0xcbf2_9ce4_8422_2325;
        one = (one ^ 0x61).wrapping_mul(0x100_0000_01b3);
        assert_eq!(one, 0xaf63_dc4c_8601_ec8c);
    }
}

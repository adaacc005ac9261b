//! Tier-2 bidirectional stream compression (algorithms.md §6.3; docs/wet.md section 5).
//!
//! A stream is kept as two stacks around a window of `n` values: FR holds the values left
//! of the window, each coded against its right context, BL the values right of it, coded
//! against their left context. Moving the cursor pops one stack and pushes the other, so a
//! stream is walked forwards and backwards without ever being decompressed. Each side
//! touches only its own table (FRTB, BLTB), which is what makes every step reversible.
//!
//! Cursor convention: with the window over padded positions `w..w+n` (the stream padded
//! with `n` zeros at each end), `position() = w - n` values lie before the cursor and the
//! window starts with the value after it. At rest (after construction or parsing) the
//! cursor is at the end, BL is empty and BLTB is all zeros, so only FR and the final FRTB
//! are stored.

use thiserror::Error;

use crate::bytes::{put_varint, varint_len, ByteReader};

/// One compression method of the candidate set (method ids of §6.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    /// Finite context method of order 1-3.
    Fcm(u8),
    /// FCM over first differences.
    Dfcm(u8),
    /// The value is one of the n nearest neighbours on its side.
    LastN(u8),
    /// Last-n over first differences.
    LastNStride(u8),
    /// Plain values (streams of fewer than 16 values).
    Raw,
}

/// The twelve candidates, in method-id order.
pub const CANDIDATES: [Method; 12] = [
    Method::Fcm(1),
    Method::Fcm(2),
    Method::Fcm(3),
    Method::Dfcm(1),
    Method::Dfcm(2),
    Method::Dfcm(3),
    Method::LastN(1),
    Method::LastN(2),
    Method::LastN(4),
    Method::LastNStride(1),
    Method::LastNStride(2),
    Method::LastNStride(4),
];

/// Method id of raw streams in the persisted form (ids 0-11 are the candidates).
const RAW_ID: u8 = 0xFF;
/// Streams shorter than this are stored raw.
pub const MIN_COMPRESSED: usize = 16;

impl Method {
    pub fn id(self) -> u8 {
        match self {
            Method::Raw => RAW_ID,
            m => CANDIDATES.iter().position(|&c| c == m).expect("a candidate") as u8,
        }
    }

    pub fn from_id(id: u8) -> Option<Method> {
        if id == RAW_ID {
            return Some(Method::Raw);
        }
        CANDIDATES.get(id as usize).copied()
    }

    /// Context size n (0 for raw).
    fn order(self) -> usize {
        match self {
            Method::Fcm(n) | Method::Dfcm(n) | Method::LastN(n) | Method::LastNStride(n) => n as usize,
            Method::Raw => 0,
        }
    }

    fn differential(self) -> bool {
        matches!(self, Method::Dfcm(_) | Method::LastNStride(_))
    }

    fn tabled(self) -> bool {
        matches!(self, Method::Fcm(_) | Method::Dfcm(_))
    }

    pub fn name(self) -> String {
        match self {
            Method::Fcm(n) => format!("fcm-{n}"),
            Method::Dfcm(n) => format!("dfcm-{n}"),
            Method::LastN(n) => format!("last-{n}"),
            Method::LastNStride(n) => format!("last-{n}-stride"),
            Method::Raw => "raw".into(),
        }
    }
}

/// A corrupt persisted stream.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("stream byte {offset}: {what}")]
pub struct StreamError {
    pub offset: usize,
    pub what: String,
}

fn ceil_log2(x: u64) -> u32 {
    if x <= 1 {
        0
    } else {
        64 - (x - 1).leading_zeros()
    }
}

/// FCM table index bits for a stream of m values.
fn table_bits(m: usize) -> u32 {
    ceil_log2(m as u64 + 1).clamp(4, 16)
}

/// A stack of T/F entries: a flag bit each (1 = F), the F payloads, and for last-n the T
/// indices.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct EntryStack {
    flags: Vec<u64>,
    len: usize,
    values: Vec<u64>,
    indices: Vec<u8>,
}

impl EntryStack {
    fn push(&mut self, f: bool) {
        if self.len.is_multiple_of(64) {
            self.flags.push(0);
        }
        if f {
            self.flags[self.len / 64] |= 1 << (self.len % 64);
        }
        self.len += 1;
    }

    /// Pop the top flag (the caller knows the stack is not empty).
    fn pop(&mut self) -> bool {
        self.len -= 1;
        let word = &mut self.flags[self.len / 64];
        let bit = 1u64 << (self.len % 64);
        let f = *word & bit != 0;
        *word &= !bit;
        if self.len.is_multiple_of(64) {
            self.flags.pop();
        }
        f
    }

    fn top(&self) -> bool {
        let i = self.len - 1;
        self.flags[i / 64] & (1 << (i % 64)) != 0
    }

    fn flag(&self, i: usize) -> bool {
        self.flags[i / 64] & (1 << (i % 64)) != 0
    }
}

/// The bidirectional engine over a symbol sequence (values, or differences).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Core {
    n: usize,
    /// The n symbols at padded positions w..w+n.
    window: [u64; 4],
    fr: EntryStack,
    bl: EntryStack,
    /// FCM tables (empty for last-n). BLTB is all zeros at rest, so it is allocated at the
    /// first step back (a stream that is only stored costs one table).
    frtb: Vec<u64>,
    bltb: Vec<u64>,
    bits: u32,
    bytes_per_value: usize,
    tabled: bool,
}

impl Core {
    fn new(n: usize, tabled: bool, m: usize, width: u8) -> Core {
        let bits = if tabled { table_bits(m) } else { 0 };
        Core {
            n,
            window: [0; 4],
            fr: EntryStack::default(),
            bl: EntryStack::default(),
            frtb: if tabled { vec![0; 1 << bits] } else { Vec::new() },
            bltb: Vec::new(),
            bits,
            bytes_per_value: width as usize / 8,
            tabled,
        }
    }

    /// FNV-1a over the little-endian bytes of `ctx`, oldest first. The 32-bit FNV-1a over
    /// the stream's width, not the shared FNV-1a 64 of `streamtrace_model::checksum`: its
    /// top bits index the tables of every persisted stream, so another hash would change
    /// the stored files.
    fn index(&self, ctx: &[u64]) -> usize {
        let mut h: u32 = 0x811C_9DC5;
        for &v in ctx {
            for b in &v.to_le_bytes()[..self.bytes_per_value] {
                h = (h ^ *b as u32).wrapping_mul(0x0100_0193);
            }
        }
        (h >> (32 - self.bits)) as usize
    }

    /// Code `v`, which leaves the window on the left, against its right context `ctx`
    /// (the window after the shift) onto FR.
    fn push_fr(&mut self, v: u64, ctx: &[u64]) {
        if self.tabled {
            let i = self.index(ctx);
            let old = self.frtb[i];
            if old == v {
                self.fr.push(false);
            } else {
                self.fr.push(true);
                self.fr.values.push(old);
                self.frtb[i] = v;
            }
        } else {
            // The nearest right neighbour is ctx[0].
            match ctx.iter().position(|&c| c == v) {
                Some(j) => {
                    self.fr.push(false);
                    self.fr.indices.push(j as u8);
                }
                None => {
                    self.fr.push(true);
                    self.fr.values.push(v);
                }
            }
        }
    }

    /// Code `v`, which leaves the window on the right, against its left context `ctx`
    /// (the window after the shift) onto BL.
    fn push_bl(&mut self, v: u64, ctx: &[u64]) {
        if self.tabled {
            if self.bltb.is_empty() {
                self.bltb = vec![0; 1 << self.bits];
            }
            let i = self.index(ctx);
            let old = self.bltb[i];
            if old == v {
                self.bl.push(false);
            } else {
                self.bl.push(true);
                self.bl.values.push(old);
                self.bltb[i] = v;
            }
        } else {
            // The nearest left neighbour is the last of ctx.
            match ctx.iter().rev().position(|&c| c == v) {
                Some(j) => {
                    self.bl.push(false);
                    self.bl.indices.push(j as u8);
                }
                None => {
                    self.bl.push(true);
                    self.bl.values.push(v);
                }
            }
        }
    }

    /// The symbol FR's top decodes to against the current window (without popping).
    fn fr_top(&self) -> u64 {
        let n = self.n;
        if self.tabled {
            self.frtb[self.index(&self.window[..n])]
        } else if self.fr.top() {
            *self.fr.values.last().expect("an F entry has a value")
        } else {
            self.window[*self.fr.indices.last().expect("a T entry has an index") as usize]
        }
    }

    /// Shift the window one to the left: the symbol before it enters, the last leaves to BL.
    /// Returns the entering symbol.
    fn back(&mut self) -> u64 {
        let n = self.n;
        let entering = self.fr_top();
        let f = self.fr.pop();
        if self.tabled {
            if f {
                let old = self.fr.values.pop().expect("an F entry has a value");
                let i = self.index(&self.window[..n]);
                self.frtb[i] = old;
            }
        } else if f {
            self.fr.values.pop();
        } else {
            self.fr.indices.pop();
        }
        let leaving = self.window[n - 1];
        self.window.copy_within(0..n - 1, 1);
        self.window[0] = entering;
        let ctx = self.window;
        self.push_bl(leaving, &ctx[..n]);
        entering
    }

    /// Shift the window one to the right: the symbol after it enters from BL, the first
    /// leaves to FR. Returns the leaving symbol.
    fn fwd(&mut self) -> u64 {
        let n = self.n;
        let f = self.bl.pop();
        let entering = if self.tabled {
            let i = self.index(&self.window[..n]);
            let v = self.bltb[i];
            if f {
                self.bltb[i] = self.bl.values.pop().expect("an F entry has a value");
            }
            v
        } else if f {
            self.bl.values.pop().expect("an F entry has a value")
        } else {
            self.window[n - 1 - self.bl.indices.pop().expect("a T entry has an index") as usize]
        };
        let leaving = self.window[0];
        self.window.copy_within(1..n, 0);
        self.window[n - 1] = entering;
        let ctx = self.window;
        self.push_fr(leaving, &ctx[..n]);
        leaving
    }

    /// Construction: append `v` on the right (BL stays empty).
    fn append(&mut self, v: u64) {
        let n = self.n;
        let leaving = self.window[0];
        self.window.copy_within(1..n, 0);
        self.window[n - 1] = v;
        let ctx = self.window;
        self.push_fr(leaving, &ctx[..n]);
    }
}

/// A compressed stream with a cursor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BiStream {
    method: Method,
    width: u8,
    m: usize,
    pos: usize,
    /// Raw streams only.
    raw: Vec<u64>,
    core: Option<Core>,
    /// Differential methods: U[pos - 1] (0 before the first value).
    acc: u64,
}

impl BiStream {
    fn mask(width: u8) -> u64 {
        if width == 64 {
            u64::MAX
        } else {
            (1u64 << width) - 1
        }
    }

    /// Compress `values` (taken modulo 2^width; width 8, 16, 32 or 64) with `method`; the
    /// cursor is left at the end. Streams of fewer than 16 values are stored raw whatever the
    /// method.
    pub fn compress(values: &[u64], width: u8, method: Method) -> BiStream {
        assert!(matches!(width, 8 | 16 | 32 | 64), "stream width {width}");
        let mask = Self::mask(width);
        let m = values.len();
        if m < MIN_COMPRESSED || method == Method::Raw {
            return BiStream { method: Method::Raw, width, m, pos: m, raw: values.iter().map(|v| v & mask).collect(), core: None, acc: 0 };
        }
        let n = method.order();
        let mut core = Core::new(n, method.tabled(), m, width);
        let mut prev = 0u64;
        for &v in values {
            let v = v & mask;
            let sym = if method.differential() { v.wrapping_sub(prev) & mask } else { v };
            prev = v;
            core.append(sym);
        }
        for _ in 0..n {
            core.append(0);
        }
        BiStream { method, width, m, pos: m, raw: Vec::new(), core: Some(core), acc: if method.differential() { prev } else { 0 } }
    }

    /// Compress with every candidate and keep the smallest stored size (ties: the lower
    /// method id) — the offline selection of §6.3; plain values when no candidate is smaller.
    pub fn compress_best(values: &[u64], width: u8) -> BiStream {
        let raw = Self::compress(values, width, Method::Raw);
        if values.len() < MIN_COMPRESSED {
            return raw;
        }
        let mut best: Option<(usize, BiStream)> = Some((raw.stored_len(), raw));
        for method in CANDIDATES {
            let s = Self::compress(values, width, method);
            let size = s.stored_len();
            if best.as_ref().is_none_or(|(b, _)| size < *b) {
                best = Some((size, s));
            }
        }
        best.expect("raw at least").1
    }

    pub fn method(&self) -> Method {
        self.method
    }

    pub fn width(&self) -> u8 {
        self.width
    }

    pub fn len(&self) -> usize {
        self.m
    }

    pub fn is_empty(&self) -> bool {
        self.m == 0
    }

    /// Values before the cursor.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// The value before the cursor; the cursor moves before it.
    pub fn back(&mut self) -> Option<u64> {
        if self.pos == 0 {
            return None;
        }
        self.pos -= 1;
        let mask = Self::mask(self.width);
        let Some(core) = &mut self.core else { return Some(self.raw[self.pos]) };
        let sym = core.back();
        if self.method.differential() {
            let v = self.acc;
            self.acc = self.acc.wrapping_sub(sym) & mask;
            Some(v)
        } else {
            Some(sym)
        }
    }

    /// The value after the cursor; the cursor moves past it.
    pub fn fwd(&mut self) -> Option<u64> {
        if self.pos == self.m {
            return None;
        }
        self.pos += 1;
        let mask = Self::mask(self.width);
        let Some(core) = &mut self.core else { return Some(self.raw[self.pos - 1]) };
        let sym = core.fwd();
        if self.method.differential() {
            self.acc = self.acc.wrapping_add(sym) & mask;
            Some(self.acc)
        } else {
            Some(sym)
        }
    }

    /// The value after the cursor (the window's first symbol), without moving.
    pub fn peek_next(&self) -> Option<u64> {
        if self.pos == self.m {
            return None;
        }
        let Some(core) = &self.core else { return Some(self.raw[self.pos]) };
        let sym = core.window[0];
        Some(if self.method.differential() { self.acc.wrapping_add(sym) & Self::mask(self.width) } else { sym })
    }

    /// The value before the cursor, without moving.
    pub fn peek_prev(&self) -> Option<u64> {
        if self.pos == 0 {
            return None;
        }
        let Some(core) = &self.core else { return Some(self.raw[self.pos - 1]) };
        Some(if self.method.differential() { self.acc } else { core.fr_top() })
    }

    /// Move the cursor to `pos` (clamped to the length) by stepping.
    pub fn seek(&mut self, pos: usize) {
        let pos = pos.min(self.m);
        while self.pos < pos {
            self.fwd();
        }
        while self.pos > pos {
            self.back();
        }
    }

    /// Bytes of the persisted form (what [`BiStream::to_bytes`] writes).
    pub fn stored_len(&self) -> usize {
        let w = self.width as usize / 8;
        let head = 2 + varint_len(self.m as u64);
        let Some(core) = &self.core else { return head + self.m * w };
        // At rest FR holds m + n entries; elsewhere the persisted form is the one at rest,
        // which a clone walked to the end gives.
        if self.pos != self.m {
            let mut c = self.clone();
            c.seek(self.m);
            return c.stored_len();
        }
        let entries = self.m + core.n;
        let acc = if self.method.differential() { w } else { 0 };
        if core.tabled {
            let f = core.fr.values.len();
            let nonzero: Vec<usize> = (0..core.frtb.len()).filter(|&i| core.frtb[i] != 0).collect();
            head + 1 + entries.div_ceil(8) + f * w + varint_len(nonzero.len() as u64)
                + nonzero.iter().map(|&i| varint_len(i as u64) + w).sum::<usize>()
                + acc
        } else {
            let ib = ceil_log2(core.n as u64) as usize;
            let f = core.fr.values.len();
            let bits = entries + f * self.width as usize + (entries - f) * ib;
            head + 1 + bits.div_ceil(8) + acc
        }
    }

    /// Stored size in bits: 8 × [`BiStream::stored_len`].
    pub fn stored_bits(&self) -> u64 {
        8 * self.stored_len() as u64
    }

    /// The persisted form (algorithms.md §6.3 layout; docs/wet.md section 5), always of the
    /// stream at rest (cursor at the end), wherever this cursor is.
    pub fn to_bytes(&self) -> Vec<u8> {
        if self.core.is_some() && self.pos != self.m {
            let mut c = self.clone();
            c.seek(self.m);
            return c.to_bytes();
        }
        let w = self.width as usize / 8;
        let mut o = Vec::with_capacity(self.stored_len());
        o.push(self.method.id());
        o.push(self.width);
        put_varint(&mut o, self.m as u64);
        let Some(core) = &self.core else {
            for v in &self.raw {
                o.extend_from_slice(&v.to_le_bytes()[..w]);
            }
            return o;
        };
        o.push(core.bits as u8);
        let entries = core.fr.len;
        if core.tabled {
            let mut byte = 0u8;
            for i in 0..entries {
                if core.fr.flag(i) {
                    byte |= 1 << (i % 8);
                }
                if i % 8 == 7 {
                    o.push(byte);
                    byte = 0;
                }
            }
            if !entries.is_multiple_of(8) {
                o.push(byte);
            }
            for v in &core.fr.values {
                o.extend_from_slice(&v.to_le_bytes()[..w]);
            }
            let nonzero: Vec<usize> = (0..core.frtb.len()).filter(|&i| core.frtb[i] != 0).collect();
            put_varint(&mut o, nonzero.len() as u64);
            for i in nonzero {
                put_varint(&mut o, i as u64);
                o.extend_from_slice(&core.frtb[i].to_le_bytes()[..w]);
            }
        } else {
            let ib = ceil_log2(core.n as u64);
            let mut bits = BitWriter::default();
            let (mut vi, mut ii) = (0, 0);
            for i in 0..entries {
                let f = core.fr.flag(i);
                bits.put(f as u64, 1);
                if f {
                    bits.put(core.fr.values[vi], self.width as u32);
                    vi += 1;
                } else {
                    bits.put(core.fr.indices[ii] as u64, ib);
                    ii += 1;
                }
            }
            o.extend_from_slice(&bits.finish());
        }
        if self.method.differential() {
            o.extend_from_slice(&self.acc.to_le_bytes()[..w]);
        }
        o
    }

    /// Parse a persisted stream from the start of `bytes`; returns it (cursor at the end)
    /// and the number of bytes it took.
    pub fn from_bytes(bytes: &[u8]) -> Result<(BiStream, usize), StreamError> {
        let mut r = ByteReader::new(bytes);
        let s = Self::parse(&mut r).map_err(|what| StreamError { offset: r.pos, what })?;
        Ok((s, r.pos))
    }

    fn parse(r: &mut ByteReader) -> Result<BiStream, String> {
        let id = r.u8("method id")?;
        let method = Method::from_id(id).ok_or_else(|| format!("unknown method id {id}"))?;
        let width = r.u8("value width")?;
        if !matches!(width, 8 | 16 | 32 | 64) {
            return Err(format!("value width {width} (8, 16, 32 or 64)"));
        }
        let w = width as usize / 8;
        let m = r.varint("value count")?;
        if method == Method::Raw {
            if m > (r.left() / w) as u64 {
                return Err(format!("{m} raw values exceed the {} bytes left", r.left()));
            }
            let raw = (0..m).map(|_| r.value(w, "raw value")).collect::<Result<Vec<u64>, String>>()?;
            return Ok(BiStream { method, width, m: m as usize, pos: m as usize, raw, core: None, acc: 0 });
        }
        if m < MIN_COMPRESSED as u64 {
            return Err(format!("a {} stream of {m} values (shorter streams are raw)", method.name()));
        }
        // Every value takes at least one flag bit.
        if m > 8 * r.left() as u64 {
            return Err(format!("value count {m} exceeds what {} bytes can hold", r.left()));
        }
        let m = m as usize;
        let n = method.order();
        let mut core = Core::new(n, method.tabled(), m, width);
        let bits = r.u8("table bits")? as u32;
        if bits != core.bits {
            return Err(format!("table bits {bits}, expected {} for {m} values", core.bits));
        }
        let entries = m + n;
        if core.tabled {
            let flag_bytes = r.take(entries.div_ceil(8), "flag bit vector")?;
            for i in 0..entries {
                core.fr.push(flag_bytes[i / 8] & (1 << (i % 8)) != 0);
            }
            if !entries.is_multiple_of(8) && flag_bytes[entries / 8] >> (entries % 8) != 0 {
                return Err("flag bits set beyond the last entry".into());
            }
            let f = (0..entries).filter(|&i| core.fr.flag(i)).count();
            for _ in 0..f {
                core.fr.values.push(r.value(w, "F value")?);
            }
            let count = r.varint("table entry count")?;
            if count > core.frtb.len() as u64 {
                return Err(format!("{count} table entries for a table of {}", core.frtb.len()));
            }
            let mut last: Option<u64> = None;
            for _ in 0..count {
                let i = r.varint("table index")?;
                if i >= core.frtb.len() as u64 || last.is_some_and(|l| i <= l) {
                    return Err(format!("table index {i} out of order or range"));
                }
                last = Some(i);
                let v = r.value(w, "table value")?;
                if v == 0 {
                    return Err(format!("table entry {i} stored with value 0"));
                }
                core.frtb[i as usize] = v;
            }
        } else {
            let ib = ceil_log2(n as u64);
            let mut br = BitReader { bytes: &r.bytes[r.pos..], pos: 0 };
            for _ in 0..entries {
                let f = br.get(1).ok_or("truncated entry bits")? == 1;
                core.fr.push(f);
                if f {
                    core.fr.values.push(br.get(width as u32).ok_or("truncated F value")?);
                } else {
                    let j = br.get(ib).ok_or("truncated T index")?;
                    if j as usize >= n {
                        return Err(format!("T index {j} for order {n}"));
                    }
                    core.fr.indices.push(j as u8);
                }
            }
            r.take(br.pos.div_ceil(8), "entry bits")?;
        }
        let acc = if method.differential() { r.value(w, "accumulator")? } else { 0 };
        Ok(BiStream { method, width, m, pos: m, raw: Vec::new(), core: Some(core), acc })
    }
}

/// LSB-first bit packing.
#[derive(Default)]
struct BitWriter {
    out: Vec<u8>,
    acc: u64,
    n: u32,
}

impl BitWriter {
    fn put(&mut self, v: u64, bits: u32) {
        for i in 0..bits {
            self.acc |= ((v >> i) & 1) << self.n;
            self.n += 1;
            if self.n == 8 {
                self.out.push(self.acc as u8);
                self.acc = 0;
                self.n = 0;
            }
        }
    }

    fn finish(mut self) -> Vec<u8> {
        if self.n > 0 {
            self.out.push(self.acc as u8);
        }
        self.out
    }
}

struct BitReader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl BitReader<'_> {
    fn get(&mut self, bits: u32) -> Option<u64> {
        let mut v = 0u64;
        for i in 0..bits {
            let byte = *self.bytes.get(self.pos / 8)?;
            v |= (((byte >> (self.pos % 8)) & 1) as u64) << i;
            self.pos += 1;
        }
        Some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn walk_check(values: &[u64], width: u8, method: Method) {
        let mut s = BiStream::compress(values, width, method);
        assert_eq!(s.position(), values.len());
        let mut back: Vec<u64> = std::iter::from_fn(|| s.back()).collect();
        back.reverse();
        assert_eq!(back, values, "{method:?} backwards");
        let fwd: Vec<u64> = std::iter::from_fn(|| s.fwd()).collect();
        assert_eq!(fwd, values, "{method:?} forwards");
    }

    #[test]
    fn every_method_walks_both_ways() {
        let v: Vec<u64> = (0..300u64).map(|i| (i * 7) % 13 + (i / 50) * 1000).collect();
        for m in CANDIDATES {
            walk_check(&v, 32, m);
        }
    }

    #[test]
    fn compressors_compress() {
        let constant = vec![42u64; 10_000];
        assert!(BiStream::compress(&constant, 32, Method::Fcm(1)).stored_bits() < 10_000 * 32 / 20);
        let ramp: Vec<u64> = (0..10_000u64).map(|i| 1000 + 4 * i).collect();
        assert!(BiStream::compress(&ramp, 32, Method::Dfcm(1)).stored_bits() < 10_000 * 32 / 20);
        assert!(BiStream::compress(&ramp, 32, Method::LastNStride(1)).stored_bits() < 10_000 * 32 / 20);
        assert!(BiStream::compress(&ramp, 32, Method::Fcm(1)).stored_bits() > 10_000 * 32);
    }

    #[test]
    fn the_fr_bit_vector_layout() {
        // 16 equal values under FCM-1: every entry after the first real value hits.
        let s = BiStream::compress(&[5; 16], 32, Method::Fcm(1));
        let b = s.to_bytes();
        assert_eq!(&b[..4], &[0, 32, 16, 5], "id, width, m, table bits");
    }
}

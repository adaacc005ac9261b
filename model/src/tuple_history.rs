//! SC-T8HT: a stream descriptor cache followed by a tuple history table (Milenkovic et al.,
//! DCC 2007) as docs/trace-format.md section 10.2 lays it out. Stream indices are grouped
//! into N-tuples; a tuple seen among the M most recent ones is sent as its table index.

use crate::bits::{BitReader, BitWriter};
use crate::config::{Config, Scheme};
use crate::detector::StreamDescriptor;
use crate::sdc::StreamDescriptorCache;
use crate::tslz::{Token, TokenError};

/// The bSDC equivalent of an SC-T8HT configuration (same SDC rules, full tags).
fn sdc_config(cfg: &Config) -> Config {
    Config { shift: cfg.shift, max_sl: cfg.max_sl, ..Config::new(Scheme::BSdc, cfg.sets, cfg.ways, cfg.sets * cfg.ways) }
}

/// Fully associative table of the M most recently used tuples, entries 1..=M.
struct TupleTable {
    tuples: Vec<Vec<u16>>,
    /// Last use time per entry (0 = empty).
    used: Vec<u64>,
    clock: u64,
}

impl TupleTable {
    fn new(m: u32) -> Self {
        TupleTable { tuples: vec![Vec::new(); m as usize + 1], used: vec![0; m as usize + 1], clock: 0 }
    }

    fn lookup(&self, t: &[u16]) -> Option<usize> {
        (1..self.tuples.len()).find(|&i| self.used[i] != 0 && self.tuples[i] == t)
    }

    fn touch(&mut self, i: usize) {
        self.clock += 1;
        self.used[i] = self.clock;
    }

    /// Replace the least recently used entry (empty ones first, lowest index first).
    fn insert(&mut self, t: &[u16]) {
        let victim = (1..self.tuples.len()).min_by_key(|&i| (self.used[i], i)).expect("M >= 1");
        self.tuples[victim].clear();
        self.tuples[victim].extend_from_slice(t);
        self.touch(victim);
    }

    fn get(&self, i: usize) -> Option<&[u16]> {
        (i >= 1 && i < self.tuples.len() && self.used[i] != 0).then(|| self.tuples[i].as_slice())
    }
}

fn addr_bits(cfg: &Config) -> u32 {
    32 - cfg.low_bits()
}

pub struct TupleEncoder {
    cfg: Config,
    sdc: StreamDescriptorCache,
    table: TupleTable,
    k: u32,
    index_bits: u32,
    slw: u32,
    tuple: Vec<u16>,
    /// Descriptors of the SDC misses of the pending tuple, in order.
    misses: Vec<StreamDescriptor>,
    pub tuple_hits: u64,
    pub tuples: u64,
    pub sdc_hits: u64,
}

impl TupleEncoder {
    pub fn new(cfg: &Config) -> Self {
        TupleEncoder {
            cfg: *cfg,
            sdc: StreamDescriptorCache::new(&sdc_config(cfg)),
            table: TupleTable::new(cfg.param),
            k: cfg.index_bits(),
            index_bits: (cfg.param + 1).trailing_zeros(),
            slw: cfg.sl_bits(),
            tuple: Vec::with_capacity(cfg.tuple as usize),
            misses: Vec::new(),
            tuple_hits: 0,
            tuples: 0,
            sdc_hits: 0,
        }
    }

    /// One stream; returns whether it missed in the SDC. Bits are written when a tuple
    /// completes.
    pub fn push(&mut self, d: &StreamDescriptor, out: &mut BitWriter) -> bool {
        let si = match self.sdc.lookup(d.sa, d.sl) {
            Some(si) => {
                self.sdc.touch(si);
                self.sdc_hits += 1;
                si as u16
            }
            None => {
                self.sdc.fill(d.sa, d.sl);
                self.misses.push(*d);
                0
            }
        };
        self.tuple.push(si);
        if self.tuple.len() == self.cfg.tuple as usize {
            self.flush_tuple(out, false);
        }
        si == 0
    }

    fn flush_tuple(&mut self, out: &mut BitWriter, last: bool) {
        self.tuples += 1;
        let hit = if last { None } else { self.table.lookup(&self.tuple) };
        match hit {
            Some(i) => {
                self.tuple_hits += 1;
                self.table.touch(i);
                out.put(i as u64, self.index_bits);
            }
            None => {
                out.put(0, self.index_bits);
                for &si in &self.tuple {
                    out.put(si as u64, self.k);
                }
                if !last {
                    self.table.insert(&self.tuple);
                }
            }
        }
        let low = self.cfg.low_bits();
        for d in &self.misses {
            out.put(d.sl as u64, self.slw);
            out.put((d.sa >> low) as u64, addr_bits(&self.cfg));
        }
        self.tuple.clear();
        self.misses.clear();
    }

    /// End of trace: the partial tuple padded with SI = 0, the first padding descriptor
    /// SL = 0, then zero bits to a byte.
    pub fn finish(&mut self, out: &mut BitWriter) {
        self.tuple.resize(self.cfg.tuple as usize, 0);
        // flush_tuple writes the real misses' descriptors; the end marker is the first
        // padding entry's.
        self.flush_tuple(out, true);
        out.put(0, self.slw);
        out.pad_to_byte();
    }
}

/// Decoder: tuple records back to stream descriptors (start addresses are always known).
pub struct TupleDecoder<'a> {
    cfg: Config,
    bits: BitReader<'a>,
    sdc: StreamDescriptorCache,
    table: TupleTable,
    k: u32,
    index_bits: u32,
    slw: u32,
    /// Stream indices of the current tuple not yet returned.
    pending: Vec<u16>,
    next: usize,
    ended: bool,
}

impl<'a> TupleDecoder<'a> {
    pub fn new(cfg: &Config, bytes: &'a [u8]) -> Self {
        TupleDecoder {
            cfg: *cfg,
            bits: BitReader::new(bytes),
            sdc: StreamDescriptorCache::new(&sdc_config(cfg)),
            table: TupleTable::new(cfg.param),
            k: cfg.index_bits(),
            index_bits: (cfg.param + 1).trailing_zeros(),
            slw: cfg.sl_bits(),
            pending: Vec::new(),
            next: 0,
            ended: false,
        }
    }

    pub fn position(&self) -> u64 {
        self.bits.position()
    }

    /// The same decoder reading another window of the input, whose first byte is absolute
    /// bit `base` (a streaming decoder's buffer; see [`BitReader::rebased`]).
    pub fn rebind<'b>(self, bytes: &'b [u8], base: u64) -> TupleDecoder<'b> {
        TupleDecoder {
            cfg: self.cfg,
            bits: self.bits.rebased(bytes, base),
            sdc: self.sdc,
            table: self.table,
            k: self.k,
            index_bits: self.index_bits,
            slw: self.slw,
            pending: self.pending,
            next: self.next,
            ended: self.ended,
        }
    }

    fn read(&mut self, n: u32, offset: u64) -> Result<u64, TokenError> {
        self.bits.get(n).map_err(|_| TokenError { offset, reason: "trace truncated inside a record".into(), truncated: true })
    }

    pub fn next_token(&mut self) -> Result<Option<Token>, TokenError> {
        if self.ended {
            return Ok(None);
        }
        if self.next == self.pending.len() {
            let offset = self.bits.position();
            let index = self.read(self.index_bits, offset)? as usize;
            self.pending.clear();
            self.next = 0;
            if index == 0 {
                for _ in 0..self.cfg.tuple {
                    let si = self.read(self.k, offset)? as u16;
                    self.pending.push(si);
                }
                // The encoder does not insert the final, padded tuple; inserting it here
                // is harmless because nothing is read after its end marker.
                let t = self.pending.clone();
                self.table.insert(&t);
            } else {
                let t = self
                    .table
                    .get(index)
                    .ok_or_else(|| TokenError { offset, reason: format!("tuple index {index} names an empty table entry"), truncated: false })?
                    .to_vec();
                self.table.touch(index);
                self.pending = t;
            }
        }
        let offset = self.bits.position();
        let si = self.pending[self.next];
        self.next += 1;
        if si == 0 {
            let sl = self.read(self.slw, offset)? as u32;
            if sl == 0 {
                self.ended = true;
                return Ok(Some(Token::End));
            }
            if sl > self.cfg.max_sl {
                return Err(TokenError { offset, reason: format!("SL {sl} exceeds maxsl {}", self.cfg.max_sl), truncated: false });
            }
            let sa = (self.read(addr_bits(&self.cfg), offset)? as u32) << self.cfg.low_bits();
            if self.sdc.lookup(sa, sl).is_some() {
                return Err(TokenError { offset, reason: format!("SDC miss record for ({sa:#x}, {sl}), which the SDC holds"), truncated: false });
            }
            self.sdc.fill(sa, sl);
            Ok(Some(Token::Stream { sa: Some(sa), sl }))
        } else {
            let (sa, sl) = self
                .sdc
                .entry(si as u32)
                .ok_or_else(|| TokenError { offset, reason: format!("stream index {si} names an empty SDC entry"), truncated: false })?;
            self.sdc.touch(si as u32);
            Ok(Some(Token::Stream { sa: Some(sa), sl }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(sa: u32, sl: u32) -> StreamDescriptor {
        StreamDescriptor { sa, sl, ..Default::default() }
    }

    fn round_trip(cfg: &str, streams: &[StreamDescriptor]) -> (Vec<u8>, TupleEncoder) {
        let cfg: Config = cfg.parse().unwrap();
        let mut enc = TupleEncoder::new(&cfg);
        let mut out = BitWriter::new();
        for s in streams {
            enc.push(s, &mut out);
        }
        enc.finish(&mut out);
        let bytes = out.into_bytes();
        let mut dec = TupleDecoder::new(&cfg, &bytes);
        let mut got = Vec::new();
        while let Some(t) = dec.next_token().unwrap() {
            match t {
                Token::Stream { sa: Some(sa), sl } => got.push(d(sa, sl)),
                Token::End => break,
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(got, streams);
        (bytes, enc)
    }

    #[test]
    fn a_loop_hits_the_tuple_table() {
        // Two streams alternating: tuples of 4 SIs repeat after the SDC warms up.
        let streams: Vec<StreamDescriptor> =
            (0..64).map(|i| if i % 2 == 0 { d(0x8000, 5) } else { d(0x8100, 7) }).collect();
        let (bytes, enc) = round_trip("sct8ht-16x4-15x4", &streams);
        assert_eq!(enc.tuples, 17); // 16 full tuples and the final padded one
        // Tuple 1 holds the two misses; tuple 2 is new (both hits); tuples 3..16 hit.
        assert_eq!(enc.tuple_hits, 14);
        // Hand count: tuple 1 = 4 + 4*6 + 2*(8+32); tuple 2 = 4 + 24; 14 hits of 4 bits;
        // end = 4 + 24 + 8, padded to a byte.
        let bits = (4 + 24 + 80) + (4 + 24) + 14 * 4 + (4 + 24 + 8);
        assert_eq!(bytes.len(), (bits as usize).div_ceil(8));
    }

    #[test]
    fn many_streams_round_trip() {
        let mut x = 12345u32;
        let streams: Vec<StreamDescriptor> = (0..5000)
            .map(|_| {
                x = x.wrapping_mul(1664525).wrapping_add(1013904223);
                d(((x >> 8) % 300) * 4, 1 + (x >> 24) % 40)
            })
            .collect();
        round_trip("sct8ht-32x4-255x8", &streams);
        round_trip("sct8ht-8x2-3x1,shift=2", &streams);
        let arm: Vec<StreamDescriptor> = streams.iter().map(|s| d(s.sa & !3, s.sl)).collect();
        round_trip("sct8ht-32x4-255x8,isa=arm", &arm);
    }

    #[test]
    fn corrupt_input_is_an_error() {
        let cfg: Config = "sct8ht-16x4-15x4".parse().unwrap();
        // Tuple index 3 before anything was stored.
        let bytes = [0x30u8, 0, 0, 0];
        let e = TupleDecoder::new(&cfg, &bytes).next_token().unwrap_err();
        assert!(e.reason.contains("empty table entry"), "{e:?}");
        // A miss tuple whose first SI names an empty SDC entry.
        let mut out = BitWriter::new();
        out.put(0, 4);
        out.put(5, 6);
        out.pad_to_byte();
        let bytes = out.into_bytes();
        let e = TupleDecoder::new(&cfg, &bytes).next_token().unwrap_err();
        assert!(e.reason.contains("empty SDC entry") || e.reason.contains("truncated"), "{e:?}");
    }
}

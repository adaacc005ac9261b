//! Bit-level I/O, MSB first (docs/trace-format.md section 1). Shared by the encoder, the
//! decoder and the record dumper so that there is exactly one notion of bit order.

/// Appends bits MSB first into bytes.
#[derive(Clone, Debug, Default)]
pub struct BitWriter {
    bytes: Vec<u8>,
    /// Pending bits: the low `nacc` bits of `acc` (higher bits are stale and never read).
    acc: u64,
    /// Always below 32 between calls: whole 32-bit words are flushed at once.
    nacc: u32,
}

impl BitWriter {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_capacity(bytes: usize) -> Self {
        BitWriter { bytes: Vec::with_capacity(bytes), acc: 0, nacc: 0 }
    }

    /// Append the low `n <= 32` bits of `value`, most significant first.
    #[inline]
    fn put32(&mut self, value: u64, n: u32) {
        debug_assert!(n <= 32);
        if n == 0 {
            return;
        }
        let mask = (1u64 << n) - 1;
        self.acc = (self.acc << n) | (value & mask);
        self.nacc += n;
        if self.nacc >= 32 {
            self.nacc -= 32;
            self.bytes.extend_from_slice(&((self.acc >> self.nacc) as u32).to_be_bytes());
        }
    }

    /// Append the low `n` bits of `value`, most significant first. `n <= 57`.
    #[inline]
    pub fn put(&mut self, value: u64, n: u32) {
        debug_assert!(n <= 57);
        self.put_wide(value, n);
    }

    /// Append up to 64 bits.
    #[inline]
    pub fn put_wide(&mut self, value: u64, n: u32) {
        if n > 32 {
            self.put32(value >> 32, n - 32);
            self.put32(value & 0xFFFF_FFFF, 32);
        } else {
            self.put32(value, n);
        }
    }

    /// Zero bits up to the next byte boundary.
    pub fn pad_to_byte(&mut self) {
        let rem = self.nacc % 8;
        if rem > 0 {
            self.put32(0, 8 - rem);
        }
        while self.nacc >= 8 {
            self.nacc -= 8;
            self.bytes.push((self.acc >> self.nacc) as u8);
        }
    }

    /// Number of bits written so far.
    #[inline]
    pub fn bit_len(&self) -> u64 {
        self.bytes.len() as u64 * 8 + self.nacc as u64
    }

    /// The bytes, with a partial last byte padded by zero bits.
    pub fn into_bytes(mut self) -> Vec<u8> {
        self.pad_to_byte();
        self.bytes
    }
}

/// Reading ran past the end of the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutOfBits {
    /// Bit offset at which the read started.
    pub offset: u64,
}

/// Reads bits MSB first from a byte slice.
#[derive(Clone, Debug)]
pub struct BitReader<'a> {
    bytes: &'a [u8],
    /// Bit position of the next bit, within `bytes`.
    pos: u64,
    limit: u64,
    /// Absolute bit position of `bytes[0]` (a streaming decoder reads a window of a longer
    /// input); positions and offsets the reader reports are absolute.
    base: u64,
}

impl<'a> BitReader<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        BitReader { bytes, pos: 0, limit: bytes.len() as u64 * 8, base: 0 }
    }

    /// The same absolute position over another window of the input: `bytes[0]` is absolute
    /// bit `base` (a multiple of 8). A position before the window moves to its start.
    pub fn rebased<'b>(&self, bytes: &'b [u8], base: u64) -> BitReader<'b> {
        debug_assert!(base.is_multiple_of(8));
        // Not clamped to the end: an empty window keeps the position for the next rebase.
        BitReader { bytes, pos: self.position().saturating_sub(base), limit: bytes.len() as u64 * 8, base }
    }

    /// A reader over the first `bit_len` bits only.
    pub fn with_bit_len(bytes: &'a [u8], bit_len: u64) -> Self {
        let limit = bit_len.min(bytes.len() as u64 * 8);
        BitReader { bytes, pos: 0, limit, base: 0 }
    }

    #[inline]
    pub fn position(&self) -> u64 {
        self.base + self.pos
    }

    #[inline]
    pub fn remaining(&self) -> u64 {
        self.limit.saturating_sub(self.pos)
    }

    /// Move to absolute bit `pos` (clamped to the window).
    pub fn seek(&mut self, pos: u64) {
        self.pos = pos.saturating_sub(self.base).min(self.limit);
    }

    /// Read `n <= 64` bits as an unsigned value.
    #[inline]
    pub fn get(&mut self, n: u32) -> Result<u64, OutOfBits> {
        debug_assert!(n <= 64);
        if n == 0 {
            return Ok(0);
        }
        if self.remaining() < n as u64 {
            return Err(OutOfBits { offset: self.position() });
        }
        if n > 56 {
            let hi = self.get(n - 32)?;
            let lo = self.get(32)?;
            return Ok((hi << 32) | lo);
        }
        // One big-endian 8-byte load covers any field of up to 56 bits at any bit offset.
        let b = (self.pos >> 3) as usize;
        let word = match self.bytes.get(b..b + 8) {
            Some(w) => u64::from_be_bytes(w.try_into().expect("8 bytes")),
            None => {
                let mut w = [0u8; 8];
                let tail = &self.bytes[b..];
                w[..tail.len()].copy_from_slice(tail);
                u64::from_be_bytes(w)
            }
        };
        let v = (word << (self.pos & 7)) >> (64 - n);
        self.pos += n as u64;
        Ok(v)
    }

    #[inline]
    pub fn get_bit(&mut self) -> Result<bool, OutOfBits> {
        if self.pos >= self.limit {
            return Err(OutOfBits { offset: self.position() });
        }
        let byte = self.bytes[(self.pos >> 3) as usize];
        let bit = (byte >> (7 - (self.pos & 7))) & 1;
        self.pos += 1;
        Ok(bit == 1)
    }

    /// Skip to the next byte boundary, returning the skipped bits (which the format
    /// requires to be zero).
    pub fn align_to_byte(&mut self) -> Result<u64, OutOfBits> {
        let rem = (8 - (self.pos & 7)) & 7;
        self.get(rem as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn msb_first_packing() {
        let mut w = BitWriter::new();
        w.put(0b0, 1);
        w.put(0b011000, 6);
        w.put(1, 1);
        w.put(0xABC, 12);
        assert_eq!(w.bit_len(), 20);
        let bytes = w.into_bytes();
        assert_eq!(bytes, vec![0b0011_0001, 0xAB, 0xC0]);
    }

    #[test]
    fn reader_reports_offset_when_truncated() {
        let data = [0xFFu8];
        let mut r = BitReader::new(&data);
        assert_eq!(r.get(5).unwrap(), 0b11111);
        assert_eq!(r.get(4), Err(OutOfBits { offset: 5 }));
        assert_eq!(r.position(), 5);
    }

    proptest! {
        #[test]
        fn roundtrip(fields in proptest::collection::vec((any::<u64>(), 0u32..=64), 0..200)) {
            let mut w = BitWriter::new();
            for &(v, n) in &fields { w.put_wide(v, n); }
            let len = w.bit_len();
            let bytes = w.into_bytes();
            let mut r = BitReader::with_bit_len(&bytes, len);
            for &(v, n) in &fields {
                let mask = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
                prop_assert_eq!(r.get(n).unwrap(), v & mask);
            }
            prop_assert_eq!(r.remaining(), 0);
        }
    }
}

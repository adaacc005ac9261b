//! The cursor interface the WET queries walk, with two implementations: an uncompressed
//! sequence (what the builder fills, and the tier-1 form) and the tier-2 [`BiStream`].

use super::bidir::BiStream;

/// A sequence of values with a cursor between two values, moved one value at a time.
pub trait Cursor {
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Values before the cursor.
    fn position(&self) -> usize;
    /// The value after the cursor; the cursor moves past it.
    fn fwd(&mut self) -> Option<u64>;
    /// The value before the cursor; the cursor moves before it.
    fn back(&mut self) -> Option<u64>;
    fn peek_next(&self) -> Option<u64>;
    fn peek_prev(&self) -> Option<u64>;
    /// Move the cursor to `pos` (clamped to the length).
    fn seek(&mut self, pos: usize);
    /// Stored size in bits (values of `width` bits for the uncompressed form).
    fn stored_bits(&self, width: u32) -> u64;
}

/// An uncompressed sequence with a cursor (starts at the end, like a built [`BiStream`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RawStream {
    values: Vec<u64>,
    pos: usize,
}

impl RawStream {
    /// Append at the end; the cursor stays at the end.
    pub fn push(&mut self, v: u64) {
        self.values.push(v);
        self.pos = self.values.len();
    }

    pub fn values(&self) -> &[u64] {
        &self.values
    }
}

impl From<Vec<u64>> for RawStream {
    fn from(values: Vec<u64>) -> Self {
        RawStream { pos: values.len(), values }
    }
}

impl Cursor for RawStream {
    fn len(&self) -> usize {
        self.values.len()
    }
    fn position(&self) -> usize {
        self.pos
    }
    fn fwd(&mut self) -> Option<u64> {
        let v = *self.values.get(self.pos)?;
        self.pos += 1;
        Some(v)
    }
    fn back(&mut self) -> Option<u64> {
        self.pos = self.pos.checked_sub(1)?;
        Some(self.values[self.pos])
    }
    fn peek_next(&self) -> Option<u64> {
        self.values.get(self.pos).copied()
    }
    fn peek_prev(&self) -> Option<u64> {
        self.pos.checked_sub(1).map(|i| self.values[i])
    }
    fn seek(&mut self, pos: usize) {
        self.pos = pos.min(self.values.len());
    }
    fn stored_bits(&self, width: u32) -> u64 {
        self.values.len() as u64 * width as u64
    }
}
impl Cursor for BiStream {
    fn len(&self) -> usize {
        BiStream::len(self)
    }
    fn position(&self) -> usize {
        BiStream::position(self)
    }
    fn fwd(&mut self) -> Option<u64> {
        BiStream::fwd(self)
    }
    fn back(&mut self) -> Option<u64> {
        BiStream::back(self)
    }
    fn peek_next(&self) -> Option<u64> {
        BiStream::peek_next(self)
    }
    fn peek_prev(&self) -> Option<u64> {
        BiStream::peek_prev(self)
    }
    fn seek(&mut self, pos: usize) {
        BiStream::seek(self, pos)
    }
    fn stored_bits(&self, _width: u32) -> u64 {
        BiStream::stored_bits(self)
    }
}

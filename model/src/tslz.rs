//! TSLZ, the trace-specific LZ compressor of Kao et al. as the paper describes it
//! (docs/trace-format.md section 10.1): streams become 12-bit words (header, difference-
//! encoded start address when it is not inferable, exception and end words), and a
//! hardware-style LZ77 with a window of `W` words turns them into fixed-size records
//! `index | length(7) | word(12)`.

use std::collections::VecDeque;

use crate::bits::{BitReader, BitWriter};
use crate::detector::StreamDescriptor;

/// Header word: `1 | a | SL[9:0]`.
const HEADER: u16 = 0x800;
const ADDRESS_FOLLOWS: u16 = 0x400;
/// `1 | 1 | 0`: the previous stream ended because of an exception.
pub const EXCEPTION_WORD: u16 = 0xC00;
/// `1 | 0 | 0`: the end of the trace.
pub const END_WORD: u16 = 0x800;
/// Address word: `0 | m | g[9:0]`.
const MORE: u16 = 0x400;
pub const MAX_MATCH: usize = 127;
const LENGTH_BITS: u32 = 7;
const WORD_BITS: u32 = 12;

fn zigzag(d: i32) -> u32 {
    ((d << 1) ^ (d >> 31)) as u32
}

fn unzigzag(v: u32) -> i32 {
    (v >> 1) as i32 ^ -((v & 1) as i32)
}

/// Stage 1: the words of one stream.
pub fn stream_words(d: &StreamDescriptor, inferable: bool, prev_sa: u32, out: &mut impl FnMut(u16)) {
    debug_assert!((1..1024).contains(&d.sl));
    out(HEADER | if inferable { 0 } else { ADDRESS_FOLLOWS } | d.sl as u16);
    if !inferable {
        let mut z = zigzag(d.sa.wrapping_sub(prev_sa) as i32);
        loop {
            let g = (z & 0x3FF) as u16;
            z >>= 10;
            if z == 0 {
                out(g);
                break;
            }
            out(MORE | g);
        }
    }
    if d.exception {
        out(EXCEPTION_WORD);
    }
}

/// Stage 2 encoder: streaming LZ77 over 12-bit words. A record is decided when the next
/// word cannot extend the current match (that word is the literal) or the match reached
/// 127 words, as a hardware matcher that compares each incoming word against the window.
pub struct LzEncoder {
    window: usize,
    index_bits: u32,
    /// The words from absolute position `base` on (the window and the pending record).
    history: Vec<u16>,
    base: usize,
    /// Positions of each word value in `history`, oldest first (pruned to the window).
    positions: Vec<VecDeque<u32>>,
    /// Where the pending record's words start in `history`.
    record_start: usize,
    /// Start positions of the pending record's first word in the window when the record
    /// began, ascending. `candidates[..top]` holds every position whose continuation
    /// still equals the pending words, and `candidates[top - 1]` is one of them: the
    /// nearest, the one a record names. (Only the nearest is checked word by word; one
    /// below it is checked against all pending words when the nearest fails, so each
    /// word costs one comparison instead of one per candidate.)
    candidates: Vec<u32>,
    top: usize,
    /// The best candidate for the pending words without their last word.
    best_before_last: Option<u32>,
    pub records: u64,
}

impl LzEncoder {
    pub fn new(window: u32) -> Self {
        LzEncoder {
            window: window as usize,
            index_bits: window.trailing_zeros(),
            history: Vec::new(),
            base: 0,
            positions: vec![VecDeque::new(); 4096],
            record_start: 0,
            candidates: Vec::new(),
            top: 0,
            best_before_last: None,
            records: 0,
        }
    }

    pub fn record_bits(&self) -> u32 {
        self.index_bits + LENGTH_BITS + WORD_BITS
    }

    /// Absolute position of the next word.
    fn end(&self) -> usize {
        self.base + self.history.len()
    }

    fn pending(&self) -> usize {
        self.end() - self.record_start
    }

    /// Keep memory bounded on long traces: drop words that left the window.
    fn compact(&mut self) {
        let keep_from = self.record_start.saturating_sub(self.window);
        if keep_from > self.base + 4 * self.window + 4096 {
            self.history.drain(..keep_from - self.base);
            self.base = keep_from;
            for list in &mut self.positions {
                while list.front().is_some_and(|&p| (p as usize) < keep_from) {
                    list.pop_front();
                }
            }
        }
    }

    fn emit(&mut self, out: &mut BitWriter, start: Option<u32>, len: usize, word: u16) {
        let index = match start {
            Some(s) if len > 0 => (self.record_start as u32 - s - 1) as u64,
            _ => 0,
        };
        out.put(index, self.index_bits);
        out.put(len as u64, LENGTH_BITS);
        out.put(word as u64, WORD_BITS);
        self.records += 1;
    }

    /// Close the pending record with `word` as its literal; `word` is already the last
    /// element of `history`.
    fn close(&mut self, out: &mut BitWriter, start: Option<u32>, len: usize, word: u16) {
        self.emit(out, start, len, word);
        self.record_start = self.end();
        self.candidates.clear();
        self.top = 0;
        self.best_before_last = None;
    }

    /// The nearest candidate for the pending words.
    fn best(&self) -> Option<u32> {
        self.top.checked_sub(1).map(|i| self.candidates[i])
    }

    pub fn push(&mut self, w: u16, out: &mut BitWriter) {
        let pos = self.end() as u32;
        let len = self.pending();
        let lowest = self.record_start.saturating_sub(self.window) as u32;
        self.history.push(w);
        if len == MAX_MATCH {
            let best = self.best();
            self.close(out, best, len, w);
        } else if len == 0 {
            let list = &mut self.positions[w as usize];
            while list.front().is_some_and(|&p| p < lowest) {
                list.pop_front();
            }
            self.candidates.clear();
            self.candidates.extend(list.iter().copied());
            self.top = self.candidates.len();
            if self.candidates.is_empty() {
                self.close(out, None, 0, w);
            } else {
                self.best_before_last = None;
            }
        } else {
            let best = self.best();
            let (history, base) = (&self.history, self.base);
            // The pending words with `w`, and the nearest candidate that continues with all
            // of them (those above it failed on an earlier word or on `w`).
            let pending = &history[self.record_start - base..];
            let mut t = self.top;
            if history[self.candidates[t - 1] as usize - base + len] != w {
                t -= 1;
                while t > 0 {
                    let s = self.candidates[t - 1] as usize - base;
                    if history[s..=s + len] == *pending {
                        break;
                    }
                    t -= 1;
                }
            }
            self.top = t;
            if t == 0 {
                self.close(out, best, len, w);
            } else {
                self.best_before_last = best;
            }
        }
        self.positions[w as usize].push_back(pos);
        if self.record_start == self.end() {
            self.compact();
        }
    }

    /// End of input: the last word pushed (the end word) must close a record.
    pub fn finish(&mut self, out: &mut BitWriter) {
        let len = self.pending();
        if len > 0 {
            let word = *self.history.last().expect("pending words");
            let start = self.best_before_last;
            self.close(out, start, len - 1, word);
        }
    }
}

/// One decoded stream (or marker) of a competitor scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Token {
    /// A stream; `sa` is None when it is inferable (the decoder takes it from the image).
    Stream { sa: Option<u32>, sl: u32 },
    /// The previous stream ended because of an exception.
    Exception,
    End,
}

/// A decoding error with the bit offset of the record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenError {
    pub offset: u64,
    pub reason: String,
    /// The input ended inside a record.
    pub truncated: bool,
}

/// Decoder: records back to words, words back to tokens (stateful across calls).
pub struct TslzDecoder<'a> {
    bits: BitReader<'a>,
    index_bits: u32,
    /// Words from absolute position `base` on; `cursor` is absolute.
    history: Vec<u16>,
    base: usize,
    window: usize,
    cursor: usize,
    prev_sa: u32,
    ended: bool,
    /// Bit offset of the record that produced each word in `history`.
    offsets: Vec<u64>,
}

impl<'a> TslzDecoder<'a> {
    pub fn new(window: u32, bytes: &'a [u8]) -> Self {
        TslzDecoder {
            bits: BitReader::new(bytes),
            index_bits: window.trailing_zeros(),
            history: Vec::new(),
            base: 0,
            window: window as usize,
            cursor: 0,
            prev_sa: 0,
            ended: false,
            offsets: Vec::new(),
        }
    }

    /// Decode one record into `history`.
    fn record(&mut self) -> Result<(), TokenError> {
        let offset = self.bits.position();
        let err = |reason: String| TokenError { offset, reason, truncated: false };
        let truncated = |_| TokenError { offset, reason: "trace truncated inside a record".into(), truncated: true };
        let index = self.bits.get(self.index_bits).map_err(truncated)? as usize;
        let len = self.bits.get(LENGTH_BITS).map_err(truncated)? as usize;
        let word = self.bits.get(WORD_BITS).map_err(truncated)? as u16;
        if len > 0 {
            let n = self.base + self.history.len();
            if index >= n {
                return Err(err(format!("match {} words back, but only {n} words precede it", index + 1)));
            }
            let from = self.history.len() - index - 1;
            for i in 0..len {
                let w = self.history[from + i];
                self.history.push(w);
                self.offsets.push(offset);
            }
        } else if index != 0 {
            return Err(err(format!("literal record with index {index} (must be 0)")));
        }
        self.history.push(word);
        self.offsets.push(offset);
        Ok(())
    }

    fn next_word(&mut self) -> Result<(u16, u64), TokenError> {
        while self.cursor >= self.base + self.history.len() {
            // Words that are consumed and out of the window are never needed again.
            let keep_from = self.cursor.min(self.base + self.history.len()).saturating_sub(self.window);
            if keep_from > self.base + 4 * self.window + 4096 {
                self.history.drain(..keep_from - self.base);
                self.offsets.drain(..keep_from - self.base);
                self.base = keep_from;
            }
            self.record()?;
        }
        let w = self.history[self.cursor - self.base];
        let off = self.offsets[self.cursor - self.base];
        self.cursor += 1;
        Ok((w, off))
    }

    /// The next token, or None after END.
    pub fn next_token(&mut self) -> Result<Option<Token>, TokenError> {
        if self.ended {
            return Ok(None);
        }
        let (w, offset) = self.next_word()?;
        if w & HEADER == 0 {
            return Err(TokenError { offset, reason: format!("address word {w:#05x} where a stream header was expected"), truncated: false });
        }
        match w {
            END_WORD => {
                self.ended = true;
                return Ok(Some(Token::End));
            }
            EXCEPTION_WORD => return Ok(Some(Token::Exception)),
            _ => {}
        }
        let sl = (w & 0x3FF) as u32;
        if w & ADDRESS_FOLLOWS == 0 {
            return Ok(Some(Token::Stream { sa: None, sl }));
        }
        let mut z: u64 = 0;
        for group in 0..4 {
            let (g, off) = self.next_word()?;
            if g & HEADER != 0 {
                return Err(TokenError { offset: off, reason: format!("header word {g:#05x} inside an address"), truncated: false });
            }
            z |= ((g & 0x3FF) as u64) << (10 * group);
            if g & MORE == 0 {
                let z = u32::try_from(z).map_err(|_| TokenError { offset: off, reason: "address difference exceeds 32 bits".into(), truncated: false })?;
                let sa = self.prev_sa.wrapping_add(unzigzag(z) as u32);
                return Ok(Some(Token::Stream { sa: Some(sa), sl }));
            }
        }
        Err(TokenError { offset, reason: "address longer than four words".into(), truncated: false })
    }

    /// After a stream was replayed: its start address, for the next difference.
    pub fn set_prev_sa(&mut self, sa: u32) {
        self.prev_sa = sa;
    }

    pub fn position(&self) -> u64 {
        self.bits.position()
    }

    /// The same decoder reading another window of the input, whose first byte is absolute
    /// bit `base` (a streaming decoder's buffer; see [`BitReader::rebased`]).
    pub fn rebind<'b>(self, bytes: &'b [u8], base: u64) -> TslzDecoder<'b> {
        TslzDecoder {
            bits: self.bits.rebased(bytes, base),
            index_bits: self.index_bits,
            history: self.history,
            base: self.base,
            window: self.window,
            cursor: self.cursor,
            prev_sa: self.prev_sa,
            ended: self.ended,
            offsets: self.offsets,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(words: &[u16], window: u32) -> (Vec<u8>, u64) {
        let mut lz = LzEncoder::new(window);
        let mut out = BitWriter::new();
        for &w in words {
            lz.push(w, &mut out);
        }
        lz.finish(&mut out);
        out.pad_to_byte();
        (out.into_bytes(), lz.records)
    }

    fn decode_words(bytes: &[u8], window: u32, n: usize) -> Vec<u16> {
        let mut d = TslzDecoder::new(window, bytes);
        assert!(n < 4096, "the test reads the whole history");
        while d.history.len() < n {
            d.record().unwrap();
        }
        d.history
    }

    /// The records by definition (trace-format.md 10.1), from the whole word sequence:
    /// the longest continuation (at most 127 words, a literal always follows) among start
    /// positions in the window, the nearest of those.
    fn encode_by_definition(words: &[u16], window: u32) -> (Vec<u8>, u64) {
        let mut out = BitWriter::new();
        let (mut r, mut records) = (0, 0);
        while r < words.len() {
            let cap = MAX_MATCH.min(words.len() - 1 - r);
            let (mut best, mut best_len) = (None, 0);
            for s in r.saturating_sub(window as usize)..r {
                let l = (0..cap).take_while(|&k| words[s + k] == words[r + k]).count();
                if l > 0 && l >= best_len {
                    (best, best_len) = (Some(s), l);
                }
            }
            let index = best.map_or(0, |s| (r - s - 1) as u64);
            out.put(index, window.trailing_zeros());
            out.put(best_len as u64, LENGTH_BITS);
            out.put(words[r + best_len] as u64, WORD_BITS);
            records += 1;
            r += best_len + 1;
        }
        out.pad_to_byte();
        (out.into_bytes(), records)
    }

    #[test]
    fn the_streaming_matcher_gives_the_records_of_the_definition() {
        // Small alphabets give long matches and many candidates; the lengths pass the
        // history compaction of the small windows and the 127-word limit.
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        for (alphabet, window, n) in [(2, 4, 9000), (3, 16, 9000), (5, 256, 6000), (2, 1024, 3000), (40, 64, 5000)] {
            let mut words: Vec<u16> = (0..n)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x % alphabet) as u16
                })
                .collect();
            // A long repeat (past 127 words) in the middle.
            let copy: Vec<u16> = words[100..400].to_vec();
            words.splice(2000..2000, copy);
            assert_eq!(encode(&words, window), encode_by_definition(&words, window), "alphabet {alphabet} window {window}");
        }
    }

    #[test]
    fn hand_worked_records() {
        // a b a b a b END with W = 16 (index 4 bits, 23-bit records):
        // (0,0,a) (0,0,b) (1,3,a)?  No: after "a b", "a b a b" matches 2 back with overlap;
        // the match grows to 4 words ("a b a b"), then END breaks it: (index 1, len 4, END).
        let (a, b) = (0x123, 0x456);
        let (bytes, records) = encode(&[a, b, a, b, a, b, END_WORD], 16);
        assert_eq!(records, 3);
        let mut r = BitReader::new(&bytes);
        let rec = |r: &mut BitReader| (r.get(4).unwrap(), r.get(7).unwrap(), r.get(12).unwrap());
        assert_eq!(rec(&mut r), (0, 0, a as u64));
        assert_eq!(rec(&mut r), (0, 0, b as u64));
        assert_eq!(rec(&mut r), (1, 4, END_WORD as u64));
        assert_eq!(decode_words(&bytes, 16, 7), vec![a, b, a, b, a, b, END_WORD]);
    }

    #[test]
    fn matches_stop_at_127_words_and_the_window() {
        let mut words = vec![7u16; 300];
        words.push(END_WORD);
        let (bytes, records) = encode(&words, 256);
        // (0,0,7), then (0,127,7) twice covers 256 more, then 43 sevens and END.
        assert_eq!(records, 4);
        assert_eq!(decode_words(&bytes, 256, words.len()), words);
        // A repeat further back than the window is not found.
        let mut far: Vec<u16> = (0..20).collect();
        far.extend(100..140);
        far.extend(0..20);
        far.push(END_WORD);
        let (_, near_records) = encode(&far, 64);
        let (_, small_records) = encode(&far, 16);
        assert!(small_records > near_records, "{small_records} vs {near_records}");
    }

    #[test]
    fn stream_words_round_trip_through_tokens() {
        let streams = [
            StreamDescriptor { sa: 0x8000, sl: 5, ..Default::default() },
            StreamDescriptor { sa: 0x7ff0, sl: 1023, exception: true, ..Default::default() },
            StreamDescriptor { sa: 0xFFFF_FFFF, sl: 1, ..Default::default() },
            StreamDescriptor { sa: 0x1000, sl: 3, ..Default::default() },
        ];
        let inferable = [false, false, false, true];
        let mut words = Vec::new();
        let mut prev = 0;
        for (d, &inf) in streams.iter().zip(&inferable) {
            stream_words(d, inf, prev, &mut |w| words.push(w));
            prev = d.sa;
        }
        words.push(END_WORD);
        let (bytes, _) = encode(&words, 256);
        let mut dec = TslzDecoder::new(256, &bytes);
        let mut got = Vec::new();
        while let Some(t) = dec.next_token().unwrap() {
            if let Token::Stream { sa: Some(sa), .. } = t {
                dec.set_prev_sa(sa);
            }
            got.push(t);
        }
        assert_eq!(
            got,
            vec![
                Token::Stream { sa: Some(0x8000), sl: 5 },
                Token::Stream { sa: Some(0x7ff0), sl: 1023 },
                Token::Exception,
                Token::Stream { sa: Some(0xFFFF_FFFF), sl: 1 },
                Token::Stream { sa: None, sl: 3 },
                Token::End,
            ]
        );
    }

    #[test]
    fn corrupt_records_are_errors() {
        // A match that reaches before the first word.
        let mut out = BitWriter::new();
        out.put(5, 8);
        out.put(3, 7);
        out.put(0x801, 12);
        out.pad_to_byte();
        let bytes = out.into_bytes();
        let e = TslzDecoder::new(256, &bytes).next_token().unwrap_err();
        assert!(e.reason.contains("words back"), "{e:?}");
        let e = TslzDecoder::new(256, &[0x00]).next_token().unwrap_err();
        assert!(e.reason.contains("truncated"), "{e:?}");
    }
}

//! The binary range coder of `pft` (docs/trace-format.md section 11.6): adaptive 14-bit
//! probabilities, 32-bit range, byte output with carry resolution, and zero-run stuffing so
//! that coded bytes never contain the sync marker's 15 zero bytes.
//!
//! The encoder and the decoder are written side by side so the two cannot drift apart.

/// Probabilities are 14-bit: `p` is the probability of a *miss* (symbol 0) in 1/16384.
pub const PROB_BITS: u32 = 14;
const PROB_ONE: u32 = 1 << PROB_BITS;
/// Initial probability of a context: 1/2.
pub const PROB_INIT: u16 = (PROB_ONE / 2) as u16;
/// The escape flag has the fixed probability 2^-16 (a shift, no multiply).
pub const ESCAPE_SHIFT: u32 = 16;
const TOP: u32 = 1 << 24;
/// Widest raw field coded in one step.
pub const RAW_MAX_BITS: u32 = 16;
/// After this many consecutive zero bytes of coded data a stuffing byte 0x01 follows.
pub const ZERO_RUN_LIMIT: u32 = 14;
pub const STUFF_BYTE: u8 = 0x01;
/// Most bytes the coder holds back (the cached byte and the 0xFF bytes behind it): at this
/// count a further 0xFF byte truncates the range so no carry can come (section 11.6).
pub const PENDING_MAX: u8 = 4;

/// One shift of `low` (trace-format.md 11.6) on the state encoder and decoder share:
/// returns whether the cached byte and the pending bytes are released, and the carry
/// they take. Truncates `range` at the pending limit.
#[inline]
fn shift_state(low: &mut u64, range: &mut u32, pending: &mut u8) -> Option<u8> {
    let released = if (*low as u32) < 0xFF00_0000 || (*low >> 32) != 0 {
        let carry = (*low >> 32) as u8;
        *pending = 1;
        Some(carry)
    } else if *pending < PENDING_MAX {
        *pending += 1;
        None
    } else {
        // Every later value stays below 2^32: the pending bytes and this 0xFF are final.
        *range = (*range).min(((1u64 << 32) - *low) as u32);
        *pending = 1;
        Some(0)
    };
    *low = (*low & 0x00FF_FFFF) << 8;
    released
}

/// One adaptive binary context: the probability of a miss.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prob(pub u16);

impl Default for Prob {
    fn default() -> Self {
        Prob(PROB_INIT)
    }
}

impl Prob {
    /// Update after coding `bit` (0 = miss, 1 = hit) with adaptation shift `rate`.
    #[inline(always)]
    pub fn update(&mut self, bit: bool, rate: u32) {
        let p = self.0 as u32;
        self.0 = if bit { p - (p >> rate) } else { p + ((PROB_ONE - p) >> rate) } as u16;
    }

    /// Cost of coding `bit` in bits (statistics only): `-log2` of the probability of `bit`,
    /// from a table (the same values: `1 - k / 2^14` is `(2^14 - k) / 2^14` exactly).
    #[inline]
    pub fn cost(&self, bit: bool) -> f64 {
        let k = if bit { PROB_ONE - self.0 as u32 } else { self.0 as u32 };
        cost_table()[k as usize]
    }
}

/// `-log2(k / 2^14)` for every `k` in `0..=2^14`, computed once.
fn cost_table() -> &'static [f64] {
    static TABLE: std::sync::OnceLock<Vec<f64>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| (0..=PROB_ONE).map(|k| -(k as f64 / PROB_ONE as f64).log2()).collect())
}

/// Range encoder writing into a byte vector.
#[derive(Clone, Debug)]
pub struct RangeEncoder {
    low: u64,
    range: u32,
    cache: u8,
    /// The cached byte and the 0xFF bytes behind it (1..=PENDING_MAX).
    pending: u8,
    /// The first byte the coder produces is always 0 and is not sent.
    first: bool,
    zeros: u32,
    /// Bytes each shift released since [`RangeEncoder::clear_shifts`] (stuffing included),
    /// for cycle mode's coder steps (docs/trace-timing.md section 7): at most 5 shifts per
    /// operation (a flush; 3 otherwise).
    shift_bytes: [u8; MAX_SHIFTS],
    shifts: u8,
}

/// Shifts one operation can make (a flush's five).
pub const MAX_SHIFTS: usize = 5;

impl Default for RangeEncoder {
    fn default() -> Self {
        Self::new()
    }
}

impl RangeEncoder {
    pub fn new() -> Self {
        RangeEncoder {
            low: 0,
            range: u32::MAX,
            cache: 0,
            pending: 1,
            first: true,
            zeros: 0,
            shift_bytes: [0; MAX_SHIFTS],
            shifts: 0,
        }
    }

    /// Forget the shifts logged so far (see [`RangeEncoder::shifts`]).
    #[inline]
    pub fn clear_shifts(&mut self) {
        self.shifts = 0;
    }

    /// `low` (with its carry bit 32), `range` and the pending count: for tests that steer
    /// the coder (the hardware block's pending-limit sequences).
    pub fn state(&self) -> (u64, u32, u8) {
        (self.low, self.range, self.pending)
    }

    /// The bytes each shift since [`RangeEncoder::clear_shifts`] released, in order.
    pub fn shifts(&self) -> &[u8] {
        &self.shift_bytes[..self.shifts as usize]
    }

    #[inline]
    fn emit(&mut self, b: u8, out: &mut Vec<u8>) {
        if self.first {
            debug_assert_eq!(b, 0, "the coder's first byte is always 0");
            self.first = false;
            return;
        }
        out.push(b);
        if b == 0 {
            self.zeros += 1;
            if self.zeros == ZERO_RUN_LIMIT {
                out.push(STUFF_BYTE);
                self.zeros = 0;
            }
        } else {
            self.zeros = 0;
        }
    }

    #[inline]
    fn shift_low(&mut self, out: &mut Vec<u8>) {
        let top = (self.low >> 24) as u8;
        let held = self.pending;
        let before = out.len();
        if let Some(carry) = shift_state(&mut self.low, &mut self.range, &mut self.pending) {
            self.emit(self.cache.wrapping_add(carry), out);
            for _ in 1..held {
                self.emit(0xFFu8.wrapping_add(carry), out);
            }
            // A release at the pending limit keeps its 0xFF as the new cached byte.
            self.cache = top;
        }
        // Without `clear_shifts` (functional mode) the log just stops at its end.
        if let Some(b) = self.shift_bytes.get_mut(self.shifts as usize) {
            *b = (out.len() - before) as u8;
            self.shifts += 1;
        }
    }

    #[inline]
    fn normalize(&mut self, out: &mut Vec<u8>) {
        while self.range < TOP {
            self.shift_low(out);
            self.range <<= 8;
        }
    }

    /// Code `bit` (1 = hit) with an adaptive context.
    #[inline]
    pub fn bit(&mut self, bit: bool, p: &mut Prob, rate: u32, out: &mut Vec<u8>) {
        self.bit_fixed(bit, p.0, out);
        p.update(bit, rate);
    }

    /// The escape branch of a slot symbol (probability 2^-16). With `escape` the range
    /// narrows to it and is normalized; without, the rest of the range stays for the slot's
    /// decision, which must follow at once (`bit` or `bit_fixed`) with no normalization in
    /// between.
    #[inline]
    pub fn slot_escape(&mut self, escape: bool, out: &mut Vec<u8>) {
        let e = self.range >> ESCAPE_SHIFT;
        if escape {
            self.low += (self.range - e) as u64;
            self.range = e;
            self.normalize(out);
        } else {
            self.range -= e;
        }
    }

    /// A decision at probability `p` of a miss, without adaptation (the virtual slot's,
    /// and the arithmetic of every context bit). A hit takes the bottom of the range, so
    /// `low` stays still while predictions hit.
    #[inline]
    pub fn bit_fixed(&mut self, bit: bool, p: u16, out: &mut Vec<u8>) {
        let bound = (self.range >> PROB_BITS) * p as u32;
        if bit {
            self.range -= bound;
        } else {
            self.low += (self.range - bound) as u64;
            self.range = bound;
        }
        self.normalize(out);
    }

    /// A raw field: the low `n` bits of `value`, `1 <= n <= 16`, in one step.
    #[inline]
    pub fn raw(&mut self, value: u32, n: u32, out: &mut Vec<u8>) {
        debug_assert!((1..=RAW_MAX_BITS).contains(&n));
        let r = self.range >> n;
        self.low += (value & ((1 << n) - 1)) as u64 * r as u64;
        self.range = r;
        self.normalize(out);
    }

    /// A field of up to 32 bits: the part above the low 16 bits first, then the low 16.
    pub fn raw_wide(&mut self, value: u32, n: u32, out: &mut Vec<u8>) {
        if n > RAW_MAX_BITS {
            self.raw(value >> RAW_MAX_BITS, n - RAW_MAX_BITS, out);
            self.raw(value, RAW_MAX_BITS, out);
        } else if n > 0 {
            self.raw(value, n, out);
        }
    }

    /// Terminate: every byte the decoder needs is written; the coder must not be used again.
    pub fn flush(&mut self, out: &mut Vec<u8>) {
        for _ in 0..5 {
            self.shift_low(out);
        }
    }

    /// Bytes the coder holds back (cache and pending 0xFF bytes), for bit accounting.
    pub fn pending_bytes(&self) -> u64 {
        self.pending as u64 + 4 - self.first as u64
    }
}

/// Why the range decoder stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoderError {
    /// Input ended; `at` is the byte offset where more was needed.
    Truncated { at: usize },
    /// A stuffing byte after 14 zero bytes was not 0x01.
    BadStuffing { at: usize },
    /// A raw field decoded to a value wider than the field (the encoder never codes it).
    RawOutOfRange { at: usize },
}

/// Range decoder over a byte slice. `Copy`, so a caller can keep it in a local (registers)
/// through a run of decisions and store it back once.
#[derive(Clone, Copy, Debug)]
pub struct RangeDecoder {
    code: u32,
    range: u32,
    /// The encoder's `low` and pending count, mirrored for the pending limit.
    low: u64,
    pending: u8,
    zeros: u32,
    /// Next byte to read.
    pub pos: usize,
}

/// A decoder that has read nothing: a placeholder until `new` starts the segment.
impl Default for RangeDecoder {
    fn default() -> Self {
        RangeDecoder { code: 0, range: u32::MAX, low: 0, pending: 1, zeros: 0, pos: 0 }
    }
}

impl RangeDecoder {
    /// Start decoding at byte `pos` (reads the coder's first four bytes).
    pub fn new(bytes: &[u8], pos: usize) -> Result<Self, CoderError> {
        let mut d = RangeDecoder { pos, ..RangeDecoder::default() };
        for _ in 0..4 {
            let b = d.byte(bytes)?;
            d.code = (d.code << 8) | b as u32;
        }
        Ok(d)
    }

    /// The next coded byte. The zero-run count is kept without a branch; the stuffing byte
    /// after a run (rare) is checked out of line.
    #[inline]
    fn byte(&mut self, bytes: &[u8]) -> Result<u8, CoderError> {
        let b = *bytes.get(self.pos).ok_or(CoderError::Truncated { at: self.pos })?;
        self.pos += 1;
        self.zeros = if b == 0 { self.zeros + 1 } else { 0 };
        if self.zeros == ZERO_RUN_LIMIT {
            self.unstuff(bytes)?;
        }
        Ok(b)
    }

    #[cold]
    fn unstuff(&mut self, bytes: &[u8]) -> Result<(), CoderError> {
        let s = *bytes.get(self.pos).ok_or(CoderError::Truncated { at: self.pos })?;
        if s != STUFF_BYTE {
            return Err(CoderError::BadStuffing { at: self.pos });
        }
        self.pos += 1;
        self.zeros = 0;
        Ok(())
    }

    #[inline(always)]
    fn normalize(&mut self, bytes: &[u8]) -> Result<(), CoderError> {
        if self.range < TOP {
            self.refill(bytes)
        } else {
            Ok(())
        }
    }

    /// The byte shifts of `normalize`, out of line: most decisions need none. The loop runs
    /// on a local copy (registers, not the caller's memory), stored back once.
    #[inline(never)]
    fn refill(&mut self, bytes: &[u8]) -> Result<(), CoderError> {
        let mut d = *self;
        let r = d.shift_bytes(bytes);
        *self = d;
        r
    }

    #[inline(always)]
    fn shift_bytes(&mut self, bytes: &[u8]) -> Result<(), CoderError> {
        while self.range < TOP {
            shift_state(&mut self.low, &mut self.range, &mut self.pending);
            self.range <<= 8;
            self.code = (self.code << 8) | self.byte(bytes)? as u32;
        }
        Ok(())
    }

    #[inline(always)]
    pub fn bit(&mut self, p: &mut Prob, rate: u32, bytes: &[u8]) -> Result<bool, CoderError> {
        let bit = self.bit_fixed(p.0, bytes)?;
        p.update(bit, rate);
        Ok(bit)
    }

    /// The escape branch of a slot symbol; without an escape the slot's decision follows
    /// (`bit` or `bit_fixed`), decoded once its context is known.
    #[inline(always)]
    pub fn slot_escape(&mut self, bytes: &[u8]) -> Result<bool, CoderError> {
        let e = self.range >> ESCAPE_SHIFT;
        let split = self.range - e;
        if self.code >= split {
            self.code -= split;
            self.low += split as u64;
            self.range = e;
            self.normalize(bytes)?;
            Ok(true)
        } else {
            self.range = split;
            Ok(false)
        }
    }

    /// A decision at probability `p` of a miss. Written as selects, not a branch: a miss
    /// is common (a mispredicted branch of the traced program) and would be unpredictable.
    #[inline(always)]
    pub fn bit_fixed(&mut self, p: u16, bytes: &[u8]) -> Result<bool, CoderError> {
        let bound = (self.range >> PROB_BITS) * p as u32;
        let split = self.range - bound;
        let bit = self.code < split;
        let taken = if bit { 0 } else { split };
        self.code -= taken;
        self.low += taken as u64;
        self.range = if bit { split } else { bound };
        self.normalize(bytes)?;
        Ok(bit)
    }

    /// A raw field of `1 <= n <= 16` bits; a value outside the field's range (input the
    /// encoder cannot produce) is an error.
    #[inline]
    pub fn raw(&mut self, n: u32, bytes: &[u8]) -> Result<u32, CoderError> {
        let r = self.range >> n;
        let v = self.code / r;
        if v >> n != 0 {
            return Err(CoderError::RawOutOfRange { at: self.pos });
        }
        self.code -= v * r;
        self.low += (v * r) as u64;
        self.range = r;
        self.normalize(bytes)?;
        Ok(v)
    }

    /// An address (trace-format.md 11.5) in one call: the upper-bits decision with context
    /// `p`, then a field of `narrow` bits if the upper bits are the same, else `wide`.
    /// Returns (same, field).
    #[inline(never)]
    pub fn address(&mut self, p: &mut Prob, rate: u32, narrow: u32, wide: u32, bytes: &[u8]) -> Result<(bool, u32), CoderError> {
        let same = self.bit(p, rate, bytes)?;
        let v = self.raw_wide(if same { narrow } else { wide }, bytes)?;
        Ok((same, v))
    }

    /// A field of up to 32 bits (see `RangeEncoder::raw_wide`).
    #[inline]
    pub fn raw_wide(&mut self, n: u32, bytes: &[u8]) -> Result<u32, CoderError> {
        if n > RAW_MAX_BITS {
            let hi = self.raw(n - RAW_MAX_BITS, bytes)?;
            let lo = self.raw(RAW_MAX_BITS, bytes)?;
            Ok((hi << RAW_MAX_BITS) | lo)
        } else if n > 0 {
            self.raw(n, bytes)
        } else {
            Ok(0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_table_equals_the_definition() {
        for k in 1..PROB_ONE {
            let p = k as f64 / PROB_ONE as f64;
            let prob = Prob(k as u16);
            assert_eq!(prob.cost(false).to_bits(), (-p.log2()).to_bits(), "miss at {k}");
            assert_eq!(prob.cost(true).to_bits(), (-(1.0 - p).log2()).to_bits(), "hit at {k}");
        }
    }

    #[derive(Clone, Copy, Debug)]
    enum Op {
        Bit(bool, usize),
        /// A slot symbol: escape, or the decision with context `usize`.
        Slot(bool, bool, usize),
        Fixed(bool),
        Raw(u32, u32),
    }

    fn roundtrip(ops: &[Op], rate: u32) -> Vec<u8> {
        let mut enc = RangeEncoder::new();
        let mut out = Vec::new();
        let mut probs = [Prob::default(); 4];
        for &op in ops {
            match op {
                Op::Bit(b, c) => enc.bit(b, &mut probs[c], rate, &mut out),
                Op::Slot(e, b, c) => {
                    enc.slot_escape(e, &mut out);
                    if !e {
                        enc.bit(b, &mut probs[c], rate, &mut out);
                    }
                }
                Op::Fixed(b) => enc.bit_fixed(b, PROB_INIT, &mut out),
                Op::Raw(v, n) => enc.raw_wide(v, n, &mut out),
            }
        }
        enc.flush(&mut out);
        let mut dec = RangeDecoder::new(&out, 0).unwrap();
        let mut probs = [Prob::default(); 4];
        for (i, &op) in ops.iter().enumerate() {
            match op {
                Op::Bit(b, c) => assert_eq!(dec.bit(&mut probs[c], rate, &out).unwrap(), b, "op {i}"),
                Op::Slot(e, b, c) => {
                    assert_eq!(dec.slot_escape(&out).unwrap(), e, "op {i}");
                    if !e {
                        assert_eq!(dec.bit(&mut probs[c], rate, &out).unwrap(), b, "op {i}");
                    }
                }
                Op::Fixed(b) => assert_eq!(dec.bit_fixed(PROB_INIT, &out).unwrap(), b, "op {i}"),
                Op::Raw(v, n) => assert_eq!(dec.raw_wide(n, &out).unwrap(), v & ((1u64 << n) - 1) as u32, "op {i}"),
            }
        }
        assert_eq!(dec.pos, out.len(), "the decoder consumes exactly the coded bytes");
        out
    }

    fn lcg(s: &mut u64) -> u32 {
        *s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (*s >> 33) as u32
    }

    #[test]
    fn random_symbols_roundtrip() {
        let mut s = 7u64;
        for rate in [1, 4, 5, 8] {
            let ops: Vec<Op> = (0..20_000)
                .map(|_| match lcg(&mut s) % 10 {
                    0 => Op::Slot(lcg(&mut s).is_multiple_of(50), !lcg(&mut s).is_multiple_of(7), (lcg(&mut s) % 4) as usize),
                    1 => Op::Raw(lcg(&mut s), 1 + lcg(&mut s) % 32),
                    2 => Op::Fixed(!lcg(&mut s).is_multiple_of(3)),
                    _ => Op::Bit(!lcg(&mut s).is_multiple_of(13), (lcg(&mut s) % 4) as usize),
                })
                .collect();
            roundtrip(&ops, rate);
        }
    }

    #[test]
    fn skewed_streams_compress_and_never_hold_the_marker() {
        // Long runs of the likely symbol: the regime of a well-predicted trace.
        for bit in [true, false] {
            let ops = vec![Op::Bit(bit, 0); 200_000];
            let out = roundtrip(&ops, 5);
            assert!(out.len() < 400, "{} bytes for 200,000 predictable symbols", out.len());
            let longest = out.split(|&b| b != 0).map(|r| r.len()).max().unwrap_or(0);
            assert!(longest <= ZERO_RUN_LIMIT as usize, "zero run of {longest} bytes");
        }
        // Zero raw fields keep `low` at zero: only stuffing breaks the run of zero bytes.
        let ops: Vec<Op> = (0..50_000).map(|i| if i % 2 == 0 { Op::Raw(0, 16) } else { Op::Raw(0, 32) }).collect();
        let out = roundtrip(&ops, 5);
        assert!(out.len() > 100_000);
        let longest = out.split(|&b| b != 0).map(|r| r.len()).max().unwrap();
        assert_eq!(longest, ZERO_RUN_LIMIT as usize);
        assert!(out.windows(15).all(|w| w.iter().any(|&b| b != 0)), "15 zero bytes never occur");
    }

    /// Hits take the bottom of the range, so a long run of them leaves `low` still and the
    /// coder emits bytes as they are determined instead of holding pending 0xFF bytes for
    /// a later carry (what sizes the output buffer in cycle mode).
    #[test]
    fn long_hit_runs_hold_back_no_bytes() {
        let mut enc = RangeEncoder::new();
        let mut out = Vec::new();
        let mut p = Prob::default();
        let mut worst = 0;
        for i in 0..300_000u32 {
            if i % 50_000 == 0 {
                enc.bit(false, &mut p, 5, &mut out);
            }
            enc.slot_escape(false, &mut out);
            enc.bit(true, &mut p, 5, &mut out);
            worst = worst.max(enc.pending_bytes());
        }
        assert!(worst <= 6, "{worst} bytes held back");
        assert!(out.len() > 20, "{} bytes out", out.len());
    }

    #[test]
    fn truncation_and_bad_stuffing_are_errors() {
        let ops = vec![Op::Raw(0, 32); 8];
        let mut enc = RangeEncoder::new();
        let mut out = Vec::new();
        for &op in &ops {
            if let Op::Raw(v, n) = op {
                enc.raw_wide(v, n, &mut out)
            }
        }
        enc.flush(&mut out);
        assert!(matches!(RangeDecoder::new(&out[..2], 0), Err(CoderError::Truncated { at: 2 })));
        let stuff = out.iter().position(|&b| b == STUFF_BYTE).expect("32 zero bits x 8 need a stuffing byte");
        let mut bad = out.clone();
        bad[stuff] = 0x02;
        let mut dec = RangeDecoder::new(&bad, 0).unwrap();
        let r: Result<Vec<u32>, _> = (0..8).map(|_| dec.raw_wide(32, &bad)).collect();
        assert_eq!(r, Err(CoderError::BadStuffing { at: stuff }));
    }

    /// All-ones raw fields keep `low[31:24]` at 0xFF: the pending count reaches its limit,
    /// the range is truncated there, and the decoder, mirroring `low`, still follows.
    #[test]
    fn the_pending_limit_truncates_and_still_decodes() {
        let mut s = 11u64;
        let mut ops = Vec::new();
        for _ in 0..2_000 {
            ops.extend(std::iter::repeat_n(Op::Raw(u32::MAX, 32), (lcg(&mut s) % 6) as usize));
            ops.push(Op::Bit(!lcg(&mut s).is_multiple_of(5), 1));
            ops.push(Op::Raw(lcg(&mut s), 1 + lcg(&mut s) % 32));
        }
        let mut enc = RangeEncoder::new();
        let (mut out, mut p) = (Vec::new(), Prob::default());
        let mut most = 0;
        for &op in &ops {
            match op {
                Op::Raw(v, n) => enc.raw_wide(v, n, &mut out),
                Op::Bit(b, _) => enc.bit(b, &mut p, 5, &mut out),
                _ => unreachable!(),
            }
            most = most.max(enc.pending);
        }
        assert_eq!(most, PENDING_MAX, "the limit is reached");
        roundtrip(&ops, 5);
    }

    #[test]
    fn probabilities_stay_inside_the_open_interval() {
        for rate in 1..=8 {
            let mut p = Prob::default();
            for _ in 0..10_000 {
                p.update(true, rate);
            }
            assert!(p.0 >= 1);
            for _ in 0..10_000 {
                p.update(false, rate);
            }
            assert!((p.0 as u32) < PROB_ONE);
        }
    }
}

//! Stream descriptor cache (docs/trace-format.md section 5.1).
//!
//! Entries are kept as one packed key `tag << 16 | SL` so a way compare is one integer
//! compare; key 0 means invalid because SL is never 0.

use crate::config::{Config, Replacement, Scheme};

const LFSR_SEED: u16 = 0xACE1;

#[derive(Clone, Debug)]
pub struct StreamDescriptorCache {
    sets: u32,
    ways: u32,
    way_bits: u32,
    /// `ways - 1` (ways is a power of two): the way of an SI.
    way_mask: u32,
    /// Every way of a set as MRU bits, when one word holds them.
    all_ways: u64,
    /// MRU with at most 64 ways, `touch`'s inlined case (decided here, not per access).
    mru_one_word: bool,
    shift: u32,
    tag_mask: u32,
    /// The set index uses only address bits the tag keeps (see [`StreamDescriptorCache::holds`]).
    key_decides_set: bool,
    repl: Replacement,
    /// `tag << 16 | SL`, 0 = invalid. Index = set * ways + way.
    keys: Vec<u64>,
    /// LRU: age per entry (0 = most recent).
    state: Vec<u32>,
    /// MRU bits as bit masks: `mru_words` u64 words per set (bit w%64 of word w/64 = way w).
    mru: Vec<u64>,
    mru_words: usize,
    /// FIFO pointer per set.
    fifo: Vec<u32>,
    lfsr: u16,
}

/// The last way of `ways` whose key is `key`, or `usize::MAX`.
#[inline(always)]
fn last_match(ways: &[u64], key: u64) -> usize {
    ways.iter().enumerate().fold(usize::MAX, |acc, (w, &k)| if k == key { w } else { acc })
}

#[inline]
fn pack(tag: u32, sl: u32) -> u64 {
    ((tag as u64) << 16) | sl as u64
}

impl StreamDescriptorCache {
    /// A cache for an SDC scheme configuration.
    pub fn new(cfg: &Config) -> Self {
        assert!(cfg.scheme.uses_sdc(), "SDC built for a scheme without one");
        assert!(cfg.max_sl <= 0xFFFF);
        let tag_mask = if cfg.scheme == Scheme::RSdc { u32::MAX >> cfg.u } else { u32::MAX };
        let n = (cfg.sets * cfg.ways) as usize;
        let mut sdc = StreamDescriptorCache {
            sets: cfg.sets,
            ways: cfg.ways,
            way_bits: cfg.way_bits(),
            way_mask: cfg.ways - 1,
            all_ways: u64::MAX >> (64 - cfg.ways.min(64)),
            mru_one_word: cfg.repl == Replacement::Mru && cfg.ways <= 64,
            shift: cfg.shift,
            tag_mask,
            key_decides_set: cfg.scheme != Scheme::RSdc || cfg.shift + cfg.set_bits() <= 32 - cfg.u,
            repl: cfg.repl,
            keys: vec![0; n],
            state: vec![0; n],
            mru: vec![0; cfg.sets as usize * (cfg.ways as usize).div_ceil(64)],
            mru_words: (cfg.ways as usize).div_ceil(64),
            fifo: vec![0; cfg.sets as usize],
            lfsr: LFSR_SEED,
        };
        sdc.reset();
        sdc
    }

    /// Back to the reset state of section 7.
    pub fn reset(&mut self) {
        self.keys.iter_mut().for_each(|k| *k = 0);
        for set in 0..self.sets {
            let first = self.first_way(set);
            self.fifo[set as usize] = first;
            for way in 0..self.ways {
                let idx = (set * self.ways + way) as usize;
                self.state[idx] = match self.repl {
                    // LRU order = way order: the lowest existing way is the most recent.
                    Replacement::Lru => way.saturating_sub(first),
                    _ => 0,
                };
            }
        }
        self.lfsr = LFSR_SEED;
        self.mru.iter_mut().for_each(|m| *m = 0);
    }

    /// Existing ways of `set` among ways `64*word .. 64*word+63`, as a bit mask.
    #[inline]
    fn exist_mask(&self, set: u32, word: usize) -> u64 {
        let lo = word as u32 * 64;
        let n = (self.ways - lo).min(64);
        let all = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
        if set == 0 && word == 0 {
            all & !1
        } else {
            all
        }
    }

    /// Lowest existing way of a set (entry 0 does not exist).
    #[inline]
    fn first_way(&self, set: u32) -> u32 {
        (set == 0) as u32
    }

    /// iSet = ((A >> shift) XOR SL) AND (N_SET - 1).
    #[inline]
    pub fn set_index(&self, a: u32, sl: u32) -> u32 {
        (a.checked_shr(self.shift).unwrap_or(0) ^ sl) & (self.sets - 1)
    }

    /// The part of the address an entry identifies (all of it, or A[31-u:0] in rSDC).
    #[inline]
    pub fn tag_of(&self, a: u32) -> u32 {
        a & self.tag_mask
    }

    /// Stream index of a matching valid entry. (Inlined: the encoder's path per stream
    /// calls it for every stream.)
    #[inline(always)]
    pub fn lookup(&self, a: u32, sl: u32) -> Option<u32> {
        let set = self.set_index(a, sl);
        let key = pack(self.tag_of(a), sl);
        let base = (set * self.ways) as usize;
        let ways = &self.keys[base..base + self.ways as usize];
        // At most one way matches; a branch-free scan beats an early exit whose way is
        // unpredictable. The usual way counts as slices of constant length, which the
        // compiler unrolls (no loop control per lookup).
        let w = match ways.len() {
            2 => last_match(&ways[..2], key),
            4 => last_match(&ways[..4], key),
            8 => last_match(&ways[..8], key),
            _ => last_match(ways, key),
        };
        (w != usize::MAX).then(|| (set << self.way_bits) | w as u32)
    }

    /// Whether entry `si` holds `(a, sl)`: then [`StreamDescriptorCache::lookup`] finds
    /// it there, since the set of an entry follows from its key (the set index takes
    /// address bits the tag keeps: for rSDC, `shift + log2(sets) <= 32 - u`, which
    /// `Config::validate` requires). False, whatever the entry, for a configuration
    /// built without that check where the key does not decide the set.
    #[inline(always)]
    pub fn holds(&self, si: u32, a: u32, sl: u32) -> bool {
        self.key_decides_set && self.keys.get(si as usize) == Some(&pack(self.tag_of(a), sl))
    }

    /// Contents of entry `si` as `(tag, SL)`, if it exists and is valid.
    #[inline]
    pub fn entry(&self, si: u32) -> Option<(u32, u32)> {
        let key = *self.keys.get(si as usize)?;
        if si == 0 || key == 0 {
            None
        } else {
            Some(((key >> 16) as u32, (key & 0xFFFF) as u32))
        }
    }

    /// Replacement update for an access (hit, or fill) of entry `si`.
    #[inline(always)]
    pub fn touch(&mut self, si: u32) {
        if self.mru_one_word {
            // At most 64 ways (every paper configuration): one word per set; entry 0
            // (way 0 of set 0) does not exist.
            let set = si >> self.way_bits;
            let way = si & self.way_mask;
            let full = self.all_ways & !((set == 0) as u64);
            let m = self.mru[set as usize] | 1 << way;
            self.mru[set as usize] = if m == full { 1 << way } else { m };
        } else {
            self.touch_other(si);
        }
    }

    /// `touch` for LRU, FIFO, random and MRU over more than 64 ways (out of line, so the
    /// common case inlines into the encoder).
    #[inline(never)]
    fn touch_other(&mut self, si: u32) {
        let set = si >> self.way_bits;
        match self.repl {
            Replacement::Mru => {
                let way = (si & (self.ways - 1)) as usize;
                let words = set as usize * self.mru_words..(set as usize + 1) * self.mru_words;
                self.mru[words.start + way / 64] |= 1 << (way % 64);
                let full = self.mru[words.clone()]
                    .iter()
                    .enumerate()
                    .all(|(i, &m)| m == self.exist_mask(set, i));
                if full {
                    self.mru[words.clone()].iter_mut().for_each(|m| *m = 0);
                    self.mru[words.start + way / 64] = 1 << (way % 64);
                }
            }
            Replacement::Lru => {
                let (base, first) = (set * self.ways, self.first_way(set));
                let old = self.state[si as usize];
                for i in (base + first) as usize..(base + self.ways) as usize {
                    if self.state[i] < old {
                        self.state[i] += 1;
                    }
                }
                self.state[si as usize] = 0;
            }
            Replacement::Fifo | Replacement::Random => {}
        }
    }

    /// Write `(A, SL)` into the victim way of its set; returns its SI, or 0 when the set has
    /// no existing way (set 0 of a direct-mapped SDC).
    pub fn fill(&mut self, a: u32, sl: u32) -> u32 {
        let set = self.set_index(a, sl);
        let first = self.first_way(set);
        if first >= self.ways {
            return 0;
        }
        let base = set * self.ways;
        let range = (base + first) as usize..(base + self.ways) as usize;
        let invalid = self.keys[range.clone()].iter().position(|&k| k == 0).map(|p| p as u32 + first);
        let way = match self.repl {
            Replacement::Fifo => {
                let way = self.fifo[set as usize];
                let next = way + 1;
                self.fifo[set as usize] = if next >= self.ways { first } else { next };
                way
            }
            _ if invalid.is_some() => invalid.unwrap(),
            Replacement::Mru => {
                let words = set as usize * self.mru_words..(set as usize + 1) * self.mru_words;
                self.mru[words]
                    .iter()
                    .enumerate()
                    .find_map(|(i, &m)| {
                        let clear = !m & self.exist_mask(set, i);
                        (clear != 0).then(|| i as u32 * 64 + clear.trailing_zeros())
                    })
                    .unwrap_or(first)
            }
            Replacement::Lru => {
                let ages = &self.state[range];
                let oldest = ages.iter().enumerate().max_by_key(|&(_, &age)| age).map_or(0, |(i, _)| i);
                oldest as u32 + first
            }
            Replacement::Random => {
                let r = self.lfsr;
                let bit = ((r >> 15) ^ (r >> 13) ^ (r >> 12) ^ (r >> 10)) & 1;
                self.lfsr = (r << 1) | bit;
                first + (self.lfsr as u32 % (self.ways - first))
            }
        };
        let si = (set << self.way_bits) | way;
        self.keys[si as usize] = pack(self.tag_of(a), sl);
        self.touch(si);
        si
    }

    pub fn entries(&self) -> u32 {
        self.sets * self.ways
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl StreamDescriptorCache {
        /// MRU bits of the ways of `set`, lowest way first.
        fn mru_bits(&self, set: u32) -> Vec<u32> {
            (0..self.ways as usize)
                .map(|w| (self.mru[set as usize * self.mru_words + w / 64] >> (w % 64) & 1) as u32)
                .collect()
        }
    }

    fn cfg(text: &str) -> Config {
        text.parse().unwrap()
    }

    #[test]
    fn paper_fig4_index_and_first_fill() {
        // 64-entry 4-way, iSet = SA[7:4] xor SL[3:0]: (0x020001f4, 9) -> set 6, way 0, SI 0b011000.
        let mut sdc = StreamDescriptorCache::new(&cfg("bsdc-16x4-64"));
        assert_eq!(sdc.set_index(0x0200_01F4, 9), 6);
        assert_eq!(sdc.lookup(0x0200_01F4, 9), None);
        assert_eq!(sdc.fill(0x0200_01F4, 9), 0b011000);
        assert_eq!(sdc.lookup(0x0200_01F4, 9), Some(0b011000));
        assert_eq!(sdc.entry(0b011000), Some((0x0200_01F4, 9)));
        assert_eq!(sdc.lookup(0x0200_01F4, 10), None, "SL is part of the descriptor");
    }

    /// `holds` agrees with `lookup` where the key decides the set, and answers false for a
    /// geometry built around `Config::validate` where it does not (the encoder then scans).
    #[test]
    fn holds_only_where_the_key_decides_the_set() {
        let c = cfg("rsdc-32x4-128");
        let mut sdc = StreamDescriptorCache::new(&c);
        let si = sdc.fill(0x0000_81F4, 9);
        assert!(sdc.holds(si, 0x0000_81F4, 9));
        assert!(sdc.holds(si, 0xFF00_81F4, 9), "rSDC's tag drops the LVSA bits");
        assert!(!sdc.holds(si, 0x0000_81F8, 9));
        assert!(!sdc.holds(si, 0x0000_81F4, 10));
        assert!(!sdc.holds(si ^ 1, 0x0000_81F4, 9));
        let mut bad = c;
        bad.u = 30;
        assert!(bad.validate().is_err());
        let mut sdc = StreamDescriptorCache::new(&bad);
        let si = sdc.fill(0x0000_81F4, 9);
        assert_eq!(sdc.lookup(0x0000_81F4, 9), Some(si));
        assert!(!sdc.holds(si, 0x0000_81F4, 9));
    }

    /// Fill `n` distinct streams that all map to set `set` (same SL, SA differing above the index).
    fn same_set_streams(set: u32, n: u32) -> Vec<(u32, u32)> {
        (0..n).map(|i| (((set ^ 5) << 4) | (i << 12), 5)).collect()
    }

    #[test]
    fn entry_zero_never_used() {
        for repl in ["mru", "lru", "fifo", "random"] {
            let mut sdc = StreamDescriptorCache::new(&cfg(&format!("bsdc-4x2-8,repl={repl}")));
            for (a, sl) in same_set_streams(0, 6) {
                assert_eq!(sdc.set_index(a, sl), 0);
                assert_eq!(sdc.fill(a, sl), 1, "{repl}: set 0 has only way 1");
            }
            assert_eq!(sdc.entry(0), None);
            let mut dm = StreamDescriptorCache::new(&cfg(&format!("bsdc-4x1-4,repl={repl}")));
            let (a, sl) = same_set_streams(0, 1)[0];
            assert_eq!(dm.fill(a, sl), 0, "{repl}: direct-mapped set 0 holds nothing");
            assert_eq!(dm.lookup(a, sl), None);
        }
    }

    #[test]
    fn mru_bits_pseudo_lru() {
        let mut sdc = StreamDescriptorCache::new(&cfg("bsdc-4x4-16"));
        let s = same_set_streams(2, 6);
        let base = 2 << 2;
        for (i, &(a, sl)) in s[..4].iter().enumerate() {
            assert_eq!(sdc.fill(a, sl), base | i as u32, "invalid ways fill lowest first");
        }
        // After the 4th fill all bits were set, so all but way 3 were cleared.
        assert_eq!(sdc.mru_bits(2), &[0, 0, 0, 1]);
        sdc.touch(base | 1);
        assert_eq!(sdc.mru_bits(2), &[0, 1, 0, 1]);
        // Victim: lowest way with a clear bit.
        assert_eq!(sdc.fill(s[4].0, s[4].1), base);
        assert_eq!(sdc.mru_bits(2), &[1, 1, 0, 1]);
        assert_eq!(sdc.fill(s[5].0, s[5].1), base | 2);
        assert_eq!(sdc.mru_bits(2), &[0, 0, 1, 0], "set full of MRU bits: all but the accessed cleared");
        assert_eq!(sdc.lookup(s[1].0, s[1].1), Some(base | 1), "recently touched way 1 survives");
        assert_eq!(sdc.lookup(s[0].0, s[0].1), None);
        assert_eq!(sdc.lookup(s[2].0, s[2].1), None);
    }

    #[test]
    fn mru_with_more_than_64_ways() {
        let mut sdc = StreamDescriptorCache::new(&cfg("bsdc-1x128-128"));
        let s = same_set_streams(0, 129);
        for (i, &(a, sl)) in s[..127].iter().enumerate() {
            assert_eq!(sdc.fill(a, sl), i as u32 + 1, "ways 1..=127 fill in order (way 0 does not exist)");
        }
        let bits = sdc.mru_bits(0);
        assert_eq!(bits.iter().sum::<u32>(), 1, "the 127th access set the last bit: all others cleared");
        assert_eq!(bits[127], 1);
        assert_eq!(sdc.fill(s[127].0, s[127].1), 1, "lowest clear existing way");
        sdc.touch(65);
        assert_eq!(sdc.fill(s[128].0, s[128].1), 2);
        assert_eq!(sdc.mru_bits(0).iter().sum::<u32>(), 4);
    }

    #[test]
    fn lru_evicts_least_recent() {
        let mut sdc = StreamDescriptorCache::new(&cfg("bsdc-4x4-16,repl=lru"));
        let s = same_set_streams(1, 5);
        for &(a, sl) in &s[..4] {
            sdc.fill(a, sl);
        }
        // Access order now 0,1,2,3; touch 0 again -> LRU is 1.
        let si0 = sdc.lookup(s[0].0, s[0].1).unwrap();
        sdc.touch(si0);
        let si = sdc.fill(s[4].0, s[4].1);
        assert_eq!(si, (1 << 2) | 1);
        assert_eq!(sdc.lookup(s[1].0, s[1].1), None);
        assert!(sdc.lookup(s[0].0, s[0].1).is_some());
    }

    #[test]
    fn fifo_ignores_hits() {
        let mut sdc = StreamDescriptorCache::new(&cfg("bsdc-4x2-8,repl=fifo"));
        let s = same_set_streams(3, 3);
        let a = sdc.fill(s[0].0, s[0].1);
        let b = sdc.fill(s[1].0, s[1].1);
        sdc.touch(a);
        assert_eq!(sdc.fill(s[2].0, s[2].1), a, "oldest fill goes first even if just hit");
        assert_ne!(a, b);
    }

    #[test]
    fn random_uses_lfsr_sequence() {
        let mut sdc = StreamDescriptorCache::new(&cfg("bsdc-1x8-8,repl=random"));
        let s = same_set_streams(0, 12);
        for (i, &(a, sl)) in s[..7].iter().enumerate() {
            assert_eq!(sdc.fill(a, sl), i as u32 + 1);
        }
        // LFSR from 0xACE1: next states computed by the spec's formula.
        let mut r: u16 = 0xACE1;
        for &(a, sl) in &s[7..] {
            let bit = ((r >> 15) ^ (r >> 13) ^ (r >> 12) ^ (r >> 10)) & 1;
            r = (r << 1) | bit;
            assert_eq!(sdc.fill(a, sl), 1 + r as u32 % 7);
        }
        sdc.reset();
        assert_eq!(sdc.lfsr, 0xACE1);
        assert_eq!(sdc.entry(1), None);
    }

    #[test]
    fn rsdc_tag_drops_upper_bits() {
        let mut sdc = StreamDescriptorCache::new(&cfg("rsdc-32x4-128"));
        let si = sdc.fill(0x0200_01F4, 9);
        assert_eq!(sdc.entry(si), Some((0x0000_01F4, 9)));
        assert_eq!(sdc.lookup(0x7F40_01F4, 9), Some(si), "aliases: upper 12 bits are the LVSA's job");
    }
}

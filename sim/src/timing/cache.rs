//! Set-associative cache tags with round-robin replacement per set and two dirty bits per
//! line (one per half line, as the XScale data cache keeps them). Only tags are modelled:
//! the data lives in the functional memory.

use super::config::CacheConfig;

const INVALID: u32 = u32::MAX;
const HINTS: usize = 4096;

/// Where a line sits: index into the tag array (set * ways + way).
pub type Slot = usize;

/// A line that an allocation pushed out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Victim {
    /// Line address (byte address >> line shift).
    pub line: u32,
    /// Dirty bits: bit 0 = lower half line, bit 1 = upper half.
    pub dirty: u8,
}

#[derive(Clone, Debug)]
pub struct Cache {
    pub enabled: bool,
    ways: usize,
    set_mask: u32,
    pub line_shift: u32,
    tags: Vec<u32>,
    dirty: Vec<u8>,
    /// Next victim way of each set.
    next: Vec<u16>,
    /// Where a line was last seen, indexed by the line's low bits: a checked hint that
    /// saves the search of a 32-way set on nearly every lookup.
    hint: Vec<u32>,
    pub accesses: u64,
    pub misses: u64,
}

impl Cache {
    pub fn new(c: &CacheConfig) -> Cache {
        let sets = (c.size_bytes / (c.ways * c.line_bytes)).max(1) as usize;
        Cache {
            enabled: c.enabled,
            ways: c.ways as usize,
            set_mask: sets as u32 - 1,
            line_shift: c.line_bytes.trailing_zeros(),
            tags: vec![INVALID; sets * c.ways as usize],
            dirty: vec![0; sets * c.ways as usize],
            next: vec![0; sets],
            hint: vec![0; HINTS],
            accesses: 0,
            misses: 0,
        }
    }

    /// Drop every line (clean in zero time: dirty data is not written anywhere) and restart
    /// round robin at way 0; the access statistics stay.
    pub fn invalidate(&mut self) {
        self.tags.fill(INVALID);
        self.dirty.fill(0);
        self.next.fill(0);
    }

    #[inline]
    pub fn line_of(&self, addr: u32) -> u32 {
        addr >> self.line_shift
    }

    /// Words per line.
    #[inline]
    pub fn words(&self) -> u32 {
        1 << (self.line_shift - 2)
    }

    /// `line`'s slot if the cache is enabled and the hint has it (what [`Cache::find`]
    /// returns then), else `None` (it may still be cached).
    #[inline(always)]
    pub fn find_hinted(&self, line: u32) -> Option<Slot> {
        let guess = self.hint[line as usize & (HINTS - 1)] as usize;
        (self.enabled && self.tags.get(guess) == Some(&line)).then_some(guess)
    }

    /// Find `line` without counting an access.
    #[inline]
    pub fn find(&mut self, line: u32) -> Option<Slot> {
        let h = line as usize & (HINTS - 1);
        let guess = self.hint[h] as usize;
        if self.tags.get(guess) == Some(&line) {
            return Some(guess);
        }
        let base = (line & self.set_mask) as usize * self.ways;
        let set = &self.tags[base..base + self.ways];
        let way = set.iter().position(|&t| t == line)?;
        self.hint[h] = (base + way) as u32;
        Some(base + way)
    }

    /// Put `line` in the set's round-robin victim way; returns its slot and what it evicted.
    pub fn allocate(&mut self, line: u32) -> (Slot, Option<Victim>) {
        let set = (line & self.set_mask) as usize;
        let way = self.next[set] as usize;
        self.next[set] = ((way + 1) % self.ways) as u16;
        let slot = set * self.ways + way;
        let old = self.tags[slot];
        let victim = (old != INVALID).then(|| Victim { line: old, dirty: self.dirty[slot] });
        self.tags[slot] = line;
        self.dirty[slot] = 0;
        self.hint[line as usize & (HINTS - 1)] = slot as u32;
        (slot, victim)
    }

    /// Mark the half line holding `addr` dirty.
    #[inline]
    pub fn mark_dirty(&mut self, slot: Slot, addr: u32) {
        let half = (addr >> (self.line_shift - 1)) & 1;
        self.dirty[slot] |= 1 << half;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Cache {
        // 2 sets x 2 ways x 32-byte lines.
        Cache::new(&CacheConfig { enabled: true, size_bytes: 128, ways: 2, line_bytes: 32 })
    }

    #[test]
    fn round_robin_replaces_in_way_order() {
        let mut c = small();
        // Lines 0, 2, 4 all map to set 0.
        assert_eq!(c.find(0), None);
        assert_eq!(c.allocate(0), (0, None));
        assert_eq!(c.allocate(2), (1, None));
        assert_eq!(c.find(0), Some(0));
        assert_eq!(c.find(2), Some(1));
        // Round robin, not LRU: line 0 goes although it was used last.
        assert_eq!(c.allocate(4), (0, Some(Victim { line: 0, dirty: 0 })));
        assert_eq!(c.find(0), None);
        assert_eq!(c.find(4), Some(0));
        // Set 1 is independent.
        assert_eq!(c.allocate(1), (2, None));
    }

    #[test]
    fn dirty_halves_travel_with_the_victim() {
        let mut c = small();
        let (s, _) = c.allocate(0);
        c.mark_dirty(s, 0x14); // upper half of line 0
        c.allocate(2);
        assert_eq!(c.allocate(4).1, Some(Victim { line: 0, dirty: 0b10 }));
    }
}

//! The buffers between the caches and the bus: fill buffers (line fills in flight, also
//! the instruction fetch buffers), the pend buffer (accesses waiting for a line that is
//! still being filled) and the coalescing write buffer. Each entry is just the cycles it
//! is busy; an entry whose `done` is not after `now` is free.

/// A line fill in flight: words arrive critical word first, then in wrap-around order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fill {
    pub line: u32,
    /// Cycle the request goes out.
    pub start: u64,
    /// Word of the line that was asked for (it arrives first).
    pub crit: u32,
    /// Cycle the whole line is in the cache and the entry is free.
    pub done: u64,
}

impl Fill {
    /// Cycle word `word` of the line has arrived.
    #[inline]
    pub fn arrival(&self, word: u32, words: u32, latency: u64, word_cycles: u64) -> u64 {
        self.start + latency + (word.wrapping_sub(self.crit) & (words - 1)) as u64 * word_cycles
    }
}

/// Line fills in flight (data fill buffer or instruction fetch buffers).
#[derive(Clone, Debug)]
pub struct FillBuffer {
    entries: Vec<Fill>,
    /// No entry is busy at or after this cycle (lets accesses skip the search).
    pub busy_until: u64,
}

impl FillBuffer {
    pub fn new(n: u32) -> Self {
        FillBuffer { entries: vec![Fill { line: u32::MAX, start: 0, crit: 0, done: 0 }; n.max(1) as usize], busy_until: 0 }
    }

    /// The fill of `line` still in progress at `now`.
    #[inline]
    pub fn in_flight(&self, line: u32, now: u64) -> Option<Fill> {
        if now >= self.busy_until {
            return None;
        }
        self.entries.iter().copied().find(|f| f.line == line && f.done > now)
    }

    /// Start a fill of `line` at `now` or, with every entry busy, when the first frees.
    /// Returns the fill (its `start` is the cycle the request goes out).
    pub fn start(&mut self, line: u32, crit: u32, now: u64, duration: u64) -> Fill {
        let (i, free_at) =
            self.entries.iter().enumerate().map(|(i, f)| (i, f.done)).min_by_key(|&(_, d)| d).unwrap_or((0, 0));
        let start = now.max(free_at);
        let f = Fill { line, start, crit, done: start + duration };
        self.entries[i] = f;
        self.busy_until = self.busy_until.max(f.done);
        f
    }

    /// Entries busy at `now`.
    #[cfg(test)]
    fn busy(&self, now: u64) -> usize {
        self.entries.iter().filter(|f| f.done > now).count()
    }
}

/// Entries that are each busy until a given cycle (the pend buffer).
#[derive(Clone, Debug)]
pub struct SlotBuffer {
    done: Vec<u64>,
}

impl SlotBuffer {
    pub fn new(n: u32) -> Self {
        SlotBuffer { done: vec![0; n.max(1) as usize] }
    }

    /// Take an entry at `now` (or when the first frees) until `until`; returns the cycle the
    /// entry was obtained.
    pub fn take(&mut self, now: u64, until: u64) -> u64 {
        let (i, free_at) = self.done.iter().copied().enumerate().min_by_key(|&(_, d)| d).unwrap_or((0, 0));
        let at = now.max(free_at);
        self.done[i] = until.max(at);
        at
    }
}

#[derive(Clone, Copy, Debug)]
struct WriteEntry {
    block: u32,
    start: u64,
    done: u64,
}

/// The coalescing write buffer: entries drain to memory one after another, each taking
/// `drain` cycles of the bus; a store merges into an entry of the same block that has not
/// started draining.
#[derive(Clone, Debug)]
pub struct WriteBuffer {
    entries: Vec<WriteEntry>,
    drain: u64,
    block_shift: u32,
    /// When the last queued entry finishes draining.
    last_done: u64,
    pub pushes: u64,
    pub coalesced: u64,
}

impl WriteBuffer {
    pub fn new(n: u32, entry_bytes: u32, drain: u32) -> Self {
        WriteBuffer {
            entries: vec![WriteEntry { block: u32::MAX, start: 0, done: 0 }; n.max(1) as usize],
            drain: drain as u64,
            block_shift: entry_bytes.max(1).trailing_zeros(),
            last_done: 0,
            pushes: 0,
            coalesced: 0,
        }
    }

    /// Queue a write of `addr` at `now`; returns the cycles the core waited for an entry.
    pub fn push(&mut self, addr: u32, now: u64) -> u64 {
        self.pushes += 1;
        let block = addr >> self.block_shift;
        if now < self.last_done && self.entries.iter().any(|e| e.block == block && e.start > now) {
            self.coalesced += 1;
            return 0;
        }
        // The entry that frees first (entries drain in order, so it is the oldest).
        let (i, free_at) =
            self.entries.iter().enumerate().map(|(i, e)| (i, e.done)).min_by_key(|&(_, d)| d).unwrap_or((0, 0));
        let at = now.max(free_at);
        let start = at.max(self.last_done);
        let done = start + self.drain;
        self.entries[i] = WriteEntry { block, start, done };
        self.last_done = done;
        at - now
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_words_arrive_critical_first_then_wrap() {
        let f = Fill { line: 1, start: 10, crit: 6, done: 0 };
        assert_eq!(f.arrival(6, 8, 50, 3), 60);
        assert_eq!(f.arrival(7, 8, 50, 3), 63);
        assert_eq!(f.arrival(0, 8, 50, 3), 66);
        assert_eq!(f.arrival(5, 8, 50, 3), 81);
    }

    #[test]
    fn fill_buffer_waits_when_all_are_busy() {
        let mut b = FillBuffer::new(2);
        assert_eq!(b.start(1, 0, 0, 71).start, 0);
        assert_eq!(b.start(2, 0, 5, 71).start, 5);
        assert_eq!(b.busy(6), 2);
        // Third fill waits for the first to finish at 71.
        assert_eq!(b.start(3, 0, 6, 71).start, 71);
        assert!(b.in_flight(2, 70).is_some());
        assert!(b.in_flight(1, 70).is_none()); // replaced by line 3
        assert!(b.in_flight(2, 76).is_none());
    }

    #[test]
    fn write_buffer_coalesces_and_fills_up() {
        let mut w = WriteBuffer::new(2, 16, 10);
        assert_eq!(w.push(0x100, 0), 0); // drains 0..10
        assert_eq!(w.push(0x200, 0), 0); // waits, drains 10..20
        assert_eq!(w.push(0x204, 1), 0); // same block, not draining yet: merged
        assert_eq!(w.coalesced, 1);
        // Both entries busy: wait until the first frees at 10, drains 20..30.
        assert_eq!(w.push(0x300, 2), 8);
        // The block of 0x100 is draining or done: no merge.
        assert_eq!(w.push(0x104, 10), 10);
        assert_eq!(w.coalesced, 1);
    }
}

//! The instruction-fetch side (I-cache + fetch buffers) and the data side (D-cache + fill,
//! pend and write buffers). Times are core cycles on the issue time line: an access at cycle
//! `now` that hits returns data with the pipeline's normal latency; the functions return how
//! much later than that the data (or the instruction) is available, and how long the memory
//! pipe had to wait for a free buffer entry.

use super::buffers::{Fill, FillBuffer, SlotBuffer, WriteBuffer};
use super::cache::Cache;
use super::config::TimingConfig;

/// Outcome of one data access.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DataAccess {
    /// Cycles the data arrives later than on a hit (includes `stall`).
    pub extra: u64,
    /// Cycles the access waited for a fill, pend or write buffer entry.
    pub stall: u64,
}

#[derive(Clone, Debug)]
pub struct DataSide {
    pub cache: Cache,
    write_back: bool,
    write_allocate: bool,
    fills: FillBuffer,
    pend: SlotBuffer,
    pub writes: WriteBuffer,
    latency: u64,
    word_cycles: u64,
    words: u32,
    half_bytes: u32,
    fill_time: u64,
    pub read_misses: u64,
    pub write_misses: u64,
    /// Dirty half lines written back on eviction.
    pub writebacks: u64,
    /// Accesses that hit a line still being filled.
    pub pend_hits: u64,
    /// `[base, base + len)` bypasses the cache (device registers in system mode).
    uncached: Option<(u32, u32)>,
}

impl DataSide {
    pub fn new(cfg: &TimingConfig) -> Self {
        let d = &cfg.dcache;
        let m = &cfg.memory;
        let cache = Cache::new(&d.geometry());
        let words = cache.words();
        DataSide {
            write_back: d.write_back,
            write_allocate: d.write_allocate,
            fills: FillBuffer::new(m.fill_buffers),
            pend: SlotBuffer::new(m.pend_buffers),
            writes: WriteBuffer::new(m.write_buffer_entries, m.write_buffer_entry_bytes, m.write_drain_cycles),
            latency: m.latency as u64,
            word_cycles: m.word_cycles as u64,
            words,
            half_bytes: d.line_bytes / 2,
            fill_time: m.latency as u64 + (words as u64 - 1) * m.word_cycles as u64,
            cache,
            read_misses: 0,
            write_misses: 0,
            writebacks: 0,
            pend_hits: 0,
            uncached: None,
        }
    }

    /// Make `[base, base + len)` uncached: loads take one word from memory, stores go to
    /// the write buffer, neither touches the cache or its statistics.
    pub fn set_uncached(&mut self, base: u32, len: u32) {
        self.uncached = Some((base, len));
    }

    /// Clean and invalidate the cache in zero time (fills in flight complete as timed).
    pub fn invalidate(&mut self) {
        self.cache.invalidate();
    }

    /// The cache slot of `addr` when an access to it at cycle `now` takes the common case:
    /// a cached address whose line is where the cache's hint says, no fill in flight, and
    /// no write buffer involved (no wait, no extra latency).
    #[inline(always)]
    fn at_once(&self, addr: u32, write: bool, now: u64) -> Option<usize> {
        if self.uncached.is_none() && now >= self.fills.busy_until && (!write || self.write_back) {
            self.cache.find_hinted(self.cache.line_of(addr))
        } else {
            None
        }
    }

    /// [`DataSide::access`] of `addr` at `now` when it takes the common case (no wait, no
    /// extra latency): true; else false, with nothing changed.
    #[inline(always)]
    pub fn access_at_once(&mut self, addr: u32, write: bool, now: u64) -> bool {
        let Some(slot) = self.at_once(addr, write, now) else {
            return false;
        };
        self.cache.accesses += 1;
        if write {
            self.cache.mark_dirty(slot, addr);
        }
        true
    }

    /// Take back the counts of the last `n` accesses that [`DataSide::access_at_once`]
    /// made, to be made again: hits change nothing else but dirty bits, which the same
    /// accesses set again.
    #[inline]
    pub fn uncount_accesses(&mut self, n: u64) {
        self.cache.accesses -= n;
    }

    /// One load or store of `addr` issued to the cache at cycle `now`.
    #[inline(always)]
    pub fn access(&mut self, addr: u32, write: bool, now: u64) -> DataAccess {
        // The common case inline; what `access_general` does then.
        if self.access_at_once(addr, write, now) {
            return DataAccess::default();
        }
        self.access_general(addr, write, now)
    }

    #[inline(never)]
    fn access_general(&mut self, addr: u32, write: bool, now: u64) -> DataAccess {
        if let Some((base, len)) = self.uncached {
            if addr.wrapping_sub(base) < len {
                return self.uncached_access(addr, write, now);
            }
        }
        self.cache.accesses += 1;
        let line = self.cache.line_of(addr);
        let word = (addr >> 2) & (self.words - 1);
        if self.cache.enabled {
            if let Some(slot) = self.cache.find(line) {
                let mut out = DataAccess::default();
                let mut at = now;
                if let Some(f) = self.fills.in_flight(line, now) {
                    // The line is still arriving: wait in the pend buffer until the fill ends.
                    self.pend_hits += 1;
                    at = self.pend.take(now, f.done);
                    out.stall = at - now;
                    out.extra = out.stall;
                    if !write {
                        let arrival = f.arrival(word, self.words, self.latency, self.word_cycles);
                        out.extra = out.extra.max(arrival.saturating_sub(now));
                    }
                }
                if write {
                    if self.write_back {
                        self.cache.mark_dirty(slot, addr);
                    } else {
                        out.stall += self.writes.push(addr, at);
                    }
                }
                return out;
            }
        }
        self.cache.misses += 1;
        if write {
            self.write_misses += 1;
            if !self.write_allocate || !self.cache.enabled {
                let stall = self.writes.push(addr, now);
                return DataAccess { extra: stall, stall };
            }
        } else {
            self.read_misses += 1;
        }
        self.miss(line, word, addr, write, now)
    }

    #[cold]
    fn uncached_access(&mut self, addr: u32, write: bool, now: u64) -> DataAccess {
        if write {
            let stall = self.writes.push(addr, now);
            return DataAccess { extra: stall, stall };
        }
        let line = self.cache.line_of(addr);
        let f: Fill = self.fills.start(line, (addr >> 2) & (self.words - 1), now, self.latency);
        DataAccess { extra: f.start - now + self.latency, stall: f.start - now }
    }

    #[cold]
    fn miss(&mut self, line: u32, word: u32, addr: u32, write: bool, now: u64) -> DataAccess {
        // An uncached read (cache off) brings one word; a line fill the whole line.
        let duration = if self.cache.enabled { self.fill_time } else { self.latency };
        let f: Fill = self.fills.start(line, word, now, duration);
        let mut stall = f.start - now;
        if self.cache.enabled {
            let (slot, victim) = self.cache.allocate(line);
            if let Some(v) = victim {
                // Each dirty half of the evicted line becomes one write-buffer entry.
                for half in 0..2 {
                    if v.dirty & (1 << half) != 0 {
                        self.writebacks += 1;
                        let a = (v.line << self.cache.line_shift) + half * self.half_bytes;
                        stall += self.writes.push(a, f.start + stall);
                    }
                }
            }
            if write {
                if self.write_back {
                    self.cache.mark_dirty(slot, addr);
                } else {
                    stall += self.writes.push(addr, f.start + stall);
                }
            }
        }
        // The critical word comes `latency` after the request; evictions only hold the pipe.
        DataAccess { extra: (f.start - now + self.latency).max(stall), stall }
    }
}

#[derive(Clone, Debug)]
pub struct FetchSide {
    pub cache: Cache,
    buffers: FillBuffer,
    latency: u64,
    word_cycles: u64,
    words: u32,
    fill_time: u64,
    /// The line the last instruction came from, and its fill while it is still arriving.
    cur_line: u32,
    cur_fill: Fill,
    /// The first address of `cur_line` once its fill is over (`NOT_DONE` before): an
    /// address in it then fetches at once, which one mask and compare tell.
    done_base: u32,
    /// Clears the offset in a line from an address.
    line_mask: u32,
}

const NO_FILL: Fill = Fill { line: u32::MAX, start: 0, crit: 0, done: 0 };
/// A `done_base` no masked address equals (lines are at least 4 bytes).
const NOT_DONE: u32 = u32::MAX;

impl FetchSide {
    pub fn new(cfg: &TimingConfig) -> Self {
        let m = &cfg.memory;
        let cache = Cache::new(&cfg.icache);
        let words = cache.words();
        let line_mask = !((1u32 << cache.line_shift) - 1);
        FetchSide {
            buffers: FillBuffer::new(m.fetch_buffers),
            latency: m.latency as u64,
            word_cycles: m.word_cycles as u64,
            words,
            fill_time: m.latency as u64 + (words as u64 - 1) * m.word_cycles as u64,
            cache,
            cur_line: u32::MAX,
            cur_fill: NO_FILL,
            done_base: NOT_DONE,
            line_mask,
        }
    }

    /// Invalidate the cache in zero time; the next fetch looks its line up again.
    pub fn invalidate(&mut self) {
        self.cache.invalidate();
        self.cur_line = u32::MAX;
        self.cur_fill = NO_FILL;
        self.done_base = NOT_DONE;
    }

    /// The earliest cycle (at least `t`) the instruction at `pc` can issue, given when its
    /// word is in the fetch unit. Staying in one line needs no cache lookup: nothing else
    /// touches the I-cache, so the line cannot have left. (Calls come with increasing `t`:
    /// a fill over for one is over for the next.)
    #[inline]
    pub fn fetch(&mut self, pc: u32, t: u64) -> u64 {
        if pc & self.line_mask == self.done_base {
            return t;
        }
        let line = self.cache.line_of(pc);
        if line == self.cur_line {
            if t >= self.cur_fill.done {
                self.done_base = pc & self.line_mask;
                return t;
            }
            return t.max(self.arrival(pc));
        }
        // A new line that the cache's hint finds, with no fetch buffer busy: what `new_line`
        // does then, inline (a quarter of the instructions start a line).
        if self.line_at_once(line, t) {
            self.cur_line = line;
            self.cur_fill = NO_FILL;
            self.done_base = pc & self.line_mask;
            return t;
        }
        self.done_base = NOT_DONE;
        self.new_line(line, pc, t)
    }

    /// Whether [`FetchSide::fetch`]`(pc, t)` would return `t` by one of its quick cases;
    /// changes nothing. (False may still fetch at once.)
    #[inline]
    pub fn at_once(&self, pc: u32, t: u64) -> bool {
        if pc & self.line_mask == self.done_base {
            return true;
        }
        let line = self.cache.line_of(pc);
        if line == self.cur_line {
            return t >= self.cur_fill.done;
        }
        self.new_line_at_once(pc, t)
    }

    /// Whether a fetch at `pc` in a line other than the current one, at `t`, finds it
    /// where the cache's hint says with no fetch buffer busy (and returns `t`).
    #[inline]
    pub fn new_line_at_once(&self, pc: u32, t: u64) -> bool {
        self.line_at_once(self.cache.line_of(pc), t)
    }

    /// [`FetchSide::new_line_at_once`] of the line `line`.
    #[inline(always)]
    fn line_at_once(&self, line: u32, t: u64) -> bool {
        t >= self.buffers.busy_until && self.cache.find_hinted(line).is_some()
    }

    #[inline]
    fn arrival(&self, pc: u32) -> u64 {
        self.cur_fill.arrival((pc >> 2) & (self.words - 1), self.words, self.latency, self.word_cycles)
    }

    #[inline(never)]
    fn new_line(&mut self, line: u32, pc: u32, t: u64) -> u64 {
        self.cur_line = line;
        if self.cache.enabled && self.cache.find(line).is_some() {
            // A hit on a line that may still be streaming into a fetch buffer.
            self.cur_fill = self.buffers.in_flight(line, t).unwrap_or(NO_FILL);
            return if t >= self.cur_fill.done { t } else { t.max(self.arrival(pc)) };
        }
        self.cache.misses += 1;
        let word = (pc >> 2) & (self.words - 1);
        self.cur_fill = self.buffers.start(line, word, t, self.fill_time);
        if self.cache.enabled {
            self.cache.allocate(line);
        }
        self.cur_fill.start + self.latency
    }
}

//! SAD lossy trace reduction (Kaplan, Smaragdakis and Wilson), algorithms.md §5.2
//! (**\[RECON\]**: rebuilt from the paper's stated guarantee).
//!
//! Guarantee: for reduction memory `r`, an LRU simulation of any memory of at least `r`
//! pages gives exactly the original trace's faults and evictions (and the same OPT fault
//! counts); with dirty propagation also the same dirty flag on every eviction.
//!
//! Pipeline, one forward pass with O(r) state:
//!
//! 1. [`PageSplitter`]: a raw reference becomes one page reference, or two when it crosses
//!    a page boundary (lower page first, same stamps). Stamps (§4.2 \[PROP\]): RTIME is the
//!    reference's 0-based index in the original trace, ITIME the number of ifetches before
//!    it, CYCLE the record's cycle. Keys are `(asid, vpn)`.
//! 2. [`Reducer`]: blocking and the SAD rule over the already reduced stream. The window
//!    `W` is the longest suffix of the undecided reduced stream that touches at most `r`
//!    distinct pages; per page only its first (protected) and last references in `W` stay
//!    alive. A new reference to a page of `W` drops that page's previous last reference
//!    unless it is the first; a reference to a new page, when `W` already has `r` pages,
//!    finalises (emits) everything up to and including the oldest last reference, whose
//!    page leaves `W`; each remaining page whose first reference was emitted gets its last
//!    reference as new first.
//!
//!    Blocking (§5.2 pre-step) is applied to the reduced stream, not only to the input:
//!    whenever two alive neighbours refer to the same page (the input repeats the previous
//!    kept page, or a drop leaves two references of one page side by side), the newer one
//!    is dropped and the older kept. A consecutive repeat is a no-op for LRU and OPT, and
//!    removing every such pair is what makes the reduction idempotent (P4): a pass over the
//!    reduced trace finds nothing left to remove.
//! 3. Dirty propagation (§5.2 \[PROP\]): when a write is dropped, the reference that caused
//!    the drop becomes a write: the newer reference to the page under the SAD rule, the kept
//!    older one under blocking.
//!
//! Records leave the reducer in trace order as soon as they are final; at most `2r + 1`
//! references are held.

use crate::laplace::{Access, RawRecord, SadRecord};
use crate::paging::{PageKey, PageMap};
use std::collections::VecDeque;

/// Default page size (§4.2: 20-bit VPN of a 32-bit address).
pub const DEFAULT_PAGE_SIZE: u64 = 4096;

/// Error of the SAD stages.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SadError {
    /// Invalid parameter.
    #[error("invalid SAD configuration: {0}")]
    Config(String),
    /// A reference that cannot be mapped to pages.
    #[error("reference {index}: {what}")]
    Reference {
        /// 0-based index of the reference in the input.
        index: u64,
        /// What is wrong.
        what: String,
    },
}

/// The page key of a record.
pub fn key_of(r: &SadRecord) -> PageKey {
    PageKey::new(r.asid, r.vpn)
}

/// Maps raw references to page references with RTIME/ITIME stamps (step 1).
#[derive(Clone, Debug)]
pub struct PageSplitter {
    shift: u32,
    page_size: u64,
    rtime: u64,
    itime: u64,
}

impl PageSplitter {
    /// `page_size` must be a power of two.
    pub fn new(page_size: u64) -> Result<Self, SadError> {
        if !page_size.is_power_of_two() {
            return Err(SadError::Config(format!(
                "page size {page_size} is not a power of two"
            )));
        }
        Ok(PageSplitter {
            shift: page_size.trailing_zeros(),
            page_size,
            rtime: 0,
            itime: 0,
        })
    }

    /// Raw references seen so far.
    pub fn refs(&self) -> u64 {
        self.rtime
    }

    /// Split one raw reference into one or two page references (lower page first).
    pub fn split(&mut self, r: &RawRecord) -> Result<SplitRefs, SadError> {
        let index = self.rtime;
        let bad = |what: String| SadError::Reference { index, what };
        if r.asid == 0 {
            return Err(bad("ASID 0 is reserved".into()));
        }
        if r.len == 0 || r.len > self.page_size {
            return Err(bad(format!(
                "access length {} is not in 1..=page size {}",
                r.len, self.page_size
            )));
        }
        let end = r.vaddr.checked_add(r.len - 1).ok_or_else(|| {
            bad(format!(
                "access of {} bytes at {:#x} wraps around the address space",
                r.len, r.vaddr
            ))
        })?;
        let rec = SadRecord {
            kind: r.kind,
            cycle: r.cycle,
            itime: self.itime,
            rtime: self.rtime,
            asid: r.asid,
            vpn: r.vaddr >> self.shift,
        };
        self.rtime += 1;
        if r.kind == Access::Ifetch {
            self.itime += 1;
        }
        let last_vpn = end >> self.shift;
        Ok(if last_vpn == rec.vpn {
            SplitRefs {
                recs: [rec, rec],
                n: 1,
            }
        } else {
            SplitRefs {
                recs: [rec, SadRecord { vpn: last_vpn, ..rec }],
                n: 2,
            }
        })
    }
}

/// The one or two page references of a raw reference.
#[derive(Clone, Copy, Debug)]
pub struct SplitRefs {
    recs: [SadRecord; 2],
    n: usize,
}

impl SplitRefs {
    /// The page references, lower page first.
    pub fn as_slice(&self) -> &[SadRecord] {
        &self.recs[..self.n]
    }
}

/// Counters of a reduction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SadStats {
    /// Raw references read (before page splitting); equals `page_refs` when page
    /// references are pushed directly.
    pub input_refs: u64,
    /// Page references after splitting.
    pub page_refs: u64,
    /// Page references dropped as consecutive repeats (blocking).
    pub blocked: u64,
    /// Page references dropped by the SAD rule.
    pub dropped: u64,
    /// Records emitted.
    pub output_refs: u64,
}

impl SadStats {
    /// Reduction ratio: input references per output record (0 for empty output).
    pub fn ratio(&self) -> f64 {
        if self.output_refs == 0 {
            0.0
        } else {
            self.input_refs as f64 / self.output_refs as f64
        }
    }
}

const NIL: u32 = u32::MAX;

#[derive(Clone, Copy)]
struct Slot {
    rec: SadRecord,
    key: PageKey,
    prev: u32,
    next: u32,
}

#[derive(Clone, Copy)]
struct PageState {
    first: u32,
    last: u32,
}

/// The SAD reducer (step 2) over page references; push records, pop finalised ones.
pub struct Reducer {
    r: usize,
    slots: Vec<Slot>,
    free: Vec<u32>,
    head: u32,
    tail: u32,
    pages: PageMap<PageState>,
    ready: VecDeque<SadRecord>,
    stats: SadStats,
}

fn merge_dirty(into: &mut SadRecord, from: &SadRecord) {
    if from.kind == Access::Write {
        into.kind = Access::Write;
    }
}

impl Reducer {
    /// A reducer with reduction memory `r` pages (at least 1).
    pub fn new(r: usize) -> Result<Self, SadError> {
        if r == 0 {
            return Err(SadError::Config("reduction memory r must be at least 1 page".into()));
        }
        if r > (1 << 28) {
            return Err(SadError::Config(format!("reduction memory r = {r} is too large")));
        }
        Ok(Reducer {
            r,
            slots: Vec::with_capacity(2 * r + 1),
            free: Vec::new(),
            head: NIL,
            tail: NIL,
            pages: PageMap::default(),
            ready: VecDeque::new(),
            stats: SadStats::default(),
        })
    }

    /// Counters so far (`input_refs` counts pushed page references).
    pub fn stats(&self) -> SadStats {
        let mut s = self.stats;
        s.input_refs = s.page_refs;
        s
    }

    fn alloc(&mut self, rec: SadRecord, key: PageKey) -> u32 {
        let slot = Slot {
            rec,
            key,
            prev: self.tail,
            next: NIL,
        };
        let i = match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = slot;
                i
            }
            None => {
                self.slots.push(slot);
                (self.slots.len() - 1) as u32
            }
        };
        if self.tail == NIL {
            self.head = i;
        } else {
            self.slots[self.tail as usize].next = i;
        }
        self.tail = i;
        i
    }

    /// Remove slot `i` from the list and recycle it.
    fn unlink(&mut self, i: u32) {
        let Slot { prev, next, .. } = self.slots[i as usize];
        if prev == NIL {
            self.head = next;
        } else {
            self.slots[prev as usize].next = next;
        }
        if next == NIL {
            self.tail = prev;
        } else {
            self.slots[next as usize].prev = prev;
        }
        self.free.push(i);
    }

    /// Emit the head of the list.
    fn emit_head(&mut self) -> Slot {
        let i = self.head;
        let s = self.slots[i as usize];
        self.unlink(i);
        self.ready.push_back(s.rec);
        self.stats.output_refs += 1;
        s
    }

    /// Push one page reference.
    pub fn push(&mut self, mut x: SadRecord) {
        self.stats.page_refs += 1;
        let key = key_of(&x);
        if let Some(&ps) = self.pages.get(&key) {
            let y = ps.last;
            if y == self.tail {
                // Consecutive repeat of the page's latest kept reference: blocking.
                self.stats.blocked += 1;
                merge_dirty(&mut self.slots[y as usize].rec, &x);
                return;
            }
            if y != ps.first {
                // y stops being the page's last reference: a middle one.
                self.stats.dropped += 1;
                let ys = self.slots[y as usize];
                merge_dirty(&mut x, &ys.rec);
                self.unlink(y);
                // y's neighbours are now adjacent; y was neither head (its page's first is
                // older) nor tail (checked above), so both exist.
                let (p, n) = (ys.prev, ys.next);
                let (pk, nk) = (self.slots[p as usize].key, self.slots[n as usize].key);
                if pk == nk {
                    // n is its page's last reference, p its first: block n into p.
                    self.stats.blocked += 1;
                    let nrec = self.slots[n as usize].rec;
                    merge_dirty(&mut self.slots[p as usize].rec, &nrec);
                    self.unlink(n);
                    let q = self.pages.get_mut(&nk).expect("alive page is in W");
                    debug_assert!(q.first == p && q.last == n);
                    q.last = p;
                }
            }
            // The page's first stays alive: only last references are ever dropped.
            let i = self.alloc(x, key);
            self.pages.insert(key, PageState { first: ps.first, last: i });
            return;
        }
        if self.pages.len() == self.r {
            self.evict_oldest();
        }
        let i = self.alloc(x, key);
        self.pages.insert(key, PageState { first: i, last: i });
    }

    /// Finalise everything up to and including the oldest "last" reference of `W`; its
    /// page leaves the window.
    fn evict_oldest(&mut self) {
        loop {
            let i = self.head;
            let s = self.emit_head();
            let ps = *self.pages.get(&s.key).expect("alive page is in W");
            // The head is always its page's first reference (a page's last one is newer or
            // the same); when it is the last one too, it is the oldest last reference of W.
            debug_assert_eq!(ps.first, i);
            if ps.last == i {
                self.pages.remove(&s.key);
                return;
            }
            // Its first was emitted: the last reference becomes the protected first.
            self.pages.insert(
                s.key,
                PageState {
                    first: ps.last,
                    last: ps.last,
                },
            );
        }
    }

    /// Pop a finalised record, in trace order.
    pub fn pop(&mut self) -> Option<SadRecord> {
        self.ready.pop_front()
    }

    /// End of input: finalise everything still held.
    pub fn finish(&mut self) {
        while self.head != NIL {
            self.emit_head();
        }
        self.pages.clear();
        self.slots.clear();
        self.free.clear();
    }
}

/// Streaming SAD over raw references: an iterator adapter that yields reduced records in
/// trace order. Input errors pass through (and end the stream); mapping errors are
/// converted with `E: From<SadError>`.
pub struct SadIter<I> {
    inner: I,
    splitter: PageSplitter,
    reducer: Reducer,
    done: bool,
}

impl<I, E> SadIter<I>
where
    I: Iterator<Item = Result<RawRecord, E>>,
    E: From<SadError>,
{
    /// Reduce `inner` with memory `r` pages of `page_size` bytes.
    pub fn new(inner: I, r: usize, page_size: u64) -> Result<Self, SadError> {
        Ok(SadIter {
            inner,
            splitter: PageSplitter::new(page_size)?,
            reducer: Reducer::new(r)?,
            done: false,
        })
    }

    /// Counters so far (complete once the iterator is exhausted).
    pub fn stats(&self) -> SadStats {
        let mut s = self.reducer.stats();
        s.input_refs = self.splitter.refs();
        s
    }
}

impl<I, E> Iterator for SadIter<I>
where
    I: Iterator<Item = Result<RawRecord, E>>,
    E: From<SadError>,
{
    type Item = Result<SadRecord, E>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(r) = self.reducer.pop() {
                return Some(Ok(r));
            }
            if self.done {
                return None;
            }
            match self.inner.next() {
                Some(Ok(raw)) => match self.splitter.split(&raw) {
                    Ok(parts) => parts.as_slice().iter().for_each(|&p| self.reducer.push(p)),
                    Err(e) => {
                        self.done = true;
                        return Some(Err(e.into()));
                    }
                },
                Some(Err(e)) => {
                    self.done = true;
                    return Some(Err(e));
                }
                None => {
                    self.done = true;
                    self.reducer.finish();
                }
            }
        }
    }
}

/// Reduce page references (for instance an already reduced trace) in memory.
pub fn reduce_pages(refs: &[SadRecord], r: usize) -> Result<(Vec<SadRecord>, SadStats), SadError> {
    let mut red = Reducer::new(r)?;
    let mut out = Vec::new();
    for &p in refs {
        red.push(p);
        out.extend(std::iter::from_fn(|| red.pop()));
    }
    red.finish();
    out.extend(std::iter::from_fn(|| red.pop()));
    Ok((out, red.stats()))
}

/// Split raw references into page references (no reduction), for checks and statistics.
pub fn split_pages(refs: &[RawRecord], page_size: u64) -> Result<Vec<SadRecord>, SadError> {
    let mut sp = PageSplitter::new(page_size)?;
    let mut out = Vec::with_capacity(refs.len());
    for r in refs {
        out.extend_from_slice(sp.split(r)?.as_slice());
    }
    Ok(out)
}

/// Reduce raw references in memory.
pub fn reduce_raw(
    refs: &[RawRecord],
    r: usize,
    page_size: u64,
) -> Result<(Vec<SadRecord>, SadStats), SadError> {
    let mut it = SadIter::new(refs.iter().map(|&r| Ok::<_, SadError>(r)), r, page_size)?;
    let out = it.by_ref().collect::<Result<Vec<_>, _>>()?;
    Ok((out, it.stats()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paging::simulate_lru;

    fn page(kind: Access, rtime: u64, vpn: u64) -> SadRecord {
        SadRecord {
            kind,
            cycle: rtime,
            itime: 0,
            rtime,
            asid: 1,
            vpn,
        }
    }

    fn pages_of(s: &str) -> Vec<SadRecord> {
        s.bytes()
            .enumerate()
            .map(|(i, c)| page(Access::Read, i as u64, c as u64))
            .collect()
    }

    fn letters(v: &[SadRecord]) -> String {
        v.iter().map(|r| r.vpn as u8 as char).collect()
    }

    fn lru_of(v: &[SadRecord], m: usize) -> crate::paging::LruReport {
        simulate_lru(v.iter().map(|r| (key_of(r), r.kind == Access::Write)), m)
    }

    /// algorithms.md §5.2: the naive rule reduces `p a p b p c p` (r = 3) to `p a b c p`,
    /// 5 LRU faults with 3 frames instead of 4; SAD keeps the LRU behaviour.
    #[test]
    fn naive_rule_counterexample_is_handled() {
        let input = pages_of("papbpcp");
        let (out, _) = reduce_pages(&input, 3).unwrap();
        assert_eq!(lru_of(&input, 3).faults, 4);
        assert_eq!(lru_of(&pages_of("pabcp"), 3).faults, 5);
        assert_eq!(lru_of(&out, 3).events, lru_of(&input, 3).events);
        assert_ne!(letters(&out), "pabcp");
    }

    #[test]
    fn hand_worked_window() {
        // r = 2: p a p a p. p2 is dropped when p3 arrives; then a1 and a2 are neighbours and
        // a2 is blocked into a1.
        let (out, st) = reduce_pages(&pages_of("papap"), 2).unwrap();
        assert_eq!(letters(&out), "pap");
        assert_eq!(
            out.iter().map(|r| r.rtime).collect::<Vec<_>>(),
            vec![0, 1, 4]
        );
        assert_eq!((st.dropped, st.blocked, st.output_refs), (1, 1, 3));
        // r = 1: every page change is final, repeats are blocked.
        let (out, _) = reduce_pages(&pages_of("aabba"), 1).unwrap();
        assert_eq!(letters(&out), "aba");
        assert_eq!(out[1].rtime, 2);
    }

    #[test]
    fn dirty_propagates_to_the_cause_of_the_drop() {
        // r = 2, "a b a b a": a2 (a write) is dropped by a3, which becomes a write; b2 is
        // blocked into b1, which becomes a write.
        let mut v = pages_of("ababa");
        v[2].kind = Access::Write;
        v[3].kind = Access::Write;
        let (out, _) = reduce_pages(&v, 2).unwrap();
        assert_eq!(letters(&out), "aba");
        assert_eq!(
            out.iter().map(|r| (r.rtime, r.kind)).collect::<Vec<_>>(),
            vec![(0, Access::Read), (1, Access::Write), (4, Access::Write)]
        );
    }

    #[test]
    fn page_crossing_splits_with_equal_stamps() {
        let raw = |kind, vaddr, len| RawRecord {
            kind,
            cycle: 100,
            len,
            asid: 3,
            vaddr,
        };
        let refs = [
            raw(Access::Ifetch, 0x1ffc, 4),
            raw(Access::Read, 0x1ffe, 4),
            raw(Access::Write, 0x2fff, 1),
            raw(Access::Ifetch, 0x2000, 4),
        ];
        let pages = split_pages(&refs, 4096).unwrap();
        assert_eq!(
            pages
                .iter()
                .map(|p| (p.vpn, p.rtime, p.itime))
                .collect::<Vec<_>>(),
            vec![(1, 0, 0), (1, 1, 1), (2, 1, 1), (2, 2, 1), (2, 3, 1)]
        );
        assert!(pages.iter().all(|p| p.cycle == 100 && p.asid == 3));
        // 16-byte pages: only the read at 0x1ffe crosses (0x1ff, 0x200).
        let pages = split_pages(&refs, 16).unwrap();
        assert_eq!(pages.len(), 5);
        assert_eq!(pages[0].vpn, 0x1ff);
        assert_eq!(pages[1].vpn, 0x1ff);
        assert_eq!(pages[2].vpn, 0x200);
    }

    #[test]
    fn bad_references_and_configs() {
        let mut sp = PageSplitter::new(4096).unwrap();
        let ok = RawRecord {
            kind: Access::Read,
            cycle: 0,
            len: 4,
            asid: 1,
            vaddr: 0,
        };
        sp.split(&ok).unwrap();
        let e = sp.split(&RawRecord { len: 8192, ..ok }).unwrap_err();
        assert!(e.to_string().starts_with("reference 1: access length 8192"), "{e}");
        let e = sp
            .split(&RawRecord {
                vaddr: u64::MAX - 1,
                ..ok
            })
            .unwrap_err();
        assert!(e.to_string().contains("wraps"), "{e}");
        assert!(PageSplitter::new(3000).is_err());
        assert!(Reducer::new(0).is_err());
    }

    #[test]
    fn streaming_emits_in_order_with_bounded_state() {
        // 100 000 references over 40 pages in a scrambled loop; the reducer never holds more
        // than 2r + 1 slots and its output is the in-memory result.
        let mut x = 12345u64;
        let refs: Vec<RawRecord> = (0..100_000u64)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                RawRecord {
                    kind: if x.is_multiple_of(7) { Access::Write } else { Access::Read },
                    cycle: i,
                    len: 4,
                    asid: 1,
                    vaddr: (x % 40) * 4096 + (i % 1024) * 4,
                }
            })
            .collect();
        let mut it = SadIter::new(refs.iter().map(|&r| Ok::<_, SadError>(r)), 8, 4096).unwrap();
        let mut out = Vec::new();
        let mut max_slots = 0;
        while let Some(r) = it.next() {
            out.push(r.unwrap());
            max_slots = max_slots.max(it.reducer.slots.len());
        }
        assert!(max_slots <= 2 * 8 + 1, "{max_slots}");
        assert!(out.windows(2).all(|w| w[0].rtime < w[1].rtime));
        let st = it.stats();
        assert_eq!(st.input_refs, 100_000);
        assert_eq!(st.output_refs, out.len() as u64);
        assert_eq!(st.page_refs, st.blocked + st.dropped + st.output_refs);
        assert_eq!(reduce_raw(&refs, 8, 4096).unwrap().0, out);
    }
}

//! Page-replacement simulators used to check SAD's guarantee (algorithms.md §5.1, §5.4)
//! and behind `streamtrace lru`: exact LRU with dirty tracking, and OPT (Belady's MIN).
//!
//! Both work on [`PageKey`]s (address space, virtual page number), so several address
//! spaces can share one memory ("global LRU"); split a trace by ASID to simulate per-process
//! LRU.

use std::collections::BinaryHeap;

/// A page of one address space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PageKey {
    /// Address space identifier.
    pub asid: u64,
    /// Virtual page number.
    pub vpn: u64,
}

impl PageKey {
    /// Convenience constructor.
    pub const fn new(asid: u64, vpn: u64) -> Self {
        PageKey { asid, vpn }
    }
}

/// `HashMap` keyed by [`PageKey`] with the stages' fast hasher.
pub type PageMap<V> = crate::hash::FastMap<PageKey, V>;

/// An evicted page and whether it was written while resident.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Eviction {
    /// The evicted page.
    pub page: PageKey,
    /// Written since it was loaded.
    pub dirty: bool,
}

/// One page fault: the faulting page and the page it replaced (none while memory fills).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Fault {
    /// The referenced page that was not resident.
    pub page: PageKey,
    /// The page evicted to make room.
    pub evicted: Option<Eviction>,
}

const NIL: u32 = u32::MAX;

#[derive(Clone, Copy)]
struct Node {
    page: PageKey,
    dirty: bool,
    /// Towards the most recently used end.
    newer: u32,
    /// Towards the least recently used end.
    older: u32,
}

/// Exact LRU memory of a fixed number of pages, O(1) per reference.
pub struct Lru {
    capacity: usize,
    nodes: Vec<Node>,
    index: PageMap<u32>,
    mru: u32,
    lru: u32,
    refs: u64,
    faults: u64,
}

impl Lru {
    /// A memory of `pages` page frames (at least 1).
    pub fn new(pages: usize) -> Self {
        assert!(pages >= 1, "an LRU memory needs at least one page");
        assert!(pages < NIL as usize, "too many page frames");
        Lru {
            capacity: pages,
            nodes: Vec::with_capacity(pages.min(1 << 20)),
            index: PageMap::default(),
            mru: NIL,
            lru: NIL,
            refs: 0,
            faults: 0,
        }
    }

    fn unlink(&mut self, i: u32) {
        let Node { newer, older, .. } = self.nodes[i as usize];
        if newer == NIL {
            self.mru = older;
        } else {
            self.nodes[newer as usize].older = older;
        }
        if older == NIL {
            self.lru = newer;
        } else {
            self.nodes[older as usize].newer = newer;
        }
    }

    fn push_mru(&mut self, i: u32) {
        self.nodes[i as usize].newer = NIL;
        self.nodes[i as usize].older = self.mru;
        if self.mru != NIL {
            self.nodes[self.mru as usize].newer = i;
        } else {
            self.lru = i;
        }
        self.mru = i;
    }

    /// Reference `page` (a write marks it dirty). Returns the fault, if it was one.
    pub fn access(&mut self, page: PageKey, write: bool) -> Option<Fault> {
        self.refs += 1;
        if let Some(&i) = self.index.get(&page) {
            self.nodes[i as usize].dirty |= write;
            if self.mru != i {
                self.unlink(i);
                self.push_mru(i);
            }
            return None;
        }
        self.faults += 1;
        let node = Node {
            page,
            dirty: write,
            newer: NIL,
            older: NIL,
        };
        let (slot, evicted) = if self.nodes.len() < self.capacity {
            self.nodes.push(node);
            ((self.nodes.len() - 1) as u32, None)
        } else {
            // Reuse the victim's slot for the new page.
            let v = self.lru;
            self.unlink(v);
            let old = self.nodes[v as usize];
            self.index.remove(&old.page);
            self.nodes[v as usize] = node;
            (
                v,
                Some(Eviction {
                    page: old.page,
                    dirty: old.dirty,
                }),
            )
        };
        self.index.insert(page, slot);
        self.push_mru(slot);
        Some(Fault { page, evicted })
    }

    /// References so far.
    pub fn refs(&self) -> u64 {
        self.refs
    }

    /// Faults so far.
    pub fn faults(&self) -> u64 {
        self.faults
    }

    /// Resident pages with their dirty flags, most recently used first.
    pub fn resident(&self) -> Vec<(PageKey, bool)> {
        let mut out = Vec::with_capacity(self.nodes.len());
        let mut i = self.mru;
        while i != NIL {
            let n = &self.nodes[i as usize];
            out.push((n.page, n.dirty));
            i = n.older;
        }
        out
    }
}

/// Result of a whole LRU run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LruReport {
    /// References simulated.
    pub refs: u64,
    /// Page faults.
    pub faults: u64,
    /// Every fault in order.
    pub events: Vec<Fault>,
    /// Final resident pages and dirty flags, sorted by page.
    pub resident: Vec<(PageKey, bool)>,
}

/// Run LRU with `pages` frames over `(page, is_write)` references, keeping every fault.
pub fn simulate_lru(refs: impl IntoIterator<Item = (PageKey, bool)>, pages: usize) -> LruReport {
    let mut lru = Lru::new(pages);
    let events: Vec<Fault> = refs
        .into_iter()
        .filter_map(|(p, w)| lru.access(p, w))
        .collect();
    let mut resident = lru.resident();
    resident.sort_unstable();
    LruReport {
        refs: lru.refs(),
        faults: lru.faults(),
        events,
        resident,
    }
}

/// Belady's OPT (MIN): the fault count of an optimal replacement with `pages` frames.
/// Needs the whole sequence (next-use distances); O(n log n).
pub fn opt_faults(refs: &[PageKey], pages: usize) -> u64 {
    assert!(pages >= 1, "an OPT memory needs at least one page");
    // next[i]: index of the next reference to refs[i]'s page, or usize::MAX.
    let mut next = vec![usize::MAX; refs.len()];
    let mut seen: PageMap<usize> = PageMap::default();
    for (i, p) in refs.iter().enumerate().rev() {
        if let Some(j) = seen.insert(*p, i) {
            next[i] = j;
        }
    }
    drop(seen);
    // Resident pages with the index of their next use; a max-heap of (next use, page) with
    // stale entries skipped lazily.
    let mut resident: PageMap<usize> = PageMap::default();
    let mut heap: BinaryHeap<(usize, PageKey)> = BinaryHeap::new();
    let mut faults = 0;
    for (i, p) in refs.iter().enumerate() {
        if !resident.contains_key(p) {
            faults += 1;
            if resident.len() == pages {
                loop {
                    let (nu, victim) = heap.pop().expect("a resident page has a heap entry");
                    if resident.get(&victim) == Some(&nu) {
                        resident.remove(&victim);
                        break;
                    }
                }
            }
        }
        resident.insert(*p, next[i]);
        heap.push((next[i], *p));
        if heap.len() > 4 * pages + 64 {
            // Drop stale entries so the heap stays O(pages).
            heap = resident.iter().map(|(&k, &nu)| (nu, k)).collect();
        }
    }
    faults
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(s: &str) -> Vec<PageKey> {
        s.bytes().map(|c| PageKey::new(1, c as u64)).collect()
    }

    #[test]
    fn lru_textbook_sequence() {
        // 7 0 1 2 0 3 0 4 2 3 0 3 2 1 2 0 1 7 0 1 with 3 frames: 12 LRU faults, 9 OPT faults
        // (Silberschatz et al.'s reference string).
        let s: Vec<PageKey> = [7, 0, 1, 2, 0, 3, 0, 4, 2, 3, 0, 3, 2, 1, 2, 0, 1, 7, 0, 1]
            .iter()
            .map(|&v| PageKey::new(1, v))
            .collect();
        let r = simulate_lru(s.iter().map(|&p| (p, false)), 3);
        assert_eq!(r.faults, 12);
        assert_eq!(r.events.len(), 12);
        assert_eq!(r.events[3].page.vpn, 2);
        assert_eq!(r.events[3].evicted.unwrap().page.vpn, 7);
        assert_eq!(
            r.resident.iter().map(|(p, _)| p.vpn).collect::<Vec<_>>(),
            vec![0, 1, 7]
        );
        assert_eq!(opt_faults(&s, 3), 9);
        assert_eq!(opt_faults(&s, 4), 8);
        assert_eq!(simulate_lru(s.iter().map(|&p| (p, false)), 4).faults, 8);
    }

    #[test]
    fn dirty_flags_follow_the_resident_copy() {
        let mut lru = Lru::new(1);
        assert!(lru.access(PageKey::new(1, 1), true).is_some());
        let f = lru.access(PageKey::new(1, 2), false).unwrap();
        assert_eq!(
            f.evicted,
            Some(Eviction {
                page: PageKey::new(1, 1),
                dirty: true
            })
        );
        // Reloaded page starts clean.
        lru.access(PageKey::new(1, 1), false);
        let f = lru.access(PageKey::new(1, 2), false).unwrap();
        assert!(!f.evicted.unwrap().dirty);
    }

    #[test]
    fn asids_are_distinct_pages() {
        let r = simulate_lru(
            [(PageKey::new(1, 5), false), (PageKey::new(2, 5), false)],
            2,
        );
        assert_eq!(r.faults, 2);
    }

    #[test]
    fn opt_never_worse_than_lru_and_heap_compaction() {
        // A long loop over 6 pages with 4 frames: LRU faults on every reference, OPT not.
        let s = keys(&"abcdef".repeat(200));
        let lru = simulate_lru(s.iter().map(|&p| (p, false)), 4).faults;
        let opt = opt_faults(&s, 4);
        assert_eq!(lru, s.len() as u64);
        assert!(opt < lru / 2, "opt {opt} lru {lru}");
        assert_eq!(opt_faults(&s, 6), 6);
    }
}

//! The predictors of `pft` (docs/trace-format.md sections 11.3-11.5): a TAGE-like direction
//! predictor, a return address stack, an indirect target predictor and a recent-target
//! cache. Each is a small type used unchanged by the encoder and the decoder.

use super::PftParams;

/// Index source of an instruction address: dense for both instruction sets.
#[inline]
pub fn hashed_pc(iw_addr: u32) -> u32 {
    if iw_addr & 1 != 0 {
        iw_addr >> 1
    } else {
        iw_addr >> 2
    }
}

/// XOR of the consecutive `n`-bit chunks of the low `len` bits of `g`.
#[inline]
pub fn fold(g: u64, len: u32, n: u32) -> u32 {
    let mut x = if len >= 64 { g } else { g & ((1u64 << len) - 1) };
    let mask = (1u64 << n) - 1;
    let mut f = 0u64;
    while x != 0 {
        f ^= x & mask;
        x >>= n;
    }
    f as u32
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct TaggedEntry {
    /// 3-bit signed counter, -4..=3; taken when >= 0.
    ctr: i8,
    tag: u16,
    useful: bool,
}

/// What one prediction looked at, kept for the update.
#[derive(Clone, Copy, Debug, Default)]
struct Lookup {
    provider: Option<usize>,
    pred: bool,
    alt: bool,
    base_index: usize,
    index: [u16; 8],
    tag: [u16; 8],
}

/// TAGE-like direction predictor: a bimodal base table and up to 8 tagged tables indexed
/// with geometric global-history lengths.
#[derive(Clone, Debug)]
pub struct DirectionPredictor {
    base: Vec<u8>,
    tables: Vec<Vec<TaggedEntry>>,
    hlen: Vec<u32>,
    index_bits: u32,
    tag_bits: u32,
    /// Global history of direction outcomes, newest in bit 0.
    history: u64,
    /// Per table, `fold(history, L_i, n)` for n = index bits, tag bits, tag bits - 1, kept
    /// up to date at each history shift as hardware does (circular folded registers); the
    /// values equal the definition in section 11.3, checked in debug builds.
    folds: Vec<[u32; 3]>,
    /// Where the outcome leaving table i's window lands in each folded register (len mod n).
    fold_exits: Vec<[u32; 3]>,
    last: Lookup,
}

/// One history shift of a folded register of width `n` over the last `len` outcomes:
/// rotate left by one within `n` bits, add the new outcome at bit 0, and remove the outcome
/// that just left the window (now at position `len`, folded to `len mod n`).
#[inline]
fn shift_fold(f: u32, n: u32, exit: u32, new: bool, leaving: bool) -> u32 {
    let mask = (1u32 << n) - 1;
    let rotated = ((f << 1) | (f >> (n - 1))) & mask;
    rotated ^ new as u32 ^ ((leaving as u32) << exit)
}

impl DirectionPredictor {
    pub fn new(p: &PftParams) -> Self {
        let hlen: Vec<u32> = p.history_lengths().to_vec();
        DirectionPredictor {
            base: vec![2; p.bim as usize],
            tables: hlen.iter().map(|_| vec![TaggedEntry::default(); p.tsize as usize]).collect(),
            hlen,
            index_bits: p.tsize.trailing_zeros(),
            tag_bits: p.tag,
            history: 0,
            folds: vec![[0; 3]; p.tables()],
            fold_exits: p
                .history_lengths()
                .iter()
                .map(|&l| {
                    let e = p.tsize.trailing_zeros();
                    [l % e, l % p.tag, l % (p.tag - 1)]
                })
                .collect(),
            last: Lookup::default(),
        }
    }

    pub fn reset(&mut self) {
        self.base.fill(2);
        for t in &mut self.tables {
            t.fill(TaggedEntry::default());
        }
        self.history = 0;
        self.folds.fill([0; 3]);
    }

    /// Number of coding contexts: base weak/strong, then four strengths per tagged table.
    pub fn contexts(tables: usize) -> usize {
        2 + 4 * tables
    }

    /// Predict the branch at `iw_addr`: (taken?, coding context).
    #[inline]
    pub fn predict(&mut self, iw_addr: u32) -> (bool, usize) {
        let h = hashed_pc(iw_addr);
        let e = self.index_bits;
        let w = self.tag_bits;
        let mut l = Lookup { base_index: (h as usize) & (self.base.len() - 1), ..Default::default() };
        let b = self.base[l.base_index];
        let base_pred = b >= 2;
        let mut pred = base_pred;
        let mut ctx = if b == 1 || b == 2 { 0 } else { 1 };
        let mut alt = base_pred;
        let mut found = false;
        for i in (0..self.tables.len()).rev() {
            let [fe, fw, fw1] = self.folds[i];
            debug_assert_eq!(
                [fe, fw, fw1],
                [fold(self.history, self.hlen[i], e), fold(self.history, self.hlen[i], w), fold(self.history, self.hlen[i], w - 1)]
            );
            let idx = (h ^ (h >> e) ^ fe) & ((1 << e) - 1);
            let tag = (h ^ fw ^ (fw1 << 1)) & ((1 << w) - 1);
            l.index[i] = idx as u16;
            l.tag[i] = tag as u16;
            let entry = self.tables[i][idx as usize];
            if entry.tag == tag as u16 {
                if !found {
                    found = true;
                    l.provider = Some(i);
                    pred = entry.ctr >= 0;
                    let strength = if entry.ctr >= 0 { entry.ctr } else { -1 - entry.ctr } as usize;
                    ctx = 2 + 4 * i + strength;
                } else {
                    alt = entry.ctr >= 0;
                    // Indices and tags of lower tables are still needed for allocation only
                    // above the provider, so the search may stop here.
                    break;
                }
            }
        }
        // Tables below the first match were not visited when the loop broke early; their
        // index and tag are never used (allocation goes above the provider).
        l.pred = pred;
        l.alt = alt;
        self.last = l;
        (pred, ctx)
    }

    /// Update with the outcome of the branch last predicted.
    #[inline]
    pub fn update(&mut self, taken: bool) {
        let l = self.last;
        match l.provider {
            Some(p) => {
                let e = &mut self.tables[p][l.index[p] as usize];
                e.ctr = if taken { (e.ctr + 1).min(3) } else { (e.ctr - 1).max(-4) };
                if l.pred != l.alt {
                    e.useful = l.pred == taken;
                }
            }
            None => {
                let c = &mut self.base[l.base_index];
                *c = if taken { (*c + 1).min(3) } else { c.saturating_sub(1) };
            }
        }
        if l.pred != taken {
            let start = l.provider.map_or(0, |p| p + 1);
            let free = (start..self.tables.len()).find(|&j| !self.tables[j][l.index[j] as usize].useful);
            match free {
                Some(j) => {
                    self.tables[j][l.index[j] as usize] =
                        TaggedEntry { ctr: if taken { 0 } else { -1 }, tag: l.tag[j], useful: false };
                }
                None => {
                    for j in start..self.tables.len() {
                        self.tables[j][l.index[j] as usize].useful = false;
                    }
                }
            }
        }
        let (e, w) = (self.index_bits, self.tag_bits);
        for ((f, x), &len) in self.folds.iter_mut().zip(&self.fold_exits).zip(&self.hlen) {
            // The outcome at position len - 1 leaves the window of this table.
            let leaving = (self.history >> (len - 1)) & 1 != 0;
            f[0] = shift_fold(f[0], e, x[0], taken, leaving);
            f[1] = shift_fold(f[1], w, x[1], taken, leaving);
            f[2] = shift_fold(f[2], w - 1, x[2], taken, leaving);
        }
        self.history = (self.history << 1) | taken as u64;
    }
}

/// Return address stack: a circular buffer; a push when full overwrites the oldest entry,
/// a pop when empty predicts 0.
#[derive(Clone, Debug)]
pub struct ReturnAddressStack {
    entries: Vec<u32>,
    top: usize,
    count: usize,
}

impl ReturnAddressStack {
    pub fn new(depth: u32) -> Self {
        ReturnAddressStack { entries: vec![0; depth as usize], top: 0, count: 0 }
    }

    pub fn reset(&mut self) {
        self.entries.fill(0);
        self.top = 0;
        self.count = 0;
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    #[inline]
    pub fn push(&mut self, a: u32) {
        let n = self.entries.len();
        if n == 0 {
            return;
        }
        self.top = (self.top + 1) % n;
        self.entries[self.top] = a;
        self.count = (self.count + 1).min(n);
    }

    /// The top entry (0 when empty).
    #[inline]
    pub fn peek(&self) -> u32 {
        if self.count == 0 {
            0
        } else {
            self.entries[self.top]
        }
    }

    #[inline]
    pub fn pop(&mut self) -> u32 {
        if self.count == 0 {
            return 0;
        }
        let a = self.entries[self.top];
        let n = self.entries.len();
        self.top = (self.top + n - 1) % n;
        self.count -= 1;
        a
    }
}

/// Indirect target predictor: a direct-mapped table of last targets indexed by the branch
/// address XOR an 8-bit path history of earlier indirect targets. No entries: predicts 0.
#[derive(Clone, Debug)]
pub struct IndirectTargetPredictor {
    targets: Vec<u32>,
    path: u32,
}

impl IndirectTargetPredictor {
    pub fn new(entries: u32) -> Self {
        IndirectTargetPredictor { targets: vec![0; entries as usize], path: 0 }
    }

    pub fn reset(&mut self) {
        self.targets.fill(0);
        self.path = 0;
    }

    #[inline]
    fn index(&self, iw_addr: u32) -> usize {
        ((hashed_pc(iw_addr) ^ self.path) as usize) & (self.targets.len().max(1) - 1)
    }

    #[inline]
    pub fn predict(&self, iw_addr: u32) -> u32 {
        if self.targets.is_empty() {
            0
        } else {
            self.targets[self.index(iw_addr)]
        }
    }

    /// Record the actual target of the indirect branch at `iw_addr`.
    #[inline]
    pub fn update(&mut self, iw_addr: u32, target: u32) {
        if !self.targets.is_empty() {
            let i = self.index(iw_addr);
            self.targets[i] = target;
        }
        self.path = ((self.path << 2) ^ (target >> 2)) & 0xFF;
    }
}

/// Recent-target cache: the last `n` distinct mispredicted targets, most recent first.
#[derive(Clone, Debug)]
pub struct RecentTargets {
    entries: Vec<u32>,
    len: usize,
}

impl RecentTargets {
    pub fn new(n: u32) -> Self {
        RecentTargets { entries: vec![0; n as usize], len: 0 }
    }

    pub fn reset(&mut self) {
        self.entries.fill(0);
        self.len = 0;
    }

    pub fn capacity(&self) -> usize {
        self.entries.len()
    }

    pub fn find(&self, a: u32) -> Option<usize> {
        self.entries[..self.len].iter().position(|&x| x == a)
    }

    pub fn get(&self, i: usize) -> Option<u32> {
        (i < self.len).then(|| self.entries[i])
    }

    /// Move entry `i` (or, with `None`, a new address) to the front.
    pub fn touch(&mut self, i: Option<usize>, a: u32) {
        let n = self.entries.len();
        if n == 0 {
            return;
        }
        let from = match i {
            Some(i) => i,
            None => {
                self.len = (self.len + 1).min(n);
                self.len - 1
            }
        };
        self.entries.copy_within(0..from, 1);
        self.entries[0] = a;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fold_xors_chunks() {
        assert_eq!(fold(0b1011_0110, 8, 4), 0b1011 ^ 0b0110);
        assert_eq!(fold(0xFFFF_FFFF_FFFF_FFFF, 3, 2), 0b11 ^ 0b1);
        assert_eq!(fold(u64::MAX, 64, 7), fold(u64::MAX, 70, 7));
        assert_eq!(hashed_pc(0x8004), 0x2001);
        assert_eq!(hashed_pc(0x8003), 0x4001);
    }

    #[test]
    fn folded_registers_equal_the_fold_of_the_history() {
        let mut s = 0x1234_5678u64;
        for (len, n) in [(1, 1), (3, 7), (8, 6), (20, 6), (50, 7), (50, 6), (64, 15), (64, 4), (7, 7)] {
            let (mut f, mut g) = (0, 0u64);
            for _ in 0..500 {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1);
                let bit = (s >> 40) & 1 != 0;
                let leaving = (g >> (len - 1)) & 1 != 0;
                f = shift_fold(f, n, len % n, bit, leaving);
                g = (g << 1) | bit as u64;
                assert_eq!(f, fold(g, len, n), "len {len} n {n}");
            }
        }
    }

    #[test]
    fn ras_wraps_and_empties() {
        let mut r = ReturnAddressStack::new(2);
        assert_eq!(r.pop(), 0);
        r.push(1);
        r.push(2);
        r.push(3); // overwrites 1
        assert_eq!(r.peek(), 3);
        assert_eq!(r.pop(), 3);
        assert_eq!(r.pop(), 2);
        assert!(r.is_empty());
        assert_eq!(r.pop(), 0);
        let mut none = ReturnAddressStack::new(0);
        none.push(5);
        assert_eq!(none.pop(), 0);
    }

    #[test]
    fn recent_targets_are_mru() {
        let mut t = RecentTargets::new(3);
        for a in [10, 20, 30, 40] {
            assert_eq!(t.find(a), None);
            t.touch(None, a);
        }
        assert_eq!((t.get(0), t.get(1), t.get(2), t.get(3)), (Some(40), Some(30), Some(20), None));
        let i = t.find(20);
        assert_eq!(i, Some(2));
        t.touch(i, 20);
        assert_eq!((t.get(0), t.get(1), t.get(2)), (Some(20), Some(40), Some(30)));
    }

    #[test]
    fn itp_learns_last_target_under_a_path() {
        let mut p = IndirectTargetPredictor::new(16);
        assert_eq!(p.predict(0x100), 0);
        p.update(0x100, 0x2000);
        // The path changed, so the same branch may index elsewhere; repeat the pattern.
        for _ in 0..3 {
            p.update(0x100, 0x2000);
        }
        assert_eq!(p.predict(0x100), 0x2000);
        assert_eq!(IndirectTargetPredictor::new(0).predict(0x100), 0);
    }

    #[test]
    fn tage_learns_a_loop_exit_that_bimodal_misses() {
        // A loop branch taken 6 times then not taken: history of length >= 7 captures it.
        let mut p = PftParams::default();
        let mut d = DirectionPredictor::new(&p);
        let mut misses_late = 0;
        for iter in 0..2000 {
            for k in 0..7 {
                let taken = k != 6;
                let (pred, _) = d.predict(0x8000);
                if iter > 1000 && pred != taken {
                    misses_late += 1;
                }
                d.update(taken);
            }
        }
        assert_eq!(misses_late, 0, "TAGE with history 8 predicts a trip count of 7");
        p.hlen = [0; 8];
        let mut b = DirectionPredictor::new(&p);
        let mut bim_misses = 0;
        for iter in 0..2000 {
            for k in 0..7 {
                let (pred, _) = b.predict(0x8000);
                if iter > 1000 && pred != (k != 6) {
                    bim_misses += 1;
                }
                b.update(k != 6);
            }
        }
        assert!(bim_misses >= 999, "bimodal misses every exit ({bim_misses})");
    }
}

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

/// The address shift in tagged table `table`'s index, `max(1, e - table)` with `e` index
/// bits (section 11.3): the model and the RTL take it from here.
#[inline]
pub fn index_shift(index_bits: u32, table: usize) -> u32 {
    index_bits.saturating_sub(table as u32).max(1)
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

/// Lanes of `W` bits (8 or 16), one per tagged table: table `i` in bits `W * (i % (64 / W))..`
/// of word `i / (64 / W)`. The folded registers, indices and tags of all tables are kept
/// in lanes so that one word operation serves several tables: eight 8-bit lanes (one word)
/// when the index and tag widths are at most 8 bits, as in the default, else 16-bit lanes
/// (index bits <= 12 and tag bits <= 15 fit), four to a word.
type Lanes = [u64; 2];

/// Bit 0 of each `W`-bit lane.
#[inline(always)]
const fn lane_ones<const W: u32>() -> u64 {
    if W == 8 {
        0x0101_0101_0101_0101
    } else {
        0x0001_0001_0001_0001
    }
}

/// Bit 0 of each 16-bit lane.
#[cfg(test)]
const LANE_ONES: u64 = lane_ones::<16>();

#[inline(always)]
fn lane_w<const W: u32>(x: &Lanes, i: usize) -> u32 {
    let per_word = (64 / W) as usize;
    ((x[i / per_word] >> (W as usize * (i % per_word))) & ((1 << W) - 1)) as u32
}

/// Lane `i` of 16-bit lanes.
#[cfg(test)]
fn lane(x: &Lanes, i: usize) -> u32 {
    lane_w::<16>(x, i)
}

/// The bits of `x` under `mask`, packed at the bottom (x86-64 BMI2 PEXT).
///
/// # Safety
/// The host must have BMI2.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn pext(x: u64, mask: u64) -> usize {
    // SAFETY: the caller promises BMI2.
    unsafe { std::arch::x86_64::_pext_u64(x, mask) as usize }
}

/// Elsewhere there is no BMI2 build, so this is never reached.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
unsafe fn pext(x: u64, mask: u64) -> usize {
    let (mut out, mut bit, mut m) = (0, 0, mask);
    while m != 0 {
        out |= (((x >> m.trailing_zeros()) & 1) as usize) << bit;
        bit += 1;
        m &= m - 1;
    }
    out
}

/// A tagged-table entry packed in one word: the tag in bits 0..16, the 3-bit counter
/// (-4..=3, taken when >= 0) plus 4 in bits 16..19, the useful bit in bit 19.
type Entry = u32;
const CTR_SHIFT: u32 = 16;
const USEFUL: Entry = 1 << 19;
/// Counter 0 (weakly taken), tag 0, not useful.
const ENTRY_EMPTY: Entry = 4 << CTR_SHIFT;

#[inline]
fn entry_ctr(e: Entry) -> u32 {
    (e >> CTR_SHIFT) & 7
}

/// Calls `$body` with the const `$t` equal to `$n` (0..=8 tagged tables). Exported so the
/// decoder can dispatch once per run of slots and inline the specialized predictor.
#[macro_export]
macro_rules! dispatch_tables {
    ($n:expr, $t:ident => $body:expr) => {
        match $n {
            0 => { const $t: usize = 0; $body }
            1 => { const $t: usize = 1; $body }
            2 => { const $t: usize = 2; $body }
            3 => { const $t: usize = 3; $body }
            4 => { const $t: usize = 4; $body }
            5 => { const $t: usize = 5; $body }
            6 => { const $t: usize = 6; $body }
            7 => { const $t: usize = 7; $body }
            // At most 8 (`PftParams::hlen` has 8 entries).
            _ => { const $t: usize = 8; $body }
        }
    };
}

/// What a branch address contributes to the lookups: the same at every execution, so a
/// decoder can keep it with the branch (see [`DirectionPredictor::key`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BranchKey {
    /// `(h ^ h >> s_i) mod 2^e` in lane i.
    index: Lanes,
    /// `h mod 2^w` in every lane.
    tag: u64,
    /// Index of the base table.
    base: u32,
}

/// What one prediction looked at, kept for the update ([`DirectionPredictor::lookup_n`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Lookup {
    /// The providing table, or the number of tables (the base table provided).
    provider: usize,
    pred: bool,
    alt: bool,
    base_index: usize,
    index: Lanes,
    tag: Lanes,
}

/// TAGE-like direction predictor: a bimodal base table and up to 8 tagged tables indexed
/// with geometric global-history lengths.
#[derive(Clone, Debug)]
pub struct DirectionPredictor {
    base: Vec<u8>,
    /// The tagged tables one after the other, `2^stride_bits` entries apart (the first
    /// `tsize` of each in use).
    entries: Vec<Entry>,
    /// 8 with 8-bit lanes, so that an index lane (a byte) addresses its table without a
    /// mask; else the index bits (tables back to back).
    stride_bits: u32,
    tables: usize,
    tsize: usize,
    /// History lengths; 0 past the tables in use.
    hlen: [u32; 8],
    index_bits: u32,
    /// Widths of the three folded registers: index bits, tag bits, tag bits - 1.
    fold_widths: [u32; 3],
    /// The top bit (`width - 1`) of every lane of each folded register: what a history
    /// shift rotates to bit 0.
    fold_tops: [u64; 3],
    /// Shift of the address in each table's index, `max(1, e - i)`, in its lane.
    index_shift: [u32; 8],
    tag_bits: u32,
    /// Global history of direction outcomes, newest in bit 0.
    history: u64,
    /// `fold(history, L_i, n)` in lane i for n = index bits, tag bits, tag bits - 1, kept up
    /// to date at each history shift as hardware does (circular folded registers); the
    /// values equal the definition in section 11.3, checked in debug builds.
    folds: [Lanes; 3],
    /// 8-bit lanes (else 16-bit).
    narrow: bool,
    /// For each set of tables whose window the oldest outcome leaves (bit i: table i), the
    /// bits it flips in the three folded registers: the leaving outcome lands at `L_i mod n`.
    exits: Vec<[Lanes; 3]>,
    /// `L_i - 1 - i`: the history shifted right by it has the outcome leaving table i's
    /// window at bit i (`L_i > i` as the lengths increase strictly).
    leaving_shift: [u32; 8],
    /// Bits `L_i - 1` of the history (the same outcomes, gathered by one PEXT).
    leaving_mask: u64,
    last: Lookup,
    /// Keys of recently predicted branches, direct-mapped by address (a key depends on the
    /// address and the sizes only, so an entry never goes stale; every entry starts as the
    /// key of address 2, which no branch has): `predict_update` computes a key once per
    /// branch address rather than at every execution.
    key_cache: Vec<(u32, BranchKey)>,
    /// The host has x86-64 BMI2: `predict_update` gathers the leaving outcomes with PEXT.
    bmi2: bool,
    /// The allocation register `R` (3 bits, 1 after reset): steps once per misprediction
    /// with two or more free tables and picks the first or the second (section 11.3).
    alloc_lfsr: u8,
    /// The ageing counter `A` (2 bits) and the sweep pointer: table and entry whose useful
    /// bit the next sweep step clears (section 11.3).
    age: u8,
    sweep_table: usize,
    sweep_entry: usize,
}

/// One history shift of the folded registers of width `n` in every lane: rotate left by one
/// within `n` bits (`top_bits`: bit `n - 1` of every lane), add the new outcome at bit 0
/// (`new`: bit 0 of the lanes, or 0), and flip the bits of the outcomes that just left the
/// windows (`exit`).
#[inline(always)]
fn shift_folds(f: u64, top_bits: u64, n: u32, new: u64, exit: u64) -> u64 {
    let top = f & top_bits;
    (((f ^ top) << 1) | (top >> (n - 1))) ^ new ^ exit
}

impl DirectionPredictor {
    pub fn new(p: &PftParams) -> Self {
        let hlen: Vec<u32> = p.history_lengths().to_vec();
        let tables = hlen.len();
        let e = p.tsize.trailing_zeros();
        let widths = [e, p.tag, p.tag - 1];
        let narrow = e <= 8 && p.tag <= 8;
        let (lane_bits, per_word) = if narrow { (8, 8) } else { (16, 4) };
        let exits = (0..1usize << tables)
            .map(|set| {
                let mut x = [[0; 2]; 3];
                for (i, &l) in hlen.iter().enumerate() {
                    if set & (1 << i) != 0 {
                        for (k, &n) in widths.iter().enumerate() {
                            x[k][i / per_word] |= 1u64 << (lane_bits * (i % per_word) as u32 + l % n);
                        }
                    }
                }
                x
            })
            .collect();
        let mut d = DirectionPredictor {
            base: vec![2; p.bim as usize],
            entries: vec![ENTRY_EMPTY; tables << if narrow { 8 } else { e }],
            stride_bits: if narrow { 8 } else { e },
            tables,
            tsize: p.tsize as usize,
            hlen: std::array::from_fn(|i| hlen.get(i).copied().unwrap_or(0)),
            index_bits: e,
            fold_widths: widths,
            fold_tops: widths.map(|n| if narrow { lane_ones::<8>() } else { lane_ones::<16>() } << (n - 1)),
            index_shift: std::array::from_fn(|i| index_shift(e, i)),
            tag_bits: p.tag,
            history: 0,
            folds: [[0; 2]; 3],
            narrow,
            exits,
            // The lengths increase strictly (PftParams::validate), so L_i - 1 >= i.
            leaving_shift: std::array::from_fn(|i| hlen.get(i).map_or(0, |&l| (l - 1).saturating_sub(i as u32))),
            leaving_mask: hlen.iter().fold(0, |m, &l| m | 1 << (l - 1)),
            last: Lookup::default(),
            key_cache: Vec::new(),
            bmi2: host_has_bmi2(),
            alloc_lfsr: ALLOC_LFSR_RESET,
            age: 0,
            sweep_table: 0,
            sweep_entry: 0,
        };
        let unused = (KEY_CACHE_UNUSED, d.key(KEY_CACHE_UNUSED));
        d.key_cache = vec![unused; KEY_CACHE];
        d
    }

    pub fn reset(&mut self) {
        self.base.fill(2);
        self.entries.fill(ENTRY_EMPTY);
        self.history = 0;
        self.folds = [[0; 2]; 3];
        self.alloc_lfsr = ALLOC_LFSR_RESET;
        self.age = 0;
        self.sweep_table = 0;
        self.sweep_entry = 0;
    }

    /// Number of tagged tables.
    #[inline]
    pub fn tables(&self) -> usize {
        self.tables
    }

    /// Number of coding contexts: base weak/strong, then for each of `min(T, 3)` groups of
    /// neighbouring tables four strengths times agreement with the alternate (11.3).
    pub fn contexts(tables: usize) -> usize {
        2 + 8 * Self::groups(tables)
    }

    /// Provider groups: `min(T, 3)`.
    #[inline]
    pub fn groups(tables: usize) -> usize {
        tables.min(3)
    }

    /// Context of provider table `p` of `tables` with strength `s`, agreeing with the
    /// alternate or not (11.3): `2 + 8g + 2s + a`.
    #[inline]
    pub fn tagged_context(p: usize, tables: usize, strength: usize, agree: bool) -> usize {
        let g = p * Self::groups(tables) / tables;
        2 + 8 * g + 2 * strength + agree as usize
    }

    /// Predict the branch at `iw_addr`: (taken?, coding context).
    ///
    /// The provider is the matching table with the longest history, the alternate
    /// prediction the next matching one's (or the base table's). All tables are looked up
    /// without branches; the update needs the indices and tags above the provider.
    #[inline]
    pub fn predict(&mut self, iw_addr: u32) -> (bool, usize) {
        dispatch_tables!(self.tables, T => self.predict_n::<T>(iw_addr))
    }

    /// [`Self::predict`] of the branch at `iw_addr`, then [`Self::update`] with `taken`, in
    /// one step (the encoder knows the outcome when it asks): one dispatch on the tables,
    /// and the lookup stays in registers for the update.
    #[inline]
    pub fn predict_update(&mut self, iw_addr: u32, taken: bool) -> (bool, usize) {
        dispatch_tables!(self.tables, T => if self.narrow {
            self.predict_update_tw::<T, 8>(iw_addr, taken)
        } else {
            self.predict_update_tw::<T, 16>(iw_addr, taken)
        })
    }

    #[inline(always)]
    fn predict_update_tw<const T: usize, const W: u32>(&mut self, iw_addr: u32, taken: bool) -> (bool, usize) {
        let slot = (iw_addr as usize >> 1) & (KEY_CACHE - 1);
        let key = match self.key_cache[slot] {
            (a, key) if a == iw_addr => key,
            _ => {
                let key = self.key_tw::<T, W>(iw_addr);
                self.key_cache[slot] = (iw_addr, key);
                key
            }
        };
        // SAFETY: T is the number of tables (dispatched on it), W the lane width (from
        // `narrow`), and the key is this predictor's.
        let (pred, ctx, lookup) = unsafe { self.lookup_tw::<T, W>(&key) };
        // SAFETY: as above; PEXT only when the host has BMI2.
        unsafe {
            if self.bmi2 {
                self.update_tw::<T, W, true>(&lookup, taken)
            } else {
                self.update_tw::<T, W, false>(&lookup, taken)
            }
        }
        self.last = lookup;
        (pred, ctx)
    }

    /// The tagged table that provided the last prediction (None: the base table).
    #[inline]
    pub fn provider(&self) -> Option<usize> {
        (self.last.provider < self.tables).then_some(self.last.provider)
    }

    /// Update with the outcome of the branch last predicted.
    #[inline]
    pub fn update(&mut self, taken: bool) {
        dispatch_tables!(self.tables, T => self.update_n::<T>(taken))
    }

    /// What the branch at `iw_addr` contributes to every lookup.
    #[inline]
    pub fn key(&self, iw_addr: u32) -> BranchKey {
        dispatch_tables!(self.tables, T => if self.narrow {
            self.key_tw::<T, 8>(iw_addr)
        } else {
            self.key_tw::<T, 16>(iw_addr)
        })
    }

    /// [`Self::key`] with `T` tagged tables and `W`-bit lanes (`W` must be
    /// [`Self::lane_bits`]): the loop over the tables unrolls.
    #[inline(always)]
    fn key_tw<const T: usize, const W: u32>(&self, iw_addr: u32) -> BranchKey {
        debug_assert!(T == self.tables && W == self.lane_bits());
        let h = hashed_pc(iw_addr);
        let per_word = (64 / W) as usize;
        let mask = (1u32 << self.index_bits) - 1;
        let mut index = [0u64; 2];
        for i in 0..T {
            index[i / per_word] |= (((h ^ (h >> self.index_shift[i])) & mask) as u64) << (W as usize * (i % per_word));
        }
        BranchKey { index, tag: (h & ((1 << self.tag_bits) - 1)) as u64 * lane_ones::<W>(), base: h & (self.base.len() as u32 - 1) }
    }

    /// `predict` with `T` tagged tables (the loops over tables unroll, lane positions are
    /// constants); `T` must equal [`Self::tables`].
    #[inline(always)]
    pub fn predict_n<const T: usize>(&mut self, iw_addr: u32) -> (bool, usize) {
        let key = if self.narrow { self.key_tw::<T, 8>(iw_addr) } else { self.key_tw::<T, 16>(iw_addr) };
        let (pred, ctx, lookup) = self.lookup_n::<T>(&key);
        self.last = lookup;
        (pred, ctx)
    }

    /// The prediction for the branch of `key` (from [`Self::key`] of this predictor) with
    /// `T` tagged tables: (taken?, coding context, what the update needs).
    ///
    /// The provider is the matching table with the longest history, the alternate
    /// prediction the next matching one's (or the base table's). All tables are looked up
    /// without branches.
    #[inline(always)]
    pub fn lookup_n<const T: usize>(&self, key: &BranchKey) -> (bool, usize, Lookup) {
        // The unchecked reads of `lookup_tw` rely on them.
        assert!(T == self.tables && (key.base as usize) < self.base.len());
        // SAFETY: T == self.tables (just checked), W from `narrow`.
        unsafe {
            if self.narrow {
                self.lookup_tw::<T, 8>(key)
            } else {
                self.lookup_tw::<T, 16>(key)
            }
        }
    }

    /// Lane width of this predictor's folded registers, indices and tags: 8 or 16 (the
    /// `W` of [`Self::lookup_tw`] and [`Self::update_tw`]).
    #[inline]
    pub fn lane_bits(&self) -> u32 {
        if self.narrow {
            8
        } else {
            16
        }
    }

    /// `lookup_n` with `T` tagged tables and `W`-bit lanes fixed by the caller, which
    /// checks them once for a run of lookups (the decoder's slot loop) instead of at every
    /// branch.
    ///
    /// # Safety
    /// `T == self.tables()`, `W == self.lane_bits()`, and `key` comes from [`Self::key`] of
    /// this predictor or one of the same size, or is the default key (the table reads are
    /// unchecked).
    #[inline(always)]
    pub unsafe fn lookup_tw<const T: usize, const W: u32>(&self, key: &BranchKey) -> (bool, usize, Lookup) {
        debug_assert!(T == self.tables && W == self.lane_bits() && (key.base as usize) < self.base.len());
        let words = T.div_ceil((64 / W) as usize);
        let e = self.index_bits;
        let w = self.tag_bits;
        let base_index = key.base as usize;
        // SAFETY: `key.base` is masked below the base table's size by `key` (0 in the default
        // key), as the caller promises.
        let b = unsafe { *self.base.get_unchecked(base_index) };
        let base_pred = b >= 2;
        // Strong (0 or 3): context 1; weak (1 or 2): 0. Bits 0 and 1 equal exactly when strong.
        let base_ctx = ((b ^ (b >> 1) ^ 1) & 1) as usize;
        debug_assert_eq!(base_ctx, if b == 1 || b == 2 { 0 } else { 1 });
        // Index (h ^ h >> s_i ^ fold_e) and tag (h ^ fold_w ^ fold_{w-1} << 1) of every
        // table: the folded registers are below 2^e and 2^w (2^(w-1)), so no lane spills.
        let [fe, fw, fw1] = &self.folds;
        let mut index = [0; 2];
        let mut tag = [0; 2];
        for k in 0..words {
            index[k] = key.index[k] ^ fe[k];
            tag[k] = key.tag ^ fw[k] ^ (fw1[k] << 1);
        }
        // Table i matched: bit i of `hits`, or with 8-bit lanes bit 7 of byte i (the tags
        // read are compared in lanes too).
        let mut hits = 0u64;
        let mut read_tags = 0u64;
        let mut ctrs = 0u32;
        for i in 0..T {
            debug_assert_eq!(
                [lane_w::<W>(fe, i), lane_w::<W>(fw, i), lane_w::<W>(fw1, i)],
                [fold(self.history, self.hlen[i], e), fold(self.history, self.hlen[i], w), fold(self.history, self.hlen[i], w - 1)]
            );
            // SAFETY: i < T == self.tables (asserted above); see `entry_at`.
            let entry = unsafe { *self.entries.get_unchecked(self.entry_at::<W>(i, lane_w::<W>(&index, i))) };
            if W == 8 {
                // Tags of at most 8 bits: the entry's tag field is its low byte.
                read_tags |= ((entry & 0xFF) as u64) << (8 * i);
            } else {
                hits |= ((entry & 0xFFFF == lane_w::<W>(&tag, i)) as u64) << i;
            }
            ctrs |= entry_ctr(entry) << (4 * i);
        }
        // Bit position of table i's hit, and the shift from a position back to the table.
        let (spread, back) = if W == 8 { (8, 3) } else { (1, 0) };
        if W == 8 && T > 0 {
            // Bit 7 of each byte that is zero in `x` (exact: no borrow between bytes).
            let x = read_tags ^ tag[0];
            let low7 = 0x7F7F_7F7F_7F7F_7F7Fu64;
            let used = u64::MAX >> (64 - 8 * T);
            hits = !(((x & low7).wrapping_add(low7)) | x | low7) & used;
        }
        let (provider, pred, alt, ctx) = if hits == 0 {
            (T, base_pred, base_pred, base_ctx)
        } else {
            let p = (63 - hits.leading_zeros()) >> back;
            let c = (ctrs >> (4 * p)) & 7;
            // Counter c - 4 >= 0 has strength c - 4; below 0, -1 - (c - 4) = 3 - c.
            let strength = if c >= 4 { c - 4 } else { 3 - c };
            let below = hits & !(u64::MAX << (spread * p));
            let alt = if below == 0 { base_pred } else { (ctrs >> (4 * ((63 - below.leading_zeros()) >> back))) & 4 != 0 };
            let pred = c >= 4;
            (p as usize, pred, alt, Self::tagged_context(p as usize, T, strength as usize, alt == pred))
        };
        (pred, ctx, Lookup { provider, pred, alt, base_index, index, tag })
    }

    /// Where table `i`'s entry for index lane value `lane` lies: in bounds for every
    /// `i < self.tables` (with 8-bit lanes the lane is below 256, the stride; else it is
    /// masked below tsize, the stride).
    #[inline(always)]
    fn entry_at<const W: u32>(&self, i: usize, lane: u32) -> usize {
        Self::entry_at_of::<W>(self.stride_bits, self.tsize, i, lane)
    }

    #[inline(always)]
    fn entry_at_of<const W: u32>(stride_bits: u32, tsize: usize, i: usize, lane: u32) -> usize {
        if W == 8 {
            (i << 8) | lane as usize
        } else {
            (i << stride_bits) | (lane as usize & (tsize - 1))
        }
    }

    /// `update` with `T` tagged tables; `T` must equal [`Self::tables`].
    #[inline(always)]
    pub fn update_n<const T: usize>(&mut self, taken: bool) {
        let lookup = self.last;
        self.update_with_n::<T>(&lookup, taken);
    }

    /// Update with the outcome of the branch `lookup` (from [`Self::lookup_n`], the last
    /// lookup) predicted, with `T` tagged tables.
    #[inline(always)]
    pub fn update_with_n<const T: usize>(&mut self, l: &Lookup, taken: bool) {
        assert!(T == self.tables);
        // SAFETY: T == self.tables (just checked), W from `narrow`, no PEXT.
        unsafe {
            if self.narrow {
                self.update_tw::<T, 8, false>(l, taken)
            } else {
                self.update_tw::<T, 16, false>(l, taken)
            }
        }
    }

    /// `update_with_n` with `T` tagged tables and `W`-bit lanes fixed by the caller (see
    /// [`Self::lookup_tw`]); `PEXT`: gather the leaving outcomes with BMI2's PEXT.
    ///
    /// # Safety
    /// `T == self.tables()`, `W == self.lane_bits()`, and on x86-64 with `PEXT` the host
    /// has BMI2.
    #[inline(always)]
    pub unsafe fn update_tw<const T: usize, const W: u32, const PEXT: bool>(&mut self, l: &Lookup, taken: bool) {
        debug_assert!(T == self.tables && W == self.lane_bits());
        let p = l.provider;
        if p < T {
            // SAFETY: p < T == self.tables, see `entry_at`.
            let at = self.entry_at::<W>(p, lane_w::<W>(&l.index, p));
            // SAFETY: as above.
            let e = unsafe { self.entries.get_unchecked_mut(at) };
            let c = entry_ctr(*e);
            let c = if taken { (c + 1).min(7) } else { c.saturating_sub(1) };
            let mut useful = *e & USEFUL;
            if l.pred != l.alt {
                useful = if l.pred == taken { USEFUL } else { 0 };
            }
            *e = (*e & 0xFFFF) | (c << CTR_SHIFT) | useful;
        } else {
            let c = &mut self.base[l.base_index];
            *c = if taken { (*c + 1).min(3) } else { c.saturating_sub(1) };
        }
        if l.pred != taken {
            // The fields by value, not the lookup by reference: a reference would make the
            // caller keep the whole lookup in memory at every branch for this rare call.
            self.allocate::<T, W>(l.index, l.tag, l.provider, taken);
        }
        self.shift_history_w::<T, W, PEXT>(taken);
    }

    /// A call's bit (trace-format.md 11.3, *Calls*): the history shifts as after an
    /// outcome, and no table changes.
    #[inline]
    pub fn push_history(&mut self, bit: bool) {
        dispatch_tables!(self.tables, T => if self.narrow {
            self.shift_history_w::<T, 8, false>(bit)
        } else {
            self.shift_history_w::<T, 16, false>(bit)
        })
    }

    /// `push_history` with `T`, `W` and `PEXT` fixed by the caller (see [`Self::update_tw`]).
    ///
    /// # Safety
    /// As for [`Self::update_tw`].
    #[inline(always)]
    pub unsafe fn push_history_tw<const T: usize, const W: u32, const PEXT: bool>(&mut self, bit: bool) {
        debug_assert!(T == self.tables && W == self.lane_bits());
        self.shift_history_w::<T, W, PEXT>(bit)
    }

    /// `G := G << 1 | bit`, and the folded registers with it.
    #[inline(always)]
    fn shift_history_w<const T: usize, const W: u32, const PEXT: bool>(&mut self, taken: bool) {
        // The outcome at position L_i - 1 leaves the window of table i.
        let leaving = if PEXT {
            // SAFETY: PEXT is set only through `update_tw` or `push_history_tw`, whose caller
            // promises BMI2.
            unsafe { pext(self.history, self.leaving_mask) }
        } else {
            let mut leaving = 0;
            for i in 0..T {
                leaving |= (self.history >> self.leaving_shift[i]) as usize & (1 << i);
            }
            leaving
        };
        debug_assert_eq!(leaving, (0..T).fold(0, |m, i| m | (((self.history >> (self.hlen[i] - 1)) & 1) as usize) << i));
        debug_assert!(T == self.tables && leaving < self.exits.len());
        // SAFETY: `exits` has an entry for each of the 2^tables sets, and `leaving` is below
        // 2^T: every caller has T == self.tables (`lookup_n` and `update_with_n` check it,
        // `push_history` dispatches on it, the `_tw` functions require it).
        let x = unsafe { self.exits.get_unchecked(leaving) };
        // All ones when taken: the new outcome enters bit 0 of every lane in use.
        let new = (taken as u64).wrapping_neg();
        let per_word = (64 / W) as usize;
        let shapes = self.fold_tops.iter().zip(&self.fold_widths);
        for ((folds, exits), (&top_bits, &n)) in self.folds.iter_mut().zip(x).zip(shapes) {
            for (word, (f, &exit)) in folds.iter_mut().zip(exits).enumerate().take(T.div_ceil(per_word)) {
                // Bit 0 of the lanes in use in this word.
                let ones = lane_ones::<W>() >> (W as usize * (per_word - (T - per_word * word).min(per_word)));
                *f = shift_folds(*f, top_bits, n, ones & new, exit);
            }
        }
        self.history = (self.history << 1) | taken as u64;
    }

    /// A misprediction: allocate in one of the tables above the provider whose entry is not
    /// useful (the candidates): the only one, or with two or more the first or the second
    /// as the allocation register says; if there is none, the ageing counter steps and
    /// every fourth time the sweep clears one useful bit.
    #[inline(never)]
    fn allocate<const T: usize, const W: u32>(&mut self, index: Lanes, tag: Lanes, provider: usize, taken: bool) {
        let at = |j: usize| Self::entry_at_of::<W>(self.stride_bits, self.tsize, j, lane_w::<W>(&index, j));
        let start = if provider < T { provider + 1 } else { 0 };
        let Some(first) = (start..T).find(|&j| self.entries[at(j)] & USEFUL == 0) else {
            self.age_step::<T>(provider);
            return;
        };
        let mut j = first;
        if let Some(second) = (first + 1..T).find(|&j| self.entries[at(j)] & USEFUL == 0) {
            let (r, pick_second) = alloc_lfsr_step(self.alloc_lfsr);
            self.alloc_lfsr = r;
            if pick_second {
                j = second;
            }
        }
        let ctr = if taken { 4 } else { 3 };
        self.entries[at(j)] = lane_w::<W>(&tag, j) | (ctr << CTR_SHIFT);
    }

    /// A failed allocation (no free table above the provider): step the ageing counter; when
    /// it wraps, clear the useful bit under the sweep pointer unless that table is the
    /// provider's (its RAM is written by the provider update in the same cycle), then move
    /// the pointer to the next entry, table after table.
    fn age_step<const T: usize>(&mut self, provider: usize) {
        if T == 0 {
            return;
        }
        self.age = (self.age + 1) & ((1 << AGE_BITS) - 1);
        if self.age != 0 {
            return;
        }
        if self.sweep_table != provider {
            self.entries[(self.sweep_table << self.stride_bits) | self.sweep_entry] &= !USEFUL;
        }
        self.sweep_entry += 1;
        if self.sweep_entry == self.tsize {
            self.sweep_entry = 0;
            self.sweep_table = (self.sweep_table + 1) % T;
        }
    }
}

/// Entries of the direction predictor's key cache (a power of two).
const KEY_CACHE: usize = 256;
/// The address of an unused key-cache entry: 2, a misaligned ARM address, no branch's.
const KEY_CACHE_UNUSED: u32 = 2;

/// Whether the host has x86-64 BMI2 (false elsewhere).
fn host_has_bmi2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("bmi2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The allocation register's value after reset.
pub const ALLOC_LFSR_RESET: u8 = 1;

/// Bits of the ageing counter: the sweep clears a useful bit at every `2^AGE_BITS`-th
/// failed allocation (section 11.3).
pub const AGE_BITS: u32 = 2;

/// Bits of the allocation register.
pub const ALLOC_LFSR_BITS: u32 = 3;

/// One step of the allocation register (a 3-bit Fibonacci LFSR, period 7): the new bit
/// `R[2] XOR R[1]` enters at bit 0; returns the new register and the bit (1: allocate in
/// the second candidate).
#[inline]
pub fn alloc_lfsr_step(r: u8) -> (u8, bool) {
    let b = ((r >> 2) ^ (r >> 1)) & 1;
    (((r << 1) | b) & 7, b != 0)
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
        // (top + 1) mod n without a division.
        self.top = if self.top + 1 == n { 0 } else { self.top + 1 };
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
        // (top - 1) mod n without a division.
        self.top = if self.top == 0 { n - 1 } else { self.top - 1 };
        self.count -= 1;
        a
    }
}

/// Indirect target predictor (section 11.4): a base table of last targets indexed by the
/// branch address, and a tagged table indexed by the address and an 8-bit path history of
/// earlier indirect targets, which provides when its tag matches. Each base entry has a
/// confidence bit and each tagged entry a useful bit: an entry whose bit is set survives
/// one wrong target (the bit is cleared instead).
#[derive(Clone, Debug)]
pub struct IndirectTargetPredictor {
    /// (target, confidence) pairs.
    base: Vec<(u32, bool)>,
    /// (tag, target, useful) triples.
    tagged: Vec<(u16, u32, bool)>,
    tag_bits: u32,
    /// The target bits an entry holds (`tw` low bits); the rest come from the branch, or
    /// are all ones when the entry's top-region flag (bit 31) is set.
    target_mask: u32,
    path: u32,
    /// Indices and tag of the last lookup and the branch's upper address bits, for the
    /// update.
    last: (usize, usize, u16, bool, u32),
}

/// The top-region flag of an ITP entry with `tw < 32` (bit 31: above any `tw` bits).
const TOP_REGION: u32 = 1 << 31;

/// The mask of the `tw` low target bits an entry holds.
#[inline]
pub fn target_mask(target_bits: u32) -> u32 {
    if target_bits >= 32 {
        u32::MAX
    } else {
        (1 << target_bits) - 1
    }
}

/// The target an ITP or RTC entry names for a branch whose upper bits are `upper`
/// (`branch & !m`).
#[inline]
pub fn expand_target(m: u32, upper: u32, entry: u32) -> u32 {
    if m == u32::MAX {
        entry
    } else if entry & TOP_REGION != 0 {
        !m | (entry & m)
    } else {
        upper | (entry & m)
    }
}

/// The entry for `target`: its low bits, and the top-region flag when it lies in the
/// top region (a target in neither that region nor the branch's is stored by its low
/// bits and predicted wrong).
#[inline]
pub fn compress_target(m: u32, target: u32) -> u32 {
    if m == u32::MAX {
        target
    } else if target & !m == !m {
        TOP_REGION | (target & m)
    } else {
        target & m
    }
}

/// An indirect target prediction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TargetPrediction {
    pub target: u32,
    /// The tagged table provided; `alt` is then the base table's target.
    pub tagged: bool,
    pub alt: u32,
}

impl IndirectTargetPredictor {
    /// `target_bits` (`tw`, 2..=32): the low target bits an entry holds.
    pub fn new(base: u32, tagged: u32, tag_bits: u32, target_bits: u32) -> Self {
        IndirectTargetPredictor {
            base: vec![(0, false); base as usize],
            tagged: vec![(0, 0, false); tagged as usize],
            tag_bits,
            target_mask: target_mask(target_bits),
            path: 0,
            last: (0, 0, 0, false, 0),
        }
    }

    pub fn reset(&mut self) {
        self.base.fill((0, false));
        self.tagged.fill((0, 0, false));
        self.path = 0;
    }

    /// Predict the target of the indirect branch at `iw_addr`.
    #[inline]
    pub fn predict(&mut self, iw_addr: u32) -> TargetPrediction {
        let h = hashed_pc(iw_addr);
        let upper = iw_addr & !self.target_mask;
        let bi = (h as usize) & self.base.len().wrapping_sub(1);
        let alt = self.expand(upper, self.base.get(bi).map_or(0, |e| e.0));
        let n = self.tagged.len();
        let (ti, tag, hit) = if n == 0 {
            (0, 0, false)
        } else {
            let e = n.trailing_zeros();
            let p = self.path;
            let ti = ((h ^ (h >> e) ^ p ^ (p >> e)) as usize) & (n - 1);
            let w = self.tag_bits;
            let tag = ((h ^ (h >> w) ^ (p << 3) ^ (p >> 5)) & ((1 << w) - 1)) as u16;
            (ti, tag, self.tagged[ti].0 == tag)
        };
        self.last = (bi, ti, tag, hit, upper);
        if hit {
            TargetPrediction { target: self.expand(upper, self.tagged[ti].1), tagged: true, alt }
        } else {
            TargetPrediction { target: alt, tagged: false, alt }
        }
    }

    #[inline]
    fn expand(&self, upper: u32, entry: u32) -> u32 {
        expand_target(self.target_mask, upper, entry)
    }

    #[inline]
    fn compress(&self, target: u32) -> u32 {
        compress_target(self.target_mask, target)
    }

    /// The providing entry's bit in the last prediction: the tagged entry's useful bit when
    /// it provided, else the base entry's confidence bit (false without a base table).
    #[inline]
    pub fn confident(&self) -> bool {
        let (bi, ti, _, hit, _) = self.last;
        if hit {
            self.tagged[ti].2
        } else {
            self.base.get(bi).is_some_and(|e| e.1)
        }
    }

    /// Record the actual target of the branch last predicted (section 11.4, *update*). A
    /// tagged entry that matched: right, it becomes useful; wrong, a useful entry loses its
    /// bit, else it takes the target. No match and the base entry wrong: the entry at the
    /// index is allocated (tag, target, not useful) unless it is useful, which loses its bit.
    /// The base entry is left alone when the tagged entry provided the right target; else
    /// right, it becomes confident; wrong, a confident entry loses its bit, else it takes the
    /// target.
    #[inline]
    pub fn update(&mut self, target: u32) {
        let (bi, ti, tag, hit, upper) = self.last;
        let base_wrong = self.expand(upper, self.base.get(bi).map_or(0, |e| e.0)) != target;
        let stored = self.compress(target);
        let mut tagged_right = false;
        if let Some(e) = self.tagged.get_mut(ti) {
            if hit && expand_target(self.target_mask, upper, e.1) == target {
                tagged_right = true;
                e.2 = true;
            } else if hit || base_wrong {
                if e.2 {
                    e.2 = false;
                } else {
                    *e = (tag, stored, false);
                }
            }
        }
        if !tagged_right {
            if let Some(b) = self.base.get_mut(bi) {
                if !base_wrong {
                    b.1 = true;
                } else if b.1 {
                    b.1 = false;
                } else {
                    b.0 = stored;
                }
            }
        }
        self.path = ((self.path << 2) ^ (target >> 2)) & 0xFF;
    }
}

/// Recent-target cache: the last `n` distinct mispredicted targets, most recent first. An
/// entry holds a target as an ITP entry does (`tw` low bits and the top-region flag) and
/// names it for the branch being coded.
#[derive(Clone, Debug)]
pub struct RecentTargets {
    entries: Vec<u32>,
    len: usize,
    target_mask: u32,
}

impl RecentTargets {
    /// `target_bits`: the low target bits an entry holds (`tw`).
    pub fn new(n: u32, target_bits: u32) -> Self {
        RecentTargets { entries: vec![0; n as usize], len: 0, target_mask: target_mask(target_bits) }
    }

    pub fn reset(&mut self) {
        self.entries.fill(0);
        self.len = 0;
    }

    pub fn capacity(&self) -> usize {
        self.entries.len()
    }

    /// The first entry that names `a` for the branch at `branch`.
    pub fn find(&self, branch: u32, a: u32) -> Option<usize> {
        let m = self.target_mask;
        if m != u32::MAX && a & !m != branch & !m && a & !m != !m {
            return None;
        }
        let e = compress_target(m, a);
        self.entries[..self.len].iter().position(|&x| x == e)
    }

    /// The target entry `i` names for the branch at `branch`.
    pub fn get(&self, i: usize, branch: u32) -> Option<u32> {
        let m = self.target_mask;
        (i < self.len).then(|| expand_target(m, branch & !m, self.entries[i]))
    }

    /// Move entry `i` (or, with `None`, a new entry) to the front, holding `a`.
    pub fn touch(&mut self, i: Option<usize>, a: u32) {
        let a = compress_target(self.target_mask, a);
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
        // Entries 0..from move down by one and `a` takes the front (a carry through at most
        // 16 entries; `copy_within` calls memmove, slower for a handful of words).
        let mut carry = a;
        for e in &mut self.entries[..=from] {
            std::mem::swap(e, &mut carry);
        }
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
        // Four lanes of one word, each its own window length, all of width n.
        let mut s = 0x1234_5678u64;
        for (lens, n) in [([1, 2, 3, 4], 1), ([3, 8, 20, 50], 7), ([8, 20, 50, 64], 6), ([7, 14, 15, 64], 15), ([1, 5, 63, 64], 4)] {
            let (mut f, mut g) = (0u64, 0u64);
            for _ in 0..500 {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1);
                let bit = (s >> 40) & 1 != 0;
                let mut exit = 0;
                for (i, &len) in lens.iter().enumerate() {
                    exit |= ((g >> (len - 1)) & 1) << (16 * i as u32 + len % n);
                }
                f = shift_folds(f, LANE_ONES << (n - 1), n, if bit { LANE_ONES } else { 0 }, exit);
                g = (g << 1) | bit as u64;
                for (i, &len) in lens.iter().enumerate() {
                    assert_eq!(lane(&[f, 0], i), fold(g, len, n), "len {len} n {n}");
                }
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
        let mut t = RecentTargets::new(3, 32);
        for a in [10, 20, 30, 40] {
            assert_eq!(t.find(0, a), None);
            t.touch(None, a);
        }
        assert_eq!((t.get(0, 0), t.get(1, 0), t.get(2, 0), t.get(3, 0)), (Some(40), Some(30), Some(20), None));
        let i = t.find(0, 20);
        assert_eq!(i, Some(2));
        t.touch(i, 20);
        assert_eq!((t.get(0, 0), t.get(1, 0), t.get(2, 0)), (Some(20), Some(40), Some(30)));
    }

    #[test]
    fn recent_targets_hold_tw_bits() {
        let mut t = RecentTargets::new(4, 21);
        t.touch(None, 0x0012_3450);
        t.touch(None, 0xFFFF_0FE0);
        // Named for a branch in the same 2 MiB region, or in the top region.
        assert_eq!(t.find(0x0010_0000, 0x0012_3450), Some(1));
        assert_eq!(t.find(0x0000_8000, 0xFFFF_0FE0), Some(0));
        assert_eq!(t.get(0, 0x0000_8000), Some(0xFFFF_0FE0));
        // From another region the entry names that region's address.
        assert_eq!(t.find(0x0020_0000, 0x0012_3450), None);
        assert_eq!(t.get(1, 0x0020_0000), Some(0x0032_3450));
    }

    #[test]
    fn itp_learns_single_and_alternating_targets() {
        let mut p = IndirectTargetPredictor::new(16, 16, 7, 32);
        assert_eq!(p.predict(0x100).target, 0);
        p.update(0x2000);
        // One target: predicted from its first repeat. (The first miss also wrote the tagged
        // entry, and 0x2000 leaves the path at 0, so that entry provides, agreeing.)
        assert_eq!(p.predict(0x100), TargetPrediction { target: 0x2000, tagged: true, alt: 0x2000 });
        p.update(0x2000);
        // Under another path the tagged entry does not match and the base table provides.
        p.predict(0x50);
        p.update(0x1234);
        p.predict(0x50);
        p.update(0x1234);
        assert_eq!(p.predict(0x100), TargetPrediction { target: 0x2000, tagged: false, alt: 0x2000 });
        p.update(0x2000);
        // Two targets in turn: the base table misses each time, the tagged table learns
        // which one follows which under the path. (With 16 tagged entries the two paths of
        // this one-branch pattern, 0x66 and 0x99, fold to the same index, P ^ P >> 4, and
        // take turns in it; 32 entries tell them apart.)
        let mut p = IndirectTargetPredictor::new(16, 32, 7, 32);
        p.predict(0x100);
        p.update(0x2000);
        let mut late_misses = 0;
        for i in 0..40 {
            let t = if i % 2 == 0 { 0x3004 } else { 0x4008 };
            let pr = p.predict(0x104);
            if i >= 8 && pr.target != t {
                late_misses += 1;
            }
            if i >= 8 {
                assert!(pr.tagged, "the tagged table provides once trained");
            }
            p.update(t);
        }
        assert_eq!(late_misses, 0);
        let mut none = IndirectTargetPredictor::new(0, 0, 7, 32);
        assert_eq!(none.predict(0x100).target, 0);
        none.update(0x100);
        assert_eq!(none.predict(0x100).target, 0);
    }

    #[test]
    fn itp_entries_hold_tw_low_bits_and_take_the_rest_from_the_branch() {
        // tw = 21: a target in the branch's aligned 2 MiB is predicted; the upper bits of a
        // target elsewhere are lost, so it is never predicted.
        let mut p = IndirectTargetPredictor::new(16, 16, 7, 21);
        assert_eq!(p.predict(0x0012_3450).target, 0x0000_0000, "an empty entry: the region's base");
        p.update(0x0019_8765);
        assert_eq!(p.predict(0x0012_3450).target, 0x0019_8765);
        p.update(0x0019_8765);
        // The same entry read for a branch in another region names the other region.
        assert_eq!(p.predict(0x00A2_3450).alt, 0x00B9_8765);
        p.update(0x00B9_8765);
        let mut q = IndirectTargetPredictor::new(16, 0, 7, 21);
        q.predict(0x0001_0100);
        q.update(0xFFFF_0FE0);
        let pr = q.predict(0x0001_0100);
        assert_eq!(pr.target, 0xFFFF_0FE0, "the kernel helper page: the top-region flag");
        assert!(!pr.tagged);
        q.update(0x0140_0000);
        assert_eq!(q.predict(0x0001_0100).target, 0x0000_0000, "another region is out of reach");
        // A branch in the top region and its target there.
        let mut t = IndirectTargetPredictor::new(16, 0, 7, 21);
        t.predict(0xFFFF_0FC0);
        t.update(0xFFFF_0FE0);
        assert_eq!(t.predict(0xFFFF_0FC0).target, 0xFFFF_0FE0);
        // A full-width entry keeps it.
        let mut f = IndirectTargetPredictor::new(16, 0, 7, 32);
        f.predict(0x0001_0100);
        f.update(0xFFFF_0FE0);
        assert_eq!(f.predict(0x0001_0100).target, 0xFFFF_0FE0);
    }

    #[test]
    fn failed_allocations_age_one_useful_bit_in_four_with_a_sweep() {
        // Two tagged tables of 2 entries, every useful bit set: each fourth failed
        // allocation clears the bit under the pointer (table 0 entry 0, 0/1, 1/0, 1/1, then
        // 0/0 again), except in the provider's table, and the pointer moves on regardless.
        let p = PftParams { tsize: 2, hlen: PftParams::parse_hlen("2-4").unwrap(), ..PftParams::default() };
        let mut d = DirectionPredictor::new(&p);
        let at = |d: &DirectionPredictor, t: usize, k: usize| d.entries[(t << d.stride_bits) | k] & USEFUL != 0;
        let set_all = |d: &mut DirectionPredictor| {
            for t in 0..2 {
                for k in 0..2 {
                    d.entries[(t << d.stride_bits) | k] |= USEFUL;
                }
            }
        };
        set_all(&mut d);
        let base = 2; // no tagged provider: the base table's number
        let cleared = |d: &DirectionPredictor| (0..2).flat_map(|t| (0..2).map(move |k| (t, k))).filter(|&(t, k)| !at(d, t, k)).collect::<Vec<_>>();
        for _ in 0..3 {
            d.age_step::<2>(base);
        }
        assert!(cleared(&d).is_empty(), "three failures clear nothing");
        d.age_step::<2>(base);
        assert_eq!(cleared(&d), [(0, 0)]);
        for _ in 0..4 {
            d.age_step::<2>(0); // table 0 provides: its entry 1 keeps its bit
        }
        assert_eq!(cleared(&d), [(0, 0)]);
        for _ in 0..8 {
            d.age_step::<2>(base);
        }
        assert_eq!(cleared(&d), [(0, 0), (1, 0), (1, 1)]);
        assert_eq!((d.sweep_table, d.sweep_entry), (0, 0), "the pointer wraps to table 0");
        set_all(&mut d);
        d.reset();
        assert_eq!((d.age, d.sweep_table, d.sweep_entry), (0, 0, 0));
    }

    #[test]
    fn the_allocation_register_picks_the_first_or_the_second_free_table() {
        // R from 1: the bits 0, 1, 1, 1, 0, 0, 1, then again (a 3-bit maximal LFSR).
        let mut r = ALLOC_LFSR_RESET;
        let mut bits = Vec::new();
        for _ in 0..14 {
            let (n, b) = alloc_lfsr_step(r);
            r = n;
            bits.push(b as u8);
        }
        assert_eq!(bits, [0, 1, 1, 1, 0, 0, 1, 0, 1, 1, 1, 0, 0, 1]);
        assert_eq!(r, ALLOC_LFSR_RESET);
        // Two tagged tables, G = 0 throughout (every outcome not taken). A's misprediction
        // finds both tables free: R's first bit, 0, takes table 0; B's, 1, table 1.
        let p = PftParams { hlen: PftParams::parse_hlen("2-4").unwrap(), ..PftParams::default() };
        let mut d = DirectionPredictor::new(&p);
        let (a, b) = (0x1004, 0x1008);
        assert_eq!(d.predict(a), (true, 0), "the base table's weak taken (context 0)");
        d.update(false);
        assert!(!d.predict(a).0);
        assert_eq!(d.provider(), Some(0));
        d.update(false);
        assert!(d.predict(b).0);
        d.update(false);
        assert!(!d.predict(b).0);
        assert_eq!(d.provider(), Some(1));
        // A reset restarts the register: B now lands in table 0.
        d.reset();
        d.predict(b);
        d.update(false);
        d.predict(b);
        assert_eq!(d.provider(), Some(0));
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

//! Per-run statistics of the trace module.

use serde::Serialize;

use crate::detector::StreamDescriptor;

/// Bits of each trace component (paper Table 4: mSDCt, hSDCt, hLSPt; plus escapes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ComponentBits {
    /// LSP-hit records or runs (hLSPt).
    pub lsp_hit: u64,
    /// SDC-hit, LSP-miss records (hSDCt).
    pub sdc_hit: u64,
    /// SDC-miss records, and every descriptor of the baselines (mSDCt).
    pub miss: u64,
    /// Escapes, sync markers and padding.
    pub escape: u64,
}

impl ComponentBits {
    pub fn total(&self) -> u64 {
        self.lsp_hit + self.sdc_hit + self.miss + self.escape
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Stats {
    pub config: String,
    pub instructions: u64,
    pub streams: u64,
    pub unique_streams: u64,
    pub max_sl: u32,
    pub avg_sl: f64,
    pub sdc_lookups: u64,
    pub sdc_hits: u64,
    pub lsp_hits: u64,
    /// rSDC: SDC hits turned into misses by the LVSA.
    pub forced_misses: u64,
    /// Miss records sent with an address field, and how many of those the LVSA predicted.
    pub address_records: u64,
    pub lvsa_hits: u64,
    pub inferred_records: u64,
    pub run_records: u64,
    pub aolc_resizes: u64,
    pub exceptions: u64,
    pub syncs: u64,
    pub bits: ComponentBits,
    pub total_bits: u64,
    pub bits_per_instruction: f64,
    pub hr_sdc: f64,
    pub hr_lsp: f64,
    /// pft only: points, predictor hit counts and information by component.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pft: Option<crate::pft::PftStats>,
}

impl Stats {
    pub(crate) fn finish(&mut self, sum_sl: u64) {
        self.total_bits = self.bits.total();
        let div = |a: f64, b: u64| if b == 0 { 0.0 } else { a / b as f64 };
        self.avg_sl = div(sum_sl as f64, self.streams);
        self.bits_per_instruction = div(self.total_bits as f64, self.instructions);
        self.hr_sdc = div(self.sdc_hits as f64, self.sdc_lookups);
        self.hr_lsp = div(self.lsp_hits as f64, self.sdc_lookups);
    }
}

/// The key of a descriptor in the unique-stream count: start address and length.
#[inline]
pub(crate) fn unique_key(d: &StreamDescriptor) -> u64 {
    ((d.sa as u64) << 16) | d.sl as u64
}

/// Distinct (start address, length) pairs among `descriptors`: the `unique_streams` an
/// encoder reports after encoding them. Every configuration of a sweep encodes the same
/// descriptors, so a sweep counts them once ([`crate::EncodedStreams::with_needed_sizes`]).
pub fn count_unique_streams<'a>(descriptors: impl IntoIterator<Item = &'a StreamDescriptor>) -> u64 {
    let mut set = DescriptorSet::new();
    for d in descriptors {
        set.insert(unique_key(d));
    }
    set.len() as u64
}

/// Allocation-light set of stream descriptors for the unique-stream count (keys from
/// [`unique_key`]): the table of [`KeyCounts`] without counts, which the encoder would
/// update for every stream and never read.
#[derive(Clone, Debug)]
pub(crate) struct DescriptorSet(KeyTable<()>);

impl DescriptorSet {
    pub fn new() -> Self {
        DescriptorSet(KeyTable::new())
    }

    /// Add `key`, which must not be 0 (the empty slot).
    #[inline]
    pub fn insert(&mut self, key: u64) {
        self.0.upsert(key, (), |_| ());
    }

    pub fn len(&self) -> usize {
        self.0.len
    }
}

/// How often each nonzero `u64` key occurred: open addressing with a multiplicative hash,
/// no allocation per key (the stream profiles count every executed stream; a `HashMap`
/// with the standard hasher cost about 370 host instructions per stream).
#[derive(Clone, Debug, Default)]
pub struct KeyCounts(KeyTable<u64>);

/// Where the probe for `key` starts in a table of `mask + 1` slots.
#[inline]
fn home_slot(key: u64, mask: usize) -> usize {
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize & mask
}

/// Open-addressing table of nonzero `u64` keys (0 marks an empty slot), each with a value
/// `V` (`()` for a set), at most half full.
#[derive(Clone, Debug)]
struct KeyTable<V> {
    keys: Vec<u64>,
    values: Vec<V>,
    len: usize,
}

impl<V: Copy + Default> Default for KeyTable<V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<V: Copy + Default> KeyTable<V> {
    fn new() -> Self {
        KeyTable { keys: vec![0; 1024], values: vec![V::default(); 1024], len: 0 }
    }

    /// `hit` on the value of `key` if it is in the table, else add it with value `new`.
    #[inline]
    fn upsert(&mut self, key: u64, new: V, hit: impl FnOnce(&mut V)) {
        assert!(key != 0, "key 0 marks an empty slot");
        let mask = self.keys.len() - 1;
        let mut i = home_slot(key, mask);
        loop {
            let k = self.keys[i];
            if k == key {
                hit(&mut self.values[i]);
                return;
            }
            if k == 0 {
                self.keys[i] = key;
                self.values[i] = new;
                self.len += 1;
                if self.len * 2 > self.keys.len() {
                    self.grow();
                }
                return;
            }
            i = (i + 1) & mask;
        }
    }

    fn grow(&mut self) {
        let n = self.keys.len() * 2;
        let keys = std::mem::replace(&mut self.keys, vec![0; n]);
        let values = std::mem::replace(&mut self.values, vec![V::default(); n]);
        let mask = n - 1;
        for (k, v) in keys.into_iter().zip(values).filter(|&(k, _)| k != 0) {
            let mut i = home_slot(k, mask);
            while self.keys[i] != 0 {
                i = (i + 1) & mask;
            }
            self.keys[i] = k;
            self.values[i] = v;
        }
    }
}

impl KeyCounts {
    pub fn new() -> Self {
        KeyCounts(KeyTable::new())
    }

    /// One more occurrence of `key`, which must not be 0 (the empty slot).
    #[inline]
    pub fn add(&mut self, key: u64) {
        self.0.upsert(key, 1, |c| *c += 1);
    }

    /// Distinct keys.
    pub fn len(&self) -> usize {
        self.0.len
    }

    pub fn is_empty(&self) -> bool {
        self.0.len == 0
    }

    /// (key, count) of every distinct key, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.0.keys.iter().zip(&self.0.values).filter(|&(&k, _)| k != 0).map(|(&k, &c)| (k, c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptor_set_counts_distinct() {
        let mut s = DescriptorSet::new();
        for i in 1..=5000u64 {
            s.insert(i << 16 | 3);
            s.insert(i << 16 | 3);
        }
        s.insert(7);
        assert_eq!(s.len(), 5001);
    }

    #[test]
    fn key_counts_count_each_key_across_growth() {
        let mut c = KeyCounts::new();
        for i in 1..=3000u64 {
            for _ in 0..(i % 4 + 1) {
                c.add(i << 32 | 7);
            }
        }
        assert_eq!(c.len(), 3000);
        let mut all: Vec<(u64, u64)> = c.iter().collect();
        all.sort_unstable();
        assert_eq!(all.len(), 3000);
        for (j, &(k, n)) in all.iter().enumerate() {
            let i = j as u64 + 1;
            assert_eq!((k, n), (i << 32 | 7, i % 4 + 1));
        }
    }
}

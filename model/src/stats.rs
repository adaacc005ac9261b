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

/// Allocation-light set of stream descriptors for the unique-stream count: open addressing
/// over u64 keys (0 never occurs since SL >= 1), multiplicative hash.
#[derive(Clone, Debug)]
pub(crate) struct DescriptorSet {
    slots: Vec<u64>,
    len: usize,
}

impl DescriptorSet {
    pub fn new() -> Self {
        DescriptorSet { slots: vec![0; 1024], len: 0 }
    }

    #[inline]
    pub fn insert(&mut self, key: u64) {
        debug_assert!(key != 0);
        let mask = self.slots.len() - 1;
        let mut i = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize & mask;
        loop {
            let s = self.slots[i];
            if s == key {
                return;
            }
            if s == 0 {
                self.slots[i] = key;
                self.len += 1;
                if self.len * 2 > self.slots.len() {
                    self.grow();
                }
                return;
            }
            i = (i + 1) & mask;
        }
    }

    fn grow(&mut self) {
        let bigger = vec![0; self.slots.len() * 2];
        let old = std::mem::replace(&mut self.slots, bigger);
        self.len = 0;
        for k in old.into_iter().filter(|&k| k != 0) {
            self.insert(k);
        }
    }

    pub fn len(&self) -> usize {
        self.len
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
}

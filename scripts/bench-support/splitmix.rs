//! SplitMix64, the deterministic generator of the benches' and property tests' workloads
//! (included with `#[path]`, like `criterion_medians.rs`; the library's synthetic program
//! generator has its own public one in `sw-decoder/src/synthetic.rs`).

pub struct Rng(pub u64);

#[allow(dead_code)] // each includer uses a subset
impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (n < 2^32), by multiply-shift.
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() >> 32) * n) >> 32
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

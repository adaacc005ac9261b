//! Last stream predictor (docs/trace-format.md section 5.2).

use crate::config::Config;

#[derive(Clone, Debug)]
pub struct LastStreamPredictor {
    table: Vec<u16>,
    mask: u32,
    /// history[0] is the most recent stream index.
    history: [u16; 8],
    depth: usize,
    /// `h0 ^ (h1 << 1) ^ ...` over the `depth` most recent indices, unmasked (kept up to
    /// date by `access`, so `index` is one AND).
    hash: u32,
}

impl LastStreamPredictor {
    pub fn new(cfg: &Config) -> Self {
        assert!(cfg.lsp_entries.is_power_of_two());
        LastStreamPredictor {
            table: vec![0; cfg.lsp_entries as usize],
            mask: cfg.lsp_entries - 1,
            history: [0; 8],
            depth: cfg.hist as usize,
            hash: 0,
        }
    }

    pub fn reset(&mut self) {
        self.table.iter_mut().for_each(|e| *e = 0);
        self.history = [0; 8];
        self.hash = 0;
    }

    /// p = (h0 ^ (h1 << 1) ^ ... ) & (N_P - 1).
    #[inline]
    pub fn index(&self) -> usize {
        debug_assert_eq!(
            self.hash,
            self.history[..self.depth].iter().enumerate().fold(0, |p, (i, &h)| p ^ (h as u32) << i)
        );
        (self.hash & self.mask) as usize
    }

    /// The stream index the predictor holds for the current history (0 = nothing).
    #[inline]
    pub fn predict(&self) -> u16 {
        self.table[self.index()]
    }

    /// Present the incoming stream index; returns true on a hit. Updates the entry on a miss
    /// and shifts `si` into the history either way.
    #[inline(always)]
    pub fn access(&mut self, si: u16) -> bool {
        let p = self.index();
        let hit = si != 0 && self.table[p] == si;
        if !hit {
            self.table[p] = si;
        }
        self.shift_in(si);
        hit
    }

    /// `access` of the index [`LastStreamPredictor::predict`] gave (not 0): a hit, which
    /// writes nothing and only shifts `si` into the history.
    #[inline(always)]
    pub fn access_predicted(&mut self, si: u16) {
        debug_assert!(si != 0 && self.predict() == si);
        self.shift_in(si);
    }

    /// Shift `si` into the history.
    #[inline(always)]
    fn shift_in(&mut self, si: u16) {
        if self.depth == 1 {
            // One index of history (the default): the hash is that index, and no other
            // index is ever read.
            self.hash = si as u32;
            self.history[0] = si;
            return;
        }
        // The oldest index leaves the hash, the others move up one bit, `si` comes in.
        let oldest = (self.history[self.depth - 1] as u32) << (self.depth - 1);
        self.hash = (si as u32) ^ ((self.hash ^ oldest) << 1);
        self.history.copy_within(0..7, 1);
        self.history[0] = si;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lsp(text: &str) -> LastStreamPredictor {
        LastStreamPredictor::new(&text.parse().unwrap())
    }

    #[test]
    fn paper_fig4_sequence() {
        // SI sequence of the loop: 0 (SDC miss), then 0b011000 forever.
        let mut p = lsp("bsdc-16x4-64");
        assert!(!p.access(0), "an SDC miss never hits, even on a zero entry");
        assert!(!p.access(0b011000), "LSP[0] held 0");
        assert!(!p.access(0b011000), "LSP[0b011000] not yet written");
        for _ in 0..96 {
            assert!(p.access(0b011000));
        }
    }

    #[test]
    fn history_hash_and_mask() {
        let mut p = lsp("bsdc-16x4-16,hist=3");
        p.access(3);
        p.access(5);
        p.access(9);
        // h0=9, h1=5, h2=3: 0b1001 ^ 0b1010 ^ 0b1100 = 0b1111
        assert_eq!(p.index(), 15);
        p.access(1);
        // h0=1, h1=9, h2=5: 0b00001 ^ 0b10010 ^ 0b10100 = 0b00111 (bit 4 masked anyway)
        assert_eq!(p.index(), 7);
        let mut q = lsp("bsdc-16x4-4");
        q.access(7);
        assert_eq!(q.index(), 3, "previous index masked to the table size");
        assert_eq!(q.predict(), 0);
        q.access(9);
        q.access(7);
        assert_eq!(q.predict(), 9, "entry 3 (after 7) was written with 9");
        q.reset();
        assert_eq!((q.index(), q.predict()), (0, 0));
    }
}

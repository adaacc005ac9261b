//! Adaptive one-length counter (docs/trace-format.md section 5.4): encodes runs of LSP hits.

use crate::config::Config;

const MONITOR_MAX: u32 = 15;
const MONITOR_RESET: u32 = 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AdaptiveOneLengthCounter {
    width: u32,
    monitor: u32,
    init: u32,
    min: u32,
    max: u32,
    /// Hits counted but not yet emitted (encoder side).
    pending: u32,
    resizes: u64,
}

impl AdaptiveOneLengthCounter {
    pub fn new(cfg: &Config) -> Self {
        AdaptiveOneLengthCounter {
            width: cfg.olc_init,
            monitor: MONITOR_RESET,
            init: cfg.olc_init,
            min: cfg.olc_min,
            max: cfg.olc_max,
            pending: 0,
            resizes: 0,
        }
    }

    pub fn reset(&mut self) {
        self.width = self.init;
        self.monitor = MONITOR_RESET;
        self.pending = 0;
    }

    /// Current counter width s: a run record is `1` followed by s bits.
    #[inline]
    pub fn width(&self) -> u32 {
        self.width
    }

    pub fn monitor(&self) -> u32 {
        self.monitor
    }

    pub fn resizes(&self) -> u64 {
        self.resizes
    }

    #[inline]
    pub fn pending(&self) -> u32 {
        self.pending
    }

    /// Encoder: count one LSP hit. Returns `Some(n)` when the counter is full and a run
    /// record of n = 2^s hits must be emitted now (with the width before the update).
    #[inline]
    pub fn count_hit(&mut self) -> Option<u32> {
        self.pending += 1;
        if self.pending == 1 << self.width {
            self.pending = 0;
            Some(1 << self.width)
        } else {
            None
        }
    }

    /// Encoder: take the pending run (n >= 1) before another record.
    #[inline]
    pub fn take_pending(&mut self) -> Option<u32> {
        let n = self.pending;
        self.pending = 0;
        (n > 0).then_some(n)
    }

    /// Encoder and decoder: the monitor rule after a run record of `n` hits was sent/read.
    #[inline]
    pub fn after_run(&mut self, n: u32) {
        let full = 1u32 << self.width;
        if n == full {
            self.monitor = (self.monitor + 3).min(MONITOR_MAX);
        } else if n < full / 2 {
            self.monitor = self.monitor.saturating_sub(1);
        }
        if self.monitor == MONITOR_MAX && self.width < self.max {
            self.width += 1;
            self.monitor = MONITOR_RESET;
            self.resizes += 1;
        } else if self.monitor == 0 && self.width > self.min {
            self.width -= 1;
            self.monitor = MONITOR_RESET;
            self.resizes += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn aolc(text: &str) -> AdaptiveOneLengthCounter {
        AdaptiveOneLengthCounter::new(&text.parse().unwrap())
    }

    #[test]
    fn counter_fills_at_two_to_the_width() {
        let mut a = aolc("esdc-16x4-64");
        assert_eq!(a.width(), 4);
        for _ in 0..15 {
            assert_eq!(a.count_hit(), None);
        }
        assert_eq!(a.count_hit(), Some(16));
        assert_eq!(a.take_pending(), None);
        a.count_hit();
        a.count_hit();
        assert_eq!(a.take_pending(), Some(2));
    }

    #[test]
    fn grows_after_three_full_runs_and_shrinks_after_eight_short() {
        let mut a = aolc("esdc-16x4-64");
        a.after_run(16);
        a.after_run(16);
        assert_eq!((a.width(), a.monitor()), (4, 14));
        a.after_run(16);
        assert_eq!((a.width(), a.monitor()), (5, 8), "monitor saturated at 15 -> grow, reset to 8");
        a.after_run(16); // 16 of 32: neither full nor below half
        assert_eq!(a.monitor(), 8);
        for i in 0..7 {
            a.after_run(15);
            assert_eq!((a.width(), a.monitor()), (5, 7 - i));
        }
        a.after_run(1);
        assert_eq!((a.width(), a.monitor()), (4, 8));
        assert_eq!(a.resizes(), 2);
    }

    #[test]
    fn limits_hold() {
        let mut a = aolc("esdc-16x4-64,olc=8");
        for _ in 0..10 {
            a.after_run(256);
        }
        assert_eq!((a.width(), a.monitor()), (8, 15), "at olcmax the monitor stays saturated");
        let mut b = aolc("esdc-16x4-64,olc=1");
        for _ in 0..20 {
            b.after_run(1); // 1 is not < 2/2 -> no decrement at width 1
        }
        assert_eq!((b.width(), b.monitor()), (1, 8));
        let mut c = aolc("esdc-16x4-64,olc=2,olcmin=2");
        for _ in 0..20 {
            c.after_run(1);
        }
        assert_eq!((c.width(), c.monitor()), (2, 0), "at olcmin the monitor stays at 0");
        c.reset();
        assert_eq!((c.width(), c.monitor(), c.pending()), (2, 8, 0));
    }
}

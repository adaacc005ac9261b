//! Per-program stream statistics: the columns of the paper's Table 1 (instruction count,
//! unique streams, maximum and average stream length, and the number of unique streams that
//! make up 90% of the executed streams), computed by running the trace module's own
//! [`StreamDetector`] over the retire events of a run.
//!
//! A stream is identified by its start address (interworking form, bit 0 = Thumb) and its
//! length, as a stream descriptor cache identifies it: two streams that start at the same
//! address but end at different branches are different streams.

use serde::Serialize;
use streamtrace_model::stats::KeyCounts;
use streamtrace_model::{PlainRun, RetireEvent, StreamDescriptor, StreamDetector};

use crate::machine::{MemAccess, RetireHook};

/// Stream statistics of one run (JSON via serde).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ProgramProfile {
    /// Retired instructions (Table 1 column IC, not in millions).
    pub instructions: u64,
    /// Of which in Thumb state.
    pub thumb_instructions: u64,
    /// Dynamically executed streams (the last, unfinished one included).
    pub streams: u64,
    /// Distinct (start address, length) pairs (column (b), USC).
    pub unique_streams: u64,
    /// Longest stream (column (c), maxSL).
    pub max_stream_len: u32,
    /// Instructions per executed stream (column (d), avgSL).
    pub avg_stream_len: f64,
    /// Fewest unique streams whose executions add up to 90% of the executed streams
    /// (column (e), CDF 90%).
    pub streams_for_90pct: u64,
    /// Retire events that left for an exception vector.
    pub exceptions: u64,
    /// The detector's stream length limit (`u32::MAX`: none, as in Table 1).
    pub max_sl_limit: u32,
}

/// A retire hook that profiles streams; call [`ProfileHook::finish`] after the run.
#[derive(Clone, Debug)]
pub struct ProfileHook {
    detector: StreamDetector,
    max_sl: u32,
    /// Executions per stream, keyed `sa << 32 | sl` (SL >= 1, so never 0).
    counts: KeyCounts,
    instructions: u64,
    thumb_instructions: u64,
    exceptions: u64,
}

impl Default for ProfileHook {
    fn default() -> Self {
        Self::new()
    }
}

impl ProfileHook {
    /// Streams without a length limit (the paper's Table 1).
    pub fn new() -> Self {
        Self::with_max_sl(u32::MAX)
    }

    /// Streams cut at `max_sl` instructions, as the trace module cuts them.
    pub fn with_max_sl(max_sl: u32) -> Self {
        let max_sl = max_sl.max(1);
        ProfileHook {
            detector: StreamDetector::new(max_sl),
            max_sl,
            counts: KeyCounts::new(),
            instructions: 0,
            thumb_instructions: 0,
            exceptions: 0,
        }
    }

    /// Feed one retired instruction (what [`RetireHook::retire`] does).
    #[inline]
    pub fn push(&mut self, ev: &RetireEvent) {
        self.instructions += 1;
        self.thumb_instructions += ev.thumb as u64;
        self.exceptions += ev.exception as u64;
        if let Some(d) = self.detector.push(ev) {
            self.count(&d);
        }
    }

    /// How many plain instructions [`ProfileHook::push_plain_run`] takes in one run now:
    /// as many as the current stream takes without reaching the maximum length.
    #[inline]
    pub fn plain_budget(&self) -> u32 {
        self.detector.plain_room()
    }

    /// A run of plain instructions: what [`ProfileHook::push`] of each does (in one step
    /// within [`ProfileHook::plain_budget`]; a longer run one stream at a time).
    #[inline]
    pub fn push_plain_run(&mut self, run: &PlainRun) {
        self.instructions += run.count as u64;
        self.thumb_instructions += if run.thumb { run.count as u64 } else { 0 };
        let (mut pc, mut left) = (run.pc, run.count);
        let size = if run.thumb { 2 } else { 4 };
        while left > 0 {
            let n = left.min(self.detector.plain_room());
            if n > 0 {
                self.detector.extend_plain_run(pc | run.thumb as u32, n);
                left -= n;
                pc = pc.wrapping_add(n * size);
            }
            if left > 0 {
                // The instruction that reaches the maximum length ends the stream.
                let ev = PlainRun { pc, count: 1, ..*run }.first_event();
                if let Some(d) = self.detector.push(&ev) {
                    self.count(&d);
                }
                left -= 1;
                pc = pc.wrapping_add(size);
            }
        }
    }

    #[inline]
    fn count(&mut self, d: &StreamDescriptor) {
        self.counts.add((d.sa as u64) << 32 | d.sl as u64);
    }

    /// Close the unfinished stream and compute the profile.
    pub fn finish(mut self) -> ProgramProfile {
        if let Some(d) = self.detector.cut() {
            self.count(&d);
        }
        let max_stream_len = self.counts.iter().map(|(k, _)| k as u32).max().unwrap_or(0);
        let mut freq: Vec<u64> = self.counts.iter().map(|(_, n)| n).collect();
        let streams: u64 = freq.iter().sum();
        freq.sort_unstable_by(|a, b| b.cmp(a));
        ProgramProfile {
            instructions: self.instructions,
            thumb_instructions: self.thumb_instructions,
            streams,
            unique_streams: self.counts.len() as u64,
            max_stream_len,
            avg_stream_len: if streams == 0 { 0.0 } else { self.instructions as f64 / streams as f64 },
            streams_for_90pct: coverage_count(&freq, 0.9),
            exceptions: self.exceptions,
            max_sl_limit: self.max_sl,
        }
    }
}

impl RetireHook for ProfileHook {
    #[inline]
    fn retire(&mut self, ev: &RetireEvent, _: &[MemAccess]) {
        self.push(ev);
    }

    #[inline]
    fn plain_budget(&self) -> u32 {
        ProfileHook::plain_budget(self)
    }

    #[inline]
    fn retire_plain(&mut self, run: &PlainRun) {
        self.push_plain_run(run);
    }
}

/// How many of the most frequent items (counts sorted in descending order) it takes to
/// reach `fraction` of the total. Exact integer arithmetic: the smallest k with
/// `sum(top k) >= ceil(fraction * total)`.
pub fn coverage_count(sorted_desc: &[u64], fraction: f64) -> u64 {
    let total: u64 = sorted_desc.iter().sum();
    if total == 0 {
        return 0;
    }
    let need = ((total as f64) * fraction).ceil().max(1.0) as u64;
    let mut acc = 0u64;
    for (i, &c) in sorted_desc.iter().enumerate() {
        acc += c;
        if acc >= need {
            return i as u64 + 1;
        }
    }
    sorted_desc.len() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use streamtrace_model::BranchClass;

    fn ev(pc: u32, class: BranchClass, taken: bool, next: u32) -> RetireEvent {
        RetireEvent { pc, class, taken, next_pc: next, ..Default::default() }
    }

    /// A loop: `0x100: add; 0x104: subs; 0x108: bne 0x100` run `n` times, then
    /// `0x10c: mov; 0x110: bx lr` (return to 0x200).
    fn loop_events(n: u32) -> Vec<RetireEvent> {
        let mut v = Vec::new();
        for i in 0..n {
            v.push(ev(0x100, BranchClass::None, false, 0x104));
            v.push(ev(0x104, BranchClass::None, false, 0x108));
            let last = i + 1 == n;
            v.push(ev(0x108, BranchClass::DirectCond, !last, if last { 0x10C } else { 0x100 }));
        }
        v.push(ev(0x10C, BranchClass::None, false, 0x110));
        v.push(ev(0x110, BranchClass::Return, true, 0x200));
        v
    }

    #[test]
    fn plain_runs_of_any_length_count_as_their_instructions() {
        // Straight-line code of 40 instructions then a taken branch, in both states, cut
        // at a maximum length of 7: runs inside a stream, runs across its maximum length.
        let mut evs = Vec::new();
        for (base, thumb) in [(0x1000u32, false), (0x2000, true), (0x1000, false)] {
            let size = if thumb { 2 } else { 4 };
            for i in 0..40 {
                evs.push(RetireEvent { pc: base + i * size, thumb, next_pc: (base + (i + 1) * size) | thumb as u32, ..Default::default() });
            }
            evs.push(RetireEvent { pc: base + 40 * size, thumb, class: BranchClass::DirectCond, taken: true, next_pc: 0x3000, ..Default::default() });
        }
        let mut single = ProfileHook::with_max_sl(7);
        evs.iter().for_each(|e| single.push(e));
        let expected = single.finish();
        for run_len in [1, 3, 6, 7, 13, 40] {
            let mut runs = ProfileHook::with_max_sl(7);
            let mut i = 0;
            while i < evs.len() {
                let e = &evs[i];
                let n = (evs[i..].iter().take_while(|x| x.class == BranchClass::None && x.thumb == e.thumb).count()).min(run_len);
                if n == 0 {
                    runs.push(e);
                    i += 1;
                } else {
                    runs.push_plain_run(&PlainRun { pc: e.pc, thumb: e.thumb, count: n as u32, ..Default::default() });
                    i += n;
                }
            }
            assert_eq!(runs.finish(), expected, "runs of {run_len}");
        }
    }

    #[test]
    fn hand_made_sequence() {
        let mut h = ProfileHook::new();
        for e in loop_events(10) {
            h.retire(&e, &[]);
        }
        // Streams: (0x100,3) x9 taken loop-backs, then the last iteration falls through:
        // (0x100, 5) ending at the return. Then two instructions in Thumb state, one of
        // which raises an exception (SWI), and an unfinished stream of one.
        let mut t = ev(0x200, BranchClass::None, false, 0x202);
        t.thumb = true;
        h.retire(&t, &[]);
        let mut swi = ev(0x202, BranchClass::None, false, 0x8);
        swi.thumb = true;
        swi.exception = true;
        h.retire(&swi, &[]);
        h.retire(&ev(0x8, BranchClass::None, false, 0xC), &[]);
        let p = h.finish();
        assert_eq!(p.instructions, 30 + 2 + 3);
        assert_eq!(p.thumb_instructions, 2);
        assert_eq!(p.exceptions, 1);
        // (0x100,3)x9, (0x100,5)x1, (0x201,2)x1, (0x8,1)x1
        assert_eq!(p.streams, 12);
        assert_eq!(p.unique_streams, 4);
        assert_eq!(p.max_stream_len, 5);
        assert!((p.avg_stream_len - 35.0 / 12.0).abs() < 1e-12);
        // 90% of 12 = 10.8 -> 11 streams: 9 + 1 + 1 -> 3 unique streams.
        assert_eq!(p.streams_for_90pct, 3);
        assert_eq!(p.max_sl_limit, u32::MAX);
        let json = serde_json::to_value(&p).unwrap();
        assert_eq!(json["unique_streams"], 4);
        assert_eq!(json["streams_for_90pct"], 3);
    }

    #[test]
    fn length_limit_cuts_streams() {
        let mut h = ProfileHook::with_max_sl(2);
        for e in loop_events(1) {
            h.push(&e);
        }
        // 5 instructions in one would-be stream -> 2 + 2 + 1.
        let p = h.finish();
        assert_eq!((p.streams, p.unique_streams, p.max_stream_len), (3, 3, 2));
        assert_eq!(p.max_sl_limit, 2);
    }

    #[test]
    fn coverage() {
        assert_eq!(coverage_count(&[], 0.9), 0);
        assert_eq!(coverage_count(&[100], 0.9), 1);
        assert_eq!(coverage_count(&[90, 5, 5], 0.9), 1);
        assert_eq!(coverage_count(&[89, 6, 5], 0.9), 2);
        assert_eq!(coverage_count(&[1; 10], 0.9), 9);
        assert_eq!(coverage_count(&[1; 10], 1.0), 10);
        let empty = ProfileHook::new().finish();
        assert_eq!((empty.streams, empty.avg_stream_len, empty.streams_for_90pct), (0, 0.0, 0));
    }
}

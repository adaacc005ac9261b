//! Stream detector (docs/trace-format.md section 3; paper Fig. 2).

use crate::event::{BranchClass, RetireEvent};

/// A completed stream: start address (interworking form), length, and how it ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct StreamDescriptor {
    /// Start address, bit 0 = Thumb.
    pub sa: u32,
    /// Number of instructions, 1..=maxSL.
    pub sl: u32,
    /// Class of the last instruction of the stream.
    pub last_class: BranchClass,
    /// The stream ended because an exception was taken after its last instruction.
    pub exception: bool,
}

impl StreamDescriptor {
    /// Whether the *next* stream's start address is inferable (section 3.1).
    #[inline]
    pub fn next_inferable(&self, max_sl: u32) -> bool {
        self.last_class == BranchClass::DirectCond && self.sl < max_sl && !self.exception
    }
}

#[derive(Clone, Debug)]
pub struct StreamDetector {
    max_sl: u32,
    sa: u32,
    sl: u32,
    last_class: BranchClass,
}

impl StreamDetector {
    pub fn new(max_sl: u32) -> Self {
        StreamDetector { max_sl, sa: 0, sl: 0, last_class: BranchClass::None }
    }

    /// Instructions in the current, unfinished stream.
    pub fn current_len(&self) -> u32 {
        self.sl
    }

    /// One retired instruction; returns the descriptor of a stream that ends with it.
    #[inline]
    pub fn push(&mut self, ev: &RetireEvent) -> Option<StreamDescriptor> {
        self.extend(ev.iw_addr(), ev.class);
        let end = (ev.taken && ev.class.ends_stream_when_taken()) || ev.exception || self.sl == self.max_sl;
        if end {
            let d = StreamDescriptor { sa: self.sa, sl: self.sl, last_class: ev.class, exception: ev.exception };
            self.sl = 0;
            Some(d)
        } else {
            None
        }
    }

    /// Whether an instruction that changes no flow (class none, not taken, no exception)
    /// starts or continues the current stream without ending it.
    #[inline(always)]
    pub(crate) fn extends_plain(&self) -> bool {
        self.sl + 1 < self.max_sl
    }

    /// The instruction at `iw` of class `class` starts or continues the current stream: what
    /// [`StreamDetector::push`] does before deciding whether the stream ends, and all it does
    /// for an instruction [`StreamDetector::extends_plain`] accepts.
    #[inline(always)]
    pub(crate) fn extend(&mut self, iw: u32, class: BranchClass) {
        if self.sl == 0 {
            self.sa = iw;
        }
        self.sl += 1;
        self.last_class = class;
    }

    /// How many instructions that change no flow the current stream takes, one after the
    /// other, before one of them would end it (at the maximum length).
    #[inline(always)]
    pub fn plain_room(&self) -> u32 {
        self.max_sl.saturating_sub(self.sl + 1)
    }

    /// What [`StreamDetector::push`] does for `count` instructions of class none, not
    /// taken, from `iw` on (interworking form), all within [`StreamDetector::plain_room`]:
    /// none of them ends the stream. Panics for an empty run or one past that room.
    #[inline(always)]
    pub fn extend_plain_run(&mut self, iw: u32, count: u32) {
        // (A longer run would take the stream past its maximum length unnoticed.)
        assert!(count >= 1 && count <= self.plain_room(), "a plain run of {count} past the stream's room of {}", self.plain_room());
        self.extend_within_room(iw, count);
    }

    /// [`StreamDetector::extend_plain_run`] for a caller that checked the run against
    /// [`StreamDetector::plain_room`] itself (checked again in debug builds only). The
    /// stream's last class becomes none, also after a run that ended with a conditional
    /// branch not taken (see [`crate::CycleTraceModule::plain_branches`]).
    #[inline(always)]
    pub(crate) fn extend_within_room(&mut self, iw: u32, count: u32) {
        debug_assert!(count >= 1 && count <= self.plain_room());
        if self.sl == 0 {
            self.sa = iw;
        }
        self.sl += count;
        self.last_class = BranchClass::None;
    }

    /// End the current stream early (flush at end of trace, requested sync).
    pub fn cut(&mut self) -> Option<StreamDescriptor> {
        if self.sl == 0 {
            return None;
        }
        let d = StreamDescriptor { sa: self.sa, sl: self.sl, last_class: self.last_class, exception: false };
        self.sl = 0;
        Some(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(pc: u32, class: BranchClass, taken: bool) -> RetireEvent {
        RetireEvent { pc, class, taken, next_pc: pc + 4, ..Default::default() }
    }

    #[test]
    fn rules_of_fig2() {
        let mut d = StreamDetector::new(255);
        assert_eq!(d.push(&ev(0x100, BranchClass::None, false)), None);
        assert_eq!(d.push(&ev(0x104, BranchClass::DirectUncond, true)), None, "B is followed");
        assert_eq!(d.push(&ev(0x200, BranchClass::DirectCond, false)), None, "not taken continues");
        assert_eq!(d.push(&ev(0x204, BranchClass::IndirectCond, false)), None);
        let s = d.push(&ev(0x208, BranchClass::DirectCond, true)).unwrap();
        assert_eq!(s, StreamDescriptor { sa: 0x100, sl: 5, last_class: BranchClass::DirectCond, exception: false });
        assert!(s.next_inferable(255));
        for class in [BranchClass::IndirectCond, BranchClass::IndirectUncond, BranchClass::Return] {
            let s = d.push(&ev(0x300, class, true)).unwrap();
            assert_eq!((s.sa, s.sl), (0x300, 1));
            assert!(!s.next_inferable(255));
        }
        let mut e = ev(0x400, BranchClass::DirectCond, true);
        e.exception = true;
        let s = d.push(&e).unwrap();
        assert!(s.exception && !s.next_inferable(255), "exception after a dcond: address is sent");
        let mut t = ev(0x501, BranchClass::None, false);
        t.pc = 0x500;
        t.thumb = true;
        d.push(&t);
        let s = d.cut().unwrap();
        assert_eq!((s.sa, s.sl), (0x501, 1), "Thumb start address carries bit 0");
        assert_eq!(d.cut(), None);
    }

    #[test]
    fn max_length_cut() {
        let mut d = StreamDetector::new(4);
        for i in 0..3 {
            assert_eq!(d.push(&ev(i * 4, BranchClass::None, false)), None);
        }
        let s = d.push(&ev(12, BranchClass::DirectCond, true)).unwrap();
        assert_eq!(s.sl, 4);
        assert!(!s.next_inferable(4), "a stream of maxSL never makes the next address inferable");
        for i in 0..4 {
            let r = d.push(&ev(16 + i * 4, BranchClass::None, false));
            assert_eq!(r.is_some(), i == 3);
        }
    }
}

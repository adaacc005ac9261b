//! The pft job buffer (docs/trace-timing.md section 7, version 1.5: it takes the SDB's place):
//! a first-word-fall-through FIFO of 48-bit control entries (any depth 1..=64) beside a FIFO
//! of `max(depth, 2)` 32-bit address words, both in registers. A job enters as its two-word
//! [`JobRecord`](super::JobRecord) and leaves as the same record; in between it is stored
//! split ([`JobRecord::control`](super::JobRecord::control) and
//! [`JobRecord::words`](super::JobRecord::words)). `fill` and `w_fill` are registered, so
//! whether a job whose word bound is `bound` fits after the sequencer's take is a function
//! of registers and of `bound` (trace-timing.md 7, version 1.7); a job pushed stores its
//! `want` words.

use rust_hdl::prelude::*;

use streamtrace_model::pft::{job_buffer_words, JOB_CONTROL_BITS, JOB_WORD_BITS};

const _: () = assert!(JOB_CONTROL_BITS == 48 && JOB_WORD_BITS == 32);

/// The address words a job needs (docs/trace-timing.md 7, version 1.5; in software
/// [`JobRecord::words`](super::JobRecord::words)), from its flags: one start word, and one
/// second word for an exception vector, a missed target's offset code or an OVERFLOW
/// count. The job buffer decodes its head with it, the top the job offered.
#[derive(LogicBlock)]
pub struct JobWords {
    pub has_start: Signal<In, Bit>,
    pub exc: Signal<In, Bit>,
    pub off: Signal<In, Bit>,
    pub tail: Signal<In, Bit>,
    pub tail_type: Signal<In, Bits<2>>,
    pub words: Signal<Out, Bits<2>>,
    is_second: Signal<Local, Bit>,
    k_overflow: Constant<Bits<2>>,
    k_zero: Constant<Bits<2>>,
    k_one: Constant<Bits<2>>,
    k_two: Constant<Bits<2>>,
}

impl Default for JobWords {
    fn default() -> Self {
        JobWords {
            has_start: Default::default(),
            exc: Default::default(),
            off: Default::default(),
            tail: Default::default(),
            tail_type: Default::default(),
            words: Default::default(),
            is_second: Default::default(),
            k_overflow: Constant::new((super::ESC_OVERFLOW as u64).into()),
            k_zero: Constant::new(0u64.into()),
            k_one: Constant::new(1u64.into()),
            k_two: Constant::new(2u64.into()),
        }
    }
}

impl Logic for JobWords {
    #[hdl_gen]
    fn update(&mut self) {
        self.is_second.next =
            (self.exc.val() | self.off.val()) | (self.tail.val() & (self.tail_type.val() == self.k_overflow.val()));
        if self.has_start.val() & self.is_second.val() {
            self.words.next = self.k_two.val();
        } else if self.has_start.val() | self.is_second.val() {
            self.words.next = self.k_one.val();
        } else {
            self.words.next = self.k_zero.val();
        }
    }
}

#[derive(LogicBlock)]
pub struct JobBuffer {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub push: Signal<In, Bit>,
    pub push_w0: Signal<In, Bits<64>>,
    pub push_w1: Signal<In, Bits<64>>,
    /// Address words of the job that may be pushed this cycle (`push` then stores that job).
    pub want: Signal<In, Bits<2>>,
    /// That job's word bound (at least `want`), which the full flag counts.
    pub bound: Signal<In, Bits<2>>,
    /// The coder takes the head this cycle if there is one (from registers only).
    pub take: Signal<In, Bit>,
    pub pop: Signal<In, Bit>,
    pub head_w0: Signal<Out, Bits<64>>,
    pub head_w1: Signal<Out, Bits<64>>,
    /// A job of word bound `bound` does not fit this cycle, after the take.
    pub full: Signal<Out, Bit>,
    pub empty: Signal<Out, Bit>,
    ctrl: Vec<DFF<Bits<48>>>,
    words: Vec<DFF<Bits<32>>>,
    // The pushed record split: its control entry and its first and second word.
    p_start: Signal<Local, Bit>,
    // 16-bit pieces in signals of their own (a widened slice lints as a width mismatch).
    p_off: Signal<Local, Bits<16>>,
    p_hi0: Signal<Local, Bits<16>>,
    p_hi1: Signal<Local, Bits<16>>,
    h_off: Signal<Local, Bits<16>>,
    h_hi0: Signal<Local, Bits<16>>,
    h_hi1: Signal<Local, Bits<16>>,
    p_ctrl: Signal<Local, Bits<48>>,
    p_word_a: Signal<Local, Bits<32>>,
    p_word_b: Signal<Local, Bits<32>>,
    want8: Signal<Local, Bits<8>>,
    bound8: Signal<Local, Bits<8>>,
    /// The head entry and its words, selected here and written to the outputs once (no
    /// default-then-override glitch on signals the sequencer reads).
    h_ctrl: Signal<Local, Bits<48>>,
    h_word_a: Signal<Local, Bits<32>>,
    h_word_b: Signal<Local, Bits<32>>,
    head_words: JobWords,
    h_start: Signal<Local, Bit>,
    h_exc: Signal<Local, Bit>,
    h_words: Signal<Local, Bits<8>>,
    h_addr: Signal<Local, Bits<32>>,
    h_start_field: Signal<Local, Bits<32>>,
    h_exc_offset: Signal<Local, Bits<64>>,
    h_tail_offset: Signal<Local, Bits<64>>,
    take_words: Signal<Local, Bits<8>>,
    /// The full flag with and without this cycle's take, both from registers and `bound`:
    /// the take (from the coder's state) only selects between them.
    full_take: Signal<Local, Bit>,
    full_keep: Signal<Local, Bit>,
    is_empty: Signal<Local, Bit>,
    w_wr_inc: Signal<Local, Bits<8>>,
    w_rd_inc: Signal<Local, Bits<8>>,
    w_wr_sum: Signal<Local, Bits<8>>,
    w_rd_sum: Signal<Local, Bits<8>>,
    w_wr1: Signal<Local, Bits<8>>,
    w_rd1: Signal<Local, Bits<8>>,
    w_wr_next: Signal<Local, Bits<8>>,
    w_rd_next: Signal<Local, Bits<8>>,
    rd_ptr: DFF<Bits<8>>,
    wr_ptr: DFF<Bits<8>>,
    fill: DFF<Bits<8>>,
    w_rd: DFF<Bits<8>>,
    w_wr: DFF<Bits<8>>,
    w_fill: DFF<Bits<8>>,
    k_last: Constant<Bits<8>>,
    k_depth: Constant<Bits<8>>,
    k_wdepth: Constant<Bits<8>>,
    k_one: Constant<Bits<8>>,
    k_two: Constant<Bits<8>>,
    k_zero: Constant<Bits<8>>,
    k_zero32: Constant<Bits<32>>,
    k_zero64: Constant<Bits<64>>,
    k_sh16: Constant<Bits<8>>,
    k_sh32: Constant<Bits<8>>,
    k_sh48: Constant<Bits<8>>,
    _depth: usize,
    _wdepth: usize,
}

impl JobBuffer {
    pub fn new(depth: usize) -> JobBuffer {
        assert!((1..=64).contains(&depth));
        let wdepth = job_buffer_words(depth as u32) as usize;
        JobBuffer {
            clock: Default::default(),
            reset: Default::default(),
            push: Default::default(),
            push_w0: Default::default(),
            push_w1: Default::default(),
            want: Default::default(),
            bound: Default::default(),
            take: Default::default(),
            pop: Default::default(),
            head_w0: Default::default(),
            head_w1: Default::default(),
            full: Default::default(),
            empty: Default::default(),
            ctrl: (0..depth).map(|_| Default::default()).collect(),
            words: (0..wdepth).map(|_| Default::default()).collect(),
            p_start: Default::default(),
            p_off: Default::default(),
            p_hi0: Default::default(),
            p_hi1: Default::default(),
            h_off: Default::default(),
            h_hi0: Default::default(),
            h_hi1: Default::default(),
            p_ctrl: Default::default(),
            p_word_a: Default::default(),
            p_word_b: Default::default(),
            want8: Default::default(),
            bound8: Default::default(),
            h_ctrl: Default::default(),
            h_word_a: Default::default(),
            h_word_b: Default::default(),
            head_words: Default::default(),
            h_start: Default::default(),
            h_exc: Default::default(),
            h_words: Default::default(),
            h_addr: Default::default(),
            h_start_field: Default::default(),
            h_exc_offset: Default::default(),
            h_tail_offset: Default::default(),
            take_words: Default::default(),
            full_take: Default::default(),
            full_keep: Default::default(),
            is_empty: Default::default(),
            w_wr_inc: Default::default(),
            w_rd_inc: Default::default(),
            w_wr_sum: Default::default(),
            w_rd_sum: Default::default(),
            w_wr1: Default::default(),
            w_rd1: Default::default(),
            w_wr_next: Default::default(),
            w_rd_next: Default::default(),
            rd_ptr: Default::default(),
            wr_ptr: Default::default(),
            fill: Default::default(),
            w_rd: Default::default(),
            w_wr: Default::default(),
            w_fill: Default::default(),
            k_last: Constant::new(((depth - 1) as u64).into()),
            k_depth: Constant::new((depth as u64).into()),
            k_wdepth: Constant::new((wdepth as u64).into()),
            k_one: Constant::new(1u64.into()),
            k_two: Constant::new(2u64.into()),
            k_zero: Constant::new(0u64.into()),
            k_zero32: Constant::new(0u64.into()),
            k_zero64: Constant::new(0u64.into()),
            k_sh16: Constant::new(16u64.into()),
            k_sh32: Constant::new(32u64.into()),
            k_sh48: Constant::new(48u64.into()),
            _depth: depth,
            _wdepth: wdepth,
        }
    }
}

impl Logic for JobBuffer {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, rd_ptr, wr_ptr, fill, w_rd, w_wr, w_fill);
        // The pushed record (layout: JobRecord::pack) split as JobRecord::control and
        // JobRecord::words do: one offset (the exception's when there is one), the two
        // flag halves, the start field first, then the vector / offset code / lost count.
        self.p_start.next = self.push_w0.val().get_bit(60);
        self.p_off.next = self.push_w1.val().get_bits::<16>(32);
        if self.push_w0.val().get_bit(62) {
            self.p_off.next = self.push_w0.val().get_bits::<16>(32);
        }
        self.p_hi0.next = self.push_w0.val().get_bits::<16>(48);
        self.p_hi1.next = self.push_w1.val().get_bits::<16>(48);
        self.p_ctrl.next = bit_cast::<48, 16>(self.p_off.val())
            | (bit_cast::<48, 16>(self.p_hi0.val()) << self.k_sh16.val())
            | (bit_cast::<48, 16>(self.p_hi1.val()) << self.k_sh32.val());
        self.p_word_a.next = self.push_w1.val().get_bits::<32>(0);
        if self.p_start.val() {
            self.p_word_a.next = self.push_w0.val().get_bits::<32>(0);
        }
        self.p_word_b.next = self.push_w1.val().get_bits::<32>(0);
        self.want8.next = bit_cast::<8, 2>(self.want.val());
        self.bound8.next = bit_cast::<8, 2>(self.bound.val());

        // Word pointers one and `k` ahead, wrapping at the word depth.
        self.w_wr_inc.next = self.w_wr.q.val() + self.k_one.val();
        self.w_wr1.next = self.w_wr_inc.val();
        if self.w_wr_inc.val() == self.k_wdepth.val() {
            self.w_wr1.next = self.k_zero.val();
        }
        self.w_rd_inc.next = self.w_rd.q.val() + self.k_one.val();
        self.w_rd1.next = self.w_rd_inc.val();
        if self.w_rd_inc.val() == self.k_wdepth.val() {
            self.w_rd1.next = self.k_zero.val();
        }

        self.h_ctrl.next = self.ctrl[0].q.val();
        for i in 0..self._depth {
            self.ctrl[i].clock.next = self.clock.val();
            self.ctrl[i].d.next = self.ctrl[i].q.val();
            if self.push.val() & (self.wr_ptr.q.val().index() == i) {
                self.ctrl[i].d.next = self.p_ctrl.val();
            }
            if self.rd_ptr.q.val().index() == i {
                self.h_ctrl.next = self.ctrl[i].q.val();
            }
        }
        self.h_word_a.next = self.k_zero32.val();
        self.h_word_b.next = self.k_zero32.val();
        for i in 0..self._wdepth {
            self.words[i].clock.next = self.clock.val();
            self.words[i].d.next = self.words[i].q.val();
            if self.push.val() & (self.want8.val() != self.k_zero.val()) & (self.w_wr.q.val().index() == i) {
                self.words[i].d.next = self.p_word_a.val();
            }
            if (self.push.val() & (self.want8.val() == self.k_two.val())) & (self.w_wr1.val().index() == i) {
                self.words[i].d.next = self.p_word_b.val();
            }
            if self.w_rd.q.val().index() == i {
                self.h_word_a.next = self.words[i].q.val();
            }
            if self.w_rd1.val().index() == i {
                self.h_word_b.next = self.words[i].q.val();
            }
        }

        // The head record rebuilt (JobRecord::join).
        self.h_off.next = self.h_ctrl.val().get_bits::<16>(0);
        self.h_hi0.next = self.h_ctrl.val().get_bits::<16>(16);
        self.h_hi1.next = self.h_ctrl.val().get_bits::<16>(32);
        // The control entry's flags: word 0's bits 63:48 at 31:16, word 1's at 47:32.
        self.h_start.next = self.h_ctrl.val().get_bit(28);
        self.head_words.has_start.next = self.h_start.val();
        self.head_words.exc.next = self.h_ctrl.val().get_bit(30);
        self.head_words.off.next = self.h_ctrl.val().get_bit(43);
        self.head_words.tail.next = self.h_ctrl.val().get_bit(34);
        self.head_words.tail_type.next = self.h_ctrl.val().get_bits::<2>(32);
        self.h_exc.next = self.h_ctrl.val().get_bit(30);
        self.h_words.next = bit_cast::<8, 2>(self.head_words.words.val());
        self.h_start_field.next = self.k_zero32.val();
        self.h_addr.next = self.k_zero32.val();
        // The start field is the first word; the second field the word after it.
        if self.h_start.val() {
            self.h_start_field.next = self.h_word_a.val();
            if self.h_words.val() == self.k_two.val() {
                self.h_addr.next = self.h_word_b.val();
            }
        } else if self.h_words.val() != self.k_zero.val() {
            self.h_addr.next = self.h_word_a.val();
        }
        self.h_exc_offset.next = self.k_zero64.val();
        self.h_tail_offset.next = bit_cast::<64, 16>(self.h_off.val()) << self.k_sh32.val();
        if self.h_exc.val() {
            self.h_exc_offset.next = bit_cast::<64, 16>(self.h_off.val()) << self.k_sh32.val();
            self.h_tail_offset.next = self.k_zero64.val();
        }
        self.head_w0.next = (bit_cast::<64, 16>(self.h_hi0.val()) << self.k_sh48.val())
            | self.h_exc_offset.val()
            | bit_cast::<64, 32>(self.h_start_field.val());
        self.head_w1.next = (bit_cast::<64, 16>(self.h_hi1.val()) << self.k_sh48.val())
            | self.h_tail_offset.val()
            | bit_cast::<64, 32>(self.h_addr.val());

        // Full for a job of word bound `bound` (trace-timing.md 7, version 1.7): no control
        // entry or too few words after the sequencer's take of this cycle.
        self.is_empty.next = self.fill.q.val() == self.k_zero.val();
        self.empty.next = self.is_empty.val();
        self.take_words.next = self.k_zero.val();
        if !self.is_empty.val() {
            self.take_words.next = self.h_words.val();
        }
        self.full_take.next = (self.w_fill.q.val() - self.take_words.val() + self.bound8.val()) > self.k_wdepth.val();
        self.full_keep.next =
            (self.fill.q.val() == self.k_depth.val()) | ((self.w_fill.q.val() + self.bound8.val()) > self.k_wdepth.val());
        // (Written once per evaluation, if/else: the top reads it.)
        if self.take.val() {
            self.full.next = self.full_take.val();
        } else {
            self.full.next = self.full_keep.val();
        }

        if self.push.val() {
            self.wr_ptr.d.next = self.wr_ptr.q.val() + self.k_one.val();
            if self.wr_ptr.q.val() == self.k_last.val() {
                self.wr_ptr.d.next = self.k_zero.val();
            }
        }
        if self.pop.val() {
            self.rd_ptr.d.next = self.rd_ptr.q.val() + self.k_one.val();
            if self.rd_ptr.q.val() == self.k_last.val() {
                self.rd_ptr.d.next = self.k_zero.val();
            }
        }
        if self.push.val() & !self.pop.val() {
            self.fill.d.next = self.fill.q.val() + self.k_one.val();
        }
        if !self.push.val() & self.pop.val() {
            self.fill.d.next = self.fill.q.val() - self.k_one.val();
        }
        // Words: the pushed job's `want`, the popped head's `h_words`.
        self.w_wr_sum.next = self.w_wr.q.val() + self.want8.val();
        self.w_wr_next.next = self.w_wr_sum.val();
        if self.w_wr_sum.val() >= self.k_wdepth.val() {
            self.w_wr_next.next = self.w_wr_sum.val() - self.k_wdepth.val();
        }
        self.w_rd_sum.next = self.w_rd.q.val() + self.h_words.val();
        self.w_rd_next.next = self.w_rd_sum.val();
        if self.w_rd_sum.val() >= self.k_wdepth.val() {
            self.w_rd_next.next = self.w_rd_sum.val() - self.k_wdepth.val();
        }
        if self.push.val() {
            self.w_wr.d.next = self.w_wr_next.val();
        }
        if self.pop.val() {
            self.w_rd.d.next = self.w_rd_next.val();
        }
        if self.push.val() & self.pop.val() {
            self.w_fill.d.next = self.w_fill.q.val() + self.want8.val() - self.h_words.val();
        } else if self.push.val() {
            self.w_fill.d.next = self.w_fill.q.val() + self.want8.val();
        } else if self.pop.val() {
            self.w_fill.d.next = self.w_fill.q.val() - self.h_words.val();
        }
        if self.reset.val() {
            self.rd_ptr.d.next = self.k_zero.val();
            self.wr_ptr.d.next = self.k_zero.val();
            self.fill.d.next = self.k_zero.val();
            self.w_rd.d.next = self.k_zero.val();
            self.w_wr.d.next = self.k_zero.val();
            self.w_fill.d.next = self.k_zero.val();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{JobRecord, ESC_END, ESC_EXCEPTION, ESC_OVERFLOW, ESC_SYNC};
    use super::*;

    #[test]
    fn job_words_match_the_records_words() {
        // Every combination of the flags that decide the words, over records that set
        // every other flag too (they must not count).
        let mut uut = JobWords::default();
        uut.connect_all();
        let mut seen = [0; 3];
        for m in 0..64u32 {
            let bit = |i: u32| m & (1 << i) != 0;
            let tail_type = [ESC_END, ESC_SYNC, ESC_EXCEPTION, ESC_OVERFLOW][(m >> 4) as usize];
            let r = JobRecord {
                start: bit(0),
                exc: bit(1),
                off: bit(2),
                tail: bit(3),
                tail_type,
                start_same: true,
                virt: true,
                dir: true,
                tgt: true,
                rtc: true,
                addr_same: true,
                dir_ctx: 63,
                ..Default::default()
            };
            let (w0, w1) = r.pack();
            // As the top feeds it (JobRecord::pack's bits).
            uut.has_start.next = w0 & (1 << 60) != 0;
            uut.exc.next = w0 & (1 << 62) != 0;
            uut.off.next = w1 & (1 << 59) != 0;
            uut.tail.next = w1 & (1 << 50) != 0;
            uut.tail_type.next = ((w1 >> 48) & 3).into();
            assert!(simulate(&mut uut, 10));
            let n = r.words().len();
            assert_eq!(uut.words.val().index(), n, "{r:?}");
            seen[n] += 1;
        }
        assert!(seen.iter().all(|&c| c > 0), "{seen:?}");
    }
}

//! The `pft` trace module (docs/trace-format.md section 11, docs/trace-timing.md section 7)
//! in RustHDL: a predictor **front end** that turns each retiring instruction into a coder
//! job, a job buffer, a **sequencer** that walks a job one coder operation per cycle, the
//! range **coder**, and the output buffer and port shared with the SDC schemes.
//!
//! A job enters and leaves the buffer as a fixed-format record of two 64-bit words
//! ([`JobRecord`]): which phases it has (start, exception and its vector, direction, target,
//! missed-target coding, offset, virtual slot, tail escape) and their values. The buffer
//! stores it split, a 48-bit control entry and 0-2 address words ([`JobRecord::control`],
//! [`JobRecord::words`]; trace-timing.md 7, version 1.5). The sequencer expands it into the
//! operations of trace-format.md 11.5 in the model's order; [`JobRecord::ops`] is the same
//! expansion in software, which the block tests compare with the model's `CoderJob`s.

pub mod coder;
pub mod config;
pub mod drive;
pub mod front;
pub mod jobbuf;
pub mod seq;
pub mod tage;
pub mod top;

pub use config::PftHwConfig;
pub use drive::{compare_with_model, export_verilog};

use streamtrace_model::pft::{high_page_field, lost_code, CoderOp, Info, TargetContexts, LOST_LEN_BITS, OFFSET_WIDTHS};

/// Coder operation kinds on the sequencer -> coder interface.
pub const OP_SLOT: u64 = 0;
pub const OP_BIT: u64 = 1;
pub const OP_RAW: u64 = 2;
pub const OP_FLUSH: u64 = 3;
pub const OP_MARKER: u64 = 4;

/// Target-context selector of a job's target point (`tgt_sel`).
pub const TGT_RETURN: u8 = 0;
pub const TGT_RETURN_EMPTY: u8 = 1;
pub const TGT_INDIRECT: u8 = 2;
pub const TGT_INDIRECT_TAGGED: u8 = 3;
/// The base entry's confidence bit or the tagged entry's useful bit was set (11.4).
pub const TGT_INDIRECT_CONF: u8 = 4;
pub const TGT_INDIRECT_TAGGED_USEFUL: u8 = 5;

/// Escape types (trace-format.md 11.5).
pub const ESC_END: u8 = 0;
pub const ESC_SYNC: u8 = 1;
pub const ESC_EXCEPTION: u8 = 2;
pub const ESC_OVERFLOW: u8 = 3;

/// One coder job as the RTL carries it. Field positions (word 0 / word 1, bit ranges) are
/// in [`JobRecord::pack`]. An address field holds `A >> low` already cut to the width the
/// upper-bits decision implies (`32 - u - low` bits when `*_same`, else `32 - low`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JobRecord {
    /// Start: slot symbol with the UPPER_SAME decision `start_same`, then the address field.
    pub start: bool,
    pub start_same: bool,
    pub start_field: u32,
    /// EXCEPTION escape with offset `exc_offset`, then the vector as an address: the
    /// UPPER_SAME context bit `addr_same`, then `addr_field`.
    pub exc: bool,
    pub exc_offset: u16,
    /// Direction point: slot symbol, context `dir_ctx`.
    pub dir: bool,
    pub dir_hit: bool,
    pub dir_ctx: u8,
    /// Target point: slot symbol (no direction point) or context bit; context by `tgt_sel`.
    pub tgt: bool,
    pub tgt_hit: bool,
    pub tgt_sel: u8,
    /// Missed-target coding: ALT bit, RAS_TOP bit, RTC_HIT bit, RTC position (log2(rtc)
    /// context bits, most significant first).
    pub alt: bool,
    pub alt_hit: bool,
    pub ras_top: bool,
    pub ras_top_hit: bool,
    pub rtc: bool,
    pub rtc_hit: bool,
    pub rtc_pos: u8,
    /// The missed target as an offset: SAME_STATE bit `off_same` (interworking only), the
    /// class (three LEN bits) and the code `z`, which `addr_field` holds; the class is a
    /// function of `z`, so the record does not carry it. A target in the high page
    /// (`off_high`) is class 7 and `addr_field` holds its bits \[11:0\] instead (bit 0
    /// says Thumb, which sets the field's width).
    pub off: bool,
    pub off_same: bool,
    pub off_high: bool,
    /// The exception vector's UPPER_SAME decision.
    pub addr_same: bool,
    /// The vector's address field (`exc`), the offset's `z` (`off`), or an OVERFLOW job's
    /// lost count (neither: an instruction with an exception has no target point).
    pub addr_field: u32,
    /// Virtual slot: slot symbol, hit at the fixed probability 1/2.
    pub virt: bool,
    /// Tail escape (SYNC, END or OVERFLOW): type, offset, lost count (OVERFLOW, in
    /// `addr_field`), flush (SYNC, END), and the marker (SYNC).
    pub tail: bool,
    pub tail_type: u8,
    pub tail_offset: u16,
}

/// The class of an offset's zigzag code `z` (trace-format.md 11.5, *offset*): the first
/// `i` with `bitlen(z) <= OFFSET_WIDTHS[i]`.
pub fn offset_class(z: u32) -> usize {
    let n = 32 - z.leading_zeros();
    OFFSET_WIDTHS.iter().position(|&w| n <= w).unwrap_or(OFFSET_WIDTHS.len() - 1)
}

fn bit(w: u64, i: u32) -> bool {
    (w >> i) & 1 != 0
}

fn field(w: u64, lo: u32, n: u32) -> u64 {
    (w >> lo) & ((1u64 << n) - 1)
}

impl JobRecord {
    /// Word 0: `[31:0]` start_field, `[47:32]` exc_offset, `[52:48]` dir_ctx, `[55:53]`
    /// tgt_sel, `[59:56]` rtc_pos, or `[56]` off_high for a job with an offset (which has
    /// no RTC position), `[60]` start, `[61]` start_same, `[62]` exc, `[63]` virt.
    /// Word 1: `[31:0]` addr_field, `[47:32]` tail_offset, `[49:48]` tail_type, `[50]` tail,
    /// `[51]` dir, `[52]` dir_hit, `[53]` tgt, `[54]` tgt_hit, `[55]` ras_top,
    /// `[56]` ras_top_hit, `[57]` rtc, `[58]` rtc_hit, `[59]` off, `[60]` addr_same,
    /// `[61]` alt, `[62]` alt_hit, `[63]` off_same.
    pub fn pack(&self) -> (u64, u64) {
        let b = |v: bool, i: u32| (v as u64) << i;
        let w0 = self.start_field as u64
            | (self.exc_offset as u64) << 32
            | ((self.dir_ctx as u64) & 0x1F) << 48
            | ((self.tgt_sel as u64) & 7) << 53
            | ((self.rtc_pos as u64) & 0xF) << 56
            | b(self.off_high, 56)
            | b(self.start, 60)
            | b(self.start_same, 61)
            | b(self.exc, 62)
            | b(self.virt, 63);
        let w1 = self.addr_field as u64
            | (self.tail_offset as u64) << 32
            | ((self.tail_type as u64) & 3) << 48
            | b(self.tail, 50)
            | b(self.dir, 51)
            | b(self.dir_hit, 52)
            | b(self.tgt, 53)
            | b(self.tgt_hit, 54)
            | b(self.ras_top, 55)
            | b(self.ras_top_hit, 56)
            | b(self.rtc, 57)
            | b(self.rtc_hit, 58)
            | b(self.off, 59)
            | b(self.addr_same, 60)
            | b(self.alt, 61)
            | b(self.alt_hit, 62)
            | b(self.off_same, 63);
        (w0, w1)
    }

    pub fn unpack(w0: u64, w1: u64) -> JobRecord {
        let off = bit(w1, 59);
        JobRecord {
            start_field: field(w0, 0, 32) as u32,
            exc_offset: field(w0, 32, 16) as u16,
            dir_ctx: field(w0, 48, 5) as u8,
            tgt_sel: field(w0, 53, 3) as u8,
            rtc_pos: if off { 0 } else { field(w0, 56, 4) as u8 },
            off_high: off && bit(w0, 56),
            start: bit(w0, 60),
            start_same: bit(w0, 61),
            exc: bit(w0, 62),
            virt: bit(w0, 63),
            addr_field: field(w1, 0, 32) as u32,
            tail_offset: field(w1, 32, 16) as u16,
            tail_type: field(w1, 48, 2) as u8,
            tail: bit(w1, 50),
            dir: bit(w1, 51),
            dir_hit: bit(w1, 52),
            tgt: bit(w1, 53),
            tgt_hit: bit(w1, 54),
            ras_top: bit(w1, 55),
            ras_top_hit: bit(w1, 56),
            rtc: bit(w1, 57),
            rtc_hit: bit(w1, 58),
            off,
            addr_same: bit(w1, 60),
            alt: bit(w1, 61),
            alt_hit: bit(w1, 62),
            off_same: bit(w1, 63),
        }
    }

    /// Whether the job has a second address field (an exception vector, a missed target's
    /// offset code or an OVERFLOW count: at most one of them).
    pub fn has_second_word(&self) -> bool {
        self.exc || self.off || (self.tail && self.tail_type == ESC_OVERFLOW)
    }

    /// The 48-bit control entry the job buffer stores: `[15:0]` the one offset (the
    /// exception's when there is one, else the tail's), `[31:16]` word 0's bits 63:48,
    /// `[47:32]` word 1's bits 63:48.
    pub fn control(&self) -> u64 {
        let (w0, w1) = self.pack();
        let offset = if self.exc { self.exc_offset } else { self.tail_offset };
        offset as u64 | (w0 >> 48) << 16 | (w1 >> 48) << 32
    }

    /// The address words, in the order the buffer stores them: the start field, then the
    /// second field.
    pub fn words(&self) -> Vec<u32> {
        let mut w = Vec::with_capacity(2);
        if self.start {
            w.push(self.start_field);
        }
        if self.has_second_word() {
            w.push(self.addr_field);
        }
        w
    }

    /// The record a control entry and its words give back (`words` as many as the entry
    /// has). Equal to the record pushed when that record's unused fields are 0 and a job
    /// with an exception has a tail offset of 0 (the front end's and the model's are).
    pub fn join(control: u64, words: &[u32]) -> JobRecord {
        let offset = field(control, 0, 16);
        let mut r = JobRecord::unpack((control >> 16 & 0xFFFF) << 48, (control >> 32 & 0xFFFF) << 48);
        if r.exc {
            r.exc_offset = offset as u16;
        } else {
            r.tail_offset = offset as u16;
        }
        let mut w = words.iter().copied();
        if r.start {
            r.start_field = w.next().unwrap_or(0);
        }
        if r.has_second_word() {
            r.addr_field = w.next().unwrap_or(0);
        }
        r
    }

    /// The coder operations of this job, in the order the sequencer issues them (the
    /// `info` of each operation is not carried: it only feeds statistics).
    pub fn ops(&self, h: &PftHwConfig) -> Vec<CoderOp> {
        let info = Info::Address;
        let mut ops = Vec::new();
        let target_ctx = |which: usize| (h.direction_contexts + which) as u16;
        let raw_field = |ops: &mut Vec<CoderOp>, value: u32, n: u32| {
            if n > 16 {
                ops.push(CoderOp::Raw { value: value >> 16, bits: (n - 16) as u8, info });
                ops.push(CoderOp::Raw { value: value & 0xFFFF, bits: 16, info });
            } else {
                ops.push(CoderOp::Raw { value: value & ((1 << n) - 1), bits: n as u8, info });
            }
        };
        let escape = |ops: &mut Vec<CoderOp>, kind: u8, offset: u16| {
            ops.push(CoderOp::Slot { escape: true, hit: false, ctx: None, info });
            ops.push(CoderOp::Raw { value: kind as u32, bits: 2, info });
            ops.push(CoderOp::Raw { value: offset as u32, bits: 16, info });
        };
        let upper = target_ctx(TargetContexts::UPPER_SAME);
        if self.start {
            ops.push(CoderOp::Slot { escape: false, hit: self.start_same, ctx: Some(upper), info });
            raw_field(&mut ops, self.start_field, h.address_bits(self.start_same));
        }
        if self.exc {
            escape(&mut ops, ESC_EXCEPTION, self.exc_offset);
        }
        if self.dir {
            ops.push(CoderOp::Slot { escape: false, hit: self.dir_hit, ctx: Some(self.dir_ctx as u16), info });
        }
        if self.tgt {
            let ctx = target_ctx(match self.tgt_sel {
                TGT_RETURN => TargetContexts::RETURN,
                TGT_RETURN_EMPTY => TargetContexts::RETURN_EMPTY,
                TGT_INDIRECT => TargetContexts::INDIRECT,
                TGT_INDIRECT_TAGGED => TargetContexts::INDIRECT_TAGGED,
                TGT_INDIRECT_CONF => TargetContexts::INDIRECT_CONF,
                _ => TargetContexts::INDIRECT_TAGGED_USEFUL,
            });
            if self.dir {
                ops.push(CoderOp::Bit { hit: self.tgt_hit, ctx, info });
            } else {
                ops.push(CoderOp::Slot { escape: false, hit: self.tgt_hit, ctx: Some(ctx), info });
            }
        }
        if self.alt {
            ops.push(CoderOp::Bit { hit: self.alt_hit, ctx: target_ctx(TargetContexts::ALT), info });
        }
        if self.ras_top {
            ops.push(CoderOp::Bit { hit: self.ras_top_hit, ctx: target_ctx(TargetContexts::RAS_TOP), info });
        }
        if self.rtc {
            ops.push(CoderOp::Bit { hit: self.rtc_hit, ctx: target_ctx(TargetContexts::RTC_HIT), info });
            if self.rtc_hit {
                // Most significant bit first, bit j with RTC_INDEX_j; a hit is a 0.
                let k = h.rtc_pos_bits;
                for j in 0..k {
                    let one = (self.rtc_pos >> (k - 1 - j)) & 1 != 0;
                    ops.push(CoderOp::Bit { hit: !one, ctx: target_ctx(TargetContexts::RTC_INDEX + j as usize), info });
                }
            }
        }
        if self.exc {
            ops.push(CoderOp::Bit { hit: self.addr_same, ctx: upper, info });
            raw_field(&mut ops, self.addr_field, h.address_bits(self.addr_same));
        }
        if self.off {
            if h.low == 0 {
                ops.push(CoderOp::Bit { hit: self.off_same, ctx: target_ctx(TargetContexts::SAME_STATE), info });
            }
            // The class tree: LEN_1, LEN_(2 + c[2]), LEN_(4 + 2 c[2] + c[1]); a hit is a 0.
            let class = if self.off_high { OFFSET_WIDTHS.len() - 1 } else { offset_class(self.addr_field) };
            let mut node = 1;
            for b in (0..3).rev() {
                let one = (class >> b) & 1 != 0;
                ops.push(CoderOp::Bit { hit: !one, ctx: target_ctx(TargetContexts::LEN + node - 1), info });
                node = 2 * node + one as usize;
            }
            if class == OFFSET_WIDTHS.len() - 1 {
                ops.push(CoderOp::Raw { value: self.off_high as u32, bits: 1, info });
            }
            if self.off_high {
                let (value, bits) = high_page_field(self.addr_field);
                ops.push(CoderOp::Raw { value, bits: bits as u8, info });
            } else {
                raw_field(&mut ops, self.addr_field, OFFSET_WIDTHS[class]);
            }
        }
        if self.virt {
            ops.push(CoderOp::Slot { escape: false, hit: true, ctx: None, info });
        }
        if self.tail {
            escape(&mut ops, self.tail_type, self.tail_offset);
            // OVERFLOW: the count and nothing else (trace-format.md 11.7); END a flush; SYNC
            // a flush and the marker.
            if self.tail_type == ESC_OVERFLOW {
                let (below, rest) = lost_code(self.addr_field as u64);
                ops.push(CoderOp::Raw { value: below, bits: LOST_LEN_BITS as u8, info });
                if below > 0 {
                    raw_field(&mut ops, rest, below);
                }
            } else {
                ops.push(CoderOp::Flush);
            }
            if self.tail_type == ESC_SYNC {
                ops.push(CoderOp::Marker);
            }
        }
        ops
    }
}

/// `ops` without the statistics-only `info`, for comparing with a model job.
pub fn strip_info(ops: &[CoderOp]) -> Vec<CoderOp> {
    ops.iter()
        .map(|&op| match op {
            CoderOp::Slot { escape, hit, ctx, .. } => CoderOp::Slot { escape, hit: hit && !escape, ctx, info: Info::Address },
            CoderOp::Bit { hit, ctx, .. } => CoderOp::Bit { hit, ctx, info: Info::Address },
            CoderOp::Raw { value, bits, .. } => CoderOp::Raw { value, bits, info: Info::Address },
            other => other,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_pack_and_unpack() {
        let r = JobRecord {
            start: true,
            start_same: false,
            start_field: 0x0200_01f4,
            exc: true,
            exc_offset: 0xBEEF,
            dir: true,
            dir_hit: true,
            dir_ctx: 25,
            tgt: true,
            tgt_hit: false,
            tgt_sel: TGT_INDIRECT_TAGGED_USEFUL,
            alt: true,
            alt_hit: false,
            ras_top: true,
            ras_top_hit: false,
            rtc: true,
            rtc_hit: true,
            rtc_pos: 15,
            off: false,
            off_same: true,
            off_high: false,
            addr_same: true,
            addr_field: 0xFFFF_FFFF,
            virt: true,
            tail: true,
            tail_type: ESC_OVERFLOW,
            tail_offset: 0x1234,
        };
        let (w0, w1) = r.pack();
        assert_eq!(JobRecord::unpack(w0, w1), r);
        let r2 = JobRecord { alt_hit: true, off_same: false, addr_same: false, ..r };
        let (v0, v1) = r2.pack();
        assert_eq!((v0, v1 ^ w1), (w0, (1 << 62) | (1 << 63) | (1 << 60)));
        assert_eq!(JobRecord::unpack(v0, v1), r2);
        // An offset has no RTC position: its bit 56 is the high-page flag.
        let r3 = JobRecord { rtc_hit: false, rtc_pos: 0, off: true, off_high: true, addr_field: 0xFE0, ..r };
        let (u0, u1) = r3.pack();
        assert_eq!(field(u0, 56, 4), 1);
        assert_eq!(JobRecord::unpack(u0, u1), r3);
        assert!(!JobRecord::unpack(u0, u1 & !(1 << 59)).off_high, "the flag is read only with an offset");
    }

    #[test]
    fn records_split_into_control_and_words_and_join_again() {
        let full = JobRecord {
            start: true,
            start_field: 0x0200_01f4,
            exc: true,
            exc_offset: 0xBEEF,
            addr_field: 0xFFFF_0008,
            addr_same: true,
            dir: true,
            dir_ctx: 25,
            tail: true,
            tail_type: ESC_SYNC,
            ..Default::default()
        };
        assert_eq!(full.words(), vec![0x0200_01f4, 0xFFFF_0008]);
        assert_eq!(JobRecord::join(full.control(), &full.words()), full);
        assert!(full.control() < 1 << 48);
        // A tail alone keeps its offset; an OVERFLOW's count is its one word.
        let overflow = JobRecord { tail: true, tail_type: ESC_OVERFLOW, tail_offset: 77, addr_field: 5000, ..Default::default() };
        assert_eq!(overflow.words(), vec![5000]);
        assert_eq!(JobRecord::join(overflow.control(), &overflow.words()), overflow);
        let miss = JobRecord { tgt: true, off: true, off_same: true, addr_field: 0x1234, virt: true, ..Default::default() };
        assert_eq!(JobRecord::join(miss.control(), &miss.words()), miss);
        let plain = JobRecord { dir: true, dir_hit: true, dir_ctx: 5, ..Default::default() };
        assert_eq!((plain.words().len(), JobRecord::join(plain.control(), &[])), (0, plain));
        // The fields a job does not use are not stored (they come back as 0).
        let stray = JobRecord { start_field: 9, addr_field: 9, exc_offset: 3, ..plain };
        assert_eq!(JobRecord::join(stray.control(), &stray.words()), plain);
    }

    #[test]
    fn offset_classes_match_the_model() {
        use streamtrace_model::pft::offset_code;
        for (a, t) in [(0x8000u32, 0x8004u32), (0x8000, 0x7ff0), (0x8001, 0x9000), (0x0001_0424, 0xffff_0fe0), (0, 0xffff_fffc)] {
            for table in [false, true] {
                let (z, c) = offset_code(a, t, table);
                assert_eq!(offset_class(z), c, "{a:x} -> {t:x}");
            }
        }
        for (z, c) in [(0, 0), (7, 0), (8, 1), (0x1FFFF, 6), (0x20000, 7), (u32::MAX, 7)] {
            assert_eq!(offset_class(z), c, "z = {z:x}");
        }
    }
}

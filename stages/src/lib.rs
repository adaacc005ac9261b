//! Host-side trace stages for streamtrace.
//!
//! Specifications live in `/work/shared/reference/algorithms.md` (cited below as
//! "algorithms.md §N"):
//!
//! * [`din`]: dinero III `din` and Dinero IV extended `xdin` text traces (§1).
//! * [`pdats`]: PDATS, Johnson & Ha 1994 (§2).
//! * [`pdats2`]: PDATS II, Johnson 1999 (§3).
//! * [`header`]: the 16-byte file header shared by PDATS and PDATS II (§2.5), and the
//!   decode error type with byte offsets.
//! * [`laplace`]: Laplace raw and SAD-reduced text records and their difference
//!   encodings (§4).
//! * [`sad`]: SAD lossy reduction with page splitting, blocking and dirty propagation (§5).
//! * [`paging`]: LRU and OPT page-replacement simulators that check SAD's guarantee.
//! * [`wet`]: Whole Execution Traces of core-model runs, two-tier compression and queries
//!   (§6; docs/wet.md).
//! * [`citcat`]: CITCAT, exact instruction traces rebuilt from a system-mode run's
//!   cache-filtered bus trace (§7; docs/citcat.md).
//!
//! All decoders of binary input are streaming (`std::io::Read`), never panic on
//! untrusted bytes, and report truncated or corrupt input with the byte offset; the text
//! readers (`din`, `laplace`) report the line number.

mod bytes;
pub mod citcat;
pub mod din;
pub mod hash;
pub mod header;
pub mod laplace;
pub mod paging;
pub mod pdats;
pub mod pdats2;
pub mod sad;
pub mod wet;

pub use header::{DecodeError, EncodeError, FileHeader};

/// One memory reference, the internal model of algorithms.md §1:
/// `kind` is the dinero label (0 read, 1 write, 2 ifetch, 3 misc escape, 4 flush escape);
/// `addr` is the exact address (at most 32 bits unless 64-bit mode is configured).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ref {
    /// Dinero label, 0..=4.
    pub kind: u8,
    /// Exact address, never masked.
    pub addr: u64,
}

impl Ref {
    /// Convenience constructor.
    pub const fn new(kind: u8, addr: u64) -> Self {
        Ref { kind, addr }
    }
}

/// Dinero label: data read.
pub const READ: u8 = 0;
/// Dinero label: data write.
pub const WRITE: u8 = 1;
/// Dinero label: instruction fetch.
pub const IFETCH: u8 = 2;
/// Dinero label: escape, unknown access type (Dinero IV `D4XMISC`).
pub const MISC: u8 = 3;
/// Dinero label: escape, cache flush.
pub const FLUSH: u8 = 4;

/// Address arithmetic helpers shared by the codecs (algorithms.md §0 conventions:
/// wrapping 32-bit arithmetic, `s32` reinterpretation; the 64-bit mode uses 64 bits).
pub(crate) mod arith {
    /// Signed difference `a - b` reinterpreted at the address width.
    pub fn sdiff(a: u64, b: u64, wide: bool) -> i64 {
        if wide {
            a.wrapping_sub(b) as i64
        } else {
            (a.wrapping_sub(b) as u32) as i32 as i64
        }
    }

    /// `base + off` wrapped at the address width.
    pub fn add(base: u64, off: i64, wide: bool) -> u64 {
        let r = base.wrapping_add(off as u64);
        if wide {
            r
        } else {
            r & 0xffff_ffff
        }
    }

    /// `fits(v, n)` of algorithms.md §0.
    pub fn fits(v: i64, n: u32) -> bool {
        if n >= 8 {
            return true;
        }
        let lim = 1i64 << (8 * n - 1);
        -lim <= v && v < lim
    }
}

//! Program images: the memory the decoder reads instructions from.
//!
//! [`ProgramImage`] is the read interface; [`MemoryImage`] is a sparse set of byte
//! segments; [`ElfImage`](crate::elf::ElfImage) loads one from an ELF executable.

use std::sync::Arc;

use crate::classify::{classify_arm, classify_thumb, is_thumb_bl_suffix, Classified};
use crate::error::ImageError;

/// Read-only view of a program's memory (little-endian).
pub trait ProgramImage {
    /// The little-endian word at `addr` (any alignment); `None` if any of its bytes is unmapped.
    fn read_u32(&self, addr: u32) -> Option<u32>;

    /// The little-endian halfword at `addr` (any alignment); `None` if any byte is unmapped.
    fn read_u16(&self, addr: u32) -> Option<u16>;

    /// Classify the instruction at the interworking address `iw_addr`: bit 0 set means a
    /// Thumb instruction at `iw_addr & !1`, clear means an ARM instruction at `iw_addr`.
    /// `None` if the instruction is unmapped. For a Thumb BL/BLX suffix the halfword at
    /// `pc - 2` is passed to [`classify_thumb`] as `prev_hw` (when readable).
    #[inline]
    fn classify(&self, iw_addr: u32) -> Option<Classified> {
        if iw_addr & 1 != 0 {
            let pc = iw_addr & !1;
            let hw = self.read_u16(pc)?;
            // prev_hw only matters for a suffix; skip the second lookup otherwise.
            let prev = if is_thumb_bl_suffix(hw) {
                self.read_u16(pc.wrapping_sub(2))
            } else {
                None
            };
            Some(classify_thumb(hw, prev, pc))
        } else {
            let word = self.read_u32(iw_addr)?;
            Some(classify_arm(word, iw_addr))
        }
    }
}

macro_rules! forward_image {
    ($($ty:ty),*) => {$(
        impl<T: ProgramImage + ?Sized> ProgramImage for $ty {
            #[inline]
            fn read_u32(&self, addr: u32) -> Option<u32> {
                (**self).read_u32(addr)
            }
            #[inline]
            fn read_u16(&self, addr: u32) -> Option<u16> {
                (**self).read_u16(addr)
            }
            #[inline]
            fn classify(&self, iw_addr: u32) -> Option<Classified> {
                (**self).classify(iw_addr)
            }
        }
    )*};
}
forward_image!(&T, Box<T>, Arc<T>);

/// One mapped range of a [`MemoryImage`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    base: u32,
    bytes: Vec<u8>,
}

impl Segment {
    /// First address of the segment.
    #[inline]
    pub fn base(&self) -> u32 {
        self.base
    }

    /// Number of bytes (never 0).
    #[inline]
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Always false: empty segments are never stored.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// One past the last address, as u64 (a segment may end exactly at 2^32).
    #[inline]
    pub fn end(&self) -> u64 {
        self.base as u64 + self.bytes.len() as u64
    }

    #[inline]
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    #[inline]
    pub fn contains(&self, addr: u32) -> bool {
        addr >= self.base && ((addr - self.base) as usize) < self.bytes.len()
    }
}

/// A sparse little-endian memory: non-overlapping segments sorted by base address.
///
/// Lookups are a binary search over the segments (no allocation). Reads that straddle
/// two adjacent segments succeed; reads that touch an unmapped byte, or run past
/// address `0xFFFF_FFFF`, return `None` (addresses do not wrap).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemoryImage {
    segs: Vec<Segment>,
}

impl MemoryImage {
    pub fn new() -> MemoryImage {
        MemoryImage::default()
    }

    /// Map `bytes` at `base`. Empty segments are ignored. Fails if the segment would
    /// overlap an existing one or run past the 32-bit address space.
    pub fn add_segment(&mut self, base: u32, bytes: impl Into<Vec<u8>>) -> Result<(), ImageError> {
        let bytes = bytes.into();
        if bytes.is_empty() {
            return Ok(());
        }
        let len = bytes.len() as u64;
        if base as u64 + len > 1u64 << 32 {
            return Err(ImageError::SegmentOutOfRange { base, len });
        }
        let end = base as u64 + len;
        // First segment whose base is above ours; the one before it may overlap from below.
        let idx = self.segs.partition_point(|s| s.base <= base);
        let overlapping = [idx.checked_sub(1), Some(idx)]
            .into_iter()
            .flatten()
            .filter_map(|i| self.segs.get(i))
            .find(|s| (s.base as u64) < end && s.end() > base as u64);
        if let Some(other) = overlapping {
            return Err(ImageError::Overlap {
                base,
                len,
                other_base: other.base,
                other_len: other.len() as u64,
            });
        }
        self.segs.insert(idx, Segment { base, bytes });
        Ok(())
    }

    /// Builder form of [`add_segment`](Self::add_segment).
    pub fn with_segment(
        mut self,
        base: u32,
        bytes: impl Into<Vec<u8>>,
    ) -> Result<MemoryImage, ImageError> {
        self.add_segment(base, bytes)?;
        Ok(self)
    }

    /// Map `len` zero bytes at `base`.
    pub fn add_zeroed(&mut self, base: u32, len: usize) -> Result<(), ImageError> {
        if base as u64 + len as u64 > 1u64 << 32 {
            return Err(ImageError::SegmentOutOfRange {
                base,
                len: len as u64,
            });
        }
        self.add_segment(base, vec![0u8; len])
    }

    /// The segments, sorted by base address.
    #[inline]
    pub fn segments(&self) -> &[Segment] {
        &self.segs
    }

    /// Total number of mapped bytes.
    pub fn mapped_bytes(&self) -> u64 {
        self.segs.iter().map(|s| s.len() as u64).sum()
    }

    /// Index of the segment containing `addr`.
    #[inline]
    fn seg_index(&self, addr: u32) -> Option<usize> {
        let i = self.segs.partition_point(|s| s.base <= addr);
        let i = i.checked_sub(1)?;
        if self.segs[i].contains(addr) {
            Some(i)
        } else {
            None
        }
    }

    /// The segment containing `addr`.
    #[inline]
    pub fn segment_at(&self, addr: u32) -> Option<&Segment> {
        self.seg_index(addr).map(|i| &self.segs[i])
    }

    /// True if the byte at `addr` is mapped.
    #[inline]
    pub fn is_mapped(&self, addr: u32) -> bool {
        self.seg_index(addr).is_some()
    }

    #[inline]
    pub fn read_u8(&self, addr: u32) -> Option<u8> {
        let s = self.segment_at(addr)?;
        s.bytes.get((addr - s.base) as usize).copied()
    }

    /// `len` bytes at `addr` if they all lie in one segment.
    #[inline]
    pub fn slice(&self, addr: u32, len: usize) -> Option<&[u8]> {
        let s = self.segment_at(addr)?;
        let off = (addr - s.base) as usize;
        s.bytes.get(off..off.checked_add(len)?)
    }

    /// Fill `buf` from `addr`; false (and `buf` unspecified) if any byte is unmapped.
    pub fn read_into(&self, addr: u32, buf: &mut [u8]) -> bool {
        if let Some(src) = self.slice(addr, buf.len()) {
            buf.copy_from_slice(src);
            return true;
        }
        self.read_slow(addr, buf)
    }

    /// Byte-by-byte read, for accesses that straddle segments.
    #[cold]
    fn read_slow(&self, addr: u32, buf: &mut [u8]) -> bool {
        for (i, b) in buf.iter_mut().enumerate() {
            let Some(a) = u32::try_from(i).ok().and_then(|i| addr.checked_add(i)) else {
                return false;
            };
            match self.read_u8(a) {
                Some(v) => *b = v,
                None => return false,
            }
        }
        true
    }

    #[inline]
    fn read_array<const N: usize>(&self, addr: u32) -> Option<[u8; N]> {
        if let Some(i) = self.seg_index(addr) {
            let s = &self.segs[i];
            let off = (addr - s.base) as usize;
            if let Some(src) = s.bytes.get(off..off + N) {
                let mut out = [0u8; N];
                out.copy_from_slice(src);
                return Some(out);
            }
            let mut out = [0u8; N];
            return self.read_slow(addr, &mut out).then_some(out);
        }
        None
    }

    /// Overwrite mapped bytes at `addr`. Fails, writing nothing, if any byte is unmapped.
    pub fn write_bytes(&mut self, addr: u32, data: &[u8]) -> Result<(), ImageError> {
        let unmapped = || ImageError::Unmapped {
            addr,
            len: data.len(),
        };
        if data.is_empty() {
            return Ok(());
        }
        if let Some(i) = self.seg_index(addr) {
            let s = &mut self.segs[i];
            let off = (addr - s.base) as usize;
            let range = off..off.saturating_add(data.len());
            if let Some(dst) = s.bytes.get_mut(range) {
                dst.copy_from_slice(data);
                return Ok(());
            }
        }
        // Straddling (or unmapped): check every byte first so a failure writes nothing.
        let last = u32::try_from(data.len() - 1)
            .ok()
            .and_then(|n| addr.checked_add(n))
            .ok_or_else(unmapped)?;
        if !(addr..=last).all(|a| self.is_mapped(a)) {
            return Err(unmapped());
        }
        for (a, &v) in (addr..=last).zip(data) {
            if let Some(i) = self.seg_index(a) {
                let s = &mut self.segs[i];
                s.bytes[(a - s.base) as usize] = v;
            }
        }
        Ok(())
    }

    /// Overwrite the little-endian word at `addr` (must be mapped).
    pub fn write_u32(&mut self, addr: u32, value: u32) -> Result<(), ImageError> {
        self.write_bytes(addr, &value.to_le_bytes())
    }

    /// Overwrite the little-endian halfword at `addr` (must be mapped).
    pub fn write_u16(&mut self, addr: u32, value: u16) -> Result<(), ImageError> {
        self.write_bytes(addr, &value.to_le_bytes())
    }
}

impl ProgramImage for MemoryImage {
    #[inline]
    fn read_u32(&self, addr: u32) -> Option<u32> {
        self.read_array::<4>(addr).map(u32::from_le_bytes)
    }

    #[inline]
    fn read_u16(&self, addr: u32) -> Option<u16> {
        self.read_array::<2>(addr).map(u16::from_le_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use streamtrace_model::BranchClass;

    fn image() -> MemoryImage {
        let mut m = MemoryImage::new();
        m.add_segment(0x1000, vec![0x11, 0x22, 0x33, 0x44, 0x55, 0x66])
            .unwrap();
        m.add_segment(0x1006, vec![0x77, 0x88]).unwrap(); // adjacent
        m.add_segment(0x0100, vec![1, 2, 3, 4]).unwrap(); // inserted before
        m
    }

    #[test]
    fn sorted_and_reads() {
        let m = image();
        let bases: Vec<u32> = m.segments().iter().map(|s| s.base()).collect();
        assert_eq!(bases, vec![0x100, 0x1000, 0x1006]);
        assert_eq!(m.read_u32(0x1000), Some(0x4433_2211));
        assert_eq!(m.read_u32(0x1001), Some(0x5544_3322));
        assert_eq!(m.read_u16(0x1004), Some(0x6655));
        // straddles the two adjacent segments
        assert_eq!(m.read_u32(0x1004), Some(0x8877_6655));
        assert_eq!(m.read_u16(0x1005), Some(0x7766));
        // runs off the end
        assert_eq!(m.read_u32(0x1005), None);
        assert_eq!(m.read_u16(0x1007), None);
        assert_eq!(m.read_u32(0x0FFF), None);
        assert_eq!(m.read_u32(0x100), Some(0x0403_0201));
        assert_eq!(m.read_u32(0x101), None);
        assert_eq!(m.read_u32(0), None);
        assert_eq!(m.read_u32(u32::MAX), None);
        assert_eq!(m.read_u8(0x1007), Some(0x88));
        assert_eq!(m.slice(0x1004, 2), Some(&[0x55, 0x66][..]));
        assert_eq!(m.slice(0x1004, 3), None);
        let mut buf = [0u8; 4];
        assert!(m.read_into(0x1004, &mut buf));
        assert_eq!(buf, [0x55, 0x66, 0x77, 0x88]);
        assert!(!m.read_into(0x1005, &mut buf));
        assert_eq!(m.mapped_bytes(), 12);
    }

    #[test]
    fn overlaps_rejected() {
        let mut m = image();
        for (base, len) in [
            (0x0FFC, 5),
            (0x1007, 1),
            (0x1002, 1),
            (0x00F0, 0x20),
            (0x0, 0x2000),
        ] {
            let err = m.add_segment(base, vec![0u8; len]).unwrap_err();
            assert!(
                matches!(err, ImageError::Overlap { .. }),
                "{base:#x}+{len}: {err}"
            );
        }
        // touching is fine
        m.add_segment(0x0FFC, vec![0u8; 4]).unwrap();
        m.add_segment(0x1008, vec![0u8; 4]).unwrap();
        m.add_segment(0x104, vec![9u8]).unwrap();
        assert_eq!(m.segments().len(), 6);
        // empty segments are ignored even where they would overlap
        m.add_segment(0x1000, Vec::new()).unwrap();
        assert_eq!(m.segments().len(), 6);
    }

    #[test]
    fn address_space_end() {
        let mut m = MemoryImage::new();
        m.add_segment(0xFFFF_FFFC, vec![1, 2, 3, 4]).unwrap();
        assert_eq!(m.read_u32(0xFFFF_FFFC), Some(0x0403_0201));
        assert_eq!(m.read_u32(0xFFFF_FFFE), None); // would wrap
        assert_eq!(m.read_u16(0xFFFF_FFFE), Some(0x0403));
        assert!(matches!(
            m.add_segment(0xFFFF_FFFE, vec![0; 3]),
            Err(ImageError::SegmentOutOfRange { .. })
        ));
        assert!(matches!(
            m.add_zeroed(0xFFFF_0000, 0x1_0001),
            Err(ImageError::SegmentOutOfRange { .. })
        ));
        m.add_segment(0, vec![5, 6]).unwrap();
        assert_eq!(m.read_u32(0xFFFF_FFFE), None); // no wrap into address 0
    }

    #[test]
    fn writes() {
        let mut m = image();
        m.write_u32(0x1000, 0xE12F_FF1E).unwrap();
        assert_eq!(m.read_u32(0x1000), Some(0xE12F_FF1E));
        m.write_u16(0x1005, 0xBEEF).unwrap(); // straddling
        assert_eq!(m.read_u16(0x1005), Some(0xBEEF));
        assert_eq!(m.read_u8(0x1006), Some(0xBE));
        let before = m.clone();
        assert!(matches!(
            m.write_u32(0x1006, 1),
            Err(ImageError::Unmapped {
                addr: 0x1006,
                len: 4
            })
        ));
        assert!(m.write_u16(u32::MAX, 1).is_err());
        assert_eq!(m, before, "failed writes must not modify the image");
        m.write_bytes(0x2000, &[]).unwrap();
        let mut z = MemoryImage::new();
        z.add_zeroed(0x8000, 16).unwrap();
        assert_eq!(z.read_u32(0x800C), Some(0));
        assert_eq!(z.read_u32(0x800D), None);
    }

    #[test]
    fn classify_via_image() {
        let mut m = MemoryImage::new();
        m.add_zeroed(0x8000, 0x20).unwrap();
        m.write_u32(0x8000, 0xE12F_FF1E).unwrap(); // bx lr
        m.write_u16(0x8004, 0xF000).unwrap(); // bl prefix (+0)
        m.write_u16(0x8006, 0xF801).unwrap(); // bl suffix (+2)
        m.write_u16(0x8008, 0xF801).unwrap(); // suffix preceded by a suffix
        assert_eq!(m.classify(0x8000).unwrap().class, BranchClass::Return);
        let c = m.classify(0x8007).unwrap();
        assert_eq!(
            c,
            Classified {
                class: BranchClass::DirectUncond,
                target: Some(0x800A | 1)
            }
        );
        assert_eq!(
            m.classify(0x8009).unwrap().class,
            BranchClass::IndirectUncond
        );
        assert_eq!(m.classify(0x8005).unwrap(), Classified::NONE);
        assert_eq!(m.classify(0x9000), None);
        assert_eq!(m.classify(0x801E), None); // ARM word runs off the end
        assert!(m.classify(0x801F).is_some()); // Thumb halfword fits
                                               // suffix at the very start of a segment: no readable prefix
        let mut s = MemoryImage::new();
        s.add_segment(0, 0xF801u16.to_le_bytes().to_vec()).unwrap();
        assert_eq!(s.classify(1).unwrap().class, BranchClass::IndirectUncond);
        // forwarding impls
        let r: &dyn ProgramImage = &m;
        assert_eq!(r.classify(0x8007), m.classify(0x8007));
        let a = Arc::new(m.clone());
        assert_eq!(a.read_u32(0x8000), m.read_u32(0x8000));
    }
}

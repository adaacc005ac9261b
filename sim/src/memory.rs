//! Sparse, paged, little-endian memory of the simulated machine.
//!
//! Pages are 4 KiB and allocated on first write inside an allowed region (ELF segments,
//! heap, stack); reads of an allowed page that was never written return zeros. Accesses
//! outside every region are faults, reported with the address.
//!
//! The machine decodes each instruction once (`crate::decoded`, a cache the memory owns) and
//! marks the pages it decoded from as code pages; every change to what a code page reads
//! (stores, bulk writes, mapping and unmapping) drops the stale decodings as it happens
//! (self-modifying code, loaders, DMA).

use streamtrace_isa::ProgramImage;

use crate::decoded::DecodedCache;

pub const PAGE_BITS: u32 = 12;
pub const PAGE_SIZE: usize = 1 << PAGE_BITS;
const PAGES: usize = 1 << (32 - PAGE_BITS);

type Page = [u8; PAGE_SIZE];

/// An access to an address no region covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemFault {
    pub addr: u32,
    pub write: bool,
}

/// Page numbers that `[base, base + len)` touches (none when `len` is 0).
fn pages_of(base: u32, len: u64) -> std::ops::Range<u64> {
    if len == 0 {
        return 0..0;
    }
    let first = (base >> PAGE_BITS) as u64;
    let last = ((base as u64 + len - 1) >> PAGE_BITS).min(PAGES as u64 - 1);
    first..last + 1
}

/// A bit per page.
type PageBits = [u64; PAGES / 64];

// The tables are fixed-size arrays: an index derived from a 32-bit address by a shift is
// always in range, so accesses need no bounds check.
pub struct Memory {
    pages: Box<[Option<Box<Page>>; PAGES]>,
    /// One bit per page: may be allocated on demand.
    allowed: Box<PageBits>,
    /// One bit per page the machine holds decoded instructions from.
    code_pages: Box<PageBits>,
    /// The instructions decoded from this memory (empty in a new memory, so a machine given
    /// a fresh memory forgets what it decoded from the old one).
    pub(crate) decoded: DecodedCache,
}

impl Default for Memory {
    fn default() -> Self {
        Self::new()
    }
}

impl Memory {
    pub fn new() -> Self {
        let mut pages = Vec::with_capacity(PAGES);
        pages.resize_with(PAGES, || None);
        let bits = || vec![0u64; PAGES / 64].into_boxed_slice().try_into().expect("PAGES / 64 words");
        Memory {
            pages: pages.into_boxed_slice().try_into().expect("PAGES pages"),
            allowed: bits(),
            code_pages: bits(),
            decoded: DecodedCache::new(),
        }
    }

    /// Allow `[base, base + len)` (rounded out to pages).
    pub fn map_region(&mut self, base: u32, len: u64) {
        for p in pages_of(base, len) {
            self.allowed[(p / 64) as usize] |= 1 << (p % 64);
            // A fetch there no longer faults (and a Thumb BL suffix sees its prefix).
            self.note_page_change(p as usize);
        }
    }

    /// Disallow `[base, base + len)` (rounded out to pages) and drop its contents: a later
    /// [`Memory::map_region`] of the range reads zeros again (Linux `munmap`).
    pub fn unmap_region(&mut self, base: u32, len: u64) {
        for p in pages_of(base, len) {
            self.allowed[(p / 64) as usize] &= !(1 << (p % 64));
            self.pages[p as usize] = None;
            self.note_page_change(p as usize);
        }
    }

    /// Mark the page holding `addr` as one the machine decoded instructions from.
    pub(crate) fn mark_code_page(&mut self, addr: u32) {
        let p = (addr >> PAGE_BITS) as usize;
        self.code_pages[p / 64] |= 1 << (p % 64);
    }

    #[inline(always)]
    fn is_code_page(&self, page: usize) -> bool {
        self.code_pages[page / 64] >> (page % 64) & 1 == 1
    }

    /// A store of `len` bytes at `addr` (within one page): drop what it overwrites.
    #[inline(always)]
    fn note_store(&mut self, addr: u32, len: u32) {
        if self.is_code_page((addr >> PAGE_BITS) as usize) {
            self.decoded.drop_range(addr, len as u64);
        }
    }

    fn note_page_change(&mut self, page: usize) {
        if self.is_code_page(page) {
            self.decoded.drop_range((page as u32) << PAGE_BITS, PAGE_SIZE as u64);
        }
    }

    #[inline]
    fn is_allowed(&self, page: usize) -> bool {
        self.allowed[page / 64] >> (page % 64) & 1 == 1
    }

    /// Is `addr` inside an allowed region?
    pub fn is_mapped(&self, addr: u32) -> bool {
        self.is_allowed((addr >> PAGE_BITS) as usize)
    }

    #[inline]
    fn page_mut(&mut self, addr: u32) -> Result<&mut Page, MemFault> {
        let idx = (addr >> PAGE_BITS) as usize;
        if self.pages[idx].is_none() {
            if !self.is_allowed(idx) {
                return Err(MemFault { addr, write: true });
            }
            self.pages[idx] = Some(Box::new([0u8; PAGE_SIZE]));
        }
        Ok(self.pages[idx].as_mut().expect("allocated above"))
    }

    #[inline]
    fn byte(&self, addr: u32) -> Result<u8, MemFault> {
        let idx = (addr >> PAGE_BITS) as usize;
        match &self.pages[idx] {
            Some(p) => Ok(p[addr as usize & (PAGE_SIZE - 1)]),
            None if self.is_allowed(idx) => Ok(0),
            None => Err(MemFault { addr, write: false }),
        }
    }

    #[inline]
    pub fn read8(&self, addr: u32) -> Result<u8, MemFault> {
        self.byte(addr)
    }

    /// Little-endian halfword at any address (alignment is the caller's rule).
    #[inline]
    pub fn read16(&self, addr: u32) -> Result<u16, MemFault> {
        if let Some(b) = self.peek(addr) {
            return Ok(u16::from_le_bytes(b));
        }
        Ok(u16::from_le_bytes([self.byte(addr)?, self.byte(addr.wrapping_add(1))?]))
    }

    /// Little-endian word at any address (alignment and rotation are the caller's rules).
    // Always inlined: the machine's timed and untimed steps both fetch through it.
    #[inline(always)]
    pub fn read32(&self, addr: u32) -> Result<u32, MemFault> {
        if let Some(b) = self.peek(addr) {
            return Ok(u32::from_le_bytes(b));
        }
        let mut b = [0u8; 4];
        for (i, v) in b.iter_mut().enumerate() {
            *v = self.byte(addr.wrapping_add(i as u32))?;
        }
        Ok(u32::from_le_bytes(b))
    }

    /// The page at `idx` if it is allocated and holds no decoded instructions: a store there
    /// is a plain write (allocated pages are allowed ones; nothing to report).
    #[inline(always)]
    fn plain_page(&mut self, idx: usize) -> Option<&mut Page> {
        if self.code_pages[idx / 64] >> (idx % 64) & 1 == 1 {
            return None;
        }
        self.pages[idx].as_deref_mut()
    }

    /// `[addr, addr + len)` when it lies in one allocated page: what reads there return
    /// (the fast paths of loads and block transfers; `None`: access by access).
    #[inline(always)]
    pub(crate) fn span(&self, addr: u32, len: usize) -> Option<&[u8]> {
        let off = addr as usize & (PAGE_SIZE - 1);
        if off + len > PAGE_SIZE {
            return None;
        }
        let p = self.pages[(addr >> PAGE_BITS) as usize].as_deref()?;
        Some(&p[off..off + len])
    }

    /// `[addr, addr + len)` when it lies in one allocated page without decoded instructions:
    /// stores there are plain writes, as in the stores' fast paths.
    #[inline(always)]
    pub(crate) fn plain_span_mut(&mut self, addr: u32, len: usize) -> Option<&mut [u8]> {
        let off = addr as usize & (PAGE_SIZE - 1);
        if off + len > PAGE_SIZE {
            return None;
        }
        let p = self.plain_page((addr >> PAGE_BITS) as usize)?;
        Some(&mut p[off..off + len])
    }

    /// The `N` bytes at `addr` when they lie in one allocated page (what a read returns).
    #[inline(always)]
    pub(crate) fn peek<const N: usize>(&self, addr: u32) -> Option<[u8; N]> {
        self.span(addr, N)?.try_into().ok()
    }

    /// Store `bytes` at `addr` if they lie in one allocated page without decoded instructions
    /// (a plain write, as in the stores' fast paths); false: nothing written.
    #[inline(always)]
    pub(crate) fn poke<const N: usize>(&mut self, addr: u32, bytes: [u8; N]) -> bool {
        match self.plain_span_mut(addr, N) {
            Some(dst) => {
                dst.copy_from_slice(&bytes);
                true
            }
            None => false,
        }
    }

    // The stores: an inlined fast path for a store within an allocated non-code page, the
    // general one (allocation, faults, code-change reports, page straddling) out of line.

    #[inline(always)]
    pub fn write8(&mut self, addr: u32, v: u8) -> Result<(), MemFault> {
        if self.poke(addr, [v]) {
            return Ok(());
        }
        self.write8_slow(addr, v)
    }

    #[inline(always)]
    pub fn write16(&mut self, addr: u32, v: u16) -> Result<(), MemFault> {
        if self.poke(addr, v.to_le_bytes()) {
            return Ok(());
        }
        self.write16_slow(addr, v)
    }

    #[inline(always)]
    pub fn write32(&mut self, addr: u32, v: u32) -> Result<(), MemFault> {
        if self.poke(addr, v.to_le_bytes()) {
            return Ok(());
        }
        self.write32_slow(addr, v)
    }

    #[inline(never)]
    fn write8_slow(&mut self, addr: u32, v: u8) -> Result<(), MemFault> {
        self.note_store(addr, 1);
        let p = self.page_mut(addr)?;
        p[addr as usize & (PAGE_SIZE - 1)] = v;
        Ok(())
    }

    #[inline(never)]
    fn write16_slow(&mut self, addr: u32, v: u16) -> Result<(), MemFault> {
        let off = addr as usize & (PAGE_SIZE - 1);
        if off + 2 <= PAGE_SIZE {
            self.note_store(addr, 2);
            let p = self.page_mut(addr)?;
            p[off..off + 2].copy_from_slice(&v.to_le_bytes());
            return Ok(());
        }
        self.write_bytes(addr, &v.to_le_bytes())
    }

    #[inline(never)]
    fn write32_slow(&mut self, addr: u32, v: u32) -> Result<(), MemFault> {
        let off = addr as usize & (PAGE_SIZE - 1);
        if off + 4 <= PAGE_SIZE {
            self.note_store(addr, 4);
            let p = self.page_mut(addr)?;
            p[off..off + 4].copy_from_slice(&v.to_le_bytes());
            return Ok(());
        }
        self.write_bytes(addr, &v.to_le_bytes())
    }

    /// Write bytes; all-or-nothing with respect to faults.
    pub fn write_bytes(&mut self, addr: u32, data: &[u8]) -> Result<(), MemFault> {
        for i in 0..data.len() as u32 {
            let a = addr.wrapping_add(i);
            if !self.is_mapped(a) {
                return Err(MemFault { addr: a, write: true });
            }
        }
        let mut code = false;
        for (i, &b) in data.iter().enumerate() {
            let a = addr.wrapping_add(i as u32);
            if i == 0 || a as usize & (PAGE_SIZE - 1) == 0 {
                code |= self.is_code_page((a >> PAGE_BITS) as usize);
            }
            self.page_mut(a)?[a as usize & (PAGE_SIZE - 1)] = b;
        }
        if code {
            // One drop for the whole range (a loader or DMA burst may write many pages).
            self.decoded.drop_range(addr, data.len() as u64);
        }
        Ok(())
    }

    /// Read `len` bytes (for semihosting buffers).
    pub fn read_bytes(&self, addr: u32, len: usize) -> Result<Vec<u8>, MemFault> {
        (0..len as u32).map(|i| self.byte(addr.wrapping_add(i))).collect()
    }

    /// Read a NUL-terminated string of at most `max` bytes.
    pub fn read_cstr(&self, addr: u32, max: usize) -> Result<Vec<u8>, MemFault> {
        let mut out = Vec::new();
        for i in 0..max as u32 {
            let b = self.byte(addr.wrapping_add(i))?;
            if b == 0 {
                break;
            }
            out.push(b);
        }
        Ok(out)
    }

    /// Copy every segment of a program image in and allow its range.
    pub fn load_image(&mut self, image: &streamtrace_isa::MemoryImage) -> Result<(), MemFault> {
        for seg in image.segments() {
            self.map_region(seg.base(), seg.len() as u64);
            self.write_bytes(seg.base(), seg.bytes())?;
        }
        Ok(())
    }
}

impl ProgramImage for Memory {
    #[inline]
    fn read_u32(&self, addr: u32) -> Option<u32> {
        self.read32(addr).ok()
    }

    #[inline]
    fn read_u16(&self, addr: u32) -> Option<u16> {
        self.read16(addr).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_pages_and_faults() {
        let mut m = Memory::new();
        assert_eq!(m.read32(0x8000), Err(MemFault { addr: 0x8000, write: false }));
        m.map_region(0x8000, 0x2000);
        assert_eq!(m.read32(0x8000), Ok(0), "allowed, never written");
        m.write32(0x8FFE, 0x1122_3344).unwrap(); // straddles two pages
        assert_eq!(m.read32(0x8FFE), Ok(0x1122_3344));
        assert_eq!(m.read16(0x8FFF), Ok(0x2233));
        assert_eq!(m.read8(0x9001), Ok(0x11));
        assert_eq!(m.write32(0x9FFE, 1), Err(MemFault { addr: 0xA000, write: true }), "last 2 bytes outside");
        assert_eq!(m.read16(0x9FFE), Ok(0), "nothing was written by the failed store");
        m.map_region(0xFFFF_F000, 0x1000);
        m.write8(0xFFFF_FFFF, 7).unwrap();
        assert_eq!(m.read_cstr(0xFFFF_FFFF, 4), Err(MemFault { addr: 0, write: false }));
        assert_eq!(ProgramImage::read_u32(&m, 0x8FFE), Some(0x1122_3344));
        m.unmap_region(0x9000, 1);
        assert_eq!(m.read8(0x9001), Err(MemFault { addr: 0x9001, write: false }));
        assert_eq!(m.read8(0x8FFF), Ok(0x33), "the page below stays");
        m.map_region(0x9000, 0x1000);
        assert_eq!(m.read8(0x9001), Ok(0), "a new mapping reads zeros");
    }
}

//! [`SectionImage`]: a program image assembled the way a debugger holds one, from named
//! sections: raw `(address, bytes)` blocks (memory read from the target, a ROM dump) and
//! the loadable segments of one or more ELF files (a program plus a ROM or a loaded
//! module), with the symbols of every ELF.
//!
//! The decoder reads code through [`ProgramImage`]; an instruction outside every section
//! is reported by the decoder as `DecodeError::OutsideImage` with the stream's address, the
//! unmapped address and the trace bit offset, and [`SectionImage::locate`] names the
//! sections around an address for such messages.

use std::path::Path;

use crate::classify::Classified;
use crate::elf::{symbol_in, ElfImage, Symbol};
use crate::error::ImageError;
use crate::image::{MemoryImage, ProgramImage};

/// One section of a [`SectionImage`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    /// A raw section's name, or `FILE:segment N` for an ELF segment.
    pub name: String,
    pub base: u32,
    pub len: u64,
}

impl Section {
    pub fn end(&self) -> u64 {
        self.base as u64 + self.len
    }
}

/// Sections from raw blocks and ELF files; overlapping sections are refused.
#[derive(Clone, Debug, Default)]
pub struct SectionImage {
    mem: MemoryImage,
    /// Sorted by base.
    sections: Vec<Section>,
    /// Every ELF's symbols, sorted by (address, name).
    symbols: Vec<Symbol>,
}

impl SectionImage {
    pub fn new() -> Self {
        SectionImage::default()
    }

    /// Map `bytes` at `base` under `name`. Fails, naming both, if it overlaps a section.
    pub fn add_section(&mut self, name: &str, base: u32, bytes: impl Into<Vec<u8>>) -> Result<(), ImageError> {
        let bytes = bytes.into();
        let len = bytes.len() as u64;
        if len == 0 {
            return Ok(());
        }
        if let Some(other) = self.sections.iter().find(|s| (s.base as u64) < base as u64 + len && s.end() > base as u64) {
            return Err(ImageError::SectionOverlap {
                name: name.to_string(),
                base,
                len,
                other: other.name.clone(),
                other_base: other.base,
                other_len: other.len,
            });
        }
        self.mem.add_segment(base, bytes)?;
        let at = self.sections.partition_point(|s| s.base < base);
        self.sections.insert(at, Section { name: name.to_string(), base, len });
        Ok(())
    }

    /// Map the loadable segments of an ELF and add its symbols.
    pub fn add_elf(&mut self, elf: &ElfImage) -> Result<(), ImageError> {
        for (i, seg) in elf.memory().segments().iter().enumerate() {
            self.add_section(&format!("{}:segment {i}", elf.source()), seg.base(), seg.bytes().to_vec())?;
        }
        self.symbols.extend(elf.symbols().iter().cloned());
        self.symbols.sort_by(|a, b| (a.addr, &a.name).cmp(&(b.addr, &b.name)));
        Ok(())
    }

    /// Load the ELF file at `path` and add it ([`add_elf`](Self::add_elf)).
    pub fn add_elf_file(&mut self, path: impl AsRef<Path>) -> Result<(), ImageError> {
        self.add_elf(&ElfImage::open(path)?)
    }

    /// An image of one or more ELF files.
    pub fn from_elf_files<P: AsRef<Path>>(paths: &[P]) -> Result<Self, ImageError> {
        let mut img = SectionImage::new();
        for p in paths {
            img.add_elf_file(p)?;
        }
        Ok(img)
    }

    pub fn sections(&self) -> &[Section] {
        &self.sections
    }

    /// The section holding `addr`.
    pub fn section_at(&self, addr: u32) -> Option<&Section> {
        let i = self.sections.partition_point(|s| s.base <= addr);
        i.checked_sub(1).map(|i| &self.sections[i]).filter(|s| (addr as u64) < s.end())
    }

    /// Where `addr` lies: its section and offset, or the sections below and above it.
    pub fn locate(&self, addr: u32) -> String {
        if let Some(s) = self.section_at(addr) {
            return format!("{addr:#010x} is {} + {:#x}", s.name, addr - s.base);
        }
        let i = self.sections.partition_point(|s| s.base <= addr);
        let below = i.checked_sub(1).map(|i| &self.sections[i]);
        let above = self.sections.get(i);
        let show = |s: Option<&Section>| match s {
            Some(s) => format!("{} ({:#010x}..{:#010x})", s.name, s.base, s.end()),
            None => "none".into(),
        };
        format!("{addr:#010x} is outside every section (below: {}, above: {})", show(below), show(above))
    }

    /// Symbols of every ELF added, sorted by address.
    pub fn symbols(&self) -> &[Symbol] {
        &self.symbols
    }

    /// The symbol covering `addr` (as [`ElfImage::symbol_at`]).
    pub fn symbol_at(&self, addr: u32) -> Option<&Symbol> {
        symbol_in(&self.symbols, addr)
    }

    pub fn memory(&self) -> &MemoryImage {
        &self.mem
    }
}

impl ProgramImage for SectionImage {
    #[inline]
    fn read_u32(&self, addr: u32) -> Option<u32> {
        self.mem.read_u32(addr)
    }

    #[inline]
    fn read_u16(&self, addr: u32) -> Option<u16> {
        self.mem.read_u16(addr)
    }

    #[inline]
    fn classify(&self, iw_addr: u32) -> Option<Classified> {
        self.mem.classify(iw_addr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_map_refuse_overlap_and_locate() {
        let mut img = SectionImage::new();
        img.add_section("rom", 0x0, vec![0u8; 0x100]).unwrap();
        img.add_section("ram", 0x8000, 0xE12F_FF1Eu32.to_le_bytes().to_vec()).unwrap();
        let e = img.add_section("clash", 0xF0, vec![0u8; 0x20]).unwrap_err().to_string();
        assert!(e.contains("clash") && e.contains("rom"), "{e}");
        assert_eq!(img.read_u32(0x8000), Some(0xE12F_FF1E));
        assert_eq!(img.read_u32(0x8002), None);
        assert_eq!(img.section_at(0x8003).unwrap().name, "ram");
        assert_eq!(img.locate(0x8001), "0x00008001 is ram + 0x1");
        let far = img.locate(0x4000);
        assert!(far.contains("outside every section") && far.contains("rom") && far.contains("ram"), "{far}");
        assert!(img.locate(0x9000).contains("above: none"));
    }
}

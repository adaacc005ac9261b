//! Errors from building or loading program images.

use std::path::PathBuf;

/// Error building a [`MemoryImage`](crate::MemoryImage) or loading an
/// [`ElfImage`](crate::ElfImage). ELF errors name the file (`file` is the path, or
/// `<memory>` for [`ElfImage::from_bytes`](crate::ElfImage::from_bytes)) and the file
/// offset where one is known.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    /// The OS error is in the message and not a `source`, so that a report of the whole
    /// chain (anyhow's `{:#}`) names it once.
    #[error("cannot read {}: {error}", path.display())]
    Io { path: PathBuf, error: std::io::Error },

    #[error("program {}: larger than {limit} bytes, the limit", path.display())]
    FileTooLarge { path: PathBuf, limit: u64 },

    #[error("{file}: not an ELF file ({reason})")]
    NotElf { file: String, reason: String },

    #[error(
        "{file}: ELF machine is {machine_name} (e_machine {machine}, {class}); \
         expected 32-bit little-endian ARM (e_machine 40)"
    )]
    WrongMachine {
        file: String,
        machine: u16,
        machine_name: &'static str,
        class: &'static str,
    },

    #[error("{file}: ARM ELF is {what}; expected a 32-bit little-endian ARM ELF")]
    Unsupported { file: String, what: String },

    #[error(
        "{file}: truncated: {what} needs file bytes {offset:#x}..{end:#x} \
         but the file is {len:#x} bytes long"
    )]
    Truncated {
        file: String,
        what: String,
        offset: u64,
        end: u64,
        len: u64,
    },

    #[error("{file}: malformed ELF: {what}")]
    Malformed { file: String, what: String },

    #[error("{file}: loadable segments need {total:#x} bytes of memory, more than the {limit:#x}-byte limit")]
    TooLarge {
        file: String,
        total: u64,
        limit: u64,
    },

    #[error("segment {base:#010x}+{len:#x} overlaps segment {other_base:#010x}+{other_len:#x}")]
    Overlap {
        base: u32,
        len: u64,
        other_base: u32,
        other_len: u64,
    },

    #[error("section {name} ({base:#010x}+{len:#x}) overlaps section {other} ({other_base:#010x}+{other_len:#x})")]
    SectionOverlap {
        name: String,
        base: u32,
        len: u64,
        other: String,
        other_base: u32,
        other_len: u64,
    },

    #[error("segment {base:#010x}+{len:#x} extends past the end of the 32-bit address space")]
    SegmentOutOfRange { base: u32, len: u64 },

    #[error("write of {len} bytes at {addr:#010x} touches unmapped memory")]
    Unmapped { addr: u32, len: usize },
}

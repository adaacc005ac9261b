//! streamtrace-isa: the ARMv5TE instruction-set knowledge shared by the core model and
//! the decoder.
//!
//! * [`classify`]: the control-flow classifier ([`classify_arm`], [`classify_thumb`]),
//!   whose rules are the contract between the trace producer and the decoder.
//! * [`image`]: the [`ProgramImage`] read interface and the sparse [`MemoryImage`].
//! * [`elf`]: [`ElfImage`], a program image loaded from a 32-bit little-endian ARM ELF.
//! * [`sections`]: [`SectionImage`], an image of named sections from raw blocks and ELF files.
//! * [`lines`]: [`LineTable`], source lines from an ELF's DWARF line programs.
//! * [`linux`]: the Linux user ABI's helper page, part of every Linux program's image.

pub mod classify;
pub mod elf;
pub mod error;
pub mod image;
pub mod linux;
pub mod lines;
pub mod sections;

pub use classify::{
    classify_arm, classify_thumb, insn_size, is_thumb_bl_prefix, is_thumb_bl_suffix, Classified,
};
pub use elf::{line_table, read_program, ElfImage, ExecInfo, Mapping, Symbol, SymbolKind, MAX_PROGRAM_BYTES};
pub use error::ImageError;
pub use lines::LineTable;
pub use image::{MemoryImage, ProgramImage, Segment};
pub use sections::{Section, SectionImage};
pub use streamtrace_model::BranchClass;

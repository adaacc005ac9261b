//! Fuzz target `elf_image`: arbitrary bytes as a program ELF (the decoder's image and its
//! symbolized views read the user's file) must load or give an error, never a panic; the
//! DWARF line table of any input must build or give an error, and its lookups must not
//! panic either.

#![no_main]

use libfuzzer_sys::fuzz_target;
use streamtrace_isa::{line_table, ElfImage, ProgramImage};

fuzz_target!(|data: &[u8]| {
    if let Ok(image) = ElfImage::from_bytes(data) {
        let entry = image.entry();
        let _ = image.read_u32(entry & !3);
        let _ = image.symbol_at(entry);
    }
    if let Ok(lines) = line_table(data, "fuzz.elf") {
        for a in [0u32, 0x8000, 0x1_0000, u32::MAX] {
            let _ = lines.lookup(a);
        }
    }
});

//! Loading a 32-bit little-endian ARM ELF executable into a [`MemoryImage`].
//!
//! Parsing is done with the `object` crate's low-level ELF reader. Only `PT_LOAD`
//! segments are mapped (file bytes, zero-filled up to `p_memsz`, at `p_vaddr`); the
//! symbol table is kept for reports. Malformed input gives an [`ImageError`], never a
//! panic.

use std::path::Path;

use object::elf::{self, FileHeader32, FileHeader64};
use object::read::elf::{FileHeader, ProgramHeader, SectionHeader, Sym};
use object::{Endianness, FileKind};

use crate::classify::Classified;
use crate::error::ImageError;
use crate::image::{MemoryImage, ProgramImage};
use crate::lines::LineTable;
use streamtrace_model::container::{ProgramIdentity, SegmentHasher, MAX_IDENTITY_LEN};

/// Largest total `p_memsz` of the loadable segments that [`ElfImage`] accepts, so that a
/// corrupt header cannot make the loader allocate gigabytes.
pub const MAX_LOAD_BYTES: u64 = 512 << 20;

/// Name used in errors for [`ElfImage::from_bytes`].
const MEMORY_NAME: &str = "<memory>";

/// Kind of an ELF symbol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SymbolKind {
    /// `STT_FUNC`
    Function,
    /// `STT_OBJECT`
    Object,
    /// Anything else (`STT_NOTYPE` labels, `STT_TLS`, ...).
    Other,
}

/// A defined symbol of the ELF symbol table (mapping symbols `$a`/`$t`/`$d` excluded).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    pub name: String,
    /// Address with the Thumb bit cleared.
    pub addr: u32,
    pub size: u32,
    /// Thumb code: bit 0 of a function symbol's value, otherwise the `$t` mapping
    /// symbol covering `addr`.
    pub thumb: bool,
    pub kind: SymbolKind,
    /// `STB_GLOBAL` or `STB_WEAK`.
    pub global: bool,
}

impl Symbol {
    /// The symbol's interworking address (bit 0 set for Thumb code).
    #[inline]
    pub fn iw_addr(&self) -> u32 {
        self.addr | self.thumb as u32
    }
}

/// What an ARM ELF mapping symbol says about the bytes from its address on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mapping {
    /// `$a`: ARM instructions.
    Arm,
    /// `$t`: Thumb instructions.
    Thumb,
    /// `$d`: data.
    Data,
}

/// A program image loaded from an ARM ELF executable.
#[derive(Clone, Debug)]
pub struct ElfImage {
    mem: MemoryImage,
    entry: u32,
    /// Sorted by (addr, name).
    symbols: Vec<Symbol>,
    /// Sorted by address.
    mappings: Vec<(u32, Mapping)>,
    source: String,
    exec: ExecInfo,
}

/// What an operating system's loader needs from the program headers and notes
/// (docs/linux.md): where the program header table lies in memory, the interpreter a
/// dynamically linked program asks for, and the ABI the program was built for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExecInfo {
    /// Address of the program header table in the loaded image (`AT_PHDR`): the
    /// `PT_PHDR` segment's address, else the table's file offset mapped through the
    /// `PT_LOAD` segment that contains it; 0 when no segment loads it.
    pub phdr: u32,
    /// `e_phentsize` (`AT_PHENT`).
    pub phent: u16,
    /// `e_phnum` (`AT_PHNUM`).
    pub phnum: u16,
    /// `PT_INTERP`: the dynamic loader a dynamically linked program needs.
    pub interp: Option<String>,
    /// The `NT_GNU_ABI_TAG` note: operating system (0 = Linux) and the oldest kernel
    /// version (major, minor, patch) the C library supports. glibc's static and dynamic
    /// programs carry it; newlib's bare-metal ones do not.
    pub abi_tag: Option<(u32, [u32; 3])>,
    /// The `NT_GNU_BUILD_ID` note's bytes.
    pub build_id: Option<Vec<u8>>,
    /// Address of the first writable `PT_LOAD` segment (Linux passes it in r10 at entry
    /// under QEMU: `start_data`), 0 if none.
    pub start_data: u32,
}

impl ExecInfo {
    /// A program for Linux: its ABI tag names Linux (os 0).
    pub fn is_linux(&self) -> bool {
        matches!(self.abi_tag, Some((0, _)))
    }
}

/// Largest program file read (256 MiB; the programs this tool runs are kilobytes to a few
/// megabytes). Without a cap, loading `/dev/zero` would read until memory runs out.
pub const MAX_PROGRAM_BYTES: u64 = 256 << 20;

/// Reads a program file of at most [`MAX_PROGRAM_BYTES`]: a regular file is checked by its
/// size before anything is read; anything else (a device, a pipe) is read up to the limit
/// and refused beyond it. Every loader of program files goes through here.
pub fn read_program(path: &Path) -> Result<Vec<u8>, ImageError> {
    let io = |error| ImageError::Io { path: path.to_path_buf(), error };
    let too_big = || ImageError::FileTooLarge { path: path.to_path_buf(), limit: MAX_PROGRAM_BYTES };
    let file = std::fs::File::open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if meta.is_file() && meta.len() > MAX_PROGRAM_BYTES {
        return Err(too_big());
    }
    let mut data = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(file, MAX_PROGRAM_BYTES + 1), &mut data).map_err(io)?;
    if data.len() as u64 > MAX_PROGRAM_BYTES {
        return Err(too_big());
    }
    Ok(data)
}

impl ElfImage {
    /// Read and load the ELF file at `path`. Errors name the path.
    pub fn open(path: impl AsRef<Path>) -> Result<ElfImage, ImageError> {
        let path = path.as_ref();
        let data = read_program(path)?;
        load(&data, &path.display().to_string())
    }

    /// Load an ELF file held in memory. Errors name it `<memory>`.
    pub fn from_bytes(data: &[u8]) -> Result<ElfImage, ImageError> {
        load(data, MEMORY_NAME)
    }

    /// Like [`from_bytes`](Self::from_bytes), naming the data `name` in errors.
    pub fn from_bytes_named(data: &[u8], name: &str) -> Result<ElfImage, ImageError> {
        load(data, name)
    }

    /// The ELF entry point (`e_entry`) as stored: an interworking address, bit 0 set
    /// for a Thumb entry.
    #[inline]
    pub fn entry(&self) -> u32 {
        self.entry
    }

    /// The path (or name) the image was loaded from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Program header facts for an operating system's loader.
    pub fn exec_info(&self) -> &ExecInfo {
        &self.exec
    }

    /// The loaded memory.
    #[inline]
    pub fn memory(&self) -> &MemoryImage {
        &self.mem
    }

    pub fn into_memory(self) -> MemoryImage {
        self.mem
    }

    /// What names this program in a trace file (docs/trace-format.md 12.1): its build-id,
    /// else the hash of its loaded segments (in address order).
    pub fn identity(&self) -> ProgramIdentity {
        if let Some(id) = self.exec.build_id.as_ref().filter(|b| (1..=MAX_IDENTITY_LEN).contains(&b.len())) {
            return ProgramIdentity::BuildId(id.clone());
        }
        let mut h = SegmentHasher::new();
        for seg in self.mem.segments() {
            h.segment(seg.base(), seg.bytes());
        }
        h.identity()
    }

    /// Defined symbols sorted by address.
    pub fn symbols(&self) -> &[Symbol] {
        &self.symbols
    }

    /// The first symbol called `name` (lowest address).
    pub fn symbol(&self, name: &str) -> Option<&Symbol> {
        self.symbols.iter().find(|s| s.name == name)
    }

    /// The sized symbol whose range contains `addr`, preferring functions, then the
    /// highest start address; falls back to the nearest symbol at or below `addr` of size 0.
    /// Meant for reports (it may scan many symbols).
    pub fn symbol_at(&self, addr: u32) -> Option<&Symbol> {
        symbol_in(&self.symbols, addr)
    }

    /// Mapping symbols (`$a`, `$t`, `$d`) sorted by address.
    pub fn mappings(&self) -> &[(u32, Mapping)] {
        &self.mappings
    }

    /// The mapping in force at `addr`: the last mapping symbol at or below it.
    pub fn mapping_at(&self, addr: u32) -> Option<Mapping> {
        let i = self.mappings.partition_point(|&(a, _)| a <= addr);
        i.checked_sub(1).map(|i| self.mappings[i].1)
    }
}

impl ProgramImage for ElfImage {
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

/// [`ElfImage::symbol_at`] over symbols sorted by address.
pub fn symbol_in(symbols: &[Symbol], addr: u32) -> Option<&Symbol> {
    let upto = symbols.partition_point(|s| s.addr <= addr);
    let below = &symbols[..upto];
    let containing = |s: &&Symbol| s.size > 0 && (addr - s.addr) < s.size;
    below
        .iter()
        .rev()
        .filter(containing)
        .find(|s| s.kind == SymbolKind::Function)
        .or_else(|| below.iter().rev().find(containing))
        .or_else(|| below.iter().rev().find(|s| s.size == 0))
}

/// Human-readable name of an `e_machine` value.
pub fn machine_name(machine: u16) -> &'static str {
    match machine {
        elf::EM_NONE => "none",
        elf::EM_SPARC => "SPARC",
        elf::EM_386 => "x86 (i386)",
        elf::EM_68K => "m68k",
        elf::EM_MIPS => "MIPS",
        elf::EM_PPC => "PowerPC",
        elf::EM_PPC64 => "PowerPC64",
        elf::EM_S390 => "s390",
        elf::EM_ARM => "ARM",
        elf::EM_SH => "SuperH",
        elf::EM_SPARCV9 => "SPARC v9",
        elf::EM_IA_64 => "IA-64",
        elf::EM_X86_64 => "x86-64",
        elf::EM_AVR => "AVR",
        elf::EM_XTENSA => "Xtensa",
        elf::EM_AARCH64 => "AArch64",
        elf::EM_RISCV => "RISC-V",
        elf::EM_BPF => "BPF",
        elf::EM_LOONGARCH => "LoongArch",
        _ => "unknown machine",
    }
}

fn malformed(file: &str, what: impl std::fmt::Display) -> ImageError {
    ImageError::Malformed {
        file: file.to_string(),
        what: what.to_string(),
    }
}

/// Error unless `offset..offset + size` lies within the file.
/// A header table of `count` entries of `entsize` bytes at `offset` must lie in the file.
fn check_table(file: &str, data: &[u8], what: &str, offset: u64, count: u16, entsize: u16) -> Result<(), ImageError> {
    let size = count as u64 * entsize as u64;
    check_range(file, data.len(), || format!("{what} table ({count} entries)"), offset, size)
}

fn check_range(
    file: &str,
    len: usize,
    what: impl FnOnce() -> String,
    offset: u64,
    size: u64,
) -> Result<(), ImageError> {
    let len = len as u64;
    match offset.checked_add(size) {
        Some(end) if end <= len => Ok(()),
        end => Err(ImageError::Truncated {
            file: file.to_string(),
            what: what(),
            offset,
            end: end.unwrap_or(u64::MAX),
            len,
        }),
    }
}

/// The source-line table of an ELF's DWARF line programs (empty without `.debug_line`), for
/// the symbolized views. `file` names the ELF in errors.
pub fn line_table(data: &[u8], file: &str) -> Result<LineTable, ImageError> {
    aligned(data, |d| line_table_aligned(d, file))
}

fn line_table_aligned(data: &[u8], file: &str) -> Result<LineTable, ImageError> {
    let header = FileHeader32::<Endianness>::parse(data).map_err(|e| malformed(file, e))?;
    let endian = header.endian().map_err(|e| malformed(file, e))?;
    let sections = header.sections(endian, data).map_err(|e| malformed(file, e))?;
    let mut compressed = None;
    let table = LineTable::from_sections(|name| {
        let (_, sh) = sections.section_by_name(endian, name.as_bytes())?;
        if sh.sh_flags(endian) & elf::SHF_COMPRESSED != 0 {
            compressed = Some(name.to_string());
            return None;
        }
        sh.data(endian, data).ok()
    })
    .map_err(|e| malformed(file, format!("DWARF line information: {e}")))?;
    if let Some(name) = compressed {
        return Err(ImageError::Unsupported { file: file.to_string(), what: format!("compressed DWARF ({name})") });
    }
    Ok(table)
}

fn load(data: &[u8], file: &str) -> Result<ElfImage, ImageError> {
    aligned(data, |d| load_aligned(d, file))
}

/// `f` of `data`, or of an aligned copy: the ELF reader requires its input aligned for the
/// header structs, and data embedded with include_bytes! or sliced from a larger buffer
/// may not be.
fn aligned<T>(data: &[u8], f: impl FnOnce(&[u8]) -> T) -> T {
    if !(data.as_ptr() as usize).is_multiple_of(8) {
        let mut words = vec![0u64; data.len().div_ceil(8)];
        let bytes: &mut [u8] = as_bytes_mut(&mut words, data.len());
        bytes.copy_from_slice(data);
        return f(bytes);
    }
    f(data)
}

/// View the first `len` bytes of a u64 buffer as bytes.
fn as_bytes_mut(words: &mut [u64], len: usize) -> &mut [u8] {
    assert!(len <= words.len() * 8);
    // SAFETY: u64 has no padding or invalid bit patterns, u8 has alignment 1, and `len` is
    // within the buffer, so the byte view is valid for the lifetime of the borrow.
    unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), len) }
}

fn load_aligned(data: &[u8], file: &str) -> Result<ElfImage, ImageError> {
    const EI_NIDENT: u64 = 16;
    let kind = match FileKind::parse(data) {
        Ok(kind) => kind,
        Err(e) => {
            if data.starts_with(&elf::ELFMAG) {
                check_range(
                    file,
                    data.len(),
                    || "ELF identification".into(),
                    0,
                    EI_NIDENT,
                )?;
            }
            return Err(ImageError::NotElf {
                file: file.to_string(),
                reason: e.to_string(),
            });
        }
    };
    match kind {
        FileKind::Elf32 => {}
        FileKind::Elf64 => {
            let size = std::mem::size_of::<FileHeader64<Endianness>>() as u64;
            check_range(file, data.len(), || "ELF header".into(), 0, size)?;
            let header = FileHeader64::<Endianness>::parse(data).map_err(|e| malformed(file, e))?;
            let endian = header.endian().map_err(|e| malformed(file, e))?;
            let machine = header.e_machine(endian);
            if machine != elf::EM_ARM {
                return Err(ImageError::WrongMachine {
                    file: file.to_string(),
                    machine,
                    machine_name: machine_name(machine),
                    class: "ELFCLASS64",
                });
            }
            return Err(ImageError::Unsupported {
                file: file.to_string(),
                what: "64-bit (ELFCLASS64)".into(),
            });
        }
        other => {
            return Err(ImageError::NotElf {
                file: file.to_string(),
                reason: format!("file format is {other:?}"),
            })
        }
    }

    let header_size = std::mem::size_of::<FileHeader32<Endianness>>() as u64;
    check_range(file, data.len(), || "ELF header".into(), 0, header_size)?;
    let header = FileHeader32::<Endianness>::parse(data).map_err(|e| malformed(file, e))?;
    let endian = header.endian().map_err(|e| malformed(file, e))?;
    let machine = header.e_machine(endian);
    if machine != elf::EM_ARM {
        return Err(ImageError::WrongMachine {
            file: file.to_string(),
            machine,
            machine_name: machine_name(machine),
            class: "ELFCLASS32",
        });
    }
    if header.is_big_endian() {
        return Err(ImageError::Unsupported {
            file: file.to_string(),
            what: "big-endian (ELFDATA2MSB)".into(),
        });
    }
    let entry = header.e_entry(endian);

    // Program headers: report truncation with offsets before object reports it tersely.
    let phoff = header.e_phoff(endian) as u64;
    let phnum = header.e_phnum(endian);
    if phoff != 0 && phnum != 0 && phnum != elf::PN_XNUM {
        check_table(file, data, "program header", phoff, phnum, header.e_phentsize(endian))?;
    }
    let phdrs = header
        .program_headers(endian, data)
        .map_err(|e| malformed(file, e))?;

    let loads = || {
        phdrs
            .iter()
            .enumerate()
            .filter(|(_, ph)| ph.p_type(endian) == elf::PT_LOAD && ph.p_memsz(endian) != 0)
    };
    let total: u64 = loads().map(|(_, ph)| ph.p_memsz(endian) as u64).sum();
    if total > MAX_LOAD_BYTES {
        return Err(ImageError::TooLarge {
            file: file.to_string(),
            total,
            limit: MAX_LOAD_BYTES,
        });
    }

    let mut mem = MemoryImage::new();
    for (i, ph) in loads() {
        let vaddr = ph.p_vaddr(endian);
        let memsz = ph.p_memsz(endian);
        let filesz = ph.p_filesz(endian);
        let offset = ph.p_offset(endian) as u64;
        if filesz > memsz {
            return Err(malformed(
                file,
                format!("PT_LOAD segment {i} has p_filesz {filesz:#x} > p_memsz {memsz:#x}"),
            ));
        }
        check_range(
            file,
            data.len(),
            || format!("PT_LOAD segment {i} (vaddr {vaddr:#010x})"),
            offset,
            filesz as u64,
        )?;
        let file_bytes = ph
            .data(endian, data)
            .map_err(|()| malformed(file, format!("PT_LOAD segment {i}: invalid file range")))?;
        let mut bytes = Vec::with_capacity(memsz as usize);
        bytes.extend_from_slice(file_bytes);
        bytes.resize(memsz as usize, 0);
        mem.add_segment(vaddr, bytes)
            .map_err(|e| malformed(file, format!("PT_LOAD segment {i}: {e}")))?;
    }

    if mem.segments().is_empty() {
        return Err(malformed(file, "no loadable segment (PT_LOAD with p_memsz > 0)"));
    }
    let entry_addr = entry & !1;
    if !mem.segments().iter().any(|s| (entry_addr as u64) >= s.base() as u64 && (entry_addr as u64) < s.end()) {
        return Err(malformed(file, format!("entry point {entry:#010x} lies outside every loadable segment")));
    }
    let exec = exec_info(data, file, header, endian, phdrs)?;
    if exec.is_linux() {
        // Every Linux process has the kernel's helper page; its code runs in user mode, so
        // the core model executes it and the decoder walks it like the program's own code.
        mem.add_segment(crate::linux::KUSER_PAGE, crate::linux::kuser_page()).map_err(|e| {
            malformed(file, format!("a Linux program cannot load a segment on the kernel helper page: {e}"))
        })?;
    }
    let (symbols, mappings) = load_symbols(data, file, header, endian)?;

    Ok(ElfImage {
        mem,
        entry,
        symbols,
        mappings,
        source: file.to_string(),
        exec,
    })
}

/// The loader facts of [`ExecInfo`] from the program headers and `PT_NOTE` segments.
fn exec_info(
    data: &[u8],
    file: &str,
    header: &FileHeader32<Endianness>,
    endian: Endianness,
    phdrs: &[elf::ProgramHeader32<Endianness>],
) -> Result<ExecInfo, ImageError> {
    let phoff = header.e_phoff(endian);
    let mut info = ExecInfo { phent: header.e_phentsize(endian), phnum: header.e_phnum(endian), ..ExecInfo::default() };
    for (i, ph) in phdrs.iter().enumerate() {
        match ph.p_type(endian) {
            elf::PT_PHDR => info.phdr = ph.p_vaddr(endian),
            elf::PT_LOAD => {
                let (off, filesz) = (ph.p_offset(endian), ph.p_filesz(endian));
                if info.phdr == 0 && phoff >= off && phoff - off < filesz {
                    info.phdr = ph.p_vaddr(endian).wrapping_add(phoff - off);
                }
                if info.start_data == 0 && ph.p_flags(endian) & elf::PF_W != 0 {
                    info.start_data = ph.p_vaddr(endian);
                }
            }
            elf::PT_INTERP => {
                let bytes = ph
                    .data(endian, data)
                    .map_err(|()| malformed(file, format!("PT_INTERP segment {i}: invalid file range")))?;
                let name = bytes.split(|&b| b == 0).next().unwrap_or_default();
                info.interp = Some(String::from_utf8_lossy(name).into_owned());
            }
            elf::PT_NOTE => {
                let Ok(Some(mut notes)) = ph.notes(endian, data) else {
                    return Err(malformed(file, format!("PT_NOTE segment {i}: notes do not parse")));
                };
                while let Ok(Some(note)) = notes.next() {
                    if note.name() != b"GNU" {
                        continue;
                    }
                    let desc = note.desc();
                    match note.n_type(endian) {
                        elf::NT_GNU_ABI_TAG if desc.len() >= 16 => {
                            let w = |k: usize| u32::from_le_bytes([desc[4 * k], desc[4 * k + 1], desc[4 * k + 2], desc[4 * k + 3]]);
                            info.abi_tag = Some((w(0), [w(1), w(2), w(3)]));
                        }
                        elf::NT_GNU_BUILD_ID => info.build_id = Some(desc.to_vec()),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    Ok(info)
}

type SymbolTables = (Vec<Symbol>, Vec<(u32, Mapping)>);

fn load_symbols(
    data: &[u8],
    file: &str,
    header: &FileHeader32<Endianness>,
    endian: Endianness,
) -> Result<SymbolTables, ImageError> {
    let shoff = header.e_shoff(endian) as u64;
    let shnum = header.e_shnum(endian);
    if shoff != 0 && shnum != 0 {
        check_table(file, data, "section header", shoff, shnum, header.e_shentsize(endian))?;
    }
    let sections = header
        .sections(endian, data)
        .map_err(|e| malformed(file, e))?;
    for (i, sh) in sections.iter().enumerate() {
        if let Some((offset, size)) = sh.file_range(endian) {
            check_range(
                file,
                data.len(),
                || {
                    let name = sections.section_name(endian, sh).unwrap_or(b"?");
                    format!("section {i} ({})", String::from_utf8_lossy(name))
                },
                offset,
                size,
            )?;
        }
    }
    let symtab = sections
        .symbols(endian, data, elf::SHT_SYMTAB)
        .map_err(|e| malformed(file, e))?;

    let mut symbols = Vec::new();
    let mut mappings = Vec::new();
    for sym in symtab.iter() {
        let st_type = sym.st_type();
        if sym.st_shndx(endian) == elf::SHN_UNDEF
            || matches!(st_type, elf::STT_SECTION | elf::STT_FILE)
        {
            continue;
        }
        let name = symtab
            .symbol_name(endian, sym)
            .map_err(|e| malformed(file, format!("symbol table: {e}")))?;
        if name.is_empty() {
            continue;
        }
        let value = sym.st_value(endian);
        if let Some(m) = mapping_symbol(name) {
            mappings.push((value, m));
            continue;
        }
        let kind = match st_type {
            elf::STT_FUNC => SymbolKind::Function,
            elf::STT_OBJECT => SymbolKind::Object,
            _ => SymbolKind::Other,
        };
        let thumb_bit = kind == SymbolKind::Function && value & 1 != 0;
        symbols.push(Symbol {
            name: String::from_utf8_lossy(name).into_owned(),
            addr: if thumb_bit { value & !1 } else { value },
            size: sym.st_size(endian),
            thumb: thumb_bit,
            kind,
            global: matches!(sym.st_bind(), elf::STB_GLOBAL | elf::STB_WEAK),
        });
    }
    mappings.sort_by_key(|&(a, _)| a);
    mappings.dedup_by_key(|&mut (a, _)| a);
    for s in symbols
        .iter_mut()
        .filter(|s| s.kind != SymbolKind::Function)
    {
        let i = mappings.partition_point(|&(a, _)| a <= s.addr);
        s.thumb = i
            .checked_sub(1)
            .is_some_and(|i| mappings[i].1 == Mapping::Thumb);
    }
    symbols.sort_by(|a, b| (a.addr, &a.name).cmp(&(b.addr, &b.name)));
    Ok((symbols, mappings))
}

/// `$a`, `$t`, `$d`, optionally followed by `.anything` (ARM ELF ABI mapping symbols).
fn mapping_symbol(name: &[u8]) -> Option<Mapping> {
    let (kind, rest) = match name {
        [b'$', k, rest @ ..] => (*k, rest),
        _ => return None,
    };
    if !(rest.is_empty() || rest[0] == b'.') {
        return None;
    }
    match kind {
        b'a' => Some(Mapping::Arm),
        b't' => Some(Mapping::Thumb),
        b'd' => Some(Mapping::Data),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mapping_symbols() {
        assert_eq!(mapping_symbol(b"$a"), Some(Mapping::Arm));
        assert_eq!(mapping_symbol(b"$t"), Some(Mapping::Thumb));
        assert_eq!(mapping_symbol(b"$d.realdata"), Some(Mapping::Data));
        assert_eq!(mapping_symbol(b"$x"), None);
        assert_eq!(mapping_symbol(b"$ab"), None);
        assert_eq!(mapping_symbol(b"$"), None);
        assert_eq!(mapping_symbol(b"main"), None);
    }

    #[test]
    fn not_elf() {
        for data in [&b""[..], b"abc", b"hello world, this is not ELF at all"] {
            let e = ElfImage::from_bytes(data).unwrap_err();
            assert!(matches!(e, ImageError::NotElf { .. }), "{e}");
            assert!(e.to_string().contains("<memory>"), "{e}");
        }
        let e = ElfImage::from_bytes(b"\x7fELF\x01\x01").unwrap_err();
        assert!(matches!(e, ImageError::Truncated { .. }), "{e}");
    }

    #[test]
    fn machine_names() {
        assert_eq!(machine_name(62), "x86-64");
        assert_eq!(machine_name(40), "ARM");
        assert_eq!(machine_name(0x7777), "unknown machine");
    }
}

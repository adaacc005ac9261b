//! ElfImage tests against tests/data/tiny.elf (built from tests/data/tiny.s with
//! arm-none-eabi-as/ld; the expected values come from arm-none-eabi-readelf/objdump).

use std::path::{Path, PathBuf};

use streamtrace_isa::{
    BranchClass, Classified, ElfImage, ImageError, Mapping, ProgramImage, SymbolKind,
};

fn tiny_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tiny.elf")
}

fn tiny_bytes() -> Vec<u8> {
    std::fs::read(tiny_path()).expect("tests/data/tiny.elf")
}

#[test]
fn loads_segments_entry_and_words() {
    let img = ElfImage::open(tiny_path()).unwrap();
    assert_eq!(img.entry(), 0x8000);
    assert!(img.source().ends_with("tiny.elf"));
    // one PT_LOAD: vaddr 0x8000, filesz 0x30, memsz 0x70
    let segs = img.memory().segments();
    assert_eq!(segs.len(), 1);
    assert_eq!((segs[0].base(), segs[0].len()), (0x8000, 0x70));
    assert_eq!(img.read_u32(0x8000), Some(0xe59f0010)); // ldr r0, [pc, #16]
    assert_eq!(img.read_u32(0x8008), Some(0xfa000004)); // blx thumb_func
    assert_eq!(img.read_u32(0x8018), Some(0x0000802c)); // literal: &magic
    assert_eq!(img.read_u16(0x8020), Some(0xb510)); // push {r4, lr}
    assert_eq!(img.read_u32(0x802c), Some(0xc0ffee42)); // magic
                                                        // .bss is zero-filled up to memsz and nothing beyond
    assert_eq!(img.read_u32(0x8030), Some(0));
    assert_eq!(img.read_u32(0x806c), Some(0));
    assert_eq!(img.read_u32(0x806d), None);
    assert_eq!(img.read_u32(0x8070), None);
    assert_eq!(img.read_u32(0x7ffc), None);
    assert_eq!(img.read_u16(0x7fff), None);
}

#[test]
fn symbols() {
    let img = ElfImage::from_bytes(&tiny_bytes()).unwrap();
    let start = img.symbol("_start").unwrap();
    assert_eq!(
        (start.addr, start.size, start.thumb, start.kind),
        (0x8000, 24, false, SymbolKind::Function)
    );
    let tf = img.symbol("thumb_func").unwrap();
    assert_eq!(
        (tf.addr, tf.size, tf.thumb, tf.kind),
        (0x8020, 10, true, SymbolKind::Function)
    );
    assert_eq!(tf.iw_addr(), 0x8021);
    assert!(tf.global);
    let leaf = img.symbol("leaf").unwrap();
    assert_eq!((leaf.addr, leaf.thumb, leaf.global), (0x802a, true, false));
    let magic = img.symbol("magic").unwrap();
    assert_eq!(
        (magic.addr, magic.size, magic.thumb, magic.kind),
        (0x802c, 4, false, SymbolKind::Object)
    );
    assert!(img.symbol("$t").is_none(), "mapping symbols are not listed");
    assert!(img.symbol("no_such_symbol").is_none());
    assert!(img.symbols().windows(2).all(|w| w[0].addr <= w[1].addr));

    assert_eq!(img.symbol_at(0x8026).unwrap().name, "thumb_func");
    assert_eq!(img.symbol_at(0x8014).unwrap().name, "_start");
    assert_eq!(img.symbol_at(0x802a).unwrap().name, "leaf");
    assert_eq!(img.symbol_at(0x8040).unwrap().name, "counter");

    assert_eq!(img.mapping_at(0x8004), Some(Mapping::Arm));
    assert_eq!(img.mapping_at(0x8018), Some(Mapping::Data));
    assert_eq!(img.mapping_at(0x8028), Some(Mapping::Thumb));
    assert_eq!(img.mapping_at(0x7000), None);
}

#[test]
fn classify_through_elf() {
    let img = ElfImage::open(tiny_path()).unwrap();
    let c = |a| img.classify(a).unwrap();
    use BranchClass::{DirectUncond, Return};
    assert_eq!(c(0x8000), Classified::NONE);
    assert_eq!(
        c(0x8008),
        Classified {
            class: DirectUncond,
            target: Some(0x8021)
        }
    ); // blx thumb_func
    assert_eq!(
        c(0x8014),
        Classified {
            class: DirectUncond,
            target: Some(0x8000)
        }
    ); // b _start
    assert_eq!(c(0x8025), Classified::NONE); // bl prefix
    assert_eq!(
        c(0x8027),
        Classified {
            class: DirectUncond,
            target: Some(0x802b)
        }
    ); // bl leaf
    assert_eq!(c(0x8029).class, Return); // pop {r4, pc}
    assert_eq!(c(0x802b).class, Return); // bx lr
    assert_eq!(img.classify(0x9000), None);
}

#[test]
fn truncated_copies_fail() {
    let data = tiny_bytes();
    for len in 0..data.len() {
        let r = ElfImage::from_bytes_named(&data[..len], "tiny-cut");
        let e = r.expect_err(&format!("truncated to {len} bytes must fail"));
        assert!(e.to_string().contains("tiny-cut"), "{len}: {e}");
    }
    // Specific messages name what was cut and where.
    let e = ElfImage::from_bytes(&data[..30]).unwrap_err();
    assert!(
        matches!(
            e,
            ImageError::Truncated {
                offset: 0,
                end: 52,
                len: 30,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("ELF header"), "{e}");
    let e = ElfImage::from_bytes(&data[..70]).unwrap_err();
    assert!(e.to_string().contains("program header table"), "{e}");
    let e = ElfImage::from_bytes(&data[..100]).unwrap_err();
    assert!(
        matches!(
            e,
            ImageError::Truncated {
                offset: 0x54,
                end: 0x84,
                len: 100,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("PT_LOAD segment 0"), "{e}");
    let e = ElfImage::from_bytes(&data[..data.len() - 1]).unwrap_err();
    assert!(e.to_string().contains("section header table"), "{e}");
}

#[test]
fn truncated_file_on_disk_names_path() {
    let data = tiny_bytes();
    let dir = std::env::temp_dir().join(format!("streamtrace-isa-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("cut.elf");
    std::fs::write(&path, &data[..200]).unwrap();
    let e = ElfImage::open(&path).unwrap_err();
    std::fs::remove_dir_all(&dir).ok();
    let msg = e.to_string();
    assert!(
        msg.contains("cut.elf") && msg.contains("truncated"),
        "{msg}"
    );
}

#[test]
fn missing_file_is_io_error() {
    let e = ElfImage::open("/nonexistent/streamtrace/x.elf").unwrap_err();
    assert!(matches!(e, ImageError::Io { .. }), "{e}");
    assert!(
        e.to_string().contains("/nonexistent/streamtrace/x.elf"),
        "{e}"
    );
}

#[test]
fn host_elf_is_rejected_naming_machine() {
    let path = Path::new("/bin/true");
    let Ok(data) = std::fs::read(path) else {
        eprintln!("no /bin/true here; skipping");
        return;
    };
    assert_eq!(
        &data[..4],
        b"\x7fELF",
        "/bin/true is expected to be an ELF file"
    );
    let e = ElfImage::open(path).unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, ImageError::WrongMachine { .. }), "{msg}");
    assert!(
        msg.contains("/bin/true") && msg.contains("ELF machine is"),
        "{msg}"
    );
    let expected = match std::env::consts::ARCH {
        "x86_64" => Some("x86-64"),
        "aarch64" => Some("AArch64"),
        "x86" => Some("x86 (i386)"),
        "riscv64" => Some("RISC-V"),
        _ => None,
    };
    if let Some(name) = expected {
        assert!(msg.contains(name), "{msg}");
    }
}

/// Patch a little-endian field of a copy of tiny.elf.
fn patched(offset: usize, bytes: &[u8]) -> Vec<u8> {
    let mut d = tiny_bytes();
    d[offset..offset + bytes.len()].copy_from_slice(bytes);
    d
}

#[test]
fn header_errors() {
    // e_machine = EM_386
    let e = ElfImage::from_bytes(&patched(18, &3u16.to_le_bytes())).unwrap_err();
    assert!(
        matches!(e, ImageError::WrongMachine { machine: 3, .. }),
        "{e}"
    );
    assert!(e.to_string().contains("i386"), "{e}");
    // big-endian ARM: EI_DATA = 2 and e_machine stored big-endian
    let mut be = patched(5, &[2]);
    be[18..20].copy_from_slice(&40u16.to_be_bytes());
    let e = ElfImage::from_bytes(&be).unwrap_err();
    assert!(
        matches!(e, ImageError::Unsupported { .. }) && e.to_string().contains("big-endian"),
        "{e}"
    );
    // not ELF at all
    let e = ElfImage::from_bytes(&patched(0, b"\x7fXLF")).unwrap_err();
    assert!(matches!(e, ImageError::NotElf { .. }), "{e}");
    // unsupported EI_VERSION
    let e = ElfImage::from_bytes(&patched(6, &[9])).unwrap_err();
    assert!(e.to_string().contains("<memory>"), "{e}");
    // ELFCLASS64 header claiming ARM is rejected as 64-bit; others name their machine
    let e = ElfImage::from_bytes(&patched(4, &[2])).unwrap_err();
    assert!(e.to_string().contains("<memory>"), "{e}");
}

#[test]
fn segment_errors() {
    const PH: usize = 52; // first program header
                          // p_filesz > p_memsz
    let e = ElfImage::from_bytes(&patched(PH + 16, &0x100u32.to_le_bytes())).unwrap_err();
    assert!(
        matches!(e, ImageError::Malformed { .. }) && e.to_string().contains("p_filesz"),
        "{e}"
    );
    // p_offset past the end of the file
    let e = ElfImage::from_bytes(&patched(PH + 4, &0x10_0000u32.to_le_bytes())).unwrap_err();
    assert!(
        matches!(
            e,
            ImageError::Truncated {
                offset: 0x10_0000,
                ..
            }
        ),
        "{e}"
    );
    // enormous p_memsz is refused before allocating
    let e = ElfImage::from_bytes(&patched(PH + 20, &0xffff_0000u32.to_le_bytes())).unwrap_err();
    assert!(matches!(e, ImageError::TooLarge { .. }), "{e}");
    // segment running past 4 GiB
    let e = ElfImage::from_bytes(&patched(PH + 8, &0xffff_fff0u32.to_le_bytes())).unwrap_err();
    assert!(e.to_string().contains("32-bit address space"), "{e}");
}

#[test]
fn misaligned_input_loads() {
    let data = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.elf")).unwrap();
    let mut shifted = vec![0u8; data.len() + 1];
    shifted[1..].copy_from_slice(&data);
    let a = streamtrace_isa::ElfImage::from_bytes(&data).unwrap();
    let b = streamtrace_isa::ElfImage::from_bytes(&shifted[1..]).unwrap();
    assert_eq!(a.entry(), b.entry());
    assert_eq!(a.memory(), b.memory());
}

/// tiny.elf has no build-id: its identity is FNV-1a 64 over (base, length, bytes) of its one
/// segment (docs/trace-format.md 12.1), computed here by the literal definition.
#[test]
fn identity_is_the_segment_hash_without_a_build_id() {
    use streamtrace_model::container::ProgramIdentity;
    let img = ElfImage::open(tiny_path()).unwrap();
    assert!(img.exec_info().build_id.is_none());
    let mut input = Vec::new();
    input.extend_from_slice(&0x8000u32.to_le_bytes());
    input.extend_from_slice(&0x70u32.to_le_bytes());
    input.extend_from_slice(img.memory().segments()[0].bytes());
    let mut h: u64 = 0xcbf29ce484222325;
    for b in input {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    assert_eq!(img.identity(), ProgramIdentity::SegmentHash(h));
    // One changed byte of the loaded image changes it.
    let mut bytes = tiny_bytes();
    let at = bytes.windows(4).position(|w| w == 0xc0ffee42u32.to_le_bytes()).unwrap();
    bytes[at] ^= 1;
    assert_ne!(ElfImage::from_bytes(&bytes).unwrap().identity(), img.identity());
}

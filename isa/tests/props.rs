//! Property tests: the classifiers are total and self-consistent, and MemoryImage
//! agrees with a byte-map model.

use std::collections::BTreeMap;

use proptest::prelude::*;
use streamtrace_isa::{
    classify_arm, classify_thumb, BranchClass, ElfImage, ImageError, MemoryImage, ProgramImage,
};

fn is_direct(c: BranchClass) -> bool {
    matches!(c, BranchClass::DirectCond | BranchClass::DirectUncond)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn arm_total_and_consistent(word in any::<u32>(), pc in any::<u32>()) {
        let pc = pc & !3;
        let c = classify_arm(word, pc);
        prop_assert_eq!(c.target.is_some(), is_direct(c.class));
        let cond = word >> 28;
        match c.class {
            BranchClass::DirectCond | BranchClass::IndirectCond => prop_assert!(cond < 14),
            BranchClass::IndirectUncond => prop_assert_eq!(cond, 14),
            BranchClass::DirectUncond => prop_assert!(cond >= 14),
            BranchClass::Return => prop_assert!(cond < 15),
            BranchClass::None => {}
        }
        if let Some(t) = c.target {
            // ARM B/BL: word-aligned ARM target; BLX imm: Thumb target.
            if cond == 15 {
                prop_assert_eq!(t & 1, 1);
            } else {
                prop_assert_eq!(t & 3, 0);
            }
        }
        // The condition only selects Cond/Uncond: compare with the AL version.
        if cond < 14 {
            let al = classify_arm((word & 0x0fff_ffff) | 0xe000_0000, pc);
            let expected = match al.class {
                BranchClass::DirectUncond => BranchClass::DirectCond,
                BranchClass::IndirectUncond => BranchClass::IndirectCond,
                other => other,
            };
            prop_assert_eq!(c.class, expected);
            prop_assert_eq!(c.target, al.target);
        }
    }

    #[test]
    fn arm_branch_targets_move_with_pc(imm in 0u32..(1 << 24), pc in any::<u32>(), delta in any::<u32>()) {
        let pc = pc & !3;
        let delta = delta & !3;
        let w = 0xea00_0000 | imm;
        let a = classify_arm(w, pc).target.unwrap();
        let b = classify_arm(w, pc.wrapping_add(delta)).target.unwrap();
        prop_assert_eq!(b.wrapping_sub(a), delta);
    }

    #[test]
    fn thumb_total_and_consistent(hw in any::<u16>(), prev in any::<Option<u16>>(), pc in any::<u32>()) {
        let pc = pc & !1;
        let c = classify_thumb(hw, prev, pc);
        prop_assert_eq!(c.target.is_some(), is_direct(c.class));
        prop_assert_ne!(c.class, BranchClass::IndirectCond);
        if let Some(t) = c.target {
            if hw >> 11 == 0b11101 {
                prop_assert_eq!(t & 3, 0, "BLX suffix targets ARM code");
            } else {
                prop_assert_eq!(t & 1, 1, "Thumb target");
            }
        }
        // prev_hw only matters for BL/BLX suffixes.
        if !matches!(hw >> 11, 0b11111 | 0b11101) {
            prop_assert_eq!(c, classify_thumb(hw, None, pc));
        }
    }

    #[test]
    fn memory_image_matches_byte_model(
        segs in prop::collection::vec((any::<u32>(), prop::collection::vec(any::<u8>(), 0..64)), 0..8),
        near in prop::collection::vec((0usize..8, -8i64..72), 0..64),
        random_addrs in prop::collection::vec(any::<u32>(), 0..32),
    ) {
        // Cluster some segments so that adjacency and overlaps actually happen.
        let mut model: BTreeMap<u32, u8> = BTreeMap::new();
        let mut img = MemoryImage::new();
        let mut bases = Vec::new();
        for (i, (base, bytes)) in segs.iter().enumerate() {
            let base = if i % 2 == 1 { bases.last().copied().unwrap_or(*base).wrapping_add(base % 96) } else { *base };
            let end = base as u64 + bytes.len() as u64;
            let overlaps = (base as u64..end).any(|a| a <= u32::MAX as u64 && model.contains_key(&(a as u32)));
            let r = img.add_segment(base, bytes.clone());
            if end > 1 << 32 {
                prop_assert!(matches!(r, Err(ImageError::SegmentOutOfRange { .. })), "{:?}", r);
            } else if overlaps {
                prop_assert!(matches!(r, Err(ImageError::Overlap { .. })), "{:?}", r);
            } else {
                prop_assert!(r.is_ok());
                for (k, &b) in bytes.iter().enumerate() {
                    model.insert(base + k as u32, b);
                }
            }
            bases.push(base);
        }
        let mut addrs = random_addrs;
        for (i, off) in near {
            if let Some(&b) = bases.get(i) {
                addrs.push((b as i64 + off).rem_euclid(1 << 32) as u32);
            }
        }
        for addr in addrs {
            let bytes = |n: u32| -> Option<Vec<u8>> {
                (0..n).map(|k| addr.checked_add(k).and_then(|a| model.get(&a).copied())).collect()
            };
            let w = bytes(4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
            let h = bytes(2).map(|b| u16::from_le_bytes([b[0], b[1]]));
            prop_assert_eq!(img.read_u32(addr), w, "read_u32({:#x})", addr);
            prop_assert_eq!(img.read_u16(addr), h, "read_u16({:#x})", addr);
            prop_assert_eq!(img.is_mapped(addr), model.contains_key(&addr));
            let arm_pc = addr & !1;
            let arm_mapped = (0..4).all(|k| arm_pc.checked_add(k).is_some_and(|a| model.contains_key(&a)));
            prop_assert_eq!(img.classify(arm_pc).is_some(), arm_mapped);
            prop_assert_eq!(img.classify(addr | 1).is_some(), {
                let a = addr & !1;
                model.contains_key(&a) && a.checked_add(1).is_some_and(|b| model.contains_key(&b))
            });
        }
    }

    #[test]
    fn corrupted_elf_never_panics(edits in prop::collection::vec((0usize..1200, any::<u8>()), 1..8), cut in 0usize..1300) {
        let mut data = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.elf")).unwrap();
        for (at, v) in edits {
            if at < data.len() {
                data[at] = v;
            }
        }
        data.truncate(cut);
        // Any result is fine as long as it is a result.
        if let Ok(img) = ElfImage::from_bytes(&data) {
            let _ = img.classify(img.entry());
            let _ = img.symbol_at(img.entry());
        }
    }
}

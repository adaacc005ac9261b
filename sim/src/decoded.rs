//! The predecoded-instruction cache: each instruction is fetched, classified and decoded
//! once, and later executions of it find its handler, condition, word and branch class in
//! one slot keyed by address and state, skipping the fetch, the classifier and the decode
//! tables.
//!
//! # Staying exact
//!
//! A slot holds what memory held when it was filled. Filling marks the page as a code page
//! in [`Memory`], which from then on reports every change to that page (stores, bulk
//! writes, mapping, unmapping); [`DecodedCache::sync`], called before each instruction, drops
//! every slot those changes could affect. An instruction depends on its own bytes, and a
//! Thumb BL/BLX suffix also on the halfword before it (its branch class names the prefix).

use streamtrace_isa::{classify_arm, classify_thumb, is_thumb_bl_suffix};
use streamtrace_model::BranchClass;

use crate::arm::{Handler, COND_ALWAYS};
use crate::memory::{MemFault, Memory, ALL_CHANGED};

/// One decoded instruction.
#[derive(Clone, Copy)]
pub(crate) struct Decoded {
    /// The address of the instruction in this slot (the state is the array's), or
    /// [`empty_key`] of the slot.
    key: u32,
    /// The instruction word (a Thumb halfword zero-extended).
    pub word: u32,
    pub handler: Handler,
    /// ARM condition field, checked before the handler runs; [`COND_ALWAYS`] for Thumb (its
    /// conditional branches check their own) and the ARM unconditional space.
    pub cond: u8,
    pub class: BranchClass,
}

const SLOTS: usize = 1 << 14;

/// The key of an empty slot `s`: an address whose instruction has another slot in either
/// state (1 is in slot 0; 5 in slot 1 in ARM state, 2 in Thumb state), so that no lookup
/// matches it.
#[inline(always)]
fn empty_key(s: usize) -> u32 {
    if s == 0 {
        5
    } else {
        1
    }
}

/// Slot of an instruction: consecutive instructions of either state take consecutive slots.
#[inline(always)]
fn slot(pc: u32, thumb: bool) -> usize {
    (pc >> (2 - thumb as u32)) as usize & (SLOTS - 1)
}

/// Direct-mapped: one slot per `slot(pc, thumb)`, in an array per state (ARM, Thumb): the
/// key is then the address alone, compared without first combining it with the state.
pub(crate) struct DecodedCache {
    /// (Fixed-size arrays: indexing by a masked slot needs no bounds check.)
    slots: [Box<[Decoded; SLOTS]>; 2],
    /// Scratch list of changed ranges (kept for its allocation).
    changes: Vec<(u32, u64)>,
}

impl DecodedCache {
    pub fn new() -> Self {
        let empty = Decoded {
            key: empty_key(1),
            word: 0,
            handler: crate::arm::decode_word(0).0,
            cond: COND_ALWAYS,
            class: BranchClass::None,
        };
        let array = || {
            let mut a: Box<[Decoded; SLOTS]> = vec![empty; SLOTS].into_boxed_slice().try_into().ok().expect("SLOTS slots");
            a[0].key = empty_key(0);
            a
        };
        DecodedCache { slots: [array(), array()], changes: Vec::new() }
    }

    /// The decoded instruction at `pc` in the given state; a miss fetches and decodes it.
    #[inline(always)]
    pub fn get(&mut self, mem: &mut Memory, pc: u32, thumb: bool) -> Result<&Decoded, MemFault> {
        self.get_at(mem, pc, thumb, Self::locate(pc, thumb))
    }

    /// The slot and key of the instruction at `pc` in the given state.
    #[inline(always)]
    pub fn locate(pc: u32, thumb: bool) -> (usize, u32) {
        (slot(pc, thumb), pc)
    }

    /// [`Self::locate`] of the instruction at `next_pc`, the one after (in sequence: + 4 in
    /// ARM state, + 2 in Thumb state) the instruction in slot `s`: consecutive instructions
    /// take consecutive slots (modulo the slot count, for any pc, wrapping at 2^32 too).
    #[inline(always)]
    pub fn next(s: usize, next_pc: u32, _thumb: bool) -> (usize, u32) {
        ((s + 1) & (SLOTS - 1), next_pc)
    }

    /// [`Self::get`] with the instruction's [`Self::locate`] known.
    #[inline(always)]
    pub fn get_at(&mut self, mem: &mut Memory, pc: u32, thumb: bool, (s, k): (usize, u32)) -> Result<&Decoded, MemFault> {
        debug_assert_eq!((s, k), Self::locate(pc, thumb));
        if self.slots[thumb as usize][s].key != k {
            self.fill(mem, pc, thumb)?;
        }
        Ok(&self.slots[thumb as usize][s])
    }

    #[cold]
    #[inline(never)]
    fn fill(&mut self, mem: &mut Memory, pc: u32, thumb: bool) -> Result<(), MemFault> {
        let word = if thumb { mem.read16(pc)? as u32 } else { mem.read32(pc)? };
        let (handler, cond, class) = if thumb {
            let hw = word as u16;
            let prev = if is_thumb_bl_suffix(hw) { mem.read16(pc.wrapping_sub(2)).ok() } else { None };
            (crate::thumb::decode(hw), COND_ALWAYS, classify_thumb(hw, prev, pc).class)
        } else {
            let (handler, cond) = crate::arm::decode_word(word);
            (handler, cond, classify_arm(word, pc).class)
        };
        // The pages of every byte the slot depends on (an unaligned instruction may straddle two).
        let size = if thumb { 2 } else { 4 };
        mem.mark_code_page(pc);
        mem.mark_code_page(pc.wrapping_add(size - 1));
        if thumb && is_thumb_bl_suffix(word as u16) {
            mem.mark_code_page(pc.wrapping_sub(2));
        }
        self.slots[thumb as usize][slot(pc, thumb)] = Decoded { key: pc, word, handler, cond, class };
        Ok(())
    }

    /// Drop every slot that the changes `mem` reports could affect.
    #[inline(always)]
    pub fn sync(&mut self, mem: &mut Memory) {
        if mem.code_changed() {
            self.apply_changes(mem);
        }
    }

    #[cold]
    #[inline(never)]
    fn apply_changes(&mut self, mem: &mut Memory) {
        let mut changes = std::mem::take(&mut self.changes);
        mem.take_code_changes(&mut changes);
        for &(start, len) in &changes {
            if (start, len) == ALL_CHANGED || len >= 2 * SLOTS as u64 {
                for array in self.slots.iter_mut() {
                    for (s, d) in array.iter_mut().enumerate() {
                        d.key = empty_key(s);
                    }
                }
                continue;
            }
            // Every instruction with a byte in [start, end): ARM ones at start - 3 ..= end - 1,
            // Thumb ones at start - 1 ..= end + 1 (a BL suffix depends on the two bytes before it).
            let end = start as u64 + len;
            for at in start as u64 + (1 << 32) - 3..=end + (1 << 32) + 1 {
                let pc = at as u32;
                drop_slot(&mut self.slots[0][..], pc, false);
                drop_slot(&mut self.slots[1][..], pc, true);
            }
        }
        changes.clear();
        self.changes = changes;
    }

}

fn drop_slot(slots: &mut [Decoded], pc: u32, thumb: bool) {
    let s = slot(pc, thumb);
    if slots[s].key == pc {
        slots[s].key = empty_key(s);
    }
}

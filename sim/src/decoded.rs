//! The predecoded-instruction cache: each instruction is fetched, classified and decoded
//! once, and later executions of it find its handler, condition, word and branch class in
//! one slot keyed by address and state, skipping the fetch, the classifier and the decode
//! tables.
//!
//! # Staying exact
//!
//! A slot holds what memory held when it was filled. The cache belongs to the [`Memory`] it
//! was filled from: filling marks the page as a code page, and from then on every change to
//! that page (stores, bulk writes, mapping, unmapping) drops the slots it could affect at
//! once ([`DecodedCache::drop_range`]), so that the run loop needs no check of its own
//! before an instruction: a dropped slot's key matches no address. An instruction depends
//! on its own bytes, and a Thumb BL/BLX suffix also on the halfword before it (its branch
//! class names the prefix). A new memory starts with an empty cache.

use std::sync::atomic::{AtomicU64, Ordering};

use streamtrace_isa::{classify_arm, classify_thumb, is_thumb_bl_suffix};
use streamtrace_model::BranchClass;

use crate::arm::{Handler, COND_ALWAYS};
use crate::memory::{MemFault, Memory};

/// One decoded instruction. (32 bytes: the run loop carries a slot's byte offset, which a
/// sequential step advances with an add and a mask, and addresses the fields from it
/// directly.)
#[derive(Clone, Copy)]
#[repr(align(32))]
pub(crate) struct Decoded {
    /// The address of the instruction in this slot (the state is the array's), or
    /// [`empty_key`] of the slot.
    pub key: u32,
    /// The instruction word (a Thumb halfword zero-extended).
    pub word: u32,
    pub handler: Handler,
    /// ARM condition field, checked before the handler runs; [`COND_ALWAYS`] for Thumb (its
    /// conditional branches check their own) and the ARM unconditional space. A direct
    /// branch has [`BRANCH`] or [`BRANCH_LONG`] added to its condition (AL for the
    /// unconditional ones): the functional run loop executes it without calling its handler.
    /// (Conditions are checked with `cond & 15`; the handler stays right for every caller.)
    pub cond: u8,
    pub class: BranchClass,
    /// The timing model's op for this slot is in its table (`TimingModel::fill_slot`):
    /// every fill writes false, so a refilled slot (new address or rewritten code) gets a
    /// new op. Meaningful only for the model [`DecodedCache::claim_timed`] names.
    pub timed: bool,
    /// With `timed`: the register whose value before execution the timing model's op needs
    /// (a multiplier's Rs), so that the run loop captures it without reading the op.
    pub timed_rs: u8,
    /// With `timed`: whether the timing model has a static block starting here
    /// ([`STATIC_BLOCK`]), has none ([`NO_STATIC_BLOCK`]) or has not looked
    /// ([`STATIC_BLOCK_UNTRIED`], what every fill writes).
    pub block: u8,
}

/// [`Decoded::block`] values.
pub(crate) const NO_STATIC_BLOCK: u8 = 0;
pub(crate) const STATIC_BLOCK_UNTRIED: u8 = 1;
pub(crate) const STATIC_BLOCK: u8 = 2;

pub(crate) const SLOTS: usize = 1 << 14;

/// Added to the condition of a direct branch without link: ARM B, Thumb Bcc (8-bit offset).
pub(crate) const BRANCH: u8 = 0x10;
/// Added to the condition of ARM BL and of Thumb B (11-bit offset, condition AL).
pub(crate) const BRANCH_LONG: u8 = 0x20;

/// The slot's condition byte: `cond`, marked for a direct branch (see [`Decoded::cond`]).
fn slot_cond(word: u32, thumb: bool, cond: u8) -> u8 {
    if thumb {
        match (word >> 11, (word >> 8) & 15) {
            (0b11010 | 0b11011, c @ 0..=13) => BRANCH | c as u8,
            (0b11100, _) => BRANCH_LONG | COND_ALWAYS,
            _ => cond,
        }
    } else if word >> 28 != 0xF && (word >> 25) & 7 == 0b101 {
        cond | if word & (1 << 24) != 0 { BRANCH_LONG } else { BRANCH }
    } else {
        cond
    }
}

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
pub(crate) fn slot(pc: u32, thumb: bool) -> usize {
    (pc >> (2 - thumb as u32)) as usize & (SLOTS - 1)
}

/// The byte offset of [`slot`]`(pc, thumb)` in its array.
#[inline(always)]
pub(crate) fn slot_offset(pc: u32, thumb: bool) -> usize {
    ((pc as usize) << (3 + thumb as u32)) & ((SLOTS - 1) * size_of::<Decoded>())
}

/// The byte offset of the slot after the one at byte offset `offset`: past the last slot,
/// the guard slot (see [`DecodedCache`]), where the loop finds no match and recomputes the
/// offset from the address.
#[inline(always)]
pub(crate) fn next_slot_offset(offset: usize) -> usize {
    offset + size_of::<Decoded>()
}

const _: () = assert!(size_of::<Decoded>() == 32, "slot_offset shifts for 32-byte slots");

/// Direct-mapped: one slot per `slot(pc, thumb)`, in an array per state (ARM, Thumb): the
/// key is then the address alone, compared without first combining it with the state.
///
/// The arrays are raw allocations, not boxes: the functional run loop reads slots through a
/// pointer it keeps across handler calls, while a handler's store may drop slots through the
/// memory (which owns the cache); a `Box` would claim unique access. Nothing holds a
/// reference into the arrays across a call that may write them. Each array has a guard slot
/// after its last one, whose key ([`empty_key`]`(0)`) no instruction reached by a sequential
/// step from the last slot has: the loop steps onto it without wrapping the offset.
pub(crate) struct DecodedCache {
    slots: [*mut Decoded; 2],
    /// This cache's identity, and the timing model whose op table the `timed` flags refer
    /// to (0: none): see [`DecodedCache::claim_timed`].
    id: u64,
    timed_for: u64,
    /// Counts the changes to code (slots dropped by [`DecodedCache::drop_range`],
    /// [`DecodedCache::clear`]):
    /// what was built from several slots (the timing model's static blocks) holds while it
    /// stays the same.
    epoch: u64,
}

/// Identities of caches and timing models (0 is none), so that a slot's `timed` flag is
/// trusted only by the model that set it, and only while it has timed no other memory.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A new identity, never 0 and never reused.
pub(crate) fn new_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

// The cache owns its arrays (plain data) like a `Box` would.
unsafe impl Send for DecodedCache {}
unsafe impl Sync for DecodedCache {}

impl Drop for DecodedCache {
    fn drop(&mut self) {
        for &p in &self.slots {
            // SAFETY: allocated by `Box::into_raw` in `new`, freed once here.
            drop(unsafe { Box::from_raw(p as *mut [Decoded; SLOTS + 1]) });
        }
    }
}

impl DecodedCache {
    pub fn new() -> Self {
        let empty = Decoded {
            key: empty_key(1),
            word: 0,
            handler: crate::arm::decode_word(0).0,
            cond: COND_ALWAYS,
            class: BranchClass::None,
            timed: false,
            timed_rs: 0,
            block: STATIC_BLOCK_UNTRIED,
        };
        let array = || {
            let mut a: Box<[Decoded; SLOTS + 1]> = vec![empty; SLOTS + 1].into_boxed_slice().try_into().ok().expect("SLOTS + 1 slots");
            a[0].key = empty_key(0);
            a[SLOTS].key = empty_key(0);
            Box::into_raw(a) as *mut Decoded
        };
        DecodedCache { slots: [array(), array()], id: new_id(), timed_for: 0, epoch: 0 }
    }

    /// The slots of a state (`SLOTS` of them and the guard), for the run loop: read through the pointer
    /// field by field (`(*p.add(s)).key`), never holding a reference across a handler call.
    /// (Mutable: the timed loop sets a slot's `timed` flag through it.)
    #[inline(always)]
    pub fn slots(&self, thumb: bool) -> *mut Decoded {
        self.slots[thumb as usize]
    }

    /// Make the `timed` flags refer to the op table of the timing model `model` (its
    /// identity), which last served the cache `served` (the model's record): when either
    /// side has changed since the flags were set (another model, or the model's table
    /// refilled for another memory), every flag is cleared. Returns this cache's identity
    /// for the model to record.
    pub fn claim_timed(&mut self, model: u64, served: u64) -> u64 {
        // (No flag is set before the first claim: a cache never claimed needs no clearing,
        // which short timed runs would notice.)
        if (self.timed_for != model || served != self.id) && self.timed_for != 0 {
            for thumb in [false, true] {
                for s in 0..SLOTS {
                    let d = self.at_mut(thumb, s);
                    (d.timed, d.block) = (false, STATIC_BLOCK_UNTRIED);
                }
            }
        }
        self.timed_for = model;
        self.id
    }

    /// The code epoch (see the field).
    #[inline(always)]
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    #[inline(always)]
    fn at(&self, thumb: bool, s: usize) -> &Decoded {
        // SAFETY: `s < SLOTS` (masked by every caller), the array lives as long as `self`,
        // and `&self` excludes writers.
        unsafe { &*self.slots[thumb as usize].add(s & (SLOTS - 1)) }
    }

    #[inline(always)]
    fn at_mut(&mut self, thumb: bool, s: usize) -> &mut Decoded {
        // SAFETY: as in `at`, with `&mut self` excluding every other access.
        unsafe { &mut *self.slots[thumb as usize].add(s & (SLOTS - 1)) }
    }

    /// Drop every slot whose instruction has a byte in `[start, start + len)` (a Thumb BL
    /// suffix also when the halfword before it does).
    pub fn drop_range(&mut self, start: u32, len: u64) {
        if len >= 2 * SLOTS as u64 {
            self.clear();
            return;
        }
        // Every instruction with a byte in [start, end): ARM ones at start - 3 ..= end - 1,
        // Thumb ones at start - 1 ..= end + 1 (a BL suffix depends on the two bytes before it).
        let end = start as u64 + len;
        for at in start as u64 + (1 << 32) - 3..=end + (1 << 32) + 1 {
            let pc = at as u32;
            for thumb in [false, true] {
                let s = slot(pc, thumb);
                let d = self.at_mut(thumb, s);
                if d.key == pc {
                    d.key = empty_key(s);
                    // (Only a dropped instruction changes code: stores to data that shares
                    // a page with code are frequent.)
                    self.epoch += 1;
                }
            }
        }
    }

    /// Drop every slot.
    pub fn clear(&mut self) {
        self.epoch += 1;
        for thumb in [false, true] {
            for s in 0..SLOTS {
                self.at_mut(thumb, s).key = empty_key(s);
            }
        }
    }
}

/// The decoded instruction at `pc` in the given state; a miss fetches and decodes it.
#[inline(always)]
pub(crate) fn get(mem: &mut Memory, pc: u32, thumb: bool) -> Result<Decoded, MemFault> {
    let s = slot(pc, thumb);
    if mem.decoded.at(thumb, s).key != pc {
        fill(mem, pc, thumb)?;
    }
    Ok(*mem.decoded.at(thumb, s))
}

/// The run loop's lookup when the slot it carried does not hold `pc` (a new instruction, or
/// the guard slot after a sequential step off the last slot): the offset of `pc`'s slot,
/// filled if needed. (Cold: the loop keeps the matching case on its straight path.)
#[cold]
#[inline(never)]
pub(crate) fn miss(mem: &mut Memory, pc: u32, thumb: bool) -> Result<usize, MemFault> {
    if mem.decoded.at(thumb, slot(pc, thumb)).key != pc {
        fill(mem, pc, thumb)?;
    }
    Ok(slot_offset(pc, thumb))
}

/// Fetch, classify and decode the instruction at `pc` into its slot.
#[cold]
#[inline(never)]
pub(crate) fn fill(mem: &mut Memory, pc: u32, thumb: bool) -> Result<(), MemFault> {
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
    let cond = slot_cond(word, thumb, cond);
    *mem.decoded.at_mut(thumb, slot(pc, thumb)) = Decoded { key: pc, word, handler, cond, class, timed: false, timed_rs: 0, block: STATIC_BLOCK_UNTRIED };
    Ok(())
}

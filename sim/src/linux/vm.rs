//! The address space of a Linux process: which pages are in use (program segments, the
//! break, the stack, anonymous and file mappings) and where new mappings go.
//!
//! Placement follows QEMU 7.2's linux-user for 32-bit guests (docs/linux.md), because the
//! addresses a program gets decide its control flow (`memcpy` picks its loop by the
//! alignment of the pointers it is given): the differential test against QEMU needs the same
//! addresses. A mapping without a fixed address takes the highest free range that ends at or
//! below `next_start + size` (`next_start` starts below the stack and moves down to each
//! mapping placed from it), wrapping once to the top of the 0xffff0000 address space;
//! `mremap` that may move always moves, to a range found that way while the old one is still
//! in use; the break grows in place while the pages above it are free.

use std::collections::BTreeMap;

use crate::memory::{Memory, PAGE_SIZE};

const PAGE: u64 = PAGE_SIZE as u64;
/// Top of the space searched for mappings (QEMU's reserved guest space for ARM: the helper
/// page at 0xffff0000 sits above it).
const SEARCH_TOP: u64 = 0xffff_0000;

pub fn page_up(v: u64) -> u64 {
    v.div_ceil(PAGE) * PAGE
}

/// Ranges in use, `start -> end` (page aligned, disjoint).
#[derive(Debug, Default)]
pub struct AddressSpace {
    used: BTreeMap<u64, u64>,
    /// Where the next mapping without an address hint is searched from.
    pub next_start: u64,
    /// The program break, where it started, and the end of its last page.
    pub brk: u64,
    pub brk_start: u64,
    brk_page: u64,
}

impl AddressSpace {
    pub fn new(brk: u64, next_start: u64) -> Self {
        AddressSpace { used: BTreeMap::new(), next_start, brk, brk_start: brk, brk_page: brk }
    }

    /// Mark `[start, end)` in use (pages).
    pub fn reserve(&mut self, start: u64, end: u64) {
        let (start, end) = (start / PAGE * PAGE, page_up(end));
        self.release(start, end);
        self.used.insert(start, end);
    }

    /// Mark `[start, end)` free, splitting ranges that straddle it.
    pub fn release(&mut self, start: u64, end: u64) {
        let overlapping: Vec<(u64, u64)> =
            self.used.range(..end).rev().take_while(|&(_, &e)| e > start).map(|(&s, &e)| (s, e)).collect();
        for (s, e) in overlapping {
            self.used.remove(&s);
            if s < start {
                self.used.insert(s, start);
            }
            if e > end {
                self.used.insert(end, e);
            }
        }
    }

    /// Is any page of `[start, end)` in use?
    pub fn any_used(&self, start: u64, end: u64) -> bool {
        self.used.range(..end).next_back().is_some_and(|(_, &e)| e > start)
    }

    /// Is every page of `[start, end)` in use?
    pub fn all_used(&self, start: u64, end: u64) -> bool {
        let mut at = start;
        for (&s, &e) in self.used.range(..end) {
            if e <= at {
                continue;
            }
            if s > at {
                return false;
            }
            at = e;
            if at >= end {
                return true;
            }
        }
        at >= end
    }

    /// A free range of `size` bytes (page multiple) searched from `hint` (0: from
    /// `next_start`, which then moves down to the result).
    pub fn find(&mut self, hint: u64, size: u64) -> Option<u64> {
        let start = if hint == 0 { self.next_start } else { hint / PAGE * PAGE };
        if size == 0 || size > SEARCH_TOP {
            return None;
        }
        let mut looped = false;
        let mut end = start + size;
        if start > SEARCH_TOP - size {
            end = SEARCH_TOP;
            looped = true;
        }
        loop {
            // The lowest usable address is one page up: address 0 is never handed out.
            if end < size + PAGE {
                if looped {
                    return None;
                }
                looped = true;
                end = SEARCH_TOP;
                continue;
            }
            let lo = end - size;
            match self.used.range(..end).next_back() {
                Some((&s, &e)) if e > lo => end = s,
                _ => {
                    if start == self.next_start {
                        self.next_start = lo;
                    }
                    return Some(lo);
                }
            }
        }
    }

    /// `brk(new)`: the new break, or the old one when it cannot move there. Pages the break
    /// grows into are mapped in `mem` and read as zeros.
    pub fn set_brk(&mut self, new: u64, mem: &mut Memory) -> u64 {
        if new == 0 || new < self.brk_start {
            return self.brk;
        }
        if new <= self.brk_page {
            if new > self.brk {
                zero(mem, self.brk, new);
            }
            self.brk = new;
            return self.brk;
        }
        let grow = page_up(new - self.brk_page);
        if self.any_used(self.brk_page, self.brk_page + grow) || self.brk_page + grow > SEARCH_TOP {
            return self.brk;
        }
        self.reserve(self.brk_page, self.brk_page + grow);
        mem.map_region(self.brk_page as u32, grow);
        zero(mem, self.brk, self.brk_page);
        self.brk = new;
        self.brk_page = page_up(new);
        self.brk
    }
}

/// Zero `[from, to)` of mapped memory.
fn zero(mem: &mut Memory, from: u64, to: u64) {
    for a in from..to {
        let _ = mem.write8(a as u32, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The placements QEMU 7.2 gave busybox (`qemu-arm -strace`): the signal trampoline
    /// page at 0x3ffff000 below the stack, a 48 KiB mapping below it, and a `mremap` growing
    /// that to 52 KiB moving below both.
    #[test]
    fn mappings_are_placed_like_qemu() {
        let mut vm = AddressSpace::new(0x1d9000, 0x4000_0000);
        vm.reserve(0x10000, 0x1d9000);
        vm.reserve(0x4000_0000, 0x4080_1000);
        assert_eq!(vm.find(0, 0x1000), Some(0x3fff_f000));
        vm.reserve(0x3fff_f000, 0x4000_0000);
        let a = vm.find(0, 0xc000).unwrap();
        assert_eq!(a, 0x3fff_3000);
        vm.reserve(a, a + 0xc000);
        let b = vm.find(0, 0xd000).unwrap();
        assert_eq!(b, 0x3ffe_6000);
        vm.reserve(b, b + 0xd000);
        vm.release(a, a + 0xc000);
        assert!(!vm.any_used(a, a + 0xc000));
        assert!(vm.all_used(b, b + 0xd000) && !vm.all_used(b, b + 0xe000));
        // A hole above next_start + size is not reused; the search goes on down.
        assert_eq!(vm.find(0, 0x1000), Some(0x3ffe_5000));
    }

    #[test]
    fn release_splits_ranges() {
        let mut vm = AddressSpace::new(0, 0x4000_0000);
        vm.reserve(0x1000, 0x5000);
        vm.release(0x2000, 0x3000);
        assert!(vm.all_used(0x1000, 0x2000) && vm.all_used(0x3000, 0x5000));
        assert!(!vm.any_used(0x2000, 0x3000));
    }

    #[test]
    fn break_grows_into_free_pages_only() {
        let mut mem = Memory::new();
        let mut vm = AddressSpace::new(0x1d9000, 0x4000_0000);
        assert_eq!(vm.set_brk(0, &mut mem), 0x1d9000);
        assert_eq!(vm.set_brk(0x1d989c, &mut mem), 0x1d989c);
        mem.write8(0x1d9800, 7).unwrap();
        assert_eq!(vm.set_brk(0x1d9000, &mut mem), 0x1d9000, "shrinks");
        assert_eq!(vm.set_brk(0x1d9900, &mut mem), 0x1d9900);
        assert_eq!(mem.read8(0x1d9800), Ok(0), "regrown memory reads zeros");
        vm.reserve(0x1db000, 0x1dc000);
        assert_eq!(vm.set_brk(0x1db100, &mut mem), 0x1d9900, "blocked by a mapping");
        assert_eq!(vm.set_brk(0x1d0000, &mut mem), 0x1d9900, "below the start");
    }
}

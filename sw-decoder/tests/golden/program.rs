//! Hand-written programs (address, encoding, assembly text) and a tiny "core" that walks them
//! to produce retire events: the scenario says where each branch goes, the classifier of
//! `streamtrace-isa` supplies classes and direct targets.

use streamtrace_isa::{MemoryImage, ProgramImage};
use streamtrace_model::{BranchClass, RetireEvent};

/// One unit of the program image: an ARM word, a Thumb halfword, or a literal data word.
#[derive(Clone, Copy, Debug)]
pub struct Unit {
    pub addr: u32,
    pub value: u32,
    /// 2 (Thumb halfword) or 4 (ARM instruction or data word).
    pub size: u32,
    pub asm: &'static str,
}

pub const fn arm(addr: u32, value: u32, asm: &'static str) -> Unit {
    Unit { addr, value, size: 4, asm }
}

pub const fn thumb(addr: u32, value: u32, asm: &'static str) -> Unit {
    Unit { addr, value, size: 2, asm }
}

/// A literal-pool word: mapped, never executed.
pub const fn data(addr: u32, value: u32, asm: &'static str) -> Unit {
    Unit { addr, value, size: 4, asm }
}

#[derive(Clone, Debug)]
pub struct Program {
    pub units: Vec<Unit>,
}

impl Program {
    pub fn new(parts: &[&[Unit]]) -> Program {
        let mut units: Vec<Unit> = parts.iter().flat_map(|p| p.iter().copied()).collect();
        units.sort_by_key(|u| u.addr);
        for w in units.windows(2) {
            assert!(w[0].addr + w[0].size <= w[1].addr, "overlapping units at {:#x}", w[1].addr);
        }
        Program { units }
    }

    /// Little-endian image; contiguous units form one segment.
    pub fn image(&self) -> MemoryImage {
        let mut img = MemoryImage::new();
        let mut base = 0u32;
        let mut bytes: Vec<u8> = Vec::new();
        for u in &self.units {
            if !bytes.is_empty() && base as u64 + bytes.len() as u64 != u.addr as u64 {
                img.add_segment(base, std::mem::take(&mut bytes)).unwrap();
            }
            if bytes.is_empty() {
                base = u.addr;
            }
            bytes.extend_from_slice(&u.value.to_le_bytes()[..u.size as usize]);
        }
        if !bytes.is_empty() {
            img.add_segment(base, bytes).unwrap();
        }
        img
    }

    pub fn asm_at(&self, pc: u32) -> &'static str {
        self.units.iter().find(|u| u.addr == pc).map_or("?", |u| u.asm)
    }
}

/// Walks a program, one retire event per instruction. `at` is the interworking address
/// of the next instruction.
pub struct Run {
    img: MemoryImage,
    at: u32,
    pub events: Vec<RetireEvent>,
    pub sync_before: Vec<usize>,
    pub overflow_before: Vec<(usize, u64)>,
}

impl Run {
    pub fn new(prog: &Program, start: u32) -> Run {
        Run { img: prog.image(), at: start, events: Vec::new(), sync_before: Vec::new(), overflow_before: Vec::new() }
    }

    fn event(&mut self, class_ok: &[BranchClass], next: Option<u32>, taken: bool, exc: bool) {
        let a = self.at;
        let thumb = a & 1 == 1;
        let pc = a & !1;
        let c = self.img.classify(a).unwrap_or_else(|| panic!("nothing mapped at {a:#x}"));
        assert!(class_ok.contains(&c.class), "{a:#x}: class {} not one of {class_ok:?}", c.class);
        let size = if thumb { 2 } else { 4 };
        let next_pc = match next {
            Some(n) => n,
            None if c.class == BranchClass::DirectUncond => c.target.unwrap(),
            None => (pc + size) | thumb as u32,
        };
        let insn = if thumb { self.img.read_u16(pc).unwrap() as u32 } else { self.img.read_u32(pc).unwrap() };
        self.events.push(RetireEvent {
            pc,
            insn,
            thumb,
            class: c.class,
            taken: taken || c.class == BranchClass::DirectUncond,
            next_pc,
            exception: exc,
            cycle: 0,
        });
        self.at = next_pc;
    }

    /// `n` instructions that are not branches, not-taken conditional branches, or direct
    /// unconditional branches (followed).
    pub fn seq(&mut self, n: usize) -> &mut Self {
        for _ in 0..n {
            self.event(&[BranchClass::None, BranchClass::DirectUncond], None, false, false);
        }
        self
    }

    /// A conditional branch that is not taken.
    pub fn not_taken(&mut self) -> &mut Self {
        self.event(&[BranchClass::DirectCond, BranchClass::IndirectCond], None, false, false);
        self
    }

    /// A branch (any class but none) taken to `target` (interworking address).
    pub fn taken(&mut self, target: u32) -> &mut Self {
        let c = self.img.classify(self.at).unwrap();
        if let Some(t) = c.target {
            assert_eq!(t, target, "{:#x}: direct target", self.at);
        }
        self.event(
            &[
                BranchClass::DirectCond,
                BranchClass::DirectUncond,
                BranchClass::IndirectCond,
                BranchClass::IndirectUncond,
                BranchClass::Return,
            ],
            Some(target),
            true,
            false,
        );
        self
    }

    /// One instruction after which an exception is taken to `vector`; `taken` says whether
    /// the instruction itself was a taken branch.
    pub fn exception(&mut self, vector: u32, taken: bool) -> &mut Self {
        self.event(&BranchClass::ALL, Some(vector), taken, true);
        self
    }

    /// `Encoder::overflow(lost)` before the next event.
    pub fn overflow(&mut self, lost: u64) -> &mut Self {
        self.overflow_before.push((self.events.len(), lost));
        self
    }

    /// `Encoder::request_sync()` before the next event.
    pub fn request_sync(&mut self) -> &mut Self {
        self.sync_before.push(self.events.len());
        self
    }
}

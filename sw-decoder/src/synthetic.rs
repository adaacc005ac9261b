//! Random synthetic programs for tests, benchmarks and the built-in demo: an image of real
//! ARM and Thumb encodings (direct and indirect branches, calls, returns, state switches)
//! and a run over it with random branch outcomes, indirect targets and exceptions. The
//! classes come from the shared classifier, exactly as a core model would report them.

use streamtrace_isa::{MemoryImage, ProgramImage};
use streamtrace_model::{BranchClass, RetireEvent};

/// Small deterministic PRNG (SplitMix64), so seeds reproduce runs on every machine.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (n > 0).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() >> 32) * n) >> 32
    }

    /// True with probability p/1000.
    #[inline]
    pub fn chance(&mut self, per_mille: u64) -> bool {
        self.below(1000) < per_mille
    }
}

/// Shape of a synthetic program and of its run.
#[derive(Clone, Copy, Debug)]
pub struct SyntheticSpec {
    pub seed: u64,
    /// ARM instructions (at address 0; the first eight words double as exception vectors).
    pub arm_words: u32,
    /// Thumb instructions (at `THUMB_BASE`); 0 for an ARM-only program.
    pub thumb_halfwords: u32,
    /// Retired instructions to produce.
    pub instructions: usize,
    /// Per mille of instructions that are branches of some kind.
    pub branch_density: u64,
    /// Per mille of conditional branches that are taken.
    pub taken_bias: u64,
    /// Per mille of instructions after which an exception is taken.
    pub exception_rate: u64,
    /// Number of distinct indirect-branch targets (small = predictable, like real code).
    pub indirect_targets: u32,
}

/// Below 1 MiB, so the whole program shares its upper 12 address bits as real programs do
/// (rSDC's LVSA tracks them).
pub const THUMB_BASE: u32 = 0x0001_0000;

impl SyntheticSpec {
    pub fn new(seed: u64, instructions: usize) -> Self {
        SyntheticSpec {
            seed,
            arm_words: 2048,
            thumb_halfwords: 2048,
            instructions,
            branch_density: 150,
            taken_bias: 600,
            exception_rate: 1,
            indirect_targets: 16,
        }
    }

    pub fn arm_only(mut self) -> Self {
        self.thumb_halfwords = 0;
        self
    }
}

/// A synthetic program and one run over it.
pub struct SyntheticRun {
    pub image: MemoryImage,
    pub events: Vec<RetireEvent>,
}

fn sext_fits(v: i64, bits: u32) -> bool {
    let lim = 1i64 << (bits - 1);
    (-lim..lim).contains(&v)
}

struct Builder {
    arm: Vec<u32>,
    thumb: Vec<u16>,
    rng: SplitMix64,
    spec: SyntheticSpec,
}

impl Builder {
    fn arm_addr(i: u32) -> u32 {
        4 * i
    }

    fn thumb_addr(i: u32) -> u32 {
        THUMB_BASE + 2 * i
    }

    /// A random ARM instruction for slot `i` (the last slot is always `B` to 0x20 so
    /// sequential flow never leaves the region).
    fn arm_insn(&mut self, i: u32) -> u32 {
        let pc = Self::arm_addr(i);
        let n = self.spec.arm_words;
        let b_to = |target: u32, cond: u32, link: bool| -> u32 {
            let off = (target as i64 - (pc as i64 + 8)) >> 2;
            (cond << 28) | (0b101 << 25) | ((link as u32) << 24) | (off as u32 & 0x00FF_FFFF)
        };
        if i == n - 1 {
            return b_to(Self::arm_addr(8), 0xE, false);
        }
        if !self.rng.chance(self.spec.branch_density) {
            // ALU/loads/stores/SWI: no control flow.
            return match self.rng.below(1024) {
                0 => 0xEF00_0000 | self.rng.below(256) as u32, // swi (rare, as in real code)
                1..=340 => 0xE1A0_0000,                        // mov r0, r0
                341..=680 => 0xE591_2004,                      // ldr r2, [r1, #4]
                _ => 0xE082_3004,                              // add r3, r2, r4
            };
        }
        let local = |rng: &mut SplitMix64| Self::arm_addr(8 + rng.below((n - 9) as u64) as u32);
        match self.rng.below(12) {
            0..=3 => b_to(local(&mut self.rng), 0x1, false),      // bne
            4 => b_to(local(&mut self.rng), 0xE, false),          // b
            5 => b_to(local(&mut self.rng), 0xE, true),           // bl
            6 if self.spec.thumb_halfwords > 0 => {
                // blx label: ARM -> Thumb
                let t = Self::thumb_addr(self.rng.below((self.spec.thumb_halfwords - 1) as u64) as u32);
                let off = t as i64 - (pc as i64 + 8);
                if !sext_fits(off >> 2, 24) {
                    return 0xE1A0_0000;
                }
                let h = ((off >> 1) & 1) as u32;
                0xFA00_0000 | (h << 24) | ((off >> 2) as u32 & 0x00FF_FFFF)
            }
            7 => 0xE12F_FF13,  // bx r3
            8 => 0x112F_FF13,  // bxne r3
            9 => 0xE12F_FF1E,  // bx lr
            10 => 0xE8BD_8010, // pop {r4, pc}
            _ => 0xE591_F000,  // ldr pc, [r1]
        }
    }

    /// A random Thumb instruction for slot `i`; may emit a BL/BLX pair over `i`, `i+1`.
    fn thumb_insns(&mut self, i: u32, out: &mut Vec<u16>) {
        let n = self.spec.thumb_halfwords;
        let pc = Self::thumb_addr(i);
        let b_to = |target: u32| -> u16 {
            let off = (target as i64 - (pc as i64 + 4)) >> 1;
            0xE000 | (off as u16 & 0x7FF)
        };
        if i == n - 1 {
            // Back into the region, within the 11-bit reach of Thumb B.
            out.push(b_to(Self::thumb_addr(i.saturating_sub(500))));
            return;
        }
        let pick = |rng: &mut SplitMix64| Self::thumb_addr(rng.below((n - 1) as u64) as u32);
        if !self.rng.chance(self.spec.branch_density) {
            out.push(if self.rng.below(1024) == 0 { 0xDF00 | self.rng.below(256) as u16 } else { 0x46C0 });
            return;
        }
        match self.rng.below(9) {
            0..=2 => {
                let t = pick(&mut self.rng);
                let off = (t as i64 - (pc as i64 + 4)) >> 1;
                if sext_fits(off, 8) {
                    out.push(0xD100 | (off as u16 & 0xFF)); // bne
                } else {
                    out.push(0x46C0);
                }
            }
            3 => {
                let t = pick(&mut self.rng);
                let off = (t as i64 - (pc as i64 + 4)) >> 1;
                out.push(if sext_fits(off, 11) { b_to(t) } else { 0x46C0 });
            }
            4 | 5 if i + 2 < n => {
                // bl (Thumb target) or blx (ARM target) as a prefix/suffix pair.
                let to_arm = self.rng.below(2) == 0;
                let t = if to_arm {
                    Builder::arm_addr(8 + self.rng.below((self.spec.arm_words - 9) as u64) as u32)
                } else {
                    pick(&mut self.rng)
                };
                let off = t as i64 - (pc as i64 + 4);
                if !sext_fits(off, 23) {
                    out.push(0x46C0);
                    return;
                }
                out.push(0xF000 | ((off >> 12) as u16 & 0x7FF));
                let lo = ((off >> 1) as u16) & 0x7FF;
                out.push(if to_arm { 0xE800 | (lo & !1) } else { 0xF800 | lo });
            }
            6 => out.push(0x4718), // bx r3
            7 => out.push(0x4770), // bx lr
            _ => out.push(0xBD10), // pop {r4, pc}
        }
    }

    fn build(mut self) -> MemoryImage {
        for i in 0..self.spec.arm_words {
            let w = self.arm_insn(i);
            self.arm.push(w);
        }
        let mut i = 0;
        let mut buf = Vec::new();
        while i < self.spec.thumb_halfwords {
            buf.clear();
            self.thumb_insns(i, &mut buf);
            i += buf.len() as u32;
            self.thumb.extend_from_slice(&buf);
        }
        let mut img = MemoryImage::new();
        img.add_segment(0, self.arm.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
        if !self.thumb.is_empty() {
            img.add_segment(THUMB_BASE, self.thumb.iter().flat_map(|h| h.to_le_bytes()).collect::<Vec<u8>>())
                .unwrap();
        }
        img
    }
}

/// Most retired instructions one run holds: its events take about 1 GiB.
pub const MAX_INSTRUCTIONS: usize = 1 << 25;

/// A specification [`generate`] cannot build.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SyntheticError {
    #[error("{0} instructions: more than the {MAX_INSTRUCTIONS} a synthetic run holds")]
    TooManyInstructions(usize),
    #[error("{0} ARM words: the ARM region needs 16 to {max} (the vectors, below the Thumb region)", max = THUMB_BASE / 4)]
    ArmWords(u32),
    #[error("{0} Thumb halfwords: more than the {max} that keep the program below 1 MiB", max = (0x10_0000 - THUMB_BASE) / 2)]
    ThumbHalfwords(u32),
}

/// Build a program and run it; a size out of range is an error (before any allocation).
pub fn generate(spec: &SyntheticSpec) -> Result<SyntheticRun, SyntheticError> {
    if spec.instructions > MAX_INSTRUCTIONS {
        return Err(SyntheticError::TooManyInstructions(spec.instructions));
    }
    if !(16..=THUMB_BASE / 4).contains(&spec.arm_words) {
        return Err(SyntheticError::ArmWords(spec.arm_words));
    }
    if spec.thumb_halfwords > (0x10_0000 - THUMB_BASE) / 2 {
        return Err(SyntheticError::ThumbHalfwords(spec.thumb_halfwords));
    }
    let builder = Builder { arm: Vec::new(), thumb: Vec::new(), rng: SplitMix64::new(spec.seed), spec: *spec };
    let image = builder.build();
    let mut rng = SplitMix64::new(spec.seed ^ 0x5EED_5EED);
    // A few indirect targets, like the handful of callees a real indirect branch sees.
    let targets: Vec<u32> = (0..spec.indirect_targets.max(1))
        .map(|_| {
            if spec.thumb_halfwords > 0 && rng.below(2) == 0 {
                Builder::thumb_addr(rng.below(spec.thumb_halfwords as u64) as u32) | 1
            } else {
                Builder::arm_addr(8 + rng.below((spec.arm_words - 8) as u64) as u32)
            }
        })
        .collect();
    let mut events = Vec::with_capacity(spec.instructions);
    let mut iw = Builder::arm_addr(8);
    for _ in 0..spec.instructions {
        let thumb = iw & 1 == 1;
        let pc = iw & !1;
        let c = image.classify(iw).unwrap_or_else(|| panic!("left the image at {iw:#x} after {:x?}", events.last()));
        let insn = if thumb { image.read_u16(pc).unwrap() as u32 } else { image.read_u32(pc).unwrap() };
        let size = if thumb { 2 } else { 4 };
        let (taken, mut next) = match c.class {
            BranchClass::None => (false, (pc + size) | thumb as u32),
            BranchClass::DirectUncond => (true, c.target.unwrap()),
            BranchClass::DirectCond => {
                if rng.chance(spec.taken_bias) {
                    (true, c.target.unwrap())
                } else {
                    (false, (pc + size) | thumb as u32)
                }
            }
            BranchClass::IndirectCond if rng.chance(500) => (false, (pc + size) | thumb as u32),
            _ => (true, targets[rng.below(targets.len() as u64) as usize]),
        };
        let exception = rng.chance(spec.exception_rate) || (c.class == BranchClass::None && is_swi(insn, thumb));
        if exception {
            next = 4 * (1 + rng.below(7) as u32); // an ARM vector
        }
        events.push(RetireEvent { pc, insn, thumb, class: c.class, taken, next_pc: next, exception, cycle: 0 });
        iw = next;
    }
    Ok(SyntheticRun { image, events })
}

fn is_swi(insn: u32, thumb: bool) -> bool {
    if thumb {
        insn & 0xFF00 == 0xDF00
    } else {
        insn & 0x0F00_0000 == 0x0F00_0000
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_are_consistent_and_cover_every_class() {
        let run = generate(&SyntheticSpec::new(7, 200_000)).unwrap();
        let mut seen = [0u64; 6];
        let mut thumb = 0;
        for w in run.events.windows(2) {
            assert_eq!(w[0].next_pc, w[1].iw_addr(), "events chain");
        }
        for e in &run.events {
            seen[e.class as usize] += 1;
            thumb += e.thumb as u64;
            let c = run.image.classify(e.iw_addr()).unwrap();
            assert_eq!(c.class, e.class);
        }
        assert!(seen.iter().all(|&n| n > 100), "class histogram {seen:?}");
        assert!(thumb > 10_000 && thumb < 190_000, "both states used: {thumb}");
        assert!(run.events.iter().filter(|e| e.exception).count() > 50);
        for seed in 0..400 {
            for small in [false, true] {
                let mut spec = SyntheticSpec::new(seed, 3000);
                spec.branch_density = 20 + seed % 380;
                if small {
                    spec.arm_words = 64;
                    spec.thumb_halfwords = 64;
                }
                generate(&spec).unwrap(); // panics if a run leaves its image
            }
        }
        let again = generate(&SyntheticSpec::new(7, 200_000)).unwrap();
        assert_eq!(again.events, run.events, "deterministic");
        let arm = generate(&SyntheticSpec::new(3, 50_000).arm_only()).unwrap();
        assert!(arm.events.iter().all(|e| !e.thumb));
    }

    #[test]
    fn huge_sizes_are_errors_not_panics() {
        let huge = SyntheticSpec::new(1, usize::MAX);
        assert_eq!(generate(&huge).err(), Some(SyntheticError::TooManyInstructions(usize::MAX)));
        let big = SyntheticSpec { arm_words: u32::MAX, ..SyntheticSpec::new(1, 10) };
        assert_eq!(generate(&big).err(), Some(SyntheticError::ArmWords(u32::MAX)));
        let few = SyntheticSpec { arm_words: 15, ..SyntheticSpec::new(1, 10) };
        assert_eq!(generate(&few).err(), Some(SyntheticError::ArmWords(15)));
        let thumb = SyntheticSpec { thumb_halfwords: u32::MAX, ..SyntheticSpec::new(1, 10) };
        assert_eq!(generate(&thumb).err(), Some(SyntheticError::ThumbHalfwords(u32::MAX)));
        assert!(generate(&SyntheticSpec::new(1, MAX_INSTRUCTIONS.min(1000))).is_ok());
    }
}

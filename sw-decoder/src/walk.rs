//! Replaying one stream over the program image (docs/trace-format.md section 8, step 3),
//! with a cache of expanded streams so hot streams cost one lookup and one copy.

use streamtrace_isa::ProgramImage;
use streamtrace_model::BranchClass;

/// Why a stream could not be replayed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WalkError {
    /// No instruction is mapped at this (interworking) address.
    Unmapped { addr: u32 },
    /// An ARM-state address with bit 1 set.
    Misaligned { addr: u32 },
}

/// The instruction that ended a stream: what the next stream's inference needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamEnd {
    pub class: BranchClass,
    /// Target of a direct branch (interworking form).
    pub target: Option<u32>,
}

/// Walk `sl` instructions from interworking address `a`, appending their interworking
/// addresses to `out`. Direct unconditional branches are followed; everything else falls
/// through (a taken branch of any other class would have ended the stream).
pub fn walk_stream<I: ProgramImage + ?Sized>(
    image: &I,
    a: u32,
    sl: u32,
    out: &mut Vec<u32>,
) -> Result<StreamEnd, WalkError> {
    let mut pc = a;
    for i in 0..sl {
        if pc & 3 == 2 {
            return Err(WalkError::Misaligned { addr: pc });
        }
        let c = image.classify(pc).ok_or(WalkError::Unmapped { addr: pc })?;
        out.push(pc);
        if i + 1 == sl {
            return Ok(StreamEnd { class: c.class, target: c.target });
        }
        pc = match (c.class, c.target) {
            (BranchClass::DirectUncond, Some(t)) => t,
            _ => {
                let size = if pc & 1 == 1 { 2 } else { 4 };
                pc.wrapping_add(size)
            }
        };
    }
    unreachable!("sl >= 1 returns inside the loop")
}

struct Slot {
    key: u64,
    addrs: Vec<u32>,
    end: StreamEnd,
}

/// Direct-mapped cache of expanded streams keyed by (A, SL). Slots reuse their buffers, so
/// the steady state allocates nothing.
pub struct StreamCache {
    slots: Vec<Slot>,
    mask: usize,
    pub hits: u64,
    pub misses: u64,
}

impl StreamCache {
    pub fn new(slots: usize) -> Self {
        let n = slots.next_power_of_two().max(1);
        StreamCache {
            slots: (0..n)
                .map(|_| Slot { key: 0, addrs: Vec::new(), end: StreamEnd { class: BranchClass::None, target: None } })
                .collect(),
            mask: n - 1,
            hits: 0,
            misses: 0,
        }
    }

    /// The expansion of `(a, sl)`, from the cache or walked now.
    #[inline]
    pub fn get<I: ProgramImage + ?Sized>(
        &mut self,
        image: &I,
        a: u32,
        sl: u32,
    ) -> Result<(&[u32], StreamEnd), WalkError> {
        let key = ((a as u64) << 16) | sl as u64; // never 0: sl >= 1
        let idx = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) as usize & self.mask;
        let slot = &mut self.slots[idx];
        if slot.key == key {
            self.hits += 1;
        } else {
            self.misses += 1;
            slot.key = 0;
            slot.addrs.clear();
            slot.end = walk_stream(image, a, sl, &mut slot.addrs)?;
            slot.key = key;
        }
        Ok((&slot.addrs, slot.end))
    }

    pub fn clear(&mut self) {
        for s in &mut self.slots {
            s.key = 0;
        }
    }
}

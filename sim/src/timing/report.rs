//! What a timed run reports: cycles, CPI, cache and BTB statistics and where the stall
//! cycles went.

use std::fmt;

use serde::Serialize;

/// Why the next instruction could not issue one cycle after the previous one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Cause {
    /// Waiting for a load result that hit in the D-cache (load-use).
    LoadUse,
    /// Waiting for a load result that missed (or hit a line still being filled).
    DcacheMiss,
    /// Waiting for a multiply (or accumulator) result.
    MulResult,
    /// Waiting for the multiplier to be free (resource latency).
    MacResource,
    /// An ALU result used as a shift-by-immediate operand (or QDADD/QDSUB Rn).
    Shifter,
    /// Waiting for another result with latency above one (register-shift DP, QADD, MRS).
    ResultLatency,
    /// The previous instruction issued over several cycles (LDM/STM, STRD, MULS, ...).
    MultiCycle,
    /// The BTB predicted a B/BL wrongly.
    Mispredict,
    /// A taken PC write the BTB does not predict (BX, BLX, LDR pc, LDM pc, MOV pc, ...).
    PcWrite,
    /// SWI, semihosting trap, undefined instruction or abort entry.
    Exception,
    /// Waiting for an instruction fetch that missed in the I-cache.
    IcacheMiss,
    /// A fill, pend or write buffer was full.
    BufferFull,
    /// The trace module (or anything else outside the core) froze the core.
    External,
}

pub const CAUSES: usize = 13;

/// Stall cycles by cause. `cycles = instructions + total`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Stalls {
    pub load_use: u64,
    pub dcache_miss: u64,
    pub mul_result: u64,
    pub mac_resource: u64,
    pub shifter: u64,
    pub result_latency: u64,
    pub multi_cycle_issue: u64,
    pub branch_mispredict: u64,
    pub unpredicted_pc_write: u64,
    pub exception: u64,
    pub icache_miss: u64,
    pub buffer_full: u64,
    pub external: u64,
    pub total: u64,
}

impl Stalls {
    pub(crate) fn from_array(a: &[u64; CAUSES]) -> Stalls {
        let mut s = Stalls {
            load_use: a[Cause::LoadUse as usize],
            dcache_miss: a[Cause::DcacheMiss as usize],
            mul_result: a[Cause::MulResult as usize],
            mac_resource: a[Cause::MacResource as usize],
            shifter: a[Cause::Shifter as usize],
            result_latency: a[Cause::ResultLatency as usize],
            multi_cycle_issue: a[Cause::MultiCycle as usize],
            branch_mispredict: a[Cause::Mispredict as usize],
            unpredicted_pc_write: a[Cause::PcWrite as usize],
            exception: a[Cause::Exception as usize],
            icache_miss: a[Cause::IcacheMiss as usize],
            buffer_full: a[Cause::BufferFull as usize],
            external: a[Cause::External as usize],
            total: 0,
        };
        s.total = a.iter().sum();
        s
    }

    /// (label, cycles) in display order.
    pub fn rows(&self) -> [(&'static str, u64); CAUSES] {
        [
            ("load-use", self.load_use),
            ("D-cache miss", self.dcache_miss),
            ("multiply result", self.mul_result),
            ("MAC resource", self.mac_resource),
            ("shifter operand", self.shifter),
            ("other result latency", self.result_latency),
            ("multi-cycle issue", self.multi_cycle_issue),
            ("branch mispredict", self.branch_mispredict),
            ("unpredicted PC write", self.unpredicted_pc_write),
            ("exception / SWI", self.exception),
            ("I-cache miss", self.icache_miss),
            ("buffer full", self.buffer_full),
            ("external (trace module)", self.external),
        ]
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct CacheReport {
    pub accesses: u64,
    pub misses: u64,
    pub miss_rate: f64,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct DataCacheReport {
    pub accesses: u64,
    pub misses: u64,
    pub miss_rate: f64,
    pub read_misses: u64,
    pub write_misses: u64,
    /// Dirty half lines written back on eviction.
    pub writebacks: u64,
    /// Accesses that found their line still being filled (pend buffer).
    pub pend_hits: u64,
    /// Writes queued in the write buffer (store misses, write-through stores, write-backs).
    pub write_buffer_writes: u64,
    /// Of those, merged into a waiting entry.
    pub write_buffer_coalesced: u64,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct BtbReport {
    /// Executed branches of the predicted kinds (ARM B/BL, Thumb B).
    pub lookups: u64,
    pub hits: u64,
    pub mispredicts: u64,
    /// 1 - mispredicts / lookups.
    pub accuracy: f64,
}

/// The timing summary of a run (JSON via serde, a table via Display).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TimingReport {
    /// Issue cycles from the start to the issue of the last instruction, inclusive
    /// (= instructions + stalls.total).
    pub cycles: u64,
    pub instructions: u64,
    pub cpi: f64,
    /// Retire cycle of the last instruction.
    pub last_retire_cycle: u64,
    /// I-cache: one access per instruction fetched.
    pub icache: CacheReport,
    /// D-cache: one access per data word, halfword or byte transferred.
    pub dcache: DataCacheReport,
    pub btb: BtbReport,
    /// Taken PC writes the BTB does not predict.
    pub unpredicted_pc_writes: u64,
    pub stalls: Stalls,
}

pub(crate) fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

impl fmt::Display for TimingReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pct = |a: u64, b: u64| format!("{:.2}%", 100.0 * ratio(a, b));
        writeln!(f, "timing: {} cycles, {} instructions, CPI {:.3}", self.cycles, self.instructions, self.cpi)?;
        let i = &self.icache;
        writeln!(f, "  I-cache   {:>14} accesses {:>12} misses  miss rate {:>7}", i.accesses, i.misses, pct(i.misses, i.accesses))?;
        let d = &self.dcache;
        writeln!(
            f,
            "  D-cache   {:>14} accesses {:>12} misses  miss rate {:>7}  ({} read, {} write misses, {} write-backs)",
            d.accesses,
            d.misses,
            pct(d.misses, d.accesses),
            d.read_misses,
            d.write_misses,
            d.writebacks
        )?;
        writeln!(f, "  write buf {:>14} writes   {:>12} merged", d.write_buffer_writes, d.write_buffer_coalesced)?;
        let b = &self.btb;
        writeln!(
            f,
            "  BTB       {:>14} lookups  {:>12} hits    {} mispredicts, accuracy {:.2}%",
            b.lookups,
            b.hits,
            b.mispredicts,
            100.0 * b.accuracy
        )?;
        writeln!(f, "  unpredicted PC writes {}", self.unpredicted_pc_writes)?;
        writeln!(f, "  {:<24} {:>14} {:>8} {:>8}", "stall cause", "cycles", "% cycles", "per insn")?;
        writeln!(f, "  {:-<24} {:->14} {:->8} {:->8}", "", "", "", "")?;
        for (label, c) in self.stalls.rows() {
            writeln!(f, "  {label:<24} {c:>14} {:>8} {:>8.3}", pct(c, self.cycles), ratio(c, self.instructions))?;
        }
        write!(
            f,
            "  {:<24} {:>14} {:>8} {:>8.3}",
            "total",
            self.stalls.total,
            pct(self.stalls.total, self.cycles),
            ratio(self.stalls.total, self.instructions)
        )
    }
}

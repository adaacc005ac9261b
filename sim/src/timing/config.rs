//! Every parameter of the XScale-like timing model, with the defaults of
//! shared/reference/xscale-timing.md section 1.6 (Intel XScale Core Developer's Manual,
//! 273473-002, chapter 14 "Performance Considerations" and the 80200 / IXP4xx / PXA2xx
//! manuals that reproduce it). docs/timing.md has the same table with sources.
//!
//! Latencies use the manual's terms: *issue latency* = cycles from the issue of an
//! instruction to the issue of the next one; *result latency* = cycles from the issue of a
//! producer to the issue of a consumer that does not stall; *resource latency* = cycles from
//! the issue of a multiply to the issue of the next instruction that needs the multiplier.
//!
//! Every key is optional in a TOML file (missing keys keep their defaults); unknown keys are
//! an error that names them.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// Multiply latencies that depend on the size of the Rs operand: `[small, medium, large]`.
/// Small: Rs\[31:15\] all zeros or all ones (UMULL/UMLAL: all zeros); medium: Rs\[31:27\]
/// likewise; large: anything else (XScale DM Table 14-5: the multiplier terminates early).
pub type BySize = [u32; 3];

/// The whole timing configuration.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TimingConfig {
    pub core: CoreConfig,
    pub multiply: MultiplyConfig,
    pub branch: BranchConfig,
    pub icache: CacheConfig,
    pub dcache: DataCacheConfig,
    pub memory: MemoryConfig,
}

/// Integer pipeline and load/store unit (cache-hit latencies).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CoreConfig {
    /// Result latency of a data-processing instruction with an immediate or
    /// immediate-shifted operand (DM p.212: 1; ALU results are fully bypassed).
    pub alu_result: u32,
    /// Extra result latency when the consumer uses an ALU result as the register shifted by
    /// an immediate, or as Rn of QDADD/QDSUB (DM p.212: +1; the shifter sits in RF).
    pub shift_operand_extra: u32,
    /// Issue latency of data processing with a register-specified shift or RRX (DM p.212: 2).
    pub reg_shift_issue: u32,
    /// Result latency of data processing with a register-specified shift or RRX (DM p.212: 2).
    pub reg_shift_result: u32,
    /// Result latency of QADD/QSUB/QDADD/QDSUB (recalled from DM Table 14-7: 2).
    pub saturate_result: u32,
    /// Result latency of LDR/LDRB/LDRH/LDRSB/LDRSH on a D-cache hit (80200 B.5.1: 3).
    pub load_result: u32,
    /// Result latency of the first register of LDRD (DM p.210: 3).
    pub ldrd_result: u32,
    /// Result latency of the second register of LDRD (DM p.210: 4).
    pub ldrd_result_second: u32,
    /// Extra issue latency of LDRD when Rd = r12 (DM p.210: +1).
    pub ldrd_r12_extra_issue: u32,
    /// Cycles the memory operation right after an LDRD waits (DM p.210: 1).
    pub ldrd_next_mem_stall: u32,
    /// Issue latency of STRD (DM p.211: 2).
    pub strd_issue: u32,
    /// LDM issue latency = `ldm_issue_base` + number of registers (DM p.211: 2 + N).
    pub ldm_issue_base: u32,
    /// STM issue latency = `stm_issue_base` + number of registers (DM p.211: 2 + N).
    pub stm_issue_base: u32,
    /// Result latency of the lowest register an LDM loads; each further register is one
    /// cycle later (DM Table 14-10: LDM result latency 5..18, i.e. 4 + N for the last).
    pub ldm_result_base: u32,
    /// Issue latency of SWP/SWPB (recalled: about 5).
    pub swp_issue: u32,
    /// Result latency of SWP/SWPB (recalled: about 5).
    pub swp_result: u32,
    /// Result latency of MRS, and of MRC from CP15 (recalled: 2; CP15 reads are an
    /// assumption of this model).
    pub mrs_result: u32,
    /// Issue latency of MSR writing only the flags (recalled: 2).
    pub msr_issue: u32,
    /// Issue latency of MSR writing the control field (mode bits; recalled: about 6).
    pub msr_control_issue: u32,
    /// Issue latency of an instruction that enters an exception vector or traps to the
    /// semihosting host (SWI, undefined, BKPT, aborts; recalled: about 6).
    pub exception_issue: u32,
    /// Retire cycle = issue + this for instructions of the integer and MAC pipes (X1 -> XWB).
    pub retire_offset: u32,
    /// Retire cycle = issue + this for loads and stores (X1 -> D1 -> D2 -> DWB).
    pub retire_offset_mem: u32,
}

impl Default for CoreConfig {
    fn default() -> Self {
        CoreConfig {
            alu_result: 1,
            shift_operand_extra: 1,
            reg_shift_issue: 2,
            reg_shift_result: 2,
            saturate_result: 2,
            load_result: 3,
            ldrd_result: 3,
            ldrd_result_second: 4,
            ldrd_r12_extra_issue: 1,
            ldrd_next_mem_stall: 1,
            strd_issue: 2,
            ldm_issue_base: 2,
            stm_issue_base: 2,
            ldm_result_base: 5,
            swp_issue: 5,
            swp_result: 5,
            mrs_result: 2,
            msr_issue: 2,
            msr_control_issue: 6,
            exception_issue: 6,
            retire_offset: 2,
            retire_offset_mem: 3,
        }
    }
}

/// Multiplier and CP0 accumulator (DM Table 14-5 as recalled in xscale-timing.md 1.3;
/// cross-checked with `UMLAL` issuing 2 cycles and its RdHi consumer at cycle 5, IXP2800
/// Table 27).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MultiplyConfig {
    /// MUL/MLA result latency by Rs size (2/3/4); issue latency 1.
    pub mul_result: BySize,
    /// MUL/MLA resource latency by Rs size (1/2/3).
    pub mul_resource: BySize,
    /// MULS/MLAS issue = result = resource latency by Rs size (2/3/4): a flag-setting
    /// multiply blocks the pipeline.
    pub muls_issue: BySize,
    /// UMULL/UMLAL/SMULL/SMLAL issue latency (2).
    pub mull_issue: u32,
    /// Long multiply RdLo result latency by Rs size (2/3/4).
    pub mull_result_lo: BySize,
    /// Long multiply RdHi result latency by Rs size (3/4/5).
    pub mull_result_hi: BySize,
    /// Long multiply resource latency by Rs size (2/3/4).
    pub mull_resource: BySize,
    /// Flag-setting long multiply issue = result = resource latency by Rs size (3/4/5).
    pub mulls_issue: BySize,
    /// SMULxy/SMLAxy result latency (2); issue 1.
    pub smulxy_result: u32,
    /// SMULxy/SMLAxy resource latency (1).
    pub smulxy_resource: u32,
    /// SMULWy/SMLAWy result latency (3); issue 1.
    pub smulwy_result: u32,
    /// SMULWy/SMLAWy resource latency (2).
    pub smulwy_resource: u32,
    /// SMLALxy issue latency (2).
    pub smlalxy_issue: u32,
    /// SMLALxy RdLo result latency (2).
    pub smlalxy_result_lo: u32,
    /// SMLALxy RdHi result latency (3).
    pub smlalxy_result_hi: u32,
    /// SMLALxy resource latency (2).
    pub smlalxy_resource: u32,
    /// MIA: accumulator result latency by Rs size (1/2/3; 80200 B.5.6); issue 1.
    pub mia_result: BySize,
    /// MIA resource latency by Rs size (1/2/3).
    pub mia_resource: BySize,
    /// MIAPH result latency (2); issue 1.
    pub miaph_result: u32,
    /// MIAPH resource latency (2).
    pub miaph_resource: u32,
    /// MIAxy result latency (1); issue 1.
    pub miaxy_result: u32,
    /// MIAxy resource latency (1).
    pub miaxy_resource: u32,
    /// MAR (registers -> acc0) issue latency (DM p.215: 2).
    pub mar_issue: u32,
    /// MAR result latency (2).
    pub mar_result: u32,
    /// MAR resource latency (2).
    pub mar_resource: u32,
    /// MRA (acc0 -> registers) RdLo result latency (DM p.215: 2); issue 1.
    pub mra_result_lo: u32,
    /// MRA RdHi result latency (3).
    pub mra_result_hi: u32,
    /// MRA resource latency (2).
    pub mra_resource: u32,
}

impl Default for MultiplyConfig {
    fn default() -> Self {
        MultiplyConfig {
            mul_result: [2, 3, 4],
            mul_resource: [1, 2, 3],
            muls_issue: [2, 3, 4],
            mull_issue: 2,
            mull_result_lo: [2, 3, 4],
            mull_result_hi: [3, 4, 5],
            mull_resource: [2, 3, 4],
            mulls_issue: [3, 4, 5],
            smulxy_result: 2,
            smulxy_resource: 1,
            smulwy_result: 3,
            smulwy_resource: 2,
            smlalxy_issue: 2,
            smlalxy_result_lo: 2,
            smlalxy_result_hi: 3,
            smlalxy_resource: 2,
            mia_result: [1, 2, 3],
            mia_resource: [1, 2, 3],
            miaph_result: 2,
            miaph_resource: 2,
            miaxy_result: 1,
            miaxy_resource: 1,
            mar_issue: 2,
            mar_result: 2,
            mar_resource: 2,
            mra_result_lo: 2,
            mra_result_hi: 3,
            mra_resource: 2,
        }
    }
}

/// Branch target buffer and the cost of writing the PC (xscale-timing.md 1.2).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BranchConfig {
    /// Use the BTB. Off: every predicted-class branch is predicted not taken.
    pub btb_enabled: bool,
    /// BTB entries, direct-mapped, indexed by PC\[log2(entries)+1:2\], tagged with the rest
    /// of the PC including bit 1 (Thumb). A power of two (80200 p.59: 128).
    pub btb_entries: u32,
    /// 2-bit history a newly allocated entry starts with: 0 strongly not taken, 1 weakly not
    /// taken, 2 weakly taken, 3 strongly taken. Entries are allocated only by a taken branch
    /// that misses (80200 p.60: weakly taken).
    pub btb_initial_counter: u8,
    /// Extra issue cycles of a mispredicted ARM B/BL (DM p.164 Table 10-1: 4, i.e. issue 5).
    pub mispredict_penalty_arm: u32,
    /// Extra issue cycles of a mispredicted Thumb B (IXP45x §3.9.4.11: 5, i.e. issue 6).
    pub mispredict_penalty_thumb: u32,
    /// Issue latency of a taken BX/BLX(register) (IXP45x Table 81: 5; not predicted).
    pub bx_issue: u32,
    /// Issue latency of BLX(immediate) and of the Thumb BL/BLX second half (Table 81: 5; not
    /// predicted: only ARM B/BL and Thumb B are).
    pub blx_imm_issue: u32,
    /// Extra issue cycles of a data-processing instruction that writes the PC, added to its
    /// own issue latency (Table 82: 4 + 1, or 4 + 2 with a register shift).
    pub dp_pc_extra: u32,
    /// Issue latency of LDR pc when the condition passes (Table 82: 8).
    pub ldr_pc_issue: u32,
    /// Issue latency of LDR pc when the condition fails (Table 82: 2).
    pub ldr_pc_not_taken_issue: u32,
    /// LDM with pc, condition passes: issue = this + max(0, N - 3), N counting pc
    /// (Table 82: 10 + max(0, N - 3)).
    pub ldm_pc_issue_base: u32,
    /// LDM with pc, condition fails: issue = this + N (Table 82: 3 + N).
    pub ldm_pc_not_taken_base: u32,
    /// Extra cycle a Thumb instruction pays for a taken, unpredicted PC write (IXP45x
    /// §3.9.4.11: 1).
    pub thumb_pc_write_extra: u32,
}

impl Default for BranchConfig {
    fn default() -> Self {
        BranchConfig {
            btb_enabled: true,
            btb_entries: 128,
            btb_initial_counter: 2,
            mispredict_penalty_arm: 4,
            mispredict_penalty_thumb: 5,
            bx_issue: 5,
            blx_imm_issue: 5,
            dp_pc_extra: 4,
            ldr_pc_issue: 8,
            ldr_pc_not_taken_issue: 2,
            ldm_pc_issue_base: 10,
            ldm_pc_not_taken_base: 3,
            thumb_pc_write_extra: 1,
        }
    }
}

/// A set-associative cache with round-robin replacement per set (80200 p.49).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CacheConfig {
    /// Off: every access misses and nothing is allocated.
    pub enabled: bool,
    /// Capacity in bytes (32768).
    pub size_bytes: u32,
    /// Ways per set (32).
    pub ways: u32,
    /// Line size in bytes, a power of two from 4 to 256 (32).
    pub line_bytes: u32,
}

impl Default for CacheConfig {
    fn default() -> Self {
        CacheConfig { enabled: true, size_bytes: 32 * 1024, ways: 32, line_bytes: 32 }
    }
}

/// The data cache: geometry plus write policy (PXA255 p.55, 80200 p.63).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DataCacheConfig {
    pub enabled: bool,
    pub size_bytes: u32,
    pub ways: u32,
    pub line_bytes: u32,
    /// Write-back (true) or write-through (false). Write-back lines keep one dirty bit per
    /// half line; an evicted dirty half goes to the write buffer.
    pub write_back: bool,
    /// Allocate a line on a store miss (the XScale allocates on reads only unless the page
    /// attributes ask for it: false).
    pub write_allocate: bool,
}

impl Default for DataCacheConfig {
    fn default() -> Self {
        let c = CacheConfig::default();
        DataCacheConfig {
            enabled: c.enabled,
            size_bytes: c.size_bytes,
            ways: c.ways,
            line_bytes: c.line_bytes,
            write_back: true,
            write_allocate: false,
        }
    }
}

impl DataCacheConfig {
    /// The geometry alone.
    pub fn geometry(&self) -> CacheConfig {
        CacheConfig { enabled: self.enabled, size_bytes: self.size_bytes, ways: self.ways, line_bytes: self.line_bytes }
    }
}

/// External memory and the buffers between the caches and the bus (DM p.49, p.64).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MemoryConfig {
    /// Core cycles from a cache miss to the arrival of the requested (critical) word
    /// (80200 p.254 at 6:1 core:bus: 54-84, critical word about 60; a parameter).
    pub latency: u32,
    /// Core cycles between further words of a line fill, which arrive in wrap-around order
    /// after the critical word (about 6 core cycles per 8 bytes at 6:1: 3 per word).
    pub word_cycles: u32,
    /// Data-cache line fills (and uncached reads) in flight at once; the core stalls on a
    /// miss when all are busy (DM p.64: 4).
    pub fill_buffers: u32,
    /// Loads and stores that hit a line still being filled wait in the pend buffer until the
    /// fill completes; the core stalls when it is full (DM p.64: 4).
    pub pend_buffers: u32,
    /// Write buffer entries (DM p.64: 8). A store that cannot merge into a waiting entry and
    /// finds all entries busy stalls the core.
    pub write_buffer_entries: u32,
    /// Bytes per write buffer entry and coalescing granule, a power of two (DM p.64: 16).
    pub write_buffer_entry_bytes: u32,
    /// Core cycles the bus needs to write one write-buffer entry to memory; entries drain
    /// one after another (an assumption: 4 words at `word_cycles` each).
    pub write_drain_cycles: u32,
    /// Instruction-cache misses in flight at once (DM p.49: 2 fetch buffers).
    pub fetch_buffers: u32,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        MemoryConfig {
            latency: 50,
            word_cycles: 3,
            fill_buffers: 4,
            pend_buffers: 4,
            write_buffer_entries: 8,
            write_buffer_entry_bytes: 16,
            write_drain_cycles: 12,
            fetch_buffers: 2,
        }
    }
}

/// A configuration that cannot be used, naming the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// The file cannot be read (an I/O error, not a bad configuration).
    #[error("cannot read {path}: {message}")]
    Read { path: String, message: String },
    /// The file's TOML is malformed or its values cannot be used.
    #[error("{path}: {message}")]
    File { path: String, message: String },
    #[error("{key} = {value}: {reason}")]
    Invalid { key: &'static str, value: String, reason: &'static str },
}

/// Largest cache accepted (64 MiB, far beyond any core this models): with 4-byte lines its
/// tag and state arrays take about 100 MB, so a configuration cannot make the model allocate
/// without bound.
pub const MAX_CACHE_BYTES: u32 = 64 << 20;

/// Largest latency accepted anywhere (keeps every sum far from overflow and catches typos).
const MAX_LATENCY: u32 = 1 << 20;

impl TimingConfig {
    /// Parse TOML text. Every key is optional; unknown keys and wrong types are errors that
    /// name the key (and its line).
    pub fn from_toml_str(text: &str) -> Result<TimingConfig, String> {
        let cfg: TimingConfig = toml::from_str(text).map_err(|e| e.to_string().trim_end().to_string())?;
        cfg.validate().map_err(|e| e.to_string())?;
        Ok(cfg)
    }

    /// Read a TOML file (see [`TimingConfig::from_toml_str`]).
    pub fn from_toml_file(path: &Path) -> Result<TimingConfig, ConfigError> {
        let name = || path.display().to_string();
        let file = |message: String| ConfigError::File { path: name(), message };
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError::Read { path: name(), message: e.to_string() })?;
        TimingConfig::from_toml_str(&text).map_err(file)
    }

    /// The configuration as TOML (every key, the form `from_toml_str` reads).
    pub fn to_toml_string(&self) -> String {
        toml::to_string(self).unwrap_or_else(|e| format!("# cannot serialize the configuration: {e}\n"))
    }

    /// Check the values the model cannot work with.
    pub fn validate(&self) -> Result<(), ConfigError> {
        fn bad(key: &'static str, value: impl ToString, reason: &'static str) -> Result<(), ConfigError> {
            Err(ConfigError::Invalid { key, value: value.to_string(), reason })
        }
        let geometry = |prefix: &'static [&'static str; 3], c: &CacheConfig| -> Result<(), ConfigError> {
            if !c.line_bytes.is_power_of_two() || !(4..=256).contains(&c.line_bytes) {
                return bad(prefix[0], c.line_bytes, "must be a power of two from 4 to 256");
            }
            if c.ways == 0 || c.ways > 256 {
                return bad(prefix[1], c.ways, "must be from 1 to 256");
            }
            if c.size_bytes > MAX_CACHE_BYTES {
                return bad(prefix[2], c.size_bytes, "must be at most 67108864 (64 MiB)");
            }
            let way_bytes = c.ways as u64 * c.line_bytes as u64;
            if c.size_bytes == 0 || !(c.size_bytes as u64).is_multiple_of(way_bytes) {
                return bad(prefix[2], c.size_bytes, "must be a non-zero multiple of ways x line_bytes");
            }
            if !(c.size_bytes as u64 / way_bytes).is_power_of_two() {
                return bad(prefix[2], c.size_bytes, "must give a power-of-two number of sets (size / (ways x line_bytes))");
            }
            Ok(())
        };
        geometry(&["icache.line_bytes", "icache.ways", "icache.size_bytes"], &self.icache)?;
        geometry(&["dcache.line_bytes", "dcache.ways", "dcache.size_bytes"], &self.dcache.geometry())?;
        let b = &self.branch;
        if !b.btb_entries.is_power_of_two() || b.btb_entries > 1 << 20 {
            return bad("branch.btb_entries", b.btb_entries, "must be a power of two up to 2^20");
        }
        if b.btb_initial_counter > 3 {
            return bad("branch.btb_initial_counter", b.btb_initial_counter, "must be 0..=3 (a 2-bit counter)");
        }
        let m = &self.memory;
        for (key, v) in [
            ("memory.fill_buffers", m.fill_buffers),
            ("memory.pend_buffers", m.pend_buffers),
            ("memory.write_buffer_entries", m.write_buffer_entries),
            ("memory.fetch_buffers", m.fetch_buffers),
        ] {
            if v == 0 || v > 64 {
                return bad(key, v, "must be from 1 to 64");
            }
        }
        if !m.write_buffer_entry_bytes.is_power_of_two() || !(4..=256).contains(&m.write_buffer_entry_bytes) {
            return bad("memory.write_buffer_entry_bytes", m.write_buffer_entry_bytes, "must be a power of two from 4 to 256");
        }
        // Issue latencies are at least one cycle: a single-issue core issues at most one
        // instruction per cycle.
        let c = &self.core;
        let p = &self.multiply;
        for (key, v) in [
            ("core.reg_shift_issue", c.reg_shift_issue),
            ("core.strd_issue", c.strd_issue),
            ("core.swp_issue", c.swp_issue),
            ("core.msr_issue", c.msr_issue),
            ("core.msr_control_issue", c.msr_control_issue),
            ("core.exception_issue", c.exception_issue),
            ("multiply.mull_issue", p.mull_issue),
            ("multiply.smlalxy_issue", p.smlalxy_issue),
            ("multiply.mar_issue", p.mar_issue),
            ("branch.bx_issue", b.bx_issue),
            ("branch.blx_imm_issue", b.blx_imm_issue),
            ("branch.ldr_pc_issue", b.ldr_pc_issue),
            ("branch.ldr_pc_not_taken_issue", b.ldr_pc_not_taken_issue),
        ] {
            if v == 0 {
                return bad(key, v, "an issue latency must be at least 1");
            }
        }
        for (key, v) in [("multiply.muls_issue", p.muls_issue), ("multiply.mulls_issue", p.mulls_issue)] {
            if v.contains(&0) {
                return bad(key, format!("{v:?}"), "an issue latency must be at least 1");
            }
        }
        for (key, v) in self.all_values() {
            if v > MAX_LATENCY {
                return bad(key, v, "is too large (at most 2^20)");
            }
        }
        Ok(())
    }

    /// Every numeric parameter with its key (for the range check).
    fn all_values(&self) -> Vec<(&'static str, u32)> {
        let c = &self.core;
        let p = &self.multiply;
        let b = &self.branch;
        let m = &self.memory;
        let mut v = vec![
            ("core.alu_result", c.alu_result),
            ("core.shift_operand_extra", c.shift_operand_extra),
            ("core.reg_shift_issue", c.reg_shift_issue),
            ("core.reg_shift_result", c.reg_shift_result),
            ("core.saturate_result", c.saturate_result),
            ("core.load_result", c.load_result),
            ("core.ldrd_result", c.ldrd_result),
            ("core.ldrd_result_second", c.ldrd_result_second),
            ("core.ldrd_r12_extra_issue", c.ldrd_r12_extra_issue),
            ("core.ldrd_next_mem_stall", c.ldrd_next_mem_stall),
            ("core.strd_issue", c.strd_issue),
            ("core.ldm_issue_base", c.ldm_issue_base),
            ("core.stm_issue_base", c.stm_issue_base),
            ("core.ldm_result_base", c.ldm_result_base),
            ("core.swp_issue", c.swp_issue),
            ("core.swp_result", c.swp_result),
            ("core.mrs_result", c.mrs_result),
            ("core.msr_issue", c.msr_issue),
            ("core.msr_control_issue", c.msr_control_issue),
            ("core.exception_issue", c.exception_issue),
            ("core.retire_offset", c.retire_offset),
            ("core.retire_offset_mem", c.retire_offset_mem),
            ("multiply.mull_issue", p.mull_issue),
            ("multiply.smulxy_result", p.smulxy_result),
            ("multiply.smulxy_resource", p.smulxy_resource),
            ("multiply.smulwy_result", p.smulwy_result),
            ("multiply.smulwy_resource", p.smulwy_resource),
            ("multiply.smlalxy_issue", p.smlalxy_issue),
            ("multiply.smlalxy_result_lo", p.smlalxy_result_lo),
            ("multiply.smlalxy_result_hi", p.smlalxy_result_hi),
            ("multiply.smlalxy_resource", p.smlalxy_resource),
            ("multiply.miaph_result", p.miaph_result),
            ("multiply.miaph_resource", p.miaph_resource),
            ("multiply.miaxy_result", p.miaxy_result),
            ("multiply.miaxy_resource", p.miaxy_resource),
            ("multiply.mar_issue", p.mar_issue),
            ("multiply.mar_result", p.mar_result),
            ("multiply.mar_resource", p.mar_resource),
            ("multiply.mra_result_lo", p.mra_result_lo),
            ("multiply.mra_result_hi", p.mra_result_hi),
            ("multiply.mra_resource", p.mra_resource),
            ("branch.mispredict_penalty_arm", b.mispredict_penalty_arm),
            ("branch.mispredict_penalty_thumb", b.mispredict_penalty_thumb),
            ("branch.bx_issue", b.bx_issue),
            ("branch.blx_imm_issue", b.blx_imm_issue),
            ("branch.dp_pc_extra", b.dp_pc_extra),
            ("branch.ldr_pc_issue", b.ldr_pc_issue),
            ("branch.ldr_pc_not_taken_issue", b.ldr_pc_not_taken_issue),
            ("branch.ldm_pc_issue_base", b.ldm_pc_issue_base),
            ("branch.ldm_pc_not_taken_base", b.ldm_pc_not_taken_base),
            ("branch.thumb_pc_write_extra", b.thumb_pc_write_extra),
            ("memory.latency", m.latency),
            ("memory.word_cycles", m.word_cycles),
            ("memory.write_drain_cycles", m.write_drain_cycles),
        ];
        for (key, arr) in [
            ("multiply.mul_result", p.mul_result),
            ("multiply.mul_resource", p.mul_resource),
            ("multiply.muls_issue", p.muls_issue),
            ("multiply.mull_result_lo", p.mull_result_lo),
            ("multiply.mull_result_hi", p.mull_result_hi),
            ("multiply.mull_resource", p.mull_resource),
            ("multiply.mulls_issue", p.mulls_issue),
            ("multiply.mia_result", p.mia_result),
            ("multiply.mia_resource", p.mia_resource),
        ] {
            v.extend(arr.iter().map(|&x| (key, x)));
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_file_gives_the_defaults() {
        assert_eq!(TimingConfig::from_toml_str("").unwrap(), TimingConfig::default());
    }

    #[test]
    fn keys_override_one_at_a_time() {
        let c = TimingConfig::from_toml_str("[memory]\nlatency = 80\n[multiply]\nmul_result = [3, 4, 5]\n").unwrap();
        assert_eq!(c.memory.latency, 80);
        assert_eq!(c.memory.word_cycles, 3);
        assert_eq!(c.multiply.mul_result, [3, 4, 5]);
        assert_eq!(c.core, CoreConfig::default());
    }

    #[test]
    fn the_toml_form_round_trips() {
        let mut c = TimingConfig::default();
        c.dcache.write_back = false;
        c.branch.btb_entries = 256;
        assert_eq!(TimingConfig::from_toml_str(&c.to_toml_string()).unwrap(), c);
    }

    #[test]
    fn unknown_keys_and_bad_values_name_the_key() {
        let e = TimingConfig::from_toml_str("[memory]\nlatencyy = 3\n").unwrap_err();
        assert!(e.contains("latencyy"), "{e}");
        let e = TimingConfig::from_toml_str("[cache]\n").unwrap_err();
        assert!(e.contains("cache"), "{e}");
        let e = TimingConfig::from_toml_str("[memory]\nlatency = -1\n").unwrap_err();
        assert!(e.contains("latency"), "{e}");
        let e = TimingConfig::from_toml_str("[icache]\nways = 3\n").unwrap_err();
        assert!(e.contains("icache.size_bytes"), "{e}");
        let e = TimingConfig::from_toml_str("[dcache]\nline_bytes = 24\n").unwrap_err();
        assert!(e.contains("dcache.line_bytes"), "{e}");
        // A huge cache is refused before anything is allocated (issue 22).
        let e = TimingConfig::from_toml_str("[dcache]\nsize_bytes = 2147483648\nways = 1\nline_bytes = 4\n").unwrap_err();
        assert!(e.contains("dcache.size_bytes") && e.contains("64 MiB"), "{e}");
        let e = TimingConfig::from_toml_str("[branch]\nbtb_entries = 100\n").unwrap_err();
        assert!(e.contains("branch.btb_entries"), "{e}");
        let e = TimingConfig::from_toml_str("[core]\nstrd_issue = 0\n").unwrap_err();
        assert!(e.contains("core.strd_issue"), "{e}");
        let e = TimingConfig::from_toml_str("[multiply]\nmul_result = [1, 2]\n").unwrap_err();
        assert!(e.contains("mul_result"), "{e}");
        let e = TimingConfig::from_toml_str("[memory]\nlatency = 4000000000\n").unwrap_err();
        assert!(e.contains("memory.latency"), "{e}");
        let e = TimingConfig::from_toml_str("not toml at all").unwrap_err();
        assert!(!e.is_empty());
    }
}

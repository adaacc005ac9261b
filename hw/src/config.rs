//! The hardware's view of a configuration: the model's [`Config`] (scheme, geometry, keys)
//! plus the cycle-mode [`BufferConfig`], checked against what the RTL can build, with every
//! derived width and constant the blocks need.

use streamtrace_model::{BufferConfig, Config, FullPolicy, IsaMode, Replacement, Scheme};
use thiserror::Error;

/// Widest trace-queue register (output buffer + record register) the RTL is built with.
pub const QUEUE_BITS: usize = 512;
/// Longest record one service can produce: AOLC run 17 + miss 66 + EXCEPTION 35 + SYNC 35
/// + padding 7 + marker 128 = 288 bits, rounded up to the record register width.
pub const RECORD_BITS: usize = 320;
/// Largest output buffer that fits next to a maximal record in the queue register.
pub const MAX_OBUF_BITS: u64 = (QUEUE_BITS - RECORD_BITS) as u64 + 32;
/// Widest trace port (port data is a 64-bit bus).
pub const MAX_PORT_BITS: u32 = 64;
/// Most SDC ways (valid/MRU rows are 32-bit buses).
pub const MAX_WAYS: u32 = 32;

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum HwError {
    #[error("configuration '{config}' cannot be built in hardware: {reason}")]
    Unsupported { config: String, reason: String },
    #[error("buffers '{buffers}' cannot be built in hardware: {reason}")]
    Buffers { buffers: String, reason: String },
}

/// Every parameter of one trace module instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HwConfig {
    pub model: Config,
    pub buffers: BufferConfig,
    pub sets: u32,
    pub ways: u32,
    pub lsp_entries: u32,
    /// log2(sets), log2(ways), k = log2(sets * ways).
    pub set_bits: u32,
    pub way_bits: u32,
    pub k: u32,
    pub slw: u32,
    pub max_sl: u32,
    pub shift: u32,
    /// LVSA width (0 for bsdc).
    pub u: u32,
    /// Address bits not sent or stored (0 interworking, 2 ARM only).
    pub low: u32,
    /// Stored SDC address: A[hi-1:low] without A[inf_hi-1:inf_lo] (rSDC only; inf_lo ==
    /// inf_hi for bSDC/eSDC, which store the whole address).
    pub tag_hi: u32,
    pub inf_lo: u32,
    pub inf_hi: u32,
    /// Width of the stored address field of an SDC entry.
    pub tag_bits: u32,
    pub sdb_depth: u32,
    pub obuf_bits: u32,
}

impl HwConfig {
    /// Every service takes at least two cycles: the record is staged in a register between
    /// the compressor and the output buffer (docs/trace-timing.md section 3).
    pub fn staged(&self) -> bool {
        self.buffers.svc_hit >= 2
    }

    /// Every service takes at least three cycles: the compressor is two stages, lookup and
    /// assembly, and the updates that follow a lookup may wait a cycle (encoder.rs).
    pub fn two_stage(&self) -> bool {
        self.buffers.svc_hit >= 3
    }

    /// Check `cfg` and `buffers` against what the RTL realizes; the error says why not.
    pub fn new(cfg: &Config, buffers: &BufferConfig) -> Result<HwConfig, HwError> {
        let unsupported = |reason: String| HwError::Unsupported { config: cfg.to_string(), reason };
        let bad_buf = |reason: String| HwError::Buffers { buffers: buffers.to_string(), reason };
        cfg.validate().map_err(unsupported)?;
        buffers.validate().map_err(bad_buf)?;
        if !cfg.scheme.uses_sdc() {
            return Err(unsupported(format!(
                "the RTL implements the SDC-LSP schemes (bsdc, esdc, rsdc); {} is not one of them",
                cfg.scheme.name()
            )));
        }
        if cfg.repl != Replacement::Mru {
            return Err(unsupported(format!(
                "repl={} is not built: the RTL implements the paper's MRU-bit replacement only (repl=mru)",
                cfg.repl.name()
            )));
        }
        if cfg.hist != 1 {
            return Err(unsupported(format!(
                "hist={} is not built: the LSP is indexed by the previous stream index only (hist=1)",
                cfg.hist
            )));
        }
        if cfg.ways > MAX_WAYS {
            return Err(unsupported(format!("{} ways: the RTL compares at most {MAX_WAYS} ways in parallel", cfg.ways)));
        }
        if cfg.lsp_entries > 65536 {
            return Err(unsupported(format!(
                "{} LSP entries: the RTL supports at most 65536 (its valid bits are flip-flops, cleared in one cycle at a sync)",
                cfg.lsp_entries
            )));
        }
        let sdb_depth = buffers.sdb.ok_or_else(|| bad_buf("sdb=inf is a sizing aid; the RTL needs a depth".into()))?;
        if sdb_depth > 64 {
            return Err(bad_buf(format!("sdb={sdb_depth}: the RTL supports SDB depths 1..=64")));
        }
        let obuf = buffers.obuf.ok_or_else(|| bad_buf("obuf=inf is a sizing aid; the RTL needs a size".into()))?;
        if obuf > MAX_OBUF_BITS {
            return Err(bad_buf(format!(
                "obuf={obuf}: the RTL's trace queue register holds at most {MAX_OBUF_BITS} output-buffer bits"
            )));
        }
        if buffers.port > MAX_PORT_BITS {
            return Err(bad_buf(format!("port={}: at most {MAX_PORT_BITS} pins", buffers.port)));
        }
        let low = match cfg.isa {
            IsaMode::Interworking => 0,
            IsaMode::ArmOnly => 2,
        };
        let set_bits = cfg.set_bits();
        let (u, tag_hi, inf_lo, inf_hi) = match cfg.scheme {
            Scheme::RSdc => {
                let hi = 32 - cfg.u;
                let inf_lo = cfg.shift.max(low).min(hi);
                let inf_hi = (cfg.shift + set_bits).min(hi).max(inf_lo);
                (cfg.u, hi, inf_lo, inf_hi)
            }
            Scheme::ESdc => (cfg.u, 32, 0, 0),
            _ => (0, 32, 0, 0),
        };
        let tag_bits = (tag_hi - low) - (inf_hi - inf_lo);
        Ok(HwConfig {
            model: *cfg,
            buffers: *buffers,
            sets: cfg.sets,
            ways: cfg.ways,
            lsp_entries: cfg.lsp_entries,
            set_bits,
            way_bits: cfg.way_bits(),
            k: cfg.index_bits(),
            slw: cfg.sl_bits(),
            max_sl: cfg.max_sl,
            shift: cfg.shift,
            u,
            low,
            tag_hi,
            inf_lo,
            inf_hi,
            tag_bits,
            sdb_depth,
            obuf_bits: obuf as u32,
        })
    }

    pub fn scheme(&self) -> Scheme {
        self.model.scheme
    }

    pub fn drop_policy(&self) -> bool {
        self.buffers.policy == FullPolicy::Drop
    }

    /// The Verilog top-module name: scheme, geometry, then every non-default key of the
    /// configuration and of the buffers, e.g. `streamtrace_rsdc_32x4_128` or
    /// `streamtrace_rsdc_32x4_128_isa_arm_obuf_96`.
    pub fn module_name(&self) -> String {
        module_name(&self.model, &self.buffers, self.sdb_depth, self.obuf_bits)
    }

    /// The stored address field of an SDC entry for address `a` (software mirror of the
    /// RTL's packing, for tests).
    pub fn stored_tag(&self, a: u32) -> u32 {
        let masked = if self.tag_hi == 32 { a } else { a & ((1u32 << self.tag_hi) - 1) };
        let lower = masked & ((1u32 << self.inf_lo) - 1);
        let upper = (masked as u64 >> self.inf_hi) as u32;
        (((upper as u64) << self.inf_lo) as u32 | lower) >> self.low
    }
}

/// All-ones at least as large as `v` (the mask of the bits `v` needs): the constant a
/// register's next value is masked with so that synthesis builds it no wider than the
/// values it can hold (Yosys cannot bound a register's value by itself).
pub fn amount_mask(v: u64) -> u64 {
    if v == 0 {
        0
    } else {
        u64::MAX >> v.leading_zeros()
    }
}

/// A top-module name: scheme, geometry, then every non-default key of the configuration
/// and of the buffers (SDB/job buffer depth `sdb`, output buffer `obuf`).
pub fn module_name(model: &Config, b: &BufferConfig, sdb: u32, obuf: u32) -> String {
    let mut name = format!("streamtrace_{}", model.to_string().replace(['-', ',', '='], "_"));
    let default = BufferConfig::default();
    let mut extra = |key: &str, v: String, d: String| {
        if v != d {
            name.push_str(&format!("_{key}_{v}"));
        }
    };
    extra("sdb", sdb.to_string(), default.sdb.unwrap_or(0).to_string());
    extra("obuf", obuf.to_string(), default.obuf.unwrap_or(0).to_string());
    extra("port", b.port.to_string(), default.port.to_string());
    extra("ratio", b.ratio.to_string(), default.ratio.to_string());
    extra("svchit", b.svc_hit.to_string(), default.svc_hit.to_string());
    extra("svcmiss", b.svc_miss.to_string(), default.svc_miss.to_string());
    if b.policy == FullPolicy::Drop {
        name.push_str("_drop");
    }
    name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hw(text: &str) -> Result<HwConfig, HwError> {
        HwConfig::new(&text.parse().unwrap(), &BufferConfig::default())
    }

    #[test]
    fn paper_rsdc_entry_is_13_address_bits() {
        let h = hw("rsdc-32x4-128,isa=arm").unwrap();
        assert_eq!((h.k, h.slw, h.tag_bits), (7, 8, 13));
        assert_eq!(h.module_name(), "streamtrace_rsdc_32x4_128_isa_arm");
        // A[19:9] and A[3:2] of 0x020001f4 (trace-format.md 9.3).
        let a = 0x0200_01f4u32;
        assert_eq!(h.stored_tag(a), (((a >> 9) & 0x7FF) << 2) | ((a >> 2) & 3));
        assert_eq!(hw("rsdc-32x4-128").unwrap().tag_bits, 15);
        assert_eq!(hw("bsdc-32x4-128").unwrap().tag_bits, 32);
        assert_eq!(hw("esdc-32x4-128,isa=arm").unwrap().tag_bits, 30);
    }

    #[test]
    fn unrealizable_configurations_say_why() {
        for (text, why) in [
            ("fbase", "SDC-LSP schemes"),
            ("bsdc-32x4-128,repl=lru", "repl=lru"),
            ("rsdc-32x4-128,hist=2", "hist=2"),
            ("bsdc-2x64-128", "64 ways"),
        ] {
            let e = hw(text).unwrap_err().to_string();
            assert!(e.contains(why) && e.contains(text), "{text}: {e}");
        }
        let cfg: Config = "rsdc-32x4-128".parse().unwrap();
        for (b, why) in [("sdb=inf", "sdb=inf"), ("obuf=1000", "obuf=1000"), ("obuf=inf", "obuf=inf")] {
            let e = HwConfig::new(&cfg, &b.parse().unwrap()).unwrap_err().to_string();
            assert!(e.contains(why), "{b}: {e}");
        }
    }
}

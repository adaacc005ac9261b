//! The hardware's view of a `pft` configuration: the model's keys plus the cycle-mode
//! buffers, checked against what the RTL builds, with the derived widths the blocks need.

use streamtrace_model::pft::predict::DirectionPredictor;
use streamtrace_model::pft::PftParams;
use streamtrace_model::{BufferConfig, Config, FullPolicy, IsaMode, Scheme};

use crate::config::{HwError, MAX_OBUF_BITS, MAX_PORT_BITS, RECORD_BITS};

/// The record register's bits: the coder emits at most one byte per step
/// (docs/trace-timing.md section 7, version 1.3).
pub const CODER_RECORD_BITS: usize = 8;
const _: () = assert!(CODER_RECORD_BITS <= RECORD_BITS);

/// Every parameter of one pft trace module instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PftHwConfig {
    pub model: Config,
    pub buffers: BufferConfig,
    pub params: PftParams,
    /// Address bits not sent (0 interworking, 2 ARM only).
    pub low: u32,
    /// Tagged tables and their history lengths (oldest-first order as in `hlen`).
    pub tables: usize,
    pub hlen: Vec<u32>,
    /// log2(tsize): index bits of a tagged table.
    pub index_bits: u32,
    /// log2(bim), log2(itp) and log2(itt) (0 without entries).
    pub bim_bits: u32,
    pub itp_bits: u32,
    pub itt_bits: u32,
    /// Raw bits of an RTC position: log2(rtc) (0 for rtc <= 1).
    pub rtc_pos_bits: u32,
    /// Direction contexts (2 + 8·min(T, 3)); the target contexts follow them.
    pub direction_contexts: usize,
    /// All contexts (direction, the 18 fixed target contexts, one RTC_INDEX per position bit).
    pub contexts: usize,
    pub sdb_depth: u32,
    pub obuf_bits: u32,
}

impl PftHwConfig {
    pub fn new(cfg: &Config, buffers: &BufferConfig) -> Result<PftHwConfig, HwError> {
        let unsupported = |reason: String| HwError::Unsupported { config: cfg.to_string(), reason };
        let bad_buf = |reason: String| HwError::Buffers { buffers: buffers.to_string(), reason };
        cfg.validate().map_err(unsupported)?;
        buffers.validate().map_err(bad_buf)?;
        if cfg.scheme != Scheme::Pft {
            return Err(unsupported(format!("{} is not pft", cfg.scheme.name())));
        }
        let sdb_depth = buffers.sdb.ok_or_else(|| bad_buf("sdb=inf is a sizing aid; the RTL needs a depth".into()))?;
        if sdb_depth > 64 {
            return Err(bad_buf(format!("sdb={sdb_depth}: the RTL supports job buffer depths 1..=64")));
        }
        let obuf = buffers.obuf.ok_or_else(|| bad_buf("obuf=inf is a sizing aid; the RTL needs a size".into()))?;
        if obuf > MAX_OBUF_BITS {
            return Err(bad_buf(format!("obuf={obuf}: the RTL's trace queue holds at most {MAX_OBUF_BITS} output-buffer bits")));
        }
        if buffers.port > MAX_PORT_BITS {
            return Err(bad_buf(format!("port={}: at most {MAX_PORT_BITS} pins", buffers.port)));
        }
        let p = cfg.pft;
        if p.bim > 65536 || p.tsize > 65536 || p.itp > 65536 || p.itt > 65536 {
            return Err(unsupported("tables of more than 65536 entries".into()));
        }
        let low = match cfg.isa {
            IsaMode::Interworking => 0,
            IsaMode::ArmOnly => 2,
        };
        let hlen = p.history_lengths();
        let tables = hlen.len();
        let direction_contexts = DirectionPredictor::contexts(tables);
        Ok(PftHwConfig {
            model: *cfg,
            buffers: *buffers,
            params: p,
            low,
            tables,
            hlen,
            index_bits: p.tsize.trailing_zeros(),
            bim_bits: p.bim.trailing_zeros(),
            itp_bits: if p.itp > 0 { p.itp.trailing_zeros() } else { 0 },
            itt_bits: if p.itt > 0 { p.itt.trailing_zeros() } else { 0 },
            rtc_pos_bits: p.rtc_index_bits(),
            direction_contexts,
            contexts: p.contexts(),
            sdb_depth,
            obuf_bits: obuf as u32,
        })
    }

    pub fn drop_policy(&self) -> bool {
        self.buffers.policy == FullPolicy::Drop
    }

    /// Width of an address field: `32 - u - low` when the upper bits match, else `32 - low`.
    pub fn address_bits(&self, same: bool) -> u32 {
        if same {
            32 - self.params.u - self.low
        } else {
            32 - self.low
        }
    }

    /// The Verilog top-module name (as `HwConfig::module_name`).
    pub fn module_name(&self) -> String {
        crate::config::module_name(&self.model, &self.buffers, self.sdb_depth, self.obuf_bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_pft_derives_its_widths() {
        let h = PftHwConfig::new(&"pft".parse().unwrap(), &BufferConfig::default()).unwrap();
        assert_eq!((h.tables, h.index_bits, h.bim_bits, h.itp_bits, h.itt_bits, h.rtc_pos_bits), (6, 5, 8, 4, 4, 3));
        assert_eq!((h.direction_contexts, h.contexts), (26, 47));
        assert_eq!((h.address_bits(true), h.address_bits(false)), (20, 32));
        assert_eq!(h.module_name(), "streamtrace_pft");
        let e = PftHwConfig::new(&"rsdc-32x4-128".parse().unwrap(), &BufferConfig::default()).unwrap_err();
        assert!(e.to_string().contains("not pft"), "{e}");
        let e = PftHwConfig::new(&"pft".parse().unwrap(), &"obuf=1000".parse().unwrap()).unwrap_err();
        assert!(e.to_string().contains("obuf=1000"), "{e}");
    }
}

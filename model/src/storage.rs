//! Storage cost of a trace module configuration in bits (paper section 4.2), the
//! complexity metric the paper uses before CACTI: 4,042 bits for rSDC-LSP [32x4, 128].

use serde::Serialize;

use crate::config::{Config, Replacement, Scheme};

/// Buffer sizes are cycle-mode parameters (SDB depth, output buffer bits); the paper's
/// sizing for one bit per cycle is 2 entries and 80 bits.
pub const PAPER_SDB_ENTRIES: u32 = 2;
pub const PAPER_OUTPUT_BUFFER_BITS: u32 = 80;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct StorageBits {
    /// Existing SDC entries (N_SET * N_WAY - 1).
    pub sdc_entries: u32,
    /// Bits of one SDC entry: stored address bits + SL + valid + per-entry replacement bits.
    pub sdc_entry_bits: u32,
    /// All SDC bits, including per-set or global replacement state.
    pub sdc: u64,
    /// LSP table plus its index history register(s).
    pub lsp: u64,
    pub lvsa: u64,
    /// AOLC counter (olcmax bits) plus the 4-bit monitor.
    pub aolc: u64,
    /// SA and SL registers of the stream detector.
    pub detector: u64,
    /// Stream descriptor buffer: entries x (SA + SL); for pft the job buffer, 48-bit
    /// control entries and 32-bit address words (docs/trace-timing.md section 7).
    pub sdb: u64,
    pub output_buffer: u64,
    /// TSLZ: the window of 12-bit words; SC-T8HT: the tuple table with its LRU ages. gzip is
    /// software and has none.
    pub competitor: u64,
    /// pft: its predictors, coder and control registers (docs/trace-format.md 11.8).
    pub pft: u64,
    pub total: u64,
}

fn log2(v: u32) -> u32 {
    v.trailing_zeros()
}

/// Storage bits of `cfg` with the given buffer sizes.
pub fn storage_bits(cfg: &Config, sdb_entries: u32, output_buffer_bits: u32) -> StorageBits {
    let addr_bits = 32 - cfg.low_bits();
    let slw = cfg.sl_bits();
    if cfg.scheme == Scheme::Pft {
        // No stream detector: events go straight to the predictors; the job buffer takes
        // the SDB's place.
        let pft = cfg.pft.storage(cfg.sync_period != 0).total();
        let sdb = crate::pft::job_buffer_bits(sdb_entries);
        let output_buffer = output_buffer_bits as u64;
        return StorageBits { pft, sdb, output_buffer, total: pft + sdb + output_buffer, ..Default::default() };
    }
    let mut s = StorageBits {
        detector: (addr_bits + slw) as u64,
        sdb: sdb_entries as u64 * (addr_bits + slw) as u64,
        output_buffer: output_buffer_bits as u64,
        ..Default::default()
    };
    if cfg.scheme.uses_sdc() {
        let k = cfg.index_bits();
        let stored_addr = match cfg.scheme {
            // A[31-u:low] without the set-index bits that iSet XOR SL recovers; the
            // inferred range is clipped to the stored range.
            Scheme::RSdc => {
                let hi = 32 - cfg.u; // exclusive
                let lo = cfg.low_bits();
                let inf_lo = cfg.shift.max(lo);
                let inf_hi = (cfg.shift + log2(cfg.sets)).min(hi);
                (hi - lo) - inf_hi.saturating_sub(inf_lo)
            }
            _ => addr_bits,
        };
        let per_entry_repl = match cfg.repl {
            Replacement::Mru => 1,
            Replacement::Lru => log2(cfg.ways),
            Replacement::Fifo | Replacement::Random => 0,
        };
        let global_repl: u64 = match cfg.repl {
            Replacement::Fifo => cfg.sets as u64 * log2(cfg.ways) as u64,
            Replacement::Random => 16,
            _ => 0,
        };
        s.sdc_entries = cfg.sets * cfg.ways - 1;
        s.sdc_entry_bits = stored_addr + slw + 1 + per_entry_repl;
        s.sdc = s.sdc_entries as u64 * s.sdc_entry_bits as u64 + global_repl;
        s.lsp = cfg.lsp_entries as u64 * k as u64 + cfg.hist as u64 * k as u64;
    }
    match cfg.scheme {
        Scheme::Tslz => s.competitor = cfg.param as u64 * 12,
        Scheme::ScT8ht => {
            // A bSDC without an LSP (MRU, full tags), then M tuples of N indices, each entry
            // with a valid bit and an LRU age of log2(M + 1) bits.
            s.sdc_entries = cfg.sets * cfg.ways - 1;
            s.sdc_entry_bits = addr_bits + slw + 1 + 1;
            s.sdc = s.sdc_entries as u64 * s.sdc_entry_bits as u64;
            let m = cfg.param as u64;
            s.competitor = m * (cfg.tuple as u64 * cfg.index_bits() as u64 + 1 + (cfg.param + 1).trailing_zeros() as u64);
        }
        _ => {}
    }
    if cfg.scheme.enhanced() {
        s.lvsa = cfg.u as u64;
        s.aolc = cfg.olc_max as u64 + 4;
    }
    s.total = s.sdc + s.lsp + s.lvsa + s.aolc + s.competitor + s.detector + s.sdb + s.output_buffer;
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_rsdc_4042_bits() {
        // Section 4.2: SDC 127 x (13 + 8 + 1 + 1) = 2921, LSP 128 x 7 + 7 = 903, AOLC 8 + 4,
        // detector 30 + 8, SDB 2 x 38, output buffer 80, LVSA 12: 4,042 bits.
        let cfg: Config = "rsdc-32x4-128,isa=arm".parse().unwrap();
        let s = storage_bits(&cfg, PAPER_SDB_ENTRIES, PAPER_OUTPUT_BUFFER_BITS);
        assert_eq!((s.sdc_entries, s.sdc_entry_bits, s.sdc), (127, 23, 2921));
        assert_eq!(s.lsp, 903);
        assert_eq!((s.aolc, s.detector, s.sdb, s.lvsa), (12, 38, 76, 12));
        assert_eq!(s.total, 4042);
    }

    #[test]
    fn interworking_and_other_schemes() {
        let iw: Config = "rsdc-32x4-128".parse().unwrap();
        let s = storage_bits(&iw, 2, 80);
        assert_eq!(s.sdc_entry_bits, 25, "A[1:0] stored for Thumb support");
        let b: Config = "bsdc-32x4-128,isa=arm".parse().unwrap();
        assert_eq!(storage_bits(&b, 2, 80).sdc_entry_bits, 30 + 8 + 1 + 1);
        let l: Config = "bsdc-32x4-128,repl=lru,isa=arm".parse().unwrap();
        assert_eq!(storage_bits(&l, 2, 80).sdc_entry_bits, 30 + 8 + 1 + 2);
        let f: Config = "bsdc-32x4-128,repl=fifo,isa=arm".parse().unwrap();
        assert_eq!(storage_bits(&f, 2, 80).sdc, 127 * 39 + 32 * 2);
        let base: Config = "base".parse().unwrap();
        let sb = storage_bits(&base, 2, 80);
        assert_eq!((sb.sdc, sb.lsp, sb.total), (0, 0, 40 + 80 + 80));
        let t: Config = "tslz-256".parse().unwrap();
        assert_eq!(storage_bits(&t, 2, 80).competitor, 256 * 12);
        let h: Config = "sct8ht-128x4-255x8,isa=arm".parse().unwrap();
        let sh = storage_bits(&h, 2, 80);
        assert_eq!((sh.sdc, sh.competitor), (511 * 40, 255 * (8 * 9 + 1 + 8)));
    }

    #[test]
    fn pft_counts_its_job_buffer() {
        // trace-format.md 11.8: the default's 4,753 bits, 2 control entries of 48 bits and 2
        // address words of 32 (trace-timing 1.5), 80 bits of output buffer.
        let p: Config = "pft".parse().unwrap();
        let s = storage_bits(&p, PAPER_SDB_ENTRIES, PAPER_OUTPUT_BUFFER_BITS);
        assert_eq!((s.pft, s.sdb, s.output_buffer, s.total), (4753, 160, 80, 4993));
        assert_eq!(storage_bits(&p, 5, 40).total, 4753 + 5 * (48 + 32) + 40);
        // One entry still has the two words any job may need.
        assert_eq!(storage_bits(&p, 1, 40).total, 4753 + 48 + 2 * 32 + 40);
        assert_eq!((s.detector, s.sdc, s.lsp), (0, 0, 0), "no stream detector, SDC or LSP");
    }
}

//! `streamtrace config`: validate a configuration string, print its canonical form and the
//! parameters derived from it (docs/trace-format.md sections 4-6).

use std::io::Write;

use anyhow::Result;
use serde::Serialize;
use streamtrace_model::storage::{PAPER_OUTPUT_BUFFER_BITS, PAPER_SDB_ENTRIES};
use streamtrace_model::{storage_bits, Config, IsaMode, Scheme, StorageBits};

use crate::io_util::parse_config;
use crate::table::Table;
use crate::ConfigArgs;

#[derive(Serialize)]
struct Sdc {
    sets: u32,
    ways: u32,
    /// N_SET x N_WAY; entry 0 does not exist (index 0 means "miss").
    slots: u32,
    entries: u32,
    shift: u32,
    repl: &'static str,
    lsp_entries: u32,
    hist: u32,
}

#[derive(Serialize)]
struct Enhanced {
    /// LVSA width u: the register predicts A[31:32-u].
    u: u32,
    lvsa_bits: String,
    olc_initial: u32,
    olc_min: u32,
    olc_max: u32,
}

/// Bits of each record form (section 6).
#[derive(Serialize)]
struct RecordBits {
    /// bSDC LSP hit (1) or e/rSDC run record at the initial AOLC width (1 + olc).
    lsp_hit: Option<u32>,
    lsp_run_min: Option<u32>,
    lsp_run_max: Option<u32>,
    sdc_hit: Option<u32>,
    /// Record whose start address is inferred from the previous stream's branch.
    inferred: u32,
    /// Record carrying a full address (bsdc, fbase, base); e/rSDC: with the LVSA predicting
    /// the upper bits, and without.
    address: Option<u32>,
    address_lvsa_hit: Option<u32>,
    address_lvsa_miss: Option<u32>,
    /// NEXS: SL plus 1 to 6 groups of 8 bits.
    nexs_min: Option<u32>,
    nexs_max: Option<u32>,
    /// Escape prefix + type, before any payload.
    escape: u32,
}

#[derive(Serialize)]
struct ConfigReport {
    canonical: String,
    scheme: &'static str,
    description: &'static str,
    index_bits: u32,
    sl_bits: u32,
    max_sl: u32,
    isa: &'static str,
    low_bits: u32,
    sync: u64,
    sdc: Option<Sdc>,
    enhanced: Option<Enhanced>,
    record_bits: RecordBits,
    competitor: Option<CompetitorRecords>,
    /// Storage with the paper's buffer sizing (SDB 2 entries, 80-bit output buffer).
    storage: StorageBits,
    /// pft only: its keys and storage by component (docs/trace-format.md 11.1, 11.8).
    #[serde(skip_serializing_if = "Option::is_none")]
    pft: Option<PftReport>,
}

#[derive(Serialize)]
struct PftReport {
    bim: u32,
    tsize: u32,
    tag: u32,
    hlen: Vec<u32>,
    ras: u32,
    itp: u32,
    itt: u32,
    ttag: u32,
    tw: u32,
    rtc: u32,
    u: u32,
    rate: u32,
    contexts: usize,
    storage: streamtrace_model::pft::PftStorage,
}

fn pft_report(cfg: &Config) -> Option<PftReport> {
    (cfg.scheme == Scheme::Pft).then(|| {
        let p = &cfg.pft;
        PftReport {
            bim: p.bim,
            tsize: p.tsize,
            tag: p.tag,
            hlen: p.history_lengths(),
            ras: p.ras,
            itp: p.itp,
            itt: p.itt,
            ttag: p.ttag,
            tw: p.tw,
            rtc: p.rtc,
            u: p.u,
            rate: p.rate,
            contexts: p.contexts(),
            storage: p.storage(cfg.sync_period != 0),
        }
    })
}

fn description(s: Scheme) -> &'static str {
    match s {
        Scheme::FBase => "every stream as a full descriptor (SA, SL)",
        Scheme::Base => "(SA, SL), or (-, SL) when SA is inferable",
        Scheme::Nexs => "Nexus-like: SL plus the XOR difference of SA in 6-bit groups",
        Scheme::BSdc => "stream descriptor cache + last stream predictor (bSDC-LSP)",
        Scheme::ESdc => "bSDC-LSP + LVSA in miss records + AOLC runs of LSP hits (eSDC-LSP)",
        Scheme::RSdc => "eSDC-LSP + continuously updated LVSA, reduced SDC entries (rSDC-LSP)",
        Scheme::Tslz => "TSLZ: stream words (header, difference-encoded address) through a hardware LZ77",
        Scheme::ScT8ht => "SC-T8HT: stream descriptor cache + tuple history table",
        Scheme::Gzip => "SW-GZIP: BASE records through gzip (the software bound)",
        Scheme::Pft => "predictor-filtered trace: TAGE-like direction predictor, return stack and indirect target predictor mirrored by the decoder; hits and misses range-coded by confidence",
    }
}

/// The record forms of the competitor schemes (section 10).
#[derive(Serialize)]
struct CompetitorRecords {
    /// TSLZ window in 12-bit words, and its fixed record size.
    window: Option<u32>,
    lz_record: Option<u32>,
    /// SC-T8HT: tuple history entries and tuple length; record sizes of a tuple hit and miss
    /// (without the descriptors of SDC misses, each SL + address).
    tuple_entries: Option<u32>,
    tuple_length: Option<u32>,
    tuple_hit: Option<u32>,
    tuple_miss: Option<u32>,
    sdc_miss_descriptor: Option<u32>,
    gzip_level: Option<u32>,
}

fn competitor_records(cfg: &Config) -> Option<CompetitorRecords> {
    let mut r = CompetitorRecords {
        window: None,
        lz_record: None,
        tuple_entries: None,
        tuple_length: None,
        tuple_hit: None,
        tuple_miss: None,
        sdc_miss_descriptor: None,
        gzip_level: None,
    };
    match cfg.scheme {
        Scheme::Tslz => {
            r.window = Some(cfg.param);
            r.lz_record = Some(cfg.param.trailing_zeros() + 7 + 12);
        }
        Scheme::ScT8ht => {
            let ib = (cfg.param + 1).trailing_zeros();
            r.tuple_entries = Some(cfg.param);
            r.tuple_length = Some(cfg.tuple);
            r.tuple_hit = Some(ib);
            r.tuple_miss = Some(ib + cfg.tuple * cfg.index_bits());
            r.sdc_miss_descriptor = Some(cfg.sl_bits() + 32 - cfg.low_bits());
        }
        Scheme::Gzip => r.gzip_level = Some(cfg.param),
        _ => return None,
    }
    Some(r)
}

fn report(cfg: &Config) -> ConfigReport {
    let k = cfg.index_bits();
    let slw = cfg.sl_bits();
    let low = cfg.low_bits();
    let sdc = cfg.scheme.uses_sdc();
    let enh = cfg.scheme.enhanced();
    let prefix = if sdc { 1 + k + slw } else { slw };
    let record_bits = RecordBits {
        lsp_hit: sdc.then(|| if enh { 1 + cfg.olc_init } else { 1 }),
        lsp_run_min: enh.then_some(1 + cfg.olc_min),
        lsp_run_max: enh.then_some(1 + cfg.olc_max),
        sdc_hit: sdc.then_some(1 + k),
        inferred: prefix,
        address: match cfg.scheme {
            Scheme::FBase | Scheme::Base | Scheme::BSdc => Some(prefix + 32),
            _ => None,
        },
        address_lvsa_hit: enh.then_some(prefix + 1 + 32 - cfg.u - low),
        address_lvsa_miss: enh.then_some(prefix + 1 + 32 - low),
        nexs_min: (cfg.scheme == Scheme::Nexs).then_some(slw + 8),
        nexs_max: (cfg.scheme == Scheme::Nexs).then_some(slw + 48),
        escape: prefix + 2,
    };
    ConfigReport {
        canonical: cfg.to_string(),
        scheme: cfg.scheme.name(),
        description: description(cfg.scheme),
        index_bits: k,
        sl_bits: slw,
        max_sl: cfg.max_sl,
        isa: match cfg.isa {
            IsaMode::Interworking => "iw",
            IsaMode::ArmOnly => "arm",
        },
        low_bits: low,
        sync: cfg.sync_period,
        sdc: sdc.then(|| Sdc {
            sets: cfg.sets,
            ways: cfg.ways,
            slots: cfg.sets * cfg.ways,
            entries: cfg.sets * cfg.ways - 1,
            shift: cfg.shift,
            repl: cfg.repl.name(),
            lsp_entries: cfg.lsp_entries,
            hist: cfg.hist,
        }),
        enhanced: enh.then(|| Enhanced {
            u: cfg.u,
            lvsa_bits: format!("A[31:{}]", 32 - cfg.u),
            olc_initial: cfg.olc_init,
            olc_min: cfg.olc_min,
            olc_max: cfg.olc_max,
        }),
        record_bits,
        competitor: competitor_records(cfg),
        storage: storage_bits(cfg, PAPER_SDB_ENTRIES, PAPER_OUTPUT_BUFFER_BITS),
        pft: pft_report(cfg),
    }
}

pub fn run(args: &ConfigArgs) -> Result<()> {
    let cfg = parse_config(&args.config)?;
    let r = report(&cfg);
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &r)?;
        writeln!(out)?;
        return Ok(());
    }
    let mut t = Table::key_value("parameter", "value");
    let mut row = |k: &str, v: String| t.row([k.to_string(), v]);
    row("canonical", r.canonical.clone());
    row("scheme", format!("{}: {}", r.scheme, r.description));
    if let Some(s) = &r.sdc {
        row(
            "SDC",
            format!(
                "{} sets x {} ways = {} slots, {} entries (index 0 means miss)",
                s.sets, s.ways, s.slots, s.entries
            ),
        );
        row("index bits k", r.index_bits.to_string());
        row(
            "SDC hash",
            format!("iSet = ((A >> {}) XOR SL) AND {}", s.shift, s.sets - 1),
        );
        row("replacement", s.repl.to_string());
        row(
            "LSP",
            format!("{} entries, history of {} index(es)", s.lsp_entries, s.hist),
        );
    }
    if let Some(c) = &r.competitor {
        if let (Some(w), Some(b)) = (c.window, c.lz_record) {
            row("LZ window", format!("{w} words of 12 bits; records index | length(7) | word(12) = {b} bits"));
        }
        if let (Some(m), Some(n), Some(h), Some(mi), Some(d)) =
            (c.tuple_entries, c.tuple_length, c.tuple_hit, c.tuple_miss, c.sdc_miss_descriptor)
        {
            row("SDC", format!("{} sets x {} ways, index bits {}", cfg.sets, cfg.ways, r.index_bits));
            row("tuple history", format!("{m} entries of {n}-tuples; hit {h} bits, miss {mi} bits"));
            row("SDC miss descriptor", format!("{d} bits (SL + address) after its tuple record"));
        }
        if let Some(l) = c.gzip_level {
            row("gzip level", l.to_string());
        }
    }
    if let Some(p) = &r.pft {
        row("direction", format!(
            "bimodal {} x 2 bits + {} tagged tables of {} x (3-bit counter, {}-bit tag, useful), histories {:?}",
            p.bim, p.hlen.len(), p.tsize, p.tag, p.hlen
        ));
        row("targets", format!(
            "RAS {} deep, ITP {} base entries (with confidence) + {} tagged entries ({}-bit tags, useful, 8-bit path; targets as {}), recent-target cache {} (entries as the ITP's)",
            p.ras, p.itp, p.itt, p.ttag,
            if p.tw >= 32 { "32 bits".to_string() } else { format!("{} low bits + top-region flag", p.tw) },
            p.rtc
        ));
        row("coder", format!(
            "{} contexts of {} bits, adaptation shift {}, address register u = {}",
            p.contexts,
            streamtrace_model::pft::coder::PROB_BITS,
            p.rate,
            p.u
        ));
        let st = &p.storage;
        row("pft storage", format!(
            "{} (direction {}, RAS {}, ITP {}, RTC {}, coder {}, control {})",
            st.total(), st.direction, st.ras, st.itp, st.rtc, st.coder, st.control
        ));
    } else {
        row("SL bits", format!("{} (maxSL {})", r.sl_bits, r.max_sl));
    }
    if let Some(e) = &r.enhanced {
        row(
            "LVSA",
            format!("u = {} bits, predicts {}", e.u, e.lvsa_bits),
        );
        row(
            "AOLC",
            format!(
                "width starts at {}, adapts within {}..={} bits",
                e.olc_initial, e.olc_min, e.olc_max
            ),
        );
    }
    row(
        "isa",
        match cfg.isa {
            IsaMode::Interworking => "iw: ARM and Thumb (address fields carry A[1:0])".to_string(),
            IsaMode::ArmOnly => "arm: ARM only (A[1:0] not sent)".to_string(),
        },
    );
    row(
        "sync",
        if r.sync == 0 {
            "off".to_string()
        } else {
            format!("every {} instructions", r.sync)
        },
    );
    let b = &r.record_bits;
    let mut forms = Vec::new();
    if let (Some(lo), Some(hi)) = (b.lsp_run_min, b.lsp_run_max) {
        forms.push(format!(
            "LSP-hit run {}..={} (initially {})",
            lo,
            hi,
            b.lsp_hit.unwrap_or(0)
        ));
    } else if let Some(h) = b.lsp_hit {
        forms.push(format!("LSP hit {h}"));
    }
    if let Some(h) = b.sdc_hit {
        forms.push(format!("SDC hit {h}"));
    }
    if cfg.scheme != Scheme::FBase {
        forms.push(format!("inferred {}", b.inferred));
    }
    if let Some(a) = b.address {
        forms.push(format!("address {a}"));
    }
    if let (Some(h), Some(m)) = (b.address_lvsa_hit, b.address_lvsa_miss) {
        forms.push(format!("address {h} (LVSA hit) or {m}"));
    }
    if let (Some(lo), Some(hi)) = (b.nexs_min, b.nexs_max) {
        forms.push(format!("address {lo}..={hi}"));
    }
    forms.push(format!("escape {} + payload", b.escape));
    if r.competitor.is_none() && r.pft.is_none() {
        row("record bits", forms.join(", "));
    }
    let s = &r.storage;
    if r.sdc.is_some() {
        row("SDC entry bits", s.sdc_entry_bits.to_string());
    }
    if r.pft.is_some() {
        row("storage bits", format!("{} (pft {}, job buffer {}, output buffer {})", s.total, s.pft, s.sdb, s.output_buffer));
        t.print(&mut out)?;
        return Ok(());
    }
    row(
        "storage bits",
        format!(
            "{} (SDC {}, LSP {}, LVSA {}, AOLC {}, LZ window / tuple table {}, detector {}, SDB {}, output buffer {})",
            s.total, s.sdc, s.lsp, s.lvsa, s.aolc, s.competitor, s.detector, s.sdb, s.output_buffer
        ),
    );
    t.print(&mut out)?;
    Ok(())
}

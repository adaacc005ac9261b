//! `streamtrace encode`: events file -> trace bytes + statistics.

use std::io::Write;

use anyhow::{Context, Result};
use streamtrace_model::{Encoder, Stats};

use crate::io_util::{parse_config, pct, thousands, write_file, EventLines};
use crate::table::Table;
use crate::EncodeArgs;

pub fn run(args: &EncodeArgs) -> Result<()> {
    let cfg = parse_config(&args.config)?;
    let mut events = EventLines::open(&args.events)?;
    let mut enc = Encoder::new(&cfg);
    while let Some((ev, line)) = events.next_event()? {
        enc.push(&ev)
            .with_context(|| format!("{}:{line}", events.name()))?;
    }
    let (trace, stats) = enc.finish();
    write_file(&args.output, &trace.bytes)?;
    if let Some(path) = &args.stats_out {
        let json = serde_json::to_string_pretty(&stats)?;
        write_file(path, format!("{json}\n").as_bytes())?;
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &stats)?;
        writeln!(out)?;
    } else {
        writeln!(
            out,
            "{}: {} bytes ({} bits) from {}",
            args.output.display(),
            thousands(trace.bytes.len() as u64),
            thousands(trace.bit_len),
            args.events.display()
        )?;
        print_stats(&mut out, &stats)?;
    }
    Ok(())
}

/// The human summary of one encoder run.
pub fn print_stats(out: &mut impl Write, s: &Stats) -> std::io::Result<()> {
    let mut kv = Table::key_value("statistic", "value");
    kv.row(["configuration".to_string(), s.config.clone()]);
    kv.row(["instructions".to_string(), thousands(s.instructions)]);
    kv.row(["streams".to_string(), thousands(s.streams)]);
    kv.row(["unique streams".to_string(), thousands(s.unique_streams)]);
    kv.row(["max SL".to_string(), s.max_sl.to_string()]);
    kv.row(["avg SL".to_string(), format!("{:.2}", s.avg_sl)]);
    if s.sdc_lookups > 0 {
        kv.row(["hrSDC".to_string(), format!("{:.4}", s.hr_sdc)]);
        kv.row(["hrLSP".to_string(), format!("{:.4}", s.hr_lsp)]);
        if s.forced_misses > 0 {
            kv.row([
                "forced misses (LVSA)".to_string(),
                thousands(s.forced_misses),
            ]);
        }
        if s.run_records > 0 {
            kv.row(["LSP-hit run records".to_string(), thousands(s.run_records)]);
            kv.row(["AOLC resizes".to_string(), thousands(s.aolc_resizes)]);
        }
    }
    kv.row(["address records".to_string(), thousands(s.address_records)]);
    if s.lvsa_hits > 0 {
        kv.row(["  LVSA-compressed".to_string(), thousands(s.lvsa_hits)]);
    }
    kv.row([
        "inferred-address records".to_string(),
        thousands(s.inferred_records),
    ]);
    kv.row(["exceptions".to_string(), thousands(s.exceptions)]);
    kv.row(["syncs".to_string(), thousands(s.syncs)]);
    kv.print(out)?;
    writeln!(out)?;
    let total = s.total_bits;
    let per = |b: u64| {
        if s.instructions == 0 {
            0.0
        } else {
            b as f64 / s.instructions as f64
        }
    };
    let mut t = Table::new(["component", "bits", "share", "bits/instr"]);
    for (name, bits) in [
        ("hLSPt (LSP hits)", s.bits.lsp_hit),
        ("hSDCt (SDC hits)", s.bits.sdc_hit),
        ("mSDCt (misses)", s.bits.miss),
        ("escape (END, SYNC, ...)", s.bits.escape),
    ] {
        t.row([
            name.to_string(),
            thousands(bits),
            format!("{:.1}%", pct(bits, total)),
            format!("{:.4}", per(bits)),
        ]);
    }
    t.row([
        "total".to_string(),
        thousands(total),
        "100.0%".to_string(),
        format!("{:.4}", s.bits_per_instruction),
    ]);
    t.print(out)
}

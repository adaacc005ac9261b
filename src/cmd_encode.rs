//! `streamtrace encode`: events file -> trace bytes + statistics.

use std::io::Write;

use anyhow::{Context, Result};
use streamtrace_model::{Encoder, Stats};

use crate::io_util::{is_std, output_name, parse_config, pct, thousands, write_file, EventLines};
use crate::trace_file::write_trace;
use streamtrace_model::container::ProgramIdentity;
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
    // An events file names no program: the trace file records no identity.
    write_trace(&args.output, &cfg, ProgramIdentity::None, &trace.bytes, stats.instructions, args.raw)?;
    if let Some(path) = &args.stats_out {
        let json = serde_json::to_string_pretty(&stats)?;
        write_file(path, format!("{json}\n").as_bytes())?;
    }
    // With the trace on stdout (`-o -`), the summary goes to stderr.
    let mut out: Box<dyn Write> =
        if is_std(&args.output) { Box::new(std::io::stderr().lock()) } else { Box::new(std::io::stdout().lock()) };
    if args.json {
        serde_json::to_writer_pretty(&mut out, &stats)?;
        writeln!(out)?;
    } else {
        writeln!(
            out,
            "{}: {}{} bytes ({} bits) from {}",
            output_name(&args.output),
            if args.raw { "" } else { "trace file, stream of " },
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
    if let Some(p) = &s.pft {
        return print_pft_stats(out, s, p);
    }
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

/// pft has no streams: its points, predictor hit rates and the information of each component
/// (docs/trace-format.md section 11).
fn print_pft_stats(out: &mut impl Write, s: &Stats, p: &streamtrace_model::pft::PftStats) -> std::io::Result<()> {
    let rate = |miss: u64, all: u64| if all == 0 { "-".to_string() } else { format!("{:.4}", 1.0 - miss as f64 / all as f64) };
    let mut kv = Table::key_value("statistic", "value");
    kv.row(["configuration".to_string(), s.config.clone()]);
    kv.row(["instructions".to_string(), thousands(s.instructions)]);
    kv.row(["slots (virtual)".to_string(), format!("{} ({})", thousands(p.slots), thousands(p.virtual_slots))]);
    kv.row(["direction points".to_string(), thousands(p.direction_points)]);
    kv.row(["  hit rate".to_string(), rate(p.direction_misses, p.direction_points)]);
    kv.row(["return points".to_string(), thousands(p.return_points)]);
    kv.row(["  hit rate".to_string(), rate(p.return_misses, p.return_points)]);
    kv.row(["indirect points".to_string(), thousands(p.indirect_points)]);
    kv.row(["  hit rate".to_string(), rate(p.indirect_misses, p.indirect_points)]);
    kv.row([
        "missed targets sent as alternate / RAS top / recent / offset".to_string(),
        format!(
            "{} / {} / {} / {}",
            thousands(p.target_alt),
            thousands(p.target_ras_top),
            thousands(p.target_recent),
            thousands(p.target_offset)
        ),
    ]);
    kv.row(["exceptions".to_string(), thousands(s.exceptions)]);
    kv.row(["syncs".to_string(), thousands(s.syncs)]);
    kv.print(out)?;
    writeln!(out)?;
    let per = |b: f64| if s.instructions == 0 { 0.0 } else { b / s.instructions as f64 };
    let info = p.direction_bits + p.target_bits + p.address_bits + p.escape_flag_bits;
    let mut t = Table::new(["component (information)", "bits", "share", "bits/instr"]);
    for (name, bits) in [
        ("direction outcomes", p.direction_bits),
        ("target hits", p.target_bits),
        ("missed targets, start/vector addresses", p.address_bits),
        ("escape share of slot symbols", p.escape_flag_bits),
        ("coder flush, stuffing, escapes, markers", s.total_bits as f64 - info),
    ] {
        t.row([
            name.to_string(),
            thousands(bits.round().max(0.0) as u64),
            format!("{:.1}%", 100.0 * bits / s.total_bits.max(1) as f64),
            format!("{:.5}", per(bits)),
        ]);
    }
    t.row(["total (bytes on the port)".to_string(), thousands(s.total_bits), "100.0%".to_string(), format!("{:.5}", s.bits_per_instruction)]);
    t.print(out)
}

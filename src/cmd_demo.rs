//! `streamtrace demo`: the main job on a built-in program. Generates a synthetic ARM/Thumb
//! program and run (sw-decoder's `synthetic` module), then for each configuration encodes,
//! decodes, verifies address for address and prints a comparison.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use streamtrace_model::{Config, Encoder, IsaMode, RetireEvent, Stats};
use streamtrace_sw_decoder::synthetic::{generate, SyntheticRun, SyntheticSpec};
use streamtrace_sw_decoder::{decode_trace, verify_addresses};

use crate::io_util::{fmt_iw, parse_config, pct, thousands};
use crate::table::Table;
use crate::DemoArgs;

pub const DEFAULT_CONFIGS: [&str; 6] = [
    "fbase",
    "base",
    "nexs",
    "bsdc-32x4-128",
    "esdc-32x4-128",
    "rsdc-32x4-128",
];

#[derive(Serialize)]
struct Program {
    seed: u64,
    instructions: u64,
    arm_words: u32,
    thumb_halfwords: u32,
    /// `isa=arm` configurations run on an ARM-only variant of the same program.
    arm_only_variant: bool,
    generate_seconds: f64,
}

#[derive(Serialize)]
struct Row {
    config: String,
    bits_per_instruction: f64,
    total_bits: u64,
    hr_sdc: Option<f64>,
    hr_lsp: Option<f64>,
    /// Share of all trace bits, in percent.
    msdct_pct: f64,
    hsdct_pct: f64,
    hlspt_pct: f64,
    escape_pct: f64,
    verified: bool,
    problem: Option<String>,
    encode_seconds: f64,
    decode_seconds: f64,
    encode_mips: f64,
    decode_mips: f64,
    stats: Stats,
}

#[derive(Serialize)]
struct Report {
    program: Program,
    results: Vec<Row>,
}

fn mips(n: u64, d: Duration) -> f64 {
    let s = d.as_secs_f64();
    if s > 0.0 {
        n as f64 / s / 1e6
    } else {
        0.0
    }
}

/// Encode, decode and verify one configuration.
fn run_config(cfg: &Config, run: &SyntheticRun) -> Row {
    let events: &[RetireEvent] = &run.events;
    let mut problem = None;
    let t0 = Instant::now();
    let mut enc = Encoder::new(cfg);
    if let Err(e) = enc.push_all(events) {
        problem = Some(format!("encode: {e}"));
    }
    let (trace, stats) = enc.finish();
    let t_enc = t0.elapsed();

    let t1 = Instant::now();
    let decoded = decode_trace(cfg, &trace.bytes, &run.image, false);
    let t_dec = t1.elapsed();
    if let Some(e) = decoded.errors.first() {
        problem.get_or_insert_with(|| format!("decode: {e}"));
    }
    if problem.is_none() && !decoded.ended {
        problem = Some("decode: no END record".into());
    }
    if problem.is_none() {
        if let Err(m) = verify_addresses(&decoded.addresses, events) {
            problem = Some(format!(
                "instruction {}: expected {}, decoded {}",
                m.index,
                m.expected.map(fmt_iw).unwrap_or_else(|| "nothing".into()),
                m.got.map(fmt_iw).unwrap_or_else(|| "nothing".into()),
            ));
        }
    }
    let total = stats.total_bits;
    let sdc = cfg.scheme.uses_sdc();
    Row {
        config: cfg.to_string(),
        bits_per_instruction: stats.bits_per_instruction,
        total_bits: total,
        hr_sdc: sdc.then_some(stats.hr_sdc),
        hr_lsp: sdc.then_some(stats.hr_lsp),
        msdct_pct: pct(stats.bits.miss, total),
        hsdct_pct: pct(stats.bits.sdc_hit, total),
        hlspt_pct: pct(stats.bits.lsp_hit, total),
        escape_pct: pct(stats.bits.escape, total),
        verified: problem.is_none(),
        problem,
        encode_seconds: t_enc.as_secs_f64(),
        decode_seconds: t_dec.as_secs_f64(),
        encode_mips: mips(events.len() as u64, t_enc),
        decode_mips: mips(events.len() as u64, t_dec),
        stats,
    }
}

/// Largest `-n`: the demo holds the run's events (twice with an ARM-only configuration), the
/// trace and the decoded addresses in memory, so the cap keeps it well below 1 GiB; clap
/// rejects a larger value as a usage error naming this limit.
pub const MAX_INSTRUCTIONS: u64 = 10_000_000;

pub fn run(args: &DemoArgs) -> Result<()> {
    let texts: Vec<String> = if args.configs.is_empty() {
        DEFAULT_CONFIGS.iter().map(|s| s.to_string()).collect()
    } else {
        args.configs.clone()
    };
    let configs = texts
        .iter()
        .map(|t| parse_config(t))
        .collect::<Result<Vec<Config>>>()?;
    let need_arm_only = configs.iter().any(|c| c.isa == IsaMode::ArmOnly);

    let bar = if std::io::stderr().is_terminal() {
        let b = ProgressBar::new(configs.len() as u64 + 1);
        b.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}",
            )
            .expect("static template")
            .progress_chars("=> "),
        );
        b.enable_steady_tick(Duration::from_millis(120));
        b
    } else {
        ProgressBar::hidden()
    };

    bar.set_message(format!(
        "generating {} instructions",
        thousands(args.instructions)
    ));
    // In range (clap checks 1..=MAX_INSTRUCTIONS), so it fits a usize.
    let spec = SyntheticSpec::new(args.seed, args.instructions as usize);
    let t0 = Instant::now();
    let run_iw = generate(&spec)?;
    let run_arm = need_arm_only.then(|| generate(&spec.arm_only())).transpose()?;
    let program = Program {
        seed: args.seed,
        instructions: args.instructions,
        arm_words: spec.arm_words,
        thumb_halfwords: spec.thumb_halfwords,
        arm_only_variant: need_arm_only,
        generate_seconds: t0.elapsed().as_secs_f64(),
    };
    bar.inc(1);

    // Touch the address buffer once so the first configuration's decode time does not
    // include page faults the others do not pay.
    let mut rows = Vec::new();
    for cfg in &configs {
        bar.set_message(format!("{cfg}: encode, decode, verify"));
        let run = match (cfg.isa, &run_arm) {
            (IsaMode::ArmOnly, Some(r)) => r,
            _ => &run_iw,
        };
        rows.push(run_config(cfg, run));
        bar.inc(1);
    }
    bar.finish_and_clear();

    let failed: Vec<&Row> = rows.iter().filter(|r| !r.verified).collect();
    let failures: Vec<String> = failed
        .iter()
        .map(|r| format!("{}: {}", r.config, r.problem.as_deref().unwrap_or("?")))
        .collect();
    let mut out = std::io::stdout().lock();
    let report = Report {
        program,
        results: rows,
    };
    if args.json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
    } else if args.csv {
        csv_table(&report.results).print_csv(&mut out)?;
    } else {
        print_text(&mut out, &report)?;
    }
    out.flush()?;
    if !failures.is_empty() {
        bail!(
            "verification failed for {} configuration(s): {}",
            failures.len(),
            failures.join("; ")
        );
    }
    Ok(())
}

fn opt(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.3}")).unwrap_or_else(|| "-".into())
}

fn print_text(out: &mut impl Write, r: &Report) -> std::io::Result<()> {
    let p = &r.program;
    writeln!(
        out,
        "synthetic program (seed {}): {} ARM words + {} Thumb halfwords, {} retired instructions, generated in {:.2} s",
        p.seed,
        thousands(p.arm_words as u64),
        thousands(p.thumb_halfwords as u64),
        thousands(p.instructions),
        p.generate_seconds
    )?;
    writeln!(out)?;
    let mut t = Table::new([
        "config",
        "bits/instr",
        "hrSDC",
        "hrLSP",
        "mSDCt",
        "hSDCt",
        "hLSPt",
        "esc",
        "verified",
        "enc Mi/s",
        "dec Mi/s",
    ]);
    for row in &r.results {
        t.row([
            row.config.clone(),
            format!("{:.4}", row.bits_per_instruction),
            opt(row.hr_sdc),
            opt(row.hr_lsp),
            format!("{:.1}%", row.msdct_pct),
            format!("{:.1}%", row.hsdct_pct),
            format!("{:.1}%", row.hlspt_pct),
            format!("{:.1}%", row.escape_pct),
            if row.verified {
                "yes".into()
            } else {
                "NO".into()
            },
            format!("{:.1}", row.encode_mips),
            format!("{:.1}", row.decode_mips),
        ]);
    }
    t.print(out)?;
    writeln!(out)?;
    writeln!(
        out,
        "mSDCt/hSDCt/hLSPt/esc: share of trace bits in SDC-miss (and baseline) records, SDC-hit records, \
LSP-hit records, escapes. Throughput is wall clock on one core."
    )?;
    let ok = r.results.iter().filter(|x| x.verified).count();
    writeln!(
        out,
        "verified: {ok} of {} configurations decode to the exact instruction address sequence",
        r.results.len()
    )
}

fn csv_table(rows: &[Row]) -> Table {
    let mut t = Table::new([
        "config",
        "bits_per_instruction",
        "total_bits",
        "hr_sdc",
        "hr_lsp",
        "msdct_pct",
        "hsdct_pct",
        "hlspt_pct",
        "escape_pct",
        "verified",
        "encode_mips",
        "decode_mips",
        "instructions",
        "streams",
        "unique_streams",
    ]);
    let o = |v: Option<f64>| v.map(|x| format!("{x:.6}")).unwrap_or_default();
    for r in rows {
        t.row([
            r.config.clone(),
            format!("{:.6}", r.bits_per_instruction),
            r.total_bits.to_string(),
            o(r.hr_sdc),
            o(r.hr_lsp),
            format!("{:.3}", r.msdct_pct),
            format!("{:.3}", r.hsdct_pct),
            format!("{:.3}", r.hlspt_pct),
            format!("{:.3}", r.escape_pct),
            r.verified.to_string(),
            format!("{:.2}", r.encode_mips),
            format!("{:.2}", r.decode_mips),
            r.stats.instructions.to_string(),
            r.stats.streams.to_string(),
            r.stats.unique_streams.to_string(),
        ]);
    }
    t
}

//! `streamtrace report schemes`: every configuration of a list over the test programs from
//! one functional run per program (sim::sweep::schemes), with weighted averages, storage,
//! per-program bits, pft's predictor statistics and a Pareto plot.

use std::io::{self, Write};
use std::time::Instant;

use anyhow::{anyhow, Context, Result};
use rayon::prelude::*;
use streamtrace_model::{Config, Scheme};
use streamtrace_sim::sweep::plot::{write_log_x_plot, write_plots};
use streamtrace_sim::sweep::programs_from_manifest;
use streamtrace_sim::sweep::schemes::{measure_schemes, sweep_results, ProgramSchemes, SchemeOptions};
use streamtrace_sim::TimingConfig;

use crate::cmd_report::{print_tables, Rows, SchemesReportArgs};
use crate::cmd_sweep::expand_config_list;
use crate::io_util::thousands;

/// Configurations shown program by program when present (the rest are in CSV and JSON).
const HEADLINE: [&str; 5] = ["pft", "rsdc-32x4-128", "tslz-1024", "gzip-1", "sct8ht-128x4-255x8"];

pub fn run(a: &SchemesReportArgs) -> Result<()> {
    let configs = expand_config_list(&a.configs)?;
    let buffers = match &a.buffers {
        Some(b) => Some(b.parse::<streamtrace_model::BufferConfig>().map_err(|e| crate::usage::usage(format!("--buffers {b}: {e}")))?),
        None => None,
    };
    let timing = match a.timing.as_deref() {
        None => None,
        Some("") => Some(TimingConfig::default()),
        Some(path) => Some(TimingConfig::from_toml_file(std::path::Path::new(path))?),
    };
    let opts = SchemeOptions { max_insns: a.max_insns.unwrap_or(u64::MAX), buffers, timing };
    let programs = programs_from_manifest(&a.common.manifest()?).map_err(|e| anyhow!("{e}"))?;
    for name in &a.common.only {
        if !programs.iter().any(|p| &p.name == name) {
            crate::usage::bail_usage!("--program {name}: not in {}", a.common.programs.display());
        }
    }
    let chosen: Vec<_> = programs.iter().filter(|p| a.common.only.is_empty() || a.common.only.contains(&p.name)).collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(a.common.jobs.unwrap_or(0))
        .build()
        .context("starting worker threads")?;
    let start = Instant::now();
    eprintln!("{} configurations over {} programs", configs.len(), chosen.len());
    let results: Vec<ProgramSchemes> = pool.install(|| {
        chosen
            .par_iter()
            .map(|p| {
                let t = Instant::now();
                let r = measure_schemes(p, &configs, &opts).map_err(|e| anyhow!("{e}"))?;
                eprintln!("{}: {} instructions, {:.1} s", r.program, thousands(r.instructions), t.elapsed().as_secs_f64());
                Ok(r)
            })
            .collect::<Result<_>>()
    })?;
    let seconds = start.elapsed().as_secs_f64();
    let summary = summarize(&configs, &results);
    let v = serde_json::json!({
        "max_insns": a.max_insns,
        "seconds": seconds,
        "summary": summary.iter().map(|s| serde_json::json!({
            "config": s.config.to_string(), "storage_bits": s.storage_bits,
            "bits_per_instruction": s.average, "min": s.min, "max": s.max,
        })).collect::<Vec<_>>(),
        "programs": results,
    });
    if let Some(p) = &a.common.stats_out {
        std::fs::write(p, serde_json::to_string_pretty(&v)? + "\n").with_context(|| format!("cannot write {}", p.display()))?;
    }
    if let Some(dir) = &a.plot {
        let files = write_log_x_plot(
            dir,
            "schemes-pareto",
            "Bits/instruction against storage bits (each scheme's best sizes; SW-GZIP is software)",
            "storage bits (log scale)",
            "bits/instruction (weighted average)",
            &pareto_series(&summary),
        )
        .map_err(|e| anyhow!("{e}"))?;
        let mut sweep = sweep_results(&results);
        sweep.sort();
        // The plots' footnote: timing, cap and version, as a sweep's.
        let timing = sweep.rows.first().map_or_else(|| "ipc1".to_string(), |r| r.timing.clone());
        sweep.meta = Some(crate::cmd_sweep::meta(timing, opts.max_insns, None));
        let more = write_plots(&sweep, dir).map_err(|e| anyhow!("{e}"))?;
        for f in files.iter().chain(&more) {
            eprintln!("wrote {}", f.display());
        }
    }
    if let Some(dir) = &a.tables {
        let mut sweep = sweep_results(&results);
        sweep.sort();
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        for t in sweep.tables() {
            for (ext, body) in [("txt", t.to_text()), ("csv", t.to_csv()), ("md", t.to_markdown())] {
                let path = dir.join(format!("{}.{ext}", t.id));
                std::fs::write(&path, body).with_context(|| format!("writing {}", path.display()))?;
            }
        }
        eprintln!("tables in {}", dir.display());
    }
    let out = &mut io::stdout().lock();
    if a.common.json {
        writeln!(out, "{v}")?;
        return Ok(());
    }
    let mut tables: Vec<(&str, Rows)> = vec![
        ("Every configuration: storage bits (SDB 2, 80-bit output buffer) and bits/instruction, instruction-weighted", summary_table(&summary)),
        ("Bits/instruction program by program", program_table(&configs, &results)),
    ];
    if configs.iter().any(|c| c.scheme == Scheme::Pft) {
        tables.push(("pft (the first pft configuration): predictor hit rates", pft_table(&configs, &results)));
    }
    if opts.buffers.is_some() {
        tables.push(("Cycle mode: stall cycles, overflows and needed sizes, summed or maximal over the programs", cycle_table(&configs, &results)));
    }
    print_tables(out, &tables, a.common.markdown, a.common.csv)?;
    if !a.common.csv {
        let capped = results.iter().filter(|r| !r.complete).count();
        writeln!(
            out,
            "\n{} programs, {} instructions, {} configurations in {seconds:.0} s; {}",
            results.len(),
            thousands(results.iter().map(|r| r.instructions).sum()),
            configs.len(),
            if capped > 0 { format!("{capped} program(s) stopped at the instruction cap") } else { "every program ran to its exit".into() }
        )?;
    }
    Ok(())
}

struct Summary {
    config: Config,
    storage_bits: u64,
    average: f64,
    min: f64,
    max: f64,
}

fn summarize(configs: &[Config], results: &[ProgramSchemes]) -> Vec<Summary> {
    let instructions: u64 = results.iter().map(|r| r.instructions).sum();
    configs
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let bits: u64 = results.iter().map(|r| r.results[i].total_bits).sum();
            let per = results.iter().map(|r| r.results[i].bits_per_instruction);
            Summary {
                config: *c,
                // The same for every program unless a buffer is unbounded: then the
                // largest any program needed.
                storage_bits: results.iter().map(|r| r.results[i].storage_bits).max().unwrap_or(0),
                average: if instructions == 0 { 0.0 } else { bits as f64 / instructions as f64 },
                min: per.clone().fold(f64::INFINITY, f64::min),
                max: per.fold(0.0, f64::max),
            }
        })
        .collect()
}

fn summary_table(summary: &[Summary]) -> Rows {
    let header = ["config", "storage bits", "bits/instr", "min", "max"].map(String::from).to_vec();
    let rows = summary
        .iter()
        .map(|s| {
            vec![
                s.config.to_string(),
                s.storage_bits.to_string(),
                format!("{:.4}", s.average),
                format!("{:.4}", s.min),
                format!("{:.4}", s.max),
            ]
        })
        .collect();
    (header, rows)
}

fn program_table(configs: &[Config], results: &[ProgramSchemes]) -> Rows {
    // Every configuration when there are few, else the headline ones present.
    let mut shown: Vec<usize> = (0..configs.len()).collect();
    if configs.len() > 8 {
        shown = HEADLINE.iter().filter_map(|h| configs.iter().position(|c| c.to_string() == *h)).collect();
        if shown.is_empty() {
            shown = (0..8).collect();
        }
    }
    let header = std::iter::once("program".to_string()).chain(shown.iter().map(|&i| configs[i].to_string())).collect();
    let mut rows: Vec<Vec<String>> = results
        .iter()
        .map(|r| {
            std::iter::once(r.program.clone())
                .chain(shown.iter().map(|&i| format!("{:.4}", r.results[i].bits_per_instruction)))
                .collect()
        })
        .collect();
    let n: u64 = results.iter().map(|r| r.instructions).sum();
    rows.push(
        std::iter::once("average (weighted)".to_string())
            .chain(shown.iter().map(|&i| {
                let bits: u64 = results.iter().map(|r| r.results[i].total_bits).sum();
                format!("{:.4}", if n == 0 { 0.0 } else { bits as f64 / n as f64 })
            }))
            .collect(),
    );
    (header, rows)
}

fn pft_table(configs: &[Config], results: &[ProgramSchemes]) -> Rows {
    let i = configs.iter().position(|c| c.scheme == Scheme::Pft).expect("caller checked");
    let header = ["program", "direction points", "direction hit rate", "return hit rate", "indirect hit rate", "targets: alternate / RAS top / recent / offset"]
        .map(String::from)
        .to_vec();
    let rate = |miss: u64, all: u64| if all == 0 { "-".to_string() } else { format!("{:.4}", 1.0 - miss as f64 / all as f64) };
    let rows = results
        .iter()
        .filter_map(|r| {
            let p = r.results[i].pft?;
            Some(vec![
                r.program.clone(),
                p.direction_points.to_string(),
                rate(p.direction_misses, p.direction_points),
                rate(p.return_misses, p.return_points),
                rate(p.indirect_misses, p.indirect_points),
                format!("{} / {} / {} / {}", p.target_alt, p.target_ras_top, p.target_recent, p.target_offset),
            ])
        })
        .collect();
    (header, rows)
}

/// Per scheme family, the configurations no smaller configuration of the same family beats
/// (sorted by storage): the lower envelope the plot connects. gzip has no hardware storage.
fn pareto_series(summary: &[Summary]) -> Vec<(String, Vec<(f64, f64)>)> {
    let mut families: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for s in summary.iter().filter(|s| s.config.scheme != Scheme::Gzip) {
        let name = match s.config.scheme {
            Scheme::Pft => "pft".to_string(),
            Scheme::BSdc | Scheme::ESdc | Scheme::RSdc => format!("{}-LSP", s.config.scheme.name()),
            other => other.name().to_string(),
        };
        let point = (s.storage_bits as f64, s.average);
        match families.iter_mut().find(|(n, _)| *n == name) {
            Some((_, pts)) => pts.push(point),
            None => families.push((name, vec![point])),
        }
    }
    for (_, pts) in &mut families {
        pts.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
        let mut best = f64::INFINITY;
        pts.retain(|&(_, y)| {
            let keep = y < best;
            best = best.min(y);
            keep
        });
    }
    families
}

fn cycle_table(configs: &[Config], results: &[ProgramSchemes]) -> Rows {
    let header = ["config", "cycles", "stall cycles", "overflows", "lost instructions", "SDB / job buffer needed", "output buffer needed (bits)"]
        .map(String::from)
        .to_vec();
    let rows = configs
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let cyc: Vec<_> = results.iter().filter_map(|r| r.results[i].cycle.as_ref()).collect();
            vec![
                c.to_string(),
                cyc.iter().map(|s| s.cycles).sum::<u64>().to_string(),
                cyc.iter().map(|s| s.stall_cycles).sum::<u64>().to_string(),
                cyc.iter().map(|s| s.overflows).sum::<u64>().to_string(),
                cyc.iter().map(|s| s.lost_instructions).sum::<u64>().to_string(),
                cyc.iter().map(|s| s.sdb_needed).max().unwrap_or(0).to_string(),
                cyc.iter().map(|s| s.obuf_needed_bits).max().unwrap_or(0).to_string(),
            ]
        })
        .collect();
    (header, rows)
}

//! `streamtrace wet`: build a Whole Execution Trace of a program run, print its sizes, and
//! answer queries from the file (docs/wet.md).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use serde_json::json;
use streamtrace_sim::sweep::ProgramSpec;
use streamtrace_stages::wet::bidir::BiStream;
use streamtrace_stages::wet::build::{LabelBits, WetGraph};
use streamtrace_stages::wet::file::{file_kind, StoredStream};
use streamtrace_stages::wet::query::Instance;
use streamtrace_stages::wet::{build_program_exit, Cursor, RawStream};

use crate::io_util::{fmt_iw, thousands, write_file};
use crate::usage::bail_usage;

#[derive(Args, Debug)]
pub struct WetArgs {
    #[command(subcommand)]
    pub op: WetOp,
}

#[derive(Subcommand, Debug)]
pub enum WetOp {
    /// Run a program on the core model and build its WET (two runs: the first finds the
    /// post-dominators for control dependences).
    Build(BuildArgs),
    /// Sizes of a WET file: original, tier 1, tier 2, by label category.
    Stats(StatsArgs),
    /// Answer a query from a WET file.
    Query(QueryArgs),
}

#[derive(Args, Debug)]
pub struct BuildArgs {
    /// The ARM ELF program.
    pub program: PathBuf,
    /// Its arguments.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
    /// Where to write the WET (an option, so it goes before the program).
    #[arg(short, long, value_name = "FILE.wet")]
    pub output: Option<PathBuf>,
    /// Stop cleanly after this many instructions (the WET covers them; a note on stderr,
    /// JSON "truncated": true). Bounded by default: the build holds the whole run in memory.
    #[arg(long, value_name = "N", default_value_t = 10_000_000)]
    pub max_insns: u64,
    /// Leave out control dependences (one run instead of two).
    #[arg(long)]
    pub no_control: bool,
    /// 1: store the label sequences uncompressed (tier 1 only); 2: bidirectional streams.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(1..=2))]
    pub tier: u8,
    /// Print the statistics as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct StatsArgs {
    pub file: PathBuf,
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct QueryArgs {
    pub file: PathBuf,
    #[command(subcommand)]
    pub query: Query,
}

#[derive(Subcommand, Debug)]
pub enum Query {
    /// The control-flow trace: one instruction address per line.
    Cf {
        #[arg(long, conflicts_with = "backward")]
        forward: bool,
        #[arg(long)]
        backward: bool,
        /// Write here instead of stdout.
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// At most this many addresses.
        #[arg(long)]
        limit: Option<u64>,
    },
    /// Values every executed instance of the instruction defined.
    Values { pc: String },
    /// Values every executed instance of the instruction loaded from memory.
    Loads { pc: String },
    /// Data addresses of every executed instance of the instruction.
    Addrs { pc: String },
    /// The backward slice of one instance of the instruction.
    Slice {
        pc: String,
        /// Which executed instance, from 0 in execution order.
        #[arg(long, default_value_t = 0)]
        instance: u64,
        #[arg(long)]
        json: bool,
    },
}

fn parse_pc(s: &str) -> Result<u32> {
    let t = s.trim_start_matches("0x").trim_start_matches("0X");
    u32::from_str_radix(t, 16).map_err(|_| crate::usage::usage(format!("'{s}' is not a hexadecimal instruction address")))
}

/// Counts and sizes; `tier1` is known only where the tier-1 sequences are at hand (a build,
/// or a tier-1 file), and is null otherwise.
fn stats_json<S: Cursor>(g: &WetGraph<S>, tier1: Option<&LabelBits>) -> serde_json::Value {
    let original = LabelBits::original(&g.counts);
    let stored = g.label_bits();
    json!({
        "counts": {
            "instructions": g.counts.instructions,
            "block_executions": g.counts.block_executions,
            "path_executions": g.counts.path_executions,
            "values": g.counts.values,
            "addresses": g.counts.addresses,
            "dependence_pairs": g.counts.dependence_pairs,
            "implicit_pairs": g.counts.implicit_pairs,
            "nodes": g.nodes.len(),
            "statements": g.stmts.len(),
            "edges": g.edges.len(),
            "value_groups": g.groups.len(),
        },
        "bits": { "original": original, "tier1": tier1, "stored": stored },
    })
}

/// The size table: original bytes, then `(heading, sizes)` (tier 1, or what a file stores),
/// and the tier-2 sizes when known, each with its ratio.
fn print_stats(
    out: &mut impl Write,
    original: &LabelBits,
    (heading, tier1): (&str, &LabelBits),
    tier2: Option<&LabelBits>,
) -> std::io::Result<()> {
    let row = |name: &str, f: &dyn Fn(&LabelBits) -> u64| -> String {
        let o = f(original);
        let t1 = f(tier1);
        let mut line = format!("{name:<12} {:>14} {:>14} {:>8.1}x", o / 8, t1 / 8, o as f64 / t1.max(1) as f64);
        if let Some(t2) = tier2 {
            let t = f(t2);
            line += &format!(" {:>14} {:>8.1}x {:>8.1}x", t / 8, t1 as f64 / t.max(1) as f64, o as f64 / t.max(1) as f64);
        }
        line
    };
    let mut head = format!("{:<12} {:>14} {:>14} {:>9}", "labels", "original B", heading, "ratio");
    if tier2.is_some() {
        head += &format!(" {:>14} {:>9} {:>9}", "tier 2 B", "t1/t2", "overall");
    }
    writeln!(out, "{head}")?;
    writeln!(out, "{}", row("timestamps", &|b| b.timestamps))?;
    writeln!(out, "{}", row("values", &|b| b.values))?;
    writeln!(out, "{}", row("edge labels", &|b| b.edge_labels))?;
    writeln!(out, "{}", row("addresses", &|b| b.addresses))?;
    writeln!(out, "{}", row("total", &|b| b.total()))
}

pub fn run(args: &WetArgs) -> Result<()> {
    match &args.op {
        WetOp::Build(a) => build(a),
        WetOp::Stats(a) => stats(a),
        WetOp::Query(a) => query(a),
    }
}

fn build(a: &BuildArgs) -> Result<()> {
    let Some(output) = &a.output else {
        if a.args.iter().any(|x| x == "-o" || x == "--output" || x.starts_with("--output=")) {
            bail_usage!("options go before the program (what follows it is its argv): streamtrace wet build -o FILE.wet [OPTIONS] PROG [ARGS...]");
        }
        bail_usage!("say where to write the WET: streamtrace wet build -o FILE.wet PROG [ARGS...]");
    };
    if !a.program.is_file() {
        bail!("{}: no such program", a.program.display());
    }
    let mut cmdline = a.program.display().to_string();
    for arg in &a.args {
        cmdline.push(' ');
        cmdline.push_str(arg);
    }
    let name = a.program.file_stem().map_or("program".into(), |n| n.to_string_lossy().into_owned());
    let spec = ProgramSpec::new(name, a.program.clone(), cmdline, ".");
    let t = Instant::now();
    let (g, exit) = build_program_exit(&spec, a.max_insns, !a.no_control).map_err(anyhow::Error::msg)?;
    let build_s = t.elapsed().as_secs_f64();
    let tier1 = g.label_bits();
    let original = LabelBits::original(&g.counts);
    let t = Instant::now();
    let (bytes, tier2, stats) = if a.tier == 2 {
        let c = g.compress();
        let t2 = c.label_bits();
        (c.to_bytes(), Some(t2), stats_json(&c, Some(&tier1)))
    } else {
        let s = stats_json(&g, Some(&tier1));
        (g.to_bytes(), None, s)
    };
    let compress_s = t.elapsed().as_secs_f64();
    write_file(output, &bytes)?;
    if exit.is_none() {
        // As `run --max-insns`: a window of the run, not a failure.
        eprintln!(
            "streamtrace: note: stopped at the --max-insns limit of {} instructions; the WET covers them, the program did not finish",
            thousands(a.max_insns)
        );
    }
    let insns = stats["counts"]["instructions"].as_u64().unwrap_or(0);
    if a.json {
        let mut s = stats;
        s["file_bytes"] = json!(bytes.len());
        s["build_seconds"] = json!(build_s);
        s["compress_seconds"] = json!(compress_s);
        s["exit_code"] = json!(exit);
        s["truncated"] = json!(exit.is_none());
        writeln!(std::io::stdout().lock(), "{}", serde_json::to_string_pretty(&s)?)?;
    } else {
        eprintln!(
            "{}: {insns} instructions, built in {build_s:.2} s ({:.2} M instructions/s), tier 2 in {compress_s:.2} s; {} bytes",
            output.display(),
            insns as f64 / build_s / 1e6,
            bytes.len()
        );
        print_stats(&mut std::io::stdout().lock(), &original, ("tier 1 B", &tier1), tier2.as_ref())?;
    }
    Ok(())
}

/// A file of either stream kind, for the commands that work on both.
enum AnyWet {
    Raw(WetGraph<RawStream>),
    Bi(WetGraph<BiStream>),
}

fn load(path: &Path) -> Result<AnyWet> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let kind = file_kind(&bytes).with_context(|| path.display().to_string())?;
    Ok(match kind {
        k if k == RawStream::KIND => AnyWet::Raw(WetGraph::from_bytes(&bytes).with_context(|| path.display().to_string())?),
        k if k == BiStream::KIND => AnyWet::Bi(WetGraph::from_bytes(&bytes).with_context(|| path.display().to_string())?),
        k => bail!("{}: unknown stream kind {k}", path.display()),
    })
}

fn stats(a: &StatsArgs) -> Result<()> {
    match load(&a.file)? {
        AnyWet::Raw(g) => show_stats(&g, true, a.json),
        AnyWet::Bi(g) => show_stats(&g, false, a.json),
    }
}

/// `tier1`: whether the file holds the tier-1 sequences (otherwise its streams are tier 2).
fn show_stats<S: Cursor>(g: &WetGraph<S>, tier1: bool, as_json: bool) -> Result<()> {
    let out = &mut std::io::stdout().lock();
    // A tier-2 file cannot tell its tier-1 size without the raw sequences; both files
    // know the original size.
    let stored = g.label_bits();
    if as_json {
        writeln!(out, "{}", serde_json::to_string_pretty(&stats_json(g, tier1.then_some(&stored)))?)?;
        return Ok(());
    }
    writeln!(
        out,
        "{} instructions, {} path executions, {} nodes, {} statements, {} edges, {} value groups",
        g.counts.instructions,
        g.counts.path_executions,
        g.nodes.len(),
        g.stmts.len(),
        g.edges.len(),
        g.groups.len()
    )?;
    let heading = if tier1 { "tier 1 B" } else { "stored B" };
    print_stats(out, &LabelBits::original(&g.counts), (heading, &stored), None)?;
    Ok(())
}

fn query(a: &QueryArgs) -> Result<()> {
    // The command line first: a usage error whatever the file holds.
    if let Query::Cf { forward: false, backward: false, .. } = &a.query {
        bail_usage!("say --forward or --backward");
    }
    match load(&a.file)? {
        AnyWet::Raw(mut g) => answer(&mut g, &a.query, &a.file),
        AnyWet::Bi(mut g) => answer(&mut g, &a.query, &a.file),
    }
}

fn print_instances(list: &[Instance]) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for i in list {
        let vals: Vec<String> = i.values.iter().map(|v| format!("{v:#010x}")).collect();
        writeln!(out, "{} {}", i.t, vals.join(" "))?;
    }
    out.flush()
}

/// `file`: the WET's path, named by errors in its data (a damaged file can pass `load` and
/// fail in a query).
fn answer<S: Cursor>(g: &mut WetGraph<S>, q: &Query, file: &Path) -> Result<()> {
    match q {
        Query::Cf { forward: _, backward, output, limit } => {
            let list = if *backward { g.cf_backward() } else { g.cf_forward() }
                .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
            let n = limit.map_or(list.len(), |l| (l as usize).min(list.len()));
            let mut text = String::with_capacity(n * 10);
            for &iw in &list[..n] {
                text.push_str(&fmt_iw(iw));
                text.push('\n');
            }
            match output {
                Some(p) => write_file(p, text.as_bytes())?,
                None => std::io::stdout().lock().write_all(text.as_bytes())?,
            }
        }
        Query::Values { pc } => print_instances(&g.values(parse_pc(pc)?))?,
        Query::Loads { pc } => print_instances(&g.load_values(parse_pc(pc)?))?,
        Query::Addrs { pc } => print_instances(&g.addresses(parse_pc(pc)?))?,
        Query::Slice { pc, instance, json } => {
            let iw = parse_pc(pc)?;
            if g.stmts_of(iw).next().is_none() {
                bail!("no instruction at {iw:#x} ran in this WET (add 1 for a Thumb address)");
            }
            let Some(start) = g.instance_of(iw, *instance) else {
                let ran = g.values(iw).len();
                bail!("the instruction at {iw:#x} has no instance {instance}: it ran {ran} times (instances count from 0)");
            };
            let items = g.backward_slice(start.stmt, start.inst);
            let mut rows = Vec::with_capacity(items.len());
            for it in &items {
                let t = g.timestamp(it.stmt, it.inst).unwrap_or(0);
                let st = &g.stmts[it.stmt as usize];
                rows.push((t, st.offset, st.iw, it.inst));
            }
            // Execution order: timestamp, then position in the path.
            rows.sort_unstable();
            let out = &mut std::io::BufWriter::new(std::io::stdout().lock());
            if *json {
                let list: Vec<_> =
                    rows.iter().map(|&(t, off, iw, k)| json!({"pc": fmt_iw(iw), "timestamp": t, "position": off, "instance": k})).collect();
                writeln!(out, "{}", serde_json::to_string_pretty(&json!({"criterion": fmt_iw(iw), "instance": instance, "slice": list}))?)?;
            } else {
                writeln!(out, "# backward slice of {} instance {}: {} statement instances", fmt_iw(iw), instance, rows.len())?;
                writeln!(out, "# timestamp position pc")?;
                for (t, off, iw, _) in rows {
                    writeln!(out, "{t} {off} {}", fmt_iw(iw))?;
                }
            }
            out.flush()?;
        }
    }
    Ok(())
}

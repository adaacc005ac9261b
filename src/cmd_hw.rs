//! `verilog`, `area` and `cosim`: the RTL of hw/ exported, measured and co-simulated.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Args;
use serde_json::json;
use streamtrace_hw::cosim::{cosimulate, cosimulate_pft, model_cxx, Verdict, WaveFormat, Waveform};
use streamtrace_hw::drive::compare_with_model;
use streamtrace_hw::pft::PftHwConfig;
use streamtrace_hw::tools::{fpga_area, verilator_lint, yosys_area, FpgaArea, FpgaFamily};
use streamtrace_hw::verilog::{write_export, write_module};
use streamtrace_hw::{HwConfig, HwError};
use streamtrace_model::{storage_bits, BufferConfig, Config, ConfigError, RetireEvent, Scheme};
use streamtrace_sim::{Machine, Semihost, SimError, StepOutcome};

use crate::io_util::{load_elf, parse_config};
use crate::table::Table;
use crate::usage::bail_usage;

#[derive(Args, Debug)]
pub struct VerilogArgs {
    /// Configuration to export (repeatable), e.g. rsdc-32x4-128.
    #[arg(short, long = "config", value_name = "CONFIG", required = true)]
    pub configs: Vec<String>,
    /// Output directory; one `<module>.v` per configuration.
    #[arg(short, long, value_name = "DIR", default_value = "verilog-out")]
    pub output: PathBuf,
    /// Cycle-mode buffers (docs/trace-timing.md), e.g. sdb=2,obuf=80,port=1.
    #[arg(long, value_name = "BUFFERS", default_value = "")]
    pub buffers: String,
    /// Also run `verilator --lint-only -Wall` on each export and fail on any warning.
    #[arg(long)]
    pub lint: bool,
}

#[derive(Args, Debug)]
pub struct AreaArgs {
    /// Configurations, separated by commas (keys attach to the configuration before them:
    /// `rsdc-32x4-128,isa=arm,esdc-32x4-128`), or repeated.
    #[arg(long, value_name = "LIST", required = true)]
    pub configs: Vec<String>,
    /// Cycle-mode buffers (SDB depth and output buffer size enter the storage count).
    #[arg(long, value_name = "BUFFERS", default_value = "")]
    pub buffers: String,
    /// Keep the exports, the Yosys logs (`TOP.yosys.log`) and synthesized netlists
    /// (`TOP.synth.v`), and with --fpga the FPGA netlist JSON and logs, in this directory
    /// (default: a temporary directory, removed).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Also synthesize for an FPGA family and place and route: `ice40` (Yosys synth_ice40,
    /// nextpnr-ice40) or `ecp5` (Yosys synth_ecp5, nextpnr-ecp5): LUT4, flip-flops, carries,
    /// block and distributed RAMs, multipliers, logic cells, Fmax and the critical path.
    #[arg(long, value_name = "FAMILY", value_parser = ["ice40", "ecp5"])]
    pub fpga: Option<String>,
    /// The FPGA device (a nextpnr device flag without `--`; default hx8k for ice40, 25k for
    /// ecp5).
    #[arg(long, value_name = "DEVICE", requires = "fpga")]
    pub device: Option<String>,
    /// The package (default ct256 for ice40, CABGA381 for ecp5).
    #[arg(long, value_name = "PACKAGE", requires = "fpga")]
    pub package: Option<String>,
    /// Place and route with nextpnr seeds 1..=N and report the median Fmax (with the range;
    /// the JSON has each seed's): one seed's figure moves by 5-10 % from seed to seed.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64), requires = "fpga")]
    pub seeds: u32,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// No progress lines on stderr.
    #[arg(short, long)]
    pub quiet: bool,
}

#[derive(Args, Debug)]
pub struct CosimArgs {
    /// Trace module configuration, e.g. rsdc-32x4-128.
    #[arg(short, long, value_name = "CONFIG")]
    pub config: String,
    /// The program (32-bit little-endian ARM ELF), run on the core model with IPC = 1.
    #[arg(value_name = "PROG")]
    pub program: PathBuf,
    /// Program arguments.
    #[arg(value_name = "ARGS", trailing_var_arg = true)]
    pub args: Vec<String>,
    /// Stop the program after this many instructions (the trace then ends there).
    #[arg(long, value_name = "N", default_value_t = 1_000_000)]
    pub max_insns: u64,
    /// Cycle-mode buffers, e.g. sdb=1,obuf=40,policy=drop.
    #[arg(long, value_name = "BUFFERS", default_value = "")]
    pub buffers: String,
    /// Write a VCD waveform of the Verilated module (GTKWave opens it).
    #[arg(long, value_name = "FILE", conflicts_with = "fst")]
    pub vcd: Option<PathBuf>,
    /// Write the waveform as FST (Verilator --trace-fst; GTKWave's compressed format, several
    /// times smaller than VCD).
    #[arg(long, value_name = "FILE")]
    pub fst: Option<PathBuf>,
    /// First module cycle of the waveform (default 0: from reset).
    #[arg(long, value_name = "C")]
    pub vcd_from: Option<u64>,
    /// Last module cycle of the waveform, inclusive (default: the end).
    #[arg(long, value_name = "C")]
    pub vcd_to: Option<u64>,
    /// Build directory of the Verilated bench (reused when the Verilog is unchanged). It keeps
    /// the stimulus and expectation files (`stimulus.txt`, `expected.txt`) that
    /// testbenches/cosim/Makefile replays without the CLI.
    #[arg(long, value_name = "DIR")]
    pub work_dir: Option<PathBuf>,
    /// Also run the RustHDL simulation against the model (every cycle; about 10^4 cycles/s).
    #[arg(long)]
    pub rusthdl: bool,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
    /// No progress lines on stderr.
    #[arg(short, long)]
    pub quiet: bool,
}

/// A configuration the RTL cannot build is a configuration error (exit status 2).
fn hw_error(text: &str, e: HwError) -> anyhow::Error {
    let reason = match e {
        HwError::Unsupported { reason, .. } => reason,
        HwError::Buffers { buffers, reason } => format!("buffers '{buffers}': {reason}"),
    };
    ConfigError { text: text.to_string(), reason }.into()
}

/// The RTL of one configuration: the SDC module or the pft module.
enum Rtl {
    Sdc(HwConfig),
    Pft(PftHwConfig),
}

impl Rtl {
    fn new(cfg: &Config, text: &str, buffers: &BufferConfig) -> Result<Rtl> {
        if cfg.scheme == Scheme::Pft {
            PftHwConfig::new(cfg, buffers).map(Rtl::Pft).map_err(|e| hw_error(text, e))
        } else {
            HwConfig::new(cfg, buffers).map(Rtl::Sdc).map_err(|e| hw_error(text, e))
        }
    }

    fn module_name(&self) -> String {
        match self {
            Rtl::Sdc(h) => h.module_name(),
            Rtl::Pft(h) => h.module_name(),
        }
    }

    fn buffers(&self) -> BufferConfig {
        match self {
            Rtl::Sdc(h) => h.buffers,
            Rtl::Pft(h) => h.buffers,
        }
    }

    fn sdb_and_obuf(&self) -> (u32, u32) {
        match self {
            Rtl::Sdc(h) => (h.sdb_depth, h.obuf_bits),
            Rtl::Pft(h) => (h.sdb_depth, h.obuf_bits),
        }
    }

    /// Write `<dir>/<module>.v`; returns the path.
    fn write_export(&self, dir: &Path) -> Result<PathBuf> {
        match self {
            Rtl::Sdc(h) => write_export(h, dir).map_err(anyhow::Error::msg),
            Rtl::Pft(h) => streamtrace_hw::pft::export_verilog(h)
                .and_then(|text| write_module(dir, &h.module_name(), &text))
                .map_err(anyhow::Error::msg),
        }
    }
}

fn parse_buffers(text: &str) -> Result<BufferConfig> {
    text.parse::<BufferConfig>()
        .map_err(|reason| ConfigError { text: text.to_string(), reason: format!("buffers: {reason}") }.into())
}

/// `a,k=v,b` -> [`a,k=v`, `b`]: a `key=value` item belongs to the configuration before it.
pub fn split_config_list(list: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match out.last_mut() {
            Some(last) if item.contains('=') => {
                last.push(',');
                last.push_str(item);
            }
            _ => out.push(item.to_string()),
        }
    }
    out
}

pub fn run_verilog(args: &VerilogArgs) -> Result<()> {
    let buffers = parse_buffers(&args.buffers)?;
    for text in &args.configs {
        let cfg = parse_config(text)?;
        let h = Rtl::new(&cfg, text, &buffers)?;
        let path = h.write_export(&args.output)?;
        if args.lint {
            let warnings = verilator_lint(&path, &h.module_name()).map_err(anyhow::Error::msg)?;
            if !warnings.is_empty() {
                bail!("{}: verilator -Wall reports:\n{}", path.display(), warnings.join("\n"));
            }
        }
        println!("{}", path.display());
    }
    Ok(())
}

pub fn run_area(args: &AreaArgs) -> Result<()> {
    let buffers = parse_buffers(&args.buffers)?;
    let texts: Vec<String> = args.configs.iter().flat_map(|l| split_config_list(l)).collect();
    let tmp;
    let dir: &Path = match &args.dir {
        Some(d) => d,
        None => {
            tmp = std::env::temp_dir().join(format!("streamtrace-area-{}", std::process::id()));
            &tmp
        }
    };
    let mut rows = Vec::new();
    let mut fpga: Vec<FpgaArea> = Vec::new();
    let family = args
        .fpga
        .as_deref()
        .map(|f| FpgaFamily::parse(f).ok_or_else(|| anyhow::anyhow!("unknown FPGA family `{f}` (ice40 or ecp5)")))
        .transpose()?;
    let (device, package) = match family {
        Some(f) => {
            let (d, p) = f.default_device();
            (args.device.clone().unwrap_or_else(|| d.to_string()), args.package.clone().unwrap_or_else(|| p.to_string()))
        }
        None => (String::new(), String::new()),
    };
    let progress = |line: String| {
        if !args.quiet {
            eprintln!("area: {line}");
        }
    };
    for (i, text) in texts.iter().enumerate() {
        let cfg = parse_config(text)?;
        let h = Rtl::new(&cfg, text, &buffers)?;
        let path = h.write_export(dir)?;
        progress(format!("[{}/{}] {text}: Yosys generic synthesis", i + 1, texts.len()));
        let area = yosys_area(&path, &h.module_name(), args.dir.as_deref()).map_err(anyhow::Error::msg)?;
        if let Some(f) = family {
            let fam = f.name();
            progress(format!("[{}/{}] {text}: synth_{fam} and nextpnr-{fam} place and route on {device}", i + 1, texts.len()));
            // A design that does not fit is a result (reported in the table), not a failure.
            fpga.push(fpga_area(f, &path, &h.module_name(), &device, &package, dir, args.seeds).map_err(anyhow::Error::msg)?);
        }
        let (sdb, obuf) = h.sdb_and_obuf();
        let storage = storage_bits(&cfg, sdb, obuf);
        rows.push((text.clone(), h, area, storage));
    }
    match &args.dir {
        None => {
            let _ = std::fs::remove_dir_all(dir);
        }
        Some(d) => progress(format!("exports, Yosys logs and netlists kept in {}", d.display())),
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        let v: Vec<_> = rows
            .iter()
            .enumerate()
            .map(|(i, (text, h, a, s))| {
                let mut row = json!({
                    "config": text,
                    "module": h.module_name(),
                    "buffers": h.buffers().to_string(),
                    "yosys_cells": a.cells,
                    "yosys_flip_flops": a.flip_flops,
                    "yosys_memories": a.memories,
                    "yosys_memory_bits": a.memory_bits,
                    "yosys_logic_depth": a.logic_depth,
                    "nand2_equivalents": a.nand2_equivalents,
                    "model_storage_bits": s.total,
                    "model_storage": s,
                });
                if let Some(f) = fpga.get(i) {
                    row[f.family.as_str()] = json!(f);
                }
                row
            })
            .collect();
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(());
    }
    let mut t = Table::new([
        "config",
        "cells",
        "flip-flops",
        "memories",
        "memory bits",
        "logic depth",
        "NAND2 eq.",
        "model storage bits",
    ]);
    for (text, _, a, s) in &rows {
        t.row([
            text.clone(),
            a.cells.to_string(),
            a.flip_flops.to_string(),
            a.memories.to_string(),
            a.memory_bits.to_string(),
            a.logic_depth.to_string(),
            a.nand2_equivalents.to_string(),
            s.total.to_string(),
        ]);
    }
    t.print(&mut out)?;
    writeln!(
        out,
        "Yosys generic synthesis (`synth -flatten` without memory_map: memories stay $mem_v2 cells, one cell each; \
         flip-flops outside them; logic depth: `ltp -noff`, gates on the longest path; NAND2 eq.: gate \
         equivalents without the memories, Yosys's CMOS transistor estimate / 4 with every flip-flop a plain \
         D flip-flop, for comparison with gate counts in papers). Model storage: \
         model/src/storage.rs with sdb={} and obuf={} (the paper's 4,042 bits is rsdc-32x4-128,isa=arm).",
        rows.first().map_or(2, |r| r.1.sdb_and_obuf().0),
        rows.first().map_or(80, |r| r.1.sdb_and_obuf().1)
    )?;
    if !fpga.is_empty() {
        writeln!(out)?;
        let mut t =
            Table::new(["config", "LUT4", "flip-flops", "carries", "BRAMs", "LUT RAMs", "multipliers", "logic cells", "Fmax MHz"]);
        for ((text, _, _, _), f) in rows.iter().zip(&fpga) {
            t.row([
                text.clone(),
                f.lut4.to_string(),
                f.flip_flops.to_string(),
                f.carries.to_string(),
                f.brams.to_string(),
                f.lut_rams.to_string(),
                f.multipliers.to_string(),
                format!("{}/{} ({}%)", f.logic_cells, f.logic_cells_available, f.logic_cells * 100 / f.logic_cells_available.max(1)),
                match (f.fits, f.fmax_by_seed.len()) {
                    (false, _) => "does not fit".to_string(),
                    (true, 1) => format!("{:.1}", f.fmax_mhz),
                    (true, _) => {
                        let lo = f.fmax_by_seed.iter().copied().fold(f64::INFINITY, f64::min);
                        let hi = f.fmax_by_seed.iter().copied().fold(0.0, f64::max);
                        format!("{:.1} ({lo:.1}-{hi:.1})", f.fmax_mhz)
                    }
                },
            ]);
        }
        t.print(&mut out)?;
        for ((text, _, _, _), f) in rows.iter().zip(&fpga) {
            // The path of the seed that gave the median (the JSON has every seed's).
            let seed = f.fmax_by_seed.iter().position(|&m| m == f.fmax_mhz);
            if let Some((i, p)) = seed.and_then(|i| Some((i, f.critical_path_by_seed.get(i)?))) {
                writeln!(
                    out,
                    "critical path of {text} (seed {}): {:.1} ns ({:.1} logic, {:.1} routing): {}",
                    i + 1,
                    p.ns,
                    p.logic_ns,
                    p.routing_ns,
                    p.route()
                )?;
            }
        }
        let fam = family.map_or("", FpgaFamily::name);
        writeln!(
            out,
            "{} {device} {package}: Yosys `synth_{fam} -flatten`, nextpnr-{fam} ({}); Fmax is nextpnr's estimate after \
             routing.{}",
            if family == Some(FpgaFamily::Ecp5) { "ECP5" } else { "iCE40" },
            if args.seeds == 1 { "seed 1".to_string() } else { format!("seeds 1-{}: the median, and the range", args.seeds) },
            if family == Some(FpgaFamily::Ecp5) {
                " Carries are CCU2C cells (2 LUT4 each); LUT RAMs are 16 x 4-bit distributed RAMs; logic cells are \
                 TRELLIS_COMB (one LUT4 each)."
            } else {
                ""
            }
        )?;
    }
    Ok(())
}

/// Run `elf` on the core model (IPC = 1) and collect its retire events, at most `max`.
pub fn program_events(elf_path: &Path, args: &[String], max: u64) -> Result<Vec<(RetireEvent, u64)>> {
    let elf = load_elf(elf_path)?;
    let mut argv = vec![elf_path.display().to_string()];
    argv.extend(args.iter().cloned());
    let semihost = Semihost::new().with_args(&argv).with_stdout(std::io::sink()).with_stderr(std::io::sink());
    let mut machine = Machine::load(&elf, semihost)?;
    let mut events: Vec<(RetireEvent, u64)> = Vec::new();
    let mut hook = |ev: &RetireEvent, _: &[streamtrace_sim::MemAccess]| {
        let n = events.len() as u64;
        events.push((*ev, n));
    };
    while machine.retired < max {
        match machine.step(&mut hook) {
            Ok(StepOutcome::Running) => {}
            Ok(StepOutcome::Exited(_)) => break,
            Err(SimError::InstructionLimit { .. }) => break,
            Err(e) => bail!("{}: {e} after {} instructions", elf_path.display(), machine.retired),
        }
    }
    Ok(events)
}

pub fn run_cosim(args: &CosimArgs) -> Result<u8> {
    let cfg = parse_config(&args.config)?;
    let buffers = parse_buffers(&args.buffers)?;
    let h = Rtl::new(&cfg, &args.config, &buffers)?;
    let progress = |line: String| {
        if !args.quiet {
            eprintln!("cosim: {line}");
        }
    };
    let wave = match (&args.vcd, &args.fst) {
        (Some(path), _) => Some(Waveform { path: path.clone(), format: WaveFormat::Vcd, from: 0, to: u64::MAX }),
        (None, Some(path)) => Some(Waveform { path: path.clone(), format: WaveFormat::Fst, from: 0, to: u64::MAX }),
        (None, None) => None,
    };
    let wave = match wave {
        Some(w) => {
            let (from, to) = (args.vcd_from.unwrap_or(0), args.vcd_to.unwrap_or(u64::MAX));
            if from > to {
                bail_usage!("--vcd-from {from} is after --vcd-to {to}");
            }
            Some(Waveform { from, to, ..w })
        }
        None if args.vcd_from.is_some() || args.vcd_to.is_some() => bail_usage!("--vcd-from and --vcd-to need --vcd or --fst"),
        None => None,
    };
    // The Verilated bench cannot report a waveform it failed to open: create the file here,
    // before the slow build, so an unwritable path is an error naming it.
    if let Some(w) = &wave {
        std::fs::File::create(&w.path).with_context(|| format!("cannot create the waveform {}", w.path.display()))?;
    }
    progress(format!("running {} on the core model (at most {} instructions)", args.program.display(), args.max_insns));
    let events = program_events(&args.program, &args.args, args.max_insns)?;
    let rusthdl = if args.rusthdl {
        progress(format!("RustHDL simulation of {} against the model ({} instructions; about 10^4 cycles/s)", h.module_name(), events.len()));
        let start = std::time::Instant::now();
        let a = match &h {
            Rtl::Sdc(h) => compare_with_model(h, &events),
            Rtl::Pft(h) => streamtrace_hw::pft::compare_with_model(h, &events),
        }
        .map_err(|m| anyhow::anyhow!("RustHDL simulation and model differ: {m}"))?;
        let secs = start.elapsed().as_secs_f64();
        eprintln!(
            "rusthdl {}: {} cycles, {} bits: RustHDL simulation == model every cycle ({:.0} cycles/s)",
            h.module_name(),
            a.cycles,
            a.bits,
            a.cycles as f64 / secs.max(1e-9)
        );
        Some(a.cycles)
    } else {
        None
    };
    let dir = args.work_dir.clone().unwrap_or_else(|| std::env::temp_dir().join("streamtrace-cosim").join(h.module_name()));
    progress(format!(
        "Verilator bench in {} (built once per Verilog and waveform format, about a minute), then {} retirements replayed",
        dir.display(),
        events.len()
    ));
    let verdict = match &h {
        Rtl::Sdc(h) => cosimulate(h, &events, &dir, wave.as_ref(), None),
        Rtl::Pft(h) => cosimulate_pft(h, &events, &dir, wave.as_ref(), None),
    }
    .map_err(anyhow::Error::msg)
        .with_context(|| format!("co-simulating {} on {}", h.module_name(), args.program.display()))?;
    let mut out = std::io::stdout().lock();
    match verdict {
        Verdict::Agree { cycles, beats, bits, stalls, cycles_per_second } => {
            if args.json {
                writeln!(
                    out,
                    "{}",
                    json!({"config": args.config, "module": h.module_name(), "instructions": events.len(),
                           "cycles": cycles, "beats": beats, "bits": bits, "stall_cycles": stalls,
                           "mismatches": 0, "verilator_cycles_per_second": cycles_per_second,
                           "model_cxx": model_cxx(),
                           "rusthdl_cycles_compared": rusthdl})
                )?;
            } else {
                writeln!(
                    out,
                    "cosim {}: {} instructions, {cycles} cycles, {beats} port beats ({bits} bits), {stalls} stall cycles: \
                     RTL (Verilator) == model every cycle ({cycles_per_second} cycles/s, model compiled by {})",
                    h.module_name(),
                    events.len(),
                    model_cxx()
                )?;
            }
            if let Some(w) = &wave {
                // Claim only a waveform that was written.
                let len = std::fs::metadata(&w.path).map(|m| m.len()).unwrap_or(0);
                if len == 0 {
                    bail!("the bench wrote no waveform to {}", w.path.display());
                }
                let window = match (w.from, w.to) {
                    (0, u64::MAX) => String::new(),
                    (f, u64::MAX) => format!(", cycles {f} to the end"),
                    (f, t) => format!(", cycles {f} to {t}"),
                };
                eprintln!("waveform: {} ({len} bytes{window})", w.path.display());
            }
            Ok(0)
        }
        Verdict::Mismatch(line) => {
            if args.json {
                writeln!(out, "{}", json!({"config": args.config, "module": h.module_name(), "mismatch": line}))?;
            }
            bail!("RTL and model differ: {line}")
        }
    }
}

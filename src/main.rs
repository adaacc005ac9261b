//! `streamtrace`: the command-line front end of the trace compressor. It is kept thin:
//! each subcommand parses its arguments, calls the library crates (`streamtrace-model`,
//! `streamtrace-isa`, `streamtrace-sw-decoder`) and prints what they return.

mod cmd_config;
mod cmd_decode;
mod cmd_demo;
mod cmd_dump;
mod cmd_encode;
mod cmd_hw;
mod cmd_report;
mod cmd_report_schemes;
mod cmd_run;
mod cmd_stages;
mod cmd_sweep;
mod cmd_wet;
mod cmd_citcat;
mod io_util;
mod refs;
mod table;
mod trace_file;
mod usage;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

/// Program trace compression with stream descriptor caches and last stream predictors.
///
/// Encodes retired-instruction events into trace-port bits, decodes them back to instruction
/// addresses with the program's ELF, lists records, and compares schemes (after Milenkovic
/// et al., "Caches and Predictors for Real-time, Unobtrusive, and Cost-Effective Program
/// Tracing in Embedded Systems").
#[derive(Parser, Debug)]
#[command(name = "streamtrace", version, propagate_version = true)]
#[command(
    after_help = "Configuration strings: SCHEME[-SETSxWAYS-LSP][,key=value]..., e.g. rsdc-32x4-128 \
or esdc-64x4-256,repl=lru (docs/trace-format.md section 4). Exit codes: 0 success, 1 data or \
I/O error, 2 usage or configuration error; a closed stdout ends the command by SIGPIPE. `-` names stdin or \
stdout wherever a file is named."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Encode a text file of retire events into a trace-port bitstream.
    Encode(EncodeArgs),
    /// Decode a trace with the program's ELF into instruction addresses, optionally verifying them.
    Decode(DecodeArgs),
    /// List every record of a trace with its bit offset and the stream(s) it stands for.
    Dump(DumpArgs),
    /// Encode, decode and verify a built-in synthetic program under several configurations
    /// and compare them (needs nothing but this binary).
    Demo(DemoArgs),
    /// Validate a configuration string and print its canonical form and derived parameters.
    Config(ConfigArgs),
    Run(RunArgs),
    /// Sweep trace module configurations and buffer sizes over programs: capture each
    /// program once, replay every configuration in cycle mode in parallel, and write the
    /// paper's tables and plots.
    Sweep(cmd_sweep::SweepArgs),
    /// Join the outputs of sharded sweeps (`sweep --shard k/N`) into one set of tables.
    Merge(cmd_sweep::MergeArgs),
    /// PDATS address-trace compression: dinero din text to PDATS and back.
    Pdats(cmd_stages::PdatsArgs),
    /// PDATS II address-trace compression: dinero din text to PDATS II and back.
    Pdats2(cmd_stages::PdatsArgs),
    /// Laplace difference encoding of raw or SAD-reduced records, and its decoding.
    Diff(cmd_stages::DiffArgs),
    /// SAD lossy reduction: exact LRU (and OPT) behaviour for memories of at least r pages.
    Sad(cmd_stages::SadArgs),
    /// LRU page-replacement simulation: fault count and fault sequence (optionally OPT).
    Lru(cmd_stages::LruArgs),
    /// Reports over the test programs.
    Report(cmd_report::ReportArgs),
    /// Export the trace module's RTL (hw/) as Verilog, one self-contained file per configuration.
    Verilog(cmd_hw::VerilogArgs),
    /// Synthesize exports with Yosys and list cells, flip-flops and memory bits next to the
    /// model's storage-bit count.
    Area(cmd_hw::AreaArgs),
    /// Run a program on the core model and compare the Verilated RTL with the model's cycle
    /// mode on every cycle (trace port and stall).
    Cosim(cmd_hw::CosimArgs),
    /// Whole Execution Traces: build one from a program run, print its sizes, query it.
    Wet(cmd_wet::WetArgs),
    /// CITCAT: record a bare-metal run's cache-filtered bus trace in system mode, extract
    /// its IMS and AES, replay them without devices, verify (docs/citcat.md).
    Citcat(cmd_citcat::CitcatArgs),
}

#[derive(Args, Debug)]
pub struct EncodeArgs {
    /// Trace module configuration, e.g. rsdc-32x4-128.
    #[arg(short, long, value_name = "CONFIG")]
    pub config: String,
    /// Retire events, one per line (docs/events-format.md); - for standard input.
    #[arg(short, long, value_name = "FILE")]
    pub events: PathBuf,
    /// Where to write the trace file (docs/trace-format.md section 12); - for standard output.
    #[arg(short, long, value_name = "TRACE")]
    pub output: PathBuf,
    /// Write the bare trace-port bit stream instead of a trace file.
    #[arg(long)]
    pub raw: bool,
    /// Print the statistics as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Also write the statistics as JSON to this file.
    #[arg(long, value_name = "FILE.json")]
    pub stats_out: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct DecodeArgs {
    /// The configuration the trace was encoded with: a trace file names its own (a -c that
    /// differs is an error); a bare bit stream (--raw) needs it.
    #[arg(short, long, value_name = "CONFIG")]
    pub config: Option<String>,
    /// The traced program (32-bit little-endian ARM ELF).
    #[arg(long, value_name = "PROG")]
    pub elf: PathBuf,
    /// The trace file; - for standard input.
    #[arg(short, long, value_name = "TRACE")]
    pub trace: PathBuf,
    /// The trace is a bare trace-port bit stream (a probe capture, a golden vector), not a
    /// trace file; needs -c.
    #[arg(long)]
    pub raw: bool,
    /// Decode even if the ELF is not the program the trace file names (a warning instead of
    /// an error).
    #[arg(long)]
    pub force: bool,
    /// Write the decoded instruction addresses, one per line in the --addr-format form (the
    /// form `run --pc-trace` writes; `binary`: 32-bit words); - for standard output (the
    /// summary then goes to stderr).
    #[arg(short, long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Form of the --out lines.
    #[arg(long, value_name = "FORM", value_enum, default_value = "annotated")]
    pub addr_format: io_util::AddrFormat,
    /// Compare the decoded addresses with this events file; fails at the first difference.
    /// With --from-sync, the comparison starts at the event after that sync (found by
    /// re-encoding the events with the configuration).
    #[arg(long, value_name = "EVENTS")]
    pub verify: Option<PathBuf>,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
    /// Start at the first sync marker instead of bit 0 (for traces captured mid-run).
    #[arg(long)]
    pub from_sync: bool,
    /// Show each address of --out and --tail as function+offset (ELF symbol table), and
    /// ` at FILE:LINE` where the ELF has DWARF line information (built with -g).
    #[arg(long)]
    pub symbols: bool,
    /// Print the last N instructions of the trace (the post-mortem view).
    #[arg(long, value_name = "N")]
    pub tail: Option<usize>,
    /// Print the call tree the trace implies (calls and returns), with entry counts.
    #[arg(long)]
    pub calls: bool,
    /// Print the instructions executed per function, most first.
    #[arg(long)]
    pub profile: bool,
}

#[derive(Args, Debug)]
pub struct DumpArgs {
    /// The configuration the trace was encoded with: a trace file names its own (a -c that
    /// differs is an error); a bare bit stream (--raw) needs it.
    #[arg(short, long, value_name = "CONFIG")]
    pub config: Option<String>,
    /// The traced program (32-bit little-endian ARM ELF).
    #[arg(long, value_name = "PROG")]
    pub elf: PathBuf,
    /// The trace file; - for standard input.
    #[arg(short, long, value_name = "TRACE")]
    pub trace: PathBuf,
    /// The trace is a bare trace-port bit stream (a probe capture, a golden vector), not a
    /// trace file; needs -c.
    #[arg(long)]
    pub raw: bool,
    /// Decode even if the ELF is not the program the trace file names (a warning instead of
    /// an error).
    #[arg(long)]
    pub force: bool,
    /// Stop after this many records.
    #[arg(short = 'n', long, value_name = "N")]
    pub limit: Option<u64>,
    /// Print a JSON array of records instead of text lines.
    #[arg(long)]
    pub json: bool,
    /// Also show each record's bits (`raw=0101...`; JSON: "raw"). (`--raw` means a bare bit
    /// stream input, as for decode.)
    #[arg(long)]
    pub bits: bool,
    /// Start at the first sync marker instead of bit 0 (for traces captured mid-run).
    #[arg(long)]
    pub from_sync: bool,
    /// Start at the first sync marker at or after this byte of the trace (offsets stay
    /// those of the file).
    #[arg(long, value_name = "BYTE")]
    pub start_offset: Option<u64>,
}

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// A configuration to compare (repeatable). Default: fbase, base, nexs, bsdc-32x4-128,
    /// esdc-32x4-128, rsdc-32x4-128.
    #[arg(short, long = "config", value_name = "CONFIG")]
    pub configs: Vec<String>,
    /// Number of retired instructions of the synthetic run (1 to 10,000,000: the demo
    /// holds the whole run, about 60 bytes per instruction at most, in memory).
    #[arg(short = 'n', long, value_name = "N", default_value_t = 2_000_000,
          value_parser = clap::value_parser!(u64).range(1..=cmd_demo::MAX_INSTRUCTIONS))]
    pub instructions: u64,
    /// Seed of the synthetic program and run.
    #[arg(short, long, value_name = "S", default_value_t = 1)]
    pub seed: u64,
    /// Print the comparison as JSON.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print the comparison as CSV.
    #[arg(long)]
    pub csv: bool,
}

/// Run an ARM ELF program (ARMv5TE, ARM and Thumb; newlib rdimon semihosting or a static
/// ARM EABI Linux program, docs/linux.md) on the core model; with --config, feed its retire
/// events to the trace module. Without a program, runs the built-in default (jpeg_dct, about
/// 5.6 M instructions). Options go before the program: everything after the program's path
/// goes to the program, as with qemu-arm, valgrind or `gdb --args`.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// The program (a 32-bit little-endian ARM ELF) and its arguments, passed on verbatim
    /// (`-d`, `--` and all); omitted: the built-in default.
    #[arg(value_name = "PROG.elf ARGS", trailing_var_arg = true)]
    pub command: Vec<String>,
    /// Stop cleanly after this many instructions (default: no limit): the trace ends there
    /// with END, a note goes to stderr, the exit status is 0 and JSON says "truncated": true.
    #[arg(long, value_name = "N")]
    pub max_insns: Option<u64>,
    /// Write every retired instruction's address, one per line in the --addr-format form
    /// (the form `decode -o` writes; `binary`: 32-bit words); - for standard output (the program's own output then
    /// goes to stderr).
    #[arg(long, value_name = "FILE")]
    pub pc_trace: Option<PathBuf>,
    /// Form of the --pc-trace lines.
    #[arg(long, value_name = "FORM", value_enum, default_value = "annotated")]
    pub addr_format: io_util::AddrFormat,
    /// Write the run's retire events (docs/events-format.md), the file `decode --verify`
    /// checks a trace against; - for standard output.
    #[arg(long, value_name = "FILE")]
    pub events_out: Option<PathBuf>,
    /// Trace module configuration (repeatable): prints its statistics.
    #[arg(short, long = "config", value_name = "CONFIG")]
    pub configs: Vec<String>,
    /// Write the trace file (needs exactly one --config; docs/trace-format.md section 12).
    #[arg(long, value_name = "TRACE")]
    pub trace_out: Option<PathBuf>,
    /// With --trace-out: write the bare trace-port bit stream instead of a trace file.
    #[arg(long, requires = "trace_out")]
    pub raw: bool,
    /// Print the summary as one JSON object on stdout, after the program's output.
    #[arg(long)]
    pub json: bool,
    /// Also write the JSON summary to a file.
    #[arg(long, value_name = "FILE.json")]
    pub stats_out: Option<PathBuf>,
    /// Time the run on the XScale-like core model and print its report (cycles, CPI, caches,
    /// BTB, stalls; docs/timing.md). `--timing=FILE.toml` overrides parameters.
    #[arg(long, value_name = "FILE.toml", num_args = 0..=1, require_equals = true)]
    pub timing: Option<Option<PathBuf>>,
    /// Write the memory reference trace (fetches, reads, writes) to this file, streaming; -
    /// for standard output (the program's own output then goes to stderr).
    #[arg(long, value_name = "FILE")]
    pub refs: Option<PathBuf>,
    /// Format of --refs.
    #[arg(long = "format", value_name = "FORMAT", value_enum, default_value = "din", requires = "refs")]
    pub refs_format: refs::RefsFormat,
}

#[derive(Args, Debug)]
pub struct ConfigArgs {
    /// Configuration string, e.g. rsdc-32x4-128,repl=lru.
    #[arg(value_name = "CONFIG")]
    pub config: String,
    /// Print as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Exit code for usage and configuration errors (clap uses the same).
const EXIT_USAGE: u8 = 2;

/// A closed stdout (`streamtrace ... | head`, `| true`) ends the process the way it ends
/// `cat`, `grep` or `yes`: killed by SIGPIPE, which a shell reports as status 141, with no
/// message. The Rust runtime ignores SIGPIPE, which turns every write to a closed pipe into
/// an EPIPE error, and so every `println!` into a panic (exit 101). Restoring the default
/// disposition here, once, covers every write path alike: `println!`, the simulated
/// program's semihosted output, the stage commands' writers, and output a library crate
/// writes. Catching `BrokenPipe` errors instead would have to be done at each of those places
/// and cannot reach `println!` at all. Child processes (Verilator, Yosys) get the default
/// disposition from the standard library anyway.
#[cfg(unix)]
fn restore_default_sigpipe() {
    // SAFETY: `signal` with `SIG_DFL` only resets the disposition; it runs first in `main`,
    // before any other thread exists, and no Rust code relies on SIGPIPE being ignored.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn main() -> ExitCode {
    #[cfg(unix)]
    restore_default_sigpipe();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Encode(a) => cmd_encode::run(&a).map(|()| 0),
        Command::Decode(a) => cmd_decode::run(&a).map(|()| 0),
        Command::Dump(a) => cmd_dump::run(&a).map(|()| 0),
        Command::Demo(a) => cmd_demo::run(&a).map(|()| 0),
        Command::Config(a) => cmd_config::run(&a).map(|()| 0),
        Command::Run(a) => cmd_run::run(&a),
        Command::Sweep(a) => cmd_sweep::run_sweep(&a),
        Command::Merge(a) => cmd_sweep::run_merge(&a).map(|()| 0),
        Command::Pdats(a) => cmd_stages::run_pdats(&a, cmd_stages::Codec::Pdats).map(|()| 0),
        Command::Pdats2(a) => cmd_stages::run_pdats(&a, cmd_stages::Codec::Pdats2).map(|()| 0),
        Command::Diff(a) => cmd_stages::run_diff(&a).map(|()| 0),
        Command::Sad(a) => cmd_stages::run_sad(&a).map(|()| 0),
        Command::Lru(a) => cmd_stages::run_lru(&a).map(|()| 0),
        Command::Report(a) => cmd_report::run(&a).map(|()| 0),
        Command::Verilog(a) => cmd_hw::run_verilog(&a).map(|()| 0),
        Command::Area(a) => cmd_hw::run_area(&a).map(|()| 0),
        Command::Cosim(a) => cmd_hw::run_cosim(&a),
        Command::Wet(a) => cmd_wet::run(&a).map(|()| 0),
        Command::Citcat(a) => cmd_citcat::run(&a),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            // A closed pipe is not an error. On Unix SIGPIPE ends the process before a write
            // can return EPIPE (see `restore_default_sigpipe`); elsewhere this keeps it quiet.
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) {
                return ExitCode::SUCCESS;
            }
            eprintln!("streamtrace: error: {e:#}");
            if usage::is_usage(&e) {
                ExitCode::from(EXIT_USAGE)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

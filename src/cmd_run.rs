//! `streamtrace run`: run an ARM program on the core model, optionally through the trace
//! module. The program's own output passes through on stdout; the simulator's reports go
//! to stderr (or, with --json, one JSON object on stdout after the program's output).

use std::io::{BufWriter, Write};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use serde_json::json;

use streamtrace_isa::ElfImage;
use streamtrace_model::events_file::push_event_line;
use streamtrace_model::{Config, Encoder, PlainRun, RetireEvent, Stats};
use streamtrace_sw_decoder::AddressSink;
use streamtrace_sim::{Machine, MemAccess, ProfileHook, RetireHook, Semihost, SimError, TimingConfig};

use crate::cmd_encode::print_stats;
use crate::io_util::{create_output, is_std, load_elf, output_name, parse_config, pct, thousands, write_file, AddrWriter};
use crate::trace_file::write_trace;
use crate::usage::bail_usage;
use crate::refs::RefsWriter;
use crate::table::Table;
use crate::RunArgs;

/// The built-in default program (testbenches/programs/src/jpeg_dct.c): an 8x8 integer DCT
/// and bit packing of a generated image, about 5.6 M instructions.
const BUILTIN_ELF: &[u8] = include_bytes!("../testbenches/programs/bin/jpeg_dct.elf");
const BUILTIN_CMDLINE: &str = "jpeg_dct.elf 128 96";

struct RunHook {
    profile: ProfileHook,
    encoders: Vec<Encoder>,
    encode_error: Option<String>,
    pc_trace: Option<AddrWriter>,
    events: Option<BufWriter<Box<dyn Write + Send>>>,
    events_error: Option<std::io::Error>,
    /// The line being written to `events` (kept to reuse its allocation).
    event_line: Vec<u8>,
    refs: Option<RefsWriter<BufWriter<Box<dyn Write + Send>>>>,
    refs_error: Option<std::io::Error>,
}

impl RunHook {
    fn failed(&self) -> bool {
        self.encode_error.is_some() || self.refs_error.is_some() || self.events_error.is_some()
    }
}

impl RetireHook for RunHook {
    // Always inlined into the simulation loop (see `simulate`).
    #[inline(always)]
    fn retire(&mut self, ev: &RetireEvent, accesses: &[MemAccess]) {
        self.profile.push(ev);
        for e in &mut self.encoders {
            if let Err(err) = e.push(ev) {
                self.encode_error.get_or_insert_with(|| err.to_string());
            }
        }
        if let Some(w) = &mut self.pc_trace {
            w.addresses(&[ev.iw_addr()]);
        }
        if let Some(w) = &mut self.events {
            if self.events_error.is_none() {
                self.event_line.clear();
                push_event_line(ev, &mut self.event_line);
                self.event_line.push(b'\n');
                if let Err(e) = w.write_all(&self.event_line) {
                    self.events_error = Some(e);
                }
            }
        }
        if let Some(w) = &mut self.refs {
            if self.refs_error.is_none() {
                if let Err(e) = w.write_instruction(ev, accesses) {
                    self.refs_error = Some(e);
                }
            }
        }
    }

    /// Plain instructions in runs when nothing needs them one by one (the events file and
    /// the reference trace do): as many as the profile and every encoder take in one step.
    #[inline(always)]
    fn plain_budget(&self) -> u32 {
        if self.events.is_some() || self.refs.is_some() || self.encode_error.is_some() {
            return 0;
        }
        self.encoders.iter().fold(self.profile.plain_budget(), |b, e| b.min(e.plain_budget()))
    }

    #[inline(always)]
    fn retire_plain(&mut self, run: &PlainRun) {
        self.profile.push_plain_run(run);
        for e in &mut self.encoders {
            if let Err(err) = e.push_plain_run(run) {
                self.encode_error.get_or_insert_with(|| err.to_string());
            }
        }
        if let Some(w) = &mut self.pc_trace {
            // The run's addresses, a bufferful at a time.
            let (size, first) = (if run.thumb { 2 } else { 4 }, run.pc | run.thumb as u32);
            let mut buf = [0u32; 64];
            let mut done = 0;
            while done < run.count {
                let n = (run.count - done).min(buf.len() as u32);
                for (i, a) in buf[..n as usize].iter_mut().enumerate() {
                    *a = first.wrapping_add((done + i as u32) * size);
                }
                w.addresses(&buf[..n as usize]);
                done += n;
            }
        }
    }
}

/// Why the simulation loop ended.
enum Stop {
    Exited(i32),
    Limit,
    Fault(streamtrace_sim::SimError),
    /// The hook recorded an encoder, reference-trace or events-file error.
    Hook,
}

/// Instructions [`simulate`] runs between two looks at the hook's errors (an error stops
/// the run at most this many instructions after the instruction it names).
const HOOK_CHECK_SLICE: u64 = 1 << 16;

/// The simulation loop: [`Machine::run`] (the plain instructions in runs where the hook
/// offers them) in slices, with the hook's errors looked at after each.
#[inline(never)]
fn simulate(machine: &mut Machine, hook: &mut RunHook, max_insns: u64) -> Stop {
    loop {
        if machine.retired >= max_insns {
            return Stop::Limit;
        }
        let slice_end = max_insns.min(machine.retired.saturating_add(HOOK_CHECK_SLICE));
        let result = machine.run(slice_end, hook);
        if hook.failed() {
            return Stop::Hook;
        }
        match result {
            Ok(code) => return Stop::Exited(code),
            Err(SimError::InstructionLimit { .. }) => {}
            Err(e) => return Stop::Fault(e),
        }
    }
}

pub fn run(args: &RunArgs) -> Result<u8> {
    let program = args.command.first().map(std::path::PathBuf::from);
    // `--timing FILE.toml` (without `=`) would make the file the program: say so.
    if let (Some(None), Some(p)) = (&args.timing, &program) {
        if p.extension().is_some_and(|e| e == "toml") {
            bail_usage!("{} looks like a timing configuration: write --timing={}", p.display(), p.display());
        }
    }
    let timing = match &args.timing {
        Some(Some(path)) => Some(TimingConfig::from_toml_file(path)?),
        Some(None) => Some(TimingConfig::default()),
        None => None,
    };
    let (elf, argv, name) = match &program {
        Some(path) => {
            let elf = load_elf(path).with_context(|| format!("loading {}", path.display()))?;
            (elf, args.command.clone(), path.display().to_string())
        }
        None => {
            let elf = ElfImage::from_bytes_named(BUILTIN_ELF, "built-in jpeg_dct.elf")?;
            let argv = BUILTIN_CMDLINE.split(' ').map(str::to_string).collect();
            (elf, argv, "built-in jpeg_dct".to_string())
        }
    };
    // Taken before the run: what a decoder's ELF must match.
    let identity = elf.identity();
    let configs: Vec<Config> = args.configs.iter().map(|c| parse_config(c)).collect::<Result<_>>()?;
    if args.trace_out.is_some() && configs.len() != 1 {
        bail_usage!("--trace-out needs exactly one --config (got {})", configs.len());
    }
    // `-`: standard output (io_util::create_output); the program's own output then goes to
    // stderr, so that stdout holds the trace alone.
    let dash = |p: &Option<std::path::PathBuf>| p.as_deref().is_some_and(is_std);
    let on_stdout: Vec<&str> = [
        (&args.pc_trace, "--pc-trace -"),
        (&args.refs, "--refs -"),
        (&args.events_out, "--events-out -"),
        (&args.trace_out, "--trace-out -"),
    ]
        .into_iter()
        .filter(|(p, _)| dash(p))
        .map(|(_, name)| name)
        .collect();
    if on_stdout.len() > 1 {
        bail_usage!("{} would mix on stdout: send all but one to a file", on_stdout.join(" and "));
    }
    if args.json && !on_stdout.is_empty() {
        bail_usage!("--json and {} would mix on stdout: send one to a file (or use --stats-out)", on_stdout[0]);
    }
    let data_on_stdout = !on_stdout.is_empty();
    let pc_trace = args.pc_trace.as_deref().map(|p| AddrWriter::create(p, args.addr_format)).transpose()?;
    let events = match &args.events_out {
        Some(p) => Some(BufWriter::with_capacity(1 << 20, create_output(p)?)),
        None => None,
    };
    // The reference trace streams through a buffer: it is never held in memory.
    let refs = match &args.refs {
        Some(p) => Some(RefsWriter::new(BufWriter::with_capacity(1 << 20, create_output(p)?), args.refs_format)),
        None => None,
    };
    let semihost = Semihost::new().with_args(&argv).with_stderr(std::io::stderr());
    let semihost = if data_on_stdout {
        semihost.with_stdout(std::io::stderr())
    } else {
        semihost.with_stdout(std::io::stdout())
    };
    let mut machine = Machine::load(&elf, semihost)?;
    if let Some(cfg) = timing {
        machine.enable_timing(cfg).context("--timing")?;
    }
    machine.log_accesses = refs.is_some();
    let mut hook = RunHook {
        profile: ProfileHook::new(),
        encoders: configs.iter().map(Encoder::new).collect(),
        encode_error: None,
        pc_trace,
        events,
        events_error: None,
        event_line: Vec::with_capacity(64),
        refs,
        refs_error: None,
    };
    let start = Instant::now();
    let max_insns = args.max_insns.unwrap_or(u64::MAX);
    let (exit, failure, truncated) = match simulate(&mut machine, &mut hook, max_insns) {
        Stop::Exited(code) => (Some(code), None, false),
        Stop::Limit => (None, None, true),
        Stop::Fault(e) => (None, Some(format!("{name}: {e} after {} instructions", thousands(machine.retired))), false),
        Stop::Hook => {
            if let Some(e) = &hook.encode_error {
                bail!("trace module rejected a retire event: {e}");
            }
            if let Some(e) = hook.events_error.take() {
                let path = args.events_out.as_deref().map_or(String::new(), output_name);
                return Err(e).with_context(|| format!("writing the events file {path}"));
            }
            let e = hook.refs_error.take().expect("the hook stopped the run with an error");
            let path = args.refs.as_deref().map_or(String::new(), output_name);
            return Err(e).with_context(|| format!("writing the reference trace {path}"));
        }
    };
    let seconds = start.elapsed().as_secs_f64();
    machine.semihost.flush().context("flushing the program's output")?;
    if let Some(w) = hook.pc_trace.take() {
        w.finish().context("writing the PC trace")?;
    }
    if let Some(mut w) = hook.events.take() {
        let path = args.events_out.as_deref().map_or(String::new(), output_name);
        w.flush().with_context(|| format!("writing the events file {path}"))?;
    }
    let references = match hook.refs.take() {
        Some(w) => {
            let n = w.refs();
            let path = args.refs.as_deref().map_or(String::new(), output_name);
            w.finish().with_context(|| format!("writing the reference trace {path}"))?;
            Some(n)
        }
        None => None,
    };
    let profile = hook.profile.finish();
    let stats: Vec<Stats> = hook
        .encoders
        .into_iter()
        .map(|e| {
            let (trace, stats) = e.finish();
            if let Some(path) = &args.trace_out {
                write_trace(path, &configs[0], identity.clone(), &trace.bytes, stats.instructions, args.raw)?;
            }
            Ok(stats)
        })
        .collect::<Result<_>>()?;
    let mips = if seconds > 0.0 { machine.retired as f64 / seconds / 1e6 } else { 0.0 };
    let summary = json!({
        "program": name,
        "instructions": machine.retired,
        "exit_code": exit,
        "truncated": truncated,
        "max_insns": args.max_insns,
        "error": failure,
        "seconds": seconds,
        "mips": mips,
        "profile": profile,
        "trace": stats,
        "timing": machine.timing_report(),
        "references": references,
    });
    if let Some(path) = &args.stats_out {
        write_file(path, serde_json::to_string_pretty(&summary)?.as_bytes())?;
    }
    if args.json {
        println!("{summary}");
    } else {
        let mut err = std::io::stderr().lock();
        writeln!(err, "\n{name}: {} instructions in {seconds:.2} s ({mips:.1} MIPS)", thousands(machine.retired))?;
        writeln!(
            err,
            "streams {} (unique {}), max SL {}, avg SL {:.1}, {} unique streams cover 90% of executed streams, {} Thumb instructions, {} exceptions",
            thousands(profile.streams),
            thousands(profile.unique_streams),
            profile.max_stream_len,
            profile.avg_stream_len,
            thousands(profile.streams_for_90pct),
            thousands(profile.thumb_instructions),
            thousands(profile.exceptions),
        )?;
        if let (Some(n), Some(p)) = (references, &args.refs) {
            writeln!(err, "{} memory references ({}) written to {}", thousands(n), args.refs_format.name(), p.display())?;
        }
        if let Some(t) = machine.timing_report() {
            writeln!(err, "{t}")?;
        }
        if let [one] = stats.as_slice() {
            writeln!(err)?;
            print_stats(&mut err, one)?;
        } else if !stats.is_empty() {
            writeln!(err)?;
            let mut t = Table::new(["config", "bits/instr", "hrSDC", "hrLSP", "mSDCt", "hSDCt", "hLSPt", "escape"]);
            for s in &stats {
                // pft has no stream records (its own view: `run -c pft` alone).
                let share = |b: u64| if s.pft.is_some() { "-".to_string() } else { format!("{:.1}%", pct(b, s.total_bits)) };
                let rate = |r: f64| if s.sdc_lookups > 0 { format!("{r:.3}") } else { "-".to_string() };
                t.row([
                    s.config.clone(),
                    format!("{:.4}", s.bits_per_instruction),
                    rate(s.hr_sdc),
                    rate(s.hr_lsp),
                    share(s.bits.miss),
                    share(s.bits.sdc_hit),
                    share(s.bits.lsp_hit),
                    share(s.bits.escape),
                ]);
            }
            t.print(&mut err)?;
        }
    }
    if let Some(f) = failure {
        bail!(f);
    }
    if truncated {
        // A window of the run, not a failure: the trace ended with END like any other.
        eprintln!(
            "streamtrace: note: stopped at the --max-insns limit of {} instructions at {:#010x}; the program did not finish",
            thousands(max_insns),
            machine.cpu.r[15]
        );
    }
    // The program's exit status becomes ours (truncated to 8 bits as by a shell).
    Ok(exit.unwrap_or(0) as u8)
}

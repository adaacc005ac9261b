//! `streamtrace decode`: trace + ELF -> instruction addresses (streamed to a file and/or
//! compared with an events file as they are produced), and a summary.

use std::io::Write;
use std::time::Instant;

use anyhow::{bail, Result};
use serde::Serialize;
use std::ops::ControlFlow;

use streamtrace_sw_decoder::{AddressSink, Step, StreamDecoder, StreamRecord, TraceElement};

use crate::io_util::{input_name, is_std, pct, state, sync_points, thousands, AddrFormat, AddrWriter, Verifier};
use crate::trace_file::{DecoderFeed, TraceInput, TraceOptions};
use crate::usage::bail_usage;
use streamtrace_isa::ElfImage;
use streamtrace_sw_decoder::views::{CallTree, Profile, Symbolizer, Tail};
use crate::table::Table;
use crate::DecodeArgs;

/// Fans the decoded addresses out to the optional text file, verifier and views.
struct Sinks<'s> {
    count: u64,
    /// Any of the optional sinks below is present (one test per run of addresses when
    /// the decode only counts).
    any: bool,
    writer: Option<AddrWriter>,
    verifier: Option<Verifier>,
    tail: Option<Tail>,
    profile: Option<Profile<'s>>,
    calls: Option<CallTree<'s, ElfImage>>,
}

impl AddressSink for Sinks<'_> {
    #[inline]
    fn addresses(&mut self, addrs: &[u32]) {
        self.count += addrs.len() as u64;
        if self.any {
            self.fan_out(addrs);
        }
    }
}

impl Sinks<'_> {
    #[inline(never)]
    fn fan_out(&mut self, addrs: &[u32]) {
        if let Some(w) = &mut self.writer {
            w.addresses(addrs);
        }
        if let Some(v) = &mut self.verifier {
            v.addresses(addrs);
        }
        if let Some(t) = &mut self.tail {
            t.addresses(addrs);
        }
        if let Some(p) = &mut self.profile {
            p.addresses(addrs);
        }
        if let Some(c) = &mut self.calls {
            c.addresses(addrs);
        }
    }
}

#[derive(Serialize, Debug)]
struct TailRow {
    address: String,
    state: char,
    #[serde(skip_serializing_if = "Option::is_none")]
    symbol: Option<String>,
}

#[derive(Serialize, Debug)]
struct ProfileRow {
    function: String,
    instructions: u64,
    share: f64,
}

#[derive(Serialize, Debug)]
struct CallRow {
    depth: usize,
    function: String,
    calls: u64,
}

#[derive(Serialize, Default, Debug)]
struct StreamCounts {
    lsp_hit: u64,
    sdc_hit: u64,
    miss_address: u64,
    miss_inferred: u64,
}

#[derive(Serialize, Debug)]
struct ErrorInfo {
    bit_offset: u64,
    message: String,
    /// Where decoding resumed (the byte after the next sync marker), if anywhere.
    resumed_at_bit: Option<u64>,
}

#[derive(Serialize, Default, Debug)]
struct DecodeSummary {
    config: String,
    trace: String,
    elf: String,
    trace_bytes: u64,
    start_bit: u64,
    instructions: u64,
    streams: u64,
    stream_records: StreamCounts,
    exceptions: u64,
    syncs: u64,
    overflows: u64,
    lost_instructions: u64,
    errors: Vec<ErrorInfo>,
    ended_cleanly: bool,
    end_bit: Option<u64>,
    verified: Option<bool>,
    verify_message: Option<String>,
    seconds: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    tail: Option<Vec<TailRow>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    profile: Option<Vec<ProfileRow>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    calls: Option<Vec<CallRow>>,
}

pub fn run(args: &DecodeArgs) -> Result<()> {
    // The ELF is read once: the image, and with --symbols its DWARF line table.
    let elf_name = args.elf.display().to_string();
    let elf_bytes = streamtrace_isa::read_program(&args.elf)?;
    let image = ElfImage::from_bytes_named(&elf_bytes, &elf_name)?;
    let mut input = open_trace(args, &image)?;
    let cfg = input.cfg;
    let config_name = cfg.to_string();
    let trace_name = input.name.clone();
    // --from-sync --verify: the instruction each sync marker of the full trace follows.
    let syncs = match (&args.verify, args.from_sync) {
        (Some(events), true) => {
            if is_std(events) {
                bail_usage!("--verify - cannot be combined with --from-sync: the events file is read twice");
            }
            Some(sync_points(&cfg, events)?)
        }
        _ => None,
    };
    let mut misplaced_sync = None;
    let mut symbolizer = Symbolizer::new(image.symbols());
    if args.symbols {
        // Source lines only for the views that print them (DWARF can be large).
        symbolizer = symbolizer.with_lines(streamtrace_isa::line_table(&elf_bytes, &elf_name)?);
    }
    drop(elf_bytes);
    if args.symbols && args.out.is_some() && args.addr_format == AddrFormat::Binary {
        bail_usage!("--symbols cannot annotate --addr-format binary (no text lines to add them to)");
    }
    let mut writer = args.out.as_deref().map(|p| AddrWriter::create(p, args.addr_format)).transpose()?;
    if let Some(w) = &mut writer {
        w.symbols = args.symbols.then(|| symbolizer.clone());
    }
    let mut sinks = Sinks {
        count: 0,
        any: false,
        writer,
        verifier: args.verify.as_deref().map(Verifier::open).transpose()?,
        tail: args.tail.map(Tail::new),
        profile: args.profile.then(|| Profile::new(&symbolizer)),
        calls: args.calls.then(|| CallTree::new(&symbolizer, &image)),
    };
    sinks.any = sinks.writer.is_some()
        || sinks.verifier.is_some()
        || sinks.tail.is_some()
        || sinks.profile.is_some()
        || sinks.calls.is_some();
    let mut s = DecodeSummary {
        config: config_name,
        trace: trace_name.clone(),
        elf: args.elf.display().to_string(),
        ..Default::default()
    };
    let t0 = Instant::now();
    // The trace is streamed through the decoder in chunks (a pipe with `-t -`, or a file
    // larger than memory).
    let mut dec = StreamDecoder::new(&cfg, &image);
    if args.from_sync {
        dec = dec.from_sync();
    }
    let mut started = !args.from_sync;
    let mut on_step = |step: Step, sinks: &mut Sinks| {
        match step {
            Step::Element(el) => count_element(&mut s, el),
            Step::Resynced { bit } if !started => {
                started = true;
                s.start_bit = bit;
                if let (Some(v), Some(points)) = (&mut sinks.verifier, &syncs) {
                    match points.iter().find(|&&(end, _)| end == bit) {
                        Some(&(_, before)) => v.skip(before),
                        None => misplaced_sync = Some(bit),
                    }
                }
            }
            Step::Resynced { bit } => {
                if !args.json {
                    eprintln!("streamtrace: {trace_name}: resuming at the sync marker ending at bit {bit}");
                }
                if let Some(e) = s.errors.last_mut() {
                    e.resumed_at_bit = Some(bit);
                }
            }
            Step::Error(e) => {
                if !args.json {
                    eprintln!("streamtrace: {trace_name}: {e}");
                }
                s.errors.push(ErrorInfo { bit_offset: e.offset(), message: e.to_string(), resumed_at_bit: None });
            }
            Step::Progress | Step::NeedInput | Step::Finished => {}
        }
        ControlFlow::Continue(())
    };
    while let Step::NeedInput = dec.run(&mut sinks, &mut on_step) {
        if !input.feed(&mut DecoderFeed { dec: &mut dec, name: &trace_name, quiet: args.json })? {
            dec.finish();
        }
    }
    s.trace_bytes = dec.bytes_pushed();
    if let Some(bit) = misplaced_sync {
        bail!(
            "{trace_name}: --verify: no sync marker of {} re-encoded with {} ends at bit {bit}; --from-sync with --verify needs the trace as written from its start",
            args.verify.as_deref().map(input_name).unwrap_or_default(),
            s.config
        );
    }
    if args.from_sync && !started {
        bail!("{trace_name}: --from-sync: the trace holds no sync marker");
    }
    if !args.json && s.errors.last().is_some_and(|e| e.resumed_at_bit.is_none()) {
        eprintln!("streamtrace: {trace_name}: no further sync marker; decoding stops");
    }
    s.seconds = t0.elapsed().as_secs_f64();
    s.instructions = sinks.count;
    if let Some(w) = sinks.writer.take() {
        w.finish()?;
    }
    let sym = |a: u32| args.symbols.then(|| symbolizer.format(a));
    s.tail = sinks.tail.take().map(|t| {
        t.last().map(|a| TailRow { address: format!("{:08x}", a & !1), state: state(a), symbol: sym(a) }).collect()
    });
    s.profile = sinks.profile.take().map(|p| {
        p.rows()
            .into_iter()
            .map(|(function, n)| ProfileRow { function, instructions: n, share: pct(n, sinks.count) })
            .collect()
    });
    s.calls = sinks.calls.take().map(|c| {
        let mut rows = Vec::new();
        c.walk(|depth, node| rows.push(CallRow { depth, function: c.name(node).to_string(), calls: node.calls }));
        rows
    });
    if let Some(v) = sinks.verifier.take() {
        match v.finish() {
            Ok(_) => s.verified = Some(true),
            Err(msg) => {
                s.verified = Some(false);
                s.verify_message = Some(msg);
            }
        }
    }

    // With the addresses on stdout (`-o -`), the summary goes to stderr.
    let mut out: Box<dyn Write> = if args.out.as_deref().is_some_and(is_std) {
        Box::new(std::io::stderr().lock())
    } else {
        Box::new(std::io::stdout().lock())
    };
    if args.json {
        serde_json::to_writer_pretty(&mut out, &s)?;
        writeln!(out)?;
    } else {
        print_views(&mut out, &s)?;
        print_summary(&mut out, &s, args)?;
    }
    out.flush()?;

    let mut problems = Vec::new();
    if let Some(first) = s.errors.first() {
        problems.push(format!(
            "{trace_name}: {} decode error(s); first: {}",
            s.errors.len(),
            first.message
        ));
    } else if !s.ended_cleanly {
        problems.push(format!(
            "{trace_name}: trace did not end with an END record"
        ));
    }
    if let Some(msg) = &s.verify_message {
        problems.push(msg.clone());
    }
    // From a sync marker the instructions before it are not decoded: no count to compare.
    let whole = s.errors.is_empty() && s.ended_cleanly && !args.from_sync;
    problems.extend(input.end_problems(s.instructions, s.lost_instructions, whole));
    if !problems.is_empty() {
        bail!("{}", problems.join("; "));
    }
    Ok(())
}

/// The trace input of `decode`: a trace file (configuration and program checked) or, with
/// `--raw`, a bare bit stream.
fn open_trace(args: &DecodeArgs, image: &ElfImage) -> Result<TraceInput> {
    let opts = TraceOptions { trace: &args.trace, config: args.config.as_deref(), raw: args.raw, force: args.force };
    TraceInput::open(&opts, image)
}

fn print_views(out: &mut impl Write, s: &DecodeSummary) -> std::io::Result<()> {
    if let Some(tail) = &s.tail {
        writeln!(out, "last {} instructions:", tail.len())?;
        for r in tail {
            match &r.symbol {
                Some(f) => writeln!(out, "  {} {}  {f}", r.address, r.state)?,
                None => writeln!(out, "  {} {}", r.address, r.state)?,
            }
        }
        writeln!(out)?;
    }
    if let Some(calls) = &s.calls {
        writeln!(out, "call tree (calls into each function along each path):")?;
        for r in calls {
            writeln!(out, "  {:indent$}{} x{}", "", r.function, r.calls, indent = 2 * r.depth)?;
        }
        writeln!(out)?;
    }
    if let Some(profile) = &s.profile {
        let mut t = Table::new(["function", "instructions", "share %"]);
        for r in profile {
            t.row([r.function.clone(), thousands(r.instructions), format!("{:.2}", r.share)]);
        }
        t.print(out)?;
        writeln!(out)?;
    }
    Ok(())
}

fn count_element(s: &mut DecodeSummary, el: TraceElement) {
    match el {
        TraceElement::Stream { record, .. } => {
            s.streams += 1;
            let c = &mut s.stream_records;
            match record {
                StreamRecord::LspHit => c.lsp_hit += 1,
                StreamRecord::SdcHit { .. } => c.sdc_hit += 1,
                StreamRecord::Miss { inferred: false } => c.miss_address += 1,
                StreamRecord::Miss { inferred: true } => c.miss_inferred += 1,
            }
        }
        TraceElement::Exception { .. } => s.exceptions += 1,
        TraceElement::Sync { .. } => s.syncs += 1,
        TraceElement::Overflow { lost, .. } => {
            s.overflows += 1;
            s.lost_instructions += lost as u64;
        }
        TraceElement::End { offset } => {
            s.ended_cleanly = true;
            s.end_bit = Some(offset);
        }
        TraceElement::Record(_) => {}
    }
}

fn print_summary(
    out: &mut impl Write,
    s: &DecodeSummary,
    args: &DecodeArgs,
) -> std::io::Result<()> {
    let mut t = Table::key_value("decode", "value");
    t.row(["configuration".to_string(), s.config.clone()]);
    t.row([
        "trace".to_string(),
        format!("{} ({} bytes)", s.trace, thousands(s.trace_bytes)),
    ]);
    if args.from_sync {
        t.row([
            "started at".to_string(),
            format!("bit {} (first sync marker)", s.start_bit),
        ]);
    }
    t.row([
        "instructions decoded".to_string(),
        thousands(s.instructions),
    ]);
    let c = &s.stream_records;
    t.row([
        "streams".to_string(),
        format!(
            "{} (LSP hit {}, SDC hit {}, miss with address {}, miss inferred {})",
            thousands(s.streams),
            thousands(c.lsp_hit),
            thousands(c.sdc_hit),
            thousands(c.miss_address),
            thousands(c.miss_inferred)
        ),
    ]);
    t.row(["exceptions".to_string(), thousands(s.exceptions)]);
    t.row(["syncs".to_string(), thousands(s.syncs)]);
    t.row([
        "overflows".to_string(),
        format!(
            "{} ({} instructions lost)",
            thousands(s.overflows),
            thousands(s.lost_instructions)
        ),
    ]);
    t.row(["errors".to_string(), thousands(s.errors.len() as u64)]);
    t.row([
        "ended cleanly".to_string(),
        match s.end_bit {
            Some(bit) if s.ended_cleanly => format!("yes (END at bit {bit})"),
            _ => "no".to_string(),
        },
    ]);
    if let Some(v) = s.verified {
        let name = args
            .verify
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        t.row([
            "verified".to_string(),
            if v {
                format!(
                    "yes: all {} instructions match {name}",
                    thousands(s.instructions)
                )
            } else {
                "NO".to_string()
            },
        ]);
    }
    if let Some(p) = &args.out {
        t.row(["addresses written to".to_string(), p.display().to_string()]);
    }
    let mips = if s.seconds > 0.0 {
        s.instructions as f64 / s.seconds / 1e6
    } else {
        0.0
    };
    t.row([
        "time".to_string(),
        format!("{:.3} s ({mips:.1} M instr/s)", s.seconds),
    ]);
    t.print(out)
}

//! `streamtrace decode`: trace + ELF -> instruction addresses (streamed to a file and/or
//! compared with an events file as they are produced), and a summary.

use std::io::Write;
use std::time::Instant;

use anyhow::{anyhow, bail, Result};
use serde::Serialize;
use streamtrace_sw_decoder::{inflate_gzip, AddressSink, Decoder, StreamRecord, TraceElement};

use crate::io_util::{is_std, load_elf, parse_config, read_trace, thousands, AddrWriter, Verifier};
use crate::table::Table;
use crate::DecodeArgs;

/// Fans the decoded addresses out to the optional text file and the optional verifier.
struct Sinks {
    count: u64,
    writer: Option<AddrWriter>,
    verifier: Option<Verifier>,
}

impl AddressSink for Sinks {
    #[inline]
    fn addresses(&mut self, addrs: &[u32]) {
        self.count += addrs.len() as u64;
        if let Some(w) = &mut self.writer {
            w.addresses(addrs);
        }
        if let Some(v) = &mut self.verifier {
            v.addresses(addrs);
        }
    }
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
}

pub fn run(args: &DecodeArgs) -> Result<()> {
    let cfg = parse_config(&args.config)?;
    let config_name = cfg.to_string();
    let image = load_elf(&args.elf)?;
    let bytes = read_trace(&args.trace)?;
    // SW-GZIP traces are BASE traces in a gzip member.
    let (cfg, bytes) = inflate_gzip(&cfg, &bytes).map_err(|e| anyhow!("{}: {e}", args.trace.display()))?;
    let trace_name = args.trace.display().to_string();
    let mut sinks = Sinks {
        count: 0,
        writer: args.out.as_deref().map(AddrWriter::create).transpose()?,
        verifier: args.verify.as_deref().map(Verifier::open).transpose()?,
    };
    let mut s = DecodeSummary {
        config: config_name,
        trace: trace_name.clone(),
        elf: args.elf.display().to_string(),
        trace_bytes: bytes.len() as u64,
        ..Default::default()
    };
    let t0 = Instant::now();
    let mut dec = Decoder::new(&cfg, &bytes, &image);
    if args.from_sync {
        s.start_bit = dec
            .resync()
            .ok_or_else(|| anyhow!("{trace_name}: --from-sync: the trace holds no sync marker"))?;
    }
    loop {
        match dec.next_element(&mut sinks) {
            Ok(Some(el)) => match el {
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
            },
            Ok(None) => break,
            Err(e) => {
                let resumed = dec.resync();
                if !args.json {
                    eprintln!("streamtrace: {trace_name}: {e}");
                    match resumed {
                        Some(bit) => eprintln!("streamtrace: {trace_name}: resuming at the sync marker ending at bit {bit}"),
                        None => eprintln!("streamtrace: {trace_name}: no further sync marker; decoding stops"),
                    }
                }
                s.errors.push(ErrorInfo {
                    bit_offset: e.offset(),
                    message: e.to_string(),
                    resumed_at_bit: resumed,
                });
                if resumed.is_none() {
                    break;
                }
            }
        }
    }
    s.seconds = t0.elapsed().as_secs_f64();
    s.instructions = sinks.count;
    if let Some(w) = sinks.writer.take() {
        w.finish()?;
    }
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
    if !problems.is_empty() {
        bail!("{}", problems.join("; "));
    }
    Ok(())
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

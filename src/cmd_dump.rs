//! `streamtrace dump`: every record of a trace with its bit offset, length and meaning, in
//! the spirit of OpenCSD's packet lister. Uses the decoder's record reporting: each
//! `TraceElement::Record` is followed by the element(s) that record stands for.

use std::io::{BufWriter, Write};

use anyhow::{anyhow, bail, Result};
use serde_json::{json, Value};
use streamtrace_model::format::EscapeType;
use streamtrace_model::Config;
use streamtrace_sw_decoder::{inflate_gzip, Decoder, NullSink, RecordInfo, RecordKind, TraceElement};

use crate::io_util::{load_elf, state};
use crate::trace_file::{TraceInput, TraceOptions, WholeStream};
use streamtrace_isa::ElfImage;
use crate::DumpArgs;

/// Record name and its fields, as printed.
fn describe(cfg: &Config, kind: &RecordKind) -> (&'static str, String) {
    let miss = if cfg.scheme.uses_sdc() {
        "SDC-MISS"
    } else {
        "STREAM"
    };
    match *kind {
        RecordKind::LspHit => ("LSP-HIT", String::new()),
        RecordKind::LspRun { n, width } => ("LSP-RUN", format!("n={n} s={width}")),
        RecordKind::SdcHit { si } => ("SDC-HIT", format!("si={si}")),
        RecordKind::MissInferred { sl } => (miss, format!("sl={sl} inferred")),
        RecordKind::MissAddress { sl, addr, lvsa_hit } => (
            miss,
            match lvsa_hit {
                None => format!("sl={sl} addr=0x{addr:08x}"),
                Some(h) => format!(
                    "sl={sl} addr=0x{addr:08x} lvsa={}",
                    if h { "hit" } else { "miss" }
                ),
            },
        ),
        RecordKind::Escape { kind, lost } => match kind {
            EscapeType::Overflow => ("OVERFLOW", format!("lost={lost}")),
            other => (other.name(), String::new()),
        },
    }
}

fn kind_json(cfg: &Config, kind: &RecordKind) -> Value {
    let (name, _) = describe(cfg, kind);
    match *kind {
        RecordKind::LspHit => json!({ "kind": name }),
        RecordKind::LspRun { n, width } => json!({ "kind": name, "n": n, "width": width }),
        RecordKind::SdcHit { si } => json!({ "kind": name, "si": si }),
        RecordKind::MissInferred { sl } => json!({ "kind": name, "sl": sl, "inferred": true }),
        RecordKind::MissAddress { sl, addr, lvsa_hit } => {
            json!({ "kind": name, "sl": sl, "inferred": false, "addr": addr, "lvsa_hit": lvsa_hit })
        }
        RecordKind::Escape {
            kind: EscapeType::Overflow,
            lost,
        } => json!({ "kind": name, "lost": lost }),
        RecordKind::Escape { .. } => json!({ "kind": name }),
    }
}

fn stream_json(sa: u32, sl: u32) -> Value {
    json!({ "sa": sa, "pc": format!("0x{:08x}", sa & !1), "state": state(sa).to_string(), "sl": sl })
}

/// The record part of a text line: offset, length, name and fields.
fn head(cfg: &Config, info: &RecordInfo) -> String {
    let (name, fields) = describe(cfg, &info.kind);
    format!(
        "bit {:06}  len {:<3} {name:<8} {fields:<32}",
        info.offset, info.bits
    )
}

/// Output in one of the two formats; JSON is streamed as an array, one record per element.
struct Printer<W: Write> {
    out: W,
    json: bool,
    first: bool,
    cfg: Config,
    /// The record whose elements are being printed, with the streams collected for JSON.
    current: Option<(RecordInfo, Vec<Value>)>,
}

impl<W: Write> Printer<W> {
    fn start(&mut self) -> std::io::Result<()> {
        if self.json {
            writeln!(self.out, "[")?;
        }
        Ok(())
    }

    fn json_item(&mut self, v: &Value) -> std::io::Result<()> {
        if !self.first {
            writeln!(self.out, ",")?;
        }
        self.first = false;
        write!(self.out, "  {v}")
    }

    /// A record starts. Runs get a line of their own; their streams follow indented.
    fn record(&mut self, info: RecordInfo) -> std::io::Result<()> {
        if !self.json {
            if let RecordKind::LspRun { .. } = info.kind {
                let h = head(&self.cfg, &info);
                writeln!(self.out, "{}", h.trim_end())?;
            }
        }
        self.current = Some((info, Vec::new()));
        Ok(())
    }

    /// An element of the current record.
    fn element(&mut self, el: &TraceElement) -> std::io::Result<()> {
        let Some((info, streams)) = &mut self.current else {
            return Ok(());
        };
        let is_run = matches!(info.kind, RecordKind::LspRun { .. });
        if let TraceElement::Stream { sa, sl, .. } = *el {
            if self.json {
                streams.push(stream_json(sa, sl));
            } else if is_run {
                // Under the "->" of one-line records.
                let indent = head(&self.cfg, info).chars().count();
                writeln!(
                    self.out,
                    "{:indent$} -> stream 0x{:08x} {} len {sl}",
                    "",
                    sa & !1,
                    state(sa)
                )?;
            } else {
                let h = head(&self.cfg, info);
                writeln!(
                    self.out,
                    "{h} -> stream 0x{:08x} {} len {sl}",
                    sa & !1,
                    state(sa)
                )?;
            }
        } else if !self.json {
            let h = head(&self.cfg, info);
            writeln!(self.out, "{}", h.trim_end())?;
        }
        Ok(())
    }

    /// The current record is complete.
    fn end_record(&mut self) -> std::io::Result<()> {
        if let Some((info, streams)) = self.current.take() {
            if self.json {
                let mut v = kind_json(&self.cfg, &info.kind);
                v["bit"] = json!(info.offset);
                v["len"] = json!(info.bits);
                if !streams.is_empty() {
                    v["streams"] = Value::Array(streams);
                }
                self.json_item(&v)?;
            }
        }
        Ok(())
    }

    fn error(&mut self, offset: u64, msg: &str, resumed: Option<u64>) -> std::io::Result<()> {
        self.end_record()?;
        if self.json {
            let v = json!({ "kind": "ERROR", "bit": offset, "message": msg, "resumed_at_bit": resumed });
            self.json_item(&v)
        } else {
            let prefix = format!("bit {offset}: ");
            writeln!(
                self.out,
                "bit {offset:06}  ERROR    {}",
                msg.strip_prefix(&prefix).unwrap_or(msg)
            )?;
            match resumed {
                Some(bit) => writeln!(
                    self.out,
                    "bit {bit:06}  RESYNC (decoding resumes after the sync marker)"
                ),
                None => writeln!(self.out, "            (no further sync marker)"),
            }
        }
    }

    fn finish(&mut self) -> std::io::Result<()> {
        self.end_record()?;
        if self.json {
            if !self.first {
                writeln!(self.out)?;
            }
            writeln!(self.out, "]")?;
        }
        self.out.flush()
    }
}

pub fn run(args: &DumpArgs) -> Result<()> {
    let image = load_elf(&args.elf)?;
    let (cfg, bytes, mut problems) = read_whole_trace(args, &image)?;
    // SW-GZIP traces are BASE traces in a gzip member.
    let (cfg, bytes) = inflate_gzip(&cfg, &bytes).map_err(|e| anyhow!("{}: {e}", args.trace.display()))?;
    let mut dec = Decoder::new(&cfg, &bytes, &image).report_records(true);
    let stdout = std::io::stdout().lock();
    let mut p = Printer {
        out: BufWriter::new(stdout),
        json: args.json,
        first: true,
        cfg,
        current: None,
    };
    p.start()?;
    let limit = args.limit.unwrap_or(u64::MAX);
    let mut records = 0u64;
    // Elements still expected for the current record.
    let mut remaining = 0u32;
    let mut errors = Vec::new();
    loop {
        if remaining == 0 {
            p.end_record()?;
            if records >= limit {
                break;
            }
        }
        match dec.next_element(&mut NullSink) {
            Ok(Some(TraceElement::Record(info))) => {
                records += 1;
                remaining = match info.kind {
                    RecordKind::LspRun { n, .. } => n,
                    _ => 1,
                };
                p.record(info)?;
            }
            Ok(Some(el)) => {
                p.element(&el)?;
                remaining = remaining.saturating_sub(1);
            }
            Ok(None) => break,
            Err(e) => {
                let resumed = dec.resync();
                remaining = 0;
                p.error(e.offset(), &e.to_string(), resumed)?;
                errors.push(e);
                if resumed.is_none() {
                    break;
                }
            }
        }
    }
    p.finish()?;
    if let Some(first) = errors.first() {
        problems.insert(0, format!("{}: {} decode error(s); first: {first}", args.trace.display(), errors.len()));
    }
    if !problems.is_empty() {
        bail!("{}", problems.join("; "));
    }
    Ok(())
}

/// The trace stream of `dump` in one buffer, from a trace file (configuration and program
/// checked; up to its first damaged block) or, with `--raw`, a bare bit stream; and what is
/// wrong with the file, reported after the listing.
fn read_whole_trace(args: &DumpArgs, image: &ElfImage) -> Result<(Config, Vec<u8>, Vec<String>)> {
    let opts = TraceOptions { trace: &args.trace, config: args.config.as_deref(), raw: args.raw, force: args.force };
    let mut input = TraceInput::open(&opts, image)?;
    let mut stream = WholeStream::default();
    while input.feed(&mut stream)? {}
    let mut problems = input.end_problems(0, 0, false);
    if let Some(at) = stream.cut {
        problems.push(format!("{}: records are listed up to the damaged block at byte {at}", input.name));
    }
    Ok((input.cfg, stream.bytes, problems))
}

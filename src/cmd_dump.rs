//! `streamtrace dump`: every record of a trace with its bit and byte offset, length, raw
//! bits, meaning and the running instruction count, in the spirit of OpenCSD's packet lister
//! and libipt's ptdump. Uses the decoder's record reporting: each `TraceElement::Record` is
//! followed by the element(s) that record stands for.

use std::io::{BufWriter, Write};

use anyhow::{anyhow, bail, Result};
use serde_json::{json, Value};
use streamtrace_model::format::EscapeType;
use streamtrace_model::Config;
use streamtrace_sw_decoder::{inflate_gzip, Decoder, NullSink, RecordInfo, RecordKind, TraceElement};

use crate::io_util::{load_elf, state, thousands};
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

/// A stream in JSON: every address is an integer (`sa` in interworking form, `pc` without
/// the Thumb bit); `icount` counts the instructions before it.
fn stream_json(sa: u32, sl: u32, icount: u64) -> Value {
    json!({ "sa": sa, "pc": sa & !1, "state": state(sa).to_string(), "sl": sl, "icount": icount })
}

/// `bit 000047  byte 000005.7`: the absolute bit offset, and the byte and the bit in it
/// (0 = most significant; the trace is written MSB first).
fn offsets(bit: u64) -> String {
    format!("bit {bit:06}  byte {:06}.{}", bit / 8, bit % 8)
}

/// `len` bits of `bytes` from bit `offset` (MSB first) as `0`/`1` characters.
fn raw_bits(bytes: &[u8], offset: u64, len: u64) -> String {
    (offset..offset + len)
        .map(|b| match bytes.get((b / 8) as usize) {
            Some(byte) if byte >> (7 - b % 8) & 1 == 1 => '1',
            Some(_) => '0',
            None => '?',
        })
        .collect()
}

/// The columns every line starts with: offsets, length (blank for a stream under a run
/// record) and the instructions before the line's stream or record.
fn prefix(bit: u64, len: Option<u64>, icount: u64) -> String {
    let len = len.map_or(String::new(), |l| l.to_string());
    format!("{}  len {len:<3}  icount {:<11}", offsets(bit), thousands(icount))
}

/// Record name and fields, padded so that the "->" of the stream lines up.
fn body(cfg: &Config, kind: &RecordKind) -> String {
    let (name, fields) = describe(cfg, kind);
    format!("{name:<8} {fields:<32}")
}

/// Output in one of the two formats; JSON is streamed as an array, one record per element.
struct Printer<'b, W: Write> {
    out: W,
    json: bool,
    /// The trace bytes, for `--bits`.
    raw: Option<&'b [u8]>,
    /// Added to the decoder's offsets (`--start-offset`: the decoder sees the bytes from there).
    base: u64,
    first: bool,
    cfg: Config,
    /// Instructions before the next stream.
    icount: u64,
    /// The bit after the last record (absolute).
    next_bit: u64,
    /// The record whose elements are being printed, with the instructions before it and
    /// the streams collected for JSON.
    current: Option<(RecordInfo, u64, Vec<Value>)>,
}

impl<W: Write> Printer<'_, W> {
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

    fn raw_of(&self, info: &RecordInfo) -> Option<String> {
        self.raw.map(|bytes| raw_bits(bytes, info.offset - self.base, info.bits))
    }

    /// A record's own text line, with `tail` (its stream, or nothing) and the raw bits.
    fn record_line(&mut self, info: &RecordInfo, icount: u64, tail: &str) -> std::io::Result<()> {
        let mut line = format!("{}{}{tail}", prefix(info.offset, Some(info.bits), icount), body(&self.cfg, &info.kind));
        if let Some(raw) = self.raw_of(info) {
            line = format!("{line}  raw={raw}");
        }
        writeln!(self.out, "{}", line.trim_end())
    }

    /// A record starts. Runs get a line of their own; their streams follow indented.
    fn record(&mut self, mut info: RecordInfo) -> std::io::Result<()> {
        info.offset += self.base;
        self.next_bit = info.offset + info.bits;
        if !self.json {
            if let RecordKind::LspRun { .. } = info.kind {
                self.record_line(&info, self.icount, "")?;
            }
        }
        self.current = Some((info, self.icount, Vec::new()));
        Ok(())
    }

    /// An element of the current record.
    fn element(&mut self, el: &TraceElement) -> std::io::Result<()> {
        let Some((info, _, streams)) = &mut self.current else {
            return Ok(());
        };
        let info = *info;
        let is_run = matches!(info.kind, RecordKind::LspRun { .. });
        if let TraceElement::Stream { sa, sl, .. } = *el {
            let before = self.icount;
            self.icount += sl as u64;
            let stream = format!(" -> stream 0x{:08x} {} len {sl}", sa & !1, state(sa));
            if self.json {
                streams.push(stream_json(sa, sl, before));
            } else if is_run {
                let blank = body(&self.cfg, &info.kind).chars().count();
                writeln!(self.out, "{}{:blank$}{stream}", prefix(info.offset, None, before), "")?;
            } else {
                self.record_line(&info, before, &stream)?;
            }
        } else if !self.json {
            self.record_line(&info, self.icount, "")?;
        }
        Ok(())
    }

    /// The current record is complete.
    fn end_record(&mut self) -> std::io::Result<()> {
        if let Some((info, icount, streams)) = self.current.take() {
            if self.json {
                let mut v = kind_json(&self.cfg, &info.kind);
                v["bit"] = json!(info.offset);
                v["byte"] = json!(info.offset / 8);
                v["len"] = json!(info.bits);
                v["icount"] = json!(icount);
                if let Some(raw) = self.raw_of(&info) {
                    v["raw"] = json!(raw);
                }
                if !streams.is_empty() {
                    v["streams"] = Value::Array(streams);
                }
                self.json_item(&v)?;
            }
        }
        Ok(())
    }

    /// A decode error at `offset` (absolute); `reason` is the message without its offset.
    fn error(&mut self, offset: u64, reason: &str, resumed: Option<u64>) -> std::io::Result<()> {
        self.end_record()?;
        let resumed = resumed.map(|b| b + self.base);
        if self.json {
            let v = json!({ "kind": "ERROR", "bit": offset, "byte": offset / 8, "icount": self.icount,
                            "message": format!("bit {offset}: {reason}"), "resumed_at_bit": resumed });
            self.json_item(&v)
        } else {
            writeln!(self.out, "{}  ERROR    {reason}", offsets(offset))?;
            match resumed {
                Some(bit) => writeln!(self.out, "{}  RESYNC (decoding resumes after the sync marker)", offsets(bit)),
                None => writeln!(self.out, "{:27}(no further sync marker)", ""),
            }
        }
    }

    /// Bits after END up to `total` (absolute): the zero padding of schemes whose END does
    /// not count it (TSLZ, SC-T8HT), listed so that the records cover the whole file.
    fn padding(&mut self, total: u64) -> std::io::Result<()> {
        self.end_record()?;
        if self.next_bit >= total {
            return Ok(());
        }
        let info = RecordInfo { offset: self.next_bit, bits: total - self.next_bit, kind: RecordKind::LspHit };
        let raw = self.raw_of(&info);
        if self.json {
            let mut v = json!({ "kind": "PADDING", "bit": info.offset, "byte": info.offset / 8, "len": info.bits, "icount": self.icount });
            if let Some(raw) = raw {
                v["raw"] = json!(raw);
            }
            self.json_item(&v)
        } else {
            let line = format!("{}PADDING{}", prefix(info.offset, Some(info.bits), self.icount), raw.map_or(String::new(), |r| format!("  raw={r}")));
            writeln!(self.out, "{line}")
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
    let name = args.trace.display();
    // SW-GZIP traces are BASE traces in a gzip member.
    let (cfg, bytes) = inflate_gzip(&cfg, &bytes).map_err(|e| anyhow!("{name}: {e}"))?;
    // --start-offset and --from-sync: the decoder sees the bytes from the start offset and
    // looks for a sync marker there; every offset printed stays that of the file.
    let start = args.start_offset.unwrap_or(0);
    if start > bytes.len() as u64 {
        bail!("{name}: --start-offset {start} is beyond the end of the trace ({} bytes)", bytes.len());
    }
    let mut dec = Decoder::new(&cfg, &bytes[start as usize..], &image).report_records(true);
    if (args.from_sync || args.start_offset.is_some()) && dec.resync().is_none() {
        bail!("{name}: no sync marker at or after byte {start}");
    }
    let stdout = std::io::stdout().lock();
    let mut p = Printer {
        out: BufWriter::new(stdout),
        json: args.json,
        raw: args.bits.then_some(&bytes[start as usize..]),
        base: start * 8,
        first: true,
        cfg,
        icount: 0,
        next_bit: 0,
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
            Ok(None) => {
                p.padding(bytes.len() as u64 * 8)?;
                break;
            }
            Err(e) => {
                let resumed = dec.resync();
                remaining = 0;
                // The decoder counts from the start offset; messages give file offsets.
                let (rel, at) = (e.offset(), e.offset() + start * 8);
                let msg = e.to_string();
                let reason = msg.strip_prefix(&format!("bit {rel}: ")).unwrap_or(&msg).to_string();
                p.error(at, &reason, resumed)?;
                errors.push(format!("bit {at}: {reason}"));
                if resumed.is_none() {
                    break;
                }
            }
        }
    }
    p.finish()?;
    if let Some(first) = errors.first() {
        problems.insert(0, format!("{name}: {} decode error(s); first: {first}", errors.len()));
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

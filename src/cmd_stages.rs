//! Host-side stage commands (issue 6): `pdats`, `pdats2`, `diff`, `sad` and `lru`. Each reads
//! a file or standard input (`-`) and writes a file or standard output, streaming, and can
//! report statistics as JSON: on stdout when the data goes to a file, on stderr when the
//! data goes to stdout, and/or into `--stats-out FILE`. Errors name the input and the line
//! (text) or byte offset (binary).

use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use serde_json::{json, Value};

use streamtrace_stages::din::{DinReader, DinWriter, XKind, XdinReader};
use streamtrace_stages::laplace::{
    Access, RawDiffReader, RawDiffWriter, RawReader, RawRecord, RawWriter, SadDiffReader,
    SadDiffWriter, SadReader, SadRecord, SadWriter,
};
use streamtrace_stages::paging::{opt_faults, Lru, PageKey};
use streamtrace_stages::pdats::{PdatsDecoder, PdatsEncoder, PdatsOptions};
use streamtrace_stages::pdats2::{Pdats2Decoder, Pdats2Encoder, Pdats2Options};
use streamtrace_stages::sad::{key_of, PageSplitter, Reducer, DEFAULT_PAGE_SIZE};
use streamtrace_stages::Ref;

use crate::io_util;
use crate::refs::SIM_ASID;
use crate::usage::{bail_usage, usage};

// ---------------------------------------------------------------------------------------
// Arguments.

/// Input, output and statistics options shared by every stage command.
#[derive(Args, Debug)]
pub struct IoArgs {
    /// Input file, or - for standard input.
    #[arg(value_name = "INPUT", default_value = "-")]
    pub input: String,
    /// Output file, or - for standard output.
    #[arg(short, long, value_name = "OUTPUT", default_value = "-")]
    pub output: String,
    /// Print statistics as JSON (to stderr when the output is stdout, else to stdout).
    #[arg(long)]
    pub json: bool,
    /// Also write the statistics as JSON to this file.
    #[arg(long, value_name = "FILE.json")]
    pub stats_out: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct PdatsArgs {
    #[command(subcommand)]
    pub op: PdatsOp,
}

#[derive(Subcommand, Debug)]
pub enum PdatsOp {
    /// Encode a reference trace (din by default) into the binary format.
    Encode(PdatsEncodeArgs),
    /// Decode the binary format into din text.
    Decode(IoArgs),
}

#[derive(Args, Debug)]
pub struct PdatsEncodeArgs {
    #[command(flatten)]
    pub io: IoArgs,
    /// Input format.
    #[arg(long, value_enum, default_value = "din")]
    pub from: RefsInput,
    /// 64-bit addresses (8-byte offsets).
    #[arg(long)]
    pub wide: bool,
    /// PDATS only: allow the implicit +4 offset for data references too (header flag).
    #[arg(long)]
    pub data_default_offset: bool,
    /// PDATS II only: instruction stride in bytes, 4 for ARM code (default), 2 for Thumb or
    /// mixed ARM/Thumb traces.
    #[arg(long, value_name = "BYTES")]
    pub stride: Option<u64>,
    /// Provenance comment stored in the file header.
    #[arg(long, default_value = "")]
    pub comment: String,
}

/// Reference trace formats a PDATS encoder reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RefsInput {
    /// dinero `LABEL ADDRESS`.
    Din,
    /// Dinero IV extended `r|w|i|m ADDRESS SIZE` (m becomes label 3).
    Xdin,
    /// Laplace raw `TYPE CYCLE LEN ASID VADDR`.
    Laplace,
}

#[derive(Args, Debug)]
pub struct DiffArgs {
    #[command(subcommand)]
    pub op: DiffOp,
}

#[derive(Subcommand, Debug)]
pub enum DiffOp {
    /// Laplace raw (or, with --sad, SAD-reduced) records to their difference encoding.
    Encode(DiffIo),
    /// Difference-encoded records back to raw (or SAD-reduced) records.
    Decode(DiffIo),
}

#[derive(Args, Debug)]
pub struct DiffIo {
    #[command(flatten)]
    pub io: IoArgs,
    /// SAD-reduced records (`TYPE CYCLE ITIME RTIME ASID VPN`) instead of raw records.
    #[arg(long)]
    pub sad: bool,
}

/// Trace formats the page-level commands read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TraceInput {
    /// dinero `LABEL ADDRESS` (length 4, ASID 1, cycle = reference index).
    Din,
    /// Dinero IV extended `r|w|i ADDRESS SIZE` (ASID 1, cycle = reference index).
    Xdin,
    /// Laplace raw records.
    Laplace,
    /// Difference-encoded Laplace raw records.
    LaplaceDiff,
    /// SAD-reduced records (already page references).
    Sad,
    /// Difference-encoded SAD-reduced records.
    SadDiff,
}

#[derive(Args, Debug)]
pub struct SadArgs {
    #[command(flatten)]
    pub io: IoArgs,
    /// Reduction memory r in pages: LRU with at least r pages is exact on the output.
    #[arg(short = 'r', long = "r", value_name = "PAGES")]
    pub r: usize,
    /// Page size in bytes (a power of two).
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_PAGE_SIZE)]
    pub page_size: u64,
    /// Input format.
    #[arg(long, value_enum, default_value = "laplace")]
    pub from: TraceInput,
    /// Write the difference-encoded SAD format.
    #[arg(long)]
    pub diff: bool,
}

#[derive(Args, Debug)]
pub struct LruArgs {
    #[command(flatten)]
    pub io: IoArgs,
    /// Memory size in pages.
    #[arg(long, value_name = "M")]
    pub pages: usize,
    /// Also count the faults of OPT (Belady); holds the page sequence in memory.
    #[arg(long)]
    pub opt: bool,
    /// Input format.
    #[arg(long, value_enum, default_value = "sad")]
    pub from: TraceInput,
    /// Page size in bytes for raw inputs (a power of two).
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_PAGE_SIZE)]
    pub page_size: u64,
}

// ---------------------------------------------------------------------------------------
// Files, counting and statistics.

/// A buffered reader that counts the bytes consumed.
struct CountingReader {
    inner: Box<dyn BufRead>,
    bytes: u64,
}

impl Read for CountingReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }
}

impl BufRead for CountingReader {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }
    fn consume(&mut self, n: usize) {
        self.bytes += n as u64;
        self.inner.consume(n)
    }
}

/// A writer that counts the bytes written.
pub struct CountingWriter<W> {
    pub inner: W,
    pub bytes: u64,
}

impl<W: Write> Write for CountingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

fn display_name(path: &str) -> String {
    io_util::input_name(Path::new(path))
}

fn open_input(path: &str) -> Result<CountingReader> {
    let inner = BufReader::with_capacity(1 << 16, io_util::open_input(Path::new(path), "")?);
    Ok(CountingReader { inner: Box::new(inner), bytes: 0 })
}

type Output = CountingWriter<BufWriter<Box<dyn Write + Send>>>;

fn open_output(path: &str) -> Result<Output> {
    Ok(CountingWriter {
        inner: BufWriter::with_capacity(1 << 16, io_util::create_output(Path::new(path))?),
        bytes: 0,
    })
}

fn out_name(path: &str) -> String {
    io_util::output_name(Path::new(path))
}

fn finish_output(mut out: Output, path: &str) -> Result<u64> {
    out.flush()
        .with_context(|| format!("cannot write {}", out_name(path)))?;
    Ok(out.bytes)
}

/// Emit the statistics: `--stats-out`, and with `--json` on stdout, or on stderr when the
/// data itself went to stdout.
fn report(io: &IoArgs, stats: Value) -> Result<()> {
    if let Some(p) = &io.stats_out {
        std::fs::write(p, serde_json::to_string_pretty(&stats)? + "\n")
            .with_context(|| format!("cannot write {}", p.display()))?;
    }
    if io.json {
        if io.output == "-" {
            eprintln!("{stats}");
        } else {
            println!("{stats}");
        }
    }
    Ok(())
}

fn per_second(n: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        n as f64 / seconds
    } else {
        0.0
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

// ---------------------------------------------------------------------------------------
// Reference sources.

/// Streams dinero references from a din, xdin or Laplace raw trace; errors name the input
/// and line.
fn refs_from<'a>(
    from: RefsInput,
    input: &'a mut CountingReader,
    name: &str,
) -> Box<dyn Iterator<Item = Result<Ref>> + 'a> {
    let name = name.to_string();
    match from {
        RefsInput::Din => Box::new(
            DinReader::new(input).map(move |r| r.map_err(|e| anyhow!("{name}: {e}"))),
        ),
        RefsInput::Xdin => Box::new(XdinReader::new(input).enumerate().map(move |(i, r)| {
            let r = r.map_err(|e| anyhow!("{name}: {e}"))?;
            let kind = match r.kind {
                XKind::Read => 0,
                XKind::Write => 1,
                XKind::Ifetch => 2,
                XKind::Misc => 3,
                other => bail!(
                    "{name}: line {}: xdin type '{}' has no dinero label",
                    i + 1,
                    other.letter()
                ),
            };
            Ok(Ref::new(kind, r.addr))
        })),
        RefsInput::Laplace => Box::new(RawReader::new(input).map(move |r| {
            let r = r.map_err(|e| anyhow!("{name}: {e}"))?;
            Ok(Ref::new(r.kind.label(), r.vaddr))
        })),
    }
}

/// One record of a page-level input: a raw reference (to be split into pages) or a page
/// reference of a SAD-reduced trace.
enum TraceItem {
    Raw(RawRecord),
    Page(SadRecord),
}

/// Streams page references from any [`TraceInput`], splitting raw references at page
/// boundaries and stamping them (algorithms.md §4.2).
struct PageSource<'a> {
    items: Box<dyn Iterator<Item = Result<TraceItem>> + 'a>,
    splitter: PageSplitter,
    pending: Option<SadRecord>,
    name: String,
    /// Records read (raw references, or SAD records).
    records: u64,
}

impl<'a> PageSource<'a> {
    fn new(from: TraceInput, input: &'a mut CountingReader, name: &str, page_size: u64) -> Result<Self> {
        let n = name.to_string();
        let err = move |e: &dyn std::fmt::Display| anyhow!("{n}: {e}");
        let items: Box<dyn Iterator<Item = Result<TraceItem>> + 'a> = match from {
            TraceInput::Din => Box::new(DinReader::new(input).enumerate().map(move |(i, r)| {
                let r = r.map_err(|e| err(&e))?;
                let kind = Access::from_label(r.kind).ok_or_else(|| {
                    err(&format!("line {}: din label {} has no Laplace type", i + 1, r.kind))
                })?;
                // §4.2 [PROP]: din has no length; words and ifetches are 4 bytes.
                Ok(TraceItem::Raw(RawRecord {
                    kind,
                    cycle: i as u64,
                    len: 4,
                    asid: SIM_ASID,
                    vaddr: r.addr,
                }))
            })),
            TraceInput::Xdin => Box::new(XdinReader::new(input).enumerate().map(move |(i, r)| {
                let r = r.map_err(|e| err(&e))?;
                let kind = match r.kind {
                    XKind::Read => Access::Read,
                    XKind::Write => Access::Write,
                    XKind::Ifetch => Access::Ifetch,
                    other => {
                        return Err(err(&format!(
                            "line {}: xdin type '{}' is not a read, write or ifetch",
                            i + 1,
                            other.letter()
                        )))
                    }
                };
                Ok(TraceItem::Raw(RawRecord {
                    kind,
                    cycle: i as u64,
                    len: r.size,
                    asid: SIM_ASID,
                    vaddr: r.addr,
                }))
            })),
            TraceInput::Laplace => Box::new(
                RawReader::new(input).map(move |r| r.map(TraceItem::Raw).map_err(|e| err(&e))),
            ),
            TraceInput::LaplaceDiff => Box::new(
                RawDiffReader::new(input).map(move |r| r.map(TraceItem::Raw).map_err(|e| err(&e))),
            ),
            TraceInput::Sad => Box::new(
                SadReader::new(input).map(move |r| r.map(TraceItem::Page).map_err(|e| err(&e))),
            ),
            TraceInput::SadDiff => Box::new(
                SadDiffReader::new(input).map(move |r| r.map(TraceItem::Page).map_err(|e| err(&e))),
            ),
        };
        Ok(PageSource {
            items,
            splitter: PageSplitter::new(page_size).map_err(|e| anyhow!("{e}"))?,
            pending: None,
            name: name.to_string(),
            records: 0,
        })
    }

    /// Checks `--page-size` before any file is opened.
    fn check_page_size(page_size: u64) -> Result<()> {
        PageSplitter::new(page_size).map(drop).map_err(|e| usage(format!("--page-size {page_size}: {e}")))
    }

    fn next_page(&mut self) -> Result<Option<SadRecord>> {
        if let Some(p) = self.pending.take() {
            return Ok(Some(p));
        }
        match self.items.next() {
            None => Ok(None),
            Some(Err(e)) => Err(e),
            Some(Ok(TraceItem::Page(p))) => {
                self.records += 1;
                Ok(Some(p))
            }
            Some(Ok(TraceItem::Raw(r))) => {
                self.records += 1;
                // The splitter counts references from 0, the lines from 1.
                let parts = self
                    .splitter
                    .split(&r)
                    .map_err(|e| anyhow!("{}: line {}: {e}", self.name, self.records))?;
                let s = parts.as_slice();
                if s.len() == 2 {
                    self.pending = Some(s[1]);
                }
                Ok(Some(s[0]))
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// pdats / pdats2.

/// Which PDATS variant a `pdats`/`pdats2` command uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codec {
    Pdats,
    Pdats2,
}

impl Codec {
    fn name(self) -> &'static str {
        match self {
            Codec::Pdats => "pdats",
            Codec::Pdats2 => "pdats2",
        }
    }
}

pub fn run_pdats(a: &PdatsArgs, codec: Codec) -> Result<()> {
    match &a.op {
        PdatsOp::Encode(e) => pdats_encode(e, codec),
        PdatsOp::Decode(io) => pdats_decode(io, codec),
    }
}

/// The two encoders behind one push interface.
enum AnyEncoder<W: Write> {
    V1(PdatsEncoder<W>),
    V2(Pdats2Encoder<W>),
}

fn pdats_encode(a: &PdatsEncodeArgs, codec: Codec) -> Result<()> {
    let start = Instant::now();
    let name = display_name(&a.io.input);
    // Options first: a rejected command line creates no output file.
    match codec {
        Codec::Pdats if a.stride.is_some() => {
            bail_usage!("--stride applies to pdats2 only (PDATS records carry byte offsets)")
        }
        Codec::Pdats2 if a.data_default_offset => bail_usage!("--data-default-offset applies to pdats only"),
        _ => {}
    }
    let stride = a.stride.unwrap_or(4);
    if !matches!(stride, 1 | 2 | 4 | 8) {
        bail_usage!("--stride {stride}: must be 1, 2, 4 or 8 bytes");
    }
    let mut input = open_input(&a.io.input)?;
    let out = open_output(&a.io.output)?;
    let mut enc = match codec {
        Codec::Pdats => {
            AnyEncoder::V1(
                PdatsEncoder::new(
                    out,
                    &PdatsOptions {
                        wide: a.wide,
                        data_default_offset: a.data_default_offset,
                        time: false,
                        comment: a.comment.clone(),
                    },
                )
                .map_err(|e| anyhow!("{e}"))?,
            )
        }
        Codec::Pdats2 => {
            AnyEncoder::V2(
                Pdats2Encoder::new(
                    out,
                    &Pdats2Options {
                        wide: a.wide,
                        stride_log2: stride.trailing_zeros() as u8,
                        comment: a.comment.clone(),
                    },
                )
                .map_err(|e| anyhow!("{e}"))?,
            )
        }
    };
    let mut refs = 0u64;
    for r in refs_from(a.from, &mut input, &name) {
        let r = r?;
        refs += 1;
        let res = match &mut enc {
            AnyEncoder::V1(e) => e.push(r),
            AnyEncoder::V2(e) => e.push(r),
        };
        // Encoder errors count references from 0; every input line is one reference.
        res.map_err(|e| anyhow!("{name}: line {refs}: {e}"))?;
    }
    let out = match enc {
        AnyEncoder::V1(e) => e.finish(),
        AnyEncoder::V2(e) => e.finish(),
    }
    .map_err(|e| anyhow!("{}: {e}", out_name(&a.io.output)))?;
    let out_bytes = finish_output(out, &a.io.output)?;
    let seconds = start.elapsed().as_secs_f64();
    report(
        &a.io,
        json!({
            "command": format!("{} encode", codec.name()),
            "input": name,
            "output": out_name(&a.io.output),
            "references": refs,
            "input_bytes": input.bytes,
            "output_bytes": out_bytes,
            "references_per_byte": ratio(refs, out_bytes),
            "compression_ratio": ratio(input.bytes, out_bytes),
            "seconds": seconds,
            "references_per_second": per_second(refs, seconds),
        }),
    )
}

fn pdats_decode(io: &IoArgs, codec: Codec) -> Result<()> {
    let start = Instant::now();
    let name = display_name(&io.input);
    let mut input = open_input(&io.input)?;
    let mut w = DinWriter::new(open_output(&io.output)?);
    let mut refs = 0u64;
    let ctx = |e: streamtrace_stages::DecodeError| anyhow!("{name}: {e}");
    let mut write = |r: Ref| -> Result<()> {
        refs += 1;
        w.write(&r)
            .with_context(|| format!("cannot write {}", out_name(&io.output)))
    };
    let header = match codec {
        Codec::Pdats => {
            let d = PdatsDecoder::new(&mut input).map_err(ctx)?;
            let h = d.header().clone();
            for r in d {
                write(r.map_err(ctx)?)?;
            }
            h
        }
        Codec::Pdats2 => {
            let d = Pdats2Decoder::new(&mut input).map_err(ctx)?;
            let h = d.header().clone();
            for r in d {
                write(r.map_err(ctx)?)?;
            }
            h
        }
    };
    let out = w
        .into_inner()
        .with_context(|| format!("cannot write {}", out_name(&io.output)))?;
    let out_bytes = finish_output(out, &io.output)?;
    let seconds = start.elapsed().as_secs_f64();
    report(
        io,
        json!({
            "command": format!("{} decode", codec.name()),
            "input": name,
            "output": out_name(&io.output),
            "comment": header.comment,
            "wide": header.wide(),
            "stride": 1u64 << header.stride_log2,
            "references": refs,
            "input_bytes": input.bytes,
            "output_bytes": out_bytes,
            "references_per_byte": ratio(refs, input.bytes),
            "seconds": seconds,
            "references_per_second": per_second(refs, seconds),
        }),
    )
}

// ---------------------------------------------------------------------------------------
// diff.

pub fn run_diff(a: &DiffArgs) -> Result<()> {
    let (d, encode) = match &a.op {
        DiffOp::Encode(d) => (d, true),
        DiffOp::Decode(d) => (d, false),
    };
    let start = Instant::now();
    let name = display_name(&d.io.input);
    let oname = out_name(&d.io.output);
    let mut input = open_input(&d.io.input)?;
    let out = open_output(&d.io.output)?;
    let rd = |e: streamtrace_stages::laplace::LaplaceError| anyhow!("{name}: {e}");
    let wr = |e: streamtrace_stages::laplace::LaplaceWriteError| match e {
        streamtrace_stages::laplace::LaplaceWriteError::Io(e) => {
            anyhow!("cannot write {oname}: {e}")
        }
        // An encoder's record index is 0-based; each input line is one record.
        streamtrace_stages::laplace::LaplaceWriteError::Invalid { index, what } => {
            anyhow!("{name}: line {}: {what}", index + 1)
        }
    };
    let mut records = 0u64;
    let out = match (d.sad, encode) {
        (false, true) => {
            let mut w = RawDiffWriter::new(out);
            for r in RawReader::new(&mut input) {
                w.write(&r.map_err(rd)?).map_err(wr)?;
                records += 1;
            }
            w.into_inner()
        }
        (false, false) => {
            let mut w = RawWriter::new(out);
            for r in RawDiffReader::new(&mut input) {
                w.write(&r.map_err(rd)?).map_err(wr)?;
                records += 1;
            }
            w.into_inner()
        }
        (true, true) => {
            let mut w = SadDiffWriter::new(out);
            for r in SadReader::new(&mut input) {
                w.write(&r.map_err(rd)?).map_err(wr)?;
                records += 1;
            }
            w.into_inner()
        }
        (true, false) => {
            let mut w = SadWriter::new(out);
            for r in SadDiffReader::new(&mut input) {
                w.write(&r.map_err(rd)?).map_err(wr)?;
                records += 1;
            }
            w.into_inner()
        }
    }
    .with_context(|| format!("cannot write {oname}"))?;
    let out_bytes = finish_output(out, &d.io.output)?;
    let seconds = start.elapsed().as_secs_f64();
    report(
        &d.io,
        json!({
            "command": if encode { "diff encode" } else { "diff decode" },
            "format": if d.sad { "sad" } else { "raw" },
            "input": name,
            "output": oname,
            "records": records,
            "input_bytes": input.bytes,
            "output_bytes": out_bytes,
            "seconds": seconds,
            "records_per_second": per_second(records, seconds),
        }),
    )
}

// ---------------------------------------------------------------------------------------
// sad.

enum SadOut<W: Write> {
    Plain(SadWriter<W>),
    Diff(SadDiffWriter<W>),
}

pub fn run_sad(a: &SadArgs) -> Result<()> {
    let start = Instant::now();
    let name = display_name(&a.io.input);
    let oname = out_name(&a.io.output);
    let mut reducer = Reducer::new(a.r).map_err(|e| usage(format!("--r {}: {e}", a.r)))?;
    PageSource::check_page_size(a.page_size)?;
    let mut input = open_input(&a.io.input)?;
    let mut source = PageSource::new(a.from, &mut input, &name, a.page_size)?;
    let out = open_output(&a.io.output)?;
    let mut w = if a.diff {
        SadOut::Diff(SadDiffWriter::new(out))
    } else {
        SadOut::Plain(SadWriter::new(out))
    };
    let mut drain = |reducer: &mut Reducer| -> Result<()> {
        while let Some(rec) = reducer.pop() {
            match &mut w {
                SadOut::Plain(w) => w.write(&rec),
                SadOut::Diff(w) => w.write(&rec),
            }
            .map_err(|e| anyhow!("writing {oname}: {e}"))?;
        }
        Ok(())
    };
    while let Some(p) = source.next_page()? {
        reducer.push(p);
        drain(&mut reducer)?;
    }
    reducer.finish();
    drain(&mut reducer)?;
    let records = source.records;
    drop(source);
    let out = match w {
        SadOut::Plain(w) => w.into_inner(),
        SadOut::Diff(w) => w.into_inner(),
    }
    .with_context(|| format!("cannot write {oname}"))?;
    let out_bytes = finish_output(out, &a.io.output)?;
    let st = reducer.stats();
    let seconds = start.elapsed().as_secs_f64();
    report(
        &a.io,
        json!({
            "command": "sad",
            "r": a.r,
            "page_size": a.page_size,
            "input": name,
            "output": oname,
            "input_refs": records,
            "page_refs": st.page_refs,
            "blocked": st.blocked,
            "dropped": st.dropped,
            "output_refs": st.output_refs,
            "reduction_ratio": ratio(records, st.output_refs),
            "input_bytes": input.bytes,
            "output_bytes": out_bytes,
            "seconds": seconds,
            "references_per_second": per_second(records, seconds),
        }),
    )
}

// ---------------------------------------------------------------------------------------
// lru.

const HEX: &[u8; 16] = b"0123456789abcdef";

fn push_hex(buf: &mut Vec<u8>, v: u64) {
    let digits = ((64 - v.leading_zeros()).div_ceil(4)).max(1);
    for i in (0..digits).rev() {
        buf.push(HEX[((v >> (4 * i)) & 0xf) as usize]);
    }
}

pub fn run_lru(a: &LruArgs) -> Result<()> {
    if a.pages == 0 || a.pages >= u32::MAX as usize {
        bail_usage!("--pages {}: must be at least 1 and below 2^32", a.pages);
    }
    PageSource::check_page_size(a.page_size)?;
    let start = Instant::now();
    let name = display_name(&a.io.input);
    let oname = out_name(&a.io.output);
    let mut input = open_input(&a.io.input)?;
    let mut source = PageSource::new(a.from, &mut input, &name, a.page_size)?;
    let mut out = open_output(&a.io.output)?;
    let mut lru = Lru::new(a.pages);
    let mut keys: Vec<PageKey> = Vec::new();
    let (mut evictions, mut dirty_evictions) = (0u64, 0u64);
    let mut line = Vec::with_capacity(64);
    while let Some(p) = source.next_page()? {
        let key = key_of(&p);
        if a.opt {
            keys.push(key);
        }
        if let Some(f) = lru.access(key, p.kind == Access::Write) {
            // `ASID VPN EVICTED_ASID EVICTED_VPN clean|dirty`, or `- - -` while memory fills.
            line.clear();
            push_hex(&mut line, f.page.asid);
            line.push(b' ');
            push_hex(&mut line, f.page.vpn);
            match f.evicted {
                Some(e) => {
                    evictions += 1;
                    dirty_evictions += e.dirty as u64;
                    line.push(b' ');
                    push_hex(&mut line, e.page.asid);
                    line.push(b' ');
                    push_hex(&mut line, e.page.vpn);
                    line.extend_from_slice(if e.dirty { b" dirty\n" } else { b" clean\n" });
                }
                None => line.extend_from_slice(b" - - -\n"),
            }
            out.write_all(&line)
                .with_context(|| format!("cannot write {oname}"))?;
        }
    }
    let records = source.records;
    drop(source);
    let out_bytes = finish_output(out, &a.io.output)?;
    let resident = lru.resident();
    let opt = a.opt.then(|| opt_faults(&keys, a.pages));
    let seconds = start.elapsed().as_secs_f64();
    if !a.io.json {
        // The fault lines are the data; the counts (and OPT's, which has no lines) go to stderr.
        let opt_text = opt.map_or(String::new(), |n| format!("; OPT: {} faults", io_util::thousands(n)));
        eprintln!(
            "lru ({} pages): {} page references, {} faults, {} evictions ({} dirty){opt_text}",
            a.pages,
            io_util::thousands(lru.refs()),
            io_util::thousands(lru.faults()),
            io_util::thousands(evictions),
            io_util::thousands(dirty_evictions)
        );
    }
    report(
        &a.io,
        json!({
            "command": "lru",
            "pages": a.pages,
            "input": name,
            "output": oname,
            "records": records,
            "page_refs": lru.refs(),
            "faults": lru.faults(),
            "fault_rate": ratio(lru.faults(), lru.refs()),
            "evictions": evictions,
            "dirty_evictions": dirty_evictions,
            "resident": resident.len(),
            "resident_dirty": resident.iter().filter(|(_, d)| *d).count(),
            "opt_faults": opt,
            "output_bytes": out_bytes,
            "seconds": seconds,
        }),
    )
}

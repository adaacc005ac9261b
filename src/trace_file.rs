//! Trace files as the CLI writes and reads them: the container of docs/trace-format.md
//! section 12 by default, the bare trace-port bit stream with `--raw`. Every command that
//! writes or reads trace-port bytes goes through here, so the checks live once.

use std::io::{Read, Write};
use std::path::Path;

use anyhow::{bail, Context, Result};
use streamtrace_isa::ElfImage;
use streamtrace_model::container::{
    is_container, ContainerError, ContainerHeader, ContainerItem, ContainerReader, ContainerTrailer, ContainerWriter,
    ProgramIdentity, MAGIC,
};
use streamtrace_model::Config;
use streamtrace_sw_decoder::StreamDecoder;

use crate::io_util::{create_output, input_name, open_input, output_name, parse_config};
use crate::usage::bail_usage;

/// Write `stream` (the trace-port bytes of `cfg`, standing for `instructions` instructions
/// of the program `identity`) to `path`: a container, or the bare stream if `raw`.
pub fn write_trace(path: &Path, cfg: &Config, identity: ProgramIdentity, stream: &[u8], instructions: u64, raw: bool) -> Result<()> {
    let name = output_name(path);
    let out = create_output(path)?;
    let write = || -> std::io::Result<()> {
        let mut out = std::io::BufWriter::new(out);
        if raw {
            out.write_all(stream)?;
            return out.flush();
        }
        let mut w = ContainerWriter::new(out, &ContainerHeader::new(cfg, identity))?;
        w.write(stream)?;
        w.finish(instructions)?;
        Ok(())
    };
    write().with_context(|| format!("cannot write {name}"))
}

/// Trace bytes read per call: memory stays at a few of these whatever the trace length.
const CHUNK_BYTES: usize = 256 * 1024;

/// A trace file open for reading, its configuration settled and its program checked.
pub struct TraceInput {
    input: Box<dyn Read>,
    pub name: String,
    pub cfg: Config,
    /// The container's reader, or `None` for a raw stream.
    container: Option<ContainerReader>,
    /// Bytes read before the kind of file was known, not yet handed on.
    pending: Vec<u8>,
    trailer: Option<ContainerTrailer>,
    /// The first problem with the container that ended reading early (truncation,
    /// framing, trailing bytes), reported after what was decoded.
    pub problem: Option<String>,
    /// Damaged blocks (their CRC failed), by file offset.
    pub damaged: Vec<u64>,
    ended: bool,
}

/// What `decode` and `dump` take on the command line about their input.
pub struct TraceOptions<'a> {
    pub trace: &'a Path,
    pub config: Option<&'a str>,
    pub raw: bool,
    pub force: bool,
}

impl TraceInput {
    /// Open the trace; for a container, read and check its header: the configuration it
    /// names (a `-c` that differs is a usage error naming both) and the program (a different
    /// ELF is an error, a warning with `force`). A raw stream needs `raw` and a `-c`.
    pub fn open(opts: &TraceOptions<'_>, elf: &ElfImage) -> Result<TraceInput> {
        let name = input_name(opts.trace);
        let mut input = open_input(opts.trace, "trace file ")?;
        let mut pending = vec![0u8; MAGIC.len()];
        let n = read_full(&mut input, &mut pending).with_context(|| format!("cannot read trace file {name}"))?;
        pending.truncate(n);
        let given = opts.config.map(parse_config).transpose()?;
        let (cfg, container) = if opts.raw {
            let Some(cfg) = given else {
                bail_usage!("{name}: --raw needs the configuration the trace was encoded with (-c CONFIG)");
            };
            (cfg, None)
        } else {
            if !is_container(&pending) {
                bail_usage!(
                    "{name}: not a streamtrace trace file (no container magic at byte 0); a bare trace-port bit stream needs --raw -c CONFIG"
                );
            }
            let (reader, header) = read_header(&mut input, std::mem::take(&mut pending), &name)?;
            let file_cfg = parse_config(&header.config)?;
            if let Some(cfg) = given {
                if cfg.to_string() != file_cfg.to_string() {
                    bail_usage!(
                        "{name}: the file was encoded with configuration '{file_cfg}', not '{cfg}' (-c); leave -c out to use the file's"
                    );
                }
            }
            check_program(&header.identity, elf, &name, opts.force)?;
            (file_cfg, Some(reader))
        };
        Ok(TraceInput { input, name, cfg, container, pending, trailer: None, problem: None, damaged: Vec::new(), ended: false })
    }

    /// Hand the next stretch of the trace to `sink` (good bytes and, for damaged blocks,
    /// lost ones); `false` once the input is exhausted or the container ended reading.
    pub fn feed(&mut self, sink: &mut dyn TraceSink) -> Result<bool> {
        if self.ended {
            return Ok(false);
        }
        if !self.pending.is_empty() {
            sink.data(&std::mem::take(&mut self.pending));
            return Ok(true);
        }
        let mut chunk = vec![0u8; CHUNK_BYTES];
        let n = read_full(&mut self.input, &mut chunk).with_context(|| format!("cannot read trace file {}", self.name))?;
        let Some(r) = &mut self.container else {
            self.ended = n == 0;
            sink.data(&chunk[..n]);
            return Ok(n > 0);
        };
        if n == 0 {
            r.finish();
            self.ended = true;
        } else {
            r.push(&chunk[..n]);
        }
        loop {
            match r.next_item() {
                Ok(Some(ContainerItem::Data { bytes, .. })) => sink.data(&bytes),
                Ok(Some(ContainerItem::Damaged { file_offset, stream_offset, len })) => {
                    self.damaged.push(file_offset);
                    sink.lost(file_offset, stream_offset, len);
                }
                Ok(Some(ContainerItem::Trailer(t))) => self.trailer = Some(t),
                Ok(Some(ContainerItem::Header(_))) => unreachable!("read by open"),
                Ok(None) => break,
                Err(e) => {
                    self.problem = Some(format!("{}: {e}", self.name));
                    self.ended = true;
                    break;
                }
            }
        }
        Ok(!self.ended)
    }

    /// What is wrong with the file as a whole once it was decoded to its end with
    /// `instructions` decoded and `lost` lost in overflows (`None` for a raw stream, which
    /// carries no count; the count is only compared when the whole trace was decoded, from its
    /// start and without an error: `decoded_cleanly`).
    pub fn end_problems(&self, instructions: u64, lost: u64, decoded_cleanly: bool) -> Vec<String> {
        let mut problems = Vec::new();
        if self.container.is_none() {
            return problems;
        }
        if let Some(p) = &self.problem {
            problems.push(p.clone());
        }
        if !self.damaged.is_empty() {
            let at: Vec<String> = self.damaged.iter().map(|o| format!("byte {o}")).collect();
            problems.push(format!("{}: {} damaged block(s) (CRC-32C failed) at {}", self.name, at.len(), at.join(", ")));
        }
        if let Some(t) = &self.trailer {
            if decoded_cleanly && self.damaged.is_empty() && instructions + lost != t.instructions {
                problems.push(format!(
                    "{}: the trailer counts {} instructions, the trace decoded to {}",
                    self.name,
                    t.instructions,
                    instructions + lost
                ));
            }
        }
        problems
    }
}

/// Read until the container's header is complete; `pending` holds the bytes read so far.
fn read_header(input: &mut dyn Read, pending: Vec<u8>, name: &str) -> Result<(ContainerReader, ContainerHeader)> {
    let mut r = ContainerReader::new();
    r.push(&pending);
    let mut chunk = vec![0u8; 4096];
    loop {
        match r.next_item().map_err(|e: ContainerError| anyhow::anyhow!("{name}: {e}"))? {
            Some(ContainerItem::Header(h)) => return Ok((r, h)),
            Some(_) => unreachable!("the header comes first"),
            None => {
                let n = input.read(&mut chunk).with_context(|| format!("cannot read trace file {name}"))?;
                if n == 0 {
                    r.finish();
                } else {
                    r.push(&chunk[..n]);
                }
            }
        }
    }
}

/// A trace file that names another program than `elf` is an error, or with `force` a warning.
fn check_program(recorded: &ProgramIdentity, elf: &ElfImage, name: &str, force: bool) -> Result<()> {
    let program = elf.identity();
    if recorded.matches(&program) {
        return Ok(());
    }
    let msg = format!(
        "{name}: the trace was recorded from another program: the file names {recorded}, {} has {program}",
        elf.source()
    );
    if !force {
        bail!("{msg} (--force decodes it anyway)");
    }
    eprintln!("streamtrace: warning: {msg}; decoding anyway (--force)");
    Ok(())
}

/// Where [`TraceInput::feed`] hands the trace.
pub trait TraceSink {
    fn data(&mut self, bytes: &[u8]);
    /// `len` bytes of the stream from `stream_offset` are in a block at `file_offset` whose
    /// CRC failed.
    fn lost(&mut self, file_offset: u64, stream_offset: u64, len: u32);
}

/// The streaming decoder takes a lost block as a gap (and says where it was).
pub struct DecoderFeed<'d, M: streamtrace_isa::ProgramImage> {
    pub dec: &'d mut StreamDecoder<M>,
    pub name: &'d str,
    pub quiet: bool,
}

impl<M: streamtrace_isa::ProgramImage> TraceSink for DecoderFeed<'_, M> {
    fn data(&mut self, bytes: &[u8]) {
        self.dec.push(bytes);
    }

    fn lost(&mut self, file_offset: u64, stream_offset: u64, len: u32) {
        if !self.quiet {
            eprintln!(
                "streamtrace: {}: byte {file_offset}: block CRC-32C failed: trace bytes {stream_offset}..{} lost",
                self.name,
                stream_offset + len as u64
            );
        }
        self.dec.push_lost(len as usize);
    }
}

/// The whole stream in memory, up to the first damaged block (for `dump`, which lists
/// records from one buffer): `cut` is set to the file offset of that block.
#[derive(Default)]
pub struct WholeStream {
    pub bytes: Vec<u8>,
    pub cut: Option<u64>,
}

impl TraceSink for WholeStream {
    fn data(&mut self, bytes: &[u8]) {
        if self.cut.is_none() {
            self.bytes.extend_from_slice(bytes);
        }
    }

    fn lost(&mut self, file_offset: u64, _: u64, _: u32) {
        self.cut.get_or_insert(file_offset);
    }
}

/// Fill `buf` as far as the input allows (a pipe delivers less per read); 0 at the end.
pub fn read_full(input: &mut dyn Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match input.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

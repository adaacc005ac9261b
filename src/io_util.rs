//! File handling shared by the subcommands: `-` for standard input and output, configuration
//! and ELF loading with errors that name the file, a streaming reader of the events file that
//! keeps line numbers, a buffered writer of decoded addresses, and a streaming verifier of
//! decoded addresses.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::Path;

use anyhow::{Context, Result};
use streamtrace_isa::ElfImage;
use streamtrace_model::events_file::{parse_event_line, push_address_lines};
use streamtrace_sw_decoder::address_file::{AddressFileWriter, AddressForm};
use streamtrace_model::{Config, RetireEvent};
use streamtrace_sw_decoder::views::Symbolizer;
use streamtrace_sw_decoder::AddressSink;

/// Whether `path` is `-`, which names standard input (for an input) or standard output (for
/// an output) wherever a command takes a file.
pub fn is_std(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// How messages name an input: `<stdin>` for `-`.
pub fn input_name(path: &Path) -> String {
    if is_std(path) {
        "<stdin>".into()
    } else {
        path.display().to_string()
    }
}

/// How messages name an output: `<stdout>` for `-`.
pub fn output_name(path: &Path) -> String {
    if is_std(path) {
        "<stdout>".into()
    } else {
        path.display().to_string()
    }
}

/// Opens an input file, or standard input for `-`; the error names the file and what it is
/// (`what`, e.g. "events file ", may be empty).
pub fn open_input(path: &Path, what: &str) -> Result<Box<dyn Read>> {
    if is_std(path) {
        return Ok(Box::new(io::stdin()));
    }
    Ok(Box::new(File::open(path).with_context(|| format!("cannot open {what}{}", path.display()))?))
}

/// Creates an output file, or standard output for `-`; the error names the file.
/// Unbuffered: callers wrap it in the buffer size they need.
pub fn create_output(path: &Path) -> Result<Box<dyn Write + Send>> {
    if is_std(path) {
        return Ok(Box::new(io::stdout()));
    }
    Ok(Box::new(File::create(path).with_context(|| format!("cannot create {}", path.display()))?))
}

/// Parse a configuration string; the `ConfigError` stays in the chain so `main` exits 2.
pub fn parse_config(text: &str) -> Result<Config> {
    Ok(text.parse::<Config>()?)
}

/// Loads a program, reading at most 256 MiB (`streamtrace_isa::read_program`); errors name
/// the file.
pub fn load_elf(path: &Path) -> Result<ElfImage> {
    Ok(ElfImage::open(path)?)
}

/// Reads `path`, naming the file on error (the counterpart of [`write_file`]).
pub fn read_file(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))
}

/// `pc state` of an interworking address, e.g. `0x00008021` -> `00008020 T`.
pub fn fmt_iw(a: u32) -> String {
    format!("{:08x} {}", a & !1, state(a))
}

pub fn state(a: u32) -> char {
    if a & 1 == 1 {
        'T'
    } else {
        'A'
    }
}

/// Reads an events file one event at a time, remembering the line of each event, so that
/// neither encoding nor verification needs the whole run in memory.
pub struct EventLines {
    reader: BufReader<Box<dyn Read>>,
    name: String,
    line_no: u64,
    buf: String,
}

impl EventLines {
    /// `-`: standard input.
    pub fn open(path: &Path) -> Result<EventLines> {
        let file = open_input(path, "events file ")?;
        Ok(EventLines {
            reader: BufReader::with_capacity(1 << 16, file),
            name: input_name(path),
            line_no: 0,
            buf: String::new(),
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The next event and its 1-based line number; `Ok(None)` at the end of the file.
    /// Errors read `FILE:LINE: reason`.
    pub fn next_event(&mut self) -> Result<Option<(RetireEvent, u64)>> {
        loop {
            self.buf.clear();
            let n = self
                .reader
                .read_line(&mut self.buf)
                .with_context(|| format!("{}:{}: read error", self.name, self.line_no + 1))?;
            if n == 0 {
                return Ok(None);
            }
            self.line_no += 1;
            match parse_event_line(&self.buf) {
                Ok(Some(ev)) => return Ok(Some((ev, self.line_no))),
                Ok(None) => {}
                Err(reason) => anyhow::bail!("{}:{}: {reason}", self.name, self.line_no),
            }
        }
    }
}


/// The form of an address list, one instruction per line, shared by `run --pc-trace` and
/// `decode -o` so that the two files compare with `cmp`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum AddrFormat {
    /// `%08x A` or `%08x T`: the address and the state (ARM or Thumb).
    Annotated,
    /// `%08x`: the address alone (the form compared with QEMU's PC logs).
    Plain,
    /// No text: each address as a 32-bit little-endian word in interworking form (bit 0
    /// set for Thumb), for tools that read hundreds of millions of them.
    Binary,
}

/// Writes instruction addresses (interworking form: bit 0 set for Thumb) in an
/// [`AddrFormat`] (sw-decoder's `AddressFileWriter`: large buffers written by a thread of
/// their own), with `--symbols` names on the text lines.
pub struct AddrWriter {
    out: AddressFileWriter,
    name: String,
    /// `--symbols`: each line also gets `  function+0xOFF`.
    pub symbols: Option<Symbolizer>,
}

impl AddrWriter {
    /// `-`: standard output.
    pub fn create(path: &Path, format: AddrFormat) -> Result<AddrWriter> {
        let form = match format {
            AddrFormat::Annotated => AddressForm::Annotated,
            AddrFormat::Plain => AddressForm::Plain,
            AddrFormat::Binary => AddressForm::Binary,
        };
        Ok(AddrWriter { out: AddressFileWriter::new(create_output(path)?, form), name: output_name(path), symbols: None })
    }

    pub fn finish(self) -> Result<()> {
        self.out.finish().with_context(|| format!("cannot write {}", self.name))
    }
}

impl AddressSink for AddrWriter {
    fn addresses(&mut self, addrs: &[u32]) {
        let Some(sym) = &self.symbols else {
            return self.out.addresses(addrs);
        };
        let annotated = self.out.form() == AddressForm::Annotated;
        for &a in addrs {
            let line = self.out.text();
            push_address_lines(line, &[a], annotated);
            // The symbol goes before the newline.
            line.pop();
            line.extend_from_slice(b"  ");
            line.extend_from_slice(sym.format(a).as_bytes());
            line.push(b'\n');
            self.out.filled();
        }
    }
}

/// The first difference between the decoded addresses and an events file.
#[derive(Debug)]
pub enum Mismatch {
    /// Instruction `index` (0-based) differs.
    Differs {
        index: u64,
        line: u64,
        expected: u32,
        got: u32,
    },
    /// The decoder produced more instructions than the file holds.
    Extra { index: u64, got: u32 },
    /// The file holds more instructions than the decoder produced.
    Missing {
        index: u64,
        line: u64,
        expected: u32,
    },
    /// The events file itself is unreadable or malformed.
    Events(anyhow::Error),
}

/// Compares decoded addresses with the events file as they arrive.
pub struct Verifier {
    events: EventLines,
    index: u64,
    mismatch: Option<Mismatch>,
}

impl Verifier {
    pub fn open(path: &Path) -> Result<Verifier> {
        Ok(Verifier {
            events: EventLines::open(path)?,
            index: 0,
            mismatch: None,
        })
    }

    /// Skip the first `n` events: a decoder that started at a sync marker (`--from-sync`)
    /// produces the instructions after them. Instruction numbers in messages stay those of
    /// the whole file.
    pub fn skip(&mut self, n: u64) {
        while self.index < n && self.mismatch.is_none() {
            match self.events.next_event() {
                Ok(Some(_)) => self.index += 1,
                Ok(None) => {
                    self.mismatch = Some(Mismatch::Events(anyhow::anyhow!(
                        "{} ends after {} instructions, before the sync the decoder started at (instruction {n})",
                        self.events.name(),
                        self.index
                    )))
                }
                Err(e) => self.mismatch = Some(Mismatch::Events(e)),
            }
        }
    }

    /// `Ok` if every event matched and nothing is left over; else a message naming the first
    /// mismatching instruction index (0-based, as in the events file without comments) and
    /// both addresses.
    pub fn finish(mut self) -> std::result::Result<u64, String> {
        if self.mismatch.is_none() {
            match self.events.next_event() {
                Ok(None) => {}
                Ok(Some((ev, line))) => {
                    self.mismatch = Some(Mismatch::Missing {
                        index: self.index,
                        line,
                        expected: ev.iw_addr(),
                    })
                }
                Err(e) => self.mismatch = Some(Mismatch::Events(e)),
            }
        }
        let name = self.events.name().to_string();
        match self.mismatch {
            None => Ok(self.index),
            Some(Mismatch::Differs { index, line, expected, got }) => Err(format!(
                "verification failed at instruction {index} ({name}:{line}): expected {}, decoded {}",
                fmt_iw(expected),
                fmt_iw(got)
            )),
            Some(Mismatch::Extra { index, got }) => Err(format!(
                "verification failed at instruction {index}: decoded {} but {name} ends after {index} instructions",
                fmt_iw(got)
            )),
            Some(Mismatch::Missing { index, line, expected }) => Err(format!(
                "verification failed at instruction {index} ({name}:{line}): expected {}, but the decoder produced only {index} instructions",
                fmt_iw(expected)
            )),
            Some(Mismatch::Events(e)) => Err(format!("verification failed: {e:#}")),
        }
    }
}

/// Where the sync markers of the trace of an events file fall: re-encodes the events with
/// `cfg` (sync points are deterministic, docs/trace-format.md section 7) and returns, for
/// each marker, the bit offset where it ends and the number of instructions before it.
pub fn sync_points(cfg: &Config, events: &Path) -> Result<Vec<(u64, u64)>> {
    let mut lines = EventLines::open(events)?;
    let mut encoder = streamtrace_model::Encoder::new(cfg);
    let (mut before, mut pushed) = (Vec::new(), 0u64);
    while let Some((ev, line)) = lines.next_event()? {
        encoder.push(&ev).with_context(|| format!("{}:{line}", lines.name()))?;
        pushed += 1;
        while encoder.markers() > before.len() as u64 {
            // The stream still in the detector is encoded after the marker.
            before.push(pushed - encoder.current_stream_len() as u64);
        }
    }
    // The markers' bit offsets come from the bytes: pft's coder writes a marker some
    // instructions after the one it follows. No other bit sequence looks like a marker.
    let (trace, _) = encoder.finish();
    let mut ends = Vec::new();
    let mut from = 0;
    while let Some(end) = streamtrace_model::format::find_sync_marker(&trace.bytes, from) {
        ends.push(end as u64 * 8);
        from = end;
    }
    anyhow::ensure!(
        ends.len() >= before.len(),
        "{}: re-encoding found {} sync markers in the bytes but counted {}",
        lines.name(),
        ends.len(),
        before.len()
    );
    // A periodic sync due after the last stream comes out when the encoder finishes.
    before.resize(ends.len(), pushed);
    Ok(ends.into_iter().zip(before).collect())
}

impl AddressSink for Verifier {
    fn addresses(&mut self, addrs: &[u32]) {
        if self.mismatch.is_some() {
            return;
        }
        for &got in addrs {
            match self.events.next_event() {
                Ok(Some((ev, line))) => {
                    if ev.iw_addr() != got {
                        self.mismatch = Some(Mismatch::Differs {
                            index: self.index,
                            line,
                            expected: ev.iw_addr(),
                            got,
                        });
                        return;
                    }
                }
                Ok(None) => {
                    self.mismatch = Some(Mismatch::Extra {
                        index: self.index,
                        got,
                    });
                    return;
                }
                Err(e) => {
                    self.mismatch = Some(Mismatch::Events(e));
                    return;
                }
            }
            self.index += 1;
        }
    }
}

/// Writes `bytes` to `path`, naming the file on error.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    std::fs::write(path, bytes).with_context(|| format!("cannot write {}", path.display()))
}

/// Percentage `part / whole * 100`, 0 for an empty whole.
pub fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// `1234567` -> `1,234,567` (written once, in the sweep reports the plots also use).
pub use streamtrace_sim::sweep::report::thousands;

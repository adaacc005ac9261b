//! The streaming decoder (`StreamDecoder`) against the whole-buffer decoder: real program
//! traces of every scheme, pushed in random chunkings (1-byte chunks included), must give
//! the same elements, errors and addresses, intact and with bits flipped.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use proptest::prelude::*;
use streamtrace_isa::ElfImage;
use streamtrace_model::{Config, Encoder, Scheme};
use streamtrace_sim::semihost::SharedBuffer;
use streamtrace_sim::{Machine, MemAccess, Semihost, StepOutcome};
use streamtrace_sw_decoder::{decode_trace, DecodeError, Decoder, Step, StreamDecoder, TraceElement};

/// Every scheme, with and without sync markers.
const CONFIGS: &[&str] = &[
    "fbase",
    "base",
    "nexs",
    "bsdc-32x4-128",
    "esdc-32x4-128",
    "rsdc-32x4-128",
    "rsdc-64x4-256,maxsl=64,sync=20000",
    "tslz-256",
    "sct8ht-128x4-255x8",
    "gzip-1",
    "pft",
    "pft,sync=20000",
];

/// (program, arguments, instructions): ARM and Thumb code, calls, returns, indirect jumps.
const PROGRAMS: &[(&str, &str, u64)] =
    &[("tiny", "", 10_000), ("sha256_thumb", "96", 120_000), ("qsort_structs", "6000", 150_000), ("dijkstra", "24 80", 150_000)];

struct Case {
    name: String,
    cfg: Config,
    trace: Vec<u8>,
    elf: &'static ElfImage,
    instructions: u64,
}

fn programs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testbenches/programs")
}

fn cases() -> &'static [Case] {
    static CASES: OnceLock<Vec<Case>> = OnceLock::new();
    CASES.get_or_init(|| {
        let mut out = Vec::new();
        for &(prog, args, limit) in PROGRAMS {
            let elf: &'static ElfImage =
                Box::leak(Box::new(ElfImage::open(programs_dir().join(format!("bin/{prog}.elf"))).unwrap()));
            let cmdline = format!("bin/{prog}.elf {args}");
            let sh = Semihost::new()
                .with_cmdline(cmdline.trim())
                .with_workdir(programs_dir())
                .with_stdin(std::io::empty())
                .with_stdout(SharedBuffer::new())
                .with_stderr(SharedBuffer::new());
            let configs: Vec<Config> = CONFIGS.iter().map(|c| c.parse().unwrap()).collect();
            let mut encoders: Vec<Encoder> = configs.iter().map(Encoder::new).collect();
            let mut m = Machine::for_elf(elf, sh);
            let mut n = 0u64;
            let mut hook = |ev: &streamtrace_model::RetireEvent, _: &[MemAccess]| {
                n += 1;
                for e in &mut encoders {
                    e.push(ev).unwrap();
                }
            };
            while m.retired < limit {
                match m.step(&mut hook).unwrap() {
                    StepOutcome::Running => {}
                    StepOutcome::Exited(_) => break,
                }
            }
            for (cfg, e) in configs.into_iter().zip(encoders) {
                let (trace, _) = e.finish();
                out.push(Case { name: format!("{prog} {cfg}"), cfg, trace: trace.bytes, elf, instructions: n });
            }
        }
        out
    })
}

/// What a decode produced, in the form `decode_trace` gives it.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    addresses: Vec<u32>,
    elements: Vec<TraceElement>,
    errors: Vec<DecodeError>,
}

/// The whole-buffer decoder run as `decode_trace` runs it (error, resync, go on), with an
/// instruction limit so a damaged pft trace cannot loop for long.
fn whole(c: &Case, bytes: &[u8], limit: u64) -> Outcome {
    if c.cfg.scheme == Scheme::Gzip {
        let d = decode_trace(&c.cfg, bytes, c.elf, true);
        return Outcome { addresses: d.addresses, elements: d.elements, errors: d.errors };
    }
    let mut out = Outcome { addresses: Vec::new(), elements: Vec::new(), errors: Vec::new() };
    let mut dec = Decoder::new(&c.cfg, bytes, c.elf).instruction_limit(limit);
    loop {
        match dec.next_element(&mut out.addresses) {
            Ok(Some(el)) => out.elements.push(el),
            Ok(None) => break,
            Err(e) => {
                out.errors.push(e);
                if dec.resync().is_none() {
                    break;
                }
            }
        }
    }
    out
}

/// The streaming decoder fed `bytes` in chunks of the given sizes (cycled), pulling after
/// every push; `per_step` pulls with `next`, otherwise with `run`.
fn streamed(c: &Case, bytes: &[u8], chunks: &[usize], per_step: bool, limit: u64) -> Outcome {
    let mut out = Outcome { addresses: Vec::new(), elements: Vec::new(), errors: Vec::new() };
    // Move the window often (the default waits for 64 KiB of consumed input).
    let compact = 1 + chunks[0] % 97;
    let mut dec = StreamDecoder::new(&c.cfg, c.elf).instruction_limit(limit).compact_after(compact);
    let mut rest = bytes;
    let mut sizes = chunks.iter().cycle();
    let take = |step: Step, out: &mut Outcome| match step {
        Step::Element(el) => out.elements.push(el),
        Step::Error(e) => out.errors.push(e),
        Step::Resynced { .. } | Step::Progress => {}
        Step::NeedInput | Step::Finished => unreachable!("returned, not handed over"),
    };
    let pull = |dec: &mut StreamDecoder<&ElfImage>, out: &mut Outcome| -> Step {
        if per_step {
            loop {
                match dec.next(&mut out.addresses) {
                    s @ (Step::NeedInput | Step::Finished) => return s,
                    s => take(s, out),
                }
            }
        } else {
            let mut got = Vec::new();
            let s = dec.run(&mut out.addresses, |s, _| {
                got.push(s);
                ControlFlow::Continue(())
            });
            for s in got {
                take(s, out);
            }
            s
        }
    };
    loop {
        let n = (*sizes.next().unwrap()).clamp(1, rest.len().max(1)).min(rest.len());
        if rest.is_empty() {
            dec.finish();
            let s = pull(&mut dec, &mut out);
            assert_eq!(s, Step::Finished, "{}: after finish", c.name);
            return out;
        }
        dec.push(&rest[..n]);
        rest = &rest[n..];
        let s = pull(&mut dec, &mut out);
        if s == Step::Finished {
            // END (or a fatal error): later bytes are ignored, as the whole decoder ignores them.
            return out;
        }
        // Bounded: the unconsumed margin, the last chunk (inflated: deflate expands at most
        // 1032 times, and the inflater may hold back what it has), what waits to be dropped.
        let chunk = if c.cfg.scheme == Scheme::Gzip { 1032 * (n + 64 * 1024) } else { n };
        assert!(dec.buffered() <= 2 * (chunk + compact + 512), "{}: {} bytes buffered after a {n}-byte chunk", c.name, dec.buffered());
    }
}

#[test]
fn one_byte_chunks_equal_whole_decode_on_every_scheme() {
    let cases = cases();
    assert_eq!(cases.len(), CONFIGS.len() * PROGRAMS.len());
    for c in cases {
        let reference = decode_trace(&c.cfg, &c.trace, c.elf, true);
        assert!(reference.errors.is_empty() && reference.ended, "{}: {:?}", c.name, reference.errors);
        assert_eq!(reference.addresses.len() as u64, c.instructions, "{}", c.name);
        let got = streamed(c, &c.trace, &[1], true, u64::MAX);
        let want = Outcome { addresses: reference.addresses, elements: reference.elements, errors: reference.errors };
        assert!(got == want, "{}: 1-byte chunks differ (elements {} vs {}, addresses {} vs {})", c.name,
            got.elements.len(), want.elements.len(), got.addresses.len(), want.addresses.len());
    }
}

#[test]
fn streaming_from_the_first_sync_marker() {
    let mut tested = 0;
    for c in cases().iter().filter(|c| c.cfg.sync_period != 0) {
        let mut whole_dec = Decoder::new(&c.cfg, &c.trace, c.elf);
        let Some(start) = whole_dec.resync() else {
            assert!(c.instructions < 20_000, "{}: no sync marker", c.name);
            continue;
        };
        tested += 1;
        let mut want = Vec::new();
        while whole_dec.next_element(&mut want).unwrap().is_some() {}
        let mut dec = StreamDecoder::new(&c.cfg, c.elf).from_sync();
        let mut got = Vec::new();
        let mut resynced = None;
        for chunk in c.trace.chunks(7) {
            dec.push(chunk);
            loop {
                match dec.next(&mut got) {
                    Step::NeedInput => break,
                    Step::Resynced { bit } => resynced = Some(bit),
                    Step::Error(e) => panic!("{}: {e}", c.name),
                    _ => {}
                }
            }
        }
        dec.finish();
        while dec.next(&mut got) != Step::Finished {}
        assert_eq!(resynced, Some(start), "{}", c.name);
        assert!(got == want, "{}: {} vs {} addresses", c.name, got.len(), want.len());
    }
    assert!(tested >= 4, "{tested} traces with a sync marker");
}

fn chunking() -> impl Strategy<Value = Vec<usize>> {
    prop_oneof![
        prop::collection::vec(1usize..4, 1..8),
        prop::collection::vec(1usize..300, 1..8),
        prop::collection::vec(1usize..70_000, 1..4),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Intact traces: every random chunking gives exactly the whole decode.
    #[test]
    fn random_chunkings_equal_whole_decode(i in 0usize..CONFIGS.len() * PROGRAMS.len(), chunks in chunking(), per_step: bool) {
        let c = &cases()[i];
        let want = whole(c, &c.trace, u64::MAX);
        let got = streamed(c, &c.trace, &chunks, per_step, u64::MAX);
        prop_assert!(got == want, "{}: chunks {:?}", c.name, chunks);
    }

    /// Damaged traces (bit flips, truncation): the same errors at the same offsets, the
    /// same resyncs, the same elements and addresses.
    #[test]
    fn damaged_traces_stream_like_whole_decode(
        i in 0usize..CONFIGS.len() * PROGRAMS.len(),
        flips in prop::collection::vec((any::<prop::sample::Index>(), 0u8..8), 1..4),
        cut in any::<prop::sample::Index>(),
        truncate: bool,
        chunks in chunking(),
    ) {
        let c = &cases()[i];
        prop_assume!(c.cfg.scheme != Scheme::Gzip); // inflated whole first; see stream.rs
        let mut bytes = c.trace.clone();
        for (at, bit) in flips {
            let at = at.index(bytes.len());
            bytes[at] ^= 1 << bit;
        }
        if truncate {
            bytes.truncate(cut.index(bytes.len()));
        }
        let limit = 4 * c.instructions + 100_000;
        let want = whole(c, &bytes, limit);
        let got = streamed(c, &bytes, &chunks, false, limit);
        prop_assert!(got == want, "{}: chunks {:?}: errors {:?} vs {:?}", c.name, chunks, got.errors, want.errors);
    }
}

/// The image as a debugger holds it: the ELF's segments as raw sections (plus an unrelated
/// ROM block) decode exactly like the ELF; without the code section every scheme reports
/// the first stream outside it with its bit offset and both addresses.
#[test]
fn section_images_decode_like_the_elf_and_locate_missing_code() {
    use streamtrace_isa::{ProgramImage, SectionImage};
    for c in cases().iter().filter(|c| c.name.starts_with("sha256_thumb")) {
        let mut img = SectionImage::new();
        img.add_section("rom", 0xFFFF_0000, vec![0u8; 0x1000]).unwrap();
        let segs = c.elf.memory().segments();
        for (i, s) in segs.iter().enumerate() {
            img.add_section(&format!("seg{i}"), s.base(), s.bytes().to_vec()).unwrap();
        }
        assert!(img.add_elf(c.elf).unwrap_err().to_string().contains("overlaps section seg0"));
        let want = decode_trace(&c.cfg, &c.trace, c.elf, true);
        let got = decode_trace(&c.cfg, &c.trace, &img, true);
        assert_eq!(got.addresses, want.addresses, "{}", c.name);
        assert_eq!(got.elements, want.elements, "{}", c.name);

        // The code segment is missing: the first stream is outside every section.
        let entry = c.elf.entry() & !1;
        let mut partial = SectionImage::new();
        for (i, s) in segs.iter().enumerate().filter(|(_, s)| !s.contains(entry)) {
            partial.add_section(&format!("seg{i}"), s.base(), s.bytes().to_vec()).unwrap();
        }
        assert!(partial.read_u32(entry).is_none());
        let mut dec = StreamDecoder::new(&c.cfg, &partial);
        dec.push(&c.trace);
        dec.finish();
        let mut sink = Vec::new();
        let first_error = loop {
            match dec.next(&mut sink) {
                Step::Error(e) => break e,
                Step::Finished => panic!("{}: no error", c.name),
                _ => {}
            }
        };
        match first_error {
            DecodeError::OutsideImage { at, offset, .. } => {
                assert_eq!(at & !1, entry, "{}", c.name);
                assert!(offset < 200, "{}: {offset}", c.name);
                assert!(partial.locate(at).contains("outside every section"));
            }
            // pft's first escape carries the start address; the walk then fails.
            other => panic!("{}: {other}", c.name),
        }
    }
}

/// A lost stretch of input (a damaged trace file block): the addresses before it are those
/// of the trace cut there, the record it cuts is dropped with one `LostInput` error, and
/// decoding resumes after the next sync marker behind it (none with `sync=0`).
#[test]
fn lost_input_drops_to_the_next_sync_marker() {
    use streamtrace_model::format::{find_sync_marker, SYNC_MARKER};
    let mut resumed = 0;
    for c in cases().iter().filter(|c| c.cfg.scheme != Scheme::Gzip && c.trace.len() > 200) {
        for (g, lost) in [(c.trace.len() / 3, 64), (c.trace.len() / 2, 200.min(c.trace.len() / 4))] {
            // Reference: the prefix decoded alone, then the whole decoder from the first
            // marker behind the gap.
            let mut want = whole(c, &c.trace[..g], u64::MAX).addresses;
            if let Some(at) = find_sync_marker(&c.trace, g + lost) {
                let mut d = Decoder::new(&c.cfg, &c.trace[at - SYNC_MARKER.len()..], c.elf);
                assert_eq!(d.resync(), Some(SYNC_MARKER.len() as u64 * 8));
                while d.next_element(&mut want).unwrap().is_some() {}
                resumed += 1;
            }
            for chunk in [1usize, 13, 4096] {
                let mut dec = StreamDecoder::new(&c.cfg, c.elf).compact_after(chunk);
                let (mut got, mut errors) = (Vec::new(), Vec::new());
                let mut pull = |dec: &mut StreamDecoder<&ElfImage>, got: &mut Vec<u32>| loop {
                    match dec.next(got) {
                        Step::NeedInput | Step::Finished => break,
                        Step::Error(e) => errors.push(e),
                        _ => {}
                    }
                };
                for part in c.trace[..g].chunks(chunk) {
                    dec.push(part);
                    pull(&mut dec, &mut got);
                }
                dec.push_lost(lost);
                for part in c.trace[g + lost..].chunks(chunk) {
                    dec.push(part);
                    pull(&mut dec, &mut got);
                }
                dec.finish();
                pull(&mut dec, &mut got);
                let lost_errors: Vec<_> = errors.iter().filter(|e| matches!(e, DecodeError::LostInput { .. })).collect();
                assert_eq!(lost_errors, [&DecodeError::LostInput { bytes: lost as u64, offset: g as u64 * 8 }], "{}", c.name);
                assert!(got == want, "{} gap at {g}+{lost}, chunks {chunk}: {} vs {} addresses", c.name, got.len(), want.len());
            }
        }
    }
    assert!(resumed >= 2, "only {resumed} gaps were followed by a sync marker");
}

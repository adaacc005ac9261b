//! Writes a scenario as a .stv file (docs/vectors-format.md). The record meanings are
//! produced by a shadow copy of the compressor state (model types) replaying the decoded
//! streams, so each line can say which LSP entry, SDC way or LVSA value was involved.

use std::fmt::Write as _;

use streamtrace_model::events_file::format_event_line;
use streamtrace_model::format::EscapeType;
use streamtrace_model::{
    AdaptiveOneLengthCounter, Config, LastStreamPredictor, LastValueStartAddress, Scheme, StreamDescriptorCache,
};
use streamtrace_sw_decoder::{RecordInfo, RecordKind, StreamRecord, TraceElement};

use super::codec::{checksum, decode, encode, expected_addresses, Decoded};
use super::program::Program;
use super::scenarios::{Join, Scenario};

pub const FORMAT_VERSION: u32 = 1;

pub fn kind_name(cfg: &Config, kind: &RecordKind) -> &'static str {
    match kind {
        RecordKind::LspHit => "lsp-hit",
        RecordKind::LspRun { .. } => "lsp-run",
        RecordKind::SdcHit { .. } => "sdc-hit",
        RecordKind::MissInferred { .. } => "miss-inferred",
        RecordKind::MissAddress { lvsa_hit: Some(true), .. } => "miss-lvsa-hit",
        RecordKind::MissAddress { lvsa_hit: Some(false), .. } => "miss-lvsa-miss",
        RecordKind::MissAddress { .. } if cfg.scheme == Scheme::Nexs => "miss-nexs",
        RecordKind::MissAddress { .. } => "miss-addr",
        RecordKind::Escape { kind, .. } => match kind {
            EscapeType::End => "end",
            EscapeType::Sync => "sync",
            EscapeType::Exception => "exception",
            EscapeType::Overflow => "overflow",
        },
    }
}

/// Field widths of a decoded record (the generator's split; the checker derives the
/// widths again from the spec rules).
fn split_widths(cfg: &Config, kind: &RecordKind, bits: u64) -> Vec<u32> {
    let k = cfg.index_bits();
    let slw = cfg.sl_bits();
    let sdc = cfg.scheme.uses_sdc();
    let low = cfg.low_bits();
    let prefix: Vec<u32> = if sdc { vec![1, k, slw] } else { vec![slw] };
    let mut w = match kind {
        RecordKind::LspHit => vec![1],
        RecordKind::LspRun { width, .. } => vec![1, *width],
        RecordKind::SdcHit { .. } => vec![1, k],
        RecordKind::MissInferred { .. } => prefix.clone(),
        RecordKind::MissAddress { lvsa_hit: Some(true), .. } => [prefix.clone(), vec![1, 32 - cfg.u - low]].concat(),
        RecordKind::MissAddress { lvsa_hit: Some(false), .. } => [prefix.clone(), vec![1, 32 - low]].concat(),
        RecordKind::MissAddress { .. } if cfg.scheme == Scheme::Nexs => {
            let groups = (bits - slw as u64) / 8;
            let mut v = vec![slw];
            for _ in 0..groups {
                v.extend([2, 6]);
            }
            v
        }
        RecordKind::MissAddress { .. } => [prefix.clone(), vec![32]].concat(),
        RecordKind::Escape { kind, .. } => {
            let mut v = [prefix.clone(), vec![2]].concat();
            let used: u32 = v.iter().sum();
            let rest = bits as u32 - used;
            match kind {
                EscapeType::End => v.push(rest),
                EscapeType::Exception => {}
                EscapeType::Sync => v.extend([rest - 128, 128]),
                EscapeType::Overflow => v.extend([32, rest - 32 - 128, 128]),
            }
            v
        }
    };
    w.retain(|&x| x > 0);
    assert_eq!(w.iter().map(|&x| x as u64).sum::<u64>(), bits, "{cfg}: split of {kind:?}");
    w
}

fn bit_string(bytes: &[u8], offset: u64, n: u32) -> String {
    (offset..offset + n as u64)
        .map(|i| if bytes[(i / 8) as usize] >> (7 - i % 8) & 1 == 1 { '1' } else { '0' })
        .collect()
}

fn hex_u(v: u32, bits: u32) -> String {
    format!("0x{:0w$x}", v, w = bits.div_ceil(4) as usize)
}

/// The compressor state replayed from the decoded streams, for the annotations.
struct Shadow<'a> {
    cfg: Config,
    prog: &'a Program,
    sdc: Option<StreamDescriptorCache>,
    lsp: Option<LastStreamPredictor>,
    lvsa: Option<LastValueStartAddress>,
    aolc: Option<AdaptiveOneLengthCounter>,
    prev_sa: u32,
    prev_last: Option<u32>,
}

impl<'a> Shadow<'a> {
    fn new(cfg: &Config, prog: &'a Program) -> Self {
        Shadow {
            cfg: *cfg,
            prog,
            sdc: cfg.scheme.uses_sdc().then(|| StreamDescriptorCache::new(cfg)),
            lsp: cfg.scheme.uses_sdc().then(|| LastStreamPredictor::new(cfg)),
            lvsa: cfg.scheme.enhanced().then(|| LastValueStartAddress::new(cfg.u)),
            aolc: cfg.scheme.enhanced().then(|| AdaptiveOneLengthCounter::new(cfg)),
            prev_sa: 0,
            prev_last: None,
        }
    }

    fn lvsa_value(&self) -> u32 {
        let v = self.lvsa.as_ref().unwrap();
        v.combine(0) >> (32 - v.width())
    }

    fn set_way(&self, si: u32) -> (u32, u32) {
        (si >> self.cfg.way_bits(), si & (self.cfg.ways - 1))
    }

    fn inferred_text(&self) -> String {
        let last = self.prev_last.expect("inferred address without a previous stream");
        format!("A inferred = target of '{}' at {:#010x}", self.prog.asm_at(last & !1), last)
    }

    /// The address-field part of an SDC-scheme miss record.
    fn address_text(&mut self, sa: u32, kind: &RecordKind) -> String {
        match kind {
            RecordKind::MissInferred { .. } => self.inferred_text(),
            RecordKind::MissAddress { lvsa_hit: None, .. } => format!("A(32) = {sa:#010x}"),
            RecordKind::MissAddress { lvsa_hit: Some(hit), .. } => {
                let u = self.cfg.u;
                let low = self.cfg.low_bits();
                let up = sa >> (32 - u);
                let v = self.lvsa_value();
                let mut t = if *hit {
                    format!("A = {sa:#010x}: A[31:{}] = {} = LVSA -> L = '1' A[{}:{low}]", 32 - u, hex_u(up, u), 31 - u)
                } else {
                    format!(
                        "A = {sa:#010x}: A[31:{}] = {} != LVSA {} -> L = '0' A[31:{low}]",
                        32 - u,
                        hex_u(up, u),
                        hex_u(v, u)
                    )
                };
                if self.cfg.scheme == Scheme::ESdc {
                    self.lvsa.as_mut().unwrap().update(sa);
                    if up != v {
                        let _ = write!(t, "; LVSA := {}", hex_u(up, u));
                    }
                }
                t
            }
            _ => unreachable!(),
        }
    }

    /// One stream of an SDC scheme: replay the SDC/LSP updates and describe them.
    fn sdc_stream(&mut self, sa: u32, sl: u32, rec: StreamRecord, kind: &RecordKind) -> String {
        let lsp_index = self.lsp.as_ref().unwrap().index();
        let lsp_pred = self.lsp.as_ref().unwrap().predict() as u32;
        let lvsa_before = self.lvsa.as_ref().map(|_| self.lvsa_value());
        let mut t = match rec {
            StreamRecord::LspHit => {
                let si = lsp_pred;
                self.sdc.as_mut().unwrap().touch(si);
                self.lsp.as_mut().unwrap().access(si as u16);
                format!("LSP[{lsp_index}] = {si} -> ({sa:#010x}, {sl})")
            }
            StreamRecord::SdcHit { si } => {
                let (set, way) = self.set_way(si);
                self.sdc.as_mut().unwrap().touch(si);
                self.lsp.as_mut().unwrap().access(si as u16);
                format!(
                    "SDC hit SI={si} (set {set} way {way}) = ({sa:#010x}, {sl}); LSP[{lsp_index}] = {lsp_pred} != {si} -> LSP[{lsp_index}] := {si}"
                )
            }
            StreamRecord::Miss { .. } => {
                let mut t = format!("SDC miss, SL={sl}, ");
                t += &self.address_text(sa, kind);
                let sdc = self.sdc.as_mut().unwrap();
                match sdc.lookup(sa, sl) {
                    Some(si) => {
                        let u = self.cfg.u;
                        sdc.touch(si);
                        let _ = write!(
                            t,
                            "; forced miss: entry SI={si} matches A[{}:0] and SL but LVSA {} != A[31:{}] {}; entry SI={si} accessed, nothing filled",
                            31 - u,
                            hex_u(lvsa_before.unwrap(), u),
                            32 - u,
                            hex_u(sa >> (32 - u), u)
                        );
                    }
                    None => {
                        let set = sdc.set_index(sa, sl);
                        let ways = self.cfg.ways;
                        let wb = self.cfg.way_bits();
                        let before: Vec<Option<(u32, u32)>> = (0..ways).map(|w| sdc.entry((set << wb) | w)).collect();
                        let si = sdc.fill(sa, sl);
                        if si == 0 {
                            let _ = write!(t, "; set {set} has no way (entry 0 does not exist): not cached");
                        } else {
                            let way = si & (ways - 1);
                            let victim = match before[way as usize] {
                                None => "was invalid".to_string(),
                                Some((tag, vsl)) => {
                                    let a = match (&self.lvsa, self.cfg.scheme) {
                                        (Some(_), Scheme::RSdc) => format!("A[{}:0]={tag:#x}", 31 - self.cfg.u),
                                        _ => format!("{tag:#010x}"),
                                    };
                                    format!("evicts ({a}, {vsl})")
                                }
                            };
                            let _ = write!(t, "; fill set {set} way {way} -> SI={si} ({victim})");
                        }
                    }
                }
                self.lsp.as_mut().unwrap().access(0);
                if lsp_pred != 0 {
                    let _ = write!(t, "; LSP[{lsp_index}] := 0");
                }
                t
            }
        };
        if self.cfg.scheme == Scheme::RSdc {
            let before = lvsa_before.unwrap();
            self.lvsa.as_mut().unwrap().update(sa);
            let after = self.lvsa_value();
            if after != before {
                let _ = write!(t, "; LVSA := {}", hex_u(after, self.cfg.u));
            }
        }
        t
    }

    fn baseline_stream(&mut self, sa: u32, sl: u32, kind: &RecordKind) -> String {
        match kind {
            RecordKind::MissInferred { .. } => format!("SL={sl}, {}", self.inferred_text()),
            RecordKind::MissAddress { .. } if self.cfg.scheme == Scheme::Nexs => {
                let d = sa ^ self.prev_sa;
                let groups = (32 - d.leading_zeros()).div_ceil(6).max(1);
                let gs: Vec<String> = (0..groups).map(|i| format!("g{i}={:#04x}", (d >> (6 * i)) & 0x3f)).collect();
                format!(
                    "SL={sl}, D = {sa:#010x} ^ prevSA {:#010x} = {d:#010x}: {groups} group(s) {}",
                    self.prev_sa,
                    gs.join(" ")
                )
            }
            _ => format!("SL={sl}, A = {sa:#010x}"),
        }
    }

    fn record(
        &mut self,
        info: &RecordInfo,
        elements: &[(TraceElement, std::ops::Range<usize>)],
        addrs: &[u32],
        widths: &[u32],
    ) -> String {
        let streams: Vec<(u32, u32, StreamRecord, u32)> = elements
            .iter()
            .filter_map(|(e, r)| match e {
                TraceElement::Stream { sa, sl, record, .. } => Some((*sa, *sl, *record, addrs[r.end - 1])),
                _ => None,
            })
            .collect();
        let text = match &info.kind {
            RecordKind::Escape { kind, .. } => {
                let pad_of = |w: &[u32], fixed: u32| -> u32 { w.iter().sum::<u32>() - fixed };
                let prefix: u32 = if self.cfg.scheme.uses_sdc() {
                    1 + self.cfg.index_bits() + self.cfg.sl_bits()
                } else {
                    self.cfg.sl_bits()
                };
                match kind {
                    EscapeType::End => {
                        format!("END escape + {} zero bit(s) to the byte boundary", pad_of(widths, prefix + 2))
                    }
                    EscapeType::Exception => {
                        "EXCEPTION escape: the stream before ended by an exception; the next start address is sent"
                            .to_string()
                    }
                    EscapeType::Sync => {
                        self.reset();
                        format!(
                            "SYNC escape + {} zero bit(s) to the byte boundary + marker 00 x 15, 80; reset",
                            pad_of(widths, prefix + 2 + 128)
                        )
                    }
                    EscapeType::Overflow => {
                        self.reset();
                        let lost = match info.kind {
                            RecordKind::Escape { lost, .. } => lost,
                            _ => unreachable!(),
                        };
                        format!(
                            "OVERFLOW escape, lost = {lost} instruction(s) + {} zero bit(s) to the byte boundary + marker 00 x 15, 80; reset",
                            pad_of(widths, prefix + 2 + 32 + 128)
                        )
                    }
                }
            }
            RecordKind::LspRun { n, width } => {
                let a = self.aolc.as_mut().unwrap();
                let m0 = a.monitor();
                a.after_run(*n);
                let (m1, s1) = (a.monitor(), a.width());
                let full = *n == 1 << *width;
                let mut t = format!(
                    "LSP-hit run: n={n} (s={width}, field n-1={}{})",
                    n - 1,
                    if full { ", counter full" } else { "" }
                );
                let mut list = Vec::new();
                for &(sa, sl, rec, _) in &streams {
                    self.sdc_stream(sa, sl, rec, &info.kind);
                    list.push((sa, sl));
                }
                if list.iter().all(|x| *x == list[0]) {
                    let _ = write!(t, ": {} x ({:#010x}, {})", list.len(), list[0].0, list[0].1);
                } else {
                    let l: Vec<String> = list.iter().map(|(a, s)| format!("({a:#010x}, {s})")).collect();
                    let _ = write!(t, ": {}", l.join(" "));
                }
                let _ = write!(t, "; monitor {m0} -> ");
                if s1 != *width {
                    let _ = write!(t, "15: s {width} -> {s1}, monitor {m1}");
                    if m1 != 8 {
                        unreachable!()
                    }
                } else {
                    let _ = write!(t, "{m1}");
                }
                t
            }
            kind => {
                assert_eq!(streams.len(), 1, "{kind:?}");
                let (sa, sl, rec, _) = streams[0];
                if self.cfg.scheme.uses_sdc() {
                    let t = self.sdc_stream(sa, sl, rec, kind);
                    if matches!(kind, RecordKind::LspHit) {
                        format!("LSP hit: {t}")
                    } else {
                        t
                    }
                } else {
                    self.baseline_stream(sa, sl, kind)
                }
            }
        };
        for &(sa, _, _, last) in &streams {
            self.prev_sa = sa;
            self.prev_last = Some(last);
        }
        text
    }

    fn reset(&mut self) {
        let prog = self.prog;
        *self = Shadow::new(&self.cfg, prog);
    }
}

fn stream_record_text(r: &StreamRecord) -> String {
    match r {
        StreamRecord::LspHit => "lsp-hit".into(),
        StreamRecord::SdcHit { si } => format!("sdc-hit si={si}"),
        StreamRecord::Miss { inferred: false } => "miss".into(),
        StreamRecord::Miss { inferred: true } => "miss-inferred".into(),
    }
}

pub fn element_line(el: &TraceElement) -> String {
    match el {
        TraceElement::Stream { sa, sl, record, offset } => {
            format!("stream {sa:08x} {sl} {} @{offset}", stream_record_text(record))
        }
        TraceElement::Exception { offset } => format!("exception @{offset}"),
        TraceElement::Sync { offset } => format!("sync @{offset}"),
        TraceElement::Overflow { lost, offset } => format!("overflow {lost} @{offset}"),
        TraceElement::End { offset } => format!("end @{offset}"),
        TraceElement::Record(_) => unreachable!(),
    }
}

fn address_lines(out: &mut String, addrs: &[u32]) {
    let _ = writeln!(out, "count {}", addrs.len());
    let _ = writeln!(out, "checksum {:08x}", checksum(addrs));
    for chunk in addrs.chunks(8) {
        let v: Vec<String> = chunk.iter().map(|a| format!("{a:08x}")).collect();
        let _ = writeln!(out, "addr {}", v.join(" "));
    }
}

pub fn widths_line(cfg: &Config) -> String {
    let mut s = String::from("widths");
    if cfg.scheme.uses_sdc() {
        let _ = write!(s, " k={}", cfg.index_bits());
    }
    let _ = write!(s, " slw={}", cfg.sl_bits());
    if cfg.scheme.enhanced() {
        let _ = write!(s, " u={} low={} olc={}", cfg.u, cfg.low_bits(), cfg.olc_init);
    }
    s
}

fn wrap_comment(out: &mut String, text: &str) {
    let _ = writeln!(out, "# {text}");
}

pub fn render(s: &Scenario) -> String {
    let mut out = String::new();
    let img = s.program.image();
    let _ = writeln!(out, "# streamtrace golden vector; format: docs/vectors-format.md; spec: docs/trace-format.md");
    let _ =
        writeln!(out, "# Generated by sw-decoder/tests/golden_vectors.rs (STREAMTRACE_REGEN_VECTORS=1); do not edit.");
    let _ = writeln!(out, "stv {FORMAT_VERSION}");
    let _ = writeln!(out, "name {}", s.name);
    let _ = writeln!(out, "title {}", s.title);
    let _ = writeln!(out, "spec {}", s.spec);
    for line in s.about {
        let _ = writeln!(out, "about {line}");
    }
    for c in s.configs {
        let _ = writeln!(out, "config {c}");
    }
    for i in &s.sync_before {
        let _ = writeln!(out, "request-sync-before {i}");
    }
    for (i, lost) in &s.overflow_before {
        let _ = writeln!(out, "overflow-before {i} {lost}");
    }

    // Image.
    let _ = writeln!(out, "\n[image]");
    wrap_comment(
        &mut out,
        "mem ADDRESS: UNIT  -- 8 hex digits = 32-bit little-endian word (ARM), 4 = 16-bit halfword (Thumb)",
    );
    for u in &s.program.units {
        let unit = if u.size == 2 { format!("{:04x}", u.value) } else { format!("{:08x}", u.value) };
        let _ = writeln!(out, "mem {:08x}: {unit:<8}   # {}", u.addr, u.asm);
    }

    // Events.
    let _ = writeln!(out, "\n[events]");
    wrap_comment(&mut out, "PC       INSN     S CLASS   T NEXT_PC  [exc]   (docs/events-format.md)");
    for (i, ev) in s.events.iter().enumerate() {
        for _ in s.sync_before.iter().filter(|&&x| x == i) {
            let _ = writeln!(out, "# ---- Encoder::request_sync() here (request-sync-before {i}) ----");
        }
        for (_, lost) in s.overflow_before.iter().filter(|o| o.0 == i) {
            let _ = writeln!(out, "# ---- Encoder::overflow({lost}) here (overflow-before {i} {lost}) ----");
        }
        let line = format_event_line(ev);
        let _ = writeln!(out, "{line:<46}# {}", s.program.asm_at(ev.pc));
    }

    // Expected addresses (every full decode).
    let addrs = expected_addresses(&s.events, &s.overflow_before);
    let _ = writeln!(out, "\n[addresses]");
    address_lines(&mut out, &addrs);

    for text in s.configs {
        let cfg: Config = text.parse().unwrap_or_else(|e| panic!("{}: {e}", s.name));
        assert_eq!(cfg.to_string(), *text, "{}: config must be canonical", s.name);
        let trace = encode(&cfg, &s.events, &s.sync_before, &s.overflow_before).unwrap();
        let dec: Decoded = decode(&cfg, &trace.bytes, &img, None).unwrap_or_else(|e| panic!("{}: {e}", s.name));
        assert_eq!(dec.addrs, addrs, "{}: {cfg}: decoded addresses", s.name);

        let _ = writeln!(out, "\n[trace {cfg}]");
        let _ = writeln!(out, "{}", widths_line(&cfg));
        // The bit length through the END escape (spec 9.1 counts it so); the bytes add the
        // zero padding to the byte boundary.
        let end = dec.groups.last().expect("END").record;
        assert!(matches!(end.kind, RecordKind::Escape { kind: EscapeType::End, .. }));
        let prefix = if cfg.scheme.uses_sdc() { 1 + cfg.index_bits() + cfg.sl_bits() } else { cfg.sl_bits() };
        let content = end.offset + prefix as u64 + 2;
        assert_eq!(trace.bit_len, content.div_ceil(8) * 8);
        let _ = writeln!(
            out,
            "bits {content}   # through END; {} zero bit(s) of padding fill {} bytes",
            trace.bit_len - content,
            trace.bytes.len()
        );
        for chunk in trace.bytes.chunks(16) {
            let v: Vec<String> = chunk.iter().map(|b| format!("{b:02x}")).collect();
            let _ = writeln!(out, "bytes {}", v.join(" "));
        }
        wrap_comment(&mut out, "rec @OFFSET +LENGTH KIND FIELD | FIELD ...   # meaning");
        let mut shadow = Shadow::new(&cfg, &s.program);
        for g in &dec.groups {
            let r = &g.record;
            let widths = split_widths(&cfg, &r.kind, r.bits);
            let mut pos = r.offset;
            let fields: Vec<String> = widths
                .iter()
                .map(|&w| {
                    let f = bit_string(&trace.bytes, pos, w);
                    pos += w as u64;
                    f
                })
                .collect();
            let meaning = shadow.record(r, &g.elements, &dec.addrs, &widths);
            let _ = writeln!(
                out,
                "rec @{} +{} {:<14} {}   # {}",
                r.offset,
                r.bits,
                kind_name(&cfg, &r.kind),
                fields.join(" | "),
                meaning
            );
        }

        let _ = writeln!(out, "\n[decode {cfg}]");
        wrap_comment(&mut out, "decoder output from bit 0; the addresses are those of [addresses]");
        for el in dec.elements() {
            let _ = writeln!(out, "{}", element_line(&el));
        }

        for join in s.joins {
            let from = match join {
                Join::Byte(b) => *b,
                Join::AfterFirstMarker => {
                    let first = dec
                        .groups
                        .iter()
                        .find(|g| matches!(g.record.kind, RecordKind::Escape { kind: EscapeType::Sync, .. }))
                        .expect("a sync");
                    (first.record.offset + first.record.bits) / 8
                }
            };
            let mid = decode(&cfg, &trace.bytes, &img, Some(from)).unwrap_or_else(|e| panic!("{}: {e}", s.name));
            let _ = writeln!(out, "\n[decode {cfg} from-byte {from}]");
            wrap_comment(
                &mut out,
                &format!(
                    "decoder given bytes {from}.. of the trace: it searches the next sync marker and starts after it"
                ),
            );
            for el in mid.elements() {
                let _ = writeln!(out, "{}", element_line(&el));
            }
            address_lines(&mut out, &mid.addrs);
        }
    }
    out
}

//! Reads a .stv file on its own terms (docs/vectors-format.md) and checks it: the record
//! listing against the spec's field layouts (section 6 of docs/trace-format.md, with its
//! own AOLC-width, LVSA and prevSA tracking), then bytes, records, elements and addresses
//! against the model's Encoder and the sw-decoder.

use streamtrace_isa::{MemoryImage, ProgramImage};
use streamtrace_model::events_file::parse_event_line;
use streamtrace_model::format::EscapeType;
use streamtrace_model::{Config, IsaMode, RetireEvent, Scheme};
use streamtrace_sw_decoder::{RecordKind, StreamRecord, TraceElement};

use super::codec::{checksum, decode, encode, expected_addresses};

#[derive(Debug, Default)]
pub struct AddrList {
    pub count: Option<usize>,
    pub checksum: Option<u32>,
    pub addrs: Vec<u32>,
}

#[derive(Debug)]
pub struct Rec {
    pub line: usize,
    pub offset: u64,
    pub len: u64,
    pub kind: String,
    pub fields: Vec<String>,
}

#[derive(Debug, Default)]
pub struct TraceSec {
    pub config: String,
    pub widths: Option<String>,
    pub bits: Option<u64>,
    pub bytes: Vec<u8>,
    pub recs: Vec<Rec>,
}

#[derive(Debug, Default)]
pub struct DecodeSec {
    pub config: String,
    pub from_byte: Option<u64>,
    pub elements: Vec<(usize, TraceElement)>,
    pub addrs: AddrList,
}

/// One `mem` line: (line number, address, units as (value, size in bytes)).
pub type MemLine = (usize, u32, Vec<(u32, u32)>);

#[derive(Debug, Default)]
pub struct Stv {
    pub version: Option<u32>,
    pub name: Option<String>,
    pub configs: Vec<String>,
    pub sync_before: Vec<usize>,
    pub overflow_before: Vec<(usize, u64)>,
    pub image: Vec<MemLine>,
    pub events: Vec<RetireEvent>,
    pub addresses: AddrList,
    pub traces: Vec<TraceSec>,
    pub decodes: Vec<DecodeSec>,
}

enum Sec {
    Header,
    Image,
    Events,
    Addresses,
    Trace,
    Decode,
}

fn hex32(t: &str) -> Result<u32, String> {
    if t.len() != 8 {
        return Err(format!("'{t}' is not 8 hex digits"));
    }
    u32::from_str_radix(t, 16).map_err(|_| format!("'{t}' is not hex"))
}

fn num<T: std::str::FromStr>(t: &str) -> Result<T, String> {
    t.parse().map_err(|_| format!("'{t}' is not a number"))
}

fn addr_line(list: &mut AddrList, key: &str, toks: &[&str]) -> Result<bool, String> {
    match key {
        "count" => list.count = Some(num(toks.get(1).ok_or("count needs a value")?)?),
        "checksum" => list.checksum = Some(hex32(toks.get(1).ok_or("checksum needs a value")?)?),
        "addr" => {
            for t in &toks[1..] {
                list.addrs.push(hex32(t)?);
            }
        }
        _ => return Ok(false),
    }
    Ok(true)
}

fn parse_element(toks: &[&str]) -> Result<TraceElement, String> {
    let off =
        |t: &str| -> Result<u64, String> { num(t.strip_prefix('@').ok_or_else(|| format!("'{t}' is not @OFFSET"))?) };
    let last = toks.last().copied().unwrap_or("");
    Ok(match toks[0] {
        "stream" => {
            if toks.len() < 5 {
                return Err("stream SA SL RECORD @OFFSET".into());
            }
            let record = match &toks[3..toks.len() - 1] {
                ["lsp-hit"] => StreamRecord::LspHit,
                ["miss"] => StreamRecord::Miss { inferred: false },
                ["miss-inferred"] => StreamRecord::Miss { inferred: true },
                ["sdc-hit", si] => StreamRecord::SdcHit {
                    si: num(si.strip_prefix("si=").ok_or_else(|| format!("'{si}' is not si=N"))?)?,
                },
                other => return Err(format!("unknown stream record {other:?}")),
            };
            TraceElement::Stream { sa: hex32(toks[1])?, sl: num(toks[2])?, record, offset: off(last)? }
        }
        "exception" if toks.len() == 2 => TraceElement::Exception { offset: off(last)? },
        "sync" if toks.len() == 2 => TraceElement::Sync { offset: off(last)? },
        "end" if toks.len() == 2 => TraceElement::End { offset: off(last)? },
        "overflow" if toks.len() == 3 => TraceElement::Overflow { lost: num(toks[1])?, offset: off(last)? },
        other => return Err(format!("unknown element '{other}'")),
    })
}

pub fn parse(text: &str) -> Result<Stv, String> {
    let mut stv = Stv::default();
    let mut sec = Sec::Header;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let at = |e: String| format!("line {line}: {e}");
        let body = raw.split('#').next().unwrap_or("").trim();
        if body.is_empty() {
            continue;
        }
        if let Some(h) = body.strip_prefix('[') {
            let h = h.strip_suffix(']').ok_or_else(|| at("section header without ']'".into()))?;
            let toks: Vec<&str> = h.split_whitespace().collect();
            sec = match toks.as_slice() {
                ["image"] => Sec::Image,
                ["events"] => Sec::Events,
                ["addresses"] => Sec::Addresses,
                ["trace", c] => {
                    stv.traces.push(TraceSec { config: c.to_string(), ..Default::default() });
                    Sec::Trace
                }
                ["decode", c] => {
                    stv.decodes.push(DecodeSec { config: c.to_string(), ..Default::default() });
                    Sec::Decode
                }
                ["decode", c, "from-byte", b] => {
                    let from = num(b).map_err(at)?;
                    stv.decodes.push(DecodeSec { config: c.to_string(), from_byte: Some(from), ..Default::default() });
                    Sec::Decode
                }
                _ => return Err(at(format!("unknown section [{h}]"))),
            };
            continue;
        }
        let toks: Vec<&str> = body.split_whitespace().collect();
        let key = toks[0];
        match sec {
            Sec::Header => {
                if stv.version.is_none() {
                    if key != "stv" || toks.len() != 2 {
                        return Err(at("the first line must be 'stv VERSION'".into()));
                    }
                    stv.version = Some(num(toks[1]).map_err(at)?);
                    continue;
                }
                match key {
                    "name" => stv.name = Some(toks.get(1).ok_or_else(|| at("name needs a value".into()))?.to_string()),
                    "title" | "spec" | "about" => {}
                    "config" => {
                        stv.configs.push(toks.get(1).ok_or_else(|| at("config needs a value".into()))?.to_string())
                    }
                    "overflow-before" => {
                        let [_, i, lost] = toks.as_slice() else {
                            return Err(at("overflow-before needs an index and a count".into()));
                        };
                        stv.overflow_before.push((num(i).map_err(at)?, num(lost).map_err(at)?));
                    }
                    "request-sync-before" => {
                        stv.sync_before.push(num(toks.get(1).ok_or_else(|| at("needs an index".into()))?).map_err(at)?)
                    }
                    _ => return Err(at(format!("unknown header key '{key}'"))),
                }
            }
            Sec::Image => {
                if key != "mem" || toks.len() < 3 {
                    return Err(at("expected 'mem ADDRESS: UNIT...'".into()));
                }
                let a = toks[1].strip_suffix(':').ok_or_else(|| at("address must end with ':'".into()))?;
                let base = hex32(a).map_err(at)?;
                let mut units = Vec::new();
                for t in &toks[2..] {
                    let size = match t.len() {
                        8 => 4,
                        4 => 2,
                        _ => return Err(at(format!("unit '{t}' is neither 8 nor 4 hex digits"))),
                    };
                    let v = u32::from_str_radix(t, 16).map_err(|_| at(format!("unit '{t}' is not hex")))?;
                    units.push((v, size));
                }
                stv.image.push((line, base, units));
            }
            Sec::Events => match parse_event_line(raw).map_err(at)? {
                Some(ev) => stv.events.push(ev),
                None => unreachable!("non-empty body"),
            },
            Sec::Addresses => {
                if !addr_line(&mut stv.addresses, key, &toks).map_err(at)? {
                    return Err(at(format!("unexpected '{key}' in [addresses]")));
                }
            }
            Sec::Trace => {
                let t = stv.traces.last_mut().unwrap();
                match key {
                    "widths" => t.widths = Some(toks.join(" ")),
                    "bits" => {
                        t.bits = Some(num(toks.get(1).ok_or_else(|| at("bits needs a value".into()))?).map_err(at)?)
                    }
                    "bytes" => {
                        for b in &toks[1..] {
                            if b.len() != 2 {
                                return Err(at(format!("byte '{b}' is not 2 hex digits")));
                            }
                            t.bytes.push(u8::from_str_radix(b, 16).map_err(|_| at(format!("byte '{b}' is not hex")))?);
                        }
                    }
                    "rec" => {
                        if toks.len() < 5 {
                            return Err(at("expected 'rec @OFFSET +LENGTH KIND FIELDS'".into()));
                        }
                        let offset =
                            num(toks[1].strip_prefix('@').ok_or_else(|| at("offset needs '@'".into()))?).map_err(at)?;
                        let len =
                            num(toks[2].strip_prefix('+').ok_or_else(|| at("length needs '+'".into()))?).map_err(at)?;
                        let joined: String = toks[4..].concat();
                        let fields: Vec<String> = joined.split('|').map(str::to_string).collect();
                        if fields.iter().any(|f| f.is_empty() || f.chars().any(|c| c != '0' && c != '1')) {
                            return Err(at("fields must be non-empty binary strings separated by '|'".into()));
                        }
                        t.recs.push(Rec { line, offset, len, kind: toks[3].to_string(), fields });
                    }
                    _ => return Err(at(format!("unexpected '{key}' in [trace]"))),
                }
            }
            Sec::Decode => {
                let d = stv.decodes.last_mut().unwrap();
                if d.from_byte.is_some() && addr_line(&mut d.addrs, key, &toks).map_err(at)? {
                    continue;
                }
                d.elements.push((line, parse_element(&toks).map_err(at)?));
            }
        }
    }
    Ok(stv)
}

fn image_of(stv: &Stv) -> Result<MemoryImage, String> {
    let mut img = MemoryImage::new();
    for (line, base, units) in &stv.image {
        let bytes: Vec<u8> = units.iter().flat_map(|&(v, size)| v.to_le_bytes()[..size as usize].to_vec()).collect();
        img.add_segment(*base, bytes).map_err(|e| format!("line {line}: {e}"))?;
    }
    Ok(img)
}

fn check_addr_list(what: &str, list: &AddrList, expected: &[u32]) -> Result<(), String> {
    if list.count != Some(list.addrs.len()) {
        return Err(format!("{what}: count {:?} but {} addresses listed", list.count, list.addrs.len()));
    }
    if list.checksum != Some(checksum(&list.addrs)) {
        return Err(format!(
            "{what}: checksum {:08x?} but the addresses sum to {:08x}",
            list.checksum,
            checksum(&list.addrs)
        ));
    }
    if list.addrs != expected {
        let i =
            list.addrs.iter().zip(expected).position(|(a, b)| a != b).unwrap_or(list.addrs.len().min(expected.len()));
        return Err(format!(
            "{what}: addresses differ at index {i}: file {:08x?}, expected {:08x?} ({} vs {} addresses)",
            list.addrs.get(i),
            expected.get(i),
            list.addrs.len(),
            expected.len()
        ));
    }
    Ok(())
}

/// The widths line, from the configuration's fields and section 4 of the spec.
fn expected_widths_line(cfg: &Config) -> String {
    let sdc = matches!(cfg.scheme, Scheme::BSdc | Scheme::ESdc | Scheme::RSdc);
    let enhanced = matches!(cfg.scheme, Scheme::ESdc | Scheme::RSdc);
    let mut s = String::from("widths");
    if sdc {
        s += &format!(" k={}", (cfg.sets * cfg.ways).ilog2());
    }
    s += &format!(" slw={}", 32 - cfg.max_sl.leading_zeros());
    if enhanced {
        let low = if cfg.isa == IsaMode::ArmOnly { 2 } else { 0 };
        s += &format!(" u={} low={low} olc={}", cfg.u, cfg.olc_init);
    }
    s
}

fn val(f: &str) -> u64 {
    u64::from_str_radix(f, 2).unwrap()
}

/// State the checker keeps while reading records: AOLC width and monitor, LVSA, prevSA.
struct Track {
    s: u32,
    m: u32,
    lvsa: u32,
    prev_sa: u32,
}

/// Section 6 field layouts: check one record's fields and return the record kind the
/// decoder must report and how many stream elements it yields.
fn check_record(cfg: &Config, r: &Rec, t: &mut Track) -> Result<(RecordKind, u32), String> {
    let scheme = cfg.scheme;
    let sdc = matches!(scheme, Scheme::BSdc | Scheme::ESdc | Scheme::RSdc);
    let enhanced = matches!(scheme, Scheme::ESdc | Scheme::RSdc);
    let k = if sdc { (cfg.sets * cfg.ways).ilog2() } else { 0 };
    let slw = 32 - cfg.max_sl.leading_zeros();
    let low = if cfg.isa == IsaMode::ArmOnly { 2 } else { 0 };
    let u = cfg.u;
    let f = &r.fields;
    let widths: Vec<u32> = f.iter().map(|x| x.len() as u32).collect();
    let want = |w: &[u32]| -> Result<(), String> {
        if widths == w {
            Ok(())
        } else {
            Err(format!("{}: field widths {widths:?}, the spec says {w:?}", r.kind))
        }
    };
    let zeros = |x: &str| x.chars().all(|c| c == '0');
    let sl_ok = |x: &str| -> Result<u32, String> {
        let sl = val(x) as u32;
        if sl == 0 || sl > cfg.max_sl {
            Err(format!("SL {sl} outside 1..=maxSL"))
        } else {
            Ok(sl)
        }
    };
    // The miss/escape prefix: '0' 0^k SL (SDC schemes) or SL (baselines).
    let prefix: Vec<u32> = if sdc { vec![1, k, slw] } else { vec![slw] };
    let np = prefix.len();
    let prefix_ok = |escape: bool| -> Result<(), String> {
        if sdc && (f[0] != "0" || !zeros(&f[1])) {
            return Err(format!("{}: an SDC miss/escape starts with '0' and SI = 0", r.kind));
        }
        if escape != zeros(&f[np - 1]) {
            return Err(format!("{}: SL field {} (0 marks an escape)", r.kind, f[np - 1]));
        }
        Ok(())
    };
    let with = |extra: &[u32]| -> Vec<u32> { [prefix.as_slice(), extra].concat() };
    let escape = |ty: &str, extra: &[u32]| -> Result<(), String> {
        want(&with(&[&[2], extra].concat()))?;
        prefix_ok(true)?;
        if f[np] != ty {
            return Err(format!("{}: escape type must be {ty}", r.kind));
        }
        Ok(())
    };
    let pad_after = |bits_before: u64| -> u32 { ((8 - (r.offset + bits_before) % 8) % 8) as u32 };
    let marker = format!("{}10000000", "0".repeat(120));
    let kind = match r.kind.as_str() {
        "lsp-hit" if scheme == Scheme::BSdc => {
            want(&[1])?;
            if f[0] != "1" {
                return Err("lsp-hit is '1'".into());
            }
            (RecordKind::LspHit, 1)
        }
        "lsp-run" if enhanced => {
            want(&[1, t.s])?;
            if f[0] != "1" {
                return Err("lsp-run starts with '1'".into());
            }
            let n = val(&f[1]) as u32 + 1;
            let kind = RecordKind::LspRun { n, width: t.s };
            // Section 5.4, monitor rule.
            if n == 1 << t.s {
                t.m = (t.m + 3).min(15);
            } else if n < 1 << (t.s - 1) {
                t.m = t.m.saturating_sub(1);
            }
            if t.m == 15 && t.s < cfg.olc_max {
                t.s += 1;
                t.m = 8;
            } else if t.m == 0 && t.s > cfg.olc_min {
                t.s -= 1;
                t.m = 8;
            }
            (kind, n)
        }
        "lsp-hit" | "lsp-run" => return Err(format!("{} is not a record of {}", r.kind, scheme.name())),
        "sdc-hit" if sdc => {
            want(&[1, k])?;
            let si = val(&f[1]) as u32;
            if f[0] != "0" || si == 0 {
                return Err("sdc-hit is '0' then a non-zero SI".into());
            }
            (RecordKind::SdcHit { si }, 1)
        }
        "miss-inferred" if scheme != Scheme::FBase => {
            want(&prefix)?;
            prefix_ok(false)?;
            (RecordKind::MissInferred { sl: sl_ok(&f[np - 1])? }, 1)
        }
        "miss-addr" if matches!(scheme, Scheme::BSdc | Scheme::FBase | Scheme::Base) => {
            want(&with(&[32]))?;
            prefix_ok(false)?;
            let addr = val(&f[np]) as u32;
            (RecordKind::MissAddress { sl: sl_ok(&f[np - 1])?, addr, lvsa_hit: None }, 1)
        }
        "miss-lvsa-hit" | "miss-lvsa-miss" if enhanced => {
            let hit = r.kind == "miss-lvsa-hit";
            want(&with(&[1, if hit { 32 - u - low } else { 32 - low }]))?;
            prefix_ok(false)?;
            if f[3] != if hit { "1" } else { "0" } {
                return Err(format!("{}: L starts with '{}'", r.kind, hit as u8));
            }
            let field = (val(&f[4]) as u32) << low;
            let addr = if hit { (t.lvsa << (32 - u)) | field } else { field };
            if scheme == Scheme::ESdc {
                t.lvsa = addr >> (32 - u);
            }
            (RecordKind::MissAddress { sl: sl_ok(&f[2])?, addr, lvsa_hit: Some(hit) }, 1)
        }
        "miss-nexs" if scheme == Scheme::Nexs => {
            let groups = (f.len() - 1) / 2;
            if f.len() % 2 != 1 || !(1..=6).contains(&groups) {
                return Err("miss-nexs: SL then 1 to 6 (header, data) pairs".into());
            }
            want(&[&[slw][..], &[2, 6].repeat(groups)].concat())?;
            let mut d = 0u64;
            for g in 0..groups {
                let header = &f[1 + 2 * g];
                let expect = if g + 1 == groups { "01" } else { "00" };
                if header != expect {
                    return Err(format!("miss-nexs: group {g} header {header}, expected {expect}"));
                }
                d |= val(&f[2 + 2 * g]) << (6 * g);
            }
            if d > u32::MAX as u64 || (groups > 1 && (d >> (6 * (groups - 1))) == 0) {
                return Err(format!("miss-nexs: difference {d:#x} in {groups} groups is not minimal or too wide"));
            }
            let addr = d as u32 ^ t.prev_sa;
            (RecordKind::MissAddress { sl: sl_ok(&f[0])?, addr, lvsa_hit: None }, 1)
        }
        "end" => {
            let before: u32 = with(&[2]).iter().sum();
            let pad = pad_after(before as u64);
            let extra: Vec<u32> = if pad > 0 { vec![pad] } else { vec![] };
            escape("00", &extra)?;
            if pad > 0 && !zeros(&f[np + 1]) {
                return Err("END padding must be zero".into());
            }
            (RecordKind::Escape { kind: EscapeType::End, lost: 0 }, 0)
        }
        "exception" => {
            escape("10", &[])?;
            (RecordKind::Escape { kind: EscapeType::Exception, lost: 0 }, 0)
        }
        "sync" | "overflow" => {
            let sync = r.kind == "sync";
            let lost_bits = if sync { 0 } else { 32 };
            let before: u32 = with(&[2]).iter().sum::<u32>() + lost_bits;
            let pad = pad_after(before as u64);
            let mut extra = Vec::new();
            if !sync {
                extra.push(32);
            }
            if pad > 0 {
                extra.push(pad);
            }
            extra.push(128);
            escape(if sync { "01" } else { "11" }, &extra)?;
            if pad > 0 && !zeros(&f[f.len() - 2]) {
                return Err("padding before the sync marker must be zero".into());
            }
            if f.last().unwrap() != &marker {
                return Err("the sync marker is 15 bytes 0x00 then 0x80".into());
            }
            let lost = if sync { 0 } else { val(&f[np + 1]) as u32 };
            let kind = if sync { EscapeType::Sync } else { EscapeType::Overflow };
            *t = Track { s: cfg.olc_init, m: 8, lvsa: 0, prev_sa: 0 };
            (RecordKind::Escape { kind, lost }, 0)
        }
        other => return Err(format!("unknown record kind '{other}' for {}", scheme.name())),
    };
    Ok(kind)
}

fn bits_at(bytes: &[u8], offset: u64, n: u64) -> Option<String> {
    (offset..offset + n)
        .map(|i| bytes.get((i / 8) as usize).map(|b| if b >> (7 - i % 8) & 1 == 1 { '1' } else { '0' }))
        .collect()
}

fn check_config(stv: &Stv, text: &str, img: &MemoryImage) -> Result<(), String> {
    let cfg: Config = text.parse().map_err(|e| format!("{e}"))?;
    if cfg.to_string() != text {
        return Err(format!("config '{text}' is not in canonical form ('{cfg}')"));
    }
    let traces: Vec<&TraceSec> = stv.traces.iter().filter(|t| t.config == text).collect();
    let [t] = traces.as_slice() else { return Err(format!("{} [trace {text}] sections (want 1)", traces.len())) };
    let full: Vec<&DecodeSec> = stv.decodes.iter().filter(|d| d.config == text && d.from_byte.is_none()).collect();
    let [d] = full.as_slice() else { return Err(format!("{} [decode {text}] sections (want 1)", full.len())) };

    // 1. The trace: widths, bit length and bytes as the model's encoder produces them.
    if t.widths.as_deref() != Some(expected_widths_line(&cfg).as_str()) {
        return Err(format!("widths line {:?}, expected '{}'", t.widths, expected_widths_line(&cfg)));
    }
    // `bits` counts through the END escape; the bytes add END's zero padding (spec 1).
    let bits = t.bits.ok_or("no 'bits' line")?;
    if bits.div_ceil(8) != t.bytes.len() as u64 {
        return Err(format!("bits {bits} but {} bytes", t.bytes.len()));
    }
    let padded = t.bytes.len() as u64 * 8;
    let enc = encode(&cfg, &stv.events, &stv.sync_before, &stv.overflow_before)?;
    if enc.bit_len != padded {
        return Err(format!("the encoder produces {} bits, the file's bytes hold {padded}", enc.bit_len));
    }
    if enc.bytes != t.bytes {
        let i = enc.bytes.iter().zip(&t.bytes).position(|(a, b)| a != b).unwrap_or(0);
        return Err(format!(
            "trace bytes differ at byte {i}: encoder {:02x?}, file {:02x?}",
            enc.bytes.get(i),
            t.bytes.get(i)
        ));
    }

    // 2. The record listing on its own: tiling, bits, field layouts, per-record elements.
    let mut pos = 0u64;
    let mut track = Track { s: cfg.olc_init, m: 8, lvsa: 0, prev_sa: 0 };
    let mut expected = Vec::new();
    let mut els = d.elements.iter().peekable();
    for r in &t.recs {
        let at = |e: String| format!("line {}: {e}", r.line);
        if r.offset != pos {
            return Err(at(format!("record at @{} but the previous one ends at bit {pos}", r.offset)));
        }
        let sum: u64 = r.fields.iter().map(|f| f.len() as u64).sum();
        if sum != r.len {
            return Err(at(format!("length +{} but the fields hold {sum} bits", r.len)));
        }
        let concat: String = r.fields.concat();
        if bits_at(&t.bytes, r.offset, r.len).as_deref() != Some(concat.as_str()) {
            return Err(at("the fields are not the trace bits at this offset".into()));
        }
        pos += r.len;
        let (kind, streams) = check_record(&cfg, r, &mut track).map_err(at)?;
        expected.push((r.offset, r.len, kind));
        // The elements this record yields, with the record's offset.
        if streams == 0 {
            let want = match kind {
                RecordKind::Escape { kind: EscapeType::End, .. } => TraceElement::End { offset: r.offset },
                RecordKind::Escape { kind: EscapeType::Sync, .. } => TraceElement::Sync { offset: r.offset },
                RecordKind::Escape { kind: EscapeType::Exception, .. } => TraceElement::Exception { offset: r.offset },
                RecordKind::Escape { lost, .. } => TraceElement::Overflow { lost, offset: r.offset },
                _ => unreachable!(),
            };
            match els.next() {
                Some((_, e)) if *e == want => {}
                other => return Err(at(format!("[decode {text}] should list {want:?} here, has {other:?}"))),
            }
            continue;
        }
        for _ in 0..streams {
            let Some((eline, TraceElement::Stream { sa, sl, record, offset })) = els.next() else {
                return Err(at(format!("[decode {text}] lacks a stream element for this record")));
            };
            let bad = |why: &str| {
                Err(format!("line {eline}: stream element disagrees with record at line {}: {why}", r.line))
            };
            if *offset != r.offset {
                return bad("offset");
            }
            let ok = match (&kind, record) {
                (RecordKind::LspHit | RecordKind::LspRun { .. }, StreamRecord::LspHit) => true,
                (RecordKind::SdcHit { si }, StreamRecord::SdcHit { si: s2 }) => si == s2,
                (RecordKind::MissInferred { sl: l }, StreamRecord::Miss { inferred: true }) => l == sl,
                (RecordKind::MissAddress { sl: l, addr, .. }, StreamRecord::Miss { inferred: false }) => {
                    l == sl && addr == sa
                }
                _ => false,
            };
            if !ok {
                return bad("kind, SL or address");
            }
            if cfg.scheme == Scheme::RSdc {
                track.lvsa = sa >> (32 - cfg.u);
            }
            track.prev_sa = *sa;
        }
    }
    if pos != padded {
        return Err(format!("records end at bit {pos}, the bytes hold {padded}"));
    }
    let Some((end_at, _, RecordKind::Escape { kind: EscapeType::End, .. })) = expected.last() else {
        return Err("the last record must be END".into());
    };
    let prefix = if matches!(cfg.scheme, Scheme::BSdc | Scheme::ESdc | Scheme::RSdc) {
        1 + (cfg.sets * cfg.ways).ilog2() + (32 - cfg.max_sl.leading_zeros())
    } else {
        32 - cfg.max_sl.leading_zeros()
    };
    if end_at + prefix as u64 + 2 != bits {
        return Err(format!("bits {bits}, but the END escape ends at bit {}", end_at + prefix as u64 + 2));
    }
    if let Some((line, e)) = els.next() {
        return Err(format!("line {line}: element {e:?} belongs to no record"));
    }

    // 3. The sw-decoder must report exactly these records, elements and addresses.
    let dec = decode(&cfg, &t.bytes, img, None)?;
    let got: Vec<(u64, u64, RecordKind)> = dec.records().iter().map(|r| (r.offset, r.bits, r.kind)).collect();
    if got != expected {
        let i = got.iter().zip(&expected).position(|(a, b)| a != b).unwrap_or(got.len().min(expected.len()));
        return Err(format!("record {i}: decoder {:?}, file {:?}", got.get(i), expected.get(i)));
    }
    let file_els: Vec<TraceElement> = d.elements.iter().map(|e| e.1).collect();
    if dec.elements() != file_els {
        return Err(format!("[decode {text}]: the decoder's elements differ from the file's"));
    }
    check_addr_list(&format!("{text}: decoded addresses vs [addresses]"), &stv.addresses, &dec.addrs)?;

    // 4. Decoders joining mid-trace.
    for m in stv.decodes.iter().filter(|m| m.config == text && m.from_byte.is_some()) {
        let from = m.from_byte.unwrap();
        let dec = decode(&cfg, &t.bytes, img, Some(from))?;
        let file_els: Vec<TraceElement> = m.elements.iter().map(|e| e.1).collect();
        if dec.elements() != file_els {
            return Err(format!("[decode {text} from-byte {from}]: the decoder's elements differ from the file's"));
        }
        check_addr_list(&format!("[decode {text} from-byte {from}]"), &m.addrs, &dec.addrs)?;
    }
    Ok(())
}

/// Parse and check one file; `name` is its file stem.
pub fn verify(name: &str, text: &str) -> Result<(), String> {
    let stv = parse(text)?;
    if stv.version != Some(1) {
        return Err(format!("format version {:?}, this checker reads 1", stv.version));
    }
    if stv.name.as_deref() != Some(name) {
        return Err(format!("name {:?} does not match the file name {name}", stv.name));
    }
    if stv.configs.is_empty() {
        return Err("no config".into());
    }
    for c in stv.traces.iter().map(|t| &t.config).chain(stv.decodes.iter().map(|d| &d.config)) {
        if !stv.configs.contains(c) {
            return Err(format!("section for config '{c}' which the header does not list"));
        }
    }
    let img = image_of(&stv)?;
    // Events agree with the image and the shared classifier, and with [addresses].
    for (i, ev) in stv.events.iter().enumerate() {
        let insn = if ev.thumb { img.read_u16(ev.pc).map(u32::from) } else { img.read_u32(ev.pc) };
        if insn != Some(ev.insn) {
            return Err(format!("event {i}: instruction {:08x} but the image holds {insn:08x?}", ev.insn));
        }
        let class = img.classify(ev.iw_addr()).map(|c| c.class);
        if class != Some(ev.class) {
            return Err(format!("event {i}: class {} but the classifier says {class:?}", ev.class));
        }
    }
    if stv.sync_before.iter().chain(stv.overflow_before.iter().map(|o| &o.0)).any(|&i| i > stv.events.len()) {
        return Err("request-sync-before or overflow-before past the last event".into());
    }
    if stv.overflow_before.iter().any(|&(i, lost)| lost > i as u64) {
        return Err("overflow-before: more instructions lost than events before it".into());
    }
    let iw = expected_addresses(&stv.events, &stv.overflow_before);
    check_addr_list("[addresses] vs the events", &stv.addresses, &iw)?;
    for c in &stv.configs {
        check_config(&stv, c, &img).map_err(|e| format!("{c}: {e}"))?;
    }
    Ok(())
}

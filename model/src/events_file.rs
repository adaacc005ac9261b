//! Text file of retire events (docs/events-format.md): one event per line,
//! `PC INSN STATE CLASS TAKEN NEXT_PC [exc] [c=CYCLE]`, `#` starts a comment.

use std::io::BufRead;

use thiserror::Error;

use crate::event::{BranchClass, RetireEvent};

#[derive(Debug, Error)]
pub enum EventsFileError {
    #[error("{source_name}:{line}: {reason}")]
    Parse { source_name: String, line: u64, reason: String },
    #[error("{source_name}: {err}")]
    Io { source_name: String, err: std::io::Error },
}

/// Longest piece of input an error message quotes (characters).
const QUOTE_CHARS: usize = 80;

/// `tok` for an error message: whole up to `QUOTE_CHARS` (80) characters, else its start, an
/// ellipsis and its length, so a huge field cannot flood the terminal.
pub fn quote(tok: &str) -> String {
    match tok.char_indices().nth(QUOTE_CHARS) {
        None => tok.to_string(),
        Some((end, _)) => format!("{}... ({} bytes)", &tok[..end], tok.len()),
    }
}

fn hex(tok: &str, what: &str) -> Result<u32, String> {
    let t = tok.strip_prefix("0x").or_else(|| tok.strip_prefix("0X")).unwrap_or(tok);
    u32::from_str_radix(t, 16).map_err(|_| format!("{what} '{}' is not a 32-bit hex number", quote(tok)))
}

/// Parse one line; `Ok(None)` for blank and comment lines.
pub fn parse_event_line(line: &str) -> Result<Option<RetireEvent>, String> {
    let body = line.split('#').next().unwrap_or("").trim();
    if body.is_empty() {
        return Ok(None);
    }
    let toks: Vec<&str> = body.split_whitespace().collect();
    if toks.len() < 6 {
        return Err(format!("expected at least 6 fields (PC INSN STATE CLASS TAKEN NEXT_PC), found {}", toks.len()));
    }
    let pc = hex(toks[0], "PC")?;
    let insn = hex(toks[1], "instruction")?;
    let thumb = match toks[2] {
        "A" | "a" => false,
        "T" | "t" => true,
        s => return Err(format!("state '{}' is not A or T", quote(s))),
    };
    let class: BranchClass = toks[3].parse().map_err(|_| {
        format!("unknown branch class '{}' (expected none, dcond, duncond, icond, iuncond or ret)", quote(toks[3]))
    })?;
    let taken = match toks[4] {
        "0" => false,
        "1" => true,
        s => return Err(format!("taken '{}' is not 0 or 1", quote(s))),
    };
    let next_pc = hex(toks[5], "next PC")?;
    let mut ev = RetireEvent { pc, insn, thumb, class, taken, next_pc, exception: false, cycle: 0 };
    for extra in &toks[6..] {
        if *extra == "exc" {
            ev.exception = true;
        } else if let Some(c) = extra.strip_prefix("c=") {
            ev.cycle = c.parse().map_err(|_| format!("cycle '{}' is not a number", quote(c)))?;
        } else {
            return Err(format!("unknown field '{}' (expected 'exc' or 'c=CYCLE')", quote(extra)));
        }
    }
    Ok(Some(ev))
}

/// Format one event as a line (without newline).
pub fn format_event_line(ev: &RetireEvent) -> String {
    let mut line = Vec::with_capacity(64);
    push_event_line(ev, &mut line);
    // Only ASCII was pushed.
    String::from_utf8(line).unwrap_or_default()
}

/// Append one event's line (without newline) to `out`: the writer of `run --events-out`,
/// byte by byte because `format!` per event made that file the run's bottleneck.
pub fn push_event_line(ev: &RetireEvent, out: &mut Vec<u8>) {
    push_hex8(out, ev.pc);
    out.push(b' ');
    push_hex8(out, ev.insn);
    out.extend_from_slice(if ev.thumb { b" T " } else { b" A " });
    out.extend_from_slice(ev.class.name().as_bytes());
    out.extend_from_slice(if ev.taken { b" 1 " } else { b" 0 " });
    push_hex8(out, ev.next_pc);
    if ev.exception {
        out.extend_from_slice(b" exc");
    }
    if ev.cycle != 0 {
        let _ = std::io::Write::write_fmt(out, format_args!(" c={}", ev.cycle));
    }
}

/// `%08x` of `v`: the eight nibbles spread into the bytes of a word and turned into digits
/// all at once (address lists run to hundreds of millions of lines).
#[inline]
pub fn hex8(v: u32) -> [u8; 8] {
    let mut x = v as u64;
    x = (x | x << 16) & 0x0000_FFFF_0000_FFFF;
    x = (x | x << 8) & 0x00FF_00FF_00FF_00FF;
    // Byte i now holds nibble i (least significant first).
    x = (x | x << 4) & 0x0F0F_0F0F_0F0F_0F0F;
    // Digits 10-15 carry into bit 4 when 6 is added: those get 'a' - '0' - 10 more.
    let letters = ((x + 0x0606_0606_0606_0606) >> 4) & 0x0101_0101_0101_0101;
    (x + 0x3030_3030_3030_3030 + letters * (b'a' - b'0' - 10) as u64).to_be_bytes()
}

/// `%08x` of `v`, appended.
#[inline]
pub fn push_hex8(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&hex8(v));
}

/// Append each address as a 32-bit little-endian word (the `binary` address-list form).
pub fn push_address_words(out: &mut Vec<u8>, addrs: &[u32]) {
    let start = out.len();
    out.resize(start + 4 * addrs.len(), 0);
    for (dst, &a) in out[start..].chunks_exact_mut(4).zip(addrs) {
        dst.copy_from_slice(&a.to_le_bytes());
    }
}

/// Append one line per instruction address (interworking form: bit 0 set for Thumb) in the
/// form `run --pc-trace` and `decode -o` write: `%08x A` / `%08x T` when `annotated`, else
/// `%08x`.
pub fn push_address_lines(out: &mut Vec<u8>, addrs: &[u32], annotated: bool) {
    // Fixed-width lines written in place: no per-line capacity checks.
    fn lines<const W: usize>(out: &mut Vec<u8>, addrs: &[u32], line: impl Fn(u32) -> [u8; W]) {
        let start = out.len();
        out.resize(start + W * addrs.len(), 0);
        for (dst, &a) in out[start..].chunks_exact_mut(W).zip(addrs) {
            dst.copy_from_slice(&line(a));
        }
    }
    if annotated {
        lines::<11>(out, addrs, |a| {
            let mut l = [0u8; 11];
            l[..8].copy_from_slice(&hex8(a & !1));
            l[8..].copy_from_slice(if a & 1 != 0 { b" T\n" } else { b" A\n" });
            l
        });
    } else {
        lines::<9>(out, addrs, |a| {
            let mut l = [b'\n'; 9];
            l[..8].copy_from_slice(&hex8(a & !1));
            l
        });
    }
}

/// Read every event of a reader; errors name `source_name` and the line number.
pub fn read_events<R: BufRead>(reader: R, source_name: &str) -> Result<Vec<RetireEvent>, EventsFileError> {
    let mut out = Vec::new();
    for (i, line) in reader.lines().enumerate() {
        let line = line.map_err(|err| EventsFileError::Io { source_name: source_name.to_string(), err })?;
        match parse_event_line(&line) {
            Ok(Some(ev)) => out.push(ev),
            Ok(None) => {}
            Err(reason) => {
                return Err(EventsFileError::Parse { source_name: source_name.to_string(), line: i as u64 + 1, reason })
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_and_address_lines_match_format() {
        // Every nibble value in every position, and a pseudo-random sweep.
        let mut v = 0x0123_4567u32;
        let mut samples = vec![0, u32::MAX, 0x89ab_cdef, 0xfedc_ba98, 0x0a0a_0a0a, 0x9f9f_9f9f];
        for _ in 0..100_000 {
            v = v.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            samples.push(v);
        }
        for &v in &samples {
            assert_eq!(hex8(v), *format!("{v:08x}").as_bytes(), "{v:#x}");
        }
        let mut out = Vec::new();
        push_address_lines(&mut out, &samples[..4], true);
        push_address_lines(&mut out, &[0x8001, 0x8000], false);
        let want = samples[..4].iter().map(|&a| format!("{:08x} {}\n", a & !1, if a & 1 != 0 { 'T' } else { 'A' })).collect::<String>()
            + "00008000\n00008000\n";
        assert_eq!(String::from_utf8(out).unwrap(), want);
        let mut words = vec![7];
        push_address_words(&mut words, &[0x0102_0304, 0x8001]);
        assert_eq!(words, [7, 4, 3, 2, 1, 1, 0x80, 0, 0]);
    }

    #[test]
    fn roundtrip_and_errors() {
        let ev = RetireEvent {
            pc: 0x8000,
            insn: 0xEAFFFFFE,
            thumb: false,
            class: BranchClass::DirectUncond,
            taken: true,
            next_pc: 0x8000,
            exception: true,
            cycle: 42,
        };
        let line = format_event_line(&ev);
        assert_eq!(line, "00008000 eafffffe A duncond 1 00008000 exc c=42");
        assert_eq!(parse_event_line(&line), Ok(Some(ev)));
        assert_eq!(parse_event_line("  # comment"), Ok(None));
        // Every field at extreme values, against the printf form of the spec.
        for (pc, insn, thumb, class, taken, next_pc, exception, cycle) in [
            (0u32, 0u32, true, BranchClass::Return, false, 0u32, false, 0u64),
            (u32::MAX, 0x0123_4567, false, BranchClass::IndirectCond, true, 0xABCD_EF01, true, u64::MAX),
            (0x1000_0002, 0x4770, true, BranchClass::None, false, 0x1000_0005, false, 1),
        ] {
            let ev = RetireEvent { pc, insn, thumb, class, taken, next_pc, exception, cycle };
            let mut want = format!("{pc:08x} {insn:08x} {} {class} {} {next_pc:08x}", if thumb { 'T' } else { 'A' }, taken as u8);
            if exception {
                want.push_str(" exc");
            }
            if cycle != 0 {
                want.push_str(&format!(" c={cycle}"));
            }
            assert_eq!(format_event_line(&ev), want);
            assert_eq!(parse_event_line(&want), Ok(Some(ev)));
        }
        let text = "00008000 e1a00000 A none 0 00008004\n00008004 e1a00000 X none 0 00008008\n";
        let err = read_events(text.as_bytes(), "ev.txt").unwrap_err().to_string();
        assert_eq!(err, "ev.txt:2: state 'X' is not A or T");
        for (bad, needle) in [
            ("1 2 A none 0", "at least 6 fields"),
            ("zz 0 A none 0 4", "PC 'zz'"),
            ("0 0 A jump 0 4", "unknown branch class 'jump'"),
            ("0 0 A none 2 4", "taken '2'"),
            ("0 0 A none 0 4 boom", "unknown field 'boom'"),
            ("0 0 A none 0 4 c=x", "cycle 'x'"),
        ] {
            assert!(parse_event_line(bad).unwrap_err().contains(needle), "{bad}");
        }
        // A huge field is quoted in part (issue 22).
        let huge = "Z".repeat(1 << 20);
        let err = parse_event_line(&format!("{huge} 0 A none 0 4")).unwrap_err();
        assert!(err.len() < 200 && err.contains("(1048576 bytes)"), "{}", &err[..200.min(err.len())]);
    }
}

//! Text file of retire events (docs/events-format.md): one event per line,
//! `PC INSN STATE CLASS TAKEN NEXT_PC [exc] [c=CYCLE]`, `#` starts a comment.

use std::fmt::Write as _;
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

/// `tok` for an error message: whole up to [`QUOTE_CHARS`] characters, else its start, an
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
    let mut s = format!(
        "{:08x} {:08x} {} {} {} {:08x}",
        ev.pc,
        ev.insn,
        if ev.thumb { 'T' } else { 'A' },
        ev.class,
        ev.taken as u8,
        ev.next_pc
    );
    if ev.exception {
        s.push_str(" exc");
    }
    if ev.cycle != 0 {
        let _ = write!(s, " c={}", ev.cycle);
    }
    s
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

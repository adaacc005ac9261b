//! Shared helpers of the Thumb executor tests: a small machine, single-instruction
//! execution, and the objdump listings of `tests/data/thumb_*.s` (real binutils encodings).
#![allow(dead_code)]

use streamtrace_sim::{Bus, Flow, Machine, MemAccess, Memory, Semihost, SimError, StepOutcome};

/// Code region (the listings are linked at 0x8000).
pub const CODE: u32 = 0x8000;
pub const CODE_LEN: u64 = 0x8000;
/// Stack region [STACK_TOP - 0x1_0000, STACK_TOP).
pub const STACK_TOP: u32 = 0x2_0000;
/// One mapped data page; DATA + 0x1000 is unmapped.
pub const DATA: u32 = 0x3_0000;
/// Unmapped address.
pub const UNMAPPED: u32 = 0x5000_0000;

/// A machine with code, stack and data regions, in Thumb state at `CODE`.
pub fn machine() -> Machine {
    let mut mem = Memory::new();
    mem.map_region(CODE, CODE_LEN);
    mem.map_region(STACK_TOP - 0x1_0000, 0x1_0000);
    mem.map_region(DATA, 0x1000);
    let mut m = Machine::new(mem, Semihost::default());
    m.cpu.thumb = true;
    m.cpu.r[15] = CODE;
    m.cpu.r[13] = STACK_TOP;
    m
}

/// Write halfwords at `addr`.
pub fn load(m: &mut Machine, addr: u32, code: &[u16]) {
    for (i, &h) in code.iter().enumerate() {
        m.mem.write16(addr + 2 * i as u32, h).unwrap();
    }
}

/// Execute `hw` at the current PC directly through the executor (no PC advance).
pub fn exec(m: &mut Machine, hw: u16) -> Result<Flow, SimError> {
    exec_logged(m, hw).0
}

/// Like [`exec`], also returning the logged accesses.
pub fn exec_logged(m: &mut Machine, hw: u16) -> (Result<Flow, SimError>, Vec<MemAccess>) {
    let mut log = Vec::new();
    let r = {
        let mut bus = Bus::new(&mut m.mem, &mut log, true);
        streamtrace_sim::thumb::execute(&mut m.cpu, &mut bus, hw)
    };
    (r, log)
}

/// Write `hw` at the PC and retire it through the machine loop.
pub fn step(m: &mut Machine, hw: u16) -> Result<StepOutcome, SimError> {
    let pc = m.cpu.r[15];
    m.mem.write16(pc, hw).unwrap();
    m.step(&mut streamtrace_sim::NoHook)
}

/// Flags as a string "NZCV" with '-' for clear bits.
pub fn flags(m: &Machine) -> String {
    let c = &m.cpu;
    [(c.n, 'N'), (c.z, 'Z'), (c.c, 'C'), (c.v, 'V')].iter().map(|&(f, ch)| if f { ch } else { '-' }).collect()
}

pub fn set_flags(m: &mut Machine, s: &str) {
    m.cpu.n = s.contains('N');
    m.cpu.z = s.contains('Z');
    m.cpu.c = s.contains('C');
    m.cpu.v = s.contains('V');
}

/// One instruction of an objdump listing.
#[derive(Clone, Debug)]
pub struct Line {
    pub addr: u32,
    /// One halfword, two for a BL/BLX pair; empty for an ARM word.
    pub hws: Vec<u16>,
    /// Disassembly with whitespace collapsed and the `@` comment removed.
    pub text: String,
}

pub const FORMATS_LST: &str = include_str!("../data/thumb_formats.lst");
pub const FARCALL_LST: &str = include_str!("../data/thumb_farcall.lst");
pub const PROGRAMS_LST: &str = include_str!("../data/thumb_programs.lst");

/// Write every Thumb instruction of a listing at its address.
pub fn load_listing(m: &mut Machine, lst: &str) {
    for l in parse_listing(lst) {
        load(m, l.addr, &l.hws);
    }
}

/// Address of the symbol `name` in a listing (`00008000 <name>:`).
pub fn symbol(lst: &str, name: &str) -> u32 {
    let tag = format!(" <{name}>:");
    let l = lst.lines().find(|l| l.ends_with(&tag)).unwrap_or_else(|| panic!("no symbol {name}"));
    u32::from_str_radix(l.split(' ').next().unwrap(), 16).unwrap()
}

pub fn parse_listing(lst: &str) -> Vec<Line> {
    let mut out = Vec::new();
    for line in lst.lines() {
        let mut cols = line.split('\t');
        let Some(addr) = cols.next().and_then(|a| a.trim().strip_suffix(':')) else { continue };
        let Ok(addr) = u32::from_str_radix(addr, 16) else { continue };
        let Some(enc) = cols.next() else { continue };
        let words: Vec<&str> = enc.split_whitespace().collect();
        let hws = if words.iter().all(|w| w.len() == 4) {
            words.iter().map(|w| u16::from_str_radix(w, 16).unwrap()).collect()
        } else {
            Vec::new()
        };
        let rest: Vec<&str> = cols.collect();
        let text = rest.join(" ");
        let text = text.split('@').next().unwrap();
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        out.push(Line { addr, hws, text });
    }
    out
}

/// The listing line whose disassembly is exactly `text` (whitespace-normalised).
pub fn line(lst: &str, text: &str) -> Line {
    parse_listing(lst).into_iter().find(|l| l.text == text).unwrap_or_else(|| panic!("`{text}` is not in the listing"))
}

/// The single halfword of `text` in thumb_formats.lst.
pub fn enc(text: &str) -> u16 {
    let l = line(FORMATS_LST, text);
    assert_eq!(l.hws.len(), 1, "{text} is not a 16-bit Thumb instruction");
    l.hws[0]
}

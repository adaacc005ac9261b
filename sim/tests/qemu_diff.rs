//! Differential test of the core model against QEMU (DESIGN.md "How correctness is known":
//! the simulator's retired PC sequence equals QEMU's on every test program).
//!
//! For each program of testbenches/programs/programs.json, QEMU runs by the recipe of
//! shared/reference/xscale-timing.md section 4 (`env -i qemu-arm -cpu pxa270`, one
//! instruction per translation block, `-d exec,nochain`, stdout to a file, stdin empty) with
//! its log streamed through a pipe, and the simulator runs in lock step with the same
//! command line, working directory, HEAPINFO block and initial SP. Every retired PC (and,
//! with QEMU 7.2, the Thumb state) is compared, up to `STREAMTRACE_DIFF_LIMIT` instructions
//! per program (default 10 M); a divergence reports the index, both PCs, the preceding
//! instructions disassembled and the simulator's registers. Semihosting SVCs are one line
//! at the SVC's PC followed by PC+4 (or +2) in QEMU's log, and one retired instruction
//! (`Flow::Semihost`) in the simulator. A Thumb BL/BLX pair is one line in QEMU's log (QEMU
//! translates a prefix and the halfword after it as one 32-bit instruction unless the prefix
//! is the last halfword of a 4 KiB page) and two retired instructions in the simulator; the
//! harness steps the simulator twice for such a line. The instruction index of a report
//! counts QEMU lines. Then stdout and exit status are compared: with the
//! logged QEMU run when it finished inside the limit, otherwise the simulator runs on alone
//! (up to `STREAMTRACE_DIFF_FULL_RUN` instructions, default 60 M) and is compared with a
//! plain QEMU run.
//!
//! Environment: `STREAMTRACE_DIFF_ONLY=name[,name]` restricts the programs;
//! `STREAMTRACE_DIFF_JOBS` sets the number of programs run at once (default: the cores).
//!
//! Unaligned word loads, which QEMU 7.2 does not rotate (pitfall 4), are counted from the
//! simulator's memory-access log and reported.

mod common;

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::sync::Mutex;

use common::{disassemble, manifest, parse_exec_line, programs_dir, sim_like_qemu, Program, Qemu, QemuPc, QemuTrace};
use streamtrace_isa::ElfImage;
use streamtrace_model::RetireEvent;
use streamtrace_sim::{Machine, MemAccess, NoHook, RetireHook, StepOutcome};

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.replace('_', "").parse().ok()).unwrap_or(default)
}

/// Keeps the last retired instructions and watches for unaligned loads.
struct Collector {
    last: VecDeque<(u32, bool, u32)>,
    unaligned_word_loads: u64,
    unaligned_half_loads: u64,
    first_unaligned_pc: Option<u32>,
}

const CONTEXT: usize = 10;

impl Collector {
    fn new() -> Self {
        Collector { last: VecDeque::with_capacity(CONTEXT + 1), unaligned_word_loads: 0, unaligned_half_loads: 0, first_unaligned_pc: None }
    }
}

impl RetireHook for Collector {
    #[inline]
    fn retire(&mut self, ev: &RetireEvent, accesses: &[MemAccess]) {
        if self.last.len() == CONTEXT {
            self.last.pop_front();
        }
        self.last.push_back((ev.pc, ev.thumb, ev.insn));
        for a in accesses {
            if !a.write && a.size as u32 > 1 && a.addr % a.size as u32 != 0 {
                if a.size == 4 {
                    self.unaligned_word_loads += 1;
                } else {
                    self.unaligned_half_loads += 1;
                }
                self.first_unaligned_pc.get_or_insert(ev.pc);
            }
        }
    }
}

#[derive(Debug, Default)]
struct Outcome {
    name: String,
    compared: u64,
    qemu_finished: bool,
    divergence: Option<String>,
    output: Option<String>,
    output_checked: bool,
    unaligned: (u64, u64, Option<u32>),
}

fn state(thumb: Option<bool>) -> &'static str {
    match thumb {
        Some(true) => "Thumb",
        Some(false) => "ARM",
        None => "?",
    }
}

#[allow(clippy::too_many_arguments)]
fn divergence_report(
    prog: &Program,
    qemu: &Qemu,
    m: &Machine,
    hook: &Collector,
    index: u64,
    what: &str,
    q: Option<QemuPc>,
    trace: &mut QemuTrace,
) -> String {
    let elf = programs_dir().join(&prog.elf);
    let mut s = String::new();
    let _ = writeln!(s, "{}: divergence at instruction {index}: {what}", prog.name);
    match q {
        Some(q) => {
            let _ = writeln!(s, "  QEMU: next pc {:#010x} ({})", q.pc, state(q.thumb));
        }
        None => {
            let _ = writeln!(s, "  QEMU: program exited after {index} instructions");
        }
    }
    let _ = writeln!(
        s,
        "  sim:  next pc {:#010x} ({}){}",
        m.cpu.r[15],
        if m.cpu.thumb { "Thumb" } else { "ARM" },
        m.exit_code().map(|c| format!(", exited with {c}")).unwrap_or_default()
    );
    let _ = writeln!(s, "  last {} instructions retired by both:", hook.last.len());
    for &(pc, thumb, word) in &hook.last {
        let _ = writeln!(s, "    {}", disassemble(&elf, pc, thumb, Some(word)));
    }
    let fetch = |pc: u32, thumb: bool| if thumb { m.mem.read16(pc).ok().map(u32::from) } else { m.mem.read32(pc).ok() };
    if let Some(q) = q {
        let t = q.thumb.unwrap_or(m.cpu.thumb);
        let _ = writeln!(s, "  QEMU next: {}", disassemble(&elf, q.pc, t, fetch(q.pc, t)));
        let mut more = Vec::new();
        for _ in 0..5 {
            match trace.next_pc() {
                Some(p) => more.push(format!("{:#x}", p.pc)),
                None => break,
            }
        }
        let _ = writeln!(s, "  QEMU after that: {}", more.join(" "));
    }
    let _ = writeln!(s, "  sim next:  {}", disassemble(&elf, m.cpu.r[15], m.cpu.thumb, fetch(m.cpu.r[15], m.cpu.thumb)));
    let _ = write!(s, "  sim registers:");
    for i in 0..16 {
        let _ = write!(s, "{}r{i}={:08x}", if i % 8 == 0 { "\n    " } else { " " }, m.cpu.r[i]);
    }
    let _ = writeln!(s, "\n    cpsr={:08x}", m.cpu.cpsr());
    let _ = writeln!(
        s,
        "  QEMU registers: cd testbenches/programs && env -i qemu-arm -cpu pxa270 {} -d exec,cpu,nochain -D log.txt {} > out.txt",
        qemu.one_insn, prog.cmdline
    );
    if !trace.other_lines.is_empty() {
        let _ = writeln!(s, "  other QEMU log lines: {:?}", trace.other_lines);
    }
    s
}

fn diff_program(qemu: &Qemu, prog: &Program, limit: u64, full_run: u64) -> Outcome {
    let mut o = Outcome { name: prog.name.clone(), ..Default::default() };
    let stack = qemu.stack_base(prog);
    let (mut m, out, _err) = sim_like_qemu(prog, stack);
    m.log_accesses = true;
    let mut hook = Collector::new();
    let mut trace = QemuTrace::start(qemu, prog);
    let mut n = 0u64;
    loop {
        if n == limit {
            trace.kill();
            break;
        }
        let q = trace.next_pc();
        let Some(q) = q else {
            if m.exit_code().is_none() {
                o.divergence = Some(divergence_report(prog, qemu, &m, &hook, n, "QEMU's program exited, the simulator's did not", None, &mut trace));
            }
            o.qemu_finished = true;
            break;
        };
        if let Some(code) = m.exit_code() {
            let what = format!("the simulator's program exited (status {code}), QEMU's goes on");
            o.divergence = Some(divergence_report(prog, qemu, &m, &hook, n, &what, Some(q), &mut trace));
            trace.kill();
            break;
        }
        if m.cpu.r[15] != q.pc || q.thumb.is_some_and(|t| t != m.cpu.thumb) {
            o.divergence = Some(divergence_report(prog, qemu, &m, &hook, n, "different PCs", Some(q), &mut trace));
            trace.kill();
            break;
        }
        // QEMU translates a Thumb BL/BLX prefix together with the following halfword as
        // one 32-bit instruction (one log line) unless the prefix ends a page; the
        // simulator retires the two halves separately (ARMv5T: two instructions).
        let merged = m.cpu.thumb && q.pc & 0xFFF != 0xFFE && m.mem.read16(q.pc).is_ok_and(|hw| hw >> 11 == 0x1E);
        let mut stopped = m.step(&mut hook).err();
        if merged && stopped.is_none() && m.exit_code().is_none() {
            if m.cpu.r[15] != q.pc.wrapping_add(2) || !m.cpu.thumb {
                let what = "after a Thumb BL prefix the simulator does not continue with the suffix at PC+2".to_string();
                o.divergence = Some(divergence_report(prog, qemu, &m, &hook, n, &what, Some(q), &mut trace));
                trace.kill();
                break;
            }
            stopped = m.step(&mut hook).err();
        }
        if let Some(e) = stopped {
            let what = format!("the simulator stopped: {e}");
            o.divergence = Some(divergence_report(prog, qemu, &m, &hook, n, &what, Some(q), &mut trace));
            trace.kill();
            break;
        }
        n += 1;
    }
    o.compared = n;
    o.unaligned = (hook.unaligned_word_loads, hook.unaligned_half_loads, hook.first_unaligned_pc);
    if o.divergence.is_some() {
        return o;
    }
    // Output and exit status.
    let (qemu_out, qemu_code) = if o.qemu_finished {
        let (code, out, err) = trace.finish();
        if !err.is_empty() {
            o.output = Some(format!("QEMU wrote to stderr: {err}"));
        }
        (out, code)
    } else {
        m.log_accesses = false;
        let mut step = Ok(StepOutcome::Running);
        while m.exit_code().is_none() && m.retired < full_run && step.is_ok() {
            step = m.step(&mut NoHook);
        }
        if let Err(e) = step {
            o.output = Some(format!("after the compared prefix the simulator stopped: {e}"));
            return o;
        }
        if m.exit_code().is_none() {
            // Longer than the full-run budget: the PC prefix was all we could compare.
            return o;
        }
        qemu.run_plain(prog)
    };
    o.output_checked = true;
    let sim_out = out.contents();
    let mut problems = Vec::new();
    if sim_out != qemu_out {
        problems.push(format!(
            "stdout differs:\n--- QEMU\n{}\n--- sim\n{}",
            String::from_utf8_lossy(&qemu_out),
            String::from_utf8_lossy(&sim_out)
        ));
    }
    if m.exit_code() != Some(qemu_code) {
        problems.push(format!("exit status: QEMU {qemu_code}, sim {:?}", m.exit_code()));
    }
    if qemu_out != prog.stdout.as_bytes() || qemu_code != prog.exit_code {
        problems.push("QEMU's output differs from programs.json: rebuild the manifest".to_string());
    }
    if !problems.is_empty() {
        o.output = Some(problems.join("\n"));
    }
    o
}

fn selected_programs() -> Vec<Program> {
    let all = manifest().programs;
    match std::env::var("STREAMTRACE_DIFF_ONLY") {
        Ok(list) if !list.is_empty() => {
            let names: Vec<&str> = list.split(',').map(str::trim).collect();
            for n in &names {
                assert!(all.iter().any(|p| p.name == *n), "STREAMTRACE_DIFF_ONLY: no program named {n}");
            }
            all.into_iter().filter(|p| names.contains(&p.name.as_str())).collect()
        }
        _ => all,
    }
}

#[test]
fn sim_matches_qemu_on_every_program() {
    let qemu = Qemu::find();
    let limit = env_u64("STREAMTRACE_DIFF_LIMIT", 10_000_000);
    let full_run = env_u64("STREAMTRACE_DIFF_FULL_RUN", 60_000_000);
    let progs = selected_programs();
    let jobs = env_u64("STREAMTRACE_DIFF_JOBS", std::thread::available_parallelism().map_or(2, |n| n.get() as u64)).max(1);
    let queue = Mutex::new(progs.iter().collect::<VecDeque<_>>());
    let results = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                let Some(p) = queue.lock().unwrap().pop_front() else { break };
                let start = std::time::Instant::now();
                let o = diff_program(&qemu, p, limit, full_run);
                eprintln!("qemu_diff: {} done in {:.1} s", p.name, start.elapsed().as_secs_f64());
                results.lock().unwrap().push(o);
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|o| progs.iter().position(|p| p.name == o.name));
    let mut summary = format!("{} (limit {limit} instructions per program)\n", qemu.version_line);
    let mut failures = Vec::new();
    for o in &results {
        let p = progs.iter().find(|p| p.name == o.name).unwrap();
        let status = match (&o.divergence, &o.output) {
            (Some(_), _) => "DIVERGED",
            (None, Some(_)) => "OUTPUT DIFFERS",
            (None, None) => "ok",
        };
        let _ = writeln!(
            summary,
            "  {:<14} {:>10} of {:>10} instructions compared{}  output {}  unaligned loads: {} word, {} half{}  {status}",
            o.name,
            o.compared,
            p.qemu_instructions,
            if o.qemu_finished { " (to the end)" } else { "" },
            if o.output_checked { "compared" } else { "not compared" },
            o.unaligned.0,
            o.unaligned.1,
            o.unaligned.2.map(|pc| format!(" (first at {pc:#x})")).unwrap_or_default(),
        );
        if let Some(d) = &o.divergence {
            failures.push(d.clone());
        }
        if let Some(d) = &o.output {
            failures.push(format!("{}: {d}", o.name));
        }
    }
    eprintln!("{summary}");
    assert!(failures.is_empty(), "{summary}\n{}", failures.join("\n"));
}

/// The harness itself, independent of the executors: QEMU's exec log of the tiny program
/// parses into exactly the manifest's instruction count, starts at the ELF entry, shows each
/// semihosting SVC as one line followed by PC+4, and ends with the exit SVC; the simulator
/// is set up at the same first instruction with QEMU's stack base.
#[test]
fn qemu_log_parsing_and_sim_setup() {
    let qemu = Qemu::find();
    let prog = manifest().programs.into_iter().find(|p| p.name == "tiny").expect("tiny in the manifest");
    let elf = ElfImage::open(programs_dir().join(&prog.elf)).unwrap();
    let mut trace = QemuTrace::start(&qemu, &prog);
    let mut pcs: Vec<QemuPc> = Vec::new();
    while let Some(p) = trace.next_pc() {
        pcs.push(p);
    }
    let other = trace.other_lines.clone();
    let (code, out, _) = trace.finish();
    assert_eq!(code, prog.exit_code);
    assert_eq!(String::from_utf8_lossy(&out), prog.stdout);
    assert!(other.is_empty(), "unexpected log lines: {other:?}");
    assert_eq!(pcs.len() as u64, prog.qemu_instructions, "one exec line per retired instruction");
    assert_eq!(pcs[0].pc, elf.entry() & !1);
    if qemu.thumb_in_cs_base() {
        assert_eq!(pcs[0].thumb, Some(false), "crt0 starts in ARM state");
    }
    let word = |pc: u32| {
        let seg = elf.memory().segment_at(pc).expect("PC inside the ELF");
        let off = (pc - seg.base()) as usize;
        u32::from_le_bytes(seg.bytes()[off..off + 4].try_into().unwrap())
    };
    let svcs: Vec<usize> = (0..pcs.len()).filter(|&i| pcs[i].thumb != Some(true) && word(pcs[i].pc) == 0xEF12_3456).collect();
    assert!(svcs.len() >= 10, "newlib's start-up makes a dozen semihosting calls; found {}", svcs.len());
    for &i in &svcs[..svcs.len() - 1] {
        assert_eq!(pcs[i + 1].pc, pcs[i].pc + 4, "SVC at {:#x} continues at PC+4", pcs[i].pc);
    }
    assert_eq!(*svcs.last().unwrap(), pcs.len() - 1, "the exit SVC is the last line");

    let stack = qemu.stack_base(&prog);
    assert_eq!(format!("{stack:#x}"), prog.qemu_stack_base);
    let (m, _, _) = sim_like_qemu(&prog, stack);
    assert_eq!((m.cpu.r[15], m.cpu.thumb), (pcs[0].pc, false), "the simulator starts where QEMU does");
    assert_eq!(m.cpu.r[13], stack);
    assert_eq!(m.semihost.memory_layout()[2], stack);
    assert_eq!(m.semihost.cmdline(), prog.cmdline);
}

#[test]
fn exec_line_formats() {
    let l72 = "Trace 0: 0x7f224c0000c0 [000004e0/000081dc/00000000/00000201] \n";
    assert_eq!(parse_exec_line(l72, true), Some(QemuPc { pc: 0x81dc, thumb: Some(false) }));
    let thumb = "Trace 0: 0x7f224c0001c0 [008004e0/0000a11a/00000000/00000201] main\n";
    assert_eq!(parse_exec_line(thumb, true), Some(QemuPc { pc: 0xa11a, thumb: Some(true) }));
    assert_eq!(parse_exec_line(thumb, false), Some(QemuPc { pc: 0xa11a, thumb: None }));
    let old = "Trace 0x7f00 [00000000/00008000/00000010] _start";
    assert_eq!(parse_exec_line(old, true).map(|p| p.pc), Some(0x8000));
    assert_eq!(parse_exec_line("Linking TBs 0x1 [00008000] index 0 -> 0x2 [00008004]", true), None);
    assert_eq!(parse_exec_line("R00=00000000 R01=40800fe2", true), None);
}

/// Every program's output and exit status under QEMU still match programs.json (the ELFs
/// and the manifest are committed together).
#[test]
fn manifest_matches_qemu() {
    let qemu = Qemu::find();
    let m = manifest();
    assert!(m.programs.len() >= 12);
    for p in &m.programs {
        let (out, code) = qemu.run_plain(p);
        assert_eq!((String::from_utf8_lossy(&out).as_ref(), code), (p.stdout.as_str(), p.exit_code), "{}", p.name);
        assert!(p.stdout.ends_with(&format!("{}\n", p.checksum_line)), "{}", p.name);
    }
}

//! Helpers of the program tests: the manifest of testbenches/programs, running QEMU by the
//! recipe of shared/reference/xscale-timing.md section 4, and a simulator set up the way
//! QEMU's linux-user sets up the same program.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};

use serde::Deserialize;
use streamtrace_isa::ElfImage;
use streamtrace_sim::semihost::SharedBuffer;
use streamtrace_sim::{Machine, Semihost};

/// The Debian packages the QEMU-based tests need.
pub const QEMU_PACKAGES: &str = "qemu-user";

/// testbenches/programs of the workspace.
pub fn programs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testbenches/programs").canonicalize().expect("testbenches/programs exists")
}

#[derive(Debug, Clone, Deserialize)]
pub struct Program {
    pub name: String,
    /// Relative to `programs_dir()`; also argv[0].
    pub elf: String,
    pub state: String,
    pub args: Vec<String>,
    /// argv[0] and the arguments joined by spaces (what SYS_GET_CMDLINE returns).
    pub cmdline: String,
    pub exit_code: i32,
    pub stdout: String,
    pub checksum_line: String,
    pub qemu_instructions: u64,
    pub qemu_stack_base: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Manifest {
    pub qemu_version: String,
    pub programs: Vec<Program>,
}

pub fn manifest() -> Manifest {
    let path = programs_dir().join("programs.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The installed QEMU: binary path, version (major, minor) and the option that limits a
/// translation block to one instruction.
#[derive(Debug, Clone)]
pub struct Qemu {
    pub path: PathBuf,
    pub version: (u32, u32),
    pub version_line: String,
    pub one_insn: &'static str,
}

impl Qemu {
    /// Find qemu-arm; panics with the install command when it is missing (the tests do not
    /// skip: the test setup installs it).
    pub fn find() -> Qemu {
        let path = std::env::var_os("PATH")
            .into_iter()
            .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
            .map(|d| d.join("qemu-arm"))
            .find(|p| p.is_file())
            .unwrap_or_else(|| {
                panic!(
                    "qemu-arm is not installed: the QEMU differential tests need it \
                     (Debian: `apt-get install -y {QEMU_PACKAGES}`; scripts/setup.sh installs it)"
                )
            });
        let out = Command::new(&path).arg("--version").output().expect("qemu-arm --version runs");
        let version_line = String::from_utf8_lossy(&out.stdout).lines().next().unwrap_or("").to_string();
        let version = parse_version(&version_line).unwrap_or_else(|| panic!("cannot parse `{version_line}`"));
        // -singlestep was renamed -one-insn-per-tb in 8.1 (and removed in 9.0).
        let one_insn = if version >= (8, 1) { "-one-insn-per-tb" } else { "-singlestep" };
        Qemu { path, version, version_line, one_insn }
    }

    /// Whether the exec log carries the Thumb bit where this harness knows to find it
    /// (QEMU 7.2: bit 23 of cs_base, TBFLAG_AM32.THUMB).
    pub fn thumb_in_cs_base(&self) -> bool {
        self.version.0 == 7
    }

    /// `env -i qemu-arm -cpu pxa270 <extra> <elf> <args>` in `programs_dir()`, stdin empty,
    /// the program's stdout to `stdout_file`, the `-d` log (`-D /dev/fd/3`) to a pipe that
    /// is the returned child's stdout.
    pub fn spawn_logged(&self, prog: &Program, log: &str, stdout_file: &Path) -> Child {
        let mut args: Vec<String> = vec![
            "-cpu".into(),
            "pxa270".into(),
            self.one_insn.into(),
            "-d".into(),
            log.into(),
            "-D".into(),
            "/dev/fd/3".into(),
            prog.elf.clone(),
        ];
        args.extend(prog.args.iter().cloned());
        // The shell only moves the pipe to fd 3 and stdout to the file; `env -i` gives QEMU
        // an empty environment, which fixes the stack base (pitfall 3).
        Command::new("/bin/sh")
            .env_clear()
            .current_dir(programs_dir())
            .arg("-c")
            .arg("out=$1; shift; exec /usr/bin/env -i \"$@\" 3>&1 >\"$out\" </dev/null")
            .arg("sh")
            .arg(stdout_file)
            .arg(&self.path)
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn qemu-arm")
    }

    /// Run the program without logging: (stdout, exit status).
    pub fn run_plain(&self, prog: &Program) -> (Vec<u8>, i32) {
        let out = Command::new(&self.path)
            .env_clear()
            .current_dir(programs_dir())
            .args(["-cpu", "pxa270"])
            .arg(&prog.elf)
            .args(&prog.args)
            .stdin(Stdio::null())
            .stderr(Stdio::inherit())
            .output()
            .expect("run qemu-arm");
        (out.stdout, out.status.code().unwrap_or(-1))
    }

    /// QEMU's SYS_HEAPINFO stack base for this program: its initial SP (linux-user
    /// `start_stack`, which depends on argv and the environment), read from the first
    /// register dump of `-d cpu`.
    pub fn stack_base(&self, prog: &Program) -> u32 {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut child = self.spawn_logged(prog, "cpu,nochain", &dir.path().join("out.txt"));
        let reader = BufReader::new(child.stdout.take().expect("piped"));
        let mut sp = None;
        for line in reader.lines() {
            let line = line.expect("read the QEMU log");
            if let Some(i) = line.find("R13=") {
                sp = u32::from_str_radix(&line[i + 4..i + 12], 16).ok();
                break;
            }
        }
        let _ = child.kill();
        let _ = child.wait();
        sp.unwrap_or_else(|| panic!("{}: no register dump in QEMU's -d cpu log", prog.name))
    }
}

fn parse_version(line: &str) -> Option<(u32, u32)> {
    let v = line.split("version ").nth(1)?;
    let mut it = v.split(|c: char| !c.is_ascii_digit());
    Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
}

/// One line of the exec log: the PC and, where the version carries it, the Thumb state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QemuPc {
    pub pc: u32,
    pub thumb: Option<bool>,
}

/// Parse an exec log line: `Trace 0: 0x7f... [cs_base/pc/flags/cflags] <symbol>` (three
/// fields in QEMU before 7.x). PC = the second `/`-separated hex field inside `[...]`;
/// Thumb = cs_base bit 23 when `thumb_bit` (QEMU 7.2).
pub fn parse_exec_line(line: &str, thumb_bit: bool) -> Option<QemuPc> {
    parse_exec_bytes(line.as_bytes(), thumb_bit)
}

/// [`parse_exec_line`] on raw bytes (a plain loop: the test profile is unoptimized and
/// this runs for every one of tens of millions of lines).
pub fn parse_exec_bytes(line: &[u8], thumb_bit: bool) -> Option<QemuPc> {
    if !line.starts_with(b"Trace ") {
        return None;
    }
    let mut i = 6;
    while i < line.len() && line[i] != b'[' {
        i += 1;
    }
    let (cs_base, i) = hex_field(line, i + 1)?;
    if line.get(i) != Some(&b'/') {
        return None;
    }
    let (pc, i) = hex_field(line, i + 1)?;
    if !matches!(line.get(i), Some(b'/') | Some(b']')) {
        return None;
    }
    Some(QemuPc { pc: pc as u32, thumb: thumb_bit.then_some(cs_base >> 23 & 1 == 1) })
}

/// A hex number starting at `i`: (value, index after it).
fn hex_field(line: &[u8], mut i: usize) -> Option<(u64, usize)> {
    let start = i;
    let mut v = 0u64;
    while i < line.len() {
        let d = match line[i] {
            c @ b'0'..=b'9' => c - b'0',
            c @ b'a'..=b'f' => c - b'a' + 10,
            c @ b'A'..=b'F' => c - b'A' + 10,
            _ => break,
        };
        v = v << 4 | d as u64;
        i += 1;
    }
    (i > start && i - start <= 16).then_some((v, i))
}

/// Streams the PCs of a logged QEMU run.
pub struct QemuTrace {
    pub child: Child,
    reader: BufReader<ChildStdout>,
    line: Vec<u8>,
    thumb_bit: bool,
    /// Lines that are not exec lines (QEMU messages), kept for reports.
    pub other_lines: Vec<String>,
    pub stdout_file: PathBuf,
    _dir: tempfile::TempDir,
}

impl QemuTrace {
    pub fn start(qemu: &Qemu, prog: &Program) -> QemuTrace {
        let dir = tempfile::tempdir().expect("tempdir");
        let stdout_file = dir.path().join("stdout.txt");
        let mut child = qemu.spawn_logged(prog, "exec,nochain", &stdout_file);
        let reader = BufReader::with_capacity(1 << 20, child.stdout.take().expect("piped"));
        QemuTrace {
            child,
            reader,
            line: Vec::with_capacity(128),
            thumb_bit: qemu.thumb_in_cs_base(),
            other_lines: Vec::new(),
            stdout_file,
            _dir: dir,
        }
    }

    /// The next retired instruction, or None at the end of the log (the program exited).
    pub fn next_pc(&mut self) -> Option<QemuPc> {
        loop {
            self.line.clear();
            match self.reader.read_until(b'\n', &mut self.line) {
                Ok(0) | Err(_) => return None,
                Ok(_) => {}
            }
            if let Some(p) = parse_exec_bytes(&self.line, self.thumb_bit) {
                return Some(p);
            }
            if self.other_lines.len() < 20 {
                self.other_lines.push(String::from_utf8_lossy(&self.line).trim_end().to_string());
            }
        }
    }

    /// Stop QEMU (when the comparison ends early).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Wait for QEMU to exit after the log ended: (exit status, stdout, stderr).
    pub fn finish(mut self) -> (i32, Vec<u8>, String) {
        let mut err = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = e.read_to_string(&mut err);
        }
        let status = self.child.wait().map(|s| s.code().unwrap_or(-1)).unwrap_or(-1);
        let out = std::fs::read(&self.stdout_file).unwrap_or_default();
        (status, out, err)
    }
}

/// QEMU linux-user's heap base for SYS_HEAPINFO: the program break, i.e. the end of the
/// highest segment rounded up to the 4 KiB target page; the limit is 128 MiB above it.
pub fn qemu_heap(elf: &ElfImage) -> (u32, u32) {
    let end = elf.memory().segments().iter().map(|s| s.end()).max().unwrap_or(0);
    let base = end.next_multiple_of(4096) as u32;
    (base, base.wrapping_add(128 << 20))
}

/// A machine for `prog` set up as QEMU sets it up: the same command line, working
/// directory, HEAPINFO block and initial SP. Returns the machine and its captured stdout.
pub fn sim_like_qemu(prog: &Program, stack_base: u32) -> (Machine, SharedBuffer, SharedBuffer) {
    let path = programs_dir().join(&prog.elf);
    let elf = ElfImage::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let out = SharedBuffer::new();
    let err = SharedBuffer::new();
    let sh = Semihost::new()
        .with_cmdline(prog.cmdline.clone())
        .with_workdir(programs_dir())
        .with_stdin(std::io::empty())
        .with_stdout(out.clone())
        .with_stderr(err.clone());
    let mut m = Machine::for_elf(&elf, sh);
    let (heap_base, heap_limit) = qemu_heap(&elf);
    m.semihost.set_memory_layout(heap_base, heap_limit, stack_base, 0);
    m.cpu.r[13] = stack_base;
    (m, out, err)
}

/// Disassembly of `pc` (objdump when the cross binutils are installed, else the word).
pub fn disassemble(elf: &Path, pc: u32, thumb: bool, word: Option<u32>) -> String {
    // Ask for 4 bytes even in Thumb state: objdump prints a BL pair as one instruction.
    let out = Command::new("arm-none-eabi-objdump")
        .args(["-d", "--no-show-raw-insn"])
        .arg(format!("--start-address={pc:#x}"))
        .arg(format!("--stop-address={:#x}", pc.wrapping_add(4)))
        .arg(if thumb { "-Mforce-thumb" } else { "-Mreg-names-std" })
        .arg(elf)
        .output();
    if let Ok(o) = out {
        let text = String::from_utf8_lossy(&o.stdout);
        let needle = format!("{pc:x}:");
        if let Some(l) = text.lines().find(|l| l.trim_start().starts_with(&needle)) {
            return l.trim().to_string();
        }
    }
    match word {
        Some(w) if thumb => format!("{pc:8x}: {:04x}", w as u16),
        Some(w) => format!("{pc:8x}: {w:08x}"),
        None => format!("{pc:8x}: (not mapped)"),
    }
}

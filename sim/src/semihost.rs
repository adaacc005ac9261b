//! ARM semihosting as newlib's rdimon library uses it (the "Angel" ABI of
//! shared/reference/xscale-timing.md section 5), with the behaviour of QEMU's linux-user
//! implementation wherever a program could observe a difference.
//!
//! The trap (`SVC 0x123456` in ARM state, `SVC 0xAB` in Thumb state) passes the operation
//! number in r0 and a parameter (usually a pointer to a block of 32-bit words) in r1; the
//! result goes to r0 and every other register is preserved. [`Semihost::call`] performs one
//! call on a [`Cpu`] and a [`Memory`].
//!
//! What matches QEMU (so that the retired instruction streams of the two agree):
//! - handles are handed out 1, 2, 3, ..., always the lowest free number (QEMU's guest fd
//!   table), so newlib's start-up sequence gets `:tt` r -> 1, features -> 2 (closed again),
//!   `:tt` w -> 2, `:tt` a -> 3;
//! - `:tt` opened for reading is stdin, for writing stdout, for appending stderr
//!   (`SH_EXT_STDOUT_STDERR`); `:semihosting-features` is a read-only pseudo-file holding
//!   `"SHFB"` and the feature byte 0x03 (`EXIT_EXTENDED | STDOUT_STDERR`);
//! - the console is never a terminal: `ISTTY` answers 0 with errno 25 (ENOTTY) and `FLEN`
//!   answers 0, as QEMU does with its output redirected (pitfall 1 of the reference);
//! - `WRITE`/`READ` return the number of bytes *not* transferred, the whole length on error;
//! - errno (`SYS_ERRNO`) is the host errno (Linux numbering) of the last call that failed;
//!   successful calls leave it alone;
//! - `WRITEC`/`WRITE0` leave 0xdeadbeef in r0 (the ABI says r0 is corrupted);
//! - `EXIT` (0x18) carries the reason in r1: `ADP_Stopped_ApplicationExit` (0x20026) exits
//!   with status 0, anything else with 1; `EXIT_EXTENDED` (0x20) reads [reason, code] and
//!   exits with `code` for an application exit, 1 otherwise.
//!
//! Deliberate differences from QEMU:
//! - `SYSTEM` is refused (r0 = -1, errno 1 = EPERM): a simulated program never runs host
//!   commands;
//! - `TMPNAM` returns `streamtrace-tmp-NN` (NN = the id in hex), a name relative to the
//!   working directory that does not depend on the host process id;
//! - `CLOCK`, `TIME` and `ELAPSED` read host time by default (QEMU's `CLOCK` reads host CPU
//!   time) and are therefore not reproducible; [`Semihost::with_deterministic_clock`] derives
//!   all three from the retired-instruction count instead (the machine reports it through
//!   [`Semihost::set_retired`] before each call);
//! - `READC` at end of input returns -1.
//!
//! Host files are opened relative to a configurable working directory (absolute names are
//! used as they are). The console goes to configurable sinks, so tests can capture a
//! program's output; the default sinks are the process's own stdin, stdout and stderr,
//! passed through byte for byte.
//!
//! A call that names memory the program does not have (a bad parameter block, buffer or
//! string) is an `Err` naming the operation and the address; nothing here panics.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use crate::cpu::Cpu;
use crate::memory::{Memory, PAGE_SIZE};

/// Operation numbers (r0).
pub mod op {
    pub const OPEN: u32 = 0x01;
    pub const CLOSE: u32 = 0x02;
    pub const WRITEC: u32 = 0x03;
    pub const WRITE0: u32 = 0x04;
    pub const WRITE: u32 = 0x05;
    pub const READ: u32 = 0x06;
    pub const READC: u32 = 0x07;
    pub const ISERROR: u32 = 0x08;
    pub const ISTTY: u32 = 0x09;
    pub const SEEK: u32 = 0x0A;
    pub const FLEN: u32 = 0x0C;
    pub const TMPNAM: u32 = 0x0D;
    pub const REMOVE: u32 = 0x0E;
    pub const RENAME: u32 = 0x0F;
    pub const CLOCK: u32 = 0x10;
    pub const TIME: u32 = 0x11;
    pub const SYSTEM: u32 = 0x12;
    pub const ERRNO: u32 = 0x13;
    pub const GET_CMDLINE: u32 = 0x15;
    pub const HEAPINFO: u32 = 0x16;
    pub const EXIT: u32 = 0x18;
    pub const EXIT_EXTENDED: u32 = 0x20;
    pub const ELAPSED: u32 = 0x30;
    pub const TICKFREQ: u32 = 0x31;
}

/// `angel_SWIreason_ReportException` reason of a normal program exit.
pub const ADP_STOPPED_APPLICATION_EXIT: u32 = 0x20026;
/// Contents of the `:semihosting-features` pseudo-file: magic and feature byte 0
/// (bit 0 EXIT_EXTENDED, bit 1 STDOUT_STDERR).
pub const FEATURES_FILE: [u8; 5] = [b'S', b'H', b'F', b'B', 0x03];
/// Host errno values (Linux numbering, as QEMU reports them).
pub mod errno {
    pub const EPERM: u32 = 1;
    pub const E2BIG: u32 = 7;
    pub const EBADF: u32 = 9;
    pub const EACCES: u32 = 13;
    pub const EINVAL: u32 = 22;
    pub const ENOTTY: u32 = 25;
    pub const ESPIPE: u32 = 29;
    pub const ENAMETOOLONG: u32 = 36;
    pub const EIO: u32 = 5;
    pub const ERANGE: u32 = 34;
    pub const EOVERFLOW: u32 = 75;
}
/// `SYS_TICKFREQ`: `ELAPSED` counts nanoseconds, as in QEMU.
pub const TICK_FREQ: u32 = 1_000_000_000;
/// Longest file name accepted by OPEN/REMOVE/RENAME.
const MAX_NAME: u32 = 4096;

/// What the program asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SemihostOutcome {
    Continue,
    Exit(i32),
}

/// A writer whose bytes can be read back later (capturing a program's console output).
#[derive(Clone, Default, Debug)]
pub struct SharedBuffer(Arc<Mutex<Vec<u8>>>);

impl SharedBuffer {
    pub fn new() -> Self {
        Self::default()
    }

    /// Everything written so far.
    pub fn contents(&self) -> Vec<u8> {
        self.0.lock().map(|v| v.clone()).unwrap_or_default()
    }

    /// Everything written so far, as text (invalid UTF-8 replaced).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.contents()).into_owned()
    }
}

impl Write for SharedBuffer {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().map_err(|_| io::Error::other("capture buffer poisoned"))?.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The three console streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Console {
    In,
    Out,
    Err,
}

enum Handle {
    Console(Console),
    Features { pos: usize },
    File(File),
}

/// Time source of CLOCK, TIME and ELAPSED.
#[derive(Clone, Copy, Debug)]
enum Clock {
    Host { start: Instant },
    /// Derived from the retired-instruction count: `ips` instructions per simulated second,
    /// TIME counts from `epoch`.
    Retired { ips: u64, epoch: u32 },
}

/// The semihosting host: console sinks, open handles, errno, command line, memory layout.
pub struct Semihost {
    heap_base: u32,
    heap_limit: u32,
    stack_base: u32,
    stack_limit: u32,
    cmdline: String,
    /// The program's arguments, argv[0] first (a Linux program gets them one by one).
    argv: Vec<String>,
    workdir: PathBuf,
    stdin: Box<dyn Read + Send>,
    stdout: Box<dyn Write + Send>,
    stderr: Box<dyn Write + Send>,
    /// `handles[i]` is handle `i + 1`.
    handles: Vec<Option<Handle>>,
    errno: u32,
    clock: Clock,
    retired: u64,
    calls: u64,
}

impl Default for Semihost {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Semihost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Semihost")
            .field("cmdline", &self.cmdline)
            .field("workdir", &self.workdir)
            .field("heap", &(self.heap_base, self.heap_limit))
            .field("stack", &(self.stack_base, self.stack_limit))
            .field("open_handles", &self.handles.iter().filter(|h| h.is_some()).count())
            .field("errno", &self.errno)
            .field("clock", &self.clock)
            .finish()
    }
}

/// A failed call: the value for r0 and the errno to record.
struct Fail(u32, u32);

type OpResult = Result<Result<u32, Fail>, String>;

impl Semihost {
    /// Console on the process's stdin/stdout/stderr, empty command line, working directory
    /// `.`, host clock.
    pub fn new() -> Self {
        Semihost {
            heap_base: 0,
            heap_limit: 0,
            stack_base: 0,
            stack_limit: 0,
            cmdline: String::new(),
            argv: Vec::new(),
            workdir: PathBuf::from("."),
            stdin: Box::new(io::stdin()),
            stdout: Box::new(io::stdout()),
            stderr: Box::new(io::stderr()),
            handles: Vec::new(),
            errno: 0,
            clock: Clock::Host { start: Instant::now() },
            retired: 0,
            calls: 0,
        }
    }

    /// The command line `SYS_GET_CMDLINE` returns: argv\[0\] and the arguments joined by
    /// single spaces, exactly as QEMU builds it from its own argv.
    /// (A Linux program's argv is the line split at whitespace; use
    /// [`Semihost::with_args`] for arguments that contain spaces.)
    pub fn with_cmdline(mut self, cmdline: impl Into<String>) -> Self {
        self.cmdline = cmdline.into();
        self.argv = self.cmdline.split_whitespace().map(str::to_string).collect();
        self
    }

    /// The command line from argv\[0\] and the arguments (joined by single spaces); a Linux
    /// program gets them unsplit.
    pub fn with_args<S: AsRef<str>>(mut self, argv: &[S]) -> Self {
        self.argv = argv.iter().map(|a| a.as_ref().to_string()).collect();
        self.cmdline = self.argv.join(" ");
        self
    }

    /// argv\[0\] and the arguments.
    pub fn argv(&self) -> &[String] {
        &self.argv
    }

    /// Directory that relative file names are resolved against.
    pub fn with_workdir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.workdir = dir.into();
        self
    }

    pub fn with_stdin(mut self, r: impl Read + Send + 'static) -> Self {
        self.stdin = Box::new(r);
        self
    }

    pub fn with_stdout(mut self, w: impl Write + Send + 'static) -> Self {
        self.stdout = Box::new(w);
        self
    }

    pub fn with_stderr(mut self, w: impl Write + Send + 'static) -> Self {
        self.stderr = Box::new(w);
        self
    }

    /// Make CLOCK, TIME and ELAPSED reproducible: they count simulated time at
    /// `insns_per_second` retired instructions per second (TIME starts at 0 = the epoch;
    /// see [`Semihost::with_epoch`]).
    pub fn with_deterministic_clock(mut self, insns_per_second: u64) -> Self {
        let epoch = match self.clock {
            Clock::Retired { epoch, .. } => epoch,
            Clock::Host { .. } => 0,
        };
        self.clock = Clock::Retired { ips: insns_per_second.max(1), epoch };
        self
    }

    /// Seconds since 1970 that TIME reports at instruction 0 under a deterministic clock
    /// (turns the deterministic clock on at 400 M instructions/s if it is not on yet).
    pub fn with_epoch(mut self, epoch: u32) -> Self {
        let ips = match self.clock {
            Clock::Retired { ips, .. } => ips,
            Clock::Host { .. } => 400_000_000,
        };
        self.clock = Clock::Retired { ips, epoch };
        self
    }

    /// Whether CLOCK/TIME/ELAPSED are derived from the instruction count.
    pub fn is_deterministic(&self) -> bool {
        matches!(self.clock, Clock::Retired { .. })
    }

    /// What `SYS_HEAPINFO` reports: [heap base, heap limit, stack base, stack limit].
    pub fn set_memory_layout(&mut self, heap_base: u32, heap_limit: u32, stack_base: u32, stack_limit: u32) {
        self.heap_base = heap_base;
        self.heap_limit = heap_limit;
        self.stack_base = stack_base;
        self.stack_limit = stack_limit;
    }

    /// Builder form of [`Semihost::set_memory_layout`].
    pub fn with_memory_layout(mut self, heap_base: u32, heap_limit: u32, stack_base: u32, stack_limit: u32) -> Self {
        self.set_memory_layout(heap_base, heap_limit, stack_base, stack_limit);
        self
    }

    /// [heap base, heap limit, stack base, stack limit].
    pub fn memory_layout(&self) -> [u32; 4] {
        [self.heap_base, self.heap_limit, self.stack_base, self.stack_limit]
    }

    pub fn cmdline(&self) -> &str {
        &self.cmdline
    }

    pub fn workdir(&self) -> &Path {
        &self.workdir
    }

    /// Instructions retired before the current call (the time base of the deterministic
    /// clock). The machine sets it before each call.
    pub fn set_retired(&mut self, retired: u64) {
        self.retired = retired;
    }

    /// The errno `SYS_ERRNO` would return now.
    pub fn errno(&self) -> u32 {
        self.errno
    }

    /// Semihosting calls performed so far.
    pub fn calls(&self) -> u64 {
        self.calls
    }

    /// Flush the console sinks (the machine's owner calls this when a run ends).
    pub fn flush(&mut self) -> io::Result<()> {
        self.stdout.flush()?;
        self.stderr.flush()
    }

    /// Perform the call in r0/r1; result in r0.
    pub fn call(&mut self, cpu: &mut Cpu, mem: &mut Memory) -> Result<SemihostOutcome, String> {
        self.calls += 1;
        let nr = cpu.r[0];
        let arg = cpu.r[1];
        let r = match nr {
            op::OPEN => self.op_open(mem, arg),
            op::CLOSE => self.op_close(mem, arg),
            op::WRITEC => {
                let c = rd8(mem, arg, "SYS_WRITEC", "character")?;
                // Like QEMU, a failing console write is not reported.
                let _ = self.console_write(Console::Out, &[c]);
                Ok(Ok(0xDEAD_BEEF))
            }
            op::WRITE0 => {
                let s = read_cstr(mem, arg, u32::MAX, "SYS_WRITE0", "string")?;
                let _ = self.console_write(Console::Out, &s);
                Ok(Ok(0xDEAD_BEEF))
            }
            op::WRITE => self.op_write(mem, arg),
            op::READ => self.op_read(mem, arg),
            op::READC => {
                let mut b = [0u8; 1];
                Ok(match self.stdin.read(&mut b) {
                    Ok(1) => Ok(b[0] as u32),
                    Ok(_) => Err(Fail(u32::MAX, 0)),
                    Err(e) => Err(Fail(u32::MAX, host_errno(&e))),
                })
            }
            op::ISERROR => {
                let [status] = block::<1>(mem, arg, "SYS_ISERROR")?;
                Ok(Ok(((status as i32) < 0) as u32))
            }
            op::ISTTY => {
                let [h] = block::<1>(mem, arg, "SYS_ISTTY")?;
                // Nothing here is a terminal: the console behaves like redirected output.
                Ok(match self.handle(h) {
                    Some(_) => Err(Fail(0, errno::ENOTTY)),
                    None => Err(Fail(u32::MAX, errno::EBADF)),
                })
            }
            op::SEEK => self.op_seek(mem, arg),
            op::FLEN => self.op_flen(mem, arg),
            op::TMPNAM => {
                let [buf, id, len] = block::<3>(mem, arg, "SYS_TMPNAM")?;
                let mut name = format!("streamtrace-tmp-{:02x}", id & 0xFF).into_bytes();
                name.push(0);
                if name.len() as u32 > len {
                    Ok(Err(Fail(u32::MAX, errno::ERANGE)))
                } else {
                    wr_bytes(mem, buf, &name, "SYS_TMPNAM", "buffer")?;
                    Ok(Ok(0))
                }
            }
            op::REMOVE => {
                let [name, len] = block::<2>(mem, arg, "SYS_REMOVE")?;
                Ok(match self.file_name(mem, name, len, "SYS_REMOVE")? {
                    Err(f) => Err(f),
                    Ok(path) => std::fs::remove_file(path).map(|_| 0).map_err(io_fail),
                })
            }
            op::RENAME => {
                let [old, old_len, new, new_len] = block::<4>(mem, arg, "SYS_RENAME")?;
                let old = self.file_name(mem, old, old_len, "SYS_RENAME")?;
                let new = self.file_name(mem, new, new_len, "SYS_RENAME")?;
                Ok(match (old, new) {
                    (Ok(o), Ok(n)) => std::fs::rename(o, n).map(|_| 0).map_err(io_fail),
                    (Err(f), _) | (_, Err(f)) => Err(f),
                })
            }
            op::CLOCK => Ok(Ok(self.elapsed_ns().wrapping_div(10_000_000) as u32)),
            op::TIME => Ok(Ok(match self.clock {
                Clock::Host { .. } => {
                    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs() as u32).unwrap_or(0)
                }
                Clock::Retired { ips, epoch } => epoch.wrapping_add((self.retired / ips) as u32),
            })),
            op::SYSTEM => {
                // Validate the block like any other call, then refuse.
                let [_cmd, _len] = block::<2>(mem, arg, "SYS_SYSTEM")?;
                Ok(Err(Fail(u32::MAX, errno::EPERM)))
            }
            op::ERRNO => Ok(Ok(self.errno)),
            op::GET_CMDLINE => self.op_get_cmdline(mem, arg),
            op::HEAPINFO => {
                let ptr = rd32(mem, arg, "SYS_HEAPINFO", "pointer to the result block")?;
                let words = self.memory_layout();
                let mut bytes = Vec::with_capacity(16);
                for w in words {
                    bytes.extend_from_slice(&w.to_le_bytes());
                }
                wr_bytes(mem, ptr, &bytes, "SYS_HEAPINFO", "result block")?;
                Ok(Ok(0))
            }
            op::EXIT => {
                let code = if arg == ADP_STOPPED_APPLICATION_EXIT { 0 } else { 1 };
                let _ = self.flush();
                return Ok(SemihostOutcome::Exit(code));
            }
            op::EXIT_EXTENDED => {
                let [reason, code] = block::<2>(mem, arg, "SYS_EXIT_EXTENDED")?;
                let code = if reason == ADP_STOPPED_APPLICATION_EXIT { code as i32 } else { 1 };
                let _ = self.flush();
                return Ok(SemihostOutcome::Exit(code));
            }
            op::ELAPSED => {
                let ns = self.elapsed_ns();
                let mut bytes = (ns as u32).to_le_bytes().to_vec();
                bytes.extend_from_slice(&((ns >> 32) as u32).to_le_bytes());
                wr_bytes(mem, arg, &bytes, "SYS_ELAPSED", "result block")?;
                Ok(Ok(0))
            }
            op::TICKFREQ => Ok(Ok(TICK_FREQ)),
            other => Err(format!("unsupported semihosting operation {other:#x} (r1 = {arg:#010x})")),
        }?;
        cpu.r[0] = match r {
            Ok(v) => v,
            Err(Fail(v, e)) => {
                if e != 0 {
                    self.errno = e;
                }
                v
            }
        };
        Ok(SemihostOutcome::Continue)
    }

    /// Nanoseconds since the run started (the monotonic clock of a Linux program).
    pub(crate) fn elapsed_ns(&self) -> u64 {
        match self.clock {
            Clock::Host { start } => start.elapsed().as_nanos() as u64,
            Clock::Retired { ips, .. } => (self.retired as u128 * 1_000_000_000 / ips as u128) as u64,
        }
    }

    fn handle(&mut self, h: u32) -> Option<&mut Handle> {
        let i = (h as usize).checked_sub(1)?;
        self.handles.get_mut(i)?.as_mut()
    }

    /// Lowest free handle number.
    fn alloc(&mut self, h: Handle) -> u32 {
        match self.handles.iter().position(|s| s.is_none()) {
            Some(i) => {
                self.handles[i] = Some(h);
                i as u32 + 1
            }
            None => {
                self.handles.push(Some(h));
                self.handles.len() as u32
            }
        }
    }

    /// Read a file name of `len` bytes (newlib passes strlen) and resolve it against the
    /// working directory.
    fn file_name(&self, mem: &Memory, ptr: u32, len: u32, what: &str) -> Result<Result<PathBuf, Fail>, String> {
        if len > MAX_NAME {
            return Ok(Err(Fail(u32::MAX, errno::ENAMETOOLONG)));
        }
        let raw = read_cstr(mem, ptr, len, what, "file name")?;
        Ok(Ok(self.resolve(&raw)))
    }

    fn resolve(&self, raw: &[u8]) -> PathBuf {
        self.workdir.join(String::from_utf8_lossy(raw).as_ref())
    }

    fn op_open(&mut self, mem: &Memory, arg: u32) -> OpResult {
        let [name, mode, len] = block::<3>(mem, arg, "SYS_OPEN")?;
        if len > MAX_NAME {
            return Ok(Err(Fail(u32::MAX, errno::ENAMETOOLONG)));
        }
        let raw = read_cstr(mem, name, len, "SYS_OPEN", "file name")?;
        if mode >= 12 {
            return Ok(Err(Fail(u32::MAX, errno::EINVAL)));
        }
        if raw == b":tt" {
            let c = match mode {
                0..=3 => Console::In,
                4..=7 => Console::Out,
                _ => Console::Err,
            };
            return Ok(Ok(self.alloc(Handle::Console(c))));
        }
        if raw == b":semihosting-features" {
            if mode > 1 {
                return Ok(Err(Fail(u32::MAX, errno::EACCES)));
            }
            return Ok(Ok(self.alloc(Handle::Features { pos: 0 })));
        }
        let path = self.resolve(&raw);
        // Modes: r rb r+ r+b w wb w+ w+b a ab a+ a+b.
        let mut o = OpenOptions::new();
        match mode / 2 {
            0 => o.read(true),
            1 => o.read(true).write(true),
            2 => o.write(true).create(true).truncate(true),
            3 => o.read(true).write(true).create(true).truncate(true),
            4 => o.append(true).create(true),
            _ => o.read(true).append(true).create(true),
        };
        Ok(match o.open(&path) {
            Ok(f) => Ok(self.alloc(Handle::File(f))),
            Err(e) => Err(io_fail(e)),
        })
    }

    fn op_close(&mut self, mem: &Memory, arg: u32) -> OpResult {
        let [h] = block::<1>(mem, arg, "SYS_CLOSE")?;
        let slot = (h as usize).checked_sub(1).and_then(|i| self.handles.get_mut(i));
        Ok(match slot {
            Some(s @ Some(_)) => {
                // Closing a console handle never closes the host's stream.
                if let Some(Handle::Console(c)) = s.take() {
                    let _ = match c {
                        Console::Out => self.stdout.flush(),
                        Console::Err => self.stderr.flush(),
                        Console::In => Ok(()),
                    };
                }
                Ok(0)
            }
            _ => Err(Fail(u32::MAX, errno::EBADF)),
        })
    }

    /// Nanoseconds since 1970 (the realtime clock of a Linux program): the host's clock, or
    /// under a deterministic clock the epoch plus the simulated time.
    pub(crate) fn realtime_ns(&self) -> u64 {
        match self.clock {
            Clock::Host { .. } => SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0),
            Clock::Retired { epoch, .. } => (epoch as u64 * 1_000_000_000).wrapping_add(self.elapsed_ns()),
        }
    }

    /// Read from the program's stdin.
    pub(crate) fn console_read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.stdin.read(buf)
    }

    pub(crate) fn console_write(&mut self, c: Console, data: &[u8]) -> Result<(), u32> {
        let w: &mut dyn Write = match c {
            Console::Out => &mut *self.stdout,
            Console::Err => &mut *self.stderr,
            Console::In => return Err(errno::EBADF),
        };
        w.write_all(data).and_then(|_| w.flush()).map_err(|e| host_errno(&e))
    }

    fn op_write(&mut self, mem: &Memory, arg: u32) -> OpResult {
        let [h, buf, len] = block::<3>(mem, arg, "SYS_WRITE")?;
        let data = read_buf(mem, buf, len, "SYS_WRITE")?;
        let res: Result<u32, u32> = match self.handle(h) {
            None => Err(errno::EBADF),
            Some(Handle::Console(c)) => {
                let c = *c;
                self.console_write(c, &data).map(|_| len)
            }
            Some(Handle::Features { .. }) => Err(errno::EBADF),
            Some(Handle::File(f)) => f.write_all(&data).map(|_| len).map_err(|e| host_errno(&e)),
        };
        Ok(match res {
            Ok(n) => Ok(len - n),
            Err(e) => Err(Fail(len, e)),
        })
    }

    fn op_read(&mut self, mem: &mut Memory, arg: u32) -> OpResult {
        let [h, buf, len] = block::<3>(mem, arg, "SYS_READ")?;
        check_range(mem, buf, len, "SYS_READ", "buffer")?;
        let mut data = vec![0u8; len as usize];
        let res: Result<usize, u32> = match self.handle(h) {
            None => Err(errno::EBADF),
            Some(Handle::Console(Console::In)) => read_retry(&mut *self.stdin, &mut data, false),
            Some(Handle::Console(_)) => Err(errno::EBADF),
            Some(Handle::Features { pos }) => {
                let avail = FEATURES_FILE.get(*pos..).unwrap_or(&[]);
                let n = avail.len().min(data.len());
                data[..n].copy_from_slice(&avail[..n]);
                *pos += n;
                Ok(n)
            }
            Some(Handle::File(f)) => read_retry(f, &mut data, true),
        };
        Ok(match res {
            Ok(n) => {
                wr_bytes(mem, buf, &data[..n], "SYS_READ", "buffer")?;
                Ok(len - n as u32)
            }
            Err(e) => Err(Fail(len, e)),
        })
    }

    fn op_seek(&mut self, mem: &Memory, arg: u32) -> OpResult {
        let [h, pos] = block::<2>(mem, arg, "SYS_SEEK")?;
        Ok(match self.handle(h) {
            None => Err(Fail(u32::MAX, errno::EBADF)),
            Some(Handle::Console(_)) => Err(Fail(u32::MAX, errno::ESPIPE)),
            Some(Handle::Features { pos: p }) => {
                if pos as usize > FEATURES_FILE.len() {
                    Err(Fail(u32::MAX, errno::EINVAL))
                } else {
                    *p = pos as usize;
                    Ok(0)
                }
            }
            Some(Handle::File(f)) => f.seek(SeekFrom::Start(pos as u64)).map(|_| 0).map_err(io_fail),
        })
    }

    fn op_flen(&mut self, mem: &Memory, arg: u32) -> OpResult {
        let [h] = block::<1>(mem, arg, "SYS_FLEN")?;
        Ok(match self.handle(h) {
            None => Err(Fail(u32::MAX, errno::EBADF)),
            Some(Handle::Console(_)) => Ok(0),
            Some(Handle::Features { .. }) => Ok(FEATURES_FILE.len() as u32),
            Some(Handle::File(f)) => match f.metadata() {
                Ok(m) if m.len() <= i32::MAX as u64 => Ok(m.len() as u32),
                Ok(_) => Err(Fail(u32::MAX, errno::EOVERFLOW)),
                Err(e) => Err(io_fail(e)),
            },
        })
    }

    fn op_get_cmdline(&mut self, mem: &mut Memory, arg: u32) -> OpResult {
        let [buf, size] = block::<2>(mem, arg, "SYS_GET_CMDLINE")?;
        let mut line = self.cmdline.clone().into_bytes();
        line.push(0);
        if line.len() as u64 > size as u64 {
            return Ok(Err(Fail(u32::MAX, errno::E2BIG)));
        }
        let len = (line.len() - 1) as u32;
        wr_bytes(mem, arg.wrapping_add(4), &len.to_le_bytes(), "SYS_GET_CMDLINE", "parameter block")?;
        wr_bytes(mem, buf, &line, "SYS_GET_CMDLINE", "buffer")?;
        Ok(Ok(0))
    }
}

/// Read as much as is available: files are read until `buf` is full or the end; the console
/// gets one read (like a host `read()` on a pipe).
fn read_retry(r: &mut dyn Read, buf: &mut [u8], fill: bool) -> Result<usize, u32> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => {
                n += k;
                if !fill {
                    break;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(host_errno(&e)),
        }
    }
    Ok(n)
}

pub(crate) fn host_errno(e: &io::Error) -> u32 {
    e.raw_os_error().map(|v| v as u32).unwrap_or(errno::EIO)
}

fn io_fail(e: io::Error) -> Fail {
    Fail(u32::MAX, host_errno(&e))
}

fn rd32(mem: &Memory, addr: u32, op: &str, what: &str) -> Result<u32, String> {
    mem.read32(addr).map_err(|f| format!("{op}: {what} at {addr:#010x} is not mapped (fault at {:#010x})", f.addr))
}

fn rd8(mem: &Memory, addr: u32, op: &str, what: &str) -> Result<u8, String> {
    mem.read8(addr).map_err(|_| format!("{op}: {what} at {addr:#010x} is not mapped"))
}

/// The `N`-word parameter block at `addr`.
fn block<const N: usize>(mem: &Memory, addr: u32, op: &str) -> Result<[u32; N], String> {
    let mut out = [0u32; N];
    for (i, w) in out.iter_mut().enumerate() {
        *w = rd32(mem, addr.wrapping_add(4 * i as u32), op, "parameter block")
            .map_err(|_| format!("{op}: parameter block at {addr:#010x} ({N} words) is not mapped"))?;
    }
    Ok(out)
}

/// Check that `[addr, addr + len)` is mapped without touching it byte by byte.
fn check_range(mem: &Memory, addr: u32, len: u32, op: &str, what: &str) -> Result<(), String> {
    if len == 0 {
        return Ok(());
    }
    let end = addr as u64 + len as u64;
    if end > 1 << 32 {
        return Err(format!("{op}: {what} at {addr:#010x} of {len} bytes wraps around the address space"));
    }
    let mut a = addr as u64;
    while a < end {
        if !mem.is_mapped(a as u32) {
            return Err(format!("{op}: {what} at {addr:#010x} of {len} bytes is not mapped (at {a:#010x})"));
        }
        a = (a & !(PAGE_SIZE as u64 - 1)) + PAGE_SIZE as u64;
    }
    Ok(())
}

fn read_buf(mem: &Memory, addr: u32, len: u32, op: &str) -> Result<Vec<u8>, String> {
    check_range(mem, addr, len, op, "buffer")?;
    mem.read_bytes(addr, len as usize).map_err(|f| format!("{op}: buffer at {addr:#010x} is not mapped (at {:#010x})", f.addr))
}

fn wr_bytes(mem: &mut Memory, addr: u32, data: &[u8], op: &str, what: &str) -> Result<(), String> {
    mem.write_bytes(addr, data).map_err(|f| {
        format!("{op}: {what} at {addr:#010x} of {} bytes is not mapped (at {:#010x})", data.len(), f.addr)
    })
}

/// A NUL-terminated string at `addr`: at most `max` bytes are taken (a NUL ends it earlier).
fn read_cstr(mem: &Memory, addr: u32, max: u32, op: &str, what: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut a = addr;
    while (out.len() as u64) < max as u64 {
        let b = mem.read8(a).map_err(|f| format!("{op}: {what} at {addr:#010x} is not mapped (at {:#010x})", f.addr))?;
        if b == 0 {
            break;
        }
        out.push(b);
        a = a.wrapping_add(1);
        if a == addr {
            return Err(format!("{op}: {what} at {addr:#010x} has no terminating NUL"));
        }
    }
    Ok(out)
}

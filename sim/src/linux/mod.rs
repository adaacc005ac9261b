//! Linux user mode (docs/linux.md): a static ARM EABI Linux program started the way the
//! kernel starts it (stack with argv, envp and the auxiliary vector; the kernel helper
//! page) and its `svc 0` system calls served on the host. File system calls act on the
//! host's files relative to the working directory of the run; time comes from the run's
//! clock (the deterministic one in sweeps); there is one process with one thread, and
//! signals are recorded, never delivered. A call the model does not implement stops the
//! run with an error naming it: never a made-up result.
//!
//! Start-up state, memory placement and a few answers follow QEMU 7.2's linux-user (the
//! oracle of the differential test, sim/tests/qemu_linux.rs) where they decide the
//! program's control flow: the stack's place and layout, where mappings and the break go,
//! `AT_HWCAP`, and `-ENOSYS` for `set_robust_list` and `rseq`.

mod abi;
mod fs;
mod vm;

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use streamtrace_isa::linux::KUSER_TLS_WORD;
use streamtrace_isa::ElfImage;

pub use abi::syscall_name;
use abi::{at, errno, nr, put32, put64, FileStat};
use fs::{console_stat, list_dir, Fd, FileTable, Open, Pipe};
use vm::{page_up, AddressSpace};

use crate::cpu::Cpu;
use crate::memory::Memory;
use crate::semihost::{host_errno, Console, Semihost, SemihostOutcome};

/// Top of the initial stack and its size, as QEMU places it for a 32-bit guest: an 8 MiB
/// stack over a one-page guard at 0x40000000.
pub const STACK_TOP: u32 = 0x4080_1000;
pub const STACK_SIZE: u32 = 8 << 20;
const STACK_GUARD: u32 = 0x4000_0000;
/// The page QEMU maps for signal return code just below the stack (in use, never read).
const SIGTRAMP_PAGE: u32 = 0x3fff_f000;
/// `AT_HWCAP` of QEMU's pxa270: SWP, HALF, THUMB, FAST_MULT, EDSP, IWMMXT.
pub const HWCAP: u32 = 0x297;
/// `AT_PLATFORM`.
const PLATFORM: &[u8] = b"v5l\0";
/// The process and thread id the program sees.
pub const PID: u32 = 1000;
/// Longest path accepted from the program.
const PATH_MAX: usize = 4096;
/// Largest argv + envp the start-up stack takes (Linux: a quarter of the stack).
const MAX_ARG_BYTES: usize = (STACK_SIZE / 4) as usize;
/// `AT_FDCWD`.
const AT_FDCWD: u32 = -100i32 as u32;

/// The process state the system calls keep.
pub struct LinuxProcess {
    vm: AddressSpace,
    files: FileTable,
    /// Host directory relative paths resolve against (`chdir` moves it).
    cwd: PathBuf,
    /// What `/proc/self/exe` names.
    exe: PathBuf,
    comm: [u8; 16],
    umask: u32,
    sigactions: HashMap<u32, [u8; 20]>,
    sigmask: u64,
    altstack: [u8; 12],
    random: u64,
    calls: u64,
}

/// A call's result: the value for r0 (negative errno on failure), or why the run stops.
type Sys = Result<i64, String>;

fn fail(e: u32) -> Sys {
    Ok(-(e as i64))
}

fn io_err(e: &std::io::Error) -> i64 {
    -(host_errno(e) as i64)
}

impl LinuxProcess {
    /// Load `elf` into `mem`, build the start-up stack and registers in `cpu` as the kernel
    /// (QEMU's loader) would for `host.argv()` and an empty environment.
    pub fn start(elf: &ElfImage, host: &Semihost, cpu: &mut Cpu, mem: &mut Memory) -> Result<LinuxProcess, String> {
        let exec = elf.exec_info();
        if let Some(interp) = &exec.interp {
            return Err(format!(
                "{} is dynamically linked (it asks for the loader {interp}); the core model runs static programs only: link with -static",
                elf.source()
            ));
        }
        mem.load_image(elf.memory()).map_err(|f| format!("{}: loading at {:#010x} failed", elf.source(), f.addr))?;
        let program_end = elf
            .memory()
            .segments()
            .iter()
            .filter(|s| s.base() < streamtrace_isa::linux::KUSER_PAGE)
            .map(|s| s.end())
            .max()
            .unwrap_or(0);
        let mut vm = AddressSpace::new(page_up(program_end), SIGTRAMP_PAGE as u64);
        for s in elf.memory().segments() {
            vm.reserve(s.base() as u64, s.end());
        }
        vm.reserve(STACK_GUARD as u64, STACK_TOP as u64);
        vm.reserve(SIGTRAMP_PAGE as u64, STACK_GUARD as u64);
        mem.map_region(STACK_TOP - STACK_SIZE, STACK_SIZE as u64);

        let argv: Vec<Vec<u8>> = host.argv().iter().map(|a| a.as_bytes().to_vec()).collect();
        if argv.is_empty() {
            return Err("a Linux program needs argv[0]".into());
        }
        if argv.iter().map(|a| a.len() + 1).sum::<usize>() > MAX_ARG_BYTES {
            return Err(format!("the arguments take more than {MAX_ARG_BYTES} bytes of the start-up stack"));
        }
        let exe = std::fs::canonicalize(elf.source()).unwrap_or_else(|_| PathBuf::from(elf.source()));
        let mut comm = [0u8; 16];
        let base = Path::new(elf.source()).file_name().map(|n| n.as_encoded_bytes().to_vec()).unwrap_or_default();
        comm[..base.len().min(15)].copy_from_slice(&base[..base.len().min(15)]);
        let mut p = LinuxProcess {
            vm,
            files: FileTable::with_console(),
            cwd: host.workdir().to_path_buf(),
            exe,
            comm,
            umask: 0o022,
            sigactions: HashMap::new(),
            sigmask: 0,
            altstack: [0; 12],
            random: 0x5eed_5eed_1234_5678,
            calls: 0,
        };
        put32(&mut p.altstack, 4, 2); // SS_DISABLE

        // Strings from the top: QEMU leaves a host pointer's width (8 bytes) free, then the
        // file name (AT_EXECFN, argv[0] as given), the environment (empty), the arguments.
        let w = |mem: &mut Memory, at: u32, b: &[u8]| mem.write_bytes(at, b).map_err(|f| format!("start-up stack fault at {:#010x}", f.addr));
        let mut sp = STACK_TOP - 8;
        let cstr = |s: &[u8]| [s, b"\0"].concat();
        sp -= argv[0].len() as u32 + 1;
        let execfn = sp;
        w(mem, sp, &cstr(&argv[0]))?;
        let mut arg_ptrs = vec![0u32; argv.len()];
        for (i, a) in argv.iter().enumerate().rev() {
            sp -= a.len() as u32 + 1;
            arg_ptrs[i] = sp;
            w(mem, sp, &cstr(a))?;
        }
        sp -= (PLATFORM.len() as u32 + 3) & !3;
        let platform = sp;
        w(mem, sp, PLATFORM)?;
        sp = (sp & !15) - 16;
        let random = sp;
        let mut rand = [0u8; 16];
        p.fill_random(&mut rand);
        w(mem, sp, &rand)?;
        let entry = elf.entry();
        let auxv: [(u32, u32); 19] = [
            (at::PHDR, exec.phdr),
            (at::PHENT, exec.phent as u32),
            (at::PHNUM, exec.phnum as u32),
            (at::PAGESZ, 4096),
            (at::BASE, 0),
            (at::FLAGS, 0),
            (at::ENTRY, entry),
            (at::UID, 0),
            (at::EUID, 0),
            (at::GID, 0),
            (at::EGID, 0),
            (at::HWCAP, HWCAP),
            (at::CLKTCK, 100),
            (at::RANDOM, random),
            (at::SECURE, 0),
            (at::EXECFN, execfn),
            (at::HWCAP2, 0),
            (at::PLATFORM, platform),
            (at::NULL, 0),
        ];
        let words = 1 + argv.len() + 1 + 1 + 2 * auxv.len();
        sp = (sp - 4 * words as u32) & !15;
        let mut table = Vec::with_capacity(words);
        table.push(argv.len() as u32);
        table.extend(&arg_ptrs);
        table.push(0); // end of argv
        table.push(0); // end of (the empty) envp
        for (k, v) in auxv {
            table.extend([k, v]);
        }
        let bytes: Vec<u8> = table.iter().flat_map(|v| v.to_le_bytes()).collect();
        w(mem, sp, &bytes)?;

        cpu.r = [0; 16];
        cpu.r[1] = arg_ptrs[0];
        cpu.r[2] = arg_ptrs.get(1).copied().unwrap_or(0);
        cpu.r[10] = exec.start_data;
        cpu.r[13] = sp;
        cpu.r[15] = entry & !1;
        cpu.thumb = entry & 1 == 1;
        Ok(p)
    }

    /// System calls served so far.
    pub fn calls(&self) -> u64 {
        self.calls
    }

    /// The current program break.
    pub fn brk(&self) -> u32 {
        self.vm.brk as u32
    }

    /// Deterministic bytes (`AT_RANDOM`, `getrandom`): xorshift64*.
    fn fill_random(&mut self, out: &mut [u8]) {
        for chunk in out.chunks_mut(8) {
            let mut x = self.random;
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            self.random = x;
            let v = x.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }

    /// Serve the `svc` just executed: number in r7, arguments in r0-r5, result to r0.
    pub fn syscall(&mut self, cpu: &mut Cpu, mem: &mut Memory, host: &mut Semihost) -> Result<SemihostOutcome, String> {
        self.calls += 1;
        let n = cpu.r[7];
        let a = [cpu.r[0], cpu.r[1], cpu.r[2], cpu.r[3], cpu.r[4], cpu.r[5]];
        let value = match n {
            nr::EXIT | nr::EXIT_GROUP => return Ok(SemihostOutcome::Exit((a[0] & 0xff) as i32)),
            nr::KILL | nr::TKILL | nr::TGKILL => match kill(n, a, host) {
                Ok(v) => v,
                Err(status) => return Ok(SemihostOutcome::Exit(status)),
            },
            _ => self.dispatch(n, a, mem, host)?,
        };
        cpu.r[0] = value as u32;
        Ok(SemihostOutcome::Continue)
    }

    /// Every call but the ones that end the program: the value for r0.
    fn dispatch(&mut self, n: u32, a: [u32; 6], mem: &mut Memory, host: &mut Semihost) -> Sys {
        match n {
            nr::READ => self.read(a[0], a[1], a[2], mem, host),
            nr::WRITE => self.write(a[0], a[1], a[2], mem, host),
            nr::READV | nr::WRITEV => self.vector_io(n == nr::WRITEV, a[0], a[1], a[2], mem, host),
            nr::PREAD64 | nr::PWRITE64 => self.positional_io(n == nr::PWRITE64, a, mem),
            nr::SENDFILE64 => self.sendfile(a[0], a[1], a[2], a[3], mem, host),
            nr::OPEN => self.open(AT_FDCWD, a[0], a[1], a[2], mem),
            nr::OPENAT => self.open(a[0], a[1], a[2], a[3], mem),
            nr::CLOSE => Ok(if self.files.close(a[0]) { 0 } else { -(errno::EBADF as i64) }),
            nr::LSEEK => self.seek(a[0], a[1] as i32 as i64, a[2]),
            nr::LLSEEK => {
                let off = ((a[1] as u64) << 32 | a[2] as u64) as i64;
                match self.seek(a[0], off, a[4])? {
                    r if r < 0 => Ok(r),
                    r => Ok(if mem.write_bytes(a[3], &(r as u64).to_le_bytes()).is_ok() { 0 } else { -(errno::EFAULT as i64) }),
                }
            }
            nr::STAT64 | nr::LSTAT64 => self.stat_path(AT_FDCWD, a[0], a[1], if n == nr::LSTAT64 { 0x100 } else { 0 }, false, mem),
            nr::FSTATAT64 => self.stat_path(a[0], a[1], a[2], a[3], false, mem),
            nr::STATX => self.stat_path(a[0], a[1], a[4], a[2], true, mem),
            nr::FSTAT64 => match self.fd_stat(a[0]) {
                Ok(st) => write_out(mem, a[1], &st.stat64()),
                Err(e) => Ok(e),
            },
            nr::READLINK => self.readlink(AT_FDCWD, a[0], a[1], a[2], mem),
            nr::READLINKAT => self.readlink(a[0], a[1], a[2], a[3], mem),
            nr::GETDENTS64 => self.getdents64(a[0], a[1], a[2], mem),
            nr::ACCESS => self.access(AT_FDCWD, a[0], a[1], mem),
            nr::FACCESSAT | nr::FACCESSAT2 => self.access(a[0], a[1], a[2], mem),
            nr::UNLINK => self.unlink(AT_FDCWD, a[0], 0, mem),
            nr::UNLINKAT => self.unlink(a[0], a[1], a[2], mem),
            nr::RMDIR => self.unlink(AT_FDCWD, a[0], 0x200, mem),
            nr::RENAME => self.rename(AT_FDCWD, a[0], AT_FDCWD, a[1], mem),
            nr::RENAMEAT => self.rename(a[0], a[1], a[2], a[3], mem),
            nr::RENAMEAT2 if a[4] == 0 => self.rename(a[0], a[1], a[2], a[3], mem),
            nr::MKDIR => self.mkdir(AT_FDCWD, a[0], a[1], mem),
            nr::MKDIRAT => self.mkdir(a[0], a[1], a[2], mem),
            nr::CHDIR => self.chdir(a[0], mem),
            nr::GETCWD => self.getcwd(a[0], a[1], mem),
            nr::CHMOD => self.chmod(AT_FDCWD, a[0], a[1], mem),
            nr::FCHMODAT => self.chmod(a[0], a[1], a[2], mem),
            nr::FCHMOD => match self.file_of(a[0]) {
                Some(desc) => with_file(&desc, |f| f.set_permissions(std::fs::Permissions::from_mode(a[1] & 0o7777)).map(|_| 0)),
                None => fail(errno::EBADF),
            },
            nr::FTRUNCATE => self.truncate(a[0], a[1] as u64),
            nr::FTRUNCATE64 => self.truncate(a[0], (a[3] as u64) << 32 | a[2] as u64),
            nr::FSYNC | nr::FDATASYNC => Ok(if self.files.get(a[0]).is_some() { 0 } else { -(errno::EBADF as i64) }),
            nr::UMASK => {
                let old = self.umask;
                self.umask = a[0] & 0o777;
                Ok(old as i64)
            }
            nr::BRK => Ok(self.vm.set_brk(a[0] as u64, mem) as i64),
            nr::MMAP2 => self.mmap(a, mem),
            nr::MUNMAP => self.munmap(a[0], a[1], mem),
            nr::MREMAP => self.mremap(a, mem),
            nr::MPROTECT => {
                let end = a[0] as u64 + page_up(a[1] as u64);
                Ok(if !a[0].is_multiple_of(4096) {
                    -(errno::EINVAL as i64)
                } else if self.vm.all_used(a[0] as u64, end) {
                    0
                } else {
                    -(errno::ENOMEM as i64)
                })
            }
            nr::MADVISE => Ok(0),
            nr::UNAME => {
                let mut b = [0u8; 6 * 65];
                for (i, f) in ["Linux", "streamtrace", "6.1.0", "#1 streamtrace", "armv5tel", "(none)"].iter().enumerate() {
                    b[65 * i..65 * i + f.len()].copy_from_slice(f.as_bytes());
                }
                write_out(mem, a[0], &b)
            }
            nr::SYSINFO => {
                let mut b = [0u8; 64];
                put32(&mut b, 0, (host.elapsed_ns() / 1_000_000_000) as u32);
                put32(&mut b, 16, 512 << 20); // totalram
                put32(&mut b, 20, 256 << 20); // freeram
                b[40..42].copy_from_slice(&1u16.to_le_bytes()); // procs
                put32(&mut b, 52, 1); // mem_unit
                write_out(mem, a[0], &b)
            }
            nr::IOCTL => self.ioctl(a[0], a[1], a[2], mem),
            nr::FCNTL64 => self.fcntl(a[0], a[1], a[2], mem),
            nr::DUP => match self.files.get(a[0]).cloned() {
                Some(fd) => Ok(self.files.install(Fd { cloexec: false, ..fd }, 0).map_or(-(errno::EMFILE as i64), |n| n as i64)),
                None => fail(errno::EBADF),
            },
            nr::DUP2 | nr::DUP3 => self.dup_to(a[0], a[1], if n == nr::DUP3 { Some(a[2]) } else { None }),
            nr::PIPE | nr::PIPE2 => self.pipe(a[0], if n == nr::PIPE2 { a[1] } else { 0 }, mem),
            nr::GETPID | nr::GETTID | nr::GETPGRP | nr::GETPGID | nr::GETSID => Ok(PID as i64),
            nr::GETPPID => Ok(PID as i64 - 1),
            // No child ever exists (no fork or clone).
            nr::WAIT4 => fail(errno::ECHILD),
            nr::GETUID32 | nr::GETGID32 | nr::GETEUID32 | nr::GETEGID32 => Ok(0),
            nr::GETRESUID32 | nr::GETRESGID32 => {
                if a[..3].iter().all(|&p| mem.write32(p, 0).is_ok()) {
                    Ok(0)
                } else {
                    fail(errno::EFAULT)
                }
            }
            nr::GETGROUPS32 => Ok(0),
            nr::ARM_SET_TLS => {
                mem.write32(KUSER_TLS_WORD, a[0]).map_err(|_| "the kernel helper page is not mapped".to_string())?;
                Ok(0)
            }
            nr::ARM_CACHEFLUSH => Ok(0),
            // The address would be cleared when the thread exits; no one else could watch it.
            nr::SET_TID_ADDRESS => Ok(PID as i64),
            // As QEMU 7.2 answers them (glibc carries on without either).
            nr::SET_ROBUST_LIST | nr::RSEQ => fail(errno::ENOSYS),
            nr::RT_SIGACTION => self.sigaction(a[0], a[1], a[2], mem),
            nr::RT_SIGPROCMASK => self.sigprocmask(a[0], a[1], a[2], mem),
            nr::SIGALTSTACK => {
                if a[1] != 0 && mem.write_bytes(a[1], &self.altstack).is_err() {
                    return fail(errno::EFAULT);
                }
                if a[0] != 0 {
                    match mem.read_bytes(a[0], 12) {
                        Ok(b) => self.altstack.copy_from_slice(&b),
                        Err(_) => return fail(errno::EFAULT),
                    }
                }
                Ok(0)
            }
            nr::CLOCK_GETTIME | nr::CLOCK_GETTIME64 => {
                let Some(ns) = clock_ns(a[0], host) else { return fail(errno::EINVAL) };
                write_timespec(mem, a[1], ns, n == nr::CLOCK_GETTIME64)
            }
            nr::CLOCK_GETRES | nr::CLOCK_GETRES_TIME64 => {
                if clock_ns(a[0], host).is_none() {
                    return fail(errno::EINVAL);
                }
                if a[1] == 0 { Ok(0) } else { write_timespec(mem, a[1], 1, n == nr::CLOCK_GETRES_TIME64) }
            }
            nr::GETTIMEOFDAY => {
                let ns = host.realtime_ns();
                let mut b = [0u8; 8];
                put32(&mut b, 0, (ns / 1_000_000_000) as u32);
                put32(&mut b, 4, (ns % 1_000_000_000 / 1000) as u32);
                if a[1] != 0 && mem.write_bytes(a[1], &[0; 8]).is_err() {
                    return fail(errno::EFAULT);
                }
                if a[0] == 0 { Ok(0) } else { write_out(mem, a[0], &b) }
            }
            // Time is the run's clock; a sleep passes no simulated time.
            nr::NANOSLEEP | nr::CLOCK_NANOSLEEP_TIME64 => Ok(0),
            nr::GETRANDOM => {
                let len = a[1].min(1 << 20) as usize;
                let mut b = vec![0u8; len];
                self.fill_random(&mut b);
                match mem.write_bytes(a[0], &b) {
                    Ok(()) => Ok(len as i64),
                    Err(_) => fail(errno::EFAULT),
                }
            }
            nr::PRLIMIT64 => {
                if a[0] != 0 && a[0] != PID {
                    return fail(errno::ESRCH);
                }
                let (cur, max) = rlimit(a[1]);
                if a[3] == 0 {
                    return Ok(0);
                }
                let mut b = [0u8; 16];
                put64(&mut b, 0, cur);
                put64(&mut b, 8, max);
                write_out(mem, a[3], &b)
            }
            nr::UGETRLIMIT => {
                let (cur, max) = rlimit(a[0]);
                let mut b = [0u8; 8];
                put32(&mut b, 0, cur.min(u32::MAX as u64) as u32);
                put32(&mut b, 4, max.min(u32::MAX as u64) as u32);
                write_out(mem, a[1], &b)
            }
            nr::PRCTL => match a[0] {
                15 => match mem.read_bytes(a[1], 16) {
                    // PR_SET_NAME
                    Ok(b) => {
                        let len = b.iter().position(|&c| c == 0).unwrap_or(15).min(15);
                        self.comm = [0; 16];
                        self.comm[..len].copy_from_slice(&b[..len]);
                        Ok(0)
                    }
                    Err(_) => fail(errno::EFAULT),
                },
                16 => write_out(mem, a[1], &self.comm.clone()), // PR_GET_NAME
                3 => Ok(1),                                     // PR_GET_DUMPABLE
                4 => Ok(0),                                     // PR_SET_DUMPABLE
                op => Err(format!("prctl option {op} is not implemented by the model")),
            },
            nr::FUTEX => match a[1] & 0x7f {
                1 => Ok(0), // FUTEX_WAKE: nobody else waits in a single-threaded process
                0 => match mem.read32(a[0]) {
                    Ok(v) if v != a[2] => fail(11), // EAGAIN
                    Ok(_) => Err("futex wait in a single-threaded process would never return".into()),
                    Err(_) => fail(errno::EFAULT),
                },
                op => Err(format!("futex operation {op} is not implemented by the model")),
            },
            _ => Err(match syscall_name(n) {
                Some(name) => format!("system call {n} ({name}) is not implemented by the model"),
                None => format!("unknown system call {n} ({n:#x})"),
            }),
        }
    }

    fn file_of(&self, fd: u32) -> Option<fs::Shared> {
        self.files.get(fd).map(|f| f.desc.clone())
    }

    /// A path argument, resolved against `dirfd` (or the working directory).
    fn path(&self, dirfd: u32, ptr: u32, mem: &Memory) -> Result<PathBuf, i64> {
        let raw = mem.read_cstr(ptr, PATH_MAX + 1).map_err(|_| -(errno::EFAULT as i64))?;
        if raw.len() > PATH_MAX {
            return Err(-(errno::ENAMETOOLONG as i64));
        }
        let p = Path::new(std::ffi::OsStr::from_bytes(&raw));
        if p.is_absolute() {
            return Ok(p.to_path_buf());
        }
        if dirfd == AT_FDCWD {
            return Ok(self.cwd.join(p));
        }
        let desc = self.file_of(dirfd).ok_or(-(errno::EBADF as i64))?;
        let d = desc.lock().map_err(|_| -(errno::EIO as i64))?;
        match &d.open {
            Open::Dir { path, .. } => Ok(path.join(p)),
            _ => Err(-(errno::ENOTDIR as i64)),
        }
    }

    fn read(&mut self, fd: u32, buf: u32, count: u32, mem: &mut Memory, host: &mut Semihost) -> Sys {
        let mut at = buf;
        self.read_chunks(fd, count, host, &mut |chunk| {
            let ok = mem.write_bytes(at, chunk).is_ok();
            at = at.wrapping_add(chunk.len() as u32);
            ok
        })
    }

    /// Read up to `count` bytes from `fd` in chunks (a large count allocates nothing up
    /// front), giving each to `take`, which answers whether it could store it. A regular
    /// file and the console give as much as they have, a pipe what is in it. The bytes
    /// taken, or a negative errno (`EFAULT` when `take` refuses the first chunk).
    fn read_chunks(&mut self, fd: u32, count: u32, host: &mut Semihost, take: &mut dyn FnMut(&[u8]) -> bool) -> Sys {
        let Some(desc) = self.file_of(fd) else { return fail(errno::EBADF) };
        let mut d = desc.lock().map_err(|_| "file table poisoned")?;
        if d.flags & 3 == 1 {
            return fail(errno::EBADF);
        }
        let mut done = 0u32;
        let mut chunk = vec![0u8; count.min(64 << 10) as usize];
        while done < count {
            let want = (count - done).min(chunk.len() as u32) as usize;
            let got = match &mut d.open {
                Open::Console(Console::In) => host.console_read(&mut chunk[..want]),
                Open::Console(_) => return fail(errno::EBADF),
                Open::File(file) => file.read(&mut chunk[..want]),
                Open::Dir { .. } => return fail(errno::EISDIR),
                Open::PipeRead(p) => {
                    let mut p = p.lock().map_err(|_| "pipe poisoned")?;
                    if p.data.is_empty() && p.writers > 0 && done == 0 {
                        return Err("read from an empty pipe whose write end is open would block forever (one process, one thread)".into());
                    }
                    let n = want.min(p.data.len());
                    for (i, b) in p.data.drain(..n).enumerate() {
                        chunk[i] = b;
                    }
                    Ok(n)
                }
                Open::PipeWrite(_) => return fail(errno::EBADF),
            };
            let n = match got {
                Ok(n) => n,
                Err(e) if done == 0 => return Ok(io_err(&e)),
                Err(_) => break,
            };
            if !take(&chunk[..n]) {
                return if done == 0 { fail(errno::EFAULT) } else { Ok(done as i64) };
            }
            done += n as u32;
            if n < want || matches!(d.open, Open::PipeRead(_)) {
                break;
            }
        }
        Ok(done as i64)
    }

    /// sendfile64(out, in, &offset or 0, count): at most 64 MiB per call (the caller loops
    /// on a short count, as it must for any sendfile).
    fn sendfile(&mut self, out: u32, input: u32, offp: u32, count: u32, mem: &mut Memory, host: &mut Semihost) -> Sys {
        let count = count.min(64 << 20);
        let mut data = Vec::new();
        let offset = if offp != 0 {
            let Ok(b) = mem.read_bytes(offp, 8) else { return fail(errno::EFAULT) };
            let off = u64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
            let Some(desc) = self.file_of(input) else { return fail(errno::EBADF) };
            let d = desc.lock().map_err(|_| "file table poisoned")?;
            let Open::File(file) = &d.open else { return fail(errno::EINVAL) };
            data.resize(count as usize, 0);
            let mut done = 0;
            while done < data.len() {
                match file.read_at(&mut data[done..], off + done as u64) {
                    Ok(0) => break,
                    Ok(n) => done += n,
                    Err(e) => return Ok(io_err(&e)),
                }
            }
            data.truncate(done);
            Some(off)
        } else {
            let r = self.read_chunks(input, count, host, &mut |c| {
                data.extend_from_slice(c);
                true
            })?;
            if r < 0 {
                return Ok(r);
            }
            None
        };
        let r = self.write_bytes_to(out, &data, host)?;
        if let (Some(off), true) = (offset, r >= 0) {
            if mem.write_bytes(offp, &(off + r as u64).to_le_bytes()).is_err() {
                return fail(errno::EFAULT);
            }
        }
        Ok(r)
    }

    fn write_bytes_to(&mut self, fd: u32, data: &[u8], host: &mut Semihost) -> Sys {
        let Some(desc) = self.file_of(fd) else { return fail(errno::EBADF) };
        let mut d = desc.lock().map_err(|_| "file table poisoned")?;
        if d.flags & 3 == 0 && !matches!(d.open, Open::Console(_) | Open::PipeWrite(_)) {
            return fail(errno::EBADF);
        }
        match &mut d.open {
            Open::Console(Console::In) => fail(errno::EBADF),
            Open::Console(c) => Ok(match host.console_write(*c, data) {
                Ok(()) => data.len() as i64,
                Err(e) => -(e as i64),
            }),
            Open::File(file) => Ok(file.write_all(data).map_or_else(|e| io_err(&e), |_| data.len() as i64)),
            Open::Dir { .. } => fail(errno::EISDIR),
            Open::PipeWrite(p) => {
                p.lock().map_err(|_| "pipe poisoned")?.data.extend(data);
                Ok(data.len() as i64)
            }
            Open::PipeRead(_) => fail(errno::EBADF),
        }
    }

    fn write(&mut self, fd: u32, buf: u32, count: u32, mem: &Memory, host: &mut Semihost) -> Sys {
        let mut done = 0u32;
        while done < count {
            let n = (count - done).min(1 << 20);
            let Ok(data) = mem.read_bytes(buf.wrapping_add(done), n as usize) else {
                return if done == 0 { fail(errno::EFAULT) } else { Ok(done as i64) };
            };
            match self.write_bytes_to(fd, &data, host)? {
                r if r < 0 => return if done == 0 { Ok(r) } else { Ok(done as i64) },
                _ => done += n,
            }
        }
        if count == 0 {
            return self.write_bytes_to(fd, &[], host);
        }
        Ok(done as i64)
    }

    fn vector_io(&mut self, write: bool, fd: u32, iov: u32, cnt: u32, mem: &mut Memory, host: &mut Semihost) -> Sys {
        if cnt > 1024 {
            return fail(errno::EINVAL);
        }
        let mut total = 0i64;
        for i in 0..cnt {
            let (Ok(base), Ok(len)) = (mem.read32(iov + 8 * i), mem.read32(iov + 8 * i + 4)) else { return fail(errno::EFAULT) };
            if len == 0 {
                continue;
            }
            let r = if write { self.write(fd, base, len, mem, host)? } else { self.read(fd, base, len, mem, host)? };
            if r < 0 {
                return Ok(if total > 0 { total } else { r });
            }
            total += r;
            if r < len as i64 {
                break;
            }
        }
        Ok(total)
    }

    /// pread64/pwrite64: fd, buf, count, (pad), offset in r4:r5.
    fn positional_io(&mut self, write: bool, a: [u32; 6], mem: &mut Memory) -> Sys {
        let off = (a[5] as u64) << 32 | a[4] as u64;
        let Some(desc) = self.file_of(a[0]) else { return fail(errno::EBADF) };
        let d = desc.lock().map_err(|_| "file table poisoned")?;
        let Open::File(file) = &d.open else { return fail(errno::ESPIPE) };
        let count = a[2].min(16 << 20) as usize;
        if write {
            let Ok(data) = mem.read_bytes(a[1], count) else { return fail(errno::EFAULT) };
            Ok(file.write_at(&data, off).map_or_else(|e| io_err(&e), |n| n as i64))
        } else {
            let mut buf = vec![0u8; count];
            let mut done = 0;
            while done < count {
                match file.read_at(&mut buf[done..], off + done as u64) {
                    Ok(0) => break,
                    Ok(n) => done += n,
                    Err(e) => return Ok(io_err(&e)),
                }
            }
            Ok(if mem.write_bytes(a[1], &buf[..done]).is_ok() { done as i64 } else { -(errno::EFAULT as i64) })
        }
    }

    fn open(&mut self, dirfd: u32, ptr: u32, flags: u32, mode: u32, mem: &Memory) -> Sys {
        // ARM's O_* values (O_DIRECTORY and O_NOFOLLOW differ from x86's).
        const O_CREAT: u32 = 0o100;
        const O_EXCL: u32 = 0o200;
        const O_TRUNC: u32 = 0o1000;
        const O_APPEND: u32 = 0o2000;
        const O_DIRECTORY: u32 = 0o40000;
        const O_CLOEXEC: u32 = 0o2000000;
        let path = match self.path(dirfd, ptr, mem) {
            Ok(p) => p,
            Err(e) => return Ok(e),
        };
        let acc = flags & 3;
        if acc == 3 {
            return fail(errno::EINVAL);
        }
        let is_dir = std::fs::metadata(&path).is_ok_and(|m| m.is_dir());
        let open = if is_dir {
            if acc != 0 || flags & O_CREAT != 0 {
                return fail(errno::EISDIR);
            }
            Open::Dir { path, entries: None, pos: 0 }
        } else {
            if flags & O_DIRECTORY != 0 {
                return Ok(if path.exists() { -(errno::ENOTDIR as i64) } else { -(errno::ENOENT as i64) });
            }
            let mut o = std::fs::OpenOptions::new();
            o.read(acc != 1).write(acc != 0).append(flags & O_APPEND != 0).truncate(flags & O_TRUNC != 0 && acc != 0);
            if flags & O_CREAT != 0 {
                if flags & O_EXCL != 0 {
                    o.create_new(true);
                } else {
                    o.create(true);
                }
                o.mode(mode & 0o7777 & !self.umask);
            }
            match o.open(&path) {
                Ok(file) => Open::File(file),
                Err(e) => return Ok(io_err(&e)),
            }
        };
        let keep = flags & !(O_CREAT | O_EXCL | O_TRUNC | O_CLOEXEC);
        Ok(self.files.open(open, keep, flags & O_CLOEXEC != 0).map_or(-(errno::EMFILE as i64), |n| n as i64))
    }

    fn seek(&mut self, fd: u32, off: i64, whence: u32) -> Sys {
        let Some(desc) = self.file_of(fd) else { return fail(errno::EBADF) };
        let mut d = desc.lock().map_err(|_| "file table poisoned")?;
        match &mut d.open {
            Open::File(file) => {
                let to = match whence {
                    0 if off >= 0 => SeekFrom::Start(off as u64),
                    1 => SeekFrom::Current(off),
                    2 => SeekFrom::End(off),
                    _ => return fail(errno::EINVAL),
                };
                Ok(file.seek(to).map_or_else(|e| io_err(&e), |p| p as i64))
            }
            Open::Dir { pos, .. } if whence == 0 && off == 0 => {
                *pos = 0;
                Ok(0)
            }
            Open::Dir { .. } => fail(errno::EINVAL),
            _ => fail(errno::ESPIPE),
        }
    }

    fn fd_stat(&self, fd: u32) -> Result<FileStat, i64> {
        let desc = self.file_of(fd).ok_or(-(errno::EBADF as i64))?;
        let d = desc.lock().map_err(|_| -(errno::EIO as i64))?;
        match &d.open {
            Open::Console(_) | Open::PipeRead(_) | Open::PipeWrite(_) => Ok(console_stat()),
            Open::File(file) => file.metadata().map(|m| FileStat::from_metadata(&m)).map_err(|e| io_err(&e)),
            Open::Dir { path, .. } => std::fs::metadata(path).map(|m| FileStat::from_metadata(&m)).map_err(|e| io_err(&e)),
        }
    }

    /// stat64/lstat64/fstatat64/statx: `flags` AT_SYMLINK_NOFOLLOW 0x100, AT_EMPTY_PATH 0x1000.
    fn stat_path(&self, dirfd: u32, ptr: u32, buf: u32, flags: u32, statx: bool, mem: &mut Memory) -> Sys {
        let empty = mem.read8(ptr).map(|b| b == 0).unwrap_or(false);
        let st = if empty && flags & 0x1000 != 0 {
            if dirfd == AT_FDCWD {
                std::fs::metadata(&self.cwd).map(|m| FileStat::from_metadata(&m)).map_err(|e| io_err(&e))
            } else {
                self.fd_stat(dirfd)
            }
        } else {
            match self.path(dirfd, ptr, mem) {
                Ok(p) => {
                    let m = if flags & 0x100 != 0 { std::fs::symlink_metadata(&p) } else { std::fs::metadata(&p) };
                    m.map(|m| FileStat::from_metadata(&m)).map_err(|e| io_err(&e))
                }
                Err(e) => Err(e),
            }
        };
        match st {
            Ok(st) if statx => write_out(mem, buf, &st.statx()),
            Ok(st) => write_out(mem, buf, &st.stat64()),
            Err(e) => Ok(e),
        }
    }

    fn readlink(&self, dirfd: u32, ptr: u32, buf: u32, size: u32, mem: &mut Memory) -> Sys {
        let path = match self.path(dirfd, ptr, mem) {
            Ok(p) => p,
            Err(e) => return Ok(e),
        };
        let target = if path == Path::new("/proc/self/exe") {
            self.exe.clone()
        } else {
            match std::fs::read_link(&path) {
                Ok(t) => t,
                Err(e) => return Ok(io_err(&e)),
            }
        };
        if size == 0 || size > i32::MAX as u32 {
            return fail(errno::EINVAL);
        }
        let bytes = target.as_os_str().as_encoded_bytes();
        let n = bytes.len().min(size as usize);
        Ok(if mem.write_bytes(buf, &bytes[..n]).is_ok() { n as i64 } else { -(errno::EFAULT as i64) })
    }

    fn getdents64(&mut self, fd: u32, buf: u32, count: u32, mem: &mut Memory) -> Sys {
        let Some(desc) = self.file_of(fd) else { return fail(errno::EBADF) };
        let mut d = desc.lock().map_err(|_| "file table poisoned")?;
        let Open::Dir { path, entries, pos } = &mut d.open else { return fail(errno::ENOTDIR) };
        if entries.is_none() {
            match list_dir(path) {
                Ok(e) => *entries = Some(e),
                Err(e) => return Ok(io_err(&e)),
            }
        }
        let list = entries.as_ref().map_or(&[][..], |v| &v[..]);
        let mut out = Vec::new();
        while let Some(e) = list.get(*pos) {
            let name = e.name.as_encoded_bytes();
            let reclen = (19 + name.len() + 1).next_multiple_of(8);
            if out.len() + reclen > count as usize {
                if out.is_empty() {
                    return fail(errno::EINVAL);
                }
                break;
            }
            let mut rec = vec![0u8; reclen];
            put64(&mut rec, 0, e.ino);
            put64(&mut rec, 8, *pos as u64 + 1);
            rec[16..18].copy_from_slice(&(reclen as u16).to_le_bytes());
            rec[18] = e.kind;
            rec[19..19 + name.len()].copy_from_slice(name);
            out.extend(rec);
            *pos += 1;
        }
        Ok(if mem.write_bytes(buf, &out).is_ok() { out.len() as i64 } else { -(errno::EFAULT as i64) })
    }

    fn access(&self, dirfd: u32, ptr: u32, mode: u32, mem: &Memory) -> Sys {
        let path = match self.path(dirfd, ptr, mem) {
            Ok(p) => p,
            Err(e) => return Ok(e),
        };
        Ok(match std::fs::metadata(&path) {
            // The program runs as root: only execute permission can be missing.
            Ok(m) if mode & 1 != 0 && !m.is_dir() && m.permissions().mode() & 0o111 == 0 => -13, // EACCES
            Ok(_) => 0,
            Err(e) => io_err(&e),
        })
    }

    fn unlink(&self, dirfd: u32, ptr: u32, flags: u32, mem: &Memory) -> Sys {
        let path = match self.path(dirfd, ptr, mem) {
            Ok(p) => p,
            Err(e) => return Ok(e),
        };
        let r = if flags & 0x200 != 0 { std::fs::remove_dir(&path) } else { std::fs::remove_file(&path) };
        Ok(r.map_or_else(|e| io_err(&e), |_| 0))
    }

    fn rename(&self, olddir: u32, old: u32, newdir: u32, new: u32, mem: &Memory) -> Sys {
        let (o, n) = match (self.path(olddir, old, mem), self.path(newdir, new, mem)) {
            (Ok(o), Ok(n)) => (o, n),
            (Err(e), _) | (_, Err(e)) => return Ok(e),
        };
        Ok(std::fs::rename(o, n).map_or_else(|e| io_err(&e), |_| 0))
    }

    fn mkdir(&self, dirfd: u32, ptr: u32, mode: u32, mem: &Memory) -> Sys {
        let path = match self.path(dirfd, ptr, mem) {
            Ok(p) => p,
            Err(e) => return Ok(e),
        };
        use std::os::unix::fs::DirBuilderExt;
        Ok(std::fs::DirBuilder::new().mode(mode & 0o7777 & !self.umask).create(&path).map_or_else(|e| io_err(&e), |_| 0))
    }

    fn chmod(&self, dirfd: u32, ptr: u32, mode: u32, mem: &Memory) -> Sys {
        let path = match self.path(dirfd, ptr, mem) {
            Ok(p) => p,
            Err(e) => return Ok(e),
        };
        Ok(std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode & 0o7777)).map_or_else(|e| io_err(&e), |_| 0))
    }

    fn chdir(&mut self, ptr: u32, mem: &Memory) -> Sys {
        let path = match self.path(AT_FDCWD, ptr, mem) {
            Ok(p) => p,
            Err(e) => return Ok(e),
        };
        match std::fs::metadata(&path) {
            Ok(m) if m.is_dir() => {
                self.cwd = path;
                Ok(0)
            }
            Ok(_) => fail(errno::ENOTDIR),
            Err(e) => Ok(io_err(&e)),
        }
    }

    fn getcwd(&self, buf: u32, size: u32, mem: &mut Memory) -> Sys {
        let cwd = std::fs::canonicalize(&self.cwd).map_err(|e| format!("the working directory {}: {e}", self.cwd.display()))?;
        let mut bytes = cwd.as_os_str().as_encoded_bytes().to_vec();
        bytes.push(0);
        if bytes.len() > size as usize {
            return fail(errno::ERANGE);
        }
        Ok(if mem.write_bytes(buf, &bytes).is_ok() { bytes.len() as i64 } else { -(errno::EFAULT as i64) })
    }

    fn truncate(&self, fd: u32, len: u64) -> Sys {
        match self.file_of(fd) {
            Some(desc) => with_file(&desc, |f| f.set_len(len).map(|_| 0)),
            None => fail(errno::EBADF),
        }
    }

    fn mmap(&mut self, a: [u32; 6], mem: &mut Memory) -> Sys {
        const MAP_FIXED: u32 = 0x10;
        const MAP_ANONYMOUS: u32 = 0x20;
        const MAP_FIXED_NOREPLACE: u32 = 0x10_0000;
        let [addr, len, _prot, flags, fd, pgoff] = a;
        if len == 0 || flags & 3 == 0 {
            return fail(errno::EINVAL);
        }
        let size = page_up(len as u64);
        let start = if flags & (MAP_FIXED | MAP_FIXED_NOREPLACE) != 0 {
            if !addr.is_multiple_of(4096) || addr as u64 + size > 1 << 32 {
                return fail(errno::EINVAL);
            }
            if flags & MAP_FIXED_NOREPLACE != 0 && self.vm.any_used(addr as u64, addr as u64 + size) {
                return fail(errno::EEXIST);
            }
            addr as u64
        } else {
            match self.vm.find(addr as u64, size) {
                Some(s) => s,
                None => return fail(errno::ENOMEM),
            }
        };
        let data = if flags & MAP_ANONYMOUS != 0 {
            None
        } else {
            let Some(desc) = self.file_of(fd) else { return fail(errno::EBADF) };
            let d = desc.lock().map_err(|_| "file table poisoned")?;
            let Open::File(file) = &d.open else { return fail(19) }; // ENODEV
            let mut buf = vec![0u8; size as usize];
            let mut done = 0;
            while done < buf.len() {
                match file.read_at(&mut buf[done..], pgoff as u64 * 4096 + done as u64) {
                    Ok(0) => break,
                    Ok(n) => done += n,
                    Err(e) => return Ok(io_err(&e)),
                }
            }
            buf.truncate(done);
            Some(buf)
        };
        mem.unmap_region(start as u32, size);
        mem.map_region(start as u32, size);
        self.vm.reserve(start, start + size);
        if let Some(d) = data {
            mem.write_bytes(start as u32, &d).map_err(|f| format!("mmap: fault at {:#010x} filling a new mapping", f.addr))?;
        }
        Ok(start as i64)
    }

    fn munmap(&mut self, addr: u32, len: u32, mem: &mut Memory) -> Sys {
        if !addr.is_multiple_of(4096) || len == 0 {
            return fail(errno::EINVAL);
        }
        let end = (addr as u64 + page_up(len as u64)).min(1 << 32);
        self.vm.release(addr as u64, end);
        mem.unmap_region(addr, end - addr as u64);
        Ok(0)
    }

    fn mremap(&mut self, a: [u32; 6], mem: &mut Memory) -> Sys {
        const MREMAP_MAYMOVE: u32 = 1;
        const MREMAP_FIXED: u32 = 2;
        let [old, old_len, new_len, flags, _new_addr, _] = a;
        let (old_size, new_size) = (page_up(old_len as u64), page_up(new_len as u64));
        if !old.is_multiple_of(4096) || new_size == 0 || flags & MREMAP_FIXED != 0 {
            return if flags & MREMAP_FIXED != 0 {
                Err("mremap with MREMAP_FIXED is not implemented by the model".into())
            } else {
                fail(errno::EINVAL)
            };
        }
        let old = old as u64;
        if !self.vm.all_used(old, old + old_size) {
            return fail(errno::EFAULT);
        }
        let target = if flags & MREMAP_MAYMOVE != 0 {
            // QEMU moves whenever it may, to a place found while the old range is in use.
            match self.vm.find(0, new_size) {
                Some(t) => t,
                None => return fail(errno::ENOMEM),
            }
        } else {
            if new_size > old_size && self.vm.any_used(old + old_size, old + new_size) {
                return fail(errno::ENOMEM);
            }
            old
        };
        let keep = old_size.min(new_size) as usize;
        let data = mem.read_bytes(old as u32, keep).map_err(|f| format!("mremap: fault at {:#010x}", f.addr))?;
        self.vm.release(old, old + old_size);
        mem.unmap_region(old as u32, old_size);
        self.vm.reserve(target, target + new_size);
        mem.map_region(target as u32, new_size);
        mem.write_bytes(target as u32, &data).map_err(|f| format!("mremap: fault at {:#010x}", f.addr))?;
        Ok(target as i64)
    }

    fn ioctl(&mut self, fd: u32, req: u32, arg: u32, mem: &mut Memory) -> Sys {
        const FIONREAD: u32 = 0x541b;
        let Some(desc) = self.file_of(fd) else { return fail(errno::EBADF) };
        match req {
            // Terminal requests (TCGETS, TIOCGWINSZ, TIOCGPGRP, ...): nothing is a terminal.
            0x5401..=0x541a => fail(errno::ENOTTY),
            FIONREAD => {
                let d = desc.lock().map_err(|_| "file table poisoned")?;
                let n = match &d.open {
                    Open::PipeRead(p) => p.lock().map_err(|_| "pipe poisoned")?.data.len() as u64,
                    Open::File(file) => {
                        let len = file.metadata().map(|m| m.len()).unwrap_or(0);
                        let mut f = file;
                        len.saturating_sub(f.stream_position().unwrap_or(len))
                    }
                    _ => 0,
                };
                Ok(if mem.write32(arg, n.min(i32::MAX as u64) as u32).is_ok() { 0 } else { -(errno::EFAULT as i64) })
            }
            _ => Err(format!("ioctl request {req:#x} on descriptor {fd} is not implemented by the model")),
        }
    }

    fn fcntl(&mut self, fd: u32, cmd: u32, arg: u32, mem: &mut Memory) -> Sys {
        let Some(entry) = self.files.get(fd).cloned() else { return fail(errno::EBADF) };
        match cmd {
            0 | 1030 => Ok(self
                .files
                .install(Fd { desc: entry.desc, cloexec: cmd == 1030 }, arg as usize)
                .map_or(-(errno::EINVAL as i64), |n| n as i64)),
            1 => Ok(entry.cloexec as i64),
            2 => {
                self.files.place(Fd { cloexec: arg & 1 != 0, ..entry }, fd);
                Ok(0)
            }
            3 => Ok(entry.desc.lock().map_err(|_| "file table poisoned")?.flags as i64),
            4 => {
                // Only O_APPEND and O_NONBLOCK change.
                let mut d = entry.desc.lock().map_err(|_| "file table poisoned")?;
                d.flags = (d.flags & !0o4002000) | (arg & 0o4002000);
                Ok(0)
            }
            // Record locks (F_GETLK64, F_SETLK64, F_SETLKW64): no other process holds one.
            12 => Ok(if mem.write16(arg, 2).is_ok() { 0 } else { -(errno::EFAULT as i64) }), // F_UNLCK
            13 | 14 => Ok(0),
            _ => Err(format!("fcntl command {cmd} on descriptor {fd} is not implemented by the model")),
        }
    }

    fn dup_to(&mut self, old: u32, new: u32, dup3_flags: Option<u32>) -> Sys {
        let Some(entry) = self.files.get(old).cloned() else { return fail(errno::EBADF) };
        if old == new {
            return Ok(if dup3_flags.is_some() { -(errno::EINVAL as i64) } else { new as i64 });
        }
        let cloexec = dup3_flags.is_some_and(|f| f & 0o2000000 != 0);
        Ok(if self.files.place(Fd { desc: entry.desc, cloexec }, new) { new as i64 } else { -(errno::EBADF as i64) })
    }

    fn pipe(&mut self, fds: u32, flags: u32, mem: &mut Memory) -> Sys {
        let pipe = Arc::new(Mutex::new(Pipe { writers: 1, ..Pipe::default() }));
        let cloexec = flags & 0o2000000 != 0;
        let r = self.files.open(Open::PipeRead(pipe.clone()), 0, cloexec);
        let w = self.files.open(Open::PipeWrite(pipe), 1, cloexec);
        let (Some(r), Some(w)) = (r, w) else { return fail(errno::EMFILE) };
        let mut b = [0u8; 8];
        put32(&mut b, 0, r);
        put32(&mut b, 4, w);
        write_out(mem, fds, &b)
    }

    fn sigaction(&mut self, sig: u32, act: u32, oact: u32, mem: &mut Memory) -> Sys {
        if !(1..=64).contains(&sig) || (act != 0 && (sig == 9 || sig == 19)) {
            return fail(errno::EINVAL);
        }
        let old = self.sigactions.get(&sig).copied().unwrap_or([0; 20]);
        if act != 0 {
            match mem.read_bytes(act, 20) {
                Ok(b) => {
                    let mut new = [0u8; 20];
                    new.copy_from_slice(&b);
                    self.sigactions.insert(sig, new);
                }
                Err(_) => return fail(errno::EFAULT),
            }
        }
        if oact != 0 {
            return write_out(mem, oact, &old);
        }
        Ok(0)
    }

    fn sigprocmask(&mut self, how: u32, set: u32, oset: u32, mem: &mut Memory) -> Sys {
        let old = self.sigmask;
        if set != 0 {
            let Ok(b) = mem.read_bytes(set, 8) else { return fail(errno::EFAULT) };
            let s = u64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
            self.sigmask = match how {
                0 => old | s,
                1 => old & !s,
                2 => s,
                _ => return fail(errno::EINVAL),
            };
        }
        if oset != 0 {
            return write_out(mem, oset, &old.to_le_bytes());
        }
        Ok(0)
    }
}

/// kill/tkill/tgkill: the value for r0, or (`Err`) the status the run ends with when the
/// program sends itself a signal. Signals are never delivered: such a signal ends the
/// program as the default action of the common ones (abort, kill) would, with the status a
/// shell reports.
fn kill(n: u32, a: [u32; 6], host: &mut Semihost) -> Result<i64, i32> {
    let (pid, sig) = if n == nr::TGKILL { (a[1], a[2]) } else { (a[0], a[1]) };
    if pid != PID && pid != 0 {
        Ok(-(errno::ESRCH as i64))
    } else if sig == 0 {
        Ok(0)
    } else if sig > 64 {
        Ok(-(errno::EINVAL as i64))
    } else {
        let _ = host.console_write(Console::Err, format!("[streamtrace: the program sent itself signal {sig}]\n").as_bytes());
        Err(128 + sig as i32)
    }
}

/// Run `f` on the host file behind an open description (EINVAL for anything else).
fn with_file(desc: &fs::Shared, f: impl FnOnce(&std::fs::File) -> std::io::Result<i64>) -> Sys {
    let d = desc.lock().map_err(|_| "file table poisoned")?;
    match &d.open {
        Open::File(file) => Ok(f(file).unwrap_or_else(|e| io_err(&e))),
        _ => fail(errno::EINVAL),
    }
}

fn write_out(mem: &mut Memory, at: u32, bytes: &[u8]) -> Sys {
    Ok(if mem.write_bytes(at, bytes).is_ok() { 0 } else { -(errno::EFAULT as i64) })
}

fn write_timespec(mem: &mut Memory, at: u32, ns: u64, wide: bool) -> Sys {
    let (s, n) = (ns / 1_000_000_000, ns % 1_000_000_000);
    if wide {
        let mut b = [0u8; 16];
        put64(&mut b, 0, s);
        put64(&mut b, 8, n);
        write_out(mem, at, &b)
    } else {
        let mut b = [0u8; 8];
        put32(&mut b, 0, s as u32);
        put32(&mut b, 4, n as u32);
        write_out(mem, at, &b)
    }
}

/// Nanoseconds on clock `id`: realtime (0, 5) or time since the start (the monotonic,
/// boot-time and CPU-time clocks).
fn clock_ns(id: u32, host: &Semihost) -> Option<u64> {
    match id {
        0 | 5 => Some(host.realtime_ns()),
        1..=4 | 6 | 7 => Some(host.elapsed_ns()),
        _ => None,
    }
}

/// (soft, hard) limit of resource `r`: an 8 MiB stack, 1024 descriptors, the rest unlimited.
fn rlimit(r: u32) -> (u64, u64) {
    const INF: u64 = u64::MAX;
    match r {
        3 => (STACK_SIZE as u64, INF),
        7 => (fs::MAX_FDS as u64, fs::MAX_FDS as u64),
        _ => (INF, INF),
    }
}

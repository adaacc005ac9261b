//! Every semihosting operation, driven through `Semihost::call` on a bare Cpu + Memory.

use std::io::Cursor;

use streamtrace_sim::semihost::{errno, op, SharedBuffer, ADP_STOPPED_APPLICATION_EXIT, TICK_FREQ};
use streamtrace_sim::{Cpu, Memory, Semihost, SemihostOutcome};

const RAM: u32 = 0x1_0000;
const BLOCK: u32 = RAM + 0x100;
const BUF: u32 = RAM + 0x400;
const NAME: u32 = RAM + 0x800;
const MINUS_ONE: u32 = u32::MAX;

struct Rig {
    sh: Semihost,
    cpu: Cpu,
    mem: Memory,
    out: SharedBuffer,
    err: SharedBuffer,
}

fn rig_with(f: impl FnOnce(Semihost) -> Semihost) -> Rig {
    let out = SharedBuffer::new();
    let err = SharedBuffer::new();
    let sh = f(Semihost::new().with_stdout(out.clone()).with_stderr(err.clone()).with_stdin(Cursor::new(Vec::new())));
    let mut mem = Memory::new();
    mem.map_region(RAM, 0x1_0000);
    Rig { sh, cpu: Cpu::new(), mem, out, err }
}

fn rig() -> Rig {
    rig_with(|s| s)
}

impl Rig {
    fn words(&mut self, addr: u32, words: &[u32]) {
        for (i, w) in words.iter().enumerate() {
            self.mem.write32(addr + 4 * i as u32, *w).unwrap();
        }
    }

    fn bytes(&mut self, addr: u32, b: &[u8]) {
        self.mem.write_bytes(addr, b).unwrap();
    }

    /// Call with r1 = `arg`; returns r0.
    fn raw(&mut self, nr: u32, arg: u32) -> u32 {
        self.cpu.r[0] = nr;
        self.cpu.r[1] = arg;
        match self.sh.call(&mut self.cpu, &mut self.mem) {
            Ok(SemihostOutcome::Continue) => self.cpu.r[0],
            other => panic!("op {nr:#x}: {other:?}"),
        }
    }

    /// Call with a parameter block.
    fn call(&mut self, nr: u32, block: &[u32]) -> u32 {
        self.words(BLOCK, block);
        self.raw(nr, BLOCK)
    }

    fn open(&mut self, name: &str, mode: u32) -> u32 {
        let mut b = name.as_bytes().to_vec();
        b.push(0);
        self.bytes(NAME, &b);
        self.call(op::OPEN, &[NAME, mode, name.len() as u32])
    }

    fn write(&mut self, h: u32, data: &[u8]) -> u32 {
        self.bytes(BUF, data);
        self.call(op::WRITE, &[h, BUF, data.len() as u32])
    }

    /// READ `len` bytes; returns (r0, bytes read).
    fn read(&mut self, h: u32, len: u32) -> (u32, Vec<u8>) {
        self.bytes(BUF, &vec![0xEE; len as usize]);
        let r = self.call(op::READ, &[h, BUF, len]);
        let got = len.saturating_sub(r);
        (r, self.mem.read_bytes(BUF, got as usize).unwrap())
    }

    fn errno(&mut self) -> u32 {
        self.raw(op::ERRNO, 0)
    }

    fn outcome(&mut self, nr: u32, arg: u32) -> Result<SemihostOutcome, String> {
        self.cpu.r[0] = nr;
        self.cpu.r[1] = arg;
        self.sh.call(&mut self.cpu, &mut self.mem)
    }
}

#[test]
fn newlib_startup_sequence_matches_qemu() {
    // The sequence of the reference (xscale-timing.md 4.3), with QEMU's answers.
    let mut r = rig_with(|s| s.with_cmdline("prog.elf a bc").with_memory_layout(0x16000, 0x0801_6000, 0x4080_0F10, 0));
    r.words(BLOCK + 0x40, &[BLOCK + 0x50]);
    assert_eq!(r.raw(op::HEAPINFO, BLOCK + 0x40), 0);
    let heap: Vec<u32> = (0..4).map(|i| r.mem.read32(BLOCK + 0x50 + 4 * i).unwrap()).collect();
    assert_eq!(heap, [0x16000, 0x0801_6000, 0x4080_0F10, 0]);
    assert_eq!(r.open(":tt", 0), 1, "stdin");
    assert_eq!(r.open(":semihosting-features", 0), 2);
    assert_eq!(r.call(op::FLEN, &[2]), 5);
    assert_eq!(r.read(2, 4), (0, b"SHFB".to_vec()));
    assert_eq!(r.call(op::SEEK, &[2, 4]), 0);
    assert_eq!(r.read(2, 1), (0, vec![0x03]), "EXIT_EXTENDED | STDOUT_STDERR");
    assert_eq!(r.read(2, 3), (3, vec![]), "end of the pseudo-file: nothing read");
    assert_eq!(r.call(op::CLOSE, &[2]), 0);
    assert_eq!(r.open(":tt", 4), 2, "stdout reuses the lowest free handle");
    assert_eq!(r.open(":tt", 8), 3, "stderr");
    assert_eq!(r.call(op::GET_CMDLINE, &[BUF, 511]), 0);
    assert_eq!(r.mem.read32(BLOCK + 4).unwrap(), 13, "block[1] := length");
    assert_eq!(r.mem.read_cstr(BUF, 100).unwrap(), b"prog.elf a bc");
    assert_eq!(r.mem.read8(BUF + 13).unwrap(), 0, "NUL-terminated");
    assert_eq!(r.call(op::FLEN, &[1]), 0, "FLEN(:tt) = 0");
    assert_eq!(r.call(op::ISTTY, &[2]), 0, "the console is not a terminal");
    assert_eq!(r.errno(), errno::ENOTTY);
    assert_eq!(r.write(2, b"hello\n"), 0);
    assert_eq!(r.write(3, b"oops\n"), 0);
    assert_eq!(r.out.text(), "hello\n");
    assert_eq!(r.err.text(), "oops\n");
    for h in 1..=3 {
        assert_eq!(r.call(op::CLOSE, &[h]), 0);
    }
    assert_eq!(r.call(op::CLOSE, &[1]), MINUS_ONE, "already closed");
    assert_eq!(r.errno(), errno::EBADF);
    r.words(BLOCK, &[ADP_STOPPED_APPLICATION_EXIT, 3]);
    assert_eq!(r.outcome(op::EXIT_EXTENDED, BLOCK), Ok(SemihostOutcome::Exit(3)));
}

#[test]
fn other_registers_are_preserved() {
    let mut r = rig();
    for i in 2..16 {
        r.cpu.r[i] = 0x1000 + i as u32;
    }
    r.cpu.thumb = true;
    r.open(":tt", 4);
    for i in 2..16 {
        assert_eq!(r.cpu.r[i], 0x1000 + i as u32);
    }
    assert_eq!(r.cpu.r[1], BLOCK);
    assert!(r.cpu.thumb);
}

#[test]
fn open_modes_and_errors() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = rig_with(|s| s.with_workdir(dir.path()));
    assert_eq!(r.open(":semihosting-features", 4), MINUS_ONE, "features are read-only");
    assert_eq!(r.errno(), errno::EACCES);
    assert_eq!(r.open("x.txt", 12), MINUS_ONE, "mode out of range");
    assert_eq!(r.errno(), errno::EINVAL);
    assert_eq!(r.open("missing.txt", 0), MINUS_ONE);
    assert_eq!(r.errno(), 2, "ENOENT from the host");
    assert_eq!(r.open(":tt", 3), 1, "r+b is still stdin");
    assert_eq!(r.open(":tt", 7), 2, "w+b is stdout");
    assert_eq!(r.open(":tt", 11), 3, "a+b is stderr");

    // w: create + truncate, write only.
    let h = r.open("f.txt", 4);
    assert_eq!(h, 4);
    assert_eq!(r.write(h, b"0123456789"), 0);
    assert_eq!(r.read(h, 4).0, 4, "write-only handle: nothing read");
    assert_eq!(r.errno(), errno::EBADF);
    assert_eq!(r.call(op::CLOSE, &[h]), 0);
    assert_eq!(std::fs::read(dir.path().join("f.txt")).unwrap(), b"0123456789");
    // a: appends.
    let h = r.open("f.txt", 9);
    assert_eq!(r.write(h, b"ab"), 0);
    r.call(op::CLOSE, &[h]);
    // r+: read and write in place.
    let h = r.open("f.txt", 2);
    assert_eq!(r.call(op::FLEN, &[h]), 12);
    assert_eq!(r.call(op::SEEK, &[h, 2]), 0);
    assert_eq!(r.write(h, b"XY"), 0);
    assert_eq!(r.call(op::SEEK, &[h, 0]), 0);
    assert_eq!(r.read(h, 5), (0, b"01XY4".to_vec()));
    assert_eq!(r.read(h, 100), (93, b"56789ab".to_vec()), "bytes NOT read");
    assert_eq!(r.read(h, 10), (10, vec![]), "at EOF everything is left");
    r.call(op::CLOSE, &[h]);
    // w+ truncates and reads back.
    let h = r.open("f.txt", 6);
    assert_eq!(r.call(op::FLEN, &[h]), 0);
    r.write(h, b"new");
    r.call(op::SEEK, &[h, 1]);
    assert_eq!(r.read(h, 8), (6, b"ew".to_vec()));
    r.call(op::CLOSE, &[h]);
    // a+ reads from the start and writes at the end.
    let h = r.open("f.txt", 10);
    r.write(h, b"!");
    r.call(op::SEEK, &[h, 0]);
    assert_eq!(r.read(h, 8), (4, b"new!".to_vec()));
    r.call(op::CLOSE, &[h]);
    // r of a file opened read-only: writes fail with the whole length.
    let h = r.open("f.txt", 1);
    assert_eq!(r.write(h, b"zz"), 2);
    assert_eq!(r.errno(), errno::EBADF);
    assert_eq!(r.call(op::ISTTY, &[h]), 0);
    assert_eq!(r.errno(), errno::ENOTTY);
}

#[test]
fn absolute_names_bypass_the_working_directory() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("abs.txt");
    std::fs::write(&file, b"abc").unwrap();
    let mut r = rig_with(|s| s.with_workdir("/nonexistent-dir"));
    let h = r.open(file.to_str().unwrap(), 0);
    assert_eq!(h, 1);
    assert_eq!(r.read(h, 3), (0, b"abc".to_vec()));
}

#[test]
fn handles_are_lowest_free_numbers() {
    let mut r = rig();
    assert_eq!((r.open(":tt", 0), r.open(":tt", 4), r.open(":tt", 8)), (1, 2, 3));
    r.call(op::CLOSE, &[2]);
    r.call(op::CLOSE, &[1]);
    assert_eq!(r.open(":tt", 4), 1);
    assert_eq!(r.open(":tt", 4), 2);
    assert_eq!(r.open(":tt", 4), 4);
    assert_eq!(r.call(op::CLOSE, &[0]), MINUS_ONE, "handle 0 is never valid");
    assert_eq!(r.call(op::CLOSE, &[99]), MINUS_ONE);
}

#[test]
fn console_writes_and_reads() {
    let mut r = rig_with(|s| s.with_stdin(Cursor::new(b"xyz".to_vec())));
    r.words(BLOCK, &[u32::from(b'Q')]);
    assert_eq!(r.raw(op::WRITEC, BLOCK), 0xDEAD_BEEF);
    r.bytes(BUF, b"zero-terminated\0junk");
    assert_eq!(r.raw(op::WRITE0, BUF), 0xDEAD_BEEF);
    assert_eq!(r.out.text(), "Qzero-terminated");
    assert_eq!(r.raw(op::READC, 0), u32::from(b'x'));
    let stdin = r.open(":tt", 0);
    assert_eq!(r.read(stdin, 10), (8, b"yz".to_vec()));
    assert_eq!(r.raw(op::READC, 0), MINUS_ONE, "end of input");
    let out = r.open(":tt", 4);
    assert_eq!(r.read(out, 4).0, 4, "stdout cannot be read");
    assert_eq!(r.write(stdin, b"no").to_owned(), 2, "stdin cannot be written");
    assert_eq!(r.errno(), errno::EBADF);
    assert_eq!(r.call(op::SEEK, &[out, 0]), MINUS_ONE);
    assert_eq!(r.errno(), errno::ESPIPE);
    assert_eq!(r.write(out, b""), 0, "empty write");
    assert_eq!(r.write(77, b"abc"), 3, "bad handle: nothing written");
    assert_eq!(r.errno(), errno::EBADF);
    assert_eq!(r.call(op::ISTTY, &[77]), MINUS_ONE);
    assert_eq!(r.call(op::FLEN, &[77]), MINUS_ONE);
}

#[test]
fn errno_is_sticky_until_the_next_failure() {
    let mut r = rig();
    assert_eq!(r.errno(), 0);
    r.call(op::CLOSE, &[5]);
    assert_eq!(r.errno(), errno::EBADF);
    let h = r.open(":tt", 4);
    r.write(h, b"ok");
    assert_eq!(r.errno(), errno::EBADF, "successful calls leave errno alone");
    r.call(op::ISTTY, &[h]);
    assert_eq!(r.errno(), errno::ENOTTY);
}

#[test]
fn iserror() {
    let mut r = rig();
    assert_eq!(r.call(op::ISERROR, &[0]), 0);
    assert_eq!(r.call(op::ISERROR, &[5]), 0);
    assert_eq!(r.call(op::ISERROR, &[MINUS_ONE]), 1);
    assert_eq!(r.call(op::ISERROR, &[0x8000_0000]), 1);
}

#[test]
fn tmpnam_remove_rename() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = rig_with(|s| s.with_workdir(dir.path()));
    assert_eq!(r.call(op::TMPNAM, &[BUF, 0x1A7, 64]), 0);
    let name = String::from_utf8(r.mem.read_cstr(BUF, 64).unwrap()).unwrap();
    assert_eq!(name, "streamtrace-tmp-a7", "deterministic, id & 0xff in hex");
    assert_eq!(r.call(op::TMPNAM, &[BUF, 1, 10]), MINUS_ONE, "buffer too small");
    assert_eq!(r.errno(), errno::ERANGE);

    let h = r.open(&name, 4);
    r.write(h, b"data");
    r.call(op::CLOSE, &[h]);
    r.bytes(NAME, b"streamtrace-tmp-a7\0");
    r.bytes(NAME + 0x40, b"renamed.txt\0");
    assert_eq!(r.call(op::RENAME, &[NAME, 18, NAME + 0x40, 11]), 0);
    assert_eq!(std::fs::read(dir.path().join("renamed.txt")).unwrap(), b"data");
    assert_eq!(r.call(op::RENAME, &[NAME, 18, NAME + 0x40, 11]), MINUS_ONE, "source is gone");
    assert_eq!(r.errno(), 2);
    assert_eq!(r.call(op::REMOVE, &[NAME + 0x40, 11]), 0);
    assert!(!dir.path().join("renamed.txt").exists());
    assert_eq!(r.call(op::REMOVE, &[NAME + 0x40, 11]), MINUS_ONE);
    assert_eq!(r.errno(), 2);
    assert_eq!(r.call(op::REMOVE, &[NAME, 100_000]), MINUS_ONE, "name too long");
    assert_eq!(r.errno(), errno::ENAMETOOLONG);
}

#[test]
fn deterministic_clock_follows_retired_instructions() {
    let mut r = rig_with(|s| s.with_deterministic_clock(400_000_000).with_epoch(1_000_000));
    assert!(r.sh.is_deterministic());
    r.sh.set_retired(1_200_000_000); // 3 simulated seconds
    assert_eq!(r.raw(op::CLOCK, 0), 300, "centiseconds");
    assert_eq!(r.raw(op::TIME, 0), 1_000_003);
    assert_eq!(r.raw(op::ELAPSED, BLOCK), 0);
    let ns = r.mem.read32(BLOCK).unwrap() as u64 | (r.mem.read32(BLOCK + 4).unwrap() as u64) << 32;
    assert_eq!(ns, 3_000_000_000);
    assert_eq!(r.raw(op::TICKFREQ, 0), TICK_FREQ);
    r.sh.set_retired(1_000_000);
    assert_eq!(r.raw(op::CLOCK, 0), 0);
}

#[test]
fn host_clock() {
    let mut r = rig();
    assert!(!r.sh.is_deterministic());
    assert!(r.raw(op::CLOCK, 0) < 100 * 60, "centiseconds since the Semihost was made");
    assert!(r.raw(op::TIME, 0) > 1_600_000_000);
    assert_eq!(r.raw(op::ELAPSED, BLOCK), 0);
}

#[test]
fn system_is_refused() {
    let mut r = rig();
    r.bytes(NAME, b"rm -rf /\0");
    assert_eq!(r.call(op::SYSTEM, &[NAME, 8]), MINUS_ONE);
    assert_eq!(r.errno(), errno::EPERM);
}

#[test]
fn get_cmdline_sizes() {
    let mut r = rig_with(|s| s.with_args(&["bin/x.elf", "10", "data/in.txt"]));
    assert_eq!(r.sh.cmdline(), "bin/x.elf 10 data/in.txt");
    let n = r.sh.cmdline().len() as u32;
    assert_eq!(r.call(op::GET_CMDLINE, &[BUF, n]), MINUS_ONE, "no room for the NUL");
    assert_eq!(r.errno(), errno::E2BIG);
    assert_eq!(r.call(op::GET_CMDLINE, &[BUF, n + 1]), 0);
    assert_eq!(r.mem.read32(BLOCK + 4).unwrap(), n);
    let mut r = rig();
    assert_eq!(r.call(op::GET_CMDLINE, &[BUF, 511]), 0);
    assert_eq!((r.mem.read32(BLOCK + 4).unwrap(), r.mem.read8(BUF).unwrap()), (0, 0), "empty command line");
}

#[test]
fn exits() {
    let mut r = rig();
    assert_eq!(r.outcome(op::EXIT, ADP_STOPPED_APPLICATION_EXIT), Ok(SemihostOutcome::Exit(0)));
    assert_eq!(r.outcome(op::EXIT, 0x20023), Ok(SemihostOutcome::Exit(1)), "run-time error");
    assert_eq!(r.outcome(op::EXIT, 0), Ok(SemihostOutcome::Exit(1)));
    r.words(BLOCK, &[ADP_STOPPED_APPLICATION_EXIT, 0]);
    assert_eq!(r.outcome(op::EXIT_EXTENDED, BLOCK), Ok(SemihostOutcome::Exit(0)));
    r.words(BLOCK, &[ADP_STOPPED_APPLICATION_EXIT, 0xFFFF_FFFF]);
    assert_eq!(r.outcome(op::EXIT_EXTENDED, BLOCK), Ok(SemihostOutcome::Exit(-1)));
    r.words(BLOCK, &[0x20023, 7]);
    assert_eq!(r.outcome(op::EXIT_EXTENDED, BLOCK), Ok(SemihostOutcome::Exit(1)));
}

#[test]
fn malformed_calls_are_errors_naming_operation_and_address() {
    let mut r = rig();
    let bad = 0x9000_0000;
    let e = r.outcome(op::WRITE, bad).unwrap_err();
    assert!(e.contains("SYS_WRITE") && e.contains("0x90000000"), "{e}");
    let h = r.open(":tt", 4);
    r.words(BLOCK, &[h, bad, 4]);
    let e = r.outcome(op::WRITE, BLOCK).unwrap_err();
    assert!(e.contains("SYS_WRITE") && e.contains("buffer") && e.contains("0x90000000"), "{e}");
    r.words(BLOCK, &[h, RAM + 0xFFF0, 0x100]);
    let e = r.outcome(op::WRITE, BLOCK).unwrap_err();
    assert!(e.contains("0x00020000"), "first unmapped byte named: {e}");
    r.words(BLOCK, &[1, BUF, 0xFFFF_FFFF]);
    let e = r.outcome(op::READ, BLOCK).unwrap_err();
    assert!(e.contains("SYS_READ"), "huge length is rejected before allocating: {e}");
    r.words(BLOCK, &[bad]);
    let e = r.outcome(op::HEAPINFO, BLOCK).unwrap_err();
    assert!(e.contains("SYS_HEAPINFO") && e.contains("0x90000000"), "{e}");
    r.words(BLOCK, &[bad, 0, 3]);
    let e = r.outcome(op::OPEN, BLOCK).unwrap_err();
    assert!(e.contains("SYS_OPEN") && e.contains("file name"), "{e}");
    r.words(BLOCK, &[bad, 100]);
    assert!(r.outcome(op::GET_CMDLINE, BLOCK).unwrap_err().contains("SYS_GET_CMDLINE"));
    assert!(r.outcome(op::WRITE0, bad).unwrap_err().contains("SYS_WRITE0"));
    assert!(r.outcome(op::WRITEC, bad).unwrap_err().contains("SYS_WRITEC"));
    assert!(r.outcome(op::ELAPSED, bad).unwrap_err().contains("SYS_ELAPSED"));
    assert!(r.outcome(op::EXIT_EXTENDED, bad).unwrap_err().contains("SYS_EXIT_EXTENDED"));
    let e = r.outcome(0x77, 0).unwrap_err();
    assert!(e.contains("0x77"), "{e}");
}

#[test]
fn no_operation_panics_on_garbage() {
    // Every operation number with pointers into, across the end of, and outside memory.
    let mut r = rig_with(|s| s.with_workdir(std::env::temp_dir().join("streamtrace-no-such-dir")));
    let args = [0, 4, BLOCK, RAM + 0xFFFC, 0xFFFF_FFFC, 0x8000_0000];
    let mut seed = 0x1234_5678u32;
    for nr in (0..0x40).chain([0x20026, u32::MAX]) {
        for &a in &args {
            if nr == op::SYSTEM || nr == op::REMOVE || nr == op::RENAME {
                continue; // host effects are refused or harmless, but keep the test hermetic
            }
            for w in 0..4 {
                seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                let v = if w == 0 { seed % 8 } else { seed };
                r.mem.write32(BLOCK + 4 * w, v).unwrap();
            }
            r.cpu.r[0] = nr;
            r.cpu.r[1] = a;
            let _ = r.sh.call(&mut r.cpu, &mut r.mem);
        }
    }
}

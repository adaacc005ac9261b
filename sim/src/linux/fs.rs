//! File descriptors of a Linux process: the console (the machine's stdin, stdout and
//! stderr), host files and directories, and pipes inside the process. Descriptors that
//! `dup` shares one open file (offset and flags), as in Linux.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::fs::File;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::abi::FileStat;
use crate::semihost::Console;

/// Most descriptors a process may hold (`RLIMIT_NOFILE`).
pub const MAX_FDS: usize = 1024;

/// One directory entry as `getdents64` returns it.
#[derive(Clone, Debug)]
pub struct DirEntry {
    pub ino: u64,
    pub kind: u8,
    pub name: OsString,
}

/// What an open file description refers to.
pub enum Open {
    Console(Console),
    File(File),
    /// A directory: its entries are listed when first read; `pos` counts entries returned.
    Dir { path: PathBuf, entries: Option<Vec<DirEntry>>, pos: usize },
    PipeRead(Arc<Mutex<Pipe>>),
    PipeWrite(Arc<Mutex<Pipe>>),
}

/// A pipe's bytes; the read end sees end of file once no write end is open.
#[derive(Default)]
pub struct Pipe {
    pub data: VecDeque<u8>,
    pub writers: usize,
}

pub struct Description {
    pub open: Open,
    /// `O_*` status flags (`F_GETFL`).
    pub flags: u32,
}

impl Drop for Description {
    fn drop(&mut self) {
        if let Open::PipeWrite(p) = &self.open {
            if let Ok(mut p) = p.lock() {
                p.writers = p.writers.saturating_sub(1);
            }
        }
    }
}

pub type Shared = Arc<Mutex<Description>>;

#[derive(Clone)]
pub struct Fd {
    pub desc: Shared,
    pub cloexec: bool,
}

/// The descriptor table.
pub struct FileTable {
    fds: Vec<Option<Fd>>,
}

/// `S_IFIFO | 0600`: the console looks like a pipe whatever the host's streams are, so a
/// run buffers its output the same way every time.
pub const CONSOLE_MODE: u32 = 0o010600;

impl FileTable {
    /// Descriptors 0, 1 and 2 on the console.
    pub fn with_console() -> Self {
        let mut t = FileTable { fds: Vec::new() };
        for (c, flags) in [(Console::In, 0), (Console::Out, 1), (Console::Err, 1)] {
            t.fds.push(Some(Fd { desc: Arc::new(Mutex::new(Description { open: Open::Console(c), flags })), cloexec: false }));
        }
        t
    }

    pub fn get(&self, fd: u32) -> Option<&Fd> {
        self.fds.get(fd as usize)?.as_ref()
    }

    /// Install at the lowest free descriptor at or above `min`; `None` when the table is full.
    pub fn install(&mut self, fd: Fd, min: usize) -> Option<u32> {
        let free = (min..MAX_FDS).find(|&i| self.fds.get(i).is_none_or(|f| f.is_none()))?;
        if free >= self.fds.len() {
            self.fds.resize_with(free + 1, || None);
        }
        self.fds[free] = Some(fd);
        Some(free as u32)
    }

    pub fn open(&mut self, open: Open, flags: u32, cloexec: bool) -> Option<u32> {
        self.install(Fd { desc: Arc::new(Mutex::new(Description { open, flags })), cloexec }, 0)
    }

    /// Put `fd` at `at`, closing what was there.
    pub fn place(&mut self, fd: Fd, at: u32) -> bool {
        let at = at as usize;
        if at >= MAX_FDS {
            return false;
        }
        if at >= self.fds.len() {
            self.fds.resize_with(at + 1, || None);
        }
        self.fds[at] = Some(fd);
        true
    }

    pub fn close(&mut self, fd: u32) -> bool {
        self.fds.get_mut(fd as usize).and_then(Option::take).is_some()
    }
}

/// Metadata of a console descriptor.
pub fn console_stat() -> FileStat {
    FileStat { dev: 0xd, ino: 1, mode: CONSOLE_MODE, nlink: 1, blksize: 4096, ..FileStat::default() }
}

/// The entries of a directory in the host's order, "." and ".." first.
pub fn list_dir(path: &std::path::Path) -> std::io::Result<Vec<DirEntry>> {
    use std::os::unix::fs::{DirEntryExt, MetadataExt};
    const DT_DIR: u8 = 4;
    let kind_of = |t: std::fs::FileType| -> u8 {
        use std::os::unix::fs::FileTypeExt;
        if t.is_dir() {
            DT_DIR
        } else if t.is_file() {
            8
        } else if t.is_symlink() {
            10
        } else if t.is_fifo() {
            1
        } else if t.is_char_device() {
            2
        } else if t.is_block_device() {
            6
        } else if t.is_socket() {
            12
        } else {
            0
        }
    };
    let mut out = vec![
        DirEntry { ino: std::fs::metadata(path)?.ino(), kind: DT_DIR, name: ".".into() },
        DirEntry { ino: std::fs::metadata(path.join(".."))?.ino(), kind: DT_DIR, name: "..".into() },
    ];
    for e in std::fs::read_dir(path)? {
        let e = e?;
        out.push(DirEntry { ino: e.ino(), kind: e.file_type().map(kind_of).unwrap_or(0), name: e.file_name() });
    }
    Ok(out)
}

//! Numbers and layouts of the ARM EABI Linux user interface: system call numbers and
//! names (arch/arm/tools/syscall.tbl), errno values (the generic ones, equal on ARM and
//! on the x86-64 host), and the structures the model writes into guest memory.

/// System call numbers the model implements (and a few it names in errors).
pub mod nr {
    pub const EXIT: u32 = 1;
    pub const READ: u32 = 3;
    pub const WRITE: u32 = 4;
    pub const OPEN: u32 = 5;
    pub const CLOSE: u32 = 6;
    pub const UNLINK: u32 = 10;
    pub const CHDIR: u32 = 12;
    pub const CHMOD: u32 = 15;
    pub const LSEEK: u32 = 19;
    pub const GETPID: u32 = 20;
    pub const ACCESS: u32 = 33;
    pub const KILL: u32 = 37;
    pub const RENAME: u32 = 38;
    pub const MKDIR: u32 = 39;
    pub const RMDIR: u32 = 40;
    pub const DUP: u32 = 41;
    pub const PIPE: u32 = 42;
    pub const BRK: u32 = 45;
    pub const IOCTL: u32 = 54;
    pub const UMASK: u32 = 60;
    pub const DUP2: u32 = 63;
    pub const GETPPID: u32 = 64;
    pub const GETPGRP: u32 = 65;
    pub const GETTIMEOFDAY: u32 = 78;
    pub const READLINK: u32 = 85;
    pub const MUNMAP: u32 = 91;
    pub const FTRUNCATE: u32 = 93;
    pub const FCHMOD: u32 = 94;
    pub const SYSINFO: u32 = 116;
    pub const FSYNC: u32 = 118;
    pub const UNAME: u32 = 122;
    pub const MPROTECT: u32 = 125;
    pub const GETPGID: u32 = 132;
    pub const LLSEEK: u32 = 140;
    pub const READV: u32 = 145;
    pub const WRITEV: u32 = 146;
    pub const GETSID: u32 = 147;
    pub const FDATASYNC: u32 = 148;
    pub const NANOSLEEP: u32 = 162;
    pub const MREMAP: u32 = 163;
    pub const PRCTL: u32 = 172;
    pub const RT_SIGACTION: u32 = 174;
    pub const RT_SIGPROCMASK: u32 = 175;
    pub const PREAD64: u32 = 180;
    pub const PWRITE64: u32 = 181;
    pub const GETCWD: u32 = 183;
    pub const SIGALTSTACK: u32 = 186;
    pub const UGETRLIMIT: u32 = 191;
    pub const MMAP2: u32 = 192;
    pub const FTRUNCATE64: u32 = 194;
    pub const STAT64: u32 = 195;
    pub const LSTAT64: u32 = 196;
    pub const FSTAT64: u32 = 197;
    pub const GETUID32: u32 = 199;
    pub const GETGID32: u32 = 200;
    pub const GETEUID32: u32 = 201;
    pub const GETEGID32: u32 = 202;
    pub const GETGROUPS32: u32 = 205;
    pub const GETRESUID32: u32 = 209;
    pub const GETRESGID32: u32 = 211;
    pub const GETDENTS64: u32 = 217;
    pub const MADVISE: u32 = 220;
    pub const FCNTL64: u32 = 221;
    pub const GETTID: u32 = 224;
    pub const TKILL: u32 = 238;
    pub const SENDFILE64: u32 = 239;
    pub const WAIT4: u32 = 114;
    pub const FUTEX: u32 = 240;
    pub const EXIT_GROUP: u32 = 248;
    pub const SET_TID_ADDRESS: u32 = 256;
    pub const CLOCK_GETTIME: u32 = 263;
    pub const CLOCK_GETRES: u32 = 264;
    pub const TGKILL: u32 = 268;
    pub const OPENAT: u32 = 322;
    pub const MKDIRAT: u32 = 323;
    pub const FSTATAT64: u32 = 327;
    pub const UNLINKAT: u32 = 328;
    pub const RENAMEAT: u32 = 329;
    pub const READLINKAT: u32 = 332;
    pub const FCHMODAT: u32 = 333;
    pub const FACCESSAT: u32 = 334;
    pub const SET_ROBUST_LIST: u32 = 338;
    pub const DUP3: u32 = 358;
    pub const PIPE2: u32 = 359;
    pub const PRLIMIT64: u32 = 369;
    pub const RENAMEAT2: u32 = 382;
    pub const GETRANDOM: u32 = 384;
    pub const STATX: u32 = 397;
    pub const RSEQ: u32 = 398;
    pub const CLOCK_GETTIME64: u32 = 403;
    pub const CLOCK_GETRES_TIME64: u32 = 406;
    pub const CLOCK_NANOSLEEP_TIME64: u32 = 407;
    pub const FACCESSAT2: u32 = 439;
    /// ARM private calls (0x0f0000 + n).
    pub const ARM_CACHEFLUSH: u32 = 0x0f_0002;
    pub const ARM_SET_TLS: u32 = 0x0f_0005;
}

/// The name of ARM EABI system call `nr`, for error messages.
pub fn syscall_name(nr: u32) -> Option<&'static str> {
    const NAMES: &[(u32, &str)] = &[
        (0, "restart_syscall"), (1, "exit"), (2, "fork"), (3, "read"), (4, "write"), (5, "open"),
        (6, "close"), (8, "creat"), (9, "link"), (10, "unlink"), (11, "execve"), (12, "chdir"),
        (14, "mknod"), (15, "chmod"), (16, "lchown"), (19, "lseek"), (20, "getpid"), (21, "mount"),
        (23, "setuid"), (24, "getuid"), (26, "ptrace"), (29, "pause"), (33, "access"), (34, "nice"),
        (36, "sync"), (37, "kill"), (38, "rename"), (39, "mkdir"), (40, "rmdir"), (41, "dup"),
        (42, "pipe"), (43, "times"), (45, "brk"), (46, "setgid"), (47, "getgid"), (49, "geteuid"),
        (50, "getegid"), (51, "acct"), (52, "umount2"), (54, "ioctl"), (55, "fcntl"), (57, "setpgid"),
        (60, "umask"), (61, "chroot"), (62, "ustat"), (63, "dup2"), (64, "getppid"), (65, "getpgrp"),
        (66, "setsid"), (67, "sigaction"), (70, "setreuid"), (71, "setregid"), (72, "sigsuspend"),
        (73, "sigpending"), (74, "sethostname"), (75, "setrlimit"), (77, "getrusage"),
        (78, "gettimeofday"), (79, "settimeofday"), (80, "getgroups"), (81, "setgroups"),
        (83, "symlink"), (85, "readlink"), (86, "uselib"), (87, "swapon"), (88, "reboot"),
        (91, "munmap"), (92, "truncate"), (93, "ftruncate"), (94, "fchmod"), (95, "fchown"),
        (96, "getpriority"), (97, "setpriority"), (99, "statfs"), (100, "fstatfs"), (103, "syslog"),
        (104, "setitimer"), (105, "getitimer"), (106, "stat"), (107, "lstat"), (108, "fstat"),
        (111, "vhangup"), (114, "wait4"), (115, "swapoff"), (116, "sysinfo"), (118, "fsync"),
        (119, "sigreturn"), (120, "clone"), (121, "setdomainname"), (122, "uname"),
        (124, "adjtimex"), (125, "mprotect"), (126, "sigprocmask"), (128, "init_module"),
        (129, "delete_module"), (131, "quotactl"), (132, "getpgid"), (133, "fchdir"),
        (134, "bdflush"), (135, "sysfs"), (136, "personality"), (138, "setfsuid"),
        (139, "setfsgid"), (140, "_llseek"), (141, "getdents"), (142, "_newselect"), (143, "flock"),
        (144, "msync"), (145, "readv"), (146, "writev"), (147, "getsid"), (148, "fdatasync"),
        (149, "_sysctl"), (150, "mlock"), (151, "munlock"), (152, "mlockall"), (153, "munlockall"),
        (154, "sched_setparam"), (155, "sched_getparam"), (156, "sched_setscheduler"),
        (157, "sched_getscheduler"), (158, "sched_yield"), (159, "sched_get_priority_max"),
        (160, "sched_get_priority_min"), (161, "sched_rr_get_interval"), (162, "nanosleep"),
        (163, "mremap"), (164, "setresuid"), (165, "getresuid"), (168, "poll"),
        (169, "nfsservctl"), (170, "setresgid"), (171, "getresgid"), (172, "prctl"),
        (173, "rt_sigreturn"), (174, "rt_sigaction"), (175, "rt_sigprocmask"),
        (176, "rt_sigpending"), (177, "rt_sigtimedwait"), (178, "rt_sigqueueinfo"),
        (179, "rt_sigsuspend"), (180, "pread64"), (181, "pwrite64"), (182, "chown"),
        (183, "getcwd"), (184, "capget"), (185, "capset"), (186, "sigaltstack"), (187, "sendfile"),
        (190, "vfork"), (191, "ugetrlimit"), (192, "mmap2"), (193, "truncate64"),
        (194, "ftruncate64"), (195, "stat64"), (196, "lstat64"), (197, "fstat64"), (198, "lchown32"),
        (199, "getuid32"), (200, "getgid32"), (201, "geteuid32"), (202, "getegid32"),
        (203, "setreuid32"), (204, "setregid32"), (205, "getgroups32"), (206, "setgroups32"),
        (207, "fchown32"), (208, "setresuid32"), (209, "getresuid32"), (210, "setresgid32"),
        (211, "getresgid32"), (212, "chown32"), (213, "setuid32"), (214, "setgid32"),
        (215, "setfsuid32"), (216, "setfsgid32"), (217, "getdents64"), (218, "pivot_root"),
        (219, "mincore"), (220, "madvise"), (221, "fcntl64"), (224, "gettid"), (225, "readahead"),
        (226, "setxattr"), (227, "lsetxattr"), (228, "fsetxattr"), (229, "getxattr"),
        (230, "lgetxattr"), (231, "fgetxattr"), (232, "listxattr"), (233, "llistxattr"),
        (234, "flistxattr"), (235, "removexattr"), (236, "lremovexattr"), (237, "fremovexattr"),
        (238, "tkill"), (239, "sendfile64"), (240, "futex"), (241, "sched_setaffinity"),
        (242, "sched_getaffinity"), (243, "io_setup"), (244, "io_destroy"), (245, "io_getevents"),
        (246, "io_submit"), (247, "io_cancel"), (248, "exit_group"), (249, "lookup_dcookie"),
        (250, "epoll_create"), (251, "epoll_ctl"), (252, "epoll_wait"), (253, "remap_file_pages"),
        (256, "set_tid_address"), (257, "timer_create"), (258, "timer_settime"),
        (259, "timer_gettime"), (260, "timer_getoverrun"), (261, "timer_delete"),
        (262, "clock_settime"), (263, "clock_gettime"), (264, "clock_getres"),
        (265, "clock_nanosleep"), (266, "statfs64"), (267, "fstatfs64"), (268, "tgkill"),
        (269, "utimes"), (270, "arm_fadvise64_64"), (271, "pciconfig_iobase"),
        (272, "pciconfig_read"), (273, "pciconfig_write"), (274, "mq_open"), (275, "mq_unlink"),
        (276, "mq_timedsend"), (277, "mq_timedreceive"), (278, "mq_notify"),
        (279, "mq_getsetattr"), (280, "waitid"), (281, "socket"), (282, "bind"), (283, "connect"),
        (284, "listen"), (285, "accept"), (286, "getsockname"), (287, "getpeername"),
        (288, "socketpair"), (289, "send"), (290, "sendto"), (291, "recv"), (292, "recvfrom"),
        (293, "shutdown"), (294, "setsockopt"), (295, "getsockopt"), (296, "sendmsg"),
        (297, "recvmsg"), (298, "semop"), (299, "semget"), (300, "semctl"), (301, "msgsnd"),
        (302, "msgrcv"), (303, "msgget"), (304, "msgctl"), (305, "shmat"), (306, "shmdt"),
        (307, "shmget"), (308, "shmctl"), (309, "add_key"), (310, "request_key"), (311, "keyctl"),
        (312, "semtimedop"), (313, "vserver"), (314, "ioprio_set"), (315, "ioprio_get"),
        (316, "inotify_init"), (317, "inotify_add_watch"), (318, "inotify_rm_watch"),
        (319, "mbind"), (320, "get_mempolicy"), (321, "set_mempolicy"), (322, "openat"),
        (323, "mkdirat"), (324, "mknodat"), (325, "fchownat"), (326, "futimesat"),
        (327, "fstatat64"), (328, "unlinkat"), (329, "renameat"), (330, "linkat"),
        (331, "symlinkat"), (332, "readlinkat"), (333, "fchmodat"), (334, "faccessat"),
        (335, "pselect6"), (336, "ppoll"), (337, "unshare"), (338, "set_robust_list"),
        (339, "get_robust_list"), (340, "splice"), (341, "arm_sync_file_range"), (342, "tee"),
        (343, "vmsplice"), (344, "move_pages"), (345, "getcpu"), (346, "epoll_pwait"),
        (347, "kexec_load"), (348, "utimensat"), (349, "signalfd"), (350, "timerfd_create"),
        (351, "eventfd"), (352, "fallocate"), (353, "timerfd_settime"), (354, "timerfd_gettime"),
        (355, "signalfd4"), (356, "eventfd2"), (357, "epoll_create1"), (358, "dup3"),
        (359, "pipe2"), (360, "inotify_init1"), (361, "preadv"), (362, "pwritev"),
        (363, "rt_tgsigqueueinfo"), (364, "perf_event_open"), (365, "recvmmsg"), (366, "accept4"),
        (367, "fanotify_init"), (368, "fanotify_mark"), (369, "prlimit64"),
        (370, "name_to_handle_at"), (371, "open_by_handle_at"), (372, "clock_adjtime"),
        (373, "syncfs"), (374, "sendmmsg"), (375, "setns"), (376, "process_vm_readv"),
        (377, "process_vm_writev"), (378, "kcmp"), (379, "finit_module"), (380, "sched_setattr"),
        (381, "sched_getattr"), (382, "renameat2"), (383, "seccomp"), (384, "getrandom"),
        (385, "memfd_create"), (386, "bpf"), (387, "execveat"), (388, "userfaultfd"),
        (389, "membarrier"), (390, "mlock2"), (391, "copy_file_range"), (392, "preadv2"),
        (393, "pwritev2"), (394, "pkey_mprotect"), (395, "pkey_alloc"), (396, "pkey_free"),
        (397, "statx"), (398, "rseq"), (399, "io_pgetevents"), (400, "migrate_pages"),
        (401, "kexec_file_load"), (403, "clock_gettime64"), (404, "clock_settime64"),
        (405, "clock_adjtime64"), (406, "clock_getres_time64"), (407, "clock_nanosleep_time64"),
        (408, "timer_gettime64"), (409, "timer_settime64"), (410, "timerfd_gettime64"),
        (411, "timerfd_settime64"), (412, "utimensat_time64"), (413, "pselect6_time64"),
        (414, "ppoll_time64"), (416, "io_pgetevents_time64"), (417, "recvmmsg_time64"),
        (418, "mq_timedsend_time64"), (419, "mq_timedreceive_time64"), (420, "semtimedop_time64"),
        (421, "rt_sigtimedwait_time64"), (422, "futex_time64"), (423, "sched_rr_get_interval_time64"),
        (424, "pidfd_send_signal"), (425, "io_uring_setup"), (426, "io_uring_enter"),
        (427, "io_uring_register"), (428, "open_tree"), (429, "move_mount"), (430, "fsopen"),
        (431, "fsconfig"), (432, "fsmount"), (433, "fspick"), (434, "pidfd_open"), (435, "clone3"),
        (436, "close_range"), (437, "openat2"), (438, "pidfd_getfd"), (439, "faccessat2"),
        (0x0f_0001, "ARM_breakpoint"), (0x0f_0002, "ARM_cacheflush"), (0x0f_0003, "ARM_usr26"),
        (0x0f_0004, "ARM_usr32"), (0x0f_0005, "ARM_set_tls"), (0x0f_0006, "ARM_get_tls"),
    ];
    NAMES.binary_search_by_key(&nr, |&(n, _)| n).ok().map(|i| NAMES[i].1)
}

/// errno values (positive; a system call returns the negation).
pub mod errno {
    pub const ENOENT: u32 = 2;
    pub const ESRCH: u32 = 3;
    pub const EIO: u32 = 5;
    pub const EBADF: u32 = 9;
    pub const ECHILD: u32 = 10;
    pub const ENOMEM: u32 = 12;
    pub const EFAULT: u32 = 14;
    pub const EEXIST: u32 = 17;
    pub const ENOTDIR: u32 = 20;
    pub const EISDIR: u32 = 21;
    pub const EINVAL: u32 = 22;
    pub const EMFILE: u32 = 24;
    pub const ENOTTY: u32 = 25;
    pub const ESPIPE: u32 = 29;
    pub const ERANGE: u32 = 34;
    pub const ENAMETOOLONG: u32 = 36;
    pub const ENOSYS: u32 = 38;
}

/// `AT_*` keys of the auxiliary vector.
pub mod at {
    pub const NULL: u32 = 0;
    pub const PHDR: u32 = 3;
    pub const PHENT: u32 = 4;
    pub const PHNUM: u32 = 5;
    pub const PAGESZ: u32 = 6;
    pub const BASE: u32 = 7;
    pub const FLAGS: u32 = 8;
    pub const ENTRY: u32 = 9;
    pub const UID: u32 = 11;
    pub const EUID: u32 = 12;
    pub const GID: u32 = 13;
    pub const EGID: u32 = 14;
    pub const PLATFORM: u32 = 15;
    pub const HWCAP: u32 = 16;
    pub const CLKTCK: u32 = 17;
    pub const SECURE: u32 = 23;
    pub const RANDOM: u32 = 25;
    pub const HWCAP2: u32 = 26;
    pub const EXECFN: u32 = 31;
}

/// File metadata in the host-independent form the layouts below are written from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FileStat {
    pub dev: u64,
    pub ino: u64,
    pub mode: u32,
    pub nlink: u32,
    pub uid: u32,
    pub gid: u32,
    pub rdev: u64,
    pub size: u64,
    pub blksize: u32,
    pub blocks: u64,
    /// (seconds, nanoseconds) of access, modification, status change.
    pub atime: (i64, u32),
    pub mtime: (i64, u32),
    pub ctime: (i64, u32),
}

impl FileStat {
    pub fn from_metadata(m: &std::fs::Metadata) -> FileStat {
        use std::os::unix::fs::MetadataExt;
        FileStat {
            dev: m.dev(),
            ino: m.ino(),
            mode: m.mode(),
            nlink: m.nlink() as u32,
            uid: m.uid(),
            gid: m.gid(),
            rdev: m.rdev(),
            size: m.size(),
            blksize: m.blksize() as u32,
            blocks: m.blocks(),
            atime: (m.atime(), m.atime_nsec() as u32),
            mtime: (m.mtime(), m.mtime_nsec() as u32),
            ctime: (m.ctime(), m.ctime_nsec() as u32),
        }
    }

    /// ARM EABI `struct stat64` (104 bytes; 64-bit members 8-aligned).
    pub fn stat64(&self) -> [u8; 104] {
        let mut b = [0u8; 104];
        put64(&mut b, 0, self.dev);
        put32(&mut b, 12, self.ino as u32);
        put32(&mut b, 16, self.mode);
        put32(&mut b, 20, self.nlink);
        put32(&mut b, 24, self.uid);
        put32(&mut b, 28, self.gid);
        put64(&mut b, 32, self.rdev);
        put64(&mut b, 48, self.size);
        put32(&mut b, 56, self.blksize);
        put64(&mut b, 64, self.blocks);
        put32(&mut b, 72, self.atime.0 as u32);
        put32(&mut b, 76, self.atime.1);
        put32(&mut b, 80, self.mtime.0 as u32);
        put32(&mut b, 84, self.mtime.1);
        put32(&mut b, 88, self.ctime.0 as u32);
        put32(&mut b, 92, self.ctime.1);
        put64(&mut b, 96, self.ino);
        b
    }

    /// `struct statx` (256 bytes) with the basic fields (`STATX_BASIC_STATS`).
    pub fn statx(&self) -> [u8; 256] {
        const STATX_BASIC_STATS: u32 = 0x7ff;
        let mut b = [0u8; 256];
        put32(&mut b, 0, STATX_BASIC_STATS);
        put32(&mut b, 4, self.blksize);
        put32(&mut b, 16, self.nlink);
        put32(&mut b, 20, self.uid);
        put32(&mut b, 24, self.gid);
        b[28..30].copy_from_slice(&(self.mode as u16).to_le_bytes());
        put64(&mut b, 32, self.ino);
        put64(&mut b, 40, self.size);
        put64(&mut b, 48, self.blocks);
        for (off, t) in [(64, self.atime), (96, self.ctime), (112, self.mtime)] {
            put64(&mut b, off, t.0 as u64);
            put32(&mut b, off + 8, t.1);
        }
        let (rmaj, rmin) = dev_split(self.rdev);
        let (dmaj, dmin) = dev_split(self.dev);
        put32(&mut b, 128, rmaj);
        put32(&mut b, 132, rmin);
        put32(&mut b, 136, dmaj);
        put32(&mut b, 140, dmin);
        b
    }
}

/// Major and minor number of a Linux `dev_t`.
fn dev_split(dev: u64) -> (u32, u32) {
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    (major as u32, minor as u32)
}

pub fn put32(b: &mut [u8], off: usize, v: u32) {
    b[off..off + 4].copy_from_slice(&v.to_le_bytes());
}

pub fn put64(b: &mut [u8], off: usize, v: u64) {
    b[off..off + 8].copy_from_slice(&v.to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syscall_names_are_sorted_and_found() {
        assert_eq!(syscall_name(nr::WRITE), Some("write"));
        assert_eq!(syscall_name(nr::STATX), Some("statx"));
        assert_eq!(syscall_name(nr::ARM_SET_TLS), Some("ARM_set_tls"));
        assert_eq!(syscall_name(120), Some("clone"));
        assert_eq!(syscall_name(402), None);
    }

    #[test]
    fn stat_layouts_put_fields_where_arm_eabi_reads_them() {
        let st = FileStat { dev: 0x0803, ino: 0x1_2345_6789, mode: 0o100644, size: 0x1_0000_0002, blksize: 4096, ..FileStat::default() };
        let b = st.stat64();
        assert_eq!(u32::from_le_bytes(b[16..20].try_into().unwrap()), 0o100644);
        assert_eq!(u64::from_le_bytes(b[48..56].try_into().unwrap()), 0x1_0000_0002);
        assert_eq!(u64::from_le_bytes(b[96..104].try_into().unwrap()), 0x1_2345_6789);
        assert_eq!(u32::from_le_bytes(b[12..16].try_into().unwrap()), 0x2345_6789, "__st_ino truncated");
        let x = st.statx();
        assert_eq!(u16::from_le_bytes(x[28..30].try_into().unwrap()), 0o100644);
        assert_eq!(u64::from_le_bytes(x[40..48].try_into().unwrap()), 0x1_0000_0002);
        assert_eq!((u32::from_le_bytes(x[136..140].try_into().unwrap()), u32::from_le_bytes(x[140..144].try_into().unwrap())), (8, 3));
    }
}

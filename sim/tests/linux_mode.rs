//! Linux user mode on hand-built static ELFs (docs/linux.md), with nothing fetched: the
//! start-up stack, system calls reaching the host, and the errors that stop a run (an
//! unimplemented call, a dynamically linked program). The real workloads are in
//! qemu_linux.rs.

use streamtrace_isa::ElfImage;
use streamtrace_sim::linux::STACK_TOP;
use streamtrace_sim::semihost::SharedBuffer;
use streamtrace_sim::{Machine, NoHook, Semihost, SimError};

const BASE: u32 = 0x10000;

/// A static ARM EABI executable: one PT_LOAD at `BASE` holding the headers, a GNU ABI tag
/// note (Linux 3.2.0), `code` and, if given, a PT_INTERP string.
fn linux_elf(code: &[u32], interp: Option<&str>) -> Vec<u8> {
    let phnum: u16 = if interp.is_some() { 3 } else { 2 };
    let note_off = 52 + 32 * phnum as u32;
    let code_off = note_off + 32;
    let interp_off = code_off + 4 * code.len() as u32;
    let mut f = Vec::new();
    f.extend_from_slice(&[0x7f, b'E', b'L', b'F', 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    let h16 = |f: &mut Vec<u8>, v: u16| f.extend_from_slice(&v.to_le_bytes());
    let h32 = |f: &mut Vec<u8>, v: u32| f.extend_from_slice(&v.to_le_bytes());
    h16(&mut f, 2); // ET_EXEC
    h16(&mut f, 40); // EM_ARM
    h32(&mut f, 1);
    h32(&mut f, BASE + code_off); // entry
    h32(&mut f, 52); // phoff
    h32(&mut f, 0); // shoff
    h32(&mut f, 0x0500_0200); // EABI5, soft float
    for v in [52u16, 32, phnum, 40, 0, 0] {
        h16(&mut f, v);
    }
    let end = interp_off + interp.map_or(0, |s| s.len() as u32 + 1);
    // PT_LOAD, PT_NOTE, [PT_INTERP]: type, offset, vaddr, paddr, filesz, memsz, flags, align.
    for v in [1, 0, BASE, BASE, end, end, 5, 0x1000] {
        h32(&mut f, v);
    }
    for v in [4, note_off, BASE + note_off, BASE + note_off, 32, 32, 4, 4] {
        h32(&mut f, v);
    }
    if let Some(s) = interp {
        for v in [3, interp_off, BASE + interp_off, BASE + interp_off, s.len() as u32 + 1, s.len() as u32 + 1, 4, 1] {
            h32(&mut f, v);
        }
    }
    assert_eq!(f.len() as u32, note_off);
    for v in [4, 16, 1] {
        h32(&mut f, v); // namesz, descsz, NT_GNU_ABI_TAG
    }
    f.extend_from_slice(b"GNU\0");
    for v in [0, 3, 2, 0] {
        h32(&mut f, v); // Linux 3.2.0
    }
    for w in code {
        h32(&mut f, *w);
    }
    if let Some(s) = interp {
        f.extend_from_slice(s.as_bytes());
        f.push(0);
    }
    f
}

fn machine(elf: &[u8], argv: &[&str]) -> (Result<Machine, SimError>, SharedBuffer) {
    let image = ElfImage::from_bytes_named(elf, "hand-built.elf").unwrap();
    assert!(image.exec_info().is_linux());
    let out = SharedBuffer::new();
    let sh = Semihost::new().with_args(argv).with_stdin(std::io::empty()).with_stdout(out.clone()).with_stderr(SharedBuffer::new());
    (Machine::load(&image, sh), out)
}

const SVC0: u32 = 0xef00_0000;

#[test]
fn write_and_exit_group_reach_the_host() {
    // write(1, msg, 3); exit_group(3); msg: "hi\n"
    let code = [
        0xe3a0_0001, // mov r0, #1
        0xe28f_1014, // add r1, pc, #20   -> msg
        0xe3a0_2003, // mov r2, #3
        0xe3a0_7004, // mov r7, #4        write
        SVC0,
        0xe3a0_0003, // mov r0, #3
        0xe3a0_70f8, // mov r7, #248      exit_group
        SVC0,
        u32::from_le_bytes(*b"hi\n\0"),
    ];
    let (m, out) = machine(&linux_elf(&code, None), &["prog", "arg one"]);
    let mut m = m.unwrap();
    assert_eq!(m.run(1000, &mut NoHook), Ok(3));
    assert_eq!(out.contents(), b"hi\n");
    assert_eq!(m.retired, 8);
    assert_eq!(m.linux.as_ref().map(|l| l.calls()), Some(2));
}

#[test]
fn startup_stack_holds_argv_and_auxv_like_qemu() {
    let (m, _) = machine(&linux_elf(&[SVC0], None), &["prog", "arg one"]);
    let m = m.unwrap();
    let sp = m.cpu.r[13];
    assert_eq!(sp % 16, 0);
    let word = |a: u32| m.mem.read32(a).unwrap();
    let string = |a: u32| String::from_utf8(m.mem.read_cstr(a, 64).unwrap()).unwrap();
    assert_eq!(word(sp), 2, "argc");
    assert_eq!(string(word(sp + 4)), "prog");
    assert_eq!(string(word(sp + 8)), "arg one", "an argument with a space stays one argument");
    assert_eq!((word(sp + 12), word(sp + 16)), (0, 0), "argv and the empty envp end");
    assert_eq!((m.cpu.r[1], m.cpu.r[2]), (word(sp + 4), word(sp + 8)));
    // The strings sit just below STACK_TOP - 8: argv[0], argv[1], then AT_EXECFN's copy.
    assert_eq!(word(sp + 4) + 5 + 8, STACK_TOP - 8 - 5, "\"prog\\0\" \"arg one\\0\" \"prog\\0\"");
    let mut aux = std::collections::HashMap::new();
    let mut a = sp + 20;
    loop {
        let (k, v) = (word(a), word(a + 4));
        if k == 0 {
            break;
        }
        aux.insert(k, v);
        a += 8;
    }
    assert_eq!(aux[&9], BASE + 52 + 64 + 32, "AT_ENTRY");
    assert_eq!(aux[&3], BASE + 52, "AT_PHDR");
    assert_eq!((aux[&4], aux[&5], aux[&6]), (32, 2, 4096), "AT_PHENT, AT_PHNUM, AT_PAGESZ");
    assert_eq!(aux[&16], 0x297, "AT_HWCAP of QEMU's pxa270");
    assert_eq!(string(aux[&15]), "v5l", "AT_PLATFORM");
    assert_eq!(string(aux[&31]), "prog", "AT_EXECFN");
    assert_eq!(aux[&25] % 16, 0, "AT_RANDOM is 16-byte aligned");
    assert_eq!(m.mem.read32(streamtrace_isa::linux::KUSER_HELPER_VERSION), Ok(5), "the helper page is mapped");
}

#[test]
fn an_unimplemented_system_call_stops_the_run_naming_it() {
    let code = [0xe3a0_7002, SVC0]; // mov r7, #2 (fork); svc 0
    let (m, _) = machine(&linux_elf(&code, None), &["prog"]);
    let err = m.unwrap().run(100, &mut NoHook).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, SimError::Syscall { pc, .. } if pc == BASE + 52 + 64 + 32 + 4), "{text}");
    assert!(text.contains("system call 2 (fork) is not implemented"), "{text}");
    let unknown = [0xe3a0_7f65, SVC0]; // mov r7, #0x194 (404: clock_settime64)
    let (m, _) = machine(&linux_elf(&unknown, None), &["prog"]);
    let text = m.unwrap().run(100, &mut NoHook).unwrap_err().to_string();
    assert!(text.contains("(clock_settime64) is not implemented"), "{text}");
}

#[test]
fn a_dynamically_linked_program_is_refused() {
    let (m, _) = machine(&linux_elf(&[SVC0], Some("/lib/ld-linux.so.3")), &["prog"]);
    let text = m.err().expect("refused").to_string();
    assert!(text.contains("dynamically linked") && text.contains("/lib/ld-linux.so.3") && text.contains("-static"), "{text}");
}

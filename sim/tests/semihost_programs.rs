//! Real newlib programs on the simulator alone (no QEMU needed): the start-up sequence,
//! argv from SYS_GET_CMDLINE, printf through SYS_WRITE, a file read through
//! SYS_OPEN/SYS_READ/SYS_FLEN/SYS_SEEK, and the exit status, against programs.json; plus the
//! stream profile of a run.

mod common;

use common::{manifest, sim_like_qemu, Program};
use streamtrace_sim::{ProfileHook, RetireHook};

fn program(name: &str) -> Program {
    manifest().programs.into_iter().find(|p| p.name == name).unwrap_or_else(|| panic!("{name} in programs.json"))
}

fn run<H: RetireHook>(p: &Program, hook: &mut H) -> (i32, String, u64) {
    let stack = u32::from_str_radix(p.qemu_stack_base.trim_start_matches("0x"), 16).unwrap();
    let (mut m, out, _) = sim_like_qemu(p, stack);
    let code = m.run(2 * p.qemu_instructions + 1000, hook).unwrap_or_else(|e| panic!("{}: {e}", p.name));
    (code, out.text(), m.retired)
}

#[test]
fn tiny_crc32_and_stringsearch_match_the_manifest() {
    for name in ["tiny", "crc32", "stringsearch"] {
        let p = program(name);
        let mut hook = ProfileHook::new();
        let (code, out, retired) = run(&p, &mut hook);
        assert_eq!((code, out.as_str()), (p.exit_code, p.stdout.as_str()), "{name}");
        let prof = hook.finish();
        assert_eq!(prof.instructions, retired);
        if p.state == "arm" {
            assert_eq!(retired, p.qemu_instructions, "{name}: ARM programs retire what QEMU logs");
        } else {
            // QEMU logs a Thumb BL pair as one line; the simulator retires two halves.
            assert!(retired > p.qemu_instructions && prof.thumb_instructions > retired / 2, "{name}");
        }
        assert!(prof.streams >= prof.unique_streams && prof.unique_streams >= prof.streams_for_90pct);
        assert!(prof.streams_for_90pct > 0 && prof.max_stream_len as f64 >= prof.avg_stream_len);
        assert_eq!(prof.exceptions, 0, "semihosting calls are not exceptions");
        eprintln!("{name}: {}", serde_json::to_string(&prof).unwrap());
    }
}

#[test]
fn missing_input_file_is_reported_by_the_program() {
    let mut p = program("crc32");
    p.args = vec!["data/no-such-file.txt".into(), "1".into()];
    p.cmdline = format!("{} {}", p.elf, p.args.join(" "));
    let (code, out, _) = run(&p, &mut streamtrace_sim::NoHook);
    assert_eq!(code, 2);
    assert!(out.ends_with("crc32: cannot open data/no-such-file.txt\n"), "{out}");
}

//! Functional simulation speed on every test program, next to qemu-arm on the same ELF in
//! the same run: `cargo bench -p streamtrace-sim --bench programs`.
//!
//! The simulator runs with no retire hook (functional mode) and with the program profile
//! hook; QEMU runs the same command line with no logging (its fastest, translated mode).
//! Each figure is the median of three runs; the ratio is sim MIPS / QEMU MIPS.

use std::process::Command;
use std::time::Instant;

use streamtrace_isa::ElfImage;
use streamtrace_sim::{Machine, NoHook, ProfileHook, RetireHook};

#[path = "support/programs.rs"]
mod support;
use support::{median, programs_dir, qemu_seconds, quiet_semihost};

fn run_sim<H: RetireHook>(elf: &ElfImage, cmdline: &str, hook: &mut H) -> (u64, f64) {
    let mut m = Machine::for_elf(elf, quiet_semihost(cmdline));
    let t = Instant::now();
    m.run(u64::MAX, hook).expect("test programs exit cleanly");
    (m.retired, t.elapsed().as_secs_f64())
}

fn main() {
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(programs_dir().join("programs.json")).unwrap()).unwrap();
    let qemu = Command::new("qemu-arm").arg("--version").output().is_ok();
    println!(
        "{:<14} {:>12} {:>10} {:>12} {:>10} {:>8}",
        "program", "instructions", "sim MIPS", "sim+profile", "qemu MIPS", "ratio"
    );
    let (mut total_insns, mut total_sim, mut total_qemu) = (0u64, 0f64, 0f64);
    for prog in manifest["programs"].as_array().unwrap() {
        let name = prog["name"].as_str().unwrap();
        let elf_rel = prog["elf"].as_str().unwrap();
        let elf = ElfImage::open(programs_dir().join(elf_rel)).unwrap();
        let cmdline = prog["cmdline"].as_str().unwrap();
        let mut insns = 0;
        let sim = median(
            (0..3)
                .map(|_| {
                    let (n, s) = run_sim(&elf, cmdline, &mut NoHook);
                    insns = n;
                    s
                })
                .collect(),
        );
        let prof = median((0..3).map(|_| run_sim(&elf, cmdline, &mut ProfileHook::new()).1).collect());
        let qemu_s = qemu.then(|| {
            median((0..3).map(|_| qemu_seconds(prog)).collect())
        });
        let mips = |s: f64| insns as f64 / s / 1e6;
        total_insns += insns;
        total_sim += sim;
        let (q, ratio) = match qemu_s {
            Some(q) => {
                total_qemu += q;
                (format!("{:.1}", mips(q)), format!("{:.2}", q / sim))
            }
            None => ("-".into(), "-".into()),
        };
        println!("{name:<14} {insns:>12} {:>10.1} {:>12.1} {q:>10} {ratio:>8}", mips(sim), mips(prof));
    }
    let all = |s: f64| total_insns as f64 / s / 1e6;
    println!(
        "{:<14} {:>12} {:>10.1} {:>12} {:>10} {:>8}",
        "all",
        total_insns,
        all(total_sim),
        "",
        if total_qemu > 0.0 { format!("{:.1}", all(total_qemu)) } else { "-".into() },
        if total_qemu > 0.0 { format!("{:.2}", total_qemu / total_sim) } else { "-".into() }
    );
    println!("(QEMU runs include its start-up; ratio = sim MIPS / QEMU MIPS)");
}

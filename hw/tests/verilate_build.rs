//! The Verilated bench build: the C++ compiler chosen for the model reaches the build, and a
//! build is reused only while its Verilog, bench and arguments are unchanged (a bench built
//! by g++ is not taken for a clang build, or the reverse).

use std::path::Path;

use streamtrace_hw::cosim::{model_cxx, verilate};

const VERILOG: &str = "module tiny(input clock, input [7:0] a, output reg [7:0] q);\n\
                       always @(posedge clock) q <= a + 8'd1;\nendmodule\n";

const HARNESS: &str = r#"#include "Vtop.h"
#include "verilated.h"
#include <cstdio>
int main() {
    Vtop top;
    top.a = 41; top.clock = 0; top.eval(); top.clock = 1; top.eval();
    std::printf("q=%u\n", (unsigned)top.q);
    return top.q == 42 ? 0 : 1;
}
"#;

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn built_by_clang(exe: &Path) -> bool {
    // clang writes its version into the executable's .comment section; g++ writes "GCC: (...)".
    contains(&std::fs::read(exe).expect("read the bench"), b"clang version")
}

fn mtime(p: &Path) -> std::time::SystemTime {
    std::fs::metadata(p).and_then(|m| m.modified()).expect("bench mtime")
}

#[test]
fn the_chosen_compiler_builds_the_model_and_a_change_of_compiler_rebuilds() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("verilate-build");
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.as_path();
    // scripts/setup.sh installs clang, so the default choice is clang++.
    std::env::remove_var("STREAMTRACE_MODEL_CXX");
    assert_eq!(model_cxx(), "clang++", "clang++ is installed by scripts/setup.sh and is the default");
    let exe = verilate(d, "tiny", VERILOG, HARNESS, "bench", &[]).expect("clang build");
    assert!(std::process::Command::new(&exe).status().expect("run").success());
    assert!(built_by_clang(&exe), "the default build was not compiled by clang++");
    let first = mtime(&exe);

    // Same Verilog, bench and arguments: the build is reused.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let again = verilate(d, "tiny", VERILOG, HARNESS, "bench", &[]).expect("reuse");
    assert_eq!(mtime(&again), first, "an unchanged build was redone");

    // Another compiler: rebuilt, by that compiler.
    std::env::set_var("STREAMTRACE_MODEL_CXX", "g++");
    assert_eq!(model_cxx(), "g++");
    let gxx = verilate(d, "tiny", VERILOG, HARNESS, "bench", &[]).expect("g++ build");
    assert_ne!(mtime(&gxx), first, "a change of compiler reused the clang build");
    assert!(!built_by_clang(&gxx), "STREAMTRACE_MODEL_CXX=g++ still built with clang++");
    assert!(std::process::Command::new(&gxx).status().expect("run").success());

    // Other arguments: rebuilt too.
    std::env::remove_var("STREAMTRACE_MODEL_CXX");
    let before = mtime(&gxx);
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let defined = verilate(d, "tiny", VERILOG, HARNESS, "bench", &["-CFLAGS", "-DUNUSED_FLAG=1"]).expect("build with a define");
    assert_ne!(mtime(&defined), before, "a change of arguments reused the build");
    assert!(built_by_clang(&defined));
}

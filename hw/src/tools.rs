//! The external HDL tools: finding them (with the install command when missing), the
//! Verilator lint, and Yosys area figures.

use std::path::Path;
use std::process::Command;

/// The Debian packages that provide the tools, as scripts/setup.sh installs them.
pub const INSTALL_HINT: &str = "install them with `apt-get install -y verilator yosys iverilog` (or run scripts/setup.sh)";

/// Fail with the install command when `tool` is not on PATH.
pub fn require_tool(tool: &str) -> Result<(), String> {
    // Icarus (`iverilog`, `vvp`) knows no `--version` (exit status 1 and 4); `-V` works.
    let flag = if matches!(tool, "iverilog" | "vvp") { "-V" } else { "--version" };
    match Command::new(tool).arg(flag).output() {
        Ok(o) if o.status.success() => Ok(()),
        Ok(_) | Err(_) => Err(format!("`{tool}` is not available: {INSTALL_HINT}")),
    }
}

/// Verilator warnings the exports waive, each for a reason documented in
/// verilog-out/README.md. Everything else `-Wall` reports is a failure.
pub const LINT_WAIVERS: &[&str] = &[
    // rust-hdl writes every instance as its own module, all in one file.
    "DECLFILENAME",
    // rust-hdl evaluates each kernel as one always block; Verilator sees the block's own
    // outputs feeding submodules that feed it back, a false loop between blocks (no
    // combinational path loops: the RustHDL simulation converges, which it could not).
    "UNOPTFLAT",
];

/// `verilator --lint-only -Wall` on one export, with the documented waivers; returns the
/// remaining warning and error lines (empty = clean).
pub fn verilator_lint(path: &Path, top: &str) -> Result<Vec<String>, String> {
    require_tool("verilator")?;
    let mut cmd = Command::new("verilator");
    cmd.args(["--lint-only", "-Wall", "--top-module", top]);
    for w in LINT_WAIVERS {
        cmd.arg(format!("-Wno-{w}"));
    }
    cmd.arg(path);
    let out = cmd.output().map_err(|e| format!("running verilator: {e}"))?;
    let text = String::from_utf8_lossy(&out.stderr);
    Ok(text.lines().filter(|l| l.starts_with('%')).map(str::to_string).collect())
}

/// Icarus warnings the exports waive, each for a reason documented in verilog-out/README.md.
pub const ICARUS_WAIVERS: &[&str] = &[
    // An asynchronous-read table (`always @(*) rdata = mem[raddr]`, pft's tables) is
    // sensitive to every word of its memory: that is the intended meaning (a write to the
    // addressed word changes the read), Icarus only notes that it cannot narrow it.
    "@* is sensitive to all",
];

/// `iverilog -g2005 -Wall` compile of one export (nothing is written); returns the warning
/// and error lines that no entry of [`ICARUS_WAIVERS`] covers (empty = clean).
pub fn icarus_lint(path: &Path, top: &str) -> Result<Vec<String>, String> {
    require_tool("iverilog")?;
    let out = Command::new("iverilog")
        .args(["-g2005", "-Wall", "-s", top, "-o", "/dev/null"])
        .arg(path)
        .output()
        .map_err(|e| format!("running iverilog: {e}"))?;
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let mut lines: Vec<String> =
        text.lines().filter(|l| !l.trim().is_empty() && !ICARUS_WAIVERS.iter().any(|w| l.contains(w))).map(str::to_string).collect();
    if !out.status.success() && lines.is_empty() {
        lines.push(format!("iverilog failed with {}", out.status));
    }
    Ok(lines)
}

/// Yosys figures for one export after a generic `synth`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct YosysArea {
    pub cells: u64,
    pub flip_flops: u64,
    /// Bits in inferred memories before mapping (the SDC tag/SL tables and the LSP table);
    /// the generic `synth` maps them to flip-flops, so `flip_flops` includes them.
    pub memory_bits: u64,
}

/// Synthesize `path` with Yosys (`synth -flatten`) and count cells, flip-flops and the
/// memory bits the design infers (counted before memories are mapped to flip-flops).
pub fn yosys_area(path: &Path, top: &str) -> Result<YosysArea, String> {
    require_tool("yosys")?;
    let file = path.display().to_string();
    // Memories as RTLIL memories, before any mapping (a generic `synth` maps them to FFs).
    let mem = run_yosys(&format!("read_verilog {file}; hierarchy -top {top}; proc; flatten; stat"))?;
    let memory_bits = parse_mem_bits(last_stat(&mem));
    let synth = run_yosys(&format!("read_verilog {file}; synth -flatten -top {top}; stat"))?;
    let (cells, flip_flops) = parse_cells_and_ffs(last_stat(&synth));
    Ok(YosysArea { cells, flip_flops, memory_bits })
}

fn run_yosys(script: &str) -> Result<String, String> {
    let out = Command::new("yosys").args(["-p", script]).output();
    let out = match out {
        Ok(o) => o,
        Err(e) => return Err(format!("running yosys: {e}")),
    };
    if !out.status.success() {
        return Err(format!("yosys failed: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `Number of cells:` of the top, and the sum of the `$_DFF...`/`$_SDFF...` cell counts.
fn parse_cells_and_ffs(stat: &str) -> (u64, u64) {
    let mut cells = 0;
    let mut ffs = 0;
    for line in stat.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("Number of cells:") {
            cells = rest.trim().parse().unwrap_or(0);
        } else if t.starts_with("$_DFF") || t.starts_with("$_SDFF") || t.starts_with("$_DFFE") || t.starts_with("$_SDFFE") {
            ffs += t.split_whitespace().last().and_then(|n| n.parse::<u64>().ok()).unwrap_or(0);
        }
    }
    (cells, ffs)
}

/// The last `stat` report of a Yosys log (`synth` prints one of its own before ours).
fn last_stat(log: &str) -> &str {
    log.rfind("Printing statistics").map_or(log, |i| &log[i..])
}

/// "Number of memory bits:" of a `stat` report.
fn parse_mem_bits(stat: &str) -> u64 {
    stat.lines()
        .filter_map(|l| l.trim().strip_prefix("Number of memory bits:"))
        .filter_map(|n| n.trim().parse::<u64>().ok())
        .next_back()
        .unwrap_or(0)
}

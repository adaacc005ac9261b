//! Every export, checked as text and by two more tools: each signal that another block reads
//! is written at most once per evaluation of a combinational block (no default-then-override
//! glitches for an event-driven simulator to chase; `verilog::repeated_cross_block_writes`),
//! `verilator --lint-only -Wall` and `iverilog -Wall` report nothing beyond the documented
//! waivers (`tools::LINT_WAIVERS`, `tools::ICARUS_WAIVERS`). Needs Verilator and Icarus:
//! without them the tests fail with the install command.

use std::path::PathBuf;

use streamtrace_hw::tools::{icarus_lint, verilator_lint};
use streamtrace_hw::verilog::{export_verilog, repeated_cross_block_writes, write_export};
use streamtrace_hw::pft::PftHwConfig;
use streamtrace_hw::HwConfig;

/// The committed configurations, the drop policy, a wide port with a clock ratio, two- and
/// three-cycle services (the staged record register; the two-stage compressor), and the
/// smallest and largest table geometries the RTL is measured with.
const EXPORTS: &[(&str, &str)] = &[
    ("rsdc-32x4-128", ""),
    ("esdc-32x4-128", ""),
    ("bsdc-32x4-128", ""),
    ("rsdc-32x4-128,isa=arm", "policy=drop"),
    ("esdc-16x2-64,sync=4000", "sdb=1,obuf=20,port=4,ratio=2,svc_miss=3,policy=drop"),
    ("rsdc-8x4-32,isa=arm", ""),
    ("rsdc-32x4-128,isa=arm", "svc_hit=2,svc_miss=3"),
    ("rsdc-32x4-128,isa=arm", "svc_hit=3,svc_miss=4"),
    ("esdc-16x2-64,sync=4000", "sdb=1,obuf=20,svc_hit=3,svc_miss=3,policy=drop"),
    ("bsdc-1x8-16,maxsl=31", "sdb=3"),
];

fn hw(cfg: &str, buffers: &str) -> HwConfig {
    HwConfig::new(&cfg.parse().unwrap(), &buffers.parse().unwrap()).unwrap()
}

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("hw-exports")
}

#[test]
fn every_cross_block_signal_is_written_once_per_evaluation() {
    for &(cfg, buf) in EXPORTS {
        let v = export_verilog(&hw(cfg, buf)).unwrap();
        let bad = repeated_cross_block_writes(&v);
        assert!(bad.is_empty(), "{cfg} {buf}: written more than once per evaluation:\n{}", bad.join("\n"));
    }
    // pft: the default, drop with syncs, the smallest predictors.
    for (cfg, buf) in [("pft", ""), ("pft,sync=3000", "sdb=1,obuf=40,policy=drop"), ("pft,hlen=none,ras=0,itp=0,itt=0,rtc=0", "port=4,ratio=2")] {
        let h = PftHwConfig::new(&cfg.parse().unwrap(), &buf.parse().unwrap()).unwrap();
        let bad = repeated_cross_block_writes(&streamtrace_hw::pft::export_verilog(&h).unwrap());
        assert!(bad.is_empty(), "{cfg} {buf}: written more than once per evaluation:\n{}", bad.join("\n"));
    }
}

/// The check finds a default-then-override write of a signal another block reads, through
/// `if`/`else` and `case`, and leaves alone locals, flip-flop inputs and single writes.
#[test]
fn the_write_check_finds_default_then_override() {
    let v = "\
module t(a,o,p);
    input wire  a;
    output reg  o;
    output reg  p;
    reg  local;
    reg  sub__x;
    reg  ff__d;
    t__sub sub(
        .x(sub__x)
    );
    t__ff ff(
        .d(ff__d)
    );
    always @(*) begin
        local = 1'b0;
        if (a) begin
            local = 1'b1;
        end
        o = local;
        p = 1'b0;
        case (a)
            0:
                begin
                    sub__x = 1'b1;
                end
            default:
                begin
                    sub__x = 1'b0;
                    if (local) begin
                        p = 1'b1;
                    end
                end
        endcase
        ff__d = 1'b0;
        if (a) begin
            ff__d = 1'b1;
        end
    end
endmodule
module t__sub(x);
    input wire  x;
    reg  y;
    always @(*) begin
        y = x;
    end
endmodule
module t__ff(d);
    input wire  d;
endmodule
";
    assert_eq!(repeated_cross_block_writes(v), vec!["t: p (2 writes)".to_string()]);
    let fixed = v.replace("        p = 1'b0;\n", "");
    assert!(repeated_cross_block_writes(&fixed).is_empty());
}

#[test]
fn every_export_lints_clean_in_verilator_and_icarus() {
    for &(cfg, buf) in EXPORTS {
        let h = hw(cfg, buf);
        let path = write_export(&h, &dir()).unwrap();
        let top = h.module_name();
        let v = verilator_lint(&path, &top).unwrap();
        assert!(v.is_empty(), "{cfg} {buf}: verilator -Wall:\n{}", v.join("\n"));
        let i = icarus_lint(&path, &top).unwrap();
        assert!(i.is_empty(), "{cfg} {buf}: iverilog -Wall:\n{}", i.join("\n"));
    }
}


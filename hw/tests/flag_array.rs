//! The flag arrays (hw/src/mem.rs, `FlagArray`) in Verilator against their RustHDL
//! simulation, every cycle, on random clears, writes and reads that hit the same rows
//! often: above all the registered read's forwarding of a write to the row it reads, which
//! whole-module runs reach only rarely (the first write to an LSP row after a sync, read
//! by a service in the next cycle).

mod common;

use std::path::PathBuf;

use common::Rng;
use rust_hdl::prelude::*;
use streamtrace_hw::cosim::{run_replay, verilate};
use streamtrace_hw::mem::FlagArray;
use streamtrace_hw::verilog::export_block;

const HARNESS: &str = include_str!("../../testbenches/cosim/flag_array_harness.cpp");

/// A flag array to test: name, constructor, rows, bits per row.
type Case = (&'static str, fn() -> FlagArray, u64, u32);

/// The RustHDL simulation of `make()` on random operations: one vector line per cycle.
fn vectors(make: fn() -> FlagArray, rows: u64, row_bits: u32, seed: u64) -> (String, [u64; 2]) {
    let mut uut = make();
    uut.connect_all();
    check_all(&uut).unwrap();
    let mut rng = Rng(seed);
    let mut s = String::from("# clear we waddr wdata raddr rdata\n");
    // (cycles whose write goes to the row read at the edge, cycles reading a nonzero row)
    let mut seen = [0u64; 2];
    for _ in 0..20_000 {
        let clear = rng.chance(30);
        let we = rng.chance(500);
        let waddr = rng.below(rows);
        let wdata = rng.below(1 << row_bits);
        let raddr = rng.below(rows);
        uut.clear.next = clear;
        uut.we.next = we;
        uut.waddr.next = waddr.into();
        uut.wdata.next = wdata.into();
        uut.raddr.next = raddr.into();
        assert!(simulate(&mut uut, 100));
        let rdata = uut.rdata.val().to_u64();
        seen[1] += (rdata != 0) as u64;
        s.push_str(&format!("{} {} {waddr} {wdata} {raddr} {rdata}\n", clear as u8, we as u8));
        seen[0] += (we && !clear && waddr == raddr) as u64;
        uut.clock.next = Clock::from(true);
        assert!(simulate(&mut uut, 100));
        uut.clock.next = Clock::from(false);
        assert!(simulate(&mut uut, 100));
    }
    (s, seen)
}

#[test]
fn flag_arrays_in_verilator_equal_their_rusthdl_simulation() {
    let cases: [Case; 4] = [
        ("registered-4x1", || FlagArray::registered_read(4, 1), 4, 1),
        ("registered-8x4", || FlagArray::registered_read(8, 4), 8, 4),
        ("registered-1x1", || FlagArray::registered_read(1, 1), 1, 1),
        ("decoded-4x2", || FlagArray::decoded(4, 2), 4, 2),
    ];
    for (name, make, rows, row_bits) in cases {
        let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("flag-array").join(name);
        std::fs::create_dir_all(&d).unwrap();
        let verilog = export_block(make(), "flags", "").unwrap();
        let exe = verilate(&d, "flags", &verilog, HARNESS, "bench", &[]).unwrap_or_else(|e| panic!("{name}: {e}"));
        let (text, seen) = vectors(make, rows, row_bits, rows * 7 + row_bits as u64);
        assert!(seen[0] > 500 && seen[1] > 1_000, "{name}: same-row writes and set flags must occur: {seen:?}");
        let file = d.join("vectors.txt");
        std::fs::write(&file, &text).unwrap();
        let out = run_replay(&exe, &[&file]).unwrap();
        assert!(out.is_ok(), "{name}: {out:?}");
        // A flipped expectation is caught.
        let bad: String = text
            .lines()
            .enumerate()
            .map(|(i, l)| {
                if i == 5_000 {
                    let mut f: Vec<String> = l.split(' ').map(str::to_string).collect();
                    let v: u64 = f[5].parse().unwrap();
                    f[5] = (v ^ 1).to_string();
                    f.join(" ") + "\n"
                } else {
                    format!("{l}\n")
                }
            })
            .collect();
        std::fs::write(&file, bad).unwrap();
        let out = run_replay(&exe, &[&file]).unwrap();
        assert!(out.as_ref().is_err_and(|m| m.contains("MISMATCH row=4999")), "{name}: {out:?}");
    }
}

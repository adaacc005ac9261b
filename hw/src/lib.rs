//! streamtrace-hw: the stream-cache trace module in RustHDL (docs/trace-format.md for the
//! bits, docs/trace-timing.md for the cycles), its Verilog export and the tools that check
//! it (Verilator lint and co-simulation, Yosys area).
//!
//! Blocks, one per file, each a `LogicBlock` tested against the model's structure:
//! [`detector::StreamDetector`], [`sdb::DescriptorBuffer`], [`sdc::StreamDescriptorCache`],
//! [`lsp::LastStreamPredictor`], [`aolc::AdaptiveOneLengthCounter`],
//! [`encoder::RecordEncoder`], [`outbuf_lean::LeanOutputBuffer`] and the top
//! [`top::TraceModule`] ([`outbuf::OutputBuffer`], the queue-register version, serves pft).
//! Widths that depend on the configuration are run-time values (constants and table
//! geometry), so one Rust type serves every configuration.

pub mod aolc;
pub mod config;
pub mod detector;
pub mod encoder;
pub mod lsp;
pub mod mem;
pub mod outbuf;
pub mod outbuf_lean;
pub mod sdb;
pub mod sdc;
pub mod top;

pub use config::{HwConfig, HwError};
pub use top::TraceModule;
pub mod drive;
pub mod golden;
pub mod verilog;
pub mod cosim;
pub mod icarus;
pub mod tools;
pub mod pft;

//! streamtrace-model: the bit-exact reference of the stream-cache trace module described in
//! docs/trace-format.md. Each structure of the paper is a small type with its own tests
//! (`StreamDescriptorCache`, `LastStreamPredictor`, `LastValueStartAddress`,
//! `AdaptiveOneLengthCounter`); `CompressorState` holds them with the transitions the encoder
//! and the decoder share; `Encoder` turns retire events into trace-port bits.

pub mod aolc;
pub mod bits;
pub mod capture;
pub mod checksum;
pub mod compressor;
pub mod config;
pub mod container;
pub mod cycle;
pub mod detector;
pub mod encoder;
pub mod event;
pub mod events_file;
pub mod format;
pub mod lsp;
pub mod lvsa;
pub mod pft;
pub mod plain_runs;
pub mod sdc;
pub mod stats;
pub mod storage;
pub mod tslz;
pub mod tuple_history;

pub use aolc::AdaptiveOneLengthCounter;
pub use compressor::{CompressorState, StreamOutcome};
pub use cycle::{BufferConfig, CycleError, CycleOutput, CycleStats, CycleTraceModule, EncodedStreams, FullPolicy, PortBeat};
pub use config::{Config, ConfigError, IsaMode, Replacement, Scheme};
pub use detector::{StreamDescriptor, StreamDetector};
pub use encoder::{encode_events, EncodeError, EncodedTrace, Encoder};
pub use event::{BranchClass, PlainRun, RetireEvent};
pub use lsp::LastStreamPredictor;
pub use lvsa::LastValueStartAddress;
pub use sdc::StreamDescriptorCache;
pub use stats::{ComponentBits, Stats};
pub use storage::{storage_bits, StorageBits};

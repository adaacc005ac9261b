//! Writes the seed corpora of both fuzz targets (docs/fuzzing.md):
//!
//! ```text
//! cargo run --manifest-path fuzz/Cargo.toml --example make_seeds [OUT_DIR]
//! ```
//!
//! OUT_DIR defaults to `fuzz/corpus` (git-ignored). `decode/` gets real encoded traces over
//! the target's fixed image, each prefixed with the configuration bytes that select its
//! configuration; `roundtrip/` gets inputs that decode to each scheme with a spread of
//! program shapes. Everything is deterministic; the corpus is ~100 KB.

use std::path::PathBuf;

use streamtrace_fuzz::{config_from_bytes, image, image_spec, CONFIG_BYTES};
use streamtrace_model::{Config, Encoder};
use streamtrace_sw_decoder::decode_trace;
use streamtrace_sw_decoder::synthetic::generate;

/// Configuration bytes for a spread of schemes, sizes and options (see `config_from_bytes`).
const CONFIGS: &[[u8; CONFIG_BYTES]] = &[
    [0, 0, 0, 6, 0, 0, 0, 0],              // fbase
    [1, 0, 0, 6, 0, 0, 0, 0],              // base
    [2, 0, 0, 6, 0, 0, 0, 0],              // nexs
    [2, 0, 0, 3, 0, 0, 0, 0x81],           // nexs, maxsl=16, sync
    [3, 0x15, 7, 6, 0, 0, 4, 0],           // bsdc-32x4-128
    [3, 0x04, 4, 4, 0, 0, 4, 0],           // bsdc-16x1-16, maxsl=31
    [3, 0x1D, 0x27, 0x0E, 0, 0, 4, 0],     // bsdc-32x8, hist=3, lru
    [4, 0x15, 7, 6, 13, 0x7C, 4, 0],       // esdc-32x4-128
    [4, 0x0B, 5, 0x1A, 19, 0x05, 2, 0x83], // esdc small, fifo, sync
    [5, 0x15, 7, 6, 11, 0x7C, 4, 0],       // rsdc-32x4-128
    [5, 0x13, 3, 0x1D, 19, 0x4C, 0, 0x82], // rsdc-8x4, random, maxsl=64, sync
    [0x85, 0x15, 7, 6, 11, 0x7C, 4, 0],    // rsdc-32x4-128,isa=arm
    [0x83, 0x12, 6, 1, 0, 0, 4, 0],        // bsdc-4x4-64,isa=arm,maxsl=3
    [0x81, 0, 0, 6, 0, 0, 0, 0x88],        // base,isa=arm,sync=513
];

fn encode(cfg: &Config, events: &[streamtrace_model::RetireEvent]) -> Vec<u8> {
    let mut enc = Encoder::new(cfg);
    for e in events {
        enc.push(e).expect("synthetic events are valid");
    }
    enc.finish().0.bytes
}

fn file_name(cfg: &Config) -> String {
    cfg.to_string().replace([',', '='], "_")
}

fn main() {
    let out = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus"));
    let decode_dir = out.join("decode");
    let roundtrip_dir = out.join("roundtrip");
    std::fs::create_dir_all(&decode_dir).unwrap();
    std::fs::create_dir_all(&roundtrip_dir).unwrap();
    let mut total = 0;
    for (i, head) in CONFIGS.iter().enumerate() {
        let cfg = config_from_bytes(head).unwrap_or_else(|| panic!("seed config {i} invalid"));
        // decode: a real trace over the target's image.
        for (j, n) in [300usize, 3000].into_iter().enumerate() {
            let spec = image_spec(cfg.isa, n);
            let run = generate(&spec).unwrap();
            assert_eq!(&run.image, image(cfg.isa), "seed image differs from the target's");
            let trace = encode(&cfg, &run.events);
            let out = decode_trace(&cfg, &trace, image(cfg.isa), false);
            assert!(
                out.errors.is_empty() && out.ended,
                "{cfg}: seed does not decode: {:?}",
                out.errors
            );
            assert_eq!(
                out.addresses.len(),
                run.events.len(),
                "{cfg}: seed decodes to another run"
            );
            let mut input = head.to_vec();
            input.extend_from_slice(&trace);
            total += input.len();
            std::fs::write(decode_dir.join(format!("seed-{i:02}-{j}-{}", file_name(&cfg))), &input).unwrap();
        }
        // roundtrip: config, seed, size, shape bytes, syncs.
        let mut input = head.to_vec();
        input.extend_from_slice(&(i as u64 * 7919).to_le_bytes());
        input.extend_from_slice(&(500u16 + 300 * i as u16).to_le_bytes());
        input.push((i % 16) as u8); // sizes
        input.extend_from_slice(&(130u16 + 20 * i as u16).to_le_bytes()); // density
        input.extend_from_slice(&(600u16).to_le_bytes()); // taken
        input.push((i % 5) as u8); // exceptions
        input.push(8); // indirect targets
        input.push((i % 3) as u8); // requested syncs
        input.extend_from_slice(&[0x40, 0x01, 0x00, 0x03]);
        total += input.len();
        std::fs::write(roundtrip_dir.join(format!("seed-{i:02}-{}", file_name(&cfg))), &input).unwrap();
        println!("{cfg}");
    }
    println!("wrote {total} bytes of seeds to {}", out.display());
}

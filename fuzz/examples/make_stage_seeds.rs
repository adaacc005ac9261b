//! Writes the seed corpora of the host-stage fuzz targets (docs/fuzzing.md):
//!
//! ```text
//! cargo run --manifest-path fuzz/Cargo.toml --example make_stage_seeds [OUT_DIR]
//! ```
//!
//! OUT_DIR defaults to `fuzz/corpus` (git-ignored): `pdats_decode/`, `pdats2_decode/` and
//! `laplace_decode/` get real files (Johnson's Table 3 trace, a synthetic mixed trace, the
//! Laplace seed examples), each behind the selector byte its target reads first.
//! Deterministic, a few KB.

use std::path::{Path, PathBuf};

use streamtrace_stages::laplace::{Access, RawDiffWriter, RawRecord, RawWriter, SadDiffWriter, SadWriter};
use streamtrace_stages::sad::reduce_raw;
use streamtrace_stages::{pdats, pdats2, Ref};

/// Johnson's Table 3 (algorithms.md §2.3).
const TABLE3: [(u8, u64); 29] = [
    (2, 0x430d70), (2, 0x430d74), (2, 0x415130), (0, 0x1000acac), (2, 0x415134), (2, 0x415138),
    (2, 0x41513c), (2, 0x415140), (2, 0x430c20), (2, 0x430c24), (1, 0x7fff00ac), (2, 0x430c28),
    (1, 0x7fff00a8), (2, 0x430c2c), (1, 0x7fff00a4), (2, 0x430c30), (1, 0x7fff009c), (2, 0x430c34),
    (1, 0x7fff00a0), (2, 0x430c38), (1, 0x7fff0098), (2, 0x430c3c), (2, 0x430c40), (2, 0x430c44),
    (2, 0x430c48), (2, 0x430c4c), (2, 0x430c50), (2, 0x430c54), (2, 0x430c58),
];

/// A small program-like trace: loops of sequential fetches, stack and array data.
fn synthetic(n: usize, stride: u64) -> Vec<Ref> {
    let mut out = Vec::new();
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut pc = 0x8000u64;
    while out.len() < n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.push(Ref::new(2, pc));
        pc += stride;
        match x % 8 {
            0 => out.push(Ref::new(0, 0x2_0000 + (x >> 8) % 4096 * 4)),
            1 => out.push(Ref::new(1, 0x7fff_f000 - (x >> 8) % 64 * 4)),
            2 => pc = 0x8000 + (x >> 16) % 1024 * stride,
            _ => {}
        }
    }
    out
}

fn save(dir: &Path, name: &str, sel: u8, body: &[u8]) {
    let mut v = vec![sel];
    v.extend_from_slice(body);
    std::fs::write(dir.join(name), v).unwrap();
}

fn main() {
    let out = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus"));
    let table3: Vec<Ref> = TABLE3.iter().map(|&(k, a)| Ref::new(k, a)).collect();

    let dir = out.join("pdats_decode");
    std::fs::create_dir_all(&dir).unwrap();
    let t3 = pdats::encode(&table3, &Default::default()).unwrap();
    save(&dir, "table3", 0, &t3);
    save(&dir, "table3-body", 1, &t3[16..]);
    let syn = pdats::encode(&synthetic(400, 4), &Default::default()).unwrap();
    save(&dir, "synthetic", 0, &syn);
    let timed: Vec<(Ref, u64)> = synthetic(200, 4).into_iter().enumerate().map(|(i, r)| (r, (i as u64) * (i as u64))).collect();
    let opts = pdats::PdatsOptions { time: true, ..Default::default() };
    save(&dir, "timed", 0, &pdats::encode_timed(&timed, &opts).unwrap());
    let opts = pdats::PdatsOptions { wide: true, data_default_offset: true, comment: "seed".into(), ..Default::default() };
    save(&dir, "wide", 0, &pdats::encode(&synthetic(200, 4), &opts).unwrap());

    let dir = out.join("pdats2_decode");
    std::fs::create_dir_all(&dir).unwrap();
    let t3 = pdats2::encode(&table3, &Default::default()).unwrap();
    save(&dir, "table3", 0, &t3);
    save(&dir, "table3-body", 1 | (2 << 2), &t3[16..]);
    save(&dir, "synthetic", 0, &pdats2::encode(&synthetic(400, 4), &Default::default()).unwrap());
    let thumb = pdats2::Pdats2Options { stride_log2: 1, ..Default::default() };
    save(&dir, "thumb", 0, &pdats2::encode(&synthetic(400, 2), &thumb).unwrap());
    let wide = pdats2::Pdats2Options { wide: true, ..Default::default() };
    save(&dir, "wide", 0, &pdats2::encode(&synthetic(200, 4), &wide).unwrap());

    let dir = out.join("laplace_decode");
    std::fs::create_dir_all(&dir).unwrap();
    let raw: Vec<RawRecord> = synthetic(300, 4)
        .iter()
        .enumerate()
        .map(|(i, r)| RawRecord {
            kind: Access::from_label(r.kind).unwrap(),
            cycle: 3 * i as u64,
            len: if i % 5 == 0 { 2 } else { 4 },
            asid: 1 + (i / 100) as u64,
            vaddr: r.addr + (i % 3) as u64,
        })
        .collect();
    let mut w = RawWriter::new(Vec::new());
    raw.iter().for_each(|r| w.write(r).unwrap());
    save(&dir, "raw", 0 | (3 << 2) | (5 << 5), &w.into_inner().unwrap());
    let mut w = RawDiffWriter::new(Vec::new());
    raw.iter().for_each(|r| w.write(r).unwrap());
    save(&dir, "raw-diff", 1 | (1 << 2), &w.into_inner().unwrap());
    save(&dir, "seed-raw", 0, b"r 4132ff93 4 1015a 80b1d32\nw 4132ff95 2 1015a 80b1000\nr 4132ff96 4 1015a 80b2152\n");
    save(&dir, "seed-diff", 1, b"    r 4132ff93 4 1015a + 80b1d32\n    w        2 2     0 -     d32\n    r        1 4     0 +    1152\n");
    let (sad, _) = reduce_raw(&raw, 4, 256).unwrap();
    let mut w = SadWriter::new(Vec::new());
    sad.iter().for_each(|r| w.write(r).unwrap());
    save(&dir, "sad", 2, &w.into_inner().unwrap());
    let mut w = SadDiffWriter::new(Vec::new());
    sad.iter().for_each(|r| w.write(r).unwrap());
    save(&dir, "sad-diff", 3, &w.into_inner().unwrap());
    save(&dir, "seed-sad", 2, b"r 123456789abcdef0 1bd8ef123 2ca4563118 9f8e7 800a3\n");
    save(&dir, "seed-sad-diff", 3, b"r 123456789abcdef0 1bd8ef123 2ca4563118 9f8e7 + 800a3\nr 100 232 25e 0 + a3\n");
    eprintln!("seeds written to {}", out.display());
}

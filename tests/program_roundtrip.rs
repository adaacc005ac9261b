//! Real programs through the whole chain: the core model runs each test program of
//! testbenches/programs, the trace module encodes its retire events under every scheme, and
//! the decoder rebuilds the exact retired PC sequence from the bits and the program's ELF.

use std::path::{Path, PathBuf};

use streamtrace_isa::ElfImage;
use streamtrace_model::{Config, Encoder};
use streamtrace_sim::semihost::SharedBuffer;
use streamtrace_sim::{Machine, MemAccess, Semihost, StepOutcome};
use streamtrace_sw_decoder::{decode_trace, verify_addresses_iw};

/// Instructions per program: enough to cover start-up, printf and the hot loops.
const LIMIT: u64 = 1_500_000;

const CONFIGS: &[&str] = &[
    "fbase",
    "base",
    "nexs",
    "bsdc-32x4-128",
    "esdc-32x4-128",
    "rsdc-32x4-128",
    "bsdc-8x4-32,repl=lru",
    "rsdc-64x4-256,maxsl=64,sync=200000",
];

fn programs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testbenches/programs")
}

#[test]
fn every_program_decodes_exactly_under_every_scheme() {
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(programs_dir().join("programs.json")).unwrap()).unwrap();
    let programs = manifest["programs"].as_array().unwrap();
    assert!(programs.len() >= 12);
    for prog in programs {
        let name = prog["name"].as_str().unwrap();
        let elf_path = programs_dir().join(prog["elf"].as_str().unwrap());
        let elf = ElfImage::open(&elf_path).unwrap();
        let out = SharedBuffer::new();
        let sh = Semihost::new()
            .with_cmdline(prog["cmdline"].as_str().unwrap())
            .with_workdir(programs_dir())
            .with_stdin(std::io::empty())
            .with_stdout(out.clone())
            .with_stderr(SharedBuffer::new());
        let mut m = Machine::for_elf(&elf, sh);
        let configs: Vec<Config> = CONFIGS.iter().map(|c| c.parse().unwrap()).collect();
        let mut encoders: Vec<Encoder> = configs.iter().map(Encoder::new).collect();
        let mut pcs: Vec<u32> = Vec::with_capacity(LIMIT as usize);
        let mut hook = |ev: &streamtrace_model::RetireEvent, _: &[MemAccess]| {
            pcs.push(ev.iw_addr());
            for e in &mut encoders {
                e.push(ev).unwrap_or_else(|err| panic!("{name}: {err}"));
            }
        };
        while m.retired < LIMIT {
            match m.step(&mut hook).unwrap_or_else(|e| panic!("{name}: {e}")) {
                StepOutcome::Running => {}
                StepOutcome::Exited(code) => {
                    assert_eq!(code, prog["exit_code"].as_i64().unwrap() as i32, "{name}");
                    break;
                }
            }
        }
        assert!(pcs.len() > 1000, "{name}: ran {} instructions", pcs.len());
        for (cfg, enc) in configs.iter().zip(encoders) {
            let (trace, stats) = enc.finish();
            let decoded = decode_trace(cfg, &trace.bytes, &elf, false);
            assert!(decoded.errors.is_empty(), "{name} {cfg}: {:?}", decoded.errors);
            assert!(decoded.ended, "{name} {cfg}");
            if let Err(mm) = verify_addresses_iw(&decoded.addresses, &pcs) {
                panic!("{name} {cfg}: first mismatch {mm:?}");
            }
            assert_eq!(stats.instructions, pcs.len() as u64);
        }
    }
}

//! Helpers shared by the fuzz targets (`fuzz_targets/`) and the seed generator
//! (`examples/make_seeds.rs`): a byte cursor, the byte -> `Config` mapping and the fixed
//! synthetic program images the `decode` target decodes against. See docs/fuzzing.md.

use std::sync::OnceLock;

use streamtrace_isa::MemoryImage;
use streamtrace_model::{Config, IsaMode, Replacement, Scheme};
use streamtrace_sw_decoder::synthetic::{generate, SyntheticSpec};

/// Bytes at the start of every fuzz input that select the configuration.
pub const CONFIG_BYTES: usize = 8;

/// maxSL values the fuzzers pick from (small ones make maxSL cuts frequent; bounded so that
/// one run record cannot expand into billions of addresses).
const MAX_SL: [u32; 8] = [2, 3, 5, 16, 31, 64, 255, 1000];

/// Build a configuration from 8 bytes; `None` when `Config::validate` rejects it.
///
/// | byte | bits | field |
/// |---|---|---|
/// | 0 | 0-6 `% 6`, 7 | scheme (`Scheme::ALL`), `isa=arm` |
/// | 1 | 0-2, 3-4 | log2 sets (0..=7), log2 ways (0..=3) |
/// | 2 | 0-3 `% 11`, 4-6 | log2 LSP entries (0..=10), hist - 1 |
/// | 3 | `% 8`, 3-4 | maxSL (`MAX_SL`), replacement |
/// | 4 | `% 31` | u - 1 (e/rSDC) |
/// | 5 | 0-1, 2-4, 5-7 | olcmin - 1, olcmax - olcmin, olc (e/rSDC) |
/// | 6 | 0-4, 5, 6, 7 | shift, large geometry (sets x64, LSP x2^10), maxSL 65535, olcmax + 8 |
/// | 7 | bit 7, 0-6 | periodic sync on, period / 64 |
///
/// The flags of byte 6 reach the limits of section 4 (k = 16, 2^20 LSP entries, maxSL
/// 65535, 16-bit AOLC); the seeds leave them clear.
pub fn config_from_bytes(b: &[u8; CONFIG_BYTES]) -> Option<Config> {
    // Every scheme but SW-GZIP, whose bytes are inflated before a `Decoder` sees them.
    let scheme = Scheme::ALL[((b[0] & 0x7F) % 8) as usize];
    let (sets, ways, lsp) = if scheme.uses_sdc() {
        let large = if b[6] & 0x20 != 0 { 6 } else { 0 };
        let lsp_log2 = (b[2] & 0x0F) % 11 + if large > 0 { 10 } else { 0 };
        (
            1u32 << ((b[1] & 7) + large),
            1u32 << ((b[1] >> 3) & 3),
            1u32 << lsp_log2,
        )
    } else {
        (0, 0, 0)
    };
    let mut cfg = match scheme {
        Scheme::Tslz => Config::competitor(scheme, 0, 0, [256, 1024, 8192][(b[1] % 3) as usize], 0),
        Scheme::ScT8ht => Config::competitor(
            scheme,
            1u32 << (1 + (b[1] & 7)),
            1u32 << ((b[1] >> 3) & 3),
            (4u32 << (b[2] & 7)) - 1,
            1 + (b[4] % 8) as u32,
        ),
        _ => Config::new(scheme, sets, ways, lsp),
    };
    cfg.isa = if b[0] & 0x80 != 0 {
        IsaMode::ArmOnly
    } else {
        IsaMode::Interworking
    };
    if scheme.uses_sdc() {
        cfg.hist = 1 + ((b[2] >> 4) & 7) as u32;
        cfg.repl = [
            Replacement::Mru,
            Replacement::Lru,
            Replacement::Fifo,
            Replacement::Random,
        ][((b[3] >> 3) & 3) as usize];
        cfg.shift = (b[6] & 31) as u32;
    }
    cfg.max_sl = if b[6] & 0x40 != 0 {
        65535
    } else {
        MAX_SL[(b[3] % 8) as usize]
    };
    if scheme.enhanced() {
        cfg.u = 1 + (b[4] % 31) as u32;
        cfg.olc_min = 1 + (b[5] & 3) as u32;
        let wide = if b[6] & 0x80 != 0 { 8 } else { 0 };
        cfg.olc_max = (cfg.olc_min + ((b[5] >> 2) & 7) as u32 + wide).min(16);
        cfg.olc_init = cfg.olc_min + ((b[5] >> 5) as u32) % (cfg.olc_max - cfg.olc_min + 1);
    }
    if b[7] & 0x80 != 0 {
        cfg.sync_period = 1 + (b[7] & 0x7F) as u64 * 64;
    }
    cfg.validate().ok()?;
    Some(cfg)
}

/// Reads fuzz input bytes; past the end every read returns zeros.
pub struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Cursor { data, pos: 0 }
    }

    pub fn u8(&mut self) -> u8 {
        let v = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        v
    }

    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }

    pub fn u64(&mut self) -> u64 {
        (0..8).fold(0u64, |v, i| v | (self.u8() as u64) << (8 * i))
    }

    pub fn array<const N: usize>(&mut self) -> [u8; N] {
        std::array::from_fn(|_| self.u8())
    }

    /// The last read went past the end of the input (it read zeros there).
    pub fn exhausted(&self) -> bool {
        self.pos > self.data.len()
    }
}

/// The synthetic program the `decode` target decodes against: `instructions` only matters
/// for the seed generator, which needs a run over the same image.
pub fn image_spec(isa: IsaMode, instructions: usize) -> SyntheticSpec {
    let mut s = SyntheticSpec::new(0xF0_22_ED, instructions);
    s.arm_words = 256;
    s.thumb_halfwords = 256;
    s.branch_density = 150;
    s.exception_rate = 2;
    s.indirect_targets = 8;
    if isa == IsaMode::ArmOnly {
        s = s.arm_only();
    }
    s
}

/// The fixed image for a configuration's instruction set (built once per process).
pub fn image(isa: IsaMode) -> &'static MemoryImage {
    static IW: OnceLock<MemoryImage> = OnceLock::new();
    static ARM: OnceLock<MemoryImage> = OnceLock::new();
    let cell = if isa == IsaMode::ArmOnly { &ARM } else { &IW };
    cell.get_or_init(|| generate(&image_spec(isa, 0)).unwrap().image)
}

/// A `pft` configuration from 4 bytes (docs/trace-format.md section 11.1); `None` when
/// `Config::validate` rejects it.
///
/// | byte | bits | field |
/// |---|---|---|
/// | 0 | 0-3, 4-6, 7 | log2 bim - 1, log2 tsize - 1, `isa=arm` |
/// | 1 | 0-3, 4-7 | tag (4..=15 after `% 12 + 4`), number of tagged tables (`% 9`) |
/// | 2 | 0-5, 6-7 | ras depth (`% 65`), rtc (1, 2, 8, 0) |
/// | 3 | 0-3, 4-6, 7 | log2 itp (0 = none), rate - 1, u = 1 when set (else 12) |
///
/// The tagged target table reuses bits: `itt` is 0 unless byte 1 bit 3 is set, then
/// 1 << (byte 3 bits 4-7 `% 6`); `ttag` is 4 + byte 0 bits 0-3 `% 12`; `tw` is 2 + byte 2
/// bits 0-5 `% 31`.
pub fn pft_config_from_bytes(b: &[u8; 4]) -> Option<Config> {
    let mut cfg = Config::new(Scheme::Pft, 0, 0, 0);
    let p = &mut cfg.pft;
    p.bim = 1 << (1 + (b[0] & 0x0F) % 12);
    p.tsize = 1 << (1 + ((b[0] >> 4) & 7));
    p.tag = 4 + (b[1] & 0x0F) as u32 % 12;
    let tables = ((b[1] >> 4) % 9) as usize;
    p.hlen = [0; 8];
    for (i, h) in p.hlen.iter_mut().take(tables).enumerate() {
        *h = [2, 5, 9, 17, 28, 40, 52, 64][i];
    }
    p.ras = (b[2] & 0x3F) as u32 % 65;
    p.rtc = [1, 2, 8, 0][(b[2] >> 6) as usize];
    p.itp = if b[3] & 0x0F == 0 { 0 } else { 1 << ((b[3] & 0x0F) % 13) };
    p.itt = if b[1] & 0x08 == 0 { 0 } else { 1 << ((b[3] >> 4) % 6) };
    p.ttag = 4 + (b[0] & 0x0F) as u32 % 12;
    p.tw = 2 + (b[2] & 0x3F) as u32 % 31;
    p.rate = 1 + ((b[3] >> 4) & 7) as u32;
    p.u = if b[3] & 0x80 != 0 { 1 } else { 12 };
    if b[0] & 0x80 != 0 {
        cfg.isa = IsaMode::ArmOnly;
    }
    cfg.validate().ok().map(|_| cfg)
}

//! Trace module configuration and its one textual form (docs/trace-format.md section 4).

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scheme {
    FBase,
    Base,
    Nexs,
    BSdc,
    ESdc,
    RSdc,
    /// Trace-specific LZ (Kao et al.), docs/trace-format.md section 10.1.
    Tslz,
    /// Stream cache + tuple history table (Milenkovic et al. DCC 2007), section 10.2.
    ScT8ht,
    /// gzip over BASE records, the software bound, section 10.3.
    Gzip,
    /// Predictor-filtered trace, section 11.
    Pft,
}

impl Scheme {
    pub const ALL: [Scheme; 10] = [
        Scheme::FBase,
        Scheme::Base,
        Scheme::Nexs,
        Scheme::BSdc,
        Scheme::ESdc,
        Scheme::RSdc,
        Scheme::Tslz,
        Scheme::ScT8ht,
        Scheme::Gzip,
        Scheme::Pft,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Scheme::FBase => "fbase",
            Scheme::Base => "base",
            Scheme::Nexs => "nexs",
            Scheme::BSdc => "bsdc",
            Scheme::ESdc => "esdc",
            Scheme::RSdc => "rsdc",
            Scheme::Tslz => "tslz",
            Scheme::ScT8ht => "sct8ht",
            Scheme::Gzip => "gzip",
            Scheme::Pft => "pft",
        }
    }

    /// The paper's competitors (section 10): formats of their own, no sync or overflow.
    pub fn competitor(self) -> bool {
        matches!(self, Scheme::Tslz | Scheme::ScT8ht | Scheme::Gzip)
    }

    /// Schemes built on the stream descriptor cache and last stream predictor.
    pub fn uses_sdc(self) -> bool {
        matches!(self, Scheme::BSdc | Scheme::ESdc | Scheme::RSdc)
    }

    /// Schemes with an LVSA register and an AOLC.
    pub fn enhanced(self) -> bool {
        matches!(self, Scheme::ESdc | Scheme::RSdc)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Replacement {
    Mru,
    Lru,
    Fifo,
    Random,
}

impl Replacement {
    pub fn name(self) -> &'static str {
        match self {
            Replacement::Mru => "mru",
            Replacement::Lru => "lru",
            Replacement::Fifo => "fifo",
            Replacement::Random => "random",
        }
    }
}

/// Instruction sets the address fields must cover.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IsaMode {
    /// ARM and Thumb: address fields carry A\[1:0\] (A\[0\] = Thumb).
    Interworking,
    /// ARM only: A\[1:0\] is always 00 and is not sent or stored.
    ArmOnly,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Config {
    pub scheme: Scheme,
    /// Number of SDC sets (power of two); 0 for the baselines.
    pub sets: u32,
    /// Number of SDC ways (power of two); 0 for the baselines.
    pub ways: u32,
    /// Number of LSP entries (power of two); 0 for the baselines.
    pub lsp_entries: u32,
    pub shift: u32,
    pub max_sl: u32,
    pub repl: Replacement,
    pub hist: u32,
    /// LVSA width in bits (esdc, rsdc).
    pub u: u32,
    pub olc_init: u32,
    pub olc_min: u32,
    pub olc_max: u32,
    pub isa: IsaMode,
    /// Periodic sync period in instructions, 0 = off.
    pub sync_period: u64,
    /// TSLZ window in 12-bit words; SC-T8HT tuple history entries M; gzip level.
    pub param: u32,
    /// SC-T8HT tuple length N.
    pub tuple: u32,
    /// pft keys (section 11.1); defaults for every other scheme.
    pub pft: crate::pft::PftParams,
}

#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("bad configuration '{text}': {reason}")]
pub struct ConfigError {
    pub text: String,
    pub reason: String,
}

const DEFAULT_SHIFT: u32 = 4;
const DEFAULT_MAX_SL: u32 = 255;
const DEFAULT_HIST: u32 = 1;
const DEFAULT_OLC: u32 = 4;
const DEFAULT_OLC_MIN: u32 = 1;
const DEFAULT_OLC_MAX: u32 = 8;

fn default_u(scheme: Scheme) -> u32 {
    match scheme {
        Scheme::ESdc => 14,
        Scheme::RSdc => 12,
        _ => 0,
    }
}

impl Config {
    /// A configuration with every key at its default.
    pub fn new(scheme: Scheme, sets: u32, ways: u32, lsp_entries: u32) -> Config {
        Config {
            scheme,
            sets,
            ways,
            lsp_entries,
            shift: DEFAULT_SHIFT,
            max_sl: DEFAULT_MAX_SL,
            repl: Replacement::Mru,
            hist: DEFAULT_HIST,
            u: default_u(scheme),
            olc_init: DEFAULT_OLC,
            olc_min: DEFAULT_OLC_MIN,
            olc_max: DEFAULT_OLC_MAX,
            isa: IsaMode::Interworking,
            sync_period: 0,
            param: 0,
            tuple: 0,
            pft: crate::pft::PftParams::default(),
        }
    }

    /// `tslz-W`, `gzip-L` (`tuple` unused) and `sct8ht-SETSxWAYS-MxN`, keys at defaults.
    pub fn competitor(scheme: Scheme, sets: u32, ways: u32, param: u32, tuple: u32) -> Config {
        Config { param, tuple, ..Config::new(scheme, sets, ways, 0) }
    }

    /// Stream index width k = log2(N_SET * N_WAY); 0 for the baselines.
    pub fn index_bits(&self) -> u32 {
        if self.scheme.uses_sdc() || self.scheme == Scheme::ScT8ht {
            (self.sets * self.ways).trailing_zeros()
        } else {
            0
        }
    }

    pub fn set_bits(&self) -> u32 {
        self.sets.trailing_zeros()
    }

    pub fn way_bits(&self) -> u32 {
        self.ways.trailing_zeros()
    }

    /// Width of the SL field: bit length of maxSL (0 is reserved for escapes).
    pub fn sl_bits(&self) -> u32 {
        32 - self.max_sl.leading_zeros()
    }

    /// Address bits below `low` are not sent in e/rSDC address fields (0 or 2).
    pub fn low_bits(&self) -> u32 {
        match self.isa {
            IsaMode::Interworking => 0,
            IsaMode::ArmOnly => 2,
        }
    }

    /// Check every rule of docs/trace-format.md section 4.
    pub fn validate(&self) -> Result<(), String> {
        let pow2 = |v: u32| v != 0 && v.is_power_of_two();
        if self.scheme.uses_sdc() {
            if !pow2(self.sets) {
                return Err(format!("SDC sets {} is not a power of two", self.sets));
            }
            if !pow2(self.ways) {
                return Err(format!("SDC ways {} is not a power of two", self.ways));
            }
            let entries = self.sets as u64 * self.ways as u64;
            if !(2..=65536).contains(&entries) {
                return Err(format!(
                    "SDC of {entries} entries: the stream index needs 1..=16 bits (2..=65536 entries)"
                ));
            }
            if !pow2(self.lsp_entries) || self.lsp_entries > 1 << 20 {
                return Err(format!(
                    "LSP entries {} must be a power of two in 1..=1048576",
                    self.lsp_entries
                ));
            }
        }
        match self.scheme {
            Scheme::Tslz => {
                if !pow2(self.param) || !(16..=65536).contains(&self.param) {
                    return Err(format!("TSLZ window {} must be a power of two in 16..=65536", self.param));
                }
                if self.max_sl > 1023 {
                    return Err(format!("maxsl={} too large for TSLZ's 10-bit SL field (at most 1023)", self.max_sl));
                }
            }
            Scheme::ScT8ht => {
                if !pow2(self.sets) || !pow2(self.ways) {
                    return Err(format!("SDC {}x{}: sets and ways must be powers of two", self.sets, self.ways));
                }
                let entries = self.sets as u64 * self.ways as u64;
                if !(2..=65536).contains(&entries) {
                    return Err(format!("SDC of {entries} entries: the stream index needs 1..=16 bits"));
                }
                if !(3..=65535).contains(&self.param) || !(self.param + 1).is_power_of_two() {
                    return Err(format!(
                        "tuple history entries {}: M + 1 must be a power of two, M in 3..=65535",
                        self.param
                    ));
                }
                if !(1..=64).contains(&self.tuple) {
                    return Err(format!("tuple length {} out of range 1..=64", self.tuple));
                }
            }
            Scheme::Gzip if !(1..=9).contains(&self.param) => {
                return Err(format!("gzip level {} out of range 1..=9", self.param));
            }
            _ => {}
        }
        if self.shift > 31 {
            return Err(format!("shift={} out of range 0..=31", self.shift));
        }
        if !(2..=65535).contains(&self.max_sl) {
            return Err(format!("maxsl={} out of range 2..=65535", self.max_sl));
        }
        if !(1..=8).contains(&self.hist) {
            return Err(format!("hist={} out of range 1..=8", self.hist));
        }
        if self.scheme.enhanced() {
            let umax = 31 - self.low_bits();
            if !(1..=umax).contains(&self.u) {
                return Err(format!("u={} out of range 1..={umax}", self.u));
            }
            if !(1..=16).contains(&self.olc_min) {
                return Err(format!("olcmin={} out of range 1..=16", self.olc_min));
            }
            if !(self.olc_min..=16).contains(&self.olc_max) {
                return Err(format!("olcmax={} out of range olcmin..=16", self.olc_max));
            }
            if !(self.olc_min..=self.olc_max).contains(&self.olc_init) {
                return Err(format!(
                    "olc={} outside olcmin..=olcmax ({}..={})",
                    self.olc_init, self.olc_min, self.olc_max
                ));
            }
        }
        if self.scheme == Scheme::RSdc && self.shift + self.set_bits() > 32 - self.u {
            return Err(format!(
                "rsdc needs shift + log2(sets) <= 32 - u ({} + {} > {}): the set-index bits must lie below the LVSA bits",
                self.shift,
                self.set_bits(),
                32 - self.u
            ));
        }
        if self.scheme == Scheme::Pft {
            self.pft.validate(self.low_bits())?;
        }
        if self.scheme.competitor() && self.sync_period != 0 {
            return Err(format!("{}: the competitor schemes have no sync records", self.scheme.name()));
        }
        if self.sync_period > u32::MAX as u64 {
            return Err(format!("sync={} out of range 0..=4294967295", self.sync_period));
        }
        Ok(())
    }
}

impl FromStr for Config {
    type Err = ConfigError;

    fn from_str(text: &str) -> Result<Config, ConfigError> {
        let err = |reason: String| ConfigError { text: text.to_string(), reason };
        let mut parts = text.trim().split(',');
        let head = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        let mut head_parts = head.splitn(2, '-');
        let scheme_name = head_parts.next().unwrap_or("");
        let scheme = Scheme::ALL.iter().copied().find(|s| s.name() == scheme_name).ok_or_else(|| {
            err(format!(
                "unknown scheme '{scheme_name}' (expected fbase, base, nexs, bsdc, esdc, rsdc, tslz, sct8ht, gzip or pft)"
            ))
        })?;
        let geometry = head_parts.next();
        let num = |s: &str, what: &str| -> Result<u32, ConfigError> {
            s.parse::<u32>().map_err(|_| err(format!("{what} '{s}' is not a number")))
        };
        let mut cfg = if scheme == Scheme::Tslz || scheme == Scheme::Gzip {
            let what = if scheme == Scheme::Tslz { "window" } else { "level" };
            let g = geometry.ok_or_else(|| {
                err(format!("{} needs its {what}, e.g. {}", scheme.name(), if scheme == Scheme::Tslz { "tslz-256" } else { "gzip-1" }))
            })?;
            Config::competitor(scheme, 0, 0, num(g, what)?, 0)
        } else if scheme == Scheme::ScT8ht {
            let g = geometry.ok_or_else(|| err("sct8ht needs a geometry SETSxWAYS-MxN, e.g. sct8ht-128x4-255x8".into()))?;
            let bad = || err(format!("geometry '{g}' is not SETSxWAYS-MxN"));
            let (sw, mn) = g.split_once('-').ok_or_else(bad)?;
            let (sets, ways) = sw.split_once('x').ok_or_else(bad)?;
            let (m, n) = mn.split_once('x').ok_or_else(bad)?;
            Config::competitor(
                scheme,
                num(sets, "sets")?,
                num(ways, "ways")?,
                num(m, "tuple history entries")?,
                num(n, "tuple length")?,
            )
        } else if scheme.uses_sdc() {
            let g = geometry.ok_or_else(|| {
                err(format!("{} needs a geometry SETSxWAYS-LSP, e.g. {}-32x4-128", scheme.name(), scheme.name()))
            })?;
            let (sw, lsp) = g
                .split_once('-')
                .ok_or_else(|| err(format!("geometry '{g}' is not SETSxWAYS-LSP")))?;
            let (sets, ways) = sw
                .split_once('x')
                .ok_or_else(|| err(format!("geometry '{g}' is not SETSxWAYS-LSP")))?;
            Config::new(scheme, num(sets, "sets")?, num(ways, "ways")?, num(lsp, "LSP entries")?)
        } else {
            if let Some(g) = geometry {
                return Err(err(format!("{} takes no geometry (got '-{g}')", scheme.name())));
            }
            Config::new(scheme, 0, 0, 0)
        };
        let mut seen: Vec<String> = Vec::new();
        for part in parts {
            let part = part.trim();
            let (key, value) =
                part.split_once('=').ok_or_else(|| err(format!("option '{part}' is not key=value")))?;
            let key = key.trim().to_ascii_lowercase();
            let value = value.trim();
            if seen.contains(&key) {
                return Err(err(format!("key '{key}' given twice")));
            }
            seen.push(key.clone());
            let num = |v: &str| -> Result<u64, ConfigError> {
                v.parse::<u64>().map_err(|_| err(format!("{key}={v}: not a non-negative integer")))
            };
            let small = |v: &str| -> Result<u32, ConfigError> {
                let n = num(v)?;
                u32::try_from(n).map_err(|_| err(format!("{key}={v}: too large")))
            };
            let needs_enhanced = |cfg: &Config| -> Result<(), ConfigError> {
                if cfg.scheme.enhanced() {
                    Ok(())
                } else {
                    Err(err(format!(
                        "key '{key}' applies only to esdc and rsdc ({} has no LVSA/AOLC)",
                        cfg.scheme.name()
                    )))
                }
            };
            if cfg.scheme == Scheme::Pft {
                let mut p = cfg.pft;
                match key.as_str() {
                    "bim" => p.bim = small(value)?,
                    "tsize" => p.tsize = small(value)?,
                    "tag" => p.tag = small(value)?,
                    "hlen" => p.hlen = crate::pft::PftParams::parse_hlen(value).map_err(err)?,
                    "ras" => p.ras = small(value)?,
                    "itp" => p.itp = small(value)?,
                    "itt" => p.itt = small(value)?,
                    "ttag" => p.ttag = small(value)?,
                    "tw" => p.tw = small(value)?,
                    "rtc" => p.rtc = small(value)?,
                    "u" => p.u = small(value)?,
                    "rate" => p.rate = small(value)?,
                    "isa" | "sync" => {}
                    other => {
                        return Err(err(format!(
                            "key '{other}' does not apply to pft (it takes bim, tsize, tag, hlen, ras, itp, itt, ttag, tw, rtc, u, rate, isa and sync)"
                        )))
                    }
                }
                cfg.pft = p;
                if !matches!(key.as_str(), "isa" | "sync") {
                    continue;
                }
            }
            if cfg.scheme.competitor() && !matches!(key.as_str(), "maxsl" | "isa")
                && !(key == "shift" && cfg.scheme == Scheme::ScT8ht)
            {
                return Err(err(format!(
                    "key '{key}' does not apply to {} (it takes maxsl and isa{})",
                    cfg.scheme.name(),
                    if cfg.scheme == Scheme::ScT8ht { ", shift" } else { "" }
                )));
            }
            let needs_sdc = |cfg: &Config| -> Result<(), ConfigError> {
                if cfg.scheme.uses_sdc() || (key == "shift" && cfg.scheme == Scheme::ScT8ht) {
                    Ok(())
                } else {
                    Err(err(format!("key '{key}' applies only to bsdc, esdc and rsdc")))
                }
            };
            match key.as_str() {
                "shift" => {
                    needs_sdc(&cfg)?;
                    cfg.shift = small(value)?
                }
                "maxsl" => cfg.max_sl = small(value)?,
                "repl" => {
                    needs_sdc(&cfg)?;
                    cfg.repl = match value {
                        "mru" => Replacement::Mru,
                        "lru" => Replacement::Lru,
                        "fifo" => Replacement::Fifo,
                        "random" => Replacement::Random,
                        other => {
                            return Err(err(format!(
                                "repl={other}: expected mru, lru, fifo or random"
                            )))
                        }
                    }
                }
                "hist" => {
                    needs_sdc(&cfg)?;
                    cfg.hist = small(value)?
                }
                "u" => {
                    needs_enhanced(&cfg)?;
                    cfg.u = small(value)?
                }
                "olc" => {
                    needs_enhanced(&cfg)?;
                    cfg.olc_init = small(value)?
                }
                "olcmin" => {
                    needs_enhanced(&cfg)?;
                    cfg.olc_min = small(value)?
                }
                "olcmax" => {
                    needs_enhanced(&cfg)?;
                    cfg.olc_max = small(value)?
                }
                "isa" => {
                    cfg.isa = match value {
                        "iw" => IsaMode::Interworking,
                        "arm" => IsaMode::ArmOnly,
                        other => return Err(err(format!("isa={other}: expected iw or arm"))),
                    }
                }
                "sync" => cfg.sync_period = num(value)?,
                other => {
                    return Err(err(format!(
                        "unknown key '{other}' (known: shift, maxsl, repl, hist, u, olc, olcmin, olcmax, isa, sync)"
                    )))
                }
            }
        }
        cfg.validate().map_err(err)?;
        Ok(cfg)
    }
}

impl fmt::Display for Config {
    /// The canonical form: keys in the spec's order, only those that differ from the default.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.scheme.name())?;
        match self.scheme {
            Scheme::Tslz | Scheme::Gzip => write!(f, "-{}", self.param)?,
            Scheme::ScT8ht => write!(f, "-{}x{}-{}x{}", self.sets, self.ways, self.param, self.tuple)?,
            Scheme::Pft => write!(f, "{}", self.pft)?,
            _ => {}
        }
        if self.scheme == Scheme::ScT8ht && self.shift != DEFAULT_SHIFT {
            write!(f, ",shift={}", self.shift)?;
        }
        if self.scheme.uses_sdc() {
            write!(f, "-{}x{}-{}", self.sets, self.ways, self.lsp_entries)?;
            if self.shift != DEFAULT_SHIFT {
                write!(f, ",shift={}", self.shift)?;
            }
        }
        if self.max_sl != DEFAULT_MAX_SL {
            write!(f, ",maxsl={}", self.max_sl)?;
        }
        if self.scheme.uses_sdc() {
            if self.repl != Replacement::Mru {
                write!(f, ",repl={}", self.repl.name())?;
            }
            if self.hist != DEFAULT_HIST {
                write!(f, ",hist={}", self.hist)?;
            }
        }
        if self.scheme.enhanced() {
            if self.u != default_u(self.scheme) {
                write!(f, ",u={}", self.u)?;
            }
            if self.olc_init != DEFAULT_OLC {
                write!(f, ",olc={}", self.olc_init)?;
            }
            if self.olc_min != DEFAULT_OLC_MIN {
                write!(f, ",olcmin={}", self.olc_min)?;
            }
            if self.olc_max != DEFAULT_OLC_MAX {
                write!(f, ",olcmax={}", self.olc_max)?;
            }
        }
        if self.isa == IsaMode::ArmOnly {
            f.write_str(",isa=arm")?;
        }
        if self.sync_period != 0 {
            write!(f, ",sync={}", self.sync_period)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Config, ConfigError> {
        s.parse()
    }

    #[test]
    fn examples_parse_and_print_canonically() {
        for (text, canon) in [
            ("rsdc-32x4-128", "rsdc-32x4-128"),
            ("esdc-64x4-256,shift=4,maxsl=255,repl=mru", "esdc-64x4-256"),
            ("esdc-64x4-256,maxsl=1023,repl=lru", "esdc-64x4-256,maxsl=1023,repl=lru"),
            ("ESDC-16x4-64,repl=lru,u=12", "esdc-16x4-64,repl=lru,u=12"),
            ("fbase", "fbase"),
            ("base", "base"),
            ("nexs,maxsl=1000", "nexs,maxsl=1000"),
            ("bsdc-16x4-64,sync=100000,isa=arm", "bsdc-16x4-64,isa=arm,sync=100000"),
            ("rsdc-32x4-128,u=12,olc=5,olcmax=10", "rsdc-32x4-128,olc=5,olcmax=10"),
            ("tslz-256", "tslz-256"),
            ("TSLZ-8192,isa=arm,maxsl=1023", "tslz-8192,maxsl=1023,isa=arm"),
            ("sct8ht-128x4-255x8", "sct8ht-128x4-255x8"),
            ("sct8ht-32x4-15x4,shift=2", "sct8ht-32x4-15x4,shift=2"),
            ("gzip-1", "gzip-1"),
            ("gzip-9,maxsl=100", "gzip-9,maxsl=100"),
            ("pft", "pft"),
            ("PFT,ras=9,itp=16,isa=arm", "pft,isa=arm"),
            ("pft,sync=1000,hlen=4-12-40,bim=1024,rtc=0", "pft,bim=1024,hlen=4-12-40,rtc=0,sync=1000"),
            ("pft,hlen=none,u=10,rate=4,tag=9,tsize=128,ras=16,itp=0", "pft,tsize=128,tag=9,hlen=none,ras=16,itp=0,u=10,rate=4"),
        ] {
            let c = parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(c.to_string(), canon, "{text}");
            assert_eq!(parse(canon).unwrap(), c);
        }
        let c = parse("rsdc-32x4-128").unwrap();
        assert_eq!((c.sets, c.ways, c.lsp_entries, c.u, c.index_bits(), c.sl_bits()), (32, 4, 128, 12, 7, 8));
        assert_eq!(parse("esdc-8x4-32").unwrap().u, 14);
    }

    #[test]
    fn errors_name_the_problem() {
        for (text, needle) in [
            ("rsdc-24x4-128", "not a power of two"),
            ("rsdc-32x3-128", "ways 3 is not a power of two"),
            ("bsdc-1x1-1", "1..=16 bits"),
            ("bsdc-256x512-64", "1..=16 bits"),
            ("bsdc-16x4-63", "LSP entries 63"),
            ("bsdc-16x4-64,u=14", "applies only to esdc and rsdc"),
            ("fbase,repl=lru", "applies only to bsdc"),
            ("esdc-16x4-64,u=0", "u=0 out of range"),
            ("esdc-16x4-64,isa=arm,u=30", "u=30 out of range 1..=29"),
            ("rsdc-32x4-128,u=30", "shift + log2(sets) <= 32 - u"),
            ("bsdc-16x4-64,maxsl=1", "maxsl=1"),
            ("bsdc-16x4-64,maxsl=70000", "maxsl=70000"),
            ("bsdc-16x4-64,repl=plru", "repl=plru"),
            ("bsdc-16x4-64,shift=4,shift=5", "given twice"),
            ("bsdc-16x4-64,colour=red", "unknown key 'colour'"),
            ("bsdc", "needs a geometry"),
            ("bsdc-16-64", "not SETSxWAYS-LSP"),
            ("fbase-16x4-64", "takes no geometry"),
            ("zsdc-16x4-64", "unknown scheme 'zsdc'"),
            ("esdc-16x4-64,olc=9", "olc=9 outside"),
            ("bsdc-16x4-64,sync=x", "not a non-negative integer"),
            ("bsdc-16x4-64,hist", "not key=value"),
            ("tslz-100", "power of two in 16..=65536"),
            ("tslz", "needs its window"),
            ("tslz-256,maxsl=2000", "at most 1023"),
            ("tslz-256,sync=1000", "does not apply to tslz"),
            ("sct8ht-128x4-256x8", "M + 1 must be a power of two"),
            ("sct8ht-128x4-255x0", "tuple length 0"),
            ("sct8ht-128x3-255x8", "powers of two"),
            ("sct8ht-128x4", "not SETSxWAYS-MxN"),
            ("sct8ht-128x4-255x8,repl=lru", "does not apply to sct8ht"),
            ("gzip-0", "gzip level 0"),
            ("gzip-x", "level 'x' is not a number"),
            ("pft-32x4-128", "takes no geometry"),
            ("pft,maxsl=100", "does not apply to pft"),
            ("pft,shift=3", "does not apply to pft"),
            ("pft,bim=100", "bim=100 must be a power of two"),
            ("pft,hlen=8-4", "must increase strictly"),
            ("pft,isa=arm,u=30", "u=30 out of range 1..=29"),
            ("pft,rtc=5", "rtc=5"),
        ] {
            let e = parse(text).expect_err(text).to_string();
            assert!(e.contains(needle), "{text}: '{e}' lacks '{needle}'");
            assert!(e.contains(text), "{text}: '{e}' does not name the input");
        }
    }
}

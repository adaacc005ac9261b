//! The compressor state of docs/trace-format.md section 5, with the state transitions that
//! the encoder and the decoder both apply. Keeping them in one type is what stops the two
//! sides from drifting apart: the encoder decides *which* transition happens, the decoder
//! learns it from the record, and both call the same method.

use crate::aolc::AdaptiveOneLengthCounter;
use crate::config::{Config, Scheme};
use crate::detector::StreamDescriptor;
use crate::lsp::LastStreamPredictor;
use crate::lvsa::LastValueStartAddress;
use crate::sdc::StreamDescriptorCache;

/// The three stream outcomes of Table 2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamOutcome {
    LspHit { si: u32 },
    SdcHit { si: u32 },
    /// `forced`: rSDC only, the SDC held the entry but the LVSA missed.
    SdcMiss { forced: bool },
}

#[derive(Clone, Debug)]
pub struct CompressorState {
    pub config: Config,
    pub sdc: Option<StreamDescriptorCache>,
    pub lsp: Option<LastStreamPredictor>,
    pub lvsa: Option<LastValueStartAddress>,
    pub aolc: Option<AdaptiveOneLengthCounter>,
    /// The next stream's start address is inferable (section 3.1).
    pub infer: bool,
    /// NEXS: start address of the previous stream.
    pub prev_sa: u32,
    /// Instructions since the last reset (periodic sync).
    pub since_reset: u64,
    /// `since_reset` at which a periodic sync is due: the period, or never without one
    /// (one compare per stream instead of two).
    sync_at: u64,
}

impl CompressorState {
    pub fn new(config: &Config) -> Self {
        let sdc_scheme = config.scheme.uses_sdc();
        CompressorState {
            config: *config,
            sdc: sdc_scheme.then(|| StreamDescriptorCache::new(config)),
            lsp: sdc_scheme.then(|| LastStreamPredictor::new(config)),
            lvsa: config.scheme.enhanced().then(|| LastValueStartAddress::new(config.u)),
            aolc: config.scheme.enhanced().then(|| AdaptiveOneLengthCounter::new(config)),
            infer: false,
            prev_sa: 0,
            since_reset: 0,
            sync_at: if config.sync_period == 0 { u64::MAX } else { config.sync_period },
        }
    }

    /// The reset state of section 7.
    pub fn reset(&mut self) {
        if let Some(s) = &mut self.sdc {
            s.reset();
        }
        if let Some(l) = &mut self.lsp {
            l.reset();
        }
        if let Some(v) = &mut self.lvsa {
            v.reset();
        }
        if let Some(a) = &mut self.aolc {
            a.reset();
        }
        self.infer = false;
        self.prev_sa = 0;
        self.since_reset = 0;
    }

    /// Encoder: classify a stream and apply the SDC/LSP updates (SDC schemes only).
    /// (Inlined into the encoder's one path per stream: a call, its register saves and
    /// the outcome's packing less.)
    #[inline(always)]
    pub fn access(&mut self, a: u32, sl: u32) -> StreamOutcome {
        let sdc = self.sdc.as_ref().expect("SDC scheme");
        let lvsa_ok = self.config.scheme != Scheme::RSdc || self.lvsa.as_ref().is_some_and(|v| v.matches(a));
        // Most streams are LSP hits: the entry the LSP predicts holds the stream, which
        // the lookup would find there (no way scan).
        let predicted = self.lsp.as_ref().expect("SDC scheme").predict() as u32;
        if predicted != 0 && lvsa_ok && sdc.holds(predicted, a, sl) {
            debug_assert_eq!(sdc.lookup(a, sl), Some(predicted));
            self.replay_predicted(predicted);
            return StreamOutcome::LspHit { si: predicted };
        }
        let found = sdc.lookup(a, sl);
        match found {
            Some(si) if lvsa_ok => {
                if self.replay_indexed(si) {
                    StreamOutcome::LspHit { si }
                } else {
                    StreamOutcome::SdcHit { si }
                }
            }
            _ => {
                self.replay_miss(a, sl, found);
                StreamOutcome::SdcMiss { forced: found.is_some() }
            }
        }
    }

    /// Encoder and decoder: a stream found at SDC entry `si`. Returns the LSP outcome.
    /// (Inlined: the encoder's path per stream takes it for most streams.)
    #[inline(always)]
    pub fn replay_indexed(&mut self, si: u32) -> bool {
        self.sdc.as_mut().expect("SDC scheme").touch(si);
        self.lsp.as_mut().expect("SDC scheme").access(si as u16)
    }

    /// [`Self::replay_indexed`] of the entry the LSP predicted (not 0), known to be a hit:
    /// the LSP only shifts its history.
    #[inline(always)]
    pub fn replay_predicted(&mut self, si: u32) {
        self.sdc.as_mut().expect("SDC scheme").touch(si);
        self.lsp.as_mut().expect("SDC scheme").access_predicted(si as u16);
    }

    /// Encoder and decoder: an SDC miss for `(a, sl)`. `found` is the entry that matched
    /// without the LVSA (rSDC forced miss): it is accessed instead of filling a victim.
    #[inline]
    pub fn replay_miss(&mut self, a: u32, sl: u32, found: Option<u32>) {
        let sdc = self.sdc.as_mut().expect("SDC scheme");
        match found {
            Some(si) => sdc.touch(si),
            None => {
                sdc.fill(a, sl);
            }
        }
        self.lsp.as_mut().expect("SDC scheme").access(0);
    }

    /// Encoder and decoder: bookkeeping after every stream (rSDC LVSA, NEXS previous SA,
    /// inference for the next stream, instruction count).
    #[inline]
    pub fn after_stream(&mut self, d: &StreamDescriptor) {
        if self.config.scheme == Scheme::RSdc {
            if let Some(v) = &mut self.lvsa {
                v.update(d.sa);
            }
        }
        self.prev_sa = d.sa;
        self.infer = d.next_inferable(self.config.max_sl);
        self.since_reset += d.sl as u64;
    }

    /// Rebuild the start address stored in SDC entry `si` (rSDC takes the upper bits from
    /// the LVSA). None if the entry does not exist or is invalid.
    #[inline]
    pub fn entry_address(&self, si: u32) -> Option<(u32, u32)> {
        let (tag, sl) = self.sdc.as_ref()?.entry(si)?;
        let a = match (self.config.scheme, &self.lvsa) {
            (Scheme::RSdc, Some(v)) => v.combine(tag),
            _ => tag,
        };
        Some((a, sl))
    }

    /// Periodic sync due after the last stream?
    #[inline]
    pub fn sync_due(&self) -> bool {
        debug_assert_eq!(self.since_reset >= self.sync_at, self.config.sync_period != 0 && self.since_reset >= self.config.sync_period);
        self.since_reset >= self.sync_at
    }
}

//! The cycle mode as it was before the speed work (commit 2a6d783), kept verbatim as the
//! reference the faster [`super::CycleTraceModule`] is tested against: both with the port
//! log (every cycle stepped, what the RTL is compared with) and without (the shortcuts the
//! sweeps and the architect's runs take).

#![allow(dead_code)]

use std::collections::VecDeque;

use super::{BufferConfig, CycleError, CycleOutput, CycleStats, FullPolicy, PortBeat};
use crate::config::Config;
use crate::detector::{StreamDescriptor, StreamDetector};
use crate::encoder::{EncodedTrace, Encoder};
use crate::event::RetireEvent;
use crate::pft::{CoderJob, CoderOp, PftFrontEnd};
use crate::stats::Stats;

#[derive(Clone, Copy, Debug)]
enum Entry {
    Stream(StreamDescriptor),
    Overflow(u64),
    /// pft: a coder job (docs/trace-timing.md section 7).
    Pft(CoderJob),
}

fn entry_words(e: &Entry) -> usize {
    match e {
        Entry::Pft(job) => job.words(),
        _ => 0,
    }
}

/// The words the full flag counts for an entry that may enter (trace-timing.md 7, version
/// 1.7: a pft job's word bound).
fn entry_bound(e: &Entry) -> usize {
    match e {
        Entry::Pft(job) => job.word_bound(),
        _ => 0,
    }
}

pub struct ReferenceModule {
    enc: Encoder,
    detector: StreamDetector,
    buf: BufferConfig,
    sdb_cap: usize,
    /// pft: the job buffer's address words (trace-timing.md 7, version 1.5).
    word_cap: usize,
    obuf_cap: u64,
    /// The next cycle to simulate: cycles before it are done.
    now: u64,
    /// Core stall so far; every input cycle is shifted by it.
    delay: u64,
    /// Input cycle of the previous event, for the strictly-increasing check.
    last_input: Option<u64>,
    events: u64,
    /// The first input cycle, which is the module's cycle 0.
    origin: Option<u64>,
    sdb: VecDeque<Entry>,
    /// Descriptor in service: the cycle it completes and the bits it produces.
    in_service: Option<(u64, u64)>,
    /// pft (trace-timing.md 7, version 1.7): the job in the sequencer and the index of its
    /// next operation to load, the operation register, the coder's steps still to come
    /// (`true` a byte, `false` a shift), and at the end of the trace the END job.
    pft_seq: Option<(CoderJob, usize)>,
    pft_op: Option<CoderOp>,
    pft_steps: VecDeque<bool>,
    pft_end: Option<CoderJob>,
    record_bits: u64,
    obuf_bits: u64,
    dropping: Option<u64>,
    /// pft dropping: the front end's gap before the first dropped instruction, and the
    /// instructions lost so far.
    pft_dropping: Option<(u32, u64)>,
    port_log: Option<Vec<PortBeat>>,
    stats: CycleStats,
}

impl ReferenceModule {
    /// `cfg` must be valid; `buf` must pass [`BufferConfig::validate`].
    pub fn new(cfg: &Config, buf: &BufferConfig) -> Self {
        debug_assert!(buf.validate().is_ok());
        debug_assert!(buf.check_scheme(cfg).is_ok());
        ReferenceModule {
            enc: Encoder::new(cfg),
            detector: StreamDetector::new(cfg.max_sl),
            buf: *buf,
            sdb_cap: buf.sdb.map_or(usize::MAX, |d| d as usize),
            word_cap: buf.sdb.map_or(usize::MAX, |d| crate::pft::job_buffer_words(d) as usize),
            obuf_cap: buf.obuf.unwrap_or(u64::MAX),
            now: 0,
            delay: 0,
            last_input: None,
            events: 0,
            origin: None,
            sdb: VecDeque::new(),
            in_service: None,
            pft_seq: None,
            pft_op: None,
            pft_steps: VecDeque::new(),
            pft_end: None,
            record_bits: 0,
            obuf_bits: 0,
            dropping: None,
            pft_dropping: None,
            port_log: None,
            stats: CycleStats { buffers: buf.to_string(), sdb_needed: 1, ..Default::default() },
        }
    }

    /// Record every cycle in which the port sent bits (for cosimulation; it also turns off
    /// the idle skip so every beat is seen).
    pub fn with_port_log(mut self) -> Self {
        self.port_log = Some(Vec::new());
        self
    }

    pub fn config(&self) -> &Config {
        self.enc.config()
    }

    /// Core stall cycles so far (the caller's core is frozen this long in total).
    pub fn stall_cycles(&self) -> u64 {
        self.stats.stall_cycles
    }

    /// The input cycle of the first retirement (the module's cycle 0), for replays of
    /// captured descriptors; call before the first descriptor.
    pub fn start_at(&mut self, first_retire_cycle: u64) {
        debug_assert!(self.origin.is_none());
        self.origin = Some(first_retire_cycle);
    }

    /// One retired instruction at its retire cycle `ev.cycle`.
    pub fn push(&mut self, ev: &RetireEvent) -> Result<(), CycleError> {
        self.push_at(ev, ev.cycle)
    }

    /// One retired instruction at retire cycle `cycle` (IPC = 1 runs pass the event index).
    pub fn push_at(&mut self, ev: &RetireEvent, cycle: u64) -> Result<(), CycleError> {
        if let Some(previous) = self.last_input {
            if cycle <= previous {
                return Err(CycleError::Cycle { index: self.events, cycle, previous });
            }
        }
        self.enc.accept(ev)?;
        self.origin.get_or_insert(cycle);
        self.last_input = Some(cycle);
        self.events += 1;
        if self.enc.pft_mut().is_some() {
            if self.buf.policy == FullPolicy::Drop {
                self.pft_push_drop(ev, cycle);
            } else if let Some(job) = self.enc.pft_mut().expect("pft").front.push(ev) {
                self.produce(Entry::Pft(job), cycle);
            }
            return Ok(());
        }
        if let Some(d) = self.detector.push(ev) {
            self.produce(Entry::Stream(d), cycle);
        }
        Ok(())
    }

    /// pft: nothing in the sequencer, the operation register or the coder's steps.
    fn pft_idle(&self) -> bool {
        self.pft_seq.is_none() && self.pft_op.is_none() && self.pft_steps.is_empty()
    }

    /// pft: drained at start of cycle (trace-timing.md 7, versions 1.6 and 1.7).
    fn pft_drained(&self) -> bool {
        self.sdb.is_empty() && self.pft_idle() && self.record_bits == 0 && self.obuf_bits == 0
    }

    /// pft under `policy=drop` (trace-timing.md 7, version 1.6), written plainly: every
    /// instruction meets the module in its cycle; the front end works on a copy that is
    /// kept only if the instruction's job enters; while dropping, the overflow job takes
    /// the place of the first instruction that retires in a cycle that starts drained.
    fn pft_push_drop(&mut self, ev: &RetireEvent, input: u64) {
        let origin = *self.origin.get_or_insert(input);
        let c = input.saturating_sub(origin) + self.delay;
        self.advance_to(c);
        let drained = self.pft_drained();
        let c = self.now;
        let start_len = self.cycle_steps(c);
        let (entry, dropped) = if let Some((gap, lost)) = self.pft_dropping {
            self.lose(1);
            if drained {
                self.stats.overflows += 1;
                self.pft_dropping = None;
                self.enc.pft_mut().expect("pft").front.overflow_pushed();
                (Some(Entry::Pft(PftFrontEnd::overflow_job(gap, lost + 1))), None)
            } else {
                self.pft_dropping = Some((gap, lost + 1));
                (None, None)
            }
        } else {
            let mut front = self.enc.pft_mut().expect("pft").front.clone();
            match front.push(ev) {
                None => {
                    self.enc.pft_mut().expect("pft").front = front;
                    (None, None)
                }
                Some(job) => (Some(Entry::Pft(job)), Some(front)),
            }
        };
        if let Some(entry) = entry {
            let words = self.words() + entry_bound(&entry);
            let needed = if words > 2 { (start_len + 1).max(words) } else { start_len + 1 };
            self.stats.sdb_needed = self.stats.sdb_needed.max(needed.min(u32::MAX as usize) as u32);
            let full = start_len >= self.sdb_cap || words > self.word_cap;
            match (full, entry) {
                (false, e) => {
                    self.sdb.push_back(e);
                    if let Some(front) = dropped {
                        self.enc.pft_mut().expect("pft").front = front;
                    }
                }
                (true, Entry::Pft(job)) => {
                    debug_assert!(dropped.is_some(), "a drained module has room for the overflow job");
                    self.stats.sdb_full_events += 1;
                    self.lose(1);
                    self.pft_dropping = Some((job.gap_before, 1));
                }
                (true, _) => unreachable!(),
            }
        }
        self.end_of_cycle();
    }

    /// A descriptor captured earlier whose last instruction retired at `end_cycle` (sweeps
    /// replay captures with this; cycles must increase strictly across calls).
    pub fn push_descriptor(&mut self, d: &StreamDescriptor, end_cycle: u64) {
        debug_assert!(self.last_input.is_none_or(|p| end_cycle > p));
        // Without `start_at`, assume IPC = 1 inside the first stream.
        self.origin.get_or_insert(end_cycle.saturating_sub(d.sl.saturating_sub(1) as u64));
        self.last_input = Some(end_cycle);
        self.events += d.sl as u64;
        self.enc.count_instructions(d.sl as u64);
        self.produce(Entry::Stream(*d), end_cycle);
    }

    /// End of trace: the partial stream one cycle after the last retirement, any pending
    /// overflow entry, the drain, END, and the drain of END.
    pub fn finish(mut self) -> CycleOutput {
        let after_last = self.last_input.map_or(0, |c| c + 1);
        if self.enc.pft_mut().is_none() {
            if let Some(d) = self.detector.cut() {
                self.produce(Entry::Stream(d), after_last);
            }
        } else {
            self.advance_to(after_last.saturating_sub(self.origin.unwrap_or(0)) + self.delay);
        }
        // pft trace ends while dropping: the overflow job in the first cycle that starts
        // drained.
        while let Some((gap, lost)) = self.pft_dropping {
            let c = self.now;
            let drained = self.pft_drained();
            self.cycle_steps(c);
            if drained {
                self.sdb.push_back(Entry::Pft(PftFrontEnd::overflow_job(gap, lost)));
                self.enc.pft_mut().expect("pft").front.overflow_pushed();
                self.stats.overflows += 1;
                self.pft_dropping = None;
            }
            self.end_of_cycle();
        }
        // Trace ends while dropping: push the overflow entry as soon as there is room.
        while let Some(lost) = self.dropping {
            let c = self.now;
            if self.cycle_steps(c) < self.sdb_cap {
                self.sdb.push_back(Entry::Overflow(lost));
                self.stats.overflows += 1;
                self.dropping = None;
            }
            self.end_of_cycle();
        }
        // pft: END is taken like a job once the buffer is empty, and coded.
        let pft = if let Some(p) = self.enc.pft_mut() {
            self.pft_end = p.end_job();
            true
        } else {
            false
        };
        while !self.sdb.is_empty() || self.in_service.is_some() || self.pft_end.is_some() || !self.pft_idle() || self.record_bits > 0 {
            let c = self.now;
            self.cycle_steps(c);
            self.end_of_cycle();
        }
        // END is serviced like a record: one svc_hit service starting now (pft: coded above).
        let (trace, stats) = if pft {
            self.enc_finish_bits()
        } else {
            let before = self.enc.bit_len();
            let (trace, stats) = self.enc_finish_bits();
            self.in_service = Some((self.now + self.buf.svc_hit as u64 - 1, trace.bit_len - before));
            (trace, stats)
        };
        while self.in_service.is_some() || self.record_bits > 0 {
            let c = self.now;
            self.cycle_steps(c);
            self.end_of_cycle();
        }
        if self.obuf_bits > 0 {
            // The first port cycle at or after `now`, then one port cycle per `port` bits.
            let ratio = self.buf.ratio as u64;
            let first = self.now.div_ceil(ratio) * ratio;
            let last = first + (self.obuf_bits.div_ceil(self.buf.port as u64) - 1) * ratio;
            self.advance_to(last + 1);
        }
        debug_assert_eq!(self.obuf_bits, 0);
        self.stats.cycles = self.now;
        CycleOutput { trace, stats, cycle: self.stats, port_log: self.port_log }
    }

    fn enc_finish_bits(&mut self) -> (EncodedTrace, Stats) {
        let cfg = *self.enc.config();
        let enc = std::mem::replace(&mut self.enc, Encoder::new(&cfg));
        enc.finish()
    }

    /// A descriptor (or overflow entry, or pft job) produced in input cycle `input`; returns
    /// whether it entered the buffer (false: dropped).
    fn produce(&mut self, entry: Entry, input: u64) -> bool {
        let origin = *self.origin.get_or_insert(input);
        let c = input.saturating_sub(origin) + self.delay;
        self.advance_to(c);
        let mut found_full = false;
        loop {
            if found_full && self.port_log.is_none() {
                // Stalled behind a full SDB while the port drains a held-back record: the
                // core stays frozen for all of those cycles.
                let before = self.now;
                // (The SDB check was added with the fix of 2026-11-25 in cycle.rs.)
                if self.sdb.len() >= self.sdb_cap && self.skip_held_back(u64::MAX) {
                    self.stats.stall_cycles += self.now - before;
                    self.delay += self.now - before;
                    continue;
                }
            }
            let c = self.now;
            let start_len = self.cycle_steps(c);
            // pft: the job's address words too (trace-timing.md 7, version 1.5): a depth
            // below 2 has 2 words, a larger one one per entry.
            let words = self.words() + entry_bound(&entry);
            let needed = if words > 2 { (start_len + 1).max(words) } else { start_len + 1 };
            self.stats.sdb_needed = self.stats.sdb_needed.max(needed.min(u32::MAX as usize) as u32);
            let full = start_len >= self.sdb_cap || words > self.word_cap;
            if full && !found_full {
                self.stats.sdb_full_events += 1;
                found_full = true;
            }
            match (self.buf.policy, full) {
                (_, false) => {
                    match (entry, self.dropping.take()) {
                        (Entry::Stream(d), Some(lost)) => {
                            self.sdb.push_back(Entry::Overflow(lost + d.sl as u64));
                            self.lose(d.sl as u64);
                            self.stats.overflows += 1;
                        }
                        (e, d) => {
                            self.dropping = d;
                            self.sdb.push_back(e)
                        }
                    }
                    self.end_of_cycle();
                    return true;
                }
                (FullPolicy::Stall, true) => {
                    // The core holds the instruction and retries next cycle.
                    self.stats.stall_cycles += 1;
                    self.delay += 1;
                    self.end_of_cycle();
                }
                (FullPolicy::Drop, true) => {
                    if let Entry::Stream(d) = entry {
                        *self.dropping.get_or_insert(0) += d.sl as u64;
                        self.lose(d.sl as u64);
                    }
                    self.end_of_cycle();
                    return false;
                }
            }
        }
    }

    /// Address words of the pft jobs in the buffer.
    fn words(&self) -> usize {
        self.sdb.iter().map(entry_words).sum()
    }

    fn lose(&mut self, n: u64) {
        self.stats.lost_instructions += n;
    }

    /// Simulate every cycle before `target` (steps 1-4 only: nothing is produced in them).
    fn advance_to(&mut self, target: u64) {
        while self.now < target {
            let quiet = self.sdb.is_empty() && self.in_service.is_none() && self.pft_idle() && self.record_bits == 0;
            if quiet && self.port_log.is_none() {
                self.drain_idle(target);
                return;
            }
            if self.port_log.is_none() && self.skip_held_back(target) {
                continue;
            }
            let c = self.now;
            self.cycle_steps(c);
            self.end_of_cycle();
        }
    }

    /// The record register waits on a full output buffer while the port drains it one
    /// word per cycle (ratio 1): every such cycle sends `port` bits and moves `port` bits in,
    /// and nothing else can happen until the register empties (no pop, no completion).
    /// Skip those cycles in one step; returns whether it skipped any.
    fn skip_held_back(&mut self, target: u64) -> bool {
        let port = self.buf.port as u64;
        if self.buf.ratio != 1
            || self.in_service.is_some()
            || self.record_bits <= port
            || self.obuf_bits != self.obuf_cap
            || self.obuf_cap < port
            // pft's operation register loads in cycles without a step.
            || (self.pft_op.is_none() && (self.pft_seq.is_some() || !self.sdb.is_empty() || self.pft_end.is_some()))
        {
            return false;
        }
        // Cycles after which the register still holds bits.
        let n = ((self.record_bits - 1) / port).min(target - self.now);
        if n == 0 {
            return false;
        }
        self.record_bits -= n * port;
        self.stats.port_bits += n * port;
        self.stats.port_busy_cycles += n;
        self.stats.obuf_full_cycles += n;
        // The SDB cannot change; its maximum was recorded when it last grew.
        self.now += n;
        true
    }

    /// Nothing but the port is active from `now` to `target`: drain in one step.
    fn drain_idle(&mut self, target: u64) {
        let ratio = self.buf.ratio as u64;
        let port = self.buf.port as u64;
        if self.obuf_bits > 0 {
            // Port cycles c in [now, target) with c % ratio == 0 (divisions only when the
            // port is slower than the core or wider than a bit: this runs once per stream).
            let port_cycles = if ratio == 1 {
                target - self.now
            } else {
                let first = self.now.div_ceil(ratio) * ratio;
                if first >= target { 0 } else { (target - 1 - first) / ratio + 1 }
            };
            let needed = if port == 1 { self.obuf_bits } else { self.obuf_bits.div_ceil(port) };
            let used = needed.min(port_cycles);
            let sent = (used * port).min(self.obuf_bits);
            self.obuf_bits -= sent;
            self.stats.port_bits += sent;
            self.stats.port_busy_cycles += used;
        }
        self.now = target;
    }

    /// Steps 1-4 of cycle `c` (`c == self.now`); returns the SDB occupancy at its start, or
    /// for pft the job buffer's after the coder's take (trace-timing.md 7, version 1.4: the
    /// one change to this module since 2a6d783 besides pft itself).
    fn cycle_steps(&mut self, c: u64) -> usize {
        debug_assert_eq!(c, self.now);
        let start_len = self.sdb.len();
        // 1. Port.
        if self.obuf_bits > 0 && (self.buf.ratio == 1 || c.is_multiple_of(self.buf.ratio as u64)) {
            let sent = self.obuf_bits.min(self.buf.port as u64);
            self.obuf_bits -= sent;
            self.stats.port_bits += sent;
            self.stats.port_busy_cycles += 1;
            if let Some(log) = &mut self.port_log {
                log.push(PortBeat { cycle: c, bits: sent as u32 });
            }
        }
        let pft = self.enc.pft_mut().is_some();
        // 2. Compressor start (idle at start of cycle, SDB non-empty at start of cycle).
        if !pft && self.in_service.is_none() && self.record_bits == 0 {
            match self.sdb.pop_front() {
                Some(Entry::Stream(d)) => {
                    let (bits, miss) = self.enc.service_descriptor(&d);
                    let service = if miss { self.buf.svc_miss } else { self.buf.svc_hit };
                    self.in_service = Some((c + service as u64 - 1, bits));
                }
                Some(Entry::Overflow(lost)) => {
                    let bits = self.enc.service_overflow(lost);
                    self.in_service = Some((c + self.buf.svc_hit as u64 - 1, bits));
                }
                Some(Entry::Pft(_)) => unreachable!("pft jobs go to the sequencer"),
                None => {}
            }
        }
        // 2-3. pft (trace-timing.md 7, version 1.7): the coder's step when the record
        // register is empty at start of cycle (a byte, a shift, or the registered
        // operation); the register loads when it was empty or its operation was performed,
        // from the sequencer's job or, holding none, from the buffer's head (or END).
        if pft {
            let act = self.record_bits == 0;
            let performed = act && self.pft_steps.is_empty() && self.pft_op.is_some();
            let load = self.pft_op.is_none() || performed;
            if act {
                if let Some(byte) = self.pft_steps.pop_front() {
                    if byte {
                        self.record_bits += 8;
                    }
                } else if let Some(op) = self.pft_op.take() {
                    self.enc.pft_mut().expect("pft").coder.run_op_steps(op, &mut self.pft_steps);
                }
            }
            if load {
                if self.pft_seq.is_none() {
                    self.pft_seq = match self.sdb.pop_front() {
                        Some(Entry::Pft(job)) => Some((job, 0)),
                        Some(_) => unreachable!("pft's buffer holds jobs"),
                        None => self.pft_end.take().map(|job| (job, 0)),
                    };
                }
                if let Some((job, i)) = self.pft_seq.take() {
                    self.pft_op = Some(job.ops()[i]);
                    if i + 1 < job.ops().len() {
                        self.pft_seq = Some((job, i + 1));
                    }
                }
            }
        }
        let seen = if pft { self.sdb.len() } else { start_len };
        // 3. Completion.
        if let Some((done, bits)) = self.in_service {
            if done == c {
                self.record_bits += bits;
                self.in_service = None;
            }
        }
        // 4. Record register -> output buffer.
        let moved = self.record_bits.min(self.obuf_cap - self.obuf_bits);
        self.obuf_bits += moved;
        self.record_bits -= moved;
        if self.record_bits > 0 {
            self.stats.obuf_full_cycles += 1;
        }
        self.stats.obuf_needed_bits = self.stats.obuf_needed_bits.max(self.obuf_bits + self.record_bits);
        self.stats.max_obuf_bits = self.stats.max_obuf_bits.max(self.obuf_bits);
        seen
    }

    fn end_of_cycle(&mut self) {
        self.stats.max_sdb = self.stats.max_sdb.max(self.sdb.len().min(u32::MAX as usize) as u32);
        self.now += 1;
    }
}


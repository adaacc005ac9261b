//! Cycle mode of the trace module: the stream descriptor buffer, the compressor's service
//! time, the output buffer and the trace port, clock by clock, as docs/trace-timing.md
//! specifies. The bits are produced by the functional [`Encoder`], so they equal functional
//! mode's whenever nothing is dropped.
//!
//! Only stream-ending retirements interact with the buffers, so the model advances from one
//! produced descriptor to the next, simulating the cycles in between one at a time while
//! anything is in flight and skipping idle stretches in one step.

use std::collections::VecDeque;
use std::fmt;
use std::str::FromStr;

use serde::Serialize;
use thiserror::Error;

use crate::config::{Config, Scheme};
use crate::detector::{StreamDescriptor, StreamDetector};
use crate::encoder::{refuse_plain_run, EncodeError, EncodedTrace, Encoder};
use crate::event::{PlainRun, RetireEvent};
use crate::pft::{CoderJob, CoderPipeline, PftFrontEnd};
use crate::stats::Stats;

/// What happens when a descriptor finds the SDB full (docs/trace-timing.md section 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FullPolicy {
    /// Stall the core: the trace is complete.
    Stall,
    /// Drop descriptors and send an OVERFLOW record with the lost instruction count.
    Drop,
}

/// Buffer and timing parameters of cycle mode (docs/trace-timing.md section 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct BufferConfig {
    /// SDB depth in descriptors; `None` = unbounded.
    pub sdb: Option<u32>,
    /// Output buffer in bits; `None` = unbounded.
    pub obuf: Option<u64>,
    /// Trace port width in bits per port clock.
    pub port: u32,
    /// Core cycles per port clock.
    pub ratio: u32,
    pub svc_hit: u32,
    pub svc_miss: u32,
    pub policy: FullPolicy,
}

impl Default for BufferConfig {
    /// The paper's sizing (section 4.2): SDB 2, 80-bit output buffer, one bit per cycle.
    fn default() -> Self {
        BufferConfig { sdb: Some(2), obuf: Some(80), port: 1, ratio: 1, svc_hit: 1, svc_miss: 2, policy: FullPolicy::Stall }
    }
}

impl BufferConfig {
    /// Unbounded buffers, for measuring the sizes a run needs.
    pub fn unbounded(self) -> Self {
        BufferConfig { sdb: None, obuf: None, ..self }
    }

    pub fn validate(&self) -> Result<(), String> {
        if self.sdb == Some(0) {
            return Err("sdb must be at least 1".into());
        }
        if self.obuf == Some(0) {
            return Err("obuf must be at least 1".into());
        }
        if self.port == 0 || self.port > 64 {
            return Err(format!("port={} out of range 1..=64", self.port));
        }
        if self.ratio == 0 || self.ratio > 1024 {
            return Err(format!("ratio={} out of range 1..=1024", self.ratio));
        }
        if self.svc_hit == 0 || self.svc_hit > self.svc_miss || self.svc_miss > 16 {
            return Err(format!("need 1 <= svc_hit ({}) <= svc_miss ({}) <= 16", self.svc_hit, self.svc_miss));
        }
        Ok(())
    }
}

impl BufferConfig {
    /// Whether these buffers work with `cfg`: the competitor schemes (trace-format.md
    /// section 10) have no OVERFLOW record, so they cannot use the drop policy.
    pub fn check_scheme(&self, cfg: &Config) -> Result<(), String> {
        if self.policy == FullPolicy::Drop && cfg.scheme.competitor() {
            return Err(format!("{cfg} has no overflow record: use policy=stall"));
        }
        Ok(())
    }
}

impl FromStr for BufferConfig {
    type Err = String;

    /// `sdb=2,obuf=80,port=1,ratio=1,svc_hit=1,svc_miss=2,policy=stall`, every key optional.
    fn from_str(s: &str) -> Result<Self, String> {
        let mut b = BufferConfig::default();
        for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (key, value) =
                item.split_once('=').ok_or_else(|| format!("'{item}': expected key=value"))?;
            let num = |v: &str| -> Result<u64, String> {
                v.parse::<u64>().map_err(|_| format!("{key}={v}: not a non-negative integer"))
            };
            let small = |v: &str| -> Result<u32, String> {
                u32::try_from(num(v)?).map_err(|_| format!("{key}={v}: too large"))
            };
            match key {
                "sdb" => b.sdb = if value == "inf" { None } else { Some(small(value)?) },
                "obuf" => b.obuf = if value == "inf" { None } else { Some(num(value)?) },
                "port" => b.port = small(value)?,
                "ratio" => b.ratio = small(value)?,
                "svc_hit" => b.svc_hit = small(value)?,
                "svc_miss" => b.svc_miss = small(value)?,
                "policy" => {
                    b.policy = match value {
                        "stall" => FullPolicy::Stall,
                        "drop" => FullPolicy::Drop,
                        other => return Err(format!("policy={other}: expected stall or drop")),
                    }
                }
                other => {
                    return Err(format!(
                        "unknown key '{other}' (known: sdb, obuf, port, ratio, svc_hit, svc_miss, policy)"
                    ))
                }
            }
        }
        b.validate()?;
        Ok(b)
    }
}

impl fmt::Display for BufferConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inf = |v: Option<u64>| v.map_or("inf".to_string(), |v| v.to_string());
        write!(
            f,
            "sdb={},obuf={},port={},ratio={},svc_hit={},svc_miss={},policy={}",
            inf(self.sdb.map(u64::from)),
            inf(self.obuf),
            self.port,
            self.ratio,
            self.svc_hit,
            self.svc_miss,
            match self.policy {
                FullPolicy::Stall => "stall",
                FullPolicy::Drop => "drop",
            }
        )
    }
}

/// What cycle mode measured (docs/trace-timing.md section 5).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CycleStats {
    pub buffers: String,
    /// Cycles from the first retirement to the last bit on the port, stalls included.
    pub cycles: u64,
    pub stall_cycles: u64,
    pub overflows: u64,
    pub lost_instructions: u64,
    /// Descriptors that found the SDB full.
    pub sdb_full_events: u64,
    /// Cycles in which the record register held bits back for lack of output-buffer space.
    pub obuf_full_cycles: u64,
    pub max_sdb: u32,
    pub max_obuf_bits: u64,
    pub sdb_needed: u32,
    pub obuf_needed_bits: u64,
    pub port_bits: u64,
    pub port_busy_cycles: u64,
}

#[derive(Debug, Error)]
pub enum CycleError {
    #[error(transparent)]
    Event(#[from] EncodeError),
    #[error("event {index}: retire cycle {cycle} does not follow the previous event's cycle {previous} (cycles must increase strictly)")]
    Cycle { index: u64, cycle: u64, previous: u64 },
}

/// A descriptor or overflow entry waiting in the SDB. It is encoded when it enters: the
/// compressor services entries strictly in SDB order, so its bits and its SDC outcome
/// do not depend on when that happens, and the SDB only has to remember what the service
/// will take and produce.
#[derive(Clone, Copy, Debug)]
struct Encoded {
    /// Bits the service produces (records and escapes).
    bits: u64,
    /// Service time in cycles (`svc_hit` or `svc_miss`).
    svc: u64,
}

/// The SDB's entries in order: a ring whose size is a power of two, doubled when full
/// (the SDB is unbounded with `sdb=inf`), so that every push and pop wraps with a mask
/// (`VecDeque` wraps with compares; this is on the path of every descriptor).
#[derive(Debug)]
struct SdbRing {
    slots: Vec<Encoded>,
    head: usize,
    len: usize,
}

impl SdbRing {
    fn new() -> Self {
        SdbRing { slots: vec![Encoded { bits: 0, svc: 0 }; 4], head: 0, len: 0 }
    }

    #[inline(always)]
    fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline(always)]
    fn front(&self) -> Option<&Encoded> {
        (self.len != 0).then(|| &self.slots[self.head])
    }

    #[inline(always)]
    fn pop_front(&mut self) -> Option<Encoded> {
        if self.len == 0 {
            return None;
        }
        let e = self.slots[self.head];
        self.head = (self.head + 1) & (self.slots.len() - 1);
        self.len -= 1;
        Some(e)
    }

    #[inline(always)]
    fn push_back(&mut self, e: Encoded) {
        if self.len == self.slots.len() {
            self.grow();
        }
        let i = (self.head + self.len) & (self.slots.len() - 1);
        self.slots[i] = e;
        self.len += 1;
    }

    /// The only entry (`len() == 1`).
    #[inline(always)]
    fn lone(&self) -> Encoded {
        debug_assert_eq!(self.len, 1);
        self.slots[self.head]
    }

    /// Replace the only entry (`len() == 1`) by `e`: a pop and a push.
    #[inline(always)]
    fn replace_lone(&mut self, e: Encoded) {
        debug_assert_eq!(self.len, 1);
        self.slots[self.head] = e;
    }

    /// Twice the slots, the entries moved to the front in order.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let n = self.slots.len();
        let mut slots = Vec::with_capacity(2 * n);
        slots.extend((0..self.len).map(|i| self.slots[(self.head + i) & (n - 1)]));
        slots.resize(2 * n, Encoded { bits: 0, svc: 0 });
        self.slots = slots;
        self.head = 0;
    }
}

/// One bit count the port sent in one cycle (cosimulation observes these).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortBeat {
    pub cycle: u64,
    pub bits: u32,
}

/// Everything a cycle-mode run produces.
pub struct CycleOutput {
    pub trace: EncodedTrace,
    pub stats: Stats,
    pub cycle: CycleStats,
    /// Present when the module was built [`CycleTraceModule::with_port_log`].
    pub port_log: Option<Vec<PortBeat>>,
}

pub struct CycleTraceModule {
    enc: Encoder,
    detector: StreamDetector,
    buf: BufferConfig,
    /// pft: coder jobs instead of stream descriptors (docs/trace-timing.md section 7).
    pft: bool,
    /// [`CycleTraceModule::plain`], fixed once the port log is chosen: tested once per
    /// descriptor.
    plain: bool,
    sdb_cap: usize,
    /// pft: the job buffer's address words (`max(sdb, 2)`).
    word_cap: usize,
    obuf_cap: u64,
    svc_hit: u64,
    svc_miss: u64,
    /// The next cycle to simulate: cycles before it are done.
    now: u64,
    /// Core stall so far; every input cycle is shifted by it.
    delay: u64,
    /// Input cycle of the previous event, for the strictly-increasing check.
    last_input: Option<u64>,
    /// [`CycleTraceModule::plain_budget`] when not pft (0 for pft, which asks its front
    /// end): the stream detector's room once an event was seen, kept up to date where the
    /// detector or `last_input` changes, so that the core's loop, which asks after every
    /// instruction that is not in a run, reads one field.
    plain_room: u32,
    events: u64,
    /// The first input cycle, which is the module's cycle 0.
    origin: Option<u64>,
    /// The SDB (descriptors and overflow entries, already encoded).
    sdb: SdbRing,
    /// pft: the job buffer, which takes the SDB's place, and the address words its jobs
    /// hold (docs/trace-timing.md section 7, version 1.5).
    jobs: VecDeque<CoderJob>,
    job_words: usize,
    /// Descriptor in service: the cycle it completes and the bits it produces.
    in_service: Option<(u64, u64)>,
    /// pft: the sequencer's job, the operation register and the coder's shifts and bytes
    /// (docs/trace-timing.md 7, version 1.7).
    pft_pipe: CoderPipeline,
    /// pft at the end of the trace: the END job, which the sequencer takes in place of the
    /// buffer's head once the buffer is empty (docs/trace-timing.md 7).
    pft_end: Option<CoderJob>,
    record_bits: u64,
    obuf_bits: u64,
    dropping: Option<u64>,
    /// pft dropping: the front end's gap before the first dropped instruction, and the
    /// instructions lost so far.
    pft_dropping: Option<(u32, u64)>,
    port_log: Option<Vec<PortBeat>>,
    stats: CycleStats,
    /// A replay of [`EncodedStreams`]: END's bits, the trace and its statistics.
    preencoded: Option<(u64, EncodedTrace, Stats)>,
}

/// Stream descriptors encoded once, for cycle-mode replays that never drop a descriptor
/// (the stall policy, or an unbounded SDB): the bits each service produces and whether it
/// missed in the SDC, END's bits, the finished trace and its statistics. The encoder sees
/// the descriptors in the same order whatever the buffers do, so with the stall policy the
/// bits do not depend on the buffers (docs/trace-timing.md section 4): a sweep encodes a
/// capture once per configuration and replays the encoding under every buffer setting.
pub struct EncodedStreams {
    /// Per descriptor: `bits << 1 | missed`.
    services: Vec<u64>,
    end_bits: u64,
    trace: EncodedTrace,
    stats: Stats,
}

impl EncodedStreams {
    /// Encode `descriptors` with `cfg` (not pft, which has no stream descriptors).
    pub fn new<'a>(cfg: &Config, descriptors: impl IntoIterator<Item = &'a StreamDescriptor>) -> Self {
        Self::encode(Encoder::new(cfg), descriptors, |_| ())
    }

    /// A sweep's encoding of `descriptors`, which retired their last instructions at
    /// `end_cycles` (the first instruction at `first_cycle`): [`EncodedStreams::new`] with
    /// the unique-stream count given (`unique` must be
    /// [`crate::stats::count_unique_streams`] of the same descriptors, counted once for all
    /// configurations) and, in the same pass, [`EncodedStreams::needed_sizes`] for
    /// `sizing`.
    pub fn with_needed_sizes(
        cfg: &Config,
        descriptors: &[StreamDescriptor],
        unique: u64,
        sizing: &BufferConfig,
        first_cycle: u64,
        end_cycles: &[u64],
    ) -> (Self, (u32, u64)) {
        let mut tracker = SizeTracker::new(sizing, first_cycle);
        let mut ends = end_cycles.iter();
        let enc = Self::encode(Encoder::new(cfg).with_unique_streams(unique), descriptors, |w| {
            if let (Some(t), Some(&end)) = (&mut tracker, ends.next()) {
                t.arrive(w, end);
            }
        });
        let sizes = tracker.and_then(|t| t.finish(enc.end_bits));
        let sizes = sizes.unwrap_or_else(|| enc.stepped_sizes(cfg, sizing, first_cycle, end_cycles.iter().copied()));
        (enc, sizes)
    }

    /// Encode `descriptors`, passing each service word (`bits << 1 | missed`) to `served`.
    #[inline(always)]
    fn encode<'a>(mut enc: Encoder, descriptors: impl IntoIterator<Item = &'a StreamDescriptor>, mut served: impl FnMut(u64)) -> Self {
        assert!(enc.config().scheme != Scheme::Pft, "pft cannot encode stream descriptors");
        let descriptors = descriptors.into_iter();
        let mut services = Vec::with_capacity(descriptors.size_hint().0);
        for d in descriptors {
            enc.count_instructions(d.sl as u64);
            let (bits, miss) = enc.service_descriptor(d);
            let w = bits << 1 | miss as u64;
            served(w);
            services.push(w);
        }
        let before = enc.bit_len();
        let (trace, stats) = enc.finish();
        EncodedStreams { services, end_bits: trace.bit_len - before, trace, stats }
    }

    /// Descriptors encoded.
    pub fn len(&self) -> usize {
        self.services.len()
    }

    pub fn is_empty(&self) -> bool {
        self.services.is_empty()
    }

    /// The SDB depth and output-buffer bits a replay with buffers `buf` made unbounded
    /// needs ([`CycleStats::sdb_needed`] and [`CycleStats::obuf_needed_bits`] of
    /// [`CycleTraceModule::replay_encoded`] with `buf.unbounded()`), computed from the
    /// service times rather than cycle by cycle: what a sweep needs of its sizing runs.
    ///
    /// Nothing waits for space when nothing is bounded, so descriptor `i`, arriving in
    /// module cycle `c_i`, starts in cycle `s_i = max(c_i + 1, d_{i-1} + 1)` and completes
    /// in `d_i = s_i + svc_i - 1`, when its bits enter the output buffer; the port drains
    /// it by `port` bits a cycle; END follows like one more arrival in the last cycle
    /// (docs/trace-timing.md sections 2-5). An arrival finds the SDB holding the
    /// descriptors not started before its cycle, and counts it unless the module was idle
    /// (`d_{i-1} < c_i`, the idle fast path of the stepped replay). The deepest SDB is
    /// looked for among the last few descriptors; a deeper one, a port slower than the core
    /// or no descriptors at all take the stepped replay.
    pub fn needed_sizes(&self, cfg: &Config, buf: &BufferConfig, first_cycle: u64, end_cycles: impl IntoIterator<Item = u64> + Clone) -> (u32, u64) {
        let mut tracker = SizeTracker::new(buf, first_cycle);
        if let Some(t) = &mut tracker {
            for (&w, end) in self.services.iter().zip(end_cycles.clone()) {
                t.arrive(w, end);
            }
        }
        match tracker.and_then(|t| t.finish(self.end_bits)) {
            Some(sizes) => sizes,
            None => self.stepped_sizes(cfg, buf, first_cycle, end_cycles),
        }
    }

    /// [`EncodedStreams::needed_sizes`] by the stepped replay, where the tracker cannot
    /// follow it.
    fn stepped_sizes(&self, cfg: &Config, buf: &BufferConfig, first_cycle: u64, end_cycles: impl IntoIterator<Item = u64> + Clone) -> (u32, u64) {
        let out = CycleTraceModule::replay_encoded(cfg, &buf.unbounded(), self, first_cycle, end_cycles);
        (out.cycle.sdb_needed, out.cycle.obuf_needed_bits)
    }
}

/// Descriptors [`EncodedStreams::stall_statistics`] remembers: more than the deepest SDB it
/// takes.
const STALL_RING: usize = 16;

impl EncodedStreams {
    /// The cycle statistics of [`CycleTraceModule::replay_encoded`] with a bounded SDB of
    /// fewer than [`STALL_RING`] entries, the stall policy, the port at the core's clock and
    /// an output buffer of at least one port word, computed from the service times (what
    /// sweeps replay under the row's buffers); None in any other case.
    ///
    /// Descriptor `i`, which retires in input cycle `t_i` (module cycle plus the stall so
    /// far), enters the SDB in `a_i = max(t_i, s_{i-sdb} + 1)` once descriptor `i - sdb`
    /// has left it; the core stalls for the difference. The compressor starts it in
    /// `s_i = max(a_i + 1, r_{i-1} + 1)` (SDB entry there at the cycle's start, record
    /// register empty), completes it in `d_i = s_i + svc_i - 1`, and the record moves into
    /// the output buffer as far as it fits; the rest follows `port` bits a cycle, as the
    /// port frees them, until `r_i`. END is serviced like one more arrival after the last,
    /// then the port drains the buffer (docs/trace-timing.md sections 2-5).
    fn stall_statistics(&self, buf: &BufferConfig, first_cycle: u64, end_cycles: impl IntoIterator<Item = u64>) -> Option<CycleStats> {
        let sdb = buf.sdb? as usize;
        let port = buf.port as u64;
        let obuf_cap = buf.obuf.unwrap_or(u64::MAX);
        if buf.policy != FullPolicy::Stall || buf.ratio != 1 || sdb >= STALL_RING || obuf_cap < port || self.services.is_empty() {
            return None;
        }
        let (svc_hit, svc_miss) = (buf.svc_hit as u64, buf.svc_miss as u64);
        let mut st = CycleStats { buffers: buf.to_string(), sdb_needed: 1, ..Default::default() };
        // Start cycles of the last descriptors.
        let mut starts = [0u64; STALL_RING];
        // The cycle the previous record register emptied, and the output buffer then.
        let (mut emptied, mut obuf) = (0u64, 0u64);
        // A service completes in cycle `done` with `bits`: the port's cycles since the
        // register last emptied, then the move, then the held-back rest.
        let complete = |st: &mut CycleStats, emptied: &mut u64, obuf: &mut u64, done: u64, bits: u64| {
            let gap = done - *emptied;
            let sent = (*obuf).min(gap.saturating_mul(port));
            st.port_busy_cycles += gap.min(obuf.div_ceil(port));
            st.port_bits += sent;
            *obuf -= sent;
            st.obuf_needed_bits = st.obuf_needed_bits.max(*obuf + bits);
            if bits <= obuf_cap - *obuf {
                *obuf += bits;
                *emptied = done;
                st.max_obuf_bits = st.max_obuf_bits.max(*obuf);
            } else {
                let rest = bits - (obuf_cap - *obuf);
                let k = rest.div_ceil(port);
                st.obuf_full_cycles += k;
                st.port_busy_cycles += k;
                st.port_bits += k * port;
                // (The last word moved is `rest - (k - 1) * port`, at most one port word.)
                *obuf = obuf_cap - (k * port - rest);
                *emptied = done + k;
                st.max_obuf_bits = st.max_obuf_bits.max(obuf_cap);
            }
        };
        let mut delay = 0u64;
        for (i, (&w, end)) in self.services.iter().zip(end_cycles).enumerate() {
            let t = end.saturating_sub(first_cycle) + delay;
            let earlier = i.min(sdb);
            let before = |m: usize| starts[(i - m) % STALL_RING];
            if emptied >= t {
                // Not the idle fast path: the SDB at the start of cycle t.
                let waiting = (1..=earlier).filter(|&m| before(m) >= t).count() as u32;
                st.sdb_needed = st.sdb_needed.max(waiting + 1);
            }
            let a = if i >= sdb { t.max(before(sdb) + 1) } else { t };
            if a > t {
                st.sdb_full_events += 1;
                st.stall_cycles += a - t;
                delay += a - t;
            }
            let start = (a + 1).max(emptied + 1);
            // The SDB at the end of cycle a: this descriptor and those not started by then.
            let left = 1 + (1..=earlier).filter(|&m| before(m) > a).count() as u32;
            st.max_sdb = st.max_sdb.max(left);
            starts[i % STALL_RING] = start;
            let done = start + if w & 1 != 0 { svc_miss } else { svc_hit } - 1;
            complete(&mut st, &mut emptied, &mut obuf, done, w >> 1);
        }
        // (The last record empties after the last arrival.)
        let done = emptied + svc_hit;
        complete(&mut st, &mut emptied, &mut obuf, done, self.end_bits);
        let last_words = obuf.div_ceil(port);
        st.port_bits += obuf;
        st.port_busy_cycles += last_words;
        st.cycles = emptied + 1 + last_words;
        Some(st)
    }
}

/// Earlier descriptors [`SizeTracker`] examines for the SDB depth (the paper's runs need 2).
const LOOK_BACK: usize = 4;

/// The needed sizes of an unbounded replay followed descriptor by descriptor
/// ([`EncodedStreams::needed_sizes`] says how).
struct SizeTracker {
    svc_hit: u64,
    svc_miss: u64,
    port: u64,
    first_cycle: u64,
    /// Start cycles of the last LOOK_BACK descriptors (0: none; real starts are >= 1).
    starts: [u64; LOOK_BACK],
    n: usize,
    done_prev: u64,
    obuf: u64,
    sdb_needed: u64,
    obuf_needed: u64,
    too_deep: bool,
}

impl SizeTracker {
    /// None when the port is slower than the core (the stepped replay then).
    fn new(buf: &BufferConfig, first_cycle: u64) -> Option<Self> {
        (buf.ratio == 1).then_some(SizeTracker {
            svc_hit: buf.svc_hit as u64,
            svc_miss: buf.svc_miss as u64,
            port: buf.port as u64,
            first_cycle,
            starts: [0; LOOK_BACK],
            n: 0,
            done_prev: 0,
            obuf: 0,
            sdb_needed: 1,
            obuf_needed: 0,
            too_deep: false,
        })
    }

    /// A descriptor whose service is `w` (`bits << 1 | missed`) arrives at input cycle `end`.
    #[inline(always)]
    fn arrive(&mut self, w: u64, end: u64) {
        let c = end.saturating_sub(self.first_cycle);
        // Descriptors not started before cycle `c` (for c = 0, the first, none).
        let before = c.saturating_sub(1);
        let waiting: u64 = self.starts.iter().map(|&s| (s > before) as u64).sum();
        let slot = self.n % LOOK_BACK;
        self.too_deep |= self.starts[slot] > before;
        // (The first arrival is idle too: done_prev is 0 and the maximum starts at 1.)
        if self.done_prev >= c {
            self.sdb_needed = self.sdb_needed.max(waiting + 1);
        }
        let start = (c + 1).max(self.done_prev + 1);
        let done = start + if w & 1 != 0 { self.svc_miss } else { self.svc_hit } - 1;
        self.complete(done, w >> 1);
        self.starts[slot] = start;
        self.n += 1;
    }

    /// A service completes in cycle `done` and its `bits` enter the output buffer, which
    /// the port drained since the previous completion.
    #[inline(always)]
    fn complete(&mut self, done: u64, bits: u64) {
        self.obuf = self.obuf - self.obuf.min((done - self.done_prev).saturating_mul(self.port)) + bits;
        self.obuf_needed = self.obuf_needed.max(self.obuf);
        self.done_prev = done;
    }

    /// After the last descriptor, END's `end_bits` (one svc_hit service from the cycle
    /// after the last completion, which comes after the last arrival): the sizes, or None
    /// when the SDB grew deeper than the look-back or nothing arrived.
    fn finish(mut self, end_bits: u64) -> Option<(u32, u64)> {
        if self.too_deep || self.n == 0 {
            return None;
        }
        self.complete(self.done_prev + self.svc_hit, end_bits);
        Some((self.sdb_needed.min(u32::MAX as u64) as u32, self.obuf_needed))
    }
}

impl CycleTraceModule {
    /// Replay `enc` in cycle mode with buffers `buf`, which must not drop (stall policy or
    /// an unbounded SDB): the descriptors it was encoded from retired their last
    /// instructions at `end_cycles` (strictly increasing), the first instruction at
    /// `first_cycle`. Equals replaying the descriptors through
    /// [`CycleTraceModule::push_descriptor`] after [`CycleTraceModule::start_at`].
    pub fn replay_encoded(
        cfg: &Config,
        buf: &BufferConfig,
        enc: &EncodedStreams,
        first_cycle: u64,
        end_cycles: impl IntoIterator<Item = u64> + Clone,
    ) -> CycleOutput {
        assert!(buf.policy == FullPolicy::Stall || buf.sdb.is_none(), "a replay of one encoding cannot drop");
        if let Some(cycle) = enc.stall_statistics(buf, first_cycle, end_cycles.clone()) {
            return CycleOutput { trace: enc.trace.clone(), stats: enc.stats.clone(), cycle, port_log: None };
        }
        let mut m = CycleTraceModule::new(cfg, buf);
        m.start_at(first_cycle);
        if m.plain() {
            m.replay_services::<true>(&enc.services, end_cycles);
        } else {
            m.replay_services::<false>(&enc.services, end_cycles);
        }
        m.preencoded = Some((enc.end_bits, enc.trace.clone(), enc.stats.clone()));
        m.finish()
    }

    #[inline(never)]
    fn replay_services<const PLAIN: bool>(&mut self, services: &[u64], end_cycles: impl IntoIterator<Item = u64>) {
        for (&w, end) in services.iter().zip(end_cycles) {
            debug_assert!(self.last_input.is_none_or(|p| end > p));
            self.last_input = Some(end);
            let entered = self.arrive_with::<PLAIN>(end, 0);
            debug_assert!(entered);
            self.sdb.push_back(Encoded { bits: w >> 1, svc: if w & 1 != 0 { self.svc_miss } else { self.svc_hit } });
            self.end_of_cycle();
        }
    }

    /// No port log, not pft, port at the core's clock: the cases the sweeps run, in which
    /// `arrive_with::<true>` and `advance_to_with::<true>` drop those checks.
    #[inline]
    fn plain(&self) -> bool {
        debug_assert_eq!(self.plain, self.port_log.is_none() && !self.pft && self.buf.ratio == 1);
        self.plain
    }

    /// `cfg` must be valid; `buf` must pass [`BufferConfig::validate`].
    pub fn new(cfg: &Config, buf: &BufferConfig) -> Self {
        debug_assert!(buf.validate().is_ok());
        debug_assert!(buf.check_scheme(cfg).is_ok());
        CycleTraceModule {
            enc: Encoder::new(cfg),
            detector: StreamDetector::new(cfg.max_sl),
            buf: *buf,
            pft: cfg.scheme == Scheme::Pft,
            plain: cfg.scheme != Scheme::Pft && buf.ratio == 1,
            sdb_cap: buf.sdb.map_or(usize::MAX, |d| d as usize),
            word_cap: buf.sdb.map_or(usize::MAX, |d| crate::pft::job_buffer_words(d) as usize),
            obuf_cap: buf.obuf.unwrap_or(u64::MAX),
            svc_hit: buf.svc_hit as u64,
            svc_miss: buf.svc_miss as u64,
            now: 0,
            delay: 0,
            last_input: None,
            plain_room: 0,
            events: 0,
            origin: None,
            sdb: SdbRing::new(),
            jobs: VecDeque::new(),
            job_words: 0,
            in_service: None,
            pft_pipe: CoderPipeline::default(),
            pft_end: None,
            record_bits: 0,
            obuf_bits: 0,
            dropping: None,
            pft_dropping: None,
            port_log: None,
            stats: CycleStats { buffers: buf.to_string(), sdb_needed: 1, ..Default::default() },
            preencoded: None,
        }
    }

    /// Record every cycle in which the port sent bits (for cosimulation; it also turns off
    /// the idle skip so every beat is seen).
    pub fn with_port_log(mut self) -> Self {
        self.port_log = Some(Vec::new());
        self.plain = false;
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
    #[inline]
    pub fn push(&mut self, ev: &RetireEvent) -> Result<(), CycleError> {
        self.push_at(ev, ev.cycle)
    }

    /// One retired instruction at retire cycle `cycle` (IPC = 1 runs pass the event index).
    /// Inlined: most instructions change no flow inside a stream, and for them the checks,
    /// the counts and the stream detector come down to one test and a few increments; the
    /// others, and the buffers, which see the instruction that ends a stream, are out of line.
    #[inline]
    pub fn push_at(&mut self, ev: &RetireEvent, cycle: u64) -> Result<(), CycleError> {
        if self.take_plain(ev, cycle) {
            return Ok(());
        }
        self.push_general(ev, cycle)
    }

    /// [`CycleTraceModule::push`] inlined whole, for a caller that is itself one
    /// out-of-line call per event and whose plain instructions come in runs
    /// (`streamtrace_sim::CycleModuleHook`): one call instead of two, and no shortcut,
    /// which hardly any of its events could take (the general path takes those the same).
    #[inline(always)]
    pub fn push_inline(&mut self, ev: &RetireEvent) -> Result<(), CycleError> {
        self.push_general_inline(ev, ev.cycle)
    }

    /// `push_at`'s shortcut: an instruction that changes no flow inside a stream is only
    /// counted. Returns whether it took `ev`.
    #[inline(always)]
    fn take_plain(&mut self, ev: &RetireEvent, cycle: u64) -> bool {
        // What the general path does with such an instruction: no error, no descriptor.
        // (A stream's first instruction is one of them when it changes no flow.) A room
        // means not pft, an event seen before, and a stream this instruction does not end.
        if self.plain_room != 0 && self.enc.accepts_plain(ev) && self.last_input.is_some_and(|p| cycle > p) {
            debug_assert!(self.detector.extends_plain());
            self.enc.count_plain(ev);
            self.last_input = Some(cycle);
            self.events += 1;
            self.plain_room -= 1;
            self.detector.extend(ev.iw_addr(), ev.class);
            return true;
        }
        false
    }

    /// How many plain instructions (see [`PlainRun`]) [`CycleTraceModule::push_plain_run`]
    /// takes in one run now: as many as [`CycleTraceModule::push_at`] would only count
    /// (the current stream's room; pft: its front end's, [`Encoder::plain_budget`]); 0
    /// before the first event and for pft under `policy=drop`, which looks at the buffers
    /// for every instruction.
    #[inline]
    pub fn plain_budget(&self) -> u32 {
        if !self.pft {
            debug_assert_eq!(self.plain_room, if self.last_input.is_some() { self.detector.plain_room() } else { 0 });
            return self.plain_room;
        }
        self.pft_plain_budget()
    }

    /// Whether [`CycleTraceModule::push_plain_run`] takes runs that hold conditional
    /// branches not taken ([`PlainRun::may_contain_branch`]): all schemes but pft, whose
    /// front end sees every direction point. For the others such a branch only extends the
    /// stream, as an instruction of class none does; the one difference, the class the
    /// stream detector keeps for the stream in progress, is read only when
    /// [`CycleTraceModule::finish`] cuts the last stream, and then only for whether the
    /// start of a next stream could be inferred, which never comes.
    #[inline]
    pub fn plain_branches(&self) -> bool {
        !self.pft
    }

    /// pft's [`CycleTraceModule::plain_budget`], out of line: the run loops that inline
    /// `plain_budget` keep fewer registers for it.
    #[inline(never)]
    fn pft_plain_budget(&self) -> u32 {
        if self.last_input.is_none() || self.buf.policy == FullPolicy::Drop {
            return 0;
        }
        self.enc.plain_budget()
    }

    /// A run of plain instructions (with conditional branches not taken where
    /// [`CycleTraceModule::plain_branches`]), exactly as [`CycleTraceModule::push_at`] of
    /// each at its retire cycle would take them, for a run of at most [`CycleTraceModule::plain_budget`]
    /// instructions whose retire cycles increase (which a timed core's do). The first
    /// instruction's own errors (a discontinuity, a misaligned or non-increasing cycle) are
    /// the same as `push_at`'s; a run that is longer than the budget, or whose cycles
    /// cannot increase from the first to the last, is refused after its first instruction.
    #[inline]
    pub fn push_plain_run(&mut self, run: &PlainRun) -> Result<(), CycleError> {
        if self.try_plain_run(run) {
            return Ok(());
        }
        self.push_plain_run_other(run)
    }

    /// [`CycleTraceModule::push_plain_run`]'s common case, not pft, in a few tests: true if
    /// it took the run, false (and nothing changed) for anything else, which
    /// `push_plain_run` then takes or refuses. For a caller that keeps errors elsewhere
    /// and wants no `Result` on its hot path.
    #[inline(always)]
    pub fn try_plain_run(&mut self, run: &PlainRun) -> bool {
        // (The checks of `push_at`'s own shortcut, for the first instruction; the room
        // covers the stream's length (1 <= count <= room; 0 for pft and before the first
        // event), the cycle span the others' cycles.)
        let room = self.plain_room;
        if self.takes_run(run, room) {
            self.count_run(run);
            self.plain_room = room - run.count;
            self.detector.extend_within_room(run.pc | run.thumb as u32, run.count);
            return true;
        }
        false
    }

    /// [`CycleTraceModule::push_plain_run`] for what [`CycleTraceModule::try_plain_run`]
    /// does not take: pft's runs, and refusals.
    #[inline(never)]
    fn push_plain_run_other(&mut self, run: &PlainRun) -> Result<(), CycleError> {
        // (pft: the checks of `push_at` for the first instruction, as above, with the front
        // end's budget.)
        if self.pft && self.takes_run(run, self.plain_budget()) {
            self.count_run(run);
            self.enc.extend_plain_run(run);
            return Ok(());
        }
        self.refuse_plain_run(run)
    }

    /// Whether `run` is taken whole with a budget of `room`: 1 <= count <= room, the first
    /// instruction accepted as `push_at`'s shortcut would take it, and cycles that can
    /// increase from the first instruction to the last.
    #[inline(always)]
    fn takes_run(&self, run: &PlainRun, room: u32) -> bool {
        run.count.wrapping_sub(1) < room
            && self.last_input.is_some_and(|p| run.first_cycle > p)
            && run.last_cycle >= run.first_cycle.saturating_add(run.count as u64 - 1)
            && self.enc.accepts_plain_run(run)
    }

    /// The counts of a run [`CycleTraceModule::takes_run`] took.
    #[inline(always)]
    fn count_run(&mut self, run: &PlainRun) {
        self.enc.count_plain_run(run);
        self.last_input = Some(run.last_cycle);
        self.events += run.count as u64;
    }

    /// (See [`refuse_plain_run`].)
    #[cold]
    #[inline(never)]
    fn refuse_plain_run(&mut self, run: &PlainRun) -> Result<(), CycleError> {
        let (index, budget) = (self.events, self.plain_budget());
        let cycles_increase = run.last_cycle >= run.first_cycle.saturating_add((run.count as u64).saturating_sub(1));
        refuse_plain_run(run, index, budget, cycles_increase, |first| self.push_at(first, run.first_cycle))
    }

    /// [`CycleTraceModule::push_at`] for any instruction.
    #[inline(never)]
    fn push_general(&mut self, ev: &RetireEvent, cycle: u64) -> Result<(), CycleError> {
        self.push_general_inline(ev, cycle)
    }

    #[inline(always)]
    fn push_general_inline(&mut self, ev: &RetireEvent, cycle: u64) -> Result<(), CycleError> {
        if let Some(previous) = self.last_input {
            if cycle <= previous {
                return Err(self.cycle_error(cycle, previous));
            }
        }
        self.enc.accept(ev)?;
        self.origin.get_or_insert(cycle);
        self.last_input = Some(cycle);
        self.events += 1;
        if self.pft {
            self.push_pft(ev, cycle);
            return Ok(());
        }
        let ended = self.detector.push(ev);
        self.plain_room = self.detector.plain_room();
        if let Some(d) = ended {
            self.produce_stream_inline(d, cycle);
        }
        Ok(())
    }

    #[cold]
    fn cycle_error(&self, cycle: u64, previous: u64) -> CycleError {
        CycleError::Cycle { index: self.events, cycle, previous }
    }

    #[inline(never)]
    fn push_pft(&mut self, ev: &RetireEvent, cycle: u64) {
        if self.buf.policy == FullPolicy::Drop {
            self.push_pft_drop(ev, cycle);
            return;
        }
        if let Some(job) = self.enc.pft_mut().expect("pft").front.push(ev) {
            // The stall policy: the job always enters (the core waits for room).
            let entered = self.produce_job(job, cycle);
            debug_assert!(entered);
        }
    }

    /// The module drained at start of cycle (docs/trace-timing.md 7, versions 1.6-1.7): job
    /// buffer empty, nothing in the sequencer, the operation register or the coder's steps,
    /// record register and output buffer empty.
    fn pft_drained(&self) -> bool {
        self.jobs.is_empty() && self.pft_pipe.is_idle() && self.record_bits == 0 && self.obuf_bits == 0
    }

    /// pft: the overflow job for `lost` instructions after a gap of `gap` into the (drained)
    /// job buffer, which ends the dropping; the front end then expects a start.
    fn push_overflow_job(&mut self, gap: u32, lost: u64) {
        let job = PftFrontEnd::overflow_job(gap, lost);
        debug_assert_eq!(job.words(), 1);
        self.push_job(job);
        self.enc.pft_mut().expect("pft").front.overflow_pushed();
        self.stats.overflows += 1;
        self.pft_dropping = None;
    }

    /// pft under `policy=drop` (docs/trace-timing.md 7, version 1.6): every instruction
    /// meets the module in its own cycle. A dropped instruction leaves the front end as it
    /// was (restored from a copy taken when fewer than two words or no entry were free,
    /// which is rare), and while dropping the instructions do not reach the front end at all
    /// until one retires in a cycle that starts drained: its place goes to the overflow job.
    fn push_pft_drop(&mut self, ev: &RetireEvent, input: u64) {
        let origin = *self.origin.get_or_insert(input);
        self.advance_to(input.saturating_sub(origin) + self.delay);
        let drained = self.pft_drained();
        let now = self.now;
        let seen = self.cycle_steps(now);
        if let Some((gap, lost)) = self.pft_dropping {
            self.lose(1);
            if drained {
                self.record_needed(seen, 1);
                self.push_overflow_job(gap, lost + 1);
            } else {
                self.pft_dropping = Some((gap, lost + 1));
            }
            self.end_of_cycle();
            return;
        }
        let tight = !self.room(seen, 2);
        let p = self.enc.pft_mut().expect("pft");
        let saved = tight.then(|| p.front.clone());
        if let Some(job) = p.front.push(ev) {
            self.record_needed(seen, job.word_bound());
            if self.room(seen, job.word_bound()) {
                self.push_job(job);
            } else {
                self.stats.sdb_full_events += 1;
                self.lose(1);
                let front = saved.expect("a job that does not fit met fewer than two free words or no free entry");
                self.enc.pft_mut().expect("pft").front = front;
                self.pft_dropping = Some((job.gap_before, 1));
            }
        }
        self.end_of_cycle();
    }

    /// A descriptor captured earlier whose last instruction retired at `end_cycle` (sweeps
    /// replay captures with this; cycles must increase strictly across calls).
    #[inline]
    pub fn push_descriptor(&mut self, d: &StreamDescriptor, end_cycle: u64) {
        debug_assert!(self.last_input.is_none_or(|p| end_cycle > p));
        // Without `start_at`, assume IPC = 1 inside the first stream.
        self.origin.get_or_insert(end_cycle.saturating_sub(d.sl.saturating_sub(1) as u64));
        self.last_input = Some(end_cycle);
        if !self.pft {
            self.plain_room = self.detector.plain_room();
        }
        self.events += d.sl as u64;
        self.enc.count_instructions(d.sl as u64);
        self.produce_stream(*d, end_cycle);
    }

    /// End of trace: the partial stream one cycle after the last retirement, any pending
    /// overflow entry, the drain, END, and the drain of END.
    pub fn finish(mut self) -> CycleOutput {
        let after_last = self.last_input.map_or(0, |c| c + 1);
        if !self.pft {
            if let Some(d) = self.detector.cut() {
                self.produce_stream(d, after_last);
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
                self.push_overflow_job(gap, lost);
            }
            self.end_of_cycle();
        }
        // Trace ends while dropping: push the overflow entry as soon as there is room.
        while let Some(lost) = self.dropping {
            let c = self.now;
            if self.cycle_steps(c) < self.sdb_cap {
                let bits = self.enc.service_overflow(lost);
                self.sdb.push_back(Encoded { bits, svc: self.svc_hit });
                self.stats.overflows += 1;
                self.dropping = None;
            }
            self.end_of_cycle();
        }
        // pft: the sequencer takes END after the buffer's last job (in place of the head),
        // then everything is coded and moved out of the record register.
        if let Some(p) = self.enc.pft_mut() {
            self.pft_end = p.end_job();
        }
        while !self.sdb.is_empty()
            || !self.jobs.is_empty()
            || self.in_service.is_some()
            || self.pft_end.is_some()
            || !self.pft_pipe.is_idle()
            || self.record_bits > 0
        {
            let c = self.now;
            self.cycle_steps(c);
            self.end_of_cycle();
        }
        // END is serviced like a record: one svc_hit service starting now (pft: coded above).
        let (trace, stats) = if self.pft {
            self.enc_finish_bits()
        } else if let Some((end_bits, trace, stats)) = self.preencoded.take() {
            self.in_service = Some((self.now + self.svc_hit - 1, end_bits));
            (trace, stats)
        } else {
            let before = self.enc.bit_len();
            let (trace, stats) = self.enc_finish_bits();
            self.in_service = Some((self.now + self.svc_hit - 1, trace.bit_len - before));
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
        // Wherever the record register moves into the output buffer, the buffer ends up
        // holding min(cap, buffer + register) (bits stay in the register only when the
        // buffer is full), and `obuf_needed_bits` is the largest buffer + register there:
        // so the largest buffer is derived rather than followed per move.
        self.stats.max_obuf_bits = self.stats.obuf_needed_bits.min(self.obuf_cap);
        CycleOutput { trace, stats, cycle: self.stats, port_log: self.port_log }
    }

    fn enc_finish_bits(&mut self) -> (EncodedTrace, Stats) {
        let cfg = *self.enc.config();
        let enc = std::mem::replace(&mut self.enc, Encoder::new(&cfg));
        enc.finish()
    }

    /// A stream descriptor produced in input cycle `input`: into the SDB (encoded), or
    /// replaced by an overflow entry, or dropped (docs/trace-timing.md sections 3 and 4).
    /// (`d` by value: it fits in registers, and the caller's stack copy cost more.)
    #[inline(never)]
    fn produce_stream(&mut self, d: StreamDescriptor, input: u64) {
        self.produce_stream_inline(d, input)
    }

    /// [`Self::produce_stream`], always inlined: into the event path, which ends a stream
    /// at most of the events it sees (the others come in plain runs).
    #[inline(always)]
    fn produce_stream_inline(&mut self, d: StreamDescriptor, input: u64) {
        let d = &d;
        let lone = self.plain() && self.lone_entry_done_before(input);
        // (The plain case inlined: one call less per descriptor.)
        let entered = lone || if self.plain() { self.arrive_with::<true>(input, 0) } else { self.arrive(input, 0) };
        if entered {
            let e = self.enter_stream(d);
            if lone {
                // The cycle ends with this descriptor alone in the SDB, in the slot of the
                // one just served (max_sdb counted one when that one entered).
                self.sdb.replace_lone(e);
                return;
            }
            self.sdb.push_back(e);
        } else {
            *self.dropping.get_or_insert(0) += d.sl as u64;
            self.lose(d.sl as u64);
        }
        self.end_of_cycle();
    }

    /// The SDB entry of a stream descriptor that found room (docs/trace-timing.md section
    /// 4): the overflow entry in its place while dropping, else the descriptor encoded.
    #[inline(always)]
    fn enter_stream(&mut self, d: &StreamDescriptor) -> Encoded {
        match self.dropping.take() {
            Some(lost) => {
                let bits = self.enc.service_overflow(lost + d.sl as u64);
                self.lose(d.sl as u64);
                self.stats.overflows += 1;
                Encoded { bits, svc: self.svc_hit }
            }
            None => {
                let (bits, miss) = self.enc.service_descriptor(d);
                Encoded { bits, svc: if miss { self.svc_miss } else { self.svc_hit } }
            }
        }
    }

    /// `arrive_with::<true>`'s usual outcome in one step, for [`Self::plain`]: the SDB holds
    /// one entry, which the idle compressor starts now and completes before the module
    /// cycle of `input`, and whose record fits in the output buffer. Then the module is
    /// idle in that cycle, which only the port works (the idle fast path); this does that
    /// cycle and the ones before it and returns true, the served entry's slot left for the
    /// caller to refill (it ends the cycle with the new entry alone in the SDB). False, and
    /// everything as it was or as far as `arrive_with` goes the same way, otherwise.
    #[inline(always)]
    fn lone_entry_done_before(&mut self, input: u64) -> bool {
        debug_assert!(self.plain());
        if self.record_bits != 0 || self.in_service.is_some() || self.sdb.len() != 1 {
            return false;
        }
        let c = self.module_cycle(input);
        let e = self.sdb.lone();
        if self.now + e.svc > c {
            return false;
        }
        self.serve(e);
        if self.record_bits != 0 {
            // Held back: `arrive_with` goes on from here.
            self.sdb.pop_front();
            return false;
        }
        // The cycles up to `c` and its port step (ratio 1).
        self.drain_idle(c + 1);
        debug_assert!(self.stats.max_sdb >= 1);
        true
    }

    /// The module cycle in which something produced in input cycle `input` meets the SDB
    /// (the first input cycle is cycle 0; the core's stalls shift the rest).
    #[inline(always)]
    fn module_cycle(&mut self, input: u64) -> u64 {
        let origin = *self.origin.get_or_insert(input);
        input.saturating_sub(origin) + self.delay
    }

    /// pft: a job produced in input cycle `input`; returns whether it entered the buffer
    /// (false: dropped).
    fn produce_job(&mut self, job: CoderJob, input: u64) -> bool {
        let entered = self.arrive(input, job.word_bound());
        if entered {
            self.push_job(job);
        }
        self.end_of_cycle();
        entered
    }

    /// Bring the module to the cycle in which something produced in input cycle `input`
    /// meets the SDB (steps 1-4 of that cycle done, step 5 and the end of the cycle left to
    /// the caller): true if the SDB has a free slot then, false if the entry is to be
    /// dropped. With the stall policy the core waits here until there is a slot. `words`:
    /// the address words of a pft job (0 for the other schemes).
    fn arrive(&mut self, input: u64, words: usize) -> bool {
        if self.plain() {
            self.arrive_with::<true>(input, words)
        } else {
            self.arrive_with::<false>(input, words)
        }
    }

    fn push_job(&mut self, job: CoderJob) {
        self.job_words += job.words();
        self.jobs.push_back(job);
    }

    /// Whether an entry of `words` address words fits after steps 1-4 of the cycle, which
    /// left `seen` entries (`cycle_steps`).
    #[inline(always)]
    fn room(&self, seen: usize, words: usize) -> bool {
        seen < self.sdb_cap && self.job_words + words <= self.word_cap
    }

    /// `sdb_needed` (section 5) for an entry that met `seen` entries: one more entry, and
    /// as many words where they exceed the 2 of any depth (`job_buffer_words`).
    #[inline(always)]
    fn record_needed(&mut self, seen: usize, words: usize) {
        let words_after = self.job_words + words;
        let needed = if words_after > 2 { seen.saturating_add(1).max(words_after) } else { seen.saturating_add(1) };
        self.stats.sdb_needed = self.stats.sdb_needed.max(needed.min(u32::MAX as usize) as u32);
    }

    /// `arrive`; `PLAIN` only when [`Self::plain`] holds.
    #[inline(always)]
    fn arrive_with<const PLAIN: bool>(&mut self, input: u64, words: usize) -> bool {
        debug_assert!(!PLAIN || self.plain());
        let c = self.module_cycle(input);
        self.advance_to_with::<PLAIN>(c);
        if (PLAIN || self.port_log.is_none())
            && self.record_bits == 0
            && self.in_service.is_none()
            && (PLAIN || self.pft_pipe.is_idle())
            && self.sdb.is_empty()
            && (PLAIN || self.jobs.is_empty())
        {
            // Nothing in the module but the output buffer: the cycle is the port's, and the
            // SDB is empty at its start (no maximum changes).
            self.port_step::<PLAIN>(self.now);
            return true;
        }
        let mut found_full = false;
        loop {
            if found_full && (PLAIN || self.port_log.is_none()) {
                // Stalled behind a full SDB while the port drains a held-back record, or
                // while the compressor is busy: the core stays frozen for all of those
                // cycles, as long as the SDB is still full (a pop in the cycle just stepped
                // may have freed a slot: then the producer enters now, as in the stepped run
                // the RTL is compared with).
                let before = self.now;
                if self.sdb.len() + self.jobs.len() >= self.sdb_cap && (self.skip_held_back(u64::MAX) || self.skip_busy(u64::MAX)) {
                    self.stats.stall_cycles += self.now - before;
                    self.delay += self.now - before;
                    continue;
                }
            }
            let c = self.now;
            let start_len = self.cycle_steps(c);
            self.record_needed(start_len, words);
            if self.room(start_len, words) {
                return true;
            }
            if !found_full {
                self.stats.sdb_full_events += 1;
                found_full = true;
            }
            match self.buf.policy {
                FullPolicy::Stall => {
                    // The core holds the instruction and retries next cycle.
                    self.stats.stall_cycles += 1;
                    self.delay += 1;
                    self.end_of_cycle();
                }
                FullPolicy::Drop => return false,
            }
        }
    }

    fn lose(&mut self, n: u64) {
        self.stats.lost_instructions += n;
    }

    /// Simulate every cycle before `target` (steps 1-4 only: nothing is produced in them).
    fn advance_to(&mut self, target: u64) {
        if self.plain() {
            self.advance_to_with::<true>(target)
        } else {
            self.advance_to_with::<false>(target)
        }
    }

    /// `advance_to`; `PLAIN` only when [`Self::plain`] holds.
    #[inline(always)]
    fn advance_to_with<const PLAIN: bool>(&mut self, target: u64) {
        while self.now < target {
            if PLAIN || self.port_log.is_none() {
                if self.record_bits == 0 && (PLAIN || self.pft_pipe.is_idle()) {
                    match self.in_service {
                        None if self.sdb.is_empty() && (PLAIN || self.jobs.is_empty()) => {
                            self.drain_idle(target);
                            return;
                        }
                        None if PLAIN || self.buf.ratio == 1 => {
                            // Idle with an entry waiting: it starts now; when it completes
                            // before `target`, its whole service in one step.
                            if let Some(&e) = self.sdb.front() {
                                if self.now + e.svc - 1 < target {
                                    self.sdb.pop_front();
                                    self.serve(e);
                                    continue;
                                }
                            }
                        }
                        Some((done, _)) if done > self.now => {
                            self.drain_idle(done.min(target));
                            continue;
                        }
                        _ => {}
                    }
                }
                if self.skip_held_back(target) {
                    continue;
                }
            }
            let c = self.now;
            self.cycle_steps(c);
            self.end_of_cycle();
        }
    }

    /// Steps 1-4 of the cycles from `now` (compressor idle, record register empty, ratio 1)
    /// to the completion of `e`, which was at the head of the SDB and starts now, with
    /// nothing produced in between: the port sends `port` bits a cycle while it has them,
    /// then the record moves into the output buffer as far as it fits. (In the cycles
    /// before the completion the output buffer only shrinks and the SDB only loses `e`:
    /// no maximum changes.)
    #[inline(always)]
    fn serve(&mut self, e: Encoded) {
        let port = self.buf.port as u64;
        let o = self.obuf_bits;
        let sent = o.min(port * e.svc);
        self.stats.port_bits += sent;
        self.stats.port_busy_cycles += if port == 1 { sent } else { o.div_ceil(port).min(e.svc) };
        let o = o - sent;
        let moved = e.bits.min(self.obuf_cap - o);
        self.obuf_bits = o + moved;
        self.record_bits = e.bits - moved;
        if self.record_bits > 0 {
            self.stats.obuf_full_cycles += 1;
        }
        self.stats.obuf_needed_bits = self.stats.obuf_needed_bits.max(o + e.bits);
        self.now += e.svc;
    }

    /// The compressor is busy with a descriptor that completes later and the record
    /// register is empty: until it completes nothing happens but the port (no pop, no
    /// completion, nothing to move; the SDB keeps its length). Skip to the completion
    /// cycle or `target`; returns whether it skipped any cycle.
    fn skip_busy(&mut self, target: u64) -> bool {
        if self.record_bits != 0 || !self.pft_pipe.is_idle() {
            return false;
        }
        match self.in_service {
            Some((done, _)) if done > self.now && target > self.now => {
                self.drain_idle(done.min(target));
                true
            }
            _ => false,
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
            || (self.pft && !self.pft_pipe.waits_for_step(!self.jobs.is_empty() || self.pft_end.is_some()))
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
    #[inline(always)]
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

    /// Step 1 of cycle `c`: the port sends up to `port` bits of the output buffer when the
    /// cycle is one of its cycles. `PLAIN` only when [`Self::plain`] holds.
    #[inline(always)]
    fn port_step<const PLAIN: bool>(&mut self, c: u64) {
        if self.obuf_bits > 0 && (PLAIN || self.buf.ratio == 1 || c.is_multiple_of(self.buf.ratio as u64)) {
            let sent = self.obuf_bits.min(self.buf.port as u64);
            self.obuf_bits -= sent;
            self.stats.port_bits += sent;
            self.stats.port_busy_cycles += 1;
            if !PLAIN {
                if let Some(log) = &mut self.port_log {
                    log.push(PortBeat { cycle: c, bits: sent as u32 });
                }
            }
        }
    }

    /// Steps 1-4 of cycle `c` (`c == self.now`); returns the occupancy an entry produced in
    /// this cycle finds: the SDB's at start of cycle (its full flag is a register), pft's job
    /// buffer's after the coder's take (docs/trace-timing.md section 7, version 1.4).
    #[inline]
    fn cycle_steps(&mut self, c: u64) -> usize {
        debug_assert_eq!(c, self.now);
        let start_len = self.sdb.len() + self.jobs.len();
        // 1. Port.
        self.port_step::<false>(c);
        // 2. Compressor start (idle at start of cycle, SDB non-empty at start of cycle).
        if self.in_service.is_none() && self.record_bits == 0 {
            if let Some(e) = self.sdb.pop_front() {
                self.in_service = Some((c + e.svc - 1, e.bits));
            }
        }
        // 2-3. pft: one coder step per cycle whose record register is empty at start of
        // cycle (a byte into the record register, a shift, or the registered operation),
        // and the operation register's load, which may take the buffer's head (or END) in
        // any cycle (docs/trace-timing.md 7, version 1.7).
        if self.pft {
            let (jobs, job_words, end) = (&mut self.jobs, &mut self.job_words, &mut self.pft_end);
            let coder = &mut self.enc.pft_mut().expect("pft").coder;
            let emit = self.pft_pipe.cycle(self.record_bits == 0, coder, || match jobs.pop_front() {
                Some(job) => {
                    *job_words -= job.words();
                    Some(job)
                }
                None => end.take(),
            });
            if emit {
                self.record_bits += 8;
            }
        }
        let seen = if self.pft { self.jobs.len() } else { start_len };
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
        seen
    }

    #[inline]
    fn end_of_cycle(&mut self) {
        self.stats.max_sdb = self.stats.max_sdb.max((self.sdb.len() + self.jobs.len()).min(u32::MAX as usize) as u32);
        self.now += 1;
    }
}

#[cfg(test)]
#[path = "cycle_reference.rs"]
mod reference;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoder::encode_events;
    use crate::event::BranchClass;

    /// Four instructions, three streams, fbase: every record is SL(8) + A(32) = 40 bits and
    /// END is 8 + 2 bits padded to 16.
    fn three_streams() -> Vec<RetireEvent> {
        let ev = |pc: u32, class: BranchClass, taken: bool, next_pc: u32| RetireEvent {
            pc,
            class,
            taken,
            next_pc,
            ..Default::default()
        };
        vec![
            ev(0x100, BranchClass::None, false, 0x104),
            ev(0x104, BranchClass::DirectCond, true, 0x200),
            ev(0x200, BranchClass::IndirectUncond, true, 0x300),
            ev(0x300, BranchClass::Return, true, 0x400),
        ]
    }

    fn run(buffers: &str) -> CycleOutput {
        let cfg: Config = "fbase".parse().unwrap();
        let buf: BufferConfig = buffers.parse().unwrap();
        let mut m = CycleTraceModule::new(&cfg, &buf);
        for (i, e) in three_streams().iter().enumerate() {
            m.push_at(e, i as u64).unwrap();
        }
        m.finish()
    }

    #[test]
    fn unbounded_buffers_follow_the_hand_timeline() {
        // c1 push S1; c2 pop S1 (40 bits in), push S2 (SDB held S1 at start: needed 2);
        // c3 send 1, pop S2, push S3; c4 send 1, pop S3 -> 118; c5 send 1, END (16) -> 133;
        // c6..c138 send the remaining 133 bits: 139 cycles, 136 bits.
        let out = run("sdb=inf,obuf=inf");
        let c = &out.cycle;
        assert_eq!((c.cycles, c.port_bits, c.port_busy_cycles), (139, 136, 136));
        assert_eq!((c.max_obuf_bits, c.obuf_needed_bits, c.max_sdb, c.sdb_needed), (133, 133, 1, 2));
        assert_eq!((c.stall_cycles, c.overflows, c.obuf_full_cycles), (0, 0, 0));
        assert_eq!(out.trace.bit_len, 136);
    }

    #[test]
    fn a_full_sdb_stalls_the_core_and_keeps_the_bits() {
        // sdb=1: S2 finds S1 in the SDB at start of c2 (stall, produced at c3); S3 finds S2
        // at start of c4 (stall, produced at c5). S3 is popped at c6 with 76 bits in the
        // 80-bit buffer: 4 move, 36 wait and trickle in one per cycle (c6..c41 held back),
        // END at c43 waits 15 cycles more; the port is busy every cycle from c3.
        let out = run("sdb=1,obuf=80,policy=stall");
        let c = &out.cycle;
        assert_eq!(c.stall_cycles, 2);
        assert_eq!(c.sdb_full_events, 2);
        assert_eq!(c.obuf_full_cycles, 36 + 15);
        assert_eq!((c.max_obuf_bits, c.cycles, c.port_bits), (80, 139, 136));
        let (functional, _) = encode_events(&"fbase".parse().unwrap(), &three_streams()).unwrap();
        assert_eq!(out.trace, functional);
    }

    #[test]
    fn a_full_sdb_drops_and_reports_the_lost_instructions() {
        // sdb=1, drop: S2 is dropped at c2 (lost 1); S3 at c3 finds the SDB empty and is
        // replaced by the overflow entry for 2 instructions.
        let out = run("sdb=1,policy=drop");
        assert_eq!((out.cycle.overflows, out.cycle.lost_instructions, out.cycle.stall_cycles), (1, 2, 0));
        assert_eq!(out.stats.instructions, 4);
        let (functional, _) = encode_events(&"fbase".parse().unwrap(), &three_streams()).unwrap();
        assert_ne!(out.trace, functional);
    }

    #[test]
    fn cycles_must_increase() {
        let cfg: Config = "fbase".parse().unwrap();
        let mut m = CycleTraceModule::new(&cfg, &BufferConfig::default());
        let evs = three_streams();
        m.push_at(&evs[0], 5).unwrap();
        let err = m.push_at(&evs[1], 5).unwrap_err().to_string();
        assert!(err.contains("event 1") && err.contains("increase strictly"), "{err}");
    }

    /// A random but continuous program: mostly sequential, branches of every class, some
    /// exceptions and Thumb stretches, retire cycles increasing by 1-5 (bursts of streams
    /// that fill the buffers, then gaps).
    fn random_events(seed: u64, n: usize, thumb: bool) -> Vec<(RetireEvent, u64)> {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut rnd = move |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        let mut out = Vec::with_capacity(n);
        let (mut pc, mut t, mut cycle) = (0x8000u32, false, 0u64);
        let targets = [0x8000u32, 0x8100, 0x8240, 0x9000, 0x1_0000, 0x20_0000, 0x8010];
        for _ in 0..n {
            let size = if t { 2 } else { 4 };
            let r = rnd(100);
            let class = match r {
                0..=69 => BranchClass::None,
                70..=81 => BranchClass::DirectCond,
                82..=86 => BranchClass::DirectUncond,
                87..=90 => BranchClass::IndirectCond,
                91..=95 => BranchClass::IndirectUncond,
                _ => BranchClass::Return,
            };
            let exception = rnd(500) == 0;
            // A condition field in ARM state (a `ret` with AL or 0xF is always taken).
            let insn = if t { 0 } else { (rnd(16) as u32) << 28 };
            let always = RetireEvent { class, insn, thumb: t, ..Default::default() }.always_taken();
            let taken = class != BranchClass::None && (always || rnd(4) != 0) && !exception;
            let (next, next_t) = if exception {
                (0x18, false)
            } else if taken {
                let nt = thumb && rnd(3) == 0;
                let tg = targets[rnd(targets.len() as u64) as usize] + 4 * rnd(8) as u32;
                (tg, nt)
            } else {
                (pc + size, t)
            };
            let ev = RetireEvent { pc, insn, thumb: t, class, taken, exception, next_pc: next | next_t as u32, ..Default::default() };
            cycle += if rnd(10) < 7 { 1 } else { 1 + rnd(40) };
            out.push((ev, cycle));
            pc = next;
            t = next_t;
        }
        out
    }

    fn run_events(cfg: &Config, buf: &BufferConfig, evs: &[(RetireEvent, u64)], log: bool) -> CycleOutput {
        let mut m = CycleTraceModule::new(cfg, buf);
        if log {
            m = m.with_port_log();
        }
        for (e, c) in evs {
            m.push_at(e, *c).unwrap();
        }
        m.finish()
    }

    fn run_reference(cfg: &Config, buf: &BufferConfig, evs: &[(RetireEvent, u64)], log: bool) -> CycleOutput {
        let mut m = reference::ReferenceModule::new(cfg, buf);
        if log {
            m = m.with_port_log();
        }
        for (e, c) in evs {
            m.push_at(e, *c).unwrap();
        }
        m.finish()
    }

    const DIFF_CONFIGS: [&str; 9] = [
        "rsdc-32x4-128",
        "fbase",
        "nexs",
        "bsdc-16x4-64,repl=lru",
        "esdc-32x4-128,sync=300",
        "rsdc-32x4-128,sync=50",
        "tslz-256",
        "pft",
        // A start after every instruction: jobs of two address words (trace-timing 1.5).
        "pft,sync=1",
    ];
    const DIFF_BUFFERS: [&str; 13] = [
        "sdb=2,obuf=80",
        "sdb=1,obuf=8",
        "sdb=1,obuf=1",
        "sdb=3,obuf=40,port=2",
        "sdb=2,obuf=16,port=4,ratio=3",
        "sdb=1,obuf=20,ratio=2,svc_hit=2,svc_miss=5",
        "sdb=2,obuf=80,policy=drop",
        "sdb=1,obuf=12,port=3,policy=drop",
        "sdb=2,obuf=24,port=2,svc_hit=2,svc_miss=3",
        "sdb=inf,obuf=inf",
        "sdb=inf,obuf=inf,port=3,svc_hit=2,svc_miss=4",
        // (Services slower than arrivals: the SDB grows deep.)
        "sdb=inf,obuf=inf,svc_hit=4,svc_miss=9",
        "sdb=inf,obuf=inf,port=2,ratio=2,svc_miss=3",
    ];

    /// Every (configuration, buffers, events) case of the differential tests.
    fn cases(mut f: impl FnMut(&str, &str, &Config, &BufferConfig, &[(RetireEvent, u64)])) {
        for (i, c) in DIFF_CONFIGS.iter().enumerate() {
            let cfg: Config = c.parse().unwrap();
            for (j, b) in DIFF_BUFFERS.iter().enumerate() {
                let buf: BufferConfig = b.parse().unwrap();
                if buf.check_scheme(&cfg).is_err() {
                    continue;
                }
                let thumb = cfg.isa != crate::config::IsaMode::ArmOnly;
                for seed in 0..3 {
                    let evs = random_events((seed * 1000 + i * 31 + j) as u64 + 1, 4000, thumb);
                    f(c, b, &cfg, &buf, &evs);
                }
            }
        }
    }

    #[test]
    fn pft_jobs_wait_for_address_words() {
        // trace-timing.md 7, version 1.5: 2 entries have 2 words, so a job of two words
        // leaves room for no job with a word, but for one without.
        let cfg: Config = "pft".parse().unwrap();
        let mut m = CycleTraceModule::new(&cfg, &"sdb=2,obuf=80".parse().unwrap());
        let mut front = PftFrontEnd::new(&cfg.pft, cfg.low_bits(), 0);
        let first = RetireEvent { pc: 0x8000, insn: 0xE000_0000, next_pc: 0x18, exception: true, ..Default::default() };
        let start_and_vector = front.push(&first).unwrap();
        assert_eq!(start_and_vector.words(), 2);
        let plain = RetireEvent { pc: 0x18, insn: 0x1A00_0000, next_pc: 0x1c, class: BranchClass::DirectCond, ..Default::default() };
        let slot = front.push(&plain).unwrap();
        assert_eq!(slot.words(), 0);
        let overflow = PftFrontEnd::overflow_job(3, 9);
        assert_eq!(overflow.words(), 1);
        assert!(m.room(0, 2));
        m.push_job(start_and_vector);
        assert!(m.room(1, 0), "a control entry is free");
        assert!(!m.room(1, 1), "no word is free");
        m.push_job(slot);
        assert!(!m.room(2, 0), "no control entry is free");
        // A one-entry buffer still takes any job.
        let one = CycleTraceModule::new(&cfg, &"sdb=1,obuf=40".parse().unwrap());
        assert!(one.room(0, 2) && !one.room(1, 0));
    }

    #[test]
    fn pft_takes_exceptions_first_after_every_reset() {
        // sync=1: every instruction is followed by a sync, so every exception (one in three
        // instructions here) comes first after a reset; also with drops (an overflow resets).
        let cfg: Config = "pft,sync=1".parse().unwrap();
        let (mut pc, mut cycle, mut evs) = (0x8000u32, 0u64, Vec::new());
        for i in 0..3000u32 {
            let mut ev = RetireEvent { pc, insn: 0xE000_0000, next_pc: pc + 4, ..Default::default() };
            if i % 3 == 0 {
                ev.exception = true;
                ev.next_pc = 0x18 + 4 * (i % 5);
            } else if i % 3 == 1 {
                ev.class = BranchClass::DirectCond;
                ev.taken = i % 2 == 0;
                if ev.taken {
                    ev.next_pc = 0x9000 + 4 * (i % 11);
                }
            }
            cycle += 1 + (i % 5 == 0) as u64 * 30;
            pc = ev.next_pc;
            evs.push((ev, cycle));
        }
        for b in ["sdb=2,obuf=80", "sdb=1,obuf=8,policy=drop"] {
            let buf: BufferConfig = b.parse().unwrap();
            let out = run_events(&cfg, &buf, &evs, false);
            assert_eq!(out.stats.instructions, 3000, "{b}");
            assert_eq!(out.cycle.lost_instructions > 0, b.contains("drop"), "{b}");
            assert_eq!(run_events(&cfg, &buf, &evs, true).trace, out.trace, "{b}");
        }
    }

    #[test]
    fn same_cycles_and_bits_as_before_the_speed_work() {
        // Both paths: the port log steps every cycle (the RTL's reference), without it the
        // module skips what it can (sweeps, the architect's runs).
        cases(|c, b, cfg, buf, evs| {
            for log in [false, true] {
                let new = run_events(cfg, buf, evs, log);
                let old = run_reference(cfg, buf, evs, log);
                assert_eq!(new.cycle, old.cycle, "{c} {b} log={log}");
                assert_eq!(new.trace, old.trace, "{c} {b} log={log}");
                assert_eq!(new.stats, old.stats, "{c} {b} log={log}");
                assert_eq!(new.port_log, old.port_log, "{c} {b} log={log}");
            }
            // Replays of captured descriptors (sweeps).
            if cfg.scheme != Scheme::Pft {
                let mut det = StreamDetector::new(cfg.max_sl);
                let ds: Vec<(StreamDescriptor, u64)> = evs.iter().filter_map(|(e, c)| det.push(e).map(|d| (d, *c))).collect();
                let mut new = CycleTraceModule::new(cfg, buf);
                let mut old = reference::ReferenceModule::new(cfg, buf);
                new.start_at(evs[0].1);
                old.start_at(evs[0].1);
                for (d, c) in &ds {
                    new.push_descriptor(d, *c);
                    old.push_descriptor(d, *c);
                }
                let (new, old) = (new.finish(), old.finish());
                if buf.policy == FullPolicy::Stall || buf.sdb.is_none() {
                    let enc = EncodedStreams::new(cfg, ds.iter().map(|(d, _)| d));
                    let once = CycleTraceModule::replay_encoded(cfg, buf, &enc, evs[0].1, ds.iter().map(|(_, c)| *c));
                    assert_eq!(&once.cycle, &old.cycle, "{c} {b} encoded once: cycle statistics");
                    assert_eq!((&once.cycle, &once.trace, &once.stats), (&old.cycle, &old.trace, &old.stats), "{c} {b} encoded once");
                }
                if buf.policy == FullPolicy::Stall {
                    // The sizes a sweep takes from the service times, against the stepped
                    // reference with these buffers unbounded.
                    let enc = EncodedStreams::new(cfg, ds.iter().map(|(d, _)| d));
                    let mut unbounded = reference::ReferenceModule::new(cfg, &buf.unbounded());
                    unbounded.start_at(evs[0].1);
                    for (d, c) in &ds {
                        unbounded.push_descriptor(d, *c);
                    }
                    let u = unbounded.finish().cycle;
                    let needed = enc.needed_sizes(cfg, buf, evs[0].1, ds.iter().map(|(_, c)| *c));
                    assert_eq!(needed, (u.sdb_needed, u.obuf_needed_bits), "{c} {b} needed sizes");
                    // The sweep's single pass: the same encoding and sizes.
                    let (descriptors, ends): (Vec<StreamDescriptor>, Vec<u64>) = ds.iter().copied().unzip();
                    let unique = crate::stats::count_unique_streams(&descriptors);
                    let (swept, sizes) = EncodedStreams::with_needed_sizes(cfg, &descriptors, unique, buf, evs[0].1, &ends);
                    assert_eq!((&swept.services, &swept.trace, &swept.stats), (&enc.services, &enc.trace, &enc.stats), "{c} {b} sweep encoding");
                    assert_eq!(sizes, needed, "{c} {b} sweep sizes");
                }
                assert_eq!((new.cycle, new.trace, new.stats), (old.cycle, old.trace, old.stats), "{c} {b} replay");
            }
        });
    }

    #[test]
    fn needed_sizes_of_a_deep_sdb() {
        // One-instruction streams (every instruction a taken branch) in consecutive cycles
        // and services of up to 9 cycles: the SDB grows past what `needed_sizes` looks for
        // (it then replays cycle by cycle), or short runs end with several descriptors
        // waiting and END behind them.
        let cfg: Config = "rsdc-8x2-16".parse().unwrap();
        let cases = [
            ("sdb=inf,obuf=inf,svc_hit=4,svc_miss=9", 3000),
            ("sdb=inf,obuf=inf,svc_hit=2,svc_miss=3", 40),
            ("sdb=inf,obuf=inf,svc_hit=1,svc_miss=2", 3000),
            // Three waiting at the last arrival (within the look-back); the first
            // descriptor still in service at the last arrival.
            ("sdb=inf,obuf=inf,svc_hit=2,svc_miss=2", 7),
            ("sdb=inf,obuf=inf,svc_hit=3,svc_miss=3", 2),
            ("sdb=inf,obuf=inf,port=2,svc_hit=2,svc_miss=2", 6),
        ];
        for (buffers, n) in cases {
            let buf: BufferConfig = buffers.parse().unwrap();
            let evs: Vec<(RetireEvent, u64)> = (0..n as u32)
                .map(|i| {
                    let pc = 0x8000 + 8 * (i % 37);
                    let next = 0x8000 + 8 * ((i + 1) % 37);
                    let ev = RetireEvent { pc, insn: 0xE12F_FF10, class: BranchClass::IndirectUncond, taken: true, next_pc: next, ..Default::default() };
                    (ev, 100 + i as u64)
                })
                .collect();
            let mut det = StreamDetector::new(cfg.max_sl);
            let ds: Vec<(StreamDescriptor, u64)> = evs.iter().filter_map(|(e, c)| det.push(e).map(|d| (d, *c))).collect();
            let mut old = reference::ReferenceModule::new(&cfg, &buf);
            old.start_at(evs[0].1);
            for (d, c) in &ds {
                old.push_descriptor(d, *c);
            }
            let old = old.finish();
            let enc = EncodedStreams::new(&cfg, ds.iter().map(|(d, _)| d));
            let once = CycleTraceModule::replay_encoded(&cfg, &buf, &enc, evs[0].1, ds.iter().map(|(_, c)| *c));
            assert_eq!(once.cycle, old.cycle, "{buffers}");
            assert_eq!((once.trace, once.stats), (old.trace, old.stats), "{buffers}");
            let needed = enc.needed_sizes(&cfg, &buf, evs[0].1, ds.iter().map(|(_, c)| *c));
            assert_eq!(needed, (old.cycle.sdb_needed, old.cycle.obuf_needed_bits), "{buffers}");
        }
    }

    #[test]
    fn a_descriptor_arriving_as_the_one_before_starts() {
        // Pairs of one-instruction streams in consecutive cycles, 12 cycles apart, one-cycle
        // services, no held-back bits: the second of a pair arrives in the cycle the first
        // starts, which is not the idle fast path (the SDB held one at the cycle's start:
        // sdb_needed 2) while the SDB holds one descriptor at the cycle's end (max_sdb 1).
        let cfg: Config = "rsdc-8x2-16".parse().unwrap();
        let evs: Vec<(RetireEvent, u64)> = (0..400u32)
            .map(|i| {
                let pc = 0x8000 + 8 * (i % 37);
                let next = 0x8000 + 8 * ((i + 1) % 37);
                let ev = RetireEvent { pc, insn: 0xE12F_FF10, class: BranchClass::IndirectUncond, taken: true, next_pc: next, ..Default::default() };
                (ev, 100 + 12 * (i / 2) as u64 + (i % 2) as u64)
            })
            .collect();
        let mut det = StreamDetector::new(cfg.max_sl);
        let ds: Vec<(StreamDescriptor, u64)> = evs.iter().filter_map(|(e, c)| det.push(e).map(|d| (d, *c))).collect();
        for buffers in ["sdb=2,obuf=100000,svc_hit=1,svc_miss=1", "sdb=inf,obuf=inf,svc_hit=1,svc_miss=1"] {
            let buf: BufferConfig = buffers.parse().unwrap();
            let mut old = reference::ReferenceModule::new(&cfg, &buf);
            old.start_at(evs[0].1);
            for (d, c) in &ds {
                old.push_descriptor(d, *c);
            }
            let old = old.finish();
            assert_eq!((old.cycle.sdb_needed, old.cycle.max_sdb, old.cycle.stall_cycles), (2, 1, 0), "{buffers}");
            let enc = EncodedStreams::new(&cfg, ds.iter().map(|(d, _)| d));
            let once = CycleTraceModule::replay_encoded(&cfg, &buf, &enc, evs[0].1, ds.iter().map(|(_, c)| *c));
            assert_eq!(once.cycle, old.cycle, "{buffers}");
            let needed = enc.needed_sizes(&cfg, &buf, evs[0].1, ds.iter().map(|(_, c)| *c));
            assert_eq!(needed, (2, old.cycle.obuf_needed_bits), "{buffers}");
        }
    }

    /// `evs` fed with the plain instructions in runs; also the number of runs.
    fn run_in_plain_runs(cfg: &Config, buf: &BufferConfig, evs: &[(RetireEvent, u64)]) -> (CycleOutput, u64) {
        let mut m = CycleTraceModule::new(cfg, buf);
        let fed = crate::plain_runs::feed_in_plain_runs(&mut m, evs);
        assert!(fed.error.is_none() && fed.taken == evs.len() as u64);
        (m.finish(), fed.runs)
    }

    #[test]
    fn plain_runs_give_what_single_instructions_give() {
        let mut batched = 0;
        cases(|c, b, cfg, buf, evs| {
            let single = run_events(cfg, buf, evs, false);
            let (runs, n) = run_in_plain_runs(cfg, buf, evs);
            assert_eq!(runs.trace, single.trace, "{c} {b}");
            assert_eq!(runs.stats, single.stats, "{c} {b}");
            assert_eq!(runs.cycle, single.cycle, "{c} {b}");
            // pft under the drop policy looks at the buffers for every instruction, and with
            // sync=1 starts again after every instruction.
            let none = cfg.scheme == Scheme::Pft && (buf.policy == FullPolicy::Drop || cfg.sync_period == 1);
            assert_eq!(n == 0, none, "{c} {b}: {n} runs");
            batched += n;
        });
        assert!(batched > 10_000, "only {batched} runs");
    }

    #[test]
    fn functional_plain_runs_give_what_single_instructions_give() {
        let configs = DIFF_CONFIGS.iter().copied().chain(["base", "sct8ht-128x4-255x8", "gzip-1", "tslz-1024,maxsl=5", "pft,sync=40"]);
        for (i, c) in configs.enumerate() {
            let cfg: Config = c.parse().unwrap();
            let thumb = cfg.isa != crate::config::IsaMode::ArmOnly;
            let mut runs = 0;
            for seed in 0..3u64 {
                let evs = random_events(seed * 7919 + i as u64 + 5, 6000, thumb);
                let mut single = Encoder::new(&cfg);
                for (e, _) in &evs {
                    single.push(e).unwrap();
                }
                let mut batched = Encoder::new(&cfg);
                let fed = crate::plain_runs::feed_in_plain_runs(&mut batched, &evs);
                assert!(fed.error.is_none() && fed.taken == evs.len() as u64, "{c}, seed {seed}");
                runs += fed.runs;
                assert_eq!(batched.finish(), single.finish(), "{c}, seed {seed}");
            }
            // (pft with sync=1 starts again after every instruction: nothing to batch.)
            assert_eq!(runs > 500, cfg.sync_period != 1, "{c}: {runs} runs");
        }
    }

    #[test]
    fn plain_runs_are_checked_as_their_instructions_are() {
        let cfg: Config = "rsdc-32x4-128".parse().unwrap();
        let buf = BufferConfig::default();
        let start = || {
            let mut m = CycleTraceModule::new(&cfg, &buf);
            assert_eq!(m.plain_budget(), 0, "no budget before the first event");
            m.push_at(&RetireEvent { pc: 0x100, next_pc: 0x104, ..Default::default() }, 10).unwrap();
            m
        };
        let run = |pc: u32, count: u32, first_cycle: u64, last_cycle: u64| PlainRun { pc, thumb: false, count, first_cycle, last_cycle };
        let budget = start().plain_budget();
        assert_eq!(budget, cfg.max_sl - 2, "room left after one instruction");
        // The first instruction's own errors are push_at's.
        for r in [run(0x200, 3, 11, 13), run(0x104, 3, 10, 12), run(0x106, 1, 11, 11)] {
            let mut alone = start();
            let expected = alone.push_at(&r.first_event(), r.first_cycle).unwrap_err().to_string();
            assert_eq!(start().push_plain_run(&r).unwrap_err().to_string(), expected, "{r:?}");
        }
        // A run the budget or its cycles do not allow is refused after its first instruction.
        let mut m = start();
        let e = m.push_plain_run(&run(0x104, budget + 1, 11, 11 + budget as u64)).unwrap_err();
        assert!(matches!(e, CycleError::Event(EncodeError::PlainRun { index: 1, reason: "exceeds the plain budget", .. })), "{e}");
        let e = start().push_plain_run(&run(0x104, 3, 11, 12)).unwrap_err();
        assert!(e.to_string().contains("events 1..4: a run of 3 plain instructions has retire cycles that do not increase"), "{e}");
        // Within the budget, a run is its instructions: the stream goes on after it.
        let mut m = start();
        m.push_plain_run(&run(0x104, budget, 11, 11 + budget as u64)).unwrap();
        assert_eq!(m.plain_budget(), 0);
        assert!(m.push_plain_run(&run(0x104, 0, 0, 0)).is_ok(), "an empty run does nothing");
        let pft: Config = "pft".parse().unwrap();
        for (policy, offers) in [("stall", true), ("drop", false)] {
            let b: BufferConfig = format!("sdb=2,obuf=80,policy={policy}").parse().unwrap();
            let mut p = CycleTraceModule::new(&pft, &b);
            p.push_at(&RetireEvent { pc: 0x100, next_pc: 0x104, ..Default::default() }, 10).unwrap();
            assert_eq!(p.plain_budget() > 0, offers, "pft, policy={policy}");
        }
    }

    #[test]
    fn skipping_gives_what_stepping_every_cycle_gives() {
        // Without the port log the module skips cycles in which nothing but the port can
        // change; with it, it steps every cycle (the RTL's reference). Everything must agree.
        // (Until 2026-11-25 a stalled producer kept skipping the cycles in which a held-back
        // record drained after a pop had freed an SDB slot, counting them as stalls: more
        // stall cycles than the RTL in runs that stall on a full SDB, never different bits.)
        let mut stalled = 0;
        cases(|c, b, cfg, buf, evs| {
            let fast = run_events(cfg, buf, evs, false);
            let slow = run_events(cfg, buf, evs, true);
            assert_eq!(fast.trace, slow.trace, "{c} {b}");
            assert_eq!(fast.stats, slow.stats, "{c} {b}");
            assert_eq!(fast.cycle, slow.cycle, "{c} {b}");
            stalled += (fast.cycle.stall_cycles > 0) as u32;
        });
        assert!(stalled > 20, "only {stalled} runs stall");
    }

    #[test]
    fn the_sdb_ring_keeps_order_across_wraps_and_growth() {
        // Against a VecDeque: pushes and pops in uneven bursts, so that the ring wraps and
        // grows while wrapped.
        let (mut ring, mut deque) = (SdbRing::new(), VecDeque::new());
        let mut x = 1u64;
        for round in 0..200u64 {
            for _ in 0..(round * 7 % 11) {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let e = Encoded { bits: x >> 40, svc: x >> 60 };
                ring.push_back(e);
                deque.push_back(e);
            }
            for _ in 0..(round * 5 % 9) {
                assert_eq!(ring.front().map(|e| (e.bits, e.svc)), deque.front().map(|e: &Encoded| (e.bits, e.svc)));
                assert_eq!(ring.pop_front().map(|e| (e.bits, e.svc)), deque.pop_front().map(|e| (e.bits, e.svc)));
                assert_eq!((ring.len(), ring.is_empty()), (deque.len(), deque.is_empty()));
            }
        }
    }

    #[test]
    fn buffer_config_text_round_trips_and_rejects_nonsense() {
        for text in ["sdb=2,obuf=80,port=1,ratio=1,svc_hit=1,svc_miss=2,policy=stall", "sdb=inf,obuf=inf,port=4,ratio=2,svc_hit=1,svc_miss=3,policy=drop"] {
            let b: BufferConfig = text.parse().unwrap();
            assert_eq!(b.to_string(), text);
        }
        assert_eq!("".parse::<BufferConfig>().unwrap(), BufferConfig::default());
        for (bad, msg) in [
            ("sdb=0", "at least 1"),
            ("port=0", "port=0"),
            ("svc_hit=3", "svc_hit"),
            ("policy=maybe", "stall or drop"),
            ("depth=3", "unknown key"),
            ("obuf", "key=value"),
            ("ratio=-1", "non-negative"),
        ] {
            let e = bad.parse::<BufferConfig>().unwrap_err();
            assert!(e.contains(msg), "{bad}: {e}");
        }
    }
}

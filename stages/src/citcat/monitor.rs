//! The bus monitor (docs/citcat.md 2.1): its own copies of the I- and D-cache tags, fed
//! with each retired instruction's fetch and data accesses, turn them into the records a
//! probe below the caches would see. The recorder and the replayer share it, so a replay
//! regenerates the CAT by the same rules.

use super::format::{Cat, CatRecord, COUNTER, DFILL, FLAG_DEVICE, FLAG_PRIVILEGED, IFILL, UNC_READ, UNC_WRITE, WRITE};
use streamtrace_model::RetireEvent;
use streamtrace_sim::system::is_device;
use streamtrace_sim::timing::cache::Cache;
use streamtrace_sim::timing::config::DataCacheConfig;
use streamtrace_sim::{MemAccess, Memory, TimingConfig};

pub struct BusMonitor {
    dcfg: DataCacheConfig,
    icache: Cache,
    dcache: Cache,
    line: u32,
    /// The records so far.
    pub cat: Cat,
}

impl BusMonitor {
    /// Whether a monitor can record with `timing`: a valid configuration (bounded cache
    /// sizes) whose two caches share one line size of 4 to 128 bytes.
    pub fn check(timing: &TimingConfig) -> Result<(), String> {
        timing.validate().map_err(|e| e.to_string())?;
        let (i, d) = (&timing.icache, &timing.dcache);
        if i.line_bytes != d.line_bytes {
            return Err(format!(
                "the CAT has one line size: the I-cache's ({}) and the D-cache's ({}) differ",
                i.line_bytes, d.line_bytes
            ));
        }
        if !(4..=128).contains(&i.line_bytes) {
            return Err(format!("the CAT records lines of 4 to 128 bytes, not {}", i.line_bytes));
        }
        Ok(())
    }

    /// A monitor with the cache geometry and D-cache policy of `timing`. The CAT header has
    /// one line size, so the two caches must agree on it.
    /// The configuration is checked (see [`BusMonitor::check`]) before anything is allocated.
    pub fn new(timing: &TimingConfig) -> Result<BusMonitor, String> {
        BusMonitor::check(timing)?;
        let (i, d) = (&timing.icache, &timing.dcache);
        let dcache = Cache::new(&d.geometry());
        Ok(BusMonitor {
            dcfg: d.clone(),
            icache: Cache::new(i),
            dcache,
            line: i.line_bytes,
            cat: Cat { line_bytes: i.line_bytes as u8, write_back: d.write_back, write_allocate: d.write_allocate, records: Vec::new() },
        })
    }

    /// Clean and invalidate both caches (the trace-start driver): the clean's write-backs
    /// belong to the time before the trace and are not recorded.
    pub fn invalidate(&mut self) {
        self.icache.invalidate();
        self.dcache.invalidate();
    }

    pub fn push(&mut self, r: CatRecord) {
        self.cat.records.push(r);
    }

    /// The records of one retired instruction. `mem` is memory after it, `prior` the old
    /// bytes its stores overwrote (in store order), `counters` the CCNT values it read.
    pub fn instruction(
        &mut self,
        ev: &RetireEvent,
        accesses: &[MemAccess],
        mem: &Memory,
        prior: &[(u32, u8)],
        privileged: bool,
        counters: &[u32],
    ) {
        let flags = if privileged { FLAG_PRIVILEGED } else { 0 };
        let cycle = ev.cycle;
        let mask = !(self.line - 1);
        // Fills show memory as it was before the instruction: undo its stores.
        // (Lines of RAM accesses lie wholly in RAM, so the reads cannot fault.)
        let after = |addr: u32, len: u32| -> Vec<u8> { mem.read_bytes(addr, len as usize).unwrap_or_else(|_| vec![0; len as usize]) };
        let before = |addr: u32, len: u32| -> Vec<u8> {
            let mut data = after(addr, len);
            for &(a, old) in prior.iter().rev() {
                let off = a.wrapping_sub(addr);
                if off < len {
                    data[off as usize] = old;
                }
            }
            data
        };

        let fetch = ev.pc & mask;
        let line = self.icache.line_of(fetch);
        if !self.icache.enabled || self.icache.find(line).is_none() {
            if self.icache.enabled {
                self.icache.allocate(line);
            }
            let data = before(fetch, self.line);
            self.push(CatRecord { kind: IFILL, flags, addr: fetch, cycle, data });
        }

        for a in accesses {
            let value = a.value.to_le_bytes()[..a.size as usize].to_vec();
            if is_device(a.addr) {
                let kind = if a.write { UNC_WRITE } else { UNC_READ };
                self.push(CatRecord { kind, flags: flags | FLAG_DEVICE, addr: a.addr, cycle, data: value });
                continue;
            }
            let store = CatRecord { kind: WRITE, flags, addr: a.addr, cycle, data: value };
            if !self.dcache.enabled {
                if a.write {
                    self.push(store);
                } else {
                    let base = a.addr & mask;
                    self.push(CatRecord { kind: DFILL, flags, addr: base, cycle, data: before(base, self.line) });
                }
                continue;
            }
            let line = self.dcache.line_of(a.addr);
            let slot = match self.dcache.find(line) {
                Some(slot) => Some(slot),
                None if !a.write || self.dcfg.write_allocate => {
                    let (slot, victim) = self.dcache.allocate(line);
                    if let Some(v) = victim {
                        let half = self.line / 2;
                        for h in 0..2 {
                            if v.dirty & (1 << h) != 0 {
                                let addr = (v.line << self.dcache.line_shift) + h * half;
                                self.push(CatRecord { kind: WRITE, flags, addr, cycle, data: after(addr, half) });
                            }
                        }
                    }
                    let base = a.addr & mask;
                    self.push(CatRecord { kind: DFILL, flags, addr: base, cycle, data: before(base, self.line) });
                    Some(slot)
                }
                None => None,
            };
            if a.write {
                match slot {
                    Some(slot) if self.dcfg.write_back => self.dcache.mark_dirty(slot, a.addr),
                    _ => self.push(store),
                }
            }
        }
        for &v in counters {
            self.push(CatRecord { kind: COUNTER, flags, addr: 0, cycle, data: v.to_le_bytes().to_vec() });
        }
    }
}

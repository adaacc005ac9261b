//! System mode (docs/citcat.md section 1): a bare-metal platform around the core with a
//! timer, a UART, a DMA engine and an interrupt controller behind uncached registers, the
//! CP14 clock counter and the p7 trace-start marker. Device events are driven by the core's
//! cycle time line, so interrupts and DMA bursts land at instructions that instruction
//! counts alone cannot predict.

use std::collections::VecDeque;

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use streamtrace_isa::ElfImage;
use streamtrace_model::RetireEvent;

use crate::cpu::Mode;
use crate::machine::{CoprocOp, ExceptionPolicy, IoBus, Machine, MemAccess, RetireHook, SimError, StepOutcome};
use crate::memory::Memory;
use crate::semihost::Semihost;
use crate::timing::{ConfigError, TimingConfig};

pub const RAM_BASE: u32 = 0;
pub const RAM_SIZE: u32 = 16 << 20;
pub const DEV_BASE: u32 = 0x8000_0000;
pub const DEV_SIZE: u32 = 0x1_0000;

pub const EXIT: u32 = DEV_BASE;
pub const UART_DATA: u32 = DEV_BASE + 0x1000;
pub const UART_STAT: u32 = DEV_BASE + 0x1004;
pub const UART_CTRL: u32 = DEV_BASE + 0x1008;
pub const TIMER_COUNT: u32 = DEV_BASE + 0x2000;
pub const TIMER_MATCH: u32 = DEV_BASE + 0x2004;
pub const TIMER_STAT: u32 = DEV_BASE + 0x2008;
pub const DMA_DST: u32 = DEV_BASE + 0x3000;
pub const DMA_LEN: u32 = DEV_BASE + 0x3004;
pub const DMA_CTRL: u32 = DEV_BASE + 0x3008;
pub const DMA_STAT: u32 = DEV_BASE + 0x300C;
pub const INT_PEND: u32 = DEV_BASE + 0x4000;
pub const INT_MASK: u32 = DEV_BASE + 0x4004;

pub const INT_TIMER: u32 = 1;
pub const INT_UART: u32 = 2;
pub const INT_DMA: u32 = 4;

const UART_FIFO: usize = 16;
const DMA_BURST: u32 = 16;
/// TIMER_COUNT ticks once every this many cycles.
pub const TIMER_DIVIDER: u64 = 4;

/// Is `addr` in the device region (uncached, not RAM)?
#[inline]
pub fn is_device(addr: u32) -> bool {
    addr.wrapping_sub(DEV_BASE) < DEV_SIZE
}

/// The device registers (docs/citcat.md 1.1); any other device address is a data abort.
pub const REGISTERS: [u32; 13] = [
    EXIT, UART_DATA, UART_STAT, UART_CTRL, TIMER_COUNT, TIMER_MATCH, TIMER_STAT, DMA_DST, DMA_LEN, DMA_CTRL,
    DMA_STAT, INT_PEND, INT_MASK,
];

/// The register dump region of the start-of-trace driver (docs/citcat.md 2.2): word stores
/// are accepted and ignored (the bus monitor records them); loads abort.
pub const REG_DUMP: u32 = DEV_BASE + 0xF000;
/// Words in the dump region: 45 registers of one word and the 8-byte accumulator.
pub const REG_DUMP_WORDS: u32 = 47;

pub fn in_dump_region(addr: u32) -> bool {
    addr.wrapping_sub(REG_DUMP) < REG_DUMP_WORDS * 4
}

/// A device access the platform answers (aligned words: a listed register, or a store to the
/// dump region): what a replay without devices must accept, so that it aborts exactly where
/// the recording did.
pub fn is_register_access(addr: u32, size: u8, write: bool) -> bool {
    size == 4 && (REGISTERS.contains(&addr) || (write && addr & 3 == 0 && in_dump_region(addr)))
}

/// Seeds and rates of the devices (docs/citcat.md 1.1).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SystemConfig {
    pub seed: u64,
    /// The timer fires 0..timer_jitter cycles after its match.
    pub timer_jitter: u32,
    pub uart_gap_min: u32,
    pub uart_gap_max: u32,
    /// A started DMA waits 0..dma_delay cycles before its first burst.
    pub dma_delay: u32,
    pub dma_burst_gap: u32,
}

impl Default for SystemConfig {
    fn default() -> Self {
        SystemConfig { seed: 1, timer_jitter: 64, uart_gap_min: 300, uart_gap_max: 3000, dma_delay: 200, dma_burst_gap: 24 }
    }
}

impl SystemConfig {
    /// Read a TOML file of these keys (missing keys keep their defaults).
    pub fn from_toml_file(path: &std::path::Path) -> Result<SystemConfig, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        SystemConfig::from_toml_str(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Parse TOML text of these keys and check it (the file's contents, without its name).
    pub fn from_toml_str(text: &str) -> Result<SystemConfig, String> {
        let cfg: SystemConfig = toml::from_str(text).map_err(|e| e.to_string().trim_end().to_string())?;
        cfg.validate()?;
        Ok(cfg)
    }

    pub fn validate(&self) -> Result<(), String> {
        if self.uart_gap_min == 0 || self.uart_gap_min > self.uart_gap_max {
            return Err(format!(
                "uart_gap_min ({}) must be at least 1 and at most uart_gap_max ({})",
                self.uart_gap_min, self.uart_gap_max
            ));
        }
        if self.dma_burst_gap == 0 {
            return Err("dma_burst_gap must be at least 1".into());
        }
        Ok(())
    }
}

/// One DMA burst as it landed in RAM.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DmaBurst {
    pub cycle: u64,
    pub addr: u32,
    pub data: Vec<u8>,
}

#[derive(Clone, Debug)]
struct DmaJob {
    next_at: u64,
    pos: u32,
}

/// The platform's devices. Reads and writes come through [`IoBus`] during an instruction;
/// [`Devices::advance`] moves them to a new cycle between instructions.
pub struct Devices {
    cfg: SystemConfig,
    rng: ChaCha8Rng,
    now: u64,
    exit: Option<i32>,
    uart_tx: Vec<u8>,
    uart_fifo: VecDeque<u8>,
    uart_ctrl: u32,
    uart_next: u64,
    /// Bytes that arrived at a full FIFO.
    pub uart_lost: u64,
    timer_match: u32,
    timer_fire_at: Option<u64>,
    timer_fired: bool,
    dma_dst: u32,
    dma_len: u32,
    dma: Option<DmaJob>,
    dma_done: bool,
    int_mask: u32,
    /// CCNT values read by the last instruction (drained by the caller).
    pub counter_reads: Vec<u32>,
    /// The trace-start marker retired (cleared by the caller).
    pub trace_start: bool,
    /// DMA bursts written over the run.
    pub bursts: u64,
}

impl Devices {
    pub fn new(cfg: SystemConfig) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
        let first = Self::gap(&mut rng, &cfg);
        Devices {
            cfg,
            rng,
            now: 0,
            exit: None,
            uart_tx: Vec::new(),
            uart_fifo: VecDeque::with_capacity(UART_FIFO),
            uart_ctrl: 0,
            uart_next: first,
            uart_lost: 0,
            timer_match: 0,
            timer_fire_at: None,
            timer_fired: false,
            dma_dst: 0,
            dma_len: 0,
            dma: None,
            dma_done: false,
            int_mask: 0,
            counter_reads: Vec::new(),
            trace_start: false,
            bursts: 0,
        }
    }

    fn gap(rng: &mut ChaCha8Rng, cfg: &SystemConfig) -> u64 {
        // (validate() keeps min <= max; saturate anyway, Devices::new is public.)
        let span = cfg.uart_gap_max.saturating_sub(cfg.uart_gap_min) as u64 + 1;
        cfg.uart_gap_min as u64 + rng.next_u64() % span
    }

    fn below(&mut self, n: u32) -> u64 {
        if n == 0 {
            0
        } else {
            self.rng.next_u64() % n as u64
        }
    }

    /// The exit code, once the program wrote EXIT.
    pub fn exit(&self) -> Option<i32> {
        self.exit
    }

    /// What the program transmitted on the UART.
    pub fn uart_output(&self) -> &[u8] {
        &self.uart_tx
    }

    /// Interrupt source levels (INT_PEND).
    pub fn pending(&self) -> u32 {
        let bit = |on: bool, b: u32| if on { b } else { 0 };
        bit(self.timer_fired, INT_TIMER)
            | bit(!self.uart_fifo.is_empty() && self.uart_ctrl & 1 != 0, INT_UART)
            | bit(self.dma_done, INT_DMA)
    }

    pub fn irq_line(&self) -> bool {
        self.pending() & self.int_mask != 0
    }

    /// Move the devices to cycle `now`: UART arrivals, the timer, DMA bursts (written into
    /// `mem` and returned in order).
    pub fn advance(&mut self, now: u64, mem: &mut Memory) -> Vec<DmaBurst> {
        self.now = self.now.max(now);
        let now = self.now;
        while self.uart_next <= now {
            let byte = b' ' + (self.rng.next_u32() % 95) as u8;
            if self.uart_fifo.len() < UART_FIFO {
                self.uart_fifo.push_back(byte);
            } else {
                self.uart_lost += 1;
            }
            self.uart_next += Self::gap(&mut self.rng, &self.cfg);
        }
        if self.timer_fire_at.is_some_and(|t| t <= now) {
            self.timer_fired = true;
            self.timer_fire_at = None;
        }
        let mut out = Vec::new();
        while let Some(job) = self.dma.as_mut().filter(|j| j.next_at <= now) {
            let n = DMA_BURST.min(self.dma_len - job.pos);
            let addr = self.dma_dst.wrapping_add(job.pos);
            let cycle = job.next_at;
            job.pos += n;
            job.next_at += self.cfg.dma_burst_gap as u64;
            let finished = job.pos >= self.dma_len;
            let mut data = vec![0u8; n as usize];
            self.rng.fill_bytes(&mut data);
            // A burst to memory that is not RAM is lost, as on a bus with no slave there.
            if mem.write_bytes(addr, &data).is_ok() {
                self.bursts += 1;
                out.push(DmaBurst { cycle, addr, data });
            }
            if finished {
                self.dma = None;
                self.dma_done = true;
            }
        }
        out
    }
}

impl IoBus for Devices {
    fn read(&mut self, addr: u32, size: u8) -> Option<u32> {
        if size != 4 || addr & 3 != 0 {
            return None;
        }
        Some(match addr {
            EXIT => 0,
            UART_DATA => self.uart_fifo.pop_front().map_or(0, u32::from),
            UART_STAT => (!self.uart_fifo.is_empty()) as u32 | 2,
            UART_CTRL => self.uart_ctrl,
            TIMER_COUNT => (self.now / TIMER_DIVIDER) as u32,
            TIMER_MATCH => self.timer_match,
            TIMER_STAT => self.timer_fired as u32,
            DMA_DST => self.dma_dst,
            DMA_LEN => self.dma_len,
            DMA_CTRL => self.dma.is_some() as u32,
            DMA_STAT => self.dma_done as u32,
            INT_PEND => self.pending(),
            INT_MASK => self.int_mask,
            _ => return None,
        })
    }

    fn write(&mut self, addr: u32, size: u8, value: u32) -> bool {
        if size != 4 || addr & 3 != 0 {
            return false;
        }
        match addr {
            EXIT => self.exit = Some(value as i32),
            UART_DATA => self.uart_tx.push(value as u8),
            UART_STAT | TIMER_COUNT | INT_PEND => {}
            UART_CTRL => self.uart_ctrl = value & 1,
            TIMER_MATCH => {
                self.timer_match = value;
                let jitter = self.below(self.cfg.timer_jitter);
                self.timer_fire_at = Some(value as u64 * TIMER_DIVIDER + jitter);
            }
            TIMER_STAT => {
                if value & 1 != 0 {
                    self.timer_fired = false;
                }
            }
            DMA_DST => self.dma_dst = value,
            DMA_LEN => self.dma_len = value & 0xFFFC,
            DMA_CTRL => {
                if value & 1 != 0 && self.dma.is_none() && self.dma_len > 0 {
                    let delay = self.below(self.cfg.dma_delay);
                    self.dma = Some(DmaJob { next_at: self.now + delay, pos: 0 });
                }
            }
            DMA_STAT => {
                if value & 1 != 0 {
                    self.dma_done = false;
                }
            }
            INT_MASK => self.int_mask = value & 7,
            a if in_dump_region(a) => {}
            _ => return false,
        }
        true
    }

    fn coproc(&mut self, cp: u32, load: bool, op: CoprocOp, _value: u32) -> Option<u32> {
        let zero = CoprocOp { opc1: 0, crn: 0, crm: 0, opc2: 0 };
        match (cp, load) {
            (14, _) if op == CoprocOp { crn: 1, ..zero } => {
                if load {
                    let v = self.now as u32;
                    self.counter_reads.push(v);
                    Some(v)
                } else {
                    Some(0)
                }
            }
            (7, false) if op == zero => {
                self.trace_start = true;
                Some(0)
            }
            _ => None,
        }
    }
}

/// What happened at an instruction boundary before the next instruction.
#[derive(Clone, Debug, Default)]
pub struct Boundary {
    /// The boundary's name: taken control-flow count and next PC (bit 0 = Thumb).
    pub tbc: u64,
    pub pc: u32,
    pub bursts: Vec<DmaBurst>,
    /// An IRQ was taken here (after the bursts).
    pub irq: bool,
}

/// A system-mode machine: the core, its devices and the taken control-flow count.
pub struct System {
    pub machine: Machine,
    pub devices: Devices,
    /// Taken control-flow count (docs/citcat.md 1.2) since the system was built; a caller
    /// counting from a point sets it to 0 there (the CITCAT recorder does).
    pub tbc: u64,
}

/// Whether a retired instruction counts in `tbc` (docs/citcat.md 1.2): it wrote the PC or
/// raised an exception. (IRQ entries count too; they are not retired instructions.)
#[inline]
pub fn changes_control(ev: &RetireEvent) -> bool {
    ev.taken || ev.exception
}

/// Empty platform memory: the RAM mapped, the device region left to the `IoBus`.
pub fn platform_memory() -> Memory {
    let mut mem = Memory::new();
    mem.map_region(RAM_BASE, RAM_SIZE as u64);
    mem
}

/// A core on the platform: exceptions through the vectors, no semihosting, memory accesses
/// logged (the bus monitor and the device bus need them). Registers are the caller's.
pub fn platform_machine(mem: Memory) -> Machine {
    let mut m = Machine::new(mem, Semihost::new());
    m.policy = ExceptionPolicy::Vector;
    m.semihosting = false;
    m.log_accesses = true;
    m
}

/// Counts control-flow changes on the way to the caller's hook.
struct Counting<'h, H: ?Sized> {
    inner: &'h mut H,
    changes: u64,
}

impl<H: RetireHook + ?Sized> RetireHook for Counting<'_, H> {
    #[inline]
    fn retire(&mut self, ev: &RetireEvent, accesses: &[MemAccess]) {
        self.changes += changes_control(ev) as u64;
        self.inner.retire(ev, accesses);
    }
}

impl System {
    /// The platform with `elf` loaded into RAM and the core at reset, timed by `timing`.
    pub fn for_elf(elf: &ElfImage, cfg: SystemConfig, timing: TimingConfig) -> Result<System, String> {
        cfg.validate()?;
        let mut mem = platform_memory();
        for s in elf.memory().segments() {
            // (RAM starts at 0, so only the end can be outside.)
            if s.end() > (RAM_BASE + RAM_SIZE) as u64 {
                return Err(format!(
                    "ELF segment {:#x}..{:#x} lies outside the system platform's RAM ({:#x}..{:#x})",
                    s.base(),
                    s.end(),
                    RAM_BASE,
                    RAM_BASE + RAM_SIZE
                ));
            }
        }
        mem.load_image(elf.memory()).map_err(|f| format!("loading the ELF: address {:#010x} is not RAM", f.addr))?;
        let mut m = platform_machine(mem);
        m.cpu.set_mode(Mode::Supervisor);
        m.cpu.irq_disabled = true;
        m.cpu.fiq_disabled = true;
        m.cpu.thumb = elf.entry() & 1 == 1;
        m.cpu.r[15] = elf.entry() & !1;
        m.enable_timing(timing).map_err(|e: ConfigError| e.to_string())?;
        if let Some(t) = m.timing_mut() {
            t.set_uncached_region(DEV_BASE, DEV_SIZE);
        }
        Ok(System { machine: m, devices: Devices::new(cfg), tbc: 0 })
    }

    /// The current cycle: the retire cycle of the last instruction.
    pub fn now(&self) -> u64 {
        self.machine.timing().map_or(self.machine.retired, |t| t.last_retire_cycle())
    }

    /// The next boundary's PC with the Thumb bit.
    pub fn pc(&self) -> u32 {
        self.machine.cpu.r[15] | self.machine.cpu.thumb as u32
    }

    /// Advance the devices to now and take a pending, unmasked IRQ.
    pub fn boundary(&mut self) -> Boundary {
        let now = self.now();
        let (tbc, pc) = (self.tbc, self.pc());
        let bursts = self.devices.advance(now, &mut self.machine.mem);
        let irq = self.devices.irq_line() && !self.machine.cpu.irq_disabled;
        if irq {
            self.machine.take_irq();
            self.tbc += 1;
        }
        Boundary { tbc, pc, bursts, irq }
    }

    /// Execute one instruction; `Exited` once the program wrote EXIT.
    pub fn step<H: RetireHook + ?Sized>(&mut self, hook: &mut H) -> Result<StepOutcome, SimError> {
        let mut counting = Counting { inner: hook, changes: 0 };
        let out = self.machine.step_with_io(&mut counting, &mut self.devices)?;
        self.tbc += counting.changes;
        Ok(match self.devices.exit() {
            Some(code) => StepOutcome::Exited(code),
            None => out,
        })
    }

    /// Run to EXIT or `max_insns`, boundary then step (no trace).
    pub fn run(&mut self, max_insns: u64) -> Result<Option<i32>, SimError> {
        while self.machine.retired < max_insns {
            self.boundary();
            if let StepOutcome::Exited(code) = self.step(&mut crate::machine::NoHook)? {
                return Ok(Some(code));
            }
        }
        Ok(None)
    }
}

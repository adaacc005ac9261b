//! System mode (docs/citcat.md section 1): the bare-metal programs run to EXIT with their
//! devices, interrupts land where the cycle model puts them, and the devices' edge cases.

use std::path::PathBuf;

use streamtrace_isa::ElfImage;
use streamtrace_sim::system::{self, Devices, System, SystemConfig};
use streamtrace_sim::{CoprocOp, IoBus, Memory, NoHook, TimingConfig};

fn elf(name: &str) -> ElfImage {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testbenches/programs/system/bin").join(format!("{name}.elf"));
    ElfImage::open(p).unwrap()
}

fn run(name: &str, cfg: SystemConfig) -> (System, u64) {
    let mut s = System::for_elf(&elf(name), cfg, TimingConfig::default()).unwrap();
    let mut irqs = 0;
    loop {
        assert!(s.machine.retired < 5_000_000, "{name} did not exit");
        irqs += s.boundary().irq as u64;
        if let streamtrace_sim::StepOutcome::Exited(code) = s.step(&mut NoHook).unwrap() {
            assert_eq!(code, 0, "{name}: {}", String::from_utf8_lossy(s.devices.uart_output()));
            return (s, irqs);
        }
    }
}

#[test]
fn programs_run_to_exit_with_interrupts() {
    for name in ["sys_timer", "sys_io", "sys_io_thumb"] {
        let (s, irqs) = run(name, SystemConfig::default());
        let out = String::from_utf8_lossy(s.devices.uart_output()).into_owned();
        eprintln!("{name}: {} instructions, {} cycles, {irqs} IRQs, tbc {}: {out}", s.machine.retired, s.now(), s.tbc);
        assert!(out.starts_with(name.trim_end_matches("_thumb")), "{out}");
        assert!(irqs >= 6, "{name}: only {irqs} interrupts");
    }
}

#[test]
fn the_seed_moves_interrupts() {
    let a = run("sys_timer", SystemConfig::default());
    let b = run("sys_timer", SystemConfig { seed: 2, ..SystemConfig::default() });
    let c = run("sys_timer", SystemConfig::default());
    assert_eq!(a.0.machine.retired, c.0.machine.retired, "same seed, same run");
    assert_ne!(a.0.machine.retired, b.0.machine.retired, "another seed should change the run");
}

#[test]
fn device_registers_need_aligned_words() {
    let mut d = Devices::new(SystemConfig::default());
    assert_eq!(d.read(system::UART_STAT, 4), Some(2));
    assert_eq!(d.read(system::UART_STAT, 2), None);
    assert_eq!(d.read(system::UART_STAT + 1, 4), None);
    assert_eq!(d.read(system::DEV_BASE + 0x10, 4), None);
    assert!(!d.write(system::DEV_BASE + 0x10, 4, 0));
    assert!(d.write(system::EXIT, 4, 7));
    assert_eq!(d.exit(), Some(7));
    let op = CoprocOp { opc1: 0, crn: 1, crm: 0, opc2: 0 };
    assert_eq!(d.coproc(14, true, op, 0), Some(0));
    assert_eq!(d.coproc(14, true, CoprocOp { crn: 2, ..op }, 0), None);
    assert_eq!(d.coproc(7, false, CoprocOp { crn: 0, ..op }, 0), Some(0));
    assert!(d.trace_start);
}

#[test]
fn the_register_list_is_what_the_devices_answer() {
    // A replay without devices accepts exactly `is_register_access`: it must agree with the
    // devices on every address and size of the device region's first pages.
    let pages = (system::DEV_BASE..system::DEV_BASE + 0x5000).chain(system::REG_DUMP - 0x10..system::REG_DUMP + 0x100);
    for addr in pages.step_by(2) {
        for size in [1u8, 2, 4] {
            let mut d = Devices::new(SystemConfig::default());
            let read = d.read(addr, size).is_some();
            let write = d.write(addr, size, 0);
            assert_eq!(read, system::is_register_access(addr, size, false), "load {addr:#x} size {size}");
            assert_eq!(write, system::is_register_access(addr, size, true), "store {addr:#x} size {size}");
        }
    }
    // The dump region takes exactly its 47 words.
    let mut d = Devices::new(SystemConfig::default());
    assert!(d.write(system::REG_DUMP + 46 * 4, 4, 1));
    assert!(!d.write(system::REG_DUMP + 47 * 4, 4, 1));
    assert_eq!(d.read(system::REG_DUMP, 4), None);
}

#[test]
fn dma_bursts_land_in_order_and_raise_done() {
    let mut d = Devices::new(SystemConfig { dma_delay: 0, dma_burst_gap: 10, ..SystemConfig::default() });
    let mut mem = Memory::new();
    mem.map_region(0, 0x1000);
    d.write(system::DMA_DST, 4, 0x100);
    d.write(system::DMA_LEN, 4, 40);
    d.write(system::DMA_CTRL, 4, 1);
    assert_eq!(d.read(system::DMA_CTRL, 4), Some(1));
    let b = d.advance(15, &mut mem);
    assert_eq!(b.iter().map(|b| (b.addr, b.data.len(), b.cycle)).collect::<Vec<_>>(), [(0x100, 16, 0), (0x110, 16, 10)]);
    assert_eq!(mem.read_bytes(0x110, 16).unwrap(), b[1].data);
    assert_eq!(d.read(system::DMA_STAT, 4), Some(0));
    let b = d.advance(20, &mut mem);
    assert_eq!(b.len(), 1);
    assert_eq!(b[0].data.len(), 8);
    assert_eq!(d.read(system::DMA_STAT, 4), Some(1));
    d.write(system::INT_MASK, 4, system::INT_DMA);
    assert!(d.irq_line());
    d.write(system::DMA_STAT, 4, 1);
    assert!(!d.irq_line());
}

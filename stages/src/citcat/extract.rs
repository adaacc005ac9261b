//! IMS and AES from a CAT alone (docs/citcat.md 4).

use super::format::{
    Aes, Cat, DmaEvent, Ims, IntEvent, IoEntry, COUNTER, DFILL, DMA_WRITE, IFILL, IRQ_VECTOR, MAGIC, MAGIC_BEGIN, MAGIC_REGISTER,
    MONITOR, MON_DMA, MON_END, MON_IRQ, UNC_READ, UNC_WRITE, WRITE,
};
use super::CitcatError;
use crate::hash::FastMap;
use streamtrace_sim::DUMP_REGISTERS;

/// Byte state of the first-touch image, per 4 KiB page: value, known, written.
struct Page {
    value: [u8; 4096],
    known: [bool; 4096],
    written: [bool; 4096],
}

/// The IMS and AES of a recorded CAT.
pub fn extract(cat: &Cat) -> Result<(Ims, Aes), CitcatError> {
    let bad = |index: usize, what: String| CitcatError::Cat { index, what };
    let recs = &cat.records;
    // The trace start: BEGIN, then the registers in dump order.
    if !recs.first().is_some_and(|r| r.kind == MAGIC && r.addr == MAGIC_BEGIN) {
        return Err(bad(0, "the CAT does not start with MAGIC BEGIN".into()));
    }
    let mut registers = [0u64; DUMP_REGISTERS];
    for (i, reg) in registers.iter_mut().enumerate() {
        let r = recs.get(1 + i).ok_or_else(|| bad(1 + i, format!("truncated in the register dump (register {i})")))?;
        let want = if i == DUMP_REGISTERS - 1 { 8 } else { 4 };
        if r.kind != MAGIC || r.addr != MAGIC_REGISTER + i as u32 || r.data.len() != want {
            return Err(bad(1 + i, format!("expected MAGIC register {i} of {want} bytes, found {r}")));
        }
        *reg = r.value();
    }

    let mut pages: FastMap<u32, Box<Page>> = FastMap::default();
    fn page(pages: &mut FastMap<u32, Box<Page>>, addr: u32) -> &mut Page {
        pages.entry(addr >> 12).or_insert_with(|| Box::new(Page { value: [0; 4096], known: [false; 4096], written: [false; 4096] }))
    }
    let mut aes = Aes::default();
    let mut dma_key: Option<(u64, u32)> = None;
    let mut end = None;
    for (index, r) in recs.iter().enumerate().skip(1 + DUMP_REGISTERS) {
        if end.is_some() {
            return Err(bad(index, format!("{r} after the END sample")));
        }
        if r.kind != DMA_WRITE {
            dma_key = None;
        }
        match r.kind {
            IFILL | DFILL => {
                for (i, &b) in r.data.iter().enumerate() {
                    let a = r.addr.wrapping_add(i as u32);
                    let p = page(&mut pages, a);
                    let o = (a & 0xFFF) as usize;
                    if !p.known[o] && !p.written[o] {
                        p.known[o] = true;
                        p.value[o] = b;
                    }
                }
            }
            WRITE | DMA_WRITE => {
                for i in 0..r.data.len() as u32 {
                    let a = r.addr.wrapping_add(i);
                    page(&mut pages, a).written[(a & 0xFFF) as usize] = true;
                }
                if r.kind == DMA_WRITE {
                    let (tbc, pc) = dma_key.ok_or_else(|| bad(index, "DMA_WRITE without a MONITOR DMA sample before it".into()))?;
                    aes.dma.push(DmaEvent { tbc, pc, addr: r.addr, data: r.data.clone() });
                }
            }
            UNC_READ | UNC_WRITE => {
                aes.ioq.push(IoEntry { addr: r.addr, size: r.data.len() as u8, write: r.kind == UNC_WRITE, value: r.value() as u32 });
            }
            COUNTER => aes.cnt.push(r.value() as u32),
            MONITOR => {
                let key = (r.value(), r.addr);
                match r.reason() {
                    MON_IRQ => {
                        if aes.ints.last().is_some_and(|p| p.tbc >= key.0) {
                            return Err(bad(index, format!("IRQ sample at tbc {} does not follow the previous one", key.0)));
                        }
                        aes.ints.push(IntEvent { tbc: key.0, pc: key.1, vector: IRQ_VECTOR });
                    }
                    MON_DMA => dma_key = Some(key),
                    MON_END => end = Some(key),
                    other => return Err(bad(index, format!("MONITOR with unknown reason {other}"))),
                }
            }
            MAGIC => return Err(bad(index, "a second trace start".into())),
            other => return Err(bad(index, format!("unknown record kind {other}"))),
        }
    }
    let (end_tbc, end_pc) = end.ok_or_else(|| bad(recs.len(), "no END sample: the recording was cut short".into()))?;
    aes.end_tbc = end_tbc;
    aes.end_pc = end_pc;

    // The known bytes, as maximal runs in address order.
    let mut keys: Vec<u32> = pages.keys().copied().collect();
    keys.sort_unstable();
    let mut runs: Vec<(u32, Vec<u8>)> = Vec::new();
    for k in keys {
        let p = &pages[&k];
        for o in 0..4096u32 {
            if !p.known[o as usize] {
                continue;
            }
            let a = (k << 12) | o;
            match runs.last_mut() {
                Some((start, bytes)) if *start as u64 + bytes.len() as u64 == a as u64 => bytes.push(p.value[o as usize]),
                _ => runs.push((a, vec![p.value[o as usize]])),
            }
        }
    }
    Ok((Ims { registers, runs }, aes))
}

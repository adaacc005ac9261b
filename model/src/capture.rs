//! Captured stream descriptors with retire-cycle stamps: what a sweep replays instead of
//! re-simulating a program (docs/sweeps.md, "Capture files").
//!
//! Layout: the magic `STCAP001`, then one record per descriptor, then a JSON trailer
//! ([`CaptureInfo`]), its length as a little-endian u32, and the magic `STCAPEND`. The
//! trailer comes last so a capture streams to disk. A record is three LEB128 varints:
//! the end cycle minus the previous end cycle (the first: minus `first_cycle`), the start
//! address minus the previous start address (zigzag, wrapping 32-bit), and
//! `SL << 4 | class << 1 | exception`.

use std::io::{self, Write};

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::detector::StreamDescriptor;
use crate::event::BranchClass;

pub const CAPTURE_MAGIC: &[u8; 8] = b"STCAP001";
pub const CAPTURE_END: &[u8; 8] = b"STCAPEND";

/// What was captured, how, and totals (the trailer).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaptureInfo {
    pub program: String,
    pub cmdline: String,
    /// The stream detector's maximum stream length the descriptors were cut with.
    pub max_sl: u32,
    /// Where the cycles came from: `ipc1` (instruction index) or the core timing model.
    pub timing: String,
    pub instructions: u64,
    pub descriptors: u64,
    /// Retire cycle of the first instruction.
    pub first_cycle: u64,
    /// Retire cycle of the last instruction.
    pub last_cycle: u64,
    pub exit_code: Option<i32>,
    /// Caller-defined key (e.g. a hash of the ELF and arguments) to decide reuse.
    pub key: String,
}

/// One captured descriptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimedDescriptor {
    pub descriptor: StreamDescriptor,
    /// Retire cycle of the stream's last instruction.
    pub end_cycle: u64,
}

#[derive(Debug, Error)]
pub enum CaptureError {
    #[error("{0}")]
    Io(#[from] io::Error),
    #[error("not a streamtrace capture (bad magic at byte {offset})")]
    Magic { offset: u64 },
    #[error("capture trailer: {0}")]
    Trailer(String),
    #[error("capture record {index} at byte {offset}: {reason}")]
    Record { index: u64, offset: u64, reason: &'static str },
    #[error("capture holds {got} records but its trailer says {expected}")]
    Count { got: u64, expected: u64 },
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn zigzag(v: i32) -> u32 {
    ((v << 1) ^ (v >> 31)) as u32
}

fn unzigzag(v: u32) -> i32 {
    (v >> 1) as i32 ^ -((v & 1) as i32)
}

/// Streams descriptors to `W`; call [`CaptureWriter::finish`] to write the trailer.
pub struct CaptureWriter<W: Write> {
    out: W,
    buf: Vec<u8>,
    prev_cycle: Option<u64>,
    prev_sa: u32,
    count: u64,
}

impl<W: Write> CaptureWriter<W> {
    pub fn new(mut out: W) -> io::Result<Self> {
        out.write_all(CAPTURE_MAGIC)?;
        Ok(CaptureWriter { out, buf: Vec::with_capacity(1 << 16), prev_cycle: None, prev_sa: 0, count: 0 })
    }

    /// `first_cycle` is the retire cycle of the capture's first instruction.
    pub fn push(&mut self, d: &StreamDescriptor, end_cycle: u64, first_cycle: u64) -> io::Result<()> {
        let prev = self.prev_cycle.unwrap_or(first_cycle);
        debug_assert!(end_cycle >= prev);
        put_varint(&mut self.buf, end_cycle - prev);
        put_varint(&mut self.buf, zigzag(d.sa.wrapping_sub(self.prev_sa) as i32) as u64);
        put_varint(&mut self.buf, (d.sl as u64) << 4 | (d.last_class as u64) << 1 | d.exception as u64);
        self.prev_cycle = Some(end_cycle);
        self.prev_sa = d.sa;
        self.count += 1;
        if self.buf.len() >= 1 << 16 {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn finish(mut self, info: &CaptureInfo) -> io::Result<W> {
        self.out.write_all(&self.buf)?;
        let json = serde_json::to_vec(info).map_err(io::Error::other)?;
        self.out.write_all(&json)?;
        self.out.write_all(&(json.len() as u32).to_le_bytes())?;
        self.out.write_all(CAPTURE_END)?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// A whole capture, decoded.
#[derive(Clone, Debug)]
pub struct Capture {
    pub info: CaptureInfo,
    pub descriptors: Vec<TimedDescriptor>,
}

impl Capture {
    /// Only the trailer (cheap: decides whether a cached capture can be reused).
    pub fn read_info(bytes: &[u8]) -> Result<(CaptureInfo, usize), CaptureError> {
        if bytes.len() < 20 || &bytes[..8] != CAPTURE_MAGIC {
            return Err(CaptureError::Magic { offset: 0 });
        }
        let end = bytes.len() - 8;
        if &bytes[end..] != CAPTURE_END {
            return Err(CaptureError::Magic { offset: end as u64 });
        }
        let len = u32::from_le_bytes(bytes[end - 4..end].try_into().expect("4 bytes")) as usize;
        let json_start = (end - 4)
            .checked_sub(len)
            .filter(|&s| s >= 8)
            .ok_or_else(|| CaptureError::Trailer(format!("length {len} exceeds the file")))?;
        let info: CaptureInfo =
            serde_json::from_slice(&bytes[json_start..end - 4]).map_err(|e| CaptureError::Trailer(e.to_string()))?;
        Ok((info, json_start))
    }

    pub fn parse(bytes: &[u8]) -> Result<Capture, CaptureError> {
        let (info, records_end) = Self::read_info(bytes)?;
        let mut descriptors = Vec::with_capacity(info.descriptors.min(1 << 28) as usize);
        let mut pos = 8usize;
        let mut cycle = info.first_cycle;
        let mut sa = 0u32;
        let mut index = 0u64;
        while pos < records_end {
            let offset = pos as u64;
            let bad = |reason| CaptureError::Record { index, offset, reason };
            let mut next = || -> Result<u64, CaptureError> {
                let mut v = 0u64;
                for shift in (0..64).step_by(7) {
                    let b = *bytes[..records_end].get(pos).ok_or(bad("truncated varint"))?;
                    pos += 1;
                    v |= ((b & 0x7f) as u64) << shift;
                    if b & 0x80 == 0 {
                        return Ok(v);
                    }
                }
                Err(bad("varint longer than 64 bits"))
            };
            let dc = next()?;
            let dsa = next()?;
            let packed = next()?;
            cycle = cycle.checked_add(dc).ok_or(bad("cycle overflows"))?;
            let dsa = u32::try_from(dsa).map_err(|_| bad("address delta out of range"))?;
            sa = sa.wrapping_add(unzigzag(dsa) as u32);
            let sl = u32::try_from(packed >> 4).map_err(|_| bad("stream length out of range"))?;
            if sl == 0 {
                return Err(bad("stream length 0"));
            }
            let class = *BranchClass::ALL.get((packed >> 1 & 7) as usize).ok_or(bad("unknown branch class"))?;
            let exception = packed & 1 == 1;
            descriptors.push(TimedDescriptor {
                descriptor: StreamDescriptor { sa, sl, last_class: class, exception },
                end_cycle: cycle,
            });
            index += 1;
        }
        if index != info.descriptors {
            return Err(CaptureError::Count { got: index, expected: info.descriptors });
        }
        Ok(Capture { info, descriptors })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> (Vec<TimedDescriptor>, CaptureInfo) {
        let classes = BranchClass::ALL;
        let ds: Vec<TimedDescriptor> = (0..500u32)
            .map(|i| TimedDescriptor {
                descriptor: StreamDescriptor {
                    sa: 0x8000u32.wrapping_add(i.wrapping_mul(0x9E37_79B9)) | (i & 1),
                    sl: 1 + i % 255,
                    last_class: classes[i as usize % 6],
                    exception: i % 7 == 0,
                },
                end_cycle: 10 + 3 * i as u64 + (i as u64 % 5) * 100,
            })
            .scan(0u64, |last, mut t| {
                t.end_cycle = t.end_cycle.max(*last + 1);
                *last = t.end_cycle;
                Some(t)
            })
            .collect();
        let info = CaptureInfo {
            program: "p".into(),
            max_sl: 255,
            timing: "ipc1".into(),
            descriptors: ds.len() as u64,
            first_cycle: 3,
            ..Default::default()
        };
        (ds, info)
    }

    fn write(ds: &[TimedDescriptor], info: &CaptureInfo) -> Vec<u8> {
        let mut w = CaptureWriter::new(Vec::new()).unwrap();
        for t in ds {
            w.push(&t.descriptor, t.end_cycle, info.first_cycle).unwrap();
        }
        w.finish(info).unwrap()
    }

    #[test]
    fn round_trip() {
        let (ds, info) = sample();
        let bytes = write(&ds, &info);
        let c = Capture::parse(&bytes).unwrap();
        assert_eq!(c.info, info);
        assert_eq!(c.descriptors, ds);
    }

    #[test]
    fn corrupt_captures_are_errors_not_panics() {
        let (ds, info) = sample();
        let bytes = write(&ds, &info);
        assert!(matches!(Capture::parse(&bytes[..bytes.len() - 1]), Err(CaptureError::Magic { .. })));
        assert!(matches!(Capture::parse(b"nonsense"), Err(CaptureError::Magic { offset: 0 })));
        // Every single-byte corruption and every truncation of the records either parses
        // (to something else) or is reported; none panics.
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x5a;
            let _ = Capture::parse(&b);
        }
        let mut short = bytes[..100].to_vec();
        short.extend_from_slice(&bytes[bytes.len() - 8 - 4 - serde_json::to_vec(&info).unwrap().len()..]);
        let e = Capture::parse(&short).unwrap_err().to_string();
        assert!(e.contains("record") || e.contains("records"), "{e}");
    }
}

//! Constants and field codecs of docs/trace-format.md section 6, shared by the encoder and
//! the decoder.

use crate::bits::{BitReader, BitWriter, OutOfBits};

/// Escape types (section 6.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum EscapeType {
    End = 0b00,
    Sync = 0b01,
    Exception = 0b10,
    Overflow = 0b11,
}

impl EscapeType {
    pub fn from_bits(v: u64) -> EscapeType {
        match v & 3 {
            0 => EscapeType::End,
            1 => EscapeType::Sync,
            2 => EscapeType::Exception,
            _ => EscapeType::Overflow,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            EscapeType::End => "END",
            EscapeType::Sync => "SYNC",
            EscapeType::Exception => "EXCEPTION",
            EscapeType::Overflow => "OVERFLOW",
        }
    }
}

pub const ESCAPE_TYPE_BITS: u32 = 2;
pub const OVERFLOW_COUNT_BITS: u32 = 32;

/// The sync marker: 15 bytes 0x00 then 0x80, byte aligned.
pub const SYNC_MARKER: [u8; 16] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80];

/// Bits of one NEXS group: 2-bit header + 6 data bits.
pub const NEXS_GROUP_BITS: u32 = 8;
const NEXS_LAST: u64 = 0b01;
const NEXS_MORE: u64 = 0b00;

/// Number of 6-bit groups NEXS sends for a difference `d` (at least one).
#[inline]
pub fn nexs_groups(d: u32) -> u32 {
    let significant = 32 - d.leading_zeros();
    significant.div_ceil(6).max(1)
}

/// Write `d` as NEXS groups, least significant group first.
pub fn write_nexs_diff(w: &mut BitWriter, d: u32) -> u32 {
    let n = nexs_groups(d);
    for i in 0..n {
        let header = if i + 1 == n { NEXS_LAST } else { NEXS_MORE };
        let data = (d >> (6 * i)) & 0x3F;
        w.put((header << 6) | data as u64, NEXS_GROUP_BITS);
    }
    n * NEXS_GROUP_BITS
}

/// Why a NEXS difference could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NexsError {
    Truncated(OutOfBits),
    /// A header other than 00/01, or more than six groups; offset of the group.
    BadGroup { offset: u64 },
}

/// Read a NEXS difference written by [`write_nexs_diff`].
pub fn read_nexs_diff(r: &mut BitReader<'_>) -> Result<u32, NexsError> {
    let mut d: u64 = 0;
    for i in 0..6 {
        let offset = r.position();
        let g = r.get(NEXS_GROUP_BITS).map_err(NexsError::Truncated)?;
        let header = g >> 6;
        d |= (g & 0x3F) << (6 * i);
        match header {
            NEXS_LAST => {
                if d > u32::MAX as u64 {
                    return Err(NexsError::BadGroup { offset });
                }
                return Ok(d as u32);
            }
            NEXS_MORE if i < 5 => {}
            _ => return Err(NexsError::BadGroup { offset }),
        }
    }
    unreachable!("loop returns on the sixth group")
}

/// Search `bytes` from byte `from` for the next sync marker; returns the byte offset just
/// after it (where decoding resumes).
pub fn find_sync_marker(bytes: &[u8], from: usize) -> Option<usize> {
    let zeros = SYNC_MARKER.len() - 1;
    let mut run = 0usize;
    for (i, &b) in bytes.iter().enumerate().skip(from) {
        if b == 0 {
            run += 1;
        } else {
            if b == 0x80 && run >= zeros {
                return Some(i + 1);
            }
            run = 0;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nexs_group_counts() {
        assert_eq!(nexs_groups(0), 1);
        assert_eq!(nexs_groups(0x3F), 1);
        assert_eq!(nexs_groups(0x40), 2);
        assert_eq!(nexs_groups(0x3FFFFFFF), 5);
        assert_eq!(nexs_groups(0x40000000), 6);
        assert_eq!(nexs_groups(u32::MAX), 6);
    }

    #[test]
    fn nexs_roundtrip_and_bits() {
        for d in [0u32, 1, 0x3F, 0x40, 0x1234_5678, 0x8000_0000, u32::MAX] {
            let mut w = BitWriter::new();
            let n = write_nexs_diff(&mut w, d);
            assert_eq!(n as u64, w.bit_len());
            let len = w.bit_len();
            let bytes = w.into_bytes();
            let mut r = BitReader::with_bit_len(&bytes, len);
            assert_eq!(read_nexs_diff(&mut r), Ok(d));
        }
        // 0x41 = groups 000001, 000001: "00 000001" then "01 000001".
        let mut w = BitWriter::new();
        write_nexs_diff(&mut w, 0x41);
        assert_eq!(w.into_bytes(), vec![0b0000_0001, 0b0100_0001]);
    }

    #[test]
    fn nexs_rejects_bad_headers() {
        let bytes = [0b1100_0000u8];
        assert_eq!(read_nexs_diff(&mut BitReader::new(&bytes)), Err(NexsError::BadGroup { offset: 0 }));
        let six_more = [0u8; 6];
        assert_eq!(read_nexs_diff(&mut BitReader::new(&six_more)), Err(NexsError::BadGroup { offset: 40 }));
        // Sixth group with data bits above bit 31.
        let mut w = BitWriter::new();
        for _ in 0..5 {
            w.put(0, 8);
        }
        w.put(0b01_000100, 8);
        let b = w.into_bytes();
        assert_eq!(read_nexs_diff(&mut BitReader::new(&b)), Err(NexsError::BadGroup { offset: 40 }));
    }

    #[test]
    fn finds_marker() {
        let mut data = vec![0x12, 0x00, 0x80];
        data.extend_from_slice(&SYNC_MARKER);
        data.push(0xAB);
        assert_eq!(find_sync_marker(&data, 0), Some(data.len() - 1));
        assert_eq!(find_sync_marker(&data, data.len() - 1), None);
        let mut short = vec![0u8; 14];
        short.push(0x80);
        assert_eq!(find_sync_marker(&short, 0), None);
    }
}

//! Byte-level reading and writing shared by the binary files of the stages (WET streams and
//! files, CITCAT files): LEB128 varints, little-endian values, and a reader whose errors say
//! what was being read (the callers add the byte offset).

pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

pub fn varint_len(mut v: u64) -> usize {
    let mut n = 1;
    while v >= 0x80 {
        v >>= 7;
        n += 1;
    }
    n
}

pub struct ByteReader<'a> {
    pub bytes: &'a [u8],
    pub pos: usize,
}

impl<'a> ByteReader<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        ByteReader { bytes, pos: 0 }
    }

    pub fn left(&self) -> usize {
        self.bytes.len() - self.pos
    }

    pub fn u8(&mut self, what: &str) -> Result<u8, String> {
        let b = *self.bytes.get(self.pos).ok_or_else(|| format!("truncated in the {what}"))?;
        self.pos += 1;
        Ok(b)
    }

    pub fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], String> {
        if self.left() < n {
            return Err(format!("truncated in the {what}"));
        }
        let s = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// A little-endian value of `w` bytes (1 to 8).
    pub fn value(&mut self, w: usize, what: &str) -> Result<u64, String> {
        let b = self.take(w, what)?;
        let mut a = [0u8; 8];
        a[..w].copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    pub fn varint(&mut self, what: &str) -> Result<u64, String> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.u8(what)?;
            if shift == 63 && b > 1 {
                break;
            }
            v |= ((b & 0x7F) as u64) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(format!("{what}: varint longer than 64 bits"))
    }

    /// A count of items that each take at least one byte: bounded by what is left.
    pub fn count(&mut self, what: &str) -> Result<usize, String> {
        let n = self.varint(what)?;
        let left = self.left() as u64;
        if n > left {
            return Err(format!("{what} {n} exceeds the {left} bytes left"));
        }
        Ok(n as usize)
    }

    /// An index below `limit`.
    pub fn index(&mut self, what: &str, limit: usize) -> Result<u32, String> {
        let v = self.varint(what)?;
        if v >= limit as u64 {
            return Err(format!("{what} {v} out of range (there are {limit})"));
        }
        Ok(v as u32)
    }
}

/// Bytes of the trailer that closes a `.wet` or CITCAT file (docs/wet.md 7.1, docs/citcat.md
/// 8): a 4-byte tag, a u64 count and the CRC-32C of every byte before the CRC, little-endian.
pub const TRAILER_LEN: usize = 16;

/// The trailer for a file whose bytes so far have the running CRC `crc` (streaming writers).
pub fn trailer(mut crc: streamtrace_model::checksum::Crc32c, tag: [u8; 4], count: u64) -> [u8; TRAILER_LEN] {
    let mut t = [0u8; TRAILER_LEN];
    t[..4].copy_from_slice(&tag);
    t[4..12].copy_from_slice(&count.to_le_bytes());
    crc.update(&t[..12]);
    t[12..].copy_from_slice(&crc.value().to_le_bytes());
    t
}

/// Appends the trailer that closes the file in `out`.
pub fn put_trailer(out: &mut Vec<u8>, tag: [u8; 4], count: u64) {
    let mut crc = streamtrace_model::checksum::Crc32c::new();
    crc.update(out);
    out.extend_from_slice(&trailer(crc, tag, count));
}

/// Checks the trailer that closes `bytes` (whose first `header` bytes the caller has
/// checked): returns the body before the trailer and the trailer's count, or the byte
/// offset and what is wrong. The CRC is checked before the caller reads the body, so a
/// damaged file is reported as damaged whatever its damage would parse as.
pub fn split_trailer(bytes: &[u8], tag: [u8; 4], header: usize) -> Result<(&[u8], u64), (usize, String)> {
    let n = bytes.len();
    if n < header + TRAILER_LEN || bytes[n - TRAILER_LEN..n - 12] != tag {
        let tag = String::from_utf8_lossy(&tag).into_owned();
        return Err((n, format!("no {tag} trailer at the end: the file is cut short, was not finished, or has bytes after its trailer")));
    }
    let stored = u32::from_le_bytes(bytes[n - 4..].try_into().expect("4 bytes"));
    let crc = streamtrace_model::checksum::crc32c(&bytes[..n - 4]);
    if crc != stored {
        return Err((n - 4, format!("file CRC {stored:08x} does not match the file ({crc:08x}): the file is damaged")));
    }
    let count = u64::from_le_bytes(bytes[n - 12..n - 4].try_into().expect("8 bytes"));
    Ok((&bytes[..n - TRAILER_LEN], count))
}

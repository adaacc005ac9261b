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

//! Last value starting address register (docs/trace-format.md section 5.3).

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LastValueStartAddress {
    value: u32,
    u: u32,
    /// `32 - u`, which every prediction and update shifts by (kept, not subtracted each time).
    shift: u32,
}

impl LastValueStartAddress {
    /// A `u`-bit register predicting A[31:32-u]; 1 <= u <= 31.
    pub fn new(u: u32) -> Self {
        assert!((1..=31).contains(&u));
        LastValueStartAddress { value: 0, u, shift: 32 - u }
    }

    pub fn reset(&mut self) {
        self.value = 0;
    }

    #[inline]
    pub fn upper(&self, a: u32) -> u32 {
        a >> self.shift
    }

    #[inline]
    pub fn matches(&self, a: u32) -> bool {
        self.upper(a) == self.value
    }

    #[inline]
    pub fn update(&mut self, a: u32) {
        self.value = self.upper(a);
    }

    /// Rebuild an address from the register and the lower 32-u bits.
    #[inline]
    pub fn combine(&self, lower: u32) -> u32 {
        (self.value << self.shift) | (lower & (u32::MAX >> self.u))
    }

    pub fn width(&self) -> u32 {
        self.u
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predicts_upper_bits() {
        let mut r = LastValueStartAddress::new(12);
        assert!(r.matches(0x000F_FFFC));
        assert!(!r.matches(0x0010_0000));
        r.update(0x0200_01f4);
        assert_eq!(r.upper(0x0200_01f4), 0x020);
        assert!(r.matches(0x020F_0000));
        assert!(!r.matches(0x0210_0000));
        assert_eq!(r.combine(0x000_01f4), 0x0200_01f4);
        assert_eq!(r.combine(0xFFFF_FFFF), 0x020F_FFFF, "bits above 32-u of the lower part are ignored");
        r.reset();
        assert!(r.matches(0x1));
        let mut w = LastValueStartAddress::new(31);
        w.update(0xFFFF_FFFE);
        assert!(w.matches(0xFFFF_FFFF));
        assert!(!w.matches(0x7FFF_FFFF));
    }
}

//! Tier 2: every label stream of a built WET becomes a bidirectional stream
//! (docs/wet.md section 5).

use super::bidir::BiStream;
use super::build::WetGraph;
use super::stream::RawStream;

/// The narrowest of 8, 16, 32 and 64 bits that holds every value.
fn width(s: &RawStream) -> u8 {
    let max = s.values().iter().copied().max().unwrap_or(0);
    match max {
        0..=0xFF => 8,
        0x100..=0xFFFF => 16,
        0x1_0000..=0xFFFF_FFFF => 32,
        _ => 64,
    }
}

impl WetGraph<RawStream> {
    /// Compress every stream with the best of the twelve methods (offline selection).
    pub fn compress(self) -> WetGraph<BiStream> {
        self.map_streams(|s, w| BiStream::compress_best(s.values(), w), width)
    }
}

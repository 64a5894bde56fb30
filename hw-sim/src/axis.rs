//! AXI-Stream beats of Ethernet frames, as the core's 512-bit ports carry them:
//! the frame's first byte in lane 0 (bits 7:0), `tkeep` contiguous from lane 0,
//! `tlast` on the frame's final beat.

/// Bytes per beat of the 512-bit datapath.
pub const BEAT_BYTES: usize = 64;

/// One beat of a frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Beat {
    /// Lane i holds byte i of this beat; lanes past `keep` are don't-care.
    pub data: [u8; BEAT_BYTES],
    /// Bit i set: lane i holds a byte of the frame.
    pub keep: u64,
    pub last: bool,
}

impl Beat {
    /// `data` as the model's port takes it: 32-bit words, word 0 = bits 31:0.
    pub fn words(&self) -> [u32; 16] {
        std::array::from_fn(|i| u32::from_le_bytes(self.data[4 * i..4 * i + 4].try_into().unwrap()))
    }

    /// A beat read back from a port's words.
    pub fn from_words(words: &[u32; 16], keep: u64, last: bool) -> Beat {
        let mut data = [0u8; BEAT_BYTES];
        for (i, w) in words.iter().enumerate() {
            data[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
        }
        Beat { data, keep, last }
    }

    /// The frame bytes this beat carries.
    pub fn bytes(&self) -> &[u8] {
        &self.data[..self.keep.trailing_ones() as usize]
    }
}

/// Splits a frame into beats. `filler` is written into the lanes past the end
/// of the frame, so tests can check nobody reads them. An empty frame is one
/// beat with no byte kept.
pub fn frame_to_beats(frame: &[u8], filler: u8) -> Vec<Beat> {
    let n = frame.len().div_ceil(BEAT_BYTES).max(1);
    (0..n)
        .map(|i| {
            let chunk =
                &frame[(i * BEAT_BYTES).min(frame.len())..((i + 1) * BEAT_BYTES).min(frame.len())];
            let mut data = [filler; BEAT_BYTES];
            data[..chunk.len()].copy_from_slice(chunk);
            let keep = if chunk.len() == BEAT_BYTES {
                u64::MAX
            } else {
                (1u64 << chunk.len()) - 1
            };
            Beat {
                data,
                keep,
                last: i == n - 1,
            }
        })
        .collect()
}

/// Joins beats back into a frame (up to and including the first `last`).
pub fn beats_to_frame(beats: &[Beat]) -> Vec<u8> {
    let mut frame = Vec::new();
    for b in beats {
        frame.extend_from_slice(b.bytes());
        if b.last {
            break;
        }
    }
    frame
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn beats_round_trip_at_every_length_around_beat_boundaries() {
        for len in [1usize, 14, 63, 64, 65, 127, 128, 129, 1514] {
            let frame: Vec<u8> = (0..len).map(|i| i as u8).collect();
            let beats = frame_to_beats(&frame, 0xee);
            assert_eq!(beats.len(), len.div_ceil(64));
            assert!(beats.last().unwrap().last);
            assert_eq!(beats.iter().filter(|b| b.last).count(), 1);
            assert_eq!(beats_to_frame(&beats), frame);
            let b = &beats[0];
            assert_eq!(Beat::from_words(&b.words(), b.keep, b.last), *b);
        }
    }
}

//! A point-to-point link: serialization at the link rate, exactly.
//!
//! DESIGN NOTES
//! - A full frame takes 30.76 cycles at 100 Gb/s; rounding each frame to whole
//!   cycles would lose up to 3% of the link. So a link keeps the time it
//!   becomes free in milli-cycles (4 ps) and frames follow each other back to
//!   back at the exact rate; only the events (done, arrival) land on whole
//!   cycles, rounded up.

use crate::model::Cycles;

/// Ethernet preamble and start-of-frame delimiter.
pub const PREAMBLE_SFD_BYTES: u32 = 8;
/// Frame check sequence.
pub const FCS_BYTES: u32 = 4;
/// Minimum inter-frame gap.
pub const IFG_BYTES: u32 = 12;
/// Smallest Ethernet frame without FCS (shorter frames are padded).
pub const MIN_FRAME_BYTES: u32 = 60;

/// Bytes a frame of `frame_len` bytes (Ethernet header to end of payload,
/// no FCS) occupies on the wire.
pub fn wire_bytes(frame_len: usize) -> u32 {
    (frame_len as u32).max(MIN_FRAME_BYTES) + FCS_BYTES + PREAMBLE_SFD_BYTES + IFG_BYTES
}

/// Milli-cycles per cycle.
const MILLI: u64 = 1000;

/// One direction of a link.
#[derive(Clone, Debug)]
pub struct Link {
    /// Serialization time of one byte, in milli-cycles.
    millicycles_per_byte: f64,
    /// When the last frame started finishes, in milli-cycles.
    free_at_millicycles: u64,
    /// A frame is being serialized (the sender waits for its done event).
    pub busy: bool,
    /// Wire bytes sent so far.
    pub wire_bytes_sent: u64,
    pub frames_sent: u64,
}

impl Link {
    pub fn new(gbps: f64) -> Link {
        // One byte is 8 / gbps ns = 2 / gbps cycles of 4 ns.
        Link {
            millicycles_per_byte: 2.0 * MILLI as f64 / gbps,
            free_at_millicycles: 0,
            busy: false,
            wire_bytes_sent: 0,
            frames_sent: 0,
        }
    }

    /// Starts serializing a frame of `wire_bytes` at `now` (or when the
    /// previous one ends, if later). Returns the cycle its last bit leaves.
    pub fn start(&mut self, now: Cycles, wire_bytes: u32) -> Cycles {
        let now_mc = now * MILLI;
        // A frame started in the cycle the previous one ended (its done event
        // is rounded up to that cycle) follows it back to back.
        let start = if self.free_at_millicycles + MILLI > now_mc {
            self.free_at_millicycles
        } else {
            now_mc
        };
        let done = start + (wire_bytes as f64 * self.millicycles_per_byte).round() as u64;
        self.free_at_millicycles = done;
        self.busy = true;
        self.wire_bytes_sent += wire_bytes as u64;
        self.frames_sent += 1;
        done.div_ceil(MILLI)
    }

    /// Cycles to serialize `wire_bytes` (rounded up).
    pub fn serialization_cycles(&self, wire_bytes: u32) -> Cycles {
        ((wire_bytes as f64 * self.millicycles_per_byte).round() as u64).div_ceil(MILLI)
    }

    /// Wire bytes per cycle at this rate.
    pub fn bytes_per_cycle(&self) -> f64 {
        MILLI as f64 / self.millicycles_per_byte
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn back_to_back_frames_run_at_the_exact_rate() {
        let mut link = Link::new(100.0);
        assert_eq!(wire_bytes(1514), 1538);
        assert_eq!(wire_bytes(20), 84);
        let mut done = 0;
        for _ in 0..1000 {
            done = link.start(done, 1538);
        }
        // 1000 frames of 1538 bytes at 12.5 bytes/ns: 123040 ns = 30760 cycles.
        assert_eq!(done, 30_760);
    }
}

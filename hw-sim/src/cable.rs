//! A point-to-point Ethernet cable between two simulated cards: each direction
//! carries frames in order, serialized at the link rate (with preamble, FCS
//! and inter-frame gap) and delayed by the propagation time. The switch model
//! of `homa-testbench` takes over for more than two cards.

use std::collections::VecDeque;

/// Bytes on the wire per frame beyond its bytes: preamble and SFD (8), FCS
/// (4), inter-frame gap (12).
pub const FRAMING_BYTES: u64 = 24;

/// One direction of a cable.
pub struct Lane {
    /// Frames on the wire, with the cycle each has fully arrived.
    in_flight: VecDeque<(u64, Vec<u8>)>,
    /// Cycle at which the lane is free for the next frame.
    free_at: u64,
}

/// A full-duplex cable.
pub struct Cable {
    /// Link rate in bits per clock cycle (100 Gb/s at 250 MHz: 400).
    bits_per_cycle: u64,
    /// Propagation plus PHY delay, in cycles.
    delay_cycles: u64,
    lanes: [Lane; 2],
}

impl Cable {
    /// A cable of `gbps` gigabits per second and `delay_cycles` of latency,
    /// for cards clocked at 250 MHz.
    pub fn new(gbps: u64, delay_cycles: u64) -> Cable {
        let lane = || Lane {
            in_flight: VecDeque::new(),
            free_at: 0,
        };
        Cable {
            bits_per_cycle: gbps * 4,
            delay_cycles,
            lanes: [lane(), lane()],
        }
    }

    /// Propagation plus PHY delay, in cycles: a frame sent in cycle `t`
    /// arrives in cycle `t + delay_cycles + 1` at the earliest.
    pub fn delay_cycles(&self) -> u64 {
        self.delay_cycles
    }

    /// Puts a frame on lane `dir` (0: A to B, 1: B to A), sent at cycle `now`.
    pub fn send(&mut self, dir: usize, now: u64, frame: Vec<u8>) {
        let lane = &mut self.lanes[dir];
        let start = now.max(lane.free_at);
        let bits = 8 * (frame.len() as u64 + FRAMING_BYTES);
        let done = start + bits.div_ceil(self.bits_per_cycle);
        lane.free_at = done;
        lane.in_flight.push_back((done + self.delay_cycles, frame));
    }

    /// Frames of lane `dir` that have arrived by cycle `now`.
    pub fn arrived(&mut self, dir: usize, now: u64) -> Vec<Vec<u8>> {
        let lane = &mut self.lanes[dir];
        let mut out = Vec::new();
        while lane.in_flight.front().is_some_and(|(t, _)| *t <= now) {
            out.push(lane.in_flight.pop_front().unwrap().1);
        }
        out
    }
}

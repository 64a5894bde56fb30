//! A point-to-point Ethernet cable between two simulated cards: each direction
//! carries frames in order, serialized at the link rate (with preamble, FCS
//! and inter-frame gap) and delayed by the propagation time. The switch model
//! of `homa-testbench` takes over for more than two cards.
//!
//! Faults ([`CableFaults`], seeded and repeatable): a frame may be held back
//! (reordered behind the frames sent after it) or delivered twice. What a
//! switch's priority queues and a sender's retransmissions do to a receiver,
//! without loss (loss needs the timers of the loss-recovery issue).

use std::collections::VecDeque;

/// Bytes on the wire per frame beyond its bytes: preamble and SFD (8), FCS
/// (4), inter-frame gap (12).
pub const FRAMING_BYTES: u64 = 24;

/// What a cable does wrong, per frame, each direction alike.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CableFaults {
    /// Frames in 1000 held back by 1 ..= `max_hold_cycles` more cycles (so
    /// frames sent after them may arrive first).
    pub reorder_per_mille: u32,
    pub max_hold_cycles: u64,
    /// Frames in 1000 delivered twice (the copy up to `max_hold_cycles` later).
    pub duplicate_per_mille: u32,
    /// Seed of the draws.
    pub seed: u64,
}

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
    faults: CableFaults,
    /// The draws' state (xorshift64*).
    rng: u64,
    /// Frames held back and duplicated so far.
    reordered: u64,
    duplicated: u64,
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
            faults: CableFaults::default(),
            rng: 1,
            reordered: 0,
            duplicated: 0,
        }
    }

    /// The same cable with `faults`.
    pub fn with_faults(mut self, faults: CableFaults) -> Cable {
        self.set_faults(faults);
        self
    }

    /// From now on, `faults` (the draws restart from its seed).
    pub fn set_faults(&mut self, faults: CableFaults) {
        self.faults = faults;
        self.rng = faults.seed | 1;
    }

    /// Frames held back and frames duplicated so far.
    pub fn fault_counts(&self) -> (u64, u64) {
        (self.reordered, self.duplicated)
    }

    fn draw(&mut self, below: u64) -> u64 {
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        (self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) % below.max(1)
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
        let mut at = done + self.delay_cycles;
        let f = self.faults;
        if f.reorder_per_mille > 0 && self.draw(1000) < f.reorder_per_mille as u64 {
            at += 1 + self.draw(f.max_hold_cycles);
            self.reordered += 1;
        }
        if f.duplicate_per_mille > 0 && self.draw(1000) < f.duplicate_per_mille as u64 {
            let copy_at = at + self.draw(f.max_hold_cycles + 1);
            self.duplicated += 1;
            Self::insert(&mut self.lanes[dir], copy_at, frame.clone());
        }
        Self::insert(&mut self.lanes[dir], at, frame);
    }

    /// Queues a frame by arrival cycle (after those arriving the same cycle).
    fn insert(lane: &mut Lane, at: u64, frame: Vec<u8>) {
        let i = lane.in_flight.partition_point(|(t, _)| *t <= at);
        lane.in_flight.insert(i, (at, frame));
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

//! A point-to-point Ethernet cable between two simulated cards: each direction
//! carries frames in order, serialized at the link rate (with preamble, FCS
//! and inter-frame gap) and delayed by the propagation time. The switch model
//! of `homa-testbench` takes over for more than two cards.
//!
//! Faults ([`CableFaults`], seeded and repeatable), per frame and direction:
//! a frame may be lost, held back (reordered behind the frames sent after
//! it), delivered twice (the copy takes its own wire time), or corrupted; and the cable may be down for a window
//! of cycles, losing every frame on the wire during it. What each did is
//! counted ([`FaultCounts`]).
//!
//! DESIGN NOTES
//! ------------
//! - Rates are in parts per million, so the command line's fractions
//!   (`--loss 0.0001`) keep their precision; each frame draws every decision
//!   in the same order whatever is enabled, so one fault's rate does not
//!   change which frames another hits (a run with `--loss` added loses
//!   frames out of the same reordered stream).
//! - Two kinds of corruption. `corrupt_ip_ppm` flips bits in one byte of the
//!   IPv4 header, which the header checksum always catches (a change within
//!   one byte never leaves a ones'-complement sum unchanged): the card must
//!   drop and count it (`IpChecksum`). `corrupt_homa_ppm` flips bits in one
//!   byte past the IPv4 header (Homa header or payload), which the IPv4
//!   checksum does not cover: what a bad Ethernet FCS would have caught in a
//!   real MAC. The card drops what its checks can see (an unknown type, a
//!   range past the message, a port no endpoint serves) and delivers the
//!   rest; Homa has no checksum of its own. A frame too short for the
//!   byte chosen has a byte anywhere flipped instead.
//! - Link down: a frame any part of whose time on the wire (serialization
//!   to arrival) falls in `[from, to)` is lost, counted apart from random
//!   loss.

use std::collections::VecDeque;

use homa_wire::layout::{eth, ipv4};

/// Bytes on the wire per frame beyond its bytes: preamble and SFD (8), FCS
/// (4), inter-frame gap (12).
pub const FRAMING_BYTES: u64 = 24;

/// Parts per million: the unit of every fault rate.
pub const PPM: u64 = 1_000_000;

/// What a cable does wrong, per frame, each direction alike.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CableFaults {
    /// Frames in a million lost.
    pub loss_ppm: u32,
    /// Frames in a million held back by 1 ..= `max_hold_cycles` more cycles
    /// (so frames sent after them may arrive first).
    pub reorder_ppm: u32,
    pub max_hold_cycles: u64,
    /// Frames in a million delivered twice (the copy up to `max_hold_cycles` later).
    pub duplicate_ppm: u32,
    /// Frames in a million with a byte of the IPv4 header flipped (the
    /// checksum catches it).
    pub corrupt_ip_ppm: u32,
    /// Frames in a million with a byte past the IPv4 header flipped (the
    /// IPv4 checksum stays valid).
    pub corrupt_homa_ppm: u32,
    /// The cable is down during cycles `[from, to)`.
    pub link_down: Option<(u64, u64)>,
    /// Seed of the draws.
    pub seed: u64,
}

impl CableFaults {
    /// Faults from fractions of frames (0.0 to 1.0) as the command line
    /// gives them: `corrupt` is split evenly between the two kinds. Reordered
    /// frames and second copies come up to `max_hold_cycles` late.
    pub fn from_fractions(
        loss: f64,
        duplicate: f64,
        reorder: f64,
        corrupt: f64,
        max_hold_cycles: u64,
        seed: u64,
    ) -> CableFaults {
        let ppm = |f: f64| (f.clamp(0.0, 1.0) * PPM as f64).round() as u32;
        CableFaults {
            loss_ppm: ppm(loss),
            reorder_ppm: ppm(reorder),
            max_hold_cycles,
            duplicate_ppm: ppm(duplicate),
            corrupt_ip_ppm: ppm(corrupt / 2.0),
            corrupt_homa_ppm: ppm(corrupt) - ppm(corrupt / 2.0),
            link_down: None,
            seed,
        }
    }

    /// Whether any fault is enabled.
    pub fn any(&self) -> bool {
        self.loss_ppm > 0
            || self.reorder_ppm > 0
            || self.duplicate_ppm > 0
            || self.corrupt_ip_ppm > 0
            || self.corrupt_homa_ppm > 0
            || self.link_down.is_some()
    }
}

/// What a cable's faults did, frames counted once each.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FaultCounts {
    /// Frames put on the cable (both directions).
    pub frames: u64,
    pub lost: u64,
    pub reordered: u64,
    pub duplicated: u64,
    pub corrupted_ip: u64,
    pub corrupted_homa: u64,
    /// Frames lost because the link was down.
    pub link_down_drops: u64,
}

impl std::ops::AddAssign for FaultCounts {
    fn add_assign(&mut self, o: FaultCounts) {
        self.frames += o.frames;
        self.lost += o.lost;
        self.reordered += o.reordered;
        self.duplicated += o.duplicated;
        self.corrupted_ip += o.corrupted_ip;
        self.corrupted_homa += o.corrupted_homa;
        self.link_down_drops += o.link_down_drops;
    }
}

/// One direction of a cable.
pub struct Lane {
    /// Frames on the wire, with the cycle each has fully arrived.
    in_flight: VecDeque<(u64, Vec<u8>)>,
    /// When the lane is free for the next frame, in bit times (cycles times
    /// `bits_per_cycle`): kept in bits, not whole cycles, so that frames
    /// back to back take exactly their wire time (an MTU frame's 30.76
    /// cycles at 100 Gb/s, not 31).
    free_at_bits: u64,
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
    counts: FaultCounts,
}

impl Cable {
    /// A cable of `gbps` gigabits per second and `delay_cycles` of latency,
    /// for cards clocked at 250 MHz.
    pub fn new(gbps: u64, delay_cycles: u64) -> Cable {
        let lane = || Lane {
            in_flight: VecDeque::new(),
            free_at_bits: 0,
        };
        Cable {
            bits_per_cycle: gbps * 4,
            delay_cycles,
            lanes: [lane(), lane()],
            faults: CableFaults::default(),
            rng: 1,
            counts: FaultCounts::default(),
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

    /// The faults in force.
    pub fn faults(&self) -> &CableFaults {
        &self.faults
    }

    /// What the faults did so far.
    pub fn fault_counts(&self) -> FaultCounts {
        self.counts
    }

    fn next(&mut self) -> u64 {
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11
    }

    fn draw(&mut self, below: u64) -> u64 {
        self.next() % below.max(1)
    }

    /// One draw against a rate in parts per million.
    fn hit(&mut self, ppm: u32) -> bool {
        self.draw(PPM) < u64::from(ppm)
    }

    /// Propagation plus PHY delay, in cycles: a frame sent in cycle `t`
    /// arrives in cycle `t + delay_cycles + 1` at the earliest.
    pub fn delay_cycles(&self) -> u64 {
        self.delay_cycles
    }

    /// Puts a frame on lane `dir` (0: A to B, 1: B to A), sent at cycle `now`.
    pub fn send(&mut self, dir: usize, now: u64, mut frame: Vec<u8>) {
        let lane = &mut self.lanes[dir];
        let start_bits = (now * self.bits_per_cycle).max(lane.free_at_bits);
        let start = start_bits / self.bits_per_cycle;
        let bits = 8 * (frame.len() as u64 + FRAMING_BYTES);
        lane.free_at_bits = start_bits + bits;
        let done = lane.free_at_bits.div_ceil(self.bits_per_cycle);
        let mut at = done + self.delay_cycles;
        let f = self.faults;
        self.counts.frames += 1;
        // Every draw, every frame, in this order (module notes).
        let lose = self.hit(f.loss_ppm);
        let hold = self.hit(f.reorder_ppm);
        let hold_cycles = 1 + self.draw(f.max_hold_cycles);
        let double = self.hit(f.duplicate_ppm);
        let copy_delay = self.draw(f.max_hold_cycles + 1);
        let corrupt_ip = self.hit(f.corrupt_ip_ppm);
        let corrupt_homa = self.hit(f.corrupt_homa_ppm);
        let byte_draw = self.next();
        let flip = 1 + self.draw(255) as u8;
        if let Some((from, to)) = f.link_down {
            if start < to && at >= from {
                self.counts.link_down_drops += 1;
                return;
            }
        }
        if lose {
            self.counts.lost += 1;
            return;
        }
        if hold {
            at += hold_cycles;
            self.counts.reordered += 1;
        }
        if corrupt_ip || corrupt_homa {
            let ip = eth::HEADER_LEN..eth::HEADER_LEN + ipv4::HEADER_LEN;
            let range = if corrupt_ip && frame.len() >= ip.end {
                self.counts.corrupted_ip += 1;
                ip
            } else if corrupt_ip {
                self.counts.corrupted_ip += 1;
                0..frame.len()
            } else {
                self.counts.corrupted_homa += 1;
                if frame.len() > ip.end {
                    ip.end..frame.len()
                } else {
                    0..frame.len()
                }
            };
            if !range.is_empty() {
                let i = range.start + (byte_draw % range.len() as u64) as usize;
                frame[i] ^= flip;
            }
        }
        if double {
            // The copy is a frame on the wire too: it is serialized right
            // after the original, so the frames behind it wait (without
            // this, 2% duplicates were 102% of line rate into the receiver,
            // more than any link can carry).
            let lane = &mut self.lanes[dir];
            lane.free_at_bits += bits;
            let copy_done = lane.free_at_bits.div_ceil(self.bits_per_cycle);
            let copy_at = (copy_done + self.delay_cycles).max(at) + copy_delay;
            self.counts.duplicated += 1;
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

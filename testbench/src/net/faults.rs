//! Fault injection, deterministic for a seed: each frame delivered to a host
//! may be lost, duplicated, delayed (so later frames overtake it: reordering)
//! or corrupted; links go down and up at given times.
//!
//! DESIGN NOTES
//! - Faults act on the switch-to-host hop, once per frame, so a probability
//!   is the probability per frame end to end.
//! - Corruption encodes the frame and flips bits in one byte of its IPv4
//!   header, which the IPv4 header checksum always catches (a change within
//!   one byte never leaves a ones'-complement sum unchanged). The bytes go to
//!   the host, whose decoder must reject them. Payload corruption would get
//!   through the decoder (Homa has no payload checksum on receive; the
//!   Ethernet FCS catches it in the MAC, before Homa), so it is not modelled.

use homa_wire::layout;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use super::{Packet, WireFrame};
use crate::model::Cycles;

/// Fault probabilities (per frame) and link events.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FaultConfig {
    pub loss: f64,
    pub duplicate: f64,
    pub reorder: f64,
    /// A reordered frame is delayed by 1..=this many cycles.
    pub reorder_max_cycles: Cycles,
    pub corrupt: f64,
    /// Link failures and repairs.
    pub link_events: Vec<LinkEvent>,
}

/// A host's link (both directions) goes down or comes up at a time.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct LinkEvent {
    pub host: usize,
    pub at: Cycles,
    pub up: bool,
}

/// What the injector did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FaultCounters {
    pub lost: u64,
    pub duplicated: u64,
    pub reordered: u64,
    pub corrupted: u64,
    /// Frames lost because a link was down.
    pub link_down_drops: u64,
}

impl FaultConfig {
    pub fn any_packet_faults(&self) -> bool {
        self.loss > 0.0 || self.duplicate > 0.0 || self.reorder > 0.0 || self.corrupt > 0.0
    }
}

/// Applies `cfg` to one frame about to be delivered: returns the copies to
/// deliver, each with its extra delay.
pub fn inject(
    cfg: &FaultConfig,
    rng: &mut ChaCha8Rng,
    counters: &mut FaultCounters,
    packet: Box<Packet>,
) -> Vec<(Cycles, Box<Packet>)> {
    if cfg.loss > 0.0 && rng.gen_bool(cfg.loss) {
        counters.lost += 1;
        return Vec::new();
    }
    let mut out = Vec::with_capacity(2);
    if cfg.duplicate > 0.0 && rng.gen_bool(cfg.duplicate) {
        counters.duplicated += 1;
        out.push((1, packet.clone()));
    }
    let mut packet = packet;
    if cfg.corrupt > 0.0 && rng.gen_bool(cfg.corrupt) {
        counters.corrupted += 1;
        corrupt(rng, &mut packet);
    }
    let mut delay = 0;
    if cfg.reorder > 0.0 && cfg.reorder_max_cycles > 0 && rng.gen_bool(cfg.reorder) {
        counters.reordered += 1;
        delay = rng.gen_range(1..=cfg.reorder_max_cycles);
    }
    out.insert(0, (delay, packet));
    out
}

fn corrupt(rng: &mut ChaCha8Rng, packet: &mut Packet) {
    let mut bytes = match &packet.frame {
        WireFrame::Frame(f) => f.encode().expect("model frames encode"),
        WireFrame::Bytes(b) => b.clone(),
    };
    let at = layout::eth::HEADER_LEN + rng.gen_range(0..layout::ipv4::HEADER_LEN);
    let flip: u8 = rng.gen_range(1..=255);
    bytes[at] ^= flip;
    packet.frame = WireFrame::Bytes(bytes);
}

//! The simulated network: a link per host to one output-queued switch.
//!
//! [`link`] serializes frames at the link rate with Ethernet's per-frame
//! overhead, [`switch`] queues them per egress port in 8 strict priority
//! queues with a finite buffer, [`faults`] injects loss, duplication,
//! reordering, corruption and link failures by seed. The event loop that moves
//! frames between them is `cluster`.

pub mod faults;
pub mod link;
pub mod switch;

pub use faults::{FaultConfig, FaultCounters, LinkEvent};
pub use link::{wire_bytes, Link};
pub use switch::{BufferConfig, Switch};

use homa_wire::Frame;
use serde::Serialize;

use crate::model::Cycles;

/// Parameters of the network.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NetConfig {
    /// Rate of every link, each direction.
    pub link_gbps: f64,
    /// Propagation delay of one link (host to switch or back).
    pub prop_delay_cycles: Cycles,
    /// Time from a frame's last bit into the switch until it is queued at the
    /// egress port (store and forward plus lookup).
    pub switch_delay_cycles: Cycles,
    /// Switch packet buffer.
    pub buffer: BufferConfig,
    /// Extra latency from a frame's arrival at a host to its endpoint (RX
    /// pipeline, DMA, or a software stack when modelling one); 0 for the
    /// model alone.
    pub host_delay_cycles: Cycles,
}

impl Default for NetConfig {
    fn default() -> Self {
        NetConfig {
            link_gbps: 100.0,
            // 100 ns: about 20 m of fiber, plus MAC/PHY latency.
            prop_delay_cycles: 25,
            // 250 ns: a datacenter ToR switch.
            switch_delay_cycles: 62,
            // 16 MiB shared: a Tomahawk-class ToR.
            buffer: BufferConfig::Shared {
                bytes: 16 * 1024 * 1024,
            },
            host_delay_cycles: 0,
        }
    }
}

/// What travels on a wire: a frame as a value (the fast path), or as bytes
/// (after corruption, so the receiver's decoder sees exactly what arrived).
#[derive(Clone, Debug)]
pub enum WireFrame {
    Frame(Frame),
    Bytes(Vec<u8>),
}

/// A frame in flight with what the network needs to know about it.
#[derive(Clone, Debug)]
pub struct Packet {
    pub frame: WireFrame,
    /// Bytes the frame occupies on the wire (with preamble, FCS, gap, padding).
    pub wire_bytes: u32,
    /// Priority level (0..=7) from the IPv4 TOS byte.
    pub priority: u8,
    /// Host (switch port) it is addressed to.
    pub dst_host: u32,
}

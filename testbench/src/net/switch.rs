//! An output-queued switch: per egress port 8 strict priority queues sharing
//! a finite buffer (shared by all ports, or a fixed share per port), drop-tail.

use std::collections::VecDeque;

use serde::Serialize;

use super::{Link, Packet};

/// Levels of priority queue per port.
pub const PRIORITY_LEVELS: usize = 8;

/// How the switch's packet buffer is divided.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub enum BufferConfig {
    /// One pool for all ports.
    Shared { bytes: u64 },
    /// A fixed amount per egress port.
    PerPort { bytes: u64 },
}

/// One egress port: its queues and its link to the host.
#[derive(Debug)]
pub struct EgressPort {
    /// `queues[p]` holds priority p; 7 is served first.
    pub queues: [VecDeque<Box<Packet>>; PRIORITY_LEVELS],
    /// Wire bytes queued at this port.
    pub queued_bytes: u64,
    /// Largest `queued_bytes` seen.
    pub max_queued_bytes: u64,
    pub link: Link,
}

/// The switch.
#[derive(Debug)]
pub struct Switch {
    pub ports: Vec<EgressPort>,
    pub buffer: BufferConfig,
    /// Wire bytes queued over all ports.
    pub total_queued_bytes: u64,
    pub max_total_queued_bytes: u64,
    /// Frames dropped because the buffer was full.
    pub drops: u64,
}

impl Switch {
    pub fn new(ports: usize, link_gbps: f64, buffer: BufferConfig) -> Switch {
        Switch {
            ports: (0..ports)
                .map(|_| EgressPort {
                    queues: Default::default(),
                    queued_bytes: 0,
                    max_queued_bytes: 0,
                    link: Link::new(link_gbps),
                })
                .collect(),
            buffer,
            total_queued_bytes: 0,
            max_total_queued_bytes: 0,
            drops: 0,
        }
    }

    /// Queues `packet` at egress `port`; false if the buffer had no room
    /// (the packet is dropped).
    pub fn enqueue(&mut self, port: usize, packet: Box<Packet>) -> bool {
        let bytes = packet.wire_bytes as u64;
        let fits = match self.buffer {
            BufferConfig::Shared { bytes: cap } => self.total_queued_bytes + bytes <= cap,
            BufferConfig::PerPort { bytes: cap } => self.ports[port].queued_bytes + bytes <= cap,
        };
        if !fits {
            self.drops += 1;
            return false;
        }
        let p = &mut self.ports[port];
        p.queued_bytes += bytes;
        p.max_queued_bytes = p.max_queued_bytes.max(p.queued_bytes);
        p.queues[packet.priority as usize & 7].push_back(packet);
        self.total_queued_bytes += bytes;
        self.max_total_queued_bytes = self.max_total_queued_bytes.max(self.total_queued_bytes);
        true
    }

    /// Takes the next packet for egress `port`: highest priority first, FIFO
    /// within a level.
    pub fn dequeue(&mut self, port: usize) -> Option<Box<Packet>> {
        let p = &mut self.ports[port];
        let packet = p.queues.iter_mut().rev().find_map(|q| q.pop_front())?;
        p.queued_bytes -= packet.wire_bytes as u64;
        self.total_queued_bytes -= packet.wire_bytes as u64;
        Some(packet)
    }
}

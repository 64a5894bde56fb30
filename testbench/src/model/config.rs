//! Every tunable of the endpoint model, with HomaModule's names and defaults
//! (WIRE.md, "Behaviour and defaults"). The hardware exposes the same set as
//! CSRs; a test or a simulation changes them here.

use serde::Serialize;

/// Simulated time: core clock cycles at 250 MHz (4 ns each).
pub type Cycles = u64;

/// Core clock frequency of the card; every `*_cycles` value counts these.
pub const CORE_CLOCK_HZ: u64 = 250_000_000;

/// Nanoseconds per core clock cycle.
pub const NS_PER_CYCLE: u64 = 4;

/// Cycles in one microsecond.
pub const CYCLES_PER_US: u64 = 250;

/// The tunables of one Homa endpoint.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HomaConfig {
    /// Bytes of each message a sender transmits before any grant (HomaModule
    /// `unsched_bytes`, 40000). The unscheduled part ends exactly here.
    pub unsched_bytes: u32,
    /// Grant window beyond the bytes received, per message; 0 selects the
    /// dynamic window `max_incoming / (active messages + 1)`.
    pub window: u32,
    /// Cap on granted-but-not-received bytes over all inbound messages.
    pub max_incoming: u32,
    /// Messages granted at once: the size of the active set.
    pub max_overcommit: usize,
    /// At most this many messages from one peer in the active set (a sender
    /// transmits one message at a time under SRPT, so granting more wastes
    /// overcommitment).
    pub max_rpcs_per_peer: usize,
    /// Priority levels the switch offers (8).
    pub num_priorities: u8,
    /// Highest level used for scheduled (granted) data; unscheduled data uses
    /// the levels above it (with the default cutoffs: sched 0..=3, unsched 4..=7).
    pub max_sched_prio: u8,
    /// This receiver's unscheduled cutoffs: `unsched_cutoffs[i]` is the largest
    /// message a sender should send unscheduled at priority `i`.
    pub unsched_cutoffs: [u32; 8],
    /// Version of `unsched_cutoffs`; a DATA packet carrying another version
    /// makes the receiver send CUTOFFS.
    pub cutoff_version: u16,
    /// Per mille of granted bytes given to the oldest message (FIFO grants).
    pub grant_fifo_fraction: u32,
    /// Bytes granted to the oldest message at once.
    pub fifo_grant_increment: u32,
    /// Per mille of transmitted bytes the sender gives to its oldest message.
    pub pacer_fifo_fraction: u32,
    /// Messages shorter than this bypass the sender's SRPT queue (sent FIFO first).
    pub throttle_min_bytes: u32,
    /// Ticks of silence before the first RESEND.
    pub resend_ticks: u32,
    /// Ticks between RESENDs after the first.
    pub resend_interval: u32,
    /// Ticks of silence after which an RPC is aborted (ETIMEDOUT at a client).
    pub timeout_ticks: u32,
    /// Ticks after a server's response is fully sent before it asks for an ACK
    /// (and between repeated NEED_ACKs).
    pub request_ack_ticks: u32,
    /// Length of a tick in core cycles (a register in hardware; 1 ms in the kernel).
    pub tick_cycles: Cycles,
    /// Largest message accepted by `send_request`/`reply` (HomaModule 1,000,000).
    pub max_message_length: u32,
    /// IP MTU; a DATA packet carries at most `mtu - 20 - 56` payload bytes.
    pub mtu: u32,
}

impl Default for HomaConfig {
    fn default() -> Self {
        HomaConfig {
            unsched_bytes: 40_000,
            window: 0,
            max_incoming: 400_000,
            max_overcommit: 8,
            max_rpcs_per_peer: 1,
            num_priorities: 8,
            max_sched_prio: 3,
            unsched_cutoffs: [0, 0, 0, 0, 1_000_000, 15_000, 2_800, 200],
            cutoff_version: 1,
            grant_fifo_fraction: 50,
            fifo_grant_increment: 50_000,
            pacer_fifo_fraction: 50,
            throttle_min_bytes: 1_000,
            resend_ticks: 5,
            resend_interval: 5,
            timeout_ticks: 100,
            request_ack_ticks: 2,
            tick_cycles: 250_000,
            max_message_length: 1_000_000,
            mtu: 1_500,
        }
    }
}

/// IPv4 header bytes (no options).
const IPV4_HEADER_LEN: u32 = 20;
/// Homa DATA header bytes.
const DATA_HEADER_LEN: u32 = 56;

impl HomaConfig {
    /// Payload bytes in a full DATA packet (1424 at MTU 1500).
    pub fn max_payload(&self) -> u32 {
        self.mtu - IPV4_HEADER_LEN - DATA_HEADER_LEN
    }

    /// Priority for the unscheduled bytes of a message of `length` bytes under
    /// `cutoffs`: the highest level whose cutoff admits it. A message above
    /// every cutoff uses the lowest level that has a nonzero cutoff.
    pub fn unsched_priority(cutoffs: &[u32; 8], length: u32) -> u8 {
        for level in (0..8).rev() {
            if length <= cutoffs[level] {
                return level as u8;
            }
        }
        cutoffs.iter().position(|&c| c != 0).unwrap_or(0) as u8
    }

    /// Bytes a sender transmits unscheduled for a message of `length`.
    pub fn unscheduled(&self, length: u32) -> u32 {
        length.min(self.unsched_bytes)
    }

    /// The packet grid: rounds an offset up to the next packet boundary of a
    /// message of `length` (full packets from 0 to the end of the unscheduled
    /// part, which ends exactly at `unsched_bytes`, then full packets from
    /// there), never past `length`. Receivers round grants with it so senders
    /// always send full packets.
    pub fn round_to_packet(&self, offset: u32, length: u32) -> u32 {
        let p = self.max_payload();
        let u = self.unscheduled(length);
        let rounded = if offset <= u {
            (offset.div_ceil(p) * p).min(u)
        } else {
            u + (offset - u).div_ceil(p) * p
        };
        rounded.min(length)
    }
}

/// Cutoffs a sender assumes for a peer it has not heard CUTOFFS from
/// (version 0): everything unscheduled at the second-highest level.
pub const UNKNOWN_PEER_CUTOFFS: [u32; 8] = [0, 0, 0, 0, 0, 0, u32::MAX, 0];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsched_priority_follows_the_default_cutoffs() {
        let c = HomaConfig::default().unsched_cutoffs;
        assert_eq!(HomaConfig::unsched_priority(&c, 100), 7);
        assert_eq!(HomaConfig::unsched_priority(&c, 200), 7);
        assert_eq!(HomaConfig::unsched_priority(&c, 201), 6);
        assert_eq!(HomaConfig::unsched_priority(&c, 5000), 5);
        assert_eq!(HomaConfig::unsched_priority(&c, 500_000), 4);
        assert_eq!(HomaConfig::unsched_priority(&c, 5_000_000), 4);
        assert_eq!(HomaConfig::unsched_priority(&UNKNOWN_PEER_CUTOFFS, 9), 6);
    }

    #[test]
    fn grants_round_to_the_packet_grid() {
        let cfg = HomaConfig::default();
        assert_eq!(cfg.max_payload(), 1424);
        assert_eq!(cfg.round_to_packet(1, 100_000), 1424);
        assert_eq!(cfg.round_to_packet(39_900, 100_000), 40_000);
        assert_eq!(cfg.round_to_packet(40_001, 100_000), 41_424);
        assert_eq!(cfg.round_to_packet(99_999, 100_000), 100_000);
    }
}

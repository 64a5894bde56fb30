//! Homa on the wire, byte for byte as HomaModule sends and accepts it.
//!
//! Owns: the layouts of Ethernet II, IPv4 and the nine Homa packet types
//! ([`layout`], the one table every other crate takes offsets from), the
//! software codec ([`Frame::encode`], [`Frame::decode`]) and libpcap file I/O
//! ([`pcap`]).
//!
//! Must not know about: RPC state, scheduling, the card, or how frames travel.
//! It has no dependencies of ours, so the RTL generators (`homa-hw`), the
//! reference model, the driver and the CLI all use it without cycles.

pub mod arp;
pub mod layout;
pub mod pcap;

mod display;
mod frame;

pub use frame::{
    homa_tcp_checksum, ipv4_checksum, priority_to_tos, AckEntry, Acks, Body, CommonHeader, Cutoffs,
    Data, EthernetHeader, Frame, Grant, HomaPacket, Ipv4Header, Resend,
};

use serde::{Serialize, Serializer};

/// Homa packet types (byte 11 of the common header).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[repr(u8)]
pub enum PacketType {
    Data = 0x10,
    Grant = 0x11,
    Resend = 0x12,
    RpcUnknown = 0x13,
    Busy = 0x14,
    Cutoffs = 0x15,
    Freeze = 0x16,
    NeedAck = 0x17,
    Ack = 0x18,
}

impl PacketType {
    pub const ALL: [PacketType; 9] = [
        PacketType::Data,
        PacketType::Grant,
        PacketType::Resend,
        PacketType::RpcUnknown,
        PacketType::Busy,
        PacketType::Cutoffs,
        PacketType::Freeze,
        PacketType::NeedAck,
        PacketType::Ack,
    ];

    /// The name HomaModule uses (`DATA`, `RPC_UNKNOWN`, ...).
    pub fn name(self) -> &'static str {
        match self {
            PacketType::Data => "DATA",
            PacketType::Grant => "GRANT",
            PacketType::Resend => "RESEND",
            PacketType::RpcUnknown => "RPC_UNKNOWN",
            PacketType::Busy => "BUSY",
            PacketType::Cutoffs => "CUTOFFS",
            PacketType::Freeze => "FREEZE",
            PacketType::NeedAck => "NEED_ACK",
            PacketType::Ack => "ACK",
        }
    }
}

impl TryFrom<u8> for PacketType {
    type Error = DecodeError;
    fn try_from(value: u8) -> Result<Self, DecodeError> {
        PacketType::ALL
            .into_iter()
            .find(|t| *t as u8 == value)
            .ok_or(DecodeError::UnknownType(value))
    }
}

/// A 48-bit Ethernet address.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct MacAddr(pub [u8; 6]);

impl MacAddr {
    pub const BROADCAST: MacAddr = MacAddr([0xff; 6]);
}

impl std::fmt::Display for MacAddr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let m = self.0;
        write!(
            f,
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            m[0], m[1], m[2], m[3], m[4], m[5]
        )
    }
}

impl std::str::FromStr for MacAddr {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let parts: Vec<&str> = s.split(':').collect();
        if parts.len() != 6 {
            return Err(format!(
                "MAC address {s:?} must be six hex bytes separated by ':'"
            ));
        }
        let mut m = [0u8; 6];
        for (byte, part) in m.iter_mut().zip(parts) {
            *byte = u8::from_str_radix(part, 16)
                .map_err(|_| format!("MAC address {s:?}: {part:?} is not a hex byte"))?;
        }
        Ok(MacAddr(m))
    }
}

impl Serialize for MacAddr {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Why a frame could not be decoded. Every variant names the problem so a
/// drop counter or a log line can say what was wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("frame too short for the {what}: need {need} bytes, have {have}")]
    Truncated {
        what: &'static str,
        need: usize,
        have: usize,
    },
    #[error("not IPv4 (ethertype {ethertype:#06x})")]
    NotIpv4 { ethertype: u16 },
    #[error("IP version {0}, expected 4")]
    IpVersion(u8),
    #[error("IPv4 header length {0} bytes is below the minimum of 20")]
    IpHeaderLength(usize),
    #[error("IPv4 header checksum {found:#06x} is wrong (expected {expected:#06x})")]
    IpChecksum { found: u16, expected: u16 },
    #[error("IPv4 total length {total_length} does not fit the {available} bytes after the Ethernet header")]
    IpTotalLength {
        total_length: usize,
        available: usize,
    },
    #[error("IPv4 fragment (Homa frames are never fragmented)")]
    Fragment,
    #[error("IP protocol {protocol} is not Homa (146)")]
    NotHoma { protocol: u8 },
    #[error("unknown Homa packet type {0:#04x}")]
    UnknownType(u8),
    #[error("{} packet too short: its header needs {need} bytes, have {have}", packet_type.name())]
    HomaTruncated {
        packet_type: PacketType,
        need: usize,
        have: usize,
    },
    #[error("ACK claims {0} acks, at most 5 fit")]
    TooManyAcks(u16),
    #[error("DATA payload of {payload} bytes at offset {offset} runs past the message length {message_length}")]
    PayloadBeyondMessage {
        offset: u32,
        payload: usize,
        message_length: u32,
    },
    #[error("not ARP (ethertype {ethertype:#06x})")]
    NotArp { ethertype: u16 },
    #[error("ARP for something other than IPv4 over Ethernet")]
    ArpNotIpv4OverEthernet,
}

impl DecodeError {
    /// A short stable name for the kind of error: the key of drop counters and
    /// of `decode --json` output.
    pub fn kind(&self) -> &'static str {
        match self {
            DecodeError::Truncated { .. } => "truncated",
            DecodeError::NotIpv4 { .. } => "not_ipv4",
            DecodeError::IpVersion(_) => "ip_version",
            DecodeError::IpHeaderLength(_) => "ip_header_length",
            DecodeError::IpChecksum { .. } => "ip_checksum",
            DecodeError::IpTotalLength { .. } => "ip_total_length",
            DecodeError::Fragment => "fragment",
            DecodeError::NotHoma { .. } => "not_homa",
            DecodeError::UnknownType(_) => "unknown_type",
            DecodeError::HomaTruncated { .. } => "homa_truncated",
            DecodeError::TooManyAcks(_) => "too_many_acks",
            DecodeError::PayloadBeyondMessage { .. } => "payload_beyond_message",
            DecodeError::NotArp { .. } => "not_arp",
            DecodeError::ArpNotIpv4OverEthernet => "arp_not_ipv4_over_ethernet",
        }
    }
}

/// Why a [`Frame`] could not be encoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    #[error("IP datagram of {ip_total_length} bytes exceeds 65535")]
    TooLong { ip_total_length: usize },
    #[error("ACK packet with {0} acks: at most 5 fit")]
    TooManyAcks(usize),
}

#[cfg(test)]
mod tests;

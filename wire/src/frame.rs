//! Homa frames as Rust values: encode to bytes, decode strictly from bytes.
//!
//! A [`Frame`] keeps every header field that is on the wire, including the
//! ones Homa leaves unused, so decoding a frame and encoding it again gives the
//! same bytes (up to Ethernet padding after the IP datagram, which is dropped).
//! Encoding computes what is derived: the IPv4 total length and checksum, the
//! Homa type byte, ACK's `num_acks`.
//!
//! Decoding is strict about what HomaModule is strict about (a valid IPv4
//! header checksum, the full header length of the type) and about what a NIC
//! cannot handle (IP fragments), and lenient where HomaModule is lenient (the
//! Homa checksum, flags, urgent, TOS, cutoff version are taken as they come).

use std::net::Ipv4Addr;

use serde::Serialize;

use crate::layout::{self, ack, ack_entry, common, cutoffs, data, eth, grant, ipv4, resend};
use crate::{DecodeError, EncodeError, MacAddr, PacketType};

/// One Ethernet frame carrying one Homa packet.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Frame {
    pub eth: EthernetHeader,
    pub ip: Ipv4Header,
    pub homa: HomaPacket,
}

/// Ethernet II addresses; the ethertype is always IPv4 for a Homa frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct EthernetHeader {
    pub dst: MacAddr,
    pub src: MacAddr,
}

/// The IPv4 fields that are not derived from the rest of the frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Ipv4Header {
    /// Type of service; Homa's priority level is `tos >> 5`.
    pub tos: u8,
    pub identification: u16,
    /// Flags (DF, MF) and fragment offset; a Homa frame is never a fragment.
    pub flags_fragment: u16,
    pub ttl: u8,
    /// 146, or 253 from HomaModule builds older than the IANA assignment.
    pub protocol: u8,
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
}

impl Ipv4Header {
    /// A header as we send it: priority `level` (0..=7), DF set, TTL 64, protocol 146.
    pub fn homa(src: Ipv4Addr, dst: Ipv4Addr, level: u8) -> Ipv4Header {
        Ipv4Header {
            tos: priority_to_tos(level),
            identification: 0,
            flags_fragment: ipv4::FLAG_DONT_FRAGMENT,
            ttl: 64,
            protocol: ipv4::PROTOCOL_HOMA,
            src,
            dst,
        }
    }

    /// Homa priority level carried in the TOS byte (0 lowest, 7 highest).
    pub fn priority(&self) -> u8 {
        self.tos >> 5
    }
}

/// TOS byte for a Homa priority level (0..=7).
pub fn priority_to_tos(level: u8) -> u8 {
    (level & 7) << 5
}

/// A Homa packet: the common header and the type-specific part.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HomaPacket {
    pub common: CommonHeader,
    pub body: Body,
}

impl HomaPacket {
    pub fn packet_type(&self) -> PacketType {
        self.body.packet_type()
    }
}

/// The 28-byte common header, minus the type byte (which [`Body`] determines).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CommonHeader {
    pub sport: u16,
    pub dport: u16,
    /// DATA: offset of the first payload byte when `seg_offset` is -1; else 0.
    pub sequence: u32,
    /// Unused (TCP's ack field); kept so frames round-trip exactly.
    pub ack: [u8; 3],
    pub doff: u8,
    pub flags: u8,
    /// Unused (TCP's window); kept so frames round-trip exactly.
    pub window: u16,
    /// TCP-style checksum when hijacking, else 0; never verified.
    pub checksum: u16,
    pub urgent: u16,
    /// The RPC id as the sender numbers it; the receiver's id is `sender_id ^ 1`.
    pub sender_id: u64,
}

impl CommonHeader {
    /// A common header as our NIC sends it: no TCP hijacking fields, `doff`
    /// matching the packet type.
    pub fn new(sport: u16, dport: u16, sender_id: u64, packet_type: PacketType) -> CommonHeader {
        CommonHeader {
            sport,
            dport,
            sequence: 0,
            ack: [0; 3],
            doff: if packet_type == PacketType::Data {
                common::DOFF_DATA
            } else {
                common::DOFF_CONTROL
            },
            flags: 0,
            window: 0,
            checksum: 0,
            urgent: 0,
            sender_id,
        }
    }
}

/// An acknowledgement that an RPC is finished: the server may free it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct AckEntry {
    /// The client's id of the finished RPC; 0 in a DATA packet means "no ack".
    pub client_id: u64,
    pub server_port: u16,
}

/// The type-specific part of a Homa packet.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Body {
    Data(Data),
    Grant(Grant),
    Resend(Resend),
    RpcUnknown,
    Busy,
    Cutoffs(Cutoffs),
    Freeze,
    NeedAck,
    Ack(Acks),
}

impl Body {
    pub fn packet_type(&self) -> PacketType {
        match self {
            Body::Data(_) => PacketType::Data,
            Body::Grant(_) => PacketType::Grant,
            Body::Resend(_) => PacketType::Resend,
            Body::RpcUnknown => PacketType::RpcUnknown,
            Body::Busy => PacketType::Busy,
            Body::Cutoffs(_) => PacketType::Cutoffs,
            Body::Freeze => PacketType::Freeze,
            Body::NeedAck => PacketType::NeedAck,
            Body::Ack(_) => PacketType::Ack,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Data {
    /// Total bytes in the message.
    pub message_length: u32,
    /// Bytes the sender will send without further grants (so far granted).
    pub incoming: u32,
    /// Piggybacked ack of a finished RPC (`client_id` 0: none).
    pub ack: AckEntry,
    /// Version of the receiver's unscheduled cutoffs the sender used.
    pub cutoff_version: u16,
    /// 1 if this packet answers a RESEND.
    pub retransmit: u8,
    /// Unused; kept so frames round-trip exactly.
    pub pad: [u8; 3],
    /// Offset of the payload in the message, or `SEG_OFFSET_USE_SEQUENCE`.
    #[serde(rename = "seg.offset")]
    pub seg_offset: u32,
    #[serde(skip)]
    pub payload: Vec<u8>,
}

impl Data {
    /// Offset of the first payload byte in the message, in either of the two
    /// forms HomaModule sends (`seg.offset`, or -1 there and the offset in
    /// `sequence`).
    pub fn payload_offset(&self, common: &CommonHeader) -> u32 {
        if self.seg_offset == data::SEG_OFFSET_USE_SEQUENCE {
            common.sequence
        } else {
            self.seg_offset
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Grant {
    /// The sender may transmit every byte below this offset.
    pub offset: u32,
    /// Priority level for the granted bytes.
    pub priority: u8,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Resend {
    pub offset: u32,
    /// Bytes to resend; 0xffffffff (-1) means everything sent so far.
    pub length: u32,
    /// Priority level for the retransmitted data.
    pub priority: u8,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Cutoffs {
    /// `unsched_cutoffs[i]`: largest message sent unscheduled at priority `i`.
    pub unsched_cutoffs: [u32; 8],
    pub cutoff_version: u16,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Acks {
    /// At most [`ack::MAX_ACKS`] entries.
    pub acks: Vec<AckEntry>,
}

impl Frame {
    /// Length in bytes of the encoded frame.
    pub fn len(&self) -> usize {
        layout::HOMA_OFFSET + self.homa_len()
    }

    /// Never true: a frame has at least its headers. (For clippy's sake.)
    pub fn is_empty(&self) -> bool {
        false
    }

    fn homa_len(&self) -> usize {
        let header = layout::header_len(self.homa.packet_type());
        match &self.homa.body {
            Body::Data(d) => header + d.payload.len(),
            _ => header,
        }
    }

    /// Encodes the frame: Ethernet II, IPv4 without options (total length and
    /// header checksum computed), the Homa header and any payload.
    pub fn encode(&self) -> Result<Vec<u8>, EncodeError> {
        let total_length = ipv4::HEADER_LEN + self.homa_len();
        if total_length > u16::MAX as usize {
            return Err(EncodeError::TooLong {
                ip_total_length: total_length,
            });
        }
        if let Body::Ack(a) = &self.homa.body {
            if a.acks.len() > ack::MAX_ACKS {
                return Err(EncodeError::TooManyAcks(a.acks.len()));
            }
        }
        let mut out = vec![0u8; eth::HEADER_LEN + total_length];

        let e = &mut out[..eth::HEADER_LEN];
        e[eth::DST.offset..eth::DST.end()].copy_from_slice(&self.eth.dst.0);
        e[eth::SRC.offset..eth::SRC.end()].copy_from_slice(&self.eth.src.0);
        layout::put(e, eth::ETHERTYPE, eth::ETHERTYPE_IPV4 as u64);

        let ip = &mut out[eth::HEADER_LEN..layout::HOMA_OFFSET];
        layout::put(ip, ipv4::VERSION_IHL, 0x45);
        layout::put(ip, ipv4::TOS, self.ip.tos as u64);
        layout::put(ip, ipv4::TOTAL_LENGTH, total_length as u64);
        layout::put(ip, ipv4::IDENTIFICATION, self.ip.identification as u64);
        layout::put(ip, ipv4::FLAGS_FRAGMENT, self.ip.flags_fragment as u64);
        layout::put(ip, ipv4::TTL, self.ip.ttl as u64);
        layout::put(ip, ipv4::PROTOCOL, self.ip.protocol as u64);
        layout::put(ip, ipv4::SRC, u32::from(self.ip.src) as u64);
        layout::put(ip, ipv4::DST, u32::from(self.ip.dst) as u64);
        let sum = ipv4_checksum(ip);
        layout::put(ip, ipv4::CHECKSUM, sum as u64);

        encode_homa(&self.homa, &mut out[layout::HOMA_OFFSET..]);
        Ok(out)
    }

    /// Decodes one Ethernet frame (without FCS). Bytes after the IP datagram
    /// (Ethernet padding) are ignored.
    pub fn decode(bytes: &[u8]) -> Result<Frame, DecodeError> {
        need(bytes, eth::HEADER_LEN, "Ethernet header")?;
        let ethertype = layout::get(bytes, eth::ETHERTYPE) as u16;
        if ethertype != eth::ETHERTYPE_IPV4 {
            return Err(DecodeError::NotIpv4 { ethertype });
        }
        let eth_header = EthernetHeader {
            dst: MacAddr(bytes[eth::DST.offset..eth::DST.end()].try_into().unwrap()),
            src: MacAddr(bytes[eth::SRC.offset..eth::SRC.end()].try_into().unwrap()),
        };

        let ip = &bytes[eth::HEADER_LEN..];
        need(ip, ipv4::HEADER_LEN, "IPv4 header")?;
        let version_ihl = layout::get(ip, ipv4::VERSION_IHL) as u8;
        if version_ihl >> 4 != 4 {
            return Err(DecodeError::IpVersion(version_ihl >> 4));
        }
        let ihl_bytes = (version_ihl & 0xf) as usize * 4;
        if ihl_bytes < ipv4::HEADER_LEN {
            return Err(DecodeError::IpHeaderLength(ihl_bytes));
        }
        need(ip, ihl_bytes, "IPv4 header with options")?;
        let found = layout::get(ip, ipv4::CHECKSUM) as u16;
        if ipv4_checksum(&ip[..ihl_bytes]) != 0 {
            let mut zeroed = ip[..ihl_bytes].to_vec();
            layout::put(&mut zeroed, ipv4::CHECKSUM, 0);
            return Err(DecodeError::IpChecksum {
                found,
                expected: ipv4_checksum(&zeroed),
            });
        }
        let total_length = layout::get(ip, ipv4::TOTAL_LENGTH) as usize;
        if total_length < ihl_bytes || total_length > ip.len() {
            return Err(DecodeError::IpTotalLength {
                total_length,
                available: ip.len(),
            });
        }
        let flags_fragment = layout::get(ip, ipv4::FLAGS_FRAGMENT) as u16;
        if flags_fragment & (ipv4::FLAG_MORE_FRAGMENTS | ipv4::FRAGMENT_OFFSET_MASK) != 0 {
            return Err(DecodeError::Fragment);
        }
        let protocol = layout::get(ip, ipv4::PROTOCOL) as u8;
        if protocol != ipv4::PROTOCOL_HOMA && protocol != ipv4::PROTOCOL_HOMA_OLD {
            return Err(DecodeError::NotHoma { protocol });
        }
        let ip_header = Ipv4Header {
            tos: layout::get(ip, ipv4::TOS) as u8,
            identification: layout::get(ip, ipv4::IDENTIFICATION) as u16,
            flags_fragment,
            ttl: layout::get(ip, ipv4::TTL) as u8,
            protocol,
            src: Ipv4Addr::from(layout::get(ip, ipv4::SRC) as u32),
            dst: Ipv4Addr::from(layout::get(ip, ipv4::DST) as u32),
        };
        let homa = decode_homa(&ip[ihl_bytes..total_length])?;
        Ok(Frame {
            eth: eth_header,
            ip: ip_header,
            homa,
        })
    }
}

fn need(bytes: &[u8], len: usize, what: &'static str) -> Result<(), DecodeError> {
    if bytes.len() < len {
        Err(DecodeError::Truncated {
            what,
            need: len,
            have: bytes.len(),
        })
    } else {
        Ok(())
    }
}

fn encode_homa(p: &HomaPacket, h: &mut [u8]) {
    let c = &p.common;
    layout::put(h, common::SPORT, c.sport as u64);
    layout::put(h, common::DPORT, c.dport as u64);
    layout::put(h, common::SEQUENCE, c.sequence as u64);
    h[common::ACK.offset..common::ACK.end()].copy_from_slice(&c.ack);
    layout::put(h, common::TYPE, p.packet_type() as u64);
    layout::put(h, common::DOFF, c.doff as u64);
    layout::put(h, common::FLAGS, c.flags as u64);
    layout::put(h, common::WINDOW, c.window as u64);
    layout::put(h, common::CHECKSUM, c.checksum as u64);
    layout::put(h, common::URGENT, c.urgent as u64);
    layout::put(h, common::SENDER_ID, c.sender_id);
    match &p.body {
        Body::Data(d) => {
            layout::put(h, data::MESSAGE_LENGTH, d.message_length as u64);
            layout::put(h, data::INCOMING, d.incoming as u64);
            layout::put(h, data::ACK_CLIENT_ID, d.ack.client_id);
            layout::put(h, data::ACK_SERVER_PORT, d.ack.server_port as u64);
            layout::put(h, data::CUTOFF_VERSION, d.cutoff_version as u64);
            layout::put(h, data::RETRANSMIT, d.retransmit as u64);
            h[data::PAD.offset..data::PAD.end()].copy_from_slice(&d.pad);
            layout::put(h, data::SEG_OFFSET, d.seg_offset as u64);
            h[data::HEADER_LEN..].copy_from_slice(&d.payload);
        }
        Body::Grant(g) => {
            layout::put(h, grant::OFFSET, g.offset as u64);
            layout::put(h, grant::PRIORITY, g.priority as u64);
        }
        Body::Resend(r) => {
            layout::put(h, resend::OFFSET, r.offset as u64);
            layout::put(h, resend::LENGTH, r.length as u64);
            layout::put(h, resend::PRIORITY, r.priority as u64);
        }
        Body::Cutoffs(c) => {
            for (i, &cutoff) in c.unsched_cutoffs.iter().enumerate() {
                let at = cutoffs::UNSCHED_CUTOFFS.offset + 4 * i;
                h[at..at + 4].copy_from_slice(&cutoff.to_be_bytes());
            }
            layout::put(h, cutoffs::CUTOFF_VERSION, c.cutoff_version as u64);
        }
        Body::Ack(a) => {
            layout::put(h, ack::NUM_ACKS, a.acks.len() as u64);
            for (i, entry) in a.acks.iter().enumerate() {
                let e = &mut h[ack::ACKS.offset + i * ack_entry::LEN..];
                layout::put(e, ack_entry::CLIENT_ID, entry.client_id);
                layout::put(e, ack_entry::SERVER_PORT, entry.server_port as u64);
            }
        }
        Body::RpcUnknown | Body::Busy | Body::Freeze | Body::NeedAck => {}
    }
}

fn decode_homa(h: &[u8]) -> Result<HomaPacket, DecodeError> {
    need(h, common::HEADER_LEN, "Homa common header")?;
    let type_byte = layout::get(h, common::TYPE) as u8;
    let packet_type = PacketType::try_from(type_byte)?;
    let header_len = layout::header_len(packet_type);
    if h.len() < header_len {
        return Err(DecodeError::HomaTruncated {
            packet_type,
            need: header_len,
            have: h.len(),
        });
    }
    let common_header = CommonHeader {
        sport: layout::get(h, common::SPORT) as u16,
        dport: layout::get(h, common::DPORT) as u16,
        sequence: layout::get(h, common::SEQUENCE) as u32,
        ack: h[common::ACK.offset..common::ACK.end()].try_into().unwrap(),
        doff: layout::get(h, common::DOFF) as u8,
        flags: layout::get(h, common::FLAGS) as u8,
        window: layout::get(h, common::WINDOW) as u16,
        checksum: layout::get(h, common::CHECKSUM) as u16,
        urgent: layout::get(h, common::URGENT) as u16,
        sender_id: layout::get(h, common::SENDER_ID),
    };
    let body = match packet_type {
        PacketType::Data => {
            let d = Data {
                message_length: layout::get(h, data::MESSAGE_LENGTH) as u32,
                incoming: layout::get(h, data::INCOMING) as u32,
                ack: AckEntry {
                    client_id: layout::get(h, data::ACK_CLIENT_ID),
                    server_port: layout::get(h, data::ACK_SERVER_PORT) as u16,
                },
                cutoff_version: layout::get(h, data::CUTOFF_VERSION) as u16,
                retransmit: layout::get(h, data::RETRANSMIT) as u8,
                pad: h[data::PAD.offset..data::PAD.end()].try_into().unwrap(),
                seg_offset: layout::get(h, data::SEG_OFFSET) as u32,
                payload: h[data::HEADER_LEN..].to_vec(),
            };
            let offset = d.payload_offset(&common_header) as u64;
            let end = offset + d.payload.len() as u64;
            if end > d.message_length as u64 {
                return Err(DecodeError::PayloadBeyondMessage {
                    offset: offset as u32,
                    payload: d.payload.len(),
                    message_length: d.message_length,
                });
            }
            Body::Data(d)
        }
        PacketType::Grant => Body::Grant(Grant {
            offset: layout::get(h, grant::OFFSET) as u32,
            priority: layout::get(h, grant::PRIORITY) as u8,
        }),
        PacketType::Resend => Body::Resend(Resend {
            offset: layout::get(h, resend::OFFSET) as u32,
            length: layout::get(h, resend::LENGTH) as u32,
            priority: layout::get(h, resend::PRIORITY) as u8,
        }),
        PacketType::Cutoffs => {
            let mut unsched_cutoffs = [0u32; 8];
            for (i, c) in unsched_cutoffs.iter_mut().enumerate() {
                let at = cutoffs::UNSCHED_CUTOFFS.offset + 4 * i;
                *c = u32::from_be_bytes(h[at..at + 4].try_into().unwrap());
            }
            Body::Cutoffs(Cutoffs {
                unsched_cutoffs,
                cutoff_version: layout::get(h, cutoffs::CUTOFF_VERSION) as u16,
            })
        }
        PacketType::Ack => {
            let num_acks = layout::get(h, ack::NUM_ACKS) as u16;
            if num_acks as usize > ack::MAX_ACKS {
                return Err(DecodeError::TooManyAcks(num_acks));
            }
            let acks = (0..num_acks as usize)
                .map(|i| {
                    let e = &h[ack::ACKS.offset + i * ack_entry::LEN..];
                    AckEntry {
                        client_id: layout::get(e, ack_entry::CLIENT_ID),
                        server_port: layout::get(e, ack_entry::SERVER_PORT) as u16,
                    }
                })
                .collect();
            Body::Ack(Acks { acks })
        }
        PacketType::RpcUnknown => Body::RpcUnknown,
        PacketType::Busy => Body::Busy,
        PacketType::Freeze => Body::Freeze,
        PacketType::NeedAck => Body::NeedAck,
    };
    Ok(HomaPacket {
        common: common_header,
        body,
    })
}

/// The RFC 791 header checksum: over a header whose checksum field is 0, the
/// value to put there; over a header with its checksum in place, 0 if valid.
pub fn ipv4_checksum(header: &[u8]) -> u16 {
    !ones_complement_sum(header)
}

fn ones_complement_sum(bytes: &[u8]) -> u16 {
    let mut sum: u32 = bytes
        .chunks(2)
        .map(|c| u32::from(c[0]) << 8 | u32::from(*c.get(1).unwrap_or(&0)))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum as u16
}

/// The TCP-style checksum HomaModule puts in `common.checksum` when it hijacks
/// TCP offloads: over a pseudo-header with protocol 6 and the whole Homa
/// packet, with the checksum field taken as 0. HomaModule never verifies it;
/// this is for matching its frames byte for byte.
pub fn homa_tcp_checksum(src: Ipv4Addr, dst: Ipv4Addr, homa: &[u8]) -> u16 {
    let mut pseudo = Vec::with_capacity(12 + homa.len());
    pseudo.extend_from_slice(&src.octets());
    pseudo.extend_from_slice(&dst.octets());
    pseudo.extend_from_slice(&[0, 6]);
    pseudo.extend_from_slice(&(homa.len() as u16).to_be_bytes());
    pseudo.extend_from_slice(homa);
    let at = 12 + common::CHECKSUM.offset;
    pseudo[at] = 0;
    pseudo[at + 1] = 0;
    !ones_complement_sum(&pseudo)
}

//! The byte layout of every header we put on or take off the wire, as tables.
//!
//! DESIGN NOTES
//! ------------
//! This file is the single source of truth for offsets. The software codec
//! (`frame.rs`) reads and writes every field through these tables, the
//! `decode --json` output names fields by the names here, and the RTL
//! generators in `homa-hw` take their byte offsets from the same constants, so a
//! format change (HomaModule changed it in 2024-07, 2024-12 and 2025-07) is a
//! change to this file alone.
//!
//! Offsets inside the Homa header are relative to the start of the Homa header;
//! [`HOMA_OFFSET`] says where that header starts in a frame we build (Ethernet II
//! with no VLAN tag, IPv4 with no options). A received frame may carry IPv4
//! options, so decoders compute the Homa start from the IHL field instead.
//!
//! Source: HomaModule `homa_wire.h` at [`FORMAT_VERSION`]; see design/WIRE.md.

/// The HomaModule revision whose wire format these tables describe.
pub const FORMAT_VERSION: &str = "HomaModule 9edb958 (2026-07-01; format of 2025-07)";

/// One big-endian field: its name as HomaModule spells it, where it starts
/// (bytes from the start of its header) and how many bytes it spans.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    pub name: &'static str,
    pub offset: usize,
    pub size: usize,
}

impl Field {
    const fn new(name: &'static str, offset: usize, size: usize) -> Field {
        Field { name, offset, size }
    }

    /// First byte after this field.
    pub const fn end(&self) -> usize {
        self.offset + self.size
    }
}

/// Ethernet II header (no 802.1Q tag, no FCS: captures and simulated links
/// carry frames without it).
pub mod eth {
    use super::Field;
    pub const DST: Field = Field::new("dst", 0, 6);
    pub const SRC: Field = Field::new("src", 6, 6);
    pub const ETHERTYPE: Field = Field::new("ethertype", 12, 2);
    pub const HEADER_LEN: usize = 14;
    pub const ETHERTYPE_IPV4: u16 = 0x0800;
    pub const ETHERTYPE_ARP: u16 = 0x0806;
    /// Minimum frame length without FCS; shorter frames are padded by the MAC.
    pub const MIN_FRAME_LEN: usize = 60;
    pub const FIELDS: &[Field] = &[DST, SRC, ETHERTYPE];
}

/// ARP for IPv4 over Ethernet (RFC 826), after the Ethernet header. Linux
/// peers find the card's MAC with it.
pub mod arp {
    use super::Field;
    pub const HTYPE: Field = Field::new("htype", 0, 2);
    pub const PTYPE: Field = Field::new("ptype", 2, 2);
    pub const HLEN: Field = Field::new("hlen", 4, 1);
    pub const PLEN: Field = Field::new("plen", 5, 1);
    pub const OPER: Field = Field::new("oper", 6, 2);
    /// Sender hardware (MAC) and protocol (IPv4) address.
    pub const SHA: Field = Field::new("sha", 8, 6);
    pub const SPA: Field = Field::new("spa", 14, 4);
    /// Target hardware and protocol address.
    pub const THA: Field = Field::new("tha", 18, 6);
    pub const TPA: Field = Field::new("tpa", 24, 4);
    pub const PACKET_LEN: usize = 28;
    pub const HTYPE_ETHERNET: u16 = 1;
    pub const OPER_REQUEST: u16 = 1;
    pub const OPER_REPLY: u16 = 2;
    pub const FIELDS: &[Field] = &[HTYPE, PTYPE, HLEN, PLEN, OPER, SHA, SPA, THA, TPA];
}

/// IPv4 header (RFC 791). We send it without options.
pub mod ipv4 {
    use super::Field;
    pub const VERSION_IHL: Field = Field::new("version_ihl", 0, 1);
    /// Homa's priority is the top three bits: `tos = level << 5`.
    pub const TOS: Field = Field::new("tos", 1, 1);
    pub const TOTAL_LENGTH: Field = Field::new("total_length", 2, 2);
    pub const IDENTIFICATION: Field = Field::new("identification", 4, 2);
    pub const FLAGS_FRAGMENT: Field = Field::new("flags_fragment", 6, 2);
    pub const TTL: Field = Field::new("ttl", 8, 1);
    pub const PROTOCOL: Field = Field::new("protocol", 9, 1);
    pub const CHECKSUM: Field = Field::new("checksum", 10, 2);
    pub const SRC: Field = Field::new("saddr", 12, 4);
    pub const DST: Field = Field::new("daddr", 16, 4);
    pub const HEADER_LEN: usize = 20;
    /// IANA's number for Homa.
    pub const PROTOCOL_HOMA: u8 = 146;
    /// The experimental number that HomaModule used before 146 was assigned.
    pub const PROTOCOL_HOMA_OLD: u8 = 253;
    /// Bit 13 of FLAGS_FRAGMENT: more fragments follow.
    pub const FLAG_MORE_FRAGMENTS: u16 = 0x2000;
    /// Bit 14 of FLAGS_FRAGMENT: don't fragment.
    pub const FLAG_DONT_FRAGMENT: u16 = 0x4000;
    pub const FRAGMENT_OFFSET_MASK: u16 = 0x1fff;
    pub const FIELDS: &[Field] = &[
        VERSION_IHL,
        TOS,
        TOTAL_LENGTH,
        IDENTIFICATION,
        FLAGS_FRAGMENT,
        TTL,
        PROTOCOL,
        CHECKSUM,
        SRC,
        DST,
    ];
}

/// Where the Homa header starts in a frame we build.
pub const HOMA_OFFSET: usize = eth::HEADER_LEN + ipv4::HEADER_LEN;

/// The 28-byte header every Homa packet starts with (shaped like TCP's).
pub mod common {
    use super::Field;
    pub const SPORT: Field = Field::new("sport", 0, 2);
    pub const DPORT: Field = Field::new("dport", 2, 2);
    /// DATA: offset of the first payload byte when `seg.offset` is -1.
    pub const SEQUENCE: Field = Field::new("sequence", 4, 4);
    /// Unused by Homa (TCP's ack field, 3 of its 4 bytes).
    pub const ACK: Field = Field::new("ack", 8, 3);
    pub const TYPE: Field = Field::new("type", 11, 1);
    /// High nibble: header length in 4-byte words.
    pub const DOFF: Field = Field::new("doff", 12, 1);
    /// 0, or SYN|RST (6) when HomaModule hijacks TCP offloads.
    pub const FLAGS: Field = Field::new("flags", 13, 1);
    pub const WINDOW: Field = Field::new("window", 14, 2);
    /// Set only when hijacking; never verified on receive.
    pub const CHECKSUM: Field = Field::new("checksum", 16, 2);
    /// 0xb97d when hijacking.
    pub const URGENT: Field = Field::new("urgent", 18, 2);
    /// The RPC id as the sender numbers it (client ids even).
    pub const SENDER_ID: Field = Field::new("sender_id", 20, 8);
    pub const HEADER_LEN: usize = 28;
    pub const FIELDS: &[Field] = &[
        SPORT, DPORT, SEQUENCE, ACK, TYPE, DOFF, FLAGS, WINDOW, CHECKSUM, URGENT, SENDER_ID,
    ];
    /// `doff` we send on control packets: 5 words in the high nibble.
    pub const DOFF_CONTROL: u8 = 0x50;
    /// `doff` we send on DATA: (56 - 4) / 4 = 13 words in the high nibble.
    pub const DOFF_DATA: u8 = 0xd0;
    /// `flags` HomaModule sends when hijacking TCP (SYN|RST).
    pub const FLAGS_HIJACK: u8 = 0x06;
    /// `urgent` HomaModule sends when hijacking TCP.
    pub const URGENT_HIJACK: u16 = 0xb97d;
}

/// One piggybacked or explicit acknowledgement: {client_id 8, server_port 2}.
pub mod ack_entry {
    use super::Field;
    pub const CLIENT_ID: Field = Field::new("client_id", 0, 8);
    pub const SERVER_PORT: Field = Field::new("server_port", 8, 2);
    pub const LEN: usize = 10;
}

/// DATA (0x10): common header, then these, then the payload.
pub mod data {
    use super::Field;
    pub const MESSAGE_LENGTH: Field = Field::new("message_length", 28, 4);
    pub const INCOMING: Field = Field::new("incoming", 32, 4);
    pub const ACK_CLIENT_ID: Field = Field::new("ack.client_id", 36, 8);
    pub const ACK_SERVER_PORT: Field = Field::new("ack.server_port", 44, 2);
    pub const CUTOFF_VERSION: Field = Field::new("cutoff_version", 46, 2);
    pub const RETRANSMIT: Field = Field::new("retransmit", 48, 1);
    pub const PAD: Field = Field::new("pad", 49, 3);
    /// Offset of this packet's payload in the message; -1 means "use sequence".
    pub const SEG_OFFSET: Field = Field::new("seg.offset", 52, 4);
    pub const HEADER_LEN: usize = 56;
    /// `seg.offset` value meaning "the offset is in `sequence`".
    pub const SEG_OFFSET_USE_SEQUENCE: u32 = 0xffff_ffff;
    pub const FIELDS: &[Field] = &[
        MESSAGE_LENGTH,
        INCOMING,
        ACK_CLIENT_ID,
        ACK_SERVER_PORT,
        CUTOFF_VERSION,
        RETRANSMIT,
        PAD,
        SEG_OFFSET,
    ];
}

/// GRANT (0x11).
pub mod grant {
    use super::Field;
    /// The sender may transmit every byte below this offset.
    pub const OFFSET: Field = Field::new("offset", 28, 4);
    /// Priority for the granted bytes.
    pub const PRIORITY: Field = Field::new("priority", 32, 1);
    pub const HEADER_LEN: usize = 33;
    pub const FIELDS: &[Field] = &[OFFSET, PRIORITY];
}

/// RESEND (0x12).
pub mod resend {
    use super::Field;
    pub const OFFSET: Field = Field::new("offset", 28, 4);
    /// -1 (0xffffffff): everything sent so far.
    pub const LENGTH: Field = Field::new("length", 32, 4);
    /// Priority for the retransmitted data.
    pub const PRIORITY: Field = Field::new("priority", 36, 1);
    pub const HEADER_LEN: usize = 37;
    pub const FIELDS: &[Field] = &[OFFSET, LENGTH, PRIORITY];
}

/// CUTOFFS (0x15).
pub mod cutoffs {
    use super::Field;
    /// Eight 4-byte limits, `unsched_cutoffs[i]` is the largest message sent
    /// unscheduled at priority `i`.
    pub const UNSCHED_CUTOFFS: Field = Field::new("unsched_cutoffs", 28, 32);
    pub const CUTOFF_VERSION: Field = Field::new("cutoff_version", 60, 2);
    pub const HEADER_LEN: usize = 62;
    pub const FIELDS: &[Field] = &[UNSCHED_CUTOFFS, CUTOFF_VERSION];
}

/// ACK (0x18): always the full 80 bytes, unused entries zero.
pub mod ack {
    use super::Field;
    pub const NUM_ACKS: Field = Field::new("num_acks", 28, 2);
    pub const ACKS: Field = Field::new("acks", 30, 50);
    pub const MAX_ACKS: usize = 5;
    pub const HEADER_LEN: usize = 80;
    pub const FIELDS: &[Field] = &[NUM_ACKS, ACKS];
}

/// Homa header length of each packet type without payload; the common header
/// alone for RPC_UNKNOWN, BUSY, FREEZE and NEED_ACK.
pub const fn header_len(packet_type: crate::PacketType) -> usize {
    use crate::PacketType::*;
    match packet_type {
        Data => data::HEADER_LEN,
        Grant => grant::HEADER_LEN,
        Resend => resend::HEADER_LEN,
        Cutoffs => cutoffs::HEADER_LEN,
        Ack => ack::HEADER_LEN,
        RpcUnknown | Busy | Freeze | NeedAck => common::HEADER_LEN,
    }
}

/// The type-specific fields of a packet type (after the common header).
pub fn type_fields(packet_type: crate::PacketType) -> &'static [Field] {
    use crate::PacketType::*;
    match packet_type {
        Data => data::FIELDS,
        Grant => grant::FIELDS,
        Resend => resend::FIELDS,
        Cutoffs => cutoffs::FIELDS,
        Ack => ack::FIELDS,
        RpcUnknown | Busy | Freeze | NeedAck => &[],
    }
}

/// Reads a big-endian field of up to 8 bytes. Panics if `bytes` is too short:
/// callers check lengths before reading.
pub fn get(bytes: &[u8], field: Field) -> u64 {
    debug_assert!(field.size <= 8);
    bytes[field.offset..field.end()]
        .iter()
        .fold(0u64, |acc, &b| (acc << 8) | b as u64)
}

/// Writes a big-endian field of up to 8 bytes (the low `size` bytes of `value`).
pub fn put(bytes: &mut [u8], field: Field, value: u64) {
    debug_assert!(field.size <= 8);
    for (i, byte) in bytes[field.offset..field.end()]
        .iter_mut()
        .rev()
        .enumerate()
    {
        *byte = (value >> (8 * i)) as u8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fields of a header tile it: each starts where the one before ended and the
    /// last ends at the header length. Catches a typo in any offset.
    fn assert_tiles(start: usize, fields: &[Field], header_len: usize) {
        let mut at = start;
        for f in fields {
            assert_eq!(
                f.offset, at,
                "field {} starts at {}, expected {}",
                f.name, f.offset, at
            );
            at = f.end();
        }
        assert_eq!(at, header_len);
    }

    #[test]
    fn every_header_is_tiled_by_its_fields() {
        assert_tiles(0, eth::FIELDS, eth::HEADER_LEN);
        assert_tiles(0, ipv4::FIELDS, ipv4::HEADER_LEN);
        assert_tiles(0, arp::FIELDS, arp::PACKET_LEN);
        assert_tiles(0, common::FIELDS, common::HEADER_LEN);
        assert_tiles(common::HEADER_LEN, data::FIELDS, data::HEADER_LEN);
        assert_tiles(common::HEADER_LEN, grant::FIELDS, grant::HEADER_LEN);
        assert_tiles(common::HEADER_LEN, resend::FIELDS, resend::HEADER_LEN);
        assert_tiles(common::HEADER_LEN, cutoffs::FIELDS, cutoffs::HEADER_LEN);
        assert_tiles(common::HEADER_LEN, ack::FIELDS, ack::HEADER_LEN);
        assert_eq!(ack::ACKS.size, ack::MAX_ACKS * ack_entry::LEN);
    }

    #[test]
    fn get_and_put_are_big_endian() {
        let mut b = [0u8; 8];
        let f = Field::new("x", 1, 3);
        put(&mut b, f, 0x0012_3456);
        assert_eq!(b, [0, 0x12, 0x34, 0x56, 0, 0, 0, 0]);
        assert_eq!(get(&b, f), 0x12_3456);
    }
}

//! TX header builder: the Ethernet, IPv4 and Homa headers of one outgoing
//! packet, as the first two beats of its frame.
//!
//! DESIGN NOTES
//! ------------
//! The mirror of the RX parser. Fields arrive as ports; the builder places each
//! at its `homa_wire::layout` position in a 128-byte big-endian window (a shift
//! by a constant, so wiring after synthesis), computes what is derived (IPv4
//! total length and header checksum, `doff`, the type byte), and byte-swaps the
//! two halves into AXI-Stream lane order. DATA's header is 90 bytes, so its
//! payload starts at lane 26 of beat 1: the framer downstream ORs the payload
//! in there and in the beats after. Control packets fit in the two beats.
//!
//! The headers are those `homa_wire::Frame::encode` writes for a packet our
//! NIC sends: `seg.offset` set (and `sequence` equal to it for DATA), flags,
//! urgent, checksum and window 0, DF set, TTL 64, protocol 146. The block
//! testbench holds the two to byte equality on random packets.
//!
//! CUTOFFS and ACK carry more than ports should: their bytes after the common
//! header come in as one 52-byte `body` (big-endian, the first byte of the
//! body in its top bits), which the sender packs from its tables.
//!
//! Pipeline, two stages, a packet per cycle (`in_valid` may be high every
//! cycle). The IPv4 total length and checksum depend on the payload length,
//! which reaches this block late (the TX engine computes it from the
//! descriptor the same cycle), and a ten-word ones'-complement sum folded
//! twice does not fit one cycle at 250 MHz with it: before this split, the
//! path from the TX engine's descriptor register through the payload length,
//! the total length and the checksum to beat 0 was 18 LUT levels (6 of them
//! MUXF) and 22 carry cells, the core's deepest (`make synth`); now each
//! stage is at most 6.
//! - Stage 1 (the edge that samples the fields): everything but the length
//!   and checksum, as the two beats in lane order (`s1_beat0`, `s1_beat1`,
//!   DATA's beat 1 already masked to its header lanes); the checksum's words
//!   in two partial sums: addresses, ID and constants (`s1_sum`), and the TOS
//!   byte with the type's part of the total length (`s1_sum_type`), apart so
//!   that the late TOS and the type decode do not meet the long sum; the
//!   payload length, zero for control packets (`s1_payload`); the type's
//!   parts of the total and frame lengths (`s1_total_base`, `s1_frame_base`)
//!   and the header length.
//! - Stage 2 (the output registers): total length = `s1_payload +
//!   s1_total_base`; checksum = not(fold(fold(`s1_sum + s1_sum_type +
//!   s1_payload`))); both ORed into beat 0 at their lanes; frame length =
//!   `s1_payload + s1_frame_base`.
//!
//! The stages hold no state across packets, so nothing needs a bypass.
//!
//! Timing: inputs are sampled at the edge where `in_valid` is high; the
//! frame's header beats and lengths are on the outputs after the next edge,
//! with `out_valid` (two cycles from `in_valid` to `out_valid`).

use rust_hdl::prelude::*;

use crate::leaf::byte_swap::ByteSwap512;
use homa_wire::layout::{self, common, data, eth, grant, ipv4, resend, Field, HOMA_OFFSET};
use homa_wire::PacketType;

/// Header bytes the builder produces: two beats.
pub const WINDOW_BYTES: usize = 128;
/// Bytes of `body` (CUTOFFS and ACK: everything after the common header).
pub const BODY_BYTES: usize = layout::ack::HEADER_LEN - common::HEADER_LEN;

fn lsb(base: usize, field: Field) -> Constant<Bits<16>> {
    let end = base + field.end();
    assert!(end <= WINDOW_BYTES);
    Constant::new(((8 * (WINDOW_BYTES - end)) as u64).to_bits())
}

/// A window position in the first beat, as a position in that beat's half.
fn in_beat0(at: Constant<Bits<16>>) -> Constant<Bits<16>> {
    let at = at.val().index();
    assert!(at >= 8 * WINDOW_BYTES / 2, "not in beat 0");
    Constant::new(((at - 8 * WINDOW_BYTES / 2) as u64).to_bits())
}

fn c16(v: u64) -> Constant<Bits<16>> {
    Constant::new(v.to_bits())
}

fn c8(v: u8) -> Constant<Bits<8>> {
    Constant::new((v as u64).to_bits())
}

#[derive(LogicBlock)]
pub struct TxHeaderBuilder {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: the headers in the pipeline are forgotten (else
    /// one built before a card reset would start a frame after it).
    pub reset: Signal<In, bool>,
    /// Sample the fields below this cycle.
    pub in_valid: Signal<In, bool>,
    pub dst_mac: Signal<In, Bits<48>>,
    pub src_mac: Signal<In, Bits<48>>,
    pub src_ip: Signal<In, Bits<32>>,
    pub dst_ip: Signal<In, Bits<32>>,
    /// Homa priority level 0..7, sent in the top bits of the TOS byte (not
    /// named `priority`: a SystemVerilog keyword).
    pub level: Signal<In, Bits<3>>,
    pub ip_id: Signal<In, Bits<16>>,
    /// A `homa_wire::PacketType` code.
    pub packet_type: Signal<In, Bits<8>>,
    pub sport: Signal<In, Bits<16>>,
    pub dport: Signal<In, Bits<16>>,
    pub sender_id: Signal<In, Bits<64>>,
    /// DATA: offset of the payload in the message (`sequence` and `seg.offset`).
    pub data_offset: Signal<In, Bits<32>>,
    pub message_length: Signal<In, Bits<32>>,
    pub incoming: Signal<In, Bits<32>>,
    pub ack_client_id: Signal<In, Bits<64>>,
    pub ack_server_port: Signal<In, Bits<16>>,
    pub cutoff_version: Signal<In, Bits<16>>,
    pub retransmit: Signal<In, bool>,
    /// DATA: payload bytes that will follow the header.
    pub payload_len: Signal<In, Bits<16>>,
    /// GRANT and RESEND: offset; RESEND: length; both: their priority byte.
    pub ctl_offset: Signal<In, Bits<32>>,
    pub ctl_length: Signal<In, Bits<32>>,
    pub ctl_priority: Signal<In, Bits<8>>,
    /// CUTOFFS and ACK: the bytes after the common header, first byte on top.
    pub body: Signal<In, Bits<{ 8 * BODY_BYTES }>>,

    /// The header beats below are valid (one cycle after `in_valid`).
    pub out_valid: Signal<Out, bool>,
    /// Bytes 0..63 of the frame, byte 0 in lane 0.
    pub out_beat0: Signal<Out, Bits<512>>,
    /// Bytes 64..127 of the frame where they are header, zero elsewhere.
    pub out_beat1: Signal<Out, Bits<512>>,
    /// Length of the whole frame, payload included.
    pub out_frame_len: Signal<Out, Bits<16>>,
    /// Length of the headers (90 for DATA): where the payload starts.
    pub out_header_len: Signal<Out, Bits<16>>,

    swap_hi: ByteSwap512,
    swap_lo: ByteSwap512,
    /// Stage 2's length and checksum, placed in beat 0's big-endian half.
    swap_len: ByteSwap512,
    // --- stage 1: combinational over the inputs ---
    is_data: Signal<Local, bool>,
    /// Homa header bytes of a control packet's type (0 for DATA).
    homa_len: Signal<Local, Bits<16>>,
    tos: Signal<Local, Bits<8>>,
    doff: Signal<Local, Bits<8>>,
    /// What the total length adds to the payload: the IPv4 and Homa headers.
    total_base: Signal<Local, Bits<16>>,
    eth_ip: Signal<Local, Bits<1024>>,
    common_part: Signal<Local, Bits<1024>>,
    type_part: Signal<Local, Bits<1024>>,
    window: Signal<Local, Bits<1024>>,
    // --- stage 1 registers ---
    s1_valid: DFF<bool>,
    /// The header beats in lane order, total length and checksum still 0.
    s1_beat0: DFF<Bits<512>>,
    s1_beat1: DFF<Bits<512>>,
    /// Ones'-complement sum (unfolded) of the IPv4 header's words that do
    /// not depend on the packet type or priority: addresses, ID, constants.
    s1_sum: DFF<Bits<20>>,
    /// The rest of the sum but the payload length: the TOS byte and the
    /// total length less the payload.
    s1_sum_type: DFF<Bits<20>>,
    /// DATA: payload bytes; control packets: 0.
    s1_payload: DFF<Bits<16>>,
    /// Total length and frame length less `s1_payload`.
    s1_total_base: DFF<Bits<16>>,
    s1_frame_base: DFF<Bits<16>>,
    s1_header_len: DFF<Bits<16>>,
    // --- stage 2: combinational over the stage 1 registers ---
    total_length: Signal<Local, Bits<16>>,
    ip_sum: Signal<Local, Bits<20>>,
    ip_sum_folded: Signal<Local, Bits<20>>,
    ip_sum_final: Signal<Local, Bits<20>>,
    ip_checksum: Signal<Local, Bits<16>>,
    len_window: Signal<Local, Bits<512>>,
    beat0: DFF<Bits<512>>,
    beat1: DFF<Bits<512>>,
    frame_len: DFF<Bits<16>>,
    header_len: DFF<Bits<16>>,
    valid: DFF<bool>,
    /// Mask of the lanes of beat 1 that are header for DATA (lanes 0..25).
    data_beat1_mask: Constant<Bits<512>>,

    at_dst_mac: Constant<Bits<16>>,
    at_src_mac: Constant<Bits<16>>,
    at_ethertype: Constant<Bits<16>>,
    at_version_ihl: Constant<Bits<16>>,
    at_tos: Constant<Bits<16>>,
    at_identification: Constant<Bits<16>>,
    at_flags_fragment: Constant<Bits<16>>,
    at_ttl: Constant<Bits<16>>,
    at_protocol: Constant<Bits<16>>,
    /// Where the IPv4 total length and checksum go, in the window's first half.
    at_total_length_beat0: Constant<Bits<16>>,
    at_checksum_beat0: Constant<Bits<16>>,
    at_src_ip: Constant<Bits<16>>,
    at_dst_ip: Constant<Bits<16>>,
    at_sport: Constant<Bits<16>>,
    at_dport: Constant<Bits<16>>,
    at_sequence: Constant<Bits<16>>,
    at_type: Constant<Bits<16>>,
    at_doff: Constant<Bits<16>>,
    at_sender_id: Constant<Bits<16>>,
    at_message_length: Constant<Bits<16>>,
    at_incoming: Constant<Bits<16>>,
    at_ack_client_id: Constant<Bits<16>>,
    at_ack_server_port: Constant<Bits<16>>,
    at_cutoff_version: Constant<Bits<16>>,
    at_retransmit: Constant<Bits<16>>,
    at_seg_offset: Constant<Bits<16>>,
    at_ctl_offset: Constant<Bits<16>>,
    at_resend_length: Constant<Bits<16>>,
    at_grant_priority: Constant<Bits<16>>,
    at_resend_priority: Constant<Bits<16>>,
    at_body: Constant<Bits<16>>,
    ethertype_ipv4: Constant<Bits<16>>,
    version_ihl: Constant<Bits<8>>,
    dont_fragment: Constant<Bits<16>>,
    ttl: Constant<Bits<8>>,
    protocol: Constant<Bits<8>>,
    /// The IPv4 header's words that do not depend on the packet, summed:
    /// version and IHL (the TOS byte is added apart), flags, TTL and protocol.
    words_fixed: Constant<Bits<20>>,
    ip_header_len: Constant<Bits<16>>,
    doff_data: Constant<Bits<8>>,
    doff_control: Constant<Bits<8>>,
    type_data: Constant<Bits<8>>,
    type_grant: Constant<Bits<8>>,
    type_resend: Constant<Bits<8>>,
    type_cutoffs: Constant<Bits<8>>,
    type_ack: Constant<Bits<8>>,
    len_data: Constant<Bits<16>>,
    len_grant: Constant<Bits<16>>,
    len_resend: Constant<Bits<16>>,
    len_cutoffs: Constant<Bits<16>>,
    len_ack: Constant<Bits<16>>,
    len_common: Constant<Bits<16>>,
    homa_offset: Constant<Bits<16>>,
}

impl Default for TxHeaderBuilder {
    fn default() -> Self {
        let ip = eth::HEADER_LEN;
        let h = HOMA_OFFSET;
        let len = |t: PacketType| c16(layout::header_len(t) as u64);
        let ty = |t: PacketType| c8(t as u8);
        let mut data_beat1_mask = Bits::<512>::default();
        for bit in 0..8 * (data::HEADER_LEN + HOMA_OFFSET - 64) {
            data_beat1_mask = data_beat1_mask.replace_bit(bit, true);
        }
        Self {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            dst_mac: Default::default(),
            src_mac: Default::default(),
            src_ip: Default::default(),
            dst_ip: Default::default(),
            level: Default::default(),
            ip_id: Default::default(),
            packet_type: Default::default(),
            sport: Default::default(),
            dport: Default::default(),
            sender_id: Default::default(),
            data_offset: Default::default(),
            message_length: Default::default(),
            incoming: Default::default(),
            ack_client_id: Default::default(),
            ack_server_port: Default::default(),
            cutoff_version: Default::default(),
            retransmit: Default::default(),
            payload_len: Default::default(),
            ctl_offset: Default::default(),
            ctl_length: Default::default(),
            ctl_priority: Default::default(),
            body: Default::default(),
            out_valid: Default::default(),
            out_beat0: Default::default(),
            out_beat1: Default::default(),
            out_frame_len: Default::default(),
            out_header_len: Default::default(),
            swap_hi: Default::default(),
            swap_lo: Default::default(),
            swap_len: Default::default(),
            is_data: Default::default(),
            homa_len: Default::default(),
            tos: Default::default(),
            doff: Default::default(),
            total_base: Default::default(),
            eth_ip: Default::default(),
            common_part: Default::default(),
            type_part: Default::default(),
            window: Default::default(),
            s1_valid: Default::default(),
            s1_beat0: Default::default(),
            s1_beat1: Default::default(),
            s1_sum: Default::default(),
            s1_sum_type: Default::default(),
            s1_payload: Default::default(),
            s1_total_base: Default::default(),
            s1_frame_base: Default::default(),
            s1_header_len: Default::default(),
            total_length: Default::default(),
            ip_sum: Default::default(),
            ip_sum_folded: Default::default(),
            ip_sum_final: Default::default(),
            ip_checksum: Default::default(),
            len_window: Default::default(),
            beat0: Default::default(),
            beat1: Default::default(),
            frame_len: Default::default(),
            header_len: Default::default(),
            valid: Default::default(),
            data_beat1_mask: Constant::new(data_beat1_mask),
            at_dst_mac: lsb(0, eth::DST),
            at_src_mac: lsb(0, eth::SRC),
            at_ethertype: lsb(0, eth::ETHERTYPE),
            at_version_ihl: lsb(ip, ipv4::VERSION_IHL),
            at_tos: lsb(ip, ipv4::TOS),
            at_identification: lsb(ip, ipv4::IDENTIFICATION),
            at_flags_fragment: lsb(ip, ipv4::FLAGS_FRAGMENT),
            at_ttl: lsb(ip, ipv4::TTL),
            at_protocol: lsb(ip, ipv4::PROTOCOL),
            at_total_length_beat0: in_beat0(lsb(ip, ipv4::TOTAL_LENGTH)),
            at_checksum_beat0: in_beat0(lsb(ip, ipv4::CHECKSUM)),
            at_src_ip: lsb(ip, ipv4::SRC),
            at_dst_ip: lsb(ip, ipv4::DST),
            at_sport: lsb(h, common::SPORT),
            at_dport: lsb(h, common::DPORT),
            at_sequence: lsb(h, common::SEQUENCE),
            at_type: lsb(h, common::TYPE),
            at_doff: lsb(h, common::DOFF),
            at_sender_id: lsb(h, common::SENDER_ID),
            at_message_length: lsb(h, data::MESSAGE_LENGTH),
            at_incoming: lsb(h, data::INCOMING),
            at_ack_client_id: lsb(h, data::ACK_CLIENT_ID),
            at_ack_server_port: lsb(h, data::ACK_SERVER_PORT),
            at_cutoff_version: lsb(h, data::CUTOFF_VERSION),
            at_retransmit: lsb(h, data::RETRANSMIT),
            at_seg_offset: lsb(h, data::SEG_OFFSET),
            at_ctl_offset: lsb(h, grant::OFFSET),
            at_resend_length: lsb(h, resend::LENGTH),
            at_grant_priority: lsb(h, grant::PRIORITY),
            at_resend_priority: lsb(h, resend::PRIORITY),
            at_body: lsb(
                h,
                Field {
                    name: "body",
                    offset: common::HEADER_LEN,
                    size: BODY_BYTES,
                },
            ),
            ethertype_ipv4: c16(eth::ETHERTYPE_IPV4 as u64),
            version_ihl: c8(0x45),
            dont_fragment: c16(ipv4::FLAG_DONT_FRAGMENT as u64),
            ttl: c8(64),
            protocol: c8(ipv4::PROTOCOL_HOMA),
            words_fixed: Constant::new(
                ((0x45u64 << 8)
                    + ipv4::FLAG_DONT_FRAGMENT as u64
                    + ((64u64 << 8) | ipv4::PROTOCOL_HOMA as u64))
                    .to_bits(),
            ),
            ip_header_len: c16(ipv4::HEADER_LEN as u64),
            doff_data: c8(common::DOFF_DATA),
            doff_control: c8(common::DOFF_CONTROL),
            type_data: ty(PacketType::Data),
            type_grant: ty(PacketType::Grant),
            type_resend: ty(PacketType::Resend),
            type_cutoffs: ty(PacketType::Cutoffs),
            type_ack: ty(PacketType::Ack),
            len_data: len(PacketType::Data),
            len_grant: len(PacketType::Grant),
            len_resend: len(PacketType::Resend),
            len_cutoffs: len(PacketType::Cutoffs),
            len_ack: len(PacketType::Ack),
            len_common: c16(common::HEADER_LEN as u64),
            homa_offset: c16(HOMA_OFFSET as u64),
        }
    }
}

impl Logic for TxHeaderBuilder {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            s1_valid,
            s1_beat0,
            s1_beat1,
            s1_sum,
            s1_sum_type,
            s1_payload,
            s1_total_base,
            s1_frame_base,
            s1_header_len,
            beat0,
            beat1,
            frame_len,
            header_len,
            valid
        );

        // ---- stage 1: all but the payload-dependent fields ----
        self.is_data.next = self.packet_type.val() == self.type_data.val();
        self.homa_len.next = self.len_common.val();
        self.doff.next = self.doff_control.val();
        if self.is_data.val() {
            self.homa_len.next = 0.into();
            self.doff.next = self.doff_data.val();
        } else if self.packet_type.val() == self.type_grant.val() {
            self.homa_len.next = self.len_grant.val();
        } else if self.packet_type.val() == self.type_resend.val() {
            self.homa_len.next = self.len_resend.val();
        } else if self.packet_type.val() == self.type_cutoffs.val() {
            self.homa_len.next = self.len_cutoffs.val();
        } else if self.packet_type.val() == self.type_ack.val() {
            self.homa_len.next = self.len_ack.val();
        }
        self.total_base.next = self.ip_header_len.val() + self.homa_len.val();
        if self.is_data.val() {
            self.total_base.next = self.ip_header_len.val() + self.len_data.val();
        }
        self.tos.next = bit_cast::<8, 3>(self.level.val()) << 5;

        // The big-endian window: every field shifted to its place, but the
        // total length and the checksum (stage 2). Built only in a cycle
        // that asks for a header: Verilator evaluates this block on every
        // cycle, and the 1024-bit shifts were a third of the whole core's
        // simulation time (README, simulation speed). In hardware it is an
        // AND per window bit, which the stage 1 registers' load enable
        // (in_valid) makes redundant.
        self.eth_ip.next = 0.into();
        self.common_part.next = 0.into();
        self.type_part.next = 0.into();
        if self.in_valid.val() {
            self.eth_ip.next = (bit_cast::<1024, 48>(self.dst_mac.val()) << self.at_dst_mac.val())
                | (bit_cast::<1024, 48>(self.src_mac.val()) << self.at_src_mac.val())
                | (bit_cast::<1024, 16>(self.ethertype_ipv4.val()) << self.at_ethertype.val())
                | (bit_cast::<1024, 8>(self.version_ihl.val()) << self.at_version_ihl.val())
                | (bit_cast::<1024, 8>(self.tos.val()) << self.at_tos.val())
                | (bit_cast::<1024, 16>(self.ip_id.val()) << self.at_identification.val())
                | (bit_cast::<1024, 16>(self.dont_fragment.val()) << self.at_flags_fragment.val())
                | (bit_cast::<1024, 8>(self.ttl.val()) << self.at_ttl.val())
                | (bit_cast::<1024, 8>(self.protocol.val()) << self.at_protocol.val())
                | (bit_cast::<1024, 32>(self.src_ip.val()) << self.at_src_ip.val())
                | (bit_cast::<1024, 32>(self.dst_ip.val()) << self.at_dst_ip.val());
            self.common_part.next = (bit_cast::<1024, 16>(self.sport.val()) << self.at_sport.val())
                | (bit_cast::<1024, 16>(self.dport.val()) << self.at_dport.val())
                | (bit_cast::<1024, 8>(self.packet_type.val()) << self.at_type.val())
                | (bit_cast::<1024, 8>(self.doff.val()) << self.at_doff.val())
                | (bit_cast::<1024, 64>(self.sender_id.val()) << self.at_sender_id.val());
            if self.is_data.val() {
                self.type_part.next = (bit_cast::<1024, 32>(self.data_offset.val())
                    << self.at_sequence.val())
                    | (bit_cast::<1024, 32>(self.message_length.val())
                        << self.at_message_length.val())
                    | (bit_cast::<1024, 32>(self.incoming.val()) << self.at_incoming.val())
                    | (bit_cast::<1024, 64>(self.ack_client_id.val())
                        << self.at_ack_client_id.val())
                    | (bit_cast::<1024, 16>(self.ack_server_port.val())
                        << self.at_ack_server_port.val())
                    | (bit_cast::<1024, 16>(self.cutoff_version.val())
                        << self.at_cutoff_version.val())
                    | (bit_cast::<1024, 1>(self.retransmit.val().into())
                        << self.at_retransmit.val())
                    | (bit_cast::<1024, 32>(self.data_offset.val()) << self.at_seg_offset.val());
            } else if self.packet_type.val() == self.type_grant.val() {
                self.type_part.next = (bit_cast::<1024, 32>(self.ctl_offset.val())
                    << self.at_ctl_offset.val())
                    | (bit_cast::<1024, 8>(self.ctl_priority.val())
                        << self.at_grant_priority.val());
            } else if self.packet_type.val() == self.type_resend.val() {
                self.type_part.next = (bit_cast::<1024, 32>(self.ctl_offset.val())
                    << self.at_ctl_offset.val())
                    | (bit_cast::<1024, 32>(self.ctl_length.val()) << self.at_resend_length.val())
                    | (bit_cast::<1024, 8>(self.ctl_priority.val())
                        << self.at_resend_priority.val());
            } else if (self.packet_type.val() == self.type_cutoffs.val())
                | (self.packet_type.val() == self.type_ack.val())
            {
                self.type_part.next =
                    bit_cast::<1024, { 8 * BODY_BYTES }>(self.body.val()) << self.at_body.val();
            }
        }
        self.window.next = self.eth_ip.val() | self.common_part.val() | self.type_part.val();

        // Into lane order: byte 0 of each half to lane 0.
        self.swap_hi.beat.next = self.window.val().get_bits::<512>(512);
        self.swap_lo.beat.next = self.window.val().get_bits::<512>(0);

        self.s1_valid.d.next = self.in_valid.val();
        if self.in_valid.val() {
            self.s1_beat0.d.next = self.swap_hi.swapped.val();
            self.s1_beat1.d.next = self.swap_lo.swapped.val();
            self.s1_payload.d.next = 0.into();
            if self.is_data.val() {
                // Only the header lanes: the payload goes in the rest.
                self.s1_beat1.d.next = self.swap_lo.swapped.val() & self.data_beat1_mask.val();
                self.s1_payload.d.next = self.payload_len.val();
            }
            // The IPv4 header's words in two sums, so that neither the type
            // decode nor the TOS byte (late from the TX engine) meets the
            // long sum of the addresses in this stage.
            self.s1_sum.d.next = self.words_fixed.val()
                + bit_cast::<20, 16>(self.ip_id.val())
                + bit_cast::<20, 16>(self.src_ip.val().get_bits::<16>(16))
                + bit_cast::<20, 16>(self.src_ip.val().get_bits::<16>(0))
                + bit_cast::<20, 16>(self.dst_ip.val().get_bits::<16>(16))
                + bit_cast::<20, 16>(self.dst_ip.val().get_bits::<16>(0));
            self.s1_sum_type.d.next =
                bit_cast::<20, 8>(self.tos.val()) + bit_cast::<20, 16>(self.total_base.val());
            self.s1_total_base.d.next = self.total_base.val();
            self.s1_frame_base.d.next =
                self.homa_offset.val() - self.ip_header_len.val() + self.total_base.val();
            self.s1_header_len.d.next = self.homa_offset.val() + self.homa_len.val();
            if self.is_data.val() {
                self.s1_header_len.d.next = self.homa_offset.val() + self.len_data.val();
            }
        }

        // ---- stage 2: the payload-dependent fields ----
        self.total_length.next = self.s1_payload.q.val() + self.s1_total_base.q.val();
        self.ip_sum.next = self.s1_sum.q.val()
            + self.s1_sum_type.q.val()
            + bit_cast::<20, 16>(self.s1_payload.q.val());
        self.ip_sum_folded.next = (self.ip_sum.val() & 0xffff) + (self.ip_sum.val() >> 16);
        self.ip_sum_final.next =
            (self.ip_sum_folded.val() & 0xffff) + (self.ip_sum_folded.val() >> 16);
        self.ip_checksum.next = !self.ip_sum_final.val().get_bits::<16>(0);
        // Both fields are in the first half of the window (beat 0).
        self.len_window.next = (bit_cast::<512, 16>(self.total_length.val())
            << self.at_total_length_beat0.val())
            | (bit_cast::<512, 16>(self.ip_checksum.val()) << self.at_checksum_beat0.val());
        self.swap_len.beat.next = self.len_window.val();

        self.valid.d.next = self.s1_valid.q.val();
        if self.s1_valid.q.val() {
            self.beat0.d.next = self.s1_beat0.q.val() | self.swap_len.swapped.val();
            self.beat1.d.next = self.s1_beat1.q.val();
            self.frame_len.d.next = self.s1_payload.q.val() + self.s1_frame_base.q.val();
            self.header_len.d.next = self.s1_header_len.q.val();
        }
        if self.reset.val() {
            self.s1_valid.d.next = false;
            self.valid.d.next = false;
        }
        self.out_valid.next = self.valid.q.val();
        self.out_beat0.next = self.beat0.q.val();
        self.out_beat1.next = self.beat1.q.val();
        self.out_frame_len.next = self.frame_len.q.val();
        self.out_header_len.next = self.header_len.q.val();
    }
}

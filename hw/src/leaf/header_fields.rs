//! Header fields of a received frame, sliced out of its header window.
//!
//! The window is the frame's first 128 bytes, byte-swapped so that byte 0 is
//! in bits 1023:1016 (see `byte_swap`): every big-endian field is then a slice
//! at a constant position taken from `homa_wire::layout`. Pure wiring; used by
//! the RX parser for its verdict record and by the RX engine for the frames it
//! delivers, so the positions live in one place. Fields of a packet type other
//! than the frame's are meaningless, not zero.

use rust_hdl::prelude::*;

use homa_wire::layout::{
    self, common, cutoffs, data, eth, grant, ipv4, resend, Field, HOMA_OFFSET,
};
use homa_wire::PacketType;

/// Bytes of header window: two beats.
pub const WINDOW_BYTES: usize = 128;

/// Bit position in the window of the least significant bit of a field at
/// frame byte `base + field.offset`.
pub fn window_lsb(base: usize, field: Field) -> Constant<Bits<16>> {
    let end = base + field.end();
    assert!(
        end <= WINDOW_BYTES,
        "field {} ends past the header window",
        field.name
    );
    Constant::new(((8 * (WINDOW_BYTES - end)) as u64).to_bits())
}

#[derive(LogicBlock)]
pub struct HeaderFields {
    /// The frame's first 128 bytes, byte 0 in bits 1023:1016.
    pub window: Signal<In, Bits<1024>>,
    /// Homa packet type.
    pub packet_type: Signal<Out, Bits<8>>,
    pub src_mac: Signal<Out, Bits<48>>,
    pub src_ip: Signal<Out, Bits<32>>,
    pub dst_ip: Signal<Out, Bits<32>>,
    /// Homa priority level, the top three bits of the TOS byte.
    pub level: Signal<Out, Bits<3>>,
    /// IPv4 total length.
    pub total_length: Signal<Out, Bits<16>>,
    pub sport: Signal<Out, Bits<16>>,
    pub dport: Signal<Out, Bits<16>>,
    pub sender_id: Signal<Out, Bits<64>>,
    /// DATA: message length, payload offset in the message (either of
    /// HomaModule's forms), payload bytes (IPv4 total length less headers).
    pub message_length: Signal<Out, Bits<32>>,
    pub payload_offset: Signal<Out, Bits<32>>,
    pub payload_len: Signal<Out, Bits<16>>,
    /// DATA: bytes the sender will send without more grants.
    pub incoming: Signal<Out, Bits<32>>,
    /// GRANT and RESEND: offset; RESEND: length; both: their priority byte.
    pub offset: Signal<Out, Bits<32>>,
    pub length: Signal<Out, Bits<32>>,
    pub ctl_priority: Signal<Out, Bits<8>>,
    /// DATA: the version of the receiver's cutoffs the sender used, and the
    /// ack it carries (client id 0: none).
    pub cutoff_version: Signal<Out, Bits<16>>,
    pub ack_client_id: Signal<Out, Bits<64>>,
    pub ack_server_port: Signal<Out, Bits<16>>,
    /// CUTOFFS: the eight limits, `unsched_cutoffs[0]` in the top 32 bits,
    /// and their version.
    pub unsched_cutoffs: Signal<Out, Bits<256>>,
    pub cutoffs_version: Signal<Out, Bits<16>>,
    seg_offset: Signal<Local, Bits<32>>,
    at_src_mac: Constant<Bits<16>>,
    at_tos: Constant<Bits<16>>,
    at_total_length: Constant<Bits<16>>,
    at_src_ip: Constant<Bits<16>>,
    at_dst_ip: Constant<Bits<16>>,
    at_sport: Constant<Bits<16>>,
    at_dport: Constant<Bits<16>>,
    at_sequence: Constant<Bits<16>>,
    at_type: Constant<Bits<16>>,
    at_sender_id: Constant<Bits<16>>,
    at_message_length: Constant<Bits<16>>,
    at_seg_offset: Constant<Bits<16>>,
    at_incoming: Constant<Bits<16>>,
    at_offset: Constant<Bits<16>>,
    at_resend_length: Constant<Bits<16>>,
    at_grant_priority: Constant<Bits<16>>,
    at_resend_priority: Constant<Bits<16>>,
    at_cutoff_version: Constant<Bits<16>>,
    at_ack_client_id: Constant<Bits<16>>,
    at_ack_server_port: Constant<Bits<16>>,
    at_unsched_cutoffs: Constant<Bits<16>>,
    at_cutoffs_version: Constant<Bits<16>>,
    seg_offset_use_sequence: Constant<Bits<32>>,
    data_headers: Constant<Bits<16>>,
    type_resend: Constant<Bits<8>>,
}

impl Default for HeaderFields {
    fn default() -> Self {
        let ip = eth::HEADER_LEN;
        let h = HOMA_OFFSET;
        Self {
            window: Default::default(),
            packet_type: Default::default(),
            src_mac: Default::default(),
            src_ip: Default::default(),
            dst_ip: Default::default(),
            level: Default::default(),
            total_length: Default::default(),
            sport: Default::default(),
            dport: Default::default(),
            sender_id: Default::default(),
            message_length: Default::default(),
            payload_offset: Default::default(),
            payload_len: Default::default(),
            incoming: Default::default(),
            offset: Default::default(),
            length: Default::default(),
            ctl_priority: Default::default(),
            cutoff_version: Default::default(),
            ack_client_id: Default::default(),
            ack_server_port: Default::default(),
            unsched_cutoffs: Default::default(),
            cutoffs_version: Default::default(),
            seg_offset: Default::default(),
            at_src_mac: window_lsb(0, eth::SRC),
            // The level is the TOS byte's top three bits: 5 above its lsb.
            at_tos: Constant::new((window_lsb(ip, ipv4::TOS).val().to_u64() + 5).to_bits()),
            at_total_length: window_lsb(ip, ipv4::TOTAL_LENGTH),
            at_src_ip: window_lsb(ip, ipv4::SRC),
            at_dst_ip: window_lsb(ip, ipv4::DST),
            at_sport: window_lsb(h, common::SPORT),
            at_dport: window_lsb(h, common::DPORT),
            at_sequence: window_lsb(h, common::SEQUENCE),
            at_type: window_lsb(h, common::TYPE),
            at_sender_id: window_lsb(h, common::SENDER_ID),
            at_message_length: window_lsb(h, data::MESSAGE_LENGTH),
            at_seg_offset: window_lsb(h, data::SEG_OFFSET),
            at_incoming: window_lsb(h, data::INCOMING),
            at_offset: window_lsb(h, grant::OFFSET),
            at_resend_length: window_lsb(h, resend::LENGTH),
            at_grant_priority: window_lsb(h, grant::PRIORITY),
            at_resend_priority: window_lsb(h, resend::PRIORITY),
            at_cutoff_version: window_lsb(h, data::CUTOFF_VERSION),
            at_ack_client_id: window_lsb(h, data::ACK_CLIENT_ID),
            at_ack_server_port: window_lsb(h, data::ACK_SERVER_PORT),
            at_unsched_cutoffs: window_lsb(h, cutoffs::UNSCHED_CUTOFFS),
            at_cutoffs_version: window_lsb(h, cutoffs::CUTOFF_VERSION),
            seg_offset_use_sequence: Constant::new(
                (data::SEG_OFFSET_USE_SEQUENCE as u64).to_bits(),
            ),
            data_headers: Constant::new(
                ((ipv4::HEADER_LEN + layout::data::HEADER_LEN) as u64).to_bits(),
            ),
            type_resend: Constant::new((PacketType::Resend as u64).to_bits()),
        }
    }
}

impl Logic for HeaderFields {
    #[hdl_gen]
    fn update(&mut self) {
        self.packet_type.next = self.window.val().get_bits::<8>(self.at_type.val().index());
        self.src_mac.next = self
            .window
            .val()
            .get_bits::<48>(self.at_src_mac.val().index());
        self.src_ip.next = self
            .window
            .val()
            .get_bits::<32>(self.at_src_ip.val().index());
        self.dst_ip.next = self
            .window
            .val()
            .get_bits::<32>(self.at_dst_ip.val().index());
        self.level.next = self.window.val().get_bits::<3>(self.at_tos.val().index());
        self.total_length.next = self
            .window
            .val()
            .get_bits::<16>(self.at_total_length.val().index());
        self.sport.next = self
            .window
            .val()
            .get_bits::<16>(self.at_sport.val().index());
        self.dport.next = self
            .window
            .val()
            .get_bits::<16>(self.at_dport.val().index());
        self.sender_id.next = self
            .window
            .val()
            .get_bits::<64>(self.at_sender_id.val().index());
        self.message_length.next = self
            .window
            .val()
            .get_bits::<32>(self.at_message_length.val().index());
        self.seg_offset.next = self
            .window
            .val()
            .get_bits::<32>(self.at_seg_offset.val().index());
        self.payload_offset.next = self.seg_offset.val();
        if self.seg_offset.val() == self.seg_offset_use_sequence.val() {
            self.payload_offset.next = self
                .window
                .val()
                .get_bits::<32>(self.at_sequence.val().index());
        }
        self.payload_len.next = self
            .window
            .val()
            .get_bits::<16>(self.at_total_length.val().index())
            - self.data_headers.val();
        self.incoming.next = self
            .window
            .val()
            .get_bits::<32>(self.at_incoming.val().index());
        self.offset.next = self
            .window
            .val()
            .get_bits::<32>(self.at_offset.val().index());
        self.length.next = self
            .window
            .val()
            .get_bits::<32>(self.at_resend_length.val().index());
        self.ctl_priority.next = self
            .window
            .val()
            .get_bits::<8>(self.at_grant_priority.val().index());
        self.cutoff_version.next = self
            .window
            .val()
            .get_bits::<16>(self.at_cutoff_version.val().index());
        self.ack_client_id.next = self
            .window
            .val()
            .get_bits::<64>(self.at_ack_client_id.val().index());
        self.ack_server_port.next = self
            .window
            .val()
            .get_bits::<16>(self.at_ack_server_port.val().index());
        self.unsched_cutoffs.next = self
            .window
            .val()
            .get_bits::<256>(self.at_unsched_cutoffs.val().index());
        self.cutoffs_version.next = self
            .window
            .val()
            .get_bits::<16>(self.at_cutoffs_version.val().index());
        if self.window.val().get_bits::<8>(self.at_type.val().index()) == self.type_resend.val() {
            self.ctl_priority.next = self
                .window
                .val()
                .get_bits::<8>(self.at_resend_priority.val().index());
        }
    }
}

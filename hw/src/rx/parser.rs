//! RX parser: checks and classifies every received frame, Homa or not.
//!
//! DESIGN NOTES
//! ------------
//! The parser watches a 512-bit AXI-Stream (never back-pressuring it) and,
//! for each frame, produces one verdict record: accept, or the reason for a
//! drop, with the header fields the rest of the RX path needs. It does not
//! hold the payload: a store-and-forward packet FIFO beside it keeps the beats
//! until the verdict says what to do with them, so nothing is written to host
//! memory for a frame that turns out bad (the frame length, needed to check the
//! IPv4 total length, is only known at its last beat).
//!
//! Header window: the first two beats (128 bytes) are kept byte-swapped, so the
//! frame reads as one big-endian number and every field is a constant slice
//! whose position comes from `homa_wire::layout`. A DATA header ends at byte
//! 90, so two beats always suffice.
//!
//! Pipeline (one frame per cycle at most, so back-to-back minimum frames are
//! fine), three stages:
//! - input: the edge that takes a frame's last beat registers the window and
//!   the frame length (`win0`, `win1`, `frame_len`, `check`); the one that
//!   takes beat 0 also the IPv4 header's checksum words in two partial sums
//!   (`ip_sum_a`, `ip_sum_b`: the header is all in beat 0);
//! - checks: the next edge registers each check's outcome as a bit of
//!   `c1_fail` (bit i: check i of the order below failed), the IPv4 header's
//!   ones'-complement sum (the halves added) folded once (`c1_ip_sum`) and DATA's payload end
//!   (`c1_payload_end`), with the window and length carried along;
//! - verdict: the edge after finishes the two checks left (checksum: the
//!   second fold and the compare; payload beyond the message: the compare)
//!   and registers the first failing check's reason.
//!
//! The verdict is visible on `m_meta_*` after that third edge, for one cycle
//! (`m_meta_valid`). Why three: the checks and their priority in one cycle
//! were 15 LUT levels and 15 carry cells (the ten-word checksum sum, two folds
//! and a compare, then the priority chain); split so, each stage is at most 8
//! (`make synth`). The stages keep no state across frames: nothing to bypass.
//!
//! The checks and their order are those of `homa_wire::Frame::decode`, so the
//! first failing check names the same problem in both; the block testbench
//! holds the two to that on random frames. One deliberate difference: the card
//! drops IPv4 headers with options (`IpOptions`) instead of parsing past them,
//! which keeps the Homa header at a fixed offset; Linux peers never send them.

use rust_hdl::prelude::*;

use crate::leaf::byte_swap::ByteSwap512;
use crate::leaf::header_fields::{window_lsb, HeaderFields};
use homa_wire::layout::{self, common, data, eth, ipv4, Field, HOMA_OFFSET};
use homa_wire::{DecodeError, PacketType};

/// Bytes of header kept per frame: two beats.
pub const WINDOW_BYTES: usize = 128;

/// What the parser decided about a frame: `Accept`, or why it was dropped.
/// The value is what `m_meta_reason` carries and indexes the drop counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum RxVerdict {
    Accept = 0,
    /// Too short for a header it claims to have (Ethernet, IPv4, Homa common).
    Truncated = 1,
    /// Ethertype is not IPv4 (ARP, IPv6, ...).
    NotIpv4 = 2,
    IpVersion = 3,
    /// IHL below 5 words.
    IpHeaderLength = 4,
    /// IHL above 5 words: valid IPv4, but the card does not parse options.
    IpOptions = 5,
    IpChecksum = 6,
    /// IPv4 total length below its header or beyond the frame.
    IpTotalLength = 7,
    Fragment = 8,
    /// IP protocol is neither 146 nor 253.
    NotHoma = 9,
    UnknownType = 10,
    /// Shorter than the header of its Homa packet type.
    HomaTruncated = 11,
    TooManyAcks = 12,
    PayloadBeyondMessage = 13,
}

impl RxVerdict {
    pub const ALL: [RxVerdict; 14] = [
        RxVerdict::Accept,
        RxVerdict::Truncated,
        RxVerdict::NotIpv4,
        RxVerdict::IpVersion,
        RxVerdict::IpHeaderLength,
        RxVerdict::IpOptions,
        RxVerdict::IpChecksum,
        RxVerdict::IpTotalLength,
        RxVerdict::Fragment,
        RxVerdict::NotHoma,
        RxVerdict::UnknownType,
        RxVerdict::HomaTruncated,
        RxVerdict::TooManyAcks,
        RxVerdict::PayloadBeyondMessage,
    ];

    /// The verdict the hardware gives a frame the software decoder rejects
    /// with `error`.
    pub fn of_decode_error(error: &DecodeError) -> RxVerdict {
        match error {
            DecodeError::Truncated { .. } => RxVerdict::Truncated,
            DecodeError::NotIpv4 { .. } => RxVerdict::NotIpv4,
            DecodeError::IpVersion(_) => RxVerdict::IpVersion,
            DecodeError::IpHeaderLength(_) => RxVerdict::IpHeaderLength,
            DecodeError::IpChecksum { .. } => RxVerdict::IpChecksum,
            DecodeError::IpTotalLength { .. } => RxVerdict::IpTotalLength,
            DecodeError::Fragment => RxVerdict::Fragment,
            DecodeError::NotHoma { .. } => RxVerdict::NotHoma,
            DecodeError::UnknownType(_) => RxVerdict::UnknownType,
            DecodeError::HomaTruncated { .. } => RxVerdict::HomaTruncated,
            DecodeError::TooManyAcks(_) => RxVerdict::TooManyAcks,
            DecodeError::PayloadBeyondMessage { .. } => RxVerdict::PayloadBeyondMessage,
            // Only `ArpFrame::decode` says these; to the Homa path ARP is not IPv4.
            DecodeError::NotArp { .. } | DecodeError::ArpNotIpv4OverEthernet => RxVerdict::NotIpv4,
        }
    }

    pub fn from_code(code: u8) -> Option<RxVerdict> {
        RxVerdict::ALL.into_iter().find(|v| *v as u8 == code)
    }

    /// Snake-case name, as the counters and logs spell it.
    pub fn name(self) -> &'static str {
        match self {
            RxVerdict::Accept => "accept",
            RxVerdict::Truncated => "truncated",
            RxVerdict::NotIpv4 => "not_ipv4",
            RxVerdict::IpVersion => "ip_version",
            RxVerdict::IpHeaderLength => "ip_header_length",
            RxVerdict::IpOptions => "ip_options",
            RxVerdict::IpChecksum => "ip_checksum",
            RxVerdict::IpTotalLength => "ip_total_length",
            RxVerdict::Fragment => "fragment",
            RxVerdict::NotHoma => "not_homa",
            RxVerdict::UnknownType => "unknown_type",
            RxVerdict::HomaTruncated => "homa_truncated",
            RxVerdict::TooManyAcks => "too_many_acks",
            RxVerdict::PayloadBeyondMessage => "payload_beyond_message",
        }
    }
}

fn c8(v: u8) -> Constant<Bits<8>> {
    Constant::new((v as u64).to_bits())
}

fn c16(v: usize) -> Constant<Bits<16>> {
    Constant::new((v as u64).to_bits())
}

#[derive(LogicBlock)]
pub struct RxParser {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high: forgets any frame in progress.
    pub reset: Signal<In, bool>,
    /// Received frames, first byte in lane 0; `tkeep` contiguous from lane 0.
    pub s_axis_tdata: Signal<In, Bits<512>>,
    pub s_axis_tkeep: Signal<In, Bits<64>>,
    pub s_axis_tvalid: Signal<In, bool>,
    pub s_axis_tlast: Signal<In, bool>,
    /// Always high: the parser never stalls the MAC.
    pub s_axis_tready: Signal<Out, bool>,

    /// One cycle per frame: the verdict and fields below are valid.
    pub m_meta_valid: Signal<Out, bool>,
    /// An `RxVerdict` code; 0 = accept.
    pub m_meta_reason: Signal<Out, Bits<4>>,
    /// Frame length in bytes (without FCS).
    pub m_meta_frame_len: Signal<Out, Bits<16>>,
    /// The first 128 bytes of the frame, byte-swapped (byte 0 in bits 1023:1016):
    /// every header field for the blocks downstream.
    pub m_meta_window: Signal<Out, Bits<1024>>,
    /// Homa packet type (valid when accepted).
    pub m_meta_type: Signal<Out, Bits<8>>,
    pub m_meta_src_mac: Signal<Out, Bits<48>>,
    pub m_meta_src_ip: Signal<Out, Bits<32>>,
    pub m_meta_dst_ip: Signal<Out, Bits<32>>,
    /// Homa priority level from the TOS byte.
    pub m_meta_priority: Signal<Out, Bits<3>>,
    pub m_meta_sport: Signal<Out, Bits<16>>,
    pub m_meta_dport: Signal<Out, Bits<16>>,
    pub m_meta_sender_id: Signal<Out, Bits<64>>,
    /// DATA: message length, payload offset in the message (either form), payload bytes.
    pub m_meta_message_length: Signal<Out, Bits<32>>,
    pub m_meta_payload_offset: Signal<Out, Bits<32>>,
    pub m_meta_payload_len: Signal<Out, Bits<16>>,
    /// GRANT and RESEND: offset; RESEND: length; both: priority byte.
    pub m_meta_offset: Signal<Out, Bits<32>>,
    pub m_meta_length: Signal<Out, Bits<32>>,
    pub m_meta_ctl_priority: Signal<Out, Bits<8>>,

    swap: ByteSwap512,
    /// Fields of the frame being checked, in the checks stage, in the verdict
    /// stage, and of the verdict on the outputs.
    fields: HeaderFields,
    c1_fields: HeaderFields,
    out_fields: HeaderFields,
    // --- input stage: collects one frame ---
    /// Index of the next beat within its frame (saturates; only 0 and 1 matter
    /// for the window, the count matters for the length).
    beat: DFF<Bits<10>>,
    win0: DFF<Bits<512>>,
    win1: DFF<Bits<512>>,
    /// Sums of the IPv4 header's words 0..4 and 5..9, taken with `win0`.
    ip_sum_a: DFF<Bits<20>>,
    ip_sum_b: DFF<Bits<20>>,
    /// Frame length of the frame that just ended.
    frame_len: DFF<Bits<16>>,
    /// A frame ended last cycle: run the checks on the registers above.
    check: DFF<bool>,
    keep_count: Signal<Local, Bits<7>>,
    popcount: [Signal<Local, Bits<64>>; 6],
    popmask: [Constant<Bits<64>>; 6],

    // --- check stage: combinational over the registers ---
    window: Signal<Local, Bits<1024>>,
    ethertype: Signal<Local, Bits<16>>,
    version_ihl: Signal<Local, Bits<8>>,
    total_length: Signal<Local, Bits<16>>,
    flags_fragment: Signal<Local, Bits<16>>,
    protocol: Signal<Local, Bits<8>>,
    homa_len: Signal<Local, Bits<16>>,
    homa_type: Signal<Local, Bits<8>>,
    type_header_len: Signal<Local, Bits<16>>,
    type_known: Signal<Local, bool>,
    type_unknown: Signal<Local, bool>,
    num_acks: Signal<Local, Bits<16>>,
    ip_sum: Signal<Local, Bits<20>>,
    ip_sum_folded: Signal<Local, Bits<20>>,
    payload_end: Signal<Local, Bits<33>>,
    /// Bit i: check i (the order of `reason` below) failed; the checksum
    /// (bit 6) and payload end (bit 13) checks are finished in the verdict stage.
    fail: Signal<Local, Bits<16>>,

    // --- checks stage registers ---
    c1_valid: DFF<bool>,
    c1_fail: DFF<Bits<16>>,
    c1_ip_sum: DFF<Bits<20>>,
    c1_payload_end: DFF<Bits<33>>,
    c1_is_data: DFF<bool>,
    c1_window: DFF<Bits<1024>>,
    c1_frame_len: DFF<Bits<16>>,

    // --- verdict stage: combinational over the registers above ---
    ip_sum_final: Signal<Local, Bits<20>>,
    reason: Signal<Local, Bits<4>>,

    // --- output stage ---
    out_valid: DFF<bool>,
    out_reason: DFF<Bits<4>>,
    out_window: DFF<Bits<1024>>,
    out_frame_len: DFF<Bits<16>>,

    // --- constants from homa_wire::layout ---
    at_ethertype: Constant<Bits<16>>,
    at_version_ihl: Constant<Bits<16>>,
    at_total_length: Constant<Bits<16>>,
    at_flags_fragment: Constant<Bits<16>>,
    at_protocol: Constant<Bits<16>>,
    /// Lsb of the first 16-bit word of the IPv4 header in beat 0 (swapped);
    /// word i is 16 i below.
    at_ip_word0_beat0: Constant<Bits<16>>,
    at_type: Constant<Bits<16>>,
    at_num_acks: Constant<Bits<16>>,
    ethertype_ipv4: Constant<Bits<16>>,
    proto_homa: Constant<Bits<8>>,
    proto_homa_old: Constant<Bits<8>>,
    min_frame_eth: Constant<Bits<16>>,
    min_frame_ip: Constant<Bits<16>>,
    ip_header_len: Constant<Bits<16>>,
    common_len: Constant<Bits<16>>,
    data_header_len: Constant<Bits<16>>,
    max_acks: Constant<Bits<16>>,
    type_data: Constant<Bits<8>>,
    type_grant: Constant<Bits<8>>,
    type_resend: Constant<Bits<8>>,
    type_rpc_unknown: Constant<Bits<8>>,
    type_busy: Constant<Bits<8>>,
    type_cutoffs: Constant<Bits<8>>,
    type_freeze: Constant<Bits<8>>,
    type_need_ack: Constant<Bits<8>>,
    type_ack: Constant<Bits<8>>,
    len_grant: Constant<Bits<16>>,
    len_resend: Constant<Bits<16>>,
    len_cutoffs: Constant<Bits<16>>,
    len_ack: Constant<Bits<16>>,
}

/// SWAR popcount masks: 0x5555.., 0x3333.., 0x0f0f.., ..., 0x00000000ffffffff.
fn popcount_masks() -> [Constant<Bits<64>>; 6] {
    [
        0x5555_5555_5555_5555u64,
        0x3333_3333_3333_3333,
        0x0f0f_0f0f_0f0f_0f0f,
        0x00ff_00ff_00ff_00ff,
        0x0000_ffff_0000_ffff,
        0x0000_0000_ffff_ffff,
    ]
    .map(|m| Constant::new(m.to_bits()))
}

impl Default for RxParser {
    fn default() -> Self {
        let ip = eth::HEADER_LEN;
        let h = HOMA_OFFSET;
        let ty = |t: PacketType| c8(t as u8);
        let len = |t: PacketType| c16(layout::header_len(t));
        Self {
            clock: Default::default(),
            reset: Default::default(),
            s_axis_tdata: Default::default(),
            s_axis_tkeep: Default::default(),
            s_axis_tvalid: Default::default(),
            s_axis_tlast: Default::default(),
            s_axis_tready: Default::default(),
            m_meta_valid: Default::default(),
            m_meta_reason: Default::default(),
            m_meta_frame_len: Default::default(),
            m_meta_window: Default::default(),
            m_meta_type: Default::default(),
            m_meta_src_mac: Default::default(),
            m_meta_src_ip: Default::default(),
            m_meta_dst_ip: Default::default(),
            m_meta_priority: Default::default(),
            m_meta_sport: Default::default(),
            m_meta_dport: Default::default(),
            m_meta_sender_id: Default::default(),
            m_meta_message_length: Default::default(),
            m_meta_payload_offset: Default::default(),
            m_meta_payload_len: Default::default(),
            m_meta_offset: Default::default(),
            m_meta_length: Default::default(),
            m_meta_ctl_priority: Default::default(),
            swap: Default::default(),
            fields: Default::default(),
            c1_fields: Default::default(),
            out_fields: Default::default(),
            beat: Default::default(),
            win0: Default::default(),
            win1: Default::default(),
            ip_sum_a: Default::default(),
            ip_sum_b: Default::default(),
            frame_len: Default::default(),
            check: Default::default(),
            keep_count: Default::default(),
            popcount: Default::default(),
            popmask: popcount_masks(),
            window: Default::default(),
            ethertype: Default::default(),
            version_ihl: Default::default(),
            total_length: Default::default(),
            flags_fragment: Default::default(),
            protocol: Default::default(),
            homa_len: Default::default(),
            homa_type: Default::default(),
            type_header_len: Default::default(),
            type_known: Default::default(),
            type_unknown: Default::default(),
            num_acks: Default::default(),
            ip_sum: Default::default(),
            ip_sum_folded: Default::default(),
            payload_end: Default::default(),
            fail: Default::default(),
            c1_valid: Default::default(),
            c1_fail: Default::default(),
            c1_ip_sum: Default::default(),
            c1_payload_end: Default::default(),
            c1_is_data: Default::default(),
            c1_window: Default::default(),
            c1_frame_len: Default::default(),
            ip_sum_final: Default::default(),
            reason: Default::default(),
            out_valid: Default::default(),
            out_reason: Default::default(),
            out_window: Default::default(),
            out_frame_len: Default::default(),
            at_ethertype: window_lsb(0, eth::ETHERTYPE),
            at_version_ihl: window_lsb(ip, ipv4::VERSION_IHL),
            at_total_length: window_lsb(ip, ipv4::TOTAL_LENGTH),
            at_flags_fragment: window_lsb(ip, ipv4::FLAGS_FRAGMENT),
            at_protocol: window_lsb(ip, ipv4::PROTOCOL),
            at_ip_word0_beat0: Constant::new(
                (window_lsb(
                    ip,
                    Field {
                        name: "word0",
                        offset: 0,
                        size: 2,
                    },
                )
                .val()
                .index() as u64
                    - 8 * WINDOW_BYTES as u64 / 2)
                    .to_bits(),
            ),
            at_type: window_lsb(h, common::TYPE),
            at_num_acks: window_lsb(h, layout::ack::NUM_ACKS),
            ethertype_ipv4: c16(eth::ETHERTYPE_IPV4 as usize),
            proto_homa: c8(ipv4::PROTOCOL_HOMA),
            proto_homa_old: c8(ipv4::PROTOCOL_HOMA_OLD),
            min_frame_eth: c16(eth::HEADER_LEN),
            min_frame_ip: c16(HOMA_OFFSET),
            ip_header_len: c16(ipv4::HEADER_LEN),
            common_len: c16(common::HEADER_LEN),
            data_header_len: c16(data::HEADER_LEN),
            max_acks: c16(layout::ack::MAX_ACKS),
            type_data: ty(PacketType::Data),
            type_grant: ty(PacketType::Grant),
            type_resend: ty(PacketType::Resend),
            type_rpc_unknown: ty(PacketType::RpcUnknown),
            type_busy: ty(PacketType::Busy),
            type_cutoffs: ty(PacketType::Cutoffs),
            type_freeze: ty(PacketType::Freeze),
            type_need_ack: ty(PacketType::NeedAck),
            type_ack: ty(PacketType::Ack),
            len_grant: len(PacketType::Grant),
            len_resend: len(PacketType::Resend),
            len_cutoffs: len(PacketType::Cutoffs),
            len_ack: len(PacketType::Ack),
        }
    }
}

impl Logic for RxParser {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            beat,
            win0,
            win1,
            ip_sum_a,
            ip_sum_b,
            frame_len,
            check,
            c1_valid,
            c1_fail,
            c1_ip_sum,
            c1_payload_end,
            c1_is_data,
            c1_window,
            c1_frame_len,
            out_valid,
            out_reason,
            out_window,
            out_frame_len
        );
        self.s_axis_tready.next = true;

        // ---- input stage ----
        self.swap.beat.next = self.s_axis_tdata.val();
        // Bytes in this beat: popcount of tkeep, six SWAR steps.
        self.popcount[0].next = (self.s_axis_tkeep.val() & self.popmask[0].val())
            + ((self.s_axis_tkeep.val() >> 1) & self.popmask[0].val());
        self.popcount[1].next = (self.popcount[0].val() & self.popmask[1].val())
            + ((self.popcount[0].val() >> 2) & self.popmask[1].val());
        self.popcount[2].next = (self.popcount[1].val() & self.popmask[2].val())
            + ((self.popcount[1].val() >> 4) & self.popmask[2].val());
        self.popcount[3].next = (self.popcount[2].val() & self.popmask[3].val())
            + ((self.popcount[2].val() >> 8) & self.popmask[3].val());
        self.popcount[4].next = (self.popcount[3].val() & self.popmask[4].val())
            + ((self.popcount[3].val() >> 16) & self.popmask[4].val());
        self.popcount[5].next = (self.popcount[4].val() & self.popmask[5].val())
            + ((self.popcount[4].val() >> 32) & self.popmask[5].val());
        self.keep_count.next = self.popcount[5].val().get_bits::<7>(0);

        self.check.d.next = false;
        if self.s_axis_tvalid.val() {
            if self.beat.q.val() == 0 {
                self.win0.d.next = self.swap.swapped.val();
                // The IPv4 header is in beat 0: its checksum words, summed in
                // two halves (ten at once are too deep for one stage).
                self.ip_sum_a.d.next = bit_cast::<20, 16>(
                    self.swap
                        .swapped
                        .val()
                        .get_bits::<16>(self.at_ip_word0_beat0.val().index()),
                ) + bit_cast::<20, 16>(
                    self.swap
                        .swapped
                        .val()
                        .get_bits::<16>(self.at_ip_word0_beat0.val().index() - 16),
                ) + bit_cast::<20, 16>(
                    self.swap
                        .swapped
                        .val()
                        .get_bits::<16>(self.at_ip_word0_beat0.val().index() - 32),
                ) + bit_cast::<20, 16>(
                    self.swap
                        .swapped
                        .val()
                        .get_bits::<16>(self.at_ip_word0_beat0.val().index() - 48),
                ) + bit_cast::<20, 16>(
                    self.swap
                        .swapped
                        .val()
                        .get_bits::<16>(self.at_ip_word0_beat0.val().index() - 64),
                );
                self.ip_sum_b.d.next = bit_cast::<20, 16>(
                    self.swap
                        .swapped
                        .val()
                        .get_bits::<16>(self.at_ip_word0_beat0.val().index() - 80),
                ) + bit_cast::<20, 16>(
                    self.swap
                        .swapped
                        .val()
                        .get_bits::<16>(self.at_ip_word0_beat0.val().index() - 96),
                ) + bit_cast::<20, 16>(
                    self.swap
                        .swapped
                        .val()
                        .get_bits::<16>(self.at_ip_word0_beat0.val().index() - 112),
                ) + bit_cast::<20, 16>(
                    self.swap
                        .swapped
                        .val()
                        .get_bits::<16>(self.at_ip_word0_beat0.val().index() - 128),
                ) + bit_cast::<20, 16>(
                    self.swap
                        .swapped
                        .val()
                        .get_bits::<16>(self.at_ip_word0_beat0.val().index() - 144),
                );
            }
            if self.beat.q.val() == 1 {
                self.win1.d.next = self.swap.swapped.val();
            }
            if self.beat.q.val() != 0x3ff {
                self.beat.d.next = self.beat.q.val() + 1;
            }
            if self.s_axis_tlast.val() {
                self.beat.d.next = 0.into();
                self.frame_len.d.next = (bit_cast::<16, 10>(self.beat.q.val()) << 6)
                    + bit_cast::<16, 7>(self.keep_count.val());
                self.check.d.next = true;
            }
        }

        // ---- check stage ----
        self.window.next = (bit_cast::<1024, 512>(self.win0.q.val()) << 512)
            | bit_cast::<1024, 512>(self.win1.q.val());
        self.ethertype.next = self
            .window
            .val()
            .get_bits::<16>(self.at_ethertype.val().index());
        self.version_ihl.next = self
            .window
            .val()
            .get_bits::<8>(self.at_version_ihl.val().index());
        self.total_length.next = self
            .window
            .val()
            .get_bits::<16>(self.at_total_length.val().index());
        self.flags_fragment.next = self
            .window
            .val()
            .get_bits::<16>(self.at_flags_fragment.val().index());
        self.protocol.next = self
            .window
            .val()
            .get_bits::<8>(self.at_protocol.val().index());
        self.homa_len.next = self.total_length.val() - self.ip_header_len.val();
        self.homa_type.next = self.window.val().get_bits::<8>(self.at_type.val().index());
        self.num_acks.next = self
            .window
            .val()
            .get_bits::<16>(self.at_num_acks.val().index());

        // Ones'-complement sum of the ten 16-bit words of the IPv4 header
        // (two halves summed as beat 0 came in), folded once here and once in
        // the verdict stage: 0xffff when the checksum is right.
        self.ip_sum.next = self.ip_sum_a.q.val() + self.ip_sum_b.q.val();
        self.ip_sum_folded.next = (self.ip_sum.val() & 0xffff) + (self.ip_sum.val() >> 16);

        // Header length of the packet type, and whether the type exists.
        self.type_known.next = true;
        self.type_header_len.next = self.common_len.val();
        if self.homa_type.val() == self.type_data.val() {
            self.type_header_len.next = self.data_header_len.val();
        } else if self.homa_type.val() == self.type_grant.val() {
            self.type_header_len.next = self.len_grant.val();
        } else if self.homa_type.val() == self.type_resend.val() {
            self.type_header_len.next = self.len_resend.val();
        } else if self.homa_type.val() == self.type_cutoffs.val() {
            self.type_header_len.next = self.len_cutoffs.val();
        } else if self.homa_type.val() == self.type_ack.val() {
            self.type_header_len.next = self.len_ack.val();
        } else if (self.homa_type.val() != self.type_rpc_unknown.val())
            & (self.homa_type.val() != self.type_busy.val())
            & (self.homa_type.val() != self.type_freeze.val())
            & (self.homa_type.val() != self.type_need_ack.val())
        {
            self.type_known.next = false;
        }

        // DATA: where the payload lands in the message.
        self.fields.window.next = self.window.val();
        self.payload_end.next = bit_cast::<33, 32>(self.fields.payload_offset.val())
            + bit_cast::<33, 16>(self.fields.payload_len.val());

        // Each check on its own, in homa_wire::Frame::decode's order (the
        // verdict stage takes the first that fails): bit i is check i.
        // (One expression: a Local read back after a write differs between
        // RustHDL's simulator and Verilog, RUSTHDL.md. No `!` inside it:
        // Verilog widens the operand to 16 bits before inverting it.)
        self.type_unknown.next = !self.type_known.val();
        self.fail.next = bit_cast::<16, 1>((self.frame_len.q.val() < self.min_frame_eth.val()).into()) // 0 Truncated
            | (bit_cast::<16, 1>((self.ethertype.val() != self.ethertype_ipv4.val()).into()) << 1) // 1 NotIpv4
            | (bit_cast::<16, 1>((self.frame_len.q.val() < self.min_frame_ip.val()).into()) << 2) // 2 Truncated
            | (bit_cast::<16, 1>((self.version_ihl.val().get_bits::<4>(4) != 4).into()) << 3) // 3 IpVersion
            | (bit_cast::<16, 1>((self.version_ihl.val().get_bits::<4>(0) < 5).into()) << 4) // 4 IpHeaderLength
            | (bit_cast::<16, 1>((self.version_ihl.val().get_bits::<4>(0) > 5).into()) << 5) // 5 IpOptions
            // 6 IpChecksum: in the verdict stage.
            | (bit_cast::<16, 1>(
                ((self.total_length.val() < self.ip_header_len.val())
                    | (self.total_length.val()
                        > (self.frame_len.q.val() - self.min_frame_eth.val())))
                .into(),
            ) << 7) // 7 IpTotalLength
            | (bit_cast::<16, 1>((self.flags_fragment.val().get_bits::<14>(0) != 0).into()) << 8) // 8 Fragment
            | (bit_cast::<16, 1>(
                ((self.protocol.val() != self.proto_homa.val())
                    & (self.protocol.val() != self.proto_homa_old.val()))
                .into(),
            ) << 9) // 9 NotHoma
            | (bit_cast::<16, 1>((self.homa_len.val() < self.common_len.val()).into()) << 10) // 10 Truncated
            | (bit_cast::<16, 1>(self.type_unknown.val().into()) << 11) // 11 UnknownType
            | (bit_cast::<16, 1>((self.homa_len.val() < self.type_header_len.val()).into()) << 12) // 12 HomaTruncated
            // 13 PayloadBeyondMessage: in the verdict stage.
            | (bit_cast::<16, 1>(
                ((self.homa_type.val() == self.type_ack.val())
                    & (self.num_acks.val() > self.max_acks.val()))
                .into(),
            ) << 14); // 14 TooManyAcks

        // ---- checks stage registers ----
        self.c1_valid.d.next = self.check.q.val();
        if self.check.q.val() {
            self.c1_fail.d.next = self.fail.val();
            self.c1_ip_sum.d.next = self.ip_sum_folded.val();
            self.c1_payload_end.d.next = self.payload_end.val();
            self.c1_is_data.d.next = self.homa_type.val() == self.type_data.val();
            self.c1_window.d.next = self.window.val();
            self.c1_frame_len.d.next = self.frame_len.q.val();
        }

        // ---- verdict stage ----
        // Ones'-complement sum folded the second time: 0xffff when the checksum is right.
        self.ip_sum_final.next = (self.c1_ip_sum.q.val() & 0xffff) + (self.c1_ip_sum.q.val() >> 16);
        self.c1_fields.window.next = self.c1_window.q.val();
        // The first failing check names the drop.
        self.reason.next = 0.into();
        if self.c1_fail.q.val().get_bit(0) {
            self.reason.next = 1.into(); // Truncated
        } else if self.c1_fail.q.val().get_bit(1) {
            self.reason.next = 2.into(); // NotIpv4
        } else if self.c1_fail.q.val().get_bit(2) {
            self.reason.next = 1.into(); // Truncated
        } else if self.c1_fail.q.val().get_bit(3) {
            self.reason.next = 3.into(); // IpVersion
        } else if self.c1_fail.q.val().get_bit(4) {
            self.reason.next = 4.into(); // IpHeaderLength
        } else if self.c1_fail.q.val().get_bit(5) {
            self.reason.next = 5.into(); // IpOptions
        } else if self.ip_sum_final.val() != 0xffff {
            self.reason.next = 6.into(); // IpChecksum
        } else if self.c1_fail.q.val().get_bit(7) {
            self.reason.next = 7.into(); // IpTotalLength
        } else if self.c1_fail.q.val().get_bit(8) {
            self.reason.next = 8.into(); // Fragment
        } else if self.c1_fail.q.val().get_bit(9) {
            self.reason.next = 9.into(); // NotHoma
        } else if self.c1_fail.q.val().get_bit(10) {
            self.reason.next = 1.into(); // Truncated
        } else if self.c1_fail.q.val().get_bit(11) {
            self.reason.next = 10.into(); // UnknownType
        } else if self.c1_fail.q.val().get_bit(12) {
            self.reason.next = 11.into(); // HomaTruncated
        } else if self.c1_is_data.q.val()
            & (self.c1_payload_end.q.val()
                > bit_cast::<33, 32>(self.c1_fields.message_length.val()))
        {
            self.reason.next = 13.into(); // PayloadBeyondMessage
        } else if self.c1_fail.q.val().get_bit(14) {
            self.reason.next = 12.into(); // TooManyAcks
        }

        // ---- output stage ----
        self.out_valid.d.next = self.c1_valid.q.val();
        if self.c1_valid.q.val() {
            self.out_reason.d.next = self.reason.val();
            self.out_window.d.next = self.c1_window.q.val();
            self.out_frame_len.d.next = self.c1_frame_len.q.val();
        }
        if self.reset.val() {
            self.beat.d.next = 0.into();
            self.check.d.next = false;
            self.c1_valid.d.next = false;
            self.out_valid.d.next = false;
        }

        self.m_meta_valid.next = self.out_valid.q.val();
        self.m_meta_reason.next = self.out_reason.q.val();
        self.m_meta_frame_len.next = self.out_frame_len.q.val();
        self.m_meta_window.next = self.out_window.q.val();
        self.out_fields.window.next = self.out_window.q.val();
        self.m_meta_payload_offset.next = self.out_fields.payload_offset.val();
        self.m_meta_payload_len.next = self.out_fields.payload_len.val();
        self.m_meta_type.next = self.out_fields.packet_type.val();
        self.m_meta_src_mac.next = self.out_fields.src_mac.val();
        self.m_meta_src_ip.next = self.out_fields.src_ip.val();
        self.m_meta_dst_ip.next = self.out_fields.dst_ip.val();
        self.m_meta_priority.next = self.out_fields.level.val();
        self.m_meta_sport.next = self.out_fields.sport.val();
        self.m_meta_dport.next = self.out_fields.dport.val();
        self.m_meta_sender_id.next = self.out_fields.sender_id.val();
        self.m_meta_message_length.next = self.out_fields.message_length.val();
        self.m_meta_offset.next = self.out_fields.offset.val();
        self.m_meta_length.next = self.out_fields.length.val();
        self.m_meta_ctl_priority.next = self.out_fields.ctl_priority.val();
    }
}

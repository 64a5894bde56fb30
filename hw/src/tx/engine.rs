//! TX engine: takes descriptors from the endpoints' TX rings and sends each
//! message as DATA packets, then reports it in the endpoint's completion ring.
//!
//! DESIGN NOTES
//! ------------
//! This first engine sends every message whole and unscheduled, so messages
//! are limited to `unsched_bytes` (40 000, HomaModule's default): grants, SRPT
//! among outgoing messages and retransmission come with the grant scheduler,
//! and will replace the "one message at a time, start to end" loop below with
//! a queue of messages and a per-packet choice. What stays: descriptor fetch,
//! per-packet payload reads, header building, completions.
//!
//! One message at a time, one packet at a time:
//!   IDLE       pick the next endpoint with descriptors (round robin)
//!   FETCH      DMA-read the 64-byte descriptor (one beat)
//!   CHECK      opcode and length; a bad one completes with BAD_DESCRIPTOR
//!   SEGMENT    hand the header fields to the TX header builder
//!   STREAM     pass the packet's payload beats to the framer; when the
//!              frame has left, the next segment, or the completion
//! Beside SEGMENT and STREAM, an issuer requests the payload of the coming
//! packets (up to 1424 bytes each, one MTU) by DMA read, up to
//! `MAX_SEGMENTS_IN_FLIGHT` ahead of the one being sent, so the PCIe round
//! trip is paid once per message rather than once per packet. This relies on
//! read completions coming back in request order, as the PCIe model returns
//! them by default; a shell that reorders completions needs a reorder buffer
//! in front of this engine.
//!   COMPLETE   hand the completion to the completion writer; advance the
//!              ring's consumer index
//! A DMA read error on the descriptor completes it with DMA_ERROR; on the
//! payload, the frame in flight is marked bad (`frame_error`, which the core
//! sends as `tuser` so the MAC spoils its FCS), the beats of reads already
//! issued are drained (DRAIN), and the message completes with DMA_ERROR:
//! nothing more of it is sent.

use rust_hdl::prelude::*;

use crate::host_abi::{completion, tx_desc};
use crate::regmap::endpoint;
use homa_wire::layout::{data, Field, HOMA_OFFSET};
use homa_wire::PacketType;

const ENDPOINTS: usize = endpoint::COUNT;

/// Payload bytes per DATA packet at MTU 1500: 1500 - 20 (IPv4) - 56 (DATA header).
pub const MAX_SEGMENT_BYTES: u32 = 1500 - 20 - data::HEADER_LEN as u32;
/// Largest message this engine sends: HomaModule's unsched_bytes.
pub const MAX_MESSAGE_BYTES: u32 = 40_000;
/// HomaModule's default unscheduled cutoffs: a message of at most `cutoff[i]`
/// bytes goes at priority `7 - i`.
pub const UNSCHED_CUTOFFS: [u32; 4] = [200, 2800, 15_000, 1_000_000];
/// Version of the cutoffs we send in DATA (HomaModule's default is 1).
pub const CUTOFF_VERSION: u16 = 1;

/// DMA read tags: the descriptor's, and the first of the payload reads'
/// (segment reads take `TAG_PAYLOAD + n mod MAX_SEGMENTS_IN_FLIGHT`).
pub const TAG_DESCRIPTOR: u8 = 0;
pub const TAG_PAYLOAD: u8 = 4;
/// Payload reads issued ahead of the packet being sent.
pub const MAX_SEGMENTS_IN_FLIGHT: u64 = 4;

mod state {
    pub const IDLE: u64 = 0;
    pub const FETCH_REQ: u64 = 1;
    pub const FETCH_WAIT: u64 = 2;
    pub const CHECK: u64 = 3;
    pub const SEGMENT: u64 = 4;
    pub const DRAIN: u64 = 5;
    pub const STREAM: u64 = 6;
    pub const COMPLETE: u64 = 7;
}

fn lsb(field: Field) -> Constant<Bits<16>> {
    Constant::new(((8 * field.offset) as u64).to_bits())
}

fn c32(v: u64) -> Constant<Bits<32>> {
    Constant::new(v.to_bits())
}

fn c4(v: u64) -> Constant<Bits<4>> {
    Constant::new(v.to_bits())
}

#[derive(LogicBlock)]
pub struct TxEngine {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: back to IDLE, consumer indices to 0.
    pub reset: Signal<In, bool>,

    /// Per endpoint: its port (0: closed) and TX ring producer index.
    pub ep_port: [Signal<In, Bits<16>>; ENDPOINTS],
    pub ep_tx_producer: [Signal<In, Bits<32>>; ENDPOINTS],
    /// Per endpoint: descriptors taken (free-running).
    pub ep_tx_consumer: [Signal<Out, Bits<32>>; ENDPOINTS],
    /// The endpoint being served, and its TX ring (muxed by the core).
    pub sel_endpoint: Signal<Out, Bits<2>>,
    pub sel_tx_ring: Signal<In, Bits<64>>,
    pub sel_tx_ring_log2: Signal<In, Bits<4>>,
    /// The card's own addresses.
    pub local_mac: Signal<In, Bits<48>>,
    pub local_ip: Signal<In, Bits<32>>,

    /// DMA read requests (descriptors and payload).
    pub m_dma_rd_req_valid: Signal<Out, bool>,
    pub m_dma_rd_req_ready: Signal<In, bool>,
    pub m_dma_rd_req_addr: Signal<Out, Bits<64>>,
    pub m_dma_rd_req_len: Signal<Out, Bits<16>>,
    pub m_dma_rd_req_tag: Signal<Out, Bits<8>>,
    /// DMA read responses: data packed from lane 0.
    pub s_dma_rd_rsp_valid: Signal<In, bool>,
    pub s_dma_rd_rsp_ready: Signal<Out, bool>,
    pub s_dma_rd_rsp_data: Signal<In, Bits<512>>,
    pub s_dma_rd_rsp_last: Signal<In, bool>,
    pub s_dma_rd_rsp_error: Signal<In, bool>,

    /// To the TX header builder: one cycle of `hdr_valid` per packet.
    pub hdr_valid: Signal<Out, bool>,
    pub hdr_dst_mac: Signal<Out, Bits<48>>,
    pub hdr_src_mac: Signal<Out, Bits<48>>,
    pub hdr_src_ip: Signal<Out, Bits<32>>,
    pub hdr_dst_ip: Signal<Out, Bits<32>>,
    pub hdr_level: Signal<Out, Bits<3>>,
    pub hdr_packet_type: Signal<Out, Bits<8>>,
    pub hdr_sport: Signal<Out, Bits<16>>,
    pub hdr_dport: Signal<Out, Bits<16>>,
    pub hdr_sender_id: Signal<Out, Bits<64>>,
    pub hdr_data_offset: Signal<Out, Bits<32>>,
    pub hdr_message_length: Signal<Out, Bits<32>>,
    pub hdr_cutoff_version: Signal<Out, Bits<16>>,
    pub hdr_payload_len: Signal<Out, Bits<16>>,
    /// Payload beats to the framer, packed from lane 0.
    pub m_pay_tdata: Signal<Out, Bits<512>>,
    pub m_pay_tkeep: Signal<Out, Bits<64>>,
    pub m_pay_tvalid: Signal<Out, bool>,
    pub m_pay_tready: Signal<In, bool>,
    pub m_pay_tlast: Signal<Out, bool>,
    /// The framer sent the last beat of the current frame.
    pub frame_sent: Signal<In, bool>,
    /// The current frame's payload had a DMA error: send it spoiled.
    pub frame_error: Signal<Out, bool>,

    /// Completions to the completion writer.
    pub m_cpl_valid: Signal<Out, bool>,
    pub m_cpl_ready: Signal<In, bool>,
    pub m_cpl_endpoint: Signal<Out, Bits<2>>,
    pub m_cpl_record: Signal<Out, Bits<512>>,

    state: DFF<Bits<4>>,
    endpoint: DFF<Bits<2>>,
    /// Round robin: the endpoint after the one served last.
    next_endpoint: DFF<Bits<2>>,
    consumer: [DFF<Bits<32>>; ENDPOINTS],
    /// The descriptor being executed, as fetched.
    desc: DFF<Bits<512>>,
    /// Offset of the next segment in the message.
    offset: DFF<Bits<32>>,
    /// Payload bytes of the current segment not yet passed to the framer.
    remaining: DFF<Bits<16>>,
    status: DFF<Bits<8>>,
    seg_error: DFF<bool>,
    /// Offset of the next segment to request.
    req_offset: DFF<Bits<32>>,
    /// Segments requested and not yet sent.
    in_flight: DFF<Bits<3>>,
    /// Response beats still to come for the requests issued.
    beats_due: DFF<Bits<8>>,
    /// Low bits of the next payload read's tag.
    req_tag: DFF<Bits<2>>,
    req_left: Signal<Local, Bits<32>>,
    req_len: Signal<Local, Bits<32>>,
    req_beats: Signal<Local, Bits<16>>,
    issue: Signal<Local, bool>,
    issued: Signal<Local, bool>,
    beat_taken: Signal<Local, bool>,
    segment_sent: Signal<Local, bool>,
    /// Endpoint i has descriptors waiting (and is open).
    pend: [Signal<Local, bool>; ENDPOINTS],
    found: Signal<Local, bool>,
    pick: Signal<Local, Bits<2>>,
    length: Signal<Local, Bits<32>>,
    seg_len: Signal<Local, Bits<32>>,
    left: Signal<Local, Bits<32>>,
    slot: Signal<Local, Bits<32>>,
    opcode: Signal<Local, Bits<8>>,
    keep_shift: Signal<Local, Bits<16>>,
    record: Signal<Local, Bits<512>>,
    sel_port: Signal<Local, Bits<16>>,

    at_opcode: Constant<Bits<16>>,
    at_peer_port: Constant<Bits<16>>,
    at_length: Constant<Bits<16>>,
    at_rpc_id: Constant<Bits<16>>,
    at_buffer: Constant<Bits<16>>,
    at_peer_ip: Constant<Bits<16>>,
    at_peer_mac: Constant<Bits<16>>,
    at_cookie: Constant<Bits<16>>,
    cpl_kind: Constant<Bits<16>>,
    cpl_status: Constant<Bits<16>>,
    cpl_peer_port: Constant<Bits<16>>,
    cpl_length: Constant<Bits<16>>,
    cpl_rpc_id: Constant<Bits<16>>,
    cpl_peer_ip: Constant<Bits<16>>,
    cpl_peer_mac: Constant<Bits<16>>,
    cpl_cookie: Constant<Bits<16>>,
    kind_tx_done: Constant<Bits<8>>,
    status_ok: Constant<Bits<8>>,
    status_bad_descriptor: Constant<Bits<8>>,
    status_dma_error: Constant<Bits<8>>,
    op_request: Constant<Bits<8>>,
    op_response: Constant<Bits<8>>,
    max_message: Constant<Bits<32>>,
    max_segment: Constant<Bits<32>>,
    cutoff: [Constant<Bits<32>>; 3],
    type_data: Constant<Bits<8>>,
    cutoff_version: Constant<Bits<16>>,
    one: Constant<Bits<32>>,
    all_lanes: Constant<Bits<64>>,
    st_idle: Constant<Bits<4>>,
    st_fetch_req: Constant<Bits<4>>,
    st_fetch_wait: Constant<Bits<4>>,
    st_check: Constant<Bits<4>>,
    st_segment: Constant<Bits<4>>,
    st_drain: Constant<Bits<4>>,
    max_in_flight: Constant<Bits<3>>,
    st_stream: Constant<Bits<4>>,
    st_complete: Constant<Bits<4>>,
    tag_descriptor: Constant<Bits<8>>,
    tag_payload: Constant<Bits<8>>,
    descriptor_bytes: Constant<Bits<16>>,
}

impl Default for TxEngine {
    fn default() -> Self {
        assert_eq!(
            ENDPOINTS, 4,
            "the round-robin pick is unrolled for four endpoints"
        );
        assert_eq!(
            HOMA_OFFSET + data::HEADER_LEN + MAX_SEGMENT_BYTES as usize,
            1514
        );
        let c8 = |v: u8| Constant::new((v as u64).to_bits());
        Self {
            clock: Default::default(),
            reset: Default::default(),
            ep_port: Default::default(),
            ep_tx_producer: Default::default(),
            ep_tx_consumer: Default::default(),
            sel_endpoint: Default::default(),
            sel_tx_ring: Default::default(),
            sel_tx_ring_log2: Default::default(),
            local_mac: Default::default(),
            local_ip: Default::default(),
            m_dma_rd_req_valid: Default::default(),
            m_dma_rd_req_ready: Default::default(),
            m_dma_rd_req_addr: Default::default(),
            m_dma_rd_req_len: Default::default(),
            m_dma_rd_req_tag: Default::default(),
            s_dma_rd_rsp_valid: Default::default(),
            s_dma_rd_rsp_ready: Default::default(),
            s_dma_rd_rsp_data: Default::default(),
            s_dma_rd_rsp_last: Default::default(),
            s_dma_rd_rsp_error: Default::default(),
            hdr_valid: Default::default(),
            hdr_dst_mac: Default::default(),
            hdr_src_mac: Default::default(),
            hdr_src_ip: Default::default(),
            hdr_dst_ip: Default::default(),
            hdr_level: Default::default(),
            hdr_packet_type: Default::default(),
            hdr_sport: Default::default(),
            hdr_dport: Default::default(),
            hdr_sender_id: Default::default(),
            hdr_data_offset: Default::default(),
            hdr_message_length: Default::default(),
            hdr_cutoff_version: Default::default(),
            hdr_payload_len: Default::default(),
            m_pay_tdata: Default::default(),
            m_pay_tkeep: Default::default(),
            m_pay_tvalid: Default::default(),
            m_pay_tready: Default::default(),
            m_pay_tlast: Default::default(),
            frame_sent: Default::default(),
            frame_error: Default::default(),
            m_cpl_valid: Default::default(),
            m_cpl_ready: Default::default(),
            m_cpl_endpoint: Default::default(),
            m_cpl_record: Default::default(),
            state: Default::default(),
            endpoint: Default::default(),
            next_endpoint: Default::default(),
            consumer: Default::default(),
            desc: Default::default(),
            offset: Default::default(),
            remaining: Default::default(),
            status: Default::default(),
            seg_error: Default::default(),
            req_offset: Default::default(),
            in_flight: Default::default(),
            beats_due: Default::default(),
            req_tag: Default::default(),
            req_left: Default::default(),
            req_len: Default::default(),
            req_beats: Default::default(),
            issue: Default::default(),
            issued: Default::default(),
            beat_taken: Default::default(),
            segment_sent: Default::default(),
            pend: Default::default(),
            found: Default::default(),
            pick: Default::default(),
            length: Default::default(),
            seg_len: Default::default(),
            left: Default::default(),
            slot: Default::default(),
            opcode: Default::default(),
            keep_shift: Default::default(),
            record: Default::default(),
            sel_port: Default::default(),
            at_opcode: lsb(tx_desc::OPCODE),
            at_peer_port: lsb(tx_desc::PEER_PORT),
            at_length: lsb(tx_desc::LENGTH),
            at_rpc_id: lsb(tx_desc::RPC_ID),
            at_buffer: lsb(tx_desc::BUFFER),
            at_peer_ip: lsb(tx_desc::PEER_IP),
            at_peer_mac: lsb(tx_desc::PEER_MAC),
            at_cookie: lsb(tx_desc::COOKIE),
            cpl_kind: lsb(completion::KIND),
            cpl_status: lsb(completion::STATUS),
            cpl_peer_port: lsb(completion::PEER_PORT),
            cpl_length: lsb(completion::LENGTH),
            cpl_rpc_id: lsb(completion::RPC_ID),
            cpl_peer_ip: lsb(completion::PEER_IP),
            cpl_peer_mac: lsb(completion::PEER_MAC),
            cpl_cookie: lsb(completion::COOKIE),
            kind_tx_done: c8(completion::kind::TX_DONE),
            status_ok: c8(completion::status::OK),
            status_bad_descriptor: c8(completion::status::BAD_DESCRIPTOR),
            status_dma_error: c8(completion::status::DMA_ERROR),
            op_request: c8(tx_desc::opcode::SEND_REQUEST),
            op_response: c8(tx_desc::opcode::SEND_RESPONSE),
            max_message: c32(MAX_MESSAGE_BYTES as u64),
            max_segment: c32(MAX_SEGMENT_BYTES as u64),
            cutoff: [0, 1, 2].map(|i| c32(UNSCHED_CUTOFFS[i] as u64)),
            type_data: c8(PacketType::Data as u8),
            cutoff_version: Constant::new((CUTOFF_VERSION as u64).to_bits()),
            one: c32(1),
            all_lanes: Constant::new(u64::MAX.to_bits()),
            st_idle: c4(state::IDLE),
            st_fetch_req: c4(state::FETCH_REQ),
            st_fetch_wait: c4(state::FETCH_WAIT),
            st_check: c4(state::CHECK),
            st_segment: c4(state::SEGMENT),
            st_drain: c4(state::DRAIN),
            max_in_flight: Constant::new(MAX_SEGMENTS_IN_FLIGHT.to_bits()),
            st_stream: c4(state::STREAM),
            st_complete: c4(state::COMPLETE),
            tag_descriptor: c8(TAG_DESCRIPTOR),
            tag_payload: c8(TAG_PAYLOAD),
            descriptor_bytes: Constant::new(64u64.to_bits()),
        }
    }
}

impl Logic for TxEngine {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state,
            endpoint,
            next_endpoint,
            desc,
            offset,
            remaining,
            status,
            seg_error,
            req_offset,
            in_flight,
            beats_due,
            req_tag
        );

        // Endpoints with descriptors waiting, and the round-robin pick among
        // them: the first pending at or after `next_endpoint`. (Unrolled for
        // the four endpoints: RustHDL has no run-time indexing, and a
        // sequential scan reads a signal back after writing it, which RustHDL
        // and Verilog simulate differently.)
        self.slot.next = 0.into();
        self.sel_port.next = 0.into();
        for i in 0..ENDPOINTS {
            self.consumer[i].clock.next = self.clock.val();
            self.consumer[i].d.next = self.consumer[i].q.val();
            self.ep_tx_consumer[i].next = self.consumer[i].q.val();
            self.pend[i].next = (self.ep_port[i].val() != 0)
                & (self.ep_tx_producer[i].val() != self.consumer[i].q.val());
            if self.endpoint.q.val().index() == i {
                self.slot.next = self.consumer[i].q.val();
                self.sel_port.next = self.ep_port[i].val();
            }
        }
        self.found.next =
            self.pend[0].val() | self.pend[1].val() | self.pend[2].val() | self.pend[3].val();
        self.pick.next = 0.into();
        if self.next_endpoint.q.val() == 0 {
            if self.pend[0].val() {
                self.pick.next = 0.into();
            } else if self.pend[1].val() {
                self.pick.next = 1.into();
            } else if self.pend[2].val() {
                self.pick.next = 2.into();
            } else {
                self.pick.next = 3.into();
            }
        } else if self.next_endpoint.q.val() == 1 {
            if self.pend[1].val() {
                self.pick.next = 1.into();
            } else if self.pend[2].val() {
                self.pick.next = 2.into();
            } else if self.pend[3].val() {
                self.pick.next = 3.into();
            } else {
                self.pick.next = 0.into();
            }
        } else if self.next_endpoint.q.val() == 2 {
            if self.pend[2].val() {
                self.pick.next = 2.into();
            } else if self.pend[3].val() {
                self.pick.next = 3.into();
            } else if self.pend[0].val() {
                self.pick.next = 0.into();
            } else {
                self.pick.next = 1.into();
            }
        } else if self.pend[3].val() {
            self.pick.next = 3.into();
        } else if self.pend[0].val() {
            self.pick.next = 0.into();
        } else if self.pend[1].val() {
            self.pick.next = 1.into();
        } else {
            self.pick.next = 2.into();
        }

        // Descriptor fields.
        self.opcode.next = self
            .desc
            .q
            .val()
            .get_bits::<8>(self.at_opcode.val().index());
        self.length.next = self
            .desc
            .q
            .val()
            .get_bits::<32>(self.at_length.val().index());
        self.left.next = self.length.val() - self.offset.q.val();
        self.seg_len.next = self.left.val();
        if self.left.val() > self.max_segment.val() {
            self.seg_len.next = self.max_segment.val();
        }

        // Outputs with their idle values.
        self.sel_endpoint.next = self.endpoint.q.val();
        self.m_dma_rd_req_valid.next = false;
        self.m_dma_rd_req_addr.next = self.sel_tx_ring.val()
            + (bit_cast::<64, 32>(
                self.slot.val() & ((self.one.val() << self.sel_tx_ring_log2.val()) - 1),
            ) << 6);
        self.m_dma_rd_req_len.next = self.descriptor_bytes.val();
        self.m_dma_rd_req_tag.next = self.tag_descriptor.val();
        self.s_dma_rd_rsp_ready.next = false;
        self.hdr_valid.next = false;
        self.m_pay_tvalid.next = false;
        self.m_pay_tdata.next = self.s_dma_rd_rsp_data.val();
        self.m_pay_tlast.next = false;
        self.keep_shift.next = 0.into();
        if self.remaining.q.val() < 64 {
            self.keep_shift.next = 64 - self.remaining.q.val();
            self.m_pay_tlast.next = true;
        }
        if self.remaining.q.val() == 64 {
            self.m_pay_tlast.next = true;
        }
        self.m_pay_tkeep.next = self.all_lanes.val() >> self.keep_shift.val();
        self.frame_error.next = self.seg_error.q.val();
        self.m_cpl_valid.next = false;
        self.m_cpl_endpoint.next = self.endpoint.q.val();

        // Header fields for the builder (valid with hdr_valid).
        self.hdr_dst_mac.next = (bit_cast::<48, 8>(
            self.desc
                .q
                .val()
                .get_bits::<8>(self.at_peer_mac.val().index()),
        ) << 40)
            | (bit_cast::<48, 8>(
                self.desc
                    .q
                    .val()
                    .get_bits::<8>(self.at_peer_mac.val().index() + 8),
            ) << 32)
            | (bit_cast::<48, 8>(
                self.desc
                    .q
                    .val()
                    .get_bits::<8>(self.at_peer_mac.val().index() + 16),
            ) << 24)
            | (bit_cast::<48, 8>(
                self.desc
                    .q
                    .val()
                    .get_bits::<8>(self.at_peer_mac.val().index() + 24),
            ) << 16)
            | (bit_cast::<48, 8>(
                self.desc
                    .q
                    .val()
                    .get_bits::<8>(self.at_peer_mac.val().index() + 32),
            ) << 8)
            | bit_cast::<48, 8>(
                self.desc
                    .q
                    .val()
                    .get_bits::<8>(self.at_peer_mac.val().index() + 40),
            );
        self.hdr_src_mac.next = self.local_mac.val();
        self.hdr_src_ip.next = self.local_ip.val();
        self.hdr_dst_ip.next = self
            .desc
            .q
            .val()
            .get_bits::<32>(self.at_peer_ip.val().index());
        self.hdr_level.next = 4.into();
        if self.length.val() <= self.cutoff[2].val() {
            self.hdr_level.next = 5.into();
        }
        if self.length.val() <= self.cutoff[1].val() {
            self.hdr_level.next = 6.into();
        }
        if self.length.val() <= self.cutoff[0].val() {
            self.hdr_level.next = 7.into();
        }
        self.hdr_packet_type.next = self.type_data.val();
        self.hdr_sport.next = self.sel_port.val();
        self.hdr_dport.next = self
            .desc
            .q
            .val()
            .get_bits::<16>(self.at_peer_port.val().index());
        self.hdr_sender_id.next = self
            .desc
            .q
            .val()
            .get_bits::<64>(self.at_rpc_id.val().index());
        self.hdr_data_offset.next = self.offset.q.val();
        self.hdr_message_length.next = self.length.val();
        self.hdr_cutoff_version.next = self.cutoff_version.val();
        self.hdr_payload_len.next = self.seg_len.val().get_bits::<16>(0);

        // The completion record (phase set by the completion writer).
        self.record.next = (bit_cast::<512, 8>(self.kind_tx_done.val()) << self.cpl_kind.val())
            | (bit_cast::<512, 8>(self.status.q.val()) << self.cpl_status.val())
            | (bit_cast::<512, 16>(
                self.desc
                    .q
                    .val()
                    .get_bits::<16>(self.at_peer_port.val().index()),
            ) << self.cpl_peer_port.val())
            | (bit_cast::<512, 32>(self.length.val()) << self.cpl_length.val())
            | (bit_cast::<512, 64>(
                self.desc
                    .q
                    .val()
                    .get_bits::<64>(self.at_rpc_id.val().index()),
            ) << self.cpl_rpc_id.val())
            | (bit_cast::<512, 32>(
                self.desc
                    .q
                    .val()
                    .get_bits::<32>(self.at_peer_ip.val().index()),
            ) << self.cpl_peer_ip.val())
            | (bit_cast::<512, 48>(
                self.desc
                    .q
                    .val()
                    .get_bits::<48>(self.at_peer_mac.val().index()),
            ) << self.cpl_peer_mac.val())
            | (bit_cast::<512, 64>(
                self.desc
                    .q
                    .val()
                    .get_bits::<64>(self.at_cookie.val().index()),
            ) << self.cpl_cookie.val());
        self.m_cpl_record.next = self.record.val();

        // ---- the payload read issuer, ahead of the streamer ----
        self.req_left.next = self.length.val() - self.req_offset.q.val();
        self.req_len.next = self.req_left.val();
        if self.req_left.val() > self.max_segment.val() {
            self.req_len.next = self.max_segment.val();
        }
        self.req_beats.next = (self.req_len.val().get_bits::<16>(0) + 63) >> 6;
        self.issue.next = ((self.state.q.val() == self.st_segment.val())
            | (self.state.q.val() == self.st_stream.val()))
            & (self.req_left.val() != 0)
            & (self.in_flight.q.val() < self.max_in_flight.val());
        if self.issue.val() {
            self.m_dma_rd_req_valid.next = true;
            self.m_dma_rd_req_addr.next = self
                .desc
                .q
                .val()
                .get_bits::<64>(self.at_buffer.val().index())
                + bit_cast::<64, 32>(self.req_offset.q.val());
            self.m_dma_rd_req_len.next = self.req_len.val().get_bits::<16>(0);
            self.m_dma_rd_req_tag.next =
                self.tag_payload.val() + bit_cast::<8, 2>(self.req_tag.q.val());
        }
        self.issued.next = self.issue.val() & self.m_dma_rd_req_ready.val();
        if self.issued.val() {
            self.req_offset.d.next = self.req_offset.q.val() + self.req_len.val();
            self.req_tag.d.next = self.req_tag.q.val() + 1;
        }
        // ---- the state machine ----
        if self.state.q.val() == self.st_idle.val() {
            if self.found.val() {
                self.endpoint.d.next = self.pick.val();
                self.state.d.next = self.st_fetch_req.val();
            }
        } else if self.state.q.val() == self.st_fetch_req.val() {
            self.m_dma_rd_req_valid.next = true;
            if self.m_dma_rd_req_ready.val() {
                self.state.d.next = self.st_fetch_wait.val();
            }
        } else if self.state.q.val() == self.st_fetch_wait.val() {
            self.s_dma_rd_rsp_ready.next = true;
            if self.s_dma_rd_rsp_valid.val() {
                self.desc.d.next = self.s_dma_rd_rsp_data.val();
                self.status.d.next = self.status_ok.val();
                self.offset.d.next = 0.into();
                self.state.d.next = self.st_check.val();
                if self.s_dma_rd_rsp_error.val() {
                    self.status.d.next = self.status_dma_error.val();
                    self.state.d.next = self.st_complete.val();
                }
            }
        } else if self.state.q.val() == self.st_check.val() {
            self.state.d.next = self.st_segment.val();
            self.req_offset.d.next = 0.into();
            if ((self.opcode.val() != self.op_request.val())
                & (self.opcode.val() != self.op_response.val()))
                | (self.length.val() == 0)
                | (self.length.val() > self.max_message.val())
            {
                self.status.d.next = self.status_bad_descriptor.val();
                self.state.d.next = self.st_complete.val();
            }
        } else if self.state.q.val() == self.st_segment.val() {
            // The framer is idle here (the previous frame has left).
            self.hdr_valid.next = true;
            self.remaining.d.next = self.seg_len.val().get_bits::<16>(0);
            self.seg_error.d.next = false;
            self.state.d.next = self.st_stream.val();
        } else if self.state.q.val() == self.st_stream.val() {
            // Payload beats go straight through to the framer.
            self.m_pay_tvalid.next = self.s_dma_rd_rsp_valid.val() & (self.remaining.q.val() != 0);
            self.s_dma_rd_rsp_ready.next = self.m_pay_tready.val() & (self.remaining.q.val() != 0);
            if self.s_dma_rd_rsp_valid.val()
                & self.m_pay_tready.val()
                & (self.remaining.q.val() != 0)
            {
                if self.s_dma_rd_rsp_error.val() {
                    self.seg_error.d.next = true;
                    self.frame_error.next = true;
                }
                self.remaining.d.next = 0.into();
                if self.remaining.q.val() > 64 {
                    self.remaining.d.next = self.remaining.q.val() - 64;
                }
            }
            if self.frame_sent.val() {
                self.offset.d.next = self.offset.q.val() + self.seg_len.val();
                self.state.d.next = self.st_segment.val();
                if self.seg_error.q.val() {
                    // Nothing more of this message: drain the reads issued.
                    self.status.d.next = self.status_dma_error.val();
                    self.state.d.next = self.st_drain.val();
                } else if self.seg_len.val() == self.left.val() {
                    self.state.d.next = self.st_complete.val();
                }
            }
        } else if self.state.q.val() == self.st_drain.val() {
            self.s_dma_rd_rsp_ready.next = true;
            if self.beats_due.q.val() == 0 {
                self.state.d.next = self.st_complete.val();
            }
        } else if self.state.q.val() == self.st_complete.val() {
            self.m_cpl_valid.next = true;
            if self.m_cpl_ready.val() {
                for i in 0..ENDPOINTS {
                    if self.endpoint.q.val().index() == i {
                        self.consumer[i].d.next = self.consumer[i].q.val() + 1;
                    }
                }
                self.next_endpoint.d.next = self.endpoint.q.val() + 1;
                self.state.d.next = self.st_idle.val();
            }
        }

        // After the state machine, which decides the response port's ready:
        // a payload beat taken (streamed or drained), and a packet sent.
        self.beat_taken.next = self.s_dma_rd_rsp_valid.val()
            & self.s_dma_rd_rsp_ready.val()
            & ((self.state.q.val() == self.st_stream.val())
                | (self.state.q.val() == self.st_drain.val()));
        self.segment_sent.next =
            (self.state.q.val() == self.st_stream.val()) & self.frame_sent.val();
        if self.issued.val() & !self.segment_sent.val() {
            self.in_flight.d.next = self.in_flight.q.val() + 1;
        } else if !self.issued.val() & self.segment_sent.val() {
            self.in_flight.d.next = self.in_flight.q.val() - 1;
        }
        if self.issued.val() & self.beat_taken.val() {
            self.beats_due.d.next =
                self.beats_due.q.val() + self.req_beats.val().get_bits::<8>(0) - 1;
        } else if self.issued.val() {
            self.beats_due.d.next = self.beats_due.q.val() + self.req_beats.val().get_bits::<8>(0);
        } else if self.beat_taken.val() {
            self.beats_due.d.next = self.beats_due.q.val() - 1;
        }

        if self.reset.val() {
            self.state.d.next = self.st_idle.val();
            self.next_endpoint.d.next = 0.into();
            self.in_flight.d.next = 0.into();
            self.beats_due.d.next = 0.into();
            self.req_tag.d.next = 0.into();
            for i in 0..ENDPOINTS {
                self.consumer[i].d.next = 0.into();
            }
        }
    }
}

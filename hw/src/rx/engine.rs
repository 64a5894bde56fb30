//! RX engine: delivers the payload of accepted DATA frames into the receiving
//! endpoint's buffers and completes each message when its last byte is in.
//!
//! DESIGN NOTES
//! ------------
//! Input: accepted frames from the RX FIFO, whole (the parser has checked
//! them; bad ones never arrive). One frame at a time:
//!   HEAD      take beats 0 and 1; the header window they make gives every
//!             field (`HeaderFields`); beat 1 is kept, its lanes 26.. are the
//!             first payload bytes. A one-beat frame is a control packet.
//!   DECIDE    DATA for an open endpoint's port? Control packets (GRANT,
//!             RESEND, ...) and DATA for no endpoint are dropped and counted
//!             here until the grant scheduler and timers take them.
//!   LOOKUP    INSERT the RPC (peer IP, peer port, local port, local id =
//!             sender_id ^ 1) in the RPC table: its slot, new or found.
//!   STATE     read the slot's state (bytes received, bpage); a new RPC takes
//!             a bpage from the endpoint's pool.
//!   WRITE     DMA-write the payload at rx_area + bpage * 64 KiB + offset.
//!             The DMA write port takes the address of lane 0 with byte
//!             strobes, so each frame beat goes out as it is, lanes where the
//!             payload is enabled: no realignment. (A real PCIe shell wants
//!             aligned beats: the realigner belongs in the shell adapter.)
//!   UPDATE    bytes received += payload; all of the message in: COMPLETE
//!             (a completion entry with the bpage's offset) and REMOVE the RPC.
//!
//! Limits of this first version, each counted where it drops: messages must
//! fit one bpage (64 KiB; unscheduled messages are at most 40 000 bytes); a
//! packet must carry the next offset the RPC expects (in order; duplicates
//! and packets after a gap are dropped, since there is no per-RPC range
//! tracking or retransmission yet: the grant/retransmit work replaces this
//! with HomaModule's gap list); an RPC table set that is full, or an endpoint
//! with no bpage, drops the packet.

use rust_hdl::prelude::*;

use crate::host_abi::completion;
use crate::leaf::byte_swap::ByteSwap512;
use crate::leaf::header_fields::HeaderFields;
use crate::regmap::endpoint;
use crate::rx::bpage_pool::BPAGE_BYTES;
use crate::rx::rpc_table::{RpcOp, KEY_BITS, SLOT_BITS};
use homa_wire::layout::{data, HOMA_OFFSET};
use homa_wire::PacketType;

const ENDPOINTS: usize = endpoint::COUNT;

/// Where DATA's payload starts in a frame: byte 90, lane 26 of beat 1.
pub const PAYLOAD_START: u64 = (HOMA_OFFSET + data::HEADER_LEN) as u64;

mod state {
    pub const HEAD0: u64 = 0;
    pub const HEAD1: u64 = 1;
    pub const DECIDE: u64 = 2;
    pub const LOOKUP: u64 = 3;
    pub const LOOKUP_WAIT: u64 = 4;
    pub const STATE_READ: u64 = 5;
    pub const STATE: u64 = 6;
    pub const WRITE: u64 = 7;
    pub const UPDATE: u64 = 8;
    pub const COMPLETE: u64 = 9;
    pub const REMOVE: u64 = 10;
    pub const REMOVE_WAIT: u64 = 11;
    pub const DRAIN: u64 = 12;
}

fn c4(v: u64) -> Constant<Bits<4>> {
    Constant::new(v.to_bits())
}

fn lsb(field: homa_wire::layout::Field) -> Constant<Bits<16>> {
    Constant::new(((8 * field.offset) as u64).to_bits())
}

#[derive(LogicBlock)]
pub struct RxEngine {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, bool>,
    /// Accepted frames from the RX FIFO.
    pub s_axis_tdata: Signal<In, Bits<512>>,
    pub s_axis_tkeep: Signal<In, Bits<64>>,
    pub s_axis_tvalid: Signal<In, bool>,
    pub s_axis_tlast: Signal<In, bool>,
    pub s_axis_tready: Signal<Out, bool>,
    /// Per endpoint: its port (0: closed).
    pub ep_port: [Signal<In, Bits<16>>; ENDPOINTS],
    /// The endpoint receiving, and its RX area (muxed by the core).
    pub sel_endpoint: Signal<Out, Bits<2>>,
    pub sel_rx_area: Signal<In, Bits<64>>,
    /// The bpage pool, showing `sel_endpoint`'s next page.
    pub bpage_valid: Signal<In, bool>,
    pub bpage_index: Signal<In, Bits<16>>,
    pub bpage_pop: Signal<Out, bool>,
    /// The RPC table.
    pub m_rpc_valid: Signal<Out, bool>,
    pub m_rpc_ready: Signal<In, bool>,
    pub m_rpc_op: Signal<Out, Bits<2>>,
    pub m_rpc_key: Signal<Out, Bits<KEY_BITS>>,
    pub s_rpc_valid: Signal<In, bool>,
    pub s_rpc_hit: Signal<In, bool>,
    pub s_rpc_inserted: Signal<In, bool>,
    pub s_rpc_full: Signal<In, bool>,
    pub s_rpc_slot: Signal<In, Bits<SLOT_BITS>>,
    /// DMA writes of payload.
    pub m_dma_wr_valid: Signal<Out, bool>,
    pub m_dma_wr_ready: Signal<In, bool>,
    pub m_dma_wr_addr: Signal<Out, Bits<64>>,
    pub m_dma_wr_data: Signal<Out, Bits<512>>,
    pub m_dma_wr_strb: Signal<Out, Bits<64>>,
    pub m_dma_wr_last: Signal<Out, bool>,
    /// Completions to the completion writer.
    pub m_cpl_valid: Signal<Out, bool>,
    pub m_cpl_ready: Signal<In, bool>,
    pub m_cpl_endpoint: Signal<Out, Bits<2>>,
    pub m_cpl_record: Signal<Out, Bits<512>>,
    /// Counters (wrap): messages delivered; packets dropped because they
    /// were not DATA (control packets, not handled yet), for no open port,
    /// for a full RPC table set, for want of a bpage, or too big for one.
    pub messages: Signal<Out, Bits<32>>,
    pub drop_control: Signal<Out, Bits<32>>,
    pub drop_no_endpoint: Signal<Out, Bits<32>>,
    pub drop_rpc_full: Signal<Out, Bits<32>>,
    pub drop_no_bpage: Signal<Out, Bits<32>>,
    pub drop_too_big: Signal<Out, Bits<32>>,
    /// DATA whose offset is not the next the RPC expects (duplicates, gaps).
    pub drop_out_of_order: Signal<Out, Bits<32>>,

    swap: ByteSwap512,
    fields: HeaderFields,
    /// RPC state by slot: bytes received (bits 31:0), bpage (bits 47:32).
    rpc_state: RAM<Bits<48>, SLOT_BITS>,
    state: DFF<Bits<4>>,
    win0: DFF<Bits<512>>,
    win1: DFF<Bits<512>>,
    /// Frame beat 1 as received: its lanes 26.. are payload.
    beat1: DFF<Bits<512>>,
    /// The frame ended at beat 1.
    last1: DFF<bool>,
    endpoint: DFF<Bits<2>>,
    slot: DFF<Bits<SLOT_BITS>>,
    inserted: DFF<bool>,
    received: DFF<Bits<32>>,
    bpage: DFF<Bits<16>>,
    /// Index in the frame of the beat being written (1, 2, ...).
    beat: DFF<Bits<6>>,
    messages_count: DFF<Bits<32>>,
    drop_control_count: DFF<Bits<32>>,
    drop_no_endpoint_count: DFF<Bits<32>>,
    drop_rpc_full_count: DFF<Bits<32>>,
    drop_no_bpage_count: DFF<Bits<32>>,
    drop_too_big_count: DFF<Bits<32>>,
    drop_out_of_order_count: DFF<Bits<32>>,
    /// Every beat of the current frame has been taken.
    frame_done: DFF<bool>,
    /// The offset the next packet of this RPC must carry.
    expected_offset: Signal<Local, Bits<32>>,
    match_ep: [Signal<Local, bool>; ENDPOINTS],
    any_ep: Signal<Local, bool>,
    pick_ep: Signal<Local, Bits<2>>,
    key: Signal<Local, Bits<KEY_BITS>>,
    /// Address of lane 0 of frame beat 0 if the frame were laid out in the
    /// buffer: payload byte i of the frame lands at `frame_base + 90 + i`.
    frame_base: Signal<Local, Bits<64>>,
    beat_start: Signal<Local, Bits<16>>,
    beat_end: Signal<Local, Bits<16>>,
    /// Payload bytes from the start of the beat being written to the frame's end.
    payload_left: Signal<Local, Bits<16>>,
    payload_end: Signal<Local, Bits<16>>,
    lanes_from: Signal<Local, Bits<8>>,
    lanes_to: Signal<Local, Bits<8>>,
    new_received: Signal<Local, Bits<32>>,
    record: Signal<Local, Bits<512>>,
    kind: Signal<Local, Bits<8>>,

    all_lanes: Constant<Bits<64>>,
    type_data: Constant<Bits<8>>,
    payload_start: Constant<Bits<16>>,
    bpage_bytes: Constant<Bits<32>>,
    op_insert: Constant<Bits<2>>,
    op_remove: Constant<Bits<2>>,
    kind_request: Constant<Bits<8>>,
    kind_response: Constant<Bits<8>>,
    cpl_kind: Constant<Bits<16>>,
    cpl_peer_port: Constant<Bits<16>>,
    cpl_length: Constant<Bits<16>>,
    cpl_rpc_id: Constant<Bits<16>>,
    cpl_buffer_offset: Constant<Bits<16>>,
    cpl_peer_ip: Constant<Bits<16>>,
    cpl_peer_mac: Constant<Bits<16>>,
    st_head0: Constant<Bits<4>>,
    st_head1: Constant<Bits<4>>,
    st_decide: Constant<Bits<4>>,
    st_lookup: Constant<Bits<4>>,
    st_lookup_wait: Constant<Bits<4>>,
    st_state_read: Constant<Bits<4>>,
    st_state: Constant<Bits<4>>,
    st_write: Constant<Bits<4>>,
    st_update: Constant<Bits<4>>,
    st_complete: Constant<Bits<4>>,
    st_remove: Constant<Bits<4>>,
    st_remove_wait: Constant<Bits<4>>,
    st_drain: Constant<Bits<4>>,
}

impl Default for RxEngine {
    fn default() -> Self {
        assert_eq!(
            ENDPOINTS, 4,
            "the endpoint match is unrolled for four endpoints"
        );
        assert_eq!(KEY_BITS, 128);
        let c8 = |v: u8| Constant::new((v as u64).to_bits());
        Self {
            clock: Default::default(),
            reset: Default::default(),
            s_axis_tdata: Default::default(),
            s_axis_tkeep: Default::default(),
            s_axis_tvalid: Default::default(),
            s_axis_tlast: Default::default(),
            s_axis_tready: Default::default(),
            ep_port: Default::default(),
            sel_endpoint: Default::default(),
            sel_rx_area: Default::default(),
            bpage_valid: Default::default(),
            bpage_index: Default::default(),
            bpage_pop: Default::default(),
            m_rpc_valid: Default::default(),
            m_rpc_ready: Default::default(),
            m_rpc_op: Default::default(),
            m_rpc_key: Default::default(),
            s_rpc_valid: Default::default(),
            s_rpc_hit: Default::default(),
            s_rpc_inserted: Default::default(),
            s_rpc_full: Default::default(),
            s_rpc_slot: Default::default(),
            m_dma_wr_valid: Default::default(),
            m_dma_wr_ready: Default::default(),
            m_dma_wr_addr: Default::default(),
            m_dma_wr_data: Default::default(),
            m_dma_wr_strb: Default::default(),
            m_dma_wr_last: Default::default(),
            m_cpl_valid: Default::default(),
            m_cpl_ready: Default::default(),
            m_cpl_endpoint: Default::default(),
            m_cpl_record: Default::default(),
            messages: Default::default(),
            drop_control: Default::default(),
            drop_no_endpoint: Default::default(),
            drop_rpc_full: Default::default(),
            drop_no_bpage: Default::default(),
            drop_too_big: Default::default(),
            drop_out_of_order: Default::default(),
            swap: Default::default(),
            fields: Default::default(),
            rpc_state: Default::default(),
            state: Default::default(),
            win0: Default::default(),
            win1: Default::default(),
            beat1: Default::default(),
            last1: Default::default(),
            endpoint: Default::default(),
            slot: Default::default(),
            inserted: Default::default(),
            received: Default::default(),
            bpage: Default::default(),
            beat: Default::default(),
            messages_count: Default::default(),
            drop_control_count: Default::default(),
            drop_no_endpoint_count: Default::default(),
            drop_rpc_full_count: Default::default(),
            drop_no_bpage_count: Default::default(),
            drop_too_big_count: Default::default(),
            drop_out_of_order_count: Default::default(),
            frame_done: Default::default(),
            expected_offset: Default::default(),
            match_ep: Default::default(),
            any_ep: Default::default(),
            pick_ep: Default::default(),
            key: Default::default(),
            frame_base: Default::default(),
            beat_start: Default::default(),
            beat_end: Default::default(),
            payload_left: Default::default(),
            payload_end: Default::default(),
            lanes_from: Default::default(),
            lanes_to: Default::default(),
            new_received: Default::default(),
            record: Default::default(),
            kind: Default::default(),
            all_lanes: Constant::new(u64::MAX.to_bits()),
            type_data: c8(PacketType::Data as u8),
            payload_start: Constant::new(PAYLOAD_START.to_bits()),
            bpage_bytes: Constant::new(BPAGE_BYTES.to_bits()),
            op_insert: Constant::new((RpcOp::Insert as u64).to_bits()),
            op_remove: Constant::new((RpcOp::Remove as u64).to_bits()),
            kind_request: c8(completion::kind::REQUEST_RECEIVED),
            kind_response: c8(completion::kind::RESPONSE_RECEIVED),
            cpl_kind: lsb(completion::KIND),
            cpl_peer_port: lsb(completion::PEER_PORT),
            cpl_length: lsb(completion::LENGTH),
            cpl_rpc_id: lsb(completion::RPC_ID),
            cpl_buffer_offset: lsb(completion::BUFFER_OFFSET),
            cpl_peer_ip: lsb(completion::PEER_IP),
            cpl_peer_mac: lsb(completion::PEER_MAC),
            st_head0: c4(state::HEAD0),
            st_head1: c4(state::HEAD1),
            st_decide: c4(state::DECIDE),
            st_lookup: c4(state::LOOKUP),
            st_lookup_wait: c4(state::LOOKUP_WAIT),
            st_state_read: c4(state::STATE_READ),
            st_state: c4(state::STATE),
            st_write: c4(state::WRITE),
            st_update: c4(state::UPDATE),
            st_complete: c4(state::COMPLETE),
            st_remove: c4(state::REMOVE),
            st_remove_wait: c4(state::REMOVE_WAIT),
            st_drain: c4(state::DRAIN),
        }
    }
}

impl Logic for RxEngine {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state,
            win0,
            win1,
            beat1,
            last1,
            endpoint,
            slot,
            inserted,
            received,
            bpage,
            beat,
            messages_count,
            drop_control_count,
            drop_no_endpoint_count,
            drop_rpc_full_count,
            drop_no_bpage_count,
            drop_too_big_count,
            drop_out_of_order_count,
            frame_done
        );
        self.rpc_state.read_clock.next = self.clock.val();
        self.rpc_state.write_clock.next = self.clock.val();
        self.swap.beat.next = self.s_axis_tdata.val();
        self.fields.window.next = (bit_cast::<1024, 512>(self.win0.q.val()) << 512)
            | bit_cast::<1024, 512>(self.win1.q.val());

        // Which endpoint serves the frame's destination port (unrolled).
        for e in 0..ENDPOINTS {
            self.match_ep[e].next =
                (self.ep_port[e].val() != 0) & (self.ep_port[e].val() == self.fields.dport.val());
        }
        self.any_ep.next = self.match_ep[0].val()
            | self.match_ep[1].val()
            | self.match_ep[2].val()
            | self.match_ep[3].val();
        self.pick_ep.next = 0.into();
        if self.match_ep[1].val() {
            self.pick_ep.next = 1.into();
        } else if self.match_ep[2].val() {
            self.pick_ep.next = 2.into();
        } else if self.match_ep[3].val() {
            self.pick_ep.next = 3.into();
        }
        self.sel_endpoint.next = self.endpoint.q.val();

        // The RPC's key: peer IP, peer port, local port, local id.
        self.key.next = (bit_cast::<128, 32>(self.fields.src_ip.val()) << 96)
            | (bit_cast::<128, 16>(self.fields.sport.val()) << 80)
            | (bit_cast::<128, 16>(self.fields.dport.val()) << 64)
            | bit_cast::<128, 64>(self.fields.sender_id.val() ^ 1);
        self.m_rpc_key.next = self.key.val();
        self.m_rpc_op.next = self.op_insert.val();
        self.m_rpc_valid.next = false;

        // Payload placement: frame byte 90 + i goes to buffer + offset + i.
        self.frame_base.next = self.sel_rx_area.val()
            + (bit_cast::<64, 16>(self.bpage.q.val()) << 16)
            + bit_cast::<64, 32>(self.fields.payload_offset.val())
            - bit_cast::<64, 16>(self.payload_start.val());
        self.payload_end.next = self.payload_start.val() + self.fields.payload_len.val();
        // Lanes of frame beat `beat` that hold payload: [lanes_from, lanes_to).
        self.beat_start.next = bit_cast::<16, 6>(self.beat.q.val()) << 6;
        self.beat_end.next = self.beat_start.val() + 64;
        self.lanes_from.next = 0.into();
        if self.beat.q.val() == 1 {
            self.lanes_from.next = self.payload_start.val().get_bits::<8>(0) - 64;
        }
        self.payload_left.next = self.payload_end.val() - self.beat_start.val();
        self.lanes_to.next = 64.into();
        if self.payload_end.val() < self.beat_end.val() {
            self.lanes_to.next = self.payload_left.val().get_bits::<8>(0);
        }
        self.m_dma_wr_addr.next =
            self.frame_base.val() + (bit_cast::<64, 6>(self.beat.q.val()) << 6);
        self.m_dma_wr_strb.next = (self.all_lanes.val() << self.lanes_from.val())
            & (self.all_lanes.val() >> (64 - bit_cast::<16, 8>(self.lanes_to.val())));
        self.m_dma_wr_data.next = self.s_axis_tdata.val();
        if self.beat.q.val() == 1 {
            self.m_dma_wr_data.next = self.beat1.q.val();
        }
        self.m_dma_wr_last.next = self.s_axis_tlast.val();
        if self.beat.q.val() == 1 {
            self.m_dma_wr_last.next = self.last1.q.val();
        }
        self.m_dma_wr_valid.next = false;
        self.s_axis_tready.next = false;

        // State RAM: read the slot the table answered with; write back in UPDATE.
        self.rpc_state.read_address.next = self.slot.q.val();
        self.rpc_state.write_address.next = self.slot.q.val();
        self.new_received.next =
            self.received.q.val() + bit_cast::<32, 16>(self.fields.payload_len.val());
        self.rpc_state.write_data.next = (bit_cast::<48, 16>(self.bpage.q.val()) << 32)
            | bit_cast::<48, 32>(self.new_received.val());
        self.rpc_state.write_enable.next = false;
        self.bpage_pop.next = false;
        self.expected_offset.next = self.rpc_state.read_data.val().get_bits::<32>(0);

        // The completion of a delivered message.
        self.kind.next = self.kind_request.val();
        if self.fields.sender_id.val().get_bit(0) {
            self.kind.next = self.kind_response.val();
        }
        self.record.next = (bit_cast::<512, 8>(self.kind.val()) << self.cpl_kind.val())
            | (bit_cast::<512, 16>(self.fields.sport.val()) << self.cpl_peer_port.val())
            | (bit_cast::<512, 32>(self.fields.message_length.val()) << self.cpl_length.val())
            | (bit_cast::<512, 64>(self.fields.sender_id.val() ^ 1) << self.cpl_rpc_id.val())
            | (bit_cast::<512, 32>(bit_cast::<32, 16>(self.bpage.q.val()) << 16)
                << self.cpl_buffer_offset.val())
            | (bit_cast::<512, 32>(self.fields.src_ip.val()) << self.cpl_peer_ip.val())
            | (bit_cast::<512, 8>(self.fields.src_mac.val().get_bits::<8>(40))
                << self.cpl_peer_mac.val())
            | (bit_cast::<512, 8>(self.fields.src_mac.val().get_bits::<8>(32))
                << (self.cpl_peer_mac.val() + 8))
            | (bit_cast::<512, 8>(self.fields.src_mac.val().get_bits::<8>(24))
                << (self.cpl_peer_mac.val() + 16))
            | (bit_cast::<512, 8>(self.fields.src_mac.val().get_bits::<8>(16))
                << (self.cpl_peer_mac.val() + 24))
            | (bit_cast::<512, 8>(self.fields.src_mac.val().get_bits::<8>(8))
                << (self.cpl_peer_mac.val() + 32))
            | (bit_cast::<512, 8>(self.fields.src_mac.val().get_bits::<8>(0))
                << (self.cpl_peer_mac.val() + 40));
        self.m_cpl_record.next = self.record.val();
        self.m_cpl_endpoint.next = self.endpoint.q.val();
        self.m_cpl_valid.next = false;

        // ---- the state machine ----
        if self.state.q.val() == self.st_head0.val() {
            self.s_axis_tready.next = true;
            if self.s_axis_tvalid.val() {
                self.win0.d.next = self.swap.swapped.val();
                self.state.d.next = self.st_head1.val();
                if self.s_axis_tlast.val() {
                    // One beat: a control packet.
                    self.drop_control_count.d.next = self.drop_control_count.q.val() + 1;
                    self.state.d.next = self.st_head0.val();
                }
            }
        } else if self.state.q.val() == self.st_head1.val() {
            self.s_axis_tready.next = true;
            if self.s_axis_tvalid.val() {
                self.win1.d.next = self.swap.swapped.val();
                self.beat1.d.next = self.s_axis_tdata.val();
                self.last1.d.next = self.s_axis_tlast.val();
                self.frame_done.d.next = false;
                self.state.d.next = self.st_decide.val();
            }
        } else if self.state.q.val() == self.st_decide.val() {
            self.endpoint.d.next = self.pick_ep.val();
            self.state.d.next = self.st_lookup.val();
            if (self.fields.packet_type.val() != self.type_data.val())
                | !self.any_ep.val()
                | (self.fields.message_length.val() > self.bpage_bytes.val())
            {
                self.state.d.next = self.st_drain.val();
                if self.last1.q.val() {
                    self.state.d.next = self.st_head0.val();
                }
            }
            if self.fields.packet_type.val() != self.type_data.val() {
                self.drop_control_count.d.next = self.drop_control_count.q.val() + 1;
            } else if !self.any_ep.val() {
                self.drop_no_endpoint_count.d.next = self.drop_no_endpoint_count.q.val() + 1;
            } else if self.fields.message_length.val() > self.bpage_bytes.val() {
                self.drop_too_big_count.d.next = self.drop_too_big_count.q.val() + 1;
            }
        } else if self.state.q.val() == self.st_lookup.val() {
            self.m_rpc_valid.next = true;
            if self.m_rpc_ready.val() {
                self.state.d.next = self.st_lookup_wait.val();
            }
        } else if self.state.q.val() == self.st_lookup_wait.val() {
            if self.s_rpc_valid.val() {
                self.slot.d.next = self.s_rpc_slot.val();
                self.inserted.d.next = self.s_rpc_inserted.val();
                self.state.d.next = self.st_state_read.val();
                if self.s_rpc_full.val() {
                    self.drop_rpc_full_count.d.next = self.drop_rpc_full_count.q.val() + 1;
                    self.state.d.next = self.st_drain.val();
                    if self.last1.q.val() {
                        self.state.d.next = self.st_head0.val();
                    }
                }
            }
        } else if self.state.q.val() == self.st_state_read.val() {
            // The RAM reads `slot` at this edge.
            self.state.d.next = self.st_state.val();
        } else if self.state.q.val() == self.st_state.val() {
            self.received.d.next = self.rpc_state.read_data.val().get_bits::<32>(0);
            self.bpage.d.next = self.rpc_state.read_data.val().get_bits::<16>(32);
            if self.inserted.q.val() {
                self.received.d.next = 0.into();
                self.bpage.d.next = self.bpage_index.val();
                self.expected_offset.next = 0.into();
            }
            self.beat.d.next = 1.into();
            self.state.d.next = self.st_write.val();
            if self.inserted.q.val() & !self.bpage_valid.val() {
                // No buffer: forget the RPC again, drop the packet.
                self.drop_no_bpage_count.d.next = self.drop_no_bpage_count.q.val() + 1;
                self.state.d.next = self.st_remove.val();
            } else if self.fields.payload_offset.val() != self.expected_offset.val() {
                // A duplicate, or a packet after a gap: without range tracking
                // (retransmission comes with grants), taking it could complete
                // the message early or leave a hole. Drop it; a new RPC that
                // starts with such a packet is forgotten again.
                self.drop_out_of_order_count.d.next = self.drop_out_of_order_count.q.val() + 1;
                self.state.d.next = self.st_drain.val();
                if self.last1.q.val() {
                    self.state.d.next = self.st_head0.val();
                }
                if self.inserted.q.val() {
                    self.state.d.next = self.st_remove.val();
                }
            } else if self.inserted.q.val() {
                self.bpage_pop.next = true;
            }
        } else if self.state.q.val() == self.st_write.val() {
            self.m_dma_wr_valid.next = (self.beat.q.val() == 1) | self.s_axis_tvalid.val();
            self.s_axis_tready.next = (self.beat.q.val() != 1) & self.m_dma_wr_ready.val();
            if self.m_dma_wr_valid.val() & self.m_dma_wr_ready.val() {
                self.beat.d.next = self.beat.q.val() + 1;
                if self.m_dma_wr_last.val() {
                    self.frame_done.d.next = true;
                    self.state.d.next = self.st_update.val();
                }
            }
        } else if self.state.q.val() == self.st_update.val() {
            self.rpc_state.write_enable.next = true;
            self.state.d.next = self.st_head0.val();
            if self.new_received.val() >= self.fields.message_length.val() {
                self.state.d.next = self.st_complete.val();
            }
        } else if self.state.q.val() == self.st_complete.val() {
            self.m_cpl_valid.next = true;
            if self.m_cpl_ready.val() {
                self.messages_count.d.next = self.messages_count.q.val() + 1;
                self.state.d.next = self.st_remove.val();
            }
        } else if self.state.q.val() == self.st_remove.val() {
            self.m_rpc_valid.next = true;
            self.m_rpc_op.next = self.op_remove.val();
            if self.m_rpc_ready.val() {
                self.state.d.next = self.st_remove_wait.val();
            }
        } else if self.state.q.val() == self.st_remove_wait.val() {
            if self.s_rpc_valid.val() {
                // A packet dropped before its payload was taken has beats to skip.
                self.state.d.next = self.st_drain.val();
                if self.frame_done.q.val() | self.last1.q.val() {
                    self.state.d.next = self.st_head0.val();
                }
            }
        } else if self.state.q.val() == self.st_drain.val() {
            self.s_axis_tready.next = true;
            if self.s_axis_tvalid.val() & self.s_axis_tlast.val() {
                self.state.d.next = self.st_head0.val();
            }
        }

        self.messages.next = self.messages_count.q.val();
        self.drop_control.next = self.drop_control_count.q.val();
        self.drop_no_endpoint.next = self.drop_no_endpoint_count.q.val();
        self.drop_rpc_full.next = self.drop_rpc_full_count.q.val();
        self.drop_no_bpage.next = self.drop_no_bpage_count.q.val();
        self.drop_too_big.next = self.drop_too_big_count.q.val();
        self.drop_out_of_order.next = self.drop_out_of_order_count.q.val();

        if self.reset.val() {
            self.state.d.next = self.st_head0.val();
            self.messages_count.d.next = 0.into();
            self.drop_control_count.d.next = 0.into();
            self.drop_no_endpoint_count.d.next = 0.into();
            self.drop_rpc_full_count.d.next = 0.into();
            self.drop_no_bpage_count.d.next = 0.into();
            self.drop_too_big_count.d.next = 0.into();
            self.drop_out_of_order_count.d.next = 0.into();
        }
    }
}

//! Control sender: the card's own control packets. GRANTs (the grant
//! scheduler's decisions), RESENDs (the resend timer's), ACKs (answers to a
//! server's NEED_ACK, and of each response complete), CUTOFFS (our
//! unscheduled cutoffs, to a peer whose DATA shows it does not have them),
//! and the sender side's nudges about a message it sent that its peer has
//! been silent on (the TX engine's): a NEED_ACK for a response, a RESEND of
//! the response for a request.
//!
//! DESIGN NOTES
//! ------------
//! A GRANT names its RPC by the receiver's view of it (our local id as
//! `sender_id`, our port as `sport`) and goes to the peer that sent the DATA.
//! The RX engine writes that peer into `peers` (a RAM indexed by RPC slot)
//! when a message's first packet arrives; a grant from the scheduler carries
//! only (slot, offset, priority), and this block reads the slot's peer back,
//! has its own header builder make the frame (67 bytes: two beats) and
//! offers it on its own AXI-Stream port. The core puts that port on the MAC
//! between DATA frames, ahead of them: a GRANT never waits behind a queue of
//! data. Control packets go at priority 7 (HomaModule's control priority).
//!
//! An ACK names the server and our RPC id; one waits at a time. The RX
//! engine sends one for each response it completes; the TX engine answers
//! with one, through its nudge port, a NEED_ACK for an RPC the card no
//! longer has (HomaModule's client does the same). The RX engine's ACK
//! arriving while one waits is dropped and counted (the server asks again
//! with NEED_ACK); the TX engine's waits for room. Likewise one CUTOFFS
//! waits at a time, for the peer of a new inbound message whose DATA carries
//! another cutoff version than ours; another meanwhile is dropped and counted
//! (that peer's next message asks again). GRANTs go first, then RESENDs, ACKs, nudges, CUTOFFS. A RESEND
//! names its RPC and peer as a GRANT does (it is sent for an inbound message
//! too). A nudge comes with its peer and RPC (from the TX descriptor, or the
//! packet the TX engine answers), one at a time with back-pressure. NEED_ACK,
//! BUSY and RPC_UNKNOWN are the common header alone, 62 bytes: one beat.
//!
//! One GRANT every 6 cycles (the peer read, the header builder's two
//! stages, two beats); the scheduler queues its decisions (16 deep)
//! meanwhile. The first beat leaves the cycle the header is ready.

use rust_hdl::prelude::*;

use crate::rx::rpc_table::SLOT_BITS;
use crate::sched::grant_scheduler::LEN_BITS;
use crate::tx::engine::{CUTOFF_VERSION, UNSCHED_CUTOFFS};
use crate::tx::header::{TxHeaderBuilder, BODY_BYTES};
use homa_wire::PacketType;

/// What a nudge from the TX engine sends (`s_nudge_kind`).
pub mod nudge {
    /// RESEND [0, length): a client asks a silent server for its response.
    pub const RESEND: u8 = 0;
    /// NEED_ACK: a server asks a silent client to acknowledge its response.
    pub const NEED_ACK: u8 = 1;
    /// ACK: a client answers a server's NEED_ACK for an RPC it is done with.
    pub const ACK: u8 = 2;
    /// BUSY: a server answers a RESEND for a response not posted yet.
    pub const BUSY: u8 = 3;
    /// RPC_UNKNOWN: the answer to a RESEND for an RPC the card has no trace
    /// of.
    pub const RPC_UNKNOWN: u8 = 4;
}

/// Peer record layout: mac [47:0], ip [79:48], peer port [95:80], local port
/// [111:96], local id [175:112].
const PEER_BITS: usize = 176;

mod state {
    pub const IDLE: u64 = 0;
    pub const READ: u64 = 1;
    pub const BUILD: u64 = 2;
    pub const WAIT: u64 = 3;
    pub const BEAT0: u64 = 4;
    pub const BEAT1: u64 = 5;
}

fn c3(v: u64) -> Constant<Bits<3>> {
    Constant::new(v.to_bits())
}

#[derive(LogicBlock)]
pub struct ControlSender {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, bool>,
    /// The card's own addresses.
    pub local_mac: Signal<In, Bits<48>>,
    pub local_ip: Signal<In, Bits<32>>,
    /// A new inbound message's peer (from the RX engine; a write strobe).
    pub s_peer_valid: Signal<In, bool>,
    pub s_peer_slot: Signal<In, Bits<SLOT_BITS>>,
    pub s_peer_mac: Signal<In, Bits<48>>,
    pub s_peer_ip: Signal<In, Bits<32>>,
    pub s_peer_port: Signal<In, Bits<16>>,
    pub s_peer_local_port: Signal<In, Bits<16>>,
    pub s_peer_local_id: Signal<In, Bits<64>>,
    /// With `s_peer_valid`: send this peer our CUTOFFS.
    pub s_peer_stale_cutoffs: Signal<In, bool>,
    /// Grants from the grant scheduler.
    pub s_grant_valid: Signal<In, bool>,
    pub s_grant_ready: Signal<Out, bool>,
    pub s_grant_slot: Signal<In, Bits<SLOT_BITS>>,
    pub s_grant_offset: Signal<In, Bits<LEN_BITS>>,
    pub s_grant_priority: Signal<In, Bits<3>>,
    /// RESENDs from the resend timer: the message's slot and the range.
    pub s_resend_valid: Signal<In, bool>,
    pub s_resend_ready: Signal<Out, bool>,
    pub s_resend_slot: Signal<In, Bits<SLOT_BITS>>,
    pub s_resend_offset: Signal<In, Bits<LEN_BITS>>,
    pub s_resend_length: Signal<In, Bits<LEN_BITS>>,
    /// Send an ACK (a strobe from the RX engine, for a response it
    /// completed): the server, and the RPC as this card (the client) knows
    /// it.
    pub s_ack_valid: Signal<In, bool>,
    pub s_ack_mac: Signal<In, Bits<48>>,
    pub s_ack_ip: Signal<In, Bits<32>>,
    pub s_ack_server_port: Signal<In, Bits<16>>,
    pub s_ack_local_port: Signal<In, Bits<16>>,
    pub s_ack_client_id: Signal<In, Bits<64>>,
    /// A nudge from the TX engine (`nudge` names the kinds): NEED_ACK (a
    /// response), RESEND [0, length) (a request whose response has not
    /// come), or an answer to a peer's packet (ACK, BUSY, RPC_UNKNOWN); the
    /// peer, our port, our RPC id.
    pub s_nudge_valid: Signal<In, bool>,
    pub s_nudge_ready: Signal<Out, bool>,
    pub s_nudge_kind: Signal<In, Bits<3>>,
    pub s_nudge_mac: Signal<In, Bits<48>>,
    pub s_nudge_ip: Signal<In, Bits<32>>,
    pub s_nudge_peer_port: Signal<In, Bits<16>>,
    pub s_nudge_local_port: Signal<In, Bits<16>>,
    pub s_nudge_local_id: Signal<In, Bits<64>>,
    pub s_nudge_length: Signal<In, Bits<LEN_BITS>>,
    /// GRANT and ACK frames.
    pub m_axis_tdata: Signal<Out, Bits<512>>,
    pub m_axis_tkeep: Signal<Out, Bits<64>>,
    pub m_axis_tvalid: Signal<Out, bool>,
    pub m_axis_tlast: Signal<Out, bool>,
    pub m_axis_tready: Signal<In, bool>,
    /// GRANT frames sent, ACK frames sent, NEED_ACKs not answered for want
    /// of room (all wrap).
    pub grants_sent: Signal<Out, Bits<32>>,
    pub acks_sent: Signal<Out, Bits<32>>,
    pub acks_dropped: Signal<Out, Bits<32>>,
    /// CUTOFFS frames sent, and not sent for want of room (both wrap).
    pub cutoffs_sent: Signal<Out, Bits<32>>,
    pub cutoffs_dropped: Signal<Out, Bits<32>>,
    /// NEED_ACKs sent, RESENDs for a response sent, BUSYs and RPC_UNKNOWNs
    /// sent (all wrap).
    pub need_acks_sent: Signal<Out, Bits<32>>,
    pub response_resends_sent: Signal<Out, Bits<32>>,
    pub busys_sent: Signal<Out, Bits<32>>,
    pub unknowns_sent: Signal<Out, Bits<32>>,

    peers: RAM<Bits<PEER_BITS>, SLOT_BITS>,
    header: TxHeaderBuilder,
    state: DFF<Bits<3>>,
    offset: DFF<Bits<LEN_BITS>>,
    /// The grant's priority (not `priority`: a SystemVerilog keyword).
    level: DFF<Bits<3>>,
    beat0: DFF<Bits<512>>,
    beat1: DFF<Bits<512>>,
    keep1: DFF<Bits<64>>,
    sent: DFF<Bits<32>>,
    /// The NEED_ACK waiting for its ACK.
    ack_pending: DFF<bool>,
    ack_mac: DFF<Bits<48>>,
    ack_ip: DFF<Bits<32>>,
    ack_server_port: DFF<Bits<16>>,
    ack_local_port: DFF<Bits<16>>,
    ack_client_id: DFF<Bits<64>>,
    /// The CUTOFFS waiting to be sent: its peer, as for a GRANT.
    cut_pending: DFF<bool>,
    cut_mac: DFF<Bits<48>>,
    cut_ip: DFF<Bits<32>>,
    cut_port: DFF<Bits<16>>,
    cut_local_port: DFF<Bits<16>>,
    cut_local_id: DFF<Bits<64>>,
    cutoffs_count: DFF<Bits<32>>,
    cutoffs_dropped_count: DFF<Bits<32>>,
    /// The nudge waiting to be sent.
    nudge_pending: DFF<bool>,
    nudge_kind: DFF<Bits<3>>,
    nudge_mac: DFF<Bits<48>>,
    nudge_ip: DFF<Bits<32>>,
    nudge_peer_port: DFF<Bits<16>>,
    nudge_local_port: DFF<Bits<16>>,
    nudge_local_id: DFF<Bits<64>>,
    nudge_length: DFF<Bits<LEN_BITS>>,
    need_acks_count: DFF<Bits<32>>,
    response_resends_count: DFF<Bits<32>>,
    busys_count: DFF<Bits<32>>,
    unknowns_count: DFF<Bits<32>>,
    is_nudge: DFF<bool>,
    /// The nudge on offer is an ACK (it waits with the RX engine's ACKs).
    nudge_is_ack: Signal<Local, bool>,
    nudge_taken: Signal<Local, bool>,
    nudge_kind_ack: Constant<Bits<3>>,
    nudge_kind_need_ack: Constant<Bits<3>>,
    nudge_kind_busy: Constant<Bits<3>>,
    nudge_kind_unknown: Constant<Bits<3>>,
    type_busy: Constant<Bits<8>>,
    type_rpc_unknown: Constant<Bits<8>>,
    /// The frame is one beat (a NEED_ACK).
    single: DFF<bool>,
    one_beat: Signal<Local, bool>,
    keep0: Signal<Local, Bits<64>>,
    /// The frame's last beat is taken.
    frame_done: Signal<Local, bool>,
    type_need_ack: Constant<Bits<8>>,
    /// The frame being built is an ACK, a CUTOFFS, a RESEND (none: a GRANT).
    is_ack: DFF<bool>,
    is_cutoffs: DFF<bool>,
    is_resend: DFF<bool>,
    /// A RESEND's length.
    length: DFF<Bits<LEN_BITS>>,
    acks_count: DFF<Bits<32>>,
    acks_dropped_count: DFF<Bits<32>>,
    peer: Signal<Local, Bits<PEER_BITS>>,
    /// ACK's body: one entry (num_acks = 1, client id, server port).
    ack_body: Signal<Local, Bits<{ 8 * BODY_BYTES }>>,
    all_lanes: Constant<Bits<64>>,
    type_grant: Constant<Bits<8>>,
    type_ack: Constant<Bits<8>>,
    type_cutoffs: Constant<Bits<8>>,
    type_resend: Constant<Bits<8>>,
    /// CUTOFFS' body, first byte on top: the eight limits, the version.
    cutoffs_body: Constant<Bits<{ 8 * BODY_BYTES }>>,
    /// num_acks = 1 in the top 16 bits of an ACK's body.
    one_ack: Constant<Bits<{ 8 * BODY_BYTES }>>,
    st_idle: Constant<Bits<3>>,
    st_read: Constant<Bits<3>>,
    st_build: Constant<Bits<3>>,
    st_wait: Constant<Bits<3>>,
    st_beat0: Constant<Bits<3>>,
    st_beat1: Constant<Bits<3>>,
}

impl Default for ControlSender {
    fn default() -> Self {
        assert_eq!(
            BODY_BYTES, 52,
            "the ACK body's shifts below assume 416 bits"
        );
        Self {
            clock: Default::default(),
            reset: Default::default(),
            local_mac: Default::default(),
            local_ip: Default::default(),
            s_peer_valid: Default::default(),
            s_peer_slot: Default::default(),
            s_peer_mac: Default::default(),
            s_peer_ip: Default::default(),
            s_peer_port: Default::default(),
            s_peer_local_port: Default::default(),
            s_peer_local_id: Default::default(),
            s_grant_valid: Default::default(),
            s_grant_ready: Default::default(),
            s_grant_slot: Default::default(),
            s_grant_offset: Default::default(),
            s_grant_priority: Default::default(),
            m_axis_tdata: Default::default(),
            m_axis_tkeep: Default::default(),
            m_axis_tvalid: Default::default(),
            m_axis_tlast: Default::default(),
            m_axis_tready: Default::default(),
            grants_sent: Default::default(),
            acks_sent: Default::default(),
            acks_dropped: Default::default(),
            s_ack_valid: Default::default(),
            s_ack_mac: Default::default(),
            s_ack_ip: Default::default(),
            s_ack_server_port: Default::default(),
            s_ack_local_port: Default::default(),
            s_ack_client_id: Default::default(),
            ack_pending: Default::default(),
            ack_mac: Default::default(),
            ack_ip: Default::default(),
            ack_server_port: Default::default(),
            ack_local_port: Default::default(),
            ack_client_id: Default::default(),
            is_ack: Default::default(),
            is_cutoffs: Default::default(),
            is_resend: Default::default(),
            length: Default::default(),
            s_resend_valid: Default::default(),
            s_resend_ready: Default::default(),
            s_resend_slot: Default::default(),
            s_resend_offset: Default::default(),
            s_resend_length: Default::default(),
            type_resend: Constant::new((PacketType::Resend as u64).to_bits()),
            type_need_ack: Constant::new((PacketType::NeedAck as u64).to_bits()),
            s_nudge_valid: Default::default(),
            s_nudge_ready: Default::default(),
            s_nudge_kind: Default::default(),
            s_nudge_mac: Default::default(),
            s_nudge_ip: Default::default(),
            s_nudge_peer_port: Default::default(),
            s_nudge_local_port: Default::default(),
            s_nudge_local_id: Default::default(),
            s_nudge_length: Default::default(),
            need_acks_sent: Default::default(),
            response_resends_sent: Default::default(),
            busys_sent: Default::default(),
            unknowns_sent: Default::default(),
            nudge_pending: Default::default(),
            nudge_kind: Default::default(),
            nudge_mac: Default::default(),
            nudge_ip: Default::default(),
            nudge_peer_port: Default::default(),
            nudge_local_port: Default::default(),
            nudge_local_id: Default::default(),
            nudge_length: Default::default(),
            need_acks_count: Default::default(),
            response_resends_count: Default::default(),
            busys_count: Default::default(),
            unknowns_count: Default::default(),
            is_nudge: Default::default(),
            nudge_is_ack: Default::default(),
            nudge_taken: Default::default(),
            nudge_kind_ack: Constant::new((nudge::ACK as u64).to_bits()),
            nudge_kind_need_ack: Constant::new((nudge::NEED_ACK as u64).to_bits()),
            nudge_kind_busy: Constant::new((nudge::BUSY as u64).to_bits()),
            nudge_kind_unknown: Constant::new((nudge::RPC_UNKNOWN as u64).to_bits()),
            type_busy: Constant::new((PacketType::Busy as u64).to_bits()),
            type_rpc_unknown: Constant::new((PacketType::RpcUnknown as u64).to_bits()),
            single: Default::default(),
            one_beat: Default::default(),
            keep0: Default::default(),
            frame_done: Default::default(),
            s_peer_stale_cutoffs: Default::default(),
            cutoffs_sent: Default::default(),
            cutoffs_dropped: Default::default(),
            cut_pending: Default::default(),
            cut_mac: Default::default(),
            cut_ip: Default::default(),
            cut_port: Default::default(),
            cut_local_port: Default::default(),
            cut_local_id: Default::default(),
            cutoffs_count: Default::default(),
            cutoffs_dropped_count: Default::default(),
            type_cutoffs: Constant::new((PacketType::Cutoffs as u64).to_bits()),
            cutoffs_body: Constant::new(cutoffs_body()),
            acks_count: Default::default(),
            acks_dropped_count: Default::default(),
            ack_body: Default::default(),
            peers: Default::default(),
            header: Default::default(),
            state: Default::default(),
            offset: Default::default(),
            level: Default::default(),
            beat0: Default::default(),
            beat1: Default::default(),
            keep1: Default::default(),
            sent: Default::default(),
            peer: Default::default(),
            all_lanes: Constant::new(u64::MAX.to_bits()),
            type_grant: Constant::new((PacketType::Grant as u64).to_bits()),
            type_ack: Constant::new((PacketType::Ack as u64).to_bits()),
            one_ack: Constant::new(
                Bits::<{ 8 * BODY_BYTES }>::from(1u64) << ((8 * BODY_BYTES - 16) as u64),
            ),
            st_idle: c3(state::IDLE),
            st_read: c3(state::READ),
            st_build: c3(state::BUILD),
            st_wait: c3(state::WAIT),
            st_beat0: c3(state::BEAT0),
            st_beat1: c3(state::BEAT1),
        }
    }
}

impl Logic for ControlSender {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state,
            offset,
            level,
            beat0,
            beat1,
            keep1,
            sent,
            ack_pending,
            nudge_pending,
            nudge_kind,
            nudge_mac,
            nudge_ip,
            nudge_peer_port,
            nudge_local_port,
            nudge_local_id,
            nudge_length,
            need_acks_count,
            response_resends_count,
            busys_count,
            unknowns_count,
            is_nudge,
            single,
            ack_mac,
            ack_ip,
            ack_server_port,
            ack_local_port,
            ack_client_id,
            is_ack,
            acks_count,
            acks_dropped_count,
            cut_pending,
            cut_mac,
            cut_ip,
            cut_port,
            cut_local_port,
            cut_local_id,
            cutoffs_count,
            cutoffs_dropped_count,
            is_cutoffs,
            is_resend,
            length
        );
        self.peers.read_clock.next = self.clock.val();
        self.peers.write_clock.next = self.clock.val();
        self.peers.write_address.next = self.s_peer_slot.val();
        self.peers.write_enable.next = self.s_peer_valid.val();
        self.peers.write_data.next = bit_cast::<PEER_BITS, 48>(self.s_peer_mac.val())
            | (bit_cast::<PEER_BITS, 32>(self.s_peer_ip.val()) << 48)
            | (bit_cast::<PEER_BITS, 16>(self.s_peer_port.val()) << 80)
            | (bit_cast::<PEER_BITS, 16>(self.s_peer_local_port.val()) << 96)
            | (bit_cast::<PEER_BITS, 64>(self.s_peer_local_id.val()) << 112);
        self.peers.read_address.next = self.s_grant_slot.val();
        if !self.s_grant_valid.val() {
            self.peers.read_address.next = self.s_resend_slot.val();
        }
        self.peer.next = self.peers.read_data.val();

        self.header.clock.next = self.clock.val();
        self.header.reset.next = self.reset.val();
        self.header.in_valid.next = false;
        self.header.dst_mac.next = self.peer.val().get_bits::<48>(0);
        self.header.src_mac.next = self.local_mac.val();
        self.header.src_ip.next = self.local_ip.val();
        self.header.dst_ip.next = self.peer.val().get_bits::<32>(48);
        self.header.level.next = 7.into();
        self.header.ip_id.next = 0.into();
        self.header.packet_type.next = self.type_grant.val();
        self.header.sport.next = self.peer.val().get_bits::<16>(96);
        self.header.dport.next = self.peer.val().get_bits::<16>(80);
        self.header.sender_id.next = self.peer.val().get_bits::<64>(112);
        self.header.data_offset.next = 0.into();
        self.header.message_length.next = 0.into();
        self.header.incoming.next = 0.into();
        self.header.ack_client_id.next = 0.into();
        self.header.ack_server_port.next = 0.into();
        self.header.cutoff_version.next = 0.into();
        self.header.retransmit.next = false;
        self.header.payload_len.next = 0.into();
        self.header.ctl_offset.next = bit_cast::<32, LEN_BITS>(self.offset.q.val());
        self.header.ctl_length.next = bit_cast::<32, LEN_BITS>(self.length.q.val());
        self.header.ctl_priority.next = bit_cast::<8, 3>(self.level.q.val());
        self.header.body.next = 0.into();
        // ACK body, first byte on top: num_acks (2 bytes) = 1, then the
        // entry: client id (8), server port (2); the other entries zero.
        // (The body is 416 bits: the entry's fields end 16, 80 and 96 bits
        // below its top.)
        self.ack_body.next = self.one_ack.val()
            | (bit_cast::<{ 8 * BODY_BYTES }, 64>(self.ack_client_id.q.val()) << 336)
            | (bit_cast::<{ 8 * BODY_BYTES }, 16>(self.ack_server_port.q.val()) << 320);
        if self.is_ack.q.val() {
            self.header.dst_mac.next = self.ack_mac.q.val();
            self.header.dst_ip.next = self.ack_ip.q.val();
            self.header.packet_type.next = self.type_ack.val();
            self.header.sport.next = self.ack_local_port.q.val();
            self.header.dport.next = self.ack_server_port.q.val();
            self.header.sender_id.next = self.ack_client_id.q.val();
            self.header.body.next = self.ack_body.val();
        }
        if self.is_resend.q.val() {
            self.header.packet_type.next = self.type_resend.val();
        }
        if self.is_nudge.q.val() {
            self.header.dst_mac.next = self.nudge_mac.q.val();
            self.header.dst_ip.next = self.nudge_ip.q.val();
            self.header.packet_type.next = self.type_resend.val();
            if self.nudge_kind.q.val() == self.nudge_kind_need_ack.val() {
                self.header.packet_type.next = self.type_need_ack.val();
            }
            if self.nudge_kind.q.val() == self.nudge_kind_busy.val() {
                self.header.packet_type.next = self.type_busy.val();
            }
            if self.nudge_kind.q.val() == self.nudge_kind_unknown.val() {
                self.header.packet_type.next = self.type_rpc_unknown.val();
            }
            self.header.sport.next = self.nudge_local_port.q.val();
            self.header.dport.next = self.nudge_peer_port.q.val();
            self.header.sender_id.next = self.nudge_local_id.q.val();
            self.header.ctl_offset.next = 0.into();
            self.header.ctl_length.next = bit_cast::<32, LEN_BITS>(self.nudge_length.q.val());
        }
        // A nudge waits here, one at a time; an ACK waits with the RX
        // engine's, which go first.
        self.nudge_is_ack.next = self.s_nudge_kind.val() == self.nudge_kind_ack.val();
        self.s_nudge_ready.next = !self.nudge_pending.q.val();
        if self.nudge_is_ack.val() {
            self.s_nudge_ready.next = !self.ack_pending.q.val() & !self.s_ack_valid.val();
        }
        self.nudge_taken.next = self.s_nudge_valid.val() & self.s_nudge_ready.val();
        if self.nudge_taken.val() & self.nudge_is_ack.val() {
            self.ack_pending.d.next = true;
            self.ack_mac.d.next = self.s_nudge_mac.val();
            self.ack_ip.d.next = self.s_nudge_ip.val();
            self.ack_server_port.d.next = self.s_nudge_peer_port.val();
            self.ack_local_port.d.next = self.s_nudge_local_port.val();
            self.ack_client_id.d.next = self.s_nudge_local_id.val();
        }
        if self.nudge_taken.val() & !self.nudge_is_ack.val() {
            self.nudge_pending.d.next = true;
            self.nudge_kind.d.next = self.s_nudge_kind.val();
            self.nudge_mac.d.next = self.s_nudge_mac.val();
            self.nudge_ip.d.next = self.s_nudge_ip.val();
            self.nudge_peer_port.d.next = self.s_nudge_peer_port.val();
            self.nudge_local_port.d.next = self.s_nudge_local_port.val();
            self.nudge_local_id.d.next = self.s_nudge_local_id.val();
            self.nudge_length.d.next = self.s_nudge_length.val();
        }
        if self.is_cutoffs.q.val() {
            self.header.dst_mac.next = self.cut_mac.q.val();
            self.header.dst_ip.next = self.cut_ip.q.val();
            self.header.packet_type.next = self.type_cutoffs.val();
            self.header.sport.next = self.cut_local_port.q.val();
            self.header.dport.next = self.cut_port.q.val();
            self.header.sender_id.next = self.cut_local_id.q.val();
            self.header.body.next = self.cutoffs_body.val();
        }
        // A CUTOFFS for a stale peer waits here, one at a time.
        if self.s_peer_valid.val() & self.s_peer_stale_cutoffs.val() {
            if self.cut_pending.q.val() {
                self.cutoffs_dropped_count.d.next = self.cutoffs_dropped_count.q.val() + 1;
            } else {
                self.cut_pending.d.next = true;
                self.cut_mac.d.next = self.s_peer_mac.val();
                self.cut_ip.d.next = self.s_peer_ip.val();
                self.cut_port.d.next = self.s_peer_port.val();
                self.cut_local_port.d.next = self.s_peer_local_port.val();
                self.cut_local_id.d.next = self.s_peer_local_id.val();
            }
        }
        // An ACK waits here, one at a time.
        if self.s_ack_valid.val() {
            if self.ack_pending.q.val() {
                self.acks_dropped_count.d.next = self.acks_dropped_count.q.val() + 1;
            } else {
                self.ack_pending.d.next = true;
                self.ack_mac.d.next = self.s_ack_mac.val();
                self.ack_ip.d.next = self.s_ack_ip.val();
                self.ack_server_port.d.next = self.s_ack_server_port.val();
                self.ack_local_port.d.next = self.s_ack_local_port.val();
                self.ack_client_id.d.next = self.s_ack_client_id.val();
            }
        }

        self.s_grant_ready.next = false;
        self.s_resend_ready.next = false;
        // One flat term (one LUT from the state and the header builder's
        // registered `out_valid`), not set branch by branch: the core's TX
        // port arbiter and the framer's ready hang behind it (10 levels).
        self.m_axis_tvalid.next = ((self.state.q.val() == self.st_wait.val())
            & self.header.out_valid.val())
            | (self.state.q.val() == self.st_beat0.val())
            | (self.state.q.val() == self.st_beat1.val());
        self.m_axis_tdata.next = self.beat0.q.val();
        self.m_axis_tkeep.next = self.all_lanes.val();
        self.m_axis_tlast.next = false;
        self.one_beat.next = self.header.out_frame_len.val() <= 64;
        self.keep0.next = self.all_lanes.val() >> (64 - self.header.out_frame_len.val());
        self.frame_done.next = false;

        if self.state.q.val() == self.st_idle.val() {
            // The RAM reads the offered grant's slot at every edge; take the
            // grant, and its peer is out next cycle.
            self.s_grant_ready.next = true;
            self.is_ack.d.next = false;
            self.is_cutoffs.d.next = false;
            self.is_resend.d.next = false;
            self.is_nudge.d.next = false;
            self.s_resend_ready.next = !self.s_grant_valid.val();
            if self.s_grant_valid.val() {
                self.offset.d.next = self.s_grant_offset.val();
                self.level.d.next = self.s_grant_priority.val();
                self.state.d.next = self.st_read.val();
            } else if self.s_resend_valid.val() {
                // The data resent comes at the highest priority.
                self.is_resend.d.next = true;
                self.offset.d.next = self.s_resend_offset.val();
                self.length.d.next = self.s_resend_length.val();
                self.level.d.next = 7.into();
                self.state.d.next = self.st_read.val();
            } else if self.ack_pending.q.val() {
                self.is_ack.d.next = true;
                self.state.d.next = self.st_read.val();
            } else if self.nudge_pending.q.val() {
                self.is_nudge.d.next = true;
                self.level.d.next = 7.into();
                self.state.d.next = self.st_read.val();
            } else if self.cut_pending.q.val() {
                self.is_cutoffs.d.next = true;
                self.state.d.next = self.st_read.val();
            }
        } else if self.state.q.val() == self.st_read.val() {
            // `peer` holds the slot read at the last edge; the address moves
            // on with the next grant, so sample it now.
            self.header.in_valid.next = true;
            self.state.d.next = self.st_build.val();
        } else if self.state.q.val() == self.st_build.val() {
            self.state.d.next = self.st_wait.val();
        } else if self.state.q.val() == self.st_wait.val() {
            if self.header.out_valid.val() {
                // The first beat goes out straight from the header builder
                // (kept, in case the port is busy); the second is kept.
                self.m_axis_tdata.next = self.header.out_beat0.val();
                self.beat0.d.next = self.header.out_beat0.val();
                self.beat1.d.next = self.header.out_beat1.val();
                // Lanes 0 .. frame_len - 64 of the second beat.
                self.keep1.d.next = self.all_lanes.val() >> (128 - self.header.out_frame_len.val());
                self.single.d.next = self.one_beat.val();
                self.state.d.next = self.st_beat0.val();
                if self.one_beat.val() {
                    // A one-beat frame: its lanes, kept for BEAT0.
                    self.m_axis_tkeep.next = self.keep0.val();
                    self.m_axis_tlast.next = true;
                    self.keep1.d.next = self.keep0.val();
                    self.frame_done.next = self.m_axis_tready.val();
                } else if self.m_axis_tready.val() {
                    self.state.d.next = self.st_beat1.val();
                }
            }
        } else if self.state.q.val() == self.st_beat0.val() {
            if self.single.q.val() {
                self.m_axis_tkeep.next = self.keep1.q.val();
                self.m_axis_tlast.next = true;
                self.frame_done.next = self.m_axis_tready.val();
            } else if self.m_axis_tready.val() {
                self.state.d.next = self.st_beat1.val();
            }
        } else if self.state.q.val() == self.st_beat1.val() {
            self.m_axis_tdata.next = self.beat1.q.val();
            self.m_axis_tkeep.next = self.keep1.q.val();
            self.m_axis_tlast.next = true;
            self.frame_done.next = self.m_axis_tready.val();
        }
        if self.frame_done.val() {
            if self.is_ack.q.val() {
                self.acks_count.d.next = self.acks_count.q.val() + 1;
                self.ack_pending.d.next = false;
            } else if self.is_cutoffs.q.val() {
                self.cutoffs_count.d.next = self.cutoffs_count.q.val() + 1;
                self.cut_pending.d.next = false;
            } else if self.is_nudge.q.val() {
                self.nudge_pending.d.next = false;
                if self.nudge_kind.q.val() == self.nudge_kind_need_ack.val() {
                    self.need_acks_count.d.next = self.need_acks_count.q.val() + 1;
                } else if self.nudge_kind.q.val() == self.nudge_kind_busy.val() {
                    self.busys_count.d.next = self.busys_count.q.val() + 1;
                } else if self.nudge_kind.q.val() == self.nudge_kind_unknown.val() {
                    self.unknowns_count.d.next = self.unknowns_count.q.val() + 1;
                } else {
                    self.response_resends_count.d.next = self.response_resends_count.q.val() + 1;
                }
            } else if self.is_resend.q.val() {
                // (Counted by the resend timer.)
            } else {
                self.sent.d.next = self.sent.q.val() + 1;
            }
            self.state.d.next = self.st_idle.val();
        }
        self.grants_sent.next = self.sent.q.val();
        self.acks_sent.next = self.acks_count.q.val();
        self.acks_dropped.next = self.acks_dropped_count.q.val();
        self.cutoffs_sent.next = self.cutoffs_count.q.val();
        self.cutoffs_dropped.next = self.cutoffs_dropped_count.q.val();
        self.need_acks_sent.next = self.need_acks_count.q.val();
        self.response_resends_sent.next = self.response_resends_count.q.val();
        self.busys_sent.next = self.busys_count.q.val();
        self.unknowns_sent.next = self.unknowns_count.q.val();
        if self.reset.val() {
            self.nudge_pending.d.next = false;
            self.need_acks_count.d.next = 0.into();
            self.response_resends_count.d.next = 0.into();
            self.busys_count.d.next = 0.into();
            self.unknowns_count.d.next = 0.into();
            self.state.d.next = self.st_idle.val();
            self.sent.d.next = 0.into();
            self.ack_pending.d.next = false;
            self.acks_count.d.next = 0.into();
            self.acks_dropped_count.d.next = 0.into();
            self.cut_pending.d.next = false;
            self.cutoffs_count.d.next = 0.into();
            self.cutoffs_dropped_count.d.next = 0.into();
        }
    }
}

/// CUTOFFS' body (416 bits, first byte on top): `UNSCHED_CUTOFFS[0..8]`,
/// four bytes each, then `CUTOFF_VERSION`; the rest zero.
fn cutoffs_body() -> Bits<{ 8 * BODY_BYTES }> {
    let mut body = Bits::<{ 8 * BODY_BYTES }>::default();
    for (i, &limit) in UNSCHED_CUTOFFS.iter().enumerate() {
        body = body | (Bits::from(limit as u64) << ((8 * BODY_BYTES - 32 * (i + 1)) as u64));
    }
    body | (Bits::from(CUTOFF_VERSION as u64) << ((8 * BODY_BYTES - 32 * 8 - 16) as u64))
}

//! TX engine: takes descriptors from the endpoints' TX rings and keeps many
//! outbound messages in flight at once, sending packet by packet the one the
//! send scheduler chooses (SRPT among messages with granted bytes), raising
//! each message's granted offset when the receiver's GRANTs come in,
//! sending again what a receiver's RESEND asks for, and reporting each
//! message in its endpoint's completion ring once the card no longer needs
//! its bytes: its receiver has acknowledged it (or, for a request, begun the
//! response), or its peer has been silent for `timeout_ticks`.
//!
//! DESIGN NOTES
//! ------------
//! Per message (a slot of `out_table`, the outbound twin of the RX RPC table,
//! keyed by peer IP, peer port, local port and RPC id as a GRANT names it):
//! the descriptor as fetched (`descs`) and its progress (`progress`: bytes
//! sent, bytes granted, scheduled priority, birth). Two machines share them:
//!
//! The control machine, one thing at a time, in this order of precedence:
//!   EVENT      a sender event from the RX engine (queued, `EVENT_QUEUE`
//!              deep; more are dropped and counted), its message looked up
//!              by key:
//!              GRANT: raise `granted` to the offset (never past the
//!              message), take its priority, and tell the send scheduler if
//!              the message just became eligible (else its keys are
//!              unchanged). A GRANT for no message here is counted.
//!              RESEND [offset, offset + length): if bytes from `offset` have
//!              been sent, go back: `sent` = offset, and the packets up to
//!              `resend_end` = min(offset + length, `sent_max`) go again
//!              (`retransmit` set), after which `sent` jumps back to
//!              `sent_max`. A RESEND for bytes not sent yet needs nothing
//!              (they are coming), unless they lie past `granted`: a GRANT
//!              was lost, and the RESEND's end is taken as granted
//!              (HomaModule's rule). One for no message here is answered
//!              (below).
//!              ACKED (an ACK, an ack in DATA) for a response, or
//!              RESPONSE_BEGUN for a request: the peer is done with the
//!              message; RELEASE it. (The other way round, or for a message
//!              not all sent, it is a forgery or a confused peer: ignored.
//!              The fuzzer found a request released by an ACK the fuzzed
//!              card sent, as a client, to a forged server at the real
//!              client's address: the request's response never came.)
//!              BUSY: the peer is alive; its silence starts again.
//!              NEED_ACK (a server's, for an RPC of ours whose response the
//!              RX engine does not have): a request still here has had no
//!              packet of its response (the first one releases it), so the
//!              RPC is not over and is not acked; for no request here, the
//!              RPC is over (completed or failed): answer with an ACK,
//!              built from the event (ANSWER), so the server frees it.
//!              RPC_UNKNOWN: the peer has no such RPC. A request goes again
//!              from its start (everything sent so far: HomaModule's
//!              client restart); a response is RELEASEd (its client gave
//!              up).
//!              A RESEND for no message here is answered (ANSWER): BUSY if
//!              the RX engine holds the RPC (a request in service: the
//!              host has not posted the response yet; the client keeps
//!              waiting), else RPC_UNKNOWN.
//!   EXPIRED    the linger timer (below) names a slot whose peer has been
//!              silent for `resend_ticks`, and then every `resend_interval`
//!              ticks more: at `timeout_ticks` of silence the message is
//!              RELEASEd (with TIMEOUT status if it is a request, whose
//!              response never came, or if it still waits for grants);
//!              before that, a message all sent NUDGEs its peer through
//!              the control sender: a request asks the server for the
//!              response's first packet (RESEND), a response asks the
//!              client for its ACK (NEED_ACK), as HomaModule does (a
//!              server that never had the request answers RPC_UNKNOWN, and
//!              the request goes again). Packets sent again do not end a
//!              silence (the RESEND that asked for them did; and a dead
//!              server's RPC must time out). A message with granted bytes
//!              still to send is not silent: nothing.
//!   RELEASE    the message leaves the send scheduler and the table, and
//!              its completion is written: the host may reuse its buffer.
//!              A response's release also tells the RX engine (`m_served`)
//!              to forget the request it answers, kept until then so that
//!              copies of it are dropped, not run again.
//!   DESCRIPTOR a fetched descriptor (fetched ahead, below): checked
//!              (opcode, length 1..=1,000,000), INSERTed in `out_table`,
//!              its progress initialised (granted = min(length,
//!              unsched_bytes)), given to the send scheduler. A bad
//!              descriptor, a second one for a message in flight or a full
//!              table set completes at once with an error status.
//!   PACKET     when fewer than `JOBS` packets are queued for the link: the
//!              send scheduler picks a message; its next packet runs from
//!              `sent` to the first of +1424 bytes, `granted`, and the end of
//!              the unscheduled bytes; its payload read is issued and the
//!              packet queued as a job; `sent` advances and the scheduler
//!              hears. After a message's last packet it stays, for RESENDs,
//!              until RELEASEd.
//! The streamer, beside it: takes the jobs in order, hands each header to
//! the header builder and streams its payload from the read responses to
//! the framer.
//!
//! Line rate: an MTU frame is 30.76 cycles of wire at 100 Gb/s and 24 beats
//! of the framer, so the framer may never wait for a header or a payload
//! beat. Two things made it wait (a frame every 32 cycles, 88 Gb/s): the
//! next header was built only after the frame before had gone (`frame_sent`,
//! then two cycles of header builder), and the read responses stalled
//! meanwhile. Now headers run ahead of payload: `j_hdr` is the next job to
//! get a header, up to two ahead of the framer (`h_ahead`; the core's header
//! slice holds one), and the streamer's own job (`sj_*`) is popped when its
//! last payload beat is taken. The payload passes a 2-entry ring (`pay_*`)
//! between the read port and the framer, so a beat the framer does not take
//! this cycle does not stall the PCIe stream. The ring is inline, not a
//! `RegisterSlice` child: with the child, Verilator (5.006) let this engine
//! count a beat that the slice had not popped (seen in a VCD under eight
//! concurrent 1 MB messages), and frames carried their neighbours' bytes.
//!
//! Why a message stays after its last packet: a receiver that lost a packet
//! asks for it again (RESEND), and the payload is read again from the host,
//! so the host's buffer must live until the receiver has everything, which
//! only the receiver knows: HomaModule's rule is that a server keeps its
//! response until the client acknowledges it, and a client keeps its request
//! until the response comes. The RX engine turns each sign of that into an
//! ACKED event: an ACK packet, an ack riding in a DATA packet, the first
//! packet of a response. `linger` (a `ResendTimer`, whose per-slot silence
//! count and firing schedule are exactly what is needed) counts each
//! message's ticks since it last sent a packet or heard from its peer (a
//! GRANT, RESEND or BUSY); see EXPIRED above: a peer that stays silent
//! despite the nudges is gone, and the message is released anyway, so no
//! buffer is held forever. The completion therefore comes when the message
//! is released, not when its last packet leaves, and completions come in
//! the order messages are released.
//!
//! So a packet is chosen up to `JOBS` packets before it leaves (its payload
//! read is in flight meanwhile: the PCIe round trip hides behind the link);
//! a message that becomes more urgent within that window waits for it.
//!
//! Descriptors are fetched ahead of need, up to `DESC_BATCH` in one read
//! (never across the ring's end), from one endpoint at a time, round robin
//! over the endpoints; the next read goes out once the batch is all taken.
//! Read responses are routed by tag (descriptor or payload).
//! Payload responses must come back in request order (the PCIe model's
//! default); a shell that reorders completions needs a reorder buffer in
//! front of this engine.
//!
//! Errors: a payload read refused by the IOMMU spoils its frame (`tuser`, the
//! MAC corrupts the FCS) and marks the message failed (`failed` holds the
//! failed message's birth, so a reused slot starts clean); the control
//! machine then drops the message at its next pick and completes it with
//! DMA_ERROR (or at its release, if the failed packet was its last).
//!
//! Endpoints that close: a descriptor is stored with its endpoint and that
//! endpoint's generation (`EndpointBlock`; byte 62). A message whose
//! endpoint has closed since (or closed and opened again) is not `c_live`
//! (checked as its descriptor is read from RAM, so the check is a register
//! on the decision and table-key paths): its next event or linger expiry
//! releases it, a pick sends nothing of it (its buffer may be freed), it
//! leaves the table by slot (its key has the old port), and no completion
//! is written. A PORT write also sets the endpoint's consumer index back to 0.
//!
//! Per peer (`peers`, see `peer_state`): the cutoffs its CUTOFFS announced,
//! looked up when a descriptor is taken, give the message's unscheduled
//! priority and the cutoff version its DATA carries (HomaModule's priority 6
//! and version 0 until a CUTOFFS arrives); an ack owed to the peer (a
//! response the card received as a client) rides in the next DATA packet to
//! it, looked up when the packet is chosen.
//!
//! Acks: the card acks a NEED_ACK only for an RPC that neither its RX
//! engine (a response coming in) nor this engine (a request with no packet
//! of its response yet) holds. (An earlier version acked from the RX
//! engine's view alone: with a response lost whole, the server's NEED_ACK
//! beat our RESEND, was acked, and the server let the RPC go.)
//!
//! Tried and left out: a client's nudge also sending its request's first
//! packet again (recovering a request lost whole a round trip before
//! RPC_UNKNOWN does). Its changed timing in `card_rpc`'s lossy test lost the
//! 1 MB response's last GRANT, which nothing recovered then (the receiver
//! now asks up to what it granted: `resend_timer`); RPC_UNKNOWN does the
//! copy's work with one mechanism less.
//!
//! Not yet here: RPC_UNKNOWN for an inbound message the peer no longer has
//! (the receiver lets it expire instead).

use rust_hdl::prelude::*;

use crate::csr::endpoint_block::GENERATION_BITS;
use crate::host_abi::{completion, tx_desc};
use crate::regmap::endpoint;
use crate::rx::resend_timer::ResendTimer;
use crate::rx::rpc_table::{RpcOp, RpcTable, KEY_BITS, SLOT_BITS};
use crate::sched::send_scheduler::SendScheduler;
use crate::tx::control_sender::nudge;
use crate::tx::peer_state::PeerState;
use homa_wire::layout::{data, Field, HOMA_OFFSET};
use homa_wire::PacketType;

const ENDPOINTS: usize = endpoint::COUNT;

/// Payload bytes per DATA packet at MTU 1500: 1500 - 20 (IPv4) - 56 (DATA header).
pub const MAX_SEGMENT_BYTES: u32 = 1500 - 20 - data::HEADER_LEN as u32;
/// Largest message this engine sends (HomaModule's limit).
pub const MAX_MESSAGE_BYTES: u32 = 1_000_000;
/// The unscheduled cutoffs this card announces as a receiver (HomaModule's
/// defaults): a message of at most `UNSCHED_CUTOFFS[i]` bytes comes at
/// priority `i`, the highest such `i` (0: not used).
pub const UNSCHED_CUTOFFS: [u32; 8] = [0, 0, 0, 0, 1_000_000, 15_000, 2800, 200];
/// Their version (HomaModule's default is 1): a peer whose DATA carries
/// another gets our CUTOFFS.
pub const CUTOFF_VERSION: u16 = 1;
/// HomaModule's throttle_min_bytes: shorter messages bypass SRPT.
pub const THROTTLE_MIN_BYTES: u32 = 1000;
/// HomaModule's pacer_fifo_fraction (per mille).
pub const PACER_FIFO_FRACTION: u32 = 50;

/// DMA read tags: the descriptor's, and the first of the payload reads'
/// (job k reads with `TAG_PAYLOAD + k`).
pub const TAG_DESCRIPTOR: u8 = 0;
pub const TAG_PAYLOAD: u8 = 4;
/// Descriptors fetched in one DMA read at most (256 bytes): one PCIe round
/// trip (800 ns in the model) per batch bounds the descriptor rate at about
/// 5 M/s per endpoint being served, against 1.25 M/s one at a time.
pub const DESC_BATCH: usize = 4;
/// Packets chosen and queued for the link at most: enough payload reads in
/// flight to cover a payload read's latency at line rate (an MTU frame every
/// 30.76 cycles), and no more, since a message that becomes more urgent
/// waits behind them. The PCIe round trip alone (800 ns, 200 cycles, in the
/// model) needs 6.5; over the TLP link a read's completions also interleave
/// with the other reads' and the read is handed on only whole, about 260
/// cycles in all. Measured over the TLP link (one build each; goodput of
/// one 1 MB message; a 1-byte RPC behind 8 x 1 MB against alone; the demo's
/// 1-byte p50 with 40 KB RPCs beside it):
///   8: 83.42 Gb/s, 1.12x, 2038 cycles     10: 91.56 Gb/s, 1.18x, 2249
///   12: 91.96 Gb/s, 1.21x, 2367           16: 91.53 Gb/s, 1.29x
/// 10 is the knee. Choosing a packet later, from payload already prefetched
/// per message, would remove the trade.
pub const JOBS: usize = 10;
/// Bits of a job index (`JOBS` at most 16) and of a count of jobs.
const JOB_BITS: usize = 4;
const JOB_COUNT_BITS: usize = JOB_BITS + 1;
/// Sender events waiting for the control machine at most (more are dropped
/// and counted: the receiver grants again with its next packet, and asks
/// again for what it still misses; an ack lost here leaves the message to
/// the linger timer).
pub const EVENT_QUEUE: usize = 8;

/// What the RX engine tells the sender side about an outbound message
/// (`s_event_kind`).
pub mod sender_event {
    /// A GRANT: offset and priority.
    pub const GRANT: u8 = 0;
    /// A RESEND: offset, length (all ones: everything sent) and priority.
    pub const RESEND: u8 = 1;
    /// The client has our response: an ACK, or an ack in DATA (for a
    /// response only: HomaModule's servers alone take acks).
    pub const ACKED: u8 = 2;
    /// BUSY: the peer is alive (a server still working on the request).
    pub const BUSY: u8 = 3;
    /// A server's NEED_ACK for an RPC the RX engine has no response of.
    pub const NEED_ACK: u8 = 4;
    /// RPC_UNKNOWN: the peer has no such RPC.
    pub const RPC_UNKNOWN: u8 = 5;
    /// The first packet of the response to our request came (for a request
    /// only): the server has the request.
    pub const RESPONSE_BEGUN: u8 = 7;
}
/// Internal: the linger timer named the message's slot.
const EXPIRED: u64 = 6;

/// Progress record: sent [19:0], granted [39:20], priority [42:40], birth
/// [74:43], unscheduled priority [77:75], cutoff version [93:78], sent_max
/// (bytes ever sent) [113:94], resend_end [133:114] (while `sent` <
/// `sent_max`, packets are resent up to here).
const PROGRESS_BITS: usize = 134;
/// Where the endpoint rides in the stored descriptor (bits 497:496: byte 62,
/// which no descriptor field uses), and the endpoint's generation when the
/// descriptor was fetched (bits 501:498).
const DESC_ENDPOINT_LSB: usize = 496;
const DESC_GENERATION_LSB: usize = 498;

mod ctl {
    pub const IDLE: u64 = 0;
    pub const G_LOOKUP: u64 = 1;
    pub const G_WAIT: u64 = 2;
    pub const G_READ: u64 = 3;
    pub const G_UPDATE: u64 = 4;
    pub const G_SCHED: u64 = 5;
    pub const D_CHECK: u64 = 6;
    pub const D_INSERT: u64 = 7;
    pub const D_WAIT: u64 = 8;
    pub const D_INIT: u64 = 9;
    pub const D_CPL: u64 = 10;
    pub const P_PICK: u64 = 11;
    pub const P_WAIT: u64 = 12;
    pub const P_READ: u64 = 13;
    pub const P_DATA: u64 = 14;
    pub const P_ISSUE: u64 = 15;
    pub const P_SCHED: u64 = 16;
    pub const P_REMOVE: u64 = 17;
    pub const P_REMOVE_WAIT: u64 = 18;
    pub const P_CPL: u64 = 19;
    pub const E_DECIDE: u64 = 20;
    pub const NUDGE: u64 = 21;
    pub const P_SERVED: u64 = 22;
    pub const ANSWER: u64 = 23;
}

mod stream {
    pub const IDLE: u64 = 0;
    pub const STREAM: u64 = 1;
}

fn lsb(field: Field) -> Constant<Bits<16>> {
    Constant::new(((8 * field.offset) as u64).to_bits())
}

fn c5(v: u64) -> Constant<Bits<5>> {
    Constant::new(v.to_bits())
}

fn c2(v: u64) -> Constant<Bits<2>> {
    Constant::new(v.to_bits())
}

fn c3(v: u64) -> Constant<Bits<3>> {
    Constant::new(v.to_bits())
}

#[derive(LogicBlock)]
pub struct TxEngine {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: no message, consumer indices to 0.
    pub reset: Signal<In, bool>,

    /// Per endpoint: its port (0: closed) and TX ring producer index.
    pub ep_port: [Signal<In, Bits<16>>; ENDPOINTS],
    pub ep_tx_producer: [Signal<In, Bits<32>>; ENDPOINTS],
    /// Per endpoint: its port was written, the cycle after (its ring
    /// starts over at index 0), and how many times (`EndpointBlock`).
    pub ep_restart: [Signal<In, bool>; ENDPOINTS],
    pub ep_generation: [Signal<In, Bits<GENERATION_BITS>>; ENDPOINTS],
    /// Per endpoint: descriptors taken (free-running).
    pub ep_tx_consumer: [Signal<Out, Bits<32>>; ENDPOINTS],
    /// The endpoint whose ring is being read, and its TX ring (muxed by the core).
    pub sel_endpoint: Signal<Out, Bits<2>>,
    pub sel_tx_ring: Signal<In, Bits<64>>,
    pub sel_tx_ring_log2: Signal<In, Bits<4>>,
    /// The card's own addresses.
    pub local_mac: Signal<In, Bits<48>>,
    pub local_ip: Signal<In, Bits<32>>,
    /// HomaModule's unsched_bytes (the grant block's register).
    pub cfg_unsched_bytes: Signal<In, Bits<20>>,

    /// Sender events (from the RX engine; a strobe, no back-pressure): the
    /// kind (`sender_event`), the outbound message's key (peer IP, local
    /// port, local RPC id; the peer's port is 0, as an ack does not name
    /// it), and the GRANT's or RESEND's fields; the packet's sender (MAC,
    /// port: for an answer); with a RESEND, whether the RX engine holds the
    /// RPC (`known`: a request in service is answered BUSY).
    pub s_event_valid: Signal<In, bool>,
    pub s_event_kind: Signal<In, Bits<3>>,
    pub s_event_key: Signal<In, Bits<KEY_BITS>>,
    pub s_event_offset: Signal<In, Bits<32>>,
    pub s_event_length: Signal<In, Bits<32>>,
    pub s_event_priority: Signal<In, Bits<3>>,
    pub s_event_mac: Signal<In, Bits<48>>,
    pub s_event_port: Signal<In, Bits<16>>,
    pub s_event_known: Signal<In, bool>,
    /// One cycle per timer tick, and the ticks of silence after which a
    /// message all sent is released (HomaModule's timeout_ticks).
    pub tick: Signal<In, bool>,
    pub cfg_timeout_ticks: Signal<In, Bits<8>>,
    /// Ticks of a peer's silence before the first nudge, and between
    /// nudges (HomaModule's resend_ticks and resend_interval).
    pub cfg_resend_ticks: Signal<In, Bits<8>>,
    pub cfg_resend_interval: Signal<In, Bits<8>>,

    /// DMA read requests (descriptors and payload).
    pub m_dma_rd_req_valid: Signal<Out, bool>,
    pub m_dma_rd_req_ready: Signal<In, bool>,
    pub m_dma_rd_req_addr: Signal<Out, Bits<64>>,
    pub m_dma_rd_req_len: Signal<Out, Bits<16>>,
    pub m_dma_rd_req_tag: Signal<Out, Bits<8>>,
    /// CUTOFFS received (a strobe from the RX engine): the peer, its version
    /// and limits (`peer_state`).
    pub s_cutoffs_valid: Signal<In, bool>,
    pub s_cutoffs_ip: Signal<In, Bits<32>>,
    pub s_cutoffs_version: Signal<In, Bits<16>>,
    pub s_cutoffs_limits: Signal<In, Bits<256>>,
    /// An ack owed to a server (a strobe from the RX engine: a response came
    /// in): for the next DATA packet to it.
    pub s_owed_ack_valid: Signal<In, bool>,
    pub s_owed_ack_ip: Signal<In, Bits<32>>,
    pub s_owed_ack_client_id: Signal<In, Bits<64>>,
    pub s_owed_ack_server_port: Signal<In, Bits<16>>,
    /// DMA read responses: data packed from lane 0.
    pub s_dma_rd_rsp_valid: Signal<In, bool>,
    pub s_dma_rd_rsp_ready: Signal<Out, bool>,
    pub s_dma_rd_rsp_data: Signal<In, Bits<512>>,
    pub s_dma_rd_rsp_tag: Signal<In, Bits<8>>,
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
    /// DATA's `incoming`: the message's granted offset when the packet left.
    pub hdr_incoming: Signal<Out, Bits<32>>,
    pub hdr_cutoff_version: Signal<Out, Bits<16>>,
    /// DATA's ack (client id 0: none).
    pub hdr_ack_client_id: Signal<Out, Bits<64>>,
    pub hdr_ack_server_port: Signal<Out, Bits<16>>,
    pub hdr_payload_len: Signal<Out, Bits<16>>,
    /// Payload beats to the framer, packed from lane 0.
    pub m_pay_tdata: Signal<Out, Bits<512>>,
    pub m_pay_tkeep: Signal<Out, Bits<64>>,
    pub m_pay_tvalid: Signal<Out, bool>,
    pub m_pay_tready: Signal<In, bool>,
    pub m_pay_tlast: Signal<Out, bool>,
    /// The framer took a header record (one of those `hdr_valid` started).
    pub hdr_taken: Signal<In, bool>,
    /// The payload of the frame whose last beat the framer is sending had a
    /// DMA error: send it spoiled.
    pub frame_error: Signal<Out, bool>,

    /// Completions to the completion writer.
    pub m_cpl_valid: Signal<Out, bool>,
    pub m_cpl_ready: Signal<In, bool>,
    pub m_cpl_endpoint: Signal<Out, Bits<2>>,
    pub m_cpl_record: Signal<Out, Bits<512>>,

    /// Counters (wrap): GRANTs for no message in flight here; sender events
    /// dropped for a full queue; RESENDs for no message here; packets sent
    /// again; messages released by the linger timeout (no ack came);
    /// messages held now (being sent, or sent and not yet released).
    pub grants_unknown: Signal<Out, Bits<32>>,
    pub events_dropped: Signal<Out, Bits<32>>,
    pub resends_unknown: Signal<Out, Bits<32>>,
    pub packets_retransmitted: Signal<Out, Bits<32>>,
    pub lingers_expired: Signal<Out, Bits<32>>,
    pub messages_in_flight: Signal<Out, Bits<16>>,
    /// The packet on offer to the header builder is sent again.
    pub hdr_retransmit: Signal<Out, bool>,
    /// Nudges to the control sender (`control_sender::nudge` names the
    /// kinds) about a message all sent whose peer is silent: NEED_ACK (a
    /// response), or RESEND [0, length) of the response (a request); or an
    /// answer to a peer's packet about a message not here (ACK, BUSY,
    /// RPC_UNKNOWN); the peer, our port, our RPC id.
    pub m_nudge_valid: Signal<Out, bool>,
    pub m_nudge_ready: Signal<In, bool>,
    pub m_nudge_kind: Signal<Out, Bits<3>>,
    pub m_nudge_mac: Signal<Out, Bits<48>>,
    pub m_nudge_ip: Signal<Out, Bits<32>>,
    pub m_nudge_peer_port: Signal<Out, Bits<16>>,
    pub m_nudge_local_port: Signal<Out, Bits<16>>,
    pub m_nudge_local_id: Signal<Out, Bits<64>>,
    pub m_nudge_length: Signal<Out, Bits<20>>,
    /// A response released (a strobe with back-pressure): the RX engine
    /// may forget the request it answers, kept until now so that copies of
    /// it are recognised (its key there: peer IP, peer port, our port, id).
    pub m_served_valid: Signal<Out, bool>,
    pub m_served_ready: Signal<In, bool>,
    pub m_served_key: Signal<Out, Bits<KEY_BITS>>,
    /// Acks carried in DATA packets; doorbells more than a ring ahead of
    /// what the card took, skipped (both wrap).
    pub acks_piggybacked: Signal<Out, Bits<32>>,
    pub doorbells_beyond_ring: Signal<Out, Bits<32>>,

    out_table: RpcTable,
    peers: PeerState,
    /// Per slot: a message all sent, and its ticks of silence.
    linger: ResendTimer,
    sched: SendScheduler,
    descs: RAM<Bits<512>, SLOT_BITS>,
    progress: RAM<Bits<PROGRESS_BITS>, SLOT_BITS>,
    /// Per slot: the birth of the message whose payload read failed there.
    failed: RAM<Bits<32>, SLOT_BITS>,

    // ---- descriptor fetch ----
    /// 0: none, 1: size the batch, 2: request, 3: taking the beats, 4: held
    /// in `fetched`, taken by the control machine one by one.
    fetch: DFF<Bits<3>>,
    fetch_endpoint: DFF<Bits<2>>,
    /// `fetch_endpoint`'s generation when the batch was asked for.
    fetch_generation: DFF<Bits<GENERATION_BITS>>,
    next_endpoint: DFF<Bits<2>>,
    fetched: [DFF<Bits<512>>; DESC_BATCH],
    /// Descriptors in the batch (1..=DESC_BATCH), beats in, taken.
    fetch_count: DFF<Bits<3>>,
    fetch_got: DFF<Bits<3>>,
    fetch_taken: DFF<Bits<3>>,
    /// The batch's read failed (every descriptor of it completes with
    /// DMA_ERROR).
    fetch_error: DFF<bool>,
    consumer: [DFF<Bits<32>>; ENDPOINTS],

    // ---- the sender-event queue ----
    eq_kind: [DFF<Bits<3>>; EVENT_QUEUE],
    eq_key: [DFF<Bits<KEY_BITS>>; EVENT_QUEUE],
    eq_offset: [DFF<Bits<32>>; EVENT_QUEUE],
    eq_length: [DFF<Bits<32>>; EVENT_QUEUE],
    eq_priority: [DFF<Bits<3>>; EVENT_QUEUE],
    eq_mac: [DFF<Bits<48>>; EVENT_QUEUE],
    eq_port: [DFF<Bits<16>>; EVENT_QUEUE],
    eq_known: [DFF<bool>; EVENT_QUEUE],
    eq_head: DFF<Bits<3>>,
    eq_tail: DFF<Bits<3>>,
    eq_count: DFF<Bits<4>>,
    grants_unknown_count: DFF<Bits<32>>,
    events_dropped_count: DFF<Bits<32>>,
    resends_unknown_count: DFF<Bits<32>>,
    retransmitted_count: DFF<Bits<32>>,
    /// The packet just issued was sent before: it does not end a silence
    /// (the RESEND that asked for it did).
    c_pkt_retx: DFF<bool>,
    expired_count: DFF<Bits<32>>,

    // ---- the control machine ----
    ctl: DFF<Bits<5>>,
    c_slot: DFF<Bits<SLOT_BITS>>,
    c_desc: DFF<Bits<512>>,
    c_sent: DFF<Bits<20>>,
    c_granted: DFF<Bits<20>>,
    c_prio: DFF<Bits<3>>,
    c_birth: DFF<Bits<32>>,
    /// The packet just queued: its payload bytes.
    c_pkt_len: DFF<Bits<11>>,
    c_status: DFF<Bits<8>>,
    /// The event being served: kind (`sender_event`, or EXPIRED), offset
    /// (clamped to the largest message), length, priority.
    c_kind: DFF<Bits<3>>,
    /// EXPIRED: the message's ticks of silence.
    c_silence: DFF<Bits<8>>,
    /// The message's peer MAC (from `c_desc`), for a nudge.
    c_mac: Signal<Local, Bits<48>>,
    c_all_sent: Signal<Local, bool>,
    c_grant_offset: DFF<Bits<20>>,
    c_ev_length: DFF<Bits<32>>,
    c_grant_prio: DFF<Bits<3>>,
    /// Progress fields of retransmission (see PROGRESS_BITS).
    c_sent_max: DFF<Bits<20>>,
    c_rend: DFF<Bits<20>>,
    /// The packet just queued was the message's last, sent the first time.
    c_first_done: DFF<bool>,
    /// The message is being released (ACKED or EXPIRED).
    c_release: DFF<bool>,
    birth_ctr: DFF<Bits<32>>,
    in_flight: DFF<Bits<16>>,
    c_failed: DFF<bool>,
    /// GRANT: the message had granted bytes not yet sent before it.
    c_was_eligible: DFF<bool>,
    /// The message's unscheduled priority and the cutoff version its DATA
    /// carries (from the peer's cutoffs when the descriptor was taken).
    c_ulevel: DFF<Bits<3>>,
    c_version: DFF<Bits<16>>,

    // ---- the job queue (packets chosen, payload read issued) ----
    j_desc: [DFF<Bits<512>>; JOBS],
    j_slot: [DFF<Bits<SLOT_BITS>>; JOBS],
    j_offset: [DFF<Bits<20>>; JOBS],
    j_len: [DFF<Bits<11>>; JOBS],
    j_level: [DFF<Bits<3>>; JOBS],
    j_incoming: [DFF<Bits<20>>; JOBS],
    j_retransmit: [DFF<bool>; JOBS],
    j_birth: [DFF<Bits<32>>; JOBS],
    j_version: [DFF<Bits<16>>; JOBS],
    /// The ack the packet carries (client id 0: none).
    j_ack_id: [DFF<Bits<64>>; JOBS],
    j_ack_port: [DFF<Bits<16>>; JOBS],
    j_head: DFF<Bits<JOB_BITS>>,
    j_tail: DFF<Bits<JOB_BITS>>,
    j_count: DFF<Bits<JOB_COUNT_BITS>>,
    /// The next job to have its header built, and how many jobs from the
    /// head on have had theirs (`j_count` at most).
    j_hdr: DFF<Bits<JOB_BITS>>,
    j_hdr_count: DFF<Bits<JOB_COUNT_BITS>>,
    /// Headers started and not yet taken by the framer: at most 2, what the
    /// core's header slice holds (the builder itself does not wait).
    h_ahead: DFF<Bits<2>>,

    // ---- the streamer ----
    /// Payload read responses on their way to the framer, two beats (data,
    /// and the error flag in bit 512), a ring as in `RegisterSlice`: the
    /// link keeps streaming while the framer sends a frame's header beat
    /// (see "Line rate" in the design notes). Kept here rather than in a
    /// `RegisterSlice` child: with the slice's `m_ready` driven from this
    /// block out of the framer's ready, Verilator 5.006 let this block
    /// count a beat taken that the slice had not popped (its evaluation of
    /// the slice ran on the old ready), and every later frame carried its
    /// neighbour's bytes.
    pay_valid: [DFF<bool>; 2],
    pay_data: [DFF<Bits<513>>; 2],
    pay_wr: DFF<bool>,
    pay_rd: DFF<bool>,
    /// The oldest beat held, and whether there is one.
    pay_head: Signal<Local, Bits<513>>,
    pay_head_valid: Signal<Local, bool>,
    pay_push: Signal<Local, bool>,
    /// The port's beat as it is stored.
    pay_in: Signal<Local, Bits<513>>,
    pay_pop: Signal<Local, bool>,
    payload_error_bit: Constant<Bits<513>>,
    st: DFF<Bits<2>>,
    remaining: DFF<Bits<16>>,
    seg_error: DFF<bool>,
    /// `seg_error` of the frame whose payload ended last: `frame_error`
    /// until the next frame's payload ends (after that frame's last beat).
    tail_error: DFF<bool>,
    /// The streamed job's payload read had an error, this beat included.
    beat_error: Signal<Local, bool>,
    /// The completion on offer: an output register, so what the completion
    /// writer sees never depends on its own ready in the same cycle.
    cpl_valid: DFF<bool>,
    cpl_record: DFF<Bits<512>>,
    cpl_endpoint: DFF<Bits<2>>,
    cpl_load: Signal<Local, bool>,

    // ---- locals ----
    pend: [Signal<Local, bool>; ENDPOINTS],
    found: Signal<Local, bool>,
    pick: Signal<Local, Bits<2>>,
    ring_slot: Signal<Local, Bits<32>>,
    /// Sizing a batch: descriptors posted and not taken, slots to the
    /// ring's end, the batch.
    f_producer: Signal<Local, Bits<32>>,
    f_avail: Signal<Local, Bits<32>>,
    f_to_end: Signal<Local, Bits<32>>,
    f_count: Signal<Local, Bits<3>>,
    f_beyond: Signal<Local, bool>,
    doorbells_beyond_count: DFF<Bits<32>>,
    /// The descriptor at the batch's head.
    f_head: Signal<Local, Bits<512>>,
    /// The job whose payload streams (the queue's head): its slot, birth
    /// and payload length.
    sj_slot: Signal<Local, Bits<SLOT_BITS>>,
    sj_birth: Signal<Local, Bits<32>>,
    sj_len: Signal<Local, Bits<11>>,
    /// The job whose header is built next (`j_hdr`).
    h_desc: Signal<Local, Bits<512>>,
    h_offset: Signal<Local, Bits<20>>,
    h_len: Signal<Local, Bits<11>>,
    h_level: Signal<Local, Bits<3>>,
    h_incoming: Signal<Local, Bits<20>>,
    h_retransmit: Signal<Local, bool>,
    h_version: Signal<Local, Bits<16>>,
    h_ack_id: Signal<Local, Bits<64>>,
    h_ack_port: Signal<Local, Bits<16>>,
    /// The event at the head of its queue.
    e_kind: Signal<Local, Bits<3>>,
    e_key: Signal<Local, Bits<KEY_BITS>>,
    e_offset: Signal<Local, Bits<32>>,
    e_length: Signal<Local, Bits<32>>,
    e_priority: Signal<Local, Bits<3>>,
    e_mac: Signal<Local, Bits<48>>,
    e_port: Signal<Local, Bits<16>>,
    e_known: Signal<Local, bool>,
    push_job: Signal<Local, bool>,
    pop_job: Signal<Local, bool>,
    push_event: Signal<Local, bool>,
    pop_event: Signal<Local, bool>,
    /// Fields of `c_desc`.
    c_length: Signal<Local, Bits<32>>,
    c_len20: Signal<Local, Bits<20>>,
    c_opcode: Signal<Local, Bits<8>>,
    c_endpoint: Signal<Local, Bits<2>>,
    c_key: Signal<Local, Bits<KEY_BITS>>,
    c_port: Signal<Local, Bits<16>>,
    /// The message in `c_desc`: its endpoint is still the one that posted
    /// it (open, and not closed and opened again since), as of when it was
    /// read from `descs` (registered: the check is off the decision paths).
    c_live: DFF<bool>,
    /// The packet just issued (P_ISSUE) carries the ack owed to its peer:
    /// it is taken from `peers` in the next cycle (P_SCHED), from this
    /// register, so the take does not depend combinationally on the DMA
    /// port's ready (that path ran to the peer RAM's write enable, and
    /// Verilator 5.006 once left it unsettled: the ack was sent and not
    /// taken, and went out in every later DATA to that peer).
    ack_take: DFF<bool>,
    /// What `c_live` is loaded with: the same check, of the descriptor
    /// `descs` shows.
    read_open: Signal<Local, bool>,
    /// The packet being chosen: [c_sent, pkt_end).
    pkt_end: Signal<Local, Bits<20>>,
    pkt_len: Signal<Local, Bits<20>>,
    /// The packet being chosen is sent again (`c_sent` < `c_sent_max`), and
    /// the most it may reach: `c_rend` then, else the granted offset.
    retx: Signal<Local, bool>,
    pkt_cap: Signal<Local, Bits<20>>,
    /// A RESEND's range, cut at what was sent: bytes sent from its offset.
    resend_room: Signal<Local, Bits<20>>,
    grant_room: Signal<Local, Bits<20>>,
    rs_end: Signal<Local, Bits<20>>,
    rs_grants: Signal<Local, bool>,
    all_ones32: Constant<Bits<32>>,
    progress_out: Signal<Local, Bits<PROGRESS_BITS>>,
    keep_shift: Signal<Local, Bits<16>>,
    record: Signal<Local, Bits<512>>,
    cpl_desc: Signal<Local, Bits<512>>,
    cpl_status: Signal<Local, Bits<8>>,
    rsp_is_desc: Signal<Local, bool>,

    at_opcode: Constant<Bits<16>>,
    at_peer_port: Constant<Bits<16>>,
    at_length: Constant<Bits<16>>,
    at_rpc_id: Constant<Bits<16>>,
    at_buffer: Constant<Bits<16>>,
    at_peer_ip: Constant<Bits<16>>,
    at_peer_mac: Constant<Bits<16>>,
    at_cookie: Constant<Bits<16>>,
    at_endpoint: Constant<Bits<16>>,
    at_generation: Constant<Bits<16>>,
    cpl_kind: Constant<Bits<16>>,
    cpl_status_at: Constant<Bits<16>>,
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
    op_insert: Constant<Bits<2>>,
    op_lookup: Constant<Bits<2>>,
    op_remove_slot: Constant<Bits<2>>,
    op_remove: Constant<Bits<2>>,
    max_message: Constant<Bits<32>>,
    max_segment: Constant<Bits<20>>,
    throttle_min: Constant<Bits<20>>,
    pacer_fifo_fraction: Constant<Bits<10>>,
    type_data: Constant<Bits<8>>,
    one: Constant<Bits<32>>,
    last_birth: Constant<Bits<32>>,
    all_lanes: Constant<Bits<64>>,
    tag_descriptor: Constant<Bits<8>>,
    tag_payload: Constant<Bits<8>>,
    desc_batch: Constant<Bits<32>>,
    batch_index: [Constant<Bits<3>>; DESC_BATCH],
    job_index: [Constant<Bits<JOB_BITS>>; JOBS],
    /// The last job index, after which the ring wraps.
    job_last: Constant<Bits<JOB_BITS>>,
    eq_index: [Constant<Bits<3>>; EVENT_QUEUE],
    jobs_max: Constant<Bits<JOB_COUNT_BITS>>,
    eq_max: Constant<Bits<4>>,
    ev_grant: Constant<Bits<3>>,
    ev_resend: Constant<Bits<3>>,
    ev_acked: Constant<Bits<3>>,
    ev_begun: Constant<Bits<3>>,
    /// The event releases the message it names: an ack of a response, the
    /// response begun to a request (not the other way round: a forged or
    /// stray ACK must not end a request whose response never came).
    c_done_with: Signal<Local, bool>,
    ev_busy: Constant<Bits<3>>,
    ev_expired: Constant<Bits<3>>,
    ev_need_ack: Constant<Bits<3>>,
    ev_unknown: Constant<Bits<3>>,
    nudge_resend: Constant<Bits<3>>,
    nudge_need_ack: Constant<Bits<3>>,
    nudge_ack: Constant<Bits<3>>,
    nudge_busy: Constant<Bits<3>>,
    nudge_unknown: Constant<Bits<3>>,
    status_timeout: Constant<Bits<8>>,
    ctl_nudge: Constant<Bits<5>>,
    ctl_p_served: Constant<Bits<5>>,
    ctl_answer: Constant<Bits<5>>,
    ctl_idle: Constant<Bits<5>>,
    ctl_g_lookup: Constant<Bits<5>>,
    ctl_g_wait: Constant<Bits<5>>,
    ctl_g_read: Constant<Bits<5>>,
    ctl_g_update: Constant<Bits<5>>,
    ctl_g_sched: Constant<Bits<5>>,
    ctl_d_check: Constant<Bits<5>>,
    ctl_d_insert: Constant<Bits<5>>,
    ctl_d_wait: Constant<Bits<5>>,
    ctl_d_init: Constant<Bits<5>>,
    ctl_d_cpl: Constant<Bits<5>>,
    ctl_p_pick: Constant<Bits<5>>,
    ctl_p_wait: Constant<Bits<5>>,
    ctl_p_read: Constant<Bits<5>>,
    ctl_p_data: Constant<Bits<5>>,
    ctl_p_issue: Constant<Bits<5>>,
    ctl_p_sched: Constant<Bits<5>>,
    ctl_p_remove: Constant<Bits<5>>,
    ctl_p_remove_wait: Constant<Bits<5>>,
    ctl_p_cpl: Constant<Bits<5>>,
    ctl_e_decide: Constant<Bits<5>>,
    st_idle: Constant<Bits<2>>,
    st_stream: Constant<Bits<2>>,
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
        assert!(tx_desc::FIELDS
            .iter()
            .all(|f| f.end() * 8 <= DESC_ENDPOINT_LSB));
        assert!(
            (2..=1 << JOB_BITS).contains(&JOBS),
            "job indices are {JOB_BITS} bits"
        );
        assert!(
            TAG_PAYLOAD as usize + JOBS <= 256,
            "a payload read's tag is TAG_PAYLOAD + its job"
        );
        assert_eq!(EVENT_QUEUE, 8, "event queue indices are three bits");
        let c8 = |v: u8| Constant::new((v as u64).to_bits());
        let c32 = |v: u64| Constant::new(v.to_bits());
        let c20 = |v: u64| Constant::new(v.to_bits());
        Self {
            clock: Default::default(),
            reset: Default::default(),
            ep_port: Default::default(),
            ep_tx_producer: Default::default(),
            ep_restart: Default::default(),
            ep_generation: Default::default(),
            ep_tx_consumer: Default::default(),
            sel_endpoint: Default::default(),
            sel_tx_ring: Default::default(),
            sel_tx_ring_log2: Default::default(),
            local_mac: Default::default(),
            local_ip: Default::default(),
            cfg_unsched_bytes: Default::default(),
            s_event_valid: Default::default(),
            s_event_kind: Default::default(),
            s_event_key: Default::default(),
            s_event_offset: Default::default(),
            s_event_length: Default::default(),
            s_event_priority: Default::default(),
            s_event_mac: Default::default(),
            s_event_port: Default::default(),
            s_event_known: Default::default(),
            tick: Default::default(),
            cfg_timeout_ticks: Default::default(),
            cfg_resend_ticks: Default::default(),
            cfg_resend_interval: Default::default(),
            events_dropped: Default::default(),
            resends_unknown: Default::default(),
            packets_retransmitted: Default::default(),
            lingers_expired: Default::default(),
            hdr_retransmit: Default::default(),
            linger: Default::default(),
            eq_kind: Default::default(),
            eq_length: Default::default(),
            events_dropped_count: Default::default(),
            resends_unknown_count: Default::default(),
            retransmitted_count: Default::default(),
            c_pkt_retx: Default::default(),
            expired_count: Default::default(),
            c_kind: Default::default(),
            c_ev_length: Default::default(),
            c_sent_max: Default::default(),
            c_rend: Default::default(),
            c_first_done: Default::default(),
            c_release: Default::default(),
            j_retransmit: Default::default(),
            h_retransmit: Default::default(),
            e_kind: Default::default(),
            e_length: Default::default(),
            retx: Default::default(),
            pkt_cap: Default::default(),
            resend_room: Default::default(),
            grant_room: Default::default(),
            rs_end: Default::default(),
            rs_grants: Default::default(),
            all_ones32: Constant::new(0xffff_ffffu64.to_bits()),
            ev_grant: c3(sender_event::GRANT as u64),
            ev_resend: c3(sender_event::RESEND as u64),
            ev_acked: c3(sender_event::ACKED as u64),
            ev_begun: c3(sender_event::RESPONSE_BEGUN as u64),
            c_done_with: Default::default(),
            ev_busy: c3(sender_event::BUSY as u64),
            ev_expired: c3(EXPIRED),
            ev_need_ack: c3(sender_event::NEED_ACK as u64),
            ev_unknown: c3(sender_event::RPC_UNKNOWN as u64),
            nudge_resend: c3(nudge::RESEND as u64),
            nudge_need_ack: c3(nudge::NEED_ACK as u64),
            nudge_ack: c3(nudge::ACK as u64),
            nudge_busy: c3(nudge::BUSY as u64),
            nudge_unknown: c3(nudge::RPC_UNKNOWN as u64),
            status_timeout: c8(completion::status::TIMEOUT),
            ctl_nudge: c5(ctl::NUDGE),
            ctl_p_served: c5(ctl::P_SERVED),
            ctl_answer: c5(ctl::ANSWER),
            m_served_valid: Default::default(),
            m_served_ready: Default::default(),
            m_served_key: Default::default(),
            c_silence: Default::default(),
            c_mac: Default::default(),
            c_all_sent: Default::default(),
            m_nudge_valid: Default::default(),
            m_nudge_ready: Default::default(),
            m_nudge_kind: Default::default(),
            m_nudge_mac: Default::default(),
            m_nudge_ip: Default::default(),
            m_nudge_peer_port: Default::default(),
            m_nudge_local_port: Default::default(),
            m_nudge_local_id: Default::default(),
            m_nudge_length: Default::default(),
            ctl_e_decide: c5(ctl::E_DECIDE),
            m_dma_rd_req_valid: Default::default(),
            m_dma_rd_req_ready: Default::default(),
            m_dma_rd_req_addr: Default::default(),
            m_dma_rd_req_len: Default::default(),
            m_dma_rd_req_tag: Default::default(),
            s_dma_rd_rsp_valid: Default::default(),
            s_dma_rd_rsp_ready: Default::default(),
            s_dma_rd_rsp_data: Default::default(),
            s_dma_rd_rsp_tag: Default::default(),
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
            hdr_incoming: Default::default(),
            hdr_cutoff_version: Default::default(),
            hdr_ack_client_id: Default::default(),
            hdr_ack_server_port: Default::default(),
            s_cutoffs_valid: Default::default(),
            s_cutoffs_ip: Default::default(),
            s_cutoffs_version: Default::default(),
            s_cutoffs_limits: Default::default(),
            s_owed_ack_valid: Default::default(),
            s_owed_ack_ip: Default::default(),
            s_owed_ack_client_id: Default::default(),
            s_owed_ack_server_port: Default::default(),
            acks_piggybacked: Default::default(),
            peers: Default::default(),
            c_ulevel: Default::default(),
            c_version: Default::default(),
            j_version: Default::default(),
            j_ack_id: Default::default(),
            j_ack_port: Default::default(),
            h_version: Default::default(),
            h_ack_id: Default::default(),
            h_ack_port: Default::default(),
            hdr_payload_len: Default::default(),
            m_pay_tdata: Default::default(),
            m_pay_tkeep: Default::default(),
            m_pay_tvalid: Default::default(),
            m_pay_tready: Default::default(),
            m_pay_tlast: Default::default(),
            hdr_taken: Default::default(),
            frame_error: Default::default(),
            m_cpl_valid: Default::default(),
            m_cpl_ready: Default::default(),
            m_cpl_endpoint: Default::default(),
            m_cpl_record: Default::default(),
            grants_unknown: Default::default(),
            messages_in_flight: Default::default(),
            out_table: Default::default(),
            sched: Default::default(),
            pay_valid: Default::default(),
            pay_data: Default::default(),
            pay_wr: Default::default(),
            pay_rd: Default::default(),
            pay_head: Default::default(),
            pay_head_valid: Default::default(),
            pay_push: Default::default(),
            pay_in: Default::default(),
            pay_pop: Default::default(),
            payload_error_bit: Constant::new(Bits::<513>::from(1u64) << 512),
            descs: Default::default(),
            progress: Default::default(),
            failed: Default::default(),
            fetch: Default::default(),
            fetch_endpoint: Default::default(),
            fetch_generation: Default::default(),
            next_endpoint: Default::default(),
            fetched: Default::default(),
            fetch_count: Default::default(),
            fetch_got: Default::default(),
            fetch_taken: Default::default(),
            f_producer: Default::default(),
            f_avail: Default::default(),
            f_to_end: Default::default(),
            f_count: Default::default(),
            f_beyond: Default::default(),
            doorbells_beyond_count: Default::default(),
            doorbells_beyond_ring: Default::default(),
            f_head: Default::default(),
            desc_batch: c32(DESC_BATCH as u64),
            batch_index: std::array::from_fn(|k| Constant::new((k as u64).to_bits())),
            fetch_error: Default::default(),
            consumer: Default::default(),
            eq_key: Default::default(),
            eq_offset: Default::default(),
            eq_priority: Default::default(),
            eq_mac: Default::default(),
            eq_port: Default::default(),
            eq_known: Default::default(),
            eq_head: Default::default(),
            eq_tail: Default::default(),
            eq_count: Default::default(),
            grants_unknown_count: Default::default(),
            ctl: Default::default(),
            c_slot: Default::default(),
            c_desc: Default::default(),
            c_sent: Default::default(),
            c_granted: Default::default(),
            c_prio: Default::default(),
            c_birth: Default::default(),
            c_pkt_len: Default::default(),
            c_status: Default::default(),
            c_grant_offset: Default::default(),
            c_grant_prio: Default::default(),
            birth_ctr: Default::default(),
            in_flight: Default::default(),
            c_failed: Default::default(),
            c_was_eligible: Default::default(),
            j_desc: Default::default(),
            j_slot: Default::default(),
            j_offset: Default::default(),
            j_len: Default::default(),
            j_level: Default::default(),
            j_incoming: Default::default(),
            j_birth: Default::default(),
            j_head: Default::default(),
            j_tail: Default::default(),
            j_count: Default::default(),
            j_hdr: Default::default(),
            j_hdr_count: Default::default(),
            h_ahead: Default::default(),
            st: Default::default(),
            remaining: Default::default(),
            seg_error: Default::default(),
            tail_error: Default::default(),
            beat_error: Default::default(),
            cpl_valid: Default::default(),
            cpl_record: Default::default(),
            cpl_endpoint: Default::default(),
            cpl_load: Default::default(),
            pend: Default::default(),
            found: Default::default(),
            pick: Default::default(),
            ring_slot: Default::default(),
            sj_slot: Default::default(),
            sj_birth: Default::default(),
            sj_len: Default::default(),
            h_desc: Default::default(),
            h_offset: Default::default(),
            h_len: Default::default(),
            h_level: Default::default(),
            h_incoming: Default::default(),
            e_key: Default::default(),
            e_offset: Default::default(),
            e_priority: Default::default(),
            e_mac: Default::default(),
            e_port: Default::default(),
            e_known: Default::default(),
            push_job: Default::default(),
            pop_job: Default::default(),
            push_event: Default::default(),
            pop_event: Default::default(),
            c_length: Default::default(),
            c_len20: Default::default(),
            c_opcode: Default::default(),
            c_endpoint: Default::default(),
            c_key: Default::default(),
            c_port: Default::default(),
            c_live: Default::default(),
            ack_take: Default::default(),
            read_open: Default::default(),
            pkt_end: Default::default(),
            pkt_len: Default::default(),
            progress_out: Default::default(),
            keep_shift: Default::default(),
            record: Default::default(),
            cpl_desc: Default::default(),
            cpl_status: Default::default(),
            rsp_is_desc: Default::default(),
            at_opcode: lsb(tx_desc::OPCODE),
            at_peer_port: lsb(tx_desc::PEER_PORT),
            at_length: lsb(tx_desc::LENGTH),
            at_rpc_id: lsb(tx_desc::RPC_ID),
            at_buffer: lsb(tx_desc::BUFFER),
            at_peer_ip: lsb(tx_desc::PEER_IP),
            at_peer_mac: lsb(tx_desc::PEER_MAC),
            at_cookie: lsb(tx_desc::COOKIE),
            at_endpoint: Constant::new((DESC_ENDPOINT_LSB as u64).to_bits()),
            at_generation: Constant::new((DESC_GENERATION_LSB as u64).to_bits()),
            cpl_kind: lsb(completion::KIND),
            cpl_status_at: lsb(completion::STATUS),
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
            op_insert: c2(RpcOp::Insert as u64),
            op_lookup: c2(RpcOp::Lookup as u64),
            op_remove_slot: c2(RpcOp::RemoveSlot as u64),
            op_remove: c2(RpcOp::Remove as u64),
            max_message: c32(MAX_MESSAGE_BYTES as u64),
            max_segment: c20(MAX_SEGMENT_BYTES as u64),
            throttle_min: c20(THROTTLE_MIN_BYTES as u64),
            pacer_fifo_fraction: Constant::new((PACER_FIFO_FRACTION as u64).to_bits()),
            type_data: c8(PacketType::Data as u8),
            one: c32(1),
            last_birth: c32(u32::MAX as u64),
            all_lanes: Constant::new(u64::MAX.to_bits()),
            tag_descriptor: c8(TAG_DESCRIPTOR),
            tag_payload: c8(TAG_PAYLOAD),
            job_index: std::array::from_fn(|k| Constant::new((k as u64).to_bits())),
            eq_index: std::array::from_fn(|k| Constant::new((k as u64).to_bits())),
            job_last: Constant::new(((JOBS - 1) as u64).to_bits()),
            jobs_max: Constant::new((JOBS as u64).to_bits()),
            eq_max: Constant::new((EVENT_QUEUE as u64).to_bits()),
            ctl_idle: c5(ctl::IDLE),
            ctl_g_lookup: c5(ctl::G_LOOKUP),
            ctl_g_wait: c5(ctl::G_WAIT),
            ctl_g_read: c5(ctl::G_READ),
            ctl_g_update: c5(ctl::G_UPDATE),
            ctl_g_sched: c5(ctl::G_SCHED),
            ctl_d_check: c5(ctl::D_CHECK),
            ctl_d_insert: c5(ctl::D_INSERT),
            ctl_d_wait: c5(ctl::D_WAIT),
            ctl_d_init: c5(ctl::D_INIT),
            ctl_d_cpl: c5(ctl::D_CPL),
            ctl_p_pick: c5(ctl::P_PICK),
            ctl_p_wait: c5(ctl::P_WAIT),
            ctl_p_read: c5(ctl::P_READ),
            ctl_p_data: c5(ctl::P_DATA),
            ctl_p_issue: c5(ctl::P_ISSUE),
            ctl_p_sched: c5(ctl::P_SCHED),
            ctl_p_remove: c5(ctl::P_REMOVE),
            ctl_p_remove_wait: c5(ctl::P_REMOVE_WAIT),
            ctl_p_cpl: c5(ctl::P_CPL),
            st_idle: c2(stream::IDLE),
            st_stream: c2(stream::STREAM),
        }
    }
}

impl Logic for TxEngine {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            fetch,
            fetch_endpoint,
            fetch_generation,
            next_endpoint,
            fetch_count,
            doorbells_beyond_count,
            fetch_got,
            fetch_taken,
            fetch_error,
            eq_head,
            eq_tail,
            eq_count,
            grants_unknown_count,
            events_dropped_count,
            resends_unknown_count,
            retransmitted_count,
            c_pkt_retx,
            expired_count,
            c_kind,
            c_silence,
            c_ev_length,
            c_sent_max,
            c_rend,
            c_first_done,
            c_release,
            c_live,
            ack_take,
            ctl,
            c_slot,
            c_desc,
            c_sent,
            c_granted,
            c_prio,
            c_birth,
            c_pkt_len,
            c_status,
            c_grant_offset,
            c_grant_prio,
            birth_ctr,
            in_flight,
            c_failed,
            c_was_eligible,
            c_ulevel,
            c_version,
            j_head,
            j_tail,
            j_count,
            j_hdr,
            j_hdr_count,
            h_ahead,
            st,
            remaining,
            seg_error,
            tail_error,
            pay_wr,
            pay_rd,
            cpl_valid,
            cpl_record,
            cpl_endpoint
        );
        self.descs.read_clock.next = self.clock.val();
        self.descs.write_clock.next = self.clock.val();
        self.progress.read_clock.next = self.clock.val();
        self.progress.write_clock.next = self.clock.val();
        self.failed.read_clock.next = self.clock.val();
        self.failed.write_clock.next = self.clock.val();
        self.out_table.clock.next = self.clock.val();
        self.out_table.reset.next = self.reset.val();
        self.sched.clock.next = self.clock.val();
        self.sched.reset.next = self.reset.val();

        self.peers.clock.next = self.clock.val();
        self.peers.reset.next = self.reset.val();
        self.peers.s_cutoffs_valid.next = self.s_cutoffs_valid.val();
        self.peers.s_cutoffs_ip.next = self.s_cutoffs_ip.val();
        self.peers.s_cutoffs_version.next = self.s_cutoffs_version.val();
        self.peers.s_cutoffs_limits.next = self.s_cutoffs_limits.val();
        self.peers.s_ack_valid.next = self.s_owed_ack_valid.val();
        self.peers.s_ack_ip.next = self.s_owed_ack_ip.val();
        self.peers.s_ack_client_id.next = self.s_owed_ack_client_id.val();
        self.peers.s_ack_server_port.next = self.s_owed_ack_server_port.val();
        // The lookup of the cycle before (P_ISSUE's, of the same peer) is
        // the one taken.
        self.peers.a_take.next = self.ack_take.q.val();
        self.ack_take.d.next = false;
        self.acks_piggybacked.next = self.peers.acks_piggybacked.val();
        self.doorbells_beyond_ring.next = self.doorbells_beyond_count.q.val();
        self.sched.cfg_pacer_fifo_fraction.next = self.pacer_fifo_fraction.val();
        // The linger timer: its "RESEND" is the expiry of a slot's linger.
        self.linger.clock.next = self.clock.val();
        self.linger.reset.next = self.reset.val();
        self.linger.tick.next = self.tick.val();
        self.linger.cfg_resend_ticks.next = self.cfg_resend_ticks.val();
        self.linger.cfg_resend_interval.next = self.cfg_resend_interval.val();
        // The TX engine judges a linger's silence itself (`c_silence`).
        self.linger.cfg_timeout_ticks.next = 0.into();
        self.linger.s_watch_valid.next = false;
        self.linger.s_watch_slot.next = self.c_slot.q.val();
        self.linger.s_watch_live.next = true;
        self.linger.s_watch_from.next = 0.into();
        self.linger.s_watch_to.next = 1.into();
        self.linger.s_watch_open.next = false;
        self.linger.s_watch_new.next = false;
        self.linger.s_grant_valid.next = false;
        self.linger.s_grant_slot.next = 0.into();
        self.linger.s_grant_offset.next = 0.into();
        self.linger.m_resend_ready.next = false;

        // ---- descriptor fetch: round robin over endpoints with work ----
        self.ring_slot.next = 0.into();
        self.f_producer.next = 0.into();
        for i in 0..ENDPOINTS {
            self.consumer[i].clock.next = self.clock.val();
            self.consumer[i].d.next = self.consumer[i].q.val();
            self.ep_tx_consumer[i].next = self.consumer[i].q.val();
            self.pend[i].next = (self.ep_port[i].val() != 0)
                & (self.ep_tx_producer[i].val() != self.consumer[i].q.val());
            if self.fetch_endpoint.q.val().index() == i {
                self.ring_slot.next = self.consumer[i].q.val();
                self.f_producer.next = self.ep_tx_producer[i].val();
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
        self.sel_endpoint.next = self.fetch_endpoint.q.val();
        if self.fetch.q.val() == 0 {
            if self.found.val() {
                self.fetch_endpoint.d.next = self.pick.val();
                for i in 0..ENDPOINTS {
                    if self.pick.val().index() == i {
                        self.fetch_generation.d.next = self.ep_generation[i].val();
                    }
                }
                self.fetch.d.next = 1.into();
            }
        }
        // The batch: as many as are posted, up to DESC_BATCH and the ring's end.
        self.f_avail.next = self.f_producer.val() - self.ring_slot.val();
        self.f_to_end.next = (self.one.val() << self.sel_tx_ring_log2.val())
            - (self.ring_slot.val() & ((self.one.val() << self.sel_tx_ring_log2.val()) - 1));
        self.f_count.next = self.desc_batch.val().get_bits::<3>(0);
        if self.f_avail.val() < self.desc_batch.val() {
            self.f_count.next = self.f_avail.val().get_bits::<3>(0);
        }
        if (self.f_to_end.val() < self.desc_batch.val())
            & (self.f_to_end.val() < self.f_avail.val())
        {
            self.f_count.next = self.f_to_end.val().get_bits::<3>(0);
        }
        self.f_beyond.next = self.f_avail.val() > (self.one.val() << self.sel_tx_ring_log2.val());
        if self.fetch.q.val() == 1 {
            self.fetch_count.d.next = self.f_count.val();
            self.fetch_got.d.next = 0.into();
            self.fetch_taken.d.next = 0.into();
            self.fetch_error.d.next = false;
            self.fetch.d.next = 2.into();
            if self.f_count.val() == 0 {
                // The host took its doorbell back: nothing to read.
                self.fetch.d.next = 0.into();
            }
            if self.f_beyond.val() {
                // A doorbell more than a ring ahead (bad host input): the
                // ring's entries would be taken twice. Skipped and counted;
                // the ring goes on from the producer index.
                self.doorbells_beyond_count.d.next = self.doorbells_beyond_count.q.val() + 1;
                for i in 0..ENDPOINTS {
                    if self.fetch_endpoint.q.val().index() == i {
                        self.consumer[i].d.next = self.f_producer.val();
                    }
                }
                self.next_endpoint.d.next = self.fetch_endpoint.q.val() + 1;
                self.fetch.d.next = 0.into();
            }
        }
        self.f_head.next = self.fetched[0].q.val();
        for k in 0..DESC_BATCH {
            self.fetched[k].clock.next = self.clock.val();
            self.fetched[k].d.next = self.fetched[k].q.val();
            if self.fetch_taken.q.val() == self.batch_index[k].val() {
                self.f_head.next = self.fetched[k].q.val();
            }
        }

        // ---- the sender-event queue ----
        self.e_kind.next = 0.into();
        self.e_key.next = 0.into();
        self.e_offset.next = 0.into();
        self.e_length.next = 0.into();
        self.e_priority.next = 0.into();
        self.e_mac.next = 0.into();
        self.e_port.next = 0.into();
        self.e_known.next = false;
        for k in 0..EVENT_QUEUE {
            self.eq_kind[k].clock.next = self.clock.val();
            self.eq_kind[k].d.next = self.eq_kind[k].q.val();
            self.eq_key[k].clock.next = self.clock.val();
            self.eq_key[k].d.next = self.eq_key[k].q.val();
            self.eq_offset[k].clock.next = self.clock.val();
            self.eq_offset[k].d.next = self.eq_offset[k].q.val();
            self.eq_length[k].clock.next = self.clock.val();
            self.eq_length[k].d.next = self.eq_length[k].q.val();
            self.eq_priority[k].clock.next = self.clock.val();
            self.eq_priority[k].d.next = self.eq_priority[k].q.val();
            self.eq_mac[k].clock.next = self.clock.val();
            self.eq_mac[k].d.next = self.eq_mac[k].q.val();
            self.eq_port[k].clock.next = self.clock.val();
            self.eq_port[k].d.next = self.eq_port[k].q.val();
            self.eq_known[k].clock.next = self.clock.val();
            self.eq_known[k].d.next = self.eq_known[k].q.val();
            if self.eq_head.q.val() == self.eq_index[k].val() {
                self.e_kind.next = self.eq_kind[k].q.val();
                self.e_key.next = self.eq_key[k].q.val();
                self.e_offset.next = self.eq_offset[k].q.val();
                self.e_length.next = self.eq_length[k].q.val();
                self.e_priority.next = self.eq_priority[k].q.val();
                self.e_mac.next = self.eq_mac[k].q.val();
                self.e_port.next = self.eq_port[k].q.val();
                self.e_known.next = self.eq_known[k].q.val();
            }
        }
        self.push_event.next =
            self.s_event_valid.val() & (self.eq_count.q.val() != self.eq_max.val());
        if self.s_event_valid.val() & !self.push_event.val() {
            self.events_dropped_count.d.next = self.events_dropped_count.q.val() + 1;
        }
        for k in 0..EVENT_QUEUE {
            if self.push_event.val() & (self.eq_tail.q.val() == self.eq_index[k].val()) {
                self.eq_kind[k].d.next = self.s_event_kind.val();
                self.eq_key[k].d.next = self.s_event_key.val();
                self.eq_offset[k].d.next = self.s_event_offset.val();
                self.eq_length[k].d.next = self.s_event_length.val();
                self.eq_priority[k].d.next = self.s_event_priority.val();
                self.eq_mac[k].d.next = self.s_event_mac.val();
                self.eq_port[k].d.next = self.s_event_port.val();
                self.eq_known[k].d.next = self.s_event_known.val();
            }
        }
        self.pop_event.next = false;

        // ---- the job queue: the head (streaming) and the next header ----
        self.sj_slot.next = 0.into();
        self.sj_birth.next = 0.into();
        self.sj_len.next = 0.into();
        self.h_desc.next = 0.into();
        self.h_offset.next = 0.into();
        self.h_len.next = 0.into();
        self.h_level.next = 0.into();
        self.h_incoming.next = 0.into();
        self.h_retransmit.next = false;
        self.h_version.next = 0.into();
        self.h_ack_id.next = 0.into();
        self.h_ack_port.next = 0.into();
        for k in 0..JOBS {
            self.j_version[k].clock.next = self.clock.val();
            self.j_version[k].d.next = self.j_version[k].q.val();
            self.j_ack_id[k].clock.next = self.clock.val();
            self.j_ack_id[k].d.next = self.j_ack_id[k].q.val();
            self.j_ack_port[k].clock.next = self.clock.val();
            self.j_ack_port[k].d.next = self.j_ack_port[k].q.val();
            self.j_desc[k].clock.next = self.clock.val();
            self.j_desc[k].d.next = self.j_desc[k].q.val();
            self.j_slot[k].clock.next = self.clock.val();
            self.j_slot[k].d.next = self.j_slot[k].q.val();
            self.j_offset[k].clock.next = self.clock.val();
            self.j_offset[k].d.next = self.j_offset[k].q.val();
            self.j_len[k].clock.next = self.clock.val();
            self.j_len[k].d.next = self.j_len[k].q.val();
            self.j_level[k].clock.next = self.clock.val();
            self.j_level[k].d.next = self.j_level[k].q.val();
            self.j_incoming[k].clock.next = self.clock.val();
            self.j_incoming[k].d.next = self.j_incoming[k].q.val();
            self.j_retransmit[k].clock.next = self.clock.val();
            self.j_retransmit[k].d.next = self.j_retransmit[k].q.val();
            self.j_birth[k].clock.next = self.clock.val();
            self.j_birth[k].d.next = self.j_birth[k].q.val();
            if self.j_head.q.val() == self.job_index[k].val() {
                self.sj_slot.next = self.j_slot[k].q.val();
                self.sj_birth.next = self.j_birth[k].q.val();
                self.sj_len.next = self.j_len[k].q.val();
            }
            if self.j_hdr.q.val() == self.job_index[k].val() {
                self.h_desc.next = self.j_desc[k].q.val();
                self.h_offset.next = self.j_offset[k].q.val();
                self.h_len.next = self.j_len[k].q.val();
                self.h_level.next = self.j_level[k].q.val();
                self.h_incoming.next = self.j_incoming[k].q.val();
                self.h_retransmit.next = self.j_retransmit[k].q.val();
                self.h_version.next = self.j_version[k].q.val();
                self.h_ack_id.next = self.j_ack_id[k].q.val();
                self.h_ack_port.next = self.j_ack_port[k].q.val();
            }
        }
        self.push_job.next = false;
        self.pop_job.next = false;

        // ---- the control machine's fields ----
        self.c_length.next = self
            .c_desc
            .q
            .val()
            .get_bits::<32>(self.at_length.val().index());
        self.c_len20.next = self.c_length.val().get_bits::<20>(0);
        self.c_opcode.next = self
            .c_desc
            .q
            .val()
            .get_bits::<8>(self.at_opcode.val().index());
        self.c_endpoint.next = self
            .c_desc
            .q
            .val()
            .get_bits::<2>(self.at_endpoint.val().index());
        self.c_port.next = 0.into();
        self.read_open.next = false;
        for i in 0..ENDPOINTS {
            if self.c_endpoint.val().index() == i {
                self.c_port.next = self.ep_port[i].val();
            }
            if self
                .descs
                .read_data
                .val()
                .get_bits::<2>(self.at_endpoint.val().index())
                .index()
                == i
            {
                self.read_open.next = (self.ep_port[i].val() != 0)
                    & (self.ep_generation[i].val()
                        == self
                            .descs
                            .read_data
                            .val()
                            .get_bits::<GENERATION_BITS>(self.at_generation.val().index()));
            }
        }
        // The message's key as a sender event names it: peer IP, 0 (an ack
        // does not name the peer's port; RPC ids are unique per client
        // host), our port, our RPC id.
        self.c_key.next = (bit_cast::<128, 32>(
            self.c_desc
                .q
                .val()
                .get_bits::<32>(self.at_peer_ip.val().index()),
        ) << 96)
            | (bit_cast::<128, 16>(self.c_port.val()) << 64)
            | bit_cast::<128, 64>(
                self.c_desc
                    .q
                    .val()
                    .get_bits::<64>(self.at_rpc_id.val().index()),
            );
        // The next packet: up to a full segment, the granted offset (or,
        // resending, the end of the range asked for) and (for unscheduled
        // bytes) the end of the unscheduled part.
        self.retx.next = self.c_sent.q.val() < self.c_sent_max.q.val();
        self.pkt_cap.next = self.c_granted.q.val();
        if self.retx.val() {
            self.pkt_cap.next = self.c_rend.q.val();
        }
        self.pkt_end.next = self.c_sent.q.val() + self.max_segment.val();
        if self.pkt_cap.val() < self.pkt_end.val() {
            self.pkt_end.next = self.pkt_cap.val();
        }
        if (self.c_sent.q.val() < self.cfg_unsched_bytes.val())
            & (self.cfg_unsched_bytes.val() < self.pkt_end.val())
        {
            self.pkt_end.next = self.cfg_unsched_bytes.val();
        }
        self.pkt_len.next = self.pkt_end.val() - self.c_sent.q.val();
        self.progress_out.next = bit_cast::<PROGRESS_BITS, 20>(self.c_sent.q.val())
            | (bit_cast::<PROGRESS_BITS, 20>(self.c_granted.q.val()) << 20)
            | (bit_cast::<PROGRESS_BITS, 3>(self.c_prio.q.val()) << 40)
            | (bit_cast::<PROGRESS_BITS, 32>(self.c_birth.q.val()) << 43)
            | (bit_cast::<PROGRESS_BITS, 3>(self.c_ulevel.q.val()) << 75)
            | (bit_cast::<PROGRESS_BITS, 16>(self.c_version.q.val()) << 78)
            | (bit_cast::<PROGRESS_BITS, 20>(self.c_sent_max.q.val()) << 94)
            | (bit_cast::<PROGRESS_BITS, 20>(self.c_rend.q.val()) << 114);
        self.resend_room.next = self.c_sent_max.q.val() - self.c_grant_offset.q.val();
        self.c_done_with.next = ((self.c_kind.q.val() == self.ev_acked.val())
            & (self.c_opcode.val() == self.op_response.val()))
            | ((self.c_kind.q.val() == self.ev_begun.val())
                & (self.c_opcode.val() == self.op_request.val()));
        // A RESEND's end within the message (`rs_end`), and whether it lies
        // past `granted` (`rs_grants`; "everything sent" never does).
        self.grant_room.next = self.c_len20.val() - self.c_grant_offset.q.val();
        self.rs_end.next = self.c_len20.val();
        if self.c_ev_length.q.val() < bit_cast::<32, 20>(self.grant_room.val()) {
            self.rs_end.next =
                self.c_grant_offset.q.val() + self.c_ev_length.q.val().get_bits::<20>(0);
        }
        self.rs_grants.next = (self.c_ev_length.q.val() != self.all_ones32.val())
            & (self.c_grant_offset.q.val() < self.c_len20.val())
            & (self.rs_end.val() > self.c_granted.q.val());
        self.c_all_sent.next = (self.c_sent_max.q.val() == self.c_len20.val())
            & (self.c_sent.q.val() == self.c_sent_max.q.val());
        // The descriptor's MAC, first byte on top (as `hdr_dst_mac`).
        self.c_mac.next = (bit_cast::<48, 8>(
            self.c_desc
                .q
                .val()
                .get_bits::<8>(self.at_peer_mac.val().index()),
        ) << 40)
            | (bit_cast::<48, 8>(
                self.c_desc
                    .q
                    .val()
                    .get_bits::<8>(self.at_peer_mac.val().index() + 8),
            ) << 32)
            | (bit_cast::<48, 8>(
                self.c_desc
                    .q
                    .val()
                    .get_bits::<8>(self.at_peer_mac.val().index() + 16),
            ) << 24)
            | (bit_cast::<48, 8>(
                self.c_desc
                    .q
                    .val()
                    .get_bits::<8>(self.at_peer_mac.val().index() + 24),
            ) << 16)
            | (bit_cast::<48, 8>(
                self.c_desc
                    .q
                    .val()
                    .get_bits::<8>(self.at_peer_mac.val().index() + 32),
            ) << 8)
            | bit_cast::<48, 8>(
                self.c_desc
                    .q
                    .val()
                    .get_bits::<8>(self.at_peer_mac.val().index() + 40),
            );
        self.m_nudge_valid.next = false;
        self.m_nudge_kind.next = self.nudge_resend.val();
        if self.c_opcode.val() == self.op_response.val() {
            self.m_nudge_kind.next = self.nudge_need_ack.val();
        }
        self.m_nudge_mac.next = self.c_mac.val();
        self.m_nudge_ip.next = self
            .c_desc
            .q
            .val()
            .get_bits::<32>(self.at_peer_ip.val().index());
        self.m_served_valid.next = false;
        self.m_served_key.next = self.c_key.val()
            | (bit_cast::<128, 16>(
                self.c_desc
                    .q
                    .val()
                    .get_bits::<16>(self.at_peer_port.val().index()),
            ) << 80);
        self.m_nudge_peer_port.next = self
            .c_desc
            .q
            .val()
            .get_bits::<16>(self.at_peer_port.val().index());
        self.m_nudge_local_port.next = self.c_port.val();
        self.m_nudge_local_id.next = self
            .c_desc
            .q
            .val()
            .get_bits::<64>(self.at_rpc_id.val().index());
        // A client asks for the response's first packet (the server resends
        // it whole, or the response's first bytes, as much as one holds).
        self.m_nudge_length.next = self.max_segment.val();
        // The peer's cutoffs for the descriptor being taken (D_CHECK on: the
        // answer is in by D_WAIT's end, the RPC table taking 3 cycles).
        self.peers.q_ip.next = self
            .c_desc
            .q
            .val()
            .get_bits::<32>(self.at_peer_ip.val().index());
        self.peers.q_length.next = self.c_len20.val();
        // The ack owed to the peer of the packet being chosen: looked up as
        // its descriptor comes out of `descs` (P_DATA), there in P_ISSUE (for
        // the job); looked up again in P_ISSUE, taken in P_SCHED (`ack_take`).
        self.peers.a_ip.next = self
            .c_desc
            .q
            .val()
            .get_bits::<32>(self.at_peer_ip.val().index());
        if self.ctl.q.val() == self.ctl_p_data.val() {
            self.peers.a_ip.next = self
                .descs
                .read_data
                .val()
                .get_bits::<32>(self.at_peer_ip.val().index());
        }

        // ---- defaults of the shared ports ----
        self.out_table.s_req_valid.next = false;
        self.out_table.s_req_op.next = self.op_lookup.val();
        self.out_table.s_req_key.next = self.c_key.val();
        self.sched.s_upd_valid.next = false;
        self.sched.s_upd_slot.next = bit_cast::<14, SLOT_BITS>(self.c_slot.q.val());
        self.sched.s_upd_eligible.next = self.c_sent.q.val() < self.c_granted.q.val();
        self.sched.s_upd_bypass.next = self.c_len20.val() < self.throttle_min.val();
        self.sched.s_upd_bytes_left.next = self.c_len20.val() - self.c_sent.q.val();
        self.sched.s_upd_birth.next = self.c_birth.q.val();
        self.sched.s_upd_sent.next = false;
        self.sched.s_upd_sent_bytes.next = self.pkt_len.val().get_bits::<11>(0);
        self.sched.s_pick_valid.next = false;
        self.descs.read_address.next = self.c_slot.q.val();
        self.descs.write_address.next = self.c_slot.q.val();
        self.descs.write_data.next = self.c_desc.q.val();
        self.descs.write_enable.next = false;
        self.progress.read_address.next = self.c_slot.q.val();
        self.progress.write_address.next = self.c_slot.q.val();
        self.progress.write_data.next = self.progress_out.val();
        self.progress.write_enable.next = false;
        self.failed.read_address.next = self.c_slot.q.val();
        self.failed.write_address.next = self.sj_slot.val();
        self.failed.write_data.next = self.sj_birth.val();
        self.failed.write_enable.next = false;

        // DMA reads: payload (the control machine's P_ISSUE) first, else the
        // descriptor fetch.
        self.m_dma_rd_req_valid.next = false;
        self.m_dma_rd_req_addr.next = self.sel_tx_ring.val()
            + (bit_cast::<64, 32>(
                self.ring_slot.val() & ((self.one.val() << self.sel_tx_ring_log2.val()) - 1),
            ) << 6);
        self.m_dma_rd_req_len.next = bit_cast::<16, 3>(self.fetch_count.q.val()) << 6;
        self.m_dma_rd_req_tag.next = self.tag_descriptor.val();
        if (self.fetch.q.val() == 2) & (self.ctl.q.val() != self.ctl_p_issue.val()) {
            self.m_dma_rd_req_valid.next = true;
            if self.m_dma_rd_req_ready.val() {
                self.fetch.d.next = 3.into();
            }
        }
        // Responses: descriptors to the fetcher, payload to the streamer
        // (through the payload ring, taken whenever it has room).
        self.rsp_is_desc.next = self.s_dma_rd_rsp_tag.val() == self.tag_descriptor.val();
        self.s_dma_rd_rsp_ready.next =
            !self.rsp_is_desc.val() & !(self.pay_valid[0].q.val() & self.pay_valid[1].q.val());
        self.pay_push.next = self.s_dma_rd_rsp_valid.val() & self.s_dma_rd_rsp_ready.val();
        self.pay_in.next = bit_cast::<513, 512>(self.s_dma_rd_rsp_data.val());
        if self.s_dma_rd_rsp_error.val() {
            self.pay_in.next =
                bit_cast::<513, 512>(self.s_dma_rd_rsp_data.val()) | self.payload_error_bit.val();
        }
        if self.rsp_is_desc.val() & (self.fetch.q.val() == 3) {
            self.s_dma_rd_rsp_ready.next = true;
            if self.s_dma_rd_rsp_valid.val() {
                for k in 0..DESC_BATCH {
                    if self.fetch_got.q.val() == self.batch_index[k].val() {
                        self.fetched[k].d.next = self.s_dma_rd_rsp_data.val();
                    }
                }
                if self.s_dma_rd_rsp_error.val() {
                    self.fetch_error.d.next = true;
                }
                self.fetch_got.d.next = self.fetch_got.q.val() + 1;
                if self.fetch_got.q.val() + 1 == self.fetch_count.q.val() {
                    self.fetch.d.next = 4.into();
                }
            }
        }

        // ---- the control machine ----
        if self.ctl.q.val() == self.ctl_idle.val() {
            self.c_release.d.next = false;
            self.c_first_done.d.next = false;
            if self.eq_count.q.val() != 0 {
                self.c_kind.d.next = self.e_kind.val();
                self.c_grant_offset.d.next = self.e_offset.val().get_bits::<20>(0);
                if self.e_offset.val() > self.max_message.val() {
                    self.c_grant_offset.d.next = self.max_message.val().get_bits::<20>(0);
                }
                self.c_ev_length.d.next = self.e_length.val();
                self.c_grant_prio.d.next = self.e_priority.val();
                self.ctl.d.next = self.ctl_g_lookup.val();
            } else if self.linger.m_resend_valid.val() {
                // A message silent for timeout_ticks (if still all sent).
                self.linger.m_resend_ready.next = true;
                self.c_kind.d.next = self.ev_expired.val();
                self.c_silence.d.next = self.linger.m_resend_silence.val();
                self.c_slot.d.next = self.linger.m_resend_slot.val();
                self.ctl.d.next = self.ctl_g_read.val();
            } else if self.fetch.q.val() == 4 {
                // The batch's next descriptor, with its endpoint and that
                // endpoint's generation in byte 62.
                self.c_desc.d.next = self.f_head.val()
                    | (bit_cast::<512, 2>(self.fetch_endpoint.q.val()) << self.at_endpoint.val())
                    | (bit_cast::<512, GENERATION_BITS>(self.fetch_generation.q.val())
                        << self.at_generation.val());
                self.c_live.d.next = true;
                self.c_status.d.next = self.status_ok.val();
                if self.fetch_error.q.val() {
                    self.c_status.d.next = self.status_dma_error.val();
                }
                for i in 0..ENDPOINTS {
                    if self.fetch_endpoint.q.val().index() == i {
                        self.consumer[i].d.next = self.consumer[i].q.val() + 1;
                    }
                }
                self.fetch_taken.d.next = self.fetch_taken.q.val() + 1;
                if self.fetch_taken.q.val() + 1 == self.fetch_count.q.val() {
                    self.next_endpoint.d.next = self.fetch_endpoint.q.val() + 1;
                    self.fetch.d.next = 0.into();
                }
                self.ctl.d.next = self.ctl_d_check.val();
            } else if self.j_count.q.val() != self.jobs_max.val() {
                self.ctl.d.next = self.ctl_p_pick.val();
            }
        } else if self.ctl.q.val() == self.ctl_g_lookup.val() {
            self.out_table.s_req_valid.next = true;
            self.out_table.s_req_op.next = self.op_lookup.val();
            self.out_table.s_req_key.next = self.e_key.val();
            if self.out_table.s_req_ready.val() {
                self.ctl.d.next = self.ctl_g_wait.val();
            }
        } else if self.ctl.q.val() == self.ctl_g_wait.val() {
            // The event stays at the queue's head until now (an ACK is
            // built from it).
            if self.out_table.m_rsp_valid.val() {
                self.pop_event.next = true;
                self.c_slot.d.next = self.out_table.m_rsp_slot.val();
                self.ctl.d.next = self.ctl_g_read.val();
                if self.c_kind.q.val() == self.ev_need_ack.val() {
                    // The server has sent all of the response and waits for
                    // our ack. A request still here has had no packet of
                    // it (all lost: our nudge asks for it again), so the RPC
                    // is not over: no ack. Otherwise we are done with it.
                    self.ctl.d.next = self.ctl_idle.val();
                    if !self.out_table.m_rsp_hit.val() {
                        self.pop_event.next = false;
                        self.ctl.d.next = self.ctl_answer.val();
                    }
                } else if !self.out_table.m_rsp_hit.val() {
                    // A RESEND for no message here is answered, BUSY or
                    // RPC_UNKNOWN (ANSWER, from the event).
                    if self.c_kind.q.val() == self.ev_resend.val() {
                        self.pop_event.next = false;
                        self.ctl.d.next = self.ctl_answer.val();
                    }
                    // (An ack for a message gone is normal: acks come twice.)
                    if self.c_kind.q.val() == self.ev_grant.val() {
                        self.grants_unknown_count.d.next = self.grants_unknown_count.q.val() + 1;
                    }
                    if self.c_kind.q.val() == self.ev_resend.val() {
                        self.resends_unknown_count.d.next = self.resends_unknown_count.q.val() + 1;
                    } else {
                        self.ctl.d.next = self.ctl_idle.val();
                    }
                }
            }
        } else if self.ctl.q.val() == self.ctl_g_read.val() {
            // The RAMs read `c_slot` at this edge.
            self.ctl.d.next = self.ctl_g_update.val();
        } else if self.ctl.q.val() == self.ctl_g_update.val() {
            self.c_desc.d.next = self.descs.read_data.val();
            self.c_live.d.next = self.read_open.val();
            self.c_sent.d.next = self.progress.read_data.val().get_bits::<20>(0);
            self.c_granted.d.next = self.progress.read_data.val().get_bits::<20>(20);
            self.c_prio.d.next = self.progress.read_data.val().get_bits::<3>(40);
            self.c_birth.d.next = self.progress.read_data.val().get_bits::<32>(43);
            self.c_ulevel.d.next = self.progress.read_data.val().get_bits::<3>(75);
            self.c_version.d.next = self.progress.read_data.val().get_bits::<16>(78);
            self.c_sent_max.d.next = self.progress.read_data.val().get_bits::<20>(94);
            self.c_rend.d.next = self.progress.read_data.val().get_bits::<20>(114);
            self.c_failed.d.next =
                self.failed.read_data.val() == self.progress.read_data.val().get_bits::<32>(43);
            self.c_was_eligible.d.next = self.progress.read_data.val().get_bits::<20>(0)
                < self.progress.read_data.val().get_bits::<20>(20);
            self.ctl.d.next = self.ctl_e_decide.val();
            if self.c_kind.q.val() == self.ev_grant.val() {
                // The receiver is alive: the message's silence starts again.
                self.linger.s_watch_valid.next = true;
                self.c_prio.d.next = self.c_grant_prio.q.val();
                if self.c_grant_offset.q.val() > self.progress.read_data.val().get_bits::<20>(20) {
                    self.c_granted.d.next = self.c_grant_offset.q.val();
                }
                self.ctl.d.next = self.ctl_g_sched.val();
            }
        } else if self.ctl.q.val() == self.ctl_e_decide.val() {
            // RESEND, ACKED, BUSY or EXPIRED, the message's record in
            // registers.
            self.ctl.d.next = self.ctl_idle.val();
            if !self.c_live.q.val() {
                // Its endpoint has closed (or closed and opened again)
                // since it was posted: its buffer may be gone and nobody
                // waits for it. Released now, without a completion.
                self.c_release.d.next = true;
                self.c_granted.d.next = self.c_sent.q.val();
                self.ctl.d.next = self.ctl_p_sched.val();
            } else if self.c_kind.q.val() == self.ev_resend.val() {
                // The receiver is alive and waiting: its silence starts again.
                self.linger.s_watch_valid.next = true;
                if self.rs_grants.val() {
                    // Bytes asked for past what we were granted: a GRANT
                    // was lost; the receiver granted them (HomaModule's
                    // sender assumes the same).
                    self.c_granted.d.next = self.rs_end.val();
                    self.c_was_eligible.d.next = false;
                    self.ctl.d.next = self.ctl_g_sched.val();
                }
                if self.c_grant_offset.q.val() < self.c_sent_max.q.val() {
                    // Back to the offset asked for; resend up to the range's
                    // end or what was ever sent, whichever comes first.
                    self.c_sent.d.next = self.c_grant_offset.q.val();
                    self.c_rend.d.next = self.c_sent_max.q.val();
                    if self.c_ev_length.q.val() < bit_cast::<32, 20>(self.resend_room.val()) {
                        self.c_rend.d.next = self.c_grant_offset.q.val()
                            + self.c_ev_length.q.val().get_bits::<20>(0);
                    }
                    self.c_was_eligible.d.next = false;
                    self.ctl.d.next = self.ctl_g_sched.val();
                }
            } else if self.c_kind.q.val() == self.ev_busy.val() {
                self.linger.s_watch_valid.next = true;
            } else if (self.c_kind.q.val() == self.ev_unknown.val())
                & (self.c_opcode.val() == self.op_request.val())
            {
                // The server has no trace of our request (lost whole, or it
                // forgot it): everything sent so far goes again, as
                // HomaModule's client restarts. (Its silence goes on: a
                // server that keeps forgetting fails the RPC in time.)
                self.c_sent.d.next = 0.into();
                self.c_rend.d.next = self.c_sent_max.q.val();
                self.c_was_eligible.d.next = false;
                self.ctl.d.next = self.ctl_g_sched.val();
            } else if (self.c_kind.q.val() == self.ev_expired.val())
                & (self.c_sent.q.val() < self.c_granted.q.val())
            {
                // Bytes granted and not sent: it is the send scheduler that
                // is slow, not the peer.
            } else if ((self.c_kind.q.val() == self.ev_acked.val())
                | (self.c_kind.q.val() == self.ev_begun.val()))
                & (!self.c_done_with.val() | (self.c_sent_max.q.val() != self.c_len20.val()))
            {
                // An ack of a request, a response to a response, or either
                // for a message not all sent yet: no peer of ours can mean
                // it, so a forgery (or a confused peer): ignored.
            } else if self.c_done_with.val()
                | (self.c_kind.q.val() == self.ev_unknown.val())
                | (self.c_silence.q.val() >= self.cfg_timeout_ticks.val())
            {
                // Released (acked; a response whose client has no such RPC,
                // as HomaModule's server ends it; or silent too long): out
                // of the scheduler (granted = sent: not eligible), out of
                // the table, completed. A request whose response never came, or a
                // message whose grants never came, failed.
                self.c_release.d.next = true;
                self.c_granted.d.next = self.c_sent.q.val();
                self.c_status.d.next = self.status_ok.val();
                if (self.c_kind.q.val() == self.ev_expired.val())
                    & (!self.c_all_sent.val() | (self.c_opcode.val() == self.op_request.val()))
                {
                    self.c_status.d.next = self.status_timeout.val();
                }
                if self.c_failed.q.val() {
                    self.c_status.d.next = self.status_dma_error.val();
                }
                self.ctl.d.next = self.ctl_p_sched.val();
            } else if self.c_all_sent.val() {
                // Silent a while, all sent: ask the peer (HomaModule's
                // client asks a silent server for the response's first
                // packet; its server asks a silent client for the ack).
                self.ctl.d.next = self.ctl_nudge.val();
            }
        } else if self.ctl.q.val() == self.ctl_nudge.val() {
            self.m_nudge_valid.next = true;
            if self.m_nudge_ready.val() {
                self.ctl.d.next = self.ctl_idle.val();
            }
        } else if self.ctl.q.val() == self.ctl_answer.val() {
            // The NEED_ACK or RESEND at the queue's head is answered: ACK
            // (the RPC is over), BUSY (the request is in service: the host
            // has not posted the response yet), or RPC_UNKNOWN.
            self.m_nudge_valid.next = true;
            self.m_nudge_kind.next = self.nudge_unknown.val();
            if self.c_kind.q.val() == self.ev_need_ack.val() {
                self.m_nudge_kind.next = self.nudge_ack.val();
            } else if self.e_known.val() {
                self.m_nudge_kind.next = self.nudge_busy.val();
            }
            self.m_nudge_mac.next = self.e_mac.val();
            self.m_nudge_ip.next = self.e_key.val().get_bits::<32>(96);
            self.m_nudge_peer_port.next = self.e_port.val();
            self.m_nudge_local_port.next = self.e_key.val().get_bits::<16>(64);
            self.m_nudge_local_id.next = self.e_key.val().get_bits::<64>(0);
            if self.m_nudge_ready.val() {
                self.pop_event.next = true;
                self.ctl.d.next = self.ctl_idle.val();
            }
        } else if self.ctl.q.val() == self.ctl_p_served.val() {
            self.m_served_valid.next = true;
            if self.m_served_ready.val() {
                self.ctl.d.next = self.ctl_idle.val();
                if self.c_live.q.val() {
                    self.ctl.d.next = self.ctl_p_cpl.val();
                }
            }
        } else if self.ctl.q.val() == self.ctl_g_sched.val() {
            // Granted never past the message.
            if self.c_granted.q.val() > self.c_len20.val() {
                self.c_granted.d.next = self.c_len20.val();
            } else if self.c_was_eligible.q.val() {
                // Already eligible: the scheduler's keys (bytes left, age)
                // are unchanged, so it need not hear (and its trees need not
                // settle again before the next pick).
                self.progress.write_enable.next = true;
                self.ctl.d.next = self.ctl_idle.val();
            } else {
                self.progress.write_enable.next = self.sched.s_upd_ready.val();
                self.sched.s_upd_valid.next = true;
                if self.sched.s_upd_ready.val() {
                    self.ctl.d.next = self.ctl_idle.val();
                }
            }
        } else if self.ctl.q.val() == self.ctl_d_check.val() {
            self.ctl.d.next = self.ctl_d_insert.val();
            if ((self.c_opcode.val() != self.op_request.val())
                & (self.c_opcode.val() != self.op_response.val()))
                | (self.c_length.val() == 0)
                | (self.c_length.val() > self.max_message.val())
            {
                self.c_status.d.next = self.status_bad_descriptor.val();
                self.ctl.d.next = self.ctl_d_cpl.val();
            }
            if self.c_status.q.val() != self.status_ok.val() {
                self.ctl.d.next = self.ctl_d_cpl.val();
            }
        } else if self.ctl.q.val() == self.ctl_d_insert.val() {
            self.out_table.s_req_valid.next = true;
            self.out_table.s_req_op.next = self.op_insert.val();
            if self.out_table.s_req_ready.val() {
                self.ctl.d.next = self.ctl_d_wait.val();
            }
        } else if self.ctl.q.val() == self.ctl_d_wait.val() {
            if self.out_table.m_rsp_valid.val() {
                self.c_slot.d.next = self.out_table.m_rsp_slot.val();
                self.c_sent.d.next = 0.into();
                self.c_granted.d.next = self.cfg_unsched_bytes.val();
                if self.c_len20.val() < self.cfg_unsched_bytes.val() {
                    self.c_granted.d.next = self.c_len20.val();
                }
                self.c_prio.d.next = 0.into();
                self.c_sent_max.d.next = 0.into();
                self.c_rend.d.next = 0.into();
                self.c_ulevel.d.next = self.peers.q_level.val();
                self.c_version.d.next = self.peers.q_version.val();
                self.c_birth.d.next = self.birth_ctr.q.val();
                // Births are never 0: `failed` reads 0 for a slot never failed.
                self.birth_ctr.d.next = self.birth_ctr.q.val() + 1;
                if self.birth_ctr.q.val() == self.last_birth.val() {
                    self.birth_ctr.d.next = 1.into();
                }
                self.ctl.d.next = self.ctl_d_init.val();
                if !self.out_table.m_rsp_inserted.val() {
                    // Already in flight, or no room in the table's set.
                    self.c_status.d.next = self.status_bad_descriptor.val();
                    self.ctl.d.next = self.ctl_d_cpl.val();
                }
            }
        } else if self.ctl.q.val() == self.ctl_d_init.val() {
            self.descs.write_enable.next = self.sched.s_upd_ready.val();
            self.progress.write_enable.next = self.sched.s_upd_ready.val();
            self.sched.s_upd_valid.next = true;
            if self.sched.s_upd_ready.val() {
                self.in_flight.d.next = self.in_flight.q.val() + 1;
                self.ctl.d.next = self.ctl_idle.val();
            }
        } else if (self.ctl.q.val() == self.ctl_d_cpl.val())
            | (self.ctl.q.val() == self.ctl_p_cpl.val())
        {
            // Left below, once the completion is loaded for the writer.
        } else if self.ctl.q.val() == self.ctl_p_pick.val() {
            self.sched.s_pick_valid.next = true;
            if self.sched.s_pick_ready.val() {
                self.ctl.d.next = self.ctl_p_wait.val();
            }
        } else if self.ctl.q.val() == self.ctl_p_wait.val() {
            if self.sched.m_pick_valid.val() {
                self.c_slot.d.next = self.sched.m_pick_slot.val().get_bits::<SLOT_BITS>(0);
                self.ctl.d.next = self.ctl_p_read.val();
                if !self.sched.m_pick_found.val() {
                    self.ctl.d.next = self.ctl_idle.val();
                }
            }
        } else if self.ctl.q.val() == self.ctl_p_read.val() {
            // The RAMs read `c_slot` at this edge.
            self.ctl.d.next = self.ctl_p_data.val();
        } else if self.ctl.q.val() == self.ctl_p_data.val() {
            self.c_desc.d.next = self.descs.read_data.val();
            self.c_live.d.next = self.read_open.val();
            self.c_sent.d.next = self.progress.read_data.val().get_bits::<20>(0);
            self.c_granted.d.next = self.progress.read_data.val().get_bits::<20>(20);
            self.c_prio.d.next = self.progress.read_data.val().get_bits::<3>(40);
            self.c_birth.d.next = self.progress.read_data.val().get_bits::<32>(43);
            self.c_ulevel.d.next = self.progress.read_data.val().get_bits::<3>(75);
            self.c_version.d.next = self.progress.read_data.val().get_bits::<16>(78);
            self.c_sent_max.d.next = self.progress.read_data.val().get_bits::<20>(94);
            self.c_rend.d.next = self.progress.read_data.val().get_bits::<20>(114);
            self.c_failed.d.next =
                self.failed.read_data.val() == self.progress.read_data.val().get_bits::<32>(43);
            self.ctl.d.next = self.ctl_p_issue.val();
        } else if self.ctl.q.val() == self.ctl_p_issue.val() {
            if self.c_failed.q.val() {
                // A payload read of this message failed: send no more of it.
                self.c_status.d.next = self.status_dma_error.val();
                self.c_granted.d.next = self.c_sent.q.val();
                self.ctl.d.next = self.ctl_p_sched.val();
            } else if !self.c_live.q.val() {
                // Its endpoint has gone (see E_DECIDE): no more of it.
                self.c_release.d.next = true;
                self.c_granted.d.next = self.c_sent.q.val();
                self.ctl.d.next = self.ctl_p_sched.val();
            } else {
                self.m_dma_rd_req_valid.next = true;
                self.m_dma_rd_req_addr.next = self
                    .c_desc
                    .q
                    .val()
                    .get_bits::<64>(self.at_buffer.val().index())
                    + bit_cast::<64, 20>(self.c_sent.q.val());
                self.m_dma_rd_req_len.next = bit_cast::<16, 20>(self.pkt_len.val());
                self.m_dma_rd_req_tag.next =
                    self.tag_payload.val() + bit_cast::<8, JOB_BITS>(self.j_tail.q.val());
                if self.m_dma_rd_req_ready.val() {
                    self.push_job.next = true;
                    self.ack_take.d.next = true;
                    self.c_pkt_len.d.next = self.pkt_len.val().get_bits::<11>(0);
                    self.c_pkt_retx.d.next = self.retx.val();
                    self.c_sent.d.next = self.pkt_end.val();
                    if self.retx.val() {
                        self.retransmitted_count.d.next = self.retransmitted_count.q.val() + 1;
                        if self.pkt_end.val() == self.c_rend.q.val() {
                            // The range resent: on from where sending was.
                            self.c_sent.d.next = self.c_sent_max.q.val();
                        }
                    } else {
                        self.c_sent_max.d.next = self.pkt_end.val();
                        self.c_first_done.d.next = self.pkt_end.val() == self.c_len20.val();
                    }
                    self.ctl.d.next = self.ctl_p_sched.val();
                }
            }
        } else if self.ctl.q.val() == self.ctl_p_sched.val() {
            self.progress.write_enable.next = self.sched.s_upd_ready.val();
            self.sched.s_upd_valid.next = true;
            self.sched.s_upd_sent.next = !self.c_failed.q.val() & !self.c_release.q.val();
            self.sched.s_upd_sent_bytes.next = self.c_pkt_len.q.val();
            if self.sched.s_upd_ready.val() {
                self.ctl.d.next = self.ctl_idle.val();
                // Its silence starts again with every packet: once all is
                // sent, it lingers (for RESENDs) until released.
                self.linger.s_watch_valid.next =
                    !self.c_release.q.val() & !self.c_failed.q.val() & !self.c_pkt_retx.q.val();
                if self.c_failed.q.val() | self.c_release.q.val() {
                    self.ctl.d.next = self.ctl_p_remove.val();
                }
            }
        } else if self.ctl.q.val() == self.ctl_p_remove.val() {
            self.out_table.s_req_valid.next = true;
            self.out_table.s_req_op.next = self.op_remove.val();
            if !self.c_live.q.val() {
                // By slot: the key is made with the endpoint's port, which
                // may have changed.
                self.out_table.s_req_op.next = self.op_remove_slot.val();
                self.out_table.s_req_key.next =
                    bit_cast::<KEY_BITS, SLOT_BITS>(self.c_slot.q.val());
            }
            if self.out_table.s_req_ready.val() {
                self.ctl.d.next = self.ctl_p_remove_wait.val();
            }
        } else if self.ctl.q.val() == self.ctl_p_remove_wait.val() {
            if self.out_table.m_rsp_valid.val() {
                self.ctl.d.next = self.ctl_idle.val();
                // (Not there: an expiry offered before the message was
                // released another way. One completion per message.)
                if self.out_table.m_rsp_hit.val() {
                    self.in_flight.d.next = self.in_flight.q.val() - 1;
                    self.linger.s_watch_valid.next = true;
                    self.linger.s_watch_live.next = false;
                    if (self.c_kind.q.val() == self.ev_expired.val()) & self.c_release.q.val() {
                        self.expired_count.d.next = self.expired_count.q.val() + 1;
                    }
                    if self.c_live.q.val() {
                        self.ctl.d.next = self.ctl_p_cpl.val();
                    }
                    if self.c_opcode.val() == self.op_response.val() {
                        self.ctl.d.next = self.ctl_p_served.val();
                    }
                }
            }
        }

        // The job the control machine queues.
        for k in 0..JOBS {
            if self.push_job.val() & (self.j_tail.q.val() == self.job_index[k].val()) {
                self.j_desc[k].d.next = self.c_desc.q.val();
                self.j_slot[k].d.next = self.c_slot.q.val();
                self.j_offset[k].d.next = self.c_sent.q.val();
                self.j_len[k].d.next = self.pkt_len.val().get_bits::<11>(0);
                self.j_level[k].d.next = self.c_prio.q.val();
                if self.c_sent.q.val() < self.cfg_unsched_bytes.val() {
                    self.j_level[k].d.next = self.c_ulevel.q.val();
                }
                self.j_version[k].d.next = self.c_version.q.val();
                self.j_ack_id[k].d.next = 0.into();
                self.j_ack_port[k].d.next = 0.into();
                if self.peers.a_hit.val() {
                    self.j_ack_id[k].d.next = self.peers.a_client_id.val();
                    self.j_ack_port[k].d.next = self.peers.a_server_port.val();
                }
                self.j_incoming[k].d.next = self.c_granted.q.val();
                self.j_retransmit[k].d.next = self.retx.val();
                self.j_birth[k].d.next = self.c_birth.q.val();
            }
        }

        // ---- the streamer ----
        self.hdr_valid.next = false;
        self.m_pay_tvalid.next = false;
        self.pay_head.next = self.pay_data[0].q.val();
        self.pay_head_valid.next = self.pay_valid[0].q.val();
        if self.pay_rd.q.val() {
            self.pay_head.next = self.pay_data[1].q.val();
            self.pay_head_valid.next = self.pay_valid[1].q.val();
        }
        self.pay_pop.next = false;
        self.m_pay_tdata.next = self.pay_head.val().get_bits::<512>(0);
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
        self.frame_error.next = self.tail_error.q.val();
        // Headers: built ahead, one job after another, while earlier frames
        // stream (the core's header slice holds what the framer has not
        // taken yet), so the next frame's header waits at the framer when the
        // previous frame's last beat leaves.
        self.hdr_valid.next =
            (self.j_hdr_count.q.val() != self.j_count.q.val()) & (self.h_ahead.q.val() < 2);
        if self.hdr_valid.val() {
            self.j_hdr.d.next = self.j_hdr.q.val() + 1;
            if self.j_hdr.q.val() == self.job_last.val() {
                self.j_hdr.d.next = 0.into();
            }
        }
        if self.hdr_valid.val() & !self.hdr_taken.val() {
            self.h_ahead.d.next = self.h_ahead.q.val() + 1;
        } else if !self.hdr_valid.val() & self.hdr_taken.val() {
            self.h_ahead.d.next = self.h_ahead.q.val() - 1;
        }
        // Payload: the head job's, beat by beat; the framer takes it only
        // after the job's header, so nothing here waits for the header.
        self.beat_error.next = self.seg_error.q.val() | self.pay_head.val().get_bit(512);
        if self.st.q.val() == self.st_idle.val() {
            if self.j_count.q.val() != 0 {
                self.remaining.d.next = bit_cast::<16, 11>(self.sj_len.val());
                self.seg_error.d.next = false;
                self.st.d.next = self.st_stream.val();
            }
        } else if self.st.q.val() == self.st_stream.val() {
            // Payload beats go from the ring to the framer.
            self.m_pay_tvalid.next = self.pay_head_valid.val();
            if self.pay_head_valid.val() & self.m_pay_tready.val() {
                self.pay_pop.next = true;
                self.seg_error.d.next = self.beat_error.val();
                self.remaining.d.next = self.remaining.q.val() - 64;
                if self.remaining.q.val() <= 64 {
                    // The job's last beat: the queue lets it go, and its
                    // error stays for the frame's last beat out.
                    self.remaining.d.next = 0.into();
                    self.tail_error.d.next = self.beat_error.val();
                    self.failed.write_enable.next = self.beat_error.val();
                    self.st.d.next = self.st_idle.val();
                    self.pop_job.next = true;
                }
            }
        }

        // Header fields for the builder, from the job at `j_hdr`.
        self.hdr_dst_mac.next = (bit_cast::<48, 8>(
            self.h_desc
                .val()
                .get_bits::<8>(self.at_peer_mac.val().index()),
        ) << 40)
            | (bit_cast::<48, 8>(
                self.h_desc
                    .val()
                    .get_bits::<8>(self.at_peer_mac.val().index() + 8),
            ) << 32)
            | (bit_cast::<48, 8>(
                self.h_desc
                    .val()
                    .get_bits::<8>(self.at_peer_mac.val().index() + 16),
            ) << 24)
            | (bit_cast::<48, 8>(
                self.h_desc
                    .val()
                    .get_bits::<8>(self.at_peer_mac.val().index() + 24),
            ) << 16)
            | (bit_cast::<48, 8>(
                self.h_desc
                    .val()
                    .get_bits::<8>(self.at_peer_mac.val().index() + 32),
            ) << 8)
            | bit_cast::<48, 8>(
                self.h_desc
                    .val()
                    .get_bits::<8>(self.at_peer_mac.val().index() + 40),
            );
        self.hdr_src_mac.next = self.local_mac.val();
        self.hdr_src_ip.next = self.local_ip.val();
        self.hdr_dst_ip.next = self
            .h_desc
            .val()
            .get_bits::<32>(self.at_peer_ip.val().index());
        self.hdr_level.next = self.h_level.val();
        self.hdr_packet_type.next = self.type_data.val();
        self.hdr_sport.next = 0.into();
        for i in 0..ENDPOINTS {
            if self
                .h_desc
                .val()
                .get_bits::<2>(self.at_endpoint.val().index())
                .index()
                == i
            {
                self.hdr_sport.next = self.ep_port[i].val();
            }
        }
        self.hdr_dport.next = self
            .h_desc
            .val()
            .get_bits::<16>(self.at_peer_port.val().index());
        self.hdr_sender_id.next = self
            .h_desc
            .val()
            .get_bits::<64>(self.at_rpc_id.val().index());
        self.hdr_data_offset.next = bit_cast::<32, 20>(self.h_offset.val());
        self.hdr_message_length.next = self
            .h_desc
            .val()
            .get_bits::<32>(self.at_length.val().index());
        self.hdr_incoming.next = bit_cast::<32, 20>(self.h_incoming.val());
        self.hdr_cutoff_version.next = self.h_version.val();
        self.hdr_ack_client_id.next = self.h_ack_id.val();
        self.hdr_ack_server_port.next = self.h_ack_port.val();
        self.hdr_payload_len.next = bit_cast::<16, 11>(self.h_len.val());
        self.hdr_retransmit.next = self.h_retransmit.val();

        // ---- completions (a bad descriptor, a message released or
        // failed): built into an output register, offered from there ----
        self.cpl_desc.next = self.c_desc.q.val();
        self.cpl_status.next = self.c_status.q.val();
        self.cpl_load.next = false;
        if (!self.cpl_valid.q.val() | self.m_cpl_ready.val())
            & ((self.ctl.q.val() == self.ctl_d_cpl.val())
                | (self.ctl.q.val() == self.ctl_p_cpl.val()))
        {
            self.cpl_load.next = true;
            self.ctl.d.next = self.ctl_idle.val();
        }
        self.record.next = (bit_cast::<512, 8>(self.kind_tx_done.val()) << self.cpl_kind.val())
            | (bit_cast::<512, 8>(self.cpl_status.val()) << self.cpl_status_at.val())
            | (bit_cast::<512, 16>(
                self.cpl_desc
                    .val()
                    .get_bits::<16>(self.at_peer_port.val().index()),
            ) << self.cpl_peer_port.val())
            | (bit_cast::<512, 32>(
                self.cpl_desc
                    .val()
                    .get_bits::<32>(self.at_length.val().index()),
            ) << self.cpl_length.val())
            | (bit_cast::<512, 64>(
                self.cpl_desc
                    .val()
                    .get_bits::<64>(self.at_rpc_id.val().index()),
            ) << self.cpl_rpc_id.val())
            | (bit_cast::<512, 32>(
                self.cpl_desc
                    .val()
                    .get_bits::<32>(self.at_peer_ip.val().index()),
            ) << self.cpl_peer_ip.val())
            | (bit_cast::<512, 48>(
                self.cpl_desc
                    .val()
                    .get_bits::<48>(self.at_peer_mac.val().index()),
            ) << self.cpl_peer_mac.val())
            | (bit_cast::<512, 64>(
                self.cpl_desc
                    .val()
                    .get_bits::<64>(self.at_cookie.val().index()),
            ) << self.cpl_cookie.val());
        if self.m_cpl_ready.val() {
            self.cpl_valid.d.next = false;
        }
        if self.cpl_load.val() {
            self.cpl_valid.d.next = true;
            self.cpl_record.d.next = self.record.val();
            self.cpl_endpoint.d.next = self
                .cpl_desc
                .val()
                .get_bits::<2>(self.at_endpoint.val().index());
        }
        self.m_cpl_valid.next = self.cpl_valid.q.val();
        self.m_cpl_record.next = self.cpl_record.q.val();
        self.m_cpl_endpoint.next = self.cpl_endpoint.q.val();

        // ---- queue bookkeeping ----
        for i in 0..2 {
            self.pay_valid[i].clock.next = self.clock.val();
            self.pay_valid[i].d.next = self.pay_valid[i].q.val();
            self.pay_data[i].clock.next = self.clock.val();
            self.pay_data[i].d.next = self.pay_data[i].q.val();
        }
        if self.pay_pop.val() {
            self.pay_rd.d.next = !self.pay_rd.q.val();
            if self.pay_rd.q.val() {
                self.pay_valid[1].d.next = false;
            } else {
                self.pay_valid[0].d.next = false;
            }
        }
        // A push goes into a free entry (the port's ready), never the one popped.
        if self.pay_push.val() {
            self.pay_wr.d.next = !self.pay_wr.q.val();
            if self.pay_wr.q.val() {
                self.pay_valid[1].d.next = true;
                self.pay_data[1].d.next = self.pay_in.val();
            } else {
                self.pay_valid[0].d.next = true;
                self.pay_data[0].d.next = self.pay_in.val();
            }
        }
        if self.hdr_valid.val() & !self.pop_job.val() {
            self.j_hdr_count.d.next = self.j_hdr_count.q.val() + 1;
        } else if !self.hdr_valid.val() & self.pop_job.val() {
            self.j_hdr_count.d.next = self.j_hdr_count.q.val() - 1;
        }
        if self.push_job.val() {
            self.j_tail.d.next = self.j_tail.q.val() + 1;
            if self.j_tail.q.val() == self.job_last.val() {
                self.j_tail.d.next = 0.into();
            }
        }
        if self.pop_job.val() {
            self.j_head.d.next = self.j_head.q.val() + 1;
            if self.j_head.q.val() == self.job_last.val() {
                self.j_head.d.next = 0.into();
            }
        }
        if self.push_job.val() & !self.pop_job.val() {
            self.j_count.d.next = self.j_count.q.val() + 1;
        } else if !self.push_job.val() & self.pop_job.val() {
            self.j_count.d.next = self.j_count.q.val() - 1;
        }
        if self.push_event.val() {
            self.eq_tail.d.next = self.eq_tail.q.val() + 1;
        }
        if self.pop_event.val() {
            self.eq_head.d.next = self.eq_head.q.val() + 1;
        }
        if self.push_event.val() & !self.pop_event.val() {
            self.eq_count.d.next = self.eq_count.q.val() + 1;
        } else if !self.push_event.val() & self.pop_event.val() {
            self.eq_count.d.next = self.eq_count.q.val() - 1;
        }

        self.grants_unknown.next = self.grants_unknown_count.q.val();
        self.events_dropped.next = self.events_dropped_count.q.val();
        self.resends_unknown.next = self.resends_unknown_count.q.val();
        self.packets_retransmitted.next = self.retransmitted_count.q.val();
        self.lingers_expired.next = self.expired_count.q.val();
        self.messages_in_flight.next = self.in_flight.q.val();

        if self.reset.val() {
            self.fetch.d.next = 0.into();
            self.next_endpoint.d.next = 0.into();
            self.ack_take.d.next = false;
            self.ctl.d.next = self.ctl_idle.val();
            self.st.d.next = self.st_idle.val();
            self.j_head.d.next = 0.into();
            self.j_tail.d.next = 0.into();
            self.j_count.d.next = 0.into();
            self.j_hdr.d.next = 0.into();
            self.j_hdr_count.d.next = 0.into();
            self.h_ahead.d.next = 0.into();
            self.tail_error.d.next = false;
            self.pay_valid[0].d.next = false;
            self.pay_valid[1].d.next = false;
            self.pay_wr.d.next = false;
            self.pay_rd.d.next = false;
            self.eq_head.d.next = 0.into();
            self.eq_tail.d.next = 0.into();
            self.eq_count.d.next = 0.into();
            self.in_flight.d.next = 0.into();
            self.cpl_valid.d.next = false;
            self.birth_ctr.d.next = 1.into();
            self.grants_unknown_count.d.next = 0.into();
            self.events_dropped_count.d.next = 0.into();
            self.resends_unknown_count.d.next = 0.into();
            self.retransmitted_count.d.next = 0.into();
            self.expired_count.d.next = 0.into();
            self.doorbells_beyond_count.d.next = 0.into();
            for i in 0..ENDPOINTS {
                self.consumer[i].d.next = 0.into();
            }
        }
        for i in 0..ENDPOINTS {
            if self.ep_restart[i].val() {
                self.consumer[i].d.next = 0.into();
            }
        }
    }
}

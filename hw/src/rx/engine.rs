//! RX engine: delivers the payload of accepted DATA frames into the receiving
//! endpoint's bpages, in any order, keeps each message's record of what
//! arrived, tells the grant scheduler, and completes each message when its
//! last byte is in. Control packets are classified and counted.
//!
//! DESIGN NOTES
//! ------------
//! Input: accepted frames from the RX FIFO, whole (the parser has checked
//! them; bad ones never arrive). Three parts work at once, each on its own
//! frame, in frame order:
//! - the header stage (the state machine below) takes a frame's beats 0
//!   and 1 and decides everything about the frame, one frame at a time;
//! - the pump takes the frame's remaining beats off the stream meanwhile:
//!   a DATA frame's beats from beat 1 on into `pay` (a 32-beat FIFO), a
//!   control frame's padding nowhere;
//! - the writer takes jobs from the header stage (one waits at most) and
//!   writes a job's beats from `pay` to the DMA write port, or skips them
//!   (a dropped DATA frame: every DATA frame gets a job, so `pay` and the
//!   jobs stay in step).
//! So the header steps of the next packet overlap the payload of this one:
//! a packet costs its beats (24 for an MTU frame) plus about one cycle,
//! whatever RPC it is of. The stage takes the next frame only once the pump
//! is done with this one; an expiry or a released request (below, between
//! frames) waits for the writer to finish; a message's completion waits for
//! its last payload beat to be out (COMPLETE must not pass it).
//! The header stage:
//!   HEAD      take beats 0 and 1; the header window they make gives every
//!             field (`HeaderFields`); a DATA frame's beat 1 (its lanes
//!             26.. are the first payload bytes) also goes to `pay`. A
//!             one-beat frame is a control packet.
//!   DECIDE    control packets: GRANT, RESEND and ACK go to the TX engine
//!             (which owns outbound messages) as sender events; a NEED_ACK
//!             is looked up and, unless its RPC is still here (its response
//!             not all in), goes to the TX engine too, which answers it with
//!             an ACK unless it still holds the request (no packet of the
//!             response has come: HomaModule's client, too, acks only an RPC
//!             it no longer has); CUTOFFS go to the sender side (the peer's cutoffs set its
//!             unscheduled priority); the rest (BUSY, RPC_UNKNOWN, FREEZE)
//!             are counted together, and BUSY (the server is alive) and
//!             RPC_UNKNOWN (the peer has no such RPC) go to the TX engine
//!             too. A DATA packet's ack field, when set, goes to the TX
//!             engine too (the server's response it names is done with).
//!             DATA: an open endpoint's port, a message of 1 to 1,000,000
//!             bytes, payload inside it; and not a late copy of one of the
//!             last `RECENT` messages to leave the table complete (a
//!             response when it completes, a request when its response is
//!             released: see COMPLETE): their keys are remembered, else the
//!             copy would open a new RPC (a response that never completes, a
//!             request run twice).
//!             A packet of the RPC whose packet came last goes straight on
//!             to CLASSIFY: its slot and record are still in registers.
//!             A control packet that is not looked up (all but NEED_ACK and
//!             RESEND) ends here, and DECIDE does HEAD0's work for the next
//!             frame in the same cycle (`take_head`): a two-beat GRANT costs
//!             2 cycles, HEAD1 and DECIDE, not 3.
//!   LOOKUP    INSERT the RPC (peer IP, peer port, local port, local id =
//!             sender_id ^ 1) in the RPC table: its slot, new or found; the
//!             state RAM reads the slot as the answer comes. (A NEED_ACK or
//!             RESEND is only looked up; a RESEND for a request delivered
//!             here, in service, refreshes its resend timer entry: REFRESH.)
//!   STATE     the slot's record. A new message takes its bpages now, all
//!             ceil(length / 64 KiB) of them (ALLOC, two cycles each; if the
//!             pool has fewer, the packet is dropped and the RPC forgotten),
//!             and its peer is written where GRANTs are built; a new
//!             response tells the TX engine that the request it answers is
//!             done with (the server has it all); if its DATA
//!             carries a cutoff version other than ours, the peer gets our
//!             CUTOFFS (once per new message: HomaModule sends at most one
//!             per peer per timer tick).
//!   CLASSIFY  the packet's range [o, o + len) against the record: already
//!             all in (a duplicate: dropped), partly in (dropped: senders
//!             resend whole packets, so this is a broken sender), or new:
//!             merged (MERGE) with the range it extends, or both it joins,
//!             or opened as a new gap range. Meanwhile the page list gives
//!             the bpages of the packet's first and last byte.
//!   EVENT     the record is written and the grant scheduler hears (slot,
//!             length, bytes received, the packet's `incoming`) before the
//!             payload is written, so a GRANT does not wait for the DMA;
//!             the writer gets its job (once the one before is taken).
//!   (writer)  DMA-write the payload at rx_area + bpage * 64 KiB + offset
//!             within it. The DMA write port takes the address of lane 0
//!             with byte strobes, so each frame beat goes out as it is, its
//!             payload lanes enabled: no realignment. A beat that straddles a
//!             bpage boundary goes out twice, once per bpage, each with its
//!             own lanes.
//!   WAIT_WRITER  (the last packet of a message) wait until the writer
//!             is done, then COMPLETE.
//!   COMPLETE  all bytes in: read the message's bpage list (17 cycles, for
//!             every message: a shortcut for one-bpage messages hung a
//!             host-lib run and was taken out), hand the completion over,
//!             remember its key. A request stays in the table, complete,
//!             until the TX engine releases its response (SERVED_REMOVE
//!             then REMOVEs it, between frames): a copy of it (a duplicate
//!             from the network, a late retransmission) is then a
//!             duplicate, not a new RPC, and refreshes its resend timer
//!             entry (which asks for nothing: an empty range); without
//!             either for timeout_ticks it expires, its slot freed and its
//!             bpages left to the host. A response is REMOVEd: it
//!             completes the card's RPC as a client, and the server is owed
//!             an ack, sent at once as an ACK packet (so the server can free
//!             the response now) and again in the next DATA to that peer
//!             (HomaModule's way; either may be lost).
//!   EXPIRE    between frames, ahead of the next one: a message the resend
//!             timer found silent for timeout_ticks is forgotten
//!             (EXP_REMOVE .. EXP_CPL). The RPC table frees its slot by
//!             number and names its key; the record gives its length, so its
//!             ceil(length / 64 KiB) bpages are read from the page list and
//!             pushed back to its endpoint's pool (the endpoint and
//!             generation its record names, if that endpoint has not closed
//!             since; else the pages were the old RX area's and go nowhere);
//!             the grant scheduler drops it; and a response (the card's RPC
//!             as a client) of a live endpoint completes with status
//!             TIMEOUT, so the waiting call fails instead of hanging. (A
//!             delivered request only loses its slot: see COMPLETE.) A
//!             request is dropped without a word to the host, which never
//!             saw it (HomaModule's server does the same). About 2 cycles
//!             per bpage plus 8; `INBOUND_EXPIRED` counts them.
//!
//! Endpoints that close: every record names the endpoint and generation it
//! began in (`EndpointBlock`). A packet for a record whose endpoint has
//! closed since (or closed and opened again, on this port or another) is
//! dropped as for no endpoint (STATE), a RESEND for it is answered as for
//! an RPC not here (REFRESH), and its expiry gives its pages to no pool.
//!
//! The record of what arrived (per slot, in `rpc_state`): the length, the
//! prefix (bytes [0, prefix) all in), the bytes received, and up to `GAPS`
//! ranges [start, end) beyond the prefix, unordered, disjoint and never
//! adjacent (a packet that touches one extends it). This is HomaModule's gap
//! list turned inside out (it lists what is missing; we list what is there,
//! which is the same information), and it is what the RESEND logic of the
//! loss-recovery issue reads: the first missing range is [prefix, min start).
//! A packet that would open a fifth range is dropped and counted
//! (`drop_bad_range`); its sender resends it once the gaps before it fill.
//! Four ranges hold any reordering in which fewer than five holes are open at
//! once, which covers a switch's priority queues reordering a message's
//! packets against each other.
//!
//! Why ranges rather than a bitmap over a packet grid: HomaModule cuts
//! packets at the granted offset and at the end of its unscheduled bytes, so
//! a message's packets are not all the same size and a grid would misplace
//! some; ranges are exact for any cut.
//!
//! Timing: what a decision needs is registered a step before it is made,
//! where the value is already known, so no decision waits for wide compares
//! or adders in the same cycle: the endpoint a frame is for and whether it
//! is of the last RPC or of a recent one are compared in HEAD0 with the
//! beat coming in (the key and the port lie in beat 0) and combined in
//! HEAD1; the packet's range within its message is registered every cycle
//! from the window (valid from the cycle after DECIDE); the writer works out
//! a job's lanes (its last beat, the bpage boundary's beat and lanes, and
//! whether that beat goes out in two parts) as it takes the job, so each
//! beat's strobes are a few compares of `beat`. (`homa-nic synth --block
//! rx_engine`: 11 levels, from 22.)
//!
//! Rates (`cargo bench -p homa-hw-sim --bench transport`, frames back to
//! back at the port): MTU packets of 8 messages in turn, 29.0 cycles each
//! against 30.76 on a 100 Gb/s wire (33 before the pump and the writer,
//! when the header steps of a packet of another RPC, 9 cycles with the
//! RPC table's answer, came between payloads). Not yet line rate: small
//! messages, 35 cycles for a one-packet one against 4.28 on the wire for
//! 100 bytes (ALLOC, the wait for its payload, CPL_PAGES' 17 cycles,
//! COMPLETE and REMOVE all run in the header stage). 2-beat GRANTs: 2 cycles
//! each (HEAD1, then DECIDE with the next frame's HEAD0; 2.06 measured, 2.82
//! when DECIDE had a cycle of its own), which is the port's rate, 2 beats a
//! frame; the wire's is 1.82, so a long burst of them at line rate still
//! fills the MAC side's crossing FIFO. The header window is still read from beats 0 and 1 here, not
//! from the parser's fields (the FIFO's meta channel could carry them).

use rust_hdl::prelude::*;

use crate::csr::endpoint_block::GENERATION_BITS;
use crate::host_abi::completion;
use crate::leaf::byte_swap::ByteSwap512;
use crate::leaf::header_fields::HeaderFields;
use crate::leaf::stream_fifo::StreamFifo;
use crate::regmap::endpoint;
use crate::rx::bpage_pool::FREE_BITS;
use crate::rx::rpc_table::{RpcOp, KEY_BITS, SLOT_BITS};
use crate::tx::engine::{sender_event, CUTOFF_VERSION};
use homa_wire::layout::{data, HOMA_OFFSET};
use homa_wire::PacketType;

const ENDPOINTS: usize = endpoint::COUNT;

/// Where DATA's payload starts in a frame: byte 90, lane 26 of beat 1.
pub const PAYLOAD_START: u64 = (HOMA_OFFSET + data::HEADER_LEN) as u64;
/// Largest message the card receives (HomaModule's limit).
pub const MAX_MESSAGE_BYTES: u32 = 1_000_000;
/// Bits of a beat in the payload FIFO: tdata and tlast.
const PAY_BITS: usize = 513;
/// Gap ranges a message's record holds beyond its prefix.
pub const GAPS: usize = 4;
/// Keys of the messages that left the table complete last, remembered (late
/// duplicates).
pub const RECENT: usize = 8;
/// Bits of a byte offset or count within a message.
pub const LEN_BITS: usize = 20;
/// Bits of the page-list RAM's address: slot, then the bpage's index in the
/// message (0..15).
pub const PAGE_ADDR_BITS: usize = SLOT_BITS + 4;
/// Bits of a bpage index (`completion::BPAGE_INDEX_BITS`).
pub const BPAGE_BITS: usize = 12;
/// Record layout: length [19:0], prefix [39:20], received [59:40], then per
/// gap range k at 60 + 41 k: valid, start [20 bits], end [20 bits]; then
/// the endpoint the message arrived on [2 bits] and that endpoint's
/// generation [GENERATION_BITS] at its first packet (written as 224 and 226
/// in the logic, checked in `default`).
pub const RECORD_BITS: usize = RECORD_ENDPOINT_AT + 2 + GENERATION_BITS;
const RECORD_ENDPOINT_AT: usize = 60 + 41 * GAPS;

mod state {
    pub const HEAD0: u64 = 0;
    pub const HEAD1: u64 = 1;
    pub const DECIDE: u64 = 2;
    pub const LOOKUP: u64 = 3;
    pub const LOOKUP_WAIT: u64 = 4;
    pub const STATE: u64 = 5;
    pub const ALLOC: u64 = 6;
    pub const ALLOC_WAIT: u64 = 7;
    pub const CLASSIFY: u64 = 8;
    pub const MERGE: u64 = 9;
    pub const EVENT: u64 = 10;
    pub const WAIT_WRITER: u64 = 11;
    pub const CPL_PAGES: u64 = 12;
    pub const COMPLETE: u64 = 13;
    pub const REMOVE: u64 = 14;
    pub const REMOVE_WAIT: u64 = 15;
    pub const DRAIN: u64 = 16;
    pub const EXP_REMOVE: u64 = 17;
    pub const EXP_REMOVE_WAIT: u64 = 18;
    pub const EXP_RECORD: u64 = 19;
    pub const EXP_PAGE: u64 = 20;
    pub const EXP_PUSH: u64 = 21;
    pub const EXP_EVENT: u64 = 22;
    pub const EXP_CPL: u64 = 23;
    pub const SERVED_REMOVE: u64 = 24;
    pub const SERVED_WAIT: u64 = 25;
    pub const REFRESH: u64 = 26;
}

fn c5(v: u64) -> Constant<Bits<5>> {
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
    /// Per endpoint: its port (0: closed), its generation (PORT writes so
    /// far, `EndpointBlock`), and a pulse when its port is written.
    pub ep_port: [Signal<In, Bits<16>>; ENDPOINTS],
    pub ep_generation: [Signal<In, Bits<GENERATION_BITS>>; ENDPOINTS],
    pub ep_restart: [Signal<In, bool>; ENDPOINTS],
    /// The endpoint receiving, and its RX area (muxed by the core).
    pub sel_endpoint: Signal<Out, Bits<2>>,
    pub sel_rx_area: Signal<In, Bits<64>>,
    /// The bpage pool, showing `sel_endpoint`'s next page and how many it
    /// holds.
    pub bpage_valid: Signal<In, bool>,
    pub bpage_index: Signal<In, Bits<16>>,
    pub bpage_free: Signal<In, Bits<FREE_BITS>>,
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
    /// REMOVE_SLOT's answer: the key the slot held.
    pub s_rpc_key: Signal<In, Bits<KEY_BITS>>,
    /// Expiries from the resend timer: the slot of a message silent for
    /// timeout_ticks (taken between frames).
    pub s_expire_valid: Signal<In, bool>,
    pub s_expire_ready: Signal<Out, bool>,
    pub s_expire_slot: Signal<In, Bits<SLOT_BITS>>,
    /// Responses the TX engine released: the request each answers, kept
    /// since its delivery, is forgotten (its key here).
    pub s_served_valid: Signal<In, bool>,
    pub s_served_ready: Signal<Out, bool>,
    pub s_served_key: Signal<In, Bits<KEY_BITS>>,
    /// Bpages of an expired message, back to its endpoint's pool (shares
    /// the pool's push port with the host: ready when the host is not
    /// pushing).
    pub m_bpage_return_valid: Signal<Out, bool>,
    pub m_bpage_return_ready: Signal<In, bool>,
    pub m_bpage_return_endpoint: Signal<Out, Bits<2>>,
    pub m_bpage_return_index: Signal<Out, Bits<16>>,
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
    /// Events to the grant scheduler: a DATA packet's bytes counted.
    pub m_evt_valid: Signal<Out, bool>,
    pub m_evt_ready: Signal<In, bool>,
    pub m_evt_slot: Signal<Out, Bits<SLOT_BITS>>,
    /// The message is gone (expired); the fields below unused.
    pub m_evt_remove: Signal<Out, bool>,
    pub m_evt_length: Signal<Out, Bits<LEN_BITS>>,
    pub m_evt_received: Signal<Out, Bits<LEN_BITS>>,
    pub m_evt_incoming: Signal<Out, Bits<LEN_BITS>>,
    /// GRANTs received, to the sender side (a strobe): the RPC's key as this
    /// card knows it, the granted offset and the priority.
    /// Sender events to the TX engine (a strobe; `tx::engine::sender_event`
    /// names the kinds): the outbound message's key there (peer IP, 0, local
    /// port, local id) and a GRANT's or RESEND's fields.
    pub m_sender_valid: Signal<Out, bool>,
    pub m_sender_kind: Signal<Out, Bits<3>>,
    pub m_sender_key: Signal<Out, Bits<KEY_BITS>>,
    pub m_sender_offset: Signal<Out, Bits<32>>,
    pub m_sender_length: Signal<Out, Bits<32>>,
    pub m_sender_priority: Signal<Out, Bits<3>>,
    /// The packet's sender, for an answer (an ACK, an RPC_UNKNOWN).
    pub m_sender_mac: Signal<Out, Bits<48>>,
    pub m_sender_port: Signal<Out, Bits<16>>,
    /// With a RESEND: this engine holds the RPC (a request coming in or
    /// in service, a response coming in).
    pub m_sender_known: Signal<Out, bool>,
    /// Send the server of a response just completed an ACK (a strobe): the
    /// server and our RPC id.
    pub m_ack_valid: Signal<Out, bool>,
    pub m_ack_mac: Signal<Out, Bits<48>>,
    pub m_ack_ip: Signal<Out, Bits<32>>,
    pub m_ack_server_port: Signal<Out, Bits<16>>,
    pub m_ack_local_port: Signal<Out, Bits<16>>,
    pub m_ack_client_id: Signal<Out, Bits<64>>,
    /// CUTOFFS received, to the sender side (a strobe): the peer, its
    /// cutoff version and its eight limits (`unsched_cutoffs[0]` on top).
    pub m_cutoffs_valid: Signal<Out, bool>,
    pub m_cutoffs_ip: Signal<Out, Bits<32>>,
    pub m_cutoffs_version: Signal<Out, Bits<16>>,
    pub m_cutoffs_limits: Signal<Out, Bits<256>>,
    /// A response delivered (a strobe): the server is owed an ack of our RPC.
    pub m_owed_ack_valid: Signal<Out, bool>,
    pub m_owed_ack_ip: Signal<Out, Bits<32>>,
    pub m_owed_ack_client_id: Signal<Out, Bits<64>>,
    pub m_owed_ack_server_port: Signal<Out, Bits<16>>,
    /// To the resend timer (a write strobe): after each packet taken, the
    /// range to ask for if the sender falls silent ([prefix, first gap) or
    /// [prefix, incoming)); `live` low when the message is gone.
    pub m_watch_valid: Signal<Out, bool>,
    pub m_watch_slot: Signal<Out, Bits<SLOT_BITS>>,
    pub m_watch_live: Signal<Out, bool>,
    pub m_watch_from: Signal<Out, Bits<LEN_BITS>>,
    pub m_watch_to: Signal<Out, Bits<LEN_BITS>>,
    /// The range ends at the sender's `incoming` (no gap), and the write is
    /// a new message's first (see `resend_timer`: lost GRANTs).
    pub m_watch_open: Signal<Out, bool>,
    pub m_watch_new: Signal<Out, bool>,
    /// A new inbound message's peer, for the GRANTs sent to it (a write
    /// strobe: one cycle, no back-pressure); `m_peer_stale_cutoffs`: its
    /// DATA carries another cutoff version than ours (send it CUTOFFS).
    pub m_peer_valid: Signal<Out, bool>,
    pub m_peer_stale_cutoffs: Signal<Out, bool>,
    pub m_peer_slot: Signal<Out, Bits<SLOT_BITS>>,
    pub m_peer_mac: Signal<Out, Bits<48>>,
    pub m_peer_ip: Signal<Out, Bits<32>>,
    /// The peer's port (our DATA's destination port in the GRANT).
    pub m_peer_port: Signal<Out, Bits<16>>,
    pub m_peer_local_port: Signal<Out, Bits<16>>,
    /// The RPC id as this card knows it (sender_id ^ 1), the GRANT's sender_id.
    pub m_peer_local_id: Signal<Out, Bits<64>>,
    /// Counters (wrap): messages delivered; GRANT and CUTOFFS packets
    /// received; other control packets (not served yet); DATA dropped for no
    /// open port, a full RPC table set, want of bpages, a bad length, as a
    /// duplicate (every byte already in), or for a bad range (partly in, past
    /// the message, or a fifth gap).
    pub messages: Signal<Out, Bits<32>>,
    pub grants_received: Signal<Out, Bits<32>>,
    pub cutoffs_received: Signal<Out, Bits<32>>,
    pub need_acks_received: Signal<Out, Bits<32>>,
    pub resends_received: Signal<Out, Bits<32>>,
    pub acks_received: Signal<Out, Bits<32>>,
    pub other_control: Signal<Out, Bits<32>>,
    pub drop_no_endpoint: Signal<Out, Bits<32>>,
    pub drop_rpc_full: Signal<Out, Bits<32>>,
    pub drop_no_bpage: Signal<Out, Bits<32>>,
    pub drop_too_big: Signal<Out, Bits<32>>,
    pub duplicates: Signal<Out, Bits<32>>,
    pub drop_bad_range: Signal<Out, Bits<32>>,
    /// Inbound messages forgotten after timeout_ticks of silence.
    pub inbound_expired: Signal<Out, Bits<32>>,

    swap: ByteSwap512,
    fields: HeaderFields,
    /// Per slot: the record of what arrived (see DESIGN NOTES).
    rpc_state: RAM<Bits<RECORD_BITS>, SLOT_BITS>,
    /// Per slot and bpage of the message (0..15): the bpage index.
    pages: RAM<Bits<BPAGE_BITS>, PAGE_ADDR_BITS>,
    state: DFF<Bits<5>>,
    win0: DFF<Bits<512>>,
    win1: DFF<Bits<512>>,
    /// A frame's beats past its header (beat 1 on) wait here for the
    /// writer: DATA's payload, 513 bits a beat (tdata, tlast).
    pay: StreamFifo<PAY_BITS>,
    /// The pump is moving the current frame's beats past beat 1 off the
    /// stream: into `pay` (`pump_data`: a DATA frame, so beat 1 went there
    /// too), or nowhere (a control frame's padding).
    pump_on: DFF<bool>,
    pump_data: DFF<bool>,
    /// The job the header stage hands the writer (one waits at most): where
    /// the frame's payload goes, or (`job_drop`) that its beats in `pay` are
    /// skipped.
    job_valid: DFF<bool>,
    job_drop: DFF<bool>,
    job_base0: DFF<Bits<64>>,
    job_base1: DFF<Bits<64>>,
    /// Frame byte where `page1` starts (0xffff: the packet is in one bpage).
    job_bound: DFF<Bits<16>>,
    /// Where the job's frame's payload ends (byte of the frame).
    job_end: DFF<Bits<16>>,
    /// The writer is on a job (`wr_drop`: skipping).
    wr_on: DFF<bool>,
    wr_drop: DFF<bool>,
    /// The job's lanes, worked out as the writer takes it (from `job_end`
    /// and `job_bound`) so that a beat's strobes and whether it goes out in
    /// two parts are a few compares of `beat`, not arithmetic: the payload's
    /// last beat and its lanes; the beat where `page1` starts and its lanes
    /// below that; the beat holds payload on both sides (`wr_split`: two
    /// writes), or some below it (`wr_bnd_low`: its first or only write goes
    /// to `page0`). A job that writes has at least one payload byte (DECIDE
    /// drops an empty DATA as a bad range), so its last byte is at lane 26
    /// of beat 1 or later.
    wr_last_beat: DFF<Bits<10>>,
    wr_last_mask: DFF<Bits<64>>,
    wr_bnd_beat: DFF<Bits<10>>,
    wr_bnd_mask: DFF<Bits<64>>,
    wr_split: DFF<bool>,
    wr_bnd_low: DFF<bool>,
    /// At handoff: the job's last payload byte, its lanes, where its bpage
    /// boundary falls in the beat, and what of the boundary beat is payload.
    h_last: Signal<Local, Bits<16>>,
    h_last_lane: Signal<Local, Bits<6>>,
    /// 63 - `h_last_lane`, in a signal of its own: an inversion inside a
    /// wider expression would be widened first in the Verilog.
    h_last_shift: Signal<Local, Bits<6>>,
    h_bnd_lane: Signal<Local, Bits<6>>,
    h_bnd_first: Signal<Local, bool>,
    h_bnd_last: Signal<Local, bool>,
    h_bnd_in: Signal<Local, bool>,
    h_from_below: Signal<Local, bool>,
    h_to_above: Signal<Local, bool>,
    /// The writer finishes its job at this edge (or has none).
    wr_free: Signal<Local, bool>,
    /// Neither a job waiting nor one being written.
    wr_idle: Signal<Local, bool>,
    /// The frame in HEAD1 is DATA (its type is in beat 0).
    /// (Registered in HEAD0 from the beat coming in: it gates the stream's
    /// ready in HEAD1.)
    is_data: DFF<bool>,
    /// The frame's header work ends in DECIDE (a control packet that is not
    /// looked up: not NEED_ACK or RESEND), so DECIDE may take the next
    /// frame's beat 0 (registered in HEAD0, as `is_data`).
    ends_in_decide: DFF<bool>,
    /// The header stage takes a frame's beat 0 this cycle.
    take_head: Signal<Local, bool>,
    /// The state after a frame's beat 0.
    head_next: Signal<Local, Bits<5>>,
    /// The beat at the head of `pay` ends its frame.
    pay_last: Signal<Local, bool>,
    /// Where a dropped frame goes on: DRAIN, to hand the writer a job that
    /// skips its beats in `pay` (a DATA frame), or straight to HEAD0.
    drop_to: Signal<Local, Bits<5>>,
    endpoint: DFF<Bits<2>>,
    slot: DFF<Bits<SLOT_BITS>>,
    inserted: DFF<bool>,
    /// The record being worked on.
    r_len: DFF<Bits<LEN_BITS>>,
    r_prefix: DFF<Bits<LEN_BITS>>,
    r_received: DFF<Bits<LEN_BITS>>,
    /// The record's endpoint and generation.
    r_endpoint: DFF<Bits<2>>,
    r_generation: DFF<Bits<GENERATION_BITS>>,
    r_valid: [DFF<bool>; GAPS],
    r_start: [DFF<Bits<LEN_BITS>>; GAPS],
    r_end: [DFF<Bits<LEN_BITS>>; GAPS],
    /// CLASSIFY's verdicts, registered for MERGE.
    k_covered: DFF<bool>,
    k_overlap: DFF<bool>,
    k_len_differs: DFF<bool>,
    k_at_prefix: DFF<bool>,
    k_left: [DFF<bool>; GAPS],
    k_right: [DFF<bool>; GAPS],
    /// Bpages the new message has taken so far (of `need_pages`).
    page_count: DFF<Bits<5>>,
    /// The bpage of the packet's first byte.
    page0: DFF<Bits<BPAGE_BITS>>,
    /// Address of lane 0 of frame beat 0 if the frame were laid out in
    /// `page0` (`base0`) or in `page1` (`base1`).
    base0: DFF<Bits<64>>,
    base1: DFF<Bits<64>>,
    /// WRITE: the part of a straddling beat that goes to `page1` is next.
    second_half: DFF<bool>,
    /// Index in the frame of the beat being written (1, 2, ...).
    beat: DFF<Bits<8>>,
    /// CPL_PAGES: the page-list entry being read; the list gathered.
    cpl_index: DFF<Bits<5>>,
    first_page: DFF<Bits<BPAGE_BITS>>,
    page_list: DFF<Bits<{ BPAGE_BITS * 15 }>>,
    /// The RPC of the last packet taken, whose slot (`slot`) and record
    /// (`r_*`) are still in registers: a packet of the same RPC skips the
    /// table lookup and the record read (5 cycles), the common case of a
    /// message's packets arriving back to back.
    last_key: DFF<Bits<KEY_BITS>>,
    last_valid: DFF<bool>,
    same_rpc: Signal<Local, bool>,
    /// Keys of the last `RECENT` messages to leave the table complete, and
    /// where the next goes.
    recent: [DFF<Bits<KEY_BITS>>; RECENT],
    recent_valid: [DFF<bool>; RECENT],
    recent_next: DFF<Bits<3>>,
    messages_count: DFF<Bits<32>>,
    grants_count: DFF<Bits<32>>,
    resends_count: DFF<Bits<32>>,
    acks_count: DFF<Bits<32>>,
    /// The key of the outbound message a GRANT, RESEND or ACK names, and
    /// the one a DATA packet's ack field names.
    sender_key: Signal<Local, Bits<KEY_BITS>>,
    ack_key: Signal<Local, Bits<KEY_BITS>>,
    ev_grant: Constant<Bits<3>>,
    ev_resend: Constant<Bits<3>>,
    ev_acked: Constant<Bits<3>>,
    ev_begun: Constant<Bits<3>>,
    ev_busy: Constant<Bits<3>>,
    ev_need_ack: Constant<Bits<3>>,
    ev_unknown: Constant<Bits<3>>,
    type_busy: Constant<Bits<8>>,
    type_rpc_unknown: Constant<Bits<8>>,
    type_resend: Constant<Bits<8>>,
    type_ack: Constant<Bits<8>>,
    cutoffs_count: DFF<Bits<32>>,
    need_acks_count: DFF<Bits<32>>,
    /// The frame is a NEED_ACK being looked up; a RESEND being looked up.
    need_ack: DFF<bool>,
    resend: DFF<bool>,
    /// The slot a RESEND found (REFRESH).
    resend_slot: DFF<Bits<SLOT_BITS>>,
    other_control_count: DFF<Bits<32>>,
    drop_no_endpoint_count: DFF<Bits<32>>,
    drop_rpc_full_count: DFF<Bits<32>>,
    drop_no_bpage_count: DFF<Bits<32>>,
    drop_too_big_count: DFF<Bits<32>>,
    duplicates_count: DFF<Bits<32>>,
    drop_bad_range_count: DFF<Bits<32>>,
    inbound_expired_count: DFF<Bits<32>>,
    /// EXPIRE: the key of the message being forgotten; its endpoint is
    /// open (`endpoint` is it), so its bpages go back.
    gone_key: DFF<Bits<KEY_BITS>>,
    gone_open: DFF<bool>,
    /// The record the state RAM shows: its endpoint, its generation, and
    /// whether that endpoint is still the one it arrived on (open, not
    /// closed and opened again since).
    read_endpoint: Signal<Local, Bits<2>>,
    read_generation: Signal<Local, Bits<GENERATION_BITS>>,
    read_live: Signal<Local, bool>,
    /// The generation of the endpoint the current packet is for.
    packet_generation: Signal<Local, Bits<GENERATION_BITS>>,
    /// Some endpoint's port is being written.
    any_restart: Signal<Local, bool>,
    /// ceil(r_len / 64 KiB): the expired message's bpages.
    gone_last: Signal<Local, Bits<LEN_BITS>>,
    gone_pages: Signal<Local, Bits<5>>,
    gone_record: Signal<Local, Bits<512>>,
    op_remove_slot: Constant<Bits<2>>,
    cpl_status: Constant<Bits<16>>,
    status_timeout: Constant<Bits<8>>,

    /// The frame's destination port is endpoint e's: compared in HEAD0
    /// with the beat coming in (as the keys are, below), used in DECIDE. A
    /// port written in between unsets them all: that frame is dropped as
    /// for no endpoint.
    match_ep: [DFF<bool>; ENDPOINTS],
    /// Endpoint e has a port (is open), a cycle after its CSR says so (as
    /// if the write came a cycle later): kept out of the paths that read
    /// it through the record's endpoint.
    ep_open: [DFF<bool>; ENDPOINTS],
    any_ep: Signal<Local, bool>,
    pick_ep: Signal<Local, Bits<2>>,
    /// The frame's RPC key (peer IP, peer port, local port, local id =
    /// sender_id ^ 1), taken with beat 0 in HEAD0 (`key_in`).
    key: DFF<Bits<KEY_BITS>>,
    recent_hit: Signal<Local, bool>,
    /// Whether the frame in DECIDE is of the last RPC (`same_rpc`) or of a
    /// recent one (`recent_hit`), found a step at a time so that DECIDE's
    /// choice does not wait for nine 112-bit compares: the key lies in
    /// beat 0, so HEAD0 compares the beat coming in (`key_in`, from
    /// `fields_in`) with each key (`*_match`), and HEAD1 combines them.
    fields_in: HeaderFields,
    key_in: Signal<Local, Bits<KEY_BITS>>,
    last_match: DFF<bool>,
    recent_match: [DFF<bool>; RECENT],
    seen_last: DFF<bool>,
    seen_recent: DFF<bool>,
    /// Remember this key now (a message leaving the table, complete).
    recent_push: Signal<Local, bool>,
    recent_push_key: Signal<Local, Bits<KEY_BITS>>,
    /// The packet: offset, end, length (of the message), all 20 bits.
    /// Registered every cycle from the header window, which is loaded in
    /// HEAD1 and holds until the next frame's HEAD0: valid from the cycle
    /// after DECIDE, the first to read them. (From the window straight,
    /// the offset's two forms and the adder sat in front of every compare
    /// of CLASSIFY.)
    p_off: DFF<Bits<LEN_BITS>>,
    p_end: DFF<Bits<LEN_BITS>>,
    p_msg_len: DFF<Bits<LEN_BITS>>,
    /// The packet's last byte, and the message's.
    p_last: Signal<Local, Bits<LEN_BITS>>,
    msg_last: Signal<Local, Bits<LEN_BITS>>,
    /// The packet's payload runs past its message, or it has none.
    bad_range: Signal<Local, bool>,
    need_pages: Signal<Local, Bits<5>>,
    /// MERGE: a gap range joins the packet on the right, and its end.
    has_right: Signal<Local, bool>,
    right_end: Signal<Local, Bits<LEN_BITS>>,
    has_left_gap: Signal<Local, bool>,
    /// The page-list entries of the packet's first and last byte.
    page_addr_first: Signal<Local, Bits<PAGE_ADDR_BITS>>,
    page_addr_last: Signal<Local, Bits<PAGE_ADDR_BITS>>,
    list_addr: Signal<Local, Bits<PAGE_ADDR_BITS>>,
    /// MERGE: a gap range is free (scanning in order).
    seen_free: Signal<Local, bool>,
    /// MERGE: the packet touches nothing: it needs a gap range of its own.
    isolated: Signal<Local, bool>,
    /// MERGE: the packet is dropped (duplicate, bad range, no gap range).
    merge_drop: Signal<Local, bool>,
    new_gap: [Signal<Local, bool>; GAPS],
    record_out: Signal<Local, Bits<RECORD_BITS>>,
    /// Where `beat` is against the job's last beat and boundary beat.
    beat_wide: Signal<Local, Bits<10>>,
    at_first: Signal<Local, bool>,
    at_last: Signal<Local, bool>,
    past_last: Signal<Local, bool>,
    before_bnd: Signal<Local, bool>,
    at_bnd: Signal<Local, bool>,
    /// The beat's payload lanes, and those of them below the boundary.
    pay_mask: Signal<Local, Bits<64>>,
    below_mask: Signal<Local, Bits<64>>,
    /// The part being offered goes to `page0`.
    to_page0: Signal<Local, bool>,
    /// Lanes of beat 1 that are payload (26..63), and the first of them.
    first_lanes: Constant<Bits<64>>,
    first_lane: Constant<Bits<6>>,
    /// WRITE: the part being offered is the beat's last.
    final_part: Signal<Local, bool>,
    offset_in_page: Signal<Local, Bits<64>>,
    record: Signal<Local, Bits<512>>,
    kind: Signal<Local, Bits<8>>,

    all_lanes: Constant<Bits<64>>,
    type_data: Constant<Bits<8>>,
    type_grant: Constant<Bits<8>>,
    type_cutoffs: Constant<Bits<8>>,
    /// Payload bytes of a DATA frame at most: 255 beats less the headers.
    max_payload: Constant<Bits<16>>,
    /// The version of the cutoffs this card announces.
    cutoff_version: Constant<Bits<16>>,
    /// The resend timer's entry of the packet just taken, written the cycle
    /// after EVENT: its range, and the first gap's start (a min tree).
    w_pending: DFF<bool>,
    w_from: DFF<Bits<LEN_BITS>>,
    w_to: DFF<Bits<LEN_BITS>>,
    w_open: DFF<bool>,
    w_new: DFF<bool>,
    /// The packet being taken began its message (its watch write is the
    /// first).
    fresh: DFF<bool>,
    /// The record has no gap range (`w_min` is the sender's `incoming`).
    no_gap: Signal<Local, bool>,
    w_gap: [Signal<Local, Bits<LEN_BITS>>; GAPS],
    /// A slot of `w_gap` with no range: above every offset.
    no_range: Constant<Bits<LEN_BITS>>,
    w_min01: Signal<Local, Bits<LEN_BITS>>,
    w_min23: Signal<Local, Bits<LEN_BITS>>,
    w_min: Signal<Local, Bits<LEN_BITS>>,
    type_need_ack: Constant<Bits<8>>,
    op_lookup: Constant<Bits<2>>,
    payload_start: Constant<Bits<16>>,
    max_message: Constant<Bits<32>>,
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
    cpl_bpages: Constant<Bits<16>>,
    recent_index: [Constant<Bits<3>>; RECENT],
    /// Gap range k's valid bit in the record.
    valid_bit: [Constant<Bits<RECORD_BITS>>; GAPS],
    st_head0: Constant<Bits<5>>,
    st_head1: Constant<Bits<5>>,
    st_decide: Constant<Bits<5>>,
    st_lookup: Constant<Bits<5>>,
    st_lookup_wait: Constant<Bits<5>>,
    st_state: Constant<Bits<5>>,
    st_alloc: Constant<Bits<5>>,
    st_alloc_wait: Constant<Bits<5>>,
    st_classify: Constant<Bits<5>>,
    st_merge: Constant<Bits<5>>,
    st_wait_writer: Constant<Bits<5>>,
    st_event: Constant<Bits<5>>,
    st_cpl_pages: Constant<Bits<5>>,
    st_complete: Constant<Bits<5>>,
    st_remove: Constant<Bits<5>>,
    st_remove_wait: Constant<Bits<5>>,
    st_drain: Constant<Bits<5>>,
    st_exp_remove: Constant<Bits<5>>,
    st_exp_remove_wait: Constant<Bits<5>>,
    st_exp_record: Constant<Bits<5>>,
    st_exp_page: Constant<Bits<5>>,
    st_exp_push: Constant<Bits<5>>,
    st_exp_event: Constant<Bits<5>>,
    st_exp_cpl: Constant<Bits<5>>,
    st_served_remove: Constant<Bits<5>>,
    st_served_wait: Constant<Bits<5>>,
    st_refresh: Constant<Bits<5>>,
    /// SERVED_REMOVE: the key to remove.
    served_key: DFF<Bits<KEY_BITS>>,
}

impl Default for RxEngine {
    fn default() -> Self {
        assert_eq!(
            ENDPOINTS, 4,
            "the endpoint match is unrolled for four endpoints"
        );
        assert_eq!(KEY_BITS, 128);
        assert_eq!(GAPS, 4, "the record's gap ranges are packed unrolled");
        assert_eq!(
            RECORD_ENDPOINT_AT, 224,
            "the record's endpoint is at bit 224"
        );
        assert_eq!(BPAGE_BITS, completion::BPAGE_INDEX_BITS);
        assert_eq!(completion::MAX_MESSAGE_BPAGES, 16);
        assert!(MAX_MESSAGE_BYTES < 1 << LEN_BITS);
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
            ep_generation: Default::default(),
            ep_restart: Default::default(),
            sel_endpoint: Default::default(),
            sel_rx_area: Default::default(),
            bpage_valid: Default::default(),
            bpage_index: Default::default(),
            bpage_free: Default::default(),
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
            m_evt_valid: Default::default(),
            m_evt_ready: Default::default(),
            m_evt_slot: Default::default(),
            m_evt_length: Default::default(),
            m_evt_received: Default::default(),
            m_evt_incoming: Default::default(),
            m_sender_valid: Default::default(),
            m_sender_kind: Default::default(),
            m_sender_key: Default::default(),
            m_sender_offset: Default::default(),
            m_sender_length: Default::default(),
            m_sender_priority: Default::default(),
            m_sender_mac: Default::default(),
            m_sender_port: Default::default(),
            m_sender_known: Default::default(),
            resends_received: Default::default(),
            acks_received: Default::default(),
            resends_count: Default::default(),
            acks_count: Default::default(),
            sender_key: Default::default(),
            ack_key: Default::default(),
            ev_grant: Constant::new((sender_event::GRANT as u64).to_bits()),
            ev_resend: Constant::new((sender_event::RESEND as u64).to_bits()),
            ev_acked: Constant::new((sender_event::ACKED as u64).to_bits()),
            ev_begun: Constant::new((sender_event::RESPONSE_BEGUN as u64).to_bits()),
            ev_busy: Constant::new((sender_event::BUSY as u64).to_bits()),
            ev_need_ack: Constant::new((sender_event::NEED_ACK as u64).to_bits()),
            ev_unknown: Constant::new((sender_event::RPC_UNKNOWN as u64).to_bits()),
            type_busy: c8(PacketType::Busy as u8),
            type_rpc_unknown: c8(PacketType::RpcUnknown as u8),
            type_resend: c8(PacketType::Resend as u8),
            type_ack: c8(PacketType::Ack as u8),
            m_peer_valid: Default::default(),
            m_peer_stale_cutoffs: Default::default(),
            m_watch_valid: Default::default(),
            m_watch_slot: Default::default(),
            m_watch_live: Default::default(),
            m_watch_from: Default::default(),
            m_watch_to: Default::default(),
            m_watch_open: Default::default(),
            m_watch_new: Default::default(),
            w_pending: Default::default(),
            w_from: Default::default(),
            w_to: Default::default(),
            w_open: Default::default(),
            w_new: Default::default(),
            fresh: Default::default(),
            no_gap: Default::default(),
            w_gap: Default::default(),
            no_range: Constant::new(((1u64 << LEN_BITS) - 1).to_bits()),
            w_min01: Default::default(),
            w_min23: Default::default(),
            w_min: Default::default(),
            m_cutoffs_valid: Default::default(),
            m_cutoffs_ip: Default::default(),
            m_cutoffs_version: Default::default(),
            m_cutoffs_limits: Default::default(),
            m_owed_ack_valid: Default::default(),
            m_owed_ack_ip: Default::default(),
            m_owed_ack_client_id: Default::default(),
            m_owed_ack_server_port: Default::default(),
            cutoff_version: Constant::new((CUTOFF_VERSION as u64).to_bits()),
            max_payload: Constant::new((255 * 64 - PAYLOAD_START).to_bits()),
            m_peer_slot: Default::default(),
            m_peer_mac: Default::default(),
            m_peer_ip: Default::default(),
            m_peer_port: Default::default(),
            m_peer_local_port: Default::default(),
            m_peer_local_id: Default::default(),
            messages: Default::default(),
            grants_received: Default::default(),
            cutoffs_received: Default::default(),
            other_control: Default::default(),
            drop_no_endpoint: Default::default(),
            drop_rpc_full: Default::default(),
            drop_no_bpage: Default::default(),
            drop_too_big: Default::default(),
            duplicates: Default::default(),
            drop_bad_range: Default::default(),
            swap: Default::default(),
            fields: Default::default(),
            rpc_state: Default::default(),
            pages: Default::default(),
            state: Default::default(),
            win0: Default::default(),
            win1: Default::default(),
            pay: Default::default(),
            pump_on: Default::default(),
            pump_data: Default::default(),
            job_valid: Default::default(),
            job_drop: Default::default(),
            job_base0: Default::default(),
            job_base1: Default::default(),
            job_bound: Default::default(),
            job_end: Default::default(),
            wr_on: Default::default(),
            wr_drop: Default::default(),
            wr_last_beat: Default::default(),
            wr_last_mask: Default::default(),
            wr_bnd_beat: Default::default(),
            wr_bnd_mask: Default::default(),
            wr_split: Default::default(),
            wr_bnd_low: Default::default(),
            h_last: Default::default(),
            h_last_lane: Default::default(),
            h_last_shift: Default::default(),
            h_bnd_lane: Default::default(),
            h_bnd_first: Default::default(),
            h_bnd_last: Default::default(),
            h_bnd_in: Default::default(),
            h_from_below: Default::default(),
            h_to_above: Default::default(),
            wr_free: Default::default(),
            wr_idle: Default::default(),
            take_head: Default::default(),
            head_next: Default::default(),
            is_data: Default::default(),
            ends_in_decide: Default::default(),
            pay_last: Default::default(),
            drop_to: Default::default(),
            endpoint: Default::default(),
            slot: Default::default(),
            inserted: Default::default(),
            r_len: Default::default(),
            r_prefix: Default::default(),
            r_received: Default::default(),
            r_endpoint: Default::default(),
            r_generation: Default::default(),
            r_valid: Default::default(),
            r_start: Default::default(),
            r_end: Default::default(),
            k_covered: Default::default(),
            k_overlap: Default::default(),
            k_len_differs: Default::default(),
            k_at_prefix: Default::default(),
            k_left: Default::default(),
            k_right: Default::default(),
            page_count: Default::default(),
            page0: Default::default(),
            base0: Default::default(),
            base1: Default::default(),
            second_half: Default::default(),
            beat: Default::default(),
            cpl_index: Default::default(),
            first_page: Default::default(),
            page_list: Default::default(),
            last_key: Default::default(),
            last_valid: Default::default(),
            same_rpc: Default::default(),
            recent: Default::default(),
            recent_valid: Default::default(),
            recent_next: Default::default(),
            messages_count: Default::default(),
            grants_count: Default::default(),
            cutoffs_count: Default::default(),
            need_acks_count: Default::default(),
            need_ack: Default::default(),
            resend: Default::default(),
            resend_slot: Default::default(),
            need_acks_received: Default::default(),
            m_ack_valid: Default::default(),
            m_ack_mac: Default::default(),
            m_ack_ip: Default::default(),
            m_ack_server_port: Default::default(),
            m_ack_local_port: Default::default(),
            m_ack_client_id: Default::default(),
            other_control_count: Default::default(),
            drop_no_endpoint_count: Default::default(),
            drop_rpc_full_count: Default::default(),
            drop_no_bpage_count: Default::default(),
            drop_too_big_count: Default::default(),
            duplicates_count: Default::default(),
            drop_bad_range_count: Default::default(),
            match_ep: Default::default(),
            ep_open: Default::default(),
            any_ep: Default::default(),
            pick_ep: Default::default(),
            key: Default::default(),
            recent_hit: Default::default(),
            fields_in: Default::default(),
            key_in: Default::default(),
            last_match: Default::default(),
            recent_match: Default::default(),
            seen_last: Default::default(),
            seen_recent: Default::default(),
            recent_push: Default::default(),
            recent_push_key: Default::default(),
            p_off: Default::default(),
            p_end: Default::default(),
            p_msg_len: Default::default(),
            p_last: Default::default(),
            msg_last: Default::default(),
            bad_range: Default::default(),
            need_pages: Default::default(),
            has_right: Default::default(),
            right_end: Default::default(),
            has_left_gap: Default::default(),
            seen_free: Default::default(),
            isolated: Default::default(),
            page_addr_first: Default::default(),
            page_addr_last: Default::default(),
            list_addr: Default::default(),
            merge_drop: Default::default(),
            new_gap: Default::default(),
            record_out: Default::default(),
            beat_wide: Default::default(),
            at_first: Default::default(),
            at_last: Default::default(),
            past_last: Default::default(),
            before_bnd: Default::default(),
            at_bnd: Default::default(),
            pay_mask: Default::default(),
            below_mask: Default::default(),
            to_page0: Default::default(),
            first_lanes: Constant::new((u64::MAX << (PAYLOAD_START - 64)).to_bits()),
            first_lane: Constant::new((PAYLOAD_START - 64).to_bits()),
            final_part: Default::default(),
            offset_in_page: Default::default(),
            record: Default::default(),
            kind: Default::default(),
            all_lanes: Constant::new(u64::MAX.to_bits()),
            type_data: c8(PacketType::Data as u8),
            type_grant: c8(PacketType::Grant as u8),
            type_cutoffs: c8(PacketType::Cutoffs as u8),
            type_need_ack: c8(PacketType::NeedAck as u8),
            op_lookup: Constant::new((RpcOp::Lookup as u64).to_bits()),
            payload_start: Constant::new(PAYLOAD_START.to_bits()),
            max_message: Constant::new((MAX_MESSAGE_BYTES as u64).to_bits()),
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
            cpl_bpages: lsb(completion::BPAGES),
            recent_index: std::array::from_fn(|k| Constant::new((k as u64).to_bits())),
            valid_bit: std::array::from_fn(|k| {
                Constant::new(Bits::<RECORD_BITS>::from(1u64) << (60 + 41 * k as u64))
            }),
            st_head0: c5(state::HEAD0),
            st_head1: c5(state::HEAD1),
            st_decide: c5(state::DECIDE),
            st_lookup: c5(state::LOOKUP),
            st_lookup_wait: c5(state::LOOKUP_WAIT),
            st_state: c5(state::STATE),
            st_alloc: c5(state::ALLOC),
            st_alloc_wait: c5(state::ALLOC_WAIT),
            st_classify: c5(state::CLASSIFY),
            st_merge: c5(state::MERGE),
            st_wait_writer: c5(state::WAIT_WRITER),
            st_event: c5(state::EVENT),
            st_cpl_pages: c5(state::CPL_PAGES),
            st_complete: c5(state::COMPLETE),
            st_remove: c5(state::REMOVE),
            st_remove_wait: c5(state::REMOVE_WAIT),
            st_drain: c5(state::DRAIN),
            st_exp_remove: c5(state::EXP_REMOVE),
            st_exp_remove_wait: c5(state::EXP_REMOVE_WAIT),
            st_exp_record: c5(state::EXP_RECORD),
            st_exp_page: c5(state::EXP_PAGE),
            st_exp_push: c5(state::EXP_PUSH),
            st_exp_event: c5(state::EXP_EVENT),
            st_exp_cpl: c5(state::EXP_CPL),
            st_served_remove: c5(state::SERVED_REMOVE),
            st_served_wait: c5(state::SERVED_WAIT),
            st_refresh: c5(state::REFRESH),
            served_key: Default::default(),
            s_served_valid: Default::default(),
            s_served_ready: Default::default(),
            s_served_key: Default::default(),
            s_rpc_key: Default::default(),
            s_expire_valid: Default::default(),
            s_expire_ready: Default::default(),
            s_expire_slot: Default::default(),
            m_bpage_return_valid: Default::default(),
            m_bpage_return_ready: Default::default(),
            m_bpage_return_endpoint: Default::default(),
            m_bpage_return_index: Default::default(),
            m_evt_remove: Default::default(),
            inbound_expired: Default::default(),
            inbound_expired_count: Default::default(),
            gone_key: Default::default(),
            gone_open: Default::default(),
            read_endpoint: Default::default(),
            read_generation: Default::default(),
            read_live: Default::default(),
            packet_generation: Default::default(),
            any_restart: Default::default(),
            gone_last: Default::default(),
            gone_pages: Default::default(),
            gone_record: Default::default(),
            op_remove_slot: Constant::new((RpcOp::RemoveSlot as u64).to_bits()),
            cpl_status: lsb(completion::STATUS),
            status_timeout: c8(completion::status::TIMEOUT),
        }
    }
}

impl Logic for RxEngine {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            w_pending,
            w_from,
            w_to,
            w_open,
            w_new,
            fresh,
            state,
            win0,
            win1,
            pump_on,
            pump_data,
            job_valid,
            job_drop,
            job_base0,
            job_base1,
            job_bound,
            job_end,
            wr_on,
            wr_drop,
            wr_last_beat,
            wr_last_mask,
            wr_bnd_beat,
            wr_bnd_mask,
            wr_split,
            wr_bnd_low,
            endpoint,
            slot,
            inserted,
            r_len,
            r_prefix,
            r_received,
            r_endpoint,
            r_generation,
            k_covered,
            k_overlap,
            k_len_differs,
            k_at_prefix,
            page_count,
            page0,
            base0,
            base1,
            second_half,
            beat,
            cpl_index,
            first_page,
            page_list,
            recent_next,
            p_off,
            p_end,
            p_msg_len,
            key,
            last_match,
            is_data,
            ends_in_decide,
            seen_last,
            seen_recent,
            last_key,
            last_valid,
            messages_count,
            grants_count,
            resends_count,
            acks_count,
            cutoffs_count,
            need_acks_count,
            need_ack,
            resend,
            resend_slot,
            other_control_count,
            drop_no_endpoint_count,
            drop_rpc_full_count,
            drop_no_bpage_count,
            drop_too_big_count,
            duplicates_count,
            drop_bad_range_count,
            inbound_expired_count,
            gone_key,
            gone_open,
            served_key
        );
        for k in 0..GAPS {
            self.r_valid[k].clock.next = self.clock.val();
            self.r_valid[k].d.next = self.r_valid[k].q.val();
            self.r_start[k].clock.next = self.clock.val();
            self.r_start[k].d.next = self.r_start[k].q.val();
            self.r_end[k].clock.next = self.clock.val();
            self.r_end[k].d.next = self.r_end[k].q.val();
            self.k_left[k].clock.next = self.clock.val();
            self.k_left[k].d.next = self.k_left[k].q.val();
            self.k_right[k].clock.next = self.clock.val();
            self.k_right[k].d.next = self.k_right[k].q.val();
        }
        for r in 0..RECENT {
            self.recent[r].clock.next = self.clock.val();
            self.recent[r].d.next = self.recent[r].q.val();
            self.recent_valid[r].clock.next = self.clock.val();
            self.recent_match[r].clock.next = self.clock.val();
            self.recent_match[r].d.next = self.recent_match[r].q.val();
            self.recent_valid[r].d.next = self.recent_valid[r].q.val();
        }
        self.rpc_state.read_clock.next = self.clock.val();
        self.rpc_state.write_clock.next = self.clock.val();
        self.pages.read_clock.next = self.clock.val();
        self.pages.write_clock.next = self.clock.val();
        self.swap.beat.next = self.s_axis_tdata.val();
        self.pay.clock.next = self.clock.val();
        self.pay.reset.next = self.reset.val();
        self.pay.s_valid.next = false;
        self.pay.s_data.next = bit_cast::<PAY_BITS, 512>(self.s_axis_tdata.val())
            | (bit_cast::<PAY_BITS, 1>(self.s_axis_tlast.val().into()) << 512);
        self.pay.m_ready.next = false;
        self.pay_last.next = self.pay.m_data.val().get_bit(512);
        self.wr_idle.next = !self.wr_on.q.val() & !self.job_valid.q.val();
        self.drop_to.next = self.st_head0.val();
        if self.pump_data.q.val() {
            self.drop_to.next = self.st_drain.val();
        }
        self.fields.window.next = (bit_cast::<1024, 512>(self.win0.q.val()) << 512)
            | bit_cast::<1024, 512>(self.win1.q.val());

        // Which endpoint serves the frame's destination port (unrolled).
        for e in 0..ENDPOINTS {
            self.match_ep[e].clock.next = self.clock.val();
            self.ep_open[e].clock.next = self.clock.val();
            self.ep_open[e].d.next = self.ep_port[e].val() != 0;
            self.match_ep[e].d.next = self.match_ep[e].q.val();
        }
        self.any_ep.next = self.match_ep[0].q.val()
            | self.match_ep[1].q.val()
            | self.match_ep[2].q.val()
            | self.match_ep[3].q.val();
        self.pick_ep.next = 0.into();
        if self.match_ep[1].q.val() {
            self.pick_ep.next = 1.into();
        } else if self.match_ep[2].q.val() {
            self.pick_ep.next = 2.into();
        } else if self.match_ep[3].q.val() {
            self.pick_ep.next = 3.into();
        }
        self.sel_endpoint.next = self.endpoint.q.val();

        // Whose a record is: a message belongs to the endpoint (and its
        // generation) it arrived on; once that endpoint has closed, its
        // packets are dropped and, when it expires, its bpages go nowhere
        // (they were the old RX area's).
        self.read_endpoint.next = self.rpc_state.read_data.val().get_bits::<2>(224);
        self.read_generation.next = self
            .rpc_state
            .read_data
            .val()
            .get_bits::<GENERATION_BITS>(226);
        self.read_live.next = false;
        self.packet_generation.next = 0.into();
        self.any_restart.next = false;
        for e in 0..ENDPOINTS {
            if self.read_endpoint.val().index() == e {
                self.read_live.next = self.ep_open[e].q.val()
                    & (self.ep_generation[e].val() == self.read_generation.val());
            }
            if self.endpoint.q.val().index() == e {
                self.packet_generation.next = self.ep_generation[e].val();
            }
            if self.ep_restart[e].val() {
                self.any_restart.next = true;
            }
        }
        self.gone_last.next = self.r_len.q.val() - 1;
        self.gone_pages.next = bit_cast::<5, 4>(self.gone_last.val().get_bits::<4>(16)) + 1;
        self.s_expire_ready.next = false;
        self.s_served_ready.next = false;
        self.m_bpage_return_valid.next = false;
        self.m_bpage_return_endpoint.next = self.endpoint.q.val();
        self.m_bpage_return_index.next = bit_cast::<16, BPAGE_BITS>(self.pages.read_data.val());

        // The RPC table's request, decoded from the state alone (LOOKUP,
        // REMOVE, EXP_REMOVE, SERVED_REMOVE), not in the state machine's
        // branches below. The key is 4 LUT levels from `state` here, and
        // the table hashes it in its cycle 0 (its compares with the requests
        // ahead wait for cycle 1, between registers).
        self.m_rpc_valid.next = (self.state.q.val() == self.st_lookup.val())
            | (self.state.q.val() == self.st_remove.val())
            | (self.state.q.val() == self.st_exp_remove.val())
            | (self.state.q.val() == self.st_served_remove.val());
        self.m_rpc_op.next = self.op_insert.val();
        if (self.state.q.val() == self.st_lookup.val())
            & (self.need_ack.q.val() | self.resend.q.val())
        {
            self.m_rpc_op.next = self.op_lookup.val();
        }
        if (self.state.q.val() == self.st_remove.val())
            | (self.state.q.val() == self.st_served_remove.val())
        {
            self.m_rpc_op.next = self.op_remove.val();
        }
        self.m_rpc_key.next = self.key.q.val();
        if self.state.q.val() == self.st_exp_remove.val() {
            self.m_rpc_op.next = self.op_remove_slot.val();
            self.m_rpc_key.next = bit_cast::<KEY_BITS, SLOT_BITS>(self.slot.q.val());
        }
        if self.state.q.val() == self.st_served_remove.val() {
            self.m_rpc_key.next = self.served_key.q.val();
        }
        // The RPC's key: peer IP, peer port, local port, local id.
        self.fields_in.window.next = bit_cast::<1024, 512>(self.swap.swapped.val()) << 512;
        self.key_in.next = (bit_cast::<128, 32>(self.fields_in.src_ip.val()) << 96)
            | (bit_cast::<128, 16>(self.fields_in.sport.val()) << 80)
            | (bit_cast::<128, 16>(self.fields_in.dport.val()) << 64)
            | bit_cast::<128, 64>(self.fields_in.sender_id.val() ^ 1);
        self.same_rpc.next = self.last_valid.q.val() & self.last_match.q.val();
        self.recent_hit.next = false;
        self.recent_push.next = false;
        self.recent_push_key.next = self.key.q.val();
        for r in 0..RECENT {
            if self.recent_match[r].q.val() {
                self.recent_hit.next = true;
            }
        }

        // The packet's range within its message (valid once the length is
        // known to be below 2^20).
        self.p_off.d.next = self.fields.payload_offset.val().get_bits::<LEN_BITS>(0);
        self.p_end.d.next = self.fields.payload_offset.val().get_bits::<LEN_BITS>(0)
            + bit_cast::<LEN_BITS, 16>(self.fields.payload_len.val());
        self.p_msg_len.d.next = self.fields.message_length.val().get_bits::<LEN_BITS>(0);
        // (A frame of more than 255 beats would wrap `beat`: such a DATA,
        // beyond any jumbo MTU, is dropped as a bad range.)
        // (A payload that runs past its message never gets here: the parser
        // drops it, `PayloadBeyondMessage`. So a payload of at least one
        // byte also starts inside its message.)
        self.bad_range.next = (self.fields.payload_len.val() == 0)
            | (self.fields.payload_len.val() > self.max_payload.val());
        // ceil(length / 64 KiB), 1..16.
        self.p_last.next = self.p_end.q.val() - 1;
        self.msg_last.next = self.p_msg_len.q.val() - 1;
        self.need_pages.next = bit_cast::<5, 4>(self.msg_last.val().get_bits::<4>(16)) + 1;

        // ---- the record: unpacked from the state RAM in STATE ----
        self.rpc_state.read_address.next = self.slot.q.val();
        self.rpc_state.write_address.next = self.slot.q.val();
        self.rpc_state.write_enable.next = false;
        self.record_out.next = bit_cast::<RECORD_BITS, LEN_BITS>(self.r_len.q.val())
            | (bit_cast::<RECORD_BITS, LEN_BITS>(self.r_prefix.q.val()) << 20)
            | (bit_cast::<RECORD_BITS, LEN_BITS>(self.r_received.q.val()) << 40)
            | (bit_cast::<RECORD_BITS, LEN_BITS>(self.r_start[0].q.val()) << 61)
            | (bit_cast::<RECORD_BITS, LEN_BITS>(self.r_end[0].q.val()) << 81)
            | (bit_cast::<RECORD_BITS, LEN_BITS>(self.r_start[1].q.val()) << 102)
            | (bit_cast::<RECORD_BITS, LEN_BITS>(self.r_end[1].q.val()) << 122)
            | (bit_cast::<RECORD_BITS, LEN_BITS>(self.r_start[2].q.val()) << 143)
            | (bit_cast::<RECORD_BITS, LEN_BITS>(self.r_end[2].q.val()) << 163)
            | (bit_cast::<RECORD_BITS, LEN_BITS>(self.r_start[3].q.val()) << 184)
            | (bit_cast::<RECORD_BITS, LEN_BITS>(self.r_end[3].q.val()) << 204)
            | (bit_cast::<RECORD_BITS, 2>(self.r_endpoint.q.val()) << 224)
            | (bit_cast::<RECORD_BITS, GENERATION_BITS>(self.r_generation.q.val()) << 226);
        for k in 0..GAPS {
            if self.r_valid[k].q.val() {
                self.record_out.next = self.record_out.val() | self.valid_bit[k].val();
            }
        }
        self.rpc_state.write_data.next = self.record_out.val();

        // ---- MERGE's combinational part: the record with the packet in ----
        self.has_right.next = false;
        self.right_end.next = 0.into();
        self.has_left_gap.next = false;
        for k in 0..GAPS {
            if self.k_right[k].q.val() {
                self.has_right.next = true;
                self.right_end.next = self.r_end[k].q.val();
            }
            if self.k_left[k].q.val() {
                self.has_left_gap.next = true;
            }
        }
        // A new gap range goes into the first free entry.
        self.seen_free.next = false;
        for k in 0..GAPS {
            self.new_gap[k].next = !self.r_valid[k].q.val() & !self.seen_free.val();
            if !self.r_valid[k].q.val() {
                self.seen_free.next = true;
            }
        }
        self.isolated.next =
            !self.k_at_prefix.q.val() & !self.has_left_gap.val() & !self.has_right.val();
        self.merge_drop.next = self.k_len_differs.q.val()
            | self.k_overlap.q.val()
            | self.k_covered.q.val()
            | (self.isolated.val() & !self.seen_free.val());

        // ---- page list RAM ----
        self.pages.write_address.next = (bit_cast::<PAGE_ADDR_BITS, SLOT_BITS>(self.slot.q.val())
            << 4)
            | bit_cast::<PAGE_ADDR_BITS, 4>(self.page_count.q.val().get_bits::<4>(0));
        self.pages.write_data.next = self.bpage_index.val().get_bits::<BPAGE_BITS>(0);
        self.pages.write_enable.next = false;
        self.page_addr_first.next = (bit_cast::<PAGE_ADDR_BITS, SLOT_BITS>(self.slot.q.val()) << 4)
            | bit_cast::<PAGE_ADDR_BITS, 4>(self.p_off.q.val().get_bits::<4>(16));
        self.page_addr_last.next = (bit_cast::<PAGE_ADDR_BITS, SLOT_BITS>(self.slot.q.val()) << 4)
            | bit_cast::<PAGE_ADDR_BITS, 4>(self.p_last.val().get_bits::<4>(16));
        self.pages.read_address.next = self.page_addr_first.val();
        // Entry `cpl_index` of the slot's page list (walked to complete a
        // message, and to give an expired one's bpages back).
        self.list_addr.next = (bit_cast::<PAGE_ADDR_BITS, SLOT_BITS>(self.slot.q.val()) << 4)
            | bit_cast::<PAGE_ADDR_BITS, 4>(self.cpl_index.q.val().get_bits::<4>(0));
        self.bpage_pop.next = false;

        // ---- sender events ----
        self.sender_key.next = (bit_cast::<128, 32>(self.fields.src_ip.val()) << 96)
            | (bit_cast::<128, 16>(self.fields.dport.val()) << 64)
            | bit_cast::<128, 64>(self.fields.sender_id.val() ^ 1);
        self.ack_key.next = (bit_cast::<128, 32>(self.fields.src_ip.val()) << 96)
            | (bit_cast::<128, 16>(self.fields.ack_server_port.val()) << 64)
            | bit_cast::<128, 64>(self.fields.ack_client_id.val() ^ 1);
        self.m_sender_valid.next = false;
        self.m_sender_kind.next = self.ev_grant.val();
        self.m_sender_key.next = self.sender_key.val();
        self.m_sender_offset.next = self.fields.offset.val();
        self.m_sender_length.next = self.fields.length.val();
        self.m_sender_priority.next = self.fields.ctl_priority.val().get_bits::<3>(0);
        self.m_sender_mac.next = self.fields.src_mac.val();
        self.m_sender_port.next = self.fields.sport.val();
        self.m_sender_known.next = false;

        // ---- ACKs of responses completed ----
        self.m_ack_valid.next = false;
        self.m_ack_mac.next = self.fields.src_mac.val();
        self.m_ack_ip.next = self.fields.src_ip.val();
        self.m_ack_server_port.next = self.fields.sport.val();
        self.m_ack_local_port.next = self.fields.dport.val();
        self.m_ack_client_id.next = self.fields.sender_id.val() ^ 1;

        // ---- CUTOFFS and owed acks to the sender side ----
        self.m_cutoffs_valid.next = false;
        self.m_cutoffs_ip.next = self.fields.src_ip.val();
        self.m_cutoffs_version.next = self.fields.cutoffs_version.val();
        self.m_cutoffs_limits.next = self.fields.unsched_cutoffs.val();
        self.m_owed_ack_valid.next = false;
        self.m_owed_ack_ip.next = self.fields.src_ip.val();
        self.m_owed_ack_client_id.next = self.fields.sender_id.val() ^ 1;
        self.m_owed_ack_server_port.next = self.fields.sport.val();

        // ---- the peer of a new message ----
        self.m_peer_valid.next = false;
        self.m_peer_stale_cutoffs.next =
            self.fields.cutoff_version.val() != self.cutoff_version.val();
        self.m_peer_slot.next = self.slot.q.val();
        self.m_peer_mac.next = self.fields.src_mac.val();
        self.m_peer_ip.next = self.fields.src_ip.val();
        self.m_peer_port.next = self.fields.sport.val();
        self.m_peer_local_port.next = self.fields.dport.val();
        self.m_peer_local_id.next = self.fields.sender_id.val() ^ 1;

        // ---- grant scheduler events ----
        self.m_evt_valid.next = false;
        self.m_evt_remove.next = false;
        self.m_evt_slot.next = self.slot.q.val();
        self.m_evt_length.next = self.r_len.q.val();
        self.m_evt_received.next = self.r_received.q.val();
        self.m_evt_incoming.next = self.p_msg_len.q.val();
        if self.fields.incoming.val() < self.fields.message_length.val() {
            self.m_evt_incoming.next = self.fields.incoming.val().get_bits::<LEN_BITS>(0);
        }

        // ---- the resend timer's entry ----
        // The range to ask for ends at the first range's start; only with no
        // range open at the sender's `incoming`. (Not the least of both: a
        // HomaModule sender's retransmission says `incoming` = its own end,
        // often below ranges beyond it, and a range ending before it starts
        // is never asked for: found by the kernel-Homa VM test at 2% loss.)
        self.no_gap.next = true;
        for k in 0..GAPS {
            if self.r_valid[k].q.val() {
                self.no_gap.next = false;
            }
            self.w_gap[k].next = self.no_range.val();
            if self.r_valid[k].q.val() {
                self.w_gap[k].next = self.r_start[k].q.val();
            }
        }
        self.w_min01.next = self.w_gap[1].val();
        if self.w_gap[0].val() < self.w_gap[1].val() {
            self.w_min01.next = self.w_gap[0].val();
        }
        self.w_min23.next = self.w_gap[3].val();
        if self.w_gap[2].val() < self.w_gap[3].val() {
            self.w_min23.next = self.w_gap[2].val();
        }
        self.w_min.next = self.w_min23.val();
        if self.w_min01.val() < self.w_min23.val() {
            self.w_min.next = self.w_min01.val();
        }
        if self.no_gap.val() {
            self.w_min.next = self.m_evt_incoming.val();
        }
        self.w_pending.d.next = false;
        self.m_watch_valid.next = self.w_pending.q.val();
        self.m_watch_slot.next = self.slot.q.val();
        self.m_watch_live.next = true;
        self.m_watch_from.next = self.w_from.q.val();
        self.m_watch_to.next = self.w_to.q.val();
        self.m_watch_open.next = self.w_open.q.val();
        self.m_watch_new.next = self.w_new.q.val() & self.w_pending.q.val();

        // ---- payload placement ----
        self.offset_in_page.next = bit_cast::<64, 16>(self.p_off.q.val().get_bits::<16>(0));
        // Lanes of frame beat `beat` that hold payload, and which of them
        // are below the bpage boundary (to `page0`; the rest to `page1`).
        self.beat_wide.next = bit_cast::<10, 8>(self.beat.q.val());
        self.at_first.next = self.beat.q.val() == 1;
        self.at_last.next = self.beat_wide.val() == self.wr_last_beat.q.val();
        self.past_last.next = self.beat_wide.val() > self.wr_last_beat.q.val();
        self.before_bnd.next = self.beat_wide.val() < self.wr_bnd_beat.q.val();
        self.at_bnd.next = self.beat_wide.val() == self.wr_bnd_beat.q.val();
        self.pay_mask.next = self.all_lanes.val();
        if self.at_first.val() {
            self.pay_mask.next = self.first_lanes.val();
        }
        if self.at_last.val() {
            self.pay_mask.next = self.pay_mask.val() & self.wr_last_mask.q.val();
        }
        if self.past_last.val() {
            // A beat past the payload (Ethernet padding): nothing to write.
            self.pay_mask.next = 0.into();
        }
        self.below_mask.next = 0.into();
        if self.before_bnd.val() {
            self.below_mask.next = self.all_lanes.val();
        } else if self.at_bnd.val() {
            self.below_mask.next = self.wr_bnd_mask.q.val();
        }
        // A beat with payload on both sides of the boundary goes out twice:
        // the part below first, then (`second_half`) the rest.
        self.to_page0.next = !self.second_half.q.val()
            & !self.past_last.val()
            & (self.before_bnd.val() | (self.at_bnd.val() & self.wr_bnd_low.q.val()));
        self.final_part.next =
            !(self.at_bnd.val() & self.wr_split.q.val() & !self.second_half.q.val());
        self.m_dma_wr_addr.next = self.base1.q.val() + (bit_cast::<64, 8>(self.beat.q.val()) << 6);
        self.m_dma_wr_strb.next = self.pay_mask.val() & !self.below_mask.val();
        if self.to_page0.val() {
            self.m_dma_wr_addr.next =
                self.base0.q.val() + (bit_cast::<64, 8>(self.beat.q.val()) << 6);
            self.m_dma_wr_strb.next = self.pay_mask.val() & self.below_mask.val();
        }
        self.m_dma_wr_data.next = self.pay.m_data.val().get_bits::<512>(0);
        self.m_dma_wr_last.next = self.pay_last.val() & self.final_part.val();
        self.m_dma_wr_valid.next = false;
        self.s_axis_tready.next = false;

        // The completion of a delivered message.
        self.kind.next = self.kind_request.val();
        if self.fields.sender_id.val().get_bit(0) {
            self.kind.next = self.kind_response.val();
        }
        self.record.next = (bit_cast::<512, 8>(self.kind.val()) << self.cpl_kind.val())
            | (bit_cast::<512, 16>(self.fields.sport.val()) << self.cpl_peer_port.val())
            | (bit_cast::<512, 32>(self.fields.message_length.val()) << self.cpl_length.val())
            | (bit_cast::<512, 64>(self.fields.sender_id.val() ^ 1) << self.cpl_rpc_id.val())
            | (bit_cast::<512, BPAGE_BITS>(self.first_page.q.val())
                << (self.cpl_buffer_offset.val() + 16))
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
                << (self.cpl_peer_mac.val() + 40))
            | (bit_cast::<512, { BPAGE_BITS * 15 }>(self.page_list.q.val())
                << self.cpl_bpages.val());
        // The completion of an expired response: our RPC failed.
        self.gone_record.next = (bit_cast::<512, 8>(self.kind_response.val())
            << self.cpl_kind.val())
            | (bit_cast::<512, 8>(self.status_timeout.val()) << self.cpl_status.val())
            | (bit_cast::<512, 16>(self.gone_key.q.val().get_bits::<16>(80))
                << self.cpl_peer_port.val())
            | (bit_cast::<512, LEN_BITS>(self.r_len.q.val()) << self.cpl_length.val())
            | (bit_cast::<512, 64>(self.gone_key.q.val().get_bits::<64>(0))
                << self.cpl_rpc_id.val())
            | (bit_cast::<512, 32>(self.gone_key.q.val().get_bits::<32>(96))
                << self.cpl_peer_ip.val());
        self.m_cpl_record.next = self.record.val();
        if self.state.q.val() == self.st_exp_cpl.val() {
            self.m_cpl_record.next = self.gone_record.val();
        }
        self.m_cpl_endpoint.next = self.endpoint.q.val();
        self.m_cpl_valid.next = false;

        // ---- the state machine ----
        // A frame's beat 0 is taken in HEAD0, or in DECIDE when the frame there
        // is a control packet that ends there (no lookup), so a two-beat GRANT
        // costs 2 cycles, not 3. (The pump done: the stream is at the next
        // frame. An expiry or a released request goes first, from HEAD0.)
        // The state's next value is set in HEAD0's and DECIDE's own branches,
        // not over the whole machine's: yosys then mapped the machine's
        // state mux behind it (m_evt_ready to `state`, 15 levels, not 4).
        self.take_head.next = !self.pump_on.q.val()
            & !self.s_expire_valid.val()
            & !self.s_served_valid.val()
            & ((self.state.q.val() == self.st_head0.val())
                | ((self.state.q.val() == self.st_decide.val()) & self.ends_in_decide.q.val()));
        // After beat 0: HEAD1, or for a one-beat frame (a control packet
        // without a body: BUSY, NEED_ACK, RPC_UNKNOWN) DECIDE.
        self.head_next.next = self.st_head1.val();
        if self.s_axis_tlast.val() {
            self.head_next.next = self.st_decide.val();
        }
        if (self.state.q.val() == self.st_head0.val()) & self.s_expire_valid.val() {
            // An expiry goes ahead of the next frame, once the writer is
            // done (it may be writing into the pages an expiry frees).
            if self.wr_idle.val() {
                self.s_expire_ready.next = true;
                self.slot.d.next = self.s_expire_slot.val();
                self.last_valid.d.next = false;
                self.state.d.next = self.st_exp_remove.val();
            }
        } else if (self.state.q.val() == self.st_head0.val()) & self.s_served_valid.val() {
            // A response released: forget the request it answered (as
            // for an expiry, once the writer is done).
            if self.wr_idle.val() {
                self.s_served_ready.next = true;
                self.served_key.d.next = self.s_served_key.val();
                self.last_valid.d.next = false;
                self.state.d.next = self.st_served_remove.val();
            }
        } else if self.state.q.val() == self.st_head0.val() {
            if self.take_head.val() & self.s_axis_tvalid.val() {
                self.state.d.next = self.head_next.val();
            }
        } else if self.state.q.val() == self.st_head1.val() {
            // Beat 1 completes the header window; a DATA frame's beat 1
            // (payload from lane 26) and the rest go to `pay`. (A one-beat
            // frame, a control packet, skips HEAD1: for it `seen_*` stay
            // false, and neither matters. The keys do not change between
            // HEAD0 and here: only the header stage's own steps, between
            // frames, write them.)
            self.seen_last.d.next = self.same_rpc.val();
            self.seen_recent.d.next = self.recent_hit.val();
            self.s_axis_tready.next = !self.is_data.q.val() | self.pay.s_ready.val();
            self.pay.s_valid.next = self.is_data.q.val() & self.s_axis_tvalid.val();
            if self.s_axis_tvalid.val() & (!self.is_data.q.val() | self.pay.s_ready.val()) {
                self.win1.d.next = self.swap.swapped.val();
                self.pump_data.d.next = self.is_data.q.val();
                self.pump_on.d.next = !self.s_axis_tlast.val();
                self.state.d.next = self.st_decide.val();
            }
        } else if self.state.q.val() == self.st_decide.val() {
            self.endpoint.d.next = self.pick_ep.val();
            self.state.d.next = self.st_lookup.val();
            self.need_ack.d.next = false;
            self.resend.d.next = false;
            self.fresh.d.next = false;
            if self.seen_last.q.val() {
                // The RPC of the last packet: its slot and record are here.
                self.state.d.next = self.st_classify.val();
            }
            if (self.fields.packet_type.val() != self.type_data.val())
                | !self.any_ep.val()
                | (self.fields.message_length.val() > self.max_message.val())
                | self.bad_range.val()
                | self.seen_recent.q.val()
            {
                self.state.d.next = self.drop_to.val();
            }
            if (self.fields.packet_type.val() == self.type_need_ack.val()) & self.any_ep.val() {
                // Answered (by the TX engine) unless the RPC is still here
                // (its response not all in): look it up.
                self.need_acks_count.d.next = self.need_acks_count.q.val() + 1;
                self.need_ack.d.next = true;
                self.state.d.next = self.st_lookup.val();
            }
            if (self.fields.packet_type.val() == self.type_data.val())
                & (self.fields.ack_client_id.val() != 0)
            {
                // An ack riding in DATA: that response is done with.
                self.m_sender_valid.next = true;
                self.m_sender_kind.next = self.ev_acked.val();
                self.m_sender_key.next = self.ack_key.val();
            }
            if self.fields.packet_type.val() == self.type_rpc_unknown.val() {
                // The peer has no such RPC (counted with the other control
                // packets below): a client restarts its request, a server
                // forgets its response.
                self.m_sender_valid.next = true;
                self.m_sender_kind.next = self.ev_unknown.val();
            }
            if self.fields.packet_type.val() == self.type_busy.val() {
                // The server is alive, working on our request (counted
                // with the other control packets below).
                self.m_sender_valid.next = true;
                self.m_sender_kind.next = self.ev_busy.val();
            }
            if self.fields.packet_type.val() == self.type_grant.val() {
                self.grants_count.d.next = self.grants_count.q.val() + 1;
                self.m_sender_valid.next = true;
            } else if self.fields.packet_type.val() == self.type_resend.val() {
                // To the TX engine once looked up: for an outbound message
                // it does not have, whether the RPC is here tells it to
                // answer BUSY (a request in service) or RPC_UNKNOWN.
                self.resends_count.d.next = self.resends_count.q.val() + 1;
                if self.any_ep.val() {
                    self.resend.d.next = true;
                    self.state.d.next = self.st_lookup.val();
                }
            } else if self.fields.packet_type.val() == self.type_ack.val() {
                // The RPC the ACK's header names (the acks in its body are
                // not read: the card's own ACKs name the same one).
                self.acks_count.d.next = self.acks_count.q.val() + 1;
                self.m_sender_valid.next = true;
                self.m_sender_kind.next = self.ev_acked.val();
            } else if self.fields.packet_type.val() == self.type_cutoffs.val() {
                self.cutoffs_count.d.next = self.cutoffs_count.q.val() + 1;
                self.m_cutoffs_valid.next = true;
            } else if (self.fields.packet_type.val() == self.type_need_ack.val())
                & self.any_ep.val()
            {
                // Counted above.
            } else if (self.fields.packet_type.val() != self.type_data.val())
                & (self.fields.packet_type.val() != self.type_need_ack.val())
            {
                self.other_control_count.d.next = self.other_control_count.q.val() + 1;
            } else if !self.any_ep.val() {
                self.drop_no_endpoint_count.d.next = self.drop_no_endpoint_count.q.val() + 1;
            } else if (self.fields.message_length.val() > self.max_message.val())
                | (self.fields.message_length.val() == 0)
            {
                self.drop_too_big_count.d.next = self.drop_too_big_count.q.val() + 1;
            } else if self.bad_range.val() {
                self.drop_bad_range_count.d.next = self.drop_bad_range_count.q.val() + 1;
            } else if self.seen_recent.q.val() {
                self.duplicates_count.d.next = self.duplicates_count.q.val() + 1;
            }
            if self.take_head.val() & self.s_axis_tvalid.val() {
                self.state.d.next = self.head_next.val();
            }
        } else if self.state.q.val() == self.st_lookup.val() {
            if self.m_rpc_ready.val() {
                self.state.d.next = self.st_lookup_wait.val();
            }
        } else if self.state.q.val() == self.st_lookup_wait.val() {
            // The state RAM reads the answered slot at this edge.
            self.rpc_state.read_address.next = self.s_rpc_slot.val();
            if self.s_rpc_valid.val() & (self.need_ack.q.val() | self.resend.q.val()) {
                // A NEED_ACK for an RPC not here: the TX engine answers, if
                // it no longer holds the request either (else the response
                // was lost whole).
                self.m_sender_valid.next = !self.s_rpc_hit.val();
                self.m_sender_kind.next = self.ev_need_ack.val();
                // A NEED_ACK longer than two beats (padding) is drained.
                self.state.d.next = self.drop_to.val();
                if self.resend.q.val() {
                    self.m_sender_valid.next = true;
                    self.m_sender_kind.next = self.ev_resend.val();
                    if self.s_rpc_hit.val() {
                        // Its record is read at this edge; REFRESH tells
                        // the TX engine, once the record says whether the
                        // RPC is still its endpoint's.
                        self.m_sender_valid.next = false;
                        self.resend_slot.d.next = self.s_rpc_slot.val();
                        self.state.d.next = self.st_refresh.val();
                    }
                }
            } else if self.s_rpc_valid.val() {
                self.slot.d.next = self.s_rpc_slot.val();
                self.inserted.d.next = self.s_rpc_inserted.val();
                self.state.d.next = self.st_state.val();
                if self.s_rpc_full.val() {
                    self.drop_rpc_full_count.d.next = self.drop_rpc_full_count.q.val() + 1;
                    self.state.d.next = self.drop_to.val();
                }
            }
        } else if self.state.q.val() == self.st_state.val() {
            self.last_valid.d.next = false;
            self.r_len.d.next = self.rpc_state.read_data.val().get_bits::<LEN_BITS>(0);
            self.r_prefix.d.next = self.rpc_state.read_data.val().get_bits::<LEN_BITS>(20);
            self.r_received.d.next = self.rpc_state.read_data.val().get_bits::<LEN_BITS>(40);
            self.r_valid[0].d.next = self.rpc_state.read_data.val().get_bit(60);
            self.r_start[0].d.next = self.rpc_state.read_data.val().get_bits::<LEN_BITS>(61);
            self.r_end[0].d.next = self.rpc_state.read_data.val().get_bits::<LEN_BITS>(81);
            self.r_valid[1].d.next = self.rpc_state.read_data.val().get_bit(101);
            self.r_start[1].d.next = self.rpc_state.read_data.val().get_bits::<LEN_BITS>(102);
            self.r_end[1].d.next = self.rpc_state.read_data.val().get_bits::<LEN_BITS>(122);
            self.r_valid[2].d.next = self.rpc_state.read_data.val().get_bit(142);
            self.r_start[2].d.next = self.rpc_state.read_data.val().get_bits::<LEN_BITS>(143);
            self.r_end[2].d.next = self.rpc_state.read_data.val().get_bits::<LEN_BITS>(163);
            self.r_valid[3].d.next = self.rpc_state.read_data.val().get_bit(183);
            self.r_start[3].d.next = self.rpc_state.read_data.val().get_bits::<LEN_BITS>(184);
            self.r_end[3].d.next = self.rpc_state.read_data.val().get_bits::<LEN_BITS>(204);
            self.r_endpoint.d.next = self.read_endpoint.val();
            self.r_generation.d.next = self.read_generation.val();
            self.state.d.next = self.st_classify.val();
            if !self.inserted.q.val()
                & ((self.read_endpoint.val() != self.endpoint.q.val())
                    | (self.read_generation.val() != self.packet_generation.val()))
            {
                // A message begun on an endpoint since closed (the port
                // opened again since, perhaps on another endpoint): not
                // this endpoint's. Dropped; the record expires.
                self.drop_no_endpoint_count.d.next = self.drop_no_endpoint_count.q.val() + 1;
                self.state.d.next = self.drop_to.val();
            }
            if self.inserted.q.val() {
                // A new message: an empty record; its bpages first.
                self.fresh.d.next = true;
                self.r_len.d.next = self.p_msg_len.q.val();
                self.r_prefix.d.next = 0.into();
                self.r_received.d.next = 0.into();
                self.r_endpoint.d.next = self.endpoint.q.val();
                self.r_generation.d.next = self.packet_generation.val();
                for k in 0..GAPS {
                    self.r_valid[k].d.next = false;
                }
                self.page_count.d.next = 0.into();
                self.state.d.next = self.st_alloc.val();
                if self.bpage_free.val() < bit_cast::<FREE_BITS, 5>(self.need_pages.val()) {
                    // Not enough bpages: forget the RPC again, drop the packet.
                    self.drop_no_bpage_count.d.next = self.drop_no_bpage_count.q.val() + 1;
                    self.state.d.next = self.st_remove.val();
                } else {
                    self.m_peer_valid.next = true;
                }
                // A response begun: the request it answers is done with.
                self.m_sender_valid.next = self.fields.sender_id.val().get_bit(0);
                self.m_sender_kind.next = self.ev_begun.val();
            }
        } else if self.state.q.val() == self.st_alloc.val() {
            // Take one bpage; the pool shows the next one two cycles later.
            if self.bpage_valid.val() {
                self.bpage_pop.next = true;
                self.pages.write_enable.next = true;
                self.page_count.d.next = self.page_count.q.val() + 1;
                self.state.d.next = self.st_alloc_wait.val();
            }
        } else if self.state.q.val() == self.st_alloc_wait.val() {
            self.state.d.next = self.st_alloc.val();
            if self.page_count.q.val() == self.need_pages.val() {
                self.state.d.next = self.st_classify.val();
            }
        } else if self.state.q.val() == self.st_classify.val() {
            // The packet against the record. Gap ranges are disjoint and
            // never adjacent, so at most one extends on each side.
            self.k_len_differs.d.next = self.r_len.q.val() != self.p_msg_len.q.val();
            self.k_at_prefix.d.next = self.p_off.q.val() == self.r_prefix.q.val();
            self.k_covered.d.next = self.p_end.q.val() <= self.r_prefix.q.val();
            self.k_overlap.d.next = self.p_off.q.val() < self.r_prefix.q.val();
            for k in 0..GAPS {
                self.k_left[k].d.next =
                    self.r_valid[k].q.val() & (self.r_end[k].q.val() == self.p_off.q.val());
                self.k_right[k].d.next =
                    self.r_valid[k].q.val() & (self.r_start[k].q.val() == self.p_end.q.val());
                if self.r_valid[k].q.val()
                    & (self.r_start[k].q.val() <= self.p_off.q.val())
                    & (self.p_end.q.val() <= self.r_end[k].q.val())
                {
                    self.k_covered.d.next = true;
                }
                if self.r_valid[k].q.val()
                    & (self.p_off.q.val() < self.r_end[k].q.val())
                    & (self.p_end.q.val() > self.r_start[k].q.val())
                {
                    self.k_overlap.d.next = true;
                }
            }
            // The page RAM reads the first byte's bpage at this edge.
            self.pages.read_address.next = self.page_addr_first.val();
            self.state.d.next = self.st_merge.val();
        } else if self.state.q.val() == self.st_merge.val() {
            // The page RAM has read the first byte's bpage; now the last's.
            self.page0.d.next = self.pages.read_data.val();
            self.pages.read_address.next = self.page_addr_last.val();
            self.state.d.next = self.st_event.val();
            if self.merge_drop.val() {
                self.state.d.next = self.drop_to.val();
            }
            if self.k_covered.q.val() & !self.k_len_differs.q.val() {
                self.duplicates_count.d.next = self.duplicates_count.q.val() + 1;
                if self.r_prefix.q.val() == self.r_len.q.val() {
                    // A copy of a request in service: it is kept a while
                    // longer (its client may still be sending copies).
                    self.w_pending.d.next = true;
                    self.w_from.d.next = self.r_len.q.val();
                    self.w_to.d.next = self.r_len.q.val();
                    self.w_open.d.next = false;
                    self.w_new.d.next = false;
                }
            } else if self.merge_drop.val() {
                self.drop_bad_range_count.d.next = self.drop_bad_range_count.q.val() + 1;
            } else {
                self.r_received.d.next = self.r_received.q.val()
                    + bit_cast::<LEN_BITS, 16>(self.fields.payload_len.val());
                if self.k_at_prefix.q.val() {
                    self.r_prefix.d.next = self.p_end.q.val();
                    if self.has_right.val() {
                        self.r_prefix.d.next = self.right_end.val();
                    }
                }
                for k in 0..GAPS {
                    if self.k_right[k].q.val() {
                        if self.k_at_prefix.q.val() | self.has_left_gap.val() {
                            // Joined to what is on the packet's left.
                            self.r_valid[k].d.next = false;
                        } else {
                            self.r_start[k].d.next = self.p_off.q.val();
                        }
                    }
                    if self.k_left[k].q.val() {
                        self.r_end[k].d.next = self.p_end.q.val();
                        if self.has_right.val() {
                            self.r_end[k].d.next = self.right_end.val();
                        }
                    }
                    if self.isolated.val() & self.new_gap[k].val() {
                        self.r_valid[k].d.next = true;
                        self.r_start[k].d.next = self.p_off.q.val();
                        self.r_end[k].d.next = self.p_end.q.val();
                    }
                }
            }
        } else if self.state.q.val() == self.st_wait_writer.val() {
            // The message's last bytes: once the writer has put every
            // payload beat out, the completion (which must not pass them).
            if self.wr_idle.val() {
                self.cpl_index.d.next = 0.into();
                self.page_list.d.next = 0.into();
                self.state.d.next = self.st_cpl_pages.val();
            }
        } else if self.state.q.val() == self.st_event.val() {
            // The grant scheduler hears of the bytes before they are
            // written (a GRANT need not wait for the payload's DMA), and the
            // record is written as it does. Meanwhile the page RAM shows the
            // last byte's bpage, and the write's addresses are set up.
            self.pages.read_address.next = self.page_addr_last.val();
            self.m_evt_valid.next = !self.job_valid.q.val();
            self.rpc_state.write_enable.next = self.m_evt_ready.val() & !self.job_valid.q.val();
            // Payload byte i of the frame (i >= 90) lands at base + i.
            if !self.job_valid.q.val() {
                // (While a job waits, its registers are its own.)
                self.job_base0.d.next = self.sel_rx_area.val()
                    + (bit_cast::<64, BPAGE_BITS>(self.page0.q.val()) << 16)
                    + self.offset_in_page.val()
                    - bit_cast::<64, 16>(self.payload_start.val());
                self.job_base1.d.next = self.sel_rx_area.val()
                    + (bit_cast::<64, BPAGE_BITS>(self.pages.read_data.val()) << 16)
                    + self.offset_in_page.val()
                    - bit_cast::<64, 16>(self.payload_start.val())
                    - 65536;
                self.job_bound.d.next = 0xffff.into();
                if self.p_off.q.val().get_bits::<4>(16) != self.p_last.val().get_bits::<4>(16) {
                    self.job_bound.d.next =
                        self.payload_start.val() - self.p_off.q.val().get_bits::<16>(0);
                }
                self.job_end.d.next = self.payload_start.val() + self.fields.payload_len.val();
            }
            if self.m_evt_ready.val() & !self.job_valid.q.val() {
                self.w_pending.d.next = true;
                self.w_from.d.next = self.r_prefix.q.val();
                self.w_to.d.next = self.w_min.val();
                self.w_open.d.next = self.no_gap.val();
                self.w_new.d.next = self.fresh.q.val();
                self.fresh.d.next = false;
                self.job_valid.d.next = true;
                self.job_drop.d.next = false;
                self.state.d.next = self.st_head0.val();
                if self.r_prefix.q.val() == self.r_len.q.val() {
                    self.state.d.next = self.st_wait_writer.val();
                }
                self.last_valid.d.next = true;
                self.last_key.d.next = self.key.q.val();
            }
        } else if self.state.q.val() == self.st_cpl_pages.val() {
            // Read list entry `cpl_index`; take entry `cpl_index - 1`.
            self.pages.read_address.next = self.list_addr.val();
            self.cpl_index.d.next = self.cpl_index.q.val() + 1;
            if self.cpl_index.q.val() == 1 {
                self.first_page.d.next = self.pages.read_data.val();
            }
            if self.cpl_index.q.val() >= 2 {
                // Shifted in from the top: after entries 1..15, entry 1 is
                // at the bottom. Entries past the message are zero.
                self.page_list.d.next = self.page_list.q.val() >> 12;
                if self.cpl_index.q.val() <= self.need_pages.val() {
                    self.page_list.d.next = (self.page_list.q.val() >> 12)
                        | (bit_cast::<{ BPAGE_BITS * 15 }, BPAGE_BITS>(self.pages.read_data.val())
                            << 168);
                }
            }
            if self.cpl_index.q.val() == 16 {
                self.state.d.next = self.st_complete.val();
            }
        } else if self.state.q.val() == self.st_complete.val() {
            self.m_cpl_valid.next = true;
            if self.m_cpl_ready.val() {
                self.messages_count.d.next = self.messages_count.q.val() + 1;
                // A response: our RPC as a client is done; ack it, now and
                // in the next DATA to that server.
                self.m_owed_ack_valid.next = self.fields.sender_id.val().get_bit(0);
                self.m_ack_valid.next = self.fields.sender_id.val().get_bit(0);
                self.state.d.next = self.st_remove.val();
                // A response is remembered as it leaves the table (a request
                // when its response is released: until then its copies find
                // it in the table, where they keep it alive).
                self.recent_push.next = self.fields.sender_id.val().get_bit(0);
                if !self.fields.sender_id.val().get_bit(0) {
                    // A request stays until its response is released (the
                    // TX engine says), so that a copy of it is a duplicate,
                    // not a new RPC: at most once. Its resend
                    // timer entry asks for nothing and expires it after
                    // timeout_ticks without a reply or a copy.
                    self.last_valid.d.next = false;
                    self.m_watch_valid.next = true;
                    self.m_watch_from.next = self.r_len.q.val();
                    self.m_watch_to.next = self.r_len.q.val();
                    self.state.d.next = self.st_head0.val();
                }
            }
        } else if self.state.q.val() == self.st_remove.val() {
            self.last_valid.d.next = false;
            if self.m_rpc_ready.val() {
                // The message is gone: the resend timer forgets it.
                self.m_watch_valid.next = true;
                self.m_watch_live.next = false;
                self.state.d.next = self.st_remove_wait.val();
            }
        } else if self.state.q.val() == self.st_remove_wait.val() {
            if self.s_rpc_valid.val() {
                // A response complete (its record all in) had its payload
                // job at EVENT; a packet dropped for want of bpages (its
                // record new and empty) has its beats in `pay` skipped now.
                self.state.d.next = self.drop_to.val();
                if self.r_prefix.q.val() == self.r_len.q.val() {
                    self.state.d.next = self.st_head0.val();
                }
            }
        } else if self.state.q.val() == self.st_drain.val() {
            // A frame dropped: the writer skips what of it went to `pay`.
            if !self.pump_data.q.val() {
                self.state.d.next = self.st_head0.val();
            } else if !self.job_valid.q.val() {
                self.job_valid.d.next = true;
                self.job_drop.d.next = true;
                self.state.d.next = self.st_head0.val();
            }
        } else if self.state.q.val() == self.st_exp_remove.val() {
            // Free the slot by number; the table answers with its key.
            if self.m_rpc_ready.val() {
                self.state.d.next = self.st_exp_remove_wait.val();
            }
        } else if self.state.q.val() == self.st_exp_remove_wait.val() {
            // (The state RAM reads `slot` meanwhile.)
            if self.s_rpc_valid.val() {
                self.gone_key.d.next = self.s_rpc_key.val();
                self.state.d.next = self.st_head0.val();
                if self.s_rpc_hit.val() {
                    self.state.d.next = self.st_exp_record.val();
                }
            }
        } else if self.state.q.val() == self.st_exp_record.val() {
            self.r_len.d.next = self.rpc_state.read_data.val().get_bits::<LEN_BITS>(0);
            self.endpoint.d.next = self.read_endpoint.val();
            self.gone_open.d.next = self.read_live.val();
            self.cpl_index.d.next = 0.into();
            self.state.d.next = self.st_exp_page.val();
            if self.rpc_state.read_data.val().get_bits::<LEN_BITS>(0)
                == self.rpc_state.read_data.val().get_bits::<LEN_BITS>(20)
            {
                // Delivered (a request in service that nobody asked about
                // for timeout_ticks): the host has its bpages.
                self.state.d.next = self.st_head0.val();
            }
        } else if self.state.q.val() == self.st_exp_page.val() {
            // Read page-list entry `cpl_index`.
            self.pages.read_address.next = self.list_addr.val();
            self.state.d.next = self.st_exp_push.val();
        } else if self.state.q.val() == self.st_exp_push.val() {
            // Push it back (the address held while the pool is busy).
            self.pages.read_address.next = self.list_addr.val();
            self.m_bpage_return_valid.next = self.gone_open.q.val();
            if self.m_bpage_return_ready.val() | !self.gone_open.q.val() {
                self.cpl_index.d.next = self.cpl_index.q.val() + 1;
                self.state.d.next = self.st_exp_page.val();
                if self.cpl_index.q.val() + 1 == self.gone_pages.val() {
                    self.state.d.next = self.st_exp_event.val();
                }
            }
        } else if self.state.q.val() == self.st_exp_event.val() {
            self.m_evt_valid.next = true;
            self.m_evt_remove.next = true;
            if self.m_evt_ready.val() {
                self.inbound_expired_count.d.next = self.inbound_expired_count.q.val() + 1;
                self.state.d.next = self.st_head0.val();
                if !self.gone_key.q.val().get_bit(0) & self.gone_open.q.val() {
                    // A response: the card's RPC as a client failed.
                    self.state.d.next = self.st_exp_cpl.val();
                }
            }
        } else if self.state.q.val() == self.st_exp_cpl.val() {
            self.m_cpl_valid.next = true;
            if self.m_cpl_ready.val() {
                self.state.d.next = self.st_head0.val();
            }
        } else if self.state.q.val() == self.st_refresh.val() {
            // A client asking for the response of a request delivered here:
            // the request is in service, and its client alive, so its
            // silence starts again (else it would expire while the host
            // works, and the client's next RESEND find no trace of it).
            // The TX engine answers BUSY for an RPC here (not all in, or in
            // service) or sends what is asked for. An RPC whose endpoint has
            // closed since is not here: no refresh (it expires), and the
            // answer is RPC_UNKNOWN (its client starts over, or gives up).
            self.m_sender_valid.next = true;
            self.m_sender_kind.next = self.ev_resend.val();
            self.m_sender_known.next = self.read_live.val();
            if (self.rpc_state.read_data.val().get_bits::<LEN_BITS>(20)
                == self.rpc_state.read_data.val().get_bits::<LEN_BITS>(0))
                & self.read_live.val()
            {
                self.m_watch_valid.next = true;
                self.m_watch_slot.next = self.resend_slot.q.val();
                self.m_watch_from.next = self.rpc_state.read_data.val().get_bits::<LEN_BITS>(0);
                self.m_watch_to.next = self.rpc_state.read_data.val().get_bits::<LEN_BITS>(0);
            }
            self.state.d.next = self.drop_to.val();
        } else if self.state.q.val() == self.st_served_remove.val() {
            if self.m_rpc_ready.val() {
                self.state.d.next = self.st_served_wait.val();
            }
        } else if self.state.q.val() == self.st_served_wait.val() {
            if self.s_rpc_valid.val() {
                // Its resend timer entry goes with it (else an expiry
                // could name the slot once another RPC has it), and its key
                // is remembered: a late copy is still a duplicate.
                self.recent_push.next = self.s_rpc_hit.val();
                self.recent_push_key.next = self.served_key.q.val();
                self.m_watch_valid.next = self.s_rpc_hit.val();
                self.m_watch_live.next = false;
                self.m_watch_slot.next = self.s_rpc_slot.val();
                self.state.d.next = self.st_head0.val();
            }
        }

        // ---- beat 0 of the next frame (`take_head`, above) ----
        // DECIDE reads only registers this writes at the edge.
        if self.take_head.val() {
            self.s_axis_tready.next = true;
            if self.s_axis_tvalid.val() {
                self.win0.d.next = self.swap.swapped.val();
                self.pump_data.d.next = false;
                self.seen_last.d.next = false;
                self.seen_recent.d.next = false;
                self.key.d.next = self.key_in.val();
                self.last_match.d.next = self.last_key.q.val() == self.key_in.val();
                self.is_data.d.next = self.fields_in.packet_type.val() == self.type_data.val();
                self.ends_in_decide.d.next = (self.fields_in.packet_type.val()
                    != self.type_data.val())
                    & (self.fields_in.packet_type.val() != self.type_need_ack.val())
                    & (self.fields_in.packet_type.val() != self.type_resend.val());
                for e in 0..ENDPOINTS {
                    self.match_ep[e].d.next = (self.ep_port[e].val() != 0)
                        & (self.ep_port[e].val() == self.fields_in.dport.val());
                }
                for r in 0..RECENT {
                    self.recent_match[r].d.next = self.recent_valid[r].q.val()
                        & (self.recent[r].q.val() == self.key_in.val());
                }
                if self.s_axis_tlast.val() {
                    self.win1.d.next = 0.into();
                }
            }
        }

        // ---- the pump: a frame's beats past its header, off the stream ----
        if self.pump_on.q.val() {
            self.s_axis_tready.next = !self.pump_data.q.val() | self.pay.s_ready.val();
            self.pay.s_valid.next = self.pump_data.q.val() & self.s_axis_tvalid.val();
            if self.s_axis_tvalid.val()
                & self.s_axis_tlast.val()
                & (!self.pump_data.q.val() | self.pay.s_ready.val())
            {
                self.pump_on.d.next = false;
            }
        }

        // ---- the writer: a job's beats from `pay` to the DMA write port ----
        // The waiting job's boundary beat (payload lanes [from, to) of it,
        // `from` 26 in beat 1, else 0; `to` its last lane + 1 in the last
        // beat, else 64): payload below the boundary lane (from < lane),
        // above it (lane < to). (Never empty: from < to, see `wr_bnd_low`.)
        self.h_last.next = self.job_end.q.val() - 1;
        self.h_last_lane.next = self.h_last.val().get_bits::<6>(0);
        self.h_last_shift.next = !self.h_last_lane.val();
        self.h_bnd_lane.next = self.job_bound.q.val().get_bits::<6>(0);
        self.h_bnd_first.next = self.job_bound.q.val().get_bits::<10>(6) == 1;
        self.h_bnd_last.next =
            self.job_bound.q.val().get_bits::<10>(6) == self.h_last.val().get_bits::<10>(6);
        self.h_bnd_in.next =
            self.job_bound.q.val().get_bits::<10>(6) <= self.h_last.val().get_bits::<10>(6);
        self.h_from_below.next = self.h_bnd_lane.val() != 0;
        if self.h_bnd_first.val() {
            self.h_from_below.next = self.h_bnd_lane.val() > self.first_lane.val();
        }
        self.h_to_above.next = true;
        if self.h_bnd_last.val() {
            self.h_to_above.next = self.h_bnd_lane.val() <= self.h_last_lane.val();
        }
        self.wr_free.next = !self.wr_on.q.val();
        if self.wr_on.q.val() & self.wr_drop.q.val() {
            self.pay.m_ready.next = true;
            if self.pay.m_valid.val() & self.pay_last.val() {
                self.wr_free.next = true;
            }
        } else if self.wr_on.q.val() {
            self.m_dma_wr_valid.next = self.pay.m_valid.val();
            self.pay.m_ready.next = self.m_dma_wr_ready.val() & self.final_part.val();
            if self.pay.m_valid.val() & self.m_dma_wr_ready.val() {
                if self.final_part.val() {
                    self.beat.d.next = self.beat.q.val() + 1;
                    self.second_half.d.next = false;
                    if self.pay_last.val() {
                        self.wr_free.next = true;
                    }
                } else {
                    self.second_half.d.next = true;
                }
            }
        }
        if self.wr_free.val() {
            self.wr_on.d.next = false;
            if self.job_valid.q.val() {
                // The next job, back to back.
                self.wr_on.d.next = true;
                self.wr_drop.d.next = self.job_drop.q.val();
                self.base0.d.next = self.job_base0.q.val();
                self.base1.d.next = self.job_base1.q.val();
                self.wr_last_beat.d.next = self.h_last.val().get_bits::<10>(6);
                self.wr_last_mask.d.next =
                    self.all_lanes.val() >> bit_cast::<64, 6>(self.h_last_shift.val());
                self.wr_bnd_beat.d.next = self.job_bound.q.val().get_bits::<10>(6);
                self.wr_bnd_mask.d.next =
                    !(self.all_lanes.val() << bit_cast::<64, 6>(self.h_bnd_lane.val()));
                self.wr_split.d.next =
                    self.h_bnd_in.val() & self.h_from_below.val() & self.h_to_above.val();
                self.wr_bnd_low.d.next = self.h_from_below.val();
                self.beat.d.next = 1.into();
                self.second_half.d.next = false;
                self.job_valid.d.next = false;
            }
        }

        if self.recent_push.val() {
            for r in 0..RECENT {
                if self.recent_next.q.val() == self.recent_index[r].val() {
                    self.recent[r].d.next = self.recent_push_key.val();
                    self.recent_valid[r].d.next = true;
                }
            }
            self.recent_next.d.next = self.recent_next.q.val() + 1;
        }

        self.messages.next = self.messages_count.q.val();
        self.grants_received.next = self.grants_count.q.val();
        self.resends_received.next = self.resends_count.q.val();
        self.acks_received.next = self.acks_count.q.val();
        self.cutoffs_received.next = self.cutoffs_count.q.val();
        self.need_acks_received.next = self.need_acks_count.q.val();
        self.other_control.next = self.other_control_count.q.val();
        self.drop_no_endpoint.next = self.drop_no_endpoint_count.q.val();
        self.drop_rpc_full.next = self.drop_rpc_full_count.q.val();
        self.drop_no_bpage.next = self.drop_no_bpage_count.q.val();
        self.drop_too_big.next = self.drop_too_big_count.q.val();
        self.duplicates.next = self.duplicates_count.q.val();
        self.drop_bad_range.next = self.drop_bad_range_count.q.val();
        self.inbound_expired.next = self.inbound_expired_count.q.val();

        // A port written: the last RPC's record in registers may now be
        // another endpoint's; the next packet looks its RPC up again.
        if self.any_restart.val() {
            self.last_valid.d.next = false;
            self.seen_last.d.next = false;
            for e in 0..ENDPOINTS {
                self.match_ep[e].d.next = false;
            }
        }
        if self.reset.val() {
            self.state.d.next = self.st_head0.val();
            self.pump_on.d.next = false;
            self.job_valid.d.next = false;
            self.wr_on.d.next = false;
            self.last_valid.d.next = false;
            self.recent_next.d.next = 0.into();
            for r in 0..RECENT {
                self.recent_valid[r].d.next = false;
            }
            self.messages_count.d.next = 0.into();
            self.grants_count.d.next = 0.into();
            self.resends_count.d.next = 0.into();
            self.acks_count.d.next = 0.into();
            self.cutoffs_count.d.next = 0.into();
            self.need_acks_count.d.next = 0.into();
            self.need_ack.d.next = false;
            self.resend.d.next = false;
            self.other_control_count.d.next = 0.into();
            self.drop_no_endpoint_count.d.next = 0.into();
            self.drop_rpc_full_count.d.next = 0.into();
            self.drop_no_bpage_count.d.next = 0.into();
            self.drop_too_big_count.d.next = 0.into();
            self.duplicates_count.d.next = 0.into();
            self.drop_bad_range_count.d.next = 0.into();
            self.inbound_expired_count.d.next = 0.into();
        }
    }
}

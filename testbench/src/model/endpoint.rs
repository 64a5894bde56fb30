//! The endpoint: packet dispatch, the application API, and frame building.
//!
//! DESIGN NOTES
//! - Interface: `handle_frame(now, frame)` (or `handle_bytes` for raw frames,
//!   which decodes and counts rejects), `next_frame(now)` pulled by the link
//!   when it is free, `tick(now)` every `tick_cycles`, `send_request`/`reply`
//!   from the application and `poll_event` for what the application learns.
//!   Nothing here knows about the event loop, so a test can drive an endpoint
//!   by hand, cycle by cycle.
//! - Reliability is the receiver's job, as in Homa: the receiver of a message
//!   asks for missing granted bytes with RESEND (see `timer`); a sender
//!   answers a RESEND with the bytes, or BUSY when it cannot send yet, or
//!   RPC_UNKNOWN when it has no such RPC (a client then starts the request
//!   over; a server forgets the RPC). A RESEND implies a grant up to its end,
//!   which repairs a lost GRANT.
//! - End of life: a client that has its whole response drops the RPC and
//!   remembers an ack for the server, which rides in the next DATA to that
//!   peer or in an ACK answering NEED_ACK. The server keeps the RPC (and its
//!   response, for retransmission) until acked or timed out.
//! - Duplicates are harmless by construction: reassembly ignores bytes it has
//!   (`incoming`), a finished client RPC is gone so its late packets are
//!   dropped, and a server ignores request bytes for an RPC in service.

use std::collections::VecDeque;
use std::net::Ipv4Addr;

use homa_wire::{
    AckEntry, Acks, Body, CommonHeader, Cutoffs, Data, DecodeError, EthernetHeader, Frame, Grant,
    HomaPacket, Ipv4Header, Resend,
};
use serde::Serialize;
use tracing::{debug, trace};

use super::config::{Cycles, HomaConfig, UNKNOWN_PEER_CUTOFFS};
use super::grant::GrantScheduler;
use super::incoming::{Accepted, MessageIn};
use super::outgoing::{MessageOut, Retransmit, SendQueue};
use super::rpc::{HostAddr, Rpc, RpcKey, RpcState};
use super::FxMap;

/// First client port; server ports are 1..FIRST_CLIENT_PORT.
pub const FIRST_CLIENT_PORT: u16 = 0x8000;

/// Priority of control packets (the highest).
pub const CONTROL_PRIORITY: u8 = 7;

/// RESEND length meaning "everything sent so far".
pub const RESEND_ALL: u32 = u32::MAX;

/// What the application learns from the endpoint.
#[derive(Debug, PartialEq, Eq)]
pub enum AppEvent {
    /// Server side: a complete request; answer it with `Endpoint::reply(key, ..)`.
    Request {
        key: RpcKey,
        client: HostAddr,
        client_port: u16,
        server_port: u16,
        payload: Vec<u8>,
    },
    /// Client side: the complete response of RPC `id`.
    Response {
        id: u64,
        server: Ipv4Addr,
        payload: Vec<u8>,
    },
    /// Client side: RPC `id` failed.
    Failed {
        id: u64,
        server: Ipv4Addr,
        error: RpcError,
    },
}

/// Why an RPC failed (reported to the application).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RpcError {
    #[error("RPC timed out: no packet from the server for {silent_ticks} ticks ({silent_cycles} cycles)")]
    Timeout {
        silent_ticks: u32,
        silent_cycles: Cycles,
    },
}

/// Errors of the endpoint's API.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HomaError {
    #[error("message of {length} bytes exceeds max_message_length {max}")]
    MessageTooLong { length: usize, max: u32 },
    #[error("server port {0} is not in 1..32767")]
    BadServerPort(u16),
    #[error("no RPC {0:?}")]
    NoSuchRpc(RpcKey),
    #[error("RPC {0:?} is not waiting for a reply (only a server RPC in service is)")]
    NotInService(RpcKey),
    #[error("frame rejected: {0}")]
    Decode(#[from] DecodeError),
}

/// Event counters: the hardware has a CSR per field.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counters {
    pub frames_in: u64,
    pub frames_out: u64,
    pub data_packets_out: u64,
    pub data_bytes_out: u64,
    pub retransmitted_packets: u64,
    pub grants_out: u64,
    pub fifo_grants_out: u64,
    pub resends_out: u64,
    pub busy_out: u64,
    pub rpc_unknown_out: u64,
    pub need_ack_out: u64,
    pub acks_out: u64,
    pub cutoffs_out: u64,
    pub duplicate_data: u64,
    pub rx_decode_errors: u64,
    pub rx_not_for_us: u64,
    pub data_for_unknown_rpc: u64,
    pub client_timeouts: u64,
    pub server_timeouts: u64,
    pub client_restarts: u64,
    pub requests_delivered: u64,
    pub responses_delivered: u64,
    /// Largest `total_incoming` right after a grant was issued; never above
    /// `max_incoming`.
    pub max_incoming_after_grant: u64,
}

/// What the endpoint knows about a peer host.
#[derive(Debug)]
pub struct Peer {
    /// The peer's unscheduled cutoffs, from its CUTOFFS (version 0: unknown).
    pub cutoffs: [u32; 8],
    pub cutoff_version: u16,
    /// Acks of finished client RPCs not yet told to this peer.
    pub pending_acks: Vec<AckEntry>,
    /// Tick of the last CUTOFFS sent to it (at most one per tick).
    pub cutoffs_sent_tick: Option<u64>,
}

impl Default for Peer {
    fn default() -> Self {
        Peer {
            cutoffs: UNKNOWN_PEER_CUTOFFS,
            cutoff_version: 0,
            pending_acks: Vec::new(),
            cutoffs_sent_tick: None,
        }
    }
}

/// One Homa endpoint (one host's transport).
pub struct Endpoint {
    pub(crate) cfg: HomaConfig,
    pub(crate) addr: HostAddr,
    /// Every live RPC, by (peer, local id).
    pub(crate) rpcs: FxMap<RpcKey, Rpc>,
    pub(crate) peers: FxMap<Ipv4Addr, Peer>,
    /// Next client id to hand out (even).
    pub(crate) next_client_id: u64,
    /// Next client port to hand out.
    pub(crate) client_port: u16,
    /// Birth counter ordering messages by age.
    pub(crate) next_birth: u64,
    /// Control packets waiting for the link (served first).
    pub(crate) control: VecDeque<Frame>,
    pub(crate) sendq: SendQueue,
    pub(crate) grants: GrantScheduler,
    pub(crate) events: VecDeque<AppEvent>,
    /// Ticks so far.
    pub(crate) ticks: u64,
    pub(crate) counters: Counters,
}

impl Endpoint {
    pub fn new(cfg: HomaConfig, addr: HostAddr) -> Endpoint {
        Endpoint {
            cfg,
            addr,
            rpcs: FxMap::default(),
            peers: FxMap::default(),
            next_client_id: 2,
            client_port: FIRST_CLIENT_PORT,
            next_birth: 0,
            control: VecDeque::new(),
            sendq: SendQueue::default(),
            grants: GrantScheduler::default(),
            events: VecDeque::new(),
            ticks: 0,
            counters: Counters::default(),
        }
    }

    pub fn config(&self) -> &HomaConfig {
        &self.cfg
    }

    pub fn addr(&self) -> HostAddr {
        self.addr
    }

    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// Live RPCs (client and server).
    pub fn rpc_count(&self) -> usize {
        self.rpcs.len()
    }

    /// State of an RPC, if it exists.
    pub fn rpc_state(&self, key: RpcKey) -> Option<RpcState> {
        self.rpcs.get(&key).map(|r| r.state)
    }

    /// Bytes the sender owes its oldest message (the pacer's FIFO credit).
    pub fn fifo_credit_bytes(&self) -> u64 {
        self.sendq.fifo_credit_bytes
    }

    /// Granted-but-not-received bytes over all inbound messages.
    pub fn total_incoming(&self) -> u64 {
        self.grants.total_incoming
    }

    /// Starts an RPC: sends `payload` as a request to `server:server_port`.
    /// Returns the client id; the outcome arrives as a `Response` or `Failed` event.
    pub fn send_request(
        &mut self,
        now: Cycles,
        server: HostAddr,
        server_port: u16,
        payload: Vec<u8>,
    ) -> Result<u64, HomaError> {
        if server_port == 0 || server_port >= FIRST_CLIENT_PORT {
            return Err(HomaError::BadServerPort(server_port));
        }
        self.check_length(payload.len())?;
        let id = self.next_client_id;
        self.next_client_id += 2;
        let key = RpcKey {
            peer: server.ip,
            id,
        };
        let msgout = self.new_msgout(server.ip, payload);
        let mut rpc = Rpc {
            key,
            state: RpcState::Outgoing,
            peer: server,
            local_port: self.client_port,
            peer_port: server_port,
            msgout: Some(msgout),
            msgin: None,
            silent_ticks: 0,
            created: now,
        };
        self.sendq.update(
            key,
            rpc.msgout.as_mut().unwrap(),
            self.cfg.throttle_min_bytes,
        );
        debug!(now, ?key, "send_request");
        self.rpcs.insert(key, rpc);
        Ok(id)
    }

    /// Server side: answers the request of RPC `key` (from a `Request` event).
    pub fn reply(&mut self, now: Cycles, key: RpcKey, payload: Vec<u8>) -> Result<(), HomaError> {
        self.check_length(payload.len())?;
        let rpc = self.rpcs.get(&key).ok_or(HomaError::NoSuchRpc(key))?;
        if rpc.state != RpcState::InService {
            return Err(HomaError::NotInService(key));
        }
        let msgout = self.new_msgout(key.peer, payload);
        let rpc = self.rpcs.get_mut(&key).unwrap();
        rpc.msgout = Some(msgout);
        rpc.state = RpcState::Outgoing;
        rpc.silent_ticks = 0;
        self.sendq.update(
            key,
            rpc.msgout.as_mut().unwrap(),
            self.cfg.throttle_min_bytes,
        );
        trace!(now, ?key, "reply");
        Ok(())
    }

    /// The next application event, if any.
    pub fn poll_event(&mut self) -> Option<AppEvent> {
        self.events.pop_front()
    }

    /// Whether `next_frame` would return a frame.
    pub fn has_frame(&self) -> bool {
        !self.control.is_empty()
            || !self.sendq.retransmits.is_empty()
            || !self.sendq.bypass.is_empty()
            || !self.sendq.srpt.is_empty()
    }

    fn check_length(&self, length: usize) -> Result<(), HomaError> {
        if length > self.cfg.max_message_length as usize || length == 0 {
            return Err(HomaError::MessageTooLong {
                length,
                max: self.cfg.max_message_length,
            });
        }
        Ok(())
    }

    fn new_msgout(&mut self, peer: Ipv4Addr, payload: Vec<u8>) -> MessageOut {
        let length = payload.len() as u32;
        let cutoffs = self.peers.entry(peer).or_default().cutoffs;
        let unscheduled = self.cfg.unscheduled(length);
        let birth = self.next_birth;
        self.next_birth += 1;
        MessageOut {
            payload,
            length,
            unscheduled,
            granted: unscheduled,
            next_xmit_offset: 0,
            unsched_priority: HomaConfig::unsched_priority(&cutoffs, length),
            sched_priority: 0,
            birth,
            queued: None,
        }
    }

    // ---------------------------------------------------------------- transmit

    /// The next frame to put on the wire, chosen now (control, retransmissions,
    /// short messages, then SRPT; see `outgoing`).
    pub fn next_frame(&mut self, now: Cycles) -> Option<Frame> {
        let frame = self.choose_frame(now)?;
        self.counters.frames_out += 1;
        Some(frame)
    }

    fn choose_frame(&mut self, _now: Cycles) -> Option<Frame> {
        if let Some(f) = self.control.pop_front() {
            return Some(f);
        }
        let max_payload = self.cfg.max_payload();
        while let Some(rt) = self.sendq.retransmits.front_mut() {
            let key = rt.key;
            let usable = self.rpcs.get(&key).and_then(|rpc| {
                let msg = rpc.msgout.as_ref()?;
                (rpc.state == RpcState::Outgoing && rt.offset < rt.end.min(msg.next_xmit_offset))
                    .then_some(())
            });
            if usable.is_none() {
                self.sendq.retransmits.pop_front();
                continue;
            }
            let rpc = self.rpcs.get(&key).unwrap();
            let msg = rpc.msgout.as_ref().unwrap();
            let offset = rt.offset;
            let end = msg
                .packet_end(offset, max_payload)
                .min(rt.end)
                .min(msg.next_xmit_offset);
            let priority = rt.priority;
            rt.offset = end;
            if rt.offset >= rt.end.min(msg.next_xmit_offset) {
                self.sendq.retransmits.pop_front();
            }
            self.counters.retransmitted_packets += 1;
            return Some(self.data_frame(key, offset, end, priority, true));
        }
        let srpt_first = self.sendq.srpt.first().map(|e| e.2);
        let key = self.sendq.pick(max_payload, self.cfg.pacer_fifo_fraction)?;
        let rpc = self.rpcs.get_mut(&key).expect("queued message has an RPC");
        let msg = rpc.msgout.as_mut().expect("queued RPC has a message");
        let offset = msg.next_xmit_offset;
        let end = msg.packet_end(offset, max_payload);
        let priority = msg.priority_at(offset);
        msg.next_xmit_offset = end;
        let in_srpt = matches!(msg.queued, Some(super::outgoing::SendKey::Srpt { .. }));
        self.sendq.update(key, msg, self.cfg.throttle_min_bytes);
        if in_srpt && Some(key) == srpt_first {
            let oldest = self.sendq.fifo.first().map(|e| e.1);
            if oldest.is_some() && oldest != Some(key) {
                self.sendq
                    .charge_srpt(end - offset, self.cfg.pacer_fifo_fraction);
            } else {
                self.sendq.fifo_credit_bytes = 0;
            }
        }
        if end == msg.length && !rpc.is_client() {
            // Response fully sent: the NEED_ACK clock starts now.
            rpc.silent_ticks = 0;
        }
        Some(self.data_frame(key, offset, end, priority, false))
    }

    /// Builds the DATA packet for bytes [offset, end) of RPC `key`'s outgoing
    /// message, piggybacking one pending ack for the peer.
    fn data_frame(
        &mut self,
        key: RpcKey,
        offset: u32,
        end: u32,
        priority: u8,
        retransmit: bool,
    ) -> Frame {
        let rpc = &self.rpcs[&key];
        let msg = rpc.msgout.as_ref().unwrap();
        let peer = self.peers.entry(key.peer).or_default();
        let ack = peer.pending_acks.pop().unwrap_or_default();
        self.counters.data_packets_out += 1;
        self.counters.data_bytes_out += (end - offset) as u64;
        let mut common = CommonHeader::new(
            rpc.local_port,
            rpc.peer_port,
            key.id,
            homa_wire::PacketType::Data,
        );
        common.sequence = offset;
        Frame {
            eth: EthernetHeader {
                dst: rpc.peer.mac,
                src: self.addr.mac,
            },
            ip: Ipv4Header::homa(self.addr.ip, rpc.peer.ip, priority),
            homa: HomaPacket {
                common,
                body: Body::Data(Data {
                    message_length: msg.length,
                    incoming: msg.granted.min(msg.length),
                    ack,
                    cutoff_version: peer.cutoff_version,
                    retransmit: retransmit as u8,
                    pad: [0; 3],
                    seg_offset: offset,
                    payload: msg.payload[offset as usize..end as usize].to_vec(),
                }),
            },
        }
    }

    /// Queues a control packet to `peer`.
    pub(crate) fn send_control(
        &mut self,
        peer: HostAddr,
        sport: u16,
        dport: u16,
        sender_id: u64,
        body: Body,
    ) {
        match &body {
            Body::Grant(_) => self.counters.grants_out += 1,
            Body::Resend(_) => self.counters.resends_out += 1,
            Body::Busy => self.counters.busy_out += 1,
            Body::RpcUnknown => self.counters.rpc_unknown_out += 1,
            Body::NeedAck => self.counters.need_ack_out += 1,
            Body::Ack(_) => self.counters.acks_out += 1,
            Body::Cutoffs(_) => self.counters.cutoffs_out += 1,
            _ => {}
        }
        let common = CommonHeader::new(sport, dport, sender_id, body.packet_type());
        self.control.push_back(Frame {
            eth: EthernetHeader {
                dst: peer.mac,
                src: self.addr.mac,
            },
            ip: Ipv4Header::homa(self.addr.ip, peer.ip, CONTROL_PRIORITY),
            homa: HomaPacket { common, body },
        });
    }

    /// Queues a control packet about `rpc` to its peer.
    pub(crate) fn send_rpc_control(&mut self, key: RpcKey, body: Body) {
        let rpc = &self.rpcs[&key];
        let (peer, sport, dport) = (rpc.peer, rpc.local_port, rpc.peer_port);
        self.send_control(peer, sport, dport, key.id, body);
    }

    // ----------------------------------------------------------------- receive

    /// Decodes a raw frame and handles it; a frame the decoder rejects is
    /// counted (`rx_decode_errors`) and dropped.
    pub fn handle_bytes(&mut self, now: Cycles, bytes: &[u8]) -> Result<(), HomaError> {
        match Frame::decode(bytes) {
            Ok(frame) => {
                self.handle_frame(now, frame);
                Ok(())
            }
            Err(e) => {
                self.counters.rx_decode_errors += 1;
                debug!(now, error = %e, "frame rejected by the decoder");
                Err(e.into())
            }
        }
    }

    /// Handles one received frame.
    pub fn handle_frame(&mut self, now: Cycles, frame: Frame) {
        self.counters.frames_in += 1;
        if frame.ip.dst != self.addr.ip {
            self.counters.rx_not_for_us += 1;
            return;
        }
        let from = HostAddr {
            ip: frame.ip.src,
            mac: frame.eth.src,
        };
        let common = frame.homa.common;
        let key = RpcKey {
            peer: from.ip,
            id: common.sender_id ^ 1,
        };
        match frame.homa.body {
            Body::Data(d) => self.handle_data(now, from, common, key, d),
            Body::Grant(g) => self.handle_grant(key, g),
            Body::Resend(r) => self.handle_resend(from, common, key, r),
            Body::RpcUnknown => self.handle_rpc_unknown(key),
            Body::Busy => {
                if let Some(rpc) = self.rpcs.get_mut(&key) {
                    rpc.silent_ticks = 0;
                }
            }
            Body::Cutoffs(c) => {
                let peer = self.peers.entry(from.ip).or_default();
                peer.cutoffs = c.unsched_cutoffs;
                peer.cutoff_version = c.cutoff_version;
            }
            Body::Freeze => {}
            Body::NeedAck => self.handle_need_ack(from, common, key),
            Body::Ack(a) => {
                self.server_acked(key);
                for entry in a.acks {
                    self.server_acked(RpcKey {
                        peer: from.ip,
                        id: entry.client_id ^ 1,
                    });
                }
            }
        }
    }

    fn handle_data(
        &mut self,
        now: Cycles,
        from: HostAddr,
        common: CommonHeader,
        key: RpcKey,
        d: Data,
    ) {
        if d.ack.client_id != 0 {
            self.server_acked(RpcKey {
                peer: from.ip,
                id: d.ack.client_id ^ 1,
            });
        }
        if d.cutoff_version != self.cfg.cutoff_version {
            self.maybe_send_cutoffs(from, common);
        }
        let offset = d.payload_offset(&common);
        if !self.rpcs.contains_key(&key) {
            if key.is_client() || common.dport == 0 || common.dport >= FIRST_CLIENT_PORT {
                // A finished (or never known) client RPC: a late duplicate.
                self.counters.data_for_unknown_rpc += 1;
                return;
            }
            self.rpcs.insert(
                key,
                Rpc {
                    key,
                    state: RpcState::Incoming,
                    peer: from,
                    local_port: common.dport,
                    peer_port: common.sport,
                    msgout: None,
                    msgin: None,
                    silent_ticks: 0,
                    created: now,
                },
            );
        }
        let next_birth = &mut self.next_birth;
        let rpc = self.rpcs.get_mut(&key).unwrap();
        rpc.silent_ticks = 0;
        match rpc.state {
            RpcState::InService => {
                self.counters.duplicate_data += 1;
                return;
            }
            RpcState::Outgoing if !rpc.is_client() => {
                self.counters.duplicate_data += 1;
                return;
            }
            RpcState::Outgoing => {
                // First response byte: the request is delivered.
                rpc.state = RpcState::Incoming;
                if let Some(m) = rpc.msgout.as_mut() {
                    self.sendq.remove(key, m);
                }
            }
            RpcState::Incoming => {}
        }
        let msgin = rpc.msgin.get_or_insert_with(|| {
            let birth = *next_birth;
            *next_birth += 1;
            MessageIn::new(d.message_length, d.incoming, birth)
        });
        if d.message_length != msgin.length {
            self.counters.duplicate_data += 1;
            return;
        }
        msgin.granted = msgin.granted.max(d.incoming.min(msgin.length));
        match msgin.accept(offset, &d.payload) {
            Accepted::Duplicate => self.counters.duplicate_data += 1,
            Accepted::New(_) => {}
        }
        self.grants.update_message(&self.cfg, key, msgin);
        if msgin.bytes_remaining == 0 {
            self.message_complete(key);
        }
        self.schedule_grants();
    }

    /// The inbound message of `key` is complete: hand it to the application.
    fn message_complete(&mut self, key: RpcKey) {
        let rpc = self.rpcs.get_mut(&key).unwrap();
        let mut msgin = rpc.msgin.take().unwrap();
        self.grants.remove_message(key, &mut msgin);
        let payload = std::mem::take(&mut msgin.buffer);
        if rpc.is_client() {
            let rpc = self.rpcs.remove(&key).unwrap();
            self.counters.responses_delivered += 1;
            self.peers
                .entry(key.peer)
                .or_default()
                .pending_acks
                .push(AckEntry {
                    client_id: key.id,
                    server_port: rpc.peer_port,
                });
            self.events.push_back(AppEvent::Response {
                id: key.id,
                server: key.peer,
                payload,
            });
        } else {
            rpc.state = RpcState::InService;
            self.counters.requests_delivered += 1;
            self.events.push_back(AppEvent::Request {
                key,
                client: rpc.peer,
                client_port: rpc.peer_port,
                server_port: rpc.local_port,
                payload,
            });
        }
    }

    fn maybe_send_cutoffs(&mut self, from: HostAddr, common: CommonHeader) {
        let ticks = self.ticks;
        let peer = self.peers.entry(from.ip).or_default();
        if peer.cutoffs_sent_tick == Some(ticks) {
            return;
        }
        peer.cutoffs_sent_tick = Some(ticks);
        let body = Body::Cutoffs(Cutoffs {
            unsched_cutoffs: self.cfg.unsched_cutoffs,
            cutoff_version: self.cfg.cutoff_version,
        });
        self.send_control(from, common.dport, common.sport, common.sender_id ^ 1, body);
    }

    fn handle_grant(&mut self, key: RpcKey, g: Grant) {
        let Some(rpc) = self.rpcs.get_mut(&key) else {
            return;
        };
        rpc.silent_ticks = 0;
        if rpc.state != RpcState::Outgoing {
            return;
        }
        if let Some(msg) = rpc.msgout.as_mut() {
            if g.offset > msg.granted {
                msg.granted = g.offset.min(msg.length);
            }
            msg.sched_priority = g.priority;
            self.sendq.update(key, msg, self.cfg.throttle_min_bytes);
        }
    }

    fn handle_resend(&mut self, from: HostAddr, common: CommonHeader, key: RpcKey, r: Resend) {
        let Some(rpc) = self.rpcs.get_mut(&key) else {
            self.send_control(from, common.dport, common.sport, key.id, Body::RpcUnknown);
            return;
        };
        rpc.silent_ticks = 0;
        let sending = rpc.state == RpcState::Outgoing;
        let Some(msg) = rpc.msgout.as_mut().filter(|_| sending) else {
            self.send_rpc_control(key, Body::Busy);
            return;
        };
        let end = if r.length == RESEND_ALL {
            msg.next_xmit_offset
        } else {
            let end = r.offset.saturating_add(r.length).min(msg.length);
            if end > msg.granted {
                msg.granted = end;
            }
            end
        };
        let resend_end = end.min(msg.next_xmit_offset);
        let mut answered = false;
        if r.offset < resend_end {
            self.sendq.retransmits.push_back(Retransmit {
                key,
                offset: r.offset,
                end: resend_end,
                priority: r.priority,
            });
            answered = true;
        }
        if end > msg.next_xmit_offset && msg.can_send() {
            answered = true;
        }
        self.sendq.update(key, msg, self.cfg.throttle_min_bytes);
        if !answered {
            self.send_rpc_control(key, Body::Busy);
        }
    }

    fn handle_rpc_unknown(&mut self, key: RpcKey) {
        let Some(rpc) = self.rpcs.get_mut(&key) else {
            return;
        };
        if rpc.is_client() {
            // The server lost the RPC: start the request over from byte 0.
            self.counters.client_restarts += 1;
            rpc.state = RpcState::Outgoing;
            rpc.silent_ticks = 0;
            if let Some(mut m) = rpc.msgin.take() {
                self.grants.remove_message(key, &mut m);
            }
            if let Some(msg) = rpc.msgout.as_mut() {
                msg.next_xmit_offset = 0;
                msg.granted = msg.unscheduled;
                self.sendq.update(key, msg, self.cfg.throttle_min_bytes);
            }
        } else {
            self.free_rpc(key);
        }
    }

    fn handle_need_ack(&mut self, from: HostAddr, common: CommonHeader, key: RpcKey) {
        if let Some(rpc) = self.rpcs.get(&key) {
            if rpc.is_client() {
                return; // still in progress: the response is not complete here
            }
        }
        if !key.is_client() {
            return;
        }
        let peer = self.peers.entry(from.ip).or_default();
        let mut acks = vec![AckEntry {
            client_id: key.id,
            server_port: common.sport,
        }];
        while acks.len() < homa_wire::layout::ack::MAX_ACKS {
            match peer.pending_acks.pop() {
                Some(a) => acks.push(a),
                None => break,
            }
        }
        self.send_control(
            from,
            common.dport,
            common.sport,
            key.id,
            Body::Ack(Acks { acks }),
        );
    }

    /// A client acknowledged server RPC `key`: free it.
    fn server_acked(&mut self, key: RpcKey) {
        if key.is_client() {
            return;
        }
        if self.rpcs.contains_key(&key) {
            self.free_rpc(key);
        }
    }

    /// Removes an RPC and everything that refers to it.
    pub(crate) fn free_rpc(&mut self, key: RpcKey) {
        if let Some(mut rpc) = self.rpcs.remove(&key) {
            if let Some(m) = rpc.msgout.as_mut() {
                self.sendq.remove(key, m);
            }
            if let Some(mut m) = rpc.msgin.take() {
                self.grants.remove_message(key, &mut m);
                self.schedule_grants();
            }
        }
    }
}

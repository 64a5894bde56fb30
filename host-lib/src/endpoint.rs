//! An endpoint: one Homa port on a card, with HomaModule's RPC semantics.
//!
//! DESIGN NOTES
//! ------------
//! - Client: [`Endpoint::send_request`] numbers the RPC (even ids, 2, 4, 6...
//!   per card, as HomaModule's are per host), copies the message into a TX
//!   slot and posts a descriptor; the response comes back matched to the id
//!   ([`Endpoint::recv_response`]) or to whichever finishes first
//!   ([`Endpoint::recv_any_response`]).
//! - Server: [`Endpoint::recv_request`] gives the next request; its id is the
//!   client's id with bit 0 set (the card reports it that way, as HomaModule
//!   does), and [`Endpoint::reply`] answers by that id. The endpoint keeps
//!   each unanswered request's peer, so a reply needs only the id.
//! - TX slots: the message bytes must stay put until the card no longer
//!   needs them (it may send any packet again until the receiver has it
//!   all), which its TX_DONE completion says; a slot (one per TX ring
//!   entry, `MAX_MESSAGE_BYTES` rounded up to a page) is taken at send and
//!   given back at TX_DONE, named by the descriptor's cookie. Out of slots,
//!   or of TX ring entries, a send fails with [`Error::RingFull`].
//! - Nothing happens behind the application's back: completions are read
//!   when it calls in (`try_*` once, blocking calls between
//!   [`Nic::wait`]s). Completions for other RPCs found on the way are kept
//!   for the calls that want them.
//! - Closing (drop) waits, a bounded time, for the card to finish sending,
//!   then writes port 0: the card must not DMA into rings that are freed.

use std::collections::{HashMap, VecDeque};
use std::net::Ipv4Addr;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use homa_driver::{
    CompletionKind, CompletionStatus, DmaBuffer, EndpointQueues, RxArea, TxDescriptor, TxOpcode,
};

use crate::error::Error;
use crate::message::{Message, RxShared};
use crate::nic::{Nic, WaitStart};
use crate::tunables::EndpointSetting;
use crate::MAX_MESSAGE_BYTES;

/// What a TX completion's error status says, for errors and logs.
fn describe(status: CompletionStatus) -> &'static str {
    match status {
        CompletionStatus::Ok => "ok",
        CompletionStatus::BadDescriptor => "bad descriptor",
        CompletionStatus::DmaError => "DMA error reading the message",
        CompletionStatus::Timeout => "its peer went silent",
        CompletionStatus::Unknown(_) => "unknown status",
    }
}

/// The error a failed request's call returns.
fn failure(id: RpcId, status: CompletionStatus) -> Error {
    match status {
        CompletionStatus::Timeout => Error::Timeout(id),
        other => Error::SendFailed {
            id,
            status: describe(other),
        },
    }
}

/// Bytes per TX slot: the largest message, rounded up to 4 KiB pages.
const TX_SLOT_BYTES: usize = MAX_MESSAGE_BYTES.div_ceil(4096) * 4096;
/// Waits (of `Nic::wait`) a closing endpoint gives the card to finish sending.
const CLOSE_WAITS: u32 = 100_000;

/// Bpages an endpoint hands the card unless told otherwise: messages it may
/// hold received at once (each takes one bpage until dropped).
pub const DEFAULT_BPAGES: u32 = 32;

/// An RPC's id as this endpoint knows it: even on the client, the client's
/// id + 1 on the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(transparent)]
pub struct RpcId(pub u64);

impl RpcId {
    /// True for a client's id (even).
    pub fn is_client(self) -> bool {
        self.0 & 1 == 0
    }
}

impl std::fmt::Display for RpcId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Where an RPC goes or came from. There is no ARP yet (issue 5): the peer's
/// MAC address is given along with its IPv4 address and Homa port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Peer {
    pub ip: Ipv4Addr,
    pub mac: [u8; 6],
    pub port: u16,
}

impl Peer {
    pub fn new(ip: Ipv4Addr, mac: [u8; 6], port: u16) -> Peer {
        Peer { ip, mac, port }
    }
}

/// A request received by a server.
#[derive(Debug)]
pub struct Request {
    id: RpcId,
    peer: Peer,
    message: Message,
}

impl Request {
    /// The id to reply with (the client's id + 1).
    pub fn id(&self) -> RpcId {
        self.id
    }

    /// The client.
    pub fn peer(&self) -> Peer {
        self.peer
    }

    pub fn message(&self) -> &Message {
        &self.message
    }

    pub fn into_message(self) -> Message {
        self.message
    }
}

/// A response received by a client.
#[derive(Debug)]
pub struct Response {
    id: RpcId,
    peer: Peer,
    message: Message,
}

impl Response {
    /// The id `send_request` returned.
    pub fn id(&self) -> RpcId {
        self.id
    }

    /// The server.
    pub fn peer(&self) -> Peer {
        self.peer
    }

    pub fn message(&self) -> &Message {
        &self.message
    }

    pub fn into_message(self) -> Message {
        self.message
    }
}

/// An open Homa port.
pub struct Endpoint {
    nic: Nic,
    /// Which endpoint block of the card.
    index: usize,
    port: u16,
    /// The rings; `None` only while closing.
    queues: Option<EndpointQueues>,
    /// The RX area, shared with received messages.
    rx: Arc<RxShared>,
    /// `tx_slots` slots of `TX_SLOT_BYTES`, messages being sent.
    tx_buffers: DmaBuffer,
    /// TX slots (= TX ring entries).
    tx_slots: usize,
    /// TX slots not holding a message the card is sending.
    tx_free: Vec<u32>,
    /// The id of this endpoint's next request.
    /// Client: requests sent whose responses have not arrived.
    outstanding: HashMap<RpcId, Peer>,
    /// Client: responses arrived and not yet taken, and their arrival order.
    responses: HashMap<RpcId, Response>,
    response_order: VecDeque<RpcId>,
    /// Client: requests the card refused to send, with why.
    failed: HashMap<RpcId, CompletionStatus>,
    /// Server: requests arrived and not yet taken.
    requests: VecDeque<Request>,
    /// Server: requests received and not yet replied to.
    unreplied: HashMap<RpcId, Peer>,
    /// The card's resets when this endpoint opened (`Nic::reset`): after
    /// another, the card has forgotten it.
    resets: u64,
}

impl Endpoint {
    /// Opens `port` on the card with the sizes of the card's homa.conf
    /// (`endpoint_bpages`, `endpoint_tx_ring_entries`,
    /// `endpoint_completion_ring_entries`; by default 32 bpages, 64 and 256).
    pub fn open(nic: &Nic, port: u16) -> Result<Endpoint, Error> {
        let bpages = nic.config().endpoint(EndpointSetting::Bpages);
        Self::open_with_bpages(nic, port, bpages)
    }

    /// Opens `port` on the card with `bpages` (1..=`homa_driver::rx_area::MAX_BPAGES`, 1,024) receive bpages (ring
    /// sizes from homa.conf).
    pub fn open_with_bpages(nic: &Nic, port: u16, bpages: u32) -> Result<Endpoint, Error> {
        if port == 0 {
            return Err(Error::BadPort);
        }
        let index = {
            let mut ports = nic.inner.ports.lock().unwrap();
            if ports.contains(&Some(port)) {
                return Err(Error::PortInUse(port));
            }
            let free = ports
                .iter()
                .position(Option::is_none)
                .ok_or(Error::NoFreeEndpoint(ports.len()))?;
            ports[free] = Some(port);
            free
        };
        match Self::open_at(nic, index, port, bpages) {
            Ok(e) => Ok(e),
            Err(e) => {
                nic.inner.ports.lock().unwrap()[index] = None;
                Err(e)
            }
        }
    }

    fn open_at(nic: &Nic, index: usize, port: u16, bpages: u32) -> Result<Endpoint, Error> {
        let device = &nic.inner.device;
        let config = nic.config();
        let tx_ring_log2 = config
            .endpoint(EndpointSetting::TxRingEntries)
            .trailing_zeros();
        let cpl_ring_log2 = config
            .endpoint(EndpointSetting::CompletionRingEntries)
            .trailing_zeros();
        let slots = 1u32 << tx_ring_log2;
        let tx_buffers = device.backend().dma_alloc(slots as usize * TX_SLOT_BYTES)?;
        // The RX area before the queues: the port (written last by the
        // queues) is what opens the endpoint.
        let area = RxArea::register(device, index, bpages)?;
        let queues = EndpointQueues::open(device, index, port, tx_ring_log2, cpl_ring_log2)?;
        tracing::debug!(port, endpoint = index, bpages, "endpoint open");
        Ok(Endpoint {
            nic: nic.clone(),
            index,
            port,
            queues: Some(queues),
            rx: Arc::new(RxShared {
                nic: nic.inner.clone(),
                area,
                open: true.into(),
                resets: nic.resets(),
            }),
            tx_buffers,
            tx_slots: slots as usize,
            tx_free: (0..slots).rev().collect(),
            outstanding: HashMap::new(),
            responses: HashMap::new(),
            response_order: VecDeque::new(),
            failed: HashMap::new(),
            requests: VecDeque::new(),
            unreplied: HashMap::new(),
            resets: nic.resets(),
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn nic(&self) -> &Nic {
        &self.nic
    }

    /// Bpages the card holds free for this endpoint (each received message
    /// holds one until dropped). Read right after a message is dropped, the
    /// card may not count its bpage yet for a few cycles.
    pub fn bpages_free(&self) -> Result<u32, Error> {
        self.alive()?;
        Ok(self.rx.area.free_on_card(&self.nic.inner.device)?)
    }

    /// Requests sent whose responses have not been taken.
    pub fn outstanding(&self) -> usize {
        self.outstanding.len() + self.responses.len() + self.failed.len()
    }

    /// Sends a request of `message` to `peer`; returns its id.
    pub fn send_request(&mut self, peer: Peer, message: &[u8]) -> Result<RpcId, Error> {
        let id = RpcId(self.nic.inner.next_rpc_id.fetch_add(2, Ordering::Relaxed));
        self.send(TxOpcode::Request, id, peer, message)?;
        self.outstanding.insert(id, peer);
        Ok(id)
    }

    /// Replies to request `id` (as [`Request::id`] gave it) with `message`.
    pub fn reply(&mut self, id: RpcId, message: &[u8]) -> Result<(), Error> {
        let peer = *self.unreplied.get(&id).ok_or(Error::NoSuchRpc(id))?;
        self.send(TxOpcode::Response, id, peer, message)?;
        self.unreplied.remove(&id);
        Ok(())
    }

    /// The next request, if one has arrived.
    pub fn try_recv_request(&mut self) -> Result<Option<Request>, Error> {
        if self.requests.is_empty() {
            self.progress()?;
        }
        Ok(self.requests.pop_front())
    }

    /// The next request, waiting for one.
    pub fn recv_request(&mut self) -> Result<Request, Error> {
        let mut start = self.nic.wait_start();
        loop {
            if let Some(r) = self.try_recv_request()? {
                return Ok(r);
            }
            self.wait_on(&mut start)?;
        }
    }

    /// The response to request `id`, if it has arrived.
    pub fn try_recv_response(&mut self, id: RpcId) -> Result<Option<Response>, Error> {
        if !self.outstanding.contains_key(&id)
            && !self.responses.contains_key(&id)
            && !self.failed.contains_key(&id)
        {
            return Err(Error::NoSuchRpc(id));
        }
        if !self.responses.contains_key(&id) {
            self.progress()?;
        }
        if let Some(status) = self.failed.remove(&id) {
            return Err(failure(id, status));
        }
        Ok(self.responses.remove(&id))
    }

    /// The response to request `id`, waiting for it.
    pub fn recv_response(&mut self, id: RpcId) -> Result<Response, Error> {
        let mut start = self.nic.wait_start();
        loop {
            if let Some(r) = self.try_recv_response(id)? {
                return Ok(r);
            }
            self.wait_on(&mut start)?;
        }
    }

    /// One round of a blocked call's wait for this endpoint's completions,
    /// the call begun at `start` ([`Nic::wait_start`]).
    pub(crate) fn wait_on(&self, start: &mut WaitStart) -> Result<(), Error> {
        self.nic.wait_on(self.index, start)
    }

    /// The response of any request, the first to arrive, if one has.
    pub fn try_recv_any_response(&mut self) -> Result<Option<Response>, Error> {
        if self.responses.is_empty() {
            self.progress()?;
        }
        if let Some(&id) = self.failed.keys().next() {
            let status = self.failed.remove(&id).unwrap();
            return Err(failure(id, status));
        }
        while let Some(id) = self.response_order.pop_front() {
            if let Some(r) = self.responses.remove(&id) {
                return Ok(Some(r));
            }
        }
        Ok(None)
    }

    /// The response of any request, waiting for one. Fails with
    /// [`Error::NoSuchRpc`] (id 0) when no request is outstanding.
    pub fn recv_any_response(&mut self) -> Result<Response, Error> {
        let mut start = self.nic.wait_start();
        loop {
            if let Some(r) = self.try_recv_any_response()? {
                return Ok(r);
            }
            if self.outstanding() == 0 {
                return Err(Error::NoSuchRpc(RpcId(0)));
            }
            self.wait_on(&mut start)?;
        }
    }

    /// True if a request has arrived and not been taken (reads new
    /// completions; takes nothing). For callers that wait in one place and
    /// receive in another (the Python binding's asyncio forms).
    pub fn request_ready(&mut self) -> Result<bool, Error> {
        if self.requests.is_empty() {
            self.progress()?;
        }
        Ok(!self.requests.is_empty())
    }

    /// True if the response to request `id` (or its failure) is ready to be
    /// taken by `try_recv_response`; takes nothing.
    pub fn response_ready(&mut self, id: RpcId) -> Result<bool, Error> {
        if !self.outstanding.contains_key(&id)
            && !self.responses.contains_key(&id)
            && !self.failed.contains_key(&id)
        {
            return Err(Error::NoSuchRpc(id));
        }
        if !self.responses.contains_key(&id) {
            self.progress()?;
        }
        Ok(self.responses.contains_key(&id) || self.failed.contains_key(&id))
    }

    /// True if any response (or failure) is ready for
    /// `try_recv_any_response`; takes nothing. Fails with
    /// [`Error::NoSuchRpc`] (id 0) when no request is outstanding.
    pub fn any_response_ready(&mut self) -> Result<bool, Error> {
        if self.responses.is_empty() {
            self.progress()?;
        }
        if self.responses.is_empty() && self.failed.is_empty() && self.outstanding() == 0 {
            return Err(Error::NoSuchRpc(RpcId(0)));
        }
        Ok(!self.responses.is_empty() || !self.failed.is_empty())
    }

    /// Puts back a request taken by `try_recv_request` (the C ABI, when the
    /// caller's buffer was too small): it is the next one again.
    pub(crate) fn unreceive_request(&mut self, request: Request) {
        self.requests.push_front(request);
    }

    /// Puts back a response taken by `try_recv_response`.
    pub(crate) fn unreceive_response(&mut self, response: Response) {
        self.response_order.push_front(response.id);
        self.responses.insert(response.id, response);
    }

    /// Copies `message` into a free TX slot and posts it.
    fn send(
        &mut self,
        opcode: TxOpcode,
        id: RpcId,
        peer: Peer,
        message: &[u8],
    ) -> Result<(), Error> {
        self.alive()?;
        if message.is_empty() {
            return Err(Error::EmptyMessage);
        }
        if message.len() > MAX_MESSAGE_BYTES {
            return Err(Error::MessageTooLong {
                len: message.len(),
                max: MAX_MESSAGE_BYTES,
            });
        }
        if self.tx_free.is_empty() {
            self.progress()?;
        }
        let device = &self.nic.inner.device;
        let queues = self.queues.as_mut().expect("open endpoint");
        if queues.tx().free_slots() == 0 {
            queues.reap_tx(device)?;
        }
        let slots = self.tx_slots;
        if self.tx_free.is_empty() || queues.tx().free_slots() == 0 {
            return Err(Error::RingFull { slots });
        }
        let slot = self.tx_free.pop().unwrap();
        let offset = slot as usize * TX_SLOT_BYTES;
        self.tx_buffers.write(offset, message);
        let descriptor = TxDescriptor {
            opcode,
            peer_port: peer.port,
            length: message.len() as u32,
            rpc_id: id.0,
            buffer: self.tx_buffers.iova_at(offset),
            peer_ip: peer.ip.into(),
            peer_mac: peer.mac,
            cookie: slot.into(),
        };
        if let Err(e) = queues.post(&descriptor.encode()) {
            self.tx_free.push(slot);
            return Err(e.into());
        }
        queues.ring_tx(device)?;
        Ok(())
    }

    /// Fails with [`Error::CardReset`] once the card has been reset since
    /// this endpoint opened.
    fn alive(&self) -> Result<(), Error> {
        if self.nic.resets() != self.resets {
            return Err(Error::CardReset);
        }
        Ok(())
    }

    /// Reads every new completion and files it.
    fn progress(&mut self) -> Result<(), Error> {
        self.alive()?;
        let queues = self.queues.as_mut().expect("open endpoint");
        let mut any = false;
        while let Some(c) = queues.poll_completion() {
            any = true;
            let id = RpcId(c.rpc_id);
            let peer = Peer::new(Ipv4Addr::from(c.peer_ip), c.peer_mac, c.peer_port);
            let status = (c.status != CompletionStatus::Ok).then_some(c.status);
            match c.kind {
                CompletionKind::TxDone => {
                    self.tx_free.push(c.cookie as u32);
                    if let Some(status) = status {
                        if self.outstanding.remove(&id).is_some() {
                            self.failed.insert(id, status);
                        } else {
                            tracing::warn!(%id, status = describe(status), "response not sent");
                        }
                    }
                }
                CompletionKind::ResponseReceived if status.is_some() => {
                    // The response stalled part way (its server went
                    // silent) and the card forgot it: the RPC failed.
                    if self.outstanding.remove(&id).is_some() {
                        self.failed.insert(id, c.status);
                    } else {
                        tracing::warn!(%id, ?c, "failed response to no outstanding request");
                    }
                }
                CompletionKind::RequestReceived if status.is_some() => {
                    tracing::warn!(%id, ?c, "received request with an error status");
                }
                CompletionKind::RequestReceived => {
                    let message = Message::new(self.rx.clone(), c.length as usize, c.bpages());
                    self.unreplied.insert(id, peer);
                    self.requests.push_back(Request { id, peer, message });
                }
                CompletionKind::ResponseReceived => {
                    let message = Message::new(self.rx.clone(), c.length as usize, c.bpages());
                    if self.outstanding.remove(&id).is_some() {
                        self.responses.insert(id, Response { id, peer, message });
                        self.response_order.push_back(id);
                    } else {
                        tracing::warn!(%id, "response to no outstanding request: dropped");
                    }
                }
                CompletionKind::Unknown(kind) => {
                    tracing::warn!(kind, "completion of an unknown kind: skipped");
                }
            }
        }
        if any {
            queues.release_completions(&self.nic.inner.device)?;
        }
        Ok(())
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        let slots = self.tx_slots;
        for _ in 0..CLOSE_WAITS {
            if self.tx_free.len() == slots || self.progress().is_err() {
                break;
            }
            self.nic.wait();
        }
        self.rx.open.store(false, Ordering::Release);
        if self.alive().is_err() {
            // The reset closed it on the card, and its endpoint block may
            // be another endpoint's by now: nothing to tell the card.
            return;
        }
        if let Some(queues) = self.queues.take() {
            if let Err(e) = queues.close(&self.nic.inner.device) {
                tracing::warn!(port = self.port, "closing endpoint: {e}");
            }
        }
        self.nic.inner.ports.lock().unwrap()[self.index] = None;
    }
}

//! One RPC as an endpoint sees it: identity, state, and its two messages.
//!
//! DESIGN NOTES
//! - Key: an RPC is found by (peer address, local id). Local ids follow the
//!   wire rule: a client numbers its RPCs 2, 4, 6, ...; the server's id for the
//!   same RPC is the client's with the low bit set, so `sender_id ^ 1` of any
//!   incoming packet is the receiver's local id and an even local id means
//!   "I am the client".
//! - States are HomaModule's: a client RPC is `Outgoing` while its request is
//!   being sent and becomes `Incoming` with the first response byte; a server
//!   RPC is `Incoming` while its request arrives, `InService` while the
//!   application holds it, `Outgoing` while the response is sent and until the
//!   client acknowledges it. A finished RPC is removed from the table (the
//!   hardware frees the slot), which plays the role of RPC_DEAD.

use std::net::Ipv4Addr;

use homa_wire::MacAddr;
use serde::Serialize;

use super::config::Cycles;
use super::incoming::MessageIn;
use super::outgoing::MessageOut;

/// A host on the network: what a frame needs to reach it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct HostAddr {
    pub ip: Ipv4Addr,
    pub mac: MacAddr,
}

/// Identifies an RPC inside one endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct RpcKey {
    /// The other end's IPv4 address.
    pub peer: Ipv4Addr,
    /// This endpoint's id for the RPC (even: we are the client).
    pub id: u64,
}

impl RpcKey {
    pub fn is_client(&self) -> bool {
        self.id & 1 == 0
    }
}

/// Life-cycle state of an RPC (HomaModule's RPC_OUTGOING, RPC_INCOMING, RPC_IN_SERVICE).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum RpcState {
    /// Sending our message: a client's request, or a server's response (then
    /// also waiting for the client's ACK after the last byte left).
    Outgoing,
    /// Receiving the peer's message.
    Incoming,
    /// Server only: the request is complete and the application holds it.
    InService,
}

/// One RPC.
#[derive(Debug)]
pub struct Rpc {
    pub key: RpcKey,
    pub state: RpcState,
    /// The peer, with the MAC address frames to it carry.
    pub peer: HostAddr,
    /// Our port (a client's port from 0x8000, or a server port 1..=32767).
    pub local_port: u16,
    /// The peer's port.
    pub peer_port: u16,
    /// The message we send (request at a client, response at a server); None
    /// at a server until the application replies.
    pub msgout: Option<MessageOut>,
    /// The message we receive; None until its first packet arrives.
    pub msgin: Option<MessageIn>,
    /// Ticks since the last packet from the peer for this RPC (reset by every
    /// packet; drives RESEND, NEED_ACK and the timeout). Changed by the timer
    /// and the receive path.
    pub silent_ticks: u32,
    /// Cycle at which the RPC was created here.
    pub created: Cycles,
}

impl Rpc {
    pub fn is_client(&self) -> bool {
        self.key.is_client()
    }
}

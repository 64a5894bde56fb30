//! The host library's errors: one enum an application matches on.

use crate::endpoint::RpcId;

/// Anything an endpoint call can fail at.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The message is longer than the card sends.
    #[error("message of {len} bytes is longer than the {max}-byte limit")]
    MessageTooLong { len: usize, max: usize },
    /// Homa messages have at least one byte.
    #[error("empty message: Homa messages are 1 byte or more")]
    EmptyMessage,
    /// Every TX slot holds a message the card has not finished sending;
    /// receive (or wait) and try again.
    #[error("TX ring full: {slots} messages are waiting to be sent")]
    RingFull { slots: usize },
    /// The RPC id is not an outstanding request of this endpoint (client), or
    /// not a request it received and has not replied to (server).
    #[error("no such RPC: {0}")]
    NoSuchRpc(RpcId),
    /// The card refused to send a request (a bad descriptor or a DMA fault).
    #[error("the card could not send RPC {id}: {status}")]
    SendFailed { id: RpcId, status: &'static str },
    /// The RPC's peer went silent: no response (or no grant) came for
    /// timeout_ticks ticks, nudges included (HomaModule's ETIMEDOUT).
    #[error("RPC {0} timed out: its peer went silent")]
    Timeout(RpcId),
    /// The card was reset ([`crate::Nic::reset`]) since this endpoint was
    /// opened: the card has forgotten it and its RPCs. Open a new one.
    #[error("the card was reset: this endpoint and its RPCs are gone")]
    CardReset,
    /// The card did not finish a reset (its TX or DMA port stayed in the
    /// middle of a transaction).
    #[error("the card did not finish its reset")]
    ResetStuck,
    /// Another endpoint of this card already has the port.
    #[error("port {0} is already open on this card")]
    PortInUse(u16),
    /// Port 0 is not a port.
    #[error("port 0 is not a Homa port")]
    BadPort,
    /// All the card's endpoint blocks are in use.
    #[error("all {0} endpoints of the card are open")]
    NoFreeEndpoint(usize),
    /// A buffer given to a C call is smaller than the message.
    #[error("buffer of {capacity} bytes for a message of {len}")]
    BufferTooSmall { len: usize, capacity: usize },
    /// A homa.conf that cannot be used, or that the card refused.
    #[error("{0}")]
    Config(#[from] crate::config::ConfigError),
    #[error("device: {0}")]
    Device(#[from] homa_driver::Error),
}

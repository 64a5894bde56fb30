//! The application API of the Homa NIC, with HomaModule's semantics.
//!
//! Owns: endpoints bound to a port, a client's requests and their responses
//! matched by RPC id, a server's receive-and-reply, received messages as
//! zero-copy views into the receive buffer pool, and the C ABI over all of it.
//!
//! Must not know about: registers, rings or DMA (that is `homa-driver`), nor
//! whether the card is real or simulated.
//!
//! Files: `nic.rs` (a card opened: addresses, waiting for progress),
//! `config.rs` and `tunables.rs` (homa.conf: the table of tunables, checking,
//! applying and reading them back),
//! `endpoint.rs` (a port: requests, responses, replies), `message.rs`
//! (received messages and the bpages they hold), `error.rs`, `ffi.rs` (the C
//! ABI; header in `include/homa_nic.h`).
//!
//! ```no_run
//! use std::sync::{Arc, Mutex};
//! use homa_host::{Endpoint, Nic, Peer, SimNetwork};
//! let network = Arc::new(Mutex::new(SimNetwork::new("doc", 2, Default::default())));
//! let client = Nic::open_sim(&network, 0)?;
//! let server = Nic::open_sim(&network, 1)?;
//! client.set_address([2, 0, 0, 0, 0, 1], "10.0.0.1".parse().unwrap())?;
//! server.set_address([2, 0, 0, 0, 0, 2], "10.0.0.2".parse().unwrap())?;
//! let mut c = Endpoint::open(&client, 1000)?;
//! let mut s = Endpoint::open(&server, 99)?;
//! let id = c.send_request(Peer::new(server.ip(), server.mac(), 99), b"ping")?;
//! let request = s.recv_request()?;
//! s.reply(request.id(), &request.message().to_vec())?;
//! let response = c.recv_response(id)?;
//! assert_eq!(response.message().to_vec(), b"ping");
//! # Ok::<(), homa_host::Error>(())
//! ```
//!
//! Addresses: there is no ARP yet (issue 5), so a [`Peer`] names the peer's
//! MAC address along with its IPv4 address and port.

pub mod config;
pub mod endpoint;
pub mod error;
pub mod ffi;
pub mod message;
pub mod nic;
pub mod tunables;

pub use config::{ConfigError, HomaConf};
pub use endpoint::{Endpoint, Peer, Request, Response, RpcId};
pub use error::Error;
pub use homa_driver::sim::SimNetwork;
pub use message::Message;
pub use nic::{Nic, WaitStats};

/// Largest message the card sends today, in bytes (every message is sent
/// unscheduled until grants land).
pub const MAX_MESSAGE_BYTES: usize = homa_hw::tx::engine::MAX_MESSAGE_BYTES as usize;

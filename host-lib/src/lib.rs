//! The application API of the Homa NIC, with HomaModule's semantics.
//!
//! Owns: endpoints bound to a port, a client's requests and their responses
//! matched by RPC id, a server's receive-and-reply, received messages as
//! zero-copy views into the receive buffer pool, and the C ABI over all of it.
//!
//! Must not know about: registers, rings or DMA (that is `homa-driver`), nor
//! whether the card is real or simulated.

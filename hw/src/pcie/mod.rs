//! The card's side of the PCIe link: our own TLP interface to the
//! UltraScale+ integrated block's user streams (PG213), no vendor DMA IP
//! (issue 10: QDMA/XDMA would own the rings the core's engines implement).
//!
//! Here, not in `homa-firmware`: the interface is the same on every board
//! (all five use the same hard block's 512-bit user side at 250 MHz), it sits
//! on the core's own ports, and hw-sim must simulate the whole card through
//! it; the board crate keeps what differs per board.
//!
//! `completer`: BAR reads and writes, CQ to the CSR port, CC back.
//! `requester`: the core's DMA ports to RQ, completions on RC reassembled by
//! tag (`rq_write`, `rq_read`). Not yet: MSI-X.

pub mod completer;
pub mod requester;
pub mod rq_read;
pub mod rq_write;

//! Verification for the Homa NIC.
//!
//! Owns: the reference model of a Homa endpoint (the golden model every hardware
//! block is checked against), the packet-level network simulator, workloads,
//! the block, whole-NIC and cluster testbenches, and the VFIO VM test (`vm`:
//! the driver's VFIO backend against QEMU's edu device in a guest).
//!
//! Must not know about: anything the card itself does not expose; it drives
//! the hardware only through `homa-hw-sim` and the driver, as a user would.

pub mod cluster;
pub mod fuzz;
pub mod model;
pub mod net;
pub mod plot;
pub mod report;
pub mod vm;
pub mod workload;

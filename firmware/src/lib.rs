//! The board level of the Homa NIC on AMD Alveo cards (U50, U55C, U200, U250,
//! U280; facts in design/BOARDS.md).
//!
//! Owns: the per-board top level around the core (PCIe DMA shell, 100G MACs
//! and their clock-domain crossings), constraints, the Vivado non-project build
//! scripts, and the flash images (.bit/.mcs) and how to write them.
//!
//! Must not know about: Homa's protocol (that is the core in `homa-hw`, used
//! here as a black box with the ports ARCHITECTURE.md lists).

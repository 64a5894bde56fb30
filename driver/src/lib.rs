//! The userspace driver of the Homa NIC.
//!
//! Owns: the card's register map as types, discovery of the register-block
//! list with version checks, descriptor and completion rings, doorbells, and
//! the backends that reach a card: `vfio` (a real card behind the IOMMU) and
//! `sim` (the Verilator model in `homa-hw-sim`).
//!
//! Must not know about: RPCs, messages or sockets (that is `homa-host`), or how
//! the card is built (it reads the register map, it does not assume it).

//! The userspace driver of the Homa NIC.
//!
//! Owns: the card's register map as types, discovery of the register-block
//! list with version checks, descriptor and completion rings, doorbells, and
//! the backends that reach a card: `vfio` (a real card behind the IOMMU) and
//! `sim` (the Verilator model in `homa-hw-sim`).
//!
//! Must not know about: RPCs, messages or sockets (that is `homa-host`), or how
//! the card is built (it reads the register map, it does not assume it).
//!
//! Files, one concern each: `backend.rs` (what a card offers: the [`Backend`]
//! trait), `dma.rs` (DMA buffers and the IOVA space), `regs.rs` (typed
//! register blocks), `discovery.rs` (walking the block list, version checks),
//! `device.rs` (an opened card), `ring.rs` (descriptor and completion
//! rings, doorbells), `queues.rs` (an endpoint's rings bound to its block), `rx_area.rs` (its
//! receive bpages), `entries.rs` (descriptors and completions as types), `sim.rs` and `vfio.rs` (the two backends), `vfio_irq.rs` (interrupts through eventfds),
//! `memory.rs` (hugepage memory for VFIO DMA), `board.rs` (the board's
//! register block), `bitfile.rs` (Xilinx .bit files), `flash.rs` (writing the
//! configuration flash and rebooting into it), `rescan.rs` (removing and
//! rescanning a PCI device through sysfs), `pci.rs` (PCI IDs, addresses and
//! the command register), `setup.rs` (preparing a machine: binding cards to
//! vfio-pci, hugepages, permissions), `error.rs`.
//!
//! ```no_run
//! use homa_driver::{Device, SimBackend};
//! let device = Device::open(SimBackend::new())?;
//! println!("{} at {} kHz", device.blocks(), device.id().clock_khz);
//! device.scratch()?.write(0x1234_5678)?;
//! # Ok::<(), homa_driver::Error>(())
//! ```

pub mod backend;
pub mod bitfile;
pub mod board;
pub mod device;
pub mod discovery;
pub mod dma;
pub mod entries;
pub mod error;
pub mod flash;
pub mod memory;
pub mod pci;
pub mod queues;
pub mod regs;
pub mod rescan;
pub mod ring;
pub mod rx_area;
pub mod setup;
pub mod sim;
pub mod vfio;
pub mod vfio_irq;

pub use backend::Backend;
pub use device::{Device, IdInfo};
pub use discovery::{BlockList, DiscoveryError, RegisterBlock};
pub use dma::{DmaBuffer, DmaError};
pub use entries::{Completion, CompletionKind, CompletionStatus, TxDescriptor, TxOpcode};
pub use error::Error;
pub use pci::{PciAddress, PciId, HOMA_NIC_IDS};
pub use queues::EndpointQueues;
pub use regs::{
    block_name, BlockHeader, DesignVersion, EndpointBlock, IdBlock, InterfaceBlock, InterruptBlock,
    RxCountersBlock, ScratchBlock, Version,
};
pub use ring::{CompletionRing, DescriptorRing, Doorbell, PhaseBit, RingError};
pub use rx_area::RxArea;
pub use sim::SimBackend;
pub use vfio::{VfioBackend, VfioConfig, VfioError};

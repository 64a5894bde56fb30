//! The driver's errors: one enum a caller matches on, with a variant per
//! concern (CSR access, discovery, VFIO, DMA memory, rings). Every message says what
//! was found and, where a user can fix it, what to do.

use crate::discovery::DiscoveryError;
use crate::dma::DmaError;
use crate::ring::RingError;
use crate::vfio::VfioError;

/// Anything the driver can fail at.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A CSR offset past the end of the card's register window (the BAR).
    #[error("CSR offset {offset:#x} is outside the card's {window_bytes:#x}-byte register window")]
    CsrOutOfRange { offset: u32, window_bytes: u64 },
    /// Registers are 32 bits wide and word aligned.
    #[error("CSR offset {offset:#x} is not 32-bit aligned")]
    CsrMisaligned { offset: u32 },
    /// The backend cannot deliver interrupts, or not as many vectors.
    #[error("{backend} cannot deliver interrupts: {why}")]
    NoInterrupts { backend: String, why: String },
    /// A wait on a vector that was not enabled.
    #[error("interrupt vector {vector} is not enabled ({enabled} are)")]
    NoSuchVector { vector: u32, enabled: u32 },
    #[error(transparent)]
    Discovery(#[from] DiscoveryError),
    #[error(transparent)]
    Vfio(#[from] VfioError),
    #[error(transparent)]
    Dma(#[from] DmaError),
    #[error(transparent)]
    Ring(#[from] RingError),
}

//! What the driver needs from a card, whatever reaches it: the [`Backend`]
//! trait, implemented by [`crate::sim::SimBackend`] (the Verilator model) and
//! [`crate::vfio::VfioBackend`] (a real card).
//!
//! DESIGN NOTES
//! ------------
//! The trait is the whole contract between the device layer and a card, and it
//! is small on purpose: 32-bit register reads and writes at a byte offset into
//! the register window (BAR), DMA memory (a [`DmaBuffer`] the host reads and
//! writes, which the card reaches at its IOVA), the card's view of that memory
//! by IOVA, and a way to let the card make progress while the host polls.
//! Everything above it (discovery, typed register blocks, and later the rings)
//! is written once against this trait.
//!
//! How rings sit on it: a descriptor ring is a [`DmaBuffer`]; the driver
//! writes descriptors into it and then rings the doorbell, which is one
//! [`Backend::csr_write`] of the new producer index to a register found by
//! discovery. A completion ring is another buffer the card writes; the host
//! polls it, calling [`Backend::advance`] between polls so a simulated card
//! gets clock cycles to produce the entry. `csr_write` orders every host write
//! to DMA memory issued before it ahead of the register write, so a doorbell
//! never overtakes its descriptor.
//!
//! Interrupts: [`Backend::enable_interrupts`] turns on the card's MSI-X
//! vectors (vector v announces endpoint v's completion ring; the card sends
//! it once per arming, `regmap::interrupt`) and [`Backend::wait_interrupt`]
//! sleeps on one. On a real card the VFIO kernel driver programs the MSI-X
//! table and each vector signals an eventfd; the sim backend plays the
//! kernel's part on the simulated card and its "sleep" runs the simulation
//! until the message arrives.
//!
//! Methods take `&self`: several rings ring doorbells without borrowing the
//! whole device mutably. The sim backend serialises through a mutex (its model
//! is single threaded); a real card's BAR takes concurrent 32-bit writes.
//!
//! Freeing DMA memory is dropping the buffer (or [`DmaBuffer::free`] to see an
//! unmap error); a buffer keeps what it needs to unmap itself, so it may be
//! dropped in any order relative to other buffers. Drop buffers (and the
//! rings holding them) before their backend, though: once a VFIO backend is
//! gone its group has left the container, the kernel has torn the IOMMU
//! mappings down with it, and a later unmap only logs a warning.

use std::sync::Arc;

use crate::dma::DmaBuffer;
use crate::Error;

/// A way to reach a Homa NIC: its register window and DMA memory.
pub trait Backend: Send + Sync {
    /// What this backend reaches, for logs and `homa-nic info`
    /// (e.g. "VFIO 0000:01:00.0 BAR0").
    fn describe(&self) -> String;

    /// Bytes of register window (the BAR size); offsets from 0 up to this.
    fn csr_window_bytes(&self) -> u64;

    /// Reads the 32-bit register at byte `offset` (word aligned).
    fn csr_read(&self, offset: u32) -> Result<u32, Error>;

    /// Writes the 32-bit register at byte `offset` (word aligned), after every
    /// host write to DMA memory issued before the call.
    fn csr_write(&self, offset: u32, value: u32) -> Result<(), Error>;

    /// At least `bytes` of zeroed memory the card can reach by DMA. The buffer
    /// starts page aligned and its length is rounded up to the backend's page.
    fn dma_alloc(&self, bytes: usize) -> Result<DmaBuffer, Error>;

    /// Reads `out.len()` bytes at `iova` as the card would: the card's view
    /// of DMA memory, for the simulated card's DMA engine and for tests. The
    /// range must lie inside one live buffer, as an IOMMU would require.
    fn dma_read(&self, iova: u64, out: &mut [u8]) -> Result<(), Error>;

    /// Writes `data` at `iova` as the card would (see [`Backend::dma_read`]).
    fn dma_write(&self, iova: u64, data: &[u8]) -> Result<(), Error>;

    /// Lets the card make progress for about `cycles` core clock cycles while
    /// the host waits (between polls of a completion ring): "the host has
    /// nothing to do until the device progresses". The sim ticks its clock
    /// (a card on a `SimNetwork` steps the whole network, so the peers it
    /// waits for progress too); a real card runs by itself, so the VFIO
    /// backend only hints the CPU that it is spinning.
    fn advance(&self, cycles: u64);

    /// Core clock cycles the card has run, when the backend counts them (a
    /// simulated card; its cards on one network share the count). `None` for
    /// a real card. Lets tools report latencies in exact cycles.
    fn cycle(&self) -> Option<u64> {
        None
    }

    /// Turns on `vectors` MSI-X vectors (0..vectors), each delivered to this
    /// host on its own. Backends without interrupts refuse
    /// ([`Error::NoInterrupts`]), and the caller polls.
    fn enable_interrupts(&self, vectors: u32) -> Result<(), Error> {
        let _ = vectors;
        Err(Error::NoInterrupts {
            backend: self.describe(),
            why: "this backend has no interrupt delivery".into(),
        })
    }

    /// Sleeps until `vector` fires or `timeout` passes (on a simulated
    /// card, simulated time); returns how many times it fired since the
    /// last wait on it, 0 if it did not.
    fn wait_interrupt(&self, vector: u32, timeout: std::time::Duration) -> Result<u64, Error> {
        let _ = timeout;
        Err(Error::NoSuchVector { vector, enabled: 0 })
    }

    /// The host sleeps for `duration` (waiting on something slow: a flash
    /// erase, a reboot). A real card: the thread sleeps. A simulated card: the
    /// time passes in the simulation, cheaply when the card is idle (see
    /// `homa_hw_sim::card::Card::sleep_cycles`).
    fn sleep(&self, duration: std::time::Duration) {
        std::thread::sleep(duration);
    }
}

/// Checks that a CSR access at `offset` lies in a `window_bytes` register
/// window and is word aligned; shared by the backends.
pub(crate) fn check_csr_offset(offset: u32, window_bytes: u64) -> Result<(), Error> {
    if !offset.is_multiple_of(4) {
        return Err(Error::CsrMisaligned { offset });
    }
    if u64::from(offset) + 4 > window_bytes {
        return Err(Error::CsrOutOfRange {
            offset,
            window_bytes,
        });
    }
    Ok(())
}

/// Smart pointers to a backend are backends: every call goes to the pointee.
/// (A testbench keeps an `Arc` of its [`crate::SimBackend`] to reach the
/// card's other ports while a [`crate::Device`] holds another.)
macro_rules! forward_backend {
    ($($ptr:ident),*) => {$(
        impl<B: Backend + ?Sized> Backend for $ptr<B> {
            fn describe(&self) -> String {
                (**self).describe()
            }
            fn csr_window_bytes(&self) -> u64 {
                (**self).csr_window_bytes()
            }
            fn csr_read(&self, offset: u32) -> Result<u32, Error> {
                (**self).csr_read(offset)
            }
            fn csr_write(&self, offset: u32, value: u32) -> Result<(), Error> {
                (**self).csr_write(offset, value)
            }
            fn dma_alloc(&self, bytes: usize) -> Result<DmaBuffer, Error> {
                (**self).dma_alloc(bytes)
            }
            fn dma_read(&self, iova: u64, out: &mut [u8]) -> Result<(), Error> {
                (**self).dma_read(iova, out)
            }
            fn dma_write(&self, iova: u64, data: &[u8]) -> Result<(), Error> {
                (**self).dma_write(iova, data)
            }
            fn advance(&self, cycles: u64) {
                (**self).advance(cycles)
            }
            fn cycle(&self) -> Option<u64> {
                (**self).cycle()
            }
            fn enable_interrupts(&self, vectors: u32) -> Result<(), Error> {
                (**self).enable_interrupts(vectors)
            }
            fn wait_interrupt(
                &self,
                vector: u32,
                timeout: std::time::Duration,
            ) -> Result<u64, Error> {
                (**self).wait_interrupt(vector, timeout)
            }
            fn sleep(&self, duration: std::time::Duration) {
                (**self).sleep(duration)
            }
        }
    )*};
}

forward_backend!(Arc, Box);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csr_offsets_must_be_aligned_and_inside_the_window() {
        assert!(check_csr_offset(0, 0x100).is_ok());
        assert!(check_csr_offset(0xfc, 0x100).is_ok(), "last word");
        assert!(matches!(
            check_csr_offset(0x100, 0x100),
            Err(Error::CsrOutOfRange {
                offset: 0x100,
                window_bytes: 0x100
            })
        ));
        assert!(matches!(
            check_csr_offset(0x102, 0x1000),
            Err(Error::CsrMisaligned { offset: 0x102 })
        ));
    }
}

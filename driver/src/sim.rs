//! The `sim` backend: the card's RTL in Verilator (`homa_hw_sim`), reached
//! the way a BAR access would reach the real one.
//!
//! CSR reads and writes become clocked transactions on the core's CSR port
//! ([`Sim::csr_read`], [`Sim::csr_write`]). The model is single threaded, so
//! the backend holds it in a mutex; every access is a few cycles of simulated
//! time, counted by [`SimBackend::cycle`].
//!
//! TEMPORARY: DMA memory here is a stand-in, a zeroed `Vec` of pages per
//! allocation with a bump-allocated fake IOVA, so rings and tests can be
//! written before the card's DMA ports are wired. The simulated host memory
//! with PCIe latency and bandwidth is `homa_hw_sim::host_memory`; moving onto
//! it is this file only: `dma_alloc` maps a region there (`HostMemory::map`)
//! and returns a buffer whose `DmaMemory` reads and writes through
//! `HostMemory::read`/`write` (copies, no host pointer), and `dma_read`/
//! `dma_write` become its `dma_read`/`dma_write`, IOMMU checks included.

use std::ptr::NonNull;
use std::sync::{Arc, Mutex, MutexGuard};

use homa_hw::regmap;
use homa_hw_sim::{HomaCore, Sim};

use crate::backend::{check_csr_offset, Backend};
use crate::dma::{DmaBuffer, DmaError, DmaMemory, HostPtr, IovaSpace};
use crate::Error;

/// Cycles reset is held when a simulated card is created.
pub const RESET_CYCLES: u64 = 4;

/// Page size of the stand-in DMA memory: buffers start and end on it, as on a card.
const SIM_PAGE_BYTES: usize = 4096;

/// First fake IOVA: not 0, so a zeroed descriptor never points at a buffer.
const SIM_IOVA_BASE: u64 = 1 << 32;

/// End of the fake IOVA space (a 48-bit address, as a card's DMA engine takes).
const SIM_IOVA_END: u64 = 1 << 48;

/// A simulated Homa NIC.
pub struct SimBackend {
    /// The Verilator model; one thread drives it at a time.
    sim: Mutex<Sim<HomaCore>>,
    /// Fake IOVAs of the stand-in DMA memory, and which are live.
    iova: Arc<IovaSpace>,
}

impl SimBackend {
    /// A card fresh out of reset (traced into `$HOMA_VCD/` when that is set).
    pub fn new() -> Self {
        Self::from_sim(Sim::new("driver-sim"))
    }

    /// A card whose waveform is kept in `target/vcd/<name>.vcd` only if the
    /// thread panics (a failing test).
    pub fn traced_on_failure(name: &str) -> Self {
        Self::from_sim(Sim::traced_on_failure(name))
    }

    fn from_sim(mut sim: Sim<HomaCore>) -> Self {
        sim.reset(RESET_CYCLES);
        SimBackend {
            sim: Mutex::new(sim),
            iova: Arc::new(IovaSpace::new(SIM_IOVA_BASE, SIM_IOVA_END)),
        }
    }

    /// Core clock cycles simulated so far.
    pub fn cycle(&self) -> u64 {
        self.lock().cycle()
    }

    /// Runs `f` on the model itself, for testbenches that drive ports the
    /// backend does not (Ethernet, DMA) between driver calls.
    pub fn with_sim<R>(&self, f: impl FnOnce(&mut Sim<HomaCore>) -> R) -> R {
        f(&mut self.lock())
    }

    fn lock(&self) -> MutexGuard<'_, Sim<HomaCore>> {
        // A panic mid-transaction (a failing test) leaves the model between
        // cycles, which is still a valid state to clock on from.
        self.sim.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Default for SimBackend {
    fn default() -> Self {
        Self::new()
    }
}

impl Backend for SimBackend {
    fn describe(&self) -> String {
        format!("simulated card (Verilator model of {})", HomaCore::NAME)
    }

    fn csr_window_bytes(&self) -> u64 {
        1 << regmap::CSR_ADDR_BITS
    }

    fn csr_read(&self, offset: u32) -> Result<u32, Error> {
        check_csr_offset(offset, self.csr_window_bytes())?;
        Ok(self.lock().csr_read(offset)?)
    }

    fn csr_write(&self, offset: u32, value: u32) -> Result<(), Error> {
        check_csr_offset(offset, self.csr_window_bytes())?;
        // The model sees host memory only through the backend, so every
        // earlier host write is visible to it already; the fence keeps the
        // contract identical to the VFIO backend's for code that relies on it.
        std::sync::atomic::fence(std::sync::atomic::Ordering::Release);
        self.lock().csr_write(offset, value);
        Ok(())
    }

    fn dma_alloc(&self, bytes: usize) -> Result<DmaBuffer, Error> {
        if bytes == 0 {
            return Err(DmaError::ZeroLength.into());
        }
        let len = bytes.div_ceil(SIM_PAGE_BYTES) * SIM_PAGE_BYTES;
        let iova = self.iova.reserve(len, SIM_PAGE_BYTES)?;
        let mut pages = vec![SimPage([0; SIM_PAGE_BYTES]); len / SIM_PAGE_BYTES];
        let ptr =
            NonNull::new(pages.as_mut_ptr().cast::<u8>()).expect("a Vec's pointer is not null");
        // SAFETY: the Vec holds `len` zeroed, page-aligned bytes at `ptr`; it
        // is never resized or touched again except through this pointer, and
        // moving the Vec (into StandInMemory) does not move its heap storage,
        // which lives until the buffer drops it.
        let host = unsafe { HostPtr::new(ptr, len) };
        self.iova.insert(iova, ptr, len);
        tracing::trace!(iova, len, "sim DMA buffer");
        let memory = StandInMemory {
            _pages: pages,
            host,
            iova,
            space: self.iova.clone(),
        };
        Ok(DmaBuffer::new(len, iova, Box::new(memory)))
    }

    fn dma_read(&self, iova: u64, out: &mut [u8]) -> Result<(), Error> {
        Ok(self.iova.card_read(iova, out)?)
    }

    fn dma_write(&self, iova: u64, data: &[u8]) -> Result<(), Error> {
        Ok(self.iova.card_write(iova, data)?)
    }

    fn advance(&self, cycles: u64) {
        let mut sim = self.lock();
        for _ in 0..cycles {
            sim.tick();
        }
    }
}

/// One page of stand-in memory; the alignment makes buffers start page
/// aligned, as `Backend::dma_alloc` promises.
#[derive(Clone, Copy)]
#[repr(C, align(4096))]
struct SimPage([u8; SIM_PAGE_BYTES]);
const _: () = assert!(std::mem::align_of::<SimPage>() == SIM_PAGE_BYTES);

/// TEMPORARY stand-in for simulated host memory: one allocation.
struct StandInMemory {
    /// Owns the bytes; reached only through `host` after creation.
    _pages: Vec<SimPage>,
    /// The bytes.
    host: HostPtr,
    /// Fake IOVA of byte 0.
    iova: u64,
    /// The space to leave when released.
    space: Arc<IovaSpace>,
}

impl DmaMemory for StandInMemory {
    fn read(&self, offset: usize, out: &mut [u8]) {
        self.host.read(offset, out)
    }

    fn write(&mut self, offset: usize, data: &[u8]) {
        self.host.write(offset, data)
    }

    fn host_ptr(&self) -> Option<NonNull<u8>> {
        Some(self.host.as_non_null())
    }

    fn release(&mut self) -> Result<(), Error> {
        self.space.remove(self.iova);
        Ok(())
    }
}

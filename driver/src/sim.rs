//! The `sim` backend: the simulated card of `homa_hw_sim` (the core's RTL in
//! Verilator, with PCIe, host memory and an Ethernet port around it), reached
//! the way a BAR access and the IOMMU reach the real one.
//!
//! DESIGN NOTES
//! ------------
//! - CSR reads and writes are BAR accesses on the card ([`Card::csr_read`],
//!   [`Card::csr_write`]); the rest of the card keeps running while they take
//!   their cycles, as on PCIe. A CSR read the core never answers panics inside
//!   the card (a broken core), so this backend's CSR errors are the offset
//!   checks only.
//! - DMA memory is the card's simulated host memory. A buffer is an IOVA range
//!   from a bump allocator, mapped as an IOMMU region there
//!   (`HostMemory::map`), so the core's DMA may reach exactly the live
//!   buffers, and a DMA write outside them fails the simulation. The host's
//!   accesses are copies into that memory ([`DmaBuffer`] has no host pointer
//!   here); the card's view ([`Backend::dma_read`]) goes through the IOMMU
//!   check like the core's own DMA. Sparse memory reads 0 where never
//!   written, and IOVAs are never reused, so every new buffer is zeroed.
//! - The card is shared by the backend and its buffers (`Arc<Mutex<Card>>`):
//!   one thread drives the model at a time. Do not touch a buffer inside
//!   [`SimBackend::with_card`]: the card is locked there.
//!
//! - On a network ([`SimBackend::on_network`]) the card shares a clock with
//!   the other cards: BAR accesses run through `SimNetwork::access` and
//!   [`Backend::advance`] steps the whole network. Lock order: network, then
//!   card (DMA buffer accesses take the card alone, and never hold it while
//!   taking the network).
//!
//! - Interrupts: the backend plays the host kernel and interrupt
//!   controller. [`Backend::enable_interrupts`] does what vfio-pci does for
//!   a program asking for MSI-X: programs the card's MSI-X table (vector v:
//!   address `MSI_ADDRESS`, data `MSI_DATA_BASE + v`), unmasks the vectors
//!   and enables MSI-X with the function unmasked. The card's messages
//!   (`Card::take_interrupts`) are counted per vector, as eventfds count;
//!   [`Backend::wait_interrupt`] runs the card (or its network) until one
//!   arrives, or the timeout passes in simulated time.
//!
//! History: until the simulated host memory existed this file served DMA from
//! a `Vec` per buffer; the move onto the card changed nothing outside it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use homa_hw::regmap;
use homa_hw_sim::board::BoardConfig;
use homa_hw_sim::card::Card;
use homa_hw_sim::dma_link::LinkConfig;
use homa_hw_sim::host_memory::PAGE_BYTES;
pub use homa_hw_sim::network::{FrameEvent, SimNetwork};
use homa_hw_sim::HomaCore;

use crate::backend::{check_csr_offset, Backend};
use crate::dma::{DmaBuffer, DmaError, DmaMemory, IovaSpace};
use crate::Error;

/// First IOVA handed out: not 0, so a zeroed descriptor never points at a buffer.
const SIM_IOVA_BASE: u64 = 1 << 32;

/// End of the IOVA space (a 48-bit address, as a card's DMA engine takes).
const SIM_IOVA_END: u64 = 1 << 48;

/// Where the sim's interrupt controller takes messages, and the data of
/// vector 0's (x86: the local APIC's window, and the first vector numbers
/// a device gets).
const MSI_ADDRESS: u64 = 0xfee0_0000;
const MSI_DATA_BASE: u32 = 0x40;

/// Cycles a wait for an interrupt on a network runs between looks.
const IRQ_WAIT_STEP: u64 = 4;

/// The interrupt controller's view of the card: vectors enabled and the
/// messages each received and no one has waited for.
#[derive(Default)]
struct SimIrqs {
    fired: Vec<u64>,
}

/// Numbers the waveforms of cards made with [`SimBackend::new`].
static UNNAMED_CARDS: AtomicU64 = AtomicU64::new(0);

/// A simulated Homa NIC.
pub struct SimBackend {
    /// The card; its buffers hold it too.
    card: Arc<Mutex<Card>>,
    /// The network the card is on, and its index there, when it shares a
    /// clock with other cards: BAR accesses and [`Backend::advance`] then
    /// go through the network so every card advances together.
    network: Option<(Arc<Mutex<SimNetwork>>, usize)>,
    /// IOVAs handed out to buffers (the bump allocator; the card's host
    /// memory keeps which are mapped).
    iova: IovaSpace,
    irqs: Mutex<SimIrqs>,
}

impl SimBackend {
    /// A card fresh out of reset, its DMA on the default link (see
    /// `LinkConfig`: through the PCIe requester's RTL), its waveform written
    /// only if the thread panics.
    pub fn new() -> Self {
        let n = UNNAMED_CARDS.fetch_add(1, Ordering::Relaxed);
        let name = format!("driver-sim-{}-{n}", std::process::id());
        Self::with_link(&name, LinkConfig::default())
    }

    /// A card whose waveform is written to `target/vcd/<name>.vcd` only if
    /// the thread panics (a failing test).
    pub fn traced_on_failure(name: &str) -> Self {
        Self::with_link(name, LinkConfig::default())
    }

    /// A card named `name` (its waveform's name), its DMA over `link`.
    pub fn with_link(name: &str, link: LinkConfig) -> Self {
        SimBackend {
            card: Arc::new(Mutex::new(Card::new(name, link))),
            network: None,
            iova: IovaSpace::new(SIM_IOVA_BASE, SIM_IOVA_END),
            irqs: Mutex::default(),
        }
    }

    /// A card in a board (`homa_hw_sim::board`): the board's register block,
    /// its configuration flash and the FPGA's reboot from flash, for flashing.
    pub fn with_board(name: &str, board: BoardConfig) -> Self {
        SimBackend {
            card: Arc::new(Mutex::new(Card::with_board(
                name,
                LinkConfig::default(),
                board,
            ))),
            network: None,
            iova: IovaSpace::new(SIM_IOVA_BASE, SIM_IOVA_END),
            irqs: Mutex::default(),
        }
    }

    /// Card `index` of `network`: waiting on this backend advances the whole
    /// network, so a host waiting for its completion lets every card (and
    /// the peers it talks to) make progress.
    pub fn on_network(network: &Arc<Mutex<SimNetwork>>, index: usize) -> Self {
        let card = lock(network).card(index).clone();
        SimBackend {
            card,
            network: Some((network.clone(), index)),
            iova: IovaSpace::new(SIM_IOVA_BASE, SIM_IOVA_END),
            irqs: Mutex::default(),
        }
    }

    /// Runs a BAR access on the card: alone, or through its network.
    fn access<R>(&self, f: impl FnOnce(&mut Card) -> R) -> R {
        match &self.network {
            Some((network, index)) => lock(network).access(*index, f),
            None => f(&mut lock(&self.card)),
        }
    }

    /// Core clock cycles simulated so far.
    pub fn cycle(&self) -> u64 {
        lock(&self.card).cycle()
    }

    /// Counts the card's interrupt messages by vector.
    fn collect_interrupts(&self, irqs: &mut SimIrqs) {
        for irq in lock(&self.card).take_interrupts() {
            let m = irq.message;
            let vector = m.data.wrapping_sub(MSI_DATA_BASE) as usize;
            if m.addr == MSI_ADDRESS && vector < irqs.fired.len() {
                irqs.fired[vector] += 1;
            } else {
                tracing::warn!(
                    addr = m.addr,
                    data = m.data,
                    cycle = irq.cycle,
                    "stray interrupt message"
                );
            }
        }
    }

    /// Runs `f` on the card itself, for testbenches that use what the driver
    /// does not (the Ethernet port, statistics). Buffers must not be touched
    /// inside `f`: the card is locked.
    pub fn with_card<R>(&self, f: impl FnOnce(&mut Card) -> R) -> R {
        f(&mut lock(&self.card))
    }
}

impl Default for SimBackend {
    fn default() -> Self {
        Self::new()
    }
}

fn lock<T>(card: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic mid-access (a failing test) leaves the card between cycles,
    // which is still a valid state to go on from.
    card.lock().unwrap_or_else(|e| e.into_inner())
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
        Ok(self.access(|card| card.csr_read(offset)))
    }

    fn csr_write(&self, offset: u32, value: u32) -> Result<(), Error> {
        check_csr_offset(offset, self.csr_window_bytes())?;
        // Host writes to DMA memory are already in the card's memory (they
        // went through the same lock); the fence keeps the contract identical
        // to the VFIO backend's.
        std::sync::atomic::fence(Ordering::Release);
        self.access(|card| card.csr_write(offset, value));
        Ok(())
    }

    fn dma_alloc(&self, bytes: usize) -> Result<DmaBuffer, Error> {
        if bytes == 0 {
            return Err(DmaError::ZeroLength.into());
        }
        let len = bytes.div_ceil(PAGE_BYTES) * PAGE_BYTES;
        let iova = self.iova.reserve(len, PAGE_BYTES)?;
        let name = format!("DMA buffer at {iova:#x}");
        lock(&self.card)
            .memory_mut()
            .map(iova, len as u64, &name)
            .map_err(|e| DmaError::SimMemory(e.to_string()))?;
        tracing::trace!(iova, len, "sim DMA buffer");
        let memory = CardMemory {
            card: self.card.clone(),
            iova,
        };
        Ok(DmaBuffer::new(len, iova, Box::new(memory)))
    }

    fn dma_read(&self, iova: u64, out: &mut [u8]) -> Result<(), Error> {
        let bytes = out.len();
        lock(&self.card)
            .memory()
            .dma_read(iova, out)
            .map_err(|fault| {
                tracing::debug!("{fault}");
                DmaError::Unmapped { iova, bytes }.into()
            })
    }

    fn dma_write(&self, iova: u64, data: &[u8]) -> Result<(), Error> {
        lock(&self.card)
            .memory_mut()
            .dma_write(iova, data)
            .map_err(|fault| {
                tracing::debug!("{fault}");
                DmaError::Unmapped {
                    iova,
                    bytes: data.len(),
                }
                .into()
            })
    }

    fn advance(&self, cycles: u64) {
        match &self.network {
            Some((network, _)) => lock(network).run(cycles),
            None => lock(&self.card).run(cycles),
        }
    }

    fn cycle(&self) -> Option<u64> {
        Some(lock(&self.card).cycle())
    }

    fn enable_interrupts(&self, vectors: u32) -> Result<(), Error> {
        use regmap::interrupt;
        let refuse = |why: String| Error::NoInterrupts {
            backend: self.describe(),
            why,
        };
        let found = self.csr_read(interrupt::BASE + regmap::header::TYPE)?;
        if found != regmap::block_type::INTERRUPT {
            return Err(refuse("its design has no interrupt block".into()));
        }
        let available = self.csr_read(interrupt::BASE + interrupt::VECTORS)?;
        if vectors == 0 || vectors > available {
            return Err(refuse(format!(
                "{vectors} MSI-X vectors asked for, {available} offered"
            )));
        }
        // What vfio-pci does: the function masked while its table is
        // written, then MSI-X on.
        self.access(|card| card.set_msix(true, true));
        for v in 0..vectors {
            let entry = interrupt::table_offset() + v * interrupt::ENTRY_BYTES;
            self.csr_write(entry + interrupt::ENTRY_ADDR_LO, MSI_ADDRESS as u32)?;
            self.csr_write(entry + interrupt::ENTRY_ADDR_HI, (MSI_ADDRESS >> 32) as u32)?;
            self.csr_write(entry + interrupt::ENTRY_DATA, MSI_DATA_BASE + v)?;
            self.csr_write(entry + interrupt::ENTRY_CONTROL, 0)?;
        }
        // The table writes are posted: read one back before unmasking.
        self.csr_read(interrupt::table_offset() + interrupt::ENTRY_CONTROL)?;
        self.access(|card| card.set_msix(true, false));
        lock(&self.irqs).fired = vec![0; vectors as usize];
        tracing::debug!(vectors, "sim MSI-X enabled");
        Ok(())
    }

    fn wait_interrupt(&self, vector: u32, timeout: std::time::Duration) -> Result<u64, Error> {
        let limit = (timeout.as_nanos() / 4) as u64;
        let start = lock(&self.card).cycle();
        loop {
            {
                let mut irqs = lock(&self.irqs);
                self.collect_interrupts(&mut irqs);
                let enabled = irqs.fired.len() as u32;
                let fired = irqs
                    .fired
                    .get_mut(vector as usize)
                    .ok_or(Error::NoSuchVector { vector, enabled })?;
                if *fired > 0 {
                    return Ok(std::mem::take(fired));
                }
            }
            let waited = lock(&self.card).cycle() - start;
            if waited >= limit {
                return Ok(0);
            }
            match &self.network {
                Some((network, _)) => lock(network).run(IRQ_WAIT_STEP.min(limit - waited)),
                None => {
                    lock(&self.card).run_until(limit - waited, |c| c.interrupt_waiting());
                }
            }
        }
    }

    fn sleep(&self, duration: std::time::Duration) {
        // 4 ns a cycle (250 MHz).
        let cycles = (duration.as_nanos() / 4) as u64;
        match &self.network {
            Some((network, _)) => lock(network).run(cycles),
            None => lock(&self.card).sleep_cycles(cycles),
        }
    }
}

/// A buffer's memory: a mapped region of the card's host memory.
struct CardMemory {
    card: Arc<Mutex<Card>>,
    /// IOVA (= address in the card's host memory) of byte 0.
    iova: u64,
}

impl DmaMemory for CardMemory {
    fn read(&self, offset: usize, out: &mut [u8]) {
        lock(&self.card)
            .memory()
            .read(self.iova + offset as u64, out)
    }

    fn write(&mut self, offset: usize, data: &[u8]) {
        lock(&self.card)
            .memory_mut()
            .write(self.iova + offset as u64, data)
    }

    fn host_ptr(&self) -> Option<std::ptr::NonNull<u8>> {
        None
    }

    fn release(&mut self) -> Result<(), Error> {
        lock(&self.card)
            .memory_mut()
            .unmap(self.iova)
            .map(|_| ())
            .map_err(|e| DmaError::SimMemory(e.to_string()).into())
    }
}

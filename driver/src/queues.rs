//! An endpoint's queues: its TX descriptor ring and completion ring in DMA
//! memory, bound to its endpoint block. Records are opaque 64-byte entries
//! here; their fields (`homa_hw::host_abi`) are the host library's business.
//!
//! Opening an endpoint allocates both rings, writes their IOVAs and sizes into
//! the block, and writes the port last: a nonzero port is what opens the
//! endpoint on the card, so the card never sees it half configured. Closing
//! writes port 0 and then frees the rings; close an endpoint before dropping
//! its queues, or the card may still write completions into freed memory
//! (which the IOMMU refuses on a real card and which fails a simulation).

use homa_hw::host_abi::{self, completion};

use crate::device::Device;
use crate::regs::EndpointBlock;
use crate::ring::{CompletionRing, DescriptorRing, PhaseBit};
use crate::Error;

/// How long after its port is closed the card may still write for an
/// endpoint: its write path (the core's DMA write FIFO, the PCIe requester's
/// TLP in the making) holds a few KB, gone in about a microsecond at the
/// link's rate. Ten times that, before the rings and buffers are unmapped.
pub const CLOSE_DRAIN: std::time::Duration = std::time::Duration::from_micros(10);

/// Largest ring size the endpoint registers take, as log2 of the entries
/// (`regmap::endpoint::TX_RING_LOG2` and `CPL_RING_LOG2`: 0..=15).
pub const MAX_RING_LOG2: u32 = 15;

/// Where a completion's phase bit is: bit 0 of its PHASE field.
const PHASE: PhaseBit = PhaseBit {
    byte: completion::PHASE.offset,
    bit: 0,
};

/// One open endpoint's rings.
pub struct EndpointQueues {
    /// Which endpoint (index among the card's endpoint blocks).
    index: usize,
    /// Descriptors the host posts; rung at the block's TX_PRODUCER.
    tx: DescriptorRing,
    /// Completions the card writes; rung at the block's CPL_CONSUMER.
    completions: CompletionRing,
}

impl EndpointQueues {
    /// Opens endpoint `index` on Homa port `port` (nonzero) with a TX ring of
    /// `1 << tx_log2` descriptors and a completion ring of `1 << cpl_log2`
    /// entries.
    pub fn open(
        device: &Device,
        index: usize,
        port: u16,
        tx_log2: u32,
        cpl_log2: u32,
    ) -> Result<Self, Error> {
        assert!(port != 0, "port 0 means closed");
        assert!(
            tx_log2 <= MAX_RING_LOG2 && cpl_log2 <= MAX_RING_LOG2,
            "ring sizes are 1 << 0..={MAX_RING_LOG2} entries"
        );
        let block = device.endpoint(index)?;
        let backend = device.backend();
        let tx = DescriptorRing::new(
            backend,
            1 << tx_log2,
            host_abi::ENTRY_BYTES,
            block.tx_doorbell(),
        )?;
        let completions = CompletionRing::new(
            backend,
            1 << cpl_log2,
            host_abi::ENTRY_BYTES,
            PHASE,
            block.completion_doorbell(),
        )?;
        block.set_tx_ring(tx.iova(), tx_log2)?;
        block.set_completion_ring(completions.iova(), cpl_log2)?;
        block.set_port(port)?;
        // A read back: the writes above are posted, and a read's completion
        // passes none of them, so the endpoint takes traffic once it returns.
        block.port()?;
        tracing::debug!(
            endpoint = index,
            port,
            tx_iova = tx.iova(),
            completion_iova = completions.iova(),
            "endpoint open"
        );
        Ok(EndpointQueues {
            index,
            tx,
            completions,
        })
    }

    /// Which endpoint these queues belong to.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The TX ring.
    pub fn tx(&self) -> &DescriptorRing {
        &self.tx
    }

    /// Writes a descriptor into the TX ring (seen by the card at the next
    /// [`EndpointQueues::ring_tx`]); fails when the ring is full.
    pub fn post(&mut self, descriptor: &[u8; host_abi::ENTRY_BYTES]) -> Result<u32, Error> {
        self.tx.push(descriptor)
    }

    /// Rings the TX doorbell: every posted descriptor is ready.
    pub fn ring_tx(&self, device: &Device) -> Result<(), Error> {
        self.tx.ring_doorbell(device.backend())
    }

    /// Frees the TX slots of descriptors the card has taken (reads TX_CONSUMER).
    pub fn reap_tx(&mut self, device: &Device) -> Result<u32, Error> {
        let taken = self.block(device)?.tx_consumer()?;
        self.tx.consumed_up_to(taken)?;
        Ok(taken)
    }

    /// The next completion, if the card has written one.
    pub fn poll(&mut self, out: &mut [u8; host_abi::ENTRY_BYTES]) -> bool {
        self.completions.poll(out)
    }

    /// The next completion, decoded, if the card has written one.
    pub fn poll_completion(&mut self) -> Option<crate::entries::Completion> {
        let mut entry = [0u8; host_abi::ENTRY_BYTES];
        self.poll(&mut entry)
            .then(|| crate::entries::Completion::decode(&entry))
    }

    /// Tells the card the completions taken so far may be overwritten.
    pub fn release_completions(&self, device: &Device) -> Result<(), Error> {
        self.completions.ring_doorbell(device.backend())
    }

    /// Closes the endpoint on the card (port 0), then waits out the DMA
    /// writes the card may still have on their way to its memory; the rings
    /// are freed after.
    pub fn close(self, device: &Device) -> Result<(), Error> {
        let block = self.block(device)?;
        block.set_port(0)?;
        // A read: its completion leaves behind every write the PCIe block
        // has taken (no completion passes a posted write). Writes still
        // on the card, issued before the port closed, get CLOSE_DRAIN.
        block.port()?;
        device.backend().sleep(CLOSE_DRAIN);
        Ok(())
    }

    fn block<'d>(&self, device: &'d Device) -> Result<EndpointBlock<'d>, Error> {
        device.endpoint(self.index)
    }
}

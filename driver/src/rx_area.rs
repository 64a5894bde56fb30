//! An endpoint's receive area: `bpages` buffer pages of `BPAGE_BYTES` (64
//! KiB) of DMA memory, registered in the endpoint block, each handed to the
//! card. The card writes a received message at the start of a free bpage and
//! reports `bpage * BPAGE_BYTES` in its completion; the host gives the bpage
//! back (one register write, RX_BPAGE_PUSH) when the application is done.
//!
//! Register the area *before* opening the endpoint's queues: the port is
//! what opens the endpoint, and a card with an open port and no RX area
//! would write a message to IOVA 0. Close the queues (port 0) before
//! dropping the area.

use homa_hw::rx::bpage_pool::{BPAGE_BYTES, SLOTS};

use crate::device::Device;
use crate::dma::DmaBuffer;
use crate::Error;

/// Most bpages an endpoint's pool holds on the card.
pub const MAX_BPAGES: u32 = SLOTS as u32;

/// A registered receive area.
pub struct RxArea {
    /// Which endpoint (index among the card's endpoint blocks).
    index: usize,
    /// `bpages * BPAGE_BYTES` bytes the card writes messages into.
    buffer: DmaBuffer,
    /// Bpages in the area (all handed to the card at registration).
    bpages: u32,
}

impl RxArea {
    /// Allocates `bpages` (1 ..= `MAX_BPAGES`) bpages for endpoint `index`,
    /// registers the area and hands every bpage to the card.
    pub fn register(device: &Device, index: usize, bpages: u32) -> Result<RxArea, Error> {
        assert!(
            (1..=MAX_BPAGES).contains(&bpages),
            "an endpoint has 1..={MAX_BPAGES} bpages"
        );
        let buffer = device
            .backend()
            .dma_alloc(bpages as usize * BPAGE_BYTES as usize)?;
        let block = device.endpoint(index)?;
        block.set_rx_area(buffer.iova())?;
        let area = RxArea {
            index,
            buffer,
            bpages,
        };
        for page in 0..bpages {
            area.give_back(device, page)?;
        }
        tracing::debug!(
            endpoint = index,
            bpages,
            iova = area.buffer.iova(),
            "RX area"
        );
        Ok(area)
    }

    /// The area's memory: a message is `buffer_offset .. + length` in it.
    pub fn buffer(&self) -> &DmaBuffer {
        &self.buffer
    }

    pub fn bpages(&self) -> u32 {
        self.bpages
    }

    /// Hands bpage `page` (back) to the card.
    pub fn give_back(&self, device: &Device, page: u32) -> Result<(), Error> {
        debug_assert!(page < self.bpages);
        device.endpoint(self.index)?.push_bpage(page)
    }

    /// Bpages the card holds free for this endpoint now (RX_BPAGES_FREE).
    pub fn free_on_card(&self, device: &Device) -> Result<u32, Error> {
        device.endpoint(self.index)?.bpages_free()
    }
}

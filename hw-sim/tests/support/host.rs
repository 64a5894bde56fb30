//! A test host: a card of its own with hw-sim's plain host
//! (`homa_hw_sim::plain_host`) playing the driver's part, so the card's
//! tests do not depend on the driver crate.

use homa_hw::host_abi::ENTRY_BYTES;
use homa_hw_sim::card::Card;
use homa_hw_sim::dma_link::LinkConfig;
use homa_hw_sim::plain_host::{EndpointSetup, HostLayout, PlainHost};

pub use homa_hw_sim::plain_host::Send;

pub const RING_LOG2: u32 = 4;
/// Where this host keeps message buffers it sends from.
pub const TX_BUFFERS: u64 = 0x0100_0000;
pub const TX_BUFFER_BYTES: u64 = 0x0100_0000;
/// Bpages per endpoint handed to the card (ten 1 MB messages' worth; the
/// RX areas are 16 MiB apart: 256 bpages at most).
pub const BPAGES: u32 = 160;

/// Rings 4 KiB apart; bpages handed over scrambled (29 is coprime to 160),
/// so a message's bpages are not neighbours.
const LAYOUT: HostLayout = HostLayout {
    ring_log2: RING_LOG2,
    tx_rings: 0x0001_0000,
    cpl_rings: 0x0002_0000,
    ring_stride: 0x1000,
    rx_areas: 0x1000_0000,
    rx_area_stride: 0x0100_0000,
    tx_buffers: TX_BUFFERS,
    tx_buffer_bytes: TX_BUFFER_BYTES,
    bpage_push_step: 29,
};

pub fn tx_ring(e: usize) -> u64 {
    LAYOUT.tx_ring(e)
}

pub fn cpl_ring(e: usize) -> u64 {
    LAYOUT.cpl_ring(e)
}

pub fn rx_area(e: usize) -> u64 {
    LAYOUT.rx_area(e)
}

pub struct TestHost {
    pub card: Card,
    pub mac: [u8; 6],
    pub ip: u32,
    host: PlainHost,
}

impl TestHost {
    /// A card with its interface set and endpoints `0..ports.len()` open on
    /// `ports`, each with its rings and `BPAGES` bpages.
    pub fn new(name: &str, mac: [u8; 6], ip: u32, ports: &[u16]) -> TestHost {
        Self::with_link(name, mac, ip, ports, LinkConfig::default())
    }

    /// As [`TestHost::new`], the card's DMA over `link`.
    pub fn with_link(
        name: &str,
        mac: [u8; 6],
        ip: u32,
        ports: &[u16],
        link: LinkConfig,
    ) -> TestHost {
        let mut card = Card::new(name, link);
        let endpoints: Vec<EndpointSetup> = ports
            .iter()
            .map(|&port| EndpointSetup {
                port,
                bpages: BPAGES,
            })
            .collect();
        let host = PlainHost::open(&mut card, LAYOUT, mac, ip, &endpoints);
        TestHost {
            card,
            mac,
            ip,
            host,
        }
    }

    /// Reads a register back: a read passes no posted write, so every CSR
    /// write made before it has reached the core when this returns (over
    /// the TLP link a write lands 400 ns after it is made).
    pub fn flush(&mut self) {
        self.card
            .csr_read(homa_hw::regmap::endpoint::base(0) + homa_hw::regmap::endpoint::PORT);
    }

    /// Writes the descriptor into the endpoint's next TX slot (does not ring).
    pub fn post(&mut self, s: &Send) {
        self.host.post(&mut self.card, s);
    }

    /// Rings endpoint `e`'s doorbell: the card may take every posted descriptor.
    pub fn doorbell(&mut self, e: usize) {
        self.host.doorbell(&mut self.card, e);
    }

    /// New completion entries of endpoint `e`, consumed.
    pub fn poll(&mut self, e: usize) -> Vec<[u8; ENTRY_BYTES]> {
        self.host.poll(&mut self.card, e)
    }

    /// The bpages a received message occupies, in message order.
    pub fn bpages(c: &[u8; ENTRY_BYTES]) -> Vec<u32> {
        PlainHost::bpages(c)
    }

    /// Bytes of a received message, gathered from its bpages in the RX area.
    pub fn received(&self, e: usize, c: &[u8; ENTRY_BYTES]) -> Vec<u8> {
        self.host.received(&self.card, e, c)
    }

    /// Hands a message's bpages back to the card.
    pub fn give_back(&mut self, e: usize, c: &[u8; ENTRY_BYTES]) {
        self.host.give_back(&mut self.card, e, c);
    }
}

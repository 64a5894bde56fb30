//! A test host: plays the driver's part for the simulated card (maps its
//! memory, sets its registers, posts descriptors, rings doorbells, polls
//! completions by phase bit), in the plainest way, so the card's tests do not
//! depend on the driver crate.

use homa_hw::host_abi::{self, completion, tx_desc, ENTRY_BYTES};
use homa_hw::regmap::{endpoint, interface};
use homa_hw::rx::bpage_pool::BPAGE_BYTES;
use homa_hw_sim::card::Card;
use homa_hw_sim::pcie::PcieConfig;

pub const RING_LOG2: u32 = 4;
/// Where this host keeps message buffers it sends from.
pub const TX_BUFFERS: u64 = 0x0100_0000;
pub const TX_BUFFER_BYTES: u64 = 0x0100_0000;
/// Bpages per endpoint handed to the card (ten 1 MB messages' worth; the
/// RX areas are 16 MiB apart: 256 bpages at most).
pub const BPAGES: u32 = 160;

pub fn tx_ring(e: usize) -> u64 {
    0x0001_0000 + 0x1000 * e as u64
}

pub fn cpl_ring(e: usize) -> u64 {
    0x0002_0000 + 0x1000 * e as u64
}

pub fn rx_area(e: usize) -> u64 {
    0x1000_0000 + 0x0100_0000 * e as u64
}

/// A message to send: what goes into a TX descriptor.
#[derive(Clone, Debug)]
pub struct Send {
    pub endpoint: usize,
    pub opcode: u8,
    pub rpc_id: u64,
    pub buffer: u64,
    pub length: u32,
    pub peer_ip: u32,
    pub peer_port: u16,
    pub peer_mac: [u8; 6],
    pub cookie: u64,
}

pub struct TestHost {
    pub card: Card,
    pub mac: [u8; 6],
    pub ip: u32,
    /// Next TX ring index per endpoint.
    tx_next: Vec<u32>,
    /// Next completion index the host expects per endpoint.
    cpl_next: Vec<u32>,
}

impl TestHost {
    /// A card with its interface set and endpoints `0..ports.len()` open on
    /// `ports`, each with its rings and `BPAGES` bpages.
    pub fn new(name: &str, mac: [u8; 6], ip: u32, ports: &[u16]) -> TestHost {
        let mut card = Card::new(name, PcieConfig::default());
        let m = card.memory_mut();
        m.map(TX_BUFFERS, TX_BUFFER_BYTES, "tx buffers").unwrap();
        for e in 0..ports.len() {
            m.map(tx_ring(e), (ENTRY_BYTES << RING_LOG2) as u64, "tx ring")
                .unwrap();
            m.map(
                cpl_ring(e),
                (ENTRY_BYTES << RING_LOG2) as u64,
                "completion ring",
            )
            .unwrap();
            m.map(rx_area(e), BPAGES as u64 * BPAGE_BYTES, "rx area")
                .unwrap();
        }
        let mac_lo = u32::from_le_bytes(mac[..4].try_into().unwrap());
        let mac_hi = u16::from_le_bytes(mac[4..].try_into().unwrap()) as u32;
        card.csr_write(interface::BASE + interface::MAC_LO, mac_lo);
        card.csr_write(interface::BASE + interface::MAC_HI, mac_hi);
        card.csr_write(interface::BASE + interface::IPV4, ip);
        for (e, &port) in ports.iter().enumerate() {
            let b = endpoint::base(e);
            card.csr_write(b + endpoint::TX_RING_LO, tx_ring(e) as u32);
            card.csr_write(b + endpoint::TX_RING_HI, (tx_ring(e) >> 32) as u32);
            card.csr_write(b + endpoint::TX_RING_LOG2, RING_LOG2);
            card.csr_write(b + endpoint::CPL_RING_LO, cpl_ring(e) as u32);
            card.csr_write(b + endpoint::CPL_RING_HI, (cpl_ring(e) >> 32) as u32);
            card.csr_write(b + endpoint::CPL_RING_LOG2, RING_LOG2);
            card.csr_write(b + endpoint::RX_AREA_LO, rx_area(e) as u32);
            card.csr_write(b + endpoint::RX_AREA_HI, (rx_area(e) >> 32) as u32);
            // In a scrambled order, so a message's bpages are not neighbours.
            for i in 0..BPAGES {
                card.csr_write(b + endpoint::RX_BPAGE_PUSH, i * 29 % BPAGES);
            }
            card.csr_write(b + endpoint::PORT, port as u32);
        }
        TestHost {
            card,
            mac,
            ip,
            tx_next: vec![0; ports.len()],
            cpl_next: vec![0; ports.len()],
        }
    }

    /// Writes the descriptor into the endpoint's next TX slot (does not ring).
    pub fn post(&mut self, s: &Send) {
        let mut d = [0u8; ENTRY_BYTES];
        host_abi::put(&mut d, tx_desc::OPCODE, s.opcode as u64);
        host_abi::put(&mut d, tx_desc::PEER_PORT, s.peer_port as u64);
        host_abi::put(&mut d, tx_desc::LENGTH, s.length as u64);
        host_abi::put(&mut d, tx_desc::RPC_ID, s.rpc_id);
        host_abi::put(&mut d, tx_desc::BUFFER, s.buffer);
        host_abi::put(&mut d, tx_desc::PEER_IP, s.peer_ip as u64);
        host_abi::put_mac(&mut d, tx_desc::PEER_MAC, s.peer_mac);
        host_abi::put(&mut d, tx_desc::COOKIE, s.cookie);
        let index = self.tx_next[s.endpoint];
        let slot = index & ((1 << RING_LOG2) - 1);
        self.card
            .memory_mut()
            .write(tx_ring(s.endpoint) + slot as u64 * ENTRY_BYTES as u64, &d);
        self.tx_next[s.endpoint] = index + 1;
    }

    /// Rings endpoint `e`'s doorbell: the card may take every posted descriptor.
    pub fn doorbell(&mut self, e: usize) {
        self.card
            .csr_write(endpoint::base(e) + endpoint::TX_PRODUCER, self.tx_next[e]);
    }

    /// New completion entries of endpoint `e`, found by their phase bit in
    /// host memory alone; consumes them (CPL_CONSUMER) when there are any.
    pub fn poll(&mut self, e: usize) -> Vec<[u8; ENTRY_BYTES]> {
        let mut out = Vec::new();
        loop {
            let index = self.cpl_next[e];
            let slot = index & ((1 << RING_LOG2) - 1);
            let mut c = [0u8; ENTRY_BYTES];
            self.card
                .memory()
                .read(cpl_ring(e) + slot as u64 * ENTRY_BYTES as u64, &mut c);
            let expected_phase = ((index >> RING_LOG2) & 1 == 0) as u64;
            if host_abi::get(&c, completion::PHASE) & 1 != expected_phase {
                break;
            }
            out.push(c);
            self.cpl_next[e] = index + 1;
        }
        if !out.is_empty() {
            self.card
                .csr_write(endpoint::base(e) + endpoint::CPL_CONSUMER, self.cpl_next[e]);
        }
        out
    }

    /// The bpages a received message occupies, in message order.
    pub fn bpages(c: &[u8; ENTRY_BYTES]) -> Vec<u32> {
        let len = host_abi::get(c, completion::LENGTH);
        let count = len.div_ceil(BPAGE_BYTES).max(1) as usize;
        let first = (host_abi::get(c, completion::BUFFER_OFFSET) / BPAGE_BYTES) as u32;
        std::iter::once(first)
            .chain(completion::bpage_list(c, count))
            .collect()
    }

    /// Bytes of a received message, gathered from its bpages in the RX area.
    pub fn received(&self, e: usize, c: &[u8; ENTRY_BYTES]) -> Vec<u8> {
        let len = host_abi::get(c, completion::LENGTH) as usize;
        let mut buf = vec![0u8; len];
        for (i, page) in Self::bpages(c).into_iter().enumerate() {
            let start = i * BPAGE_BYTES as usize;
            let end = (start + BPAGE_BYTES as usize).min(len);
            self.card
                .memory()
                .read(rx_area(e) + page as u64 * BPAGE_BYTES, &mut buf[start..end]);
        }
        buf
    }

    /// Hands a message's bpages back to the card (the application is done
    /// with it).
    pub fn give_back(&mut self, e: usize, c: &[u8; ENTRY_BYTES]) {
        for page in Self::bpages(c) {
            self.card
                .csr_write(endpoint::base(e) + endpoint::RX_BPAGE_PUSH, page);
        }
    }
}

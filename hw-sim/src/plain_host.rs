//! A plain host for a simulated card: the driver's part played in the
//! plainest way (maps host memory, sets the interface and endpoint registers,
//! posts TX descriptors, rings doorbells, polls completions by their phase
//! bit, gathers received messages from their bpages and hands the bpages
//! back), so the card's testbenches and the fuzzer do not depend on the
//! driver crate, and a bug in the driver cannot hide one in the card.
//!
//! Every call takes the [`Card`] it acts on: a test that owns its card
//! passes it, and one whose cards sit in a [`SimNetwork`](crate::network::SimNetwork)
//! wraps the call in `SimNetwork::access`, so its BAR accesses take the
//! card's cycles while the other cards run on. Host memory accesses take no
//! cycles (the CPU's own memory).

use homa_hw::host_abi::{self, completion, tx_desc, ENTRY_BYTES};
use homa_hw::regmap::{endpoint, interface};
use homa_hw::rx::bpage_pool::BPAGE_BYTES;

use crate::card::Card;

/// Where a host keeps its rings, its RX areas and the buffers it sends
/// from, in the card's host memory (IOVAs).
#[derive(Clone, Copy, Debug)]
pub struct HostLayout {
    /// Entries per ring (TX and completion), as a power of two.
    pub ring_log2: u32,
    /// Endpoint `e`'s TX ring is at `tx_rings + e * ring_stride`, its
    /// completion ring at `cpl_rings + e * ring_stride`.
    pub tx_rings: u64,
    pub cpl_rings: u64,
    /// Bytes between two endpoints' rings: at least a ring's bytes.
    pub ring_stride: u64,
    /// Endpoint `e`'s RX area (its bpages) is at `rx_areas + e * rx_area_stride`.
    pub rx_areas: u64,
    pub rx_area_stride: u64,
    /// The buffers messages are sent from: `tx_buffer_bytes` at `tx_buffers`.
    pub tx_buffers: u64,
    pub tx_buffer_bytes: u64,
    /// The bpages are handed to the card in the order `i * step mod count`:
    /// 1 in order; a step coprime to the count scrambles them, so a
    /// message's bpages are not neighbours.
    pub bpage_push_step: u32,
}

impl HostLayout {
    pub fn tx_ring(&self, e: usize) -> u64 {
        self.tx_rings + self.ring_stride * e as u64
    }

    pub fn cpl_ring(&self, e: usize) -> u64 {
        self.cpl_rings + self.ring_stride * e as u64
    }

    pub fn rx_area(&self, e: usize) -> u64 {
        self.rx_areas + self.rx_area_stride * e as u64
    }

    /// Bytes of one ring.
    pub fn ring_bytes(&self) -> u64 {
        (ENTRY_BYTES as u64) << self.ring_log2
    }
}

/// One endpoint to open: its Homa port and the bpages its RX area holds.
#[derive(Clone, Copy, Debug)]
pub struct EndpointSetup {
    pub port: u16,
    pub bpages: u32,
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

impl Send {
    /// The TX descriptor that asks the card to send this message.
    pub fn descriptor(&self) -> [u8; ENTRY_BYTES] {
        let mut d = [0u8; ENTRY_BYTES];
        host_abi::put(&mut d, tx_desc::OPCODE, self.opcode as u64);
        host_abi::put(&mut d, tx_desc::PEER_PORT, self.peer_port as u64);
        host_abi::put(&mut d, tx_desc::LENGTH, self.length as u64);
        host_abi::put(&mut d, tx_desc::RPC_ID, self.rpc_id);
        host_abi::put(&mut d, tx_desc::BUFFER, self.buffer);
        host_abi::put(&mut d, tx_desc::PEER_IP, self.peer_ip as u64);
        host_abi::put_mac(&mut d, tx_desc::PEER_MAC, self.peer_mac);
        host_abi::put(&mut d, tx_desc::COOKIE, self.cookie);
        d
    }
}

/// The host's side of the rings: where it is in each.
pub struct PlainHost {
    pub layout: HostLayout,
    /// Next TX ring index per endpoint (free-running).
    tx_next: Vec<u32>,
    /// Next completion index the host expects per endpoint (free-running).
    cpl_next: Vec<u32>,
}

impl PlainHost {
    /// Maps `card`'s host memory as `layout` says, sets its MAC and IPv4
    /// address, and opens endpoints `0..endpoints.len()`: rings, RX area,
    /// bpages, then the port (which opens it).
    pub fn open(
        card: &mut Card,
        layout: HostLayout,
        mac: [u8; 6],
        ip: u32,
        endpoints: &[EndpointSetup],
    ) -> PlainHost {
        let m = card.memory_mut();
        m.map(layout.tx_buffers, layout.tx_buffer_bytes, "tx buffers")
            .expect("fresh memory");
        for (e, ep) in endpoints.iter().enumerate() {
            m.map(layout.tx_ring(e), layout.ring_bytes(), "tx ring")
                .expect("fresh memory");
            m.map(layout.cpl_ring(e), layout.ring_bytes(), "completion ring")
                .expect("fresh memory");
            m.map(layout.rx_area(e), ep.bpages as u64 * BPAGE_BYTES, "rx area")
                .expect("fresh memory");
        }
        let mac_lo = u32::from_le_bytes(mac[..4].try_into().unwrap());
        let mac_hi = u16::from_le_bytes(mac[4..].try_into().unwrap()) as u32;
        card.csr_write(interface::BASE + interface::MAC_LO, mac_lo);
        card.csr_write(interface::BASE + interface::MAC_HI, mac_hi);
        card.csr_write(interface::BASE + interface::IPV4, ip);
        for (e, ep) in endpoints.iter().enumerate() {
            let b = endpoint::base(e);
            let (tx, cpl, rx) = (layout.tx_ring(e), layout.cpl_ring(e), layout.rx_area(e));
            card.csr_write(b + endpoint::TX_RING_LO, tx as u32);
            card.csr_write(b + endpoint::TX_RING_HI, (tx >> 32) as u32);
            card.csr_write(b + endpoint::TX_RING_LOG2, layout.ring_log2);
            card.csr_write(b + endpoint::CPL_RING_LO, cpl as u32);
            card.csr_write(b + endpoint::CPL_RING_HI, (cpl >> 32) as u32);
            card.csr_write(b + endpoint::CPL_RING_LOG2, layout.ring_log2);
            card.csr_write(b + endpoint::RX_AREA_LO, rx as u32);
            card.csr_write(b + endpoint::RX_AREA_HI, (rx >> 32) as u32);
            for i in 0..ep.bpages {
                let page = (i as u64 * layout.bpage_push_step as u64 % ep.bpages as u64) as u32;
                card.csr_write(b + endpoint::RX_BPAGE_PUSH, page);
            }
            card.csr_write(b + endpoint::PORT, ep.port as u32);
        }
        // A read flushes the posted writes before it (a read passes no
        // posted write): the endpoints are open when this returns.
        if !endpoints.is_empty() {
            card.csr_read(endpoint::base(endpoints.len() - 1) + endpoint::PORT);
        }
        PlainHost {
            layout,
            tx_next: vec![0; endpoints.len()],
            cpl_next: vec![0; endpoints.len()],
        }
    }

    /// Writes the descriptor into the endpoint's next TX slot (does not ring).
    pub fn post(&mut self, card: &mut Card, s: &Send) {
        let index = self.tx_next[s.endpoint];
        let slot = index & ((1 << self.layout.ring_log2) - 1);
        let at = self.layout.tx_ring(s.endpoint) + slot as u64 * ENTRY_BYTES as u64;
        card.memory_mut().write(at, &s.descriptor());
        self.tx_next[s.endpoint] = index + 1;
    }

    /// Rings endpoint `e`'s doorbell: the card may take every posted descriptor.
    pub fn doorbell(&self, card: &mut Card, e: usize) {
        card.csr_write(endpoint::base(e) + endpoint::TX_PRODUCER, self.tx_next[e]);
    }

    /// New completion entries of endpoint `e`, found by their phase bit in
    /// host memory alone; consumes them (CPL_CONSUMER) when there are any.
    pub fn poll(&mut self, card: &mut Card, e: usize) -> Vec<[u8; ENTRY_BYTES]> {
        let log2 = self.layout.ring_log2;
        let mut out = Vec::new();
        loop {
            let index = self.cpl_next[e];
            let slot = index & ((1 << log2) - 1);
            let mut c = [0u8; ENTRY_BYTES];
            let at = self.layout.cpl_ring(e) + slot as u64 * ENTRY_BYTES as u64;
            card.memory().read(at, &mut c);
            let expected_phase = ((index >> log2) & 1 == 0) as u64;
            if host_abi::get(&c, completion::PHASE) & 1 != expected_phase {
                break;
            }
            out.push(c);
            self.cpl_next[e] = index + 1;
        }
        if !out.is_empty() {
            card.csr_write(endpoint::base(e) + endpoint::CPL_CONSUMER, self.cpl_next[e]);
        }
        out
    }

    /// The bpages a received message occupies, in message order (at most
    /// a whole message's: a completion claiming more gets no more).
    pub fn bpages(c: &[u8; ENTRY_BYTES]) -> Vec<u32> {
        let len = host_abi::get(c, completion::LENGTH);
        let count = len
            .div_ceil(BPAGE_BYTES)
            .clamp(1, completion::MAX_MESSAGE_BPAGES as u64) as usize;
        let first = (host_abi::get(c, completion::BUFFER_OFFSET) / BPAGE_BYTES) as u32;
        std::iter::once(first)
            .chain(completion::bpage_list(c, count))
            .collect()
    }

    /// Bytes of a received message, gathered from its bpages in endpoint
    /// `e`'s RX area (cut at what its bpages can hold).
    pub fn received(&self, card: &Card, e: usize, c: &[u8; ENTRY_BYTES]) -> Vec<u8> {
        let page_bytes = BPAGE_BYTES as usize;
        let len = (host_abi::get(c, completion::LENGTH) as usize)
            .min(completion::MAX_MESSAGE_BPAGES * page_bytes);
        let mut buf = vec![0u8; len];
        for (i, page) in Self::bpages(c).into_iter().enumerate() {
            let start = i * page_bytes;
            if start >= len {
                break;
            }
            let end = (start + page_bytes).min(len);
            let at = self.layout.rx_area(e) + page as u64 * BPAGE_BYTES;
            card.memory().read(at, &mut buf[start..end]);
        }
        buf
    }

    /// The first byte written past a received message's end in its last
    /// bpage (as a byte offset from the message's start), if any. Only
    /// meaningful for bpages the host zeroed before giving them back
    /// ([`PlainHost::zero`]).
    pub fn written_past_end(&self, card: &Card, e: usize, c: &[u8; ENTRY_BYTES]) -> Option<usize> {
        let len = host_abi::get(c, completion::LENGTH) as usize;
        let pages = Self::bpages(c);
        let page_bytes = BPAGE_BYTES as usize;
        let last = *pages.get(len.saturating_sub(1) / page_bytes)?;
        let from = len - (len.saturating_sub(1) / page_bytes) * page_bytes;
        let mut tail = vec![0u8; page_bytes - from];
        let at = self.layout.rx_area(e) + last as u64 * BPAGE_BYTES + from as u64;
        card.memory().read(at, &mut tail);
        tail.iter().position(|&b| b != 0).map(|i| len + i)
    }

    /// Zeroes a received message's bpages (before they go back).
    pub fn zero(&self, card: &mut Card, e: usize, c: &[u8; ENTRY_BYTES]) {
        let zeros = vec![0u8; BPAGE_BYTES as usize];
        for page in Self::bpages(c) {
            let at = self.layout.rx_area(e) + page as u64 * BPAGE_BYTES;
            card.memory_mut().write(at, &zeros);
        }
    }

    /// Hands a message's bpages back to the card (the application is done
    /// with it).
    pub fn give_back(&self, card: &mut Card, e: usize, c: &[u8; ENTRY_BYTES]) {
        for page in Self::bpages(c) {
            card.csr_write(endpoint::base(e) + endpoint::RX_BPAGE_PUSH, page);
        }
    }
}

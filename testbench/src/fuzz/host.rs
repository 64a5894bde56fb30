//! The fuzzer's hosts: the driver's part for a simulated card, in the
//! plainest way (maps memory, sets registers, posts descriptors, rings
//! doorbells, polls completions by their phase bit), through the network so
//! every BAR access takes the card's cycles while the other card runs on.

use homa_hw::host_abi::{self, completion, tx_desc, ENTRY_BYTES};
use homa_hw::regmap::{endpoint, interface};
use homa_hw::rx::bpage_pool::BPAGE_BYTES;
use homa_hw_sim::network::SimNetwork;

/// Ring entries: 2^8 per ring.
pub const RING_LOG2: u32 = 8;
/// Where each host keeps the messages it sends: 64 slots of 64 KiB.
pub const TX_BUFFERS: u64 = 0x0100_0000;
pub const TX_SLOT_BYTES: u64 = 0x1_0000;
pub const TX_SLOTS: u64 = 64;

pub fn tx_ring(e: usize) -> u64 {
    0x0001_0000 + 0x4000 * e as u64
}

pub fn cpl_ring(e: usize) -> u64 {
    0x0010_0000 + 0x4000 * e as u64
}

pub fn rx_area(e: usize) -> u64 {
    0x1000_0000 + 0x0400_0000 * e as u64
}

/// A message to send.
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

pub struct Host {
    /// The card's index in the network.
    pub card: usize,
    tx_next: Vec<u32>,
    cpl_next: Vec<u32>,
}

impl Host {
    /// Sets card `card`'s interface and opens endpoint `e` on `ports[e].0`
    /// with `ports[e].1` bpages, memory mapped for the card to reach.
    pub fn new(
        net: &mut SimNetwork,
        card: usize,
        mac: [u8; 6],
        ip: u32,
        ports: &[(u16, u32)],
    ) -> Host {
        {
            let mut c = net.card(card).lock().unwrap_or_else(|e| e.into_inner());
            let m = c.memory_mut();
            m.map(TX_BUFFERS, TX_SLOTS * TX_SLOT_BYTES, "tx buffers")
                .expect("fresh memory");
            for (e, &(_, bpages)) in ports.iter().enumerate() {
                let ring = (ENTRY_BYTES << RING_LOG2) as u64;
                m.map(tx_ring(e), ring, "tx ring").expect("fresh memory");
                m.map(cpl_ring(e), ring, "completion ring")
                    .expect("fresh memory");
                m.map(rx_area(e), bpages as u64 * BPAGE_BYTES, "rx area")
                    .expect("fresh memory");
            }
        }
        let mac_lo = u32::from_le_bytes(mac[..4].try_into().unwrap());
        let mac_hi = u16::from_le_bytes(mac[4..].try_into().unwrap()) as u32;
        net.access(card, |c| {
            c.csr_write(interface::BASE + interface::MAC_LO, mac_lo);
            c.csr_write(interface::BASE + interface::MAC_HI, mac_hi);
            c.csr_write(interface::BASE + interface::IPV4, ip);
            for (e, &(port, bpages)) in ports.iter().enumerate() {
                let b = endpoint::base(e);
                c.csr_write(b + endpoint::TX_RING_LO, tx_ring(e) as u32);
                c.csr_write(b + endpoint::TX_RING_HI, (tx_ring(e) >> 32) as u32);
                c.csr_write(b + endpoint::TX_RING_LOG2, RING_LOG2);
                c.csr_write(b + endpoint::CPL_RING_LO, cpl_ring(e) as u32);
                c.csr_write(b + endpoint::CPL_RING_HI, (cpl_ring(e) >> 32) as u32);
                c.csr_write(b + endpoint::CPL_RING_LOG2, RING_LOG2);
                c.csr_write(b + endpoint::RX_AREA_LO, rx_area(e) as u32);
                c.csr_write(b + endpoint::RX_AREA_HI, (rx_area(e) >> 32) as u32);
                for i in 0..bpages {
                    c.csr_write(b + endpoint::RX_BPAGE_PUSH, i);
                }
                c.csr_write(b + endpoint::PORT, port as u32);
            }
        });
        Host {
            card,
            tx_next: vec![0; ports.len()],
            cpl_next: vec![0; ports.len()],
        }
    }

    /// Writes a descriptor into endpoint `s.endpoint`'s next TX slot and
    /// rings its doorbell.
    pub fn send(&mut self, net: &mut SimNetwork, s: &Send) {
        let mut d = [0u8; ENTRY_BYTES];
        host_abi::put(&mut d, tx_desc::OPCODE, s.opcode as u64);
        host_abi::put(&mut d, tx_desc::PEER_PORT, s.peer_port as u64);
        host_abi::put(&mut d, tx_desc::LENGTH, s.length as u64);
        host_abi::put(&mut d, tx_desc::RPC_ID, s.rpc_id);
        host_abi::put(&mut d, tx_desc::BUFFER, s.buffer);
        host_abi::put(&mut d, tx_desc::PEER_IP, s.peer_ip as u64);
        host_abi::put_mac(&mut d, tx_desc::PEER_MAC, s.peer_mac);
        host_abi::put(&mut d, tx_desc::COOKIE, s.cookie);
        let e = s.endpoint;
        let index = self.tx_next[e];
        let slot = index & ((1 << RING_LOG2) - 1);
        self.write(net, tx_ring(e) + slot as u64 * ENTRY_BYTES as u64, &d);
        self.tx_next[e] = index + 1;
        let producer = self.tx_next[e];
        net.access(self.card, |c| {
            c.csr_write(endpoint::base(e) + endpoint::TX_PRODUCER, producer)
        });
    }

    /// Host memory writes (no cycles: the CPU's own memory).
    pub fn write(&self, net: &mut SimNetwork, addr: u64, bytes: &[u8]) {
        net.card(self.card)
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .memory_mut()
            .write(addr, bytes);
    }

    pub fn read(&self, net: &SimNetwork, addr: u64, buf: &mut [u8]) {
        net.card(self.card)
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .memory()
            .read(addr, buf);
    }

    /// New completions of endpoint `e` (by phase bit), consumed.
    pub fn poll(&mut self, net: &mut SimNetwork, e: usize) -> Vec<[u8; ENTRY_BYTES]> {
        let mut out = Vec::new();
        loop {
            let index = self.cpl_next[e];
            let slot = index & ((1 << RING_LOG2) - 1);
            let mut c = [0u8; ENTRY_BYTES];
            self.read(net, cpl_ring(e) + slot as u64 * ENTRY_BYTES as u64, &mut c);
            let expected_phase = ((index >> RING_LOG2) & 1 == 0) as u64;
            if host_abi::get(&c, completion::PHASE) & 1 != expected_phase {
                break;
            }
            out.push(c);
            self.cpl_next[e] = index + 1;
        }
        if !out.is_empty() {
            let consumer = self.cpl_next[e];
            net.access(self.card, |c| {
                c.csr_write(endpoint::base(e) + endpoint::CPL_CONSUMER, consumer)
            });
        }
        out
    }

    /// The bpages a received message occupies, in message order.
    pub fn bpages(c: &[u8; ENTRY_BYTES]) -> Vec<u32> {
        let len = host_abi::get(c, completion::LENGTH);
        let count = len.div_ceil(BPAGE_BYTES).clamp(1, 16) as usize;
        let first = (host_abi::get(c, completion::BUFFER_OFFSET) / BPAGE_BYTES) as u32;
        std::iter::once(first)
            .chain(completion::bpage_list(c, count))
            .collect()
    }

    /// Bytes of a received message, gathered from its bpages.
    pub fn received(&self, net: &SimNetwork, e: usize, c: &[u8; ENTRY_BYTES]) -> Vec<u8> {
        let len = (host_abi::get(c, completion::LENGTH) as usize).min(16 * BPAGE_BYTES as usize);
        let mut buf = vec![0u8; len];
        for (i, page) in Self::bpages(c).into_iter().enumerate() {
            let start = i * BPAGE_BYTES as usize;
            if start >= len {
                break;
            }
            let end = (start + BPAGE_BYTES as usize).min(len);
            self.read(
                net,
                rx_area(e) + page as u64 * BPAGE_BYTES,
                &mut buf[start..end],
            );
        }
        buf
    }

    /// The first byte written past a received message's end in its last
    /// bpage (as a byte offset from the message's start), if any. Only
    /// meaningful for bpages the host zeroed before giving them back
    /// ([`Host::zero`]).
    pub fn written_past_end(
        &self,
        net: &SimNetwork,
        e: usize,
        c: &[u8; ENTRY_BYTES],
    ) -> Option<usize> {
        let len = host_abi::get(c, completion::LENGTH) as usize;
        let pages = Self::bpages(c);
        let page_bytes = BPAGE_BYTES as usize;
        let last = *pages.get(len.saturating_sub(1) / page_bytes)?;
        let from = len - (len.saturating_sub(1) / page_bytes) * page_bytes;
        let mut tail = vec![0u8; page_bytes - from];
        self.read(
            net,
            rx_area(e) + last as u64 * BPAGE_BYTES + from as u64,
            &mut tail,
        );
        tail.iter().position(|&b| b != 0).map(|i| len + i)
    }

    /// Zeroes a received message's bpages (before they go back).
    pub fn zero(&self, net: &mut SimNetwork, e: usize, c: &[u8; ENTRY_BYTES]) {
        let zeros = vec![0u8; BPAGE_BYTES as usize];
        for page in Self::bpages(c) {
            self.write(net, rx_area(e) + page as u64 * BPAGE_BYTES, &zeros);
        }
    }

    /// Hands a message's bpages back to the card.
    pub fn give_back(&self, net: &mut SimNetwork, e: usize, c: &[u8; ENTRY_BYTES]) {
        let pages = Self::bpages(c);
        net.access(self.card, |card| {
            for page in pages {
                card.csr_write(endpoint::base(e) + endpoint::RX_BPAGE_PUSH, page);
            }
        });
    }
}

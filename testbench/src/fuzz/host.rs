//! The fuzzer's hosts: hw-sim's plain host (`homa_hw_sim::plain_host`) for
//! a card in the network, each call that touches the BAR made through
//! `SimNetwork::access`, so every BAR access takes the card's cycles while
//! the other card runs on.

use homa_hw::host_abi::ENTRY_BYTES;
use homa_hw_sim::card::Card;
use homa_hw_sim::network::SimNetwork;
use homa_hw_sim::plain_host::{EndpointSetup, HostLayout, PlainHost};

pub use homa_hw_sim::plain_host::Send;

/// Where each host keeps the messages it sends: 64 slots of 64 KiB.
pub const TX_BUFFERS: u64 = 0x0100_0000;
pub const TX_SLOT_BYTES: u64 = 0x1_0000;
pub const TX_SLOTS: u64 = 64;

/// Rings of 2^8 entries; RX areas 64 MiB apart; bpages handed over in order.
const LAYOUT: HostLayout = HostLayout {
    ring_log2: 8,
    tx_rings: 0x0001_0000,
    cpl_rings: 0x0010_0000,
    ring_stride: 0x4000,
    rx_areas: 0x1000_0000,
    rx_area_stride: 0x0400_0000,
    tx_buffers: TX_BUFFERS,
    tx_buffer_bytes: TX_SLOTS * TX_SLOT_BYTES,
    bpage_push_step: 1,
};

pub struct Host {
    /// The card's index in the network.
    pub card: usize,
    host: PlainHost,
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
        let endpoints: Vec<EndpointSetup> = ports
            .iter()
            .map(|&(port, bpages)| EndpointSetup { port, bpages })
            .collect();
        let host = net.access(card, |c| PlainHost::open(c, LAYOUT, mac, ip, &endpoints));
        Host { card, host }
    }

    /// Writes a descriptor into endpoint `s.endpoint`'s next TX slot and
    /// rings its doorbell.
    pub fn send(&mut self, net: &mut SimNetwork, s: &Send) {
        let host = &mut self.host;
        net.access(self.card, |c| {
            host.post(c, s);
            host.doorbell(c, s.endpoint);
        });
    }

    /// Host memory writes (no cycles: the CPU's own memory).
    pub fn write(&self, net: &mut SimNetwork, addr: u64, bytes: &[u8]) {
        self.with_card(net, |c| c.memory_mut().write(addr, bytes));
    }

    /// New completions of endpoint `e` (by phase bit), consumed.
    pub fn poll(&mut self, net: &mut SimNetwork, e: usize) -> Vec<[u8; ENTRY_BYTES]> {
        let host = &mut self.host;
        net.access(self.card, |c| host.poll(c, e))
    }

    /// Bytes of a received message, gathered from its bpages.
    pub fn received(&self, net: &SimNetwork, e: usize, c: &[u8; ENTRY_BYTES]) -> Vec<u8> {
        self.with_card(net, |card| self.host.received(card, e, c))
    }

    /// See [`PlainHost::written_past_end`].
    pub fn written_past_end(
        &self,
        net: &SimNetwork,
        e: usize,
        c: &[u8; ENTRY_BYTES],
    ) -> Option<usize> {
        self.with_card(net, |card| self.host.written_past_end(card, e, c))
    }

    /// Zeroes a received message's bpages (before they go back).
    pub fn zero(&self, net: &mut SimNetwork, e: usize, c: &[u8; ENTRY_BYTES]) {
        self.with_card(net, |card| self.host.zero(card, e, c));
    }

    /// Hands a message's bpages back to the card.
    pub fn give_back(&self, net: &mut SimNetwork, e: usize, c: &[u8; ENTRY_BYTES]) {
        net.access(self.card, |card| self.host.give_back(card, e, c));
    }

    /// The card alone, for host memory (no cycles pass).
    fn with_card<R>(&self, net: &SimNetwork, f: impl FnOnce(&mut Card) -> R) -> R {
        f(&mut net
            .card(self.card)
            .lock()
            .unwrap_or_else(|e| e.into_inner()))
    }
}

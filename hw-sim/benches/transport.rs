//! Homa's mechanism on the RTL cards, in clock cycles (4 ns each at 250 MHz):
//!
//! - grant latency: a 200 KB message arrives packet by packet at an idle
//!   card; for each DATA packet, the cycles from its last beat into the
//!   core to the first beat of the GRANT it causes leaving the core
//!   (HomaModule needs 25-37 us of software for this);
//! - goodput: one 1,000,000-byte request card to card over a 100 Gb/s cable
//!   (1 us each way): the payload after the first DATA frame over the
//!   cycles from that frame's arrival at the server to the last one's, so
//!   the link's delay is not counted (an MTU frame carries 1424 payload
//!   bytes in 1538 bytes of wire time, so the link's payload rate is
//!   92.6 Gb/s); and, with the delay, from the first DATA frame leaving the
//!   client to the last arriving;
//! - RX service time: frames queued back to back at one card's RX port
//!   (faster than the wire: this is the RX path's own rate), the cycles
//!   per frame until its counters have counted them all, and what the RX
//!   FIFO dropped: GRANTs, one-packet 100-byte messages, and MTU packets of
//!   8 messages in turn;
//! - a 1-byte RPC's round trip, alone and while 8 RPCs of 1 MB are in
//!   flight from the same client to the same server (p50 and p99 over the
//!   1-byte RPCs run back to back meanwhile);
//! - TX message rate: 64-byte requests posted a ring at a time (16
//!   descriptors), from the doorbell to the last of their 16 frames leaving
//!   the card (the descriptor fetch's batching and the PCIe round trip set
//!   it). Not to the TX completions: a request's completion comes when it is
//!   released, once its response begins to arrive (here, with no server, when it times
//!   out).
//!
//! The cards' DMA goes over the TLP link (`dma_link`: the PCIe requester's
//! RTL and the root-complex model), as on a board; goodput and the loaded
//! round trip are measured over the ideal link too (the core's DMA ports
//! served directly), which shows what the PCIe path costs.
//!
//! `cargo bench -p homa-hw-sim --bench transport` (`-- --quick`: fewer runs).

#[path = "../tests/support/mod.rs"]
#[allow(dead_code)]
mod support;

use homa_hw::host_abi::{self, completion, tx_desc};
use homa_hw::regmap::{grant, rx_counters};
use homa_hw_sim::cable::Cable;
use homa_hw_sim::dma_link::LinkConfig;
use homa_hw_sim::pcie::PcieConfig;
use homa_wire::*;
use support::host::{rx_area, Send, TestHost, TX_BUFFERS};

const CLIENT_MAC: [u8; 6] = [2, 0, 0, 0, 0, 1];
const SERVER_MAC: [u8; 6] = [2, 0, 0, 0, 0, 2];
const CLIENT_IP: u32 = 0x0a00_0001;
const SERVER_IP: u32 = 0x0a00_0002;
const CLIENT_PORT: u16 = 0x8000;
const SERVER_PORT: u16 = 99;
const PAYLOAD: usize = 1424;

fn percentile(sorted: &[u64], p: f64) -> u64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// A DATA packet of a `len`-byte message from the client's address.
fn data(id: u64, len: usize, offset: usize) -> Vec<u8> {
    let end = (offset + PAYLOAD).min(len);
    let mut common = CommonHeader::new(CLIENT_PORT, SERVER_PORT, id, PacketType::Data);
    common.sequence = offset as u32;
    Frame {
        eth: EthernetHeader {
            dst: MacAddr(SERVER_MAC),
            src: MacAddr(CLIENT_MAC),
        },
        ip: Ipv4Header::homa(CLIENT_IP.into(), SERVER_IP.into(), 0),
        homa: HomaPacket {
            common,
            body: Body::Data(Data {
                message_length: len as u32,
                incoming: (len as u32).min(grant::UNSCHED_BYTES_DEFAULT),
                ack: AckEntry::default(),
                cutoff_version: 1,
                retransmit: 0,
                pad: [0; 3],
                seg_offset: offset as u32,
                payload: vec![0x5a; end - offset],
            }),
        },
    }
    .encode()
    .unwrap()
}

/// A GRANT from the client's address: the smallest frame Homa sends
/// often (67 bytes, 91 on the wire: 1.82 cycles at 100 Gb/s; two beats of
/// the core's port).
fn grant_frame(id: u64, offset: u32) -> Vec<u8> {
    Frame {
        eth: EthernetHeader {
            dst: MacAddr(SERVER_MAC),
            src: MacAddr(CLIENT_MAC),
        },
        ip: Ipv4Header::homa(CLIENT_IP.into(), SERVER_IP.into(), 7),
        homa: HomaPacket {
            common: CommonHeader::new(CLIENT_PORT, SERVER_PORT, id, PacketType::Grant),
            body: Body::Grant(Grant {
                offset,
                priority: 0,
            }),
        },
    }
    .encode()
    .unwrap()
}

/// What `frames` back to back on the RX port cost: cycles from the first
/// beat in until the RX engine has taken the last (the RX counter at
/// `counter` has counted them all; read every 32 cycles), and the frames
/// the RX FIFO dropped.
fn rx_rate(frames: &[Vec<u8>], counter: u32) -> (u64, u32) {
    let mut h = TestHost::new("bench_rx_rate", SERVER_MAC, SERVER_IP, &[SERVER_PORT]);
    let read = |h: &mut TestHost, r: u32| h.card.csr_read(rx_counters::BASE + r);
    let before = read(&mut h, counter);
    let start = h.card.cycle();
    for f in frames {
        h.card.receive(f);
    }
    let (mut last, mut last_change) = (before, start);
    while h.card.cycle() - last_change < 2_000 {
        for _ in 0..32 {
            h.card.step();
        }
        // The host takes its completions (and gives the bpages back), or
        // the 16-entry ring fills and the RX engine waits on it.
        for c in h.poll(0) {
            h.give_back(0, &c);
        }
        let now = read(&mut h, counter);
        if now != last {
            (last, last_change) = (now, h.card.cycle());
        }
        if (now - before) as usize == frames.len() {
            break;
        }
    }
    let overflows = read(&mut h, rx_counters::FIFO_OVERFLOWS);
    (last_change - start, overflows)
}

fn grant_latency() -> Vec<u64> {
    let mut h = TestHost::new("bench_grant", SERVER_MAC, SERVER_IP, &[SERVER_PORT]);
    // Longer than the dynamic window (max_incoming / 2 with one message), so
    // every packet moves the grant on.
    let len = 1_000_000;
    let mut samples = Vec::new();
    let mut offset = 0;
    while offset < 300 * PAYLOAD {
        h.card.receive(&data(2, len, offset));
        // Step until the frame's last beat is in, then until a GRANT leaves.
        let mut last_in = None;
        for _ in 0..2000 {
            h.card.step();
            if last_in.is_none() && h.card.rx_idle() {
                last_in = Some(h.card.cycle() - 1);
            }
            let sent = h.card.take_transmitted();
            if let Some(f) = sent.first() {
                // The GRANT is two beats: its first left a cycle before its last.
                samples.push(f.cycle - 1 - last_in.expect("DATA in before its GRANT"));
                break;
            }
        }
        offset += PAYLOAD;
    }
    samples
}

struct Pair {
    client: TestHost,
    server: TestHost,
    cable: Cable,
    /// Cycles the first DATA left the client / reached the server / the
    /// last reached the server.
    first_out: Option<u64>,
    first_in: Option<u64>,
    last_in: u64,
}

impl Pair {
    fn new(name: &str, link: &LinkConfig) -> Pair {
        let host = |side: &str, mac, ip, port| {
            TestHost::with_link(&format!("{name}_{side}"), mac, ip, &[port], link.clone())
        };
        Pair {
            client: host("c", CLIENT_MAC, CLIENT_IP, CLIENT_PORT),
            server: host("s", SERVER_MAC, SERVER_IP, SERVER_PORT),
            cable: Cable::new(100, 250),
            first_out: None,
            first_in: None,
            last_in: 0,
        }
    }

    fn step(&mut self) {
        let now = self.client.card.cycle();
        for f in self.client.card.take_transmitted() {
            if f.bytes.len() > 1000 && self.first_out.is_none() {
                self.first_out = Some(f.cycle);
            }
            self.cable.send(0, f.cycle, f.bytes);
        }
        for f in self.server.card.take_transmitted() {
            self.cable.send(1, f.cycle, f.bytes);
        }
        for f in self.cable.arrived(0, now) {
            if f.len() > 1000 {
                self.first_in.get_or_insert(now);
                self.last_in = now;
            }
            self.server.card.receive(&f);
        }
        for f in self.cable.arrived(1, now) {
            self.client.card.receive(&f);
        }
        self.client.card.step();
        self.server.card.step();
    }

    /// The server's side: answers every request with 1 byte (its first),
    /// straight from its bpage, which it gives back.
    fn serve(&mut self) {
        for c in self.server.poll(0) {
            if host_abi::get(&c, completion::KIND) as u8 == completion::kind::TX_DONE {
                continue;
            }
            let offset = host_abi::get(&c, completion::BUFFER_OFFSET);
            let reply = TX_BUFFERS + 0x0f0_0000;
            let mut byte = [0u8];
            self.server
                .card
                .memory()
                .read(rx_area(0) + offset, &mut byte);
            self.server.card.memory_mut().write(reply, &byte);
            self.server.give_back(0, &c);
            self.server.post(&Send {
                endpoint: 0,
                opcode: tx_desc::opcode::SEND_RESPONSE,
                rpc_id: host_abi::get(&c, completion::RPC_ID),
                buffer: reply,
                length: 1,
                peer_ip: CLIENT_IP,
                peer_port: CLIENT_PORT,
                peer_mac: CLIENT_MAC,
                cookie: 0,
            });
            self.server.doorbell(0);
        }
    }

    fn request(&mut self, id: u64, len: usize, buffer: u64) {
        self.client.post(&Send {
            endpoint: 0,
            opcode: tx_desc::opcode::SEND_REQUEST,
            rpc_id: id,
            buffer,
            length: len as u32,
            peer_ip: SERVER_IP,
            peer_port: SERVER_PORT,
            peer_mac: SERVER_MAC,
            cookie: id,
        });
        self.client.doorbell(0);
    }

    /// Steps until the responses of `ids` are in; returns (id, cycle) as they came.
    fn responses(&mut self, mut want: usize) -> Vec<(u64, u64)> {
        let mut got = Vec::new();
        let start = self.client.card.cycle();
        while want > 0 {
            assert!(self.client.card.cycle() - start < 5_000_000, "RPCs stalled");
            self.step();
            self.serve();
            for c in self.client.poll(0) {
                if host_abi::get(&c, completion::KIND) as u8 == completion::kind::RESPONSE_RECEIVED
                {
                    got.push((
                        host_abi::get(&c, completion::RPC_ID),
                        self.client.card.cycle(),
                    ));
                    self.client.give_back(0, &c);
                    want -= 1;
                }
            }
        }
        got
    }
}

struct Goodput {
    /// Cycles from the first DATA frame's arrival to the last's, and the
    /// payload rate over them (the first frame's payload not counted).
    receive_cycles: u64,
    receive_gbps: f64,
    /// Cycles from the first DATA frame out to the last in, and the rate.
    end_to_end_cycles: u64,
    end_to_end_gbps: f64,
}

fn goodput(link: &LinkConfig) -> Goodput {
    let mut p = Pair::new("bench_goodput", link);
    let len = 1_000_000;
    p.client
        .card
        .memory_mut()
        .write(TX_BUFFERS, &vec![0xa5; len]);
    p.request(2, len, TX_BUFFERS);
    p.responses(1);
    let gbps = |bytes: usize, cycles: u64| bytes as f64 * 8.0 / (cycles as f64 * 4.0);
    let receive_cycles = p.last_in - p.first_in.unwrap();
    let end_to_end_cycles = p.last_in - p.first_out.unwrap();
    let overflows = p
        .server
        .card
        .csr_read(rx_counters::BASE + rx_counters::FIFO_OVERFLOWS);
    assert_eq!(overflows, 0, "the server's RX FIFO overflowed");
    Goodput {
        receive_cycles,
        receive_gbps: gbps(len - PAYLOAD, receive_cycles),
        end_to_end_cycles,
        end_to_end_gbps: gbps(len, end_to_end_cycles),
    }
}

/// 1-byte RPC round trips: `n` back to back, with `background` RPCs of 1 MB
/// started first and kept in flight.
fn small_rtts(n: usize, background: usize, link: &LinkConfig) -> Vec<u64> {
    let mut p = Pair::new(&format!("bench_rtt_{background}"), link);
    let big = 1_000_000;
    for b in 0..background {
        let buffer = TX_BUFFERS + 0x10_0000 * (b as u64 + 1);
        p.client
            .card
            .memory_mut()
            .write(buffer, &vec![b as u8; big]);
        p.request(1000 + 2 * b as u64, big, buffer);
    }
    p.client.card.memory_mut().write(TX_BUFFERS, &[7]);
    // Let the large ones get going.
    for _ in 0..if background > 0 { 5_000 } else { 0 } {
        p.step();
        p.serve();
    }
    let mut rtts = Vec::new();
    for i in 0..n {
        let id = 2 * (i as u64 + 1);
        let start = p.client.card.cycle();
        p.request(id, 1, TX_BUFFERS);
        loop {
            let got = p.responses(1);
            if got[0].0 == id {
                rtts.push(got[0].1 - start);
                break;
            }
        }
    }
    rtts
}

/// Cycles per message sending `rounds` rings of 16 64-byte requests, each
/// ring from its doorbell to its last frame out.
fn tx_message_rate(rounds: usize) -> f64 {
    let mut h = TestHost::new("bench_tx_rate", CLIENT_MAC, CLIENT_IP, &[CLIENT_PORT]);
    h.card.memory_mut().write(TX_BUFFERS, &[3; 64]);
    let per_ring = 1 << support::host::RING_LOG2;
    let mut cycles = 0;
    for r in 0..rounds {
        for i in 0..per_ring {
            h.post(&Send {
                endpoint: 0,
                opcode: tx_desc::opcode::SEND_REQUEST,
                rpc_id: 2 * (r * per_ring + i + 1) as u64,
                buffer: TX_BUFFERS,
                length: 64,
                peer_ip: SERVER_IP,
                peer_port: SERVER_PORT,
                peer_mac: SERVER_MAC,
                cookie: 0,
            });
        }
        let start = h.card.cycle();
        h.doorbell(0);
        let mut sent = 0;
        while sent < per_ring {
            h.card.step();
            sent += h.card.take_transmitted().len();
            assert!(h.card.cycle() - start < 1_000_000, "TX stalled");
        }
        cycles += h.card.cycle() - start;
    }
    cycles as f64 / (rounds * per_ring) as f64
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let mut g = grant_latency();
    g.sort();
    println!(
        "grant latency (DATA last beat in -> GRANT first beat out, TX idle), {} packets: p50 {} p99 {} max {} cycles",
        g.len(),
        percentile(&g, 0.5),
        percentile(&g, 0.99),
        g.last().unwrap()
    );
    let links = [
        ("TLP link", LinkConfig::default()),
        ("ideal DMA link", LinkConfig::Ideal(PcieConfig::default())),
    ];
    for (name, link) in &links {
        let g = goodput(link);
        println!(
            "goodput of one 1,000,000-byte message card to card, {name}: {:.2} Gb/s received ({} cycles from the first DATA frame in to the last); {:.2} Gb/s first frame out to last in ({} cycles)",
            g.receive_gbps, g.receive_cycles, g.end_to_end_gbps, g.end_to_end_cycles
        );
    }
    // GRANTs name no message of the card's, so they end in the TX engine as
    // GRANTs for no message: the RX path is what this measures.
    let grants = if quick { 500 } else { 4_000 };
    let grant_frames: Vec<Vec<u8>> = (0..grants)
        .map(|i| grant_frame(2 * i + 2, 50_000))
        .collect();
    // One-packet messages of 100 bytes, each a new RPC (its own bpage; the
    // test host has 160).
    let small_frames: Vec<Vec<u8>> = (0..150).map(|i| data(2 * i + 2, 100, 0)).collect();
    // MTU packets of 8 messages of 40 packets in turn: every packet's RPC
    // differs from the last one's (no lookup skipped).
    let mtu_frames: Vec<Vec<u8>> = (0..40)
        .flat_map(|p| (0..8).map(move |m| data(2 * m + 2, 40 * PAYLOAD, p as usize * PAYLOAD)))
        .collect();
    for (what, frames, counter) in [
        (
            "GRANTs (67 bytes: 1.82 cycles each on a 100 Gb/s wire, 2 beats on the port)",
            &grant_frames,
            rx_counters::GRANTS_RECEIVED,
        ),
        (
            "one-packet 100-byte messages (190 bytes: 4.28 cycles each on the wire, 3 beats on the port)",
            &small_frames,
            rx_counters::DATA_ACCEPTED,
        ),
        (
            "MTU DATA packets of 8 messages in turn (1514 bytes: 30.76 cycles each on the wire, 24 beats on the port)",
            &mtu_frames,
            rx_counters::DATA_ACCEPTED,
        ),
    ] {
        let (cycles, dropped) = rx_rate(frames, counter);
        println!(
            "RX of {} {what} back to back: {:.2} cycles each; {dropped} dropped by the RX FIFO",
            frames.len(),
            cycles as f64 / frames.len() as f64
        );
    }
    let per_message = tx_message_rate(if quick { 4 } else { 32 });
    println!(
        "TX message rate, 64-byte requests 16 to a doorbell, doorbell to last frame out: {per_message:.1} cycles each ({:.2} M messages/s at 250 MHz)",
        250.0 / per_message
    );
    let n = if quick { 5 } else { 21 };
    for (name, link) in &links {
        let mut alone = small_rtts(n, 0, link);
        alone.sort();
        let mut loaded = small_rtts(n, 8, link);
        loaded.sort();
        println!(
            "1-byte RPC RTT, {name}, alone: p50 {} cycles; with 8 x 1 MB in flight: p50 {} p99 {} cycles ({:.2}x)",
            percentile(&alone, 0.5),
            percentile(&loaded, 0.5),
            percentile(&loaded, 0.99),
            percentile(&loaded, 0.5) as f64 / percentile(&alone, 0.5) as f64
        );
    }
}

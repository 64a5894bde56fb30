//! A simulated card on a real wire: frames as UDP datagrams on loopback, the
//! format of QEMU's `-netdev dgram`. The far end here is a plain socket that
//! plays a Linux host: it asks the card's MAC with ARP, sends it junk, and
//! receives its DATA frames.

mod support;

use std::net::{Ipv4Addr, SocketAddr};

use homa_hw::host_abi::tx_desc;
use homa_hw::regmap::rx_counters;
use homa_hw::rx::parser::RxVerdict;
use homa_hw_sim::udp_wire::UdpWire;
use homa_wire::arp::ArpFrame;
use homa_wire::{Body, Frame, MacAddr};
use support::host::{Send, TestHost, TX_BUFFERS};

const CARD_MAC: [u8; 6] = [2, 0, 0, 0, 0, 2];
const CARD_IP: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);
const PEER_MAC: MacAddr = MacAddr([0x52, 0x54, 0, 0x12, 0x34, 0x56]);
const PEER_IP: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);

fn loopback() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

/// The card's end and the peer's end of one wire.
fn wire_pair() -> (UdpWire, UdpWire) {
    let mut card = UdpWire::bind(loopback(), loopback()).unwrap();
    let mut peer = UdpWire::bind(loopback(), card.local_addr()).unwrap();
    card.set_remote(peer.local_addr());
    peer.set_remote(card.local_addr());
    (card, peer)
}

/// Runs the card for `cycles`, moving frames between it and its wire.
fn run(h: &mut TestHost, wire: &mut UdpWire, cycles: u64) {
    for _ in 0..cycles {
        for f in wire.receive().unwrap() {
            h.card.receive(&f);
        }
        h.card.step();
        for f in h.card.take_transmitted() {
            wire.send(&f.bytes).unwrap();
        }
    }
}

/// Waits (briefly, in wall time) for datagrams at the peer's end.
fn collect(peer: &mut UdpWire, want: usize) -> Vec<Vec<u8>> {
    let mut got = Vec::new();
    for _ in 0..200 {
        got.extend(peer.receive().unwrap());
        if got.len() >= want {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    got
}

#[test]
fn a_peer_on_udp_gets_arp_replies_and_data_and_its_junk_is_counted() {
    let mut h = TestHost::new("udp_wire_card", CARD_MAC, u32::from(CARD_IP), &[99]);
    let (mut card_end, mut peer) = wire_pair();

    // The peer asks who has the card's address, and sends a frame that is
    // not Homa (IPv6 ethertype) and a runt datagram.
    peer.send(&ArpFrame::request(PEER_MAC, PEER_IP, CARD_IP).encode())
        .unwrap();
    let mut junk = ArpFrame::request(PEER_MAC, PEER_IP, CARD_IP).encode();
    junk[12] = 0x86;
    junk[13] = 0xdd;
    peer.send(&junk).unwrap();
    peer.send(&[1, 2, 3]).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));

    // The card sends a message of three packets to the peer.
    let len = 3000u32;
    h.card
        .memory_mut()
        .write(TX_BUFFERS, &vec![0x5a; len as usize]);
    h.post(&Send {
        endpoint: 0,
        opcode: tx_desc::opcode::SEND_REQUEST,
        rpc_id: 2,
        buffer: TX_BUFFERS,
        length: len,
        peer_ip: u32::from(PEER_IP),
        peer_port: 4000,
        peer_mac: PEER_MAC.0,
        cookie: 0,
    });
    h.doorbell(0);
    run(&mut h, &mut card_end, 5000);

    let frames = collect(&mut peer, 4);
    let arp: Vec<ArpFrame> = frames
        .iter()
        .filter_map(|f| ArpFrame::decode(f).ok())
        .collect();
    assert_eq!(arp.len(), 1, "one ARP reply");
    assert_eq!(
        (arp[0].sender_mac, arp[0].sender_ip),
        (MacAddr(CARD_MAC), CARD_IP)
    );
    let data: Vec<Frame> = frames
        .iter()
        .filter_map(|f| Frame::decode(f).ok())
        .collect();
    assert_eq!(data.len(), 3);
    let bytes: usize = data
        .iter()
        .map(|f| match &f.homa.body {
            Body::Data(d) => d.payload.len(),
            _ => 0,
        })
        .sum();
    assert_eq!(bytes, len as usize);
    assert!(data
        .iter()
        .all(|f| f.eth.dst == PEER_MAC && f.ip.dst == PEER_IP));

    // The runt never reached the card; the IPv6 frame and the ARP request were
    // counted as not IPv4 by the parser, and the card kept working.
    assert_eq!(card_end.stats().datagrams_dropped, 1);
    let not_ipv4 = h
        .card
        .csr_read(rx_counters::BASE + rx_counters::FIRST_COUNTER + 4 * RxVerdict::NotIpv4 as u32);
    assert_eq!(not_ipv4, 2);
}

/// `--loss` on a UDP wire: frames dropped on receive at the rate asked,
/// counted, the same ones for the same seed, the rest in order.
#[test]
fn receive_loss_drops_its_fraction_counted_and_repeatably() {
    let lost_with = |seed: u64| {
        let (mut card, mut peer) = wire_pair();
        card.set_receive_loss(0.2, seed);
        let mut got = Vec::new();
        for n in 0..2_000u32 {
            let mut frame = vec![0u8; 60];
            frame[..4].copy_from_slice(&n.to_be_bytes());
            peer.send(&frame).unwrap();
            if n % 100 == 99 {
                // Drain now and then: loopback's socket buffer is finite.
                std::thread::sleep(std::time::Duration::from_millis(2));
                got.extend(card.receive().unwrap());
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        got.extend(card.receive().unwrap());
        let stats = card.stats().clone();
        assert_eq!(
            stats.frames_received + stats.frames_lost,
            2_000,
            "{stats:?}"
        );
        assert_eq!(stats.frames_received as usize, got.len());
        let ids: Vec<u32> = got
            .iter()
            .map(|f| u32::from_be_bytes(f[..4].try_into().unwrap()))
            .collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "in order");
        (stats.frames_lost, ids)
    };
    let (lost, ids) = lost_with(9);
    // 20% of 2000: 400 +- 5 standard deviations (18).
    assert!((310..=490).contains(&lost), "{lost} lost");
    assert_eq!(lost_with(9), (lost, ids.clone()), "the same seed");
    assert_ne!(lost_with(10).1, ids, "another seed");
}

/// A burst from the far end (a Linux sender's grant's worth of DATA comes
/// as one) reaches the card at the link's rate, as a 100 Gb/s MAC would
/// hand it over, not all at once: each 1514-byte frame about 31 cycles
/// (1538 bytes on the wire at 400 bits per cycle) after the one before.
#[test]
fn a_burst_on_the_udp_wire_reaches_the_card_at_link_rate() {
    use homa_hw_sim::network::SimNetwork;
    let (card_end, mut peer) = wire_pair();
    let mut network = SimNetwork::on_udp_wire("udp_wire_burst", card_end, Default::default());
    network.log_frames(true);
    // Not Homa (an IPv6 ethertype), so the parser drops each at once and
    // only the link's pacing spaces them.
    let mut frame = vec![0u8; 1514];
    frame[..6].copy_from_slice(&CARD_MAC);
    frame[6..12].copy_from_slice(&PEER_MAC.0);
    frame[12] = 0x86;
    frame[13] = 0xdd;
    const BURST: usize = 30;
    for _ in 0..BURST {
        peer.send(&frame).unwrap();
    }
    std::thread::sleep(std::time::Duration::from_millis(20));
    network.run(BURST as u64 * 40 + 100);
    let arrivals: Vec<u64> = network
        .take_frame_log()
        .iter()
        .filter(|e| e.received)
        .map(|e| e.cycle)
        .collect();
    assert_eq!(arrivals.len(), BURST, "every frame of the burst arrives");
    let wire_cycles = (8 * (1514 + 24) as u64).div_ceil(400);
    for pair in arrivals.windows(2) {
        assert!(
            pair[1] - pair[0] >= wire_cycles,
            "frames {} cycles apart, under the {wire_cycles} of a 100 Gb/s link: {arrivals:?}",
            pair[1] - pair[0]
        );
    }
    let not_ipv4 = network.access(0, |card| {
        card.csr_read(
            rx_counters::BASE + rx_counters::FIRST_COUNTER + 4 * RxVerdict::NotIpv4 as u32,
        )
    });
    assert_eq!(not_ipv4 as usize, BURST);
}

/// A burst larger than Linux's default socket buffer (208 KiB) waits in the
/// card end's socket whole: 300 full frames (454 KB) sent before the card
/// reads any all arrive. With the default buffer about 90 of them fit and
/// the kernel drops the rest (RcvbufErrors).
#[test]
fn a_burst_larger_than_the_default_socket_buffer_waits_whole() {
    const BURST: usize = 300;
    let rmem_max: usize = std::fs::read_to_string("/proc/sys/net/core/rmem_max")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0);
    if rmem_max < homa_hw_sim::udp_wire::RECV_BUFFER_BYTES {
        eprintln!("SKIPPED: net.core.rmem_max is {rmem_max}, under the wire's receive buffer");
        return;
    }
    let (mut card_end, mut peer) = wire_pair();
    let frame = vec![0x5a; 1514];
    for _ in 0..BURST {
        peer.send(&frame).unwrap();
    }
    let got = collect(&mut card_end, BURST);
    assert_eq!(
        got.len(),
        BURST,
        "frames lost in the card end's socket buffer"
    );
}

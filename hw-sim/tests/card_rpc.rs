//! RPCs between two simulated cards on a cable: a client's request goes out as
//! DATA, lands in the server's buffers with a completion; the server echoes it
//! straight from its receive buffer (zero copy) and the response lands in the
//! client's buffers. Every message compared byte for byte.

mod support;

use homa_hw::host_abi::{self, completion, tx_desc};
use homa_hw::regmap::{endpoint, rx_counters};
use homa_hw::rx::bpage_pool::BPAGE_BYTES;
use homa_hw::tx::engine::MAX_MESSAGE_BYTES;
use std::collections::BTreeMap;

use homa_hw::regmap::grant;
use homa_hw_sim::cable::{Cable, CableFaults};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use support::host::{rx_area, Send, TestHost, TX_BUFFERS};

const CLIENT_MAC: [u8; 6] = [2, 0, 0, 0, 0, 1];
const SERVER_MAC: [u8; 6] = [2, 0, 0, 0, 0, 2];
const CLIENT_IP: u32 = 0x0a00_0001;
const SERVER_IP: u32 = 0x0a00_0002;
const CLIENT_PORT: u16 = 0x8000;
const SERVER_PORT: u16 = 99;
/// 100 Gb/s, 250 cycles (1 us) of cable, PHY and switch.
const LINK_GBPS: u64 = 100;
const LINK_DELAY_CYCLES: u64 = 250;
/// The cards' grant tunables (their reset values, HomaModule's defaults).
const UNSCHED_BYTES: u32 = grant::UNSCHED_BYTES_DEFAULT;
const MAX_INCOMING: u64 = grant::MAX_INCOMING_DEFAULT as u64;

struct Pair {
    client: TestHost,
    server: TestHost,
    cable: Cable,
    /// Every frame as it left a card and as it reached the other, in order,
    /// when `log` is on: (cycle, sent by the client, arrived (not sent), bytes).
    log: Option<Vec<(u64, bool, bool, Vec<u8>)>>,
}

impl Pair {
    fn new(name: &str) -> Pair {
        Pair {
            client: TestHost::new(
                &format!("{name}_client"),
                CLIENT_MAC,
                CLIENT_IP,
                &[CLIENT_PORT],
            ),
            server: TestHost::new(
                &format!("{name}_server"),
                SERVER_MAC,
                SERVER_IP,
                &[SERVER_PORT],
            ),
            cable: Cable::new(LINK_GBPS, LINK_DELAY_CYCLES),
            log: None,
        }
    }

    /// One cycle of both cards and the cable.
    fn step(&mut self) {
        let now = self.client.card.cycle();
        for (dir, card) in [&mut self.client, &mut self.server].into_iter().enumerate() {
            for f in card.card.take_transmitted() {
                if let Some(log) = &mut self.log {
                    log.push((f.cycle, dir == 0, false, f.bytes.clone()));
                }
                self.cable.send(dir, f.cycle, f.bytes);
            }
        }
        for (dir, card) in [&mut self.server, &mut self.client].into_iter().enumerate() {
            for f in self.cable.arrived(dir, now) {
                if let Some(log) = &mut self.log {
                    log.push((now, dir == 0, true, f.clone()));
                }
                card.card.receive(&f);
            }
        }
        self.client.card.step();
        self.server.card.step();
    }
}

/// The server's side of one step: echo every request it has received.
fn serve(pair: &mut Pair, served: &mut usize) {
    for c in pair.server.poll(0) {
        let kind = host_abi::get(&c, completion::KIND) as u8;
        if kind == completion::kind::TX_DONE {
            // The response left: its request's bpage (the cookie) is free again.
            let cookie = host_abi::get(&c, completion::COOKIE);
            if cookie != u64::MAX {
                pair.server.card.csr_write(
                    endpoint::base(0) + endpoint::RX_BPAGE_PUSH,
                    (cookie / BPAGE_BYTES) as u32,
                );
            }
            continue;
        }
        // A request of one bpage is answered from the receive buffer itself
        // (no copy; its bpage, named by the cookie, goes back at TX_DONE);
        // a longer one lies in bpages anywhere in the RX area, so it is
        // gathered into a send buffer and its bpages go back at once.
        let offset = host_abi::get(&c, completion::BUFFER_OFFSET);
        let pages = TestHost::bpages(&c);
        let buffer = if pages.len() == 1 {
            rx_area(0) + offset
        } else {
            let bytes = pair.server.received(0, &c);
            let at = TX_BUFFERS + 0x10_0000 * (*served as u64 % 8);
            pair.server.card.memory_mut().write(at, &bytes);
            pair.server.give_back(0, &c);
            at
        };
        pair.server.post(&Send {
            endpoint: 0,
            opcode: tx_desc::opcode::SEND_RESPONSE,
            rpc_id: host_abi::get(&c, completion::RPC_ID),
            buffer,
            length: host_abi::get(&c, completion::LENGTH) as u32,
            peer_ip: host_abi::get(&c, completion::PEER_IP) as u32,
            peer_port: host_abi::get(&c, completion::PEER_PORT) as u16,
            peer_mac: host_abi::get_mac(&c, completion::PEER_MAC),
            cookie: if pages.len() == 1 { offset } else { u64::MAX },
        });
        pair.server.doorbell(0);
        *served += 1;
    }
}

/// The RX path's counters, named, for a failure's message.
fn rx_path(h: &mut TestHost) -> String {
    use rx_counters::*;
    let names = [
        "fifo_overflows",
        "messages",
        "other_control",
        "no_endpoint",
        "rpc_full",
        "no_bpage",
        "too_big",
        "arp",
        "duplicates",
        "bad_range",
        "grants_in",
        "cutoffs_in",
        "grants_unknown",
        "sender_events_dropped",
    ];
    PATH_COUNTERS
        .iter()
        .zip(names)
        .map(|(&r, n)| format!("{n}={}", h.card.csr_read(BASE + r)))
        .collect::<Vec<_>>()
        .join(" ")
}

fn request(client_buffer: u64, rpc_id: u64, len: usize) -> Send {
    Send {
        endpoint: 0,
        opcode: tx_desc::opcode::SEND_REQUEST,
        rpc_id,
        buffer: client_buffer,
        length: len as u32,
        peer_ip: SERVER_IP,
        peer_port: SERVER_PORT,
        peer_mac: SERVER_MAC,
        cookie: rpc_id,
    }
}

#[test]
fn rpcs_of_every_size_arrive_intact_both_ways() {
    let mut pair = Pair::new("card_rpc_sizes");
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let sizes = [
        1usize,
        100,
        1424,
        1425,
        5000,
        20_000,
        MAX_MESSAGE_BYTES as usize,
    ];
    let mut served = 0;
    for (n, &len) in sizes.iter().enumerate() {
        let payload: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        let buffer = TX_BUFFERS + 0x10_0000 * n as u64 + rng.gen_range(0..64);
        pair.client.card.memory_mut().write(buffer, &payload);
        let id = 2 * (n as u64 + 1);
        pair.client.post(&request(buffer, id, len));
        pair.client.doorbell(0);
        let start = pair.client.card.cycle();
        let mut response = None;
        while response.is_none() {
            if pair.client.card.cycle() - start >= 2_000_000 {
                panic!(
                    "RPC {id} of {len} bytes did not complete; client {}, server {}",
                    rx_path(&mut pair.client),
                    rx_path(&mut pair.server)
                );
            }
            pair.step();
            serve(&mut pair, &mut served);
            for c in pair.client.poll(0) {
                if host_abi::get(&c, completion::KIND) as u8 == completion::kind::RESPONSE_RECEIVED
                {
                    response = Some(c);
                }
            }
        }
        let c = response.unwrap();
        assert_eq!(
            host_abi::get(&c, completion::RPC_ID),
            id,
            "response matched to its request"
        );
        assert_eq!(host_abi::get(&c, completion::STATUS), 0);
        assert_eq!(host_abi::get(&c, completion::PEER_PORT), SERVER_PORT as u64);
        assert_eq!(host_abi::get(&c, completion::PEER_IP), SERVER_IP as u64);
        assert_eq!(host_abi::get_mac(&c, completion::PEER_MAC), SERVER_MAC);
        assert_eq!(pair.client.received(0, &c), payload, "echo of {len} bytes");
        pair.client.give_back(0, &c);
        eprintln!(
            "{len:>6} bytes: RTT {} cycles",
            pair.client.card.cycle() - start
        );
    }
    assert_eq!(served, sizes.len());
    let delivered = |h: &mut TestHost| {
        h.card
            .csr_read(rx_counters::BASE + rx_counters::MESSAGES_DELIVERED)
    };
    assert_eq!(delivered(&mut pair.server), sizes.len() as u32);
    assert_eq!(delivered(&mut pair.client), sizes.len() as u32);
}

#[test]
fn many_concurrent_rpcs_complete_exactly_once() {
    let mut pair = Pair::new("card_rpc_concurrent");
    let mut rng = ChaCha8Rng::seed_from_u64(10);
    let count = 12u64; // below the TX ring's 16 slots: all posted at once
    let mut expected = std::collections::BTreeMap::new();
    for n in 0..count {
        let len = rng.gen_range(1..6000);
        let payload: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        let buffer = TX_BUFFERS + 0x10_0000 * n;
        pair.client.card.memory_mut().write(buffer, &payload);
        pair.client.post(&request(buffer, 2 * (n + 1), len));
        expected.insert(2 * (n + 1), payload);
    }
    pair.client.doorbell(0);
    let mut served = 0;
    let mut got = std::collections::BTreeMap::new();
    let mut cycles = 0;
    while got.len() < count as usize {
        assert!(
            cycles < 3_000_000,
            "only {} of {count} RPCs completed",
            got.len()
        );
        pair.step();
        cycles += 1;
        serve(&mut pair, &mut served);
        for c in pair.client.poll(0) {
            if host_abi::get(&c, completion::KIND) as u8 == completion::kind::RESPONSE_RECEIVED {
                let id = host_abi::get(&c, completion::RPC_ID);
                let bytes = pair.client.received(0, &c);
                pair.client.give_back(0, &c);
                assert!(got.insert(id, bytes).is_none(), "RPC {id} completed twice");
            }
        }
    }
    assert_eq!(got, expected);
}

/// Steps the pair, the server echoing, until `count` responses came back or
/// `limit` cycles passed: the echoes by RPC id (each checked to come once),
/// the requests served, the cycles run.
fn run_echoes(pair: &mut Pair, count: usize, limit: u64) -> (BTreeMap<u64, Vec<u8>>, usize, u64) {
    let mut served = 0;
    let mut got = BTreeMap::new();
    let mut cycles = 0;
    while got.len() < count && cycles < limit {
        pair.step();
        cycles += 1;
        serve(pair, &mut served);
        for c in pair.client.poll(0) {
            if host_abi::get(&c, completion::KIND) as u8 == completion::kind::RESPONSE_RECEIVED {
                let id = host_abi::get(&c, completion::RPC_ID);
                if host_abi::get(&c, completion::STATUS) != completion::status::OK as u64 {
                    // Failed (the card gave up): no message, not an echo.
                    eprintln!("RPC {id} failed at cycle {cycles}");
                    continue;
                }
                let bytes = pair.client.received(0, &c);
                pair.client.give_back(0, &c);
                assert!(got.insert(id, bytes).is_none(), "RPC {id} completed twice");
            }
        }
    }
    (got, served, cycles)
}

/// Replays a pair's frame log as HomaModule's rules say it must look: no
/// DATA past what its receiver granted (or the unscheduled bytes), and a
/// receiver never holding more than `max_incoming` bytes granted but not
/// received when it sends a GRANT. Returns the GRANTs seen.
fn check_grants(log: &[(u64, bool, bool, Vec<u8>)], unsched: u32, max_incoming: u64) -> usize {
    use homa_wire::{Body, Frame};
    // Per message (sender is client?, sender's RPC id): length, granted
    // offset as its sender knows it, and as its receiver decided it; the
    // offsets of the packets that reached the receiver.
    #[derive(Default)]
    struct Msg {
        len: u32,
        granted_at_sender: u32,
        granted_by_receiver: u32,
        arrived: BTreeMap<u32, u32>,
    }
    let mut msgs: BTreeMap<(bool, u64), Msg> = BTreeMap::new();
    let mut grants = 0;
    for (cycle, from_client, arrived, bytes) in log {
        let frame = Frame::decode(bytes).expect("a frame the wire codec reads");
        let id = frame.homa.common.sender_id;
        match &frame.homa.body {
            Body::Data(d) => {
                let m = msgs.entry((*from_client, id)).or_default();
                m.len = d.message_length;
                let end = d.seg_offset + d.payload.len() as u32;
                if *arrived {
                    m.arrived.insert(d.seg_offset, end);
                } else {
                    let allowed = m.granted_at_sender.max(unsched.min(d.message_length));
                    assert!(
                        end <= allowed,
                        "cycle {cycle}: DATA of RPC {id} to {end} past its grant {allowed}"
                    );
                }
            }
            Body::Grant(g) => {
                // The GRANT names the message by the receiver's id for it.
                let m = msgs.entry((!*from_client, id ^ 1)).or_default();
                if *arrived {
                    m.granted_at_sender = m.granted_at_sender.max(g.offset);
                } else {
                    grants += 1;
                    m.granted_by_receiver = m.granted_by_receiver.max(g.offset);
                    // What this receiver has granted and not yet received,
                    // over every message coming to it.
                    let outstanding: u64 = msgs
                        .iter()
                        .filter(|((to_server, _), _)| *to_server == !*from_client)
                        .map(|(_, m)| {
                            let granted = m.granted_by_receiver.max(unsched.min(m.len)).min(m.len);
                            let got: u32 = m.arrived.iter().map(|(s, e)| e - s).sum();
                            granted.saturating_sub(got) as u64
                        })
                        .sum();
                    assert!(
                        outstanding <= max_incoming,
                        "cycle {cycle}: a receiver has {outstanding} bytes granted and not received"
                    );
                }
            }
            _ => {}
        }
    }
    grants
}

#[test]
fn megabyte_rpcs_over_a_reordering_duplicating_cable_arrive_once_and_obey_grants() {
    let mut pair = Pair::new("card_rpc_megabytes");
    pair.cable = Cable::new(LINK_GBPS, LINK_DELAY_CYCLES).with_faults(CableFaults {
        reorder_ppm: 30_000,
        max_hold_cycles: 200,
        duplicate_ppm: 20_000,
        seed: 11,
        ..Default::default()
    });
    pair.log = Some(Vec::new());
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    // Two of HomaModule's largest and two between, at once.
    let lengths = [1_000_000usize, 1_000_000, 300_000, 45_000];
    let mut expected = BTreeMap::new();
    for (n, &len) in lengths.iter().enumerate() {
        let payload: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        let buffer = TX_BUFFERS + 0x10_0000 * n as u64;
        pair.client.card.memory_mut().write(buffer, &payload);
        pair.client.post(&request(buffer, 2 * (n as u64 + 1), len));
        expected.insert(2 * (n as u64 + 1), payload);
    }
    pair.client.doorbell(0);
    let (got, mut served, cycles) = run_echoes(&mut pair, lengths.len(), 3_000_000);
    if got.len() < lengths.len() {
        panic!(
            "only {} RPCs completed; client {}, server {}",
            got.len(),
            rx_path(&mut pair.client),
            rx_path(&mut pair.server)
        );
    }
    // A little longer: late duplicates must not make anything complete again.
    for _ in 0..5_000 {
        pair.step();
        serve(&mut pair, &mut served);
        assert!(pair
            .client
            .poll(0)
            .iter()
            .all(|c| host_abi::get(c, completion::KIND) as u8 == completion::kind::TX_DONE));
    }
    assert!(got == expected, "every echo intact");
    assert_eq!(served, lengths.len(), "every request served once");
    let counts = pair.cable.fault_counts();
    let (reordered, duplicated) = (counts.reordered, counts.duplicated);
    assert!(
        reordered > 50 && duplicated > 50,
        "{reordered} held back, {duplicated} doubled"
    );
    for h in [&mut pair.client, &mut pair.server] {
        let overflows = h
            .card
            .csr_read(rx_counters::BASE + rx_counters::FIFO_OVERFLOWS);
        assert_eq!(overflows, 0, "an RX FIFO overflowed");
    }
    let log = pair.log.take().unwrap();
    let grants = check_grants(&log, UNSCHED_BYTES, MAX_INCOMING);
    assert!(grants > 100, "{grants} GRANTs");
    eprintln!(
        "{cycles} cycles; {grants} GRANTs; {reordered} frames held back, {duplicated} doubled"
    );
}

/// Both cards' timers made fast for a lossy test: a tick of 1 us (a sweep
/// over every slot, 65.5 us, is the real period), RESENDs from the first
/// tick of silence (`resend_ticks`; 0 turns the receivers' RESENDs off),
/// every tick after.
fn fast_recovery(pair: &mut Pair, resend_ticks: u32) {
    use homa_hw::regmap::timer;
    for h in [&mut pair.client, &mut pair.server] {
        h.card.csr_write(timer::BASE + timer::TICK_NS, 1000);
        h.card
            .csr_write(timer::BASE + timer::RESEND_TICKS, resend_ticks);
        h.card.csr_write(timer::BASE + timer::RESEND_INTERVAL, 1);
        h.card.csr_write(timer::BASE + timer::TIMEOUT_TICKS, 200);
    }
}

/// RPCs of 1 B to 1 MB at once over a cable that loses 10% of the frames
/// each way, duplicates 2% and holds back 3%: the responses that came back
/// within `limit` cycles (echoes, by RPC id), each checked to come once.
fn lossy_rpcs(
    name: &str,
    resend_ticks: u32,
    limit: u64,
) -> (BTreeMap<u64, Vec<u8>>, BTreeMap<u64, Vec<u8>>, Pair) {
    let mut pair = Pair::new(name);
    pair.cable = Cable::new(LINK_GBPS, LINK_DELAY_CYCLES).with_faults(CableFaults {
        loss_ppm: 100_000,
        reorder_ppm: 30_000,
        max_hold_cycles: 200,
        duplicate_ppm: 20_000,
        seed: 21,
        ..Default::default()
    });
    fast_recovery(&mut pair, resend_ticks);
    let mut rng = ChaCha8Rng::seed_from_u64(22);
    let lengths = [1usize, 1500, 15_000, 100_000, 1_000_000];
    let mut expected = BTreeMap::new();
    for (n, &len) in lengths.iter().enumerate() {
        let payload: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        let buffer = TX_BUFFERS + 0x10_0000 * n as u64;
        pair.client.card.memory_mut().write(buffer, &payload);
        pair.client.post(&request(buffer, 2 * (n as u64 + 1), len));
        expected.insert(2 * (n as u64 + 1), payload);
    }
    pair.client.doorbell(0);
    let (got, served, cycles) = run_echoes(&mut pair, lengths.len(), limit);
    assert!(served <= lengths.len(), "a request served twice");
    eprintln!(
        "{name}: {} of {} RPCs in {cycles} cycles; cable {:?}",
        got.len(),
        lengths.len(),
        pair.cable.fault_counts()
    );
    (got, expected, pair)
}

#[test]
fn rpcs_of_1_b_to_1_mb_survive_ten_percent_loss_with_duplication_and_reordering() {
    let (got, expected, mut pair) = lossy_rpcs("card_rpc_lossy", 1, 40_000_000);
    let counter = |h: &mut TestHost, at: u32| h.card.csr_read(rx_counters::BASE + at);
    assert!(
        got == expected,
        "{} of {} RPCs intact; client {}, server {}",
        got.iter()
            .filter(|(id, b)| expected.get(id) == Some(b))
            .count(),
        expected.len(),
        rx_path(&mut pair.client),
        rx_path(&mut pair.server)
    );
    // Recovered by resending: both ways.
    let lost = pair.cable.fault_counts().lost;
    assert!(lost > 100, "{lost} frames lost");
    for h in [&mut pair.client, &mut pair.server] {
        assert!(counter(h, rx_counters::PACKETS_RETRANSMITTED) > 10);
        assert!(counter(h, rx_counters::RESENDS_RECEIVED) > 10);
    }
}

/// The same run with the receivers' RESENDs off (resend_ticks 0): the lossy
/// cable then stalls RPCs for good. What shows the test above depends on
/// the recovery, not on luck. Given 2.5 times the cycles the run with
/// RESENDs takes (about 200,000).
#[test]
fn without_resends_a_lossy_cable_stalls_rpcs() {
    let (got, expected, _) = lossy_rpcs("card_rpc_lossy_no_resend", 0, 500_000);
    assert!(
        got.len() < expected.len(),
        "every RPC completed with no RESEND"
    );
}

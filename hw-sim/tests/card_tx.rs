//! The simulated card's TX path end to end: descriptors in host memory, a
//! doorbell over the BAR, DATA frames on the wire, completions in host memory.
//! Every frame is decoded with the wire codec and every message reassembled
//! and compared with the bytes the host wrote.

mod support;

use std::collections::BTreeMap;

use homa_hw::host_abi::{self, completion, tx_desc, ENTRY_BYTES};
use homa_hw::regmap::{endpoint, grant};
use homa_hw::tx::engine::{DESC_BATCH, MAX_MESSAGE_BYTES, MAX_SEGMENT_BYTES};
use homa_hw::tx::peer_state::{peer_index, UNKNOWN_PEER_LEVEL};
use homa_hw_sim::card::Card;
use homa_hw_sim::dma_link::{LinkConfig, TlpConfig};
use homa_hw_sim::pcie::PcieConfig;
use homa_wire::{Body, Frame};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use support::host::{cpl_ring, tx_ring, Send, TestHost, RING_LOG2, TX_BUFFERS};

const LOCAL_MAC: [u8; 6] = [0x02, 0x00, 0x00, 0x00, 0x00, 0x01];
const LOCAL_IP: u32 = 0x0a00_0001;
const BUFFERS: u64 = TX_BUFFERS;
/// HomaModule's unsched_bytes, the card's default: sent without grants.
const UNSCHED_BYTES: u32 = grant::UNSCHED_BYTES_DEFAULT;

/// A card with its interface set and endpoints `0..n` open on ports 1000+e.
/// A card whose timers tick every 100 us, ten times slower than by
/// default (and time out after 20 ticks, 2 ms, as by default): its silent
/// peers are nudged 500 us (125,000 cycles) after its last packet, later
/// than most tests of sending look. Tests of the timers
/// set them themselves (`fast_timers`, `release_soon`).
fn card(name: &str, endpoints: usize) -> Card {
    card_on(name, endpoints, LinkConfig::default())
}

fn card_on(name: &str, endpoints: usize, link: LinkConfig) -> Card {
    use homa_hw::regmap::timer;
    let ports: Vec<u16> = (0..endpoints).map(|e| 1000 + e as u16).collect();
    let mut card = TestHost::with_link(name, LOCAL_MAC, LOCAL_IP, &ports, link).card;
    card.csr_write(timer::BASE + timer::TICK_NS, 100_000);
    card.csr_write(timer::BASE + timer::TIMEOUT_TICKS, 20);
    card
}

/// Makes the card release a message soon after its last packet (a tick of
/// 1 us, one tick of silence: a sweep or two) for tests of sending, where
/// no receiver acks.
fn release_soon(card: &mut Card) {
    use homa_hw::regmap::timer;
    card.csr_write(timer::BASE + timer::TICK_NS, 1000);
    card.csr_write(timer::BASE + timer::TIMEOUT_TICKS, 1);
}

/// What a test asked the card to send.
#[derive(Clone, Debug)]
struct Message {
    endpoint: usize,
    opcode: u8,
    rpc_id: u64,
    buffer: u64,
    payload: Vec<u8>,
    /// Length in the descriptor (may differ from the payload: bad descriptors).
    length: u32,
    peer_ip: u32,
    peer_port: u16,
    peer_mac: [u8; 6],
    cookie: u64,
}

impl Message {
    /// Its descriptor: the message as the host asks for it.
    fn descriptor(&self) -> [u8; ENTRY_BYTES] {
        Send {
            endpoint: self.endpoint,
            opcode: self.opcode,
            rpc_id: self.rpc_id,
            buffer: self.buffer,
            length: self.length,
            peer_ip: self.peer_ip,
            peer_port: self.peer_port,
            peer_mac: self.peer_mac,
            cookie: self.cookie,
        }
        .descriptor()
    }
}

/// Writes `msg`'s payload and descriptor into host memory at the endpoint's
/// next TX slot `index`.
fn post(card: &mut Card, index: u32, msg: &Message) {
    card.memory_mut().write(msg.buffer, &msg.payload);
    let slot = index & ((1 << RING_LOG2) - 1);
    card.memory_mut().write(
        tx_ring(msg.endpoint) + (slot as u64) * ENTRY_BYTES as u64,
        &msg.descriptor(),
    );
}

/// The completion ring's slots for entries 0..n (slot `i` mod the ring's
/// size), once entry n-1 is in host memory: CPL_PRODUCER counts entries
/// whose writes have left the core, and a write takes a while to land (the
/// TLP link); the host, like this, polls the entry's phase bit.
fn completions(card: &mut Card, e: usize, n: u32) -> Vec<[u8; ENTRY_BYTES]> {
    let last = n - 1;
    let slot = u64::from(last & ((1 << RING_LOG2) - 1));
    let phase = u64::from(1 - ((last >> RING_LOG2) & 1));
    let landed = card.run_until(10_000, |c| {
        let mut entry = [0u8; ENTRY_BYTES];
        c.memory()
            .read(cpl_ring(e) + slot * ENTRY_BYTES as u64, &mut entry);
        host_abi::get(&entry, completion::PHASE) == phase
    });
    assert!(landed, "completion {last} of endpoint {e} never landed");
    (0..n)
        .map(|i| {
            let mut c = [0u8; ENTRY_BYTES];
            let slot = i & ((1 << RING_LOG2) - 1);
            card.memory()
                .read(cpl_ring(e) + slot as u64 * ENTRY_BYTES as u64, &mut c);
            c
        })
        .collect()
}

/// The unscheduled priority of a message of `len` bytes to a peer that
/// announced `cutoffs` (HomaModule's rule: the highest `i` whose limit
/// holds it), or to one that announced none.
fn expected_level(len: usize, cutoffs: Option<&[u32; 8]>) -> u8 {
    match cutoffs {
        None => UNKNOWN_PEER_LEVEL as u8,
        Some(c) => (0..8).rev().find(|&i| c[i] as usize >= len).unwrap_or(0) as u8,
    }
}

fn random_message(rng: &mut ChaCha8Rng, endpoint: usize, n: usize, len: usize) -> Message {
    Message {
        endpoint,
        opcode: if n % 3 == 2 {
            tx_desc::opcode::SEND_RESPONSE
        } else {
            tx_desc::opcode::SEND_REQUEST
        },
        rpc_id: 2 * (n as u64 + 1) + (n % 3 == 2) as u64,
        buffer: BUFFERS + 0x10_0000 * endpoint as u64 + 0x1_0000 * n as u64 + rng.gen_range(0..64),
        payload: (0..len).map(|_| rng.gen()).collect(),
        length: len as u32,
        peer_ip: 0x0a00_0002 + rng.gen_range(0..4),
        peer_port: rng.gen_range(1..0x8000),
        peer_mac: [0x02, 0, 0, 0, rng.gen(), rng.gen()],
        cookie: rng.gen(),
    }
}

/// The status a message's completion has when no peer answers it: a
/// response is let go (OK), a request's RPC times out.
fn unanswered_status(m: &Message) -> u64 {
    if m.opcode == tx_desc::opcode::SEND_REQUEST {
        completion::status::TIMEOUT as u64
    } else {
        completion::status::OK as u64
    }
}

/// True for the frames a card sends about its messages besides their DATA:
/// nudges to a silent peer (RESEND for a response, NEED_ACK).
fn is_nudge(frame: &Frame) -> bool {
    matches!(frame.homa.body, Body::Resend(_) | Body::NeedAck)
}

/// Checks frames against messages: every frame decodes, its headers are what
/// the descriptor asked for, and the payloads reassemble to the message.
/// (Nudges to the silent peers are skipped.)
fn check_frames(frames: &[homa_hw_sim::card::TxFrame], messages: &[Message]) {
    let mut got: BTreeMap<u64, Vec<u8>> = BTreeMap::new();
    for f in frames {
        let frame = Frame::decode(&f.bytes)
            .unwrap_or_else(|e| panic!("card sent an undecodable frame: {e}"));
        if is_nudge(&frame) {
            continue;
        }
        let c = &frame.homa.common;
        let msg = messages
            .iter()
            .find(|m| m.rpc_id == c.sender_id)
            .expect("a frame of a message we sent");
        let Body::Data(d) = &frame.homa.body else {
            panic!("not DATA: {frame}")
        };
        assert_eq!(frame.eth.src.0, LOCAL_MAC);
        assert_eq!(frame.eth.dst.0, msg.peer_mac);
        assert_eq!(u32::from(frame.ip.src), LOCAL_IP);
        assert_eq!(u32::from(frame.ip.dst), msg.peer_ip);
        assert_eq!(
            frame.ip.priority(),
            expected_level(msg.payload.len(), None),
            "{frame}"
        );
        assert_eq!(d.cutoff_version, 0, "no CUTOFFS heard: version 0");
        assert_eq!(c.sport, 1000 + msg.endpoint as u16);
        assert_eq!(c.dport, msg.peer_port);
        assert_eq!(d.message_length as usize, msg.payload.len());
        assert_eq!(
            d.incoming as usize,
            msg.payload.len(),
            "everything is unscheduled"
        );
        assert_eq!(
            c.sequence, d.seg_offset,
            "our NIC's form: sequence = seg.offset"
        );
        assert!(d.payload.len() <= MAX_SEGMENT_BYTES as usize);
        assert!(f.bytes.len() <= 1514);
        let buf = got.entry(c.sender_id).or_default();
        assert_eq!(
            buf.len(),
            d.seg_offset as usize,
            "packets of a message in order"
        );
        buf.extend_from_slice(&d.payload);
    }
    for m in messages {
        assert_eq!(
            got.get(&m.rpc_id),
            Some(&m.payload),
            "message {} reassembled",
            m.rpc_id
        );
    }
}

#[test]
fn messages_of_every_size_leave_as_data_frames_and_complete() {
    every_size(card("card_tx_sizes", 1));
}

#[test]
fn messages_of_every_size_survive_a_harsh_pcie_link() {
    // Payload reads split into 128-byte completions, reordered across tags
    // by up to 400 ns, 16 reads outstanding at most, RQ stalled 10% of the
    // time: the same frames, byte for byte.
    every_size(card_on(
        "card_tx_sizes_harsh_link",
        1,
        TlpConfig::harsh(11).into(),
    ));
}

#[test]
fn messages_of_every_size_leave_over_the_ideal_link_too() {
    every_size(card_on(
        "card_tx_sizes_ideal_link",
        1,
        PcieConfig::default().into(),
    ));
}

#[test]
fn messages_of_every_size_survive_a_mac_that_stalls() {
    let mut card = card("card_tx_sizes_stalls", 1);
    card.set_tx_backpressure(300, 7);
    every_size(card);
}

fn every_size(mut card: Card) {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let sizes = [
        1usize,
        100,
        200,
        201,
        1423,
        1424,
        1425,
        2848,
        2849,
        15_000,
        20_000,
        UNSCHED_BYTES as usize,
    ];
    let messages: Vec<Message> = sizes
        .iter()
        .enumerate()
        .map(|(n, &len)| random_message(&mut rng, 0, n, len))
        .collect();
    let mut frames = Vec::new();
    // More messages than ring slots: post in batches as slots free up.
    let mut posted = 0u32;
    let mut completed = 0u32;
    while completed < messages.len() as u32 {
        while posted < messages.len() as u32 && posted - completed < (1 << RING_LOG2) {
            post(&mut card, posted, &messages[posted as usize]);
            posted += 1;
        }
        card.csr_write(endpoint::base(0) + endpoint::TX_PRODUCER, posted);
        let target = posted;
        assert!(
            card.run_until(2_000_000, |c| c
                .csr_read(endpoint::base(0) + endpoint::CPL_PRODUCER)
                >= target),
            "completions stopped at {completed}"
        );
        completed = target;
        card.csr_write(endpoint::base(0) + endpoint::CPL_CONSUMER, completed);
        frames.extend(card.take_transmitted());
    }
    check_frames(&frames, &messages);
    let expected_frames: usize = sizes
        .iter()
        .map(|&s| s.div_ceil(MAX_SEGMENT_BYTES as usize))
        .sum();
    let data_frames = frames
        .iter()
        .filter(|f| !is_nudge(&Frame::decode(&f.bytes).unwrap()))
        .count();
    assert_eq!(data_frames, expected_frames);
    assert_eq!(
        card.csr_read(endpoint::base(0) + endpoint::TX_CONSUMER),
        messages.len() as u32
    );

    // Completions: one per descriptor (in the order the messages finished,
    // shortest first within a batch), phase 1 on the first pass and 0 on
    // the second.
    let cpls = completions(&mut card, 0, messages.len() as u32);
    for (i, c) in cpls.iter().enumerate().rev().take(1 << RING_LOG2) {
        let id = host_abi::get(c, completion::RPC_ID);
        let m = messages
            .iter()
            .find(|m| m.rpc_id == id)
            .expect("a message's completion");
        assert_eq!(
            host_abi::get(c, completion::KIND),
            completion::kind::TX_DONE as u64
        );
        assert_eq!(host_abi::get(c, completion::STATUS), unanswered_status(m));
        assert_eq!(host_abi::get(c, completion::RPC_ID), m.rpc_id);
        assert_eq!(host_abi::get(c, completion::LENGTH), m.payload.len() as u64);
        assert_eq!(host_abi::get(c, completion::COOKIE), m.cookie);
        assert_eq!(host_abi::get(c, completion::PEER_PORT), m.peer_port as u64);
        assert_eq!(host_abi::get(c, completion::PEER_IP), m.peer_ip as u64);
        let pass = i >> RING_LOG2;
        assert_eq!(
            host_abi::get(c, completion::PHASE),
            (pass % 2 == 0) as u64,
            "completion {i}"
        );
    }
}

#[test]
fn bad_descriptors_complete_with_an_error_and_the_card_goes_on() {
    let mut card = card("card_tx_bad", 1);
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let mut msgs: Vec<Message> = (0..6)
        .map(|n| random_message(&mut rng, 0, n, 300))
        .collect();
    msgs[0].length = 0;
    msgs[1].length = MAX_MESSAGE_BYTES + 1;
    msgs[2].opcode = 9;
    msgs[3].buffer = 0x7000_0000; // never registered with the IOMMU
    msgs[3].payload = vec![];
    msgs[3].length = 3000;
    for (i, m) in msgs.iter().enumerate() {
        post(&mut card, i as u32, m);
    }
    card.csr_write(endpoint::base(0) + endpoint::TX_PRODUCER, msgs.len() as u32);
    assert!(card.run_until(200_000, |c| c
        .csr_read(endpoint::base(0) + endpoint::CPL_PRODUCER)
        == 6));
    let cpls = completions(&mut card, 0, 6);
    // Statuses in message order (completions come as messages finish).
    let status: Vec<u64> = msgs
        .iter()
        .map(|m| {
            let c = cpls
                .iter()
                .find(|c| host_abi::get(&c[..], completion::COOKIE) == m.cookie)
                .expect("every descriptor completes");
            host_abi::get(c, completion::STATUS)
        })
        .collect();
    use completion::status::*;
    assert_eq!(
        status[..4],
        [BAD_DESCRIPTOR, BAD_DESCRIPTOR, BAD_DESCRIPTOR, DMA_ERROR,].map(|s| s as u64)
    );
    // The good ones: sent, and ended as no peer answers them.
    assert_eq!(
        status[4..],
        [unanswered_status(&msgs[4]), unanswered_status(&msgs[5])]
    );
    // The unreadable message's frames went out spoiled (never delivered):
    // those chosen before its first read failed, at most its three; its
    // reads were refused by the IOMMU, one per frame; the good ones arrived
    // whole.
    let spoiled = card.stats().tx_frames_spoiled;
    assert!((1..=3).contains(&spoiled), "{spoiled} spoiled frames");
    assert_eq!(card.stats().dma_read_faults, spoiled);
    let frames = card.take_transmitted();
    check_frames(&frames, &msgs[4..]);
}

#[test]
fn endpoints_are_served_round_robin_with_their_own_rings() {
    let mut card = card("card_tx_endpoints", endpoint::COUNT);
    release_soon(&mut card);
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    // More than a fetch batch each: endpoints take turns batch by batch.
    let per_endpoint = DESC_BATCH + 2;
    let mut messages = Vec::new();
    for e in 0..endpoint::COUNT {
        for n in 0..per_endpoint {
            // One length for all (above the bypass class): SRPT then sends
            // them oldest first, so the order on the wire is the order the
            // descriptors were taken.
            let mut m = random_message(&mut rng, e, n, 2000);
            m.rpc_id = 2 * (100 * e as u64 + n as u64 + 1);
            post(&mut card, n as u32, &m);
            messages.push(m);
        }
    }
    for e in 0..endpoint::COUNT {
        card.csr_write(
            endpoint::base(e) + endpoint::TX_PRODUCER,
            per_endpoint as u32,
        );
    }
    let all_done = |c: &mut Card| {
        (0..endpoint::COUNT)
            .all(|e| c.csr_read(endpoint::base(e) + endpoint::CPL_PRODUCER) == per_endpoint as u32)
    };
    assert!(card.run_until(1_000_000, all_done));
    let frames = card.take_transmitted();
    check_frames(&frames, &messages);
    // Round robin by batch: the first message of each endpoint before any
    // endpoint's first message of its second batch.
    let first_frame_of = |id: u64| {
        frames
            .iter()
            .position(|f| Frame::decode(&f.bytes).unwrap().homa.common.sender_id == id)
    };
    let firsts: Vec<usize> = (0..endpoint::COUNT)
        .map(|e| first_frame_of(2 * (100 * e as u64 + 1)).unwrap())
        .collect();
    let seconds: Vec<usize> = (0..endpoint::COUNT)
        .map(|e| first_frame_of(2 * (100 * e as u64 + DESC_BATCH as u64 + 1)).unwrap())
        .collect();
    assert!(
        firsts.iter().max() < seconds.iter().min(),
        "firsts {firsts:?}, seconds {seconds:?}"
    );
    // Each endpoint's own messages in its own ring (in the order they
    // were released, which is not the order they were sent).
    for e in 0..endpoint::COUNT {
        let mut ids: Vec<u64> = completions(&mut card, e, per_endpoint as u32)
            .iter()
            .map(|c| host_abi::get(c, completion::RPC_ID))
            .collect();
        ids.sort();
        let sent: Vec<u64> = (0..per_endpoint)
            .map(|n| 2 * (100 * e as u64 + n as u64 + 1))
            .collect();
        assert_eq!(ids, sent);
    }
}

#[test]
fn a_completion_ring_that_is_full_holds_the_card_back() {
    let mut card = card("card_tx_cpl_full", 1);
    release_soon(&mut card);
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let n = 1u32 << RING_LOG2;
    let msgs: Vec<Message> = (0..n as usize)
        .map(|i| random_message(&mut rng, 0, i, 64))
        .collect();
    for (i, m) in msgs.iter().enumerate() {
        post(&mut card, i as u32, m);
    }
    card.csr_write(endpoint::base(0) + endpoint::TX_PRODUCER, n);
    assert!(card.run_until(500_000, |c| c
        .csr_read(endpoint::base(0) + endpoint::CPL_PRODUCER)
        == n));
    let entry0 = completions(&mut card, 0, 1)[0];
    // The ring is full (the host consumed nothing): a new descriptor is sent
    // but its completion waits.
    let extra = random_message(&mut rng, 0, 20, 64);
    post(&mut card, n, &extra);
    card.csr_write(endpoint::base(0) + endpoint::TX_PRODUCER, n + 1);
    card.run(100_000);
    assert_eq!(card.csr_read(endpoint::base(0) + endpoint::CPL_PRODUCER), n);
    assert_eq!(
        completions(&mut card, 0, 1)[0],
        entry0,
        "entry 0 not overwritten"
    );
    // Consuming one entry lets it through, into slot 0 with phase 0.
    card.csr_write(endpoint::base(0) + endpoint::CPL_CONSUMER, 1);
    assert!(card.run_until(100_000, |c| c
        .csr_read(endpoint::base(0) + endpoint::CPL_PRODUCER)
        == n + 1));
    let c = completions(&mut card, 0, n + 1)[0];
    assert_eq!(host_abi::get(&c, completion::RPC_ID), extra.rpc_id);
    assert_eq!(host_abi::get(&c, completion::PHASE), 0);
}

/// A control packet from `msg`'s peer about our RPC: the receiver names the
/// RPC by its own id, ours with bit 0 flipped.
fn from_peer(msg: &Message, packet_type: homa_wire::PacketType, body: Body) -> Vec<u8> {
    use homa_wire::*;
    Frame {
        eth: EthernetHeader {
            dst: MacAddr(LOCAL_MAC),
            src: MacAddr(msg.peer_mac),
        },
        ip: Ipv4Header::homa(msg.peer_ip.into(), LOCAL_IP.into(), 7),
        homa: HomaPacket {
            common: CommonHeader::new(
                msg.peer_port,
                1000 + msg.endpoint as u16,
                msg.rpc_id ^ 1,
                packet_type,
            ),
            body,
        },
    }
    .encode()
    .unwrap()
}

/// A GRANT for `msg` from its peer.
fn grant_frame(msg: &Message, offset: u32, priority: u8) -> Vec<u8> {
    use homa_wire::{Grant, PacketType};
    from_peer(
        msg,
        PacketType::Grant,
        Body::Grant(Grant { offset, priority }),
    )
}

/// (offset, payload length, priority) of every DATA frame sent.
fn data_frames(card: &mut Card) -> Vec<(u32, usize, u8)> {
    card.take_transmitted()
        .iter()
        .map(|f| {
            let frame = Frame::decode(&f.bytes).unwrap();
            let Body::Data(d) = &frame.homa.body else {
                panic!("not DATA: {frame}")
            };
            (d.seg_offset, d.payload.len(), frame.ip.priority())
        })
        .collect()
}

#[test]
fn a_long_message_sends_its_unscheduled_bytes_then_only_what_is_granted() {
    let mut card = card("card_tx_grants", 1);
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let len = 100_000;
    let msg = random_message(&mut rng, 0, 2, len);
    post(&mut card, 0, &msg);
    card.csr_write(endpoint::base(0) + endpoint::TX_PRODUCER, 1);
    card.run(20_000);
    // The unscheduled part, ending exactly at unsched_bytes (a short last
    // packet), at the unscheduled priority of a 100 KB message; then nothing.
    let sent = data_frames(&mut card);
    let bytes: usize = sent.iter().map(|f| f.1).sum();
    assert_eq!(bytes, UNSCHED_BYTES as usize);
    assert_eq!(
        sent.last().map(|f| f.0 as usize + f.1),
        Some(UNSCHED_BYTES as usize)
    );
    assert!(sent.iter().all(|f| f.2 == expected_level(len, None)));
    // A GRANT to 60,000 at priority 2: exactly the bytes up to it, at 2.
    card.receive(&grant_frame(&msg, 60_000, 2));
    card.run(20_000);
    let sent = data_frames(&mut card);
    assert_eq!(sent.first().map(|f| f.0), Some(UNSCHED_BYTES));
    assert_eq!(sent.iter().map(|f| f.1).sum::<usize>(), 20_000);
    assert!(sent.iter().all(|f| f.2 == 2), "{sent:?}");
    // A stale GRANT (below what was granted) changes nothing; one past the
    // end is the whole message. A GRANT for no message is counted.
    card.receive(&grant_frame(&msg, 50_000, 5));
    card.run(5_000);
    assert!(data_frames(&mut card).is_empty());
    let mut other = msg.clone();
    other.rpc_id += 100;
    card.receive(&grant_frame(&other, 80_000, 1));
    card.receive(&grant_frame(&msg, 1_000_000, 1));
    card.run(20_000);
    let sent = data_frames(&mut card);
    assert_eq!(sent.iter().map(|f| f.1).sum::<usize>(), len - 60_000);
    assert_eq!(sent.last().map(|f| f.0 as usize + f.1), Some(len));
    card.receive(&ack_frame(&msg));
    assert!(card.run_until(10_000, |c| cpl_producer(c) == 1));
    let cpl = completions(&mut card, 0, 1)[0];
    assert_eq!(host_abi::get(&cpl, completion::COOKIE), msg.cookie);
    assert_eq!(host_abi::get(&cpl, completion::STATUS), 0);
    use homa_hw::regmap::rx_counters;
    assert_eq!(
        card.csr_read(rx_counters::BASE + rx_counters::GRANTS_UNKNOWN),
        1
    );
}

#[test]
fn a_resend_past_the_grant_is_taken_as_a_lost_grant() {
    let mut card = card("card_tx_lost_grant", 1);
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    let len = 100_000;
    let msg = random_message(&mut rng, 0, 0, len);
    post(&mut card, 0, &msg);
    card.csr_write(endpoint::base(0) + endpoint::TX_PRODUCER, 1);
    card.run(20_000);
    assert_eq!(
        data_frames(&mut card).iter().map(|f| f.1).sum::<usize>(),
        UNSCHED_BYTES as usize
    );
    // No GRANT reached us, but the receiver asks for [40,000, 70,000): it
    // must have granted that much (HomaModule's rule), so it goes, once.
    card.receive(&resend_frame(&msg, UNSCHED_BYTES, 30_000));
    card.run(20_000);
    let sent = data_frames(&mut card);
    assert_eq!(sent.first().map(|f| f.0), Some(UNSCHED_BYTES));
    assert_eq!(sent.iter().map(|f| f.1).sum::<usize>(), 30_000);
    // "Everything sent" grants nothing more.
    card.receive(&resend_frame(&msg, 70_000, u32::MAX));
    card.run(10_000);
    assert!(data_frames(&mut card).is_empty());
}

/// A CUTOFFS packet from `msg`'s peer.
fn cutoffs_frame(msg: &Message, unsched_cutoffs: [u32; 8], cutoff_version: u16) -> Vec<u8> {
    use homa_wire::{Cutoffs, PacketType};
    from_peer(
        msg,
        PacketType::Cutoffs,
        Body::Cutoffs(Cutoffs {
            unsched_cutoffs,
            cutoff_version,
        }),
    )
}

#[test]
fn unscheduled_priority_follows_the_cutoffs_each_peer_announced() {
    let mut card = card("card_tx_cutoffs", 1);
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    // Peers: two that announce cutoffs (one of them twice: the second
    // replaces the first), one that never does, and one that folds to the
    // same table entry as the first and takes it over.
    let peer = |i: u32| 0x0a00_0010 + i;
    let a = peer(0);
    let b = peer(1);
    let silent = peer(2);
    let rival = (1..1000u32)
        .map(|k| a + (k << 8))
        .find(|&ip| peer_index(ip) == peer_index(a))
        .unwrap();
    let cutoffs_a1 = [0, 0, 0, 1_000_000, 60_000, 9_000, 1_500, 100];
    let cutoffs_a2 = [0, 1_000_000, 30_000, 10_000, 3_000, 700, 300, 0];
    let cutoffs_b = [2_000_000_000, 500_000, 0, 0, 0, 0, 0, 5_000];
    let mut n = 0u32;
    let mut send_round =
        |card: &mut Card, rng: &mut ChaCha8Rng, who: &[(u32, Option<[u32; 8]>, u16)]| {
            for &(ip, cutoffs, version) in who {
                // Every limit below exactly, and one byte either side of some.
                for len in [
                    1usize, 99, 100, 101, 299, 300, 700, 1_500, 1_501, 3_000, 5_000, 5_001, 9_000,
                    10_000, 30_000, 40_000,
                ] {
                    let mut msg = random_message(rng, 0, n as usize % 40, len);
                    msg.peer_ip = ip;
                    msg.rpc_id = 2 * (n as u64 + 1);
                    msg.opcode = tx_desc::opcode::SEND_REQUEST;
                    post(card, n, &msg);
                    n += 1;
                    card.csr_write(endpoint::base(0) + endpoint::TX_PRODUCER, n);
                    card.run(2_000);
                    // Its completion taken: the ring never fills.
                    card.csr_write(endpoint::base(0) + endpoint::CPL_CONSUMER, n);
                    let frames = card.take_transmitted();
                    assert!(!frames.is_empty(), "message {} sent", msg.rpc_id);
                    for f in frames {
                        let frame = Frame::decode(&f.bytes).unwrap();
                        if is_nudge(&frame) {
                            continue;
                        }
                        let Body::Data(d) = &frame.homa.body else {
                            panic!("not DATA: {frame}")
                        };
                        assert_eq!(u32::from(frame.ip.dst), ip);
                        assert_eq!(
                            (frame.ip.priority(), d.cutoff_version),
                            (expected_level(len, cutoffs.as_ref()), version),
                            "a {len}-byte message to {ip:#x}: {frame}"
                        );
                    }
                }
            }
        };
    // Nobody has announced anything: priority 6, version 0, as HomaModule.
    send_round(&mut card, &mut rng, &[(a, None, 0), (b, None, 0)]);
    let base = Message {
        peer_ip: a,
        ..random_message(&mut rng, 0, 0, 1)
    };
    card.receive(&cutoffs_frame(&base, cutoffs_a1, 3));
    card.receive(&cutoffs_frame(
        &Message {
            peer_ip: b,
            ..base.clone()
        },
        cutoffs_b,
        9,
    ));
    card.run(200);
    send_round(
        &mut card,
        &mut rng,
        &[
            (a, Some(cutoffs_a1), 3),
            (b, Some(cutoffs_b), 9),
            (silent, None, 0),
        ],
    );
    card.receive(&cutoffs_frame(&base, cutoffs_a2, 4));
    card.run(200);
    send_round(
        &mut card,
        &mut rng,
        &[(a, Some(cutoffs_a2), 4), (b, Some(cutoffs_b), 9)],
    );
    // The rival takes a's entry: a is unknown again, the rival known.
    card.receive(&cutoffs_frame(
        &Message {
            peer_ip: rival,
            ..base.clone()
        },
        cutoffs_a1,
        5,
    ));
    card.run(200);
    send_round(
        &mut card,
        &mut rng,
        &[(rival, Some(cutoffs_a1), 5), (a, None, 0)],
    );
    use homa_hw::regmap::rx_counters;
    assert_eq!(
        card.csr_read(rx_counters::BASE + rx_counters::CUTOFFS_RECEIVED),
        4
    );
}

/// (offset, payload, retransmit flag) of every DATA frame sent.
fn data_payloads(card: &mut Card) -> Vec<(u32, Vec<u8>, bool)> {
    card.take_transmitted()
        .iter()
        .map(|f| {
            let frame = Frame::decode(&f.bytes).unwrap();
            let Body::Data(d) = frame.homa.body else {
                panic!("not DATA")
            };
            (d.seg_offset, d.payload, d.retransmit != 0)
        })
        .collect()
}

fn resend_frame(msg: &Message, offset: u32, length: u32) -> Vec<u8> {
    use homa_wire::{PacketType, Resend};
    from_peer(
        msg,
        PacketType::Resend,
        Body::Resend(Resend {
            offset,
            length,
            priority: 7,
        }),
    )
}

fn ack_frame(msg: &Message) -> Vec<u8> {
    use homa_wire::{AckEntry, Acks, PacketType};
    // As HomaModule's client sends it: its own id in the header, the
    // entry the same.
    from_peer(
        msg,
        PacketType::Ack,
        Body::Ack(Acks {
            acks: vec![AckEntry {
                client_id: msg.rpc_id ^ 1,
                server_port: 1000 + msg.endpoint as u16,
            }],
        }),
    )
}

fn cpl_producer(card: &mut Card) -> u32 {
    card.csr_read(endpoint::base(0) + endpoint::CPL_PRODUCER)
}

fn counter(card: &mut Card, at: u32) -> u32 {
    use homa_hw::regmap::rx_counters;
    card.csr_read(rx_counters::BASE + at)
}

#[test]
fn a_resend_gets_the_range_again_and_an_ack_releases_the_message() {
    use homa_hw::regmap::rx_counters;
    let mut card = card("card_tx_resend", 1);
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let len = 10_000;
    let msg = random_message(&mut rng, 0, 2, len);
    post(&mut card, 0, &msg);
    card.csr_write(endpoint::base(0) + endpoint::TX_PRODUCER, 1);
    card.run(10_000);
    let first = data_payloads(&mut card);
    assert_eq!(first.iter().map(|f| f.1.len()).sum::<usize>(), len);
    assert!(
        first.iter().all(|f| !f.2),
        "first copies are not retransmits"
    );
    // All sent, but kept: no completion until the receiver has it.
    assert_eq!(cpl_producer(&mut card), 0);

    // Two packets' worth from the third packet: exactly those, flagged,
    // with the message's bytes.
    let seg = MAX_SEGMENT_BYTES;
    card.receive(&resend_frame(&msg, 2 * seg, 2 * seg));
    card.run(5_000);
    let again = data_payloads(&mut card);
    let offsets: Vec<u32> = again.iter().map(|f| f.0).collect();
    assert_eq!(offsets, [2 * seg, 3 * seg]);
    for (offset, payload, retransmit) in &again {
        assert!(retransmit);
        let at = *offset as usize;
        assert_eq!(payload[..], msg.payload[at..at + payload.len()]);
    }
    // "Everything sent" from the last full packet: the rest of the message.
    card.receive(&resend_frame(&msg, 6 * seg, u32::MAX));
    card.run(5_000);
    let tail = data_payloads(&mut card);
    assert_eq!(
        tail.iter().map(|f| f.0).collect::<Vec<_>>(),
        [6 * seg, 7 * seg]
    );
    assert_eq!(tail.last().map(|f| f.0 as usize + f.1.len()), Some(len));
    assert_eq!(counter(&mut card, rx_counters::PACKETS_RETRANSMITTED), 4);
    assert_eq!(cpl_producer(&mut card), 0);

    // The ACK: the completion, OK; a RESEND after it finds nothing.
    card.receive(&ack_frame(&msg));
    assert!(card.run_until(10_000, |c| cpl_producer(c) == 1));
    let cpl = completions(&mut card, 0, 1)[0];
    assert_eq!(host_abi::get(&cpl, completion::COOKIE), msg.cookie);
    assert_eq!(host_abi::get(&cpl, completion::STATUS), 0);
    // (It is answered RPC_UNKNOWN: the card has no trace of the RPC.)
    card.receive(&resend_frame(&msg, 0, seg));
    card.run(5_000);
    let answers: Vec<Frame> = card
        .take_transmitted()
        .iter()
        .map(|f| Frame::decode(&f.bytes).unwrap())
        .collect();
    assert_eq!(answers.len(), 1);
    assert!(matches!(answers[0].homa.body, Body::RpcUnknown));
    assert_eq!(u32::from(answers[0].ip.dst), msg.peer_ip);
    assert_eq!(answers[0].eth.dst.0, msg.peer_mac);
    assert_eq!(
        (answers[0].homa.common.sport, answers[0].homa.common.dport),
        (1000 + msg.endpoint as u16, msg.peer_port)
    );
    assert_eq!(answers[0].homa.common.sender_id, msg.rpc_id);
    assert_eq!(counter(&mut card, rx_counters::RESENDS_UNKNOWN), 1);
    assert_eq!(counter(&mut card, rx_counters::RPC_UNKNOWNS_SENT), 1);
    assert_eq!(counter(&mut card, rx_counters::RESENDS_RECEIVED), 3);
    assert_eq!(counter(&mut card, rx_counters::ACKS_RECEIVED), 1);
    assert_eq!(cpl_producer(&mut card), 1, "one completion per message");
}

/// Fast timers: a tick of 1 us (a sweep, about 1,040 cycles while a few
/// messages are held, is the real period), nudges from the first tick of
/// silence, every tick, and `timeout` ticks before the card gives up.
fn fast_timers(card: &mut Card, timeout: u32) {
    use homa_hw::regmap::timer;
    card.csr_write(timer::BASE + timer::TICK_NS, 1000);
    card.csr_write(timer::BASE + timer::RESEND_TICKS, 1);
    card.csr_write(timer::BASE + timer::RESEND_INTERVAL, 1);
    card.csr_write(timer::BASE + timer::TIMEOUT_TICKS, timeout);
}

/// Every frame sent, decoded.
fn sent_frames(card: &mut Card) -> Vec<Frame> {
    card.take_transmitted()
        .iter()
        .map(|f| Frame::decode(&f.bytes).unwrap())
        .collect()
}

#[test]
fn a_request_whose_server_stays_silent_is_asked_for_its_response_then_times_out() {
    use homa_hw::regmap::rx_counters;
    let mut card = card("card_tx_timeout", 1);
    fast_timers(&mut card, 4);
    let mut rng = ChaCha8Rng::seed_from_u64(10);
    let msg = random_message(&mut rng, 0, 0, 3000);
    assert_eq!(msg.opcode, tx_desc::opcode::SEND_REQUEST);
    post(&mut card, 0, &msg);
    card.csr_write(endpoint::base(0) + endpoint::TX_PRODUCER, 1);
    assert!(card.run_until(400_000, |c| cpl_producer(c) == 1));
    let cpl = completions(&mut card, 0, 1)[0];
    assert_eq!(
        host_abi::get(&cpl, completion::STATUS),
        completion::status::TIMEOUT as u64
    );
    // Its DATA, then a RESEND for the response's first packet at every tick
    // of silence short of the timeout: to the server, about our RPC.
    let frames = sent_frames(&mut card);
    let data = frames
        .iter()
        .filter(|f| matches!(f.homa.body, Body::Data(_)));
    assert_eq!(data.count(), 3);
    let asks: Vec<&Frame> = frames
        .iter()
        .filter(|f| matches!(f.homa.body, Body::Resend(_)))
        .collect();
    assert!(!asks.is_empty() && asks.len() < 4, "{} RESENDs", asks.len());
    for f in &asks {
        assert_eq!(u32::from(f.ip.dst), msg.peer_ip);
        assert_eq!(f.eth.dst.0, msg.peer_mac);
        assert_eq!(
            (f.homa.common.sport, f.homa.common.dport),
            (1000, msg.peer_port)
        );
        assert_eq!(f.homa.common.sender_id, msg.rpc_id);
        let Body::Resend(r) = &f.homa.body else {
            unreachable!()
        };
        assert_eq!((r.offset, r.length), (0, MAX_SEGMENT_BYTES));
    }
    assert_eq!(
        counter(&mut card, rx_counters::RESPONSE_RESENDS_SENT),
        asks.len() as u32
    );
    assert_eq!(counter(&mut card, rx_counters::LINGERS_EXPIRED), 1);
    card.run(100_000);
    assert_eq!(cpl_producer(&mut card), 1, "one completion per message");
}

#[test]
fn a_response_whose_client_stays_silent_is_asked_for_its_ack() {
    use homa_hw::regmap::rx_counters;
    let mut card = card("card_tx_need_ack", 1);
    fast_timers(&mut card, 50);
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let msg = random_message(&mut rng, 0, 2, 2000);
    assert_eq!(msg.opcode, tx_desc::opcode::SEND_RESPONSE);
    post(&mut card, 0, &msg);
    card.csr_write(endpoint::base(0) + endpoint::TX_PRODUCER, 1);
    // A NEED_ACK (the common header alone, one beat) to the client.
    let mut need_acks = Vec::new();
    assert!(card.run_until(200_000, |c| {
        need_acks.extend(
            sent_frames(c)
                .into_iter()
                .filter(|f| matches!(f.homa.body, Body::NeedAck)),
        );
        !need_acks.is_empty()
    }));
    let f = &need_acks[0];
    assert_eq!(f.len(), 62);
    assert_eq!(u32::from(f.ip.dst), msg.peer_ip);
    assert_eq!(
        (f.homa.common.sport, f.homa.common.dport),
        (1000, msg.peer_port)
    );
    assert_eq!(f.homa.common.sender_id, msg.rpc_id);
    assert_eq!(f.ip.priority(), 7);
    assert_eq!(cpl_producer(&mut card), 0, "kept until acked");
    // The client's ACK lets it go at once, OK.
    card.receive(&ack_frame(&msg));
    assert!(card.run_until(10_000, |c| cpl_producer(c) == 1));
    let cpl = completions(&mut card, 0, 1)[0];
    assert_eq!(host_abi::get(&cpl, completion::STATUS), 0);
    assert!(counter(&mut card, rx_counters::NEED_ACKS_SENT) >= 1);
    assert_eq!(counter(&mut card, rx_counters::LINGERS_EXPIRED), 0);
}

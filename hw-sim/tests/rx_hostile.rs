//! Hostile frames the fuzzer (`homa-nic fuzz`) found, or their classes, one
//! test each, on a single card: each frame is counted exactly once (accepted
//! frames by the RX engine's counters), writes nothing outside its payload's
//! place, and delivers what it carries and nothing else. Findings 1-4 of
//! the fuzzer (the RX engine, fixed in 1cf5f27), one test each; each failed
//! on the RTL before the fix.

mod support;

use homa_hw::host_abi::{self, completion};
use homa_hw::regmap::rx_counters;
use homa_wire::*;
use support::host::{rx_area, TestHost};

const PORT: u16 = 99;

/// The card's RX engine counters that account for accepted frames.
const ENGINE: [u32; 14] = [
    rx_counters::FIFO_OVERFLOWS,
    rx_counters::DATA_ACCEPTED,
    rx_counters::OTHER_CONTROL,
    rx_counters::DROP_NO_ENDPOINT,
    rx_counters::DROP_RPC_FULL,
    rx_counters::DROP_NO_BPAGE,
    rx_counters::DROP_TOO_BIG,
    rx_counters::DUPLICATES,
    rx_counters::DROP_BAD_RANGE,
    rx_counters::GRANTS_RECEIVED,
    rx_counters::CUTOFFS_RECEIVED,
    rx_counters::NEED_ACKS_RECEIVED,
    rx_counters::RESENDS_RECEIVED,
    rx_counters::ACKS_RECEIVED,
];

fn host(name: &str) -> TestHost {
    TestHost::new(name, [2, 0, 0, 0, 0, 2], 0x0a00_0002, &[PORT])
}

fn frame(id: u64, body: Body) -> Vec<u8> {
    let ty = body.packet_type();
    Frame {
        eth: EthernetHeader {
            dst: MacAddr([2, 0, 0, 0, 0, 2]),
            src: MacAddr([2, 0, 0, 0, 0, 1]),
        },
        ip: Ipv4Header::homa([10, 0, 0, 1].into(), [10, 0, 0, 2].into(), 5),
        homa: HomaPacket {
            common: CommonHeader::new(0x8000, PORT, id, ty),
            body,
        },
    }
    .encode()
    .unwrap()
}

/// A whole message of `payload` in one DATA packet.
fn data(id: u64, payload: Vec<u8>) -> Vec<u8> {
    frame(
        id,
        Body::Data(Data {
            message_length: payload.len() as u32,
            incoming: payload.len() as u32,
            ack: AckEntry::default(),
            cutoff_version: 0,
            retransmit: 0,
            pad: [0; 3],
            seg_offset: 0,
            payload,
        }),
    )
}

/// (frames accepted by the parser, frames the RX engine counted).
fn accounted(h: &mut TestHost) -> (u32, u32) {
    let accepted = h
        .card
        .csr_read(rx_counters::BASE + rx_counters::FIRST_COUNTER);
    let engine = ENGINE
        .iter()
        .map(|&r| h.card.csr_read(rx_counters::BASE + r))
        .sum();
    (accepted, engine)
}

/// Hands `frames` to the card and runs it until they are all in and
/// counted (or `limit` cycles); returns the completions that came.
fn deliver(h: &mut TestHost, frames: &[Vec<u8>], limit: u64) -> Vec<[u8; 64]> {
    for f in frames {
        h.card.receive(f);
    }
    let mut got = Vec::new();
    for _ in 0..limit {
        h.card.step();
        got.extend(h.poll(0));
    }
    got
}

#[test]
fn a_need_ack_is_counted_once() {
    let mut h = host("rx_hostile_need_ack");
    deliver(&mut h, &[frame(6, Body::NeedAck)], 2_000);
    let need_acks = h
        .card
        .csr_read(rx_counters::BASE + rx_counters::NEED_ACKS_RECEIVED);
    assert_eq!(need_acks, 1);
    let (accepted, engine) = accounted(&mut h);
    assert_eq!(accepted, 1);
    assert_eq!(
        engine, 1,
        "one NEED_ACK, counted {engine} times by the RX engine"
    );
}

#[test]
fn ethernet_padding_after_a_data_packet_is_not_written() {
    // A 10-byte message, its frame padded to 400 bytes: the padding beats
    // lie 192..256 bytes past the payload's end, where a wrapped lane count
    // would enable lanes.
    let mut h = host("rx_hostile_padding");
    let mut f = data(10, (1..=10).collect());
    f.resize(400, 0xee);
    let before = h.card.link_stats().bytes_written;
    let cpls = deliver(&mut h, &[f], 3_000);
    assert_eq!(cpls.len(), 1, "the message completes");
    let written = h.card.link_stats().bytes_written - before;
    // The payload and one 64-byte completion entry.
    assert_eq!(written, 10 + 64, "bytes written to host memory");
    let got = h.received(0, &cpls[0]);
    assert_eq!(got, (1..=10).collect::<Vec<u8>>());
    let mut page = vec![0u8; 1024];
    let first = TestHost::bpages(&cpls[0])[0];
    h.card
        .memory()
        .read(rx_area(0) + first as u64 * 65_536, &mut page);
    assert!(
        page[10..].iter().all(|&b| b == 0),
        "padding bytes written into the bpage past the message"
    );
    let (accepted, engine) = accounted(&mut h);
    assert_eq!((accepted, engine), (1, 1));
}

#[test]
fn a_jumbo_data_packet_is_delivered_whole() {
    // 8,924 bytes of payload in one 9,014-byte frame: 141 beats.
    let mut h = host("rx_hostile_jumbo");
    let payload: Vec<u8> = (0..8_924u32).map(|i| (i * 13 + i / 256) as u8).collect();
    let cpls = deliver(&mut h, &[data(12, payload.clone())], 6_000);
    let (accepted, engine) = accounted(&mut h);
    assert_eq!((accepted, engine), (1, 1));
    assert_eq!(cpls.len(), 1, "the message completes");
    assert_eq!(
        host_abi::get(&cpls[0], completion::LENGTH),
        payload.len() as u64
    );
    let got = h.received(0, &cpls[0]);
    let first = got.iter().zip(&payload).position(|(a, b)| a != b);
    assert!(first.is_none(), "the message differs from byte {first:?}");
}

#[test]
fn a_long_need_ack_does_not_smuggle_the_frame_in_its_tail() {
    // A NEED_ACK whose frame carries 192 more bytes: from byte 128 (beat 2)
    // a whole DATA frame of a one-byte message. Only the NEED_ACK is a
    // packet; the bytes behind it are padding.
    let mut h = host("rx_hostile_long_need_ack");
    let mut f = frame(6, Body::NeedAck);
    f.resize(128, 0);
    let inner = data(20, vec![0x42]);
    f.extend_from_slice(&inner);
    f.resize(128 + 192, 0);
    let cpls = deliver(&mut h, &[f], 3_000);
    let delivered = h
        .card
        .csr_read(rx_counters::BASE + rx_counters::MESSAGES_DELIVERED);
    assert!(
        cpls.is_empty() && delivered == 0,
        "a message came out of a NEED_ACK's padding"
    );
    let (accepted, engine) = accounted(&mut h);
    assert_eq!((accepted, engine), (1, 1));
}

//! The card's RX path on DATA it did not expect: a duplicate packet, a packet
//! after a gap. Without retransmission (it comes with grants) the card takes
//! packets in order only; the others are dropped and counted, and no message
//! completes early or with a hole.

mod support;

use homa_hw::host_abi::{self, completion};
use homa_hw::regmap::rx_counters;
use homa_wire::*;
use support::host::TestHost;

const PAYLOAD: usize = 1424;

/// Packet `index` of a message of `len` bytes from 10.0.0.1:32768, RPC `id`.
fn packet(id: u64, len: usize, index: usize, fill: impl Fn(usize) -> u8) -> Vec<u8> {
    let offset = index * PAYLOAD;
    let end = (offset + PAYLOAD).min(len);
    let mut common = CommonHeader::new(0x8000, 99, id, PacketType::Data);
    common.sequence = offset as u32;
    Frame {
        eth: EthernetHeader {
            dst: MacAddr([2, 0, 0, 0, 0, 2]),
            src: MacAddr([2, 0, 0, 0, 0, 1]),
        },
        ip: Ipv4Header::homa([10, 0, 0, 1].into(), [10, 0, 0, 2].into(), 5),
        homa: HomaPacket {
            common,
            body: Body::Data(Data {
                message_length: len as u32,
                incoming: len as u32,
                ack: AckEntry::default(),
                cutoff_version: 1,
                retransmit: 0,
                pad: [0; 3],
                seg_offset: offset as u32,
                payload: (offset..end).map(&fill).collect(),
            }),
        },
    }
    .encode()
    .unwrap()
}

fn out_of_order_drops(h: &mut TestHost) -> u32 {
    h.card
        .csr_read(rx_counters::BASE + rx_counters::DROP_OUT_OF_ORDER)
}

/// Runs until a completion arrives (or `cycles` pass) and returns them all.
fn completions(h: &mut TestHost, cycles: u64) -> Vec<[u8; 64]> {
    let mut got = Vec::new();
    for _ in 0..cycles {
        h.card.step();
        got.extend(h.poll(0));
    }
    got
}

#[test]
fn a_duplicate_packet_is_dropped_and_the_message_arrives_whole() {
    let mut h = TestHost::new("card_rx_duplicate", [2, 0, 0, 0, 0, 2], 0x0a00_0002, &[99]);
    let len = 3 * PAYLOAD - 100;
    let fill = |i: usize| (i * 7 % 251) as u8;
    h.card.receive(&packet(2, len, 0, fill));
    h.card.receive(&packet(2, len, 0, fill)); // duplicate
    h.card.receive(&packet(2, len, 1, fill));
    h.card.receive(&packet(2, len, 1, fill)); // duplicate
    h.card.receive(&packet(2, len, 2, fill));
    let c = completions(&mut h, 3000);
    assert_eq!(c.len(), 1, "one completion");
    assert_eq!(host_abi::get(&c[0], completion::LENGTH), len as u64);
    assert_eq!(
        h.received(0, &c[0]),
        (0..len).map(fill).collect::<Vec<u8>>()
    );
    assert_eq!(out_of_order_drops(&mut h), 2);
}

#[test]
fn a_packet_after_a_gap_is_dropped_and_nothing_completes_early() {
    let mut h = TestHost::new("card_rx_gap", [2, 0, 0, 0, 0, 2], 0x0a00_0002, &[99]);
    let len = 3 * PAYLOAD;
    let fill = |i: usize| (i % 253) as u8;
    // The last packet first: a new RPC that starts past offset 0 is forgotten.
    h.card.receive(&packet(4, len, 2, fill));
    // Then 0 and 2 (1 lost): 2 is after a gap, nothing completes.
    h.card.receive(&packet(4, len, 0, fill));
    h.card.receive(&packet(4, len, 2, fill));
    assert!(
        completions(&mut h, 3000).is_empty(),
        "no completion with a hole"
    );
    assert_eq!(out_of_order_drops(&mut h), 2);
    // The missing packets in order complete it.
    h.card.receive(&packet(4, len, 1, fill));
    h.card.receive(&packet(4, len, 2, fill));
    let c = completions(&mut h, 3000);
    assert_eq!(c.len(), 1);
    assert_eq!(
        h.received(0, &c[0]),
        (0..len).map(fill).collect::<Vec<u8>>()
    );
    assert_eq!(out_of_order_drops(&mut h), 2, "nothing else dropped");
}

/// A BUSY for RPC `id`: one beat on the wire (62 bytes).
fn busy(id: u64) -> Vec<u8> {
    Frame {
        eth: EthernetHeader {
            dst: MacAddr([2, 0, 0, 0, 0, 2]),
            src: MacAddr([2, 0, 0, 0, 0, 1]),
        },
        ip: Ipv4Header::homa([10, 0, 0, 1].into(), [10, 0, 0, 2].into(), 7),
        homa: HomaPacket {
            common: CommonHeader::new(0x8000, 99, id, PacketType::Busy),
            body: Body::Busy,
        },
    }
    .encode()
    .unwrap()
}

#[test]
fn one_beat_frames_back_to_back_are_each_judged_and_data_behind_them_arrives_whole() {
    // The parser's verdict comes a few cycles after a frame's last beat, and
    // the RX FIFO keeps every frame still waiting for its verdict: with
    // one-beat frames back to back, as many as the parser's pipeline holds.
    // Good and bad frames alternate, so a verdict matched to the wrong frame
    // shows as a good frame dropped, or a bad one let through to the engine.
    let mut h = TestHost::new(
        "card_rx_back_to_back",
        [2, 0, 0, 0, 0, 2],
        0x0a00_0002,
        &[99],
    );
    let len = 2 * PAYLOAD + 10;
    let fill = |i: usize| (i * 13 % 241) as u8;
    let mut bad_checksum = 0;
    for i in 0..40u64 {
        let mut frame = busy(100 + i);
        assert!(frame.len() <= 64, "one beat");
        if i % 3 == 1 {
            frame[24] ^= 0x40; // the IPv4 checksum
            bad_checksum += 1;
        }
        h.card.receive(&frame);
    }
    for index in 0..3 {
        h.card.receive(&packet(7, len, index, fill));
    }
    let c = completions(&mut h, 3000);
    assert_eq!(c.len(), 1, "one completion");
    assert_eq!(
        h.received(0, &c[0]),
        (0..len).map(fill).collect::<Vec<u8>>()
    );
    let counter = |h: &mut TestHost, v: u32| {
        h.card
            .csr_read(rx_counters::BASE + rx_counters::FIRST_COUNTER + 4 * v)
    };
    assert_eq!(counter(&mut h, 0), 40 - bad_checksum + 3, "accepted");
    assert_eq!(counter(&mut h, 6), bad_checksum, "IP checksum drops");
    assert_eq!(out_of_order_drops(&mut h), 0);
}

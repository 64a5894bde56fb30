//! The card's RX path against what a network does to DATA: packets out of
//! order, duplicated, for messages of 1 byte to 1,000,000 over many bpages.
//! Each message is checked byte for byte, its bpages named in its
//! completion, and the drop counters against a reference of the message's
//! record of what arrived (prefix + up to four gap ranges).

mod support;

use std::collections::BTreeMap;

use homa_hw::host_abi::{self, completion};
use homa_hw::regmap::{endpoint, rx_counters};
use homa_hw::rx::engine::GAPS;
use homa_hw_sim::dma_link::TlpConfig;
use homa_wire::*;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use support::host::{Send, TestHost, BPAGES, TX_BUFFERS};
use support::{packet_at, PAYLOAD};

/// `packet_at`'s frame with another cutoff version in its DATA header.
fn with_cutoff_version(frame: Vec<u8>, version: u16) -> Vec<u8> {
    let mut f = Frame::decode(&frame).unwrap();
    let Body::Data(d) = &mut f.homa.body else {
        unreachable!()
    };
    d.cutoff_version = version;
    f.encode().unwrap()
}

/// Packet `index` of the message (payload 1424 bytes from index * 1424).
fn packet(id: u64, len: usize, index: usize, fill: impl Fn(usize) -> u8) -> Vec<u8> {
    packet_at(id, len, index * PAYLOAD, fill)
}

fn counter(h: &mut TestHost, register: u32) -> u32 {
    h.card.csr_read(rx_counters::BASE + register)
}

/// Runs `cycles` cycles and returns every completion that arrived.
fn completions(h: &mut TestHost, cycles: u64) -> Vec<[u8; 64]> {
    let mut got = Vec::new();
    for _ in 0..cycles {
        h.card.step();
        got.extend(h.poll(0));
    }
    got
}

/// The reference for one message's record: what the card must take, drop
/// as a duplicate, or drop for want of a gap range.
#[derive(Default)]
struct Record {
    prefix: usize,
    gaps: Vec<(usize, usize)>,
}

#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    Taken,
    Duplicate,
    NoGapRange,
}

impl Record {
    fn offer(&mut self, start: usize, end: usize) -> Verdict {
        let covered = end <= self.prefix || self.gaps.iter().any(|&(s, e)| s <= start && end <= e);
        if covered {
            return Verdict::Duplicate;
        }
        let left = start == self.prefix || self.gaps.iter().any(|&(_, e)| e == start);
        let right = self.gaps.iter().position(|&(s, _)| s == end);
        if !left && right.is_none() && self.gaps.len() == GAPS {
            return Verdict::NoGapRange;
        }
        let mut new_end = end;
        if let Some(r) = right {
            new_end = self.gaps.remove(r).1;
        }
        if start == self.prefix {
            self.prefix = new_end;
        } else if let Some(g) = self.gaps.iter_mut().find(|g| g.1 == start) {
            g.1 = new_end;
        } else {
            self.gaps.push((start, new_end));
        }
        Verdict::Taken
    }
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
    assert_eq!(counter(&mut h, rx_counters::DUPLICATES), 2);
    // A copy of its last packet after the message completed: not a new RPC.
    h.card.receive(&packet(2, len, 2, fill));
    assert!(completions(&mut h, 2000).is_empty());
    assert_eq!(counter(&mut h, rx_counters::DUPLICATES), 3);
    let free = h
        .card
        .csr_read(endpoint::base(0) + endpoint::RX_BPAGES_FREE);
    assert_eq!(free, BPAGES - 1, "only the message's bpage is held");
}

#[test]
fn packets_in_any_order_complete_the_message_once_its_holes_fill() {
    let mut h = TestHost::new("card_rx_gap", [2, 0, 0, 0, 0, 2], 0x0a00_0002, &[99]);
    let len = 7 * PAYLOAD;
    let fill = |i: usize| (i % 253) as u8;
    // Last first, then 0, 2, 4: three holes (1, 3, 5) and no completion.
    for index in [6, 0, 2, 4] {
        h.card.receive(&packet(4, len, index, fill));
    }
    assert!(
        completions(&mut h, 3000).is_empty(),
        "no completion with a hole"
    );
    for index in [5, 3, 1] {
        h.card.receive(&packet(4, len, index, fill));
    }
    let c = completions(&mut h, 3000);
    assert_eq!(c.len(), 1);
    assert_eq!(
        h.received(0, &c[0]),
        (0..len).map(fill).collect::<Vec<u8>>()
    );
    assert_eq!(counter(&mut h, rx_counters::DUPLICATES), 0);
    assert_eq!(counter(&mut h, rx_counters::DROP_BAD_RANGE), 0);
}

#[test]
fn a_packet_that_would_open_a_fifth_gap_is_dropped_until_resent() {
    let mut h = TestHost::new("card_rx_fifth_gap", [2, 0, 0, 0, 0, 2], 0x0a00_0002, &[99]);
    let len = 12 * PAYLOAD;
    let fill = |i: usize| (i * 3 % 249) as u8;
    // 2, 4, 6, 8 open four gap ranges; 10 would be a fifth.
    for index in [2, 4, 6, 8, 10] {
        h.card.receive(&packet(6, len, index, fill));
    }
    assert!(completions(&mut h, 3000).is_empty());
    assert_eq!(counter(&mut h, rx_counters::DROP_BAD_RANGE), 1);
    // Everything else, then 10 again (as a RESEND would bring it).
    for index in [0, 1, 3, 5, 7, 9, 11, 10] {
        h.card.receive(&packet(6, len, index, fill));
    }
    let c = completions(&mut h, 4000);
    assert_eq!(c.len(), 1);
    assert_eq!(
        h.received(0, &c[0]),
        (0..len).map(fill).collect::<Vec<u8>>()
    );
    // A packet that overlaps part of what arrived is dropped too.
    let len2 = 3 * PAYLOAD;
    h.card.receive(&packet(8, len2, 0, fill));
    h.card.receive(&packet_at(8, len2, PAYLOAD / 2, fill));
    assert!(completions(&mut h, 2000).is_empty());
    assert_eq!(counter(&mut h, rx_counters::DROP_BAD_RANGE), 2);
}

#[test]
fn messages_up_to_a_megabyte_in_shuffled_interleaved_packets_arrive_whole() {
    let h = TestHost::new("card_rx_random", [2, 0, 0, 0, 0, 2], 0x0a00_0002, &[99]);
    shuffled_messages(h, 0x5eed_0008, 3);
}

#[test]
fn shuffled_messages_arrive_whole_over_a_harsh_pcie_link() {
    // Writes in 128-byte TLPs, RQ stalled 10% of the time, each landing
    // 400 ns after it is sent.
    let h = TestHost::with_link(
        "card_rx_random_harsh_link",
        [2, 0, 0, 0, 0, 2],
        0x0a00_0002,
        &[99],
        TlpConfig::harsh(0x5eed_0009).into(),
    );
    shuffled_messages(h, 0x5eed_0009, 2);
}

/// `rounds` rounds of three messages of up to 1,000,000 bytes at once, their
/// packets shuffled, duplicated and interleaved (`seed`): each arrives whole,
/// once, in bpages of the endpoint's own, and every bpage comes back.
fn shuffled_messages(mut h: TestHost, seed: u64, rounds: usize) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for round in 0..rounds {
        // Three messages at once: lengths that end on, just past and just
        // short of bpage boundaries, up to HomaModule's 1,000,000.
        let lengths: Vec<usize> = (0..3)
            .map(|i| match (round * 3 + i) % 5 {
                0 => 1_000_000,
                1 => 65_536 * rng.gen_range(1..6) + rng.gen_range(0..2) * 1_423,
                2 => rng.gen_range(1..3 * PAYLOAD),
                _ => rng.gen_range(1..400_000),
            })
            .collect();
        let ids: Vec<u64> = (0..3).map(|i| 1000 + 2 * (round * 3 + i) as u64).collect();
        let fills: Vec<u64> = (0..3).map(|_| rng.gen()).collect();
        let byte = |m: usize, i: usize| ((i as u64).wrapping_mul(fills[m]) >> 24) as u8;
        // Each message's packets shuffled within windows of 6, with 5%
        // duplicated a little later; the three interleaved at random.
        let mut queues: Vec<Vec<usize>> = lengths
            .iter()
            .map(|&len| {
                let n = len.div_ceil(PAYLOAD);
                let mut order: Vec<usize> = (0..n).collect();
                for w in order.chunks_mut(6) {
                    w.shuffle(&mut rng);
                }
                let mut out = Vec::new();
                for (k, &p) in order.iter().enumerate() {
                    out.push(p);
                    if rng.gen_ratio(1, 20) {
                        let at = (k + rng.gen_range(1..4)).min(order.len());
                        out.insert(out.len().min(at), p);
                    }
                }
                out
            })
            .collect();
        let mut records: Vec<Record> = (0..3).map(|_| Record::default()).collect();
        let mut resend: Vec<Vec<usize>> = vec![Vec::new(); 3];
        let (mut dups, mut no_range) = (0, 0);
        let dups_before = counter(&mut h, rx_counters::DUPLICATES);
        let range_before = counter(&mut h, rx_counters::DROP_BAD_RANGE);
        let mut got = Vec::new();
        loop {
            let live: Vec<usize> = (0..3).filter(|&m| !queues[m].is_empty()).collect();
            let Some(&m) = live.choose(&mut rng) else {
                // What was dropped for want of a gap range, sent again.
                if resend.iter().all(|r| r.is_empty()) {
                    break;
                }
                for m in 0..3 {
                    queues[m] = std::mem::take(&mut resend[m]);
                }
                continue;
            };
            let p = queues[m].remove(0);
            let (len, start) = (lengths[m], p * PAYLOAD);
            match records[m].offer(start, (start + PAYLOAD).min(len)) {
                Verdict::Taken => {}
                Verdict::Duplicate => dups += 1,
                Verdict::NoGapRange => {
                    no_range += 1;
                    resend[m].push(p);
                }
            }
            h.card.receive(&packet(ids[m], len, p, |i| byte(m, i)));
            // Let the card keep pace with the wire (a packet per ~60 cycles).
            got.extend(completions(&mut h, 60));
        }
        got.extend(completions(&mut h, 20_000));
        assert_eq!(got.len(), 3, "round {round}: one completion per message");
        let mut pages_seen = std::collections::BTreeSet::new();
        let by_id: BTreeMap<u64, [u8; 64]> = got
            .iter()
            .map(|c| (host_abi::get(c, completion::RPC_ID), *c))
            .collect();
        for m in 0..3 {
            let c = by_id[&(ids[m] ^ 1)];
            assert_eq!(host_abi::get(&c, completion::LENGTH), lengths[m] as u64);
            let data = h.received(0, &c);
            let want: Vec<u8> = (0..lengths[m]).map(|i| byte(m, i)).collect();
            assert!(
                data == want,
                "round {round}: message {m} ({} bytes) differs",
                lengths[m]
            );
            for page in TestHost::bpages(&c) {
                assert!(page < BPAGES, "bpage {page} is the endpoint's");
                assert!(pages_seen.insert(page), "bpage {page} given twice");
            }
        }
        assert_eq!(counter(&mut h, rx_counters::DUPLICATES) - dups_before, dups);
        assert_eq!(
            counter(&mut h, rx_counters::DROP_BAD_RANGE) - range_before,
            no_range
        );
        for c in &got {
            h.give_back(0, c);
        }
        let free = h
            .card
            .csr_read(endpoint::base(0) + endpoint::RX_BPAGES_FREE);
        assert_eq!(free, BPAGES, "every bpage back in the pool");
    }
}

/// A BUSY for RPC `id`: one beat on the wire (62 bytes).
fn busy(id: u64) -> Vec<u8> {
    control(id, Body::Busy)
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
    assert_eq!(counter(&mut h, rx_counters::DUPLICATES), 0);
}

/// A NEED_ACK from the peer of `packet` for its RPC `id` (the peer's id).
fn need_ack(id: u64) -> Vec<u8> {
    control(id, Body::NeedAck)
}

/// A control packet of `body`'s type for RPC `id` (the peer's id), from the
/// peer of `packet` to port 99.
fn control(id: u64, body: Body) -> Vec<u8> {
    Frame {
        eth: EthernetHeader {
            dst: MacAddr([2, 0, 0, 0, 0, 2]),
            src: MacAddr([2, 0, 0, 0, 0, 1]),
        },
        ip: Ipv4Header::homa([10, 0, 0, 1].into(), [10, 0, 0, 2].into(), 7),
        homa: HomaPacket {
            common: CommonHeader::new(0x8000, 99, id, body.packet_type()),
            body,
        },
    }
    .encode()
    .unwrap()
}

#[test]
fn control_packets_back_to_back_are_each_routed_and_data_among_them_arrives_whole() {
    // A control packet that needs no lookup (GRANT, ACK, BUSY, CUTOFFS) ends
    // in the header stage's DECIDE, which takes the next frame's first beat
    // in the same cycle; NEED_ACK and RESEND go on to a lookup, and DATA on
    // to its message. Shuffled back to back, each kind must still reach its
    // counter and its answer, and the message its bytes.
    let mut h = TestHost::new(
        "card_rx_control_mix",
        [2, 0, 0, 0, 0, 2],
        0x0a00_0002,
        &[99],
    );
    let len = 4 * PAYLOAD + 100;
    let fill = |i: usize| (i * 31 % 251) as u8;
    let mut rng = ChaCha8Rng::seed_from_u64(0x5eed_c7);
    let mut frames: Vec<(&str, Vec<u8>)> = Vec::new();
    for i in 0..12u64 {
        let grant = Body::Grant(Grant {
            offset: 20_000,
            priority: 3,
        });
        frames.push(("grant", control(0x100 + 2 * i, grant)));
    }
    for i in 0..6u64 {
        frames.push(("ack", control(0x200 + 2 * i, Body::Ack(Acks::default()))));
        frames.push(("busy", control(0x300 + 2 * i + 1, Body::Busy)));
    }
    for i in 0..4u64 {
        frames.push(("need_ack", control(0x401 + 2 * i, Body::NeedAck)));
        let resend = Body::Resend(Resend {
            offset: 0,
            length: 1000,
            priority: 5,
        });
        frames.push(("resend", control(0x500 + 2 * i, resend)));
    }
    for _ in 0..3 {
        let cutoffs = Body::Cutoffs(Cutoffs {
            unsched_cutoffs: [1000; 8],
            cutoff_version: 3,
        });
        frames.push(("cutoffs", control(0x600, cutoffs)));
    }
    for index in 0..5 {
        frames.push(("data", packet(0x701, len, index, fill)));
    }
    frames.shuffle(&mut rng);
    for (_, f) in &frames {
        h.card.receive(f);
    }
    let c = completions(&mut h, 6000);
    assert_eq!(c.len(), 1, "one completion");
    assert_eq!(
        h.received(0, &c[0]),
        (0..len).map(fill).collect::<Vec<u8>>()
    );
    let sent = |kind: &str| frames.iter().filter(|(k, _)| *k == kind).count() as u32;
    assert_eq!(counter(&mut h, rx_counters::SENDER_EVENTS_DROPPED), 0);
    for (register, kind) in [
        (rx_counters::GRANTS_RECEIVED, "grant"),
        (rx_counters::GRANTS_UNKNOWN, "grant"),
        (rx_counters::ACKS_RECEIVED, "ack"),
        (rx_counters::OTHER_CONTROL, "busy"),
        (rx_counters::NEED_ACKS_RECEIVED, "need_ack"),
        (rx_counters::RESENDS_RECEIVED, "resend"),
        (rx_counters::RESENDS_UNKNOWN, "resend"),
        (rx_counters::CUTOFFS_RECEIVED, "cutoffs"),
        (rx_counters::DATA_ACCEPTED, "data"),
    ] {
        assert_eq!(
            counter(&mut h, register),
            sent(kind),
            "{kind} (register {register:#x})"
        );
    }
    // The answers: an ACK for each NEED_ACK (for an RPC the card does not
    // have) and one for the response once it is all in (0x700, the card's
    // RPC as a client), an RPC_UNKNOWN for each RESEND (for a message it does
    // not have).
    let answers: Vec<Frame> = h
        .card
        .take_transmitted()
        .iter()
        .map(|t| Frame::decode(&t.bytes).unwrap())
        .collect();
    let mut acked: Vec<u64> = answers
        .iter()
        .filter(|f| matches!(f.homa.body, Body::Ack(_)))
        .map(|f| f.homa.common.sender_id)
        .collect();
    acked.sort();
    let need_acked = (0..4u64).map(|i| 0x400 + 2 * i);
    assert_eq!(acked, need_acked.chain([0x700]).collect::<Vec<u64>>());
    let mut unknown: Vec<u64> = answers
        .iter()
        .filter(|f| matches!(f.homa.body, Body::RpcUnknown))
        .map(|f| f.homa.common.sender_id)
        .collect();
    unknown.sort();
    assert_eq!(
        unknown,
        (0..4u64).map(|i| 0x501 + 2 * i).collect::<Vec<u64>>()
    );
}

#[test]
fn a_need_ack_is_answered_with_an_ack_unless_its_rpc_is_still_in_progress() {
    let mut h = TestHost::new("card_rx_need_ack", [2, 0, 0, 0, 0, 2], 0x0a00_0002, &[99]);
    // An RPC the card does not have (done, or never known): one ACK naming
    // it, as the client knows it, to the server's port, at priority 7.
    h.card.receive(&need_ack(0x1235));
    completions(&mut h, 500);
    let sent = h.card.take_transmitted();
    assert_eq!(sent.len(), 1, "one ACK");
    let ack = Frame::decode(&sent[0].bytes).unwrap();
    assert_eq!(ack.eth.dst.0, [2, 0, 0, 0, 0, 1]);
    assert_eq!(u32::from(ack.ip.dst), 0x0a00_0001);
    assert_eq!(ack.ip.priority(), 7);
    assert_eq!((ack.homa.common.sport, ack.homa.common.dport), (99, 0x8000));
    assert_eq!(ack.homa.common.sender_id, 0x1234);
    let Body::Ack(acks) = &ack.homa.body else {
        panic!("not an ACK: {ack}")
    };
    assert_eq!(
        acks.acks,
        [AckEntry {
            client_id: 0x1234,
            server_port: 0x8000
        }]
    );
    // A response still arriving: its RPC is here, so no ACK yet.
    let len = 3 * PAYLOAD;
    let fill = |i: usize| (i % 7) as u8;
    h.card.receive(&packet(0x2235, len, 0, fill));
    h.card.receive(&need_ack(0x2235));
    completions(&mut h, 500);
    assert!(
        h.card.take_transmitted().is_empty(),
        "no ACK for an RPC in progress"
    );
    // Once the response is all in, the RPC is gone and acked at once (so the
    // server can free it); a NEED_ACK after that is acked again.
    h.card.receive(&packet(0x2235, len, 1, fill));
    h.card.receive(&packet(0x2235, len, 2, fill));
    assert_eq!(completions(&mut h, 2000).len(), 1);
    let acked = |h: &mut TestHost| -> Vec<u64> {
        h.card
            .take_transmitted()
            .iter()
            .map(|t| Frame::decode(&t.bytes).unwrap())
            .filter(|f| matches!(f.homa.body, Body::Ack(_)))
            .map(|f| f.homa.common.sender_id)
            .collect()
    };
    assert_eq!(acked(&mut h), [0x2234], "the ACK of a response complete");
    h.card.receive(&need_ack(0x2235));
    completions(&mut h, 500);
    assert_eq!(acked(&mut h), [0x2234]);
    assert_eq!(counter(&mut h, rx_counters::NEED_ACKS_RECEIVED), 3);
    assert_eq!(counter(&mut h, rx_counters::ACKS_SENT), 3);
}

#[test]
fn a_peer_whose_data_carries_another_cutoff_version_gets_our_cutoffs() {
    use homa_hw::tx::engine::{CUTOFF_VERSION, UNSCHED_CUTOFFS};
    let mut h = TestHost::new("card_rx_cutoffs", [2, 0, 0, 0, 0, 2], 0x0a00_0002, &[99]);
    let fill = |i: usize| (i % 11) as u8;
    let len = 3 * PAYLOAD;
    // A new message whose DATA carries version 0 (HomaModule before it has
    // heard from us): one CUTOFFS back, for the whole message.
    for index in 0..3 {
        h.card
            .receive(&with_cutoff_version(packet(0x3001, len, index, fill), 0));
    }
    assert_eq!(completions(&mut h, 3000).len(), 1);
    // (Each response complete is also acked: only the CUTOFFS count here.)
    let cutoffs_sent = |h: &mut TestHost| -> Vec<homa_hw_sim::card::TxFrame> {
        h.card
            .take_transmitted()
            .into_iter()
            .filter(|t| matches!(Frame::decode(&t.bytes).unwrap().homa.body, Body::Cutoffs(_)))
            .collect()
    };
    let sent = cutoffs_sent(&mut h);
    assert_eq!(sent.len(), 1, "one CUTOFFS");
    let f = Frame::decode(&sent[0].bytes).unwrap();
    assert_eq!(f.eth.dst.0, [2, 0, 0, 0, 0, 1]);
    assert_eq!(u32::from(f.ip.dst), 0x0a00_0001);
    assert_eq!(f.ip.priority(), 7);
    assert_eq!((f.homa.common.sport, f.homa.common.dport), (99, 0x8000));
    assert_eq!(f.homa.common.sender_id, 0x3000);
    assert_eq!(
        f.homa.body,
        Body::Cutoffs(Cutoffs {
            unsched_cutoffs: UNSCHED_CUTOFFS,
            cutoff_version: CUTOFF_VERSION,
        })
    );
    // A message with our version: nothing. Another stale one: another.
    h.card.receive(&packet(0x3003, 100, 0, fill));
    h.card
        .receive(&with_cutoff_version(packet(0x3005, 100, 0, fill), 7));
    assert_eq!(completions(&mut h, 2000).len(), 2);
    let sent = cutoffs_sent(&mut h);
    assert_eq!(sent.len(), 1, "one more CUTOFFS");
    assert_eq!(
        Frame::decode(&sent[0].bytes).unwrap().homa.common.sender_id,
        0x3004
    );
    assert_eq!(counter(&mut h, rx_counters::CUTOFFS_SENT), 2);
    assert_eq!(counter(&mut h, rx_counters::CUTOFFS_DROPPED), 0);
}

#[test]
fn a_finished_rpc_is_acked_in_the_next_data_to_its_server() {
    let mut h = TestHost::new("card_rx_acks", [2, 0, 0, 0, 0, 2], 0x0a00_0002, &[99]);
    let fill = |i: usize| (i % 13) as u8;
    // Two responses from the server 10.0.0.1:32768 (its ids odd: ours are
    // 0x4000 and 0x4002); the second replaces the first as the ack owed (the
    // server asks for the other with NEED_ACK).
    h.card.receive(&packet(0x4001, 2 * PAYLOAD, 0, fill));
    h.card.receive(&packet(0x4001, 2 * PAYLOAD, 1, fill));
    h.card.receive(&packet(0x4003, 10, 0, fill));
    assert_eq!(completions(&mut h, 3000).len(), 2);
    // A request (not a response) completing owes nothing.
    h.card.receive(&packet(0x5000, 10, 0, fill));
    assert_eq!(completions(&mut h, 1000).len(), 1);
    // Our next two requests to that host: the first DATA carries the ack,
    // the rest carry none; a request to another host carries none.
    let send = |rpc_id: u64, peer_ip: u32, length: u32| Send {
        endpoint: 0,
        opcode: homa_hw::host_abi::tx_desc::opcode::SEND_REQUEST,
        rpc_id,
        buffer: TX_BUFFERS,
        length,
        peer_ip,
        peer_port: 7,
        peer_mac: [2, 0, 0, 0, 0, 1],
        cookie: 0,
    };
    h.card.memory_mut().write(TX_BUFFERS, &[5u8; 3000]);
    h.post(&send(0x6000, 0x0a00_0003, 100));
    h.post(&send(0x6002, 0x0a00_0001, 3000));
    h.post(&send(0x6004, 0x0a00_0001, 100));
    h.doorbell(0);
    completions(&mut h, 3000);
    let acks: Vec<(u64, u32, u32, AckEntry)> = h
        .card
        .take_transmitted()
        .iter()
        .map(|t| Frame::decode(&t.bytes).unwrap())
        .filter_map(|f| match &f.homa.body {
            Body::Data(d) => Some((
                f.homa.common.sender_id,
                u32::from(f.ip.dst),
                d.seg_offset,
                d.ack,
            )),
            _ => None,
        })
        .collect();
    let owed = AckEntry {
        client_id: 0x4002,
        server_port: 0x8000,
    };
    // (The send scheduler interleaves the messages: check by host, in the
    // order the frames left.)
    let to =
        |ip: u32| -> Vec<AckEntry> { acks.iter().filter(|a| a.1 == ip).map(|a| a.3).collect() };
    let none = AckEntry::default();
    assert_eq!(acks.len(), 5, "{acks:x?}");
    assert_eq!(to(0x0a00_0003), vec![none]);
    assert_eq!(to(0x0a00_0001), vec![owed, none, none, none], "{acks:x?}");
    assert_eq!(counter(&mut h, rx_counters::ACKS_PIGGYBACKED), 1);
}

#[test]
fn a_silent_sender_is_asked_for_its_first_missing_range_until_it_arrives() {
    use homa_hw::regmap::timer;
    let mut h = TestHost::new("card_rx_resend", [2, 0, 0, 0, 0, 2], 0x0a00_0002, &[99]);
    // A tick of 4 us: about a sweep (1,024 cycles and 16 per busy group).
    h.card.csr_write(timer::BASE + timer::TICK_NS, 4_000);
    h.card.csr_write(timer::BASE + timer::RESEND_TICKS, 0);
    let fill = |i: usize| (i % 17) as u8;
    let len = 4 * PAYLOAD;
    // Packets 0, 2 and 3 of 4: packet 1 is lost.
    for index in [0, 2, 3] {
        h.card.receive(&packet(0x7001, len, index, fill));
    }
    let resends = |h: &mut TestHost, cycles: u64| -> Vec<(u32, u32, u64)> {
        completions(h, cycles);
        h.card
            .take_transmitted()
            .iter()
            .map(|t| Frame::decode(&t.bytes).unwrap())
            .filter_map(|f| match f.homa.body {
                Body::Resend(r) => {
                    assert_eq!(u32::from(f.ip.dst), 0x0a00_0001);
                    assert_eq!((f.homa.common.sport, f.homa.common.dport), (99, 0x8000));
                    Some((r.offset, r.length, f.homa.common.sender_id))
                }
                _ => None,
            })
            .collect()
    };
    // The timer off (resend_ticks 0): silence, however long.
    assert_eq!(resends(&mut h, 100_000), vec![]);
    // On: after 2 sweeps of silence the missing packet is asked for, then
    // every 3 sweeps while it stays missing.
    h.card.csr_write(timer::BASE + timer::RESEND_TICKS, 2);
    h.card.csr_write(timer::BASE + timer::RESEND_INTERVAL, 3);
    let sweeps = |h: &mut TestHost| h.card.csr_read(timer::BASE + timer::SWEEPS);
    let start = sweeps(&mut h);
    let ask = (PAYLOAD as u32, PAYLOAD as u32, 0x7000);
    let mut asked = Vec::new();
    while sweeps(&mut h) < start + 6 {
        asked.extend(resends(&mut h, 1_000));
    }
    assert_eq!(asked, vec![ask, ask], "at sweeps 2 and 5");
    // The packet comes: the message completes, and no more RESENDs.
    h.card.receive(&packet(0x7001, len, 1, fill));
    assert_eq!(completions(&mut h, 2_000).len(), 1);
    let start = sweeps(&mut h);
    while sweeps(&mut h) < start + 4 {
        assert_eq!(resends(&mut h, 1_000), vec![]);
    }
    assert_eq!(h.card.csr_read(timer::BASE + timer::RESENDS_SENT), 2);
}

/// `packet`'s frame with another `incoming` in its DATA header.
fn with_incoming(frame: Vec<u8>, incoming: u32) -> Vec<u8> {
    let mut f = Frame::decode(&frame).unwrap();
    let Body::Data(d) = &mut f.homa.body else {
        unreachable!()
    };
    d.incoming = incoming;
    f.encode().unwrap()
}

/// HomaModule's sender puts its own end in a retransmitted packet's
/// `incoming`: one that fills the gap at the prefix, with ranges beyond it
/// still open, must leave the next gap to be asked for (the kernel-Homa VM
/// test's 1 MB request stalled here until it expired).
#[test]
fn a_retransmission_filling_the_first_gap_leaves_the_next_gap_asked_for() {
    use homa_hw::regmap::timer;
    let mut h = TestHost::new("card_rx_next_gap", [2, 0, 0, 0, 0, 2], 0x0a00_0002, &[99]);
    h.card.csr_write(timer::BASE + timer::TICK_NS, 4_000);
    let fill = |i: usize| (i % 11) as u8;
    let len = 8 * PAYLOAD;
    // Packets 1 and 3 lost; then 1 comes again, retransmitted.
    for index in [0, 2, 4, 5, 6, 7] {
        h.card.receive(&packet(0x7005, len, index, fill));
    }
    let retransmitted = with_incoming(packet(0x7005, len, 1, fill), 2 * PAYLOAD as u32);
    h.card.receive(&retransmitted);
    let mut asked = Vec::new();
    let mut cycles = 0;
    while asked.is_empty() && cycles < 200_000 {
        completions(&mut h, 2_000);
        cycles += 2_000;
        for t in h.card.take_transmitted() {
            if let Body::Resend(r) = Frame::decode(&t.bytes).unwrap().homa.body {
                asked.push((r.offset, r.length));
            }
        }
    }
    assert_eq!(asked, vec![(3 * PAYLOAD as u32, PAYLOAD as u32)]);
    // The packet comes: the message is whole.
    h.card.receive(&packet(0x7005, len, 3, fill));
    assert_eq!(completions(&mut h, 5_000).len(), 1);
}

#[test]
fn while_tick_ns_is_0_the_timers_tick_only_on_the_timer_tick_input() {
    use homa_hw::regmap::timer;
    let mut h = TestHost::new("card_rx_ext_tick", [2, 0, 0, 0, 0, 2], 0x0a00_0002, &[99]);
    h.card.csr_write(timer::BASE + timer::TICK_NS, 0);
    h.card.csr_write(timer::BASE + timer::RESEND_TICKS, 2);
    h.card.csr_write(timer::BASE + timer::RESEND_INTERVAL, 3);
    h.flush();
    let fill = |i: usize| (i % 13) as u8;
    let len = 4 * PAYLOAD;
    for index in [0, 2, 3] {
        h.card.receive(&packet(0x7003, len, index, fill));
    }
    let resends = |h: &mut TestHost, cycles: u64| -> usize {
        completions(h, cycles);
        h.card
            .take_transmitted()
            .iter()
            .filter(|t| matches!(Frame::decode(&t.bytes).unwrap().homa.body, Body::Resend(_)))
            .count()
    };
    let sweeps = |h: &mut TestHost| h.card.csr_read(timer::BASE + timer::SWEEPS);
    // The prescaler stopped: no sweep and no RESEND, however long the silence
    // (20 default ticks of it), once a sweep a last prescaler tick began is
    // over.
    resends(&mut h, 5_000);
    let start = sweeps(&mut h);
    assert_eq!(resends(&mut h, 50_000), 0);
    assert_eq!(sweeps(&mut h), start);
    // Each pulse of the input is one tick: one sweep; the RESEND comes at
    // the 2nd tick and again at the 5th.
    let mut asked = Vec::new();
    for tick in 1..=6 {
        h.card.timer_tick();
        asked.push(resends(&mut h, 3_000));
        assert_eq!(sweeps(&mut h), start + tick);
    }
    assert_eq!(asked, vec![0, 1, 0, 0, 1, 0]);
}

/// Timers for the expiry tests: a 4 us tick (1,000 cycles; a sweep takes
/// a little longer, 1,024 cycles and 16 per busy group, and sets the pace:
/// one tick of silence per sweep), RESENDs off, expiry after `timeout`
/// ticks of silence.
fn expiring(h: &mut TestHost, timeout: u32) {
    use homa_hw::regmap::timer;
    h.card.csr_write(timer::BASE + timer::TICK_NS, 4_000);
    h.card.csr_write(timer::BASE + timer::RESEND_TICKS, 0);
    h.card
        .csr_write(timer::BASE + timer::TIMEOUT_TICKS, timeout);
    h.flush();
}

fn sweeps(h: &mut TestHost) -> u32 {
    use homa_hw::regmap::timer;
    h.card.csr_read(timer::BASE + timer::SWEEPS)
}

/// Runs `n` more sweeps of the resend timer, returning the completions.
fn run_sweeps(h: &mut TestHost, n: u32) -> Vec<[u8; 64]> {
    let start = sweeps(h);
    let mut got = Vec::new();
    // A sweep is 16,384 cycles and a few more per RESEND or expiry.
    for _ in 0..n * 40 {
        if sweeps(h) >= start + n {
            return got;
        }
        got.extend(completions(h, 1_000));
    }
    panic!("{n} sweeps did not finish in {} cycles", n * 40_000);
}

/// What the card holds for inbound messages: RPC slots, bpages handed out,
/// bytes granted but not received.
fn held(h: &mut TestHost) -> (u32, u32, u32) {
    use homa_hw::regmap::grant;
    let free = h.card.csr_read(endpoint::BASE + endpoint::RX_BPAGES_FREE);
    (
        counter(h, rx_counters::RX_MESSAGES_HELD),
        BPAGES - free,
        h.card.csr_read(grant::BASE + grant::TOTAL_INCOMING),
    )
}

#[test]
fn a_flood_of_unfinished_requests_is_reclaimed_by_the_timer_and_a_real_client_gets_through() {
    // The attack of issue 9: the first packet of many 30 KB requests that
    // never finish. Each takes a slot and a bpage; once the pool is empty
    // no request gets in, until timeout_ticks of silence frees them all.
    let mut h = TestHost::new("card_rx_flood", [2, 0, 0, 0, 0, 2], 0x0a00_0002, &[99]);
    expiring(&mut h, 255);
    let fill = |i: usize| (i % 13) as u8;
    let flood = BPAGES as u64 + 40;
    for n in 0..flood {
        h.card.receive(&packet(0x10_0000 + 2 * n, 30_000, 0, fill));
        h.card.run(40);
    }
    assert!(completions(&mut h, 20_000).is_empty());
    assert_eq!(
        held(&mut h),
        (BPAGES, BPAGES, BPAGES * (30_000 - PAYLOAD as u32))
    );
    assert_eq!(counter(&mut h, rx_counters::DROP_NO_BPAGE), 40);
    // A real client's request finds no bpage: dropped.
    let real = |index| packet(0x9_0000, 3 * PAYLOAD, index, |i| (i % 7) as u8);
    h.card.receive(&real(0));
    completions(&mut h, 2_000);
    assert_eq!(counter(&mut h, rx_counters::DROP_NO_BPAGE), 41);

    // Silent for 255 ticks? Not yet: a few sweeps change nothing.
    run_sweeps(&mut h, 3);
    assert_eq!(held(&mut h).0, BPAGES);
    // timeout_ticks 3: every flooded message expires within a sweep or
    // two, silently (the host never saw them), and all it held returns.
    expiring(&mut h, 3);
    assert!(
        run_sweeps(&mut h, 2).is_empty(),
        "expired requests complete nothing"
    );
    assert_eq!(held(&mut h), (0, 0, 0));
    assert_eq!(counter(&mut h, rx_counters::INBOUND_EXPIRED), BPAGES);

    // The client gets through: its request arrives whole.
    expiring(&mut h, 255);
    for index in 0..3 {
        h.card.receive(&real(index));
    }
    let got = completions(&mut h, 5_000);
    assert_eq!(got.len(), 1);
    let want: Vec<u8> = (0..3 * PAYLOAD).map(|i| (i % 7) as u8).collect();
    assert_eq!(h.received(0, &got[0]), want);
    assert_eq!(
        host_abi::get(&got[0], completion::KIND) as u8,
        completion::kind::REQUEST_RECEIVED
    );
    // In service: its slot stays (copies of it are duplicates) until the
    // response is released, or timeout_ticks pass unasked: this host never
    // replies. Its bpage is the host's.
    assert_eq!(held(&mut h), (1, 1, 0));
    h.card.receive(&real(2));
    completions(&mut h, 2_000);
    assert_eq!(counter(&mut h, rx_counters::DUPLICATES), 1);
    expiring(&mut h, 3);
    assert!(run_sweeps(&mut h, 4).is_empty());
    assert_eq!(held(&mut h), (0, 1, 0));
    assert_eq!(counter(&mut h, rx_counters::INBOUND_EXPIRED), BPAGES);
    h.give_back(0, &got[0]);
    assert_eq!(held(&mut h), (0, 0, 0));
    // Every frame counted once: the flood's packets taken and the real
    // request's three; an expiry is not a packet (the fuzzer's finding 6:
    // expiries were counted as DATA taken, and the RX counters stopped
    // adding up).
    assert_eq!(counter(&mut h, rx_counters::DATA_ACCEPTED), BPAGES + 3);
}

#[test]
fn a_response_that_stalls_part_way_fails_with_a_timeout_after_its_resends() {
    use homa_hw::regmap::timer;
    let mut h = TestHost::new("card_rx_stall", [2, 0, 0, 0, 0, 2], 0x0a00_0002, &[99]);
    expiring(&mut h, 4);
    h.card.csr_write(timer::BASE + timer::RESEND_TICKS, 1);
    h.card.csr_write(timer::BASE + timer::RESEND_INTERVAL, 1);
    // Packets 0 and 2 of a 70,000-byte response (two bpages) to our RPC
    // 0x7000; the server then falls silent.
    let len = 70_000;
    for index in [0, 2] {
        h.card.receive(&packet(0x7001, len, index, |i| i as u8));
    }
    completions(&mut h, 2_000);
    assert_eq!(held(&mut h).0, 1);
    assert_eq!(held(&mut h).1, 2);
    let got = run_sweeps(&mut h, 6);
    // RESENDs first (ticks 1, 2, 3), then the expiry: the RPC fails.
    let resends = h
        .card
        .take_transmitted()
        .iter()
        .filter(|t| matches!(Frame::decode(&t.bytes).unwrap().homa.body, Body::Resend(_)))
        .count();
    assert_eq!(resends, 3, "a RESEND each tick until the timeout");
    assert_eq!(got.len(), 1, "{got:x?}");
    let c = &got[0];
    assert_eq!(
        host_abi::get(c, completion::KIND) as u8,
        completion::kind::RESPONSE_RECEIVED
    );
    assert_eq!(
        host_abi::get(c, completion::STATUS) as u8,
        completion::status::TIMEOUT
    );
    assert_eq!(host_abi::get(c, completion::RPC_ID), 0x7000);
    assert_eq!(host_abi::get(c, completion::PEER_IP), 0x0a00_0001);
    assert_eq!(host_abi::get(c, completion::PEER_PORT), 0x8000);
    assert_eq!(held(&mut h), (0, 0, 0));
    assert_eq!(counter(&mut h, rx_counters::INBOUND_EXPIRED), 1);
    // A late packet of it opens a message of its own, which expires in turn.
    h.card.receive(&packet(0x7001, len, 1, |i| i as u8));
    completions(&mut h, 2_000);
    assert_eq!(held(&mut h).0, 1);
    assert_eq!(run_sweeps(&mut h, 6).len(), 1);
    assert_eq!(held(&mut h), (0, 0, 0));
}

#[test]
fn a_slow_sender_within_the_timeout_never_expires() {
    let mut h = TestHost::new("card_rx_slow", [2, 0, 0, 0, 0, 2], 0x0a00_0002, &[99]);
    expiring(&mut h, 3);
    let len = 6 * PAYLOAD;
    let fill = |i: usize| (i % 251) as u8;
    let mut got = Vec::new();
    // One packet every two sweeps: silence never reaches 3 ticks.
    for index in 0..6 {
        h.card.receive(&packet(0x5000, len, index, fill));
        got.extend(run_sweeps(&mut h, 2));
    }
    assert_eq!(got.len(), 1);
    assert_eq!(
        h.received(0, &got[0]),
        (0..len).map(fill).collect::<Vec<_>>()
    );
    assert_eq!(counter(&mut h, rx_counters::INBOUND_EXPIRED), 0);
}

#[test]
fn a_lost_grant_is_asked_for_again_with_a_resend_up_to_what_was_granted() {
    use homa_hw::regmap::timer;
    let mut h = TestHost::new("card_rx_lost_grant", [2, 0, 0, 0, 0, 2], 0x0a00_0002, &[99]);
    h.card.csr_write(timer::BASE + timer::TICK_NS, 4_000);
    h.card.csr_write(timer::BASE + timer::RESEND_TICKS, 2);
    h.card.csr_write(timer::BASE + timer::RESEND_INTERVAL, 3);
    let fill = |i: usize| (i % 13) as u8;
    // A 100,000-byte message: its sender sends the unscheduled 40,000 bytes
    // (its DATA says `incoming` 40,000) and waits for GRANTs.
    let (len, unscheduled) = (100_000usize, 40_000usize);
    for offset in (0..unscheduled).step_by(PAYLOAD) {
        let mut f = Frame::decode(&packet_at(0x7101, len, offset, fill)).unwrap();
        let Body::Data(d) = &mut f.homa.body else {
            unreachable!()
        };
        d.payload
            .truncate(unscheduled.min(offset + PAYLOAD) - offset);
        d.incoming = unscheduled as u32;
        h.card.receive(&f.encode().unwrap());
    }
    // The card grants the rest; every GRANT is lost on the way.
    let sent = |h: &mut TestHost, cycles: u64| -> Vec<Frame> {
        completions(h, cycles);
        h.card
            .take_transmitted()
            .iter()
            .map(|t| Frame::decode(&t.bytes).unwrap())
            .collect()
    };
    let granted = sent(&mut h, 3_000)
        .iter()
        .filter_map(|f| match f.homa.body {
            Body::Grant(g) => Some(g.offset),
            _ => None,
        })
        .max()
        .expect("the card granted");
    assert!(granted as usize > unscheduled);
    // All the sender said it may send is in, but not all the card granted:
    // after the silence, a RESEND for [40,000, granted). The sender takes
    // it as the lost GRANT (HomaModule's rule); without it, it would wait
    // for ever.
    let sweeps = |h: &mut TestHost| h.card.csr_read(timer::BASE + timer::SWEEPS);
    let start = sweeps(&mut h);
    let mut asked = Vec::new();
    while sweeps(&mut h) < start + 4 && asked.is_empty() {
        for f in sent(&mut h, 1_000) {
            if let Body::Resend(r) = f.homa.body {
                asked.push((r.offset, r.length));
            }
        }
    }
    assert_eq!(
        asked,
        vec![(unscheduled as u32, granted - unscheduled as u32)]
    );
}

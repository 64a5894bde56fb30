//! Block testbench of the TX header builder: random packets of every type, as
//! our NIC sends them, built by the Verilator model and by
//! `homa_wire::Frame::encode`; the header bytes and frame length must be equal.

mod support;

use homa_hw::tx::header::BODY_BYTES;
use homa_hw_sim::axis::Beat;
use homa_hw_sim::{Sim, TxHeader};
use homa_wire::layout::{self, common, ipv4, HOMA_OFFSET};
use homa_wire::{Body, Frame, PacketType};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A random packet in the form our NIC sends: `seg.offset` set and equal to
/// `sequence`, no TCP-hijacking fields, DF, TTL 64, protocol 146.
fn nic_frame(rng: &mut ChaCha8Rng) -> Frame {
    let mut f = support::random_frame(rng);
    let t = f.homa.packet_type();
    f.ip.protocol = ipv4::PROTOCOL_HOMA;
    f.ip.identification = rng.gen();
    let c = &mut f.homa.common;
    c.ack = [0; 3];
    c.flags = 0;
    c.window = 0;
    c.checksum = 0;
    c.urgent = 0;
    c.doff = if t == PacketType::Data {
        common::DOFF_DATA
    } else {
        common::DOFF_CONTROL
    };
    c.sequence = 0;
    if let Body::Data(d) = &mut f.homa.body {
        if d.seg_offset == layout::data::SEG_OFFSET_USE_SEQUENCE {
            d.seg_offset = d.message_length - d.payload.len() as u32;
        }
        d.pad = [0; 3];
        c.sequence = d.seg_offset;
    }
    f
}

fn drive(sim: &mut Sim<TxHeader>, f: &Frame, encoded: &[u8]) {
    let mac = |m: [u8; 6]| m.iter().fold(0u64, |a, &b| (a << 8) | b as u64);
    let c = &f.homa.common;
    sim.set_dst_mac(mac(f.eth.dst.0));
    sim.set_src_mac(mac(f.eth.src.0));
    sim.set_src_ip(u32::from(f.ip.src));
    sim.set_dst_ip(u32::from(f.ip.dst));
    sim.set_level(f.ip.priority());
    sim.set_ip_id(f.ip.identification);
    sim.set_packet_type(f.homa.packet_type() as u8);
    sim.set_sport(c.sport);
    sim.set_dport(c.dport);
    sim.set_sender_id(c.sender_id);
    match &f.homa.body {
        Body::Data(d) => {
            sim.set_data_offset(d.seg_offset);
            sim.set_message_length(d.message_length);
            sim.set_incoming(d.incoming);
            sim.set_ack_client_id(d.ack.client_id);
            sim.set_ack_server_port(d.ack.server_port);
            sim.set_cutoff_version(d.cutoff_version);
            sim.set_retransmit(d.retransmit != 0);
            sim.set_payload_len(d.payload.len() as u16);
        }
        Body::Grant(g) => {
            sim.set_ctl_offset(g.offset);
            sim.set_ctl_priority(g.priority);
        }
        Body::Resend(r) => {
            sim.set_ctl_offset(r.offset);
            sim.set_ctl_length(r.length);
            sim.set_ctl_priority(r.priority);
        }
        _ => {}
    }
    // CUTOFFS and ACK: the bytes after the common header, first byte on top,
    // zero past the end of the header.
    let mut body = [0u8; BODY_BYTES];
    if matches!(f.homa.body, Body::Cutoffs(_) | Body::Ack(_)) {
        let start = HOMA_OFFSET + common::HEADER_LEN;
        let n = (encoded.len() - start).min(BODY_BYTES);
        body[..n].copy_from_slice(&encoded[start..start + n]);
    }
    let mut words = [0u32; BODY_BYTES / 4];
    for (i, w) in words.iter_mut().enumerate() {
        // Word 0 holds the least significant bits: the body's last bytes.
        let at = BODY_BYTES - 4 * (i + 1);
        *w = u32::from_be_bytes(body[at..at + 4].try_into().unwrap());
    }
    sim.set_body(&words);
    sim.set_in_valid(true);
}

/// Cycles from the edge that samples a packet's fields to the one after
/// which its header is on the outputs (the block's two stages).
const LATENCY: usize = 2;

#[test]
fn headers_match_the_encoder_on_random_packets() {
    let mut sim: Sim<TxHeader> = Sim::traced_on_failure("tx_header_random");
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut seen = std::collections::BTreeSet::new();
    // What was sampled at each past edge, newest last: the pipeline holds
    // LATENCY packets at once, back to back or with idle cycles between.
    let mut sampled: std::collections::VecDeque<Option<(Frame, Vec<u8>)>> =
        std::collections::VecDeque::new();
    let mut built = 0;
    for cycle in 0..4000 {
        if rng.gen_bool(0.8) {
            let f = nic_frame(&mut rng);
            let encoded = f.encode().unwrap();
            drive(&mut sim, &f, &encoded);
            seen.insert(f.homa.packet_type());
            sampled.push_back(Some((f, encoded)));
        } else {
            // Idle: the fields change but must not be taken.
            let f = nic_frame(&mut rng);
            let encoded = f.encode().unwrap();
            drive(&mut sim, &f, &encoded);
            sim.set_in_valid(false);
            sampled.push_back(None);
        }
        sim.tick();
        if sampled.len() == LATENCY {
            match sampled.pop_front().unwrap() {
                Some((f, encoded)) => {
                    check(&sim, &f, &encoded, cycle);
                    built += 1;
                }
                None => assert!(
                    !sim.out_valid(),
                    "cycle {cycle}: out_valid without a packet"
                ),
            }
        } else {
            assert!(
                !sim.out_valid(),
                "cycle {cycle}: out_valid before the first packet"
            );
        }
    }
    assert!(built > 3000, "{built} headers checked");
    assert_eq!(
        seen.len(),
        PacketType::ALL.len(),
        "every type built: {seen:?}"
    );
}

/// The outputs must be `f`'s header; `n` names the cycle in messages.
fn check(sim: &Sim<TxHeader>, f: &Frame, encoded: &[u8], n: usize) {
    assert!(sim.out_valid(), "cycle {n}: out_valid");
    let header_len = match f.homa.packet_type() {
        PacketType::Data => HOMA_OFFSET + layout::data::HEADER_LEN,
        _ => encoded.len(),
    };
    let b0 = Beat::from_words(&sim.out_beat0(), u64::MAX, false);
    let b1 = Beat::from_words(&sim.out_beat1(), u64::MAX, true);
    let built: Vec<u8> = b0.data.iter().chain(b1.data.iter()).copied().collect();
    assert_eq!(
        sim.out_frame_len() as usize,
        encoded.len(),
        "cycle {n}: frame length of {f}"
    );
    assert_eq!(
        sim.out_header_len() as usize,
        header_len,
        "cycle {n}: header length of {f}"
    );
    if built[..header_len] != encoded[..header_len] {
        let first = (0..header_len).find(|&i| built[i] != encoded[i]).unwrap();
        panic!(
            "cycle {n} ({f}): header byte {first} differs: card {:02x?}, encoder {:02x?}",
            &built[first..header_len.min(first + 8)],
            &encoded[first..header_len.min(first + 8)]
        );
    }
    assert!(
        built[header_len..].iter().all(|&b| b == 0),
        "cycle {n}: lanes past the header are zero"
    );
}

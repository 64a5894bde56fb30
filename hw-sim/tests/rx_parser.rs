//! Block testbench of the RX parser: random frames, valid and broken in every
//! way the decoder knows, streamed through the Verilator model; each verdict
//! and every extracted field is compared with `homa_wire::Frame::decode`.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use homa_hw::rx_parser::RxVerdict;
use homa_hw_sim::axis::{frame_to_beats, Beat};
use homa_hw_sim::{RxParser, Sim};
use homa_wire::layout::{self, eth, ipv4, HOMA_OFFSET};
use homa_wire::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A random Homa frame of any type, valid.
fn random_frame(rng: &mut ChaCha8Rng) -> Frame {
    let t = PacketType::ALL[rng.gen_range(0..PacketType::ALL.len())];
    let body = match t {
        PacketType::Data => {
            let len = if rng.gen_bool(0.3) {
                rng.gen_range(0..64)
            } else {
                rng.gen_range(0..1424)
            };
            let seg_offset = rng.gen_range(0..100_000u32);
            let extra = rng.gen_range(0..3000);
            let mut d = Data {
                message_length: seg_offset + len as u32 + extra,
                incoming: rng.gen(),
                ack: AckEntry {
                    client_id: rng.gen(),
                    server_port: rng.gen(),
                },
                cutoff_version: rng.gen(),
                retransmit: rng.gen_range(0..2),
                pad: [0; 3],
                seg_offset,
                payload: (0..len).map(|_| rng.gen()).collect(),
            };
            if rng.gen_bool(0.3) {
                d.seg_offset = layout::data::SEG_OFFSET_USE_SEQUENCE; // HomaModule's form
            }
            Body::Data(d)
        }
        PacketType::Grant => Body::Grant(Grant {
            offset: rng.gen(),
            priority: rng.gen(),
        }),
        PacketType::Resend => Body::Resend(Resend {
            offset: rng.gen(),
            length: rng.gen(),
            priority: rng.gen(),
        }),
        PacketType::Cutoffs => Body::Cutoffs(Cutoffs {
            unsched_cutoffs: rng.gen(),
            cutoff_version: rng.gen(),
        }),
        PacketType::Ack => Body::Ack(Acks {
            acks: (0..rng.gen_range(0..=5))
                .map(|_| AckEntry {
                    client_id: rng.gen(),
                    server_port: rng.gen(),
                })
                .collect(),
        }),
        PacketType::RpcUnknown => Body::RpcUnknown,
        PacketType::Busy => Body::Busy,
        PacketType::Freeze => Body::Freeze,
        PacketType::NeedAck => Body::NeedAck,
    };
    let mut common = CommonHeader::new(rng.gen(), rng.gen(), rng.gen(), t);
    common.sequence = rng.gen_range(0..100_000);
    if let Body::Data(d) = &body {
        if d.seg_offset == layout::data::SEG_OFFSET_USE_SEQUENCE {
            common.sequence = d.message_length
                - d.payload.len() as u32
                - rng.gen_range(0..=100.min(d.message_length - d.payload.len() as u32));
        }
    }
    Frame {
        eth: EthernetHeader {
            dst: MacAddr(rng.gen()),
            src: MacAddr(rng.gen()),
        },
        ip: Ipv4Header {
            protocol: if rng.gen_bool(0.1) {
                ipv4::PROTOCOL_HOMA_OLD
            } else {
                ipv4::PROTOCOL_HOMA
            },
            ..Ipv4Header::homa(
                Ipv4Addr::from(rng.gen::<u32>()),
                Ipv4Addr::from(rng.gen::<u32>()),
                rng.gen_range(0..8),
            )
        },
        homa: HomaPacket { common, body },
    }
}

/// Rewrites the IPv4 header checksum after a deliberate change.
fn fix_ip_checksum(bytes: &mut [u8]) {
    if bytes.len() < HOMA_OFFSET {
        return;
    }
    let ip = &mut bytes[eth::HEADER_LEN..HOMA_OFFSET];
    layout::put(ip, ipv4::CHECKSUM, 0);
    let sum = ipv4_checksum(ip);
    layout::put(ip, ipv4::CHECKSUM, sum as u64);
}

/// A frame, possibly broken in one of the ways a parser must catch.
fn random_wire_frame(rng: &mut ChaCha8Rng) -> Vec<u8> {
    let mut b = random_frame(rng).encode().unwrap();
    let ip = eth::HEADER_LEN;
    let h = HOMA_OFFSET;
    match rng.gen_range(0..16) {
        0 => b.truncate(rng.gen_range(0..b.len())),
        1 => layout::put(
            &mut b,
            eth::ETHERTYPE,
            [0x0806u64, 0x86dd, 0x8100][rng.gen_range(0..3)],
        ),
        2 => {
            b[ip] = (rng.gen_range(0..16u8) << 4) | 5;
            fix_ip_checksum(&mut b);
        }
        3 => {
            b[ip] = 0x40 | rng.gen_range(0..16u8);
            fix_ip_checksum(&mut b);
        }
        4 => {
            let i = rng.gen_range(ip..h);
            b[i] ^= 1 << rng.gen_range(0..8); // checksum no longer matches
        }
        5 => {
            let total = layout::get(&b[ip..], ipv4::TOTAL_LENGTH) as i64 + rng.gen_range(-80..80);
            layout::put(
                &mut b[ip..],
                ipv4::TOTAL_LENGTH,
                total.clamp(0, 0xffff) as u64,
            );
            fix_ip_checksum(&mut b);
        }
        6 => {
            layout::put(
                &mut b[ip..],
                ipv4::FLAGS_FRAGMENT,
                rng.gen_range(1..0x4000) | 0x4000 * rng.gen_range(0..2),
            );
            fix_ip_checksum(&mut b);
        }
        7 => {
            b[ip + ipv4::PROTOCOL.offset] = [6u8, 17, 1, 147][rng.gen_range(0..4)];
            fix_ip_checksum(&mut b);
        }
        8 => b[h + 11] = rng.gen_range(0..=255),
        9 => {
            // Cut the IP datagram (and the frame) inside the Homa header.
            let cut = rng.gen_range(0..80).min(b.len() - h);
            b.truncate(h + cut);
            layout::put(
                &mut b[ip..],
                ipv4::TOTAL_LENGTH,
                (ipv4::HEADER_LEN + cut) as u64,
            );
            fix_ip_checksum(&mut b);
        }
        10 => {
            if b[h + 11] == PacketType::Ack as u8 {
                layout::put(
                    &mut b[h..],
                    layout::ack::NUM_ACKS,
                    rng.gen_range(6..0x10000),
                );
            }
        }
        11 => {
            if b[h + 11] == PacketType::Data as u8 {
                let ml = layout::get(&b[h..], layout::data::MESSAGE_LENGTH);
                layout::put(
                    &mut b[h..],
                    layout::data::MESSAGE_LENGTH,
                    ml.saturating_sub(rng.gen_range(1..200)),
                );
            }
        }
        12 => b.extend((0..rng.gen_range(1..70)).map(|_| rng.gen::<u8>())), // Ethernet padding
        _ => {}
    }
    b
}

/// What the card should say about `bytes`: the decoder's verdict, except that
/// the card drops IPv4 options where the decoder parses past them.
fn expected_verdict(bytes: &[u8]) -> RxVerdict {
    let ip = eth::HEADER_LEN;
    if bytes.len() >= HOMA_OFFSET
        && layout::get(bytes, eth::ETHERTYPE) == eth::ETHERTYPE_IPV4 as u64
        && bytes[ip] >> 4 == 4
        && bytes[ip] & 0xf > 5
    {
        return RxVerdict::IpOptions;
    }
    match Frame::decode(bytes) {
        Ok(_) => RxVerdict::Accept,
        Err(e) => RxVerdict::of_decode_error(&e),
    }
}

/// One `m_meta_*` record as the model produced it.
#[derive(Debug)]
struct Meta {
    reason: u8,
    frame_len: u16,
    packet_type: u8,
    src_mac: u64,
    src_ip: u32,
    dst_ip: u32,
    priority: u8,
    sport: u16,
    dport: u16,
    sender_id: u64,
    message_length: u32,
    payload_offset: u32,
    payload_len: u16,
    offset: u32,
    length: u32,
    ctl_priority: u8,
}

fn read_meta(sim: &Sim<RxParser>) -> Meta {
    Meta {
        reason: sim.m_meta_reason(),
        frame_len: sim.m_meta_frame_len(),
        packet_type: sim.m_meta_type(),
        src_mac: sim.m_meta_src_mac(),
        src_ip: sim.m_meta_src_ip(),
        dst_ip: sim.m_meta_dst_ip(),
        priority: sim.m_meta_priority(),
        sport: sim.m_meta_sport(),
        dport: sim.m_meta_dport(),
        sender_id: sim.m_meta_sender_id(),
        message_length: sim.m_meta_message_length(),
        payload_offset: sim.m_meta_payload_offset(),
        payload_len: sim.m_meta_payload_len(),
        offset: sim.m_meta_offset(),
        length: sim.m_meta_length(),
        ctl_priority: sim.m_meta_ctl_priority(),
    }
}

/// Compares an accepted frame's fields with the decoder's view of it.
fn check_fields(m: &Meta, bytes: &[u8]) -> Result<(), String> {
    let f = Frame::decode(bytes).unwrap();
    let c = &f.homa.common;
    let mac = f.eth.src.0.iter().fold(0u64, |a, &b| (a << 8) | b as u64);
    let mut diffs = Vec::new();
    let mut check = |name: &str, got: u64, want: u64| {
        if got != want {
            diffs.push(format!("{name}: card {got:#x}, decoder {want:#x}"));
        }
    };
    check("type", m.packet_type as u64, f.homa.packet_type() as u64);
    check("src_mac", m.src_mac, mac);
    check("src_ip", m.src_ip as u64, u32::from(f.ip.src) as u64);
    check("dst_ip", m.dst_ip as u64, u32::from(f.ip.dst) as u64);
    check("priority", m.priority as u64, f.ip.priority() as u64);
    check("sport", m.sport as u64, c.sport as u64);
    check("dport", m.dport as u64, c.dport as u64);
    check("sender_id", m.sender_id, c.sender_id);
    match &f.homa.body {
        Body::Data(d) => {
            check(
                "message_length",
                m.message_length as u64,
                d.message_length as u64,
            );
            check(
                "payload_offset",
                m.payload_offset as u64,
                d.payload_offset(c) as u64,
            );
            check("payload_len", m.payload_len as u64, d.payload.len() as u64);
        }
        Body::Grant(g) => {
            check("offset", m.offset as u64, g.offset as u64);
            check("ctl_priority", m.ctl_priority as u64, g.priority as u64);
        }
        Body::Resend(r) => {
            check("offset", m.offset as u64, r.offset as u64);
            check("length", m.length as u64, r.length as u64);
            check("ctl_priority", m.ctl_priority as u64, r.priority as u64);
        }
        _ => {}
    }
    if diffs.is_empty() {
        Ok(())
    } else {
        Err(diffs.join("; "))
    }
}

/// Streams `frames` through the parser, with random idle cycles between beats
/// when `gaps`, and returns each verdict record with the cycle it appeared.
fn run(
    sim: &mut Sim<RxParser>,
    frames: &[Vec<u8>],
    rng: &mut ChaCha8Rng,
    gaps: bool,
) -> Vec<(u64, Meta)> {
    let mut out = Vec::new();
    let mut step = |sim: &mut Sim<RxParser>, beat: Option<&Beat>| {
        match beat {
            Some(b) => {
                sim.set_s_axis_tdata(&b.words());
                sim.set_s_axis_tkeep(b.keep);
                sim.set_s_axis_tlast(b.last);
                sim.set_s_axis_tvalid(true);
            }
            None => {
                sim.set_s_axis_tvalid(false);
                sim.set_s_axis_tdata(&[0xdead_beef; 16]);
            }
        }
        sim.tick();
        assert!(sim.s_axis_tready());
        if sim.m_meta_valid() {
            out.push((sim.cycle(), read_meta(sim)));
        }
    };
    for frame in frames {
        for beat in frame_to_beats(frame, 0xa5) {
            while gaps && rng.gen_bool(0.2) {
                step(sim, None);
            }
            step(sim, Some(&beat));
        }
    }
    for _ in 0..4 {
        step(sim, None);
    }
    out
}

#[test]
fn verdicts_and_fields_match_the_decoder_on_random_frames() {
    let mut coverage: BTreeMap<RxVerdict, usize> = BTreeMap::new();
    for seed in 0..3u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut sim: Sim<RxParser> = Sim::traced_on_failure(&format!("rx_parser_seed{seed}"));
        sim.set_reset(true);
        sim.tick();
        sim.set_reset(false);
        // Empty frames are not a thing on the wire; at least one byte.
        let frames: Vec<Vec<u8>> = (0..1500)
            .map(|_| random_wire_frame(&mut rng))
            .filter(|f| !f.is_empty())
            .collect();
        let metas = run(&mut sim, &frames, &mut rng, seed % 2 == 1);
        assert_eq!(
            metas.len(),
            frames.len(),
            "seed {seed}: one verdict per frame"
        );
        for (i, ((cycle, m), bytes)) in metas.iter().zip(&frames).enumerate() {
            let want = expected_verdict(bytes);
            let got = RxVerdict::from_code(m.reason);
            let context = || {
                format!(
                    "seed {seed}, frame {i} ({} bytes), verdict at cycle {cycle}: {:02x?}",
                    bytes.len(),
                    &bytes[..bytes.len().min(96)]
                )
            };
            assert_eq!(
                got,
                Some(want),
                "verdict differs; decoder says {:?}; {}",
                Frame::decode(bytes).err(),
                context()
            );
            assert_eq!(
                m.frame_len as usize,
                bytes.len(),
                "frame length; {}",
                context()
            );
            if want == RxVerdict::Accept {
                if let Err(diff) = check_fields(m, bytes) {
                    panic!("fields differ: {diff}; {}", context());
                }
            }
            *coverage.entry(want).or_default() += 1;
        }
    }
    // The stimulus must reach every verdict, or the comparison proves little.
    for v in RxVerdict::ALL {
        assert!(
            coverage.get(&v).copied().unwrap_or(0) > 0,
            "no frame got verdict {v:?}: {coverage:?}"
        );
    }
}

#[test]
fn back_to_back_minimum_frames_each_get_a_verdict_two_cycles_later() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut sim: Sim<RxParser> = Sim::traced_on_failure("rx_parser_back_to_back");
    sim.set_reset(true);
    sim.tick();
    sim.set_reset(false);
    let start = sim.cycle();
    // Single-beat frames (control packets are 62 bytes), one per cycle.
    let frames: Vec<Vec<u8>> = (0..50)
        .map(|_| loop {
            let f = random_frame(&mut rng).encode().unwrap();
            if f.len() <= 64 {
                break f;
            }
        })
        .collect();
    let metas = run(&mut sim, &frames, &mut rng, false);
    assert_eq!(metas.len(), frames.len());
    for (i, (cycle, m)) in metas.iter().enumerate() {
        // Frame i's beat is clocked in by edge start+i+1; the checks run the
        // cycle after, and the verdict is visible after edge start+i+2.
        assert_eq!(*cycle, start + i as u64 + 2, "frame {i}");
        assert_eq!(m.reason, 0, "frame {i}");
    }
}

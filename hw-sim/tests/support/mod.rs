//! Stimulus shared by the testbenches: random Homa frames, valid and broken,
//! and what the card should make of them.
#![allow(dead_code)] // each test binary uses a different part

use std::net::Ipv4Addr;

use homa_hw::rx::parser::RxVerdict;
use homa_wire::layout::{self, eth, ipv4, HOMA_OFFSET};
use homa_wire::*;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// A random Homa frame of any type, valid.
pub fn random_frame(rng: &mut ChaCha8Rng) -> Frame {
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
pub fn fix_ip_checksum(bytes: &mut [u8]) {
    if bytes.len() < HOMA_OFFSET {
        return;
    }
    let ip = &mut bytes[eth::HEADER_LEN..HOMA_OFFSET];
    layout::put(ip, ipv4::CHECKSUM, 0);
    let sum = ipv4_checksum(ip);
    layout::put(ip, ipv4::CHECKSUM, sum as u64);
}

/// A frame, possibly broken in one of the ways a parser must catch.
pub fn random_wire_frame(rng: &mut ChaCha8Rng) -> Vec<u8> {
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
pub fn expected_verdict(bytes: &[u8]) -> RxVerdict {
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

pub mod host;
pub mod rusthdl;

/// Payload bytes in a full DATA packet at MTU 1500.
pub const PAYLOAD: usize = 1424;

/// The DATA packet to the test host's card (10.0.0.2, port 99) of a
/// message of `len` bytes from 10.0.0.1:32768, RPC `id`, covering
/// [offset, offset + 1424) (or to the end).
pub fn packet_at(id: u64, len: usize, offset: usize, fill: impl Fn(usize) -> u8) -> Vec<u8> {
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

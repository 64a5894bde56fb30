//! Codec tests. The byte vectors below were worked out by hand from WIRE.md,
//! field by field, not produced by the encoder.

use std::net::Ipv4Addr;

use proptest::prelude::*;

use crate::layout::{self, HOMA_OFFSET};
use crate::*;

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

const CLIENT: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
const SERVER: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);
const CLIENT_MAC: MacAddr = MacAddr([0x02, 0, 0, 0, 0, 0x01]);
const SERVER_MAC: MacAddr = MacAddr([0x02, 0, 0, 0, 0, 0x02]);

fn frame(level: u8, common: CommonHeader, body: Body) -> Frame {
    Frame {
        eth: EthernetHeader {
            dst: SERVER_MAC,
            src: CLIENT_MAC,
        },
        ip: Ipv4Header::homa(CLIENT, SERVER, level),
        homa: HomaPacket { common, body },
    }
}

fn control(packet_type: PacketType, body: Body) -> Frame {
    frame(7, CommonHeader::new(0x8000, 99, 2, packet_type), body)
}

/// Common header of the hand vectors: sport 32768, dport 99, sequence 0,
/// ack 0, type `tt`, doff 0x50, flags 0, window 0, checksum 0, urgent 0, id 2.
fn common_hex(tt: &str) -> String {
    format!("8000 0063 00000000 000000 {tt} 50 00 0000 0000 0000 0000000000000002")
}

/// Checks a frame against hand-written Homa bytes both ways: encoding gives the
/// bytes, decoding the bytes gives the frame.
fn check_homa_bytes(f: &Frame, homa_hex: &str) {
    let want = hex(homa_hex);
    let bytes = f.encode().unwrap();
    assert_eq!(
        &bytes[HOMA_OFFSET..],
        &want[..],
        "encoded Homa bytes of {f}"
    );
    assert_eq!(bytes.len(), f.len());
    assert_eq!(Frame::decode(&bytes).unwrap(), *f);
}

#[test]
fn grant_whole_frame_by_hand() {
    let f = control(
        PacketType::Grant,
        Body::Grant(Grant {
            offset: 50_000,
            priority: 3,
        }),
    );
    // Ethernet: dst, src, ethertype IPv4.
    // IPv4: 45, tos 0xe0 (prio 7), total 20+33 = 0x0035, id 0, DF, ttl 64,
    // proto 146 (0x92), checksum: 45e0+0035+0000+4000+4092+0a00+0001+0a00+0002
    // = 0xdaaa, complemented 0x2555.
    // Homa: common header, offset 50000 = 0x0000c350, priority 3.
    let want = hex(&format!(
        "020000000002 020000000001 0800
         45 e0 0035 0000 4000 40 92 2555 0a000001 0a000002
         {} 0000c350 03",
        common_hex("11")
    ));
    assert_eq!(f.encode().unwrap(), want);
    assert_eq!(Frame::decode(&want).unwrap(), f);
}

#[test]
fn data_as_our_nic_sends_it() {
    let mut common = CommonHeader::new(0x8000, 99, 2, PacketType::Data);
    common.sequence = 1424;
    let f = frame(
        6,
        common,
        Body::Data(Data {
            message_length: 40_000,
            incoming: 40_000,
            ack: AckEntry {
                client_id: 6,
                server_port: 99,
            },
            cutoff_version: 1,
            retransmit: 0,
            pad: [0; 3],
            seg_offset: 1424,
            payload: b"hello".to_vec(),
        }),
    );
    // sequence 1424 = 0x590, doff 0xd0; message_length 40000 = 0x9c40, incoming
    // the same, ack {6, 99}, cutoff_version 1, retransmit 0, pad, seg.offset 1424.
    check_homa_bytes(
        &f,
        "8000 0063 00000590 000000 10 d0 00 0000 0000 0000 0000000000000002
         00009c40 00009c40 0000000000000006 0063 0001 00 000000 00000590
         68656c6c6f",
    );
}

#[test]
fn data_as_homa_module_sends_it() {
    // HomaModule: seg.offset -1 with the offset in `sequence`, doff 0xe0,
    // flags SYN|RST, urgent 0xb97d, and a TCP-style checksum (not verified).
    let bytes_homa = hex(
        "8000 0063 00000590 000000 10 e0 06 0000 1234 b97d 0000000000000002
         00009c40 00002710 0000000000000000 0000 0000 00 000000 ffffffff
         abcd",
    );
    let mut f = frame(
        5,
        CommonHeader::new(0x8000, 99, 2, PacketType::Data),
        Body::Busy,
    );
    let mut bytes = f.encode().unwrap();
    bytes.truncate(HOMA_OFFSET);
    bytes.extend_from_slice(&bytes_homa);
    // Patch the IPv4 length and checksum for the new payload.
    let total = (bytes.len() - 14) as u64;
    layout::put(&mut bytes[14..], layout::ipv4::TOTAL_LENGTH, total);
    layout::put(&mut bytes[14..], layout::ipv4::CHECKSUM, 0);
    let sum = ipv4_checksum(&bytes[14..34]);
    layout::put(&mut bytes[14..], layout::ipv4::CHECKSUM, sum as u64);

    let decoded = Frame::decode(&bytes).unwrap();
    let Body::Data(d) = &decoded.homa.body else {
        panic!("not DATA: {decoded}")
    };
    assert_eq!(d.payload_offset(&decoded.homa.common), 1424);
    assert_eq!(d.incoming, 10_000);
    assert_eq!(d.payload, vec![0xab, 0xcd]);
    assert_eq!(decoded.homa.common.flags, layout::common::FLAGS_HIJACK);
    assert_eq!(decoded.homa.common.urgent, layout::common::URGENT_HIJACK);
    assert_eq!(decoded.ip.priority(), 5);
    // And it re-encodes to the same bytes.
    f = decoded;
    assert_eq!(f.encode().unwrap(), bytes);
}

#[test]
fn resend_by_hand() {
    let f = control(
        PacketType::Resend,
        Body::Resend(Resend {
            offset: 0,
            length: u32::MAX,
            priority: 7,
        }),
    );
    check_homa_bytes(&f, &format!("{} 00000000 ffffffff 07", common_hex("12")));
}

#[test]
fn header_only_types_by_hand() {
    for (t, body, tt) in [
        (PacketType::RpcUnknown, Body::RpcUnknown, "13"),
        (PacketType::Busy, Body::Busy, "14"),
        (PacketType::Freeze, Body::Freeze, "16"),
        (PacketType::NeedAck, Body::NeedAck, "17"),
    ] {
        check_homa_bytes(&control(t, body), &common_hex(tt));
    }
}

#[test]
fn cutoffs_by_hand() {
    // HomaModule's defaults: [0,0,0,0,1000000,15000,2800,200], version 1.
    let f = control(
        PacketType::Cutoffs,
        Body::Cutoffs(Cutoffs {
            unsched_cutoffs: [0, 0, 0, 0, 1_000_000, 15_000, 2800, 200],
            cutoff_version: 1,
        }),
    );
    check_homa_bytes(
        &f,
        &format!(
            "{} 00000000 00000000 00000000 00000000 000f4240 00003a98 00000af0 000000c8 0001",
            common_hex("15")
        ),
    );
}

#[test]
fn ack_by_hand() {
    let f = control(
        PacketType::Ack,
        Body::Ack(Acks {
            acks: vec![
                AckEntry {
                    client_id: 2,
                    server_port: 99,
                },
                AckEntry {
                    client_id: 0x1_0000_0004,
                    server_port: 0x7fff,
                },
            ],
        }),
    );
    // num_acks 2, two entries, three empty entries: 80 bytes in all.
    check_homa_bytes(
        &f,
        &format!(
            "{} 0002 0000000000000002 0063 0000000100000004 7fff {}",
            common_hex("18"),
            "00".repeat(30)
        ),
    );
}

#[test]
fn ethernet_padding_after_the_datagram_is_ignored() {
    let f = control(PacketType::Busy, Body::Busy);
    let mut bytes = f.encode().unwrap();
    bytes.extend_from_slice(&[0u8; 4]);
    assert_eq!(Frame::decode(&bytes).unwrap(), f);
}

#[test]
fn protocol_253_from_old_builds_is_accepted() {
    let mut f = control(PacketType::Busy, Body::Busy);
    f.ip.protocol = layout::ipv4::PROTOCOL_HOMA_OLD;
    assert_eq!(Frame::decode(&f.encode().unwrap()).unwrap(), f);
}

#[test]
fn display_is_one_tcpdump_like_line() {
    let f = control(
        PacketType::Grant,
        Body::Grant(Grant {
            offset: 50_000,
            priority: 3,
        }),
    );
    assert_eq!(
        f.to_string(),
        "10.0.0.1.32768 > 10.0.0.2.99: GRANT id 2 prio 7 offset 50000 grant_prio 3"
    );
}

// ---- malformed frames: each is rejected with the error that names it ----

fn good() -> Vec<u8> {
    control(
        PacketType::Grant,
        Body::Grant(Grant {
            offset: 1,
            priority: 1,
        }),
    )
    .encode()
    .unwrap()
}

/// Rewrites an IPv4 field and fixes the header checksum, so the error under
/// test is the only thing wrong.
fn with_ip_field(field: layout::Field, value: u64) -> Vec<u8> {
    let mut b = good();
    layout::put(&mut b[14..], field, value);
    layout::put(&mut b[14..], layout::ipv4::CHECKSUM, 0);
    let sum = ipv4_checksum(&b[14..34]);
    layout::put(&mut b[14..], layout::ipv4::CHECKSUM, sum as u64);
    b
}

#[test]
fn truncated_frames_name_the_layer() {
    let b = good();
    assert_eq!(
        Frame::decode(&b[..10]),
        Err(DecodeError::Truncated {
            what: "Ethernet header",
            need: 14,
            have: 10
        })
    );
    assert_eq!(
        Frame::decode(&b[..20]),
        Err(DecodeError::Truncated {
            what: "IPv4 header",
            need: 20,
            have: 6
        })
    );
    assert_eq!(
        Frame::decode(&b[..40]),
        Err(DecodeError::IpTotalLength {
            total_length: 53,
            available: 26
        })
    );
}

#[test]
fn every_type_shorter_than_its_header_is_rejected() {
    for t in PacketType::ALL {
        let need = layout::header_len(t);
        let mut b = good();
        b.truncate(HOMA_OFFSET);
        b.extend_from_slice(&hex(&common_hex(&format!("{:02x}", t as u8))));
        b.resize(HOMA_OFFSET + need - 1, 0);
        let total = (b.len() - 14) as u64;
        let mut b2 = b.clone();
        layout::put(&mut b2[14..], layout::ipv4::TOTAL_LENGTH, total);
        layout::put(&mut b2[14..], layout::ipv4::CHECKSUM, 0);
        let sum = ipv4_checksum(&b2[14..34]);
        layout::put(&mut b2[14..], layout::ipv4::CHECKSUM, sum as u64);
        let want = if need == layout::common::HEADER_LEN {
            DecodeError::Truncated {
                what: "Homa common header",
                need,
                have: need - 1,
            }
        } else {
            DecodeError::HomaTruncated {
                packet_type: t,
                need,
                have: need - 1,
            }
        };
        assert_eq!(Frame::decode(&b2), Err(want), "{}", t.name());
    }
}

#[test]
fn non_ipv4_frames_are_rejected() {
    let mut b = good();
    layout::put(&mut b, layout::eth::ETHERTYPE, 0x0806);
    assert_eq!(
        Frame::decode(&b),
        Err(DecodeError::NotIpv4 { ethertype: 0x0806 })
    );
}

#[test]
fn bad_ip_headers_are_rejected() {
    assert_eq!(
        Frame::decode(&with_ip_field(layout::ipv4::VERSION_IHL, 0x65)),
        Err(DecodeError::IpVersion(6))
    );
    assert_eq!(
        Frame::decode(&with_ip_field(layout::ipv4::VERSION_IHL, 0x44)),
        Err(DecodeError::IpHeaderLength(16))
    );
    assert_eq!(
        Frame::decode(&with_ip_field(layout::ipv4::PROTOCOL, 6)),
        Err(DecodeError::NotHoma { protocol: 6 })
    );
    assert_eq!(
        Frame::decode(&with_ip_field(layout::ipv4::FLAGS_FRAGMENT, 0x2000)),
        Err(DecodeError::Fragment)
    );
    assert_eq!(
        Frame::decode(&with_ip_field(layout::ipv4::FLAGS_FRAGMENT, 0x0001)),
        Err(DecodeError::Fragment)
    );
    let mut b = good();
    b[14 + 8] ^= 1; // TTL changed, checksum not updated
    assert!(matches!(
        Frame::decode(&b),
        Err(DecodeError::IpChecksum { found: 0x2555, .. })
    ));
}

#[test]
fn unknown_type_is_rejected() {
    let mut b = good();
    b[HOMA_OFFSET + 11] = 0x19;
    assert_eq!(Frame::decode(&b), Err(DecodeError::UnknownType(0x19)));
}

#[test]
fn ack_with_too_many_acks_is_rejected() {
    let f = control(
        PacketType::Ack,
        Body::Ack(Acks {
            acks: vec![AckEntry::default(); 5],
        }),
    );
    let mut b = f.encode().unwrap();
    b[HOMA_OFFSET + 29] = 6;
    assert_eq!(Frame::decode(&b), Err(DecodeError::TooManyAcks(6)));
    let f6 = control(
        PacketType::Ack,
        Body::Ack(Acks {
            acks: vec![AckEntry::default(); 6],
        }),
    );
    assert_eq!(f6.encode(), Err(EncodeError::TooManyAcks(6)));
}

#[test]
fn data_past_the_message_end_is_rejected() {
    let mut common = CommonHeader::new(1, 2, 4, PacketType::Data);
    common.sequence = 0;
    let f = frame(
        0,
        common,
        Body::Data(Data {
            message_length: 4,
            incoming: 4,
            ack: AckEntry::default(),
            cutoff_version: 0,
            retransmit: 0,
            pad: [0; 3],
            seg_offset: 2,
            payload: vec![1, 2, 3],
        }),
    );
    assert_eq!(
        Frame::decode(&f.encode().unwrap()),
        Err(DecodeError::PayloadBeyondMessage {
            offset: 2,
            payload: 3,
            message_length: 4
        })
    );
}

// ---- property tests ----

fn arb_ack_entry() -> impl Strategy<Value = AckEntry> {
    (any::<u64>(), any::<u16>()).prop_map(|(client_id, server_port)| AckEntry {
        client_id,
        server_port,
    })
}

fn arb_body() -> impl Strategy<Value = Body> {
    prop_oneof![
        (
            any::<u32>(),
            arb_ack_entry(),
            any::<u16>(),
            any::<u8>(),
            any::<[u8; 3]>(),
            0u32..100_000,
            proptest::collection::vec(any::<u8>(), 0..1500)
        )
            .prop_map(
                |(incoming, ack, cutoff_version, retransmit, pad, seg_offset, payload)| {
                    Body::Data(Data {
                        message_length: seg_offset + payload.len() as u32,
                        incoming,
                        ack,
                        cutoff_version,
                        retransmit,
                        pad,
                        seg_offset,
                        payload,
                    })
                }
            ),
        (any::<u32>(), any::<u8>())
            .prop_map(|(offset, priority)| Body::Grant(Grant { offset, priority })),
        (any::<u32>(), any::<u32>(), any::<u8>()).prop_map(|(offset, length, priority)| {
            Body::Resend(Resend {
                offset,
                length,
                priority,
            })
        }),
        Just(Body::RpcUnknown),
        Just(Body::Busy),
        (any::<[u32; 8]>(), any::<u16>()).prop_map(|(unsched_cutoffs, cutoff_version)| {
            Body::Cutoffs(Cutoffs {
                unsched_cutoffs,
                cutoff_version,
            })
        }),
        Just(Body::Freeze),
        Just(Body::NeedAck),
        proptest::collection::vec(arb_ack_entry(), 0..=5).prop_map(|acks| Body::Ack(Acks { acks })),
    ]
}

fn arb_frame() -> impl Strategy<Value = Frame> {
    (
        any::<[u8; 6]>(),
        any::<[u8; 6]>(),
        any::<u8>(),
        any::<u16>(),
        any::<bool>(),
        any::<u8>(),
        any::<u32>(),
        any::<u32>(),
        (
            any::<u16>(),
            any::<u16>(),
            any::<u32>(),
            any::<[u8; 3]>(),
            any::<u8>(),
            any::<u8>(),
        ),
        (any::<u16>(), any::<u16>(), any::<u16>(), any::<u64>()),
        arb_body(),
    )
        .prop_map(
            |(dst, src, tos, identification, df, ttl, saddr, daddr, c1, c2, body)| Frame {
                eth: EthernetHeader {
                    dst: MacAddr(dst),
                    src: MacAddr(src),
                },
                ip: Ipv4Header {
                    tos,
                    identification,
                    flags_fragment: if df {
                        layout::ipv4::FLAG_DONT_FRAGMENT
                    } else {
                        0
                    },
                    ttl,
                    protocol: layout::ipv4::PROTOCOL_HOMA,
                    src: Ipv4Addr::from(saddr),
                    dst: Ipv4Addr::from(daddr),
                },
                homa: HomaPacket {
                    common: CommonHeader {
                        sport: c1.0,
                        dport: c1.1,
                        // A DATA packet with seg.offset -1 would take its offset from
                        // here; the strategy never makes seg.offset -1, so any value works.
                        sequence: c1.2,
                        ack: c1.3,
                        doff: c1.4,
                        flags: c1.5,
                        window: c2.0,
                        checksum: c2.1,
                        urgent: c2.2,
                        sender_id: c2.3,
                    },
                    body,
                },
            },
        )
}

proptest! {
    #[test]
    fn encode_then_decode_is_identity(f in arb_frame()) {
        let bytes = f.encode().unwrap();
        prop_assert_eq!(bytes.len(), f.len());
        prop_assert_eq!(Frame::decode(&bytes).unwrap(), f);
    }

    #[test]
    fn decode_then_encode_gives_the_same_bytes(f in arb_frame()) {
        let bytes = f.encode().unwrap();
        prop_assert_eq!(Frame::decode(&bytes).unwrap().encode().unwrap(), bytes);
    }

    #[test]
    fn any_truncation_of_a_valid_frame_is_an_error(f in arb_frame(), cut in 0usize..2000) {
        let bytes = f.encode().unwrap();
        let cut = cut % bytes.len();
        prop_assert!(Frame::decode(&bytes[..cut]).is_err());
    }

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = Frame::decode(&bytes);
    }
}

#[test]
fn pcap_round_trip() {
    let frames: Vec<Vec<u8>> = PacketType::ALL
        .iter()
        .map(|&t| {
            let body = match t {
                PacketType::Grant => Body::Grant(Grant {
                    offset: 10,
                    priority: 2,
                }),
                PacketType::Ack => Body::Ack(Acks::default()),
                _ => Body::Busy,
            };
            control(t, body).encode().unwrap()
        })
        .collect();
    let mut w = pcap::FrameWriter::new(Vec::new()).unwrap();
    for (i, f) in frames.iter().enumerate() {
        w.write(std::time::Duration::from_nanos(4 * i as u64 + 1), f)
            .unwrap();
    }
    let file = w.into_inner();
    let back: Vec<pcap::CapturedFrame> = pcap::FrameReader::new(&file[..])
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(back.len(), frames.len());
    for (i, (c, f)) in back.iter().zip(&frames).enumerate() {
        assert_eq!(&c.bytes, f);
        assert_eq!(
            c.timestamp,
            std::time::Duration::from_nanos(4 * i as u64 + 1),
            "ns kept"
        );
    }
}

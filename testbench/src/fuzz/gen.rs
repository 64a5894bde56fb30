//! The fuzzer's frames: random bytes, well-formed Homa frames of every type
//! with random fields, the same mutated (bits flipped, cut, padded, fields
//! set to edge values, checksum fixed or not), and forgeries aimed at the
//! live RPCs. Frame `i` of seed `s` is drawn from its own generator (seeded
//! by `s` and `i`), so it does not depend on the frames before it; only a
//! forgery depends on the live RPCs at the time it is made.
//!
//! DESIGN NOTES
//! ------------
//! - What a forgery may do: Homa has no authentication, so a packet with a
//!   live RPC's addresses, id and length carrying bytes the card has not
//!   received yet is indistinguishable from the real one, and the card must
//!   take it (first come wins). Forgeries here are the detectable kinds: a
//!   copy of a range the card already has (with other bytes), a range that
//!   overlaps one it has, another message length, a range past the message,
//!   and every control packet naming the RPC. None of them may change a byte
//!   of the message.
//! - Resources: a forged DATA packet that opens an RPC and does not finish
//!   its message holds an RPC slot and its bpages forever (the card has no
//!   timers yet, issue 9). The generator predicts which frames do (with the
//!   software decoder) and keeps them under a budget, beyond which it sends
//!   them to a closed port instead; otherwise a long run would fill the
//!   table and starve the real RPCs, a known limit and not a finding.

use std::net::Ipv4Addr;

use homa_wire::layout::{self, common, data, eth, ipv4};
use homa_wire::{
    AckEntry, Acks, Body, CommonHeader, Cutoffs, Data, EthernetHeader, Frame, Grant, HomaPacket,
    Ipv4Header, MacAddr, PacketType, Resend,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Longest frame made: a jumbo frame with its Ethernet header (the UDP
/// wire's limit).
pub const MAX_FRAME_BYTES: usize = 9014;

/// Who is who on the fuzzed card's wire.
#[derive(Clone, Debug)]
pub struct Addresses {
    pub card_mac: [u8; 6],
    pub card_ip: Ipv4Addr,
    /// The real client's.
    pub client_mac: [u8; 6],
    pub client_ip: Ipv4Addr,
    pub client_port: u16,
    /// The card's endpoint serving the real RPCs.
    pub live_port: u16,
    /// Another open endpoint of the card, which forged RPCs may clutter.
    pub spare_port: u16,
}

/// A live RPC as the fuzzer sees it: what its request has shown the card.
#[derive(Clone, Debug)]
pub struct LiveRpc {
    /// The client's id (the request's `sender_id`).
    pub client_id: u64,
    pub length: u32,
    /// Byte ranges of the request the card has been handed, [start, end).
    pub queued: Vec<(u32, u32)>,
    /// Every byte of the request has been handed to the card (it may have
    /// completed and been forgotten: DATA for it would open a new RPC).
    pub all_queued: bool,
}

/// How a frame was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    RandomBytes,
    Valid,
    BitFlips,
    Cut,
    Padded,
    EdgeField,
    /// A forgery naming a live RPC.
    Forged,
}

impl Class {
    pub fn name(self) -> &'static str {
        match self {
            Class::RandomBytes => "random bytes",
            Class::Valid => "valid",
            Class::BitFlips => "bits flipped",
            Class::Cut => "cut",
            Class::Padded => "padded",
            Class::EdgeField => "edge field",
            Class::Forged => "forged at a live RPC",
        }
    }
}

/// One frame to inject.
#[derive(Clone, Debug)]
pub struct Fuzzed {
    pub bytes: Vec<u8>,
    pub class: Class,
    /// The live RPC a forgery names (its client id).
    pub target: Option<u64>,
}

/// Budget of forged RPCs left open (see module notes).
#[derive(Clone, Debug)]
pub struct Budget {
    /// RPCs that may still be left open, on the whole card.
    pub open_rpcs: u32,
    /// Bpages that may still be held, on the live and the spare endpoint.
    pub live_bpages: u32,
    pub spare_bpages: u32,
}

/// Ports no endpoint of the fuzzed card serves.
const CLOSED_PORT: u16 = 7;

pub struct Generator {
    seed: u64,
    addr: Addresses,
    pub budget: Budget,
}

impl Generator {
    pub fn new(seed: u64, addr: Addresses, budget: Budget) -> Generator {
        Generator { seed, addr, budget }
    }

    /// Frame `index`; `live` are the live RPCs (a forgery names one).
    pub fn frame(&mut self, index: u64, live: &[LiveRpc]) -> Fuzzed {
        let mut rng = ChaCha8Rng::seed_from_u64(
            self.seed ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17),
        );
        let roll = rng.gen_range(0..100);
        let mut f = if roll < 8 {
            Fuzzed {
                bytes: random_bytes(&mut rng),
                class: Class::RandomBytes,
                target: None,
            }
        } else if roll < 35 && !live.is_empty() {
            let rpc = &live[rng.gen_range(0..live.len())];
            match self.forge(&mut rng, rpc) {
                Some(bytes) => Fuzzed {
                    bytes,
                    class: Class::Forged,
                    target: Some(rpc.client_id),
                },
                None => self.well_formed(&mut rng),
            }
        } else {
            self.well_formed(&mut rng)
        };
        self.enforce_budget(&mut f);
        f
    }

    /// A well-formed frame, mutated or not.
    fn well_formed(&self, rng: &mut ChaCha8Rng) -> Fuzzed {
        let frame = self.random_frame(rng);
        let mut bytes = frame.encode().expect("made to encode");
        let class = match rng.gen_range(0..10) {
            0..=2 => Class::Valid,
            3 | 4 => {
                let flips = rng.gen_range(1..=4);
                for _ in 0..flips {
                    let i = rng.gen_range(0..bytes.len());
                    bytes[i] ^= 1 << rng.gen_range(0..8);
                }
                Class::BitFlips
            }
            5 => {
                let len = rng.gen_range(1..bytes.len().max(2));
                bytes.truncate(len);
                if rng.gen_bool(0.5) && len >= layout::HOMA_OFFSET {
                    set_total_length(&mut bytes, (len - eth::HEADER_LEN) as u16);
                }
                Class::Cut
            }
            6 => {
                let pad = match rng.gen_range(0..4) {
                    0 => rng.gen_range(1..64),
                    1 => rng.gen_range(64..512),
                    2 => rng.gen_range(512..2048),
                    _ => rng.gen_range(1..MAX_FRAME_BYTES),
                };
                let room = MAX_FRAME_BYTES.saturating_sub(bytes.len());
                let fill: u8 = rng.gen();
                for _ in 0..pad.min(room) {
                    bytes.push(if rng.gen_bool(0.5) { fill } else { rng.gen() });
                }
                Class::Padded
            }
            _ => {
                edge_field(rng, &mut bytes);
                Class::EdgeField
            }
        };
        if class != Class::Valid && rng.gen_bool(0.6) {
            fix_ip_checksum(&mut bytes);
        }
        Fuzzed {
            bytes,
            class,
            target: None,
        }
    }

    fn mac_to_card(&self, rng: &mut ChaCha8Rng) -> [u8; 6] {
        match rng.gen_range(0..10) {
            0 => [0xff; 6],
            1 => rng.gen(),
            _ => self.addr.card_mac,
        }
    }

    fn random_frame(&self, rng: &mut ChaCha8Rng) -> Frame {
        let a = &self.addr;
        let src_ip = match rng.gen_range(0..4) {
            0 => a.client_ip,
            1 => Ipv4Addr::from(rng.gen::<u32>()),
            _ => Ipv4Addr::new(10, 1, rng.gen_range(0..4), rng.gen_range(1..8)),
        };
        let dst_ip = if rng.gen_bool(0.9) {
            a.card_ip
        } else {
            Ipv4Addr::from(rng.gen::<u32>())
        };
        let dport = match rng.gen_range(0..10) {
            0..=3 => a.live_port,
            4..=6 => a.spare_port,
            7 => CLOSED_PORT,
            _ => rng.gen(),
        };
        let sport = if rng.gen_bool(0.3) {
            a.client_port
        } else {
            rng.gen()
        };
        let sender_id = match rng.gen_range(0..4) {
            // From the real client's address, ids far from its own (small,
            // even) ones, a bit flip away from none of them: such a frame
            // would otherwise be a forgery (module notes).
            _ if src_ip == a.client_ip && sport == a.client_port => rng.gen::<u64>() | 3 << 62,
            0 => rng.gen_range(0..16),
            _ => rng.gen(),
        };
        let ty = PacketType::ALL[rng.gen_range(0..PacketType::ALL.len())];
        let ty = if rng.gen_bool(0.4) {
            PacketType::Data
        } else {
            ty
        };
        let body = random_body(rng, ty);
        let mut ip = Ipv4Header::homa(src_ip, dst_ip, rng.gen_range(0..8));
        if rng.gen_bool(0.1) {
            ip.protocol = layout::ipv4::PROTOCOL_HOMA_OLD;
        }
        ip.identification = rng.gen();
        let mut common = CommonHeader::new(sport, dport, sender_id, ty);
        if rng.gen_bool(0.1) {
            common.sequence = rng.gen();
        }
        Frame {
            eth: EthernetHeader {
                dst: MacAddr(self.mac_to_card(rng)),
                src: MacAddr(if rng.gen_bool(0.3) {
                    a.client_mac
                } else {
                    rng.gen()
                }),
            },
            ip,
            homa: HomaPacket { common, body },
        }
    }

    /// A forgery naming `rpc` (module notes), or None if none fits.
    fn forge(&self, rng: &mut ChaCha8Rng, rpc: &LiveRpc) -> Option<Vec<u8>> {
        let a = &self.addr;
        let header = |ty: PacketType, body: Body| Frame {
            eth: EthernetHeader {
                dst: MacAddr(a.card_mac),
                src: MacAddr(a.client_mac),
            },
            ip: Ipv4Header::homa(a.client_ip, a.card_ip, 7),
            homa: HomaPacket {
                common: CommonHeader::new(a.client_port, a.live_port, rpc.client_id, ty),
                body,
            },
        };
        let data = |offset: u32, len: u32, message_length: u32, rng: &mut ChaCha8Rng| {
            let payload: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
            header(
                PacketType::Data,
                Body::Data(Data {
                    message_length,
                    incoming: message_length,
                    ack: AckEntry::default(),
                    cutoff_version: 0,
                    retransmit: rng.gen_range(0..2),
                    pad: [0; 3],
                    seg_offset: offset,
                    payload,
                }),
            )
        };
        let kind = rng.gen_range(0..10);
        let frame = if kind < 6 {
            // DATA only while the request is still coming in.
            if rpc.all_queued || rpc.queued.is_empty() {
                return None;
            }
            let &(s, e) = &rpc.queued[rng.gen_range(0..rpc.queued.len())];
            match kind {
                // A copy (or part) of a range the card has, other bytes.
                0 | 1 => {
                    let off = rng.gen_range(s..e);
                    let len = rng.gen_range(1..=(e - off).min(1424));
                    data(off, len, rpc.length, rng)
                }
                // Overlapping a range it has, running past it.
                2 => {
                    if e >= rpc.length {
                        return None;
                    }
                    let off = rng.gen_range(s..e);
                    let len = (e - off + rng.gen_range(1..=64))
                        .min(rpc.length - off)
                        .min(1424);
                    data(off, len, rpc.length, rng)
                }
                // Another message length.
                3 => {
                    let other = loop {
                        let l = match rng.gen_range(0..3) {
                            0 => rng.gen_range(1..=1_000_000),
                            1 => rpc.length + rng.gen_range(1..100),
                            _ => rng.gen_range(1..=rpc.length.max(2)),
                        };
                        if l != rpc.length {
                            break l;
                        }
                    };
                    let off = rng.gen_range(0..other);
                    let len = rng.gen_range(1..=(other - off).min(1424));
                    data(off, len, other, rng)
                }
                // Past the message's end (the header says so, or the
                // payload runs past it).
                _ => {
                    let off = rpc.length + rng.gen_range(0..3000);
                    data(off, rng.gen_range(1..200), rpc.length, rng)
                }
            }
        } else {
            let ty = [
                PacketType::Grant,
                PacketType::Resend,
                PacketType::RpcUnknown,
                PacketType::Busy,
                PacketType::Cutoffs,
                PacketType::Freeze,
                PacketType::NeedAck,
                PacketType::Ack,
            ][rng.gen_range(0..8)];
            let mut body = random_body(rng, ty);
            if let Body::Ack(acks) = &mut body {
                for e in &mut acks.acks {
                    e.client_id = rpc.client_id;
                    e.server_port = a.live_port;
                }
            }
            header(ty, body)
        };
        Some(frame.encode().expect("made to encode"))
    }

    /// Keeps the RPCs and bpages forged frames may leave open under the
    /// budget (module notes): a frame that would open one past it goes to a
    /// closed port.
    fn enforce_budget(&mut self, f: &mut Fuzzed) {
        let Ok(frame) = Frame::decode(&f.bytes) else {
            return;
        };
        let Body::Data(d) = &frame.homa.body else {
            return;
        };
        let port = frame.homa.common.dport;
        if port != self.addr.live_port && port != self.addr.spare_port {
            return;
        }
        let len = d.message_length;
        let offset = d.payload_offset(&frame.homa.common);
        let end = offset as u64 + d.payload.len() as u64;
        if len == 0 || len > 1_000_000 || d.payload.is_empty() || end > len as u64 {
            return;
        }
        if f.class == Class::Forged {
            // Forgeries name an RPC the card has: they open nothing, unless
            // the card finished it (the generator does not forge DATA then).
            return;
        }
        let complete = offset == 0 && end == len as u64;
        if complete {
            return;
        }
        let pages = len.div_ceil(65_536);
        let pool = if port == self.addr.live_port {
            &mut self.budget.live_bpages
        } else {
            &mut self.budget.spare_bpages
        };
        if self.budget.open_rpcs >= 1 && *pool >= pages {
            self.budget.open_rpcs -= 1;
            *pool -= pages;
            return;
        }
        let homa = eth::HEADER_LEN + (f.bytes[eth::HEADER_LEN] & 0xf) as usize * 4;
        layout::put(&mut f.bytes[homa..], common::DPORT, CLOSED_PORT as u64);
    }
}

fn random_bytes(rng: &mut ChaCha8Rng) -> Vec<u8> {
    let len = random_len(rng);
    let mut bytes: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
    // Often an IPv4 ethertype and version, so the bytes get further in.
    if len >= 15 && rng.gen_bool(0.5) {
        bytes[12] = 0x08;
        bytes[13] = 0x00;
        bytes[14] = 0x45;
    }
    bytes
}

fn random_len(rng: &mut ChaCha8Rng) -> usize {
    match rng.gen_range(0..20) {
        0..=9 => rng.gen_range(1..=128),
        10..=18 => rng.gen_range(1..=1514),
        _ => rng.gen_range(1..=MAX_FRAME_BYTES),
    }
}

/// A body of type `ty` with random fields, lengths of every size.
fn random_body(rng: &mut ChaCha8Rng, ty: PacketType) -> Body {
    match ty {
        PacketType::Data => {
            let payload_len = match rng.gen_range(0..10) {
                0 => 0,
                1..=5 => rng.gen_range(1..=64),
                6..=8 => rng.gen_range(1..=1424),
                _ => rng.gen_range(1..=MAX_FRAME_BYTES - layout::HOMA_OFFSET - data::HEADER_LEN),
            };
            let message_length = match rng.gen_range(0..6) {
                0 => payload_len as u32,
                1 => rng.gen_range(payload_len as u32..=payload_len as u32 + 3000),
                2 => rng.gen_range(1..=1_000_000),
                3 => rng.gen(),
                _ => rng.gen_range(payload_len as u32..=200_000.max(payload_len as u32)),
            };
            let offset = match rng.gen_range(0..4) {
                0 => 0,
                1 => message_length.saturating_sub(payload_len as u32),
                2 => rng.gen_range(0..=message_length),
                _ => rng.gen(),
            };
            Body::Data(Data {
                message_length,
                incoming: rng.gen(),
                ack: AckEntry {
                    client_id: rng.gen(),
                    server_port: rng.gen(),
                },
                cutoff_version: rng.gen(),
                retransmit: rng.gen(),
                pad: rng.gen(),
                seg_offset: if rng.gen_bool(0.1) {
                    data::SEG_OFFSET_USE_SEQUENCE
                } else {
                    offset
                },
                payload: (0..payload_len).map(|_| rng.gen()).collect(),
            })
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
        PacketType::RpcUnknown => Body::RpcUnknown,
        PacketType::Busy => Body::Busy,
        PacketType::Freeze => Body::Freeze,
        PacketType::NeedAck => Body::NeedAck,
        PacketType::Cutoffs => Body::Cutoffs(Cutoffs {
            unsched_cutoffs: rng.gen(),
            cutoff_version: rng.gen(),
        }),
        PacketType::Ack => Body::Ack(Acks {
            acks: (0..rng.gen_range(0..=layout::ack::MAX_ACKS))
                .map(|_| AckEntry {
                    client_id: rng.gen(),
                    server_port: rng.gen(),
                })
                .collect(),
        }),
    }
}

/// Sets a header field to an edge value.
fn edge_field(rng: &mut ChaCha8Rng, bytes: &mut [u8]) {
    let ip = eth::HEADER_LEN;
    let h = layout::HOMA_OFFSET;
    let edge32 = |rng: &mut ChaCha8Rng| -> u64 {
        [
            0u64,
            1,
            1423,
            1424,
            65_535,
            65_536,
            999_999,
            1_000_000,
            1_000_001,
            u32::MAX as u64,
        ][rng.gen_range(0..10)]
    };
    let mut put = |at: usize, field: layout::Field, v: u64| {
        if at + field.end() <= bytes.len() {
            layout::put(&mut bytes[at..], field, v);
        }
    };
    match rng.gen_range(0..10) {
        0 => put(
            ip,
            ipv4::VERSION_IHL,
            [0x44, 0x46, 0x4f, 0x40, 0x65][rng.gen_range(0..5)],
        ),
        1 => put(
            ip,
            ipv4::TOTAL_LENGTH,
            [0, 19, 20, 47, 48, 90, 1500, 9000, 65_535][rng.gen_range(0..9)],
        ),
        2 => put(
            ip,
            ipv4::FLAGS_FRAGMENT,
            [0x2000, 0x0001, 0x4000, 0x3fff][rng.gen_range(0..4)],
        ),
        3 => put(
            ip,
            ipv4::PROTOCOL,
            [6, 17, 145, 146, 147, 253, 254][rng.gen_range(0..7)],
        ),
        4 => put(h, common::TYPE, rng.gen_range(0x0f..=0x19)),
        5 => put(h, data::MESSAGE_LENGTH, edge32(rng)),
        6 => put(h, data::SEG_OFFSET, edge32(rng)),
        7 => put(h, common::SEQUENCE, edge32(rng)),
        8 => put(h, common::DOFF, rng.gen()),
        _ => put(h, layout::ack::NUM_ACKS, rng.gen_range(0..=8)),
    }
}

fn set_total_length(bytes: &mut [u8], v: u16) {
    layout::put(&mut bytes[eth::HEADER_LEN..], ipv4::TOTAL_LENGTH, v as u64);
}

/// Recomputes the IPv4 header checksum (of a 20-byte header), if the frame
/// holds one.
pub fn fix_ip_checksum(bytes: &mut [u8]) {
    let ip = eth::HEADER_LEN..eth::HEADER_LEN + ipv4::HEADER_LEN;
    if bytes.len() < ip.end {
        return;
    }
    layout::put(&mut bytes[ip.clone()], ipv4::CHECKSUM, 0);
    let sum = homa_wire::ipv4_checksum(&bytes[ip.clone()]);
    layout::put(&mut bytes[ip], ipv4::CHECKSUM, sum as u64);
}

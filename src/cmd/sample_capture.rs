//! `homa-nic sample-capture --out FILE.pcap`: one RPC's worth of Homa traffic
//! with every packet type in it, built with the wire codec. Useful to check a
//! Wireshark setup, and as a capture homa-nic wrote itself for `decode`.

use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use homa_wire::pcap::FrameWriter;
use homa_wire::{
    AckEntry, Acks, Body, CommonHeader, Cutoffs, Data, EthernetHeader, Frame, Grant, HomaPacket,
    Ipv4Header, MacAddr, PacketType, Resend,
};

#[derive(clap::Args)]
pub struct SampleCaptureArgs {
    /// Capture file to write.
    #[arg(long, default_value = "out/sample.pcap")]
    pub out: PathBuf,
}

/// One side of the exchange.
struct Host {
    mac: MacAddr,
    ip: Ipv4Addr,
    port: u16,
}

/// Payload bytes per DATA packet at MTU 1500 (HomaModule's packet size).
const PAYLOAD_PER_PACKET: u32 = 1424;
/// Simulated time between frames in the capture, in 4 ns cycles.
const CYCLES_BETWEEN_FRAMES: u64 = 125;

pub fn run(args: &SampleCaptureArgs) -> anyhow::Result<()> {
    let client = Host {
        mac: MacAddr([2, 0, 0, 0, 0, 1]),
        ip: Ipv4Addr::new(10, 0, 0, 1),
        port: 0x8000,
    };
    let server = Host {
        mac: MacAddr([2, 0, 0, 0, 0, 2]),
        ip: Ipv4Addr::new(10, 0, 0, 2),
        port: 99,
    };
    let client_id = 2u64; // the server calls this RPC 3
    let message_length = 3 * PAYLOAD_PER_PACKET;

    let packet = |from: &Host, to: &Host, id: u64, level: u8, t: PacketType, body: Body| Frame {
        eth: EthernetHeader {
            dst: to.mac,
            src: from.mac,
        },
        ip: Ipv4Header::homa(from.ip, to.ip, level),
        homa: HomaPacket {
            common: CommonHeader::new(from.port, to.port, id, t),
            body,
        },
    };
    let data = |offset: u32, incoming: u32, retransmit: u8| {
        let mut f = packet(
            &client,
            &server,
            client_id,
            6,
            PacketType::Data,
            Body::Data(Data {
                message_length,
                incoming,
                ack: AckEntry::default(),
                cutoff_version: 1,
                retransmit,
                pad: [0; 3],
                seg_offset: offset,
                payload: (0..PAYLOAD_PER_PACKET)
                    .map(|i| (offset + i) as u8)
                    .collect(),
            }),
        );
        f.homa.common.sequence = offset;
        f
    };

    let frames = vec![
        data(0, PAYLOAD_PER_PACKET, 0),
        packet(
            &server,
            &client,
            client_id ^ 1,
            7,
            PacketType::Cutoffs,
            Body::Cutoffs(Cutoffs {
                unsched_cutoffs: [0, 0, 0, 0, 1_000_000, 15_000, 2800, 200],
                cutoff_version: 1,
            }),
        ),
        packet(
            &server,
            &client,
            client_id ^ 1,
            7,
            PacketType::Grant,
            Body::Grant(Grant {
                offset: message_length,
                priority: 3,
            }),
        ),
        data(PAYLOAD_PER_PACKET, message_length, 0),
        packet(
            &server,
            &client,
            client_id ^ 1,
            7,
            PacketType::Resend,
            Body::Resend(Resend {
                offset: 2 * PAYLOAD_PER_PACKET,
                length: PAYLOAD_PER_PACKET,
                priority: 3,
            }),
        ),
        packet(&client, &server, client_id, 7, PacketType::Busy, Body::Busy),
        data(2 * PAYLOAD_PER_PACKET, message_length, 1),
        packet(
            &server,
            &client,
            client_id ^ 1,
            7,
            PacketType::NeedAck,
            Body::NeedAck,
        ),
        packet(
            &client,
            &server,
            client_id,
            7,
            PacketType::Ack,
            Body::Ack(Acks {
                acks: vec![AckEntry {
                    client_id,
                    server_port: server.port,
                }],
            }),
        ),
        packet(
            &server,
            &client,
            5,
            7,
            PacketType::RpcUnknown,
            Body::RpcUnknown,
        ),
        packet(&client, &server, 0, 7, PacketType::Freeze, Body::Freeze),
    ];

    if let Some(dir) = args.out.parent() {
        std::fs::create_dir_all(dir).ok();
    }
    let mut writer = FrameWriter::create(&args.out)?;
    for (i, frame) in frames.iter().enumerate() {
        let t = Duration::from_nanos(4 * CYCLES_BETWEEN_FRAMES * i as u64);
        writer
            .write(t, &frame.encode()?)
            .with_context(|| format!("writing {}", args.out.display()))?;
    }
    use std::io::Write;
    writer
        .into_inner()
        .flush()
        .with_context(|| format!("writing {}", args.out.display()))?;
    println!(
        "{}: {} frames, one RPC with every Homa packet type",
        args.out.display(),
        frames.len()
    );
    Ok(())
}

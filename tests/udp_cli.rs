//! `homa-nic server` and `homa-nic rpc` as two processes, each a simulated
//! card on a UDP wire over 127.0.0.1 (QEMU's `-netdev dgram` format): RPCs
//! complete, responses are checked, both captures decode, both processes
//! exit. Bounded: either process still running after `DEADLINE` is killed
//! and the test fails.

use std::io::Read;
use std::net::UdpSocket;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use homa_wire::arp::ArpFrame;
use homa_wire::pcap::FrameReader;
use homa_wire::{Body, Frame, MacAddr, PacketType};

const DEADLINE: Duration = Duration::from_secs(90);
const SIZES: [usize; 4] = [1, 100, 1424, 20_000];

/// Two free UDP ports on 127.0.0.1 (bound to port 0, then released).
fn free_ports() -> (u16, u16) {
    let a = UdpSocket::bind("127.0.0.1:0").unwrap();
    let b = UdpSocket::bind("127.0.0.1:0").unwrap();
    (
        a.local_addr().unwrap().port(),
        b.local_addr().unwrap().port(),
    )
}

fn spawn(args: &[String]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_homa-nic"))
        .args(args)
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for `child` until `deadline`; kills it if it is still running.
/// Returns (exited successfully, stdout, stderr).
fn finish(mut child: Child, deadline: Instant) -> (bool, String, String) {
    let ok = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.success();
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            break false;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (mut out, mut err) = (String::new(), String::new());
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (ok, out, err)
}

/// An ICMP echo request from the peer to the card (10.0.0.1 -> 10.0.0.2),
/// with a valid IPv4 header: valid IP, not Homa.
fn icmp_echo() -> Vec<u8> {
    let mut f = vec![
        2, 0, 0, 0, 0, 2, 0x52, 0x54, 0, 0x12, 0x34, 0x56, 0x08, 0x00,
    ];
    let mut ip = vec![
        0x45, 0, 0, 28, 0, 1, 0, 0, 64, 1, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
    ];
    let checksum = homa_wire::ipv4_checksum(&ip);
    ip[10..12].copy_from_slice(&checksum.to_be_bytes());
    f.extend(ip);
    f.extend([8, 0, 0xf7, 0xfe, 0, 1, 0, 0]);
    f.resize(60, 0);
    f
}

fn s(v: &str) -> String {
    v.to_string()
}

#[test]
fn a_server_and_a_client_process_complete_rpcs_over_udp() {
    let deadline = Instant::now() + DEADLINE;
    let dir = tempfile::tempdir().unwrap();
    let (server_pcap, client_pcap) = (
        dir.path().join("server.pcap"),
        dir.path().join("client.pcap"),
    );
    let (server_port, client_port) = free_ports();
    let sizes: Vec<String> = SIZES.iter().map(|s| s.to_string()).collect();

    let server = spawn(&[
        s("server"),
        s("--wire"),
        format!("udp:127.0.0.1:{server_port}:127.0.0.1:{client_port}"),
        s("--mac"),
        s("02:00:00:00:00:02"),
        s("--ip"),
        s("10.0.0.2"),
        s("--port"),
        s("99"),
        s("--max-rpcs"),
        SIZES.len().to_string(),
        s("--json"),
        s("--pcap"),
        server_pcap.to_str().unwrap().to_string(),
    ]);
    // Before the client, a plain socket at the client's address plays a
    // Linux host: it asks for the card's MAC by ARP and sends two frames that
    // are not Homa (IPv6, ICMP), which the card must count and survive. Retried: the
    // server process may still be building its card.
    let peer = UdpSocket::bind(("127.0.0.1", client_port)).unwrap();
    peer.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let request = ArpFrame::request(
        MacAddr([0x52, 0x54, 0, 0x12, 0x34, 0x56]),
        "10.0.0.1".parse().unwrap(),
        "10.0.0.2".parse().unwrap(),
    )
    .encode();
    let mut ipv6 = request.clone();
    (ipv6[12], ipv6[13]) = (0x86, 0xdd);
    let mut arp_requests = 0;
    let reply = loop {
        assert!(Instant::now() < deadline, "no ARP reply from the server");
        peer.send_to(&request, ("127.0.0.1", server_port)).unwrap();
        arp_requests += 1;
        let mut buf = [0u8; 2048];
        match peer.recv(&mut buf) {
            Ok(n) => break ArpFrame::decode(&buf[..n]).expect("an ARP reply"),
            // Not listening yet (ICMP port unreachable): try again shortly.
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    assert_eq!(reply.sender_mac, MacAddr([2, 0, 0, 0, 0, 2]));
    assert_eq!(
        reply.sender_ip,
        "10.0.0.2".parse::<std::net::Ipv4Addr>().unwrap()
    );
    peer.send_to(&ipv6, ("127.0.0.1", server_port)).unwrap();
    peer.send_to(&icmp_echo(), ("127.0.0.1", server_port))
        .unwrap();
    drop(peer);
    let client = spawn(&[
        s("rpc"),
        s("--wire"),
        format!("udp:127.0.0.1:{client_port}:127.0.0.1:{server_port}"),
        s("--mac"),
        s("02:00:00:00:00:01"),
        s("--ip"),
        s("10.0.0.1"),
        s("--neighbor"),
        s("10.0.0.2=02:00:00:00:00:02"),
        s("--to"),
        s("10.0.0.2:99"),
        s("--size"),
        sizes.join(","),
        s("--timeout-s"),
        s("30"),
        s("--json"),
        s("--pcap"),
        client_pcap.to_str().unwrap().to_string(),
    ]);
    let (client_ok, client_out, client_err) = finish(client, deadline);
    let (server_ok, server_out, server_err) = finish(server, deadline);
    assert!(
        client_ok,
        "client failed:\n{client_out}\n{client_err}\nserver:\n{server_out}\n{server_err}"
    );
    assert!(server_ok, "server failed:\n{server_out}\n{server_err}");

    let report: serde_json::Value = serde_json::from_str(&client_out).expect("one JSON object");
    assert_eq!(report["rpcs"], SIZES.len(), "{report}");
    assert_eq!(report["mismatches"], 0, "{report}");
    let results = report["results"].as_array().unwrap();
    for (r, &size) in results.iter().zip(&SIZES) {
        assert_eq!(r["bytes"], size, "{report}");
        assert_eq!(r["ok"], true, "{report}");
        assert!(r["cycles"].as_u64().unwrap() > 0, "{report}");
    }
    let served: serde_json::Value = serde_json::from_str(&server_out).expect("one JSON object");
    assert_eq!(served["rpcs"], SIZES.len(), "{served}");

    // Both captures hold every frame of both directions, and each decodes.
    // One CUTOFFS each way: each card's first DATA to the other carried
    // cutoff version 0 (nothing heard yet); the frames_sent below count the
    // server's.
    const CUTOFFS: usize = 2;
    // DATA packets carry at most 1424 bytes: ceil(size / 1424) per message.
    let packets: usize = SIZES.iter().map(|s| s.div_ceil(1424)).sum::<usize>() * 2;
    // The server's also holds the ARP requests that reached its card (the
    // first may have come before it listened), a reply to each (a request
    // retried after 200 ms, the card still starting, is answered twice: the
    // test binaries run side by side under load), and the IPv6 and ICMP
    // frames.
    for (pcap, extra) in [(&server_pcap, true), (&client_pcap, false)] {
        let all: Vec<Vec<u8>> = FrameReader::open(pcap)
            .unwrap()
            .map(|f| f.unwrap().bytes)
            .collect();
        let arp = all.iter().filter(|f| ArpFrame::decode(f).is_ok()).count();
        let frames: Vec<Frame> = all
            .iter()
            .filter(|f| ArpFrame::decode(f).is_err() && f[12..14] != [0x86, 0xdd] && f[23] != 1)
            .map(|f| Frame::decode(f).expect("every Homa frame decodes"))
            .filter(|f| f.homa.packet_type() == PacketType::Data)
            .collect();
        assert_eq!(frames.len(), packets, "{}", pcap.display());
        // On top: the client's ACK of each response, and any NEED_ACK the
        // server sent before one came (the two clocks decide how many).
        let control = all.len() - packets - CUTOFFS - if extra { arp + 2 } else { 0 };
        assert!(control >= SIZES.len(), "{control} ACK and NEED_ACK frames");
        if extra {
            assert!(
                (2..=2 * arp_requests).contains(&arp),
                "{arp} ARP frames for {arp_requests} requests sent"
            );
        }
        let payload: usize = frames
            .iter()
            .map(|f| match &f.homa.body {
                Body::Data(d) => d.payload.len(),
                _ => 0,
            })
            .sum();
        assert_eq!(payload, 2 * SIZES.iter().sum::<usize>());
    }
    // Its responses, one CUTOFFS, one ARP reply; NEED_ACKs if an ACK came late.
    assert!(served["frames_sent"].as_u64().unwrap() >= packets as u64 / 2 + 1 + 1);
    assert!(served["frames_received"].as_u64().unwrap() >= packets as u64 / 2 + 2 + 1);
    // The card's parser took the requests and counted the ARP and IPv6
    // frames as not IPv4 (its ARP responder answered the ARP), the ICMP one
    // as not Homa.
    // (Plus the client's ACKs: at least one per RPC, counted above.)
    assert!(
        served["rx_verdicts"]["Accept"].as_u64().unwrap()
            >= (packets + CUTOFFS / 2 + SIZES.len()) as u64 - (packets / 2) as u64,
        "{served}"
    );
    assert!(
        served["rx_verdicts"]["NotIpv4"].as_u64().unwrap() >= 2,
        "{served}"
    );
    assert_eq!(
        served["rx_verdicts"]["NotHoma"].as_u64(),
        Some(1),
        "{served}"
    );
}

#[test]
fn a_bad_wire_or_neighbor_is_refused_with_the_expected_form() {
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_homa-nic"))
            .args(args)
            .output()
            .unwrap();
        (out.status.success(), String::from_utf8(out.stderr).unwrap())
    };
    let common = [
        "--mac",
        "02:00:00:00:00:01",
        "--ip",
        "10.0.0.1",
        "--to",
        "10.0.0.2:99",
    ];
    let (ok, err) = run(&[&["rpc", "--wire", "udp:127.0.0.1:5000"][..], &common].concat());
    assert!(!ok);
    assert!(err.contains("udp:LHOST:LPORT:RHOST:RPORT"), "{err}");
    let (ok, err) = run(&[
        &["rpc", "--wire", "tcp:127.0.0.1:1:127.0.0.1:2"][..],
        &common,
    ]
    .concat());
    assert!(!ok);
    assert!(err.contains("only UDP wires"), "{err}");
    let (ok, err) = run(&[
        &[
            "rpc",
            "--wire",
            "udp:127.0.0.1:0:127.0.0.1:9",
            "--neighbor",
            "10.0.0.2",
        ][..],
        &common,
    ]
    .concat());
    assert!(!ok);
    assert!(err.contains("IP=MAC"), "{err}");
    // No MAC for the server: refused before any card is built.
    let (ok, err) = run(&[
        &["rpc", "--wire", "udp:127.0.0.1:0:127.0.0.1:9"][..],
        &common,
    ]
    .concat());
    assert!(!ok);
    assert!(err.contains("--neighbor 10.0.0.2=MAC"), "{err}");
}

#[test]
fn a_client_with_no_server_times_out_and_fails() {
    let (port, nobody) = free_ports();
    let start = Instant::now();
    let (ok, out, err) = finish(
        spawn(&[
            s("rpc"),
            s("--wire"),
            format!("udp:127.0.0.1:{port}:127.0.0.1:{nobody}"),
            s("--mac"),
            s("02:00:00:00:00:01"),
            s("--ip"),
            s("10.0.0.1"),
            s("--neighbor"),
            s("10.0.0.2=02:00:00:00:00:02"),
            s("--to"),
            s("10.0.0.2:99"),
            s("--timeout-s"),
            s("0.5"),
        ]),
        Instant::now() + DEADLINE,
    );
    assert!(!ok, "{out}");
    assert!(err.contains("no response in 0.5 s"), "{err}");
    assert!(start.elapsed() < Duration::from_secs(30));
}

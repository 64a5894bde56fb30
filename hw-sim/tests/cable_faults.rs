//! Faults on the cables (`cable::CableFaults`): each happens at its configured
//! rate, is counted, and a run is repeated exactly from its seed; link down
//! loses exactly the frames on the wire in its window; on the switch, faults
//! on one port touch only that port's frames. The cable alone needs no RTL;
//! the switch test runs three idle cards.

use homa_hw_sim::cable::{Cable, CableFaults, FaultCounts, FRAMING_BYTES};
use homa_hw_sim::network::SimNetwork;
use homa_wire::layout::{eth, ipv4};
use homa_wire::{Body, CommonHeader, Data, EthernetHeader, Frame, HomaPacket, Ipv4Header, MacAddr};

/// A valid DATA frame whose payload names `n`.
fn frame(n: u32, dst: [u8; 6]) -> Vec<u8> {
    let payload: Vec<u8> = (0..100u32).map(|i| (i ^ n) as u8).collect();
    Frame {
        eth: EthernetHeader {
            dst: MacAddr(dst),
            src: MacAddr([2, 0, 0, 0, 0, 9]),
        },
        ip: Ipv4Header::homa([10, 0, 0, 9].into(), [10, 0, 0, 1].into(), 0),
        homa: HomaPacket {
            common: CommonHeader::new(1, 2, 2 * n as u64, homa_wire::PacketType::Data),
            body: Body::Data(Data {
                message_length: 100,
                incoming: 100,
                ack: Default::default(),
                cutoff_version: 0,
                retransmit: 0,
                pad: [0; 3],
                seg_offset: 0,
                payload,
            }),
        },
    }
    .encode()
    .unwrap()
}

/// Sends `count` frames one after another on lane 0 of a fresh cable with
/// `faults`; every frame that arrives, and the counts.
fn run(faults: CableFaults, count: u32) -> (Vec<Vec<u8>>, FaultCounts) {
    let mut cable = Cable::new(100, 250).with_faults(faults);
    let mut out = Vec::new();
    let mut now = 0;
    for n in 0..count {
        cable.send(0, now, frame(n, [2, 0, 0, 0, 0, 1]));
        now += 4;
        out.extend(cable.arrived(0, now));
    }
    out.extend(cable.arrived(0, u64::MAX));
    (out, cable.fault_counts())
}

const FRAMES: u32 = 20_000;

/// `n` of `FRAMES` is within five standard deviations of `ppm`.
fn at_rate(n: u64, ppm: u32) {
    let p = ppm as f64 / 1e6;
    let mean = p * FRAMES as f64;
    let sd = (FRAMES as f64 * p * (1.0 - p)).sqrt();
    assert!(
        (n as f64 - mean).abs() <= 5.0 * sd + 1.0,
        "{n} of {FRAMES} at {ppm} ppm (expected {mean:.0} +- {sd:.0})"
    );
}

#[test]
fn each_fault_happens_at_its_rate_and_is_counted() {
    let faults = CableFaults {
        loss_ppm: 100_000,
        reorder_ppm: 50_000,
        max_hold_cycles: 200,
        duplicate_ppm: 30_000,
        corrupt_ip_ppm: 20_000,
        corrupt_homa_ppm: 20_000,
        link_down: None,
        seed: 7,
    };
    let (out, c) = run(faults, FRAMES);
    assert_eq!(c.frames, FRAMES as u64);
    at_rate(c.lost, faults.loss_ppm);
    // The other faults are drawn for every frame, lost ones included, and
    // happen to the frames that are not lost.
    let kept = 0.9;
    at_rate(c.reordered, (faults.reorder_ppm as f64 * kept) as u32);
    at_rate(c.duplicated, (faults.duplicate_ppm as f64 * kept) as u32);
    at_rate(
        c.corrupted_ip + c.corrupted_homa,
        ((faults.corrupt_ip_ppm + faults.corrupt_homa_ppm) as f64 * kept) as u32,
    );
    assert_eq!(out.len() as u64, c.frames - c.lost + c.duplicated);
    // What the counts say is what arrived: corrupted frames no longer
    // match the frame sent; in the IPv4 header kind the decoder sees it.
    let sent: std::collections::HashSet<Vec<u8>> =
        (0..FRAMES).map(|m| frame(m, [2, 0, 0, 0, 0, 1])).collect();
    let altered = out.iter().filter(|f| !sent.contains(*f)).count() as u64;
    let bad_checksum = out.iter().filter(|f| Frame::decode(f).is_err()).count() as u64;
    // (A corrupted frame that is also duplicated arrives twice.)
    let corrupted = c.corrupted_ip + c.corrupted_homa;
    assert!(
        (corrupted..=corrupted + c.duplicated).contains(&altered),
        "{altered} frames differ from every frame sent, {corrupted} corrupted"
    );
    assert!(
        bad_checksum >= c.corrupted_ip,
        "{bad_checksum} rejected, {} IPv4 header flips",
        c.corrupted_ip
    );
    // Reordered: some frame arrives after one sent later.
    let order: Vec<u64> = out
        .iter()
        .map(|f| {
            u64::from_be_bytes(
                f[eth::HEADER_LEN + ipv4::HEADER_LEN + 20..][..8]
                    .try_into()
                    .unwrap(),
            )
        })
        .collect();
    assert!(order.windows(2).any(|w| w[1] < w[0]), "nothing overtaken");
}

#[test]
fn ip_header_corruption_always_breaks_the_checksum_and_the_other_kind_never_does() {
    let ip = CableFaults {
        corrupt_ip_ppm: 1_000_000,
        seed: 3,
        ..Default::default()
    };
    let (out, c) = run(ip, 2000);
    assert_eq!(c.corrupted_ip, 2000);
    for f in &out {
        assert!(
            matches!(
                Frame::decode(f),
                Err(homa_wire::DecodeError::IpChecksum { .. })
                    | Err(homa_wire::DecodeError::IpVersion(_))
                    | Err(homa_wire::DecodeError::IpHeaderLength(_))
                    | Err(homa_wire::DecodeError::Truncated { .. })
            ),
            "an IPv4 header flip got past the decoder's IPv4 checks"
        );
    }
    let homa = CableFaults {
        corrupt_homa_ppm: 1_000_000,
        seed: 3,
        ..Default::default()
    };
    let (out, c) = run(homa, 2000);
    assert_eq!(c.corrupted_homa, 2000);
    for f in &out {
        let header = &f[eth::HEADER_LEN..eth::HEADER_LEN + ipv4::HEADER_LEN];
        assert_eq!(
            homa_wire::ipv4_checksum(header),
            0,
            "the IPv4 header was touched"
        );
    }
}

#[test]
fn the_same_seed_gives_the_same_frames_and_another_seed_does_not() {
    let faults = |seed| CableFaults {
        loss_ppm: 50_000,
        reorder_ppm: 50_000,
        max_hold_cycles: 100,
        duplicate_ppm: 50_000,
        corrupt_ip_ppm: 10_000,
        corrupt_homa_ppm: 10_000,
        link_down: Some((5_000, 6_000)),
        seed,
    };
    let a = run(faults(11), 5_000);
    let b = run(faults(11), 5_000);
    assert!(a.0 == b.0, "same seed, different frames");
    assert_eq!(a.1, b.1);
    let c = run(faults(12), 5_000);
    assert!(a.0 != c.0, "another seed, the same frames");
}

#[test]
fn link_down_loses_exactly_the_frames_on_the_wire_in_its_window() {
    // 100 frames of 232 bytes, one every 100 cycles: each is on the wire
    // from its send to 250 cycles (plus serialization) later.
    let window = (3_000, 5_000);
    let faults = CableFaults {
        link_down: Some(window),
        ..Default::default()
    };
    let mut cable = Cable::new(100, 250).with_faults(faults);
    let mut arrived = Vec::new();
    let mut expect_lost = 0;
    for n in 0..100u64 {
        let f = frame(n as u32, [2, 0, 0, 0, 0, 1]);
        let start = n * 100;
        let done = start + (8 * (f.len() as u64 + FRAMING_BYTES)).div_ceil(400) + 250;
        if start < window.1 && done >= window.0 {
            expect_lost += 1;
        }
        cable.send(0, start, f);
        arrived.extend(cable.arrived(0, start));
    }
    arrived.extend(cable.arrived(0, u64::MAX));
    let c = cable.fault_counts();
    assert_eq!(c.link_down_drops, expect_lost);
    assert!(expect_lost >= 20, "{expect_lost}");
    assert_eq!(arrived.len() as u64, 100 - expect_lost);
    assert_eq!(c.lost, 0, "link down is counted apart from loss");
}

#[test]
fn faults_on_one_switch_port_touch_only_its_frames_and_are_reproducible() {
    // Three idle cards on the switch; frames put on card 2's link for
    // cards 0 and 1 (whose MACs the switch learns first).
    let run = |seed: u64| {
        let mut net = SimNetwork::untraced("cable_faults_switch", 3, Default::default());
        let macs = [[2, 0, 0, 0, 0, 0x20], [2, 0, 0, 0, 0, 0x21]];
        for (i, mac) in macs.iter().enumerate() {
            let mut hello = frame(0, [0xff; 6]);
            hello[6..12].copy_from_slice(mac);
            net.send_from(i, hello);
        }
        net.run(600);
        let before: Vec<u64> = (0..3)
            .map(|i| net.card(i).lock().unwrap().stats().rx_frames)
            .collect();
        assert!(net.set_port_faults(
            1,
            CableFaults {
                loss_ppm: 300_000,
                seed,
                ..Default::default()
            }
        ));
        for n in 0..400 {
            net.send_from(2, frame(n, macs[(n % 2) as usize]));
            net.run(30);
        }
        net.run(1_000);
        let got: Vec<u64> = (0..3)
            .map(|i| net.card(i).lock().unwrap().stats().rx_frames - before[i])
            .collect();
        (got, net.cable_fault_counts())
    };
    let (got, counts) = run(5);
    assert_eq!(got[0], 200, "port 0 has no faults");
    assert_eq!(got[1], 200 - counts.lost, "port 1 lost {}", counts.lost);
    assert!(
        (35..=85).contains(&counts.lost),
        "30% of 200: {}",
        counts.lost
    );
    assert_eq!(run(5), (got, counts), "the same seed, the same run");
}

//! `homa-nic demo`: RPCs between two simulated cards through host-lib, the
//! driver and the RTL; the capture it writes decodes entirely with homa-wire.

use std::process::Command;

use homa_wire::pcap::FrameReader;
use homa_wire::{Frame, PacketType};

fn homa_nic(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_homa-nic"))
        .args(args)
        .env_remove("RUST_BACKTRACE")
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn demo_rpcs_are_echoed_and_every_captured_frame_decodes() {
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("demo.pcap");
    let (ok, out, err) = homa_nic(&[
        "demo",
        "--count",
        "8",
        "--size",
        "1,1425,3000",
        "--concurrency",
        "2",
        "--json",
        "--pcap",
        pcap.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).expect("one JSON object");
    assert_eq!(report["rpcs"], 8, "{report}");
    assert_eq!(report["errors"], 0, "{report}");
    let sizes: Vec<u64> = report["by_size"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["bytes"].as_u64().unwrap())
        .collect();
    assert_eq!(sizes, [1, 1425, 3000]);
    assert!(report["by_size"][0]["p50_cycles"].as_u64().unwrap() > 500);

    // Sizes in turn: three RPCs of 1 B (one packet each way), three of
    // 1425 B (two), two of 3000 B (three).
    let frames: Vec<Frame> = FrameReader::open(&pcap)
        .unwrap()
        .map(|f| Frame::decode(&f.unwrap().bytes).expect("every frame decodes"))
        .collect();
    assert_eq!(frames.len() as u64, report["frames"].as_u64().unwrap());
    // Besides the DATA, CUTOFFS each way: each card's DATA of a new message
    // carries cutoff version 0 until the other's CUTOFFS has come (RPCs run
    // concurrently, so more than one may go out before it does).
    let data = frames
        .iter()
        .filter(|f| f.homa.packet_type() == PacketType::Data)
        .count();
    assert_eq!(data, 2 * (3 + 3 * 2 + 2 * 3));
    // And the client's ACK of each response (so the server frees it).
    let acks = frames
        .iter()
        .filter(|f| f.homa.packet_type() == PacketType::Ack)
        .count();
    assert!(frames.iter().all(|f| matches!(
        f.homa.packet_type(),
        PacketType::Data | PacketType::Cutoffs | PacketType::Ack | PacketType::NeedAck
    )));
    // (The last may still be on the wire when the capture ends.)
    assert!((7..=8).contains(&acks), "{acks} ACKs for 8 RPCs");
    let need_acks = frames
        .iter()
        .filter(|f| f.homa.packet_type() == PacketType::NeedAck)
        .count();
    let cutoffs = frames.len() - data - acks - need_acks;
    assert!((2..=8).contains(&cutoffs), "{cutoffs} CUTOFFS");
}

#[test]
fn demo_refuses_a_size_above_the_limit() {
    let (ok, _, err) = homa_nic(&["demo", "--size", "1000001", "--count", "1"]);
    assert!(!ok);
    assert!(err.contains("1 to 1000000 bytes"), "{err}");
}

/// Faults on the cable: the card does not retransmit yet, so RPCs that lose
/// a frame do not finish; the demo gives each a deadline, ends, and says how
/// many completed and how many did not. The same seed, the same run.
#[test]
fn demo_with_faults_recovers_every_rpc_once_and_repeats_exactly() {
    let args = [
        "demo",
        "--count",
        "30",
        "--size",
        "100,3000",
        "--loss",
        "0.05",
        "--dup",
        "0.05",
        "--reorder",
        "0.05",
        "--deadline-us",
        "0",
        "--seed",
        "4",
        "--json",
    ];
    let (ok, out, err) = homa_nic(&args);
    assert!(ok, "{err}");
    let r: serde_json::Value = serde_json::from_str(&out).expect("one JSON object");
    // No deadline: the cards recover every lost frame; each RPC runs once.
    assert_eq!(r["rpcs"], 30, "{r}");
    assert_eq!(r["failed"], 0, "{r}");
    assert_eq!(r["duplicated_deliveries"], 0, "{r}");
    assert_eq!(r["errors"], 0, "every response that came is right: {r}");
    let faults = &r["faults"];
    assert!(faults["frames_lost"].as_u64().unwrap() > 0, "{r}");
    assert!(faults["recovery"].as_str().unwrap().contains("RESEND"));
    // Lost packets were sent again, within a few default resend intervals
    // (5 ticks of 10 us).
    assert!(r["retransmissions"].as_u64().unwrap() > 0, "{r}");
    let p50 = r["lost_to_retransmitted_p50_us"].as_f64().unwrap();
    assert!(p50 > 0.0 && p50 < 200.0, "{r}");
    let (_, again, _) = homa_nic(&args);
    let r2: serde_json::Value = serde_json::from_str(&again).unwrap();
    assert_eq!(
        (&r["rpcs"], &r["retransmissions"], &r["faults"]),
        (&r2["rpcs"], &r2["retransmissions"], &r2["faults"])
    );
}

#[test]
fn demo_counts_rpcs_past_a_deadline_shorter_than_recovery_as_unfinished() {
    let args = [
        "demo",
        "--count",
        "30",
        "--size",
        "100,3000",
        "--loss",
        "0.1",
        "--deadline-us",
        "20",
        "--seed",
        "4",
        "--json",
    ];
    let (ok, out, err) = homa_nic(&args);
    assert!(ok, "{err}");
    let r: serde_json::Value = serde_json::from_str(&out).expect("one JSON object");
    let counted = ["rpcs", "unfinished", "failed"].map(|k| r[k].as_u64().unwrap());
    assert_eq!(counted.iter().sum::<u64>(), 30, "{r}");
    // A lost frame costs resend_ticks (50 us) before it is asked for.
    assert!(counted[0] > 0 && counted[1] > 0, "{r}");
}

#[test]
fn demo_refuses_a_fault_rate_outside_zero_to_one() {
    let (ok, _, err) = homa_nic(&["demo", "--loss", "1.5", "--count", "1"]);
    assert!(!ok);
    assert!(err.contains("--loss 1.5"), "{err}");
}

//! The `homa-nic` binary as a user runs it.

use std::path::Path;
use std::process::Command;

fn homa_nic(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_homa-nic"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn decode_reads_a_capture_homa_nic_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("sample.pcap");
    let (ok, _, err) = homa_nic(&["sample-capture", "--out", pcap.to_str().unwrap()]);
    assert!(ok, "{err}");
    let (ok, out, err) = homa_nic(&["decode", pcap.to_str().unwrap()]);
    assert!(ok, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 11, "{out}");
    for name in [
        "DATA",
        "GRANT",
        "RESEND",
        "RPC_UNKNOWN",
        "BUSY",
        "CUTOFFS",
        "FREEZE",
        "NEED_ACK",
        "ACK",
    ] {
        assert!(out.contains(&format!(": {name} id")), "no {name} in\n{out}");
    }
    assert!(lines[0].starts_with(
        "0.000000000 10.0.0.1.32768 > 10.0.0.2.99: DATA id 2 prio 6 offset 0 len 1424/4272"
    ));
}

/// A capture written byte by byte, not by any of our code: a libpcap header
/// (little-endian, microsecond timestamps, Ethernet), then three records.
fn handmade_pcap(path: &Path) {
    // GRANT from 10.0.0.1:32768 to 10.0.0.2:99, id 2, offset 50000, prio 3,
    // worked out in wire/src/tests.rs.
    let grant = hex("020000000002 020000000001 0800
         45 e0 0035 0000 4000 40 92 2555 0a000001 0a000002
         8000 0063 00000000 000000 11 50 00 0000 0000 0000 0000000000000002 0000c350 03");
    // An ARP request: not Homa.
    let arp = hex(
        "ffffffffffff 020000000001 0806 0001 0800 06 04 0001 020000000001 0a000001 000000000000 0a000002",
    );
    // The GRANT cut inside the Homa header.
    let truncated = grant[..50].to_vec();
    let mut file = hex("d4c3b2a1 0200 0400 00000000 00000000 ffff0000 01000000");
    for (i, frame) in [grant, arp, truncated].iter().enumerate() {
        let len = (frame.len() as u32).to_le_bytes();
        file.extend_from_slice(&1u32.to_le_bytes()); // seconds
        file.extend_from_slice(&(i as u32 * 10).to_le_bytes()); // microseconds
        file.extend_from_slice(&len);
        file.extend_from_slice(&len);
        file.extend_from_slice(frame);
    }
    std::fs::write(path, file).unwrap();
}

#[test]
fn decode_reads_a_handmade_capture_and_reports_bad_frames() {
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("handmade.pcap");
    handmade_pcap(&pcap);
    let (ok, out, err) = homa_nic(&["decode", pcap.to_str().unwrap()]);
    assert!(ok, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        [
            "1.000000000 10.0.0.1.32768 > 10.0.0.2.99: GRANT id 2 prio 7 offset 50000 grant_prio 3, length 67",
            "1.000010000 [undecodable, 42 bytes] not IPv4 (ethertype 0x0806)",
            "1.000020000 [undecodable, 50 bytes] IPv4 total length 53 does not fit the 36 bytes after the Ethernet header",
        ]
    );

    let (ok, out, err) = homa_nic(&["decode", "--json", pcap.to_str().unwrap()]);
    assert!(ok, "{err}");
    let objects: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(objects.len(), 3);
    assert_eq!(objects[0]["homa"]["body"]["type"], "GRANT");
    assert_eq!(objects[0]["homa"]["body"]["offset"], 50000);
    assert_eq!(objects[0]["homa"]["common"]["sport"], 32768);
    assert_eq!(objects[0]["ip"]["tos"], 0xe0);
    assert_eq!(objects[0]["time_ns"], 1_000_000_000u64);
    assert_eq!(objects[1]["error_kind"], "not_ipv4");
    assert_eq!(objects[2]["error_kind"], "ip_total_length");
}

#[test]
fn decode_of_a_missing_file_is_a_clear_error() {
    let (ok, _, err) = homa_nic(&["decode", "/nonexistent/x.pcap"]);
    assert!(!ok);
    assert!(err.contains("/nonexistent/x.pcap"), "{err}");
}

#[test]
fn verilog_export_passes_lint() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, _, err) = homa_nic(&["verilog", "--out", dir.path().to_str().unwrap()]);
    assert!(ok, "{err}");
    let files = std::fs::read_to_string(dir.path().join("files.f")).unwrap();
    let listed: Vec<&str> = files.lines().collect();
    let designs: Vec<String> = homa_hw::designs()
        .iter()
        .map(|d| format!("{}.v", d.name))
        .collect();
    assert_eq!(listed, designs);
    assert!(listed.contains(&"homa_core.v"));
    for file in listed {
        let lint = Command::new("verilator")
            .current_dir(dir.path())
            .args(["--lint-only", "-Wall", "verilator.vlt", file])
            .output()
            .expect("verilator is installed (make deps)");
        assert!(
            lint.status.success(),
            "{file}: {}",
            String::from_utf8_lossy(&lint.stderr)
        );
    }
}

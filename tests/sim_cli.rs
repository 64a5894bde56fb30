//! `homa-nic sim` as a user runs it: a tiny cluster, JSON out, a plot.

use std::process::Command;

#[test]
fn sim_reports_json_and_draws_the_plot() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("slowdown.svg");
    let out = Command::new(env!("CARGO_BIN_EXE_homa-nic"))
        .args([
            "sim",
            "--engine",
            "model",
            "--hosts",
            "3",
            "--workload",
            "w2",
            "--load",
            "0.5",
            "--link-gbps",
            "100",
            "--duration-us",
            "60",
            "--seed",
            "5",
            "--loss",
            "0.01",
            "--tick-us",
            "10",
            "--json",
            "--quiet",
            "--plot",
        ])
        .arg(&svg)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["workload"], "w2");
    assert_eq!(r["hosts"], 3);
    assert!(r["rpcs_completed"].as_u64().unwrap() > 10, "{r}");
    assert_eq!(r["rpcs_failed"], 0);
    assert!(r["events_per_sec"].as_f64().unwrap() > 0.0);
    assert!(r["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .all(|b| b["p99"].as_f64().unwrap() >= b["p50"].as_f64().unwrap()));
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
}

#[test]
fn sim_rejects_a_load_out_of_range_and_an_unknown_workload() {
    for (args, expect) in [
        (vec!["sim", "--load", "1.5"], "outside 0.0-0.95"),
        (vec!["sim", "--workload", "w9"], "unknown workload"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_homa-nic"))
            .args(&args)
            .arg("--quiet")
            .output()
            .unwrap();
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(expect), "{stderr}");
    }
}

#[test]
fn sim_on_rtl_cards_completes_the_models_rpcs_and_reports_slowdown() {
    let run = |engine: &str| -> serde_json::Value {
        let out = Command::new(env!("CARGO_BIN_EXE_homa-nic"))
            .args([
                "sim",
                "--engine",
                engine,
                "--hosts",
                "3",
                "--workload",
                "w3",
                "--max-message",
                "100000",
                "--load",
                "0.3",
                "--duration-us",
                "20",
                "--warmup-us",
                "0",
                "--seed",
                "3",
                "--json",
                "--quiet",
            ])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{engine}: {stderr}");
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let rtl = run("rtl");
    let model = run("model");
    // The same RPCs as the model's run, every one completed and intact.
    assert_eq!(rtl["rpcs_measured"], model["rpcs_measured"], "{rtl}");
    let measured = rtl["rpcs_measured"].as_u64().unwrap();
    assert!(measured >= 5, "{rtl}");
    assert_eq!(rtl["rpcs_completed"].as_u64().unwrap(), measured, "{rtl}");
    assert_eq!(rtl["rpcs_unfinished"], 0);
    assert_eq!(rtl["cluster"]["response_checksum_errors"], 0);
    assert_eq!(rtl["cluster"]["switch_drops"], 0);
    assert_eq!(rtl["endpoints"]["rx_fifo_overflows"], 0, "{rtl}");
    // Every request and response reached its card as one message.
    assert_eq!(
        rtl["endpoints"]["rx_messages_delivered"].as_u64().unwrap(),
        2 * rtl["cluster"]["rpcs_completed"].as_u64().unwrap()
    );
    let buckets = rtl["buckets"].as_array().unwrap();
    assert!(!buckets.is_empty(), "{rtl}");
    let counted: u64 = buckets.iter().map(|b| b["count"].as_u64().unwrap()).sum();
    assert_eq!(counted, measured);
    for b in buckets {
        // Slowdown is against this engine's own idle time: an RPC can not
        // beat it by much (the idle runs are single RPCs on the same cards).
        assert!(b["p50"].as_f64().unwrap() > 0.8, "{b}");
        assert!(b["p99"].as_f64().unwrap() >= b["p50"].as_f64().unwrap());
    }
    let idle = rtl["unloaded_rtt"].as_array().unwrap();
    assert_eq!(idle.len(), 5, "1 B to 100 KB: {rtl}");
    assert!(idle
        .windows(2)
        .all(|w| w[1]["cycles"].as_u64() > w[0]["cycles"].as_u64()));
}

/// Faults on RTL cards: applied on the switch-to-host hop as the model does,
/// counted, and (no retransmission yet) the RPCs that lose a frame counted
/// unfinished; the run ends by itself.
#[test]
fn sim_on_rtl_cards_with_loss_counts_the_faults_and_the_unfinished_rpcs() {
    let out = Command::new(env!("CARGO_BIN_EXE_homa-nic"))
        .args([
            "sim",
            "--engine",
            "rtl",
            "--hosts",
            "2",
            "--workload",
            "w2",
            "--load",
            "0.3",
            "--duration-us",
            "20",
            "--warmup-us",
            "0",
            "--seed",
            "3",
            "--loss",
            "0.05",
            "--dup",
            "0.05",
            "--stall-us",
            "50",
            "--json",
            "--quiet",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let faults = &r["cluster"]["faults"];
    assert!(faults["lost"].as_u64().unwrap() > 0, "{r}");
    assert!(faults["duplicated"].as_u64().unwrap() > 0, "{r}");
    let measured = r["rpcs_measured"].as_u64().unwrap();
    assert_eq!(
        r["rpcs_completed"].as_u64().unwrap() + r["rpcs_unfinished"].as_u64().unwrap(),
        measured,
        "{r}"
    );
    assert_eq!(r["cluster"]["duplicate_completions"], 0, "{r}");
    assert!(r["endpoints"]["recovery"]
        .as_str()
        .unwrap()
        .contains("RESEND"));
}

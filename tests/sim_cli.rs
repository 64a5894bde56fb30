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

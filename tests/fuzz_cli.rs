//! `homa-nic fuzz` as a user runs it: a short run, JSON out, no finding; bad
//! arguments named.

use std::process::Command;

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
fn a_short_fuzz_run_reports_json_and_no_finding() {
    let (ok, out, err) = homa_nic(&["fuzz", "--frames", "2000", "--seed", "3", "--json"]);
    assert!(ok, "{err}\n{out}");
    let r: serde_json::Value = serde_json::from_str(&out).expect("one JSON object");
    assert_eq!(r["frames"], 2000, "{r}");
    assert_eq!(r["seed"], 3);
    assert_eq!(r["findings"].as_array().unwrap().len(), 0, "{r}");
    assert!(r["rpcs_completed"].as_u64().unwrap() > 0, "{r}");
    assert!(r["frames_per_second"].as_f64().unwrap() > 0.0);
    let verdicts = r["verdicts"].as_object().unwrap();
    assert!(
        verdicts["Accept"].as_u64().unwrap() > 0 && verdicts["IpChecksum"].as_u64().unwrap() > 0
    );
}

#[test]
fn fuzz_refuses_zero_frames() {
    let (ok, _, err) = homa_nic(&["fuzz", "--frames", "0"]);
    assert!(!ok);
    assert!(err.contains("--frames must be at least 1"), "{err}");
}

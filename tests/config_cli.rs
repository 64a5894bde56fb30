//! `homa-nic config`: check, apply to a simulated card and read back, refuse
//! a bad file with its key, line and allowed values (the file forms
//! themselves are covered in host-lib/tests/config.rs).

use std::process::{Command, Output};

fn homa_nic(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_homa-nic"))
        .args(args)
        .env_remove("HOMA_CONF")
        .output()
        .unwrap()
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_example_file_checks_and_is_what_config_example_prints() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/homa.conf");
    let out = homa_nic(&["config", "check", path]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    // The example sets every tunable the card and host-lib have.
    let all = homa_host::tunables::TUNABLES.len();
    assert!(
        stdout.contains(&format!(": ok ({all} of {all} tunables set")),
        "{stdout}"
    );
    let out = homa_nic(&["config", "example"]);
    assert_eq!(text(&out).0, std::fs::read_to_string(path).unwrap());
}

#[test]
fn apply_sets_a_simulated_card_and_reads_the_values_back() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("homa.conf");
    std::fs::write(
        &file,
        "# small endpoints\nendpoint_tx_ring_entries = 16\nendpoint_completion_ring_entries = 32\nendpoint_bpages = 8\nmax_overcommit = 5\nmax_incoming = 123456\n",
    )
    .unwrap();
    let out = homa_nic(&["config", "apply", file.to_str().unwrap(), "--port", "7"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    let row = |name: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no {name} in {stdout}"))
            .to_string()
    };
    assert!(
        row("endpoint_tx_ring_entries").contains("port 7: 16 (next: 16)"),
        "{stdout}"
    );
    assert!(row("endpoint_completion_ring_entries").contains("port 7: 32 (next: 32)"));
    assert!(row("endpoint_bpages").contains("port 7: 8 (next: 8)"));
    assert!(
        row("unsched_bytes").contains("40000")
            && !row("unsched_bytes").contains("fixed in the RTL"),
        "{stdout}"
    );
    // The grant scheduler's registers took the file's values.
    assert!(row("max_overcommit").contains('5'), "{stdout}");
    assert!(row("max_incoming").contains("123456"), "{stdout}");
}

#[test]
fn a_bad_file_is_refused_with_key_line_and_range_and_nothing_is_opened() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.conf");
    std::fs::write(
        &file,
        "endpoint_bpages = 8\n\nendpoint_tx_ring_entries = 100\n",
    )
    .unwrap();
    for command in ["check", "apply"] {
        let out = homa_nic(&["config", command, file.to_str().unwrap()]);
        let (stdout, stderr) = text(&out);
        assert!(!out.status.success(), "{command}: {stdout}");
        assert!(
            stderr.contains("bad.conf: line 3: endpoint_tx_ring_entries: 100 is not a power of two (allowed: a power of two in 2..=1024)"),
            "{command}: {stderr}"
        );
        assert!(!stdout.contains("applied"), "{command}: nothing applied");
    }
}

#[test]
fn show_reads_a_card_opened_with_homa_conf() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("homa.conf");
    std::fs::write(&file, "endpoint_bpages = 4\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_homa-nic"))
        .args(["config", "show"])
        .env("HOMA_CONF", &file)
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("no endpoint open (next: 4)"), "{stdout}");
}

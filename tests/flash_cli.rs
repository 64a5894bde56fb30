//! `homa-nic flash --sim`: the real command, end to end, against a simulated
//! card in a board (its RTL board logic and flash chip model): a small image
//! written, verified and rebooted into; the refusals (another part, the golden
//! region, no confirmation) write nothing; --dry-run writes nothing.

use std::path::Path;
use std::process::{Command, Output};

fn homa_nic(args: &[&str], stdin: &str) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_homa-nic"))
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn sim_image(dir: &Path, board: &str) -> String {
    let path = dir.join(format!("{board}.bit"));
    let p = path.to_str().unwrap();
    let out = homa_nic(&["flash", "--make-sim-image", p, "--sim-board", board], "");
    assert!(out.status.success(), "{}", text(&out));
    p.to_string()
}

#[test]
fn flash_sim_writes_verifies_and_boots_a_small_image() {
    let dir = tempfile::tempdir().unwrap();
    let bit = sim_image(dir.path(), "u250");
    let out = homa_nic(&["flash", "--sim", &bit, "--yes"], "");
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    for want in [
        "running: board u250, part xcu250-figd2104-2L-e, built 1700000000",
        "Erase: done",
        "Program: done",
        "Verify: done",
        "rebooting the FPGA from flash",
        "now running: board u250",
        "core: design version",
    ] {
        assert!(t.contains(want), "missing {want:?} in:\n{t}");
    }
    assert!(
        !t.contains("now running: board u250, part xcu250-figd2104-2L-e, built 1700000000"),
        "{t}"
    );
}

#[test]
fn flash_refuses_another_part_the_golden_region_and_an_unconfirmed_write() {
    let dir = tempfile::tempdir().unwrap();
    let u200 = sim_image(dir.path(), "u200");
    let out = homa_nic(&["flash", "--sim", &u200, "--yes"], "");
    let t = text(&out);
    assert!(!out.status.success());
    assert!(
        t.contains("the file is for part xcu200-fsgd2104-2-e, the card is a xcu250-figd2104-2L-e"),
        "{t}"
    );
    assert!(!t.contains("Erase"), "{t}");

    let u250 = sim_image(dir.path(), "u250");
    let out = homa_nic(
        &["flash", "--sim", &u250, "--yes", "--address", "0x00ff0000"],
        "",
    );
    let t = text(&out);
    assert!(!out.status.success());
    assert!(
        t.contains(
            "refusing to write at 0x00ff0000: the flash below 0x01002000 holds the golden image"
        ),
        "{t}"
    );

    let out = homa_nic(&["flash", "--sim", &u250], "n\n");
    let t = text(&out);
    assert!(!out.status.success());
    assert!(t.contains("not confirmed: nothing written"), "{t}");

    let out = homa_nic(&["flash", "--sim", &u250, "--dry-run"], "");
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(
        t.contains("plan: erase 8192 bytes from 0x01002000 (0 x 64 KiB, 2 x 4 KiB)"),
        "{t}"
    );
    assert!(t.contains("dry run: nothing written"), "{t}");

    let out = homa_nic(&["flash", &u250], "");
    assert!(!out.status.success());
    assert!(text(&out).contains("give --vfio BDF for a real one, or --sim"));
}

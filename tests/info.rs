//! `homa-nic info`: the simulated card's register blocks and ID, and the
//! error a user gets asking for a real card that is not there.

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
fn info_lists_the_simulated_cards_blocks_and_id() {
    let (ok, out, err) = homa_nic(&["info"]);
    assert!(ok, "{err}");
    assert!(out.contains("simulated card"), "{out}");
    assert!(out.contains("0x000000  0x484d0001  1.0      ID"), "{out}");
    assert!(
        out.contains("0x000100  0x484d0002  1.0      scratch"),
        "{out}"
    );
    assert!(out.contains("250000 kHz"), "{out}");
    assert!(out.contains("512 bits"), "{out}");
    assert!(out.contains("wire format     0x20250700"), "{out}");
    assert!(out.contains("IPv4            0.0.0.0"), "{out}");
    assert!(out.contains("endpoints (4):"), "{out}");
    assert!(out.contains("closed"), "{out}");
}

#[test]
fn info_on_a_missing_real_card_explains_instead_of_panicking() {
    let (ok, out, err) = homa_nic(&["info", "--vfio", "ffff:ff:1f.7"]);
    assert!(!ok, "{out}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        err.contains("modprobe vfio-pci") || err.contains("lspci -D"),
        "the error says what to do: {err}"
    );
}

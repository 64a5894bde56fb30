//! Every board's build script, IP TCL and XDC run through tclsh with the Vivado
//! commands stubbed (firmware/tcl/vivado_stub.tcl), and the stub catches the
//! mistakes it is there for: a wrong IP property name, a port that is not on
//! the top level, a malformed or doubly used pin, a missing file, a flash image
//! at the wrong address.

use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

use homa_firmware::board::{board, boards};
use homa_firmware::regmap::BuildInfo;
use homa_firmware::vivado;

const STUB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tcl/vivado_stub.tcl");

fn build() -> BuildInfo {
    BuildInfo {
        unix_time: 1_700_000_000,
        git_commit: [0x5a; 20],
        git_dirty: false,
    }
}

/// Runs the stub on `dir/build.tcl`: Ok(stdout) or Err(stderr).
fn stub(dir: &Path) -> Result<String, String> {
    let out = Command::new("tclsh")
        .arg(STUB)
        .arg(dir.join(vivado::BUILD_TCL))
        .output()
        .expect("tclsh not found: `make deps` installs it (Debian package tcl)");
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// Each board on its own thread: writing a board's Verilog takes seconds.
#[test]
fn every_board_build_script_passes_the_stubbed_vivado() {
    std::thread::scope(|s| {
        for b in boards() {
            s.spawn(move || {
                let dir = tempfile::tempdir().unwrap();
                vivado::write_build_dir(&b, &build(), dir.path()).unwrap();
                let out = stub(dir.path()).unwrap_or_else(|e| panic!("{}: {e}", b.name));
                assert!(
                    out.contains(&format!("homa_{} for {}", b.name, b.part)),
                    "{out}"
                );
                let pins = if b.hbm { 8 } else { 10 };
                assert!(out.contains(&format!("{pins} pins")), "{}: {out}", b.name);
            });
        }
    });
}

/// u250's build directory, written once for every `broken` run (writing it
/// takes seconds: the board's Verilog).
fn u250_build_dir() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        vivado::write_build_dir(&board("u250").unwrap(), &build(), dir.path()).unwrap();
        dir
    })
    .path()
}

/// A copy of u250's build directory with `edit` applied to one file, through the stub.
fn broken(file: &str, edit: impl Fn(&str) -> String) -> String {
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(u250_build_dir()).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.path().join(entry.file_name())).unwrap();
    }
    let path = dir.path().join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let changed = edit(&text);
    assert_ne!(changed, text, "the edit to {file} changed nothing");
    std::fs::write(&path, changed).unwrap();
    stub(dir.path()).expect_err("the stub passed a broken build")
}

#[test]
fn a_misspelt_ip_property_fails() {
    let e = broken("ip.tcl", |t| {
        t.replace("CONFIG.axisten_freq", "CONFIG.axisten_frequency")
    });
    assert!(
        e.contains("unknown property CONFIG.axisten_frequency"),
        "{e}"
    );
    let e = broken("ip.tcl", |t| {
        t.replace("CONFIG.GT_GROUP_SELECT", "CONFIG.GT_GROUP_SEL")
    });
    assert!(e.contains("unknown property"), "{e}");
}

#[test]
fn a_pin_or_port_typo_fails() {
    let e = broken("homa_u250.xdc", |t| {
        t.replace("[get_ports pcie_perst_n]", "[get_ports pcie_rst_n]")
    });
    assert!(e.contains("no such port"), "{e}");
    let e = broken("homa_u250.xdc", |t| {
        t.replace("PACKAGE_PIN BD21", "PACKAGE_PIN BD2I")
    });
    assert!(e.contains("not a package pin"), "{e}");
    let e = broken("homa_u250.xdc", |t| {
        t.replace("PACKAGE_PIN AY38", "PACKAGE_PIN AY37")
    });
    assert!(e.contains("pin AY37 given to"), "{e}");
}

#[test]
fn a_missing_file_or_a_flash_image_in_the_golden_region_fails() {
    let e = broken("build.tcl", |t| {
        t.replace("homa_u250.xdc", "homa_u250_missing.xdc")
    });
    assert!(e.contains("no such file"), "{e}");
    let e = broken("build.tcl", |t| t.replace("up 0x01002000", "up 0x00000000"));
    assert!(e.contains("user-image address"), "{e}");
    let e = broken("build.tcl", |t| t.replace("route_design\n", ""));
    assert!(e.contains("before route_design"), "{e}");
}

#[test]
fn the_pcie_ids_are_the_ones_the_driver_looks_for() {
    let id = homa_driver::HOMA_NIC_IDS[0];
    assert_eq!(
        (vivado::PCI_VENDOR_ID, vivado::PCI_DEVICE_ID),
        (id.vendor, id.device)
    );
    let tcl = vivado::ip_tcl(&board("u50").unwrap());
    assert!(
        tcl.contains(&format!("CONFIG.vendor_id {{{:04X}}}", id.vendor)),
        "{tcl}"
    );
    assert!(
        tcl.contains(&format!("CONFIG.PF0_DEVICE_ID {{{:04X}}}", id.device)),
        "{tcl}"
    );
}

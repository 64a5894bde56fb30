//! `homa-nic setup` as a user runs it, on a fake sysfs tree: the dry run
//! prints the plan and changes nothing, a refusal exits non-zero saying what
//! to do, `--status` reports. (The logic's cases are in driver/tests/setup.rs.)

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::Command;

fn homa_nic(root: &Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_homa-nic"))
        .arg("setup")
        .arg("--sysfs")
        .arg(root.join("sys"))
        .arg("--dev")
        .arg(root.join("dev"))
        .arg("--state")
        .arg(root.join("run/previous-drivers"))
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

/// A machine with one card at 0000:3b:00.0 on `driver`, in IOMMU group 7 if `iommu`.
fn machine(driver: &str, iommu: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let sys = dir.path().join("sys");
    let dev = sys.join("bus/pci/devices/0000:3b:00.0");
    fs::create_dir_all(&dev).unwrap();
    fs::create_dir_all(sys.join("bus/pci/drivers/vfio-pci")).unwrap();
    fs::create_dir_all(sys.join(format!("bus/pci/drivers/{driver}"))).unwrap();
    fs::write(dev.join("vendor"), "0x1234\n").unwrap();
    fs::write(dev.join("device"), "0x484d\n").unwrap();
    fs::write(dev.join("class"), "0x020000\n").unwrap();
    symlink(
        sys.join(format!("bus/pci/drivers/{driver}")),
        dev.join("driver"),
    )
    .unwrap();
    if iommu {
        let g = sys.join("kernel/iommu_groups/7/devices");
        fs::create_dir_all(&g).unwrap();
        symlink(&dev, g.join("0000:3b:00.0")).unwrap();
        symlink(g.parent().unwrap(), dev.join("iommu_group")).unwrap();
    }
    let huge = sys.join("kernel/mm/hugepages/hugepages-2048kB");
    fs::create_dir_all(&huge).unwrap();
    fs::write(huge.join("nr_hugepages"), "0\n").unwrap();
    fs::create_dir_all(dir.path().join("dev/vfio")).unwrap();
    dir
}

#[test]
fn dry_run_prints_the_plan_and_changes_nothing() {
    let m = machine("xdma", true);
    let (ok, out, err) = homa_nic(m.path(), &["--dry-run", "--memlock-kib", "unlimited"]);
    assert!(ok, "{out}{err}");
    assert!(out.starts_with("dry run: nothing is changed"), "{out}");
    assert!(out.contains("echo vfio-pci > "), "{out}");
    assert!(out.contains("take 0000:3b:00.0 from xdma"), "{out}");
    assert!(out.contains("reserve 64 hugepages of 2 MiB"), "{out}");
    let sys = m.path().join("sys");
    assert!(!sys
        .join("bus/pci/devices/0000:3b:00.0/driver_override")
        .exists());
    assert!(!sys.join("bus/pci/drivers_probe").exists());
    assert!(!m.path().join("run/previous-drivers").exists());
    assert_eq!(
        fs::read_to_string(sys.join("kernel/mm/hugepages/hugepages-2048kB/nr_hugepages")).unwrap(),
        "0\n"
    );
}

#[test]
fn a_refusal_exits_non_zero_and_says_what_to_do() {
    let m = machine("xdma", false);
    let (ok, out, err) = homa_nic(m.path(), &["--dry-run"]);
    assert!(!ok, "{out}");
    assert!(
        out.contains("refused: 0000:3b:00.0: the IOMMU is off"),
        "{out}"
    );
    assert!(out.contains("intel_iommu=on"), "{out}");
    assert!(err.contains("1 refusal(s)"), "{err}");
}

#[test]
fn status_reports_the_card() {
    let m = machine("vfio-pci", true);
    let (ok, out, err) = homa_nic(m.path(), &["--status"]);
    assert!(ok, "{err}");
    assert!(
        out.contains("0000:3b:00.0 [1234:484d] driver vfio-pci"),
        "{out}"
    );
    assert!(out.contains("IOMMU group 7: the card alone"), "{out}");
    assert!(out.contains("hugepages (2 MiB): 0 reserved"), "{out}");
}

#[test]
fn bad_ids_and_addresses_name_the_expected_form() {
    let m = machine("vfio-pci", true);
    let (ok, _, err) = homa_nic(m.path(), &["--id", "1234"]);
    assert!(!ok);
    assert!(err.contains("VVVV:DDDD"), "{err}");
    let (ok, _, err) = homa_nic(m.path(), &["--device", "3b:00"]);
    assert!(!ok);
    assert!(err.contains("DDDD:BB:DD.F"), "{err}");
    let (ok, _, err) = homa_nic(m.path(), &["--user", "no-such-user-homa", "--dry-run"]);
    assert!(!ok);
    assert!(err.contains("no such user"), "{err}");
}

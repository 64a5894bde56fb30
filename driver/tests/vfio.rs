//! The VFIO backend where no card is: on this machine, and on fake sysfs and
//! /dev trees laid out as each setup mistake leaves them. Every failure must be
//! a typed error whose message says what to do, never a panic.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

use homa_driver::vfio::{preflight, SystemPaths, VfioConfig, VFIO_PCI_DRIVER};
use homa_driver::{Error, PciAddress, VfioBackend, VfioError};

/// An address no machine has (domain 0xffff is not assigned by firmware).
const ABSENT: &str = "ffff:ff:1f.7";

#[test]
fn opening_a_card_that_is_not_there_is_a_clear_error() {
    let config = VfioConfig::new(ABSENT.parse().unwrap());
    let e = match VfioBackend::open(&config) {
        Err(Error::Vfio(e)) => e,
        Err(e) => panic!("expected a VFIO error, got {e}"),
        Ok(_) => panic!("opened a card at {ABSENT}"),
    };
    let message = e.to_string();
    match e {
        VfioError::NoVfio { .. } => assert!(message.contains("modprobe vfio-pci"), "{message}"),
        VfioError::NoSuchDevice { address, .. } => {
            assert_eq!(address.to_string(), "ffff:ff:1f.7");
            assert!(message.contains("lspci -D"), "{message}");
        }
        other => panic!("expected NoVfio or NoSuchDevice, got {other}"),
    }
}

#[test]
fn a_bar_index_past_bar5_is_refused_before_touching_the_system() {
    let mut config = VfioConfig::new(ABSENT.parse().unwrap());
    config.bar = 6;
    assert!(matches!(
        VfioBackend::open(&config),
        Err(Error::Vfio(VfioError::BadBar { bar: 6 }))
    ));
}

#[test]
fn a_malformed_address_names_the_expected_form() {
    let e = "01:00".parse::<PciAddress>().unwrap_err();
    assert!(matches!(&e, VfioError::BadAddress(s) if s == "01:00"));
    assert!(e.to_string().contains("0000:01:00.0"), "{e}");
}

/// A fake /sys/bus/pci and /dev/vfio under a temporary directory.
struct FakeSystem {
    _dir: tempfile::TempDir,
    paths: SystemPaths,
    address: PciAddress,
}

impl FakeSystem {
    /// VFIO loaded (`/dev/vfio/vfio` exists) and the device present, unbound.
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let paths = SystemPaths {
            sysfs_pci: dir.path().join("sys/bus/pci"),
            dev_vfio: dir.path().join("dev/vfio"),
        };
        let address: PciAddress = "0000:3b:00.0".parse().unwrap();
        let device = address.sysfs_path(&paths.sysfs_pci);
        fs::create_dir_all(&device).unwrap();
        fs::create_dir_all(paths.sysfs_pci.join("drivers")).unwrap();
        fs::create_dir_all(&paths.dev_vfio).unwrap();
        fs::write(paths.dev_vfio.join("vfio"), "").unwrap();
        fs::write(device.join("vendor"), "0x1234\n").unwrap();
        fs::write(device.join("device"), "0x1001\n").unwrap();
        FakeSystem {
            _dir: dir,
            paths,
            address,
        }
    }

    fn device(&self) -> std::path::PathBuf {
        self.address.sysfs_path(&self.paths.sysfs_pci)
    }

    fn bind(&self, driver: &str) {
        let target = self.paths.sysfs_pci.join("drivers").join(driver);
        fs::create_dir_all(&target).unwrap();
        symlink(&target, self.device().join("driver")).unwrap();
    }

    fn set_group(&self, group: u32) {
        let groups = self.paths.sysfs_pci.join("../../kernel/iommu_groups");
        let target = groups.join(group.to_string());
        fs::create_dir_all(&target).unwrap();
        symlink(&target, self.device().join("iommu_group")).unwrap();
    }

    fn preflight(&self) -> Result<u32, VfioError> {
        preflight(self.address, &self.paths)
    }
}

#[test]
fn preflight_without_dev_vfio_says_to_load_vfio_pci() {
    let sys = FakeSystem::new();
    fs::remove_file(sys.paths.dev_vfio.join("vfio")).unwrap();
    let e = sys.preflight().unwrap_err();
    assert!(matches!(&e, VfioError::NoVfio { path } if path == &sys.paths.dev_vfio.join("vfio")));
    assert!(e.to_string().contains("modprobe vfio-pci"), "{e}");
}

#[test]
fn preflight_without_the_device_says_so() {
    let sys = FakeSystem::new();
    fs::remove_dir_all(sys.device()).unwrap();
    assert!(matches!(
        sys.preflight(),
        Err(VfioError::NoSuchDevice { address, .. }) if address == sys.address
    ));
}

#[test]
fn preflight_of_a_device_bound_elsewhere_gives_the_commands_to_rebind_it() {
    let sys = FakeSystem::new();
    sys.bind("ixgbe");
    sys.set_group(42);
    let e = sys.preflight().unwrap_err();
    assert!(matches!(
        &e,
        VfioError::NotBoundToVfio { driver: Some(d), .. } if d == "ixgbe"
    ));
    let message = e.to_string();
    let device = sys.device();
    for needed in [
        "bound to ixgbe, not to vfio-pci".to_string(),
        "sudo homa-nic setup --device 0000:3b:00.0".to_string(),
        "modprobe vfio-pci".to_string(),
        format!(
            "echo 0000:3b:00.0 > {}",
            device.join("driver/unbind").display()
        ),
        format!(
            "echo vfio-pci > {}",
            device.join("driver_override").display()
        ),
        format!(
            "echo 0000:3b:00.0 > {}",
            sys.paths.sysfs_pci.join("drivers_probe").display()
        ),
        format!(
            "echo 1234 1001 > {}",
            sys.paths
                .sysfs_pci
                .join("drivers/vfio-pci/new_id")
                .display()
        ),
    ] {
        assert!(
            message.contains(&needed),
            "missing {needed:?} in:\n{message}"
        );
    }
}

#[test]
fn preflight_of_an_unbound_device_skips_the_unbind_step() {
    let sys = FakeSystem::new();
    let e = sys.preflight().unwrap_err();
    assert!(matches!(&e, VfioError::NotBoundToVfio { driver: None, .. }));
    let message = e.to_string();
    assert!(message.contains("bound to no driver"), "{message}");
    assert!(!message.contains("unbind"), "{message}");
}

#[test]
fn preflight_without_an_iommu_group_says_to_turn_the_iommu_on() {
    let sys = FakeSystem::new();
    sys.bind(VFIO_PCI_DRIVER);
    let e = sys.preflight().unwrap_err();
    assert!(matches!(e, VfioError::NoIommuGroup { .. }));
    assert!(e.to_string().contains("intel_iommu=on"), "{e}");
}

#[test]
fn preflight_without_the_group_file_is_an_error() {
    let sys = FakeSystem::new();
    sys.bind(VFIO_PCI_DRIVER);
    sys.set_group(42);
    assert!(matches!(
        sys.preflight(),
        Err(VfioError::GroupMissing { path, .. }) if path == sys.paths.dev_vfio.join("42")
    ));
}

#[test]
fn preflight_of_a_ready_device_returns_its_group() {
    let sys = FakeSystem::new();
    sys.bind(VFIO_PCI_DRIVER);
    sys.set_group(42);
    fs::write(sys.paths.dev_vfio.join("42"), "").unwrap();
    assert_eq!(sys.preflight().unwrap(), 42);
    assert!(Path::new(&sys.paths.dev_vfio).join("42").exists());
}

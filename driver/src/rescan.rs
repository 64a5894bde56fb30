//! Bringing a card back after its FPGA reconfigured: the device left the link
//! when the new image started loading, so Linux must forget it and find it
//! again. As Corundum's mqnic-fw and the open-nic scripts do it (BOARDS.md
//! §3.3, §3.5): `echo 1 > <device>/remove`, wait for the image to load, then
//! `echo 1 > /sys/bus/pci/rescan` until `<device>/config` exists again, a few
//! tries apart. A device that comes back has lost its `driver_override`, so
//! it is given to vfio-pci again (`driver_override`, then `drivers_probe`), as
//! `homa-nic setup` did.
//!
//! Not done here: clearing SERR and fatal-error reporting on the upstream
//! port before the link drops (mqnic-fw does, to keep some servers' firmware
//! from rebooting the host on the surprise link-down). On such hosts, run
//! `setpci` on the port first (BOARDS.md §3.5).

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::pci::PciAddress;

/// Why the card did not come back.
#[derive(Debug, thiserror::Error)]
pub enum RescanError {
    #[error("{path}: {source} (run as root)")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{address} did not reappear after {tries} rescans {interval:?} apart: the new image may not have loaded (a cold boot loads the golden image; check `lspci -d 1234:484d`)")]
    NotBack {
        address: PciAddress,
        tries: u32,
        interval: Duration,
    },
}

/// Where and how patiently to rescan.
#[derive(Clone, Debug)]
pub struct Rescan {
    /// The PCI bus's directory in sysfs, normally `/sys/bus/pci`.
    pub sysfs_pci: PathBuf,
    /// Time for the FPGA to load its new image before the first rescan.
    pub settle: Duration,
    /// Rescans before giving up, and the time between them.
    pub tries: u32,
    pub interval: Duration,
}

impl Rescan {
    pub fn new(sysfs_pci: &Path) -> Rescan {
        Rescan {
            sysfs_pci: sysfs_pci.to_path_buf(),
            settle: Duration::from_secs(5),
            tries: 5,
            interval: Duration::from_secs(2),
        }
    }

    /// Removes `address` from the bus. Call right after the reboot request.
    pub fn remove(&self, address: PciAddress) -> Result<(), RescanError> {
        let dev = address.sysfs_path(&self.sysfs_pci);
        if dev.exists() {
            write(&dev.join("remove"), "1")?;
        }
        Ok(())
    }

    /// Waits, rescans until `address` is back, and binds it to vfio-pci.
    pub fn rescan(&self, address: PciAddress) -> Result<(), RescanError> {
        std::thread::sleep(self.settle);
        let dev = address.sysfs_path(&self.sysfs_pci);
        for attempt in 1..=self.tries {
            write(&self.sysfs_pci.join("rescan"), "1")?;
            if dev.join("config").exists() {
                tracing::info!(%address, attempt, "device back on the bus");
                write(&dev.join("driver_override"), "vfio-pci")?;
                write(&self.sysfs_pci.join("drivers_probe"), &address.to_string())?;
                return Ok(());
            }
            std::thread::sleep(self.interval);
        }
        Err(RescanError::NotBack {
            address,
            tries: self.tries,
            interval: self.interval,
        })
    }
}

fn write(path: &Path, value: &str) -> Result<(), RescanError> {
    tracing::debug!(path = %path.display(), value, "sysfs write");
    std::fs::write(path, value).map_err(|source| RescanError::Write {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake /sys/bus/pci where the device comes back after the second
    /// rescan (a thread playing the kernel).
    #[test]
    fn the_device_is_removed_rescanned_until_back_and_given_to_vfio() {
        let tmp = tempfile::tempdir().unwrap();
        let pci = tmp.path().join("bus/pci");
        let address: PciAddress = "0000:01:00.0".parse().unwrap();
        let dev = address.sysfs_path(&pci);
        std::fs::create_dir_all(&dev).unwrap();
        std::fs::write(dev.join("config"), "").unwrap();
        let r = Rescan {
            sysfs_pci: pci.clone(),
            settle: Duration::ZERO,
            tries: 4,
            interval: Duration::from_millis(50),
        };
        r.remove(address).unwrap();
        assert_eq!(std::fs::read_to_string(dev.join("remove")).unwrap(), "1");
        // The kernel removes the device...
        std::fs::remove_dir_all(&dev).unwrap();
        // ...and brings it back on the second rescan.
        let kernel = {
            let (pci, dev) = (pci.clone(), dev.clone());
            std::thread::spawn(move || {
                let mut seen = 0;
                while seen < 2 {
                    if std::fs::read_to_string(pci.join("rescan")).is_ok_and(|s| s == "1") {
                        std::fs::remove_file(pci.join("rescan")).unwrap();
                        seen += 1;
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
                std::fs::create_dir_all(&dev).unwrap();
                std::fs::write(dev.join("config"), "").unwrap();
            })
        };
        r.rescan(address).unwrap();
        kernel.join().unwrap();
        assert_eq!(
            std::fs::read_to_string(dev.join("driver_override")).unwrap(),
            "vfio-pci"
        );
        assert_eq!(
            std::fs::read_to_string(pci.join("drivers_probe")).unwrap(),
            "0000:01:00.0"
        );
    }

    #[test]
    fn a_device_that_never_returns_is_reported() {
        let tmp = tempfile::tempdir().unwrap();
        let pci = tmp.path().to_path_buf();
        let r = Rescan {
            sysfs_pci: pci,
            settle: Duration::ZERO,
            tries: 3,
            interval: Duration::from_millis(1),
        };
        let address: PciAddress = "0000:02:00.0".parse().unwrap();
        let e = r.rescan(address).unwrap_err();
        assert!(matches!(e, RescanError::NotBack { tries: 3, .. }), "{e}");
    }
}

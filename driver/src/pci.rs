//! PCI facts the VFIO backend needs: the card's vendor and device IDs,
//! device addresses, where a device lives in sysfs, and the command register
//! of its configuration space.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use bitflags::bitflags;

use crate::vfio::VfioError;

/// A PCI vendor and device ID pair, as `lspci -nn` prints it (`1234:484d`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PciId {
    pub vendor: u16,
    pub device: u16,
}

/// The IDs a Homa NIC's bitstream gives its PCIe function: the one place they
/// are defined (`homa-nic setup` finds cards by them; the firmware's
/// config.tcl must write the same). Vendor 0x1234 is the de-facto
/// experimental one, assigned by the PCI-SIG to no one (QEMU's emulated
/// devices and Corundum use it); device 0x484d is "HM", the prefix of the
/// register map's block types. Not Corundum's 1234:1001, the default of the
/// shell BOARDS.md 2.1 describes: Corundum's kernel driver claims that pair,
/// and `setup` would take a Corundum card for ours. A card is matched on the
/// pair, never on the vendor alone.
pub const HOMA_NIC_IDS: &[PciId] = &[PciId {
    vendor: 0x1234,
    device: 0x484d,
}];

impl fmt::Display for PciId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04x}:{:04x}", self.vendor, self.device)
    }
}

impl FromStr for PciId {
    type Err = VfioError;

    /// Parses `VVVV:DDDD` in hex, as `lspci -nn` prints it (an optional `0x` on each).
    fn from_str(s: &str) -> Result<Self, VfioError> {
        let bad = || VfioError::BadId(s.to_string());
        let (vendor, device) = s.trim().split_once(':').ok_or_else(bad)?;
        let hex = |t: &str| {
            let t = t.trim_start_matches("0x");
            if t.is_empty() || t.len() > 4 {
                return Err(bad());
            }
            u16::from_str_radix(t, 16).map_err(|_| bad())
        };
        Ok(PciId {
            vendor: hex(vendor)?,
            device: hex(device)?,
        })
    }
}

/// Byte offset of the 16-bit command register in PCI configuration space.
pub const COMMAND_OFFSET: u64 = 0x04;

bitflags! {
    /// The PCI command register (configuration space offset 0x04).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Command: u16 {
        /// The device answers I/O-space accesses.
        const IO_SPACE = 1 << 0;
        /// The device answers memory-space accesses (its BARs).
        const MEMORY_SPACE = 1 << 1;
        /// The device may issue DMA (bus master).
        const BUS_MASTER = 1 << 2;
        /// Legacy INTx interrupts are masked.
        const INTX_DISABLE = 1 << 10;
    }
}

/// A PCI device address (domain:bus:device.function), e.g. `0000:01:00.0`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PciAddress {
    pub domain: u16,
    pub bus: u8,
    /// Device number, 0..32.
    pub device: u8,
    /// Function number, 0..8.
    pub function: u8,
}

impl PciAddress {
    /// The device's directory under `sysfs_pci` (normally `/sys/bus/pci`).
    pub fn sysfs_path(&self, sysfs_pci: &Path) -> PathBuf {
        sysfs_pci.join("devices").join(self.to_string())
    }
}

impl fmt::Display for PciAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:04x}:{:02x}:{:02x}.{:x}",
            self.domain, self.bus, self.device, self.function
        )
    }
}

impl FromStr for PciAddress {
    type Err = VfioError;

    /// Parses `DDDD:BB:DD.F`, or `BB:DD.F` for domain 0, in hex as `lspci` prints them.
    fn from_str(s: &str) -> Result<Self, VfioError> {
        let bad = || VfioError::BadAddress(s.to_string());
        let parts: Vec<&str> = s.trim().split(':').collect();
        let (domain, bus, dev_fn) = match parts.as_slice() {
            [domain, bus, dev_fn] => (*domain, *bus, *dev_fn),
            [bus, dev_fn] => ("0", *bus, *dev_fn),
            _ => return Err(bad()),
        };
        let (device, function) = dev_fn.split_once('.').ok_or_else(bad)?;
        let hex = |t: &str, max: u32| -> Result<u32, VfioError> {
            if t.is_empty() || t.len() > 4 {
                return Err(bad());
            }
            u32::from_str_radix(t, 16)
                .ok()
                .filter(|v| *v <= max)
                .ok_or_else(bad)
        };
        Ok(PciAddress {
            domain: hex(domain, 0xffff)? as u16,
            bus: hex(bus, 0xff)? as u8,
            device: hex(device, 0x1f)? as u8,
            function: hex(function, 0x7)? as u8,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_parse_as_lspci_prints_them() {
        let a: PciAddress = "0000:3b:00.1".parse().unwrap();
        assert_eq!(
            a,
            PciAddress {
                domain: 0,
                bus: 0x3b,
                device: 0,
                function: 1
            }
        );
        assert_eq!(a.to_string(), "0000:3b:00.1");
        let short: PciAddress = "01:1f.7".parse().unwrap();
        assert_eq!(short.to_string(), "0000:01:1f.7");
        assert_eq!(
            a.sysfs_path(Path::new("/sys/bus/pci")),
            Path::new("/sys/bus/pci/devices/0000:3b:00.1")
        );
    }

    #[test]
    fn malformed_addresses_are_refused() {
        for s in [
            "",
            "0000:01:00",
            "01.00.0",
            "0000:01:20.0",
            "0000:01:00.8",
            "g0:00.0",
            "0000:100:00.0",
        ] {
            assert!(
                matches!(s.parse::<PciAddress>(), Err(VfioError::BadAddress(_))),
                "{s:?} parsed"
            );
        }
    }

    #[test]
    fn ids_parse_as_lspci_prints_them() {
        let id: PciId = "1234:11e8".parse().unwrap();
        assert_eq!(
            id,
            PciId {
                vendor: 0x1234,
                device: 0x11e8
            }
        );
        assert_eq!(id.to_string(), "1234:11e8");
        assert_eq!("0x1234:0x484d".parse::<PciId>().unwrap(), HOMA_NIC_IDS[0]);
        for s in [
            "",
            "1234",
            "1234:",
            ":1001",
            "12345:1001",
            "12g4:1001",
            "1234-1001",
        ] {
            assert!(
                matches!(s.parse::<PciId>(), Err(VfioError::BadId(_))),
                "{s:?} parsed"
            );
        }
    }

    #[test]
    fn command_bits_are_the_pci_specs() {
        assert_eq!(Command::MEMORY_SPACE.bits(), 0x2);
        assert_eq!(Command::BUS_MASTER.bits(), 0x4);
        let c = Command::from_bits_retain(0x0406);
        assert!(c.contains(Command::MEMORY_SPACE | Command::BUS_MASTER | Command::INTX_DISABLE));
    }
}

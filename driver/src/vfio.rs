//! The `vfio` backend: a real card, owned by this process through Linux VFIO.
//!
//! DESIGN NOTES
//! ------------
//! Opening a card (see [`VfioBackend::open`]):
//!  1. [`preflight`] checks the setup in sysfs and /dev before any ioctl, so
//!     each way it can be wrong (VFIO not loaded, no such device, device bound
//!     to another driver, IOMMU off) is its own [`VfioError`] saying what to
//!     run. The ioctls would report most of these as EINVAL or ENOENT.
//!  2. The VFIO container (/dev/vfio/vfio): API version and type1v2 IOMMU
//!     support are checked.
//!  3. The device's IOMMU group (/dev/vfio/N, N from the device's
//!     `iommu_group` link) is opened and checked viable, attached to the
//!     container, the container's IOMMU type is set, and the device fd is
//!     taken from the group.
//!  4. The BAR holding the register blocks (BAR0 unless configured) is
//!     mmapped from the device fd at the offset VFIO reports for it, with
//!     memmap2; registers are read and written as `volatile_register::RW<u32>`
//!     words of that mapping.
//!  5. Memory-space decoding and bus mastering are turned on in the command
//!     register of PCI configuration space (VFIO's config region), so the card
//!     answers BAR accesses and may DMA. Bus mastering is turned off again when
//!     the backend is dropped.
//!
//! DMA memory comes from `memory.rs` (hugepages when available) and is mapped
//! into the container's IOMMU domain with VFIO_IOMMU_MAP_DMA at an IOVA from a
//! bump allocator (see `dma.rs`); a buffer unmaps itself when dropped.
//!
//! Library choice: steps 2 and 3 and the DMA map/unmap use the `vfio-ioctls`
//! crate with its default features off. Its `kvm`/`mshv` features only
//! register groups with a hypervisor's VFIO pseudo-device, which a userspace
//! driver has none of: `VfioContainer::new(None)` and `VfioDevice::new` do
//! everything above without them. Two things it does not fit, done here
//! instead: its `region_read`/`region_write` log and swallow I/O errors, so
//! configuration space is read and written with positioned I/O on a
//! duplicate of the device fd; and it maps the group's failures to coarse
//! errors (`InvalidPath`, `GroupViable`), which `preflight` and
//! `device_error` turn into actionable ones.
//!
//! Interrupts (INTx, MSI, MSI-X) are delivered through eventfds: see
//! `vfio_irq.rs` and [`VfioBackend::enable_interrupts`].
//!
//! Nothing here knows the Homa card's registers: they are reached through
//! the [`Backend`] trait by `discovery.rs` and `regs.rs`. So this backend
//! opens any PCI device behind VFIO, and the VM test (testbench's
//! `vfio-edu-guest`, run by `make vfio-test`) runs exactly this code against
//! QEMU's `edu` device: open, region info, BAR access, DMA through the IOMMU,
//! interrupts, teardown.
//!
//! Not done here yet: a device reset at open (VFIO_DEVICE_RESET; the core has
//! its own reset through the register map once one exists), and querying the
//! IOMMU's valid IOVA ranges (VFIO_IOMMU_GET_INFO): the default IOVA window
//! avoids the usual reserved ranges, and a map that falls in one fails with a
//! [`VfioError::DmaMap`] naming the IOVA.

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::sync::Arc;

use bitflags::bitflags;
use memmap2::{MmapOptions, MmapRaw};
use vfio_bindings::bindings::vfio as sys;
use vfio_ioctls::{VfioContainer, VfioDevice};
use volatile_register::RW;

use crate::backend::{check_csr_offset, Backend};
use crate::dma::{DmaBuffer, DmaMemory, HostPtr, IovaSpace};
use crate::memory::HostMemory;
use crate::pci::{self, PciAddress};
pub use crate::vfio_irq::{Interrupts, IrqKind};
use crate::Error;

/// The kernel driver a card must be bound to.
pub const VFIO_PCI_DRIVER: &str = "vfio-pci";

/// First IOVA handed out by default: above 4 GiB, clear of the low memory
/// holes and the x86 MSI window (0xfee0_0000..0xfef0_0000) that IOMMUs reserve.
pub const IOVA_BASE: u64 = 1 << 32;

/// End of the default IOVA window: 2^39, the narrowest address width of
/// current IOMMUs (Intel VT-d with 3-level tables), so the window is valid
/// everywhere.
pub const IOVA_END: u64 = 1 << 39;

bitflags! {
    /// Flags of a VFIO region (`struct vfio_region_info`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct RegionFlags: u32 {
        const READ = sys::VFIO_REGION_INFO_FLAG_READ;
        const WRITE = sys::VFIO_REGION_INFO_FLAG_WRITE;
        const MMAP = sys::VFIO_REGION_INFO_FLAG_MMAP;
        const CAPS = sys::VFIO_REGION_INFO_FLAG_CAPS;
    }
}

/// A VFIO setup or access failure; each message says what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum VfioError {
    #[error("{0:?} is not a PCI address: write it as lspci -D prints it, DDDD:BB:DD.F (e.g. 0000:01:00.0)")]
    BadAddress(String),
    #[error(
        "{0:?} is not a PCI ID: write it as lspci -nn prints it, VVVV:DDDD in hex (e.g. 1234:484d)"
    )]
    BadId(String),
    #[error("VFIO is not available: {path} does not exist. Load it with `modprobe vfio-pci`; if that fails, the kernel lacks VFIO or the IOMMU is off (enable VT-d/AMD-Vi in the firmware setup and boot with intel_iommu=on or amd_iommu=on)")]
    NoVfio { path: PathBuf },
    #[error("no PCI device {address} ({path} does not exist): `lspci -D` lists this machine's devices and their addresses")]
    NoSuchDevice { address: PciAddress, path: PathBuf },
    #[error("PCI device {address} is bound to {}, not to {VFIO_PCI_DRIVER}. Hand it to {VFIO_PCI_DRIVER} with `sudo homa-nic setup --device {address}` (which also checks its IOMMU group), or by hand (as root):\n{steps}", .driver.as_deref().unwrap_or("no driver"))]
    NotBoundToVfio {
        address: PciAddress,
        /// The driver it is bound to, if any.
        driver: Option<String>,
        /// Shell commands that bind it to vfio-pci.
        steps: String,
    },
    #[error("PCI device {address} has no IOMMU group ({path} is missing): turn the IOMMU on (VT-d/AMD-Vi in the firmware setup, intel_iommu=on or amd_iommu=on on the kernel command line)")]
    NoIommuGroup { address: PciAddress, path: PathBuf },
    #[error("{path} does not exist although {address} is bound to {VFIO_PCI_DRIVER}: is /dev populated (devtmpfs) in this container or chroot?")]
    GroupMissing { address: PciAddress, path: PathBuf },
    #[error("cannot open {path}: {source}. Run as root, or give your user the group: chown $USER {path}")]
    GroupPermission { path: PathBuf, source: io::Error },
    #[error("{path} is busy: another process (a VM, another homa-nic) holds IOMMU group {group}")]
    GroupBusy { path: PathBuf, group: u32 },
    #[error("IOMMU group {group} is not viable: every device in it must be bound to {VFIO_PCI_DRIVER} or to no driver (they are listed in /sys/kernel/iommu_groups/{group}/devices)")]
    GroupNotViable { group: u32 },
    #[error("opening the VFIO container /dev/vfio/vfio: {0} (this driver needs the type1v2 IOMMU backend: modprobe vfio_iommu_type1)")]
    Container(#[source] vfio_ioctls::VfioError),
    #[error("opening PCI device {address} through VFIO: {source}")]
    Device {
        address: PciAddress,
        source: vfio_ioctls::VfioError,
    },
    #[error("BAR{bar} is not a memory BAR index (0 to 5)")]
    BadBar { bar: u32 },
    #[error("BAR{bar} of {address} is absent (size 0): the bitstream puts its registers in another BAR; choose it with --bar")]
    BarAbsent { address: PciAddress, bar: u32 },
    #[error("BAR{bar} of {address} cannot be mapped read/write by VFIO (region flags {flags:?})")]
    BarNotMappable {
        address: PciAddress,
        bar: u32,
        flags: RegionFlags,
    },
    #[error("mmap of BAR{bar} of {address} ({bytes} bytes): {source}")]
    BarMap {
        address: PciAddress,
        bar: u32,
        bytes: u64,
        source: io::Error,
    },
    #[error("PCI configuration space of {address}, offset {offset:#x}: {source}")]
    Config {
        address: PciAddress,
        offset: u64,
        source: io::Error,
    },
    #[error("mapping {bytes} bytes at IOVA {iova:#x} into the IOMMU: {source}")]
    DmaMap {
        iova: u64,
        bytes: usize,
        source: vfio_ioctls::VfioError,
    },
    #[error("unmapping {bytes} bytes at IOVA {iova:#x} from the IOMMU: {source}")]
    DmaUnmap {
        iova: u64,
        bytes: usize,
        source: vfio_ioctls::VfioError,
    },
    #[error("the IOVA window {start:#x}..{end:#x} is empty or not page aligned")]
    BadIovaWindow { start: u64, end: u64 },
    #[error("{address} offers {available} {kind} interrupt vector(s), {wanted} asked for")]
    IrqUnavailable {
        address: PciAddress,
        kind: IrqKind,
        available: u32,
        wanted: u32,
    },
    #[error("{action} {kind} interrupts of {address}: {source}")]
    Irq {
        address: PciAddress,
        kind: IrqKind,
        /// What was being done ("enabling", "unmasking", ...).
        action: &'static str,
        source: vfio_ioctls::VfioError,
    },
    #[error("eventfd for {kind} interrupt vector {vector} of {address}: {source}")]
    EventFd {
        address: PciAddress,
        kind: IrqKind,
        vector: u32,
        source: io::Error,
    },
    #[error("no {kind} interrupt on vector {vector} of {address} within {waited_ms} ms")]
    IrqTimeout {
        address: PciAddress,
        kind: IrqKind,
        vector: u32,
        waited_ms: u128,
    },
}

/// Where the system's VFIO and PCI files are; only tests point them elsewhere.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SystemPaths {
    /// The PCI bus in sysfs (`/sys/bus/pci`): `devices/<address>/` and `drivers/`.
    pub sysfs_pci: PathBuf,
    /// The VFIO character devices (`/dev/vfio`): `vfio` and one file per group.
    pub dev_vfio: PathBuf,
}

impl Default for SystemPaths {
    fn default() -> Self {
        SystemPaths {
            sysfs_pci: PathBuf::from("/sys/bus/pci"),
            dev_vfio: PathBuf::from("/dev/vfio"),
        }
    }
}

/// Which card to open and where its registers are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VfioConfig {
    pub address: PciAddress,
    /// Index of the BAR holding the register blocks (0 to 5).
    pub bar: u32,
    pub paths: SystemPaths,
    /// IOVAs DMA buffers are given ([`IOVA_BASE`]..[`IOVA_END`] by default);
    /// a device with fewer DMA address bits needs a lower window.
    pub iova_window: std::ops::Range<u64>,
}

impl VfioConfig {
    /// The card at `address`, registers in BAR0.
    pub fn new(address: PciAddress) -> Self {
        VfioConfig {
            address,
            bar: sys::VFIO_PCI_BAR0_REGION_INDEX,
            paths: SystemPaths::default(),
            iova_window: IOVA_BASE..IOVA_END,
        }
    }
}

/// Checks, before any ioctl, that the card at `address` can be opened through
/// VFIO, and returns its IOMMU group number.
pub fn preflight(address: PciAddress, paths: &SystemPaths) -> Result<u32, VfioError> {
    let container = paths.dev_vfio.join("vfio");
    if !container.exists() {
        return Err(VfioError::NoVfio { path: container });
    }
    let device = address.sysfs_path(&paths.sysfs_pci);
    if !device.exists() {
        return Err(VfioError::NoSuchDevice {
            address,
            path: device,
        });
    }
    let driver = link_name(&device.join("driver"));
    if driver.as_deref() != Some(VFIO_PCI_DRIVER) {
        let steps = bind_steps(address, driver.as_deref(), &device, paths);
        return Err(VfioError::NotBoundToVfio {
            address,
            driver,
            steps,
        });
    }
    let group_link = device.join("iommu_group");
    let Some(group) = link_name(&group_link).and_then(|g| g.parse::<u32>().ok()) else {
        return Err(VfioError::NoIommuGroup {
            address,
            path: group_link,
        });
    };
    let group_file = paths.dev_vfio.join(group.to_string());
    if !group_file.exists() {
        return Err(VfioError::GroupMissing {
            address,
            path: group_file,
        });
    }
    Ok(group)
}

/// The last component of the symlink at `link`, if it is one.
fn link_name(link: &Path) -> Option<String> {
    let target = std::fs::read_link(link).ok()?;
    Some(target.file_name()?.to_string_lossy().into_owned())
}

/// The commands that move `address` from `driver` to vfio-pci.
fn bind_steps(
    address: PciAddress,
    driver: Option<&str>,
    device: &Path,
    paths: &SystemPaths,
) -> String {
    let mut steps = vec!["modprobe vfio-pci".to_string()];
    if driver.is_some() {
        steps.push(format!(
            "echo {address} > {}",
            device.join("driver/unbind").display()
        ));
    }
    steps.push(format!(
        "echo {VFIO_PCI_DRIVER} > {}",
        device.join("driver_override").display()
    ));
    steps.push(format!(
        "echo {address} > {}",
        paths.sysfs_pci.join("drivers_probe").display()
    ));
    let mut text: String = steps.iter().map(|s| format!("  {s}\n")).collect();
    // Binding by ID takes every device with the same IDs; worth knowing as an alternative.
    let id = |f: &str| {
        std::fs::read_to_string(device.join(f))
            .ok()
            .map(|s| s.trim().trim_start_matches("0x").to_string())
    };
    if let (Some(vendor), Some(dev)) = (id("vendor"), id("device")) {
        text.push_str(&format!(
            "(or bind every {vendor}:{dev} device: echo {vendor} {dev} > {})",
            paths.sysfs_pci.join("drivers/vfio-pci/new_id").display()
        ));
    }
    text.trim_end().to_string()
}

/// A vfio-ioctls failure opening the device, made actionable where it can be.
fn device_error(
    address: PciAddress,
    group: u32,
    paths: &SystemPaths,
    e: vfio_ioctls::VfioError,
) -> VfioError {
    let path = paths.dev_vfio.join(group.to_string());
    match e {
        vfio_ioctls::VfioError::OpenGroup(source, _)
            if source.kind() == io::ErrorKind::PermissionDenied =>
        {
            VfioError::GroupPermission { path, source }
        }
        vfio_ioctls::VfioError::OpenGroup(source, _)
            if source.raw_os_error() == Some(libc::EBUSY) =>
        {
            VfioError::GroupBusy { path, group }
        }
        vfio_ioctls::VfioError::GroupViable => VfioError::GroupNotViable { group },
        source => VfioError::Device { address, source },
    }
}

/// What VFIO says about one region of a device (`struct vfio_region_info`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegionInfo {
    pub index: u32,
    /// Size in bytes; 0 for an absent BAR.
    pub bytes: u64,
    /// Offset of the region in the device fd (for pread/pwrite and mmap).
    pub offset: u64,
    pub flags: RegionFlags,
}

/// A real Homa NIC through VFIO. Field order is drop order: the BAR is
/// unmapped before the device fd closes, and the device leaves the container
/// before the container closes.
pub struct VfioBackend {
    address: PciAddress,
    /// Index of the mapped BAR.
    bar_index: u32,
    /// The register window: the BAR, mapped shared and uncached by VFIO.
    bar: MmapRaw,
    /// A duplicate of the device fd, for positioned I/O on configuration space.
    config: File,
    /// Offset of configuration space in the device fd (from VFIO's region info).
    config_offset: u64,
    /// IOVAs of DMA buffers, and which are live.
    iova: Arc<IovaSpace>,
    device: VfioDevice,
    /// The IOMMU domain; DMA buffers hold it too, to unmap themselves.
    container: Arc<VfioContainer>,
    /// The eventfds of the MSI-X vectors [`Backend::enable_interrupts`]
    /// turned on, in vector order (empty: none).
    msix: std::sync::Mutex<Vec<vmm_sys_util::eventfd::EventFd>>,
}

impl VfioBackend {
    /// Opens the card: see the module's DESIGN NOTES for the steps.
    pub fn open(config: &VfioConfig) -> Result<Self, Error> {
        let address = config.address;
        let bar_index = config.bar;
        if bar_index > sys::VFIO_PCI_BAR5_REGION_INDEX {
            return Err(VfioError::BadBar { bar: bar_index }.into());
        }
        let window = config.iova_window.clone();
        let page = crate::memory::system_page_bytes() as u64;
        if window.start >= window.end
            || !window.start.is_multiple_of(page)
            || !window.end.is_multiple_of(page)
        {
            return Err(VfioError::BadIovaWindow {
                start: window.start,
                end: window.end,
            }
            .into());
        }
        let group = preflight(address, &config.paths)?;
        let sysfs_path = address.sysfs_path(&config.paths.sysfs_pci);

        let container = Arc::new(VfioContainer::new(None).map_err(VfioError::Container)?);
        let device = VfioDevice::new(&sysfs_path, container.clone(), false)
            .map_err(|e| device_error(address, group, &config.paths, e))?;

        let flags = RegionFlags::from_bits_truncate(device.get_region_flags(bar_index));
        let bar_bytes = device.get_region_size(bar_index);
        if bar_bytes == 0 {
            return Err(VfioError::BarAbsent {
                address,
                bar: bar_index,
            }
            .into());
        }
        if !flags.contains(RegionFlags::READ | RegionFlags::WRITE | RegionFlags::MMAP) {
            return Err(VfioError::BarNotMappable {
                address,
                bar: bar_index,
                flags,
            }
            .into());
        }
        let map_error = |source| VfioError::BarMap {
            address,
            bar: bar_index,
            bytes: bar_bytes,
            source,
        };
        let len = usize::try_from(bar_bytes)
            .map_err(|_| map_error(io::Error::from(io::ErrorKind::InvalidInput)))?;
        let bar = MmapOptions::new()
            .offset(device.get_region_offset(bar_index))
            .len(len)
            .map_raw(device.as_raw_fd())
            .map_err(map_error)?;

        // SAFETY: the device fd is open for as long as `device` lives, which
        // outlasts this call; the duplicate is owned by the File.
        let config_fd = unsafe { BorrowedFd::borrow_raw(device.as_raw_fd()) }
            .try_clone_to_owned()
            .map_err(|source| VfioError::Config {
                address,
                offset: 0,
                source,
            })?;
        let backend = VfioBackend {
            address,
            bar_index,
            bar,
            config: File::from(config_fd),
            config_offset: device.get_region_offset(sys::VFIO_PCI_CONFIG_REGION_INDEX),
            iova: Arc::new(IovaSpace::new(window.start, window.end)),
            device,
            container,
            msix: Default::default(),
        };
        let command = backend.read_command()?;
        backend.write_command(command | pci::Command::MEMORY_SPACE | pci::Command::BUS_MASTER)?;
        tracing::info!(%address, bar = bar_index, bar_bytes, group, "opened card through VFIO");
        Ok(backend)
    }

    /// The card's PCI address.
    pub fn address(&self) -> PciAddress {
        self.address
    }

    /// The VFIO device, for what this backend does not wrap.
    pub fn vfio_device(&self) -> &VfioDevice {
        &self.device
    }

    /// What VFIO reports of region `index` (a BAR 0-5, or the configuration
    /// space, `VFIO_PCI_CONFIG_REGION_INDEX`).
    pub fn region(&self, index: u32) -> RegionInfo {
        RegionInfo {
            index,
            bytes: self.device.get_region_size(index),
            offset: self.device.get_region_offset(index),
            flags: RegionFlags::from_bits_truncate(self.device.get_region_flags(index)),
        }
    }

    /// Index of the BAR mapped as the register window.
    pub fn bar_index(&self) -> u32 {
        self.bar_index
    }

    /// Turns on `count` vectors of `kind` interrupts, each signalling its own
    /// eventfd; they are turned off when the returned value is dropped.
    pub fn enable_interrupts(
        &self,
        kind: IrqKind,
        count: u32,
    ) -> Result<Interrupts<'_>, VfioError> {
        Interrupts::enable(&self.device, self.address, kind, count)
    }

    /// The PCI command register.
    pub fn read_command(&self) -> Result<pci::Command, VfioError> {
        let mut word = [0u8; 2];
        self.config
            .read_exact_at(&mut word, self.config_offset + pci::COMMAND_OFFSET)
            .map_err(|source| self.config_error(source))?;
        Ok(pci::Command::from_bits_retain(u16::from_le_bytes(word)))
    }

    /// Writes the PCI command register.
    pub fn write_command(&self, command: pci::Command) -> Result<(), VfioError> {
        self.config
            .write_all_at(
                &command.bits().to_le_bytes(),
                self.config_offset + pci::COMMAND_OFFSET,
            )
            .map_err(|source| self.config_error(source))
    }

    fn config_error(&self, source: io::Error) -> VfioError {
        VfioError::Config {
            address: self.address,
            offset: pci::COMMAND_OFFSET,
            source,
        }
    }

    /// The BAR as 32-bit registers.
    fn words(&self) -> &[RW<u32>] {
        // SAFETY: the mapping is page aligned and `len` bytes long, and lives
        // as long as `self`. `RW<u32>` is a transparent volatile cell around a
        // u32 (an UnsafeCell), so shared references to memory the card changes
        // are allowed, and every access through it is one volatile 32-bit load
        // or store, which the PCIe root complex turns into one register access.
        unsafe {
            std::slice::from_raw_parts(self.bar.as_ptr().cast::<RW<u32>>(), self.bar.len() / 4)
        }
    }
}

impl Backend for VfioBackend {
    fn describe(&self) -> String {
        format!(
            "VFIO {} BAR{} ({} bytes)",
            self.address,
            self.bar_index,
            self.bar.len()
        )
    }

    fn csr_window_bytes(&self) -> u64 {
        self.bar.len() as u64
    }

    fn csr_read(&self, offset: u32) -> Result<u32, Error> {
        check_csr_offset(offset, self.csr_window_bytes())?;
        // PCIe registers are little-endian.
        Ok(u32::from_le(self.words()[offset as usize / 4].read()))
    }

    fn csr_write(&self, offset: u32, value: u32) -> Result<(), Error> {
        check_csr_offset(offset, self.csr_window_bytes())?;
        // Descriptors written to DMA memory before this call must be visible
        // to the card before the doorbell: the fence keeps the compiler (and a
        // weakly ordered CPU) from moving earlier stores past the MMIO store.
        std::sync::atomic::fence(std::sync::atomic::Ordering::Release);
        // SAFETY: a register write has whatever effect the register map gives
        // it; that is the point of calling this. The offset is checked above.
        unsafe { self.words()[offset as usize / 4].write(value.to_le()) };
        Ok(())
    }

    fn dma_alloc(&self, bytes: usize) -> Result<DmaBuffer, Error> {
        let mut host = HostMemory::allocate(bytes)?;
        let len = host.len();
        let iova = self.iova.reserve(len, host.page_bytes())?;
        let ptr = NonNull::new(host.as_mut_ptr()).expect("mmap does not return null");
        // SAFETY: `ptr` is `len` bytes of anonymous memory owned by `host`, to
        // which no Rust reference exists; from here on it is reached only
        // through raw pointers (`HostPtr`, or `DmaBuffer::host_ptr`, whose
        // users must tolerate the card changing the bytes), and it stays
        // mapped until the buffer unmaps it from the IOMMU before `host` is
        // dropped.
        unsafe { self.container.vfio_dma_map(iova, len, ptr.as_ptr()) }.map_err(|source| {
            VfioError::DmaMap {
                iova,
                bytes: len,
                source,
            }
        })?;
        self.iova.insert(iova, ptr, len);
        tracing::debug!(
            iova,
            len,
            hugepage = host.is_hugepage(),
            "DMA buffer mapped"
        );
        let memory = IommuMemory {
            // SAFETY: `host` (moved into the same struct) keeps the `len`
            // bytes at `ptr` mapped; moving the MmapMut does not move them.
            ptr: unsafe { HostPtr::new(ptr, len) },
            host,
            iova,
            len,
            mapped: true,
            space: self.iova.clone(),
            container: self.container.clone(),
        };
        Ok(DmaBuffer::new(len, iova, Box::new(memory)))
    }

    fn dma_read(&self, iova: u64, out: &mut [u8]) -> Result<(), Error> {
        Ok(self.iova.card_read(iova, out)?)
    }

    fn dma_write(&self, iova: u64, data: &[u8]) -> Result<(), Error> {
        Ok(self.iova.card_write(iova, data)?)
    }

    fn enable_interrupts(&self, vectors: u32) -> Result<(), Error> {
        let mut msix = self.msix.lock().unwrap_or_else(|e| e.into_inner());
        if !msix.is_empty() {
            self.device
                .disable_irq(IrqKind::MsiX.index())
                .map_err(|source| VfioError::Irq {
                    address: self.address,
                    kind: IrqKind::MsiX,
                    action: "disabling",
                    source,
                })?;
            msix.clear();
        }
        *msix =
            crate::vfio_irq::enable_eventfds(&self.device, self.address, IrqKind::MsiX, vectors)?;
        Ok(())
    }

    fn wait_interrupt(&self, vector: u32, timeout: std::time::Duration) -> Result<u64, Error> {
        let msix = self.msix.lock().unwrap_or_else(|e| e.into_inner());
        let fd = msix.get(vector as usize).ok_or(Error::NoSuchVector {
            vector,
            enabled: msix.len() as u32,
        })?;
        match crate::vfio_irq::wait_eventfd(fd, self.address, IrqKind::MsiX, vector, timeout) {
            Ok(n) => Ok(n),
            Err(VfioError::IrqTimeout { .. }) => Ok(0),
            Err(e) => Err(e.into()),
        }
    }

    fn advance(&self, cycles: u64) {
        for _ in 0..cycles {
            std::hint::spin_loop();
        }
    }
}

impl Drop for VfioBackend {
    fn drop(&mut self) {
        let msix = self.msix.get_mut().unwrap_or_else(|e| e.into_inner());
        if !msix.is_empty() {
            if let Err(e) = self.device.disable_irq(IrqKind::MsiX.index()) {
                tracing::warn!("disabling MSI-X: {e}");
            }
        }
        // Stop the card's DMA before the memory it may target goes away.
        match self.read_command() {
            Ok(command) => {
                if let Err(e) = self.write_command(command - pci::Command::BUS_MASTER) {
                    tracing::warn!("turning bus mastering off: {e}");
                }
            }
            Err(e) => tracing::warn!("turning bus mastering off: {e}"),
        }
    }
}

/// DMA memory of a real card: hugepage-backed host memory mapped in the IOMMU.
struct IommuMemory {
    /// The bytes of `host`.
    ptr: HostPtr,
    /// The host memory; dropped (munmapped) after the IOMMU mapping is gone.
    host: HostMemory,
    /// IOVA of byte 0.
    iova: u64,
    /// Bytes mapped.
    len: usize,
    /// Still mapped in the IOMMU.
    mapped: bool,
    space: Arc<IovaSpace>,
    container: Arc<VfioContainer>,
}

impl DmaMemory for IommuMemory {
    fn read(&self, offset: usize, out: &mut [u8]) {
        self.ptr.read(offset, out)
    }

    fn write(&mut self, offset: usize, data: &[u8]) {
        self.ptr.write(offset, data)
    }

    fn host_ptr(&self) -> Option<NonNull<u8>> {
        Some(self.ptr.as_non_null())
    }

    fn release(&mut self) -> Result<(), Error> {
        self.space.remove(self.iova);
        if self.mapped {
            self.mapped = false;
            // If this fails, the pages stay pinned by the kernel until the
            // container closes; unmapping them below cannot hand memory the
            // card can still write to anyone else.
            self.container
                .vfio_dma_unmap(self.iova, self.len)
                .map_err(|source| VfioError::DmaUnmap {
                    iova: self.iova,
                    bytes: self.len,
                    source,
                })?;
        }
        tracing::trace!(
            iova = self.iova,
            hugepage = self.host.is_hugepage(),
            "DMA buffer unmapped"
        );
        Ok(())
    }
}

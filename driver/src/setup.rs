//! Preparing a machine for a card (`homa-nic setup`): find the cards by PCI
//! ID, hand them to vfio-pci, check the IOMMU and the card's IOMMU group,
//! reserve hugepages, give a user the group's /dev/vfio file, check the
//! memlock limit; and give a card back to the driver it had before.
//!
//! DESIGN NOTES
//! ------------
//! Plan, then act. [`plan_setup`] and [`plan_reset`] only read sysfs and
//! /dev; they return a [`Plan`]: the writes to make, in order, each with the
//! reason for it, plus notes and refusals. `--dry-run` prints the plan;
//! [`Plan::execute`] carries out exactly those steps. So a dry run cannot say
//! one thing and a real run do another, and the tests, which cannot bind a
//! driver on a fake sysfs tree, check the same plan the real run follows.
//!
//! Everything is read under a [`SetupPaths`] (a sysfs root, a /dev root and
//! the state file), so the tests build a fake tree as each machine leaves it.
//!
//! Binding uses `driver_override` (as DPDK's devbind and SPDK's setup.sh do):
//! write `vfio-pci` to the device's `driver_override`, unbind it from its
//! driver, and ask the bus to probe it again (`drivers_probe`); only vfio-pci
//! may then take it. Binding by ID (`new_id`) would take every device with
//! the same IDs, including ones the user did not name.
//!
//! A card is refused, and nothing is written for it, when VFIO could not
//! open it afterwards anyway: the IOMMU is off (no IOMMU group), vfio-pci is
//! not loaded, or its IOMMU group holds other devices still on host drivers
//! (VFIO needs every device of a group on vfio-pci, pci-stub or no driver;
//! bridges are exempt). `--bind-group` binds those other devices too.
//!
//! The previous driver of each card is remembered in a state file (by
//! default /run/homa-nic/previous-drivers, one `BDF driver` line each):
//! /run is cleared at boot, and so is every binding this makes, so the file
//! never outlives what it describes. A card set up twice keeps its first
//! entry: the second time its driver is vfio-pci, which is not the one to
//! give it back to.

use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::io;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::memory::HUGE_PAGE_BYTES;
use crate::pci::{PciAddress, PciId};
use crate::vfio::{SystemPaths, VFIO_PCI_DRIVER};

/// Drivers VFIO accepts on the other devices of a card's IOMMU group (besides
/// vfio-pci itself and no driver): pci-stub only holds a device.
const GROUP_SAFE_DRIVERS: &[&str] = &[VFIO_PCI_DRIVER, "pci-stub"];

/// PCI class code (base class, subclass) of a PCI-to-PCI bridge. VFIO does
/// not require bridges in a group to leave their driver (pcieport).
const BRIDGE_CLASS: u32 = 0x0604;

/// How long a real run waits for /dev/vfio/N to appear after binding.
const DEV_FILE_WAIT: Duration = Duration::from_secs(2);

/// Mode given to /dev/vfio/N for its new owner: read/write for owner and group.
const GROUP_FILE_MODE: u32 = 0o660;

/// Where sysfs, /dev and the state file are; only tests point them elsewhere.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetupPaths {
    /// The sysfs mount (`/sys`).
    pub sys: PathBuf,
    /// The device directory (`/dev`).
    pub dev: PathBuf,
    /// The file remembering each card's previous driver.
    pub state: PathBuf,
}

impl Default for SetupPaths {
    fn default() -> Self {
        SetupPaths {
            sys: PathBuf::from("/sys"),
            dev: PathBuf::from("/dev"),
            state: PathBuf::from("/run/homa-nic/previous-drivers"),
        }
    }
}

impl SetupPaths {
    /// The PCI bus in sysfs.
    pub fn pci(&self) -> PathBuf {
        self.sys.join("bus/pci")
    }

    fn device(&self, address: PciAddress) -> PathBuf {
        address.sysfs_path(&self.pci())
    }

    fn driver_dir(&self, driver: &str) -> PathBuf {
        self.pci().join("drivers").join(driver)
    }

    fn group_devices(&self, group: u32) -> PathBuf {
        self.sys
            .join("kernel/iommu_groups")
            .join(group.to_string())
            .join("devices")
    }

    /// The 2 MiB hugepage pool's directory.
    fn hugepages(&self) -> PathBuf {
        self.sys.join(format!(
            "kernel/mm/hugepages/hugepages-{}kB",
            HUGE_PAGE_BYTES / 1024
        ))
    }

    /// The group's character device.
    pub fn group_file(&self, group: u32) -> PathBuf {
        self.dev.join("vfio").join(group.to_string())
    }

    /// The same places as the VFIO backend's paths.
    pub fn vfio_paths(&self) -> SystemPaths {
        SystemPaths {
            sysfs_pci: self.pci(),
            dev_vfio: self.dev.join("vfio"),
        }
    }
}

/// A refusal or failure of `homa-nic setup`; each says why and what to do.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("no Homa NIC found: no PCI device in {pci} has the ID {ids}. Is the bitstream loaded and the card seated? `lspci -nn` lists the IDs present; after loading a bitstream, rescan with `echo 1 > /sys/bus/pci/rescan`; a card with other IDs is named with --id VVVV:DDDD")]
    NoCards { pci: PathBuf, ids: String },
    #[error("{address} is not a Homa NIC: there is no such device, or its ID is not {ids} (`lspci -nn -s {address}` shows it; name other IDs with --id VVVV:DDDD)")]
    NotACard { address: PciAddress, ids: String },
    #[error("{address}: the IOMMU is off ({address} has no IOMMU group), so VFIO cannot give the card to a process safely. Turn on VT-d (Intel) or AMD-Vi/IOMMU (AMD) in the firmware setup, boot with intel_iommu=on (Intel) or amd_iommu=on (AMD), and check with `dmesg | grep -i -e DMAR -e IOMMU`")]
    NoIommu { address: PciAddress },
    #[error("{address} shares IOMMU group {group} with devices still on host drivers: {others}. VFIO can only open a group whose every device is on vfio-pci or on no driver. Give them to vfio-pci too with --bind-group (they leave the host until --reset), or move the card to a slot with its own group (one behind an ACS-capable root port)")]
    SharedGroup {
        address: PciAddress,
        group: u32,
        /// The other devices and their drivers, described.
        others: String,
    },
    #[error("the vfio-pci driver is not loaded ({path} does not exist): load it with `modprobe vfio-pci` (and make it load at boot: `echo vfio-pci > /etc/modules-load.d/vfio-pci.conf`), then run this again")]
    VfioNotLoaded { path: PathBuf },
    #[error("reading {path}: {source}")]
    Read { path: PathBuf, source: io::Error },
    #[error("writing {value:?} to {path}: {source}{hint}", hint = if source.kind() == io::ErrorKind::PermissionDenied { ". Run homa-nic setup as root (sudo)" } else { "" })]
    Write {
        path: PathBuf,
        value: String,
        source: io::Error,
    },
    #[error("giving {path} to {owner}: {source}. Run homa-nic setup as root (sudo)")]
    Chown {
        path: PathBuf,
        owner: String,
        source: io::Error,
    },
    #[error("{path} did not appear within {waited_ms} ms of binding to vfio-pci: is /dev a devtmpfs (or udev running) here?")]
    NoGroupFile { path: PathBuf, waited_ms: u128 },
    #[error("{address} is on {}, not vfio-pci, after the probe: the kernel refused to bind it; `dmesg | tail` says why (often: the IOMMU group is not viable, or vfio-pci lacks the device's IDs)", .driver.as_deref().unwrap_or("no driver"))]
    NotBound {
        address: PciAddress,
        driver: Option<String>,
    },
    #[error("the state file {path} line {line} is not `BDF driver`: {text:?}. It is written by homa-nic setup; delete it and give the card back by hand (echo BDF > /sys/bus/pci/drivers/DRIVER/bind)")]
    BadState {
        path: PathBuf,
        line: usize,
        text: String,
    },
}

/// One PCI device as sysfs shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PciDevice {
    pub address: PciAddress,
    pub id: PciId,
    /// Class code, 24 bits (base class, subclass, programming interface).
    pub class: u32,
    /// The driver it is bound to.
    pub driver: Option<String>,
    /// What `driver_override` holds, if set.
    pub driver_override: Option<String>,
    /// Its IOMMU group, if the IOMMU is on.
    pub iommu_group: Option<u32>,
}

impl PciDevice {
    /// Reads the device at `address` from sysfs.
    pub fn read(paths: &SetupPaths, address: PciAddress) -> Result<Self, SetupError> {
        let dir = paths.device(address);
        let hex = |name: &str| -> Result<u32, SetupError> {
            let path = dir.join(name);
            let text = read_trimmed(&path)?;
            u32::from_str_radix(text.trim_start_matches("0x"), 16).map_err(|_| SetupError::Read {
                path,
                source: io::Error::new(io::ErrorKind::InvalidData, format!("{text:?} is not hex")),
            })
        };
        let driver_override = match read_trimmed(&dir.join("driver_override")) {
            Ok(s) if s.is_empty() || s == "(null)" => None,
            Ok(s) => Some(s),
            Err(_) => None,
        };
        Ok(PciDevice {
            address,
            id: PciId {
                vendor: hex("vendor")? as u16,
                device: hex("device")? as u16,
            },
            class: hex("class").unwrap_or(0),
            driver: link_name(&dir.join("driver")),
            driver_override,
            iommu_group: link_name(&dir.join("iommu_group")).and_then(|g| g.parse().ok()),
        })
    }

    fn is_bridge(&self) -> bool {
        self.class >> 8 == BRIDGE_CLASS
    }

    /// Whether VFIO accepts this device, as it is, in a group it opens.
    fn fine_in_a_vfio_group(&self) -> bool {
        self.is_bridge()
            || self
                .driver
                .as_deref()
                .is_none_or(|d| GROUP_SAFE_DRIVERS.contains(&d))
    }

    fn describe(&self) -> String {
        format!(
            "{} [{}] on {}",
            self.address,
            self.id,
            self.driver.as_deref().unwrap_or("no driver")
        )
    }
}

fn read_trimmed(path: &Path) -> Result<String, SetupError> {
    fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .map_err(|source| SetupError::Read {
            path: path.to_path_buf(),
            source,
        })
}

/// The last component of the symlink at `link`, if it is one.
fn link_name(link: &Path) -> Option<String> {
    let target = fs::read_link(link).ok()?;
    Some(target.file_name()?.to_string_lossy().into_owned())
}

/// Every PCI device with one of `ids`, in address order.
pub fn find_cards(paths: &SetupPaths, ids: &[PciId]) -> Result<Vec<PciDevice>, SetupError> {
    let mut cards: Vec<PciDevice> = all_devices(paths)?
        .into_iter()
        .filter(|d| ids.contains(&d.id))
        .collect();
    cards.sort_by_key(|d| d.address);
    Ok(cards)
}

fn all_devices(paths: &SetupPaths) -> Result<Vec<PciDevice>, SetupError> {
    let dir = paths.pci().join("devices");
    let entries = fs::read_dir(&dir).map_err(|source| SetupError::Read {
        path: dir.clone(),
        source,
    })?;
    let mut devices = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        // sysfs only holds devices here; anything else (a test's stray file) is skipped.
        if let Ok(address) = name.parse::<PciAddress>() {
            devices.push(PciDevice::read(paths, address)?);
        }
    }
    Ok(devices)
}

/// The devices of IOMMU group `group` other than `except`.
pub fn group_peers(
    paths: &SetupPaths,
    group: u32,
    except: PciAddress,
) -> Result<Vec<PciDevice>, SetupError> {
    let dir = paths.group_devices(group);
    let entries = fs::read_dir(&dir).map_err(|source| SetupError::Read {
        path: dir.clone(),
        source,
    })?;
    let mut peers = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        match name.parse::<PciAddress>() {
            Ok(address) if address != except => peers.push(PciDevice::read(paths, address)?),
            _ => {}
        }
    }
    peers.sort_by_key(|d| d.address);
    Ok(peers)
}

/// Who gets a card's /dev/vfio/N.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owner {
    /// The user or group as named on the command line, for messages.
    pub name: String,
    pub uid: Option<u32>,
    pub gid: Option<u32>,
}

/// The locked-memory limit of the process that will run the driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Memlock {
    Unlimited,
    Bytes(u64),
}

/// What `homa-nic setup` is asked to do.
#[derive(Clone, Debug)]
pub struct SetupOptions {
    /// IDs that make a device a card ([`crate::pci::HOMA_NIC_IDS`] unless told).
    pub ids: Vec<PciId>,
    /// Only these cards (all cards found when empty).
    pub only: Vec<PciAddress>,
    /// 2 MiB hugepages to have reserved in total; 0 leaves the pool alone.
    pub hugepages: u64,
    /// Give /dev/vfio/N to this user or group.
    pub owner: Option<Owner>,
    /// Also bind the other devices of a card's IOMMU group to vfio-pci.
    pub bind_group: bool,
    /// The memlock limit the driver will run under (this process's, unless told).
    pub memlock: Memlock,
    /// Whether the driver will run with CAP_IPC_LOCK (as root), which VFIO's
    /// page pinning does not count against the memlock limit.
    pub ipc_lock: bool,
}

/// One change to the system, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Write `value` to the sysfs file `path`.
    Write { path: PathBuf, value: String },
    /// Remember that `address` was on `driver` before (for `--reset`).
    Remember {
        address: PciAddress,
        driver: Option<String>,
    },
    /// Drop what was remembered of `address`.
    Forget { address: PciAddress },
    /// Check that `address` is now on vfio-pci.
    ExpectBound { address: PciAddress },
    /// Give the group file `path` to `owner`, mode 0660.
    Chown { path: PathBuf, owner: Owner },
}

/// An [`Action`] with the reason for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    pub action: Action,
    pub why: String,
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.action {
            Action::Write { path, value } => write!(
                f,
                "echo {} > {}",
                if value.trim().is_empty() {
                    "\"\""
                } else {
                    value
                },
                path.display()
            )?,
            Action::Remember { address, driver } => write!(
                f,
                "remember {address} was on {}",
                driver.as_deref().unwrap_or("no driver")
            )?,
            Action::Forget { address } => write!(f, "forget {address}'s previous driver")?,
            Action::ExpectBound { address } => write!(f, "check {address} is on vfio-pci")?,
            Action::Chown { path, owner } => write!(
                f,
                "chown {} {} && chmod 660 {}",
                owner.name,
                path.display(),
                path.display()
            )?,
        }
        write!(f, "    # {}", self.why)
    }
}

/// What setup or reset will do: steps in order, notes, and what it refused.
#[derive(Debug, Default)]
pub struct Plan {
    pub steps: Vec<Step>,
    /// What was checked and found fine, or worth knowing (not refusals).
    pub notes: Vec<String>,
    /// Warnings: the machine works but not as well (no hugepages, low memlock).
    pub warnings: Vec<String>,
    /// Cards (or checks) refused; nothing was planned for them.
    pub refusals: Vec<SetupError>,
}

impl Plan {
    fn step(&mut self, action: Action, why: impl Into<String>) {
        self.steps.push(Step {
            action,
            why: why.into(),
        });
    }

    /// Carries out the steps in order, stopping at the first failure. Each
    /// step done is logged; the returned error names the one that failed.
    pub fn execute(&self, paths: &SetupPaths) -> Result<(), SetupError> {
        for step in &self.steps {
            tracing::info!("{step}");
            match &step.action {
                Action::Write { path, value } => {
                    fs::write(path, value).map_err(|source| SetupError::Write {
                        path: path.clone(),
                        value: value.clone(),
                        source,
                    })?
                }
                Action::Remember { address, driver } => {
                    let mut state = State::load(&paths.state)?;
                    state
                        .entries
                        .entry(*address)
                        .or_insert_with(|| driver.clone());
                    state.save(&paths.state)?;
                }
                Action::Forget { address } => {
                    let mut state = State::load(&paths.state)?;
                    if state.entries.remove(address).is_some() {
                        state.save(&paths.state)?;
                    }
                }
                Action::ExpectBound { address } => {
                    let driver = link_name(&paths.device(*address).join("driver"));
                    if driver.as_deref() != Some(VFIO_PCI_DRIVER) {
                        return Err(SetupError::NotBound {
                            address: *address,
                            driver,
                        });
                    }
                }
                Action::Chown { path, owner } => chown_group_file(path, owner)?,
            }
        }
        Ok(())
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for note in &self.notes {
            writeln!(f, "ok: {note}")?;
        }
        for warning in &self.warnings {
            writeln!(f, "warning: {warning}")?;
        }
        for refusal in &self.refusals {
            writeln!(f, "refused: {refusal}")?;
        }
        if self.steps.is_empty() {
            writeln!(f, "nothing to change")?;
        } else {
            writeln!(f, "steps:")?;
            for step in &self.steps {
                writeln!(f, "  {step}")?;
            }
        }
        Ok(())
    }
}

fn chown_group_file(path: &Path, owner: &Owner) -> Result<(), SetupError> {
    // devtmpfs creates the file as the bind completes; udev may take longer.
    let start = Instant::now();
    while !path.exists() {
        if start.elapsed() > DEV_FILE_WAIT {
            return Err(SetupError::NoGroupFile {
                path: path.to_path_buf(),
                waited_ms: start.elapsed().as_millis(),
            });
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let error = |source| SetupError::Chown {
        path: path.to_path_buf(),
        owner: owner.name.clone(),
        source,
    };
    std::os::unix::fs::chown(path, owner.uid, owner.gid).map_err(error)?;
    fs::set_permissions(path, fs::Permissions::from_mode(GROUP_FILE_MODE)).map_err(error)
}

/// The state file: each card's driver before setup.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct State {
    pub entries: BTreeMap<PciAddress, Option<String>>,
}

/// How the state file writes "no driver".
const NO_DRIVER: &str = "-";

impl State {
    /// Reads the state file; a missing file is an empty state.
    pub fn load(path: &Path) -> Result<Self, SetupError> {
        let text = match fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(State::default()),
            Err(source) => {
                return Err(SetupError::Read {
                    path: path.to_path_buf(),
                    source,
                })
            }
        };
        let mut entries = BTreeMap::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let bad = || SetupError::BadState {
                path: path.to_path_buf(),
                line: i + 1,
                text: line.to_string(),
            };
            let mut words = line.split_whitespace();
            let (Some(address), Some(driver), None) = (words.next(), words.next(), words.next())
            else {
                return Err(bad());
            };
            let address: PciAddress = address.parse().map_err(|_| bad())?;
            let driver = (driver != NO_DRIVER).then(|| driver.to_string());
            entries.insert(address, driver);
        }
        Ok(State { entries })
    }

    fn save(&self, path: &Path) -> Result<(), SetupError> {
        let mut text = String::from(
            "# written by homa-nic setup: each card's driver before it; read by --reset\n",
        );
        for (address, driver) in &self.entries {
            text.push_str(&format!(
                "{address} {}\n",
                driver.as_deref().unwrap_or(NO_DRIVER)
            ));
        }
        let write_error = |source| SetupError::Write {
            path: path.to_path_buf(),
            value: text.clone(),
            source,
        };
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).map_err(write_error)?;
        }
        fs::write(path, &text).map_err(write_error)
    }
}

fn id_list(ids: &[PciId]) -> String {
    ids.iter()
        .map(PciId::to_string)
        .collect::<Vec<_>>()
        .join(" or ")
}

/// The cards the options name: all found, or the ones listed (each must be a card).
fn chosen_cards(paths: &SetupPaths, opts: &SetupOptions, plan: &mut Plan) -> Vec<PciDevice> {
    let cards = match find_cards(paths, &opts.ids) {
        Ok(cards) => cards,
        Err(e) => {
            plan.refusals.push(e);
            return Vec::new();
        }
    };
    if opts.only.is_empty() {
        if cards.is_empty() {
            plan.refusals.push(SetupError::NoCards {
                pci: paths.pci().join("devices"),
                ids: id_list(&opts.ids),
            });
        }
        return cards;
    }
    let mut chosen = Vec::new();
    for address in &opts.only {
        match cards.iter().find(|c| c.address == *address) {
            Some(card) => chosen.push(card.clone()),
            None => plan.refusals.push(SetupError::NotACard {
                address: *address,
                ids: id_list(&opts.ids),
            }),
        }
    }
    chosen
}

/// Plans `homa-nic setup` (see the module's DESIGN NOTES).
pub fn plan_setup(paths: &SetupPaths, opts: &SetupOptions) -> Plan {
    let mut plan = Plan::default();
    let cards = chosen_cards(paths, opts, &mut plan);
    let vfio_driver = paths.driver_dir(VFIO_PCI_DRIVER);
    if !cards.is_empty() && !vfio_driver.exists() {
        plan.refusals
            .push(SetupError::VfioNotLoaded { path: vfio_driver });
        return plan;
    }
    for card in &cards {
        if let Err(e) = plan_card(paths, opts, card, &mut plan) {
            plan.refusals.push(e);
        }
    }
    plan_hugepages(paths, opts, &mut plan);
    check_memlock(opts, &mut plan);
    plan
}

fn plan_card(
    paths: &SetupPaths,
    opts: &SetupOptions,
    card: &PciDevice,
    plan: &mut Plan,
) -> Result<(), SetupError> {
    let address = card.address;
    let group = card.iommu_group.ok_or(SetupError::NoIommu { address })?;
    let peers = group_peers(paths, group, address)?;
    let blocking: Vec<&PciDevice> = peers.iter().filter(|p| !p.fine_in_a_vfio_group()).collect();
    if !blocking.is_empty() && !opts.bind_group {
        return Err(SetupError::SharedGroup {
            address,
            group,
            others: blocking
                .iter()
                .map(|p| p.describe())
                .collect::<Vec<_>>()
                .join(", "),
        });
    }
    if peers.is_empty() {
        plan.notes.push(format!(
            "{address}: IOMMU group {group} holds the card alone"
        ));
    } else {
        let list: Vec<String> = peers
            .iter()
            .map(|p| {
                let status = if p.is_bridge() {
                    "a bridge, which VFIO allows"
                } else if p.fine_in_a_vfio_group() {
                    "fine"
                } else {
                    "to be bound to vfio-pci (--bind-group)"
                };
                format!("{} ({status})", p.describe())
            })
            .collect();
        plan.notes.push(format!(
            "{address}: IOMMU group {group} also holds {}",
            list.join(", ")
        ));
    }
    for peer in &blocking {
        plan_bind(
            paths,
            peer,
            plan,
            &format!("shares IOMMU group {group} with {address}"),
        );
    }
    if card.driver.as_deref() == Some(VFIO_PCI_DRIVER) {
        plan.notes
            .push(format!("{address} [{}] is already on vfio-pci", card.id));
    } else {
        plan_bind(paths, card, plan, "a Homa NIC");
    }
    if let Some(owner) = &opts.owner {
        plan_chown(paths, group, owner, plan)?;
    }
    Ok(())
}

/// The steps that move `device` to vfio-pci.
fn plan_bind(paths: &SetupPaths, device: &PciDevice, plan: &mut Plan, what: &str) {
    let address = device.address;
    let dir = paths.device(address);
    plan.step(
        Action::Remember {
            address,
            driver: device.driver.clone(),
        },
        format!("so --reset can give it back ({what})"),
    );
    plan.step(
        Action::Write {
            path: dir.join("driver_override"),
            value: VFIO_PCI_DRIVER.to_string(),
        },
        format!("only vfio-pci may take {address} from now on"),
    );
    if let Some(driver) = &device.driver {
        plan.step(
            Action::Write {
                path: dir.join("driver/unbind"),
                value: address.to_string(),
            },
            format!("take {address} from {driver}"),
        );
    }
    plan.step(
        Action::Write {
            path: paths.pci().join("drivers_probe"),
            value: address.to_string(),
        },
        format!("the kernel binds {address} to vfio-pci"),
    );
    plan.step(
        Action::ExpectBound { address },
        "the kernel may refuse; dmesg says why",
    );
}

fn plan_chown(
    paths: &SetupPaths,
    group: u32,
    owner: &Owner,
    plan: &mut Plan,
) -> Result<(), SetupError> {
    let path = paths.group_file(group);
    if let Ok(meta) = fs::metadata(&path) {
        let uid_ok = owner.uid.is_none_or(|u| u == meta.uid());
        let gid_ok = owner.gid.is_none_or(|g| g == meta.gid());
        if uid_ok && gid_ok && meta.mode() & 0o777 == GROUP_FILE_MODE {
            plan.notes.push(format!(
                "{} already belongs to {}",
                path.display(),
                owner.name
            ));
            return Ok(());
        }
    }
    plan.step(
        Action::Chown {
            path,
            owner: owner.clone(),
        },
        format!(
            "{} may open the card without root (lasts until the card is rebound; a udev rule makes it permanent: SUBSYSTEM==\"vfio\", KERNEL==\"{group}\", OWNER/GROUP=\"{}\", MODE=\"0660\")",
            owner.name, owner.name
        ),
    );
    Ok(())
}

fn plan_hugepages(paths: &SetupPaths, opts: &SetupOptions, plan: &mut Plan) {
    let dir = paths.hugepages();
    let nr_path = dir.join("nr_hugepages");
    let Ok(now) = read_trimmed(&nr_path).map(|s| s.parse::<u64>().unwrap_or(0)) else {
        plan.warnings.push(format!(
            "this kernel offers no 2 MiB hugepages ({} is missing): the driver falls back to 4 KiB pages, which cost the IOMMU 512 times the IOTLB entries (a kernel with CONFIG_HUGETLBFS fixes it)",
            dir.display()
        ));
        return;
    };
    let mib = |n: u64| (n * HUGE_PAGE_BYTES as u64) >> 20;
    if opts.hugepages == 0 {
        if now == 0 {
            plan.warnings.push(format!(
                "no 2 MiB hugepages are reserved ({} is 0): the driver falls back to 4 KiB pages; reserve some with --hugepages N",
                nr_path.display()
            ));
        } else {
            plan.notes.push(format!(
                "{now} hugepages of 2 MiB reserved ({} MiB)",
                mib(now)
            ));
        }
        return;
    }
    if now >= opts.hugepages {
        plan.notes.push(format!(
            "{now} hugepages of 2 MiB reserved ({} MiB), at least the {} asked for",
            mib(now),
            opts.hugepages
        ));
        return;
    }
    plan.step(
        Action::Write {
            path: nr_path,
            value: opts.hugepages.to_string(),
        },
        format!(
            "reserve {} hugepages of 2 MiB ({} MiB; {now} now) for DMA rings and buffers (if fewer are granted, memory is fragmented: reserve them at boot with hugepages={} on the kernel command line)",
            opts.hugepages,
            mib(opts.hugepages),
            opts.hugepages
        ),
    );
}

/// Bytes the driver pins when it maps the hugepages asked for, or one card's
/// rings and RX areas (4 endpoints, each a few 2 MiB buffers) when none are.
fn memlock_needed(opts: &SetupOptions) -> u64 {
    const ONE_CARD_BYTES: u64 = 64 << 20;
    (opts.hugepages * HUGE_PAGE_BYTES as u64).max(ONE_CARD_BYTES)
}

fn check_memlock(opts: &SetupOptions, plan: &mut Plan) {
    let needed = memlock_needed(opts);
    match opts.memlock {
        Memlock::Unlimited => plan.notes.push("memlock limit: unlimited".to_string()),
        Memlock::Bytes(limit) if limit >= needed => plan.notes.push(format!(
            "memlock limit {} MiB covers the {} MiB the driver may pin",
            limit >> 20,
            needed >> 20
        )),
        Memlock::Bytes(_) if opts.ipc_lock => plan.notes.push(
            "memlock limit is low, but the driver runs with CAP_IPC_LOCK (root), which VFIO does not count against it".to_string(),
        ),
        Memlock::Bytes(limit) => {
            let who = opts.owner.as_ref().map_or("USER".to_string(), |o| o.name.clone());
            plan.warnings.push(format!(
                "memlock limit is {} KiB but the driver may pin {} MiB: VFIO counts every DMA mapping against it, and a mapping past it fails with ENOMEM. Raise it: `ulimit -l unlimited` in the shell that runs the driver, or for good add `{who} - memlock unlimited` to /etc/security/limits.d/homa-nic.conf and log in again",
                limit >> 10,
                needed >> 20
            ));
        }
    }
}

/// Plans `homa-nic setup --reset`: each card on vfio-pci goes back to the
/// driver remembered for it (or stays driverless if it had none).
pub fn plan_reset(paths: &SetupPaths, opts: &SetupOptions) -> Plan {
    let mut plan = Plan::default();
    let state = match State::load(&paths.state) {
        Ok(s) => s,
        Err(e) => {
            plan.refusals.push(e);
            return plan;
        }
    };
    let mut cards = chosen_cards(paths, opts, &mut plan);
    // Group peers bound with --bind-group are remembered too; give them back as well.
    for address in state.entries.keys() {
        if !cards.iter().any(|c| c.address == *address)
            && (opts.only.is_empty() || opts.only.contains(address))
        {
            if let Ok(device) = PciDevice::read(paths, *address) {
                cards.push(device);
            }
        }
    }
    if !cards.is_empty() {
        // The cards were found after all; a "no cards" refusal came from IDs alone.
        plan.refusals
            .retain(|r| !matches!(r, SetupError::NoCards { .. }));
    }
    for card in &cards {
        let address = card.address;
        let dir = paths.device(address);
        if card.driver.as_deref() != Some(VFIO_PCI_DRIVER) {
            plan.notes.push(format!(
                "{address} is on {}, not vfio-pci: nothing to give back",
                card.driver.as_deref().unwrap_or("no driver")
            ));
            continue;
        }
        plan.step(
            Action::Write {
                path: dir.join("driver_override"),
                value: "\n".to_string(),
            },
            format!("any driver may take {address} again"),
        );
        plan.step(
            Action::Write {
                path: dir.join("driver/unbind"),
                value: address.to_string(),
            },
            format!("take {address} from vfio-pci"),
        );
        match state.entries.get(&address) {
            Some(Some(previous)) => {
                let bind = paths.driver_dir(previous).join("bind");
                if !paths.driver_dir(previous).exists() {
                    plan.warnings.push(format!(
                        "{address} was on {previous}, which is not loaded now: `modprobe {previous}`, then `echo {address} > {}`",
                        paths.pci().join("drivers_probe").display()
                    ));
                } else {
                    plan.step(
                        Action::Write {
                            path: bind,
                            value: address.to_string(),
                        },
                        format!("give {address} back to {previous}, its driver before setup"),
                    );
                }
            }
            Some(None) => plan.notes.push(format!(
                "{address} had no driver before setup; it is left without one"
            )),
            None => plan.step(
                Action::Write {
                    path: paths.pci().join("drivers_probe"),
                    value: address.to_string(),
                },
                format!(
                    "no previous driver of {address} is remembered ({}): let the kernel choose one",
                    paths.state.display()
                ),
            ),
        }
        plan.step(Action::Forget { address }, "given back");
    }
    plan
}

/// What `homa-nic setup --status` prints.
pub fn status(paths: &SetupPaths, opts: &SetupOptions) -> Result<String, SetupError> {
    let mut out = String::new();
    let cards = find_cards(paths, &opts.ids)?;
    let state = State::load(&paths.state)?;
    if cards.is_empty() {
        out.push_str(&format!(
            "no Homa NIC (ID {}) in {}\n",
            id_list(&opts.ids),
            paths.pci().join("devices").display()
        ));
    }
    for card in &cards {
        out.push_str(&format!(
            "{} [{}] driver {}{}\n",
            card.address,
            card.id,
            card.driver.as_deref().unwrap_or("none"),
            card.driver_override
                .as_ref()
                .map_or(String::new(), |o| format!(" (driver_override {o})"))
        ));
        match card.iommu_group {
            None => out.push_str("  IOMMU group: none (the IOMMU is off)\n"),
            Some(group) => {
                let peers = group_peers(paths, group, card.address)?;
                let list: Vec<String> = peers.iter().map(PciDevice::describe).collect();
                out.push_str(&format!(
                    "  IOMMU group {group}: {}\n",
                    if list.is_empty() {
                        "the card alone".to_string()
                    } else {
                        format!("also {}", list.join(", "))
                    }
                ));
                let file = paths.group_file(group);
                match fs::metadata(&file) {
                    Ok(m) => out.push_str(&format!(
                        "  {}: uid {} gid {} mode {:o}\n",
                        file.display(),
                        m.uid(),
                        m.gid(),
                        m.mode() & 0o777
                    )),
                    Err(_) => out.push_str(&format!("  {}: absent\n", file.display())),
                }
            }
        }
        if let Some(previous) = state.entries.get(&card.address) {
            out.push_str(&format!(
                "  before setup: {} (--reset gives it back)\n",
                previous.as_deref().unwrap_or("no driver")
            ));
        }
    }
    let dir = paths.hugepages();
    match (
        read_trimmed(&dir.join("nr_hugepages")),
        read_trimmed(&dir.join("free_hugepages")),
    ) {
        (Ok(nr), Ok(free)) => {
            out.push_str(&format!("hugepages (2 MiB): {nr} reserved, {free} free\n"))
        }
        (Ok(nr), Err(_)) => out.push_str(&format!("hugepages (2 MiB): {nr} reserved\n")),
        _ => out.push_str("hugepages (2 MiB): not offered by this kernel\n"),
    }
    match opts.memlock {
        Memlock::Unlimited => out.push_str("memlock limit: unlimited\n"),
        Memlock::Bytes(b) => out.push_str(&format!("memlock limit: {} KiB\n", b >> 10)),
    }
    Ok(out)
}

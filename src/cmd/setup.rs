//! `homa-nic setup`: prepare this machine for a card (as DPDK's devbind and
//! SPDK's setup.sh do): bind Homa NICs to vfio-pci, check the IOMMU and the
//! card's IOMMU group, reserve hugepages, give /dev/vfio/N to a user or
//! group, check the memlock limit. `--status` reports, `--dry-run` prints the
//! plan without changing anything, `--reset` gives the cards back to the
//! drivers they had. The work is `homa_driver::setup`; this parses and prints.

use std::ffi::CString;
use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::Args;
use homa_driver::setup::{self, Memlock, Owner, SetupOptions, SetupPaths};
use homa_driver::{PciAddress, PciId, HOMA_NIC_IDS};

/// 2 MiB hugepages reserved unless told: 128 MiB, room for a card's rings
/// and RX areas several times over.
const DEFAULT_HUGEPAGES: u64 = 64;

#[derive(Args, Debug)]
pub struct SetupArgs {
    /// Only this card (as `lspci -D` prints it); repeat for several. Default: every card found.
    #[arg(long = "device", value_name = "BDF")]
    pub devices: Vec<String>,
    /// PCI vendor:device IDs that make a device a card (repeatable). Default: the Homa NIC's.
    #[arg(long = "id", value_name = "VVVV:DDDD")]
    pub ids: Vec<String>,
    /// 2 MiB hugepages to have reserved in total (0 leaves the pool alone).
    #[arg(long, default_value_t = DEFAULT_HUGEPAGES)]
    pub hugepages: u64,
    /// Give the card's /dev/vfio/N to this user (name or uid), so it can run the driver without root.
    #[arg(long)]
    pub user: Option<String>,
    /// Give the card's /dev/vfio/N to this group (name or gid), mode 0660.
    #[arg(long)]
    pub group: Option<String>,
    /// Also bind the other devices of a card's IOMMU group to vfio-pci (they leave the host until --reset).
    #[arg(long)]
    pub bind_group: bool,
    /// Print what would be done, change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Report the cards, their drivers, IOMMU groups, /dev/vfio files, hugepages and memlock; change nothing.
    #[arg(long, conflicts_with_all = ["reset", "dry_run"])]
    pub status: bool,
    /// Give the cards back to the drivers they had before setup.
    #[arg(long)]
    pub reset: bool,
    /// The memlock limit of the process that will run the driver, in KiB or `unlimited`. Default: this process's.
    #[arg(long, value_name = "KIB")]
    pub memlock_kib: Option<String>,
    /// Where sysfs is mounted (tests point it at a fake tree).
    #[arg(long, default_value = "/sys")]
    pub sysfs: PathBuf,
    /// The device directory.
    #[arg(long, default_value = "/dev")]
    pub dev: PathBuf,
    /// Where each card's previous driver is remembered for --reset.
    #[arg(long, default_value = "/run/homa-nic/previous-drivers")]
    pub state: PathBuf,
}

pub fn run(args: &SetupArgs) -> anyhow::Result<()> {
    let paths = SetupPaths {
        sys: args.sysfs.clone(),
        dev: args.dev.clone(),
        state: args.state.clone(),
    };
    let opts = options(args)?;
    if args.status {
        print!("{}", setup::status(&paths, &opts)?);
        return Ok(());
    }
    let plan = if args.reset {
        setup::plan_reset(&paths, &opts)
    } else {
        setup::plan_setup(&paths, &opts)
    };
    if args.dry_run {
        println!("dry run: nothing is changed");
    }
    print!("{plan}");
    if !plan.refusals.is_empty() {
        bail!(
            "{} refusal(s), each with what to do above; nothing was changed for the refused card(s){}",
            plan.refusals.len(),
            if args.dry_run || plan.steps.is_empty() { "" } else { ", and nothing else either (fix them first)" }
        );
    }
    if !args.dry_run {
        plan.execute(&paths)?;
        if !plan.steps.is_empty() {
            println!("done");
        }
    }
    Ok(())
}

fn options(args: &SetupArgs) -> anyhow::Result<SetupOptions> {
    let ids = if args.ids.is_empty() {
        HOMA_NIC_IDS.to_vec()
    } else {
        args.ids
            .iter()
            .map(|s| s.parse::<PciId>())
            .collect::<Result<_, _>>()?
    };
    let only = args
        .devices
        .iter()
        .map(|s| s.parse::<PciAddress>())
        .collect::<Result<_, _>>()?;
    let owner = match (&args.user, &args.group) {
        (None, None) => None,
        (user, group) => {
            let uid = user.as_deref().map(resolve_user).transpose()?;
            let gid = group.as_deref().map(resolve_group).transpose()?;
            let name = match (user, group) {
                (Some(u), Some(g)) => format!("{u}:{g}"),
                (Some(u), None) => u.clone(),
                (None, Some(g)) => format!(":{g}"),
                (None, None) => unreachable!(),
            };
            Some(Owner { name, uid, gid })
        }
    };
    let memlock = match args.memlock_kib.as_deref() {
        Some("unlimited") => Memlock::Unlimited,
        Some(kib) => Memlock::Bytes(
            kib.parse::<u64>().with_context(|| {
                format!("--memlock-kib {kib:?}: give a number of KiB or `unlimited`")
            })? * 1024,
        ),
        None => this_process_memlock(),
    };
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    Ok(SetupOptions {
        ids,
        only,
        hugepages: args.hugepages,
        owner: owner.clone(),
        bind_group: args.bind_group,
        memlock,
        // The driver runs as root (with CAP_IPC_LOCK) unless a user was named for it.
        ipc_lock: root && owner.is_none() && args.memlock_kib.is_none(),
    })
}

fn this_process_memlock() -> Memlock {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit, which `limit` is.
    if unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut limit) } != 0
        || limit.rlim_cur == libc::RLIM_INFINITY
    {
        return Memlock::Unlimited;
    }
    Memlock::Bytes(limit.rlim_cur)
}

fn resolve_user(name: &str) -> anyhow::Result<u32> {
    if let Ok(uid) = name.parse() {
        return Ok(uid);
    }
    let c = CString::new(name).context("a user name has no NUL byte")?;
    // SAFETY: getpwnam reads a NUL-terminated string and returns null or a
    // pointer to static storage, read before any other getpw* call.
    let pw = unsafe { libc::getpwnam(c.as_ptr()) };
    if pw.is_null() {
        bail!("--user {name}: no such user (`getent passwd {name}` finds none)");
    }
    // SAFETY: non-null, points to a passwd record.
    Ok(unsafe { (*pw).pw_uid })
}

fn resolve_group(name: &str) -> anyhow::Result<u32> {
    if let Ok(gid) = name.parse() {
        return Ok(gid);
    }
    let c = CString::new(name).context("a group name has no NUL byte")?;
    // SAFETY: as for getpwnam.
    let gr = unsafe { libc::getgrnam(c.as_ptr()) };
    if gr.is_null() {
        bail!("--group {name}: no such group (`getent group {name}` finds none; create one with groupadd)");
    }
    // SAFETY: non-null, points to a group record.
    Ok(unsafe { (*gr).gr_gid })
}

//! `homa-nic setup`'s logic (`homa_driver::setup`) on fake sysfs and /dev
//! trees laid out as each kind of machine leaves them: what it plans, what it
//! refuses and what it says. The real kernel side (a bind that takes) is run
//! by the VFIO VM test.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::PathBuf;

use homa_driver::setup::{
    self, Action, Memlock, Owner, Plan, SetupError, SetupOptions, SetupPaths, State,
};
use homa_driver::{PciAddress, HOMA_NIC_IDS};

const CARD: &str = "0000:3b:00.0";

/// A fake /sys, /dev and state file under a temporary directory.
struct FakeMachine {
    _dir: tempfile::TempDir,
    paths: SetupPaths,
}

impl FakeMachine {
    /// vfio-pci loaded, an IOMMU, no devices, `hugepages` 2 MiB pages reserved.
    fn new(hugepages: u64) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let paths = SetupPaths {
            sys: dir.path().join("sys"),
            dev: dir.path().join("dev"),
            state: dir.path().join("run/homa-nic/previous-drivers"),
        };
        fs::create_dir_all(paths.sys.join("bus/pci/devices")).unwrap();
        fs::create_dir_all(paths.sys.join("bus/pci/drivers/vfio-pci")).unwrap();
        fs::create_dir_all(paths.sys.join("kernel/iommu_groups")).unwrap();
        fs::create_dir_all(paths.dev.join("vfio")).unwrap();
        fs::write(paths.dev.join("vfio/vfio"), "").unwrap();
        let huge = paths.sys.join("kernel/mm/hugepages/hugepages-2048kB");
        fs::create_dir_all(&huge).unwrap();
        fs::write(huge.join("nr_hugepages"), format!("{hugepages}\n")).unwrap();
        fs::write(huge.join("free_hugepages"), format!("{hugepages}\n")).unwrap();
        FakeMachine { _dir: dir, paths }
    }

    fn device_dir(&self, bdf: &str) -> PathBuf {
        self.paths.sys.join("bus/pci/devices").join(bdf)
    }

    /// A PCI device with `id` ("1234:484d") and class, on `driver`, in `group`.
    fn add(&self, bdf: &str, id: &str, class: u32, driver: Option<&str>, group: Option<u32>) {
        let dir = self.device_dir(bdf);
        fs::create_dir_all(&dir).unwrap();
        let (vendor, device) = id.split_once(':').unwrap();
        fs::write(dir.join("vendor"), format!("0x{vendor}\n")).unwrap();
        fs::write(dir.join("device"), format!("0x{device}\n")).unwrap();
        fs::write(dir.join("class"), format!("{class:#08x}\n")).unwrap();
        fs::write(dir.join("driver_override"), "(null)\n").unwrap();
        if let Some(driver) = driver {
            self.bind(bdf, driver);
        }
        if let Some(group) = group {
            let g = self
                .paths
                .sys
                .join("kernel/iommu_groups")
                .join(group.to_string());
            fs::create_dir_all(g.join("devices")).unwrap();
            symlink(&dir, g.join("devices").join(bdf)).unwrap();
            symlink(&g, dir.join("iommu_group")).unwrap();
            fs::write(self.paths.dev.join("vfio").join(group.to_string()), "").unwrap();
        }
    }

    /// What the kernel does on a bind: the device's `driver` link.
    fn bind(&self, bdf: &str, driver: &str) {
        let d = self.paths.sys.join("bus/pci/drivers").join(driver);
        fs::create_dir_all(&d).unwrap();
        let link = self.device_dir(bdf).join("driver");
        let _ = fs::remove_file(&link);
        symlink(&d, link).unwrap();
    }

    fn card(&self, driver: Option<&str>, group: Option<u32>) {
        self.add(CARD, "1234:484d", 0x020000, driver, group);
    }

    fn plan(&self, opts: &SetupOptions) -> Plan {
        setup::plan_setup(&self.paths, opts)
    }
}

fn options() -> SetupOptions {
    SetupOptions {
        ids: HOMA_NIC_IDS.to_vec(),
        only: Vec::new(),
        hugepages: 64,
        owner: None,
        bind_group: false,
        memlock: Memlock::Unlimited,
        ipc_lock: true,
    }
}

fn card() -> PciAddress {
    CARD.parse().unwrap()
}

/// The plan as a dry run prints it.
fn text(plan: &Plan) -> String {
    plan.to_string()
}

#[test]
fn a_card_already_on_vfio_pci_is_left_alone() {
    let m = FakeMachine::new(64);
    m.card(Some("vfio-pci"), Some(7));
    let plan = m.plan(&options());
    assert!(plan.refusals.is_empty(), "{plan}");
    assert!(plan.steps.is_empty(), "{plan}");
    let t = text(&plan);
    assert!(
        t.contains("0000:3b:00.0 [1234:484d] is already on vfio-pci"),
        "{t}"
    );
    assert!(t.contains("IOMMU group 7 holds the card alone"), "{t}");
    assert!(
        t.contains("64 hugepages of 2 MiB reserved (128 MiB)"),
        "{t}"
    );
    assert!(t.contains("nothing to change"), "{t}");
}

#[test]
fn a_card_on_another_driver_is_moved_with_driver_override() {
    let m = FakeMachine::new(64);
    m.card(Some("xdma"), Some(7));
    let plan = m.plan(&options());
    assert!(plan.refusals.is_empty(), "{plan}");
    let dev = m.device_dir(CARD);
    let actions: Vec<&Action> = plan.steps.iter().map(|s| &s.action).collect();
    assert_eq!(
        actions,
        [
            &Action::Remember {
                address: card(),
                driver: Some("xdma".into())
            },
            &Action::Write {
                path: dev.join("driver_override"),
                value: "vfio-pci".into()
            },
            &Action::Write {
                path: dev.join("driver/unbind"),
                value: CARD.into()
            },
            &Action::Write {
                path: m.paths.sys.join("bus/pci/drivers_probe"),
                value: CARD.into()
            },
            &Action::ExpectBound { address: card() },
        ]
    );
    let t = text(&plan);
    assert!(t.contains("take 0000:3b:00.0 from xdma"), "{t}");
    assert!(
        t.contains(&format!(
            "echo vfio-pci > {}",
            dev.join("driver_override").display()
        )),
        "{t}"
    );

    // Carried out on the fake tree: the writes land where the kernel reads
    // them, the old driver is remembered, and since no kernel is there to
    // bind, the check after the probe says so and where to look.
    let e = plan.execute(&m.paths).unwrap_err();
    assert!(
        matches!(&e, SetupError::NotBound { driver: Some(d), .. } if d == "xdma"),
        "{e}"
    );
    assert!(e.to_string().contains("dmesg"), "{e}");
    assert_eq!(
        fs::read_to_string(dev.join("driver_override")).unwrap(),
        "vfio-pci"
    );
    assert_eq!(
        fs::read_to_string(m.paths.sys.join("bus/pci/drivers/xdma/unbind")).unwrap(),
        CARD
    );
    assert_eq!(
        fs::read_to_string(m.paths.sys.join("bus/pci/drivers_probe")).unwrap(),
        CARD
    );
    let state = State::load(&m.paths.state).unwrap();
    assert_eq!(state.entries.get(&card()), Some(&Some("xdma".to_string())));

    // The kernel binds it; setting up again must not forget xdma.
    m.bind(CARD, "vfio-pci");
    let again = m.plan(&options());
    assert!(again.steps.is_empty(), "{again}");
    again.execute(&m.paths).unwrap();

    // --reset gives it back to xdma and forgets it.
    let reset = setup::plan_reset(&m.paths, &options());
    assert!(reset.refusals.is_empty(), "{reset}");
    reset.execute(&m.paths).unwrap();
    assert_eq!(
        fs::read_to_string(dev.join("driver_override")).unwrap(),
        "\n"
    );
    assert_eq!(
        fs::read_to_string(m.paths.sys.join("bus/pci/drivers/vfio-pci/unbind")).unwrap(),
        CARD
    );
    assert_eq!(
        fs::read_to_string(m.paths.sys.join("bus/pci/drivers/xdma/bind")).unwrap(),
        CARD
    );
    assert!(State::load(&m.paths.state).unwrap().entries.is_empty());
    assert!(text(&reset).contains("give 0000:3b:00.0 back to xdma, its driver before setup"));
}

#[test]
fn an_unbound_card_is_probed_without_an_unbind() {
    let m = FakeMachine::new(64);
    m.card(None, Some(7));
    let plan = m.plan(&options());
    assert!(
        plan.steps
            .iter()
            .all(|s| !matches!(&s.action, Action::Write { path, .. } if path.ends_with("unbind"))),
        "{plan}"
    );
    assert!(matches!(
        &plan.steps[0].action,
        Action::Remember { driver: None, .. }
    ));
}

#[test]
fn no_iommu_is_refused_with_how_to_turn_it_on() {
    let m = FakeMachine::new(64);
    m.card(Some("xdma"), None);
    let plan = m.plan(&options());
    assert!(
        matches!(plan.refusals.as_slice(), [SetupError::NoIommu { address }] if *address == card()),
        "{plan}"
    );
    assert!(
        plan.steps.is_empty(),
        "nothing may be written for a refused card: {plan}"
    );
    let t = text(&plan);
    for needed in [
        "refused: 0000:3b:00.0: the IOMMU is off",
        "intel_iommu=on",
        "amd_iommu=on",
        "VT-d",
        "dmesg",
    ] {
        assert!(t.contains(needed), "{needed:?} missing: {t}");
    }
}

#[test]
fn a_shared_iommu_group_is_refused_naming_the_other_devices() {
    let m = FakeMachine::new(64);
    m.card(Some("xdma"), Some(12));
    m.add(
        "0000:3b:00.1",
        "8086:1572",
        0x020000,
        Some("i40e"),
        Some(12),
    );
    let plan = m.plan(&options());
    let [SetupError::SharedGroup { group, others, .. }] = plan.refusals.as_slice() else {
        panic!("expected a shared-group refusal: {plan}");
    };
    assert_eq!(*group, 12);
    assert_eq!(others, "0000:3b:00.1 [8086:1572] on i40e");
    assert!(plan.steps.is_empty(), "{plan}");
    let t = text(&plan);
    assert!(t.contains("--bind-group"), "{t}");
    assert!(t.contains("ACS"), "{t}");

    // With --bind-group the other device goes to vfio-pci first, remembered too.
    let opts = SetupOptions {
        bind_group: true,
        ..options()
    };
    let plan = m.plan(&opts);
    assert!(plan.refusals.is_empty(), "{plan}");
    let remembered: Vec<String> = plan
        .steps
        .iter()
        .filter_map(|s| match &s.action {
            Action::Remember { address, driver } => Some(format!("{address} {driver:?}")),
            _ => None,
        })
        .collect();
    assert_eq!(
        remembered,
        ["0000:3b:00.1 Some(\"i40e\")", "0000:3b:00.0 Some(\"xdma\")"]
    );
    assert!(text(&plan)
        .contains("0000:3b:00.1 [8086:1572] on i40e (to be bound to vfio-pci (--bind-group))"));
}

#[test]
fn bridges_and_vfio_peers_in_the_group_are_fine() {
    let m = FakeMachine::new(64);
    m.card(Some("vfio-pci"), Some(3));
    m.add(
        "0000:3a:00.0",
        "8086:2030",
        0x060400,
        Some("pcieport"),
        Some(3),
    );
    m.add(
        "0000:3b:00.1",
        "1234:484d",
        0x020000,
        Some("vfio-pci"),
        Some(3),
    );
    let plan = m.plan(&SetupOptions {
        only: vec![card()],
        ..options()
    });
    assert!(plan.refusals.is_empty(), "{plan}");
    let t = text(&plan);
    assert!(
        t.contains("0000:3a:00.0 [8086:2030] on pcieport (a bridge, which VFIO allows)"),
        "{t}"
    );
    assert!(
        t.contains("0000:3b:00.1 [1234:484d] on vfio-pci (fine)"),
        "{t}"
    );
}

#[test]
fn no_hugepages_are_reserved_or_reported() {
    let m = FakeMachine::new(0);
    m.card(Some("vfio-pci"), Some(7));
    let plan = m.plan(&options());
    let nr = m
        .paths
        .sys
        .join("kernel/mm/hugepages/hugepages-2048kB/nr_hugepages");
    assert_eq!(
        plan.steps.iter().map(|s| &s.action).collect::<Vec<_>>(),
        [&Action::Write {
            path: nr.clone(),
            value: "64".into()
        }]
    );
    let t = text(&plan);
    assert!(
        t.contains("reserve 64 hugepages of 2 MiB (128 MiB; 0 now)"),
        "{t}"
    );
    assert!(t.contains("hugepages=64 on the kernel command line"), "{t}");
    plan.execute(&m.paths).unwrap();
    assert_eq!(fs::read_to_string(&nr).unwrap(), "64");

    // Told to leave the pool alone, an empty pool is a warning with the fix.
    let m = FakeMachine::new(0);
    m.card(Some("vfio-pci"), Some(7));
    let plan = m.plan(&SetupOptions {
        hugepages: 0,
        ..options()
    });
    assert!(plan.steps.is_empty());
    assert!(
        text(&plan).contains("warning: no 2 MiB hugepages are reserved"),
        "{plan}"
    );
    assert!(text(&plan).contains("--hugepages N"), "{plan}");

    // A kernel without hugepages at all: a warning, not a refusal (the driver falls back).
    fs::remove_dir_all(m.paths.sys.join("kernel/mm/hugepages/hugepages-2048kB")).unwrap();
    let plan = m.plan(&options());
    assert!(plan.refusals.is_empty() && plan.steps.is_empty(), "{plan}");
    assert!(
        text(&plan).contains("this kernel offers no 2 MiB hugepages"),
        "{plan}"
    );
}

#[test]
fn vfio_pci_not_loaded_is_refused_with_modprobe() {
    let m = FakeMachine::new(64);
    m.card(Some("xdma"), Some(7));
    fs::remove_dir_all(m.paths.sys.join("bus/pci/drivers/vfio-pci")).unwrap();
    let plan = m.plan(&options());
    assert!(
        matches!(plan.refusals.as_slice(), [SetupError::VfioNotLoaded { .. }]),
        "{plan}"
    );
    assert!(plan.steps.is_empty());
    assert!(text(&plan).contains("modprobe vfio-pci"));
}

#[test]
fn no_card_and_a_named_non_card_are_refused() {
    let m = FakeMachine::new(64);
    m.add(
        "0000:00:1f.0",
        "8086:2918",
        0x060100,
        Some("lpc_ich"),
        Some(4),
    );
    let plan = m.plan(&options());
    assert!(
        matches!(plan.refusals.as_slice(), [SetupError::NoCards { .. }]),
        "{plan}"
    );
    let t = text(&plan);
    assert!(
        t.contains("no PCI device") && t.contains("1234:484d") && t.contains("lspci -nn"),
        "{t}"
    );
    assert!(t.contains("/sys/bus/pci/rescan"), "{t}");

    let plan = m.plan(&SetupOptions {
        only: vec!["0000:00:1f.0".parse().unwrap()],
        ..options()
    });
    assert!(
        matches!(plan.refusals.as_slice(), [SetupError::NotACard { .. }]),
        "{plan}"
    );
    assert!(text(&plan).contains("--id VVVV:DDDD"));

    // Named by its own ID it is found (how the VM test finds QEMU's edu).
    let plan = m.plan(&SetupOptions {
        ids: vec!["8086:2918".parse().unwrap()],
        ..options()
    });
    assert!(plan.refusals.is_empty(), "{plan}");
}

#[test]
fn the_group_file_is_given_to_the_named_owner() {
    let m = FakeMachine::new(64);
    m.card(Some("vfio-pci"), Some(7));
    // SAFETY: getuid/getgid have no preconditions.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let owner = Owner {
        name: "homa".into(),
        uid: Some(uid),
        gid: Some(gid),
    };
    let plan = m.plan(&SetupOptions {
        owner: Some(owner.clone()),
        ..options()
    });
    let group_file = m.paths.dev.join("vfio/7");
    assert_eq!(
        plan.steps.iter().map(|s| &s.action).collect::<Vec<_>>(),
        [&Action::Chown {
            path: group_file.clone(),
            owner: owner.clone()
        }]
    );
    assert!(text(&plan).contains("udev rule"), "{plan}");
    plan.execute(&m.paths).unwrap();
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        fs::metadata(&group_file).unwrap().permissions().mode() & 0o777,
        0o660
    );
    // Done once, it is noted, not redone.
    let again = m.plan(&SetupOptions {
        owner: Some(owner),
        ..options()
    });
    assert!(again.steps.is_empty(), "{again}");
    assert!(text(&again).contains("already belongs to homa"), "{again}");
}

#[test]
fn a_low_memlock_limit_is_a_warning_with_the_fix() {
    let m = FakeMachine::new(64);
    m.card(Some("vfio-pci"), Some(7));
    let low = SetupOptions {
        memlock: Memlock::Bytes(8 << 20),
        ipc_lock: false,
        owner: Some(Owner {
            name: "alice".into(),
            uid: None,
            gid: None,
        }),
        ..options()
    };
    let t = text(&m.plan(&low));
    assert!(
        t.contains("warning: memlock limit is 8192 KiB but the driver may pin 128 MiB"),
        "{t}"
    );
    assert!(t.contains("alice - memlock unlimited"), "{t}");
    assert!(t.contains("ulimit -l unlimited"), "{t}");
    let t = text(&m.plan(&SetupOptions {
        memlock: Memlock::Bytes(1 << 30),
        ..low.clone()
    }));
    assert!(
        t.contains("memlock limit 1024 MiB covers the 128 MiB"),
        "{t}"
    );
    let t = text(&m.plan(&SetupOptions {
        ipc_lock: true,
        ..low
    }));
    assert!(t.contains("CAP_IPC_LOCK"), "{t}");
}

#[test]
fn status_reports_driver_group_files_hugepages_and_what_reset_restores() {
    let m = FakeMachine::new(64);
    m.card(Some("vfio-pci"), Some(12));
    m.add(
        "0000:3a:00.0",
        "8086:2030",
        0x060400,
        Some("pcieport"),
        Some(12),
    );
    fs::create_dir_all(m.paths.state.parent().unwrap()).unwrap();
    fs::write(&m.paths.state, "0000:3b:00.0 xdma\n").unwrap();
    let s = setup::status(&m.paths, &options()).unwrap();
    assert!(
        s.contains("0000:3b:00.0 [1234:484d] driver vfio-pci"),
        "{s}"
    );
    assert!(
        s.contains("IOMMU group 12: also 0000:3a:00.0 [8086:2030] on pcieport"),
        "{s}"
    );
    assert!(s.contains("/dev/vfio/12: uid"), "{s}");
    assert!(
        s.contains("before setup: xdma (--reset gives it back)"),
        "{s}"
    );
    assert!(s.contains("hugepages (2 MiB): 64 reserved, 64 free"), "{s}");
}

#[test]
fn a_corrupt_state_file_names_its_line() {
    let m = FakeMachine::new(64);
    m.card(Some("vfio-pci"), Some(7));
    fs::create_dir_all(m.paths.state.parent().unwrap()).unwrap();
    fs::write(&m.paths.state, "# comment\n0000:3b:00.0 xdma extra\n").unwrap();
    let plan = setup::plan_reset(&m.paths, &options());
    let [e @ SetupError::BadState { line: 2, .. }] = plan.refusals.as_slice() else {
        panic!("{plan}");
    };
    assert!(e.to_string().contains("delete it"), "{e}");
}

#[test]
fn reset_of_a_card_with_no_remembered_driver_lets_the_kernel_choose() {
    let m = FakeMachine::new(64);
    m.card(Some("vfio-pci"), Some(7));
    let plan = setup::plan_reset(&m.paths, &options());
    assert!(
        plan.steps.iter().any(|s| s.action
            == Action::Write {
                path: m.paths.sys.join("bus/pci/drivers_probe"),
                value: CARD.into()
            }),
        "{plan}"
    );
    // A card not on vfio-pci has nothing to give back.
    let m = FakeMachine::new(64);
    m.card(Some("xdma"), Some(7));
    let plan = setup::plan_reset(&m.paths, &options());
    assert!(plan.steps.is_empty(), "{plan}");
    assert!(text(&plan).contains("nothing to give back"), "{plan}");
}

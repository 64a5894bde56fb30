//! The guest side of the VFIO VM test (`make vfio-test`; the host side is
//! `testbench/src/vm.rs`): run inside a QEMU guest as the initramfs's test
//! program, it drives QEMU's `edu` device through the driver's own VFIO
//! backend, the code a real card goes through, and checks every step.
//!
//! Steps: `homa-nic setup`'s library binds edu to vfio-pci, reserves
//! hugepages and gives /dev/vfio/N to a user, in the real guest sysfs; `VfioBackend::open` does the
//! container, group and device setup and maps BAR0; then edu's registers
//! (ID, liveness), DMA through the IOMMU both ways with edu's DMA engine,
//! checked byte for byte, interrupts through eventfds (INTx raised by
//! register, MSI at DMA completion), a DMA to an unmapped IOVA faulting in
//! the IOMMU (seen in the kernel log), teardown, a second open (the group was
//! released) and `setup --reset`. The last line is `VFIO-EDU PASS` or
//! `VFIO-EDU FAIL: <why>`; the host looks for it on the serial console.
//!
//! edu (QEMU's docs/specs/edu.rst): BAR0 is 1 MiB of 32-bit registers; its DMA
//! engine copies between a 4 KiB buffer at device address 0x40000 and host
//! memory, one transfer at a time, completing on a 100 ms timer. The DMA
//! address registers take 32-bit writes of their low half only, and edu's
//! default DMA mask is 28 bits, so the IOVA window is put below 256 MiB.

use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context};
use homa_driver::pci::{Command, PciId};
use homa_driver::setup::{self, Memlock, Owner, SetupOptions, SetupPaths};
use homa_driver::vfio::{IrqKind, RegionFlags, VfioConfig};
use homa_driver::{Backend, VfioBackend};
use vfio_bindings::bindings::vfio as sys;

/// QEMU's edu device.
const EDU: PciId = PciId {
    vendor: 0x1234,
    device: 0x11e8,
};

/// edu's registers (byte offsets in BAR0).
mod edu {
    /// Reads 0x010000ed: version 1.0, device "ed".
    pub const ID: u32 = 0x00;
    /// Reads back the bitwise inverse of what was written.
    pub const LIVENESS: u32 = 0x04;
    /// Interrupt status: bits set by raise and DMA completion.
    pub const IRQ_STATUS: u32 = 0x24;
    /// Writing bits sets them in the status and raises the interrupt.
    pub const IRQ_RAISE: u32 = 0x60;
    /// Writing bits clears them in the status (and lowers INTx when 0).
    pub const IRQ_ACK: u32 = 0x64;
    pub const DMA_SRC: u32 = 0x80;
    pub const DMA_DST: u32 = 0x88;
    pub const DMA_COUNT: u32 = 0x90;
    pub const DMA_CMD: u32 = 0x98;
    /// DMA command bits.
    pub const CMD_START: u32 = 1;
    pub const CMD_TO_HOST: u32 = 2;
    pub const CMD_IRQ: u32 = 4;
    /// Status bit a DMA completion with CMD_IRQ sets.
    pub const DMA_IRQ: u32 = 0x100;
    /// The device-side buffer.
    pub const BUFFER: u32 = 0x40000;
    pub const ID_VALUE: u32 = 0x0100_00ed;
}

/// IOVAs given to DMA buffers: inside edu's default 28-bit DMA mask.
const IOVA_WINDOW: std::ops::Range<u64> = 0x0100_0000..0x1000_0000;

/// Bytes per DMA: under 4096, because Debian 12's QEMU (7.2) aborts on a
/// transfer that ends exactly at the end of edu's buffer (an off-by-one
/// fixed later); odd, so byte-granular copies are checked too.
const DMA_BYTES: usize = 4095;

/// The user setup gives /dev/vfio/N to in the guest (any uid will do: the
/// guest has no user database, and the program stays root).
const GUEST_USER: u32 = 1000;

/// Hugepages reserved by setup in the guest (32 MiB of its 1 GiB).
const GUEST_HUGEPAGES: u64 = 16;

/// Longest wait for one edu DMA or interrupt (edu takes about 100 ms).
const EDU_TIMEOUT: Duration = Duration::from_secs(5);

fn main() {
    let start = Instant::now();
    match run() {
        Ok(()) => println!(
            "VFIO-EDU PASS ({} ms in the guest)",
            start.elapsed().as_millis()
        ),
        Err(e) => {
            println!("VFIO-EDU FAIL: {e:#}");
            std::process::exit(1);
        }
    }
}

/// Prints a step and how long it took.
fn step<T>(name: &str, f: impl FnOnce() -> anyhow::Result<T>) -> anyhow::Result<T> {
    let t = Instant::now();
    let r = f().with_context(|| format!("step {name:?}"))?;
    println!("ok   {name} ({} ms)", t.elapsed().as_millis());
    Ok(r)
}

fn run() -> anyhow::Result<()> {
    let paths = SetupPaths::default();
    let opts = SetupOptions {
        ids: vec![EDU],
        only: Vec::new(),
        hugepages: GUEST_HUGEPAGES,
        owner: Some(Owner {
            name: format!("uid {GUEST_USER}"),
            uid: Some(GUEST_USER),
            gid: Some(GUEST_USER),
        }),
        bind_group: false,
        memlock: Memlock::Unlimited,
        ipc_lock: true,
    };
    let address = step("setup binds edu to vfio-pci", || {
        let plan = setup::plan_setup(&paths, &opts);
        print!("{plan}");
        ensure!(plan.refusals.is_empty(), "setup refused");
        plan.execute(&paths)?;
        let cards = setup::find_cards(&paths, &[EDU])?;
        let [card] = cards.as_slice() else {
            bail!("expected one edu, found {cards:?}")
        };
        ensure!(
            card.driver.as_deref() == Some("vfio-pci"),
            "edu is on {:?}",
            card.driver
        );
        let nr = std::fs::read_to_string("/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages")?;
        ensure!(
            nr.trim() == GUEST_HUGEPAGES.to_string(),
            "nr_hugepages is {nr}"
        );
        let group = card.iommu_group.context("edu has no IOMMU group")?;
        let meta = std::fs::metadata(paths.group_file(group))?;
        ensure!(
            (meta.uid(), meta.gid(), meta.mode() & 0o777) == (GUEST_USER, GUEST_USER, 0o660),
            "/dev/vfio/{group} is uid {} gid {} mode {:o}",
            meta.uid(),
            meta.gid(),
            meta.mode() & 0o777
        );
        print!("{}", setup::status(&paths, &opts)?);
        Ok(card.address)
    })?;
    let config = VfioConfig {
        iova_window: IOVA_WINDOW,
        ..VfioConfig::new(address)
    };
    let backend = step("open: container, group, device, BAR0 mmap", || {
        Ok(VfioBackend::open(&config)?)
    })?;
    step("region info", || {
        let bar0 = backend.region(sys::VFIO_PCI_BAR0_REGION_INDEX);
        println!("     BAR0 {bar0:?}");
        ensure!(
            bar0.bytes == 1 << 20,
            "BAR0 is {} bytes, edu's is 1 MiB",
            bar0.bytes
        );
        ensure!(bar0
            .flags
            .contains(RegionFlags::READ | RegionFlags::WRITE | RegionFlags::MMAP));
        ensure!(backend.csr_window_bytes() == 1 << 20);
        let config_region = backend.region(sys::VFIO_PCI_CONFIG_REGION_INDEX);
        ensure!(config_region.bytes >= 256, "config space {config_region:?}");
        let command = backend.read_command()?;
        ensure!(
            command.contains(Command::MEMORY_SPACE | Command::BUS_MASTER),
            "open left the command register at {command:?}"
        );
        Ok(())
    })?;
    step("BAR registers: ID and liveness", || {
        let id = backend.csr_read(edu::ID)?;
        ensure!(id == edu::ID_VALUE, "ID reads {id:#x}");
        for value in [0x1234_5678u32, 0, 0xffff_ffff, 0xa5a5_0f0f] {
            backend.csr_write(edu::LIVENESS, value)?;
            let back = backend.csr_read(edu::LIVENESS)?;
            ensure!(back == !value, "liveness: wrote {value:#x}, read {back:#x}");
        }
        Ok(())
    })?;

    let pattern: Vec<u8> = (0..DMA_BYTES)
        .map(|i| (i * 7 + (i >> 8) * 13 + 1) as u8)
        .collect();
    let mut to_card = step("DMA buffers mapped in the IOMMU", || {
        Ok(backend.dma_alloc(DMA_BYTES)?)
    })?;
    let from_card = backend.dma_alloc(DMA_BYTES)?;
    println!(
        "     buffers at IOVA {:#x} and {:#x}, {} bytes each",
        to_card.iova(),
        from_card.iova(),
        to_card.len()
    );
    ensure!(IOVA_WINDOW.contains(&to_card.iova()) && IOVA_WINDOW.contains(&from_card.iova()));
    to_card.write(0, &pattern);

    step("INTx through an eventfd, twice (unmask re-arms)", || {
        let irq = backend.enable_interrupts(IrqKind::Intx, 1)?;
        for round in 1..=2u32 {
            backend.csr_write(edu::IRQ_RAISE, round)?;
            let fired = irq.wait(0, EDU_TIMEOUT)?;
            let status = backend.csr_read(edu::IRQ_STATUS)?;
            ensure!(status == round, "round {round}: status {status:#x}");
            backend.csr_write(edu::IRQ_ACK, status)?;
            irq.unmask()?;
            println!("     INTx round {round}: fired {fired}, status {status:#x}");
        }
        Ok(())
    })?;

    step("DMA host -> edu", || {
        edu_dma(
            &backend,
            to_card.iova(),
            u64::from(edu::BUFFER),
            edu::CMD_START,
        )
    })?;
    step(
        "DMA edu -> host, completion by MSI through an eventfd",
        || {
            let irq = backend.enable_interrupts(IrqKind::Msi, 1)?;
            edu_dma_start(
                &backend,
                u64::from(edu::BUFFER),
                from_card.iova(),
                edu::CMD_START | edu::CMD_TO_HOST | edu::CMD_IRQ,
            )?;
            let fired = irq.wait(0, EDU_TIMEOUT)?;
            let status = backend.csr_read(edu::IRQ_STATUS)?;
            ensure!(
                status & edu::DMA_IRQ != 0,
                "MSI fired but status is {status:#x}"
            );
            backend.csr_write(edu::IRQ_ACK, status)?;
            let cmd = backend.csr_read(edu::DMA_CMD)?;
            ensure!(
                cmd & edu::CMD_START == 0,
                "interrupt before the DMA finished: cmd {cmd:#x}"
            );
            println!("     MSI fired {fired}, status {status:#x}");
            Ok(())
        },
    )?;
    step("data checked byte for byte", || {
        let mut got = vec![0u8; from_card.len()];
        from_card.read(0, &mut got);
        if let Some(i) = (0..DMA_BYTES).find(|&i| got[i] != pattern[i]) {
            bail!(
                "byte {i}: expected {:#04x}, edu wrote {:#04x}",
                pattern[i],
                got[i]
            );
        }
        if let Some(i) = (DMA_BYTES..got.len()).find(|&i| got[i] != 0) {
            bail!("byte {i} past the transfer changed to {:#04x}", got[i]);
        }
        println!("     {DMA_BYTES} bytes round-tripped host -> edu -> host");
        Ok(())
    })?;
    step("a DMA to an unmapped IOVA is stopped by the IOMMU", || {
        // Inside the window, but never handed out: the IOMMU has no entry for it.
        let unmapped = IOVA_WINDOW.end - 0x10_0000;
        let mut kmsg = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open("/dev/kmsg")?;
        drain(&mut kmsg);
        edu_dma(
            &backend,
            u64::from(edu::BUFFER),
            unmapped,
            edu::CMD_START | edu::CMD_TO_HOST,
        )?;
        // The fault is reported through the IOMMU's own interrupt: allow it a moment.
        let wanted = format!("fault addr {unmapped:#x}");
        let t = Instant::now();
        let mut log = String::new();
        while !log
            .lines()
            .any(|l| l.contains("DMAR") && l.contains(&wanted))
        {
            ensure!(
                t.elapsed() < EDU_TIMEOUT,
                "no DMAR fault at {unmapped:#x} in the kernel log: {log}"
            );
            std::thread::sleep(Duration::from_millis(20));
            log.push_str(&drain(&mut kmsg));
        }
        let line = log
            .lines()
            .find(|l| l.contains(&wanted))
            .unwrap_or_default();
        println!("     {}", line.split(';').nth(1).unwrap_or(line));
        Ok(())
    })?;
    step(
        "teardown: DMA unmapped, interrupts off, group released",
        || {
            to_card.free()?;
            from_card.free()?;
            drop(backend);
            // A second open succeeds only if the first released the group.
            let again = VfioBackend::open(&config)?;
            ensure!(again.csr_read(edu::ID)? == edu::ID_VALUE);
            let buffer = again.dma_alloc(DMA_BYTES)?;
            ensure!(
                buffer.iova() == IOVA_WINDOW.start,
                "IOVA {:#x} reused?",
                buffer.iova()
            );
            buffer.free()?;
            Ok(())
        },
    )?;
    step("setup --reset gives edu back (it had no driver)", || {
        let plan = setup::plan_reset(&paths, &opts);
        print!("{plan}");
        ensure!(plan.refusals.is_empty(), "reset refused");
        plan.execute(&paths)?;
        let cards = setup::find_cards(&paths, &[EDU])?;
        ensure!(
            cards[0].driver.is_none(),
            "edu is on {:?} after reset",
            cards[0].driver
        );
        ensure!(
            cards[0].driver_override.is_none(),
            "override left: {:?}",
            cards[0].driver_override
        );
        Ok(())
    })?;
    Ok(())
}

/// The kernel log records not read yet (each read of /dev/kmsg is one record).
fn drain(kmsg: &mut std::fs::File) -> String {
    let mut text = String::new();
    let mut record = [0u8; 8192];
    while let Ok(n) = kmsg.read(&mut record) {
        if n == 0 {
            break;
        }
        text.push_str(&String::from_utf8_lossy(&record[..n]));
    }
    text
}

/// Starts one edu DMA.
fn edu_dma_start(backend: &VfioBackend, src: u64, dst: u64, cmd: u32) -> anyhow::Result<()> {
    for (reg, addr) in [(edu::DMA_SRC, src), (edu::DMA_DST, dst)] {
        let low = u32::try_from(addr).context("edu takes 32-bit DMA addresses")?;
        backend.csr_write(reg, low)?;
    }
    backend.csr_write(edu::DMA_COUNT, DMA_BYTES as u32)?;
    backend.csr_write(edu::DMA_CMD, cmd)?;
    Ok(())
}

/// One edu DMA, polled to completion.
fn edu_dma(backend: &VfioBackend, src: u64, dst: u64, cmd: u32) -> anyhow::Result<()> {
    edu_dma_start(backend, src, dst, cmd)?;
    let t = Instant::now();
    while backend.csr_read(edu::DMA_CMD)? & edu::CMD_START != 0 {
        ensure!(
            t.elapsed() < EDU_TIMEOUT,
            "edu DMA not done in {EDU_TIMEOUT:?}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    Ok(())
}

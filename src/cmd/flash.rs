//! `homa-nic flash (--vfio BDF | --sim) FILE.bit`: write a bitstream into the
//! card's configuration flash over its BAR, verify it, reboot the FPGA into
//! it and read back what the card now runs. The checks and the flash protocol
//! are `homa_driver::flash`; this opens the card, asks, shows progress, and
//! brings the card back after the reboot (sysfs remove and rescan for a real
//! card; waiting for the simulated one).

use std::io::{BufRead, Write as _};
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context};
use homa_driver::bitfile::BitFile;
use homa_driver::board::{BoardBlock, Identity};
use homa_driver::flash::{self, Phase, Plan, SpiFlash};
use homa_driver::rescan::Rescan;
use homa_driver::vfio::VfioConfig;
use homa_driver::{Backend, Device, PciAddress, SimBackend, VfioBackend};
use homa_hw::regmap::board::FLASH_USER_IMAGE;
use homa_hw_sim::board::BoardConfig;
use indicatif::{ProgressBar, ProgressStyle};

#[derive(clap::Args)]
pub struct FlashArgs {
    /// The .bit file to write (`make -C firmware bitstream` writes build/<board>/homa_<board>.bit).
    #[arg(required_unless_present = "make_sim_image")]
    pub file: Option<PathBuf>,
    /// The card, through VFIO, at this PCI address (as `lspci -D` prints it); see `homa-nic setup`.
    #[arg(long, value_name = "BDF", conflicts_with = "sim")]
    pub vfio: Option<String>,
    /// A simulated card in a board (its RTL board logic and flash chip model) instead of a real one.
    #[arg(long)]
    pub sim: bool,
    /// The BAR holding the card's registers (with --vfio).
    #[arg(long, default_value_t = 0, requires = "vfio")]
    pub bar: u32,
    /// Flash address to write at; below 0x01002000 (the golden image) is refused.
    #[arg(long, default_value = "0x01002000", value_parser = parse_address)]
    pub address: u32,
    /// Check the file and the card, print what would be done, write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Do not ask before writing.
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// The board the simulated card is (u50, u55c, u200, u250, u280).
    #[arg(long, default_value = "u250")]
    pub sim_board: String,
    /// Write a small .bit the simulated card boots (for --sim --sim-board's board) to this file, and exit.
    #[arg(long, value_name = "FILE")]
    pub make_sim_image: Option<PathBuf>,
    /// Where sysfs is mounted (the rescan after the reboot, with --vfio).
    #[arg(long, default_value = "/sys")]
    pub sysfs: PathBuf,
}

fn parse_address(s: &str) -> Result<u32, String> {
    let (digits, radix) = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => (hex, 16),
        None => (s, 10),
    };
    u32::from_str_radix(&digits.replace('_', ""), radix)
        .map_err(|e| format!("{s:?} is not a flash address (e.g. 0x01002000): {e}"))
}

/// The board table's part for `board`, or a clear error.
fn sim_board_identity(board: &str) -> anyhow::Result<Identity> {
    let b = homa_firmware::board::board(board).with_context(|| {
        format!(
            "--sim-board {board:?}: not a board this project builds for (one of {})",
            homa_firmware::board::board_names().join(", ")
        )
    })?;
    Ok(Identity {
        board: board.to_string(),
        part: b.part.to_string(),
        ..BoardConfig::u250().golden
    })
}

pub fn run(args: &FlashArgs) -> anyhow::Result<()> {
    if let Some(out) = &args.make_sim_image {
        let id = Identity {
            build_time: SystemTime::now().duration_since(UNIX_EPOCH)?.as_secs(),
            git_commit: [0x5a; 20],
            ..sim_board_identity(&args.sim_board)?
        };
        let bit = flash::sim_bitfile(&id, 4096);
        std::fs::write(out, bit.to_bytes())
            .with_context(|| format!("writing {}", out.display()))?;
        println!(
            "wrote {}: a {}-byte image the simulated {} boots (build time {})",
            out.display(),
            bit.data.len(),
            id.board,
            id.build_time
        );
        return Ok(());
    }
    let file = args.file.as_ref().expect("clap requires FILE");
    let bytes = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
    let bit = BitFile::parse(&bytes).with_context(|| format!("{}", file.display()))?;

    let (backend, address): (Box<dyn Backend>, Option<PciAddress>) = match (&args.vfio, args.sim) {
        (Some(bdf), _) => {
            let address: PciAddress = bdf.parse()?;
            (Box::new(open_vfio(address, args.bar)?), Some(address))
        }
        (None, true) => {
            let golden = sim_board_identity(&args.sim_board)?;
            let config = BoardConfig {
                golden,
                ..BoardConfig::u250()
            };
            (Box::new(SimBackend::with_board("flash-sim", config)), None)
        }
        (None, false) => bail!("which card? give --vfio BDF for a real one, or --sim"),
    };

    let running = BoardBlock::open(&*backend)?.identity()?;
    println!("card: {}", backend.describe());
    print_identity("  running", &running);
    println!(
        "file: {} ({} bytes of configuration data)",
        file.display(),
        bit.data.len()
    );
    println!(
        "  design {}, part {}, written {} {}",
        bit.design, bit.part, bit.date, bit.time
    );
    let plan = Plan::new(&running, &bit, args.address)?;
    let sectors = plan
        .erase
        .iter()
        .filter(|e| e.1 == flash::SECTOR_BYTES)
        .count();
    println!(
        "plan: erase {} bytes from {:#010x} ({sectors} x 64 KiB, {} x 4 KiB), program and verify {} bytes, reboot the FPGA from flash (IPROG), {}, read the ID back",
        plan.erase_bytes(),
        plan.address,
        plan.erase.len() - sectors,
        plan.bytes,
        if address.is_some() { "remove and rescan the PCI device" } else { "wait for the simulated card" }
    );
    if plan.address != FLASH_USER_IMAGE {
        println!("  note: {:#010x} is not the user-image address {FLASH_USER_IMAGE:#010x} the golden image boots", plan.address);
    }
    if args.dry_run {
        println!("dry run: nothing written");
        return Ok(());
    }
    if !args.yes && !confirm(&format!("Write {} to the card's flash?", file.display()))? {
        bail!("not confirmed: nothing written (--yes skips the question)");
    }

    let started = Instant::now();
    let flasher = SpiFlash::open(BoardBlock::open(&*backend)?)?;
    let cycles_before = backend.cycle();
    let mut bar: Option<(Phase, ProgressBar, Instant)> = None;
    flash::write_image(&flasher, &plan, &bit.data, &mut |phase, done, total| {
        if bar.as_ref().is_none_or(|b| b.0 != phase) {
            if let Some((p, b, t)) = bar.take() {
                b.finish_and_clear();
                println!("{p:?}: done in {:.1?}", t.elapsed());
            }
            let b = ProgressBar::new(total).with_style(
                ProgressStyle::with_template("{msg:8} [{bar:40}] {bytes}/{total_bytes} {eta}")
                    .expect("template")
                    .progress_chars("=> "),
            );
            b.set_message(format!("{phase:?}"));
            bar = Some((phase, b, Instant::now()));
        }
        if let Some((_, b, _)) = &bar {
            b.set_position(done);
        }
    })?;
    if let Some((p, b, t)) = bar.take() {
        b.finish_and_clear();
        println!("{p:?}: done in {:.1?}", t.elapsed());
    }
    flasher.release()?;
    if let (Some(before), Some(after)) = (cycles_before, backend.cycle()) {
        println!(
            "simulated: {} core cycles of register traffic ({:.1} us at 250 MHz); the chip's busy times were slept through",
            after - before,
            (after - before) as f64 * 0.004
        );
    }

    println!("rebooting the FPGA from flash");
    BoardBlock::open(&*backend)?.reboot()?;
    let backend = match address {
        Some(address) => {
            drop(backend);
            let rescan = Rescan::new(&args.sysfs.join("bus/pci"));
            rescan.remove(address)?;
            rescan.rescan(address)?;
            Box::new(open_vfio(address, args.bar)?) as Box<dyn Backend>
        }
        None => backend,
    };
    let now = flash::wait_for_board(&*backend, 10, Duration::from_secs(1))
        .context("the card did not come back after the reboot")?;
    print_identity("  now running", &now);
    if let Some(expected) = flash::sim_image_identity(&bit) {
        if now != expected {
            bail!("the card booted another image than the one written (the golden image, after a failed load?)");
        }
    } else if now == running {
        eprintln!("warning: the card reports the same build as before: either the file is that build, or the new image failed to load and the golden image booted");
    }
    let device = Device::open(backend)?;
    println!(
        "  core: design version {}, {} kHz, {}-bit datapath",
        device.id().design_version,
        device.id().clock_khz,
        device.id().datapath_bits
    );
    println!("flashed and rebooted in {:.1?}", started.elapsed());
    Ok(())
}

fn open_vfio(address: PciAddress, bar: u32) -> anyhow::Result<VfioBackend> {
    let config = VfioConfig {
        bar,
        ..VfioConfig::new(address)
    };
    Ok(VfioBackend::open(&config)?)
}

fn print_identity(label: &str, id: &Identity) {
    let commit: String = id.git_commit.iter().map(|b| format!("{b:02x}")).collect();
    println!(
        "{label}: board {}, part {}, built {} (unix time), commit {commit}{}",
        id.board,
        id.part,
        id.build_time,
        if id.git_dirty { " (dirty)" } else { "" }
    );
}

fn confirm(question: &str) -> anyhow::Result<bool> {
    print!("{question} [y/N] ");
    std::io::stdout().flush()?;
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    Ok(matches!(line.trim(), "y" | "Y" | "yes"))
}

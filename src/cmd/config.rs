//! `homa-nic config check|apply|show|example`: homa.conf, the card's
//! tunables (host-lib `config.rs`, table in `tunables.rs`).
//!
//! A simulated card lives only as long as this process, so `apply` without
//! `--vfio` applies the file to a fresh simulated card, opens one endpoint
//! with the file's sizes and prints what the card then holds, read back from
//! its registers: the whole round trip in one run. On a real card the
//! register tunables stay applied; the endpoint sizes are used by each
//! process that opens the card with the file (`HOMA_CONF=FILE`).

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::{Args, Subcommand};
use homa_driver::vfio::VfioConfig;
use homa_driver::{Backend, Device, PciAddress, SimBackend, VfioBackend};
use homa_host::config::{self, Reading};
use homa_host::tunables::{show_value, Target};
use homa_host::{Endpoint, HomaConf, Nic};

#[derive(Args)]
pub struct ConfigArgs {
    #[command(subcommand)]
    command: ConfigCommand,
}

#[derive(Subcommand)]
enum ConfigCommand {
    /// Check a homa.conf: every problem, with its key, line and allowed values; nothing is opened.
    Check { file: PathBuf },
    /// Apply a homa.conf to a card (all of it or nothing) and print what the card holds after.
    Apply {
        file: PathBuf,
        #[command(flatten)]
        card: CardArgs,
        /// On a simulated card: the port of the endpoint opened to show the endpoint sizes.
        #[arg(long, default_value_t = 1)]
        port: u16,
    },
    /// Read every tunable back from a card's registers (the simulated card opened with
    /// $HOMA_CONF, /etc/homa.conf or the defaults, unless --vfio).
    Show {
        #[command(flatten)]
        card: CardArgs,
    },
    /// Print the example homa.conf (every tunable at its default, commented).
    Example,
}

#[derive(Args)]
struct CardArgs {
    /// A real card: its PCI address (bound to vfio-pci; see `homa-nic setup`).
    #[arg(long, value_name = "BDF")]
    vfio: Option<String>,
    /// The BAR holding the card's registers (with --vfio).
    #[arg(long, default_value_t = 0, requires = "vfio")]
    bar: u32,
}

impl CardArgs {
    fn backend(&self) -> anyhow::Result<Box<dyn Backend>> {
        Ok(match &self.vfio {
            Some(bdf) => {
                let address: PciAddress = bdf.parse()?;
                let config = VfioConfig {
                    bar: self.bar,
                    ..VfioConfig::new(address)
                };
                Box::new(VfioBackend::open(&config)?)
            }
            None => Box::new(SimBackend::new()),
        })
    }
}

pub fn run(args: &ConfigArgs) -> anyhow::Result<()> {
    match &args.command {
        ConfigCommand::Check { file } => {
            let conf = HomaConf::load(file)?;
            let set = conf
                .iter()
                .filter(|(t, _)| conf.line(t.name).is_some())
                .count();
            println!(
                "{}: ok ({set} of {} tunables set, the rest default)",
                file.display(),
                conf.iter().count()
            );
            Ok(())
        }
        ConfigCommand::Apply { file, card, port } => apply(file, card, *port),
        ConfigCommand::Show { card } => {
            // Opened without applying anything: show reads, it never writes.
            let device = Device::open(card.backend()?).context("opening the card")?;
            show(&device, &HomaConf::from_env()?)
        }
        ConfigCommand::Example => {
            print!("{}", config::example());
            Ok(())
        }
    }
}

fn apply(file: &Path, card: &CardArgs, port: u16) -> anyhow::Result<()> {
    let conf = HomaConf::load(file)?;
    let nic = Nic::open_with_config(card.backend()?, conf)?;
    println!(
        "{}: applied to {}",
        file.display(),
        nic.device().backend().describe()
    );
    let _endpoint = if card.vfio.is_none() {
        let e = Endpoint::open(&nic, port).context("opening an endpoint with the file's sizes")?;
        println!("(a simulated card: endpoint on port {port} opened with the file's sizes)");
        Some(e)
    } else {
        println!(
            "(endpoint sizes apply to each process opening the card with HOMA_CONF={})",
            file.display()
        );
        None
    };
    println!();
    show(nic.device(), nic.config())
}

/// The table of live values.
fn show(device: &Device, conf: &HomaConf) -> anyhow::Result<()> {
    println!("card: {}", device.backend().describe());
    println!("{:<34}  {:<40}  from", "tunable", "value");
    for (tunable, reading) in config::read_live(device, conf)? {
        let (value, from) = match (&reading, tunable.target) {
            (Reading::Register(v), Target::Csr { block_type, offset }) => (
                show_value(v),
                format!("register {block_type:#010x}+{offset:#x}"),
            ),
            (Reading::Host(v), _) => (v.to_string(), "host-lib (this process)".to_string()),
            (Reading::Fixed(v), Target::Fixed { .. }) => {
                (show_value(v), "fixed in the RTL".to_string())
            }
            (Reading::Endpoints { next, open }, _) => {
                let per_port: Vec<String> = open
                    .iter()
                    .map(|(port, v)| format!("port {port}: {v}"))
                    .collect();
                let what = if tunable.name == "endpoint_bpages" {
                    "endpoint registers (bpages free now)"
                } else {
                    "endpoint registers"
                };
                let value = if per_port.is_empty() {
                    format!("no endpoint open (next: {next})")
                } else {
                    format!("{} (next: {next})", per_port.join(", "))
                };
                (value, what.to_string())
            }
            (r, _) => (format!("{r:?}"), String::new()),
        };
        println!("{:<34}  {:<40}  {from}", tunable.name, value);
    }
    Ok(())
}

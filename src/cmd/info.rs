//! `homa-nic info [--vfio BDF]`: open a card (the simulated one unless a PCI
//! address is given), and print its register blocks and what its ID block says.

use homa_driver::board::BoardBlock;
use homa_driver::vfio::VfioConfig;
use homa_driver::{Backend, Device, PciAddress, SimBackend, VfioBackend};

#[derive(clap::Args)]
pub struct InfoArgs {
    /// Open a real card through VFIO at this PCI address (as `lspci -D` prints it,
    /// e.g. 0000:01:00.0) instead of the simulated card.
    #[arg(long, value_name = "BDF")]
    pub vfio: Option<String>,
    /// The BAR holding the card's registers (with --vfio).
    #[arg(long, default_value_t = 0, requires = "vfio")]
    pub bar: u32,
}

pub fn run(args: &InfoArgs) -> anyhow::Result<()> {
    let backend: Box<dyn Backend> = match &args.vfio {
        Some(bdf) => {
            let address: PciAddress = bdf.parse()?;
            let config = VfioConfig {
                bar: args.bar,
                ..VfioConfig::new(address)
            };
            Box::new(VfioBackend::open(&config)?)
        }
        None => Box::new(SimBackend::new()),
    };
    let device = Device::open(backend)?;
    println!("card: {}", device.backend().describe());
    println!();
    println!("register blocks:");
    println!("  {:<8}  {:<10}  {:<7}  name", "base", "type", "version");
    for b in device.blocks().blocks() {
        println!(
            "  {:#08x}  {:#010x}  {:<7}  {}",
            b.base,
            b.block_type,
            b.version.to_string(),
            b.name()
        );
    }
    let id = device.id();
    println!();
    println!("ID block:");
    println!("  design version  {}", id.design_version);
    println!(
        "  core clock      {} kHz ({:.1} ns a cycle)",
        id.clock_khz,
        id.cycle_ns()
    );
    println!(
        "  datapath        {} bits ({} bytes a beat)",
        id.datapath_bits,
        id.beat_bytes()
    );
    println!("  wire format     {:#010x}", id.wire_format);
    // A card in a board (not a bare simulated core) has the board's block too.
    if let Ok(id) = BoardBlock::open(device.backend()).and_then(|b| b.identity()) {
        let commit: String = id.git_commit.iter().map(|b| format!("{b:02x}")).collect();
        println!();
        println!("board:");
        println!("  board           {}", id.board);
        println!("  part            {}", id.part);
        println!("  built           {} (unix time)", id.build_time);
        println!(
            "  git commit      {commit}{}",
            if id.git_dirty { " (dirty)" } else { "" }
        );
    }
    if let Ok(interface) = device.interface() {
        let mac = interface.mac()?;
        let ip = interface.ipv4()?.to_be_bytes();
        println!();
        println!("interface:");
        println!(
            "  MAC             {}",
            mac.map(|b| format!("{b:02x}")).join(":")
        );
        println!("  IPv4            {}.{}.{}.{}", ip[0], ip[1], ip[2], ip[3]);
    }
    let endpoints = device.endpoint_count();
    if endpoints > 0 {
        println!();
        println!("endpoints ({endpoints}):");
        for e in 0..endpoints {
            let port = device.endpoint(e)?.port()?;
            let state = if port == 0 {
                "closed".to_string()
            } else {
                format!("port {port}")
            };
            println!("  {e:<14}  {state}");
        }
    }
    if let Ok(rx) = device.rx_counters() {
        println!();
        println!("RX frames by parser verdict:");
        for (verdict, frames) in rx.read_all()? {
            println!("  {:<22}  {frames}", format!("{verdict:?}"));
        }
    }
    Ok(())
}

//! `homa-nic`: the command-line face of the Homa NIC project.
//!
//! Each subcommand lives in `src/cmd/<name>.rs` and only parses, runs and
//! prints; the work is done by the library crates.

use clap::{Parser, Subcommand};
use tracing_subscriber::EnvFilter;

mod cmd;

#[derive(Parser)]
#[command(
    name = "homa-nic",
    version,
    about = "Homa transport offload NIC: simulate it, inspect its traffic, export its Verilog"
)]
struct Cli {
    /// More log output (-v info, -vv debug, -vvv trace); RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Two simulated cards (the RTL in Verilator), an echo server and a client running RPCs; RTT by size.
    Demo(cmd::demo::DemoArgs),
    /// Print each frame of a pcap capture decoded, one line per packet (like tcpdump).
    Decode(cmd::decode::DecodeArgs),
    /// Write the generated Verilog of the core and a file list.
    Verilog(cmd::verilog::VerilogArgs),
    /// Write a capture with one frame of every Homa packet type, for Wireshark and tests.
    SampleCapture(cmd::sample_capture::SampleCaptureArgs),
    /// Simulate a cluster of Homa NICs under a workload; report slowdown by message size.
    Sim(cmd::sim::SimArgs),
    /// Open a card (the simulated one, or a real one with --vfio) and print its register blocks and ID.
    Info(cmd::info::InfoArgs),
    /// homa.conf, the card's tunables: check a file, apply it to a card, show the live values.
    Config(cmd::config::ConfigArgs),
    /// An echo server on one simulated card whose Ethernet port is a UDP wire (QEMU -netdev dgram format).
    Server(cmd::server::ServerArgs),
    /// RPCs from one simulated card on a UDP wire to a Homa server; each response checked, RTT per RPC.
    Rpc(cmd::rpc::RpcArgs),
    /// Prepare this machine for a card: bind it to vfio-pci, check the IOMMU, reserve hugepages, fix /dev/vfio permissions (--status, --dry-run, --reset).
    Setup(cmd::setup::SetupArgs),
    /// Write a bitstream into a card's configuration flash over its BAR (--vfio BDF, or --sim), verify it, reboot into it.
    Flash(cmd::flash::FlashArgs),
    /// Hostile frames (random, mutated, forged at live RPCs) into a simulated card serving real RPCs; checks it neither hangs, nor writes outside its buffers, nor loses count.
    Fuzz(cmd::fuzz::FuzzArgs),
    /// Synthesize every design with yosys (Xilinx UltraScale+); resources per block and the deepest LUT path.
    Synth(cmd::synth::SynthArgs),
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let level = match cli.verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(level)),
        )
        .with_writer(std::io::stderr)
        .init();
    match cli.command {
        Command::Demo(args) => cmd::demo::run(&args),
        Command::Decode(args) => cmd::decode::run(&args),
        Command::Verilog(args) => cmd::verilog::run(&args),
        Command::SampleCapture(args) => cmd::sample_capture::run(&args),
        Command::Sim(args) => cmd::sim::run(&args),
        Command::Info(args) => cmd::info::run(&args),
        Command::Config(args) => cmd::config::run(&args),
        Command::Server(args) => cmd::server::run(&args),
        Command::Rpc(args) => cmd::rpc::run(&args),
        Command::Setup(args) => cmd::setup::run(&args),
        Command::Synth(args) => cmd::synth::run(&args),
        Command::Flash(args) => cmd::flash::run(&args),
        Command::Fuzz(args) => cmd::fuzz::run(&args),
    }
}

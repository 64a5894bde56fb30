//! `homa-nic verilog --out DIR`: the generated Verilog of every design, the
//! lint waivers, and a file list, for reading, linting or synthesis.

use std::path::PathBuf;

use anyhow::Context;

#[derive(clap::Args)]
pub struct VerilogArgs {
    /// Directory to write into (created if missing).
    #[arg(long, default_value = "out/verilog")]
    pub out: PathBuf,
}

/// The lint waivers the hw-sim build applies, shipped beside the Verilog.
const WAIVERS: &str = include_str!("../../hw/verilator.vlt");

pub fn run(args: &VerilogArgs) -> anyhow::Result<()> {
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    let mut list = String::new();
    for design in homa_hw::designs() {
        let file = format!("{}.v", design.name);
        let path = args.out.join(&file);
        std::fs::write(&path, &design.verilog)
            .with_context(|| format!("writing {}", path.display()))?;
        println!(
            "{} ({} lines, top module {})",
            path.display(),
            design.verilog.lines().count(),
            design.name
        );
        list.push_str(&file);
        list.push('\n');
    }
    std::fs::write(args.out.join("verilator.vlt"), WAIVERS)?;
    std::fs::write(args.out.join("files.f"), list)?;
    println!(
        "{}: file list; lint with `verilator --lint-only -Wall verilator.vlt homa_core.v`",
        args.out.join("files.f").display()
    );
    Ok(())
}

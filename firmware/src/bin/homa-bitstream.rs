//! Writes a board's Vivado build directory (Verilog, XDC, IP TCL, batch
//! script) and runs Vivado on it if Vivado is on PATH. Without Vivado it
//! exits non-zero with one line saying what is missing. Called by
//! `make -C firmware bitstream BOARD=u250`.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use clap::Parser;
use homa_firmware::board::{self, Board};
use homa_firmware::regmap::BuildInfo;
use homa_firmware::vivado;

#[derive(Parser)]
#[command(about = "Build a Homa NIC bitstream for an Alveo card (Vivado non-project flow)")]
struct Args {
    /// Card: u50, u55c, u200, u250 or u280.
    #[arg(long)]
    board: String,
    /// Build directory (default: firmware/build/<board>).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Write the build directory only; do not look for Vivado.
    #[arg(long)]
    no_vivado: bool,
}

fn main() {
    // Quiet by default (the Makefile's caller wants one line); RUST_LOG=info lists the files.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    if let Err(e) = run(Args::parse()) {
        eprintln!("homa-bitstream: {e:#}");
        std::process::exit(1);
    }
}

fn run(args: Args) -> Result<()> {
    let Some(board) = board::board(&args.board) else {
        bail!(
            "unknown board {:?}: use one of {}",
            args.board,
            board::board_names().join(", ")
        );
    };
    let out = args.out.unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("build")
            .join(board.name)
    });
    let build = build_info()?;
    let files = vivado::write_build_dir(&board, &build, &out)?;
    for f in &files {
        tracing::info!("wrote {}", f.display());
    }
    if args.no_vivado {
        return Ok(());
    }
    run_vivado(&board, &out)
}

fn run_vivado(board: &Board, out: &Path) -> Result<()> {
    let script = out.join(vivado::BUILD_TCL);
    let status = match Command::new("vivado")
        .current_dir(out)
        .args(["-mode", "batch", "-nojournal", "-nolog", "-source"])
        .arg(&script)
        .status()
    {
        Ok(s) => s,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // The one line the Makefile's caller sees.
            eprintln!(
                "homa-bitstream: Vivado is not on PATH: install AMD Vivado (2022.1 or later, with {} device support) and source its settings64.sh, then run again; the build files are in {}",
                board.part,
                out.display()
            );
            std::process::exit(2);
        }
        Err(e) => return Err(e).context("starting vivado"),
    };
    if !status.success() {
        bail!(
            "vivado failed ({status}); see the reports in {}",
            out.display()
        );
    }
    let top = vivado::top_name(board);
    for ext in ["bit", "mcs", "bin"] {
        let f = out.join(format!("{top}.{ext}"));
        if !f.exists() {
            bail!("vivado finished but {} is missing", f.display());
        }
    }
    println!("{}", out.join(format!("{top}.bit")).display());
    Ok(())
}

/// The build's time and the source's git commit (all zeros, dirty, outside a
/// git checkout).
fn build_info() -> Result<BuildInfo> {
    let unix_time = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .context("system clock before 1970")?
        .as_secs();
    let git = |args: &[&str]| {
        Command::new("git")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let mut git_commit = [0u8; 20];
    let mut git_dirty = true;
    if let Some(head) = git(&["rev-parse", "HEAD"]) {
        if head.len() == 40 {
            for (i, b) in git_commit.iter_mut().enumerate() {
                *b = u8::from_str_radix(&head[2 * i..2 * i + 2], 16).context("git rev-parse")?;
            }
            git_dirty = git(&["status", "--porcelain", "--untracked-files=no"])
                .is_none_or(|s| !s.is_empty());
        }
    } else {
        tracing::warn!("not a git checkout: the ID block's commit will read as zeros, dirty");
    }
    Ok(BuildInfo {
        unix_time,
        git_commit,
        git_dirty,
    })
}

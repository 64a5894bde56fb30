//! `homa-nic fuzz`: hostile frames into a simulated card's RX port while it
//! serves real RPCs (`homa_testbench::fuzz`); every finding printed with the
//! seed and frames that reproduce it. Exits with an error if there is one.

use anyhow::bail;
use clap::Args;
use homa_testbench::fuzz::{self, FuzzConfig};
use indicatif::{ProgressBar, ProgressStyle};

#[derive(Args, Debug)]
pub struct FuzzArgs {
    /// Fuzz frames to inject.
    #[arg(long, default_value_t = 100_000)]
    pub frames: u64,
    /// Seed of every draw (frames, real RPCs): the same seed, the same run.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Fuzz frames between checkpoints (real RPCs drained, every frame
    /// accounted for); 1 pins a finding to its frame.
    #[arg(long, default_value_t = 1000)]
    pub check_every: u64,
    /// Real RPCs in flight beside the fuzz frames.
    #[arg(long, default_value_t = 3)]
    pub concurrency: usize,
    /// One JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &FuzzArgs) -> anyhow::Result<()> {
    if args.frames == 0 {
        bail!("--frames must be at least 1");
    }
    if !(1..=32).contains(&args.concurrency) {
        bail!("--concurrency must be 1 to 32");
    }
    if args.check_every == 0 {
        bail!("--check-every must be at least 1");
    }
    let mut cfg = FuzzConfig::new(args.frames, args.seed);
    cfg.check_every = args.check_every;
    cfg.concurrency = args.concurrency;
    let bar = if args.json || args.frames < 5_000 {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(args.frames).with_style(
            ProgressStyle::with_template(
                "{bar:40} {pos}/{len} frames {per_sec} {elapsed} (eta {eta})",
            )
            .unwrap(),
        )
    };
    let report = fuzz::run(&cfg, &mut |done| bar.set_position(done));
    bar.finish_and_clear();
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        println!(
            "{} fuzz frames (seed {}) into a simulated card serving real RPCs: {} cycles, {:.1} s, {:.0} frames/s",
            report.frames, report.seed, report.cycles, report.wall_seconds, report.frames_per_second
        );
        let classes: Vec<String> = report
            .by_class
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        println!("  made as: {}", classes.join(", "));
        let verdicts: Vec<String> = report
            .verdicts
            .iter()
            .filter(|(_, v)| **v > 0)
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        println!(
            "  parser verdicts (fuzz and real frames): {}",
            verdicts.join(", ")
        );
        let engine: Vec<String> = report
            .engine
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        println!("  RX engine: {}", engine.join(", "));
        println!(
            "  real RPCs completed, each echo checked byte for byte: {}; ended by frames forged at them (failed with an error): {}; requests run again after forgeries ended them: {}; forged messages the card delivered: {}; checkpoints: {}",
            report.rpcs_completed, report.rpcs_ended_by_forgeries, report.requests_rerun_after_forgeries, report.forged_messages_delivered, report.checkpoints
        );
        println!(
            "  inbound messages expired unfinished: {} ({} of them forged responses, failed to the host); deliveries into a bpage such an expiry may have recycled (not checked for stray writes): {}",
            report.inbound_expired, report.forged_messages_expired, report.past_end_unchecked
        );
        if report.findings.is_empty() {
            println!("no finding");
        }
        for f in &report.findings {
            println!("FINDING {f}");
            println!(
                "  reproduce: homa-nic fuzz --seed {} --frames {} --check-every {} --concurrency {}",
                f.seed,
                f.last_frame + 1,
                args.check_every,
                args.concurrency
            );
        }
    }
    if !report.findings.is_empty() {
        bail!("{} finding(s)", report.findings.len());
    }
    Ok(())
}

//! `homa-nic fuzz` in CI: hostile frames into a simulated card serving real
//! RPCs (`homa_testbench::fuzz`) must give no finding. The release
//! benchmark runs 10^7 (`cargo run --release -- fuzz --frames 10000000`).

use homa_testbench::fuzz::{self, FuzzConfig};

fn no_finding(frames: u64, seed: u64) {
    let report = fuzz::run(&FuzzConfig::new(frames, seed), &mut |_| {});
    eprintln!(
        "{} frames, {} cycles, {:.1} s, {:.0} frames/s; {} real RPCs, {} forged messages delivered; {:?}",
        report.frames,
        report.cycles,
        report.wall_seconds,
        report.frames_per_second,
        report.rpcs_completed,
        report.forged_messages_delivered,
        report.by_class
    );
    for f in &report.findings {
        eprintln!("FINDING {f}");
    }
    assert!(
        report.findings.is_empty(),
        "{} finding(s)",
        report.findings.len()
    );
    assert_eq!(report.frames, frames);
    assert!(
        report.rpcs_completed > 0,
        "real RPCs ran beside the fuzz frames"
    );
}

/// 10^5 frames, the CI run: two halves with their own seeds, so the test
/// harness runs them on two cores at once.
#[test]
fn fifty_thousand_hostile_frames_find_nothing() {
    no_finding(50_000, 1);
}

/// The other half of the CI run's 10^5 frames.
#[test]
fn fifty_thousand_more_hostile_frames_on_another_seed_find_nothing() {
    no_finding(50_000, 2);
}

/// A short run with a checkpoint every 100 frames (the accounting is exact
/// at each), and the same run again: the same report.
#[test]
fn a_short_run_checked_often_finds_nothing_and_repeats_exactly() {
    let mut cfg = FuzzConfig::new(3_000, 7);
    cfg.check_every = 100;
    let a = fuzz::run(&cfg, &mut |_| {});
    for f in &a.findings {
        eprintln!("FINDING {f}");
    }
    assert!(a.findings.is_empty());
    assert_eq!(a.checkpoints, 30, "29 on the way and the last");
    let b = fuzz::run(&cfg, &mut |_| {});
    assert_eq!(
        (a.cycles, &a.verdicts, &a.engine),
        (b.cycles, &b.verdicts, &b.engine)
    );
}

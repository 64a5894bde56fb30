//! Whole-cluster properties of the model on the simulated network: the
//! "done when" list of issue 3. Sized to run in seconds in a debug build.

use homa_testbench::cluster::{Cluster, ClusterConfig, LoadConfig, Outcome, ResponsePolicy};
use homa_testbench::model::CYCLES_PER_US;
use homa_testbench::net::{FaultConfig, LinkEvent};
use homa_testbench::workload::Workload;

const US: u64 = CYCLES_PER_US;

/// A small all-to-all Poisson run: 4 hosts, W3 capped at 100 KB, 100 us of load.
fn small_load_run(faults: FaultConfig, seed: u64) -> Cluster {
    load_run("w3", 100_000, 100, faults, seed)
}

fn load_run(workload: &str, max_len: u32, us: u64, faults: FaultConfig, seed: u64) -> Cluster {
    let mut cfg = ClusterConfig::new(4);
    cfg.seed = seed;
    cfg.verify_codec = true;
    cfg.faults = faults;
    cfg.homa.tick_cycles = 10 * US; // resend after 50 us, timeout after 1 ms
    cfg.homa.max_message_length = max_len;
    let mut c = Cluster::new(cfg);
    c.start_load(LoadConfig {
        workload: Workload::builtin(workload).unwrap().capped(max_len),
        load: 0.5,
        until: us * US,
    });
    let all_done = c.run_until_idle(20_000 * US, |_| {});
    assert!(all_done, "{} RPCs still pending", c.pending_rpcs());
    c
}

fn assert_every_rpc_completed_once_intact(c: &Cluster) {
    eprintln!(
        "{} RPCs, faults {:?}",
        c.counters.rpcs_started, c.counters.faults
    );
    let k = &c.counters;
    assert!(
        k.rpcs_started > 20,
        "too few RPCs to mean anything: {}",
        k.rpcs_started
    );
    for (i, r) in c.records.iter().enumerate() {
        assert_eq!(r.outcome, Outcome::Completed, "RPC {i}: {r:?}");
        assert_eq!(
            r.completions, 1,
            "RPC {i} completed {} times",
            r.completions
        );
    }
    assert_eq!(k.rpcs_completed, k.rpcs_started);
    assert_eq!(k.rpcs_failed, 0);
    assert_eq!(k.response_checksum_errors, 0);
    assert_eq!(k.request_checksum_errors, 0);
    assert_eq!(k.duplicate_completions, 0);
    assert_eq!(k.unknown_responses, 0);
    assert_eq!(k.codec_mismatches, 0);
    assert_eq!(
        k.codec_checked, k.frames_sent,
        "every frame went through the codec"
    );
}

#[test]
fn every_rpc_completes_exactly_once_with_its_payload_intact() {
    let c = small_load_run(FaultConfig::default(), 1);
    assert_every_rpc_completed_once_intact(&c);
    assert_eq!(c.counters.duplicate_requests, 0);
    for h in 0..4 {
        assert_eq!(
            c.endpoint(h).counters().resends_out,
            0,
            "no loss, no RESEND"
        );
    }
}

#[test]
fn every_rpc_completes_exactly_once_under_loss_duplication_reordering_and_corruption() {
    let faults = FaultConfig {
        loss: 0.05,
        duplicate: 0.02,
        reorder: 0.05,
        reorder_max_cycles: 3 * US,
        corrupt: 0.01,
        link_events: vec![],
    };
    for seed in [7, 8, 9] {
        let c = small_load_run(faults.clone(), seed);
        assert_every_rpc_completed_once_intact(&c);
        let f = &c.counters.faults;
        assert!(
            f.lost > 0 && f.duplicated > 0 && f.reordered > 0 && f.corrupted > 0,
            "{f:?}"
        );
        let rejected: u64 = (0..4)
            .map(|h| c.endpoint(h).counters().rx_decode_errors)
            .sum();
        assert_eq!(
            rejected, f.corrupted,
            "every corrupted frame is rejected by the decoder"
        );
        let resends: u64 = (0..4).map(|h| c.endpoint(h).counters().resends_out).sum();
        assert!(resends > 0, "losses were repaired by RESEND");
    }
}

#[test]
fn long_scheduled_messages_survive_5_percent_loss_with_duplication_and_reordering() {
    let faults = FaultConfig {
        loss: 0.05,
        duplicate: 0.05,
        reorder: 0.05,
        reorder_max_cycles: 3 * US,
        corrupt: 0.0,
        link_events: vec![],
    };
    // W4 capped at 300 KB: most bytes are scheduled, so GRANTs get lost too.
    let c = load_run("w4", 300_000, 800, faults, 11);
    assert_every_rpc_completed_once_intact(&c);
    let grants: u64 = (0..4).map(|h| c.endpoint(h).counters().grants_out).sum();
    let retransmitted: u64 = (0..4)
        .map(|h| c.endpoint(h).counters().retransmitted_packets)
        .sum();
    assert!(
        grants > 100 && retransmitted > 0,
        "grants {grants}, retransmitted {retransmitted}"
    );
}

#[test]
fn the_same_seed_gives_the_same_run() {
    let faults = FaultConfig {
        loss: 0.02,
        ..FaultConfig::default()
    };
    let a = small_load_run(faults.clone(), 3);
    let b = small_load_run(faults, 3);
    let ends = |c: &Cluster| {
        c.records
            .iter()
            .map(|r| (r.request_bytes, r.end))
            .collect::<Vec<_>>()
    };
    assert_eq!(ends(&a), ends(&b));
    assert_eq!(a.counters.events, b.counters.events);
}

#[test]
fn a_short_message_overtakes_a_long_one_that_started_first() {
    let mut c = Cluster::new(ClusterConfig::new(3));
    // Same sender: SRPT at the sender. Another sender: SRPT at the receiver
    // (grants, and the short message's higher unscheduled priority).
    let long = c.add_rpc(0, 0, 1, 500_000);
    let short_same_sender = c.add_rpc(10 * US, 0, 1, 5_000);
    let short_other_sender = c.add_rpc(20 * US, 2, 1, 30_000);
    assert!(c.run_until_idle(10_000 * US, |_| {}));
    let end = |i: usize| c.records[i].end.unwrap();
    let took = |i: usize| end(i) - c.records[i].start;
    assert!(end(short_same_sender) < end(long));
    assert!(end(short_other_sender) < end(long));
    // And they barely notice the long one: within 2x of their idle time.
    let mut idle = Cluster::new(ClusterConfig::new(3));
    let a = idle.add_rpc(0, 0, 1, 5_000);
    let b = idle.add_rpc(1000 * US, 2, 1, 30_000);
    assert!(idle.run_until_idle(10_000 * US, |_| {}));
    let idle_took = |i: usize| idle.records[i].end.unwrap() - idle.records[i].start;
    assert!(
        took(short_same_sender) < 2 * idle_took(a),
        "{} vs {}",
        took(short_same_sender),
        idle_took(a)
    );
    assert!(
        took(short_other_sender) < 2 * idle_took(b),
        "{} vs {}",
        took(short_other_sender),
        idle_took(b)
    );
}

#[test]
fn granted_but_unreceived_bytes_never_exceed_max_incoming() {
    let mut cfg = ClusterConfig::new(9);
    cfg.homa.max_incoming = 150_000;
    cfg.response = ResponsePolicy::Fixed(100);
    let max_incoming = cfg.homa.max_incoming as u64;
    let mut c = Cluster::new(cfg);
    // Incast: eight senders, 300 KB each, to host 0 at once.
    for s in 1..9 {
        c.add_rpc(0, s, 0, 300_000);
    }
    // Check the receiver's own count at every step, not just its high-water mark.
    let mut worst = 0;
    while c.pending_rpcs() > 0 && c.now() < 50_000 * US {
        let t = c.now() + 1;
        c.run_until(t, |_| {});
        worst = worst.max(c.endpoint(0).total_incoming());
    }
    assert_eq!(c.pending_rpcs(), 0);
    let receiver = c.endpoint(0).counters();
    assert!(receiver.grants_out > 50);
    assert!(
        receiver.max_incoming_after_grant <= max_incoming,
        "a grant lifted incoming to {}",
        receiver.max_incoming_after_grant
    );
    assert!(
        receiver.max_incoming_after_grant > max_incoming / 2,
        "the cap was never approached"
    );
    // Unscheduled bytes (8 x 40 KB here) are not the receiver's to limit; it
    // can only stop granting while they are in flight.
    assert!(
        worst <= max_incoming + 8 * 40_000,
        "incoming reached {worst}"
    );
}

/// Host 2 floods host 0 with 30 KB messages for 600 us, more than its link
/// takes; 20 us in, host 1 sends it one 200 KB message. One message is
/// granted at a time, in 10 KB windows, so the flood always has a shorter
/// message waiting for grants. Returns (end of the long RPC, start of the
/// flood's last RPC).
fn starvation_run(grant_fifo_fraction: u32) -> (u64, u64) {
    let mut cfg = ClusterConfig::new(3);
    cfg.homa.max_overcommit = 1;
    cfg.homa.window = 10_000;
    cfg.homa.unsched_bytes = 5_000;
    cfg.homa.grant_fifo_fraction = grant_fifo_fraction;
    cfg.response = ResponsePolicy::Fixed(100);
    let mut c = Cluster::new(cfg);
    let long = c.add_rpc(20 * US, 1, 0, 200_000);
    let mut last = 0;
    let mut t = US;
    while t < 600 * US {
        last = t;
        c.add_rpc(t, 2, 0, 30_000);
        t += 2 * US; // 15 GB/s offered to a 12.5 GB/s link: a standing backlog
    }
    assert!(c.run_until_idle(100_000 * US, |_| {}));
    eprintln!("grant_fifo_fraction {grant_fifo_fraction}: long RPC ended at {} cycles, flood started its last RPC at {last}", c.records[long].end.unwrap());
    (c.records[long].end.unwrap(), last)
}

#[test]
fn fifo_grants_keep_a_long_message_from_starving_under_sustained_load() {
    let (long_end, flood_last_start) = starvation_run(50);
    assert!(
        long_end < flood_last_start,
        "with FIFO grants the long message finishes while the flood goes on ({long_end} vs {flood_last_start})"
    );
    // The control: without FIFO grants it waits out the whole flood.
    let (long_end, flood_last_start) = starvation_run(0);
    assert!(
        long_end > flood_last_start,
        "{long_end} vs {flood_last_start}"
    );
}

#[test]
fn an_rpc_to_a_dead_host_fails_with_a_timeout_after_the_configured_time() {
    let mut cfg = ClusterConfig::new(2);
    cfg.homa.tick_cycles = 10 * US;
    cfg.faults.link_events = vec![LinkEvent {
        host: 1,
        at: 0,
        up: false,
    }];
    let tick = cfg.homa.tick_cycles;
    let timeout = cfg.homa.timeout_ticks as u64 * tick;
    let mut c = Cluster::new(cfg);
    let i = c.add_rpc(5 * US, 0, 1, 1_000);
    assert!(c.run_until_idle(10 * timeout, |_| {}));
    let r = &c.records[i];
    assert_eq!(r.outcome, Outcome::Failed);
    let took = r.end.unwrap() - r.start;
    // Silence is counted in whole ticks, so it fails within one tick of the timeout.
    assert!(
        took >= timeout - tick && took <= timeout + tick,
        "failed after {took} cycles, timeout {timeout}"
    );
    assert_eq!(c.endpoint(0).counters().client_timeouts, 1);
    assert!(
        c.endpoint(0).counters().resends_out > 0,
        "it asked before giving up"
    );
}

#[test]
fn a_link_that_comes_back_lets_rpcs_finish() {
    let mut cfg = ClusterConfig::new(2);
    cfg.homa.tick_cycles = 10 * US;
    cfg.faults.link_events = vec![
        LinkEvent {
            host: 1,
            at: 20 * US,
            up: false,
        },
        LinkEvent {
            host: 1,
            at: 300 * US,
            up: true,
        },
    ];
    let mut c = Cluster::new(cfg);
    let i = c.add_rpc(10 * US, 0, 1, 200_000);
    assert!(c.run_until_idle(100_000 * US, |_| {}));
    assert_eq!(c.records[i].outcome, Outcome::Completed);
    assert!(c.records[i].end.unwrap() > 300 * US);
    assert!(c.counters.faults.link_down_drops > 0);
    assert_eq!(c.counters.response_checksum_errors, 0);
}

#[test]
fn switch_buffer_overflow_drops_frames_and_homa_recovers() {
    let mut cfg = ClusterConfig::new(9);
    cfg.homa.tick_cycles = 10 * US;
    cfg.net.buffer = homa_testbench::net::BufferConfig::PerPort { bytes: 60_000 };
    cfg.response = ResponsePolicy::Fixed(100);
    let mut c = Cluster::new(cfg);
    // Incast: 8 x 40 KB unscheduled arrive at once at a 60 KB port buffer.
    for s in 1..9 {
        c.add_rpc(0, s, 0, 100_000);
    }
    assert!(c.run_until_idle(100_000 * US, |_| {}));
    assert!(c.counters.switch_drops > 0, "the buffer never overflowed");
    assert!(c.switch().ports[0].max_queued_bytes <= 60_000);
    assert!(c.records.iter().all(|r| r.outcome == Outcome::Completed));
    assert_eq!(
        c.counters.response_checksum_errors + c.counters.request_checksum_errors,
        0
    );
    assert!(c.endpoint(0).counters().resends_out > 0);
}

#[test]
fn the_arrival_schedule_is_the_load_the_cluster_starts() {
    // Loss changes the network's events, never the applications' draws.
    let faults = FaultConfig {
        loss: 0.02,
        ..Default::default()
    };
    let c = load_run("w3", 100_000, 300, faults, 9);
    let mut cfg = ClusterConfig::new(c.cfg.hosts);
    cfg.seed = 9;
    cfg.homa = c.cfg.homa.clone();
    cfg.net = c.cfg.net.clone();
    let schedule = homa_testbench::cluster::arrival_schedule(
        &cfg,
        &LoadConfig {
            workload: Workload::builtin("w3").unwrap().capped(100_000),
            load: 0.5,
            until: 300 * CYCLES_PER_US,
        },
    );
    assert!(schedule.len() > 20, "{} RPCs", schedule.len());
    let started: Vec<_> = c
        .records
        .iter()
        .map(|r| (r.start, r.client, r.server, r.request_bytes))
        .collect();
    let expected: Vec<_> = schedule
        .iter()
        .map(|a| (a.at, a.client, a.server, a.request_bytes))
        .collect();
    assert_eq!(started, expected);
}

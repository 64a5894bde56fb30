//! Simulator speed: packet events per wall-clock second on one core, for a
//! 16-host, 100 Gb/s, 80%-load W4 cluster (the configuration of the slowdown
//! tables). `cargo bench -p homa-testbench`; HOMA_BENCH_US sets the simulated
//! microseconds (default 2000).

use homa_testbench::cluster::ClusterConfig;
use homa_testbench::model::CYCLES_PER_US;
use homa_testbench::report::{self, Experiment};
use homa_testbench::workload::Workload;

fn main() {
    let us: u64 = std::env::var("HOMA_BENCH_US")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);
    let cluster = ClusterConfig::new(16);
    let workload = Workload::builtin("w4")
        .unwrap()
        .capped(cluster.homa.max_message_length);
    let exp = Experiment {
        cluster,
        workload,
        load: 0.8,
        duration_cycles: us * CYCLES_PER_US,
        warmup_cycles: us * CYCLES_PER_US / 10,
        drain_limit_cycles: us * CYCLES_PER_US,
        pcap: None,
    };
    let r = report::run(&exp, |_, _| {}).expect("experiment runs");
    println!(
        "model/cluster_w4_16hosts_80pct: {} events in {:.3} s = {:.2} M packet events/s ({} us simulated, {} RPCs, mean slowdown {:.2})",
        r.events,
        r.wall_seconds,
        r.events_per_sec / 1e6,
        us,
        r.rpcs_completed,
        r.mean_slowdown
    );
}

//! Experiments end to end: the report's numbers, the plot, the capture.

use homa_testbench::cluster::ClusterConfig;
use homa_testbench::model::CYCLES_PER_US;
use homa_testbench::report::{self, Baselines, Experiment};
use homa_testbench::workload::Workload;
use homa_wire::pcap::FrameReader;
use homa_wire::Frame;

const US: u64 = CYCLES_PER_US;

fn experiment(load: f64, us: u64) -> Experiment {
    let cluster = ClusterConfig::new(4);
    Experiment {
        workload: Workload::builtin("w3").unwrap().capped(200_000),
        cluster,
        load,
        duration_cycles: us * US,
        warmup_cycles: us * US / 10,
        drain_limit_cycles: 10_000 * US,
        pcap: None,
    }
}

#[test]
fn a_nearly_idle_network_has_slowdown_near_one_and_load_raises_it() {
    let light = report::run(&experiment(0.02, 400), |_, _| {}).unwrap();
    assert!(light.rpcs_completed > 10);
    assert_eq!(light.rpcs_failed + light.rpcs_unfinished, 0);
    // (Events land on whole cycles while links keep sub-cycle time, so an
    // RPC can beat its idle baseline by a cycle or two.)
    assert!(
        light.p50_slowdown >= 0.98 && light.p50_slowdown < 1.05,
        "{}",
        light.p50_slowdown
    );
    let heavy = report::run(&experiment(0.8, 200), |_, _| {}).unwrap();
    assert!(heavy.mean_slowdown > light.mean_slowdown);
    assert!(
        heavy.utilization.uplink_mean > 0.5,
        "{:?}",
        heavy.utilization
    );
    assert!(heavy.max_port_queue_bytes > 0);
    let counted: usize = heavy.buckets.iter().map(|b| b.count).sum();
    assert_eq!(
        counted, heavy.rpcs_completed,
        "every RPC lands in one bucket"
    );
    for b in &heavy.buckets {
        assert!(b.p50 <= b.p99 && b.p50 >= 0.98, "{b:?}");
    }
    let text = heavy.to_text();
    assert!(text.contains("p99") && text.contains("unloaded"));
}

#[test]
fn the_idle_baseline_grows_with_size_and_matches_the_link_rate() {
    let mut b = Baselines::new(&ClusterConfig::new(2));
    let small = b.rpc_cycles(100, 100);
    let big = b.rpc_cycles(1_000_000, 1_000_000);
    assert!(small < 400, "100 B echo took {small} cycles");
    // 2 x 1 MB of payload in 1424-byte packets of 1538 wire bytes at 50 B/cycle.
    let wire = 2.0 * 1e6 / 1424.0 * 1538.0 / 50.0;
    assert!(
        (big as f64) > wire && (big as f64) < wire * 1.05,
        "{big} vs {wire}"
    );
}

#[test]
fn the_plot_and_the_capture_are_written() {
    let dir = std::env::temp_dir().join(format!("homa-testbench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pcap = dir.join("sim.pcap");
    let svg = dir.join("slowdown.svg");
    let mut exp = experiment(0.5, 40);
    exp.pcap = Some(pcap.clone());
    let r = report::run(&exp, |_, _| {}).unwrap();
    homa_testbench::plot::slowdown_svg(&r, &svg).unwrap();
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("<svg") && text.contains("p99"));
    let frames: Vec<_> = FrameReader::open(&pcap)
        .unwrap()
        .map(|f| f.unwrap())
        .collect();
    assert_eq!(frames.len() as u64, r.cluster.frames_sent);
    for f in &frames {
        Frame::decode(&f.bytes).expect("every captured frame decodes");
    }
    assert!(frames.windows(2).all(|w| w[0].timestamp <= w[1].timestamp));
    std::fs::remove_dir_all(&dir).unwrap();
}

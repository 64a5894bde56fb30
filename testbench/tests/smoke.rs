use homa_testbench::cluster::{Cluster, ClusterConfig, Outcome};

#[test]
fn one_rpc_of_each_size_completes() {
    for size in [1u32, 100, 1500, 40_000, 100_000, 1_000_000] {
        let mut cfg = ClusterConfig::new(2);
        cfg.verify_codec = true;
        let mut c = Cluster::new(cfg);
        let i = c.add_rpc(0, 0, 1, size);
        assert!(c.run_until_idle(50_000_000, |_| {}));
        let r = &c.records[i];
        eprintln!(
            "size {size}: {:?} cycles, events {} {:?}",
            r.end, c.counters.events, c.counters
        );
        assert_eq!(r.outcome, Outcome::Completed);
        assert_eq!(c.counters.response_checksum_errors, 0);
        assert_eq!(c.counters.codec_mismatches, 0);
    }
}

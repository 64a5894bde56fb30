//! Cluster experiments and what they report: unloaded RTT by message size,
//! and under load slowdown per message-size bucket (p50, p99), mean slowdown,
//! RPCs completed/failed, link utilization, switch queues, simulator speed.
//!
//! DESIGN NOTES
//! - Slowdown of an RPC = its completion time under load / the completion
//!   time of the same RPC (same request and response sizes) alone on an idle
//!   network. The baseline is *measured* with the same simulator and
//!   configuration: one idle two-host run per distinct (request, response)
//!   size pair that occurs, cached. Since the workload tables are discrete,
//!   this is exact, not interpolated.
//! - RPCs started during the warm-up (the network filling up) are left out;
//!   RPCs started before the end of the load period are followed until they
//!   end (the drain), so long messages are not censored.

use std::collections::HashMap;
use std::io::Write as _;
use std::time::Instant;

use serde::Serialize;

use crate::cluster::{Cluster, ClusterConfig, ClusterCounters, LoadConfig, Outcome};
use crate::model::{Cycles, CYCLES_PER_US};
use crate::workload::Workload;

/// A load experiment.
#[derive(Clone, Debug, Serialize)]
pub struct Experiment {
    pub cluster: ClusterConfig,
    pub workload: Workload,
    /// Offered load, fraction of access-link capacity.
    pub load: f64,
    /// Length of the load period.
    pub duration_cycles: Cycles,
    /// RPCs starting before this are not measured.
    pub warmup_cycles: Cycles,
    /// Stop following unfinished RPCs this long after the load period.
    pub drain_limit_cycles: Cycles,
    /// Write every frame sent into this pcap file.
    #[serde(skip)]
    pub pcap: Option<std::path::PathBuf>,
}

/// An experiment could not run.
#[derive(Debug, thiserror::Error)]
pub enum ExperimentError {
    #[error("pcap capture: {0}")]
    Pcap(#[from] homa_wire::pcap::PcapError),
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

/// Slowdown statistics of one message-size bucket.
#[derive(Clone, Debug, Serialize)]
pub struct Bucket {
    /// Request sizes in (lo, hi].
    pub lo_bytes: u32,
    pub hi_bytes: u32,
    /// Median request size of the RPCs in the bucket.
    pub median_bytes: u32,
    pub count: usize,
    pub mean: f64,
    pub p50: f64,
    pub p99: f64,
}

/// Completion time of one RPC alone on an idle network.
#[derive(Clone, Debug, Serialize)]
pub struct UnloadedRtt {
    pub request_bytes: u32,
    pub response_bytes: u32,
    pub cycles: Cycles,
    pub us: f64,
}

/// Link use over the load period, as a fraction of capacity.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Utilization {
    pub uplink_mean: f64,
    pub uplink_max: f64,
    pub downlink_mean: f64,
    pub downlink_max: f64,
}

/// Everything an experiment reports.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub workload: String,
    pub hosts: usize,
    pub load: f64,
    pub link_gbps: f64,
    pub duration_us: f64,
    pub seed: u64,
    pub mean_message_bytes: f64,
    pub baseline_method: &'static str,
    pub unloaded_rtt: Vec<UnloadedRtt>,
    /// RPCs started in the measured interval.
    pub rpcs_measured: usize,
    pub rpcs_completed: usize,
    pub rpcs_failed: usize,
    pub rpcs_unfinished: usize,
    pub mean_slowdown: f64,
    pub p50_slowdown: f64,
    pub p99_slowdown: f64,
    /// Decades of request size.
    pub buckets: Vec<Bucket>,
    /// Finer buckets (1-2-5 steps), for the plot.
    pub plot_buckets: Vec<Bucket>,
    pub utilization: Utilization,
    /// Largest queue at one switch egress port (wire bytes).
    pub max_port_queue_bytes: u64,
    /// Largest switch buffer occupancy over all ports.
    pub max_buffer_bytes: u64,
    pub cluster: ClusterCounters,
    /// Endpoint counters summed over hosts.
    pub endpoints: serde_json::Value,
    pub simulated_cycles: Cycles,
    pub wall_seconds: f64,
    pub events: u64,
    pub events_per_sec: f64,
}

/// Measures idle completion times, once per size pair.
pub struct Baselines {
    cfg: ClusterConfig,
    cache: HashMap<(u32, u32), Cycles>,
}

impl Baselines {
    pub fn new(cluster: &ClusterConfig) -> Baselines {
        let mut cfg = cluster.clone();
        cfg.hosts = 2;
        cfg.faults = Default::default();
        cfg.verify_codec = false;
        Baselines {
            cfg,
            cache: HashMap::new(),
        }
    }

    /// Completion time of one RPC with a `request_bytes` request alone on
    /// an idle network (the response per the cluster's policy).
    pub fn rpc_cycles(&mut self, request_bytes: u32, response_bytes: u32) -> Cycles {
        if let Some(&c) = self.cache.get(&(request_bytes, response_bytes)) {
            return c;
        }
        let mut cluster = Cluster::new(self.cfg.clone());
        let i = cluster.add_rpc(0, 0, 1, request_bytes);
        let limit = 100 * self.cfg.homa.tick_cycles.max(1_000_000);
        cluster.run_until_idle(limit, |_| {});
        let r = &cluster.records[i];
        assert_eq!(r.response_bytes, response_bytes, "response policy mismatch");
        let cycles = match (r.outcome, r.end) {
            (Outcome::Completed, Some(end)) => end - r.start,
            _ => panic!(
                "idle RPC of {request_bytes} bytes did not complete: {:?}",
                r.outcome
            ),
        };
        self.cache.insert((request_bytes, response_bytes), cycles);
        cycles
    }
}

/// The p-th quantile (0..=1) of sorted values (nearest rank).
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = (p * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn bucket_stats(mut rows: Vec<(u32, f64)>, lo: u32, hi: u32) -> Option<Bucket> {
    if rows.is_empty() {
        return None;
    }
    rows.sort_by_key(|r| r.0);
    let median_bytes = rows[rows.len() / 2].0;
    let mut s: Vec<f64> = rows.iter().map(|r| r.1).collect();
    s.sort_by(f64::total_cmp);
    Some(Bucket {
        lo_bytes: lo,
        hi_bytes: hi,
        median_bytes,
        count: s.len(),
        mean: s.iter().sum::<f64>() / s.len() as f64,
        p50: percentile(&s, 0.5),
        p99: percentile(&s, 0.99),
    })
}

fn buckets(rows: &[(u32, f64)], edges: &[u32]) -> Vec<Bucket> {
    let mut out = Vec::new();
    let mut lo = 0;
    for &hi in edges.iter().chain(std::iter::once(&u32::MAX)) {
        let inside: Vec<(u32, f64)> = rows
            .iter()
            .copied()
            .filter(|&(b, _)| b > lo && b <= hi)
            .collect();
        if let Some(b) = bucket_stats(inside, lo, hi) {
            out.push(b);
        }
        lo = hi;
        if hi == u32::MAX {
            break;
        }
    }
    out
}

fn decade_edges() -> Vec<u32> {
    vec![100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000]
}

fn fine_edges() -> Vec<u32> {
    let mut e = Vec::new();
    let mut d: u64 = 10;
    while d <= 100_000_000 {
        for m in [1, 2, 5] {
            e.push((d * m) as u32);
        }
        d *= 10;
    }
    e
}

/// Request sizes whose idle RTT the report lists.
pub const RTT_SIZES: [u32; 7] = [1, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000];

/// The RPC part of a report: what the measured RPCs did and their slowdown.
#[derive(Clone, Debug)]
pub struct RpcSummary {
    pub measured: usize,
    pub completed: usize,
    pub failed: usize,
    pub unfinished: usize,
    pub mean_slowdown: f64,
    pub p50_slowdown: f64,
    pub p99_slowdown: f64,
    pub buckets: Vec<Bucket>,
    pub plot_buckets: Vec<Bucket>,
}

/// Summarizes the RPCs started in [`warmup`, `duration`) of `records`;
/// `baseline(request_bytes, response_bytes)` is the idle completion time a
/// completed RPC's time is divided by. Any engine's records (the model's
/// cluster, the RTL cluster) go through here, so their tables agree in form.
pub fn summarize_rpcs(
    records: &[crate::cluster::RpcRecord],
    warmup: Cycles,
    duration: Cycles,
    mut baseline: impl FnMut(u32, u32) -> Cycles,
) -> RpcSummary {
    let measured: Vec<_> = records
        .iter()
        .filter(|r| r.start >= warmup && r.start < duration)
        .collect();
    let mut rows: Vec<(u32, f64)> = Vec::new();
    let (mut completed, mut failed, mut unfinished) = (0, 0, 0);
    for r in &measured {
        match r.outcome {
            Outcome::Completed => {
                completed += 1;
                let base = baseline(r.request_bytes, r.response_bytes);
                let took = r.end.unwrap() - r.start;
                rows.push((r.request_bytes, took as f64 / base as f64));
            }
            Outcome::Failed => failed += 1,
            Outcome::Pending => unfinished += 1,
        }
    }
    let mut all: Vec<f64> = rows.iter().map(|r| r.1).collect();
    all.sort_by(f64::total_cmp);
    let mean_slowdown = if all.is_empty() {
        f64::NAN
    } else {
        all.iter().sum::<f64>() / all.len() as f64
    };
    RpcSummary {
        measured: measured.len(),
        completed,
        failed,
        unfinished,
        mean_slowdown,
        p50_slowdown: percentile(&all, 0.5),
        p99_slowdown: percentile(&all, 0.99),
        buckets: buckets(&rows, &decade_edges()),
        plot_buckets: buckets(&rows, &fine_edges()),
    }
}

/// Runs an experiment; `progress(now, end)` is called now and then.
pub fn run(
    exp: &Experiment,
    mut progress: impl FnMut(Cycles, Cycles),
) -> Result<Report, ExperimentError> {
    let cfg = &exp.cluster;
    let mut cluster = Cluster::new(cfg.clone());
    if let Some(path) = &exp.pcap {
        let file = std::fs::File::create(path).map_err(|source| ExperimentError::Io {
            path: path.display().to_string(),
            source,
        })?;
        let out: Box<dyn std::io::Write> = Box::new(std::io::BufWriter::new(file));
        cluster.capture(homa_wire::pcap::FrameWriter::new(out)?);
    }
    cluster.start_load(LoadConfig {
        workload: exp.workload.clone(),
        load: exp.load,
        until: exp.duration_cycles,
    });
    let end = exp.duration_cycles + exp.drain_limit_cycles;
    let wall = Instant::now();
    cluster.run_until(exp.duration_cycles, |now| progress(now, end));
    cluster.run_until_idle(end, |now| progress(now, end));
    let wall_seconds = wall.elapsed().as_secs_f64();
    let events = cluster.counters.events;
    if let Some(mut out) = cluster.finish_capture() {
        out.flush().map_err(|source| ExperimentError::Io {
            path: exp.pcap.as_ref().unwrap().display().to_string(),
            source,
        })?;
    }

    let mut baselines = Baselines::new(cfg);
    let max_len = cfg.homa.max_message_length;
    let unloaded_rtt = RTT_SIZES
        .iter()
        .filter(|&&s| s <= max_len)
        .map(|&s| {
            let resp = match cfg.response {
                crate::cluster::ResponsePolicy::Echo => s,
                crate::cluster::ResponsePolicy::Fixed(n) => n,
            };
            let cycles = baselines.rpc_cycles(s, resp);
            UnloadedRtt {
                request_bytes: s,
                response_bytes: resp,
                cycles,
                us: cycles as f64 / CYCLES_PER_US as f64,
            }
        })
        .collect();

    let rpcs = summarize_rpcs(
        &cluster.records,
        exp.warmup_cycles,
        exp.duration_cycles,
        |req, resp| baselines.rpc_cycles(req, resp),
    );

    let snap = cluster.snapshot.clone().unwrap_or_default();
    let capacity =
        crate::net::Link::new(cfg.net.link_gbps).bytes_per_cycle() * snap.at.max(1) as f64;
    let frac = |v: &[u64]| -> (f64, f64) {
        let f: Vec<f64> = v.iter().map(|&b| b as f64 / capacity).collect();
        let mean = f.iter().sum::<f64>() / f.len().max(1) as f64;
        (mean, f.iter().copied().fold(0.0, f64::max))
    };
    let (uplink_mean, uplink_max) = frac(&snap.uplink_bytes);
    let (downlink_mean, downlink_max) = frac(&snap.downlink_bytes);

    let mut endpoints = serde_json::Map::new();
    for h in 0..cfg.hosts {
        let v = serde_json::to_value(cluster.endpoint(h).counters()).unwrap();
        for (k, v) in v.as_object().unwrap() {
            let x = v.as_u64().unwrap_or(0);
            let e = endpoints
                .entry(k.clone())
                .or_insert(serde_json::json!(0u64));
            let cur = e.as_u64().unwrap();
            *e = if k.starts_with("max_") {
                serde_json::json!(cur.max(x))
            } else {
                serde_json::json!(cur + x)
            };
        }
    }

    Ok(Report {
        workload: exp.workload.name.clone(),
        hosts: cfg.hosts,
        load: exp.load,
        link_gbps: cfg.net.link_gbps,
        duration_us: exp.duration_cycles as f64 / CYCLES_PER_US as f64,
        seed: cfg.seed,
        mean_message_bytes: exp.workload.mean(),
        baseline_method: "measured: the same RPC alone on an idle 2-host network with the same configuration, one run per distinct size",
        unloaded_rtt,
        rpcs_measured: rpcs.measured,
        rpcs_completed: rpcs.completed,
        rpcs_failed: rpcs.failed,
        rpcs_unfinished: rpcs.unfinished,
        mean_slowdown: rpcs.mean_slowdown,
        p50_slowdown: rpcs.p50_slowdown,
        p99_slowdown: rpcs.p99_slowdown,
        buckets: rpcs.buckets,
        plot_buckets: rpcs.plot_buckets,
        utilization: Utilization {
            uplink_mean,
            uplink_max,
            downlink_mean,
            downlink_max,
        },
        max_port_queue_bytes: cluster
            .switch()
            .ports
            .iter()
            .map(|p| p.max_queued_bytes)
            .max()
            .unwrap_or(0),
        max_buffer_bytes: cluster.switch().max_total_queued_bytes,
        cluster: cluster.counters.clone(),
        endpoints: serde_json::Value::Object(endpoints),
        simulated_cycles: cluster.now(),
        wall_seconds,
        events,
        events_per_sec: events as f64 / wall_seconds.max(1e-9),
    })
}

fn fmt_bytes(b: u32) -> String {
    match b {
        u32::MAX => "inf".into(),
        b if b >= 1_000_000 && b % 1_000_000 == 0 => format!("{}M", b / 1_000_000),
        b if b >= 1_000 && b % 1_000 == 0 => format!("{}K", b / 1_000),
        b => b.to_string(),
    }
}

impl Report {
    /// The report as text tables.
    pub fn to_text(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{} hosts, workload {} (mean {:.0} B), load {:.2}, {} Gb/s, {:.0} us simulated, seed {}",
            self.hosts,
            self.workload.to_uppercase(),
            self.mean_message_bytes,
            self.load,
            self.link_gbps,
            self.duration_us,
            self.seed
        );
        let _ = writeln!(
            s,
            "\nunloaded RPC time (request and response of this size):"
        );
        let _ = writeln!(s, "  {:>10}  {:>10}  {:>10}", "bytes", "cycles", "us");
        for r in &self.unloaded_rtt {
            let _ = writeln!(
                s,
                "  {:>10}  {:>10}  {:>10.2}",
                r.request_bytes, r.cycles, r.us
            );
        }
        let _ = writeln!(s, "\nslowdown by request size ({}):", self.baseline_method);
        let _ = writeln!(
            s,
            "  {:>14}  {:>8}  {:>8}  {:>8}  {:>8}",
            "size", "rpcs", "mean", "p50", "p99"
        );
        for b in &self.buckets {
            let _ = writeln!(
                s,
                "  {:>14}  {:>8}  {:>8.2}  {:>8.2}  {:>8.2}",
                format!("({}, {}]", fmt_bytes(b.lo_bytes), fmt_bytes(b.hi_bytes)),
                b.count,
                b.mean,
                b.p50,
                b.p99
            );
        }
        let _ = writeln!(
            s,
            "  {:>14}  {:>8}  {:>8.2}  {:>8.2}  {:>8.2}",
            "all", self.rpcs_completed, self.mean_slowdown, self.p50_slowdown, self.p99_slowdown
        );
        let _ = writeln!(
            s,
            "\nRPCs measured {}: completed {}, failed {}, unfinished {}",
            self.rpcs_measured, self.rpcs_completed, self.rpcs_failed, self.rpcs_unfinished
        );
        let u = &self.utilization;
        let _ = writeln!(
            s,
            "link utilization: uplinks mean {:.3} max {:.3}; downlinks mean {:.3} max {:.3}",
            u.uplink_mean, u.uplink_max, u.downlink_mean, u.downlink_max
        );
        let _ = writeln!(
            s,
            "switch: max port queue {} B, max buffer {} B, drops {}",
            self.max_port_queue_bytes, self.max_buffer_bytes, self.cluster.switch_drops
        );
        let _ = writeln!(
            s,
            "simulator: {} events in {:.2} s wall = {:.2} M events/s ({} cycles = {:.1} us simulated)",
            self.events,
            self.wall_seconds,
            self.events_per_sec / 1e6,
            self.simulated_cycles,
            self.simulated_cycles as f64 / CYCLES_PER_US as f64
        );
        s
    }
}

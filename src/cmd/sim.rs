//! `homa-nic sim`: a cluster of simulated Homa NICs under a workload; prints
//! unloaded RTTs and slowdown by message size (text or JSON), optionally
//! plots p99 slowdown against message size and captures every frame.
//! `--engine rtl` runs the same experiment on simulated RTL cards
//! (`sim_rtl`).

use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::{Args, ValueEnum};
use homa_testbench::cluster::{ClusterConfig, ResponsePolicy};
use homa_testbench::model::CYCLES_PER_US;
use homa_testbench::net::{BufferConfig, FaultConfig, LinkEvent};
use homa_testbench::report::{self, Experiment};
use homa_testbench::workload::Workload;

use super::sim_rtl;
use indicatif::{ProgressBar, ProgressStyle};

/// Which implementation of the NIC the hosts run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Engine {
    /// The Rust reference model (fast; the golden model of the RTL).
    Model,
    /// The card's RTL (Verilator) behind the real driver and host-lib, on
    /// the same network model: the same RPCs, the same report. Slow: 4
    /// cards simulate about 100-200 us per second of wall time (release
    /// build), more cards proportionally less; no loss or faults (the card
    /// does not retransmit yet). See docs/sim-rtl.md.
    Rtl,
}

#[derive(Args, Debug)]
pub struct SimArgs {
    /// NIC implementation in every host.
    #[arg(long, value_enum, default_value = "model")]
    pub engine: Engine,
    /// Hosts, each with one link to a single switch [default: 16 for the
    /// model, 4 for rtl, whose every host is a simulated card].
    #[arg(long)]
    pub hosts: Option<usize>,
    /// Message-size distribution: w1..w5 (Homa SIGCOMM 2018), compiled in;
    /// $HOMA_WORKLOADS_DIR/<name>.csv instead when that variable is set.
    #[arg(long, default_value = "w4")]
    pub workload: String,
    /// Read the distribution from this CSV instead (`#` comment, `length,weight` header, rows).
    #[arg(long)]
    pub workload_file: Option<PathBuf>,
    /// Offered load as a fraction of access-link capacity (wire bytes), 0.0-0.95.
    #[arg(long, default_value_t = 0.8)]
    pub load: f64,
    /// Link rate, Gb/s.
    #[arg(long, default_value_t = 100.0)]
    pub link_gbps: f64,
    /// Simulated time during which RPCs start (then the simulation drains)
    /// [default: 2000 for the model, 200 for rtl].
    #[arg(long)]
    pub duration_us: Option<u64>,
    /// rtl: stop when no RPC has completed for this long after the load
    /// period (a lost frame stalls its RPC: the card does not retransmit yet).
    #[arg(long, default_value_t = 500)]
    pub stall_us: u64,
    /// RPCs starting before this are not measured [default: 10% of the duration].
    #[arg(long)]
    pub warmup_us: Option<u64>,
    /// Seed of every random choice (workload, faults).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Probability a frame is lost (rtl: the card does not retransmit yet, so its RPC stays unfinished).
    #[arg(long, default_value_t = 0.0)]
    pub loss: f64,
    /// Probability a frame is duplicated.
    #[arg(long, alias = "dup", default_value_t = 0.0)]
    pub duplicate: f64,
    /// Probability a frame is delayed so later ones overtake it.
    #[arg(long, default_value_t = 0.0)]
    pub reorder: f64,
    /// Largest extra delay of a reordered frame.
    #[arg(long, default_value_t = 5)]
    pub reorder_max_us: u64,
    /// Probability a frame's IPv4 header is corrupted (the receiver's decoder rejects it).
    #[arg(long, default_value_t = 0.0)]
    pub corrupt: f64,
    /// Take host H's link down at T us: `H@T` (repeatable).
    #[arg(long, value_parser = parse_link_event)]
    pub link_down: Vec<(usize, u64)>,
    /// Bring host H's link up at T us: `H@T` (repeatable).
    #[arg(long, value_parser = parse_link_event)]
    pub link_up: Vec<(usize, u64)>,
    /// Homa tick, microseconds (the kernel's is 1000).
    #[arg(long, default_value_t = 1000)]
    pub tick_us: u64,
    /// Largest message; workload lengths above are merged into it (HomaModule: 1000000).
    #[arg(long, default_value_t = 1_000_000)]
    pub max_message: u32,
    /// unsched_bytes.
    #[arg(long)]
    pub unsched_bytes: Option<u32>,
    /// max_incoming.
    #[arg(long)]
    pub max_incoming: Option<u32>,
    /// max_overcommit.
    #[arg(long)]
    pub max_overcommit: Option<usize>,
    /// Grant window in bytes (0: dynamic).
    #[arg(long)]
    pub window: Option<u32>,
    /// grant_fifo_fraction (per mille).
    #[arg(long)]
    pub grant_fifo_fraction: Option<u32>,
    /// Switch buffer, KiB.
    #[arg(long, default_value_t = 16 * 1024)]
    pub buffer_kib: u64,
    /// The buffer is per egress port rather than shared.
    #[arg(long)]
    pub per_port_buffer: bool,
    /// Propagation delay per link, ns.
    #[arg(long, default_value_t = 100)]
    pub prop_delay_ns: u64,
    /// Switch latency, ns.
    #[arg(long, default_value_t = 250)]
    pub switch_delay_ns: u64,
    /// Latency added to every frame a host receives (NIC pipeline, DMA, software), ns.
    #[arg(long, default_value_t = 0)]
    pub host_delay_ns: u64,
    /// Servers answer with this many bytes instead of echoing the request.
    #[arg(long)]
    pub response_bytes: Option<u32>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Draw p99/p50 slowdown against message size into this SVG file.
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// Capture every frame sent into this pcap file (for short runs).
    #[arg(long)]
    pub pcap: Option<PathBuf>,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

/// homa.conf text for the RTL cards: the grant tunables given on the
/// command line (the rest are HomaModule's defaults, as the model's are).
fn rtl_homa_conf(args: &SimArgs) -> String {
    let mut conf = String::new();
    let mut set = |name: &str, v: Option<u64>| {
        if let Some(v) = v {
            conf.push_str(&format!("{name} = {v}\n"));
        }
    };
    set("unsched_bytes", args.unsched_bytes.map(u64::from));
    set("max_incoming", args.max_incoming.map(u64::from));
    set("max_overcommit", args.max_overcommit.map(|v| v as u64));
    set("window", args.window.map(u64::from));
    set(
        "grant_fifo_fraction",
        args.grant_fifo_fraction.map(u64::from),
    );
    conf
}

fn parse_link_event(s: &str) -> Result<(usize, u64), String> {
    let (h, t) = s
        .split_once('@')
        .ok_or_else(|| format!("{s:?}: expected HOST@MICROSECONDS, e.g. 3@500"))?;
    Ok((
        h.parse().map_err(|e| format!("host {h:?}: {e}"))?,
        t.parse().map_err(|e| format!("time {t:?}: {e}"))?,
    ))
}

pub fn run(args: &SimArgs) -> anyhow::Result<()> {
    let rtl = args.engine == Engine::Rtl;
    let hosts = args.hosts.unwrap_or(if rtl { 4 } else { 16 });
    let duration_us = args.duration_us.unwrap_or(if rtl { 200 } else { 2000 });
    if rtl && args.max_message as usize > homa_host::MAX_MESSAGE_BYTES {
        bail!(
            "--max-message {}: the card takes messages of up to {} bytes",
            args.max_message,
            homa_host::MAX_MESSAGE_BYTES
        );
    }
    if hosts < 2 {
        bail!("--hosts must be at least 2 (RPCs go between hosts)");
    }
    if !(0.0..=0.95).contains(&args.load) {
        bail!("--load {} is outside 0.0-0.95", args.load);
    }
    for p in [args.loss, args.duplicate, args.reorder, args.corrupt] {
        if !(0.0..=1.0).contains(&p) {
            bail!("fault probabilities must be within 0-1, got {p}");
        }
    }
    let workload = match &args.workload_file {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading workload file {}", path.display()))?;
            Workload::from_csv(&path.display().to_string(), &text)?
        }
        None => Workload::named(&args.workload)?,
    }
    .capped(args.max_message);

    let mut cluster = ClusterConfig::new(hosts);
    cluster.seed = args.seed;
    let h = &mut cluster.homa;
    h.tick_cycles = args.tick_us * CYCLES_PER_US;
    h.max_message_length = args.max_message;
    if let Some(v) = args.unsched_bytes {
        h.unsched_bytes = v;
    }
    if let Some(v) = args.max_incoming {
        h.max_incoming = v;
    }
    if let Some(v) = args.max_overcommit {
        h.max_overcommit = v;
    }
    if let Some(v) = args.window {
        h.window = v;
    }
    if let Some(v) = args.grant_fifo_fraction {
        h.grant_fifo_fraction = v;
    }
    cluster.net.link_gbps = args.link_gbps;
    cluster.net.prop_delay_cycles = args.prop_delay_ns / 4;
    cluster.net.switch_delay_cycles = args.switch_delay_ns / 4;
    cluster.net.host_delay_cycles = args.host_delay_ns / 4;
    cluster.net.buffer = if args.per_port_buffer {
        BufferConfig::PerPort {
            bytes: args.buffer_kib * 1024,
        }
    } else {
        BufferConfig::Shared {
            bytes: args.buffer_kib * 1024,
        }
    };
    if let Some(n) = args.response_bytes {
        cluster.response = ResponsePolicy::Fixed(n);
    }
    let mut link_events = Vec::new();
    for &(host, us) in &args.link_down {
        link_events.push(LinkEvent {
            host,
            at: us * CYCLES_PER_US,
            up: false,
        });
    }
    for &(host, us) in &args.link_up {
        link_events.push(LinkEvent {
            host,
            at: us * CYCLES_PER_US,
            up: true,
        });
    }
    if let Some(e) = link_events.iter().find(|e| e.host >= hosts) {
        bail!(
            "link event for host {} but there are {} hosts",
            e.host,
            hosts
        );
    }
    cluster.faults = FaultConfig {
        loss: args.loss,
        duplicate: args.duplicate,
        reorder: args.reorder,
        reorder_max_cycles: args.reorder_max_us * CYCLES_PER_US,
        corrupt: args.corrupt,
        link_events,
    };
    let duration_cycles = duration_us * CYCLES_PER_US;
    let timeout_cycles = cluster.homa.timeout_ticks as u64 * cluster.homa.tick_cycles;
    let exp = Experiment {
        cluster,
        workload,
        load: args.load,
        duration_cycles,
        warmup_cycles: args.warmup_us.unwrap_or(duration_us / 10) * CYCLES_PER_US,
        // Long enough for every RPC to finish or time out.
        drain_limit_cycles: duration_cycles.max(2 * timeout_cycles),
        pcap: args.pcap.clone(),
    };

    let bar = if args.quiet {
        ProgressBar::hidden()
    } else {
        let b = ProgressBar::new(duration_cycles / CYCLES_PER_US);
        if rtl {
            // The RTL run updates the bar rarely while its cards boot.
            b.enable_steady_tick(std::time::Duration::from_millis(250));
        }
        b.set_style(
            ProgressStyle::with_template(
                "{spinner} simulated {pos}/{len} us [{bar:40}] {elapsed_precise} {msg}",
            )
            .unwrap()
            .progress_chars("=> "),
        );
        b
    };
    let report = if rtl {
        let rtl_exp = sim_rtl::RtlExperiment {
            homa_conf: rtl_homa_conf(args),
            cluster: exp.cluster,
            workload: exp.workload,
            load: exp.load,
            duration_cycles,
            warmup_cycles: exp.warmup_cycles,
            // No timeouts to wait for: the stall detector ends a stuck run.
            drain_limit_cycles: duration_cycles.max(args.stall_us * CYCLES_PER_US) * 20,
            stall_cycles: args.stall_us * CYCLES_PER_US,
            pcap: exp.pcap,
        };
        sim_rtl::run(&rtl_exp, &bar)?
    } else {
        report::run(&exp, |now, _end| {
            let us = now / CYCLES_PER_US;
            if us > duration_cycles / CYCLES_PER_US {
                bar.set_message("draining");
            }
            bar.set_position(us.min(duration_cycles / CYCLES_PER_US));
        })?
    };
    bar.finish_and_clear();

    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.to_text());
        if rtl {
            print!("{}", sim_rtl::text_footer(&report));
        }
    }
    if let Some(path) = &args.plot {
        homa_testbench::plot::slowdown_svg(&report, path)?;
        if !args.json {
            println!("plot written to {}", path.display());
        }
    }
    Ok(())
}

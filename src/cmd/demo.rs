//! `homa-nic demo`: two simulated cards (the core's RTL in Verilator) on a
//! 100 Gb/s cable, an echo server on one and a client on the other, both
//! through the host library and the driver. Prints RTT p50/p99 by message
//! size, RPCs per second of simulated time, errors (every response is
//! checked byte for byte) and the simulation's speed; `--bench` first
//! measures the unloaded RTT of a 100-byte RPC with its breakdown.
//!
//! Everything runs on one thread, so a run is a pure function of its
//! arguments: the client, the server and the shared clock take turns.
//!
//! Faults (`--loss`, `--dup`, `--reorder`, `--corrupt`, fractions of frames,
//! seeded by `--seed`) go on the cable, both directions. The cards recover
//! what is lost (RESEND, retransmission) or give up after timeout_ticks of
//! silence, failing the call (`failed` in the report). An RPC may also have
//! a deadline (`--deadline-us` of simulated time, 0 for none), after which
//! it counts as unfinished and its slot goes to the next. Requests the
//! server sees twice and responses that come for an RPC already finished
//! are counted as duplicated deliveries (Homa's RPCs are at most once). With
//! faults, the capture (a temporary file unless `--pcap`) gives the time
//! from each lost DATA packet's first transmission to its retransmission.
//! A run with faults fails only on a wrong response it could not have
//! explained (none is possible without `--corrupt`).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{bail, Context};
use clap::Args;
use homa_host::{Endpoint, Error, Nic, Peer, RpcId, SimNetwork, MAX_MESSAGE_BYTES};
use homa_hw_sim::cable::{CableFaults, FaultCounts};
use homa_hw_sim::network::FrameEvent;
use homa_testbench::workload::Workload;
use indicatif::{ProgressBar, ProgressStyle};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const CLIENT_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x01];
const SERVER_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x02];
const CLIENT_IP: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
const SERVER_IP: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);
const CLIENT_PORT: u16 = 40_000;
const SERVER_PORT: u16 = 99;
/// Sizes when neither `--size` nor `--workload` is given.
const DEFAULT_SIZES: [usize; 5] = [1, 100, 1424, 5000, 40_000];
/// Receive bpages (64 KiB) of each demo endpoint: as many as a card's pool
/// holds.
const DEMO_BPAGES: u32 = homa_driver::rx_area::MAX_BPAGES;
/// Cycles without a finished RPC after which the rest count as lost.
const STALL_CYCLES: u64 = 2_000_000;
/// Upper bounds of the size classes RTTs are grouped in for `--workload`
/// (one packet holds 1424 bytes).
const WORKLOAD_CLASSES: [usize; 8] = [100, 500, 1424, 2848, 10_000, 40_000, 200_000, 1_000_000];
/// RPCs of the unloaded-RTT measurement (`--bench`); the median is reported.
const BENCH_RPCS: usize = 21;
/// Bytes of the unloaded-RTT measurement's messages.
const BENCH_BYTES: usize = 100;

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// RPCs to run.
    #[arg(long, default_value_t = 200)]
    pub count: usize,
    /// Message sizes in bytes, used in turn (1 to 1000000) [default: 1,100,1424,5000,40000].
    #[arg(long, value_delimiter = ',', conflicts_with = "workload")]
    pub size: Vec<usize>,
    /// Draw sizes from a Homa workload (w1..w5), capped at HomaModule's 1,000,000 bytes.
    #[arg(long)]
    pub workload: Option<String>,
    /// RPCs the client keeps outstanding (1 to 32).
    #[arg(long, default_value_t = 4)]
    pub concurrency: usize,
    /// Seed of sizes (workload) and payloads.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Capture every frame into this pcap file (timestamps: cycle x 4 ns).
    #[arg(long)]
    pub pcap: Option<PathBuf>,
    /// One JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// First measure the unloaded RTT of a 100-byte RPC, with its breakdown.
    #[arg(long)]
    pub bench: bool,
    /// Fraction of frames the cable loses (0.0-1.0; the card does not retransmit yet).
    #[arg(long, default_value_t = 0.0)]
    pub loss: f64,
    /// Fraction of frames the cable delivers twice.
    #[arg(long, default_value_t = 0.0)]
    pub dup: f64,
    /// Fraction of frames the cable holds back up to 1 us, so later ones overtake them.
    #[arg(long, default_value_t = 0.0)]
    pub reorder: f64,
    /// Fraction of frames the cable corrupts: half in the IPv4 header (the card drops them), half past it (Homa has no checksum: a corrupted payload is delivered).
    #[arg(long, default_value_t = 0.0)]
    pub corrupt: f64,
    /// Simulated microseconds an RPC may take before it counts as
    /// unfinished; 0: none (the card's timeout decides).
    #[arg(long, default_value_t = 2000)]
    pub deadline_us: u64,
}

/// Cycles a reordered frame or a second copy may come late (1 us).
const MAX_HOLD_CYCLES: u64 = 250;

impl DemoArgs {
    fn faults(&self) -> CableFaults {
        CableFaults::from_fractions(
            self.loss,
            self.dup,
            self.reorder,
            self.corrupt,
            MAX_HOLD_CYCLES,
            self.seed ^ 0xfa17,
        )
    }
}

/// The two cards and their endpoints.
struct Setup {
    network: Arc<Mutex<SimNetwork>>,
    client_nic: Nic,
    client: Endpoint,
    server: Endpoint,
    /// Where the client sends.
    to_server: Peer,
}

impl Setup {
    fn new() -> anyhow::Result<Setup> {
        let network = Arc::new(Mutex::new(SimNetwork::untraced(
            "demo",
            2,
            Default::default(),
        )));
        let client_nic = Nic::open_sim(&network, 0)?;
        let server_nic = Nic::open_sim(&network, 1)?;
        client_nic.set_address(CLIENT_MAC, CLIENT_IP)?;
        server_nic.set_address(SERVER_MAC, SERVER_IP)?;
        // Every bpage the card's pool holds: a 1 MB message takes 16.
        let client = Endpoint::open_with_bpages(&client_nic, CLIENT_PORT, DEMO_BPAGES)?;
        let server = Endpoint::open_with_bpages(&server_nic, SERVER_PORT, DEMO_BPAGES)?;
        Ok(Setup {
            network,
            client_nic,
            client,
            server,
            to_server: Peer::new(SERVER_IP, SERVER_MAC, SERVER_PORT),
        })
    }

    fn cycle(&self) -> u64 {
        self.client_nic
            .cycle()
            .expect("a simulated card counts cycles")
    }

    fn network(&self) -> std::sync::MutexGuard<'_, SimNetwork> {
        self.network.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Echoes every request the server has; returns the cycle the last one
    /// was seen and replied to, if any.
    /// Requests seen before go into `twice` (Homa's RPCs run at most once).
    fn serve(&mut self, served: &mut Served) -> anyhow::Result<Option<(u64, u64)>> {
        let mut seen = None;
        while let Some(request) = self.server.try_recv_request()? {
            if !served.ids.insert(request.id()) {
                tracing::error!(id = %request.id(), "request delivered twice");
                served.twice += 1;
            }
            let at = self.cycle();
            self.server
                .reply(request.id(), &request.message().bytes())?;
            seen = Some((at, self.cycle()));
        }
        Ok(seen)
    }
}

/// The requests the demo's server has seen.
#[derive(Default)]
struct Served {
    ids: HashSet<RpcId>,
    twice: usize,
}

/// One finished RPC.
struct Rtt {
    bytes: usize,
    cycles: u64,
}

/// What a run measured.
struct Outcome {
    rtts: Vec<Rtt>,
    errors: usize,
    /// RPCs past their deadline (a frame lost: no retransmission yet).
    unfinished: usize,
    /// Responses that arrived after their RPC's deadline.
    late: usize,
    /// RPCs the card failed (its peer silent for timeout_ticks, or the
    /// request could not be sent).
    failed: usize,
    /// Requests the server was given twice, and responses to RPCs already
    /// finished (with no deadline, where none can be late): at most once
    /// means 0.
    duplicates: usize,
    /// Cycles from a lost DATA packet's first transmission to its
    /// retransmission, sorted (from the capture; empty without faults).
    recoveries: Vec<u64>,
    faults: FaultCounts,
    /// Simulated cycles from the first send to the last response.
    cycles: u64,
    /// Cycles the network ran in all (setup included), and the wall time.
    total_cycles: u64,
    wall_seconds: f64,
    frames: u64,
}

/// Unloaded RTT of one 100-byte RPC and where its cycles went.
#[derive(Clone, Copy, Debug, Default)]
struct Breakdown {
    rtt: u64,
    /// Client: doorbell written -> request frame leaves the card.
    client_doorbell_to_wire: u64,
    /// Request on the cable: leaves the client card -> queued at the server's.
    request_wire: u64,
    /// Server card: frame in -> completion seen by the host.
    server_wire_to_completion: u64,
    /// Server host: completion seen -> reply's doorbell written.
    server_host: u64,
    /// Server: doorbell -> response frame leaves the card.
    server_doorbell_to_wire: u64,
    response_wire: u64,
    /// Client card: response frame in -> completion seen by the host.
    client_wire_to_completion: u64,
}

pub fn run(args: &DemoArgs) -> anyhow::Result<()> {
    if !(1..=32).contains(&args.concurrency) {
        bail!("--concurrency must be 1 to 32 (the client's receive bpages)");
    }
    if let Some(bad) = args.size.iter().find(|&&s| s == 0 || s > MAX_MESSAGE_BYTES) {
        bail!("--size {bad}: sizes are 1 to {MAX_MESSAGE_BYTES} bytes");
    }
    for (flag, v) in [
        ("--loss", args.loss),
        ("--dup", args.dup),
        ("--reorder", args.reorder),
        ("--corrupt", args.corrupt),
    ] {
        if !(0.0..=1.0).contains(&v) {
            bail!("{flag} {v}: a fraction of frames, 0.0 to 1.0");
        }
    }
    let sizes = message_sizes(args)?;
    // The RPCs in flight must fit the receivers' bpages at once (no card
    // retransmits yet, so a message dropped for want of a bpage would stall).
    let largest_bpages = sizes.iter().max().map_or(1, |s| s.div_ceil(65_536)) as u32;
    if largest_bpages * args.concurrency as u32 > DEMO_BPAGES {
        bail!(
            "--concurrency {} with messages of up to {largest_bpages} bpages needs more than the {DEMO_BPAGES} receive bpages an endpoint has: lower one of them",
            args.concurrency
        );
    }
    let bench = if args.bench { Some(bench()?) } else { None };
    let outcome = echo(args, &sizes)?;
    report(args, &outcome, bench.as_ref());
    let faulty = args.faults().any();
    if outcome.errors > 0 && args.corrupt == 0.0 {
        bail!("{} of {} RPCs failed", outcome.errors, args.count);
    }
    if outcome.duplicates > 0 {
        bail!(
            "{} duplicated deliveries: an RPC ran more than once",
            outcome.duplicates
        );
    }
    if outcome.failed > 0 && !faulty {
        bail!(
            "{} of {} RPCs failed on a cable without faults",
            outcome.failed,
            args.count
        );
    }
    if outcome.unfinished > 0 && !faulty {
        bail!(
            "{} of {} RPCs unfinished on a cable without faults",
            outcome.unfinished,
            args.count
        );
    }
    Ok(())
}

/// The size of every RPC, in order.
fn message_sizes(args: &DemoArgs) -> anyhow::Result<Vec<usize>> {
    if let Some(name) = &args.workload {
        let workload = Workload::named(name)
            .with_context(|| format!("workload {name}"))?
            .capped(MAX_MESSAGE_BYTES as u32);
        let mut rng = ChaCha8Rng::seed_from_u64(args.seed);
        return Ok((0..args.count)
            .map(|_| (workload.sample(&mut rng) as usize).clamp(1, MAX_MESSAGE_BYTES))
            .collect());
    }
    let list: &[usize] = if args.size.is_empty() {
        &DEFAULT_SIZES
    } else {
        &args.size
    };
    Ok((0..args.count).map(|i| list[i % list.len()]).collect())
}

/// The echo run: `sizes.len()` RPCs, `concurrency` at a time.
fn echo(args: &DemoArgs, sizes: &[usize]) -> anyhow::Result<Outcome> {
    let wall = Instant::now();
    let mut s = Setup::new()?;
    s.network().set_cable_faults(args.faults());
    // With faults the capture is read back for the recovery times.
    let scratch = std::env::temp_dir().join(format!("homa-demo-{}.pcap", std::process::id()));
    let capture = match &args.pcap {
        Some(path) => Some(path.clone()),
        None if args.faults().any() => Some(scratch.clone()),
        None => None,
    };
    if let Some(path) = &capture {
        s.network()
            .capture_to(path)
            .with_context(|| format!("capturing to {}", path.display()))?;
    }
    let progress = if args.json || sizes.len() < 50 {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(sizes.len() as u64).with_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} RPCs {elapsed} (eta {eta})")
                .unwrap(),
        )
    };
    let mut rng = ChaCha8Rng::seed_from_u64(args.seed ^ 0x5eed);
    // Outstanding RPCs: id -> (index, start cycle, payload).
    let mut outstanding: HashMap<RpcId, (usize, u64, Vec<u8>)> = HashMap::new();
    let mut next = 0;
    let mut rtts = Vec::with_capacity(sizes.len());
    let mut errors = 0;
    let mut unfinished = 0;
    let mut late = 0;
    let mut failed = 0;
    let mut served = Served::default();
    let deadline_cycles = match args.deadline_us {
        0 => u64::MAX,
        us => us * 250,
    };
    let first = s.cycle();
    let mut last_progress = first;
    while rtts.len() + errors + unfinished + failed < sizes.len() {
        while outstanding.len() < args.concurrency && next < sizes.len() {
            let payload: Vec<u8> = (0..sizes[next]).map(|_| rng.gen()).collect();
            let start = s.cycle();
            match s.client.send_request(s.to_server, &payload) {
                Ok(id) => {
                    outstanding.insert(id, (next, start, payload));
                    next += 1;
                }
                Err(Error::RingFull { .. }) => break,
                Err(e) => return Err(e.into()),
            }
        }
        s.serve(&mut served)?;
        loop {
            match s.client.try_recv_any_response() {
                Ok(Some(response)) => {
                    let Some((index, start, payload)) = outstanding.remove(&response.id()) else {
                        // An RPC past its deadline after all (or a second
                        // copy, which the card should have dropped).
                        late += 1;
                        continue;
                    };
                    if *response.message().bytes() == payload[..] {
                        rtts.push(Rtt {
                            bytes: sizes[index],
                            cycles: s.cycle() - start,
                        });
                    } else {
                        tracing::error!(id = %response.id(), "response differs from the request");
                        errors += 1;
                    }
                    last_progress = s.cycle();
                    progress.inc(1);
                }
                Ok(None) => break,
                Err(e @ (Error::SendFailed { id, .. } | Error::Timeout(id))) => {
                    tracing::warn!("{e}");
                    outstanding.remove(&id);
                    failed += 1;
                    last_progress = s.cycle();
                    progress.inc(1);
                }
                Err(e) => return Err(e.into()),
            }
        }
        // RPCs past their deadline give their slot to the next.
        let now = s.cycle();
        let expired: Vec<RpcId> = outstanding
            .iter()
            .filter(|(_, (_, start, _))| now - start >= deadline_cycles)
            .map(|(id, _)| *id)
            .collect();
        for id in expired {
            let (index, _, _) = outstanding.remove(&id).expect("listed");
            tracing::warn!(%id, bytes = sizes[index], "no response by the deadline: unfinished");
            unfinished += 1;
            last_progress = now;
            progress.inc(1);
        }
        if s.cycle() - last_progress > STALL_CYCLES {
            tracing::error!(
                lost = outstanding.len(),
                "no response in {STALL_CYCLES} cycles: counting the rest as lost"
            );
            unfinished += sizes.len() - rtts.len() - errors - unfinished - failed;
            break;
        }
        s.client_nic.wait();
    }
    progress.finish_and_clear();
    let cycles = s.cycle() - first;
    let mut network = s.network();
    network.finish_capture().context("writing the capture")?;
    let (total_cycles, frames) = (network.cycle(), network.frames());
    let faults = network.cable_fault_counts();
    drop(network);
    let recoveries = match &capture {
        Some(path) if args.faults().any() => recovery_cycles(path)?,
        _ => Vec::new(),
    };
    if args.pcap.is_none() {
        let _ = std::fs::remove_file(&scratch);
    }
    let duplicates = served.twice + if args.deadline_us == 0 { late } else { 0 };
    Ok(Outcome {
        rtts,
        errors,
        unfinished,
        late,
        failed,
        duplicates,
        recoveries,
        faults,
        cycles,
        total_cycles,
        wall_seconds: wall.elapsed().as_secs_f64(),
        frames,
    })
}

/// From a capture: for every DATA packet sent again (`retransmit` set), the
/// cycles from its first transmission (sender, RPC, offset) to its first
/// retransmission, sorted. (A client's nudge also sends a request's first
/// packet again when the response is what was lost: counted the same.)
fn recovery_cycles(path: &std::path::Path) -> anyhow::Result<Vec<u64>> {
    use homa_wire::pcap::FrameReader;
    use homa_wire::{Body, Frame};
    let mut first: HashMap<(u32, u64, u32), u64> = HashMap::new();
    let mut delays = Vec::new();
    for captured in FrameReader::open(path)? {
        let captured = captured?;
        let Ok(frame) = Frame::decode(&captured.bytes) else {
            continue;
        };
        let Body::Data(d) = &frame.homa.body else {
            continue;
        };
        let cycle = captured.timestamp.as_nanos() as u64 / 4;
        let key = (
            u32::from(frame.ip.src),
            frame.homa.common.sender_id,
            d.seg_offset,
        );
        match (d.retransmit != 0, first.get(&key)) {
            (true, Some(&at)) if at != u64::MAX => {
                delays.push(cycle - at);
                // Later copies of it are not counted again.
                first.insert(key, u64::MAX);
            }
            (false, None) => {
                first.insert(key, cycle);
            }
            _ => {}
        }
    }
    delays.sort_unstable();
    Ok(delays)
}

/// Unloaded RTT of a 100-byte RPC: `BENCH_RPCS` one at a time, the median,
/// and the breakdown of that one from the network's frame log.
fn bench() -> anyhow::Result<Breakdown> {
    let mut s = Setup::new()?;
    s.network().log_frames(true);
    let payload = vec![0x5a; BENCH_BYTES];
    let mut runs = Vec::new();
    for _ in 0..BENCH_RPCS {
        s.network().take_frame_log();
        let doorbell_before = s.cycle();
        let id = s.client.send_request(s.to_server, &payload)?;
        let doorbell = s.cycle();
        let mut server_times = None;
        let done = loop {
            if let Some(t) = s.serve(&mut Served::default())? {
                server_times = Some(t);
            }
            if let Some(r) = s.client.try_recv_response(id)? {
                if *r.message().bytes() != payload[..] {
                    bail!("benchmark response differs from its request");
                }
                break s.cycle();
            }
            s.client_nic.wait();
        };
        let (seen, replied) = server_times.context("the server never saw the request")?;
        let log = s.network().take_frame_log();
        let at = |card: usize, received: bool| -> anyhow::Result<u64> {
            log.iter()
                .find(|e: &&FrameEvent| e.card == card && e.received == received)
                .map(|e| e.cycle)
                .context("a frame missing from the log")
        };
        let (req_sent, req_in) = (at(0, false)?, at(1, true)?);
        let (rsp_sent, rsp_in) = (at(1, false)?, at(0, true)?);
        runs.push(Breakdown {
            rtt: done - doorbell_before,
            client_doorbell_to_wire: req_sent.saturating_sub(doorbell),
            request_wire: req_in - req_sent,
            server_wire_to_completion: seen - req_in,
            server_host: replied - seen,
            server_doorbell_to_wire: rsp_sent.saturating_sub(replied),
            response_wire: rsp_in - rsp_sent,
            client_wire_to_completion: done - rsp_in,
        });
    }
    runs.sort_by_key(|b| b.rtt);
    Ok(runs[runs.len() / 2])
}

/// p-th percentile (0..=100) of sorted cycles.
fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn us(cycles: u64) -> f64 {
    // 250 MHz: 4 ns a cycle.
    cycles as f64 * 4.0 / 1000.0
}

fn report(args: &DemoArgs, o: &Outcome, bench: Option<&Breakdown>) {
    // Exact sizes for --size; size classes (keyed by their upper bound) for
    // a workload, whose sizes are too many to list.
    let classes = args.workload.is_some();
    let class_of = |bytes: usize| {
        if classes {
            *WORKLOAD_CLASSES
                .iter()
                .find(|&&c| bytes <= c)
                .unwrap_or(&bytes)
        } else {
            bytes
        }
    };
    let mut by_size: BTreeMap<usize, Vec<u64>> = BTreeMap::new();
    for r in &o.rtts {
        by_size.entry(class_of(r.bytes)).or_default().push(r.cycles);
    }
    for v in by_size.values_mut() {
        v.sort_unstable();
    }
    let sim_seconds = o.cycles as f64 * 4e-9;
    let rpcs_per_second = o.rtts.len() as f64 / sim_seconds.max(1e-12);
    let cycles_per_second = o.total_cycles as f64 / o.wall_seconds;
    let breakdown_fields = |b: &Breakdown| {
        [
            (
                "client doorbell -> request on the wire",
                b.client_doorbell_to_wire,
            ),
            (
                "request on the wire (serialization + 1 us cable)",
                b.request_wire,
            ),
            (
                "server card: wire -> completion seen",
                b.server_wire_to_completion,
            ),
            ("server host: completion -> reply doorbell", b.server_host),
            (
                "server doorbell -> response on the wire",
                b.server_doorbell_to_wire,
            ),
            ("response on the wire", b.response_wire),
            (
                "client card: wire -> completion seen",
                b.client_wire_to_completion,
            ),
        ]
    };
    if args.json {
        let sizes: Vec<_> = by_size
            .iter()
            .map(|(bytes, v)| {
                serde_json::json!({
                    if classes { "max_bytes" } else { "bytes" }: bytes,
                    "rpcs": v.len(),
                    "p50_cycles": percentile(v, 50.0),
                    "p99_cycles": percentile(v, 99.0),
                    "p50_us": us(percentile(v, 50.0)),
                    "p99_us": us(percentile(v, 99.0)),
                })
            })
            .collect();
        let mut out = serde_json::json!({
            "rpcs": o.rtts.len(),
            "errors": o.errors,
            "unfinished": o.unfinished,
            "late_responses": o.late,
            "failed": o.failed,
            "duplicated_deliveries": o.duplicates,
            "retransmissions": o.recoveries.len(),
            "lost_to_retransmitted_p50_us": us(percentile(&o.recoveries, 50.0)),
            "lost_to_retransmitted_p99_us": us(percentile(&o.recoveries, 99.0)),
            "faults": {
                "loss": args.loss, "dup": args.dup, "reorder": args.reorder, "corrupt": args.corrupt,
                "frames_lost": o.faults.lost,
                "frames_duplicated": o.faults.duplicated,
                "frames_reordered": o.faults.reordered,
                "frames_corrupted_ip_header": o.faults.corrupted_ip,
                "frames_corrupted_past_ip_header": o.faults.corrupted_homa,
                "recovery": "the cards resend what is lost (RESEND, then timeout_ticks: see the timer CSRs); an RPC unfinished by its deadline was still recovering",
            },
            "concurrency": args.concurrency,
            "simulated_cycles": o.cycles,
            "simulated_us": us(o.cycles),
            "rpcs_per_simulated_second": rpcs_per_second,
            "frames": o.frames,
            "wall_seconds": o.wall_seconds,
            "verilator_cycles_per_second": cycles_per_second,
            "cards": 2,
            "by_size": sizes,
        });
        if let Some(b) = bench {
            let parts: serde_json::Map<_, _> = breakdown_fields(b)
                .iter()
                .map(|(k, v)| (k.to_string(), serde_json::json!(v)))
                .collect();
            out["unloaded_rtt_100b"] = serde_json::json!({
                "cycles": b.rtt, "us": us(b.rtt), "breakdown_cycles": parts,
            });
        }
        println!("{out}");
        return;
    }
    if let Some(b) = bench {
        println!(
            "unloaded RTT of a {BENCH_BYTES}-byte RPC (median of {BENCH_RPCS}): {} cycles = {:.2} us at 250 MHz",
            b.rtt,
            us(b.rtt)
        );
        for (name, cycles) in breakdown_fields(b) {
            println!("  {name:<52} {cycles:>6} cycles {:>7.2} us", us(cycles));
        }
        println!();
    }
    println!(
        "{} echo RPCs between two simulated cards ({} outstanding), every response checked byte for byte",
        o.rtts.len() + o.errors + o.unfinished + o.failed,
        args.concurrency
    );
    println!(
        "{:>8} {:>6} {:>11} {:>11} {:>9} {:>9}",
        if classes { "<= bytes" } else { "bytes" },
        "rpcs",
        "p50 cycles",
        "p99 cycles",
        "p50 us",
        "p99 us"
    );
    for (bytes, v) in &by_size {
        let (p50, p99) = (percentile(v, 50.0), percentile(v, 99.0));
        println!(
            "{bytes:>8} {:>6} {p50:>11} {p99:>11} {:>9.2} {:>9.2}",
            v.len(),
            us(p50),
            us(p99)
        );
    }
    println!(
        "{:.0} RPCs/s of simulated time ({} cycles = {:.1} us), {} frames, errors: {}",
        rpcs_per_second,
        o.cycles,
        us(o.cycles),
        o.frames,
        o.errors
    );
    println!(
        "Verilator: {:.0} cycles/s of wall time for the two-card network ({:.1} s)",
        cycles_per_second, o.wall_seconds
    );
    if args.faults().any() {
        let f = &o.faults;
        println!(
            "faults on the cable: {} lost, {} duplicated, {} reordered, {} corrupted in the IPv4 header, {} past it ({} frames)",
            f.lost, f.duplicated, f.reordered, f.corrupted_ip, f.corrupted_homa, f.frames
        );
        println!(
            "completed {} of {} RPCs; failed {} (the card gave up: timeout_ticks of silence); unfinished {} (no response within --deadline-us {}); wrong responses {}; late responses {}; duplicated deliveries {}",
            o.rtts.len(),
            o.rtts.len() + o.errors + o.unfinished + o.failed,
            o.failed,
            o.unfinished,
            args.deadline_us,
            o.errors,
            o.late,
            o.duplicates
        );
        if !o.recoveries.is_empty() {
            let r = &o.recoveries;
            println!(
                "lost DATA packet -> its retransmission: {} packets, p50 {:.1} us, p99 {:.1} us, max {:.1} us",
                r.len(),
                us(percentile(r, 50.0)),
                us(percentile(r, 99.0)),
                us(*r.last().unwrap())
            );
        }
    } else if o.unfinished + o.failed > 0 {
        println!("unfinished RPCs: {}; failed: {}", o.unfinished, o.failed);
    }
    if let Some(path) = &args.pcap {
        println!("capture: {}", path.display());
    }
}

//! `homa-nic sim --engine rtl`: the model's cluster experiment on simulated
//! RTL cards. Each host is a card (the core's RTL in Verilator) driven
//! through the real driver and host-lib, with a server endpoint that echoes
//! and a client endpoint that starts the model's RPCs at the model's times;
//! the cards' ports are on the testbench's network model (links, one switch
//! with 8 strict-priority queues per egress port).
//!
//! DESIGN NOTES
//! - Same experiment, other engine: the RPCs (times, clients, servers,
//!   sizes, payloads) are `cluster::arrival_schedule`, the very draws the
//!   model's cluster makes; link rate, propagation, switch latency and buffer
//!   are the model's `NetConfig`; the report is `report::summarize_rpcs` over
//!   the same `RpcRecord`s, with slowdown against the unloaded time measured
//!   *with this engine* (one RPC at a time on an idle two-card network), as
//!   the model's report measures its own.
//! - The fabric (`SwitchFabric`) is an event queue stepped by the network
//!   every cycle (`homa_hw_sim::network::Fabric`): a frame leaves its card
//!   when its last beat does, is serialized on the host's uplink (a FIFO at
//!   the link rate: the card's port is faster than the link), reaches the
//!   switch after the propagation and switch delays, waits in its egress
//!   port's queue of its IPv4 TOS priority, and reaches the card after the
//!   downlink's serialization and propagation (and `host_delay`).
//! - Host software time is real: every doorbell and register access of the
//!   driver takes card cycles while the whole network runs on. All hosts'
//!   software shares the one simulated thread, so a host polls its
//!   completions once per loop over all hosts; at a few hosts that is tens
//!   of cycles, a small part of any RTT.
//! - Faults (`--loss`, `--dup`, `--reorder`, `--corrupt`, `--link-down`/
//!   `--link-up`) act where the model's do: on the switch-to-host hop, once
//!   per frame, by `homa_testbench::net::faults::inject` with the model's
//!   seed; a host whose link is down neither sends nor receives. The card
//!   has no retransmission yet, so a lost frame (a fault, or a switch
//!   buffer drop) leaves its RPC unfinished: the report counts them, and an
//!   RPC that makes no progress for `--stall-us` ends the run with the rest
//!   counted unfinished.

use std::any::Any;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use anyhow::{bail, Context};
use homa_host::{Endpoint, Error as HostError, HomaConf, Nic, Peer, SimNetwork};
use homa_hw::regmap::rx_counters;
use homa_hw_sim::network::Fabric;
use homa_testbench::cluster::{
    arrival_schedule, checksum, host_addr, message_payload, ClusterConfig, ClusterCounters,
    LoadConfig, Outcome, ResponsePolicy, RpcRecord, SERVER_PORT,
};
use homa_testbench::model::{Cycles, CYCLES_PER_US};
use homa_testbench::net::faults::inject;
use homa_testbench::net::{
    wire_bytes, FaultConfig, FaultCounters, Link, NetConfig, Packet, Switch, WireFrame,
};
use homa_testbench::report::{self, Report, UnloadedRtt, Utilization, RTT_SIZES};
use homa_testbench::workload::Workload;
use indicatif::ProgressBar;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The port every host's client endpoint sends from.
const CLIENT_PORT: u16 = 40_000;

/// What `homa-nic sim --engine rtl` runs.
pub struct RtlExperiment {
    pub cluster: ClusterConfig,
    pub workload: Workload,
    pub load: f64,
    pub duration_cycles: Cycles,
    pub warmup_cycles: Cycles,
    /// Stop this long after the load period even if RPCs are unfinished.
    pub drain_limit_cycles: Cycles,
    /// Stop when no RPC has completed for this long while some are pending
    /// (a lost frame: the card does not retransmit yet).
    pub stall_cycles: Cycles,
    /// homa.conf text applied to every card (the grant tunables given on
    /// the command line; the rest HomaModule's defaults).
    pub homa_conf: String,
    pub pcap: Option<std::path::PathBuf>,
}

/// Fabric events.
enum FabricEvent {
    /// A frame is queued at its egress port.
    Enqueue(Box<Packet>),
    /// An egress port's link finished a frame.
    EgressDone(usize),
    /// A frame has fully reached card `.0`.
    Arrive(usize, Vec<u8>),
}

/// Link statistics of the fabric.
#[derive(Clone, Debug, Default)]
pub struct FabricStats {
    pub frames: u64,
    /// Frames to no host of the cluster (broadcasts, unknown MACs).
    pub unroutable: u64,
    /// Wire bytes per uplink and downlink at the end of the load period.
    pub snapshot: Option<(Cycles, Vec<u64>, Vec<u64>)>,
}

/// The testbench's network model as the cards' fabric.
pub struct SwitchFabric {
    net: NetConfig,
    uplinks: Vec<Link>,
    pub switch: Switch,
    egress_busy: Vec<bool>,
    queue: BinaryHeap<Reverse<(u64, u64)>>,
    events: HashMap<u64, FabricEvent>,
    seq: u64,
    /// Cycle the snapshot is taken at (absolute), if any.
    snapshot_at: Option<u64>,
    pub stats: FabricStats,
    /// Faults on the switch-to-host hop, their draws and what they did;
    /// link events count from `t0` (the experiment's start, absolute).
    faults: FaultConfig,
    rng: ChaCha8Rng,
    pub fault_counters: FaultCounters,
    t0: u64,
}

impl SwitchFabric {
    pub fn new(hosts: usize, net: &NetConfig) -> SwitchFabric {
        SwitchFabric {
            net: net.clone(),
            uplinks: (0..hosts).map(|_| Link::new(net.link_gbps)).collect(),
            switch: Switch::new(hosts, net.link_gbps, net.buffer),
            egress_busy: vec![false; hosts],
            queue: BinaryHeap::new(),
            events: HashMap::new(),
            seq: 0,
            snapshot_at: None,
            stats: FabricStats::default(),
            faults: FaultConfig::default(),
            rng: ChaCha8Rng::seed_from_u64(0),
            fault_counters: FaultCounters::default(),
            t0: 0,
        }
    }

    /// The same fabric with `faults`, drawn from `seed`.
    pub fn with_faults(mut self, faults: FaultConfig, seed: u64) -> SwitchFabric {
        self.faults = faults;
        self.rng = ChaCha8Rng::seed_from_u64(seed ^ 0xfa17_5eed);
        self
    }

    /// Whether host `host`'s link is up at absolute cycle `now`.
    fn link_up(&self, host: usize, now: u64) -> bool {
        let t = now.saturating_sub(self.t0);
        self.faults
            .link_events
            .iter()
            .filter(|e| e.host == host && e.at <= t)
            .max_by_key(|e| e.at)
            .is_none_or(|e| e.up)
    }

    fn schedule(&mut self, at: u64, ev: FabricEvent) {
        self.seq += 1;
        self.queue.push(Reverse((at, self.seq)));
        self.events.insert(self.seq, ev);
    }

    fn kick_egress(&mut self, port: usize, now: u64) {
        if self.egress_busy[port] {
            return;
        }
        let Some(packet) = self.switch.dequeue(port) else {
            return;
        };
        let done = self.switch.ports[port].link.start(now, packet.wire_bytes);
        self.egress_busy[port] = true;
        self.schedule(done, FabricEvent::EgressDone(port));
        let arrive = done + self.net.prop_delay_cycles + self.net.host_delay_cycles;
        if !self.link_up(port, now) || !self.link_up(port, arrive) {
            self.fault_counters.link_down_drops += 1;
            return;
        }
        let copies = if self.faults.any_packet_faults() {
            inject(
                &self.faults,
                &mut self.rng,
                &mut self.fault_counters,
                packet,
            )
        } else {
            vec![(0, packet)]
        };
        for (delay, packet) in copies {
            let WireFrame::Bytes(bytes) = packet.frame else {
                unreachable!("the RTL fabric carries bytes")
            };
            self.schedule(arrive + delay, FabricEvent::Arrive(port, bytes));
        }
    }

    fn snapshot(&mut self, now: u64) {
        self.stats.snapshot = Some((
            now,
            self.uplinks.iter().map(|l| l.wire_bytes_sent).collect(),
            self.switch
                .ports
                .iter()
                .map(|p| p.link.wire_bytes_sent)
                .collect(),
        ));
    }
}

/// The Homa priority (0..=7) of an Ethernet frame: the IPv4 TOS byte's top
/// three bits, 0 for anything not IPv4.
fn frame_priority(bytes: &[u8]) -> u8 {
    if bytes.len() >= 16 && bytes[12..14] == [0x08, 0x00] {
        bytes[15] >> 5
    } else {
        0
    }
}

/// The host a frame is addressed to (its destination MAC, `host_addr`'s).
fn frame_host(bytes: &[u8], hosts: usize) -> Option<usize> {
    let (i, _) = (0..hosts)
        .map(|i| (i, host_addr(i)))
        .find(|(_, a)| bytes.len() >= 6 && a.mac.0 == bytes[..6])?;
    Some(i)
}

impl Fabric for SwitchFabric {
    fn sent(&mut self, card: usize, cycle: u64, bytes: Vec<u8>) {
        self.stats.frames += 1;
        let wb = wire_bytes(bytes.len());
        let done = self.uplinks[card].start(cycle, wb);
        let Some(dst) = frame_host(&bytes, self.uplinks.len()) else {
            self.stats.unroutable += 1;
            return;
        };
        if !self.link_up(card, cycle) {
            self.fault_counters.link_down_drops += 1;
            return;
        }
        let packet = Box::new(Packet {
            priority: frame_priority(&bytes),
            dst_host: dst as u32,
            wire_bytes: wb,
            frame: WireFrame::Bytes(bytes),
        });
        let at = done + self.net.prop_delay_cycles + self.net.switch_delay_cycles;
        self.schedule(at, FabricEvent::Enqueue(packet));
    }

    fn arrivals(&mut self, now: u64, out: &mut Vec<(usize, Vec<u8>)>) {
        if self.snapshot_at == Some(now) {
            self.snapshot(now);
        }
        while let Some(&Reverse((at, seq))) = self.queue.peek() {
            if at > now {
                break;
            }
            self.queue.pop();
            match self.events.remove(&seq).expect("scheduled event") {
                FabricEvent::Enqueue(packet) => {
                    let port = packet.dst_host as usize;
                    // A full buffer drops (counted by the switch).
                    if self.switch.enqueue(port, packet) {
                        self.kick_egress(port, at);
                    }
                }
                FabricEvent::EgressDone(port) => {
                    self.egress_busy[port] = false;
                    self.switch.ports[port].link.busy = false;
                    self.kick_egress(port, at);
                }
                FabricEvent::Arrive(card, bytes) => out.push((card, bytes)),
            }
        }
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// Cards on the fabric, each with a client and a server endpoint.
struct Rack {
    network: Arc<Mutex<SimNetwork>>,
    nics: Vec<Nic>,
    clients: Vec<Endpoint>,
    servers: Vec<Endpoint>,
}

impl Rack {
    fn new(
        name: &str,
        hosts: usize,
        net: &NetConfig,
        conf: &HomaConf,
        faults: (FaultConfig, u64),
    ) -> anyhow::Result<Rack> {
        let network = Arc::new(Mutex::new(SimNetwork::on_fabric(
            name,
            hosts,
            Default::default(),
            Box::new(SwitchFabric::new(hosts, net).with_faults(faults.0, faults.1)),
        )));
        let mut rack = Rack {
            network,
            nics: Vec::new(),
            clients: Vec::new(),
            servers: Vec::new(),
        };
        let bpages = homa_driver::rx_area::MAX_BPAGES;
        for i in 0..hosts {
            let nic = Nic::open_sim_with_config(&rack.network, i, conf.clone())
                .with_context(|| format!("opening card {i}"))?;
            let a = host_addr(i);
            nic.set_address(a.mac.0, a.ip)?;
            // Every bpage a card's pool holds: a 1 MB message takes 16, and a
            // message with no bpage is dropped (and, without retransmission,
            // lost).
            rack.servers
                .push(Endpoint::open_with_bpages(&nic, SERVER_PORT, bpages)?);
            rack.clients
                .push(Endpoint::open_with_bpages(&nic, CLIENT_PORT, bpages)?);
            rack.nics.push(nic);
        }
        Ok(rack)
    }

    fn network(&self) -> MutexGuard<'_, SimNetwork> {
        self.network.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn cycle(&self) -> u64 {
        self.nics[0]
            .cycle()
            .expect("a simulated card counts cycles")
    }

    fn with_fabric<R>(&self, f: impl FnOnce(&mut SwitchFabric) -> R) -> R {
        let mut network = self.network();
        let fabric = network
            .fabric_mut()
            .expect("the rack's network is on a fabric")
            .as_any_mut()
            .downcast_mut::<SwitchFabric>()
            .expect("the rack's fabric is a SwitchFabric");
        f(fabric)
    }

    /// Answers every request that has arrived (echo, or `Fixed` bytes);
    /// replies the TX ring has no room for wait in `backlog`.
    fn serve(
        &mut self,
        h: usize,
        policy: ResponsePolicy,
        backlog: &mut VecDeque<(homa_host::RpcId, Vec<u8>)>,
    ) -> anyhow::Result<()> {
        while let Some((id, bytes)) = backlog.pop_front() {
            match self.servers[h].reply(id, &bytes) {
                Ok(()) => {}
                Err(HostError::RingFull { .. }) => {
                    backlog.push_front((id, bytes));
                    return Ok(());
                }
                Err(e) => return Err(e.into()),
            }
        }
        while let Some(request) = self.servers[h].try_recv_request()? {
            let bytes = match policy {
                ResponsePolicy::Echo => request.message().to_vec(),
                ResponsePolicy::Fixed(n) => vec![0x5a; n as usize],
            };
            let id = request.id();
            // The request's bpages go back to the card now.
            drop(request);
            match self.servers[h].reply(id, &bytes) {
                Ok(()) => {}
                Err(HostError::RingFull { .. }) => {
                    backlog.push_back((id, bytes));
                    return Ok(());
                }
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    /// Sums the cards' RX path counters (name -> value).
    fn card_counters(&self) -> Vec<(&'static str, u64)> {
        let names: [(&str, u32); 10] = [
            ("rx_fifo_overflows", rx_counters::FIFO_OVERFLOWS),
            ("rx_messages_delivered", rx_counters::MESSAGES_DELIVERED),
            ("rx_drop_no_bpage", rx_counters::DROP_NO_BPAGE),
            ("rx_drop_rpc_full", rx_counters::DROP_RPC_FULL),
            ("rx_drop_no_endpoint", rx_counters::DROP_NO_ENDPOINT),
            ("rx_drop_bad_range", rx_counters::DROP_BAD_RANGE),
            ("rx_duplicates", rx_counters::DUPLICATES),
            ("rx_other_control", rx_counters::OTHER_CONTROL),
            ("rx_grants_received", rx_counters::GRANTS_RECEIVED),
            (
                "rx_sender_events_dropped",
                rx_counters::SENDER_EVENTS_DROPPED,
            ),
        ];
        let mut network = self.network();
        let count = network.len();
        names
            .iter()
            .map(|&(name, offset)| {
                let sum = (0..count)
                    .map(|i| {
                        network.access(i, |card| card.csr_read(rx_counters::BASE + offset)) as u64
                    })
                    .sum();
                (name, sum)
            })
            .collect()
    }
}

/// Unloaded RPC times on an idle two-card rack, one RPC at a time, cached
/// by (request, response) size.
struct RtlBaselines {
    rack: Rack,
    policy: ResponsePolicy,
    cache: HashMap<(u32, u32), Cycles>,
}

/// Idle cycles between baseline RPCs (the cards finish their bookkeeping).
const BASELINE_GAP_CYCLES: u64 = 500;

impl RtlBaselines {
    fn new(exp: &RtlExperiment, conf: &HomaConf) -> anyhow::Result<RtlBaselines> {
        let mut b = RtlBaselines {
            rack: Rack::new(
                "sim-rtl-idle",
                2,
                &exp.cluster.net,
                conf,
                (FaultConfig::default(), 0),
            )?,
            policy: exp.cluster.response,
            cache: HashMap::new(),
        };
        // A first RPC teaches each card the other's cutoffs, as every card
        // of a loaded cluster knows them after its first exchanges.
        b.measure(1)?;
        b.cache.clear();
        Ok(b)
    }

    fn measure(&mut self, request_bytes: u32) -> anyhow::Result<Cycles> {
        let response_bytes = match self.policy {
            ResponsePolicy::Echo => request_bytes,
            ResponsePolicy::Fixed(n) => n,
        };
        if let Some(&c) = self.cache.get(&(request_bytes, response_bytes)) {
            return Ok(c);
        }
        let payload = message_payload(0, request_bytes as u64, request_bytes);
        let to = host_addr(1);
        let start = self.rack.cycle();
        let id = self.rack.clients[0]
            .send_request(Peer::new(to.ip, to.mac.0, SERVER_PORT), &payload)
            .context("baseline request")?;
        let mut backlog = VecDeque::new();
        let limit = start + 100 * (1 + request_bytes as u64 / 1000) * CYCLES_PER_US;
        let end = loop {
            self.rack.serve(1, self.policy, &mut backlog)?;
            if let Some(r) = self.rack.clients[0].try_recv_response(id)? {
                if r.message().len() != response_bytes as usize {
                    bail!("baseline RPC of {request_bytes} bytes: response of the wrong length");
                }
                break self.rack.cycle();
            }
            if self.rack.cycle() > limit {
                bail!("an RPC of {request_bytes} bytes alone on an idle network did not complete");
            }
            self.rack.nics[0].wait();
        };
        self.rack.network().run(BASELINE_GAP_CYCLES);
        let cycles = end - start;
        self.cache.insert((request_bytes, response_bytes), cycles);
        Ok(cycles)
    }
}

/// Runs the experiment; `bar` shows simulated microseconds of the load period.
pub fn run(exp: &RtlExperiment, bar: &ProgressBar) -> anyhow::Result<Report> {
    let cfg = &exp.cluster;
    let hosts = cfg.hosts;
    let conf = HomaConf::parse(&exp.homa_conf, "sim --engine rtl tunables")?;
    let wall = Instant::now();
    bar.set_message("booting cards");
    let mut rack = Rack::new(
        "sim-rtl",
        hosts,
        &cfg.net,
        &conf,
        (cfg.faults.clone(), cfg.seed),
    )?;
    if let Some(path) = &exp.pcap {
        rack.network()
            .capture_to(path)
            .with_context(|| format!("capturing to {}", path.display()))?;
    }
    let load = LoadConfig {
        workload: exp.workload.clone(),
        load: exp.load,
        until: exp.duration_cycles,
    };
    let schedule = arrival_schedule(cfg, &load);
    let mut records: Vec<RpcRecord> = schedule
        .iter()
        .map(|a| RpcRecord {
            client: a.client,
            server: a.server,
            id: 0,
            request_bytes: a.request_bytes,
            response_bytes: match cfg.response {
                ResponsePolicy::Echo => a.request_bytes,
                ResponsePolicy::Fixed(n) => n,
            },
            request_checksum: 0,
            start: a.at,
            end: None,
            outcome: Outcome::Pending,
            completions: 0,
            served: 0,
        })
        .collect();
    // Experiment time 0 is now, with every card booted and its endpoints open.
    let t0 = rack.cycle();
    rack.with_fabric(|f| {
        f.snapshot_at = Some(t0 + exp.duration_cycles);
        f.t0 = t0;
    });
    let mut counters = ClusterCounters::default();
    let mut to_send: Vec<VecDeque<usize>> = vec![VecDeque::new(); hosts];
    let mut replies: Vec<VecDeque<(homa_host::RpcId, Vec<u8>)>> = vec![VecDeque::new(); hosts];
    let mut by_id: HashMap<(usize, u64), usize> = HashMap::new();
    let mut next = 0;
    let mut ended = 0;
    let mut last_progress = 0;
    let end_limit = exp.duration_cycles + exp.drain_limit_cycles;
    bar.set_message("");
    let mut iterations: u64 = 0;
    loop {
        iterations += 1;
        let now = rack.cycle() - t0;
        while next < schedule.len() && schedule[next].at <= now {
            to_send[schedule[next].client as usize].push_back(next);
            next += 1;
        }
        for h in 0..hosts {
            while let Some(&i) = to_send[h].front() {
                let r = &mut records[i];
                let payload = message_payload(cfg.seed, i as u64, r.request_bytes);
                let to = host_addr(r.server as usize);
                match rack.clients[h]
                    .send_request(Peer::new(to.ip, to.mac.0, SERVER_PORT), &payload)
                {
                    Ok(id) => {
                        r.id = id.0;
                        r.request_checksum = checksum(&payload);
                        by_id.insert((h, id.0), i);
                        counters.rpcs_started += 1;
                        to_send[h].pop_front();
                    }
                    Err(HostError::RingFull { .. }) => break,
                    Err(e) => return Err(e).context("sending a request"),
                }
            }
        }
        for (h, backlog) in replies.iter_mut().enumerate() {
            rack.serve(h, cfg.response, backlog)?;
        }
        let now = rack.cycle() - t0;
        for h in 0..hosts {
            loop {
                match rack.clients[h].try_recv_any_response() {
                    Ok(Some(response)) => {
                        let Some(&i) = by_id.get(&(h, response.id().0)) else {
                            counters.unknown_responses += 1;
                            continue;
                        };
                        let r = &mut records[i];
                        r.completions += 1;
                        if r.completions > 1 {
                            counters.duplicate_completions += 1;
                            continue;
                        }
                        let ok = match cfg.response {
                            ResponsePolicy::Echo => {
                                checksum(&response.message().bytes()) == r.request_checksum
                            }
                            ResponsePolicy::Fixed(n) => response.message().len() == n as usize,
                        };
                        if !ok {
                            counters.response_checksum_errors += 1;
                        }
                        r.outcome = Outcome::Completed;
                        r.end = Some(now);
                        counters.rpcs_completed += 1;
                        ended += 1;
                        last_progress = now;
                    }
                    Ok(None) => break,
                    Err(HostError::SendFailed { id, status }) => {
                        tracing::warn!(%id, status, "request not sent");
                        if let Some(&i) = by_id.get(&(h, id.0)) {
                            records[i].outcome = Outcome::Failed;
                            records[i].end = Some(now);
                            records[i].completions += 1;
                        }
                        counters.rpcs_failed += 1;
                        ended += 1;
                        last_progress = now;
                    }
                    Err(e) => return Err(e).context("receiving responses"),
                }
            }
        }
        bar.set_position(now.min(exp.duration_cycles) / CYCLES_PER_US);
        if now > exp.duration_cycles {
            bar.set_message(format!("draining: {} RPCs pending", schedule.len() - ended));
        }
        // As the model's run, the load period is simulated to its end.
        if next == schedule.len() && ended == schedule.len() && now >= exp.duration_cycles {
            break;
        }
        if now >= end_limit {
            tracing::warn!(
                pending = schedule.len() - ended,
                "drain limit reached with RPCs unfinished"
            );
            break;
        }
        if next == schedule.len()
            && now.saturating_sub(last_progress.max(exp.duration_cycles)) > exp.stall_cycles
        {
            tracing::warn!(
                pending = schedule.len() - ended,
                "no RPC completed in {} us: the rest count as unfinished (a frame lost?)",
                exp.stall_cycles / CYCLES_PER_US
            );
            break;
        }
        rack.nics[0].wait();
    }
    let simulated_cycles = rack.cycle() - t0;
    let wall_seconds = wall.elapsed().as_secs_f64();
    rack.network()
        .finish_capture()
        .context("writing the capture")?;
    let card_counters = rack.card_counters();
    // A run cut short (drain limit) before the load period ended: the links'
    // bytes so far.
    let last = rack.cycle();
    rack.with_fabric(|f| {
        if f.stats.snapshot.is_none() {
            f.snapshot(last);
        }
    });
    let (frames, unroutable, snapshot, max_port_queue, max_buffer, drops, faults) = rack
        .with_fabric(|f| {
            (
                f.stats.frames,
                f.stats.unroutable,
                f.stats.snapshot.clone(),
                f.switch
                    .ports
                    .iter()
                    .map(|p| p.max_queued_bytes)
                    .max()
                    .unwrap_or(0),
                f.switch.max_total_queued_bytes,
                f.switch.drops,
                f.fault_counters.clone(),
            )
        });
    counters.frames_sent = frames;
    counters.faults = faults;
    counters.switch_drops = drops + unroutable;
    counters.events = frames;
    drop(rack);

    bar.set_message("measuring unloaded RPC times");
    let mut baselines = RtlBaselines::new(exp, &conf)?;
    let max_len = cfg.homa.max_message_length;
    let mut unloaded_rtt = Vec::new();
    for &s in RTT_SIZES.iter().filter(|&&s| s <= max_len) {
        let cycles = baselines.measure(s)?;
        unloaded_rtt.push(UnloadedRtt {
            request_bytes: s,
            response_bytes: match cfg.response {
                ResponsePolicy::Echo => s,
                ResponsePolicy::Fixed(n) => n,
            },
            cycles,
            us: cycles as f64 / CYCLES_PER_US as f64,
        });
    }
    let mut failure = None;
    let rpcs = report::summarize_rpcs(
        &records,
        exp.warmup_cycles,
        exp.duration_cycles,
        |req, _resp| {
            baselines.measure(req).unwrap_or_else(|e| {
                failure.get_or_insert(e);
                Cycles::MAX
            })
        },
    );
    if let Some(e) = failure {
        return Err(e);
    }

    let (at, up, down) = snapshot.expect("taken at the end of the load period or of the run");
    let capacity =
        Link::new(cfg.net.link_gbps).bytes_per_cycle() * (at.saturating_sub(t0)).max(1) as f64;
    let frac = |v: &[u64]| -> (f64, f64) {
        let f: Vec<f64> = v.iter().map(|&b| b as f64 / capacity).collect();
        (
            f.iter().sum::<f64>() / f.len().max(1) as f64,
            f.iter().copied().fold(0.0, f64::max),
        )
    };
    let (uplink_mean, uplink_max) = frac(&up);
    let (downlink_mean, downlink_max) = frac(&down);
    let mut card_json = serde_json::Map::new();
    for (name, v) in &card_counters {
        card_json.insert(name.to_string(), serde_json::json!(v));
    }
    // How often each host's software looked at its endpoints.
    card_json.insert("host_loop_iterations".into(), serde_json::json!(iterations));
    if cfg.faults.any_packet_faults() || !cfg.faults.link_events.is_empty() {
        card_json.insert(
            "recovery".into(),
            serde_json::json!(
                "the cards resend what is lost (RESEND after resend_ticks of silence); an RPC unfinished at the end was still recovering"
            ),
        );
    }
    Ok(Report {
        workload: exp.workload.name.clone(),
        hosts,
        load: exp.load,
        link_gbps: cfg.net.link_gbps,
        duration_us: exp.duration_cycles as f64 / CYCLES_PER_US as f64,
        seed: cfg.seed,
        mean_message_bytes: exp.workload.mean(),
        baseline_method: "measured: the same RPC alone on an idle 2-card RTL network with the same configuration, one RPC at a time",
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
        max_port_queue_bytes: max_port_queue,
        max_buffer_bytes: max_buffer,
        cluster: counters,
        endpoints: serde_json::Value::Object(card_json),
        simulated_cycles,
        wall_seconds,
        // The RTL engine has no event queue of its own: its "events" are
        // the frames the cards sent.
        events: frames,
        events_per_sec: frames as f64 / wall_seconds.max(1e-9),
    })
}

/// The lines the RTL engine adds under the report's text.
pub fn text_footer(report: &Report) -> String {
    let mut s = String::from("RTL cards (summed):");
    if let Some(map) = report.endpoints.as_object() {
        for (k, v) in map {
            s.push_str(&format!(" {k} {v},"));
        }
    }
    s.pop();
    s.push_str(&format!(
        "\nRTL simulation: {} frames; {:.0} network cycles/s ({} cards)\n",
        report.events,
        report.simulated_cycles as f64 / report.wall_seconds.max(1e-9),
        report.hosts
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use homa_testbench::net::BufferConfig;

    /// An IPv4 frame from host `from` to host `to` at Homa priority `prio`,
    /// `len` bytes long; its byte 20 says which it is.
    fn frame(from: usize, to: usize, prio: u8, len: usize, tag: u8) -> Vec<u8> {
        let mut f = vec![0u8; len];
        f[..6].copy_from_slice(&host_addr(to).mac.0);
        f[6..12].copy_from_slice(&host_addr(from).mac.0);
        f[12..14].copy_from_slice(&[0x08, 0x00]);
        f[15] = prio << 5;
        f[20] = tag;
        f
    }

    fn net() -> NetConfig {
        NetConfig {
            link_gbps: 100.0,
            prop_delay_cycles: 25,
            switch_delay_cycles: 62,
            buffer: BufferConfig::Shared { bytes: 1 << 20 },
            host_delay_cycles: 0,
        }
    }

    /// Steps the fabric to `until`; (cycle, card, tag) of every arrival.
    fn arrivals(f: &mut SwitchFabric, from: u64, until: u64) -> Vec<(u64, usize, u8)> {
        let mut seen = Vec::new();
        let mut out = Vec::new();
        for now in from..until {
            f.arrivals(now, &mut out);
            seen.extend(out.drain(..).map(|(card, b)| (now, card, b[20])));
        }
        seen
    }

    #[test]
    fn a_lone_frame_takes_two_serializations_two_propagations_and_the_switch() {
        let mut f = SwitchFabric::new(3, &net());
        f.sent(0, 100, frame(0, 2, 0, 1514, 1));
        // 1538 wire bytes at 100 Gb/s: 30.76 cycles, 31 rounded up.
        let seen = arrivals(&mut f, 0, 1000);
        assert_eq!(seen, vec![(100 + 31 + 25 + 62 + 31 + 25, 2, 1)]);
    }

    #[test]
    fn a_higher_priority_frame_overtakes_the_queue_at_the_egress_port() {
        let mut f = SwitchFabric::new(4, &net());
        // Hosts 0 and 1 both send 8 full frames to host 2 at once: its
        // downlink has twice its rate offered, and a queue builds.
        for i in 0..8 {
            f.sent(0, 10, frame(0, 2, 0, 1514, i));
            f.sent(1, 10, frame(1, 2, 0, 1514, 10 + i));
        }
        // A control-size frame at priority 7 from host 3, once they queue.
        f.sent(3, 300, frame(3, 2, 7, 80, 100));
        let seen = arrivals(&mut f, 0, 3000);
        assert_eq!(seen.len(), 17);
        let order: Vec<u8> = seen.iter().map(|s| s.2).collect();
        let pos = order.iter().position(|&t| t == 100).unwrap();
        assert!(
            pos < 14,
            "the priority-7 frame waited behind the queue: {order:?}"
        );
        // It left as soon as the frame on the wire did: 300 + its uplink
        // (2 cycles) + 25 + 62 reaches the switch at 389; the downlink then
        // finishes one full frame (31 cycles at most) and sends it (2), 25 on.
        let at = seen[pos].0;
        assert!(
            (389 + 2 + 25..=389 + 31 + 2 + 25 + 1).contains(&at),
            "arrived at {at}"
        );
        // Within a priority, first in first out from each sender.
        let from0: Vec<u8> = order.iter().copied().filter(|&t| t < 10).collect();
        let from1: Vec<u8> = order
            .iter()
            .copied()
            .filter(|&t| (10..20).contains(&t))
            .collect();
        assert_eq!(from0, (0..8).collect::<Vec<u8>>());
        assert_eq!(from1, (10..18).collect::<Vec<u8>>());
    }

    #[test]
    fn frames_to_no_host_are_counted_not_delivered() {
        let mut f = SwitchFabric::new(2, &net());
        let mut broadcast = frame(0, 1, 0, 60, 1);
        broadcast[..6].copy_from_slice(&[0xff; 6]);
        f.sent(0, 0, broadcast);
        assert!(arrivals(&mut f, 0, 500).is_empty());
        assert_eq!(f.stats.unroutable, 1);
    }
}

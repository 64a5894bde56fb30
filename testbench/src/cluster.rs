//! The cluster simulation: hosts running the endpoint model, one switch,
//! faults, and the RPC applications, driven by a discrete-event loop.
//!
//! DESIGN NOTES
//! - Events sit in a binary heap keyed by (cycle, sequence number): ties
//!   resolve in the order events were scheduled, so a run is a pure function
//!   of its configuration and seed. All randomness comes from two ChaCha8
//!   streams derived from the seed (faults; workload), so adding a fault does
//!   not change the workload.
//! - A data packet costs four events: its sender's link is done, it is queued
//!   at the switch egress, the egress link is done, it reaches the host.
//!   Links pull: a host's link asks its endpoint for a frame when it becomes
//!   free, and an egress port takes the head of its highest non-empty queue.
//! - Every RPC the applications start has a record: who, sizes, the checksum
//!   of its request, when it started and ended, how it ended. Servers echo
//!   the request (or send a response of a fixed size); both ends verify
//!   checksums, so a corrupted or misassembled message is counted, never
//!   silently accepted.
//! - Frames stay Rust values on the fast path. With `verify_codec` every frame
//!   a host sends is encoded and decoded back and compared; with a pcap writer
//!   every frame is encoded into the capture. Corrupted frames travel as bytes.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::io::Write;
use std::net::Ipv4Addr;

use homa_wire::pcap::FrameWriter;
use homa_wire::{Frame, MacAddr};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::model::{AppEvent, Cycles, Endpoint, HomaConfig, HostAddr, RpcKey, NS_PER_CYCLE};
use crate::net::faults::{self, FaultConfig, FaultCounters};
use crate::net::{wire_bytes, Link, NetConfig, Packet, Switch, WireFrame};
use crate::workload::{exponential, Workload};

/// The server port every host's application listens on.
pub const SERVER_PORT: u16 = 1;

/// How servers answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum ResponsePolicy {
    /// The response is the request, byte for byte.
    Echo,
    /// A response of this many bytes.
    Fixed(u32),
}

/// Poisson all-to-all RPC load.
#[derive(Clone, Debug, Serialize)]
pub struct LoadConfig {
    pub workload: Workload,
    /// Target fraction of access-link capacity (wire bytes: headers and
    /// Ethernet overhead of requests and responses included; control packets not).
    pub load: f64,
    /// New RPCs start until this cycle.
    pub until: Cycles,
}

/// Everything a cluster run needs.
#[derive(Clone, Debug, Serialize)]
pub struct ClusterConfig {
    pub hosts: usize,
    pub homa: HomaConfig,
    pub net: NetConfig,
    pub faults: FaultConfig,
    pub seed: u64,
    pub response: ResponsePolicy,
    /// Encode and decode every frame sent, counting mismatches.
    pub verify_codec: bool,
}

impl ClusterConfig {
    pub fn new(hosts: usize) -> ClusterConfig {
        ClusterConfig {
            hosts,
            homa: HomaConfig::default(),
            net: NetConfig::default(),
            faults: FaultConfig::default(),
            seed: 1,
            response: ResponsePolicy::Echo,
            verify_codec: false,
        }
    }
}

/// How an RPC ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Outcome {
    Pending,
    Completed,
    Failed,
}

/// One RPC started by an application.
#[derive(Clone, Debug, Serialize)]
pub struct RpcRecord {
    /// Host index of the client.
    pub client: u32,
    /// Host index of the server.
    pub server: u32,
    /// Client id (0 until started).
    pub id: u64,
    pub request_bytes: u32,
    pub response_bytes: u32,
    /// Checksum of the request payload.
    pub request_checksum: u64,
    pub start: Cycles,
    pub end: Option<Cycles>,
    pub outcome: Outcome,
    /// Responses (or failures) the client application received for it: must be 1.
    pub completions: u32,
    /// Times the server application received the request (more than 1 is
    /// Homa's at-least-once delivery showing: a duplicate that outlived the RPC).
    pub served: u32,
}

/// Counters of the cluster's applications and network.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ClusterCounters {
    pub events: u64,
    pub rpcs_started: u64,
    pub rpcs_completed: u64,
    pub rpcs_failed: u64,
    /// Response payloads whose checksum did not match.
    pub response_checksum_errors: u64,
    /// Requests whose checksum did not match at the server.
    pub request_checksum_errors: u64,
    /// A client application got a second completion for an RPC.
    pub duplicate_completions: u64,
    /// Requests a server application saw more than once (at-least-once delivery).
    pub duplicate_requests: u64,
    /// Responses for RPCs the records do not know.
    pub unknown_responses: u64,
    pub frames_sent: u64,
    pub codec_checked: u64,
    pub codec_mismatches: u64,
    pub switch_drops: u64,
    pub faults: FaultCounters,
}

enum Ev {
    /// A host's link finished sending its frame.
    HostTxDone(u32),
    /// A frame is ready to be queued at the switch egress.
    SwitchEnqueue(Box<Packet>),
    /// An egress link finished sending its frame.
    EgressTxDone(u32),
    /// A frame reaches a host.
    HostRx(u32, Box<Packet>),
    /// Every endpoint's timer ticks.
    Tick,
    /// Start RPC record i.
    StartRpc(u32),
    /// The next Poisson arrival at a host.
    Arrival(u32),
    /// A host's link goes down or up.
    Link { host: u32, up: bool },
    /// Link statistics are captured (end of the measured interval).
    Snapshot,
}

struct Scheduled {
    at: Cycles,
    seq: u64,
    ev: Ev,
}

impl PartialEq for Scheduled {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl Eq for Scheduled {}
impl PartialOrd for Scheduled {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Scheduled {
    fn cmp(&self, o: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap, we want the earliest first.
        (o.at, o.seq).cmp(&(self.at, self.seq))
    }
}

struct Host {
    endpoint: Endpoint,
    /// The host-to-switch direction of its link.
    uplink: Link,
    /// Its link works (both directions); false drops every frame.
    up: bool,
    /// Mean cycles between RPC arrivals (Poisson), if this host generates load.
    mean_interarrival: Option<f64>,
}

/// Link bytes at the snapshot.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LinkSnapshot {
    pub at: Cycles,
    pub uplink_bytes: Vec<u64>,
    pub downlink_bytes: Vec<u64>,
}

/// A simulated cluster.
pub struct Cluster {
    pub cfg: ClusterConfig,
    /// Simulated time of the event being handled.
    now: Cycles,
    /// Sequence number of the last scheduled event (ties break by it).
    seq: u64,
    /// Pending events, earliest first.
    queue: BinaryHeap<Scheduled>,
    /// Host i sits on switch port i.
    hosts: Vec<Host>,
    switch: Switch,
    /// Randomness of fault injection.
    fault_rng: ChaCha8Rng,
    /// Randomness of the applications (arrivals, sizes, destinations).
    app_rng: ChaCha8Rng,
    /// The Poisson load, once started.
    load: Option<LoadConfig>,
    /// Every RPC started, in order of creation.
    pub records: Vec<RpcRecord>,
    /// (client host, client id) -> record index.
    by_id: crate::model::FxMap<(u32, u64), u32>,
    pub counters: ClusterCounters,
    /// Link byte counts at the end of the load period.
    pub snapshot: Option<LinkSnapshot>,
    /// Capture of every frame sent, if asked for.
    pcap: Option<Box<FrameWriter<Box<dyn Write>>>>,
}

/// Address of host `i`: 10.0.x.y, MAC 02:00:00:00:xx:yy.
pub fn host_addr(i: usize) -> HostAddr {
    let n = i as u32 + 1;
    HostAddr {
        ip: Ipv4Addr::new(10, 0, (n >> 8) as u8, n as u8),
        mac: MacAddr([0x02, 0, 0, 0, (n >> 8) as u8, n as u8]),
    }
}

fn host_index(ip: Ipv4Addr) -> usize {
    let o = ip.octets();
    ((o[2] as usize) << 8 | o[3] as usize) - 1
}

fn host_index_of_mac(mac: &[u8]) -> usize {
    ((mac[4] as usize) << 8 | mac[5] as usize).wrapping_sub(1)
}

/// A 64-bit checksum of a message (FNV-1a over 8-byte words).
pub fn checksum(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        h = (h ^ u64::from_le_bytes(c.try_into().unwrap())).wrapping_mul(0x0000_0100_0000_01b3);
        h = h.rotate_left(23);
    }
    for &b in chunks.remainder() {
        h = (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Deterministic message content for RPC record `index`.
pub fn message_payload(seed: u64, index: u64, len: u32) -> Vec<u8> {
    let mut x = seed ^ (index.wrapping_add(1)).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut out = Vec::with_capacity(len as usize + 8);
    while out.len() < len as usize {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.extend_from_slice(&x.to_le_bytes());
    }
    out.truncate(len as usize);
    out
}

impl Cluster {
    pub fn new(cfg: ClusterConfig) -> Cluster {
        let hosts = (0..cfg.hosts)
            .map(|i| Host {
                endpoint: Endpoint::new(cfg.homa.clone(), host_addr(i)),
                uplink: Link::new(cfg.net.link_gbps),
                up: true,
                mean_interarrival: None,
            })
            .collect();
        let switch = Switch::new(cfg.hosts, cfg.net.link_gbps, cfg.net.buffer);
        let mut c = Cluster {
            fault_rng: ChaCha8Rng::seed_from_u64(cfg.seed ^ 0xfa17),
            app_rng: ChaCha8Rng::seed_from_u64(cfg.seed),
            cfg,
            now: 0,
            seq: 0,
            queue: BinaryHeap::new(),
            hosts,
            switch,
            load: None,
            records: Vec::new(),
            by_id: Default::default(),
            counters: ClusterCounters::default(),
            snapshot: None,
            pcap: None,
        };
        let tick = c.cfg.homa.tick_cycles;
        c.schedule(tick, Ev::Tick);
        for e in c.cfg.faults.link_events.clone() {
            c.schedule(
                e.at,
                Ev::Link {
                    host: e.host as u32,
                    up: e.up,
                },
            );
        }
        c
    }

    /// Current simulated time.
    pub fn now(&self) -> Cycles {
        self.now
    }

    pub fn endpoint(&self, host: usize) -> &Endpoint {
        &self.hosts[host].endpoint
    }

    pub fn switch(&self) -> &Switch {
        &self.switch
    }

    /// Wire bytes each host has sent.
    pub fn uplink_bytes(&self) -> Vec<u64> {
        self.hosts
            .iter()
            .map(|h| h.uplink.wire_bytes_sent)
            .collect()
    }

    /// Writes every frame any host sends into a pcap capture.
    pub fn capture(&mut self, writer: FrameWriter<Box<dyn Write>>) {
        self.pcap = Some(Box::new(writer));
    }

    /// Flushes and closes the capture, if any.
    pub fn finish_capture(&mut self) -> Option<Box<dyn Write>> {
        self.pcap.take().map(|w| w.into_inner())
    }

    fn schedule(&mut self, at: Cycles, ev: Ev) {
        self.seq += 1;
        self.queue.push(Scheduled {
            at,
            seq: self.seq,
            ev,
        });
    }

    /// Starts an RPC at cycle `at` from `client` to `server` with a request of
    /// `request_bytes`. Returns its record index.
    pub fn add_rpc(
        &mut self,
        at: Cycles,
        client: usize,
        server: usize,
        request_bytes: u32,
    ) -> usize {
        let index = self.records.len();
        let response_bytes = match self.cfg.response {
            ResponsePolicy::Echo => request_bytes,
            ResponsePolicy::Fixed(n) => n,
        };
        self.records.push(RpcRecord {
            client: client as u32,
            server: server as u32,
            id: 0,
            request_bytes,
            response_bytes,
            request_checksum: 0,
            start: at,
            end: None,
            outcome: Outcome::Pending,
            completions: 0,
            served: 0,
        });
        self.schedule(at, Ev::StartRpc(index as u32));
        index
    }

    /// Starts Poisson all-to-all load: each host starts RPCs to uniformly
    /// chosen other hosts, at the rate that loads its access link to
    /// `load.load` (see `LoadConfig`). Link statistics are captured at `until`.
    pub fn start_load(&mut self, load: LoadConfig) {
        let link = Link::new(self.cfg.net.link_gbps);
        let wire_per_rpc = load.workload.expect(|l| {
            let resp = match self.cfg.response {
                ResponsePolicy::Echo => l,
                ResponsePolicy::Fixed(n) => n,
            };
            message_wire_bytes(&self.cfg.homa, l) + message_wire_bytes(&self.cfg.homa, resp)
        });
        let mean = if load.load > 0.0 {
            Some(wire_per_rpc / (load.load * link.bytes_per_cycle()))
        } else {
            None
        };
        for h in 0..self.hosts.len() {
            self.hosts[h].mean_interarrival = mean;
            if let Some(m) = mean {
                let first = exponential(&mut self.app_rng, m) as Cycles;
                if first < load.until {
                    self.schedule(first, Ev::Arrival(h as u32));
                }
            }
        }
        self.schedule(load.until, Ev::Snapshot);
        self.load = Some(load);
    }

    /// Runs until the event queue passes `end` (or empties, but the timer
    /// ticks forever, so in practice until `end`). `progress` is called every
    /// 2^16 events with the current cycle.
    pub fn run_until(&mut self, end: Cycles, mut progress: impl FnMut(Cycles)) {
        while let Some(top) = self.queue.peek() {
            if top.at > end {
                break;
            }
            let Scheduled { at, ev, .. } = self.queue.pop().unwrap();
            self.now = at;
            self.counters.events += 1;
            if self.counters.events & 0xffff == 0 {
                progress(at);
            }
            self.dispatch(ev);
        }
        self.now = self.now.max(end);
    }

    /// Runs until every recorded RPC has ended or `limit` is reached.
    /// Returns whether all ended.
    pub fn run_until_idle(&mut self, limit: Cycles, mut progress: impl FnMut(Cycles)) -> bool {
        let step = self.cfg.homa.tick_cycles.max(1000);
        loop {
            if self.pending_rpcs() == 0
                && self
                    .queue
                    .iter()
                    .all(|s| !matches!(s.ev, Ev::StartRpc(_) | Ev::Arrival(_)))
            {
                return true;
            }
            if self.now >= limit {
                return false;
            }
            let end = (self.now + step).min(limit);
            self.run_until(end, &mut progress);
        }
    }

    /// RPCs started and not ended.
    pub fn pending_rpcs(&self) -> usize {
        self.records
            .iter()
            .filter(|r| r.outcome == Outcome::Pending)
            .count()
    }

    fn dispatch(&mut self, ev: Ev) {
        match ev {
            Ev::HostTxDone(h) => {
                self.hosts[h as usize].uplink.busy = false;
                self.kick_host(h as usize);
            }
            Ev::SwitchEnqueue(p) => {
                let port = p.dst_host as usize;
                if port >= self.hosts.len() {
                    self.counters.switch_drops += 1;
                    return;
                }
                if self.switch.enqueue(port, p) {
                    if !self.switch.ports[port].link.busy {
                        self.kick_egress(port);
                    }
                } else {
                    self.counters.switch_drops += 1;
                }
            }
            Ev::EgressTxDone(port) => {
                self.switch.ports[port as usize].link.busy = false;
                self.kick_egress(port as usize);
            }
            Ev::HostRx(h, p) => self.host_rx(h as usize, *p),
            Ev::Tick => {
                let now = self.now;
                for h in 0..self.hosts.len() {
                    self.hosts[h].endpoint.tick(now);
                    self.drain_events(h);
                    self.kick_host(h);
                }
                let tick = self.cfg.homa.tick_cycles;
                self.schedule(now + tick, Ev::Tick);
            }
            Ev::StartRpc(i) => self.start_rpc(i as usize),
            Ev::Arrival(h) => {
                let h = h as usize;
                let load = self.load.as_ref().unwrap();
                let n = self.hosts.len();
                let size = load.workload.sample(&mut self.app_rng);
                let mut server = self.app_rng.gen_range(0..n - 1);
                if server >= h {
                    server += 1;
                }
                let until = load.until;
                let now = self.now;
                self.add_rpc(now, h, server, size);
                if let Some(m) = self.hosts[h].mean_interarrival {
                    let next = now + exponential(&mut self.app_rng, m).round() as Cycles;
                    if next < until {
                        self.schedule(next, Ev::Arrival(h as u32));
                    }
                }
            }
            Ev::Link { host, up } => {
                self.hosts[host as usize].up = up;
                if up {
                    self.kick_host(host as usize);
                }
            }
            Ev::Snapshot => {
                self.snapshot = Some(LinkSnapshot {
                    at: self.now,
                    uplink_bytes: self
                        .hosts
                        .iter()
                        .map(|h| h.uplink.wire_bytes_sent)
                        .collect(),
                    downlink_bytes: self
                        .switch
                        .ports
                        .iter()
                        .map(|p| p.link.wire_bytes_sent)
                        .collect(),
                });
            }
        }
    }

    fn start_rpc(&mut self, i: usize) {
        let now = self.now;
        let rec = &self.records[i];
        let (client, server, len) = (rec.client as usize, rec.server as usize, rec.request_bytes);
        let payload = message_payload(self.cfg.seed, i as u64, len);
        let sum = checksum(&payload);
        let result =
            self.hosts[client]
                .endpoint
                .send_request(now, host_addr(server), SERVER_PORT, payload);
        self.counters.rpcs_started += 1;
        let rec = &mut self.records[i];
        rec.request_checksum = sum;
        rec.start = now;
        match result {
            Ok(id) => {
                rec.id = id;
                self.by_id.insert((client as u32, id), i as u32);
            }
            Err(e) => {
                tracing::warn!(error = %e, "send_request refused");
                rec.outcome = Outcome::Failed;
                rec.end = Some(now);
                rec.completions += 1;
                self.counters.rpcs_failed += 1;
            }
        }
        self.kick_host(client);
    }

    fn host_rx(&mut self, h: usize, p: Packet) {
        let now = self.now;
        if !self.hosts[h].up {
            self.counters.faults.link_down_drops += 1;
            return;
        }
        match p.frame {
            WireFrame::Frame(f) => self.hosts[h].endpoint.handle_frame(now, f),
            WireFrame::Bytes(b) => {
                let _ = self.hosts[h].endpoint.handle_bytes(now, &b);
            }
        }
        self.drain_events(h);
        self.kick_host(h);
    }

    /// Runs host `h`'s application on what its endpoint reported.
    fn drain_events(&mut self, h: usize) {
        let now = self.now;
        while let Some(ev) = self.hosts[h].endpoint.poll_event() {
            match ev {
                AppEvent::Request {
                    key,
                    client,
                    payload,
                    ..
                } => self.serve(h, key, client, payload),
                AppEvent::Response { id, payload, .. } => {
                    let Some(&i) = self.by_id.get(&(h as u32, id)) else {
                        self.counters.unknown_responses += 1;
                        continue;
                    };
                    let rec = &mut self.records[i as usize];
                    rec.completions += 1;
                    if rec.completions > 1 {
                        self.counters.duplicate_completions += 1;
                        continue;
                    }
                    let expected = match self.cfg.response {
                        ResponsePolicy::Echo => rec.request_checksum,
                        ResponsePolicy::Fixed(n) => {
                            checksum(&message_payload(self.cfg.seed, !(i as u64), n))
                        }
                    };
                    if checksum(&payload) != expected
                        || payload.len() != rec.response_bytes as usize
                    {
                        self.counters.response_checksum_errors += 1;
                    }
                    rec.outcome = Outcome::Completed;
                    rec.end = Some(now);
                    self.counters.rpcs_completed += 1;
                }
                AppEvent::Failed { id, error, .. } => {
                    tracing::debug!(host = h, id, %error, "RPC failed");
                    let Some(&i) = self.by_id.get(&(h as u32, id)) else {
                        continue;
                    };
                    let rec = &mut self.records[i as usize];
                    rec.completions += 1;
                    if rec.completions > 1 {
                        self.counters.duplicate_completions += 1;
                        continue;
                    }
                    rec.outcome = Outcome::Failed;
                    rec.end = Some(now);
                    self.counters.rpcs_failed += 1;
                }
            }
        }
    }

    /// Server application: verify the request, answer it.
    fn serve(&mut self, h: usize, key: RpcKey, client: HostAddr, payload: Vec<u8>) {
        let now = self.now;
        let c = host_index(client.ip) as u32;
        let client_id = key.id ^ 1;
        let index = self.by_id.get(&(c, client_id)).copied();
        if let Some(i) = index {
            let rec = &mut self.records[i as usize];
            rec.served += 1;
            if rec.served > 1 {
                self.counters.duplicate_requests += 1;
            }
        }
        let response = match (index, self.cfg.response) {
            (Some(i), policy) => {
                if checksum(&payload) != self.records[i as usize].request_checksum {
                    self.counters.request_checksum_errors += 1;
                }
                match policy {
                    ResponsePolicy::Echo => payload,
                    ResponsePolicy::Fixed(n) => message_payload(self.cfg.seed, !(i as u64), n),
                }
            }
            (None, _) => payload,
        };
        if let Err(e) = self.hosts[h].endpoint.reply(now, key, response) {
            tracing::warn!(error = %e, "reply refused");
        }
    }

    /// If host `h`'s link is free, sends its endpoint's next frame.
    fn kick_host(&mut self, h: usize) {
        let now = self.now;
        let host = &mut self.hosts[h];
        if host.uplink.busy {
            return;
        }
        let Some(frame) = host.endpoint.next_frame(now) else {
            return;
        };
        let len = frame.len();
        let wb = wire_bytes(len);
        let done = host.uplink.start(now, wb);
        let up = host.up;
        self.counters.frames_sent += 1;
        if self.cfg.verify_codec {
            self.counters.codec_checked += 1;
            let ok = frame
                .encode()
                .ok()
                .and_then(|b| Frame::decode(&b).ok())
                .is_some_and(|back| back == frame);
            if !ok {
                self.counters.codec_mismatches += 1;
            }
        }
        if let Some(w) = self.pcap.as_mut() {
            if let Ok(bytes) = frame.encode() {
                let ts = std::time::Duration::from_nanos(now * NS_PER_CYCLE);
                let _ = w.write(ts, &bytes);
            }
        }
        self.schedule(done, Ev::HostTxDone(h as u32));
        if !up {
            self.counters.faults.link_down_drops += 1;
            return;
        }
        let packet = Box::new(Packet {
            priority: frame.ip.priority(),
            dst_host: host_index_of_mac(&frame.eth.dst.0) as u32,
            wire_bytes: wb,
            frame: WireFrame::Frame(frame),
        });
        let at = done + self.cfg.net.prop_delay_cycles + self.cfg.net.switch_delay_cycles;
        self.schedule(at, Ev::SwitchEnqueue(packet));
    }

    /// If egress `port`'s link is free, sends the next queued frame.
    fn kick_egress(&mut self, port: usize) {
        let now = self.now;
        let Some(packet) = self.switch.dequeue(port) else {
            return;
        };
        let done = self.switch.ports[port].link.start(now, packet.wire_bytes);
        self.schedule(done, Ev::EgressTxDone(port as u32));
        if !self.hosts[port].up {
            self.counters.faults.link_down_drops += 1;
            return;
        }
        let arrive = done + self.cfg.net.prop_delay_cycles + self.cfg.net.host_delay_cycles;
        if self.cfg.faults.any_packet_faults() {
            let copies = faults::inject(
                &self.cfg.faults,
                &mut self.fault_rng,
                &mut self.counters.faults,
                packet,
            );
            for (delay, p) in copies {
                self.schedule(arrive + delay, Ev::HostRx(port as u32, p));
            }
        } else {
            self.schedule(arrive, Ev::HostRx(port as u32, packet));
        }
    }
}

/// One RPC of the Poisson load: when, who to whom, how big.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Arrival {
    pub at: Cycles,
    pub client: u32,
    pub server: u32,
    pub request_bytes: u32,
}

/// The RPCs [`Cluster::start_load`] starts for `cfg` and `load`, in the
/// order it starts them (its record order), without running a cluster: the
/// same draws from the same stream in the same order, so another engine (the
/// RTL cluster of `homa-nic sim --engine rtl`) runs exactly the model's load.
/// The applications' stream feeds only arrivals, so the network cannot
/// change it.
pub fn arrival_schedule(cfg: &ClusterConfig, load: &LoadConfig) -> Vec<Arrival> {
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
    let link = Link::new(cfg.net.link_gbps);
    let wire_per_rpc = load.workload.expect(|l| {
        let resp = match cfg.response {
            ResponsePolicy::Echo => l,
            ResponsePolicy::Fixed(n) => n,
        };
        message_wire_bytes(&cfg.homa, l) + message_wire_bytes(&cfg.homa, resp)
    });
    if load.load <= 0.0 {
        return Vec::new();
    }
    let mean = wire_per_rpc / (load.load * link.bytes_per_cycle());
    // (at, sequence, host), earliest first; the sequence breaks ties as the
    // cluster's event queue does (order of scheduling).
    let mut queue = BinaryHeap::new();
    let mut seq = 0u64;
    for h in 0..cfg.hosts {
        let first = exponential(&mut rng, mean) as Cycles;
        if first < load.until {
            seq += 1;
            queue.push(std::cmp::Reverse((first, seq, h)));
        }
    }
    let mut out = Vec::new();
    while let Some(std::cmp::Reverse((now, _, h))) = queue.pop() {
        let size = load.workload.sample(&mut rng);
        let mut server = rng.gen_range(0..cfg.hosts - 1);
        if server >= h {
            server += 1;
        }
        out.push(Arrival {
            at: now,
            client: h as u32,
            server: server as u32,
            request_bytes: size,
        });
        let next = now + exponential(&mut rng, mean).round() as Cycles;
        if next < load.until {
            seq += 1;
            queue.push(std::cmp::Reverse((next, seq, h)));
        }
    }
    out
}

/// Wire bytes of all DATA packets of a message of `length` bytes (headers,
/// Ethernet overhead), cut as the sender cuts it.
pub fn message_wire_bytes(cfg: &HomaConfig, length: u32) -> f64 {
    let p = cfg.max_payload();
    let u = cfg.unscheduled(length);
    let packets = u.div_ceil(p) + (length - u).div_ceil(p);
    // Every DATA frame is at least 90 bytes (Ethernet 14, IPv4 20, DATA 56),
    // above Ethernet's 60-byte minimum, so no padding: headers plus payload.
    let frame_overhead = (14 + 20 + 56) as f64;
    length as f64 + packets as f64 * (frame_overhead + 24.0)
}

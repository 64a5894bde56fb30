//! Hostile input for the card (`homa-nic fuzz`): random and mutated Homa
//! frames into one RTL card's RX port while it serves real RPCs from a
//! second card, and checks that nothing the frames do breaks the card.
//!
//! DESIGN NOTES
//! ------------
//! - Two simulated cards (the core's RTL) on a fabric of our own
//!   ([`FuzzFabric`], a cable): card 1's client keeps a few echo RPCs in
//!   flight to card 0's server; the fuzzer's frames reach card 0's RX port
//!   through the same fabric, between the real frames, paced at half the
//!   port's rate (the RX engine writes payload at PCIe speed, below the
//!   port's; an RX FIFO overflow would drop real frames, and with no
//!   retransmission yet a real RPC would hang for the test's pacing, not the
//!   card's fault).
//! - What is checked, and when:
//!   * at every message the fuzzed card delivers (real or forged): no byte
//!     written past its end in its last bpage (the host zeroes every bpage
//!     before giving it back, so any such byte is a stray write). The card
//!     also recycles bpages itself, unzeroed, when a message expires
//!     unfinished (`INBOUND_EXPIRED`): a bpage zeroed before the latest
//!     expiry the host has seen may hold an expired message's bytes, and
//!     is not checked (`past_end_unchecked` counts these);
//!   * every cycle, by the simulated card: a DMA write outside the memory
//!     the host mapped for the card (the IOMMU model) is kept, not fatal,
//!     and reported at the next check as a finding; a panic anywhere in the
//!     simulation is caught and reported with the seed and frame;
//!   * at each checkpoint (every `check_every` fuzz frames): the fuzzer
//!     stops, the client sends no new RPC, and every real RPC in flight must
//!     complete (its echo equal, byte for byte, to its request: a forged
//!     frame that changed one shows here), or fail with an error if fuzz
//!     frames were forged at it (an RPC_UNKNOWN or ACK naming a live RPC
//!     ends it, as in HomaModule: Homa does not authenticate peers; the
//!     cards run with a 200 us timeout, so that takes 50,000 cycles, not
//!     500,000), within `STALL_CYCLES`; then the
//!     card must go quiet with every frame accounted for: the parser's
//!     verdict counters equal, verdict by verdict, what the software decoder
//!     (`homa_wire::Frame::decode`) says of every frame handed to the card,
//!     and the frames accepted equal the RX FIFO's overflows, DATA packets
//!     taken and every drop and control counter of the RX engine. A card
//!     that does not get there in `DRAIN_CYCLES` is hung (the watchdog).
//!     The counters are judged on two readings in a row that agree: they
//!     are read one register at a time while frames may still be moving.
//!   Between checkpoints the real RPCs run alongside the fuzz frames, so
//!   forgeries meet RPCs half received.
//! - Reproducing: the run is a pure function of its configuration; a
//!   finding names the seed and the frames since the last good checkpoint.
//!   The same command reproduces it; `check_every 1` narrows it to a frame.

pub mod gen;
pub mod host;

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::net::Ipv4Addr;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

use homa_hw::host_abi::{self, completion, tx_desc};
use homa_hw::regmap::{rx_counters, timer};
use homa_hw::rx::parser::RxVerdict;
use homa_hw_sim::cable::Cable;
use homa_hw_sim::network::{Fabric, SimNetwork, DEFAULT_LINK_DELAY_CYCLES, DEFAULT_LINK_GBPS};
use homa_hw_sim::plain_host::PlainHost;
use homa_wire::layout::{self, eth, HOMA_OFFSET};
use homa_wire::{Body, Frame};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use gen::{Addresses, Budget, Fuzzed, Generator, LiveRpc};
use host::{Host, Send, TX_BUFFERS, TX_SLOTS, TX_SLOT_BYTES};

const SERVER_MAC: [u8; 6] = [2, 0, 0, 0, 0, 0x10];
const CLIENT_MAC: [u8; 6] = [2, 0, 0, 0, 0, 0x11];
const SERVER_IP: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 16);
const CLIENT_IP: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 17);
const LIVE_PORT: u16 = 99;
const SPARE_PORT: u16 = 100;
const CLIENT_PORT: u16 = 40_000;
/// Bpages of the server's two endpoints and the client's.
const LIVE_BPAGES: u32 = 256;
const SPARE_BPAGES: u32 = 256;
const CLIENT_BPAGES: u32 = 64;
/// Cycles a checkpoint waits for the real RPCs to complete: well past the
/// cards' timeout (`TIMEOUT_TICKS` ticks of 10 us: 50,000 cycles, and a
/// sweep), so an RPC a forgery ended fails with an error by then.
const STALL_CYCLES: u64 = 400_000;
/// Cycles with no frame reaching card 0 before its counters are judged.
const QUIET_CYCLES: u64 = 500;
/// The cards' timeout_ticks here (the default, 200, is 2 ms: 500,000
/// cycles): forged control packets at a live RPC may legitimately end it
/// (an RPC_UNKNOWN or ACK naming it makes the server let its response go,
/// as HomaModule's does), and its client then fails it after this long.
const TIMEOUT_TICKS: u32 = 20;
/// Cycles a checkpoint waits for the card to account for every frame.
const DRAIN_CYCLES: u64 = 100_000;
/// Cycles between counter reads while waiting for the card to go quiet.
const DRAIN_POLL_CYCLES: u64 = 200;

/// What to run.
#[derive(Clone, Debug, Serialize)]
pub struct FuzzConfig {
    pub frames: u64,
    pub seed: u64,
    /// Fuzz frames between checkpoints (module notes).
    pub check_every: u64,
    /// Real RPCs the client keeps in flight.
    pub concurrency: usize,
    /// Largest real request, bytes (1 .. this).
    pub max_rpc_bytes: u32,
    /// Forged RPCs the card may be left holding open (generator notes).
    pub open_rpc_budget: u32,
}

impl FuzzConfig {
    pub fn new(frames: u64, seed: u64) -> FuzzConfig {
        FuzzConfig {
            frames,
            seed,
            check_every: 1000,
            concurrency: 3,
            max_rpc_bytes: 20_000,
            open_rpc_budget: 256,
        }
    }
}

/// Something the card did wrong, with what reproduces it.
#[derive(Clone, Debug, Serialize)]
pub struct Finding {
    /// Which check failed.
    pub check: String,
    pub seed: u64,
    /// Fuzz frames `[first_frame, last_frame]` were injected since the last
    /// checkpoint that passed.
    pub first_frame: u64,
    pub last_frame: u64,
    /// Card 0's cycle when it was seen.
    pub cycle: u64,
    pub detail: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} (seed {}, fuzz frames {}..={}, cycle {})",
            self.check, self.detail, self.seed, self.first_frame, self.last_frame, self.cycle
        )
    }
}

/// What a run did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FuzzReport {
    pub frames: u64,
    pub seed: u64,
    pub cycles: u64,
    pub wall_seconds: f64,
    pub frames_per_second: f64,
    pub checkpoints: u64,
    /// Fuzz frames by how they were made.
    pub by_class: BTreeMap<String, u64>,
    /// Frames handed to the fuzzed card (fuzz and real) by the verdict the
    /// software decoder gives them.
    pub verdicts: BTreeMap<String, u64>,
    /// The fuzzed card's RX engine counters at the end.
    pub engine: BTreeMap<String, u64>,
    pub rpcs_completed: u64,
    /// Real RPCs that failed (the client's card gave up) after fuzz frames
    /// forged at them: an RPC_UNKNOWN or ACK with their id ends them, as in
    /// HomaModule (Homa does not authenticate its peers).
    pub rpcs_ended_by_forgeries: u64,
    /// Real requests the server's card delivered again after fuzz frames
    /// ended their RPC there (the client's restart is a new RPC).
    pub requests_rerun_after_forgeries: u64,
    /// Messages the fuzz frames completed and the card delivered to its
    /// host (forged, well-formed requests and responses).
    pub forged_messages_delivered: u64,
    /// Delivered messages whose last bpage the card may have recycled
    /// from an expired message (not checked for stray writes).
    pub past_end_unchecked: u64,
    /// Forged responses the card gave up on part way (TIMEOUT completions).
    pub forged_messages_expired: u64,
    /// Inbound messages the fuzzed card expired (`INBOUND_EXPIRED`).
    pub inbound_expired: u64,
    pub findings: Vec<Finding>,
}

/// The counters a stall's finding shows, for each card.
const RECOVERY_COUNTERS: [(&str, u32); 13] = [
    ("rx_held", rx_counters::RX_MESSAGES_HELD),
    ("tx_held", rx_counters::TX_MESSAGES_HELD),
    ("resends_in", rx_counters::RESENDS_RECEIVED),
    ("resends_unknown", rx_counters::RESENDS_UNKNOWN),
    ("busys_sent", rx_counters::BUSYS_SENT),
    ("unknowns_sent", rx_counters::RPC_UNKNOWNS_SENT),
    ("completions_dropped", rx_counters::COMPLETIONS_DROPPED),
    ("retransmitted", rx_counters::PACKETS_RETRANSMITTED),
    ("lingers_expired", rx_counters::LINGERS_EXPIRED),
    ("inbound_expired", rx_counters::INBOUND_EXPIRED),
    ("response_resends", rx_counters::RESPONSE_RESENDS_SENT),
    ("duplicates", rx_counters::DUPLICATES),
    ("bad_range", rx_counters::DROP_BAD_RANGE),
];

/// The RX engine's counters that, with DATA_ACCEPTED and the FIFO's
/// overflows, account for every accepted frame.
const ENGINE_COUNTERS: [(&str, u32); 14] = [
    ("fifo_overflows", rx_counters::FIFO_OVERFLOWS),
    ("data_accepted", rx_counters::DATA_ACCEPTED),
    ("other_control", rx_counters::OTHER_CONTROL),
    ("drop_no_endpoint", rx_counters::DROP_NO_ENDPOINT),
    ("drop_rpc_full", rx_counters::DROP_RPC_FULL),
    ("drop_no_bpage", rx_counters::DROP_NO_BPAGE),
    ("drop_too_big", rx_counters::DROP_TOO_BIG),
    ("duplicates", rx_counters::DUPLICATES),
    ("drop_bad_range", rx_counters::DROP_BAD_RANGE),
    ("grants_received", rx_counters::GRANTS_RECEIVED),
    ("cutoffs_received", rx_counters::CUTOFFS_RECEIVED),
    ("need_acks_received", rx_counters::NEED_ACKS_RECEIVED),
    ("resends_received", rx_counters::RESENDS_RECEIVED),
    ("acks_received", rx_counters::ACKS_RECEIVED),
];

/// A request of the real client, as the fabric has delivered it.
#[derive(Clone, Debug, Default)]
struct Tracked {
    length: u32,
    queued: Vec<(u32, u32)>,
}

/// The fabric: a cable between the two cards, and the fuzzer's frames into
/// card 0, each frame to card 0 judged by the software decoder as it goes.
pub struct FuzzFabric {
    cable: Cable,
    /// Fuzz frames waiting to go in, and the cycle the next may.
    fuzz: VecDeque<Vec<u8>>,
    next_fuzz_at: u64,
    /// Frames handed to card 0 by the decoder's verdict.
    verdicts: [u64; RxVerdict::ALL.len()],
    /// The client's requests by client id: the ranges handed to card 0.
    requests: HashMap<u64, Tracked>,
    /// The cycle a frame last reached card 0 (its counters are judged only
    /// once frames have stopped coming: the cards may still be settling an
    /// RPC that forgeries ended, after the real ones are done).
    last_to_card0: u64,
}

impl FuzzFabric {
    fn new() -> FuzzFabric {
        FuzzFabric {
            cable: Cable::new(DEFAULT_LINK_GBPS, DEFAULT_LINK_DELAY_CYCLES),
            fuzz: VecDeque::new(),
            next_fuzz_at: 0,
            verdicts: [0; RxVerdict::ALL.len()],
            requests: HashMap::new(),
            last_to_card0: 0,
        }
    }

    fn to_card0(&mut self, frame: &[u8], real: bool) {
        let verdict = expected_verdict(frame);
        if verdict != RxVerdict::Accept {
            self.verdicts[verdict as usize] += 1;
            return;
        }
        let verdict = match Frame::decode(frame) {
            Ok(f) => {
                if real {
                    if let Body::Data(d) = &f.homa.body {
                        if f.homa.common.dport == LIVE_PORT {
                            let t = self.requests.entry(f.homa.common.sender_id).or_default();
                            t.length = d.message_length;
                            let o = d.payload_offset(&f.homa.common);
                            t.queued.push((o, o + d.payload.len() as u32));
                        }
                    }
                }
                RxVerdict::Accept
            }
            Err(e) => RxVerdict::of_decode_error(&e),
        };
        self.verdicts[verdict as usize] += 1;
    }
}

/// The parser's verdict on `bytes`: the software decoder's, but for IPv4
/// headers with options, which the card drops (`IpOptions`) where the
/// decoder parses past them (the parser's one deliberate difference).
pub fn expected_verdict(bytes: &[u8]) -> RxVerdict {
    let ip = eth::HEADER_LEN;
    if bytes.len() >= HOMA_OFFSET
        && layout::get(bytes, eth::ETHERTYPE) == eth::ETHERTYPE_IPV4 as u64
        && bytes[ip] >> 4 == 4
        && bytes[ip] & 0xf > 5
    {
        return RxVerdict::IpOptions;
    }
    match Frame::decode(bytes) {
        Ok(_) => RxVerdict::Accept,
        Err(e) => RxVerdict::of_decode_error(&e),
    }
}

impl Fabric for FuzzFabric {
    fn sent(&mut self, card: usize, cycle: u64, bytes: Vec<u8>) {
        self.cable.send(card, cycle, bytes);
    }

    fn arrivals(&mut self, now: u64, out: &mut Vec<(usize, Vec<u8>)>) {
        for frame in self.cable.arrived(1, now) {
            self.to_card0(&frame, true);
            self.last_to_card0 = now;
            out.push((0, frame));
        }
        for frame in self.cable.arrived(0, now) {
            out.push((1, frame));
        }
        if now >= self.next_fuzz_at {
            if let Some(frame) = self.fuzz.pop_front() {
                // Half the port's 64 bytes a cycle (module notes).
                self.next_fuzz_at = now + (frame.len() as u64).div_ceil(32) + 2;
                self.to_card0(&frame, false);
                self.last_to_card0 = now;
                out.push((0, frame));
            }
        }
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

/// A real RPC in flight.
struct Outstanding {
    payload: Vec<u8>,
    /// Fuzz frames forged at it.
    forged_at: Vec<u64>,
    /// One of them may end it (an RPC_UNKNOWN or an ACK naming it).
    may_end: bool,
}

/// The run's state.
struct Harness {
    cfg: FuzzConfig,
    net: SimNetwork,
    server: Host,
    client: Host,
    gen: Generator,
    rng: ChaCha8Rng,
    next_id: u64,
    outstanding: BTreeMap<u64, Outstanding>,
    /// Requests the server has answered (client ids).
    served: std::collections::HashSet<u64>,
    /// Per (endpoint, bpage): the server card's `INBOUND_EXPIRED` when the
    /// host last zeroed it (never: 0, as all memory starts zeroed).
    zeroed_at: HashMap<(usize, u32), u32>,
    report: FuzzReport,
    /// Fuzz frames made so far, and the first since the last good checkpoint.
    made: u64,
    since: u64,
    /// DMA read faults seen at the last check.
    read_faults: u64,
    /// Whether the client may start new RPCs.
    client_open: bool,
}

/// Runs the fuzzer; `progress(frames_done)` is called now and then.
pub fn run(cfg: &FuzzConfig, progress: &mut dyn FnMut(u64)) -> FuzzReport {
    let wall = Instant::now();
    let mut h = Harness::new(cfg.clone());
    let outcome = catch_unwind(AssertUnwindSafe(|| h.run(progress)));
    if let Err(panic) = outcome {
        let msg = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "a panic".into());
        let f = h.finding("simulation panicked", msg);
        h.report.findings.push(f);
    }
    let mut report = h.report;
    report.frames = h.made;
    report.seed = cfg.seed;
    report.cycles = h.net.cycle();
    report.wall_seconds = wall.elapsed().as_secs_f64();
    report.frames_per_second = report.frames as f64 / report.wall_seconds.max(1e-9);
    report
}

impl Harness {
    fn new(cfg: FuzzConfig) -> Harness {
        let mut net =
            SimNetwork::on_fabric("fuzz", 2, Default::default(), Box::new(FuzzFabric::new()));
        for i in 0..2 {
            let mut card = net.card(i).lock().unwrap_or_else(|e| e.into_inner());
            card.keep_dma_faults();
            card.csr_write(timer::BASE + timer::TIMEOUT_TICKS, TIMEOUT_TICKS);
        }
        let server = Host::new(
            &mut net,
            0,
            SERVER_MAC,
            u32::from(SERVER_IP),
            &[(LIVE_PORT, LIVE_BPAGES), (SPARE_PORT, SPARE_BPAGES)],
        );
        let client = Host::new(
            &mut net,
            1,
            CLIENT_MAC,
            u32::from(CLIENT_IP),
            &[(CLIENT_PORT, CLIENT_BPAGES)],
        );
        let addr = Addresses {
            card_mac: SERVER_MAC,
            card_ip: SERVER_IP,
            client_mac: CLIENT_MAC,
            client_ip: CLIENT_IP,
            client_port: CLIENT_PORT,
            live_port: LIVE_PORT,
            spare_port: SPARE_PORT,
        };
        // Half of each endpoint's bpages for forged RPCs left open; the
        // real ones need a few.
        let budget = Budget {
            open_rpcs: cfg.open_rpc_budget,
            live_bpages: LIVE_BPAGES / 2,
            spare_bpages: SPARE_BPAGES - 16,
        };
        Harness {
            gen: Generator::new(cfg.seed, addr, budget),
            rng: ChaCha8Rng::seed_from_u64(cfg.seed ^ 0x5eed_0f_4ea1),
            cfg,
            net,
            server,
            client,
            next_id: 2,
            outstanding: BTreeMap::new(),
            served: Default::default(),
            zeroed_at: Default::default(),
            report: FuzzReport::default(),
            made: 0,
            since: 0,
            read_faults: 0,
            client_open: true,
        }
    }

    fn fabric(&mut self) -> &mut FuzzFabric {
        self.net
            .fabric_mut()
            .expect("the fuzzer's network has a fabric")
            .as_any_mut()
            .downcast_mut::<FuzzFabric>()
            .expect("the fuzzer's fabric")
    }

    fn finding(&self, check: &str, detail: String) -> Finding {
        Finding {
            check: check.to_string(),
            seed: self.cfg.seed,
            first_frame: self.since,
            last_frame: self.made.saturating_sub(1),
            cycle: self.net.cycle(),
            detail,
        }
    }

    fn run(&mut self, progress: &mut dyn FnMut(u64)) {
        let mut next_check = self.cfg.check_every.max(1);
        while self.made < self.cfg.frames {
            if self.fabric().fuzz.is_empty() {
                let live = self.live();
                let index = self.made;
                let f: Fuzzed = self.gen.frame(index, &live);
                *self
                    .report
                    .by_class
                    .entry(f.class.name().to_string())
                    .or_default() += 1;
                if let Some(id) = f.target {
                    if let Some(o) = self.outstanding.get_mut(&id) {
                        o.forged_at.push(index);
                        // An RPC_UNKNOWN or ACK naming it makes the server
                        // let its response go (HomaModule's rule).
                        o.may_end |= matches!(
                            Frame::decode(&f.bytes).map(|fr| fr.homa.body),
                            Ok(Body::RpcUnknown | Body::Ack(_))
                        );
                    }
                }
                self.fabric().fuzz.push_back(f.bytes);
                self.made += 1;
                if self.made.is_multiple_of(256) {
                    progress(self.made);
                }
            }
            self.tick();
            if self.made >= next_check && self.fabric().fuzz.is_empty() {
                if !self.checkpoint() {
                    return;
                }
                next_check = self.made + self.cfg.check_every.max(1);
            }
        }
        // The last frames in, then the final checkpoint.
        while !self.fabric().fuzz.is_empty() {
            self.tick();
        }
        self.checkpoint();
        progress(self.made);
        let engine = self.engine_counters();
        self.report.engine = ENGINE_COUNTERS
            .iter()
            .zip(engine)
            .map(|((name, _), v)| (name.to_string(), v))
            .chain(std::iter::once((
                "messages_delivered".to_string(),
                self.csr(rx_counters::BASE + rx_counters::MESSAGES_DELIVERED) as u64,
            )))
            .collect();
        self.report.inbound_expired =
            self.csr(rx_counters::BASE + rx_counters::INBOUND_EXPIRED) as u64;
        let verdicts = self.fabric().verdicts;
        self.report.verdicts = RxVerdict::ALL
            .iter()
            .zip(verdicts)
            .map(|(v, n)| (format!("{v:?}"), n))
            .collect();
    }

    /// The live RPCs as the generator sees them.
    fn live(&mut self) -> Vec<LiveRpc> {
        let ids: Vec<u64> = self.outstanding.keys().copied().collect();
        let fabric = self.fabric();
        ids.into_iter()
            .filter_map(|id| {
                let t = fabric.requests.get(&id)?;
                let mut ranges = t.queued.clone();
                ranges.sort_unstable();
                let mut covered = 0u32;
                for &(s, e) in &ranges {
                    if s <= covered {
                        covered = covered.max(e);
                    }
                }
                Some(LiveRpc {
                    client_id: id,
                    length: t.length,
                    queued: ranges,
                    all_queued: covered >= t.length,
                })
            })
            .collect()
    }

    /// One cycle of the network, and the hosts' work.
    fn tick(&mut self) {
        self.net.step();
        // The hosts look every few cycles, as a polling host would.
        if self.net.cycle().is_multiple_of(8) {
            self.hosts();
        }
    }

    fn hosts(&mut self) {
        // Client: keep RPCs in flight.
        while self.client_open && self.outstanding.len() < self.cfg.concurrency {
            let id = self.next_id;
            self.next_id += 2;
            let len = self.rng.gen_range(1..=self.cfg.max_rpc_bytes);
            let payload: Vec<u8> = (0..len).map(|_| self.rng.gen()).collect();
            let buffer = TX_BUFFERS + (id / 2 % TX_SLOTS) * TX_SLOT_BYTES;
            self.client.write(&mut self.net, buffer, &payload);
            self.client.send(
                &mut self.net,
                &Send {
                    endpoint: 0,
                    opcode: tx_desc::opcode::SEND_REQUEST,
                    rpc_id: id,
                    buffer,
                    length: len,
                    peer_ip: u32::from(SERVER_IP),
                    peer_port: LIVE_PORT,
                    peer_mac: SERVER_MAC,
                    cookie: id,
                },
            );
            self.outstanding.insert(
                id,
                Outstanding {
                    payload,
                    forged_at: Vec::new(),
                    may_end: false,
                },
            );
        }
        for c in self.client.poll(&mut self.net, 0) {
            let failed = host_abi::get(&c, completion::STATUS) != completion::status::OK as u64;
            let kind = host_abi::get(&c, completion::KIND) as u8;
            if kind != completion::kind::RESPONSE_RECEIVED
                && !(kind == completion::kind::TX_DONE && failed)
            {
                continue;
            }
            // A request the card gave up on (its server silent: TX_DONE,
            // TIMEOUT; the cookie is the RPC id), or a response it gave up
            // on part way.
            let id = if kind == completion::kind::TX_DONE {
                host_abi::get(&c, completion::COOKIE)
            } else {
                host_abi::get(&c, completion::RPC_ID)
            };
            if failed {
                // The card gave up on it (no message comes with it). Fuzz
                // frames forged at it may have ended it (module notes);
                // otherwise it is a finding.
                match self.outstanding.remove(&id) {
                    Some(o) if o.may_end => {
                        self.report.rpcs_ended_by_forgeries += 1;
                        self.fabric().requests.remove(&id);
                    }
                    _ => {
                        let f = self.finding(
                            "real RPC failed",
                            format!(
                                "RPC {id} failed (status {}) with no RPC_UNKNOWN or ACK forged at it",
                                host_abi::get(&c, completion::STATUS)
                            ),
                        );
                        self.report.findings.push(f);
                    }
                }
                continue;
            }
            let bytes = self.client.received(&self.net, 0, &c);
            self.client.give_back(&mut self.net, 0, &c);
            match self.outstanding.remove(&id) {
                Some(o) if o.payload == bytes => {
                    self.report.rpcs_completed += 1;
                    self.fabric().requests.remove(&id);
                }
                Some(o) => {
                    let first = o.payload.iter().zip(&bytes).position(|(a, b)| a != b);
                    let f = self.finding(
                        "live RPC changed",
                        format!(
                            "the echo of RPC {id} ({} bytes) differs from its request (first at byte {:?}, lengths {} and {}); fuzz frames forged at it: {:?}",
                            o.payload.len(),
                            first,
                            o.payload.len(),
                            bytes.len(),
                            o.forged_at
                        ),
                    );
                    self.report.findings.push(f);
                }
                None => {
                    let f = self.finding(
                        "stray response",
                        format!(
                            "the client got a response to RPC {id}, which it has not in flight"
                        ),
                    );
                    self.report.findings.push(f);
                }
            }
        }
        // Server: echo the real requests; count the forged ones delivered.
        for e in 0..2 {
            for c in self.server.poll(&mut self.net, e) {
                let kind = host_abi::get(&c, completion::KIND) as u8;
                if kind == completion::kind::TX_DONE {
                    continue;
                }
                if host_abi::get(&c, completion::STATUS) != completion::status::OK as u64 {
                    // A forged response that stalled part way and expired
                    // (TIMEOUT): no message, no bpages (the card took them
                    // back itself).
                    self.report.forged_messages_expired += 1;
                    continue;
                }
                let bytes = self.server.received(&self.net, e, &c);
                // Nothing is written past a message in its bpage (each
                // bpage is zeroed before it goes back), unless the card may
                // have recycled it from an expired message since.
                let expired = self.csr(rx_counters::BASE + rx_counters::INBOUND_EXPIRED);
                let pages = PlainHost::bpages(&c);
                let last = *pages.last().expect("a message has a bpage");
                let clean = self.zeroed_at.get(&(e, last)).copied().unwrap_or(0) == expired;
                if !clean {
                    self.report.past_end_unchecked += 1;
                } else if let Some(at) = self.server.written_past_end(&self.net, e, &c) {
                    let f = self.finding(
                        "DMA outside the message",
                        format!(
                            "a message of {} bytes delivered to endpoint {e} has bytes written past its end in its last bpage, from byte {at}",
                            bytes.len()
                        ),
                    );
                    self.report.findings.push(f);
                }
                self.server.zero(&mut self.net, e, &c);
                for page in pages {
                    self.zeroed_at.insert((e, page), expired);
                }
                self.server.give_back(&mut self.net, e, &c);
                let id = host_abi::get(&c, completion::RPC_ID);
                let real = e == 0
                    && kind == completion::kind::REQUEST_RECEIVED
                    && host_abi::get(&c, completion::PEER_IP) as u32 == u32::from(CLIENT_IP)
                    && host_abi::get(&c, completion::PEER_PORT) as u16 == CLIENT_PORT
                    && self.outstanding.contains_key(&(id ^ 1));
                if !real {
                    self.report.forged_messages_delivered += 1;
                    continue;
                }
                if !self.served.insert(id ^ 1) {
                    // Delivered again: fine only if fuzz frames ended the RPC
                    // at the server (an RPC_UNKNOWN or ACK naming it), so
                    // that the client's restart is a new RPC there; it is
                    // answered again, as an application would.
                    if !self.outstanding[&(id ^ 1)].may_end {
                        let f = self.finding(
                            "request ran twice",
                            format!(
                                "real request {} delivered twice with no RPC_UNKNOWN or ACK forged at it",
                                id ^ 1
                            ),
                        );
                        self.report.findings.push(f);
                    }
                    self.report.requests_rerun_after_forgeries += 1;
                }
                let buffer = TX_BUFFERS + ((id ^ 1) / 2 % TX_SLOTS) * TX_SLOT_BYTES;
                self.server.write(&mut self.net, buffer, &bytes);
                self.server.send(
                    &mut self.net,
                    &Send {
                        endpoint: 0,
                        opcode: tx_desc::opcode::SEND_RESPONSE,
                        rpc_id: id,
                        buffer,
                        length: bytes.len() as u32,
                        peer_ip: u32::from(CLIENT_IP),
                        peer_port: CLIENT_PORT,
                        peer_mac: CLIENT_MAC,
                        cookie: id,
                    },
                );
            }
        }
    }

    /// A counter of card 0 as it is now (`Card::csr_peek`: a few cycles, not
    /// a host's 0.8 us BAR read, so a reading of every counter is nearly a
    /// snapshot while the timers keep the cards talking).
    fn csr(&mut self, addr: u32) -> u32 {
        self.net.access(0, |c| c.csr_peek(addr))
    }

    fn engine_counters(&mut self) -> Vec<u64> {
        ENGINE_COUNTERS
            .iter()
            .map(|&(_, off)| self.csr(rx_counters::BASE + off) as u64)
            .collect()
    }

    fn verdict_counters(&mut self) -> Vec<u64> {
        (0..RxVerdict::ALL.len())
            .map(|v| self.csr(rx_counters::BASE + rx_counters::FIRST_COUNTER + 4 * v as u32) as u64)
            .collect()
    }

    /// The checkpoint (module notes); false if a finding ends the run.
    fn checkpoint(&mut self) -> bool {
        self.report.checkpoints += 1;
        // The real RPCs in flight must complete.
        self.client_open = false;
        let start = self.net.cycle();
        while !self.outstanding.is_empty() && self.report.findings.is_empty() {
            if self.net.cycle() - start > STALL_CYCLES {
                let ids: Vec<_> = self
                    .outstanding
                    .iter()
                    .map(|(id, o)| {
                        format!(
                            "{id} ({} bytes, forged at by {:?})",
                            o.payload.len(),
                            o.forged_at
                        )
                    })
                    .collect();
                // What each card is doing about it (recovery counters).
                let mut state = Vec::new();
                for (card, name) in [(0, "server"), (1, "client")] {
                    let read: Vec<String> = RECOVERY_COUNTERS
                        .iter()
                        .map(|&(what, at)| {
                            let v = self
                                .net
                                .access(card, |c| c.csr_peek(rx_counters::BASE + at));
                            format!("{what} {v}")
                        })
                        .collect();
                    state.push(format!("{name}: {}", read.join(", ")));
                }
                let f = self.finding(
                    "real RPC stalled",
                    format!(
                        "no response in {STALL_CYCLES} cycles to RPCs {}; {}",
                        ids.join(", "),
                        state.join("; ")
                    ),
                );
                self.report.findings.push(f);
                break;
            }
            self.tick();
        }
        self.client_open = true;
        if !self.report.findings.is_empty() {
            return false;
        }
        // The card goes quiet with every frame accounted for: judged on two
        // readings in a row that agree (the registers are read one by one
        // while frames may still move through the pipeline).
        let start = self.net.cycle();
        let verdict_names: Vec<String> = RxVerdict::ALL.iter().map(|v| format!("{v:?}")).collect();
        let mut last: Option<(Vec<u64>, Vec<u64>)> = None;
        loop {
            let rx_idle = self
                .net
                .card(0)
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .rx_idle();
            let verdicts = self.verdict_counters();
            let engine = self.engine_counters();
            let expected = self.fabric().verdicts;
            let accepted = verdicts[RxVerdict::Accept as usize];
            let engine_sum: u64 = engine.iter().sum();
            let verdicts_match = verdicts.iter().zip(&expected).all(|(a, b)| a == b);
            let quiet = self.net.cycle() - self.fabric().last_to_card0 > QUIET_CYCLES;
            let stable =
                rx_idle && quiet && last.as_ref() == Some(&(verdicts.clone(), engine.clone()));
            if stable && verdicts_match && engine_sum == accepted {
                break;
            }
            if stable || self.net.cycle() - start > DRAIN_CYCLES {
                let diff: Vec<String> = verdicts
                    .iter()
                    .zip(&expected)
                    .zip(&verdict_names)
                    .filter(|((a, b), _)| a != b)
                    .map(|((a, b), n)| format!("{n}: card {a}, decoder {b}"))
                    .collect();
                let named: Vec<String> = ENGINE_COUNTERS
                    .iter()
                    .zip(&engine)
                    .map(|((n, _), v)| format!("{n} {v}"))
                    .collect();
                let check = if !stable {
                    "RX hang"
                } else if !verdicts_match {
                    "RX parser verdicts"
                } else {
                    "RX counters do not add up"
                };
                let f = self.finding(
                    check,
                    format!(
                        "after {} cycles: RX port idle {rx_idle}, counters steady {stable}; verdicts differing: [{}]; accepted {accepted}, RX engine accounts for {engine_sum} ({})",
                        self.net.cycle() - start,
                        diff.join(", "),
                        named.join(", ")
                    ),
                );
                self.report.findings.push(f);
                return false;
            }
            last = Some((verdicts, engine));
            for _ in 0..DRAIN_POLL_CYCLES {
                self.tick();
            }
        }
        // No DMA outside what the hosts mapped.
        let mut faults = Vec::new();
        let mut read_faults = 0;
        for i in 0..2 {
            let mut card = self.net.card(i).lock().unwrap_or_else(|e| e.into_inner());
            faults.extend(card.take_dma_faults().into_iter().map(|f| (i, f)));
            read_faults += card.stats().dma_read_faults;
        }
        if let Some((card, fault)) = faults.first() {
            let f = self.finding(
                "DMA outside the host's buffers",
                format!(
                    "card {card}: {fault} ({} refused writes in all)",
                    faults.len()
                ),
            );
            self.report.findings.push(f);
            return false;
        }
        if read_faults != self.read_faults {
            let f = self.finding(
                "DMA outside the host's buffers",
                format!(
                    "{} DMA reads refused by the IOMMU",
                    read_faults - self.read_faults
                ),
            );
            self.report.findings.push(f);
            return false;
        }
        self.since = self.made;
        true
    }
}

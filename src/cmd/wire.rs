//! What `homa-nic server` and `homa-nic rpc` share: one simulated card whose
//! Ethernet port is a UDP socket pair (`--wire udp:...`), its addresses, the
//! peers' MACs given by hand (`--neighbor`), an optional capture, and the
//! loop step that lets an idle card sleep.
//!
//! `--wire udp:LHOST:LPORT:RHOST:RPORT`: the card listens on LHOST:LPORT and
//! sends to RHOST:RPORT, one Ethernet frame (no FCS) per datagram, the format
//! of QEMU's `-netdev dgram` (see docs/udp-wire.md). Hosts are IPv4 addresses.

use std::cell::Cell;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Args;
use homa_host::{Nic, SimNetwork};
use homa_hw::regmap::timer;
use homa_hw_sim::udp_wire::UdpWire;
use homa_wire::MacAddr;

/// Cycles without a frame in or out after which the card counts as idle
/// (80 us simulated; a busy card sends or receives every few hundred).
pub const IDLE_CYCLES: u64 = 20_000;
/// Wall time an idle card's process sleeps, waiting for a datagram, between
/// steps. A datagram ends the sleep at once, so it costs no latency; while
/// nothing arrives, the card runs a few cycles per sleep instead of tens of
/// thousands per second (its timers, which count cycles, slow down alike).
pub const IDLE_WAIT: Duration = Duration::from_millis(20);
/// A finishing card has sent what it owed once no frame has moved for this
/// many cycles (4 us; an owed ACK leaves within about 50).
const DRAIN_QUIET_CYCLES: u64 = 1_000;
/// ... or after this many (400 us), whatever still moves.
const DRAIN_MAX_CYCLES: u64 = 100_000;
/// Cycles a card runs at most after a wall-time tick before it may sleep
/// again, waiting for its resend timer's sweep over every RPC slot to end
/// (1,024 cycles and 16 more per busy group of 16 slots,
/// `homa_hw::rx::resend_timer`: 17,408 with every slot live).
pub const SWEEP_CYCLES: u64 = 20_000;

/// A card's port on a UDP wire: `udp:LHOST:LPORT:RHOST:RPORT`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wire {
    pub local: SocketAddr,
    pub remote: SocketAddr,
}

impl std::str::FromStr for Wire {
    type Err = String;
    fn from_str(s: &str) -> Result<Wire, String> {
        let usage =
            "the form is udp:LHOST:LPORT:RHOST:RPORT, e.g. udp:127.0.0.1:5000:127.0.0.1:5001 \
                     (listen on LHOST:LPORT, send to RHOST:RPORT; IPv4 hosts)";
        let rest = s
            .strip_prefix("udp:")
            .ok_or_else(|| format!("wire {s:?}: only UDP wires exist; {usage}"))?;
        let parts: Vec<&str> = rest.split(':').collect();
        if parts.len() != 4 {
            return Err(format!("wire {s:?}: {usage}"));
        }
        let addr = |host: &str, port: &str, what: &str| -> Result<SocketAddr, String> {
            let ip: Ipv4Addr = host
                .parse()
                .map_err(|_| format!("wire {s:?}: {what} host {host:?} is not an IPv4 address"))?;
            let port: u16 = port
                .parse()
                .map_err(|_| format!("wire {s:?}: {what} port {port:?} is not 0 to 65535"))?;
            Ok(SocketAddr::V4(SocketAddrV4::new(ip, port)))
        };
        let local = addr(parts[0], parts[1], "local")?;
        let remote = addr(parts[2], parts[3], "remote")?;
        if remote.port() == 0 {
            return Err(format!("wire {s:?}: the remote port must not be 0"));
        }
        Ok(Wire { local, remote })
    }
}

/// A peer's MAC given by hand: `IP=MAC`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Neighbor {
    pub ip: Ipv4Addr,
    pub mac: MacAddr,
}

impl std::str::FromStr for Neighbor {
    type Err = String;
    fn from_str(s: &str) -> Result<Neighbor, String> {
        let (ip, mac) = s.split_once('=').ok_or_else(|| {
            format!("neighbor {s:?}: the form is IP=MAC, e.g. 10.0.0.1=52:54:00:12:34:56")
        })?;
        Ok(Neighbor {
            ip: ip
                .parse()
                .map_err(|_| format!("neighbor {s:?}: {ip:?} is not an IPv4 address"))?,
            mac: mac.parse()?,
        })
    }
}

/// The card and its wire, as both commands take them.
#[derive(Args, Debug)]
pub struct WireArgs {
    /// The card's Ethernet port: udp:LHOST:LPORT:RHOST:RPORT (listen on LHOST:LPORT, send to RHOST:RPORT; one frame per datagram, as QEMU's -netdev dgram).
    #[arg(long)]
    pub wire: Wire,
    /// The card's MAC address, e.g. 02:00:00:00:00:02.
    #[arg(long)]
    pub mac: MacAddr,
    /// The card's IPv4 address (it answers ARP for it).
    #[arg(long)]
    pub ip: Ipv4Addr,
    /// A peer's MAC, IP=MAC (repeatable): the card does not resolve peers by ARP yet.
    #[arg(long = "neighbor", value_name = "IP=MAC")]
    pub neighbors: Vec<Neighbor>,
    /// Capture every frame sent and received into this pcap file (timestamps: card cycle x 4 ns).
    #[arg(long)]
    pub pcap: Option<PathBuf>,
    /// Drop this fraction (0.0-1.0) of the frames received, before the card sees them (a lossy link: the card's RESENDs and timers recover, as over a lossy cable).
    #[arg(long, default_value_t = 0.0)]
    pub loss: f64,
    /// Seed of the --loss draws.
    #[arg(long, default_value_t = 1)]
    pub loss_seed: u64,
    /// The card's timer tick in its own (simulated) nanoseconds, if not the
    /// default (10 us): RESENDs come after 5 ticks of silence and the card
    /// gives up after 200. A simulated card runs some hundred times slower
    /// than a real one, so against a slow peer (a TCG guest answers in
    /// tens of milliseconds of wall time) a longer tick keeps the card from
    /// giving up on RPCs the peer is still working on.
    #[arg(long)]
    pub tick_ns: Option<u32>,
    /// Drive the card's timer ticks from wall time instead, one every this
    /// many microseconds (the card's prescaler stopped: TICK_NS 0), so its
    /// timeouts hold in wall time against a real-time peer (RESENDs after 5
    /// ticks of silence, giving up after 200). A tick waits while frames
    /// read from the wire are still queued for the card: silence is the
    /// peer's, not the simulation's backlog. The kernel-Homa VM test uses 20,000.
    #[arg(long, value_name = "US", conflicts_with = "tick_ns")]
    pub wall_tick_us: Option<u64>,
}

/// Ticks of a card's timers taken from wall time (`--wall-tick-us`).
struct WallTicks {
    period: Duration,
    next: Cell<Instant>,
    /// After a tick: the timer block's SWEEPS count then, and the cycle
    /// the card may sleep again at the latest; it runs, not sleeping, until
    /// the count moves (the tick's sweep is over) or that cycle.
    sweep: Cell<Option<(u32, u64)>>,
}

/// One simulated card on its UDP wire, opened through the host library.
pub struct Card {
    pub network: Arc<Mutex<SimNetwork>>,
    pub nic: Nic,
    wall_ticks: Option<WallTicks>,
}

impl WireArgs {
    /// Binds the wire, builds the card on it and opens it with the addresses given.
    pub fn open(&self, name: &str) -> anyhow::Result<Card> {
        if !(0.0..=1.0).contains(&self.loss) {
            anyhow::bail!("--loss {}: a fraction of frames, 0.0 to 1.0", self.loss);
        }
        let mut wire = UdpWire::bind(self.wire.local, self.wire.remote)?;
        wire.set_receive_loss(self.loss, self.loss_seed);
        let mut network = SimNetwork::on_udp_wire(name, wire, Default::default());
        if let Some(path) = &self.pcap {
            network
                .capture_to(path)
                .with_context(|| format!("capturing to {}", path.display()))?;
        }
        let network = Arc::new(Mutex::new(network));
        let nic = Nic::open_sim(&network, 0)?;
        nic.set_address(self.mac.0, self.ip)?;
        let tick_ns = match (self.tick_ns, self.wall_tick_us) {
            (_, Some(0)) => anyhow::bail!("--wall-tick-us 0: give a period of at least 1 us"),
            (_, Some(_)) => Some(0),
            (ns, None) => ns,
        };
        if let Some(ns) = tick_ns {
            nic.device()
                .backend()
                .csr_write(timer::BASE + timer::TICK_NS, ns)?;
        }
        let wall_ticks = self.wall_tick_us.map(|us| {
            let period = Duration::from_micros(us);
            WallTicks {
                period,
                next: Cell::new(Instant::now() + period),
                sweep: Cell::new(None),
            }
        });
        Ok(Card {
            network,
            nic,
            wall_ticks,
        })
    }

    /// The MAC of `ip`, from `--neighbor`.
    pub fn neighbor_mac(&self, ip: Ipv4Addr) -> anyhow::Result<[u8; 6]> {
        self.neighbors
            .iter()
            .find(|n| n.ip == ip)
            .map(|n| n.mac.0)
            .with_context(|| {
                format!(
                    "no MAC address for {ip}: give --neighbor {ip}=MAC \
                     (the card answers ARP but does not resolve its peers by ARP yet)"
                )
            })
    }
}

impl Card {
    pub fn network(&self) -> MutexGuard<'_, SimNetwork> {
        self.network.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Cycles the card has run.
    pub fn cycle(&self) -> u64 {
        self.nic.cycle().expect("a simulated card counts cycles")
    }

    /// Lets the card run a few cycles; when it has been idle for
    /// `IDLE_CYCLES`, first sleeps until a datagram arrives, `IDLE_WAIT`
    /// passes or a wall-time tick is due. A due tick is given to the card
    /// once nothing read from the wire waits for the card (on the simulated
    /// link or in its RX queue; a datagram still in the socket does not
    /// hold it back, or a peer that never pauses would stop the card's
    /// timers); missed ticks are not made up (the card remembers one tick
    /// during a sweep anyway).
    pub fn wait(&self) {
        {
            let mut network = self.network();
            let cycle = network.cycle();
            let mut sweeping = false;
            if let Some(ticks) = &self.wall_ticks {
                let sweeps = |network: &mut SimNetwork| {
                    network.access(0, |c| c.csr_read(timer::BASE + timer::SWEEPS))
                };
                if let Some((before, until)) = ticks.sweep.get() {
                    sweeping = cycle < until && sweeps(&mut network) == before;
                    if !sweeping {
                        ticks.sweep.set(None);
                    }
                }
                if !sweeping && Instant::now() >= ticks.next.get() && network.inbound_idle() {
                    let before = sweeps(&mut network);
                    network.access(0, |c| c.timer_tick());
                    ticks.next.set(Instant::now() + ticks.period);
                    ticks.sweep.set(Some((before, cycle + SWEEP_CYCLES)));
                    sweeping = true;
                }
            }
            if !sweeping && cycle - network.last_frame_cycle() > IDLE_CYCLES {
                let wait = self.wall_ticks.as_ref().map_or(IDLE_WAIT, |t| {
                    t.next
                        .get()
                        .saturating_duration_since(Instant::now())
                        .min(IDLE_WAIT)
                });
                network.wait_for_wire(wait);
            }
        }
        self.nic.wait();
    }

    /// The card's RX counters that are not zero, by parser verdict: how
    /// many frames were accepted, and why the others (ARP, IPv6, ...) were not.
    pub fn rx_verdicts(&self) -> anyhow::Result<serde_json::Map<String, serde_json::Value>> {
        let counters = self.nic.device().rx_counters()?;
        Ok(counters
            .read_all()?
            .into_iter()
            .filter(|&(_, n)| n > 0)
            .map(|(verdict, n)| (format!("{verdict:?}"), n.into()))
            .collect())
    }

    /// The RX path's own counters that are not zero (FIFO overflows, RX
    /// engine drops by reason, duplicates, control packets served): where
    /// frames the parser accepted went. Read from the card's registers.
    pub fn rx_path_counters(&self) -> serde_json::Map<String, serde_json::Value> {
        use homa_hw::regmap::rx_counters as rc;
        let names: [(&str, u32); 17] = [
            ("fifo_overflows", rc::FIFO_OVERFLOWS),
            ("messages_delivered", rc::MESSAGES_DELIVERED),
            ("other_control", rc::OTHER_CONTROL),
            ("drop_no_endpoint", rc::DROP_NO_ENDPOINT),
            ("drop_rpc_full", rc::DROP_RPC_FULL),
            ("drop_no_bpage", rc::DROP_NO_BPAGE),
            ("drop_too_big", rc::DROP_TOO_BIG),
            ("arp_replies", rc::ARP_REPLIES),
            ("duplicates", rc::DUPLICATES),
            ("drop_bad_range", rc::DROP_BAD_RANGE),
            ("grants_received", rc::GRANTS_RECEIVED),
            ("cutoffs_received", rc::CUTOFFS_RECEIVED),
            ("grants_unknown", rc::GRANTS_UNKNOWN),
            ("sender_events_dropped", rc::SENDER_EVENTS_DROPPED),
            ("need_acks_received", rc::NEED_ACKS_RECEIVED),
            ("acks_sent", rc::ACKS_SENT),
            ("acks_dropped", rc::ACKS_DROPPED),
        ];
        let mut network = self.network();
        names
            .iter()
            .map(|&(name, offset)| (name, network.access(0, |c| c.csr_read(rc::BASE + offset))))
            .filter(|&(_, n)| n > 0)
            .map(|(name, n)| (name.to_string(), n.into()))
            .collect()
    }

    /// Lets the card send what it still owes (the ACK of the last response
    /// it received leaves tens of cycles after that response's completion:
    /// a client that exits at the completion would leave the server
    /// holding the response until its NEED_ACKs time out): runs it until no
    /// frame has moved for `DRAIN_QUIET_CYCLES`, at most `DRAIN_MAX_CYCLES`.
    /// Then stops the capture, flushing it.
    pub fn finish(&self) -> anyhow::Result<()> {
        let start = self.cycle();
        while self.cycle() - start < DRAIN_MAX_CYCLES {
            let quiet = {
                let network = self.network();
                network.cycle() - network.last_frame_cycle() > DRAIN_QUIET_CYCLES
            };
            if quiet {
                break;
            }
            self.nic.wait();
        }
        self.network()
            .finish_capture()
            .context("writing the capture")
    }
}

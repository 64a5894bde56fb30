//! A simulated network of cards that share one clock: every card advances
//! the same cycles, frames travel between them over cables (two cards) or a
//! tiny learning switch (three or more), and every transmitted frame may be
//! captured to a pcap file.
//!
//! DESIGN NOTES
//! ------------
//! - One clock: [`SimNetwork::step`] delivers the frames that have arrived,
//!   steps every card one cycle, and puts what they transmitted on the wire.
//!   All cards stay at the same cycle count between calls.
//! - BAR accesses: a CSR read or write takes cycles of the card it goes to
//!   (`Card::csr_read` steps that card until the core answers). The host
//!   driver makes them through [`SimNetwork::access`], which runs the access
//!   on its card alone and then brings every other card to the same cycle, so
//!   the network never drifts apart. Frames arriving at the accessed card
//!   during its few solo cycles wait for the next network step (a few cycles
//!   of extra latency, only while the host is touching registers).
//! - Cards are shared (`Arc<Mutex<Card>>`) with whoever else needs them (the
//!   driver's DMA buffers live in a card's host memory). Lock order: the
//!   network, then a card; never the other way round.
//! - Two cards: one [`Cable`] between them. More: each card has a cable to a
//!   store-and-forward switch port; the switch learns source MACs and floods
//!   frames for unknown destinations (there is no ARP yet: hosts learn their
//!   peers' MACs out of band). It learns a source MAC when the frame comes
//!   in (not when the card sends it), which is also what lets threaded runs
//!   know every forwarding decision of an epoch in advance. Priority queues
//!   belong to the testbench's network model, not here; faults (loss,
//!   duplication, reordering, corruption, link down) are the cables'
//!   (`cable`), set for all of them or per switch port.
//! - Capture: frames are written as they leave a card, once each, stamped
//!   with the cycle their last beat left times 4 ns (250 MHz).
//! - A real wire ([`SimNetwork::on_udp_wire`]): one card whose port is a
//!   [`UdpWire`] (one frame per datagram, QEMU's `-netdev dgram`) instead of
//!   a cable. Every `UDP_POLL_CYCLES` cycles the socket is drained; the
//!   frames then reach the card's RX port no faster than a
//!   `DEFAULT_LINK_GBPS` link carries them (each after its serialization
//!   time, back to back), as a real MAC would hand them over: a Linux peer
//!   sends a grant's worth of DATA in one burst, and handing the burst over
//!   at once (one beat per cycle, 128 Gb/s) overflowed the card's RX FIFO,
//!   which a 100 Gb/s link cannot do. What the card transmits is sent at once. The far end
//!   runs on its own clock (another process, a VM, a Linux host), so there
//!   is no cable delay to model: the wire's latency is whatever loopback or
//!   the kernel gives. Frames received from the wire are captured too,
//!   stamped with the cycle they were handed to the card. Frames that are
//!   not Homa are the card's business (its parser counts them, its ARP
//!   responder answers requests for its address).
//! - An external fabric ([`SimNetwork::on_fabric`]): the cards' ports are
//!   wired to a caller's [`Fabric`] (the testbench's switch with priority
//!   queues, for cluster runs). It is told every frame a card sends, with
//!   the cycle its last beat left, and asked each cycle, before the cards
//!   step, which frames have reached which card. Being asked every cycle
//!   (BAR accesses included, which step the network too) makes delivery
//!   exact however the host software drives the clock.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use homa_wire::pcap::{FrameWriter, PcapError};

use crate::cable::{Cable, CableFaults, FaultCounts, FRAMING_BYTES};
use crate::card::Card;
use crate::dma_link::LinkConfig;
use crate::udp_wire::{UdpWire, UdpWireStats};
use crate::CLOCK_PERIOD_PS;

/// Link rate of every cable, in Gb/s.
pub const DEFAULT_LINK_GBPS: u64 = 100;
/// Cycles of cable, PHY and switch latency per hop (1 us at 250 MHz).
pub const DEFAULT_LINK_DELAY_CYCLES: u64 = 250;
/// Runs shorter than this stay on one thread even when more are allowed:
/// starting the threads costs about as much as stepping the cards that long.
pub const MIN_THREADED_CYCLES: u64 = 64;
/// Cycles between polls of a UDP wire's socket (a system call each): 64 ns
/// of simulated latency at most, against a few us of wall time per poll.
pub const UDP_POLL_CYCLES: u64 = 16;

/// A frame leaving or reaching a card, for latency breakdowns
/// ([`SimNetwork::log_frames`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameEvent {
    /// The card that sent (or received) it.
    pub card: usize,
    /// Sent: the cycle its last beat left the card. Received: the cycle it
    /// was queued at the card's RX port (it has fully arrived).
    pub cycle: u64,
    /// Frame bytes (without FCS).
    pub bytes: usize,
    /// True for a frame reaching `card`, false for one leaving it.
    pub received: bool,
}

/// How the cards are connected.
enum Links {
    /// Two cards: lane 0 carries card 0 -> card 1, lane 1 the other way.
    Cable(Cable),
    /// A cable per card to a switch port: lane 0 card -> switch, lane 1
    /// switch -> card. `macs` maps a learned source MAC to its port.
    Switch {
        cables: Vec<Cable>,
        macs: HashMap<[u8; 6], usize>,
    },
    /// One card, its port a UDP socket pair.
    Udp(UdpWire),
    /// One card cabled to itself: lane 0 carries what it sends back to it.
    Loopback(Cable),
    /// Every card's port on a caller's fabric.
    External(Box<dyn Fabric>),
}

/// A network outside the simulator that the cards' ports are wired to
/// ([`SimNetwork::on_fabric`]).
pub trait Fabric: Send {
    /// Card `card` sent `bytes` (a frame without FCS); its last beat left
    /// the card in `cycle`.
    fn sent(&mut self, card: usize, cycle: u64, bytes: Vec<u8>);
    /// Frames that have fully reached their card by cycle `now`, as (card,
    /// frame), in the order each card is to take them. Called once for
    /// every cycle, in increasing order.
    fn arrivals(&mut self, now: u64, out: &mut Vec<(usize, Vec<u8>)>);
    /// The fabric as `Any`, so its owner can read it back (statistics).
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any;
}

/// Cards on a network, clocked together.
pub struct SimNetwork {
    cards: Vec<Arc<Mutex<Card>>>,
    links: Links,
    /// Every transmitted frame, when capturing.
    capture: Option<FrameWriter<CaptureFile>>,
    /// The first error writing the capture (reported by `finish_capture`).
    capture_error: Option<PcapError>,
    /// Frames put on the wire so far, by all cards.
    frames: u64,
    /// Every frame sent and received, when logging.
    log: Option<Vec<FrameEvent>>,
    /// The last cycle a frame left a card or came in from a UDP wire (the
    /// CLI sleeps when this is long past).
    last_frame_cycle: u64,
    /// Threads [`SimNetwork::run`] may step the cards on (1: this one).
    threads: usize,
    /// On a UDP wire: frames read from the socket, each with the cycle it
    /// has fully crossed the (modelled) link, and when the link is next free.
    udp_arrivals: std::collections::VecDeque<(u64, Vec<u8>)>,
    udp_link_free_at: u64,
}

impl SimNetwork {
    /// `count` fresh cards (named `<name>-<i>` for their waveforms, written
    /// only if the thread panics) on links of the default rate and delay,
    /// each with its DMA over `link` (`LinkConfig::default()`: the TLP link).
    pub fn new(name: &str, count: usize, link: LinkConfig) -> SimNetwork {
        Self::with_links(
            name,
            count,
            link,
            DEFAULT_LINK_GBPS,
            DEFAULT_LINK_DELAY_CYCLES,
        )
    }

    /// As [`SimNetwork::new`] with cards that keep no inputs for a waveform
    /// ([`Card::untraced`]): for long runs, whose waveform on failure would
    /// cover only their start.
    pub fn untraced(name: &str, count: usize, link: LinkConfig) -> SimNetwork {
        Self::build(
            name,
            count,
            link,
            DEFAULT_LINK_GBPS,
            DEFAULT_LINK_DELAY_CYCLES,
            false,
        )
    }

    /// As [`SimNetwork::new`], with every cable of `link_gbps` and `delay_cycles`.
    pub fn with_links(
        name: &str,
        count: usize,
        link: LinkConfig,
        link_gbps: u64,
        delay_cycles: u64,
    ) -> SimNetwork {
        Self::build(name, count, link, link_gbps, delay_cycles, true)
    }

    fn build(
        name: &str,
        count: usize,
        link: LinkConfig,
        link_gbps: u64,
        delay_cycles: u64,
        traced: bool,
    ) -> SimNetwork {
        assert!(count >= 1, "a network needs a card");
        let cards = (0..count)
            .map(|i| {
                let name = format!("{name}-{i}");
                let card = if traced {
                    Card::new(&name, link.clone())
                } else {
                    Card::untraced(&name, link.clone())
                };
                Arc::new(Mutex::new(card))
            })
            .collect();
        let links = if count <= 2 {
            Links::Cable(Cable::new(link_gbps, delay_cycles))
        } else {
            Links::Switch {
                cables: (0..count)
                    .map(|_| Cable::new(link_gbps, delay_cycles))
                    .collect(),
                macs: HashMap::new(),
            }
        };
        SimNetwork {
            cards,
            links,
            capture: None,
            capture_error: None,
            frames: 0,
            log: None,
            last_frame_cycle: 0,
            threads: 1,
            udp_arrivals: Default::default(),
            udp_link_free_at: 0,
        }
    }

    /// One card (without waveform, [`Card::untraced`]) named `name`, its
    /// Ethernet port on `wire` instead of a cable.
    pub fn on_udp_wire(name: &str, wire: UdpWire, link: LinkConfig) -> SimNetwork {
        SimNetwork {
            cards: vec![Arc::new(Mutex::new(Card::untraced(name, link)))],
            links: Links::Udp(wire),
            capture: None,
            capture_error: None,
            frames: 0,
            log: None,
            last_frame_cycle: 0,
            threads: 1,
            udp_arrivals: Default::default(),
            udp_link_free_at: 0,
        }
    }

    /// One card (without waveform) whose port is cabled to itself (default
    /// rate and delay): what it sends, it receives. One card can then be
    /// both client and server, and busy in both directions (benchmarks).
    pub fn loopback(name: &str, link: LinkConfig) -> SimNetwork {
        let mut network = Self::untraced(name, 1, link);
        network.links = Links::Loopback(Cable::new(DEFAULT_LINK_GBPS, DEFAULT_LINK_DELAY_CYCLES));
        network
    }

    /// `count` cards (without waveform) whose ports are wired to `fabric`.
    pub fn on_fabric(
        name: &str,
        count: usize,
        link: LinkConfig,
        fabric: Box<dyn Fabric>,
    ) -> SimNetwork {
        let mut network = Self::untraced(name, count, link);
        network.links = Links::External(fabric);
        network
    }

    /// The fabric of a network made by [`SimNetwork::on_fabric`].
    pub fn fabric_mut(&mut self) -> Option<&mut dyn Fabric> {
        match &mut self.links {
            Links::External(f) => Some(f.as_mut()),
            _ => None,
        }
    }

    /// Gives every cable `faults` (see `cable`: loss, reordering,
    /// duplication, corruption, link down), each cable its own draws, from
    /// `faults.seed` and its index. On the switch, cable `i` is card `i`'s
    /// link to its switch port, both directions.
    pub fn set_cable_faults(&mut self, faults: CableFaults) {
        let count = match &self.links {
            Links::Cable(_) | Links::Loopback(_) => 1,
            Links::Switch { cables, .. } => cables.len(),
            Links::Udp(_) | Links::External(_) => 0,
        };
        for i in 0..count {
            self.set_port_faults(i, faults);
        }
    }

    /// Gives the cable of switch port `port` (card `port`'s link; on two
    /// cards or a loopback, port 0 is the one cable) `faults`, its draws
    /// from `faults.seed` and `port`. Returns false if there is no such
    /// cable (a UDP wire, an external fabric, a port out of range).
    pub fn set_port_faults(&mut self, port: usize, faults: CableFaults) -> bool {
        let seeded = CableFaults {
            seed: faults
                .seed
                .wrapping_add((port as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)),
            ..faults
        };
        let cable = match &mut self.links {
            Links::Cable(c) | Links::Loopback(c) if port == 0 => c,
            Links::Switch { cables, .. } if port < cables.len() => &mut cables[port],
            _ => return false,
        };
        cable.set_faults(seeded);
        true
    }

    /// What the cables' faults did so far, summed over every cable.
    pub fn cable_fault_counts(&self) -> FaultCounts {
        let mut sum = FaultCounts::default();
        match &self.links {
            Links::Cable(c) | Links::Loopback(c) => sum += c.fault_counts(),
            Links::Switch { cables, .. } => {
                for c in cables {
                    sum += c.fault_counts();
                }
            }
            Links::Udp(_) | Links::External(_) => {}
        }
        sum
    }

    /// Puts `frame` on card `from`'s link at the current cycle, as if the
    /// card had sent it (captured and logged as such): for tests of the
    /// network and for traffic no card makes.
    pub fn send_from(&mut self, from: usize, frame: Vec<u8>) {
        let now = self.cycle();
        self.transmit(from, now, frame);
    }

    /// The UDP wire's counters, for a network made by [`SimNetwork::on_udp_wire`].
    pub fn udp_stats(&self) -> Option<&UdpWireStats> {
        match &self.links {
            Links::Udp(wire) => Some(wire.stats()),
            _ => None,
        }
    }

    /// The last cycle a frame left a card or came in from a UDP wire (0 if
    /// none has).
    pub fn last_frame_cycle(&self) -> u64 {
        self.last_frame_cycle
    }

    /// Every frame read from the UDP wire so far has reached its card's core:
    /// none waits on the simulated link or in the card's RX queue. (Datagrams
    /// still in the socket do not count: they are read every
    /// `UDP_POLL_CYCLES`.) True on other networks.
    pub fn inbound_idle(&self) -> bool {
        match &self.links {
            Links::Udp(_) => self.udp_arrivals.is_empty() && lock(&self.cards[0]).rx_idle(),
            _ => true,
        }
    }

    /// On a UDP wire: waits up to `timeout` of wall time for a datagram
    /// (the card's clock stands still meanwhile); true if one is waiting.
    /// Other networks have no outside world: false at once.
    pub fn wait_for_wire(&mut self, timeout: Duration) -> bool {
        match &mut self.links {
            Links::Udp(wire) => wire.wait_readable(timeout).unwrap_or_else(|e| {
                tracing::warn!("{e}");
                std::thread::sleep(timeout);
                false
            }),
            _ => false,
        }
    }

    /// Lets [`SimNetwork::run`] step the cards on up to `threads` threads
    /// (1, the default: all on the caller's). The simulation is the same
    /// either way, frame for frame and cycle for cycle; see `run_epoch`.
    pub fn set_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
    }

    /// Cycles the cards may run apart: no frame sent in cycle `t` reaches
    /// another card (or the switch) before cycle `t + lookahead + 1`. `None` where cards
    /// cannot run apart (one card, a UDP wire).
    fn lookahead(&self) -> Option<u64> {
        match &self.links {
            Links::Cable(cable) if self.cards.len() == 2 => Some(cable.delay_cycles()),
            // One cable's delay, though a frame crosses two: the switch's
            // forwarding of every frame that reaches it during an epoch must
            // be known when the epoch starts.
            Links::Switch { cables, .. } => cables.iter().map(Cable::delay_cycles).min(),
            _ => None,
        }
    }

    /// Number of cards.
    pub fn len(&self) -> usize {
        self.cards.len()
    }

    pub fn is_empty(&self) -> bool {
        self.cards.is_empty()
    }

    /// Card `index`, shared: the driver's sim backend holds it for DMA memory.
    pub fn card(&self, index: usize) -> &Arc<Mutex<Card>> {
        &self.cards[index]
    }

    /// Cycles simulated so far (every card has run them).
    pub fn cycle(&self) -> u64 {
        lock(&self.cards[0]).cycle()
    }

    /// Frames transmitted so far by all cards.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Starts (or stops) logging every frame sent and received.
    pub fn log_frames(&mut self, on: bool) {
        self.log = on.then(Vec::new);
    }

    /// The frames logged since the last call.
    pub fn take_frame_log(&mut self) -> Vec<FrameEvent> {
        self.log.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Captures every frame transmitted from now on into a pcap file at
    /// `path` (on a UDP wire, received frames too). On a UDP wire each frame
    /// is written through at once (a process on a real wire is often
    /// stopped by a signal); otherwise the file is buffered until
    /// [`SimNetwork::finish_capture`].
    pub fn capture_to(&mut self, path: impl AsRef<Path>) -> Result<(), PcapError> {
        let path = path.as_ref();
        let file = File::create(path).map_err(|source| PcapError::Io {
            path: path.display().to_string(),
            source,
        })?;
        let out: CaptureFile = match self.links {
            Links::Udp(_) => Box::new(file),
            _ => Box::new(BufWriter::new(file)),
        };
        self.capture = Some(FrameWriter::new(out)?);
        Ok(())
    }

    /// Stops capturing and flushes the file; reports the first write error.
    pub fn finish_capture(&mut self) -> Result<(), PcapError> {
        if let Some(writer) = self.capture.take() {
            let mut inner = writer.into_inner();
            std::io::Write::flush(&mut inner).map_err(|source| PcapError::Io {
                path: "capture".into(),
                source,
            })?;
        }
        match self.capture_error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// One clock cycle of the whole network.
    pub fn step(&mut self) {
        self.step_except(None);
    }

    /// Runs `cycles` cycles of the whole network: on the caller's thread,
    /// or in epochs on several (see [`SimNetwork::set_threads`]) when the
    /// run is long enough to pay for them.
    pub fn run(&mut self, mut cycles: u64) {
        if self.threads > 1 && cycles >= MIN_THREADED_CYCLES {
            if let Some(lookahead) = self.lookahead().filter(|&l| l > 0) {
                while cycles > 0 {
                    let epoch = cycles.min(lookahead);
                    self.run_epoch(epoch);
                    cycles -= epoch;
                }
                return;
            }
        }
        for _ in 0..cycles {
            self.step_except(None);
        }
    }

    /// `cycles` cycles (at most the lookahead) with the cards stepped on
    /// separate threads, the same simulation as `cycles` calls of `step`.
    ///
    /// Why it is the same: a frame that reaches a card in this epoch was
    /// sent before it started (it spent more than the lookahead on the
    /// wire), so every arrival, and the switch's forwarding of it, is known
    /// in advance; each card then runs alone with its arrivals queued at
    /// their cycles. What the cards send is put on the wire afterwards, in
    /// the order `step` would have: by cycle, then by card, after the
    /// arrivals of that cycle (which only the frame log and capture see).
    fn run_epoch(&mut self, cycles: u64) {
        let start = self.cycle();
        let count = self.cards.len();
        // Arrivals of the epoch, by card, in delivery order.
        let mut inbox: Vec<Vec<(u64, Vec<u8>)>> = vec![Vec::new(); count];
        let mut received = Vec::new();
        for now in start..start + cycles {
            self.deliver_with(now, None, &mut |card, frame| {
                received.push((now, card, frame.len()));
                inbox[card].push((now, frame));
            });
        }
        let threads = self.threads.min(count);
        let mut sent: Vec<(u64, usize, Vec<u8>)> = Vec::new();
        let mut inboxes: Vec<_> = inbox
            .into_iter()
            .map(|v| v.into_iter().peekable())
            .collect();
        std::thread::scope(|scope| {
            let mut groups: Vec<Group> = (0..threads).map(|_| Vec::new()).collect();
            for (i, (card, inbox)) in self.cards.iter().zip(inboxes.drain(..)).enumerate() {
                groups[i % threads].push((i, card, inbox));
            }
            let run_group = move |group: Group| {
                let mut out = Vec::new();
                for (i, card, mut inbox) in group {
                    let mut card = lock(card);
                    for now in start..start + cycles {
                        while let Some((_, frame)) = inbox.next_if(|(at, _)| *at <= now) {
                            card.receive(&frame);
                        }
                        card.step();
                    }
                    for f in card.take_transmitted() {
                        out.push((f.cycle, i, f.bytes));
                    }
                }
                out
            };
            let mut groups = groups.into_iter();
            let mine = groups.next().unwrap();
            let handles: Vec<_> = groups.map(|g| scope.spawn(move || run_group(g))).collect();
            sent.extend(run_group(mine));
            for h in handles {
                sent.extend(h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
            }
        });
        sent.sort_by_key(|&(cycle, card, _)| (cycle, card));
        let mut received = received.into_iter().peekable();
        for (cycle, card, bytes) in sent {
            while let Some((at, to, len)) = received.next_if(|r| r.0 <= cycle) {
                log_received(&mut self.log, to, at, len);
            }
            self.transmit(card, cycle, bytes);
        }
        for (at, to, len) in received {
            log_received(&mut self.log, to, at, len);
        }
    }

    /// Runs `f` on card `index` alone (a BAR access, which takes cycles of
    /// that card), then brings the other cards to the same cycle.
    pub fn access<R>(&mut self, index: usize, f: impl FnOnce(&mut Card) -> R) -> R {
        let (result, solo_cycles, sent) = {
            let mut card = lock(&self.cards[index]);
            let before = card.cycle();
            let result = f(&mut card);
            (result, card.cycle() - before, card.take_transmitted())
        };
        for frame in sent {
            self.transmit(index, frame.cycle, frame.bytes);
        }
        for _ in 0..solo_cycles {
            self.step_except(Some(index));
        }
        result
    }

    /// One cycle: deliver arrivals, step the cards (all but `skip`), put
    /// their frames on the wire.
    fn step_except(&mut self, skip: Option<usize>) {
        let now = match skip {
            Some(i) if self.cards.len() > 1 => {
                lock(&self.cards[(i + 1) % self.cards.len()]).cycle()
            }
            _ => self.cycle(),
        };
        self.deliver(now, skip);
        for i in 0..self.cards.len() {
            if Some(i) == skip {
                continue;
            }
            let sent = {
                let mut card = lock(&self.cards[i]);
                card.step();
                card.take_transmitted()
            };
            for frame in sent {
                self.transmit(i, frame.cycle, frame.bytes);
            }
        }
    }

    /// Hands every frame that has arrived by `now` to its card (except
    /// `skip`'s, which wait), forwarding through the switch.
    fn deliver(&mut self, now: u64, skip: Option<usize>) {
        let cards = &self.cards;
        let log = &mut self.log;
        let mut to_card = |card: usize, frame: Vec<u8>| {
            log_received(log, card, now, frame.len());
            lock(&cards[card]).receive(&frame);
        };
        match &mut self.links {
            Links::Udp(wire) => {
                if skip == Some(0) {
                    return;
                }
                if now.is_multiple_of(UDP_POLL_CYCLES) {
                    let frames = wire.receive().unwrap_or_else(|e| {
                        tracing::warn!("{e}");
                        Vec::new()
                    });
                    for frame in frames {
                        let start = now.max(self.udp_link_free_at);
                        let bits = 8 * (frame.len() as u64 + FRAMING_BYTES);
                        let done = start + bits.div_ceil(DEFAULT_LINK_GBPS * 4);
                        self.udp_link_free_at = done;
                        self.udp_arrivals.push_back((done, frame));
                    }
                }
                while self.udp_arrivals.front().is_some_and(|&(at, _)| at <= now) {
                    let (_, frame) = self.udp_arrivals.pop_front().unwrap();
                    capture(&mut self.capture, &mut self.capture_error, now, &frame);
                    self.last_frame_cycle = now;
                    to_card(0, frame);
                }
                if !self.udp_arrivals.is_empty() {
                    // Frames still on the link keep the card awake.
                    self.last_frame_cycle = now;
                }
            }
            links => Self::deliver_links(links, cards.len(), now, skip, &mut to_card),
        }
    }

    /// [`SimNetwork::deliver`] for cables and the switch, each arrival
    /// handed to `to_card(card, frame)` (serial runs hand it over at once,
    /// threaded ones queue it); the UDP wire is not for this.
    fn deliver_with(
        &mut self,
        now: u64,
        skip: Option<usize>,
        to_card: &mut dyn FnMut(usize, Vec<u8>),
    ) {
        let count = self.cards.len();
        Self::deliver_links(&mut self.links, count, now, skip, to_card);
    }

    fn deliver_links(
        links: &mut Links,
        count: usize,
        now: u64,
        skip: Option<usize>,
        to_card: &mut dyn FnMut(usize, Vec<u8>),
    ) {
        match links {
            Links::Udp(_) => unreachable!("the UDP wire is delivered by `deliver`"),
            Links::External(fabric) => {
                let mut arrived = Vec::new();
                fabric.arrivals(now, &mut arrived);
                for (card, frame) in arrived {
                    // A card skipped this cycle (a BAR access on it) has run
                    // ahead: it takes the frame at once, a cycle or so late.
                    assert!(
                        card < count,
                        "the fabric delivered to card {card} of {count}"
                    );
                    to_card(card, frame);
                }
            }
            Links::Loopback(cable) => {
                if skip != Some(0) {
                    for frame in cable.arrived(0, now) {
                        to_card(0, frame);
                    }
                }
            }
            Links::Cable(cable) => {
                for (lane, to) in [(0, 1), (1, 0)] {
                    if to >= count || Some(to) == skip {
                        continue;
                    }
                    for frame in cable.arrived(lane, now) {
                        to_card(to, frame);
                    }
                }
            }
            Links::Switch { cables, macs } => {
                for from in 0..cables.len() {
                    for frame in cables[from].arrived(0, now) {
                        // Learned as the frame comes in, as a switch does.
                        let src: [u8; 6] = frame[6..12].try_into().unwrap();
                        macs.insert(src, from);
                        let dst: [u8; 6] = frame[..6].try_into().unwrap();
                        match macs.get(&dst) {
                            Some(&port) if port != from => cables[port].send(1, now, frame),
                            Some(_) => {}
                            None => {
                                for port in (0..cables.len()).filter(|&p| p != from) {
                                    cables[port].send(1, now, frame.clone());
                                }
                            }
                        }
                    }
                }
                for (to, cable) in cables.iter_mut().enumerate() {
                    if Some(to) == skip {
                        continue;
                    }
                    for frame in cable.arrived(1, now) {
                        to_card(to, frame);
                    }
                }
            }
        }
    }

    /// Puts a frame card `from` sent at `cycle` on its link (and in the capture).
    fn transmit(&mut self, from: usize, cycle: u64, bytes: Vec<u8>) {
        self.frames += 1;
        self.last_frame_cycle = self.last_frame_cycle.max(cycle);
        if let Some(log) = &mut self.log {
            log.push(FrameEvent {
                card: from,
                cycle,
                bytes: bytes.len(),
                received: false,
            });
        }
        capture(&mut self.capture, &mut self.capture_error, cycle, &bytes);
        match &mut self.links {
            Links::Udp(wire) => {
                if let Err(e) = wire.send(&bytes) {
                    tracing::warn!("frame lost: {e}");
                }
            }
            Links::Cable(cable) => {
                if self.cards.len() == 2 {
                    cable.send(from, cycle, bytes);
                }
            }
            Links::Loopback(cable) => cable.send(0, cycle, bytes),
            Links::External(fabric) => fabric.sent(from, cycle, bytes),
            Links::Switch { cables, .. } => {
                if bytes.len() >= 12 {
                    cables[from].send(0, cycle, bytes);
                }
            }
        }
    }
}

/// A card's arrivals in a threaded epoch: (cycle, frame), in delivery order.
type Inbox = std::iter::Peekable<std::vec::IntoIter<(u64, Vec<u8>)>>;

/// The cards one thread steps in an epoch: (index, card, its arrivals).
type Group<'a> = Vec<(usize, &'a Arc<Mutex<Card>>, Inbox)>;

/// Where a capture goes: a file, buffered or not.
type CaptureFile = Box<dyn Write + Send>;

/// Writes a frame seen at `cycle` to the capture, if any; the first error
/// stops it and is kept.
fn capture(
    capture: &mut Option<FrameWriter<CaptureFile>>,
    error: &mut Option<PcapError>,
    cycle: u64,
    bytes: &[u8],
) {
    if let Some(writer) = capture {
        let at = Duration::from_nanos(cycle * CLOCK_PERIOD_PS / 1000);
        if let Err(e) = writer.write(at, bytes) {
            tracing::warn!("capture stopped: {e}");
            *capture = None;
            error.get_or_insert(e);
        }
    }
}

fn log_received(log: &mut Option<Vec<FrameEvent>>, card: usize, cycle: u64, bytes: usize) {
    if let Some(log) = log {
        log.push(FrameEvent {
            card,
            cycle,
            bytes,
            received: true,
        });
    }
}

fn lock(card: &Mutex<Card>) -> MutexGuard<'_, Card> {
    // A panic mid-step (a failing test) leaves the card between cycles,
    // which is still a valid state to go on from.
    card.lock().unwrap_or_else(|e| e.into_inner())
}

//! The grant scheduler's RTL (hw/src/sched/grant_scheduler.rs) against the
//! reference model's (testbench/src/model/grant.rs), packet by packet.
//!
//! Senders are simulated here: each inbound message has its own peer, sends
//! its unscheduled bytes, then whatever it is granted, one full packet at a
//! time, messages interleaved at random. Every DATA packet goes to the model
//! endpoint as a frame, and to the RTL as the event the RX engine will give
//! it (slot, length, bytes received, the packet's `incoming`). After each
//! packet the two must have issued the same GRANTs in the same order (slot,
//! offset, priority, FIFO or not) and agree on `total_incoming`. Now and then
//! a peer says RPC_UNKNOWN, and the message leaves mid-way in both.

use std::net::Ipv4Addr;

use homa_hw::sched::grant_scheduler::{GrantConfig, MAX_PAYLOAD};
use homa_hw_sim::{GrantScheduler, Sim};
use homa_testbench::cluster::host_addr;
use homa_testbench::model::{Endpoint, HomaConfig};
use homa_wire::{
    AckEntry, Body, CommonHeader, Data, EthernetHeader, Frame, HomaPacket, Ipv4Header, PacketType,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A grant as both sides report it: (slot, offset, priority, fifo).
type Grant = (u16, u32, u8, bool);

/// Cycles the RTL may take for one event before the test calls it hung.
const EVENT_TIMEOUT_CYCLES: u64 = 20_000;
/// The Homa port the receiver serves on, and the senders' (client) port.
const SERVER_PORT: u16 = 100;
const CLIENT_PORT: u16 = 0x8001;

/// One inbound message and its sender.
struct Message {
    slot: u16,
    peer: Ipv4Addr,
    /// The client's RPC id (even).
    id: u64,
    length: u32,
    /// Bytes sent so far (in order: the next packet starts here).
    sent: u32,
    /// What the sender may send (its `incoming`), raised by grants.
    granted: u32,
    unscheduled: u32,
}

impl Message {
    /// End of the next packet (the model's `packet_end`, full packets).
    fn next_end(&self) -> u32 {
        let mut end = (self.sent + MAX_PAYLOAD).min(self.length).min(self.granted);
        if self.sent < self.unscheduled {
            end = end.min(self.unscheduled);
        }
        end
    }

    fn can_send(&self) -> bool {
        self.sent < self.granted.min(self.length)
    }
}

struct Rtl {
    sim: Sim<GrantScheduler>,
    rng: ChaCha8Rng,
    /// Grants taken from the RTL's queue, not yet compared.
    grants: Vec<Grant>,
    events: u64,
    cycles_in_events: u64,
}

impl Rtl {
    fn new(name: &str, cfg: &GrantConfig, seed: u64) -> Rtl {
        let mut sim: Sim<GrantScheduler> = Sim::traced_on_failure(name);
        sim.set_cfg_max_incoming(cfg.max_incoming);
        sim.set_cfg_max_overcommit(cfg.max_overcommit);
        sim.set_cfg_window(cfg.window);
        sim.set_cfg_max_sched_prio(cfg.max_sched_prio);
        sim.set_cfg_unsched_bytes(cfg.unsched_bytes);
        sim.set_cfg_grant_fifo_fraction(cfg.grant_fifo_fraction as u16);
        sim.set_cfg_fifo_grant_increment(cfg.fifo_grant_increment);
        sim.set_s_evt_valid(false);
        sim.set_reset(true);
        sim.tick();
        sim.set_reset(false);
        let mut rtl = Rtl {
            sim,
            rng: ChaCha8Rng::seed_from_u64(seed),
            grants: Vec::new(),
            events: 0,
            cycles_in_events: 0,
        };
        let mut waited = 0;
        while !rtl.sim.s_evt_ready() {
            rtl.tick();
            waited += 1;
            assert!(waited < 40_000, "{name}: not ready after reset");
        }
        rtl
    }

    /// One clock cycle; a grant on the queue's head is taken when the
    /// (random) ready says so.
    fn tick(&mut self) {
        let ready = self.rng.gen_ratio(3, 4);
        self.sim.set_m_grant_ready(ready);
        self.sim.eval();
        if ready && self.sim.m_grant_valid() {
            self.grants.push((
                self.sim.m_grant_slot(),
                self.sim.m_grant_offset(),
                self.sim.m_grant_priority(),
                self.sim.m_grant_fifo(),
            ));
        }
        self.sim.tick();
    }

    /// Offers one event, runs until the scheduler is idle with its queue
    /// empty, and returns the grants it made.
    fn event(
        &mut self,
        slot: u16,
        remove: bool,
        length: u32,
        received: u32,
        incoming: u32,
    ) -> Vec<Grant> {
        let start = self.sim.cycle();
        while !self.sim.s_evt_ready() {
            self.tick();
            assert!(
                self.sim.cycle() - start < EVENT_TIMEOUT_CYCLES,
                "not ready for an event"
            );
        }
        self.sim.set_s_evt_valid(true);
        self.sim.set_s_evt_slot(slot);
        self.sim.set_s_evt_remove(remove);
        self.sim.set_s_evt_length(length);
        self.sim.set_s_evt_received(received);
        self.sim.set_s_evt_incoming(incoming);
        self.tick();
        self.sim.set_s_evt_valid(false);
        // Junk on the data lines while not valid.
        self.sim.set_s_evt_slot(0x3fff);
        self.sim.set_s_evt_length(7);
        loop {
            self.tick();
            if self.sim.idle() && !self.sim.m_grant_valid() {
                break;
            }
            assert!(
                self.sim.cycle() - start < EVENT_TIMEOUT_CYCLES,
                "event on slot {slot} not finished after {EVENT_TIMEOUT_CYCLES} cycles"
            );
        }
        self.events += 1;
        self.cycles_in_events += self.sim.cycle() - start;
        std::mem::take(&mut self.grants)
    }
}

fn data_frame(m: &Message, to: Ipv4Addr, offset: u32, end: u32) -> Frame {
    let common = CommonHeader::new(CLIENT_PORT, SERVER_PORT, m.id, PacketType::Data);
    Frame {
        eth: EthernetHeader {
            dst: host_addr(0).mac,
            src: host_addr(1).mac,
        },
        ip: Ipv4Header::homa(m.peer, to, 0),
        homa: HomaPacket {
            common,
            body: Body::Data(Data {
                message_length: m.length,
                incoming: m.granted,
                ack: AckEntry::default(),
                cutoff_version: 1,
                retransmit: 0,
                pad: [0; 3],
                seg_offset: offset,
                payload: vec![0xa5; (end - offset) as usize],
            }),
        },
    }
}

fn rpc_unknown_frame(m: &Message, to: Ipv4Addr) -> Frame {
    Frame {
        eth: EthernetHeader {
            dst: host_addr(0).mac,
            src: host_addr(1).mac,
        },
        ip: Ipv4Header::homa(m.peer, to, 7),
        homa: HomaPacket {
            common: CommonHeader::new(CLIENT_PORT, SERVER_PORT, m.id, PacketType::RpcUnknown),
            body: Body::RpcUnknown,
        },
    }
}

/// What a run covered.
#[derive(Debug, Default)]
struct Coverage {
    packets: u64,
    messages: u64,
    grants: u64,
    fifo_grants: u64,
    /// Grants cut short by max_incoming (offset below the packet grid).
    capped: u64,
    aborted: u64,
    max_live: usize,
    max_total_incoming: u64,
    completed: u64,
}

/// The RTL's tunables for the model's configuration.
fn rtl_config(c: &HomaConfig) -> GrantConfig {
    GrantConfig {
        max_incoming: c.max_incoming,
        max_overcommit: c.max_overcommit as u8,
        window: c.window,
        max_sched_prio: c.max_sched_prio,
        unsched_bytes: c.unsched_bytes,
        grant_fifo_fraction: c.grant_fifo_fraction,
        fifo_grant_increment: c.fifo_grant_increment,
    }
}

/// `packets` DATA packets (and some aborts) with at most `max_live` messages
/// in flight; the first `prefill` messages are started (their first packet
/// sent) before anything else happens.
fn run(
    label: &str,
    model_cfg: HomaConfig,
    seed: u64,
    packets: u64,
    max_live: usize,
    prefill: usize,
) -> Coverage {
    let rtl_cfg = rtl_config(&model_cfg);
    let me = host_addr(0);
    let mut model = Endpoint::new(model_cfg.clone(), me);
    let mut rtl = Rtl::new(&format!("grant_scheduler_{label}"), &rtl_cfg, seed ^ 0x5eed);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut live: Vec<Message> = Vec::new();
    let slots = (4 * max_live).min(1 << 14) as u16;
    let mut free_slots: Vec<u16> = (0..slots).rev().collect();
    let mut next_peer = 1;
    let mut now = 0u64;
    let mut cov = Coverage::default();
    while cov.packets < packets {
        now += 100;
        // A new message now and then (always when nothing can be sent).
        let sendable = live.iter().filter(|m| m.can_send()).count();
        let filling = (cov.messages as usize) < prefill;
        if live.len() < max_live && (filling || sendable == 0 || rng.gen_ratio(1, 6)) {
            let length = match rng.gen_range(0..10) {
                0..=2 => rng.gen_range(1..=model_cfg.unsched_bytes),
                3..=6 => rng.gen_range(model_cfg.unsched_bytes + 1..=200_000),
                _ => rng.gen_range(200_001..=1_000_000),
            };
            next_peer += 1;
            let m = Message {
                slot: free_slots.pop().expect("a free slot"),
                peer: host_addr(next_peer).ip,
                id: 2 * rng.gen_range(1..1_000_000u64),
                length,
                sent: 0,
                granted: length.min(model_cfg.unsched_bytes),
                unscheduled: length.min(model_cfg.unsched_bytes),
            };
            cov.messages += 1;
            live.push(m);
            continue;
        }
        let first_unsent = if cov.packets < prefill as u64 {
            live.iter().position(|m| m.sent == 0)
        } else {
            None
        };
        let i = if let Some(i) = first_unsent {
            // Each prefilled message's first packet.
            i
        } else {
            let candidates: Vec<usize> = (0..live.len()).filter(|&i| live[i].can_send()).collect();
            if candidates.is_empty() {
                continue;
            }
            candidates[rng.gen_range(0..candidates.len())]
        };
        let fifo_before = model.counters().fifo_grants_out;
        let total_before = model.total_incoming();
        let last_event;
        let (want, got) = if cov.packets >= prefill as u64 && rng.gen_ratio(1, 300) {
            // The peer gives up on it: the receiver forgets the message.
            let m = live.swap_remove(i);
            model.handle_frame(now, rpc_unknown_frame(&m, me.ip));
            free_slots.push(m.slot);
            cov.aborted += 1;
            last_event = format!("REMOVE slot {}", m.slot);
            let got = rtl.event(m.slot, true, 0, 0, 0);
            (model_grants(&mut model, now, &live, fifo_before), got)
        } else {
            let m = &mut live[i];
            let offset = m.sent;
            let end = m.next_end();
            let frame = data_frame(m, me.ip, offset, end);
            m.sent = end;
            cov.packets += 1;
            model.handle_frame(now, frame);
            let (slot, length, received, incoming) = (m.slot, m.length, m.sent, m.granted);
            last_event =
                format!("DATA slot {slot} length {length} received {received} incoming {incoming}");
            let got = rtl.event(slot, false, length, received, incoming);
            let want = model_grants(&mut model, now, &live, fifo_before);
            if received == length {
                let m = live.swap_remove(i);
                free_slots.push(m.slot);
                cov.completed += 1;
            }
            (want, got)
        };
        assert_eq!(
            got, want,
            "{label}: packet {}, {last_event}, total_incoming {} before: grants, RTL (left) vs model (right) as (slot, offset, priority, fifo)",
            cov.packets, total_before
        );
        assert_eq!(
            rtl.sim.total_incoming() as u64,
            model.total_incoming(),
            "{label}: packet {}: total_incoming",
            cov.packets
        );
        for &(slot, offset, _, fifo) in &got {
            cov.grants += 1;
            cov.fifo_grants += fifo as u64;
            if let Some(m) = live.iter_mut().find(|m| m.slot == slot) {
                if offset < m.length
                    && offset > m.unscheduled
                    && (offset - m.unscheduled) % MAX_PAYLOAD != 0
                {
                    cov.capped += 1;
                }
                m.granted = m.granted.max(offset);
            }
        }
        while model.poll_event().is_some() {}
        cov.max_live = cov.max_live.max(live.len());
        cov.max_total_incoming = cov.max_total_incoming.max(model.total_incoming());
    }
    eprintln!(
        "{label}: {cov:?}; {} RTL cycles, {:.1} per event",
        rtl.sim.cycle(),
        rtl.cycles_in_events as f64 / rtl.events as f64
    );
    cov
}

/// The GRANTs the model sent for the last packet (`fifo_before`: its FIFO
/// grant count before it), as (slot, offset, priority,
/// fifo). The model does not mark FIFO grants in the packet; it counts them,
/// and a FIFO grant is always the last of a pass, at `max_sched_prio`.
fn model_grants(model: &mut Endpoint, now: u64, live: &[Message], fifo_before: u64) -> Vec<Grant> {
    let mut grants = Vec::new();
    while let Some(f) = model.next_frame(now) {
        if let Body::Grant(g) = f.homa.body {
            let slot = live
                .iter()
                .find(|m| m.peer == f.ip.dst)
                .map(|m| m.slot)
                .expect("a grant for a live message");
            grants.push((slot, g.offset, g.priority, false));
        }
    }
    if model.counters().fifo_grants_out > fifo_before {
        grants.last_mut().expect("the FIFO grant").3 = true;
    }
    grants
}

fn cfg(f: impl FnOnce(&mut HomaConfig)) -> HomaConfig {
    let mut c = HomaConfig::default();
    f(&mut c);
    c
}

#[test]
fn defaults_match_the_model() {
    let cov = run("defaults", HomaConfig::default(), 1, 4_000, 24, 0);
    assert!(cov.grants > 500, "{cov:?}");
    assert!(cov.completed > 20, "{cov:?}");
}

#[test]
fn tight_max_incoming_and_small_active_set_match_the_model() {
    let cov = run(
        "tight",
        cfg(|c| {
            c.max_incoming = 150_000;
            c.max_overcommit = 3;
        }),
        2,
        4_000,
        24,
        0,
    );
    assert!(cov.capped > 10, "grants cut short by max_incoming: {cov:?}");
}

#[test]
fn fixed_window_and_frequent_fifo_grants_match_the_model() {
    let cov = run(
        "fifo",
        cfg(|c| {
            c.window = 30_000;
            c.grant_fifo_fraction = 300;
            c.fifo_grant_increment = 20_000;
            c.max_overcommit = 4;
        }),
        3,
        4_000,
        24,
        0,
    );
    assert!(cov.fifo_grants > 20, "{cov:?}");
}

#[test]
fn few_messages_get_their_grants_at_once() {
    // With few messages in flight max_incoming rarely binds: full windows.
    let cov = run("few", HomaConfig::default(), 4, 4_000, 5, 0);
    assert!(cov.grants > 1_000, "{cov:?}");
}

/// 16,384 inbound messages at once, every slot taken: all but the active
/// few live in the trees, and the order among them must still be exact.
/// max_incoming is raised so grants keep flowing with that many messages.
#[test]
fn every_slot_taken() {
    let cov = run(
        "full",
        cfg(|c| c.max_incoming = 2_000_000_000),
        5,
        16_384 + 3_000,
        16_384,
        16_384,
    );
    assert_eq!(cov.max_live, 16_384, "{cov:?}");
    assert!(cov.grants > 500, "{cov:?}");
}

/// The long differential run behind the README's figure (release:
/// `cargo test --release -p homa-testbench --test grant_scheduler_rtl -- --ignored`).
#[test]
#[ignore]
fn long_run_matches_the_model() {
    for (i, c) in [
        HomaConfig::default(),
        cfg(|c| {
            c.max_incoming = 150_000;
            c.max_overcommit = 3;
        }),
        cfg(|c| {
            c.window = 30_000;
            c.grant_fifo_fraction = 300;
            c.fifo_grant_increment = 20_000;
        }),
    ]
    .into_iter()
    .enumerate()
    {
        run(&format!("long{i}"), c, 100 + i as u64, 100_000, 16, 0);
    }
}

/// A small active set with room to spare and few messages: members leave
/// after a sweep often (fully granted), which changes the dynamic window of
/// the others: the next pass owes them grants whatever the event.
#[test]
fn members_leaving_after_the_sweep_match_the_model() {
    for seed in [6, 7, 8] {
        run(
            &format!("leaving{seed}"),
            cfg(|c| {
                c.max_incoming = 600_000;
                c.max_overcommit = 2;
            }),
            seed,
            4_000,
            4,
            0,
        );
    }
}

/// A scripted exchange: messages of the given lengths, then packets sent in
/// the given order (message index, packets), every packet checked as in
/// `run`. Returns the grants each packet drew.
fn scripted(label: &str, model_cfg: HomaConfig, lengths: &[u32], script: &[(usize, u32)]) {
    let rtl_cfg = rtl_config(&model_cfg);
    let me = host_addr(0);
    let mut model = Endpoint::new(model_cfg.clone(), me);
    let mut rtl = Rtl::new(&format!("grant_scheduler_{label}"), &rtl_cfg, 1);
    let mut msgs: Vec<Message> = lengths
        .iter()
        .enumerate()
        .map(|(i, &length)| Message {
            slot: i as u16 + 1,
            peer: host_addr(i + 1).ip,
            id: 2 * (i as u64 + 1),
            length,
            sent: 0,
            granted: length.min(model_cfg.unsched_bytes),
            unscheduled: length.min(model_cfg.unsched_bytes),
        })
        .collect();
    let mut n = 0;
    for &(i, packets) in script {
        for _ in 0..packets {
            n += 1;
            let fifo_before = model.counters().fifo_grants_out;
            let m = &mut msgs[i];
            assert!(
                m.can_send(),
                "{label}: step {n}: the script sends past a grant"
            );
            let (offset, end) = (m.sent, m.next_end());
            model.handle_frame(0, data_frame(m, me.ip, offset, end));
            m.sent = end;
            let got = rtl.event(m.slot, false, m.length, m.sent, m.granted);
            let want = model_grants(&mut model, 0, &msgs, fifo_before);
            if std::env::var("HOMA_SCRIPT_TRACE").is_ok() {
                eprintln!(
                    "{label}: packet {n} (message {i}, received {}): {got:?}, total {}",
                    msgs[i].sent,
                    model.total_incoming()
                );
            }
            assert_eq!(
                got, want,
                "{label}: packet {n} (message {i}): RTL (left) vs model (right)"
            );
            for &(slot, offset, _, _) in &got {
                let g = msgs.iter_mut().find(|m| m.slot == slot).unwrap();
                g.granted = g.granted.max(offset);
            }
            assert_eq!(
                rtl.sim.total_incoming() as u64,
                model.total_incoming(),
                "{label}: packet {n}"
            );
        }
    }
}

/// The case the long run found: a member of the active set is fully granted
/// (and leaves) in a pass where another stays; the next event is a short
/// message's first packet, which shrinks the room, but the pass it causes
/// must still grant the remaining member its larger dynamic window.
#[test]
fn a_member_leaving_widens_the_window_of_the_others() {
    let cfg = cfg(|c| {
        c.max_incoming = 600_000;
        c.max_overcommit = 2;
    });
    // B (900 kB) starts alone, then A (400 kB) joins and is served until
    // fully granted (its 141st packet); then C (20 kB, unscheduled only)
    // arrives at once.
    scripted(
        "widen",
        cfg,
        &[900_000, 400_000, 20_000],
        &[(0, 1), (1, 1), (0, 20), (1, 140), (2, 1), (1, 10)],
    );
}

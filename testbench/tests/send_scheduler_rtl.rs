//! The sender's choice in RTL (hw/src/sched/send_scheduler.rs) against the
//! reference model's (testbench/src/model/outgoing.rs, `choose_frame`),
//! packet by packet.
//!
//! A model endpoint sends requests of random sizes to many servers; the
//! servers' GRANTs arrive at random moments (any offset, any message). The
//! RTL is told each message's state as the TX engine will tell it (eligible,
//! bypass class, bytes left, birth). Whenever the link wants a packet, the
//! model's `next_frame` and the RTL's pick must name the same message (or
//! both none), and after the packet the two FIFO credits must be equal.

use homa_hw::sched::send_scheduler::PACKET_BYTES;
use homa_hw_sim::{SendScheduler, Sim};
use homa_testbench::cluster::host_addr;
use homa_testbench::model::{Endpoint, HomaConfig};
use homa_wire::{
    Body, CommonHeader, EthernetHeader, Frame, Grant, HomaPacket, Ipv4Header, PacketType,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const TIMEOUT_CYCLES: u64 = 1_000;

struct Message {
    slot: u16,
    server: usize,
    id: u64,
    length: u32,
    next: u32,
    granted: u32,
    birth: u32,
}

impl Message {
    fn eligible(&self) -> bool {
        self.next < self.granted.min(self.length)
    }
}

struct Rtl {
    sim: Sim<SendScheduler>,
}

impl Rtl {
    fn new(name: &str, fraction: u32) -> Rtl {
        let mut sim: Sim<SendScheduler> = Sim::traced_on_failure(name);
        sim.set_cfg_pacer_fifo_fraction(fraction as u16);
        sim.set_s_upd_valid(false);
        sim.set_s_pick_valid(false);
        sim.set_reset(true);
        sim.tick();
        sim.set_reset(false);
        let mut rtl = Rtl { sim };
        rtl.wait_idle();
        rtl
    }

    fn wait_idle(&mut self) {
        let start = self.sim.cycle();
        while !self.sim.idle() {
            self.sim.tick();
            assert!(
                self.sim.cycle() - start < 40_000,
                "send scheduler never idle"
            );
        }
    }

    fn update(&mut self, m: &Message, throttle_min_bytes: u32, sent_bytes: Option<u32>) {
        let start = self.sim.cycle();
        while !self.sim.s_upd_ready() {
            self.sim.tick();
            assert!(
                self.sim.cycle() - start < TIMEOUT_CYCLES,
                "update not taken"
            );
        }
        self.sim.set_s_upd_valid(true);
        self.sim.set_s_upd_slot(m.slot);
        self.sim.set_s_upd_eligible(m.eligible());
        self.sim.set_s_upd_bypass(m.length < throttle_min_bytes);
        self.sim.set_s_upd_bytes_left(m.length - m.next);
        self.sim.set_s_upd_birth(m.birth);
        self.sim.set_s_upd_sent(sent_bytes.is_some());
        self.sim
            .set_s_upd_sent_bytes(sent_bytes.unwrap_or(0) as u16);
        self.sim.tick();
        self.sim.set_s_upd_valid(false);
        self.sim.set_s_upd_sent(false);
    }

    /// The RTL's pick: Some(slot, fifo) or None.
    fn pick(&mut self) -> Option<(u16, bool)> {
        let start = self.sim.cycle();
        self.sim.set_s_pick_valid(true);
        loop {
            self.sim.eval();
            let taken = self.sim.s_pick_ready();
            self.sim.tick();
            if taken {
                break;
            }
            assert!(self.sim.cycle() - start < TIMEOUT_CYCLES, "pick not taken");
        }
        self.sim.set_s_pick_valid(false);
        loop {
            self.sim.eval();
            if self.sim.m_pick_valid() {
                let r = self
                    .sim
                    .m_pick_found()
                    .then(|| (self.sim.m_pick_slot(), self.sim.m_pick_fifo()));
                self.sim.tick();
                return r;
            }
            self.sim.tick();
            assert!(self.sim.cycle() - start < TIMEOUT_CYCLES, "no pick");
        }
    }
}

fn grant_frame(from: usize, to: usize, id: u64, offset: u32) -> Frame {
    let (src, dst) = (host_addr(from), host_addr(to));
    Frame {
        eth: EthernetHeader {
            dst: dst.mac,
            src: src.mac,
        },
        ip: Ipv4Header::homa(src.ip, dst.ip, 7),
        homa: HomaPacket {
            common: CommonHeader::new(100, 0x8000, id ^ 1, PacketType::Grant),
            body: Body::Grant(Grant {
                offset,
                priority: 1,
            }),
        },
    }
}

#[derive(Debug, Default)]
struct Coverage {
    packets: u64,
    bypass_picks: u64,
    fifo_picks: u64,
    srpt_picks: u64,
    none_picks: u64,
    grants: u64,
    max_eligible: usize,
}

fn run(label: &str, cfg: HomaConfig, seed: u64, packets: u64, messages: usize) -> Coverage {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut model = Endpoint::new(cfg.clone(), host_addr(0));
    let mut rtl = Rtl::new(&format!("send_scheduler_{label}"), cfg.pacer_fifo_fraction);
    let throttle = cfg.throttle_min_bytes;
    let mut msgs: Vec<Message> = Vec::new();
    let mut cov = Coverage::default();
    let mut now = 0;
    while cov.packets < packets {
        now += 10;
        let roll = rng.gen_range(0..100);
        if roll < 8 && msgs.len() < messages {
            // A new request.
            let length = match rng.gen_range(0..10) {
                0..=3 => rng.gen_range(1..throttle),
                4..=6 => rng.gen_range(throttle..=60_000),
                _ => rng.gen_range(60_001..=1_000_000),
            };
            let server = 1 + msgs.len();
            let id = model
                .send_request(now, host_addr(server), 100, vec![7; length as usize])
                .expect("request");
            let m = Message {
                slot: msgs.len() as u16 * 7 % 16_384,
                server,
                id,
                length,
                next: 0,
                granted: length.min(cfg.unsched_bytes),
                birth: msgs.len() as u32,
            };
            rtl.update(&m, throttle, None);
            msgs.push(m);
        } else if roll < 30 {
            // A grant for a message that needs one.
            let waiting: Vec<usize> = (0..msgs.len())
                .filter(|&i| msgs[i].granted < msgs[i].length)
                .collect();
            if waiting.is_empty() {
                continue;
            }
            let m = &mut msgs[waiting[rng.gen_range(0..waiting.len())]];
            let offset = (m.granted + rng.gen_range(1..60_000)).min(m.length + 10);
            model.handle_frame(now, grant_frame(m.server, 0, m.id, offset));
            m.granted = offset.min(m.length);
            cov.grants += 1;
            rtl.update(m, throttle, None);
        } else {
            // The link wants a packet.
            let frame = model.next_frame(now);
            let got = rtl.pick();
            let want = frame.as_ref().map(|f| {
                let Body::Data(d) = &f.homa.body else {
                    panic!("{label}: the model sent {:?}", f.homa.packet_type())
                };
                let id = f.homa.common.sender_id;
                let i = msgs
                    .iter()
                    .position(|m| m.id == id)
                    .expect("a known message");
                (i, d.payload_offset(&f.homa.common), d.payload.len() as u32)
            });
            match (got, want) {
                (None, None) => cov.none_picks += 1,
                (Some((slot, fifo)), Some((i, offset, bytes))) => {
                    let m = &mut msgs[i];
                    assert_eq!(
                        slot, m.slot,
                        "{label}: packet {}: RTL picked slot {slot}, the model message {i} (slot {}, {} bytes left, birth {})",
                        cov.packets, m.slot, m.length - m.next, m.birth
                    );
                    assert_eq!(
                        offset, m.next,
                        "{label}: the model sent from its next offset"
                    );
                    m.next += bytes;
                    cov.packets += 1;
                    if fifo {
                        cov.fifo_picks += 1;
                    } else if m.length < throttle {
                        cov.bypass_picks += 1;
                    } else {
                        cov.srpt_picks += 1;
                    }
                    rtl.update(m, throttle, Some(bytes));
                    rtl.wait_idle();
                    assert_eq!(
                        rtl.sim.credit() as u64,
                        model.fifo_credit_bytes(),
                        "{label}: packet {}: FIFO credit, RTL (left) vs model (right)",
                        cov.packets
                    );
                }
                (got, want) => panic!(
                    "{label}: packet {}: RTL pick {got:?}, model {want:?}",
                    cov.packets
                ),
            }
        }
        cov.max_eligible = cov
            .max_eligible
            .max(msgs.iter().filter(|m| m.eligible()).count());
    }
    eprintln!("{label}: {cov:?}; {} RTL cycles", rtl.sim.cycle());
    cov
}

#[test]
fn defaults_match_the_model() {
    let cov = run("defaults", HomaConfig::default(), 1, 6_000, 300);
    assert!(
        cov.fifo_picks > 20 && cov.bypass_picks > 50 && cov.srpt_picks > 2_000,
        "{cov:?}"
    );
}

#[test]
fn a_large_fifo_fraction_matches_the_model() {
    let cfg = HomaConfig {
        pacer_fifo_fraction: 400,
        ..HomaConfig::default()
    };
    let cov = run("fifo400", cfg, 2, 6_000, 300);
    assert!(cov.fifo_picks > 1_000, "{cov:?}");
}

#[test]
fn no_fifo_fraction_matches_the_model() {
    let cfg = HomaConfig {
        pacer_fifo_fraction: 0,
        ..HomaConfig::default()
    };
    let cov = run("fifo0", cfg, 3, 3_000, 200);
    assert_eq!(cov.fifo_picks, 0, "{cov:?}");
}

#[test]
fn packet_bytes_is_the_models_full_packet() {
    assert_eq!(PACKET_BYTES, HomaConfig::default().max_payload());
}

/// The long differential run behind the README's figure (release:
/// `cargo test --release -p homa-testbench --test send_scheduler_rtl -- --ignored`).
#[test]
#[ignore]
fn long_run_matches_the_model() {
    for (i, fraction) in [50, 400].into_iter().enumerate() {
        let cfg = HomaConfig {
            pacer_fifo_fraction: fraction,
            ..HomaConfig::default()
        };
        run(&format!("long{i}"), cfg, 100 + i as u64, 150_000, 4_000);
    }
}

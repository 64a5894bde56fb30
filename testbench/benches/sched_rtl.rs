//! The scheduling blocks' RTL in Verilator, measured in clock cycles:
//! `cargo bench -p homa-testbench --bench sched_rtl` (release).
//!
//! - winner tree: updates taken per cycle with all 16,384 leaves present,
//!   and the cycles from an update to the root;
//! - grant scheduler: cycles per DATA event and from an event to its first
//!   GRANT on the way out, with a few messages in flight (grants flow) and
//!   with all 16,384 slots taken (the trees full);
//! - send scheduler: cycles per pick, settled and right after a packet's
//!   update, with 16,384 eligible messages.
//!
//! For each, Verilator's speed in cycles per wall second.

use std::time::Instant;

use homa_hw::sched::grant_scheduler::{GrantConfig, MAX_PAYLOAD};
use homa_hw::sched::winner_tree::{LATENCY_CYCLES, LEAVES};
use homa_hw_sim::{GrantScheduler, SendScheduler, Sim, WinnerTree};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const NS_PER_CYCLE: f64 = 4.0;

fn percentile(v: &mut [u64], p: f64) -> u64 {
    v.sort_unstable();
    v[((v.len() - 1) as f64 * p).round() as usize]
}

fn report(what: &str, cycles: f64) {
    println!(
        "  {what:<58} {cycles:>9.1} cycles  {:>8.1} ns",
        cycles * NS_PER_CYCLE
    );
}

fn winner_tree() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut sim: Sim<WinnerTree> = Sim::new("bench_winner_tree");
    sim.set_reset(true);
    sim.tick();
    sim.set_reset(false);
    while !sim.s_ready() {
        sim.tick();
    }
    let start = Instant::now();
    let c0 = sim.cycle();
    let updates = 1_000_000u64 + LEAVES as u64;
    let mut taken = 0u64;
    for n in 0..updates {
        sim.set_s_valid(true);
        let index = if n < LEAVES as u64 {
            n as u16
        } else {
            rng.gen_range(0..LEAVES as u16)
        };
        sim.set_s_index(index);
        sim.set_s_present(true);
        sim.set_s_rank(rng.gen_range(0..1 << 20));
        sim.set_s_age(n as u32);
        sim.eval();
        taken += sim.s_ready() as u64;
        sim.tick();
    }
    sim.set_s_valid(false);
    while !sim.m_settled() {
        sim.tick();
    }
    let cycles = sim.cycle() - c0;
    let wall = start.elapsed().as_secs_f64();
    // One isolated update, timed to the root.
    let t0 = sim.cycle();
    sim.set_s_valid(true);
    sim.set_s_index(5);
    sim.set_s_rank(0);
    sim.tick();
    sim.set_s_valid(false);
    while !sim.m_valid() {
        sim.tick();
    }
    println!("winner tree (16,384 leaves, all present):");
    println!(
        "  updates taken per cycle: {:.3} ({taken} of {updates} offered back to back)",
        taken as f64 / updates as f64
    );
    report("update to root", (sim.cycle() - t0) as f64);
    assert_eq!(sim.cycle() - t0, LATENCY_CYCLES);
    println!(
        "  Verilator: {:.2} M cycles per wall second ({cycles} cycles)",
        cycles as f64 / wall / 1e6
    );
}

struct Msg {
    slot: u16,
    length: u32,
    sent: u32,
    granted: u32,
    unscheduled: u32,
}

/// Random DATA events against the grant scheduler; returns (cycles per
/// event, event-to-first-grant samples).
fn grant_run(label: &str, cfg: GrantConfig, live: usize, events: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let mut sim: Sim<GrantScheduler> = Sim::new("bench_grant_scheduler");
    sim.set_cfg_max_incoming(cfg.max_incoming);
    sim.set_cfg_max_overcommit(cfg.max_overcommit);
    sim.set_cfg_window(cfg.window);
    sim.set_cfg_max_sched_prio(cfg.max_sched_prio);
    sim.set_cfg_unsched_bytes(cfg.unsched_bytes);
    sim.set_cfg_grant_fifo_fraction(cfg.grant_fifo_fraction as u16);
    sim.set_cfg_fifo_grant_increment(cfg.fifo_grant_increment);
    sim.set_m_grant_ready(true);
    sim.set_reset(true);
    sim.tick();
    sim.set_reset(false);
    while !sim.s_evt_ready() {
        sim.tick();
    }
    let mut next_slot = 0u16;
    let new_msg = |rng: &mut ChaCha8Rng, next_slot: &mut u16| {
        let length = rng.gen_range(cfg.unsched_bytes + 1..=1_000_000);
        *next_slot = next_slot.wrapping_add(1) % (1 << 14);
        Msg {
            slot: *next_slot,
            length,
            sent: 0,
            granted: cfg.unsched_bytes,
            unscheduled: cfg.unsched_bytes,
        }
    };
    let mut msgs: Vec<Msg> = (0..live)
        .map(|_| new_msg(&mut rng, &mut next_slot))
        .collect();
    let mut per_event = Vec::new();
    let mut to_grant = Vec::new();
    let start = Instant::now();
    let c0 = sim.cycle();
    let mut done = 0u64;
    // Prefill: every message's first packet, then random packets.
    let mut prefill = 0usize;
    while done < events + live as u64 {
        let i = if prefill < msgs.len() {
            prefill += 1;
            prefill - 1
        } else {
            // A random message that may send (a few tries; else a new one).
            let found = (0..64)
                .map(|_| rng.gen_range(0..msgs.len()))
                .find(|&i| msgs[i].sent < msgs[i].granted.min(msgs[i].length));
            match found {
                Some(i) => i,
                None => {
                    let i = rng.gen_range(0..msgs.len());
                    msgs[i] = new_msg(&mut rng, &mut next_slot);
                    i
                }
            }
        };
        let m = &mut msgs[i];
        let mut end = (m.sent + MAX_PAYLOAD).min(m.length).min(m.granted);
        if m.sent < m.unscheduled {
            end = end.min(m.unscheduled);
        }
        m.sent = end;
        while !sim.s_evt_ready() {
            sim.tick();
        }
        sim.set_s_evt_valid(true);
        sim.set_s_evt_slot(m.slot);
        sim.set_s_evt_remove(false);
        sim.set_s_evt_length(m.length);
        sim.set_s_evt_received(m.sent);
        sim.set_s_evt_incoming(m.granted);
        let t0 = sim.cycle();
        sim.tick();
        sim.set_s_evt_valid(false);
        let mut first_grant = None;
        loop {
            sim.eval();
            if sim.m_grant_valid() {
                first_grant.get_or_insert(sim.cycle() - t0);
                let (slot, offset) = (sim.m_grant_slot(), sim.m_grant_offset());
                if let Some(g) = msgs.iter_mut().find(|g| g.slot == slot) {
                    g.granted = g.granted.max(offset);
                }
            }
            // The next event may come as soon as the scheduler takes one
            // (its grants are all queued by then; tree updates may still be
            // settling, which the next event does not wait for).
            if sim.s_evt_ready() && !sim.m_grant_valid() {
                break;
            }
            sim.tick();
        }
        if done >= live as u64 {
            per_event.push(sim.cycle() - t0);
            to_grant.extend(first_grant);
        }
        done += 1;
        let m = &msgs[i];
        if m.sent == m.length {
            let fresh = new_msg(&mut rng, &mut next_slot);
            msgs[i] = fresh;
        }
    }
    let cycles = sim.cycle() - c0;
    let wall = start.elapsed().as_secs_f64();
    println!("grant scheduler, {label}:");
    report(
        "DATA event taken to the next one taken, p50",
        percentile(&mut per_event, 0.5) as f64,
    );
    report(
        "DATA event taken to the next one taken, p99",
        percentile(&mut per_event, 0.99) as f64,
    );
    if !to_grant.is_empty() {
        report(
            "event taken to first GRANT out, p50",
            percentile(&mut to_grant, 0.5) as f64,
        );
        report(
            "event taken to first GRANT out, p99",
            percentile(&mut to_grant, 0.99) as f64,
        );
    }
    println!(
        "  {} events, {} with a grant; Verilator: {:.2} M cycles per wall second",
        per_event.len(),
        to_grant.len(),
        cycles as f64 / wall / 1e6
    );
}

fn send_scheduler() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut sim: Sim<SendScheduler> = Sim::new("bench_send_scheduler");
    sim.set_cfg_pacer_fifo_fraction(50);
    sim.set_reset(true);
    sim.tick();
    sim.set_reset(false);
    while !sim.idle() {
        sim.tick();
    }
    let mut left: Vec<u32> = (0..LEAVES)
        .map(|_| rng.gen_range(1000..1_000_000))
        .collect();
    for (slot, &l) in left.iter().enumerate() {
        sim.set_s_upd_valid(true);
        sim.set_s_upd_slot(slot as u16);
        sim.set_s_upd_eligible(true);
        sim.set_s_upd_bypass(false);
        sim.set_s_upd_bytes_left(l);
        sim.set_s_upd_birth(slot as u32);
        sim.tick();
    }
    sim.set_s_upd_valid(false);
    let start = Instant::now();
    let c0 = sim.cycle();
    let mut settled_pick = Vec::new();
    let mut unsettled_pick = Vec::new();
    for n in 0..200_000 {
        if n % 2 == 0 {
            // Let the trees settle first: the pick alone.
            while !sim.idle() {
                sim.tick();
            }
        }
        let t0 = sim.cycle();
        sim.set_s_pick_valid(true);
        loop {
            sim.eval();
            let taken = sim.s_pick_ready();
            sim.tick();
            if taken {
                break;
            }
        }
        sim.set_s_pick_valid(false);
        while !sim.m_pick_valid() {
            sim.tick();
        }
        let slot = sim.m_pick_slot();
        if n % 2 == 0 {
            settled_pick.push(sim.cycle() - t0);
        } else {
            unsettled_pick.push(sim.cycle() - t0);
        }
        sim.tick();
        let bytes = left[slot as usize].min(MAX_PAYLOAD);
        left[slot as usize] -= bytes;
        if left[slot as usize] == 0 {
            left[slot as usize] = rng.gen_range(1000..1_000_000);
        }
        while !sim.s_upd_ready() {
            sim.tick();
        }
        sim.set_s_upd_valid(true);
        sim.set_s_upd_slot(slot);
        sim.set_s_upd_eligible(true);
        sim.set_s_upd_bypass(false);
        sim.set_s_upd_bytes_left(left[slot as usize]);
        sim.set_s_upd_birth(slot as u32);
        sim.set_s_upd_sent(true);
        sim.set_s_upd_sent_bytes(bytes as u16);
        sim.tick();
        sim.set_s_upd_valid(false);
        sim.set_s_upd_sent(false);
    }
    let cycles = sim.cycle() - c0;
    let wall = start.elapsed().as_secs_f64();
    println!("send scheduler (16,384 eligible messages):");
    report(
        "pick request to answer, trees settled, p50",
        percentile(&mut settled_pick, 0.5) as f64,
    );
    report(
        "pick request to answer, right after the last packet's update, p50",
        percentile(&mut unsettled_pick, 0.5) as f64,
    );
    println!(
        "  Verilator: {:.2} M cycles per wall second",
        cycles as f64 / wall / 1e6
    );
}

fn main() {
    winner_tree();
    grant_run(
        "8 messages in flight (grants flow), defaults",
        GrantConfig::default(),
        8,
        50_000,
    );
    grant_run(
        "16,384 messages in flight (trees full), defaults",
        GrantConfig::default(),
        16_384,
        50_000,
    );
    send_scheduler();
}

//! Block testbench of the resend timer (`hw/src/rx/resend_timer.rs`): the
//! harness plays the RX engine (writes of live and dead entries, GRANTs
//! sent) and the control sender (`m_resend_ready`, randomly withheld), and
//! a model of each slot's history checks every RESEND and expiry the block
//! offers, and every one it owes:
//!
//! - never early: an entry's first RESEND comes no sooner than
//!   `resend_ticks` ticks after the engine last wrote it, the next ones no
//!   sooner than `resend_interval` apart, its expiry no sooner than
//!   `timeout_ticks`; nothing for an entry the engine wrote in the two
//!   cycles before the offer (the block reads an entry two cycles before
//!   offering it), for a dead or expired one, or for an empty range;
//! - never late: with a tick every `TICK_EVERY` cycles (each sweep ends
//!   before the next tick, checked through `sweeps`), each of them comes
//!   within one tick of being due. One tick of slack, because an engine
//!   write in the cycle the sweep writes an entry back costs that entry a
//!   tick (the block's DESIGN NOTES); the harness writes mostly between
//!   sweeps and seldom during them, so no entry loses two;
//! - the range is the entry's, its end raised to what was granted when the
//!   range is open;
//! - an expiry the harness takes names a slot not written since the entry
//!   was read (one written meanwhile must be withdrawn).
//!
//! Stimulus: most slots at the edges of the sweep's groups of 16 and words
//! of 64 groups (slots 14, 15, 16, 17 of a group pair; the last group of a
//! word and the first of the next), so dues meet back to back across a
//! group's or a word's end while the output is held: the sweep then replays
//! an entry across that end, the case its copy of the busy bits must undo.
//! The rest anywhere in the 16,384.

use std::collections::BTreeMap;

use homa_hw::rx::rpc_table::SLOT_BITS;
use homa_hw_sim::{ResendTimer, Sim};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const SLOTS: u32 = 1 << SLOT_BITS;
/// The block clears its RAM after a reset, one entry per cycle.
const CLEAR_CYCLES: u64 = SLOTS as u64 + 4;
/// Cycles between ticks: longer than any sweep here (1,024 cycles plus 16
/// per busy group plus the replays).
const TICK_EVERY: u64 = 5_000;
/// The engine's writes come at least this far apart in the cycles it
/// writes (it takes a packet in no fewer); GRANTs too (the block's note).
const GRANT_GAP: u64 = 6;

#[derive(Clone, Copy)]
struct Config {
    resend_ticks: u8,
    resend_interval: u8,
    timeout_ticks: u8,
    /// Per cycle: the control sender takes an offer.
    ready: f64,
    /// Per cycle: the engine writes an entry, between sweeps and during
    /// one.
    write: f64,
    write_in_sweep: f64,
    ticks: u64,
    seed: u64,
}

/// One slot as the engine last wrote it.
#[derive(Clone, Debug)]
struct Slot {
    live: bool,
    from: u32,
    to: u32,
    open: bool,
    /// Cycle of the last write, and the ticks issued up to it.
    written: u64,
    ticks_at_write: u64,
    /// What we granted: (from cycle, offset), oldest first.
    granted: Vec<(u64, u32)>,
    /// Ticks issued when the last RESEND for this write was offered.
    last_resend: Option<u64>,
    /// Ticks issued when the range last became something to ask for (at
    /// the write, or when a GRANT raised an open range's end past `from`).
    nonempty_since: u64,
    expired: bool,
}

impl Slot {
    /// Offsets granted that were current at some cycle of `lo..=hi`.
    fn granted_between(&self, lo: u64, hi: u64) -> Vec<u32> {
        let mut out = Vec::new();
        for (i, &(from, value)) in self.granted.iter().enumerate() {
            let until = self.granted.get(i + 1).map_or(u64::MAX, |g| g.0);
            if from <= hi && until > lo {
                out.push(value);
            }
        }
        out
    }

    fn granted_now(&self) -> u32 {
        self.granted.last().map_or(0, |g| g.1)
    }

    /// The range's end as the block asks for it now.
    fn end_now(&self) -> u32 {
        if self.open {
            self.to.max(self.granted_now())
        } else {
            self.to
        }
    }
}

/// The offer the block shows, from the cycle it appeared.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Offer {
    slot: u16,
    offset: u32,
    length: u32,
    expire: bool,
    since: u64,
}

#[derive(Debug, Default)]
struct Coverage {
    writes: u64,
    resends: u64,
    repeat_resends: u64,
    expiries: u64,
    expiries_withdrawn: u64,
    /// Offers that waited on the control sender.
    held_cycles: u64,
    /// Offers for a slot at the edge of a group (15 or 0 in it) while the
    /// previous cycle's offer was still held.
    held_at_group_edge: u64,
    grants_raising_end: u64,
}

struct Bench {
    sim: Sim<ResendTimer>,
    cfg: Config,
    rng: ChaCha8Rng,
    slots: BTreeMap<u16, Slot>,
    /// Slots the stimulus draws from most of the time.
    pool: Vec<u16>,
    ticks: u64,
    offer: Option<Offer>,
    /// The offer on the outputs waited at least a cycle; so did the last
    /// one taken.
    offer_held: bool,
    last_offer_held: bool,
    last_grant: u64,
    cov: Coverage,
}

impl Bench {
    fn new(name: &str, cfg: Config) -> Bench {
        let mut pool = Vec::new();
        // Group pairs (g, g + 1) around a group's end and a word's end
        // (group 63 | 64, the last word's last group), slots 12-15 of the
        // first and 0-3 of the second.
        for g in [0u32, 7, 63, 127, 511, 1022] {
            for s in 12..16 {
                pool.push((g * 16 + s) as u16);
            }
            for s in 0..4 {
                pool.push(((g + 1) * 16 + s) as u16);
            }
        }
        let mut b = Bench {
            sim: Sim::traced_on_failure(name),
            cfg,
            rng: ChaCha8Rng::seed_from_u64(cfg.seed),
            slots: BTreeMap::new(),
            pool,
            ticks: 0,
            offer: None,
            offer_held: false,
            last_offer_held: false,
            last_grant: 0,
            cov: Coverage::default(),
        };
        b.sim.set_cfg_resend_ticks(cfg.resend_ticks);
        b.sim.set_cfg_resend_interval(cfg.resend_interval);
        b.sim.set_cfg_timeout_ticks(cfg.timeout_ticks);
        b.sim.set_reset(true);
        b.sim.tick();
        b.sim.set_reset(false);
        for _ in 0..CLEAR_CYCLES {
            b.sim.tick();
            assert!(!b.sim.m_resend_valid(), "an offer while clearing");
        }
        b
    }

    fn pick_slot(&mut self) -> u16 {
        if self.rng.gen_bool(0.85) {
            self.pool[self.rng.gen_range(0..self.pool.len())]
        } else {
            self.rng.gen_range(0..SLOTS) as u16
        }
    }

    fn run(&mut self) -> &Coverage {
        let end = self.sim.cycle() + self.cfg.ticks * TICK_EVERY;
        while self.sim.cycle() < end {
            self.step();
        }
        &self.cov
    }

    /// One cycle: look at the offer the last edge left, then drive this
    /// cycle's inputs and clock.
    fn step(&mut self) {
        let cycle = self.sim.cycle();
        self.observe(cycle);

        // The control sender.
        let ready = self.rng.gen_bool(self.cfg.ready);
        self.sim.set_m_resend_ready(ready);
        if let Some(o) = self.offer {
            if ready {
                self.take(o, cycle);
                self.offer = None;
                self.last_offer_held = std::mem::take(&mut self.offer_held);
            } else {
                self.cov.held_cycles += 1;
                self.offer_held = true;
            }
        }

        // A tick, once every sweep has ended.
        let tick = cycle % TICK_EVERY == 0;
        if tick {
            assert_eq!(
                self.sim.sweeps() as u64,
                self.ticks,
                "cycle {cycle}: a sweep outlasted its tick"
            );
            self.owed(cycle);
            self.ticks += 1;
        }
        self.sim.set_tick(tick);

        // The engine: a write, or a GRANT sent.
        self.sim.set_s_watch_valid(false);
        self.sim.set_s_grant_valid(false);
        let in_sweep = self.ticks > self.sim.sweeps() as u64;
        let p_write = if in_sweep {
            self.cfg.write_in_sweep
        } else {
            self.cfg.write
        };
        // Now and then the message whose expiry is on offer speaks (the
        // expiry must be withdrawn).
        let speaks = self
            .offer
            .filter(|o| o.expire && self.rng.gen_bool(0.3))
            .map(|o| o.slot);
        if let Some(slot) = speaks {
            self.write(cycle, slot);
        } else if self.rng.gen_bool(p_write) {
            let slot = self.pick_slot();
            self.write(cycle, slot);
        } else if cycle >= self.last_grant + GRANT_GAP && self.rng.gen_bool(0.01) {
            self.grant(cycle);
        }
        self.sim.tick();
    }

    fn write(&mut self, cycle: u64, slot: u16) {
        let live = self.rng.gen_bool(0.8);
        let was_live = self.slots.get(&slot).is_some_and(|s| s.live && !s.expired);
        let new = live && (!was_live || self.rng.gen_bool(0.1));
        let from = self.rng.gen_range(0..1_000_000u32);
        // A few empty ranges (nothing to ask for unless granted more).
        let to = if self.rng.gen_bool(0.1) {
            from
        } else {
            self.rng.gen_range(from..=1_000_000)
        };
        let open = self.rng.gen_bool(0.5);
        self.sim.set_s_watch_valid(true);
        self.sim.set_s_watch_slot(slot);
        self.sim.set_s_watch_live(live);
        self.sim.set_s_watch_from(from);
        self.sim.set_s_watch_to(to);
        self.sim.set_s_watch_open(open);
        self.sim.set_s_watch_new(new);
        let mut granted = self
            .slots
            .get(&slot)
            .map(|s| s.granted.clone())
            .unwrap_or_else(|| vec![(0, 0)]);
        if new {
            granted.push((cycle + 1, 0));
        }
        self.slots.insert(
            slot,
            Slot {
                live,
                from,
                to,
                open,
                written: cycle,
                ticks_at_write: self.ticks,
                granted,
                last_resend: None,
                nonempty_since: self.ticks,
                expired: false,
            },
        );
        self.cov.writes += 1;
    }

    fn grant(&mut self, cycle: u64) {
        let live: Vec<u16> = self
            .slots
            .iter()
            .filter(|(_, s)| s.live && !s.expired)
            .map(|(&k, _)| k)
            .collect();
        if live.is_empty() {
            return;
        }
        let slot = live[self.rng.gen_range(0..live.len())];
        let offset = self.rng.gen_range(0..=1_000_000u32);
        self.sim.set_s_grant_valid(true);
        self.sim.set_s_grant_slot(slot);
        self.sim.set_s_grant_offset(offset);
        let s = self.slots.get_mut(&slot).unwrap();
        if s.open && offset > s.to {
            self.cov.grants_raising_end += 1;
        }
        let was_empty = s.end_now() <= s.from;
        s.granted.push((cycle + 1, offset));
        if was_empty && s.end_now() > s.from {
            s.nonempty_since = self.ticks;
        }
        self.last_grant = cycle;
    }

    /// The offer on the block's outputs now: a new one is checked.
    fn observe(&mut self, cycle: u64) {
        if !self.sim.m_resend_valid() {
            if let Some(o) = self.offer.take() {
                self.offer_held = false;
                // Withdrawn: only an expiry whose slot was written since.
                assert!(o.expire, "cycle {cycle}: RESEND {o:?} withdrawn");
                let s = &self.slots[&o.slot];
                assert!(
                    s.written + 2 >= o.since,
                    "cycle {cycle}: expiry {o:?} withdrawn with no write to its slot (last {})",
                    s.written
                );
                self.cov.expiries_withdrawn += 1;
            }
            return;
        }
        let seen = Offer {
            slot: self.sim.m_resend_slot(),
            offset: self.sim.m_resend_offset(),
            length: self.sim.m_resend_length(),
            expire: self.sim.m_resend_expire(),
            since: cycle,
        };
        if let Some(o) = self.offer {
            let same = Offer {
                since: o.since,
                ..seen
            };
            if o == same {
                return;
            }
            // An expiry withdrawn and another offer in its place at once.
            assert!(
                o.expire && self.slots[&o.slot].written + 2 >= o.since,
                "cycle {cycle}: offer {o:?} changed to {seen:?} while held"
            );
            self.cov.expiries_withdrawn += 1;
            self.offer_held = false;
        }
        self.check_new(seen, cycle);
        self.offer = Some(seen);
    }

    fn check_new(&mut self, o: Offer, cycle: u64) {
        let cfg = self.cfg;
        let ticks = self.ticks;
        if (o.slot % 16 == 15 || o.slot % 16 == 0) && self.last_offer_held {
            self.cov.held_at_group_edge += 1;
        }
        let silence = self.sim.m_resend_silence() as u64;
        let Some(s) = self.slots.get_mut(&o.slot) else {
            panic!("cycle {cycle}: {o:?} for a slot never written");
        };
        let what = if o.expire { "expiry" } else { "RESEND" };
        assert!(
            s.written + 3 <= cycle,
            "cycle {cycle}: {what} {o:?} for a slot written at {} (read before the write)",
            s.written
        );
        assert!(s.live, "cycle {cycle}: {what} {o:?} for a dead slot");
        assert!(
            !s.expired,
            "cycle {cycle}: {what} {o:?} for an expired slot"
        );
        // Ticks since the write; the sweep under way at the write may visit
        // the entry later too, so its silence is at most one more.
        let silence_max = ticks - s.ticks_at_write + 1;
        assert!(
            silence <= silence_max,
            "cycle {cycle}: {what} {o:?} says {silence} ticks of silence, at most {silence_max}"
        );
        if o.expire {
            assert!(
                cfg.timeout_ticks != 0,
                "cycle {cycle}: expiry with timeout_ticks 0"
            );
            assert!(
                silence_max >= cfg.timeout_ticks as u64,
                "cycle {cycle}: expiry {o:?} after at most {silence_max} ticks of silence"
            );
            s.expired = true;
            self.cov.expiries += 1;
            return;
        }
        assert!(
            cfg.resend_ticks != 0,
            "cycle {cycle}: RESEND with resend_ticks 0"
        );
        match s.last_resend {
            None => assert!(
                silence_max >= cfg.resend_ticks as u64,
                "cycle {cycle}: first RESEND {o:?} after at most {silence_max} ticks of silence"
            ),
            Some(at) => {
                assert!(
                    ticks - at >= cfg.resend_interval as u64,
                    "cycle {cycle}: RESEND {o:?} {} ticks after the last",
                    ticks - at
                );
                self.cov.repeat_resends += 1;
            }
        }
        assert_eq!(
            o.offset, s.from,
            "cycle {cycle}: RESEND {o:?}: offset, slot {s:?}"
        );
        // The entry was read two cycles ago; what we granted may have been
        // on its way into the block's RAM then.
        let ends: Vec<u32> = if s.open {
            s.granted_between(cycle - 6, cycle - 2)
                .into_iter()
                .map(|g| s.to.max(g))
                .collect()
        } else {
            vec![s.to]
        };
        assert!(
            ends.iter().any(|&e| e > s.from && e - s.from == o.length),
            "cycle {cycle}: RESEND {o:?}: length, ends {ends:?}, slot {s:?}"
        );
        s.last_resend = Some(ticks);
        self.cov.resends += 1;
    }

    /// The control sender took `o` at the edge that ends `cycle`.
    fn take(&mut self, o: Offer, cycle: u64) {
        if o.expire {
            let s = &self.slots[&o.slot];
            assert!(
                s.written + 3 <= o.since,
                "cycle {cycle}: expiry {o:?} taken though its slot was written at {}",
                s.written
            );
        }
    }

    /// At a tick, before it: what every entry is owed by now.
    fn owed(&self, cycle: u64) {
        let cfg = self.cfg;
        for (&slot, s) in &self.slots {
            if !s.live || s.expired || s.written + 3 > cycle {
                continue;
            }
            // Whole ticks (each with its sweep) since the write.
            let silent = self.ticks - s.ticks_at_write;
            if cfg.timeout_ticks != 0 && silent > cfg.timeout_ticks as u64 {
                panic!("cycle {cycle}: slot {slot} silent {silent} ticks, not expired: {s:?}");
            }
            // Nothing to ask for, or not since the last sweep began (a
            // GRANT raised the end meanwhile; one more for the GRANT on its
            // way into the block's RAM when a sweep starts).
            if cfg.resend_ticks == 0 || s.end_now() <= s.from || self.ticks - s.nonempty_since < 2 {
                continue;
            }
            let late = match s.last_resend {
                None => silent > cfg.resend_ticks as u64,
                Some(at) => {
                    cfg.resend_interval != 0 && self.ticks - at > cfg.resend_interval as u64
                }
            };
            // The offer on the outputs may be this slot's, not yet seen.
            let on_offer = self.offer.is_some_and(|o| o.slot == slot);
            assert!(
                !late || on_offer,
                "cycle {cycle}: slot {slot} owed a RESEND: {silent} ticks silent, {s:?}"
            );
        }
    }
}

fn run(name: &str, cfg: Config) -> Coverage {
    let mut b = Bench::new(name, cfg);
    b.run();
    let cov = std::mem::take(&mut b.cov);
    eprintln!("{name}: {cov:?}");
    cov
}

/// HomaModule's shape of recovery, scaled: a RESEND after 3 silent ticks,
/// then every 2, expiry after 9; the control sender often busy.
#[test]
fn resends_and_expiries_come_on_time_with_the_output_held_back() {
    let cov = run(
        "resend_timer_held_back",
        Config {
            resend_ticks: 3,
            resend_interval: 2,
            timeout_ticks: 9,
            ready: 0.3,
            write: 0.01,
            write_in_sweep: 0.0003,
            ticks: 300,
            seed: 1,
        },
    );
    assert!(cov.resends > 300, "{cov:?}");
    assert!(cov.repeat_resends > 100, "{cov:?}");
    assert!(cov.expiries > 30, "{cov:?}");
    assert!(cov.expiries_withdrawn > 5, "{cov:?}");
    assert!(cov.held_at_group_edge > 50, "{cov:?}");
    assert!(cov.grants_raising_end > 10, "{cov:?}");
}

/// Every live entry due at every sweep (resend_ticks 1, interval 1, no
/// expiry): dues back to back, across every group's and word's end.
#[test]
fn an_entry_due_every_sweep_gets_a_resend_every_sweep() {
    let cov = run(
        "resend_timer_every_sweep",
        Config {
            resend_ticks: 1,
            resend_interval: 1,
            timeout_ticks: 0,
            ready: 0.5,
            write: 0.005,
            write_in_sweep: 0.0003,
            ticks: 200,
            seed: 2,
        },
    );
    assert_eq!(cov.expiries, 0, "{cov:?}");
    assert!(cov.repeat_resends > 1_000, "{cov:?}");
    assert!(cov.held_at_group_edge > 100, "{cov:?}");
}

//! Block testbench of the winner tree: updates streamed into the Verilator
//! model, one per cycle when the stimulus allows, against a pure-Rust model
//! (every leaf in an array, the present ones in a `BTreeSet` ordered by
//! (rank, unwrapped age)). In every cycle the root must be exactly the
//! model's best entry after the updates that have reached it, `m_valid` must
//! pulse exactly `LATENCY_CYCLES` after each update, and `m_settled` must say
//! whether any update is still on its way.
//!
//! Stimulus: leaves from a small hot pool (siblings and cousins, so updates
//! meet on their paths one cycle apart, the case DESIGN NOTES argues needs no
//! bypass) mixed with leaves from all 16,384; ranks from a narrow range so
//! ties of rank are common and the age decides; ages from a counter that
//! starts just below 2^32, so the serial-number compare is exercised across
//! the wrap.

use std::collections::{BTreeSet, VecDeque};

use homa_hw::sched::winner_tree::{Entry, CLEAR_CYCLES, LATENCY_CYCLES, LEAVES};
use homa_hw_sim::{Sim, WinnerTree};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The root as the card shows it: (index, rank, age) or nothing.
type Root = Option<(u16, u32, u32)>;

/// The reference: leaves as an array, the present ones ordered.
struct Model {
    /// Leaf i's (rank, age as an unwrapped counter), if present.
    leaves: Vec<Option<(u32, u64)>>,
    /// (rank, age, leaf) of every present leaf: the first is the root.
    order: BTreeSet<(u32, u64, u16)>,
    /// Present leaves stamped before the age counter wrapped (age < 2^32).
    before_wrap: usize,
}

impl Model {
    fn new() -> Model {
        Model {
            leaves: vec![None; LEAVES],
            order: BTreeSet::new(),
            before_wrap: 0,
        }
    }

    fn apply(&mut self, index: u16, entry: Option<(u32, u64)>) {
        if let Some((rank, age)) = self.leaves[index as usize].take() {
            self.order.remove(&(rank, age, index));
            self.before_wrap -= (age < 1 << 32) as usize;
        }
        if let Some((rank, age)) = entry {
            self.order.insert((rank, age, index));
            self.before_wrap += (age < 1 << 32) as usize;
        }
        self.leaves[index as usize] = entry;
    }

    fn root(&self) -> Root {
        self.order
            .first()
            .map(|&(rank, age, index)| (index, rank, age as u32))
    }
}

struct Pending {
    /// Cycle the update was taken in.
    cycle: u64,
    /// Update number, for messages.
    n: u64,
    /// The model's root once this update is in.
    root: Root,
}

/// What a run covered.
#[derive(Debug, Default)]
struct Coverage {
    updates: u64,
    inserts: u64,
    key_changes: u64,
    deletes: u64,
    /// An update whose leaf is the sibling of the previous cycle's update's
    /// leaf (they meet one level up, one cycle apart).
    sibling_back_to_back: u64,
    /// Roots whose winner won on age (another present entry had its rank).
    age_decided: u64,
    /// Roots checked while entries stamped before and after the age
    /// counter's wrap were both present (the serial compare across the wrap).
    across_wrap: u64,
    max_present: usize,
}

struct Bench {
    sim: Sim<WinnerTree>,
    model: Model,
    pending: VecDeque<Pending>,
    /// The root the card must show now.
    root: Root,
    cov: Coverage,
    /// Next age stamp (unwrapped; the card sees its low 32 bits).
    next_age: u64,
    last_index: Option<(u64, u16)>,
    label: String,
}

/// Ages start here, so the counter wraps early in every run.
const FIRST_AGE: u64 = (1 << 32) - 3_000;

impl Bench {
    fn new(name: &str, label: &str) -> Bench {
        let mut b = Bench {
            sim: Sim::traced_on_failure(name),
            model: Model::new(),
            pending: VecDeque::new(),
            root: None,
            cov: Coverage::default(),
            next_age: FIRST_AGE,
            last_index: None,
            label: label.to_string(),
        };
        b.reset();
        b
    }

    /// Pulses reset; checks the sweep keeps `s_ready` low for exactly
    /// `CLEAR_CYCLES` and leaves the root empty and settled.
    fn reset(&mut self) {
        self.sim.set_s_valid(false);
        self.sim.set_reset(true);
        self.sim.eval();
        assert!(!self.sim.s_ready(), "{}: ready during reset", self.label);
        self.sim.tick();
        self.sim.set_reset(false);
        let mut waited = 0;
        while !self.sim.s_ready() {
            assert!(
                !self.sim.m_valid(),
                "{}: m_valid during the sweep",
                self.label
            );
            self.sim.tick();
            waited += 1;
            assert!(waited <= CLEAR_CYCLES, "{}: sweep too long", self.label);
        }
        assert_eq!(waited, CLEAR_CYCLES, "{}: sweep length", self.label);
        assert!(!self.sim.m_present(), "{}: root after reset", self.label);
        assert!(self.sim.m_settled(), "{}: settled after reset", self.label);
        self.model = Model::new();
        self.pending.clear();
        self.root = None;
    }

    /// A fresh age stamp (a message's birth).
    fn birth(&mut self) -> u64 {
        self.next_age += 1;
        self.next_age
    }

    /// One cycle, offering an update of `index` to `entry` (or nothing), then
    /// the checks of the cycle after it.
    fn step(&mut self, update: Option<(u16, Option<(u32, u64)>)>) {
        let cycle = self.sim.cycle();
        assert!(
            self.sim.s_ready(),
            "{}: cycle {cycle}: ready low",
            self.label
        );
        match update {
            Some((index, entry)) => {
                self.sim.set_s_valid(true);
                self.sim.set_s_index(index);
                self.sim.set_s_present(entry.is_some());
                let (rank, age) = entry.unwrap_or((0xabcde, 0x1234_5678));
                self.sim.set_s_rank(rank);
                self.sim.set_s_age(age as u32);
                self.cover(cycle, index, entry);
                self.model.apply(index, entry);
                self.pending.push_back(Pending {
                    cycle,
                    n: self.cov.updates,
                    root: self.model.root(),
                });
                self.cov.updates += 1;
            }
            None => {
                // Idle: junk on the data lines must be ignored.
                self.sim.set_s_valid(false);
                self.sim.set_s_index(0x2aaa);
                self.sim.set_s_present(true);
                self.sim.set_s_rank(0);
                self.sim.set_s_age(0);
            }
        }
        self.sim.tick();
        self.check();
    }

    fn cover(&mut self, cycle: u64, index: u16, entry: Option<(u32, u64)>) {
        let was = self.model.leaves[index as usize];
        let c = &mut self.cov;
        match (was, entry) {
            (None, Some(_)) => c.inserts += 1,
            (Some(_), Some(_)) => c.key_changes += 1,
            (Some(_), None) => c.deletes += 1,
            (None, None) => {}
        }
        if let Some((at, last)) = self.last_index {
            if at + 1 == cycle && last ^ 1 == index {
                c.sibling_back_to_back += 1;
            }
        }
        self.last_index = Some((cycle, index));
    }

    fn check(&mut self) {
        let now = self.sim.cycle();
        let label = &self.label;
        let due = self
            .pending
            .front()
            .is_some_and(|p| p.cycle + LATENCY_CYCLES == now);
        if due {
            let p = self.pending.pop_front().unwrap();
            assert!(
                self.sim.m_valid(),
                "{label}: cycle {now}: update {} (taken in cycle {}) not at the root after {LATENCY_CYCLES} cycles",
                p.n,
                p.cycle
            );
            self.root = p.root;
            if let Some((_, rank, age)) = p.root {
                let ties = self
                    .model
                    .order
                    .range((rank, 0, 0)..(rank + 1, 0, 0))
                    .count();
                if ties > 1 {
                    self.cov.age_decided += 1;
                }
                let _ = age;
                if self.model.before_wrap > 0 && self.model.before_wrap < self.model.order.len() {
                    self.cov.across_wrap += 1;
                }
            }
        } else {
            assert!(
                !self.sim.m_valid(),
                "{label}: cycle {now}: m_valid with no update due ({} in flight)",
                self.pending.len()
            );
        }
        let got = self
            .sim
            .m_present()
            .then(|| (self.sim.m_index(), self.sim.m_rank(), self.sim.m_age()));
        assert_eq!(
            got, self.root,
            "{label}: cycle {now}: root, card (left) vs model (right), as (leaf, rank, age)"
        );
        assert_eq!(
            self.sim.m_settled(),
            self.pending.is_empty(),
            "{label}: cycle {now}: m_settled with {} updates in flight",
            self.pending.len()
        );
        self.cov.max_present = self.cov.max_present.max(self.model.order.len());
    }

    fn drain(&mut self) {
        while !self.pending.is_empty() {
            self.step(None);
        }
        self.step(None);
    }
}

/// Leaves most updates touch: pairs of siblings, and cousins under one
/// subtree, so paths meet at every level.
fn hot_leaves(rng: &mut ChaCha8Rng) -> Vec<u16> {
    let mut hot = Vec::new();
    for _ in 0..8 {
        let base = rng.gen_range(0..LEAVES as u16 / 2) * 2;
        hot.push(base);
        hot.push(base + 1);
    }
    let subtree = rng.gen_range(0..LEAVES as u16 / 64) * 64;
    for i in 0..16 {
        hot.push(subtree + i * 4);
    }
    hot.push(0);
    hot.push(LEAVES as u16 - 1);
    hot
}

/// `updates` random updates (about one cycle in eight idle), checked every cycle.
fn random_run(seed: u64, updates: u64) -> Coverage {
    let label = format!("seed {seed}");
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut b = Bench::new(&format!("winner_tree_seed{seed}"), &label);
    let hot = hot_leaves(&mut rng);
    while b.cov.updates < updates {
        if rng.gen_ratio(1, 8) {
            b.step(None);
            continue;
        }
        let index = if let (Some((_, last)), true) = (b.last_index, rng.gen_ratio(1, 4)) {
            last ^ 1
        } else if rng.gen_ratio(3, 4) {
            hot[rng.gen_range(0..hot.len())]
        } else {
            rng.gen_range(0..LEAVES as u16)
        };
        let entry = match b.model.leaves[index as usize] {
            // A message's key falls as its bytes arrive; sometimes it leaves.
            Some((rank, age)) => match rng.gen_range(0..10) {
                0..=2 => None,
                3..=7 => Some((rank.saturating_sub(rng.gen_range(0..4)), age)),
                // Any key change at all, either direction (the sender's
                // oldest-first order and a restarted RPC do this).
                _ => Some((rng.gen_range(0..16), age)),
            },
            None if rng.gen_ratio(1, 20) => None,
            None => {
                let rank = if rng.gen_ratio(1, 50) {
                    rng.gen_range(0..1 << 20)
                } else {
                    rng.gen_range(0..16)
                };
                Some((rank, b.birth()))
            }
        };
        b.step(Some((index, entry)));
    }
    b.drain();
    b.cov
}

#[test]
fn random_updates_keep_the_root_exact() {
    for seed in 1..=3 {
        let cov = random_run(seed, 60_000);
        eprintln!("seed {seed}: {cov:?}");
        assert!(cov.sibling_back_to_back > 5_000, "seed {seed}: {cov:?}");
        assert!(cov.age_decided > 10_000, "seed {seed}: {cov:?}");
        assert!(cov.across_wrap > 10_000, "seed {seed}: {cov:?}");
        assert!(
            cov.deletes > 5_000 && cov.key_changes > 10_000,
            "seed {seed}: {cov:?}"
        );
    }
}

/// The long run behind the README's figure: `cargo test --release -p
/// homa-hw-sim --test winner_tree -- --ignored` (about 2 million cycles).
#[test]
#[ignore]
fn two_million_random_updates() {
    let cov = random_run(42, 2_000_000);
    eprintln!("{cov:?}");
}

/// Every update a sibling of the one before, back to back, for every level:
/// leaves 2k and 2k+1, then leaves in one subtree that meet higher up.
#[test]
fn updates_that_meet_one_cycle_apart() {
    let mut b = Bench::new("winner_tree_meet", "meet");
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for level in 0..14u32 {
        let stride = 1u16 << level;
        for round in 0..50u32 {
            let base = rng.gen_range(0..LEAVES as u16 / (2 * stride)) * 2 * stride;
            // Two leaves whose paths first meet `level + 1` levels up, both
            // present and then one improving past the other, back to back.
            let (a, c) = (base, base + stride);
            let (ra, rc) = (rng.gen_range(0..8), rng.gen_range(0..8));
            let (aa, ac) = (b.birth(), b.birth());
            b.step(Some((a, Some((ra, aa)))));
            b.step(Some((c, Some((rc, ac)))));
            b.step(Some((a, Some((rc, aa)))));
            b.step(Some((c, if round % 2 == 0 { None } else { Some((0, ac)) })));
            b.step(Some((a, None)));
        }
    }
    b.drain();
    assert!(b.cov.sibling_back_to_back >= 50, "{:?}", b.cov);
}

#[test]
fn reset_forgets_every_entry() {
    let mut b = Bench::new("winner_tree_reset", "reset");
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    for _ in 0..500 {
        let index = rng.gen_range(0..LEAVES as u16);
        let age = b.birth();
        b.step(Some((index, Some((rng.gen_range(0..100), age)))));
    }
    // Reset with updates still in flight: they are dropped.
    b.reset();
    b.step(None);
    assert!(!b.sim.m_present());
    let age = b.birth();
    b.step(Some((5, Some((3, age)))));
    b.drain();
    assert_eq!(b.root, Some((5, 3, age as u32)));
}

#[test]
fn entry_order_is_the_rtl_order() {
    let older = Entry {
        rank: 7,
        age: u32::MAX - 1,
    };
    let newer = Entry { rank: 7, age: 2 };
    assert!(older.beats(&newer), "serial order across the wrap");
    assert!(!newer.beats(&older));
    assert!(Entry { rank: 6, age: 9 }.beats(&older));
    assert!(!older.beats(&older), "strict");
}

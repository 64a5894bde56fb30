//! Block testbench of the RPC table: requests streamed into the Verilator
//! model, one per cycle when the stimulus allows, against a pure-Rust model of
//! the table (4,096 sets x 4 ways, `set_index`, the lowest free way taken).
//! Every response (timing included) and the occupancy in every cycle must be
//! the model's. Keys come from a biased pool, so hits, duplicate inserts, full
//! sets and same-set requests back to back and one cycle apart are frequent;
//! a directed test drives the same-set sequences the bypass exists for, and a last test holds
//! RustHDL's own simulation and Verilator to the same outputs cycle by cycle.

mod support;

use std::collections::VecDeque;
use support::rusthdl::rtl_tick;

use homa_hw::rx::rpc_table::{
    self as rt, set_index, slot, RpcKey, RpcOp, CLEAR_CYCLES, LATENCY_CYCLES, SETS, SLOTS, WAYS,
};
use homa_hw_sim::{RpcTable, Sim};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;

const REMOVE_SLOT: u8 = RpcOp::RemoveSlot as u8;

/// A REMOVE_SLOT request's key: the slot in the low 14 bits.
fn slot_key(slot: u16) -> RpcKey {
    RpcKey {
        id: slot as u64,
        ..RpcKey::default()
    }
}

/// A REMOVE_SLOT aimed where `key` lives or would: its set, a way drawn
/// with the low ways (taken first) likelier.
fn slot_of(rng: &mut ChaCha8Rng, key: RpcKey) -> RpcKey {
    let way = [0, 0, 0, 1, 1, 2, 3][rng.gen_range(0..7)];
    slot_key(slot(set_index(&key), way))
}

/// The set a request works on: the hash's, or REMOVE_SLOT's slot's.
fn request_set(op: u8, key: &RpcKey) -> u16 {
    if op == REMOVE_SLOT {
        (key.id as u16 & (SLOTS as u16 - 1)) / WAYS as u16
    } else {
        set_index(key)
    }
}

/// One response, as the model predicts it or the card gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Rsp {
    op: u8,
    hit: bool,
    inserted: bool,
    full: bool,
    slot: u16,
    /// REMOVE_SLOT: the key removed (0 on a miss); others: the request's.
    key: u128,
}

/// The reference: the table as a plain array, one request at a time.
struct Model {
    sets: Vec<[Option<RpcKey>; WAYS]>,
    occupancy: usize,
}

impl Model {
    fn new() -> Model {
        Model {
            sets: vec![[None; WAYS]; SETS],
            occupancy: 0,
        }
    }

    fn apply(&mut self, op: u8, key: RpcKey) -> Rsp {
        if op == REMOVE_SLOT {
            let at = key.id as u16 & (SLOTS as u16 - 1);
            let (set, way) = (at / WAYS as u16, at as usize % WAYS);
            let gone = self.sets[set as usize][way].take();
            self.occupancy -= gone.is_some() as usize;
            return Rsp {
                op,
                hit: gone.is_some(),
                inserted: false,
                full: false,
                slot: if gone.is_some() { at } else { 0 },
                key: gone.map_or(0, |k| k.to_u128()),
            };
        }
        let set = set_index(&key);
        let ways = &mut self.sets[set as usize];
        let found = ways.iter().position(|w| *w == Some(key));
        let mut rsp = Rsp {
            op,
            hit: found.is_some(),
            inserted: false,
            full: false,
            slot: found.map_or(0, |w| slot(set, w)),
            key: key.to_u128(),
        };
        match (RpcOp::from_code(op), found) {
            (Some(RpcOp::Insert), None) => match ways.iter().position(|w| w.is_none()) {
                Some(w) => {
                    ways[w] = Some(key);
                    self.occupancy += 1;
                    rsp.inserted = true;
                    rsp.slot = slot(set, w);
                }
                None => rsp.full = true,
            },
            (Some(RpcOp::Remove), Some(w)) => {
                ways[w] = None;
                self.occupancy -= 1;
            }
            _ => {}
        }
        rsp
    }
}

/// How often each case happened: the coverage a run must reach.
#[derive(Debug, Default)]
struct Coverage {
    requests: u64,
    lookup_hit: u64,
    lookup_miss: u64,
    inserted: u64,
    insert_dup: u64,
    full: u64,
    remove_hit: u64,
    remove_miss: u64,
    remove_slot_hit: u64,
    remove_slot_miss: u64,
    /// A request to the set the request of the previous cycle wrote.
    same_set_after_write: u64,
    /// ... with the very key the previous request inserted or removed.
    same_key_after_write: u64,
    /// A request to the set a request two cycles before it wrote (the
    /// older of the two writes in flight its RAM read misses).
    same_set_two_after_write: u64,
    same_key_two_after_write: u64,
    max_occupancy: usize,
}

struct Pending {
    /// Request number, from 0, for messages.
    n: u64,
    /// Cycle the request was accepted (`Sim::cycle` before the tick).
    cycle: u64,
    key: RpcKey,
    want: Rsp,
    /// The model's occupancy once this request ran.
    occupancy: usize,
}

/// The model and the card side by side, checked every cycle.
struct Bench {
    sim: Sim<RpcTable>,
    model: Model,
    pending: VecDeque<Pending>,
    cov: Coverage,
    /// Occupancy the card must show: the model's after the last response seen.
    occupancy: usize,
    /// (cycle, set, key) of the last two requests that changed the table,
    /// the latest first.
    last_writes: [Option<(u64, u16, RpcKey)>; 2],
    /// A label (the seed or the test) for failure messages.
    label: String,
    requests: u64,
}

fn words_to_u128(w: [u32; 4]) -> u128 {
    w.iter().rev().fold(0, |v, &x| v << 32 | x as u128)
}

fn key_words(k: &RpcKey) -> [u32; 4] {
    let v = k.to_u128();
    std::array::from_fn(|i| (v >> (32 * i)) as u32)
}

impl Bench {
    fn new(name: &str, label: &str) -> Bench {
        let mut b = Bench {
            sim: Sim::traced_on_failure(name),
            model: Model::new(),
            pending: VecDeque::new(),
            cov: Coverage::default(),
            occupancy: 0,
            last_writes: [None; 2],
            label: label.to_string(),
            requests: 0,
        };
        b.reset();
        b
    }

    /// Pulses reset, checks the sweep keeps ready low for exactly
    /// `CLEAR_CYCLES`, and forgets the model's state and anything in flight.
    fn reset(&mut self) {
        self.sim.set_s_req_valid(false);
        self.sim.set_reset(true);
        self.sim.eval();
        assert!(
            !self.sim.s_req_ready(),
            "{}: ready during reset",
            self.label
        );
        self.sim.tick();
        self.sim.set_reset(false);
        let mut waited = 0;
        while !self.sim.s_req_ready() {
            assert!(
                !self.sim.m_rsp_valid(),
                "{}: response during the sweep",
                self.label
            );
            assert_eq!(
                self.sim.occupancy(),
                0,
                "{}: occupancy during the sweep",
                self.label
            );
            self.sim.tick();
            waited += 1;
            assert!(
                waited <= CLEAR_CYCLES,
                "{}: ready still low after the sweep",
                self.label
            );
        }
        assert_eq!(waited, CLEAR_CYCLES, "{}: sweep length", self.label);
        self.model = Model::new();
        self.pending.clear();
        self.occupancy = 0;
        self.last_writes = [None; 2];
    }

    /// One clock cycle, offering `req` (op code, key) or nothing; then checks
    /// whatever response is due and the occupancy.
    fn step(&mut self, req: Option<(u8, RpcKey)>) {
        let cycle = self.sim.cycle();
        assert!(
            self.sim.s_req_ready(),
            "{}: cycle {cycle}: ready low",
            self.label
        );
        match req {
            Some((op, key)) => {
                self.sim.set_s_req_valid(true);
                self.sim.set_s_req_op(op);
                self.sim.set_s_req_key(&key_words(&key));
                self.issue(cycle, op, key);
            }
            None => {
                // Idle: drive junk that must be ignored.
                self.sim.set_s_req_valid(false);
                self.sim.set_s_req_op(RpcOp::Insert as u8);
                self.sim.set_s_req_key(&[0xdead_beef; 4]);
            }
        }
        self.sim.tick();
        self.check();
    }

    fn issue(&mut self, cycle: u64, op: u8, key: RpcKey) {
        let want = self.model.apply(op, key);
        let set = request_set(op, &key);
        let c = &mut self.cov;
        c.requests += 1;
        match RpcOp::from_code(op) {
            Some(RpcOp::Lookup) if want.hit => c.lookup_hit += 1,
            Some(RpcOp::Lookup) => c.lookup_miss += 1,
            Some(RpcOp::Insert) if want.inserted => c.inserted += 1,
            Some(RpcOp::Insert) if want.hit => c.insert_dup += 1,
            Some(RpcOp::Insert) => c.full += 1,
            Some(RpcOp::Remove) if want.hit => c.remove_hit += 1,
            Some(RpcOp::Remove) => c.remove_miss += 1,
            Some(RpcOp::RemoveSlot) if want.hit => c.remove_slot_hit += 1,
            Some(RpcOp::RemoveSlot) => c.remove_slot_miss += 1,
            None => unreachable!("two-bit op codes are all defined"),
        }
        for &(at, wset, wkey) in self.last_writes.iter().flatten() {
            if at + 1 == cycle && wset == set {
                c.same_set_after_write += 1;
                c.same_key_after_write += (wkey == key) as u64;
            }
            if at + 2 == cycle && wset == set {
                c.same_set_two_after_write += 1;
                c.same_key_two_after_write += (wkey == key) as u64;
            }
        }
        let wrote = want.inserted || (op != RpcOp::Lookup as u8 && want.hit);
        if wrote {
            let written = RpcKey::from_u128(want.key);
            self.last_writes = [Some((cycle, set, written)), self.last_writes[0]];
        }
        c.max_occupancy = c.max_occupancy.max(self.model.occupancy);
        self.pending.push_back(Pending {
            n: self.requests,
            cycle,
            key,
            want,
            occupancy: self.model.occupancy,
        });
        self.requests += 1;
    }

    fn check(&mut self) {
        let now = self.sim.cycle();
        let due = self
            .pending
            .front()
            .is_some_and(|p| p.cycle + LATENCY_CYCLES == now);
        let label = &self.label;
        if !due {
            assert!(
                !self.sim.m_rsp_valid(),
                "{label}: cycle {now}: a response nobody asked for ({} pending)",
                self.pending.len()
            );
        } else {
            let p = self.pending.pop_front().unwrap();
            assert!(
                self.sim.m_rsp_valid(),
                "{label}: cycle {now}: request {} ({:?} of {:x?}) got no response {LATENCY_CYCLES} cycles after acceptance",
                p.n,
                RpcOp::from_code(p.want.op),
                p.key
            );
            let got = Rsp {
                op: self.sim.m_rsp_op(),
                hit: self.sim.m_rsp_hit(),
                inserted: self.sim.m_rsp_inserted(),
                full: self.sim.m_rsp_full(),
                slot: self.sim.m_rsp_slot(),
                key: words_to_u128(self.sim.m_rsp_key()),
            };
            assert_eq!(
                got,
                p.want,
                "{label}: cycle {now}: request {} ({:?}, set {}, key {:x?}): card (left) vs model (right)",
                p.n,
                RpcOp::from_code(p.want.op),
                set_index(&p.key),
                p.key
            );
            self.occupancy = p.occupancy;
        }
        assert_eq!(
            self.sim.occupancy() as usize,
            self.occupancy,
            "{label}: cycle {now}: occupancy"
        );
    }

    /// Idles until every response is in.
    fn drain(&mut self) {
        while !self.pending.is_empty() {
            self.step(None);
        }
        self.step(None);
    }
}

fn random_key(rng: &mut ChaCha8Rng) -> RpcKey {
    RpcKey {
        peer_ip: rng.gen(),
        peer_port: rng.gen(),
        local_port: rng.gen(),
        id: rng.gen(),
    }
}

/// `n` distinct random keys that all hash to `set`.
fn keys_in_set(rng: &mut ChaCha8Rng, set: u16, n: usize) -> Vec<RpcKey> {
    let mut keys = Vec::new();
    while keys.len() < n {
        let k = random_key(rng);
        if set_index(&k) == set && !keys.contains(&k) {
            keys.push(k);
        }
    }
    keys
}

/// Keys drawn so that most requests find something: a few hot sets with more
/// keys than ways, a small pool of scattered keys, sequential ids to one
/// peer, a wide pool (more keys than slots, so the table churns near full),
/// and now and then a key never seen.
struct KeySource {
    hot: Vec<Vec<RpcKey>>,
    pool: Vec<RpcKey>,
    wide: Vec<RpcKey>,
}

impl KeySource {
    fn new(rng: &mut ChaCha8Rng) -> KeySource {
        let hot = [0x000, 0x5a5, 0xfff]
            .iter()
            .map(|&set| keys_in_set(rng, set, 7))
            .collect();
        let mut pool: Vec<RpcKey> = (0..24).map(|_| random_key(rng)).collect();
        pool.extend((0..16).map(|n| RpcKey {
            peer_ip: 0x0a00_0007,
            peer_port: 4000,
            local_port: 40_001,
            id: 5000 + 2 * n,
        }));
        let wide = (0..3 * SLOTS / 2).map(|_| random_key(rng)).collect();
        KeySource { hot, pool, wide }
    }

    fn pick(&self, rng: &mut ChaCha8Rng, prev: Option<RpcKey>) -> RpcKey {
        let r: f64 = rng.gen();
        self.pick_by(r, rng, prev)
    }

    /// While filling the table: mostly the wide pool.
    fn pick_filling(&self, rng: &mut ChaCha8Rng, prev: Option<RpcKey>) -> RpcKey {
        let r: f64 = rng.gen();
        if r < 0.70 {
            return self.wide[rng.gen_range(0..self.wide.len())];
        }
        self.pick_by((r - 0.70) / 0.30, rng, prev)
    }

    fn pick_by(&self, r: f64, rng: &mut ChaCha8Rng, prev: Option<RpcKey>) -> RpcKey {
        match (r, prev) {
            // The same key again: a burst of packets of one RPC.
            (r, Some(k)) if r < 0.10 => k,
            (r, _) if r < 0.50 => {
                let set = &self.hot[rng.gen_range(0..self.hot.len())];
                set[rng.gen_range(0..set.len())]
            }
            (r, _) if r < 0.75 => self.pool[rng.gen_range(0..self.pool.len())],
            (r, _) if r < 0.99 => self.wide[rng.gen_range(0..self.wide.len())],
            _ => random_key(rng),
        }
    }
}

/// Inserts as often as removes, so occupancy wanders instead of filling up.
fn random_op(rng: &mut ChaCha8Rng) -> u8 {
    match rng.gen_range(0..100) {
        0..=34 => RpcOp::Insert as u8,
        35..=62 => RpcOp::Lookup as u8,
        63..=92 => RpcOp::Remove as u8,
        _ => REMOVE_SLOT,
    }
}

/// Mostly inserts: the table fills up (16,384 slots take a while).
fn filling_op(rng: &mut ChaCha8Rng) -> u8 {
    match rng.gen_range(0..100) {
        0..=79 => RpcOp::Insert as u8,
        80..=89 => RpcOp::Lookup as u8,
        90..=97 => RpcOp::Remove as u8,
        _ => REMOVE_SLOT,
    }
}

#[test]
fn the_core_boots_past_the_sweep() {
    // The card model (and a driver) waits `BOOT_CYCLES` after reset.
    assert!(homa_hw::core::BOOT_CYCLES >= CLEAR_CYCLES);
}

#[test]
fn set_index_spreads_random_keys() {
    // Not a quality proof, a sanity check: no set gets 4x its share.
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut per_set = [0u32; SETS];
    for _ in 0..SETS * 64 {
        per_set[set_index(&random_key(&mut rng)) as usize] += 1;
    }
    assert!(per_set.iter().all(|&n| n > 16 && n < 256), "{per_set:?}");
}

#[test]
fn random_operations_match_the_reference() {
    const SEED: u64 = 11;
    const CYCLES: usize = 400_000;
    const PERIOD: usize = CYCLES / 4;
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    let keys = KeySource::new(&mut rng);
    let mut bench = Bench::new("rpc_table_random", &format!("seed {SEED}"));
    let mut prev = None;
    for cycle in 0..CYCLES {
        // A reset now and then, under traffic: the table starts empty again.
        if cycle > 0 && cycle % PERIOD == 0 {
            bench.reset();
        }
        // After each reset the table is filled for a while (mostly inserts
        // of the wide pool), then occupancy wanders. Mostly back to back;
        // idle gaps now and then.
        let filling = cycle % PERIOD < 2 * PERIOD / 5;
        if rng.gen_bool(0.85) {
            let (key, op) = if filling {
                (keys.pick_filling(&mut rng, prev), filling_op(&mut rng))
            } else {
                (keys.pick(&mut rng, prev), random_op(&mut rng))
            };
            prev = Some(key);
            let key = if op == REMOVE_SLOT {
                slot_of(&mut rng, key)
            } else {
                key
            };
            bench.step(Some((op, key)));
        } else {
            bench.step(None);
        }
    }
    bench.drain();
    let c = &bench.cov;
    println!("{c:?}");
    for (name, n) in [
        ("lookup hits", c.lookup_hit),
        ("lookup misses", c.lookup_miss),
        ("new inserts", c.inserted),
        ("duplicate inserts", c.insert_dup),
        ("inserts into a full set", c.full),
        ("removes that hit", c.remove_hit),
        ("removes that missed", c.remove_miss),
        ("removes by slot that hit", c.remove_slot_hit),
        ("removes by slot of an empty slot", c.remove_slot_miss),
        (
            "same-set requests right after a write",
            c.same_set_after_write,
        ),
        (
            "same-key requests right after a write",
            c.same_key_after_write,
        ),
        (
            "same-set requests two cycles after a write",
            c.same_set_two_after_write,
        ),
        (
            "same-key requests two cycles after a write",
            c.same_key_two_after_write,
        ),
    ] {
        assert!(
            n >= 1000,
            "coverage: only {n} {name} in {} requests",
            c.requests
        );
    }
    assert!(
        c.max_occupancy > SLOTS / 2,
        "the table never got half full: {c:?}"
    );
}

#[test]
fn same_set_back_to_back_sees_each_write() {
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let set = 0x33;
    let k = keys_in_set(&mut rng, set, 6);
    let ins = RpcOp::Insert as u8;
    let look = RpcOp::Lookup as u8;
    let rem = RpcOp::Remove as u8;
    let rs = REMOVE_SLOT;
    let way = |w: usize| slot_key(slot(set, w));
    let mut bench = Bench::new("rpc_table_same_set", "same-set sequence");
    // Every request of a line goes out back to back; each line ends drained.
    let lines: Vec<Vec<(u8, RpcKey)>> = vec![
        // Fill the set (ways 0..3), then a fifth key finds it full.
        vec![
            (ins, k[0]),
            (ins, k[1]),
            (ins, k[2]),
            (ins, k[3]),
            (ins, k[4]),
        ],
        // Duplicates right after the inserts, and lookups of every way.
        vec![
            (ins, k[3]),
            (look, k[0]),
            (look, k[1]),
            (look, k[2]),
            (look, k[3]),
            (look, k[4]),
        ],
        // Free way 1, take it at once with k[4], insert k[4] again, k[5] is full.
        vec![(rem, k[1]), (ins, k[4]), (ins, k[4]), (ins, k[5])],
        // Remove twice in a row (the second misses), re-insert, look up.
        vec![(rem, k[4]), (rem, k[4]), (ins, k[4]), (look, k[4])],
        // Alternate one key every cycle.
        vec![
            (ins, k[5]),
            (rem, k[0]),
            (ins, k[5]),
            (rem, k[5]),
            (ins, k[5]),
            (look, k[5]),
        ],
        // Empty the set back to back; lookups miss right after.
        vec![
            (rem, k[2]),
            (rem, k[3]),
            (rem, k[4]),
            (rem, k[5]),
            (look, k[2]),
            (look, k[5]),
        ],
        // By slot, right behind the insert it must report (the key comes
        // from the write in flight, not the RAM), two behind, and an insert
        // right behind a remove by slot.
        vec![
            (ins, k[0]),
            (rs, way(0)),
            (ins, k[1]),
            (look, k[5]),
            (rs, way(0)),
            (ins, k[2]),
            (ins, k[3]),
            (rs, way(1)),
            (rs, way(1)),
            (rs, way(0)),
        ],
    ];
    for line in &lines {
        for &req in line {
            bench.step(Some(req));
        }
        bench.drain();
    }
    assert_eq!(bench.model.occupancy, 0);
    // The second line's walk-through, spelled out: k[4] took way 1 once freed.
    let mut model = Model::new();
    for line in &lines[..2] {
        for &(op, key) in line {
            model.apply(op, key);
        }
    }
    model.apply(rem, k[1]);
    assert_eq!(model.apply(ins, k[4]).slot, slot(set, 1));
    assert!(bench.cov.same_set_after_write >= 15, "{:?}", bench.cov);
    assert!(bench.cov.same_set_two_after_write >= 10, "{:?}", bench.cov);

    // One idle cycle between requests: the only write a read misses is then
    // the one two cycles before it, made at the very edge of the read.
    let gapped = [
        (ins, k[0]),
        (ins, k[1]),
        (look, k[0]),
        (rem, k[0]),
        (look, k[0]),
        (ins, k[2]),
        (ins, k[0]),
        (rem, k[1]),
        (ins, k[3]),
        (look, k[3]),
        (rem, k[3]),
        (ins, k[3]),
    ];
    let before = bench.cov.same_set_two_after_write;
    for &req in &gapped {
        bench.step(Some(req));
        bench.step(None);
    }
    bench.drain();
    assert!(
        bench.cov.same_set_two_after_write - before >= 8,
        "{:?}",
        bench.cov
    );
}

#[test]
fn fill_the_table_and_empty_it() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut bench = Bench::new("rpc_table_fill", "fill");
    let keys: Vec<RpcKey> = (0..4 * SLOTS).map(|_| random_key(&mut rng)).collect();
    for &k in &keys {
        bench.step(Some((RpcOp::Insert as u8, k)));
    }
    for &k in &keys {
        bench.step(Some((RpcOp::Lookup as u8, k)));
    }
    bench.drain();
    let full_sets = bench
        .model
        .sets
        .iter()
        .filter(|s| s.iter().all(Option::is_some))
        .count();
    assert!(
        bench.model.occupancy > SLOTS - 16 && full_sets > SETS - 16,
        "occupancy {} with {full_sets} full sets",
        bench.model.occupancy
    );
    for &k in &keys {
        bench.step(Some((RpcOp::Remove as u8, k)));
    }
    bench.drain();
    assert_eq!(bench.sim.occupancy(), 0);
    assert!(bench.cov.full > 1000, "{:?}", bench.cov);
}

#[test]
fn reset_forgets_every_rpc_and_requests_in_flight() {
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let mut bench = Bench::new("rpc_table_reset", "reset");
    let keys: Vec<RpcKey> = (0..200).map(|_| random_key(&mut rng)).collect();
    for &k in &keys {
        bench.step(Some((RpcOp::Insert as u8, k)));
    }
    // Reset with a request in flight: its response never comes.
    bench.reset();
    bench.step(None);
    bench.step(None);
    for &k in &keys {
        bench.step(Some((RpcOp::Lookup as u8, k)));
    }
    bench.drain();
    assert_eq!(bench.cov.lookup_hit, 0);
    assert_eq!(bench.cov.lookup_miss, keys.len() as u64);
}

// ---- RustHDL's simulation against Verilator ----

/// Every output, as both simulators report it.
#[derive(Debug, PartialEq)]
struct Outputs {
    ready: bool,
    valid: bool,
    op: u64,
    hit: bool,
    inserted: bool,
    full: bool,
    slot: u64,
    key: u128,
    occupancy: u64,
}

fn rtl_outputs(t: &rt::RpcTable) -> Outputs {
    Outputs {
        ready: t.s_req_ready.val(),
        valid: t.m_rsp_valid.val(),
        op: t.m_rsp_op.val().to_u64(),
        hit: t.m_rsp_hit.val(),
        inserted: t.m_rsp_inserted.val(),
        full: t.m_rsp_full.val(),
        slot: t.m_rsp_slot.val().to_u64(),
        key: (t.m_rsp_key.val().get_bits::<64>(64).to_u64() as u128) << 64
            | t.m_rsp_key.val().get_bits::<64>(0).to_u64() as u128,
        occupancy: t.occupancy.val().to_u64(),
    }
}

fn verilator_outputs(s: &Sim<RpcTable>) -> Outputs {
    Outputs {
        ready: s.s_req_ready(),
        valid: s.m_rsp_valid(),
        op: s.m_rsp_op() as u64,
        hit: s.m_rsp_hit(),
        inserted: s.m_rsp_inserted(),
        full: s.m_rsp_full(),
        slot: s.m_rsp_slot() as u64,
        key: words_to_u128(s.m_rsp_key()),
        occupancy: s.occupancy() as u64,
    }
}

fn to_bits128(v: u128) -> Bits<128> {
    (Bits::<128>::from((v >> 64) as u64) << 64) | Bits::<128>::from(v as u64)
}

#[test]
fn rpc_table_rusthdl_and_verilator_agree_cycle_by_cycle() {
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    let keys = KeySource::new(&mut rng);
    let mut rtl = rt::RpcTable::default();
    rtl.connect_all();
    let mut sim: Sim<RpcTable> = Sim::traced_on_failure("equivalence_rpc_table");

    // Reset, the sweep, then random requests with a reset in the middle.
    let sweep = CLEAR_CYCLES as usize + 2;
    let mut responses = 0;
    let mut prev = None;
    for cycle in 0..2 * sweep + 600 {
        let reset = cycle == 0 || cycle == sweep + 300;
        let valid = rng.gen_bool(0.85);
        let op = random_op(&mut rng);
        let key = keys.pick(&mut rng, prev);
        prev = Some(key);
        let key = if op == REMOVE_SLOT {
            slot_of(&mut rng, key)
        } else {
            key
        };
        rtl.reset.next = reset;
        rtl.s_req_valid.next = valid;
        rtl.s_req_op.next = (op as u64).to_bits();
        rtl.s_req_key.next = to_bits128(key.to_u128());
        sim.set_reset(reset);
        sim.set_s_req_valid(valid);
        sim.set_s_req_op(op);
        sim.set_s_req_key(&key_words(&key));
        rtl_tick!(rtl);
        sim.tick();
        let (a, b) = (rtl_outputs(&rtl), verilator_outputs(&sim));
        assert_eq!(
            a, b,
            "cycle {cycle}: RustHDL (left) and Verilator (right) differ"
        );
        responses += a.valid as usize;
    }
    assert!(responses >= 400, "only {responses} responses compared");
}

//! Block testbench of the interrupt block (`hw/src/csr/interrupt_block.rs`),
//! against a cycle-exact model of what `regmap::interrupt` promises: on
//! random stimulus (completions written and consumed on four rings, the
//! host arming, masking and reprogramming vectors, the function's MSI-X
//! enable and mask flipping, the holdoff changed, the DMA write port
//! stalling) every cycle's message beat and every register read must be
//! the model's.
//!
//! The model says it as the host would read it: a vector fires when it is
//! armed, its ring is not empty, MSI-X is on, neither the vector nor the
//! function is masked and its holdoff (HOLDOFF_NS / 4 cycles from its last
//! message) is out; the lowest such vector goes first, one message at a
//! time; it is disarmed as it fires. A vector that would fire but for a
//! mask is pending in the PBA. The two cycles of lag are the block's
//! registered inputs (the ring's state and the holdoff's end).

use homa_hw::regmap::{block_type, header, interrupt};
use homa_hw_sim::{InterruptBlock, Sim};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const VECTORS: usize = 4;

#[derive(Clone, Copy, Default)]
struct Entry {
    addr: u64,
    data: u32,
    masked: bool,
}

/// What a CSR write does this cycle.
#[derive(Clone, Copy)]
struct Write {
    offset: u8,
    value: u32,
}

/// The block as the host sees it, cycle by cycle.
struct Model {
    table: [Entry; VECTORS],
    armed: [bool; VECTORS],
    /// The ring held an entry last cycle (the block's registered view).
    has_entry: [bool; VECTORS],
    /// Cycles of holdoff left, and "out" as of last cycle.
    holdoff: [u32; VECTORS],
    holdoff_out: [bool; VECTORS],
    holdoff_ns: u32,
    /// The message being offered: address and data.
    msg: Option<(u64, u32)>,
    sent: u32,
}

/// This cycle's inputs.
struct Inputs {
    write: Option<Write>,
    enable: bool,
    mask: bool,
    nonempty: [bool; VECTORS],
    ready: bool,
}

impl Model {
    fn new() -> Self {
        Model {
            table: [Entry {
                masked: true,
                ..Default::default()
            }; VECTORS],
            armed: [false; VECTORS],
            has_entry: [false; VECTORS],
            holdoff: [0; VECTORS],
            holdoff_out: [true; VECTORS],
            holdoff_ns: interrupt::HOLDOFF_NS_DEFAULT,
            msg: None,
            sent: 0,
        }
    }

    /// Vector v may fire this cycle, masks aside.
    fn due(&self, v: usize, i: &Inputs) -> bool {
        self.armed[v] && self.has_entry[v] && self.holdoff_out[v] && i.enable
    }

    fn pba(&self, i: &Inputs) -> u32 {
        (0..VECTORS)
            .filter(|&v| self.due(v, i) && (self.table[v].masked || i.mask))
            .map(|v| 1 << v)
            .sum()
    }

    fn read(&self, offset: u8, i: &Inputs) -> u32 {
        let offset = u32::from(offset);
        if (interrupt::TABLE..interrupt::PBA).contains(&offset) {
            let e = &self.table[((offset - interrupt::TABLE) / interrupt::ENTRY_BYTES) as usize];
            return match offset % interrupt::ENTRY_BYTES {
                interrupt::ENTRY_ADDR_LO => e.addr as u32,
                interrupt::ENTRY_ADDR_HI => (e.addr >> 32) as u32,
                interrupt::ENTRY_DATA => e.data,
                _ => e.masked.into(),
            };
        }
        match offset {
            header::TYPE => block_type::INTERRUPT,
            header::VERSION => interrupt::VERSION,
            header::NEXT => homa_hw::regmap::next_block(interrupt::BASE),
            interrupt::VECTORS => VECTORS as u32,
            interrupt::HOLDOFF_NS => self.holdoff_ns,
            interrupt::ARM => (0..VECTORS)
                .filter(|&v| self.armed[v])
                .map(|v| 1 << v)
                .sum(),
            interrupt::SENT => self.sent,
            interrupt::STATUS => u32::from(i.enable) | u32::from(i.mask) << 1,
            interrupt::TABLE_OFFSET => interrupt::table_offset(),
            interrupt::PBA_OFFSET => interrupt::pba_offset(),
            interrupt::PBA => self.pba(i),
            _ => 0,
        }
    }

    /// The clock edge.
    fn step(&mut self, i: &Inputs) {
        let mut next = Model { ..*self };
        if let (Some(_), true) = (self.msg, i.ready) {
            next.msg = None;
            next.sent = self.sent.wrapping_add(1);
        }
        for v in 0..VECTORS {
            next.has_entry[v] = i.nonempty[v];
            next.holdoff[v] = self.holdoff[v].saturating_sub(1);
            next.holdoff_out[v] = self.holdoff[v] <= 1;
        }
        if let Some(w) = i.write {
            let offset = u32::from(w.offset);
            if (interrupt::TABLE..interrupt::PBA).contains(&offset) {
                let e = &mut next.table
                    [((offset - interrupt::TABLE) / interrupt::ENTRY_BYTES) as usize];
                match offset % interrupt::ENTRY_BYTES {
                    interrupt::ENTRY_ADDR_LO => e.addr = e.addr & !0xffff_ffff | u64::from(w.value),
                    interrupt::ENTRY_ADDR_HI => {
                        e.addr = e.addr & 0xffff_ffff | u64::from(w.value) << 32
                    }
                    interrupt::ENTRY_DATA => e.data = w.value,
                    _ => e.masked = w.value & 1 == 1,
                }
            }
            if offset == interrupt::ARM {
                for v in 0..VECTORS {
                    next.armed[v] |= w.value >> v & 1 == 1;
                }
            }
            if offset == interrupt::HOLDOFF_NS {
                next.holdoff_ns = w.value.min(interrupt::HOLDOFF_NS_MAX);
            }
        }
        if self.msg.is_none() {
            let first = (0..VECTORS).find(|&v| self.due(v, i) && !self.table[v].masked && !i.mask);
            if let Some(v) = first {
                let cycles = self.holdoff_ns / 4;
                next.armed[v] = false;
                next.holdoff[v] = cycles;
                next.holdoff_out[v] = cycles == 0;
                next.msg = Some((self.table[v].addr, self.table[v].data));
            }
        }
        *self = next;
    }
}

/// What the random host does, per cycle.
#[derive(Clone, Copy)]
struct Config {
    /// A completion written into some ring; the host consuming a ring.
    complete: f64,
    consume: f64,
    /// An ARM write; some other write (table, control word, holdoff).
    arm: f64,
    other_write: f64,
    /// The DMA write port takes a beat.
    ready: f64,
    /// MSI-X enable or function mask flips.
    flip: f64,
    cycles: u64,
    seed: u64,
}

#[derive(Default, Debug)]
struct Coverage {
    sent: u64,
    held_by_port: u64,
    pending_seen: u64,
    /// Cycles a vector was armed with a non-empty ring and waited out its
    /// holdoff.
    held_by_holdoff: u64,
}

fn run(name: &str, cfg: Config) -> Coverage {
    let mut sim: Sim<InterruptBlock> = Sim::traced_on_failure(name);
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
    let mut model = Model::new();
    let mut cov = Coverage::default();
    let mut producer = [0u32; VECTORS];
    let mut consumer = [0u32; VECTORS];
    let (mut enable, mut mask) = (true, false);
    sim.set_reset(true);
    sim.tick();
    sim.set_reset(false);
    for cycle in 0..cfg.cycles {
        // The rings.
        for v in 0..VECTORS {
            if rng.gen_bool(cfg.complete) {
                producer[v] = producer[v].wrapping_add(1);
            }
            if rng.gen_bool(cfg.consume) {
                consumer[v] = producer[v];
            }
        }
        if rng.gen_bool(cfg.flip) {
            enable = !enable;
        }
        if rng.gen_bool(cfg.flip) {
            mask = !mask;
        }
        // The host's CSR access: a write or a read of any word.
        let write = if rng.gen_bool(cfg.arm) {
            Some(Write {
                offset: interrupt::ARM as u8,
                value: rng.gen_range(0..16),
            })
        } else if rng.gen_bool(cfg.other_write) {
            let v = rng.gen_range(0..VECTORS as u32);
            let entry = interrupt::TABLE + v * interrupt::ENTRY_BYTES;
            let (offset, value) = match rng.gen_range(0..8) {
                0 => (
                    entry + interrupt::ENTRY_ADDR_LO,
                    0xfee0_0000 | rng.gen_range(0..0x4000u32) << 2,
                ),
                1 => (entry + interrupt::ENTRY_ADDR_HI, rng.gen_range(0..2)),
                2 => (entry + interrupt::ENTRY_DATA, rng.gen()),
                3 => (
                    interrupt::HOLDOFF_NS,
                    [0, 3, 4, 40, 400, 4_000][rng.gen_range(0..6)],
                ),
                _ => (entry + interrupt::ENTRY_CONTROL, rng.gen_range(0..4)),
            };
            Some(Write {
                offset: offset as u8,
                value,
            })
        } else {
            None
        };
        let read_offset = 4 * rng.gen_range(0..64u8);
        let inputs = Inputs {
            write,
            enable,
            mask,
            nonempty: std::array::from_fn(|v| producer[v] != consumer[v]),
            ready: rng.gen_bool(cfg.ready),
        };
        sim.set_msix_enable(enable);
        sim.set_msix_mask(mask);
        sim.set_producer0(producer[0]);
        sim.set_producer1(producer[1]);
        sim.set_producer2(producer[2]);
        sim.set_producer3(producer[3]);
        sim.set_consumer0(consumer[0]);
        sim.set_consumer1(consumer[1]);
        sim.set_consumer2(consumer[2]);
        sim.set_consumer3(consumer[3]);
        sim.set_m_dma_wr_ready(inputs.ready);
        sim.set_select(true);
        sim.set_wr_en(write.is_some());
        sim.set_offset(write.map_or(read_offset, |w| w.offset));
        sim.set_wr_data(write.map_or(0, |w| w.value));
        sim.eval();

        // The message beat.
        let at = format!("{name}, cycle {cycle}");
        assert_eq!(
            sim.m_dma_wr_valid(),
            model.msg.is_some(),
            "{at}: message valid"
        );
        if let Some((addr, data)) = model.msg {
            assert_eq!(sim.m_dma_wr_addr(), addr & !63, "{at}: message address");
            let lane = (addr % 64) as usize;
            assert_eq!(sim.m_dma_wr_strb(), 0xf << lane, "{at}: message strobes");
            assert_eq!(sim.m_dma_wr_data()[lane / 4], data, "{at}: message data");
            assert!(sim.m_dma_wr_last(), "{at}: a message is one beat");
            if inputs.ready {
                cov.sent += 1;
            } else {
                cov.held_by_port += 1;
            }
        }
        if write.is_none() {
            assert_eq!(
                sim.rd_data(),
                model.read(read_offset, &inputs),
                "{at}: read of {read_offset:#04x}"
            );
        }
        if model.pba(&inputs) != 0 {
            cov.pending_seen += 1;
        }
        cov.held_by_holdoff += (0..VECTORS)
            .filter(|&v| model.armed[v] && model.has_entry[v] && !model.holdoff_out[v])
            .count() as u64;
        model.step(&inputs);
        sim.tick();
    }
    cov
}

fn check(name: &str, cfg: Config) {
    let cov = run(name, cfg);
    println!("{name}: {cov:?}");
    assert!(cov.sent > cfg.cycles / 200, "{name}: few messages: {cov:?}");
    assert!(
        cov.held_by_port > 0 && cov.pending_seen > 0 && cov.held_by_holdoff > 0,
        "{name}: {cov:?}"
    );
}

#[test]
fn matches_the_model_on_random_traffic() {
    let base = Config {
        complete: 0.01,
        consume: 0.02,
        arm: 0.05,
        other_write: 0.01,
        ready: 0.6,
        flip: 0.002,
        cycles: 500_000,
        seed: 1,
    };
    check("interrupt_block-random", base);
    // Busy rings, a host that arms all the time, a stalling port.
    check(
        "interrupt_block-busy",
        Config {
            complete: 0.1,
            consume: 0.05,
            arm: 0.3,
            ready: 0.2,
            seed: 2,
            ..base
        },
    );
}

#[test]
fn a_vector_fires_once_per_arming_and_not_before_its_holdoff() {
    let mut sim: Sim<InterruptBlock> = Sim::traced_on_failure("interrupt_block-directed");
    let write = |sim: &mut Sim<InterruptBlock>, offset: u32, value: u32| {
        sim.set_select(true);
        sim.set_wr_en(true);
        sim.set_offset(offset as u8);
        sim.set_wr_data(value);
        sim.tick();
        sim.set_wr_en(false);
    };
    sim.set_reset(true);
    sim.tick();
    sim.set_reset(false);
    sim.set_m_dma_wr_ready(true);
    sim.set_msix_enable(true);
    let entry = interrupt::TABLE + 2 * interrupt::ENTRY_BYTES;
    write(&mut sim, entry + interrupt::ENTRY_ADDR_LO, 0xfee0_0048);
    write(&mut sim, entry + interrupt::ENTRY_DATA, 0x42);
    write(&mut sim, entry + interrupt::ENTRY_CONTROL, 0);
    write(&mut sim, interrupt::HOLDOFF_NS, 400);
    // A completion in ring 2, then the host arms: one message.
    sim.set_producer2(1);
    write(&mut sim, interrupt::ARM, 1 << 2);
    let mut fired = Vec::new();
    for cycle in 0..400u64 {
        sim.eval();
        if sim.m_dma_wr_valid() {
            fired.push(cycle);
            assert_eq!(sim.m_dma_wr_addr(), 0xfee0_0040);
            assert_eq!(sim.m_dma_wr_strb(), 0xf << 8);
            assert_eq!(sim.m_dma_wr_data()[2], 0x42);
        }
        if cycle == 20 {
            // Re-armed at once, the ring still not empty: the second waits
            // out the 100-cycle holdoff.
            write(&mut sim, interrupt::ARM, 1 << 2);
        } else {
            sim.tick();
        }
    }
    assert_eq!(fired.len(), 2, "once per arming: {fired:?}");
    assert!(fired[0] <= 3, "the first at once: {fired:?}");
    assert!(fired[1] - fired[0] >= 100, "holdoff of 400 ns: {fired:?}");
    sim.set_select(true);
    sim.set_offset(interrupt::SENT as u8);
    sim.eval();
    assert_eq!(sim.rd_data(), 2);
    // A holdoff beyond the maximum is clamped to it.
    write(&mut sim, interrupt::HOLDOFF_NS, u32::MAX);
    sim.set_offset(interrupt::HOLDOFF_NS as u8);
    sim.eval();
    assert_eq!(sim.rd_data(), interrupt::HOLDOFF_NS_MAX);
}

//! The core's CSR port through the Verilator model: the register-block list,
//! the ID block, and the scratch register against a reference model under
//! random stimulus.

use homa_hw::regmap::{self, header};
use homa_hw::CoreConfig;
use homa_hw_sim::{HomaCore, Sim};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn core(name: &str) -> Sim<HomaCore> {
    let mut sim: Sim<HomaCore> = Sim::traced_on_failure(name);
    sim.reset(4);
    sim
}

#[test]
fn register_block_list_walks_from_zero_to_the_end() {
    let mut sim = core("register_block_list");
    let mut base = 0u32;
    let mut found = Vec::new();
    loop {
        let block_type = sim.csr_read(base + header::TYPE).unwrap();
        let version = sim.csr_read(base + header::VERSION).unwrap();
        found.push((block_type, version, base));
        base = sim.csr_read(base + header::NEXT).unwrap();
        if base == 0 {
            break;
        }
        assert!(
            found.len() < 64,
            "register-block list does not end: {found:x?}"
        );
    }
    assert_eq!(found, regmap::BLOCKS);
}

#[test]
fn id_block_reports_the_build_options() {
    let mut sim = core("id_block");
    let config = CoreConfig::default();
    let id = |r| regmap::id::BASE + r;
    assert_eq!(
        sim.csr_read(id(regmap::id::DESIGN_VERSION)).unwrap(),
        config.design_version
    );
    assert_eq!(sim.csr_read(id(regmap::id::CLOCK_KHZ)).unwrap(), 250_000);
    assert_eq!(sim.csr_read(id(regmap::id::DATAPATH_BITS)).unwrap(), 512);
    assert_eq!(
        sim.csr_read(id(regmap::id::WIRE_FORMAT)).unwrap(),
        regmap::id::WIRE_FORMAT_2025_07
    );
    // ID registers are read-only: a write changes nothing.
    sim.csr_write(id(regmap::id::CLOCK_KHZ), 1);
    assert_eq!(sim.csr_read(id(regmap::id::CLOCK_KHZ)).unwrap(), 250_000);
}

#[test]
fn read_answers_exactly_one_cycle_later() {
    let mut sim = core("read_latency");
    sim.set_csr_addr(regmap::id::BASE + header::TYPE);
    sim.set_csr_rd_en(true);
    sim.tick();
    sim.set_csr_rd_en(false);
    assert!(sim.csr_rd_valid(), "csr_rd_valid the cycle after csr_rd_en");
    assert_eq!(sim.csr_rd_data(), regmap::block_type::ID);
    sim.tick();
    assert!(!sim.csr_rd_valid(), "csr_rd_valid lasts one cycle");
}

/// What the CSR space should hold, as plain Rust.
struct CsrReference {
    scratch: u32,
}

impl CsrReference {
    fn write(&mut self, addr: u32, data: u32) {
        if addr == regmap::scratch::BASE + regmap::scratch::SCRATCH {
            self.scratch = data;
        }
    }

    fn read(&self, addr: u32) -> u32 {
        let config = CoreConfig::default();
        for &(block_type, version, base) in regmap::BLOCKS {
            if addr == base + header::TYPE {
                return block_type;
            }
            if addr == base + header::VERSION {
                return version;
            }
            if addr == base + header::NEXT {
                return regmap::next_block(base);
            }
        }
        use regmap::{id, scratch};
        match addr {
            a if a == id::BASE + id::DESIGN_VERSION => config.design_version,
            a if a == id::BASE + id::CLOCK_KHZ => config.clock_khz,
            a if a == id::BASE + id::DATAPATH_BITS => config.datapath_bits,
            a if a == id::BASE + id::WIRE_FORMAT => id::WIRE_FORMAT_2025_07,
            a if a == scratch::BASE + scratch::SCRATCH => self.scratch,
            a if a == scratch::BASE + scratch::SCRATCH_INVERTED => !self.scratch,
            _ => 0,
        }
    }
}

#[test]
fn random_reads_and_writes_match_the_reference() {
    for seed in 0..4u64 {
        let mut sim = core(&format!("csr_random_seed{seed}"));
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut reference = CsrReference { scratch: 0 };
        for op in 0..2_000 {
            // Mostly addresses inside the two blocks, some anywhere in the window.
            let addr = if rng.gen_bool(0.8) {
                rng.gen_range(0..0x200u32) & !3
            } else {
                rng.gen_range(0..1u32 << regmap::CSR_ADDR_BITS) & !3
            };
            if rng.gen_bool(0.4) {
                let data = rng.gen();
                sim.csr_write(addr, data);
                reference.write(addr, data);
            } else {
                let got = sim.csr_read(addr).unwrap();
                let want = reference.read(addr);
                assert_eq!(
                    got, want,
                    "seed {seed} op {op} cycle {}: read {addr:#08x} gave {got:#010x}, reference {want:#010x}",
                    sim.cycle()
                );
            }
        }
    }
}

#[test]
fn reset_clears_the_scratch_register() {
    let mut sim = core("scratch_reset");
    let addr = regmap::scratch::BASE + regmap::scratch::SCRATCH;
    sim.csr_write(addr, 0xdead_beef);
    assert_eq!(sim.csr_read(addr).unwrap(), 0xdead_beef);
    sim.reset(1);
    assert_eq!(sim.csr_read(addr).unwrap(), 0);
}

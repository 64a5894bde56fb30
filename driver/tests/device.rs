//! Opening a card: discovery and ID checks through the simulated core, and the
//! errors a card the driver cannot work with produces (fake cards).

mod common;

use common::FakeCard;
use homa_driver::{Device, DiscoveryError, Error, IdBlock, SimBackend, Version};
use homa_hw::regmap::{self, block_type};
use homa_hw::CoreConfig;

fn sim_device(name: &str) -> Device {
    Device::open(SimBackend::traced_on_failure(name)).unwrap()
}

#[test]
fn the_simulated_core_has_the_id_and_scratch_blocks_of_the_register_map() {
    let device = sim_device("device_blocks");
    let found: Vec<(u32, u32, u32)> = device
        .blocks()
        .blocks()
        .iter()
        .map(|b| (b.block_type, b.version.word(), b.base))
        .collect();
    assert_eq!(found, regmap::BLOCKS);
    let id = device.blocks().find(block_type::ID).unwrap();
    assert_eq!(id.version, Version::from_word(regmap::id::VERSION));
    assert_eq!(id.name(), "ID");
    let scratch = device.blocks().find(block_type::SCRATCH).unwrap();
    assert_eq!(
        scratch.version,
        Version::from_word(regmap::scratch::VERSION)
    );
    assert_eq!(scratch.name(), "scratch");
}

#[test]
fn the_id_block_reports_the_build_of_the_simulated_core() {
    let device = sim_device("device_id");
    let config = CoreConfig::default();
    let id = device.id();
    assert_eq!(id.design_version.word(), config.design_version);
    assert_eq!(id.clock_khz, config.clock_khz);
    assert_eq!(id.datapath_bits, config.datapath_bits);
    assert_eq!(id.wire_format, regmap::id::WIRE_FORMAT_2025_07);
    assert_eq!(id.beat_bytes(), config.datapath_bits / 8);
    assert!(
        (id.cycle_ns() - 4.0).abs() < 1e-9,
        "250 MHz is 4 ns a cycle"
    );
    // The live view reads the same registers again.
    let live = device.id_block().unwrap();
    assert_eq!(live.clock_khz().unwrap(), id.clock_khz);
    assert_eq!(live.wire_format().unwrap(), id.wire_format);
    assert!(device.backend().describe().contains("simulated"));
}

#[test]
fn scratch_writes_land_and_read_back_with_their_complement() {
    let device = sim_device("device_scratch");
    let scratch = device.scratch().unwrap();
    assert_eq!(scratch.read().unwrap(), 0, "0 after reset");
    assert_eq!(scratch.read_inverted().unwrap(), !0);
    for value in [0xdead_beef, 0, 1, 0x8000_0000, 0xffff_ffff, 0x1234_5678] {
        scratch.write(value).unwrap();
        assert_eq!(scratch.read().unwrap(), value);
        assert_eq!(scratch.read_inverted().unwrap(), !value);
    }
}

#[test]
fn typed_blocks_use_the_discovered_base_not_the_maps() {
    // The same blocks as the core, but the scratch block moved to 0x800.
    let card = FakeCard::like_the_core();
    card.add_block(block_type::ID, regmap::id::VERSION, regmap::id::BASE, 0x800);
    card.add_block(block_type::SCRATCH, regmap::scratch::VERSION, 0x800, 0);
    let device = Device::open(card).unwrap();
    device.scratch().unwrap().write(0x5a5a_0001).unwrap();
    assert_eq!(device.scratch().unwrap().read().unwrap(), 0x5a5a_0001);
    let written = device
        .backend()
        .csr_read(0x800 + regmap::scratch::SCRATCH)
        .unwrap();
    assert_eq!(
        written, 0x5a5a_0001,
        "the write went to the discovered block"
    );
}

fn open_error(card: FakeCard) -> DiscoveryError {
    match Device::open(card) {
        Err(Error::Discovery(e)) => e,
        Err(e) => panic!("expected a discovery error, got {e}"),
        Ok(_) => panic!("expected a discovery error, the card opened"),
    }
}

#[test]
fn open_refuses_a_card_without_an_id_block() {
    let card = FakeCard::with_blocks(&[(block_type::SCRATCH, regmap::scratch::VERSION, 0, 0)]);
    assert!(matches!(
        open_error(card),
        DiscoveryError::Missing { block_type, .. } if block_type == IdBlock::TYPE
    ));
}

#[test]
fn open_refuses_an_id_block_of_another_major_version() {
    let card = FakeCard::like_the_core();
    let next = regmap::next_block(regmap::id::BASE);
    let newer = Version {
        major: IdBlock::VERSION.major + 1,
        minor: 0,
    };
    card.add_block(block_type::ID, newer.word(), regmap::id::BASE, next);
    match open_error(card) {
        DiscoveryError::Version {
            found, need_major, ..
        } => {
            assert_eq!(found, newer);
            assert_eq!(need_major, IdBlock::VERSION.major);
        }
        other => panic!("expected Version, got {other:?}"),
    }
}

#[test]
fn open_refuses_another_wire_format() {
    let card = FakeCard::like_the_core();
    card.set(regmap::id::BASE + regmap::id::WIRE_FORMAT, 0x2024_0100);
    let e = open_error(card);
    assert!(matches!(
        e,
        DiscoveryError::IdValue {
            register: "wire format",
            found: 0x2024_0100,
            ..
        }
    ));
    assert!(
        e.to_string().contains("0x20250700"),
        "names the format needed: {e}"
    );
}

#[test]
fn open_refuses_a_zero_clock_and_an_odd_datapath() {
    let card = FakeCard::like_the_core();
    card.set(regmap::id::BASE + regmap::id::CLOCK_KHZ, 0);
    assert!(matches!(
        open_error(card),
        DiscoveryError::IdValue {
            register: "clock kHz",
            ..
        }
    ));
    let card = FakeCard::like_the_core();
    card.set(regmap::id::BASE + regmap::id::DATAPATH_BITS, 500);
    assert!(matches!(
        open_error(card),
        DiscoveryError::IdValue {
            register: "datapath bits",
            found: 500,
            ..
        }
    ));
}

#[test]
fn a_card_like_the_core_opens() {
    let device = Device::open(FakeCard::like_the_core()).unwrap();
    assert_eq!(device.id().clock_khz, 250_000);
    assert_eq!(device.blocks().blocks().len(), regmap::BLOCKS.len());
}

#[test]
fn rx_counters_read_each_verdicts_register_of_the_discovered_block() {
    use homa_hw::rx::parser::RxVerdict;
    let card = FakeCard::like_the_core();
    let base = regmap::rx_counters::BASE;
    let counter = |v: RxVerdict| base + regmap::rx_counters::FIRST_COUNTER + 4 * v as u32;
    card.set(counter(RxVerdict::Accept), 7);
    card.set(counter(RxVerdict::NotHoma), 3);
    card.set(counter(RxVerdict::PayloadBeyondMessage), 0xffff_fffe);
    let device = Device::open(card).unwrap();
    let rx = device.rx_counters().unwrap();
    assert_eq!(rx.read(RxVerdict::Accept).unwrap(), 7);
    assert_eq!(rx.read(RxVerdict::NotHoma).unwrap(), 3);
    let all = rx.read_all().unwrap();
    assert_eq!(all.len(), RxVerdict::ALL.len());
    assert_eq!(
        all.last(),
        Some(&(RxVerdict::PayloadBeyondMessage, 0xffff_fffe))
    );
    assert_eq!(
        all.iter().map(|(_, n)| u64::from(*n)).sum::<u64>(),
        7 + 3 + 0xffff_fffe
    );
}

#[test]
fn the_simulated_cores_rx_counters_start_at_zero() {
    let device = sim_device("device_rx_counters");
    let all = device.rx_counters().unwrap().read_all().unwrap();
    assert!(all.iter().all(|(_, n)| *n == 0), "{all:?}");
    assert_eq!(
        device
            .blocks()
            .find(block_type::RX_COUNTERS)
            .unwrap()
            .name(),
        "RX counters"
    );
}

#[test]
fn devices_backends_buffers_and_rings_may_move_between_threads() {
    // A compile-time check: host-lib hands these to its threads.
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Device>();
    send_sync::<SimBackend>();
    send_sync::<homa_driver::VfioBackend>();
    send_sync::<homa_driver::DmaBuffer>();
    send_sync::<homa_driver::DescriptorRing>();
    send_sync::<homa_driver::CompletionRing>();
    let device = sim_device("device_threads");
    let clock = std::thread::spawn(move || device.id().clock_khz)
        .join()
        .unwrap();
    assert_eq!(clock, 250_000);
}

//! The flash path end to end on a simulated card in a board: the driver's
//! flashing code (`homa_driver::flash`) over the sim backend's BAR, the
//! board's RTL register block and SPI port in Verilator, the flash chip model
//! on its pins, and the FPGA's reboot from flash through the RTL IPROG sender.
//! A small image is written, verified and booted into; each failure the issue
//! names is tested: wrong part, wrong board, golden region, verify mismatch, a
//! chip that never finishes an erase, a power cut half way.

use std::time::{Duration, Instant};

use homa_driver::board::{BoardBlock, Identity};
use homa_driver::flash::{self, FlashError, Plan, SpiFlash};
use homa_driver::{Backend, SimBackend};
use homa_hw::regmap::board::FLASH_USER_IMAGE;
use homa_hw_sim::board::{BoardConfig, FpgaState};

fn card(name: &str) -> SimBackend {
    SimBackend::with_board(name, BoardConfig::u250())
}

fn new_build() -> Identity {
    Identity {
        build_time: 1_800_000_000,
        git_commit: [0xC5; 20],
        git_dirty: true,
        ..BoardConfig::u250().golden
    }
}

/// Golden image bytes as the card shipped.
fn golden_bytes(card: &SimBackend) -> Vec<u8> {
    card.with_card(|c| {
        let chip = c.board().unwrap().chip();
        (0..4096).map(|a| chip.peek(a)).collect()
    })
}

#[test]
fn a_small_image_is_written_verified_and_booted_into() {
    let card = card("flash-happy");
    let golden = golden_bytes(&card);
    let regs = BoardBlock::open(&card).unwrap();
    let running = regs.identity().unwrap();
    assert_eq!(running, BoardConfig::u250().golden);
    let bit = flash::sim_bitfile(&new_build(), 1000);
    let plan = Plan::new(&running, &bit, FLASH_USER_IMAGE).unwrap();
    assert_eq!(plan.erase, vec![(FLASH_USER_IMAGE, 4096)]);
    let flash = SpiFlash::open(BoardBlock::open(&card).unwrap()).unwrap();
    let start = (card.cycle(), Instant::now());
    let mut phases = Vec::new();
    flash::write_image(&flash, &plan, &bit.data, &mut |p, done, total| {
        if done == total {
            phases.push(p)
        }
    })
    .unwrap();
    assert_eq!(
        phases,
        [
            flash::Phase::Erase,
            flash::Phase::Program,
            flash::Phase::Verify
        ]
    );
    let cycles = card.cycle() - start.0;
    eprintln!(
        "{} bytes erased, programmed and verified in {cycles} core cycles of BAR traffic ({:.2?} wall)",
        bit.data.len(),
        start.1.elapsed()
    );
    flash.release().unwrap();
    card.with_card(|c| {
        let chip = c.board().unwrap().chip();
        for (i, &b) in bit.data.iter().enumerate() {
            assert_eq!(chip.peek(FLASH_USER_IMAGE + i as u32), b);
        }
    });
    assert_eq!(golden_bytes(&card), golden, "the golden image untouched");

    BoardBlock::open(&card).unwrap().reboot().unwrap();
    card.advance(100);
    assert!(
        matches!(
            BoardBlock::open(&card),
            Err(homa_driver::board::BoardError::CardGone)
        ),
        "the card drops off the link while the FPGA reconfigures"
    );
    let now = flash::wait_for_board(&card, 10, Duration::from_millis(500)).unwrap();
    assert_eq!(now, new_build());
    assert_eq!(Some(now), flash::sim_image_identity(&bit));
    card.with_card(|c| {
        let b = c.board().unwrap();
        assert_eq!(b.state(), &FpgaState::Running { golden: false });
        assert_eq!(b.boots, 1);
    });
    // The core came back out of reset: the driver opens it again.
    homa_driver::Device::open(card).unwrap();
}

#[test]
fn the_golden_region_is_refused_before_anything_is_written() {
    let card = card("flash-golden");
    let running = BoardBlock::open(&card).unwrap().identity().unwrap();
    let bit = flash::sim_bitfile(&new_build(), 100);
    for address in [0, 0x1000, FLASH_USER_IMAGE - 0x1000] {
        let e = Plan::new(&running, &bit, address).unwrap_err();
        assert!(matches!(e, FlashError::GoldenRegion { .. }), "{e}");
        assert!(e.to_string().contains("golden image"), "{e}");
    }
    card.with_card(|c| {
        let chip = c.board().unwrap().chip();
        assert_eq!((chip.programs_done, chip.erases_done), (0, 0));
    });
}

#[test]
fn a_bitstream_for_another_part_or_board_is_refused() {
    let card = card("flash-part");
    let running = BoardBlock::open(&card).unwrap().identity().unwrap();
    let mut other = new_build();
    other.board = "u200".into();
    other.part = "xcu200-fsgd2104-2-e".into();
    let e = Plan::new(&running, &flash::sim_bitfile(&other, 100), FLASH_USER_IMAGE).unwrap_err();
    assert!(matches!(e, FlashError::WrongPart { .. }), "{e}");
    assert!(e.to_string().contains("xcu200-fsgd2104-2-e"), "{e}");
    let mut bit = flash::sim_bitfile(&new_build(), 100);
    bit.design = "homa_u280".into();
    let e = Plan::new(&running, &bit, FLASH_USER_IMAGE).unwrap_err();
    assert!(matches!(e, FlashError::WrongBoard { .. }), "{e}");
    bit.design = "open_nic_shell".into();
    assert!(matches!(
        Plan::new(&running, &bit, FLASH_USER_IMAGE),
        Err(FlashError::WrongBoard { .. })
    ));
}

#[test]
fn a_byte_that_does_not_program_fails_verify_at_its_address() {
    let card = card("flash-verify");
    let bad = FLASH_USER_IMAGE + 300;
    card.with_card(|c| c.board_mut().unwrap().chip_mut().kill_byte(bad));
    let bit = flash::sim_bitfile(&new_build(), 500);
    let running = BoardBlock::open(&card).unwrap().identity().unwrap();
    let plan = Plan::new(&running, &bit, FLASH_USER_IMAGE).unwrap();
    let flash = SpiFlash::open(BoardBlock::open(&card).unwrap()).unwrap();
    let e = flash::write_image(&flash, &plan, &bit.data, &mut |_, _, _| {}).unwrap_err();
    match e {
        FlashError::Verify {
            address,
            wrote,
            read,
        } => {
            assert_eq!(address, bad);
            assert_eq!(wrote, bit.data[300]);
            assert_eq!(read, 0xFF);
        }
        e => panic!("expected a verify failure, got {e}"),
    }
}

#[test]
fn an_erase_that_never_finishes_is_reported() {
    let card = card("flash-stuck");
    card.with_card(|c| c.board_mut().unwrap().chip_mut().stick_erases());
    let bit = flash::sim_bitfile(&new_build(), 100);
    let running = BoardBlock::open(&card).unwrap().identity().unwrap();
    let plan = Plan::new(&running, &bit, FLASH_USER_IMAGE).unwrap();
    let flash = SpiFlash::open(BoardBlock::open(&card).unwrap()).unwrap();
    let e = flash::write_image(&flash, &plan, &bit.data, &mut |_, _, _| {}).unwrap_err();
    assert!(
        matches!(e, FlashError::ChipTimeout { what: "a 4 KiB erase", address, .. } if address == FLASH_USER_IMAGE),
        "{e}"
    );
    card.with_card(|c| assert_eq!(c.board().unwrap().chip().programs_done, 0));
}

#[test]
fn a_power_cut_half_way_leaves_the_golden_image_booting() {
    let card = card("flash-power");
    let golden = golden_bytes(&card);
    let bit = flash::sim_bitfile(&new_build(), 1000);
    let running = BoardBlock::open(&card).unwrap().identity().unwrap();
    let plan = Plan::new(&running, &bit, FLASH_USER_IMAGE).unwrap();
    card.with_card(|c| c.board_mut().unwrap().power_cut_after_programs(2));
    let flash = SpiFlash::open(BoardBlock::open(&card).unwrap()).unwrap();
    let e = flash::write_image(&flash, &plan, &bit.data, &mut |_, _, _| {}).unwrap_err();
    assert!(matches!(e, FlashError::CardGone), "{e}");
    let now = flash::wait_for_board(&card, 10, Duration::from_millis(500)).unwrap();
    assert_eq!(now, BoardConfig::u250().golden, "golden boots");
    card.with_card(|c| {
        assert_eq!(
            c.board().unwrap().state(),
            &FpgaState::Running { golden: true }
        )
    });
    assert_eq!(golden_bytes(&card), golden);
    // And the card can be flashed again from there.
    let flash = SpiFlash::open(BoardBlock::open(&card).unwrap()).unwrap();
    flash::write_image(&flash, &plan, &bit.data, &mut |_, _, _| {}).unwrap();
}

/// Flash time per MB in the model (`cargo test --release -p homa-driver
/// --test flash -- --ignored --nocapture`): a 1 MiB image through erase,
/// program and verify, timed on the chip's clock (the busy times the host
/// sleeps through, plus the register traffic at 4 ns a cycle), and the
/// register traffic counted in BAR accesses for a projection to a real link.
#[test]
#[ignore = "a benchmark: about a minute in release"]
fn flash_time_per_mb() {
    let card = card("flash-bench");
    let mib = 1usize << 20;
    let bit = flash::sim_bitfile(&new_build(), mib - 200);
    let running = BoardBlock::open(&card).unwrap().identity().unwrap();
    let plan = Plan::new(&running, &bit, FLASH_USER_IMAGE).unwrap();
    let flash = SpiFlash::open(BoardBlock::open(&card).unwrap()).unwrap();
    let chip_ns = |c: &SimBackend| c.with_card(|c| c.board().unwrap().chip().now_ns());
    let mut marks = Vec::new();
    let (t0, c0) = (chip_ns(&card), card.cycle());
    let wall = Instant::now();
    let mut last = None;
    flash::write_image(&flash, &plan, &bit.data, &mut |p, _, _| {
        if last != Some(p) {
            marks.push((p, chip_ns(&card), card.cycle()));
            last = Some(p);
        }
    })
    .unwrap();
    marks.push((flash::Phase::Verify, chip_ns(&card), card.cycle()));
    let mb = bit.data.len() as f64 / 1e6;
    for w in marks.windows(2) {
        eprintln!(
            "{:?}: {:.1} ms of model time per MB, {:.0} core cycles of register traffic per byte",
            w[0].0,
            (w[1].1 - w[0].1) as f64 / 1e6 / mb,
            (w[1].2 - w[0].2) as f64 / bit.data.len() as f64
        );
    }
    eprintln!(
        "total: {:.1} ms of model time per MB ({} cycles of register traffic); {:.1?} wall",
        (chip_ns(&card) - t0) as f64 / 1e6 / mb,
        card.cycle() - c0,
        wall.elapsed()
    );
}

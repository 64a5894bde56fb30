//! Walking the register-block list and checking versions, on fake cards that
//! serve made-up lists: well formed, looping, pointing out of the window,
//! misaligned, endless, dead, and with blocks missing or of the wrong version.

mod common;

use common::{FakeCard, FAKE_WINDOW_BYTES};
use homa_driver::discovery::MAX_BLOCKS;
use homa_driver::{BlockList, DiscoveryError, Error, Version};
use homa_hw::regmap::block_type::{ID, SCRATCH};

/// A block type no driver knows.
const UNKNOWN: u32 = 0x484d_00ff;

fn discovery_error(card: &FakeCard) -> DiscoveryError {
    match BlockList::discover(card) {
        Err(Error::Discovery(e)) => e,
        other => panic!("expected a discovery error, got {other:?}"),
    }
}

#[test]
fn walks_the_list_in_order_including_unknown_blocks() {
    let card = FakeCard::with_blocks(&[
        (ID, 0x0001_0000, 0x0, 0x400),
        (UNKNOWN, 0x0003_0002, 0x400, 0x100),
        (SCRATCH, 0x0001_0001, 0x100, 0),
    ]);
    let list = BlockList::discover(&card).unwrap();
    let found: Vec<(u32, Version, u32)> = list
        .blocks()
        .iter()
        .map(|b| (b.block_type, b.version, b.base))
        .collect();
    assert_eq!(
        found,
        [
            (ID, Version { major: 1, minor: 0 }, 0x0),
            (UNKNOWN, Version { major: 3, minor: 2 }, 0x400),
            (SCRATCH, Version { major: 1, minor: 1 }, 0x100),
        ]
    );
    assert_eq!(
        list.to_string(),
        "ID 1.0 at 0x0, unknown 0x484d00ff 3.2 at 0x400, scratch 1.1 at 0x100"
    );
}

#[test]
fn a_single_block_ends_the_list_with_next_zero() {
    let card = FakeCard::with_blocks(&[(ID, 0x0001_0000, 0x0, 0)]);
    assert_eq!(BlockList::discover(&card).unwrap().blocks().len(), 1);
}

#[test]
fn a_loop_back_to_an_earlier_block_is_an_error() {
    let card = FakeCard::with_blocks(&[
        (ID, 0x0001_0000, 0x0, 0x100),
        (SCRATCH, 0x0001_0000, 0x100, 0x200),
        (UNKNOWN, 0x0001_0000, 0x200, 0x100),
    ]);
    let e = discovery_error(&card);
    match &e {
        DiscoveryError::Loop { from, next, walk } => {
            assert_eq!((*from, *next), (0x200, 0x100));
            assert_eq!(walk, &[0x0, 0x100, 0x200]);
        }
        other => panic!("expected Loop, got {other:?}"),
    }
    assert!(
        e.to_string().contains("0x0 -> 0x100 -> 0x200"),
        "the message shows the walk: {e}"
    );
}

#[test]
fn a_block_pointing_to_itself_is_a_loop() {
    let card = FakeCard::with_blocks(&[
        (ID, 0x0001_0000, 0x0, 0x100),
        (SCRATCH, 0x0001_0000, 0x100, 0x100),
    ]);
    assert!(matches!(
        discovery_error(&card),
        DiscoveryError::Loop {
            from: 0x100,
            next: 0x100,
            ..
        }
    ));
}

#[test]
fn a_next_pointer_past_the_window_is_an_error() {
    let card = FakeCard::new(0x1000);
    card.add_block(ID, 0x0001_0000, 0x0, 0x1000);
    assert!(matches!(
        discovery_error(&card),
        DiscoveryError::OutOfRange {
            from: 0,
            next: 0x1000,
            window_bytes: 0x1000
        }
    ));
    // Inside the window, but the next block's header would run past its end.
    let card = FakeCard::new(0x1000);
    card.add_block(ID, 0x0001_0000, 0x0, 0xffc);
    assert!(matches!(
        discovery_error(&card),
        DiscoveryError::OutOfRange { next: 0xffc, .. }
    ));
}

#[test]
fn a_misaligned_next_pointer_is_an_error() {
    let card = FakeCard::with_blocks(&[(ID, 0x0001_0000, 0x0, 0x102)]);
    assert!(matches!(
        discovery_error(&card),
        DiscoveryError::Misaligned {
            from: 0,
            next: 0x102
        }
    ));
}

#[test]
fn an_endless_list_stops_at_the_bound() {
    let card = FakeCard::new(FAKE_WINDOW_BYTES);
    let span = 0x100;
    for i in 0..(MAX_BLOCKS as u32 + 10) {
        card.add_block(UNKNOWN, 0x0001_0000, i * span, (i + 1) * span);
    }
    assert!(matches!(
        discovery_error(&card),
        DiscoveryError::TooLong { max } if max == MAX_BLOCKS
    ));
}

#[test]
fn a_card_reading_all_ones_does_not_answer() {
    let e = discovery_error(&FakeCard::dead());
    assert!(matches!(e, DiscoveryError::NoResponse { base: 0 }));
    assert!(e.to_string().contains("does not answer"), "{e}");
}

#[test]
fn require_accepts_the_same_major_and_a_newer_minor() {
    let card = FakeCard::with_blocks(&[(ID, 0x0001_0005, 0x0, 0)]);
    let list = BlockList::discover(&card).unwrap();
    let b = list.require(ID, 1, 3).unwrap();
    assert_eq!(b.version, Version { major: 1, minor: 5 });
    assert!(list.require(ID, 1, 5).is_ok());
}

#[test]
fn require_refuses_another_major_naming_found_and_needed() {
    let card = FakeCard::with_blocks(&[(ID, 0x0002_0000, 0x0, 0)]);
    let list = BlockList::discover(&card).unwrap();
    let e = list.require(ID, 1, 0).unwrap_err();
    match &e {
        DiscoveryError::Version {
            name,
            base,
            found,
            need_major,
            need_min_minor,
        } => {
            assert_eq!(name, "ID");
            assert_eq!(*base, 0);
            assert_eq!(*found, Version { major: 2, minor: 0 });
            assert_eq!((*need_major, *need_min_minor), (1, 0));
        }
        other => panic!("expected Version, got {other:?}"),
    }
    assert_eq!(
        e.to_string(),
        "the ID block at 0x0 has version 2.0; this driver needs 1.x with x >= 0"
    );
}

#[test]
fn require_refuses_an_older_minor() {
    let card = FakeCard::with_blocks(&[
        (ID, 0x0001_0000, 0x0, 0x100),
        (SCRATCH, 0x0001_0001, 0x100, 0),
    ]);
    let list = BlockList::discover(&card).unwrap();
    assert!(matches!(
        list.require(SCRATCH, 1, 2),
        Err(DiscoveryError::Version {
            found: Version { major: 1, minor: 1 },
            need_min_minor: 2,
            ..
        })
    ));
}

#[test]
fn require_names_a_missing_block_and_what_was_found() {
    let card = FakeCard::with_blocks(&[(SCRATCH, 0x0001_0000, 0x0, 0)]);
    let list = BlockList::discover(&card).unwrap();
    let e = list.require(ID, 1, 0).unwrap_err();
    assert!(matches!(&e, DiscoveryError::Missing { block_type, .. } if *block_type == ID));
    assert_eq!(
        e.to_string(),
        "no ID block (type 0x484d0001) in the register-block list; found: scratch 1.0 at 0x0"
    );
}

#[test]
fn a_next_pointer_to_where_no_block_answers_is_an_error() {
    let card = FakeCard::with_blocks(&[(ID, 0x0001_0000, 0x0, 0x100)]);
    let e = discovery_error(&card);
    assert!(matches!(
        e,
        DiscoveryError::DanglingNext {
            from: 0,
            next: 0x100
        }
    ));
    assert!(e.to_string().contains("nothing answers there"), "{e}");
}

#[test]
fn an_empty_window_is_not_a_homa_nic() {
    let e = discovery_error(&FakeCard::new(FAKE_WINDOW_BYTES));
    assert!(matches!(e, DiscoveryError::EmptyWindow));
    assert!(e.to_string().contains("wrong BAR"), "{e}");
}

//! Rings and doorbells on the sim backend, with the card's side played by the
//! test through `dma_read`/`dma_write` (the card's view of memory by IOVA).
//! The scratch register serves as the doorbell: it keeps what is written, so
//! the test sees the index the card got. The endpoint blocks' real doorbells,
//! with the core on the other side, are tested in queues.rs.

use homa_driver::{
    Backend, CompletionRing, DescriptorRing, Doorbell, Error, PhaseBit, RingError, ScratchBlock,
    SimBackend,
};
use homa_hw::regmap;

const ENTRY_BYTES: usize = 16;

/// A simulated card and the scratch register, used as a doorbell. The
/// backend is used directly (not through `Device::open`) so these tests do not
/// depend on the rest of the register-block list.
fn card(name: &str) -> (SimBackend, Doorbell) {
    let backend = SimBackend::traced_on_failure(name);
    (
        backend,
        Doorbell::new(regmap::scratch::BASE + regmap::scratch::SCRATCH),
    )
}

/// What the card last got at the stand-in doorbell.
fn doorbell_value(backend: &SimBackend) -> u32 {
    ScratchBlock::at(backend, regmap::scratch::BASE)
        .read()
        .unwrap()
}

/// What the card reads at `iova`.
fn card_reads(backend: &dyn Backend, iova: u64, bytes: usize) -> Vec<u8> {
    let mut out = vec![0u8; bytes];
    backend.dma_read(iova, &mut out).unwrap();
    out
}

/// The card writes `data` at `iova`.
fn card_writes(backend: &dyn Backend, iova: u64, data: &[u8]) {
    backend.dma_write(iova, data).unwrap();
}

fn entry(tag: u8) -> [u8; ENTRY_BYTES] {
    let mut e = [0u8; ENTRY_BYTES];
    e[0] = tag;
    e[ENTRY_BYTES - 1] = tag ^ 0xff;
    e
}

#[test]
fn descriptors_land_in_their_slots_and_the_doorbell_carries_the_producer_index() {
    let (backend, doorbell) = card("ring_descriptors");
    let backend = &backend;
    let mut ring = DescriptorRing::new(backend, 4, ENTRY_BYTES, doorbell).unwrap();
    assert_eq!(ring.free_slots(), 4);
    for tag in 0..3u8 {
        assert_eq!(ring.push(&entry(tag)).unwrap(), u32::from(tag));
    }
    ring.ring_doorbell(backend).unwrap();
    assert_eq!(
        doorbell_value(backend),
        3,
        "the card got the producer index"
    );
    for tag in 0..3u8 {
        let slot = ring.iova() + u64::from(tag) * ENTRY_BYTES as u64;
        assert_eq!(card_reads(backend, slot, ENTRY_BYTES), entry(tag));
    }
}

#[test]
fn a_full_ring_refuses_until_the_card_consumes_and_then_wraps() {
    let (backend, doorbell) = card("ring_full_wrap");
    let backend = &backend;
    let mut ring = DescriptorRing::new(backend, 4, ENTRY_BYTES, doorbell).unwrap();
    for tag in 0..4u8 {
        ring.push(&entry(tag)).unwrap();
    }
    assert!(matches!(
        ring.push(&entry(9)),
        Err(Error::Ring(RingError::Full { entries: 4 }))
    ));
    ring.consumed_up_to(2).unwrap();
    assert_eq!(ring.free_slots(), 2);
    assert_eq!(ring.push(&entry(4)).unwrap(), 4);
    // Index 4 wraps to slot 0.
    assert_eq!(card_reads(backend, ring.iova(), ENTRY_BYTES), entry(4));
    assert_eq!(ring.head(), 5);
    assert_eq!(ring.tail(), 2);
}

#[test]
fn a_consumer_index_outside_the_entries_in_flight_is_refused() {
    let (backend, doorbell) = card("ring_bad_consumer");
    let mut ring = DescriptorRing::new(&backend, 8, ENTRY_BYTES, doorbell).unwrap();
    ring.push(&entry(0)).unwrap();
    ring.push(&entry(1)).unwrap();
    assert!(matches!(
        ring.consumed_up_to(3),
        Err(Error::Ring(RingError::BadConsumerIndex {
            reported: 3,
            tail: 0,
            head: 2
        }))
    ));
    ring.consumed_up_to(2).unwrap();
    assert!(
        ring.consumed_up_to(1).is_err(),
        "a consumer index cannot go backwards"
    );
}

#[test]
fn bad_geometry_and_entry_sizes_are_refused() {
    let (backend, doorbell) = card("ring_geometry");
    let backend = &backend;
    for (entries, bytes) in [(3, 16), (0, 16), (4, 0), (4, 6)] {
        assert!(
            matches!(
                DescriptorRing::new(backend, entries, bytes, doorbell),
                Err(Error::Ring(RingError::BadGeometry { .. }))
            ),
            "{entries} x {bytes}"
        );
    }
    let mut ring = DescriptorRing::new(backend, 4, ENTRY_BYTES, doorbell).unwrap();
    assert!(matches!(
        ring.push(&[0u8; 8]),
        Err(Error::Ring(RingError::EntrySize {
            got: 8,
            entry_bytes: ENTRY_BYTES
        }))
    ));
}

/// The phase bit: the top bit of the last byte.
const PHASE: PhaseBit = PhaseBit {
    byte: ENTRY_BYTES - 1,
    bit: 7,
};

/// A completion as the card writes it on lap `lap` (phase 1 on even laps).
fn completion(tag: u8, lap: u32) -> [u8; ENTRY_BYTES] {
    let mut e = [0u8; ENTRY_BYTES];
    e[0] = tag;
    if lap.is_multiple_of(2) {
        e[ENTRY_BYTES - 1] = 0x80;
    }
    e
}

#[test]
fn completions_are_taken_in_order_by_their_phase_across_laps() {
    let (backend, doorbell) = card("ring_completions");
    let backend = &backend;
    let mut ring = CompletionRing::new(backend, 2, ENTRY_BYTES, PHASE, doorbell).unwrap();
    let mut out = [0u8; ENTRY_BYTES];
    assert!(!ring.poll(&mut out), "a zeroed ring holds nothing");

    let base = ring.iova();
    let slot = |i: u32| base + u64::from(i % 2) * ENTRY_BYTES as u64;
    card_writes(backend, slot(0), &completion(10, 0));
    card_writes(backend, slot(1), &completion(11, 0));
    assert!(ring.poll(&mut out));
    assert_eq!(out[0], 10);
    assert!(ring.poll(&mut out));
    assert_eq!(out[0], 11);
    assert!(
        !ring.poll(&mut out),
        "slot 0 still holds lap 0's entry, which is stale on lap 1"
    );
    ring.ring_doorbell(backend).unwrap();
    assert_eq!(
        doorbell_value(backend),
        2,
        "the card got the consumer index"
    );

    // Lap 1: the card writes phase 0.
    card_writes(backend, slot(2), &completion(12, 1));
    assert!(ring.poll(&mut out));
    assert_eq!(out, completion(12, 1));
    assert_eq!(ring.tail(), 3);
}

//! Bad input from the host side (issue 9, item 5): every class of bad TX
//! descriptor not covered by `card_tx.rs`, a descriptor ring the card cannot
//! read, a doorbell beyond the ring, CSR writes outside the writable
//! registers. Each must end in an error completion or a count, never a
//! wedged card: after each, a good message still goes out and completes.

mod support;

use homa_hw::host_abi::{self, completion, tx_desc, ENTRY_BYTES};
use homa_hw::regmap::{self, endpoint, grant, id, interface, rx_counters, scratch};
use homa_hw_sim::card::Card;
use homa_wire::{Body, Frame};
use support::host::{cpl_ring, tx_ring, Send, TestHost, RING_LOG2, TX_BUFFERS, TX_BUFFER_BYTES};

const MAC: [u8; 6] = [2, 0, 0, 0, 0, 1];
const IP: u32 = 0x0a00_0001;
const RING: u32 = 1 << RING_LOG2;

fn host(name: &str, endpoints: usize) -> TestHost {
    let ports: Vec<u16> = (0..endpoints).map(|e| 1000 + e as u16).collect();
    TestHost::new(name, MAC, IP, &ports)
}

/// Writes a descriptor at TX slot `index` of endpoint `e` (no doorbell).
fn post(card: &mut Card, e: usize, index: u32, opcode: u8, buffer: u64, length: u32, cookie: u64) {
    let d = Send {
        endpoint: e,
        opcode,
        rpc_id: 2 * (cookie + 1),
        buffer,
        length,
        peer_ip: 0x0a00_0002,
        peer_port: 2000,
        peer_mac: [2, 0, 0, 0, 0, 2],
        cookie,
    }
    .descriptor();
    let slot = index & (RING - 1);
    card.memory_mut()
        .write(tx_ring(e) + slot as u64 * ENTRY_BYTES as u64, &d);
}

fn producer(card: &mut Card, e: usize) -> u32 {
    card.csr_read(endpoint::base(e) + endpoint::CPL_PRODUCER)
}

/// Completion entry `i` of endpoint `e`.
/// Completion `i` of endpoint `e`, once it is in host memory (its phase bit
/// shows it: CPL_PRODUCER runs ahead of writes still on their way).
fn completion_at(card: &mut Card, e: usize, i: u32) -> [u8; ENTRY_BYTES] {
    let phase = u64::from(1 - (i / RING & 1));
    let mut c = [0u8; ENTRY_BYTES];
    let landed = card.run_until(10_000, |card| {
        card.memory().read(
            cpl_ring(e) + (i & (RING - 1)) as u64 * ENTRY_BYTES as u64,
            &mut c,
        );
        host_abi::get(&c, completion::PHASE) == phase
    });
    assert!(landed, "completion {i} of endpoint {e} never landed");
    c
}

/// Sends a good 500-byte message from endpoint `e` at TX index `index` and
/// checks it completes OK and leaves whole: the card is not wedged.
fn still_works(card: &mut Card, e: usize, index: u32) {
    let payload: Vec<u8> = (0..500u32).map(|i| (i * 7) as u8).collect();
    let buffer = TX_BUFFERS + 0x80_0000;
    card.memory_mut().write(buffer, &payload);
    card.take_transmitted();
    post(
        card,
        e,
        index,
        tx_desc::opcode::SEND_RESPONSE,
        buffer,
        500,
        0xc0de,
    );
    // No client acks the response: the card lets it go (OK: a response has
    // nothing to fail) after a tick of silence, made short here (1 us, so a
    // sweep or two), its timer on whatever the bad input wrote.
    card.csr_write(regmap::timer::BASE + regmap::timer::TICK_NS, 1000);
    card.csr_write(regmap::timer::BASE + regmap::timer::RESEND_TICKS, 1);
    card.csr_write(regmap::timer::BASE + regmap::timer::RESEND_INTERVAL, 1);
    card.csr_write(regmap::timer::BASE + regmap::timer::TIMEOUT_TICKS, 1);
    card.csr_write(endpoint::base(e) + endpoint::TX_PRODUCER, index + 1);
    let before = producer(card, e);
    assert!(
        card.run_until(200_000, |c| producer(c, e) != before),
        "the card is wedged: a good message after the bad input never completed"
    );
    let c = completion_at(card, e, before);
    assert_eq!(host_abi::get(&c, completion::COOKIE), 0xc0de);
    assert_eq!(
        host_abi::get(&c, completion::STATUS),
        completion::status::OK as u64
    );
    let frames = card.take_transmitted();
    let got: Vec<u8> = frames
        .iter()
        .filter_map(|f| match Frame::decode(&f.bytes).ok()?.homa.body {
            Body::Data(d) if d.message_length == 500 => Some(d.payload),
            _ => None,
        })
        .flatten()
        .collect();
    assert!(got == payload, "the good message left intact");
}

#[test]
fn descriptors_of_every_further_bad_class_complete_with_an_error() {
    let mut h = host("hostile_descriptors", 1);
    let c = &mut h.card;
    use completion::status::*;
    // (buffer, length, opcode, expected status)
    let cases: [(u64, u32, u8, u8); 5] = [
        // Runs past the end of the mapped buffer region.
        (TX_BUFFERS + TX_BUFFER_BYTES - 100, 3000, 1, DMA_ERROR),
        // Its end wraps past the top of the 64-bit address space.
        (u64::MAX - 200, 1000, 1, DMA_ERROR),
        // Opcode 0, and the highest.
        (TX_BUFFERS, 100, 0, BAD_DESCRIPTOR),
        (TX_BUFFERS, 100, 0xff, BAD_DESCRIPTOR),
        // Length of all ones.
        (TX_BUFFERS, u32::MAX, 1, BAD_DESCRIPTOR),
    ];
    for (i, &(buffer, length, opcode, _)) in cases.iter().enumerate() {
        post(c, 0, i as u32, opcode, buffer, length, i as u64);
    }
    c.csr_write(
        endpoint::base(0) + endpoint::TX_PRODUCER,
        cases.len() as u32,
    );
    assert!(
        c.run_until(300_000, |c| producer(c, 0) == cases.len() as u32),
        "every bad descriptor completes"
    );
    for i in 0..cases.len() as u32 {
        let cpl = completion_at(c, 0, i);
        let cookie = host_abi::get(&cpl, completion::COOKIE) as usize;
        assert_eq!(
            host_abi::get(&cpl, completion::STATUS),
            cases[cookie].3 as u64,
            "case {cookie}: {:?}",
            cases[cookie]
        );
    }
    c.csr_write(
        endpoint::base(0) + endpoint::CPL_CONSUMER,
        cases.len() as u32,
    );
    still_works(c, 0, cases.len() as u32);
}

#[test]
fn a_descriptor_ring_the_card_cannot_read_does_not_wedge_it() {
    let mut h = host("hostile_ring_unmapped", 2);
    let c = &mut h.card;
    // Endpoint 1's ring moved to memory the host never mapped.
    c.csr_write(endpoint::base(1) + endpoint::TX_RING_LO, 0x7700_0000);
    c.csr_write(endpoint::base(1) + endpoint::TX_PRODUCER, 3);
    c.run(20_000);
    assert!(
        c.stats().dma_read_faults >= 1,
        "the descriptor fetch was refused by the IOMMU"
    );
    // Endpoint 0 goes on.
    still_works(c, 0, 0);
}

/// Finding 5 of the fuzzer (fixed in 1cf5f27): the card took a producer
/// index more than a ring ahead and sent the stale entries again. Now the
/// doorbell is skipped and counted, and the ring goes on from it.
#[test]
fn a_doorbell_beyond_the_ring_is_skipped_counted_and_the_card_goes_on() {
    let mut h = host("hostile_doorbell_beyond", 1);
    let c = &mut h.card;
    let payload = vec![0x5au8; 64];
    c.memory_mut().write(TX_BUFFERS, &payload);
    for i in 0..RING {
        post(
            c,
            0,
            i,
            tx_desc::opcode::SEND_REQUEST,
            TX_BUFFERS,
            64,
            i as u64,
        );
    }
    // Eight entries more than the ring holds.
    let beyond = RING + 8;
    c.csr_write(endpoint::base(0) + endpoint::TX_PRODUCER, beyond);
    c.run(20_000);
    let sent = c.take_transmitted().len() as u32;
    assert!(
        sent <= RING,
        "{sent} messages sent from a ring of {RING}: stale entries went out again"
    );
    assert_eq!(
        c.csr_read(rx_counters::BASE + rx_counters::DOORBELLS_BEYOND_RING),
        1,
        "the bad doorbell is counted"
    );
    let done = producer(c, 0);
    c.csr_write(endpoint::base(0) + endpoint::CPL_CONSUMER, done);
    still_works(c, 0, beyond);
}

#[test]
fn csr_writes_outside_the_writable_registers_change_nothing_and_wedge_nothing() {
    let mut h = host("hostile_csr", 1);
    let c = &mut h.card;
    c.csr_write(scratch::BASE + scratch::SCRATCH, 0x1234_5678);
    // Every writable register, and what it holds now.
    let writable: Vec<u32> = [
        scratch::BASE + scratch::SCRATCH,
        interface::BASE + interface::MAC_LO,
        interface::BASE + interface::MAC_HI,
        interface::BASE + interface::IPV4,
    ]
    .into_iter()
    .chain(
        (grant::MAX_INCOMING..=grant::FIFO_GRANT_INCREMENT)
            .step_by(4)
            .map(|o| grant::BASE + o),
    )
    .chain((0..endpoint::COUNT).flat_map(|i| {
        let b = endpoint::base(i);
        [
            endpoint::PORT,
            endpoint::TX_RING_LO,
            endpoint::TX_RING_HI,
            endpoint::TX_RING_LOG2,
            endpoint::TX_PRODUCER,
            endpoint::CPL_RING_LO,
            endpoint::CPL_RING_HI,
            endpoint::CPL_RING_LOG2,
            endpoint::CPL_CONSUMER,
            endpoint::RX_AREA_LO,
            endpoint::RX_AREA_HI,
            endpoint::RX_BPAGE_PUSH,
        ]
        .map(|o| b + o)
    }))
    .collect();
    let keep: Vec<(u32, u32)> = writable
        .iter()
        // The bpage push is write-only (a FIFO's input).
        .filter(|&&a| a < endpoint::BASE || a & 0xff != endpoint::RX_BPAGE_PUSH)
        .map(|&a| (a, c.csr_read(a)))
        .collect();
    let id_before: Vec<u32> = (0..0x1c)
        .step_by(4)
        .map(|o| c.csr_read(id::BASE + o))
        .collect();
    let counters_before = c.csr_read(rx_counters::BASE + rx_counters::FIRST_COUNTER);
    // Every other word of the first 8 KiB (the blocks, the gaps between and
    // after them), then a spread up to the top of the window.
    let targets: Vec<u32> = (0..0x2000u32)
        .step_by(4)
        .chain(
            (0x2000..1u32 << regmap::CSR_ADDR_BITS)
                .step_by(0x1_1004)
                .map(|a| a & !3),
        )
        .chain([(1u32 << regmap::CSR_ADDR_BITS) - 4])
        .filter(|a| !writable.contains(a))
        .collect();
    for (i, &a) in targets.iter().enumerate() {
        c.csr_write(
            a,
            if i % 2 == 0 {
                u32::MAX
            } else {
                0xa5a5_5a5a ^ a
            },
        );
    }
    for &(a, v) in &keep {
        assert_eq!(
            c.csr_read(a),
            v,
            "register {a:#06x} changed by writes elsewhere"
        );
    }
    let id_after: Vec<u32> = (0..0x1c)
        .step_by(4)
        .map(|o| c.csr_read(id::BASE + o))
        .collect();
    assert_eq!(id_before, id_after, "the ID block is read-only");
    assert_eq!(
        c.csr_read(rx_counters::BASE + rx_counters::FIRST_COUNTER),
        counters_before,
        "the RX counters are read-only"
    );
    still_works(c, 0, 0);
}

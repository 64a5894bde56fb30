//! The card's MSI-X interrupts end to end: the core's interrupt block, its
//! messages on the DMA write port through the PCIe requester and the root
//! complex, and host memory's interrupt window. The host here plays the
//! kernel (it programs the MSI-X table and enables MSI-X) and the driver
//! (it arms a vector before it would sleep).
//!
//! What must hold: a message reaches the host only after the completion it
//! announces is visible; a vector fires once per arming, only while its
//! ring holds an entry the host has not consumed, with its own table
//! entry's address and data; nothing fires while MSI-X is off.

mod support;

use homa_hw::regmap::{endpoint, interrupt};
use homa_hw_sim::host_memory::MsiMessage;
use support::host::TestHost;
use support::packet_at;

const MSI_ADDRESS: u32 = 0xfee0_0000;
const MSI_DATA: u32 = 0x40;
/// Cycles a completion, or its interrupt, may take to arrive.
const LIMIT: u64 = 20_000;

fn host(name: &str) -> TestHost {
    TestHost::new(name, [2, 0, 0, 0, 0, 2], 0x0a00_0002, &[99])
}

/// What the kernel does for MSI-X: vector 0's table entry, unmasked, and
/// MSI-X on; the holdoff as given.
fn enable(h: &mut TestHost, holdoff_ns: u32) {
    let entry = interrupt::table_offset();
    h.card
        .csr_write(entry + interrupt::ENTRY_ADDR_LO, MSI_ADDRESS + 0x10);
    h.card.csr_write(entry + interrupt::ENTRY_ADDR_HI, 0);
    h.card.csr_write(entry + interrupt::ENTRY_DATA, MSI_DATA);
    h.card.csr_write(entry + interrupt::ENTRY_CONTROL, 0);
    h.card
        .csr_write(interrupt::BASE + interrupt::HOLDOFF_NS, holdoff_ns);
    h.flush();
    h.card.set_msix(true, false);
}

fn arm(h: &mut TestHost) {
    h.card.csr_write(interrupt::BASE + interrupt::ARM, 1);
    h.flush();
}

/// A one-packet request `id` arrives; returns the cycles at which its
/// completion became visible to the host and at which an interrupt did (if
/// one did within `LIMIT`), consuming the completion.
fn request(h: &mut TestHost, id: u64) -> (u64, Option<(u64, MsiMessage)>) {
    h.card.receive(&packet_at(id, 100, 0, |i| i as u8));
    let mut completed = None;
    let mut irq = None;
    for _ in 0..LIMIT {
        h.card.step();
        if completed.is_none() && !h.poll(0).is_empty() {
            completed = Some(h.card.cycle());
        }
        if let Some(i) = h.card.take_interrupts().first() {
            assert!(irq.is_none(), "one message per arming");
            irq = Some((i.cycle, i.message));
        }
        if completed.is_some() && irq.is_some() {
            break;
        }
    }
    (completed.expect("the request completes"), irq)
}

#[test]
fn an_interrupt_follows_its_completion_once_per_arming() {
    let mut h = host("card_irq");
    enable(&mut h, 0);
    arm(&mut h);
    let (done, irq) = request(&mut h, 2);
    let (at, message) = irq.expect("armed: an interrupt");
    assert!(
        at >= done,
        "the interrupt ({at}) after the completion ({done})"
    );
    println!(
        "completion visible at {done}, interrupt at {at}: {} cycles later",
        at - done
    );
    assert_eq!(
        message,
        MsiMessage {
            addr: u64::from(MSI_ADDRESS + 0x10),
            data: MSI_DATA
        }
    );
    assert_eq!(
        h.card.csr_read(interrupt::BASE + interrupt::ARM),
        0,
        "disarmed"
    );

    // Not re-armed: the next completion comes without one.
    let (_, irq) = request(&mut h, 4);
    assert_eq!(irq, None, "fired without being armed");

    // Armed with the ring consumed (the host has written CPL_CONSUMER):
    // nothing until the next completion, then one.
    arm(&mut h);
    h.card.run(2_000);
    assert!(
        h.card.take_interrupts().is_empty(),
        "fired on an empty ring"
    );
    let (done, irq) = request(&mut h, 6);
    assert!(irq.expect("armed again").0 >= done);
    assert_eq!(h.card.csr_read(interrupt::BASE + interrupt::SENT), 2);

    // MSI-X off: armed, a completion, no message.
    h.card.set_msix(false, false);
    arm(&mut h);
    let (_, irq) = request(&mut h, 8);
    assert_eq!(irq, None, "fired with MSI-X off");
    assert!(
        h.card.csr_read(endpoint::base(0) + endpoint::CPL_PRODUCER) >= 4,
        "every request completed"
    );
}

#[test]
fn a_masked_vector_is_pending_until_unmasked() {
    let mut h = host("card_irq_mask");
    enable(&mut h, 0);
    let control = interrupt::table_offset() + interrupt::ENTRY_CONTROL;
    h.card.csr_write(control, 1);
    arm(&mut h);
    let (_, irq) = request(&mut h, 2);
    assert_eq!(irq, None, "fired while masked");
    // The entry was consumed: nothing pending. The next one is held.
    h.card.receive(&packet_at(4, 100, 0, |i| i as u8));
    h.card.run(3_000);
    assert_eq!(
        h.card.csr_read(interrupt::BASE + interrupt::PBA),
        1,
        "pending"
    );
    h.card.csr_write(control, 0);
    let fired = h.card.run_until(LIMIT, |c| c.interrupt_waiting());
    assert!(fired, "unmasked: the pending message goes");
    assert_eq!(h.card.csr_read(interrupt::BASE + interrupt::PBA), 0);
}

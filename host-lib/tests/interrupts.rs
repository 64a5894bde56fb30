//! Blocked calls that sleep on their endpoint's MSI-X interrupt
//! (`busy_poll_us = 0`: they arm and sleep at once) instead of polling: the
//! RPCs complete intact, every sleep ends with the interrupt (none with the
//! timeout, which would mean a lost wake-up), the card counts the messages
//! it sent, and sleeping costs a round trip next to nothing.

use homa_host::{Endpoint, Nic, Peer};

mod support;

fn nics(name: &str, conf: &str) -> Vec<Nic> {
    support::cards_with_config(name, 2, conf)
}

fn sent(nic: &Nic) -> u32 {
    nic.device().interrupts().unwrap().sent().unwrap()
}

#[test]
fn blocked_calls_sleep_on_their_interrupt_and_wake_with_their_message() {
    let nics = nics("irq_sleep", "busy_poll_us = 0");
    assert!(nics.iter().all(|n| n.interrupts()));
    let mut client = Endpoint::open(&nics[0], 1000).unwrap();
    let mut server = Endpoint::open(&nics[1], 99).unwrap();
    let server_peer = Peer::new(nics[1].ip(), nics[1].mac(), 99);
    for (round, len) in [1usize, 3_000, 200_000].into_iter().enumerate() {
        let message: Vec<u8> = (0..len).map(|i| (i * 7 + round) as u8).collect();
        let id = client.send_request(server_peer, &message).unwrap();
        let request = server.recv_request().unwrap();
        assert_eq!(request.message().to_vec(), message);
        server.reply(request.id(), &message[..len / 2 + 1]).unwrap();
        let response = client.recv_response(id).unwrap();
        assert_eq!(response.message().to_vec(), &message[..len / 2 + 1]);
    }
    for (name, nic) in ["client", "server"].iter().zip(&nics) {
        let w = nic.wait_stats();
        println!("{name}: {w:?}, card sent {} interrupts", sent(nic));
        assert!(w.sleeps >= 3, "{name} slept in each blocked call: {w:?}");
        assert_eq!(w.timeouts, 0, "{name}: a sleep missed its interrupt: {w:?}");
        assert_eq!(w.wakeups, w.sleeps, "{name}: {w:?}");
        assert!(
            u64::from(sent(nic)) >= w.wakeups,
            "{name}: the card counts its messages"
        );
    }
}

#[test]
fn a_masked_vector_leaves_the_sleeper_to_its_timeout() {
    let nics = nics("irq_masked", "busy_poll_us = 0");
    let mut client = Endpoint::open(&nics[0], 1000).unwrap();
    let mut server = Endpoint::open(&nics[1], 99).unwrap();
    // The server's vector (endpoint 0's) masked, as an OS might.
    nics[1]
        .device()
        .interrupts()
        .unwrap()
        .set_vector_masked(0, true)
        .unwrap();
    let id = client
        .send_request(Peer::new(nics[1].ip(), nics[1].mac(), 99), b"ping")
        .unwrap();
    let request = server.recv_request().unwrap();
    assert_eq!(request.message().to_vec(), b"ping");
    let w = nics[1].wait_stats();
    assert!(w.timeouts >= 1 && w.wakeups == 0, "{w:?}");
    server.reply(request.id(), b"pong").unwrap();
    assert_eq!(
        client.recv_response(id).unwrap().message().to_vec(),
        b"pong"
    );
    assert_eq!(nics[0].wait_stats().timeouts, 0);
}

#[test]
fn with_busy_poll_at_its_maximum_nothing_sleeps() {
    let nics = nics("irq_poll", "busy_poll_us = 1000000");
    assert!(nics.iter().all(|n| !n.interrupts()));
    let mut client = Endpoint::open(&nics[0], 1000).unwrap();
    let mut server = Endpoint::open(&nics[1], 99).unwrap();
    let id = client
        .send_request(Peer::new(nics[1].ip(), nics[1].mac(), 99), b"ping")
        .unwrap();
    let request = server.recv_request().unwrap();
    server.reply(request.id(), b"pong").unwrap();
    client.recv_response(id).unwrap();
    assert_eq!(nics[0].wait_stats().sleeps + nics[1].wait_stats().sleeps, 0);
    assert_eq!(sent(&nics[0]) + sent(&nics[1]), 0);
}

/// Cycles of each of `rounds` 100-byte echo RPCs made with blocking calls
/// on a network configured by `conf`.
fn blocking_rtts(name: &str, conf: &str, rounds: usize) -> Vec<u64> {
    let nics = nics(name, conf);
    let mut client = Endpoint::open(&nics[0], 1000).unwrap();
    let mut server = Endpoint::open(&nics[1], 99).unwrap();
    let server_peer = Peer::new(nics[1].ip(), nics[1].mac(), 99);
    let cycle = || nics[0].cycle().unwrap();
    (0..rounds)
        .map(|round| {
            let start = cycle();
            let id = client
                .send_request(server_peer, &[round as u8; 100])
                .unwrap();
            let request = server.recv_request().unwrap();
            server
                .reply(request.id(), &request.message().to_vec())
                .unwrap();
            client.recv_response(id).unwrap();
            cycle() - start
        })
        .collect()
}

/// A client's TX_DONE lands just ahead of its response, and its interrupt
/// wakes the sleeper first; the card holds the vector's next message for
/// the holdoff (2 us). A sleeper that slept again at once would see the
/// response only then, 500 cycles late; it polls through the holdoff
/// instead, so sleeping costs a round trip next to nothing.
#[test]
fn a_sleeper_woken_early_does_not_wait_out_the_holdoff() {
    let slept = blocking_rtts("irq_rtt_sleep", "busy_poll_us = 0", 4);
    let polled = blocking_rtts("irq_rtt_poll", "busy_poll_us = 1000000", 4);
    // The first RPC of each pays for address resolution and warm-up.
    for (s, p) in slept.iter().zip(&polled).skip(1) {
        assert!(
            *s <= p + 100,
            "sleeping RTT {s} cycles against polling {p}: {slept:?} / {polled:?}"
        );
    }
}

//! A dead peer (issue 9): a request to a host that never answers ends in a
//! typed timeout error within the configured time, and the card holds
//! nothing for it afterwards. And the same seen from the other side: an
//! endpoint closed with RPCs in flight fails its peer's calls with a typed
//! error, both cards give back everything the RPCs held (slots, grants,
//! held messages, bpages), by their timers where no packet says so, and the
//! port opened again serves as before.

mod support;

use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};

use homa_host::{Endpoint, Error, Nic, Peer, RpcId, SimNetwork};
use homa_hw::regmap::{endpoint, grant, rx_counters, timer};

#[test]
fn a_request_to_a_dead_peer_times_out_and_leaves_nothing_held() {
    // One card alone on the switch: the peer's address leads nowhere.
    let network = Arc::new(Mutex::new(SimNetwork::new(
        "dead_peer",
        1,
        Default::default(),
    )));
    let nic = Nic::open_sim(&network, 0).unwrap();
    nic.set_address([2, 0, 0, 0, 0, 1], Ipv4Addr::new(10, 0, 0, 1))
        .unwrap();
    let backend = nic.device().backend();
    let csr = |at: u32| backend.csr_read(at).unwrap();
    let tick_ns = csr(timer::BASE + timer::TICK_NS) as u64;
    let resend_ticks = csr(timer::BASE + timer::RESEND_TICKS) as u64;
    let timeout_ticks = csr(timer::BASE + timer::TIMEOUT_TICKS) as u64;

    let mut client = Endpoint::open(&nic, 1000).unwrap();
    let dead = Peer::new(Ipv4Addr::new(10, 0, 0, 9), [2, 0, 0, 0, 0, 9], 99);
    let start = nic.cycle().unwrap();
    let id = client.send_request(dead, &[7u8; 5000]).unwrap();
    let err = client.recv_response(id).unwrap_err();
    let took_ns = (nic.cycle().unwrap() - start) as f64 * nic.cycle_ns();
    assert!(matches!(err, Error::Timeout(i) if i == id), "{err}");

    // After timeout_ticks ticks of silence, counted in whole ticks as
    // HomaModule counts them: the first tick after the last packet may come
    // at once, so a tick or so short of the configured time, never two; and
    // never more than two ticks and a sweep over every slot (65.5 us) late.
    let configured_ns = (timeout_ticks * tick_ns) as f64;
    assert!(
        took_ns >= configured_ns - 2.0 * tick_ns as f64
            && took_ns <= configured_ns + 2.0 * tick_ns as f64 + 70_000.0,
        "timed out after {took_ns} ns; configured {timeout_ticks} ticks of {tick_ns} ns"
    );
    // It asked the silent server for the response meanwhile.
    let asked = csr(rx_counters::BASE + rx_counters::RESPONSE_RESENDS_SENT) as u64;
    assert!(
        asked >= 1 && asked <= timeout_ticks / resend_ticks.max(1),
        "{asked} RESENDs"
    );
    assert_eq!(csr(rx_counters::BASE + rx_counters::TX_MESSAGES_HELD), 0);
    assert_eq!(csr(rx_counters::BASE + rx_counters::LINGERS_EXPIRED), 1);
    // The endpoint closes at once: nothing left to wait for.
    drop(client);
}

#[test]
fn a_response_cut_off_by_its_servers_death_fails_and_the_client_holds_nothing() {
    use homa_hw_sim::cable::CableFaults;
    let (network, nics) = support::cards("dead_server", 2);
    let mut client = Endpoint::open(&nics[0], 1000).unwrap();
    let mut server = Endpoint::open(&nics[1], 99).unwrap();
    let free_at = endpoint::base(0) + endpoint::RX_BPAGES_FREE;
    let free_before = csr(&nics[0], free_at);

    let id = client
        .send_request(Peer::new(nics[1].ip(), nics[1].mac(), 99), &[1u8; 100])
        .unwrap();
    let request = server.recv_request().unwrap();
    // The server answers 300 KB and dies a few microseconds in: some of
    // its unscheduled packets reach the client, the rest never do.
    server.reply(request.id(), &vec![9u8; 300_000]).unwrap();
    {
        let mut net = network.lock().unwrap();
        let now = net.cycle();
        net.set_cable_faults(CableFaults {
            link_down: Some((now + 1_500, u64::MAX)),
            ..Default::default()
        });
    }
    let err = client.recv_response(id).unwrap_err();
    assert!(matches!(err, Error::Timeout(i) if i == id), "{err}");

    // The client's card forgot the half-received response: slot, bpages
    // and grants all back.
    let rx = |at: u32| csr(&nics[0], rx_counters::BASE + at);
    assert_eq!(
        rx(rx_counters::INBOUND_EXPIRED),
        1,
        "the response was cut, not lost whole"
    );
    assert_eq!(rx(rx_counters::RX_MESSAGES_HELD), 0);
    assert_eq!(rx(rx_counters::TX_MESSAGES_HELD), 0);
    assert_eq!(csr(&nics[0], grant::BASE + grant::TOTAL_INCOMING), 0);
    assert_eq!(csr(&nics[0], free_at), free_before);
    // The dead server's card gives its response up too, in time.
    let held = |nic: &Nic| csr(nic, rx_counters::BASE + rx_counters::TX_MESSAGES_HELD);
    for _ in 0..2_000 {
        if held(&nics[1]) == 0 {
            break;
        }
        nics[1].wait();
    }
    assert_eq!(held(&nics[1]), 0);
}

fn csr(nic: &Nic, at: u32) -> u32 {
    nic.device().backend().csr_read(at).unwrap()
}

/// Cycles `ticks` timer ticks of `nic` take.
fn tick_cycles(nic: &Nic, ticks: u64) -> u64 {
    let tick_ns = csr(nic, timer::BASE + timer::TICK_NS) as u64;
    ((ticks * tick_ns) as f64 / nic.cycle_ns()) as u64
}

/// Cycles `n` of `nic`'s RPC timeouts (`timeout_ticks`) take.
fn timeout_cycles(nic: &Nic, n: u64) -> u64 {
    tick_cycles(nic, n * csr(nic, timer::BASE + timer::TIMEOUT_TICKS) as u64)
}

/// Three requests to `to`: 100 B, 300 KB and 900 KB, each of its own bytes.
fn three_calls(client: &mut Endpoint, to: Peer) -> Vec<(RpcId, Vec<u8>)> {
    [(100usize, 1usize), (300_000, 2), (900_000, 3)]
        .iter()
        .map(|&(n, seed)| {
            let request = pattern(n, seed);
            (client.send_request(to, &request).unwrap(), request)
        })
        .collect()
}

/// Each call ended with its response or a timeout, nothing else.
fn assert_served_or_timed_out(calls: &[(RpcId, Vec<u8>)], ended: &[Result<(), Error>]) {
    for ((id, _), how) in calls.iter().zip(ended) {
        assert!(
            matches!(how, Ok(()) | Err(Error::Timeout(_))),
            "{id:?} ended with {how:?}"
        );
    }
}

/// Two cards whose RPCs time out after 40 ticks (400 us) rather than 200:
/// these tests wait for timeouts, several times over.
fn quick_cards(name: &str) -> Vec<Nic> {
    let (_network, nics) = support::cards(name, 2);
    for nic in &nics {
        let backend = nic.device().backend();
        backend
            .csr_write(timer::BASE + timer::TIMEOUT_TICKS, 40)
            .unwrap();
    }
    nics
}

/// What a card holds for RPCs: messages in its RX and TX tables, bytes
/// granted and not received.
fn held(nic: &Nic) -> (u32, u32, u32) {
    (
        csr(nic, rx_counters::BASE + rx_counters::RX_MESSAGES_HELD),
        csr(nic, rx_counters::BASE + rx_counters::TX_MESSAGES_HELD),
        csr(nic, grant::BASE + grant::TOTAL_INCOMING),
    )
}

/// Runs the cards until neither holds anything, for at most three timeouts
/// (`timeout_ticks` of silence ends whatever no packet ends).
fn drain(nics: &[Nic]) {
    let limit = nics[0].cycle().unwrap() + timeout_cycles(&nics[0], 3);
    while nics.iter().any(|n| held(n) != (0, 0, 0)) {
        assert!(
            nics[0].cycle().unwrap() < limit,
            "still held after three timeouts: {:?}",
            nics.iter().map(held).collect::<Vec<_>>()
        );
        nics[0].wait();
    }
}

/// Bytes of a test message, different for every `seed`.
fn pattern(size: usize, seed: usize) -> Vec<u8> {
    (0..size).map(|i| (i * 7 + seed * 13 + 3) as u8).collect()
}

/// Runs the cards, the server echoing every request it gets, until each of
/// the client's `calls` (id and request) has ended; returns how each ended.
/// A response must be its request, byte for byte. Fails after ten
/// timeouts (a call may time out, start over and time out again).
fn serve_until_ended(
    client: &mut Endpoint,
    server: &mut Endpoint,
    calls: &[(RpcId, Vec<u8>)],
) -> Vec<Result<(), Error>> {
    let nic = client.nic().clone();
    let limit = nic.cycle().unwrap() + timeout_cycles(&nic, 10);
    let mut ended: Vec<Option<Result<(), Error>>> = calls.iter().map(|_| None).collect();
    while ended.iter().any(Option::is_none) {
        assert!(
            nic.cycle().unwrap() < limit,
            "calls still waiting after ten timeouts: {ended:?}"
        );
        while let Some(request) = server.try_recv_request().unwrap() {
            let echo = request.message().to_vec();
            server.reply(request.id(), &echo).unwrap();
        }
        for (k, (id, sent)) in calls.iter().enumerate() {
            if ended[k].is_none() && client.response_ready(*id).unwrap() {
                ended[k] = Some(match client.try_recv_response(*id) {
                    Ok(Some(response)) => {
                        assert_eq!(&response.message().to_vec(), sent, "{id:?}'s response");
                        Ok(())
                    }
                    Ok(None) => unreachable!("ready"),
                    Err(e) => Err(e),
                });
            }
        }
        nic.wait();
    }
    ended.into_iter().map(Option::unwrap).collect()
}

/// One RPC, checked byte for byte, within three timeouts.
fn echo_once(client: &mut Endpoint, server: &mut Endpoint, size: usize) {
    let nic = server.nic();
    let to = Peer::new(nic.ip(), nic.mac(), server.port());
    let request = pattern(size, 99);
    let id = client.send_request(to, &request).unwrap();
    let ended = serve_until_ended(client, server, &[(id, request)]);
    assert!(ended[0].is_ok(), "{:?}", ended[0]);
}

#[test]
fn a_server_closed_with_requests_in_service_fails_its_clients_and_holds_nothing() {
    let nics = quick_cards("close_server");
    let mut client = Endpoint::open(&nics[0], 1000).unwrap();
    let mut server = Endpoint::open(&nics[1], 99).unwrap();
    let client_free = client.bpages_free().unwrap();
    let to = Peer::new(nics[1].ip(), nics[1].mac(), 99);

    // One request taken by the server (in service, never answered), one
    // past the unscheduled bytes half granted, one arriving: then the
    // server goes away.
    let ids: Vec<_> = [100usize, 300_000, 40_000]
        .iter()
        .map(|&n| client.send_request(to, &vec![5u8; n]).unwrap())
        .collect();
    let taken = server.recv_request().unwrap();
    assert_eq!(taken.id().0 & !1, ids[0].0 & !1, "the small request first");
    drop(taken);
    drop(server);

    for id in ids {
        let err = client.recv_response(id).unwrap_err();
        assert!(matches!(err, Error::Timeout(i) if i == id), "{id:?}: {err}");
    }
    drain(&nics);
    assert_eq!(client.bpages_free().unwrap(), client_free);
    assert_eq!(client.outstanding(), 0);

    // The port serves again.
    let mut server = Endpoint::open(&nics[1], 99).unwrap();
    echo_once(&mut client, &mut server, 50_000);
}

#[test]
fn a_client_closed_with_rpcs_in_flight_leaves_neither_card_holding_anything() {
    let nics = quick_cards("close_client");
    let mut client = Endpoint::open(&nics[0], 1000).unwrap();
    let mut server = Endpoint::open(&nics[1], 99).unwrap();
    let to = Peer::new(nics[1].ip(), nics[1].mac(), 99);
    let server_free = server.bpages_free().unwrap();

    // Two RPCs: one answered with 300 KB that the client never reads, one
    // the server has not answered when the client goes away.
    let a = client.send_request(to, &[1u8; 1_000]).unwrap();
    let b = client.send_request(to, &[2u8; 80_000]).unwrap();
    let first = server.recv_request().unwrap();
    server.reply(first.id(), &vec![9u8; 300_000]).unwrap();
    let second = server.recv_request().unwrap();
    let _ = (a, b);
    drop(client);

    // The late answer goes to a closed port.
    server.reply(second.id(), &[3u8; 2_000]).unwrap();
    drop((first, second));

    // The closed client's request is let go at its first timer visit (it
    // holds a buffer the host may have freed), not after a timeout.
    let resend_ticks = csr(&nics[0], timer::BASE + timer::RESEND_TICKS) as u64;
    let limit = nics[0].cycle().unwrap() + tick_cycles(&nics[0], 3 * resend_ticks);
    while held(&nics[0]).1 != 0 {
        assert!(
            nics[0].cycle().unwrap() < limit,
            "the closed client's request still held after {} ticks",
            3 * resend_ticks
        );
        nics[0].wait();
    }
    drain(&nics);
    let counted = |nic: &Nic, at: u32| csr(nic, rx_counters::BASE + at);
    assert!(
        counted(&nics[0], rx_counters::DROP_NO_ENDPOINT) > 0,
        "the client's card never met a packet for the closed port"
    );
    assert_eq!(server.bpages_free().unwrap(), server_free);
    assert_eq!(
        csr(&nics[1], endpoint::base(0) + endpoint::RX_BPAGES_FREE),
        server_free
    );

    // The port serves again.
    let mut client = Endpoint::open(&nics[0], 1000).unwrap();
    echo_once(&mut client, &mut server, 50_000);
}

#[test]
fn a_port_opened_again_at_once_gets_nothing_of_the_endpoint_before() {
    // The server goes away with a request half received (its bpages taken
    // from the old RX area) and comes back on the same port at once. What
    // the card kept for the old endpoint must neither land in the new
    // endpoint's memory nor give its pages to the new pool; the client's
    // calls end (a timeout, or a response from the new server if the
    // request started over), and the port serves.
    let nics = quick_cards("reopen_server");
    let mut client = Endpoint::open(&nics[0], 1000).unwrap();
    let mut server = Endpoint::open(&nics[1], 99).unwrap();
    let to = Peer::new(nics[1].ip(), nics[1].mac(), 99);
    let calls = three_calls(&mut client, to);
    let taken = server.recv_request().unwrap();
    assert_eq!(
        taken.id().0 & !1,
        calls[0].0 .0 & !1,
        "the small request first"
    );
    drop(taken);
    // Both big requests begun (their bpages taken), neither finished.
    for _ in 0..100_000 {
        if held(&nics[1]).0 == 3 {
            break;
        }
        nics[1].wait();
    }
    assert_eq!(held(&nics[1]).0, 3, "three requests in the server's card");
    drop(server);
    let mut server = Endpoint::open(&nics[1], 99).unwrap();
    let server_free = server.bpages_free().unwrap();

    let ended = serve_until_ended(&mut client, &mut server, &calls);
    assert_served_or_timed_out(&calls, &ended);
    drain(&nics);
    let counted = |at: u32| csr(&nics[1], rx_counters::BASE + at);
    assert!(
        counted(rx_counters::DROP_NO_ENDPOINT) > 0,
        "no packet of the old endpoint's message came after it closed"
    );
    assert_eq!(
        server.bpages_free().unwrap(),
        server_free,
        "the new endpoint's pool lost pages or gained the old area's"
    );
    echo_once(&mut client, &mut server, 200_000);
}

#[test]
fn a_card_reset_fails_every_waiting_call_and_leaves_nothing_held() {
    // (Short timeouts since the count of DMA reads outstanding was fixed:
    // before, an old read answer could get through the reset and stop the
    // server's read port, and with 40 ticks the 300 KB call never ended.)
    let nics = quick_cards("card_reset");
    let mut client = Endpoint::open(&nics[0], 1000).unwrap();
    let mut server = Endpoint::open(&nics[1], 99).unwrap();
    let bpages = server.bpages_free().unwrap();
    let to = Peer::new(nics[1].ip(), nics[1].mac(), 99);
    let calls = three_calls(&mut client, to);
    // The server answers the first with 500 KB and is reset mid-way, its
    // card sending that response (payload reads in flight) and receiving
    // the two big requests.
    let first = server.recv_request().unwrap();
    server.reply(first.id(), &pattern(500_000, 4)).unwrap();
    for _ in 0..2_000 {
        nics[1].wait();
    }
    assert!(held(&nics[1]).1 > 0, "the response is being sent");
    nics[1].reset().unwrap();

    // The server's card holds nothing and knows no endpoint; the old
    // endpoint's calls fail, and dropping it (and its message) tells the
    // card nothing.
    assert_eq!(held(&nics[1]), (0, 0, 0));
    for e in 0..endpoint::COUNT {
        assert_eq!(csr(&nics[1], endpoint::base(e) + endpoint::PORT), 0);
    }
    assert!(matches!(server.try_recv_request(), Err(Error::CardReset)));
    assert!(matches!(
        server.send_request(to, b"x"),
        Err(Error::CardReset)
    ));
    drop(first);
    drop(server);

    // A new server on the port: the client's calls end (served anew when
    // a request starts over, else timed out), both cards drain.
    let mut server = Endpoint::open(&nics[1], 99).unwrap();
    let ended = serve_until_ended(&mut client, &mut server, &calls);
    assert_served_or_timed_out(&calls, &ended);
    drain(&nics);
    assert_eq!(server.bpages_free().unwrap(), bpages);
    echo_once(&mut client, &mut server, 200_000);

    // The client's card reset with a call waiting: the call fails at once.
    let waiting = client.send_request(to, &pattern(700_000, 5)).unwrap();
    for _ in 0..2_000 {
        nics[0].wait();
    }
    nics[0].reset().unwrap();
    assert!(matches!(
        client.recv_response(waiting),
        Err(Error::CardReset)
    ));
    drop(client);
    drain(&nics);
    let mut client = Endpoint::open(&nics[0], 1000).unwrap();
    echo_once(&mut client, &mut server, 50_000);
}

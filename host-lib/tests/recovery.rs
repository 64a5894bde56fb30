//! Loss recovery across the whole RPC, through host-lib and two RTL cards
//! (issue 9): a request lost whole is sent again by its client's nudges and
//! runs once; a server slower than the client's patience sees the copies
//! its client sends as duplicates, not as new requests (at most once).

use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};

use homa_host::{Endpoint, Nic, Peer, SimNetwork};
use homa_hw::regmap::{rx_counters, timer};
use homa_hw_sim::cable::CableFaults;

/// Two cards on one cable, addressed 10.0.0.1 and 10.0.0.2.
fn two_cards(name: &str) -> (Arc<Mutex<SimNetwork>>, Vec<Nic>) {
    let network = Arc::new(Mutex::new(SimNetwork::new(name, 2, Default::default())));
    let nics = (0..2)
        .map(|i| {
            let nic = Nic::open_sim(&network, i).unwrap();
            nic.set_address(
                [2, 0, 0, 0, 0, i as u8 + 1],
                Ipv4Addr::new(10, 0, 0, i as u8 + 1),
            )
            .unwrap();
            nic
        })
        .collect();
    (network, nics)
}

fn counter(nic: &Nic, at: u32) -> u32 {
    nic.device()
        .backend()
        .csr_read(rx_counters::BASE + at)
        .unwrap()
}

/// The server's next request, waiting at most `cycles` of simulated time.
fn next_request(server: &mut Endpoint, nic: &Nic, cycles: u64) -> homa_host::Request {
    let end = nic.cycle().unwrap() + cycles;
    while nic.cycle().unwrap() < end {
        if let Some(r) = server.try_recv_request().unwrap() {
            return r;
        }
        nic.wait();
    }
    panic!("no request in {cycles} cycles");
}

/// Lets simulated time pass (the network runs while a host waits).
fn idle(nic: &Nic, cycles: u64) {
    let end = nic.cycle().unwrap() + cycles;
    while nic.cycle().unwrap() < end {
        nic.wait();
    }
}

#[test]
fn a_request_lost_whole_is_sent_again_by_its_clients_nudge_and_runs_once() {
    let (network, nics) = two_cards("recovery_lost_request");
    let mut client = Endpoint::open(&nics[0], 1000).unwrap();
    let mut server = Endpoint::open(&nics[1], 99).unwrap();
    // The cable is down for the request's only packet.
    {
        let mut net = network.lock().unwrap();
        let now = net.cycle();
        net.set_cable_faults(CableFaults {
            link_down: Some((now, now + 20_000)),
            ..Default::default()
        });
    }
    let to = Peer::new(nics[1].ip(), nics[1].mac(), 99);
    let id = client.send_request(to, b"lost on the way").unwrap();
    // Within the client's patience (timeout_ticks, 2 ms by default).
    let request = next_request(&mut server, &nics[1], 500_000);
    assert_eq!(request.message().to_vec(), b"lost on the way");
    server.reply(request.id(), b"found").unwrap();
    let response = client.recv_response(id).unwrap();
    assert_eq!(response.message().to_vec(), b"found");
    assert!(network.lock().unwrap().cable_fault_counts().link_down_drops >= 1);
    // The client's nudge sent it again; the server ran it once.
    assert!(counter(&nics[0], rx_counters::RESPONSE_RESENDS_SENT) >= 1);
    assert!(counter(&nics[0], rx_counters::PACKETS_RETRANSMITTED) >= 1);
    idle(&nics[1], 50_000);
    assert!(server.try_recv_request().unwrap().is_none());
}

#[test]
fn a_slow_servers_request_is_not_run_twice_when_its_client_sends_it_again() {
    let (_network, nics) = two_cards("recovery_slow_server");
    let csr = |nic: &Nic, at: u32| nic.device().backend().csr_read(at).unwrap();
    let tick_ns = csr(&nics[0], timer::BASE + timer::TICK_NS) as u64;
    let resend_ticks = csr(&nics[0], timer::BASE + timer::RESEND_TICKS) as u64;
    let mut client = Endpoint::open(&nics[0], 1000).unwrap();
    let mut other = Endpoint::open(&nics[0], 1001).unwrap();
    let mut server = Endpoint::open(&nics[1], 99).unwrap();
    let to = Peer::new(nics[1].ip(), nics[1].mac(), 99);
    let id = client.send_request(to, &[5u8; 3000]).unwrap();
    let slow = server.recv_request().unwrap();
    // Twelve quick RPCs meanwhile: more completed messages than the RX
    // engine's short memory of recent ones (8) holds.
    for n in 0..12u8 {
        let quick = other.send_request(to, &[n; 100]).unwrap();
        let r = server.recv_request().unwrap();
        server.reply(r.id(), &r.message().to_vec()).unwrap();
        assert_eq!(
            other.recv_response(quick).unwrap().message().to_vec(),
            [n; 100]
        );
    }
    // The server takes two and a half resend intervals to answer: its
    // client, hearing nothing, asks twice and sends its first packet again.
    idle(&nics[1], (5 * resend_ticks * tick_ns / 2) / 4);
    assert!(counter(&nics[0], rx_counters::RESPONSE_RESENDS_SENT) >= 2);
    assert!(
        server.try_recv_request().unwrap().is_none(),
        "the request ran twice"
    );
    assert!(counter(&nics[1], rx_counters::DUPLICATES) >= 2);
    server.reply(slow.id(), b"slow but once").unwrap();
    assert_eq!(
        client.recv_response(id).unwrap().message().to_vec(),
        b"slow but once"
    );
    // Once the response is acked, the server's card holds nothing.
    idle(&nics[1], 20_000);
    assert_eq!(counter(&nics[1], rx_counters::RX_MESSAGES_HELD), 0);
    assert_eq!(counter(&nics[1], rx_counters::TX_MESSAGES_HELD), 0);
}

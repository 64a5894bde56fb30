//! A dead peer (issue 9): a request to a host that never answers ends in a
//! typed timeout error within the configured time, and the card holds
//! nothing for it afterwards.

mod support;

use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};

use homa_host::{Endpoint, Error, Nic, Peer, SimNetwork};
use homa_hw::regmap::{rx_counters, timer};

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
    use homa_hw::regmap::{endpoint, grant};
    use homa_hw_sim::cable::CableFaults;
    let (network, nics) = support::cards("dead_server", 2);
    let csr = |nic: &Nic, at: u32| nic.device().backend().csr_read(at).unwrap();
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

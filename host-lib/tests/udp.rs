//! The host library on cards whose ports are UDP wires (QEMU's `-netdev
//! dgram` format) instead of a simulated cable: two networks of one card
//! each, every card on its own clock in its own thread, frames as datagrams
//! on 127.0.0.1. `Nic::open_sim` opens such a card like any other.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use homa_host::{Endpoint, Nic, Peer, SimNetwork};
use homa_hw_sim::udp_wire::UdpWire;

const SIZES: [usize; 3] = [1, 1424, 5000];
/// Wall time the client gives each RPC before the test fails.
const TIMEOUT: Duration = Duration::from_secs(30);

fn loopback() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

/// A card on `wire` with the given addresses.
fn card(name: &str, wire: UdpWire, last: u8) -> (Arc<Mutex<SimNetwork>>, Nic) {
    let network = Arc::new(Mutex::new(SimNetwork::on_udp_wire(
        name,
        wire,
        Default::default(),
    )));
    let nic = Nic::open_sim(&network, 0).unwrap();
    nic.set_address([2, 0, 0, 0, 0, last], Ipv4Addr::new(10, 0, 0, last))
        .unwrap();
    (network, nic)
}

#[test]
fn rpcs_between_two_cards_on_a_udp_wire_each_on_its_own_clock() {
    let mut a = UdpWire::bind(loopback(), loopback()).unwrap();
    let b = UdpWire::bind(loopback(), a.local_addr()).unwrap();
    a.set_remote(b.local_addr());
    let (server_network, server_nic) = card("host_udp_server", a, 2);
    let (client_network, client_nic) = card("host_udp_client", b, 1);
    let server_peer = Peer::new(server_nic.ip(), server_nic.mac(), 99);

    let server = std::thread::spawn(move || {
        let mut endpoint = Endpoint::open(&server_nic, 99).unwrap();
        for _ in SIZES {
            let request = endpoint.recv_request().unwrap();
            let bytes = request.message().to_vec();
            endpoint.reply(request.id(), &bytes).unwrap();
        }
        // Dropping the endpoint lets the card finish sending.
    });

    let mut client = Endpoint::open(&client_nic, 1000).unwrap();
    for size in SIZES {
        let message: Vec<u8> = (0..size).map(|i| (i % 253) as u8).collect();
        let id = client.send_request(server_peer, &message).unwrap();
        let start = Instant::now();
        let response = loop {
            if let Some(r) = client.try_recv_response(id).unwrap() {
                break r;
            }
            assert!(start.elapsed() < TIMEOUT, "no response to {size} bytes");
            client_nic.wait();
        };
        assert_eq!(response.message().to_vec(), message, "{size} bytes");
    }
    drop(client);
    server.join().unwrap();

    // Each card sent one frame per DATA packet, and received the other's,
    // and one CUTOFFS: the other's first DATA carried cutoff version 0 (it
    // had heard none yet); the RPCs run one after another, so every later
    // DATA carries the version learned. On top come the client's ACK of each
    // response and any NEED_ACK the server sent while waiting for one: how
    // many depends on how the two clocks ran against the wall.
    let packets: u64 = SIZES.iter().map(|s| s.div_ceil(1424) as u64).sum::<u64>() + 1;
    for network in [&server_network, &client_network] {
        let stats = network.lock().unwrap().udp_stats().cloned().unwrap();
        assert!(
            stats.frames_sent >= packets && stats.frames_received >= packets,
            "{stats:?}"
        );
        assert_eq!(stats.datagrams_dropped + stats.foreign_datagrams, 0);
    }
}

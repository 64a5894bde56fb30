//! The host library end to end: host-lib -> driver (sim) -> RTL -> network ->
//! RTL -> driver -> host-lib, single threaded and deterministic (every
//! program here drives both sides and the shared clock itself).

use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};

use homa_host::{Endpoint, Error, Nic, Peer, RpcId, SimNetwork, MAX_MESSAGE_BYTES};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Cycles any test RPC may take (a 40 KB echo takes ~15 000).
const RPC_LIMIT_CYCLES: u64 = 200_000;

fn mac(i: usize) -> [u8; 6] {
    [2, 0, 0, 0, 0, i as u8 + 1]
}

fn ip(i: usize) -> Ipv4Addr {
    Ipv4Addr::new(10, 0, 0, i as u8 + 1)
}

/// `count` cards on one network, addresses set.
fn cards(name: &str, count: usize) -> (Arc<Mutex<SimNetwork>>, Vec<Nic>) {
    let network = Arc::new(Mutex::new(SimNetwork::new(name, count, Default::default())));
    let nics = (0..count)
        .map(|i| {
            let nic = Nic::open_sim(&network, i).unwrap();
            nic.set_address(mac(i), ip(i)).unwrap();
            nic
        })
        .collect();
    (network, nics)
}

fn peer(nic: &Nic, port: u16) -> Peer {
    Peer::new(nic.ip(), nic.mac(), port)
}

/// Every server endpoint echoes what it has received.
fn serve(servers: &mut [Endpoint]) -> usize {
    let mut served = 0;
    for s in servers.iter_mut() {
        while let Some(request) = s.try_recv_request().unwrap() {
            assert!(!request.id().is_client(), "a server's id is odd");
            s.reply(request.id(), &request.message().bytes()).unwrap();
            served += 1;
        }
    }
    served
}

fn payload(rng: &mut ChaCha8Rng, len: usize) -> Vec<u8> {
    (0..len).map(|_| rng.gen()).collect()
}

#[test]
fn requests_and_responses_of_every_size_arrive_intact() {
    let (_network, nics) = cards("host_sizes", 2);
    let mut client = Endpoint::open(&nics[0], 1000).unwrap();
    let mut servers = [Endpoint::open(&nics[1], 99).unwrap()];
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    // 1 byte, one full packet, one byte more (two packets), the limit.
    for (n, len) in [1, 1424, 1425, MAX_MESSAGE_BYTES].into_iter().enumerate() {
        let data = payload(&mut rng, len);
        let id = client.send_request(peer(&nics[1], 99), &data).unwrap();
        assert_eq!(id, RpcId(2 * (n as u64 + 1)), "client ids are 2, 4, 6...");

        // The server sees the request with the client's addresses.
        let start = nics[0].cycle().unwrap();
        let request = loop {
            if let Some(r) = servers[0].try_recv_request().unwrap() {
                break r;
            }
            assert!(nics[0].cycle().unwrap() - start < RPC_LIMIT_CYCLES);
            nics[0].wait();
        };
        assert_eq!(request.id(), RpcId(id.0 + 1), "server id = client id ^ 1");
        assert_eq!(request.peer(), peer(&nics[0], 1000));
        assert_eq!(request.message().len(), len);
        assert_eq!(request.message().to_vec(), data, "request of {len} bytes");
        servers[0]
            .reply(request.id(), &request.message().bytes())
            .unwrap();
        drop(request);

        let response = client.recv_response(id).unwrap();
        assert_eq!(response.id(), id);
        assert_eq!(response.peer(), peer(&nics[1], 99));
        assert_eq!(response.message().to_vec(), data, "response of {len} bytes");
        assert_eq!(client.outstanding(), 0);
    }
}

#[test]
fn many_concurrent_rpcs_on_several_endpoints_through_a_switch() {
    // Three cards (so the switch): two clients with two endpoints each, one
    // server with two endpoints; every client endpoint keeps RPCs to both.
    let (_network, nics) = cards("host_concurrent", 3);
    let mut clients: Vec<Endpoint> = (0..4)
        .map(|i| Endpoint::open(&nics[i / 2], 2000 + i as u16).unwrap())
        .collect();
    let mut servers = [
        Endpoint::open(&nics[2], 80).unwrap(),
        Endpoint::open(&nics[2], 81).unwrap(),
    ];
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let mut expected = std::collections::HashMap::new();
    for (c, client) in clients.iter_mut().enumerate() {
        for k in 0..6 {
            let len = rng.gen_range(1..4000);
            let data = payload(&mut rng, len);
            let id = client
                .send_request(peer(&nics[2], 80 + (k % 2) as u16), &data)
                .unwrap();
            assert!(expected.insert((c, id), data).is_none());
        }
    }
    let total = expected.len();
    let start = nics[0].cycle().unwrap();
    let mut served = 0;
    let mut done = 0;
    while done < total {
        assert!(
            nics[0].cycle().unwrap() - start < RPC_LIMIT_CYCLES,
            "{done} of {total} RPCs done"
        );
        served += serve(&mut servers);
        for (c, client) in clients.iter_mut().enumerate() {
            while let Some(r) = client.try_recv_any_response().unwrap() {
                let data = expected.remove(&(c, r.id())).expect("a response once");
                assert_eq!(r.message().to_vec(), data);
                done += 1;
            }
        }
        nics[0].wait();
    }
    assert_eq!(served, total);
    assert!(expected.is_empty());
}

#[test]
fn bad_calls_return_typed_errors() {
    let (_network, nics) = cards("host_errors", 2);
    // A bpage for each of the 64 requests (and responses) in flight at once
    // at the end.
    let mut client = Endpoint::open_with_bpages(&nics[0], 1000, 64).unwrap();
    let mut server_endpoint = Endpoint::open_with_bpages(&nics[1], 99, 64).unwrap();
    let server = peer(&nics[1], 99);
    assert!(matches!(
        client.send_request(server, &vec![0; MAX_MESSAGE_BYTES + 1]),
        Err(Error::MessageTooLong {
            len: 1_000_001,
            max: 1_000_000
        })
    ));
    assert!(matches!(
        client.send_request(server, &[]),
        Err(Error::EmptyMessage)
    ));
    assert!(matches!(
        client.reply(RpcId(3), b"x"),
        Err(Error::NoSuchRpc(RpcId(3)))
    ));
    assert!(matches!(
        client.try_recv_response(RpcId(2)),
        Err(Error::NoSuchRpc(RpcId(2)))
    ));
    assert!(matches!(
        Endpoint::open(&nics[0], 1000),
        Err(Error::PortInUse(1000))
    ));
    assert!(matches!(Endpoint::open(&nics[0], 0), Err(Error::BadPort)));
    // Without waiting, the card cannot finish any send: the 65th finds every
    // TX slot taken.
    let mut sent = 0;
    let err = loop {
        match client.send_request(server, b"fill") {
            Ok(_) => sent += 1,
            Err(e) => break e,
        }
        assert!(sent <= 64, "64 TX slots");
    };
    assert!(matches!(err, Error::RingFull { slots: 64 }), "{err}");
    assert_eq!(sent, 64);
    // Served, so that the client closes with no call outstanding (else its
    // close waits for the card to time each out).
    for _ in 0..sent {
        let request = server_endpoint.recv_request().unwrap();
        server_endpoint.reply(request.id(), b"done").unwrap();
    }
    for _ in 0..sent {
        assert_eq!(
            client.recv_any_response().unwrap().message().to_vec(),
            b"done"
        );
    }
}

#[test]
fn dropping_a_received_message_gives_its_bpage_back() {
    let (_network, nics) = cards("host_bpages", 2);
    let mut client = Endpoint::open(&nics[0], 1000).unwrap();
    let mut server = Endpoint::open_with_bpages(&nics[1], 99, 4).unwrap();
    assert_eq!(server.bpages_free().unwrap(), 4);
    let calls = [
        client.send_request(peer(&nics[1], 99), b"hold").unwrap(),
        client.send_request(peer(&nics[1], 99), b"this").unwrap(),
    ];
    let first = server.recv_request().unwrap();
    let second = server.recv_request().unwrap();
    // Answered (the requests stay held): the client then closes with no call
    // outstanding, which would wait for the card to time it out.
    for (request, call) in [&first, &second].into_iter().zip(calls) {
        server.reply(request.id(), b"ok").unwrap();
        client.recv_response(call).unwrap();
    }
    assert_eq!(first.message().to_vec(), b"hold");
    assert_ne!(first.message().bpages(), second.message().bpages());
    assert_eq!(server.bpages_free().unwrap(), 2, "two messages held");
    drop(first);
    nics[1].wait();
    assert_eq!(server.bpages_free().unwrap(), 3);
    drop(second);
    nics[1].wait();
    assert_eq!(server.bpages_free().unwrap(), 4);
}

#[test]
fn a_server_thread_and_a_client_thread_block_on_one_network() {
    // Endpoints move to threads; each blocked call advances the shared clock.
    fn assert_send<T: Send>() {}
    assert_send::<Endpoint>();
    assert_send::<Nic>();
    let (_network, nics) = cards("host_threads", 2);
    let mut server = Endpoint::open(&nics[1], 99).unwrap();
    const RPCS: usize = 5;
    let thread = std::thread::spawn(move || {
        for _ in 0..RPCS {
            let request = server.recv_request().unwrap();
            server
                .reply(request.id(), &request.message().bytes())
                .unwrap();
        }
    });
    let mut client = Endpoint::open(&nics[0], 1000).unwrap();
    for n in 0..RPCS {
        let data = vec![n as u8; 100 + 700 * n];
        let id = client.send_request(peer(&nics[1], 99), &data).unwrap();
        assert_eq!(client.recv_response(id).unwrap().message().to_vec(), data);
    }
    thread.join().unwrap();
}

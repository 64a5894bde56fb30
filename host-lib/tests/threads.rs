//! The simulator's shortcuts change nothing: a network whose cards run on
//! two threads (`SimNetwork::set_threads`), and one whose cards are clocked
//! Verilator's plain way (`Card::set_reference_edges`: every edge evaluated
//! in full, no input-change tracking), is the same simulation as the serial,
//! fast-edged one: the same frames at the same cycles in the capture, the
//! same frame log, the same messages delivered at the same cycles.

mod support;

use std::path::Path;
use std::sync::{Arc, Mutex};

use homa_driver::sim::FrameEvent;
use homa_host::{Endpoint, Peer, RpcId, SimNetwork};

/// Cycles the hosts let pass between polls: longer than the lookahead of
/// a cable (250), so the threaded runs really run the cards apart.
const POLL_CYCLES: u64 = 600;

/// What a run leaves behind.
#[derive(Debug, PartialEq, Eq)]
struct Run {
    capture: Vec<u8>,
    log: Vec<FrameEvent>,
    /// Per client: (response id, its bytes, the cycle it was seen).
    responses: Vec<Vec<(RpcId, Vec<u8>, u64)>>,
}

/// `count` cards, card `i`'s client sending RPCs of mixed sizes to the
/// server on card `(i + 1) % count`, captured into `pcap`.
fn run(count: usize, threads: usize, reference_edges: bool, pcap: &Path) -> Run {
    let mut net = SimNetwork::untraced("threads", count, Default::default());
    net.set_threads(threads);
    for i in 0..count {
        net.card(i)
            .lock()
            .unwrap()
            .set_reference_edges(reference_edges);
    }
    let network = Arc::new(Mutex::new(net));
    let nics = support::open_nics(&network, count);
    network.lock().unwrap().capture_to(pcap).unwrap();
    network.lock().unwrap().log_frames(true);
    // A server port per card, so a request the switch floods finds no
    // endpoint on the cards it is not for.
    let port = |i: usize| 100 + i as u16;
    let mut servers: Vec<Endpoint> = (0..count)
        .map(|i| Endpoint::open(&nics[i], port(i)).unwrap())
        .collect();
    let mut clients: Vec<Endpoint> = (0..count)
        .map(|i| Endpoint::open(&nics[i], 1000).unwrap())
        .collect();
    let sizes = [1usize, 3000, 1424, 9000];
    let mut responses = vec![Vec::new(); count];
    for (i, client) in clients.iter_mut().enumerate() {
        let to = (i + 1) % count;
        for (n, &len) in sizes.iter().enumerate() {
            let payload: Vec<u8> = (0..len).map(|b| (b + n + i) as u8).collect();
            client
                .send_request(Peer::new(nics[to].ip(), nics[to].mac(), port(to)), &payload)
                .unwrap();
        }
    }
    let mut polls = 0;
    while responses.iter().map(Vec::len).sum::<usize>() < count * sizes.len() {
        polls += 1;
        assert!(polls < 400, "RPCs did not complete");
        for server in &mut servers {
            while let Some(r) = server.try_recv_request().unwrap() {
                server.reply(r.id(), &r.message().bytes()).unwrap();
            }
        }
        for (i, client) in clients.iter_mut().enumerate() {
            while let Some(r) = client.try_recv_any_response().unwrap() {
                let cycle = nics[0].cycle().unwrap();
                responses[i].push((r.id(), r.message().to_vec(), cycle));
            }
        }
        network.lock().unwrap().run(POLL_CYCLES);
    }
    drop((servers, clients));
    let mut net = network.lock().unwrap();
    net.finish_capture().unwrap();
    Run {
        capture: std::fs::read(pcap).unwrap(),
        log: net.take_frame_log(),
        responses,
    }
}

fn serial_and_threaded_agree(count: usize) {
    let dir = tempfile::tempdir().unwrap();
    let serial = run(count, 1, false, &dir.path().join("serial.pcap"));
    let threaded = run(count, 2, false, &dir.path().join("threaded.pcap"));
    // Every RPC crossed the network: 4 per client, both ways.
    assert!(serial.log.iter().filter(|e| !e.received).count() >= 8 * count);
    assert_eq!(serial.log, threaded.log, "{count} cards: frame logs differ");
    assert!(
        serial.capture == threaded.capture,
        "{count} cards: the captures differ ({} and {} bytes)",
        serial.capture.len(),
        threaded.capture.len()
    );
    assert_eq!(serial.responses, threaded.responses);
}

#[test]
fn two_cards_on_a_cable_run_the_same_on_two_threads() {
    serial_and_threaded_agree(2);
}

#[test]
fn four_cards_on_the_switch_run_the_same_on_two_threads() {
    serial_and_threaded_agree(4);
}

#[test]
fn fast_edges_run_the_same_as_verilators_plain_evaluation() {
    let dir = tempfile::tempdir().unwrap();
    let fast = run(2, 1, false, &dir.path().join("fast.pcap"));
    let reference = run(2, 1, true, &dir.path().join("reference.pcap"));
    assert_eq!(fast.log, reference.log, "frame logs differ");
    assert!(fast.capture == reference.capture, "the captures differ");
    assert_eq!(fast.responses, reference.responses);
}

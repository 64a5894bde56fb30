//! The simulated network under the host library: three cards through the
//! switch (learning, flooding the first frame to an unknown MAC), a capture
//! whose every frame decodes and is stamped cycle x 4 ns, and runs that
//! repeat exactly.

mod support;

use std::sync::{Arc, Mutex};

use homa_driver::sim::FrameEvent;
use homa_host::{Endpoint, Peer, SimNetwork};
use homa_wire::pcap::FrameReader;
use homa_wire::Frame;

/// One RPC from card 0 to card 2 with card 1 idle; the capture's bytes and
/// timestamps (ns), and the frame log.
fn one_rpc_through_the_switch(capture: &std::path::Path) -> (Vec<(u64, Vec<u8>)>, Vec<FrameEvent>) {
    let network = Arc::new(Mutex::new(SimNetwork::new(
        "net_switch",
        3,
        Default::default(),
    )));
    let nics = support::open_nics(&network, 3);
    network.lock().unwrap().capture_to(capture).unwrap();
    network.lock().unwrap().log_frames(true);
    let mut client = Endpoint::open(&nics[0], 1000).unwrap();
    let mut server = Endpoint::open(&nics[2], 99).unwrap();
    let message: Vec<u8> = (0..3000u32).map(|i| (i % 251) as u8).collect();
    let id = client
        .send_request(Peer::new(nics[2].ip(), nics[2].mac(), 99), &message)
        .unwrap();
    let request = server.recv_request().unwrap();
    server
        .reply(request.id(), &request.message().bytes())
        .unwrap();
    let response = client.recv_response(id).unwrap();
    assert_eq!(response.message().to_vec(), message);
    drop((request, response, client, server));
    let mut net = network.lock().unwrap();
    net.finish_capture().unwrap();
    let log = net.take_frame_log();
    let frames = FrameReader::open(capture)
        .unwrap()
        .map(|f| {
            let f = f.unwrap();
            Frame::decode(&f.bytes).expect("every captured frame decodes");
            (f.timestamp.as_nanos() as u64, f.bytes)
        })
        .collect();
    (frames, log)
}

#[test]
fn the_switch_learns_and_the_capture_decodes_and_repeats() {
    let dir = tempfile::tempdir().unwrap();
    let (frames, log) = one_rpc_through_the_switch(&dir.path().join("a.pcap"));
    // 3000 bytes: three DATA packets each way; each card's first DATA to
    // the other carries cutoff version 0 (none heard yet), so each gets a
    // CUTOFFS back; the client acks the response complete.
    assert_eq!(frames.len(), 9);
    let sent: Vec<&FrameEvent> = log.iter().filter(|e| !e.received).collect();
    assert_eq!(sent.len(), 9);
    for ((ns, bytes), e) in frames.iter().zip(&sent) {
        assert_eq!(*ns, e.cycle * 4, "timestamp = cycle x 4 ns");
        assert_eq!(bytes.len(), e.bytes);
    }
    // Card 2's MAC is unknown to the switch until card 2 sends: the request's
    // frames are flooded to card 1 too; the response's reach card 0 only,
    // and each CUTOFFS and the ACK only its card (the server's endpoint,
    // closing, waits for the ACK that releases its response).
    let to = |card| log.iter().filter(|e| e.received && e.card == card).count();
    assert_eq!((to(0), to(1), to(2)), (4, 3, 5));

    let (again, _) = one_rpc_through_the_switch(&dir.path().join("b.pcap"));
    assert_eq!(
        frames, again,
        "the same run, the same frames at the same cycles"
    );
}

/// Messages of 1 B to 1,000,000 B both ways through host-lib, four at once,
/// over a cable that reorders and duplicates frames: each response is the
/// request echoed, exactly once; a long one arrives in several bpages and
/// reads back as one message and as its segments.
#[test]
fn megabyte_rpcs_through_host_lib_over_a_reordering_duplicating_cable() {
    use homa_hw_sim::cable::CableFaults;
    let network = Arc::new(Mutex::new(SimNetwork::new(
        "net_megabyte",
        2,
        Default::default(),
    )));
    network.lock().unwrap().set_cable_faults(CableFaults {
        reorder_ppm: 20_000,
        max_hold_cycles: 150,
        duplicate_ppm: 20_000,
        seed: 3,
        ..Default::default()
    });
    let nics = support::open_nics(&network, 2);
    let mut client = Endpoint::open_with_bpages(&nics[0], 1000, 64).unwrap();
    let mut server = Endpoint::open_with_bpages(&nics[1], 99, 64).unwrap();
    let to = Peer::new(nics[1].ip(), nics[1].mac(), 99);
    let sizes = [
        1usize, 1425, 70_000, 1_000_000, 333_333, 40_001, 1_000_000, 5,
    ];
    let message = |n: usize, len: usize| -> Vec<u8> {
        (0..len).map(|i| ((i * 7 + n * 13) % 253) as u8).collect()
    };
    let mut outstanding = std::collections::HashMap::new();
    let mut next = 0;
    let mut done = 0;
    while done < sizes.len() {
        while outstanding.len() < 4 && next < sizes.len() {
            let id = client
                .send_request(to, &message(next, sizes[next]))
                .unwrap();
            outstanding.insert(id, next);
            next += 1;
        }
        if let Some(request) = server.try_recv_request().unwrap() {
            let bytes = request.message().to_vec();
            server.reply(request.id(), &bytes).unwrap();
        }
        if let Some(response) = client.try_recv_any_response().unwrap() {
            let n = outstanding
                .remove(&response.id())
                .expect("a response to an outstanding request, once");
            let m = response.message();
            assert!(
                m.to_vec() == message(n, sizes[n]),
                "echo of {} bytes",
                sizes[n]
            );
            assert_eq!(m.bpages().len(), sizes[n].div_ceil(65_536).max(1));
            let joined: Vec<u8> = m
                .segments()
                .iter()
                .flat_map(|s| s.iter().copied())
                .collect();
            assert!(joined == m.to_vec(), "segments are the message in order");
            done += 1;
        }
        nics[0].wait();
    }
    let counts = network.lock().unwrap().cable_fault_counts();
    let (held, doubled) = (counts.reordered, counts.duplicated);
    assert!(
        held > 0 && doubled > 0,
        "{held} frames held back, {doubled} doubled"
    );
}

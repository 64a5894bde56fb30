//! The endpoint model driven by hand, frame by frame, without a network:
//! the packet-level rules of Homa, one test each.

use homa_testbench::cluster::host_addr;
use homa_testbench::model::{AppEvent, Endpoint, HomaConfig, RpcError, RpcKey, RpcState};
use homa_wire::{Body, Frame, PacketType};

fn with_tick(tick_cycles: u64) -> HomaConfig {
    HomaConfig {
        tick_cycles,
        ..HomaConfig::default()
    }
}

fn pair(cfg: HomaConfig) -> (Endpoint, Endpoint) {
    (
        Endpoint::new(cfg.clone(), host_addr(0)),
        Endpoint::new(cfg, host_addr(1)),
    )
}

/// Every frame `ep` wants to send now.
fn drain(ep: &mut Endpoint, now: u64) -> Vec<Frame> {
    std::iter::from_fn(|| ep.next_frame(now)).collect()
}

fn deliver(to: &mut Endpoint, now: u64, frames: Vec<Frame>) {
    for f in frames {
        // Every frame the model emits survives the wire codec unchanged.
        let bytes = f.encode().expect("encodes");
        assert_eq!(Frame::decode(&bytes).expect("decodes"), f);
        to.handle_frame(now, f);
    }
}

fn types(frames: &[Frame]) -> Vec<PacketType> {
    frames.iter().map(|f| f.homa.packet_type()).collect()
}

#[test]
fn a_request_and_its_response_round_trip() {
    let (mut client, mut server) = pair(HomaConfig::default());
    let id = client
        .send_request(0, host_addr(1), 1, b"hello".to_vec())
        .unwrap();
    assert_eq!(id, 2, "client ids start at 2 and are even");
    let frames = drain(&mut client, 0);
    assert_eq!(types(&frames), vec![PacketType::Data]);
    assert_eq!(frames[0].homa.common.sender_id, 2);
    deliver(&mut server, 10, frames);
    let Some(AppEvent::Request { key, payload, .. }) = server.poll_event() else {
        panic!("no request")
    };
    assert_eq!(key.id, 3, "the server's id is the client's ^ 1");
    assert_eq!(payload, b"hello");
    assert_eq!(server.rpc_state(key), Some(RpcState::InService));
    server.reply(20, key, b"world!".to_vec()).unwrap();
    let frames = drain(&mut server, 20);
    // The client's DATA carried cutoff version 0, so the server also sends CUTOFFS.
    assert_eq!(types(&frames), vec![PacketType::Cutoffs, PacketType::Data]);
    deliver(&mut client, 30, frames);
    assert_eq!(
        client.poll_event(),
        Some(AppEvent::Response {
            id,
            server: host_addr(1).ip,
            payload: b"world!".to_vec()
        })
    );
    assert_eq!(client.rpc_count(), 0, "a finished client RPC is freed");
    assert_eq!(
        server.rpc_count(),
        1,
        "the server keeps the RPC until acked"
    );
}

#[test]
fn unscheduled_priority_follows_the_receivers_cutoffs() {
    let (mut client, mut server) = pair(HomaConfig::default());
    client
        .send_request(0, host_addr(1), 1, vec![1; 100])
        .unwrap();
    let first = drain(&mut client, 0);
    assert_eq!(
        first[0].ip.priority(),
        6,
        "unknown peer: everything at level 6"
    );
    deliver(&mut server, 1, first);
    let cutoffs = drain(&mut server, 1);
    assert_eq!(types(&cutoffs), vec![PacketType::Cutoffs]);
    deliver(&mut client, 2, cutoffs);
    client
        .send_request(3, host_addr(1), 1, vec![1; 100])
        .unwrap();
    client
        .send_request(3, host_addr(1), 1, vec![1; 5000])
        .unwrap();
    let frames = drain(&mut client, 3);
    let prios: Vec<u8> = frames.iter().map(|f| f.ip.priority()).collect();
    assert_eq!(prios, vec![7, 5, 5, 5, 5], "<=200 B at 7, <=15000 B at 5");
    let Body::Data(d) = &frames[1].homa.body else {
        panic!()
    };
    assert_eq!(d.cutoff_version, 1);
}

#[test]
fn duplicate_packets_are_harmless() {
    let (mut client, mut server) = pair(HomaConfig::default());
    client
        .send_request(0, host_addr(1), 1, vec![7; 3000])
        .unwrap();
    let frames = drain(&mut client, 0);
    assert_eq!(frames.len(), 3);
    let doubled: Vec<Frame> = frames.iter().chain(frames.iter()).cloned().collect();
    deliver(&mut server, 1, doubled);
    let mut requests = 0;
    while let Some(ev) = server.poll_event() {
        if let AppEvent::Request { payload, .. } = ev {
            assert_eq!(payload, vec![7; 3000]);
            requests += 1;
        }
    }
    assert_eq!(requests, 1);
    assert_eq!(server.counters().duplicate_data, 3);
}

#[test]
fn a_long_message_is_granted_and_the_unscheduled_part_ends_at_unsched_bytes() {
    let cfg = HomaConfig::default();
    let (mut client, mut server) = pair(cfg.clone());
    client
        .send_request(0, host_addr(1), 1, vec![3; 100_000])
        .unwrap();
    let frames = drain(&mut client, 0);
    let sent: u32 = frames
        .iter()
        .map(|f| match &f.homa.body {
            Body::Data(d) => d.payload.len() as u32,
            _ => 0,
        })
        .sum();
    assert_eq!(
        sent, cfg.unsched_bytes,
        "exactly unsched_bytes before any grant"
    );
    deliver(&mut server, 1, frames);
    let reply = drain(&mut server, 1);
    let grants: Vec<_> = reply
        .iter()
        .filter_map(|f| match f.homa.body {
            Body::Grant(g) => Some(g),
            _ => None,
        })
        .collect();
    assert!(!grants.is_empty());
    let last = grants.last().unwrap();
    assert_eq!(
        last.offset, 100_000,
        "dynamic window 200000 covers the rest"
    );
    assert_eq!(
        last.priority, 0,
        "a lone scheduled message uses the lowest level"
    );
}

#[test]
fn resend_is_answered_with_data_and_unknown_rpcs_with_rpc_unknown() {
    let cfg = with_tick(100);
    let (mut client, mut server) = pair(cfg.clone());
    client
        .send_request(0, host_addr(1), 1, vec![9; 4000])
        .unwrap();
    let mut frames = drain(&mut client, 0);
    frames.remove(1); // lose the middle packet
    deliver(&mut server, 1, frames);
    drain(&mut server, 1); // CUTOFFS
    for t in 1..=cfg.resend_ticks as u64 {
        server.tick(t * 100);
    }
    let resend = drain(&mut server, 600);
    assert_eq!(types(&resend), vec![PacketType::Resend]);
    let Body::Resend(r) = resend[0].homa.body else {
        panic!()
    };
    assert_eq!((r.offset, r.length), (1424, 1424));
    deliver(&mut client, 601, resend.clone());
    let again = drain(&mut client, 601);
    assert_eq!(types(&again), vec![PacketType::Data]);
    let Body::Data(d) = &again[0].homa.body else {
        panic!()
    };
    assert_eq!(
        (d.seg_offset, d.retransmit, d.payload.len()),
        (1424, 1, 1424)
    );
    deliver(&mut server, 602, again);
    assert!(matches!(
        server.poll_event(),
        Some(AppEvent::Request { .. })
    ));

    // A RESEND for an RPC the client does not have gets RPC_UNKNOWN.
    let mut stray = resend[0].clone();
    stray.homa.common.sender_id = 99;
    deliver(&mut client, 701, vec![stray]);
    let unknown = drain(&mut client, 701);
    assert_eq!(types(&unknown), vec![PacketType::RpcUnknown]);
    assert_eq!(unknown[0].homa.common.sender_id, 98);
}

#[test]
fn rpc_unknown_makes_the_client_start_over() {
    let cfg = with_tick(100);
    let (mut client, mut server) = pair(cfg.clone());
    client
        .send_request(0, host_addr(1), 1, vec![5; 2000])
        .unwrap();
    let lost = drain(&mut client, 0);
    assert_eq!(lost.len(), 2);
    // Every packet of the request is lost; the client waits, then asks.
    for t in 1..=cfg.resend_ticks as u64 {
        client.tick(t * 100);
    }
    let ask = drain(&mut client, 600);
    assert_eq!(types(&ask), vec![PacketType::Resend]);
    deliver(&mut server, 601, ask);
    let unknown = drain(&mut server, 601);
    assert_eq!(types(&unknown), vec![PacketType::RpcUnknown]);
    deliver(&mut client, 602, unknown);
    assert_eq!(client.counters().client_restarts, 1);
    let again = drain(&mut client, 602);
    assert_eq!(types(&again), vec![PacketType::Data, PacketType::Data]);
    deliver(&mut server, 603, again);
    assert!(matches!(
        server.poll_event(),
        Some(AppEvent::Request { .. })
    ));
}

#[test]
fn need_ack_is_answered_and_frees_the_server_rpc() {
    let cfg = with_tick(100);
    let (mut client, mut server) = pair(cfg.clone());
    client
        .send_request(0, host_addr(1), 1, vec![1; 10])
        .unwrap();
    deliver(&mut server, 1, drain(&mut client, 0));
    let Some(AppEvent::Request { key, .. }) = server.poll_event() else {
        panic!()
    };
    server.reply(2, key, vec![2; 10]).unwrap();
    deliver(&mut client, 3, drain(&mut server, 2));
    assert!(matches!(
        client.poll_event(),
        Some(AppEvent::Response { .. })
    ));
    assert_eq!(server.rpc_count(), 1);
    for t in 1..=cfg.request_ack_ticks as u64 {
        server.tick(t * 100);
    }
    let need_ack = drain(&mut server, 300);
    assert_eq!(types(&need_ack), vec![PacketType::NeedAck]);
    deliver(&mut client, 301, need_ack);
    let ack = drain(&mut client, 301);
    // (The server's response carried cutoff version 0, so the client's
    // CUTOFFS for it is queued ahead of the ACK.)
    assert_eq!(types(&ack), vec![PacketType::Cutoffs, PacketType::Ack]);
    let Body::Ack(a) = &ack[1].homa.body else {
        panic!()
    };
    assert!(a
        .acks
        .iter()
        .any(|e| e.client_id == key.id ^ 1 && e.server_port == 1));
    deliver(&mut server, 302, ack);
    assert_eq!(server.rpc_count(), 0, "acked: the server forgets the RPC");
}

#[test]
fn busy_answers_a_resend_while_the_request_is_in_service() {
    let cfg = with_tick(100);
    let (mut client, mut server) = pair(cfg.clone());
    client
        .send_request(0, host_addr(1), 1, vec![1; 10])
        .unwrap();
    deliver(&mut server, 1, drain(&mut client, 0));
    drain(&mut server, 1);
    for t in 1..=cfg.resend_ticks as u64 {
        client.tick(t * 100);
    }
    let ask = drain(&mut client, 600);
    deliver(&mut server, 601, ask);
    assert_eq!(types(&drain(&mut server, 601)), vec![PacketType::Busy]);
}

#[test]
fn a_silent_server_times_out_the_rpc_after_timeout_ticks() {
    let cfg = with_tick(250);
    let (mut client, _server) = pair(cfg.clone());
    let id = client
        .send_request(0, host_addr(1), 1, vec![1; 10])
        .unwrap();
    drain(&mut client, 0);
    for t in 1..cfg.timeout_ticks as u64 {
        client.tick(t * 250);
        assert!(client.poll_event().is_none(), "failed early, at tick {t}");
    }
    client.tick(cfg.timeout_ticks as u64 * 250);
    assert_eq!(
        client.poll_event(),
        Some(AppEvent::Failed {
            id,
            server: host_addr(1).ip,
            error: RpcError::Timeout {
                silent_ticks: cfg.timeout_ticks,
                silent_cycles: cfg.timeout_ticks as u64 * 250
            }
        })
    );
    assert_eq!(client.rpc_count(), 0);
    let key = RpcKey {
        peer: host_addr(1).ip,
        id,
    };
    assert_eq!(client.rpc_state(key), None);
}

#[test]
fn sender_srpt_sends_the_shorter_message_first() {
    // All unscheduled: the sender alone decides the order.
    let cfg = HomaConfig {
        unsched_bytes: 1_000_000,
        ..HomaConfig::default()
    };
    let (mut client, _server) = pair(cfg);
    client
        .send_request(0, host_addr(1), 1, vec![1; 50_000])
        .unwrap();
    // Five packets of the long message go out first.
    for _ in 0..5 {
        client.next_frame(0).unwrap();
    }
    let short = client
        .send_request(1, host_addr(1), 1, vec![2; 5_000])
        .unwrap();
    let next: Vec<u64> = (0..4)
        .map(|_| client.next_frame(1).unwrap().homa.common.sender_id)
        .collect();
    assert_eq!(
        next,
        vec![short; 4],
        "the short message preempts the long one"
    );
}

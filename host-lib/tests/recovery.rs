//! Loss recovery across the whole RPC, through host-lib and two RTL cards
//! (issue 9): a request the server has delivered stays in its card's RPC
//! table until the response is released, so copies of it are duplicates,
//! not new requests (at most once), however many other messages complete
//! meanwhile.

mod support;

use homa_host::{Endpoint, Nic, Peer};
use homa_hw::regmap::rx_counters;

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

/// Packet 0 of a 3,000-byte request from card 0's port 1000 to card 1's
/// port 99, RPC `id`, as a retransmission (a copy a network or a client
/// could send late).
fn request_copy(nics: &[Nic], id: u64, byte: u8) -> Vec<u8> {
    use homa_wire::*;
    let mut common = CommonHeader::new(1000, 99, id, PacketType::Data);
    common.sequence = 0;
    Frame {
        eth: EthernetHeader {
            dst: MacAddr(nics[1].mac()),
            src: MacAddr(nics[0].mac()),
        },
        ip: Ipv4Header::homa(nics[0].ip(), nics[1].ip(), 6),
        homa: HomaPacket {
            common,
            body: Body::Data(Data {
                message_length: 3000,
                incoming: 3000,
                ack: AckEntry::default(),
                cutoff_version: 0,
                retransmit: 1,
                pad: [0; 3],
                seg_offset: 0,
                payload: vec![byte; 1424],
            }),
        },
    }
    .encode()
    .unwrap()
}

#[test]
fn a_request_in_service_is_not_run_again_by_a_late_copy() {
    let (network, nics) = support::cards("recovery_slow_server", 2);
    let mut client = Endpoint::open(&nics[0], 1000).unwrap();
    let mut other = Endpoint::open(&nics[0], 1001).unwrap();
    let mut server = Endpoint::open(&nics[1], 99).unwrap();
    let to = Peer::new(nics[1].ip(), nics[1].mac(), 99);
    let id = client.send_request(to, &[5u8; 3000]).unwrap();
    let slow = next_request(&mut server, &nics[1], 100_000);
    // Twelve quick RPCs meanwhile: more completed messages than the RX
    // engine's short memory of recent ones (8) holds.
    for n in 0..12u8 {
        let quick = other.send_request(to, &[n; 100]).unwrap();
        let r = next_request(&mut server, &nics[1], 100_000);
        server.reply(r.id(), &r.message().to_vec()).unwrap();
        assert_eq!(
            other.recv_response(quick).unwrap().message().to_vec(),
            [n; 100]
        );
    }
    // Copies of the slow request's first packet come late, one with other
    // bytes: the request is still in service (no reply yet), so they are
    // duplicates, not a new RPC.
    for byte in [5u8, 9] {
        network
            .lock()
            .unwrap()
            .send_from(0, request_copy(&nics, id.0, byte));
    }
    idle(&nics[1], 5_000);
    assert!(
        server.try_recv_request().unwrap().is_none(),
        "the request ran twice"
    );
    assert_eq!(counter(&nics[1], rx_counters::DUPLICATES), 2);
    assert_eq!(counter(&nics[1], rx_counters::RX_MESSAGES_HELD), 1);
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

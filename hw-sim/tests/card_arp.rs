//! The card answers ARP for its own address, in hardware, between the frames
//! it is sending; other ARP and non-Homa frames change nothing else.

mod support;

use std::net::Ipv4Addr;

use homa_hw::host_abi::tx_desc;
use homa_hw::regmap::rx_counters;
use homa_wire::arp::ArpFrame;
use homa_wire::layout::arp;
use homa_wire::{Frame, MacAddr};
use support::host::{Send, TestHost, TX_BUFFERS};

const CARD_MAC: [u8; 6] = [2, 0, 0, 0, 0, 2];
const CARD_IP: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);
const PEER_MAC: MacAddr = MacAddr([0x52, 0x54, 0, 0x12, 0x34, 0x56]);
const PEER_IP: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);

fn host(name: &str) -> TestHost {
    TestHost::new(name, CARD_MAC, u32::from(CARD_IP), &[99])
}

fn arp_replies(h: &mut TestHost) -> u32 {
    h.card
        .csr_read(rx_counters::BASE + rx_counters::ARP_REPLIES)
}

#[test]
fn a_request_for_our_address_gets_a_reply_and_others_do_not() {
    let mut h = host("card_arp_reply");
    h.card
        .receive(&ArpFrame::request(PEER_MAC, PEER_IP, Ipv4Addr::new(10, 0, 0, 9)).encode());
    h.card
        .receive(&ArpFrame::request(PEER_MAC, PEER_IP, CARD_IP).encode());
    h.card.run(200);
    let sent = h.card.take_transmitted();
    assert_eq!(sent.len(), 1, "one reply, for the request that names us");
    let reply = ArpFrame::decode(&sent[0].bytes).unwrap();
    assert_eq!(sent[0].bytes.len(), 60, "padded to the Ethernet minimum");
    assert_eq!(reply.oper, arp::OPER_REPLY);
    assert_eq!(reply.eth_dst, PEER_MAC);
    assert_eq!(reply.eth_src, MacAddr(CARD_MAC));
    assert_eq!(
        (reply.sender_mac, reply.sender_ip),
        (MacAddr(CARD_MAC), CARD_IP)
    );
    assert_eq!((reply.target_mac, reply.target_ip), (PEER_MAC, PEER_IP));
    assert_eq!(arp_replies(&mut h), 1);
}

#[test]
fn replies_go_out_between_data_frames() {
    let mut h = host("card_arp_between_frames");
    // Timers slow enough that no nudge to the silent peer (RESEND after
    // resend_ticks) joins the frames counted below.
    h.card.csr_write(
        homa_hw::regmap::timer::BASE + homa_hw::regmap::timer::TICK_NS,
        100_000,
    );
    let len = 20_000u32;
    h.card
        .memory_mut()
        .write(TX_BUFFERS, &vec![0xab; len as usize]);
    h.post(&Send {
        endpoint: 0,
        opcode: tx_desc::opcode::SEND_REQUEST,
        rpc_id: 2,
        buffer: TX_BUFFERS,
        length: len,
        peer_ip: u32::from(PEER_IP),
        peer_port: 99,
        peer_mac: PEER_MAC.0,
        cookie: 0,
    });
    h.doorbell(0);
    let mut frames = Vec::new();
    let mut asked = 0;
    for cycle in 0..20_000 {
        if cycle % 1500 == 0 && asked < 8 {
            h.card
                .receive(&ArpFrame::request(PEER_MAC, PEER_IP, CARD_IP).encode());
            asked += 1;
        }
        h.card.step();
        frames.extend(h.card.take_transmitted());
    }
    let (arps, data): (Vec<_>, Vec<_>) = frames
        .iter()
        .partition(|f| ArpFrame::decode(&f.bytes).is_ok());
    assert_eq!(
        data.len(),
        (len as usize).div_ceil(1424),
        "every DATA frame whole"
    );
    for f in &data {
        Frame::decode(&f.bytes).expect("DATA frames untouched by the replies between them");
    }
    assert_eq!(arps.len(), asked, "one reply per request");
    assert_eq!(arp_replies(&mut h), asked as u32);
}

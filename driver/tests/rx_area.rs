//! Two simulated cards on one network, driven by the driver alone: a request
//! sent from card 0 lands in card 1's RX area, its completion decodes to the
//! sender's addresses, and giving its bpage back restores the card's count.

use std::sync::{Arc, Mutex};

use homa_driver::{
    CompletionKind, CompletionStatus, Device, EndpointQueues, RxArea, SimBackend, TxDescriptor,
    TxOpcode,
};
use homa_hw_sim::dma_link::LinkConfig;
use homa_hw_sim::network::SimNetwork;

const MACS: [[u8; 6]; 2] = [[2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]];
const IPS: [u32; 2] = [0x0a00_0001, 0x0a00_0002];
const BPAGES: u32 = 4;

#[test]
fn a_request_lands_in_the_peers_rx_area_and_its_bpage_comes_back() {
    let network = Arc::new(Mutex::new(SimNetwork::new(
        "driver_rx_area",
        2,
        LinkConfig::default(),
    )));
    let devices: Vec<Device> = (0..2)
        .map(|i| {
            let d = Device::open(SimBackend::on_network(&network, i)).unwrap();
            d.interface().unwrap().set_mac(MACS[i]).unwrap();
            d.interface().unwrap().set_ipv4(IPS[i]).unwrap();
            d
        })
        .collect();
    let cycle = |d: &Device| d.backend().cycle().unwrap();
    assert_eq!(cycle(&devices[0]), cycle(&devices[1]), "one clock");

    let areas: Vec<RxArea> = (0..2)
        .map(|i| RxArea::register(&devices[i], 0, BPAGES).unwrap())
        .collect();
    let mut queues: Vec<EndpointQueues> = (0..2)
        .map(|i| EndpointQueues::open(&devices[i], 0, 1000 + i as u16, 4, 4).unwrap())
        .collect();
    assert_eq!(areas[1].free_on_card(&devices[1]).unwrap(), BPAGES);

    let message: Vec<u8> = (0..3000u32).map(|i| (i * 13 + 1) as u8).collect();
    let mut buffer = devices[0].backend().dma_alloc(message.len()).unwrap();
    buffer.write(0, &message);
    queues[0]
        .post(
            &TxDescriptor {
                opcode: TxOpcode::Request,
                peer_port: 1001,
                length: message.len() as u32,
                rpc_id: 2,
                buffer: buffer.iova(),
                peer_ip: IPS[1],
                peer_mac: MACS[1],
                cookie: 9,
            }
            .encode(),
        )
        .unwrap();
    queues[0].ring_tx(&devices[0]).unwrap();

    let mut request = None;
    for _ in 0..2000 {
        if let Some(c) = queues[1].poll_completion() {
            request = Some(c);
            break;
        }
        devices[0].backend().advance(10);
    }
    let c = request.expect("no request completion in 20 000 cycles");
    assert_eq!(cycle(&devices[0]), cycle(&devices[1]), "still one clock");
    assert_eq!(c.kind, CompletionKind::RequestReceived);
    assert_eq!(c.status, CompletionStatus::Ok);
    assert_eq!(c.rpc_id, 3, "the server knows the client's id ^ 1");
    assert_eq!(
        (c.peer_ip, c.peer_port, c.peer_mac),
        (IPS[0], 1000, MACS[0])
    );
    assert_eq!(c.length as usize, message.len());
    let mut got = vec![0u8; message.len()];
    areas[1].buffer().read(c.buffer_offset as usize, &mut got);
    assert_eq!(got, message);
    assert_eq!(areas[1].free_on_card(&devices[1]).unwrap(), BPAGES - 1);
    areas[1].give_back(&devices[1], c.bpage()).unwrap();
    // RX_BPAGES_FREE read in the cycles right after a push still shows the
    // count before it (seen: 3 here without the wait); a few cycles settle it.
    devices[1].backend().advance(10);
    assert_eq!(areas[1].free_on_card(&devices[1]).unwrap(), BPAGES);

    // The sender keeps the request (it may have to send it again) until
    // its response begins: no TX completion yet.
    assert!(queues[0].poll_completion().is_none());
    for (q, d) in queues.into_iter().zip(&devices) {
        q.close(d).unwrap();
    }
}

/// On PCIe a read is ordered after the host's earlier posted writes, so a
/// read of RX_BPAGES_FREE right after a write to RX_BPAGE_PUSH must count the
/// push (the core once reported a count delayed by a cycle).
#[test]
fn bpages_free_counts_a_push_read_right_after_it() {
    let device = one_card("driver_bpage_push_read");
    let block = device.endpoint(0).unwrap();
    let mut seen = Vec::new();
    for page in 0..4 {
        block.push_bpage(page).unwrap();
        seen.push(block.bpages_free().unwrap());
    }
    device.backend().advance(10);
    assert_eq!(
        block.bpages_free().unwrap(),
        4,
        "all four pushes counted in the end"
    );
    assert_eq!(seen, [1, 2, 3, 4], "count read right after each push");
}

/// Writing RX_AREA forgets the pages pushed before it, the one pushed just
/// before included, and none pushed after: the pool takes the host's pushes
/// and its clear in the order the host wrote them.
#[test]
fn an_rx_area_write_forgets_the_pages_pushed_before_it_and_only_those() {
    let device = one_card("driver_rx_area_clear");
    let block = device.endpoint(0).unwrap();
    for page in 0..3 {
        block.push_bpage(page).unwrap();
    }
    block.set_rx_area(0x4000_0000).unwrap();
    block.push_bpage(7).unwrap();
    device.backend().advance(10);
    assert_eq!(
        block.bpages_free().unwrap(),
        1,
        "the pages pushed before the RX_AREA write forgotten, the one after it held"
    );
}

/// A device on a network of one simulated card.
fn one_card(name: &str) -> Device {
    let network = Arc::new(Mutex::new(SimNetwork::new(name, 1, LinkConfig::default())));
    Device::open(SimBackend::on_network(&network, 0)).unwrap()
}

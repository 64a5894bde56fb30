//! An endpoint's queues on the simulated card, end to end: the driver opens
//! an endpoint, posts a TX descriptor pointing at a message in a DMA buffer,
//! rings the doorbell, and the core fetches it, transmits the message and
//! writes a completion the driver polls.

use std::sync::Arc;

use homa_driver::{Device, EndpointQueues, SimBackend};
use homa_hw::host_abi::{self, completion, tx_desc, ENTRY_BYTES};

const LOCAL_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x01];
const LOCAL_IP: u32 = 0x0a00_0001;
const PEER_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x02];
const PEER_IP: u32 = 0x0a00_0002;
/// Cycles a message of a few hundred bytes may take from doorbell to
/// completion: sent, then released when its peer (there is none) has been
/// silent a tick (see `device`), a sweep of the card's timer or two.
const COMPLETION_LIMIT_CYCLES: u64 = 100_000;

/// A card with its addresses set, and the simulation behind it (for the
/// frames it transmits).
fn device(name: &str) -> (Device, Arc<SimBackend>) {
    let sim = Arc::new(SimBackend::traced_on_failure(name));
    let device = Device::open(sim.clone()).unwrap();
    let interface = device.interface().unwrap();
    interface.set_mac(LOCAL_MAC).unwrap();
    interface.set_ipv4(LOCAL_IP).unwrap();
    // No peer will ack what the card sends: it lets a message go after one
    // tick (of 1 us) of silence.
    use homa_hw::regmap::timer;
    let backend = device.backend();
    backend
        .csr_write(timer::BASE + timer::TICK_NS, 1000)
        .unwrap();
    backend
        .csr_write(timer::BASE + timer::RESEND_TICKS, 1)
        .unwrap();
    backend
        .csr_write(timer::BASE + timer::TIMEOUT_TICKS, 1)
        .unwrap();
    (device, sim)
}

fn descriptor(length: u32, buffer: u64, cookie: u64) -> [u8; ENTRY_BYTES] {
    let mut d = [0u8; ENTRY_BYTES];
    host_abi::put(
        &mut d,
        tx_desc::OPCODE,
        tx_desc::opcode::SEND_RESPONSE.into(),
    );
    host_abi::put(&mut d, tx_desc::PEER_PORT, 2000);
    host_abi::put(&mut d, tx_desc::LENGTH, length.into());
    host_abi::put(&mut d, tx_desc::RPC_ID, 43);
    host_abi::put(&mut d, tx_desc::BUFFER, buffer);
    host_abi::put(&mut d, tx_desc::PEER_IP, PEER_IP.into());
    host_abi::put_mac(&mut d, tx_desc::PEER_MAC, PEER_MAC);
    host_abi::put(&mut d, tx_desc::COOKIE, cookie);
    d
}

/// Advances the card until a completion arrives.
fn wait_completion(device: &Device, queues: &mut EndpointQueues) -> [u8; ENTRY_BYTES] {
    let mut c = [0u8; ENTRY_BYTES];
    for _ in 0..COMPLETION_LIMIT_CYCLES / 10 {
        if queues.poll(&mut c) {
            return c;
        }
        device.backend().advance(10);
    }
    panic!("no completion in {COMPLETION_LIMIT_CYCLES} cycles");
}

#[test]
fn the_interface_block_keeps_the_cards_addresses() {
    let (device, _) = device("queues_interface");
    let interface = device.interface().unwrap();
    assert_eq!(interface.mac().unwrap(), LOCAL_MAC);
    assert_eq!(interface.ipv4().unwrap(), LOCAL_IP);
}

#[test]
fn a_posted_message_is_transmitted_and_completed() {
    let (device, sim) = device("queues_tx");
    assert_eq!(device.endpoint_count(), homa_hw::regmap::endpoint::COUNT);
    let mut queues = EndpointQueues::open(&device, 0, 1000, 4, 4).unwrap();
    assert_eq!(device.endpoint(0).unwrap().port().unwrap(), 1000);

    let message: Vec<u8> = (0..300u32).map(|i| (i * 7 + 3) as u8).collect();
    let mut buffer = device.backend().dma_alloc(message.len()).unwrap();
    buffer.write(0, &message);
    let cookie = 0x00c0_ffee_0000_0001;
    assert_eq!(
        queues
            .post(&descriptor(300, buffer.iova(), cookie))
            .unwrap(),
        0
    );
    queues.ring_tx(&device).unwrap();

    let c = wait_completion(&device, &mut queues);
    assert_eq!(
        host_abi::get(&c, completion::KIND),
        u64::from(completion::kind::TX_DONE)
    );
    assert_eq!(
        host_abi::get(&c, completion::STATUS),
        u64::from(completion::status::OK)
    );
    assert_eq!(host_abi::get(&c, completion::COOKIE), cookie);
    assert_eq!(host_abi::get(&c, completion::RPC_ID), 43);
    queues.release_completions(&device).unwrap();

    assert_eq!(
        queues.reap_tx(&device).unwrap(),
        1,
        "the card took the descriptor"
    );
    assert_eq!(queues.tx().free_slots(), 16);
    let frames = sim.with_card(|card| card.take_transmitted());
    assert_eq!(frames.len(), 1, "300 bytes go in one DATA packet");
    let carried = frames[0]
        .bytes
        .windows(message.len())
        .any(|w| w == message.as_slice());
    assert!(carried, "the frame carries the message the driver wrote");
    assert!(
        frames[0].bytes.starts_with(&PEER_MAC),
        "addressed to the peer"
    );
    queues.close(&device).unwrap();
    assert_eq!(device.endpoint(0).unwrap().port().unwrap(), 0);
}

#[test]
fn a_descriptor_pointing_outside_every_buffer_completes_with_a_dma_error() {
    let (device, sim) = device("queues_dma_error");
    let mut queues = EndpointQueues::open(&device, 1, 1001, 2, 2).unwrap();
    // An IOVA no buffer holds: the IOMMU refuses the card's read.
    queues.post(&descriptor(100, 0x10, 7)).unwrap();
    queues.ring_tx(&device).unwrap();
    let c = wait_completion(&device, &mut queues);
    assert_eq!(
        host_abi::get(&c, completion::STATUS),
        u64::from(completion::status::DMA_ERROR)
    );
    assert_eq!(host_abi::get(&c, completion::COOKIE), 7);
    assert!(sim.with_card(|card| card.take_transmitted()).is_empty());
    queues.close(&device).unwrap();
}

#[test]
fn a_missing_endpoint_is_a_typed_error() {
    let (device, _) = device("queues_missing");
    let count = device.endpoint_count();
    assert!(matches!(
        EndpointQueues::open(&device, count, 1000, 2, 2),
        Err(homa_driver::Error::Discovery(
            homa_driver::DiscoveryError::NoSuchEndpoint { index, count: c }
        )) if index == count && c == count
    ));
}

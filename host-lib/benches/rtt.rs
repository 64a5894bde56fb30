//! Benchmarks in simulated time (not wall-clock timed tests): the unloaded
//! RTT of a 100-byte RPC between two simulated cards, in cycles and in us at
//! 250 MHz, over the TLP link (the cards' default: DMA through the PCIe
//! requester's RTL and the root-complex model, BAR accesses through the
//! completer's RTL with the host's MMIO latency) and over the ideal link (the
//! core's ports served directly), the difference being the cost of
//! realism; each broken down by the network's frame
//! log into the card's doorbell-to-wire and wire-to-completion times; and how
//! many cycles per wall second Verilator runs for the two-card network; and
//! the same RPC made with blocking calls that sleep on their endpoint's MSI-X
//! interrupt (`busy_poll_us = 0`) instead of polling the completion ring, the
//! card's part of an interrupt-driven round trip (the OS's wake-up, a few us
//! on Linux, is not modelled: a sleeper here resumes on the cycle the
//! message lands).
//!
//! `cargo bench -p homa-host` (release build).

use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use homa_driver::sim::FrameEvent;
use homa_host::{Endpoint, HomaConf, Nic, Peer, SimNetwork};
use homa_hw_sim::dma_link::LinkConfig;
use homa_hw_sim::pcie::PcieConfig;
use homa_wire::layout::{data, HOMA_OFFSET};

/// RPCs measured one at a time; the median is reported.
const RPCS: usize = 51;
const BYTES: usize = 100;
/// A frame of one DATA packet carrying the whole 100-byte message.
const DATA_FRAME_BYTES: usize = HOMA_OFFSET + data::HEADER_LEN + BYTES;
/// RPCs of the throughput run (sizes 100 B to 40 KB, 4 outstanding).
const SPEED_RPCS: usize = 100;

fn main() {
    let (tlp, _network, nics, mut client, mut server) = rtt(LinkConfig::default(), "TLP link");
    let (ideal, ..) = rtt(LinkConfig::Ideal(PcieConfig::default()), "ideal DMA link");
    println!(
        "cost of the TLP link (PCIe requester and completer RTL, completions split and reordered, posted writes visible after 400 ns, doorbells at the card 400 ns after they are rung): {} cycles, {:.2} us a round trip",
        tlp - ideal,
        (tlp - ideal) as f64 * nics[0].cycle_ns() / 1000.0
    );
    interrupt_rtt(tlp);
    let to_server = Peer::new(nics[1].ip(), nics[1].mac(), 99);
    let cycle = || nics[0].cycle().unwrap();

    // Simulation speed under load: mixed sizes, 4 outstanding.
    let sizes = [100usize, 1424, 5000, 40_000];
    let wall = Instant::now();
    let first = cycle();
    let (mut sent, mut done, mut outstanding) = (0, 0, 0);
    while done < SPEED_RPCS {
        while outstanding < 4 && sent < SPEED_RPCS {
            client
                .send_request(to_server, &vec![sent as u8; sizes[sent % sizes.len()]])
                .unwrap();
            sent += 1;
            outstanding += 1;
        }
        while let Some(r) = server.try_recv_request().unwrap() {
            server.reply(r.id(), &r.message().bytes()).unwrap();
        }
        while client.try_recv_any_response().unwrap().is_some() {
            done += 1;
            outstanding -= 1;
        }
        nics[0].wait();
    }
    let cycles = cycle() - first;
    let seconds = wall.elapsed().as_secs_f64();
    println!(
        "Verilator: {:.0} cycles/s of wall time for the two-card network ({cycles} cycles, {SPEED_RPCS} RPCs of 100 B-40 KB, {seconds:.1} s)",
        cycles as f64 / seconds
    );
}

/// A network of two cards on `link`, its client and server endpoints, and the
/// median RTT measured on it (printed with its breakdown).
fn rtt(
    link: LinkConfig,
    label: &str,
) -> (u64, Arc<Mutex<SimNetwork>>, Vec<Nic>, Endpoint, Endpoint) {
    let (network, nics) = two_cards("bench-rtt", link, "");
    let mut client = Endpoint::open(&nics[0], 1000).unwrap();
    let mut server = Endpoint::open(&nics[1], 99).unwrap();
    let to_server = Peer::new(nics[1].ip(), nics[1].mac(), 99);
    let cycle = || nics[0].cycle().unwrap();
    let log = || network.lock().unwrap().take_frame_log();
    network.lock().unwrap().log_frames(true);

    // (rtt, doorbell -> request frame out, request frame in -> server's completion,
    //  response frame in -> client's completion)
    let mut runs = Vec::new();
    let payload = vec![0xa5u8; BYTES];
    for _ in 0..RPCS {
        log();
        let start = cycle();
        let id = client.send_request(to_server, &payload).unwrap();
        let doorbell = cycle();
        let mut server_seen = 0;
        let done = loop {
            if let Some(r) = server.try_recv_request().unwrap() {
                server_seen = cycle();
                server.reply(r.id(), &r.message().bytes()).unwrap();
            }
            if let Some(r) = client.try_recv_response(id).unwrap() {
                assert_eq!(*r.message().bytes(), payload[..]);
                break cycle();
            }
            nics[0].wait();
        };
        let frames = log();
        // The request's and the response's DATA frames, by their length:
        // the log also has the ACK the client sends for the RPC before.
        let at = |card, received| {
            frames
                .iter()
                .find(|e: &&FrameEvent| {
                    e.card == card && e.received == received && e.bytes == DATA_FRAME_BYTES
                })
                .unwrap()
                .cycle
        };
        runs.push((
            done - start,
            at(0, false) - doorbell,
            server_seen - at(1, true),
            done - at(0, true),
        ));
    }
    runs.sort();
    let (rtt, doorbell_to_wire, server_wire_to_cpl, client_wire_to_cpl) = runs[RPCS / 2];
    let us = |c: u64| c as f64 * nics[0].cycle_ns() / 1000.0;
    println!("unloaded RTT, {BYTES}-byte echo RPC, two cards, 100 Gb/s cable + 1 us, {label} (median of {RPCS}):");
    println!(
        "  RTT                                      {rtt:>6} cycles {:>7.2} us",
        us(rtt)
    );
    println!(
        "  client card: doorbell -> frame on wire   {doorbell_to_wire:>6} cycles {:>7.2} us",
        us(doorbell_to_wire)
    );
    println!(
        "  server card: frame in -> completion seen {server_wire_to_cpl:>6} cycles {:>7.2} us",
        us(server_wire_to_cpl)
    );
    println!(
        "  client card: frame in -> completion seen {client_wire_to_cpl:>6} cycles {:>7.2} us",
        us(client_wire_to_cpl)
    );
    println!(
        "  min {} / max {} cycles over {RPCS} RPCs",
        runs.first().unwrap().0,
        runs.last().unwrap().0
    );

    network.lock().unwrap().log_frames(false);
    (rtt, network, nics, client, server)
}

/// The RTT of the same RPC on the TLP link when both sides block in
/// `recv_request` / `recv_response` with `busy_poll_us = 0`: each call arms
/// its vector and sleeps until the card's MSI-X message; against `polled`,
/// the RTT measured by polling.
fn interrupt_rtt(polled: u64) {
    let (_network, nics) = two_cards("bench-irq", LinkConfig::default(), "busy_poll_us = 0");
    assert!(
        nics.iter().all(Nic::interrupts),
        "the simulated cards take MSI-X"
    );
    let mut client = Endpoint::open(&nics[0], 1000).unwrap();
    let mut server = Endpoint::open(&nics[1], 99).unwrap();
    let to_server = Peer::new(nics[1].ip(), nics[1].mac(), 99);
    let cycle = || nics[0].cycle().unwrap();
    let payload = vec![0x5au8; BYTES];
    let mut rtts = Vec::new();
    for _ in 0..RPCS {
        let start = cycle();
        let id = client.send_request(to_server, &payload).unwrap();
        let request = server.recv_request().unwrap();
        server
            .reply(request.id(), &request.message().bytes())
            .unwrap();
        let response = client.recv_response(id).unwrap();
        assert_eq!(*response.message().bytes(), payload[..]);
        rtts.push(cycle() - start);
    }
    rtts.sort();
    let rtt = rtts[RPCS / 2];
    let us = |c: u64| c as f64 * nics[0].cycle_ns() / 1000.0;
    let sent = |nic: &Nic| nic.device().interrupts().unwrap().sent().unwrap();
    let (client_waits, server_waits) = (nics[0].wait_stats(), nics[1].wait_stats());
    println!("interrupt-driven RTT, same RPC, TLP link, blocking calls with busy_poll_us = 0 (median of {RPCS}):");
    println!(
        "  RTT                                      {rtt:>6} cycles {:>7.2} us ({:+} cycles against polling)",
        us(rtt),
        rtt as i64 - polled as i64
    );
    println!(
        "  MSI-X messages: client card {}, server card {} for {RPCS} RPCs; sleeps {} / {}, woken by their interrupt {} / {}, timed out {} / {}",
        sent(&nics[0]),
        sent(&nics[1]),
        client_waits.sleeps,
        server_waits.sleeps,
        client_waits.wakeups,
        server_waits.wakeups,
        client_waits.timeouts,
        server_waits.timeouts,
    );
}

/// Two cards cabled on `link`, each opened with the homa.conf text `conf`,
/// card i at 02:00:00:00:00:(i + 1) and 10.0.0.(i + 1).
fn two_cards(name: &str, link: LinkConfig, conf: &str) -> (Arc<Mutex<SimNetwork>>, Vec<Nic>) {
    let network = Arc::new(Mutex::new(SimNetwork::untraced(name, 2, link)));
    let nics = (0..2)
        .map(|i| {
            let conf = HomaConf::parse(conf, name).unwrap();
            let nic = Nic::open_sim_with_config(&network, i, conf).unwrap();
            nic.set_address(
                [2, 0, 0, 0, 0, i as u8 + 1],
                Ipv4Addr::new(10, 0, 0, i as u8 + 1),
            )
            .unwrap();
            nic
        })
        .collect();
    (network, nics)
}

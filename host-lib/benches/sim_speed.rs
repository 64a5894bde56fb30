//! How fast the simulator runs the card: simulated clock cycles per wall
//! second (and per CPU second of this process, which other load on the
//! machine disturbs less), in release, for
//!
//! - one card idle (set up, nothing to do);
//! - one card at full load (cabled to itself, a client and an echo server
//!   on it, 40 KB RPCs 4 at a time: TX and RX DMA and both directions of
//!   the port busy);
//! - the two-card demo network (`homa-nic demo`'s echo: sizes 1 B to 40 KB
//!   in turn, 4 outstanding);
//! - eight cards on the switch, each a client of the next one's server,
//!   with the demo's sizes.
//!
//! The hosts poll every `Nic::wait` (4 cycles), as the demo's do; the idle
//! card is advanced in one long call. The networks run again with hosts
//! polling every 250 cycles, on one thread and on two
//! (`SimNetwork::set_threads`), and the two runs must end identically.
//!
//! `cargo bench -p homa-host --bench sim_speed` (`-- --quick` for short runs).

use std::collections::HashMap;
use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use homa_host::{Endpoint, Error, Nic, Peer, RpcId, SimNetwork};

/// The demo's message sizes, used in turn.
const DEMO_SIZES: [usize; 5] = [1, 100, 1424, 5000, 40_000];
/// RPCs each client keeps outstanding.
const CONCURRENCY: usize = 4;

/// Wall and CPU time of a closure's run.
struct Timing {
    wall_s: f64,
    cpu_s: f64,
}

fn cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec to write to.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

fn timed(f: impl FnOnce()) -> Timing {
    let (wall, cpu) = (Instant::now(), cpu_seconds());
    f();
    Timing {
        wall_s: wall.elapsed().as_secs_f64(),
        cpu_s: cpu_seconds() - cpu,
    }
}

fn report(what: &str, cycles: u64, cards: usize, t: &Timing) {
    println!(
        "{what:<44} {cycles:>9} cycles  {:>9.0} cycles/s wall  {:>9.0} cycles/s CPU  ({} card{}, {:.2} s)",
        cycles as f64 / t.wall_s,
        cycles as f64 / t.cpu_s,
        cards,
        if cards == 1 { "" } else { "s" },
        t.wall_s
    );
}

fn mac(i: usize) -> [u8; 6] {
    [2, 0, 0, 0, 0, i as u8 + 1]
}

fn ip(i: usize) -> Ipv4Addr {
    Ipv4Addr::new(10, 0, 0, i as u8 + 1)
}

/// A client endpoint with its RPCs in flight.
struct Client {
    endpoint: Endpoint,
    to: Peer,
    /// id -> payload sent.
    outstanding: HashMap<RpcId, Vec<u8>>,
    sent: usize,
    done: usize,
    sizes: Vec<usize>,
}

impl Client {
    /// Keeps `CONCURRENCY` RPCs in flight and checks every response.
    fn poll(&mut self) {
        while self.outstanding.len() < CONCURRENCY && self.sent < self.sizes.len() {
            let len = self.sizes[self.sent];
            let payload: Vec<u8> = (0..len).map(|i| (i * 7 + self.sent) as u8).collect();
            match self.endpoint.send_request(self.to, &payload) {
                Ok(id) => {
                    self.outstanding.insert(id, payload);
                    self.sent += 1;
                }
                Err(Error::RingFull { .. }) => break,
                Err(e) => panic!("send: {e}"),
            }
        }
        while let Some(r) = self.endpoint.try_recv_any_response().unwrap() {
            let payload = self
                .outstanding
                .remove(&r.id())
                .expect("a response to our RPC");
            assert_eq!(*r.message().bytes(), payload[..], "echo intact");
            self.done += 1;
        }
    }

    fn finished(&self) -> bool {
        self.done == self.sizes.len()
    }
}

fn serve(server: &mut Endpoint) {
    while let Some(request) = server.try_recv_request().unwrap() {
        server
            .reply(request.id(), &request.message().bytes())
            .unwrap();
    }
}

/// What a run ended with, to compare a threaded run with a serial one.
#[derive(Debug, PartialEq, Eq)]
struct End {
    cycle: u64,
    frames: u64,
}

/// A run's hosts, dropped after its timing: closing an endpoint waits for
/// the card to release what it still holds (a server's last responses wait
/// for their clients' acks, up to the NEED_ACK timer), cycles that `End`
/// does not count and the timing must not either.
struct Teardown {
    _clients: Vec<Client>,
    _servers: Vec<Endpoint>,
    _nics: Vec<Nic>,
}

/// An echo run on `network`: a client on card `c` sending to the server on
/// card `s` for each `(c, s)` of `pairs`, `rpcs` RPCs each; the hosts poll
/// every `poll_cycles` (`Nic::wait` when 4). Runs until every client is done.
fn echo_run(
    network: Arc<Mutex<SimNetwork>>,
    pairs: &[(usize, usize)],
    rpcs: usize,
    poll_cycles: u64,
) -> (End, Teardown) {
    let count = network.lock().unwrap().len();
    let nics: Vec<Nic> = (0..count)
        .map(|i| {
            let nic = Nic::open_sim(&network, i).unwrap();
            nic.set_address(mac(i), ip(i)).unwrap();
            nic
        })
        .collect();
    // A server port per card: a request the switch floods (to a MAC it has
    // not learnt yet) then finds no endpoint on the cards it is not for.
    let port = |card: usize| 100 + card as u16;
    let mut servers: Vec<Endpoint> = pairs
        .iter()
        .map(|&(_, s)| Endpoint::open(&nics[s], port(s)).unwrap())
        .collect();
    let mut clients: Vec<Client> = pairs
        .iter()
        .enumerate()
        .map(|(n, &(c, s))| Client {
            endpoint: Endpoint::open(&nics[c], 1000).unwrap(),
            to: Peer::new(ip(s), mac(s), port(s)),
            outstanding: HashMap::new(),
            sent: 0,
            done: 0,
            sizes: (0..rpcs)
                .map(|k| DEMO_SIZES[(k + n) % DEMO_SIZES.len()])
                .collect(),
        })
        .collect();
    while !clients.iter().all(Client::finished) {
        for c in &mut clients {
            c.poll();
        }
        for s in &mut servers {
            serve(s);
        }
        if poll_cycles == 4 {
            nics[0].wait();
        } else {
            network.lock().unwrap().run(poll_cycles);
        }
    }
    let end = {
        let net = network.lock().unwrap();
        End {
            cycle: net.cycle(),
            frames: net.frames(),
        }
    };
    let teardown = Teardown {
        _clients: clients,
        _servers: servers,
        _nics: nics,
    };
    (end, teardown)
}

fn network_of(count: usize, threads: usize) -> Arc<Mutex<SimNetwork>> {
    let mut n = SimNetwork::untraced("bench-speed", count, Default::default());
    n.set_threads(threads);
    Arc::new(Mutex::new(n))
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let scale = if quick { 1 } else { 4 };

    // One card, idle: advanced in long calls.
    let network = Arc::new(Mutex::new(SimNetwork::untraced(
        "bench-idle",
        1,
        Default::default(),
    )));
    let nic = Nic::open_sim(&network, 0).unwrap();
    nic.set_address(mac(0), ip(0)).unwrap();
    let _endpoint = Endpoint::open(&nic, 1000).unwrap();
    let idle_cycles = 1_000_000 * scale as u64;
    let t = timed(|| network.lock().unwrap().run(idle_cycles));
    report("one card, idle", idle_cycles, 1, &t);
    drop((_endpoint, nic, network));

    // One card at full load: cabled to itself, 40 KB echoes.
    let network = Arc::new(Mutex::new(SimNetwork::loopback(
        "bench-loopback",
        Default::default(),
    )));
    let mut end = None;
    let t = timed(|| {
        let nic = Nic::open_sim(&network, 0).unwrap();
        nic.set_address(mac(0), ip(0)).unwrap();
        let mut server = Endpoint::open(&nic, 99).unwrap();
        let mut client = Client {
            endpoint: Endpoint::open(&nic, 1000).unwrap(),
            to: Peer::new(ip(0), mac(0), 99),
            outstanding: HashMap::new(),
            sent: 0,
            done: 0,
            sizes: vec![40_000; 10 * scale],
        };
        while !client.finished() {
            client.poll();
            serve(&mut server);
            nic.wait();
        }
        end = Some(network.lock().unwrap().cycle());
    });
    report(
        "one card, full load (40 KB echoes to itself)",
        end.unwrap(),
        1,
        &t,
    );

    // Networks: hosts polling every 4 cycles as the demo's do (so the cards
    // never run apart), then every 1 us, serial and on two threads.
    let two = [(0, 1)];
    let eight: Vec<(usize, usize)> = (0..8).map(|i| (i, (i + 1) % 8)).collect();
    for (name, count, pairs, rpcs) in [
        ("two-card demo network", 2usize, &two[..], 50 * scale),
        ("eight cards on the switch", 8, &eight[..], 5 * scale),
    ] {
        let mut ends = Vec::new();
        for (poll, threads) in [(4u64, 1usize), (250, 1), (250, 2)] {
            let network = network_of(count, threads);
            let mut run = None;
            let t = timed(|| run = Some(echo_run(network, pairs, rpcs, poll)));
            let (end, teardown) = run.unwrap();
            drop(teardown);
            report(
                &format!(
                    "{name}, poll {poll}, {threads} thread{}",
                    if threads == 1 { "" } else { "s" }
                ),
                end.cycle,
                count,
                &t,
            );
            if poll == 250 {
                ends.push(end);
            }
        }
        assert_eq!(
            ends[0], ends[1],
            "{name}: the threaded run differs from the serial one"
        );
    }
}

//! What the host library's tests share.

use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};

use homa_host::{HomaConf, Nic, SimNetwork};

/// `count` simulated cards on one network (a cable for two, the switch for
/// more), opened as `open_nics` does.
#[allow(dead_code)] // (not every test binary uses both)
pub fn cards(name: &str, count: usize) -> (Arc<Mutex<SimNetwork>>, Vec<Nic>) {
    let network = Arc::new(Mutex::new(SimNetwork::new(name, count, Default::default())));
    let nics = open_nics(&network, count);
    (network, nics)
}

/// The first `count` cards of `network` opened, card i at MAC
/// 02:00:00:00:00:(i + 1) and 10.0.0.(i + 1).
pub fn open_nics(network: &Arc<Mutex<SimNetwork>>, count: usize) -> Vec<Nic> {
    (0..count)
        .map(|i| addressed(Nic::open_sim(network, i).unwrap(), i))
        .collect()
}

/// As `cards`, each card opened with the homa.conf text `conf`.
#[allow(dead_code)]
pub fn cards_with_config(name: &str, count: usize, conf: &str) -> Vec<Nic> {
    let network = Arc::new(Mutex::new(SimNetwork::new(name, count, Default::default())));
    (0..count)
        .map(|i| {
            let conf = HomaConf::parse(conf, "test").unwrap();
            addressed(Nic::open_sim_with_config(&network, i, conf).unwrap(), i)
        })
        .collect()
}

/// Card `i` given its addresses.
fn addressed(nic: Nic, i: usize) -> Nic {
    nic.set_address(
        [2, 0, 0, 0, 0, i as u8 + 1],
        Ipv4Addr::new(10, 0, 0, i as u8 + 1),
    )
    .unwrap();
    nic
}

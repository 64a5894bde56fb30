//! A Homa NIC opened by the host library: the driver's device, the card's
//! addresses, which endpoint blocks are in use, and the one way to wait.
//!
//! Waiting: a blocked call (`Endpoint::recv_*`) polls its completion ring
//! for `busy_poll_us` (homa.conf), letting the card run between polls; then
//! it writes what it consumed back (CPL_CONSUMER), arms its endpoint's
//! MSI-X vector and sleeps on it, and polls again when it wakes. The card
//! fires a vector only while its ring holds an entry the host has not
//! consumed (`homa_hw::regmap::interrupt`), so an entry that lands between
//! the last poll and the arming wakes the sleeper at once. A sleeper woken
//! by an entry it was not waiting for (a client's TX_DONE lands just ahead
//! of its response) polls for `interrupt_holdoff_ns` before it sleeps
//! again: the card sends that vector no message within the holdoff of the
//! last one, so sleeping there would only hold the next entry back to the
//! holdoff's end (500 cycles of a 100-byte RPC's RTT at the default 2 us,
//! measured by `cargo bench -p homa-host --bench rtt`). A sleep also ends
//! after `SLEEP_TIMEOUT` without a message, and is counted
//! ([`WaitStats::timeouts`]): with a working card that count stays 0. A
//! backend without interrupts (or `busy_poll_us` at its maximum) polls.

use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use homa_driver::{Backend, Device, SimBackend};

use crate::config::{self, HomaConf};
use crate::error::Error;
use crate::tunables::{find, HostSetting};
use crate::SimNetwork;

/// Cycles a blocked call lets the card run between polls. Small, so a
/// latency measured in a simulation is exact to a few cycles (16 ns).
const WAIT_CYCLES: u64 = 4;
/// The longest sleep on an interrupt before a blocked call looks again.
const SLEEP_TIMEOUT: Duration = Duration::from_millis(1);

/// Polls of the RESET register before a reset counts as stuck: in a
/// simulation 4 M cycles, 240 times the reset's settling time.
const RESET_POLLS: u32 = 1_000_000;

/// A card. Cheap to clone; endpoints and messages hold it.
#[derive(Clone)]
pub struct Nic {
    pub(crate) inner: Arc<NicInner>,
}

pub(crate) struct NicInner {
    pub(crate) device: Device,
    /// Per endpoint block: the port open on it, if any.
    pub(crate) ports: Mutex<Vec<Option<u16>>>,
    /// The card's addresses, as last set.
    addresses: Mutex<([u8; 6], Ipv4Addr)>,
    /// The tunables it was opened with (endpoint sizes are read from here).
    pub(crate) config: HomaConf,
    /// The next client RPC id, for every endpoint of the card: ids are
    /// unique per card, as HomaModule's are per host, because a server
    /// (and the card's own sender) knows an acked RPC by its client's
    /// address and id alone, not the client's port.
    pub(crate) next_rpc_id: std::sync::atomic::AtomicU64,
    /// Card resets so far: an endpoint opened before the last one is dead.
    pub(crate) resets: std::sync::atomic::AtomicU64,
    /// Blocked calls sleep on their endpoint's interrupt (after
    /// `busy_poll_us` of polling); false: they only poll.
    interrupts: bool,
    busy_poll_ns: u64,
    /// The card's interrupt holdoff: how long a woken sleeper polls.
    holdoff_ns: u64,
    sleeps: AtomicU64,
    wakeups: AtomicU64,
    timeouts: AtomicU64,
}

/// How blocked calls have waited on a card.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WaitStats {
    /// Blocked calls that slept on their endpoint's interrupt.
    pub sleeps: u64,
    /// Sleeps the interrupt ended.
    pub wakeups: u64,
    /// Sleeps that ended at `SLEEP_TIMEOUT` with no interrupt.
    pub timeouts: u64,
}

/// Where a blocked call's polling began, and for how long it polls from
/// there before it sleeps: `busy_poll_us` from the call's start, then the
/// holdoff from each wake-up (simulated time on a simulated card).
pub(crate) struct WaitStart {
    instant: Instant,
    cycle: Option<u64>,
    poll_ns: u64,
}

impl Nic {
    /// Opens the card behind `backend` (a real card through VFIO, or a
    /// simulated one) with the machine's homa.conf ([`HomaConf::from_env`]:
    /// `$HOMA_CONF`, else /etc/homa.conf, else the defaults).
    pub fn open(backend: impl Backend + 'static) -> Result<Nic, Error> {
        Self::open_with_config(backend, HomaConf::from_env()?)
    }

    /// Opens the card behind `backend` and applies `config` to it
    /// ([`config::apply`]: all of it, or nothing).
    pub fn open_with_config(
        backend: impl Backend + 'static,
        config: HomaConf,
    ) -> Result<Nic, Error> {
        let device = Device::open(backend)?;
        config::apply(&device, &config)?;
        let interface = device.interface()?;
        let addresses = (interface.mac()?, Ipv4Addr::from(interface.ipv4()?));
        let count = device.endpoint_count();
        let busy_poll_us = config.host(HostSetting::BusyPollUs);
        let holdoff_ns = config.value_or_default("interrupt_holdoff_ns");
        let never_sleep = find("busy_poll_us").is_some_and(|t| busy_poll_us >= t.max);
        let interrupts = !never_sleep
            && match device.backend().enable_interrupts(count as u32) {
                Ok(()) => true,
                Err(e) => {
                    tracing::info!("blocked calls will poll: {e}");
                    false
                }
            };
        Ok(Nic {
            inner: Arc::new(NicInner {
                device,
                ports: Mutex::new(vec![None; count]),
                addresses: Mutex::new(addresses),
                config,
                next_rpc_id: 2.into(),
                resets: 0.into(),
                interrupts,
                busy_poll_ns: u64::from(busy_poll_us) * 1000,
                holdoff_ns: u64::from(holdoff_ns),
                sleeps: 0.into(),
                wakeups: 0.into(),
                timeouts: 0.into(),
            }),
        })
    }

    /// Opens card `index` of a simulated network; waiting on it advances the
    /// whole network. The network may be one card on a real wire
    /// (`SimNetwork::on_udp_wire`: frames as UDP datagrams, docs/udp-wire.md).
    pub fn open_sim(network: &Arc<Mutex<SimNetwork>>, index: usize) -> Result<Nic, Error> {
        Self::open(SimBackend::on_network(network, index))
    }

    /// Opens card `index` of a simulated network with `config`.
    pub fn open_sim_with_config(
        network: &Arc<Mutex<SimNetwork>>,
        index: usize,
        config: HomaConf,
    ) -> Result<Nic, Error> {
        Self::open_with_config(SimBackend::on_network(network, index), config)
    }

    /// The tunables the card was opened with.
    pub fn config(&self) -> &HomaConf {
        &self.inner.config
    }

    /// Sets the card's MAC and IPv4 addresses (what it puts in every frame
    /// and accepts frames for).
    pub fn set_address(&self, mac: [u8; 6], ip: Ipv4Addr) -> Result<(), Error> {
        let interface = self.inner.device.interface()?;
        interface.set_mac(mac)?;
        interface.set_ipv4(ip.into())?;
        *self.inner.addresses.lock().unwrap() = (mac, ip);
        Ok(())
    }

    pub fn mac(&self) -> [u8; 6] {
        self.inner.addresses.lock().unwrap().0
    }

    pub fn ip(&self) -> Ipv4Addr {
        self.inner.addresses.lock().unwrap().1
    }

    /// The host has nothing to do until the card progresses: a simulated
    /// card (and its network) runs a few cycles; a real one is spun on.
    pub fn wait(&self) {
        self.inner.device.backend().advance(WAIT_CYCLES);
    }

    /// Resets the card: every RPC it holds is dropped and every endpoint
    /// closed, as at power-on (its addresses and tunables stay). Every
    /// endpoint of this card is dead afterwards: its calls, waiting ones
    /// included, fail with [`Error::CardReset`], and neither it nor its
    /// messages give the card anything back when dropped. Returns once the
    /// card is ready for new endpoints.
    pub fn reset(&self) -> Result<(), Error> {
        let interface = self.inner.device.interface()?;
        // Dead first, so no endpoint writes to the card while it resets.
        self.inner.resets.fetch_add(1, Ordering::SeqCst);
        interface.start_reset()?;
        for slot in self.inner.ports.lock().unwrap().iter_mut() {
            *slot = None;
        }
        for _ in 0..RESET_POLLS {
            if !interface.resetting()? {
                tracing::info!("card reset");
                return Ok(());
            }
            self.wait();
        }
        Err(Error::ResetStuck)
    }

    /// The start of a blocked call's wait.
    pub(crate) fn wait_start(&self) -> WaitStart {
        WaitStart {
            instant: Instant::now(),
            cycle: self.cycle(),
            poll_ns: self.inner.busy_poll_ns,
        }
    }

    /// One round of a blocked call's wait on endpoint `index`, begun at
    /// `start`: lets the card run a few cycles while it polls, and after
    /// `busy_poll_us` arms the endpoint's interrupt and sleeps on it; a
    /// wake-up starts a poll of the holdoff (see the module's notes). The
    /// caller has written back what it consumed.
    pub(crate) fn wait_on(&self, index: usize, start: &mut WaitStart) -> Result<(), Error> {
        let inner = &self.inner;
        let waited_ns = match (start.cycle, self.cycle()) {
            (Some(then), Some(now)) => ((now - then) as f64 * self.cycle_ns()) as u64,
            _ => start.instant.elapsed().as_nanos() as u64,
        };
        if !inner.interrupts || waited_ns < start.poll_ns {
            self.wait();
            return Ok(());
        }
        let vector = index as u32;
        inner.device.interrupts()?.arm(vector)?;
        inner.sleeps.fetch_add(1, Ordering::Relaxed);
        let fired = inner
            .device
            .backend()
            .wait_interrupt(vector, SLEEP_TIMEOUT)?;
        if fired > 0 {
            inner.wakeups.fetch_add(1, Ordering::Relaxed);
            *start = WaitStart {
                poll_ns: inner.holdoff_ns,
                ..self.wait_start()
            };
        } else {
            inner.timeouts.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Whether blocked calls sleep on interrupts (after `busy_poll_us`).
    pub fn interrupts(&self) -> bool {
        self.inner.interrupts
    }

    /// How blocked calls have waited so far.
    pub fn wait_stats(&self) -> WaitStats {
        let i = &self.inner;
        WaitStats {
            sleeps: i.sleeps.load(Ordering::Relaxed),
            wakeups: i.wakeups.load(Ordering::Relaxed),
            timeouts: i.timeouts.load(Ordering::Relaxed),
        }
    }

    /// Card resets so far (an endpoint remembers the count it was opened at).
    pub(crate) fn resets(&self) -> u64 {
        self.inner.resets.load(Ordering::SeqCst)
    }

    /// Core clock cycles simulated so far (`None` on a real card).
    pub fn cycle(&self) -> Option<u64> {
        self.inner.device.backend().cycle()
    }

    /// Nanoseconds per core clock cycle (4 at 250 MHz).
    pub fn cycle_ns(&self) -> f64 {
        self.inner.device.id().cycle_ns()
    }

    /// The driver's device, for what the library does not wrap (counters).
    pub fn device(&self) -> &Device {
        &self.inner.device
    }
}

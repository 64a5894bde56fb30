//! The reference model of a Homa endpoint: Homa exactly as the card implements
//! it, with HomaModule's semantics and defaults (WIRE.md).
//!
//! [`Endpoint`] is the deep module: frames in (`handle_frame`), frames out
//! (`next_frame`, pulled by the link when it is free), application calls in
//! (`send_request`, `reply`), application events out (`poll_event`), and a
//! timer (`tick`). It knows nothing of the event loop that drives it, so the
//! same model can face the simulated network, a pcap, or an RTL card.
//!
//! One file per concern, as HomaModule: [`config`] (tunables), [`rpc`] (RPC
//! identity and state), [`outgoing`] (sender and SRPT), [`incoming`]
//! (reassembly), [`grant`] (the grant scheduler), [`timer`] (RESEND, NEED_ACK,
//! timeouts), [`endpoint`] (packet dispatch and the API).

pub mod config;
pub mod endpoint;
pub mod grant;
pub mod incoming;
pub mod outgoing;
pub mod rpc;
pub mod timer;

pub use config::{Cycles, HomaConfig, CORE_CLOCK_HZ, CYCLES_PER_US, NS_PER_CYCLE};
pub use endpoint::{AppEvent, Counters, Endpoint, HomaError, RpcError};
pub use rpc::{HostAddr, RpcKey, RpcState};

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A small fast deterministic hasher (the Fx hash of rustc): the model's maps
/// must iterate in the same order on every run of a seed, which the standard
/// randomly-seeded hasher does not.
#[derive(Default, Clone, Copy)]
pub struct FxHasher {
    hash: u64,
}

const FX_SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(FX_SEED);
    }
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(w));
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }
    fn write_u16(&mut self, i: u16) {
        self.add(i as u64);
    }
    fn write_u32(&mut self, i: u32) {
        self.add(i as u64);
    }
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    fn finish(&self) -> u64 {
        self.hash
    }
}

/// A HashMap with deterministic iteration order for a given history.
pub type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

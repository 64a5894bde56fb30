//! The card's tunables: the one table `homa.conf` is checked against, applied
//! from and shown by (`config.rs` does the work; this file is the list).
//!
//! DESIGN NOTES
//! ------------
//! Names are HomaModule's sysctl names (`/proc/sys/net/homa/*`, WIRE.md
//! "Behaviour and defaults") where HomaModule has the knob; what only a card
//! has (its endpoints' ring and pool sizes) is prefixed `endpoint_`. The file
//! is flat, as the sysctls are.
//!
//! Where a value lands is its [`Target`]:
//! - [`Target::Csr`]: a register of a block found by discovery; `config apply`
//!   writes it, reads it back, and `config show` reads it live.
//! - [`Target::Endpoint`]: host-lib uses it for every endpoint it opens (ring
//!   sizes, bpages); `config show` reads it back from each open endpoint's
//!   block.
//! - [`Target::Host`]: host-lib's own behaviour (how a blocked call waits),
//!   taken when a card is opened; nothing on the card.
//! - [`Target::Fixed`]: built into this card's RTL today (or not built yet).
//!   A file may restate the value (a HomaModule-style file need not be
//!   trimmed) but not change it; the card refuses anything else, and says
//!   why. When the RTL grows a register for it, the entry's target becomes
//!   `Csr` and its range the register's: one line changes here.
//!
//! Adding a tunable is adding one [`Tunable`] to [`TUNABLES`]; a cross-key
//! rule (a combination the card or host-lib refuses) goes in
//! `config::check_combinations`.

use homa_hw::regmap::{block_type, grant, interrupt, timer};
use homa_hw::tx::engine as tx_engine;

/// A tunable's home.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A 32-bit register at `offset` in the block of type `block_type`
    /// (`homa_hw::regmap::block_type`); an array's element i is at
    /// `offset + 4 i`.
    Csr { block_type: u32, offset: u32 },
    /// Used by host-lib for each endpoint it opens.
    Endpoint(EndpointSetting),
    /// host-lib's own, taken when it opens a card.
    Host(HostSetting),
    /// Fixed in this card's RTL; `why` says where, or what issue brings it.
    Fixed { why: &'static str },
}

/// The endpoint settings host-lib applies at open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndpointSetting {
    /// TX descriptor ring entries (and TX slots); a power of two.
    TxRingEntries,
    /// Completion ring entries; a power of two.
    CompletionRingEntries,
    /// Receive bpages (64 KiB each) handed to the card.
    Bpages,
}

/// The settings of host-lib itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostSetting {
    /// Microseconds a blocked call polls before it sleeps on its endpoint's
    /// interrupt.
    BusyPollUs,
}

/// What values a tunable takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// One integer in `min..=max`.
    Scalar,
    /// One integer in `min..=max` that is a power of two.
    PowerOfTwo,
    /// An array of exactly this many integers, each in `min..=max`.
    Array(usize),
}

/// One tunable of the card.
#[derive(Clone, Copy, Debug)]
pub struct Tunable {
    /// The key in homa.conf (HomaModule's sysctl name where it has one).
    pub name: &'static str,
    pub target: Target,
    pub shape: Shape,
    /// Default value (one element unless `shape` is an array).
    pub default: &'static [u32],
    /// Allowed range of each value, inclusive.
    pub min: u32,
    pub max: u32,
    /// One line for the example file and `config show`.
    pub help: &'static str,
}

impl Tunable {
    /// The allowed values, as an error message says them.
    pub fn allowed(&self) -> String {
        match self.target {
            Target::Fixed { .. } => format!("only {} on this card", show_value(self.default)),
            _ => match self.shape {
                Shape::Scalar => format!("{}..={}", self.min, self.max),
                Shape::PowerOfTwo => format!("a power of two in {}..={}", self.min, self.max),
                Shape::Array(n) => format!("{n} integers, each {}..={}", self.min, self.max),
            },
        }
    }
}

/// A value as homa.conf writes it: `40000` or `[0, 0, 200]`.
pub fn show_value(value: &[u32]) -> String {
    if value.len() == 1 {
        value[0].to_string()
    } else {
        let items: Vec<String> = value.iter().map(u32::to_string).collect();
        format!("[{}]", items.join(", "))
    }
}

const PACER: &str = "built into the TX engine's RTL (homa_hw::tx::engine::PACER_FIFO_FRACTION)";
const NUDGES: &str =
    "the card asks a silent client for its ACK at resend_ticks, then every resend_interval";
const TX_ENGINE: &str = "built into the TX engine's RTL (homa_hw::tx::engine)";

/// Every tunable of the card, in the order the example file lists them.
pub const TUNABLES: &[Tunable] = &[
    // Unscheduled data and priorities.
    Tunable {
        name: "unsched_bytes",
        target: Target::Csr {
            block_type: block_type::GRANT,
            offset: grant::UNSCHED_BYTES,
        },
        shape: Shape::Scalar,
        default: &[40_000],
        min: 1,
        max: 1_000_000,
        help: "bytes of each message sent before any grant",
    },
    Tunable {
        name: "unsched_cutoffs",
        target: Target::Fixed { why: TX_ENGINE },
        shape: Shape::Array(8),
        default: &tx_engine::UNSCHED_CUTOFFS,
        min: 0,
        max: 1_000_000,
        help: "entry i: the largest message a peer sends us unscheduled at priority i (announced in CUTOFFS)",
    },
    Tunable {
        name: "cutoff_version",
        target: Target::Fixed { why: TX_ENGINE },
        shape: Shape::Scalar,
        default: &[tx_engine::CUTOFF_VERSION as u32],
        min: 0,
        max: 0xffff,
        help: "version of our unsched_cutoffs; a peer whose DATA carries another gets our CUTOFFS",
    },
    Tunable {
        name: "num_priorities",
        target: Target::Fixed { why: TX_ENGINE },
        shape: Shape::Scalar,
        default: &[8],
        min: 1,
        max: 8,
        help: "priority levels the switches offer",
    },
    Tunable {
        name: "max_sched_prio",
        target: Target::Csr {
            block_type: block_type::GRANT,
            offset: grant::MAX_SCHED_PRIO,
        },
        shape: Shape::Scalar,
        default: &[3],
        min: 0,
        max: 7,
        help: "highest priority of scheduled (granted) data",
    },
    // The grant scheduler.
    Tunable {
        name: "window",
        target: Target::Csr {
            block_type: block_type::GRANT,
            offset: grant::WINDOW,
        },
        shape: Shape::Scalar,
        default: &[0],
        min: 0,
        max: 1_000_000,
        help: "grant window past the bytes received; 0: max_incoming / (active + 1)",
    },
    Tunable {
        name: "max_incoming",
        target: Target::Csr {
            block_type: block_type::GRANT,
            offset: grant::MAX_INCOMING,
        },
        shape: Shape::Scalar,
        default: &[400_000],
        min: 1,
        max: 100_000_000,
        help: "granted-but-not-received bytes across the card",
    },
    Tunable {
        name: "max_overcommit",
        target: Target::Csr {
            block_type: block_type::GRANT,
            offset: grant::MAX_OVERCOMMIT,
        },
        shape: Shape::Scalar,
        default: &[8],
        min: 1,
        max: 8,
        help: "messages granted at once (the active set)",
    },
    Tunable {
        name: "grant_fifo_fraction",
        target: Target::Csr {
            block_type: block_type::GRANT,
            offset: grant::GRANT_FIFO_FRACTION,
        },
        shape: Shape::Scalar,
        default: &[50],
        min: 0,
        max: 500,
        help: "per mille of grants given to the oldest message",
    },
    Tunable {
        name: "fifo_grant_increment",
        target: Target::Csr {
            block_type: block_type::GRANT,
            offset: grant::FIFO_GRANT_INCREMENT,
        },
        shape: Shape::Scalar,
        default: &[50_000],
        min: 1,
        max: 1_000_000,
        help: "bytes granted to the oldest message at once",
    },
    Tunable {
        name: "pacer_fifo_fraction",
        target: Target::Fixed { why: PACER },
        shape: Shape::Scalar,
        default: &[50],
        min: 0,
        max: 500,
        help: "per mille of sent bytes given to the oldest outgoing message",
    },
    // Timers.
    Tunable {
        name: "timer_tick_ns",
        target: Target::Csr {
            block_type: block_type::TIMER,
            offset: timer::TICK_NS,
        },
        shape: Shape::Scalar,
        default: &[timer::TICK_NS_DEFAULT],
        min: 4,
        max: 1 << 24,
        help: "the card's timer tick in ns, the unit of the *_ticks tunables (HomaModule: 1 ms)",
    },
    Tunable {
        name: "resend_ticks",
        target: Target::Csr {
            block_type: block_type::TIMER,
            offset: timer::RESEND_TICKS,
        },
        shape: Shape::Scalar,
        default: &[timer::RESEND_TICKS_DEFAULT],
        min: 0,
        max: 255,
        help: "ticks of silence before a receiver's first RESEND (0: none)",
    },
    Tunable {
        name: "resend_interval",
        target: Target::Csr {
            block_type: block_type::TIMER,
            offset: timer::RESEND_INTERVAL,
        },
        shape: Shape::Scalar,
        default: &[timer::RESEND_INTERVAL_DEFAULT],
        min: 1,
        max: 255,
        help: "ticks between RESENDs",
    },
    Tunable {
        name: "timeout_ticks",
        target: Target::Csr {
            block_type: block_type::TIMER,
            offset: timer::TIMEOUT_TICKS,
        },
        shape: Shape::Scalar,
        default: &[timer::TIMEOUT_TICKS_DEFAULT],
        min: 1,
        max: 255,
        help: "ticks of a peer's silence before the card gives up on a message (one it sent: a request fails with ETIMEDOUT; one it receives: forgotten, a response fails)",
    },
    Tunable {
        name: "request_ack_ticks",
        target: Target::Fixed { why: NUDGES },
        shape: Shape::Scalar,
        default: &[2],
        min: 1,
        max: 10_000,
        help: "ticks after a response is sent before the server asks for an ACK",
    },
    // Interrupts (the card's; HomaModule has the kernel's NAPI).
    Tunable {
        name: "interrupt_holdoff_ns",
        target: Target::Csr {
            block_type: block_type::INTERRUPT,
            offset: interrupt::HOLDOFF_NS,
        },
        shape: Shape::Scalar,
        default: &[interrupt::HOLDOFF_NS_DEFAULT],
        min: 0,
        max: interrupt::HOLDOFF_NS_MAX,
        help: "least ns between two interrupts of one endpoint (moderation; 0: none)",
    },
    Tunable {
        name: "busy_poll_us",
        target: Target::Host(HostSetting::BusyPollUs),
        shape: Shape::Scalar,
        default: &[50],
        min: 0,
        max: 1_000_000,
        help: "us a blocked call polls its completion ring before it arms its endpoint's \
               interrupt and sleeps (Linux's net.core.busy_poll; 0: sleep at once)",
    },
    // Endpoints (the card's own; HomaModule sizes these per socket).
    Tunable {
        name: "endpoint_tx_ring_entries",
        target: Target::Endpoint(EndpointSetting::TxRingEntries),
        shape: Shape::PowerOfTwo,
        default: &[64],
        min: 2,
        max: 1024,
        help: "TX ring entries per endpoint (each holds a 40 KiB message slot)",
    },
    Tunable {
        name: "endpoint_completion_ring_entries",
        target: Target::Endpoint(EndpointSetting::CompletionRingEntries),
        shape: Shape::PowerOfTwo,
        default: &[256],
        min: 4,
        max: 32_768,
        help: "completion ring entries per endpoint",
    },
    Tunable {
        name: "endpoint_bpages",
        target: Target::Endpoint(EndpointSetting::Bpages),
        shape: Shape::Scalar,
        default: &[crate::endpoint::DEFAULT_BPAGES],
        min: 1,
        max: homa_driver::rx_area::MAX_BPAGES,
        help: "64 KiB receive bpages per endpoint (received messages held at once)",
    },
];

/// The tunable named `name`.
pub fn find(name: &str) -> Option<&'static Tunable> {
    TUNABLES.iter().find(|t| t.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grant_tunables_default_to_what_the_card_resets_to() {
        let mut seen = 0;
        for t in TUNABLES {
            if let Target::Csr {
                block_type: block_type::GRANT,
                offset,
            } = t.target
            {
                let reset = grant::DEFAULTS.iter().find(|d| d.0 == offset);
                assert_eq!(reset.map(|d| d.1), Some(t.default[0]), "{}", t.name);
                seen += 1;
            }
        }
        assert_eq!(
            seen,
            grant::DEFAULTS.len(),
            "every grant register is a tunable"
        );
    }
}

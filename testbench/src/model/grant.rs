//! The receiver's grant scheduler.
//!
//! DESIGN NOTES
//! - Candidates are inbound messages that still need grants (granted < length),
//!   ordered by (bytes still to receive, birth): SRPT, ties to the oldest. The
//!   active set is the first `max_overcommit` candidates, taking at most
//!   `max_rpcs_per_peer` from any one peer.
//! - Each active message is granted up to `received + window` (rounded up to
//!   the sender's packet grid so the sender sends full packets), where window
//!   is `window` or, when 0, `max_incoming / (active + 1)`. No grant may lift
//!   `total_incoming` (granted-but-not-received bytes over all inbound
//!   messages, unscheduled ones included) above `max_incoming`: the last grant
//!   before the cap is cut short. Unscheduled arrivals can push the total over
//!   the cap; then nobody is granted until it drains.
//! - Grant priority by rank r of n active: `max_sched_prio - r`, shifted down
//!   by `max_sched_prio + 1 - n` when fewer messages than scheduled levels are
//!   active, so a lone message uses level 0 and leaves the levels above for
//!   the messages that may come (HomaModule's rule).
//! - FIFO grants: after `fifo_grant_increment * (1000 - f) / f` bytes granted
//!   by SRPT (f = `grant_fifo_fraction` per mille), the oldest candidate
//!   outside the active set gets `fifo_grant_increment` bytes at
//!   `max_sched_prio`, so a long message makes progress under any stream of
//!   shorter ones (if every candidate is active, nobody starves and the turn
//!   passes). It obeys `max_incoming` too (it waits for room).
//! - The scheduler runs on every DATA arrival and whenever a message leaves;
//!   cost is O(active set). The hardware keeps the candidates in a sorted
//!   list of the same key.

use std::collections::BTreeSet;
use std::net::Ipv4Addr;

use homa_wire::{Body, Grant};

use super::config::HomaConfig;
use super::endpoint::Endpoint;
use super::incoming::MessageIn;
use super::rpc::RpcKey;

/// The grant scheduler's state (inside an `Endpoint`).
#[derive(Debug, Default)]
pub struct GrantScheduler {
    /// Messages needing grants: (bytes_remaining, birth, key).
    pub candidates: BTreeSet<(u32, u64, RpcKey)>,
    /// The same messages, oldest first (for FIFO grants).
    pub oldest: BTreeSet<(u64, RpcKey)>,
    /// Granted-but-not-received bytes over all inbound messages.
    pub total_incoming: u64,
    /// Bytes granted by SRPT since the last FIFO grant.
    pub srpt_granted_bytes: u64,
}

impl GrantScheduler {
    /// Re-files `msg` after it changed (bytes received or granted).
    pub fn update_message(&mut self, _cfg: &HomaConfig, key: RpcKey, msg: &mut MessageIn) {
        let incoming = msg.outstanding();
        self.total_incoming = self.total_incoming - msg.incoming as u64 + incoming as u64;
        msg.incoming = incoming;
        let wanted =
            (msg.granted < msg.length && msg.bytes_remaining > 0).then_some(msg.bytes_remaining);
        if wanted != msg.candidate {
            if let Some(old) = msg.candidate.take() {
                self.candidates.remove(&(old, msg.birth, key));
                self.oldest.remove(&(msg.birth, key));
            }
            if let Some(new) = wanted {
                self.candidates.insert((new, msg.birth, key));
                self.oldest.insert((msg.birth, key));
                msg.candidate = Some(new);
            }
        }
    }

    /// Forgets `msg` (complete, or its RPC is gone).
    pub fn remove_message(&mut self, key: RpcKey, msg: &mut MessageIn) {
        self.total_incoming -= msg.incoming as u64;
        msg.incoming = 0;
        if let Some(old) = msg.candidate.take() {
            self.candidates.remove(&(old, msg.birth, key));
            self.oldest.remove(&(msg.birth, key));
        }
    }
}

/// Grant priority for rank `rank` (0 best) among `active` messages.
pub fn grant_priority(max_sched_prio: u8, rank: usize, active: usize) -> u8 {
    let levels = max_sched_prio as i64 + 1;
    let mut prio = max_sched_prio as i64 - rank as i64;
    let extra = levels - active as i64;
    if extra > 0 {
        prio -= extra;
    }
    prio.max(0) as u8
}

impl Endpoint {
    /// The active set right now, best first.
    pub fn active_set(&self) -> Vec<RpcKey> {
        let mut active = Vec::with_capacity(self.cfg.max_overcommit);
        let mut per_peer: Vec<(Ipv4Addr, usize)> = Vec::new();
        for &(_, _, key) in &self.grants.candidates {
            if active.len() >= self.cfg.max_overcommit {
                break;
            }
            match per_peer.iter_mut().find(|(p, _)| *p == key.peer) {
                Some((_, n)) if *n >= self.cfg.max_rpcs_per_peer => continue,
                Some((_, n)) => *n += 1,
                None => per_peer.push((key.peer, 1)),
            }
            active.push(key);
        }
        active
    }

    /// Issues the grants the current state calls for.
    pub(crate) fn schedule_grants(&mut self) {
        if self.grants.candidates.is_empty() {
            return;
        }
        let active = self.active_set();
        let n = active.len();
        let max_incoming = self.cfg.max_incoming as u64;
        let window = if self.cfg.window == 0 {
            self.cfg.max_incoming / (n as u32 + 1)
        } else {
            self.cfg.window
        };
        for (rank, &key) in active.iter().enumerate() {
            let room = max_incoming.saturating_sub(self.grants.total_incoming);
            if room == 0 {
                break;
            }
            let priority = grant_priority(self.cfg.max_sched_prio, rank, n);
            let msg = self.rpcs.get_mut(&key).unwrap().msgin.as_mut().unwrap();
            let target = self
                .cfg
                .round_to_packet(msg.received().saturating_add(window), msg.length);
            if target <= msg.granted {
                continue;
            }
            let new_granted = target.min((msg.granted as u64 + room) as u32);
            self.grants.srpt_granted_bytes += (new_granted - msg.granted) as u64;
            self.issue_grant(key, new_granted, priority, false);
        }
        self.fifo_grant();
    }

    fn fifo_grant(&mut self) {
        let f = self.cfg.grant_fifo_fraction as u64;
        if f == 0 || f >= 1000 {
            return;
        }
        let threshold = self.cfg.fifo_grant_increment as u64 * (1000 - f) / f;
        if self.grants.srpt_granted_bytes < threshold {
            return;
        }
        // The oldest candidate the SRPT pass is not already granting.
        let active = self.active_set();
        let Some(&(_, key)) = self.grants.oldest.iter().find(|(_, k)| !active.contains(k)) else {
            // Every candidate is being granted: nobody is starving.
            self.grants.srpt_granted_bytes -= threshold;
            return;
        };
        let room = (self.cfg.max_incoming as u64).saturating_sub(self.grants.total_incoming);
        if room == 0 {
            return;
        }
        let msg = self.rpcs[&key].msgin.as_ref().unwrap();
        let increment = (self.cfg.fifo_grant_increment as u64)
            .min((msg.length - msg.granted) as u64)
            .min(room) as u32;
        let new_granted = msg.granted + increment;
        self.grants.srpt_granted_bytes -= threshold;
        self.counters.fifo_grants_out += 1;
        self.issue_grant(key, new_granted, self.cfg.max_sched_prio, true);
    }

    fn issue_grant(&mut self, key: RpcKey, new_granted: u32, priority: u8, _fifo: bool) {
        let rpc = self.rpcs.get_mut(&key).unwrap();
        let msg = rpc.msgin.as_mut().unwrap();
        msg.granted = new_granted;
        msg.priority = priority;
        self.grants.update_message(&self.cfg, key, msg);
        self.counters.max_incoming_after_grant = self
            .counters
            .max_incoming_after_grant
            .max(self.grants.total_incoming);
        self.send_rpc_control(
            key,
            Body::Grant(Grant {
                offset: new_granted,
                priority,
            }),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priority_by_rank_uses_the_lowest_levels_when_few_are_active() {
        assert_eq!(grant_priority(3, 0, 1), 0);
        assert_eq!(grant_priority(3, 0, 2), 1);
        assert_eq!(grant_priority(3, 1, 2), 0);
        assert_eq!(grant_priority(3, 0, 4), 3);
        assert_eq!(grant_priority(3, 3, 4), 0);
        assert_eq!(grant_priority(3, 0, 8), 3);
        assert_eq!(grant_priority(3, 7, 8), 0);
    }
}

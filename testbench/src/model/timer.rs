//! The timer: once per tick, every RPC is checked for silence.
//!
//! DESIGN NOTES
//! - An RPC is *silent* when it waits on its peer and nothing arrived for it
//!   during the tick: it has no more granted bytes to send and either expects
//!   granted bytes that have not come (or, with nothing received yet, a
//!   response), or waits for the ACK of a fully sent response. An RPC that is
//!   waiting on *us* (bytes it could still send, bytes it has not granted yet,
//!   a request in service) is never silent.
//! - After `resend_ticks` of silence, and every `resend_interval` after, the
//!   receiver sends RESEND for each missing granted range (or RESEND(0, -1) if
//!   nothing of the peer's message has arrived yet); the sender answers with
//!   the data, BUSY, or RPC_UNKNOWN (see `endpoint`).
//! - A server whose response is fully sent asks for an ACK every
//!   `request_ack_ticks` of silence.
//! - After `timeout_ticks` of silence the RPC is aborted: a client reports
//!   `RpcError::Timeout` to the application; a server just forgets it.

use homa_wire::{Body, Resend};
use tracing::debug;

use super::config::{Cycles, HomaConfig};
use super::endpoint::{AppEvent, Endpoint, RpcError, CONTROL_PRIORITY, RESEND_ALL};
use super::rpc::{RpcKey, RpcState};

/// What one RPC needs from the timer this tick.
enum TimerAction {
    Resend(Vec<(u32, u32, u8)>),
    NeedAck,
    Timeout,
}

impl Endpoint {
    /// Advances the timer by one tick (call every `tick_cycles`).
    pub fn tick(&mut self, now: Cycles) {
        self.ticks += 1;
        let cfg = &self.cfg;
        let mut actions: Vec<(RpcKey, TimerAction)> = Vec::new();
        for (&key, rpc) in self.rpcs.iter_mut() {
            let waiting = match rpc.state {
                RpcState::InService => false,
                RpcState::Outgoing => !rpc.msgout.as_ref().is_some_and(|m| m.can_send()),
                RpcState::Incoming => rpc.msgin.as_ref().is_none_or(|m| m.outstanding() > 0),
            };
            if !waiting {
                rpc.silent_ticks = 0;
                continue;
            }
            rpc.silent_ticks += 1;
            let silent = rpc.silent_ticks;
            if silent >= cfg.timeout_ticks {
                actions.push((key, TimerAction::Timeout));
                continue;
            }
            let fully_sent = rpc
                .msgout
                .as_ref()
                .is_some_and(|m| m.next_xmit_offset == m.length);
            if rpc.state == RpcState::Outgoing && !rpc.is_client() && fully_sent {
                let every = cfg.request_ack_ticks.max(1);
                if silent >= cfg.request_ack_ticks
                    && (silent - cfg.request_ack_ticks).is_multiple_of(every)
                {
                    actions.push((key, TimerAction::NeedAck));
                }
                continue;
            }
            let due = silent >= cfg.resend_ticks
                && (silent - cfg.resend_ticks).is_multiple_of(cfg.resend_interval.max(1));
            if !due {
                continue;
            }
            let ranges = match rpc.msgin.as_ref() {
                Some(m) => {
                    let unscheduled = cfg.unscheduled(m.length);
                    let unsched_prio = HomaConfig::unsched_priority(&cfg.unsched_cutoffs, m.length);
                    m.missing_granted()
                        .into_iter()
                        .map(|(s, e)| {
                            let prio = if s < unscheduled {
                                unsched_prio
                            } else {
                                m.priority
                            };
                            (s, e - s, prio)
                        })
                        .collect()
                }
                None => vec![(0, RESEND_ALL, CONTROL_PRIORITY)],
            };
            actions.push((key, TimerAction::Resend(ranges)));
        }
        for (key, action) in actions {
            match action {
                TimerAction::Resend(ranges) => {
                    for (offset, length, priority) in ranges {
                        self.send_rpc_control(
                            key,
                            Body::Resend(Resend {
                                offset,
                                length,
                                priority,
                            }),
                        );
                    }
                }
                TimerAction::NeedAck => self.send_rpc_control(key, Body::NeedAck),
                TimerAction::Timeout => self.timeout(now, key),
            }
        }
    }

    fn timeout(&mut self, now: Cycles, key: RpcKey) {
        let silent_ticks = self.rpcs[&key].silent_ticks;
        debug!(now, ?key, silent_ticks, "RPC timed out");
        if key.is_client() {
            self.counters.client_timeouts += 1;
            self.events.push_back(AppEvent::Failed {
                id: key.id,
                server: key.peer,
                error: RpcError::Timeout {
                    silent_ticks,
                    silent_cycles: silent_ticks as u64 * self.cfg.tick_cycles,
                },
            });
        } else {
            self.counters.server_timeouts += 1;
        }
        self.free_rpc(key);
    }
}

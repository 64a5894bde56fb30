//! The sender: outgoing messages and the SRPT choice of what to transmit next.
//!
//! DESIGN NOTES
//! - Pull, not push. The link asks the endpoint for its next frame whenever it
//!   is free (`Endpoint::next_frame`), exactly as the card's MAC pulls from the
//!   TX scheduler. So nothing queues inside the sender beyond what is
//!   *eligible*, and SRPT decides at the last moment, with the newest grants.
//! - Order of service: control packets; retransmissions (answers to RESEND);
//!   messages shorter than `throttle_min_bytes` in arrival order (HomaModule
//!   sends these without the pacer); then SRPT over the messages with granted
//!   bytes left: fewest bytes left to transmit first, ties to the oldest. So
//!   the oldest message is not starved, `pacer_fifo_fraction` per mille of the
//!   bytes go to the oldest eligible message instead (a byte credit: every SRPT
//!   byte adds fraction/1000 to `fifo_credit_bytes`; when it covers a packet,
//!   that packet goes to the oldest).
//! - Eligibility sets are ordered sets keyed by (bytes left, birth) and by
//!   birth: O(log n) per packet; the hardware keeps the same order in a
//!   priority queue.
//! - A packet never runs past the granted offset, and the unscheduled part ends
//!   exactly at `unsched_bytes` (a short packet if needed).

use std::collections::{BTreeSet, VecDeque};

use super::rpc::RpcKey;

/// A message being sent.
#[derive(Debug)]
pub struct MessageOut {
    /// The whole message, as the application gave it.
    pub payload: Vec<u8>,
    /// Total bytes (= payload.len()).
    pub length: u32,
    /// Bytes sent without grants: min(length, unsched_bytes).
    pub unscheduled: u32,
    /// The sender may transmit every byte below this offset. Starts at
    /// `unscheduled`; raised by GRANTs (and by RESENDs, which imply a grant).
    pub granted: u32,
    /// Offset of the next new byte to transmit; everything below was sent once.
    pub next_xmit_offset: u32,
    /// Priority of the unscheduled bytes (from the receiver's cutoffs).
    pub unsched_priority: u8,
    /// Priority of scheduled bytes: the latest GRANT's.
    pub sched_priority: u8,
    /// Order of creation among this endpoint's messages (smaller is older).
    pub birth: u64,
    /// Whether the message sits in the sender's queues (and under which SRPT key).
    pub queued: Option<SendKey>,
}

impl MessageOut {
    /// Bytes not yet transmitted once (the SRPT key).
    pub fn bytes_left(&self) -> u32 {
        self.length - self.next_xmit_offset
    }

    /// Whether a new packet may be sent now.
    pub fn can_send(&self) -> bool {
        self.next_xmit_offset < self.granted.min(self.length)
    }

    /// End of the next packet starting at `offset`: at most one full payload,
    /// never past `granted`, the end of the unscheduled part, or the message.
    pub fn packet_end(&self, offset: u32, max_payload: u32) -> u32 {
        let mut end = (offset + max_payload)
            .min(self.length)
            .min(self.granted.max(offset + 1));
        if offset < self.unscheduled {
            end = end.min(self.unscheduled);
        }
        end
    }

    /// Priority of the byte at `offset`.
    pub fn priority_at(&self, offset: u32) -> u8 {
        if offset < self.unscheduled {
            self.unsched_priority
        } else {
            self.sched_priority
        }
    }
}

/// Where a message is queued: which class, and its SRPT key when queued by SRPT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendKey {
    /// Short message: FIFO class, ordered by birth.
    Bypass { birth: u64 },
    /// SRPT class, ordered by (bytes left, birth).
    Srpt { bytes_left: u32, birth: u64 },
}

/// A range of already-sent bytes to transmit again (answer to a RESEND).
#[derive(Clone, Copy, Debug)]
pub struct Retransmit {
    pub key: RpcKey,
    /// Next byte to resend.
    pub offset: u32,
    /// End of the range (exclusive).
    pub end: u32,
    /// Priority the RESEND asked for.
    pub priority: u8,
}

/// The sender's queues of eligible messages.
#[derive(Debug, Default)]
pub struct SendQueue {
    /// Short messages, oldest first.
    pub bypass: BTreeSet<(u64, RpcKey)>,
    /// SRPT order: fewest bytes left, then oldest.
    pub srpt: BTreeSet<(u32, u64, RpcKey)>,
    /// The same messages as `srpt`, oldest first (for the FIFO fraction).
    pub fifo: BTreeSet<(u64, RpcKey)>,
    /// Retransmissions, served in arrival order before new data.
    pub retransmits: VecDeque<Retransmit>,
    /// Bytes owed to the oldest message (see DESIGN NOTES).
    pub fifo_credit_bytes: u64,
}

impl SendQueue {
    /// Takes `msg` out of the queues if it is queued.
    pub fn remove(&mut self, key: RpcKey, msg: &mut MessageOut) {
        match msg.queued.take() {
            Some(SendKey::Bypass { birth }) => {
                self.bypass.remove(&(birth, key));
            }
            Some(SendKey::Srpt { bytes_left, birth }) => {
                self.srpt.remove(&(bytes_left, birth, key));
                self.fifo.remove(&(birth, key));
            }
            None => {}
        }
    }

    /// Puts `msg` back in the right place after its state changed: queued iff
    /// it can send now.
    pub fn update(&mut self, key: RpcKey, msg: &mut MessageOut, throttle_min_bytes: u32) {
        self.remove(key, msg);
        if !msg.can_send() {
            return;
        }
        if msg.length < throttle_min_bytes {
            self.bypass.insert((msg.birth, key));
            msg.queued = Some(SendKey::Bypass { birth: msg.birth });
        } else {
            let bytes_left = msg.bytes_left();
            self.srpt.insert((bytes_left, msg.birth, key));
            self.fifo.insert((msg.birth, key));
            msg.queued = Some(SendKey::Srpt {
                bytes_left,
                birth: msg.birth,
            });
        }
    }

    /// The message to send the next new packet of, if any. `packet_bytes` is
    /// the size of a full packet (for the FIFO credit).
    pub fn pick(&mut self, packet_bytes: u32, pacer_fifo_fraction: u32) -> Option<RpcKey> {
        if let Some(&(_, key)) = self.bypass.first() {
            return Some(key);
        }
        let &(_, _, srpt_key) = self.srpt.first()?;
        if pacer_fifo_fraction > 0 && self.fifo_credit_bytes >= packet_bytes as u64 {
            let &(_, oldest) = self.fifo.first().expect("fifo mirrors srpt");
            if oldest != srpt_key {
                self.fifo_credit_bytes -= packet_bytes as u64;
                return Some(oldest);
            }
        }
        Some(srpt_key)
    }

    /// Accounts `bytes` sent by SRPT for the FIFO fraction.
    pub fn charge_srpt(&mut self, bytes: u32, pacer_fifo_fraction: u32) {
        self.fifo_credit_bytes += bytes as u64 * pacer_fifo_fraction as u64 / 1000;
    }
}

//! The receiver: reassembly of an inbound message from DATA packets.
//!
//! DESIGN NOTES
//! - Received bytes are tracked as HomaModule does: `recv_end`, the end of the
//!   highest byte range received, and a list of gaps (missing ranges) below it.
//!   A packet beyond `recv_end` may open a gap; a packet inside a gap shrinks
//!   or splits it; anything else is a duplicate and changes nothing, which is
//!   what makes duplicated packets harmless. Gaps are few (one per lost or
//!   reordered packet in flight), so a vector is faster than a tree.
//! - Payload is copied into the message buffer at its offset, as the card DMAs
//!   it into the receive buffer region.

/// A message being received.
#[derive(Debug)]
pub struct MessageIn {
    /// Total bytes (from the DATA header).
    pub length: u32,
    /// The message assembled so far.
    pub buffer: Vec<u8>,
    /// Bytes not received yet (the grant scheduler's ranking key).
    pub bytes_remaining: u32,
    /// End of the highest byte range received.
    pub recv_end: u32,
    /// Missing ranges [start, end) below `recv_end`, in order.
    pub gaps: Vec<(u32, u32)>,
    /// Bytes the sender may transmit: its unscheduled bytes, raised by our GRANTs.
    pub granted: u32,
    /// Priority of our latest GRANT for this message.
    pub priority: u8,
    /// Order of creation among this endpoint's inbound messages (smaller is older).
    pub birth: u64,
    /// Granted-but-not-received bytes this message contributes to the
    /// endpoint's `total_incoming`.
    pub incoming: u32,
    /// Whether the message is in the grant scheduler's candidate set, and with
    /// which `bytes_remaining`.
    pub candidate: Option<u32>,
}

/// What a DATA packet did to a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accepted {
    /// Some bytes were new.
    New(u32),
    /// Every byte had been received before.
    Duplicate,
}

impl MessageIn {
    pub fn new(length: u32, granted: u32, birth: u64) -> MessageIn {
        MessageIn {
            length,
            buffer: vec![0; length as usize],
            bytes_remaining: length,
            recv_end: 0,
            gaps: Vec::new(),
            granted: granted.min(length),
            priority: 0,
            birth,
            incoming: 0,
            candidate: None,
        }
    }

    /// Bytes received so far.
    pub fn received(&self) -> u32 {
        self.length - self.bytes_remaining
    }

    /// Records the payload of one DATA packet at `offset`.
    pub fn accept(&mut self, offset: u32, payload: &[u8]) -> Accepted {
        let start = offset;
        let end = offset + payload.len() as u32;
        if start >= end {
            return Accepted::Duplicate;
        }
        let mut new_bytes = 0u32;
        let copy = |buf: &mut Vec<u8>, s: u32, e: u32| {
            buf[s as usize..e as usize]
                .copy_from_slice(&payload[(s - offset) as usize..(e - offset) as usize]);
        };
        // Part below recv_end: only bytes inside gaps are new.
        if start < self.recv_end {
            let lim = end.min(self.recv_end);
            let mut i = 0;
            while i < self.gaps.len() {
                let (gs, ge) = self.gaps[i];
                if ge <= start {
                    i += 1;
                    continue;
                }
                if gs >= lim {
                    break;
                }
                let s = gs.max(start);
                let e = ge.min(lim);
                copy(&mut self.buffer, s, e);
                new_bytes += e - s;
                // Replace the gap with what is left of it on either side.
                let mut rest = Vec::with_capacity(2);
                if gs < s {
                    rest.push((gs, s));
                }
                if e < ge {
                    rest.push((e, ge));
                }
                let n = rest.len();
                self.gaps.splice(i..i + 1, rest);
                i += n;
            }
        }
        // Part at or beyond recv_end.
        if end > self.recv_end {
            let s = start.max(self.recv_end);
            if s > self.recv_end {
                self.gaps.push((self.recv_end, s));
            }
            copy(&mut self.buffer, s, end);
            new_bytes += end - s;
            self.recv_end = end;
        }
        if new_bytes == 0 {
            Accepted::Duplicate
        } else {
            self.bytes_remaining -= new_bytes;
            Accepted::New(new_bytes)
        }
    }

    /// Ranges granted (or sent unscheduled) but not received: the gaps, then
    /// the tail from `recv_end` to `granted`.
    pub fn missing_granted(&self) -> Vec<(u32, u32)> {
        let mut out: Vec<(u32, u32)> = self
            .gaps
            .iter()
            .copied()
            .filter(|&(s, _)| s < self.granted)
            .map(|(s, e)| (s, e.min(self.granted)))
            .collect();
        if self.recv_end < self.granted {
            out.push((self.recv_end, self.granted));
        }
        out
    }

    /// Granted bytes not yet received.
    pub fn outstanding(&self) -> u32 {
        self.granted.saturating_sub(self.received())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Packets in any order, any of them repeated, overlapping or not:
        /// the message comes out whole, counted once, with no gaps left.
        #[test]
        fn any_arrival_order_with_duplicates_reassembles_the_message(
            length in 1u32..20_000,
            cut in 1u32..3_000,
            order in proptest::collection::vec(any::<prop::sample::Index>(), 1..60),
            extra in proptest::collection::vec((any::<prop::sample::Index>(), 1u32..4_000), 0..10),
        ) {
            let data: Vec<u8> = (0..length).map(|i| (i * 7 + 3) as u8).collect();
            let mut pieces: Vec<(u32, u32)> = (0..length.div_ceil(cut))
                .map(|k| (k * cut, ((k + 1) * cut).min(length)))
                .collect();
            // Overlapping extras, as a retransmission cut differently would be.
            for (at, len) in &extra {
                let s = at.index(length as usize) as u32;
                pieces.push((s, (s + len).min(length)));
            }
            let mut sequence: Vec<(u32, u32)> = order.iter().map(|i| pieces[i.index(pieces.len())]).collect();
            sequence.extend(pieces.iter().copied());
            let mut m = MessageIn::new(length, length, 0);
            let mut new_total = 0;
            for (s, e) in sequence {
                let before = m.bytes_remaining;
                match m.accept(s, &data[s as usize..e as usize]) {
                    Accepted::New(n) => {
                        prop_assert_eq!(before - m.bytes_remaining, n);
                        new_total += n;
                    }
                    Accepted::Duplicate => prop_assert_eq!(before, m.bytes_remaining),
                }
                prop_assert!(m.gaps.windows(2).all(|w| w[0].1 < w[1].0));
                prop_assert!(m.gaps.iter().all(|g| g.0 < g.1 && g.1 <= m.recv_end));
            }
            prop_assert_eq!(new_total, length);
            prop_assert_eq!(m.bytes_remaining, 0);
            prop_assert!(m.gaps.is_empty());
            prop_assert_eq!(m.buffer, data);
        }
    }

    #[test]
    fn reassembles_out_of_order_and_ignores_duplicates() {
        let data: Vec<u8> = (0..100u8).collect();
        let mut m = MessageIn::new(100, 100, 0);
        assert_eq!(m.accept(40, &data[40..60]), Accepted::New(20));
        assert_eq!(m.gaps, vec![(0, 40)]);
        assert_eq!(m.accept(40, &data[40..60]), Accepted::Duplicate);
        assert_eq!(m.accept(10, &data[10..20]), Accepted::New(10));
        assert_eq!(m.gaps, vec![(0, 10), (20, 40)]);
        assert_eq!(m.missing_granted(), vec![(0, 10), (20, 40), (60, 100)]);
        assert_eq!(m.accept(0, &data[0..100]), Accepted::New(70));
        assert!(m.gaps.is_empty());
        assert_eq!(m.bytes_remaining, 0);
        assert_eq!(m.buffer, data);
    }
}

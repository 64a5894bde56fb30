//! A FIFO for any valid/ready stream: `DEPTH` (32) entries of a `W`-bit
//! payload in one RAM, an `s_ready` from registers (no path from `m_ready`),
//! a beat in and a beat out every cycle.
//!
//! Why it exists: a `RegisterSlice` cuts a timing path but holds only two
//! beats, so a producer that works in bursts can only go as fast as its
//! consumer does at the same moment. The RX engine writes a packet's payload
//! a beat a cycle and then spends cycles on the next header, writing
//! nothing; the PCIe write link takes 50 bytes a cycle and banks nothing
//! while idle. Behind a slice the two add up (about 35 cycles per MTU
//! packet, more than its 30.76 on the wire, and the RX FIFO overflowed at
//! line rate); behind this FIFO they overlap: the link drains the packet's
//! beats while the engine is on the next header.
//!
//! DESIGN NOTES
//! ------------
//! The RAM reads are registered, and a read of the address being written
//! returns the old data. So the read address is the next cycle's read
//! pointer (`rd_next`: `rd`, plus one on a pop), and `m_data` is the RAM's
//! output for `rd`; an entry is shown only from the second cycle after its
//! write (`wr_seen` is `wr` one cycle late), when a read has picked it up.
//! The price is two cycles of latency through an empty FIFO. `full` and
//! `s_ready` come from the pointers (registers) only.

use rust_hdl::prelude::*;

/// Address bits of the RAM: `DEPTH` = 2^5 entries.
const ADDR_BITS: usize = 5;
/// Pointers carry one more bit, to tell full from empty.
const PTR_BITS: usize = ADDR_BITS + 1;
/// Entries.
pub const DEPTH: u64 = 1 << ADDR_BITS;

#[derive(LogicBlock)]
pub struct StreamFifo<const W: usize> {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: empty.
    pub reset: Signal<In, bool>,
    pub s_valid: Signal<In, bool>,
    /// From registers: high while an entry is free.
    pub s_ready: Signal<Out, bool>,
    pub s_data: Signal<In, Bits<W>>,
    pub m_valid: Signal<Out, bool>,
    pub m_ready: Signal<In, bool>,
    pub m_data: Signal<Out, Bits<W>>,
    /// From registers: beats are held, shown or not yet (for an arbiter
    /// that must not let anything pass them).
    pub holding: Signal<Out, bool>,
    entries: RAM<Bits<W>, ADDR_BITS>,
    /// Where the next beat goes / the oldest beat is (with wrap bits).
    wr: DFF<Bits<PTR_BITS>>,
    rd: DFF<Bits<PTR_BITS>>,
    /// `wr` a cycle ago: entries below it can be read.
    wr_seen: DFF<Bits<PTR_BITS>>,
    rd_next: Signal<Local, Bits<PTR_BITS>>,
    occupancy: Signal<Local, Bits<PTR_BITS>>,
    push: Signal<Local, bool>,
    depth: Constant<Bits<PTR_BITS>>,
}

impl<const W: usize> Default for StreamFifo<W> {
    fn default() -> Self {
        StreamFifo {
            clock: Default::default(),
            reset: Default::default(),
            s_valid: Default::default(),
            s_ready: Default::default(),
            s_data: Default::default(),
            m_valid: Default::default(),
            m_ready: Default::default(),
            m_data: Default::default(),
            holding: Default::default(),
            entries: Default::default(),
            wr: Default::default(),
            rd: Default::default(),
            wr_seen: Default::default(),
            rd_next: Default::default(),
            occupancy: Default::default(),
            push: Default::default(),
            depth: Constant::new(DEPTH.to_bits()),
        }
    }
}

impl<const W: usize> Logic for StreamFifo<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, wr, rd, wr_seen);
        self.entries.read_clock.next = self.clock.val();
        self.entries.write_clock.next = self.clock.val();
        self.wr_seen.d.next = self.wr.q.val();

        self.occupancy.next = self.wr.q.val() - self.rd.q.val();
        self.s_ready.next = self.occupancy.val() != self.depth.val();
        self.push.next = self.s_valid.val() & self.s_ready.val();
        self.entries.write_address.next = self.wr.q.val().get_bits::<ADDR_BITS>(0);
        self.entries.write_data.next = self.s_data.val();
        self.entries.write_enable.next = self.push.val();
        if self.push.val() {
            self.wr.d.next = self.wr.q.val() + 1;
        }

        self.holding.next = self.occupancy.val() != 0;
        self.m_valid.next = self.rd.q.val() != self.wr_seen.q.val();
        self.m_data.next = self.entries.read_data.val();
        self.rd_next.next = self.rd.q.val();
        if self.m_valid.val() & self.m_ready.val() {
            self.rd_next.next = self.rd.q.val() + 1;
        }
        self.rd.d.next = self.rd_next.val();
        self.entries.read_address.next = self.rd_next.val().get_bits::<ADDR_BITS>(0);

        if self.reset.val() {
            self.wr.d.next = 0.into();
            self.rd.d.next = 0.into();
            self.wr_seen.d.next = 0.into();
            self.entries.write_enable.next = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    fn tick(s: &mut StreamFifo<16>) {
        for level in [false, true, false] {
            s.clock.next = level.into();
            assert!(simulate(s, 100), "logic did not converge");
        }
    }

    /// xorshift64: random handshakes without a dependency.
    fn next(x: &mut u64) -> u64 {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    }

    /// Random `s_valid` and `m_ready` against a queue of what went in: every
    /// beat comes out once, in order; `s_ready` is low exactly when `DEPTH`
    /// beats are held; a beat written is shown two cycles later. Returns
    /// (beats through, cycles with both sides willing and nothing moving).
    fn run(cycles: u32, p_valid: u64, p_ready: u64, seed: u64) -> u64 {
        let mut s = StreamFifo::<16>::default();
        s.connect_all();
        s.reset.next = true;
        tick(&mut s);
        s.reset.next = false;
        let mut rng = seed;
        let mut sent = 0u64;
        let mut received = 0u64;
        // Beats in, each with the cycle it went in.
        let mut held: VecDeque<(u64, u32)> = VecDeque::new();
        for cycle in 0..cycles {
            let valid = next(&mut rng) % 100 < p_valid;
            let ready = next(&mut rng) % 100 < p_ready;
            s.s_valid.next = valid;
            s.s_data.next = (sent & 0xffff).to_bits();
            s.m_ready.next = ready;
            assert!(simulate(&mut s, 100));
            assert_eq!(
                s.s_ready.val(),
                (held.len() as u64) < DEPTH,
                "cycle {cycle}: s_ready"
            );
            assert_eq!(s.holding.val(), !held.is_empty(), "cycle {cycle}: holding");
            let visible = held.front().is_some_and(|&(_, at)| cycle >= at + 2);
            assert_eq!(s.m_valid.val(), visible, "cycle {cycle}: m_valid");
            if visible && ready {
                let (want, _) = held.pop_front().unwrap();
                assert_eq!(s.m_data.val().to_u64(), want & 0xffff, "cycle {cycle}");
                received += 1;
            }
            if valid && s.s_ready.val() {
                held.push_back((sent, cycle));
                sent += 1;
            }
            tick(&mut s);
        }
        received
    }

    #[test]
    fn random_handshakes_keep_order_and_fill_to_depth() {
        for (seed, p_valid, p_ready) in [(1, 50, 50), (2, 90, 30), (3, 30, 90), (4, 95, 95)] {
            assert!(run(4000, p_valid, p_ready, seed) > 500, "seed {seed}");
        }
    }

    #[test]
    fn both_sides_willing_is_a_beat_every_cycle() {
        assert_eq!(run(1000, 100, 100, 5), 998);
    }
}

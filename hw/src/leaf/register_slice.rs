//! A register slice for any valid/ready stream: two entries of a `W`-bit
//! payload, and an `s_ready` that comes from registers, so nothing upstream
//! depends combinationally on `m_ready`.
//!
//! Why it exists: a ready that crosses blocks combinationally (PCIe shell ->
//! arbiter -> RX engine -> RX FIFO's read address) is a long timing path on
//! the FPGA, and in simulation it is worse: RustHDL emits each block's logic
//! as one `always @(*)`, so such a path makes a loop between blocks that
//! Verilator 5.006 does not always settle within one evaluation; a stale
//! ready then let the RX FIFO drop a beat the DMA port had refused (seen in
//! hw-sim/tests/card_rpc.rs). Registering the ready cuts the path. The
//! price is one cycle from `s_*` to `m_*`.
//!
//! Two entries keep one beat per cycle: with `m_ready` always high, a beat
//! goes in and one goes out every cycle. Order is kept; nothing is dropped.
//!
//! The entries are a ring (a write and a read pointer), not a shift register:
//! a beat is written once, into the entry the write pointer names, straight
//! from `s_data` (a flip-flop with an enable, no mux in front), so the path
//! from whatever computes `s_data` upstream ends here without adding a LUT
//! level. (A first version moved entry 1 into entry 0 on a pop: a 3-way mux
//! in front of entry 0, two more levels on the RX engine's address path.)
//! The way out is a 2:1 mux on `rd`, one LUT level.
//!
//! Users pack their fields into `s_data` and out of `m_data` (wiring only):
//! `DmaWriteSlice` (the DMA write port) is one.

use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct RegisterSlice<const W: usize> {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: both entries empty.
    pub reset: Signal<In, bool>,
    pub s_valid: Signal<In, bool>,
    /// From registers: high while an entry is free.
    pub s_ready: Signal<Out, bool>,
    pub s_data: Signal<In, Bits<W>>,
    pub m_valid: Signal<Out, bool>,
    pub m_ready: Signal<In, bool>,
    pub m_data: Signal<Out, Bits<W>>,
    /// Entry 0 / 1 holds a beat.
    valid0: DFF<bool>,
    valid1: DFF<bool>,
    data0: DFF<Bits<W>>,
    data1: DFF<Bits<W>>,
    /// The entry the next beat goes into / the oldest beat is in.
    wr: DFF<bool>,
    rd: DFF<bool>,
    pop: Signal<Local, bool>,
    push: Signal<Local, bool>,
}

impl<const W: usize> Logic for RegisterSlice<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, valid0, valid1, data0, data1, wr, rd);
        self.s_ready.next = !(self.valid0.q.val() & self.valid1.q.val());
        self.m_valid.next = self.valid0.q.val();
        self.m_data.next = self.data0.q.val();
        if self.rd.q.val() {
            self.m_valid.next = self.valid1.q.val();
            self.m_data.next = self.data1.q.val();
        }
        self.pop.next = self.m_valid.val() & self.m_ready.val();
        self.push.next = self.s_valid.val() & self.s_ready.val();
        if self.pop.val() {
            self.rd.d.next = !self.rd.q.val();
            if self.rd.q.val() {
                self.valid1.d.next = false;
            } else {
                self.valid0.d.next = false;
            }
        }
        // A push goes into a free entry (s_ready), never the one popped.
        if self.push.val() {
            self.wr.d.next = !self.wr.q.val();
            if self.wr.q.val() {
                self.valid1.d.next = true;
                self.data1.d.next = self.s_data.val();
            } else {
                self.valid0.d.next = true;
                self.data0.d.next = self.s_data.val();
            }
        }
        if self.reset.val() {
            self.valid0.d.next = false;
            self.valid1.d.next = false;
            self.wr.d.next = false;
            self.rd.d.next = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// One clock cycle of RustHDL's simulation: inputs settle, rising edge,
    /// falling edge.
    fn tick(s: &mut RegisterSlice<16>) {
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
    /// beat comes out once, in order; `s_ready` is high exactly while fewer
    /// than two beats are held (so it depends on registers only); and with
    /// both sides always willing, a beat goes through every cycle.
    fn run(cycles: u32, p_valid: u64, p_ready: u64, seed: u64) -> (u32, u32) {
        let mut s = RegisterSlice::<16>::default();
        s.connect_all();
        s.reset.next = true;
        tick(&mut s);
        s.reset.next = false;
        let mut rng = seed;
        let (mut sent, mut received) = (0u64, 0u64);
        let mut held: VecDeque<u64> = VecDeque::new();
        for cycle in 0..cycles {
            let valid = next(&mut rng) % 100 < p_valid;
            let ready = next(&mut rng) % 100 < p_ready;
            s.s_valid.next = valid;
            s.s_data.next = (sent & 0xffff).to_bits();
            s.m_ready.next = ready;
            assert!(simulate(&mut s, 100));
            assert_eq!(s.s_ready.val(), held.len() < 2, "cycle {cycle}: s_ready");
            assert_eq!(s.m_valid.val(), !held.is_empty(), "cycle {cycle}: m_valid");
            if s.m_valid.val() && ready {
                let want = held.pop_front().unwrap();
                assert_eq!(s.m_data.val().to_u64(), want, "cycle {cycle}: order");
                received += 1;
            }
            if valid && s.s_ready.val() {
                held.push_back(sent & 0xffff);
                sent += 1;
            }
            tick(&mut s);
        }
        (sent as u32, received as u32)
    }

    #[test]
    fn random_handshakes_lose_nothing_and_keep_order() {
        for (seed, p_valid, p_ready) in [(1, 50, 50), (2, 90, 30), (3, 30, 90), (4, 95, 95)] {
            let (sent, received) = run(4_000, p_valid, p_ready, seed);
            assert!(
                sent > 500 && received + 2 >= sent,
                "{sent} in, {received} out"
            );
        }
    }

    #[test]
    fn both_sides_always_willing_pass_a_beat_every_cycle() {
        let (sent, received) = run(1_000, 100, 100, 5);
        assert_eq!(
            (sent, received),
            (1_000, 999),
            "one cycle through the slice"
        );
    }
}

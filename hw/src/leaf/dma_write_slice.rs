//! A register slice for the DMA write port: two entries, and a `s_ready` that
//! comes from a register, so nothing upstream depends combinationally on the
//! port's `m_ready`.
//!
//! Why it exists: a ready that crosses several blocks combinationally (PCIe
//! shell -> arbiter -> RX engine -> RX FIFO's read address) is a long timing
//! path on the FPGA, and in simulation it is worse: RustHDL emits each block's
//! logic as one `always @(*)`, so such a path makes a loop between blocks that
//! Verilator 5.006 does not always settle within one evaluation; a stale ready
//! then let the RX FIFO drop a beat the DMA port had refused (seen in
//! hw-sim/tests/card_rpc.rs). Registering the ready cuts the path.
//!
//! Two entries keep one beat per cycle: with the port always ready, a beat
//! goes in and one goes out every cycle. Order is kept; nothing is dropped.
//!
//! The entries are a ring (a write and a read pointer), not a shift register:
//! a beat is written once, into the entry the write pointer names, straight
//! from `s_*` (a flip-flop with an enable, no mux in front), so the path from
//! whatever computes `s_addr` upstream ends here without adding a LUT level.
//! (The first version moved entry 1 into entry 0 on a pop: a 3-way mux in
//! front of entry 0, two more levels on the RX engine's address path.)

use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct DmaWriteSlice {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: both entries empty.
    pub reset: Signal<In, bool>,
    pub s_valid: Signal<In, bool>,
    /// From registers: high while an entry is free.
    pub s_ready: Signal<Out, bool>,
    pub s_addr: Signal<In, Bits<64>>,
    pub s_data: Signal<In, Bits<512>>,
    pub s_strb: Signal<In, Bits<64>>,
    pub s_last: Signal<In, bool>,
    pub m_valid: Signal<Out, bool>,
    pub m_ready: Signal<In, bool>,
    pub m_addr: Signal<Out, Bits<64>>,
    pub m_data: Signal<Out, Bits<512>>,
    pub m_strb: Signal<Out, Bits<64>>,
    pub m_last: Signal<Out, bool>,
    /// Entry 0 / 1 holds a beat.
    valid0: DFF<bool>,
    valid1: DFF<bool>,
    addr0: DFF<Bits<64>>,
    addr1: DFF<Bits<64>>,
    data0: DFF<Bits<512>>,
    data1: DFF<Bits<512>>,
    strb0: DFF<Bits<64>>,
    strb1: DFF<Bits<64>>,
    last0: DFF<bool>,
    last1: DFF<bool>,
    /// The entry the next beat goes into / the oldest beat is in.
    wr: DFF<bool>,
    rd: DFF<bool>,
    pop: Signal<Local, bool>,
    push: Signal<Local, bool>,
}

impl Logic for DmaWriteSlice {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, valid0, valid1, addr0, addr1, data0, data1, strb0, strb1, last0, last1,
            wr, rd
        );
        self.s_ready.next = !(self.valid0.q.val() & self.valid1.q.val());
        self.m_valid.next = self.valid0.q.val();
        self.m_addr.next = self.addr0.q.val();
        self.m_data.next = self.data0.q.val();
        self.m_strb.next = self.strb0.q.val();
        self.m_last.next = self.last0.q.val();
        if self.rd.q.val() {
            self.m_valid.next = self.valid1.q.val();
            self.m_addr.next = self.addr1.q.val();
            self.m_data.next = self.data1.q.val();
            self.m_strb.next = self.strb1.q.val();
            self.m_last.next = self.last1.q.val();
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
                self.addr1.d.next = self.s_addr.val();
                self.data1.d.next = self.s_data.val();
                self.strb1.d.next = self.s_strb.val();
                self.last1.d.next = self.s_last.val();
            } else {
                self.valid0.d.next = true;
                self.addr0.d.next = self.s_addr.val();
                self.data0.d.next = self.s_data.val();
                self.strb0.d.next = self.s_strb.val();
                self.last0.d.next = self.s_last.val();
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

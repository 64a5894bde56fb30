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

use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct DmaWriteSlice {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: both entries empty.
    pub reset: Signal<In, bool>,
    pub s_valid: Signal<In, bool>,
    /// From a register: high when the second entry is free.
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
    pop: Signal<Local, bool>,
    push: Signal<Local, bool>,
}

impl Logic for DmaWriteSlice {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, valid0, valid1, addr0, addr1, data0, data1, strb0, strb1, last0, last1
        );
        self.s_ready.next = !self.valid1.q.val();
        self.m_valid.next = self.valid0.q.val();
        self.m_addr.next = self.addr0.q.val();
        self.m_data.next = self.data0.q.val();
        self.m_strb.next = self.strb0.q.val();
        self.m_last.next = self.last0.q.val();
        self.pop.next = self.valid0.q.val() & self.m_ready.val();
        self.push.next = self.s_valid.val() & !self.valid1.q.val();
        if self.pop.val() {
            // Entry 1 (possibly empty) moves up.
            self.valid0.d.next = self.valid1.q.val();
            self.addr0.d.next = self.addr1.q.val();
            self.data0.d.next = self.data1.q.val();
            self.strb0.d.next = self.strb1.q.val();
            self.last0.d.next = self.last1.q.val();
            self.valid1.d.next = false;
        }
        if self.push.val() {
            if self.pop.val() | !self.valid0.q.val() {
                // Entry 1 is empty here (push needs it free): the new beat is next out.
                self.valid0.d.next = true;
                self.addr0.d.next = self.s_addr.val();
                self.data0.d.next = self.s_data.val();
                self.strb0.d.next = self.s_strb.val();
                self.last0.d.next = self.s_last.val();
            } else {
                self.valid1.d.next = true;
                self.addr1.d.next = self.s_addr.val();
                self.data1.d.next = self.s_data.val();
                self.strb1.d.next = self.s_strb.val();
                self.last1.d.next = self.s_last.val();
            }
        }
        if self.reset.val() {
            self.valid0.d.next = false;
            self.valid1.d.next = false;
        }
    }
}

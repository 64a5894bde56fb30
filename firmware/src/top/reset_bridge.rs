//! Reset for logic that spans two clock domains (the crossing FIFOs): a
//! request in either domain resets both sides, each in its own clock, and
//! each side stays in reset for 31 cycles of its clock after the last request
//! it sees, so the two resets overlap. Requests must come from registers.

use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct ResetBridge {
    pub a_clock: Signal<In, Clock>,
    pub a_req: Signal<In, bool>,
    pub a_reset: Signal<Out, bool>,
    pub b_clock: Signal<In, Clock>,
    pub b_req: Signal<In, bool>,
    pub b_reset: Signal<Out, bool>,
    a_sync1: DFF<bool>,
    a_sync2: DFF<bool>,
    a_count: DFF<Bits<5>>,
    b_sync1: DFF<bool>,
    b_sync2: DFF<bool>,
    b_count: DFF<Bits<5>>,
}

impl Logic for ResetBridge {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, a_clock, a_sync1, a_sync2, a_count);
        dff_setup!(self, b_clock, b_sync1, b_sync2, b_count);
        self.a_sync1.d.next = self.b_req.val();
        self.a_sync2.d.next = self.a_sync1.q.val();
        if self.a_req.val() | self.a_sync2.q.val() {
            self.a_count.d.next = 31.into();
        } else if self.a_count.q.val() != 0 {
            self.a_count.d.next = self.a_count.q.val() - 1;
        }
        self.a_reset.next = self.a_req.val() | self.a_sync2.q.val() | (self.a_count.q.val() != 0);
        self.b_sync1.d.next = self.a_req.val();
        self.b_sync2.d.next = self.b_sync1.q.val();
        if self.b_req.val() | self.b_sync2.q.val() {
            self.b_count.d.next = 31.into();
        } else if self.b_count.q.val() != 0 {
            self.b_count.d.next = self.b_count.q.val() - 1;
        }
        self.b_reset.next = self.b_req.val() | self.b_sync2.q.val() | (self.b_count.q.val() != 0);
    }
}

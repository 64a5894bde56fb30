//! The DMA write port's fields through a `RegisterSlice`: a `s_ready` from
//! registers, so nothing upstream depends combinationally on the port's
//! `m_ready` (why that matters: `register_slice`). The fields are packed
//! into one payload and out again, wiring only.

use rust_hdl::prelude::*;

use crate::leaf::register_slice::RegisterSlice;

/// Payload bits: addr [63:0], data [575:64], strb [639:576], last [640]
/// (also `DmaWriteFifo`'s).
pub const W: usize = 64 + 512 + 64 + 1;

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
    slice: RegisterSlice<W>,
}

impl Logic for DmaWriteSlice {
    #[hdl_gen]
    fn update(&mut self) {
        self.slice.clock.next = self.clock.val();
        self.slice.reset.next = self.reset.val();
        self.slice.s_valid.next = self.s_valid.val();
        self.s_ready.next = self.slice.s_ready.val();
        self.slice.s_data.next = bit_cast::<W, 64>(self.s_addr.val())
            | (bit_cast::<W, 512>(self.s_data.val()) << 64)
            | (bit_cast::<W, 64>(self.s_strb.val()) << 576)
            | (bit_cast::<W, 1>(self.s_last.val().into()) << 640);
        self.m_valid.next = self.slice.m_valid.val();
        self.slice.m_ready.next = self.m_ready.val();
        self.m_addr.next = self.slice.m_data.val().get_bits::<64>(0);
        self.m_data.next = self.slice.m_data.val().get_bits::<512>(64);
        self.m_strb.next = self.slice.m_data.val().get_bits::<64>(576);
        self.m_last.next = self.slice.m_data.val().get_bit(640);
    }
}

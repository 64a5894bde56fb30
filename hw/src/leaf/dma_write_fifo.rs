//! The DMA write port's fields through a `StreamFifo` (32 beats): room for
//! a burst of writes while the port drains slower (why: `stream_fifo`), and
//! an `s_ready` from registers. The fields are packed as `DmaWriteSlice`
//! packs them, wiring only.

use rust_hdl::prelude::*;

use crate::leaf::dma_write_slice::W;
use crate::leaf::stream_fifo::StreamFifo;

#[derive(LogicBlock, Default)]
pub struct DmaWriteFifo {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: empty.
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
    /// Beats are held, shown on `m_*` or not yet (see `StreamFifo`).
    pub holding: Signal<Out, bool>,
    fifo: StreamFifo<W>,
}

impl Logic for DmaWriteFifo {
    #[hdl_gen]
    fn update(&mut self) {
        self.fifo.clock.next = self.clock.val();
        self.fifo.reset.next = self.reset.val();
        self.fifo.s_valid.next = self.s_valid.val();
        self.s_ready.next = self.fifo.s_ready.val();
        self.fifo.s_data.next = bit_cast::<W, 64>(self.s_addr.val())
            | (bit_cast::<W, 512>(self.s_data.val()) << 64)
            | (bit_cast::<W, 64>(self.s_strb.val()) << 576)
            | (bit_cast::<W, 1>(self.s_last.val().into()) << 640);
        self.m_valid.next = self.fifo.m_valid.val();
        self.holding.next = self.fifo.holding.val();
        self.fifo.m_ready.next = self.m_ready.val();
        self.m_addr.next = self.fifo.m_data.val().get_bits::<64>(0);
        self.m_data.next = self.fifo.m_data.val().get_bits::<512>(64);
        self.m_strb.next = self.fifo.m_data.val().get_bits::<64>(576);
        self.m_last.next = self.fifo.m_data.val().get_bit(640);
    }
}

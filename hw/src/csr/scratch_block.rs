//! The scratch register block: one read/write word and its complement,
//! for bring-up and for tests that prove CSR writes and reads both work.

use rust_hdl::prelude::*;

use crate::csr::RegisterBlockHeader;
use crate::regmap::{block_type, scratch};

#[derive(LogicBlock)]
pub struct ScratchBlock {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: SCRATCH returns to 0.
    pub reset: Signal<In, bool>,
    /// Byte offset within the block.
    pub offset: Signal<In, Bits<8>>,
    /// High when the CSR address falls inside this block.
    pub select: Signal<In, bool>,
    pub wr_en: Signal<In, bool>,
    pub wr_data: Signal<In, Bits<32>>,
    /// The addressed register, or 0 when not selected.
    pub rd_data: Signal<Out, Bits<32>>,
    header: RegisterBlockHeader,
    value: DFF<Bits<32>>,
    offset_scratch: Constant<Bits<8>>,
    offset_scratch_inverted: Constant<Bits<8>>,
}

impl Default for ScratchBlock {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            offset: Default::default(),
            select: Default::default(),
            wr_en: Default::default(),
            wr_data: Default::default(),
            rd_data: Default::default(),
            header: RegisterBlockHeader::new(block_type::SCRATCH, scratch::VERSION, scratch::BASE),
            value: Default::default(),
            offset_scratch: Constant::new(scratch::SCRATCH.to_bits()),
            offset_scratch_inverted: Constant::new(scratch::SCRATCH_INVERTED.to_bits()),
        }
    }
}

impl Logic for ScratchBlock {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, value);
        self.header.offset.next = self.offset.val();
        self.header.select.next = self.select.val();
        if self.select.val() & self.wr_en.val() & (self.offset.val() == self.offset_scratch.val()) {
            self.value.d.next = self.wr_data.val();
        }
        if self.reset.val() {
            self.value.d.next = 0.into();
        }
        self.rd_data.next = self.header.rd_data.val();
        if self.select.val() {
            if self.offset.val() == self.offset_scratch.val() {
                self.rd_data.next = self.value.q.val();
            }
            if self.offset.val() == self.offset_scratch_inverted.val() {
                self.rd_data.next = !self.value.q.val();
            }
        }
    }
}

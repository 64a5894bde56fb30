//! The ID register block: design version and build options, read-only.
//! The driver reads it first to decide whether it can drive this bitstream.

use rust_hdl::prelude::*;

use crate::csr::RegisterBlockHeader;
use crate::regmap::{block_type, id};
use crate::CoreConfig;

#[derive(LogicBlock)]
pub struct IdBlock {
    /// Byte offset within the block.
    pub offset: Signal<In, Bits<8>>,
    /// High when the CSR address falls inside this block.
    pub select: Signal<In, bool>,
    /// The addressed register, or 0 when not selected.
    pub rd_data: Signal<Out, Bits<32>>,
    header: RegisterBlockHeader,
    design_version: Constant<Bits<32>>,
    clock_khz: Constant<Bits<32>>,
    datapath_bits: Constant<Bits<32>>,
    wire_format: Constant<Bits<32>>,
    offset_design_version: Constant<Bits<8>>,
    offset_clock_khz: Constant<Bits<8>>,
    offset_datapath_bits: Constant<Bits<8>>,
    offset_wire_format: Constant<Bits<8>>,
}

impl IdBlock {
    pub fn new(config: &CoreConfig) -> Self {
        Self {
            offset: Default::default(),
            select: Default::default(),
            rd_data: Default::default(),
            header: RegisterBlockHeader::new(block_type::ID, id::VERSION, id::BASE),
            design_version: Constant::new(config.design_version.to_bits()),
            clock_khz: Constant::new(config.clock_khz.to_bits()),
            datapath_bits: Constant::new(config.datapath_bits.to_bits()),
            wire_format: Constant::new(id::WIRE_FORMAT_2025_07.to_bits()),
            offset_design_version: Constant::new(id::DESIGN_VERSION.to_bits()),
            offset_clock_khz: Constant::new(id::CLOCK_KHZ.to_bits()),
            offset_datapath_bits: Constant::new(id::DATAPATH_BITS.to_bits()),
            offset_wire_format: Constant::new(id::WIRE_FORMAT.to_bits()),
        }
    }
}

impl Logic for IdBlock {
    #[hdl_gen]
    fn update(&mut self) {
        self.header.offset.next = self.offset.val();
        self.header.select.next = self.select.val();
        self.rd_data.next = self.header.rd_data.val();
        if self.select.val() {
            if self.offset.val() == self.offset_design_version.val() {
                self.rd_data.next = self.design_version.val();
            }
            if self.offset.val() == self.offset_clock_khz.val() {
                self.rd_data.next = self.clock_khz.val();
            }
            if self.offset.val() == self.offset_datapath_bits.val() {
                self.rd_data.next = self.datapath_bits.val();
            }
            if self.offset.val() == self.offset_wire_format.val() {
                self.rd_data.next = self.wire_format.val();
            }
        }
    }
}

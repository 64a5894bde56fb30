//! The register blocks the host reads and writes through the BAR (one file
//! each), and the pieces every register block shares: the CSR port of a block and the
//! three-word header of the register-block list (see `regmap`).
//!
//! A block sees its own word-aligned `offset` (the low 8 address bits), a
//! `select` that the core's decoder raises when the address falls in the block,
//! and returns `rd_data` combinationally: zero when not selected, so the core
//! ORs the blocks' outputs together and registers the result.

pub mod endpoint_block;
pub mod grant_block;
pub mod id_block;
pub mod interface_block;
pub mod interrupt_block;
pub mod scratch_block;
pub mod timer_block;
pub mod tunables;

use rust_hdl::prelude::*;

/// The type / version / next-pointer words at the start of every block.
#[derive(LogicBlock)]
pub struct RegisterBlockHeader {
    /// Byte offset within the block.
    pub offset: Signal<In, Bits<8>>,
    /// High when the CSR address falls inside this block.
    pub select: Signal<In, bool>,
    /// The addressed header word, or 0 when not selected or not a header word.
    pub rd_data: Signal<Out, Bits<32>>,
    block_type: Constant<Bits<32>>,
    version: Constant<Bits<32>>,
    next: Constant<Bits<32>>,
    offset_type: Constant<Bits<8>>,
    offset_version: Constant<Bits<8>>,
    offset_next: Constant<Bits<8>>,
}

impl RegisterBlockHeader {
    /// The header of the block at `base` in `regmap::BLOCKS`.
    pub fn new(block_type: u32, version: u32, base: u32) -> Self {
        use crate::regmap::{header, next_block};
        Self {
            offset: Default::default(),
            select: Default::default(),
            rd_data: Default::default(),
            block_type: Constant::new(block_type.to_bits()),
            version: Constant::new(version.to_bits()),
            next: Constant::new(next_block(base).to_bits()),
            offset_type: Constant::new(header::TYPE.to_bits()),
            offset_version: Constant::new(header::VERSION.to_bits()),
            offset_next: Constant::new(header::NEXT.to_bits()),
        }
    }
}

impl Logic for RegisterBlockHeader {
    #[hdl_gen]
    fn update(&mut self) {
        self.rd_data.next = 0.into();
        if self.select.val() {
            if self.offset.val() == self.offset_type.val() {
                self.rd_data.next = self.block_type.val();
            }
            if self.offset.val() == self.offset_version.val() {
                self.rd_data.next = self.version.val();
            }
            if self.offset.val() == self.offset_next.val() {
                self.rd_data.next = self.next.val();
            }
        }
    }
}

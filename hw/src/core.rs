//! The top level of the Homa transport core: what sits between the PCIe DMA
//! shell and the 100G MAC on the card, and what hw-sim drives in simulation.
//!
//! Today it holds the CSR decoder and the first register blocks; the datapath
//! blocks join it as they land. Top-level ports stay scalar (Verilator mangles
//! the `$` in RustHDL's names of nested signals).
//!
//! CSR protocol: the host raises `csr_rd_en` or `csr_wr_en` for one cycle with
//! `csr_addr` (a byte address, word aligned). A write takes effect at that
//! clock edge. A read answers exactly one cycle later with `csr_rd_valid` high
//! and `csr_rd_data`; an address no block claims reads as 0, so no read hangs.

use rust_hdl::prelude::*;

use crate::id_block::IdBlock;
use crate::regmap::{self, CSR_ADDR_BITS};
use crate::scratch_block::ScratchBlock;
use crate::CoreConfig;

#[derive(LogicBlock)]
pub struct HomaCore {
    /// Core clock (250 MHz on the card).
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high.
    pub reset: Signal<In, bool>,
    /// CSR byte address.
    pub csr_addr: Signal<In, Bits<CSR_ADDR_BITS>>,
    pub csr_wr_data: Signal<In, Bits<32>>,
    pub csr_wr_en: Signal<In, bool>,
    pub csr_rd_en: Signal<In, bool>,
    /// Valid when `csr_rd_valid` is high.
    pub csr_rd_data: Signal<Out, Bits<32>>,
    /// High for one cycle, the cycle after `csr_rd_en`.
    pub csr_rd_valid: Signal<Out, bool>,
    id: IdBlock,
    scratch: ScratchBlock,
    /// Address bits above the block offset: which block is addressed.
    csr_page: Signal<Local, Bits<16>>,
    id_page: Constant<Bits<16>>,
    scratch_page: Constant<Bits<16>>,
    rd_data: DFF<Bits<32>>,
    rd_valid: DFF<bool>,
}

impl HomaCore {
    pub fn new(config: &CoreConfig) -> Self {
        let page = |base: u32| Constant::new((base / regmap::BLOCK_SPAN).to_bits());
        Self {
            clock: Default::default(),
            reset: Default::default(),
            csr_addr: Default::default(),
            csr_wr_data: Default::default(),
            csr_wr_en: Default::default(),
            csr_rd_en: Default::default(),
            csr_rd_data: Default::default(),
            csr_rd_valid: Default::default(),
            id: IdBlock::new(config),
            scratch: Default::default(),
            csr_page: Default::default(),
            id_page: page(regmap::id::BASE),
            scratch_page: page(regmap::scratch::BASE),
            rd_data: Default::default(),
            rd_valid: Default::default(),
        }
    }
}

impl Logic for HomaCore {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, rd_data, rd_valid);
        self.scratch.clock.next = self.clock.val();
        self.scratch.reset.next = self.reset.val();

        self.csr_page.next = self.csr_addr.val().get_bits::<16>(8);
        self.id.offset.next = self.csr_addr.val().get_bits::<8>(0);
        self.id.select.next = self.csr_page.val() == self.id_page.val();
        self.scratch.offset.next = self.csr_addr.val().get_bits::<8>(0);
        self.scratch.select.next = self.csr_page.val() == self.scratch_page.val();
        self.scratch.wr_en.next = self.csr_wr_en.val();
        self.scratch.wr_data.next = self.csr_wr_data.val();

        self.rd_data.d.next = self.id.rd_data.val() | self.scratch.rd_data.val();
        self.rd_valid.d.next = self.csr_rd_en.val() & !self.reset.val();
        self.csr_rd_data.next = self.rd_data.q.val();
        self.csr_rd_valid.next = self.rd_valid.q.val();
    }
}

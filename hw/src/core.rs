//! The top level of the Homa transport core: what sits between the PCIe DMA
//! shell and the 100G MAC on the card, and what hw-sim drives in simulation.
//!
//! Today it holds the CSR decoder, the ID and scratch blocks, and the start of
//! the RX path: every received frame is parsed and counted by verdict; the
//! rest of the datapath joins as it lands. Top-level ports stay scalar (Verilator mangles
//! the `$` in RustHDL's names of nested signals).
//!
//! CSR protocol: the host raises `csr_rd_en` or `csr_wr_en` for one cycle with
//! `csr_addr` (a byte address, word aligned). A write takes effect at that
//! clock edge. A read answers exactly one cycle later with `csr_rd_valid` high
//! and `csr_rd_data`; an address no block claims reads as 0, so no read hangs.

use rust_hdl::prelude::*;

use crate::id_block::IdBlock;
use crate::regmap::{self, CSR_ADDR_BITS};
use crate::rx_counters::RxCounters;
use crate::rx_parser::RxParser;
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
    /// Frames from the MAC (AXI-Stream, first byte in lane 0).
    pub s_axis_rx_tdata: Signal<In, Bits<512>>,
    pub s_axis_rx_tkeep: Signal<In, Bits<64>>,
    pub s_axis_rx_tvalid: Signal<In, bool>,
    pub s_axis_rx_tlast: Signal<In, bool>,
    pub s_axis_rx_tready: Signal<Out, bool>,
    id: IdBlock,
    scratch: ScratchBlock,
    rx_parser: RxParser,
    rx_counters: RxCounters,
    /// Address bits above the block offset: which block is addressed.
    csr_page: Signal<Local, Bits<16>>,
    id_page: Constant<Bits<16>>,
    scratch_page: Constant<Bits<16>>,
    rx_counters_page: Constant<Bits<16>>,
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
            s_axis_rx_tdata: Default::default(),
            s_axis_rx_tkeep: Default::default(),
            s_axis_rx_tvalid: Default::default(),
            s_axis_rx_tlast: Default::default(),
            s_axis_rx_tready: Default::default(),
            rx_parser: Default::default(),
            rx_counters: Default::default(),
            csr_page: Default::default(),
            id_page: page(regmap::id::BASE),
            scratch_page: page(regmap::scratch::BASE),
            rx_counters_page: page(regmap::rx_counters::BASE),
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

        // RX: parse every frame, count it by verdict.
        self.rx_parser.clock.next = self.clock.val();
        self.rx_parser.reset.next = self.reset.val();
        self.rx_parser.s_axis_tdata.next = self.s_axis_rx_tdata.val();
        self.rx_parser.s_axis_tkeep.next = self.s_axis_rx_tkeep.val();
        self.rx_parser.s_axis_tvalid.next = self.s_axis_rx_tvalid.val();
        self.rx_parser.s_axis_tlast.next = self.s_axis_rx_tlast.val();
        self.s_axis_rx_tready.next = self.rx_parser.s_axis_tready.val();
        self.rx_counters.clock.next = self.clock.val();
        self.rx_counters.reset.next = self.reset.val();
        self.rx_counters.verdict_valid.next = self.rx_parser.m_meta_valid.val();
        self.rx_counters.verdict.next = self.rx_parser.m_meta_reason.val();
        self.rx_counters.offset.next = self.csr_addr.val().get_bits::<8>(0);
        self.rx_counters.select.next = self.csr_page.val() == self.rx_counters_page.val();

        self.rd_data.d.next =
            self.id.rd_data.val() | self.scratch.rd_data.val() | self.rx_counters.rd_data.val();
        self.rd_valid.d.next = self.csr_rd_en.val() & !self.reset.val();
        self.csr_rd_data.next = self.rd_data.q.val();
        self.csr_rd_valid.next = self.rd_valid.q.val();
    }
}

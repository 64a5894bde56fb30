//! The board top levels: FPGA pins, the vendor blocks (`vendor`), and our
//! logic (`board_logic`). Two families with different extra pins:
//!
//! - HBM parts (U50, U55C, U280): `hbm_cattrip` must be driven, never floated;
//!   HBM is unused, so it is driven low (ONS and CD do the same, BOARDS.md §1.5).
//! - U200/U250: the QSFP's sideband reaches the FPGA; the module is taken out
//!   of reset and low-power mode and selected (BOARDS.md §1.3).
//!
//! PCIe: the host's BAR accesses reach the CSR port through our completer
//! (`homa_hw::pcie::completer`: CQ in, CC out), and the core's DMA ports go
//! out through our requester (`homa_hw::pcie::requester`: RQ out, RC in),
//! with the MPS and MRRS the host negotiated; the IP is built with CQ and RQ
//! straddle off and RC 2-TLP straddle on, as they take them. All of it in
//! the block's user clock domain (250 MHz), as the core. MSI-X: the IP
//! holds the capability ("MSI-X External") pointing at the table in our
//! BAR (`regmap::interrupt`); the core sends its messages itself as posted
//! writes on RQ, behind the completions they announce, and takes only the
//! enable and function mask from the block (`cfg_interrupt_msix_*`).

use rust_hdl::prelude::*;

use crate::board::Board;
use crate::regmap::BuildInfo;
use crate::top::board_logic::BoardLogic;
use crate::top::vendor::{CmacBlock, ConfigAccess, InitClock, PcieBlock};
use homa_hw::pcie::completer::PcieCompleter;
use homa_hw::pcie::requester::PcieRequester;

macro_rules! alveo_top {
    ($(#[$doc:meta])* $name:ident { $($(#[$fdoc:meta])* $field:ident = $value:tt),* }) => {
        $(#[$doc])*
        #[derive(LogicBlock)]
        pub struct $name {
            pub pcie_refclk_p: Signal<In, Clock>,
            pub pcie_refclk_n: Signal<In, Clock>,
            pub pcie_perst_n: Signal<In, bool>,
            pub pci_exp_rxp: Signal<In, Bits<16>>,
            pub pci_exp_rxn: Signal<In, Bits<16>>,
            pub pci_exp_txp: Signal<Out, Bits<16>>,
            pub pci_exp_txn: Signal<Out, Bits<16>>,
            pub sysclk_p: Signal<In, Clock>,
            pub sysclk_n: Signal<In, Clock>,
            pub qsfp0_refclk_p: Signal<In, Clock>,
            pub qsfp0_refclk_n: Signal<In, Clock>,
            pub qsfp0_rxp: Signal<In, Bits<4>>,
            pub qsfp0_rxn: Signal<In, Bits<4>>,
            pub qsfp0_txp: Signal<Out, Bits<4>>,
            pub qsfp0_txn: Signal<Out, Bits<4>>,
            $($(#[$fdoc])* pub $field: Signal<Out, bool>,)*
            pcie: PcieBlock,
            completer: PcieCompleter,
            requester: PcieRequester,
            cmac: CmacBlock,
            init: InitClock,
            cfg_access: ConfigAccess,
            shell: BoardLogic,
        }

        impl $name {
            pub fn new(board: &Board, build: &BuildInfo) -> Self {
                Self {
                    pcie_refclk_p: Default::default(),
                    pcie_refclk_n: Default::default(),
                    pcie_perst_n: Default::default(),
                    pci_exp_rxp: Default::default(),
                    pci_exp_rxn: Default::default(),
                    pci_exp_txp: Default::default(),
                    pci_exp_txn: Default::default(),
                    sysclk_p: Default::default(),
                    sysclk_n: Default::default(),
                    qsfp0_refclk_p: Default::default(),
                    qsfp0_refclk_n: Default::default(),
                    qsfp0_rxp: Default::default(),
                    qsfp0_rxn: Default::default(),
                    qsfp0_txp: Default::default(),
                    qsfp0_txn: Default::default(),
                    $($field: Default::default(),)*
                    pcie: Default::default(),
                    completer: Default::default(),
                    requester: Default::default(),
                    cmac: Default::default(),
                    init: InitClock::new(board),
                    cfg_access: Default::default(),
                    shell: BoardLogic::new(board.name, board.part, build),
                }
            }
        }

        impl Logic for $name {
            #[hdl_gen]
            fn update(&mut self) {
                // ---- PCIe: pins; BAR accesses through the completer, DMA through the requester ----
                self.pcie.refclk_p.next = self.pcie_refclk_p.val();
                self.pcie.refclk_n.next = self.pcie_refclk_n.val();
                self.pcie.perst_n.next = self.pcie_perst_n.val();
                self.pcie.rxp.next = self.pci_exp_rxp.val();
                self.pcie.rxn.next = self.pci_exp_rxn.val();
                self.pci_exp_txp.next = self.pcie.txp.val();
                self.pci_exp_txn.next = self.pcie.txn.val();
                self.requester.clock.next = self.pcie.user_clk.val();
                self.requester.reset.next = self.pcie.user_reset.val();
                self.pcie.rq_tdata.next = self.requester.s_axis_rq_tdata.val();
                self.pcie.rq_tkeep.next = self.requester.s_axis_rq_tkeep.val();
                self.pcie.rq_tlast.next = self.requester.s_axis_rq_tlast.val();
                self.pcie.rq_tuser.next = self.requester.s_axis_rq_tuser.val();
                self.pcie.rq_tvalid.next = self.requester.s_axis_rq_tvalid.val();
                // The block's four tready bits are copies (PG213).
                self.requester.s_axis_rq_tready.next = self.pcie.rq_tready.val().get_bit(0);
                self.requester.m_axis_rc_tdata.next = self.pcie.rc_tdata.val();
                self.requester.m_axis_rc_tkeep.next = self.pcie.rc_tkeep.val();
                self.requester.m_axis_rc_tlast.next = self.pcie.rc_tlast.val();
                self.requester.m_axis_rc_tuser.next = self.pcie.rc_tuser.val();
                self.requester.m_axis_rc_tvalid.next = self.pcie.rc_tvalid.val();
                self.pcie.rc_tready.next = self.requester.m_axis_rc_tready.val();
                self.requester.cfg_max_payload.next = self.pcie.cfg_max_payload.val();
                self.requester.cfg_max_read_req.next = self.pcie.cfg_max_read_req.val();
                self.completer.clock.next = self.pcie.user_clk.val();
                self.completer.reset.next = self.pcie.user_reset.val();
                self.completer.m_axis_cq_tdata.next = self.pcie.cq_tdata.val();
                self.completer.m_axis_cq_tuser.next = self.pcie.cq_tuser.val();
                self.completer.m_axis_cq_tlast.next = self.pcie.cq_tlast.val();
                self.completer.m_axis_cq_tvalid.next = self.pcie.cq_tvalid.val();
                self.pcie.cq_tready.next = self.completer.m_axis_cq_tready.val();
                self.pcie.cc_tdata.next = self.completer.s_axis_cc_tdata.val();
                self.pcie.cc_tkeep.next = self.completer.s_axis_cc_tkeep.val();
                self.pcie.cc_tlast.next = self.completer.s_axis_cc_tlast.val();
                self.pcie.cc_tuser.next = self.completer.s_axis_cc_tuser.val();
                self.pcie.cc_tvalid.next = self.completer.s_axis_cc_tvalid.val();
                // The block's four tready bits are copies (PG213).
                self.completer.s_axis_cc_tready.next = self.pcie.cc_tready.val().get_bit(0);
                self.pcie.cq_np_req.next = 3.into();

                // ---- clocks ----
                self.init.clk_p.next = self.sysclk_p.val();
                self.init.clk_n.next = self.sysclk_n.val();
                self.shell.core_clock.next = self.pcie.user_clk.val();
                self.shell.core_reset_req.next = self.pcie.user_reset.val();
                self.shell.mac_clock.next = self.cmac.usr_clk.val();
                self.shell.mac_reset_req.next =
                    self.cmac.usr_rx_reset.val() | self.cmac.usr_tx_reset.val();
                self.shell.init_clock.next = self.init.clk_125.val();
                self.shell.init_locked.next = self.init.locked.val();

                // ---- CSR from the completer; DMA to the requester ----
                self.shell.csr_addr.next = self.completer.csr_addr.val();
                self.shell.csr_wr_data.next = self.completer.csr_wr_data.val();
                self.shell.csr_wr_en.next = self.completer.csr_wr_en.val();
                self.shell.csr_rd_en.next = self.completer.csr_rd_en.val();
                self.shell.msix_enable.next = self.pcie.cfg_interrupt_msix_enable.val().get_bit(0);
                self.shell.msix_mask.next = self.pcie.cfg_interrupt_msix_mask.val().get_bit(0);
                self.completer.csr_rd_data.next = self.shell.csr_rd_data.val();
                self.completer.csr_rd_valid.next = self.shell.csr_rd_valid.val();
                self.requester.s_dma_rd_req_valid.next = self.shell.dma_rd_req_valid.val();
                self.shell.dma_rd_req_ready.next = self.requester.s_dma_rd_req_ready.val();
                self.requester.s_dma_rd_req_addr.next = self.shell.dma_rd_req_addr.val();
                self.requester.s_dma_rd_req_len.next = self.shell.dma_rd_req_len.val();
                self.requester.s_dma_rd_req_tag.next = self.shell.dma_rd_req_tag.val();
                self.shell.dma_rd_rsp_valid.next = self.requester.m_dma_rd_rsp_valid.val();
                self.requester.m_dma_rd_rsp_ready.next = self.shell.dma_rd_rsp_ready.val();
                self.shell.dma_rd_rsp_data.next = self.requester.m_dma_rd_rsp_data.val();
                self.shell.dma_rd_rsp_tag.next = self.requester.m_dma_rd_rsp_tag.val();
                self.shell.dma_rd_rsp_last.next = self.requester.m_dma_rd_rsp_last.val();
                self.shell.dma_rd_rsp_error.next = self.requester.m_dma_rd_rsp_error.val();
                self.requester.s_dma_wr_valid.next = self.shell.dma_wr_valid.val();
                self.shell.dma_wr_ready.next = self.requester.s_dma_wr_ready.val();
                self.requester.s_dma_wr_addr.next = self.shell.dma_wr_addr.val();
                self.requester.s_dma_wr_data.next = self.shell.dma_wr_data.val();
                self.requester.s_dma_wr_strb.next = self.shell.dma_wr_strb.val();
                self.requester.s_dma_wr_last.next = self.shell.dma_wr_last.val();

                // ---- MAC ----
                self.cmac.refclk_p.next = self.qsfp0_refclk_p.val();
                self.cmac.refclk_n.next = self.qsfp0_refclk_n.val();
                self.cmac.rxp.next = self.qsfp0_rxp.val();
                self.cmac.rxn.next = self.qsfp0_rxn.val();
                self.qsfp0_txp.next = self.cmac.txp.val();
                self.qsfp0_txn.next = self.cmac.txn.val();
                self.cmac.init_clk.next = self.init.clk_125.val();
                self.cmac.sys_reset.next = self.shell.cmac_sys_reset.val();
                self.shell.mac_rx_tdata.next = self.cmac.rx_tdata.val();
                self.shell.mac_rx_tkeep.next = self.cmac.rx_tkeep.val();
                self.shell.mac_rx_tlast.next = self.cmac.rx_tlast.val();
                self.shell.mac_rx_tuser.next = self.cmac.rx_tuser.val();
                self.shell.mac_rx_tvalid.next = self.cmac.rx_tvalid.val();
                self.cmac.tx_tdata.next = self.shell.mac_tx_tdata.val();
                self.cmac.tx_tkeep.next = self.shell.mac_tx_tkeep.val();
                self.cmac.tx_tlast.next = self.shell.mac_tx_tlast.val();
                self.cmac.tx_tuser.next = self.shell.mac_tx_tuser.val();
                self.cmac.tx_tvalid.next = self.shell.mac_tx_tvalid.val();
                self.shell.mac_tx_tready.next = self.cmac.tx_tready.val();
                self.shell.stat_rx_aligned.next = self.cmac.stat_rx_aligned.val();
                self.cmac.ctl_rx_enable.next = self.shell.ctl_rx_enable.val();
                self.cmac.ctl_tx_enable.next = self.shell.ctl_tx_enable.val();
                self.cmac.ctl_tx_send_rfi.next = self.shell.ctl_tx_send_rfi.val();

                // ---- ICAP and flash (the flash pins tri-stated until FLASH_CONTROL bit 1) ----
                self.cfg_access.icap_clk.next = self.init.clk_125.val();
                self.cfg_access.icap_csib.next = self.shell.icap_csib.val();
                self.cfg_access.icap_rdwrb.next = self.shell.icap_rdwrb.val();
                self.cfg_access.icap_i.next = self.shell.icap_i.val();
                self.shell.icap_avail.next = self.cfg_access.icap_avail.val();
                self.cfg_access.flash_clk.next = self.shell.flash_sck.val();
                self.cfg_access.flash_clk_ts.next = self.shell.flash_sck_ts.val();
                self.cfg_access.flash_cs_n.next = self.shell.flash_cs_n.val();
                self.cfg_access.flash_cs_ts.next = self.shell.flash_cs_ts.val();
                self.cfg_access.flash_dq_o.next = self.shell.flash_dq_o.val();
                self.cfg_access.flash_dq_ts.next = self.shell.flash_dq_ts.val();
                self.shell.flash_dq_i.next = self.cfg_access.flash_dq_i.val();

                // ---- the family's own pins: constants ----
                $(self.$field.next = $value;)*
            }
        }
    };
}

alveo_top!(
    /// U50, U55C, U280.
    AlveoHbmTop {
        /// HBM catastrophic-temperature output: driven low (HBM unused).
        hbm_cattrip = false
    }
);

alveo_top!(
    /// U200, U250.
    AlveoDdrTop {
        /// QSFP0 sideband, active-low reset: released.
        qsfp0_resetl = true,
        /// Low-power mode: off.
        qsfp0_lpmode = false,
        /// Module select, active low: selected.
        qsfp0_modsell = false
    }
);

//! The vendor's blocks on the board, as black boxes: each a RustHDL block
//! whose Verilog instantiates the primitive or IP (RustHDL `Wrapper`), with
//! the ports we drive given our names. Their modules come from Vivado (the
//! primitives) or from the IP configuration TCL (`homa_pcie`, `homa_cmac`);
//! for Verilator, firmware/standins/ has modules with the same ports.
//!
//! Port facts: PG213 (PCIe, 512-bit interface: RQ/RC/CQ/CC tuser 137/161/183/
//! 81 bits, tkeep one bit per dword, tready 4 bits on RQ and CC), PG203
//! (cmac_usplus with its GTs inside, AXI-Stream user interface, no AXI-Lite:
//! the `ctl_*` ports), UG974 (IBUFDS_GTE4, IBUFDS, MMCME4_BASE, BUFG,
//! STARTUPE3, ICAPE3). None of it has met Vivado yet.

use rust_hdl::prelude::*;

use crate::board::Board;

/// `update` of a black box: nothing to simulate (these blocks exist only on
/// the board; tests simulate what is around them).
macro_rules! black_box_logic {
    ($t:ty, [$($out:ident),*], $code:expr) => {
        impl Logic for $t {
            fn update(&mut self) {}
            fn connect(&mut self) {
                $(self.$out.connect();)*
            }
            fn hdl(&self) -> Verilog {
                Verilog::Wrapper(Wrapper { code: $code(self), cores: String::new() })
            }
        }
    };
}

/// The PCIe hard block (`homa_pcie`: pcie4_uscale_plus or pcie4c_uscale_plus,
/// configured by the IP TCL) with its reference clock buffer.
#[derive(LogicBlock, Default)]
pub struct PcieBlock {
    pub refclk_p: Signal<In, Clock>,
    pub refclk_n: Signal<In, Clock>,
    /// PERST#, active low.
    pub perst_n: Signal<In, bool>,
    pub rxp: Signal<In, Bits<16>>,
    pub rxn: Signal<In, Bits<16>>,
    pub txp: Signal<Out, Bits<16>>,
    pub txn: Signal<Out, Bits<16>>,
    /// 250 MHz, the core's clock.
    pub user_clk: Signal<Out, Clock>,
    pub user_reset: Signal<Out, bool>,
    pub user_lnk_up: Signal<Out, bool>,
    pub rq_tdata: Signal<In, Bits<512>>,
    pub rq_tkeep: Signal<In, Bits<16>>,
    pub rq_tlast: Signal<In, bool>,
    pub rq_tuser: Signal<In, Bits<137>>,
    pub rq_tvalid: Signal<In, bool>,
    pub rq_tready: Signal<Out, Bits<4>>,
    pub rc_tdata: Signal<Out, Bits<512>>,
    pub rc_tkeep: Signal<Out, Bits<16>>,
    pub rc_tlast: Signal<Out, bool>,
    pub rc_tuser: Signal<Out, Bits<161>>,
    pub rc_tvalid: Signal<Out, bool>,
    pub rc_tready: Signal<In, bool>,
    pub cq_tdata: Signal<Out, Bits<512>>,
    pub cq_tkeep: Signal<Out, Bits<16>>,
    pub cq_tlast: Signal<Out, bool>,
    pub cq_tuser: Signal<Out, Bits<183>>,
    pub cq_tvalid: Signal<Out, bool>,
    pub cq_tready: Signal<In, bool>,
    pub cc_tdata: Signal<In, Bits<512>>,
    pub cc_tkeep: Signal<In, Bits<16>>,
    pub cc_tlast: Signal<In, bool>,
    pub cc_tuser: Signal<In, Bits<81>>,
    pub cc_tvalid: Signal<In, bool>,
    pub cc_tready: Signal<Out, Bits<4>>,
    /// Non-posted request credit to the completer interface.
    pub cq_np_req: Signal<In, Bits<2>>,
    /// Negotiated max payload and max read request (PCIe encoding).
    pub cfg_max_payload: Signal<Out, Bits<2>>,
    pub cfg_max_read_req: Signal<Out, Bits<3>>,
    /// MSI-X enable and function mask, bit 0 for PF0. The block's own
    /// message port (`cfg_interrupt_msix_int`) is tied off: the core sends
    /// its messages on RQ.
    pub cfg_interrupt_msix_enable: Signal<Out, Bits<4>>,
    pub cfg_interrupt_msix_mask: Signal<Out, Bits<4>>,
}

black_box_logic!(
    PcieBlock,
    [
        txp,
        txn,
        user_clk,
        user_reset,
        user_lnk_up,
        rq_tready,
        rc_tdata,
        rc_tkeep,
        rc_tlast,
        rc_tuser,
        rc_tvalid,
        cq_tdata,
        cq_tkeep,
        cq_tlast,
        cq_tuser,
        cq_tvalid,
        cc_tready,
        cfg_max_payload,
        cfg_max_read_req,
        cfg_interrupt_msix_enable,
        cfg_interrupt_msix_mask
    ],
    |_: &PcieBlock| r#"
wire sys_clk;
wire sys_clk_gt;
// ODIV2 (50 MHz) clocks the block's logic, O feeds the GTs (PG213).
IBUFDS_GTE4 #(.REFCLK_HROW_CK_SEL(2'b00)) refclk_buf (
    .I(refclk_p), .IB(refclk_n), .CEB(1'b0), .O(sys_clk_gt), .ODIV2(sys_clk));
homa_pcie pcie (
    .pci_exp_rxp(rxp), .pci_exp_rxn(rxn), .pci_exp_txp(txp), .pci_exp_txn(txn),
    .sys_clk(sys_clk), .sys_clk_gt(sys_clk_gt), .sys_reset(perst_n),
    .user_clk(user_clk), .user_reset(user_reset), .user_lnk_up(user_lnk_up),
    .s_axis_rq_tdata(rq_tdata), .s_axis_rq_tkeep(rq_tkeep), .s_axis_rq_tlast(rq_tlast),
    .s_axis_rq_tuser(rq_tuser), .s_axis_rq_tvalid(rq_tvalid), .s_axis_rq_tready(rq_tready),
    .m_axis_rc_tdata(rc_tdata), .m_axis_rc_tkeep(rc_tkeep), .m_axis_rc_tlast(rc_tlast),
    .m_axis_rc_tuser(rc_tuser), .m_axis_rc_tvalid(rc_tvalid), .m_axis_rc_tready(rc_tready),
    .m_axis_cq_tdata(cq_tdata), .m_axis_cq_tkeep(cq_tkeep), .m_axis_cq_tlast(cq_tlast),
    .m_axis_cq_tuser(cq_tuser), .m_axis_cq_tvalid(cq_tvalid), .m_axis_cq_tready(cq_tready),
    .s_axis_cc_tdata(cc_tdata), .s_axis_cc_tkeep(cc_tkeep), .s_axis_cc_tlast(cc_tlast),
    .s_axis_cc_tuser(cc_tuser), .s_axis_cc_tvalid(cc_tvalid), .s_axis_cc_tready(cc_tready),
    .pcie_cq_np_req(cq_np_req),
    .cfg_max_payload(cfg_max_payload), .cfg_max_read_req(cfg_max_read_req),
    .cfg_interrupt_msix_enable(cfg_interrupt_msix_enable),
    .cfg_interrupt_msix_mask(cfg_interrupt_msix_mask),
    .cfg_interrupt_msix_address(64'd0), .cfg_interrupt_msix_data(32'd0),
    .cfg_interrupt_msix_int(1'b0), .cfg_interrupt_msix_vec_pending(2'd0),
    .cfg_interrupt_msi_function_number(8'd0));
"#
    .to_string()
);

/// One 100G MAC (`homa_cmac`: cmac_usplus with its four GTs, RS-FEC on).
/// Both user-side directions run on `usr_clk` (the IP's gt_txusrclk2, 322.265625
/// MHz; `rx_clk` is tied to it, as PG203's example design does).
#[derive(LogicBlock, Default)]
pub struct CmacBlock {
    pub refclk_p: Signal<In, Clock>,
    pub refclk_n: Signal<In, Clock>,
    pub rxp: Signal<In, Bits<4>>,
    pub rxn: Signal<In, Bits<4>>,
    pub txp: Signal<Out, Bits<4>>,
    pub txn: Signal<Out, Bits<4>>,
    /// Free-running 125 MHz (init and DRP clock).
    pub init_clk: Signal<In, Clock>,
    /// Whole-IP reset, active high (init_clk domain).
    pub sys_reset: Signal<In, bool>,
    pub usr_clk: Signal<Out, Clock>,
    pub usr_rx_reset: Signal<Out, bool>,
    pub usr_tx_reset: Signal<Out, bool>,
    pub rx_tdata: Signal<Out, Bits<512>>,
    pub rx_tkeep: Signal<Out, Bits<64>>,
    pub rx_tlast: Signal<Out, bool>,
    /// With tlast: the frame is bad (FCS or other error).
    pub rx_tuser: Signal<Out, bool>,
    pub rx_tvalid: Signal<Out, bool>,
    pub tx_tdata: Signal<In, Bits<512>>,
    pub tx_tkeep: Signal<In, Bits<64>>,
    pub tx_tlast: Signal<In, bool>,
    /// With tlast: send the frame with a bad FCS.
    pub tx_tuser: Signal<In, bool>,
    pub tx_tvalid: Signal<In, bool>,
    pub tx_tready: Signal<Out, bool>,
    pub stat_rx_aligned: Signal<Out, bool>,
    pub ctl_rx_enable: Signal<In, bool>,
    pub ctl_tx_enable: Signal<In, bool>,
    /// Remote fault indication while the receiver is not aligned.
    pub ctl_tx_send_rfi: Signal<In, bool>,
}

black_box_logic!(
    CmacBlock,
    [
        txp,
        txn,
        usr_clk,
        usr_rx_reset,
        usr_tx_reset,
        rx_tdata,
        rx_tkeep,
        rx_tlast,
        rx_tuser,
        rx_tvalid,
        tx_tready,
        stat_rx_aligned
    ],
    |_: &CmacBlock| r#"
homa_cmac cmac (
    .gt0_rxp_in(rxp[0]), .gt0_rxn_in(rxn[0]), .gt1_rxp_in(rxp[1]), .gt1_rxn_in(rxn[1]),
    .gt2_rxp_in(rxp[2]), .gt2_rxn_in(rxn[2]), .gt3_rxp_in(rxp[3]), .gt3_rxn_in(rxn[3]),
    .gt0_txp_out(txp[0]), .gt0_txn_out(txn[0]), .gt1_txp_out(txp[1]), .gt1_txn_out(txn[1]),
    .gt2_txp_out(txp[2]), .gt2_txn_out(txn[2]), .gt3_txp_out(txp[3]), .gt3_txn_out(txn[3]),
    .gt_ref_clk_p(refclk_p), .gt_ref_clk_n(refclk_n),
    .init_clk(init_clk), .sys_reset(sys_reset),
    .gt_loopback_in(12'b0), .gtwiz_reset_tx_datapath(1'b0), .gtwiz_reset_rx_datapath(1'b0),
    .gt_txusrclk2(usr_clk), .rx_clk(usr_clk),
    .usr_rx_reset(usr_rx_reset), .usr_tx_reset(usr_tx_reset),
    .core_rx_reset(1'b0), .core_tx_reset(1'b0), .core_drp_reset(1'b0),
    .drp_clk(init_clk), .drp_addr(10'b0), .drp_di(16'b0), .drp_en(1'b0), .drp_we(1'b0),
    .rx_axis_tvalid(rx_tvalid), .rx_axis_tdata(rx_tdata), .rx_axis_tlast(rx_tlast),
    .rx_axis_tkeep(rx_tkeep), .rx_axis_tuser(rx_tuser),
    .tx_axis_tready(tx_tready), .tx_axis_tvalid(tx_tvalid), .tx_axis_tdata(tx_tdata),
    .tx_axis_tlast(tx_tlast), .tx_axis_tkeep(tx_tkeep), .tx_axis_tuser(tx_tuser),
    .tx_preamblein(56'b0),
    .stat_rx_aligned(stat_rx_aligned),
    .ctl_rx_enable(ctl_rx_enable), .ctl_rx_force_resync(1'b0), .ctl_rx_test_pattern(1'b0),
    .ctl_tx_enable(ctl_tx_enable), .ctl_tx_send_rfi(ctl_tx_send_rfi), .ctl_tx_send_lfi(1'b0),
    .ctl_tx_send_idle(1'b0), .ctl_tx_test_pattern(1'b0),
    .ctl_tx_rsfec_enable(1'b1), .ctl_rx_rsfec_enable(1'b1),
    .ctl_rsfec_ieee_error_indication_mode(1'b0),
    .ctl_rx_rsfec_enable_correction(1'b1), .ctl_rx_rsfec_enable_indication(1'b1));
"#
    .to_string()
);

/// The free-running 125 MHz clock: an LVDS system clock through an MMCM.
#[derive(LogicBlock, Default)]
pub struct InitClock {
    pub clk_p: Signal<In, Clock>,
    pub clk_n: Signal<In, Clock>,
    pub clk_125: Signal<Out, Clock>,
    pub locked: Signal<Out, bool>,
    _period_ns: f64,
    _divclk: u32,
    _mult: f64,
    _div0: f64,
}

impl InitClock {
    pub fn new(board: &Board) -> Self {
        let (period, divclk, mult, div0) = board.mmcm_125mhz();
        InitClock {
            _period_ns: period,
            _divclk: divclk,
            _mult: mult,
            _div0: div0,
            ..Default::default()
        }
    }
}

black_box_logic!(InitClock, [clk_125, locked], |s: &InitClock| format!(
    r#"
wire clk_in;
wire clk_fb;
wire clk_out0;
IBUFDS sysclk_buf (.I(clk_p), .IB(clk_n), .O(clk_in));
MMCME4_BASE #(
    .CLKIN1_PERIOD({period:.3}), .DIVCLK_DIVIDE({divclk}),
    .CLKFBOUT_MULT_F({mult:.3}), .CLKOUT0_DIVIDE_F({div0:.3})
) mmcm (
    .CLKIN1(clk_in), .CLKFBIN(clk_fb), .RST(1'b0), .PWRDWN(1'b0),
    .CLKFBOUT(clk_fb), .CLKOUT0(clk_out0), .LOCKED(locked));
BUFG clk_125_buf (.I(clk_out0), .O(clk_125));
"#,
    period = s._period_ns,
    divclk = s._divclk,
    mult = s._mult,
    div0 = s._div0
));

/// STARTUPE3 (the configuration flash's pins after configuration) and ICAPE3
/// (reconfiguration). The flash pins are driven by `flash_spi` once the
/// driver sets FLASH_CONTROL bit 1; until then every user-side driver is off.
#[derive(LogicBlock, Default)]
pub struct ConfigAccess {
    pub icap_clk: Signal<In, Clock>,
    /// Active-low select, write when low.
    pub icap_csib: Signal<In, bool>,
    pub icap_rdwrb: Signal<In, bool>,
    pub icap_i: Signal<In, Bits<32>>,
    pub icap_avail: Signal<Out, bool>,
    /// Flash: CCLK, chip select, DQ out/enable (active-low tristate) and in.
    pub flash_clk: Signal<In, bool>,
    pub flash_clk_ts: Signal<In, bool>,
    pub flash_cs_n: Signal<In, bool>,
    pub flash_cs_ts: Signal<In, bool>,
    pub flash_dq_o: Signal<In, Bits<4>>,
    pub flash_dq_ts: Signal<In, Bits<4>>,
    pub flash_dq_i: Signal<Out, Bits<4>>,
    /// End of startup: the user design owns the flash pins from here.
    pub eos: Signal<Out, bool>,
}

black_box_logic!(
    ConfigAccess,
    [icap_avail, flash_dq_i, eos],
    |_: &ConfigAccess| r#"
ICAPE3 icap (
    .CLK(icap_clk), .CSIB(icap_csib), .RDWRB(icap_rdwrb), .I(icap_i),
    .AVAIL(icap_avail));
STARTUPE3 startup (
    .USRCCLKO(flash_clk), .USRCCLKTS(flash_clk_ts),
    .FCSBO(flash_cs_n), .FCSBTS(flash_cs_ts),
    .DO(flash_dq_o), .DTS(flash_dq_ts), .DI(flash_dq_i),
    .GSR(1'b0), .GTS(1'b0), .KEYCLEARB(1'b1), .PACK(1'b0),
    .USRDONEO(1'b1), .USRDONETS(1'b1),
    .EOS(eos));
"#
    .to_string()
);

// Stand-ins for the vendor modules the board top levels instantiate, so the
// lint (Verilator) checks every top level without Vivado. Ours, written from the
// port lists in the product guides: PG213 (PCIe, 512-bit user interface),
// PG203 (cmac_usplus with GTs, AXI-Stream, ctl_* ports), UG974 (primitives).
// They declare the ports and parameters the tops use (outputs we leave
// unconnected are left out, so that an input we forget to drive still fails
// the lint), with the widths the guides give, and drive every output with a
// constant or a clock: they model nothing.
// A port name or width our tops get wrong fails the lint here.

/* verilator lint_off UNUSEDSIGNAL */
/* verilator lint_off UNUSEDPARAM */

module IBUFDS_GTE4 #(
    parameter [1:0] REFCLK_HROW_CK_SEL = 2'b00,
    parameter REFCLK_EN_TX_PATH = 1'b0,
    parameter [1:0] REFCLK_ICNTL_RX = 2'b00
) (input wire I, input wire IB, input wire CEB, output wire O, output wire ODIV2);
    assign O = I;
    assign ODIV2 = I;
endmodule

module IBUFDS (input wire I, input wire IB, output wire O);
    assign O = I;
endmodule

module BUFG (input wire I, output wire O);
    assign O = I;
endmodule

module MMCME4_BASE #(
    parameter real CLKIN1_PERIOD = 0.0,
    parameter integer DIVCLK_DIVIDE = 1,
    parameter real CLKFBOUT_MULT_F = 5.0,
    parameter real CLKOUT0_DIVIDE_F = 1.0
) (
    input wire CLKIN1, input wire CLKFBIN, input wire RST, input wire PWRDWN,
    output wire CLKFBOUT, output wire CLKOUT0, output wire LOCKED
);
    assign CLKFBOUT = CLKIN1;
    assign CLKOUT0 = CLKIN1;
    assign LOCKED = 1'b1;
endmodule

module STARTUPE3 (
    output wire [3:0] DI, output wire EOS,
    input wire [3:0] DO, input wire [3:0] DTS, input wire FCSBO, input wire FCSBTS,
    input wire GSR, input wire GTS, input wire KEYCLEARB, input wire PACK,
    input wire USRCCLKO, input wire USRCCLKTS, input wire USRDONEO, input wire USRDONETS
);
    assign EOS = 1'b1;
    assign DI = 4'b0;
endmodule

module ICAPE3 (
    output wire AVAIL,
    input wire CLK, input wire CSIB, input wire [31:0] I, input wire RDWRB
);
    assign AVAIL = 1'b1;
endmodule

// pcie4_uscale_plus / pcie4c_uscale_plus as configured by the IP TCL
// (module_name homa_pcie): Gen3 x16, 512-bit AXI-Stream at 250 MHz.
module homa_pcie (
    output wire [15:0] pci_exp_txn, output wire [15:0] pci_exp_txp,
    input wire [15:0] pci_exp_rxn, input wire [15:0] pci_exp_rxp,
    output wire user_clk, output wire user_reset, output wire user_lnk_up,
    input wire [511:0] s_axis_rq_tdata, input wire [15:0] s_axis_rq_tkeep,
    input wire s_axis_rq_tlast, output wire [3:0] s_axis_rq_tready,
    input wire [136:0] s_axis_rq_tuser, input wire s_axis_rq_tvalid,
    output wire [511:0] m_axis_rc_tdata, output wire [15:0] m_axis_rc_tkeep,
    output wire m_axis_rc_tlast, input wire m_axis_rc_tready,
    output wire [160:0] m_axis_rc_tuser, output wire m_axis_rc_tvalid,
    output wire [511:0] m_axis_cq_tdata, output wire [15:0] m_axis_cq_tkeep,
    output wire m_axis_cq_tlast, input wire m_axis_cq_tready,
    output wire [182:0] m_axis_cq_tuser, output wire m_axis_cq_tvalid,
    input wire [511:0] s_axis_cc_tdata, input wire [15:0] s_axis_cc_tkeep,
    input wire s_axis_cc_tlast, output wire [3:0] s_axis_cc_tready,
    input wire [80:0] s_axis_cc_tuser, input wire s_axis_cc_tvalid,
    input wire [1:0] pcie_cq_np_req,
    output wire [1:0] cfg_max_payload, output wire [2:0] cfg_max_read_req,
    output wire [3:0] cfg_interrupt_msix_enable, output wire [3:0] cfg_interrupt_msix_mask,
    input wire [63:0] cfg_interrupt_msix_address, input wire [31:0] cfg_interrupt_msix_data,
    input wire cfg_interrupt_msix_int, input wire [1:0] cfg_interrupt_msix_vec_pending,
    input wire [7:0] cfg_interrupt_msi_function_number,
    input wire sys_clk, input wire sys_clk_gt, input wire sys_reset
);
    assign {pci_exp_txn, pci_exp_txp} = 32'b0;
    assign user_clk = sys_clk;
    assign user_reset = ~sys_reset;
    assign user_lnk_up = 1'b0;
    assign s_axis_rq_tready = 4'b0;
    assign s_axis_cc_tready = 4'b0;
    assign {m_axis_rc_tdata, m_axis_rc_tkeep, m_axis_rc_tlast, m_axis_rc_tuser, m_axis_rc_tvalid} = 0;
    assign {m_axis_cq_tdata, m_axis_cq_tkeep, m_axis_cq_tlast, m_axis_cq_tuser, m_axis_cq_tvalid} = 0;
    assign {cfg_max_payload, cfg_max_read_req} = 5'b0;
    assign {cfg_interrupt_msix_enable, cfg_interrupt_msix_mask} = 8'b0;
endmodule

// cmac_usplus as configured by the IP TCL (module_name homa_cmac): CAUI-4,
// GTs inside, AXI-Stream user interface, RS-FEC, no AXI-Lite (ctl_* ports).
module homa_cmac (
    input wire gt0_rxp_in, input wire gt0_rxn_in, input wire gt1_rxp_in, input wire gt1_rxn_in,
    input wire gt2_rxp_in, input wire gt2_rxn_in, input wire gt3_rxp_in, input wire gt3_rxn_in,
    output wire gt0_txp_out, output wire gt0_txn_out, output wire gt1_txp_out, output wire gt1_txn_out,
    output wire gt2_txp_out, output wire gt2_txn_out, output wire gt3_txp_out, output wire gt3_txn_out,
    output wire gt_txusrclk2, input wire [11:0] gt_loopback_in,
    input wire gtwiz_reset_tx_datapath, input wire gtwiz_reset_rx_datapath,
    input wire sys_reset, input wire gt_ref_clk_p, input wire gt_ref_clk_n, input wire init_clk,
    output wire rx_axis_tvalid, output wire [511:0] rx_axis_tdata, output wire rx_axis_tlast,
    output wire [63:0] rx_axis_tkeep, output wire rx_axis_tuser,
    output wire usr_rx_reset, output wire stat_rx_aligned,
    input wire ctl_rx_enable, input wire ctl_rx_force_resync, input wire ctl_rx_test_pattern,
    input wire core_rx_reset, input wire rx_clk,
    input wire ctl_tx_enable, input wire ctl_tx_send_idle, input wire ctl_tx_send_rfi,
    input wire ctl_tx_send_lfi, input wire ctl_tx_test_pattern, input wire core_tx_reset,
    output wire tx_axis_tready, input wire tx_axis_tvalid, input wire [511:0] tx_axis_tdata,
    input wire tx_axis_tlast, input wire [63:0] tx_axis_tkeep, input wire tx_axis_tuser,
    input wire [55:0] tx_preamblein,
    output wire usr_tx_reset,
    input wire ctl_tx_rsfec_enable, input wire ctl_rx_rsfec_enable,
    input wire ctl_rsfec_ieee_error_indication_mode,
    input wire ctl_rx_rsfec_enable_correction, input wire ctl_rx_rsfec_enable_indication,
    input wire core_drp_reset, input wire drp_clk, input wire [9:0] drp_addr,
    input wire [15:0] drp_di, input wire drp_en, input wire drp_we
);
    assign {gt0_txp_out, gt0_txn_out, gt1_txp_out, gt1_txn_out} = 4'b0;
    assign {gt2_txp_out, gt2_txn_out, gt3_txp_out, gt3_txn_out} = 4'b0;
    assign gt_txusrclk2 = gt_ref_clk_p;
    assign {rx_axis_tvalid, rx_axis_tdata, rx_axis_tlast, rx_axis_tkeep, rx_axis_tuser} = 0;
    assign usr_rx_reset = sys_reset;
    assign usr_tx_reset = sys_reset;
    assign stat_rx_aligned = 1'b0;
    assign tx_axis_tready = 1'b0;
endmodule

//! Everything of ours on the board around the core, in three clock domains:
//! the core's (`core_clock`, the PCIe block's 250 MHz user clock), the MAC's
//! (`mac_clock`, 322.265625 MHz) and the free-running 125 MHz `init_clock`.
//!
//! - MAC -> core: a crossing FIFO that drops whole frames when full (the MAC
//!   cannot wait); core -> MAC: one that back-pressures the core and releases
//!   only whole frames, so the MAC never runs dry inside a frame.
//! - The CSR port is split between the core and the board registers.
//! - Resets: the core resets with the PCIe block's `user_reset`; the FIFOs with
//!   that or the MAC's user resets, both sides together (`ResetBridge`); the
//!   CMAC with the init clock's MMCM unlocked; the IPROG sender likewise.
//! - MAC control: receive always on; transmit enabled once the receiver is
//!   aligned, remote fault sent until then (PG203's bring-up order).
//!
//! Limits today: the CSR and DMA ports come from the PCIe TLP interface, which
//! is not written yet (issue 10 item 1); the board tops tie them off. Frames
//! the MAC flags bad (`rx_tuser` on the last beat) are dropped in the RX
//! crossing FIFO. A MAC reset (link loss) resets both FIFOs, and the core may
//! then see a frame it was reading end without `tlast`; the core's RX path does
//! not guard against that yet.

use homa_hw::core::HomaCore;
use homa_hw::CoreConfig;
use rust_hdl::prelude::*;

use crate::cdc::axis_async_fifo::{AxisAsyncFifo, FullPolicy, PointerCode};
use crate::regmap::{self, BuildInfo};
use crate::top::board_regs::BoardRegs;
use crate::top::iprog::Iprog;
use crate::top::reset_bridge::ResetBridge;

/// Address bits of the board's crossing FIFOs: 512 beats (32 KiB), a block
/// RAM's depth in its widest mode.
pub const FIFO_ADDR_BITS: usize = 9;

#[derive(LogicBlock)]
pub struct BoardLogic {
    pub core_clock: Signal<In, Clock>,
    /// The PCIe block's user_reset (core clock domain).
    pub core_reset_req: Signal<In, bool>,
    pub mac_clock: Signal<In, Clock>,
    /// The MAC's usr_rx_reset | usr_tx_reset (MAC clock domain).
    pub mac_reset_req: Signal<In, bool>,
    pub init_clock: Signal<In, Clock>,
    pub init_locked: Signal<In, bool>,

    pub csr_addr: Signal<In, Bits<24>>,
    pub csr_wr_data: Signal<In, Bits<32>>,
    pub csr_wr_en: Signal<In, bool>,
    pub csr_rd_en: Signal<In, bool>,
    /// The PCIe block's MSI-X enable and function mask (PF0).
    pub msix_enable: Signal<In, bool>,
    pub msix_mask: Signal<In, bool>,
    pub csr_rd_data: Signal<Out, Bits<32>>,
    pub csr_rd_valid: Signal<Out, bool>,

    pub dma_rd_req_valid: Signal<Out, bool>,
    pub dma_rd_req_ready: Signal<In, bool>,
    pub dma_rd_req_addr: Signal<Out, Bits<64>>,
    pub dma_rd_req_len: Signal<Out, Bits<16>>,
    pub dma_rd_req_tag: Signal<Out, Bits<8>>,
    pub dma_rd_rsp_valid: Signal<In, bool>,
    pub dma_rd_rsp_ready: Signal<Out, bool>,
    pub dma_rd_rsp_data: Signal<In, Bits<512>>,
    pub dma_rd_rsp_tag: Signal<In, Bits<8>>,
    pub dma_rd_rsp_last: Signal<In, bool>,
    pub dma_rd_rsp_error: Signal<In, bool>,
    pub dma_wr_valid: Signal<Out, bool>,
    pub dma_wr_ready: Signal<In, bool>,
    pub dma_wr_addr: Signal<Out, Bits<64>>,
    pub dma_wr_data: Signal<Out, Bits<512>>,
    pub dma_wr_strb: Signal<Out, Bits<64>>,
    pub dma_wr_last: Signal<Out, bool>,

    /// The MAC's side (MAC clock domain).
    pub mac_rx_tdata: Signal<In, Bits<512>>,
    pub mac_rx_tkeep: Signal<In, Bits<64>>,
    pub mac_rx_tlast: Signal<In, bool>,
    pub mac_rx_tuser: Signal<In, bool>,
    pub mac_rx_tvalid: Signal<In, bool>,
    pub mac_tx_tdata: Signal<Out, Bits<512>>,
    pub mac_tx_tkeep: Signal<Out, Bits<64>>,
    pub mac_tx_tlast: Signal<Out, bool>,
    pub mac_tx_tuser: Signal<Out, bool>,
    pub mac_tx_tvalid: Signal<Out, bool>,
    pub mac_tx_tready: Signal<In, bool>,
    pub stat_rx_aligned: Signal<In, bool>,
    pub ctl_rx_enable: Signal<Out, bool>,
    pub ctl_tx_enable: Signal<Out, bool>,
    pub ctl_tx_send_rfi: Signal<Out, bool>,
    /// To the CMAC's sys_reset (init clock domain).
    pub cmac_sys_reset: Signal<Out, bool>,

    pub icap_avail: Signal<In, bool>,
    pub icap_csib: Signal<Out, bool>,
    pub icap_rdwrb: Signal<Out, bool>,
    pub icap_i: Signal<Out, Bits<32>>,

    /// The configuration flash's pins, to STARTUPE3.
    pub flash_sck: Signal<Out, bool>,
    pub flash_sck_ts: Signal<Out, bool>,
    pub flash_cs_n: Signal<Out, bool>,
    pub flash_cs_ts: Signal<Out, bool>,
    pub flash_dq_o: Signal<Out, Bits<4>>,
    pub flash_dq_ts: Signal<Out, Bits<4>>,
    pub flash_dq_i: Signal<In, Bits<4>>,

    core: HomaCore,
    regs: BoardRegs,
    /// This build's identity, the board registers' ID words.
    id: Constant<Bits<{ regmap::ID_BITS }>>,
    rx_fifo: AxisAsyncFifo<FIFO_ADDR_BITS, { FIFO_ADDR_BITS + 1 }>,
    tx_fifo: AxisAsyncFifo<FIFO_ADDR_BITS, { FIFO_ADDR_BITS + 1 }>,
    fifo_resets: ResetBridge,
    iprog: Iprog,
    /// The MAC's `stat_rx_aligned` into the core's clock, for MAC_STATUS.
    aligned_sync1: DFF<bool>,
    aligned_sync2: DFF<bool>,
}

impl BoardLogic {
    pub fn new(board: &str, part: &str, build: &BuildInfo) -> Self {
        Self {
            core_clock: Default::default(),
            core_reset_req: Default::default(),
            mac_clock: Default::default(),
            mac_reset_req: Default::default(),
            init_clock: Default::default(),
            init_locked: Default::default(),
            csr_addr: Default::default(),
            csr_wr_data: Default::default(),
            csr_wr_en: Default::default(),
            csr_rd_en: Default::default(),
            msix_enable: Default::default(),
            msix_mask: Default::default(),
            csr_rd_data: Default::default(),
            csr_rd_valid: Default::default(),
            dma_rd_req_valid: Default::default(),
            dma_rd_req_ready: Default::default(),
            dma_rd_req_addr: Default::default(),
            dma_rd_req_len: Default::default(),
            dma_rd_req_tag: Default::default(),
            dma_rd_rsp_valid: Default::default(),
            dma_rd_rsp_ready: Default::default(),
            dma_rd_rsp_data: Default::default(),
            dma_rd_rsp_tag: Default::default(),
            dma_rd_rsp_last: Default::default(),
            dma_rd_rsp_error: Default::default(),
            dma_wr_valid: Default::default(),
            dma_wr_ready: Default::default(),
            dma_wr_addr: Default::default(),
            dma_wr_data: Default::default(),
            dma_wr_strb: Default::default(),
            dma_wr_last: Default::default(),
            mac_rx_tdata: Default::default(),
            mac_rx_tkeep: Default::default(),
            mac_rx_tlast: Default::default(),
            mac_rx_tuser: Default::default(),
            mac_rx_tvalid: Default::default(),
            mac_tx_tdata: Default::default(),
            mac_tx_tkeep: Default::default(),
            mac_tx_tlast: Default::default(),
            mac_tx_tuser: Default::default(),
            mac_tx_tvalid: Default::default(),
            mac_tx_tready: Default::default(),
            stat_rx_aligned: Default::default(),
            ctl_rx_enable: Default::default(),
            ctl_tx_enable: Default::default(),
            ctl_tx_send_rfi: Default::default(),
            cmac_sys_reset: Default::default(),
            icap_avail: Default::default(),
            icap_csib: Default::default(),
            icap_rdwrb: Default::default(),
            icap_i: Default::default(),
            flash_sck: Default::default(),
            flash_sck_ts: Default::default(),
            flash_cs_n: Default::default(),
            flash_cs_ts: Default::default(),
            flash_dq_o: Default::default(),
            flash_dq_ts: Default::default(),
            flash_dq_i: Default::default(),
            core: HomaCore::new(&CoreConfig::default()),
            regs: Default::default(),
            id: Constant::new(regmap::id_bits(&regmap::constant_words(board, part, build))),
            rx_fifo: AxisAsyncFifo::new(PointerCode::Gray, FullPolicy::DropWhenFull),
            tx_fifo: AxisAsyncFifo::new(PointerCode::Gray, FullPolicy::BackPressure),
            fifo_resets: Default::default(),
            iprog: Default::default(),
            aligned_sync1: Default::default(),
            aligned_sync2: Default::default(),
        }
    }
}

impl Logic for BoardLogic {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, core_clock, aligned_sync1, aligned_sync2);
        self.aligned_sync1.d.next = self.stat_rx_aligned.val();
        self.aligned_sync2.d.next = self.aligned_sync1.q.val();

        // ---- resets ----
        self.fifo_resets.a_clock.next = self.core_clock.val();
        self.fifo_resets.a_req.next = self.core_reset_req.val();
        self.fifo_resets.b_clock.next = self.mac_clock.val();
        self.fifo_resets.b_req.next = self.mac_reset_req.val();
        self.cmac_sys_reset.next = !self.init_locked.val();

        // ---- core ----
        self.core.clock.next = self.core_clock.val();
        self.core.reset.next = self.core_reset_req.val();
        // The timers tick from the core's own prescaler on a board.
        self.core.timer_tick.next = false;
        self.core.msix_enable.next = self.msix_enable.val();
        self.core.msix_mask.next = self.msix_mask.val();

        // ---- CSR: board registers above bit 23, the core below ----
        self.regs.clock.next = self.core_clock.val();
        self.regs.reset.next = self.core_reset_req.val();
        self.regs.csr_addr.next = self.csr_addr.val();
        self.regs.csr_wr_data.next = self.csr_wr_data.val();
        self.regs.csr_wr_en.next = self.csr_wr_en.val();
        self.regs.csr_rd_en.next = self.csr_rd_en.val();
        self.regs.id_words.next = self.id.val();
        self.regs.mac_aligned.next = self.aligned_sync2.q.val();
        self.regs.flash_dq_i.next = self.flash_dq_i.val();
        self.flash_sck.next = self.regs.flash_sck.val();
        self.flash_sck_ts.next = self.regs.flash_sck_ts.val();
        self.flash_cs_n.next = self.regs.flash_cs_n.val();
        self.flash_cs_ts.next = self.regs.flash_cs_ts.val();
        self.flash_dq_o.next = self.regs.flash_dq_o.val();
        self.flash_dq_ts.next = self.regs.flash_dq_ts.val();
        self.core.csr_addr.next = self.csr_addr.val();
        self.core.csr_wr_data.next = self.csr_wr_data.val();
        self.core.csr_wr_en.next = self.csr_wr_en.val() & !self.regs.select.val();
        self.core.csr_rd_en.next = self.csr_rd_en.val() & !self.regs.select.val();
        self.csr_rd_valid.next = self.core.csr_rd_valid.val() | self.regs.rd_valid.val();
        self.csr_rd_data.next = self.core.csr_rd_data.val();
        if self.regs.rd_valid.val() {
            self.csr_rd_data.next = self.regs.rd_data.val();
        }

        // ---- DMA: straight through ----
        self.dma_rd_req_valid.next = self.core.m_dma_rd_req_valid.val();
        self.core.m_dma_rd_req_ready.next = self.dma_rd_req_ready.val();
        self.dma_rd_req_addr.next = self.core.m_dma_rd_req_addr.val();
        self.dma_rd_req_len.next = self.core.m_dma_rd_req_len.val();
        self.dma_rd_req_tag.next = self.core.m_dma_rd_req_tag.val();
        self.core.s_dma_rd_rsp_valid.next = self.dma_rd_rsp_valid.val();
        self.dma_rd_rsp_ready.next = self.core.s_dma_rd_rsp_ready.val();
        self.core.s_dma_rd_rsp_data.next = self.dma_rd_rsp_data.val();
        self.core.s_dma_rd_rsp_tag.next = self.dma_rd_rsp_tag.val();
        self.core.s_dma_rd_rsp_last.next = self.dma_rd_rsp_last.val();
        self.core.s_dma_rd_rsp_error.next = self.dma_rd_rsp_error.val();
        self.dma_wr_valid.next = self.core.m_dma_wr_valid.val();
        self.core.m_dma_wr_ready.next = self.dma_wr_ready.val();
        self.dma_wr_addr.next = self.core.m_dma_wr_addr.val();
        self.dma_wr_data.next = self.core.m_dma_wr_data.val();
        self.dma_wr_strb.next = self.core.m_dma_wr_strb.val();
        self.dma_wr_last.next = self.core.m_dma_wr_last.val();

        // ---- MAC -> core ----
        self.rx_fifo.clock.next = self.mac_clock.val();
        self.rx_fifo.reset.next = self.fifo_resets.b_reset.val();
        self.rx_fifo.m_clock.next = self.core_clock.val();
        self.rx_fifo.m_reset.next = self.fifo_resets.a_reset.val();
        self.rx_fifo.meta_w2r.next = 0.into();
        self.rx_fifo.meta_r2w.next = 0.into();
        self.rx_fifo.s_axis_tdata.next = self.mac_rx_tdata.val();
        self.rx_fifo.s_axis_tkeep.next = self.mac_rx_tkeep.val();
        self.rx_fifo.s_axis_tlast.next = self.mac_rx_tlast.val();
        self.rx_fifo.s_axis_tuser.next = self.mac_rx_tuser.val();
        self.rx_fifo.s_axis_tvalid.next = self.mac_rx_tvalid.val();
        self.core.s_axis_rx_tdata.next = self.rx_fifo.m_axis_tdata.val();
        self.core.s_axis_rx_tkeep.next = self.rx_fifo.m_axis_tkeep.val();
        self.core.s_axis_rx_tlast.next = self.rx_fifo.m_axis_tlast.val();
        self.core.s_axis_rx_tvalid.next = self.rx_fifo.m_axis_tvalid.val();
        self.rx_fifo.m_axis_tready.next = self.core.s_axis_rx_tready.val();

        // ---- core -> MAC ----
        self.tx_fifo.clock.next = self.core_clock.val();
        self.tx_fifo.reset.next = self.fifo_resets.a_reset.val();
        self.tx_fifo.m_clock.next = self.mac_clock.val();
        self.tx_fifo.m_reset.next = self.fifo_resets.b_reset.val();
        self.tx_fifo.meta_w2r.next = 0.into();
        self.tx_fifo.meta_r2w.next = 0.into();
        self.tx_fifo.s_axis_tdata.next = self.core.m_axis_tx_tdata.val();
        self.tx_fifo.s_axis_tkeep.next = self.core.m_axis_tx_tkeep.val();
        self.tx_fifo.s_axis_tlast.next = self.core.m_axis_tx_tlast.val();
        self.tx_fifo.s_axis_tuser.next = self.core.m_axis_tx_tuser.val();
        self.tx_fifo.s_axis_tvalid.next = self.core.m_axis_tx_tvalid.val();
        self.core.m_axis_tx_tready.next = self.tx_fifo.s_axis_tready.val();
        self.mac_tx_tdata.next = self.tx_fifo.m_axis_tdata.val();
        self.mac_tx_tkeep.next = self.tx_fifo.m_axis_tkeep.val();
        self.mac_tx_tlast.next = self.tx_fifo.m_axis_tlast.val();
        self.mac_tx_tuser.next = self.tx_fifo.m_axis_tuser.val();
        self.mac_tx_tvalid.next = self.tx_fifo.m_axis_tvalid.val();
        self.tx_fifo.m_axis_tready.next = self.mac_tx_tready.val();

        // ---- MAC control ----
        self.ctl_rx_enable.next = true;
        self.ctl_tx_enable.next = self.stat_rx_aligned.val();
        self.ctl_tx_send_rfi.next = !self.stat_rx_aligned.val();

        // ---- reboot ----
        self.iprog.clock.next = self.init_clock.val();
        self.iprog.reset.next = !self.init_locked.val();
        self.iprog.reboot.next = self.regs.reboot.val();
        self.iprog.icap_avail.next = self.icap_avail.val();
        self.icap_csib.next = self.iprog.icap_csib.val();
        self.icap_rdwrb.next = self.iprog.icap_rdwrb.val();
        self.icap_i.next = self.iprog.icap_i.val();
    }
}

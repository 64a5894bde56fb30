//! The top level of the Homa transport core: what sits between the PCIe DMA
//! shell and the 100G MAC on the card, and what hw-sim drives in simulation.
//!
//! It holds the CSR decoder and register blocks; the TX path (TX engine with
//! its outbound table and send scheduler: many messages, SRPT packet by
//! packet, as far as GRANTs allow; header builder, framer); the RX path
//! (parser and counters, store-and-forward FIFO, RX engine with the RPC table
//! and the bpage pool: DATA in any order lands in the endpoint's bpages); the
//! grant scheduler and the control sender (GRANTs, ACKs) between them; the
//! completion writer both paths share, and the MSI-X interrupts that
//! announce its entries. Top-level
//! ports stay scalar (Verilator mangles the `$` in RustHDL's names of nested
//! signals).
//!
//! CSR protocol: the host raises `csr_rd_en` or `csr_wr_en` for one cycle with
//! `csr_addr` (a byte address, word aligned). A write takes effect at that
//! clock edge. A read answers exactly one cycle later with `csr_rd_valid` high
//! and `csr_rd_data`; an address no block claims reads as 0, so no read hangs.
//!
//! DMA ports (the PCIe shell's side; ARCHITECTURE.md): read requests
//! {addr, len <= 4096, tag} with valid/ready; read responses packed from lane
//! 0, one request's beats in order, `error` set on every beat of a request the
//! IOMMU refused; writes {addr of lane 0, data, byte strobes, last}.
//! Ethernet TX: `tuser` on a frame's last beat asks the MAC to spoil its FCS
//! (the frame's payload could not be read).
//!
//! Rule for wiring blocks here: a handshake signal must not run
//! combinationally from one child through this block into another child and
//! back (RX engine ready -> RX FIFO read address was one). RustHDL emits each
//! block as one `always @(*)`, and Verilator 5.006 does not always settle such
//! a path within one evaluation; put a register slice in it
//! (`dma_write_slice`), as FPGA timing wants anyway.

use rust_hdl::prelude::*;

use crate::csr::endpoint_block::EndpointBlock;
use crate::csr::grant_block::GrantBlock;
use crate::csr::id_block::IdBlock;
use crate::csr::interface_block::InterfaceBlock;
use crate::csr::interrupt_block::InterruptBlock;
use crate::csr::scratch_block::ScratchBlock;
use crate::csr::timer_block::TimerBlock;
use crate::leaf::cpl_writer::CplWriter;
use crate::leaf::dma_write_fifo::DmaWriteFifo;
use crate::leaf::dma_write_slice::DmaWriteSlice;
use crate::leaf::register_slice::RegisterSlice;
use crate::regmap::{self, endpoint, CSR_ADDR_BITS};
use crate::rx::bpage_pool::BpagePool;
use crate::rx::counters::RxCounters;
use crate::rx::engine::RxEngine;
use crate::rx::fifo::RxFifo;
use crate::rx::parser::RxParser;
use crate::rx::resend_timer::ResendTimer;
use crate::rx::rpc_table::{RpcTable, OCCUPANCY_BITS, SLOT_BITS};
use crate::sched::grant_scheduler::{GrantScheduler, SLOT_BITS as SCHED_SLOT_BITS};
use crate::tx::arp_responder::ArpResponder;
use crate::tx::control_sender::ControlSender;
use crate::tx::engine::TxEngine;
use crate::tx::framer::TxFramer;
use crate::tx::header::TxHeaderBuilder;
use crate::CoreConfig;

const ENDPOINTS: usize = endpoint::COUNT;

/// Cycles from the end of reset until the core keeps up with traffic: the
/// grant scheduler's winner trees clear one leaf per cycle, then it derives
/// its parameters (a few hundred cycles of division). Frames that arrive
/// sooner wait in the RX FIFO (65 us at 250 MHz; a card boots once).
pub const BOOT_CYCLES: u64 = crate::sched::winner_tree::CLEAR_CYCLES + 512;

#[derive(LogicBlock)]
pub struct HomaCore {
    /// Core clock (250 MHz on the card).
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high.
    pub reset: Signal<In, bool>,
    /// A tick of the retransmission timers, while the timer block's
    /// TICK_NS is 0 (its prescaler stopped): a harness running a simulated
    /// card against real-time peers drives it from wall time. Boards tie it
    /// low.
    pub timer_tick: Signal<In, bool>,
    /// From the PCIe block's configuration space: MSI-X is enabled, and
    /// the function is masked (`cfg_interrupt_msix_enable[0]`, `_mask[0]`).
    pub msix_enable: Signal<In, bool>,
    pub msix_mask: Signal<In, bool>,
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
    /// Frames to the MAC.
    pub m_axis_tx_tdata: Signal<Out, Bits<512>>,
    pub m_axis_tx_tkeep: Signal<Out, Bits<64>>,
    pub m_axis_tx_tvalid: Signal<Out, bool>,
    pub m_axis_tx_tready: Signal<In, bool>,
    pub m_axis_tx_tlast: Signal<Out, bool>,
    /// With `tlast`: send this frame with a bad FCS.
    pub m_axis_tx_tuser: Signal<Out, bool>,
    /// DMA read requests to host memory.
    pub m_dma_rd_req_valid: Signal<Out, bool>,
    pub m_dma_rd_req_ready: Signal<In, bool>,
    pub m_dma_rd_req_addr: Signal<Out, Bits<64>>,
    pub m_dma_rd_req_len: Signal<Out, Bits<16>>,
    pub m_dma_rd_req_tag: Signal<Out, Bits<8>>,
    /// DMA read responses.
    pub s_dma_rd_rsp_valid: Signal<In, bool>,
    pub s_dma_rd_rsp_ready: Signal<Out, bool>,
    pub s_dma_rd_rsp_data: Signal<In, Bits<512>>,
    pub s_dma_rd_rsp_tag: Signal<In, Bits<8>>,
    pub s_dma_rd_rsp_last: Signal<In, bool>,
    pub s_dma_rd_rsp_error: Signal<In, bool>,
    /// DMA writes to host memory.
    pub m_dma_wr_valid: Signal<Out, bool>,
    pub m_dma_wr_ready: Signal<In, bool>,
    pub m_dma_wr_addr: Signal<Out, Bits<64>>,
    pub m_dma_wr_data: Signal<Out, Bits<512>>,
    pub m_dma_wr_strb: Signal<Out, Bits<64>>,
    pub m_dma_wr_last: Signal<Out, bool>,

    id: IdBlock,
    scratch: ScratchBlock,
    rx_parser: RxParser,
    rx_counters: RxCounters,
    rx_fifo: RxFifo,
    rx_engine: RxEngine,
    rpc_table: RpcTable,
    bpage_pool: BpagePool,
    /// The RX engine's DMA writes: a FIFO of 32 beats (a packet's payload
    /// while the PCIe link drains it; its ready comes from registers), then
    /// a register slice in front of the port's arbiter.
    rx_wr_fifo: DmaWriteFifo,
    rx_wr_slice: DmaWriteSlice,
    /// The RX engine is in the middle of a DMA write transaction: the write
    /// port stays its own until the transaction's last beat.
    rx_wr_busy: DFF<bool>,
    rx_wr_grant: Signal<Local, bool>,
    /// The interrupt block has the port's next turn: taken a cycle ahead,
    /// when its message waits and no completion does, so its ready is a
    /// register and not the completion writer's valid (9 LUT levels).
    irq_turn: DFF<bool>,
    /// Not `interface`: a SystemVerilog keyword.
    netif: InterfaceBlock,
    endpoints: [EndpointBlock; ENDPOINTS],
    grant_csr: GrantBlock,
    grant_scheduler: GrantScheduler,
    timer_csr: TimerBlock,
    /// MSI-X for the completion rings; its messages go out on the DMA
    /// write port behind the completions they announce.
    irq: InterruptBlock,
    resend_timer: ResendTimer,
    control_sender: ControlSender,
    /// The control sender is in the middle of a frame on the TX port.
    control_in_frame: DFF<bool>,
    /// The control sender has the TX port this cycle.
    control_port: Signal<Local, bool>,
    tx_engine: TxEngine,
    tx_header: TxHeaderBuilder,
    /// Header records built and not yet taken by the framer (beat 0, beat
    /// 1, frame length, header length): the TX engine builds the next
    /// frame's header while the current one streams, so it waits here.
    tx_header_slice: RegisterSlice<{ 2 * 512 + 2 * 16 }>,
    /// The card reset (interface RESET): asked for, and waiting for the TX
    /// port and the DMA write port to be between transactions (new ones are
    /// held meanwhile, and DMA reads too).
    card_reset_pending: DFF<bool>,
    /// The reset itself, one cycle, to every block holding RPC state.
    card_reset_pulse: DFF<bool>,
    /// Cycles until the core is ready after a card reset (`BOOT_CYCLES`).
    card_reset_settle: DFF<Bits<16>>,
    /// The reset of every block holding RPC state: the core's reset input
    /// or a card reset. (The CSR blocks of addresses and tunables keep
    /// theirs.)
    rpc_reset: Signal<Local, bool>,
    /// New transactions are held on the TX and DMA ports (a card reset is
    /// pending).
    ports_held: Signal<Local, bool>,
    /// The MAC's and the DMA write port's ready, as the core's sources see
    /// them (low while a card reset holds new transactions).
    mac_ready: Signal<Local, bool>,
    wr_ready: Signal<Local, bool>,
    /// DMA reads issued and not yet answered in full (each answer ends
    /// with `last`).
    rd_outstanding: DFF<Bits<8>>,
    rd_outstanding_next: Signal<Local, Bits<8>>,
    /// This cycle a read is issued / a read's answer ends (`last`).
    rd_issued: Signal<Local, bool>,
    rd_answered: Signal<Local, bool>,
    /// Answers still to come to reads issued before a card reset: taken
    /// from the port and thrown away, while new reads wait.
    rd_discard: DFF<Bits<8>>,
    boot_cycles: Constant<Bits<16>>,
    tx_framer: TxFramer,
    arp: ArpResponder,
    /// The framer is in the middle of a frame on the TX port.
    tx_in_frame: DFF<bool>,
    /// The ARP responder has the TX port this cycle.
    arp_grant: Signal<Local, bool>,
    cpl_writer: CplWriter,
    /// Address bits above the block offset: which block is addressed.
    csr_page: Signal<Local, Bits<16>>,
    id_page: Constant<Bits<16>>,
    scratch_page: Constant<Bits<16>>,
    rx_counters_page: Constant<Bits<16>>,
    interface_page: Constant<Bits<16>>,
    grant_page: Constant<Bits<16>>,
    timer_page: Constant<Bits<16>>,
    interrupt_page: Constant<Bits<16>>,
    endpoint_page: [Constant<Bits<16>>; ENDPOINTS],
    endpoints_rd_data: Signal<Local, Bits<32>>,
    rd_data: DFF<Bits<32>>,
    rd_valid: DFF<bool>,
    /// A DATA packet's event taken by the grant scheduler, last cycle.
    data_accepted: DFF<bool>,
}

impl HomaCore {
    pub fn new(config: &CoreConfig) -> Self {
        let page = |base: u32| Constant::new((base / regmap::BLOCK_SPAN).to_bits());
        Self {
            clock: Default::default(),
            reset: Default::default(),
            timer_tick: Default::default(),
            msix_enable: Default::default(),
            msix_mask: Default::default(),
            csr_addr: Default::default(),
            csr_wr_data: Default::default(),
            csr_wr_en: Default::default(),
            csr_rd_en: Default::default(),
            csr_rd_data: Default::default(),
            csr_rd_valid: Default::default(),
            s_axis_rx_tdata: Default::default(),
            s_axis_rx_tkeep: Default::default(),
            s_axis_rx_tvalid: Default::default(),
            s_axis_rx_tlast: Default::default(),
            s_axis_rx_tready: Default::default(),
            m_axis_tx_tdata: Default::default(),
            m_axis_tx_tkeep: Default::default(),
            m_axis_tx_tvalid: Default::default(),
            m_axis_tx_tready: Default::default(),
            m_axis_tx_tlast: Default::default(),
            m_axis_tx_tuser: Default::default(),
            m_dma_rd_req_valid: Default::default(),
            m_dma_rd_req_ready: Default::default(),
            m_dma_rd_req_addr: Default::default(),
            m_dma_rd_req_len: Default::default(),
            m_dma_rd_req_tag: Default::default(),
            s_dma_rd_rsp_valid: Default::default(),
            s_dma_rd_rsp_ready: Default::default(),
            s_dma_rd_rsp_data: Default::default(),
            s_dma_rd_rsp_tag: Default::default(),
            s_dma_rd_rsp_last: Default::default(),
            s_dma_rd_rsp_error: Default::default(),
            m_dma_wr_valid: Default::default(),
            m_dma_wr_ready: Default::default(),
            m_dma_wr_addr: Default::default(),
            m_dma_wr_data: Default::default(),
            m_dma_wr_strb: Default::default(),
            m_dma_wr_last: Default::default(),
            id: IdBlock::new(config),
            scratch: Default::default(),
            rx_parser: Default::default(),
            rx_counters: Default::default(),
            rx_fifo: Default::default(),
            rx_engine: Default::default(),
            rpc_table: Default::default(),
            bpage_pool: Default::default(),
            rx_wr_fifo: Default::default(),
            rx_wr_slice: Default::default(),
            rx_wr_busy: Default::default(),
            rx_wr_grant: Default::default(),
            irq_turn: Default::default(),
            netif: Default::default(),
            endpoints: std::array::from_fn(EndpointBlock::new),
            grant_csr: Default::default(),
            timer_csr: Default::default(),
            irq: Default::default(),
            resend_timer: Default::default(),
            grant_scheduler: Default::default(),
            control_sender: Default::default(),
            control_in_frame: Default::default(),
            control_port: Default::default(),
            tx_engine: Default::default(),
            tx_header: Default::default(),
            tx_header_slice: Default::default(),
            card_reset_pending: Default::default(),
            card_reset_pulse: Default::default(),
            card_reset_settle: Default::default(),
            rpc_reset: Default::default(),
            ports_held: Default::default(),
            mac_ready: Default::default(),
            wr_ready: Default::default(),
            rd_outstanding: Default::default(),
            rd_outstanding_next: Default::default(),
            rd_issued: Default::default(),
            rd_answered: Default::default(),
            rd_discard: Default::default(),
            boot_cycles: Constant::new(BOOT_CYCLES.to_bits()),
            tx_framer: Default::default(),
            arp: Default::default(),
            tx_in_frame: Default::default(),
            arp_grant: Default::default(),
            cpl_writer: Default::default(),
            csr_page: Default::default(),
            id_page: page(regmap::id::BASE),
            scratch_page: page(regmap::scratch::BASE),
            rx_counters_page: page(regmap::rx_counters::BASE),
            interface_page: page(regmap::interface::BASE),
            grant_page: page(regmap::grant::BASE),
            timer_page: page(regmap::timer::BASE),
            interrupt_page: page(regmap::interrupt::BASE),
            endpoint_page: std::array::from_fn(|e| page(endpoint::base(e))),
            endpoints_rd_data: Default::default(),
            rd_data: Default::default(),
            rd_valid: Default::default(),
            data_accepted: Default::default(),
        }
    }
}

impl Logic for HomaCore {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            rd_data,
            rd_valid,
            data_accepted,
            rx_wr_busy,
            irq_turn,
            tx_in_frame,
            control_in_frame,
            card_reset_pending,
            card_reset_pulse,
            card_reset_settle,
            rd_outstanding,
            rd_discard
        );

        // ---- the card reset (interface RESET) ----
        // Asked for, it holds new frames and DMA transactions until the TX
        // port and the DMA write port are between them, then resets every
        // block that holds RPC state for one cycle (so no frame leaves cut
        // and no write transaction is left open), and then waits
        // BOOT_CYCLES for the blocks that clear their RAMs. Read answers
        // still due for reads issued before it are taken and dropped (the
        // TX engine that asked for them has forgotten them).
        self.rpc_reset.next = self.reset.val() | self.card_reset_pulse.q.val();
        self.ports_held.next = self.card_reset_pending.q.val();
        self.card_reset_pulse.d.next = false;
        if self.card_reset_pending.q.val()
            & !self.card_reset_pulse.q.val()
            & !self.tx_in_frame.q.val()
            & !self.control_in_frame.q.val()
            & !self.rx_wr_busy.q.val()
        {
            self.card_reset_pulse.d.next = true;
        }
        if self.card_reset_pulse.q.val() {
            self.card_reset_pending.d.next = false;
            self.card_reset_settle.d.next = self.boot_cycles.val();
        } else if self.card_reset_settle.q.val() != 0 {
            self.card_reset_settle.d.next = self.card_reset_settle.q.val() - 1;
        }
        if self.netif.reset_request.val() {
            self.card_reset_pending.d.next = true;
        }
        self.netif.reset_busy.next = self.card_reset_pending.q.val()
            | self.card_reset_pulse.q.val()
            | (self.card_reset_settle.q.val() != 0);
        if self.reset.val() {
            self.card_reset_pending.d.next = false;
            self.card_reset_pulse.d.next = false;
            self.card_reset_settle.d.next = 0.into();
        }

        // ---- CSR decode: the page (address bits 23:8) selects the block ----
        self.csr_page.next = self.csr_addr.val().get_bits::<16>(8);
        self.id.offset.next = self.csr_addr.val().get_bits::<8>(0);
        self.id.select.next = self.csr_page.val() == self.id_page.val();
        self.scratch.clock.next = self.clock.val();
        self.scratch.reset.next = self.reset.val();
        self.scratch.offset.next = self.csr_addr.val().get_bits::<8>(0);
        self.scratch.select.next = self.csr_page.val() == self.scratch_page.val();
        self.scratch.wr_en.next = self.csr_wr_en.val();
        self.scratch.wr_data.next = self.csr_wr_data.val();
        self.netif.clock.next = self.clock.val();
        self.netif.reset.next = self.reset.val();
        self.netif.offset.next = self.csr_addr.val().get_bits::<8>(0);
        self.netif.select.next = self.csr_page.val() == self.interface_page.val();
        self.netif.wr_en.next = self.csr_wr_en.val();
        self.netif.wr_data.next = self.csr_wr_data.val();
        for e in 0..ENDPOINTS {
            self.endpoints[e].clock.next = self.clock.val();
            self.endpoints[e].reset.next = self.rpc_reset.val();
            self.endpoints[e].offset.next = self.csr_addr.val().get_bits::<8>(0);
            self.endpoints[e].select.next = self.csr_page.val() == self.endpoint_page[e].val();
            self.endpoints[e].wr_en.next = self.csr_wr_en.val();
            self.endpoints[e].wr_data.next = self.csr_wr_data.val();
            self.endpoints[e].tx_consumer.next = self.tx_engine.ep_tx_consumer[e].val();
            self.endpoints[e].cpl_producer.next = self.cpl_writer.producer[e].val();
            self.tx_engine.ep_port[e].next = self.endpoints[e].port.val();
            self.tx_engine.ep_tx_producer[e].next = self.endpoints[e].tx_producer.val();
            // A PORT write starts the endpoint over: ring indices to 0, its
            // messages of before left to their timers; an RX_AREA write
            // empties its bpage pool.
            self.tx_engine.ep_restart[e].next = self.endpoints[e].restart.val();
            self.tx_engine.ep_generation[e].next = self.endpoints[e].generation.val();
            self.rx_engine.ep_restart[e].next = self.endpoints[e].port_written.val();
            self.rx_engine.ep_generation[e].next = self.endpoints[e].generation.val();
            self.cpl_writer.restart[e].next = self.endpoints[e].restart.val();
            self.bpage_pool.clear[e].next = self.endpoints[e].bpages_clear.val();
        }
        self.endpoints_rd_data.next = self.endpoints[0].rd_data.val()
            | self.endpoints[1].rd_data.val()
            | self.endpoints[2].rd_data.val()
            | self.endpoints[3].rd_data.val();

        // ---- RX: parse every frame and count it by verdict; keep the
        // accepted ones in the FIFO until the RX engine delivers them ----
        self.rx_parser.clock.next = self.clock.val();
        self.rx_parser.reset.next = self.rpc_reset.val();
        self.rx_parser.s_axis_tdata.next = self.s_axis_rx_tdata.val();
        self.rx_parser.s_axis_tkeep.next = self.s_axis_rx_tkeep.val();
        self.rx_parser.s_axis_tvalid.next = self.s_axis_rx_tvalid.val();
        self.rx_parser.s_axis_tlast.next = self.s_axis_rx_tlast.val();
        self.s_axis_rx_tready.next = self.rx_parser.s_axis_tready.val();
        self.rx_fifo.clock.next = self.clock.val();
        self.rx_fifo.reset.next = self.rpc_reset.val();
        self.rx_fifo.s_axis_tdata.next = self.s_axis_rx_tdata.val();
        self.rx_fifo.s_axis_tkeep.next = self.s_axis_rx_tkeep.val();
        self.rx_fifo.s_axis_tvalid.next = self.s_axis_rx_tvalid.val();
        self.rx_fifo.s_axis_tlast.next = self.s_axis_rx_tlast.val();
        self.rx_fifo.s_verdict_valid.next = self.rx_parser.m_meta_valid.val();
        self.rx_fifo.s_verdict_reason.next = self.rx_parser.m_meta_reason.val();
        self.rx_fifo.s_verdict_frame_len.next = self.rx_parser.m_meta_frame_len.val();
        self.rx_fifo.s_verdict_meta.next = 0.into();
        self.rx_counters.clock.next = self.clock.val();
        self.rx_counters.reset.next = self.rpc_reset.val();
        self.rx_counters.verdict_valid.next = self.rx_parser.m_meta_valid.val();
        self.rx_counters.verdict.next = self.rx_parser.m_meta_reason.val();
        self.rx_counters.offset.next = self.csr_addr.val().get_bits::<8>(0);
        self.rx_counters.select.next = self.csr_page.val() == self.rx_counters_page.val();
        // (An expired message's removal is an event too, not a packet.) Counted
        // a cycle late: the grant scheduler's ready is 9 levels deep already.
        self.data_accepted.d.next = self.rx_engine.m_evt_valid.val()
            & self.grant_scheduler.s_evt_ready.val()
            & !self.rx_engine.m_evt_remove.val();
        self.rx_counters.data_accepted.next = self.data_accepted.q.val();
        self.rx_counters.path[0].next = self.rx_fifo.overflow_drops.val();
        self.rx_counters.path[1].next = self.rx_engine.messages.val();
        self.rx_counters.path[2].next = self.rx_engine.other_control.val();
        self.rx_counters.path[3].next = self.rx_engine.drop_no_endpoint.val();
        self.rx_counters.path[4].next = self.rx_engine.drop_rpc_full.val();
        self.rx_counters.path[5].next = self.rx_engine.drop_no_bpage.val();
        self.rx_counters.path[6].next = self.rx_engine.drop_too_big.val();
        self.rx_counters.path[7].next = self.arp.replies.val();
        self.rx_counters.path[8].next = self.rx_engine.duplicates.val();
        self.rx_counters.path[9].next = self.rx_engine.drop_bad_range.val();
        self.rx_counters.path[10].next = self.rx_engine.grants_received.val();
        self.rx_counters.path[11].next = self.rx_engine.cutoffs_received.val();
        self.rx_counters.path[12].next = self.tx_engine.grants_unknown.val();
        self.rx_counters.path[13].next = self.tx_engine.events_dropped.val();
        self.rx_counters.path[14].next = self.rx_engine.need_acks_received.val();
        self.rx_counters.path[15].next = self.control_sender.acks_sent.val();
        self.rx_counters.path[16].next = self.control_sender.acks_dropped.val();
        self.rx_counters.path[17].next = self.control_sender.cutoffs_sent.val();
        self.rx_counters.path[18].next = self.control_sender.cutoffs_dropped.val();
        self.rx_counters.path[19].next = self.tx_engine.acks_piggybacked.val();
        self.rx_counters.path[20].next = self.tx_engine.doorbells_beyond_ring.val();
        self.rx_counters.sender[0].next = self.rx_engine.resends_received.val();
        self.rx_counters.sender[1].next = self.rx_engine.acks_received.val();
        self.rx_counters.sender[2].next = self.tx_engine.resends_unknown.val();
        self.rx_counters.sender[3].next = self.tx_engine.packets_retransmitted.val();
        self.rx_counters.sender[4].next = self.tx_engine.lingers_expired.val();
        self.rx_counters.sender[5].next = self.control_sender.need_acks_sent.val();
        self.rx_counters.sender[6].next = self.control_sender.response_resends_sent.val();
        self.rx_counters.sender[7].next =
            bit_cast::<32, 16>(self.tx_engine.messages_in_flight.val());
        self.rx_counters.receiver[0].next = self.rx_engine.inbound_expired.val();
        self.rx_counters.receiver[1].next =
            bit_cast::<32, OCCUPANCY_BITS>(self.rpc_table.occupancy.val());
        self.rx_counters.receiver[2].next = self.control_sender.busys_sent.val();
        self.rx_counters.receiver[3].next = self.control_sender.unknowns_sent.val();
        self.rx_counters.receiver[4].next = self.cpl_writer.dropped.val();
        self.arp.clock.next = self.clock.val();
        self.arp.reset.next = self.rpc_reset.val();
        self.arp.s_axis_tdata.next = self.s_axis_rx_tdata.val();
        self.arp.s_axis_tkeep.next = self.s_axis_rx_tkeep.val();
        self.arp.s_axis_tvalid.next = self.s_axis_rx_tvalid.val();
        self.arp.s_axis_tlast.next = self.s_axis_rx_tlast.val();
        self.arp.local_mac.next = self.netif.mac.val();
        self.arp.local_ip.next = self.netif.ipv4.val();

        self.rx_engine.clock.next = self.clock.val();
        self.rx_engine.reset.next = self.rpc_reset.val();
        self.rx_engine.s_axis_tdata.next = self.rx_fifo.m_axis_tdata.val();
        self.rx_engine.s_axis_tkeep.next = self.rx_fifo.m_axis_tkeep.val();
        self.rx_engine.s_axis_tvalid.next = self.rx_fifo.m_axis_tvalid.val();
        self.rx_engine.s_axis_tlast.next = self.rx_fifo.m_axis_tlast.val();
        self.rx_fifo.m_axis_tready.next = self.rx_engine.s_axis_tready.val();
        self.rpc_table.clock.next = self.clock.val();
        self.rpc_table.reset.next = self.rpc_reset.val();
        self.rpc_table.s_req_valid.next = self.rx_engine.m_rpc_valid.val();
        self.rx_engine.m_rpc_ready.next = self.rpc_table.s_req_ready.val();
        self.rpc_table.s_req_op.next = self.rx_engine.m_rpc_op.val();
        self.rpc_table.s_req_key.next = self.rx_engine.m_rpc_key.val();
        self.rx_engine.s_rpc_valid.next = self.rpc_table.m_rsp_valid.val();
        self.rx_engine.s_rpc_hit.next = self.rpc_table.m_rsp_hit.val();
        self.rx_engine.s_rpc_inserted.next = self.rpc_table.m_rsp_inserted.val();
        self.rx_engine.s_rpc_full.next = self.rpc_table.m_rsp_full.val();
        self.rx_engine.s_rpc_slot.next = self.rpc_table.m_rsp_slot.val();
        self.rx_engine.s_rpc_key.next = self.rpc_table.m_rsp_key.val();
        self.bpage_pool.clock.next = self.clock.val();
        self.bpage_pool.reset.next = self.rpc_reset.val();
        self.bpage_pool.sel_endpoint.next = self.rx_engine.sel_endpoint.val();
        self.bpage_pool.pop.next = self.rx_engine.bpage_pop.val();
        self.rx_engine.bpage_valid.next = self.bpage_pool.head_valid.val();
        self.rx_engine.bpage_index.next = self.bpage_pool.head_index.val();
        // One CSR write per cycle: at most one endpoint pushes a bpage (a
        // cycle after the write, from its register). The
        // RX engine returns an expired message's bpages in the cycles the
        // host does not push.
        self.bpage_pool.push_valid.next = self.rx_engine.m_bpage_return_valid.val();
        self.bpage_pool.push_endpoint.next = self.rx_engine.m_bpage_return_endpoint.val();
        self.bpage_pool.push_index.next = self.rx_engine.m_bpage_return_index.val();
        self.rx_engine.m_bpage_return_ready.next = true;
        self.rx_engine.sel_rx_area.next = 0.into();
        self.rx_engine.bpage_free.next = 0.into();
        for e in 0..ENDPOINTS {
            self.rx_engine.ep_port[e].next = self.endpoints[e].port.val();
            self.endpoints[e].bpages_free.next = self.bpage_pool.free[e].val();
            if self.endpoints[e].bpage_push.val() {
                self.bpage_pool.push_valid.next = true;
                self.bpage_pool.push_endpoint.next = e.to_bits();
                self.bpage_pool.push_index.next = self.endpoints[e].bpage_push_index.val();
                self.rx_engine.m_bpage_return_ready.next = false;
            }
            if self.rx_engine.sel_endpoint.val().index() == e {
                self.rx_engine.sel_rx_area.next = self.endpoints[e].rx_area.val();
                self.rx_engine.bpage_free.next = self.bpage_pool.free[e].val();
            }
        }

        // ---- grants: the RX engine's events -> the grant scheduler ->
        // GRANT frames (the control sender) ----
        self.grant_csr.clock.next = self.clock.val();
        self.grant_csr.reset.next = self.reset.val();
        self.grant_csr.offset.next = self.csr_addr.val().get_bits::<8>(0);
        self.grant_csr.select.next = self.csr_page.val() == self.grant_page.val();
        self.grant_csr.wr_en.next = self.csr_wr_en.val();
        self.grant_csr.wr_data.next = self.csr_wr_data.val();
        self.grant_csr.total_incoming.next = self.grant_scheduler.total_incoming.val();
        self.grant_csr.active_count.next = self.grant_scheduler.active_count.val();
        self.grant_csr.grants_sent.next = self.control_sender.grants_sent.val();
        self.grant_scheduler.clock.next = self.clock.val();
        self.grant_scheduler.reset.next = self.rpc_reset.val();
        self.grant_scheduler.cfg_max_incoming.next = self.grant_csr.max_incoming.val();
        self.grant_scheduler.cfg_max_overcommit.next = self.grant_csr.max_overcommit.val();
        self.grant_scheduler.cfg_window.next = self.grant_csr.window.val();
        self.grant_scheduler.cfg_max_sched_prio.next = self.grant_csr.max_sched_prio.val();
        self.grant_scheduler.cfg_unsched_bytes.next = self.grant_csr.unsched_bytes.val();
        self.grant_scheduler.cfg_grant_fifo_fraction.next =
            self.grant_csr.grant_fifo_fraction.val();
        self.grant_scheduler.cfg_fifo_grant_increment.next =
            self.grant_csr.fifo_grant_increment.val();
        self.grant_scheduler.s_evt_valid.next = self.rx_engine.m_evt_valid.val();
        self.rx_engine.m_evt_ready.next = self.grant_scheduler.s_evt_ready.val();
        self.grant_scheduler.s_evt_slot.next =
            bit_cast::<SCHED_SLOT_BITS, SLOT_BITS>(self.rx_engine.m_evt_slot.val());
        self.grant_scheduler.s_evt_remove.next = self.rx_engine.m_evt_remove.val();
        self.grant_scheduler.s_evt_length.next = self.rx_engine.m_evt_length.val();
        self.grant_scheduler.s_evt_received.next = self.rx_engine.m_evt_received.val();
        self.grant_scheduler.s_evt_incoming.next = self.rx_engine.m_evt_incoming.val();
        // ---- the resend timer: the RX engine's record -> RESENDs (the
        // control sender) ----
        self.timer_csr.clock.next = self.clock.val();
        self.timer_csr.reset.next = self.reset.val();
        self.timer_csr.ext_tick.next = self.timer_tick.val();
        self.timer_csr.offset.next = self.csr_addr.val().get_bits::<8>(0);
        self.timer_csr.select.next = self.csr_page.val() == self.timer_page.val();
        self.timer_csr.wr_en.next = self.csr_wr_en.val();
        self.timer_csr.wr_data.next = self.csr_wr_data.val();
        self.timer_csr.resends_sent.next = self.resend_timer.resends.val();
        self.timer_csr.sweeps.next = self.resend_timer.sweeps.val();
        self.resend_timer.clock.next = self.clock.val();
        self.resend_timer.reset.next = self.rpc_reset.val();
        self.resend_timer.tick.next = self.timer_csr.tick.val();
        self.resend_timer.cfg_resend_ticks.next = self.timer_csr.resend_ticks.val();
        self.resend_timer.cfg_resend_interval.next = self.timer_csr.resend_interval.val();
        self.resend_timer.s_watch_valid.next = self.rx_engine.m_watch_valid.val();
        self.resend_timer.s_watch_slot.next = self.rx_engine.m_watch_slot.val();
        self.resend_timer.s_watch_live.next = self.rx_engine.m_watch_live.val();
        self.resend_timer.s_watch_from.next = self.rx_engine.m_watch_from.val();
        self.resend_timer.s_watch_to.next = self.rx_engine.m_watch_to.val();
        self.resend_timer.s_watch_open.next = self.rx_engine.m_watch_open.val();
        self.resend_timer.s_watch_new.next = self.rx_engine.m_watch_new.val();
        // Every GRANT the control sender takes: what we granted, per slot.
        self.resend_timer.s_grant_valid.next =
            self.grant_scheduler.m_grant_valid.val() & self.control_sender.s_grant_ready.val();
        self.resend_timer.s_grant_slot.next =
            bit_cast::<SLOT_BITS, SCHED_SLOT_BITS>(self.grant_scheduler.m_grant_slot.val());
        self.resend_timer.s_grant_offset.next = self.grant_scheduler.m_grant_offset.val();
        self.resend_timer.cfg_timeout_ticks.next = self.timer_csr.timeout_ticks.val();
        // A RESEND goes to the control sender, an expiry to the RX engine.
        self.control_sender.s_resend_valid.next =
            self.resend_timer.m_resend_valid.val() & !self.resend_timer.m_resend_expire.val();
        self.rx_engine.s_expire_valid.next =
            self.resend_timer.m_resend_valid.val() & self.resend_timer.m_resend_expire.val();
        self.rx_engine.s_expire_slot.next = self.resend_timer.m_resend_slot.val();
        // Responses released: the RX engine forgets the requests they answer.
        self.rx_engine.s_served_valid.next = self.tx_engine.m_served_valid.val();
        self.tx_engine.m_served_ready.next = self.rx_engine.s_served_ready.val();
        self.rx_engine.s_served_key.next = self.tx_engine.m_served_key.val();
        self.resend_timer.m_resend_ready.next = self.control_sender.s_resend_ready.val();
        if self.resend_timer.m_resend_expire.val() {
            self.resend_timer.m_resend_ready.next = self.rx_engine.s_expire_ready.val();
        }
        self.control_sender.s_resend_slot.next = self.resend_timer.m_resend_slot.val();
        self.control_sender.s_resend_offset.next = self.resend_timer.m_resend_offset.val();
        self.control_sender.s_resend_length.next = self.resend_timer.m_resend_length.val();
        self.control_sender.clock.next = self.clock.val();
        self.control_sender.reset.next = self.rpc_reset.val();
        self.control_sender.local_mac.next = self.netif.mac.val();
        self.control_sender.local_ip.next = self.netif.ipv4.val();
        self.control_sender.s_peer_valid.next = self.rx_engine.m_peer_valid.val();
        self.control_sender.s_peer_slot.next = self.rx_engine.m_peer_slot.val();
        self.control_sender.s_peer_mac.next = self.rx_engine.m_peer_mac.val();
        self.control_sender.s_peer_ip.next = self.rx_engine.m_peer_ip.val();
        self.control_sender.s_peer_port.next = self.rx_engine.m_peer_port.val();
        self.control_sender.s_peer_local_port.next = self.rx_engine.m_peer_local_port.val();
        self.control_sender.s_peer_local_id.next = self.rx_engine.m_peer_local_id.val();
        self.control_sender.s_peer_stale_cutoffs.next = self.rx_engine.m_peer_stale_cutoffs.val();
        self.control_sender.s_ack_valid.next = self.rx_engine.m_ack_valid.val();
        self.control_sender.s_ack_mac.next = self.rx_engine.m_ack_mac.val();
        self.control_sender.s_ack_ip.next = self.rx_engine.m_ack_ip.val();
        self.control_sender.s_ack_server_port.next = self.rx_engine.m_ack_server_port.val();
        self.control_sender.s_ack_local_port.next = self.rx_engine.m_ack_local_port.val();
        self.control_sender.s_ack_client_id.next = self.rx_engine.m_ack_client_id.val();
        self.control_sender.s_grant_valid.next = self.grant_scheduler.m_grant_valid.val();
        self.grant_scheduler.m_grant_ready.next = self.control_sender.s_grant_ready.val();
        self.control_sender.s_grant_slot.next =
            bit_cast::<SLOT_BITS, SCHED_SLOT_BITS>(self.grant_scheduler.m_grant_slot.val());
        self.control_sender.s_grant_offset.next = self.grant_scheduler.m_grant_offset.val();
        self.control_sender.s_grant_priority.next = self.grant_scheduler.m_grant_priority.val();

        // ---- TX: engine -> header builder -> framer -> MAC ----
        self.tx_engine.clock.next = self.clock.val();
        self.tx_engine.reset.next = self.rpc_reset.val();
        self.tx_engine.local_mac.next = self.netif.mac.val();
        self.tx_engine.local_ip.next = self.netif.ipv4.val();
        self.tx_engine.cfg_unsched_bytes.next = self.grant_csr.unsched_bytes.val();
        self.tx_engine.s_event_valid.next = self.rx_engine.m_sender_valid.val();
        self.tx_engine.s_event_kind.next = self.rx_engine.m_sender_kind.val();
        self.tx_engine.s_event_key.next = self.rx_engine.m_sender_key.val();
        self.tx_engine.s_event_offset.next = self.rx_engine.m_sender_offset.val();
        self.tx_engine.s_event_length.next = self.rx_engine.m_sender_length.val();
        self.tx_engine.s_event_priority.next = self.rx_engine.m_sender_priority.val();
        self.tx_engine.s_event_mac.next = self.rx_engine.m_sender_mac.val();
        self.tx_engine.s_event_port.next = self.rx_engine.m_sender_port.val();
        self.tx_engine.s_event_known.next = self.rx_engine.m_sender_known.val();
        self.tx_engine.tick.next = self.timer_csr.tick.val();
        self.tx_engine.cfg_timeout_ticks.next = self.timer_csr.timeout_ticks.val();
        self.tx_engine.cfg_resend_ticks.next = self.timer_csr.resend_ticks.val();
        self.tx_engine.cfg_resend_interval.next = self.timer_csr.resend_interval.val();
        self.control_sender.s_nudge_valid.next = self.tx_engine.m_nudge_valid.val();
        self.tx_engine.m_nudge_ready.next = self.control_sender.s_nudge_ready.val();
        self.control_sender.s_nudge_kind.next = self.tx_engine.m_nudge_kind.val();
        self.control_sender.s_nudge_mac.next = self.tx_engine.m_nudge_mac.val();
        self.control_sender.s_nudge_ip.next = self.tx_engine.m_nudge_ip.val();
        self.control_sender.s_nudge_peer_port.next = self.tx_engine.m_nudge_peer_port.val();
        self.control_sender.s_nudge_local_port.next = self.tx_engine.m_nudge_local_port.val();
        self.control_sender.s_nudge_local_id.next = self.tx_engine.m_nudge_local_id.val();
        self.control_sender.s_nudge_length.next = self.tx_engine.m_nudge_length.val();
        self.tx_engine.s_cutoffs_valid.next = self.rx_engine.m_cutoffs_valid.val();
        self.tx_engine.s_cutoffs_ip.next = self.rx_engine.m_cutoffs_ip.val();
        self.tx_engine.s_cutoffs_version.next = self.rx_engine.m_cutoffs_version.val();
        self.tx_engine.s_cutoffs_limits.next = self.rx_engine.m_cutoffs_limits.val();
        self.tx_engine.s_owed_ack_valid.next = self.rx_engine.m_owed_ack_valid.val();
        self.tx_engine.s_owed_ack_ip.next = self.rx_engine.m_owed_ack_ip.val();
        self.tx_engine.s_owed_ack_client_id.next = self.rx_engine.m_owed_ack_client_id.val();
        self.tx_engine.s_owed_ack_server_port.next = self.rx_engine.m_owed_ack_server_port.val();
        self.tx_engine.sel_tx_ring.next = 0.into();
        self.tx_engine.sel_tx_ring_log2.next = 0.into();
        self.cpl_writer.sel_ring.next = 0.into();
        self.cpl_writer.sel_ring_log2.next = 0.into();
        self.cpl_writer.sel_consumer.next = 0.into();
        self.cpl_writer.sel_open.next = false;
        for e in 0..ENDPOINTS {
            if self.tx_engine.sel_endpoint.val().index() == e {
                self.tx_engine.sel_tx_ring.next = self.endpoints[e].tx_ring.val();
                self.tx_engine.sel_tx_ring_log2.next = self.endpoints[e].tx_ring_log2.val();
            }
            if self.cpl_writer.sel_endpoint.val().index() == e {
                self.cpl_writer.sel_ring.next = self.endpoints[e].cpl_ring.val();
                self.cpl_writer.sel_ring_log2.next = self.endpoints[e].cpl_ring_log2.val();
                self.cpl_writer.sel_consumer.next = self.endpoints[e].cpl_consumer.val();
                self.cpl_writer.sel_open.next = self.endpoints[e].port.val() != 0;
            }
        }
        self.m_dma_rd_req_valid.next = self.tx_engine.m_dma_rd_req_valid.val();
        self.tx_engine.m_dma_rd_req_ready.next = self.m_dma_rd_req_ready.val();
        self.m_dma_rd_req_addr.next = self.tx_engine.m_dma_rd_req_addr.val();
        self.m_dma_rd_req_len.next = self.tx_engine.m_dma_rd_req_len.val();
        self.m_dma_rd_req_tag.next = self.tx_engine.m_dma_rd_req_tag.val();
        self.tx_engine.s_dma_rd_rsp_valid.next = self.s_dma_rd_rsp_valid.val();
        self.s_dma_rd_rsp_ready.next = self.tx_engine.s_dma_rd_rsp_ready.val();
        if (self.rd_discard.q.val() != 0) | self.ports_held.val() {
            // No new reads while a reset is pending or answers of before
            // one are still coming.
            self.m_dma_rd_req_valid.next = false;
            self.tx_engine.m_dma_rd_req_ready.next = false;
        }
        if self.rd_discard.q.val() != 0 {
            self.tx_engine.s_dma_rd_rsp_valid.next = false;
            self.s_dma_rd_rsp_ready.next = true;
        }
        // A read issued and another's answer ending in the same cycle leave
        // the count as it was. (Counting only the answer once let the count
        // fall one short: after a card reset, an old answer then came through
        // undiscarded to an engine expecting nothing, and stopped the port.)
        self.rd_issued.next = self.m_dma_rd_req_valid.val() & self.m_dma_rd_req_ready.val();
        self.rd_answered.next = self.s_dma_rd_rsp_valid.val()
            & self.s_dma_rd_rsp_ready.val()
            & self.s_dma_rd_rsp_last.val();
        self.rd_outstanding_next.next = self.rd_outstanding.q.val();
        if self.rd_issued.val() & !self.rd_answered.val() {
            self.rd_outstanding_next.next = self.rd_outstanding.q.val() + 1;
        }
        if self.rd_answered.val() & !self.rd_issued.val() {
            self.rd_outstanding_next.next = self.rd_outstanding.q.val() - 1;
        }
        if self.rd_answered.val() & (self.rd_discard.q.val() != 0) {
            self.rd_discard.d.next = self.rd_discard.q.val() - 1;
        }
        self.rd_outstanding.d.next = self.rd_outstanding_next.val();
        if self.card_reset_pulse.q.val() {
            self.rd_discard.d.next = self.rd_outstanding_next.val();
        }
        if self.reset.val() {
            self.rd_outstanding.d.next = 0.into();
            self.rd_discard.d.next = 0.into();
        }
        self.tx_engine.s_dma_rd_rsp_data.next = self.s_dma_rd_rsp_data.val();
        self.tx_engine.s_dma_rd_rsp_tag.next = self.s_dma_rd_rsp_tag.val();
        self.tx_engine.s_dma_rd_rsp_last.next = self.s_dma_rd_rsp_last.val();
        self.tx_engine.s_dma_rd_rsp_error.next = self.s_dma_rd_rsp_error.val();

        self.tx_header.clock.next = self.clock.val();
        self.tx_header.reset.next = self.rpc_reset.val();
        self.tx_header.in_valid.next = self.tx_engine.hdr_valid.val();
        self.tx_header.dst_mac.next = self.tx_engine.hdr_dst_mac.val();
        self.tx_header.src_mac.next = self.tx_engine.hdr_src_mac.val();
        self.tx_header.src_ip.next = self.tx_engine.hdr_src_ip.val();
        self.tx_header.dst_ip.next = self.tx_engine.hdr_dst_ip.val();
        self.tx_header.level.next = self.tx_engine.hdr_level.val();
        self.tx_header.ip_id.next = 0.into();
        self.tx_header.packet_type.next = self.tx_engine.hdr_packet_type.val();
        self.tx_header.sport.next = self.tx_engine.hdr_sport.val();
        self.tx_header.dport.next = self.tx_engine.hdr_dport.val();
        self.tx_header.sender_id.next = self.tx_engine.hdr_sender_id.val();
        self.tx_header.data_offset.next = self.tx_engine.hdr_data_offset.val();
        self.tx_header.message_length.next = self.tx_engine.hdr_message_length.val();
        self.tx_header.incoming.next = self.tx_engine.hdr_incoming.val();
        self.tx_header.ack_client_id.next = self.tx_engine.hdr_ack_client_id.val();
        self.tx_header.ack_server_port.next = self.tx_engine.hdr_ack_server_port.val();
        self.tx_header.cutoff_version.next = self.tx_engine.hdr_cutoff_version.val();
        self.tx_header.retransmit.next = self.tx_engine.hdr_retransmit.val();
        self.tx_header.payload_len.next = self.tx_engine.hdr_payload_len.val();
        self.tx_header.ctl_offset.next = 0.into();
        self.tx_header.ctl_length.next = 0.into();
        self.tx_header.ctl_priority.next = 0.into();
        self.tx_header.body.next = 0.into();

        self.tx_framer.clock.next = self.clock.val();
        self.tx_framer.reset.next = self.rpc_reset.val();
        // The engine starts at most two headers the framer has not taken,
        // so the slice always has room for what the builder puts out.
        self.tx_header_slice.clock.next = self.clock.val();
        self.tx_header_slice.reset.next = self.rpc_reset.val();
        self.tx_header_slice.s_valid.next = self.tx_header.out_valid.val();
        self.tx_header_slice.s_data.next = (bit_cast::<1056, 512>(self.tx_header.out_beat0.val())
            << 544)
            | (bit_cast::<1056, 512>(self.tx_header.out_beat1.val()) << 32)
            | (bit_cast::<1056, 16>(self.tx_header.out_frame_len.val()) << 16)
            | bit_cast::<1056, 16>(self.tx_header.out_header_len.val());
        self.tx_framer.s_hdr_valid.next = self.tx_header_slice.m_valid.val();
        self.tx_framer.s_hdr_beat0.next = self.tx_header_slice.m_data.val().get_bits::<512>(544);
        self.tx_framer.s_hdr_beat1.next = self.tx_header_slice.m_data.val().get_bits::<512>(32);
        self.tx_framer.s_hdr_frame_len.next = self.tx_header_slice.m_data.val().get_bits::<16>(16);
        self.tx_framer.s_hdr_header_len.next = self.tx_header_slice.m_data.val().get_bits::<16>(0);
        self.tx_header_slice.m_ready.next = self.tx_framer.s_hdr_ready.val();
        self.tx_engine.hdr_taken.next =
            self.tx_framer.s_hdr_valid.val() & self.tx_framer.s_hdr_ready.val();
        self.tx_framer.s_axis_pay_tdata.next = self.tx_engine.m_pay_tdata.val();
        self.tx_framer.s_axis_pay_tkeep.next = self.tx_engine.m_pay_tkeep.val();
        self.tx_framer.s_axis_pay_tvalid.next = self.tx_engine.m_pay_tvalid.val();
        self.tx_framer.s_axis_pay_tlast.next = self.tx_engine.m_pay_tlast.val();
        self.tx_engine.m_pay_tready.next = self.tx_framer.s_axis_pay_tready.val();
        // The TX port: the framer's frames, and between them GRANTs and ARP
        // replies (one beat). A frame, once started, keeps the port to its
        // last beat; between frames a GRANT goes first, then ARP, then DATA.
        self.control_port.next = self.control_in_frame.q.val()
            | (self.control_sender.m_axis_tvalid.val() & !self.tx_in_frame.q.val());
        self.arp_grant.next =
            self.arp.m_axis_tvalid.val() & !self.tx_in_frame.q.val() & !self.control_port.val();
        self.m_axis_tx_tdata.next = self.tx_framer.m_axis_tx_tdata.val();
        self.m_axis_tx_tkeep.next = self.tx_framer.m_axis_tx_tkeep.val();
        self.m_axis_tx_tvalid.next = self.tx_framer.m_axis_tx_tvalid.val();
        self.m_axis_tx_tlast.next = self.tx_framer.m_axis_tx_tlast.val();
        self.m_axis_tx_tuser.next =
            self.tx_engine.frame_error.val() & self.tx_framer.m_axis_tx_tlast.val();
        if self.arp_grant.val() {
            self.m_axis_tx_tdata.next = self.arp.m_axis_tdata.val();
            self.m_axis_tx_tkeep.next = self.arp.m_axis_tkeep.val();
            self.m_axis_tx_tvalid.next = true;
            self.m_axis_tx_tlast.next = true;
            self.m_axis_tx_tuser.next = false;
        }
        if self.control_port.val() {
            self.m_axis_tx_tdata.next = self.control_sender.m_axis_tdata.val();
            self.m_axis_tx_tkeep.next = self.control_sender.m_axis_tkeep.val();
            self.m_axis_tx_tvalid.next = self.control_sender.m_axis_tvalid.val();
            self.m_axis_tx_tlast.next = self.control_sender.m_axis_tlast.val();
            self.m_axis_tx_tuser.next = false;
        }
        // A card reset waiting: no new frame starts.
        self.mac_ready.next = self.m_axis_tx_tready.val();
        if self.ports_held.val() & !self.tx_in_frame.q.val() & !self.control_in_frame.q.val() {
            self.m_axis_tx_tvalid.next = false;
            self.mac_ready.next = false;
        }
        self.tx_framer.m_axis_tx_tready.next =
            self.mac_ready.val() & !self.arp_grant.val() & !self.control_port.val();
        self.arp.m_axis_tready.next = self.mac_ready.val() & self.arp_grant.val();
        self.control_sender.m_axis_tready.next = self.mac_ready.val() & self.control_port.val();
        if self.tx_framer.m_axis_tx_tvalid.val()
            & self.mac_ready.val()
            & !self.arp_grant.val()
            & !self.control_port.val()
        {
            self.tx_in_frame.d.next = !self.tx_framer.m_axis_tx_tlast.val();
        }
        if self.control_port.val() & self.control_sender.m_axis_tvalid.val() & self.mac_ready.val()
        {
            self.control_in_frame.d.next = !self.control_sender.m_axis_tlast.val();
        }
        if self.rpc_reset.val() {
            self.tx_in_frame.d.next = false;
            self.control_in_frame.d.next = false;
        }

        // ---- completions: the RX engine first (an application waits on
        // it), the TX engine when RX has none ----
        self.cpl_writer.clock.next = self.clock.val();
        self.cpl_writer.reset.next = self.rpc_reset.val();
        self.cpl_writer.s_cpl_valid.next =
            self.rx_engine.m_cpl_valid.val() | self.tx_engine.m_cpl_valid.val();
        self.cpl_writer.s_cpl_endpoint.next = self.tx_engine.m_cpl_endpoint.val();
        self.cpl_writer.s_cpl_record.next = self.tx_engine.m_cpl_record.val();
        if self.rx_engine.m_cpl_valid.val() {
            self.cpl_writer.s_cpl_endpoint.next = self.rx_engine.m_cpl_endpoint.val();
            self.cpl_writer.s_cpl_record.next = self.rx_engine.m_cpl_record.val();
        }
        self.rx_engine.m_cpl_ready.next = self.cpl_writer.s_cpl_ready.val();
        self.tx_engine.m_cpl_ready.next =
            self.cpl_writer.s_cpl_ready.val() & !self.rx_engine.m_cpl_valid.val();

        // ---- Interrupts ----
        self.irq.clock.next = self.clock.val();
        self.irq.reset.next = self.reset.val();
        self.irq.offset.next = self.csr_addr.val().get_bits::<8>(0);
        self.irq.select.next = self.csr_page.val() == self.interrupt_page.val();
        self.irq.wr_en.next = self.csr_wr_en.val();
        self.irq.wr_data.next = self.csr_wr_data.val();
        self.irq.msix_enable.next = self.msix_enable.val();
        self.irq.msix_mask.next = self.msix_mask.val();
        for e in 0..ENDPOINTS {
            self.irq.producer[e].next = self.cpl_writer.producer[e].val();
            self.irq.consumer[e].next = self.endpoints[e].cpl_consumer.val();
        }

        // ---- DMA writes: RX payload (through its FIFO and slice), whole
        // transactions, else completions, else interrupt messages (each
        // behind the completion it announces) ----
        self.rx_wr_fifo.clock.next = self.clock.val();
        self.rx_wr_fifo.reset.next = self.rpc_reset.val();
        self.rx_wr_fifo.s_valid.next = self.rx_engine.m_dma_wr_valid.val();
        self.rx_engine.m_dma_wr_ready.next = self.rx_wr_fifo.s_ready.val();
        self.rx_wr_fifo.s_addr.next = self.rx_engine.m_dma_wr_addr.val();
        self.rx_wr_fifo.s_data.next = self.rx_engine.m_dma_wr_data.val();
        self.rx_wr_fifo.s_strb.next = self.rx_engine.m_dma_wr_strb.val();
        self.rx_wr_fifo.s_last.next = self.rx_engine.m_dma_wr_last.val();
        self.rx_wr_slice.clock.next = self.clock.val();
        self.rx_wr_slice.reset.next = self.rpc_reset.val();
        self.rx_wr_slice.s_valid.next = self.rx_wr_fifo.m_valid.val();
        self.rx_wr_fifo.m_ready.next = self.rx_wr_slice.s_ready.val();
        self.rx_wr_slice.s_addr.next = self.rx_wr_fifo.m_addr.val();
        self.rx_wr_slice.s_data.next = self.rx_wr_fifo.m_data.val();
        self.rx_wr_slice.s_strb.next = self.rx_wr_fifo.m_strb.val();
        self.rx_wr_slice.s_last.next = self.rx_wr_fifo.m_last.val();
        // Payload held anywhere on its way keeps the port: a completion
        // must not pass the payload it reports.
        self.rx_wr_grant.next = self.rx_wr_slice.m_valid.val()
            | self.rx_wr_fifo.holding.val()
            | self.rx_wr_busy.q.val();
        self.m_dma_wr_valid.next = self.irq.m_dma_wr_valid.val() & self.irq_turn.q.val();
        self.m_dma_wr_addr.next = self.irq.m_dma_wr_addr.val();
        self.m_dma_wr_data.next = self.irq.m_dma_wr_data.val();
        self.m_dma_wr_strb.next = self.irq.m_dma_wr_strb.val();
        self.m_dma_wr_last.next = self.irq.m_dma_wr_last.val();
        if self.cpl_writer.m_dma_wr_valid.val() & !self.irq_turn.q.val() {
            self.m_dma_wr_valid.next = true;
            self.m_dma_wr_addr.next = self.cpl_writer.m_dma_wr_addr.val();
            self.m_dma_wr_data.next = self.cpl_writer.m_dma_wr_data.val();
            self.m_dma_wr_strb.next = self.cpl_writer.m_dma_wr_strb.val();
            self.m_dma_wr_last.next = self.cpl_writer.m_dma_wr_last.val();
        }
        if self.rx_wr_grant.val() {
            self.m_dma_wr_valid.next = self.rx_wr_slice.m_valid.val();
            self.m_dma_wr_addr.next = self.rx_wr_slice.m_addr.val();
            self.m_dma_wr_data.next = self.rx_wr_slice.m_data.val();
            self.m_dma_wr_strb.next = self.rx_wr_slice.m_strb.val();
            self.m_dma_wr_last.next = self.rx_wr_slice.m_last.val();
        }
        // A card reset waiting: no new write transaction starts.
        self.wr_ready.next = self.m_dma_wr_ready.val();
        if self.ports_held.val() & !self.rx_wr_busy.q.val() {
            self.m_dma_wr_valid.next = false;
            self.wr_ready.next = false;
        }
        self.rx_wr_slice.m_ready.next = self.rx_wr_grant.val() & self.wr_ready.val();
        self.cpl_writer.m_dma_wr_ready.next =
            !self.rx_wr_grant.val() & !self.irq_turn.q.val() & self.wr_ready.val();
        self.irq.m_dma_wr_ready.next =
            !self.rx_wr_grant.val() & self.irq_turn.q.val() & self.wr_ready.val();
        // The turn is taken while no completion waits (a completion's
        // message is never ahead of it: the block counts an entry once its
        // beat has gone) and given back when the message has gone.
        if self.irq.m_dma_wr_valid.val() & !self.cpl_writer.m_dma_wr_valid.val() {
            self.irq_turn.d.next = true;
        }
        if self.irq_turn.q.val() & self.irq.m_dma_wr_ready.val() {
            self.irq_turn.d.next = false;
        }
        if self.reset.val() {
            self.irq_turn.d.next = false;
        }
        if self.rx_wr_slice.m_valid.val() & self.wr_ready.val() {
            self.rx_wr_busy.d.next = !self.rx_wr_slice.m_last.val();
        }
        if self.rpc_reset.val() {
            self.rx_wr_busy.d.next = false;
        }

        // ---- CSR read data: one cycle after the request ----
        self.rd_data.d.next = self.id.rd_data.val()
            | self.scratch.rd_data.val()
            | self.rx_counters.rd_data.val()
            | self.netif.rd_data.val()
            | self.grant_csr.rd_data.val()
            | self.timer_csr.rd_data.val()
            | self.irq.rd_data.val()
            | self.endpoints_rd_data.val();
        self.rd_valid.d.next = self.csr_rd_en.val() & !self.reset.val();
        self.csr_rd_data.next = self.rd_data.q.val();
        self.csr_rd_valid.next = self.rd_valid.q.val();
    }
}

//! The simulated card: the core's RTL (Verilator) with everything a real card
//! puts around it, served from Rust each clock cycle.
//!
//! DESIGN NOTES
//! ------------
//! - BAR: [`Card::csr_read`] and [`Card::csr_write`] drive the core's CSR port
//!   and keep the rest of the card running while they do, as a BAR access on
//!   PCIe would.
//! - DMA: the core's read-request, read-response and write ports are served
//!   by [`PcieModel`] over [`HostMemory`], with its latency and bandwidth. A
//!   DMA *write* outside the regions the host mapped fails the simulation at
//!   once (the IOMMU would have blocked it; on a real card it is a bug that
//!   corrupts nothing, here it must be loud). A DMA *read* outside them is
//!   answered with error beats, as a PCIe completer answers a request the
//!   IOMMU refused, so the core can report a bad descriptor and go on.
//!   A fuzzer, which must report a fault with the seed that made it rather
//!   than die, asks for writes to be refused and kept instead
//!   ([`Card::keep_dma_faults`]): the beat is taken and dropped, as an IOMMU
//!   drops it, and the fault waits in [`Card::take_dma_faults`].
//! - Ethernet: frames the core transmits are collected with the cycle their
//!   last beat left (a frame sent with `tuser` on its last beat is one the MAC
//!   would send with a bad FCS: it is counted and dropped, never delivered);
//!   frames given to [`Card::receive`] enter the core's RX port back to back.
//!   The MAC takes the TX stream at its line rate (100 Gb/s unless
//!   [`Card::set_mac_gbps`] says otherwise), as the CMAC's TX interface
//!   does: a beat passes when its credit of bit times is not negative and
//!   costs its bytes (and, on a frame's last beat, the preamble, FCS and gap
//!   of `FRAMING_BYTES`); the credit refills at the line rate and an idle
//!   MAC banks at most one cycle of it. The core's port is 512 bits at 250
//!   MHz, 128 Gb/s: without this a core could run ahead of the wire, and
//!   frames would queue in the cable, where no scheduling of the core's
//!   reaches them.
//!
//! - Board: a card made [`Card::with_board`] also carries the board's logic
//!   and flash (`board`): BAR accesses with address bit 23 set go to the
//!   board's register block instead of the core, as the board top level
//!   splits them. When the board reboots the FPGA, the whole card goes away
//!   (BAR reads answer all-ones, writes are lost) until the new image runs;
//!   then the core starts afresh out of reset (host memory stays).
//! - Sleeping: [`Card::sleep_cycles`] lets a host sleep cheaply during
//!   flashing. While the board's flash port is idle and the core has nothing
//!   in flight (no DMA read, no frame in or out), the time passes for the
//!   board and its flash chip without clocking any RTL; the core's clock
//!   does not run for it, so the core's cycle count does not include it.
//!   Otherwise it steps cycle by cycle, exactly.
//!
//! Order within a cycle: read the core's settled outputs, answer them (write
//! beat before read request: the PCIe model's ordering rule), present the
//! inputs, evaluate, and only then count a handshake as done: AXI's rule is
//! that a transfer happens at the edge where valid and ready are both high.

use std::collections::VecDeque;

use crate::axis::{frame_to_beats, Beat};
use crate::board::{Board, BoardConfig, BoardEvent};
use crate::cable::FRAMING_BYTES;
use crate::csr::{self, CsrPort};
use crate::host_memory::{DmaFault, ExpectOk, HostMemory, BEAT_BYTES};
use crate::pcie::{lanes_to_words, words_to_lanes, PcieConfig, PcieModel, ReadBeat, ReadError};
use crate::{HomaCore, Sim};

/// The MAC's line rate unless [`Card::set_mac_gbps`] changes it.
pub const DEFAULT_MAC_GBPS: i64 = 100;

/// A frame the card transmitted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TxFrame {
    /// Cycle in which its last beat left the core.
    pub cycle: u64,
    pub bytes: Vec<u8>,
}

/// What the card did besides its frames.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CardStats {
    pub tx_frames: u64,
    /// Frames sent with `tuser` (spoiled FCS): dropped, not delivered.
    pub tx_frames_spoiled: u64,
    pub rx_frames: u64,
    /// DMA reads refused by the IOMMU model and answered with error beats.
    pub dma_read_faults: u64,
    /// DMA write beats refused by the IOMMU model (only when kept,
    /// [`Card::keep_dma_faults`]; otherwise a refused write ends the run).
    pub dma_write_faults: u64,
}

/// The card: core, PCIe link, host memory, Ethernet port.
pub struct Card {
    core: Sim<HomaCore>,
    /// The waveform's name, and whether it is kept on failure: for the core
    /// a reboot builds.
    name: String,
    traced: bool,
    /// Core cycles of cores before the current one (each reboot starts a new
    /// core at cycle 0).
    cycle_base: u64,
    /// The board around the core, on a card made `with_board`.
    board: Option<Board>,
    pcie: PcieModel,
    /// The response beat on offer to the core, until it takes it.
    rsp_on_offer: Option<(ReadBeat, bool)>,
    /// Error beats owed for refused reads: (tag, last).
    fault_beats: VecDeque<(u8, bool)>,
    /// Beats of the frame being transmitted.
    tx_partial: Vec<u8>,
    transmitted: Vec<TxFrame>,
    rx_beats: VecDeque<Beat>,
    stats: CardStats,
    /// The MAC holds `tready` low on this many cycles in 1000 (drawn from
    /// `tx_stall_state`, a deterministic LCG): back-pressure from the port.
    tx_stall_per_mille: u32,
    tx_stall_state: u64,
    /// The MAC's line rate in bits per cycle (0: it takes a beat every
    /// cycle), and its credit of bit times (see the module notes).
    mac_bits_per_cycle: i64,
    mac_credit_bits: i64,
    /// Refused DMA writes, when kept rather than fatal.
    dma_faults: Option<Vec<DmaFault>>,
    /// A tick owed to the core's `timer_tick` input ([`Card::timer_tick`]).
    timer_tick: bool,
}

impl Card {
    /// A card whose core has been reset, with empty host memory; its
    /// waveform is kept in `target/vcd/<name>.vcd` only if the thread panics.
    pub fn new(name: &str, pcie: PcieConfig) -> Card {
        Self::build(name, true, pcie)
    }

    /// A card in a board: the core, and the board's register block, flash
    /// and configuration logic (`crate::board`), running the golden image.
    pub fn with_board(name: &str, pcie: PcieConfig, board: BoardConfig) -> Card {
        let mut card = Self::build(name, true, pcie);
        card.board = Some(Board::new(name, board));
        card
    }

    /// As [`Card::new`] without the waveform (unless `HOMA_VCD` asks for
    /// one): tracing every signal costs most of the simulation's time, so
    /// long runs (the demo, benchmarks) use this.
    pub fn untraced(name: &str, pcie: PcieConfig) -> Card {
        Self::build(name, false, pcie)
    }

    fn new_core(name: &str, traced: bool) -> Sim<HomaCore> {
        let mut core: Sim<HomaCore> = if traced {
            Sim::traced_on_failure(name)
        } else {
            Sim::new(name)
        };
        core.set_m_axis_tx_tready(true);
        core.reset(4);
        // The core's boot (`homa_hw::core::BOOT_CYCLES`): its grant
        // scheduler clears its trees before it takes traffic at full speed.
        let boot: u64 = env!("HOMA_CORE_BOOT_CYCLES").parse().unwrap();
        for _ in 0..boot {
            core.tick();
        }
        core
    }

    fn build(name: &str, traced: bool, pcie: PcieConfig) -> Card {
        Card {
            core: Self::new_core(name, traced),
            name: name.to_string(),
            traced,
            cycle_base: 0,
            board: None,
            pcie: PcieModel::new(pcie, HostMemory::new()),
            rsp_on_offer: None,
            fault_beats: VecDeque::new(),
            tx_partial: Vec::new(),
            transmitted: Vec::new(),
            rx_beats: VecDeque::new(),
            stats: CardStats::default(),
            tx_stall_per_mille: 0,
            tx_stall_state: 0,
            mac_bits_per_cycle: 4 * DEFAULT_MAC_GBPS,
            mac_credit_bits: 0,
            dma_faults: None,
            timer_tick: false,
        }
    }

    /// From now on a DMA write the IOMMU refuses is dropped and kept for
    /// [`Card::take_dma_faults`] (and counted) instead of ending the
    /// simulation with a panic.
    pub fn keep_dma_faults(&mut self) {
        self.dma_faults.get_or_insert_with(Vec::new);
    }

    /// The DMA writes refused since the last call (kept ones only).
    pub fn take_dma_faults(&mut self) -> Vec<DmaFault> {
        self.dma_faults
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Core clock cycles run, over every core this card has booted.
    pub fn cycle(&self) -> u64 {
        self.cycle_base + self.core.cycle()
    }

    /// The board, on a card made [`Card::with_board`].
    pub fn board(&self) -> Option<&Board> {
        self.board.as_ref()
    }

    /// The board, for tests to inject faults.
    pub fn board_mut(&mut self) -> Option<&mut Board> {
        self.board.as_mut()
    }

    /// Whether the card's logic is there to answer the BAR (always, without
    /// a board; with one, unless the FPGA is reconfiguring or bricked).
    pub fn is_up(&self) -> bool {
        self.board.as_ref().is_none_or(Board::is_up)
    }

    /// Lets `cycles` cycles pass while the host sleeps: exactly, stepping,
    /// unless the card is idle (module notes), when the time passes for the
    /// board alone at no cost.
    pub fn sleep_cycles(&mut self, cycles: u64) {
        let mut left = cycles;
        while left > 0 {
            let fast = match &self.board {
                Some(b) => !b.is_up() || (b.port_idle() && self.core_quiet()),
                None => false,
            };
            if !fast {
                self.step();
                left -= 1;
                continue;
            }
            let event = self.board.as_mut().unwrap().skip(left);
            self.board_event(event);
            return;
        }
    }

    /// Nothing in flight between the core and the rest of the card.
    fn core_quiet(&self) -> bool {
        self.pcie.outstanding_reads() == 0
            && self.rsp_on_offer.is_none()
            && self.fault_beats.is_empty()
            && self.rx_beats.is_empty()
            && self.tx_partial.is_empty()
    }

    fn board_event(&mut self, event: Option<BoardEvent>) {
        match event {
            Some(BoardEvent::Booted) => {
                // A new design: the core out of reset, the link empty.
                self.cycle_base += self.core.cycle();
                let boots = self.board.as_ref().map_or(0, |b| b.boots);
                self.core = Self::new_core(&format!("{}-boot{boots}", self.name), self.traced);
                let memory = std::mem::take(self.pcie.memory_mut());
                self.pcie = PcieModel::new(self.pcie.config().clone(), memory);
                self.rsp_on_offer = None;
                self.fault_beats.clear();
                self.tx_partial.clear();
                self.rx_beats.clear();
            }
            Some(BoardEvent::Reconfiguring) | None => {}
        }
    }

    pub fn memory(&self) -> &HostMemory {
        self.pcie.memory()
    }

    pub fn memory_mut(&mut self) -> &mut HostMemory {
        self.pcie.memory_mut()
    }

    pub fn pcie(&self) -> &PcieModel {
        &self.pcie
    }

    pub fn stats(&self) -> &CardStats {
        &self.stats
    }

    /// Sets the MAC's line rate (0: no limit, a beat every cycle).
    pub fn set_mac_gbps(&mut self, gbps: u32) {
        self.mac_bits_per_cycle = 4 * i64::from(gbps);
        self.mac_credit_bits = 0;
    }

    /// Makes the MAC hold off the core's TX stream on `per_mille` cycles in
    /// 1000, chosen pseudo-randomly from `seed` (0: never, the default).
    pub fn set_tx_backpressure(&mut self, per_mille: u32, seed: u64) {
        self.tx_stall_per_mille = per_mille;
        self.tx_stall_state = seed;
    }

    /// Clocks the core the reference way (see `Sim::set_reference_edges`).
    pub fn set_reference_edges(&mut self, on: bool) {
        self.core.set_reference_edges(on);
    }

    /// Queues a frame for the RX port; it enters after those queued before.
    pub fn receive(&mut self, frame: &[u8]) {
        self.rx_beats.extend(frame_to_beats(frame, 0));
    }

    /// Every frame handed to [`Card::receive`] has been taken by the core.
    pub fn rx_idle(&self) -> bool {
        self.rx_beats.is_empty()
    }

    /// Frames transmitted since the last call.
    pub fn take_transmitted(&mut self) -> Vec<TxFrame> {
        std::mem::take(&mut self.transmitted)
    }

    /// Writes a 32-bit register through the BAR.
    pub fn csr_write(&mut self, addr: u32, data: u32) {
        if !self.is_up() {
            self.step();
            return;
        }
        if let Some(board) = self.board_for(addr) {
            board.set_csr(addr, data, true, false);
            self.step();
            if let Some(board) = self.board.as_mut() {
                board.set_csr(addr, 0, false, false);
            }
            return;
        }
        csr::write(self, addr, data);
    }

    /// Reads a 32-bit register through the BAR. Panics if the core does not
    /// answer: a hung CSR read is a broken core. A card that is not up (its
    /// board reconfiguring the FPGA) answers all-ones, as the host's root
    /// complex does for a device gone from the link.
    pub fn csr_read(&mut self, addr: u32) -> u32 {
        if !self.is_up() {
            self.step();
            return u32::MAX;
        }
        if let Some(board) = self.board_for(addr) {
            board.set_csr(addr, 0, false, true);
            self.step();
            for _ in 0..csr::CSR_READ_TIMEOUT_CYCLES {
                let Some(board) = self.board.as_mut() else {
                    break;
                };
                board.set_csr(addr, 0, false, false);
                if let Some(v) = board.csr_rd() {
                    self.step();
                    return v;
                }
                self.step();
            }
            panic!(
                "board register read of {addr:#08x} got no answer (cycle {})",
                self.cycle()
            );
        }
        csr::read(self, addr).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The board, if the card has one and `addr` is its (address bit 23).
    fn board_for(&mut self, addr: u32) -> Option<&mut Board> {
        self.board
            .as_mut()
            .filter(|_| addr & homa_hw::regmap::board::BASE != 0)
    }

    /// Runs `cycles` clock cycles.
    pub fn run(&mut self, cycles: u64) {
        for _ in 0..cycles {
            self.step();
        }
    }

    /// Runs until `done(self)` or `limit` cycles; returns whether `done` held.
    pub fn run_until(&mut self, limit: u64, mut done: impl FnMut(&mut Card) -> bool) -> bool {
        for _ in 0..limit {
            if done(self) {
                return true;
            }
            self.step();
        }
        done(self)
    }

    /// Raises the core's `timer_tick` input for the next cycle: one tick of
    /// the retransmission timers while the timer block's TICK_NS is 0 (a
    /// harness driving them from wall time; ignored otherwise).
    pub fn timer_tick(&mut self) {
        self.timer_tick = true;
    }

    /// One clock cycle of the whole card.
    pub fn step(&mut self) {
        if let Some(board) = self.board.as_mut() {
            if !board.is_up() {
                let event = board.step();
                self.board_event(event);
                return;
            }
        }
        self.step_core();
        if let Some(board) = self.board.as_mut() {
            let event = board.step();
            self.board_event(event);
        }
    }

    fn step_core(&mut self) {
        let now = self.core.cycle();
        let c = &mut self.core;
        c.set_timer_tick(std::mem::take(&mut self.timer_tick));

        // DMA write port: a beat on offer is written now or back-pressured.
        let wr_ready = if c.m_dma_wr_valid() {
            let data = words_to_lanes(&c.m_dma_wr_data());
            let written = self.pcie.write_beat(
                now,
                c.m_dma_wr_addr(),
                &data,
                c.m_dma_wr_strb(),
                c.m_dma_wr_last(),
            );
            match (written, &mut self.dma_faults) {
                (Err(fault), Some(kept)) => {
                    self.stats.dma_write_faults += 1;
                    kept.push(fault);
                    true
                }
                (written, _) => written.expect_ok(),
            }
        } else {
            false
        };
        c.set_m_dma_wr_ready(wr_ready);

        // DMA read requests.
        let req_ready = if c.m_dma_rd_req_valid() {
            let (addr, len, tag) = (
                c.m_dma_rd_req_addr(),
                c.m_dma_rd_req_len() as u32,
                c.m_dma_rd_req_tag(),
            );
            match self.pcie.request_read(now, addr, len, tag) {
                Ok(accepted) => accepted,
                Err(ReadError::Fault(fault)) => {
                    tracing::debug!("DMA read refused: {fault}");
                    self.stats.dma_read_faults += 1;
                    let beats = (len as usize).div_ceil(BEAT_BYTES).max(1);
                    self.fault_beats
                        .extend((0..beats).map(|i| (tag, i + 1 == beats)));
                    true
                }
                Err(e) => panic!("simulation failed: {e}"),
            }
        } else {
            false
        };
        c.set_m_dma_rd_req_ready(req_ready);

        // DMA read responses: one beat on offer until the core takes it.
        if self.rsp_on_offer.is_none() {
            self.rsp_on_offer = match self.fault_beats.pop_front() {
                Some((tag, last)) => Some((
                    ReadBeat {
                        tag,
                        data: [0; BEAT_BYTES],
                        last,
                    },
                    true,
                )),
                None => self.pcie.next_read_beat(now).map(|b| (b, false)),
            };
        }
        match &self.rsp_on_offer {
            Some((beat, error)) => {
                c.set_s_dma_rd_rsp_valid(true);
                c.set_s_dma_rd_rsp_data(&lanes_to_words(&beat.data));
                c.set_s_dma_rd_rsp_tag(beat.tag);
                c.set_s_dma_rd_rsp_last(beat.last);
                c.set_s_dma_rd_rsp_error(*error);
            }
            None => c.set_s_dma_rd_rsp_valid(false),
        }

        // RX port: the next queued beat, if any.
        match self.rx_beats.front() {
            Some(b) => {
                c.set_s_axis_rx_tdata(&b.words());
                c.set_s_axis_rx_tkeep(b.keep);
                c.set_s_axis_rx_tlast(b.last);
                c.set_s_axis_rx_tvalid(true);
            }
            None => c.set_s_axis_rx_tvalid(false),
        }

        // TX port: ready while the line rate allows, unless the MAC stalls
        // this cycle.
        let mut tx_ready = true;
        if self.mac_bits_per_cycle > 0 {
            self.mac_credit_bits =
                (self.mac_credit_bits + self.mac_bits_per_cycle).min(self.mac_bits_per_cycle);
            tx_ready = self.mac_credit_bits >= 0;
        }
        if self.tx_stall_per_mille > 0 {
            self.tx_stall_state = self
                .tx_stall_state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let draw = ((self.tx_stall_state >> 33) % 1000) as u32;
            tx_ready &= draw >= self.tx_stall_per_mille;
        }
        c.set_m_axis_tx_tready(tx_ready);

        // Settle, then count the handshakes of this edge.
        c.eval();
        let rsp_taken = self.rsp_on_offer.is_some() && c.s_dma_rd_rsp_ready();
        let rx_taken = !self.rx_beats.is_empty() && c.s_axis_rx_tready();
        let tx_beat = (c.m_axis_tx_tvalid() && c.m_axis_tx_tready()).then(|| {
            (
                Beat::from_words(
                    &c.m_axis_tx_tdata(),
                    c.m_axis_tx_tkeep(),
                    c.m_axis_tx_tlast(),
                ),
                c.m_axis_tx_tuser(),
            )
        });
        c.tick();

        if rsp_taken {
            self.rsp_on_offer = None;
        }
        if rx_taken {
            let b = self.rx_beats.pop_front().unwrap();
            if b.last {
                self.stats.rx_frames += 1;
            }
        }
        if let Some((beat, spoiled)) = tx_beat {
            if self.mac_bits_per_cycle > 0 {
                let framing = if beat.last { FRAMING_BYTES } else { 0 };
                self.mac_credit_bits -= 8 * (beat.bytes().len() as u64 + framing) as i64;
            }
            self.tx_partial.extend_from_slice(beat.bytes());
            if beat.last {
                let bytes = std::mem::take(&mut self.tx_partial);
                if spoiled {
                    self.stats.tx_frames_spoiled += 1;
                } else {
                    self.stats.tx_frames += 1;
                    self.transmitted.push(TxFrame { cycle: now, bytes });
                }
            }
        }
    }
}

impl CsrPort for Card {
    fn core(&mut self) -> &mut Sim<HomaCore> {
        &mut self.core
    }
    fn clock(&mut self) {
        self.step();
    }
}

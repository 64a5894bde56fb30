//! The simulated card: the core's RTL (Verilator) with everything a real card
//! puts around it, served from Rust each clock cycle.
//!
//! DESIGN NOTES
//! ------------
//! - BAR: [`Card::csr_read`] and [`Card::csr_write`] keep the rest of the
//!   card running while they take their cycles, as a BAR access on PCIe
//!   would. Over the TLP link they are TLPs into the RTL completer, with the
//!   host's MMIO latency (`bar_link`): a write is posted (it reaches the core
//!   400 ns later; the call takes one cycle), a read waits about 0.8 us for
//!   its completion. Over the ideal link they drive the core's CSR port
//!   directly, in 2-3 cycles. Board registers (address bit 23) are reached
//!   directly either way; on a board the completer's port feeds them too.
//! - DMA: the core's read-request, read-response and write ports go to host
//!   memory ([`HostMemory`]) over a link (`dma_link`): by default, as on a
//!   board, through the RTL PCIe requester and a root-complex model at TLP
//!   level; or served directly by the transaction-level `PcieModel`
//!   ([`LinkConfig::Ideal`]), the yardstick. A
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
//! - Interrupts: the host's MSI-X enable and function mask (configuration
//!   space, in the PCIe block on a board) are [`Card::set_msix`]; the card's
//!   messages are its DMA writes into the interrupt window
//!   (`host_memory::MSI_WINDOW`), kept with the cycle they became visible
//!   for [`Card::take_interrupts`]. A reboot clears MSI-X, as a function
//!   that re-enumerates comes up with it off.
//!
//! Order within a cycle: read the core's settled outputs, answer them (write
//! beat before read request: the PCIe model's ordering rule), present the
//! inputs, evaluate, and only then count a handshake as done: AXI's rule is
//! that a transfer happens at the edge where valid and ready are both high.

use std::collections::VecDeque;

use crate::axis::{frame_to_beats, Beat};
use crate::bar_link::CompleterBar;
use crate::board::{Board, BoardConfig, BoardEvent};
use crate::cable::FRAMING_BYTES;
use crate::csr::{self, CsrPort};
use crate::dma_link::{DmaLink, LinkConfig, LinkStats};
use crate::host_memory::{DmaFault, HostMemory, MsiMessage};
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

/// An interrupt message the card sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interrupt {
    /// Cycle in which it reached the host (became visible, as the writes
    /// before it).
    pub cycle: u64,
    pub message: MsiMessage,
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
    /// The DMA path to host memory.
    link: DmaLink,
    /// The BAR path through the completer (TLP link; None: the CSR port
    /// driven directly).
    bar: Option<CompleterBar>,
    /// The CSR port is driven directly this cycle ([`Card::csr_peek`]).
    peeking: bool,
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
    /// MSI-X enabled and the function masked ([`Card::set_msix`]).
    msix_enabled: bool,
    msix_masked: bool,
    /// Interrupt messages that reached the host and were not yet taken.
    interrupts: Vec<Interrupt>,
}

impl Card {
    /// A card whose core has been reset, with empty host memory; its
    /// waveform is written to `target/vcd/<name>.vcd` only if the thread
    /// panics (`Sim::traced_on_failure`).
    pub fn new(name: &str, link: impl Into<LinkConfig>) -> Card {
        Self::build(name, true, link.into())
    }

    /// A card in a board: the core, and the board's register block, flash
    /// and configuration logic (`crate::board`), running the golden image.
    pub fn with_board(name: &str, link: impl Into<LinkConfig>, board: BoardConfig) -> Card {
        let mut card = Self::build(name, true, link.into());
        card.board = Some(Board::new(name, board));
        card
    }

    /// As [`Card::new`] without the waveform (unless `HOMA_VCD` asks for
    /// one): long runs (the demo, benchmarks) do not keep their inputs for
    /// a waveform that would cover only their first 200,000 cycles anyway.
    pub fn untraced(name: &str, link: impl Into<LinkConfig>) -> Card {
        Self::build(name, false, link.into())
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

    fn build(name: &str, traced: bool, link: LinkConfig) -> Card {
        let bar = match &link {
            LinkConfig::Tlp(c) => Some(CompleterBar::new(c.mmio.clone(), name, traced)),
            LinkConfig::Ideal(_) => None,
        };
        Card {
            bar,
            peeking: false,
            core: Self::new_core(name, traced),
            name: name.to_string(),
            traced,
            cycle_base: 0,
            board: None,
            link: DmaLink::new(link, HostMemory::new(), name, traced),
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
            msix_enabled: false,
            msix_masked: false,
            interrupts: Vec::new(),
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
        self.link.quiet()
            && self.bar.as_ref().is_none_or(|b| b.idle())
            && self.rx_beats.is_empty()
            && self.tx_partial.is_empty()
    }

    fn board_event(&mut self, event: Option<BoardEvent>) {
        match event {
            Some(BoardEvent::Booted) => {
                // A new design: the core out of reset, the link empty.
                self.cycle_base += self.core.cycle();
                let boots = self.board.as_ref().map_or(0, |b| b.boots);
                let name = format!("{}-boot{boots}", self.name);
                self.core = Self::new_core(&name, self.traced);
                self.link.restart(&name, self.traced);
                if let Some(bar) = self.bar.as_mut() {
                    *bar = CompleterBar::new(bar.config().clone(), &name, self.traced);
                }
                self.tx_partial.clear();
                self.rx_beats.clear();
                self.msix_enabled = false;
                self.msix_masked = false;
            }
            Some(BoardEvent::Reconfiguring) | None => {}
        }
    }

    pub fn memory(&self) -> &HostMemory {
        self.link.memory()
    }

    pub fn memory_mut(&mut self) -> &mut HostMemory {
        self.link.memory_mut()
    }

    /// What the DMA link carried.
    pub fn link_stats(&self) -> LinkStats {
        self.link.stats()
    }

    pub fn stats(&self) -> CardStats {
        let link = self.link.stats();
        CardStats {
            dma_read_faults: link.read_faults,
            dma_write_faults: link.write_faults,
            ..self.stats.clone()
        }
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
        if let Some(bar) = self.bar.as_mut() {
            bar.write(self.core.cycle(), addr, data);
            self.step();
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
        let (value, mut due) = match self.bar.as_mut() {
            Some(_) => self.bar_read(addr),
            None => {
                let value = csr::read(self, addr).unwrap_or_else(|e| panic!("{e}"));
                (value, self.core.cycle())
            }
        };
        // The read's completion travels behind the card's posted writes
        // (PCIe ordering): the host sees the value only once they are in its
        // memory.
        if let Some(visible) = self.link.writes_visible_at() {
            due = due.max(visible);
        }
        while self.core.cycle() < due {
            self.step();
        }
        value
    }

    /// A register's value read through the core's CSR port directly, in 2-3
    /// cycles, as a debugger (JTAG) would see it, not as a host does
    /// ([`Card::csr_read`]: over the TLP link a BAR read takes about 0.8 us).
    /// For harnesses that account for the card's counters while traffic
    /// runs. Waits first for BAR requests already made.
    pub fn csr_peek(&mut self, addr: u32) -> u32 {
        if self.board_for(addr).is_some() || !self.is_up() {
            return self.csr_read(addr);
        }
        while self.bar.as_ref().is_some_and(|b| !b.idle()) {
            self.step();
        }
        self.peeking = true;
        let value = csr::read(self, addr).unwrap_or_else(|e| panic!("{e}"));
        self.peeking = false;
        value
    }

    /// A read through the completer: its value, and the core cycle the host
    /// has it.
    fn bar_read(&mut self, addr: u32) -> (u32, u64) {
        let bar = self.bar.as_mut().unwrap();
        let mmio = bar.config().clone();
        // Behind the writes queued before it, two cycles each in the block.
        let limit = mmio.to_card_cycles
            + mmio.to_host_cycles
            + 4 * bar.queued() as u64
            + csr::CSR_READ_TIMEOUT_CYCLES;
        let tag = bar.read_request(self.core.cycle(), addr);
        for _ in 0..limit {
            self.step();
            let bar = self.bar.as_mut().unwrap();
            if let Some((left, cpl)) = bar.take_completion(tag) {
                assert!(
                    cpl.status == 0 && cpl.data.len() == 1,
                    "BAR read of {addr:#08x}: completion status {} with {} Dwords",
                    cpl.status,
                    cpl.data.len()
                );
                return (cpl.data[0], left + mmio.to_host_cycles);
            }
        }
        panic!(
            "BAR read of {addr:#08x} got no completion within {limit} cycles (cycle {}): the core did not answer the completer",
            self.cycle()
        );
    }

    /// The board, if the card has one and `addr` is its (address bit 23).
    fn board_for(&mut self, addr: u32) -> Option<&mut Board> {
        self.board
            .as_mut()
            .filter(|_| addr & homa_hw::regmap::board::BASE != 0)
    }

    /// What the host's writes to the MSI-X capability's Message Control say:
    /// MSI-X enabled, the whole function masked (the VFIO kernel driver
    /// sets both when a program asks for MSI-X vectors).
    pub fn set_msix(&mut self, enabled: bool, masked: bool) {
        self.msix_enabled = enabled;
        self.msix_masked = masked;
    }

    /// The interrupt messages that reached the host since the last call,
    /// oldest first.
    pub fn take_interrupts(&mut self) -> Vec<Interrupt> {
        std::mem::take(&mut self.interrupts)
    }

    /// Whether an interrupt message waits for [`Card::take_interrupts`].
    pub fn interrupt_waiting(&self) -> bool {
        !self.interrupts.is_empty()
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
        c.set_msix_enable(self.msix_enabled);
        c.set_msix_mask(self.msix_masked);

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

        // DMA last (its link may settle the core with it), then count the
        // handshakes of this edge.
        if let Some(bar) = self.bar.as_mut() {
            bar.present(c, now, !self.peeking);
        }
        self.link.present(c, now, &mut self.dma_faults);
        c.eval();
        self.link.settled(c, now, &mut self.dma_faults);
        if let Some(bar) = self.bar.as_mut() {
            bar.settled(now);
        }
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
        self.link.tick();
        if let Some(bar) = self.bar.as_mut() {
            bar.tick();
        }

        if self.link.memory().msi_waiting() {
            for message in self.link.memory_mut().take_msis() {
                self.interrupts.push(Interrupt {
                    cycle: self.cycle_base + now,
                    message,
                });
            }
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

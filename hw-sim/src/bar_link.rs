//! The host's BAR accesses to the simulated card. On a board they arrive as
//! completer-request TLPs (CQ) at the RTL completer (`homa_hw::pcie::
//! completer`), whose CSR port drives the core's, and a read's value goes
//! back as a completer completion (CC); so they do here, with the host's
//! MMIO latency each way. Over the ideal DMA link the card drives the
//! core's CSR port itself (`csr.rs`), as it did before the completer existed.
//!
//! DESIGN NOTES
//! ------------
//! - Posted writes: [`CompleterBar::write`] queues a 1-Dword memory write
//!   that reaches the block `to_card_cycles` later, as a CPU's store reaches
//!   the device while the CPU goes on; the host does not wait for it.
//! - Reads: [`CompleterBar::read_request`] queues a 1-Dword memory read
//!   behind every write queued before it (PCIe's rule: a read does not pass
//!   a posted write); its completion leaves the card on CC and is the host's
//!   `to_host_cycles` later (`Card::csr_read` waits for it, and also for the
//!   card's posted DMA writes before it, which no completion passes).
//! - Clocked beside the core as the requester is (`dma_link`): each cycle
//!   the completer's CSR outputs (from its registers) drive the core's CSR
//!   inputs, and the core's read data (from its registers) the completer's.
//!   An idle completer with nothing queued is parked: its CSR enables are
//!   driven low once and it is neither evaluated nor clocked until the next
//!   request (its state cannot change without a CQ beat), which keeps the
//!   per-cycle cost of a card off the BAR's account between accesses.
//!   Its waveform then skips those cycles.
//! - Latency defaults: 400 ns each way (100 cycles), the same one-way
//!   estimate as the root complex's posted-write visibility (half of the
//!   800 ns DMA read round trip Neugebauer et al. measure, SIGCOMM 2018), so
//!   a CSR read takes about 0.8 us, in line with what hosts see of an MMIO
//!   read (on the order of a microsecond).

use std::collections::VecDeque;

use crate::tlp::{BarRequest, Completion, CqBeat, REQ_MEM_READ, REQ_MEM_WRITE};
use crate::{HomaCore, PcieCompleter, Sim};

/// The host's MMIO timing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MmioConfig {
    /// Cycles from the host's access to its TLP at the card's CQ (400 ns).
    pub to_card_cycles: u64,
    /// Cycles from a completion leaving the card to the host having it
    /// (400 ns).
    pub to_host_cycles: u64,
}

impl Default for MmioConfig {
    fn default() -> Self {
        MmioConfig {
            to_card_cycles: 100,
            to_host_cycles: 100,
        }
    }
}

/// The requester ID the host's accesses carry (the root port, 00:00.0).
const HOST_REQUESTER_ID: u16 = 0;

/// BAR accesses through the RTL completer.
pub(crate) struct CompleterBar {
    completer: Sim<PcieCompleter>,
    config: MmioConfig,
    /// CQ beats on their way, each with the cycle it may enter the block.
    to_card: VecDeque<(u64, CqBeat)>,
    next_tag: u8,
    /// Completions that left the card: the cycle each did, and it.
    from_card: VecDeque<(u64, Completion)>,
    /// Idle, with the core's CSR enables driven low (see the notes).
    parked: bool,
}

impl CompleterBar {
    pub(crate) fn new(config: MmioConfig, name: &str, traced: bool) -> Self {
        let name = format!("{name}-bar");
        let mut completer: Sim<PcieCompleter> = if traced {
            Sim::traced_on_failure(&name)
        } else {
            Sim::new(&name)
        };
        completer.set_reset(true);
        completer.tick();
        completer.tick();
        completer.set_reset(false);
        CompleterBar {
            completer,
            config,
            to_card: VecDeque::new(),
            next_tag: 0,
            from_card: VecDeque::new(),
            parked: false,
        }
    }

    pub(crate) fn config(&self) -> &MmioConfig {
        &self.config
    }

    fn request(&mut self, now: u64, req_type: u8, addr: u32, data: Vec<u32>) -> u8 {
        let tag = self.next_tag;
        self.next_tag = self.next_tag.wrapping_add(1);
        let request = BarRequest {
            req_type,
            dw_addr: u64::from(addr >> 2),
            dwords: 1,
            first_be: 0xF,
            last_be: 0,
            requester: HOST_REQUESTER_ID,
            tag,
            tc: 0,
            attr: 0,
            at: 0,
            data,
        };
        self.parked = false;
        let due = now + self.config.to_card_cycles;
        self.to_card
            .extend(request.cq_beats().into_iter().map(|b| (due, b)));
        tag
    }

    /// A posted 32-bit write at BAR offset `addr`, made at cycle `now`.
    pub(crate) fn write(&mut self, now: u64, addr: u32, data: u32) {
        self.request(now, REQ_MEM_WRITE, addr, vec![data]);
    }

    /// A 32-bit read at BAR offset `addr`, made at cycle `now`; its tag.
    pub(crate) fn read_request(&mut self, now: u64, addr: u32) -> u8 {
        self.request(now, REQ_MEM_READ, addr, Vec::new())
    }

    /// The completion of the read tagged `tag`, once it has left the card,
    /// with the cycle it left.
    pub(crate) fn take_completion(&mut self, tag: u8) -> Option<(u64, Completion)> {
        let i = self.from_card.iter().position(|(_, c)| c.tag == tag)?;
        self.from_card.remove(i)
    }

    /// Request beats not yet taken by the completer.
    pub(crate) fn queued(&self) -> usize {
        self.to_card.len()
    }

    /// The completer holds no request and has none in progress. (`tready`
    /// is also high between the beats of a two-beat write, but a request's
    /// beats are queued together, so then `to_card` is not empty.)
    pub(crate) fn idle(&self) -> bool {
        self.to_card.is_empty() && self.completer.m_axis_cq_tready()
    }

    /// Before the core's evaluation: the CQ beat due, the core's read data
    /// into the completer, and the completer's CSR access onto the core
    /// (unless `drive_core` is false: the port is someone else's this
    /// cycle, `Card::csr_peek`, and the completer holds its requests).
    pub(crate) fn present(&mut self, core: &mut Sim<HomaCore>, now: u64, drive_core: bool) {
        if self.parked {
            return;
        }
        if drive_core && self.idle() {
            core.set_csr_wr_en(false);
            core.set_csr_rd_en(false);
            self.parked = true;
            return;
        }
        let b = &mut self.completer;
        match self.to_card.front() {
            Some((due, beat)) if *due <= now && drive_core => {
                b.set_m_axis_cq_tdata(&beat.tdata);
                b.set_m_axis_cq_tuser(&beat.tuser);
                b.set_m_axis_cq_tlast(beat.tlast);
                b.set_m_axis_cq_tvalid(true);
            }
            _ => b.set_m_axis_cq_tvalid(false),
        }
        b.set_s_axis_cc_tready(true);
        b.set_csr_rd_valid(core.csr_rd_valid());
        b.set_csr_rd_data(core.csr_rd_data());
        b.eval();
        if !drive_core {
            return;
        }
        core.set_csr_addr(b.csr_addr());
        core.set_csr_wr_data(b.csr_wr_data());
        core.set_csr_wr_en(b.csr_wr_en());
        core.set_csr_rd_en(b.csr_rd_en());
    }

    /// After it: the handshakes of this edge.
    pub(crate) fn settled(&mut self, now: u64) {
        if self.parked {
            return;
        }
        let b = &self.completer;
        if b.m_axis_cq_tvalid() && b.m_axis_cq_tready() {
            self.to_card.pop_front();
        }
        if b.s_axis_cc_tvalid() {
            let cpl = Completion::parse(&b.s_axis_cc_tdata(), b.s_axis_cc_tkeep())
                .unwrap_or_else(|e| panic!("the completer sent a malformed completion: {e}"));
            self.from_card.push_back((now, cpl));
        }
    }

    pub(crate) fn tick(&mut self) {
        if !self.parked {
            self.completer.tick();
        }
    }
}

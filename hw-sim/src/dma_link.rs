//! How the simulated card's DMA reaches host memory: one of two links behind
//! the core's three DMA ports (read request, read response, write).
//!
//! DESIGN NOTES
//! ------------
//! - [`LinkConfig::Tlp`], what a board has: the core's ports go into the RTL
//!   PCIe requester (`homa_hw::pcie::requester`, its own Verilator model
//!   clocked beside the core), which sends memory-read and memory-write TLPs
//!   on RQ and reassembles completions from RC; the host behind the hard
//!   block is [`RootComplex`]: posted writes visible only after a delay,
//!   completions split at the RCB and reordered across tags, a tag limit,
//!   RQ back-pressure.
//! - [`LinkConfig::Ideal`]: the core's ports served directly by the
//!   transaction-level [`PcieModel`] (latency and bandwidth, posted writes
//!   visible at once, no TLPs). It stays because it is the yardstick the
//!   TLP link is measured against (the cost of realism, `benches/transport`)
//!   and because it runs faster.
//!
//! Both check every access against the IOMMU regions of [`HostMemory`]: a
//! refused read comes back as error beats (TLP: an "unsupported request"
//! completion, which the requester turns into error beats); a refused write
//! ends the simulation, or is kept for the caller when it asked to keep
//! faults ([`Card::keep_dma_faults`](crate::card::Card::keep_dma_faults)).
//!
//! Order within a cycle (the card calls [`DmaLink::present`] after setting
//! its other core inputs, then evaluates the core, then
//! [`DmaLink::settled`], then ticks the core and [`DmaLink::tick`]): for the
//! TLP link the core's DMA outputs and the requester's are exchanged and each
//! model settled until neither moves (ready may follow valid within a cycle
//! on either side), so at the edge both see the same handshakes.

use std::collections::VecDeque;

use homa_hw::pcie::rq_read::read_request_bytes;
use homa_hw::pcie::rq_write::payload_bytes;

use crate::bar_link::MmioConfig;
use crate::host_memory::{DmaFault, ExpectOk, HostMemory, BEAT_BYTES};
use crate::pcie::{lanes_to_words, words_to_lanes, PcieConfig, PcieModel, ReadBeat, ReadError};
use crate::root_complex::{RcBeat, RootComplex, RootComplexConfig, RqError};
use crate::{HomaCore, PcieRequester, Sim};

/// Which link the card's DMA goes over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkConfig {
    Ideal(PcieConfig),
    Tlp(TlpConfig),
}

impl Default for LinkConfig {
    fn default() -> Self {
        LinkConfig::Tlp(TlpConfig::default())
    }
}

impl From<PcieConfig> for LinkConfig {
    fn from(c: PcieConfig) -> Self {
        LinkConfig::Ideal(c)
    }
}

impl From<TlpConfig> for LinkConfig {
    fn from(c: TlpConfig) -> Self {
        LinkConfig::Tlp(c)
    }
}

/// The TLP link: the host's timing and the hard block's negotiated sizes.
/// It carries the host's BAR accesses too (`bar_link`): through the RTL
/// completer, with `mmio`'s latency.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlpConfig {
    pub root: RootComplexConfig,
    pub mmio: MmioConfig,
    /// `cfg_max_payload`: 0 = 128 B, 1 = 256 B (most servers), 2 = 512 B.
    pub max_payload: u8,
    /// `cfg_max_read_req`: 0 = 128 B ... 2 = 512 B (Linux's default) ... 5 =
    /// 4096 B.
    pub max_read_req: u8,
}

impl Default for TlpConfig {
    fn default() -> Self {
        TlpConfig {
            root: RootComplexConfig::default(),
            mmio: MmioConfig::default(),
            max_payload: 1,
            max_read_req: 2,
        }
    }
}

impl TlpConfig {
    /// Completions reordered across tags (up to 400 ns of extra latency per
    /// read), small ones, few tags and RQ back-pressure: the link at its
    /// least forgiving, for tests.
    pub fn harsh(seed: u64) -> Self {
        TlpConfig {
            root: RootComplexConfig {
                read_jitter_cycles: 100,
                max_completion_bytes: 128,
                max_reads: 16,
                rq_stall_per_mille: 100,
                seed,
                ..RootComplexConfig::default()
            },
            mmio: MmioConfig::default(),
            max_payload: 0,
            max_read_req: 2,
        }
    }
}

/// What the link carried, whichever it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// Bytes DMA wrote to host memory (accepted by the IOMMU).
    pub bytes_written: u64,
    /// Reads of the core the IOMMU refused, answered with error beats.
    pub read_faults: u64,
    /// Writes the IOMMU refused (kept faults only; otherwise fatal).
    pub write_faults: u64,
    /// TLPs on RQ: memory writes and memory reads (0 on the ideal link).
    pub write_tlps: u64,
    pub read_tlps: u64,
    /// Completions on RC (0 on the ideal link).
    pub completions: u64,
}

pub(crate) enum DmaLink {
    Ideal(IdealLink),
    Tlp(Box<TlpLink>),
}

pub(crate) struct IdealLink {
    pcie: PcieModel,
    /// The response beat on offer to the core, until it takes it.
    rsp_on_offer: Option<(ReadBeat, bool)>,
    /// Error beats owed for refused reads: (tag, last).
    fault_beats: VecDeque<(u8, bool)>,
    read_faults: u64,
    write_faults: u64,
}

pub(crate) struct TlpLink {
    requester: Sim<PcieRequester>,
    root: RootComplex,
    config: TlpConfig,
    /// This cycle's RQ `tready`.
    rq_ready: bool,
    /// The RC beat on offer to the requester, until it takes it.
    rc_held: Option<RcBeat>,
    /// Reads the core saw fail (their last beat taken with `error`): one
    /// per core request, however many TLPs it took.
    read_faults: u64,
    write_faults: u64,
}

/// The core's DMA outputs, as the requester's inputs take them.
#[derive(PartialEq)]
struct CoreSide {
    wr_valid: bool,
    wr_addr: u64,
    wr_data: [u32; 16],
    wr_strb: u64,
    wr_last: bool,
    req_valid: bool,
    req_addr: u64,
    req_len: u16,
    req_tag: u8,
    rsp_ready: bool,
}

impl CoreSide {
    fn of(c: &Sim<HomaCore>) -> Self {
        CoreSide {
            wr_valid: c.m_dma_wr_valid(),
            wr_addr: c.m_dma_wr_addr(),
            wr_data: c.m_dma_wr_data(),
            wr_strb: c.m_dma_wr_strb(),
            wr_last: c.m_dma_wr_last(),
            req_valid: c.m_dma_rd_req_valid(),
            req_addr: c.m_dma_rd_req_addr(),
            req_len: c.m_dma_rd_req_len(),
            req_tag: c.m_dma_rd_req_tag(),
            rsp_ready: c.s_dma_rd_rsp_ready(),
        }
    }

    fn drive(&self, r: &mut Sim<PcieRequester>) {
        r.set_s_dma_wr_valid(self.wr_valid);
        r.set_s_dma_wr_addr(self.wr_addr);
        r.set_s_dma_wr_data(&self.wr_data);
        r.set_s_dma_wr_strb(self.wr_strb);
        r.set_s_dma_wr_last(self.wr_last);
        r.set_s_dma_rd_req_valid(self.req_valid);
        r.set_s_dma_rd_req_addr(self.req_addr);
        r.set_s_dma_rd_req_len(self.req_len);
        r.set_s_dma_rd_req_tag(self.req_tag);
        r.set_m_dma_rd_rsp_ready(self.rsp_ready);
    }
}

/// Passes the requester's outputs to the core's DMA inputs.
fn drive_core(r: &Sim<PcieRequester>, c: &mut Sim<HomaCore>) {
    c.set_m_dma_wr_ready(r.s_dma_wr_ready());
    c.set_m_dma_rd_req_ready(r.s_dma_rd_req_ready());
    c.set_s_dma_rd_rsp_valid(r.m_dma_rd_rsp_valid());
    c.set_s_dma_rd_rsp_data(&r.m_dma_rd_rsp_data());
    c.set_s_dma_rd_rsp_tag(r.m_dma_rd_rsp_tag());
    c.set_s_dma_rd_rsp_last(r.m_dma_rd_rsp_last());
    c.set_s_dma_rd_rsp_error(r.m_dma_rd_rsp_error());
}

/// Exchanges of outputs within one cycle before the two models must have
/// settled; more means a combinational loop through both.
const SETTLE_PASSES: usize = 4;

impl DmaLink {
    pub(crate) fn new(config: LinkConfig, memory: HostMemory, name: &str, traced: bool) -> Self {
        match config {
            LinkConfig::Ideal(pcie) => DmaLink::Ideal(IdealLink {
                pcie: PcieModel::new(pcie, memory),
                rsp_on_offer: None,
                fault_beats: VecDeque::new(),
                read_faults: 0,
                write_faults: 0,
            }),
            LinkConfig::Tlp(config) => {
                let name = format!("{name}-pcie");
                let mut requester: Sim<PcieRequester> = if traced {
                    Sim::traced_on_failure(&name)
                } else {
                    Sim::new(&name)
                };
                requester.set_cfg_max_payload(config.max_payload);
                requester.set_cfg_max_read_req(config.max_read_req);
                requester.set_reset(true);
                requester.tick();
                requester.tick();
                requester.set_reset(false);
                let root = RootComplex::new(
                    config.root.clone(),
                    memory,
                    payload_bytes(config.max_payload) as u32,
                    read_request_bytes(config.max_read_req) as u32,
                );
                DmaLink::Tlp(Box::new(TlpLink {
                    requester,
                    root,
                    config,
                    rq_ready: false,
                    rc_held: None,
                    read_faults: 0,
                    write_faults: 0,
                }))
            }
        }
    }

    /// The same link, empty, over the same memory (the FPGA rebooted).
    pub(crate) fn restart(&mut self, name: &str, traced: bool) {
        let memory = std::mem::take(self.memory_mut());
        let config = match self {
            DmaLink::Ideal(l) => LinkConfig::Ideal(l.pcie.config().clone()),
            DmaLink::Tlp(l) => LinkConfig::Tlp(l.config.clone()),
        };
        *self = DmaLink::new(config, memory, name, traced);
    }

    pub(crate) fn memory(&self) -> &HostMemory {
        match self {
            DmaLink::Ideal(l) => l.pcie.memory(),
            DmaLink::Tlp(l) => l.root.memory(),
        }
    }

    pub(crate) fn memory_mut(&mut self) -> &mut HostMemory {
        match self {
            DmaLink::Ideal(l) => l.pcie.memory_mut(),
            DmaLink::Tlp(l) => l.root.memory_mut(),
        }
    }

    pub(crate) fn stats(&self) -> LinkStats {
        match self {
            DmaLink::Ideal(l) => LinkStats {
                bytes_written: l.pcie.stats().bytes_written,
                read_faults: l.read_faults,
                write_faults: l.write_faults,
                ..LinkStats::default()
            },
            DmaLink::Tlp(l) => {
                let s = l.root.stats();
                LinkStats {
                    bytes_written: s.bytes_written,
                    read_faults: l.read_faults,
                    write_faults: l.write_faults,
                    write_tlps: s.write_tlps,
                    read_tlps: s.read_tlps,
                    completions: s.completions,
                }
            }
        }
    }

    /// The cycle by which every DMA write the host has taken is in its
    /// memory, if one is not yet (only the TLP link delays them).
    pub(crate) fn writes_visible_at(&self) -> Option<u64> {
        match self {
            DmaLink::Ideal(_) => None,
            DmaLink::Tlp(l) => l.root.writes_visible_at(),
        }
    }

    /// Nothing in flight between the core and host memory.
    pub(crate) fn quiet(&self) -> bool {
        match self {
            DmaLink::Ideal(l) => {
                l.pcie.outstanding_reads() == 0
                    && l.rsp_on_offer.is_none()
                    && l.fault_beats.is_empty()
            }
            DmaLink::Tlp(l) => {
                l.root.idle()
                    && l.rc_held.is_none()
                    && !l.requester.s_axis_rq_tvalid()
                    && !l.requester.m_dma_rd_rsp_valid()
            }
        }
    }

    /// Presents this cycle's DMA inputs to the core (module notes: after the
    /// card's other inputs). `faults` keeps refused writes when the caller
    /// asked to; otherwise a refused write panics.
    pub(crate) fn present(
        &mut self,
        c: &mut Sim<HomaCore>,
        now: u64,
        faults: &mut Option<Vec<DmaFault>>,
    ) {
        match self {
            DmaLink::Ideal(l) => l.present(c, now, faults),
            DmaLink::Tlp(l) => l.present(c, now),
        }
    }

    /// After the core settled with every input of the cycle: counts this
    /// edge's handshakes on the link's side.
    pub(crate) fn settled(
        &mut self,
        c: &mut Sim<HomaCore>,
        now: u64,
        faults: &mut Option<Vec<DmaFault>>,
    ) {
        match self {
            DmaLink::Ideal(l) => {
                if l.rsp_on_offer.is_some() && c.s_dma_rd_rsp_ready() {
                    l.rsp_on_offer = None;
                }
            }
            DmaLink::Tlp(l) => l.settled(c, now, faults),
        }
    }

    /// The clock edge, for the link's own RTL.
    pub(crate) fn tick(&mut self) {
        if let DmaLink::Tlp(l) = self {
            l.requester.tick();
        }
    }
}

impl IdealLink {
    fn present(&mut self, c: &mut Sim<HomaCore>, now: u64, faults: &mut Option<Vec<DmaFault>>) {
        // Write port: a beat on offer is written now or back-pressured.
        let wr_ready = if c.m_dma_wr_valid() {
            let data = words_to_lanes(&c.m_dma_wr_data());
            let written = self.pcie.write_beat(
                now,
                c.m_dma_wr_addr(),
                &data,
                c.m_dma_wr_strb(),
                c.m_dma_wr_last(),
            );
            match (written, faults) {
                (Err(fault), Some(kept)) => {
                    self.write_faults += 1;
                    kept.push(fault);
                    true
                }
                (written, _) => written.expect_ok(),
            }
        } else {
            false
        };
        c.set_m_dma_wr_ready(wr_ready);

        // Read requests.
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
                    self.read_faults += 1;
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

        // Read responses: one beat on offer until the core takes it.
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
    }
}

/// Drives the requester's RC inputs with `beat` (valid) or nothing; the
/// caller holds a beat until `m_axis_rc_tready` takes it.
pub fn offer_rc_beat(r: &mut Sim<PcieRequester>, beat: Option<&RcBeat>) {
    match beat {
        Some(b) => {
            r.set_m_axis_rc_tvalid(true);
            r.set_m_axis_rc_tdata(&b.tdata);
            r.set_m_axis_rc_tuser(&b.tuser);
            r.set_m_axis_rc_tkeep(b.tkeep);
            r.set_m_axis_rc_tlast(b.tlast);
        }
        None => r.set_m_axis_rc_tvalid(false),
    }
}

impl TlpLink {
    fn present(&mut self, c: &mut Sim<HomaCore>, now: u64) {
        let r = &mut self.requester;
        self.rq_ready = self.root.rq_ready(now);
        r.set_s_axis_rq_tready(self.rq_ready);
        if self.rc_held.is_none() {
            self.rc_held = self.root.rc_beat(now);
        }
        offer_rc_beat(r, self.rc_held.as_ref());
        for _ in 0..SETTLE_PASSES {
            c.eval();
            let core = CoreSide::of(c);
            core.drive(r);
            r.eval();
            drive_core(r, c);
            c.eval();
            if CoreSide::of(c) == core {
                return;
            }
        }
        panic!("the core's DMA ports and the PCIe requester do not settle (cycle {now})");
    }

    fn settled(&mut self, c: &mut Sim<HomaCore>, now: u64, faults: &mut Option<Vec<DmaFault>>) {
        let r = &mut self.requester;
        debug_assert!(CoreSide::of(c) == CoreSide::of_requester(r));
        if self.rq_ready && r.s_axis_rq_tvalid() {
            let sent = self.root.rq_beat(
                now,
                &r.s_axis_rq_tdata(),
                &r.s_axis_rq_tuser(),
                r.s_axis_rq_tkeep(),
                r.s_axis_rq_tlast(),
            );
            match (sent, faults) {
                (Ok(()), _) => {}
                (Err(RqError::Fault(fault)), Some(kept)) => {
                    self.write_faults += 1;
                    kept.push(fault);
                }
                (Err(e), _) => panic!("simulation failed: {e}"),
            }
        }
        if self.rc_held.is_some() && r.m_axis_rc_tready() {
            self.rc_held = None;
        }
        if r.m_dma_rd_rsp_valid()
            && c.s_dma_rd_rsp_ready()
            && r.m_dma_rd_rsp_last()
            && r.m_dma_rd_rsp_error()
        {
            tracing::debug!("DMA read with tag {} failed", r.m_dma_rd_rsp_tag());
            self.read_faults += 1;
        }
    }
}

impl CoreSide {
    /// What the requester was last given (to check nothing moved since).
    fn of_requester(r: &Sim<PcieRequester>) -> Self {
        CoreSide {
            wr_valid: r.s_dma_wr_valid(),
            wr_addr: r.s_dma_wr_addr(),
            wr_data: r.s_dma_wr_data(),
            wr_strb: r.s_dma_wr_strb(),
            wr_last: r.s_dma_wr_last(),
            req_valid: r.s_dma_rd_req_valid(),
            req_addr: r.s_dma_rd_req_addr(),
            req_len: r.s_dma_rd_req_len(),
            req_tag: r.s_dma_rd_req_tag(),
            rsp_ready: r.m_dma_rd_rsp_ready(),
        }
    }
}

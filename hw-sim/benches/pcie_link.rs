//! DMA throughput through the PCIe requester's RTL (`homa_hw::pcie`) and the
//! root-complex model, in clock cycles (4 ns each at 250 MHz): the core's
//! side of the requester kept busy with 4 KB transfers, as many in flight as
//! it takes, against the link's payload rate (12.5 GB/s each way, PCIe Gen3
//! x16 after TLP overheads: `RootComplexConfig::bytes_per_cycle` = 50).
//!
//! - reads: 4096-byte reads at 4 KB-aligned addresses, responses taken every
//!   cycle; from the first request to the last response beat;
//! - writes: 4096-byte writes (64 beats, every strobe), back to back; from
//!   the first beat to the last byte in host memory.
//!
//! Reads with the root complex interleaving the completions of every read
//! whose data is ready at random (the model's default, the hardest on the
//! requester's in-order reorder buffer), and answering the oldest read
//! first; each with RC 2-TLP straddle (as the card's IP is built) and
//! without, and with straddle and every completion one RCB (64 bytes) long,
//! what a root complex that answers in cache lines sends. Each at the MRRS /
//! MPS a server usually negotiates (512 B / 256 B) and at the largest the
//! requester takes (4096 B / 512 B).
//!
//! `cargo bench -p homa-hw-sim --bench pcie_link`.

use homa_hw::pcie::rq_read::read_request_bytes;
use homa_hw::pcie::rq_write::payload_bytes;
use homa_hw_sim::dma_link::offer_rc_beat;
use homa_hw_sim::host_memory::HostMemory;
use homa_hw_sim::root_complex::{RcBeat, RootComplex, RootComplexConfig};
use homa_hw_sim::{PcieRequester, Sim};

const BASE: u64 = 0x1_0000_0000;
const TRANSFER: u64 = 4096;
const TRANSFERS: u64 = 1000;
/// Core tags in use at most (the core's read port names 256).
const CORE_TAGS: usize = 64;

/// How the root complex answers reads.
struct Shape {
    interleave: bool,
    straddle: bool,
    max_completion_bytes: u32,
}

impl Default for Shape {
    fn default() -> Self {
        let d = RootComplexConfig::default();
        Shape {
            interleave: d.interleave,
            straddle: d.rc_straddle,
            max_completion_bytes: d.max_completion_bytes,
        }
    }
}

struct Rig {
    uut: Sim<PcieRequester>,
    rc: RootComplex,
    rc_held: Option<RcBeat>,
    cycle: u64,
}

impl Rig {
    fn new(mps: u8, mrrs: u8, shape: &Shape) -> Rig {
        let mut host = HostMemory::new();
        host.map(BASE, 2 * TRANSFER * TRANSFERS, "bench").unwrap();
        let rc = RootComplex::new(
            RootComplexConfig {
                interleave: shape.interleave,
                rc_straddle: shape.straddle,
                max_completion_bytes: shape.max_completion_bytes,
                ..RootComplexConfig::default()
            },
            host,
            payload_bytes(mps) as u32,
            read_request_bytes(mrrs) as u32,
        );
        let mut uut: Sim<PcieRequester> = Sim::new("bench_pcie_link");
        uut.set_cfg_max_payload(mps);
        uut.set_cfg_max_read_req(mrrs);
        uut.set_reset(true);
        uut.tick();
        uut.tick();
        uut.set_reset(false);
        Rig {
            uut,
            rc,
            rc_held: None,
            cycle: 0,
        }
    }

    /// The RQ and RC side of one cycle, after the core side's inputs are
    /// set; returns before the edge, with the model settled.
    fn link(&mut self) -> bool {
        let rq_ready = self.rc.rq_ready(self.cycle);
        self.uut.set_s_axis_rq_tready(rq_ready);
        if self.rc_held.is_none() {
            self.rc_held = self.rc.rc_beat(self.cycle);
        }
        offer_rc_beat(&mut self.uut, self.rc_held.as_ref());
        self.uut.eval();
        rq_ready
    }

    fn edge(&mut self, rq_ready: bool) {
        let u = &mut self.uut;
        if u.s_axis_rq_tvalid() && rq_ready {
            self.rc
                .rq_beat(
                    self.cycle,
                    &u.s_axis_rq_tdata(),
                    &u.s_axis_rq_tuser(),
                    u.s_axis_rq_tkeep(),
                    u.s_axis_rq_tlast(),
                )
                .expect("a TLP the root complex takes");
        }
        if self.rc_held.is_some() && u.m_axis_rc_tready() {
            self.rc_held = None;
        }
        u.tick();
        self.cycle += 1;
    }
}

/// Cycles to read `TRANSFERS` 4 KB blocks, and RC beats they took.
fn reads(mps: u8, mrrs: u8, shape: &Shape) -> (u64, u64) {
    let mut rig = Rig::new(mps, mrrs, shape);
    let (mut issued, mut done, mut out) = (0u64, 0u64, 0usize);
    rig.uut.set_m_dma_rd_rsp_ready(true);
    while done < TRANSFERS {
        let offer = issued < TRANSFERS && out < CORE_TAGS;
        rig.uut.set_s_dma_rd_req_valid(offer);
        rig.uut.set_s_dma_rd_req_addr(BASE + issued * TRANSFER);
        rig.uut.set_s_dma_rd_req_len(TRANSFER as u16);
        rig.uut
            .set_s_dma_rd_req_tag((issued % CORE_TAGS as u64) as u8);
        let rq_ready = rig.link();
        if offer && rig.uut.s_dma_rd_req_ready() {
            issued += 1;
            out += 1;
        }
        if rig.uut.m_dma_rd_rsp_valid() && rig.uut.m_dma_rd_rsp_last() {
            assert!(!rig.uut.m_dma_rd_rsp_error());
            done += 1;
            out -= 1;
        }
        rig.edge(rq_ready);
        assert!(rig.cycle < 100 * TRANSFERS * TRANSFER, "reads stuck");
    }
    (rig.cycle, rig.rc.stats().rc_beats)
}

/// Cycles to write `TRANSFERS` 4 KB blocks, until the last is in memory.
fn writes(mps: u8, mrrs: u8) -> u64 {
    let mut rig = Rig::new(mps, mrrs, &Shape::default());
    let beats = TRANSFERS * TRANSFER / 64;
    let mut sent = 0u64;
    let data = [0x5a5a_5a5au32; 16];
    while sent < beats || !rig.rc.idle() {
        let offer = sent < beats;
        rig.uut.set_s_dma_wr_valid(offer);
        rig.uut.set_s_dma_wr_addr(BASE + 64 * sent);
        rig.uut.set_s_dma_wr_data(&data);
        rig.uut.set_s_dma_wr_strb(u64::MAX);
        rig.uut.set_s_dma_wr_last((sent + 1) % (TRANSFER / 64) == 0);
        let rq_ready = rig.link();
        if offer && rig.uut.s_dma_wr_ready() {
            sent += 1;
        }
        rig.edge(rq_ready);
        assert!(rig.cycle < 100 * TRANSFERS * TRANSFER, "writes stuck");
    }
    rig.cycle
}

fn report(what: &str, cycles: u64) {
    let bytes = (TRANSFERS * TRANSFER) as f64;
    let gbps = bytes / cycles as f64 * 0.25;
    println!(
        "{what}: {TRANSFERS} x 4 KB in {cycles} cycles: {:.1} bytes/cycle, {gbps:.2} GB/s at 250 MHz ({:.0}% of the link's 12.5 GB/s)",
        bytes / cycles as f64,
        gbps / 12.5 * 100.0
    );
}

fn main() {
    for (mps, mrrs) in [(1u8, 2u8), (2, 5)] {
        let sizes = format!(
            "MPS {} B, MRRS {} B",
            payload_bytes(mps),
            read_request_bytes(mrrs)
        );
        for (interleave, order) in [
            (true, "completions of all reads interleaved"),
            (false, "the oldest read's completions first"),
        ] {
            for (straddle, max_completion_bytes, rc) in [
                (true, 256, "RC straddle, completions of 64-256 B"),
                (false, 256, "RC straddle off, completions of 64-256 B"),
                (true, 64, "RC straddle, every completion 64 B"),
            ] {
                let shape = Shape {
                    interleave,
                    straddle,
                    max_completion_bytes,
                };
                let (cycles, rc_beats) = reads(mps, mrrs, &shape);
                report(&format!("DMA reads, {sizes}, {order}, {rc}"), cycles);
                println!(
                    "  RC carried a beat in {:.0}% of those cycles, {:.1} payload bytes a beat",
                    100.0 * rc_beats as f64 / cycles as f64,
                    (TRANSFERS * TRANSFER) as f64 / rc_beats as f64
                );
            }
        }
        report(&format!("DMA writes, {sizes}"), writes(mps, mrrs));
    }
}

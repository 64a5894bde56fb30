//! Differential test of the PCIe requester (`homa_hw::pcie::requester`) in
//! Verilator: random DMA reads and writes of random sizes and alignments, on
//! the core's ports as the core drives them, through the RTL into the
//! root-complex model (`homa_hw_sim::root_complex`) with completions split at
//! the RCB, interleaved and reordered across tags, RQ back-pressure (random
//! stalls, bandwidth, the read-tag limit) and read-response back-pressure.
//! Checked byte for byte against a plain memory model: every read response
//! (order, tag, data, zeros past the end, `last`, `error`) and, after each
//! round, the whole write area of host memory.
//!
//! Rounds keep the check exact without modelling the requester's (absent)
//! ordering between reads and writes: in round k writes go to one half of
//! the write area and reads come from a read-only area and the other half,
//! which the previous round wrote; between rounds the link drains.

use std::collections::VecDeque;

use homa_hw::pcie::rq_read::read_request_bytes;
use homa_hw::pcie::rq_write::payload_bytes;
use homa_hw_sim::dma_link::offer_rc_beat;
use homa_hw_sim::host_memory::HostMemory;
use homa_hw_sim::root_complex::{RootComplex, RootComplexConfig};
use homa_hw_sim::{PcieRequester, Sim};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const R_BASE: u64 = 0x10_0000_0000;
const R_LEN: u64 = 64 << 10;
const W_BASE: u64 = 0x20_0000_0000;
const W_HALF: u64 = 64 << 10;
const UNMAPPED: u64 = 0x30_0000_0000;

/// One beat on the core's DMA write port.
struct WrBeat {
    addr: u64,
    data: [u8; 64],
    strb: u64,
    last: bool,
}

/// A read the core asks for and what must come back.
struct RdReq {
    addr: u64,
    len: u32,
    tag: u8,
    /// None: the read must fail (every beat `error`).
    expect: Option<Vec<u8>>,
}

fn words(lanes: &[u8; 64]) -> [u32; 16] {
    let mut w = [0u32; 16];
    for (i, c) in lanes.chunks(4).enumerate() {
        w[i] = u32::from_le_bytes(c.try_into().unwrap());
    }
    w
}

fn lanes(words: &[u32; 16]) -> [u8; 64] {
    let mut l = [0u8; 64];
    for (i, w) in words.iter().enumerate() {
        l[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
    }
    l
}

/// The beats of a write of `bytes` at `start` whose lane 0 is `lead` bytes
/// before `start` (the core writes beats where they land).
fn write_beats(start: u64, bytes: &[u8], lead: u64) -> Vec<WrBeat> {
    let base = start - lead;
    let end = start + bytes.len() as u64;
    let n = (end - base).div_ceil(64);
    (0..n)
        .map(|k| {
            let addr = base + 64 * k;
            let mut data = [0u8; 64];
            let mut strb = 0u64;
            for (i, d) in data.iter_mut().enumerate() {
                let a = addr + i as u64;
                if a >= start && a < end {
                    *d = bytes[(a - start) as usize];
                    strb |= 1 << i;
                } else {
                    *d = (a as u8).wrapping_mul(7) ^ 0xA5; // not to be written
                }
            }
            WrBeat {
                addr,
                data,
                strb,
                last: k + 1 == n,
            }
        })
        .collect()
}

fn random_len(rng: &mut ChaCha8Rng) -> u64 {
    match rng.gen_range(0..10) {
        0..=3 => rng.gen_range(1..=64),
        4..=7 => rng.gen_range(65..=1600),
        _ => rng.gen_range(1601..=4096),
    }
}

struct Outcome {
    cycles: u64,
    rsp_beats: u64,
    wr_beats: u64,
    rq_beats: u64,
    rc_beats: u64,
    reads: u64,
    writes: u64,
    failed_reads: u64,
    rc_stalls: u64,
    /// Write TLPs the writes need: one per MPS-aligned window each
    /// contiguous run of bytes touches, no more (a requester that split
    /// more often, or joined runs across a gap, would differ).
    write_tlps: u64,
}

/// TLPs for `len` bytes at `start`, split at multiples of `mps`.
fn tlps_for(start: u64, len: u64, mps: u64) -> u64 {
    (start + len - 1) / mps - start / mps + 1
}

/// How the root complex shapes completions.
#[derive(Clone, Copy)]
struct Rc {
    straddle: bool,
    max_completion_bytes: u32,
}

const STRADDLED: Rc = Rc {
    straddle: true,
    max_completion_bytes: 256,
};

fn run(
    seed: u64,
    cfg_mps: u8,
    cfg_mrrs: u8,
    rounds: usize,
    ops_per_round: usize,
    shape: Rc,
) -> Outcome {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut host = HostMemory::new();
    host.map(R_BASE, R_LEN, "read area").unwrap();
    host.map(W_BASE, 2 * W_HALF, "write area").unwrap();
    let init: Vec<u8> = (0..R_LEN + 2 * W_HALF).map(|_| rng.gen()).collect();
    host.write(R_BASE, &init[..R_LEN as usize]);
    host.write(W_BASE, &init[R_LEN as usize..]);
    let mut reference = host.clone();
    let config = RootComplexConfig {
        read_jitter_cycles: 300,
        rq_stall_per_mille: 150,
        max_reads: 24,
        max_completion_bytes: shape.max_completion_bytes,
        rc_straddle: shape.straddle,
        seed,
        ..RootComplexConfig::default()
    };
    let mut rc = RootComplex::new(
        config,
        host,
        payload_bytes(cfg_mps) as u32,
        read_request_bytes(cfg_mrrs) as u32,
    );

    let mut uut: Sim<PcieRequester> = Sim::traced_on_failure("pcie_requester");
    uut.set_cfg_max_payload(cfg_mps);
    uut.set_cfg_max_read_req(cfg_mrrs);
    uut.set_reset(true);
    uut.tick();
    uut.tick();
    uut.set_reset(false);

    let mut out = Outcome {
        cycles: 0,
        rsp_beats: 0,
        wr_beats: 0,
        rq_beats: 0,
        rc_beats: 0,
        reads: 0,
        writes: 0,
        failed_reads: 0,
        rc_stalls: 0,
        write_tlps: 0,
    };
    let mps = payload_bytes(cfg_mps) as u64;
    let mut rc_held = None;
    let mut cycle = 2u64;
    for round in 0..rounds {
        let half = (round % 2) as u64;
        let w_lo = W_BASE + half * W_HALF;
        let r2_lo = W_BASE + (1 - half) * W_HALF;
        let mut wr: VecDeque<WrBeat> = VecDeque::new();
        let mut rd: VecDeque<RdReq> = VecDeque::new();
        for _ in 0..ops_per_round {
            if rng.gen_bool(0.5) {
                let len = random_len(&mut rng);
                let start = w_lo + rng.gen_range(0..W_HALF - len + 1);
                let bytes: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
                let lead = |at: u64, rng: &mut ChaCha8Rng| {
                    if rng.gen_bool(0.2) {
                        at % 64 // aligned beats, like the completion writer
                    } else {
                        rng.gen_range(0..64.min(at - w_lo + 1))
                    }
                };
                // One write in ten has a gap of 1-8 bytes inside its
                // transaction (two runs, one `last`): not what the core
                // sends, but the requester must write each run alone.
                let gap = rng.gen_range(1..=8u64);
                if len >= 2 && start + len + gap <= w_lo + W_HALF && rng.gen_bool(0.1) {
                    let k = rng.gen_range(1..len);
                    let (a, b) = bytes.split_at(k as usize);
                    let mut first = write_beats(start, a, lead(start, &mut rng));
                    first.last_mut().unwrap().last = false;
                    let second_at = start + k + gap;
                    reference.write(start, a);
                    reference.write(second_at, b);
                    wr.extend(first);
                    wr.extend(write_beats(second_at, b, lead(second_at, &mut rng)));
                    out.write_tlps += tlps_for(start, k, mps) + tlps_for(second_at, len - k, mps);
                } else {
                    reference.write(start, &bytes);
                    wr.extend(write_beats(start, &bytes, lead(start, &mut rng)));
                    out.write_tlps += tlps_for(start, len, mps);
                }
                out.writes += 1;
            } else {
                let len = random_len(&mut rng);
                let tag = rng.gen();
                let (addr, ok) = match rng.gen_range(0..100) {
                    0..=1 => (UNMAPPED + rng.gen_range(0..4096), false),
                    2..=3 => (R_BASE + R_LEN - len + rng.gen_range(1..=len.min(64)), false),
                    4..=49 => (R_BASE + rng.gen_range(0..R_LEN - len + 1), true),
                    _ => (r2_lo + rng.gen_range(0..W_HALF - len + 1), true),
                };
                let expect = ok.then(|| {
                    let mut b = vec![0; len as usize];
                    reference.read(addr, &mut b);
                    b
                });
                if !ok {
                    out.failed_reads += 1;
                }
                rd.push_back(RdReq {
                    addr,
                    len: len as u32,
                    tag,
                    expect,
                });
                out.reads += 1;
            }
        }
        // Responses expected, in request order: (tag, beat index, request).
        let mut pending: VecDeque<RdReq> = VecDeque::new();
        let mut beat_in_rsp = 0usize;
        let mut quiet = 0u64;
        let mut last_progress = cycle;
        loop {
            // ---- inputs ----
            let wr_gap = rng.gen_bool(0.15);
            match wr.front() {
                Some(b) if !wr_gap => {
                    uut.set_s_dma_wr_valid(true);
                    uut.set_s_dma_wr_addr(b.addr);
                    uut.set_s_dma_wr_data(&words(&b.data));
                    uut.set_s_dma_wr_strb(b.strb);
                    uut.set_s_dma_wr_last(b.last);
                }
                _ => uut.set_s_dma_wr_valid(false),
            }
            let rd_gap = rng.gen_bool(0.3);
            match rd.front() {
                Some(r) if !rd_gap => {
                    uut.set_s_dma_rd_req_valid(true);
                    uut.set_s_dma_rd_req_addr(r.addr);
                    uut.set_s_dma_rd_req_len(r.len as u16);
                    uut.set_s_dma_rd_req_tag(r.tag);
                }
                _ => uut.set_s_dma_rd_req_valid(false),
            }
            let rsp_ready = rng.gen_bool(0.8);
            uut.set_m_dma_rd_rsp_ready(rsp_ready);
            let rq_ready = rc.rq_ready(cycle);
            uut.set_s_axis_rq_tready(rq_ready);
            if rc_held.is_none() {
                rc_held = rc.rc_beat(cycle);
            }
            offer_rc_beat(&mut uut, rc_held.as_ref());
            uut.eval();

            // ---- handshakes ----
            let mut progress = false;
            if uut.s_dma_wr_valid() && uut.s_dma_wr_ready() {
                wr.pop_front();
                out.wr_beats += 1;
                progress = true;
            }
            if uut.s_dma_rd_req_valid() && uut.s_dma_rd_req_ready() {
                pending.push_back(rd.pop_front().unwrap());
                progress = true;
            }
            if uut.m_dma_rd_rsp_valid() && rsp_ready {
                let r = pending.front().unwrap_or_else(|| {
                    panic!("seed {seed:#x} cycle {cycle}: a read response with no read outstanding")
                });
                let beats = (r.len as usize).div_ceil(64);
                let got = lanes(&uut.m_dma_rd_rsp_data());
                let ctx = format!(
                    "seed {seed:#x} cycle {cycle}: read of {} bytes at {:#x} (core tag {}), beat {beat_in_rsp} of {beats}",
                    r.len, r.addr, r.tag
                );
                assert_eq!(uut.m_dma_rd_rsp_tag(), r.tag, "{ctx}: tag");
                assert_eq!(
                    uut.m_dma_rd_rsp_last(),
                    beat_in_rsp + 1 == beats,
                    "{ctx}: last"
                );
                match &r.expect {
                    None => assert!(uut.m_dma_rd_rsp_error(), "{ctx}: error expected"),
                    Some(data) => {
                        assert!(!uut.m_dma_rd_rsp_error(), "{ctx}: unexpected error");
                        let mut want = [0u8; 64];
                        let from = 64 * beat_in_rsp;
                        let n = (data.len() - from).min(64);
                        want[..n].copy_from_slice(&data[from..from + n]);
                        if got != want {
                            let lane = (0..64).find(|&i| got[i] != want[i]).unwrap();
                            panic!(
                                "{ctx}: data differs from lane {lane} (address {:#x}): got {:02x?}, want {:02x?}",
                                r.addr + from as u64 + lane as u64,
                                &got[lane..(lane + 8).min(64)],
                                &want[lane..(lane + 8).min(64)]
                            );
                        }
                    }
                }
                out.rsp_beats += 1;
                beat_in_rsp += 1;
                if beat_in_rsp == beats {
                    beat_in_rsp = 0;
                    pending.pop_front();
                }
                progress = true;
            }
            if uut.s_axis_rq_tvalid() && rq_ready {
                rc.rq_beat(
                    cycle,
                    &uut.s_axis_rq_tdata(),
                    &uut.s_axis_rq_tuser(),
                    uut.s_axis_rq_tkeep(),
                    uut.s_axis_rq_tlast(),
                )
                .unwrap_or_else(|e| panic!("seed {seed:#x}: {e}"));
                out.rq_beats += 1;
                progress = true;
            }
            if rc_held.is_some() {
                if uut.m_axis_rc_tready() {
                    rc_held = None;
                    out.rc_beats += 1;
                    progress = true;
                } else {
                    out.rc_stalls += 1;
                }
            }
            uut.tick();
            cycle += 1;
            if progress {
                last_progress = cycle;
            }
            assert!(
                cycle - last_progress < 20_000,
                "seed {seed:#x}: stuck at cycle {cycle} in round {round}: {} write beats and {} reads not taken, {} reads unanswered, host idle: {}",
                wr.len(),
                rd.len(),
                pending.len(),
                rc.idle()
            );
            let done = wr.is_empty() && rd.is_empty() && pending.is_empty() && rc.idle();
            quiet = if done && !progress { quiet + 1 } else { 0 };
            if quiet > 40 {
                break;
            }
        }
        // Every write of the round is in host memory, and nothing else moved.
        let mut got = vec![0u8; (2 * W_HALF) as usize];
        let mut want = vec![0u8; (2 * W_HALF) as usize];
        rc.memory().read(W_BASE, &mut got);
        reference.read(W_BASE, &mut want);
        if got != want {
            let i = (0..got.len()).find(|&i| got[i] != want[i]).unwrap();
            panic!(
                "seed {seed:#x} round {round}: host memory at {:#x} is {:02x?}, the reference has {:02x?}",
                W_BASE + i as u64,
                &got[i..(i + 8).min(got.len())],
                &want[i..(i + 8).min(want.len())]
            );
        }
    }
    assert_eq!(uut.strobe_holes(), 0);
    out.cycles = cycle;
    let stats = rc.stats();
    eprintln!(
        "seed {seed:#x}, MPS {} B, MRRS {} B: {} cycles; {} reads ({} failing as they should), {} writes; \
         core beats checked: {} read-response, {} write; RQ beats {} ({} write TLPs, {} read TLPs), \
         RC beats {} ({} completions, {} beats with a second completion starting at Dword 8, \
         {} RC stall cycles); RQ stalled {} cycles; reads out at most {}",
        payload_bytes(cfg_mps),
        read_request_bytes(cfg_mrrs),
        out.cycles,
        out.reads,
        out.failed_reads,
        out.writes,
        out.rsp_beats,
        out.wr_beats,
        out.rq_beats,
        stats.write_tlps,
        stats.read_tlps,
        out.rc_beats,
        stats.completions,
        stats.straddled_beats,
        out.rc_stalls,
        stats.rq_stalls,
        stats.max_reads_out
    );
    assert_eq!(u64::from(uut.write_tlps()), stats.write_tlps);
    assert_eq!(
        stats.write_tlps, out.write_tlps,
        "seed {seed:#x}: write TLPs sent, against those the writes need"
    );
    assert_eq!(u64::from(uut.read_tlps()), stats.read_tlps);
    // The run exercised what it claims to.
    assert_eq!(shape.straddle, stats.straddled_beats > 0);
    out
}

#[test]
fn random_reads_and_writes_match_a_plain_memory_mps256_mrrs512() {
    run(0x5eed_0001, 1, 2, 40, 80, STRADDLED);
}

#[test]
fn random_reads_and_writes_match_a_plain_memory_mps128_mrrs128() {
    run(0x5eed_0002, 0, 0, 20, 80, STRADDLED);
}

#[test]
fn random_reads_and_writes_match_a_plain_memory_mps512_mrrs4096() {
    run(0x5eed_0003, 2, 5, 20, 80, STRADDLED);
}

/// Every completion one RCB (64 bytes) long: the most beats shared by two
/// completions, and the most that start where the beat before left off.
#[test]
fn random_reads_match_with_every_completion_one_rcb_long() {
    let shape = Rc {
        straddle: true,
        max_completion_bytes: 64,
    };
    run(0x5eed_0004, 1, 2, 20, 80, shape);
}

/// The block built with RC straddle off: one completion per beat, ended by
/// `tlast` (the requester reads `is_eop` either way).
#[test]
fn random_reads_and_writes_match_a_plain_memory_straddle_off() {
    let shape = Rc {
        straddle: false,
        max_completion_bytes: 256,
    };
    run(0x5eed_0005, 1, 2, 20, 80, shape);
}

/// A write outside every IOMMU region is a card bug and must end the
/// simulation: the root complex refuses the TLP with the fault (the glue
/// panics with it), and nothing past the region is written. (The write is
/// split at the MPS multiple that is the region's end: its first TLP is in.)
#[test]
fn a_write_outside_the_iommu_regions_fails_loudly() {
    let mut host = HostMemory::new();
    host.map(W_BASE, W_HALF, "write area").unwrap();
    let mut rc = RootComplex::new(RootComplexConfig::default(), host, 256, 512);
    let mut uut: Sim<PcieRequester> = Sim::traced_on_failure("pcie_requester_fault");
    uut.set_cfg_max_payload(1);
    uut.set_cfg_max_read_req(2);
    uut.set_reset(true);
    uut.tick();
    uut.set_reset(false);
    // 100 bytes, the last 36 past the region's end.
    let start = W_BASE + W_HALF - 64;
    let mut beats: VecDeque<WrBeat> = write_beats(start, &[0x5A; 100], 0).into();
    let mut fault = None;
    for cycle in 1..1000u64 {
        match beats.front() {
            Some(b) => {
                uut.set_s_dma_wr_valid(true);
                uut.set_s_dma_wr_addr(b.addr);
                uut.set_s_dma_wr_data(&words(&b.data));
                uut.set_s_dma_wr_strb(b.strb);
                uut.set_s_dma_wr_last(b.last);
            }
            None => uut.set_s_dma_wr_valid(false),
        }
        let ready = rc.rq_ready(cycle);
        uut.set_s_axis_rq_tready(ready);
        uut.eval();
        if uut.s_dma_wr_valid() && uut.s_dma_wr_ready() {
            beats.pop_front();
        }
        if uut.s_axis_rq_tvalid() && ready {
            if let Err(e) = rc.rq_beat(
                cycle,
                &uut.s_axis_rq_tdata(),
                &uut.s_axis_rq_tuser(),
                uut.s_axis_rq_tkeep(),
                uut.s_axis_rq_tlast(),
            ) {
                fault = Some(e);
                break;
            }
        }
        uut.tick();
    }
    let fault = fault.expect("the write past the region's end was not refused");
    let text = fault.to_string();
    assert!(
        text.contains("IOMMU fault: DMA write") && text.contains("\"write area\""),
        "{text}"
    );
    let mut b = [0u8; 36];
    rc.memory().read(W_BASE + W_HALF, &mut b);
    assert_eq!(b, [0; 36], "a refused TLP wrote host memory");
}

//! Block testbench of the PCIe completer (`homa_hw::pcie::completer`) in
//! Verilator against a reference: random BAR requests from the host, as the
//! hard block's CQ stream carries them (`homa_hw_sim::tlp`), with gaps;
//! a register file behind the CSR port answering reads after 1 to 3 cycles;
//! random back-pressure on CC. The reference applies the same requests in
//! order to its own register file and predicts every CSR write (address and
//! data, partial-byte-enable Dwords skipped), every completion (status,
//! requester, tag, TC, attributes, address type, lower address, byte count,
//! Dword count, data) and the two counters. Requests: reads of 1 to 13 Dwords,
//! reads too long (unsupported request), writes of 1 to 16 Dwords (one or two
//! beats: write-combined 64-byte bursts), writes too long and I/O reads
//! (consumed, counted, unanswered).

use std::collections::{HashMap, VecDeque};

use homa_hw::pcie::completer::{completion_bytes, MAX_READ_DWORDS};
use homa_hw_sim::tlp::{BarRequest, Completion, REQ_IO_READ, REQ_MEM_READ, REQ_MEM_WRITE};
use homa_hw_sim::{PcieCompleter, Sim};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Dword addresses in the 16 MiB BAR.
const BAR_DWORDS: u64 = 1 << 22;

fn unwritten(addr: u32) -> u32 {
    addr.wrapping_mul(0x9E37_79B1) ^ 0x5A5A_5A5A
}

fn random_be(rng: &mut ChaCha8Rng) -> u8 {
    if rng.gen_bool(0.8) {
        0xF
    } else {
        rng.gen_range(1..16)
    }
}

fn random_request(rng: &mut ChaCha8Rng, tag: u8) -> BarRequest {
    let kind = rng.gen_range(0..100);
    let (req_type, dwords) = match kind {
        0..=44 => (
            REQ_MEM_WRITE,
            if rng.gen_bool(0.5) {
                1
            } else {
                rng.gen_range(1..=16)
            },
        ),
        45..=84 => (
            REQ_MEM_READ,
            if rng.gen_bool(0.5) {
                1
            } else {
                rng.gen_range(1..=MAX_READ_DWORDS as u32)
            },
        ),
        85..=89 => (REQ_MEM_READ, rng.gen_range(14..=32)),
        90..=94 => (REQ_MEM_WRITE, rng.gen_range(17..=40)),
        _ => (REQ_IO_READ, 1),
    };
    let dw_addr = if rng.gen_bool(0.9) {
        rng.gen_range(0..48)
    } else {
        BAR_DWORDS - u64::from(dwords) - rng.gen_range(0..8)
    };
    let first_be = random_be(rng);
    let last_be = if dwords == 1 { 0 } else { random_be(rng) };
    BarRequest {
        req_type,
        dw_addr,
        dwords,
        first_be,
        last_be,
        requester: rng.gen(),
        tag,
        tc: rng.gen_range(0..8),
        attr: rng.gen_range(0..8),
        at: 0,
        data: if req_type == REQ_MEM_WRITE {
            (0..dwords).map(|_| rng.gen()).collect()
        } else {
            Vec::new()
        },
    }
}

/// What the reference predicts.
#[derive(Default)]
struct Expected {
    writes: Vec<(u32, u32)>,
    completions: Vec<Completion>,
    dropped: u32,
    partial: u32,
}

fn predict(requests: &[BarRequest]) -> Expected {
    let mut regs: HashMap<u32, u32> = HashMap::new();
    let mut e = Expected::default();
    for r in requests {
        let addr = |i: u32| ((r.dw_addr + u64::from(i)) % BAR_DWORDS * 4) as u32;
        let be = |i: u32| {
            if i == 0 {
                r.first_be
            } else if i + 1 == r.dwords {
                r.last_be
            } else {
                0xF
            }
        };
        match r.req_type {
            REQ_MEM_WRITE if r.dwords <= 16 => {
                for i in 0..r.dwords {
                    if be(i) == 0xF {
                        regs.insert(addr(i), r.data[i as usize]);
                        e.writes.push((addr(i), r.data[i as usize]));
                    } else {
                        e.partial += 1;
                    }
                }
            }
            REQ_MEM_READ => {
                let (byte_count, lower_addr) =
                    completion_bytes(r.dwords, r.dw_addr, r.first_be, r.last_be);
                let ok = u64::from(r.dwords) <= MAX_READ_DWORDS;
                e.completions.push(Completion {
                    lower_addr,
                    at: r.at,
                    byte_count,
                    dwords: if ok { r.dwords } else { 0 },
                    status: if ok { 0 } else { 1 },
                    requester: r.requester,
                    tag: r.tag,
                    tc: r.tc,
                    attr: r.attr,
                    data: if ok {
                        (0..r.dwords)
                            .map(|i| *regs.get(&addr(i)).unwrap_or(&unwritten(addr(i))))
                            .collect()
                    } else {
                        Vec::new()
                    },
                });
            }
            _ => e.dropped += 1,
        }
    }
    e
}

#[test]
fn bar_requests_become_csr_accesses_and_completions_as_the_reference_says() {
    let seed = 0x7c_c0de;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let requests: Vec<BarRequest> = (0..3000)
        .map(|i| random_request(&mut rng, i as u8))
        .collect();
    let expected = predict(&requests);
    let mut beats: VecDeque<_> = requests.iter().flat_map(|r| r.cq_beats()).collect();

    let mut uut: Sim<PcieCompleter> = Sim::traced_on_failure("pcie_completer");
    uut.set_reset(true);
    uut.tick();
    uut.tick();
    uut.set_reset(false);
    let mut regs: HashMap<u32, u32> = HashMap::new();
    let mut writes = Vec::new();
    let mut completions = Vec::new();
    // A read answer due at a cycle, and its data.
    let mut pending_read: Option<(u64, u32)> = None;
    let mut one_dword_read_latency = None;
    let mut read_started = None;
    for cycle in 0..2_000_000u64 {
        let gap = rng.gen_bool(0.2);
        match beats.front() {
            Some(b) if !gap => {
                uut.set_m_axis_cq_tdata(&b.tdata);
                uut.set_m_axis_cq_tuser(&b.tuser);
                uut.set_m_axis_cq_tlast(b.tlast);
                uut.set_m_axis_cq_tvalid(true);
            }
            _ => uut.set_m_axis_cq_tvalid(false),
        }
        match pending_read {
            Some((due, data)) if due == cycle => {
                uut.set_csr_rd_valid(true);
                uut.set_csr_rd_data(data);
                pending_read = None;
            }
            _ => uut.set_csr_rd_valid(false),
        }
        let cc_ready = rng.gen_bool(0.7);
        uut.set_s_axis_cc_tready(cc_ready);
        uut.eval();

        let cq_taken = uut.m_axis_cq_tvalid() && uut.m_axis_cq_tready();
        if cq_taken && read_started.is_none() {
            let b = beats.front().unwrap();
            // A 1-Dword read: time it from its beat to its completion.
            if b.tdata[2] >> 11 & 0xF == 0 && b.tdata[2] & 0x7FF == 1 {
                read_started = Some(cycle);
            }
        }
        if uut.csr_wr_en() {
            regs.insert(uut.csr_addr(), uut.csr_wr_data());
            writes.push((uut.csr_addr(), uut.csr_wr_data()));
        }
        if uut.csr_rd_en() {
            assert!(
                pending_read.is_none(),
                "a second CSR read before the first was answered"
            );
            let a = uut.csr_addr();
            let data = *regs.get(&a).unwrap_or(&unwritten(a));
            pending_read = Some((cycle + rng.gen_range(1..=3), data));
        }
        if uut.s_axis_cc_tvalid() && cc_ready {
            assert!(uut.s_axis_cc_tlast());
            let c = Completion::parse(&uut.s_axis_cc_tdata(), uut.s_axis_cc_tkeep())
                .unwrap_or_else(|e| panic!("completion {}: {e}", completions.len()));
            let n = completions.len();
            assert_eq!(
                Some(&c),
                expected.completions.get(n),
                "completion {n} (seed {seed:#x}, cycle {cycle})"
            );
            if let Some(t) = read_started.take() {
                one_dword_read_latency.get_or_insert(cycle - t);
            }
            completions.push(c);
        }
        uut.tick();
        if cq_taken {
            beats.pop_front();
        }
        if beats.is_empty() && completions.len() == expected.completions.len() {
            break;
        }
    }
    // The last write may still be playing out (a Dword a cycle).
    uut.set_m_axis_cq_tvalid(false);
    for _ in 0..32 {
        uut.eval();
        if uut.csr_wr_en() {
            writes.push((uut.csr_addr(), uut.csr_wr_data()));
        }
        uut.tick();
    }
    assert!(beats.is_empty(), "{} CQ beats never taken", beats.len());
    assert_eq!(completions.len(), expected.completions.len());
    assert_eq!(writes.len(), expected.writes.len(), "CSR writes");
    for (i, (got, want)) in writes.iter().zip(&expected.writes).enumerate() {
        assert_eq!(got, want, "CSR write {i} (address, data), seed {seed:#x}");
    }
    assert_eq!(uut.dropped(), expected.dropped, "requests dropped");
    assert_eq!(
        uut.partial_writes(),
        expected.partial,
        "partial Dwords skipped"
    );
    eprintln!(
        "{} requests: {} CSR writes, {} completions ({} unsupported), {} dropped, {} partial Dwords; \
         a 1-Dword read took {:?} cycles from its CQ beat to its completion (with 1-3 cycles of CSR latency, CC ready 70%)",
        requests.len(),
        writes.len(),
        completions.len(),
        completions.iter().filter(|c| c.status != 0).count(),
        expected.dropped,
        expected.partial,
        one_dword_read_latency
    );
}

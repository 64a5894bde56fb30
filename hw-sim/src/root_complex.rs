//! The host behind the PCIe hard block, as the card's requester interface
//! sees it: memory-read and memory-write TLPs taken from the requester request
//! stream (RQ), completions given back on the requester completion stream
//! (RC), in the UltraScale+ block's 512-bit Dword-aligned formats (field
//! positions in `homa_hw::pcie::requester` and `rq_read`).
//!
//! DESIGN NOTES
//! ------------
//! Cycle stepped like `pcie.rs`: each core cycle the glue asks
//! [`RootComplex::rq_ready`] whether RQ takes a beat, hands an accepted beat
//! to [`RootComplex::rq_beat`], and takes RC beats from
//! [`RootComplex::rc_beat`] (holding one until the card's `tready`).
//!
//! What it models, each a [`RootComplexConfig`] field:
//! - Host memory with the IOMMU regions of `host_memory`: a write outside
//!   them is an error the glue must end the simulation with (it is a card
//!   bug); a read outside them is answered "unsupported request" (what an
//!   IOMMU fault looks like to the card) and counted.
//! - Posted writes become visible `write_visible_cycles` after their last
//!   beat; reads and writes reach memory in the order they were sent (a read
//!   takes its data when it reaches memory, so it sees every earlier write:
//!   PCIe's "a read does not pass a posted write").
//! - Read completions start `read_latency_cycles` after the request (plus up
//!   to `read_jitter_cycles`, drawn per read from `seed`), are split at the
//!   read completion boundary (`rcb_bytes`) into completions of random sizes
//!   up to `max_completion_bytes`, in address order within a read, and
//!   interleaved across reads in a seeded random order: completions of
//!   different tags arrive out of order (`interleave`; off, the oldest
//!   read's completions go first).
//! - RC straddle (`rc_straddle`, the block's 2-TLP straddle, on by default
//!   as the card's IP is built): a completion may start at Dword 8 of a beat
//!   in which the one before it ended at Dword 7 or earlier, so at most two
//!   completions share a beat; `is_sop`/`is_eop` and their pointers in
//!   `tuser` delimit them, `tlast` is 0 and `tkeep` all ones (PG213,
//!   "Straddle Option"). Off, each completion starts a beat of its own and
//!   ends with `tlast`; `is_sop[0]`/`is_eop[0]` are set the same way.
//! - Bandwidth: payload bytes per cycle on RC and on RQ (credit counters, as
//!   in `pcie.rs`); the TLP headers and descriptors are not charged (the
//!   rate is what the link delivers after them).
//! - Tags: at most `max_reads` reads outstanding; past that RQ's `tready` is
//!   low (the block has no non-posted credit), and a tag reused while out is
//!   a card bug.
//! - Credit back-pressure: besides the above, `tready` drops at random
//!   (`rq_stall_per_mille`).
//!
//! Default latencies, from published measurements: Neugebauer et al.,
//! "Understanding PCIe performance for end host networking" (SIGCOMM 2018)
//! measure DMA read round trips of small transfers on Xeon hosts at roughly
//! 0.5-1 us (pcie-bench, Section 6); we take 800 ns (200 cycles at 250 MHz),
//! the figure `pcie.rs` already uses. A posted write has no completion to
//! time; its visibility is estimated as the one-way half of that round
//! trip, 400 ns (100 cycles). Payload rate: 12.5 GB/s per direction (50
//! bytes a cycle), what a Gen3 x16 link delivers after TLP overheads.

use std::collections::{BTreeMap, VecDeque};

use crate::host_memory::{DmaDir, DmaFault, HostMemory};

/// Words of a 512-bit beat (word 0 = bits 31:0).
pub const BEAT_WORDS: usize = 16;

/// The host's timing and limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootComplexConfig {
    /// Cycles from a read request's last RQ beat to its first completion's
    /// earliest start (800 ns).
    pub read_latency_cycles: u64,
    /// Extra read latency, 0..=this, per read from `seed`: reorders
    /// completions across tags.
    pub read_jitter_cycles: u64,
    /// Cycles from a write's last RQ beat to its bytes being in host memory
    /// (400 ns). At most `read_latency_cycles`.
    pub write_visible_cycles: u64,
    /// Read completion boundary: completions of one read split only at
    /// multiples of this (64 or 128).
    pub rcb_bytes: u32,
    /// Payload bytes per completion at most (a multiple of `rcb_bytes`).
    pub max_completion_bytes: u32,
    /// Payload bytes per cycle on RC and on RQ.
    pub bytes_per_cycle: u32,
    /// Reads outstanding at most (non-posted credits / tags).
    pub max_reads: usize,
    /// RQ `tready` low at random this many cycles per thousand.
    pub rq_stall_per_mille: u32,
    /// Completions of reads whose data is ready interleave in a random
    /// order (true: completions of different tags out of order, the
    /// default), or the oldest read's go first (false: a root complex that
    /// answers reads in turn, the kindest to a reorder buffer).
    pub interleave: bool,
    /// RC 2-TLP straddle: a completion may start at Dword 8 of the beat in
    /// which the previous one ended (true, as the card's IP is built).
    pub rc_straddle: bool,
    /// Seed of jitter, completion sizes, interleaving and stalls.
    pub seed: u64,
}

impl Default for RootComplexConfig {
    fn default() -> Self {
        RootComplexConfig {
            read_latency_cycles: 200,
            read_jitter_cycles: 0,
            write_visible_cycles: 100,
            rcb_bytes: 64,
            max_completion_bytes: 256,
            bytes_per_cycle: 50,
            max_reads: 64,
            rq_stall_per_mille: 0,
            interleave: true,
            rc_straddle: true,
            seed: 0,
        }
    }
}

/// A TLP the card should not have sent: each ends the simulation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RqError {
    #[error(transparent)]
    Fault(#[from] DmaFault),
    #[error("RQ beat with no TLP open and is_sop clear (cycle {cycle})")]
    NoStart { cycle: u64 },
    #[error("RQ request type {req_type:#06b} is not a memory read or write (cycle {cycle})")]
    Type { req_type: u8, cycle: u64 },
    #[error("read TLP at {addr:#x} reuses tag {tag}, still outstanding (cycle {cycle})")]
    TagInUse { addr: u64, tag: u8, cycle: u64 },
    #[error("write TLP at {addr:#x}: {dwords} Dwords announced, {got} carried (cycle {cycle})")]
    Length {
        addr: u64,
        dwords: u32,
        got: u32,
        cycle: u64,
    },
    #[error("TLP at {addr:#x} of {dwords} Dwords crosses a 4 KB boundary (cycle {cycle})")]
    Crosses4k { addr: u64, dwords: u32, cycle: u64 },
    #[error("TLP at {addr:#x}: {bytes} bytes exceeds the limit of {max} (cycle {cycle})")]
    TooLong {
        addr: u64,
        bytes: u32,
        max: u32,
        cycle: u64,
    },
    #[error("RQ tkeep {keep:#06x} is not a run from Dword 0 (cycle {cycle})")]
    Keep { keep: u16, cycle: u64 },
}

/// What went over the link; counts since creation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RootComplexStats {
    pub write_tlps: u64,
    pub read_tlps: u64,
    pub bytes_written: u64,
    pub completions: u64,
    pub rc_beats: u64,
    /// RC beats in which a completion starts at Dword 8 (straddle).
    pub straddled_beats: u64,
    pub rq_beats: u64,
    /// Cycles RQ `tready` was low.
    pub rq_stalls: u64,
    /// Reads refused by the IOMMU (answered unsupported request).
    pub read_faults: u64,
    pub max_reads_out: usize,
}

/// `m_axis_rc_tuser` bits (512-bit interface, PG213): is_sop[3:0] at 64,
/// is_sop0_ptr at 68 and is_sop1_ptr at 70 (2 bits each, in units of 4
/// Dwords), is_eop[3:0] at 76, is_eop0_ptr at 80 and is_eop1_ptr at 84 (4
/// bits each, a TLP's last Dword), discontinue at 96 (never set here).
pub mod rc_user {
    pub const IS_SOP: usize = 64;
    pub const IS_SOP0_PTR: usize = 68;
    pub const IS_EOP: usize = 76;
    pub const IS_EOP0_PTR: usize = 80;
    /// Words of the 161-bit bus.
    pub const WORDS: usize = 6;
}

/// One RC beat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RcBeat {
    pub tdata: [u32; BEAT_WORDS],
    pub tuser: [u32; rc_user::WORDS],
    pub tkeep: u16,
    pub tlast: bool,
    /// Payload bytes it carries (what the link's rate is charged).
    pub payload_bytes: u32,
}

impl RcBeat {
    fn empty(straddle: bool) -> Self {
        RcBeat {
            tdata: [0; BEAT_WORDS],
            tuser: [0; rc_user::WORDS],
            tkeep: if straddle { 0xFFFF } else { 0 },
            tlast: false,
            payload_bytes: 0,
        }
    }

    fn user(&self, lsb: usize, width: usize) -> u64 {
        get(&self.tuser, lsb, width)
    }
}

/// A memory access in flight to host memory, applied in order.
#[derive(Debug)]
enum Access {
    Write { addr: u64, bytes: Vec<u8> },
    Read { id: u64 },
}

/// A read between its request and its last completion.
#[derive(Debug)]
struct Read {
    tag: u8,
    addr: u64,
    len: u32,
    /// Host memory's bytes when the read reached memory (None until then,
    /// or for a refused read).
    data: Option<Vec<u8>>,
    refused: bool,
    /// Bytes already sent in completions.
    sent: u32,
    /// Earliest cycle its completions may start.
    ready_at: u64,
}

/// The host behind the hard block.
#[derive(Debug)]
pub struct RootComplex {
    config: RootComplexConfig,
    memory: HostMemory,
    /// The TLP being received: descriptor words and payload Dwords so far.
    rx_desc: Option<[u32; 4]>,
    rx_first_be: u8,
    rx_last_be: u8,
    rx_payload: Vec<u32>,
    /// Accesses on their way to memory, by the cycle they arrive (in order).
    to_memory: VecDeque<(u64, Access)>,
    reads: BTreeMap<u64, Read>,
    next_read: u64,
    tags_out: [bool; 256],
    /// Beats of the completions being sent.
    rc_queue: VecDeque<RcBeat>,
    /// The queue's last beat may take a second completion at Dword 8.
    rc_tail_open: bool,
    rc_credit: i64,
    rc_refilled: u64,
    rq_credit: i64,
    rq_refilled: u64,
    rng: u64,
    now: u64,
    stats: RootComplexStats,
    /// The largest TLP payload the card may write (its MPS) and read (MRRS).
    max_write_bytes: u32,
    max_read_bytes: u32,
}

fn get(words: &[u32], lsb: usize, width: usize) -> u64 {
    (0..width).fold(0, |v, i| {
        let b = lsb + i;
        v | (u64::from(words[b / 32] >> (b % 32) & 1) << i)
    })
}

fn put(words: &mut [u32], lsb: usize, width: usize, value: u64) {
    for i in 0..width {
        if value >> i & 1 == 1 {
            let b = lsb + i;
            words[b / 32] |= 1 << (b % 32);
        }
    }
}

impl RootComplex {
    /// A host with `config` and `memory`; the card writes at most
    /// `max_write_bytes` per TLP and reads at most `max_read_bytes`.
    pub fn new(
        config: RootComplexConfig,
        memory: HostMemory,
        max_write_bytes: u32,
        max_read_bytes: u32,
    ) -> Self {
        assert!(
            config.bytes_per_cycle > 0,
            "bytes_per_cycle must be at least 1"
        );
        assert!(
            config.rcb_bytes == 64 || config.rcb_bytes == 128,
            "rcb_bytes must be 64 or 128"
        );
        assert!(
            config.max_completion_bytes >= config.rcb_bytes
                && config.max_completion_bytes % config.rcb_bytes == 0,
            "max_completion_bytes must be a multiple of rcb_bytes"
        );
        assert!(
            config.write_visible_cycles <= config.read_latency_cycles,
            "a read must not complete before earlier writes are visible"
        );
        let rng = config.seed ^ 0x5851_f42d_4c95_7f2d;
        RootComplex {
            rc_credit: i64::from(config.bytes_per_cycle),
            rq_credit: i64::from(config.bytes_per_cycle),
            config,
            memory,
            rx_desc: None,
            rx_first_be: 0,
            rx_last_be: 0,
            rx_payload: Vec::new(),
            to_memory: VecDeque::new(),
            reads: BTreeMap::new(),
            next_read: 0,
            tags_out: [false; 256],
            rc_queue: VecDeque::new(),
            rc_tail_open: false,
            rc_refilled: 0,
            rq_refilled: 0,
            rng,
            now: 0,
            stats: RootComplexStats::default(),
            max_write_bytes,
            max_read_bytes,
        }
    }

    fn draw(&mut self) -> u64 {
        // splitmix64
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Moves time to `now`: accesses due reach memory.
    fn advance(&mut self, now: u64) {
        assert!(now >= self.now, "time runs forward");
        self.now = now;
        while self.to_memory.front().is_some_and(|(t, _)| *t <= now) {
            let (_, access) = self.to_memory.pop_front().unwrap();
            match access {
                Access::Write { addr, bytes } => self.memory.write(addr, &bytes),
                Access::Read { id } => {
                    let read = self.reads.get_mut(&id).unwrap();
                    if !read.refused {
                        let mut data = vec![0; read.len as usize];
                        self.memory.read(read.addr, &mut data);
                        read.data = Some(data);
                    }
                }
            }
        }
    }

    fn refill(credit: &mut i64, refilled: &mut u64, now: u64, rate: u32) {
        let rate = i64::from(rate);
        let dt = (now - *refilled).min(1 << 20) as i64;
        *credit = (*credit + rate * dt).min(rate);
        *refilled = now;
    }

    /// Whether RQ takes a beat in cycle `now` (`s_axis_rq_tready`); call once
    /// a cycle, before offering the beat.
    pub fn rq_ready(&mut self, now: u64) -> bool {
        self.advance(now);
        Self::refill(
            &mut self.rq_credit,
            &mut self.rq_refilled,
            now,
            self.config.bytes_per_cycle,
        );
        let stall = self.config.rq_stall_per_mille > 0
            && self.draw() % 1000 < u64::from(self.config.rq_stall_per_mille);
        let ready = !stall && self.rq_credit >= 0 && self.reads.len() < self.config.max_reads;
        if !ready {
            self.stats.rq_stalls += 1;
        }
        ready
    }

    /// An RQ beat the card sent in cycle `now` (valid and ready).
    pub fn rq_beat(
        &mut self,
        now: u64,
        tdata: &[u32; BEAT_WORDS],
        tuser: &[u32],
        tkeep: u16,
        tlast: bool,
    ) -> Result<(), RqError> {
        self.advance(now);
        self.stats.rq_beats += 1;
        if tkeep.count_ones() != 16 - tkeep.leading_zeros() || tkeep == 0 {
            return Err(RqError::Keep {
                keep: tkeep,
                cycle: now,
            });
        }
        let keep_dw = tkeep.count_ones() as usize;
        let mut first = 0;
        if self.rx_desc.is_none() {
            if get(tuser, 20, 1) == 0 {
                return Err(RqError::NoStart { cycle: now });
            }
            self.rx_desc = Some([tdata[0], tdata[1], tdata[2], tdata[3]]);
            self.rx_first_be = get(tuser, 0, 4) as u8;
            self.rx_last_be = get(tuser, 8, 4) as u8;
            self.rx_payload.clear();
            first = 4;
        }
        self.rx_payload
            .extend_from_slice(&tdata[first..keep_dw.max(first)]);
        self.rq_credit -= (4 * (keep_dw.saturating_sub(first))) as i64;
        if !tlast {
            return Ok(());
        }
        let desc = self.rx_desc.take().unwrap();
        let addr = get(&desc, 2, 62) << 2;
        let dwords = get(&desc, 64, 11) as u32;
        let req_type = get(&desc, 75, 4) as u8;
        let tag = get(&desc, 96, 8) as u8;
        let (fbe, lbe) = (self.rx_first_be, self.rx_last_be);
        // Bytes [start, end) the request covers. A bad descriptor can put a
        // request at the top of the address space: the sums wrap there (the
        // 4 KB check and the IOMMU then refuse it) instead of overflowing.
        let start = addr.wrapping_add(u64::from(if fbe == 0 { 0 } else { fbe.trailing_zeros() }));
        let end = if dwords == 1 {
            addr.wrapping_add(u64::from(if fbe == 0 {
                1
            } else {
                8 - fbe.leading_zeros()
            }))
        } else {
            addr.wrapping_add(4 * u64::from(dwords) - 4)
                .wrapping_add(u64::from(if lbe == 0 {
                    1
                } else {
                    8 - lbe.leading_zeros()
                }))
        };
        if addr / 4096 != addr.wrapping_add(4 * u64::from(dwords) - 1) / 4096 {
            return Err(RqError::Crosses4k {
                addr,
                dwords,
                cycle: now,
            });
        }
        match req_type {
            0b0001 => {
                if self.rx_payload.len() != dwords as usize {
                    return Err(RqError::Length {
                        addr,
                        dwords,
                        got: self.rx_payload.len() as u32,
                        cycle: now,
                    });
                }
                if 4 * dwords > self.max_write_bytes + 4 {
                    return Err(RqError::TooLong {
                        addr,
                        bytes: 4 * dwords,
                        max: self.max_write_bytes,
                        cycle: now,
                    });
                }
                let bytes: Vec<u8> = self
                    .rx_payload
                    .iter()
                    .flat_map(|w| w.to_le_bytes())
                    .collect();
                let lead = (start - addr) as usize;
                let bytes = bytes[lead..lead + end.wrapping_sub(start) as usize].to_vec();
                if let Err(mut fault) =
                    self.memory
                        .check(DmaDir::Write, start, end.wrapping_sub(start))
                {
                    fault.cycle = Some(now);
                    return Err(fault.into());
                }
                self.stats.write_tlps += 1;
                self.stats.bytes_written += bytes.len() as u64;
                self.to_memory.push_back((
                    now + self.config.write_visible_cycles,
                    Access::Write { addr: start, bytes },
                ));
            }
            0b0000 => {
                if self.tags_out[usize::from(tag)] {
                    return Err(RqError::TagInUse {
                        addr,
                        tag,
                        cycle: now,
                    });
                }
                let len = end.wrapping_sub(start) as u32;
                if len > self.max_read_bytes {
                    return Err(RqError::TooLong {
                        addr,
                        bytes: len,
                        max: self.max_read_bytes,
                        cycle: now,
                    });
                }
                let refused = self
                    .memory
                    .check(DmaDir::Read, start, u64::from(len))
                    .is_err();
                if refused {
                    self.stats.read_faults += 1;
                }
                let jitter = if self.config.read_jitter_cycles > 0 {
                    self.draw() % (self.config.read_jitter_cycles + 1)
                } else {
                    0
                };
                let id = self.next_read;
                self.next_read += 1;
                self.tags_out[usize::from(tag)] = true;
                self.reads.insert(
                    id,
                    Read {
                        tag,
                        addr: start,
                        len,
                        data: None,
                        refused,
                        sent: 0,
                        ready_at: now + self.config.read_latency_cycles + jitter,
                    },
                );
                self.to_memory
                    .push_back((now + self.config.write_visible_cycles, Access::Read { id }));
                self.stats.read_tlps += 1;
                self.stats.max_reads_out = self.stats.max_reads_out.max(self.reads.len());
            }
            req_type => {
                return Err(RqError::Type {
                    req_type,
                    cycle: now,
                })
            }
        }
        Ok(())
    }

    /// The RC beat for cycle `now`, if one is due and the link has the
    /// bandwidth. The caller holds it until the card takes it, and asks
    /// again only then.
    pub fn rc_beat(&mut self, now: u64) -> Option<RcBeat> {
        self.advance(now);
        Self::refill(
            &mut self.rc_credit,
            &mut self.rc_refilled,
            now,
            self.config.bytes_per_cycle,
        );
        if self.rc_credit < 0 {
            return None;
        }
        // A beat with room for a second completion waits for nothing: the
        // block straddles what is there when the beat leaves.
        if self.rc_queue.is_empty() || (self.rc_queue.len() == 1 && self.rc_tail_open) {
            self.next_completion(now);
        }
        let beat = self.rc_queue.pop_front()?;
        if self.rc_queue.is_empty() {
            self.rc_tail_open = false;
        }
        self.rc_credit -= i64::from(beat.payload_bytes);
        self.stats.rc_beats += 1;
        Some(beat)
    }

    /// Picks a read whose data is ready, at random, and queues its next
    /// completion's beats.
    fn next_completion(&mut self, now: u64) {
        let ready: Vec<u64> = self
            .reads
            .iter()
            .filter(|(_, r)| r.ready_at <= now && (r.data.is_some() || r.refused))
            .map(|(id, _)| *id)
            .collect();
        if ready.is_empty() {
            return;
        }
        let id = if self.config.interleave {
            ready[(self.draw() % ready.len() as u64) as usize]
        } else {
            ready[0]
        };
        let rcb = u64::from(self.config.rcb_bytes);
        let chunks =
            self.draw() % u64::from(self.config.max_completion_bytes / self.config.rcb_bytes) + 1;
        let read = self.reads.get_mut(&id).unwrap();
        // A refused read may wrap past the top of the address space.
        let first = read.addr.wrapping_add(u64::from(read.sent));
        let end = read.addr.wrapping_add(u64::from(read.len));
        let mut words = [0u32; BEAT_WORDS];
        let mut payload: Vec<u32> = Vec::new();
        let remaining = read.len - read.sent;
        let (n, status, error_code) = if read.refused {
            (remaining, 1u64, 0b0010u64)
        } else {
            // Up to `chunks` RCB boundaries on, or the end.
            let stop = ((first / rcb + chunks) * rcb).min(end);
            let n = (stop - first) as u32;
            let data = read.data.as_ref().unwrap();
            let lead = (first & 3) as usize;
            let mut bytes = vec![0u8; lead];
            let off = read.sent as usize;
            bytes.extend_from_slice(&data[off..off + n as usize]);
            while bytes.len() % 4 != 0 {
                bytes.push(0);
            }
            payload = bytes
                .chunks(4)
                .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
                .collect();
            (n, 0, 0)
        };
        read.sent += n;
        let done = read.sent == read.len;
        put(&mut words, 0, 12, first & 0xFFF);
        put(&mut words, 12, 4, error_code);
        put(&mut words, 16, 13, u64::from(remaining) & 0x1FFF);
        put(&mut words, 30, 1, u64::from(done));
        put(&mut words, 32, 11, payload.len() as u64);
        put(&mut words, 43, 3, status);
        put(&mut words, 64, 8, u64::from(read.tag));
        let tag = read.tag;
        if done {
            self.reads.remove(&id);
            self.tags_out[usize::from(tag)] = false;
        }
        let mut dws: Vec<u32> = words[..3].to_vec();
        dws.extend(payload);
        self.queue_completion(&dws);
        self.stats.completions += 1;
    }

    /// Lays a completion (descriptor, then payload Dwords) into RC beats:
    /// from Dword 8 of the last queued beat if it has room (straddle), else
    /// from Dword 0 of a new beat.
    fn queue_completion(&mut self, dws: &[u32]) {
        let straddle = self.config.rc_straddle;
        let mut at = if self.rc_tail_open { 8 } else { 0 };
        if self.rc_tail_open {
            self.stats.straddled_beats += 1;
        } else {
            self.rc_queue.push_back(RcBeat::empty(straddle));
        }
        {
            let beat = self.rc_queue.back_mut().unwrap();
            let n = beat.user(rc_user::IS_SOP, 2).count_ones() as usize;
            put(&mut beat.tuser, rc_user::IS_SOP + n, 1, 1);
            put(
                &mut beat.tuser,
                rc_user::IS_SOP0_PTR + 2 * n,
                2,
                at as u64 / 4,
            );
        }
        for (i, &w) in dws.iter().enumerate() {
            if at == BEAT_WORDS {
                self.rc_queue.push_back(RcBeat::empty(straddle));
                at = 0;
            }
            let beat = self.rc_queue.back_mut().unwrap();
            beat.tdata[at] = w;
            if !straddle {
                beat.tkeep |= 1 << at;
            }
            if i >= 3 {
                beat.payload_bytes += 4;
            }
            at += 1;
        }
        let last = at - 1;
        let beat = self.rc_queue.back_mut().unwrap();
        let n = beat.user(rc_user::IS_EOP, 2).count_ones() as usize;
        put(&mut beat.tuser, rc_user::IS_EOP + n, 1, 1);
        put(
            &mut beat.tuser,
            rc_user::IS_EOP0_PTR + 4 * n,
            4,
            last as u64,
        );
        beat.tlast = !straddle;
        self.rc_tail_open = straddle && last <= 7;
    }

    /// The cycle by which every write taken so far is in host memory, if one
    /// is not yet: what a completion leaving the card now waits for, since
    /// PCIe lets no completion pass a posted write.
    pub fn writes_visible_at(&self) -> Option<u64> {
        self.to_memory
            .iter()
            .rev()
            .find(|(_, a)| matches!(a, Access::Write { .. }))
            .map(|(t, _)| *t)
    }

    /// Nothing in flight: every write visible, every read completed.
    pub fn idle(&self) -> bool {
        self.to_memory.is_empty()
            && self.reads.is_empty()
            && self.rc_queue.is_empty()
            && self.rx_desc.is_none()
    }

    pub fn memory(&self) -> &HostMemory {
        &self.memory
    }

    pub fn memory_mut(&mut self) -> &mut HostMemory {
        &mut self.memory
    }

    pub fn stats(&self) -> &RootComplexStats {
        &self.stats
    }

    pub fn config(&self) -> &RootComplexConfig {
        &self.config
    }
}

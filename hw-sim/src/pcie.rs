//! The PCIe link between the simulated card and host memory, as the core's DMA
//! ports see it: read latency, read and write bandwidth, read tags, and the
//! IOMMU check on every access.
//!
//! DESIGN NOTES
//!
//! Transaction level, cycle stepped. The port glue calls, in each cycle `now`
//! (a core clock cycle, 4 ns), [`PcieModel::write_beat`] for a beat the core
//! offers on the DMA write port, [`PcieModel::request_read`] for a request on
//! the read-request port, and [`PcieModel::next_read_beat`] when it has no
//! response beat in hand. `Ok(false)` / `None` mean "not this cycle" (ready or
//! valid low); an `Err` means the core broke a rule and the simulation must
//! end ([`ExpectOk::expect_ok`]). `now` never decreases; cycles in which
//! nothing is called cost nothing.
//!
//! Latency. A read accepted in cycle `t` has its data ready in cycle
//! `t + read_latency_cycles` (+ a per-request jitter, 0 by default); the whole
//! round trip sits on the return path, and the request reaches memory the
//! cycle it is accepted.
//!
//! Bandwidth. Each direction has a credit counter in bytes, refilled by
//! `bytes_per_cycle` every cycle and capped at `bytes_per_cycle` (an idle
//! link does not bank a burst). A beat may pass when the credit is not
//! negative and no other beat passed in that direction this cycle (the ports
//! are one 64-byte beat wide); it then costs its payload bytes, so the credit
//! may go negative and the next beat waits until it is repaid. In steady
//! state a direction moves exactly `bytes_per_cycle` bytes per cycle on
//! average (or one beat per cycle, whichever is less), without rounding drift,
//! for any `bytes_per_cycle`. A "link free at cycle" timestamp was the other
//! candidate; it loses a fraction of a cycle per beat unless kept in
//! fractional units, which is this counter by another name. TLP headers are
//! not modelled: the rate is the payload rate (12.5 GB/s is what a Gen3 x16
//! link delivers after them).
//!
//! Read completions. Reads whose data is ready queue in order of ready cycle
//! (then acceptance); the head streams all its beats before the next starts,
//! so beats of one request arrive in order and are never interleaved with
//! another's. With jitter 0 every read has the same latency and completions
//! come back in request order; with jitter > 0 a later request may complete
//! first, as a root complex may do, deterministically from `seed`.
//!
//! Ordering (the guarantee the core may rely on). A read takes its snapshot of
//! host memory the cycle it is accepted, so it returns every byte written by
//! DMA writes accepted before it (earlier cycles, or earlier calls in the same
//! cycle: the glue calls `write_beat` before `request_read`) and by the host
//! CPU up to then, and nothing written later. This is PCIe's rule that a read
//! does not pass a posted write; writes are posted: an accepted beat is in
//! host memory at once. Later writes never show up in an earlier read's data.
//!
//! IOMMU. Every read request and every write beat must lie inside one region
//! the host mapped (see `host_memory`); otherwise the call returns the fault,
//! with the cycle, and nothing is read or written. Faults are checked before
//! back-pressure, so a bad access fails even when the link is busy. Write
//! beats are checked one at a time (the model keeps no transaction state): a
//! transaction whose beats fall in two adjacent regions passes.

use std::collections::BTreeMap;

use crate::host_memory::{DmaDir, DmaFault, ExpectOk, HostMemory, BEAT_BYTES};

/// The longest read the DMA read-request port can express, in bytes.
pub const PORT_MAX_READ_BYTES: u32 = 4096;

/// Read tags the port's 8-bit tag can name.
pub const PORT_TAGS: usize = 256;

/// The link's timing and limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PcieConfig {
    /// Cycles (4 ns) from a read request's acceptance to its first response
    /// beat on an idle link: the read round trip. 200 = 800 ns, a PCIe Gen3
    /// x16 host.
    pub read_latency_cycles: u64,
    /// Extra read latency, 0..=this many cycles, drawn per request from
    /// `seed`; 0 makes completions return in request order.
    pub read_latency_jitter_cycles: u64,
    /// Payload bytes per cycle each direction carries on average, reads and
    /// writes budgeted separately. 50 = 12.5 GB/s at 250 MHz. At 64 or more the
    /// one-beat-per-cycle port is the limit.
    pub bytes_per_cycle: u32,
    /// Reads accepted and not yet completed, at most (the tags the DMA shell
    /// can track); further requests wait. 1 to 256.
    pub max_outstanding_reads: usize,
    /// Bytes one read request may ask for, 1 to 4096; a longer request is a
    /// core bug.
    pub max_read_len: u32,
    /// Seed of the latency jitter: the same seed, the same simulation.
    pub seed: u64,
}

impl Default for PcieConfig {
    fn default() -> Self {
        PcieConfig {
            read_latency_cycles: 200,
            read_latency_jitter_cycles: 0,
            bytes_per_cycle: 50,
            max_outstanding_reads: 32,
            max_read_len: PORT_MAX_READ_BYTES,
            seed: 0,
        }
    }
}

/// One beat on the DMA read-response port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadBeat {
    /// The request's tag.
    pub tag: u8,
    /// Lane `i` (bits 8i+7:8i) holds byte `64k + i` of the request for beat
    /// `k`; lanes past the request's end are 0.
    pub data: [u8; BEAT_BYTES],
    /// The request's final beat; its tag is free again.
    pub last: bool,
}

/// A read request the core should not have made: every variant is a bug in
/// the core (or in the host's mappings) and ends the simulation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    #[error(transparent)]
    Fault(#[from] DmaFault),
    #[error("DMA read of {len} bytes at {addr:#x}: the length must be 1 to {max} (cycle {cycle})")]
    BadLength {
        addr: u64,
        len: u32,
        max: u32,
        cycle: u64,
    },
    #[error("DMA read at {addr:#x} reuses tag {tag}, still outstanding (cycle {cycle})")]
    TagInUse { addr: u64, tag: u8, cycle: u64 },
}

impl<T> ExpectOk<T> for Result<T, ReadError> {
    #[track_caller]
    fn expect_ok(self) -> T {
        match self {
            Ok(v) => v,
            Err(e) => panic!("simulation failed: {e}"),
        }
    }
}

/// What the link has carried; counts since the model was made.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PcieStats {
    /// Read requests accepted.
    pub read_requests: u64,
    /// Read requests refused because `max_outstanding_reads` were in flight.
    pub read_requests_refused: u64,
    /// Payload bytes delivered in read-response beats.
    pub bytes_read: u64,
    /// Most reads outstanding at once.
    pub max_outstanding_reads: usize,
    /// Write beats accepted.
    pub write_beats: u64,
    /// Write beats refused for lack of write bandwidth (back-pressure).
    pub write_beats_refused: u64,
    /// Write beats accepted with `last` set.
    pub write_transactions: u64,
    /// Bytes written to host memory (enabled strobe lanes of accepted beats).
    pub bytes_written: u64,
    /// Accesses the IOMMU refused, reads and writes.
    pub faults: u64,
    /// Read requests with a bad length or a tag in use.
    pub bad_requests: u64,
}

/// Host memory behind a PCIe link: what serves the core's DMA ports.
#[derive(Debug)]
pub struct PcieModel {
    /// Timing and limits; fixed at creation.
    config: PcieConfig,
    /// The host's memory; the host CPU reaches it through `memory_mut`.
    memory: HostMemory,
    /// Accepted reads not yet streaming, by (cycle their data is ready,
    /// acceptance number): the order they will stream in.
    waiting: BTreeMap<(u64, u64), PendingRead>,
    /// The read whose beats are going out; no other read's beat goes out
    /// until its last one has.
    streaming: Option<PendingRead>,
    /// Bit `t` set while tag `t` is outstanding (accepted, last beat not yet
    /// handed out).
    tags_in_use: [u64; PORT_TAGS / 64],
    /// Read requests accepted so far: the acceptance number of the next,
    /// and the jitter's draw index.
    next_seq: u64,
    /// Bandwidth of the read-response direction.
    read_link: Link,
    /// Bandwidth of the write direction.
    write_link: Link,
    /// The latest cycle any call named; `now` may not go below it.
    now: u64,
    /// Counters.
    stats: PcieStats,
}

/// A read accepted and not yet fully delivered.
#[derive(Debug)]
struct PendingRead {
    /// The request's tag.
    tag: u8,
    /// Host memory's bytes at the request, snapshot when it was accepted.
    data: Vec<u8>,
    /// Bytes of `data` already handed out in beats.
    sent: usize,
}

/// One direction's bandwidth budget.
#[derive(Debug)]
struct Link {
    /// Bytes the link may still send; a beat may start while this is >= 0 and
    /// costs its payload bytes, so it may go negative (a debt).
    credit: i64,
    /// Cycle up to which `credit` has been refilled.
    refilled_at: u64,
    /// Cycle of the last beat sent: at most one beat per cycle.
    last_beat: Option<u64>,
    /// Refill per cycle, and the cap on `credit`, in bytes.
    bytes_per_cycle: i64,
}

impl Link {
    fn new(bytes_per_cycle: u32) -> Self {
        Link {
            credit: i64::from(bytes_per_cycle),
            refilled_at: 0,
            last_beat: None,
            bytes_per_cycle: i64::from(bytes_per_cycle),
        }
    }

    /// Whether a beat may go in cycle `now`.
    fn may_send(&mut self, now: u64) -> bool {
        let dt = now - self.refilled_at;
        let refill = i128::from(self.bytes_per_cycle) * i128::from(dt);
        let credit = (i128::from(self.credit) + refill).min(i128::from(self.bytes_per_cycle));
        self.credit = credit as i64;
        self.refilled_at = now;
        self.credit >= 0 && self.last_beat != Some(now)
    }

    /// A beat of `bytes` payload goes in cycle `now`.
    fn send(&mut self, now: u64, bytes: u64) {
        self.credit -= bytes as i64;
        self.last_beat = Some(now);
    }
}

impl PcieModel {
    /// A link with `config` in front of `memory`.
    ///
    /// Panics on a config no port could have: a zero rate, no read tags or
    /// more than 256, a maximum read length of 0 or over 4096.
    pub fn new(config: PcieConfig, memory: HostMemory) -> Self {
        assert!(
            config.bytes_per_cycle > 0,
            "PcieConfig: bytes_per_cycle must be at least 1"
        );
        assert!(
            (1..=PORT_TAGS).contains(&config.max_outstanding_reads),
            "PcieConfig: max_outstanding_reads must be 1 to {PORT_TAGS}, not {}",
            config.max_outstanding_reads
        );
        assert!(
            (1..=PORT_MAX_READ_BYTES).contains(&config.max_read_len),
            "PcieConfig: max_read_len must be 1 to {PORT_MAX_READ_BYTES}, not {}",
            config.max_read_len
        );
        PcieModel {
            read_link: Link::new(config.bytes_per_cycle),
            write_link: Link::new(config.bytes_per_cycle),
            config,
            memory,
            waiting: BTreeMap::new(),
            streaming: None,
            tags_in_use: [0; PORT_TAGS / 64],
            next_seq: 0,
            now: 0,
            stats: PcieStats::default(),
        }
    }

    /// The core asks in cycle `now` to read `len` bytes at `addr`, answered
    /// under `tag`. `Ok(true)`: accepted, the data is snapshot now. `Ok(false)`:
    /// `max_outstanding_reads` are in flight, ask again later (ready low).
    /// `Err`: a length of 0 or over `max_read_len`, a tag still outstanding,
    /// or a range outside the mapped regions; nothing is read.
    pub fn request_read(
        &mut self,
        now: u64,
        addr: u64,
        len: u32,
        tag: u8,
    ) -> Result<bool, ReadError> {
        self.advance(now);
        if len == 0 || len > self.config.max_read_len {
            self.stats.bad_requests += 1;
            return Err(ReadError::BadLength {
                addr,
                len,
                max: self.config.max_read_len,
                cycle: now,
            });
        }
        if self.tag_in_use(tag) {
            self.stats.bad_requests += 1;
            return Err(ReadError::TagInUse {
                addr,
                tag,
                cycle: now,
            });
        }
        if let Err(mut fault) = self.memory.check(DmaDir::Read, addr, u64::from(len)) {
            self.stats.faults += 1;
            fault.cycle = Some(now);
            return Err(fault.into());
        }
        if self.outstanding_reads() >= self.config.max_outstanding_reads {
            self.stats.read_requests_refused += 1;
            return Ok(false);
        }
        let mut data = vec![0; len as usize];
        self.memory.read(addr, &mut data);
        let seq = self.next_seq;
        self.next_seq += 1;
        let ready = now + self.config.read_latency_cycles + self.jitter(seq);
        self.waiting
            .insert((ready, seq), PendingRead { tag, data, sent: 0 });
        self.tags_in_use[usize::from(tag / 64)] |= 1 << (tag % 64);
        self.stats.read_requests += 1;
        self.stats.max_outstanding_reads = self
            .stats
            .max_outstanding_reads
            .max(self.outstanding_reads());
        Ok(true)
    }

    /// The read-response beat for cycle `now`, if the link has one: data is
    /// ready, the read bandwidth allows it, and no beat went out this cycle.
    /// The caller holds the beat until the core takes it (valid/ready), and
    /// asks for the next only then.
    pub fn next_read_beat(&mut self, now: u64) -> Option<ReadBeat> {
        self.advance(now);
        if !self.read_link.may_send(now) {
            return None;
        }
        if self.streaming.is_none() {
            let (&(ready, _), _) = self.waiting.first_key_value()?;
            if ready > now {
                return None;
            }
            self.streaming = self.waiting.pop_first().map(|(_, read)| read);
        }
        let read = self.streaming.as_mut()?;
        let n = (read.data.len() - read.sent).min(BEAT_BYTES);
        let mut data = [0; BEAT_BYTES];
        data[..n].copy_from_slice(&read.data[read.sent..read.sent + n]);
        read.sent += n;
        let tag = read.tag;
        let last = read.sent == read.data.len();
        self.read_link.send(now, n as u64);
        self.stats.bytes_read += n as u64;
        if last {
            self.streaming = None;
            self.tags_in_use[usize::from(tag / 64)] &= !(1 << (tag % 64));
        }
        Some(ReadBeat { tag, data, last })
    }

    /// The core offers in cycle `now` a beat on the DMA write port: lane `i`
    /// of `data` goes to `addr + i` where bit `i` of `strobe` is set; `last`
    /// ends the write transaction. `Ok(true)`: accepted, the bytes are in
    /// host memory (a posted write). `Ok(false)`: no write bandwidth this
    /// cycle, offer it again (ready low). `Err`: the enabled bytes are not
    /// inside one mapped region; nothing is written.
    pub fn write_beat(
        &mut self,
        now: u64,
        addr: u64,
        data: &[u8; BEAT_BYTES],
        strobe: u64,
        last: bool,
    ) -> Result<bool, DmaFault> {
        self.advance(now);
        let with_cycle = |mut fault: DmaFault| {
            fault.cycle = Some(now);
            fault
        };
        if let Err(fault) = self.memory.check_beat(addr, strobe) {
            self.stats.faults += 1;
            return Err(with_cycle(fault));
        }
        if !self.write_link.may_send(now) {
            self.stats.write_beats_refused += 1;
            return Ok(false);
        }
        self.memory
            .dma_write_lanes(addr, data, strobe)
            .map_err(with_cycle)?;
        let n = u64::from(strobe.count_ones());
        self.write_link.send(now, n);
        self.stats.write_beats += 1;
        self.stats.bytes_written += n;
        if last {
            self.stats.write_transactions += 1;
        }
        Ok(true)
    }

    /// Reads accepted whose last beat has not been handed out.
    pub fn outstanding_reads(&self) -> usize {
        self.waiting.len() + usize::from(self.streaming.is_some())
    }

    /// The host's memory, as the host CPU sees it.
    pub fn memory(&self) -> &HostMemory {
        &self.memory
    }

    /// The host's memory, for the host CPU to write and to map regions in.
    pub fn memory_mut(&mut self) -> &mut HostMemory {
        &mut self.memory
    }

    /// What the link has carried so far.
    pub fn stats(&self) -> &PcieStats {
        &self.stats
    }

    /// The timing and limits the link was made with.
    pub fn config(&self) -> &PcieConfig {
        &self.config
    }

    fn advance(&mut self, now: u64) {
        assert!(
            now >= self.now,
            "PcieModel called for cycle {now} after cycle {}: time runs forward",
            self.now
        );
        self.now = now;
    }

    fn tag_in_use(&self, tag: u8) -> bool {
        self.tags_in_use[usize::from(tag / 64)] >> (tag % 64) & 1 == 1
    }

    /// Extra latency of read number `seq`: 0..=jitter, a pure function of the
    /// seed and `seq` (splitmix64), so runs repeat exactly.
    fn jitter(&self, seq: u64) -> u64 {
        let jitter = self.config.read_latency_jitter_cycles;
        if jitter == 0 {
            return 0;
        }
        let mut z = self.config.seed ^ seq.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        match jitter.checked_add(1) {
            Some(m) => z % m,
            None => z,
        }
    }
}

/// The 64 byte lanes of a 512-bit port value given as 32-bit words (word 0 =
/// bits 31:0, as the generated bindings hold ports wider than 64 bits).
pub fn words_to_lanes(words: &[u32; BEAT_BYTES / 4]) -> [u8; BEAT_BYTES] {
    let mut lanes = [0; BEAT_BYTES];
    for (chunk, word) in lanes.chunks_exact_mut(4).zip(words) {
        chunk.copy_from_slice(&word.to_le_bytes());
    }
    lanes
}

/// The 32-bit words (word 0 = bits 31:0) of a 512-bit port value given as 64
/// byte lanes (lane i = bits 8i+7:8i).
pub fn lanes_to_words(lanes: &[u8; BEAT_BYTES]) -> [u32; BEAT_BYTES / 4] {
    let mut words = [0; BEAT_BYTES / 4];
    for (word, chunk) in words.iter_mut().zip(lanes.chunks_exact(4)) {
        *word = u32::from_le_bytes(chunk.try_into().unwrap());
    }
    words
}

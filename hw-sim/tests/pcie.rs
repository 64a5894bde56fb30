//! The PCIe model: read latency, bandwidth in each direction, tags and
//! completion order, ordering of reads after writes, the IOMMU check, and
//! random traffic against a flat reference, in the order of `pcie.rs`.
//! Every bound is derived from the config under test. Pure Rust: no
//! Verilator model.

use homa_hw_sim::host_memory::{DmaDir, ExpectOk, HostMemory, BEAT_BYTES};
use homa_hw_sim::pcie::{
    lanes_to_words, words_to_lanes, PcieConfig, PcieModel, ReadBeat, ReadError, PORT_MAX_READ_BYTES,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;

/// Where every test maps its one region, and how big it is.
const BASE: u64 = 0x1_0000_0000;
const REGION_BYTES: u64 = 1 << 20;

/// Core clock period in nanoseconds, and cycles per second.
const CYCLE_NS: u64 = 4;
const CYCLES_PER_S: u64 = 250_000_000;

/// A model over memory holding a pattern, one region mapped at BASE.
fn model(config: PcieConfig) -> PcieModel {
    let mut mem = HostMemory::new();
    mem.map(BASE, REGION_BYTES, "test region").unwrap();
    let pattern: Vec<u8> = (0..REGION_BYTES).map(|i| (i * 7 % 253) as u8).collect();
    mem.write(BASE, &pattern);
    PcieModel::new(config, mem)
}

fn host_bytes(pcie: &PcieModel, addr: u64, len: usize) -> Vec<u8> {
    let mut b = vec![0; len];
    pcie.memory().read(addr, &mut b);
    b
}

/// Polls for a read beat in every cycle from `from` until `outstanding` is
/// 0 or `limit` cycles pass; returns (cycle, beat) pairs.
fn drain(pcie: &mut PcieModel, from: u64, limit: u64) -> Vec<(u64, ReadBeat)> {
    let mut beats = Vec::new();
    for now in from..from + limit {
        if pcie.outstanding_reads() == 0 {
            return beats;
        }
        if let Some(b) = pcie.next_read_beat(now) {
            beats.push((now, b));
        }
    }
    panic!("reads still outstanding after {limit} cycles");
}

#[test]
fn defaults_are_a_pcie_gen3_x16_host() {
    let c = PcieConfig::default();
    let round_trip_ns = c.read_latency_cycles * CYCLE_NS;
    assert!((500..=1000).contains(&round_trip_ns), "{round_trip_ns} ns");
    let bytes_per_s = u64::from(c.bytes_per_cycle) * CYCLES_PER_S;
    assert_eq!(bytes_per_s, 12_500_000_000);
    assert_eq!(c.max_read_len, PORT_MAX_READ_BYTES);
    assert_eq!(c.read_latency_jitter_cycles, 0);
}

#[test]
fn first_beat_arrives_exactly_after_the_latency_on_an_idle_link() {
    for latency in [0, 1, 7, 200] {
        for len in [1, 64, 65, 4096] {
            let config = PcieConfig {
                read_latency_cycles: latency,
                ..PcieConfig::default()
            };
            let mut pcie = model(config);
            let t0 = 1000;
            assert!(pcie.request_read(t0, BASE, len, 3).unwrap());
            let beats = drain(&mut pcie, t0, latency + 1000);
            assert_eq!(
                beats[0].0,
                t0 + latency,
                "latency {latency}, len {len}: first beat"
            );
        }
    }
}

#[test]
fn read_data_arrives_packed_from_lane_zero() {
    let mut pcie = model(PcieConfig::default());
    for (i, len) in [1u32, 63, 64, 65, 200, 4096].into_iter().enumerate() {
        let addr = BASE + 4093 + 1000 * i as u64; // any alignment, across pages
        let tag = 10 + i as u8;
        let now = 10_000 * i as u64;
        assert!(pcie.request_read(now, addr, len, tag).unwrap());
        let beats = drain(&mut pcie, now, 10_000);
        let want = host_bytes(&pcie, addr, len as usize);
        assert_eq!(
            beats.len(),
            (len as usize).div_ceil(BEAT_BYTES),
            "len {len}"
        );
        let mut got = Vec::new();
        for (k, (_, b)) in beats.iter().enumerate() {
            assert_eq!(b.tag, tag);
            assert_eq!(b.last, k == beats.len() - 1, "len {len} beat {k}");
            got.extend_from_slice(&b.data);
        }
        assert_eq!(&got[..len as usize], &want[..], "len {len}");
        assert!(
            got[len as usize..].iter().all(|&x| x == 0),
            "len {len}: padding"
        );
    }
    assert_eq!(pcie.stats().bytes_read, 1 + 63 + 64 + 65 + 200 + 4096);
}

/// Keeps `max_outstanding_reads` reads of `len` bytes in flight from cycle 0
/// until `total` bytes are requested, polling every cycle. Returns the cycle
/// of the first beat, of the last beat, the bytes and the beats delivered.
fn stream_reads(pcie: &mut PcieModel, len: u32, total: u64) -> (u64, u64, u64, u64) {
    let mut requested = 0;
    let mut tags: Vec<u8> = (0..pcie.config().max_outstanding_reads)
        .map(|t| t as u8)
        .collect();
    let (mut first, mut last, mut bytes, mut beats) = (None, 0, 0, 0);
    for now in 0.. {
        if requested < total {
            if let Some(&tag) = tags.last() {
                if pcie
                    .request_read(now, BASE + requested % (REGION_BYTES / 2), len, tag)
                    .unwrap()
                {
                    tags.pop();
                    requested += u64::from(len);
                }
            }
        }
        if let Some(b) = pcie.next_read_beat(now) {
            first.get_or_insert(now);
            last = now;
            beats += 1;
            if b.last {
                tags.push(b.tag);
            }
        }
        bytes = pcie.stats().bytes_read;
        if requested >= total && pcie.outstanding_reads() == 0 {
            break;
        }
    }
    (first.unwrap(), last, bytes, beats)
}

#[test]
fn read_bandwidth_is_bytes_per_cycle_in_steady_state() {
    for bytes_per_cycle in [1, 8, 25, 50, 63, 64, 100] {
        let config = PcieConfig {
            bytes_per_cycle,
            ..PcieConfig::default()
        };
        // Enough reads in flight to cover the round trip at this rate.
        assert!(
            config.max_outstanding_reads as u64 * 4096
                > config.read_latency_cycles * u64::from(bytes_per_cycle)
        );
        let total = if bytes_per_cycle < 8 {
            64 * 1024
        } else {
            1 << 20
        };
        let mut pcie = model(config);
        let (first, last, bytes, beats) = stream_reads(&mut pcie, 4096, total);
        assert_eq!(bytes, total);
        let bpc = u64::from(bytes_per_cycle);
        let span = last - first; // cycles between the first and last beat
                                 // Credits: at most one cycle's worth banked, bpc more each cycle, and
                                 // the last beat needs only a non-negative credit to start.
        let min_by_rate = (total - BEAT_BYTES as u64 - bpc) / bpc;
        // The port moves at most one beat per cycle.
        let min_by_port = beats - 1;
        assert!(
            span >= min_by_rate.max(min_by_port),
            "{bytes_per_cycle} B/cycle: {total} bytes in {span} cycles is too fast"
        );
        // No credit lost while data is waiting.
        let max = (total / bpc + 2).max(beats);
        assert!(
            span <= max,
            "{bytes_per_cycle} B/cycle: {total} bytes in {span} cycles, more than {max}"
        );
    }
}

#[test]
fn read_bandwidth_counts_payload_bytes_of_short_reads() {
    // 100-byte reads: a full beat and a 36-byte one. The link charges the
    // payload, so bytes per cycle stay at the configured rate, never above.
    for bytes_per_cycle in [10, 30, 50] {
        let config = PcieConfig {
            bytes_per_cycle,
            max_outstanding_reads: 256,
            ..PcieConfig::default()
        };
        let bpc = u64::from(bytes_per_cycle);
        // Enough reads in flight to cover the round trip at this rate.
        assert!(config.max_outstanding_reads as u64 * 100 > config.read_latency_cycles * bpc);
        let mut pcie = model(config);
        let total = 100 * 1000;
        let (first, last, bytes, _) = stream_reads(&mut pcie, 100, total);
        assert_eq!(bytes, total);
        let span = last - first;
        assert!(
            span >= (total - BEAT_BYTES as u64 - bpc) / bpc,
            "{bpc}: {span}"
        );
        // Beats alternate 64 and 36 bytes: at 50 B/cycle or less the rate,
        // not the one-beat-per-cycle port, is the limit.
        assert!(span <= total / bpc + 2, "{bpc}: {span}");
    }
}

#[test]
fn a_lone_read_takes_latency_plus_its_length_at_the_link_rate() {
    let config = PcieConfig::default();
    let (latency, bpc) = (
        config.read_latency_cycles,
        u64::from(config.bytes_per_cycle),
    );
    let mut pcie = model(config);
    assert!(pcie.request_read(0, BASE, 4096, 0).unwrap());
    let beats = drain(&mut pcie, 0, 10_000);
    let done = beats.last().unwrap().0;
    let serial = (4096 - BEAT_BYTES as u64 - bpc) / bpc;
    assert!(
        (latency + serial..=latency + 4096 / bpc + 1).contains(&done),
        "last beat of a 4 KiB read at cycle {done}"
    );
}

#[test]
fn without_jitter_reads_complete_in_request_order() {
    let mut pcie = model(PcieConfig::default());
    let lens = [4096, 64, 1000, 1, 300];
    for (tag, &len) in lens.iter().enumerate() {
        assert!(pcie.request_read(tag as u64, BASE, len, tag as u8).unwrap());
    }
    let beats = drain(&mut pcie, lens.len() as u64, 100_000);
    let order: Vec<u8> = beats
        .iter()
        .filter(|(_, b)| b.last)
        .map(|(_, b)| b.tag)
        .collect();
    assert_eq!(order, [0, 1, 2, 3, 4]);
}

/// Random reads with jitter: returns the (cycle, beat) trace, and checks on the
/// way that beats of a request are contiguous, in order, carry its data, and
/// start no earlier than the request plus the latency.
fn jittered_reads(seed: u64) -> (Vec<(u64, ReadBeat)>, usize) {
    let config = PcieConfig {
        read_latency_jitter_cycles: 150,
        seed,
        ..PcieConfig::default()
    };
    let latency = config.read_latency_cycles;
    let mut pcie = model(config);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // tag -> (cycle requested, expected bytes, acceptance number)
    let mut pending: BTreeMap<u8, (u64, Vec<u8>, usize)> = BTreeMap::new();
    let mut trace = Vec::new();
    let mut streaming: Option<(u8, usize)> = None; // tag, bytes seen
    let mut accepted = 0;
    let mut completed_order = Vec::new();
    let mut now = 0;
    while accepted < 300 || !pending.is_empty() {
        if accepted < 300 && rng.gen_bool(0.3) {
            let tag = rng.gen_range(0..=255u8);
            let len = rng.gen_range(1..=700);
            let addr = BASE + rng.gen_range(0..REGION_BYTES - 700);
            if !pending.contains_key(&tag) && pcie.request_read(now, addr, len, tag).unwrap() {
                let want = host_bytes(&pcie, addr, len as usize);
                pending.insert(tag, (now, want, accepted));
                accepted += 1;
            }
        }
        if let Some(b) = pcie.next_read_beat(now) {
            let (tag, seen) = streaming.unwrap_or((b.tag, 0));
            assert_eq!(
                b.tag, tag,
                "seed {seed} cycle {now}: beat of tag {} inside tag {tag}'s",
                b.tag
            );
            let (requested, want, order) = &pending[&tag];
            if seen == 0 {
                assert!(
                    now >= requested + latency,
                    "seed {seed} cycle {now}: tag {tag} early"
                );
            }
            let n = (want.len() - seen).min(BEAT_BYTES);
            assert_eq!(
                &b.data[..n],
                &want[seen..seen + n],
                "seed {seed} cycle {now} tag {tag}"
            );
            assert_eq!(
                b.last,
                seen + n == want.len(),
                "seed {seed} cycle {now} tag {tag}"
            );
            if b.last {
                completed_order.push(*order);
                pending.remove(&tag);
                streaming = None;
            } else {
                streaming = Some((tag, seen + n));
            }
            trace.push((now, b));
        }
        now += 1;
        assert!(now < 1_000_000, "seed {seed}: reads never complete");
    }
    let overtaken = completed_order.windows(2).filter(|w| w[1] < w[0]).count();
    (trace, overtaken)
}

#[test]
fn with_jitter_reads_complete_out_of_order_but_each_in_order_and_whole() {
    let (_, overtaken) = jittered_reads(1);
    assert!(
        overtaken > 10,
        "only {overtaken} completions out of request order"
    );
}

#[test]
fn the_same_seed_gives_the_same_simulation() {
    let (a, _) = jittered_reads(7);
    let (b, _) = jittered_reads(7);
    assert_eq!(a, b);
    let (c, _) = jittered_reads(8);
    assert_ne!(a, c);
}

#[test]
fn max_outstanding_reads_is_enforced_and_tags_free_on_the_last_beat() {
    let config = PcieConfig {
        max_outstanding_reads: 4,
        ..PcieConfig::default()
    };
    let latency = config.read_latency_cycles;
    let mut pcie = model(config);
    for tag in 0..4 {
        assert!(pcie.request_read(0, BASE, 128, tag).unwrap());
    }
    assert!(!pcie.request_read(0, BASE, 128, 4).unwrap());
    assert!(!pcie.request_read(1, BASE, 128, 4).unwrap());
    assert_eq!(pcie.outstanding_reads(), 4);
    // A tag in flight may not be reused, even when there is room.
    assert!(matches!(
        pcie.request_read(2, BASE, 128, 0),
        Err(ReadError::TagInUse { tag: 0, .. })
    ));
    // Tag 0's two beats free it; the first alone does not.
    let b = pcie.next_read_beat(latency).unwrap();
    assert!(!b.last);
    assert!(!pcie.request_read(latency, BASE, 128, 4).unwrap());
    let mut now = latency + 1;
    let b = loop {
        if let Some(b) = pcie.next_read_beat(now) {
            break b;
        }
        now += 1;
    };
    assert!(b.last && b.tag == 0);
    assert!(pcie.request_read(now, BASE, 128, 0).unwrap());
    assert!(!pcie.request_read(now, BASE, 128, 5).unwrap());
    let s = pcie.stats();
    assert_eq!((s.read_requests, s.max_outstanding_reads), (5, 4));
    assert_eq!(s.read_requests_refused, 4);
    assert_eq!(s.bad_requests, 1);
}

#[test]
fn read_lengths_outside_the_limit_are_refused() {
    let config = PcieConfig {
        max_read_len: 512,
        ..PcieConfig::default()
    };
    let mut pcie = model(config);
    for len in [0, 513, 4096] {
        match pcie.request_read(5, BASE, len, 1) {
            Err(ReadError::BadLength {
                len: l,
                max: 512,
                cycle: 5,
                ..
            }) => assert_eq!(l, len),
            other => panic!("read of {len} bytes gave {other:?}"),
        }
    }
    assert!(pcie.request_read(5, BASE, 512, 1).unwrap());
    assert_eq!(pcie.stats().bad_requests, 3);
}

#[test]
fn reads_outside_the_regions_fault_with_the_cycle() {
    let mut pcie = model(PcieConfig::default());
    let end = BASE + REGION_BYTES;
    match pcie.request_read(42, end - 10, 11, 9) {
        Err(ReadError::Fault(f)) => {
            assert_eq!(
                (f.dir, f.iova, f.len, f.cycle),
                (DmaDir::Read, end - 10, 11, Some(42))
            );
            assert!(f.to_string().contains("(cycle 42)"), "{f}");
        }
        other => panic!("read past the region gave {other:?}"),
    }
    assert_eq!(pcie.outstanding_reads(), 0);
    assert_eq!(pcie.stats().faults, 1);
    // The tag was not taken by the refused read.
    assert!(pcie.request_read(43, end - 10, 10, 9).unwrap());
}

#[test]
#[should_panic(expected = "simulation failed: IOMMU fault: DMA read")]
fn a_read_fault_fails_the_simulation_through_expect_ok() {
    let mut pcie = model(PcieConfig::default());
    pcie.request_read(0, 0x10, 64, 0).expect_ok();
}

#[test]
fn write_bandwidth_is_bytes_per_cycle_with_back_pressure() {
    for bytes_per_cycle in [10, 50, 64, 200] {
        let config = PcieConfig {
            bytes_per_cycle,
            ..PcieConfig::default()
        };
        let bpc = u64::from(bytes_per_cycle);
        let mut pcie = model(config);
        let cycles = 10_000;
        let mut accepted = 0u64;
        let data = [0x5a; BEAT_BYTES];
        for now in 0..cycles {
            let addr = BASE + accepted * BEAT_BYTES as u64;
            if pcie
                .write_beat(now, addr, &data, !0, accepted % 8 == 7)
                .unwrap()
            {
                accepted += 1;
            }
        }
        let bytes = accepted * BEAT_BYTES as u64;
        // Never more than the rate allows (plus one cycle's credit and one
        // beat's debt), nor more than one beat per cycle ...
        let limit = (bpc * cycles + bpc + BEAT_BYTES as u64).min(cycles * BEAT_BYTES as u64);
        assert!(
            bytes <= limit,
            "{bpc} B/cycle: {bytes} bytes written in {cycles} cycles"
        );
        // ... and no credit lost while beats were waiting.
        let floor = (bpc * cycles).min(cycles * BEAT_BYTES as u64) - BEAT_BYTES as u64;
        assert!(
            bytes >= floor,
            "{bpc} B/cycle: only {bytes} bytes in {cycles} cycles"
        );
        let s = pcie.stats();
        assert_eq!(s.bytes_written, bytes);
        assert_eq!(
            (s.write_beats, s.write_transactions),
            (accepted, accepted / 8)
        );
        assert_eq!(s.write_beats_refused, cycles - accepted);
        assert_eq!(
            host_bytes(&pcie, BASE, bytes as usize),
            vec![0x5a; bytes as usize]
        );
    }
}

#[test]
fn write_bandwidth_counts_enabled_bytes() {
    // Beats with 16 lanes enabled cost 16 bytes: at 16 B/cycle one per cycle.
    let config = PcieConfig {
        bytes_per_cycle: 16,
        ..PcieConfig::default()
    };
    let mut pcie = model(config);
    for now in 0..100 {
        assert!(pcie
            .write_beat(now, BASE + 16 * now, &[1; BEAT_BYTES], 0xffff, true)
            .unwrap());
    }
    // A full beat now runs a debt that the next cycles repay.
    assert!(pcie
        .write_beat(100, BASE, &[2; BEAT_BYTES], !0, true)
        .unwrap());
    assert!(!pcie
        .write_beat(101, BASE, &[3; BEAT_BYTES], !0, true)
        .unwrap());
    assert_eq!(pcie.stats().bytes_written, 100 * 16 + 64);
}

#[test]
fn one_write_beat_per_cycle_at_most() {
    let config = PcieConfig {
        bytes_per_cycle: 1000,
        ..PcieConfig::default()
    };
    let mut pcie = model(config);
    assert!(pcie
        .write_beat(3, BASE, &[1; BEAT_BYTES], !0, false)
        .unwrap());
    assert!(!pcie
        .write_beat(3, BASE + 64, &[1; BEAT_BYTES], !0, true)
        .unwrap());
    assert!(pcie
        .write_beat(4, BASE + 64, &[1; BEAT_BYTES], !0, true)
        .unwrap());
}

#[test]
fn write_faults_are_reported_even_under_back_pressure_and_write_nothing() {
    let config = PcieConfig {
        bytes_per_cycle: 1,
        ..PcieConfig::default()
    };
    let mut pcie = model(config);
    let end = BASE + REGION_BYTES;
    assert!(pcie
        .write_beat(0, end - 64, &[1; BEAT_BYTES], !0, true)
        .unwrap());
    // The link now owes 63 bytes; a good beat waits, a bad one faults.
    assert!(!pcie
        .write_beat(1, end - 64, &[2; BEAT_BYTES], !0, true)
        .unwrap());
    let fault = pcie
        .write_beat(2, end - 32, &[3; BEAT_BYTES], !0, true)
        .unwrap_err();
    assert_eq!(
        (fault.dir, fault.iova, fault.len, fault.cycle),
        (DmaDir::Write, end - 32, 64, Some(2))
    );
    assert_eq!(fault.nearest.unwrap().name, "test region");
    assert_eq!(
        host_bytes(&pcie, end - 64, 128),
        [vec![1; 64], vec![0; 64]].concat()
    );
    let s = pcie.stats();
    assert_eq!((s.faults, s.write_beats, s.bytes_written), (1, 1, 64));
}

#[test]
#[should_panic(expected = "simulation failed: IOMMU fault: DMA write of 64 bytes")]
fn a_write_fault_fails_the_simulation_through_expect_ok() {
    let mut pcie = model(PcieConfig::default());
    pcie.write_beat(0, 0, &[0; BEAT_BYTES], !0, true)
        .expect_ok();
}

#[test]
fn a_read_sees_writes_accepted_before_it_and_none_after() {
    let mut pcie = model(PcieConfig::default());
    let addr = BASE + 0x3000;
    let old = host_bytes(&pcie, addr, 64);
    // Same cycle, write first (the glue's order): the read sees it.
    assert!(pcie
        .write_beat(10, addr, &[0xaa; BEAT_BYTES], !0, true)
        .unwrap());
    assert!(pcie.request_read(10, addr, 64, 1).unwrap());
    // Later writes, by the card and by the host CPU, are not in its data.
    assert!(pcie
        .write_beat(11, addr, &[0xbb; BEAT_BYTES], !0, true)
        .unwrap());
    pcie.memory_mut().write(addr + 32, &[0xcc; 32]);
    let beats = drain(&mut pcie, 11, 1000);
    assert_eq!(beats[0].1.data, [0xaa; BEAT_BYTES]);
    // A read issued after them does see them.
    assert!(pcie.request_read(2000, addr, 64, 1).unwrap());
    let beats = drain(&mut pcie, 2000, 1000);
    assert_eq!(&beats[0].1.data[..32], &[0xbb; 32]);
    assert_eq!(&beats[0].1.data[32..], &[0xcc; 32]);
    assert_ne!(
        old,
        vec![0xaa; 64],
        "the test needs memory that differs from its writes"
    );
}

#[test]
fn random_traffic_matches_a_flat_reference() {
    const SPAN: u64 = 64 * 1024;
    for seed in [11u64, 12, 13] {
        let config = PcieConfig {
            read_latency_cycles: 50,
            read_latency_jitter_cycles: 40,
            bytes_per_cycle: 40,
            max_outstanding_reads: 8,
            seed,
            ..PcieConfig::default()
        };
        let mut mem = HostMemory::new();
        mem.map(BASE, SPAN, "span").unwrap();
        let mut pcie = PcieModel::new(config, mem);
        let mut reference = vec![0u8; SPAN as usize];
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut expected: BTreeMap<u8, (Vec<u8>, usize)> = BTreeMap::new();
        let mut free_tags: Vec<u8> = (0..=255).collect();
        let (mut bytes_written, mut bytes_read, mut held) = (0u64, 0u64, None::<ReadBeat>);
        for now in 0..200_000u64 {
            // Write port: a beat at a random place with a random strobe.
            if rng.gen_bool(0.5) {
                let off = rng.gen_range(0..SPAN - BEAT_BYTES as u64);
                let data: [u8; BEAT_BYTES] = std::array::from_fn(|_| rng.gen());
                let strobe: u64 = if rng.gen_bool(0.5) { !0 } else { rng.gen() };
                if pcie
                    .write_beat(now, BASE + off, &data, strobe, true)
                    .unwrap()
                {
                    for lane in 0..BEAT_BYTES {
                        if strobe >> lane & 1 == 1 {
                            reference[off as usize + lane] = data[lane];
                        }
                    }
                    bytes_written += u64::from(strobe.count_ones());
                }
            }
            // Host CPU writes now and then.
            if rng.gen_bool(0.01) {
                let off = rng.gen_range(0..SPAN - 100) as usize;
                let bytes: Vec<u8> = (0..100).map(|_| rng.gen()).collect();
                pcie.memory_mut().write(BASE + off as u64, &bytes);
                reference[off..off + 100].copy_from_slice(&bytes);
            }
            // Read-request port.
            if rng.gen_bool(0.3) && !free_tags.is_empty() {
                let len = rng.gen_range(1..=PORT_MAX_READ_BYTES);
                let off = rng.gen_range(0..=SPAN - u64::from(len)) as usize;
                let tag = free_tags[rng.gen_range(0..free_tags.len())];
                if pcie.request_read(now, BASE + off as u64, len, tag).unwrap() {
                    free_tags.retain(|&t| t != tag);
                    expected.insert(tag, (reference[off..off + len as usize].to_vec(), 0));
                }
            }
            // Read-response port, with a core that is not always ready.
            if held.is_none() {
                held = pcie.next_read_beat(now);
            }
            if rng.gen_bool(0.8) {
                if let Some(b) = held.take() {
                    let (want, seen) = expected.get_mut(&b.tag).expect("beat of an unknown tag");
                    let n = (want.len() - *seen).min(BEAT_BYTES);
                    assert_eq!(
                        &b.data[..n],
                        &want[*seen..*seen + n],
                        "seed {seed} cycle {now} tag {}",
                        b.tag
                    );
                    *seen += n;
                    bytes_read += n as u64;
                    assert_eq!(b.last, *seen == want.len(), "seed {seed} cycle {now}");
                    if b.last {
                        expected.remove(&b.tag);
                        free_tags.push(b.tag);
                    }
                }
            }
            assert!(pcie.outstanding_reads() <= 8);
        }
        let mut all = vec![0; SPAN as usize];
        pcie.memory().read(BASE, &mut all);
        assert_eq!(all, reference, "seed {seed}: final memory");
        let s = pcie.stats();
        assert_eq!(s.bytes_written, bytes_written);
        // The beat held at the end, if any, was counted when it left the link.
        let in_hand = held.map_or(0, |b| {
            let (want, seen) = &expected[&b.tag];
            (want.len() - seen).min(BEAT_BYTES) as u64
        });
        assert_eq!(s.bytes_read, bytes_read + in_hand);
        assert!(
            s.read_requests > 1000 && s.read_requests_refused > 0,
            "{s:?}"
        );
        assert_eq!(s.max_outstanding_reads, 8);
        assert_eq!(s.faults, 0);
    }
}

#[test]
#[should_panic(expected = "time runs forward")]
fn time_may_not_run_backwards() {
    let mut pcie = model(PcieConfig::default());
    pcie.next_read_beat(10);
    pcie.next_read_beat(9);
}

#[test]
fn port_words_and_byte_lanes_convert_both_ways() {
    let lanes: [u8; BEAT_BYTES] = std::array::from_fn(|i| i as u8);
    let words = lanes_to_words(&lanes);
    // Lane i is bits 8i+7:8i; word 0 is bits 31:0.
    assert_eq!(words[0], 0x0302_0100);
    assert_eq!(words[15], 0x3f3e_3d3c);
    assert_eq!(words_to_lanes(&words), lanes);
}

//! Host memory: the sparse store, the regions, and the IOMMU check on every
//! DMA, in the order of `host_memory.rs`. Pure Rust: no Verilator model.

use homa_hw_sim::host_memory::{
    DmaDir, DmaFault, ExpectOk, HostMemory, MapError, BEAT_BYTES, PAGE_BYTES,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const PAGE: u64 = PAGE_BYTES as u64;

/// Bytes 0, 1, 2, ... (mod 251, so no period lines up with a page).
fn pattern(len: usize, start: u8) -> Vec<u8> {
    (0..len)
        .map(|i| ((i + usize::from(start)) % 251) as u8)
        .collect()
}

#[test]
fn never_written_bytes_read_as_zero_without_allocating() {
    let mem = HostMemory::new();
    let mut buf = vec![0xaa; 3 * PAGE_BYTES];
    mem.read(0xdead_0000_0123, &mut buf);
    assert!(buf.iter().all(|&b| b == 0));
    assert_eq!(mem.resident_pages(), 0);
}

#[test]
fn writes_round_trip_across_page_boundaries() {
    let mut mem = HostMemory::new();
    // Starts 5 bytes before a page boundary, covers two more whole pages.
    let addr = 7 * PAGE - 5;
    let data = pattern(2 * PAGE_BYTES + 10, 3);
    mem.write(addr, &data);
    let mut back = vec![0; data.len()];
    mem.read(addr, &mut back);
    assert_eq!(back, data);
    // Pages 6, 7, 8 and 9 hold it; nothing else was allocated.
    assert_eq!(mem.resident_pages(), 4);
    // Bytes just outside are untouched, reading across the written edge.
    let mut edge = [0xff; 4];
    mem.read(addr - 2, &mut edge);
    assert_eq!(edge, [0, 0, data[0], data[1]]);
    let end = addr + data.len() as u64;
    mem.read(end - 2, &mut edge);
    assert_eq!(edge, [data[data.len() - 2], data[data.len() - 1], 0, 0]);
}

#[test]
fn memory_is_sparse_over_the_whole_address_space() {
    let mut mem = HostMemory::new();
    let far = [0u64, 1 << 40, u64::MAX - PAGE + 1];
    for (i, &a) in far.iter().enumerate() {
        mem.write(a, &[i as u8 + 1; 8]);
    }
    assert_eq!(mem.resident_pages(), far.len());
    for (i, &a) in far.iter().enumerate() {
        let mut b = [0; 8];
        mem.read(a, &mut b);
        assert_eq!(b, [i as u8 + 1; 8]);
    }
    // The very last byte of the address space is addressable.
    mem.write(u64::MAX, &[0x5a]);
    let mut last = [0];
    mem.read(u64::MAX, &mut last);
    assert_eq!(last, [0x5a]);
}

#[test]
fn map_refuses_empty_overflowing_and_overlapping_regions() {
    let mut mem = HostMemory::new();
    mem.map(0x1000, 0x1000, "ring").unwrap();
    assert!(matches!(
        mem.map(0x5000, 0, "empty"),
        Err(MapError::Empty { .. })
    ));
    assert!(matches!(
        mem.map(u64::MAX - 10, 20, "wraps"),
        Err(MapError::Overflow { .. })
    ));
    for (iova, len) in [
        (0x1800, 0x10),
        (0x0800, 0x1000),
        (0x0, 0x10000),
        (0x1fff, 1),
    ] {
        match mem.map(iova, len, "clash") {
            Err(MapError::Overlap { existing, .. }) => assert_eq!(existing.name, "ring"),
            other => panic!("map({iova:#x}, {len:#x}) over \"ring\" gave {other:?}"),
        }
    }
    // Adjacent on both sides is fine.
    mem.map(0x0, 0x1000, "below").unwrap();
    mem.map(0x2000, 0x1000, "above").unwrap();
    let names: Vec<_> = mem.regions().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["below", "ring", "above"]);
}

#[test]
fn unmap_withdraws_a_region_by_its_start() {
    let mut mem = HostMemory::new();
    mem.map(0x4000, 0x100, "buf").unwrap();
    mem.dma_write(0x4000, &[1, 2, 3]).unwrap();
    assert_eq!(mem.unmap(0x4001), Err(MapError::NotMapped { iova: 0x4001 }));
    let r = mem.unmap(0x4000).unwrap();
    assert_eq!((r.iova, r.len, r.name.as_str()), (0x4000, 0x100, "buf"));
    assert!(mem.dma_write(0x4000, &[9]).is_err());
    // The bytes stay: the host still owns them.
    let mut b = [0; 3];
    mem.read(0x4000, &mut b);
    assert_eq!(b, [1, 2, 3]);
}

#[test]
fn dma_inside_one_region_round_trips() {
    let mut mem = HostMemory::new();
    mem.map(3 * PAGE - 100, 2 * PAGE, "rx").unwrap();
    let data = pattern(PAGE_BYTES, 7);
    mem.dma_write(3 * PAGE - 50, &data).unwrap();
    let mut back = vec![0; data.len()];
    mem.dma_read(3 * PAGE - 50, &mut back).unwrap();
    assert_eq!(back, data);
    // The whole region, first byte to last, is reachable.
    let mut all = vec![0; 2 * PAGE_BYTES];
    mem.dma_read(3 * PAGE - 100, &mut all).unwrap();
    assert_eq!(&all[50..50 + PAGE_BYTES], &data[..]);
}

#[test]
fn dma_write_outside_every_region_faults_and_writes_nothing() {
    let mut mem = HostMemory::new();
    mem.map(0x10_000, 0x1000, "rx buffers").unwrap();
    mem.map(0x20_000, 0x1000, "completions").unwrap();
    let fault = mem.dma_write(0x13_000, &[0xee; 16]).unwrap_err();
    assert_eq!(fault.dir, DmaDir::Write);
    assert_eq!((fault.iova, fault.len), (0x13_000, 16));
    assert_eq!(fault.nearest.as_ref().unwrap().name, "rx buffers");
    let fault = mem.dma_write(0x1f_f00, &[0xee; 16]).unwrap_err();
    assert_eq!(fault.nearest.as_ref().unwrap().name, "completions");
    let msg = fault.to_string();
    assert!(
        msg.contains("0x1ff00") && msg.contains("16 bytes") && msg.contains("completions"),
        "fault message lacks the address, length or region: {msg}"
    );
    let mut b = [0; 16];
    mem.read(0x13_000, &mut b);
    assert_eq!(b, [0; 16]);
    mem.read(0x1f_f00, &mut b);
    assert_eq!(b, [0; 16]);
    assert_eq!(mem.resident_pages(), 0);
}

#[test]
fn dma_straddling_a_region_end_faults_as_a_whole() {
    let mut mem = HostMemory::new();
    mem.map(0x1000, 0x100, "ring").unwrap();
    mem.map(0x1100, 0x100, "next to ring").unwrap();
    // Runs one byte past the end: into unmapped memory, and into a neighbour.
    mem.unmap(0x1100).unwrap();
    let fault = mem.dma_write(0x10f0, &[0xee; 0x11]).unwrap_err();
    assert_eq!(fault.nearest.as_ref().unwrap().name, "ring");
    assert!(fault.to_string().contains("runs past the end"), "{fault}");
    mem.map(0x1100, 0x100, "next to ring").unwrap();
    assert!(mem.dma_write(0x10f0, &[0xee; 0x11]).is_err());
    // Starts one byte early.
    let fault = mem.dma_write(0xfff, &[0xee; 2]).unwrap_err();
    assert_eq!(fault.nearest.as_ref().unwrap().name, "ring");
    assert!(fault.to_string().contains("starts before"), "{fault}");
    // Nothing landed anywhere.
    let mut b = vec![0; 0x300];
    mem.read(0xf00, &mut b);
    assert!(b.iter().all(|&x| x == 0));
    // Reads are checked the same way.
    let mut r = [0; 0x11];
    let fault = mem.dma_read(0x11f0, &mut r).unwrap_err();
    assert_eq!(fault.dir, DmaDir::Read);
}

#[test]
fn dma_with_nothing_mapped_names_no_region() {
    let mut mem = HostMemory::new();
    let fault = mem.dma_write(0x40, &[1]).unwrap_err();
    assert_eq!(fault.nearest, None);
    assert!(fault.to_string().contains("no region is mapped"));
}

#[test]
fn dma_whose_end_overflows_faults() {
    let mut mem = HostMemory::new();
    mem.map(u64::MAX - 0xfff, 0xfff, "top").unwrap();
    let fault = mem.dma_write(u64::MAX - 4, &[0; 8]).unwrap_err();
    assert!(fault.to_string().contains("overflows"), "{fault}");
    // A beat whose enabled lanes wrap past the top of the address space.
    let fault = mem
        .dma_write_lanes(u64::MAX - 8, &[1; BEAT_BYTES], 1 << 20)
        .unwrap_err();
    assert_eq!(fault.dir, DmaDir::Write);
}

#[test]
fn strobed_beat_writes_only_enabled_lanes() {
    let mut mem = HostMemory::new();
    mem.map(0x2000, 0x1000, "buf").unwrap();
    mem.write(0x2000 + 0x7c0, &[0x11; 128]);
    let data: [u8; BEAT_BYTES] = std::array::from_fn(|i| 0x80 + i as u8);
    // Any alignment: lane 0 sits at ...7d3; lanes 2, 3 and 60 enabled.
    let addr = 0x27d3;
    let strobe = (1 << 2) | (1 << 3) | (1 << 60);
    mem.dma_write_lanes(addr, &data, strobe).unwrap();
    let mut back = [0; BEAT_BYTES];
    mem.read(addr, &mut back);
    for lane in 0..BEAT_BYTES {
        let want = if strobe >> lane & 1 == 1 {
            data[lane]
        } else {
            0x11
        };
        assert_eq!(back[lane], want, "lane {lane}");
    }
}

#[test]
fn strobed_beat_is_checked_on_its_enabled_lanes_only() {
    let mut mem = HostMemory::new();
    mem.map(0x1000, 0x40, "slot").unwrap();
    let data = [0x77; BEAT_BYTES];
    // Lane 0 at 0xff0: lanes 0..16 would fall before the region, lanes
    // 16..64 (0x1000..0x1030) inside it. Only the enabled ones count.
    let inside = !0u64 << 16;
    mem.dma_write_lanes(0xff0, &data, inside).unwrap();
    // One more lane, just before the region, and the whole beat is refused.
    let fault = mem
        .dma_write_lanes(0xff0, &[0x99; BEAT_BYTES], inside | 1 << 15)
        .unwrap_err();
    assert_eq!((fault.iova, fault.len), (0xfff, 49));
    // No lane enabled: nothing to check, nothing written, anywhere.
    mem.dma_write_lanes(0x9_0000, &data, 0).unwrap();
    let mut b = [0; 0x60];
    mem.read(0xff0, &mut b);
    assert!(b[..0x10].iter().all(|&x| x == 0));
    assert!(b[0x10..0x40].iter().all(|&x| x == 0x77));
    assert!(b[0x40..].iter().all(|&x| x == 0));
    assert_eq!(mem.resident_pages(), 1);
}

#[test]
fn random_dma_and_host_accesses_match_a_flat_reference() {
    const SPAN: usize = 5 * PAGE_BYTES;
    const BASE: u64 = 0x7fff_0000_0000 - 2 * PAGE;
    let seed = 0x5eed_0001;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut mem = HostMemory::new();
    let mut reference = vec![0u8; SPAN];
    // Two mapped regions with a hole between them, the rest unmapped.
    let regions = [
        (PAGE_BYTES / 2, PAGE_BYTES + 100),
        (3 * PAGE_BYTES, PAGE_BYTES),
    ];
    for (i, &(off, len)) in regions.iter().enumerate() {
        mem.map(BASE + off as u64, len as u64, &format!("r{i}"))
            .unwrap();
    }
    let inside = |off: usize, len: usize| {
        len == 0 || regions.iter().any(|&(o, l)| o <= off && off + len <= o + l)
    };
    let (mut ok, mut refused) = (0, 0);
    for step in 0..20_000 {
        let off = rng.gen_range(0..SPAN - BEAT_BYTES);
        let len = rng.gen_range(0..=(SPAN - off).min(300));
        let addr = BASE + off as u64;
        match rng.gen_range(0..5) {
            0 => {
                let bytes: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
                mem.write(addr, &bytes);
                reference[off..off + len].copy_from_slice(&bytes);
            }
            1 => {
                let bytes: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
                let r = mem.dma_write(addr, &bytes);
                assert_eq!(
                    r.is_ok(),
                    inside(off, len),
                    "seed {seed:#x} step {step}: {r:?}"
                );
                if r.is_ok() {
                    reference[off..off + len].copy_from_slice(&bytes);
                }
            }
            2 => {
                let data: [u8; BEAT_BYTES] = std::array::from_fn(|_| rng.gen());
                let strobe: u64 = match rng.gen_range(0..3) {
                    0 => !0,
                    1 => rng.gen(),
                    _ => (!0u64 >> rng.gen_range(0..64)) << rng.gen_range(0..8),
                };
                let span = if strobe == 0 {
                    (0, 0)
                } else {
                    let first = strobe.trailing_zeros() as usize;
                    (off + first, 64 - strobe.leading_zeros() as usize - first)
                };
                let r = mem.dma_write_lanes(addr, &data, strobe);
                assert_eq!(
                    r.is_ok(),
                    inside(span.0, span.1),
                    "seed {seed:#x} step {step}"
                );
                if r.is_ok() {
                    for lane in 0..BEAT_BYTES {
                        if strobe >> lane & 1 == 1 {
                            reference[off + lane] = data[lane];
                        }
                    }
                }
            }
            3 => {
                let mut buf = vec![0xcc; len];
                let r = mem.dma_read(addr, &mut buf);
                assert_eq!(r.is_ok(), inside(off, len), "seed {seed:#x} step {step}");
                if r.is_ok() {
                    assert_eq!(buf, reference[off..off + len], "seed {seed:#x} step {step}");
                    ok += 1;
                } else {
                    refused += 1;
                }
            }
            _ => {
                let mut buf = vec![0xcc; len];
                mem.read(addr, &mut buf);
                assert_eq!(buf, reference[off..off + len], "seed {seed:#x} step {step}");
            }
        }
    }
    let mut all = vec![0; SPAN];
    mem.read(BASE, &mut all);
    assert_eq!(all, reference, "seed {seed:#x}: final contents");
    // The stimulus exercised both outcomes.
    assert!(ok > 100 && refused > 100, "ok {ok}, refused {refused}");
}

#[test]
#[should_panic(expected = "simulation failed: IOMMU fault: DMA write of 4 bytes at 0x10")]
fn expect_ok_fails_the_simulation_with_the_fault() {
    let mut mem = HostMemory::new();
    let r: Result<(), DmaFault> = mem.dma_write(0x10, &[0; 4]);
    r.expect_ok();
}

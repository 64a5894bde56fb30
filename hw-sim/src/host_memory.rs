//! The host's memory as the simulated card sees it: sparse, byte addressed,
//! guarded by IOMMU-style regions.
//!
//! DESIGN NOTES
//!
//! Storage is a `BTreeMap` from page number to a 4 KiB page, allocated on the
//! first write; a byte never written reads as 0, so a test may place rings and
//! buffers anywhere in the 64-bit space and pay only for what it touches. A
//! flat `Vec` would need the test to choose a small address window; a
//! `HashMap` would do as well today, but a `BTreeMap` keeps any future walk
//! over pages (dumps, diffs) in address order and therefore deterministic.
//!
//! Two kinds of access, on purpose kept apart:
//! - the host CPU ([`HostMemory::read`], [`HostMemory::write`]) touches any
//!   byte: the driver and host library own this memory;
//! - the card ([`HostMemory::dma_read`], [`HostMemory::dma_write`],
//!   [`HostMemory::dma_write_lanes`]) may touch only the regions the host
//!   mapped with [`HostMemory::map`], and each access must lie inside *one*
//!   region: what an IOMMU enforces on a real card. An access that does not
//!   is refused as a whole ([`DmaFault`]) and changes nothing.
//!
//! Interrupt messages: a 4-byte write by the card into [`MSI_WINDOW`] is an
//! MSI/MSI-X message for the host's interrupt controller, not memory: it
//! is kept as an [`MsiMessage`] (in the order the writes became visible) for
//! [`HostMemory::take_msis`], and touches no page. Any other access there
//! is refused like any access outside the mapped regions.
//!
//! The IOMMU here checks, it does not translate: an IOVA is the host address
//! of the same byte (the driver maps each buffer at its own address, as
//! ixy.rs does with VFIO). Regions never overlap; adjacent regions are fine,
//! but one access may not span two of them.
//!
//! A DMA fault is a bug in the core (or in the driver's mappings) and must end
//! the simulation loudly: the port glue calls [`ExpectOk::expect_ok`] on every
//! DMA result, which panics with the fault's message (address, length, the
//! nearest region and the cycle). The typed error exists so that tests of the
//! IOMMU itself can inspect a fault instead of catching a panic.

use std::collections::BTreeMap;
use std::fmt;

/// Bytes in one page of simulated memory (the unit of allocation).
pub const PAGE_BYTES: usize = 4096;

/// Bytes in one beat of the core's 512-bit DMA data ports.
pub const BEAT_BYTES: usize = 64;

/// Where a write is an interrupt message rather than memory: x86's
/// 0xFEEx_xxxx, which the interrupt controller claims (with interrupt
/// remapping, checked against the device's interrupt table, not its DMA
/// mappings).
pub const MSI_WINDOW: std::ops::Range<u64> = 0xfee0_0000..0xfef0_0000;

/// An interrupt message the card wrote: the MSI-X table entry's address and
/// data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MsiMessage {
    pub addr: u64,
    pub data: u32,
}

/// Sparse host memory with the regions the card may reach by DMA.
#[derive(Debug, Default, Clone)]
pub struct HostMemory {
    /// Page number (address / PAGE_BYTES) -> the page's bytes. A page exists
    /// once any byte in it has been written; absent pages read as zeros.
    /// Written by `write` and the DMA writes; never shrinks.
    pages: BTreeMap<u64, Box<[u8; PAGE_BYTES]>>,
    /// First IOVA of each mapped region -> the region. Regions never overlap
    /// (`map` refuses that), so the region holding an address is the last
    /// one starting at or before it, if it reaches that far. Changed only by
    /// `map` and `unmap` (the host).
    regions: BTreeMap<u64, Region>,
    /// Interrupt messages written and not yet taken, oldest first.
    msis: Vec<MsiMessage>,
}

/// A range of IOVAs the host allows the card to read and write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    /// First byte's IOVA (= host address: the IOMMU does not translate).
    pub iova: u64,
    /// Length in bytes, at least 1; `iova + len` does not overflow.
    pub len: u64,
    /// What the host mapped it for ("tx ring 0", "rx buffers"): named in faults.
    pub name: String,
}

impl Region {
    /// One past the last byte.
    pub fn end(&self) -> u64 {
        self.iova + self.len
    }
}

impl fmt::Display for Region {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{}\" [{:#x}, {:#x})", self.name, self.iova, self.end())
    }
}

/// Which way a DMA went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DmaDir {
    /// The card reads host memory.
    Read,
    /// The card writes host memory.
    Write,
}

/// A DMA the IOMMU refused: it does not lie inside one mapped region (or its
/// end overflows the 64-bit address space). Nothing was read or written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DmaFault {
    /// Direction of the refused access.
    pub dir: DmaDir,
    /// First byte's IOVA. For a strobed beat, the first byte actually enabled.
    pub iova: u64,
    /// Bytes from `iova` to one past the last byte touched.
    pub len: u64,
    /// The mapped region closest to the access (one it overruns, if any);
    /// `None` when nothing is mapped.
    pub nearest: Option<Region>,
    /// Simulation cycle of the access, when the caller knows it (the PCIe
    /// model fills it in; `HostMemory` alone has no clock).
    pub cycle: Option<u64>,
}

impl fmt::Display for DmaFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dir = match self.dir {
            DmaDir::Read => "read",
            DmaDir::Write => "write",
        };
        write!(
            f,
            "IOMMU fault: DMA {dir} of {} bytes at {:#x}",
            self.len, self.iova
        )?;
        match self.iova.checked_add(self.len) {
            Some(end) => write!(f, "..{end:#x}")?,
            None => write!(f, " (its end overflows the 64-bit address space)")?,
        }
        match &self.nearest {
            None => write!(f, "; no region is mapped")?,
            Some(r) if r.iova <= self.iova && self.iova < r.end() => {
                write!(f, " runs past the end of region {r}")?
            }
            Some(r) if self.iova < r.iova && self.iova.saturating_add(self.len) > r.iova => {
                write!(f, " starts before region {r}")?
            }
            Some(r) => write!(f, " is outside every mapped region; nearest is {r}")?,
        }
        if let Some(cycle) = self.cycle {
            write!(f, " (cycle {cycle})")?;
        }
        Ok(())
    }
}

impl std::error::Error for DmaFault {}

/// A mapping the host asked for that cannot be made or removed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MapError {
    #[error("cannot map \"{name}\": a region must hold at least one byte")]
    Empty { name: String },
    #[error("cannot map \"{name}\" at {iova:#x} with {len} bytes: its end overflows the 64-bit address space")]
    Overflow { name: String, iova: u64, len: u64 },
    #[error("cannot map {new}: it overlaps region {existing}")]
    Overlap { new: Region, existing: Region },
    #[error("cannot unmap {iova:#x}: no region starts there")]
    NotMapped { iova: u64 },
}

/// Turns a refused DMA into the loud end of the simulation: the port glue's
/// way of handling every DMA result.
pub trait ExpectOk<T> {
    /// The value, or a panic whose message is the error's (address, length,
    /// nearest region, cycle).
    fn expect_ok(self) -> T;
}

impl<T> ExpectOk<T> for Result<T, DmaFault> {
    #[track_caller]
    fn expect_ok(self) -> T {
        match self {
            Ok(v) => v,
            Err(fault) => panic!("simulation failed: {fault}"),
        }
    }
}

impl HostMemory {
    /// Empty memory (all zeros) with no region mapped.
    pub fn new() -> Self {
        Self::default()
    }

    /// Host CPU read of `buf.len()` bytes from `addr`; any address, no check.
    ///
    /// Panics if the range overflows the 64-bit address space.
    pub fn read(&self, addr: u64, buf: &mut [u8]) {
        let mut done = 0;
        while done < buf.len() {
            let a = offset(addr, done);
            let (page, at) = page_of(a);
            let n = (PAGE_BYTES - at).min(buf.len() - done);
            match self.pages.get(&page) {
                Some(p) => buf[done..done + n].copy_from_slice(&p[at..at + n]),
                None => buf[done..done + n].fill(0),
            }
            done += n;
        }
    }

    /// Host CPU write of `bytes` at `addr`; any address, no check.
    ///
    /// Panics if the range overflows the 64-bit address space.
    pub fn write(&mut self, addr: u64, bytes: &[u8]) {
        if let Some(msi) = as_msi(addr, bytes) {
            self.msis.push(msi);
            return;
        }
        let mut done = 0;
        while done < bytes.len() {
            let a = offset(addr, done);
            let (page, at) = page_of(a);
            let n = (PAGE_BYTES - at).min(bytes.len() - done);
            self.page_mut(page)[at..at + n].copy_from_slice(&bytes[done..done + n]);
            done += n;
        }
    }

    /// Lets the card reach `[iova, iova + len)`, named `name` in faults.
    pub fn map(&mut self, iova: u64, len: u64, name: &str) -> Result<(), MapError> {
        if len == 0 {
            return Err(MapError::Empty { name: name.into() });
        }
        if iova.checked_add(len).is_none() {
            return Err(MapError::Overflow {
                name: name.into(),
                iova,
                len,
            });
        }
        let new = Region {
            iova,
            len,
            name: name.into(),
        };
        let before = self.regions.range(..new.end()).next_back();
        if let Some((_, existing)) = before {
            if existing.end() > iova {
                return Err(MapError::Overlap {
                    new,
                    existing: existing.clone(),
                });
            }
        }
        self.regions.insert(iova, new);
        Ok(())
    }

    /// Withdraws the region starting at `iova`; its bytes stay as they are.
    pub fn unmap(&mut self, iova: u64) -> Result<Region, MapError> {
        self.regions
            .remove(&iova)
            .ok_or(MapError::NotMapped { iova })
    }

    /// The mapped regions in address order.
    pub fn regions(&self) -> impl Iterator<Item = &Region> {
        self.regions.values()
    }

    /// The interrupt messages written since the last call, oldest first.
    pub fn take_msis(&mut self) -> Vec<MsiMessage> {
        std::mem::take(&mut self.msis)
    }

    /// Whether an interrupt message is waiting for [`HostMemory::take_msis`].
    pub fn msi_waiting(&self) -> bool {
        !self.msis.is_empty()
    }

    /// Pages allocated so far (each PAGE_BYTES): what the sparse store costs.
    pub fn resident_pages(&self) -> usize {
        self.pages.len()
    }

    /// The card reads `buf.len()` bytes from `iova`, all inside one region.
    /// A zero-length read touches nothing and always succeeds.
    pub fn dma_read(&self, iova: u64, buf: &mut [u8]) -> Result<(), DmaFault> {
        self.check(DmaDir::Read, iova, buf.len() as u64)?;
        self.read(iova, buf);
        Ok(())
    }

    /// The card writes `bytes` at `iova`, all inside one region, or nothing.
    /// A zero-length write touches nothing and always succeeds.
    pub fn dma_write(&mut self, iova: u64, bytes: &[u8]) -> Result<(), DmaFault> {
        self.check(DmaDir::Write, iova, bytes.len() as u64)?;
        self.write(iova, bytes);
        Ok(())
    }

    /// The card writes one beat of the DMA write port: lane `i` (bits
    /// 8i+7:8i of the 512-bit word) goes to `iova + i` when strobe bit `i` is
    /// set. The span from the first to the last enabled lane must lie inside
    /// one region, or nothing is written. No lane enabled: nothing happens.
    pub fn dma_write_lanes(
        &mut self,
        iova: u64,
        data: &[u8; BEAT_BYTES],
        strobe: u64,
    ) -> Result<(), DmaFault> {
        self.check_beat(iova, strobe)?;
        if strobe == 0 {
            return Ok(());
        }
        let lane = strobe.trailing_zeros() as usize;
        if strobe >> lane == 0xf && is_msi(iova + lane as u64, 4) {
            let word: [u8; 4] = data[lane..lane + 4].try_into().unwrap();
            self.write(iova + lane as u64, &word);
            return Ok(());
        }
        // The enabled span, page by page (a beat spans two at most): one
        // page lookup per piece, not per byte.
        let first = strobe.trailing_zeros() as usize;
        let end = 64 - strobe.leading_zeros() as usize;
        let mut lane = first;
        while lane < end {
            let (page, at) = page_of(iova + lane as u64);
            let n = (end - lane).min(PAGE_BYTES - at);
            let dst = &mut self.page_mut(page)[at..at + n];
            for (i, d) in dst.iter_mut().enumerate() {
                if strobe >> (lane + i) & 1 == 1 {
                    *d = data[lane + i];
                }
            }
            lane += n;
        }
        Ok(())
    }

    /// Whether the card may write a beat at `iova` with `strobe`: the check
    /// [`HostMemory::dma_write_lanes`] makes, without writing.
    pub fn check_beat(&self, iova: u64, strobe: u64) -> Result<(), DmaFault> {
        if strobe == 0 {
            return Ok(());
        }
        let first_lane = u64::from(strobe.trailing_zeros());
        let last_lane = 63 - u64::from(strobe.leading_zeros());
        match iova.checked_add(first_lane) {
            Some(first) => self.check(DmaDir::Write, first, last_lane - first_lane + 1),
            // The enabled bytes wrap past the top of the address space.
            None => Err(DmaFault {
                dir: DmaDir::Write,
                iova,
                len: last_lane + 1,
                nearest: self.nearest(iova, last_lane + 1),
                cycle: None,
            }),
        }
    }

    /// Whether the card may touch `[iova, iova + len)`: Ok when the range lies
    /// inside one mapped region (or is empty), the fault otherwise.
    pub fn check(&self, dir: DmaDir, iova: u64, len: u64) -> Result<(), DmaFault> {
        if len == 0 {
            return Ok(());
        }
        let fault = || DmaFault {
            dir,
            iova,
            len,
            nearest: self.nearest(iova, len),
            cycle: None,
        };
        let end = iova.checked_add(len).ok_or_else(fault)?;
        if dir == DmaDir::Write && is_msi(iova, len) {
            return Ok(());
        }
        match self.regions.range(..=iova).next_back() {
            Some((_, r)) if end <= r.end() => Ok(()),
            _ => Err(fault()),
        }
    }

    /// The region closest to `[iova, iova + len)`: one it overlaps if any,
    /// else the one with the smallest gap (the lower one on a tie).
    fn nearest(&self, iova: u64, len: u64) -> Option<Region> {
        let end = iova.saturating_add(len);
        let below = self.regions.range(..=iova).next_back().map(|(_, r)| r);
        let above = self
            .regions
            .range(iova.saturating_add(1)..)
            .next()
            .map(|(_, r)| r);
        let gap_below = below.map(|r| iova.saturating_sub(r.end()));
        let gap_above = above.map(|r| r.iova.saturating_sub(end));
        match (gap_below, gap_above) {
            (Some(b), Some(a)) if a < b => above.cloned(),
            (Some(_), _) => below.cloned(),
            (None, _) => above.cloned(),
        }
    }

    fn page_mut(&mut self, page: u64) -> &mut [u8; PAGE_BYTES] {
        self.pages
            .entry(page)
            .or_insert_with(|| Box::new([0; PAGE_BYTES]))
    }
}

/// Whether a write of `len` bytes at `addr` is an interrupt message: one
/// aligned Dword inside [`MSI_WINDOW`].
fn is_msi(addr: u64, len: u64) -> bool {
    len == 4 && addr.is_multiple_of(4) && MSI_WINDOW.contains(&addr)
}

fn as_msi(addr: u64, bytes: &[u8]) -> Option<MsiMessage> {
    let word: [u8; 4] = bytes.try_into().ok()?;
    is_msi(addr, 4).then(|| MsiMessage {
        addr,
        data: u32::from_le_bytes(word),
    })
}

/// `addr + n`, panicking on a host access that runs off the address space.
fn offset(addr: u64, n: usize) -> u64 {
    addr.checked_add(n as u64)
        .unwrap_or_else(|| panic!("host memory access at {addr:#x} + {n} overflows 64 bits"))
}

/// Page number and offset in the page of `addr`.
fn page_of(addr: u64) -> (u64, usize) {
    (
        addr / PAGE_BYTES as u64,
        (addr % PAGE_BYTES as u64) as usize,
    )
}

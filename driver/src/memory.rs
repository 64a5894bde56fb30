//! Host memory for DMA on a real card: anonymous mappings, from 2 MiB
//! hugepages when the machine has them.
//!
//! DESIGN NOTES
//! ------------
//! The card reaches this memory through the IOMMU (see `vfio.rs`), which
//! translates page by page, so the memory need not be physically contiguous
//! and need not be pinned by us: VFIO_IOMMU_MAP_DMA pins it. Hugepages are a
//! performance choice, not a correctness one: one IOTLB entry covers 2 MiB
//! instead of 4 KiB, and ring and buffer-pool traffic stops missing in it.
//!
//! So an allocation asks for hugepages first (anonymous `MAP_HUGETLB`, no
//! hugetlbfs mount needed) and, when the kernel has none reserved, falls back
//! to normal pages with one warning per process saying how to reserve some.
//! Refusing instead would make the driver fail on a machine that works; a
//! silent fallback would hide a 10x IOTLB cost. Allocations are rounded up to
//! the page size they got, and `MAP_POPULATE` faults the pages in at once so
//! the IOMMU mapping does not wait on page faults.

use std::sync::atomic::{AtomicBool, Ordering};

use memmap2::{MmapMut, MmapOptions};

use crate::dma::DmaError;

/// log2 of the hugepage size asked for (2 MiB, x86-64's and arm64's default).
pub const HUGE_PAGE_SHIFT: u8 = 21;
/// Bytes in a hugepage.
pub const HUGE_PAGE_BYTES: usize = 1 << HUGE_PAGE_SHIFT;

/// Whether the fall-back-to-small-pages warning was given in this process.
static WARNED_NO_HUGEPAGES: AtomicBool = AtomicBool::new(false);

/// One anonymous mapping for DMA. Unmapped (munmap) when dropped; the VFIO
/// backend removes its IOMMU mapping first.
pub struct HostMemory {
    /// The mapping; never resized.
    map: MmapMut,
    /// Page size backing the mapping: [`HUGE_PAGE_BYTES`] or the system page.
    page_bytes: usize,
}

impl HostMemory {
    /// At least `bytes` of zeroed memory (see the DESIGN NOTES for the page size).
    pub fn allocate(bytes: usize) -> Result<Self, DmaError> {
        if bytes == 0 {
            return Err(DmaError::ZeroLength);
        }
        let huge_len = round_up(bytes, HUGE_PAGE_BYTES);
        match MmapOptions::new()
            .len(huge_len)
            .huge(Some(HUGE_PAGE_SHIFT))
            .populate()
            .map_anon()
        {
            Ok(map) => {
                return Ok(HostMemory {
                    map,
                    page_bytes: HUGE_PAGE_BYTES,
                })
            }
            Err(e) => {
                if !WARNED_NO_HUGEPAGES.swap(true, Ordering::Relaxed) {
                    tracing::warn!(
                        "no 2 MiB hugepages for DMA memory ({e}); using 4 KiB pages, which costs IOTLB misses. \
                         Reserve some: echo 512 > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"
                    );
                }
            }
        }
        let page_bytes = system_page_bytes();
        let len = round_up(bytes, page_bytes);
        let map = MmapOptions::new()
            .len(len)
            .populate()
            .map_anon()
            .map_err(|source| DmaError::HostMemory { bytes, source })?;
        Ok(HostMemory { map, page_bytes })
    }

    /// Host address of byte 0.
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.map.as_mut_ptr()
    }

    /// Bytes mapped (the request rounded up to the page size).
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Never true: allocations are at least one byte.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Page size backing the mapping.
    pub fn page_bytes(&self) -> usize {
        self.page_bytes
    }

    /// True when backed by hugepages.
    pub fn is_hugepage(&self) -> bool {
        self.page_bytes == HUGE_PAGE_BYTES
    }
}

fn round_up(bytes: usize, page: usize) -> usize {
    bytes.div_ceil(page) * page
}

/// The system's page size (4 KiB on x86-64).
pub(crate) fn system_page_bytes() -> usize {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(page)
        .ok()
        .filter(|p| p.is_power_of_two())
        .unwrap_or(4096)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocation_is_rounded_to_its_page_zeroed_and_writable() {
        let mut m = HostMemory::allocate(5000).unwrap();
        assert!(m.len() >= 5000);
        assert_eq!(m.len() % m.page_bytes(), 0, "a whole number of pages");
        assert!(m.page_bytes() == HUGE_PAGE_BYTES || m.page_bytes() == system_page_bytes());
        let p = m.as_mut_ptr();
        assert_eq!(p as usize % m.page_bytes(), 0, "page aligned");
        // SAFETY: the mapping is m.len() bytes and nothing else uses it.
        let bytes = unsafe { std::slice::from_raw_parts_mut(p, m.len()) };
        assert!(bytes.iter().all(|b| *b == 0), "zeroed");
        bytes[4999] = 0xa5;
        assert_eq!(bytes[4999], 0xa5);
    }

    /// Free 2 MiB hugepages, from /proc/meminfo.
    fn free_hugepages() -> u64 {
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        meminfo
            .lines()
            .find_map(|l| l.strip_prefix("HugePages_Free:"))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or(0)
    }

    #[test]
    fn hugepages_are_used_when_the_machine_has_them_free() {
        let before = free_hugepages();
        let mut m = HostMemory::allocate(100).unwrap();
        if before > 0 {
            assert!(
                m.is_hugepage(),
                "{before} hugepages free, but got small pages"
            );
            assert_eq!(m.len(), HUGE_PAGE_BYTES);
        } else {
            assert!(!m.is_hugepage());
            assert_eq!(m.len(), system_page_bytes());
        }
        // SAFETY: the mapping is m.len() bytes and nothing else uses it.
        unsafe { m.as_mut_ptr().add(m.len() - 1).write(1) };
    }

    #[test]
    fn zero_bytes_is_refused() {
        assert!(matches!(HostMemory::allocate(0), Err(DmaError::ZeroLength)));
    }
}

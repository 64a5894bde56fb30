//! DMA memory: buffers both the host and the card reach, and the IOVA space
//! they live in.
//!
//! DESIGN NOTES
//! ------------
//! A [`DmaBuffer`] is memory mapped at an IOVA, the address the card puts on
//! PCIe. Where the bytes live is the backend's business, behind the
//! crate-private `DmaMemory` trait: host memory the process points at (VFIO),
//! or memory inside a simulation that is reached by copying (the simulated
//! card's host memory in `homa_hw_sim`). So the buffer's interface is copies and
//! words at offsets, not a pointer; [`DmaBuffer::host_ptr`] gives the pointer
//! where there is one (zero-copy paths on a real card).
//!
//! For host memory, the card may read or write it at any time behind the
//! compiler's back, so it is touched only through raw pointers (`HostPtr`):
//! 1-, 2-, 4- and 8-byte aligned accesses are single volatile loads and stores
//! (so a polling loop re-reads the memory every time), longer copies go
//! through `ptr::copy_nonoverlapping` between compiler fences. Words are
//! little-endian, the byte order of PCIe and of the card's descriptors.
//! Host-side writes take `&mut self`, reads `&self`, so host threads never
//! race each other on one buffer.
//!
//! A buffer owns its memory: dropping it unmaps it from the card (the IOMMU on
//! a real card) and then frees it; [`DmaBuffer::free`] does the same and
//! reports an unmap failure, which `Drop` can only log.
//!
//! `IovaSpace` hands out IOVAs with a bump allocator and remembers which are
//! live, so a backend can find the buffer behind an IOVA (the card's view of
//! memory: [`crate::Backend::dma_read`]). IOVAs are never reused: a driver
//! allocates its rings and buffer pools when it starts, and the space
//! (hundreds of GiB) outlasts any such process. Alternatives: a free list
//! would allow reuse but adds fragmentation handling nobody needs yet;
//! identity-mapping IOVA = host virtual address (as some drivers do) ties the
//! IOVA range to the process layout and can collide with the IOMMU's reserved
//! windows (the MSI window at 0xfee0_0000 on x86).

use std::collections::BTreeMap;
use std::ptr::NonNull;
use std::sync::atomic::{compiler_fence, Ordering};
use std::sync::Mutex;

/// A DMA memory failure.
#[derive(Debug, thiserror::Error)]
pub enum DmaError {
    /// A zero-byte allocation: a buffer needs at least one byte.
    #[error("a DMA buffer must hold at least one byte")]
    ZeroLength,
    /// The host could not provide the memory.
    #[error("cannot allocate {bytes} bytes of host memory for DMA: {source}")]
    HostMemory {
        bytes: usize,
        source: std::io::Error,
    },
    /// The bump allocator reached the end of the IOVA space.
    #[error("IOVA space exhausted: {bytes} bytes asked, {remaining} left below {end:#x}")]
    IovaExhausted {
        bytes: usize,
        remaining: u64,
        end: u64,
    },
    /// The simulated card's host memory refused to map or unmap a buffer.
    #[error("simulated host memory: {0}")]
    SimMemory(String),
    /// An IOVA range that is not inside one live buffer.
    #[error("IOVA range {iova:#x}+{bytes} is not inside any live DMA buffer")]
    Unmapped { iova: u64, bytes: usize },
}

/// The memory behind a buffer; backends implement it. Offsets and lengths
/// are checked by [`DmaBuffer`] before they get here.
pub(crate) trait DmaMemory: Send + Sync {
    /// Copies `out.len()` bytes at `offset` into `out`.
    fn read(&self, offset: usize, out: &mut [u8]);
    /// Copies `data` into the memory at `offset`.
    fn write(&mut self, offset: usize, data: &[u8]);
    /// Host address of byte 0, if the memory is host memory this process can
    /// point at (not memory inside a simulation).
    fn host_ptr(&self) -> Option<NonNull<u8>>;
    /// Undoes the mapping (IOMMU unmap, IOVA table entry); dropping the value
    /// afterwards frees the memory. Called once.
    fn release(&mut self) -> Result<(), crate::Error>;
}

/// Raw-pointer access to host memory the card may access concurrently (see
/// the DESIGN NOTES for which accesses are volatile).
#[derive(Clone, Copy, Debug)]
pub(crate) struct HostPtr {
    /// Byte 0.
    ptr: NonNull<u8>,
    /// Bytes reachable from `ptr`.
    len: usize,
}

// SAFETY: a HostPtr is an address, used only by the DmaMemory that owns the
// memory it points into, under that owner's `&self`/`&mut self`.
unsafe impl Send for HostPtr {}
// SAFETY: as above.
unsafe impl Sync for HostPtr {}

impl HostPtr {
    /// # Safety
    /// `ptr` must be valid for reads and writes of `len` bytes for as long as
    /// the HostPtr is used.
    pub(crate) unsafe fn new(ptr: NonNull<u8>, len: usize) -> Self {
        HostPtr { ptr, len }
    }

    pub(crate) fn as_non_null(&self) -> NonNull<u8> {
        self.ptr
    }

    /// Copies `out.len()` bytes at `offset` into `out`.
    pub(crate) fn read(&self, offset: usize, out: &mut [u8]) {
        assert!(offset
            .checked_add(out.len())
            .is_some_and(|end| end <= self.len));
        // SAFETY: in bounds (checked above; valid per `new`); `out` is the
        // caller's memory, so the ranges do not overlap.
        unsafe {
            let src = self.ptr.as_ptr().add(offset);
            let aligned = |n: usize| (src as usize).is_multiple_of(n);
            match out.len() {
                1 => out[0] = src.read_volatile(),
                2 if aligned(2) => {
                    out.copy_from_slice(&src.cast::<u16>().read_volatile().to_ne_bytes())
                }
                4 if aligned(4) => {
                    out.copy_from_slice(&src.cast::<u32>().read_volatile().to_ne_bytes())
                }
                8 if aligned(8) => {
                    out.copy_from_slice(&src.cast::<u64>().read_volatile().to_ne_bytes())
                }
                n => {
                    compiler_fence(Ordering::SeqCst);
                    std::ptr::copy_nonoverlapping(src, out.as_mut_ptr(), n);
                    compiler_fence(Ordering::SeqCst);
                }
            }
        }
    }

    /// Copies `data` into the memory at `offset`.
    pub(crate) fn write(&self, offset: usize, data: &[u8]) {
        assert!(offset
            .checked_add(data.len())
            .is_some_and(|end| end <= self.len));
        // SAFETY: as in `read`.
        unsafe {
            let dst = self.ptr.as_ptr().add(offset);
            let aligned = |n: usize| (dst as usize).is_multiple_of(n);
            match data.len() {
                1 => dst.write_volatile(data[0]),
                2 if aligned(2) => dst
                    .cast::<u16>()
                    .write_volatile(u16::from_ne_bytes([data[0], data[1]])),
                4 if aligned(4) => dst
                    .cast::<u32>()
                    .write_volatile(u32::from_ne_bytes(data.try_into().unwrap())),
                8 if aligned(8) => dst
                    .cast::<u64>()
                    .write_volatile(u64::from_ne_bytes(data.try_into().unwrap())),
                n => {
                    compiler_fence(Ordering::SeqCst);
                    std::ptr::copy_nonoverlapping(data.as_ptr(), dst, n);
                    compiler_fence(Ordering::SeqCst);
                }
            }
        }
    }
}

/// Memory shared with the card: `len` bytes the card sees at `iova`. Zeroed
/// when allocated. See the module's DESIGN NOTES.
pub struct DmaBuffer {
    /// Bytes in the buffer (the allocation rounded up to the backend's page size).
    len: usize,
    /// Address of byte 0 as the card sees it.
    iova: u64,
    /// The memory; released once, by `free` or on drop.
    memory: Box<dyn DmaMemory>,
    /// `memory` was released (by `free`); drop must not release it again.
    released: bool,
}

impl DmaBuffer {
    /// A buffer of `len` zeroed bytes at `iova`, held by `memory`.
    pub(crate) fn new(len: usize, iova: u64, memory: Box<dyn DmaMemory>) -> Self {
        DmaBuffer {
            len,
            iova,
            memory,
            released: false,
        }
    }

    /// Bytes in the buffer.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Never true: allocations are at least one byte.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Address of byte 0 as the card sees it: what goes into descriptors.
    pub fn iova(&self) -> u64 {
        self.iova
    }

    /// IOVA of byte `offset`.
    ///
    /// # Panics
    /// If `offset` is past the end.
    pub fn iova_at(&self, offset: usize) -> u64 {
        assert!(
            offset <= self.len,
            "offset {offset} past a {}-byte DMA buffer",
            self.len
        );
        self.iova + offset as u64
    }

    /// Host address of byte 0 (page aligned), if the buffer is host memory this
    /// process can point at: on a real card, for zero-copy paths; `None` where
    /// the memory lives inside a simulation. Accesses through it must be
    /// volatile or otherwise tolerate the card changing the bytes.
    pub fn host_ptr(&self) -> Option<NonNull<u8>> {
        self.memory.host_ptr()
    }

    /// Reads the little-endian u32 at `offset` (4-byte aligned), as one access.
    ///
    /// # Panics
    /// If `offset` is misaligned or the word is past the end.
    pub fn read_u32(&self, offset: usize) -> u32 {
        let mut word = [0u8; 4];
        self.check_word(offset, word.len());
        self.memory.read(offset, &mut word);
        u32::from_le_bytes(word)
    }

    /// Writes `value` little-endian at `offset` (4-byte aligned), as one access.
    ///
    /// # Panics
    /// If `offset` is misaligned or the word is past the end.
    pub fn write_u32(&mut self, offset: usize, value: u32) {
        self.check_word(offset, 4);
        self.memory.write(offset, &value.to_le_bytes());
    }

    /// Reads the little-endian u64 at `offset` (8-byte aligned), as one access.
    ///
    /// # Panics
    /// If `offset` is misaligned or the word is past the end.
    pub fn read_u64(&self, offset: usize) -> u64 {
        let mut word = [0u8; 8];
        self.check_word(offset, word.len());
        self.memory.read(offset, &mut word);
        u64::from_le_bytes(word)
    }

    /// Writes `value` little-endian at `offset` (8-byte aligned), as one access.
    ///
    /// # Panics
    /// If `offset` is misaligned or the word is past the end.
    pub fn write_u64(&mut self, offset: usize, value: u64) {
        self.check_word(offset, 8);
        self.memory.write(offset, &value.to_le_bytes());
    }

    /// Copies `out.len()` bytes starting at `offset` into `out`.
    ///
    /// # Panics
    /// If the range is past the end.
    pub fn read(&self, offset: usize, out: &mut [u8]) {
        self.check_range(offset, out.len());
        self.memory.read(offset, out);
    }

    /// Copies `data` into the buffer starting at `offset`.
    ///
    /// # Panics
    /// If the range is past the end.
    pub fn write(&mut self, offset: usize, data: &[u8]) {
        self.check_range(offset, data.len());
        self.memory.write(offset, data);
    }

    /// Unmaps the buffer from the card and frees it, reporting an unmap
    /// failure (dropping the buffer does the same but can only log it).
    pub fn free(mut self) -> Result<(), crate::Error> {
        self.released = true;
        self.memory.release()
    }

    fn check_range(&self, offset: usize, bytes: usize) {
        let end = offset.checked_add(bytes);
        assert!(
            end.is_some_and(|end| end <= self.len),
            "bytes {offset}..{offset}+{bytes} are past the end of a {}-byte DMA buffer",
            self.len
        );
    }

    fn check_word(&self, offset: usize, size: usize) {
        assert!(
            offset.is_multiple_of(size),
            "offset {offset} is not {size}-byte aligned"
        );
        self.check_range(offset, size);
    }
}

impl Drop for DmaBuffer {
    fn drop(&mut self) {
        if !self.released {
            self.released = true;
            if let Err(e) = self.memory.release() {
                tracing::warn!(
                    iova = self.iova,
                    bytes = self.len,
                    "freeing a DMA buffer: {e}"
                );
            }
        }
    }
}

impl std::fmt::Debug for DmaBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DmaBuffer")
            .field("iova", &format_args!("{:#x}", self.iova))
            .field("len", &self.len)
            .field("host", &self.host_ptr())
            .finish()
    }
}

/// The IOVA range a backend hands out, and the buffers live in it.
pub(crate) struct IovaSpace {
    inner: Mutex<IovaInner>,
}

struct IovaInner {
    /// Next free IOVA (bump pointer); only grows.
    next: u64,
    /// First IOVA past the space.
    end: u64,
    /// Live buffers by starting IOVA: host address and length in bytes.
    live: BTreeMap<u64, (usize, usize)>,
}

impl IovaInner {
    /// Host memory of `bytes` at `iova`, if they lie inside one live buffer.
    fn find(&self, iova: u64, bytes: usize) -> Result<HostPtr, DmaError> {
        let unmapped = DmaError::Unmapped { iova, bytes };
        let Some((&start, &(host, len))) = self.live.range(..=iova).next_back() else {
            return Err(unmapped);
        };
        let offset = iova - start;
        if offset
            .checked_add(bytes as u64)
            .is_none_or(|end| end > len as u64)
        {
            return Err(unmapped);
        }
        let ptr = NonNull::new((host + offset as usize) as *mut u8).ok_or(unmapped)?;
        // SAFETY: the range lies inside a live buffer, whose memory stays
        // valid while its entry is in the table (it is removed before the
        // memory is freed), and the caller holds the table's lock.
        Ok(unsafe { HostPtr::new(ptr, bytes) })
    }
}

impl IovaSpace {
    /// IOVAs `base..end`.
    pub(crate) fn new(base: u64, end: u64) -> Self {
        IovaSpace {
            inner: Mutex::new(IovaInner {
                next: base,
                end,
                live: BTreeMap::new(),
            }),
        }
    }

    /// Reserves `bytes` of IOVA aligned to `align` (a power of two).
    pub(crate) fn reserve(&self, bytes: usize, align: usize) -> Result<u64, DmaError> {
        debug_assert!(align.is_power_of_two());
        let mut inner = self.lock();
        let align = align as u64;
        let start = inner.next.checked_add(align - 1).map(|a| a & !(align - 1));
        let end = start.and_then(|s| s.checked_add(bytes as u64));
        match (start, end) {
            (Some(start), Some(end)) if end <= inner.end => {
                inner.next = end;
                Ok(start)
            }
            _ => Err(DmaError::IovaExhausted {
                bytes,
                remaining: inner.end.saturating_sub(inner.next),
                end: inner.end,
            }),
        }
    }

    /// Records that `bytes` at `iova` are live at host address `host`.
    pub(crate) fn insert(&self, iova: u64, host: NonNull<u8>, bytes: usize) {
        self.lock()
            .live
            .insert(iova, (host.as_ptr() as usize, bytes));
    }

    /// Forgets the buffer at `iova`.
    pub(crate) fn remove(&self, iova: u64) {
        self.lock().live.remove(&iova);
    }

    /// Reads `out.len()` bytes at `iova` as the card would, if they lie
    /// inside one live buffer. The table stays locked during the copy, so the
    /// buffer cannot be freed under it (release removes the entry first).
    pub(crate) fn card_read(&self, iova: u64, out: &mut [u8]) -> Result<(), DmaError> {
        let inner = self.lock();
        let host = inner.find(iova, out.len())?;
        host.read(0, out);
        Ok(())
    }

    /// Writes `data` at `iova` as the card would (see `card_read`).
    pub(crate) fn card_write(&self, iova: u64, data: &[u8]) -> Result<(), DmaError> {
        let inner = self.lock();
        let host = inner.find(iova, data.len())?;
        host.write(0, data);
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, IovaInner> {
        // A panic while holding this lock leaves the map consistent (every
        // update is one statement), so a poisoned lock is still usable.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserve_aligns_and_never_overlaps() {
        let space = IovaSpace::new(0x1000, 0x10_0000);
        let a = space.reserve(100, 0x1000).unwrap();
        let b = space.reserve(0x1000, 0x1000).unwrap();
        let c = space.reserve(1, 0x4000).unwrap();
        assert_eq!(a, 0x1000);
        assert_eq!(
            b, 0x2000,
            "the next reservation starts at the next aligned IOVA"
        );
        assert_eq!(c, 0x4000);
    }

    #[test]
    fn reserve_fails_past_the_end() {
        let space = IovaSpace::new(0x1000, 0x3000);
        space.reserve(0x1000, 0x1000).unwrap();
        match space.reserve(0x2000, 0x1000) {
            Err(DmaError::IovaExhausted {
                bytes,
                remaining,
                end,
            }) => {
                assert_eq!((bytes, remaining, end), (0x2000, 0x1000, 0x3000));
            }
            other => panic!("expected IovaExhausted, got {other:?}"),
        }
    }

    #[test]
    fn the_cards_view_reaches_only_ranges_inside_one_live_buffer() {
        let space = IovaSpace::new(0x1000, 0x10_0000);
        let mut host = vec![0u8; 0x100];
        let ptr = NonNull::new(host.as_mut_ptr()).unwrap();
        space.insert(0x2000, ptr, 0x100);
        space.card_write(0x2010, &[1, 2, 3, 4]).unwrap();
        let mut back = [0u8; 4];
        space.card_read(0x2010, &mut back).unwrap();
        assert_eq!(back, [1, 2, 3, 4]);
        assert!(
            space.card_read(0x2000, &mut [0u8; 0x100]).is_ok(),
            "the whole buffer"
        );
        assert!(
            space.card_read(0x20f0, &mut [0u8; 0x11]).is_err(),
            "runs past the end"
        );
        assert!(space.card_write(0x1fff, &[0]).is_err(), "before the start");
        space.remove(0x2000);
        assert!(
            space.card_read(0x2000, &mut [0u8; 1]).is_err(),
            "after removal"
        );
        assert_eq!(
            &host[0x10..0x14],
            &[1, 2, 3, 4],
            "the write landed in host memory"
        );
    }

    #[test]
    fn host_ptr_word_accesses_round_trip_at_every_width() {
        let mut host = vec![0u64; 4];
        // SAFETY: 32 bytes of a live Vec, used only in this test.
        let p = unsafe { HostPtr::new(NonNull::new(host.as_mut_ptr().cast::<u8>()).unwrap(), 32) };
        for (offset, data) in [
            (0usize, &[9u8][..]),
            (2, &[1, 2]),
            (4, &[3, 4, 5, 6]),
            (8, &[7; 8]),
            (17, &[8; 11]),
        ] {
            p.write(offset, data);
            let mut back = vec![0u8; data.len()];
            p.read(offset, &mut back);
            assert_eq!(back, data, "at {offset}");
        }
    }
}

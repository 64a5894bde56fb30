//! DMA memory: buffers both the host and the card reach, and the IOVA space
//! they live in.
//!
//! DESIGN NOTES
//! ------------
//! A [`DmaBuffer`] is host memory mapped at an IOVA, the address the card puts
//! on PCIe. The card may read or write it at any time, behind the compiler's
//! back, so the host side touches it only through raw pointers: word accessors
//! are volatile and little-endian (the byte order of PCIe and of the card's
//! descriptors), byte copies go through `ptr::copy_nonoverlapping`. Borrowing
//! it as a Rust slice is `unsafe` and needs the caller to know the card is not
//! using that range (for example, a receive buffer whose completion was seen).
//! Host-side writes take `&mut self`, reads `&self`, so host threads never race
//! each other on one buffer.
//!
//! A buffer owns its memory: dropping it unmaps it from the card (the IOMMU on
//! a real card) and then frees it; [`DmaBuffer::free`] does the same and
//! reports an unmap failure, which `Drop` can only log. The backend-specific
//! part of that lives behind the crate-private `DmaMemory` trait, so the sim
//! and VFIO backends share this type and the rings built on it.
//!
//! `IovaSpace` hands out IOVAs with a bump allocator and remembers which
//! are live, so a backend can translate an IOVA back to host memory (the sim's
//! DMA engine does this; tests use it to see what the card sees). IOVAs are
//! never reused: a driver allocates its rings and buffer pools when it starts,
//! and the space (hundreds of GiB) outlasts any such process. Alternatives: a
//! free list would allow reuse but adds fragmentation handling nobody needs
//! yet; identity-mapping IOVA = host virtual address (as some drivers do) ties
//! the IOVA range to the process layout and can collide with the IOMMU's
//! reserved windows (the MSI window at 0xfee0_0000 on x86).

use std::collections::BTreeMap;
use std::ptr::NonNull;
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
    /// An IOVA range that is not inside one live buffer.
    #[error("IOVA range {iova:#x}+{bytes} is not inside any live DMA buffer")]
    Unmapped { iova: u64, bytes: usize },
}

/// What keeps a buffer's memory alive and reachable by the card; backends
/// implement it. `release` undoes the mapping (IOMMU unmap, IOVA table entry);
/// dropping the value afterwards frees the host memory.
pub(crate) trait DmaMemory: Send + Sync {
    fn release(&mut self) -> Result<(), crate::Error>;
}

/// Memory shared with the card: `len` bytes at host address `ptr`, seen by the
/// card at `iova`. Zeroed when allocated. See the module's DESIGN NOTES.
pub struct DmaBuffer {
    /// Host virtual address of byte 0; valid for `len` bytes while `memory` lives.
    ptr: NonNull<u8>,
    /// Bytes in the buffer (the allocation rounded up to the backend's page size).
    len: usize,
    /// Address of byte 0 as the card sees it.
    iova: u64,
    /// Owner of the memory; `None` only after it was released.
    memory: Option<Box<dyn DmaMemory>>,
}

// SAFETY: the buffer owns its memory (nothing else frees or moves it while the
// buffer lives). Host access goes through `&self` (reads) and `&mut self`
// (writes), so the usual borrow rules keep host threads from racing each other;
// the card's concurrent accesses are outside Rust's model in any case, and the
// accessors use volatile or raw-pointer operations for that reason.
unsafe impl Send for DmaBuffer {}
// SAFETY: as above: shared references only read.
unsafe impl Sync for DmaBuffer {}

impl DmaBuffer {
    /// # Safety
    /// `ptr` must be valid for reads and writes of `len` bytes, zeroed, and
    /// stay so until `memory` is released and dropped.
    pub(crate) unsafe fn new(
        ptr: NonNull<u8>,
        len: usize,
        iova: u64,
        memory: Box<dyn DmaMemory>,
    ) -> Self {
        DmaBuffer {
            ptr,
            len,
            iova,
            memory: Some(memory),
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

    /// Host address of byte 0, for code that does its own volatile accesses.
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// Reads the little-endian u32 at `offset` (4-byte aligned), volatile.
    ///
    /// # Panics
    /// If `offset` is misaligned or the word is past the end.
    pub fn read_u32(&self, offset: usize) -> u32 {
        let p = self.word_ptr::<u32>(offset);
        // SAFETY: `word_ptr` checked bounds and alignment; the memory lives as long as self.
        u32::from_le(unsafe { p.read_volatile() })
    }

    /// Writes `value` little-endian at `offset` (4-byte aligned), volatile.
    ///
    /// # Panics
    /// If `offset` is misaligned or the word is past the end.
    pub fn write_u32(&mut self, offset: usize, value: u32) {
        let p = self.word_ptr::<u32>(offset);
        // SAFETY: as in read_u32; `&mut self` excludes other host accesses.
        unsafe { p.write_volatile(value.to_le()) }
    }

    /// Reads the little-endian u64 at `offset` (8-byte aligned), volatile.
    ///
    /// # Panics
    /// If `offset` is misaligned or the word is past the end.
    pub fn read_u64(&self, offset: usize) -> u64 {
        let p = self.word_ptr::<u64>(offset);
        // SAFETY: `word_ptr` checked bounds and alignment.
        u64::from_le(unsafe { p.read_volatile() })
    }

    /// Writes `value` little-endian at `offset` (8-byte aligned), volatile.
    ///
    /// # Panics
    /// If `offset` is misaligned or the word is past the end.
    pub fn write_u64(&mut self, offset: usize, value: u64) {
        let p = self.word_ptr::<u64>(offset);
        // SAFETY: as in read_u64; `&mut self` excludes other host accesses.
        unsafe { p.write_volatile(value.to_le()) }
    }

    /// Copies `out.len()` bytes starting at `offset` into `out`.
    ///
    /// # Panics
    /// If the range is past the end.
    pub fn read(&self, offset: usize, out: &mut [u8]) {
        self.check_range(offset, out.len());
        // SAFETY: range checked; `out` is host memory the card cannot reach, so
        // the two ranges do not overlap.
        unsafe {
            std::ptr::copy_nonoverlapping(
                self.ptr.as_ptr().add(offset),
                out.as_mut_ptr(),
                out.len(),
            )
        }
    }

    /// Copies `data` into the buffer starting at `offset`.
    ///
    /// # Panics
    /// If the range is past the end.
    pub fn write(&mut self, offset: usize, data: &[u8]) {
        self.check_range(offset, data.len());
        // SAFETY: range checked; `data` cannot overlap memory owned by this
        // buffer while `&mut self` is held.
        unsafe {
            std::ptr::copy_nonoverlapping(data.as_ptr(), self.ptr.as_ptr().add(offset), data.len())
        }
    }

    /// The whole buffer as a slice.
    ///
    /// # Safety
    /// The card must not write the buffer while the slice lives (a Rust
    /// reference promises the bytes do not change under it).
    pub unsafe fn as_slice(&self) -> &[u8] {
        // SAFETY: valid for `len` bytes; the caller upholds immutability.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The whole buffer as a mutable slice.
    ///
    /// # Safety
    /// The card must not read or write the buffer while the slice lives.
    pub unsafe fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: valid for `len` bytes; `&mut self` excludes host aliases and
        // the caller excludes the card.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    /// Unmaps the buffer from the card and frees it, reporting an unmap
    /// failure (dropping the buffer does the same but can only log it).
    pub fn free(mut self) -> Result<(), crate::Error> {
        match self.memory.take() {
            Some(mut memory) => memory.release(),
            None => Ok(()),
        }
    }

    fn check_range(&self, offset: usize, bytes: usize) {
        let end = offset.checked_add(bytes);
        assert!(
            end.is_some_and(|end| end <= self.len),
            "bytes {offset}..{offset}+{bytes} are past the end of a {}-byte DMA buffer",
            self.len
        );
    }

    fn word_ptr<T>(&self, offset: usize) -> *mut T {
        let size = std::mem::size_of::<T>();
        assert!(
            offset.is_multiple_of(size),
            "offset {offset} is not {size}-byte aligned"
        );
        self.check_range(offset, size);
        // SAFETY: in bounds (checked above); buffers start page aligned, so an
        // aligned offset gives an aligned pointer.
        unsafe { self.ptr.as_ptr().add(offset).cast::<T>() }
    }
}

impl Drop for DmaBuffer {
    fn drop(&mut self) {
        if let Some(mut memory) = self.memory.take() {
            if let Err(e) = memory.release() {
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
            .field("host", &self.ptr)
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

    /// The host address of `bytes` at `iova`, if they lie inside one live buffer.
    pub(crate) fn translate(&self, iova: u64, bytes: usize) -> Result<NonNull<u8>, DmaError> {
        let inner = self.lock();
        let unmapped = DmaError::Unmapped { iova, bytes };
        let Some((&start, &(host, len))) = inner.live.range(..=iova).next_back() else {
            return Err(unmapped);
        };
        let offset = iova - start;
        if offset
            .checked_add(bytes as u64)
            .is_none_or(|end| end > len as u64)
        {
            return Err(unmapped);
        }
        NonNull::new((host + offset as usize) as *mut u8).ok_or(unmapped)
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
    fn translate_finds_only_ranges_inside_one_live_buffer() {
        let space = IovaSpace::new(0x1000, 0x10_0000);
        let mut host = vec![0u8; 0x100];
        let ptr = NonNull::new(host.as_mut_ptr()).unwrap();
        space.insert(0x2000, ptr, 0x100);
        let inside = space.translate(0x2010, 0x10).unwrap();
        assert_eq!(inside.as_ptr() as usize, ptr.as_ptr() as usize + 0x10);
        assert!(space.translate(0x2000, 0x100).is_ok(), "the whole buffer");
        assert!(space.translate(0x20f0, 0x11).is_err(), "runs past the end");
        assert!(space.translate(0x1fff, 1).is_err(), "before the start");
        space.remove(0x2000);
        assert!(space.translate(0x2000, 1).is_err(), "after removal");
    }
}

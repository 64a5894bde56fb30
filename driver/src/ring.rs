//! Rings and doorbells: descriptor rings the host fills and the card drains,
//! completion rings the card fills and the host drains.
//!
//! DESIGN NOTES
//! ------------
//! The mechanics here do not depend on what the entries hold: entry size and
//! the phase bit's position are parameters, and `queues.rs` binds rings to
//! an endpoint block and the layouts of `homa_hw::host_abi`.
//!
//! - A ring is `entries` slots (a power of two) of `entry_bytes` each, in one
//!   [`DmaBuffer`] the card reaches at its IOVA.
//! - Indices are free-running 32-bit counters; the slot of index `i` is
//!   `i & (entries - 1)`. The ring is full when `head - tail == entries`
//!   (wrapping arithmetic), so no slot is wasted to tell full from empty, and
//!   an index read back from the card is unambiguous.
//! - A doorbell is one CSR write of an index: the producer index of a
//!   descriptor ring after new entries (the card fetches up to it), the
//!   consumer index of a completion ring after entries were handled (the card
//!   may reuse those slots). [`Backend::csr_write`] orders the entries' DMA
//!   memory writes before the doorbell.
//! - A completion entry carries a phase bit the card writes as 1 on the first
//!   lap of the ring, 0 on the second, and so on; the ring starts zeroed, so
//!   the host tells a new entry from a stale one by the phase alone, without
//!   reading a card register per poll (the scheme Corundum and NVMe use). Where
//!   the bit sits is a [`PhaseBit`] until the entry layout is in the register
//!   map. The host reads the phase first and the rest of the entry after an
//!   acquire fence; the card writes the phase in the same or a later PCIe
//!   write than the rest of the entry (PCIe keeps posted writes in order).
//!
//! Alternative considered: wrapped indices with one slot kept free (the
//! classic ring). Free-running counters cost nothing more and give the whole
//! ring to the card.

use crate::backend::Backend;
use crate::dma::DmaBuffer;
use crate::Error;

/// A ring failure.
#[derive(Debug, thiserror::Error)]
pub enum RingError {
    #[error("a ring of {entries} entries of {entry_bytes} bytes: entries must be a power of two and entries a nonzero multiple of 4 bytes")]
    BadGeometry { entries: u32, entry_bytes: usize },
    #[error("descriptor ring full: all {entries} entries are waiting for the card")]
    Full { entries: u32 },
    #[error("an entry of {got} bytes for a ring of {entry_bytes}-byte entries")]
    EntrySize { got: usize, entry_bytes: usize },
    #[error("the card reported consumer index {reported}, outside the entries in flight ({tail}..={head}): the card and driver disagree about the ring")]
    BadConsumerIndex { reported: u32, tail: u32, head: u32 },
}

/// A register the driver writes an index to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Doorbell {
    /// Byte offset of the register in the CSR window (from discovery).
    pub offset: u32,
}

impl Doorbell {
    pub fn new(offset: u32) -> Self {
        Doorbell { offset }
    }

    /// Writes `index` to the doorbell register.
    pub fn ring(&self, backend: &dyn Backend, index: u32) -> Result<(), Error> {
        backend.csr_write(self.offset, index)
    }
}

/// Where a completion entry's phase bit sits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PhaseBit {
    /// Byte of the entry holding the bit.
    pub byte: usize,
    /// Bit within that byte, 0 to 7.
    pub bit: u8,
}

/// Slots of a ring: a buffer divided into `entries` entries.
struct Slots {
    buf: DmaBuffer,
    /// Number of entries, a power of two.
    entries: u32,
    /// Bytes per entry, a multiple of 4.
    entry_bytes: usize,
}

impl Slots {
    fn new(backend: &dyn Backend, entries: u32, entry_bytes: usize) -> Result<Self, Error> {
        if !entries.is_power_of_two() || entry_bytes == 0 || !entry_bytes.is_multiple_of(4) {
            return Err(RingError::BadGeometry {
                entries,
                entry_bytes,
            }
            .into());
        }
        let buf = backend.dma_alloc(entries as usize * entry_bytes)?;
        Ok(Slots {
            buf,
            entries,
            entry_bytes,
        })
    }

    /// Byte offset of the slot of free-running index `index`.
    fn offset(&self, index: u32) -> usize {
        (index & (self.entries - 1)) as usize * self.entry_bytes
    }
}

/// A ring of descriptors the host writes and the card fetches.
pub struct DescriptorRing {
    slots: Slots,
    /// Next index the host writes (producer index); free running.
    head: u32,
    /// Oldest index the card has not consumed (consumer index); free running,
    /// advanced by [`DescriptorRing::consumed_up_to`].
    tail: u32,
    /// Where the producer index is written.
    doorbell: Doorbell,
}

impl DescriptorRing {
    /// An empty ring of `entries` descriptors of `entry_bytes` each, whose
    /// producer index is rung at `doorbell`.
    pub fn new(
        backend: &dyn Backend,
        entries: u32,
        entry_bytes: usize,
        doorbell: Doorbell,
    ) -> Result<Self, Error> {
        Ok(DescriptorRing {
            slots: Slots::new(backend, entries, entry_bytes)?,
            head: 0,
            tail: 0,
            doorbell,
        })
    }

    /// IOVA of slot 0, for the card's ring base register.
    pub fn iova(&self) -> u64 {
        self.slots.buf.iova()
    }

    pub fn entries(&self) -> u32 {
        self.slots.entries
    }

    pub fn entry_bytes(&self) -> usize {
        self.slots.entry_bytes
    }

    /// The producer index: entries written so far.
    pub fn head(&self) -> u32 {
        self.head
    }

    /// The consumer index: entries the card has consumed so far.
    pub fn tail(&self) -> u32 {
        self.tail
    }

    /// Slots the host may still fill.
    pub fn free_slots(&self) -> u32 {
        self.slots.entries - self.head.wrapping_sub(self.tail)
    }

    /// Writes `entry` into the next slot and returns its index; the card sees
    /// it after the next [`DescriptorRing::ring_doorbell`].
    pub fn push(&mut self, entry: &[u8]) -> Result<u32, Error> {
        if entry.len() != self.slots.entry_bytes {
            return Err(RingError::EntrySize {
                got: entry.len(),
                entry_bytes: self.slots.entry_bytes,
            }
            .into());
        }
        if self.free_slots() == 0 {
            return Err(RingError::Full {
                entries: self.slots.entries,
            }
            .into());
        }
        let index = self.head;
        let offset = self.slots.offset(index);
        self.slots.buf.write(offset, entry);
        self.head = index.wrapping_add(1);
        Ok(index)
    }

    /// Tells the card the producer index: every entry pushed so far is ready.
    pub fn ring_doorbell(&self, backend: &dyn Backend) -> Result<(), Error> {
        self.doorbell.ring(backend, self.head)
    }

    /// Records that the card consumed every entry before index `tail` (as it
    /// reports it: a consumer-index register or a completion), freeing their slots.
    pub fn consumed_up_to(&mut self, tail: u32) -> Result<(), Error> {
        let in_flight = self.head.wrapping_sub(self.tail);
        if tail.wrapping_sub(self.tail) > in_flight {
            return Err(RingError::BadConsumerIndex {
                reported: tail,
                tail: self.tail,
                head: self.head,
            }
            .into());
        }
        self.tail = tail;
        Ok(())
    }
}

/// A ring of completions the card writes and the host polls.
pub struct CompletionRing {
    slots: Slots,
    /// Next index the host reads (consumer index); free running.
    tail: u32,
    phase: PhaseBit,
    /// Where the consumer index is written.
    doorbell: Doorbell,
}

impl CompletionRing {
    /// An empty (zeroed) ring of `entries` completions of `entry_bytes` each,
    /// with the phase bit at `phase`, whose consumer index is rung at `doorbell`.
    pub fn new(
        backend: &dyn Backend,
        entries: u32,
        entry_bytes: usize,
        phase: PhaseBit,
        doorbell: Doorbell,
    ) -> Result<Self, Error> {
        assert!(
            phase.byte < entry_bytes && phase.bit < 8,
            "phase bit {phase:?} outside a {entry_bytes}-byte entry"
        );
        Ok(CompletionRing {
            slots: Slots::new(backend, entries, entry_bytes)?,
            tail: 0,
            phase,
            doorbell,
        })
    }

    /// IOVA of slot 0, for the card's ring base register.
    pub fn iova(&self) -> u64 {
        self.slots.buf.iova()
    }

    pub fn entries(&self) -> u32 {
        self.slots.entries
    }

    pub fn entry_bytes(&self) -> usize {
        self.slots.entry_bytes
    }

    /// The consumer index: completions taken so far.
    pub fn tail(&self) -> u32 {
        self.tail
    }

    /// The phase a new entry at index `index` carries: 1 on even laps.
    fn expected_phase(&self, index: u32) -> bool {
        (index / self.slots.entries).is_multiple_of(2)
    }

    /// Copies the next completion into `out` (one entry long) and returns
    /// true, or returns false if the card has not written one yet.
    ///
    /// # Panics
    /// If `out` is not one entry long.
    pub fn poll(&mut self, out: &mut [u8]) -> bool {
        assert_eq!(
            out.len(),
            self.slots.entry_bytes,
            "poll buffer is not one entry"
        );
        let offset = self.slots.offset(self.tail);
        let mut phase_byte = [0u8];
        self.slots
            .buf
            .read(offset + self.phase.byte, &mut phase_byte);
        let phase = phase_byte[0] >> self.phase.bit & 1 == 1;
        if phase != self.expected_phase(self.tail) {
            return false;
        }
        // The rest of the entry was written no later than its phase bit.
        std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
        self.slots.buf.read(offset, out);
        self.tail = self.tail.wrapping_add(1);
        true
    }

    /// Tells the card the consumer index: the slots of every completion
    /// taken so far may be written again.
    pub fn ring_doorbell(&self, backend: &dyn Backend) -> Result<(), Error> {
        self.doorbell.ring(backend, self.tail)
    }
}

//! The register map as types: block versions, the header every block starts
//! with, and typed views of the ID and scratch blocks.
//!
//! DESIGN NOTES
//! ------------
//! Every offset comes from `homa_hw::regmap`, the one place the register map
//! is written down; block bases come from discovery, never from the map's
//! `BASE` constants. A view is a base address plus the backend, and each
//! accessor is one [`Backend::csr_read`]/[`Backend::csr_write`] at
//! `base + regmap offset`.
//!
//! Alternative considered: `#[repr(C)]` structs of `volatile_register`
//! cells laid over the mapped BAR (`struct IdBlock { block_type: RO<u32>, ... }`),
//! the embedded-Rust idiom. It lost for two reasons. A struct restates every
//! offset as a field position, a second copy of the register map that can
//! drift from `regmap.rs` without a compiler error. And the simulated card has
//! no memory to lay a struct over: its registers are reached through the
//! core's CSR port, one clocked transaction at a time, so the structs would
//! serve one backend and the other would need its own accessors. With offset
//! accessors both backends share every line above the trait, and the volatile
//! cells live where memory really is mapped: the VFIO backend reads and writes
//! its BAR as a slice of `volatile_register::RW<u32>` words.

use std::fmt;

use homa_hw::regmap::{self, block_type, header};
use homa_hw::rx::parser::RxVerdict;

use crate::backend::Backend;
use crate::ring::Doorbell;
use crate::Error;

/// A block version, `major << 16 | minor` in its VERSION word. A driver
/// accepts a block whose major it knows and whose minor is at least the one it
/// needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    pub major: u16,
    pub minor: u16,
}

impl Version {
    /// The version in a VERSION word.
    pub const fn from_word(word: u32) -> Self {
        Version {
            major: (word >> 16) as u16,
            minor: word as u16,
        }
    }

    /// The VERSION word of this version.
    pub const fn word(self) -> u32 {
        (self.major as u32) << 16 | self.minor as u32
    }

    /// True when a driver needing `major.min_minor` may use a block of this version.
    pub fn satisfies(self, major: u16, min_minor: u16) -> bool {
        self.major == major && self.minor >= min_minor
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// The homa-nic release a bitstream was built from: the ID block's design
/// version word, `major << 16 | minor << 8 | patch`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DesignVersion {
    pub major: u8,
    pub minor: u8,
    pub patch: u8,
}

impl DesignVersion {
    /// The version in a DESIGN_VERSION word (bits 31:24 are unused).
    pub const fn from_word(word: u32) -> Self {
        DesignVersion {
            major: (word >> 16) as u8,
            minor: (word >> 8) as u8,
            patch: word as u8,
        }
    }

    /// The DESIGN_VERSION word of this version.
    pub const fn word(self) -> u32 {
        (self.major as u32) << 16 | (self.minor as u32) << 8 | self.patch as u32
    }
}

impl fmt::Display for DesignVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// The name of a block type this driver knows, for messages and listings.
pub fn block_name(block_type: u32) -> Option<&'static str> {
    match block_type {
        block_type::ID => Some("ID"),
        block_type::SCRATCH => Some("scratch"),
        block_type::RX_COUNTERS => Some("RX counters"),
        block_type::INTERFACE => Some("interface"),
        block_type::ENDPOINT => Some("endpoint"),
        block_type::GRANT => Some("grant"),
        block_type::TIMER => Some("timer"),
        block_type::INTERRUPT => Some("interrupt"),
        _ => None,
    }
}

/// The three words every block starts with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockHeader {
    /// Block type code (`regmap::block_type`).
    pub block_type: u32,
    pub version: Version,
    /// Byte address of the next block; 0 ends the list.
    pub next: u32,
}

impl BlockHeader {
    /// Reads the header of the block at `base`.
    pub fn read(backend: &dyn Backend, base: u32) -> Result<Self, Error> {
        Ok(BlockHeader {
            block_type: backend.csr_read(base + header::TYPE)?,
            version: Version::from_word(backend.csr_read(base + header::VERSION)?),
            next: backend.csr_read(base + header::NEXT)?,
        })
    }
}

/// The ID block: what the bitstream is and how it was built.
pub struct IdBlock<'a> {
    backend: &'a dyn Backend,
    /// Base of the block, as discovered.
    base: u32,
}

impl<'a> IdBlock<'a> {
    pub const TYPE: u32 = block_type::ID;
    /// The version this driver was written against (from the register map it
    /// was built with): it needs this major and at least this minor.
    pub const VERSION: Version = Version::from_word(regmap::id::VERSION);

    /// The ID block at `base` (found by discovery).
    pub fn at(backend: &'a dyn Backend, base: u32) -> Self {
        IdBlock { backend, base }
    }

    pub fn design_version(&self) -> Result<DesignVersion, Error> {
        self.read(regmap::id::DESIGN_VERSION)
            .map(DesignVersion::from_word)
    }

    /// Core clock in kHz.
    pub fn clock_khz(&self) -> Result<u32, Error> {
        self.read(regmap::id::CLOCK_KHZ)
    }

    /// Width of the Ethernet and DMA datapaths in bits.
    pub fn datapath_bits(&self) -> Result<u32, Error> {
        self.read(regmap::id::DATAPATH_BITS)
    }

    /// The Homa wire format the core speaks (`0xYYYYMM00`).
    pub fn wire_format(&self) -> Result<u32, Error> {
        self.read(regmap::id::WIRE_FORMAT)
    }

    fn read(&self, register: u32) -> Result<u32, Error> {
        self.backend.csr_read(self.base + register)
    }
}

/// The scratch block: a read/write register and its complement, for bring-up
/// (proves that CSR writes land and reads are live).
pub struct ScratchBlock<'a> {
    backend: &'a dyn Backend,
    /// Base of the block, as discovered.
    base: u32,
}

impl<'a> ScratchBlock<'a> {
    pub const TYPE: u32 = block_type::SCRATCH;
    /// The version this driver was written against.
    pub const VERSION: Version = Version::from_word(regmap::scratch::VERSION);

    /// The scratch block at `base` (found by discovery).
    pub fn at(backend: &'a dyn Backend, base: u32) -> Self {
        ScratchBlock { backend, base }
    }

    /// The scratch register (0 after reset).
    pub fn read(&self) -> Result<u32, Error> {
        self.backend.csr_read(self.base + regmap::scratch::SCRATCH)
    }

    pub fn write(&self, value: u32) -> Result<(), Error> {
        self.backend
            .csr_write(self.base + regmap::scratch::SCRATCH, value)
    }

    /// The read-only complement of the scratch register.
    pub fn read_inverted(&self) -> Result<u32, Error> {
        self.backend
            .csr_read(self.base + regmap::scratch::SCRATCH_INVERTED)
    }
}

/// The RX counters block: frames received, one 32-bit wrapping counter per
/// verdict of the card's RX parser (accepted, or why it was dropped).
pub struct RxCountersBlock<'a> {
    backend: &'a dyn Backend,
    /// Base of the block, as discovered.
    base: u32,
}

impl<'a> RxCountersBlock<'a> {
    pub const TYPE: u32 = block_type::RX_COUNTERS;
    /// The version this driver was written against.
    pub const VERSION: Version = Version::from_word(regmap::rx_counters::VERSION);

    /// The RX counters block at `base` (found by discovery).
    pub fn at(backend: &'a dyn Backend, base: u32) -> Self {
        RxCountersBlock { backend, base }
    }

    /// Frames that got `verdict` since reset (wrapping at 2^32).
    pub fn read(&self, verdict: RxVerdict) -> Result<u32, Error> {
        let offset = regmap::rx_counters::FIRST_COUNTER + 4 * verdict as u32;
        self.backend.csr_read(self.base + offset)
    }

    /// Every counter, in verdict order.
    pub fn read_all(&self) -> Result<Vec<(RxVerdict, u32)>, Error> {
        RxVerdict::ALL
            .iter()
            .map(|&v| Ok((v, self.read(v)?)))
            .collect()
    }
}

/// The interface block: the card's own addresses on the network.
pub struct InterfaceBlock<'a> {
    backend: &'a dyn Backend,
    /// Base of the block, as discovered.
    base: u32,
}

impl<'a> InterfaceBlock<'a> {
    pub const TYPE: u32 = block_type::INTERFACE;
    /// The version this driver was written against.
    pub const VERSION: Version = Version::from_word(regmap::interface::VERSION);

    /// The interface block at `base` (found by discovery).
    pub fn at(backend: &'a dyn Backend, base: u32) -> Self {
        InterfaceBlock { backend, base }
    }

    /// The card's MAC address, first byte on the wire first.
    pub fn mac(&self) -> Result<[u8; 6], Error> {
        let lo = self
            .backend
            .csr_read(self.base + regmap::interface::MAC_LO)?;
        let hi = self
            .backend
            .csr_read(self.base + regmap::interface::MAC_HI)?;
        let (lo, hi) = (lo.to_le_bytes(), hi.to_le_bytes());
        Ok([lo[0], lo[1], lo[2], lo[3], hi[0], hi[1]])
    }

    pub fn set_mac(&self, mac: [u8; 6]) -> Result<(), Error> {
        let lo = u32::from_le_bytes([mac[0], mac[1], mac[2], mac[3]]);
        let hi = u32::from_le_bytes([mac[4], mac[5], 0, 0]);
        self.backend
            .csr_write(self.base + regmap::interface::MAC_LO, lo)?;
        self.backend
            .csr_write(self.base + regmap::interface::MAC_HI, hi)
    }

    /// The card's IPv4 address as a number (10.0.0.1 is 0x0a000001).
    pub fn ipv4(&self) -> Result<u32, Error> {
        self.backend.csr_read(self.base + regmap::interface::IPV4)
    }

    pub fn set_ipv4(&self, address: u32) -> Result<(), Error> {
        self.backend
            .csr_write(self.base + regmap::interface::IPV4, address)
    }

    /// Starts the card reset (RESET): every RPC the card holds is dropped
    /// and every endpoint closed; wait for [`InterfaceBlock::resetting`] to
    /// read false before using the card again.
    pub fn start_reset(&self) -> Result<(), Error> {
        self.backend.csr_write(
            self.base + regmap::interface::RESET,
            regmap::interface::RESET_MAGIC,
        )
    }

    /// True while a card reset is under way.
    pub fn resetting(&self) -> Result<bool, Error> {
        Ok(self
            .backend
            .csr_read(self.base + regmap::interface::RESET)?
            != 0)
    }
}

/// The interrupt block: MSI-X for the completion rings, vector v for
/// endpoint v (`regmap::interrupt`).
pub struct InterruptBlock<'a> {
    backend: &'a dyn Backend,
    /// Base of the block, as discovered.
    base: u32,
}

impl<'a> InterruptBlock<'a> {
    pub const TYPE: u32 = block_type::INTERRUPT;
    /// The version this driver was written against.
    pub const VERSION: Version = Version::from_word(regmap::interrupt::VERSION);

    /// The interrupt block at `base` (found by discovery).
    pub fn at(backend: &'a dyn Backend, base: u32) -> Self {
        InterruptBlock { backend, base }
    }

    /// Vectors the card has (one per endpoint).
    pub fn vectors(&self) -> Result<u32, Error> {
        self.backend
            .csr_read(self.base + regmap::interrupt::VECTORS)
    }

    /// Arms `vector`: the card sends it once its ring holds an entry the
    /// host has not consumed (at once if it does). Write CPL_CONSUMER first.
    pub fn arm(&self, vector: u32) -> Result<(), Error> {
        self.backend
            .csr_write(self.base + regmap::interrupt::ARM, 1 << vector)
    }

    /// The armed vectors, bit v for vector v.
    pub fn armed(&self) -> Result<u32, Error> {
        self.backend.csr_read(self.base + regmap::interrupt::ARM)
    }

    /// Messages the card has sent (wraps).
    pub fn sent(&self) -> Result<u32, Error> {
        self.backend.csr_read(self.base + regmap::interrupt::SENT)
    }

    /// MSI-X enabled, and the function masked, as the card sees them.
    pub fn status(&self) -> Result<(bool, bool), Error> {
        let word = self
            .backend
            .csr_read(self.base + regmap::interrupt::STATUS)?;
        Ok((word & 1 != 0, word & 2 != 0))
    }

    /// Vector `vector`'s MSI-X table entry: what the kernel writes when a
    /// program asks for MSI-X (the sim backend plays the kernel with it).
    pub fn program_vector(&self, vector: u32, address: u64, data: u32) -> Result<(), Error> {
        use regmap::interrupt::*;
        let entry = self.base + TABLE + vector * ENTRY_BYTES;
        self.backend
            .csr_write(entry + ENTRY_ADDR_LO, address as u32)?;
        self.backend
            .csr_write(entry + ENTRY_ADDR_HI, (address >> 32) as u32)?;
        self.backend.csr_write(entry + ENTRY_DATA, data)
    }

    /// Masks or unmasks `vector` (its table entry's vector control).
    pub fn set_vector_masked(&self, vector: u32, masked: bool) -> Result<(), Error> {
        use regmap::interrupt::*;
        self.backend.csr_write(
            self.base + TABLE + vector * ENTRY_BYTES + ENTRY_CONTROL,
            masked.into(),
        )
    }

    /// The Pending Bit Array's first word: vectors held back by a mask.
    pub fn pending(&self) -> Result<u32, Error> {
        self.backend.csr_read(self.base + regmap::interrupt::PBA)
    }
}

/// An endpoint block: one application's Homa port and the registers of its
/// TX descriptor ring, completion ring and receive buffer area.
pub struct EndpointBlock<'a> {
    backend: &'a dyn Backend,
    /// Base of the block, as discovered.
    base: u32,
}

impl<'a> EndpointBlock<'a> {
    pub const TYPE: u32 = block_type::ENDPOINT;
    /// The version this driver was written against.
    pub const VERSION: Version = Version::from_word(regmap::endpoint::VERSION);

    /// The endpoint block at `base` (found by discovery).
    pub fn at(backend: &'a dyn Backend, base: u32) -> Self {
        EndpointBlock { backend, base }
    }

    /// The Homa port served; 0 when closed.
    pub fn port(&self) -> Result<u16, Error> {
        Ok(self.read(regmap::endpoint::PORT)? as u16)
    }

    /// Opens the endpoint on `port`, or closes it with 0.
    pub fn set_port(&self, port: u16) -> Result<(), Error> {
        self.write(regmap::endpoint::PORT, u32::from(port))
    }

    /// Points the card at a TX descriptor ring of `1 << log2` entries.
    pub fn set_tx_ring(&self, iova: u64, log2: u32) -> Result<(), Error> {
        self.write(regmap::endpoint::TX_RING_LO, iova as u32)?;
        self.write(regmap::endpoint::TX_RING_HI, (iova >> 32) as u32)?;
        self.write(regmap::endpoint::TX_RING_LOG2, log2)
    }

    /// Points the card at a completion ring of `1 << log2` entries.
    pub fn set_completion_ring(&self, iova: u64, log2: u32) -> Result<(), Error> {
        self.write(regmap::endpoint::CPL_RING_LO, iova as u32)?;
        self.write(regmap::endpoint::CPL_RING_HI, (iova >> 32) as u32)?;
        self.write(regmap::endpoint::CPL_RING_LOG2, log2)
    }

    /// Points the card at the receive buffer area.
    pub fn set_rx_area(&self, iova: u64) -> Result<(), Error> {
        self.write(regmap::endpoint::RX_AREA_LO, iova as u32)?;
        self.write(regmap::endpoint::RX_AREA_HI, (iova >> 32) as u32)
    }

    /// Hands the card bpage `page` of the RX area (free for a message).
    pub fn push_bpage(&self, page: u32) -> Result<(), Error> {
        self.write(regmap::endpoint::RX_BPAGE_PUSH, page)
    }

    /// Bpages the card holds free for this endpoint.
    pub fn bpages_free(&self) -> Result<u32, Error> {
        self.read(regmap::endpoint::RX_BPAGES_FREE)
    }

    /// The doorbell of the TX ring: the host's producer index goes here.
    pub fn tx_doorbell(&self) -> Doorbell {
        Doorbell::new(self.base + regmap::endpoint::TX_PRODUCER)
    }

    /// The doorbell of the completion ring: the host's consumer index goes here.
    pub fn completion_doorbell(&self) -> Doorbell {
        Doorbell::new(self.base + regmap::endpoint::CPL_CONSUMER)
    }

    /// Index after the last descriptor the card has taken.
    pub fn tx_consumer(&self) -> Result<u32, Error> {
        self.read(regmap::endpoint::TX_CONSUMER)
    }

    /// Index after the last completion the card has written.
    pub fn completion_producer(&self) -> Result<u32, Error> {
        self.read(regmap::endpoint::CPL_PRODUCER)
    }

    fn read(&self, register: u32) -> Result<u32, Error> {
        self.backend.csr_read(self.base + register)
    }

    fn write(&self, register: u32, value: u32) -> Result<(), Error> {
        self.backend.csr_write(self.base + register, value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_words_split_into_major_and_minor() {
        let v = Version::from_word(0x0002_0005);
        assert_eq!((v.major, v.minor), (2, 5));
        assert_eq!(v.word(), 0x0002_0005);
        assert_eq!(v.to_string(), "2.5");
        assert!(v.satisfies(2, 5));
        assert!(v.satisfies(2, 0), "a newer minor is accepted");
        assert!(!v.satisfies(2, 6), "an older minor is refused");
        assert!(!v.satisfies(1, 0), "another major is refused");
    }

    #[test]
    fn design_version_matches_the_register_maps_packing() {
        let word = regmap::pack_design_version("1.2.3");
        let v = DesignVersion::from_word(word);
        assert_eq!((v.major, v.minor, v.patch), (1, 2, 3));
        assert_eq!(v.word(), word);
        assert_eq!(v.to_string(), "1.2.3");
    }

    #[test]
    fn known_blocks_have_names() {
        assert_eq!(block_name(block_type::ID), Some("ID"));
        assert_eq!(block_name(block_type::SCRATCH), Some("scratch"));
        assert_eq!(block_name(block_type::RX_COUNTERS), Some("RX counters"));
        assert_eq!(block_name(block_type::ENDPOINT), Some("endpoint"));
        assert_eq!(block_name(0x1234_5678), None);
    }
}

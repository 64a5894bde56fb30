//! Discovery: walking the register-block list from address 0, and checking
//! that the blocks a driver needs are there in a version it understands.
//!
//! DESIGN NOTES
//! ------------
//! The walk trusts nothing it reads: a bitstream may be foreign, half
//! configured, or gone (a PCIe read of a dead card returns all ones). So it
//! is bounded three ways: a NEXT pointer must stay inside the register window
//! and be word aligned, a block seen twice is a loop, and no list is longer
//! than [`MAX_BLOCKS`]. A block whose type reads 0 is nothing (the core reads
//! 0 where no register decodes), and all ones is a card that does not answer. Each failure is its own [`DiscoveryError`] naming the
//! addresses involved, so a bad bitstream is diagnosed from the message alone.
//!
//! Version checks follow the register map's rule (`regmap.rs`): same major,
//! minor at least the one needed. [`BlockList::require`] reports what it found
//! against what it needs, or that the block is missing along with the list
//! that was found instead.

use std::collections::HashSet;
use std::fmt;

use homa_hw::regmap::header;

use crate::backend::Backend;
use crate::regs::{block_name, BlockHeader, Version};
use crate::Error;

/// Longest register-block list the walk accepts: far above any design (the
/// core has two blocks today), far below the 16 MiB window's 65 536 spans.
pub const MAX_BLOCKS: usize = 1024;

/// What a type, version or NEXT word of a card that does not answer reads as.
const NO_RESPONSE: u32 = 0xffff_ffff;

/// What the type word reads as where no block is (the core answers 0 for
/// addresses it does not decode); no block type is 0.
const NO_BLOCK: u32 = 0;

/// A discovery or version-check failure.
#[derive(Debug, thiserror::Error)]
pub enum DiscoveryError {
    /// A block's NEXT pointer leads back to a block already walked.
    #[error("register-block list loops: the block at {from:#x} points back to {next:#x} (walk: {})", hex_list(.walk))]
    Loop {
        from: u32,
        next: u32,
        /// Bases in walk order up to and including `from`.
        walk: Vec<u32>,
    },
    /// A NEXT pointer past the register window.
    #[error("the block at {from:#x} points to a next block at {next:#x}, outside the {window_bytes:#x}-byte register window")]
    OutOfRange {
        from: u32,
        next: u32,
        window_bytes: u64,
    },
    /// A NEXT pointer that is not word aligned.
    #[error(
        "the block at {from:#x} points to a next block at {next:#x}, which is not 32-bit aligned"
    )]
    Misaligned { from: u32, next: u32 },
    /// More blocks than any real list.
    #[error("the register-block list goes on past {max} blocks: the CSR space is corrupt or not a Homa NIC's")]
    TooLong { max: usize },
    /// The header of a block reads all ones: the card is not answering.
    #[error("the block header at {base:#x} reads 0xffffffff: the card does not answer (held in reset, bitstream not loaded, or the PCIe link is down)")]
    NoResponse { base: u32 },
    /// Nothing answers at address 0: the window holds no register blocks.
    #[error("no register block at address 0 (its type word reads 0): this register window is not a Homa NIC's (wrong BAR?)")]
    EmptyWindow,
    /// A NEXT pointer to an address where no block answers.
    #[error("the block at {from:#x} points to a next block at {next:#x}, but nothing answers there (its type word reads 0): the bitstream's register map is inconsistent")]
    DanglingNext { from: u32, next: u32 },
    /// A needed block type is not in the list.
    #[error(
        "no {name} block (type {block_type:#010x}) in the register-block list; found: {found}"
    )]
    Missing {
        name: String,
        block_type: u32,
        /// The blocks that were found, described.
        found: String,
    },
    /// A needed block has a version the driver does not understand.
    #[error("the {name} block at {base:#x} has version {found}; this driver needs {need_major}.x with x >= {need_min_minor}")]
    Version {
        name: String,
        base: u32,
        found: Version,
        need_major: u16,
        need_min_minor: u16,
    },
    /// An endpoint index past the card's endpoints.
    #[error("no endpoint {index}: the card has {count} endpoint blocks")]
    NoSuchEndpoint { index: usize, count: usize },
    /// An ID block register holds a value this driver cannot work with.
    #[error("ID block: {register} is {found:#x}, but this driver needs {needed}")]
    IdValue {
        register: &'static str,
        found: u32,
        needed: String,
    },
}

fn hex_list(bases: &[u32]) -> String {
    let parts: Vec<String> = bases.iter().map(|b| format!("{b:#x}")).collect();
    parts.join(" -> ")
}

/// One block of the list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegisterBlock {
    /// Block type code (`regmap::block_type`).
    pub block_type: u32,
    pub version: Version,
    /// Byte address of the block's first word.
    pub base: u32,
}

impl RegisterBlock {
    /// The block's name if this driver knows its type, else its type in hex.
    pub fn name(&self) -> String {
        type_name(self.block_type)
    }
}

fn type_name(block_type: u32) -> String {
    block_name(block_type).map_or_else(|| format!("unknown {block_type:#010x}"), str::to_string)
}

impl fmt::Display for RegisterBlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} at {:#x}", self.name(), self.version, self.base)
    }
}

/// The register blocks of a card, in list order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockList {
    blocks: Vec<RegisterBlock>,
}

impl BlockList {
    /// Walks the list from address 0 (see the DESIGN NOTES for the bounds).
    pub fn discover(backend: &dyn Backend) -> Result<Self, Error> {
        let window_bytes = backend.csr_window_bytes();
        let mut blocks: Vec<RegisterBlock> = Vec::new();
        let mut seen = HashSet::new();
        let mut base = 0u32;
        loop {
            if blocks.len() == MAX_BLOCKS {
                return Err(DiscoveryError::TooLong { max: MAX_BLOCKS }.into());
            }
            seen.insert(base);
            let h = BlockHeader::read(backend, base)?;
            if h.block_type == NO_RESPONSE && h.version.word() == NO_RESPONSE {
                return Err(DiscoveryError::NoResponse { base }.into());
            }
            if h.block_type == NO_BLOCK {
                return Err(match blocks.last() {
                    None => DiscoveryError::EmptyWindow,
                    Some(from) => DiscoveryError::DanglingNext {
                        from: from.base,
                        next: base,
                    },
                }
                .into());
            }
            tracing::debug!(base, block_type = h.block_type, version = %h.version, next = h.next, "register block");
            blocks.push(RegisterBlock {
                block_type: h.block_type,
                version: h.version,
                base,
            });
            let next = h.next;
            if next == 0 {
                break;
            }
            // The whole header of the next block must fit in the window.
            if u64::from(next) + u64::from(header::FIRST_REGISTER) > window_bytes {
                return Err(DiscoveryError::OutOfRange {
                    from: base,
                    next,
                    window_bytes,
                }
                .into());
            }
            if next % 4 != 0 {
                return Err(DiscoveryError::Misaligned { from: base, next }.into());
            }
            if seen.contains(&next) {
                return Err(DiscoveryError::Loop {
                    from: base,
                    next,
                    walk: blocks.iter().map(|b| b.base).collect(),
                }
                .into());
            }
            base = next;
        }
        Ok(BlockList { blocks })
    }

    /// A list from blocks already known (tests, tools that replay a dump).
    pub fn from_blocks(blocks: Vec<RegisterBlock>) -> Self {
        BlockList { blocks }
    }

    /// The blocks in list order.
    pub fn blocks(&self) -> &[RegisterBlock] {
        &self.blocks
    }

    /// The first block of `block_type`, whatever its version.
    pub fn find(&self, block_type: u32) -> Option<&RegisterBlock> {
        self.blocks.iter().find(|b| b.block_type == block_type)
    }

    /// The first block of `block_type`, checked to be version `major.x` with
    /// `x >= min_minor`.
    pub fn require(
        &self,
        block_type: u32,
        major: u16,
        min_minor: u16,
    ) -> Result<&RegisterBlock, DiscoveryError> {
        let block = self
            .find(block_type)
            .ok_or_else(|| DiscoveryError::Missing {
                name: type_name(block_type),
                block_type,
                found: self.to_string(),
            })?;
        if !block.version.satisfies(major, min_minor) {
            return Err(DiscoveryError::Version {
                name: block.name(),
                base: block.base,
                found: block.version,
                need_major: major,
                need_min_minor: min_minor,
            });
        }
        Ok(block)
    }

    /// [`BlockList::require`] with the version a block view was written against.
    pub fn require_version(
        &self,
        block_type: u32,
        version: Version,
    ) -> Result<&RegisterBlock, DiscoveryError> {
        self.require(block_type, version.major, version.minor)
    }
}

impl fmt::Display for BlockList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.blocks.is_empty() {
            return f.write_str("no blocks");
        }
        for (i, b) in self.blocks.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{b}")?;
        }
        Ok(())
    }
}

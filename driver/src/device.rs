//! A Homa NIC opened: its backend, its discovered register blocks and what
//! its ID block says. This is what `homa-host` and the CLI hold.

use homa_hw::regmap;

use crate::backend::Backend;
use crate::discovery::{BlockList, DiscoveryError, RegisterBlock};
use crate::regs::{
    DesignVersion, EndpointBlock, IdBlock, InterfaceBlock, InterruptBlock, RxCountersBlock,
    ScratchBlock,
};
use crate::Error;

/// What the ID block says about the bitstream, checked by [`Device::open`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdInfo {
    /// The homa-nic release the bitstream was built from.
    pub design_version: DesignVersion,
    /// Core clock in kHz (250 000 on the card).
    pub clock_khz: u32,
    /// Width of the Ethernet and DMA datapaths in bits.
    pub datapath_bits: u32,
    /// The Homa wire format the core speaks (`regmap::id::WIRE_FORMAT_*`).
    pub wire_format: u32,
}

impl IdInfo {
    /// Bytes per datapath beat (a DMA or Ethernet transfer per cycle).
    pub fn beat_bytes(&self) -> u32 {
        self.datapath_bits / 8
    }

    /// Nanoseconds per core clock cycle, for turning cycle counts into time.
    pub fn cycle_ns(&self) -> f64 {
        1e6 / f64::from(self.clock_khz)
    }

    /// Reads the ID block and checks every value this driver relies on.
    fn read(id: &IdBlock<'_>) -> Result<Self, Error> {
        let info = IdInfo {
            design_version: id.design_version()?,
            clock_khz: id.clock_khz()?,
            datapath_bits: id.datapath_bits()?,
            wire_format: id.wire_format()?,
        };
        if info.wire_format != regmap::id::WIRE_FORMAT_2025_07 {
            return Err(DiscoveryError::IdValue {
                register: "wire format",
                found: info.wire_format,
                needed: format!(
                    "{:#x} (HomaModule's 2025-07 format, the one this driver's rings and the host library speak)",
                    regmap::id::WIRE_FORMAT_2025_07
                ),
            }
            .into());
        }
        if info.clock_khz == 0 {
            return Err(DiscoveryError::IdValue {
                register: "clock kHz",
                found: 0,
                needed: "a nonzero clock (cycle counts are turned into time with it)".into(),
            }
            .into());
        }
        // Ring entries and buffer alignment are sized in whole beats.
        if info.datapath_bits < 64 || !info.datapath_bits.is_power_of_two() {
            return Err(DiscoveryError::IdValue {
                register: "datapath bits",
                found: info.datapath_bits,
                needed: "a power of two of at least 64 bits".into(),
            }
            .into());
        }
        Ok(info)
    }
}

/// An opened card: discovery done, ID checked.
pub struct Device {
    backend: Box<dyn Backend>,
    /// The register blocks, in list order, as discovered at open.
    blocks: BlockList,
    /// The ID block's values, read at open.
    id: IdInfo,
}

impl Device {
    /// Walks the register-block list, requires an ID block of a version this
    /// driver understands, and checks its values.
    pub fn open(backend: impl Backend + 'static) -> Result<Self, Error> {
        let backend: Box<dyn Backend> = Box::new(backend);
        let blocks = BlockList::discover(&*backend)?;
        let id_block = *blocks.require_version(IdBlock::TYPE, IdBlock::VERSION)?;
        let id = IdInfo::read(&IdBlock::at(&*backend, id_block.base))?;
        tracing::info!(
            card = %backend.describe(),
            blocks = %blocks,
            design_version = %id.design_version,
            clock_khz = id.clock_khz,
            datapath_bits = id.datapath_bits,
            "opened Homa NIC"
        );
        Ok(Device {
            backend,
            blocks,
            id,
        })
    }

    pub fn backend(&self) -> &dyn Backend {
        &*self.backend
    }

    /// The register blocks found at open.
    pub fn blocks(&self) -> &BlockList {
        &self.blocks
    }

    /// The ID block's values.
    pub fn id(&self) -> &IdInfo {
        &self.id
    }

    /// A live view of the ID block (its values are also cached in [`Device::id`]).
    pub fn id_block(&self) -> Result<IdBlock<'_>, Error> {
        let b = self.require(IdBlock::TYPE, IdBlock::VERSION)?;
        Ok(IdBlock::at(self.backend(), b.base))
    }

    /// The scratch block, if the bitstream has one of a version this driver knows.
    pub fn scratch(&self) -> Result<ScratchBlock<'_>, Error> {
        let b = self.require(ScratchBlock::TYPE, ScratchBlock::VERSION)?;
        Ok(ScratchBlock::at(self.backend(), b.base))
    }

    /// The RX counters block, if the bitstream has one of a version this driver knows.
    pub fn rx_counters(&self) -> Result<RxCountersBlock<'_>, Error> {
        let b = self.require(RxCountersBlock::TYPE, RxCountersBlock::VERSION)?;
        Ok(RxCountersBlock::at(self.backend(), b.base))
    }

    /// The interface block (the card's MAC and IPv4 addresses).
    pub fn interface(&self) -> Result<InterfaceBlock<'_>, Error> {
        let b = self.require(InterfaceBlock::TYPE, InterfaceBlock::VERSION)?;
        Ok(InterfaceBlock::at(self.backend(), b.base))
    }

    /// The interrupt block (MSI-X for the completion rings).
    pub fn interrupts(&self) -> Result<InterruptBlock<'_>, Error> {
        let b = self.require(InterruptBlock::TYPE, InterruptBlock::VERSION)?;
        Ok(InterruptBlock::at(self.backend(), b.base))
    }

    /// Number of endpoint blocks the card has.
    pub fn endpoint_count(&self) -> usize {
        self.blocks
            .blocks()
            .iter()
            .filter(|b| b.block_type == EndpointBlock::TYPE)
            .count()
    }

    /// Endpoint `index`: the `index`-th endpoint block in list order, checked
    /// to be a version this driver knows.
    pub fn endpoint(&self, index: usize) -> Result<EndpointBlock<'_>, Error> {
        let block = self
            .blocks
            .blocks()
            .iter()
            .filter(|b| b.block_type == EndpointBlock::TYPE)
            .nth(index)
            .ok_or(DiscoveryError::NoSuchEndpoint {
                index,
                count: self.endpoint_count(),
            })?;
        let version = EndpointBlock::VERSION;
        if !block.version.satisfies(version.major, version.minor) {
            return Err(DiscoveryError::Version {
                name: block.name(),
                base: block.base,
                found: block.version,
                need_major: version.major,
                need_min_minor: version.minor,
            }
            .into());
        }
        Ok(EndpointBlock::at(self.backend(), block.base))
    }

    fn require(&self, block_type: u32, version: crate::Version) -> Result<RegisterBlock, Error> {
        Ok(*self.blocks.require_version(block_type, version)?)
    }
}

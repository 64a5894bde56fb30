//! A fake card for the tests: a register space served from a map, so a test
//! can lay out any register-block list, well formed or broken.

#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::Mutex;

use homa_driver::{Backend, DmaBuffer, DmaError, Error};
use homa_hw::regmap::{self, header};

/// Register window of the fake card unless a test picks another.
pub const FAKE_WINDOW_BYTES: u64 = 1 << regmap::CSR_ADDR_BITS;

/// A register space in a map; unset registers read `default`.
pub struct FakeCard {
    regs: Mutex<HashMap<u32, u32>>,
    /// Bytes of register window.
    window_bytes: u64,
    /// What an unset register reads as (0 like the core, or all ones like a dead card).
    default: u32,
}

impl FakeCard {
    pub fn new(window_bytes: u64) -> Self {
        FakeCard {
            regs: Mutex::new(HashMap::new()),
            window_bytes,
            default: 0,
        }
    }

    /// A card whose every register reads 0xffffffff (a PCIe read of a dead card).
    pub fn dead() -> Self {
        FakeCard {
            default: 0xffff_ffff,
            ..FakeCard::new(FAKE_WINDOW_BYTES)
        }
    }

    /// A card with these blocks: (type, version, base, next).
    pub fn with_blocks(blocks: &[(u32, u32, u32, u32)]) -> Self {
        let card = FakeCard::new(FAKE_WINDOW_BYTES);
        for &(block_type, version, base, next) in blocks {
            card.add_block(block_type, version, base, next);
        }
        card
    }

    /// What the real core holds: the blocks of `regmap::BLOCKS` and the ID
    /// values of the card (250 MHz, 512 bits, the 2025-07 wire format).
    pub fn like_the_core() -> Self {
        let card = FakeCard::new(FAKE_WINDOW_BYTES);
        for &(block_type, version, base) in regmap::BLOCKS {
            card.add_block(block_type, version, base, regmap::next_block(base));
        }
        let id = |r| regmap::id::BASE + r;
        card.set(
            id(regmap::id::DESIGN_VERSION),
            regmap::pack_design_version("0.1.0"),
        );
        card.set(id(regmap::id::CLOCK_KHZ), 250_000);
        card.set(id(regmap::id::DATAPATH_BITS), 512);
        card.set(id(regmap::id::WIRE_FORMAT), regmap::id::WIRE_FORMAT_2025_07);
        card
    }

    pub fn add_block(&self, block_type: u32, version: u32, base: u32, next: u32) {
        self.set(base + header::TYPE, block_type);
        self.set(base + header::VERSION, version);
        self.set(base + header::NEXT, next);
    }

    pub fn set(&self, addr: u32, value: u32) {
        self.regs.lock().unwrap().insert(addr, value);
    }

    pub fn get(&self, addr: u32) -> u32 {
        *self
            .regs
            .lock()
            .unwrap()
            .get(&addr)
            .unwrap_or(&self.default)
    }
}

impl Backend for FakeCard {
    fn describe(&self) -> String {
        "fake card".into()
    }
    fn csr_window_bytes(&self) -> u64 {
        self.window_bytes
    }
    fn csr_read(&self, offset: u32) -> Result<u32, Error> {
        if u64::from(offset) + 4 > self.window_bytes {
            return Err(Error::CsrOutOfRange {
                offset,
                window_bytes: self.window_bytes,
            });
        }
        Ok(self.get(offset))
    }
    fn csr_write(&self, offset: u32, value: u32) -> Result<(), Error> {
        self.set(offset, value);
        Ok(())
    }
    fn dma_alloc(&self, _bytes: usize) -> Result<DmaBuffer, Error> {
        unimplemented!("the fake card has no DMA")
    }
    fn dma_read(&self, iova: u64, out: &mut [u8]) -> Result<(), Error> {
        Err(DmaError::Unmapped {
            iova,
            bytes: out.len(),
        }
        .into())
    }
    fn dma_write(&self, iova: u64, data: &[u8]) -> Result<(), Error> {
        Err(DmaError::Unmapped {
            iova,
            bytes: data.len(),
        }
        .into())
    }
    fn advance(&self, _cycles: u64) {}
}

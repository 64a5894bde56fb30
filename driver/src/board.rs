//! The board's register block (`homa_hw::regmap::board`): which board, part
//! and build the card runs, the reboot trigger, and the flash's SPI port. It
//! is at a fixed base, outside the core's block list (a bare core has no
//! board), so [`BoardBlock::open`] checks its header there instead of
//! discovering it.

use homa_hw::regmap::board as regmap;
pub use homa_hw_sim::board::Identity;

use crate::backend::Backend;
use crate::regs::Version;
use crate::Error;

/// Why the board block cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum BoardError {
    #[error(transparent)]
    Csr(#[from] Error),
    /// Reads came back all-ones: the device is not answering on the link.
    #[error("the card answers every read with all-ones: it is rebooting or gone from the PCIe link (check `lspci`; after a reboot it must be rescanned)")]
    CardGone,
    #[error("no board register block at {base:#x} (found type {found:#010x}, want {want:#010x}): this card is not running a homa-nic board build (a simulated card needs `--sim`, which carries a board)", base = regmap::BASE, want = regmap::TYPE)]
    NoBoard { found: u32 },
    #[error("board register block version {found} is not one this tool knows (major {major})", major = regmap::VERSION >> 16)]
    Version { found: Version },
}

/// The board block of a card.
pub struct BoardBlock<'a> {
    backend: &'a dyn Backend,
}

impl<'a> BoardBlock<'a> {
    /// Checks the block's type and version at its base.
    pub fn open(backend: &'a dyn Backend) -> Result<Self, BoardError> {
        let found = backend.csr_read(regmap::BASE)?;
        if found == u32::MAX {
            return Err(BoardError::CardGone);
        }
        if found != regmap::TYPE {
            return Err(BoardError::NoBoard { found });
        }
        let version = Version::from_word(backend.csr_read(regmap::BASE + 4)?);
        if !version.satisfies((regmap::VERSION >> 16) as u16, 0) {
            return Err(BoardError::Version { found: version });
        }
        Ok(BoardBlock { backend })
    }

    pub fn backend(&self) -> &'a dyn Backend {
        self.backend
    }

    /// The running bitstream's identity.
    pub fn identity(&self) -> Result<Identity, BoardError> {
        let mut words = [0; regmap::ID_WORDS];
        for (i, w) in words.iter_mut().enumerate() {
            *w = self.read(regmap::BOARD_NAME + 4 * i as u32)?;
        }
        Ok(Identity::from_words(&words))
    }

    /// Asks the FPGA to reconfigure from flash (IPROG). The card drops off
    /// the link at once.
    pub fn reboot(&self) -> Result<(), BoardError> {
        self.write(regmap::REBOOT, regmap::REBOOT_MAGIC)
    }

    /// Reads a register of the block; all-ones means the card is gone.
    pub fn read(&self, offset: u32) -> Result<u32, BoardError> {
        match self.backend.csr_read(regmap::BASE + offset)? {
            u32::MAX => Err(BoardError::CardGone),
            v => Ok(v),
        }
    }

    pub fn write(&self, offset: u32, value: u32) -> Result<(), BoardError> {
        Ok(self.backend.csr_write(regmap::BASE + offset, value)?)
    }
}

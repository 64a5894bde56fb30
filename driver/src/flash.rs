//! Writing a bitstream into the card's configuration flash over the BAR, and
//! rebooting into it: what `homa-nic flash` does, for a real card (VFIO) and a
//! simulated one alike.
//!
//! DESIGN NOTES
//! ------------
//! - The port. The board block's FLASH_CONTROL/FLASH_DATA registers shift one
//!   byte per write, SPI mode 0, single wire (`homa_firmware::top::flash_spi`).
//!   [`SpiFlash::transaction`] selects the chip, shifts bytes out and in,
//!   polling FLASH_DATA's busy bit after each, and deselects. A read of
//!   all-ones means the card left the link (a reboot, a power cut): the
//!   transaction fails with [`FlashError::CardGone`] instead of polling on.
//! - The chip (MT25QU01G, BOARDS.md §3.2). Only the 4-byte-address opcodes
//!   are used (0x13 read, 0x12 page program, 0x21 4 KiB and 0xDC 64 KiB erase),
//!   as Corundum's tool does for parts over 16 MiB, so no address mode or
//!   extended address register state matters. Every program and erase is
//!   preceded by write enable (0x06) and a check that the latch is set, and
//!   followed by polling the status register (0x05) until write-in-progress
//!   clears, sleeping between polls ([`Backend::sleep`]: a simulated card
//!   then skips the time instead of simulating it).
//! - Timeouts are 20 times the MT25Q family's typical times (`flash_chip`'s
//!   figures: 128 us a page, 50 ms a 4 KiB subsector, 160 ms a 64 KiB
//!   sector), measured as the sum of sleeps: a chip that never finishes an
//!   erase is reported, not waited on forever.
//! - The plan. Nothing is written below [`regmap::FLASH_USER_IMAGE`]: that is
//!   the factory golden image, the one a card falls back to when the user
//!   image fails, and the only way back without JTAG. The image is written at
//!   the user-image address by default (where `write_cfgmem -loadbit "up
//!   0x01002000"` puts it), 4 KiB aligned. Erase uses 64 KiB sectors where the
//!   range covers whole ones and 4 KiB subsectors at its ragged ends.
//! - Checks before anything is written: the file parses; its part is the
//!   card's (`bitfile::part_matches`); its design is `homa_<board>` for the
//!   card's board; the flash answers with the MT25QU01G's JEDEC ID; the image
//!   fits above the golden image.
//! - Verify reads every byte back and reports the first difference.

use std::time::Duration;

use homa_hw::regmap::board as regmap;

use crate::backend::Backend;
use crate::bitfile::{part_matches, BitFile};
use crate::board::{BoardBlock, BoardError, Identity};

/// MT25QU01G: Micron, 1.8 V, 1 Gbit.
pub const JEDEC_ID: [u8; 3] = [0x20, 0xBB, 0x21];
pub const PAGE_BYTES: u32 = 256;
pub const SUBSECTOR_BYTES: u32 = 4096;
pub const SECTOR_BYTES: u32 = 65536;

const STATUS_WIP: u8 = 1 << 0;
const STATUS_WEL: u8 = 1 << 1;

/// Register polls of FLASH_DATA's busy bit before the port is declared stuck
/// (a byte takes 64 core cycles; a poll at least one).
const PORT_POLLS: u32 = 10_000;

/// Timeouts and poll intervals of chip operations.
const PAGE_TIMEOUT: Duration = Duration::from_micros(20 * 128);
const PAGE_POLL: Duration = Duration::from_micros(20);
const SUBSECTOR_TIMEOUT: Duration = Duration::from_millis(20 * 50);
const SECTOR_TIMEOUT: Duration = Duration::from_millis(20 * 160);
const ERASE_POLL: Duration = Duration::from_millis(1);

/// Bytes per verify read.
const VERIFY_CHUNK: u32 = 256;

/// Why flashing stopped.
#[derive(Debug, thiserror::Error)]
pub enum FlashError {
    #[error(transparent)]
    Board(#[from] BoardError),
    #[error("the card left the PCIe link while the flash was being written: it rebooted or lost power (the golden image boots when the user image is incomplete; flash again)")]
    CardGone,
    #[error("refusing to write at {address:#010x}: the flash below {user:#010x} holds the golden image, the card's only way back without JTAG", user = regmap::FLASH_USER_IMAGE)]
    GoldenRegion { address: u32 },
    #[error("refusing to write at {address:#010x}: the address must be a multiple of 4 KiB (the flash's erase unit)")]
    Unaligned { address: u32 },
    #[error("the image is {bytes} bytes; at {address:#010x} it runs past the end of the {flash} MiB flash", flash = regmap::FLASH_BYTES >> 20)]
    TooBig { address: u32, bytes: usize },
    #[error("the image is empty")]
    Empty,
    #[error("the file is for part {file}, the card is a {card}: refusing to write another part's bitstream")]
    WrongPart { file: String, card: String },
    #[error("the file's design is {design:?}, not a homa-nic build for this card's board ({card:?}, design \"homa_{card}\")")]
    WrongBoard { design: String, card: String },
    #[error("the flash chip answers JEDEC ID {found:02x?}, not the MT25QU01G's {JEDEC_ID:02x?}: refusing to drive an unknown chip")]
    UnknownChip { found: [u8; 3] },
    #[error(
        "the flash port stayed busy after {PORT_POLLS} polls: the board logic is not shifting"
    )]
    PortStuck,
    #[error("the flash did not set its write enable latch (status {status:#04x})")]
    WriteEnable { status: u8 },
    #[error("the flash chip stayed busy {waited:?} after {what} at {address:#010x} (limit {limit:?}): the chip is faulty or write protected")]
    ChipTimeout {
        what: &'static str,
        address: u32,
        waited: Duration,
        limit: Duration,
    },
    #[error("verify failed at {address:#010x}: wrote {wrote:#04x}, read back {read:#04x}")]
    Verify { address: u32, wrote: u8, read: u8 },
}

/// The flash chip behind the board's SPI port.
pub struct SpiFlash<'a> {
    regs: BoardBlock<'a>,
}

impl<'a> SpiFlash<'a> {
    /// Takes the flash pins, resets the chip and checks its JEDEC ID.
    pub fn open(regs: BoardBlock<'a>) -> Result<Self, FlashError> {
        let flash = SpiFlash { regs };
        flash.regs.write(regmap::FLASH_CONTROL, regmap::FLASH_OWN)?;
        flash.transaction(&[0x66], 0)?;
        flash.transaction(&[0x99], 0)?;
        let id = flash.transaction(&[0x9F], 3)?;
        let found = [id[0], id[1], id[2]];
        if found != JEDEC_ID {
            return Err(FlashError::UnknownChip { found });
        }
        Ok(flash)
    }

    /// One SPI transaction: `out` shifted out, then `read` bytes shifted in
    /// (0x00 out meanwhile); returns those.
    pub fn transaction(&self, out: &[u8], read: usize) -> Result<Vec<u8>, FlashError> {
        self.regs.write(
            regmap::FLASH_CONTROL,
            regmap::FLASH_OWN | regmap::FLASH_SELECT,
        )?;
        let mut got = Vec::with_capacity(read);
        for (i, &b) in out.iter().chain(std::iter::repeat_n(&0, read)).enumerate() {
            let byte = self.shift(b)?;
            if i >= out.len() {
                got.push(byte);
            }
        }
        self.regs.write(regmap::FLASH_CONTROL, regmap::FLASH_OWN)?;
        Ok(got)
    }

    fn shift(&self, b: u8) -> Result<u8, FlashError> {
        self.regs.write(regmap::FLASH_DATA, u32::from(b))?;
        for _ in 0..PORT_POLLS {
            let v = self.regs.read(regmap::FLASH_DATA).map_err(gone)?;
            if v & regmap::FLASH_BUSY == 0 {
                return Ok(v as u8);
            }
        }
        Err(FlashError::PortStuck)
    }

    pub fn status(&self) -> Result<u8, FlashError> {
        Ok(self.transaction(&[0x05], 1)?[0])
    }

    fn write_enable(&self) -> Result<(), FlashError> {
        self.transaction(&[0x06], 0)?;
        let status = self.status()?;
        if status & STATUS_WEL == 0 {
            return Err(FlashError::WriteEnable { status });
        }
        Ok(())
    }

    fn wait_ready(
        &self,
        what: &'static str,
        address: u32,
        first: Duration,
        poll: Duration,
        limit: Duration,
    ) -> Result<(), FlashError> {
        let backend = self.regs.backend();
        backend.sleep(first);
        let mut waited = first;
        loop {
            if self.status()? & STATUS_WIP == 0 {
                return Ok(());
            }
            if waited >= limit {
                return Err(FlashError::ChipTimeout {
                    what,
                    address,
                    waited,
                    limit,
                });
            }
            backend.sleep(poll);
            waited += poll;
        }
    }

    /// Erases the 4 KiB subsector or the 64 KiB sector at `address`.
    pub fn erase(&self, address: u32, bytes: u32) -> Result<(), FlashError> {
        let (op, what, first, limit) = match bytes {
            SUBSECTOR_BYTES => (
                0x21,
                "a 4 KiB erase",
                Duration::from_millis(40),
                SUBSECTOR_TIMEOUT,
            ),
            SECTOR_BYTES => (
                0xDC,
                "a 64 KiB erase",
                Duration::from_millis(140),
                SECTOR_TIMEOUT,
            ),
            _ => panic!("erase units are 4 KiB or 64 KiB, not {bytes}"),
        };
        self.write_enable()?;
        let mut cmd = vec![op];
        cmd.extend(address.to_be_bytes());
        self.transaction(&cmd, 0)?;
        self.wait_ready(what, address, first, ERASE_POLL, limit)
    }

    /// Programs up to a page at `address`, not crossing a page boundary.
    pub fn program_page(&self, address: u32, data: &[u8]) -> Result<(), FlashError> {
        assert!(
            !data.is_empty() && (address % PAGE_BYTES) as usize + data.len() <= PAGE_BYTES as usize,
            "a page program stays inside one 256-byte page"
        );
        self.write_enable()?;
        let mut cmd = vec![0x12];
        cmd.extend(address.to_be_bytes());
        cmd.extend(data);
        self.transaction(&cmd, 0)?;
        self.wait_ready(
            "a page program",
            address,
            Duration::from_micros(100),
            PAGE_POLL,
            PAGE_TIMEOUT,
        )
    }

    /// Reads `len` bytes from `address`.
    pub fn read(&self, address: u32, len: usize) -> Result<Vec<u8>, FlashError> {
        let mut cmd = vec![0x13];
        cmd.extend(address.to_be_bytes());
        self.transaction(&cmd, len)
    }

    /// Gives the pins back to the configuration logic.
    pub fn release(self) -> Result<(), FlashError> {
        self.regs.write(regmap::FLASH_CONTROL, 0)?;
        Ok(())
    }
}

fn gone(e: BoardError) -> FlashError {
    match e {
        BoardError::CardGone => FlashError::CardGone,
        e => FlashError::Board(e),
    }
}

/// What will be written where, once every check has passed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// First flash byte written.
    pub address: u32,
    /// Bytes of the image.
    pub bytes: usize,
    /// Erase units, in address order: (address, 4 KiB or 64 KiB).
    pub erase: Vec<(u32, u32)>,
}

impl Plan {
    /// Checks `bit` against the card running `card` and plans writing its
    /// data at `address`.
    pub fn new(card: &Identity, bit: &BitFile, address: u32) -> Result<Plan, FlashError> {
        if !part_matches(&bit.part, &card.part) {
            return Err(FlashError::WrongPart {
                file: bit.part.clone(),
                card: card.part.clone(),
            });
        }
        if bit.homa_board() != Some(card.board.as_str()) {
            return Err(FlashError::WrongBoard {
                design: bit.design.clone(),
                card: card.board.clone(),
            });
        }
        Plan::at(address, bit.data.len())
    }

    /// Plans writing `bytes` at `address` (the address checks alone).
    pub fn at(address: u32, bytes: usize) -> Result<Plan, FlashError> {
        if address < regmap::FLASH_USER_IMAGE {
            return Err(FlashError::GoldenRegion { address });
        }
        if !address.is_multiple_of(SUBSECTOR_BYTES) {
            return Err(FlashError::Unaligned { address });
        }
        if bytes == 0 {
            return Err(FlashError::Empty);
        }
        let end = u64::from(address) + bytes as u64;
        if end > u64::from(regmap::FLASH_BYTES) {
            return Err(FlashError::TooBig { address, bytes });
        }
        let end = end.div_ceil(u64::from(SUBSECTOR_BYTES)) as u32 * SUBSECTOR_BYTES;
        let mut erase = Vec::new();
        let mut a = address;
        while a < end {
            let unit = if a.is_multiple_of(SECTOR_BYTES) && a + SECTOR_BYTES <= end {
                SECTOR_BYTES
            } else {
                SUBSECTOR_BYTES
            };
            erase.push((a, unit));
            a += unit;
        }
        Ok(Plan {
            address,
            bytes,
            erase,
        })
    }

    /// Bytes erased.
    pub fn erase_bytes(&self) -> u64 {
        self.erase.iter().map(|&(_, n)| u64::from(n)).sum()
    }
}

/// What a progress report is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Erase,
    Program,
    Verify,
}

/// Erases, programs and verifies `data` as `plan` says, reporting `(phase,
/// bytes done, bytes in the phase)` as it goes.
pub fn write_image(
    flash: &SpiFlash<'_>,
    plan: &Plan,
    data: &[u8],
    progress: &mut dyn FnMut(Phase, u64, u64),
) -> Result<(), FlashError> {
    assert_eq!(data.len(), plan.bytes);
    let total = plan.erase_bytes();
    let mut done = 0;
    progress(Phase::Erase, 0, total);
    for &(a, n) in &plan.erase {
        flash.erase(a, n)?;
        done += u64::from(n);
        progress(Phase::Erase, done, total);
    }
    let total = data.len() as u64;
    let mut offset = 0usize;
    progress(Phase::Program, 0, total);
    while offset < data.len() {
        let a = plan.address + offset as u32;
        let n = ((PAGE_BYTES - a % PAGE_BYTES) as usize).min(data.len() - offset);
        let page = &data[offset..offset + n];
        // An erased page needs no programming.
        if page.iter().any(|&b| b != 0xFF) {
            flash.program_page(a, page)?;
        }
        offset += n;
        progress(Phase::Program, offset as u64, total);
    }
    progress(Phase::Verify, 0, total);
    let mut offset = 0usize;
    while offset < data.len() {
        let n = (VERIFY_CHUNK as usize).min(data.len() - offset);
        let a = plan.address + offset as u32;
        let got = flash.read(a, n)?;
        if let Some(i) = (0..n).find(|&i| got[i] != data[offset + i]) {
            return Err(FlashError::Verify {
                address: a + i as u32,
                wrote: data[offset + i],
                read: got[i],
            });
        }
        offset += n;
        progress(Phase::Verify, offset as u64, total);
    }
    Ok(())
}

/// The identity a simulated card will show after booting `bit`, when its data
/// is an image a simulated card boots (`homa_hw_sim::board::sim_image`); a
/// real bitstream says nothing the board block will show, so `None`.
pub fn sim_image_identity(bit: &BitFile) -> Option<Identity> {
    let data = &bit.data;
    homa_hw_sim::board::sim_image::decode(|i| data.get(i).copied().unwrap_or(0xFF))
        .ok()
        .map(|w| Identity::from_words(&w))
}

/// A `.bit` file a simulated card boots into `id` (for `homa-nic flash
/// --make-sim-image` and tests): a design named `homa_<board>`, the part,
/// and `payload_bytes` of configuration data standing in for the frames.
pub fn sim_bitfile(id: &Identity, payload_bytes: usize) -> BitFile {
    BitFile {
        design: format!("homa_{}", id.board),
        attributes: vec![("UserID".into(), "0XFFFFFFFF".into())],
        part: id.part.clone(),
        date: "1970/01/01".into(),
        time: "00:00:00".into(),
        data: homa_hw_sim::board::sim_image::encode(&id.to_words(), payload_bytes),
    }
}

/// Reads the board block's identity, waiting (sleeping `interval` between
/// tries, up to `tries`) while the card is gone: after a reboot, until the
/// new image answers.
pub fn wait_for_board(
    backend: &dyn Backend,
    tries: u32,
    interval: Duration,
) -> Result<Identity, BoardError> {
    let mut last = BoardError::CardGone;
    for _ in 0..tries {
        match BoardBlock::open(backend).and_then(|b| b.identity()) {
            Ok(id) => return Ok(id),
            Err(e @ BoardError::CardGone) => last = e,
            Err(e) => return Err(e),
        }
        backend.sleep(interval);
    }
    Err(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_refuse_the_golden_region_and_erase_sectors_where_whole() {
        assert!(matches!(
            Plan::at(0, 100),
            Err(FlashError::GoldenRegion { address: 0 })
        ));
        assert!(matches!(
            Plan::at(regmap::FLASH_USER_IMAGE - 0x1000, 0x2000),
            Err(FlashError::GoldenRegion { .. })
        ));
        assert!(matches!(
            Plan::at(regmap::FLASH_USER_IMAGE + 0x10, 1),
            Err(FlashError::Unaligned { .. })
        ));
        assert!(matches!(
            Plan::at(regmap::FLASH_BYTES - 0x1000, 0x1001),
            Err(FlashError::TooBig { .. })
        ));
        // 0x01002000 .. 0x01030001: 14 subsectors to 0x01010000, two
        // sectors, then one subsector for the last byte.
        let p = Plan::at(regmap::FLASH_USER_IMAGE, 0x2_e001).unwrap();
        let subs = p.erase.iter().filter(|e| e.1 == SUBSECTOR_BYTES).count();
        let secs = p.erase.iter().filter(|e| e.1 == SECTOR_BYTES).count();
        assert_eq!((subs, secs), (15, 2));
        assert_eq!(p.erase[14], (0x0101_0000, SECTOR_BYTES));
        assert_eq!(p.erase_bytes(), 0x0103_1000 - 0x0100_2000);
    }
}

//! The board's register block: what card and bitstream this is, and the
//! reboot trigger. It sits in the upper half of the core's 16 MiB CSR window
//! (the core decodes the lower half), on its own: the core's block list does
//! not link to it, because a simulated card has no board. Same conventions as
//! `homa_hw::regmap`: header of type, version, next; 32-bit registers.

/// Base of the board block in the CSR window.
pub const BASE: u32 = 0x80_0000;
/// Type code: "HM" and block number 0x10.
pub const TYPE: u32 = 0x484d_0010;
pub const VERSION: u32 = 0x0001_0000;
/// Board name ("u250"), ASCII, byte 0 in bits 7:0.
pub const BOARD_NAME: u32 = 0x0c;
/// Vivado part, ASCII, NUL-padded, 6 words (24 bytes), byte 0 of each word in bits 7:0.
pub const PART: u32 = 0x10;
pub const PART_WORDS: usize = 6;
/// Build time, seconds since 1970 (UTC), low and high words.
pub const BUILD_TIME_LO: u32 = 0x28;
pub const BUILD_TIME_HI: u32 = 0x2c;
/// Git commit of the source, 20 bytes of SHA-1 in 5 words, byte 0 in bits 7:0 of the first.
pub const GIT_COMMIT: u32 = 0x30;
pub const GIT_COMMIT_WORDS: usize = 5;
/// 1 when the source tree had uncommitted changes.
pub const GIT_DIRTY: u32 = 0x44;
/// Write REBOOT_MAGIC: the FPGA reconfigures from flash (IPROG through
/// ICAPE3). Reads 0.
pub const REBOOT: u32 = 0x48;
pub const REBOOT_MAGIC: u32 = 0x4950_524f; // "IPRO"
/// Bit 0: the MAC's receiver is aligned.
pub const MAC_STATUS: u32 = 0x4c;
/// The configuration flash's SPI port (`homa_firmware::top::flash_spi`):
/// bit 0 selects the chip, bit 1 gives the pins to the card. RW.
pub const FLASH_CONTROL: u32 = 0x50;
/// Write: shift a byte out (bits 7:0). Read: the byte shifted in (7:0), busy (bit 8).
pub const FLASH_DATA: u32 = 0x54;
pub const FLASH_BUSY: u32 = 1 << 8;
/// Registers holding constants, from BOARD_NAME to GIT_DIRTY.
pub const CONSTANT_WORDS: usize = 1 + PART_WORDS + 2 + GIT_COMMIT_WORDS + 1;

/// What a bitstream says about its build.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildInfo {
    pub unix_time: u64,
    pub git_commit: [u8; 20],
    pub git_dirty: bool,
}

/// Packs ASCII into little-endian words, NUL-padded to `words` words.
pub fn ascii_words(s: &str, words: usize) -> Vec<u32> {
    assert!(s.len() <= words * 4, "{s:?} does not fit in {words} words");
    let mut bytes = s.as_bytes().to_vec();
    bytes.resize(words * 4, 0);
    bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// The constant registers' values in address order from BOARD_NAME.
pub fn constant_words(board: &str, part: &str, build: &BuildInfo) -> Vec<u32> {
    let mut w = ascii_words(board, 1);
    w.extend(ascii_words(part, PART_WORDS));
    w.push(build.unix_time as u32);
    w.push((build.unix_time >> 32) as u32);
    w.extend(
        build
            .git_commit
            .chunks(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])),
    );
    w.push(build.git_dirty as u32);
    assert_eq!(w.len(), CONSTANT_WORDS);
    w
}

//! The board's register block: what card and bitstream this is, the reboot
//! trigger and the configuration flash's port. Its addresses are written down
//! once, in `homa_hw::regmap::board` (the driver reads them there too); this
//! module re-exports them and packs a build's identity into the block's ID
//! words, which the RTL (`top::board_regs`) serves.

pub use homa_hw::regmap::board::*;
use rust_hdl::prelude::{bit_cast, Bits, ToBits};

/// Registers holding constants, from BOARD_NAME to GIT_DIRTY.
pub const CONSTANT_WORDS: usize = ID_WORDS;

/// Bits of the ID words as one port value: word i in bits 32i+31:32i.
pub const ID_BITS: usize = 32 * ID_WORDS;

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

/// The ID words as the value of `BoardRegs::id_words`: word i in bits 32i+31:32i.
pub fn id_bits(words: &[u32]) -> Bits<ID_BITS> {
    assert_eq!(
        words.len(),
        ID_WORDS,
        "the board block has {ID_WORDS} ID words"
    );
    words
        .iter()
        .enumerate()
        .fold(Bits::default(), |acc, (i, &w)| {
            acc | (bit_cast::<ID_BITS, 32>(w.to_bits()) << (32 * i) as u64)
        })
}

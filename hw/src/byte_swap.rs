//! Reverses the byte order of a 512-bit beat, combinationally.
//!
//! AXI-Stream puts the first byte on the wire in lane 0 (bits 7:0), so a
//! big-endian header field sits byte-reversed in a beat. After the swap the
//! frame reads as one big-endian number, first byte in bits 511:504, and a
//! field of n bytes at byte offset o is the contiguous slice starting at bit
//! 512 - 8 (o + n). Six stages exchange halves of ever smaller groups (256,
//! 128, ..., 8 bits); with constant masks and shifts it is pure wiring after
//! synthesis.

use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct ByteSwap512 {
    pub beat: Signal<In, Bits<512>>,
    pub swapped: Signal<Out, Bits<512>>,
    stage: [Signal<Local, Bits<512>>; 5],
    /// `mask[k]`: the low half of every group at stage k (256, 128, ..., 8 bits).
    mask: [Constant<Bits<512>>; 6],
}

/// Mask with the low `half` bits of every `2 * half`-bit group set.
fn low_halves(half: usize) -> Bits<512> {
    let mut m = Bits::<512>::default();
    let mut at = 0;
    while at < 512 {
        for bit in at..at + half {
            m = m.replace_bit(bit, true);
        }
        at += 2 * half;
    }
    m
}

impl Default for ByteSwap512 {
    fn default() -> Self {
        Self {
            beat: Default::default(),
            swapped: Default::default(),
            stage: Default::default(),
            mask: [256, 128, 64, 32, 16, 8].map(|half| Constant::new(low_halves(half))),
        }
    }
}

impl Logic for ByteSwap512 {
    #[hdl_gen]
    fn update(&mut self) {
        self.stage[0].next = ((self.beat.val() & self.mask[0].val()) << 256)
            | ((self.beat.val() >> 256) & self.mask[0].val());
        self.stage[1].next = ((self.stage[0].val() & self.mask[1].val()) << 128)
            | ((self.stage[0].val() >> 128) & self.mask[1].val());
        self.stage[2].next = ((self.stage[1].val() & self.mask[2].val()) << 64)
            | ((self.stage[1].val() >> 64) & self.mask[2].val());
        self.stage[3].next = ((self.stage[2].val() & self.mask[3].val()) << 32)
            | ((self.stage[2].val() >> 32) & self.mask[3].val());
        self.stage[4].next = ((self.stage[3].val() & self.mask[4].val()) << 16)
            | ((self.stage[3].val() >> 16) & self.mask[4].val());
        self.swapped.next = ((self.stage[4].val() & self.mask[5].val()) << 8)
            | ((self.stage[4].val() >> 8) & self.mask[5].val());
    }
}

//! Reverses the byte order of a 512-bit beat, combinationally.
//!
//! AXI-Stream puts the first byte on the wire in lane 0 (bits 7:0), so a
//! big-endian header field sits byte-reversed in a beat. After the swap the
//! frame reads as one big-endian number, first byte in bits 511:504, and a
//! field of n bytes at byte offset o is the contiguous slice starting at bit
//! 512 - 8 (o + n).
//!
//! A leaf with hand-written Verilog, like rust-hdl's own DFF: one
//! concatenation of the 64 byte lanes, pure wiring. (Written in RustHDL's
//! subset it took six stages of wide masks and shifts, which synthesis folds
//! away but Verilator evaluates on every cycle: six of these blocks were a
//! good part of the card's simulation time.) `update` is the same swap for
//! RustHDL's own simulator; the cycle-exact equivalence tests hold the two to
//! each other.

use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct ByteSwap512 {
    pub beat: Signal<In, Bits<512>>,
    pub swapped: Signal<Out, Bits<512>>,
}

impl Logic for ByteSwap512 {
    fn update(&mut self) {
        // Word k of the beat, its bytes reversed, becomes word 7 - k.
        let beat = self.beat.val();
        let mut swapped = Bits::<512>::default();
        for word in 0..8 {
            let reversed = beat.get_bits::<64>(64 * word).to_u64().swap_bytes();
            swapped = swapped | (Bits::<512>::from(reversed) << (64 * (7 - word)) as u64);
        }
        self.swapped.next = swapped;
    }

    fn connect(&mut self) {
        self.swapped.connect();
    }

    fn hdl(&self) -> Verilog {
        let lanes: Vec<String> = (0..64)
            .map(|lane| format!("beat[{}:{}]", 8 * lane + 7, 8 * lane))
            .collect();
        Verilog::Custom(format!("always @(*) swapped = {{{}}};\n", lanes.join(", ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rusthdl_simulation_reverses_the_lanes() {
        let mut b = ByteSwap512::default();
        b.connect_all();
        let mut x = Bits::<512>::default();
        for lane in 0..64u64 {
            x = x | (bit_cast::<512, 8>(lane.to_bits()) << (8 * lane));
        }
        b.beat.next = x;
        assert!(simulate(&mut b, 10));
        for lane in 0..64usize {
            assert_eq!(
                b.swapped.val().get_bits::<8>(8 * lane).to_u64(),
                63 - lane as u64
            );
        }
    }

    #[test]
    fn verilog_puts_lane_0_on_top() {
        let Verilog::Custom(v) = ByteSwap512::default().hdl() else {
            panic!("custom Verilog")
        };
        assert!(
            v.starts_with("always @(*) swapped = {beat[7:0], beat[15:8],"),
            "{v}"
        );
        assert!(v.trim_end().ends_with("beat[511:504]};"), "{v}");
    }
}

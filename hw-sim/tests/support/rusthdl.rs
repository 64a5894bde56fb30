//! Helpers for the cycle-exact comparisons of RustHDL's own simulator with
//! Verilator: one clock cycle the way `Sim::tick` makes it, and conversions
//! between RustHDL's wide values and the models' 32-bit words.

use rust_hdl::prelude::*;

/// One clock cycle of RustHDL's simulation of `$uut` (a block with a `clock`
/// input), as `Sim::tick` makes one: the new inputs settle, then the rising
/// edge, then the falling edge.
#[allow(unused_macros)] // each test binary uses a different part of support
macro_rules! rtl_tick {
    ($uut:expr) => {{
        let uut = &mut $uut;
        assert!(
            rust_hdl::prelude::simulate(uut, 100),
            "RustHDL logic did not converge"
        );
        uut.clock.next = true.into();
        assert!(
            rust_hdl::prelude::simulate(uut, 100),
            "RustHDL logic did not converge"
        );
        uut.clock.next = false.into();
        assert!(
            rust_hdl::prelude::simulate(uut, 100),
            "RustHDL logic did not converge"
        );
    }};
}
#[allow(unused_imports)]
pub(crate) use rtl_tick;

/// 32-bit words as the models' ports take them (word 0 = bits 31:0) to a RustHDL value.
pub fn bits_from_words<const N: usize>(words: &[u32]) -> Bits<N> {
    words.iter().rev().fold(Bits::<N>::default(), |acc, &w| {
        (acc << 32) | Bits::<N>::from(w as u64)
    })
}

/// A RustHDL value as 32-bit words, word 0 = bits 31:0.
pub fn words_from_bits<const N: usize, const W: usize>(x: Bits<N>) -> [u32; W] {
    std::array::from_fn(|i| x.get_bits::<32>(32 * i).to_u32())
}

//! The board level of the Homa NIC on AMD Alveo cards (U50, U55C, U200, U250,
//! U280; facts in design/BOARDS.md).
//!
//! Owns: the per-board top level around the core (PCIe DMA shell, 100G MACs
//! and their clock-domain crossings), constraints, the Vivado non-project build
//! scripts, and the flash images (.bit/.mcs) and how to write them.
//!
//! Must not know about: Homa's protocol (that is the core in `homa-hw`, used
//! here as a black box with the ports ARCHITECTURE.md lists).

pub mod board;
pub mod cdc;
pub mod lint;
pub mod regmap;
pub mod top;
pub mod vivado;

use cdc::axis_async_fifo::{AxisAsyncFifo, FullPolicy, PointerCode, Visibility};
use homa_hw::Design;

/// Address bits of the clock-crossing FIFOs the testbench drives: 16 beats,
/// small so that full, drop and wrap happen often.
pub const TEST_FIFO_ADDR_BITS: usize = 4;

/// The board-level designs hw-sim builds Verilator models of: the crossing
/// FIFO in both full policies, and two variants: binary counts crossing, and
/// the broken cut-through one the testbench proves fails; and the board logic
/// a simulated card carries (register block, flash port, IPROG sender).
pub fn designs() -> Vec<Design> {
    vec![
        Design::generate("board_sim", top::board_sim::BoardSim::default()),
        Design::generate(
            "cdc_fifo_drop",
            AxisAsyncFifo::<4, 5>::new(PointerCode::Gray, FullPolicy::DropWhenFull),
        ),
        Design::generate(
            "cdc_fifo_bp",
            AxisAsyncFifo::<4, 5>::new(PointerCode::Gray, FullPolicy::BackPressure),
        ),
        Design::generate(
            "cdc_fifo_binary",
            AxisAsyncFifo::<4, 5>::new(PointerCode::Binary, FullPolicy::BackPressure),
        ),
        Design::generate(
            "cdc_fifo_cut_through",
            AxisAsyncFifo::<4, 5>::variant(
                PointerCode::Gray,
                FullPolicy::DropWhenFull,
                Visibility::EveryBeat,
            ),
        ),
    ]
}

/// The Verilog of `board`'s top level, top module `homa_<board>` (e.g.
/// `homa_u250`). The vendor modules it instantiates are not included: Vivado
/// has them, and firmware/standins/ has stand-ins for Verilator.
pub fn board_design(board: &board::Board, build: &regmap::BuildInfo) -> Design {
    let name: &'static str = Box::leak(format!("homa_{}", board.name).into_boxed_str());
    if board.hbm {
        Design::generate(name, top::alveo::AlveoHbmTop::new(board, build))
    } else {
        Design::generate(name, top::alveo::AlveoDdrTop::new(board, build))
    }
}

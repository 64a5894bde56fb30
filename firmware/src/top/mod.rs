//! The board top levels and what they are built from.

pub mod alveo;
pub mod board_logic;
pub mod board_regs;
pub mod board_sim;
pub mod flash_spi;
pub mod iprog;
pub mod reset_bridge;
pub mod vendor;

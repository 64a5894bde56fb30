//! Writes the Verilog of one board-level block to stdout, for yosys:
//! `cargo run -p homa-firmware --example block_verilog -- cdc_fifo > b.v`
//! (blocks: cdc_fifo (512 beats, as on the board), board_regs (its ID words a
//! port, where a board ties them to constants), iprog, reset_bridge).

use homa_firmware::cdc::axis_async_fifo::{AxisAsyncFifo, FullPolicy, PointerCode};
use homa_firmware::top::{board_regs::BoardRegs, iprog::Iprog, reset_bridge::ResetBridge};
use homa_hw::Design;

fn main() {
    let which = std::env::args().nth(1).unwrap_or_else(|| "cdc_fifo".into());
    let d = match which.as_str() {
        "cdc_fifo" => Design::generate(
            "cdc_fifo",
            AxisAsyncFifo::<9, 10>::new(PointerCode::Gray, FullPolicy::DropWhenFull),
        ),
        "board_regs" => Design::generate("board_regs", BoardRegs::default()),
        "iprog" => Design::generate("iprog", Iprog::default()),
        "reset_bridge" => Design::generate("reset_bridge", ResetBridge::default()),
        other => {
            eprintln!("unknown block {other}: cdc_fifo, board_regs, iprog or reset_bridge");
            std::process::exit(1);
        }
    };
    print!("{}", d.verilog);
}

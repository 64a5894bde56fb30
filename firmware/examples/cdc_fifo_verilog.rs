//! Writes the Verilog of the board's crossing FIFO (512 beats, the size the
//! board uses) to stdout, for yosys: `cargo run -p homa-firmware --example
//! cdc_fifo_verilog > fifo.v`.

use homa_firmware::cdc::axis_async_fifo::{AxisAsyncFifo, FullPolicy, PointerCode};
use homa_hw::Design;

fn main() {
    let d = Design::generate(
        "cdc_fifo",
        AxisAsyncFifo::<9, 10>::new(PointerCode::Gray, FullPolicy::DropWhenFull),
    );
    print!("{}", d.verilog);
}

//! One module per subcommand.

pub mod decode;
pub mod demo;
pub mod info;
pub mod sample_capture;
pub mod sim;
pub mod verilog;

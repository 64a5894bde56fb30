//! One module per subcommand.

pub mod config;
pub mod decode;
pub mod demo;
pub mod flash;
pub mod fuzz;
pub mod info;
pub mod rpc;
pub mod sample_capture;
pub mod server;
pub mod setup;
pub mod sim;
pub mod sim_rtl;
pub mod synth;
pub mod verilog;
pub mod wire;

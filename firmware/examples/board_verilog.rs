//! Writes a board's build directory: `cargo run -p homa-firmware --example
//! board_verilog -- u250 DIR` (the same as `homa-bitstream --no-vivado`).
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let b = homa_firmware::board::board(&args[1]).expect("board");
    let build = homa_firmware::regmap::BuildInfo {
        unix_time: 0,
        git_commit: [0; 20],
        git_dirty: false,
    };
    homa_firmware::vivado::write_build_dir(&b, &build, std::path::Path::new(&args[2])).unwrap();
}

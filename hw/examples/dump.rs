fn main() {
    for d in homa_hw::designs() {
        std::fs::write(format!("/tmp/{}.v", d.name), d.verilog).unwrap();
    }
}

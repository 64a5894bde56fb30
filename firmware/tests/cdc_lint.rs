//! The crossing FIFO's Verilog passes `verilator --lint-only -Wall`.

#[test]
fn crossing_fifos_lint_clean() {
    let dir = tempfile::tempdir().unwrap();
    let waivers = concat!(env!("CARGO_MANIFEST_DIR"), "/../hw/verilator.vlt");
    for design in homa_firmware::designs() {
        let path = dir.path().join(format!("{}.v", design.name));
        std::fs::write(&path, &design.verilog).unwrap();
        let out = std::process::Command::new("verilator")
            .args(["--lint-only", "-Wall", "--top-module", design.name])
            .arg(waivers)
            .arg(&path)
            .output()
            .expect("verilator (make deps installs it)");
        assert!(
            out.status.success(),
            "{} fails lint:\n{}",
            design.name,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

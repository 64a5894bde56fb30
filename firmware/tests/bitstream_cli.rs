//! `homa-bitstream` (what `make -C firmware bitstream` runs) without Vivado:
//! the build files are written, and it exits non-zero with one line naming
//! what is missing. A wrong board name is refused with the list of boards.

use std::process::Command;

fn run(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_homa-bitstream"))
        .args(args)
        // A PATH with git but no Vivado (/usr/bin, /bin never hold it).
        .env("PATH", "/usr/bin:/bin")
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn without_vivado_it_writes_the_files_and_says_so_in_one_line() {
    assert!(
        !std::path::Path::new("/usr/bin/vivado").exists()
            && !std::path::Path::new("/bin/vivado").exists(),
        "this test needs a machine without Vivado in /usr/bin"
    );
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("u280");
    let (code, stderr) = run(&["--board", "u280", "--out", out.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].contains("Vivado is not on PATH") && lines[0].contains("xcu280"),
        "{stderr}"
    );
    for f in ["homa_u280.v", "homa_u280.xdc", "ip.tcl", "build.tcl"] {
        assert!(out.join(f).exists(), "{f} not written");
    }
}

#[test]
fn an_unknown_board_is_refused_with_the_list() {
    let (code, stderr) = run(&["--board", "u45n", "--no-vivado"]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("unknown board \"u45n\": use one of u50, u55c, u200, u250, u280"),
        "{stderr}"
    );
}

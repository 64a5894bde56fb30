//! The C ABI: the committed header matches what cbindgen makes of
//! `src/ffi.rs`, and a C program using it (tests/c/echo.c) compiles against
//! it, links with the static library, and echoes messages over two simulated
//! cards.

use std::path::{Path, PathBuf};
use std::process::Command;

fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn generated_header() -> String {
    let config = cbindgen::Config::from_file(crate_dir().join("cbindgen.toml")).unwrap();
    let mut out = Vec::new();
    cbindgen::Builder::new()
        .with_config(config)
        .with_src(crate_dir().join("src/ffi.rs"))
        .generate()
        .expect("cbindgen")
        .write(&mut out);
    String::from_utf8(out).unwrap()
}

#[test]
fn the_committed_header_is_current() {
    let path = crate_dir().join("include/homa_nic.h");
    let generated = generated_header();
    if std::env::var_os("HOMA_UPDATE_HEADER").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{} is stale: run HOMA_UPDATE_HEADER=1 cargo test -p homa-host --test c_abi",
        path.display()
    );
    for name in [
        "homa_send_request",
        "homa_try_recv_request",
        "HomaPeer",
        "HOMA_ERR_RING_FULL",
    ] {
        assert!(generated.contains(name), "{name} missing from the header");
    }
}

/// `target/<profile>`: this test binary is in its `deps/`.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().to_path_buf()
}

#[test]
fn a_c_program_echoes_over_two_simulated_cards() {
    let gcc = Path::new("/usr/bin/gcc");
    if !gcc.exists() && Command::new("gcc").arg("--version").output().is_err() {
        eprintln!("no gcc: C ABI program not built");
        return;
    }
    // Cargo builds the staticlib beside this test, in deps/ with a hash:
    // the newest is the one built with this test.
    let deps = profile_dir().join("deps");
    let lib = std::fs::read_dir(&deps)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with("libhoma_host-") && name.ends_with(".a")
        })
        .max_by_key(|p| p.metadata().and_then(|m| m.modified()).ok())
        .unwrap_or_else(|| panic!("no libhoma_host-*.a in {}", deps.display()));
    let exe = profile_dir().join("homa_c_echo");
    let status = Command::new("gcc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&exe)
        .arg(crate_dir().join("tests/c/echo.c"))
        .arg("-I")
        .arg(crate_dir().join("include"))
        .arg(&lib)
        .args(["-lstdc++", "-lpthread", "-ldl", "-lm"])
        .status()
        .unwrap();
    assert!(status.success(), "gcc failed");
    let out = Command::new(&exe).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    eprintln!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "the C echo failed");
    assert_eq!(stdout.matches(" ok at cycle ").count(), 4, "four echoes");
}

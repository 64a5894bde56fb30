//! `verilator --lint-only -Wall` of a board's top level against the vendor
//! stand-ins (firmware/standins/vendor.v): the check CI runs on every board in
//! place of Vivado.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The stand-in modules, compiled in.
pub const STANDINS: &str = include_str!("../standins/vendor.v");
/// The project's Verilator waivers (RustHDL's output patterns).
pub const WAIVERS: &str = include_str!("../../hw/verilator.vlt");

#[derive(Debug, thiserror::Error)]
pub enum LintError {
    #[error("cannot write {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("verilator not found ({0}): run `make deps` or `sudo apt-get install -y verilator`")]
    NoVerilator(std::io::Error),
    #[error("{top} fails `verilator --lint-only -Wall`:\n{log}")]
    Failed { top: String, log: String },
}

/// Writes `verilog` (top module `top`), the stand-ins and the waivers into
/// `dir` and lints them.
pub fn lint(dir: &Path, top: &str, verilog: &str) -> Result<(), LintError> {
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|source| LintError::Io { path, source })
    };
    write(&format!("{top}.v"), verilog)?;
    write("vendor_standins.v", STANDINS)?;
    write("verilator.vlt", WAIVERS)?;
    let out = Command::new("verilator")
        .current_dir(dir)
        .args(["--lint-only", "-Wall", "--top-module", top, "verilator.vlt"])
        .arg(format!("{top}.v"))
        .arg("vendor_standins.v")
        .output()
        .map_err(LintError::NoVerilator)?;
    if !out.status.success() {
        return Err(LintError::Failed {
            top: top.to_string(),
            log: String::from_utf8_lossy(&out.stderr).into_owned(),
        });
    }
    Ok(())
}

/// Waivers for the vendor wrappers linted on their own: no WIDTH waiver, so
/// a port width that differs from the stand-in's (the product guide's) fails.
const WRAPPER_WAIVERS: &str =
    "`verilator_config\nlint_off -rule DECLFILENAME\nlint_off -rule UNUSEDSIGNAL\n";

/// The vendor wrappers (`crate::top::vendor`) alone, top module = name.
pub fn vendor_wrappers(board: &crate::board::Board) -> Vec<homa_hw::Design> {
    use crate::top::vendor::{CmacBlock, ConfigAccess, InitClock, PcieBlock};
    use homa_hw::Design;
    vec![
        Design::generate("wrap_pcie", PcieBlock::default()),
        Design::generate("wrap_cmac", CmacBlock::default()),
        Design::generate("wrap_init_clock", InitClock::new(board)),
        Design::generate("wrap_config", ConfigAccess::default()),
    ]
}

/// Lints one wrapper's Verilog against the stand-ins with every width check on.
pub fn lint_wrapper(dir: &Path, top: &str, verilog: &str) -> Result<(), LintError> {
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|source| LintError::Io { path, source })
    };
    write(&format!("{top}.v"), verilog)?;
    write("vendor_standins.v", STANDINS)?;
    write("wrappers.vlt", WRAPPER_WAIVERS)?;
    let out = Command::new("verilator")
        .current_dir(dir)
        .args(["--lint-only", "-Wall", "--top-module", top, "wrappers.vlt"])
        .arg(format!("{top}.v"))
        .arg("vendor_standins.v")
        .output()
        .map_err(LintError::NoVerilator)?;
    if !out.status.success() {
        return Err(LintError::Failed {
            top: top.to_string(),
            log: String::from_utf8_lossy(&out.stderr).into_owned(),
        });
    }
    Ok(())
}

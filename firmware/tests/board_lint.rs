//! Every board's top level lints clean against the vendor stand-ins, and the
//! lint is a real check: a top level with a misspelt vendor port fails it.

use homa_firmware::board::boards;
use homa_firmware::regmap::BuildInfo;

fn build() -> BuildInfo {
    BuildInfo {
        unix_time: 1_700_000_000,
        git_commit: [0xab; 20],
        git_dirty: false,
    }
}

/// Each board on its own thread: a board's Verilog and its lint take seconds.
#[test]
fn every_board_top_level_lints_clean() {
    std::thread::scope(|s| {
        for board in boards() {
            s.spawn(move || {
                let design = homa_firmware::board_design(&board, &build());
                let dir = tempfile::tempdir().unwrap();
                homa_firmware::lint::lint(dir.path(), design.name, &design.verilog)
                    .unwrap_or_else(|e| panic!("{}: {e}", board.name));
            });
        }
    });
}

#[test]
fn a_misspelt_vendor_port_fails_the_lint() {
    let board = homa_firmware::board::board("u250").unwrap();
    let design = homa_firmware::board_design(&board, &build());
    let broken = design
        .verilog
        .replacen(".stat_rx_aligned(", ".stat_rx_align(", 1);
    assert_ne!(broken, design.verilog);
    let dir = tempfile::tempdir().unwrap();
    let err = homa_firmware::lint::lint(dir.path(), design.name, &broken).unwrap_err();
    assert!(err.to_string().contains("stat_rx_align"), "{err}");
}

#[test]
fn vendor_wrappers_match_the_stand_ins_bit_for_bit() {
    for board in boards() {
        for w in homa_firmware::lint::vendor_wrappers(&board) {
            let dir = tempfile::tempdir().unwrap();
            homa_firmware::lint::lint_wrapper(dir.path(), w.name, &w.verilog)
                .unwrap_or_else(|e| panic!("{}: {e}", board.name));
        }
    }
}

#[test]
fn a_wrong_vendor_port_width_fails_the_wrapper_lint() {
    // The 512-bit interface's RQ tuser is 137 bits (PG213).
    let board = homa_firmware::board::board("u250").unwrap();
    let pcie = homa_firmware::lint::vendor_wrappers(&board).remove(0);
    let broken = pcie
        .verilog
        .replacen("[136:0] rq_tuser", "[135:0] rq_tuser", 1);
    assert_ne!(
        broken, pcie.verilog,
        "the PCIe wrapper's rq_tuser declaration moved"
    );
    let dir = tempfile::tempdir().unwrap();
    let err = homa_firmware::lint::lint_wrapper(dir.path(), pcie.name, &broken).unwrap_err();
    assert!(err.to_string().contains("WIDTH"), "{err}");
}

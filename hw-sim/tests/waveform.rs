//! A waveform is the same whichever way the clock edges are evaluated: the
//! fast path (`Model::rise`, which skips Verilator's input-combinational
//! pass and shows the low clock phase without evaluating it) writes the
//! same VCD, value for value and time for time, as the plain way. And the
//! waveform a failing test gets, written after the fact from the inputs
//! `Sim` saved (`Sim::traced_on_failure`), is the one tracing all along writes.

use homa_hw::regmap::scratch;
use homa_hw_sim::{HomaCore, Sim};

/// A few CSR writes and reads and idle cycles.
fn exercise(sim: &mut Sim<HomaCore>) {
    sim.reset(4);
    let addr = scratch::BASE + scratch::SCRATCH;
    for value in [0x1234_5678, 0xdead_beef, 0] {
        sim.csr_write(addr, value);
        assert_eq!(sim.csr_read(addr).unwrap(), value);
        for _ in 0..5 {
            sim.tick();
        }
    }
    // An input left changed after the last edge shows in the VCD's end.
    sim.set_csr_addr(addr);
}

/// The VCD's value changes (everything after its header, which holds the date).
fn value_changes(path: &std::path::Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let body = text.find("$enddefinitions").expect("a VCD header");
    text[body..].to_string()
}

/// The waveform of `exercise`, traced as it runs.
fn trace(reference_edges: bool, path: &std::path::Path) -> String {
    let mut sim: Sim<HomaCore> = Sim::new("waveform");
    sim.set_reference_edges(reference_edges);
    sim.trace_to(path).unwrap();
    exercise(&mut sim);
    drop(sim);
    value_changes(path)
}

#[test]
fn fast_edges_write_the_same_waveform() {
    let dir = tempfile::tempdir().unwrap();
    let fast = trace(false, &dir.path().join("fast.vcd"));
    let reference = trace(true, &dir.path().join("reference.vcd"));
    assert!(fast.lines().count() > 50, "the trace has value changes");
    assert!(fast == reference, "the waveforms differ");
}

#[test]
fn a_failing_simulation_gets_the_waveform_tracing_would_have_written() {
    let dir = tempfile::tempdir().unwrap();
    let traced = trace(false, &dir.path().join("traced.vcd"));
    let mut path = None;
    let failed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut sim: Sim<HomaCore> = Sim::traced_on_failure("waveform_replayed");
        path = sim.trace_path().map(|p| p.to_path_buf());
        exercise(&mut sim);
        panic!("failing on purpose, to get the waveform");
    }));
    assert!(failed.is_err());
    let path = path.expect("a path for the waveform");
    let replayed = value_changes(&path);
    std::fs::remove_file(&path).unwrap();
    assert!(
        replayed.lines().count() > 50,
        "the waveform has value changes"
    );
    assert!(
        replayed == traced,
        "the replayed waveform differs from the traced one"
    );
}

#[test]
fn a_passing_simulation_leaves_no_waveform() {
    let mut sim: Sim<HomaCore> = Sim::traced_on_failure("waveform_passing");
    let path = sim.trace_path().unwrap().to_path_buf();
    let _ = std::fs::remove_file(&path);
    exercise(&mut sim);
    drop(sim);
    assert!(
        !path.exists(),
        "{} written for a passing run",
        path.display()
    );
}

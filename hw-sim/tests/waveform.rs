//! A waveform is the same whichever way the clock edges are evaluated: the
//! fast path (`Model::rise`, which skips Verilator's input-combinational
//! pass and shows the low clock phase without evaluating it) writes the
//! same VCD, value for value and time for time, as the plain way.

use homa_hw::regmap::scratch;
use homa_hw_sim::{HomaCore, Sim};

/// The VCD's value changes (everything after its header, which holds the date).
fn trace(reference_edges: bool, path: &std::path::Path) -> String {
    let mut sim: Sim<HomaCore> = Sim::new("waveform");
    sim.set_reference_edges(reference_edges);
    sim.trace_to(path, false).unwrap();
    sim.reset(4);
    let addr = scratch::BASE + scratch::SCRATCH;
    for value in [0x1234_5678, 0xdead_beef, 0] {
        sim.csr_write(addr, value);
        assert_eq!(sim.csr_read(addr).unwrap(), value);
        for _ in 0..5 {
            sim.tick();
        }
    }
    drop(sim);
    let text = std::fs::read_to_string(path).unwrap();
    let body = text.find("$enddefinitions").expect("a VCD header");
    text[body..].to_string()
}

#[test]
fn fast_edges_write_the_same_waveform() {
    let dir = tempfile::tempdir().unwrap();
    let fast = trace(false, &dir.path().join("fast.vcd"));
    let reference = trace(true, &dir.path().join("reference.vcd"));
    assert!(fast.lines().count() > 50, "the trace has value changes");
    assert!(fast == reference, "the waveforms differ");
}

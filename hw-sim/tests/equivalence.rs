//! RustHDL's own simulation of a block against the Verilator model of its
//! generated Verilog, cycle by cycle, on the same random stimulus.
//!
//! This is the guard behind the WIDTH lint waiver (hw/verilator.vlt): RustHDL
//! computes at the declared width of each signal, Verilog at the width of the
//! widest operand, and the two only meet if the Verilog is written with care
//! (RUSTHDL.md's `bit_cast(a + b)` case). Any such difference in a block shows
//! up here as a mismatch on an output. RustHDL's simulator is ~100x slower than
//! Verilator, so the runs are short.

mod support;

use homa_hw::rx::parser::RxParser as RxParserRtl;
use homa_hw_sim::axis::{frame_to_beats, Beat};
use homa_hw_sim::{RxParser, Sim};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;
use support::random_wire_frame;
use support::rusthdl::{bits_from_words, rtl_tick, words_from_bits};

/// Every output of the parser, as both simulators report it.
#[derive(Debug, PartialEq)]
struct Outputs {
    valid: bool,
    reason: u64,
    frame_len: u64,
    window: [u32; 32],
    fields: [u64; 15],
}

fn rtl_outputs(p: &RxParserRtl) -> Outputs {
    Outputs {
        valid: p.m_meta_valid.val(),
        reason: p.m_meta_reason.val().to_u64(),
        frame_len: p.m_meta_frame_len.val().to_u64(),
        window: words_from_bits(p.m_meta_window.val()),
        fields: [
            p.m_meta_type.val().to_u64(),
            p.m_meta_src_mac.val().to_u64(),
            p.m_meta_src_ip.val().to_u64(),
            p.m_meta_dst_ip.val().to_u64(),
            p.m_meta_priority.val().to_u64(),
            p.m_meta_sport.val().to_u64(),
            p.m_meta_dport.val().to_u64(),
            p.m_meta_sender_id.val().to_u64(),
            p.m_meta_message_length.val().to_u64(),
            p.m_meta_payload_offset.val().to_u64(),
            p.m_meta_payload_len.val().to_u64(),
            p.m_meta_offset.val().to_u64(),
            p.m_meta_length.val().to_u64(),
            p.m_meta_ctl_priority.val().to_u64(),
            p.s_axis_tready.val() as u64,
        ],
    }
}

fn verilator_outputs(s: &Sim<RxParser>) -> Outputs {
    Outputs {
        valid: s.m_meta_valid(),
        reason: s.m_meta_reason() as u64,
        frame_len: s.m_meta_frame_len() as u64,
        window: s.m_meta_window(),
        fields: [
            s.m_meta_type() as u64,
            s.m_meta_src_mac(),
            s.m_meta_src_ip() as u64,
            s.m_meta_dst_ip() as u64,
            s.m_meta_priority() as u64,
            s.m_meta_sport() as u64,
            s.m_meta_dport() as u64,
            s.m_meta_sender_id(),
            s.m_meta_message_length() as u64,
            s.m_meta_payload_offset() as u64,
            s.m_meta_payload_len() as u64,
            s.m_meta_offset() as u64,
            s.m_meta_length() as u64,
            s.m_meta_ctl_priority() as u64,
            s.s_axis_tready() as u64,
        ],
    }
}

#[test]
fn rx_parser_rusthdl_and_verilator_agree_cycle_by_cycle() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut rtl = RxParserRtl::default();
    rtl.connect_all();
    let mut sim: Sim<RxParser> = Sim::traced_on_failure("equivalence_rx_parser");

    // Reset both, then stream frames with idle gaps.
    let mut stimulus: Vec<Option<Beat>> = Vec::new();
    for _ in 0..60 {
        let frame = random_wire_frame(&mut rng);
        if frame.is_empty() {
            continue;
        }
        for beat in frame_to_beats(&frame, rng.gen()) {
            if rng.gen_bool(0.15) {
                stimulus.push(None);
            }
            stimulus.push(Some(beat));
        }
    }
    stimulus.extend([None, None, None]);

    rtl.reset.next = true;
    sim.set_reset(true);
    rtl_tick!(rtl);
    sim.tick();
    rtl.reset.next = false;
    sim.set_reset(false);

    let mut verdicts = 0;
    for (cycle, beat) in stimulus.iter().enumerate() {
        let (data, keep, last, valid) = match beat {
            Some(b) => (b.clone(), b.keep, b.last, true),
            None => (
                Beat {
                    data: [0x5a; 64],
                    keep: 0,
                    last: false,
                },
                0,
                false,
                false,
            ),
        };
        rtl.s_axis_tdata.next = bits_from_words(&data.words());
        rtl.s_axis_tkeep.next = keep.to_bits();
        rtl.s_axis_tlast.next = last;
        rtl.s_axis_tvalid.next = valid;
        sim.set_s_axis_tdata(&data.words());
        sim.set_s_axis_tkeep(keep);
        sim.set_s_axis_tlast(last);
        sim.set_s_axis_tvalid(valid);
        rtl_tick!(rtl);
        sim.tick();
        let (a, b) = (rtl_outputs(&rtl), verilator_outputs(&sim));
        assert_eq!(
            a, b,
            "cycle {cycle}: RustHDL (left) and Verilator (right) differ"
        );
        verdicts += a.valid as usize;
    }
    assert!(verdicts >= 50, "only {verdicts} verdicts compared");
}

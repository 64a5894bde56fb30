//! Block testbench of the RX parser: random frames, valid and broken in every
//! way the decoder knows, streamed through the Verilator model; each verdict
//! and every extracted field is compared with `homa_wire::Frame::decode`.

mod support;

use std::collections::BTreeMap;

use homa_hw::rx::parser::RxVerdict;
use homa_hw_sim::axis::{frame_to_beats, Beat};
use homa_hw_sim::{RxParser, Sim};
use homa_wire::{Body, Frame};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use support::{expected_verdict, random_frame, random_wire_frame};

/// One `m_meta_*` record as the model produced it.
#[derive(Debug)]
struct Meta {
    reason: u8,
    frame_len: u16,
    packet_type: u8,
    src_mac: u64,
    src_ip: u32,
    dst_ip: u32,
    priority: u8,
    sport: u16,
    dport: u16,
    sender_id: u64,
    message_length: u32,
    payload_offset: u32,
    payload_len: u16,
    offset: u32,
    length: u32,
    ctl_priority: u8,
}

fn read_meta(sim: &Sim<RxParser>) -> Meta {
    Meta {
        reason: sim.m_meta_reason(),
        frame_len: sim.m_meta_frame_len(),
        packet_type: sim.m_meta_type(),
        src_mac: sim.m_meta_src_mac(),
        src_ip: sim.m_meta_src_ip(),
        dst_ip: sim.m_meta_dst_ip(),
        priority: sim.m_meta_priority(),
        sport: sim.m_meta_sport(),
        dport: sim.m_meta_dport(),
        sender_id: sim.m_meta_sender_id(),
        message_length: sim.m_meta_message_length(),
        payload_offset: sim.m_meta_payload_offset(),
        payload_len: sim.m_meta_payload_len(),
        offset: sim.m_meta_offset(),
        length: sim.m_meta_length(),
        ctl_priority: sim.m_meta_ctl_priority(),
    }
}

/// Compares an accepted frame's fields with the decoder's view of it.
fn check_fields(m: &Meta, bytes: &[u8]) -> Result<(), String> {
    let f = Frame::decode(bytes).unwrap();
    let c = &f.homa.common;
    let mac = f.eth.src.0.iter().fold(0u64, |a, &b| (a << 8) | b as u64);
    let mut diffs = Vec::new();
    let mut check = |name: &str, got: u64, want: u64| {
        if got != want {
            diffs.push(format!("{name}: card {got:#x}, decoder {want:#x}"));
        }
    };
    check("type", m.packet_type as u64, f.homa.packet_type() as u64);
    check("src_mac", m.src_mac, mac);
    check("src_ip", m.src_ip as u64, u32::from(f.ip.src) as u64);
    check("dst_ip", m.dst_ip as u64, u32::from(f.ip.dst) as u64);
    check("priority", m.priority as u64, f.ip.priority() as u64);
    check("sport", m.sport as u64, c.sport as u64);
    check("dport", m.dport as u64, c.dport as u64);
    check("sender_id", m.sender_id, c.sender_id);
    match &f.homa.body {
        Body::Data(d) => {
            check(
                "message_length",
                m.message_length as u64,
                d.message_length as u64,
            );
            check(
                "payload_offset",
                m.payload_offset as u64,
                d.payload_offset(c) as u64,
            );
            check("payload_len", m.payload_len as u64, d.payload.len() as u64);
        }
        Body::Grant(g) => {
            check("offset", m.offset as u64, g.offset as u64);
            check("ctl_priority", m.ctl_priority as u64, g.priority as u64);
        }
        Body::Resend(r) => {
            check("offset", m.offset as u64, r.offset as u64);
            check("length", m.length as u64, r.length as u64);
            check("ctl_priority", m.ctl_priority as u64, r.priority as u64);
        }
        _ => {}
    }
    if diffs.is_empty() {
        Ok(())
    } else {
        Err(diffs.join("; "))
    }
}

/// Streams `frames` through the parser, with random idle cycles between beats
/// when `gaps`, and returns each verdict record with the cycle it appeared.
fn run(
    sim: &mut Sim<RxParser>,
    frames: &[Vec<u8>],
    rng: &mut ChaCha8Rng,
    gaps: bool,
) -> Vec<(u64, Meta)> {
    let mut out = Vec::new();
    let mut step = |sim: &mut Sim<RxParser>, beat: Option<&Beat>| {
        match beat {
            Some(b) => {
                sim.set_s_axis_tdata(&b.words());
                sim.set_s_axis_tkeep(b.keep);
                sim.set_s_axis_tlast(b.last);
                sim.set_s_axis_tvalid(true);
            }
            None => {
                sim.set_s_axis_tvalid(false);
                sim.set_s_axis_tdata(&[0xdead_beef; 16]);
            }
        }
        sim.tick();
        assert!(sim.s_axis_tready());
        if sim.m_meta_valid() {
            out.push((sim.cycle(), read_meta(sim)));
        }
    };
    for frame in frames {
        for beat in frame_to_beats(frame, 0xa5) {
            while gaps && rng.gen_bool(0.2) {
                step(sim, None);
            }
            step(sim, Some(&beat));
        }
    }
    for _ in 0..4 {
        step(sim, None);
    }
    out
}

#[test]
fn verdicts_and_fields_match_the_decoder_on_random_frames() {
    let mut coverage: BTreeMap<RxVerdict, usize> = BTreeMap::new();
    for seed in 0..3u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut sim: Sim<RxParser> = Sim::traced_on_failure(&format!("rx_parser_seed{seed}"));
        sim.set_reset(true);
        sim.tick();
        sim.set_reset(false);
        // Empty frames are not a thing on the wire; at least one byte.
        let frames: Vec<Vec<u8>> = (0..1500)
            .map(|_| random_wire_frame(&mut rng))
            .filter(|f| !f.is_empty())
            .collect();
        let metas = run(&mut sim, &frames, &mut rng, seed % 2 == 1);
        assert_eq!(
            metas.len(),
            frames.len(),
            "seed {seed}: one verdict per frame"
        );
        for (i, ((cycle, m), bytes)) in metas.iter().zip(&frames).enumerate() {
            let want = expected_verdict(bytes);
            let got = RxVerdict::from_code(m.reason);
            let context = || {
                format!(
                    "seed {seed}, frame {i} ({} bytes), verdict at cycle {cycle}: {:02x?}",
                    bytes.len(),
                    &bytes[..bytes.len().min(96)]
                )
            };
            assert_eq!(
                got,
                Some(want),
                "verdict differs; decoder says {:?}; {}",
                Frame::decode(bytes).err(),
                context()
            );
            assert_eq!(
                m.frame_len as usize,
                bytes.len(),
                "frame length; {}",
                context()
            );
            if want == RxVerdict::Accept {
                if let Err(diff) = check_fields(m, bytes) {
                    panic!("fields differ: {diff}; {}", context());
                }
            }
            *coverage.entry(want).or_default() += 1;
        }
    }
    // The stimulus must reach every verdict, or the comparison proves little.
    for v in RxVerdict::ALL {
        assert!(
            coverage.get(&v).copied().unwrap_or(0) > 0,
            "no frame got verdict {v:?}: {coverage:?}"
        );
    }
}

#[test]
fn back_to_back_minimum_frames_each_get_a_verdict_three_cycles_later() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut sim: Sim<RxParser> = Sim::traced_on_failure("rx_parser_back_to_back");
    sim.set_reset(true);
    sim.tick();
    sim.set_reset(false);
    let start = sim.cycle();
    // Single-beat frames (control packets are 62 bytes), one per cycle.
    let frames: Vec<Vec<u8>> = (0..50)
        .map(|_| loop {
            let f = random_frame(&mut rng).encode().unwrap();
            if f.len() <= 64 {
                break f;
            }
        })
        .collect();
    let metas = run(&mut sim, &frames, &mut rng, false);
    assert_eq!(metas.len(), frames.len());
    for (i, (cycle, m)) in metas.iter().enumerate() {
        // Frame i's beat is clocked in by edge start+i+1; the checks are
        // registered at edge start+i+2, and the verdict is visible after
        // edge start+i+3.
        assert_eq!(*cycle, start + i as u64 + 3, "frame {i}");
        assert_eq!(m.reason, 0, "frame {i}");
    }
}

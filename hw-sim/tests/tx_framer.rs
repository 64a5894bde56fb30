//! Block testbench of the TX framer: random packets of every type, encoded by
//! `homa_wire`, split the way the TX header builder and the DMA engine hand
//! them over (header beat 0 = bytes 0..63, header beat 1 = bytes 64..header_len
//! zero-padded, payload beats packed from lane 0), pushed through the
//! Verilator model with random gaps on both inputs and random back-pressure
//! on the output. The frames on the TX stream must be the encoded frames,
//! byte for byte, in order; `tkeep` must cover exactly the frame, and a beat
//! offered to a stalled MAC must stay put until taken. Then a cycle-exact
//! comparison of RustHDL's simulation with Verilator's.

mod support;

use homa_hw::tx::framer::{TxFramer as TxFramerRtl, DATA_HEADERS_LEN};
use homa_hw_sim::axis::{beats_to_frame, frame_to_beats, Beat, BEAT_BYTES};
use homa_hw_sim::{Sim, TxFramer};
use homa_wire::{Body, PacketType};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;
use support::rusthdl::{bits_from_words, rtl_tick, words_from_bits};

/// One packet as the framer's producers see it.
struct Job {
    /// The encoded frame: what must come out.
    frame: Vec<u8>,
    packet_type: PacketType,
    beat0: [u32; 16],
    beat1: [u32; 16],
    header_len: usize,
    /// Payload beats (empty for control packets and empty DATA).
    payload: Vec<Beat>,
}

/// Header beat `i` (0 or 1): frame bytes `64 i .. header_len`, zero after.
fn header_beat(frame: &[u8], header_len: usize, i: usize) -> [u32; 16] {
    let mut b = Beat {
        data: [0; BEAT_BYTES],
        keep: u64::MAX,
        last: false,
    };
    let (start, end) = (BEAT_BYTES * i, header_len.min(BEAT_BYTES * (i + 1)));
    if end > start {
        b.data[..end - start].copy_from_slice(&frame[start..end]);
    }
    b.words()
}

fn random_job(rng: &mut ChaCha8Rng) -> Job {
    let f = support::random_frame(rng);
    let frame = f.encode().unwrap();
    let header_len = match &f.homa.body {
        Body::Data(_) => DATA_HEADERS_LEN,
        _ => frame.len(),
    };
    let payload = if frame.len() > header_len {
        // Lanes past the payload hold junk: the framer must not use them.
        frame_to_beats(&frame[header_len..], rng.gen())
    } else {
        Vec::new()
    };
    Job {
        packet_type: f.homa.packet_type(),
        beat0: header_beat(&frame, header_len, 0),
        beat1: header_beat(&frame, header_len, 1),
        header_len,
        payload,
        frame,
    }
}

/// How hard the producers and the MAC make life for the framer.
#[derive(Clone, Copy, Debug)]
struct Traffic {
    /// Chance per cycle that an idle header producer stays idle.
    hdr_gap: f64,
    /// Chance per cycle that an idle payload producer stays idle.
    pay_gap: f64,
    /// Chance per cycle that the MAC is ready.
    ready: f64,
}

/// A frame as it left the framer, with the cycle of its last beat.
struct Sent {
    frame: Vec<u8>,
    last_cycle: u64,
}

fn random_words(rng: &mut ChaCha8Rng) -> [u32; 16] {
    std::array::from_fn(|_| rng.gen())
}

/// Streams `jobs` through the framer and returns the frames it sent. Checks
/// the AXI-Stream rules on the output as it goes.
fn run(
    sim: &mut Sim<TxFramer>,
    jobs: &[Job],
    rng: &mut ChaCha8Rng,
    t: Traffic,
    what: &str,
) -> Vec<Sent> {
    let payload: Vec<&Beat> = jobs.iter().flat_map(|j| j.payload.iter()).collect();
    let total_beats: usize = jobs
        .iter()
        .map(|j| j.frame.len().div_ceil(BEAT_BYTES))
        .sum();
    let limit = sim.cycle() + 100 + (total_beats as f64 / t.ready.min(1.0 - t.pay_gap)) as u64 * 4;
    let (mut hdr_i, mut hdr_on) = (0usize, false);
    let (mut pay_i, mut pay_on) = (0usize, false);
    let mut sent = Vec::new();
    let mut current: Vec<Beat> = Vec::new();
    // The beat offered last cycle and not taken: it must be offered again.
    let mut stalled: Option<Beat> = None;
    while sent.len() < jobs.len() {
        assert!(
            sim.cycle() < limit,
            "{what}: stuck at cycle {}: {} of {} frames out, {hdr_i} headers and {pay_i} of {} payload beats taken",
            sim.cycle(),
            sent.len(),
            jobs.len(),
            payload.len()
        );
        if !hdr_on && hdr_i < jobs.len() && !rng.gen_bool(t.hdr_gap) {
            hdr_on = true;
        }
        if hdr_on {
            let j = &jobs[hdr_i];
            sim.set_s_hdr_beat0(&j.beat0);
            sim.set_s_hdr_beat1(&j.beat1);
            sim.set_s_hdr_frame_len(j.frame.len() as u16);
            sim.set_s_hdr_header_len(j.header_len as u16);
        } else {
            sim.set_s_hdr_beat0(&random_words(rng));
            sim.set_s_hdr_beat1(&random_words(rng));
            sim.set_s_hdr_frame_len(rng.gen());
            sim.set_s_hdr_header_len(rng.gen());
        }
        sim.set_s_hdr_valid(hdr_on);
        if !pay_on && pay_i < payload.len() && !rng.gen_bool(t.pay_gap) {
            pay_on = true;
        }
        if pay_on {
            let b = payload[pay_i];
            sim.set_s_axis_pay_tdata(&b.words());
            sim.set_s_axis_pay_tkeep(b.keep);
            sim.set_s_axis_pay_tlast(b.last);
        } else {
            sim.set_s_axis_pay_tdata(&random_words(rng));
            sim.set_s_axis_pay_tkeep(rng.gen());
            sim.set_s_axis_pay_tlast(rng.gen());
        }
        sim.set_s_axis_pay_tvalid(pay_on);
        let ready = rng.gen_bool(t.ready);
        sim.set_m_axis_tx_tready(ready);
        sim.eval();

        // What crosses each interface at the coming edge.
        let cycle = sim.cycle();
        let offered = sim.m_axis_tx_tvalid().then(|| {
            Beat::from_words(
                &sim.m_axis_tx_tdata(),
                sim.m_axis_tx_tkeep(),
                sim.m_axis_tx_tlast(),
            )
        });
        if let Some(s) = &stalled {
            assert_eq!(
                offered.as_ref(),
                Some(s),
                "{what}: cycle {cycle}: a beat offered to a stalled MAC changed or vanished (frame {})",
                sent.len()
            );
        }
        stalled = None;
        if let Some(b) = offered {
            let k = b.keep;
            assert!(
                k != 0 && k & k.wrapping_add(1) == 0 && (b.last || k == u64::MAX),
                "{what}: cycle {cycle}: tkeep {k:#018x} (last {}) in frame {}",
                b.last,
                sent.len()
            );
            if ready {
                let last = b.last;
                current.push(b);
                if last {
                    sent.push(Sent {
                        frame: beats_to_frame(&current),
                        last_cycle: cycle,
                    });
                    current.clear();
                }
            } else {
                stalled = Some(b);
            }
        }
        let hdr_taken = hdr_on && sim.s_hdr_ready();
        let pay_taken = pay_on && sim.s_axis_pay_tready();
        sim.tick();
        if hdr_taken {
            hdr_i += 1;
            hdr_on = false;
        }
        if pay_taken {
            pay_i += 1;
            pay_on = false;
        }
    }
    assert_eq!(hdr_i, jobs.len(), "{what}: every header record taken");
    assert_eq!(
        pay_i,
        payload.len(),
        "{what}: every payload beat taken, none more"
    );
    // Nothing more comes out.
    sim.set_s_hdr_valid(false);
    sim.set_s_axis_pay_tvalid(false);
    sim.set_m_axis_tx_tready(true);
    for _ in 0..4 {
        sim.tick();
        assert!(
            !sim.m_axis_tx_tvalid(),
            "{what}: a beat after the last frame"
        );
    }
    sent
}

fn check_frames(jobs: &[Job], sent: &[Sent], what: &str) {
    assert_eq!(sent.len(), jobs.len(), "{what}: frame count");
    for (i, (j, s)) in jobs.iter().zip(sent).enumerate() {
        if s.frame != j.frame {
            let first = (0..j.frame.len().min(s.frame.len()))
                .find(|&k| s.frame[k] != j.frame[k])
                .unwrap_or(j.frame.len().min(s.frame.len()));
            panic!(
                "{what}: frame {i} ({:?}, {} bytes, header {}), last beat at cycle {}: card sent {} bytes, \
                 first difference at byte {first} (beat {}, lane {}): card {:02x?}, encoder {:02x?}",
                j.packet_type,
                j.frame.len(),
                j.header_len,
                s.last_cycle,
                s.frame.len(),
                first / BEAT_BYTES,
                first % BEAT_BYTES,
                &s.frame[first.min(s.frame.len())..(first + 8).min(s.frame.len())],
                &j.frame[first.min(j.frame.len())..(first + 8).min(j.frame.len())],
            );
        }
    }
}

fn reset(sim: &mut Sim<TxFramer>) {
    sim.set_reset(true);
    sim.tick();
    sim.set_reset(false);
}

#[test]
fn frames_equal_the_encoder_under_gaps_and_back_pressure() {
    let profiles = [
        Traffic {
            hdr_gap: 0.0,
            pay_gap: 0.0,
            ready: 1.0,
        },
        Traffic {
            hdr_gap: 0.3,
            pay_gap: 0.3,
            ready: 0.6,
        },
        Traffic {
            hdr_gap: 0.05,
            pay_gap: 0.05,
            ready: 0.2,
        },
        Traffic {
            hdr_gap: 0.5,
            pay_gap: 0.8,
            ready: 0.9,
        },
    ];
    let mut types = std::collections::BTreeSet::new();
    let (mut frames, mut cycles) = (0, 0);
    for (seed, t) in profiles.into_iter().enumerate() {
        let what = format!("seed {seed} {t:?}");
        let mut rng = ChaCha8Rng::seed_from_u64(seed as u64);
        let mut sim: Sim<TxFramer> = Sim::traced_on_failure(&format!("tx_framer_seed{seed}"));
        reset(&mut sim);
        let jobs: Vec<Job> = (0..3000).map(|_| random_job(&mut rng)).collect();
        let sent = run(&mut sim, &jobs, &mut rng, t, &what);
        check_frames(&jobs, &sent, &what);
        types.extend(jobs.iter().map(|j| j.packet_type));
        frames += jobs.len();
        cycles += sim.cycle();
    }
    assert_eq!(types.len(), PacketType::ALL.len(), "every type framed");
    eprintln!("tx_framer: {frames} frames in {cycles} cycles, all equal to the encoder");
}

#[test]
fn payload_tails_around_the_lane_26_seam() {
    // DATA with every payload length from 0 to 3 beats: the tail lands in the
    // header beat, exactly fills a beat, or spills into a flush beat.
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    let mut sim: Sim<TxFramer> = Sim::traced_on_failure("tx_framer_seam");
    reset(&mut sim);
    let mut jobs = Vec::new();
    for len in 0..=3 * BEAT_BYTES {
        let mut j = loop {
            let j = random_job(&mut rng);
            if j.packet_type == PacketType::Data {
                break j;
            }
        };
        j.frame.truncate(DATA_HEADERS_LEN);
        j.frame.extend((0..len).map(|_| rng.gen::<u8>()));
        j.payload = if len > 0 {
            frame_to_beats(&j.frame[DATA_HEADERS_LEN..], rng.gen())
        } else {
            Vec::new()
        };
        jobs.push(j);
    }
    let t = Traffic {
        hdr_gap: 0.2,
        pay_gap: 0.2,
        ready: 0.7,
    };
    let sent = run(&mut sim, &jobs, &mut rng, t, "seam");
    check_frames(&jobs, &sent, "seam");
}

#[test]
fn one_beat_per_cycle_without_back_pressure() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut sim: Sim<TxFramer> = Sim::traced_on_failure("tx_framer_rate");
    reset(&mut sim);
    let jobs: Vec<Job> = (0..400).map(|_| random_job(&mut rng)).collect();
    let start = sim.cycle();
    let t = Traffic {
        hdr_gap: 0.0,
        pay_gap: 0.0,
        ready: 1.0,
    };
    let sent = run(&mut sim, &jobs, &mut rng, t, "rate");
    check_frames(&jobs, &sent, "rate");
    let beats: u64 = jobs
        .iter()
        .map(|j| j.frame.len().div_ceil(BEAT_BYTES) as u64)
        .sum();
    // The first header is offered at cycle `start` and its beat 0 leaves the
    // cycle after; from then on one beat every cycle.
    let last = sent.last().unwrap().last_cycle;
    assert_eq!(
        last - start,
        beats,
        "{beats} beats should leave in {beats} cycles after the first edge"
    );
}

// ---- RustHDL vs Verilator ----

/// Every output, as both simulators report it.
#[derive(Debug, PartialEq)]
struct Outputs {
    hdr_ready: bool,
    pay_ready: bool,
    valid: bool,
    data: [u32; 16],
    keep: u64,
    last: bool,
}

fn rtl_outputs(f: &TxFramerRtl) -> Outputs {
    Outputs {
        hdr_ready: f.s_hdr_ready.val(),
        pay_ready: f.s_axis_pay_tready.val(),
        valid: f.m_axis_tx_tvalid.val(),
        data: words_from_bits(f.m_axis_tx_tdata.val()),
        keep: f.m_axis_tx_tkeep.val().to_u64(),
        last: f.m_axis_tx_tlast.val(),
    }
}

fn verilator_outputs(s: &Sim<TxFramer>) -> Outputs {
    Outputs {
        hdr_ready: s.s_hdr_ready(),
        pay_ready: s.s_axis_pay_tready(),
        valid: s.m_axis_tx_tvalid(),
        data: s.m_axis_tx_tdata(),
        keep: s.m_axis_tx_tkeep(),
        last: s.m_axis_tx_tlast(),
    }
}

#[test]
fn tx_framer_rusthdl_and_verilator_agree_cycle_by_cycle() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut rtl = TxFramerRtl::default();
    rtl.connect_all();
    let mut sim: Sim<TxFramer> = Sim::traced_on_failure("equivalence_tx_framer");
    rtl.reset.next = true;
    sim.set_reset(true);
    rtl_tick!(rtl);
    sim.tick();
    rtl.reset.next = false;
    sim.set_reset(false);
    let (mut beats, mut lasts) = (0, 0);
    for cycle in 0..600 {
        // Random inputs, lengths in the range the framer meets.
        let frame_len: u16 = rng.gen_range(1..1600);
        let header_len = if frame_len > 90 && rng.gen_bool(0.5) {
            90
        } else {
            frame_len
        };
        let (b0, b1, pay) = (
            random_words(&mut rng),
            random_words(&mut rng),
            random_words(&mut rng),
        );
        let (hv, pv, ready) = (rng.gen_bool(0.5), rng.gen_bool(0.7), rng.gen_bool(0.7));
        let (keep, last): (u64, bool) = (rng.gen(), rng.gen());
        rtl.s_hdr_valid.next = hv;
        rtl.s_hdr_beat0.next = bits_from_words(&b0);
        rtl.s_hdr_beat1.next = bits_from_words(&b1);
        rtl.s_hdr_frame_len.next = (frame_len as u64).to_bits();
        rtl.s_hdr_header_len.next = (header_len as u64).to_bits();
        rtl.s_axis_pay_tdata.next = bits_from_words(&pay);
        rtl.s_axis_pay_tkeep.next = keep.to_bits();
        rtl.s_axis_pay_tlast.next = last;
        rtl.s_axis_pay_tvalid.next = pv;
        rtl.m_axis_tx_tready.next = ready;
        sim.set_s_hdr_valid(hv);
        sim.set_s_hdr_beat0(&b0);
        sim.set_s_hdr_beat1(&b1);
        sim.set_s_hdr_frame_len(frame_len);
        sim.set_s_hdr_header_len(header_len);
        sim.set_s_axis_pay_tdata(&pay);
        sim.set_s_axis_pay_tkeep(keep);
        sim.set_s_axis_pay_tlast(last);
        sim.set_s_axis_pay_tvalid(pv);
        sim.set_m_axis_tx_tready(ready);
        rtl_tick!(rtl);
        sim.tick();
        let (a, b) = (rtl_outputs(&rtl), verilator_outputs(&sim));
        assert_eq!(
            a, b,
            "cycle {cycle}: RustHDL (left) and Verilator (right) differ"
        );
        beats += (a.valid && ready) as usize;
        lasts += (a.valid && ready && a.last) as usize;
    }
    assert!(
        beats >= 100 && lasts >= 10,
        "only {beats} beats, {lasts} frames compared"
    );
}

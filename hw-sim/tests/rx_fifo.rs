//! Block testbench of the RX FIFO, wired to the RX parser as in the core: the
//! same beats go into the `RxParser` and `RxFifo` models in lockstep, and the
//! parser's verdict outputs drive the FIFO's verdict inputs every cycle. Random
//! frames, valid and broken (`support::random_wire_frame`), random MAC gaps and
//! random back-pressure, heavy enough to overflow the FIFO.
//!
//! A reference follows the FIFO at the level of the guarantee its DESIGN
//! NOTES state: beats occupy slots from their write until they are handed out
//! (accepted frames) or skipped (rejected frames: all at edge max(v + 2,
//! p + 1)); a frame is stored iff none of its beats meets DEPTH occupied
//! slots. From that it predicts, cycle by cycle, when the FIFO offers a beat,
//! which frames overflow, and which frames come out. Checked: the frames out
//! are exactly the accepted, stored frames, byte for byte, in order, with
//! their length and metadata; `overflow_drops` equals the reference's count;
//! `tvalid` rises and falls exactly when predicted; a beat offered to a
//! stalled consumer stays put. Then RustHDL's simulation against Verilator's.

mod support;

use std::collections::VecDeque;
use support::rusthdl::{bits_from_words, rtl_tick, words_from_bits};

use homa_hw::rx::fifo::{RxFifo as RxFifoRtl, DEPTH};
use homa_hw::rx::parser::RxVerdict;
use homa_hw_sim::axis::{beats_to_frame, frame_to_beats, Beat, BEAT_BYTES};
use homa_hw_sim::{RxFifo, RxParser, Sim};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;
use support::{expected_verdict, random_frame, random_wire_frame};

/// A stored frame whose verdict is in, as the reference sees it.
struct Queued {
    frame: usize,
    beats: usize,
    accept: bool,
    /// Edge at which the FIFO took the verdict.
    verdict_edge: u64,
}

/// The FIFO's guarantee, edge by edge.
#[derive(Default)]
struct Reference {
    /// Beats per input frame.
    frame_beats: Vec<usize>,
    /// Occupied slots before the coming edge (the RTL's `wr - rd`).
    occupancy: usize,
    /// Input frame whose beats arrive now, and its beats written so far.
    current: usize,
    written: usize,
    /// The current frame overflowed: its remaining beats are ignored.
    dropping: bool,
    /// Frames whose last beat is in, waiting for a verdict: (frame, stored).
    awaiting: VecDeque<(usize, bool)>,
    queue: VecDeque<Queued>,
    /// Beats of the queue's head handed out so far.
    head_taken: usize,
    /// Edge at which the last queue entry popped.
    last_pop: Option<u64>,
    overflowed: Vec<usize>,
    /// Frames that must come out, in order.
    expected_out: Vec<usize>,
}

impl Reference {
    /// The head entry may go (be offered or skipped) before edge `edge`.
    fn head_ready(&self, edge: u64) -> Option<&Queued> {
        let head = self.queue.front()?;
        let after_verdict = head.verdict_edge + 2 <= edge;
        let after_previous = self.last_pop.is_none_or(|p| p < edge);
        (after_verdict && after_previous).then_some(head)
    }

    /// Whether the FIFO offers a beat in the cycle before edge `edge`.
    fn offers(&self, edge: u64) -> bool {
        self.head_ready(edge).is_some_and(|h| h.accept)
    }

    /// Applies edge `edge`: a beat in (`Some(last)`), a verdict in (accept),
    /// and whether a beat was handed out.
    fn edge(&mut self, edge: u64, beat_in: Option<bool>, verdict: Option<bool>, taken: bool) {
        let before = self.occupancy;
        // Frees.
        if taken {
            let head = self
                .queue
                .front()
                .expect("a beat handed out with no frame queued");
            assert!(head.accept);
            self.occupancy -= 1;
            self.head_taken += 1;
            if self.head_taken == head.beats {
                self.queue.pop_front();
                self.head_taken = 0;
                self.last_pop = Some(edge);
            }
        } else if let Some(h) = self.head_ready(edge) {
            if !h.accept {
                self.occupancy -= h.beats;
                self.queue.pop_front();
                self.last_pop = Some(edge);
            }
        }
        // Verdicts match the frames waiting before the edge.
        if let Some(accept) = verdict {
            let (frame, stored) = self
                .awaiting
                .pop_front()
                .expect("a verdict with no frame waiting");
            if stored {
                self.queue.push_back(Queued {
                    frame,
                    beats: self.frame_beats[frame],
                    accept,
                    verdict_edge: edge,
                });
                if accept {
                    self.expected_out.push(frame);
                }
            }
        }
        // The write side decides on the occupancy before the edge.
        if let Some(last) = beat_in {
            if self.dropping {
            } else if before == DEPTH {
                self.occupancy -= self.written;
                self.written = 0;
                self.overflowed.push(self.current);
                self.dropping = true;
            } else {
                self.occupancy += 1;
                self.written += 1;
            }
            if last {
                self.awaiting.push_back((self.current, !self.dropping));
                self.current += 1;
                self.written = 0;
                self.dropping = false;
            }
        }
        assert!(
            self.occupancy <= DEPTH,
            "reference occupancy {}",
            self.occupancy
        );
    }
}

/// A frame as it left the FIFO.
struct Out {
    bytes: Vec<u8>,
    frame_len: u16,
    meta: u64,
    last_cycle: u64,
}

/// The parser and the FIFO, wired as in the core, with the reference beside.
struct Bench {
    parser: Sim<RxParser>,
    fifo: Sim<RxFifo>,
    reference: Reference,
    frames: Vec<Vec<u8>>,
    /// Per frame: the parser's verdict and metadata (sender_id) as the FIFO got them.
    verdicts: Vec<(u8, u16, u64)>,
    out: Vec<Out>,
    current: Vec<Beat>,
    stalled: Option<Beat>,
    what: String,
}

impl Bench {
    fn new(name: &str, frames: Vec<Vec<u8>>) -> Bench {
        let mut parser: Sim<RxParser> = Sim::traced_on_failure(&format!("{name}_parser"));
        let mut fifo: Sim<RxFifo> = Sim::traced_on_failure(&format!("{name}_fifo"));
        parser.set_reset(true);
        fifo.set_reset(true);
        parser.tick();
        fifo.tick();
        parser.set_reset(false);
        fifo.set_reset(false);
        let reference = Reference {
            frame_beats: frames
                .iter()
                .map(|f| f.len().div_ceil(BEAT_BYTES))
                .collect(),
            ..Default::default()
        };
        Bench {
            parser,
            fifo,
            reference,
            frames,
            verdicts: Vec::new(),
            out: Vec::new(),
            current: Vec::new(),
            stalled: None,
            what: name.to_string(),
        }
    }

    /// One clock cycle: `beat` from the MAC (or none), `ready` from the consumer.
    fn step(&mut self, beat: Option<&Beat>, ready: bool) {
        let edge = self.fifo.cycle();
        let what = &self.what;
        match beat {
            Some(b) => {
                let data = b.words();
                self.parser.set_s_axis_tdata(&data);
                self.parser.set_s_axis_tkeep(b.keep);
                self.parser.set_s_axis_tlast(b.last);
                self.parser.set_s_axis_tvalid(true);
                self.fifo.set_s_axis_tdata(&data);
                self.fifo.set_s_axis_tkeep(b.keep);
                self.fifo.set_s_axis_tlast(b.last);
                self.fifo.set_s_axis_tvalid(true);
            }
            None => {
                self.parser.set_s_axis_tvalid(false);
                self.fifo.set_s_axis_tvalid(false);
                self.fifo.set_s_axis_tdata(&[0xdead_beef; 16]);
                self.fifo.set_s_axis_tlast(true);
            }
        }
        // The parser's verdict outputs are the FIFO's verdict inputs.
        let verdict = self.parser.m_meta_valid().then(|| {
            (
                self.parser.m_meta_reason(),
                self.parser.m_meta_frame_len(),
                self.parser.m_meta_sender_id(),
            )
        });
        self.fifo.set_s_verdict_valid(verdict.is_some());
        self.fifo.set_s_verdict_reason(self.parser.m_meta_reason());
        self.fifo
            .set_s_verdict_frame_len(self.parser.m_meta_frame_len());
        self.fifo.set_s_verdict_meta(self.parser.m_meta_sender_id());
        self.fifo.set_m_axis_tready(ready);
        self.fifo.eval();

        // The output this cycle, against the AXI rules and the reference.
        let offered = self.fifo.m_axis_tvalid().then(|| {
            Beat::from_words(
                &self.fifo.m_axis_tdata(),
                self.fifo.m_axis_tkeep(),
                self.fifo.m_axis_tlast(),
            )
        });
        assert_eq!(
            offered.is_some(),
            self.reference.offers(edge),
            "{what}: cycle {edge}: tvalid differs from the reference (head {:?}, {} frames out)",
            self.reference
                .queue
                .front()
                .map(|q| (q.frame, q.accept, q.verdict_edge)),
            self.out.len()
        );
        if let Some(s) = &self.stalled {
            assert_eq!(
                offered.as_ref(),
                Some(s),
                "{what}: cycle {edge}: a beat offered to a stalled consumer changed"
            );
        }
        self.stalled = None;
        let taken = offered.is_some() && ready;
        if let Some(b) = offered {
            if ready {
                let last = b.last;
                self.current.push(b);
                if last {
                    self.out.push(Out {
                        bytes: beats_to_frame(&self.current),
                        frame_len: self.fifo.m_axis_frame_len(),
                        meta: self.fifo.m_axis_meta(),
                        last_cycle: edge,
                    });
                    self.current.clear();
                }
            } else {
                self.stalled = Some(b);
            }
        }
        if let Some((reason, len, meta)) = verdict {
            self.verdicts.push((reason, len, meta));
        }
        self.reference.edge(
            edge,
            beat.map(|b| b.last),
            verdict.map(|(reason, _, _)| reason == 0),
            taken,
        );
        self.parser.tick();
        self.fifo.tick();
    }

    /// Streams every frame in, with MAC gaps of probability `gap` between
    /// beats and the consumer ready as `ready` says, cycle by cycle.
    fn run(
        &mut self,
        rng: &mut ChaCha8Rng,
        gap: f64,
        mut ready: impl FnMut(&mut ChaCha8Rng) -> bool,
    ) {
        let beats: Vec<Beat> = self
            .frames
            .iter()
            .flat_map(|f| frame_to_beats(f, rng.gen()))
            .collect();
        for b in &beats {
            while rng.gen_bool(gap) {
                let r = ready(rng);
                self.step(None, r);
            }
            let r = ready(rng);
            self.step(Some(b), r);
        }
        // Drain: everything the reference still holds comes out.
        let mut idle = 0;
        while (!self.reference.queue.is_empty() || !self.reference.awaiting.is_empty())
            && idle < 10_000
        {
            self.step(None, true);
            idle += 1;
        }
        for _ in 0..4 {
            self.step(None, true);
        }
    }

    /// The frames out must be the accepted, stored frames; the counter must match.
    fn check(&self) {
        let what = &self.what;
        let r = &self.reference;
        assert_eq!(
            self.verdicts.len(),
            self.frames.len(),
            "{what}: one verdict per frame"
        );
        for (i, (reason, len, _)) in self.verdicts.iter().enumerate() {
            let want = expected_verdict(&self.frames[i]);
            assert_eq!(
                RxVerdict::from_code(*reason),
                Some(want),
                "{what}: frame {i}: the parser's verdict"
            );
            assert_eq!(
                *len as usize,
                self.frames[i].len(),
                "{what}: frame {i}: length"
            );
        }
        assert_eq!(
            self.fifo.overflow_drops() as usize,
            r.overflowed.len(),
            "{what}: overflow_drops; the reference dropped frames {:?}",
            &r.overflowed[..r.overflowed.len().min(20)]
        );
        assert_eq!(
            self.out.len(),
            r.expected_out.len(),
            "{what}: frames out; expected {:?}...",
            &r.expected_out[..r.expected_out.len().min(20)]
        );
        for (k, (o, &i)) in self.out.iter().zip(&r.expected_out).enumerate() {
            let f = &self.frames[i];
            let context = || {
                format!(
                    "{what}: output frame {k} (input frame {i}, {} bytes, last beat at cycle {})",
                    f.len(),
                    o.last_cycle
                )
            };
            if o.bytes != *f {
                let first = (0..f.len().min(o.bytes.len()))
                    .find(|&j| o.bytes[j] != f[j])
                    .unwrap_or(f.len().min(o.bytes.len()));
                panic!(
                    "{}: {} bytes out, first difference at byte {first}",
                    context(),
                    o.bytes.len()
                );
            }
            assert_eq!(
                o.frame_len as usize,
                f.len(),
                "{}: m_axis_frame_len",
                context()
            );
            assert_eq!(o.meta, self.verdicts[i].2, "{}: m_axis_meta", context());
        }
    }
}

fn wire_frames(rng: &mut ChaCha8Rng, n: usize) -> Vec<Vec<u8>> {
    // Empty frames are not a thing on the wire.
    (0..n)
        .map(|_| random_wire_frame(rng))
        .filter(|f| !f.is_empty())
        .collect()
}

#[test]
fn accepted_frames_come_out_whole_and_in_order_under_light_load() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let frames = wire_frames(&mut rng, 4000);
    let mut bench = Bench::new("rx_fifo_light", frames);
    bench.run(&mut rng, 0.2, |rng| rng.gen_bool(0.9));
    bench.check();
    let r = &bench.reference;
    assert!(
        r.expected_out.len() > 500,
        "{} accepted",
        r.expected_out.len()
    );
    eprintln!(
        "rx_fifo light: {} frames, {} out, {} overflowed, {} cycles",
        bench.frames.len(),
        bench.out.len(),
        r.overflowed.len(),
        bench.fifo.cycle()
    );
}

#[test]
fn overflows_drop_whole_frames_under_heavy_back_pressure() {
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let frames = wire_frames(&mut rng, 6000);
    let mut bench = Bench::new("rx_fifo_heavy", frames);
    // The consumer stalls for long stretches (up to 5 FIFOs' worth of
    // beats), then drains in bursts.
    let depth = DEPTH as u32;
    let mut phase = (false, 0u32);
    bench.run(&mut rng, 0.05, move |rng| {
        if phase.1 == 0 {
            phase = if phase.0 {
                (false, rng.gen_range(1..5 * depth))
            } else {
                (true, rng.gen_range(1..2 * depth))
            };
        }
        phase.1 -= 1;
        phase.0 && rng.gen_bool(0.8)
    });
    bench.check();
    let r = &bench.reference;
    assert!(
        r.overflowed.len() > 200 && r.expected_out.len() > 200,
        "the stimulus must overflow often and still pass frames: {} overflowed, {} out",
        r.overflowed.len(),
        r.expected_out.len()
    );
    eprintln!(
        "rx_fifo heavy: {} frames, {} out, {} overflowed, {} cycles",
        bench.frames.len(),
        bench.out.len(),
        r.overflowed.len(),
        bench.fifo.cycle()
    );
}

#[test]
fn back_to_back_minimum_frames_fill_the_frame_queue() {
    // Single-beat frames, one per cycle, some broken: up to DEPTH frames held,
    // three verdicts outstanding at a time, rejected frames skipped among them.
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let frames: Vec<Vec<u8>> = (0..8000)
        .map(|_| loop {
            let mut f = random_frame(&mut rng).encode().unwrap();
            if f.len() <= BEAT_BYTES {
                if rng.gen_bool(0.3) {
                    f[20] ^= 0x10; // IPv4 checksum no longer matches
                }
                break f;
            }
        })
        .collect();
    let mut bench = Bench::new("rx_fifo_minimum", frames);
    let depth = DEPTH as u32;
    let mut phase = (true, 0u32);
    bench.run(&mut rng, 0.0, move |rng| {
        if phase.1 == 0 {
            phase = (!phase.0, rng.gen_range(1..2 * depth));
        }
        phase.1 -= 1;
        phase.0
    });
    bench.check();
    let r = &bench.reference;
    assert!(
        r.overflowed.len() > 50 && r.expected_out.len() > 500,
        "{} overflowed, {} out",
        r.overflowed.len(),
        r.expected_out.len()
    );
    eprintln!(
        "rx_fifo minimum frames: {} frames, {} out, {} overflowed, {} cycles",
        bench.frames.len(),
        bench.out.len(),
        r.overflowed.len(),
        bench.fifo.cycle()
    );
}

// ---- RustHDL vs Verilator ----

/// Every output, as both simulators report it.
#[derive(Debug, PartialEq)]
struct Outputs {
    valid: bool,
    data: [u32; 16],
    keep: u64,
    last: bool,
    frame_len: u64,
    meta: u64,
    overflow_drops: u64,
}

fn rtl_outputs(f: &RxFifoRtl) -> Outputs {
    Outputs {
        valid: f.m_axis_tvalid.val(),
        data: words_from_bits(f.m_axis_tdata.val()),
        keep: f.m_axis_tkeep.val().to_u64(),
        last: f.m_axis_tlast.val(),
        frame_len: f.m_axis_frame_len.val().to_u64(),
        meta: f.m_axis_meta.val().to_u64(),
        overflow_drops: f.overflow_drops.val().to_u64(),
    }
}

fn verilator_outputs(s: &Sim<RxFifo>) -> Outputs {
    Outputs {
        valid: s.m_axis_tvalid(),
        data: s.m_axis_tdata(),
        keep: s.m_axis_tkeep(),
        last: s.m_axis_tlast(),
        frame_len: s.m_axis_frame_len() as u64,
        meta: s.m_axis_meta(),
        overflow_drops: s.overflow_drops() as u64,
    }
}

#[test]
fn rx_fifo_rusthdl_and_verilator_agree_cycle_by_cycle() {
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let mut rtl = RxFifoRtl::default();
    rtl.connect_all();
    let mut sim: Sim<RxFifo> = Sim::traced_on_failure("equivalence_rx_fifo");
    rtl.reset.next = true;
    sim.set_reset(true);
    rtl_tick!(rtl);
    sim.tick();
    rtl.reset.next = false;
    sim.set_reset(false);
    let (mut beats, mut overflows) = (0, 0);
    for cycle in 0..4 * DEPTH {
        // Random beats and verdicts (three cycles after a last beat, as the
        // parser gives them, or at random), random readiness in phases long
        // enough to fill the FIFO.
        let data = std::array::from_fn(|_| rng.gen());
        let keep: u64 = rng.gen();
        let last = rng.gen_bool(0.3);
        let valid = rng.gen_bool(0.8);
        let vvalid = rng.gen_bool(0.35);
        let reason: u8 = if rng.gen_bool(0.6) {
            0
        } else {
            rng.gen_range(1..14)
        };
        let (len, meta): (u16, u64) = (rng.gen(), rng.gen());
        let ready = if (cycle / (2 * DEPTH)) % 2 == 1 {
            rng.gen_bool(0.9)
        } else {
            rng.gen_bool(0.05)
        };
        rtl.s_axis_tdata.next = bits_from_words(&data);
        rtl.s_axis_tkeep.next = keep.to_bits();
        rtl.s_axis_tlast.next = last;
        rtl.s_axis_tvalid.next = valid;
        rtl.s_verdict_valid.next = vvalid;
        rtl.s_verdict_reason.next = (reason as u64).to_bits();
        rtl.s_verdict_frame_len.next = (len as u64).to_bits();
        rtl.s_verdict_meta.next = meta.to_bits();
        rtl.m_axis_tready.next = ready;
        sim.set_s_axis_tdata(&data);
        sim.set_s_axis_tkeep(keep);
        sim.set_s_axis_tlast(last);
        sim.set_s_axis_tvalid(valid);
        sim.set_s_verdict_valid(vvalid);
        sim.set_s_verdict_reason(reason);
        sim.set_s_verdict_frame_len(len);
        sim.set_s_verdict_meta(meta);
        sim.set_m_axis_tready(ready);
        rtl_tick!(rtl);
        sim.tick();
        let (a, b) = (rtl_outputs(&rtl), verilator_outputs(&sim));
        assert_eq!(
            a, b,
            "cycle {cycle}: RustHDL (left) and Verilator (right) differ"
        );
        beats += (a.valid && ready) as usize;
        overflows = a.overflow_drops;
    }
    assert!(
        beats >= 100 && overflows >= 5,
        "only {beats} beats out and {overflows} overflows compared"
    );
}

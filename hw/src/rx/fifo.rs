//! RX FIFO: store-and-forward frame FIFO between the MAC and the RX path. A
//! frame leaves only once the RX parser has accepted it; frames it rejects,
//! and frames that do not fit, never appear at the output.
//!
//! DESIGN NOTES
//! ------------
//! Beats from the MAC are written into a block RAM (`beats`, `DEPTH` entries
//! of {tdata, tkeep, tlast}) as they arrive: the MAC cannot wait, so the
//! write side never stalls. Every frame's verdict arrives later on
//! `s_verdict_*`, in frame order (the parser's `m_meta_valid` is up after the
//! third edge following the one that takes the frame's last beat, so the FIFO
//! takes the verdict at the fourth). Three queues keep frames and verdicts
//! matched:
//!
//! - `pend` (`PEND_DEPTH` registers): one entry per frame whose last beat is
//!   in and whose verdict is not, pushed at its last beat: where it ends in
//!   `beats`, or that it overflowed and is not stored. A verdict pops it.
//! - `frames` (a RAM, one entry per stored frame with its verdict): the
//!   frame's end in `beats`, accept or drop, and the metadata that goes out
//!   with it (`s_verdict_frame_len`, `s_verdict_meta`). A verdict for an
//!   overflowed frame is discarded; every other verdict pushes here.
//! - `beats` itself: stored frames, back to back, oldest at `rd`.
//!
//! The read side takes the oldest `frames` entry. Accepted: its beats go out
//! from `beats` at one per cycle under `m_axis_tready`, with its frame length
//! and metadata alongside, and the entry pops with the last beat. Rejected:
//! `rd` jumps to its end in one cycle and the entry pops, nothing goes out.
//!
//! Why drop on the read side, not by rolling `wr` back when a bad verdict
//! comes: by then the next frame may be partly written behind the bad one
//! (back-to-back minimum frames arrive one per cycle). Rolling back is only
//! used for overflow, while the frame is still the newest in `beats`.
//!
//! Overflow: the length of a frame is unknown until its last beat. A beat that
//! arrives when `beats` is full (`wr - rd == DEPTH`, with `rd` as of the cycle
//! before) rolls `wr` back to the frame's first beat, drops the frame whole
//! (the rest of its beats are ignored up to `tlast`) and counts it in
//! `overflow_drops`, whatever its verdict will be. THE GUARANTEE, which the
//! testbench models cycle by cycle: a frame is stored iff no beat of it meets
//! a full RAM, where beats are freed (a) for accepted frames, one at the edge
//! that hands the beat to the consumer, (b) for rejected frames, all at the
//! edge that skips the frame, which is edge max(v + 2, p + 1) for a frame
//! whose verdict is taken at edge v and whose predecessor in `frames` popped
//! at edge p. The same rule times the output: an accepted frame's first beat
//! can be taken at edge max(v + 2, p + 1), so frames follow each other with
//! no idle cycle, and a rejected frame costs the read side one cycle.
//!
//! RAM reads: `RAM` reads at every edge (registered read, old data when the
//! same address is written at that edge). The read addresses are the pointers'
//! next values, so after an edge `beats` shows the beat at `rd` and `frames`
//! the entry at `f_rd`. An entry of `frames` counts as present only one cycle
//! after it is written (`f_wr_d`, `f_wr` delayed), so its read never races
//! its write; the beats of a frame are written at least 3 edges before its
//! entry, so `beats` never races either. No bypass is needed.
//!
//! Sizes: `DEPTH` = 2,048 beats (128 KiB: 85 frames of 1514 bytes, 24
//! beats each, or 2,048 minimum frames; a frame longer than `DEPTH` beats
//! never fits). `frames` has `DEPTH` entries too, since each stored frame
//! holds at least one beat. Why not 64 (4 KiB): a block RAM is 512 deep in
//! its widest mode, and at 512 deep yosys 0.23 (`synth_xilinx -family
//! xcup`) mapped the FIFO to 20 RAMB18E2 (577 + 91 bits wide, 36 bits each)
//! with 143 FFs and ~140 LUTs, while at 64 deep it picked LUT RAM: 96
//! RAM64M8 and 778 FFs (the read registers). At 2,048 it is 76 RAMB18 (the
//! README's resource table, `make synth`). Changing `ADDR_BITS` is the only
//! edit a different depth needs. Dropping the stored `tlast` (derivable
//! from the frame length) would save RAM.
//!
//! Invariants: `wr - rd <= DEPTH`; `frame_start` is `wr` at the first beat of
//! the frame being written; `pend` never holds more than `PEND_DEPTH` frames:
//! with the parser's latency at most 4 frames end before the first of them
//! gets its verdict (then `pend` is full, and that verdict's pop and the next
//! frame's push share an edge: the push writes the entry the pop reads, which
//! is read from its register before the edge). A verdict with `pend` empty is ignored, and a frame that
//! ends with `pend` full is lost track of: neither happens with the parser.
//!
//! Timing: tdata/tkeep/tlast come straight from the RAM's output register;
//! `m_axis_tvalid` from registers through a compare; `m_axis_tready` reaches
//! the RAM read address through a pointer increment and a mux.

use rust_hdl::prelude::*;

/// Address bits of the beat RAM.
pub const ADDR_BITS: usize = 11;
/// Beats the FIFO holds: 2,048 beats of 64 bytes, 128 KiB (a burst the RX
/// engine, at about 90% of line rate for MTU frames, falls behind on).
pub const DEPTH: usize = 1 << ADDR_BITS;
/// Pointer bits: the address and a wrap bit, so full and empty differ.
pub const PTR_BITS: usize = ADDR_BITS + 1;
/// Bits of `s_verdict_meta` / `m_axis_meta`: opaque to the FIFO.
pub const META_BITS: usize = 64;
/// Frames that may wait for their verdicts at once.
pub const PEND_DEPTH: usize = 4;
/// Bits of a `beats` entry: tdata, tkeep from bit 512, tlast at bit 576.
pub const BEAT_ENTRY_BITS: usize = 512 + 64 + 1;
/// Bits of a `frames` entry: end pointer (from bit 0), accept (bit
/// `PTR_BITS`), frame length (16 bits from `PTR_BITS + 1`), metadata (from
/// `PTR_BITS + 17`).
pub const FRAME_ENTRY_BITS: usize = PTR_BITS + 1 + 16 + META_BITS;
/// Bits of a `pend` entry: end pointer (from bit 0), overflowed (bit `PTR_BITS`).
pub const PEND_ENTRY_BITS: usize = PTR_BITS + 1;

const _: () = assert!(
    PEND_DEPTH == 4,
    "`pend_wr`/`pend_rd` are 2 bits and a wrap bit"
);

#[derive(LogicBlock)]
pub struct RxFifo {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high: empties the FIFO, zeroes the counter.
    pub reset: Signal<In, bool>,

    /// Frames from the MAC, first byte in lane 0, `tkeep` contiguous. Never
    /// back-pressured (no `tready`): a beat with `tvalid` is taken.
    pub s_axis_tdata: Signal<In, Bits<512>>,
    pub s_axis_tkeep: Signal<In, Bits<64>>,
    pub s_axis_tvalid: Signal<In, bool>,
    pub s_axis_tlast: Signal<In, bool>,

    /// One cycle per frame, in frame order, after the frame's last beat (the
    /// RX parser's `m_meta_valid`).
    pub s_verdict_valid: Signal<In, bool>,
    /// An `RxVerdict` code: 0 keeps the frame, anything else drops it.
    pub s_verdict_reason: Signal<In, Bits<4>>,
    /// Bytes in the frame (the parser's `m_meta_frame_len`), passed through.
    pub s_verdict_frame_len: Signal<In, Bits<16>>,
    /// Whatever the consumer wants with the frame (the parser's derived
    /// fields), passed through.
    pub s_verdict_meta: Signal<In, Bits<META_BITS>>,

    /// Accepted frames, as they came in.
    pub m_axis_tdata: Signal<Out, Bits<512>>,
    pub m_axis_tkeep: Signal<Out, Bits<64>>,
    pub m_axis_tvalid: Signal<Out, bool>,
    pub m_axis_tlast: Signal<Out, bool>,
    pub m_axis_tready: Signal<In, bool>,
    /// The frame's `s_verdict_frame_len`, with every beat of it.
    pub m_axis_frame_len: Signal<Out, Bits<16>>,
    /// The frame's `s_verdict_meta`, with every beat of it.
    pub m_axis_meta: Signal<Out, Bits<META_BITS>>,

    /// Frames dropped for want of room (wraps).
    pub overflow_drops: Signal<Out, Bits<32>>,

    // --- write side ---
    /// The stored beats, `DEPTH` deep.
    beats: RAM<Bits<BEAT_ENTRY_BITS>, ADDR_BITS>,
    /// Where the next beat goes (with wrap bit).
    wr: DFF<Bits<PTR_BITS>>,
    /// `wr` at the first beat of the frame being written: the roll-back point.
    frame_start: DFF<Bits<PTR_BITS>>,
    /// The frame being received overflowed: ignore its beats up to `tlast`.
    dropping: DFF<bool>,
    /// Frames dropped for want of room.
    overflow_count: DFF<Bits<32>>,
    /// Beats in `beats` not yet freed: `wr - rd`, 0..=DEPTH.
    occupancy: Signal<Local, Bits<PTR_BITS>>,
    /// No room for a beat this cycle.
    full: Signal<Local, bool>,
    /// `wr + 1`, wrapping at the pointer width.
    wr_plus1: Signal<Local, Bits<PTR_BITS>>,

    // --- frames waiting for their verdict ---
    /// Entry i: {overflowed, end pointer}.
    pend: [DFF<Bits<PEND_ENTRY_BITS>>; PEND_DEPTH],
    /// Next entry to fill, oldest entry (2 bits of index and a wrap bit).
    pend_wr: DFF<Bits<3>>,
    pend_rd: DFF<Bits<3>>,
    /// A frame ends this cycle: push `pend_entry`.
    pend_push: Signal<Local, bool>,
    pend_entry: Signal<Local, Bits<PEND_ENTRY_BITS>>,
    /// The oldest `pend` entry (valid when `pend_rd != pend_wr`).
    pend_head: Signal<Local, Bits<PEND_ENTRY_BITS>>,
    /// A verdict pops `pend` this cycle.
    pend_pop: Signal<Local, bool>,

    // --- stored frames with their verdicts ---
    /// One entry per stored frame whose verdict is in.
    frames: RAM<Bits<FRAME_ENTRY_BITS>, ADDR_BITS>,
    /// Next entry to fill, oldest entry (with wrap bits).
    f_wr: DFF<Bits<PTR_BITS>>,
    f_rd: DFF<Bits<PTR_BITS>>,
    /// `f_wr` one cycle late: entries before it can be read from `frames`.
    f_wr_d: DFF<Bits<PTR_BITS>>,

    // --- read side ---
    /// Oldest beat not freed; `beats` shows the beat here.
    rd: DFF<Bits<PTR_BITS>>,
    /// `frames` shows a present entry (the oldest).
    head_valid: Signal<Local, bool>,
    /// The oldest entry is a rejected frame: skip it this cycle.
    skip: Signal<Local, bool>,
    /// A beat is handed over this cycle.
    take: Signal<Local, bool>,
    /// `rd` and `f_rd` after this cycle's edge: the RAMs' read addresses.
    rd_next: Signal<Local, Bits<PTR_BITS>>,
    f_rd_next: Signal<Local, Bits<PTR_BITS>>,

    /// `DEPTH`, at pointer width.
    depth: Constant<Bits<PTR_BITS>>,
    /// A `pend` entry for a frame that overflowed (no end in `beats`).
    pend_overflowed: Constant<Bits<PEND_ENTRY_BITS>>,
    /// Bit positions in a `frames` entry (the overflowed bit of a `pend`
    /// entry is at `at_accept` too).
    at_accept: Constant<Bits<16>>,
    at_frame_len: Constant<Bits<16>>,
    at_meta: Constant<Bits<16>>,
}

impl Default for RxFifo {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            s_axis_tdata: Default::default(),
            s_axis_tkeep: Default::default(),
            s_axis_tvalid: Default::default(),
            s_axis_tlast: Default::default(),
            s_verdict_valid: Default::default(),
            s_verdict_reason: Default::default(),
            s_verdict_frame_len: Default::default(),
            s_verdict_meta: Default::default(),
            m_axis_tdata: Default::default(),
            m_axis_tkeep: Default::default(),
            m_axis_tvalid: Default::default(),
            m_axis_tlast: Default::default(),
            m_axis_tready: Default::default(),
            m_axis_frame_len: Default::default(),
            m_axis_meta: Default::default(),
            overflow_drops: Default::default(),
            beats: Default::default(),
            wr: Default::default(),
            frame_start: Default::default(),
            dropping: Default::default(),
            overflow_count: Default::default(),
            occupancy: Default::default(),
            full: Default::default(),
            wr_plus1: Default::default(),
            pend: Default::default(),
            pend_wr: Default::default(),
            pend_rd: Default::default(),
            pend_push: Default::default(),
            pend_entry: Default::default(),
            pend_head: Default::default(),
            pend_pop: Default::default(),
            frames: Default::default(),
            f_wr: Default::default(),
            f_rd: Default::default(),
            f_wr_d: Default::default(),
            rd: Default::default(),
            head_valid: Default::default(),
            skip: Default::default(),
            take: Default::default(),
            rd_next: Default::default(),
            f_rd_next: Default::default(),
            depth: Constant::new((DEPTH as u64).to_bits()),
            pend_overflowed: Constant::new((1u64 << PTR_BITS).to_bits()),
            at_accept: Constant::new((PTR_BITS as u64).to_bits()),
            at_frame_len: Constant::new((PTR_BITS as u64 + 1).to_bits()),
            at_meta: Constant::new((PTR_BITS as u64 + 17).to_bits()),
        }
    }
}

impl Logic for RxFifo {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            wr,
            frame_start,
            dropping,
            overflow_count,
            pend_wr,
            pend_rd,
            f_wr,
            f_rd,
            f_wr_d,
            rd
        );
        for i in 0..PEND_DEPTH {
            self.pend[i].clock.next = self.clock.val();
            self.pend[i].d.next = self.pend[i].q.val();
        }
        self.beats.read_clock.next = self.clock.val();
        self.beats.write_clock.next = self.clock.val();
        self.frames.read_clock.next = self.clock.val();
        self.frames.write_clock.next = self.clock.val();

        // ---- write side: every beat is taken ----
        self.occupancy.next = self.wr.q.val() - self.rd.q.val();
        self.full.next = self.occupancy.val() == self.depth.val();
        // At pointer width, before any cast (RUSTHDL.md: `bit_cast(a + b)`).
        self.wr_plus1.next = self.wr.q.val() + 1;
        self.beats.write_address.next = self.wr.q.val().get_bits::<ADDR_BITS>(0);
        self.beats.write_data.next = bit_cast::<BEAT_ENTRY_BITS, 512>(self.s_axis_tdata.val())
            | (bit_cast::<BEAT_ENTRY_BITS, 64>(self.s_axis_tkeep.val()) << 512)
            | (bit_cast::<BEAT_ENTRY_BITS, 1>(self.s_axis_tlast.val().into()) << 576);
        self.beats.write_enable.next = false;
        self.pend_push.next = false;
        // An overflowed frame's entry: no end in `beats`.
        self.pend_entry.next = self.pend_overflowed.val();
        if self.s_axis_tvalid.val() {
            if self.dropping.q.val() {
                if self.s_axis_tlast.val() {
                    self.dropping.d.next = false;
                    self.pend_push.next = true;
                }
            } else if self.full.val() {
                // No room: forget the frame's beats, ignore the rest of it.
                self.wr.d.next = self.frame_start.q.val();
                self.overflow_count.d.next = self.overflow_count.q.val() + 1;
                if self.s_axis_tlast.val() {
                    self.pend_push.next = true;
                } else {
                    self.dropping.d.next = true;
                }
            } else {
                self.beats.write_enable.next = true;
                self.wr.d.next = self.wr_plus1.val();
                if self.s_axis_tlast.val() {
                    self.frame_start.d.next = self.wr_plus1.val();
                    self.pend_push.next = true;
                    self.pend_entry.next =
                        bit_cast::<PEND_ENTRY_BITS, PTR_BITS>(self.wr_plus1.val());
                }
            }
        }

        // ---- verdicts: match them to the frames in order ----
        self.pend_head.next = self.pend[0].q.val();
        for i in 0..PEND_DEPTH {
            if self.pend_push.val() & (self.pend_wr.q.val().get_bits::<2>(0).index() == i) {
                self.pend[i].d.next = self.pend_entry.val();
            }
            if self.pend_rd.q.val().get_bits::<2>(0).index() == i {
                self.pend_head.next = self.pend[i].q.val();
            }
        }
        if self.pend_push.val() {
            self.pend_wr.d.next = self.pend_wr.q.val() + 1;
        }
        self.pend_pop.next =
            self.s_verdict_valid.val() & (self.pend_rd.q.val() != self.pend_wr.q.val());
        self.frames.write_address.next = self.f_wr.q.val().get_bits::<ADDR_BITS>(0);
        self.frames.write_data.next =
            bit_cast::<FRAME_ENTRY_BITS, PTR_BITS>(self.pend_head.val().get_bits::<PTR_BITS>(0))
                | (bit_cast::<FRAME_ENTRY_BITS, 1>((self.s_verdict_reason.val() == 0).into())
                    << self.at_accept.val())
                | (bit_cast::<FRAME_ENTRY_BITS, 16>(self.s_verdict_frame_len.val())
                    << self.at_frame_len.val())
                | (bit_cast::<FRAME_ENTRY_BITS, META_BITS>(self.s_verdict_meta.val())
                    << self.at_meta.val());
        self.frames.write_enable.next = false;
        if self.pend_pop.val() {
            self.pend_rd.d.next = self.pend_rd.q.val() + 1;
            if !self.pend_head.val().get_bit(self.at_accept.val().index()) {
                self.frames.write_enable.next = true;
                self.f_wr.d.next = self.f_wr.q.val() + 1;
            }
        }
        self.f_wr_d.d.next = self.f_wr.q.val();

        // ---- read side: the oldest frame with its verdict ----
        self.head_valid.next = self.f_rd.q.val() != self.f_wr_d.q.val();
        self.m_axis_tvalid.next = self.head_valid.val()
            & self
                .frames
                .read_data
                .val()
                .get_bit(self.at_accept.val().index());
        self.skip.next = self.head_valid.val()
            & !self
                .frames
                .read_data
                .val()
                .get_bit(self.at_accept.val().index());
        self.take.next = self.m_axis_tvalid.val() & self.m_axis_tready.val();
        self.m_axis_tdata.next = self.beats.read_data.val().get_bits::<512>(0);
        self.m_axis_tkeep.next = self.beats.read_data.val().get_bits::<64>(512);
        self.m_axis_tlast.next = self.beats.read_data.val().get_bit(576);
        self.m_axis_frame_len.next = self
            .frames
            .read_data
            .val()
            .get_bits::<16>(self.at_frame_len.val().index());
        self.m_axis_meta.next = self
            .frames
            .read_data
            .val()
            .get_bits::<META_BITS>(self.at_meta.val().index());
        self.rd_next.next = self.rd.q.val();
        self.f_rd_next.next = self.f_rd.q.val();
        if self.take.val() {
            self.rd_next.next = self.rd.q.val() + 1;
            if self.beats.read_data.val().get_bit(576) {
                self.f_rd_next.next = self.f_rd.q.val() + 1;
            }
        }
        if self.skip.val() {
            self.rd_next.next = self.frames.read_data.val().get_bits::<PTR_BITS>(0);
            self.f_rd_next.next = self.f_rd.q.val() + 1;
        }

        if self.reset.val() {
            self.wr.d.next = 0.into();
            self.frame_start.d.next = 0.into();
            self.dropping.d.next = false;
            self.overflow_count.d.next = 0.into();
            self.pend_wr.d.next = 0.into();
            self.pend_rd.d.next = 0.into();
            self.f_wr.d.next = 0.into();
            self.f_wr_d.d.next = 0.into();
            self.rd_next.next = 0.into();
            self.f_rd_next.next = 0.into();
            self.beats.write_enable.next = false;
            self.frames.write_enable.next = false;
        }
        self.rd.d.next = self.rd_next.val();
        self.f_rd.d.next = self.f_rd_next.val();
        self.beats.read_address.next = self.rd_next.val().get_bits::<ADDR_BITS>(0);
        self.frames.read_address.next = self.f_rd_next.val().get_bits::<ADDR_BITS>(0);
        self.overflow_drops.next = self.overflow_count.q.val();
    }
}

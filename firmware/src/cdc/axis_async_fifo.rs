//! An AXI-Stream frame FIFO between two unrelated clocks: the 100G MAC's
//! 322.265625 MHz user clock and the core's 250 MHz clock, one instance per
//! direction per MAC.
//!
//! DESIGN NOTES
//! ------------
//! Store and forward, by frame. The reader sees a frame only once its last
//! beat is written, and then reads it without a gap: the MAC's TX side must
//! not run dry inside a frame (an underrun spoils it), and a gap-free RX
//! stream is what the core's RX path expects. So what crosses from the
//! writer to the reader is not a write pointer but a count of complete
//! frames; the reader fetches the beats of a counted frame up to its `tlast`.
//!
//! Two counters cross, each in Gray code through two flip-flops: the writer's
//! frame count (writer -> reader) and the reader's freed-beat count (reader ->
//! writer). Each steps by at most one per cycle of its own clock, so exactly
//! one bit changes per step, and a synchroniser that samples mid-change
//! gets either the old or the new count, both safe (late is conservative).
//! A write pointer that jumps a whole frame at `tlast` would not have that
//! property: that is why the frame count, not the committed pointer, crosses.
//!
//! Full (writer side): `wr - freed == DEPTH`, computed on Gray codes as
//! "top two bits inverted, the rest equal" (the pointers carry one wrap bit).
//! Empty of frames (reader side): Gray frame count seen == Gray frames started.
//! Frame counts never differ by more than DEPTH (every frame holds a beat), so
//! equality of `A + 1`-bit counts is unambiguous.
//!
//! In `DropWhenFull` mode a frame whose last beat has `tuser` set (the MAC's
//! "this frame is bad": FCS or other error) is rolled back too, and counted in
//! `error_drops`: the core's RX port has no error input, so bad frames stop
//! here. In `BackPressure` mode `tuser` passes through (to the MAC it means
//! "spoil this frame's FCS").
//!
//! When the writer meets a full FIFO mid-frame it rolls the frame back and
//! drops it whole (counted in `overflow_drops`): in `DropWhenFull` mode
//! (the MAC's RX side, which cannot wait) at once; in `BackPressure` mode
//! (the core's TX side) `s_axis_tready` falls instead, and a frame is dropped
//! only if it alone fills the FIFO (it could never complete: the reader has
//! freed everything before it and waits for its end).
//!
//! Read side: the RAM's registered output is the output stage (`s1`): one
//! beat per cycle, `m_axis_t*` straight from the RAM's output register. While
//! a beat waits, the RAM re-reads its address; that entry is not yet freed,
//! so the writer cannot change it.
//!
//! Fault injection for the testbench: `meta_w2r` / `meta_r2w` choose, per bit,
//! whether the first synchroniser flip-flop takes the crossing register's
//! current value or the one before its last edge (a flip-flop that went
//! metastable and resolved either way). The board ties both to 0 and synthesis
//! removes the `*_prev` registers.
//!
//! Why Gray when binary passes the testbench too: each side steps at most
//! once per observation of the other's count and compares for equality only,
//! so a sample mixing two adjacent values allows at most one step that the
//! true count allows as well. Gray code keeps every sample a value the counter
//! really held, so that argument need not hold for every future change (an
//! occupancy subtraction, an almost-full threshold). `PointerCode::Binary` and
//! `Visibility::EveryBeat` (cut-through, which the testbench shows failing)
//! exist only as testbench variants.
//!
//! Constraints for Vivado (firmware's XDC writer): the `*_sync1` flip-flops are
//! ASYNC_REG with their `*_sync2` partners, and the paths into `*_sync1` get
//! `set_max_delay -datapath_only` of the destination period.
//!
//! Reset: `reset` (writer's clock) and `m_reset` (reader's clock) must be
//! asserted together, each for a few cycles of its own clock, as the board's
//! reset sequencer does; resetting one side alone loses the FIFO's contents
//! inconsistently.

use rust_hdl::prelude::*;

/// How the crossing counters are encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PointerCode {
    /// One bit changes per step: the correct design.
    Gray,
    /// Plain binary: several bits change at once. See the module notes for
    /// why this design survives it in simulation; kept as a testbench case.
    Binary,
}

/// What crosses from the writer to the reader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Visibility {
    /// The count of complete frames: the correct design.
    WholeFrames,
    /// The write pointer, beat by beat (cut-through). Broken on purpose for
    /// the testbench: the reader runs dry inside frames and delivers the
    /// beats of frames the writer later rolls back.
    EveryBeat,
}

/// What the writer does when the FIFO is full.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FullPolicy {
    /// Drop the frame being written, whole (a MAC's RX side cannot wait).
    DropWhenFull,
    /// Lower `s_axis_tready` until there is room.
    BackPressure,
}

/// Bits of a RAM entry: tdata, tkeep from bit 512, tlast at 576, tuser at 577.
pub const ENTRY_BITS: usize = 512 + 64 + 2;

/// `A` address bits (DEPTH = 2^A beats); `P` must be `A + 1` (pointer with
/// wrap bit; Rust cannot write `A + 1` in a type yet).
#[derive(LogicBlock)]
pub struct AxisAsyncFifo<const A: usize, const P: usize> {
    /// The writer's clock and synchronous reset (s_axis side).
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, bool>,
    pub s_axis_tdata: Signal<In, Bits<512>>,
    pub s_axis_tkeep: Signal<In, Bits<64>>,
    pub s_axis_tlast: Signal<In, bool>,
    pub s_axis_tuser: Signal<In, bool>,
    pub s_axis_tvalid: Signal<In, bool>,
    pub s_axis_tready: Signal<Out, bool>,
    /// Frames dropped for want of room (writer's clock, wraps).
    pub overflow_drops: Signal<Out, Bits<32>>,
    /// `DropWhenFull` only: frames dropped because their last beat had
    /// `tuser` set (the MAC's "bad frame"), writer's clock, wraps.
    pub error_drops: Signal<Out, Bits<32>>,

    /// The reader's clock and synchronous reset (m_axis side).
    pub m_clock: Signal<In, Clock>,
    pub m_reset: Signal<In, bool>,
    pub m_axis_tdata: Signal<Out, Bits<512>>,
    pub m_axis_tkeep: Signal<Out, Bits<64>>,
    pub m_axis_tlast: Signal<Out, bool>,
    pub m_axis_tuser: Signal<Out, bool>,
    pub m_axis_tvalid: Signal<Out, bool>,
    pub m_axis_tready: Signal<In, bool>,

    /// Fault injection (module notes); 0 on the board.
    pub meta_w2r: Signal<In, Bits<P>>,
    pub meta_r2w: Signal<In, Bits<P>>,

    ram: RAM<Bits<ENTRY_BITS>, A>,

    // --- writer (clock) ---
    wr: DFF<Bits<P>>,
    frame_start: DFF<Bits<P>>,
    dropping: DFF<bool>,
    drops: DFF<Bits<32>>,
    bad: DFF<Bits<32>>,
    frames: DFF<Bits<P>>,
    /// The crossing register: `frames` encoded.
    frames_x: DFF<Bits<P>>,
    /// `frames_x` before its last edge (fault injection only).
    frames_x_prev: DFF<Bits<P>>,
    freed_sync1: DFF<Bits<P>>,
    freed_sync2: DFF<Bits<P>>,
    wr_x: Signal<Local, Bits<P>>,
    frame_start_x: Signal<Local, Bits<P>>,
    full: Signal<Local, bool>,
    /// Full, and the open frame is all there is: it can never complete.
    stuck: Signal<Local, bool>,
    take: Signal<Local, bool>,
    wr_plus1: Signal<Local, Bits<P>>,
    frames_next: Signal<Local, Bits<P>>,
    frames_next_x: Signal<Local, Bits<P>>,

    // --- reader (m_clock) ---
    head: DFF<Bits<P>>,
    s1_valid: DFF<bool>,
    s1_addr: DFF<Bits<A>>,
    open: DFF<bool>,
    started: DFF<Bits<P>>,
    freed: DFF<Bits<P>>,
    freed_x: DFF<Bits<P>>,
    freed_x_prev: DFF<Bits<P>>,
    frames_sync1: DFF<Bits<P>>,
    frames_sync2: DFF<Bits<P>>,
    started_x: Signal<Local, Bits<P>>,
    open_now: Signal<Local, bool>,
    want: Signal<Local, bool>,
    fetch: Signal<Local, bool>,
    consume: Signal<Local, bool>,
    freed_next: Signal<Local, Bits<P>>,
    freed_next_x: Signal<Local, Bits<P>>,

    gray: Constant<bool>,
    cut_through: Constant<bool>,
    head_x: Signal<Local, Bits<P>>,
    drop_when_full: Constant<bool>,
    /// XOR of a count with DEPTH, in the crossing code.
    full_mask: Constant<Bits<P>>,
}

impl<const A: usize, const P: usize> AxisAsyncFifo<A, P> {
    pub fn new(code: PointerCode, policy: FullPolicy) -> Self {
        Self::variant(code, policy, Visibility::WholeFrames)
    }

    /// A design with any of the testbench's broken variants.
    pub fn variant(code: PointerCode, policy: FullPolicy, visibility: Visibility) -> Self {
        assert_eq!(P, A + 1, "AxisAsyncFifo<A, P>: P must be A + 1");
        assert!(A >= 2, "AxisAsyncFifo needs at least 4 entries");
        let full_mask: u64 = match code {
            PointerCode::Gray => 0b11 << (P - 2),
            PointerCode::Binary => 1 << (P - 1),
        };
        Self {
            clock: Default::default(),
            reset: Default::default(),
            s_axis_tdata: Default::default(),
            s_axis_tkeep: Default::default(),
            s_axis_tlast: Default::default(),
            s_axis_tuser: Default::default(),
            s_axis_tvalid: Default::default(),
            s_axis_tready: Default::default(),
            overflow_drops: Default::default(),
            error_drops: Default::default(),
            m_clock: Default::default(),
            m_reset: Default::default(),
            m_axis_tdata: Default::default(),
            m_axis_tkeep: Default::default(),
            m_axis_tlast: Default::default(),
            m_axis_tuser: Default::default(),
            m_axis_tvalid: Default::default(),
            m_axis_tready: Default::default(),
            meta_w2r: Default::default(),
            meta_r2w: Default::default(),
            ram: Default::default(),
            wr: Default::default(),
            frame_start: Default::default(),
            dropping: Default::default(),
            drops: Default::default(),
            bad: Default::default(),
            frames: Default::default(),
            frames_x: Default::default(),
            frames_x_prev: Default::default(),
            freed_sync1: Default::default(),
            freed_sync2: Default::default(),
            wr_x: Default::default(),
            frame_start_x: Default::default(),
            full: Default::default(),
            stuck: Default::default(),
            take: Default::default(),
            wr_plus1: Default::default(),
            frames_next: Default::default(),
            frames_next_x: Default::default(),
            head: Default::default(),
            s1_valid: Default::default(),
            s1_addr: Default::default(),
            open: Default::default(),
            started: Default::default(),
            freed: Default::default(),
            freed_x: Default::default(),
            freed_x_prev: Default::default(),
            frames_sync1: Default::default(),
            frames_sync2: Default::default(),
            started_x: Default::default(),
            open_now: Default::default(),
            want: Default::default(),
            fetch: Default::default(),
            consume: Default::default(),
            freed_next: Default::default(),
            freed_next_x: Default::default(),
            gray: Constant::new(code == PointerCode::Gray),
            cut_through: Constant::new(visibility == Visibility::EveryBeat),
            head_x: Default::default(),
            drop_when_full: Constant::new(policy == FullPolicy::DropWhenFull),
            full_mask: Constant::new(full_mask.to_bits()),
        }
    }
}

impl<const A: usize, const P: usize> Logic for AxisAsyncFifo<A, P> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            wr,
            frame_start,
            dropping,
            drops,
            bad,
            frames,
            frames_x,
            frames_x_prev,
            freed_sync1,
            freed_sync2
        );
        dff_setup!(
            self,
            m_clock,
            head,
            s1_valid,
            s1_addr,
            open,
            started,
            freed,
            freed_x,
            freed_x_prev,
            frames_sync1,
            frames_sync2
        );
        self.ram.write_clock.next = self.clock.val();
        self.ram.read_clock.next = self.m_clock.val();

        // ================= writer (clock) =================
        // Reader's freed count into this domain; `meta_r2w` bits take the
        // value before the reader's last edge.
        self.freed_sync1.d.next = (self.freed_x.q.val() & !self.meta_r2w.val())
            | (self.freed_x_prev.q.val() & self.meta_r2w.val());
        self.freed_sync2.d.next = self.freed_sync1.q.val();
        self.frames_x_prev.d.next = self.frames_x.q.val();

        self.wr_x.next = self.wr.q.val();
        self.frame_start_x.next = self.frame_start.q.val();
        if self.gray.val() {
            self.wr_x.next = self.wr.q.val() ^ (self.wr.q.val() >> 1);
            self.frame_start_x.next = self.frame_start.q.val() ^ (self.frame_start.q.val() >> 1);
        }
        self.full.next = self.wr_x.val() == (self.freed_sync2.q.val() ^ self.full_mask.val());
        self.stuck.next = self.full.val() & (self.freed_sync2.q.val() == self.frame_start_x.val());
        self.s_axis_tready.next =
            self.drop_when_full.val() | !self.full.val() | self.stuck.val() | self.dropping.q.val();
        self.take.next = self.s_axis_tvalid.val() & self.s_axis_tready.val();
        self.wr_plus1.next = self.wr.q.val() + 1;

        self.ram.write_address.next = self.wr.q.val().get_bits::<A>(0);
        self.ram.write_data.next = bit_cast::<ENTRY_BITS, 512>(self.s_axis_tdata.val())
            | (bit_cast::<ENTRY_BITS, 64>(self.s_axis_tkeep.val()) << 512)
            | (bit_cast::<ENTRY_BITS, 1>(self.s_axis_tlast.val().into()) << 576)
            | (bit_cast::<ENTRY_BITS, 1>(self.s_axis_tuser.val().into()) << 577);
        self.ram.write_enable.next = false;
        self.frames_next.next = self.frames.q.val();
        if self.take.val() {
            if self.dropping.q.val() {
                if self.s_axis_tlast.val() {
                    self.dropping.d.next = false;
                }
            } else if self.full.val() {
                // No room: forget the frame's beats, ignore the rest of it.
                self.wr.d.next = self.frame_start.q.val();
                self.drops.d.next = self.drops.q.val() + 1;
                if !self.s_axis_tlast.val() {
                    self.dropping.d.next = true;
                }
            } else {
                self.ram.write_enable.next = true;
                self.wr.d.next = self.wr_plus1.val();
                if self.s_axis_tlast.val() {
                    if self.drop_when_full.val() & self.s_axis_tuser.val() {
                        // The MAC says the frame is bad: forget it.
                        self.wr.d.next = self.frame_start.q.val();
                        self.bad.d.next = self.bad.q.val() + 1;
                    } else {
                        self.frame_start.d.next = self.wr_plus1.val();
                        self.frames_next.next = self.frames.q.val() + 1;
                    }
                }
            }
        }
        if self.cut_through.val() {
            // Broken variant: the write pointer crosses instead.
            self.frames_next.next = self.wr.d.val();
        }
        self.frames_next_x.next = self.frames_next.val();
        if self.gray.val() {
            self.frames_next_x.next = self.frames_next.val() ^ (self.frames_next.val() >> 1);
        }
        self.frames.d.next = self.frames_next.val();
        self.frames_x.d.next = self.frames_next_x.val();
        self.overflow_drops.next = self.drops.q.val();
        self.error_drops.next = self.bad.q.val();

        if self.reset.val() {
            self.wr.d.next = 0.into();
            self.frame_start.d.next = 0.into();
            self.dropping.d.next = false;
            self.drops.d.next = 0.into();
            self.bad.d.next = 0.into();
            self.frames.d.next = 0.into();
            self.frames_x.d.next = 0.into();
            self.frames_x_prev.d.next = 0.into();
            self.freed_sync1.d.next = 0.into();
            self.freed_sync2.d.next = 0.into();
            self.ram.write_enable.next = false;
        }

        // ================= reader (m_clock) =================
        self.frames_sync1.d.next = (self.frames_x.q.val() & !self.meta_w2r.val())
            | (self.frames_x_prev.q.val() & self.meta_w2r.val());
        self.frames_sync2.d.next = self.frames_sync1.q.val();
        self.freed_x_prev.d.next = self.freed_x.q.val();

        self.started_x.next = self.started.q.val();
        if self.gray.val() {
            self.started_x.next = self.started.q.val() ^ (self.started.q.val() >> 1);
        }
        // Does a frame already begun have beats still to fetch? The RAM's
        // output shows the last fetched beat while `s1_valid`.
        self.open_now.next = self.open.q.val();
        if self.s1_valid.q.val() {
            self.open_now.next = !self.ram.read_data.val().get_bit(576);
        }
        self.want.next = !self.s1_valid.q.val() | self.m_axis_tready.val();
        self.fetch.next = self.want.val()
            & (self.open_now.val() | (self.frames_sync2.q.val() != self.started_x.val()));
        if self.cut_through.val() {
            self.head_x.next = self.head.q.val();
            if self.gray.val() {
                self.head_x.next = self.head.q.val() ^ (self.head.q.val() >> 1);
            }
            self.fetch.next = self.want.val() & (self.frames_sync2.q.val() != self.head_x.val());
        }
        self.consume.next = self.s1_valid.q.val() & self.m_axis_tready.val();

        self.m_axis_tvalid.next = self.s1_valid.q.val();
        self.m_axis_tdata.next = self.ram.read_data.val().get_bits::<512>(0);
        self.m_axis_tkeep.next = self.ram.read_data.val().get_bits::<64>(512);
        self.m_axis_tlast.next = self.ram.read_data.val().get_bit(576);
        self.m_axis_tuser.next = self.ram.read_data.val().get_bit(577);

        self.freed_next.next = self.freed.q.val();
        if self.consume.val() {
            self.freed_next.next = self.freed.q.val() + 1;
        }
        self.freed_next_x.next = self.freed_next.val();
        if self.gray.val() {
            self.freed_next_x.next = self.freed_next.val() ^ (self.freed_next.val() >> 1);
        }
        self.freed.d.next = self.freed_next.val();
        self.freed_x.d.next = self.freed_next_x.val();

        // While a beat waits, re-read its entry (not freed, so unchanged).
        self.ram.read_address.next = self.s1_addr.q.val();
        if self.fetch.val() {
            self.ram.read_address.next = self.head.q.val().get_bits::<A>(0);
            self.s1_addr.d.next = self.head.q.val().get_bits::<A>(0);
            self.head.d.next = self.head.q.val() + 1;
            self.s1_valid.d.next = true;
            if !self.open_now.val() {
                self.started.d.next = self.started.q.val() + 1;
            }
        } else if self.want.val() {
            self.s1_valid.d.next = false;
        }
        self.open.d.next = self.open_now.val();

        if self.m_reset.val() {
            self.head.d.next = 0.into();
            self.s1_valid.d.next = false;
            self.open.d.next = false;
            self.started.d.next = 0.into();
            self.freed.d.next = 0.into();
            self.freed_x.d.next = 0.into();
            self.freed_x_prev.d.next = 0.into();
            self.frames_sync1.d.next = 0.into();
            self.frames_sync2.d.next = 0.into();
        }
    }
}

//! TX framer: joins a packet's header beats and its payload stream into one
//! Ethernet frame on the TX AXI-Stream.
//!
//! DESIGN NOTES
//! ------------
//! Inputs are a header record from the TX header builder (two beats in lane
//! order, frame length, header length: `tx_header.rs`) and, for DATA, the
//! payload as a 512-bit AXI-Stream packed from lane 0, as DMA read responses
//! deliver it. Control packets have no payload and are one or two beats; their
//! header beats go out as they are.
//!
//! DATA's headers are always `HOMA_OFFSET + data::HEADER_LEN` = 90 bytes, so
//! the payload starts at lane 26 of the frame's beat 1. The framer relies on
//! that constant (a compile-time assertion checks it ends in beat 1): payload lanes
//! 0..37 of payload beat k go to lanes 26..63 of output beat k + 1, and lanes
//! 38..63 to lanes 0..25 of output beat k + 2. Both are shifts by a constant,
//! pure wiring; the only storage is `hold`, the previous payload beat. A frame
//! whose header length is not 90 and that has payload is not supported (the
//! header builder never makes one).
//!
//! Lengths come from `s_hdr_frame_len` alone: the framer takes exactly
//! ceil((frame_len - header_len) / 64) payload beats per frame and derives
//! every output `tkeep` and `tlast` from the bytes left in the frame. The
//! payload's own `tkeep` and `tlast` are not looked at; the producer must send
//! exactly that many beats (the DMA engine reads exactly the payload length).
//!
//! Per frame, the phases are: accept the header record and send beat 0; then
//! either header beat 1 alone (a two-beat control frame, or DATA without
//! payload), or header beat 1 merged with payload beat 0 (`PAY_FIRST`), then
//! `hold` merged with each further payload beat (`PAY`), and when the last
//! payload beat has more than 38 bytes, one more beat from `hold` alone
//! (`FLUSH`). Every phase sends one beat, so with no back-pressure a frame of
//! n beats takes n cycles, and the next frame's header is accepted the cycle
//! after the previous frame's last beat is loaded: back to back, one beat
//! per cycle.
//!
//! Output stage: the beat is registered (`out_*`), loaded whenever the
//! register is empty or its beat leaves this cycle (`advance`). `advance`
//! depends combinationally on `m_axis_tx_tready`, and gates `s_hdr_ready`
//! and `s_axis_pay_tready`: a one-gate path from the MAC's ready to the
//! producers' readies. The alternative, a skid buffer that registers the
//! ready, costs a second 577-bit register; add it if timing needs it. No
//! output depends combinationally on an input valid (`tvalid` is a register).
//!
//! Invariants: `out_valid` holds until the beat is taken (AXI-Stream); a beat
//! is loaded only when `advance`; `rem` counts bytes of the current frame not
//! yet loaded into the output register, and `pay_left` the payload bytes not
//! yet taken from the payload stream; both reach 0 on the frame's last beat.
//!
//! Timing: a header record accepted at clock edge t has its beat 0 on the
//! output after edge t (visible the cycle after `s_hdr_valid & s_hdr_ready`).

use rust_hdl::prelude::*;

use homa_wire::layout::{data, HOMA_OFFSET};

/// Bytes of headers of every DATA packet: where its payload starts.
pub const DATA_HEADERS_LEN: usize = HOMA_OFFSET + data::HEADER_LEN;
/// Lane of beat 1 at which a DATA payload starts.
pub const PAYLOAD_LANE: usize = DATA_HEADERS_LEN - 64;

// The shifts below assume the headers end inside beat 1.
const _: () = assert!(
    DATA_HEADERS_LEN > 64 && DATA_HEADERS_LEN < 128,
    "DATA headers must end inside beat 1"
);

/// Phases of a frame (values of `phase`).
const IDLE: u64 = 0;
const HDR1: u64 = 1;
const PAY_FIRST: u64 = 2;
const PAY: u64 = 3;
const FLUSH: u64 = 4;

fn c16(v: usize) -> Constant<Bits<16>> {
    Constant::new((v as u64).to_bits())
}

fn c3(v: u64) -> Constant<Bits<3>> {
    Constant::new(v.to_bits())
}

#[derive(LogicBlock)]
pub struct TxFramer {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high: drops the frame in progress and the
    /// output beat.
    pub reset: Signal<In, bool>,

    /// A header record is offered (held with its fields until `s_hdr_ready`).
    pub s_hdr_valid: Signal<In, bool>,
    /// The framer takes the record this cycle (high only between frames).
    pub s_hdr_ready: Signal<Out, bool>,
    /// Frame bytes 0..63, byte 0 in lane 0 (TxHeaderBuilder's `out_beat0`).
    pub s_hdr_beat0: Signal<In, Bits<512>>,
    /// Frame bytes 64..header_len, zero past the header (`out_beat1`).
    pub s_hdr_beat1: Signal<In, Bits<512>>,
    /// Bytes in the whole frame, payload included (1..=65535).
    pub s_hdr_frame_len: Signal<In, Bits<16>>,
    /// Bytes of headers: the frame length for control packets, 90 for DATA.
    pub s_hdr_header_len: Signal<In, Bits<16>>,

    /// Payload of DATA frames, first byte in lane 0 of each frame's first
    /// beat; frames in the order of their header records.
    pub s_axis_pay_tdata: Signal<In, Bits<512>>,
    /// Not looked at: lengths come from the header record.
    pub s_axis_pay_tkeep: Signal<In, Bits<64>>,
    pub s_axis_pay_tvalid: Signal<In, bool>,
    /// Not looked at: lengths come from the header record.
    pub s_axis_pay_tlast: Signal<In, bool>,
    pub s_axis_pay_tready: Signal<Out, bool>,

    /// Frames to the MAC, first byte in lane 0, `tkeep` exactly the frame.
    pub m_axis_tx_tdata: Signal<Out, Bits<512>>,
    pub m_axis_tx_tkeep: Signal<Out, Bits<64>>,
    pub m_axis_tx_tvalid: Signal<Out, bool>,
    pub m_axis_tx_tlast: Signal<Out, bool>,
    pub m_axis_tx_tready: Signal<In, bool>,

    // --- frame state ---
    /// Which beat of the frame comes next: IDLE, HDR1, PAY_FIRST, PAY, FLUSH.
    phase: DFF<Bits<3>>,
    /// Header beat 1 of the frame in progress, latched with the record.
    hdr1: DFF<Bits<512>>,
    /// The last payload beat taken: its lanes 38..63 start the next beat.
    hold: DFF<Bits<512>>,
    /// Bytes of the frame not yet loaded into the output register.
    rem: DFF<Bits<16>>,
    /// Payload bytes of the frame not yet taken from the payload stream.
    pay_left: DFF<Bits<16>>,

    // --- output register ---
    out_valid: DFF<bool>,
    out_data: DFF<Bits<512>>,
    out_keep: DFF<Bits<64>>,
    out_last: DFF<bool>,

    // --- combinational ---
    /// The output register can take a beat this cycle.
    advance: Signal<Local, bool>,
    /// A payload beat is taken this cycle.
    pay_take: Signal<Local, bool>,
    /// The byte count the beat loaded this cycle covers from: the frame
    /// length for beat 0, `rem` after.
    load_rem: Signal<Local, Bits<16>>,
    /// `tkeep` for a beat with `load_rem` bytes left in the frame.
    load_keep: Signal<Local, Bits<64>>,
    /// `rem` and `pay_left` after the beat loaded this cycle.
    rem_after: Signal<Local, Bits<16>>,
    pay_after: Signal<Local, Bits<16>>,
    /// Payload beat `k` placed at lanes 26..63 (its lanes 0..37).
    pay_low: Signal<Local, Bits<512>>,
    /// `hold` placed at lanes 0..25 (its lanes 38..63).
    hold_high: Signal<Local, Bits<512>>,

    // --- constants ---
    /// Lanes 0..25 of beat 1: header, for DATA.
    hdr1_mask: Constant<Bits<512>>,
    /// Bit shift of the payload into beat 1: 8 * 26.
    shift_up: Constant<Bits<16>>,
    /// Bit shift of the held beat's tail down to lane 0: 8 * 38.
    shift_down: Constant<Bits<16>>,
    ones64: Constant<Bits<64>>,
    beat_bytes: Constant<Bits<16>>,
    phase_idle: Constant<Bits<3>>,
    phase_hdr1: Constant<Bits<3>>,
    phase_pay_first: Constant<Bits<3>>,
    phase_pay: Constant<Bits<3>>,
    phase_flush: Constant<Bits<3>>,
}

impl Default for TxFramer {
    fn default() -> Self {
        let mut hdr1_mask = Bits::<512>::default();
        for bit in 0..8 * PAYLOAD_LANE {
            hdr1_mask = hdr1_mask.replace_bit(bit, true);
        }
        Self {
            clock: Default::default(),
            reset: Default::default(),
            s_hdr_valid: Default::default(),
            s_hdr_ready: Default::default(),
            s_hdr_beat0: Default::default(),
            s_hdr_beat1: Default::default(),
            s_hdr_frame_len: Default::default(),
            s_hdr_header_len: Default::default(),
            s_axis_pay_tdata: Default::default(),
            s_axis_pay_tkeep: Default::default(),
            s_axis_pay_tvalid: Default::default(),
            s_axis_pay_tlast: Default::default(),
            s_axis_pay_tready: Default::default(),
            m_axis_tx_tdata: Default::default(),
            m_axis_tx_tkeep: Default::default(),
            m_axis_tx_tvalid: Default::default(),
            m_axis_tx_tlast: Default::default(),
            m_axis_tx_tready: Default::default(),
            phase: Default::default(),
            hdr1: Default::default(),
            hold: Default::default(),
            rem: Default::default(),
            pay_left: Default::default(),
            out_valid: Default::default(),
            out_data: Default::default(),
            out_keep: Default::default(),
            out_last: Default::default(),
            advance: Default::default(),
            pay_take: Default::default(),
            load_rem: Default::default(),
            load_keep: Default::default(),
            rem_after: Default::default(),
            pay_after: Default::default(),
            pay_low: Default::default(),
            hold_high: Default::default(),
            hdr1_mask: Constant::new(hdr1_mask),
            shift_up: c16(8 * PAYLOAD_LANE),
            shift_down: c16(8 * (64 - PAYLOAD_LANE)),
            ones64: Constant::new(u64::MAX.to_bits()),
            beat_bytes: c16(64),
            phase_idle: c3(IDLE),
            phase_hdr1: c3(HDR1),
            phase_pay_first: c3(PAY_FIRST),
            phase_pay: c3(PAY),
            phase_flush: c3(FLUSH),
        }
    }
}

impl Logic for TxFramer {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, phase, hdr1, hold, rem, pay_left, out_valid, out_data, out_keep, out_last
        );

        // The output register is free, or its beat leaves at this edge.
        self.advance.next = (!self.out_valid.q.val()) | self.m_axis_tx_tready.val();
        if self.m_axis_tx_tready.val() {
            self.out_valid.d.next = false;
        }

        self.s_hdr_ready.next = self.advance.val() & (self.phase.q.val() == self.phase_idle.val());
        self.s_axis_pay_tready.next = self.advance.val()
            & ((self.phase.q.val() == self.phase_pay_first.val())
                | (self.phase.q.val() == self.phase_pay.val()));
        self.pay_take.next = self.s_axis_pay_tready.val() & self.s_axis_pay_tvalid.val();

        // Bytes left in the frame as the next beat is loaded, and its tkeep.
        self.load_rem.next = self.rem.q.val();
        if self.phase.q.val() == self.phase_idle.val() {
            self.load_rem.next = self.s_hdr_frame_len.val();
        }
        self.load_keep.next = self.ones64.val();
        if self.load_rem.val() < self.beat_bytes.val() {
            self.load_keep.next = !(self.ones64.val() << self.load_rem.val().get_bits::<6>(0));
        }
        self.rem_after.next = 0.into();
        if self.load_rem.val() > self.beat_bytes.val() {
            self.rem_after.next = self.load_rem.val() - self.beat_bytes.val();
        }
        self.pay_after.next = 0.into();
        if self.pay_left.q.val() > self.beat_bytes.val() {
            self.pay_after.next = self.pay_left.q.val() - self.beat_bytes.val();
        }

        // The constant lane shifts.
        self.pay_low.next = self.s_axis_pay_tdata.val() << self.shift_up.val();
        self.hold_high.next = self.hold.q.val() >> self.shift_down.val();

        if self.phase.q.val() == self.phase_idle.val() {
            if self.s_hdr_ready.val() & self.s_hdr_valid.val() {
                // Beat 0 out; the rest of the frame from the record.
                self.out_valid.d.next = true;
                self.out_data.d.next = self.s_hdr_beat0.val();
                self.out_keep.d.next = self.load_keep.val();
                self.out_last.d.next = self.load_rem.val() <= self.beat_bytes.val();
                self.hdr1.d.next = self.s_hdr_beat1.val();
                self.rem.d.next = self.rem_after.val();
                self.pay_left.d.next = self.s_hdr_frame_len.val() - self.s_hdr_header_len.val();
                if self.load_rem.val() > self.beat_bytes.val() {
                    if self.s_hdr_frame_len.val() > self.s_hdr_header_len.val() {
                        self.phase.d.next = self.phase_pay_first.val();
                    } else {
                        self.phase.d.next = self.phase_hdr1.val();
                    }
                }
            }
        } else if self.phase.q.val() == self.phase_hdr1.val() {
            // Header beat 1 alone: the frame's last beat.
            if self.advance.val() {
                self.out_valid.d.next = true;
                self.out_data.d.next = self.hdr1.q.val();
                self.out_keep.d.next = self.load_keep.val();
                self.out_last.d.next = true;
                self.rem.d.next = 0.into();
                self.phase.d.next = self.phase_idle.val();
            }
        } else if self.phase.q.val() == self.phase_flush.val() {
            // The tail of the last payload beat: the frame's last beat.
            if self.advance.val() {
                self.out_valid.d.next = true;
                self.out_data.d.next = self.hold_high.val();
                self.out_keep.d.next = self.load_keep.val();
                self.out_last.d.next = true;
                self.rem.d.next = 0.into();
                self.phase.d.next = self.phase_idle.val();
            }
        } else if self.pay_take.val() {
            // PAY_FIRST or PAY: a payload beat merged with what precedes it.
            self.out_valid.d.next = true;
            self.out_data.d.next = self.hold_high.val() | self.pay_low.val();
            if self.phase.q.val() == self.phase_pay_first.val() {
                self.out_data.d.next =
                    (self.hdr1.q.val() & self.hdr1_mask.val()) | self.pay_low.val();
            }
            self.out_keep.d.next = self.load_keep.val();
            self.out_last.d.next = self.load_rem.val() <= self.beat_bytes.val();
            self.hold.d.next = self.s_axis_pay_tdata.val();
            self.rem.d.next = self.rem_after.val();
            self.pay_left.d.next = self.pay_after.val();
            if self.load_rem.val() <= self.beat_bytes.val() {
                self.phase.d.next = self.phase_idle.val();
            } else if self.pay_after.val() == 0 {
                self.phase.d.next = self.phase_flush.val();
            } else {
                self.phase.d.next = self.phase_pay.val();
            }
        }

        if self.reset.val() {
            self.phase.d.next = self.phase_idle.val();
            self.out_valid.d.next = false;
        }

        self.m_axis_tx_tvalid.next = self.out_valid.q.val();
        self.m_axis_tx_tdata.next = self.out_data.q.val();
        self.m_axis_tx_tkeep.next = self.out_keep.q.val();
        self.m_axis_tx_tlast.next = self.out_last.q.val();
    }
}

//! The core's DMA writes as memory-write TLPs on the hard block's requester
//! request stream (RQ): 512-bit, Dword-aligned mode, straddle off (PG213,
//! "Requester Request Interface Operation (512-bit)").
//!
//! The core's write port carries beats of (address of lane 0, 64 data lanes,
//! a byte strobe, `last`); the address need not be aligned and the strobe is
//! a run of lanes (the RX engine writes each frame beat where it lands, the
//! completion writer whole 64-byte entries). A TLP's descriptor names its
//! length, so it cannot go out before its last beat is known: TLPs are built
//! store-and-forward.
//!
//! DESIGN NOTES
//! ------------
//! Four steps, each one beat a cycle:
//!
//! PREP     From the input slice (`DmaWriteSlice`: a registered ready towards
//!          the core), a beat's first and end byte addresses (from its
//!          strobe's run) and the MPS multiple above its first byte, into
//!          registers.
//! COLLECT  Beats are appended to an open TLP while they continue
//!          it byte for byte (the next beat's address is the last one's + 64,
//!          the last one's strobe ran to lane 63, this one's starts at lane 0).
//!          A TLP never crosses an address that is a multiple of the maximum
//!          payload size (MPS, at most 4096, so no 4 KB boundary is crossed
//!          either, and no TLP is longer than MPS). A beat whose bytes cross
//!          such a boundary is taken in two cycles, the part below closing the
//!          TLP, the part above opening the next one: once per MPS bytes, and
//!          the emitter needs a cycle per TLP for the descriptor anyway. A TLP
//!          closes at the boundary, on `last`, or (one cycle, beat not taken)
//!          when a beat does not continue it. Each beat part is stored as it
//!          came, unshifted, in `lines` (a ring of 32 beats, two RAM banks by
//!          the line's parity); the TLP's record (first byte, end, the first
//!          line's lane-0 address, ring position, line count) goes to a
//!          4-entry FIFO.
//! ADDRESS  For RQ beat j of the head TLP, read the two ring lines it draws
//!          from, one from each bank (consecutive lines have opposite parity):
//!          payload byte p (address F + p, F the first byte's Dword address)
//!          goes to RQ byte 16 + p, after the 16-byte descriptor. With
//!          d = F - 16 - (lane-0 address of line 0) = 64q + r (q is 0 or -1,
//!          0 <= r < 64), beat j is bytes r..r+63 of {line j+q+1, line j+q}.
//! SHIFT    The next cycle: that funnel shift (byte granular), the descriptor
//!          over lanes 0-15 of beat 0, into the output register.
//! Lanes outside the TLP's bytes carry whatever the ring held: the first and
//! last Dwords' byte enables and `tkeep` tell the hard block which are data.
//!
//! A strobe with a hole (not one run of lanes) cannot be one write TLP (only
//! the first and last Dwords have byte enables); the core never makes one.
//! Such a beat is dropped and counted (`holes`) rather than written wrong. A
//! beat with no strobe bit writes nothing (its `last` still closes a TLP).
//!
//! Stall: one signal, `go` (the output register is empty or taken this
//! cycle), moves ADDRESS and SHIFT together; when it is low the banks are
//! read again at the held addresses, so their registered outputs keep the
//! beat in SHIFT. A TLP's ring lines are freed when its last beat enters the
//! output register.
//!
//! Throughput: a TLP of n payload beats (Dword-aligned with the 16-byte
//! descriptor in front) takes n or n+1 RQ beats; at MPS 256, 4 payload beats
//! take 5 (80% of the 16 GB/s interface, above what a Gen3 x16 link carries);
//! MPS is capped at `MAX_PAYLOAD_BYTES` (512: 8 beats in 9).
//! Latency: a TLP's first beat leaves 4 cycles after its last input beat
//! passes the slice (prep, collect, address, shift).

use rust_hdl::prelude::*;

use crate::leaf::dma_write_slice::DmaWriteSlice;

/// The largest TLP payload written, whatever the link allows: the ring holds
/// 32 beats, and 512 bytes in 9 RQ beats is 89% of the interface.
pub const MAX_PAYLOAD_BYTES: u64 = 512;
/// Beats in the ring; TLP records in the FIFO.
pub const RING_LINES: usize = 32;
pub const RECORDS: usize = 4;

/// `cfg_max_payload` (the hard block's encoding: 0 = 128 B, 1 = 256 B,
/// 2 = 512 B, 3 = 1024 B) to the MPS used here, in bytes.
pub fn payload_bytes(cfg_max_payload: u8) -> u64 {
    (128u64 << cfg_max_payload.min(3)).min(MAX_PAYLOAD_BYTES)
}

#[derive(LogicBlock)]
pub struct RqWriter {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, bool>,
    /// The core's DMA write port.
    pub s_wr_valid: Signal<In, bool>,
    pub s_wr_ready: Signal<Out, bool>,
    pub s_wr_addr: Signal<In, Bits<64>>,
    pub s_wr_data: Signal<In, Bits<512>>,
    pub s_wr_strb: Signal<In, Bits<64>>,
    pub s_wr_last: Signal<In, bool>,
    /// Write TLPs, for the RQ arbiter: AXI-Stream beats with the RQ tuser
    /// fields that matter (first/last byte enables, start of packet).
    pub m_valid: Signal<Out, bool>,
    pub m_ready: Signal<In, bool>,
    pub m_data: Signal<Out, Bits<512>>,
    pub m_keep: Signal<Out, Bits<16>>,
    pub m_last: Signal<Out, bool>,
    pub m_sop: Signal<Out, bool>,
    pub m_first_be: Signal<Out, Bits<4>>,
    pub m_last_be: Signal<Out, Bits<4>>,
    /// The last Dword's index in the beat (15 but in a TLP's last beat).
    pub m_eop_ptr: Signal<Out, Bits<4>>,
    /// The hard block's `cfg_max_payload` (0 = 128 B ... 3 = 1024 B).
    pub cfg_max_payload: Signal<In, Bits<2>>,
    /// Beats dropped for a strobe with a hole (wrapping).
    pub holes: Signal<Out, Bits<32>>,
    /// Write TLPs sent (wrapping).
    pub tlps: Signal<Out, Bits<32>>,

    slice: DmaWriteSlice,
    bank0: RAM<Bits<512>, 4>,
    bank1: RAM<Bits<512>, 4>,
    // ---- COLLECT ----
    /// The beat in the slice is split and its upper part is next.
    half: DFF<bool>,
    /// PREP: the beat from the slice, its first byte's and end's addresses,
    /// the MPS multiple above its first byte, whether its bytes cross it.
    p_valid: DFF<bool>,
    p_addr: DFF<Bits<64>>,
    p_data: DFF<Bits<512>>,
    p_last: DFF<bool>,
    p_nz: DFF<bool>,
    p_run_ok: DFF<bool>,
    p_fb: DFF<Bits<64>>,
    p_eb: DFF<Bits<64>>,
    p_bnd: DFF<Bits<64>>,
    p_cross: DFF<bool>,
    /// The beat's lane-0 address + 64; its first lane is lane 0; its run
    /// reaches lane 63; whether its line is the open TLP's next, against
    /// t_anext as it was (`p_cont_t`) and as the beat leaving moved it
    /// (`p_cont_p`), and which holds (`p_moved`): worked out as it is
    /// taken (`contig` below).
    p_next: DFF<Bits<64>>,
    p_lo0: DFF<bool>,
    p_full: DFF<bool>,
    p_cont_t: DFF<bool>,
    p_cont_p: DFF<bool>,
    p_moved: DFF<bool>,
    /// The open TLP: first byte, one past its last byte, the lane-0 address
    /// a beat continuing it has, low 7 bits of its first line's lane-0 address, ring
    /// position of its first line, lines so far.
    open: DFF<bool>,
    t_start: DFF<Bits<64>>,
    t_end: DFF<Bits<64>>,
    t_anext: DFF<Bits<64>>,
    /// The open TLP's last line runs to its end (`t_end == t_anext`).
    t_full: DFF<bool>,
    t_a0: DFF<Bits<7>>,
    t_first: DFF<Bits<5>>,
    t_lines: DFF<Bits<4>>,
    /// Ring pointers (6 bits: one wrap bit): next line written, oldest held.
    wr: DFF<Bits<6>>,
    rd: DFF<Bits<6>>,
    /// Record FIFO: entries and pointers (3 bits: one wrap bit).
    r_start: [DFF<Bits<64>>; RECORDS],
    r_end: [DFF<Bits<12>>; RECORDS],
    r_a0: [DFF<Bits<7>>; RECORDS],
    r_first: [DFF<Bits<5>>; RECORDS],
    r_lines: [DFF<Bits<4>>; RECORDS],
    rw: DFF<Bits<3>>,
    rr: DFF<Bits<3>>,
    holes_q: DFF<Bits<32>>,
    tlps_q: DFF<Bits<32>>,
    // ---- ADDRESS: beat index in the head TLP ----
    bj: DFF<Bits<4>>,
    // ---- SHIFT: the beat whose lines the banks are reading ----
    c_valid: DFF<bool>,
    c_lo_bank: DFF<bool>,
    c_r: DFF<Bits<6>>,
    c_first: DFF<bool>,
    c_last: DFF<bool>,
    c_keep: DFF<Bits<16>>,
    c_eop: DFF<Bits<4>>,
    c_desc: DFF<Bits<128>>,
    c_fbe: DFF<Bits<4>>,
    c_lbe: DFF<Bits<4>>,
    c_lines: DFF<Bits<4>>,
    c_addr0: DFF<Bits<4>>,
    c_addr1: DFF<Bits<4>>,
    // ---- output register ----
    o_valid: DFF<bool>,
    o_data: DFF<Bits<512>>,
    o_keep: DFF<Bits<16>>,
    o_eop: DFF<Bits<4>>,
    o_last: DFF<bool>,
    o_sop: DFF<bool>,
    o_fbe: DFF<Bits<4>>,
    o_lbe: DFF<Bits<4>>,

    // Locals: COLLECT.
    strb: Signal<Local, Bits<64>>,
    lowbit: Signal<Local, Bits<64>>,
    runend: Signal<Local, Bits<64>>,
    run_ok: Signal<Local, bool>,
    lo_lane: Signal<Local, Bits<64>>,
    end_lane: Signal<Local, Bits<64>>,
    end_lane0: Signal<Local, Bits<64>>,
    fb: Signal<Local, Bits<64>>,
    eb: Signal<Local, Bits<64>>,
    mps_mask: Signal<Local, Bits<64>>,
    boundary: Signal<Local, Bits<64>>,
    crosses: Signal<Local, bool>,
    ps: Signal<Local, Bits<64>>,
    pe: Signal<Local, Bits<64>>,
    take: Signal<Local, bool>,
    contig: Signal<Local, bool>,
    /// The beat's line is the one after the open TLP's last.
    next_line: Signal<Local, bool>,
    ring_used: Signal<Local, Bits<6>>,
    rec_used: Signal<Local, Bits<3>>,
    room: Signal<Local, bool>,
    push: Signal<Local, bool>,
    rec_start: Signal<Local, Bits<64>>,
    rec_end: Signal<Local, Bits<12>>,
    rec_a0: Signal<Local, Bits<7>>,
    rec_first: Signal<Local, Bits<5>>,
    rec_lines: Signal<Local, Bits<4>>,
    write_line: Signal<Local, bool>,
    // Locals: ADDRESS.
    h_start: Signal<Local, Bits<64>>,
    h_end: Signal<Local, Bits<12>>,
    h_a0: Signal<Local, Bits<7>>,
    h_first: Signal<Local, Bits<5>>,
    h_lines: Signal<Local, Bits<4>>,
    h_len: Signal<Local, Bits<12>>,
    h_dw: Signal<Local, Bits<12>>,
    h_beats: Signal<Local, Bits<12>>,
    h_d: Signal<Local, Bits<7>>,
    lo_line: Signal<Local, Bits<5>>,
    hi_line: Signal<Local, Bits<5>>,
    na0: Signal<Local, Bits<4>>,
    na1: Signal<Local, Bits<4>>,
    fbe: Signal<Local, Bits<4>>,
    fbe0: Signal<Local, Bits<4>>,
    lbe0: Signal<Local, Bits<4>>,
    lbe: Signal<Local, Bits<4>>,
    last_lane: Signal<Local, Bits<2>>,
    keep_n: Signal<Local, Bits<12>>,
    desc: Signal<Local, Bits<128>>,
    has_head: Signal<Local, bool>,
    b_last: Signal<Local, bool>,
    go: Signal<Local, bool>,
    // Locals: SHIFT.
    lo_data: Signal<Local, Bits<512>>,
    hi_data: Signal<Local, Bits<512>>,
    pair: Signal<Local, Bits<1024>>,
    shifted: Signal<Local, Bits<1024>>,
    beat: Signal<Local, Bits<512>>,
    beat0: Signal<Local, Bits<512>>,
    all_keep: Constant<Bits<16>>,
    desc_mask: Constant<Bits<512>>,
    m_bit0: Constant<Bits<64>>,
    m_bit1: Constant<Bits<64>>,
    m_bit2: Constant<Bits<64>>,
    m_bit3: Constant<Bits<64>>,
    m_bit4: Constant<Bits<64>>,
    m_bit5: Constant<Bits<64>>,
}

impl Default for RqWriter {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            s_wr_valid: Default::default(),
            s_wr_ready: Default::default(),
            s_wr_addr: Default::default(),
            s_wr_data: Default::default(),
            s_wr_strb: Default::default(),
            s_wr_last: Default::default(),
            m_valid: Default::default(),
            m_ready: Default::default(),
            m_data: Default::default(),
            m_keep: Default::default(),
            m_last: Default::default(),
            m_sop: Default::default(),
            m_first_be: Default::default(),
            m_last_be: Default::default(),
            m_eop_ptr: Default::default(),
            cfg_max_payload: Default::default(),
            holes: Default::default(),
            tlps: Default::default(),
            slice: Default::default(),
            bank0: Default::default(),
            bank1: Default::default(),
            half: Default::default(),
            p_valid: Default::default(),
            p_addr: Default::default(),
            p_data: Default::default(),
            p_last: Default::default(),
            p_nz: Default::default(),
            p_run_ok: Default::default(),
            p_fb: Default::default(),
            p_eb: Default::default(),
            p_bnd: Default::default(),
            p_cross: Default::default(),
            p_next: Default::default(),
            p_lo0: Default::default(),
            p_full: Default::default(),
            p_cont_t: Default::default(),
            p_cont_p: Default::default(),
            p_moved: Default::default(),
            open: Default::default(),
            t_start: Default::default(),
            t_end: Default::default(),
            t_anext: Default::default(),
            t_full: Default::default(),
            t_a0: Default::default(),
            t_first: Default::default(),
            t_lines: Default::default(),
            wr: Default::default(),
            rd: Default::default(),
            r_start: Default::default(),
            r_end: Default::default(),
            r_a0: Default::default(),
            r_first: Default::default(),
            r_lines: Default::default(),
            rw: Default::default(),
            rr: Default::default(),
            holes_q: Default::default(),
            tlps_q: Default::default(),
            bj: Default::default(),
            c_valid: Default::default(),
            c_lo_bank: Default::default(),
            c_r: Default::default(),
            c_first: Default::default(),
            c_last: Default::default(),
            c_keep: Default::default(),
            c_eop: Default::default(),
            c_desc: Default::default(),
            c_fbe: Default::default(),
            c_lbe: Default::default(),
            c_lines: Default::default(),
            c_addr0: Default::default(),
            c_addr1: Default::default(),
            o_valid: Default::default(),
            o_data: Default::default(),
            o_keep: Default::default(),
            o_eop: Default::default(),
            o_last: Default::default(),
            o_sop: Default::default(),
            o_fbe: Default::default(),
            o_lbe: Default::default(),
            strb: Default::default(),
            lowbit: Default::default(),
            runend: Default::default(),
            run_ok: Default::default(),
            lo_lane: Default::default(),
            end_lane: Default::default(),
            end_lane0: Default::default(),
            fb: Default::default(),
            eb: Default::default(),
            mps_mask: Default::default(),
            boundary: Default::default(),
            crosses: Default::default(),
            ps: Default::default(),
            pe: Default::default(),
            take: Default::default(),
            contig: Default::default(),
            next_line: Default::default(),
            ring_used: Default::default(),
            rec_used: Default::default(),
            room: Default::default(),
            push: Default::default(),
            rec_start: Default::default(),
            rec_end: Default::default(),
            rec_a0: Default::default(),
            rec_first: Default::default(),
            rec_lines: Default::default(),
            write_line: Default::default(),
            h_start: Default::default(),
            h_end: Default::default(),
            h_a0: Default::default(),
            h_first: Default::default(),
            h_lines: Default::default(),
            h_len: Default::default(),
            h_dw: Default::default(),
            h_beats: Default::default(),
            h_d: Default::default(),
            lo_line: Default::default(),
            hi_line: Default::default(),
            na0: Default::default(),
            na1: Default::default(),
            fbe: Default::default(),
            fbe0: Default::default(),
            lbe0: Default::default(),
            lbe: Default::default(),
            last_lane: Default::default(),
            keep_n: Default::default(),
            desc: Default::default(),
            has_head: Default::default(),
            b_last: Default::default(),
            go: Default::default(),
            lo_data: Default::default(),
            hi_data: Default::default(),
            pair: Default::default(),
            shifted: Default::default(),
            beat: Default::default(),
            beat0: Default::default(),
            all_keep: Constant::new(0xFFFFu64.to_bits()),
            desc_mask: Constant::new(bits_mask(128)),
            m_bit0: Constant::new(0xAAAA_AAAA_AAAA_AAAAu64.to_bits()),
            m_bit1: Constant::new(0xCCCC_CCCC_CCCC_CCCCu64.to_bits()),
            m_bit2: Constant::new(0xF0F0_F0F0_F0F0_F0F0u64.to_bits()),
            m_bit3: Constant::new(0xFF00_FF00_FF00_FF00u64.to_bits()),
            m_bit4: Constant::new(0xFFFF_0000_FFFF_0000u64.to_bits()),
            m_bit5: Constant::new(0xFFFF_FFFF_0000_0000u64.to_bits()),
        }
    }
}

/// A 512-bit value with bits `n..512` set (the lanes after the descriptor).
pub(crate) fn bits_mask(n: usize) -> Bits<512> {
    let mut b: Bits<512> = 0.into();
    for i in n..512 {
        b = b | (bit_cast::<512, 1>(true.into()) << (i as u64));
    }
    b
}

impl Logic for RqWriter {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, half, p_valid, p_addr, p_data, p_last, p_nz, p_run_ok, p_fb, p_eb, p_bnd,
            p_cross, p_next, p_lo0, p_full, p_cont_t, p_cont_p, p_moved, open, t_start, t_end,
            t_anext, t_full, t_a0, t_first, t_lines, wr, rd, rw, rr, holes_q, tlps_q, bj, c_valid,
            c_lo_bank, c_r, c_first, c_last, c_keep, c_desc, c_fbe, c_lbe, c_lines, c_addr0,
            c_addr1, c_eop, o_valid, o_data, o_keep, o_eop, o_last, o_sop, o_fbe, o_lbe
        );
        for i in 0..RECORDS {
            self.r_start[i].clock.next = self.clock.val();
            self.r_start[i].d.next = self.r_start[i].q.val();
            self.r_end[i].clock.next = self.clock.val();
            self.r_end[i].d.next = self.r_end[i].q.val();
            self.r_a0[i].clock.next = self.clock.val();
            self.r_a0[i].d.next = self.r_a0[i].q.val();
            self.r_first[i].clock.next = self.clock.val();
            self.r_first[i].d.next = self.r_first[i].q.val();
            self.r_lines[i].clock.next = self.clock.val();
            self.r_lines[i].d.next = self.r_lines[i].q.val();
        }
        self.slice.clock.next = self.clock.val();
        self.slice.reset.next = self.reset.val();
        self.bank0.read_clock.next = self.clock.val();
        self.bank0.write_clock.next = self.clock.val();
        self.bank1.read_clock.next = self.clock.val();
        self.bank1.write_clock.next = self.clock.val();
        self.slice.s_valid.next = self.s_wr_valid.val();
        self.s_wr_ready.next = self.slice.s_ready.val();
        self.slice.s_addr.next = self.s_wr_addr.val();
        self.slice.s_data.next = self.s_wr_data.val();
        self.slice.s_strb.next = self.s_wr_strb.val();
        self.slice.s_last.next = self.s_wr_last.val();

        // ================= COLLECT =================
        // The strobe's run: its lowest lane (one-hot `lowbit`) and the lane
        // after its highest (`runend`: one-hot, 0 when the run reaches lane
        // 63); a single run iff adding `lowbit` clears every strobe bit.
        self.strb.next = self.slice.m_strb.val();
        self.lowbit.next = self.strb.val() & (!self.strb.val() + 1);
        self.runend.next = self.strb.val() + self.lowbit.val();
        self.run_ok.next = ((self.runend.val() & self.strb.val()) == 0) & (self.strb.val() != 0);
        self.lo_lane.next =
            (bit_cast::<64, 1>(((self.lowbit.val() & self.m_bit0.val()) != 0).into()) << 0)
                | (bit_cast::<64, 1>(((self.lowbit.val() & self.m_bit1.val()) != 0).into()) << 1)
                | (bit_cast::<64, 1>(((self.lowbit.val() & self.m_bit2.val()) != 0).into()) << 2)
                | (bit_cast::<64, 1>(((self.lowbit.val() & self.m_bit3.val()) != 0).into()) << 3)
                | (bit_cast::<64, 1>(((self.lowbit.val() & self.m_bit4.val()) != 0).into()) << 4)
                | (bit_cast::<64, 1>(((self.lowbit.val() & self.m_bit5.val()) != 0).into()) << 5);
        self.end_lane0.next =
            (bit_cast::<64, 1>(((self.runend.val() & self.m_bit0.val()) != 0).into()) << 0)
                | (bit_cast::<64, 1>(((self.runend.val() & self.m_bit1.val()) != 0).into()) << 1)
                | (bit_cast::<64, 1>(((self.runend.val() & self.m_bit2.val()) != 0).into()) << 2)
                | (bit_cast::<64, 1>(((self.runend.val() & self.m_bit3.val()) != 0).into()) << 3)
                | (bit_cast::<64, 1>(((self.runend.val() & self.m_bit4.val()) != 0).into()) << 4)
                | (bit_cast::<64, 1>(((self.runend.val() & self.m_bit5.val()) != 0).into()) << 5);
        self.end_lane.next = self.end_lane0.val();
        if self.runend.val() == 0 {
            self.end_lane.next = 64.into();
        }
        self.fb.next = self.slice.m_addr.val() + self.lo_lane.val();
        self.eb.next = self.slice.m_addr.val() + self.end_lane.val();
        self.mps_mask.next = 511.into();
        if self.cfg_max_payload.val() == 0 {
            self.mps_mask.next = 127.into();
        }
        if self.cfg_max_payload.val() == 1 {
            self.mps_mask.next = 255.into();
        }
        self.boundary.next = (self.fb.val() | self.mps_mask.val()) + 1;
        self.crosses.next = !self.half.q.val() & self.p_cross.q.val();
        self.ps.next = self.p_fb.q.val();
        if self.half.q.val() {
            self.ps.next = self.p_bnd.q.val();
        }
        self.pe.next = self.p_eb.q.val();
        if self.crosses.val() {
            self.pe.next = self.p_bnd.q.val();
        }
        // The beat continues the open TLP: its first byte is the TLP's end
        // (`t_end == p_fb`) and its line the next (`p_addr == t_anext`).
        // With the line the next, the first follows from registered bits:
        // t_end is in (t_anext - 64, t_anext] and p_fb in [p_addr, p_addr +
        // 64), so they meet only at t_anext == p_addr, the last line full
        // and this one starting at lane 0. No 64-bit compare here: this
        // decision gates the slice's pop and every PREP register.
        self.next_line.next = self.p_cont_t.q.val();
        if self.p_moved.q.val() {
            self.next_line.next = self.p_cont_p.q.val();
        }
        self.contig.next = self.open.q.val()
            & !self.half.q.val()
            & self.next_line.val()
            & self.p_lo0.q.val()
            & self.t_full.q.val();
        self.ring_used.next = self.wr.q.val() - self.rd.q.val();
        self.rec_used.next = self.rw.q.val() - self.rr.q.val();
        self.room.next = (self.ring_used.val() < 32) & (self.rec_used.val() < 4);

        self.take.next = false;
        self.push.next = false;
        self.write_line.next = false;
        // The record pushed: the open TLP, or the open TLP with this part.
        self.rec_start.next = self.t_start.q.val();
        self.rec_end.next = self.t_end.q.val().get_bits::<12>(0);
        self.rec_a0.next = self.t_a0.q.val();
        self.rec_first.next = self.t_first.q.val();
        self.rec_lines.next = self.t_lines.q.val();
        if self.p_valid.q.val() & self.room.val() {
            if !self.p_run_ok.q.val() {
                // Nothing to write (or a hole: dropped, counted).
                self.take.next = true;
                if self.p_nz.q.val() {
                    self.holes_q.d.next = self.holes_q.q.val() + 1;
                }
                if self.p_last.q.val() & self.open.q.val() {
                    self.push.next = true;
                    self.open.d.next = false;
                }
            } else if self.open.q.val() & !self.contig.val() {
                // Close the open TLP; the beat starts the next one later.
                self.push.next = true;
                self.open.d.next = false;
            } else {
                self.write_line.next = true;
                self.wr.d.next = self.wr.q.val() + 1;
                self.t_end.d.next = self.pe.val();
                self.t_anext.d.next = self.p_next.q.val();
                self.t_full.d.next = self.p_full.q.val() & !self.crosses.val();
                self.rec_end.next = self.pe.val().get_bits::<12>(0);
                if self.contig.val() {
                    self.t_lines.d.next = self.t_lines.q.val() + 1;
                    self.rec_lines.next = self.t_lines.q.val() + 1;
                } else {
                    self.t_start.d.next = self.ps.val();
                    self.t_a0.d.next = self.p_addr.q.val().get_bits::<7>(0);
                    self.t_first.d.next = self.wr.q.val().get_bits::<5>(0);
                    self.t_lines.d.next = 1.into();
                    self.rec_start.next = self.ps.val();
                    self.rec_a0.next = self.p_addr.q.val().get_bits::<7>(0);
                    self.rec_first.next = self.wr.q.val().get_bits::<5>(0);
                    self.rec_lines.next = 1.into();
                }
                self.open.d.next = true;
                if self.crosses.val() {
                    // The part below the boundary closes this TLP; the
                    // part above is taken next cycle.
                    self.half.d.next = true;
                    self.push.next = true;
                    self.open.d.next = false;
                } else {
                    self.half.d.next = false;
                    self.take.next = true;
                    if self.p_last.q.val() | ((self.pe.val() & self.mps_mask.val()) == 0) {
                        self.push.next = true;
                        self.open.d.next = false;
                    }
                }
            }
        }
        self.bank0.write_address.next = self.wr.q.val().get_bits::<4>(1);
        self.bank1.write_address.next = self.wr.q.val().get_bits::<4>(1);
        self.bank0.write_data.next = self.p_data.q.val();
        self.bank1.write_data.next = self.p_data.q.val();
        self.bank0.write_enable.next = self.write_line.val() & !self.wr.q.val().get_bit(0);
        self.bank1.write_enable.next = self.write_line.val() & self.wr.q.val().get_bit(0);
        if self.push.val() {
            self.rw.d.next = self.rw.q.val() + 1;
            self.tlps_q.d.next = self.tlps_q.q.val() + 1;
        }
        for i in 0..RECORDS {
            if self.push.val() & (self.rw.q.val().get_bits::<2>(0).index() == i) {
                self.r_start[i].d.next = self.rec_start.val();
                self.r_end[i].d.next = self.rec_end.val();
                self.r_a0[i].d.next = self.rec_a0.val();
                self.r_first[i].d.next = self.rec_first.val();
                self.r_lines[i].d.next = self.rec_lines.val();
            }
        }

        // PREP: the beat's byte range and where it meets an MPS multiple,
        // registered, so COLLECT starts from flip-flops.
        self.slice.m_ready.next = !self.p_valid.q.val() | self.take.val();
        if self.take.val() {
            self.p_valid.d.next = false;
        }
        if self.slice.m_valid.val() & (!self.p_valid.q.val() | self.take.val()) {
            self.p_valid.d.next = true;
            self.p_addr.d.next = self.slice.m_addr.val();
            self.p_data.d.next = self.slice.m_data.val();
            self.p_last.d.next = self.slice.m_last.val();
            self.p_nz.d.next = self.strb.val() != 0;
            self.p_run_ok.d.next = self.run_ok.val();
            self.p_fb.d.next = self.fb.val();
            self.p_eb.d.next = self.eb.val();
            self.p_bnd.d.next = self.boundary.val();
            self.p_cross.d.next = self.eb.val() > self.boundary.val();
            self.p_next.d.next = self.slice.m_addr.val() + 64;
            self.p_lo0.d.next = self.strb.val().get_bit(0);
            self.p_full.d.next = self.runend.val() == 0;
            // t_anext as COLLECT will see it: the line written now (by the
            // beat leaving) moves it to that beat's next; nothing else
            // moves it before this beat is decided.
            self.p_cont_t.d.next = self.slice.m_addr.val() == self.t_anext.q.val();
            self.p_cont_p.d.next = self.slice.m_addr.val() == self.p_next.q.val();
            self.p_moved.d.next = self.write_line.val();
        }

        // ================= ADDRESS =================
        self.has_head.next = self.rw.q.val() != self.rr.q.val();
        self.h_start.next = self.r_start[0].q.val();
        self.h_end.next = self.r_end[0].q.val();
        self.h_a0.next = self.r_a0[0].q.val();
        self.h_first.next = self.r_first[0].q.val();
        self.h_lines.next = self.r_lines[0].q.val();
        for i in 1..RECORDS {
            if self.rr.q.val().get_bits::<2>(0).index() == i {
                self.h_start.next = self.r_start[i].q.val();
                self.h_end.next = self.r_end[i].q.val();
                self.h_a0.next = self.r_a0[i].q.val();
                self.h_first.next = self.r_first[i].q.val();
                self.h_lines.next = self.r_lines[i].q.val();
            }
        }
        // Length 1..=512, so 12 bits of the end and the start are enough.
        self.h_len.next = self.h_end.val() - self.h_start.val().get_bits::<12>(0);
        self.h_dw.next =
            (bit_cast::<12, 2>(self.h_start.val().get_bits::<2>(0)) + self.h_len.val() + 3) >> 2;
        self.h_beats.next = ((self.h_dw.val() << 2) + 79) >> 6;
        self.h_d.next =
            (self.h_start.val().get_bits::<7>(0) & bits::<7>(0x7C)) - 16 - self.h_a0.val();
        // Lines j+q and j+q+1 of the TLP (q = -1 when d is negative).
        self.lo_line.next = self.h_first.val() + bit_cast::<5, 4>(self.bj.q.val());
        if self.h_d.val().get_bit(6) {
            self.lo_line.next = self.h_first.val() + bit_cast::<5, 4>(self.bj.q.val()) - 1;
        }
        self.hi_line.next = self.lo_line.val() + 1;
        // Bank 0 holds the even line of the two.
        self.na0.next = self.lo_line.val().get_bits::<4>(1);
        self.na1.next = self.hi_line.val().get_bits::<4>(1);
        if self.lo_line.val().get_bit(0) {
            self.na0.next = self.hi_line.val().get_bits::<4>(1);
            self.na1.next = self.lo_line.val().get_bits::<4>(1);
        }
        self.fbe0.next = (bits::<4>(0xF) << self.h_start.val().get_bits::<2>(0)) & 0xF;
        self.last_lane.next =
            (self.h_start.val().get_bits::<2>(0) + self.h_len.val().get_bits::<2>(0)) - 1;
        self.lbe0.next = bits::<4>(0xF) >> (bits::<2>(3) - self.last_lane.val());
        self.fbe.next = self.fbe0.val();
        self.lbe.next = self.lbe0.val();
        if self.h_dw.val() == 1 {
            self.fbe.next = self.fbe0.val() & self.lbe0.val();
            self.lbe.next = 0.into();
        }
        // Dwords in the last beat: descriptor (4) and payload, mod 16.
        self.keep_n.next = (self.h_dw.val() + 4) & 15;
        self.desc.next = (bit_cast::<128, 62>(self.h_start.val().get_bits::<62>(2)) << 2)
            | (bit_cast::<128, 12>(self.h_dw.val()) << 64)
            | (bit_cast::<128, 4>(bits::<4>(1)) << 75);
        self.b_last.next = bit_cast::<12, 4>(self.bj.q.val()) + 1 == self.h_beats.val();

        // ================= SHIFT / output =================
        self.go.next = !self.o_valid.q.val() | self.m_ready.val();
        self.lo_data.next = self.bank0.read_data.val();
        self.hi_data.next = self.bank1.read_data.val();
        if self.c_lo_bank.q.val() {
            self.lo_data.next = self.bank1.read_data.val();
            self.hi_data.next = self.bank0.read_data.val();
        }
        self.pair.next = (bit_cast::<1024, 512>(self.hi_data.val()) << 512)
            | bit_cast::<1024, 512>(self.lo_data.val());
        self.shifted.next = self.pair.val() >> (bit_cast::<10, 6>(self.c_r.q.val()) << 3);
        self.beat0.next = self.shifted.val().get_bits::<512>(0);
        self.beat.next = self.beat0.val();
        if self.c_first.q.val() {
            self.beat.next = (self.beat0.val() & self.desc_mask.val())
                | bit_cast::<512, 128>(self.c_desc.q.val());
        }
        // Hold: read the banks again where the beat in SHIFT came from.
        self.bank0.read_address.next = self.c_addr0.q.val();
        self.bank1.read_address.next = self.c_addr1.q.val();
        if self.go.val() {
            self.o_valid.d.next = self.c_valid.q.val();
            self.o_data.d.next = self.beat.val();
            self.o_keep.d.next = self.all_keep.val();
            if self.c_last.q.val() {
                self.o_keep.d.next = self.c_keep.q.val();
            }
            self.o_last.d.next = self.c_last.q.val();
            self.o_eop.d.next = 15.into();
            if self.c_last.q.val() {
                self.o_eop.d.next = self.c_eop.q.val();
            }
            self.o_sop.d.next = self.c_first.q.val();
            self.o_fbe.d.next = self.c_fbe.q.val();
            self.o_lbe.d.next = self.c_lbe.q.val();
            if self.c_valid.q.val() & self.c_last.q.val() {
                self.rd.d.next = self.rd.q.val() + bit_cast::<6, 4>(self.c_lines.q.val());
            }
            self.c_valid.d.next = self.has_head.val();
            self.c_lo_bank.d.next = self.lo_line.val().get_bit(0);
            self.c_r.d.next = self.h_d.val().get_bits::<6>(0);
            self.c_first.d.next = self.bj.q.val() == 0;
            self.c_last.d.next = self.b_last.val();
            self.c_keep.d.next = self.all_keep.val();
            if self.keep_n.val() != 0 {
                self.c_keep.d.next =
                    self.all_keep.val() >> (bits::<16>(16) - bit_cast::<16, 12>(self.keep_n.val()));
            }
            self.c_eop.d.next = self.keep_n.val().get_bits::<4>(0) - 1;
            self.c_desc.d.next = self.desc.val();
            self.c_fbe.d.next = self.fbe.val();
            self.c_lbe.d.next = self.lbe.val();
            self.c_lines.d.next = self.h_lines.val();
            self.c_addr0.d.next = self.na0.val();
            self.c_addr1.d.next = self.na1.val();
            self.bank0.read_address.next = self.na0.val();
            self.bank1.read_address.next = self.na1.val();
            if self.has_head.val() {
                self.bj.d.next = self.bj.q.val() + 1;
                if self.b_last.val() {
                    self.bj.d.next = 0.into();
                    self.rr.d.next = self.rr.q.val() + 1;
                }
            }
        }
        self.m_valid.next = self.o_valid.q.val();
        self.m_data.next = self.o_data.q.val();
        self.m_keep.next = self.o_keep.q.val();
        self.m_last.next = self.o_last.q.val();
        self.m_sop.next = self.o_sop.q.val();
        self.m_first_be.next = self.o_fbe.q.val();
        self.m_last_be.next = self.o_lbe.q.val();
        self.m_eop_ptr.next = self.o_eop.q.val();
        self.holes.next = self.holes_q.q.val();
        self.tlps.next = self.tlps_q.q.val();

        if self.reset.val() {
            self.half.d.next = false;
            self.p_valid.d.next = false;
            self.open.d.next = false;
            self.wr.d.next = 0.into();
            self.rd.d.next = 0.into();
            self.rw.d.next = 0.into();
            self.rr.d.next = 0.into();
            self.bj.d.next = 0.into();
            self.c_valid.d.next = false;
            self.o_valid.d.next = false;
            self.holes_q.d.next = 0.into();
            self.tlps_q.d.next = 0.into();
        }
    }
}

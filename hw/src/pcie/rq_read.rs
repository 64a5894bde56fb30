//! The core's DMA reads as memory-read TLPs on the hard block's requester
//! request stream (RQ), and their completions from the requester completion
//! stream (RC) reassembled into the core's read responses. 512-bit,
//! Dword-aligned mode, RC 2-TLP straddle (PG213, "Requester Completion
//! Interface Operation (512-bit)", "Straddle Option"); it works unchanged
//! with straddle off.
//!
//! RC descriptor, beat 0 bits 95:0 (PG213, "Requester Completion Descriptor
//! Format"): [11:0] lower address (the low 12 bits of the first byte's
//! address), [15:12] error code (0 = normal termination), [28:16] byte
//! count, [30] request completed (the last completion of its request),
//! [42:32] Dword count, [45:43] completion status, [46] poisoned, [63:48]
//! requester ID, [71:64] tag. Payload Dwords follow at bit 96.
//! `m_axis_rc_tuser`: [65:64] is_sop (a TLP starts), [69:68] and [71:70]
//! is_sop0_ptr and is_sop1_ptr (where, in units of 4 Dwords: 0 or 2),
//! [77:76] is_eop (a TLP ends), [96] discontinue (the completion was bad;
//! discard). With 2-TLP straddle a completion starts at Dword 0, or at
//! Dword 8 of a beat in which the one before ended at Dword 7 or earlier;
//! `tlast` is then always 0, so only is_sop/is_eop delimit completions.
//!
//! DESIGN NOTES
//! ------------
//! The core's read port promises each response's beats in order, not
//! interleaved with another's, and the TX engine wants payload responses in
//! request order. So responses leave in request order, each whole, from a
//! reorder buffer; completions fill it in any order.
//!
//! ACCEPT   A request (address, 1-4096 bytes, the core's tag) takes the next
//!          of `REQS` entries and a run of buffer lines laid out by address:
//!          line k holds bytes [base + 64k, base + 64k + 64) with base the
//!          request's address rounded down to 64. `s_rd_req_ready` comes from
//!          registers: an entry free and 65 lines (the most one request needs).
//! SPLIT    One request at a time, in order: a read TLP per piece that does
//!          not cross a multiple of the maximum read request size (MRRS, from
//!          `cfg_max_read_req`; so no 4 KB boundary either), one TLP a cycle,
//!          each with the next PCIe tag in turn (waiting while that tag is
//!          still out: tags are taken round-robin, so a tag is reused only
//!          after `TAGS` newer TLPs). The tag's record: its request entry,
//!          the buffer line of its first byte and that byte's low 12 address
//!          bits.
//! FILL     Each RC beat is rotated by Dwords so every byte lands on its
//!          address's lane, and a buffer line is written whole from this beat
//!          and the one before (`carry`). Completions of one read TLP start
//!          and end on 64-byte boundaries except at the request's own ends
//!          (TLPs split at MRRS multiples, and a completer splits a read only
//!          at its read completion boundary, RCB = 64 or 128 bytes), so every
//!          line is written by exactly one completion and no byte enables are
//!          needed: a line's lanes outside the request are never delivered.
//!          Two RAM banks (even and odd lines) let a completion's last beat
//!          write its final line and the partial one after it in one cycle.
//!          A beat holds at most two completions: the one in its lower half
//!          (started at Dword 0 or continuing) goes through the path above;
//!          one starting at Dword 8 usually only sets up the next beat (its
//!          own rotation into `carry`, its parameters into `k_*`: a second,
//!          narrower path), since its bytes here (at most 20) complete no
//!          line when its first byte is below lane 44 of its line. When they
//!          would (a read's first completion starting late in a line), or
//!          when it also ends in this beat, the beat is taken twice: RC is
//!          held a cycle (`m_axis_rc_tready` low, from registers) and the
//!          upper half, shifted down to Dword 0, goes through the main path
//!          as a completion starting there (`shifted`: the rotation kept for
//!          its later beats is 32 bytes off). Otherwise RC is always ready:
//!          every byte has its place before its request is issued.
//!          Two stages (250 MHz): the first works out, from the registered
//!          beat's descriptors and the state of the completion it continues
//!          (`k_*`), each completion's rotation, line and writes; PLACE
//!          (`p_*`) rotates the beat a cycle later, merges it with `carry`,
//!          writes the banks and accounts for a completion's end, so a
//!          request's count of TLPs out drops in the cycle its last line is
//!          written, as in one stage.
//!          The completion marked "request completed" ends its TLP: the tag
//!          is free, the entry has one TLP fewer out. A completion with an
//!          error code, a status other than success, poisoned data or
//!          `discontinue` marks its request failed.
//! DELIVER  The oldest request, once split whole and with no TLP out, is
//!          streamed: beat k is bytes (addr mod 64).. of {line k+1, line k}
//!          (one line from each bank), a cycle later into the output
//!          register, with `error` on every beat of a failed request (and
//!          zero data). Its lines are freed when its last beat is taken into
//!          the output register.
//!
//! No ordering is kept between the core's reads and its writes (`rq_write`):
//! a read may pass an earlier write. The core never reads what it wrote.

use rust_hdl::prelude::*;

/// Request entries (in order, each a run of buffer lines).
pub const REQS: usize = 16;
/// PCIe tags in use at most, 0..TAGS.
pub const TAGS: usize = 64;
/// Buffer lines (64 bytes each): 32 KiB, two banks of 256. Enough for seven
/// 4 KB reads at once, more than the link's bandwidth-delay product (12.5
/// GB/s over an 800 ns round trip is 10 KB, plus each read's delivery):
/// with 16 KiB (three 4 KB reads) reads reached 52-66% of the link.
pub const LINES: usize = 512;
/// Lines the longest request needs: 4096 bytes not aligned to 64.
pub const MAX_REQ_LINES: u64 = 65;

/// `cfg_max_read_req` (0 = 128 B ... 5 = 4096 B) to bytes.
pub fn read_request_bytes(cfg_max_read_req: u8) -> u64 {
    128u64 << cfg_max_read_req.min(5)
}

#[derive(LogicBlock)]
pub struct RqReader {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, bool>,
    /// The core's read-request port.
    pub s_req_valid: Signal<In, bool>,
    pub s_req_ready: Signal<Out, bool>,
    pub s_req_addr: Signal<In, Bits<64>>,
    pub s_req_len: Signal<In, Bits<16>>,
    pub s_req_tag: Signal<In, Bits<8>>,
    /// The core's read-response port.
    pub m_rsp_valid: Signal<Out, bool>,
    pub m_rsp_ready: Signal<In, bool>,
    pub m_rsp_data: Signal<Out, Bits<512>>,
    pub m_rsp_tag: Signal<Out, Bits<8>>,
    pub m_rsp_last: Signal<Out, bool>,
    pub m_rsp_error: Signal<Out, bool>,
    /// Read TLPs (one beat each: the descriptor), for the RQ arbiter.
    pub m_valid: Signal<Out, bool>,
    pub m_ready: Signal<In, bool>,
    pub m_desc: Signal<Out, Bits<128>>,
    pub m_first_be: Signal<Out, Bits<4>>,
    pub m_last_be: Signal<Out, Bits<4>>,
    /// The hard block's requester completions.
    pub m_axis_rc_tdata: Signal<In, Bits<512>>,
    pub m_axis_rc_tuser: Signal<In, Bits<161>>,
    pub m_axis_rc_tlast: Signal<In, bool>,
    pub m_axis_rc_tkeep: Signal<In, Bits<16>>,
    pub m_axis_rc_tvalid: Signal<In, bool>,
    pub m_axis_rc_tready: Signal<Out, bool>,
    /// The hard block's `cfg_max_read_req` (0 = 128 B ... 5 = 4096 B).
    pub cfg_max_read_req: Signal<In, Bits<3>>,
    /// Completions that marked their request failed; read TLPs sent (wrapping).
    pub rc_errors: Signal<Out, Bits<32>>,
    pub tlps: Signal<Out, Bits<32>>,

    bank0: RAM<Bits<512>, 8>,
    bank1: RAM<Bits<512>, 8>,
    // ---- request entries ----
    /// {core tag [93:86], first buffer line [85:77], length [76:64],
    /// address [63:0]}.
    e_req: [DFF<Bits<94>>; REQS],
    /// TLPs sent and not completed; all TLPs sent; a completion failed.
    e_count: [DFF<Bits<7>>; REQS],
    e_issued: [DFF<bool>; REQS],
    e_err: [DFF<bool>; REQS],
    /// Entry pointers (5 bits: one wrap bit): next accepted, next split,
    /// next delivered.
    qw: DFF<Bits<5>>,
    qi: DFF<Bits<5>>,
    qr: DFF<Bits<5>>,
    /// Buffer pointers (10 bits: one wrap bit): next line allocated, oldest
    /// line held.
    bw: DFF<Bits<10>>,
    br: DFF<Bits<10>>,
    // ---- SPLIT ----
    sp_active: DFF<bool>,
    sp_idx: DFF<Bits<4>>,
    sp_cur: DFF<Bits<64>>,
    sp_rem: DFF<Bits<13>>,
    /// Offset of `sp_cur` from the request's base (address rounded to 64).
    sp_off: DFF<Bits<13>>,
    sp_line0: DFF<Bits<9>>,
    /// MRRS - 1 from `cfg_max_read_req` (registered: it is set once, at
    /// enumeration).
    mrrs_mask: DFF<Bits<13>>,
    next_tag: DFF<Bits<6>>,
    busy: DFF<Bits<64>>,
    /// `busy` at the tag in turn and the one after, a cycle ago; a TLP was
    /// issued then (so the one after is in turn now).
    nt_busy0: DFF<bool>,
    nt_busy1: DFF<bool>,
    nt_adv: DFF<bool>,
    /// Per tag: {low 12 address bits of its first byte [24:13], buffer line
    /// of that byte [12:4], request entry [3:0]}. Read with the RC beat's
    /// tag as it arrives, so the record is there when the registered beat
    /// is (a tag is reused only after its last completion).
    tag_ram: RAM<Bits<25>, 6>,
    /// The same records, read with the tag of a completion starting at
    /// Dword 8.
    tag_ram_hi: RAM<Bits<25>, 6>,
    o_valid: DFF<bool>,
    o_desc: DFF<Bits<128>>,
    o_fbe: DFF<Bits<4>>,
    o_lbe: DFF<Bits<4>>,
    tlps_q: DFF<Bits<32>>,
    // ---- FILL ----
    rc_valid: DFF<bool>,
    rc_data: DFF<Bits<512>>,
    /// The registered beat: the completion in its lower half ends
    /// (is_eop[0]); a second one ends (is_eop[1]); one starts at Dword 8.
    rc_eop0: DFF<bool>,
    rc_eop1: DFF<bool>,
    rc_hi_sop: DFF<bool>,
    rc_disc: DFF<bool>,
    /// The registered beat is a held beat's upper half, shifted to Dword 0.
    shifted: DFF<bool>,
    in_pkt: DFF<bool>,
    /// The completion being received: rotation in bytes, the next line,
    /// Dword count, last completion of its TLP, failed, entry, tag.
    k_rb: DFF<Bits<6>>,
    k_line: DFF<Bits<9>>,
    k_dw: DFF<Bits<11>>,
    k_done: DFF<bool>,
    k_err: DFF<bool>,
    k_idx: DFF<Bits<4>>,
    k_tag: DFF<Bits<6>>,
    /// The completion being received started at Dword 8 (its last byte's
    /// lane is 32 on from where Dword-0 arithmetic puts it).
    k_s: DFF<bool>,
    /// PLACE: the beat of the cycle before and what FILL worked out for it:
    /// Dwords to shift {beat, beat} right by, for the lower completion and
    /// for one starting at Dword 8; Dwords of the line taken from `carry`;
    /// the Dword-8 completion continues; line a, write it, write a + 1; its
    /// completion ends, the end of its TLP, failed, entry, tag.
    p_valid: DFF<bool>,
    p_data: DFF<Bits<512>>,
    p_sh: DFF<Bits<5>>,
    p_sh_hi: DFF<Bits<5>>,
    p_lo: DFF<Bits<16>>,
    p_hi: DFF<bool>,
    p_line: DFF<Bits<9>>,
    p_wa: DFF<bool>,
    p_wb: DFF<bool>,
    p_end: DFF<bool>,
    p_done: DFF<bool>,
    p_fail: DFF<bool>,
    p_idx: DFF<Bits<4>>,
    p_tag: DFF<Bits<6>>,
    carry: DFF<Bits<512>>,
    rc_errors_q: DFF<Bits<32>>,
    // ---- DELIVER ----
    d_active: DFF<bool>,
    d_k: DFF<Bits<7>>,
    d_beats: DFF<Bits<7>>,
    d_line: DFF<Bits<9>>,
    d_shift: DFF<Bits<6>>,
    d_tag: DFF<Bits<8>>,
    d_err: DFF<bool>,
    d_lines: DFF<Bits<7>>,
    /// Bytes in the last beat (0: 64).
    d_tail: DFF<Bits<6>>,
    c_tail: DFF<Bits<6>>,
    c_valid: DFF<bool>,
    c_lo_bank: DFF<bool>,
    c_shift: DFF<Bits<6>>,
    c_tag: DFF<Bits<8>>,
    c_err: DFF<bool>,
    c_last: DFF<bool>,
    c_lines: DFF<Bits<7>>,
    c_addr0: DFF<Bits<8>>,
    c_addr1: DFF<Bits<8>>,
    r_valid: DFF<bool>,
    r_data: DFF<Bits<512>>,
    r_tag: DFF<Bits<8>>,
    r_last: DFF<bool>,
    r_err: DFF<bool>,

    // Locals: entry mux trees (by qi: ta*; by qr: tb*).
    new_req: Signal<Local, Bits<94>>,
    ta1: [Signal<Local, Bits<94>>; 8],
    ta2: [Signal<Local, Bits<94>>; 4],
    ta3: [Signal<Local, Bits<94>>; 2],
    ta4: Signal<Local, Bits<94>>,
    tb1: [Signal<Local, Bits<94>>; 8],
    tb2: [Signal<Local, Bits<94>>; 4],
    tb3: [Signal<Local, Bits<94>>; 2],
    tb4: Signal<Local, Bits<94>>,
    // Locals: ACCEPT.
    used_entries: Signal<Local, Bits<5>>,
    used_lines: Signal<Local, Bits<10>>,
    accept: Signal<Local, bool>,
    need_lines: Signal<Local, Bits<13>>,
    // Locals: SPLIT.
    h_addr: Signal<Local, Bits<64>>,
    h_len: Signal<Local, Bits<13>>,
    h_line: Signal<Local, Bits<9>>,
    to_bnd: Signal<Local, Bits<13>>,
    tl: Signal<Local, Bits<13>>,
    dw: Signal<Local, Bits<13>>,
    fbe0: Signal<Local, Bits<4>>,
    lbe0: Signal<Local, Bits<4>>,
    fbe: Signal<Local, Bits<4>>,
    lbe: Signal<Local, Bits<4>>,
    last_lane: Signal<Local, Bits<2>>,
    tag_busy: Signal<Local, bool>,
    nt_plus1: Signal<Local, Bits<6>>,
    busy_at0: Signal<Local, Bits<64>>,
    busy_at1: Signal<Local, Bits<64>>,
    issue: Signal<Local, bool>,
    tlp_line: Signal<Local, Bits<9>>,
    // Locals: FILL.
    sop: Signal<Local, bool>,
    lower: Signal<Local, Bits<12>>,
    t_idx: Signal<Local, Bits<4>>,
    t_line: Signal<Local, Bits<9>>,
    t_lo: Signal<Local, Bits<12>>,
    rb: Signal<Local, Bits<6>>,
    line_a: Signal<Local, Bits<9>>,
    dwn: Signal<Local, Bits<11>>,
    fail: Signal<Local, bool>,
    done: Signal<Local, bool>,
    idx: Signal<Local, Bits<4>>,
    tag: Signal<Local, Bits<6>>,
    dbl: Signal<Local, Bits<1024>>,
    rot: Signal<Local, Bits<512>>,
    rot_wide: Signal<Local, Bits<1024>>,
    lo_mask: Signal<Local, Bits<512>>,
    merged: Signal<Local, Bits<512>>,
    write_a: Signal<Local, bool>,
    write_b: Signal<Local, bool>,
    end_lane: Signal<Local, Bits<6>>,
    neg_rb: Signal<Local, Bits<6>>,
    tlp_end: Signal<Local, bool>,
    // Locals: FILL, a completion starting at Dword 8.
    take: Signal<Local, bool>,
    hi_lower: Signal<Local, Bits<12>>,
    hi_slow: Signal<Local, bool>,
    hi_fast: Signal<Local, bool>,
    rb_hi: Signal<Local, Bits<6>>,
    rdw: Signal<Local, Bits<4>>,
    lo_mask_dw: [Signal<Local, Bits<32>>; 16],
    rot_hi_wide: Signal<Local, Bits<1024>>,
    th_idx: Signal<Local, Bits<4>>,
    th_line: Signal<Local, Bits<9>>,
    th_lo: Signal<Local, Bits<12>>,
    busy_clr: Signal<Local, Bits<64>>,
    busy_set: Signal<Local, Bits<64>>,
    // Locals: DELIVER.
    head_ready: Signal<Local, bool>,
    q_len: Signal<Local, Bits<13>>,
    q_addr6: Signal<Local, Bits<6>>,
    q_line: Signal<Local, Bits<9>>,
    q_tag: Signal<Local, Bits<8>>,
    q_err: Signal<Local, bool>,
    go: Signal<Local, bool>,
    lo_line: Signal<Local, Bits<9>>,
    hi_line: Signal<Local, Bits<9>>,
    na0: Signal<Local, Bits<8>>,
    na1: Signal<Local, Bits<8>>,
    d_last_beat: Signal<Local, bool>,
    lo_data: Signal<Local, Bits<512>>,
    hi_data: Signal<Local, Bits<512>>,
    pair: Signal<Local, Bits<1024>>,
    out: Signal<Local, Bits<1024>>,
    all_ones: Constant<Bits<512>>,
}

impl Default for RqReader {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            s_req_valid: Default::default(),
            s_req_ready: Default::default(),
            s_req_addr: Default::default(),
            s_req_len: Default::default(),
            s_req_tag: Default::default(),
            m_rsp_valid: Default::default(),
            m_rsp_ready: Default::default(),
            m_rsp_data: Default::default(),
            m_rsp_tag: Default::default(),
            m_rsp_last: Default::default(),
            m_rsp_error: Default::default(),
            m_valid: Default::default(),
            m_ready: Default::default(),
            m_desc: Default::default(),
            m_first_be: Default::default(),
            m_last_be: Default::default(),
            m_axis_rc_tdata: Default::default(),
            m_axis_rc_tuser: Default::default(),
            m_axis_rc_tlast: Default::default(),
            m_axis_rc_tkeep: Default::default(),
            m_axis_rc_tvalid: Default::default(),
            m_axis_rc_tready: Default::default(),
            cfg_max_read_req: Default::default(),
            rc_errors: Default::default(),
            tlps: Default::default(),
            bank0: Default::default(),
            bank1: Default::default(),
            e_req: Default::default(),
            e_count: Default::default(),
            e_issued: Default::default(),
            e_err: Default::default(),
            qw: Default::default(),
            qi: Default::default(),
            qr: Default::default(),
            bw: Default::default(),
            br: Default::default(),
            sp_active: Default::default(),
            sp_idx: Default::default(),
            sp_cur: Default::default(),
            sp_rem: Default::default(),
            sp_off: Default::default(),
            sp_line0: Default::default(),
            mrrs_mask: Default::default(),
            next_tag: Default::default(),
            busy: Default::default(),
            nt_busy0: Default::default(),
            nt_busy1: Default::default(),
            nt_adv: Default::default(),
            tag_ram: Default::default(),
            tag_ram_hi: Default::default(),
            o_valid: Default::default(),
            o_desc: Default::default(),
            o_fbe: Default::default(),
            o_lbe: Default::default(),
            tlps_q: Default::default(),
            rc_valid: Default::default(),
            rc_data: Default::default(),
            rc_eop0: Default::default(),
            rc_eop1: Default::default(),
            rc_hi_sop: Default::default(),
            rc_disc: Default::default(),
            shifted: Default::default(),
            in_pkt: Default::default(),
            k_rb: Default::default(),
            k_line: Default::default(),
            k_dw: Default::default(),
            k_done: Default::default(),
            k_err: Default::default(),
            k_idx: Default::default(),
            k_tag: Default::default(),
            k_s: Default::default(),
            p_valid: Default::default(),
            p_data: Default::default(),
            p_sh: Default::default(),
            p_sh_hi: Default::default(),
            p_lo: Default::default(),
            p_hi: Default::default(),
            p_line: Default::default(),
            p_wa: Default::default(),
            p_wb: Default::default(),
            p_end: Default::default(),
            p_done: Default::default(),
            p_fail: Default::default(),
            p_idx: Default::default(),
            p_tag: Default::default(),
            carry: Default::default(),
            rc_errors_q: Default::default(),
            d_active: Default::default(),
            d_k: Default::default(),
            d_beats: Default::default(),
            d_line: Default::default(),
            d_shift: Default::default(),
            d_tag: Default::default(),
            d_err: Default::default(),
            d_lines: Default::default(),
            d_tail: Default::default(),
            c_tail: Default::default(),
            c_valid: Default::default(),
            c_lo_bank: Default::default(),
            c_shift: Default::default(),
            c_tag: Default::default(),
            c_err: Default::default(),
            c_last: Default::default(),
            c_lines: Default::default(),
            c_addr0: Default::default(),
            c_addr1: Default::default(),
            r_valid: Default::default(),
            r_data: Default::default(),
            r_tag: Default::default(),
            r_last: Default::default(),
            r_err: Default::default(),
            new_req: Default::default(),
            ta1: Default::default(),
            ta2: Default::default(),
            ta3: Default::default(),
            ta4: Default::default(),
            tb1: Default::default(),
            tb2: Default::default(),
            tb3: Default::default(),
            tb4: Default::default(),
            used_entries: Default::default(),
            used_lines: Default::default(),
            accept: Default::default(),
            need_lines: Default::default(),
            h_addr: Default::default(),
            h_len: Default::default(),
            h_line: Default::default(),
            to_bnd: Default::default(),
            tl: Default::default(),
            dw: Default::default(),
            fbe0: Default::default(),
            lbe0: Default::default(),
            fbe: Default::default(),
            lbe: Default::default(),
            last_lane: Default::default(),
            tag_busy: Default::default(),
            nt_plus1: Default::default(),
            busy_at0: Default::default(),
            busy_at1: Default::default(),
            issue: Default::default(),
            tlp_line: Default::default(),
            sop: Default::default(),
            lower: Default::default(),
            t_idx: Default::default(),
            t_line: Default::default(),
            t_lo: Default::default(),
            rb: Default::default(),
            line_a: Default::default(),
            dwn: Default::default(),
            fail: Default::default(),
            done: Default::default(),
            idx: Default::default(),
            tag: Default::default(),
            dbl: Default::default(),
            rot: Default::default(),
            rot_wide: Default::default(),
            lo_mask: Default::default(),
            merged: Default::default(),
            write_a: Default::default(),
            write_b: Default::default(),
            end_lane: Default::default(),
            neg_rb: Default::default(),
            tlp_end: Default::default(),
            take: Default::default(),
            hi_lower: Default::default(),
            hi_slow: Default::default(),
            hi_fast: Default::default(),
            rb_hi: Default::default(),
            rdw: Default::default(),
            lo_mask_dw: Default::default(),
            rot_hi_wide: Default::default(),
            th_idx: Default::default(),
            th_line: Default::default(),
            th_lo: Default::default(),
            busy_clr: Default::default(),
            busy_set: Default::default(),
            head_ready: Default::default(),
            q_len: Default::default(),
            q_addr6: Default::default(),
            q_line: Default::default(),
            q_tag: Default::default(),
            q_err: Default::default(),
            go: Default::default(),
            lo_line: Default::default(),
            hi_line: Default::default(),
            na0: Default::default(),
            na1: Default::default(),
            d_last_beat: Default::default(),
            lo_data: Default::default(),
            hi_data: Default::default(),
            pair: Default::default(),
            out: Default::default(),
            all_ones: Constant::new(super::rq_write::bits_mask(0)),
        }
    }
}

impl Logic for RqReader {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            qw,
            qi,
            qr,
            bw,
            br,
            sp_active,
            sp_idx,
            sp_cur,
            sp_rem,
            sp_off,
            sp_line0,
            mrrs_mask,
            next_tag,
            busy,
            nt_busy0,
            nt_busy1,
            nt_adv,
            o_valid,
            o_desc,
            o_fbe,
            o_lbe,
            tlps_q,
            rc_valid,
            rc_data,
            rc_eop0,
            rc_eop1,
            rc_hi_sop,
            rc_disc,
            shifted,
            in_pkt,
            k_rb,
            k_line,
            k_dw,
            k_done,
            k_err,
            k_idx,
            k_tag,
            k_s,
            p_valid,
            p_data,
            p_sh,
            p_sh_hi,
            p_lo,
            p_hi,
            p_line,
            p_wa,
            p_wb,
            p_end,
            p_done,
            p_fail,
            p_idx,
            p_tag,
            carry,
            rc_errors_q,
            d_active,
            d_k,
            d_beats,
            d_line,
            d_shift,
            d_tag,
            d_err,
            d_lines,
            d_tail,
            c_tail,
            c_valid,
            c_lo_bank,
            c_shift,
            c_tag,
            c_err,
            c_last,
            c_lines,
            c_addr0,
            c_addr1,
            r_valid,
            r_data,
            r_tag,
            r_last,
            r_err
        );
        for i in 0..REQS {
            self.e_req[i].clock.next = self.clock.val();
            self.e_req[i].d.next = self.e_req[i].q.val();
            self.e_count[i].clock.next = self.clock.val();
            self.e_count[i].d.next = self.e_count[i].q.val();
            self.e_issued[i].clock.next = self.clock.val();
            self.e_issued[i].d.next = self.e_issued[i].q.val();
            self.e_err[i].clock.next = self.clock.val();
            self.e_err[i].d.next = self.e_err[i].q.val();
        }
        self.tag_ram.read_clock.next = self.clock.val();
        self.tag_ram.write_clock.next = self.clock.val();
        self.tag_ram_hi.read_clock.next = self.clock.val();
        self.tag_ram_hi.write_clock.next = self.clock.val();
        self.bank0.read_clock.next = self.clock.val();
        self.bank0.write_clock.next = self.clock.val();
        self.bank1.read_clock.next = self.clock.val();
        self.bank1.write_clock.next = self.clock.val();

        // ================= ACCEPT =================
        self.used_entries.next = self.qw.q.val() - self.qr.q.val();
        self.used_lines.next = self.bw.q.val() - self.br.q.val();
        self.s_req_ready.next = (self.used_entries.val() < 16) & (self.used_lines.val() <= 447);
        self.accept.next = self.s_req_valid.val() & self.s_req_ready.val();
        self.need_lines.next = (bit_cast::<13, 6>(self.s_req_addr.val().get_bits::<6>(0))
            + self.s_req_len.val().get_bits::<13>(0)
            + 63)
            >> 6;
        if self.accept.val() {
            self.qw.d.next = self.qw.q.val() + 1;
            self.bw.d.next = self.bw.q.val() + bit_cast::<10, 13>(self.need_lines.val());
        }
        self.new_req.next = bit_cast::<94, 64>(self.s_req_addr.val())
            | (bit_cast::<94, 13>(self.s_req_len.val().get_bits::<13>(0)) << 64)
            | (bit_cast::<94, 9>(self.bw.q.val().get_bits::<9>(0)) << 77)
            | (bit_cast::<94, 8>(self.s_req_tag.val()) << 86);
        for i in 0..REQS {
            if self.accept.val() & (self.qw.q.val().get_bits::<4>(0).index() == i) {
                self.e_req[i].d.next = self.new_req.val();
                self.e_issued[i].d.next = false;
                self.e_err[i].d.next = false;
            }
        }

        // ================= SPLIT =================
        // The entries at qi and at qr, through balanced mux trees (a chain of
        // `if index == i` would be 15 muxes deep).
        for j in 0..8 {
            self.ta1[j].next = self.e_req[2 * j].q.val();
            if self.qi.q.val().get_bit(0) {
                self.ta1[j].next = self.e_req[2 * j + 1].q.val();
            }
            self.tb1[j].next = self.e_req[2 * j].q.val();
            if self.qr.q.val().get_bit(0) {
                self.tb1[j].next = self.e_req[2 * j + 1].q.val();
            }
        }
        for j in 0..4 {
            self.ta2[j].next = self.ta1[2 * j].val();
            if self.qi.q.val().get_bit(1) {
                self.ta2[j].next = self.ta1[2 * j + 1].val();
            }
            self.tb2[j].next = self.tb1[2 * j].val();
            if self.qr.q.val().get_bit(1) {
                self.tb2[j].next = self.tb1[2 * j + 1].val();
            }
        }
        for j in 0..2 {
            self.ta3[j].next = self.ta2[2 * j].val();
            if self.qi.q.val().get_bit(2) {
                self.ta3[j].next = self.ta2[2 * j + 1].val();
            }
            self.tb3[j].next = self.tb2[2 * j].val();
            if self.qr.q.val().get_bit(2) {
                self.tb3[j].next = self.tb2[2 * j + 1].val();
            }
        }
        self.ta4.next = self.ta3[0].val();
        if self.qi.q.val().get_bit(3) {
            self.ta4.next = self.ta3[1].val();
        }
        self.tb4.next = self.tb3[0].val();
        if self.qr.q.val().get_bit(3) {
            self.tb4.next = self.tb3[1].val();
        }
        self.h_addr.next = self.ta4.val().get_bits::<64>(0);
        self.h_len.next = self.ta4.val().get_bits::<13>(64);
        self.h_line.next = self.ta4.val().get_bits::<9>(77);
        if !self.sp_active.q.val() & (self.qi.q.val() != self.qw.q.val()) {
            self.sp_active.d.next = true;
            self.sp_idx.d.next = self.qi.q.val().get_bits::<4>(0);
            self.sp_cur.d.next = self.h_addr.val();
            self.sp_rem.d.next = self.h_len.val();
            self.sp_off.d.next = bit_cast::<13, 6>(self.h_addr.val().get_bits::<6>(0));
            self.sp_line0.d.next = self.h_line.val();
        }
        self.mrrs_mask.d.next = 4095.into();
        if self.cfg_max_read_req.val() == 0 {
            self.mrrs_mask.d.next = 127.into();
        }
        if self.cfg_max_read_req.val() == 1 {
            self.mrrs_mask.d.next = 255.into();
        }
        if self.cfg_max_read_req.val() == 2 {
            self.mrrs_mask.d.next = 511.into();
        }
        if self.cfg_max_read_req.val() == 3 {
            self.mrrs_mask.d.next = 1023.into();
        }
        if self.cfg_max_read_req.val() == 4 {
            self.mrrs_mask.d.next = 2047.into();
        }
        self.to_bnd.next = (self.mrrs_mask.q.val()
            - (self.sp_cur.q.val().get_bits::<13>(0) & self.mrrs_mask.q.val()))
            + 1;
        self.tl.next = self.sp_rem.q.val();
        if self.to_bnd.val() < self.sp_rem.q.val() {
            self.tl.next = self.to_bnd.val();
        }
        self.dw.next =
            (bit_cast::<13, 2>(self.sp_cur.q.val().get_bits::<2>(0)) + self.tl.val() + 3) >> 2;
        self.fbe0.next = (bits::<4>(0xF) << self.sp_cur.q.val().get_bits::<2>(0)) & 0xF;
        self.last_lane.next =
            (self.sp_cur.q.val().get_bits::<2>(0) + self.tl.val().get_bits::<2>(0)) - 1;
        self.lbe0.next = bits::<4>(0xF) >> (bits::<2>(3) - self.last_lane.val());
        self.fbe.next = self.fbe0.val();
        self.lbe.next = self.lbe0.val();
        if self.dw.val() == 1 {
            self.fbe.next = self.fbe0.val() & self.lbe0.val();
            self.lbe.next = 0.into();
        }
        // Whether the tag in turn is out, from registers: this cycle's
        // `busy` at the tag in turn and at the one after it, read for the
        // next cycle. A cycle stale, that errs only one way: the one tag a
        // cycle can set is the tag in turn, which then moves on, so a stale
        // bit is set only for a tag just freed (it waits a cycle more).
        self.nt_plus1.next = self.next_tag.q.val() + 1;
        self.busy_at0.next = self.busy.q.val() >> self.next_tag.q.val();
        self.busy_at1.next = self.busy.q.val() >> self.nt_plus1.val();
        self.nt_busy0.d.next = self.busy_at0.val().get_bit(0);
        self.nt_busy1.d.next = self.busy_at1.val().get_bit(0);
        self.tag_busy.next = self.nt_busy0.q.val();
        if self.nt_adv.q.val() {
            self.tag_busy.next = self.nt_busy1.q.val();
        }
        self.issue.next = self.sp_active.q.val()
            & !self.tag_busy.val()
            & (!self.o_valid.q.val() | self.m_ready.val());
        self.nt_adv.d.next = self.issue.val();
        self.tlp_line.next =
            self.sp_line0.q.val() + bit_cast::<9, 7>(self.sp_off.q.val().get_bits::<7>(6));
        if self.m_ready.val() {
            self.o_valid.d.next = false;
        }
        if self.issue.val() {
            self.o_valid.d.next = true;
            self.o_desc.d.next = (bit_cast::<128, 62>(self.sp_cur.q.val().get_bits::<62>(2)) << 2)
                | (bit_cast::<128, 13>(self.dw.val()) << 64)
                | (bit_cast::<128, 6>(self.next_tag.q.val()) << 96);
            self.o_fbe.d.next = self.fbe.val();
            self.o_lbe.d.next = self.lbe.val();
            self.tlps_q.d.next = self.tlps_q.q.val() + 1;
            self.next_tag.d.next = self.next_tag.q.val() + 1;
            self.sp_cur.d.next = self.sp_cur.q.val() + bit_cast::<64, 13>(self.tl.val());
            self.sp_rem.d.next = self.sp_rem.q.val() - self.tl.val();
            self.sp_off.d.next = self.sp_off.q.val() + self.tl.val();
            if self.sp_rem.q.val() == self.tl.val() {
                self.sp_active.d.next = false;
                self.qi.d.next = self.qi.q.val() + 1;
            }
        }
        self.tag_ram.write_address.next = self.next_tag.q.val();
        self.tag_ram.write_enable.next = self.issue.val();
        self.tag_ram.write_data.next = bit_cast::<25, 4>(self.sp_idx.q.val())
            | (bit_cast::<25, 9>(self.tlp_line.val()) << 4)
            | (bit_cast::<25, 12>(self.sp_cur.q.val().get_bits::<12>(0)) << 13);
        self.tag_ram_hi.write_address.next = self.next_tag.q.val();
        self.tag_ram_hi.write_enable.next = self.issue.val();
        self.tag_ram_hi.write_data.next = self.tag_ram.write_data.val();
        self.m_valid.next = self.o_valid.q.val();
        self.m_desc.next = self.o_desc.q.val();
        self.m_first_be.next = self.o_fbe.q.val();
        self.m_last_be.next = self.o_lbe.q.val();
        self.tlps.next = self.tlps_q.q.val();

        // ================= FILL =================
        // A completion at Dword 8 that cannot be set up in passing (see
        // DESIGN NOTES) holds RC for a cycle; every other beat is taken,
        // and registered before use.
        self.hi_lower.next = self.rc_data.q.val().get_bits::<12>(256);
        self.hi_slow.next = self.rc_valid.q.val()
            & self.rc_hi_sop.q.val()
            & ((self.hi_lower.val().get_bits::<6>(0) >= 44) | self.rc_eop1.q.val());
        self.hi_fast.next = self.rc_valid.q.val() & self.rc_hi_sop.q.val() & !self.hi_slow.val();
        self.take.next = !self.hi_slow.val();
        self.m_axis_rc_tready.next = self.take.val();
        self.shifted.d.next = self.hi_slow.val();
        if self.take.val() {
            self.rc_valid.d.next = self.m_axis_rc_tvalid.val();
            self.rc_data.d.next = self.m_axis_rc_tdata.val();
            self.rc_eop0.d.next = self.m_axis_rc_tuser.val().get_bit(76);
            self.rc_eop1.d.next = self.m_axis_rc_tuser.val().get_bit(77);
            self.rc_hi_sop.d.next = (self.m_axis_rc_tuser.val().get_bit(64)
                & (self.m_axis_rc_tuser.val().get_bits::<2>(68) == 2))
                | (self.m_axis_rc_tuser.val().get_bit(65)
                    & (self.m_axis_rc_tuser.val().get_bits::<2>(70) == 2));
            self.rc_disc.d.next = self.m_axis_rc_tuser.val().get_bit(96);
        } else {
            // Again, the upper half as a beat of its own.
            self.rc_data.d.next = self.rc_data.q.val() >> 256;
            self.rc_eop0.d.next = self.rc_eop1.q.val();
            self.rc_eop1.d.next = false;
            self.rc_hi_sop.d.next = false;
        }
        self.sop.next = self.rc_valid.q.val() & !self.in_pkt.q.val();
        if self.rc_valid.q.val() {
            self.in_pkt.d.next = !self.rc_eop0.q.val() | self.hi_fast.val();
        }
        if self.hi_slow.val() {
            self.in_pkt.d.next = false;
        }
        self.lower.next = self.rc_data.q.val().get_bits::<12>(0);
        // The lower half's record; held with RC, it is the upper half's.
        self.tag_ram.read_address.next = self.m_axis_rc_tdata.val().get_bits::<6>(64);
        if !self.take.val() {
            self.tag_ram.read_address.next = self.rc_data.q.val().get_bits::<6>(320);
        }
        self.tag_ram_hi.read_address.next = self.m_axis_rc_tdata.val().get_bits::<6>(320);
        self.t_idx.next = self.tag_ram.read_data.val().get_bits::<4>(0);
        self.t_line.next = self.tag_ram.read_data.val().get_bits::<9>(4);
        self.t_lo.next = self.tag_ram.read_data.val().get_bits::<12>(13);
        self.th_idx.next = self.tag_ram_hi.read_data.val().get_bits::<4>(0);
        self.th_line.next = self.tag_ram_hi.read_data.val().get_bits::<9>(4);
        self.th_lo.next = self.tag_ram_hi.read_data.val().get_bits::<12>(13);
        // The completion's parameters: from the descriptor on its first
        // beat, from registers after.
        self.rb.next = self.k_rb.q.val();
        self.line_a.next = self.k_line.q.val();
        self.dwn.next = self.k_dw.q.val();
        self.done.next = self.k_done.q.val();
        self.fail.next = self.k_err.q.val();
        self.idx.next = self.k_idx.q.val();
        self.tag.next = self.k_tag.q.val();
        if self.sop.val() {
            // Rotation: payload byte at RC lane 12 goes to the lane of its
            // address (Dword aligned).
            self.rb.next = (self.lower.val().get_bits::<6>(0) & bits::<6>(0x3C)) - 12;
            // The line of (first Dword's address - 12), in the buffer.
            self.line_a.next = self.t_line.val()
                + bit_cast::<9, 6>(
                    self.lower.val().get_bits::<6>(6) - self.t_lo.val().get_bits::<6>(6),
                );
            if self.lower.val().get_bits::<6>(0) < 12 {
                self.line_a.next = self.t_line.val()
                    + bit_cast::<9, 6>(
                        self.lower.val().get_bits::<6>(6) - self.t_lo.val().get_bits::<6>(6),
                    )
                    - 1;
            }
            self.dwn.next = self.rc_data.q.val().get_bits::<11>(32);
            self.done.next = self.rc_data.q.val().get_bit(30);
            self.fail.next = (self.rc_data.q.val().get_bits::<4>(12) != 0)
                | (self.rc_data.q.val().get_bits::<3>(43) != 0)
                | self.rc_data.q.val().get_bit(46);
            self.idx.next = self.t_idx.val();
            self.tag.next = self.rc_data.q.val().get_bits::<6>(64);
        }
        // Rotations in Dwords (the lanes of every byte are Dword aligned):
        // the placing stage shifts {beat, beat} right by `16 - rb / 4`
        // Dwords, and takes Dwords below `rb / 4` of a line from `carry`.
        self.rdw.next = self.rb.val().get_bits::<4>(2);
        self.rb_hi.next = (self.hi_lower.val().get_bits::<6>(0) & bits::<6>(0x3C)) - 44;
        // 64 - rb, at 6 bits before the comparison (Verilog would compare
        // at 32: RUSTHDL.md, `bit_cast(a + b)`).
        self.neg_rb.next = bits::<6>(0) - self.rb.val();
        // Lane of the completion's last byte in this (last) beat.
        self.end_lane.next = (bit_cast::<6, 11>(self.dwn.val()) << 2) + 11;
        if !self.sop.val() & self.k_s.q.val() {
            self.end_lane.next = (bit_cast::<6, 11>(self.dwn.val()) << 2) + 43;
        }
        self.write_a.next = self.rc_valid.q.val()
            & (self.dwn.val() != 0)
            & (!self.sop.val() | (self.lower.val().get_bits::<6>(0) >= 12));
        self.write_b.next = self.rc_valid.q.val()
            & self.rc_eop0.q.val()
            & (self.dwn.val() != 0)
            & (self.rb.val() != 0)
            & (self.end_lane.val() >= self.neg_rb.val());
        self.p_valid.d.next = self.rc_valid.q.val();
        self.p_data.d.next = self.rc_data.q.val();
        self.p_sh.d.next = bits::<5>(16) - bit_cast::<5, 4>(self.rdw.val());
        self.p_sh_hi.d.next = bits::<5>(16) - bit_cast::<5, 4>(self.rb_hi.val().get_bits::<4>(2));
        self.p_lo.d.next = (bits::<16>(1) << self.rdw.val()) - 1;
        self.p_hi.d.next = self.hi_fast.val();
        self.p_line.d.next = self.line_a.val();
        self.p_wa.d.next = self.write_a.val();
        self.p_wb.d.next = self.write_b.val();
        self.p_end.d.next = self.rc_valid.q.val() & self.rc_eop0.q.val();
        self.p_done.d.next = self.done.val();
        self.p_fail.d.next = self.fail.val() | self.rc_disc.q.val();
        self.p_idx.d.next = self.idx.val();
        self.p_tag.d.next = self.tag.val();
        if self.rc_valid.q.val() {
            self.k_rb.d.next = self.rb.val();
            self.k_line.d.next = self.line_a.val() + 1;
            self.k_dw.d.next = self.dwn.val();
            self.k_done.d.next = self.done.val();
            self.k_err.d.next = self.fail.val();
            self.k_idx.d.next = self.idx.val();
            self.k_tag.d.next = self.tag.val();
            if self.sop.val() {
                self.k_s.d.next = false;
            }
            if self.shifted.q.val() {
                // Its later beats are laid out from Dword 8, not 0.
                self.k_rb.d.next = self.rb.val() ^ bits::<6>(32);
                self.k_s.d.next = true;
            }
        }
        if self.hi_fast.val() {
            // All its bytes here wrap into the line of its first byte.
            self.k_rb.d.next = self.rb_hi.val();
            self.k_line.d.next = self.th_line.val()
                + bit_cast::<9, 6>(
                    self.hi_lower.val().get_bits::<6>(6) - self.th_lo.val().get_bits::<6>(6),
                );
            self.k_dw.d.next = self.rc_data.q.val().get_bits::<11>(288);
            self.k_done.d.next = self.rc_data.q.val().get_bit(286);
            self.k_err.d.next = (self.rc_data.q.val().get_bits::<4>(268) != 0)
                | (self.rc_data.q.val().get_bits::<3>(299) != 0)
                | self.rc_data.q.val().get_bit(302);
            self.k_idx.d.next = self.th_idx.val();
            self.k_tag.d.next = self.rc_data.q.val().get_bits::<6>(320);
            self.k_s.d.next = true;
        }

        // ---- PLACE: the beat of the cycle before, on its lanes, into the
        // buffer; its completion's end accounted. ----
        self.dbl.next = (bit_cast::<1024, 512>(self.p_data.q.val()) << 512)
            | bit_cast::<1024, 512>(self.p_data.q.val());
        self.rot_wide.next = self.dbl.val() >> (bit_cast::<11, 5>(self.p_sh.q.val()) << 5);
        self.rot.next = self.rot_wide.val().get_bits::<512>(0);
        self.rot_hi_wide.next = self.dbl.val() >> (bit_cast::<11, 5>(self.p_sh_hi.q.val()) << 5);
        for i in 0..16 {
            self.lo_mask_dw[i].next = 0.into();
            if self.p_lo.q.val().get_bit(i) {
                self.lo_mask_dw[i].next = self.all_ones.val().get_bits::<32>(0);
            }
        }
        self.lo_mask.next = bit_cast::<512, 32>(self.lo_mask_dw[0].val())
            | (bit_cast::<512, 32>(self.lo_mask_dw[1].val()) << 32)
            | (bit_cast::<512, 32>(self.lo_mask_dw[2].val()) << 64)
            | (bit_cast::<512, 32>(self.lo_mask_dw[3].val()) << 96)
            | (bit_cast::<512, 32>(self.lo_mask_dw[4].val()) << 128)
            | (bit_cast::<512, 32>(self.lo_mask_dw[5].val()) << 160)
            | (bit_cast::<512, 32>(self.lo_mask_dw[6].val()) << 192)
            | (bit_cast::<512, 32>(self.lo_mask_dw[7].val()) << 224)
            | (bit_cast::<512, 32>(self.lo_mask_dw[8].val()) << 256)
            | (bit_cast::<512, 32>(self.lo_mask_dw[9].val()) << 288)
            | (bit_cast::<512, 32>(self.lo_mask_dw[10].val()) << 320)
            | (bit_cast::<512, 32>(self.lo_mask_dw[11].val()) << 352)
            | (bit_cast::<512, 32>(self.lo_mask_dw[12].val()) << 384)
            | (bit_cast::<512, 32>(self.lo_mask_dw[13].val()) << 416)
            | (bit_cast::<512, 32>(self.lo_mask_dw[14].val()) << 448)
            | (bit_cast::<512, 32>(self.lo_mask_dw[15].val()) << 480);
        self.merged.next =
            (self.carry.q.val() & self.lo_mask.val()) | (self.rot.val() & !self.lo_mask.val());
        // Line a in its bank, line a + 1 in the other.
        self.bank0.write_address.next = self.p_line.q.val().get_bits::<8>(1);
        self.bank1.write_address.next = self.p_line.q.val().get_bits::<8>(1);
        self.bank0.write_data.next = self.merged.val();
        self.bank1.write_data.next = self.merged.val();
        self.bank0.write_enable.next = self.p_wa.q.val() & !self.p_line.q.val().get_bit(0);
        self.bank1.write_enable.next = self.p_wa.q.val() & self.p_line.q.val().get_bit(0);
        if self.p_line.q.val().get_bit(0) {
            // Line a is odd: line a + 1 is even, the next bank-0 address.
            self.bank0.write_address.next = self.p_line.q.val().get_bits::<8>(1) + 1;
            self.bank0.write_data.next = self.rot.val();
            self.bank0.write_enable.next = self.p_wb.q.val();
        } else {
            self.bank1.write_data.next = self.rot.val();
            self.bank1.write_enable.next = self.p_wb.q.val();
        }
        if self.p_valid.q.val() {
            self.carry.d.next = self.rot.val();
            if self.p_hi.q.val() {
                // The completion starting at Dword 8 continues.
                self.carry.d.next = self.rot_hi_wide.val().get_bits::<512>(0);
            }
        }
        self.tlp_end.next = self.p_end.q.val() & self.p_done.q.val();
        if self.p_end.q.val() & self.p_fail.q.val() {
            self.rc_errors_q.d.next = self.rc_errors_q.q.val() + 1;
        }
        self.busy_clr.next = 0.into();
        if self.tlp_end.val() {
            self.busy_clr.next = bits::<64>(1) << self.p_tag.q.val();
        }
        self.busy_set.next = 0.into();
        if self.issue.val() {
            // Never the tag just freed: a tag is issued only when free.
            self.busy_set.next = bits::<64>(1) << self.next_tag.q.val();
        }
        self.busy.d.next = (self.busy.q.val() & !self.busy_clr.val()) | self.busy_set.val();
        for i in 0..REQS {
            if self.p_end.q.val() & self.p_fail.q.val() & (self.p_idx.q.val().index() == i) {
                self.e_err[i].d.next = true;
            }
            if (self.issue.val() & (self.sp_idx.q.val().index() == i))
                & !(self.tlp_end.val() & (self.p_idx.q.val().index() == i))
            {
                self.e_count[i].d.next = self.e_count[i].q.val() + 1;
            }
            if !(self.issue.val() & (self.sp_idx.q.val().index() == i))
                & (self.tlp_end.val() & (self.p_idx.q.val().index() == i))
            {
                self.e_count[i].d.next = self.e_count[i].q.val() - 1;
            }
            if self.issue.val()
                & (self.sp_idx.q.val().index() == i)
                & (self.sp_rem.q.val() == self.tl.val())
            {
                self.e_issued[i].d.next = true;
            }
        }
        self.rc_errors.next = self.rc_errors_q.q.val();

        // ================= DELIVER =================
        self.head_ready.next = false;
        for i in 0..REQS {
            if (self.qr.q.val().get_bits::<4>(0).index() == i)
                & (self.qr.q.val() != self.qi.q.val())
                & self.e_issued[i].q.val()
                & (self.e_count[i].q.val() == 0)
            {
                self.head_ready.next = true;
            }
        }
        self.q_len.next = self.tb4.val().get_bits::<13>(64);
        self.q_addr6.next = self.tb4.val().get_bits::<6>(0);
        self.q_line.next = self.tb4.val().get_bits::<9>(77);
        self.q_tag.next = self.tb4.val().get_bits::<8>(86);
        self.q_err.next = false;
        for i in 0..REQS {
            if (self.qr.q.val().get_bits::<4>(0).index() == i) & self.e_err[i].q.val() {
                self.q_err.next = true;
            }
        }
        if !self.d_active.q.val() & self.head_ready.val() {
            self.d_active.d.next = true;
            self.d_k.d.next = 0.into();
            self.d_beats.d.next = bit_cast::<7, 13>((self.q_len.val() + 63) >> 6);
            self.d_lines.d.next = bit_cast::<7, 13>(
                (bit_cast::<13, 6>(self.q_addr6.val()) + self.q_len.val() + 63) >> 6,
            );
            self.d_line.d.next = self.q_line.val();
            self.d_shift.d.next = self.q_addr6.val();
            self.d_tag.d.next = self.q_tag.val();
            self.d_err.d.next = self.q_err.val();
            self.d_tail.d.next = self.q_len.val().get_bits::<6>(0);
        }
        self.go.next = !self.r_valid.q.val() | self.m_rsp_ready.val();
        self.lo_line.next = self.d_line.q.val() + bit_cast::<9, 7>(self.d_k.q.val());
        self.hi_line.next = self.lo_line.val() + 1;
        self.na0.next = self.lo_line.val().get_bits::<8>(1);
        self.na1.next = self.lo_line.val().get_bits::<8>(1);
        if self.lo_line.val().get_bit(0) {
            self.na0.next = self.hi_line.val().get_bits::<8>(1);
        }
        self.d_last_beat.next = self.d_k.q.val() + 1 == self.d_beats.q.val();
        self.lo_data.next = self.bank0.read_data.val();
        self.hi_data.next = self.bank1.read_data.val();
        if self.c_lo_bank.q.val() {
            self.lo_data.next = self.bank1.read_data.val();
            self.hi_data.next = self.bank0.read_data.val();
        }
        self.pair.next = (bit_cast::<1024, 512>(self.hi_data.val()) << 512)
            | bit_cast::<1024, 512>(self.lo_data.val());
        self.out.next = self.pair.val() >> (bit_cast::<10, 6>(self.c_shift.q.val()) << 3);
        self.bank0.read_address.next = self.c_addr0.q.val();
        self.bank1.read_address.next = self.c_addr1.q.val();
        if self.go.val() {
            self.r_valid.d.next = self.c_valid.q.val();
            self.r_data.d.next = self.out.val().get_bits::<512>(0);
            if self.c_last.q.val() & (self.c_tail.q.val() != 0) {
                // Lanes past the request's end are zero.
                self.r_data.d.next = self.out.val().get_bits::<512>(0)
                    & (self.all_ones.val()
                        >> (bits::<10>(512) - (bit_cast::<10, 6>(self.c_tail.q.val()) << 3)));
            }
            if self.c_err.q.val() {
                self.r_data.d.next = 0.into();
            }
            self.r_tag.d.next = self.c_tag.q.val();
            self.r_last.d.next = self.c_last.q.val();
            self.r_err.d.next = self.c_err.q.val();
            if self.c_valid.q.val() & self.c_last.q.val() {
                self.br.d.next = self.br.q.val() + bit_cast::<10, 7>(self.c_lines.q.val());
            }
            self.c_valid.d.next = self.d_active.q.val();
            self.c_lo_bank.d.next = self.lo_line.val().get_bit(0);
            self.c_shift.d.next = self.d_shift.q.val();
            self.c_tag.d.next = self.d_tag.q.val();
            self.c_err.d.next = self.d_err.q.val();
            self.c_last.d.next = self.d_last_beat.val();
            self.c_lines.d.next = self.d_lines.q.val();
            self.c_tail.d.next = self.d_tail.q.val();
            self.c_addr0.d.next = self.na0.val();
            self.c_addr1.d.next = self.na1.val();
            self.bank0.read_address.next = self.na0.val();
            self.bank1.read_address.next = self.na1.val();
            if self.d_active.q.val() {
                self.d_k.d.next = self.d_k.q.val() + 1;
                if self.d_last_beat.val() {
                    self.d_active.d.next = false;
                    self.qr.d.next = self.qr.q.val() + 1;
                }
            }
        }
        self.m_rsp_valid.next = self.r_valid.q.val();
        self.m_rsp_data.next = self.r_data.q.val();
        self.m_rsp_tag.next = self.r_tag.q.val();
        self.m_rsp_last.next = self.r_last.q.val();
        self.m_rsp_error.next = self.r_err.q.val();

        if self.reset.val() {
            self.qw.d.next = 0.into();
            self.qi.d.next = 0.into();
            self.qr.d.next = 0.into();
            self.bw.d.next = 0.into();
            self.br.d.next = 0.into();
            self.sp_active.d.next = false;
            self.next_tag.d.next = 0.into();
            self.busy.d.next = 0.into();
            self.nt_busy0.d.next = false;
            self.nt_busy1.d.next = false;
            self.nt_adv.d.next = false;
            self.o_valid.d.next = false;
            self.tlps_q.d.next = 0.into();
            self.rc_valid.d.next = false;
            self.p_valid.d.next = false;
            self.p_end.d.next = false;
            self.p_wa.d.next = false;
            self.p_wb.d.next = false;
            self.rc_hi_sop.d.next = false;
            self.shifted.d.next = false;
            self.in_pkt.d.next = false;
            self.rc_errors_q.d.next = 0.into();
            self.d_active.d.next = false;
            self.c_valid.d.next = false;
            self.r_valid.d.next = false;
            for i in 0..REQS {
                self.e_count[i].d.next = 0.into();
            }
        }
    }
}

//! The card's DMA on the PCIe hard block's requester side: the core's read
//! and write ports to the requester request stream (RQ) and the requester
//! completion stream (RC) back. UltraScale+ integrated block
//! (`pcie4_uscale_plus` / `pcie4c_uscale_plus`, PG213), 512-bit AXI4-Stream,
//! Dword-aligned mode, RQ straddle off, RC 2-TLP straddle on.
//!
//! Two halves, one file each: `rq_write` (writes: memory-write TLPs built
//! store-and-forward, split at MPS multiples) and `rq_read` (reads: memory-read
//! TLPs split at MRRS multiples, tags round-robin, completions reassembled in
//! a reorder buffer and handed back whole, in request order). This block
//! arbitrates RQ between them and formats its sideband.
//!
//! RQ descriptor, beat 0 bits 127:0 (PG213, "Requester Request Descriptor
//! Formats", memory requests): [1:0] address type (0, untranslated),
//! [63:2] Dword address, [74:64] Dword count (1-1024), [78:75] request type
//! (0000 memory read, 0001 memory write), [79] poisoned, [95:80] requester
//! ID, [103:96] tag, [119:104] completer ID, [120] requester ID enable (0:
//! the block fills in its own ID), [123:121] TC, [126:124] attributes,
//! [127] force ECRC; all zero here but the address, count, type and tag.
//! `s_axis_rq_tuser` (512-bit, 137 bits): [3:0] first Dword's byte enables,
//! [11:8] last Dword's (0 for a 1-Dword request), [19:16] address offset (0
//! in Dword-aligned mode), [20] is_sop[0], [23:22] is_sop0_ptr, [26]
//! is_eop[0], [31:28] is_eop0_ptr (the last Dword's index in the beat),
//! [36] discontinue, [66:61] sequence number, [136:73] parity (unused: the
//! block is configured without parity checking). is_sop/is_eop matter only
//! with RQ straddle on; they are set right anyway.
//!
//! Arbitration: per TLP, alternating when both halves have one ready; a
//! write TLP holds RQ from its first beat to its last (the block treats a
//! gap inside a packet as an error). The choice is made from the halves'
//! output registers, so `s_axis_rq_tready` reaches only the chosen half's
//! output register and its two-stage pipeline (see `rq_write`).

use rust_hdl::prelude::*;

use super::rq_read::RqReader;
use super::rq_write::RqWriter;

#[derive(LogicBlock, Default)]
pub struct PcieRequester {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, bool>,
    /// The core's DMA read-request port (the core's `m_dma_rd_req_*`).
    pub s_dma_rd_req_valid: Signal<In, bool>,
    pub s_dma_rd_req_ready: Signal<Out, bool>,
    pub s_dma_rd_req_addr: Signal<In, Bits<64>>,
    pub s_dma_rd_req_len: Signal<In, Bits<16>>,
    pub s_dma_rd_req_tag: Signal<In, Bits<8>>,
    /// The core's DMA read-response port (the core's `s_dma_rd_rsp_*`).
    pub m_dma_rd_rsp_valid: Signal<Out, bool>,
    pub m_dma_rd_rsp_ready: Signal<In, bool>,
    pub m_dma_rd_rsp_data: Signal<Out, Bits<512>>,
    pub m_dma_rd_rsp_tag: Signal<Out, Bits<8>>,
    pub m_dma_rd_rsp_last: Signal<Out, bool>,
    pub m_dma_rd_rsp_error: Signal<Out, bool>,
    /// The core's DMA write port (the core's `m_dma_wr_*`).
    pub s_dma_wr_valid: Signal<In, bool>,
    pub s_dma_wr_ready: Signal<Out, bool>,
    pub s_dma_wr_addr: Signal<In, Bits<64>>,
    pub s_dma_wr_data: Signal<In, Bits<512>>,
    pub s_dma_wr_strb: Signal<In, Bits<64>>,
    pub s_dma_wr_last: Signal<In, bool>,
    /// To the hard block: requester requests.
    pub s_axis_rq_tdata: Signal<Out, Bits<512>>,
    pub s_axis_rq_tuser: Signal<Out, Bits<137>>,
    pub s_axis_rq_tkeep: Signal<Out, Bits<16>>,
    pub s_axis_rq_tlast: Signal<Out, bool>,
    pub s_axis_rq_tvalid: Signal<Out, bool>,
    pub s_axis_rq_tready: Signal<In, bool>,
    /// From the hard block: requester completions.
    pub m_axis_rc_tdata: Signal<In, Bits<512>>,
    pub m_axis_rc_tuser: Signal<In, Bits<161>>,
    pub m_axis_rc_tlast: Signal<In, bool>,
    pub m_axis_rc_tkeep: Signal<In, Bits<16>>,
    pub m_axis_rc_tvalid: Signal<In, bool>,
    pub m_axis_rc_tready: Signal<Out, bool>,
    /// The hard block's `cfg_max_payload` (0 = 128 B ... 3 = 1024 B; used
    /// up to 512) and `cfg_max_read_req` (0 = 128 B ... 5 = 4096 B).
    pub cfg_max_payload: Signal<In, Bits<2>>,
    pub cfg_max_read_req: Signal<In, Bits<3>>,
    /// Counters (wrapping): write TLPs, read TLPs, completions that failed
    /// a request, write beats dropped for a strobe with a hole.
    pub write_tlps: Signal<Out, Bits<32>>,
    pub read_tlps: Signal<Out, Bits<32>>,
    pub rc_errors: Signal<Out, Bits<32>>,
    pub strobe_holes: Signal<Out, Bits<32>>,

    writer: RqWriter,
    reader: RqReader,
    /// A write TLP is part way out: RQ stays with the writer.
    locked: DFF<bool>,
    /// The reader goes first when both have a TLP (flips per TLP).
    prefer_read: DFF<bool>,
    pick_read: Signal<Local, bool>,
}

impl Logic for PcieRequester {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, locked, prefer_read);
        self.writer.clock.next = self.clock.val();
        self.writer.reset.next = self.reset.val();
        self.reader.clock.next = self.clock.val();
        self.reader.reset.next = self.reset.val();

        self.writer.s_wr_valid.next = self.s_dma_wr_valid.val();
        self.s_dma_wr_ready.next = self.writer.s_wr_ready.val();
        self.writer.s_wr_addr.next = self.s_dma_wr_addr.val();
        self.writer.s_wr_data.next = self.s_dma_wr_data.val();
        self.writer.s_wr_strb.next = self.s_dma_wr_strb.val();
        self.writer.s_wr_last.next = self.s_dma_wr_last.val();
        self.writer.cfg_max_payload.next = self.cfg_max_payload.val();

        self.reader.s_req_valid.next = self.s_dma_rd_req_valid.val();
        self.s_dma_rd_req_ready.next = self.reader.s_req_ready.val();
        self.reader.s_req_addr.next = self.s_dma_rd_req_addr.val();
        self.reader.s_req_len.next = self.s_dma_rd_req_len.val();
        self.reader.s_req_tag.next = self.s_dma_rd_req_tag.val();
        self.m_dma_rd_rsp_valid.next = self.reader.m_rsp_valid.val();
        self.reader.m_rsp_ready.next = self.m_dma_rd_rsp_ready.val();
        self.m_dma_rd_rsp_data.next = self.reader.m_rsp_data.val();
        self.m_dma_rd_rsp_tag.next = self.reader.m_rsp_tag.val();
        self.m_dma_rd_rsp_last.next = self.reader.m_rsp_last.val();
        self.m_dma_rd_rsp_error.next = self.reader.m_rsp_error.val();
        self.reader.m_axis_rc_tdata.next = self.m_axis_rc_tdata.val();
        self.reader.m_axis_rc_tuser.next = self.m_axis_rc_tuser.val();
        self.reader.m_axis_rc_tlast.next = self.m_axis_rc_tlast.val();
        self.reader.m_axis_rc_tkeep.next = self.m_axis_rc_tkeep.val();
        self.reader.m_axis_rc_tvalid.next = self.m_axis_rc_tvalid.val();
        self.m_axis_rc_tready.next = self.reader.m_axis_rc_tready.val();
        self.reader.cfg_max_read_req.next = self.cfg_max_read_req.val();

        // ---- RQ arbiter ----
        self.pick_read.next = !self.locked.q.val()
            & self.reader.m_valid.val()
            & (!self.writer.m_valid.val() | self.prefer_read.q.val());
        self.writer.m_ready.next = !self.pick_read.val() & self.s_axis_rq_tready.val();
        self.reader.m_ready.next = self.pick_read.val() & self.s_axis_rq_tready.val();
        if self.pick_read.val() {
            self.s_axis_rq_tvalid.next = true;
            self.s_axis_rq_tdata.next = bit_cast::<512, 128>(self.reader.m_desc.val());
            self.s_axis_rq_tkeep.next = bits::<16>(0xF);
            self.s_axis_rq_tlast.next = true;
            self.s_axis_rq_tuser.next = bit_cast::<137, 4>(self.reader.m_first_be.val())
                | (bit_cast::<137, 4>(self.reader.m_last_be.val()) << 8)
                | (bits::<137>(1) << 20)
                | (bits::<137>(1) << 26)
                | (bits::<137>(3) << 28);
        } else {
            self.s_axis_rq_tvalid.next = self.writer.m_valid.val();
            self.s_axis_rq_tdata.next = self.writer.m_data.val();
            self.s_axis_rq_tkeep.next = self.writer.m_keep.val();
            self.s_axis_rq_tlast.next = self.writer.m_last.val();
            self.s_axis_rq_tuser.next = bit_cast::<137, 4>(self.writer.m_first_be.val())
                | (bit_cast::<137, 4>(self.writer.m_last_be.val()) << 8)
                | (bit_cast::<137, 1>(self.writer.m_sop.val().into()) << 20)
                | (bit_cast::<137, 1>(self.writer.m_last.val().into()) << 26)
                | (bit_cast::<137, 4>(self.writer.m_eop_ptr.val()) << 28);
        }
        if self.s_axis_rq_tready.val() {
            if self.pick_read.val() {
                self.prefer_read.d.next = false;
            } else if self.writer.m_valid.val() {
                self.locked.d.next = !self.writer.m_last.val();
                if self.writer.m_last.val() {
                    self.prefer_read.d.next = true;
                }
            }
        }

        self.write_tlps.next = self.writer.tlps.val();
        self.read_tlps.next = self.reader.tlps.val();
        self.rc_errors.next = self.reader.rc_errors.val();
        self.strobe_holes.next = self.writer.holes.val();
        if self.reset.val() {
            self.locked.d.next = false;
            self.prefer_read.d.next = false;
        }
    }
}

//! The host's BAR accesses, from the PCIe hard block's completer request
//! stream (CQ) to the core's CSR port, and the completions of its reads back
//! on the completer completion stream (CC). UltraScale+ integrated block
//! (`pcie4_uscale_plus` / `pcie4c_uscale_plus`, PG213), 512-bit AXI4-Stream,
//! Dword-aligned mode, CQ straddle off.
//!
//! Formats (PG213, "Completer Request Descriptor Formats", "Completer
//! Completion Descriptor Format"):
//! - CQ descriptor, beat 0 bits 127:0: [1:0] address type, [63:2] Dword
//!   address, [74:64] Dword count, [78:75] request type (0000 memory read,
//!   0001 memory write), [95:80] requester ID, [103:96] tag, [111:104] target
//!   function, [114:112] BAR ID, [120:115] BAR aperture, [123:121] traffic
//!   class, [126:124] attributes. The payload follows at bit 128: Dwords 0-11
//!   in beat 0, 12-15 in bits 127:0 of beat 1. `tuser` [3:0] first Dword's
//!   byte enables, [11:8] last Dword's, [80] start of packet.
//! - CC descriptor, beat 0 bits 95:0: [6:0] lower address, [9:8] address
//!   type, [28:16] byte count, [42:32] Dword count, [45:43] completion status
//!   (000 success, 001 unsupported request), [63:48] requester ID, [71:64]
//!   tag, [91:89] traffic class, [94:92] attributes; the completer ID fields
//!   are left to the core (enable bit 88 clear). Data Dwords follow at bit 96.
//!
//! DESIGN NOTES
//! ------------
//! - One request at a time. A request is taken whole (one beat, or two for a
//!   write of 13 to 16 Dwords: the 64-byte write-combined bursts a host CPU
//!   makes of a run of 32-bit writes), then played out on the CSR port a
//!   Dword per cycle; `m_axis_cq_tready` is low meanwhile. It is a function of
//!   the state alone (not of `tvalid`), so no ready path crosses blocks.
//!   BAR accesses are rare next to DMA, and a register write a cycle is what
//!   the core takes, so queueing more than one request would buy nothing.
//! - Writes: each Dword whose byte enables are all set becomes one CSR write
//!   at the BAR offset (the address's low 24 bits: the 16 MiB BAR). A Dword
//!   with some bytes disabled is skipped and counted (`partial_writes`): the
//!   CSRs are 32-bit registers with no byte strobes, and the driver only makes
//!   32-bit accesses.
//! - Reads of 1 to 13 Dwords (what fits one CC beat after the 3-Dword
//!   descriptor) become that many CSR reads, one after another, each waiting
//!   for `csr_rd_valid`; then one completion with the data. Byte count and
//!   lower address follow the byte enables (PCIe's rules for a completion of
//!   a whole request). A longer read is answered "unsupported request".
//! - Other request types (I/O, atomics, messages) are not for this device:
//!   they are consumed and counted (`dropped`). A non-posted one among them
//!   gets no completion and times out at the host, which logs it: acceptable
//!   for requests no driver of this card makes.
//!
//! Latency: a 1-Dword read spends 1 cycle taking the beat, the CSR read's own
//! latency (1 cycle in the core), and 1 cycle presenting the completion.

use rust_hdl::prelude::*;

/// Dwords the payload buffer holds: a 64-byte write.
pub const MAX_DWORDS: usize = 16;
/// The longest read answered: the Dwords that fit one CC beat after the descriptor.
pub const MAX_READ_DWORDS: u64 = 13;

/// States (`state`; literals in `update`, RustHDL cannot use these names there):
/// ready for a request's first beat;
pub const IDLE: u64 = 0;
/// a write of more than 12 Dwords: its second beat;
pub const WRITE_BEAT1: u64 = 1;
/// consuming the rest of a packet not served;
pub const DRAIN: u64 = 2;
/// issuing CSR writes, one Dword a cycle;
pub const WRITING: u64 = 3;
/// a CSR read is to be issued for Dword `index`;
pub const READ_ISSUE: u64 = 4;
/// waiting for its `csr_rd_valid`;
pub const READ_WAIT: u64 = 5;
/// the completion is on offer until `s_axis_cc_tready`.
pub const COMPLETE: u64 = 6;

#[derive(LogicBlock)]
pub struct PcieCompleter {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, bool>,
    /// From the hard block: completer requests.
    pub m_axis_cq_tdata: Signal<In, Bits<512>>,
    pub m_axis_cq_tuser: Signal<In, Bits<183>>,
    pub m_axis_cq_tlast: Signal<In, bool>,
    pub m_axis_cq_tvalid: Signal<In, bool>,
    pub m_axis_cq_tready: Signal<Out, bool>,
    /// To the hard block: completer completions.
    pub s_axis_cc_tdata: Signal<Out, Bits<512>>,
    pub s_axis_cc_tuser: Signal<Out, Bits<81>>,
    pub s_axis_cc_tkeep: Signal<Out, Bits<16>>,
    pub s_axis_cc_tlast: Signal<Out, bool>,
    pub s_axis_cc_tvalid: Signal<Out, bool>,
    pub s_axis_cc_tready: Signal<In, bool>,
    /// The core's CSR port.
    pub csr_addr: Signal<Out, Bits<24>>,
    pub csr_wr_data: Signal<Out, Bits<32>>,
    pub csr_wr_en: Signal<Out, bool>,
    pub csr_rd_en: Signal<Out, bool>,
    pub csr_rd_data: Signal<In, Bits<32>>,
    pub csr_rd_valid: Signal<In, bool>,
    /// Counters (wrapping): requests of types not served; write Dwords
    /// skipped for partial byte enables.
    pub dropped: Signal<Out, Bits<32>>,
    pub partial_writes: Signal<Out, Bits<32>>,

    state: DFF<Bits<3>>,
    /// The request: Dword count; Dword address (BAR offset / 4).
    dwords: DFF<Bits<11>>,
    dw_addr: DFF<Bits<22>>,
    first_be: DFF<Bits<4>>,
    last_be: DFF<Bits<4>>,
    /// Requester ID, tag, TC, attributes, address type, for the completion.
    requester: DFF<Bits<16>>,
    tag: DFF<Bits<8>>,
    tc: DFF<Bits<3>>,
    attr: DFF<Bits<3>>,
    at: DFF<Bits<2>>,
    /// Dword being written or read.
    index: DFF<Bits<5>>,
    data: [DFF<Bits<32>>; MAX_DWORDS],
    dropped_q: DFF<Bits<32>>,
    partial_q: DFF<Bits<32>>,
    // Locals.
    desc: Signal<Local, Bits<128>>,
    req_type: Signal<Local, Bits<4>>,
    sop: Signal<Local, bool>,
    be: Signal<Local, Bits<4>>,
    first_off: Signal<Local, Bits<2>>,
    first_top: Signal<Local, Bits<3>>,
    last_end: Signal<Local, Bits<3>>,
    byte_count: Signal<Local, Bits<13>>,
    status: Signal<Local, Bits<3>>,
    cc_dwords: Signal<Local, Bits<11>>,
    cc_desc: Signal<Local, Bits<512>>,
    cc_data: Signal<Local, Bits<512>>,
    keep_all: Constant<Bits<16>>,
}

impl Default for PcieCompleter {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            m_axis_cq_tdata: Default::default(),
            m_axis_cq_tuser: Default::default(),
            m_axis_cq_tlast: Default::default(),
            m_axis_cq_tvalid: Default::default(),
            m_axis_cq_tready: Default::default(),
            s_axis_cc_tdata: Default::default(),
            s_axis_cc_tuser: Default::default(),
            s_axis_cc_tkeep: Default::default(),
            s_axis_cc_tlast: Default::default(),
            s_axis_cc_tvalid: Default::default(),
            s_axis_cc_tready: Default::default(),
            csr_addr: Default::default(),
            csr_wr_data: Default::default(),
            csr_wr_en: Default::default(),
            csr_rd_en: Default::default(),
            csr_rd_data: Default::default(),
            csr_rd_valid: Default::default(),
            dropped: Default::default(),
            partial_writes: Default::default(),
            state: Default::default(),
            dwords: Default::default(),
            dw_addr: Default::default(),
            first_be: Default::default(),
            last_be: Default::default(),
            requester: Default::default(),
            tag: Default::default(),
            tc: Default::default(),
            attr: Default::default(),
            at: Default::default(),
            index: Default::default(),
            data: Default::default(),
            dropped_q: Default::default(),
            partial_q: Default::default(),
            desc: Default::default(),
            req_type: Default::default(),
            sop: Default::default(),
            be: Default::default(),
            first_off: Default::default(),
            first_top: Default::default(),
            last_end: Default::default(),
            byte_count: Default::default(),
            status: Default::default(),
            cc_dwords: Default::default(),
            cc_desc: Default::default(),
            cc_data: Default::default(),
            keep_all: Constant::new(0xFFFFu64.to_bits()),
        }
    }
}

impl Logic for PcieCompleter {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, state, dwords, dw_addr, first_be, last_be, requester, tag, tc, attr, at,
            index, dropped_q, partial_q
        );
        for i in 0..MAX_DWORDS {
            self.data[i].clock.next = self.clock.val();
            self.data[i].d.next = self.data[i].q.val();
        }
        self.desc.next = self.m_axis_cq_tdata.val().get_bits::<128>(0);
        self.req_type.next = self.desc.val().get_bits::<4>(75);
        self.sop.next = self.m_axis_cq_tuser.val().get_bit(80);
        self.m_axis_cq_tready.next = false;
        self.csr_wr_en.next = false;
        self.csr_rd_en.next = false;
        self.csr_addr.next =
            bit_cast::<24, 22>(self.dw_addr.q.val() + bit_cast::<22, 5>(self.index.q.val())) << 2;
        self.csr_wr_data.next = 0.into();
        self.be.next = bits::<4>(0xF);
        for i in 0..MAX_DWORDS {
            if self.index.q.val().index() == i {
                self.csr_wr_data.next = self.data[i].q.val();
            }
        }
        if self.index.q.val() == 0 {
            self.be.next = self.first_be.q.val();
        } else if bit_cast::<11, 5>(self.index.q.val()) + 1 == self.dwords.q.val() {
            self.be.next = self.last_be.q.val();
        }

        if self.state.q.val() == 0 {
            self.m_axis_cq_tready.next = true;
            if self.m_axis_cq_tvalid.val() & self.sop.val() {
                self.dwords.d.next = self.desc.val().get_bits::<11>(64);
                self.dw_addr.d.next = self.desc.val().get_bits::<22>(2);
                self.at.d.next = self.desc.val().get_bits::<2>(0);
                self.requester.d.next = self.desc.val().get_bits::<16>(80);
                self.tag.d.next = self.desc.val().get_bits::<8>(96);
                self.tc.d.next = self.desc.val().get_bits::<3>(121);
                self.attr.d.next = self.desc.val().get_bits::<3>(124);
                self.first_be.d.next = self.m_axis_cq_tuser.val().get_bits::<4>(0);
                self.last_be.d.next = self.m_axis_cq_tuser.val().get_bits::<4>(8);
                self.index.d.next = 0.into();
                for i in 0..12 {
                    self.data[i].d.next = self.m_axis_cq_tdata.val().get_bits::<32>(128 + 32 * i);
                }
                if self.req_type.val() == 0 {
                    // A read carries no payload: one beat. Too long a
                    // read gets an unsupported-request completion.
                    if self.desc.val().get_bits::<11>(64) > 13 {
                        self.state.d.next = 6.into();
                    } else {
                        self.state.d.next = 4.into();
                    }
                } else if (self.req_type.val() == 1)
                    & (self.desc.val().get_bits::<11>(64) <= 16)
                    & (self.desc.val().get_bits::<11>(64) != 0)
                {
                    if self.m_axis_cq_tlast.val() {
                        self.state.d.next = 3.into();
                    } else {
                        self.state.d.next = 1.into();
                    }
                } else {
                    self.dropped_q.d.next = self.dropped_q.q.val() + 1;
                    if !self.m_axis_cq_tlast.val() {
                        self.state.d.next = 2.into();
                    }
                }
            }
        } else if self.state.q.val() == 1 {
            self.m_axis_cq_tready.next = true;
            if self.m_axis_cq_tvalid.val() {
                for i in 0..4 {
                    self.data[12 + i].d.next = self.m_axis_cq_tdata.val().get_bits::<32>(32 * i);
                }
                if self.m_axis_cq_tlast.val() {
                    self.state.d.next = 3.into();
                } else {
                    self.state.d.next = 2.into();
                }
            }
        } else if self.state.q.val() == 2 {
            self.m_axis_cq_tready.next = true;
            if self.m_axis_cq_tvalid.val() & self.m_axis_cq_tlast.val() {
                self.state.d.next = 0.into();
            }
        } else if self.state.q.val() == 3 {
            if self.be.val() == 0xF {
                self.csr_wr_en.next = true;
            } else {
                self.partial_q.d.next = self.partial_q.q.val() + 1;
            }
            self.index.d.next = self.index.q.val() + 1;
            if bit_cast::<11, 5>(self.index.q.val()) + 1 == self.dwords.q.val() {
                self.state.d.next = 0.into();
            }
        } else if self.state.q.val() == 4 {
            self.csr_rd_en.next = true;
            self.state.d.next = 5.into();
        } else if self.state.q.val() == 5 {
            if self.csr_rd_valid.val() {
                for i in 0..MAX_DWORDS {
                    if self.index.q.val().index() == i {
                        self.data[i].d.next = self.csr_rd_data.val();
                    }
                }
                self.index.d.next = self.index.q.val() + 1;
                if bit_cast::<11, 5>(self.index.q.val()) + 1 == self.dwords.q.val() {
                    self.state.d.next = 6.into();
                } else {
                    self.state.d.next = 4.into();
                }
            }
        } else if self.state.q.val() == 6 {
            if self.s_axis_cc_tready.val() {
                self.state.d.next = 0.into();
            }
        } else {
            self.state.d.next = 0.into();
        }

        // ---- the completion ----
        // Offset of the first enabled byte, and the end of the enabled bytes
        // in the first and the last Dword (PCIe's byte count rules).
        self.first_off.next = 0.into();
        if !self.first_be.q.val().get_bit(0) {
            self.first_off.next = 1.into();
            if !self.first_be.q.val().get_bit(1) {
                self.first_off.next = 2.into();
                if !self.first_be.q.val().get_bit(2) {
                    self.first_off.next = 3.into();
                }
            }
        }
        self.first_top.next = 1.into();
        if self.first_be.q.val().get_bit(1) {
            self.first_top.next = 2.into();
        }
        if self.first_be.q.val().get_bit(2) {
            self.first_top.next = 3.into();
        }
        if self.first_be.q.val().get_bit(3) {
            self.first_top.next = 4.into();
        }
        self.last_end.next = 1.into();
        if self.last_be.q.val().get_bit(1) {
            self.last_end.next = 2.into();
        }
        if self.last_be.q.val().get_bit(2) {
            self.last_end.next = 3.into();
        }
        if self.last_be.q.val().get_bit(3) {
            self.last_end.next = 4.into();
        }
        if self.dwords.q.val() == 1 {
            self.byte_count.next =
                bit_cast::<13, 3>(self.first_top.val()) - bit_cast::<13, 2>(self.first_off.val());
            if self.first_be.q.val() == 0 {
                self.byte_count.next = 1.into();
            }
        } else {
            self.byte_count.next = (bit_cast::<13, 11>(self.dwords.q.val()) << 2)
                - 4
                - bit_cast::<13, 2>(self.first_off.val())
                + bit_cast::<13, 3>(self.last_end.val());
        }
        self.status.next = 0.into();
        self.cc_dwords.next = self.dwords.q.val();
        if self.dwords.q.val() > 13 {
            // Unsupported request: no data, byte count 4 (PCIe's rule for
            // a completion without data is to report what remains; the
            // requester discards it).
            self.status.next = 1.into();
            self.cc_dwords.next = 0.into();
        }
        self.cc_desc.next = bit_cast::<512, 2>(self.first_off.val())
            | (bit_cast::<512, 5>(self.dw_addr.q.val().get_bits::<5>(0)) << 2)
            | (bit_cast::<512, 2>(self.at.q.val()) << 8)
            | (bit_cast::<512, 13>(self.byte_count.val()) << 16)
            | (bit_cast::<512, 11>(self.cc_dwords.val()) << 32)
            | (bit_cast::<512, 3>(self.status.val()) << 43)
            | (bit_cast::<512, 16>(self.requester.q.val()) << 48)
            | (bit_cast::<512, 8>(self.tag.q.val()) << 64)
            | (bit_cast::<512, 3>(self.tc.q.val()) << 89)
            | (bit_cast::<512, 3>(self.attr.q.val()) << 92);
        self.cc_data.next = (bit_cast::<512, 32>(self.data[0].q.val()) << 96)
            | (bit_cast::<512, 32>(self.data[1].q.val()) << 128)
            | (bit_cast::<512, 32>(self.data[2].q.val()) << 160)
            | (bit_cast::<512, 32>(self.data[3].q.val()) << 192)
            | (bit_cast::<512, 32>(self.data[4].q.val()) << 224)
            | (bit_cast::<512, 32>(self.data[5].q.val()) << 256)
            | (bit_cast::<512, 32>(self.data[6].q.val()) << 288)
            | (bit_cast::<512, 32>(self.data[7].q.val()) << 320)
            | (bit_cast::<512, 32>(self.data[8].q.val()) << 352)
            | (bit_cast::<512, 32>(self.data[9].q.val()) << 384)
            | (bit_cast::<512, 32>(self.data[10].q.val()) << 416)
            | (bit_cast::<512, 32>(self.data[11].q.val()) << 448)
            | (bit_cast::<512, 32>(self.data[12].q.val()) << 480);
        self.s_axis_cc_tvalid.next = self.state.q.val() == 6;
        self.s_axis_cc_tlast.next = true;
        self.s_axis_cc_tuser.next = 0.into();
        self.s_axis_cc_tdata.next = self.cc_desc.val();
        // Descriptor Dwords, then the data Dwords.
        self.s_axis_cc_tkeep.next = bits::<16>(0x7);
        if self.status.val() == 0 {
            self.s_axis_cc_tdata.next = self.cc_desc.val() | self.cc_data.val();
            self.s_axis_cc_tkeep.next =
                self.keep_all.val() >> (bits::<16>(13) - bit_cast::<16, 11>(self.dwords.q.val()));
        }

        self.dropped.next = self.dropped_q.q.val();
        self.partial_writes.next = self.partial_q.q.val();
        if self.reset.val() {
            self.state.d.next = 0.into();
            self.dropped_q.d.next = 0.into();
            self.partial_q.d.next = 0.into();
            self.index.d.next = 0.into();
        }
    }
}

/// The byte count and lower address PCIe puts in the completion of a read of
/// `dwords` Dwords at Dword address `dw_addr` with these byte enables: the
/// reference the RTL is tested against.
pub fn completion_bytes(dwords: u32, dw_addr: u64, first_be: u8, last_be: u8) -> (u32, u8) {
    let first_off = if first_be == 0 {
        0
    } else {
        first_be.trailing_zeros()
    };
    let lower = ((dw_addr as u8 & 0x1f) << 2) | first_off as u8;
    if dwords == 1 {
        if first_be == 0 {
            return (1, lower);
        }
        let top = 8 - first_be.leading_zeros();
        return (top - first_off, lower);
    }
    let last_end = if last_be == 0 {
        1
    } else {
        8 - last_be.leading_zeros()
    };
    (4 * dwords - 4 - first_off + last_end, lower)
}

const _: () = assert!(MAX_READ_DWORDS == 13, "`> 13` in update is MAX_READ_DWORDS");

//! The interrupt block: MSI-X for the completion rings, one vector per
//! endpoint, with the MSI-X table and PBA, arming and moderation
//! (`regmap::interrupt` has the host's side of it).
//!
//! DESIGN NOTES
//! ------------
//! A vector fires when it is armed, its ring holds an entry the host has not
//! consumed (the completion writer's producer index is not the host's
//! CPL_CONSUMER), its holdoff has run out, and neither it nor the function
//! is masked (with MSI-X enabled). Firing disarms it and starts its holdoff.
//! Arming on "ring not empty" rather than on "a completion was written"
//! closes the race every sleeping host has: an entry written after the host
//! last looked and before it armed fires at once when it arms.
//!
//! The message is a 4-byte posted write of the entry's data to its address,
//! sent through the core's DMA write port (behind the completion writer and
//! the RX payload), not through the PCIe block's interrupt port: its
//! producer index counts a completion once its beat has gone to the write
//! port, so the message follows the entry on the same posted path and PCIe
//! ordering makes the entry visible first. (The hard block's own
//! `cfg_interrupt_msix_int` has no such ordering with the requester's
//! writes.) One message in flight at a time; the lowest armed vector wins.
//!
//! Every decision starts from registers: whether each ring holds an entry
//! and whether each holdoff is out are registered a cycle ahead, so a
//! message leaves three cycles after the completion's beat at the earliest.

use rust_hdl::prelude::*;

use crate::csr::tunables::TunableRegisters;
use crate::csr::RegisterBlockHeader;
use crate::regmap::{block_type, endpoint, interrupt};

/// Vectors: one per endpoint.
pub const VECTORS: usize = endpoint::COUNT;

/// Bits of a holdoff count in cycles (HOLDOFF_NS_MAX / 4 fits).
const HOLDOFF_BITS: usize = 21;

#[derive(LogicBlock)]
pub struct InterruptBlock {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: vectors masked and disarmed, table cleared.
    pub reset: Signal<In, bool>,
    /// Byte offset within the block.
    pub offset: Signal<In, Bits<8>>,
    /// High when the CSR address falls inside this block.
    pub select: Signal<In, bool>,
    pub wr_en: Signal<In, bool>,
    pub wr_data: Signal<In, Bits<32>>,
    /// The addressed register, or 0 when not selected.
    pub rd_data: Signal<Out, Bits<32>>,
    /// From the PCIe block: MSI-X enabled, and the function's mask.
    pub msix_enable: Signal<In, bool>,
    pub msix_mask: Signal<In, bool>,
    /// Per vector: completions written into its ring (the completion
    /// writer's producer index) and consumed by the host (CPL_CONSUMER).
    pub producer: [Signal<In, Bits<32>>; VECTORS],
    pub consumer: [Signal<In, Bits<32>>; VECTORS],
    /// The message, one beat of the core's DMA write port.
    pub m_dma_wr_valid: Signal<Out, bool>,
    pub m_dma_wr_ready: Signal<In, bool>,
    pub m_dma_wr_addr: Signal<Out, Bits<64>>,
    pub m_dma_wr_data: Signal<Out, Bits<512>>,
    pub m_dma_wr_strb: Signal<Out, Bits<64>>,
    pub m_dma_wr_last: Signal<Out, bool>,

    header: RegisterBlockHeader,
    tunables: TunableRegisters<1>,
    /// The MSI-X table.
    addr_lo: [DFF<Bits<32>>; VECTORS],
    addr_hi: [DFF<Bits<32>>; VECTORS],
    data: [DFF<Bits<32>>; VECTORS],
    masked: [DFF<bool>; VECTORS],
    armed: [DFF<bool>; VECTORS],
    /// The ring holds an entry the host has not consumed (a cycle late).
    has_entry: [DFF<bool>; VECTORS],
    /// Cycles until the vector may fire again, and "it is 0" a cycle late.
    holdoff: [DFF<Bits<HOLDOFF_BITS>>; VECTORS],
    holdoff_out: [DFF<bool>; VECTORS],
    /// The message being sent: its beat's address, data (the vector's data
    /// in every Dword lane, the strobes picking one) and strobes.
    msg_valid: DFF<bool>,
    msg_addr: DFF<Bits<64>>,
    msg_beat: DFF<Bits<512>>,
    msg_strb: DFF<Bits<64>>,
    sent: DFF<Bits<32>>,
    /// This cycle: vector v may fire; one did and was taken.
    ready: [Signal<Local, bool>; VECTORS],
    chosen: Signal<Local, bool>,
    /// The chosen vector's table entry.
    sel_lo: Signal<Local, Bits<32>>,
    sel_hi: Signal<Local, Bits<32>>,
    sel_data: Signal<Local, Bits<32>>,
    /// Vector v's table words are addressed.
    at_entry: [Signal<Local, bool>; VECTORS],
    entry_word: Signal<Local, Bits<8>>,
    pba: Signal<Local, Bits<32>>,
    armed_bits: Signal<Local, Bits<32>>,
    addr: Signal<Local, Bits<64>>,
    /// The chosen vector's data in 2, 4 and 8 lanes. (Built by doubling and
    /// registered once, not shifted into each of 16 lanes every cycle: the
    /// 512-bit work is a Verilator cost on every simulated cycle.)
    rep2: Signal<Local, Bits<64>>,
    rep4: Signal<Local, Bits<128>>,
    rep8: Signal<Local, Bits<256>>,
    /// The holdoff in cycles (HOLDOFF_NS / 4).
    holdoff_cycles: Signal<Local, Bits<HOLDOFF_BITS>>,
    entry_base: [Constant<Bits<8>>; VECTORS],
    /// Bit v of a word.
    vector_bit: [Constant<Bits<32>>; VECTORS],
    shift_64: Constant<Bits<10>>,
    shift_128: Constant<Bits<10>>,
    shift_256: Constant<Bits<10>>,
    line_mask: Constant<Bits<64>>,
    hi_shift: Constant<Bits<8>>,
    dword_strobe: Constant<Bits<64>>,
    vectors: Constant<Bits<32>>,
    table_offset: Constant<Bits<32>>,
    pba_offset: Constant<Bits<32>>,
    at_vectors: Constant<Bits<8>>,
    at_arm: Constant<Bits<8>>,
    at_sent: Constant<Bits<8>>,
    at_status: Constant<Bits<8>>,
    at_table_offset: Constant<Bits<8>>,
    at_pba_offset: Constant<Bits<8>>,
    at_pba: Constant<Bits<8>>,
    word_addr_lo: Constant<Bits<8>>,
    word_addr_hi: Constant<Bits<8>>,
    word_data: Constant<Bits<8>>,
    word_control: Constant<Bits<8>>,
}

impl Default for InterruptBlock {
    fn default() -> Self {
        assert_eq!(
            interrupt::TABLE + VECTORS as u32 * interrupt::ENTRY_BYTES,
            interrupt::PBA,
            "the PBA follows the table"
        );
        assert!(interrupt::HOLDOFF_NS_MAX / 4 < 1 << HOLDOFF_BITS);
        let c8 = |v: u32| Constant::new((v as u64).to_bits());
        let c32 = |v: u32| Constant::new((v as u64).to_bits());
        Self {
            clock: Default::default(),
            reset: Default::default(),
            offset: Default::default(),
            select: Default::default(),
            wr_en: Default::default(),
            wr_data: Default::default(),
            rd_data: Default::default(),
            msix_enable: Default::default(),
            msix_mask: Default::default(),
            producer: Default::default(),
            consumer: Default::default(),
            m_dma_wr_valid: Default::default(),
            m_dma_wr_ready: Default::default(),
            m_dma_wr_addr: Default::default(),
            m_dma_wr_data: Default::default(),
            m_dma_wr_strb: Default::default(),
            m_dma_wr_last: Default::default(),
            header: RegisterBlockHeader::new(
                block_type::INTERRUPT,
                interrupt::VERSION,
                interrupt::BASE,
            ),
            tunables: TunableRegisters::new(&interrupt::DEFAULTS, |_| interrupt::HOLDOFF_NS_MAX),
            addr_lo: Default::default(),
            addr_hi: Default::default(),
            data: Default::default(),
            masked: Default::default(),
            armed: Default::default(),
            has_entry: Default::default(),
            holdoff: Default::default(),
            holdoff_out: Default::default(),
            msg_valid: Default::default(),
            msg_addr: Default::default(),
            msg_beat: Default::default(),
            msg_strb: Default::default(),
            sent: Default::default(),
            ready: Default::default(),
            chosen: Default::default(),
            sel_lo: Default::default(),
            sel_hi: Default::default(),
            sel_data: Default::default(),
            at_entry: Default::default(),
            entry_word: Default::default(),
            pba: Default::default(),
            armed_bits: Default::default(),
            addr: Default::default(),
            rep2: Default::default(),
            rep4: Default::default(),
            rep8: Default::default(),
            holdoff_cycles: Default::default(),
            entry_base: std::array::from_fn(|v| {
                c8(interrupt::TABLE + v as u32 * interrupt::ENTRY_BYTES)
            }),
            vector_bit: std::array::from_fn(|v| Constant::new((1u64 << v).to_bits())),
            shift_64: Constant::new(64u64.to_bits()),
            shift_128: Constant::new(128u64.to_bits()),
            shift_256: Constant::new(256u64.to_bits()),
            line_mask: Constant::new((!63u64).to_bits()),
            hi_shift: c8(32),
            dword_strobe: Constant::new(0xfu64.to_bits()),
            vectors: c32(VECTORS as u32),
            table_offset: c32(interrupt::table_offset()),
            pba_offset: c32(interrupt::pba_offset()),
            at_vectors: c8(interrupt::VECTORS),
            at_arm: c8(interrupt::ARM),
            at_sent: c8(interrupt::SENT),
            at_status: c8(interrupt::STATUS),
            at_table_offset: c8(interrupt::TABLE_OFFSET),
            at_pba_offset: c8(interrupt::PBA_OFFSET),
            at_pba: c8(interrupt::PBA),
            word_addr_lo: c8(interrupt::ENTRY_ADDR_LO),
            word_addr_hi: c8(interrupt::ENTRY_ADDR_HI),
            word_data: c8(interrupt::ENTRY_DATA),
            word_control: c8(interrupt::ENTRY_CONTROL),
        }
    }
}

impl Logic for InterruptBlock {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, msg_valid, msg_addr, msg_beat, msg_strb, sent);
        self.header.offset.next = self.offset.val();
        self.header.select.next = self.select.val();
        self.tunables.clock.next = self.clock.val();
        self.tunables.reset.next = self.reset.val();
        self.tunables.offset.next = self.offset.val();
        self.tunables.select.next = self.select.val();
        self.tunables.wr_en.next = self.wr_en.val();
        self.tunables.wr_data.next = self.wr_data.val();
        self.holdoff_cycles.next = self.tunables.value[0].val().get_bits::<HOLDOFF_BITS>(2);
        self.entry_word.next = self.offset.val() & 0xc;

        // ---- The vectors: table writes, arming, what may fire ----
        self.chosen.next = false;
        self.sel_lo.next = 0.into();
        self.sel_hi.next = 0.into();
        self.sel_data.next = 0.into();
        self.pba.next = 0.into();
        self.armed_bits.next = 0.into();
        for v in 0..VECTORS {
            self.addr_lo[v].clock.next = self.clock.val();
            self.addr_hi[v].clock.next = self.clock.val();
            self.data[v].clock.next = self.clock.val();
            self.masked[v].clock.next = self.clock.val();
            self.armed[v].clock.next = self.clock.val();
            self.has_entry[v].clock.next = self.clock.val();
            self.holdoff[v].clock.next = self.clock.val();
            self.holdoff_out[v].clock.next = self.clock.val();
            self.addr_lo[v].d.next = self.addr_lo[v].q.val();
            self.addr_hi[v].d.next = self.addr_hi[v].q.val();
            self.data[v].d.next = self.data[v].q.val();
            self.masked[v].d.next = self.masked[v].q.val();
            self.armed[v].d.next = self.armed[v].q.val();
            self.has_entry[v].d.next = self.producer[v].val() != self.consumer[v].val();
            self.holdoff[v].d.next = self.holdoff[v].q.val();
            if self.holdoff[v].q.val() != 0 {
                self.holdoff[v].d.next = self.holdoff[v].q.val() - 1;
            }
            self.holdoff_out[v].d.next = self.holdoff[v].q.val() <= 1;

            self.at_entry[v].next =
                self.select.val() & ((self.offset.val() & 0xf0) == self.entry_base[v].val());
            if self.wr_en.val() & self.at_entry[v].val() {
                if self.entry_word.val() == self.word_addr_lo.val() {
                    self.addr_lo[v].d.next = self.wr_data.val();
                }
                if self.entry_word.val() == self.word_addr_hi.val() {
                    self.addr_hi[v].d.next = self.wr_data.val();
                }
                if self.entry_word.val() == self.word_data.val() {
                    self.data[v].d.next = self.wr_data.val();
                }
                if self.entry_word.val() == self.word_control.val() {
                    self.masked[v].d.next = self.wr_data.val().get_bit(0);
                }
            }
            if self.wr_en.val()
                & self.select.val()
                & (self.offset.val() == self.at_arm.val())
                & self.wr_data.val().get_bit(v)
            {
                self.armed[v].d.next = true;
            }

            self.ready[v].next = self.armed[v].q.val()
                & self.has_entry[v].q.val()
                & self.holdoff_out[v].q.val()
                & self.msix_enable.val();
            if self.ready[v].val() & (self.masked[v].q.val() | self.msix_mask.val()) {
                self.pba.next = self.pba.val() | self.vector_bit[v].val();
            }
            if self.armed[v].q.val() {
                self.armed_bits.next = self.armed_bits.val() | self.vector_bit[v].val();
            }
            // The lowest vector that may fire takes the free message slot.
            if self.ready[v].val()
                & !self.masked[v].q.val()
                & !self.msix_mask.val()
                & !self.msg_valid.q.val()
                & !self.chosen.val()
            {
                self.chosen.next = true;
                self.armed[v].d.next = false;
                self.holdoff[v].d.next = self.holdoff_cycles.val();
                self.holdoff_out[v].d.next = self.holdoff_cycles.val() == 0;
                self.sel_lo.next = self.addr_lo[v].q.val();
                self.sel_hi.next = self.addr_hi[v].q.val();
                self.sel_data.next = self.data[v].q.val();
            }
            if self.reset.val() {
                self.addr_lo[v].d.next = 0.into();
                self.addr_hi[v].d.next = 0.into();
                self.data[v].d.next = 0.into();
                self.masked[v].d.next = true;
                self.armed[v].d.next = false;
                self.has_entry[v].d.next = false;
                self.holdoff[v].d.next = 0.into();
                self.holdoff_out[v].d.next = true;
            }
        }

        // ---- The message: one beat on the DMA write port ----
        self.rep2.next = bit_cast::<64, 32>(self.sel_data.val())
            | (bit_cast::<64, 32>(self.sel_data.val()) << self.hi_shift.val());
        self.rep4.next = bit_cast::<128, 64>(self.rep2.val())
            | (bit_cast::<128, 64>(self.rep2.val()) << self.shift_64.val());
        self.rep8.next = bit_cast::<256, 128>(self.rep4.val())
            | (bit_cast::<256, 128>(self.rep4.val()) << self.shift_128.val());
        self.addr.next = (bit_cast::<64, 32>(self.sel_hi.val()) << self.hi_shift.val())
            | bit_cast::<64, 32>(self.sel_lo.val());
        if self.chosen.val() {
            self.msg_valid.d.next = true;
            self.msg_addr.d.next = self.addr.val();
            self.msg_beat.d.next = bit_cast::<512, 256>(self.rep8.val())
                | (bit_cast::<512, 256>(self.rep8.val()) << self.shift_256.val());
            self.msg_strb.d.next = self.dword_strobe.val()
                << (bit_cast::<8, 4>(self.addr.val().get_bits::<4>(2)) << 2);
        }
        self.m_dma_wr_valid.next = self.msg_valid.q.val();
        self.m_dma_wr_addr.next = self.msg_addr.q.val() & self.line_mask.val();
        self.m_dma_wr_data.next = self.msg_beat.q.val();
        self.m_dma_wr_strb.next = self.msg_strb.q.val();
        self.m_dma_wr_last.next = true;
        if self.msg_valid.q.val() & self.m_dma_wr_ready.val() {
            self.msg_valid.d.next = false;
            self.sent.d.next = self.sent.q.val() + 1;
        }
        if self.reset.val() {
            self.msg_valid.d.next = false;
            self.sent.d.next = 0.into();
        }

        // ---- Reads ----
        self.rd_data.next = self.header.rd_data.val() | self.tunables.rd_data.val();
        if self.select.val() {
            if self.offset.val() == self.at_vectors.val() {
                self.rd_data.next = self.vectors.val();
            }
            if self.offset.val() == self.at_arm.val() {
                self.rd_data.next = self.armed_bits.val();
            }
            if self.offset.val() == self.at_sent.val() {
                self.rd_data.next = self.sent.q.val();
            }
            if self.offset.val() == self.at_status.val() {
                self.rd_data.next = bit_cast::<32, 1>(self.msix_enable.val().into())
                    | (bit_cast::<32, 1>(self.msix_mask.val().into()) << 1);
            }
            if self.offset.val() == self.at_table_offset.val() {
                self.rd_data.next = self.table_offset.val();
            }
            if self.offset.val() == self.at_pba_offset.val() {
                self.rd_data.next = self.pba_offset.val();
            }
            if self.offset.val() == self.at_pba.val() {
                self.rd_data.next = self.pba.val();
            }
        }
        for v in 0..VECTORS {
            if self.at_entry[v].val() {
                if self.entry_word.val() == self.word_addr_lo.val() {
                    self.rd_data.next = self.addr_lo[v].q.val();
                }
                if self.entry_word.val() == self.word_addr_hi.val() {
                    self.rd_data.next = self.addr_hi[v].q.val();
                }
                if self.entry_word.val() == self.word_data.val() {
                    self.rd_data.next = self.data[v].q.val();
                }
                if self.entry_word.val() == self.word_control.val() {
                    self.rd_data.next = 0.into();
                    if self.masked[v].q.val() {
                        self.rd_data.next = 1.into();
                    }
                }
            }
        }
    }
}

const _: () = assert!(VECTORS == 4, "the harness has four vectors");

/// The block with scalar ports, for its testbench (a Verilator top level
/// cannot take arrays of ports): `producer0..3`, `consumer0..3`.
#[derive(LogicBlock, Default)]
pub struct InterruptBlockHarness {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, bool>,
    pub offset: Signal<In, Bits<8>>,
    pub select: Signal<In, bool>,
    pub wr_en: Signal<In, bool>,
    pub wr_data: Signal<In, Bits<32>>,
    pub rd_data: Signal<Out, Bits<32>>,
    pub msix_enable: Signal<In, bool>,
    pub msix_mask: Signal<In, bool>,
    pub producer0: Signal<In, Bits<32>>,
    pub producer1: Signal<In, Bits<32>>,
    pub producer2: Signal<In, Bits<32>>,
    pub producer3: Signal<In, Bits<32>>,
    pub consumer0: Signal<In, Bits<32>>,
    pub consumer1: Signal<In, Bits<32>>,
    pub consumer2: Signal<In, Bits<32>>,
    pub consumer3: Signal<In, Bits<32>>,
    pub m_dma_wr_valid: Signal<Out, bool>,
    pub m_dma_wr_ready: Signal<In, bool>,
    pub m_dma_wr_addr: Signal<Out, Bits<64>>,
    pub m_dma_wr_data: Signal<Out, Bits<512>>,
    pub m_dma_wr_strb: Signal<Out, Bits<64>>,
    pub m_dma_wr_last: Signal<Out, bool>,
    block: InterruptBlock,
}

impl Logic for InterruptBlockHarness {
    #[hdl_gen]
    fn update(&mut self) {
        self.block.clock.next = self.clock.val();
        self.block.reset.next = self.reset.val();
        self.block.offset.next = self.offset.val();
        self.block.select.next = self.select.val();
        self.block.wr_en.next = self.wr_en.val();
        self.block.wr_data.next = self.wr_data.val();
        self.rd_data.next = self.block.rd_data.val();
        self.block.msix_enable.next = self.msix_enable.val();
        self.block.msix_mask.next = self.msix_mask.val();
        self.block.producer[0].next = self.producer0.val();
        self.block.producer[1].next = self.producer1.val();
        self.block.producer[2].next = self.producer2.val();
        self.block.producer[3].next = self.producer3.val();
        self.block.consumer[0].next = self.consumer0.val();
        self.block.consumer[1].next = self.consumer1.val();
        self.block.consumer[2].next = self.consumer2.val();
        self.block.consumer[3].next = self.consumer3.val();
        self.m_dma_wr_valid.next = self.block.m_dma_wr_valid.val();
        self.block.m_dma_wr_ready.next = self.m_dma_wr_ready.val();
        self.m_dma_wr_addr.next = self.block.m_dma_wr_addr.val();
        self.m_dma_wr_data.next = self.block.m_dma_wr_data.val();
        self.m_dma_wr_strb.next = self.block.m_dma_wr_strb.val();
        self.m_dma_wr_last.next = self.block.m_dma_wr_last.val();
    }
}

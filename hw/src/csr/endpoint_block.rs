//! An endpoint's register block: the Homa port it serves and where its rings
//! and receive buffers live in host memory (layouts in `host_abi`), plus the
//! ring indices the card reports back. One instance per endpoint.
//!
//! Writing PORT (opening the endpoint, closing it, or opening it on another
//! port) starts it over: `port_written` pulses for the cycle of the write,
//! and the ring indices go back to 0 (TX_PRODUCER and CPL_CONSUMER here,
//! with the write; TX_CONSUMER and CPL_PRODUCER where they live, a cycle
//! later on `restart`), so a reopened
//! endpoint's new rings start where the host starts them. Writing RX_AREA
//! (either half) empties the endpoint's bpage pool (`bpages_clear`): the
//! pages it held were indices into the area being replaced. (The host
//! registers the area and hands over its pages before it writes the port.)
//! A page pushed (RX_BPAGE_PUSH) and the pool's clear are both handed on a
//! cycle after their writes, from registers: the pool sees them in the
//! host's order, and the CSR decode ends here, not behind the core's push
//! arbitration and the pool's full check (9 LUT levels at 7d6baee, with the
//! register in the pool; 10 without one).
//! `generation` counts the writes (wrapping): state the card keeps for an
//! RPC records the generation it began in, and state of an earlier one
//! belongs to an endpoint that has gone, even when the port came back.

use rust_hdl::prelude::*;

use crate::rx::bpage_pool::FREE_BITS;

use crate::csr::RegisterBlockHeader;
use crate::regmap::{block_type, endpoint, header};

/// The read/write registers, in address order from `header::FIRST_REGISTER`.
const RW_REGISTERS: [u32; 11] = [
    endpoint::PORT,
    endpoint::TX_RING_LO,
    endpoint::TX_RING_HI,
    endpoint::TX_RING_LOG2,
    endpoint::TX_PRODUCER,
    endpoint::CPL_RING_LO,
    endpoint::CPL_RING_HI,
    endpoint::CPL_RING_LOG2,
    endpoint::CPL_CONSUMER,
    endpoint::RX_AREA_LO,
    endpoint::RX_AREA_HI,
];
const RW: usize = RW_REGISTERS.len();
/// Bits of an endpoint's generation: an RPC's state outlives its endpoint by
/// at most `timeout_ticks`, and the endpoint would have to be closed and
/// opened again 2^GENERATION_BITS times within that for a stale record to
/// pass for a live one.
pub const GENERATION_BITS: usize = 4;

#[derive(LogicBlock)]
pub struct EndpointBlock {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: every register to 0 (endpoint closed).
    pub reset: Signal<In, bool>,
    /// Byte offset within the block.
    pub offset: Signal<In, Bits<8>>,
    /// High when the CSR address falls inside this block.
    pub select: Signal<In, bool>,
    pub wr_en: Signal<In, bool>,
    pub wr_data: Signal<In, Bits<32>>,
    /// The addressed register, or 0 when not selected.
    pub rd_data: Signal<Out, Bits<32>>,
    /// Homa port served; 0 when closed.
    pub port: Signal<Out, Bits<16>>,
    pub tx_ring: Signal<Out, Bits<64>>,
    pub tx_ring_log2: Signal<Out, Bits<4>>,
    pub tx_producer: Signal<Out, Bits<32>>,
    pub cpl_ring: Signal<Out, Bits<64>>,
    pub cpl_ring_log2: Signal<Out, Bits<4>>,
    pub cpl_consumer: Signal<Out, Bits<32>>,
    pub rx_area: Signal<Out, Bits<64>>,
    /// From the TX engine: descriptors taken.
    pub tx_consumer: Signal<In, Bits<32>>,
    /// From the completion writer: completions written.
    pub cpl_producer: Signal<In, Bits<32>>,
    /// One cycle per write to RX_BPAGE_PUSH, the cycle after it, with the
    /// page index written.
    pub bpage_push: Signal<Out, bool>,
    pub bpage_push_index: Signal<Out, Bits<16>>,
    /// From the bpage pool: pages held for this endpoint.
    pub bpages_free: Signal<In, Bits<FREE_BITS>>,
    /// High for the cycle PORT is written (any value): the endpoint starts
    /// over.
    pub port_written: Signal<Out, bool>,
    /// `port_written`, a cycle later (registered: for the blocks far from
    /// the CSR decode, whose ring indices restart then).
    pub restart: Signal<Out, bool>,
    /// High for the cycle after RX_AREA_LO or RX_AREA_HI is written: forget
    /// every page pushed before the write.
    pub bpages_clear: Signal<Out, bool>,
    /// PORT writes so far, wrapping.
    pub generation: Signal<Out, Bits<GENERATION_BITS>>,
    header: RegisterBlockHeader,
    generation_count: DFF<Bits<GENERATION_BITS>>,
    restart_pulse: DFF<bool>,
    push_pulse: DFF<bool>,
    push_index: DFF<Bits<16>>,
    clear_pulse: DFF<bool>,
    regs: [DFF<Bits<32>>; RW],
    first: Constant<Bits<8>>,
    offset_tx_consumer: Constant<Bits<8>>,
    offset_cpl_producer: Constant<Bits<8>>,
    offset_bpage_push: Constant<Bits<8>>,
    offset_area_lo: Constant<Bits<8>>,
    offset_area_hi: Constant<Bits<8>>,
    offset_bpages_free: Constant<Bits<8>>,
}

impl EndpointBlock {
    /// The block of endpoint `e`.
    pub fn new(e: usize) -> Self {
        for (i, &r) in RW_REGISTERS.iter().enumerate() {
            assert_eq!(
                r,
                header::FIRST_REGISTER + 4 * i as u32,
                "regmap::endpoint RW registers are consecutive"
            );
        }
        assert_eq!(RW_REGISTERS[0], endpoint::PORT);
        assert_eq!(RW_REGISTERS[4], endpoint::TX_PRODUCER);
        assert_eq!(RW_REGISTERS[8], endpoint::CPL_CONSUMER);
        let c = |v: u32| Constant::new((v as u64).to_bits());
        Self {
            clock: Default::default(),
            reset: Default::default(),
            offset: Default::default(),
            select: Default::default(),
            wr_en: Default::default(),
            wr_data: Default::default(),
            rd_data: Default::default(),
            port: Default::default(),
            tx_ring: Default::default(),
            tx_ring_log2: Default::default(),
            tx_producer: Default::default(),
            cpl_ring: Default::default(),
            cpl_ring_log2: Default::default(),
            cpl_consumer: Default::default(),
            rx_area: Default::default(),
            tx_consumer: Default::default(),
            cpl_producer: Default::default(),
            bpage_push: Default::default(),
            bpage_push_index: Default::default(),
            bpages_free: Default::default(),
            port_written: Default::default(),
            restart: Default::default(),
            restart_pulse: Default::default(),
            bpages_clear: Default::default(),
            push_pulse: Default::default(),
            push_index: Default::default(),
            clear_pulse: Default::default(),
            generation: Default::default(),
            generation_count: Default::default(),
            header: RegisterBlockHeader::new(
                block_type::ENDPOINT,
                endpoint::VERSION,
                endpoint::base(e),
            ),
            regs: Default::default(),
            first: c(header::FIRST_REGISTER),
            offset_tx_consumer: c(endpoint::TX_CONSUMER),
            offset_cpl_producer: c(endpoint::CPL_PRODUCER),
            offset_bpage_push: c(endpoint::RX_BPAGE_PUSH),
            offset_area_lo: c(endpoint::RX_AREA_LO),
            offset_area_hi: c(endpoint::RX_AREA_HI),
            offset_bpages_free: c(endpoint::RX_BPAGES_FREE),
        }
    }
}

impl Logic for EndpointBlock {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            generation_count,
            restart_pulse,
            push_pulse,
            push_index,
            clear_pulse
        );
        self.port_written.next =
            self.select.val() & self.wr_en.val() & (self.offset.val() == self.first.val());
        self.clear_pulse.d.next = self.select.val()
            & self.wr_en.val()
            & ((self.offset.val() == self.offset_area_lo.val())
                | (self.offset.val() == self.offset_area_hi.val()));
        self.bpages_clear.next = self.clear_pulse.q.val();
        self.header.offset.next = self.offset.val();
        self.header.select.next = self.select.val();
        self.rd_data.next = self.header.rd_data.val();
        for i in 0..RW {
            self.regs[i].clock.next = self.clock.val();
            self.regs[i].d.next = self.regs[i].q.val();
            if self.select.val()
                & self.wr_en.val()
                & (self.offset.val().index() == self.first.val().index() + 4 * i)
            {
                self.regs[i].d.next = self.wr_data.val();
            }
            if self.select.val() & (self.offset.val().index() == self.first.val().index() + 4 * i) {
                self.rd_data.next = self.regs[i].q.val();
            }
        }
        if self.select.val() {
            if self.offset.val() == self.offset_tx_consumer.val() {
                self.rd_data.next = self.tx_consumer.val();
            }
            if self.offset.val() == self.offset_cpl_producer.val() {
                self.rd_data.next = self.cpl_producer.val();
            }
            if self.offset.val() == self.offset_bpages_free.val() {
                self.rd_data.next = bit_cast::<32, FREE_BITS>(self.bpages_free.val());
            }
        }
        if self.port_written.val() {
            // TX_PRODUCER and CPL_CONSUMER (checked in `new`).
            self.regs[4].d.next = 0.into();
            self.regs[8].d.next = 0.into();
            self.generation_count.d.next = self.generation_count.q.val() + 1;
        }
        if self.reset.val() {
            for i in 0..RW {
                self.regs[i].d.next = 0.into();
            }
            self.generation_count.d.next = 0.into();
        }
        self.generation.next = self.generation_count.q.val();
        self.restart_pulse.d.next = self.port_written.val() & !self.reset.val();
        self.restart.next = self.restart_pulse.q.val();
        self.push_pulse.d.next = self.select.val()
            & self.wr_en.val()
            & (self.offset.val() == self.offset_bpage_push.val())
            & !self.reset.val();
        self.bpage_push.next = self.push_pulse.q.val();
        self.push_index.d.next = self.wr_data.val().get_bits::<16>(0);
        self.bpage_push_index.next = self.push_index.q.val();
        // Named views, in RW_REGISTERS order.
        self.port.next = self.regs[0].q.val().get_bits::<16>(0);
        self.tx_ring.next = (bit_cast::<64, 32>(self.regs[2].q.val()) << 32)
            | bit_cast::<64, 32>(self.regs[1].q.val());
        self.tx_ring_log2.next = self.regs[3].q.val().get_bits::<4>(0);
        self.tx_producer.next = self.regs[4].q.val();
        self.cpl_ring.next = (bit_cast::<64, 32>(self.regs[6].q.val()) << 32)
            | bit_cast::<64, 32>(self.regs[5].q.val());
        self.cpl_ring_log2.next = self.regs[7].q.val().get_bits::<4>(0);
        self.cpl_consumer.next = self.regs[8].q.val();
        self.rx_area.next = (bit_cast::<64, 32>(self.regs[10].q.val()) << 32)
            | bit_cast::<64, 32>(self.regs[9].q.val());
    }
}

//! Completion writer: puts 64-byte completion entries into the endpoints'
//! completion rings in host memory, one DMA write beat each.
//!
//! DESIGN NOTES
//! ------------
//! Both paths that complete something (the TX engine: a message sent; the RX
//! engine: a message received) hand this block a record and an endpoint
//! (the core arbitrates, RX first); the block owns the rings'
//! producer indices, sets the phase bit (see `host_abi`), and never overwrites
//! an entry the host has not consumed: a request waits while the endpoint's
//! ring is full. One request in flight at a time; a completion is a single
//! beat.
//!
//! A request is first taken into a holding register (`s_cpl_ready` is just
//! "the register is empty"), and everything after it (the endpoint's ring
//! mux in the core, the room check, the DMA write) starts from registers:
//! taken straight from the engines' handshakes the path was 10 LUT levels
//! from the RX engine's state through the core's arbiter and the room
//! compare into the producer counts. It costs a cycle per completion, and a
//! completion every other cycle at most, plenty for one per message.
//!
//! A closed endpoint gets no completions: one held for an endpoint whose
//! port is 0, or whose port is written while it waits (`restart`: the
//! endpoint starts over with new rings), is dropped and counted
//! (`dropped`), never written into a ring the host may have freed, and
//! never left waiting for room in a ring nobody reads (which would stop
//! every endpoint's completions).

use rust_hdl::prelude::*;

use crate::host_abi::{completion, ENTRY_BYTES};
use crate::regmap::endpoint;

const ENDPOINTS: usize = endpoint::COUNT;

#[derive(LogicBlock)]
pub struct CplWriter {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: producer indices to 0.
    pub reset: Signal<In, bool>,
    /// A completion to write: the record without its phase (this block sets it).
    pub s_cpl_valid: Signal<In, bool>,
    pub s_cpl_ready: Signal<Out, bool>,
    pub s_cpl_endpoint: Signal<In, Bits<2>>,
    pub s_cpl_record: Signal<In, Bits<512>>,
    /// The held request's endpoint's completion ring (base IOVA, log2
    /// entries, host's consumer index), muxed by the core from `sel_endpoint`
    /// (a register).
    pub sel_endpoint: Signal<Out, Bits<2>>,
    pub sel_ring: Signal<In, Bits<64>>,
    pub sel_ring_log2: Signal<In, Bits<4>>,
    pub sel_consumer: Signal<In, Bits<32>>,
    /// The held request's endpoint is open (its port is not 0).
    pub sel_open: Signal<In, bool>,
    /// Per endpoint: its port was written (the cycle after); its producer
    /// index goes back to 0.
    pub restart: [Signal<In, bool>; ENDPOINTS],
    /// Completions dropped because their endpoint had closed (wraps).
    pub dropped: Signal<Out, Bits<32>>,
    /// Completions written, per endpoint (free-running).
    pub producer: [Signal<Out, Bits<32>>; ENDPOINTS],
    /// DMA write port (one beat per completion).
    pub m_dma_wr_valid: Signal<Out, bool>,
    pub m_dma_wr_ready: Signal<In, bool>,
    pub m_dma_wr_addr: Signal<Out, Bits<64>>,
    pub m_dma_wr_data: Signal<Out, Bits<512>>,
    pub m_dma_wr_strb: Signal<Out, Bits<64>>,
    pub m_dma_wr_last: Signal<Out, bool>,

    count: [DFF<Bits<32>>; ENDPOINTS],
    /// The request taken and not yet written: its endpoint and record.
    held: DFF<bool>,
    held_endpoint: DFF<Bits<2>>,
    held_record: DFF<Bits<512>>,
    dropped_count: DFF<Bits<32>>,
    /// The held request's endpoint has closed or is starting over.
    gone: Signal<Local, bool>,
    /// The selected endpoint's producer index.
    sel_producer: Signal<Local, Bits<32>>,
    /// Entries in the selected ring the host has not consumed yet.
    in_use: Signal<Local, Bits<32>>,
    ring_entries: Signal<Local, Bits<32>>,
    slot: Signal<Local, Bits<32>>,
    /// Which pass over the ring the selected producer index is on.
    pass: Signal<Local, Bits<32>>,
    phase: Signal<Local, Bits<512>>,
    room: Signal<Local, bool>,
    one: Constant<Bits<32>>,
    all_lanes: Constant<Bits<64>>,
    /// The record with only its phase bit set.
    phase_bit: Constant<Bits<512>>,
    entry_shift: Constant<Bits<8>>,
}

impl Default for CplWriter {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            s_cpl_valid: Default::default(),
            s_cpl_ready: Default::default(),
            s_cpl_endpoint: Default::default(),
            s_cpl_record: Default::default(),
            sel_endpoint: Default::default(),
            sel_ring: Default::default(),
            sel_ring_log2: Default::default(),
            sel_consumer: Default::default(),
            sel_open: Default::default(),
            restart: Default::default(),
            dropped: Default::default(),
            producer: Default::default(),
            m_dma_wr_valid: Default::default(),
            m_dma_wr_ready: Default::default(),
            m_dma_wr_addr: Default::default(),
            m_dma_wr_data: Default::default(),
            m_dma_wr_strb: Default::default(),
            m_dma_wr_last: Default::default(),
            count: Default::default(),
            held: Default::default(),
            held_endpoint: Default::default(),
            held_record: Default::default(),
            dropped_count: Default::default(),
            gone: Default::default(),
            sel_producer: Default::default(),
            in_use: Default::default(),
            ring_entries: Default::default(),
            slot: Default::default(),
            pass: Default::default(),
            phase: Default::default(),
            room: Default::default(),
            one: Constant::new(1u64.to_bits()),
            all_lanes: Constant::new(u64::MAX.to_bits()),
            phase_bit: Constant::new(
                Bits::<512>::default().replace_bit(8 * completion::PHASE.offset, true),
            ),
            entry_shift: Constant::new((ENTRY_BYTES.trailing_zeros() as u64).to_bits()),
        }
    }
}

impl Logic for CplWriter {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, held, held_endpoint, held_record, dropped_count);
        self.s_cpl_ready.next = !self.held.q.val();
        if self.s_cpl_valid.val() & !self.held.q.val() {
            self.held.d.next = true;
            self.held_endpoint.d.next = self.s_cpl_endpoint.val();
            self.held_record.d.next = self.s_cpl_record.val();
        }
        self.sel_endpoint.next = self.held_endpoint.q.val();
        self.sel_producer.next = 0.into();
        self.gone.next = !self.sel_open.val();
        for i in 0..ENDPOINTS {
            if (self.held_endpoint.q.val().index() == i) & self.restart[i].val() {
                self.gone.next = true;
            }
            self.count[i].clock.next = self.clock.val();
            self.count[i].d.next = self.count[i].q.val();
            self.producer[i].next = self.count[i].q.val();
            if self.held_endpoint.q.val().index() == i {
                self.sel_producer.next = self.count[i].q.val();
            }
        }
        self.ring_entries.next = self.one.val() << self.sel_ring_log2.val();
        self.in_use.next = self.sel_producer.val() - self.sel_consumer.val();
        self.room.next = self.in_use.val() < self.ring_entries.val();
        self.slot.next = self.sel_producer.val() & (self.ring_entries.val() - 1);
        // Phase 1 on the first pass over the ring, 0 on the second, ...
        self.pass.next = self.sel_producer.val() >> self.sel_ring_log2.val();
        self.phase.next = 0.into();
        if !self.pass.val().get_bit(0) {
            self.phase.next = self.phase_bit.val();
        }

        self.m_dma_wr_valid.next = self.held.q.val() & self.room.val() & !self.gone.val();
        self.m_dma_wr_addr.next =
            self.sel_ring.val() + (bit_cast::<64, 32>(self.slot.val()) << self.entry_shift.val());
        self.m_dma_wr_data.next = self.held_record.q.val() | self.phase.val();
        self.m_dma_wr_strb.next = self.all_lanes.val();
        self.m_dma_wr_last.next = true;
        if self.held.q.val() & self.room.val() & self.m_dma_wr_ready.val() {
            self.held.d.next = false;
        }
        if self.held.q.val() & self.gone.val() {
            self.held.d.next = false;
            self.dropped_count.d.next = self.dropped_count.q.val() + 1;
        }
        self.dropped.next = self.dropped_count.q.val();
        for i in 0..ENDPOINTS {
            if self.held.q.val()
                & self.room.val()
                & self.m_dma_wr_ready.val()
                & !self.gone.val()
                & (self.held_endpoint.q.val().index() == i)
            {
                self.count[i].d.next = self.count[i].q.val() + 1;
            }
            if self.reset.val() | self.restart[i].val() {
                self.count[i].d.next = 0.into();
            }
        }
        if self.reset.val() {
            self.held.d.next = false;
            self.dropped_count.d.next = 0.into();
        }
    }
}

//! RX counters register block: one 32-bit count per `RxVerdict`, so every
//! frame the card receives is counted exactly once, as accepted or as a drop
//! with its reason; then the RX path's own counters (FIFO overflows, messages
//! delivered, RX engine drops, ARP replies), kept by their blocks and read
//! here; and DATA packets the RX engine took, counted here from its strobe.
//! Counters wrap; reads have no side effects.

use rust_hdl::prelude::*;

use crate::csr::RegisterBlockHeader;
use crate::regmap::{block_type, rx_counters};
use crate::rx::parser::RxVerdict;

/// Number of counters: one per verdict.
pub const COUNTERS: usize = RxVerdict::ALL.len();
/// Number of RX path counters that follow them.
pub const PATH_COUNTERS: usize = rx_counters::PATH_COUNTERS.len();

#[derive(LogicBlock)]
pub struct RxCounters {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: all counters to 0.
    pub reset: Signal<In, bool>,
    /// One cycle per frame, with its verdict code.
    pub verdict_valid: Signal<In, bool>,
    pub verdict: Signal<In, Bits<4>>,
    /// Byte offset within the block.
    pub offset: Signal<In, Bits<8>>,
    /// High when the CSR address falls inside this block.
    pub select: Signal<In, bool>,
    /// The addressed register, or 0 when not selected.
    pub rd_data: Signal<Out, Bits<32>>,
    /// The RX path's own counters, in `rx_counters::PATH_COUNTERS` order.
    pub path: [Signal<In, Bits<32>>; PATH_COUNTERS],
    /// One cycle per DATA packet the RX engine takes.
    pub data_accepted: Signal<In, bool>,
    header: RegisterBlockHeader,
    data_accepted_count: DFF<Bits<32>>,
    at_data_accepted: Constant<Bits<8>>,
    count: [DFF<Bits<32>>; COUNTERS],
    /// Offset of counter i's register is `first + 4 i`.
    first: Constant<Bits<8>>,
    first_path: Constant<Bits<8>>,
}

impl Default for RxCounters {
    fn default() -> Self {
        assert_eq!(
            rx_counters::FIRST_COUNTER + 4 * COUNTERS as u32,
            rx_counters::PATH_COUNTERS[0]
        );
        assert_eq!(
            rx_counters::DATA_ACCEPTED,
            rx_counters::PATH_COUNTERS[PATH_COUNTERS - 1] + 4,
            "DATA_ACCEPTED follows the path counters"
        );
        for (i, &r) in rx_counters::PATH_COUNTERS.iter().enumerate() {
            assert_eq!(
                r,
                rx_counters::PATH_COUNTERS[0] + 4 * i as u32,
                "path counters are consecutive"
            );
        }
        Self {
            clock: Default::default(),
            reset: Default::default(),
            verdict_valid: Default::default(),
            verdict: Default::default(),
            offset: Default::default(),
            select: Default::default(),
            rd_data: Default::default(),
            path: Default::default(),
            data_accepted: Default::default(),
            data_accepted_count: Default::default(),
            at_data_accepted: Constant::new((rx_counters::DATA_ACCEPTED as u64).to_bits()),
            header: RegisterBlockHeader::new(
                block_type::RX_COUNTERS,
                rx_counters::VERSION,
                rx_counters::BASE,
            ),
            count: Default::default(),
            first: Constant::new((rx_counters::FIRST_COUNTER as u64).to_bits()),
            first_path: Constant::new((rx_counters::PATH_COUNTERS[0] as u64).to_bits()),
        }
    }
}

impl Logic for RxCounters {
    #[hdl_gen]
    fn update(&mut self) {
        self.header.offset.next = self.offset.val();
        self.header.select.next = self.select.val();
        self.rd_data.next = self.header.rd_data.val();
        for i in 0..COUNTERS {
            self.count[i].clock.next = self.clock.val();
            self.count[i].d.next = self.count[i].q.val();
            if self.verdict_valid.val() & (self.verdict.val().index() == i) {
                self.count[i].d.next = self.count[i].q.val() + 1;
            }
            if self.reset.val() {
                self.count[i].d.next = 0.into();
            }
            if self.select.val() & (self.offset.val().index() == self.first.val().index() + 4 * i) {
                self.rd_data.next = self.count[i].q.val();
            }
        }
        self.data_accepted_count.clock.next = self.clock.val();
        self.data_accepted_count.d.next = self.data_accepted_count.q.val();
        if self.data_accepted.val() {
            self.data_accepted_count.d.next = self.data_accepted_count.q.val() + 1;
        }
        if self.reset.val() {
            self.data_accepted_count.d.next = 0.into();
        }
        if self.select.val() & (self.offset.val() == self.at_data_accepted.val()) {
            self.rd_data.next = self.data_accepted_count.q.val();
        }
        for i in 0..PATH_COUNTERS {
            if self.select.val()
                & (self.offset.val().index() == self.first_path.val().index() + 4 * i)
            {
                self.rd_data.next = self.path[i].val();
            }
        }
    }
}

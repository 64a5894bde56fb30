//! RX counters register block: one 32-bit count per `RxVerdict`, so every
//! frame the card receives is counted exactly once, as accepted or as a drop
//! with its reason; then the RX path's own counters (FIFO overflows, messages
//! delivered, RX engine drops, ARP replies), kept by their blocks and read
//! here; and DATA packets the RX engine took, counted here from its strobe.
//! Counters wrap; reads have no side effects.
//!
//! The read mux is a tree on the offset's word bits (`word`, `rd_l*`), with
//! `select` applied once at its root: a chain of one compare per register,
//! each gated by `select`, made 13 LUT levels from the CSR address to the
//! core's read data register.

use rust_hdl::prelude::*;

use crate::csr::RegisterBlockHeader;
use crate::regmap::{block_type, rx_counters};
use crate::rx::parser::RxVerdict;

/// Number of counters: one per verdict.
pub const COUNTERS: usize = RxVerdict::ALL.len();
/// Number of RX path counters that follow them.
pub const PATH_COUNTERS: usize = rx_counters::PATH_COUNTERS.len();
/// The sender's counters, from word 39 (after DATA_ACCEPTED).
pub const SENDER_COUNTERS: usize = rx_counters::SENDER_COUNTERS.len();
/// The receiver's, from word 47 (after the sender's).
pub const RECEIVER_COUNTERS: usize = rx_counters::RECEIVER_COUNTERS.len();

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
    /// The sender side's, in `rx_counters::SENDER_COUNTERS` order.
    pub sender: [Signal<In, Bits<32>>; SENDER_COUNTERS],
    /// The receiver side's, in `rx_counters::RECEIVER_COUNTERS` order.
    pub receiver: [Signal<In, Bits<32>>; RECEIVER_COUNTERS],
    /// One cycle per DATA packet the RX engine takes.
    pub data_accepted: Signal<In, bool>,
    data_accepted_count: DFF<Bits<32>>,
    header: RegisterBlockHeader,
    count: [DFF<Bits<32>>; COUNTERS],
    /// Register word w of the block (offset 4 w); 0 where none.
    word: [Signal<Local, Bits<32>>; 64],
    /// The mux tree, one level per offset bit (2 upwards).
    rd_l1: [Signal<Local, Bits<32>>; 32],
    rd_l2: [Signal<Local, Bits<32>>; 16],
    rd_l3: [Signal<Local, Bits<32>>; 8],
    rd_l4: [Signal<Local, Bits<32>>; 4],
    rd_l5: [Signal<Local, Bits<32>>; 2],
    rd_mux: Signal<Local, Bits<32>>,
}

impl Default for RxCounters {
    fn default() -> Self {
        // The read mux's word numbers (3 and 17 in `update`).
        assert_eq!(rx_counters::FIRST_COUNTER, 3 * 4);
        assert_eq!(rx_counters::PATH_COUNTERS[0], 17 * 4);
        assert!(17 + PATH_COUNTERS <= 64, "the read mux has 64 words");
        assert_eq!(
            rx_counters::DATA_ACCEPTED,
            38 * 4,
            "DATA_ACCEPTED follows the path counters (word 38 in `update`)"
        );
        assert_eq!(
            rx_counters::DATA_ACCEPTED,
            rx_counters::PATH_COUNTERS[PATH_COUNTERS - 1] + 4
        );
        assert_eq!(
            rx_counters::FIRST_COUNTER + 4 * COUNTERS as u32,
            rx_counters::PATH_COUNTERS[0]
        );
        for (i, &r) in rx_counters::SENDER_COUNTERS.iter().enumerate() {
            assert_eq!(r, (39 + i as u32) * 4, "sender counters from word 39");
        }
        for (i, &r) in rx_counters::RECEIVER_COUNTERS.iter().enumerate() {
            assert_eq!(r, (47 + i as u32) * 4, "receiver counters from word 47");
        }
        assert_eq!(SENDER_COUNTERS, 8, "the receiver's follow the sender's");
        assert!(47 + RECEIVER_COUNTERS <= 64, "the read mux has 64 words");
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
            sender: Default::default(),
            receiver: Default::default(),
            header: RegisterBlockHeader::new(
                block_type::RX_COUNTERS,
                rx_counters::VERSION,
                rx_counters::BASE,
            ),
            count: Default::default(),
            word: std::array::from_fn(|_| Default::default()),
            data_accepted: Default::default(),
            data_accepted_count: Default::default(),
            rd_l1: Default::default(),
            rd_l2: Default::default(),
            rd_l3: Default::default(),
            rd_l4: Default::default(),
            rd_l5: Default::default(),
            rd_mux: Default::default(),
        }
    }
}

impl Logic for RxCounters {
    #[hdl_gen]
    fn update(&mut self) {
        self.header.offset.next = self.offset.val();
        self.header.select.next = self.select.val();
        for w in 0..64 {
            self.word[w].next = 0.into();
        }
        for i in 0..COUNTERS {
            self.count[i].clock.next = self.clock.val();
            self.count[i].d.next = self.count[i].q.val();
            if self.verdict_valid.val() & (self.verdict.val().index() == i) {
                self.count[i].d.next = self.count[i].q.val() + 1;
            }
            if self.reset.val() {
                self.count[i].d.next = 0.into();
            }
            self.word[3 + i].next = self.count[i].q.val();
        }
        for i in 0..PATH_COUNTERS {
            self.word[17 + i].next = self.path[i].val();
        }
        self.data_accepted_count.clock.next = self.clock.val();
        self.data_accepted_count.d.next = self.data_accepted_count.q.val();
        if self.data_accepted.val() {
            self.data_accepted_count.d.next = self.data_accepted_count.q.val() + 1;
        }
        if self.reset.val() {
            self.data_accepted_count.d.next = 0.into();
        }
        self.word[38].next = self.data_accepted_count.q.val();
        for i in 0..SENDER_COUNTERS {
            self.word[39 + i].next = self.sender[i].val();
        }
        for i in 0..RECEIVER_COUNTERS {
            self.word[47 + i].next = self.receiver[i].val();
        }
        for j in 0..32 {
            self.rd_l1[j].next = self.word[2 * j].val();
            if self.offset.val().get_bit(2) {
                self.rd_l1[j].next = self.word[2 * j + 1].val();
            }
        }
        for j in 0..16 {
            self.rd_l2[j].next = self.rd_l1[2 * j].val();
            if self.offset.val().get_bit(3) {
                self.rd_l2[j].next = self.rd_l1[2 * j + 1].val();
            }
        }
        for j in 0..8 {
            self.rd_l3[j].next = self.rd_l2[2 * j].val();
            if self.offset.val().get_bit(4) {
                self.rd_l3[j].next = self.rd_l2[2 * j + 1].val();
            }
        }
        for j in 0..4 {
            self.rd_l4[j].next = self.rd_l3[2 * j].val();
            if self.offset.val().get_bit(5) {
                self.rd_l4[j].next = self.rd_l3[2 * j + 1].val();
            }
        }
        for j in 0..2 {
            self.rd_l5[j].next = self.rd_l4[2 * j].val();
            if self.offset.val().get_bit(6) {
                self.rd_l5[j].next = self.rd_l4[2 * j + 1].val();
            }
        }
        self.rd_mux.next = self.rd_l5[0].val();
        if self.offset.val().get_bit(7) {
            self.rd_mux.next = self.rd_l5[1].val();
        }
        // Offsets not word aligned read 0, as before; the header's words
        // (words 0 to 2) are 0 in `word` and come from the header.
        self.rd_data.next = self.header.rd_data.val();
        if self.select.val() & (self.offset.val().get_bits::<2>(0) == 0) {
            self.rd_data.next = self.header.rd_data.val() | self.rd_mux.val();
        }
    }
}

//! Receive buffer pool: per endpoint, the bpages (64 KiB pages of the
//! endpoint's RX area) the host has handed the card and the card has not used.
//!
//! HomaModule's idea: the host gives the card pages of its receive area; the
//! card puts each incoming message in one and names it in the completion; the
//! host gives the page back when the application is done with the message.
//! Here the host pushes a page index with a CSR write (`RX_BPAGE_PUSH`), the
//! RX engine pops one per new message, and the completion carries its offset.
//!
//! One block RAM holds a ring of `SLOTS` indices per endpoint. The host's
//! pushes come from a register in its endpoint's CSR block (behind the CSR
//! page decode, the ring's full check made the path 10 LUT levels), the RX
//! engine's from its own, so a push is written at the edge it is offered.
//! (A register here instead cost the host a cycle it does not have: a read
//! of RX_BPAGES_FREE right after the push must count it, `driver/tests/
//! rx_area.rs`.) A pushed index becomes poppable
//! one cycle after its write (`available` is computed from registered
//! counts), so a pop never reads an entry in the cycle it is written (the
//! RAM would return the old one). Pushes into a full ring are
//! dropped and counted: the host gave back more pages than it handed out.
//! `clear` empties one endpoint's ring: its RX area is being replaced, and
//! the pages it held are indices into the old one.

use rust_hdl::prelude::*;

use crate::regmap::endpoint;

const ENDPOINTS: usize = endpoint::COUNT;
/// Pages each endpoint's ring can hold.
pub const SLOTS: usize = 1024;
/// Bits of a count of pages (0 ..= SLOTS).
pub const FREE_BITS: usize = 11;
/// Bytes per bpage.
pub const BPAGE_BYTES: u64 = 1 << 16;

#[derive(LogicBlock)]
pub struct BpagePool {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: every ring empty.
    pub reset: Signal<In, bool>,
    /// The host returns page `push_index` to endpoint `push_endpoint`.
    pub push_valid: Signal<In, bool>,
    pub push_endpoint: Signal<In, Bits<2>>,
    pub push_index: Signal<In, Bits<16>>,
    /// The endpoint whose next page `head_*` shows.
    pub sel_endpoint: Signal<In, Bits<2>>,
    /// `sel_endpoint` has a page; `head_index` is it (valid one cycle after
    /// `sel_endpoint` settles).
    pub head_valid: Signal<Out, bool>,
    pub head_index: Signal<Out, Bits<16>>,
    /// Take the page `head_index` shows.
    pub pop: Signal<In, bool>,
    /// Per endpoint: forget every page held (takes precedence over a push
    /// or pop in the same cycle).
    pub clear: [Signal<In, bool>; ENDPOINTS],
    /// Pages held per endpoint.
    pub free: [Signal<Out, Bits<FREE_BITS>>; ENDPOINTS],
    /// Pushes refused because the ring was full (wraps).
    pub overflows: Signal<Out, Bits<32>>,

    ram: RAM<Bits<16>, 12>,
    head: [DFF<Bits<11>>; ENDPOINTS],
    tail: [DFF<Bits<11>>; ENDPOINTS],
    /// `tail - head` as of the previous cycle.
    count: [DFF<Bits<11>>; ENDPOINTS],
    overflow_count: DFF<Bits<32>>,
    sel_head: Signal<Local, Bits<11>>,
    sel_count: Signal<Local, Bits<11>>,
    push_tail: Signal<Local, Bits<11>>,
    push_count: Signal<Local, Bits<11>>,
    slots: Constant<Bits<11>>,
}

impl Default for BpagePool {
    fn default() -> Self {
        assert_eq!(
            ENDPOINTS * SLOTS,
            4096,
            "RAM address = endpoint (2 bits) and slot (10 bits)"
        );
        Self {
            clock: Default::default(),
            reset: Default::default(),
            push_valid: Default::default(),
            push_endpoint: Default::default(),
            push_index: Default::default(),
            sel_endpoint: Default::default(),
            head_valid: Default::default(),
            head_index: Default::default(),
            pop: Default::default(),
            clear: Default::default(),
            free: Default::default(),
            overflows: Default::default(),
            ram: Default::default(),
            head: Default::default(),
            tail: Default::default(),
            count: Default::default(),
            overflow_count: Default::default(),
            sel_head: Default::default(),
            sel_count: Default::default(),
            push_tail: Default::default(),
            push_count: Default::default(),
            slots: Constant::new((SLOTS as u64).to_bits()),
        }
    }
}

impl Logic for BpagePool {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, overflow_count);
        self.ram.read_clock.next = self.clock.val();
        self.ram.write_clock.next = self.clock.val();
        self.sel_head.next = 0.into();
        self.sel_count.next = 0.into();
        self.push_tail.next = 0.into();
        self.push_count.next = 0.into();
        for e in 0..ENDPOINTS {
            self.head[e].clock.next = self.clock.val();
            self.tail[e].clock.next = self.clock.val();
            self.count[e].clock.next = self.clock.val();
            self.head[e].d.next = self.head[e].q.val();
            self.tail[e].d.next = self.tail[e].q.val();
            self.count[e].d.next = self.tail[e].q.val() - self.head[e].q.val();
            self.free[e].next = self.tail[e].q.val() - self.head[e].q.val();
            if self.sel_endpoint.val().index() == e {
                self.sel_head.next = self.head[e].q.val();
                self.sel_count.next = self.count[e].q.val();
            }
            if self.push_endpoint.val().index() == e {
                self.push_tail.next = self.tail[e].q.val();
                self.push_count.next = self.tail[e].q.val() - self.head[e].q.val();
            }
        }
        // The RAM shows the selected endpoint's head entry.
        self.ram.read_address.next = (bit_cast::<12, 2>(self.sel_endpoint.val()) << 10)
            | bit_cast::<12, 10>(self.sel_head.val().get_bits::<10>(0));
        self.head_index.next = self.ram.read_data.val();
        self.head_valid.next = self.sel_count.val() != 0;

        self.ram.write_address.next = (bit_cast::<12, 2>(self.push_endpoint.val()) << 10)
            | bit_cast::<12, 10>(self.push_tail.val().get_bits::<10>(0));
        self.ram.write_data.next = self.push_index.val();
        self.ram.write_enable.next = false;
        if self.push_valid.val() {
            if self.push_count.val() < self.slots.val() {
                self.ram.write_enable.next = true;
            } else {
                self.overflow_count.d.next = self.overflow_count.q.val() + 1;
            }
        }
        for e in 0..ENDPOINTS {
            if self.push_valid.val()
                & (self.push_count.val() < self.slots.val())
                & (self.push_endpoint.val().index() == e)
            {
                self.tail[e].d.next = self.tail[e].q.val() + 1;
            }
            if self.pop.val() & (self.sel_count.val() != 0) & (self.sel_endpoint.val().index() == e)
            {
                self.head[e].d.next = self.head[e].q.val() + 1;
            }
            if self.reset.val() | self.clear[e].val() {
                self.head[e].d.next = 0.into();
                self.tail[e].d.next = 0.into();
                self.count[e].d.next = 0.into();
            }
        }
        if self.reset.val() {
            self.overflow_count.d.next = 0.into();
        }
        self.overflows.next = self.overflow_count.q.val();
    }
}

//! Winner tree: the best of up to 16,384 entries, kept current while any
//! entry changes, one change per clock cycle. The ordered set under Homa's
//! scheduling: the grant scheduler's candidates (fewest bytes still to
//! receive, ties to the oldest), the sender's SRPT queue (fewest bytes left
//! to send), and the oldest-first orders behind the FIFO fractions.
//!
//! DESIGN NOTES
//! ------------
//! Approach: a tournament ("winner") tree over a fixed array of leaves, one
//! leaf per RPC slot, with every level of the tree in a block RAM of its own.
//! Leaf i holds slot i's entry {present, rank, age} or nothing; each inner
//! node holds the better of its two children, with the leaf index of that
//! winner; the root is the best entry of all. An update names a leaf and its
//! new entry (or absence): insert, delete, and a change of key in either
//! direction are all the same operation, and nothing else is needed to keep
//! the order exact. Extract-min is "read the root, then update its leaf to
//! absent".
//!
//! Order ("better"): present beats absent; then the smaller `rank`; then the
//! older `age`, compared as serial numbers (RFC 1982 style: a is older than
//! b when the 32-bit difference a - b is negative), so an age stamp taken
//! from a free-running 32-bit counter orders correctly across its wrap as
//! long as the live entries' stamps span less than 2^31. With Homa's key
//! (rank = bytes still to go, age = a message's birth) that is "shortest
//! remaining first, ties to the oldest"; with rank 0 everywhere it is
//! "oldest first". Two entries equal in rank and age (which the users never
//! create: birth stamps are unique) resolve to the one already on the path
//! being updated; see the model in the block testbench.
//!
//! Pipeline: an update walks from its leaf to the root, one level per
//! cycle. Level L (a `TreeLevel` holding 2^L nodes; the leaves are level 14)
//! does, in the cycle the update reaches it:
//!
//!   write  node[path >> (14 - L)] := the update's value at this level
//!   read   node[(path >> (14 - L)) ^ 1]       (its sibling)
//!
//! and at the next edge registers {value, path}. In the following cycle the
//! RAM shows the sibling, and `better(value, sibling)` is the parent's new
//! value, presented to level L - 1's write port in that same cycle. Level 1's
//! result is the root itself, registered in `root`. So an update offered in
//! cycle 0 (taken at the edge that ends it, E0) is in the root at edge E14
//! and visible in cycle 15: `LATENCY_CYCLES` = 15. One update can be taken
//! every cycle.
//!
//! Hazards, and why there is no bypass: two updates in flight touch a level
//! in different cycles (each level holds one update per cycle), and each
//! reads its sibling at the edge where it writes its own node, which is a
//! different address. The one stale read possible is this: update U reads
//! its sibling S at level L, and the next update V then writes S (V's leaf is
//! in S's subtree). U's parent value is then computed from the old S. But V
//! writes the same parent one cycle after U does, and V reads U's node at
//! level L (written the edge before: visible), so V's value is exact; every
//! node above is rewritten by V after U as well. So after the last update of
//! any sequence has passed, every node is exact, and the root after update n
//! reaches it reflects updates 1..n exactly (the updates after n are still
//! below the levels they will change).
//!
//! Alternatives:
//! - A pipelined heap (P-heap) or BMW tree: insert and extract-min one per
//!   cycle with memory proportional to the entries held, but no change of
//!   key: Homa changes a message's key on every packet, and a heap would
//!   need a delete (or lazy tombstones that pile up) for each. Here the
//!   leaves are indexed by slot, so a key change costs what an insert costs.
//! - A flat comparator over every entry (the earlier open Homa NIC stopped at
//!   64 RPCs that way): 16,384 x 67-bit registers and a 14-deep compare tree
//!   in one cycle; not buildable.
//! - Registering the RAM outputs (one more cycle per level): better timing
//!   margin, but then a read would miss the write of the update one cycle
//!   ahead and need a bypass per level. Tried on paper only; see timing below.
//!
//! Reset: a synchronous `reset` starts a sweep that writes every node absent,
//! all levels at once, one address per cycle (`CLEAR_CYCLES` = 16,384);
//! `s_ready` is low until it ends, and any update in flight is dropped.
//!
//! Size: each level is 2^L x 67 bits; 32,766 nodes in all, about 2.1 Mbit
//! (the leaf level half of it). Yosys figures: README's resource table.
//!
//! Timing at 250 MHz: the path per level runs from the RAM's read data
//! through `better` (a 20-bit compare and equality, a 32-bit subtraction,
//! both on carry chains, then two LUT levels) and a 67-bit 2:1 mux into the
//! next level's RAM write data. The addresses come from registers only.

use rust_hdl::prelude::*;

/// Levels below the root; the tree has 2^LEVELS leaves.
pub const LEVELS: usize = 14;
/// Leaves: the entries the tree orders (one per RPC slot).
pub const LEAVES: usize = 1 << LEVELS;
/// Bits of a leaf index.
pub const INDEX_BITS: usize = LEVELS;
/// Bits of the primary key (Homa: bytes still to go, up to 1,000,000 < 2^20).
pub const RANK_BITS: usize = 20;
/// Bits of the age stamp (serial-number compared).
pub const AGE_BITS: usize = 32;
/// Bits of a node: {present 66, rank 65:46, age 45:14, index 13:0}.
pub const NODE_BITS: usize = 1 + RANK_BITS + AGE_BITS + INDEX_BITS;
/// Clock cycles from the cycle an update is taken in to the first cycle the
/// root reflects it (`m_valid` high in that cycle): one per level, and the root.
pub const LATENCY_CYCLES: u64 = LEVELS as u64 + 1;
/// Clock cycles after reset during which `s_ready` is low (the sweep).
pub const CLEAR_CYCLES: u64 = LEAVES as u64;

/// An entry as the tree orders it (what a leaf holds when present).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Entry {
    /// Primary key: smaller is better.
    pub rank: u32,
    /// Age stamp: older (serial-number order) wins ties of rank.
    pub age: u32,
}

impl Entry {
    /// Whether `self` is strictly better than `other` (the RTL's `better`).
    pub fn beats(&self, other: &Entry) -> bool {
        self.rank < other.rank
            || (self.rank == other.rank && (self.age.wrapping_sub(other.age) as i32) < 0)
    }
}

/// One level of the tree: 2^A nodes in a RAM, and the update passing through.
/// The parent block slices the addresses (RustHDL cannot slice by a const
/// generic inside `hdl_gen`).
#[derive(LogicBlock)]
pub struct TreeLevel<const A: usize> {
    pub clock: Signal<In, Clock>,
    /// An update reaches this level this cycle.
    pub in_valid: Signal<In, bool>,
    /// Its leaf index, carried up to the root.
    pub in_path: Signal<In, Bits<INDEX_BITS>>,
    /// Its value at this level (the node to write).
    pub in_node: Signal<In, Bits<NODE_BITS>>,
    /// The node's address at this level: `in_path >> (LEVELS - A)`, or the
    /// sweep address.
    pub in_addr: Signal<In, Bits<A>>,
    /// Reset sweep: write `in_addr` absent; no update is taken.
    pub sweep: Signal<In, bool>,
    /// The update, one cycle later, with its parent's value.
    pub out_valid: Signal<Out, bool>,
    pub out_path: Signal<Out, Bits<INDEX_BITS>>,
    /// better(this level's value, its sibling): the parent's new value.
    pub out_node: Signal<Out, Bits<NODE_BITS>>,

    nodes: RAM<Bits<NODE_BITS>, A>,
    /// The address bit that tells a node from its sibling.
    one: Constant<Bits<A>>,
    r_valid: DFF<bool>,
    r_path: DFF<Bits<INDEX_BITS>>,
    r_node: DFF<Bits<NODE_BITS>>,
    better: NodeCompare,
}

impl<const A: usize> Default for TreeLevel<A> {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            in_valid: Default::default(),
            in_path: Default::default(),
            in_node: Default::default(),
            in_addr: Default::default(),
            sweep: Default::default(),
            out_valid: Default::default(),
            out_path: Default::default(),
            out_node: Default::default(),
            nodes: Default::default(),
            one: Constant::new(1u64.into()),
            r_valid: Default::default(),
            r_path: Default::default(),
            r_node: Default::default(),
            better: Default::default(),
        }
    }
}

impl<const A: usize> Logic for TreeLevel<A> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, r_valid, r_path, r_node);
        self.nodes.read_clock.next = self.clock.val();
        self.nodes.write_clock.next = self.clock.val();
        self.nodes.write_address.next = self.in_addr.val();
        self.nodes.write_data.next = self.in_node.val();
        if self.sweep.val() {
            self.nodes.write_data.next = 0u64.into();
        }
        self.nodes.write_enable.next = self.in_valid.val() | self.sweep.val();
        self.nodes.read_address.next = self.in_addr.val() ^ self.one.val();
        self.r_valid.d.next = self.in_valid.val() & !self.sweep.val();
        self.r_path.d.next = self.in_path.val();
        self.r_node.d.next = self.in_node.val();

        self.better.mine.next = self.r_node.q.val();
        self.better.sibling.next = self.nodes.read_data.val();
        self.out_valid.next = self.r_valid.q.val();
        self.out_path.next = self.r_path.q.val();
        self.out_node.next = self.better.winner.val();
    }
}

/// The order of the tree, as logic: `winner` = the sibling if it is strictly
/// better than `mine`, else `mine` (see `Entry::beats`; present beats absent).
#[derive(LogicBlock, Default)]
pub struct NodeCompare {
    pub mine: Signal<In, Bits<NODE_BITS>>,
    pub sibling: Signal<In, Bits<NODE_BITS>>,
    pub winner: Signal<Out, Bits<NODE_BITS>>,
    mine_rank: Signal<Local, Bits<RANK_BITS>>,
    sib_rank: Signal<Local, Bits<RANK_BITS>>,
    /// sibling.age - mine.age: negative (bit 31) when the sibling is older.
    age_diff: Signal<Local, Bits<AGE_BITS>>,
    sib_better: Signal<Local, bool>,
}

impl Logic for NodeCompare {
    #[hdl_gen]
    fn update(&mut self) {
        self.mine_rank.next = self.mine.val().get_bits::<20>(46);
        self.sib_rank.next = self.sibling.val().get_bits::<20>(46);
        self.age_diff.next =
            self.sibling.val().get_bits::<32>(14) - self.mine.val().get_bits::<32>(14);
        self.sib_better.next = self.sibling.val().get_bit(66)
            & (!self.mine.val().get_bit(66)
                | (self.sib_rank.val() < self.mine_rank.val())
                | ((self.sib_rank.val() == self.mine_rank.val())
                    & self.age_diff.val().get_bit(31)));
        self.winner.next = self.mine.val();
        if self.sib_better.val() {
            self.winner.next = self.sibling.val();
        }
    }
}

/// The tree (see DESIGN NOTES).
#[derive(LogicBlock)]
pub struct WinnerTree {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high: every leaf absent (the sweep).
    pub reset: Signal<In, bool>,

    /// An update is offered; taken when `s_ready` is high.
    pub s_valid: Signal<In, bool>,
    /// High except during reset and the sweep after it.
    pub s_ready: Signal<Out, bool>,
    /// The leaf to change.
    pub s_index: Signal<In, Bits<INDEX_BITS>>,
    /// The leaf's new entry is present (else the leaf becomes absent).
    pub s_present: Signal<In, bool>,
    pub s_rank: Signal<In, Bits<RANK_BITS>>,
    pub s_age: Signal<In, Bits<AGE_BITS>>,

    /// High for one cycle per accepted update, `LATENCY_CYCLES` after it, in
    /// order: from this cycle on, `m_*` reflects that update.
    pub m_valid: Signal<Out, bool>,
    /// The best entry of all (valid in every cycle; nothing when not present).
    pub m_present: Signal<Out, bool>,
    pub m_index: Signal<Out, Bits<INDEX_BITS>>,
    pub m_rank: Signal<Out, Bits<RANK_BITS>>,
    pub m_age: Signal<Out, Bits<AGE_BITS>>,
    /// No accepted update is still on its way to the root: `m_*` reflects
    /// every update accepted so far.
    pub m_settled: Signal<Out, bool>,

    l14: TreeLevel<14>,
    l13: TreeLevel<13>,
    l12: TreeLevel<12>,
    l11: TreeLevel<11>,
    l10: TreeLevel<10>,
    l9: TreeLevel<9>,
    l8: TreeLevel<8>,
    l7: TreeLevel<7>,
    l6: TreeLevel<6>,
    l5: TreeLevel<5>,
    l4: TreeLevel<4>,
    l3: TreeLevel<3>,
    l2: TreeLevel<2>,
    l1: TreeLevel<1>,
    /// The root node: {present, rank, age, index}.
    root: DFF<Bits<NODE_BITS>>,
    root_valid: DFF<bool>,
    /// Updates accepted and not yet at the root (0..=LATENCY_CYCLES).
    in_flight: DFF<Bits<5>>,
    /// The sweep is on; `sweep_addr` is the address every level clears.
    sweeping: DFF<bool>,
    sweep_addr: DFF<Bits<INDEX_BITS>>,
    accept: Signal<Local, bool>,
    /// An update reaches the root at this edge.
    leaving: Signal<Local, bool>,
    /// Reset or the sweep: updates in flight are dropped.
    flush: Signal<Local, bool>,
    /// The offered update as a leaf node.
    leaf_node: Signal<Local, Bits<NODE_BITS>>,
    /// Bit 66 of a node: present.
    present_bit: Constant<Bits<NODE_BITS>>,
}

impl Default for WinnerTree {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            s_valid: Default::default(),
            s_ready: Default::default(),
            s_index: Default::default(),
            s_present: Default::default(),
            s_rank: Default::default(),
            s_age: Default::default(),
            m_valid: Default::default(),
            m_present: Default::default(),
            m_index: Default::default(),
            m_rank: Default::default(),
            m_age: Default::default(),
            m_settled: Default::default(),
            l14: TreeLevel::default(),
            l13: TreeLevel::default(),
            l12: TreeLevel::default(),
            l11: TreeLevel::default(),
            l10: TreeLevel::default(),
            l9: TreeLevel::default(),
            l8: TreeLevel::default(),
            l7: TreeLevel::default(),
            l6: TreeLevel::default(),
            l5: TreeLevel::default(),
            l4: TreeLevel::default(),
            l3: TreeLevel::default(),
            l2: TreeLevel::default(),
            l1: TreeLevel::default(),
            root: Default::default(),
            root_valid: Default::default(),
            in_flight: Default::default(),
            sweeping: Default::default(),
            sweep_addr: Default::default(),
            accept: Default::default(),
            leaving: Default::default(),
            flush: Default::default(),
            leaf_node: Default::default(),
            present_bit: Constant::new(Bits::<NODE_BITS>::from(1u64) << 66),
        }
    }
}

impl Logic for WinnerTree {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, root, root_valid, in_flight, sweeping, sweep_addr);
        clock!(self, clock, l14, l13, l12, l11, l10, l9, l8, l7, l6, l5, l4, l3, l2, l1);

        // ---- acceptance, and the reset sweep ----
        self.s_ready.next = !self.sweeping.q.val() & !self.reset.val();
        self.accept.next = self.s_valid.val() & !self.sweeping.q.val() & !self.reset.val();
        if self.sweeping.q.val() {
            self.sweep_addr.d.next = self.sweep_addr.q.val() + 1;
            if self.sweep_addr.q.val() == 16383 {
                self.sweeping.d.next = false;
            }
        }
        if self.reset.val() {
            self.sweeping.d.next = true;
            self.sweep_addr.d.next = 0.into();
        }

        // The leaf's node: {present, rank, age, index}, or all zero (absent).
        self.leaf_node.next = 0u64.into();
        if self.s_present.val() {
            self.leaf_node.next = self.present_bit.val()
                | (bit_cast::<67, 20>(self.s_rank.val()) << 46)
                | (bit_cast::<67, 32>(self.s_age.val()) << 14)
                | bit_cast::<67, 14>(self.s_index.val());
        }

        // ---- the levels, leaves first; each takes the one below's output ----
        self.l14.in_valid.next = self.accept.val();
        self.l14.in_path.next = self.s_index.val();
        self.l14.in_node.next = self.leaf_node.val();
        self.l14.in_addr.next = self.s_index.val();

        self.l13.in_valid.next = self.l14.out_valid.val();
        self.l13.in_path.next = self.l14.out_path.val();
        self.l13.in_node.next = self.l14.out_node.val();
        self.l13.in_addr.next = self.l14.out_path.val().get_bits::<13>(1);

        self.l12.in_valid.next = self.l13.out_valid.val();
        self.l12.in_path.next = self.l13.out_path.val();
        self.l12.in_node.next = self.l13.out_node.val();
        self.l12.in_addr.next = self.l13.out_path.val().get_bits::<12>(2);

        self.l11.in_valid.next = self.l12.out_valid.val();
        self.l11.in_path.next = self.l12.out_path.val();
        self.l11.in_node.next = self.l12.out_node.val();
        self.l11.in_addr.next = self.l12.out_path.val().get_bits::<11>(3);

        self.l10.in_valid.next = self.l11.out_valid.val();
        self.l10.in_path.next = self.l11.out_path.val();
        self.l10.in_node.next = self.l11.out_node.val();
        self.l10.in_addr.next = self.l11.out_path.val().get_bits::<10>(4);

        self.l9.in_valid.next = self.l10.out_valid.val();
        self.l9.in_path.next = self.l10.out_path.val();
        self.l9.in_node.next = self.l10.out_node.val();
        self.l9.in_addr.next = self.l10.out_path.val().get_bits::<9>(5);

        self.l8.in_valid.next = self.l9.out_valid.val();
        self.l8.in_path.next = self.l9.out_path.val();
        self.l8.in_node.next = self.l9.out_node.val();
        self.l8.in_addr.next = self.l9.out_path.val().get_bits::<8>(6);

        self.l7.in_valid.next = self.l8.out_valid.val();
        self.l7.in_path.next = self.l8.out_path.val();
        self.l7.in_node.next = self.l8.out_node.val();
        self.l7.in_addr.next = self.l8.out_path.val().get_bits::<7>(7);

        self.l6.in_valid.next = self.l7.out_valid.val();
        self.l6.in_path.next = self.l7.out_path.val();
        self.l6.in_node.next = self.l7.out_node.val();
        self.l6.in_addr.next = self.l7.out_path.val().get_bits::<6>(8);

        self.l5.in_valid.next = self.l6.out_valid.val();
        self.l5.in_path.next = self.l6.out_path.val();
        self.l5.in_node.next = self.l6.out_node.val();
        self.l5.in_addr.next = self.l6.out_path.val().get_bits::<5>(9);

        self.l4.in_valid.next = self.l5.out_valid.val();
        self.l4.in_path.next = self.l5.out_path.val();
        self.l4.in_node.next = self.l5.out_node.val();
        self.l4.in_addr.next = self.l5.out_path.val().get_bits::<4>(10);

        self.l3.in_valid.next = self.l4.out_valid.val();
        self.l3.in_path.next = self.l4.out_path.val();
        self.l3.in_node.next = self.l4.out_node.val();
        self.l3.in_addr.next = self.l4.out_path.val().get_bits::<3>(11);

        self.l2.in_valid.next = self.l3.out_valid.val();
        self.l2.in_path.next = self.l3.out_path.val();
        self.l2.in_node.next = self.l3.out_node.val();
        self.l2.in_addr.next = self.l3.out_path.val().get_bits::<2>(12);

        self.l1.in_valid.next = self.l2.out_valid.val();
        self.l1.in_path.next = self.l2.out_path.val();
        self.l1.in_node.next = self.l2.out_node.val();
        self.l1.in_addr.next = self.l2.out_path.val().get_bits::<1>(13);

        // During the sweep every level clears the low bits of `sweep_addr`;
        // from the reset cycle on, updates in flight are dropped.
        self.flush.next = self.sweeping.q.val() | self.reset.val();
        self.l14.sweep.next = self.flush.val();
        self.l13.sweep.next = self.flush.val();
        self.l12.sweep.next = self.flush.val();
        self.l11.sweep.next = self.flush.val();
        self.l10.sweep.next = self.flush.val();
        self.l9.sweep.next = self.flush.val();
        self.l8.sweep.next = self.flush.val();
        self.l7.sweep.next = self.flush.val();
        self.l6.sweep.next = self.flush.val();
        self.l5.sweep.next = self.flush.val();
        self.l4.sweep.next = self.flush.val();
        self.l3.sweep.next = self.flush.val();
        self.l2.sweep.next = self.flush.val();
        self.l1.sweep.next = self.flush.val();
        if self.sweeping.q.val() {
            self.l14.in_addr.next = self.sweep_addr.q.val();
            self.l13.in_addr.next = self.sweep_addr.q.val().get_bits::<13>(0);
            self.l12.in_addr.next = self.sweep_addr.q.val().get_bits::<12>(0);
            self.l11.in_addr.next = self.sweep_addr.q.val().get_bits::<11>(0);
            self.l10.in_addr.next = self.sweep_addr.q.val().get_bits::<10>(0);
            self.l9.in_addr.next = self.sweep_addr.q.val().get_bits::<9>(0);
            self.l8.in_addr.next = self.sweep_addr.q.val().get_bits::<8>(0);
            self.l7.in_addr.next = self.sweep_addr.q.val().get_bits::<7>(0);
            self.l6.in_addr.next = self.sweep_addr.q.val().get_bits::<6>(0);
            self.l5.in_addr.next = self.sweep_addr.q.val().get_bits::<5>(0);
            self.l4.in_addr.next = self.sweep_addr.q.val().get_bits::<4>(0);
            self.l3.in_addr.next = self.sweep_addr.q.val().get_bits::<3>(0);
            self.l2.in_addr.next = self.sweep_addr.q.val().get_bits::<2>(0);
            self.l1.in_addr.next = self.sweep_addr.q.val().get_bits::<1>(0);
        }

        // ---- the root: level 1's result ----
        self.leaving.next = self.l1.out_valid.val() & !self.flush.val();
        self.root_valid.d.next = self.leaving.val();
        if self.l1.out_valid.val() {
            self.root.d.next = self.l1.out_node.val();
        }
        if self.flush.val() {
            self.root.d.next = 0u64.into();
        }
        // One in at acceptance, one out as it reaches the root.
        if self.accept.val() & !self.leaving.val() {
            self.in_flight.d.next = self.in_flight.q.val() + 1;
        }
        if !self.accept.val() & self.leaving.val() {
            self.in_flight.d.next = self.in_flight.q.val() - 1;
        }
        if self.flush.val() {
            self.in_flight.d.next = 0.into();
        }

        self.m_valid.next = self.root_valid.q.val();
        self.m_present.next = self.root.q.val().get_bit(66);
        self.m_rank.next = self.root.q.val().get_bits::<20>(46);
        self.m_age.next = self.root.q.val().get_bits::<32>(14);
        self.m_index.next = self.root.q.val().get_bits::<14>(0);
        self.m_settled.next = self.in_flight.q.val() == 0;
    }
}

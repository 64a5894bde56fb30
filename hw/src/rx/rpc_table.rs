//! RPC table: finds an RPC's slot by (peer address, peer port, local port,
//! RPC id), allocates a slot for a new RPC, frees it at the RPC's end of life.
//! The slot number indexes every other per-RPC state RAM (bytes received,
//! buffer, timers), which this block does not hold.
//!
//! DESIGN NOTES
//! ------------
//! Approach: a 4-way set-associative hash table in block RAM, 4,096 sets, so
//! 16,384 slots (issue 8: as many RPCs as the grant and send schedulers
//! track). Each way is one `RAM` of `SETS` entries of {valid, key}; the set is
//! `set_index(key)`, the same function in Rust (the testbench's reference)
//! and in the RTL. An RPC lives in slot `set * WAYS + way`. All operations
//! take one pipeline pass:
//!
//!   cycle 0  request accepted (`s_req_valid & s_req_ready`); its set is
//!            hashed from `s_req_key` and presented to the four RAMs' read
//!            ports.
//!   cycle 1  the four entries of the set are out of the RAMs; each is
//!            compared with the key (hit) or found empty (free); its set
//!            and key are compared with the two requests ahead of it (for
//!            the bypass, below); that and what the write made at the last
//!            edge (B's) did are registered.
//!   cycle 2  the verdicts corrected by B's write, then by the write made
//!            at the last edge (A's); at most one write is decided (INSERT into the lowest free way, or
//!            REMOVE of the hit way) and happens at the end of this cycle,
//!            with the response and the occupancy count registered at the
//!            same edge.
//!   cycle 3  `m_rsp_*` holds the response, for one cycle; `occupancy` counts it.
//!
//! So the latency is 3 cycles from acceptance to `m_rsp_valid`, and the
//! throughput one request per cycle, any mix of operations and sets. Requests
//! take effect in order, exactly as if executed one at a time: the response
//! of request n reflects every request before it.
//!
//! Requests to one set in flight together: a request reads the RAMs at the
//! edge that ends its cycle 0, and a RustHDL `RAM` (like a block RAM in
//! read-first mode) returns the OLD entry when a write hits the same address
//! at that edge. So request n's read misses two writes: the one made at that
//! very edge (by the request then in cycle 2, "B", two ahead or more) and the
//! one made at the next edge (by the request then in cycle 1, "A", right
//! ahead). Each is bypassed where it becomes known: in cycle 1 request n
//! compares its set and key with A's (then in cycle 2) and with B's (past
//! it: its set in `s3_set`, its key in the response register); the pipeline
//! never stalls, so these are the requests that were one and two ahead when
//! n was accepted;
//! the write made at the last edge (`bp_*`: way, INSERT or REMOVE) is B's
//! while n is in cycle 1 (registered then, applied in cycle 2) and A's while
//! n is in cycle 2, and overrides the RAM's verdict for that one way each time: after an INSERT the way is
//! taken, and hits exactly when the keys were equal; after a REMOVE it is
//! free and cannot hit. A's correction comes last because A wrote last. One
//! write per cycle, two writes in flight: nothing else can be missed.
//! Bypassing compare results (bits) instead of entries (129 bits) keeps wide
//! muxes off the path from the RAM through the compare to the write enable;
//! the 128-bit key compares it costs sit in cycle 1, between registers
//! (in cycle 0, behind the hash of a key the RX engine muxes, they made
//! the table's path 14-15 levels). The
//! block testbench drives same-set sequences back to back and one apart, and
//! counts them.
//!
//! Operations (`RpcOp`, on `s_req_op`):
//! - LOOKUP: hit and slot. No side effect.
//! - INSERT: lookup; if present, hit and its slot (no change: a duplicate
//!   insert is harmless, so the RX path may INSERT on every packet of an RPC
//!   that may be new); if absent, the lowest free way of the set is taken:
//!   inserted and the new slot; if the set has no free way, full (slot 0,
//!   which means nothing then: slot 0 is a real slot, read the flags first).
//! - REMOVE, by key: if present, hit and the slot freed; else a miss. By key
//!   so the RX path (a packet names its RPC by key) needs no lookup first.
//! - REMOVE_SLOT, by slot (in the key's low 14 bits): whatever the slot
//!   holds is freed, and the response names it (hit, the slot, and its key
//!   in `m_rsp_key`); an empty slot is a miss. For whoever holds only a
//!   slot: the RX engine's timer forgets a message its sender abandoned.
//!   The set is the slot's, not the hash's (a mux behind the fold); the
//!   key it reports is the RAM's entry corrected by the two writes in
//!   flight exactly as the verdicts are (a write's key is in `rsp_key`, the
//!   response register, during the two cycles that need it).
//!
//! Reset: a synchronous `reset` starts a sweep that writes every set empty,
//! one set per cycle (`SETS` cycles, `CLEAR_CYCLES`); `s_req_ready` is low
//! until it finishes. This is the only time ready is low. The response port
//! has no back-pressure: the consumer takes one response per request.
//!
//! Hash: the XOR fold of the key's 16 bytes down to 16 bits, with the RPC id
//! first rotated right by one bit, then the top 4 bits of those 16 folded
//! onto the low 12. Homa's id has its low bit fixed by the role (a client's
//! ids are even, a server sees them odd), and a host numbers its client RPCs
//! sequentially: unrotated, that bit would pin one set bit and leave half the
//! sets unused for one peer; rotated, id bits 12:1 land on the set bits one
//! to one, so 4,096 consecutive RPCs to one peer spread over all 4,096 sets.
//! Each set bit is the XOR of 10 or 11 key bits: two LUT levels, cheap
//! enough to sit in front of the RAM address in the acceptance cycle.
//!
//! Alternatives:
//! - A better-mixed hash (H3: each set bit the parity of a random half of the
//!   key) spreads adversarial keys better but costs 12 x 64-input XOR trees in
//!   the cycle that also addresses the RAM; peers are not adversaries on the
//!   datacenter fabric, and a full set only refuses a new RPC (its packet is
//!   dropped and the peer's timeout resends it), so the fold wins.
//! - Stalling same-set requests in flight together instead of the bypass:
//!   simpler, but the RX path sees bursts of packets of one RPC (same key,
//!   same set), exactly the case that would stall.
//! - Deciding in cycle 1, right behind the RAM (latency 2, one write to
//!   bypass; the first version, 1,024 slots): the RAM output, the 128-bit
//!   compare, the bypass, the way pick and the write enable made 18 LUT
//!   levels, too many for 250 MHz. Registering the compare costs one cycle
//!   of latency and a second bypass.
//! - Cuckoo hashing (two tables, moves on insert) reaches higher load but
//!   makes INSERT take a variable number of cycles; 4 ways keep it fixed.
//! - Keys in flip-flops with a CAM: 16,384 x 128 bits is far too many FFs.
//!
//! Invariants:
//! - A key is in at most one way of its set (INSERT looks up before it
//!   allocates, in the same pass), so at most one way hits.
//! - `occupancy` equals the number of valid entries in the RAMs: it moves by
//!   +1 exactly when INSERT writes a valid entry and by -1 exactly when REMOVE
//!   clears one, at the same edge as the write; the sweep sets both to empty.
//! - `bp_*` holds the write made at the previous edge, or is invalid.
//! - An entry's key bits mean nothing when its valid bit is 0 (REMOVE and
//!   the sweep clear only the valid bit, and write the key they happen to have).
//!
//! Size and depth: `homa-nic synth --design rpc_table` (README's table).

use rust_hdl::prelude::*;

/// Ways per set: how many RPCs whose keys hash alike can live at once.
pub const WAYS: usize = 4;
/// Sets: entries of each way's RAM.
pub const SETS: usize = 4096;
/// RPC slots in the table: `WAYS * SETS`.
pub const SLOTS: usize = WAYS * SETS;
/// Bits of a set index (`s1_set`), a way number and a slot number.
pub const SET_BITS: usize = 12;
pub const WAY_BITS: usize = 2;
pub const SLOT_BITS: usize = SET_BITS + WAY_BITS;
/// Bits of a key: peer IPv4 (32), peer port (16), local port (16), id (64).
pub const KEY_BITS: usize = 128;
/// Bits of a RAM entry: the key, and a valid bit on top (bit 128).
pub const ENTRY_BITS: usize = KEY_BITS + 1;
/// Bits of `occupancy`: counts 0..=SLOTS.
pub const OCCUPANCY_BITS: usize = 15;
/// Clock cycles from a request's acceptance to its response on `m_rsp_*`.
pub const LATENCY_CYCLES: u64 = 3;
/// Clock cycles after reset during which `s_req_ready` is low (the sweep).
pub const CLEAR_CYCLES: u64 = SETS as u64;

/// What identifies an RPC on this host. As one 128-bit value (`s_req_key`):
/// peer IPv4 in bits 127:96, peer port 95:80, local port 79:64, id 63:0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RpcKey {
    /// IPv4 address of the other end, as a big-endian number (10.0.0.1 = 0x0a000001).
    pub peer_ip: u32,
    /// Homa port of the other end.
    pub peer_port: u16,
    /// Homa port of our end.
    pub local_port: u16,
    /// The RPC id as seen locally (a server's view has the low bit set).
    pub id: u64,
}

impl RpcKey {
    /// The key as `s_req_key` carries it.
    pub fn to_u128(self) -> u128 {
        (self.peer_ip as u128) << 96
            | (self.peer_port as u128) << 80
            | (self.local_port as u128) << 64
            | self.id as u128
    }

    pub fn from_u128(v: u128) -> RpcKey {
        RpcKey {
            peer_ip: (v >> 96) as u32,
            peer_port: (v >> 80) as u16,
            local_port: (v >> 64) as u16,
            id: v as u64,
        }
    }
}

/// The set a key lives in (0..SETS): the XOR fold of its 16 bytes to 16 bits
/// after rotating the id right by one bit, then bits 15:12 onto 3:0 (see
/// DESIGN NOTES). The RTL computes the same fold.
pub fn set_index(key: &RpcKey) -> u16 {
    let k = key.to_u128();
    let mixed = (k >> 64 << 64) | key.id.rotate_right(1) as u128;
    let fold16 = (0..8).fold(0u16, |h, i| h ^ (mixed >> (16 * i)) as u16);
    (fold16 & 0x0fff) ^ (fold16 >> 12)
}

/// Slot number of `way` in `set`: what `m_rsp_slot` reports.
pub fn slot(set: u16, way: usize) -> u16 {
    assert!(way < WAYS && (set as usize) < SETS);
    set * WAYS as u16 + way as u16
}

/// An operation on `s_req_op`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum RpcOp {
    Lookup = 0,
    Insert = 1,
    Remove = 2,
    RemoveSlot = 3,
}

impl RpcOp {
    pub const ALL: [RpcOp; 4] = [
        RpcOp::Lookup,
        RpcOp::Insert,
        RpcOp::Remove,
        RpcOp::RemoveSlot,
    ];

    pub fn from_code(code: u8) -> Option<RpcOp> {
        RpcOp::ALL.into_iter().find(|op| *op as u8 == code)
    }
}

#[derive(LogicBlock)]
pub struct RpcTable {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high: forgets every RPC (the sweep, see
    /// DESIGN NOTES) and any request in flight; requests are refused while high.
    pub reset: Signal<In, bool>,

    /// A request is offered this cycle; taken when `s_req_ready` is high too.
    pub s_req_valid: Signal<In, bool>,
    /// High except during reset and the sweep after it.
    pub s_req_ready: Signal<Out, bool>,
    /// An `RpcOp` code: 0 LOOKUP, 1 INSERT, 2 REMOVE, 3 REMOVE_SLOT.
    pub s_req_op: Signal<In, Bits<2>>,
    /// The RPC's key, laid out as `RpcKey::to_u128` (REMOVE_SLOT: the slot
    /// in bits 13:0).
    pub s_req_key: Signal<In, Bits<128>>,

    /// One cycle per accepted request, `LATENCY_CYCLES` after it, in order.
    pub m_rsp_valid: Signal<Out, bool>,
    /// The request's op code, echoed.
    pub m_rsp_op: Signal<Out, Bits<2>>,
    /// The key was in the table when the request ran (REMOVE: and is now
    /// gone; REMOVE_SLOT: the slot held an RPC, now gone).
    pub m_rsp_hit: Signal<Out, bool>,
    /// INSERT only: the key was absent and now has the slot below.
    pub m_rsp_inserted: Signal<Out, bool>,
    /// INSERT only: the key was absent and its set has no free way; nothing changed.
    pub m_rsp_full: Signal<Out, bool>,
    /// `set * WAYS + way` of the key when hit or inserted; 0 otherwise.
    pub m_rsp_slot: Signal<Out, Bits<SLOT_BITS>>,
    /// REMOVE_SLOT: the key the slot held (0 on a miss); other operations:
    /// the request's key.
    pub m_rsp_key: Signal<Out, Bits<KEY_BITS>>,
    /// Valid entries in the table (0..=16,384), counting every response seen so far.
    pub occupancy: Signal<Out, Bits<OCCUPANCY_BITS>>,

    /// Way w's entries, one per set: {valid in bit 128, key in 127:0}.
    ways: [RAM<Bits<ENTRY_BITS>, SET_BITS>; 4],

    // --- cycle 0: hash the offered key ---
    /// Masks of the key's upper 64 bits (address and ports), its id bits
    /// 63:1 and its id bit 0, for the rotation.
    high64: Constant<Bits<128>>,
    id_upper: Constant<Bits<128>>,
    bit0: Constant<Bits<128>>,
    /// The key with its id rotated right by one bit.
    req_mixed: Signal<Local, Bits<128>>,
    /// XOR folds of `req_mixed` down to the set index.
    req_fold64: Signal<Local, Bits<64>>,
    req_fold32: Signal<Local, Bits<32>>,
    req_fold16: Signal<Local, Bits<16>>,
    req_set: Signal<Local, Bits<SET_BITS>>,
    /// The request's set: the hash's, or REMOVE_SLOT's slot's.
    req_at: Signal<Local, Bits<SET_BITS>>,
    /// A request is taken at this edge.
    accept: Signal<Local, bool>,

    // --- cycle 1: the RAMs' output compared, corrected by B's write ---
    /// The request in cycle 1 is real (accepted at the last edge).
    s1_valid: DFF<bool>,
    s1_op: DFF<Bits<2>>,
    s1_key: DFF<Bits<128>>,
    /// `set_index(s1_key)`: the set whose entries the RAMs now show.
    s1_set: DFF<Bits<SET_BITS>>,
    /// It has the set / the key of B (the request two ahead, whose write
    /// `bp_*` now holds): B's set is in `s3_set`, its key (when it
    /// inserted, the one case the key matters) in the response register.
    same_set_b: Signal<Local, bool>,
    same_key_b: Signal<Local, bool>,

    /// REMOVE_SLOT: the entry's key as the RAM read it, corrected by B's
    /// write.
    s1_slot_key: Signal<Local, Bits<KEY_BITS>>,

    // --- cycle 2: corrected by A's write, the decision and the write ---
    s2_valid: DFF<bool>,
    s2_op: DFF<Bits<2>>,
    s2_key: DFF<Bits<128>>,
    s2_set: DFF<Bits<SET_BITS>>,
    /// It has the set / the key of A (the request right ahead, whose write
    /// comes at the end of this cycle 1), compared in cycle 1.
    s2_same_set_a: DFF<bool>,
    s2_same_key_a: DFF<bool>,
    /// The set of the request past cycle 2 (B, for the request in cycle 1).
    s3_set: DFF<Bits<SET_BITS>>,
    /// Way w's entry is valid; its key's 32-bit quarter c equals the
    /// request's (`s2_eq[4 * w + c]`): the compare, split so that it fits
    /// cycle 1 and is finished in cycle 2.
    s2_entry_valid: [DFF<bool>; 4],
    /// REMOVE_SLOT: its way's key (`s1_slot_key`), and then corrected by
    /// A's write.
    s2_slot_key: DFF<Bits<KEY_BITS>>,
    slot_key: Signal<Local, Bits<KEY_BITS>>,
    /// REMOVE_SLOT names way w.
    slot_way: [Signal<Local, bool>; 4],
    op_remove_slot: Signal<Local, bool>,
    /// REMOVE_SLOT finds its slot taken (every write before it counted).
    slot_taken: Signal<Local, bool>,
    s2_eq: [DFF<bool>; 16],
    /// Way w holds the key / is empty, as far as the RAM's entry tells.
    raw_hit: [Signal<Local, bool>; 4],
    /// B wrote way w of this set; what its write makes of that way.
    s2_sel_b: [DFF<bool>; 4],
    s2_b_hit: DFF<bool>,
    s2_b_free: DFF<bool>,
    /// Way w holds the key / is empty, every write before this request counted.
    way_hit: [Signal<Local, bool>; 4],
    way_free: [Signal<Local, bool>; 4],
    hit: Signal<Local, bool>,
    /// The way that hit (meaningful when `hit`).
    hit_way: Signal<Local, Bits<2>>,
    any_free: Signal<Local, bool>,
    /// The lowest free way (meaningful when `any_free`).
    free_way: Signal<Local, Bits<2>>,
    op_insert: Signal<Local, bool>,
    op_remove: Signal<Local, bool>,
    /// This request allocates `free_way` / clears `hit_way`.
    do_insert: Signal<Local, bool>,
    do_remove: Signal<Local, bool>,
    /// Way w is the lowest free one.
    first_free: [Signal<Local, bool>; 4],
    /// The request writes way w (one-hot: at most one way hits, and
    /// `first_free` has at most one bit set).
    wr_we: [Signal<Local, bool>; 4],
    /// What is written to the way of `s2_set` that `wr_we` names: {do_insert, key}.
    wr_data: Signal<Local, Bits<ENTRY_BITS>>,
    /// The valid bit of an entry (bit 128).
    valid_bit: Constant<Bits<ENTRY_BITS>>,

    // --- write bypass: the write made at the last edge (see DESIGN NOTES) ---
    /// A request wrote way w (INSERT or REMOVE) of its set at the last edge.
    bp_we: [DFF<bool>; 4],
    /// It made the entry valid (INSERT); else invalid (REMOVE).
    bp_insert: DFF<bool>,

    // --- reset sweep ---
    /// Writing set `clear_set` empty in every way this cycle; requests refused.
    clearing: DFF<bool>,
    clear_set: DFF<Bits<SET_BITS>>,

    // --- cycle 3: the response ---
    rsp_valid: DFF<bool>,
    rsp_op: DFF<Bits<2>>,
    rsp_hit: DFF<bool>,
    rsp_inserted: DFF<bool>,
    rsp_full: DFF<bool>,
    rsp_slot: DFF<Bits<SLOT_BITS>>,
    rsp_key: DFF<Bits<KEY_BITS>>,
    /// Valid entries; changed only at the edge that writes an entry.
    count: DFF<Bits<OCCUPANCY_BITS>>,
}

impl Default for RpcTable {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            s_req_valid: Default::default(),
            s_req_ready: Default::default(),
            s_req_op: Default::default(),
            s_req_key: Default::default(),
            m_rsp_valid: Default::default(),
            m_rsp_op: Default::default(),
            m_rsp_hit: Default::default(),
            m_rsp_inserted: Default::default(),
            m_rsp_full: Default::default(),
            m_rsp_slot: Default::default(),
            m_rsp_key: Default::default(),
            occupancy: Default::default(),
            ways: Default::default(),
            high64: Constant::new(Bits::<128>::from(u64::MAX) << 64),
            id_upper: Constant::new(Bits::<128>::from(u64::MAX - 1)),
            bit0: Constant::new(Bits::<128>::from(1u64)),
            req_mixed: Default::default(),
            req_fold64: Default::default(),
            req_fold32: Default::default(),
            req_fold16: Default::default(),
            req_set: Default::default(),
            req_at: Default::default(),
            s1_slot_key: Default::default(),
            accept: Default::default(),
            s1_valid: Default::default(),
            s1_op: Default::default(),
            s1_key: Default::default(),
            s1_set: Default::default(),
            same_set_b: Default::default(),
            same_key_b: Default::default(),
            s2_valid: Default::default(),
            s2_op: Default::default(),
            s2_key: Default::default(),
            s2_set: Default::default(),
            s2_same_set_a: Default::default(),
            s2_same_key_a: Default::default(),
            s3_set: Default::default(),
            s2_entry_valid: Default::default(),
            s2_slot_key: Default::default(),
            slot_key: Default::default(),
            slot_way: Default::default(),
            op_remove_slot: Default::default(),
            slot_taken: Default::default(),
            s2_eq: Default::default(),
            raw_hit: Default::default(),
            s2_sel_b: Default::default(),
            s2_b_hit: Default::default(),
            s2_b_free: Default::default(),
            way_hit: Default::default(),
            way_free: Default::default(),
            hit: Default::default(),
            hit_way: Default::default(),
            any_free: Default::default(),
            free_way: Default::default(),
            op_insert: Default::default(),
            op_remove: Default::default(),
            do_insert: Default::default(),
            do_remove: Default::default(),
            first_free: Default::default(),
            wr_we: Default::default(),
            wr_data: Default::default(),
            valid_bit: Constant::new(Bits::<ENTRY_BITS>::from(1u64) << KEY_BITS as u64),
            bp_we: Default::default(),
            bp_insert: Default::default(),
            clearing: Default::default(),
            clear_set: Default::default(),
            rsp_valid: Default::default(),
            rsp_op: Default::default(),
            rsp_hit: Default::default(),
            rsp_inserted: Default::default(),
            rsp_full: Default::default(),
            rsp_slot: Default::default(),
            rsp_key: Default::default(),
            count: Default::default(),
        }
    }
}

impl Logic for RpcTable {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            s1_valid,
            s1_op,
            s1_key,
            s1_set,
            s2_valid,
            s2_op,
            s2_key,
            s2_set,
            s2_same_set_a,
            s2_same_key_a,
            s3_set,
            s2_b_hit,
            s2_b_free,
            bp_insert,
            clearing,
            clear_set,
            rsp_valid,
            rsp_op,
            rsp_hit,
            rsp_inserted,
            rsp_full,
            rsp_slot,
            rsp_key,
            s2_slot_key,
            count
        );

        // ---- cycle 0: hash, read the set, register the request ----
        // Same fold as `set_index`: id rotated right by one, then halves XORed.
        self.req_mixed.next = (self.s_req_key.val() & self.high64.val())
            | ((self.s_req_key.val() & self.id_upper.val()) >> 1)
            | ((self.s_req_key.val() & self.bit0.val()) << 63);
        self.req_fold64.next =
            self.req_mixed.val().get_bits::<64>(64) ^ self.req_mixed.val().get_bits::<64>(0);
        self.req_fold32.next =
            self.req_fold64.val().get_bits::<32>(32) ^ self.req_fold64.val().get_bits::<32>(0);
        self.req_fold16.next =
            self.req_fold32.val().get_bits::<16>(16) ^ self.req_fold32.val().get_bits::<16>(0);
        self.req_set.next = self.req_fold16.val().get_bits::<12>(0)
            ^ bit_cast::<12, 4>(self.req_fold16.val().get_bits::<4>(12));

        self.req_at.next = self.req_set.val();
        if self.s_req_op.val() == 3 {
            self.req_at.next = self.s_req_key.val().get_bits::<SET_BITS>(2);
        }

        self.s_req_ready.next = !self.clearing.q.val() & !self.reset.val();
        self.accept.next = self.s_req_valid.val() & !self.clearing.q.val() & !self.reset.val();
        self.s1_valid.d.next = self.accept.val();
        self.s1_op.d.next = self.s_req_op.val();
        self.s1_key.d.next = self.s_req_key.val();
        self.s1_set.d.next = self.req_at.val();

        // ---- cycle 1: compare the set's entries with the key; B's write ----
        // (B's correction is applied in cycle 2, before A's: the compare
        // fills cycle 1.) The request against B and A, whose writes its RAM
        // read missed: registers only, one pipeline step on from where
        // they were when it was accepted (the pipeline never stalls).
        self.same_set_b.next = self.s1_set.q.val() == self.s3_set.q.val();
        self.same_key_b.next = self.s1_key.q.val() == self.rsp_key.q.val();
        self.s2_same_set_a.d.next = self.s1_set.q.val() == self.s2_set.q.val();
        self.s2_same_key_a.d.next = self.s1_key.q.val() == self.s2_key.q.val();
        self.s3_set.d.next = self.s2_set.q.val();
        for w in 0..4 {
            self.ways[w].read_clock.next = self.clock.val();
            self.ways[w].write_clock.next = self.clock.val();
            self.ways[w].read_address.next = self.req_at.val();
            self.s2_entry_valid[w].clock.next = self.clock.val();
            self.s2_entry_valid[w].d.next = self.ways[w].read_data.val().get_bit(128);
            for c in 0..4 {
                self.s2_eq[4 * w + c].clock.next = self.clock.val();
                self.s2_eq[4 * w + c].d.next = self.ways[w].read_data.val().get_bits::<32>(32 * c)
                    == self.s1_key.q.val().get_bits::<32>(32 * c);
            }
            self.s2_sel_b[w].clock.next = self.clock.val();
            self.s2_sel_b[w].d.next = self.bp_we[w].q.val() & self.same_set_b.val();
        }
        // REMOVE_SLOT's way's key: the RAM's, unless B inserted into that
        // very way (B's key is in the response register now).
        self.s1_slot_key.next = self.ways[0].read_data.val().get_bits::<KEY_BITS>(0);
        if self.s1_key.q.val().get_bits::<WAY_BITS>(0) == 1 {
            self.s1_slot_key.next = self.ways[1].read_data.val().get_bits::<KEY_BITS>(0);
        } else if self.s1_key.q.val().get_bits::<WAY_BITS>(0) == 2 {
            self.s1_slot_key.next = self.ways[2].read_data.val().get_bits::<KEY_BITS>(0);
        } else if self.s1_key.q.val().get_bits::<WAY_BITS>(0) == 3 {
            self.s1_slot_key.next = self.ways[3].read_data.val().get_bits::<KEY_BITS>(0);
        }
        self.s2_slot_key.d.next = self.s1_slot_key.val();
        for w in 0..4 {
            if self.bp_we[w].q.val()
                & self.same_set_b.val()
                & self.bp_insert.q.val()
                & (self.s1_key.q.val().get_bits::<WAY_BITS>(0) == w.to_bits::<WAY_BITS>())
            {
                self.s2_slot_key.d.next = self.rsp_key.q.val();
            }
        }
        // What B's write makes of the way it wrote.
        self.s2_b_hit.d.next = self.bp_insert.q.val() & self.same_key_b.val();
        self.s2_b_free.d.next = !self.bp_insert.q.val();
        self.s2_valid.d.next = self.s1_valid.q.val();
        self.s2_op.d.next = self.s1_op.q.val();
        self.s2_key.d.next = self.s1_key.q.val();
        self.s2_set.d.next = self.s1_set.q.val();

        // ---- cycle 2: A's write, then the decision ----
        for w in 0..4 {
            self.raw_hit[w].next = self.s2_entry_valid[w].q.val()
                & self.s2_eq[4 * w].q.val()
                & self.s2_eq[4 * w + 1].q.val()
                & self.s2_eq[4 * w + 2].q.val()
                & self.s2_eq[4 * w + 3].q.val();
            self.way_hit[w].next = self.raw_hit[w].val();
            self.way_free[w].next = !self.s2_entry_valid[w].q.val();
            if self.s2_sel_b[w].q.val() {
                self.way_hit[w].next = self.s2_b_hit.q.val();
                self.way_free[w].next = self.s2_b_free.q.val();
            }
            if self.bp_we[w].q.val() & self.s2_same_set_a.q.val() {
                self.way_hit[w].next = self.bp_insert.q.val() & self.s2_same_key_a.q.val();
                self.way_free[w].next = !self.bp_insert.q.val();
            }
        }
        self.hit.next = self.way_hit[0].val()
            | self.way_hit[1].val()
            | self.way_hit[2].val()
            | self.way_hit[3].val();
        if self.way_hit[0].val() {
            self.hit_way.next = 0.into();
        } else if self.way_hit[1].val() {
            self.hit_way.next = 1.into();
        } else if self.way_hit[2].val() {
            self.hit_way.next = 2.into();
        } else {
            self.hit_way.next = 3.into();
        }
        self.any_free.next = self.way_free[0].val()
            | self.way_free[1].val()
            | self.way_free[2].val()
            | self.way_free[3].val();
        if self.way_free[0].val() {
            self.free_way.next = 0.into();
        } else if self.way_free[1].val() {
            self.free_way.next = 1.into();
        } else if self.way_free[2].val() {
            self.free_way.next = 2.into();
        } else {
            self.free_way.next = 3.into();
        }
        self.op_insert.next = self.s2_valid.q.val() & (self.s2_op.q.val() == 1);
        self.op_remove.next = self.s2_valid.q.val() & (self.s2_op.q.val() == 2);
        self.op_remove_slot.next = self.s2_valid.q.val() & (self.s2_op.q.val() == 3);
        // REMOVE_SLOT: its way as every write before it left it; its key
        // corrected by A's write (A's key is in the response register now).
        self.slot_taken.next = false;
        self.slot_key.next = self.s2_slot_key.q.val();
        for w in 0..4 {
            self.slot_way[w].next =
                self.s2_key.q.val().get_bits::<WAY_BITS>(0) == w.to_bits::<WAY_BITS>();
            if self.slot_way[w].val() & !self.way_free[w].val() {
                self.slot_taken.next = true;
            }
            if self.slot_way[w].val()
                & self.bp_we[w].q.val()
                & self.s2_same_set_a.q.val()
                & self.bp_insert.q.val()
            {
                self.slot_key.next = self.rsp_key.q.val();
            }
        }
        self.do_insert.next = self.op_insert.val() & !self.hit.val() & self.any_free.val();
        self.do_remove.next = (self.op_remove.val() & self.hit.val())
            | (self.op_remove_slot.val() & self.slot_taken.val());
        self.first_free[0].next = self.way_free[0].val();
        self.first_free[1].next = self.way_free[1].val() & !self.way_free[0].val();
        self.first_free[2].next =
            self.way_free[2].val() & !self.way_free[1].val() & !self.way_free[0].val();
        self.first_free[3].next = self.way_free[3].val()
            & !self.way_free[2].val()
            & !self.way_free[1].val()
            & !self.way_free[0].val();
        // Per way, flat: no encoded way number on the path to the write
        // enable (a way number, then its decode, made 12 levels).
        for w in 0..4 {
            self.wr_we[w].next = (self.op_remove.val() & self.way_hit[w].val())
                | (self.op_insert.val() & !self.hit.val() & self.first_free[w].val())
                | (self.op_remove_slot.val() & self.slot_way[w].val() & !self.way_free[w].val());
        }
        self.wr_data.next = bit_cast::<129, 128>(self.s2_key.q.val());
        if self.do_insert.val() {
            self.wr_data.next = self.valid_bit.val() | bit_cast::<129, 128>(self.s2_key.q.val());
        }

        // The write: the request's, or the sweep's (every way, valid bit 0;
        // no request is in flight during the sweep).
        for w in 0..4 {
            self.ways[w].write_address.next = self.s2_set.q.val();
            self.ways[w].write_data.next = self.wr_data.val();
            self.ways[w].write_enable.next = self.wr_we[w].val();
            self.bp_we[w].clock.next = self.clock.val();
            self.bp_we[w].d.next = self.wr_we[w].val();
            if self.reset.val() {
                self.bp_we[w].d.next = false;
            }
            if self.clearing.q.val() {
                self.ways[w].write_address.next = self.clear_set.q.val();
                self.ways[w].write_data.next = bit_cast::<129, 128>(self.s2_key.q.val());
                self.ways[w].write_enable.next = true;
            }
        }
        self.bp_insert.d.next = self.do_insert.val();

        // ---- the response and the count, registered with the write ----
        self.rsp_valid.d.next = self.s2_valid.q.val();
        self.rsp_op.d.next = self.s2_op.q.val();
        self.rsp_hit.d.next = self.s2_valid.q.val() & self.hit.val();
        self.rsp_key.d.next = self.s2_key.q.val();
        if self.op_remove_slot.val() {
            self.rsp_hit.d.next = self.slot_taken.val();
            self.rsp_key.d.next = 0.into();
            if self.slot_taken.val() {
                self.rsp_key.d.next = self.slot_key.val();
            }
        }
        self.rsp_inserted.d.next = self.do_insert.val();
        self.rsp_full.d.next = self.op_insert.val() & !self.hit.val() & !self.any_free.val();
        self.rsp_slot.d.next = 0.into();
        if self.op_remove_slot.val() {
            if self.slot_taken.val() {
                self.rsp_slot.d.next = self.s2_key.q.val().get_bits::<SLOT_BITS>(0);
            }
        } else if self.s2_valid.q.val() & self.hit.val() {
            self.rsp_slot.d.next = (bit_cast::<14, 12>(self.s2_set.q.val()) << 2)
                | bit_cast::<14, 2>(self.hit_way.val());
        } else if self.do_insert.val() {
            self.rsp_slot.d.next = (bit_cast::<14, 12>(self.s2_set.q.val()) << 2)
                | bit_cast::<14, 2>(self.free_way.val());
        }
        if self.do_insert.val() {
            self.count.d.next = self.count.q.val() + 1;
        }
        if self.do_remove.val() {
            self.count.d.next = self.count.q.val() - 1;
        }

        // ---- the sweep, and reset ----
        if self.clearing.q.val() {
            self.clear_set.d.next = self.clear_set.q.val() + 1;
            if self.clear_set.q.val() == 4095 {
                self.clearing.d.next = false;
            }
        }
        if self.reset.val() {
            self.clearing.d.next = true;
            self.clear_set.d.next = 0.into();
            self.s1_valid.d.next = false;
            self.s2_valid.d.next = false;
            self.rsp_valid.d.next = false;
            self.rsp_hit.d.next = false;
            self.rsp_inserted.d.next = false;
            self.rsp_full.d.next = false;
            self.count.d.next = 0.into();
        }

        self.m_rsp_valid.next = self.rsp_valid.q.val();
        self.m_rsp_op.next = self.rsp_op.q.val();
        self.m_rsp_hit.next = self.rsp_hit.q.val();
        self.m_rsp_inserted.next = self.rsp_inserted.q.val();
        self.m_rsp_full.next = self.rsp_full.q.val();
        self.m_rsp_slot.next = self.rsp_slot.q.val();
        self.m_rsp_key.next = self.rsp_key.q.val();
        self.occupancy.next = self.count.q.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_round_trips_through_u128() {
        let k = RpcKey {
            peer_ip: 0x0a00_0001,
            peer_port: 0x1234,
            local_port: 0xabcd,
            id: 0x0123_4567_89ab_cdef,
        };
        assert_eq!(RpcKey::from_u128(k.to_u128()), k);
        assert_eq!(k.to_u128() >> 96, 0x0a00_0001);
    }

    #[test]
    fn sequential_ids_to_one_peer_use_every_set() {
        let mut seen = [false; SETS];
        for n in 0..SETS as u64 {
            let k = RpcKey {
                peer_ip: 0x0a00_0002,
                peer_port: 4000,
                local_port: 40_000,
                id: 1000 + 2 * n,
            };
            seen[set_index(&k) as usize] = true;
        }
        assert!(
            seen.iter().all(|&s| s),
            "4,096 consecutive client ids cover all sets"
        );
    }
}

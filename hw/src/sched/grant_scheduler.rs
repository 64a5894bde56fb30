//! The receiver's grant scheduler: which inbound messages get GRANTs, how
//! far, and at what priority. HomaModule's `homa_grant.c` semantics, exactly
//! as the reference model states them (testbench/src/model/grant.rs), for up
//! to 16,384 inbound messages per card.
//!
//! DESIGN NOTES
//! ------------
//! Semantics (the model's, HomaModule's names):
//! - A message is a candidate while it is not fully granted and not fully
//!   received. Candidates are ordered by (bytes still to receive, birth):
//!   SRPT, ties to the oldest. The active set is the first `max_overcommit`.
//! - After every event (a DATA packet's bytes counted, or a message gone),
//!   each active message in rank order r of n is granted up to
//!   round_to_packet(received + window) (window = `window`, or when 0
//!   `max_incoming / (n + 1)`), at priority `grant_priority(r, n)`, while
//!   `total_incoming` (granted-but-not-received bytes over all inbound
//!   messages, unscheduled ones included) stays at or below `max_incoming`:
//!   the last grant before the cap is cut short, and the pass stops when no
//!   room is left.
//! - FIFO grants: after fifo_grant_increment * (1000 - f) / f bytes granted
//!   by SRPT (f = `grant_fifo_fraction` per mille), the oldest candidate
//!   outside the active set gets `fifo_grant_increment` more bytes at
//!   `max_sched_prio`.
//! - Not (yet) here: HomaModule's `max_rpcs_per_peer` (default 1). The
//!   active set takes the best messages whoever sends them; the model's
//!   differential test gives every message its own peer.
//!
//! Structure: the candidates live in two places. The active set (at most 8
//! entries, sorted, in registers) holds the best ones with everything the
//! grant pass needs; every other candidate is a leaf of two winner trees
//! (`winner_tree.rs`), one keyed by (bytes to receive, birth) and one by
//! birth alone, indexed by slot. Invariant, whenever a pass starts: every
//! active entry beats every tree entry, and the active set is full
//! (`max_overcommit`) or the trees are empty. It holds because keys only
//! fall (a message's bytes to receive only shrink): an active entry whose
//! key falls stays ahead of the trees; a tree (or new) entry whose key falls
//! below the worst active one is promoted and the worst demoted to the
//! trees; and when an active entry leaves, the best tree entry (the tree's
//! root, once the tree has settled) takes its place.
//!
//! Per event (the FSM; cycles for a DATA event):
//!   IDLE -> READ       the slot's state RAM entry is read (1 cycle)
//!   READ               new state computed and written back; the tree leaf
//!                      changed; an active-set move prepared
//!   MOVE1 -> MOVE2     the move: position found, then applied (2 cycles);
//!                      skipped for the best active entry, which stays
//!                      first (its key only fell): READ2 writes it in
//!                      place and, when the set needs no refill (full, or
//!                      the trees empty and settled), starts SWEEP itself
//!   REFILL             while the active set is short: wait for the trees to
//!                      settle, promote the root (4 cycles + settling)
//!   SWEEP              the grant pass: active entries fed one per cycle
//!                      through the target pipeline (8 stages, below); the
//!                      last stage decides grants in rank order with the
//!                      room left
//!   CLEAN_WAIT, CLEAN  fully granted entries leave the active set (CLEAN
//!                      reads per-position flags registered in CLEAN_WAIT;
//!                      each one leaves through MOVE1/MOVE2, which writes
//!                      its state back)
//!   REFILL again, then FIFO (the FIFO grant's turn), then IDLE.
//! The state RAM's write port is registered: a write the FSM decides in one
//! cycle reaches the RAM at the end of the next, and a read made at that
//! same edge takes the written entry from a bypass register instead of the
//! RAM's old one. MOVE1's key compares are made (and registered) in the
//! state before it; the active set's worst entry and `room` are registers.
//! Each of these took a path of 9 to 19 LUT levels under 8 (`make synth`)
//! without a cycle on the way from an event to its GRANT; CLEAN_WAIT adds one
//! cycle to a pass after its grants are queued.
//! Shortcut: an event that leaves the active set as it was (its message is
//! not active and not promoted) skips the pass (READ -> IDLE, 2 cycles) when
//! the pass could grant nothing: no FIFO grant is due; the active set is the
//! one the last sweep saw (a member that leaves after the sweep changes n,
//! and so the dynamic window of the others; a member promoted after it has
//! not been swept); and either the last pass ended with room left (every
//! active message then got its whole target, and a target depends only on
//! its message and on n) or the event does not grow the room
//! (total_incoming does not fall, or stays at or above max_incoming). The
//! differential tests found both of the first two conditions the hard way.
//! Short single-packet messages and the unscheduled packets of messages
//! outside the active set take this path.
//! A DATA event with a full active set and no change of membership takes
//! about 3 + n + 8 cycles (n active) from the event to its grants queued;
//! for the best active message, 3 fewer (no MOVE1, MOVE2, REFILL): 2 + n +
//! 8, 11 for one message, which is what puts a DATA packet's GRANT on the
//! wire 25 cycles after the packet's last beat came in (`cargo bench -p
//! homa-hw-sim --bench transport`).
//!
//! Target pipeline (one active entry per cycle, 8 stages): received +
//! window, clamped to the message; split at the unscheduled boundary u (the
//! grid is packets of MAX_PAYLOAD bytes from 0 up to u, then from u); rounded
//! up to the grid as floor(y' / MAX_PAYLOAD) * MAX_PAYLOAD with y' = y +
//! MAX_PAYLOAD - 1. MAX_PAYLOAD = 16 * 89, so the quotient is (y' >> 4) / 89,
//! taken as a multiplication by the reciprocal: (z * 94255) >> 23 is exactly
//! z / 89 for every z below 62,600 (checked exhaustively by a unit test
//! below), which covers y' up to 1,001,600. Then the decision stage, whose
//! only loop-carried state is the room left (`max_incoming - total_incoming`).
//! (A first version divided by restoring steps, one per stage: 10 stages.)
//!
//! Derived parameters (`max_incoming / (n + 1)` for n = 1..8, and the FIFO
//! threshold) come from a sequential divider (33 cycles each) after reset and
//! whenever a tunable changes; events wait meanwhile.
//!
//! Grants leave through a 16-entry queue; an event is taken only when the
//! queue has room for the 9 grants an event can cause at most.

use rust_hdl::prelude::*;

use super::winner_tree::WinnerTree;

/// Bits of a slot number (16,384 inbound messages).
pub const SLOT_BITS: usize = 14;
/// Bits of a byte count within a message (up to 1,000,000).
pub const LEN_BITS: usize = 20;
/// Most messages in the active set (`max_overcommit` may be 1..=8).
pub const MAX_ACTIVE: usize = 8;
/// Payload bytes of a full DATA packet at MTU 1500 (1500 - 20 - 56): the grid
/// grants are rounded to.
pub const MAX_PAYLOAD: u32 = 1424;
/// Grants queued at most.
pub const GRANT_QUEUE: usize = 16;
/// The tunables the derived parameters come from, side by side:
/// max_incoming (32), fifo_grant_increment (20), grant_fifo_fraction (10).
const CFG_BITS: usize = 62;

/// FSM states.
const IDLE: u64 = 0;
const READ: u64 = 1;
const MOVE1: u64 = 2;
const MOVE2: u64 = 3;
const REFILL: u64 = 4;
const REFILL_READ: u64 = 5;
const SWEEP: u64 = 6;
const CLEAN: u64 = 7;
const FIFO: u64 = 8;
const FIFO_READ: u64 = 9;
const PARAMS: u64 = 10;
const READ2: u64 = 11;
const FIFO_GRANT: u64 = 12;
const CLEAN_WAIT: u64 = 13;

/// Where a message's candidacy lives (state RAM `where` field).
// 0: not a candidate (no tree leaf, not active).
const WHERE_TREE: u64 = 1;
const WHERE_ACTIVE: u64 = 2;

/// The tunables on the block's `cfg_*` ports (HomaModule's names); a CSR
/// block will drive them once the scheduler is in the core.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GrantConfig {
    pub max_incoming: u32,
    pub max_overcommit: u8,
    pub window: u32,
    pub max_sched_prio: u8,
    pub unsched_bytes: u32,
    pub grant_fifo_fraction: u32,
    pub fifo_grant_increment: u32,
}

impl Default for GrantConfig {
    /// HomaModule's defaults.
    fn default() -> Self {
        GrantConfig {
            max_incoming: 400_000,
            max_overcommit: 8,
            window: 0,
            max_sched_prio: 3,
            unsched_bytes: 40_000,
            grant_fifo_fraction: 50,
            fifo_grant_increment: 50_000,
        }
    }
}

// Active entry layout (one packed register per position).
// birth [31:0], rem [51:32], grt [71:52], rcv [91:72], len [111:92], slot [125:112]
const ENT_BITS: usize = 126;
// State RAM entry: birth [31:0], grt [51:32], rcv [71:52], len [91:72],
// where [93:92], present [94].
const ST_BITS: usize = 95;
// Grant queue entry: offset [19:0], slot [33:20], prio [36:34], fifo [37].
const GQ_BITS: usize = 38;

#[derive(LogicBlock)]
pub struct GrantScheduler {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: forgets every message (the trees sweep for 16,384
    /// cycles; events wait).
    pub reset: Signal<In, bool>,

    // --- tunables (from the grant CSR block) ---
    pub cfg_max_incoming: Signal<In, Bits<32>>,
    /// 1..=8.
    pub cfg_max_overcommit: Signal<In, Bits<4>>,
    /// 0: dynamic.
    pub cfg_window: Signal<In, Bits<32>>,
    pub cfg_max_sched_prio: Signal<In, Bits<3>>,
    pub cfg_unsched_bytes: Signal<In, Bits<20>>,
    /// Per mille; 0 or >= 1000 turns FIFO grants off.
    pub cfg_grant_fifo_fraction: Signal<In, Bits<10>>,
    pub cfg_fifo_grant_increment: Signal<In, Bits<20>>,

    // --- events from the RX engine ---
    pub s_evt_valid: Signal<In, bool>,
    pub s_evt_ready: Signal<Out, bool>,
    /// The message's slot.
    pub s_evt_slot: Signal<In, Bits<SLOT_BITS>>,
    /// The message is gone (RPC freed or aborted); the fields below unused.
    pub s_evt_remove: Signal<In, bool>,
    /// DATA: the message's length (from the packet).
    pub s_evt_length: Signal<In, Bits<LEN_BITS>>,
    /// DATA: bytes of the message received so far, this packet included. A
    /// message whose bytes are all in is complete and leaves.
    pub s_evt_received: Signal<In, Bits<LEN_BITS>>,
    /// DATA: the packet's `incoming` field (what the sender may send).
    pub s_evt_incoming: Signal<In, Bits<LEN_BITS>>,

    // --- grants to the TX control path, in the order decided ---
    pub m_grant_valid: Signal<Out, bool>,
    pub m_grant_ready: Signal<In, bool>,
    pub m_grant_slot: Signal<Out, Bits<SLOT_BITS>>,
    /// The sender may send every byte below this offset.
    pub m_grant_offset: Signal<Out, Bits<LEN_BITS>>,
    pub m_grant_priority: Signal<Out, Bits<3>>,
    /// A FIFO grant (to the oldest message), not an SRPT one.
    pub m_grant_fifo: Signal<Out, bool>,

    // --- status ---
    /// Granted-but-not-received bytes over all inbound messages.
    pub total_incoming: Signal<Out, Bits<32>>,
    /// Messages in the active set.
    pub active_count: Signal<Out, Bits<4>>,
    /// Nothing in progress: no event being processed, no tree update in
    /// flight (grants may still wait in the queue).
    pub idle: Signal<Out, bool>,

    /// Non-active candidates by (bytes still to receive, birth).
    cand_tree: WinnerTree,
    /// The same leaves by birth alone (rank 0): the oldest on top.
    oldest_tree: WinnerTree,
    /// Per slot: the message's state.
    state_ram: RAM<Bits<ST_BITS>, SLOT_BITS>,
    /// The trees' update ports, registered (`ct_*`/`ot_*` are what the FSM
    /// asks for this cycle; the trees see it one cycle later).
    ct_valid: Signal<Local, bool>,
    ct_index: Signal<Local, Bits<SLOT_BITS>>,
    ct_present: Signal<Local, bool>,
    ct_rank: Signal<Local, Bits<LEN_BITS>>,
    ct_age: Signal<Local, Bits<32>>,
    ot_valid: Signal<Local, bool>,
    ot_index: Signal<Local, Bits<SLOT_BITS>>,
    ot_present: Signal<Local, bool>,
    ot_age: Signal<Local, Bits<32>>,
    ctq_valid: DFF<bool>,
    ctq_index: DFF<Bits<SLOT_BITS>>,
    ctq_present: DFF<bool>,
    ctq_rank: DFF<Bits<LEN_BITS>>,
    ctq_age: DFF<Bits<32>>,
    otq_valid: DFF<bool>,
    otq_index: DFF<Bits<SLOT_BITS>>,
    otq_present: DFF<bool>,
    otq_age: DFF<Bits<32>>,
    /// Both trees have taken every update asked of them and settled.
    settled: Signal<Local, bool>,
    /// The state RAM's write port, registered: what the FSM writes (`sr_*`)
    /// reaches the RAM one edge later (`wq_*`), so no FSM decision sits on
    /// the path into the RAM's write enable (19 LUT levels before).
    sr_we: Signal<Local, bool>,
    sr_addr: Signal<Local, Bits<SLOT_BITS>>,
    sr_data: Signal<Local, Bits<ST_BITS>>,
    wq_we: DFF<bool>,
    wq_addr: DFF<Bits<SLOT_BITS>>,
    wq_data: DFF<Bits<ST_BITS>>,
    /// The read made at the last edge hit the write made at that edge (the
    /// RAM returned the old entry); `byp_data` is the new one.
    byp_hit: DFF<bool>,
    byp_data: DFF<Bits<ST_BITS>>,
    /// The state RAM's output, registered (READ2, FIFO_GRANT).
    r_st: DFF<Bits<ST_BITS>>,
    r_present: Signal<Local, bool>,
    r_where: Signal<Local, Bits<2>>,
    r_st_len: Signal<Local, Bits<LEN_BITS>>,
    r_st_grt: Signal<Local, Bits<LEN_BITS>>,
    /// READ's results, registered for READ2: the `n_*` values below.
    r_len: DFF<Bits<LEN_BITS>>,
    r_birth: DFF<Bits<32>>,
    r_grt: DFF<Bits<LEN_BITS>>,
    r_rem: DFF<Bits<LEN_BITS>>,
    r_gone: DFF<bool>,
    r_ignore: DFF<bool>,
    r_wanted: DFF<bool>,
    r_cold: DFF<Bits<32>>,
    /// FIFO_READ: min(bytes not yet granted, fifo_grant_increment).
    r_finc: DFF<Bits<32>>,
    /// FIFO_READ: the bytes not yet granted fit in one FIFO grant
    /// (`r_finc` is all of them).
    r_fin_all: DFF<bool>,

    fsm: DFF<Bits<4>>,
    /// The last full pass ended with no room left: an active message may be
    /// owed bytes, so room that grows must be used.
    pass_capped: DFF<bool>,
    /// The next pass may grant whatever the event: the active set changed
    /// after the last sweep (a member left, so n and the dynamic window
    /// changed, or a new member has not been swept yet), or a tunable changed.
    pass_owes: DFF<bool>,
    /// The pass in progress changed the active set after its sweep (CLEAN).
    cleaned: DFF<bool>,
    /// A full pass has just ended: `pass_capped` and `pass_owes` are taken in
    /// the next cycle.
    pass_ended: DFF<bool>,
    /// READ: the event changes nothing a pass could act on (see DESIGN NOTES).
    skip_pass: Signal<Local, bool>,
    fifo_due: Signal<Local, bool>,
    /// total_incoming after the event.
    total_new: Signal<Local, Bits<32>>,
    /// The REFILL in progress follows the grant pass (then FIFO), not the event.
    post_sweep: DFF<bool>,
    birth_ctr: DFF<Bits<32>>,
    total: DFF<Bits<32>>,
    srpt_granted: DFF<Bits<32>>,

    // the event being processed
    e_slot: DFF<Bits<SLOT_BITS>>,
    e_remove: DFF<bool>,
    e_len: DFF<Bits<LEN_BITS>>,
    e_rcv: DFF<Bits<LEN_BITS>>,
    e_inc: DFF<Bits<LEN_BITS>>,

    // the active set
    a_ent: [DFF<Bits<ENT_BITS>>; 8],
    a_n: DFF<Bits<4>>,
    /// Position k holds a valid entry (k < a_n).
    a_valid: [Signal<Local, bool>; 8],
    /// Position k holds the event's slot.
    a_hit: [Signal<Local, bool>; 8],
    hit_any: Signal<Local, bool>,
    hit_pos: Signal<Local, Bits<4>>,
    idx: [Constant<Bits<4>>; 9],

    // READ: the event's new state
    st: Signal<Local, Bits<ST_BITS>>,
    st_present: Signal<Local, bool>,
    st_where: Signal<Local, Bits<2>>,
    st_len: Signal<Local, Bits<LEN_BITS>>,
    st_rcv: Signal<Local, Bits<LEN_BITS>>,
    st_grt: Signal<Local, Bits<LEN_BITS>>,
    st_birth: Signal<Local, Bits<32>>,
    /// The event's message after it: length, received, granted, birth.
    n_len: Signal<Local, Bits<LEN_BITS>>,
    n_grt: Signal<Local, Bits<LEN_BITS>>,
    n_birth: Signal<Local, Bits<32>>,
    n_rem: Signal<Local, Bits<LEN_BITS>>,
    /// Its contribution to total_incoming before and after.
    contrib_old: Signal<Local, Bits<32>>,
    contrib_new: Signal<Local, Bits<32>>,
    /// It is (still) a candidate after the event.
    n_wanted: Signal<Local, bool>,
    /// READ, for a message already present (its length `st_len`): the
    /// packet's `incoming` is past the end; the old grant beats the clipped
    /// `incoming`. All compares side by side, from registers and the RAM.
    rd_c_s: Signal<Local, bool>,
    rd_g_s: Signal<Local, bool>,
    rd_clip_s: Signal<Local, Bits<LEN_BITS>>,
    /// ... and for a new message (length `e_len`).
    rd_c_e: Signal<Local, bool>,
    /// The event is ignored (a length that disagrees with the message's).
    n_ignore: Signal<Local, bool>,
    /// The message leaves (removed or complete).
    n_gone: Signal<Local, bool>,
    /// Its new key beats the worst active entry (position m - 1).
    beats_worst: Signal<Local, bool>,
    full: Signal<Local, bool>,
    worst_ent: Signal<Local, Bits<ENT_BITS>>,
    /// `worst_ent`, registered (valid in READ2: the active set does not
    /// change in IDLE and READ).
    worst_q: DFF<Bits<ENT_BITS>>,
    m_cfg: Signal<Local, Bits<4>>,

    // the move (MOVE1/MOVE2): remove position mv_rm (8 = none), insert mv_new
    mv_rm: DFF<Bits<4>>,
    mv_ins: DFF<bool>,
    mv_new: DFF<Bits<ENT_BITS>>,
    /// Demote the worst entry (position mv_rm) into the trees in MOVE1.
    mv_demote: DFF<bool>,
    /// The entry at mv_rm is fully granted (CLEAN): its state is written
    /// back as no longer a candidate in MOVE1.
    mv_clean: DFF<bool>,
    /// The new entry's key against each active entry's, registered in the
    /// state before MOVE1 (READ2, REFILL_READ: the active set is stable
    /// there): entry k beats it.
    mv_cmp: [DFF<bool>; 8],
    /// The key the next MOVE1 inserts (`mv_new`'s rem and birth, before
    /// it is registered).
    nk_rem: Signal<Local, Bits<LEN_BITS>>,
    nk_birth: Signal<Local, Bits<32>>,
    mv_next: DFF<Bits<4>>,
    mv_q: DFF<Bits<4>>,
    mv_beats: [Signal<Local, bool>; 8],
    mv_first: Signal<Local, Bits<4>>,
    mv_rm_ent: Signal<Local, Bits<ENT_BITS>>,
    new_rem: Signal<Local, Bits<LEN_BITS>>,
    new_birth: Signal<Local, Bits<32>>,
    cmp_rank_lt: [Signal<Local, bool>; 8],
    cmp_rank_eq: [Signal<Local, bool>; 8],
    cmp_age: [Signal<Local, Bits<32>>; 8],
    /// A position that is neither the removed one (mv_rm) nor past the end.
    mv_free: [Signal<Local, bool>; 8],
    /// MOVE2: position k takes the new entry / the entry above it (k - 1) /
    /// the entry below it (k + 1); else it keeps its own.
    mv_here: [Signal<Local, bool>; 8],
    mv_down: [Signal<Local, bool>; 8],
    mv_up: [Signal<Local, bool>; 8],
    /// The worst active entry's key against the event's new key.
    w_age: Signal<Local, Bits<32>>,
    /// Active entry k is fully granted, registered every cycle from the
    /// active set (CLEAN_WAIT lets it settle after a change).
    a_done: [DFF<bool>; 8],
    /// First active entry that is fully granted (CLEAN), if any.
    cl_any: Signal<Local, bool>,
    cl_pos: Signal<Local, Bits<4>>,
    /// The event's new active entry / new state RAM entry.
    n_ent: Signal<Local, Bits<ENT_BITS>>,
    /// The grant pass starts at this edge (REFILL, or READ2's update in
    /// place).
    start_sweep: Signal<Local, bool>,
    st_new: Signal<Local, Bits<ST_BITS>>,
    /// A refilled entry from the state RAM's output.
    rf_ent: Signal<Local, Bits<ENT_BITS>>,
    /// FIFO grant arithmetic.
    ff_left: Signal<Local, Bits<32>>,
    ff_new: Signal<Local, Bits<LEN_BITS>>,
    window_now: Signal<Local, Bits<32>>,

    // REFILL
    refill_slot: DFF<Bits<SLOT_BITS>>,

    // SWEEP: feeding and the target pipeline
    sw_feed: DFF<Bits<4>>,
    sw_feeding: DFF<bool>,
    sw_n: DFF<Bits<4>>,
    sw_window: DFF<Bits<32>>,
    sw_stop: DFF<bool>,
    sw_left: DFF<Bits<4>>,
    feed_ent: Signal<Local, Bits<ENT_BITS>>,
    // p1: {r, off (received + window, 33 bits), len, grt, u}
    p1_valid: DFF<bool>,
    p1_r: DFF<Bits<4>>,
    p1_off: DFF<Bits<33>>,
    p1_len: DFF<Bits<LEN_BITS>>,
    p1_grt: DFF<Bits<LEN_BITS>>,
    p1_u: DFF<Bits<LEN_BITS>>,
    // p2: clamped offset
    p2_valid: DFF<bool>,
    p2_r: DFF<Bits<4>>,
    p2_off: DFF<Bits<LEN_BITS>>,
    p2_len: DFF<Bits<LEN_BITS>>,
    p2_grt: DFF<Bits<LEN_BITS>>,
    p2_u: DFF<Bits<LEN_BITS>>,
    // p3: y' = (off or off - u) + MAX_PAYLOAD - 1, and which side of u
    p3_valid: DFF<bool>,
    p3_r: DFF<Bits<4>>,
    p3_above: DFF<bool>,
    p3_y: DFF<Bits<21>>,
    p3_len: DFF<Bits<LEN_BITS>>,
    p3_grt: DFF<Bits<LEN_BITS>>,
    p3_u: DFF<Bits<LEN_BITS>>,
    // division by MAX_PAYLOAD = 16 * 89: z = y' >> 4, then z / 89 as
    // (z * 94255) >> 23 (exact for every z below 62,600; 94255 = 65536 +
    // 28719, so one 16 x 16 multiplier and an add), then back to bytes.
    d1_valid: DFF<bool>,
    d1_r: DFF<Bits<4>>,
    d1_above: DFF<bool>,
    d1_z: DFF<Bits<16>>,
    d1_prod: DFF<Bits<32>>,
    d1_len: DFF<Bits<LEN_BITS>>,
    d1_grt: DFF<Bits<LEN_BITS>>,
    d1_u: DFF<Bits<LEN_BITS>>,
    d2_valid: DFF<bool>,
    d2_r: DFF<Bits<4>>,
    d2_above: DFF<bool>,
    d2_q: DFF<Bits<16>>,
    d2_len: DFF<Bits<LEN_BITS>>,
    d2_grt: DFF<Bits<LEN_BITS>>,
    d2_u: DFF<Bits<LEN_BITS>>,
    d3_valid: DFF<bool>,
    d3_r: DFF<Bits<4>>,
    d3_above: DFF<bool>,
    d3_grid: DFF<Bits<32>>,
    d3_len: DFF<Bits<LEN_BITS>>,
    d3_grt: DFF<Bits<LEN_BITS>>,
    d3_u: DFF<Bits<LEN_BITS>>,
    d1_zin: Signal<Local, Bits<16>>,
    d2_sum: Signal<Local, Bits<33>>,
    recip_lo: Constant<Bits<16>>,
    payload16: Constant<Bits<16>>,
    // p4: the grid point, then clamps
    p4_valid: DFF<bool>,
    p4_r: DFF<Bits<4>>,
    p4_target: DFF<Bits<21>>,
    p4_above: DFF<bool>,
    p4_len: DFF<Bits<LEN_BITS>>,
    p4_grt: DFF<Bits<LEN_BITS>>,
    p4_u: DFF<Bits<LEN_BITS>>,
    // p5: the target, and how much more than granted
    p5_valid: DFF<bool>,
    p5_r: DFF<Bits<4>>,
    p5_target: DFF<Bits<LEN_BITS>>,
    p5_want: DFF<Bits<LEN_BITS>>,
    p5_wants: DFF<bool>,
    p5_t1: Signal<Local, Bits<21>>,
    p5_t2: Signal<Local, Bits<21>>,
    // decide
    room: Signal<Local, Bits<32>>,
    /// `room`, kept in a register: recomputed from `total` every cycle,
    /// and carried from decision to decision in SWEEP (each grant takes
    /// its bytes off), so the sweep's loop does not start at `total`.
    room_q: DFF<Bits<32>>,
    dec_amount: Signal<Local, Bits<32>>,
    dec_new: Signal<Local, Bits<LEN_BITS>>,
    dec_ent: Signal<Local, Bits<ENT_BITS>>,
    dec_slot: Signal<Local, Bits<SLOT_BITS>>,
    dec_prio: Signal<Local, Bits<3>>,
    /// Levels left unused when few messages are active (see `grant_priority`).
    prio_unused: Signal<Local, Bits<5>>,
    /// rank + unused levels.
    prio_extra: Signal<Local, Bits<5>>,
    msp5: Signal<Local, Bits<5>>,

    // FIFO grant
    fifo_slot: DFF<Bits<SLOT_BITS>>,
    fifo_on: Signal<Local, bool>,
    fifo_inc: Signal<Local, Bits<32>>,

    // derived parameters
    dyn_window: [DFF<Bits<32>>; 9],
    fifo_threshold: DFF<Bits<32>>,
    /// The tunables the derived parameters were computed from.
    shadow: DFF<Bits<CFG_BITS>>,
    /// The derived-from tunables now: max_incoming, fifo_grant_increment,
    /// grant_fifo_fraction.
    cfg_now: Signal<Local, Bits<CFG_BITS>>,
    /// `cfg_now == shadow` a cycle ago (and not in reset). Registered: the
    /// 62-bit compare sat in front of `s_evt_ready`, which the RX engine
    /// waits on. A tunable written in the cycle before an event is taken
    /// counts for that event from the next pass on, as one written while
    /// an event is in the works always has.
    cfg_ok: DFF<bool>,
    pr_idx: DFF<Bits<4>>,
    pr_step: DFF<Bits<6>>,
    pr_num: DFF<Bits<32>>,
    pr_den: DFF<Bits<32>>,
    pr_rem: DFF<Bits<33>>,
    pr_q: DFF<Bits<32>>,
    pr_rem_shift: Signal<Local, Bits<33>>,
    fifo_num: Signal<Local, Bits<32>>,
    fifo_lo: Signal<Local, Bits<32>>,
    fifo_hi: Signal<Local, Bits<32>>,

    // grant queue
    gq: [DFF<Bits<GQ_BITS>>; 16],
    gq_rd: DFF<Bits<4>>,
    gq_wr: DFF<Bits<4>>,
    gq_count: DFF<Bits<5>>,
    gq_push: Signal<Local, bool>,
    gq_push_data: Signal<Local, Bits<GQ_BITS>>,
    gq_pop: Signal<Local, bool>,
    gq_head: Signal<Local, Bits<GQ_BITS>>,
    /// `gq_head`'s 16-to-1 mux as a tree on gq_rd's bits (a chain of 16
    /// compares made 11 levels).
    gq_m1: [Signal<Local, Bits<GQ_BITS>>; 8],
    gq_m2: [Signal<Local, Bits<GQ_BITS>>; 4],
    gq_m3: [Signal<Local, Bits<GQ_BITS>>; 2],
    /// `dec_ent`'s and `mv_rm_ent`'s 8-to-1 muxes, as trees.
    de_m1: [Signal<Local, Bits<ENT_BITS>>; 4],
    de_m2: [Signal<Local, Bits<ENT_BITS>>; 2],
    mr_m1: [Signal<Local, Bits<ENT_BITS>>; 4],
    mr_m2: [Signal<Local, Bits<ENT_BITS>>; 2],

    // masks
    grt_mask_n: Constant<Bits<ENT_BITS>>,
    // FSM state codes (a Rust const inside hdl_gen is not a Verilog name)
    st_idle: Constant<Bits<4>>,
    st_read: Constant<Bits<4>>,
    st_move1: Constant<Bits<4>>,
    st_move2: Constant<Bits<4>>,
    st_refill: Constant<Bits<4>>,
    st_refill_read: Constant<Bits<4>>,
    st_sweep: Constant<Bits<4>>,
    st_clean: Constant<Bits<4>>,
    st_fifo: Constant<Bits<4>>,
    st_fifo_read: Constant<Bits<4>>,
    st_params: Constant<Bits<4>>,
    st_read2: Constant<Bits<4>>,
    st_fifo_grant: Constant<Bits<4>>,
    st_clean_wait: Constant<Bits<4>>,
    /// State RAM entry fields: `where` = active / tree, its mask cleared,
    /// present, and the granted field cleared.
    where_active: Constant<Bits<ST_BITS>>,
    where_tree: Constant<Bits<ST_BITS>>,
    where_clear: Constant<Bits<ST_BITS>>,
    present_bit: Constant<Bits<ST_BITS>>,
    grt_clear: Constant<Bits<ST_BITS>>,
    /// Grant queue entry: the FIFO flag.
    gq_fifo_bit: Constant<Bits<GQ_BITS>>,
    thousand: Constant<Bits<16>>,
    idx16: [Constant<Bits<4>>; 16],
    pr_fits: Signal<Local, bool>,
    /// The `where` codes as 2-bit values.
    w2_active: Constant<Bits<2>>,
    w2_tree: Constant<Bits<2>>,
    prio_diff: Signal<Local, Bits<5>>,
    /// fifo_grant_increment's low 16 and high 4 bits, and 1000 - f: the
    /// operands of the two 16 x 16 multipliers behind the FIFO threshold.
    fi_lo: Signal<Local, Bits<16>>,
    fi_hi: Signal<Local, Bits<16>>,
    fi_frac: Signal<Local, Bits<16>>,
    pr_q_next: Signal<Local, Bits<32>>,
    evt_take: Signal<Local, bool>,
}

impl Default for GrantScheduler {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            cfg_max_incoming: Default::default(),
            cfg_max_overcommit: Default::default(),
            cfg_window: Default::default(),
            cfg_max_sched_prio: Default::default(),
            cfg_unsched_bytes: Default::default(),
            cfg_grant_fifo_fraction: Default::default(),
            cfg_fifo_grant_increment: Default::default(),
            s_evt_valid: Default::default(),
            s_evt_ready: Default::default(),
            s_evt_slot: Default::default(),
            s_evt_remove: Default::default(),
            s_evt_length: Default::default(),
            s_evt_received: Default::default(),
            s_evt_incoming: Default::default(),
            m_grant_valid: Default::default(),
            m_grant_ready: Default::default(),
            m_grant_slot: Default::default(),
            m_grant_offset: Default::default(),
            m_grant_priority: Default::default(),
            m_grant_fifo: Default::default(),
            total_incoming: Default::default(),
            active_count: Default::default(),
            idle: Default::default(),
            cand_tree: WinnerTree::default(),
            oldest_tree: WinnerTree::default(),
            state_ram: Default::default(),
            ct_valid: Default::default(),
            ct_index: Default::default(),
            ct_present: Default::default(),
            ct_rank: Default::default(),
            ct_age: Default::default(),
            ot_valid: Default::default(),
            ot_index: Default::default(),
            ot_present: Default::default(),
            ot_age: Default::default(),
            ctq_valid: Default::default(),
            ctq_index: Default::default(),
            ctq_present: Default::default(),
            ctq_rank: Default::default(),
            ctq_age: Default::default(),
            otq_valid: Default::default(),
            otq_index: Default::default(),
            otq_present: Default::default(),
            otq_age: Default::default(),
            settled: Default::default(),
            sr_we: Default::default(),
            sr_addr: Default::default(),
            sr_data: Default::default(),
            wq_we: Default::default(),
            wq_addr: Default::default(),
            wq_data: Default::default(),
            byp_hit: Default::default(),
            byp_data: Default::default(),
            r_st: Default::default(),
            r_present: Default::default(),
            r_where: Default::default(),
            r_st_len: Default::default(),
            r_st_grt: Default::default(),
            r_len: Default::default(),
            r_birth: Default::default(),
            r_grt: Default::default(),
            r_rem: Default::default(),
            r_gone: Default::default(),
            r_ignore: Default::default(),
            r_wanted: Default::default(),
            r_cold: Default::default(),
            r_finc: Default::default(),
            r_fin_all: Default::default(),
            fsm: Default::default(),
            pass_capped: Default::default(),
            pass_owes: Default::default(),
            cleaned: Default::default(),
            pass_ended: Default::default(),
            skip_pass: Default::default(),
            fifo_due: Default::default(),
            total_new: Default::default(),
            post_sweep: Default::default(),
            birth_ctr: Default::default(),
            total: Default::default(),
            srpt_granted: Default::default(),
            e_slot: Default::default(),
            e_remove: Default::default(),
            e_len: Default::default(),
            e_rcv: Default::default(),
            e_inc: Default::default(),
            a_ent: Default::default(),
            a_n: Default::default(),
            a_valid: Default::default(),
            a_hit: Default::default(),
            hit_any: Default::default(),
            hit_pos: Default::default(),
            idx: std::array::from_fn(|k| Constant::new((k as u64).into())),
            st: Default::default(),
            st_present: Default::default(),
            st_where: Default::default(),
            st_len: Default::default(),
            st_rcv: Default::default(),
            st_grt: Default::default(),
            st_birth: Default::default(),
            n_len: Default::default(),
            n_grt: Default::default(),
            n_birth: Default::default(),
            n_rem: Default::default(),
            contrib_old: Default::default(),
            contrib_new: Default::default(),
            n_wanted: Default::default(),
            rd_c_s: Default::default(),
            rd_g_s: Default::default(),
            rd_clip_s: Default::default(),
            rd_c_e: Default::default(),
            n_ignore: Default::default(),
            n_gone: Default::default(),
            beats_worst: Default::default(),
            full: Default::default(),
            worst_ent: Default::default(),
            worst_q: Default::default(),
            m_cfg: Default::default(),
            mv_rm: Default::default(),
            mv_ins: Default::default(),
            mv_new: Default::default(),
            mv_demote: Default::default(),
            mv_clean: Default::default(),
            mv_cmp: Default::default(),
            nk_rem: Default::default(),
            nk_birth: Default::default(),
            mv_next: Default::default(),
            mv_q: Default::default(),
            mv_beats: Default::default(),
            mv_first: Default::default(),
            mv_rm_ent: Default::default(),
            new_rem: Default::default(),
            new_birth: Default::default(),
            cmp_rank_lt: Default::default(),
            cmp_rank_eq: Default::default(),
            cmp_age: Default::default(),
            mv_free: Default::default(),
            mv_here: Default::default(),
            mv_down: Default::default(),
            mv_up: Default::default(),
            w_age: Default::default(),
            a_done: Default::default(),
            cl_any: Default::default(),
            cl_pos: Default::default(),
            n_ent: Default::default(),
            start_sweep: Default::default(),
            st_new: Default::default(),
            rf_ent: Default::default(),
            ff_left: Default::default(),
            ff_new: Default::default(),
            window_now: Default::default(),
            refill_slot: Default::default(),
            sw_feed: Default::default(),
            sw_feeding: Default::default(),
            sw_n: Default::default(),
            sw_window: Default::default(),
            sw_stop: Default::default(),
            sw_left: Default::default(),
            feed_ent: Default::default(),
            p1_valid: Default::default(),
            p1_r: Default::default(),
            p1_off: Default::default(),
            p1_len: Default::default(),
            p1_grt: Default::default(),
            p1_u: Default::default(),
            p2_valid: Default::default(),
            p2_r: Default::default(),
            p2_off: Default::default(),
            p2_len: Default::default(),
            p2_grt: Default::default(),
            p2_u: Default::default(),
            p3_valid: Default::default(),
            p3_r: Default::default(),
            p3_above: Default::default(),
            p3_y: Default::default(),
            p3_len: Default::default(),
            p3_grt: Default::default(),
            p3_u: Default::default(),
            d1_valid: Default::default(),
            d1_r: Default::default(),
            d1_above: Default::default(),
            d1_z: Default::default(),
            d1_prod: Default::default(),
            d1_len: Default::default(),
            d1_grt: Default::default(),
            d1_u: Default::default(),
            d2_valid: Default::default(),
            d2_r: Default::default(),
            d2_above: Default::default(),
            d2_q: Default::default(),
            d2_len: Default::default(),
            d2_grt: Default::default(),
            d2_u: Default::default(),
            d3_valid: Default::default(),
            d3_r: Default::default(),
            d3_above: Default::default(),
            d3_grid: Default::default(),
            d3_len: Default::default(),
            d3_grt: Default::default(),
            d3_u: Default::default(),
            d1_zin: Default::default(),
            d2_sum: Default::default(),
            recip_lo: Constant::new(28_719u64.into()),
            payload16: Constant::new((MAX_PAYLOAD as u64).into()),
            p4_valid: Default::default(),
            p4_r: Default::default(),
            p4_target: Default::default(),
            p4_above: Default::default(),
            p4_len: Default::default(),
            p4_grt: Default::default(),
            p4_u: Default::default(),
            p5_valid: Default::default(),
            p5_r: Default::default(),
            p5_target: Default::default(),
            p5_want: Default::default(),
            p5_wants: Default::default(),
            p5_t1: Default::default(),
            p5_t2: Default::default(),
            room: Default::default(),
            room_q: Default::default(),
            dec_amount: Default::default(),
            dec_new: Default::default(),
            dec_ent: Default::default(),
            dec_slot: Default::default(),
            dec_prio: Default::default(),
            prio_unused: Default::default(),
            prio_extra: Default::default(),
            msp5: Default::default(),
            fifo_slot: Default::default(),
            fifo_on: Default::default(),
            fifo_inc: Default::default(),
            dyn_window: Default::default(),
            fifo_threshold: Default::default(),
            shadow: Default::default(),
            cfg_ok: Default::default(),
            cfg_now: Default::default(),
            pr_idx: Default::default(),
            pr_step: Default::default(),
            pr_num: Default::default(),
            pr_den: Default::default(),
            pr_rem: Default::default(),
            pr_q: Default::default(),
            pr_rem_shift: Default::default(),
            fifo_num: Default::default(),
            fifo_lo: Default::default(),
            fifo_hi: Default::default(),
            gq: Default::default(),
            gq_rd: Default::default(),
            gq_wr: Default::default(),
            gq_count: Default::default(),
            gq_push: Default::default(),
            gq_push_data: Default::default(),
            gq_pop: Default::default(),
            gq_head: Default::default(),
            gq_m1: Default::default(),
            gq_m2: Default::default(),
            gq_m3: Default::default(),
            de_m1: Default::default(),
            de_m2: Default::default(),
            mr_m1: Default::default(),
            mr_m2: Default::default(),
            grt_mask_n: Constant::new(!(Bits::<ENT_BITS>::from(0xf_ffffu64) << 52)),
            st_idle: Constant::new(IDLE.into()),
            st_read: Constant::new(READ.into()),
            st_move1: Constant::new(MOVE1.into()),
            st_move2: Constant::new(MOVE2.into()),
            st_refill: Constant::new(REFILL.into()),
            st_refill_read: Constant::new(REFILL_READ.into()),
            st_sweep: Constant::new(SWEEP.into()),
            st_clean: Constant::new(CLEAN.into()),
            st_fifo: Constant::new(FIFO.into()),
            st_fifo_read: Constant::new(FIFO_READ.into()),
            st_params: Constant::new(PARAMS.into()),
            st_read2: Constant::new(READ2.into()),
            st_fifo_grant: Constant::new(FIFO_GRANT.into()),
            st_clean_wait: Constant::new(CLEAN_WAIT.into()),
            where_active: Constant::new(Bits::<ST_BITS>::from(WHERE_ACTIVE) << 92),
            where_tree: Constant::new(Bits::<ST_BITS>::from(WHERE_TREE) << 92),
            where_clear: Constant::new(!(Bits::<ST_BITS>::from(3u64) << 92)),
            present_bit: Constant::new(Bits::<ST_BITS>::from(1u64) << 94),
            grt_clear: Constant::new(!(Bits::<ST_BITS>::from(0xf_ffffu64) << 32)),
            gq_fifo_bit: Constant::new(Bits::<GQ_BITS>::from(1u64) << 37),
            thousand: Constant::new(1000u64.into()),
            idx16: std::array::from_fn(|k| Constant::new((k as u64).into())),
            pr_fits: Default::default(),
            w2_active: Constant::new(WHERE_ACTIVE.into()),
            w2_tree: Constant::new(WHERE_TREE.into()),
            prio_diff: Default::default(),
            fi_lo: Default::default(),
            fi_hi: Default::default(),
            fi_frac: Default::default(),
            pr_q_next: Default::default(),
            evt_take: Default::default(),
        }
    }
}

impl Logic for GrantScheduler {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            fsm,
            pass_owes,
            pass_capped,
            cleaned,
            pass_ended,
            post_sweep,
            birth_ctr,
            total,
            srpt_granted,
            e_slot,
            e_remove,
            e_len,
            e_rcv,
            e_inc,
            a_n,
            mv_rm,
            mv_ins,
            mv_new,
            mv_demote,
            mv_next,
            mv_q,
            refill_slot,
            sw_feed,
            sw_feeding,
            sw_n,
            sw_window,
            sw_stop,
            sw_left,
            p1_valid,
            p1_r,
            p1_off,
            p1_len,
            p1_grt,
            p1_u,
            p2_valid,
            p2_r,
            p2_off,
            p2_len,
            p2_grt,
            p2_u,
            p3_valid,
            p3_r,
            p3_above,
            p3_y,
            p3_len,
            p3_grt,
            p3_u,
            d1_valid,
            d1_r,
            d1_above,
            d1_z,
            d1_prod,
            d1_len,
            d1_grt,
            d1_u,
            d2_valid,
            d2_r,
            d2_above,
            d2_q,
            d2_len,
            d2_grt,
            d2_u,
            d3_valid,
            d3_r,
            d3_above,
            d3_grid,
            d3_len,
            d3_grt,
            d3_u,
            p4_valid,
            p4_r,
            p4_target,
            p4_above,
            p4_len,
            p4_grt,
            p4_u,
            p5_valid,
            p5_r,
            p5_target,
            p5_want,
            p5_wants,
            fifo_slot,
            fifo_threshold,
            shadow,
            cfg_ok,
            pr_idx,
            pr_step,
            pr_num,
            pr_den,
            pr_rem,
            pr_q,
            gq_rd,
            gq_wr,
            gq_count,
            ctq_valid,
            ctq_index,
            ctq_present,
            ctq_rank,
            ctq_age,
            otq_valid,
            otq_index,
            otq_present,
            otq_age,
            r_st,
            r_len,
            r_birth,
            r_grt,
            r_rem,
            r_gone,
            r_ignore,
            r_wanted,
            r_cold,
            r_finc,
            r_fin_all,
            wq_we,
            wq_addr,
            wq_data,
            byp_hit,
            byp_data,
            worst_q,
            mv_clean,
            room_q
        );
        clock!(self, clock, cand_tree, oldest_tree);
        for k in 0..8 {
            self.a_ent[k].clock.next = self.clock.val();
            self.a_ent[k].d.next = self.a_ent[k].q.val();
            self.a_done[k].clock.next = self.clock.val();
            self.mv_cmp[k].clock.next = self.clock.val();
            self.mv_cmp[k].d.next = self.mv_cmp[k].q.val();
        }
        for k in 0..9 {
            self.dyn_window[k].clock.next = self.clock.val();
            self.dyn_window[k].d.next = self.dyn_window[k].q.val();
        }
        for k in 0..16 {
            self.gq[k].clock.next = self.clock.val();
            self.gq[k].d.next = self.gq[k].q.val();
        }
        self.state_ram.read_clock.next = self.clock.val();
        self.state_ram.write_clock.next = self.clock.val();
        self.cand_tree.reset.next = self.reset.val();
        self.oldest_tree.reset.next = self.reset.val();

        // ---- defaults of the children's inputs ----
        self.state_ram.read_address.next = self.s_evt_slot.val();
        self.byp_hit.d.next = self.wq_we.q.val() & (self.wq_addr.q.val() == self.s_evt_slot.val());
        self.sr_we.next = false;
        self.sr_addr.next = self.e_slot.q.val();
        self.sr_data.next = 0.into();
        self.ct_valid.next = false;
        self.ct_index.next = self.e_slot.q.val();
        self.ct_present.next = false;
        self.ct_rank.next = 0.into();
        self.ct_age.next = 0.into();
        self.ot_valid.next = false;
        self.ot_index.next = self.e_slot.q.val();
        self.ot_present.next = false;
        self.ot_age.next = 0.into();

        // The trees take what was asked of them in the last cycle.
        self.cand_tree.s_valid.next = self.ctq_valid.q.val();
        self.cand_tree.s_index.next = self.ctq_index.q.val();
        self.cand_tree.s_present.next = self.ctq_present.q.val();
        self.cand_tree.s_rank.next = self.ctq_rank.q.val();
        self.cand_tree.s_age.next = self.ctq_age.q.val();
        self.oldest_tree.s_valid.next = self.otq_valid.q.val();
        self.oldest_tree.s_index.next = self.otq_index.q.val();
        self.oldest_tree.s_present.next = self.otq_present.q.val();
        self.oldest_tree.s_rank.next = 0.into();
        self.oldest_tree.s_age.next = self.otq_age.q.val();
        self.settled.next = self.cand_tree.m_settled.val()
            & self.oldest_tree.m_settled.val()
            & !self.ctq_valid.q.val()
            & !self.otq_valid.q.val();

        // ---- the active set, position by position ----
        self.m_cfg.next = self.cfg_max_overcommit.val();
        for k in 0..8 {
            self.a_valid[k].next = self.idx[k].val() < self.a_n.q.val();
            self.a_hit[k].next = self.a_valid[k].val()
                & (self.a_ent[k].q.val().get_bits::<14>(112) == self.e_slot.q.val());
        }
        self.hit_any.next = false;
        self.hit_pos.next = self.idx[8].val();
        for k in 0..8 {
            if self.a_hit[k].val() {
                self.hit_any.next = true;
                self.hit_pos.next = self.idx[k].val();
            }
        }
        self.full.next = self.a_n.q.val() >= self.m_cfg.val();
        self.worst_ent.next = self.a_ent[0].q.val();
        for k in 0..8 {
            if self.idx[k + 1].val() == self.m_cfg.val() {
                self.worst_ent.next = self.a_ent[k].q.val();
            }
        }
        self.worst_q.d.next = self.worst_ent.val();
        // Fully granted, per position (CLEAN reads it a cycle later).
        for k in 0..8 {
            self.a_done[k].d.next = self.a_valid[k].val()
                & (self.a_ent[k].q.val().get_bits::<20>(52)
                    == self.a_ent[k].q.val().get_bits::<20>(92));
        }

        // ---- READ: the event's message after the event ----
        self.st.next = self.state_ram.read_data.val();
        if self.byp_hit.q.val() {
            self.st.next = self.byp_data.q.val();
        }
        self.st_present.next = self.st.val().get_bit(94);
        self.st_where.next = self.st.val().get_bits::<2>(92);
        self.st_len.next = self.st.val().get_bits::<20>(72);
        self.st_rcv.next = self.st.val().get_bits::<20>(52);
        self.st_grt.next = self.st.val().get_bits::<20>(32);
        self.st_birth.next = self.st.val().get_bits::<32>(0);
        self.n_len.next = self.e_len.q.val();
        self.n_birth.next = self.birth_ctr.q.val();
        if self.st_present.val() {
            self.n_len.next = self.st_len.val();
            self.n_birth.next = self.st_birth.val();
        }
        // The model's order (clip `incoming` to the length, keep the larger
        // of it and the old grant, compare with the length) as parallel
        // compares and a mux: the chain of three compares made 9 levels.
        self.rd_c_s.next = self.e_inc.q.val() > self.st_len.val();
        self.rd_clip_s.next = self.e_inc.q.val();
        self.rd_g_s.next = self.st_grt.val() > self.e_inc.q.val();
        if self.rd_c_s.val() {
            self.rd_clip_s.next = self.st_len.val();
            self.rd_g_s.next = self.st_grt.val() > self.st_len.val();
        }
        self.rd_c_e.next = self.e_inc.q.val() > self.e_len.q.val();
        self.n_grt.next = self.e_inc.q.val();
        if self.rd_c_e.val() {
            self.n_grt.next = self.e_len.q.val();
        }
        if self.st_present.val() {
            self.n_grt.next = self.rd_clip_s.val();
            if self.rd_g_s.val() {
                self.n_grt.next = self.st_grt.val();
            }
        }
        self.n_ignore.next = (self.st_present.val()
            & !self.e_remove.q.val()
            & (self.e_len.q.val() != self.st_len.val()))
            | (self.e_remove.q.val() & !self.st_present.val());
        self.n_gone.next = self.e_remove.q.val() | (self.e_rcv.q.val() >= self.e_len.q.val());
        self.n_wanted.next = !self.n_gone.val() & (self.e_inc.q.val() < self.e_len.q.val());
        if self.st_present.val() {
            self.n_gone.next = self.e_remove.q.val() | (self.e_rcv.q.val() >= self.st_len.val());
            self.n_wanted.next = !self.n_gone.val()
                & ((self.rd_g_s.val() & (self.st_grt.val() < self.st_len.val()))
                    | (!self.rd_g_s.val()
                        & !self.rd_c_s.val()
                        & (self.e_inc.q.val() < self.st_len.val())));
        }
        self.n_rem.next = self.n_len.val() - self.e_rcv.q.val();
        self.contrib_old.next = 0.into();
        if self.st_present.val() & (self.st_grt.val() > self.st_rcv.val()) {
            self.contrib_old.next = bit_cast::<32, 20>(self.st_grt.val() - self.st_rcv.val());
        }
        // Registered at every edge; meaningful in READ2 after READ.
        self.r_st.d.next = self.st.val();
        self.r_len.d.next = self.n_len.val();
        self.r_birth.d.next = self.n_birth.val();
        self.r_grt.d.next = self.n_grt.val();
        self.r_rem.d.next = self.n_rem.val();
        self.r_gone.d.next = self.n_gone.val();
        self.r_ignore.d.next = self.n_ignore.val();
        self.r_wanted.d.next = self.n_wanted.val();
        self.r_cold.d.next = self.contrib_old.val();
        self.r_present.next = self.r_st.q.val().get_bit(94);
        self.r_where.next = self.r_st.q.val().get_bits::<2>(92);
        self.r_st_len.next = self.r_st.q.val().get_bits::<20>(72);
        self.r_st_grt.next = self.r_st.q.val().get_bits::<20>(32);

        // ---- READ2: the decision's inputs, from READ's registered results ----
        self.contrib_new.next = 0.into();
        if !self.r_gone.q.val() & (self.r_grt.q.val() > self.e_rcv.q.val()) {
            self.contrib_new.next = bit_cast::<32, 20>(self.r_grt.q.val() - self.e_rcv.q.val());
        }
        self.w_age.next = self.r_birth.q.val() - self.worst_q.q.val().get_bits::<32>(0);
        self.beats_worst.next = (self.r_rem.q.val() < self.worst_q.q.val().get_bits::<20>(32))
            | ((self.r_rem.q.val() == self.worst_q.q.val().get_bits::<20>(32))
                & self.w_age.val().get_bit(31));
        // birth [31:0], rem [51:32], grt [71:52], rcv [91:72], len [111:92], slot [125:112]
        self.n_ent.next = bit_cast::<126, 32>(self.r_birth.q.val())
            | (bit_cast::<126, 20>(self.r_rem.q.val()) << 32)
            | (bit_cast::<126, 20>(self.r_grt.q.val()) << 52)
            | (bit_cast::<126, 20>(self.e_rcv.q.val()) << 72)
            | (bit_cast::<126, 20>(self.r_len.q.val()) << 92)
            | (bit_cast::<126, 14>(self.e_slot.q.val()) << 112);
        // birth [31:0], grt [51:32], rcv [71:52], len [91:72], where [93:92], present [94]
        self.st_new.next = bit_cast::<95, 32>(self.r_birth.q.val())
            | (bit_cast::<95, 20>(self.r_grt.q.val()) << 32)
            | (bit_cast::<95, 20>(self.e_rcv.q.val()) << 52)
            | (bit_cast::<95, 20>(self.r_len.q.val()) << 72)
            | self.present_bit.val();

        // ---- MOVE1: where the new entry goes among the survivors ----
        // The key compares are made in the state that sets `mv_new` (READ2
        // or REFILL_READ) and registered in `mv_cmp`: in MOVE1 behind the
        // priority pick and `mv_q`'s arithmetic they made 14 levels.
        self.nk_rem.next = self.r_rem.q.val();
        self.nk_birth.next = self.r_birth.q.val();
        if self.fsm.q.val() == self.st_refill_read.val() {
            self.nk_rem.next = self.st_len.val() - self.st_rcv.val();
            self.nk_birth.next = self.st_birth.val();
        }
        self.new_rem.next = self.nk_rem.val();
        self.new_birth.next = self.nk_birth.val();
        for k in 0..8 {
            self.cmp_rank_lt[k].next =
                self.a_ent[k].q.val().get_bits::<20>(32) < self.new_rem.val();
            self.cmp_rank_eq[k].next =
                self.a_ent[k].q.val().get_bits::<20>(32) == self.new_rem.val();
            self.cmp_age[k].next = self.a_ent[k].q.val().get_bits::<32>(0) - self.new_birth.val();
            if (self.fsm.q.val() == self.st_read2.val())
                | (self.fsm.q.val() == self.st_refill_read.val())
            {
                self.mv_cmp[k].d.next = self.cmp_rank_lt[k].val()
                    | (self.cmp_rank_eq[k].val() & self.cmp_age[k].val().get_bit(31));
            }
            self.mv_free[k].next = self.idx[k].val() != self.mv_rm.q.val();
            self.mv_beats[k].next =
                self.a_valid[k].val() & self.mv_free[k].val() & self.mv_cmp[k].q.val();
        }
        self.mv_first.next = self.idx[8].val();
        for k in 0..8 {
            if self.mv_free[7 - k].val() & !self.mv_beats[7 - k].val() {
                self.mv_first.next = self.idx[7 - k].val();
            }
        }
        for j in 0..4 {
            self.mr_m1[j].next = self.a_ent[2 * j].q.val();
            if self.mv_rm.q.val().get_bit(0) {
                self.mr_m1[j].next = self.a_ent[2 * j + 1].q.val();
            }
        }
        for j in 0..2 {
            self.mr_m2[j].next = self.mr_m1[2 * j].val();
            if self.mv_rm.q.val().get_bit(1) {
                self.mr_m2[j].next = self.mr_m1[2 * j + 1].val();
            }
        }
        // Position 8 (none) reads as position 0, as it always did.
        self.mv_rm_ent.next = self.mr_m2[0].val();
        if self.mv_rm.q.val().get_bit(2) & !self.mv_rm.q.val().get_bit(3) {
            self.mv_rm_ent.next = self.mr_m2[1].val();
        }

        // ---- MOVE2: the new order, position by position ----
        for k in 0..8 {
            self.mv_here[k].next = self.mv_ins.q.val() & (self.idx[k].val() == self.mv_q.q.val());
        }
        // Position 0 never takes the entry above it (written apart: Verilator
        // lints a compare of the constant 0 as always true).
        self.mv_down[0].next = false;
        self.mv_up[0].next = self.mv_rm.q.val() == 0;
        for k in 1..8 {
            self.mv_down[k].next = self.mv_ins.q.val()
                & (self.idx[k].val() > self.mv_q.q.val())
                & (self.idx[k].val() <= self.mv_rm.q.val());
            self.mv_up[k].next = !(self.mv_ins.q.val() & (self.idx[k].val() > self.mv_q.q.val()))
                & (self.idx[k].val() >= self.mv_rm.q.val());
        }

        // ---- REFILL_READ: the tree's best, from the state RAM ----
        self.rf_ent.next = bit_cast::<126, 32>(self.st_birth.val())
            | (bit_cast::<126, 20>(self.st_len.val() - self.st_rcv.val()) << 32)
            | (bit_cast::<126, 20>(self.st_grt.val()) << 52)
            | (bit_cast::<126, 20>(self.st_rcv.val()) << 72)
            | (bit_cast::<126, 20>(self.st_len.val()) << 92)
            | (bit_cast::<126, 14>(self.refill_slot.q.val()) << 112);

        // ---- CLEAN: the first fully granted active entry (its state is
        // written back in MOVE1, from `mv_rm_ent`) ----
        self.cl_any.next = false;
        self.cl_pos.next = self.idx[8].val();
        for k in 0..8 {
            if self.a_done[7 - k].q.val() {
                self.cl_any.next = true;
                self.cl_pos.next = self.idx[7 - k].val();
            }
        }

        // ---- the grant pass's target pipeline ----
        self.window_now.next = self.cfg_window.val();
        if self.cfg_window.val() == 0 {
            self.window_now.next = self.dyn_window[0].q.val();
            for k in 1..9 {
                if self.idx[k].val() == self.a_n.q.val() {
                    self.window_now.next = self.dyn_window[k].q.val();
                }
            }
        }
        self.feed_ent.next = self.a_ent[0].q.val();
        for k in 0..8 {
            if self.idx[k].val() == self.sw_feed.q.val() {
                self.feed_ent.next = self.a_ent[k].q.val();
            }
        }
        // p1: received + window; u = min(length, unsched_bytes)
        self.p1_valid.d.next = self.sw_feeding.q.val() & (self.fsm.q.val() == self.st_sweep.val());
        self.p1_r.d.next = self.sw_feed.q.val();
        self.p1_off.d.next = bit_cast::<33, 20>(self.feed_ent.val().get_bits::<20>(72))
            + bit_cast::<33, 32>(self.sw_window.q.val());
        self.p1_len.d.next = self.feed_ent.val().get_bits::<20>(92);
        self.p1_grt.d.next = self.feed_ent.val().get_bits::<20>(52);
        self.p1_u.d.next = self.cfg_unsched_bytes.val();
        if self.feed_ent.val().get_bits::<20>(92) < self.cfg_unsched_bytes.val() {
            self.p1_u.d.next = self.feed_ent.val().get_bits::<20>(92);
        }
        // p2: clamped to the message
        self.p2_valid.d.next = self.p1_valid.q.val();
        self.p2_r.d.next = self.p1_r.q.val();
        self.p2_off.d.next = self.p1_off.q.val().get_bits::<20>(0);
        if self.p1_off.q.val() > bit_cast::<33, 20>(self.p1_len.q.val()) {
            self.p2_off.d.next = self.p1_len.q.val();
        }
        self.p2_len.d.next = self.p1_len.q.val();
        self.p2_grt.d.next = self.p1_grt.q.val();
        self.p2_u.d.next = self.p1_u.q.val();
        // p3: the side of u, and y' = y + MAX_PAYLOAD - 1
        self.p3_valid.d.next = self.p2_valid.q.val();
        self.p3_r.d.next = self.p2_r.q.val();
        self.p3_above.d.next = self.p2_off.q.val() > self.p2_u.q.val();
        self.p3_y.d.next = bit_cast::<21, 20>(self.p2_off.q.val()) + 1423;
        if self.p2_off.q.val() > self.p2_u.q.val() {
            self.p3_y.d.next = bit_cast::<21, 20>(self.p2_off.q.val() - self.p2_u.q.val()) + 1423;
        }
        self.p3_len.d.next = self.p2_len.q.val();
        self.p3_grt.d.next = self.p2_grt.q.val();
        self.p3_u.d.next = self.p2_u.q.val();
        // d1: z = y' / 16, z * (94255 - 65536)
        self.d1_zin.next = self.p3_y.q.val().get_bits::<16>(4);
        self.d1_valid.d.next = self.p3_valid.q.val();
        self.d1_r.d.next = self.p3_r.q.val();
        self.d1_above.d.next = self.p3_above.q.val();
        self.d1_z.d.next = self.d1_zin.val();
        self.d1_prod.d.next = self.d1_zin.val() * self.recip_lo.val();
        self.d1_len.d.next = self.p3_len.q.val();
        self.d1_grt.d.next = self.p3_grt.q.val();
        self.d1_u.d.next = self.p3_u.q.val();
        // d2: q = (z * 94255) >> 23 = floor(y' / MAX_PAYLOAD)
        self.d2_sum.next = bit_cast::<33, 32>(self.d1_prod.q.val())
            + (bit_cast::<33, 16>(self.d1_z.q.val()) << 16);
        self.d2_valid.d.next = self.d1_valid.q.val();
        self.d2_r.d.next = self.d1_r.q.val();
        self.d2_above.d.next = self.d1_above.q.val();
        self.d2_q.d.next = bit_cast::<16, 10>(self.d2_sum.val().get_bits::<10>(23));
        self.d2_len.d.next = self.d1_len.q.val();
        self.d2_grt.d.next = self.d1_grt.q.val();
        self.d2_u.d.next = self.d1_u.q.val();
        // d3: the grid point in bytes
        self.d3_valid.d.next = self.d2_valid.q.val();
        self.d3_r.d.next = self.d2_r.q.val();
        self.d3_above.d.next = self.d2_above.q.val();
        self.d3_grid.d.next = self.d2_q.q.val() * self.payload16.val();
        self.d3_len.d.next = self.d2_len.q.val();
        self.d3_grt.d.next = self.d2_grt.q.val();
        self.d3_u.d.next = self.d2_u.q.val();
        // p4: measured from u above it, from 0 below
        self.p4_valid.d.next = self.d3_valid.q.val();
        self.p4_r.d.next = self.d3_r.q.val();
        self.p4_above.d.next = self.d3_above.q.val();
        self.p4_target.d.next = self.d3_grid.q.val().get_bits::<21>(0);
        if self.d3_above.q.val() {
            self.p4_target.d.next =
                self.d3_grid.q.val().get_bits::<21>(0) + bit_cast::<21, 20>(self.d3_u.q.val());
        }
        self.p4_len.d.next = self.d3_len.q.val();
        self.p4_grt.d.next = self.d3_grt.q.val();
        self.p4_u.d.next = self.d3_u.q.val();
        // p5: never past u below it, never past the message; what is wanted
        self.p5_t1.next = self.p4_target.q.val();
        if !self.p4_above.q.val() & (self.p4_target.q.val() > bit_cast::<21, 20>(self.p4_u.q.val()))
        {
            self.p5_t1.next = bit_cast::<21, 20>(self.p4_u.q.val());
        }
        self.p5_t2.next = self.p5_t1.val();
        if self.p5_t1.val() > bit_cast::<21, 20>(self.p4_len.q.val()) {
            self.p5_t2.next = bit_cast::<21, 20>(self.p4_len.q.val());
        }
        self.p5_valid.d.next = self.p4_valid.q.val();
        self.p5_r.d.next = self.p4_r.q.val();
        self.p5_target.d.next = self.p5_t2.val().get_bits::<20>(0);
        self.p5_wants.d.next = self.p5_t2.val() > bit_cast::<21, 20>(self.p4_grt.q.val());
        self.p5_want.d.next = self.p5_t2.val().get_bits::<20>(0) - self.p4_grt.q.val();

        // ---- the decision: room left, in rank order ----
        self.room.next = 0.into();
        if self.cfg_max_incoming.val() > self.total.q.val() {
            self.room.next = self.cfg_max_incoming.val() - self.total.q.val();
        }
        // SWEEP and FIFO_GRANT use `room_q`: it equals `room` there (no
        // change of `total` in the cycle before either; in SWEEP each grant
        // takes its bytes off both). A tunable changed in the middle of a
        // pass counts from the next pass.
        self.room_q.d.next = self.room.val();
        self.dec_amount.next = bit_cast::<32, 20>(self.p5_want.q.val());
        self.dec_new.next = self.p5_target.q.val();
        for j in 0..4 {
            self.de_m1[j].next = self.a_ent[2 * j].q.val();
            if self.p5_r.q.val().get_bit(0) {
                self.de_m1[j].next = self.a_ent[2 * j + 1].q.val();
            }
        }
        for j in 0..2 {
            self.de_m2[j].next = self.de_m1[2 * j].val();
            if self.p5_r.q.val().get_bit(1) {
                self.de_m2[j].next = self.de_m1[2 * j + 1].val();
            }
        }
        // p5_r is a rank, 0..7.
        self.dec_ent.next = self.de_m2[0].val();
        if self.p5_r.q.val().get_bit(2) {
            self.dec_ent.next = self.de_m2[1].val();
        }
        if bit_cast::<32, 20>(self.p5_want.q.val()) > self.room_q.q.val() {
            self.dec_amount.next = self.room_q.q.val();
            self.dec_new.next =
                self.dec_ent.val().get_bits::<20>(52) + self.room_q.q.val().get_bits::<20>(0);
        }
        self.dec_slot.next = self.dec_ent.val().get_bits::<14>(112);
        self.msp5.next = bit_cast::<5, 3>(self.cfg_max_sched_prio.val());
        self.prio_unused.next = 0.into();
        if self.msp5.val() + 1 > bit_cast::<5, 4>(self.sw_n.q.val()) {
            self.prio_unused.next = self.msp5.val() + 1 - bit_cast::<5, 4>(self.sw_n.q.val());
        }
        self.prio_extra.next = bit_cast::<5, 4>(self.p5_r.q.val()) + self.prio_unused.val();
        self.prio_diff.next = self.msp5.val() - self.prio_extra.val();
        self.dec_prio.next = 0.into();
        if self.msp5.val() >= self.prio_extra.val() {
            self.dec_prio.next = self.prio_diff.val().get_bits::<3>(0);
        }

        // ---- FIFO grant arithmetic (state RAM output = the oldest's state) ----
        self.fifo_on.next =
            (self.cfg_grant_fifo_fraction.val() != 0) & (self.cfg_grant_fifo_fraction.val() < 1000);
        // FIFO_READ: what the oldest may get at most; FIFO_GRANT: room too.
        self.ff_left.next = bit_cast::<32, 20>(self.st_len.val() - self.st_grt.val());
        self.r_finc.d.next = bit_cast::<32, 20>(self.cfg_fifo_grant_increment.val());
        self.r_fin_all.d.next = true;
        if self.ff_left.val() < bit_cast::<32, 20>(self.cfg_fifo_grant_increment.val()) {
            self.r_finc.d.next = self.ff_left.val();
        }
        if self.ff_left.val() > bit_cast::<32, 20>(self.cfg_fifo_grant_increment.val()) {
            self.r_fin_all.d.next = false;
        }
        self.fifo_inc.next = self.r_finc.q.val();
        if self.room_q.q.val() < self.r_finc.q.val() {
            self.fifo_inc.next = self.room_q.q.val();
        }
        self.ff_new.next = self.r_st_grt.val() + self.fifo_inc.val().get_bits::<20>(0);

        // ---- READ's shortcut: no pass when it could grant nothing ----
        self.total_new.next = self.total.q.val() - self.r_cold.q.val() + self.contrib_new.val();
        self.fifo_due.next =
            self.fifo_on.val() & (self.srpt_granted.q.val() >= self.fifo_threshold.q.val());
        self.skip_pass.next = !(self.r_present.val()
            & (self.r_where.val() == self.w2_active.val()))
            & !(self.r_wanted.q.val() & (!self.full.val() | self.beats_worst.val()))
            & !self.fifo_due.val()
            & !self.pass_owes.q.val()
            & (!self.pass_capped.q.val()
                | (self.contrib_new.val() >= self.r_cold.q.val())
                | (self.total_new.val() >= self.cfg_max_incoming.val()));

        // ---- derived parameters ----
        self.cfg_now.next = bit_cast::<CFG_BITS, 32>(self.cfg_max_incoming.val())
            | (bit_cast::<CFG_BITS, 20>(self.cfg_fifo_grant_increment.val()) << 32)
            | (bit_cast::<CFG_BITS, 10>(self.cfg_grant_fifo_fraction.val()) << 52);
        self.cfg_ok.d.next = (self.cfg_now.val() == self.shadow.q.val()) & !self.reset.val();
        self.fi_lo.next = self.cfg_fifo_grant_increment.val().get_bits::<16>(0);
        self.fi_hi.next = bit_cast::<16, 4>(self.cfg_fifo_grant_increment.val().get_bits::<4>(16));
        self.fi_frac.next =
            self.thousand.val() - bit_cast::<16, 10>(self.cfg_grant_fifo_fraction.val());
        self.fifo_lo.next = self.fi_lo.val() * self.fi_frac.val();
        self.fifo_hi.next = self.fi_hi.val() * self.fi_frac.val();
        self.fifo_num.next = self.fifo_lo.val() + (self.fifo_hi.val() << 16);
        self.pr_rem_shift.next =
            (self.pr_rem.q.val() << 1) | bit_cast::<33, 1>(self.pr_num.q.val().get_bits::<1>(31));
        self.pr_fits.next = self.pr_rem_shift.val() >= bit_cast::<33, 32>(self.pr_den.q.val());
        self.pr_q_next.next = self.pr_q.q.val() << 1;
        if self.pr_fits.val() {
            self.pr_q_next.next = (self.pr_q.q.val() << 1) | 1;
        }

        // ---- grant queue ----
        self.gq_push.next = false;
        self.gq_push_data.next = bit_cast::<38, 20>(self.dec_new.val())
            | (bit_cast::<38, 14>(self.dec_slot.val()) << 20)
            | (bit_cast::<38, 3>(self.dec_prio.val()) << 34);
        for j in 0..8 {
            self.gq_m1[j].next = self.gq[2 * j].q.val();
            if self.gq_rd.q.val().get_bit(0) {
                self.gq_m1[j].next = self.gq[2 * j + 1].q.val();
            }
        }
        for j in 0..4 {
            self.gq_m2[j].next = self.gq_m1[2 * j].val();
            if self.gq_rd.q.val().get_bit(1) {
                self.gq_m2[j].next = self.gq_m1[2 * j + 1].val();
            }
        }
        for j in 0..2 {
            self.gq_m3[j].next = self.gq_m2[2 * j].val();
            if self.gq_rd.q.val().get_bit(2) {
                self.gq_m3[j].next = self.gq_m2[2 * j + 1].val();
            }
        }
        self.gq_head.next = self.gq_m3[0].val();
        if self.gq_rd.q.val().get_bit(3) {
            self.gq_head.next = self.gq_m3[1].val();
        }
        self.m_grant_valid.next = self.gq_count.q.val() != 0;
        self.m_grant_offset.next = self.gq_head.val().get_bits::<20>(0);
        self.m_grant_slot.next = self.gq_head.val().get_bits::<14>(20);
        self.m_grant_priority.next = self.gq_head.val().get_bits::<3>(34);
        self.m_grant_fifo.next = self.gq_head.val().get_bit(37);
        self.gq_pop.next = self.m_grant_ready.val() & (self.gq_count.q.val() != 0);

        // ---- the FSM ----
        self.evt_take.next = (self.fsm.q.val() == self.st_idle.val())
            & self.cfg_ok.q.val()
            & (self.gq_count.q.val() <= 7)
            & self.cand_tree.s_ready.val()
            & !self.reset.val();
        self.s_evt_ready.next = self.evt_take.val();
        self.start_sweep.next = false;
        if self.fsm.q.val() == self.st_idle.val() {
            if self.pass_ended.q.val() {
                self.pass_ended.d.next = false;
                self.pass_capped.d.next = self.room.val() == 0;
                self.pass_owes.d.next = self.cleaned.q.val();
            }
            if !self.cfg_ok.q.val() & self.cand_tree.s_ready.val() {
                // A tunable changed (or reset): derive again.
                self.shadow.d.next = self.cfg_now.val();
                self.pr_idx.d.next = 0.into();
                self.pr_step.d.next = 0.into();
                self.pr_num.d.next = self.cfg_max_incoming.val();
                self.pr_den.d.next = 2.into();
                self.pr_rem.d.next = 0.into();
                self.pr_q.d.next = 0.into();
                self.fsm.d.next = self.st_params.val();
            } else if self.s_evt_valid.val() & self.evt_take.val() {
                self.e_slot.d.next = self.s_evt_slot.val();
                self.e_remove.d.next = self.s_evt_remove.val();
                self.e_len.d.next = self.s_evt_length.val();
                self.e_rcv.d.next = self.s_evt_received.val();
                self.e_inc.d.next = self.s_evt_incoming.val();
                self.fsm.d.next = self.st_read.val();
            }
        } else if self.fsm.q.val() == self.st_read.val() {
            // The state RAM's entry is out: READ's results are registered.
            self.fsm.d.next = self.st_read2.val();
        } else if self.fsm.q.val() == self.st_read2.val() {
            self.post_sweep.d.next = false;
            self.mv_rm.d.next = self.idx[8].val();
            self.mv_ins.d.next = false;
            self.mv_new.d.next = self.n_ent.val();
            self.mv_demote.d.next = false;
            self.mv_clean.d.next = false;
            self.mv_next.d.next = self.st_refill.val();
            self.fsm.d.next = self.st_refill.val();
            if self.r_ignore.q.val() {
                self.fsm.d.next = self.st_idle.val();
            } else {
                self.total.d.next = self.total_new.val();
                if !self.r_present.val() {
                    self.birth_ctr.d.next = self.birth_ctr.q.val() + 1;
                }
                self.sr_we.next = true;
                self.sr_addr.next = self.e_slot.q.val();
                self.sr_data.next = 0.into();
                self.ct_index.next = self.e_slot.q.val();
                self.ot_index.next = self.e_slot.q.val();
                self.ct_rank.next = self.r_rem.q.val();
                self.ct_age.next = self.r_birth.q.val();
                self.ot_age.next = self.r_birth.q.val();
                if self.r_present.val() & (self.r_where.val() == self.w2_active.val()) {
                    // In the active set: it moves up, or leaves.
                    self.mv_rm.d.next = self.hit_pos.val();
                    self.fsm.d.next = self.st_move1.val();
                    if self.r_wanted.q.val() {
                        self.mv_ins.d.next = true;
                        self.sr_data.next = self.st_new.val() | self.where_active.val();
                        if self.a_hit[0].val() {
                            // The best entry stays the best (keys only
                            // fall): updated in place, no move, and when
                            // the set needs no refill, straight to the pass.
                            self.a_ent[0].d.next = self.n_ent.val();
                            self.fsm.d.next = self.st_refill.val();
                            if self.full.val()
                                | (self.settled.val() & !self.cand_tree.m_present.val())
                            {
                                self.start_sweep.next = true;
                            }
                        }
                    } else if !self.r_gone.q.val() {
                        self.sr_data.next = self.st_new.val();
                    }
                } else if self.r_wanted.q.val() & (!self.full.val() | self.beats_worst.val()) {
                    // Promoted: into the active set, the worst (if full) out.
                    self.mv_ins.d.next = true;
                    self.fsm.d.next = self.st_move1.val();
                    if self.full.val() {
                        self.mv_demote.d.next = true;
                        self.mv_rm.d.next = self.m_cfg.val() - 1;
                    }
                    self.sr_data.next = self.st_new.val() | self.where_active.val();
                    if self.r_present.val() & (self.r_where.val() == self.w2_tree.val()) {
                        self.ct_valid.next = true;
                        self.ot_valid.next = true;
                    }
                } else if self.r_wanted.q.val() {
                    // A tree leaf: its key changes (or it arrives).
                    if self.skip_pass.val() {
                        self.fsm.d.next = self.st_idle.val();
                    }
                    self.ct_valid.next = true;
                    self.ct_present.next = true;
                    self.ot_valid.next = true;
                    self.ot_present.next = true;
                    self.sr_data.next = self.st_new.val() | self.where_tree.val();
                } else {
                    // Not (or no longer) a candidate.
                    if self.skip_pass.val() {
                        self.fsm.d.next = self.st_idle.val();
                    }
                    if self.r_present.val() & (self.r_where.val() == self.w2_tree.val()) {
                        self.ct_valid.next = true;
                        self.ot_valid.next = true;
                    }
                    if !self.r_gone.q.val() {
                        self.sr_data.next = self.st_new.val();
                    }
                }
            }
        } else if self.fsm.q.val() == self.st_move1.val() {
            self.mv_q.d.next = self.mv_first.val();
            if self.mv_rm.q.val() < self.mv_first.val() {
                self.mv_q.d.next = self.mv_first.val() - 1;
            }
            if self.mv_demote.q.val() {
                // The worst active entry becomes a tree leaf.
                self.ct_valid.next = true;
                self.ct_present.next = true;
                self.ct_index.next = self.mv_rm_ent.val().get_bits::<14>(112);
                self.ct_rank.next = self.mv_rm_ent.val().get_bits::<20>(32);
                self.ct_age.next = self.mv_rm_ent.val().get_bits::<32>(0);
                self.ot_valid.next = true;
                self.ot_present.next = true;
                self.ot_index.next = self.mv_rm_ent.val().get_bits::<14>(112);
                self.ot_age.next = self.mv_rm_ent.val().get_bits::<32>(0);
                self.sr_we.next = true;
                self.sr_addr.next = self.mv_rm_ent.val().get_bits::<14>(112);
                self.sr_data.next = bit_cast::<95, 32>(self.mv_rm_ent.val().get_bits::<32>(0))
                    | (bit_cast::<95, 20>(self.mv_rm_ent.val().get_bits::<20>(52)) << 32)
                    | (bit_cast::<95, 20>(self.mv_rm_ent.val().get_bits::<20>(72)) << 52)
                    | (bit_cast::<95, 20>(self.mv_rm_ent.val().get_bits::<20>(92)) << 72)
                    | self.where_tree.val()
                    | self.present_bit.val();
            }
            if self.mv_clean.q.val() {
                // CLEAN's entry: no longer a candidate (`where` 0).
                self.sr_we.next = true;
                self.sr_addr.next = self.mv_rm_ent.val().get_bits::<14>(112);
                self.sr_data.next = bit_cast::<95, 32>(self.mv_rm_ent.val().get_bits::<32>(0))
                    | (bit_cast::<95, 20>(self.mv_rm_ent.val().get_bits::<20>(52)) << 32)
                    | (bit_cast::<95, 20>(self.mv_rm_ent.val().get_bits::<20>(72)) << 52)
                    | (bit_cast::<95, 20>(self.mv_rm_ent.val().get_bits::<20>(92)) << 72)
                    | self.present_bit.val();
            }
            self.fsm.d.next = self.st_move2.val();
        } else if self.fsm.q.val() == self.st_move2.val() {
            for k in 0..7 {
                if self.mv_up[k].val() {
                    self.a_ent[k].d.next = self.a_ent[k + 1].q.val();
                }
            }
            for k in 1..8 {
                if self.mv_down[k].val() {
                    self.a_ent[k].d.next = self.a_ent[k - 1].q.val();
                }
            }
            for k in 0..8 {
                if self.mv_here[k].val() {
                    self.a_ent[k].d.next = self.mv_new.q.val();
                }
            }
            if (self.mv_rm.q.val() != self.idx[8].val()) & !self.mv_ins.q.val() {
                self.a_n.d.next = self.a_n.q.val() - 1;
            }
            if (self.mv_rm.q.val() == self.idx[8].val()) & self.mv_ins.q.val() {
                self.a_n.d.next = self.a_n.q.val() + 1;
            }
            self.fsm.d.next = self.mv_next.q.val();
        } else if self.fsm.q.val() == self.st_refill.val() {
            if !self.full.val() & self.settled.val() & self.cand_tree.m_present.val() {
                self.refill_slot.d.next = self.cand_tree.m_index.val();
                self.state_ram.read_address.next = self.cand_tree.m_index.val();
                self.byp_hit.d.next =
                    self.wq_we.q.val() & (self.wq_addr.q.val() == self.cand_tree.m_index.val());
                self.fsm.d.next = self.st_refill_read.val();
            } else if self.full.val() | self.settled.val() {
                // The active set is as it must be.
                if self.post_sweep.q.val() {
                    self.fsm.d.next = self.st_fifo.val();
                } else if self.a_n.q.val() == 0 {
                    self.fsm.d.next = self.st_idle.val();
                    self.pass_ended.d.next = true;
                } else {
                    self.start_sweep.next = true;
                }
            }
        } else if self.fsm.q.val() == self.st_refill_read.val() {
            self.mv_rm.d.next = self.idx[8].val();
            self.mv_ins.d.next = true;
            self.mv_new.d.next = self.rf_ent.val();
            self.mv_demote.d.next = false;
            self.mv_clean.d.next = false;
            self.mv_next.d.next = self.st_refill.val();
            self.ct_valid.next = true;
            self.ct_index.next = self.refill_slot.q.val();
            self.ot_valid.next = true;
            self.ot_index.next = self.refill_slot.q.val();
            self.sr_we.next = true;
            self.sr_addr.next = self.refill_slot.q.val();
            self.sr_data.next = (self.st.val() & self.where_clear.val()) | self.where_active.val();
            self.fsm.d.next = self.st_move1.val();
        } else if self.fsm.q.val() == self.st_sweep.val() {
            if self.sw_feeding.q.val() {
                self.sw_feed.d.next = self.sw_feed.q.val() + 1;
                if self.sw_feed.q.val() + 1 == self.sw_n.q.val() {
                    self.sw_feeding.d.next = false;
                }
            }
            if self.p5_valid.q.val() {
                self.sw_left.d.next = self.sw_left.q.val() - 1;
                if self.sw_left.q.val() == 1 {
                    self.fsm.d.next = self.st_clean_wait.val();
                }
                if !self.sw_stop.q.val() {
                    if self.room_q.q.val() == 0 {
                        self.sw_stop.d.next = true;
                    } else if self.p5_wants.q.val() {
                        self.gq_push.next = true;
                        self.total.d.next = self.total.q.val() + self.dec_amount.val();
                        self.room_q.d.next = self.room_q.q.val() - self.dec_amount.val();
                        self.srpt_granted.d.next =
                            self.srpt_granted.q.val() + self.dec_amount.val();
                        for k in 0..8 {
                            if self.idx[k].val() == self.p5_r.q.val() {
                                self.a_ent[k].d.next = (self.dec_ent.val() & self.grt_mask_n.val())
                                    | (bit_cast::<126, 20>(self.dec_new.val()) << 52);
                            }
                        }
                        self.sr_we.next = true;
                        self.sr_addr.next = self.dec_slot.val();
                        self.sr_data.next =
                            bit_cast::<95, 32>(self.dec_ent.val().get_bits::<32>(0))
                                | (bit_cast::<95, 20>(self.dec_new.val()) << 32)
                                | (bit_cast::<95, 20>(self.dec_ent.val().get_bits::<20>(72)) << 52)
                                | (bit_cast::<95, 20>(self.dec_ent.val().get_bits::<20>(92)) << 72)
                                | self.where_active.val()
                                | self.present_bit.val();
                    }
                }
            }
        } else if self.fsm.q.val() == self.st_clean.val() {
            if self.cl_any.val() {
                // Fully granted: no longer a candidate (written back in MOVE1).
                self.cleaned.d.next = true;
                self.mv_rm.d.next = self.cl_pos.val();
                self.mv_ins.d.next = false;
                self.mv_demote.d.next = false;
                self.mv_clean.d.next = true;
                self.mv_next.d.next = self.st_clean_wait.val();
                self.fsm.d.next = self.st_move1.val();
            } else {
                self.post_sweep.d.next = true;
                self.fsm.d.next = self.st_refill.val();
            }
        } else if self.fsm.q.val() == self.st_clean_wait.val() {
            // `a_done` catches up with the active set's last change.
            self.fsm.d.next = self.st_clean.val();
        } else if self.fsm.q.val() == self.st_fifo.val() {
            if !self.fifo_due.val() {
                self.fsm.d.next = self.st_idle.val();
                self.pass_ended.d.next = true;
            } else if self.settled.val() {
                if self.oldest_tree.m_present.val() {
                    self.fifo_slot.d.next = self.oldest_tree.m_index.val();
                    self.state_ram.read_address.next = self.oldest_tree.m_index.val();
                    self.byp_hit.d.next = self.wq_we.q.val()
                        & (self.wq_addr.q.val() == self.oldest_tree.m_index.val());
                    self.fsm.d.next = self.st_fifo_read.val();
                } else {
                    // Every candidate is active: nobody starves.
                    self.srpt_granted.d.next =
                        self.srpt_granted.q.val() - self.fifo_threshold.q.val();
                    self.fsm.d.next = self.st_idle.val();
                    self.pass_ended.d.next = true;
                }
            }
        } else if self.fsm.q.val() == self.st_fifo_read.val() {
            // The oldest's state is out of the RAM: registered for FIFO_GRANT.
            self.fsm.d.next = self.st_fifo_grant.val();
        } else if self.fsm.q.val() == self.st_fifo_grant.val() {
            self.fsm.d.next = self.st_idle.val();
            self.pass_ended.d.next = true;
            if self.room_q.q.val() != 0 {
                self.srpt_granted.d.next = self.srpt_granted.q.val() - self.fifo_threshold.q.val();
                self.total.d.next = self.total.q.val() + self.fifo_inc.val();
                self.gq_push.next = true;
                self.gq_push_data.next = bit_cast::<38, 20>(self.ff_new.val())
                    | (bit_cast::<38, 14>(self.fifo_slot.q.val()) << 20)
                    | (bit_cast::<38, 3>(self.cfg_max_sched_prio.val()) << 34)
                    | self.gq_fifo_bit.val();
                self.sr_we.next = true;
                self.sr_addr.next = self.fifo_slot.q.val();
                self.sr_data.next = (self.r_st.q.val() & self.grt_clear.val())
                    | (bit_cast::<95, 20>(self.ff_new.val()) << 32);
                // Fully granted: what was left fit in the increment and in
                // the room (ff_new == length, without the adder on the path).
                if self.r_fin_all.q.val() & !(self.room_q.q.val() < self.r_finc.q.val()) {
                    // Fully granted: out of the trees, no longer a candidate.
                    self.sr_data.next = (self.r_st.q.val()
                        & !(bit_cast::<95, 20>(0xf_ffff.into()) << 32)
                        & self.where_clear.val())
                        | (bit_cast::<95, 20>(self.ff_new.val()) << 32);
                    self.ct_valid.next = true;
                    self.ct_index.next = self.fifo_slot.q.val();
                    self.ot_valid.next = true;
                    self.ot_index.next = self.fifo_slot.q.val();
                }
            }
        } else if self.fsm.q.val() == self.st_params.val() {
            // Restoring division, one quotient bit per cycle.
            self.pr_num.d.next = self.pr_num.q.val() << 1;
            self.pr_rem.d.next = self.pr_rem_shift.val();
            self.pr_q.d.next = self.pr_q_next.val();
            if self.pr_fits.val() {
                self.pr_rem.d.next =
                    self.pr_rem_shift.val() - bit_cast::<33, 32>(self.pr_den.q.val());
            }
            self.pr_step.d.next = self.pr_step.q.val() + 1;
            if self.pr_step.q.val() == 31 {
                // The quotient is complete at this edge: store it, next one.
                self.pr_step.d.next = 0.into();
                self.pr_rem.d.next = 0.into();
                self.pr_q.d.next = 0.into();
                self.pr_idx.d.next = self.pr_idx.q.val() + 1;
                self.pr_num.d.next = self.cfg_max_incoming.val();
                self.pr_den.d.next = bit_cast::<32, 4>(self.pr_idx.q.val()) + 3;
                for k in 0..8 {
                    if self.pr_idx.q.val() == self.idx[k].val() {
                        self.dyn_window[k + 1].d.next = self.pr_q_next.val();
                    }
                }
                if self.pr_idx.q.val() == 7 {
                    // Next: the FIFO threshold.
                    self.pr_num.d.next = self.fifo_num.val();
                    self.pr_den.d.next = bit_cast::<32, 10>(self.cfg_grant_fifo_fraction.val());
                }
                if self.pr_idx.q.val() == 8 {
                    self.fifo_threshold.d.next = self.pr_q_next.val();
                    self.fsm.d.next = self.st_idle.val();
                    self.pass_owes.d.next = true;
                }
            }
        } else {
            self.fsm.d.next = self.st_idle.val();
        }

        // ---- the trees' update ports ----
        self.ctq_valid.d.next = self.ct_valid.val();
        self.ctq_index.d.next = self.ct_index.val();
        self.ctq_present.d.next = self.ct_present.val();
        self.ctq_rank.d.next = self.ct_rank.val();
        self.ctq_age.d.next = self.ct_age.val();
        self.otq_valid.d.next = self.ot_valid.val();
        self.otq_index.d.next = self.ot_index.val();
        self.otq_present.d.next = self.ot_present.val();
        self.otq_age.d.next = self.ot_age.val();

        // ---- grant queue bookkeeping ----
        if self.gq_push.val() {
            for k in 0..16 {
                if self.gq_wr.q.val() == self.idx16[k].val() {
                    self.gq[k].d.next = self.gq_push_data.val();
                }
            }
            self.gq_wr.d.next = self.gq_wr.q.val() + 1;
        }
        if self.gq_pop.val() {
            self.gq_rd.d.next = self.gq_rd.q.val() + 1;
        }
        if self.gq_push.val() & !self.gq_pop.val() {
            self.gq_count.d.next = self.gq_count.q.val() + 1;
        }
        if !self.gq_push.val() & self.gq_pop.val() {
            self.gq_count.d.next = self.gq_count.q.val() - 1;
        }

        // ---- the state RAM's write port, one edge behind the FSM ----
        self.wq_we.d.next = self.sr_we.val();
        self.wq_addr.d.next = self.sr_addr.val();
        self.wq_data.d.next = self.sr_data.val();
        self.state_ram.write_enable.next = self.wq_we.q.val();
        self.state_ram.write_address.next = self.wq_addr.q.val();
        self.state_ram.write_data.next = self.wq_data.q.val();
        // A read at the edge that makes that write returns the old entry:
        // the new one is taken from here instead (`st`).
        // (`byp_hit` is set beside each `read_address` above.)
        self.byp_data.d.next = self.wq_data.q.val();
        // The pass begins: from REFILL, or from READ2 for an update in place.
        if self.start_sweep.val() {
            self.sw_n.d.next = self.a_n.q.val();
            self.sw_window.d.next = self.window_now.val();
            self.sw_feed.d.next = 0.into();
            self.sw_feeding.d.next = true;
            self.sw_stop.d.next = false;
            self.sw_left.d.next = self.a_n.q.val();
            self.cleaned.d.next = false;
            self.fsm.d.next = self.st_sweep.val();
        }

        // ---- status ----
        self.total_incoming.next = self.total.q.val();
        self.active_count.next = self.a_n.q.val();
        self.idle.next = (self.fsm.q.val() == self.st_idle.val())
            & self.cfg_ok.q.val()
            & self.settled.val()
            & !self.wq_we.q.val();

        // ---- reset ----
        if self.reset.val() {
            self.fsm.d.next = self.st_idle.val();
            self.pass_owes.d.next = true;
            self.pass_capped.d.next = true;
            self.pass_ended.d.next = false;
            self.shadow.d.next = !self.cfg_now.val();
            self.a_n.d.next = 0.into();
            self.total.d.next = 0.into();
            self.srpt_granted.d.next = 0.into();
            self.birth_ctr.d.next = 0.into();
            self.gq_rd.d.next = 0.into();
            self.gq_wr.d.next = 0.into();
            self.gq_count.d.next = 0.into();
            self.sw_feeding.d.next = false;
            self.p1_valid.d.next = false;
            self.ctq_valid.d.next = false;
            self.otq_valid.d.next = false;
            self.wq_we.d.next = false;
            self.byp_hit.d.next = false;
        }
    }
}

#[cfg(test)]
mod tests {
    /// The reciprocal the target pipeline divides by 89 with.
    #[test]
    fn reciprocal_of_89_is_exact_over_the_range_used() {
        for z in 0u64..62_600 {
            assert_eq!((z * (65_536 + 28_719)) >> 23, z / 89, "z = {z}");
        }
        // y' = received + window clamped to 1,000,000, plus MAX_PAYLOAD - 1.
        assert!((1_000_000 + super::MAX_PAYLOAD as u64 - 1) >> 4 < 62_600);
    }
}

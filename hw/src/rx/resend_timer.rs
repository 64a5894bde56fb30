//! Resend timer: the receiver's half of loss recovery. Once per tick every
//! inbound message is visited; one silent for `resend_ticks` ticks gets a
//! RESEND for its first missing range, and another every `resend_interval`
//! ticks while the silence lasts (HomaModule's rule, the reference model's
//! `timer.rs`).
//!
//! DESIGN NOTES
//! ------------
//! Per RPC slot (`watch`, a RAM beside the RX engine's record): live, ticks
//! of silence, the silence at which the next RESEND is due (0: the first,
//! at `resend_ticks` as the register reads when it comes), and the range to
//! ask for. The RX engine writes the entry with every packet it takes
//! (silence 0, due 0, the range from the merged
//! record: [prefix, first gap's start), or [prefix, the sender's `incoming`)
//! when no gap is open: granted bytes only) and clears it when the message
//! is complete or forgotten.
//!
//! Lost GRANTs: an open range (no gap: it ends at the sender's `incoming`)
//! is asked up to what we granted, if that is more (`granted`, a RAM beside
//! `watch` holding each slot's last GRANT sent, zeroed by a new message's
//! first packet): the sender then knows a GRANT was lost and takes the
//! RESEND's end as granted, as HomaModule's sender does. Without it a
//! message whose last GRANT was lost waited for ever (its range empty): the
//! lossy 1 MB test in `card_rpc` found it.
//!
//! A sweep: on a tick, every slot that may be live in turn, one per cycle
//! (read, then decide and write back the next cycle): a live entry's
//! silence goes up by one; if it reaches the due mark and the range is not
//! empty, a RESEND is offered to the control sender (slot, offset, length)
//! and the mark moves to `resend_interval` ticks past the silence so far.
//!
//! Which slots may be live: slots come in 1,024 groups of 16, and a group's
//! bit in `groups` (1,024 flip-flops) is set whenever the engine writes a
//! live entry into it, and cleared by the sweep when it read all 16 entries
//! of the group dead and the engine wrote no live entry into the group
//! meanwhile (`touched`). A group whose bit is clear is skipped in one
//! cycle. The sweep reads the bits from a copy of the word it is in
//! (`cur_word`, shifted a group at a time, the next word loaded at the
//! word's end), so a group marked busy after its word was copied is
//! passed over this sweep: its entry was just written, and its silence
//! counts one tick slower, never faster. So a sweep costs 1,024 cycles plus 16 per group holding a live
//! message: 4.2 us at 250 MHz with a few dozen messages in flight, 68 us
//! with every slot live, against 65.5 us for every sweep when it visited
//! each slot (the first version). A tick shorter than a sweep waits for it
//! (one tick is remembered): under heavy occupancy every silence counts
//! slower than the tick says, never faster. Why groups and not a bit per
//! slot: a bit per slot skips to the next live slot at once but needs
//! 16,384 flip-flops with a set/clear decoder each (about 16k LUTs per
//! timer, the core has two) and a 256-way word mux; groups of 16 cost a
//! sixteenth of that and give up little while messages are few.
//!
//! Expiry: an entry silent for `timeout_ticks` (when not 0) is offered as
//! an expiry instead (`m_resend_expire`), and written back dead: the RX
//! engine forgets the message (its slot, bpages and grants reclaimed), as
//! HomaModule's timer frees an RPC whose peer stopped answering. Silence
//! counts whoever's turn it is: a message left waiting for our grants that
//! long expires too, as its sender's TX engine gives up on it after the same
//! silence (HomaModule resets the silence while the receiver holds things
//! up; the card's two sides could not agree on that without the grant
//! scheduler's view of every slot here).
//!
//! Races: the RX engine's write wins the RAM's one write port; an entry the
//! engine wrote in the cycle it was read is skipped this sweep (it has just
//! heard from its sender: silence 0), and nothing fires in a cycle the
//! engine writes. A RESEND or expiry that cannot be
//! offered at once (the output still taken, or the engine writing the RAM
//! that cycle) is replayed: the sweep steps back and reads the entry again,
//! so none waits for the next sweep (a flood's expiries go one per ~12
//! cycles, as fast as the RX engine takes them). An expiry on offer is withdrawn if the engine writes its
//! slot before taking it (the sender spoke, or the message completed, and
//! the slot may be another RPC's by then); so an expiry the engine takes
//! names a message silent since its entry was read.

use rust_hdl::prelude::*;

use crate::rx::engine::LEN_BITS;
use crate::rx::rpc_table::SLOT_BITS;

/// Entry: live [0], silence [8:1], due mark [16:9], range start [36:17],
/// range end [56:37], open (the end is the sender's `incoming`) [57].
const WATCH_BITS: usize = 58;
/// Slot groups of 16, 64 to a word of `groups`.
const GROUP_WORDS: usize = (1 << SLOT_BITS) / 16 / 64;
const LAST_WORD: usize = GROUP_WORDS - 1;

#[derive(LogicBlock)]
pub struct ResendTimer {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, bool>,
    /// One cycle per tick.
    pub tick: Signal<In, bool>,
    /// Ticks of silence before the first RESEND, and between RESENDs
    /// (HomaModule's resend_ticks, resend_interval); 0: never.
    pub cfg_resend_ticks: Signal<In, Bits<8>>,
    pub cfg_resend_interval: Signal<In, Bits<8>>,
    /// Ticks of silence after which a message expires (HomaModule's
    /// timeout_ticks); 0: never.
    pub cfg_timeout_ticks: Signal<In, Bits<8>>,
    /// The RX engine's writes: a packet taken (`live`, with the range to
    /// ask for next), or the message gone (`!live`).
    pub s_watch_valid: Signal<In, bool>,
    pub s_watch_slot: Signal<In, Bits<SLOT_BITS>>,
    pub s_watch_live: Signal<In, bool>,
    pub s_watch_from: Signal<In, Bits<LEN_BITS>>,
    pub s_watch_to: Signal<In, Bits<LEN_BITS>>,
    /// With a live write: the range's end is the sender's `incoming` (no
    /// gap), so it may reach what we granted; the write is the message's
    /// first (its `granted` starts at 0).
    pub s_watch_open: Signal<In, bool>,
    pub s_watch_new: Signal<In, bool>,
    /// GRANTs sent (a strobe): the slot and the offset granted.
    pub s_grant_valid: Signal<In, bool>,
    pub s_grant_slot: Signal<In, Bits<SLOT_BITS>>,
    pub s_grant_offset: Signal<In, Bits<LEN_BITS>>,
    /// RESENDs to send: the slot (its peer is the control sender's), the
    /// range.
    pub m_resend_valid: Signal<Out, bool>,
    pub m_resend_ready: Signal<In, bool>,
    pub m_resend_slot: Signal<Out, Bits<SLOT_BITS>>,
    pub m_resend_offset: Signal<Out, Bits<LEN_BITS>>,
    pub m_resend_length: Signal<Out, Bits<LEN_BITS>>,
    /// The entry's ticks of silence when it fired (saturating at 255).
    pub m_resend_silence: Signal<Out, Bits<8>>,
    /// Not a RESEND: the slot's message expired (offset and length unused).
    pub m_resend_expire: Signal<Out, bool>,
    /// RESENDs handed over, sweeps finished (both wrap).
    pub resends: Signal<Out, Bits<32>>,
    pub sweeps: Signal<Out, Bits<32>>,

    watch: RAM<Bits<WATCH_BITS>, SLOT_BITS>,
    granted: RAM<Bits<LEN_BITS>, SLOT_BITS>,
    /// The last GRANT seen, waiting for `granted`'s write port (a new
    /// message's zeroing goes first; GRANTs come 6 cycles apart at least).
    g_pending: DFF<bool>,
    g_slot: DFF<Bits<SLOT_BITS>>,
    g_offset: DFF<Bits<LEN_BITS>>,
    scanning: DFF<bool>,
    tick_pending: DFF<bool>,
    scan_index: DFF<Bits<SLOT_BITS>>,
    /// The slot whose entry the RAM shows now (read at the last edge).
    s1_valid: DFF<bool>,
    s1_slot: DFF<Bits<SLOT_BITS>>,
    /// The engine wrote `scan_index`'s slot in the cycle it was read.
    s1_stale: DFF<bool>,
    out_valid: DFF<bool>,
    out_slot: DFF<Bits<SLOT_BITS>>,
    out_offset: DFF<Bits<LEN_BITS>>,
    out_length: DFF<Bits<LEN_BITS>>,
    out_silence: DFF<Bits<8>>,
    out_expire: DFF<bool>,
    resends_count: DFF<Bits<32>>,
    sweeps_count: DFF<Bits<32>>,
    // ---- locals: the entry read ----
    e_live: Signal<Local, bool>,
    e_silent: Signal<Local, Bits<8>>,
    e_due: Signal<Local, Bits<8>>,
    e_from: Signal<Local, Bits<LEN_BITS>>,
    e_to: Signal<Local, Bits<LEN_BITS>>,
    e_open: Signal<Local, bool>,
    /// The range's end as asked: `e_to`, or for an open range what we
    /// granted if more.
    e_end: Signal<Local, Bits<LEN_BITS>>,
    silent_next: Signal<Local, Bits<8>>,
    due_next: Signal<Local, Bits<8>>,
    due_written: Signal<Local, Bits<8>>,
    /// The silence at which a RESEND is due for the entry read.
    threshold: Signal<Local, Bits<8>>,
    fire: Signal<Local, bool>,
    /// The entry read has been silent `timeout_ticks`: it expires (fires
    /// as an expiry) and is written back dead.
    expire: Signal<Local, bool>,
    /// The entry read is due a RESEND / an expiry.
    resend_due: Signal<Local, bool>,
    expire_due: Signal<Local, bool>,
    /// ... and cannot have it this cycle: it is read again.
    replay: Signal<Local, bool>,
    out_free: Signal<Local, bool>,
    /// After a reset, emptying every entry (`scan_index` walks them).
    clearing: DFF<bool>,
    /// Per group of 16 slots: it may hold a live entry (word w, bit b:
    /// group 64 w + b).
    groups: [DFF<Bits<64>>; GROUP_WORDS],
    /// The busy bits of the word `scan_index` is in, from its group on
    /// (bit 0: its group), and of the word after stage 1's (two cycles
    /// behind `scan_index`, loaded into `cur_word` at the word's end).
    cur_word: DFF<Bits<64>>,
    next_word: DFF<Bits<64>>,
    /// Stage 1's word.
    next_word_index: Signal<Local, Bits<4>>,
    /// The sweep moves to the next group this cycle (`cur_word` shifts, or
    /// at a word's end loads `next_word`).
    next_group: Signal<Local, bool>,
    /// The sweep skips the group `scan_index` starts this cycle.
    skip: Signal<Local, bool>,
    /// The group the entry in stage 1 belongs to: a live entry seen in it
    /// so far this sweep (`group_live_now`: with the entry now in stage 1);
    /// the engine wrote a live entry into it since its sweep began.
    group_live: DFF<bool>,
    group_live_now: Signal<Local, bool>,
    touched: DFF<bool>,
    /// The engine's write marks its group busy (`set_mask` in word
    /// `s_watch_slot >> 10`); the sweep finds stage 1's group idle
    /// (`clear_mask` in word `s1_slot >> 10`).
    set_group: Signal<Local, bool>,
    set_mask: Signal<Local, Bits<64>>,
    clear_group: Signal<Local, bool>,
    clear_mask: Signal<Local, Bits<64>>,
    one64: Constant<Bits<64>>,
    last_slot: Constant<Bits<SLOT_BITS>>,
    /// The first slot of the last group.
    last_group: Constant<Bits<SLOT_BITS>>,
    live_bit: Constant<Bits<WATCH_BITS>>,
    open_bit: Constant<Bits<WATCH_BITS>>,
}

impl Default for ResendTimer {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            tick: Default::default(),
            cfg_resend_ticks: Default::default(),
            cfg_resend_interval: Default::default(),
            s_watch_valid: Default::default(),
            s_watch_slot: Default::default(),
            s_watch_live: Default::default(),
            s_watch_from: Default::default(),
            s_watch_to: Default::default(),
            s_watch_open: Default::default(),
            s_watch_new: Default::default(),
            s_grant_valid: Default::default(),
            s_grant_slot: Default::default(),
            s_grant_offset: Default::default(),
            granted: Default::default(),
            g_pending: Default::default(),
            g_slot: Default::default(),
            g_offset: Default::default(),
            e_open: Default::default(),
            e_end: Default::default(),
            open_bit: Constant::new((1u64 << 57).to_bits()),
            m_resend_valid: Default::default(),
            m_resend_ready: Default::default(),
            m_resend_slot: Default::default(),
            m_resend_offset: Default::default(),
            m_resend_length: Default::default(),
            m_resend_silence: Default::default(),
            out_silence: Default::default(),
            out_expire: Default::default(),
            m_resend_expire: Default::default(),
            cfg_timeout_ticks: Default::default(),
            expire: Default::default(),
            resend_due: Default::default(),
            expire_due: Default::default(),
            replay: Default::default(),
            resends: Default::default(),
            sweeps: Default::default(),
            watch: Default::default(),
            scanning: Default::default(),
            tick_pending: Default::default(),
            scan_index: Default::default(),
            s1_valid: Default::default(),
            s1_slot: Default::default(),
            s1_stale: Default::default(),
            out_valid: Default::default(),
            out_slot: Default::default(),
            out_offset: Default::default(),
            out_length: Default::default(),
            resends_count: Default::default(),
            sweeps_count: Default::default(),
            e_live: Default::default(),
            e_silent: Default::default(),
            e_due: Default::default(),
            e_from: Default::default(),
            e_to: Default::default(),
            silent_next: Default::default(),
            due_next: Default::default(),
            due_written: Default::default(),
            threshold: Default::default(),
            fire: Default::default(),
            out_free: Default::default(),
            clearing: Default::default(),
            last_slot: Constant::new(((1u64 << SLOT_BITS) - 1).to_bits()),
            last_group: Constant::new(((1u64 << SLOT_BITS) - 16).to_bits()),
            live_bit: Constant::new(1u64.to_bits()),
            groups: Default::default(),
            cur_word: Default::default(),
            next_word: Default::default(),
            next_word_index: Default::default(),
            next_group: Default::default(),
            skip: Default::default(),
            group_live: Default::default(),
            group_live_now: Default::default(),
            touched: Default::default(),
            set_group: Default::default(),
            set_mask: Default::default(),
            clear_group: Default::default(),
            clear_mask: Default::default(),
            one64: Constant::new(1u64.to_bits()),
        }
    }
}

impl Logic for ResendTimer {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            scanning,
            tick_pending,
            scan_index,
            s1_valid,
            s1_slot,
            s1_stale,
            out_valid,
            out_slot,
            out_offset,
            out_length,
            out_silence,
            out_expire,
            resends_count,
            sweeps_count,
            clearing,
            group_live,
            touched,
            g_pending,
            g_slot,
            g_offset,
            cur_word,
            next_word
        );
        self.watch.read_clock.next = self.clock.val();
        self.watch.write_clock.next = self.clock.val();
        self.granted.read_clock.next = self.clock.val();
        self.granted.write_clock.next = self.clock.val();

        // ---- what we granted, per slot ----
        if self.s_grant_valid.val() {
            self.g_pending.d.next = true;
            self.g_slot.d.next = self.s_grant_slot.val();
            self.g_offset.d.next = self.s_grant_offset.val();
        }
        self.granted.write_enable.next = false;
        self.granted.write_address.next = self.g_slot.q.val();
        self.granted.write_data.next = self.g_offset.q.val();
        if self.s_watch_valid.val() & self.s_watch_live.val() & self.s_watch_new.val() {
            self.granted.write_enable.next = true;
            self.granted.write_address.next = self.s_watch_slot.val();
            self.granted.write_data.next = 0.into();
        } else if self.g_pending.q.val() {
            self.granted.write_enable.next = true;
            if !self.s_grant_valid.val() {
                self.g_pending.d.next = false;
            }
        }

        // ---- ticks and sweeps ----
        if self.tick.val() {
            self.tick_pending.d.next = true;
        }
        self.watch.read_address.next = self.scan_index.q.val();
        self.granted.read_address.next = self.scan_index.q.val();
        // Is the group `scan_index` is in busy? (A group starts at a
        // multiple of 16; only there is it skipped.) Its bit is `cur_word`'s
        // first: a group's bit is not looked up where it is kept (a 1,024-way
        // mux in front of `scan_index`'s adder was 23 LUT levels), the sweep
        // carries a copy of its word along.
        // The word after stage 1's, not after `scan_index`'s: after a
        // replay back across a word's end the two differ for a cycle, and
        // `next_word` must name the word that follows the one reread.
        self.next_word_index.next = self.s1_slot.q.val().get_bits::<4>(10);
        self.next_word.d.next = self.groups[0].q.val();
        for w in 0..LAST_WORD {
            if self.next_word_index.val().index() == w {
                self.next_word.d.next = self.groups[w + 1].q.val();
            }
        }
        self.skip.next = self.scanning.q.val()
            & !self.clearing.q.val()
            & (self.scan_index.q.val().get_bits::<4>(0) == 0)
            & !self.cur_word.q.val().get_bit(0);
        self.next_group.next = self.skip.val()
            | (self.scanning.q.val()
                & !self.clearing.q.val()
                & (self.scan_index.q.val().get_bits::<4>(0) == 15));
        if self.next_group.val() {
            self.cur_word.d.next = self.cur_word.q.val() >> 1;
            if self.scan_index.q.val().get_bits::<6>(4) == 63 {
                self.cur_word.d.next = self.next_word.q.val();
            }
        }
        self.s1_valid.d.next = self.scanning.q.val() & !self.skip.val();
        self.s1_slot.d.next = self.scan_index.q.val();
        self.s1_stale.d.next =
            self.s_watch_valid.val() & (self.s_watch_slot.val() == self.scan_index.q.val());
        if self.clearing.q.val() {
            self.scan_index.d.next = self.scan_index.q.val() + 1;
            if self.scan_index.q.val() == self.last_slot.val() {
                self.clearing.d.next = false;
            }
        } else if self.skip.val() {
            self.scan_index.d.next = self.scan_index.q.val() + 16;
            if self.scan_index.q.val() == self.last_group.val() {
                self.scanning.d.next = false;
            }
        } else if self.scanning.q.val() {
            self.scan_index.d.next = self.scan_index.q.val() + 1;
            if self.scan_index.q.val() == self.last_slot.val() {
                self.scanning.d.next = false;
            }
        } else if self.tick_pending.q.val()
            & ((self.cfg_resend_ticks.val() != 0) | (self.cfg_timeout_ticks.val() != 0))
        {
            self.tick_pending.d.next = false;
            self.scanning.d.next = true;
            self.scan_index.d.next = 0.into();
            self.cur_word.d.next = self.groups[0].q.val();
        }

        // ---- the entry read: one tick more of silence; due? ----
        self.e_live.next = self.watch.read_data.val().get_bit(0);
        self.e_silent.next = self.watch.read_data.val().get_bits::<8>(1);
        self.e_due.next = self.watch.read_data.val().get_bits::<8>(9);
        self.e_from.next = self.watch.read_data.val().get_bits::<LEN_BITS>(17);
        self.e_to.next = self.watch.read_data.val().get_bits::<LEN_BITS>(37);
        self.e_open.next = self.watch.read_data.val().get_bit(57);
        self.e_end.next = self.e_to.val();
        if self.e_open.val() & (self.granted.read_data.val() > self.e_to.val()) {
            self.e_end.next = self.granted.read_data.val();
        }
        self.silent_next.next = self.e_silent.val() + 1;
        if self.e_silent.val() == 0xff {
            self.silent_next.next = self.e_silent.val();
        }
        self.threshold.next = self.e_due.val();
        if self.e_due.val() == 0 {
            self.threshold.next = self.cfg_resend_ticks.val();
        }
        self.due_next.next = self.silent_next.val() + self.cfg_resend_interval.val();
        if (self.silent_next.val() + self.cfg_resend_interval.val()) < self.silent_next.val() {
            self.due_next.next = 0xff.into();
        }
        self.out_free.next = !self.out_valid.q.val() | self.m_resend_ready.val();
        self.expire_due.next = self.s1_valid.q.val()
            & !self.s1_stale.q.val()
            & self.e_live.val()
            & (self.cfg_timeout_ticks.val() != 0)
            & (self.silent_next.val() >= self.cfg_timeout_ticks.val());
        self.resend_due.next = self.s1_valid.q.val()
            & !self.s1_stale.q.val()
            & self.e_live.val()
            & (self.cfg_resend_ticks.val() != 0)
            & (self.silent_next.val() >= self.threshold.val())
            & (self.e_from.val() < self.e_end.val());
        // Due, but the output is taken or the engine holds the write port:
        // the entry is read again (the sweep waits on it).
        self.replay.next = (self.resend_due.val() | self.expire_due.val())
            & (!self.out_free.val() | self.s_watch_valid.val())
            & !self.clearing.q.val();
        self.expire.next = self.expire_due.val() & !self.replay.val();
        self.fire.next = (self.resend_due.val() | self.expire_due.val()) & !self.replay.val();

        // ---- the RAM's one write port: the engine's write first ----
        self.watch.write_enable.next = false;
        self.watch.write_address.next = self.s1_slot.q.val();
        // The write-back: one tick more of silence; the due mark moves on
        // if a RESEND goes now.
        self.due_written.next = self.e_due.val();
        if self.fire.val() {
            self.due_written.next = self.due_next.val();
        }
        self.watch.write_data.next = self.live_bit.val()
            | (bit_cast::<WATCH_BITS, 8>(self.silent_next.val()) << 1)
            | (bit_cast::<WATCH_BITS, 8>(self.due_written.val()) << 9)
            | (bit_cast::<WATCH_BITS, LEN_BITS>(self.e_from.val()) << 17)
            | (bit_cast::<WATCH_BITS, LEN_BITS>(self.e_to.val()) << 37);
        if self.e_open.val() {
            self.watch.write_data.next = self.watch.write_data.val() | self.open_bit.val();
        }
        if self.s1_valid.q.val() & !self.s1_stale.q.val() & self.e_live.val() & !self.replay.val() {
            self.watch.write_enable.next = true;
        }
        if self.expire.val() {
            self.watch.write_data.next = 0.into();
        }
        if self.s_watch_valid.val() {
            self.watch.write_enable.next = true;
            self.watch.write_address.next = self.s_watch_slot.val();
            self.watch.write_data.next =
                (bit_cast::<WATCH_BITS, LEN_BITS>(self.s_watch_from.val()) << 17)
                    | (bit_cast::<WATCH_BITS, LEN_BITS>(self.s_watch_to.val()) << 37);
            if !self.s_watch_live.val() {
                self.watch.write_data.next = 0.into();
            } else {
                self.watch.write_data.next = self.watch.write_data.val() | self.live_bit.val();
                if self.s_watch_open.val() {
                    self.watch.write_data.next =
                        self.watch.write_data.val() | self.live_bit.val() | self.open_bit.val();
                }
            }
            // The sweep's write-back loses this cycle: its slot is visited
            // again next sweep, one tick of silence short (a RESEND or
            // expiry due is replayed instead).
            self.fire.next = false;
            self.expire.next = false;
        }
        if self.clearing.q.val() {
            // After a reset: every entry emptied, one per cycle.
            self.watch.write_enable.next = true;
            self.watch.write_address.next = self.scan_index.q.val();
            self.watch.write_data.next = 0.into();
            self.fire.next = false;
            self.expire.next = false;
        }

        // ---- the RESEND or expiry on offer ----
        if self.m_resend_ready.val() {
            self.out_valid.d.next = false;
        }
        if self.out_expire.q.val()
            & self.s_watch_valid.val()
            & (self.s_watch_slot.val() == self.out_slot.q.val())
        {
            // The engine heard of the slot: the expiry is stale.
            self.out_valid.d.next = false;
        }
        if self.fire.val() {
            self.out_valid.d.next = true;
            self.out_slot.d.next = self.s1_slot.q.val();
            self.out_offset.d.next = self.e_from.val();
            self.out_length.d.next = self.e_end.val() - self.e_from.val();
            self.out_silence.d.next = self.silent_next.val();
            self.out_expire.d.next = self.expire.val();
            if !self.expire.val() {
                self.resends_count.d.next = self.resends_count.q.val() + 1;
            }
        }
        // ---- busy groups ----
        // Stage 1's group: live entries seen so far (from its first slot).
        self.group_live_now.next =
            self.group_live.q.val() | self.e_live.val() | self.s1_stale.q.val();
        if self.s1_slot.q.val().get_bits::<4>(0) == 0 {
            self.group_live_now.next = self.e_live.val() | self.s1_stale.q.val();
        }
        if self.s1_valid.q.val() {
            self.group_live.d.next = self.group_live_now.val();
        }
        // The engine's live writes mark their group, and tell a group being
        // swept (by `scan_index` or in stage 1) that it is not idle.
        self.set_group.next = self.s_watch_valid.val() & self.s_watch_live.val();
        self.set_mask.next = self.one64.val() << self.s_watch_slot.val().get_bits::<6>(4);
        self.touched.d.next = self.touched.q.val();
        if self.s1_valid.q.val() & (self.s1_slot.q.val().get_bits::<4>(0) == 0) {
            self.touched.d.next = false;
        }
        if self.set_group.val()
            & ((self.s_watch_slot.val().get_bits::<10>(4)
                == self.s1_slot.q.val().get_bits::<10>(4))
                | (self.s_watch_slot.val().get_bits::<10>(4)
                    == self.scan_index.q.val().get_bits::<10>(4)))
        {
            self.touched.d.next = true;
        }
        // Stage 1 holds its group's last slot: idle if nothing in it was
        // live and nothing was written live meanwhile.
        self.clear_group.next = self.s1_valid.q.val()
            & !self.replay.val()
            & (self.s1_slot.q.val().get_bits::<4>(0) == 15)
            & !self.group_live_now.val()
            & !self.touched.q.val();
        self.clear_mask.next = self.one64.val() << self.s1_slot.q.val().get_bits::<6>(4);
        for w in 0..GROUP_WORDS {
            self.groups[w].clock.next = self.clock.val();
            self.groups[w].d.next = self.groups[w].q.val();
            if self.clear_group.val() & (self.s1_slot.q.val().get_bits::<4>(10).index() == w) {
                self.groups[w].d.next = self.groups[w].q.val() & !self.clear_mask.val();
            }
            if self.set_group.val() & (self.s_watch_slot.val().get_bits::<4>(10).index() == w) {
                // (After the clear: a write in the very cycle wins.)
                self.groups[w].d.next = self.groups[w].q.val() | self.set_mask.val();
                if self.clear_group.val() & (self.s1_slot.q.val().get_bits::<4>(10).index() == w) {
                    self.groups[w].d.next =
                        (self.groups[w].q.val() & !self.clear_mask.val()) | self.set_mask.val();
                }
            }
            if self.reset.val() {
                self.groups[w].d.next = 0.into();
            }
        }

        // ---- the sweep's end, and replays ----
        if (self.s1_valid.q.val() & (self.s1_slot.q.val() == self.last_slot.val())
            | (self.skip.val() & (self.scan_index.q.val() == self.last_group.val())))
            & !self.replay.val()
        {
            self.sweeps_count.d.next = self.sweeps_count.q.val() + 1;
        }
        if self.replay.val() {
            self.scan_index.d.next = self.s1_slot.q.val();
            // Back to stage 1's slot: its group (busy: it was read) is the
            // one `scan_index` is in, or the one before.
            self.cur_word.d.next = self.cur_word.q.val();
            if self.scan_index.q.val().get_bits::<10>(4) != self.s1_slot.q.val().get_bits::<10>(4) {
                self.cur_word.d.next = (self.cur_word.q.val() << 1) | self.one64.val();
            }
            self.scanning.d.next = true;
            self.s1_valid.d.next = false;
            self.tick_pending.d.next = self.tick_pending.q.val() | self.tick.val();
        }
        self.m_resend_valid.next = self.out_valid.q.val();
        self.m_resend_slot.next = self.out_slot.q.val();
        self.m_resend_offset.next = self.out_offset.q.val();
        self.m_resend_length.next = self.out_length.q.val();
        self.m_resend_silence.next = self.out_silence.q.val();
        self.m_resend_expire.next = self.out_expire.q.val();
        self.resends.next = self.resends_count.q.val();
        self.sweeps.next = self.sweeps_count.q.val();

        if self.reset.val() {
            self.clearing.d.next = true;
            self.scan_index.d.next = 0.into();
            self.scanning.d.next = false;
            self.tick_pending.d.next = false;
            self.out_valid.d.next = false;
            self.resends_count.d.next = 0.into();
            self.sweeps_count.d.next = 0.into();
            self.g_pending.d.next = false;
        }
    }
}

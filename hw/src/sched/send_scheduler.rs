//! The sender's choice: which outbound message sends the next DATA packet.
//! HomaModule's pacer semantics as the reference model states them
//! (testbench/src/model/outgoing.rs, `SendQueue` and `choose_frame`), over
//! up to 16,384 outbound messages.
//!
//! DESIGN NOTES
//! ------------
//! Semantics: a message is eligible while it has granted bytes not yet sent.
//! Messages shorter than `throttle_min_bytes` (the "bypass" class) go first,
//! oldest first. Otherwise SRPT: fewest bytes left to send, ties to the
//! oldest; except that `pacer_fifo_fraction` per mille of the bytes go to the
//! oldest eligible SRPT message, as a byte credit: each packet sent by the
//! SRPT choice adds bytes * fraction / 1000 to `credit` (or clears it when
//! that message is itself the oldest), and when the credit covers a full
//! packet, the next packet goes to the oldest instead and costs one packet.
//!
//! Structure: two winner trees indexed by slot. `main_tree` holds every
//! eligible message with rank = 0 for the bypass class and bytes left for
//! the SRPT class: bytes left is at least 1 for an eligible message, so the
//! bypass class always wins, oldest first, and below it the SRPT order is
//! exact. `fifo_tree` holds the SRPT-class messages by age alone. The caller
//! (the TX engine) owns each message's state and reports every change as an
//! update {slot, eligible, bypass, bytes left, birth}; a pick waits for the
//! trees to settle (at most `winner_tree::LATENCY_CYCLES` after the last
//! update), then reads the roots. After sending the picked packet, the
//! caller reports the message's new state with `sent` and the packet's
//! payload bytes; the credit is charged once the trees have settled again
//! (the model decides on the oldest message after the update), with a
//! sequential division by 1000 (11 cycles) that runs while they settle.
//!
//! Timing of a pick: 1 cycle when the trees are settled, else up to 15. The
//! TX engine picks the next packet while the current one streams (a full
//! packet is 24 beats), so the trees settle in the shadow of the link.

use rust_hdl::prelude::*;

use super::winner_tree::WinnerTree;

/// Payload bytes of a full packet: what one FIFO turn costs in credit.
pub const PACKET_BYTES: u32 = 1424;

#[derive(LogicBlock)]
pub struct SendScheduler {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: no message eligible (the trees sweep for 16,384
    /// cycles; `s_upd_ready` and `s_pick_ready` are low meanwhile).
    pub reset: Signal<In, bool>,
    /// Per mille of bytes for the oldest message (HomaModule's default 50).
    pub cfg_pacer_fifo_fraction: Signal<In, Bits<10>>,

    // --- a message's state changed ---
    pub s_upd_valid: Signal<In, bool>,
    pub s_upd_ready: Signal<Out, bool>,
    pub s_upd_slot: Signal<In, Bits<14>>,
    /// It has granted bytes not yet sent.
    pub s_upd_eligible: Signal<In, bool>,
    /// Shorter than `throttle_min_bytes`.
    pub s_upd_bypass: Signal<In, bool>,
    /// Bytes not yet sent once (length - next offset), >= 1 when eligible.
    pub s_upd_bytes_left: Signal<In, Bits<20>>,
    pub s_upd_birth: Signal<In, Bits<32>>,
    /// This update follows sending a packet of the last pick, of
    /// `s_upd_sent_bytes` payload bytes: charge the FIFO credit.
    pub s_upd_sent: Signal<In, bool>,
    pub s_upd_sent_bytes: Signal<In, Bits<11>>,

    // --- the next packet's message ---
    pub s_pick_valid: Signal<In, bool>,
    pub s_pick_ready: Signal<Out, bool>,
    /// One cycle per pick: `m_pick_found` and the slot, or nothing eligible.
    pub m_pick_valid: Signal<Out, bool>,
    pub m_pick_found: Signal<Out, bool>,
    pub m_pick_slot: Signal<Out, Bits<14>>,
    /// The pick is the FIFO turn (the oldest), not SRPT.
    pub m_pick_fifo: Signal<Out, bool>,
    /// FIFO credit in bytes (for tests and counters).
    pub credit: Signal<Out, Bits<32>>,
    /// Nothing in progress and the trees settled.
    pub idle: Signal<Out, bool>,

    main_tree: WinnerTree,
    fifo_tree: WinnerTree,
    /// 0 idle, 1 picking (waiting for the trees), 2 charging (dividing,
    /// and waiting for the trees).
    fsm: DFF<Bits<2>>,
    credit_bytes: DFF<Bits<32>>,
    /// The last pick was the SRPT choice (not bypass, not FIFO): its `sent`
    /// update charges the credit.
    charge_pending: DFF<bool>,
    /// The slot of the last pick.
    picked: DFF<Bits<14>>,
    /// bytes * fraction, divided by 1000 one quotient bit per cycle.
    div_num: DFF<Bits<11>>,
    div_rem: DFF<Bits<11>>,
    div_q: DFF<Bits<11>>,
    div_step: DFF<Bits<5>>,
    div_q_next: Signal<Local, Bits<11>>,
    div_shift: Signal<Local, Bits<11>>,
    div_fits: Signal<Local, bool>,
    product: Signal<Local, Bits<32>>,
    settled: Signal<Local, bool>,
    upd_take: Signal<Local, bool>,
    pick_take: Signal<Local, bool>,
    /// The rank the main tree gets: 0 for bypass, else bytes left.
    upd_rank: Signal<Local, Bits<20>>,
    thousand: Constant<Bits<11>>,
    packet_bytes: Constant<Bits<32>>,
}

impl Default for SendScheduler {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            cfg_pacer_fifo_fraction: Default::default(),
            s_upd_valid: Default::default(),
            s_upd_ready: Default::default(),
            s_upd_slot: Default::default(),
            s_upd_eligible: Default::default(),
            s_upd_bypass: Default::default(),
            s_upd_bytes_left: Default::default(),
            s_upd_birth: Default::default(),
            s_upd_sent: Default::default(),
            s_upd_sent_bytes: Default::default(),
            s_pick_valid: Default::default(),
            s_pick_ready: Default::default(),
            m_pick_valid: Default::default(),
            m_pick_found: Default::default(),
            m_pick_slot: Default::default(),
            m_pick_fifo: Default::default(),
            credit: Default::default(),
            idle: Default::default(),
            main_tree: Default::default(),
            fifo_tree: Default::default(),
            fsm: Default::default(),
            credit_bytes: Default::default(),
            charge_pending: Default::default(),
            picked: Default::default(),
            div_num: Default::default(),
            div_rem: Default::default(),
            div_q: Default::default(),
            div_step: Default::default(),
            div_shift: Default::default(),
            div_q_next: Default::default(),
            div_fits: Default::default(),
            product: Default::default(),
            settled: Default::default(),
            upd_take: Default::default(),
            pick_take: Default::default(),
            upd_rank: Default::default(),
            thousand: Constant::new(1000u64.into()),
            packet_bytes: Constant::new((PACKET_BYTES as u64).into()),
        }
    }
}

impl Logic for SendScheduler {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            fsm,
            credit_bytes,
            charge_pending,
            picked,
            div_num,
            div_rem,
            div_q,
            div_step
        );
        clock!(self, clock, main_tree, fifo_tree);
        self.main_tree.reset.next = self.reset.val();
        self.fifo_tree.reset.next = self.reset.val();

        self.settled.next = self.main_tree.m_settled.val() & self.fifo_tree.m_settled.val();
        self.upd_take.next = (self.fsm.q.val() == 0)
            & self.s_upd_valid.val()
            & self.main_tree.s_ready.val()
            & !self.reset.val();
        self.pick_take.next = (self.fsm.q.val() == 0)
            & !self.s_upd_valid.val()
            & self.s_pick_valid.val()
            & self.main_tree.s_ready.val()
            & !self.reset.val();
        self.s_upd_ready.next =
            (self.fsm.q.val() == 0) & self.main_tree.s_ready.val() & !self.reset.val();
        self.s_pick_ready.next = self.pick_take.val();

        // ---- updates go to both trees ----
        self.upd_rank.next = self.s_upd_bytes_left.val();
        if self.s_upd_bypass.val() {
            self.upd_rank.next = 0.into();
        }
        self.main_tree.s_valid.next = self.upd_take.val();
        self.main_tree.s_index.next = self.s_upd_slot.val();
        self.main_tree.s_present.next = self.s_upd_eligible.val();
        self.main_tree.s_rank.next = self.upd_rank.val();
        self.main_tree.s_age.next = self.s_upd_birth.val();
        self.fifo_tree.s_valid.next = self.upd_take.val();
        self.fifo_tree.s_index.next = self.s_upd_slot.val();
        self.fifo_tree.s_present.next = self.s_upd_eligible.val() & !self.s_upd_bypass.val();
        self.fifo_tree.s_rank.next = 0.into();
        self.fifo_tree.s_age.next = self.s_upd_birth.val();

        // ---- the division of the charge by 1000 ----
        self.product.next = bit_cast::<16, 11>(self.s_upd_sent_bytes.val())
            * bit_cast::<16, 10>(self.cfg_pacer_fifo_fraction.val());
        self.div_shift.next =
            (self.div_rem.q.val() << 1) | bit_cast::<11, 1>(self.div_num.q.val().get_bits::<1>(10));
        self.div_fits.next = self.div_shift.val() >= self.thousand.val();
        self.div_q_next.next = self.div_q.q.val() << 1;
        if self.div_fits.val() {
            self.div_q_next.next = (self.div_q.q.val() << 1) | 1;
        }

        self.m_pick_valid.next = false;
        self.m_pick_found.next = false;
        self.m_pick_slot.next = self.main_tree.m_index.val();
        self.m_pick_fifo.next = false;
        if self.fsm.q.val() == 0 {
            if self.upd_take.val() & self.s_upd_sent.val() & self.charge_pending.q.val() {
                // The picked message's new state: charge once it has settled.
                // bytes * fraction < 2^21 and its top 10 bits are below 1000,
                // so they start as the remainder: 11 quotient bits remain.
                self.fsm.d.next = 2.into();
                self.div_num.d.next = self.product.val().get_bits::<11>(0);
                self.div_rem.d.next = self.product.val().get_bits::<11>(11);
                self.div_q.d.next = 0.into();
                self.div_step.d.next = 0.into();
            } else if self.upd_take.val() & self.s_upd_sent.val() {
                self.charge_pending.d.next = false;
            } else if self.pick_take.val() {
                self.fsm.d.next = 1.into();
            }
        } else if self.fsm.q.val() == 1 {
            if self.settled.val() {
                self.fsm.d.next = 0.into();
                self.m_pick_valid.next = true;
                self.m_pick_found.next = self.main_tree.m_present.val();
                self.charge_pending.d.next = false;
                self.picked.d.next = self.main_tree.m_index.val();
                if self.main_tree.m_present.val() & (self.main_tree.m_rank.val() != 0) {
                    // SRPT class: the FIFO turn when the credit covers a packet.
                    if (self.cfg_pacer_fifo_fraction.val() != 0)
                        & (self.credit_bytes.q.val() >= self.packet_bytes.val())
                        & self.fifo_tree.m_present.val()
                        & (self.fifo_tree.m_index.val() != self.main_tree.m_index.val())
                    {
                        self.m_pick_slot.next = self.fifo_tree.m_index.val();
                        self.m_pick_fifo.next = true;
                        self.picked.d.next = self.fifo_tree.m_index.val();
                        self.credit_bytes.d.next =
                            self.credit_bytes.q.val() - self.packet_bytes.val();
                    } else {
                        self.charge_pending.d.next = true;
                    }
                }
            }
        } else {
            // Charging: the division runs while the trees settle.
            if self.div_step.q.val() != 11 {
                self.div_num.d.next = self.div_num.q.val() << 1;
                self.div_rem.d.next = self.div_shift.val();
                self.div_q.d.next = self.div_q_next.val();
                if self.div_fits.val() {
                    self.div_rem.d.next = self.div_shift.val() - self.thousand.val();
                }
                self.div_step.d.next = self.div_step.q.val() + 1;
            } else if self.settled.val() {
                self.fsm.d.next = 0.into();
                self.charge_pending.d.next = false;
                if self.fifo_tree.m_present.val()
                    & (self.fifo_tree.m_index.val() != self.picked.q.val())
                {
                    self.credit_bytes.d.next =
                        self.credit_bytes.q.val() + bit_cast::<32, 11>(self.div_q.q.val());
                } else {
                    // The SRPT choice was the oldest: nobody is owed.
                    self.credit_bytes.d.next = 0.into();
                }
            }
        }
        self.credit.next = self.credit_bytes.q.val();
        self.idle.next =
            (self.fsm.q.val() == 0) & self.settled.val() & self.main_tree.s_ready.val();

        if self.reset.val() {
            self.fsm.d.next = 0.into();
            self.credit_bytes.d.next = 0.into();
            self.charge_pending.d.next = false;
        }
    }
}

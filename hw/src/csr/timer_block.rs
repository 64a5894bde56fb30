//! The timer register block: the tick (in ns, counted down in cycles here:
//! the tick's prescaler), HomaModule's retransmission tunables in ticks
//! (`regmap::timer`), and what the resend timer did.

use rust_hdl::prelude::*;

use crate::csr::tunables::TunableRegisters;
use crate::csr::RegisterBlockHeader;
use crate::regmap::{block_type, timer};

/// Tunable registers, in `timer::DEFAULTS` order.
const TUNABLES: usize = timer::DEFAULTS.len();

#[derive(LogicBlock)]
pub struct TimerBlock {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: every tunable to its default.
    pub reset: Signal<In, bool>,
    /// Byte offset within the block.
    pub offset: Signal<In, Bits<8>>,
    /// High when the CSR address falls inside this block.
    pub select: Signal<In, bool>,
    pub wr_en: Signal<In, bool>,
    pub wr_data: Signal<In, Bits<32>>,
    /// The addressed register, or 0 when not selected.
    pub rd_data: Signal<Out, Bits<32>>,
    /// A tick from outside the core (the core's `timer_tick` port), taken
    /// instead of the prescaler's while TICK_NS is 0.
    pub ext_tick: Signal<In, bool>,
    /// One cycle in every TICK_NS / 4 (the core's 250 MHz clock), or
    /// `ext_tick` registered while TICK_NS is 0.
    pub tick: Signal<Out, bool>,
    pub resend_ticks: Signal<Out, Bits<8>>,
    pub resend_interval: Signal<Out, Bits<8>>,
    pub timeout_ticks: Signal<Out, Bits<8>>,
    /// Status, read-only.
    pub resends_sent: Signal<In, Bits<32>>,
    pub sweeps: Signal<In, Bits<32>>,
    header: RegisterBlockHeader,
    /// In `timer::DEFAULTS` order.
    tunables: TunableRegisters<TUNABLES>,
    /// Cycles left to the next tick.
    countdown: DFF<Bits<22>>,
    at_resends_sent: Constant<Bits<8>>,
    at_sweeps: Constant<Bits<8>>,
}

impl Default for TimerBlock {
    fn default() -> Self {
        let order: Vec<u32> = timer::DEFAULTS.iter().map(|d| d.0).collect();
        assert_eq!(
            order,
            [
                timer::TICK_NS,
                timer::RESEND_TICKS,
                timer::RESEND_INTERVAL,
                timer::TIMEOUT_TICKS
            ],
            "the outputs below take the tunables in this order"
        );
        let c8 = |v: u32| Constant::new((v as u64).to_bits());
        // What a write is clamped to: the tick to 2^24 ns (the prescaler
        // counts 22 bits of 4 ns cycles; 1 to 7 ns tick every cycle, 0 takes
        // `ext_tick`);
        // ticks to 8 bits.
        let max_of = |reg: u32| match reg {
            timer::TICK_NS => 1 << 24,
            _ => 255,
        };
        Self {
            clock: Default::default(),
            reset: Default::default(),
            offset: Default::default(),
            select: Default::default(),
            wr_en: Default::default(),
            wr_data: Default::default(),
            rd_data: Default::default(),
            ext_tick: Default::default(),
            tick: Default::default(),
            resend_ticks: Default::default(),
            resend_interval: Default::default(),
            timeout_ticks: Default::default(),
            resends_sent: Default::default(),
            sweeps: Default::default(),
            header: RegisterBlockHeader::new(block_type::TIMER, timer::VERSION, timer::BASE),
            tunables: TunableRegisters::new(&timer::DEFAULTS, max_of),
            countdown: Default::default(),
            at_resends_sent: c8(timer::RESENDS_SENT),
            at_sweeps: c8(timer::SWEEPS),
        }
    }
}

impl Logic for TimerBlock {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, countdown);
        self.header.offset.next = self.offset.val();
        self.header.select.next = self.select.val();
        self.tunables.clock.next = self.clock.val();
        self.tunables.reset.next = self.reset.val();
        self.tunables.offset.next = self.offset.val();
        self.tunables.select.next = self.select.val();
        self.tunables.wr_en.next = self.wr_en.val();
        self.tunables.wr_data.next = self.wr_data.val();
        self.rd_data.next = self.header.rd_data.val() | self.tunables.rd_data.val();
        if self.select.val() {
            if self.offset.val() == self.at_resends_sent.val() {
                self.rd_data.next = self.resends_sent.val();
            }
            if self.offset.val() == self.at_sweeps.val() {
                self.rd_data.next = self.sweeps.val();
            }
        }
        // The prescaler: TICK_NS / 4 cycles per tick.
        self.tick.next = false;
        self.countdown.d.next = self.countdown.q.val() - 1;
        if self.countdown.q.val() == 0 {
            self.tick.next = true;
            self.countdown.d.next = self.tunables.value[0].val().get_bits::<22>(2) - 1;
            if self.tunables.value[0].val().get_bits::<22>(2) == 0 {
                self.countdown.d.next = 0.into();
            }
        }
        // TICK_NS 0: the prescaler stops and the ticks are the port's.
        if self.tunables.value[0].val() == 0 {
            self.tick.next = self.ext_tick.val();
            self.countdown.d.next = 0.into();
        }
        if self.reset.val() {
            self.countdown.d.next = 0.into();
        }
        // In `timer::DEFAULTS` order.
        self.resend_ticks.next = self.tunables.value[1].val().get_bits::<8>(0);
        self.resend_interval.next = self.tunables.value[2].val().get_bits::<8>(0);
        if self.tunables.value[2].val() == 0 {
            self.resend_interval.next = 1.into();
        }
        self.timeout_ticks.next = self.tunables.value[3].val().get_bits::<8>(0);
        if self.tunables.value[3].val() == 0 {
            self.timeout_ticks.next = 1.into();
        }
    }
}

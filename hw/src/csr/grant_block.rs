//! The grant register block: the grant scheduler's tunables (HomaModule's
//! names and defaults, `regmap::grant`) and what it is doing now.

use rust_hdl::prelude::*;

use crate::csr::tunables::TunableRegisters;
use crate::csr::RegisterBlockHeader;
use crate::regmap::{block_type, grant};

/// Tunable registers, in `grant::DEFAULTS` order.
const TUNABLES: usize = grant::DEFAULTS.len();

#[derive(LogicBlock)]
pub struct GrantBlock {
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
    /// The tunables, for the grant scheduler's `cfg_*` ports.
    pub max_incoming: Signal<Out, Bits<32>>,
    pub max_overcommit: Signal<Out, Bits<4>>,
    pub window: Signal<Out, Bits<32>>,
    pub max_sched_prio: Signal<Out, Bits<3>>,
    pub unsched_bytes: Signal<Out, Bits<20>>,
    pub grant_fifo_fraction: Signal<Out, Bits<10>>,
    pub fifo_grant_increment: Signal<Out, Bits<20>>,
    /// Status, read-only.
    pub total_incoming: Signal<In, Bits<32>>,
    pub active_count: Signal<In, Bits<4>>,
    pub grants_sent: Signal<In, Bits<32>>,
    header: RegisterBlockHeader,
    /// In `grant::DEFAULTS` order.
    tunables: TunableRegisters<TUNABLES>,
    at_total_incoming: Constant<Bits<8>>,
    at_active_count: Constant<Bits<8>>,
    at_grants_sent: Constant<Bits<8>>,
}

impl Default for GrantBlock {
    fn default() -> Self {
        let order: Vec<u32> = grant::DEFAULTS.iter().map(|d| d.0).collect();
        assert_eq!(
            order,
            [
                grant::MAX_INCOMING,
                grant::MAX_OVERCOMMIT,
                grant::WINDOW,
                grant::MAX_SCHED_PRIO,
                grant::UNSCHED_BYTES,
                grant::GRANT_FIFO_FRACTION,
                grant::FIFO_GRANT_INCREMENT
            ],
            "the outputs below take the tunables in this order"
        );
        let c8 = |v: u32| Constant::new((v as u64).to_bits());
        // Register widths on the scheduler's ports: what a write is clamped to.
        let max_of = |reg: u32| match reg {
            grant::MAX_OVERCOMMIT => 8,
            grant::MAX_SCHED_PRIO => 7,
            grant::UNSCHED_BYTES | grant::FIFO_GRANT_INCREMENT => (1 << 20) - 1,
            grant::GRANT_FIFO_FRACTION => 1000,
            // Byte counts: 2^31 - 1 is already far past any sense.
            _ => i32::MAX as u32,
        };
        Self {
            clock: Default::default(),
            reset: Default::default(),
            offset: Default::default(),
            select: Default::default(),
            wr_en: Default::default(),
            wr_data: Default::default(),
            rd_data: Default::default(),
            max_incoming: Default::default(),
            max_overcommit: Default::default(),
            window: Default::default(),
            max_sched_prio: Default::default(),
            unsched_bytes: Default::default(),
            grant_fifo_fraction: Default::default(),
            fifo_grant_increment: Default::default(),
            total_incoming: Default::default(),
            active_count: Default::default(),
            grants_sent: Default::default(),
            header: RegisterBlockHeader::new(block_type::GRANT, grant::VERSION, grant::BASE),
            tunables: TunableRegisters::new(&grant::DEFAULTS, max_of),
            at_total_incoming: c8(grant::TOTAL_INCOMING),
            at_active_count: c8(grant::ACTIVE_COUNT),
            at_grants_sent: c8(grant::GRANTS_SENT),
        }
    }
}

impl Logic for GrantBlock {
    #[hdl_gen]
    fn update(&mut self) {
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
            if self.offset.val() == self.at_total_incoming.val() {
                self.rd_data.next = self.total_incoming.val();
            }
            if self.offset.val() == self.at_active_count.val() {
                self.rd_data.next = bit_cast::<32, 4>(self.active_count.val());
            }
            if self.offset.val() == self.at_grants_sent.val() {
                self.rd_data.next = self.grants_sent.val();
            }
        }
        // In `grant::DEFAULTS` order.
        self.max_incoming.next = self.tunables.value[0].val();
        self.max_overcommit.next = self.tunables.value[1].val().get_bits::<4>(0);
        if self.tunables.value[1].val() == 0 {
            self.max_overcommit.next = 1.into();
        }
        self.window.next = self.tunables.value[2].val();
        self.max_sched_prio.next = self.tunables.value[3].val().get_bits::<3>(0);
        self.unsched_bytes.next = self.tunables.value[4].val().get_bits::<20>(0);
        self.grant_fifo_fraction.next = self.tunables.value[5].val().get_bits::<10>(0);
        self.fifo_grant_increment.next = self.tunables.value[6].val().get_bits::<20>(0);
    }
}

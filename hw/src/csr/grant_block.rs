//! The grant register block: the grant scheduler's tunables (HomaModule's
//! names and defaults, `regmap::grant`) and what it is doing now.

use rust_hdl::prelude::*;

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
    value: [DFF<Bits<32>>; TUNABLES],
    /// The value written, clamped to what its register holds.
    written: [Signal<Local, Bits<32>>; TUNABLES],
    at: [Constant<Bits<8>>; TUNABLES],
    default: [Constant<Bits<32>>; TUNABLES],
    /// Largest value each tunable takes.
    max: [Constant<Bits<32>>; TUNABLES],
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
        let c32 = |v: u32| Constant::new((v as u64).to_bits());
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
            value: Default::default(),
            written: Default::default(),
            at: std::array::from_fn(|i| c8(grant::DEFAULTS[i].0)),
            default: std::array::from_fn(|i| c32(grant::DEFAULTS[i].1)),
            max: std::array::from_fn(|i| c32(max_of(grant::DEFAULTS[i].0))),
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
        self.rd_data.next = self.header.rd_data.val();
        for i in 0..TUNABLES {
            self.value[i].clock.next = self.clock.val();
            self.value[i].d.next = self.value[i].q.val();
            self.written[i].next = self.wr_data.val();
            if self.wr_data.val() > self.max[i].val() {
                self.written[i].next = self.max[i].val();
            }
            if self.select.val() & self.wr_en.val() & (self.offset.val() == self.at[i].val()) {
                self.value[i].d.next = self.written[i].val();
            }
            if self.reset.val() {
                self.value[i].d.next = self.default[i].val();
            }
            if self.select.val() & (self.offset.val() == self.at[i].val()) {
                self.rd_data.next = self.value[i].q.val();
            }
        }
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
        self.max_incoming.next = self.value[0].q.val();
        self.max_overcommit.next = self.value[1].q.val().get_bits::<4>(0);
        if self.value[1].q.val() == 0 {
            self.max_overcommit.next = 1.into();
        }
        self.window.next = self.value[2].q.val();
        self.max_sched_prio.next = self.value[3].q.val().get_bits::<3>(0);
        self.unsched_bytes.next = self.value[4].q.val().get_bits::<20>(0);
        self.grant_fifo_fraction.next = self.value[5].q.val().get_bits::<10>(0);
        self.fifo_grant_increment.next = self.value[6].q.val().get_bits::<20>(0);
    }
}

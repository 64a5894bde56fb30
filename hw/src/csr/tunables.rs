//! A register block's tunables: `N` 32-bit registers, each at its own offset
//! with a default that reset restores, written by the host (a value above the
//! register's maximum is clamped to it, so the block's narrower outputs
//! never see a value they cannot hold) and read back as stored.
//!
//! The block that holds them ORs `rd_data` into its own (zero unless a
//! tunable is addressed) and narrows each `value` to its port.

use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct TunableRegisters<const N: usize> {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: every register to its default.
    pub reset: Signal<In, bool>,
    /// Byte offset within the block.
    pub offset: Signal<In, Bits<8>>,
    /// High when the CSR address falls inside the block.
    pub select: Signal<In, bool>,
    pub wr_en: Signal<In, bool>,
    pub wr_data: Signal<In, Bits<32>>,
    /// The addressed register, or 0 when none is.
    pub rd_data: Signal<Out, Bits<32>>,
    /// Each register's stored value, in the order given to `new`.
    pub value: [Signal<Out, Bits<32>>; N],
    stored: [DFF<Bits<32>>; N],
    /// The value written, clamped to the register's maximum.
    written: [Signal<Local, Bits<32>>; N],
    at: [Constant<Bits<8>>; N],
    default: [Constant<Bits<32>>; N],
    /// Largest value each register takes.
    max: [Constant<Bits<32>>; N],
}

impl<const N: usize> TunableRegisters<N> {
    /// Registers at `defaults[i].0` (byte offset in the block) with default
    /// `defaults[i].1`; `max_of(offset)` is the largest value a write leaves.
    pub fn new(defaults: &[(u32, u32)], max_of: impl Fn(u32) -> u32) -> Self {
        assert_eq!(defaults.len(), N, "one default per register");
        let c8 = |v: u32| Constant::new((v as u64).to_bits());
        let c32 = |v: u32| Constant::new((v as u64).to_bits());
        Self {
            clock: Default::default(),
            reset: Default::default(),
            offset: Default::default(),
            select: Default::default(),
            wr_en: Default::default(),
            wr_data: Default::default(),
            rd_data: Default::default(),
            value: std::array::from_fn(|_| Default::default()),
            stored: std::array::from_fn(|_| Default::default()),
            written: std::array::from_fn(|_| Default::default()),
            at: std::array::from_fn(|i| c8(defaults[i].0)),
            default: std::array::from_fn(|i| c32(defaults[i].1)),
            max: std::array::from_fn(|i| c32(max_of(defaults[i].0))),
        }
    }
}

impl<const N: usize> Logic for TunableRegisters<N> {
    #[hdl_gen]
    fn update(&mut self) {
        self.rd_data.next = 0.into();
        for i in 0..N {
            self.stored[i].clock.next = self.clock.val();
            self.stored[i].d.next = self.stored[i].q.val();
            self.written[i].next = self.wr_data.val();
            if self.wr_data.val() > self.max[i].val() {
                self.written[i].next = self.max[i].val();
            }
            if self.select.val() & self.wr_en.val() & (self.offset.val() == self.at[i].val()) {
                self.stored[i].d.next = self.written[i].val();
            }
            if self.reset.val() {
                self.stored[i].d.next = self.default[i].val();
            }
            if self.select.val() & (self.offset.val() == self.at[i].val()) {
                self.rd_data.next = self.stored[i].q.val();
            }
            self.value[i].next = self.stored[i].q.val();
        }
    }
}

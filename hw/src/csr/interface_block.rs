//! The interface register block: the card's MAC and IPv4 addresses, which the
//! TX path writes into every header it builds, set by the driver at
//! bring-up; and the card reset (RESET), which the core carries out.

use rust_hdl::prelude::*;

use crate::csr::RegisterBlockHeader;
use crate::regmap::{block_type, interface};

#[derive(LogicBlock)]
pub struct InterfaceBlock {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: addresses to 0.
    pub reset: Signal<In, bool>,
    /// Byte offset within the block.
    pub offset: Signal<In, Bits<8>>,
    /// High when the CSR address falls inside this block.
    pub select: Signal<In, bool>,
    pub wr_en: Signal<In, bool>,
    pub wr_data: Signal<In, Bits<32>>,
    /// The addressed register, or 0 when not selected.
    pub rd_data: Signal<Out, Bits<32>>,
    /// The card's MAC address, byte 0 (first on the wire) in bits 47:40.
    pub mac: Signal<Out, Bits<48>>,
    /// The card's IPv4 address.
    pub ipv4: Signal<Out, Bits<32>>,
    /// High for the cycle RESET_MAGIC is written to RESET.
    pub reset_request: Signal<Out, bool>,
    /// From the core: a card reset is under way (RESET reads it).
    pub reset_busy: Signal<In, bool>,
    header: RegisterBlockHeader,
    mac_lo: DFF<Bits<32>>,
    mac_hi: DFF<Bits<32>>,
    ip: DFF<Bits<32>>,
    offset_mac_lo: Constant<Bits<8>>,
    offset_mac_hi: Constant<Bits<8>>,
    offset_ipv4: Constant<Bits<8>>,
    offset_reset: Constant<Bits<8>>,
    reset_magic: Constant<Bits<32>>,
}

impl Default for InterfaceBlock {
    fn default() -> Self {
        let c = |v: u32| Constant::new((v as u64).to_bits());
        Self {
            clock: Default::default(),
            reset: Default::default(),
            offset: Default::default(),
            select: Default::default(),
            wr_en: Default::default(),
            wr_data: Default::default(),
            rd_data: Default::default(),
            mac: Default::default(),
            ipv4: Default::default(),
            reset_request: Default::default(),
            reset_busy: Default::default(),
            header: RegisterBlockHeader::new(
                block_type::INTERFACE,
                interface::VERSION,
                interface::BASE,
            ),
            mac_lo: Default::default(),
            mac_hi: Default::default(),
            ip: Default::default(),
            offset_mac_lo: c(interface::MAC_LO),
            offset_mac_hi: c(interface::MAC_HI),
            offset_ipv4: c(interface::IPV4),
            offset_reset: c(interface::RESET),
            reset_magic: Constant::new((interface::RESET_MAGIC as u64).to_bits()),
        }
    }
}

impl Logic for InterfaceBlock {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, mac_lo, mac_hi, ip);
        self.header.offset.next = self.offset.val();
        self.header.select.next = self.select.val();
        self.reset_request.next = self.select.val()
            & self.wr_en.val()
            & (self.offset.val() == self.offset_reset.val())
            & (self.wr_data.val() == self.reset_magic.val());
        if self.select.val() & self.wr_en.val() {
            if self.offset.val() == self.offset_mac_lo.val() {
                self.mac_lo.d.next = self.wr_data.val();
            }
            if self.offset.val() == self.offset_mac_hi.val() {
                self.mac_hi.d.next = self.wr_data.val() & 0xffff;
            }
            if self.offset.val() == self.offset_ipv4.val() {
                self.ip.d.next = self.wr_data.val();
            }
        }
        if self.reset.val() {
            self.mac_lo.d.next = 0.into();
            self.mac_hi.d.next = 0.into();
            self.ip.d.next = 0.into();
        }
        self.rd_data.next = self.header.rd_data.val();
        if self.select.val() {
            if self.offset.val() == self.offset_mac_lo.val() {
                self.rd_data.next = self.mac_lo.q.val();
            }
            if self.offset.val() == self.offset_mac_hi.val() {
                self.rd_data.next = self.mac_hi.q.val();
            }
            if self.offset.val() == self.offset_ipv4.val() {
                self.rd_data.next = self.ip.q.val();
            }
            if self.offset.val() == self.offset_reset.val() {
                self.rd_data.next = 0.into();
                if self.reset_busy.val() {
                    self.rd_data.next = 1.into();
                }
            }
        }
        // Wire order to a number: byte 0 is the most significant.
        self.mac.next = (bit_cast::<48, 8>(self.mac_lo.q.val().get_bits::<8>(0)) << 40)
            | (bit_cast::<48, 8>(self.mac_lo.q.val().get_bits::<8>(8)) << 32)
            | (bit_cast::<48, 8>(self.mac_lo.q.val().get_bits::<8>(16)) << 24)
            | (bit_cast::<48, 8>(self.mac_lo.q.val().get_bits::<8>(24)) << 16)
            | (bit_cast::<48, 8>(self.mac_hi.q.val().get_bits::<8>(0)) << 8)
            | bit_cast::<48, 8>(self.mac_hi.q.val().get_bits::<8>(8));
        self.ipv4.next = self.ip.q.val();
    }
}

//! The board register block (`crate::regmap`) and the split of the CSR port
//! between it and the core: an access with address bit 23 set is the board's,
//! every other goes to the core. Reads answer one cycle later, as the core's
//! do, so the CSR master sees one protocol.
//!
//! The identity words (board, part, build time, commit) come in on a port,
//! `id_words`: the board top level ties it to its build's constants
//! (`BoardLogic`), and the simulated card's board drives it from the image it
//! "booted" (`homa_hw_sim::board`), so a reboot into a new image shows a new
//! identity through this same RTL.

use rust_hdl::prelude::*;

use crate::regmap::{self, CONSTANT_WORDS, ID_BITS};
use crate::top::flash_spi::FlashSpi;

// The literals in `update` (RustHDL cannot use Rust constants there).
const _: () = assert!(
    regmap::BOARD_NAME == 0x0c
        && regmap::REBOOT == 0x48
        && regmap::MAC_STATUS == 0x4c
        && regmap::FLASH_CONTROL == 0x50
        && regmap::FLASH_DATA == 0x54
);

#[derive(LogicBlock)]
pub struct BoardRegs {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, bool>,
    pub csr_addr: Signal<In, Bits<24>>,
    pub csr_wr_data: Signal<In, Bits<32>>,
    pub csr_wr_en: Signal<In, bool>,
    pub csr_rd_en: Signal<In, bool>,
    /// The identity registers' values, BOARD_NAME first: word i in bits
    /// 32i+31:32i (`regmap::id_bits`).
    pub id_words: Signal<In, Bits<ID_BITS>>,
    /// The address is the board's this cycle: keep the access from the core.
    pub select: Signal<Out, bool>,
    pub rd_data: Signal<Out, Bits<32>>,
    pub rd_valid: Signal<Out, bool>,
    /// Level, set by a write of REBOOT_MAGIC, cleared by reset only.
    pub reboot: Signal<Out, bool>,
    pub mac_aligned: Signal<In, bool>,
    /// The flash's SPI pins, to STARTUPE3 (`FlashSpi`).
    pub flash_sck: Signal<Out, bool>,
    pub flash_sck_ts: Signal<Out, bool>,
    pub flash_cs_n: Signal<Out, bool>,
    pub flash_cs_ts: Signal<Out, bool>,
    pub flash_dq_o: Signal<Out, Bits<4>>,
    pub flash_dq_ts: Signal<Out, Bits<4>>,
    pub flash_dq_i: Signal<In, Bits<4>>,
    flash: FlashSpi,
    offset: Signal<Local, Bits<8>>,
    data: DFF<Bits<32>>,
    valid: DFF<bool>,
    reboot_q: DFF<bool>,
    header: [Constant<Bits<32>>; 3],
    magic: Constant<Bits<32>>,
}

impl Default for BoardRegs {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            csr_addr: Default::default(),
            csr_wr_data: Default::default(),
            csr_wr_en: Default::default(),
            csr_rd_en: Default::default(),
            id_words: Default::default(),
            select: Default::default(),
            rd_data: Default::default(),
            rd_valid: Default::default(),
            reboot: Default::default(),
            mac_aligned: Default::default(),
            flash_sck: Default::default(),
            flash_sck_ts: Default::default(),
            flash_cs_n: Default::default(),
            flash_cs_ts: Default::default(),
            flash_dq_o: Default::default(),
            flash_dq_ts: Default::default(),
            flash_dq_i: Default::default(),
            flash: Default::default(),
            offset: Default::default(),
            data: Default::default(),
            valid: Default::default(),
            reboot_q: Default::default(),
            header: [
                Constant::new(regmap::TYPE.to_bits()),
                Constant::new(regmap::VERSION.to_bits()),
                Constant::new(0u32.to_bits()),
            ],
            magic: Constant::new(regmap::REBOOT_MAGIC.to_bits()),
        }
    }
}

impl Logic for BoardRegs {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, data, valid, reboot_q);
        // The block spans 256 bytes at BASE; the whole upper half decodes to it.
        self.select.next = self.csr_addr.val().get_bit(23);
        self.offset.next = self.csr_addr.val().get_bits::<8>(0);
        self.data.d.next = 0.into();
        for i in 0..3 {
            if self.offset.val().index() == 4 * i {
                self.data.d.next = self.header[i].val();
            }
        }
        for i in 0..CONSTANT_WORDS {
            if self.offset.val().index() == 0x0c + 4 * i {
                self.data.d.next = self.id_words.val().get_bits::<32>(32 * i);
            }
        }
        if self.offset.val().index() == 0x4c {
            self.data.d.next = bit_cast::<32, 1>(self.mac_aligned.val().into());
        }
        if self.offset.val().index() == 0x50 {
            self.data.d.next = self.flash.control.val();
        }
        if self.offset.val().index() == 0x54 {
            self.data.d.next = self.flash.data.val();
        }
        self.flash.clock.next = self.clock.val();
        self.flash.reset.next = self.reset.val();
        self.flash.wr_data.next = self.csr_wr_data.val();
        self.flash.control_wr.next =
            self.csr_wr_en.val() & self.select.val() & (self.offset.val().index() == 0x50);
        self.flash.data_wr.next =
            self.csr_wr_en.val() & self.select.val() & (self.offset.val().index() == 0x54);
        self.flash.dq_i.next = self.flash_dq_i.val();
        self.flash_sck.next = self.flash.sck.val();
        self.flash_sck_ts.next = self.flash.sck_ts.val();
        self.flash_cs_n.next = self.flash.cs_n.val();
        self.flash_cs_ts.next = self.flash.cs_ts.val();
        self.flash_dq_o.next = self.flash.dq_o.val();
        self.flash_dq_ts.next = self.flash.dq_ts.val();
        self.valid.d.next = self.csr_rd_en.val() & self.select.val();
        if self.csr_wr_en.val()
            & self.select.val()
            & (self.offset.val().index() == 0x48)
            & (self.csr_wr_data.val() == self.magic.val())
        {
            self.reboot_q.d.next = true;
        }
        if self.reset.val() {
            self.valid.d.next = false;
            self.reboot_q.d.next = false;
        }
        self.rd_data.next = self.data.q.val();
        self.rd_valid.next = self.valid.q.val();
        self.reboot.next = self.reboot_q.q.val();
    }
}

//! The board logic a simulated card carries (`homa_hw_sim::board`): the board
//! register block and the IPROG sender, the same RTL as on a board, on one
//! clock. Board tops clock the IPROG sender from the 125 MHz init clock behind
//! a two-flop synchroniser; here it shares the core's clock, which the
//! synchroniser does not mind. The flash pins and the ICAP port are top-level
//! ports, served by the simulator's flash chip and configuration models.

use rust_hdl::prelude::*;

use crate::regmap::ID_BITS;
use crate::top::board_regs::BoardRegs;
use crate::top::iprog::Iprog;

#[derive(LogicBlock, Default)]
pub struct BoardSim {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, bool>,
    pub csr_addr: Signal<In, Bits<24>>,
    pub csr_wr_data: Signal<In, Bits<32>>,
    pub csr_wr_en: Signal<In, bool>,
    pub csr_rd_en: Signal<In, bool>,
    pub csr_select: Signal<Out, bool>,
    pub csr_rd_data: Signal<Out, Bits<32>>,
    pub csr_rd_valid: Signal<Out, bool>,
    /// The identity of the image the simulated FPGA booted.
    pub id_words: Signal<In, Bits<ID_BITS>>,
    pub mac_aligned: Signal<In, bool>,
    pub flash_sck: Signal<Out, bool>,
    pub flash_sck_ts: Signal<Out, bool>,
    pub flash_cs_n: Signal<Out, bool>,
    pub flash_cs_ts: Signal<Out, bool>,
    pub flash_dq_o: Signal<Out, Bits<4>>,
    pub flash_dq_ts: Signal<Out, Bits<4>>,
    pub flash_dq_i: Signal<In, Bits<4>>,
    pub icap_avail: Signal<In, bool>,
    pub icap_csib: Signal<Out, bool>,
    pub icap_rdwrb: Signal<Out, bool>,
    pub icap_i: Signal<Out, Bits<32>>,
    regs: BoardRegs,
    iprog: Iprog,
}

impl Logic for BoardSim {
    #[hdl_gen]
    fn update(&mut self) {
        self.regs.clock.next = self.clock.val();
        self.regs.reset.next = self.reset.val();
        self.regs.csr_addr.next = self.csr_addr.val();
        self.regs.csr_wr_data.next = self.csr_wr_data.val();
        self.regs.csr_wr_en.next = self.csr_wr_en.val();
        self.regs.csr_rd_en.next = self.csr_rd_en.val();
        self.regs.id_words.next = self.id_words.val();
        self.regs.mac_aligned.next = self.mac_aligned.val();
        self.regs.flash_dq_i.next = self.flash_dq_i.val();
        self.csr_select.next = self.regs.select.val();
        self.csr_rd_data.next = self.regs.rd_data.val();
        self.csr_rd_valid.next = self.regs.rd_valid.val();
        self.flash_sck.next = self.regs.flash_sck.val();
        self.flash_sck_ts.next = self.regs.flash_sck_ts.val();
        self.flash_cs_n.next = self.regs.flash_cs_n.val();
        self.flash_cs_ts.next = self.regs.flash_cs_ts.val();
        self.flash_dq_o.next = self.regs.flash_dq_o.val();
        self.flash_dq_ts.next = self.regs.flash_dq_ts.val();
        self.iprog.clock.next = self.clock.val();
        self.iprog.reset.next = self.reset.val();
        self.iprog.reboot.next = self.regs.reboot.val();
        self.iprog.icap_avail.next = self.icap_avail.val();
        self.icap_csib.next = self.iprog.icap_csib.val();
        self.icap_rdwrb.next = self.iprog.icap_rdwrb.val();
        self.icap_i.next = self.iprog.icap_i.val();
    }
}

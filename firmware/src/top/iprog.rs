//! Reboot from flash: when `reboot` rises (from the core's clock domain,
//! synchronised here), and the ICAP is available, write the IPROG command
//! sequence to ICAPE3 (UG570, BOARDS.md §3.6): dummy, sync word, NOOP, write
//! CMD <- IPROG, NOOP. WBSTAR is not written: the FPGA reloads from address 0,
//! the golden image, whose own header jumps to the user image (Corundum does
//! the same; writing WBSTAR directly needs its SPIx4 address encoding, which
//! BOARDS.md has not confirmed). ICAP data is bit-reversed within each byte
//! (UG570 "Parallel Bus Bit Order"), done here on the constants.
//!
//! Runs on the 125 MHz init clock (ICAPE3 is not for 250 MHz).

use rust_hdl::prelude::*;

/// The words, in order, before bit reversal.
pub const IPROG_WORDS: [u32; 5] = [
    0xFFFF_FFFF,
    0xAA99_5566,
    0x2000_0000,
    0x3000_8001,
    0x0000_000F,
];
/// Then one NOOP.
pub const NOOP: u32 = 0x2000_0000;
const WORDS: usize = 6;

/// Reverses the bits within each byte (ICAP bus order).
pub fn icap_order(w: u32) -> u32 {
    u32::from_le_bytes(w.to_le_bytes().map(|b| b.reverse_bits()))
}

#[derive(LogicBlock)]
pub struct Iprog {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, bool>,
    /// From another clock domain: a level that stays up.
    pub reboot: Signal<In, bool>,
    pub icap_avail: Signal<In, bool>,
    pub icap_csib: Signal<Out, bool>,
    pub icap_rdwrb: Signal<Out, bool>,
    pub icap_i: Signal<Out, Bits<32>>,
    sync1: DFF<bool>,
    sync2: DFF<bool>,
    /// The sequence went out; it goes once per reset.
    done: DFF<bool>,
    /// Words sent so far; WORDS: done (until reset).
    sent: DFF<Bits<3>>,
    sending: DFF<bool>,
    words: [Constant<Bits<32>>; WORDS],
}

impl Default for Iprog {
    fn default() -> Self {
        let mut w = IPROG_WORDS.to_vec();
        w.push(NOOP);
        Self {
            clock: Default::default(),
            reset: Default::default(),
            reboot: Default::default(),
            icap_avail: Default::default(),
            icap_csib: Default::default(),
            icap_rdwrb: Default::default(),
            icap_i: Default::default(),
            sync1: Default::default(),
            sync2: Default::default(),
            done: Default::default(),
            sent: Default::default(),
            sending: Default::default(),
            words: std::array::from_fn(|i| Constant::new(icap_order(w[i]).to_bits())),
        }
    }
}

impl Logic for Iprog {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, sync1, sync2, done, sent, sending);
        self.sync1.d.next = self.reboot.val();
        self.sync2.d.next = self.sync1.q.val();
        self.icap_csib.next = true;
        self.icap_rdwrb.next = false;
        self.icap_i.next = self.words[0].val();
        if self.sending.q.val() {
            self.icap_csib.next = false;
            for i in 0..WORDS {
                if self.sent.q.val().index() == i {
                    self.icap_i.next = self.words[i].val();
                }
            }
            self.sent.d.next = self.sent.q.val() + 1;
            if self.sent.q.val().index() == 5 {
                self.sending.d.next = false;
                self.done.d.next = true;
            }
        } else if self.sync2.q.val() & !self.done.q.val() & self.icap_avail.val() {
            self.sending.d.next = true;
            self.sent.d.next = 0.into();
        }
        if self.reset.val() {
            self.sending.d.next = false;
            self.sent.d.next = 0.into();
            self.sync1.d.next = false;
            self.sync2.d.next = false;
            self.done.d.next = false;
        }
    }
}

const _: () = assert!(WORDS == 6, "`sent == 5` is the last word");

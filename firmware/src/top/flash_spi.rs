//! The configuration flash's SPI port, driven from two board registers (BOARDS.md
//! §3: Corundum bit-bangs the same pins through STARTUPE3 from a register; this
//! block shifts whole bytes so a byte costs one register write and a poll).
//!
//! FLASH_CONTROL (regmap): bit 0 selects the chip (CS# low) while 1; bit 1
//! gives the pins to this block (STARTUPE3's user-side drivers on; while 0 the
//! pins are left as configuration left them). FLASH_DATA: a write shifts its low
//! byte out on DQ0, MSB first, SPI mode 0, and captures the byte on DQ1; a read
//! returns the captured byte in bits 7:0 and "busy" in bit 8. DQ2 (W#) and DQ3
//! (HOLD#/RESET#) are driven high: single-wire SPI only.
//!
//! SCK = core clock / (2 * HALF_PERIOD) = 250 MHz / 8 = 31.25 MHz, well below
//! the part's single-transfer-rate limit.

use rust_hdl::prelude::*;

/// Core clock cycles per half period of SCK.
pub const HALF_PERIOD: u64 = 4;

#[derive(LogicBlock, Default)]
pub struct FlashSpi {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, bool>,
    /// A write to FLASH_CONTROL / FLASH_DATA this cycle.
    pub control_wr: Signal<In, bool>,
    pub data_wr: Signal<In, bool>,
    pub wr_data: Signal<In, Bits<32>>,
    /// FLASH_CONTROL and FLASH_DATA as read.
    pub control: Signal<Out, Bits<32>>,
    pub data: Signal<Out, Bits<32>>,
    /// To STARTUPE3: SCK, CS#, DQ out, DQ tri-state (1 = input), and DQ in.
    pub sck: Signal<Out, bool>,
    pub sck_ts: Signal<Out, bool>,
    pub cs_n: Signal<Out, bool>,
    pub cs_ts: Signal<Out, bool>,
    pub dq_o: Signal<Out, Bits<4>>,
    pub dq_ts: Signal<Out, Bits<4>>,
    pub dq_i: Signal<In, Bits<4>>,
    select: DFF<bool>,
    owned: DFF<bool>,
    /// Bits still to shift (0: idle).
    bits_left: DFF<Bits<4>>,
    /// Cycle within the half period.
    tick: DFF<Bits<3>>,
    sck_q: DFF<bool>,
    shift_out: DFF<Bits<8>>,
    shift_in: DFF<Bits<8>>,
}

impl Logic for FlashSpi {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, select, owned, bits_left, tick, sck_q, shift_out, shift_in);
        if self.control_wr.val() {
            self.select.d.next = self.wr_data.val().get_bit(0);
            self.owned.d.next = self.wr_data.val().get_bit(1);
        }
        if self.bits_left.q.val() == 0 {
            self.tick.d.next = 0.into();
            if self.data_wr.val() {
                self.shift_out.d.next = self.wr_data.val().get_bits::<8>(0);
                self.bits_left.d.next = 8.into();
            }
        } else {
            self.tick.d.next = self.tick.q.val() + 1;
            if self.tick.q.val() == 3 {
                self.tick.d.next = 0.into();
                if !self.sck_q.q.val() {
                    // Rising edge: the chip and we both sample.
                    self.sck_q.d.next = true;
                    self.shift_in.d.next = (self.shift_in.q.val() << 1)
                        | bit_cast::<8, 1>(self.dq_i.val().get_bit(1).into());
                } else {
                    // Falling edge: next bit out.
                    self.sck_q.d.next = false;
                    self.shift_out.d.next = self.shift_out.q.val() << 1;
                    self.bits_left.d.next = self.bits_left.q.val() - 1;
                }
            }
        }
        self.control.next = bit_cast::<32, 1>(self.select.q.val().into())
            | (bit_cast::<32, 1>(self.owned.q.val().into()) << 1);
        self.data.next = bit_cast::<32, 8>(self.shift_in.q.val())
            | (bit_cast::<32, 1>((self.bits_left.q.val() != 0).into()) << 8);
        self.sck.next = self.sck_q.q.val();
        self.sck_ts.next = !self.owned.q.val();
        self.cs_n.next = !self.select.q.val();
        self.cs_ts.next = !self.owned.q.val();
        self.dq_o.next =
            bits::<4>(0b1100) | bit_cast::<4, 1>(self.shift_out.q.val().get_bit(7).into());
        self.dq_ts.next = bits::<4>(0b0010);
        if !self.owned.q.val() {
            self.dq_ts.next = bits::<4>(0b1111);
        }
        if self.reset.val() {
            self.select.d.next = false;
            self.owned.d.next = false;
            self.bits_left.d.next = 0.into();
            self.tick.d.next = 0.into();
            self.sck_q.d.next = false;
        }
    }
}

const _: () = assert!(HALF_PERIOD == 4, "`tick == 3` ends a half period");

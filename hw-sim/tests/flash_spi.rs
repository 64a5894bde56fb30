//! The board's flash SPI port (`homa_firmware::top::flash_spi`, behind the
//! board registers) in RustHDL's simulator, wired bit by bit to the model of
//! the cards' flash chip (`homa_hw_sim::flash_chip`): SCK, CS#, DQ0 out and
//! DQ1 in, SPI mode 0. Driven through the board registers as a driver would:
//! read the JEDEC ID, program a page at the user-image address, poll the
//! status, read it back.

use homa_firmware::regmap::{self, BuildInfo};
use homa_firmware::top::board_regs::BoardRegs;
use homa_hw_sim::flash_chip::{FlashChip, JEDEC_ID, STATUS_WIP};
use rust_hdl::prelude::*;

/// The chip on the other end of the wires, and the bit-level state between them.
struct Wire {
    chip: FlashChip,
    selected: bool,
    last_sck: bool,
    bits_in: u8,
    count: u8,
    out: u8,
    /// Core clock cycles simulated.
    cycles: u64,
}

impl Wire {
    /// After each clock edge: follow CS# and SCK, move bits, drive DQ1.
    fn follow(&mut self, uut: &mut BoardRegs) {
        let cs = !uut.flash_cs_n.val() && !uut.flash_cs_ts.val();
        let sck = uut.flash_sck.val();
        if cs && !self.selected {
            self.chip.select();
            self.count = 0;
            self.out = self.chip.output_next();
        } else if !cs && self.selected {
            self.chip.deselect();
        }
        self.selected = cs;
        if cs && sck && !self.last_sck {
            // Rising edge: the chip samples DQ0.
            let bit = uut.flash_dq_o.val().get_bit(0) as u8;
            assert!(!uut.flash_dq_ts.val().get_bit(0), "DQ0 not driven");
            self.bits_in = self.bits_in << 1 | bit;
            self.count += 1;
            if self.count == 8 {
                let got = self.chip.transfer(self.bits_in);
                assert_eq!(got, self.out, "the chip's output byte changed under it");
                self.count = 0;
                self.out = self.chip.output_next();
            }
        }
        self.last_sck = sck;
        let miso = (self.out >> (7 - self.count.min(7))) & 1;
        uut.flash_dq_i.next = ((miso as u64) << 1).to_bits();
        self.chip.advance(4); // 4 ns: one 250 MHz cycle
    }

    fn tick(&mut self, uut: &mut BoardRegs) {
        assert!(simulate(uut, 100));
        uut.clock.next = true.into();
        assert!(simulate(uut, 100));
        uut.clock.next = false.into();
        assert!(simulate(uut, 100));
        self.follow(uut);
        assert!(simulate(uut, 100));
        self.cycles += 1;
    }

    fn write(&mut self, uut: &mut BoardRegs, offset: u32, data: u32) {
        uut.csr_addr.next = ((regmap::BASE + offset) as u64).to_bits();
        uut.csr_wr_data.next = (data as u64).to_bits();
        uut.csr_wr_en.next = true;
        self.tick(uut);
        uut.csr_wr_en.next = false;
    }

    fn read(&mut self, uut: &mut BoardRegs, offset: u32) -> u32 {
        uut.csr_addr.next = ((regmap::BASE + offset) as u64).to_bits();
        uut.csr_rd_en.next = true;
        self.tick(uut);
        uut.csr_rd_en.next = false;
        assert!(uut.rd_valid.val());
        uut.rd_data.val().to_u32()
    }

    /// One SPI transaction: select, each byte out and in, deselect.
    fn txn(&mut self, uut: &mut BoardRegs, bytes: &[u8]) -> Vec<u8> {
        self.write(uut, regmap::FLASH_CONTROL, 0b11);
        let mut got = Vec::new();
        for &b in bytes {
            self.write(uut, regmap::FLASH_DATA, b as u32);
            loop {
                let d = self.read(uut, regmap::FLASH_DATA);
                if d & regmap::FLASH_BUSY == 0 {
                    got.push(d as u8);
                    break;
                }
            }
        }
        self.write(uut, regmap::FLASH_CONTROL, 0b10);
        self.tick(uut);
        got
    }
}

#[test]
fn the_flash_port_reads_programs_and_polls_the_chip_bit_by_bit() {
    let build = BuildInfo {
        unix_time: 0,
        git_commit: [0; 20],
        git_dirty: false,
    };
    let mut uut = BoardRegs::default();
    uut.connect_all();
    uut.id_words.next = regmap::id_bits(&regmap::constant_words(
        "u250",
        "xcu250-figd2104-2L-e",
        &build,
    ));
    let mut w = Wire {
        chip: FlashChip::default(),
        selected: false,
        last_sck: false,
        bits_in: 0,
        count: 0,
        out: 0xFF,
        cycles: 0,
    };
    uut.reset.next = true;
    w.tick(&mut uut);
    uut.reset.next = false;
    // Until the card takes the pins, they are tri-stated.
    assert!(uut.flash_sck_ts.val() && uut.flash_cs_ts.val());
    assert_eq!(uut.flash_dq_ts.val().to_u32(), 0b1111);

    assert_eq!(w.txn(&mut uut, &[0x9F, 0, 0, 0])[1..], JEDEC_ID);
    let start = w.cycles;
    w.txn(&mut uut, &[0x06]);
    let addr = 0x0100_2000u32;
    let data: Vec<u8> = (0..32u8).map(|i| i.wrapping_mul(37) ^ 0x5a).collect();
    let mut cmd = vec![0x12];
    cmd.extend(addr.to_be_bytes());
    cmd.extend(&data);
    w.txn(&mut uut, &cmd);
    let per_byte = (w.cycles - start) as f64 / (cmd.len() + 1) as f64;
    let mut polls = 0;
    while w.txn(&mut uut, &[0x05, 0])[1] & STATUS_WIP != 0 {
        polls += 1;
        assert!(polls < 1000, "the program never finished");
    }
    assert!(
        polls > 10,
        "a page program takes 128 us, {polls} polls of ~1 us"
    );
    let mut cmd = vec![0x13];
    cmd.extend(addr.to_be_bytes());
    cmd.extend(std::iter::repeat_n(0, data.len()));
    assert_eq!(w.txn(&mut uut, &cmd)[5..], data);
    for (i, &b) in data.iter().enumerate() {
        assert_eq!(w.chip.peek(addr + i as u32), b);
    }
    eprintln!(
        "flash port: {per_byte:.0} core cycles per byte through the registers (SCK 31.25 MHz)"
    );
    assert!(per_byte < 100.0, "{per_byte} cycles per byte");
}

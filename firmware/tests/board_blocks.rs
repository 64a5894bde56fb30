//! The board's own blocks in RustHDL's simulator: the register block (every
//! constant word, the CSR split, the reboot trigger) and the IPROG sender
//! (the exact ICAP words, once, only when the ICAP is available).

use homa_firmware::regmap::{self, BuildInfo};
use homa_firmware::top::board_regs::BoardRegs;
use homa_firmware::top::iprog::{icap_order, Iprog, IPROG_WORDS, NOOP};
use rust_hdl::prelude::*;

fn settle<B: Block>(uut: &mut B) {
    assert!(simulate(uut, 100), "RustHDL logic did not converge");
}

fn tick_regs(uut: &mut BoardRegs) {
    settle(uut);
    uut.clock.next = true.into();
    settle(uut);
    uut.clock.next = false.into();
    settle(uut);
}

/// One CSR read: rd_en for a cycle, the answer in the next.
fn read(uut: &mut BoardRegs, addr: u32) -> Option<u32> {
    uut.csr_addr.next = (addr as u64).to_bits();
    uut.csr_rd_en.next = true;
    tick_regs(uut);
    uut.csr_rd_en.next = false;
    settle(uut);
    let v = uut.rd_valid.val().then(|| uut.rd_data.val().to_u32());
    tick_regs(uut);
    v
}

fn write(uut: &mut BoardRegs, addr: u32, data: u32) {
    uut.csr_addr.next = (addr as u64).to_bits();
    uut.csr_wr_data.next = (data as u64).to_bits();
    uut.csr_wr_en.next = true;
    tick_regs(uut);
    uut.csr_wr_en.next = false;
    tick_regs(uut);
}

#[test]
fn board_registers_name_the_board_part_build_and_commit() {
    let mut commit = [0u8; 20];
    for (i, b) in commit.iter_mut().enumerate() {
        *b = 0x10 + i as u8;
    }
    let build = BuildInfo {
        unix_time: 0x1_2345_6789,
        git_commit: commit,
        git_dirty: true,
    };
    let mut uut = BoardRegs::default();
    uut.connect_all();
    uut.id_words.next = regmap::id_bits(&regmap::constant_words(
        "u250",
        "xcu250-figd2104-2L-e",
        &build,
    ));
    uut.reset.next = true;
    tick_regs(&mut uut);
    uut.reset.next = false;
    let base = regmap::BASE;
    assert_eq!(read(&mut uut, base), Some(regmap::TYPE));
    assert_eq!(read(&mut uut, base + 4), Some(regmap::VERSION));
    assert_eq!(read(&mut uut, base + 8), Some(0), "no next block");
    assert_eq!(
        read(&mut uut, base + regmap::BOARD_NAME),
        Some(u32::from_le_bytes(*b"u250"))
    );
    let mut part = Vec::new();
    for i in 0..regmap::PART_WORDS as u32 {
        part.extend(
            read(&mut uut, base + regmap::PART + 4 * i)
                .unwrap()
                .to_le_bytes(),
        );
    }
    assert_eq!(
        String::from_utf8(part).unwrap().trim_end_matches('\0'),
        "xcu250-figd2104-2L-e"
    );
    assert_eq!(
        read(&mut uut, base + regmap::BUILD_TIME_LO),
        Some(0x2345_6789)
    );
    assert_eq!(read(&mut uut, base + regmap::BUILD_TIME_HI), Some(1));
    let mut got = Vec::new();
    for i in 0..regmap::GIT_COMMIT_WORDS as u32 {
        got.extend(
            read(&mut uut, base + regmap::GIT_COMMIT + 4 * i)
                .unwrap()
                .to_le_bytes(),
        );
    }
    assert_eq!(got, commit);
    assert_eq!(read(&mut uut, base + regmap::GIT_DIRTY), Some(1));
    assert_eq!(
        read(&mut uut, base + 0xfc),
        Some(0),
        "unused offsets read 0"
    );
    // The core's half: not selected, no answer from the board block.
    uut.csr_addr.next = 0x00_0100u64.to_bits();
    settle(&mut uut);
    assert!(!uut.select.val());
    assert_eq!(read(&mut uut, 0x00_0000), None);
    assert_eq!(read(&mut uut, 0x7f_ff00), None);
}

#[test]
fn only_the_magic_word_at_reboot_requests_a_reboot() {
    let build = BuildInfo {
        unix_time: 0,
        git_commit: [0; 20],
        git_dirty: false,
    };
    let mut uut = BoardRegs::default();
    uut.connect_all();
    uut.id_words.next =
        regmap::id_bits(&regmap::constant_words("u50", "xcu50-fsvh2104-2-e", &build));
    uut.reset.next = true;
    tick_regs(&mut uut);
    uut.reset.next = false;
    write(
        &mut uut,
        regmap::BASE + regmap::REBOOT,
        regmap::REBOOT_MAGIC ^ 1,
    );
    write(
        &mut uut,
        regmap::BASE + regmap::MAC_STATUS,
        regmap::REBOOT_MAGIC,
    );
    write(&mut uut, regmap::REBOOT, regmap::REBOOT_MAGIC); // the core's half
    assert!(!uut.reboot.val());
    write(
        &mut uut,
        regmap::BASE + regmap::REBOOT,
        regmap::REBOOT_MAGIC,
    );
    assert!(uut.reboot.val());
    assert_eq!(read(&mut uut, regmap::BASE + regmap::REBOOT), Some(0));
    uut.reset.next = true;
    tick_regs(&mut uut);
    assert!(!uut.reboot.val());
}

fn tick_iprog(uut: &mut Iprog) {
    settle(uut);
    uut.clock.next = true.into();
    settle(uut);
    uut.clock.next = false.into();
    settle(uut);
}

#[test]
fn iprog_sends_the_ug570_sequence_once_when_the_icap_is_available() {
    let mut uut = Iprog::default();
    uut.connect_all();
    uut.reset.next = true;
    tick_iprog(&mut uut);
    uut.reset.next = false;
    uut.icap_avail.next = false;
    uut.reboot.next = true;
    let mut sent = Vec::new();
    for cycle in 0..40 {
        if cycle == 10 {
            uut.icap_avail.next = true;
        }
        settle(&mut uut);
        assert!(!uut.icap_rdwrb.val(), "ICAP must be written, never read");
        if !uut.icap_csib.val() {
            assert!(cycle > 10, "wrote to the ICAP before it was available");
            sent.push(uut.icap_i.val().to_u32());
        }
        tick_iprog(&mut uut);
    }
    let mut want: Vec<u32> = IPROG_WORDS.iter().map(|&w| icap_order(w)).collect();
    want.push(icap_order(NOOP));
    assert_eq!(sent, want);
    // The bus order reverses bits within bytes: the sync word 0xAA995566.
    assert_eq!(icap_order(0xAA99_5566), 0x5599_AA66);
}

fn tick_both(uut: &mut homa_firmware::top::reset_bridge::ResetBridge, a: bool, b: bool) {
    settle(uut);
    uut.a_clock.next = a.into();
    uut.b_clock.next = b.into();
    settle(uut);
    uut.a_clock.next = false.into();
    uut.b_clock.next = false.into();
    settle(uut);
}

#[test]
fn a_reset_request_on_either_side_resets_both_sides_together() {
    use homa_firmware::top::reset_bridge::ResetBridge;
    for requester_is_a in [true, false] {
        let mut uut = ResetBridge::default();
        uut.connect_all();
        // Idle: no reset anywhere once the counters ran out.
        for _ in 0..40 {
            tick_both(&mut uut, true, true);
        }
        assert!(!uut.a_reset.val() && !uut.b_reset.val());
        // A one-cycle request on one side; clock b at 4/5 of a's rate.
        if requester_is_a {
            uut.a_req.next = true;
        } else {
            uut.b_req.next = true;
        }
        let (mut a_cycles, mut b_cycles, mut both) = (0, 0, 0);
        for i in 0..100 {
            let (ca, cb) = (true, i % 5 != 4);
            tick_both(&mut uut, ca, cb);
            uut.a_req.next = false;
            uut.b_req.next = false;
            settle(&mut uut);
            a_cycles += uut.a_reset.val() as u32;
            b_cycles += uut.b_reset.val() as u32;
            both += (uut.a_reset.val() && uut.b_reset.val()) as u32;
        }
        assert!(
            a_cycles >= 31 && b_cycles >= 31,
            "a {a_cycles}, b {b_cycles}"
        );
        assert!(both >= 20, "the two resets overlap for only {both} cycles");
        assert!(!uut.a_reset.val() && !uut.b_reset.val(), "reset never ends");
    }
}

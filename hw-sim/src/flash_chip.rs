//! A model of the Alveo cards' configuration flash, a Micron MT25QU01G
//! (1 Gbit, 128 MiB; BOARDS.md §1.6), at the level of SPI transactions: chip
//! select, then bytes in and out (single-wire, one byte each way per call),
//! then deselect, which starts a program or erase. Time is the caller's: it
//! advances the model with [`FlashChip::advance`] and polls the status
//! register as a driver must.
//!
//! Commands (BOARDS.md §3.2, the ones Corundum's and XRT's flash tools use):
//! reset enable/reset 66/99, read ID 9F (20 BB 21), read status 05 (bit 0
//! write in progress, bit 1 write enable latch), read flag status 70 (bit 7
//! ready, bit 5 erase error, bit 4 program error, bit 1 protection error,
//! bit 0 4-byte addressing), clear flag status 50, write enable/disable 06/04,
//! enter/exit 4-byte address mode B7/E9, write/read extended address register
//! C5/C8, read 03/13, page program 02/12, 4 KiB subsector erase 20/21, 64 KiB
//! sector erase D8/DC. The 3-byte forms take address bits 27:24 from the
//! extended address register unless 4-byte mode is on.
//!
//! Behaviour the flashing code must cope with: program and erase need the
//! write enable latch, which every program or erase clears; programming only
//! clears bits (1 -> 0); a page program wraps within its 256-byte page; while
//! busy the chip ignores everything but the two status reads; erased bytes
//! read 0xFF.
//!
//! DESIGN NOTES
//! ------------
//! Busy times are the MT25Q family's typical figures as its datasheet's
//! feature list gives them (MT25QL256ABA: program 2 MB/s, 64 KiB sector erase
//! 400 KB/s, 4 KiB subsector erase 80 KB/s), i.e. 128 us per 256-byte page,
//! 160 ms per sector, 50 ms per subsector; the MT25QU01G datasheet itself has
//! not been read (BOARDS.md §6). They are fields of [`FlashTiming`].
//!
//! Faults for tests: [`FlashChip::stick_erases`] makes erases never finish;
//! [`FlashChip::power_cut`] stops the chip in the middle of what it is doing:
//! an interrupted erase or program leaves its range neither old nor new (every
//! other byte erased), as a real interrupted operation may.
//!
//! Memory is sparse (4 KiB blocks, allocated when first programmed): a model
//! of the whole 128 MiB costs only what is written.

use std::collections::HashMap;

/// Bytes in the part.
pub const SIZE: u32 = 128 << 20;
pub const PAGE: u32 = 256;
pub const SUBSECTOR: u32 = 4096;
pub const SECTOR: u32 = 65536;
/// JEDEC ID: Micron, MT25QU (1.8 V), 1 Gbit.
pub const JEDEC_ID: [u8; 3] = [0x20, 0xBB, 0x21];

/// Status register bits (command 05).
pub const STATUS_WIP: u8 = 1 << 0;
pub const STATUS_WEL: u8 = 1 << 1;
/// Flag status register bits (command 70).
pub const FLAG_READY: u8 = 1 << 7;
pub const FLAG_ERASE_ERROR: u8 = 1 << 5;
pub const FLAG_PROGRAM_ERROR: u8 = 1 << 4;
pub const FLAG_4BYTE: u8 = 1 << 0;

/// How long operations keep the chip busy, in ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlashTiming {
    pub page_program_ns: u64,
    pub subsector_erase_ns: u64,
    pub sector_erase_ns: u64,
}

impl Default for FlashTiming {
    /// The MT25Q family's typical figures (module notes).
    fn default() -> Self {
        FlashTiming {
            page_program_ns: 128_000,
            subsector_erase_ns: 50_000_000,
            sector_erase_ns: 160_000_000,
        }
    }
}

/// What the chip is busy with.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Busy {
    Idle,
    /// Until `until_ns`; the range `start..start + len` gets `data` (program:
    /// ANDed in) or 0xFF (erase) when it ends.
    Program {
        until_ns: u64,
        addr: u32,
        data: Vec<u8>,
    },
    Erase {
        until_ns: u64,
        start: u32,
        len: u32,
    },
}

/// A transaction's decoding state.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Phase {
    /// Deselected.
    Idle,
    /// Selected, waiting for the command byte.
    Command,
    /// Collecting address bytes of `cmd`.
    Address {
        cmd: u8,
        addr: u32,
        left: u8,
    },
    /// Reading from `addr` on.
    Read {
        addr: u32,
    },
    /// Collecting page-program data.
    ProgramData {
        addr: u32,
        data: Vec<u8>,
    },
    /// Erase command with its address, waiting for deselect.
    EraseArmed {
        start: u32,
        len: u32,
    },
    /// Status reads repeat the register for as long as the chip is selected.
    Status,
    FlagStatus,
    Id {
        index: usize,
    },
    /// Write extended address register: one data byte.
    ExtAddrWrite,
    ExtAddrRead,
    /// A command that is done or ignored: further bytes are ignored.
    Ignore,
}

pub struct FlashChip {
    blocks: HashMap<u32, Box<[u8; SUBSECTOR as usize]>>,
    timing: FlashTiming,
    now_ns: u64,
    busy: Busy,
    wel: bool,
    four_byte: bool,
    ext_addr: u8,
    flags: u8,
    reset_enabled: bool,
    phase: Phase,
    erases_stick: bool,
    /// Addresses whose cells no longer program (test fault).
    dead_bytes: Vec<u32>,
    /// Operations completed, for tests and statistics.
    pub programs_done: u64,
    pub erases_done: u64,
}

impl Default for FlashChip {
    fn default() -> Self {
        Self::new(FlashTiming::default())
    }
}

impl FlashChip {
    /// An erased chip (every byte 0xFF).
    pub fn new(timing: FlashTiming) -> Self {
        FlashChip {
            blocks: HashMap::new(),
            timing,
            now_ns: 0,
            busy: Busy::Idle,
            wel: false,
            four_byte: false,
            ext_addr: 0,
            flags: 0,
            reset_enabled: false,
            phase: Phase::Idle,
            erases_stick: false,
            dead_bytes: Vec::new(),
            programs_done: 0,
            erases_done: 0,
        }
    }

    /// Model time, ns.
    pub fn now_ns(&self) -> u64 {
        self.now_ns
    }

    /// Lets `ns` pass: a program or erase whose time is up completes.
    pub fn advance(&mut self, ns: u64) {
        self.now_ns += ns;
        self.settle();
    }

    fn settle(&mut self) {
        match std::mem::replace(&mut self.busy, Busy::Idle) {
            Busy::Program {
                until_ns,
                addr,
                data,
            } if until_ns <= self.now_ns => {
                for (i, b) in data.iter().enumerate() {
                    let a = page_wrap(addr, i as u32);
                    if self.dead_bytes.contains(&a) {
                        continue;
                    }
                    let old = self.peek(a);
                    self.poke(a, old & b);
                }
                self.programs_done += 1;
                self.wel = false;
            }
            Busy::Erase {
                until_ns,
                start,
                len,
            } if until_ns <= self.now_ns && !self.erases_stick => {
                for a in (start..start + len).step_by(SUBSECTOR as usize) {
                    self.blocks.remove(&(a / SUBSECTOR));
                }
                self.erases_done += 1;
                self.wel = false;
            }
            still => self.busy = still,
        }
    }

    fn is_busy(&self) -> bool {
        self.busy != Busy::Idle
    }

    /// Reads a byte directly (tests; no timing).
    pub fn peek(&self, addr: u32) -> u8 {
        let addr = addr % SIZE;
        self.blocks
            .get(&(addr / SUBSECTOR))
            .map_or(0xFF, |b| b[(addr % SUBSECTOR) as usize])
    }

    fn poke(&mut self, addr: u32, v: u8) {
        let addr = addr % SIZE;
        let block = self
            .blocks
            .entry(addr / SUBSECTOR)
            .or_insert_with(|| Box::new([0xFF; SUBSECTOR as usize]));
        block[(addr % SUBSECTOR) as usize] = v;
    }

    /// Writes bytes directly, as if programmed into an erased range (tests:
    /// the golden image a card ships with).
    pub fn load(&mut self, addr: u32, data: &[u8]) {
        for (i, &b) in data.iter().enumerate() {
            self.poke(addr + i as u32, b);
        }
    }

    /// Chip select low: a transaction starts.
    pub fn select(&mut self) {
        self.settle();
        self.phase = Phase::Command;
    }

    /// One byte in on DQ0 and, at the same time, one byte out on DQ1.
    pub fn transfer(&mut self, byte_in: u8) -> u8 {
        self.settle();
        match std::mem::replace(&mut self.phase, Phase::Ignore) {
            Phase::Idle => {
                self.phase = Phase::Idle;
                0xFF
            }
            Phase::Command => {
                self.command(byte_in);
                0xFF
            }
            Phase::Address { cmd, addr, left } => {
                let addr = addr << 8 | byte_in as u32;
                if left > 1 {
                    self.phase = Phase::Address {
                        cmd,
                        addr,
                        left: left - 1,
                    };
                } else {
                    self.addressed(cmd, addr);
                }
                0xFF
            }
            Phase::Read { addr } => {
                self.phase = Phase::Read {
                    addr: (addr + 1) % SIZE,
                };
                self.peek(addr)
            }
            Phase::ProgramData { addr, mut data } => {
                // More than a page: the last 256 bytes sent are kept (they wrap).
                data.push(byte_in);
                if data.len() > PAGE as usize {
                    data.remove(0);
                }
                self.phase = Phase::ProgramData { addr, data };
                0xFF
            }
            Phase::Status => {
                self.phase = Phase::Status;
                self.status()
            }
            Phase::FlagStatus => {
                self.phase = Phase::FlagStatus;
                self.flag_status()
            }
            Phase::Id { index } => {
                self.phase = Phase::Id { index: index + 1 };
                JEDEC_ID.get(index).copied().unwrap_or(0x00)
            }
            Phase::ExtAddrWrite => {
                if self.wel {
                    self.ext_addr = byte_in & 0x0F;
                    self.wel = false;
                }
                0xFF
            }
            Phase::ExtAddrRead => self.ext_addr,
            p @ (Phase::EraseArmed { .. } | Phase::Ignore) => {
                self.phase = p;
                0xFF
            }
        }
    }

    /// The byte the chip shifts out during the next [`FlashChip::transfer`]
    /// (it never depends on the byte shifted in at the same time): for a
    /// bit-level adapter, which must drive DQ1 before the byte's first edge.
    pub fn output_next(&mut self) -> u8 {
        self.settle();
        match &self.phase {
            Phase::Read { addr } => self.peek(*addr),
            Phase::Status => self.status(),
            Phase::FlagStatus => self.flag_status(),
            Phase::Id { index } => JEDEC_ID.get(*index).copied().unwrap_or(0x00),
            Phase::ExtAddrRead => self.ext_addr,
            _ => 0xFF,
        }
    }

    /// Chip select high: a program or erase armed in this transaction starts.
    pub fn deselect(&mut self) {
        self.settle();
        match std::mem::replace(&mut self.phase, Phase::Idle) {
            Phase::ProgramData { addr, data } if !data.is_empty() => {
                self.busy = Busy::Program {
                    until_ns: self.now_ns + self.timing.page_program_ns,
                    addr,
                    data,
                };
            }
            Phase::EraseArmed { start, len } => {
                let ns = if len == SECTOR {
                    self.timing.sector_erase_ns
                } else {
                    self.timing.subsector_erase_ns
                };
                self.busy = Busy::Erase {
                    until_ns: self.now_ns + ns,
                    start,
                    len,
                };
            }
            _ => {}
        }
    }

    fn status(&self) -> u8 {
        (if self.is_busy() { STATUS_WIP } else { 0 }) | (if self.wel { STATUS_WEL } else { 0 })
    }

    fn flag_status(&self) -> u8 {
        self.flags
            | (if self.is_busy() { 0 } else { FLAG_READY })
            | (if self.four_byte { FLAG_4BYTE } else { 0 })
    }

    fn command(&mut self, cmd: u8) {
        self.phase = Phase::Ignore;
        let resetting = std::mem::replace(&mut self.reset_enabled, false);
        match cmd {
            0x05 => self.phase = Phase::Status,
            0x70 => self.phase = Phase::FlagStatus,
            // Everything else waits for the chip to be idle.
            _ if self.is_busy() => {}
            0x9F | 0x9E => self.phase = Phase::Id { index: 0 },
            0x66 => self.reset_enabled = true,
            0x99 if resetting => {
                self.wel = false;
                self.four_byte = false;
                self.ext_addr = 0;
                self.flags = 0;
            }
            0x06 => self.wel = true,
            0x04 => self.wel = false,
            0x50 => self.flags = 0,
            0xB7 => self.four_byte = true,
            0xE9 => self.four_byte = false,
            0xC5 => self.phase = Phase::ExtAddrWrite,
            0xC8 => self.phase = Phase::ExtAddrRead,
            0x03 | 0x02 | 0x20 | 0xD8 => {
                let left = if self.four_byte { 4 } else { 3 };
                self.phase = Phase::Address { cmd, addr: 0, left };
            }
            0x13 | 0x12 | 0x21 | 0xDC => {
                self.phase = Phase::Address {
                    cmd,
                    addr: 0,
                    left: 4,
                }
            }
            _ => {}
        }
    }

    /// The address of `cmd` is complete.
    fn addressed(&mut self, cmd: u8, addr: u32) {
        let three_byte = matches!(cmd, 0x03 | 0x02 | 0x20 | 0xD8) && !self.four_byte;
        let addr = if three_byte {
            (self.ext_addr as u32) << 24 | addr
        } else {
            addr
        } % SIZE;
        self.phase = match cmd {
            0x03 | 0x13 => Phase::Read { addr },
            0x02 | 0x12 if self.wel => Phase::ProgramData {
                addr,
                data: Vec::new(),
            },
            0x20 | 0x21 if self.wel => Phase::EraseArmed {
                start: addr & !(SUBSECTOR - 1),
                len: SUBSECTOR,
            },
            0xD8 | 0xDC if self.wel => Phase::EraseArmed {
                start: addr & !(SECTOR - 1),
                len: SECTOR,
            },
            _ => Phase::Ignore,
        };
    }

    /// Test fault: the byte at `addr` no longer programs (it keeps what it
    /// holds; erased, 0xFF), and the chip does not say so: only a read back
    /// finds it.
    pub fn kill_byte(&mut self, addr: u32) {
        self.dead_bytes.push(addr % SIZE);
    }

    /// Test fault: from now on erases never finish (WIP stays set).
    pub fn stick_erases(&mut self) {
        self.erases_stick = true;
    }

    /// Test fault: power fails now. An operation in progress is cut short and
    /// leaves its range half done; the chip comes back idle.
    pub fn power_cut(&mut self) {
        match std::mem::replace(&mut self.busy, Busy::Idle) {
            Busy::Program { addr, data, .. } => {
                for (i, b) in data.iter().enumerate().step_by(2) {
                    let a = page_wrap(addr, i as u32);
                    let old = self.peek(a);
                    self.poke(a, old & b);
                }
            }
            Busy::Erase { start, len, .. } => {
                for a in (start..start + len).step_by(2) {
                    self.poke(a, 0xFF);
                }
            }
            Busy::Idle => {}
        }
        self.wel = false;
        self.four_byte = false;
        self.ext_addr = 0;
        self.phase = Phase::Idle;
        self.erases_stick = false;
    }
}

/// Byte `i` of a page program starting at `addr`: wraps within the page.
fn page_wrap(addr: u32, i: u32) -> u32 {
    (addr & !(PAGE - 1)) | ((addr + i) & (PAGE - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn txn(f: &mut FlashChip, bytes: &[u8]) -> Vec<u8> {
        f.select();
        let out = bytes.iter().map(|&b| f.transfer(b)).collect();
        f.deselect();
        out
    }

    fn wait_idle(f: &mut FlashChip) -> u64 {
        let start = f.now_ns();
        loop {
            let s = txn(f, &[0x05, 0]);
            if s[1] & STATUS_WIP == 0 {
                return f.now_ns() - start;
            }
            f.advance(1_000);
            assert!(f.now_ns() - start < 10_000_000_000, "never idle");
        }
    }

    fn read4(f: &mut FlashChip, addr: u32, n: usize) -> Vec<u8> {
        let mut cmd = vec![0x13];
        cmd.extend(addr.to_be_bytes());
        cmd.extend(std::iter::repeat_n(0, n));
        txn(f, &cmd)[5..].to_vec()
    }

    #[test]
    fn id_status_and_write_enable() {
        let mut f = FlashChip::default();
        assert_eq!(&txn(&mut f, &[0x9F, 0, 0, 0])[1..], &JEDEC_ID);
        assert_eq!(txn(&mut f, &[0x05, 0])[1], 0);
        txn(&mut f, &[0x06]);
        assert_eq!(txn(&mut f, &[0x05, 0, 0])[1..], [STATUS_WEL, STATUS_WEL]);
        txn(&mut f, &[0x04]);
        assert_eq!(txn(&mut f, &[0x05, 0])[1], 0);
        assert_eq!(txn(&mut f, &[0x70, 0])[1], FLAG_READY);
    }

    #[test]
    fn program_needs_wel_clears_bits_only_and_wraps_in_its_page() {
        let mut f = FlashChip::default();
        let addr: u32 = 0x0100_2000 + 250;
        // Without write enable: nothing happens.
        let mut cmd = vec![0x12];
        cmd.extend(addr.to_be_bytes());
        cmd.extend([0x00; 4]);
        txn(&mut f, &cmd);
        assert_eq!(wait_idle(&mut f), 0);
        assert_eq!(read4(&mut f, addr, 4), [0xFF; 4]);
        // Ten bytes from offset 250 of the page: six fit, four wrap to offset 0.
        txn(&mut f, &[0x06]);
        let mut cmd = vec![0x12];
        cmd.extend(addr.to_be_bytes());
        cmd.extend([0xF0, 0x0F, 0xAA, 0x55, 0x12, 0x34, 0x56, 0x78, 0x9A, 0xBC]);
        txn(&mut f, &cmd);
        let busy = wait_idle(&mut f);
        assert!((128_000..130_000).contains(&busy), "{busy}");
        assert_eq!(read4(&mut f, addr, 6), [0xF0, 0x0F, 0xAA, 0x55, 0x12, 0x34]);
        assert_eq!(read4(&mut f, 0x0100_2000, 4), [0x56, 0x78, 0x9A, 0xBC]);
        assert_eq!(txn(&mut f, &[0x05, 0])[1], 0, "WEL cleared");
        // Programming again only clears bits.
        txn(&mut f, &[0x06]);
        let mut cmd = vec![0x12];
        cmd.extend(addr.to_be_bytes());
        cmd.push(0x3C);
        txn(&mut f, &cmd);
        wait_idle(&mut f);
        assert_eq!(read4(&mut f, addr, 1), [0x30]);
    }

    #[test]
    fn erases_take_their_time_and_busy_chips_ignore_commands() {
        let mut f = FlashChip::default();
        f.load(0x0101_0000, &[0u8; 0x2_0000]);
        txn(&mut f, &[0x06]);
        let mut cmd = vec![0xDC];
        cmd.extend(0x0101_1234u32.to_be_bytes());
        txn(&mut f, &cmd);
        // While busy: ID and reads are ignored, flag status says not ready.
        assert_eq!(&txn(&mut f, &[0x9F, 0, 0, 0])[1..], &[0xFF; 3]);
        assert_eq!(txn(&mut f, &[0x70, 0])[1] & FLAG_READY, 0);
        let busy = wait_idle(&mut f);
        assert!((160_000_000..160_002_000).contains(&busy), "{busy}");
        assert_eq!(f.peek(0x0101_0000), 0xFF);
        assert_eq!(f.peek(0x0101_FFFF), 0xFF);
        assert_eq!(f.peek(0x0102_0000), 0x00, "the next sector is untouched");
        // A 4 KiB subsector with the 3-byte command and the extended address register.
        txn(&mut f, &[0x06]);
        txn(&mut f, &[0xC5, 0x01]);
        assert_eq!(txn(&mut f, &[0xC8, 0])[1], 0x01);
        txn(&mut f, &[0x06]);
        txn(&mut f, &[0x20, 0x02, 0x10, 0x00]);
        assert_eq!(wait_idle(&mut f), 50_000_000);
        assert_eq!(f.peek(0x0102_1000), 0xFF);
        assert_eq!(f.peek(0x0102_0FFF), 0x00);
        assert_eq!(f.peek(0x0102_2000), 0x00);
    }

    #[test]
    fn faults_a_stuck_erase_and_a_power_cut() {
        let mut f = FlashChip::default();
        f.load(0, &[0x11; 8192]);
        f.stick_erases();
        txn(&mut f, &[0x06]);
        txn(&mut f, &[0x21, 0, 0, 0, 0]);
        f.advance(5_000_000_000);
        assert_eq!(
            txn(&mut f, &[0x05, 0])[1] & STATUS_WIP,
            STATUS_WIP,
            "still erasing"
        );
        f.power_cut();
        assert_eq!(txn(&mut f, &[0x05, 0])[1], 0);
        // Half erased: neither the old data nor erased.
        assert_eq!((f.peek(0), f.peek(1)), (0xFF, 0x11));
        assert_eq!(f.peek(4096), 0x11, "outside the subsector");
    }
}

//! The board around a simulated card: the board's own RTL (register block,
//! flash SPI port, IPROG sender: `homa_firmware::top::board_sim`, in
//! Verilator) on the card's clock, the configuration flash behind its pins
//! (`flash_chip`), and the FPGA's configuration logic behind its ICAP port,
//! which reboots the card from the flash the way a board does.
//!
//! DESIGN NOTES
//! ------------
//! - Pins. Each cycle, after the clock edge, [`Board::step`] follows CS# and
//!   SCK exactly as `hw-sim/tests/flash_spi.rs` proved against the chip: the
//!   chip samples DQ0 on SCK's rising edge, and DQ1 carries the chip's next
//!   output bit (SPI mode 0). One core cycle is 4 ns of chip time.
//! - Configuration. The ICAP words are decoded as the FPGA's configuration
//!   logic would (bit-reversed within bytes, UG570): a sync word, then a
//!   type-1 write of IPROG to CMD reconfigures. The FPGA then goes away for
//!   `BoardConfig::configure_ns` (BAR reads answer all-ones, writes are lost:
//!   what a host sees of a device that dropped off the link) and comes back
//!   running what the flash holds: the golden image at 0, whose multiboot
//!   header jumps to the user image at `FLASH_USER_IMAGE` when that image is
//!   valid, and which boots itself when it is not (UG570's fallback). A card
//!   whose golden image is damaged stays down: that is a bricked card, and the
//!   reason the flash tool refuses to write below the user image.
//! - Images. A real configuration stream cannot be interpreted here, so a
//!   simulated card boots [`sim_image`]s: the preamble and sync word of an SPI
//!   bitstream (sync at byte 0x50, where Corundum's tool looks for it), then
//!   the identity the board register block will show, a payload, and a CRC
//!   over both, which stands for the bitstream's own CRC check: an image cut
//!   short by a power failure fails it and the FPGA falls back to golden.
//! - Time. [`Board::skip`] lets chip time pass without clocking the RTL. It
//!   is exact only while the flash port is idle (no byte shifting: the RTL
//!   then holds still), which the caller checks with [`Board::port_idle`].
//!
//! The identity is a board register block's ID words (`homa_hw::regmap::board`,
//! BOARD_NAME to GIT_DIRTY); [`Identity`] packs and unpacks them.

use homa_hw::regmap::board as regmap;

use crate::flash_chip::{FlashChip, FlashTiming};
use crate::models::board_sim::BoardSim;
use crate::Sim;

/// What the board registers say about a bitstream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    /// Board name, e.g. "u250" (at most 4 ASCII bytes).
    pub board: String,
    /// Vivado part, e.g. "xcu250-figd2104-2L-e" (at most 24 ASCII bytes).
    pub part: String,
    /// Build time, seconds since 1970 UTC.
    pub build_time: u64,
    pub git_commit: [u8; 20],
    pub git_dirty: bool,
}

impl Identity {
    /// The ID words, BOARD_NAME first.
    pub fn to_words(&self) -> [u32; regmap::ID_WORDS] {
        let mut bytes = Vec::with_capacity(4 * regmap::ID_WORDS);
        let ascii = |s: &str, words: usize| {
            assert!(s.len() <= 4 * words, "{s:?} does not fit in {words} words");
            let mut b = s.as_bytes().to_vec();
            b.resize(4 * words, 0);
            b
        };
        bytes.extend(ascii(&self.board, 1));
        bytes.extend(ascii(&self.part, regmap::PART_WORDS));
        bytes.extend(self.build_time.to_le_bytes());
        bytes.extend(self.git_commit);
        bytes.extend(u32::from(self.git_dirty).to_le_bytes());
        let mut words = [0; regmap::ID_WORDS];
        for (w, c) in words.iter_mut().zip(bytes.chunks_exact(4)) {
            *w = u32::from_le_bytes(c.try_into().unwrap());
        }
        words
    }

    /// The identity the ID words describe (strings end at the first NUL).
    pub fn from_words(words: &[u32; regmap::ID_WORDS]) -> Identity {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let text = |b: &[u8]| {
            let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
            String::from_utf8_lossy(&b[..end]).into_owned()
        };
        let part_end = 4 + 4 * regmap::PART_WORDS;
        Identity {
            board: text(&bytes[..4]),
            part: text(&bytes[4..part_end]),
            build_time: u64::from_le_bytes(bytes[part_end..part_end + 8].try_into().unwrap()),
            git_commit: bytes[part_end + 8..part_end + 28].try_into().unwrap(),
            git_dirty: bytes[part_end + 28] & 1 == 1,
        }
    }
}

/// The configuration data of images a simulated card can boot.
pub mod sim_image {
    use super::regmap::ID_WORDS;

    /// Where the sync word sits in an SPI configuration stream.
    pub const SYNC_OFFSET: usize = 0x50;
    pub const SYNC_WORD: u32 = 0xAA99_5566;
    /// Marks the simulated image after the sync word.
    pub const MAGIC: &[u8; 8] = b"HOMASIM1";
    /// Bytes before the payload: preamble, sync, magic, ID words, length.
    pub const HEADER_BYTES: usize = SYNC_OFFSET + 4 + 8 + 4 * ID_WORDS + 4;

    /// Why an image does not boot.
    #[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
    pub enum ImageError {
        #[error("no sync word 0xAA995566 at byte {SYNC_OFFSET:#x}")]
        NoSync,
        #[error(
            "not an image the simulated card can boot (no HOMASIM1 marker after the sync word)"
        )]
        NotSimulated,
        #[error("payload of {0} bytes runs past the end of the flash")]
        TooLong(u32),
        #[error("CRC mismatch: stored {stored:#010x}, computed {computed:#010x}")]
        Crc { stored: u32, computed: u32 },
    }

    /// An image that boots into `id`, with `payload_bytes` bytes of payload
    /// (a deterministic pattern standing in for the configuration frames).
    pub fn encode(id: &[u32; ID_WORDS], payload_bytes: usize) -> Vec<u8> {
        let mut v = vec![0xFF; 0x40];
        // Bus width detection and padding, as an SPI bitstream has them.
        v.extend([0x00, 0x00, 0x00, 0xBB, 0x11, 0x22, 0x00, 0x44]);
        v.extend([0xFF; 8]);
        v.extend(SYNC_WORD.to_be_bytes());
        let body_start = v.len();
        v.extend(MAGIC);
        for w in id {
            v.extend(w.to_le_bytes());
        }
        v.extend((payload_bytes as u32).to_le_bytes());
        v.extend((0..payload_bytes).map(|i| (i as u32).wrapping_mul(131).wrapping_add(7) as u8));
        let crc = crc32(&v[body_start..]);
        v.extend(crc.to_le_bytes());
        v
    }

    /// The identity an image boots into, reading its bytes with `byte(offset)`.
    pub fn decode(byte: impl Fn(usize) -> u8) -> Result<[u32; ID_WORDS], ImageError> {
        let word =
            |at: usize| u32::from_le_bytes([byte(at), byte(at + 1), byte(at + 2), byte(at + 3)]);
        if word(SYNC_OFFSET).swap_bytes() != SYNC_WORD {
            return Err(ImageError::NoSync);
        }
        let body = SYNC_OFFSET + 4;
        if (0..8).any(|i| byte(body + i) != MAGIC[i]) {
            return Err(ImageError::NotSimulated);
        }
        let mut id = [0; ID_WORDS];
        for (i, w) in id.iter_mut().enumerate() {
            *w = word(body + 8 + 4 * i);
        }
        let len = word(HEADER_BYTES - 4);
        if len > super::regmap::FLASH_BYTES {
            return Err(ImageError::TooLong(len));
        }
        let end = HEADER_BYTES + len as usize;
        let mut crc = Crc32::new();
        for at in body..end {
            crc.push(byte(at));
        }
        let computed = crc.finish();
        let stored = word(end);
        if stored != computed {
            return Err(ImageError::Crc { stored, computed });
        }
        Ok(id)
    }

    /// CRC-32 (IEEE 802.3, reflected, as zlib computes it).
    pub fn crc32(data: &[u8]) -> u32 {
        let mut c = Crc32::new();
        data.iter().for_each(|&b| c.push(b));
        c.finish()
    }

    struct Crc32(u32);

    impl Crc32 {
        fn new() -> Self {
            Crc32(0xFFFF_FFFF)
        }
        fn push(&mut self, b: u8) {
            self.0 ^= u32::from(b);
            for _ in 0..8 {
                self.0 = if self.0 & 1 == 1 {
                    (self.0 >> 1) ^ 0xEDB8_8320
                } else {
                    self.0 >> 1
                };
            }
        }
        fn finish(self) -> u32 {
            !self.0
        }
    }
}

/// How the simulated board is made.
#[derive(Clone, Debug)]
pub struct BoardConfig {
    /// The golden image's identity: what the card runs out of the box, and
    /// after any failed user image.
    pub golden: Identity,
    /// The flash chip's busy times.
    pub flash_timing: FlashTiming,
    /// Time from IPROG until the FPGA runs its new image. Not measured: the
    /// order of a second that loading a large UltraScale+ bitstream over SPIx4
    /// takes; only its being long compared with a BAR access matters here.
    pub configure_ns: u64,
}

impl BoardConfig {
    /// A U250 whose golden image was built at `build_time`.
    pub fn u250() -> BoardConfig {
        BoardConfig {
            golden: Identity {
                board: "u250".into(),
                part: "xcu250-figd2104-2L-e".into(),
                build_time: 1_700_000_000,
                git_commit: [0x60; 20],
                git_dirty: false,
            },
            flash_timing: FlashTiming::default(),
            configure_ns: 1_000_000_000,
        }
    }
}

/// What the FPGA is doing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FpgaState {
    /// Running an image with this identity; `golden` when it is the factory image.
    Running { golden: bool },
    /// Loading a new image until chip time `until_ns`.
    Configuring { until_ns: u64 },
    /// No image would load (the golden image is damaged): the card is gone.
    Bricked,
}

/// What a step of the board asks of the card around it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoardEvent {
    /// The FPGA started reconfiguring: the whole card goes away.
    Reconfiguring,
    /// A new image runs: the card's logic comes out of reset.
    Booted,
}

/// The board: its RTL, the flash chip on its pins, the configuration logic.
pub struct Board {
    rtl: Sim<BoardSim>,
    chip: FlashChip,
    config: BoardConfig,
    state: FpgaState,
    /// The ID words of the image running.
    running: [u32; regmap::ID_WORDS],
    // The SPI wires' state between cycles.
    selected: bool,
    last_sck: bool,
    bits_in: u8,
    bit_count: u8,
    out_byte: u8,
    /// Cycles since SCK last changed (the port is idle when it stays put).
    sck_still_cycles: u64,
    /// ICAP words seen since the last sync word; `None` before a sync.
    icap_after_sync: Option<Vec<u32>>,
    /// Test fault: power fails once this many page programs have completed.
    power_cut_after_programs: Option<u64>,
    /// Reconfigurations so far (IPROG or power cycle).
    pub boots: u64,
}

/// Half periods of SCK are 4 cycles (`flash_spi::HALF_PERIOD`); a port that
/// kept SCK still for longer than a whole period is not shifting.
const SCK_IDLE_CYCLES: u64 = 16;

impl Board {
    /// A board whose flash holds the golden image at 0 and nothing above it,
    /// running the golden image.
    pub fn new(name: &str, config: BoardConfig) -> Board {
        let mut chip = FlashChip::new(config.flash_timing);
        let golden = config.golden.to_words();
        chip.load(0, &sim_image::encode(&golden, 256));
        let mut rtl: Sim<BoardSim> = Sim::new(&format!("{name}-board"));
        rtl.set_icap_avail(true);
        rtl.set_id_words(&golden);
        let mut board = Board {
            rtl,
            chip,
            config,
            state: FpgaState::Running { golden: true },
            running: golden,
            selected: false,
            last_sck: false,
            bits_in: 0,
            bit_count: 0,
            out_byte: 0xFF,
            sck_still_cycles: 0,
            icap_after_sync: None,
            power_cut_after_programs: None,
            boots: 0,
        };
        board.reset_rtl();
        board
    }

    fn reset_rtl(&mut self) {
        self.rtl.set_reset(true);
        for _ in 0..4 {
            self.rtl.tick();
        }
        self.rtl.set_reset(false);
        self.rtl.eval();
    }

    pub fn chip(&self) -> &FlashChip {
        &self.chip
    }

    /// The flash chip, for tests to inject faults and look at its contents.
    pub fn chip_mut(&mut self) -> &mut FlashChip {
        &mut self.chip
    }

    pub fn state(&self) -> &FpgaState {
        &self.state
    }

    /// The identity of the image running.
    pub fn running(&self) -> Identity {
        Identity::from_words(&self.running)
    }

    /// Whether the card's logic is there to answer the BAR.
    pub fn is_up(&self) -> bool {
        matches!(self.state, FpgaState::Running { .. })
    }

    /// Test fault: the power fails as page program number `n` (counting
    /// those done so far) completes.
    pub fn power_cut_after_programs(&mut self, n: u64) {
        self.power_cut_after_programs = Some(self.chip.programs_done + n);
    }

    /// Drives the board's CSR port for the coming cycle.
    pub fn set_csr(&mut self, addr: u32, wr_data: u32, wr_en: bool, rd_en: bool) {
        self.rtl.set_csr_addr(addr);
        self.rtl.set_csr_wr_data(wr_data);
        self.rtl.set_csr_wr_en(wr_en);
        self.rtl.set_csr_rd_en(rd_en);
    }

    /// The board's read answer this cycle, if any.
    pub fn csr_rd(&self) -> Option<u32> {
        self.rtl.csr_rd_valid().then(|| self.rtl.csr_rd_data())
    }

    /// Whether the flash port is still (no byte shifting): [`Board::skip`]
    /// is then exact.
    pub fn port_idle(&self) -> bool {
        self.sck_still_cycles >= SCK_IDLE_CYCLES
    }

    /// Lets `cycles` core cycles of chip time pass without clocking the RTL
    /// (see the module notes); the caller has checked [`Board::port_idle`].
    pub fn skip(&mut self, cycles: u64) -> Option<BoardEvent> {
        self.chip.advance(cycles * 4);
        self.sck_still_cycles += cycles;
        self.check_power_cut();
        self.check_configured()
    }

    /// One core clock cycle: the RTL's edge, then the pins and the ICAP.
    pub fn step(&mut self) -> Option<BoardEvent> {
        if !self.is_up() {
            self.chip.advance(4);
            return self.check_configured();
        }
        self.rtl.tick();
        self.follow_pins();
        self.chip.advance(4);
        if let Some(event) = self.check_power_cut() {
            return Some(event);
        }
        self.follow_icap()
    }

    fn follow_pins(&mut self) {
        let rtl = &mut self.rtl;
        let cs = !rtl.flash_cs_n() && !rtl.flash_cs_ts();
        let sck = rtl.flash_sck() && !rtl.flash_sck_ts();
        if cs && !self.selected {
            self.chip.select();
            self.bit_count = 0;
            self.out_byte = self.chip.output_next();
        } else if !cs && self.selected {
            self.chip.deselect();
        }
        self.selected = cs;
        if sck != self.last_sck {
            self.sck_still_cycles = 0;
        } else {
            self.sck_still_cycles += 1;
        }
        if cs && sck && !self.last_sck {
            let bit = rtl.flash_dq_o() & 1;
            self.bits_in = self.bits_in << 1 | bit;
            self.bit_count += 1;
            if self.bit_count == 8 {
                self.chip.transfer(self.bits_in);
                self.bit_count = 0;
                self.out_byte = self.chip.output_next();
            }
        }
        self.last_sck = sck;
        let miso = (self.out_byte >> (7 - self.bit_count.min(7))) & 1;
        rtl.set_flash_dq_i(miso << 1);
    }

    fn follow_icap(&mut self) -> Option<BoardEvent> {
        if self.rtl.icap_csib() || self.rtl.icap_rdwrb() {
            return None;
        }
        let word = u32::from_le_bytes(self.rtl.icap_i().to_le_bytes().map(u8::reverse_bits));
        if word == sim_image::SYNC_WORD {
            self.icap_after_sync = Some(Vec::new());
            return None;
        }
        let words = self.icap_after_sync.as_mut()?;
        words.push(word);
        // Type-1 write of one word to CMD (register 4), then IPROG (0xF).
        let n = words.len();
        if n >= 2 && words[n - 2] == 0x3000_8001 && words[n - 1] == 0x0000_000F {
            self.icap_after_sync = None;
            return Some(self.reconfigure());
        }
        None
    }

    /// The FPGA drops its design and starts loading from flash.
    fn reconfigure(&mut self) -> BoardEvent {
        self.boots += 1;
        self.state = FpgaState::Configuring {
            until_ns: self.chip.now_ns() + self.config.configure_ns,
        };
        tracing::info!(
            boots = self.boots,
            "simulated FPGA reconfiguring from flash"
        );
        BoardEvent::Reconfiguring
    }

    fn check_power_cut(&mut self) -> Option<BoardEvent> {
        let n = self.power_cut_after_programs?;
        if self.chip.programs_done < n {
            return None;
        }
        self.power_cut_after_programs = None;
        tracing::info!("simulated power cut");
        self.chip.power_cut();
        self.selected = false;
        Some(self.reconfigure())
    }

    fn check_configured(&mut self) -> Option<BoardEvent> {
        match self.state {
            FpgaState::Configuring { until_ns } if self.chip.now_ns() >= until_ns => {}
            _ => return None,
        }
        let chip = &self.chip;
        let at = |base: u32| move |i: usize| chip.peek(base + i as u32);
        let golden = sim_image::decode(at(0));
        let user = sim_image::decode(at(regmap::FLASH_USER_IMAGE));
        let (words, golden_running) = match (golden, user) {
            (Err(e), _) => {
                tracing::warn!("golden image does not load ({e}): the card is bricked");
                self.state = FpgaState::Bricked;
                return None;
            }
            (Ok(_), Ok(user)) => (user, false),
            (Ok(golden), Err(e)) => {
                tracing::info!("user image does not load ({e}): golden runs");
                (golden, true)
            }
        };
        self.running = words;
        self.state = FpgaState::Running {
            golden: golden_running,
        };
        self.rtl.set_id_words(&words);
        self.selected = false;
        self.last_sck = false;
        self.icap_after_sync = None;
        self.reset_rtl();
        Some(BoardEvent::Booted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_words_round_trip() {
        let id = BoardConfig::u250().golden;
        assert_eq!(Identity::from_words(&id.to_words()), id);
    }

    #[test]
    fn an_image_decodes_until_a_byte_of_it_changes() {
        let id = BoardConfig::u250().golden.to_words();
        let mut img = sim_image::encode(&id, 1000);
        let byte = |v: &Vec<u8>| {
            let v = v.clone();
            move |i: usize| v.get(i).copied().unwrap_or(0xFF)
        };
        assert_eq!(sim_image::decode(byte(&img)), Ok(id));
        img[sim_image::HEADER_BYTES + 500] ^= 1;
        assert!(matches!(
            sim_image::decode(byte(&img)),
            Err(sim_image::ImageError::Crc { .. })
        ));
        assert_eq!(
            sim_image::decode(|_| 0xFF),
            Err(sim_image::ImageError::NoSync)
        );
        assert_eq!(
            sim_image::crc32(b"123456789"),
            0xCBF4_3926,
            "zlib's check value"
        );
    }
}

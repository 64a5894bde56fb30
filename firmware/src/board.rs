//! The five Alveo cards: what the board level needs to know about each, taken
//! from shared/design/BOARDS.md (which names a source for every line; the
//! section numbers below point there). Nothing here has been checked against
//! a card or by Vivado.
//!
//! DESIGN NOTES
//! ------------
//! One QSFP28 port per card: the core has one Ethernet port. It is QSFP0 on
//! the two-port cards. Its CMAC keeps its GTs inside the IP (ONS's way,
//! BOARDS.md §2.1), so the GT lanes are placed by the IP's
//! `GT_GROUP_SELECT`/`CMAC_CORE_SELECT` and only the reference clock needs
//! pins here. Where the sources conflict (U200 QSFP0 CMAC site: CD X0Y8, ONS
//! X0Y6), the ONS value is taken because its GT group and refclk are the ones
//! used with it.
//!
//! The free-running clock for the CMAC's init/DRP clock and the ICAP is one
//! LVDS system clock per board through an MMCM to 125 MHz (CD does the same
//! on U50, §1.4); the MMCM settings are derived here from its frequency.

/// A QSFP28 port as the board level uses it (§1.3).
#[derive(Clone, Debug, PartialEq)]
pub struct QsfpPort {
    /// GT reference clock pins (p, n).
    pub refclk_pins: (&'static str, &'static str),
    /// Its frequency in Hz (the IP's GT_REF_CLK_FREQ in MHz).
    pub refclk_hz: u64,
    /// CMAC_CORE_SELECT.
    pub cmac_site: &'static str,
    /// GT_GROUP_SELECT, as ONS writes it ("X0Y28~X0Y31").
    pub gt_group: &'static str,
}

/// One card.
#[derive(Clone, Debug, PartialEq)]
pub struct Board {
    /// Lower-case name used on the command line and in file names: "u250".
    pub name: &'static str,
    /// Vivado part (§1.1).
    pub part: &'static str,
    /// HBM part: the `pcie4c_uscale_plus` hard block, an `hbm_cattrip` pin to drive low.
    pub hbm: bool,
    /// The PCIe hard block's site (board.xml `block_location`, §1.2).
    pub pcie_block: &'static str,
    /// PCIe reference clock pins (p, n), 100 MHz.
    pub pcie_refclk_pins: (&'static str, &'static str),
    /// PERST# pin and its I/O standard.
    pub perst_pin: &'static str,
    pub perst_iostandard: &'static str,
    /// A free-running LVDS system clock (p, n) and its frequency (§1.4).
    pub sysclk_pins: (&'static str, &'static str),
    pub sysclk_hz: u64,
    pub qsfp0: QsfpPort,
    /// `hbm_cattrip` pin (HBM parts, §1.5).
    pub cattrip_pin: Option<&'static str>,
    /// `set_operating_conditions -design_power_budget` in W (§1.5).
    pub power_budget_w: u32,
    /// BITSTREAM.CONFIG.CONFIGRATE in MHz (§2.2).
    pub config_rate_mhz: &'static str,
    /// PCI subsystem ID (CD's per board, §2.1), with vendor 0x10EE.
    pub pci_subsystem_id: u16,
}

/// User images start here in the configuration flash; below is the golden image (§1.6).
pub const USER_IMAGE_ADDRESS: u32 = 0x0100_2000;
/// The configuration flash on all five cards (§1.6).
pub const FLASH_PART: &str = "mt25qu01g-spi-x1_x2_x4";
/// Its size in MiB (write_cfgmem -size).
pub const FLASH_SIZE_MIB: u32 = 128;

const MHZ_161: u64 = 161_132_812; // 161.1328125 MHz, rounded down to Hz
const MHZ_156: u64 = 156_250_000;

/// Every supported card.
pub fn boards() -> Vec<Board> {
    vec![
        Board {
            name: "u50",
            part: "xcu50-fsvh2104-2-e",
            hbm: true,
            pcie_block: "PCIE4C_X1Y0",
            pcie_refclk_pins: ("AF9", "AF8"),
            perst_pin: "AW27",
            perst_iostandard: "LVCMOS18",
            sysclk_pins: ("BB18", "BC18"),
            sysclk_hz: 100_000_000,
            qsfp0: QsfpPort {
                refclk_pins: ("N36", "N37"),
                refclk_hz: MHZ_161,
                cmac_site: "CMACE4_X0Y4",
                gt_group: "X0Y28~X0Y31",
            },
            cattrip_pin: Some("J18"),
            power_budget_w: 63,
            config_rate_mhz: "63.8",
            pci_subsystem_id: 0x9032,
        },
        Board {
            name: "u55c",
            part: "xcu55c-fsvh2892-2L-e",
            hbm: true,
            pcie_block: "PCIE4C_X1Y1",
            pcie_refclk_pins: ("AR15", "AR14"),
            perst_pin: "BF41",
            perst_iostandard: "LVCMOS18",
            sysclk_pins: ("BK43", "BK44"),
            sysclk_hz: 100_000_000,
            qsfp0: QsfpPort {
                refclk_pins: ("AD42", "AD43"),
                refclk_hz: MHZ_161,
                cmac_site: "CMACE4_X0Y3",
                gt_group: "X0Y24~X0Y27",
            },
            cattrip_pin: Some("BE45"),
            power_budget_w: 100,
            config_rate_mhz: "63.8",
            // CD has no U55C target; its U55N id.
            pci_subsystem_id: 0x9037,
        },
        Board {
            name: "u200",
            part: "xcu200-fsgd2104-2-e",
            hbm: false,
            pcie_block: "X1Y2",
            pcie_refclk_pins: ("AM11", "AM10"),
            perst_pin: "BD21",
            perst_iostandard: "LVCMOS12",
            sysclk_pins: ("AY37", "AY38"),
            sysclk_hz: 300_000_000,
            qsfp0: QsfpPort {
                refclk_pins: ("M11", "M10"),
                refclk_hz: MHZ_156,
                cmac_site: "CMACE4_X0Y6",
                gt_group: "X1Y48~X1Y51",
            },
            cattrip_pin: None,
            power_budget_w: 160,
            config_rate_mhz: "63.8",
            pci_subsystem_id: 0x90C8,
        },
        Board {
            name: "u250",
            part: "xcu250-figd2104-2L-e",
            hbm: false,
            pcie_block: "X0Y1",
            pcie_refclk_pins: ("AM11", "AM10"),
            perst_pin: "BD21",
            perst_iostandard: "LVCMOS12",
            sysclk_pins: ("AY37", "AY38"),
            sysclk_hz: 300_000_000,
            qsfp0: QsfpPort {
                refclk_pins: ("M11", "M10"),
                refclk_hz: MHZ_156,
                cmac_site: "CMACE4_X0Y8",
                gt_group: "X1Y44~X1Y47",
            },
            cattrip_pin: None,
            power_budget_w: 160,
            config_rate_mhz: "72.9",
            pci_subsystem_id: 0x90FA,
        },
        Board {
            name: "u280",
            part: "xcu280-fsvh2892-2L-e",
            hbm: true,
            pcie_block: "PCIE4C_X1Y0",
            pcie_refclk_pins: ("AR15", "AR14"),
            perst_pin: "BH26",
            perst_iostandard: "LVCMOS18",
            sysclk_pins: ("G31", "F31"),
            sysclk_hz: 100_000_000,
            qsfp0: QsfpPort {
                refclk_pins: ("T42", "T43"),
                refclk_hz: MHZ_156,
                cmac_site: "CMACE4_X0Y6",
                gt_group: "X0Y40~X0Y43",
            },
            cattrip_pin: Some("D32"),
            power_budget_w: 160,
            config_rate_mhz: "85.0",
            pci_subsystem_id: 0x9118,
        },
    ]
}

/// A board by its name, case-insensitively.
pub fn board(name: &str) -> Option<Board> {
    boards()
        .into_iter()
        .find(|b| b.name.eq_ignore_ascii_case(name))
}

/// Names of the supported boards, for error messages.
pub fn board_names() -> Vec<&'static str> {
    boards().iter().map(|b| b.name).collect()
}

impl Board {
    /// The PCIe hard block IP: `pcie4c_uscale_plus` on the HBM parts (§1.2).
    pub fn pcie_ip(&self) -> &'static str {
        if self.hbm {
            "pcie4c_uscale_plus"
        } else {
            "pcie4_uscale_plus"
        }
    }

    /// MMCM settings from the system clock to 125 MHz: (input period in ns,
    /// DIVCLK_DIVIDE, CLKFBOUT_MULT_F, CLKOUT0_DIVIDE_F), VCO at 1000 MHz.
    pub fn mmcm_125mhz(&self) -> (f64, u32, f64, f64) {
        let period_ns = 1e9 / self.sysclk_hz as f64;
        match self.sysclk_hz {
            100_000_000 => (period_ns, 1, 10.0, 8.0),
            // 300 MHz / 3 = 100 MHz at the phase detector.
            300_000_000 => (period_ns, 3, 10.0, 8.0),
            hz => panic!("no MMCM settings for a {hz} Hz system clock"),
        }
    }

    /// The QSFP reference clock in MHz as the CMAC IP spells it.
    pub fn qsfp_refclk_mhz(&self) -> &'static str {
        match self.qsfp0.refclk_hz {
            MHZ_161 => "161.1328125",
            MHZ_156 => "156.25",
            hz => panic!("no CMAC setting for a {hz} Hz reference clock"),
        }
    }

    /// Period of the QSFP reference clock in ns, 3 decimals (for create_clock).
    pub fn qsfp_refclk_period_ns(&self) -> String {
        format!("{:.3}", 1e9 / self.qsfp0.refclk_hz as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_board_is_complete_and_pins_are_not_shared() {
        let all = boards();
        assert_eq!(board_names(), ["u50", "u55c", "u200", "u250", "u280"]);
        for b in &all {
            assert!(
                b.part.starts_with(&format!("xc{}", b.name)),
                "{}: part {}",
                b.name,
                b.part
            );
            assert_eq!(b.hbm, b.cattrip_pin.is_some(), "{}", b.name);
            let mut pins = vec![
                b.pcie_refclk_pins.0,
                b.pcie_refclk_pins.1,
                b.perst_pin,
                b.sysclk_pins.0,
                b.sysclk_pins.1,
                b.qsfp0.refclk_pins.0,
                b.qsfp0.refclk_pins.1,
            ];
            pins.extend(b.cattrip_pin);
            for p in &pins {
                assert!(
                    p.len() >= 2
                        && p.chars().take_while(|c| c.is_ascii_uppercase()).count() >= 1
                        && p.trim_start_matches(|c: char| c.is_ascii_uppercase())
                            .chars()
                            .all(|c| c.is_ascii_digit()),
                    "{}: {p} is not a package pin name",
                    b.name
                );
            }
            let n = pins.len();
            pins.sort();
            pins.dedup();
            assert_eq!(pins.len(), n, "{}: a pin is used twice", b.name);
            let (_, div, mult, out) = b.mmcm_125mhz();
            let vco = b.sysclk_hz as f64 / div as f64 * mult;
            assert!((800e6..=1600e6).contains(&vco), "{}: VCO {vco}", b.name);
            assert!((vco / out - 125e6).abs() < 1.0, "{}", b.name);
            b.qsfp_refclk_mhz();
        }
        assert_eq!(board("U250").unwrap().pcie_ip(), "pcie4_uscale_plus");
        assert_eq!(board("u280").unwrap().pcie_ip(), "pcie4c_uscale_plus");
        assert!(board("u45n").is_none());
    }
}

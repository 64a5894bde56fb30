//! The host's view of the core's CSR port: single register reads and writes,
//! as a BAR access on the card would make them. The protocol lives here once;
//! a bare core (`Sim<HomaCore>`, which only ticks) and the whole card
//! (`Card`, which steps its PCIe and Ethernet ports too) both use it.

use crate::{HomaCore, Sim};

/// Cycles a CSR read may take before the core is declared hung.
pub const CSR_READ_TIMEOUT_CYCLES: u64 = 64;

/// A CSR read that got no answer: the core is broken or held in reset.
#[derive(Debug, thiserror::Error)]
#[error("CSR read of {addr:#08x} got no csr_rd_valid within {CSR_READ_TIMEOUT_CYCLES} cycles (at cycle {cycle})")]
pub struct CsrTimeout {
    pub addr: u32,
    pub cycle: u64,
}

/// Whatever owns the core's CSR port and advances its clock.
pub(crate) trait CsrPort {
    fn core(&mut self) -> &mut Sim<HomaCore>;
    /// One clock cycle of everything the port's owner simulates.
    fn clock(&mut self);
}

impl CsrPort for Sim<HomaCore> {
    fn core(&mut self) -> &mut Sim<HomaCore> {
        self
    }
    fn clock(&mut self) {
        self.tick();
    }
}

/// Writes one 32-bit register; takes one cycle.
pub(crate) fn write(port: &mut impl CsrPort, addr: u32, data: u32) {
    let core = port.core();
    core.set_csr_addr(addr);
    core.set_csr_wr_data(data);
    core.set_csr_wr_en(true);
    core.set_csr_rd_en(false);
    port.clock();
    port.core().set_csr_wr_en(false);
}

/// Reads one 32-bit register; takes the cycles until `csr_rd_valid`, and one more.
pub(crate) fn read(port: &mut impl CsrPort, addr: u32) -> Result<u32, CsrTimeout> {
    let core = port.core();
    core.set_csr_addr(addr);
    core.set_csr_rd_en(true);
    // Both enables, every time: another driver of the port (the completer,
    // `bar_link`) may have left one set.
    core.set_csr_wr_en(false);
    port.clock();
    port.core().set_csr_rd_en(false);
    for _ in 0..CSR_READ_TIMEOUT_CYCLES {
        if port.core().csr_rd_valid() {
            let data = port.core().csr_rd_data();
            port.clock();
            return Ok(data);
        }
        port.clock();
    }
    Err(CsrTimeout {
        addr,
        cycle: port.core().cycle(),
    })
}

impl Sim<HomaCore> {
    /// Holds reset for `cycles` cycles, then releases it.
    pub fn reset(&mut self, cycles: u64) {
        self.set_reset(true);
        for _ in 0..cycles {
            self.tick();
        }
        self.set_reset(false);
    }

    /// Writes one 32-bit register; takes one cycle.
    pub fn csr_write(&mut self, addr: u32, data: u32) {
        write(self, addr, data);
    }

    /// Reads one 32-bit register; takes the cycles until `csr_rd_valid`.
    pub fn csr_read(&mut self, addr: u32) -> Result<u32, CsrTimeout> {
        read(self, addr)
    }
}

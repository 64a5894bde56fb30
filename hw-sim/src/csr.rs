//! The host's view of the core's CSR port: single register reads and writes,
//! as a BAR access on the card would make them.

use crate::{HomaCore, Sim};

/// Cycles a CSR read may take before the core is declared hung.
const CSR_READ_TIMEOUT_CYCLES: u64 = 16;

/// A CSR read that got no answer: the core is broken or held in reset.
#[derive(Debug, thiserror::Error)]
#[error("CSR read of {addr:#08x} got no csr_rd_valid within {CSR_READ_TIMEOUT_CYCLES} cycles (at cycle {cycle})")]
pub struct CsrTimeout {
    pub addr: u32,
    pub cycle: u64,
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
        self.set_csr_addr(addr);
        self.set_csr_wr_data(data);
        self.set_csr_wr_en(true);
        self.tick();
        self.set_csr_wr_en(false);
    }

    /// Reads one 32-bit register; takes the cycles until `csr_rd_valid`.
    pub fn csr_read(&mut self, addr: u32) -> Result<u32, CsrTimeout> {
        self.set_csr_addr(addr);
        self.set_csr_rd_en(true);
        self.tick();
        self.set_csr_rd_en(false);
        for _ in 0..CSR_READ_TIMEOUT_CYCLES {
            if self.csr_rd_valid() {
                let data = self.csr_rd_data();
                self.tick();
                return Ok(data);
            }
            self.tick();
        }
        Err(CsrTimeout {
            addr,
            cycle: self.cycle(),
        })
    }
}

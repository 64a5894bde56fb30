//! The UltraScale+ PCIe integrated block's user side as our TLP interface
//! sees it (PG213; field positions in `homa_hw::pcie::completer`'s notes):
//! the host's BAR accesses as completer-request (CQ) beats, and the
//! completer-completion (CC) beats the card answers with, parsed back. 512-bit
//! interface, Dword-aligned, straddle off.
//!
//! The completer side only (BAR reads and writes). The requester side (RQ/RC:
//! the card's DMA into the host's memory) is `root_complex.rs`; `pcie.rs`
//! still serves the core's idealised DMA ports, which the simulated card
//! uses.

/// Memory read and memory write request types (descriptor bits 78:75).
pub const REQ_MEM_READ: u8 = 0b0000;
pub const REQ_MEM_WRITE: u8 = 0b0001;
/// I/O read: a request type the card does not serve.
pub const REQ_IO_READ: u8 = 0b0010;

/// A request from the host to the card's BAR.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BarRequest {
    /// Request type (`REQ_*`).
    pub req_type: u8,
    /// Dword address within the BAR (byte address / 4).
    pub dw_addr: u64,
    /// Dwords covered, 1 to 1024 (a write carries that many in `data`).
    pub dwords: u32,
    pub first_be: u8,
    pub last_be: u8,
    pub requester: u16,
    pub tag: u8,
    pub tc: u8,
    pub attr: u8,
    /// Address type (descriptor bits 1:0), 0 for untranslated.
    pub at: u8,
    /// A write's payload, one entry per Dword.
    pub data: Vec<u32>,
}

/// One beat on the CQ stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CqBeat {
    /// 512 bits, word 0 = bits 31:0.
    pub tdata: [u32; 16],
    /// 183 bits.
    pub tuser: [u32; 6],
    pub tlast: bool,
}

fn put(words: &mut [u32], lsb: usize, width: usize, value: u64) {
    for i in 0..width {
        if value >> i & 1 == 1 {
            let b = lsb + i;
            words[b / 32] |= 1 << (b % 32);
        }
    }
}

fn get(words: &[u32], lsb: usize, width: usize) -> u64 {
    (0..width).fold(0, |v, i| {
        let b = lsb + i;
        v | (u64::from(words[b / 32] >> (b % 32) & 1) << i)
    })
}

impl BarRequest {
    /// The request as the hard block hands it over: a descriptor and the
    /// payload Dwords after it, 16 Dwords a beat.
    pub fn cq_beats(&self) -> Vec<CqBeat> {
        let mut dws = vec![0u32; 4];
        put(&mut dws, 0, 2, u64::from(self.at));
        put(&mut dws, 2, 62, self.dw_addr);
        put(&mut dws, 64, 11, u64::from(self.dwords));
        put(&mut dws, 75, 4, u64::from(self.req_type));
        put(&mut dws, 80, 16, u64::from(self.requester));
        put(&mut dws, 96, 8, u64::from(self.tag));
        put(&mut dws, 112, 3, 0); // BAR 0
        put(&mut dws, 115, 6, 24); // a 16 MiB aperture
        put(&mut dws, 121, 3, u64::from(self.tc));
        put(&mut dws, 124, 3, u64::from(self.attr));
        dws.extend(&self.data);
        let chunks: Vec<&[u32]> = dws.chunks(16).collect();
        let n = chunks.len();
        chunks
            .into_iter()
            .enumerate()
            .map(|(i, c)| {
                let mut tdata = [0; 16];
                tdata[..c.len()].copy_from_slice(c);
                let mut tuser = [0; 6];
                if i == 0 {
                    put(&mut tuser, 0, 4, u64::from(self.first_be));
                    put(&mut tuser, 8, 4, u64::from(self.last_be));
                    put(&mut tuser, 80, 1, 1);
                }
                CqBeat {
                    tdata,
                    tuser,
                    tlast: i + 1 == n,
                }
            })
            .collect()
    }
}

/// A completion as the card sent it on CC (one beat).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    pub lower_addr: u8,
    pub at: u8,
    pub byte_count: u32,
    pub dwords: u32,
    pub status: u8,
    pub requester: u16,
    pub tag: u8,
    pub tc: u8,
    pub attr: u8,
    /// The data Dwords `tkeep` marks after the 3-Dword descriptor.
    pub data: Vec<u32>,
}

/// Why a CC beat is malformed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CcError {
    #[error("tkeep {0:#06x} is not contiguous from Dword 0")]
    Keep(u16),
    #[error("tkeep covers {keep} Dwords, the descriptor says 3 + {dwords}")]
    Length { keep: u32, dwords: u32 },
}

impl Completion {
    /// Parses a single-beat completion; checks `tkeep` against its length.
    pub fn parse(tdata: &[u32; 16], tkeep: u16) -> Result<Completion, CcError> {
        if tkeep.count_ones() != 16 - tkeep.leading_zeros() {
            return Err(CcError::Keep(tkeep));
        }
        let dwords = get(tdata, 32, 11) as u32;
        let keep = tkeep.count_ones();
        if keep != 3 + dwords {
            return Err(CcError::Length { keep, dwords });
        }
        Ok(Completion {
            lower_addr: get(tdata, 0, 7) as u8,
            at: get(tdata, 8, 2) as u8,
            byte_count: get(tdata, 16, 13) as u32,
            dwords,
            status: get(tdata, 43, 3) as u8,
            requester: get(tdata, 48, 16) as u16,
            tag: get(tdata, 64, 8) as u8,
            tc: get(tdata, 89, 3) as u8,
            attr: get(tdata, 92, 3) as u8,
            data: tdata[3..3 + dwords as usize].to_vec(),
        })
    }
}

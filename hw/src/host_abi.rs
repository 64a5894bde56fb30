//! The memory layouts the host and the card share: TX descriptors and
//! completion entries. Defined once here; the RTL generators, the driver and
//! the tests all read offsets from these tables.
//!
//! DESIGN NOTES
//! ------------
//! Both records are 64 bytes, one beat of the 512-bit DMA datapath, so the
//! card fetches a descriptor with one read and writes a completion with one
//! write. Fields are little-endian (the host CPU's order) and lane i of a beat
//! is byte i of the record, so in the RTL a field is a plain slice of the beat
//! with no byte swapping.
//!
//! Rings: a TX ring and a completion ring per endpoint, each `1 << log2`
//! entries in host memory the driver registers with the IOMMU.
//! - TX: the host writes descriptors at its producer index and writes the new
//!   producer index to the endpoint's TX_PRODUCER register (the doorbell). The
//!   card reads descriptors up to it and reports how far it has taken them in
//!   TX_CONSUMER; a slot may be reused once the card has taken it.
//! - Completions: the card writes entries and advances CPL_PRODUCER; each entry
//!   carries a phase bit that flips on every pass over the ring, so the host
//!   finds new entries by polling memory alone (no register read on the fast
//!   path). The card never overwrites an entry the host has not consumed: the
//!   host reports consumption in CPL_CONSUMER.
//!
//! A descriptor the card cannot execute (length 0 or above the limit, a buffer
//! the IOMMU refuses) completes with an error status; the card goes on with
//! the next one.

use homa_wire::layout::Field;

/// Bytes per descriptor and per completion entry: one 512-bit beat.
pub const ENTRY_BYTES: usize = 64;

const fn f(name: &'static str, offset: usize, size: usize) -> Field {
    Field { name, offset, size }
}

/// A TX descriptor: send one message (a request, or the response to one).
pub mod tx_desc {
    use super::*;
    /// `opcode::*`.
    pub const OPCODE: Field = f("opcode", 0, 1);
    pub const FLAGS: Field = f("flags", 1, 1);
    /// The peer's Homa port (the server's port for a request).
    pub const PEER_PORT: Field = f("peer_port", 2, 2);
    /// Message length in bytes, 1 ..= MAX_MESSAGE_BYTES.
    pub const LENGTH: Field = f("length", 4, 4);
    /// The RPC id as this endpoint knows it: even for a request (the client
    /// numbers its RPCs), odd for a response (the client's id with bit 0 set).
    pub const RPC_ID: Field = f("rpc_id", 8, 8);
    /// IOVA of the message's first byte.
    pub const BUFFER: Field = f("buffer", 16, 8);
    /// The peer's IPv4 address as a number (10.0.0.1 is 0x0a000001).
    pub const PEER_IP: Field = f("peer_ip", 24, 4);
    /// The peer's MAC address, first byte on the wire first.
    pub const PEER_MAC: Field = f("peer_mac", 28, 6);
    /// Returned untouched in the TX completion.
    pub const COOKIE: Field = f("cookie", 40, 8);
    pub const FIELDS: &[Field] = &[
        OPCODE, FLAGS, PEER_PORT, LENGTH, RPC_ID, BUFFER, PEER_IP, PEER_MAC, COOKIE,
    ];

    pub mod opcode {
        pub const SEND_REQUEST: u8 = 1;
        pub const SEND_RESPONSE: u8 = 2;
    }
}

/// A completion entry, written by the card.
pub mod completion {
    use super::*;
    /// `kind::*`.
    pub const KIND: Field = f("kind", 0, 1);
    /// `status::*`.
    pub const STATUS: Field = f("status", 1, 1);
    pub const PEER_PORT: Field = f("peer_port", 2, 2);
    /// Message length in bytes.
    pub const LENGTH: Field = f("length", 4, 4);
    /// The RPC id as this endpoint knows it.
    pub const RPC_ID: Field = f("rpc_id", 8, 8);
    /// Received messages: where the message starts in the endpoint's RX buffer
    /// area, in bytes.
    pub const BUFFER_OFFSET: Field = f("buffer_offset", 16, 8);
    pub const PEER_IP: Field = f("peer_ip", 24, 4);
    pub const PEER_MAC: Field = f("peer_mac", 28, 6);
    /// TX completions: the descriptor's cookie.
    pub const COOKIE: Field = f("cookie", 40, 8);
    /// Received messages longer than one bpage: the indices of their bpages
    /// after the first (which `BUFFER_OFFSET` names), `BPAGE_INDEX_BITS`
    /// each, little-endian: bpage 1 in bits 11:0 of byte 34 on. Overlaps
    /// `COOKIE`, which received messages do not use.
    pub const BPAGES: Field = f("bpages", 34, 23);
    /// Bit 0: the phase of the pass over the ring this entry was written in
    /// (1 on the first pass, then 0, then 1...).
    pub const PHASE: Field = f("phase", 60, 4);
    pub const FIELDS: &[Field] = &[
        KIND,
        STATUS,
        PEER_PORT,
        LENGTH,
        RPC_ID,
        BUFFER_OFFSET,
        PEER_IP,
        PEER_MAC,
        COOKIE,
        PHASE,
    ];
    /// The fields of a received message's entry (`BPAGES` where TX
    /// completions have `COOKIE`).
    pub const RX_FIELDS: &[Field] = &[
        KIND,
        STATUS,
        PEER_PORT,
        LENGTH,
        RPC_ID,
        BUFFER_OFFSET,
        PEER_IP,
        PEER_MAC,
        BPAGES,
        PHASE,
    ];
    /// Bits of a bpage index in `BPAGES` (an RX area holds at most 4,096).
    pub const BPAGE_INDEX_BITS: usize = 12;
    /// Bpages a message may take: 1,000,000 bytes in 64 KiB pages.
    pub const MAX_MESSAGE_BPAGES: usize = 16;

    /// The bpage indices in a received entry's `BPAGES` (bpages 1 to
    /// `count - 1` of the message; bpage 0 is `BUFFER_OFFSET`'s).
    pub fn bpage_list(record: &[u8], count: usize) -> Vec<u32> {
        let bytes = &record[BPAGES.offset..BPAGES.end()];
        (1..count.min(MAX_MESSAGE_BPAGES))
            .map(|i| {
                let bit = (i - 1) * BPAGE_INDEX_BITS;
                let mut v = 0u32;
                for b in 0..BPAGE_INDEX_BITS {
                    let at = bit + b;
                    v |= (((bytes[at / 8] >> (at % 8)) & 1) as u32) << b;
                }
                v
            })
            .collect()
    }

    /// Writes `bpages` (bpages 1.. of a message) into `BPAGES`.
    pub fn put_bpage_list(record: &mut [u8], bpages: &[u32]) {
        let bytes = &mut record[BPAGES.offset..BPAGES.end()];
        bytes.fill(0);
        for (i, &page) in bpages.iter().enumerate().take(MAX_MESSAGE_BPAGES - 1) {
            for b in 0..BPAGE_INDEX_BITS {
                let at = i * BPAGE_INDEX_BITS + b;
                bytes[at / 8] |= (((page >> b) & 1) as u8) << (at % 8);
            }
        }
    }

    pub mod kind {
        /// A TX descriptor's message is released: every packet sent and the
        /// card done with it (a request once its response's first packet is
        /// in or it timed out, a response once its client acked it); the
        /// host may reuse its buffer.
        pub const TX_DONE: u8 = 1;
        pub const REQUEST_RECEIVED: u8 = 2;
        pub const RESPONSE_RECEIVED: u8 = 3;
    }

    pub mod status {
        pub const OK: u8 = 0;
        /// Length 0 or above the card's limit, or an unknown opcode.
        pub const BAD_DESCRIPTOR: u8 = 1;
        /// A DMA read of the buffer was refused (the IOMMU: memory the host
        /// did not register).
        pub const DMA_ERROR: u8 = 2;
        /// Its peer went silent for timeout_ticks: a request's response
        /// never came (the RPC failed), or a message waited for grants
        /// that never came; or (RESPONSE_RECEIVED) a response stalled part
        /// way and the card forgot it. An RX entry with a status other than
        /// OK carries no message: its buffer fields mean nothing, and its
        /// bpages are the card's (never give them back).
        pub const TIMEOUT: u8 = 3;
    }
}

/// Reads a little-endian field of up to 8 bytes from a record.
pub fn get(record: &[u8], field: Field) -> u64 {
    record[field.offset..field.end()]
        .iter()
        .rev()
        .fold(0u64, |acc, &b| (acc << 8) | b as u64)
}

/// Writes a little-endian field of up to 8 bytes into a record.
pub fn put(record: &mut [u8], field: Field, value: u64) {
    for (i, byte) in record[field.offset..field.end()].iter_mut().enumerate() {
        *byte = (value >> (8 * i)) as u8;
    }
}

/// A MAC address field: bytes in wire order.
pub fn get_mac(record: &[u8], field: Field) -> [u8; 6] {
    record[field.offset..field.end()].try_into().unwrap()
}

pub fn put_mac(record: &mut [u8], field: Field, mac: [u8; 6]) {
    record[field.offset..field.end()].copy_from_slice(&mac);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_fit_and_do_not_overlap() {
        assert!(
            (completion::MAX_MESSAGE_BPAGES - 1) * completion::BPAGE_INDEX_BITS
                <= 8 * completion::BPAGES.size
        );
        for fields in [tx_desc::FIELDS, completion::FIELDS, completion::RX_FIELDS] {
            let mut used = [false; ENTRY_BYTES];
            for fld in fields {
                assert!(fld.end() <= ENTRY_BYTES, "{} past the entry", fld.name);
                for b in &mut used[fld.offset..fld.end()] {
                    assert!(!*b, "{} overlaps", fld.name);
                    *b = true;
                }
            }
        }
    }

    #[test]
    fn bpage_list_round_trip() {
        let mut r = [0xffu8; ENTRY_BYTES];
        let pages: Vec<u32> = (1..16).map(|i| (i * 273) % 4096).collect();
        completion::put_bpage_list(&mut r, &pages);
        assert_eq!(completion::bpage_list(&r, 16), pages);
        assert_eq!(completion::bpage_list(&r, 3), pages[..2]);
        assert_eq!(r[completion::PHASE.offset], 0xff, "PHASE untouched");
    }

    #[test]
    fn little_endian_round_trip() {
        let mut r = [0u8; ENTRY_BYTES];
        put(&mut r, tx_desc::BUFFER, 0x1122_3344_5566_7788);
        assert_eq!(r[16], 0x88);
        assert_eq!(get(&r, tx_desc::BUFFER), 0x1122_3344_5566_7788);
    }
}

//! TX descriptors and completion entries as types: the 64-byte records of
//! `homa_hw::host_abi`, encoded and decoded with its field tables (no offset
//! is written here), so the host library never touches raw bytes.

use homa_hw::host_abi::{self, completion, tx_desc, ENTRY_BYTES};
use homa_hw::rx::bpage_pool::BPAGE_BYTES;

/// What a TX descriptor asks the card to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxOpcode {
    /// A client's request (the RPC id is even).
    Request,
    /// A server's response (the RPC id is the request's, as the server knows it: odd).
    Response,
}

/// A TX descriptor: one message to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TxDescriptor {
    pub opcode: TxOpcode,
    /// The peer's Homa port.
    pub peer_port: u16,
    /// Message length in bytes, 1 ..= `homa_hw::tx::engine::MAX_MESSAGE_BYTES`.
    pub length: u32,
    /// The RPC id as this endpoint knows it.
    pub rpc_id: u64,
    /// IOVA of the message's first byte.
    pub buffer: u64,
    /// The peer's IPv4 address as a number (10.0.0.1 is 0x0a000001).
    pub peer_ip: u32,
    /// The peer's MAC address, first byte on the wire first.
    pub peer_mac: [u8; 6],
    /// Returned untouched in the TX completion.
    pub cookie: u64,
}

impl TxDescriptor {
    /// The record the card reads.
    pub fn encode(&self) -> [u8; ENTRY_BYTES] {
        let mut d = [0u8; ENTRY_BYTES];
        let opcode = match self.opcode {
            TxOpcode::Request => tx_desc::opcode::SEND_REQUEST,
            TxOpcode::Response => tx_desc::opcode::SEND_RESPONSE,
        };
        host_abi::put(&mut d, tx_desc::OPCODE, opcode.into());
        host_abi::put(&mut d, tx_desc::PEER_PORT, self.peer_port.into());
        host_abi::put(&mut d, tx_desc::LENGTH, self.length.into());
        host_abi::put(&mut d, tx_desc::RPC_ID, self.rpc_id);
        host_abi::put(&mut d, tx_desc::BUFFER, self.buffer);
        host_abi::put(&mut d, tx_desc::PEER_IP, self.peer_ip.into());
        host_abi::put_mac(&mut d, tx_desc::PEER_MAC, self.peer_mac);
        host_abi::put(&mut d, tx_desc::COOKIE, self.cookie);
        d
    }
}

/// What a completion reports (`host_abi::completion::kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompletionKind {
    /// A TX descriptor was executed (or refused: see the status).
    TxDone,
    /// A request arrived for this endpoint (a server's side).
    RequestReceived,
    /// The response to one of this endpoint's requests arrived.
    ResponseReceived,
    /// A kind this driver does not know (a newer bitstream).
    Unknown(u8),
}

/// How it went (`host_abi::completion::status`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompletionStatus {
    Ok,
    /// Length 0 or above the card's limit, or an unknown opcode.
    BadDescriptor,
    /// A DMA read of the message was refused (memory not registered).
    DmaError,
    /// The peer went silent for timeout_ticks (no response, no grant).
    Timeout,
    Unknown(u8),
}

/// A completion entry, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    pub kind: CompletionKind,
    pub status: CompletionStatus,
    /// The RPC id as this endpoint knows it (a server sees the client's id ^ 1).
    pub rpc_id: u64,
    pub peer_ip: u32,
    pub peer_port: u16,
    pub peer_mac: [u8; 6],
    /// Message length in bytes.
    pub length: u32,
    /// Received messages: where the message starts in the endpoint's RX area,
    /// in bytes (a bpage index times `BPAGE_BYTES`).
    pub buffer_offset: u64,
    /// Received messages longer than a bpage: the indices of bpages 1.. of
    /// the message (`bpages()` gives them all, in order).
    pub more_bpages: [u32; completion::MAX_MESSAGE_BPAGES - 1],
    /// TX completions: the descriptor's cookie.
    pub cookie: u64,
}

impl Completion {
    /// Decodes a record the card wrote.
    pub fn decode(entry: &[u8; ENTRY_BYTES]) -> Completion {
        let kind = match host_abi::get(entry, completion::KIND) as u8 {
            completion::kind::TX_DONE => CompletionKind::TxDone,
            completion::kind::REQUEST_RECEIVED => CompletionKind::RequestReceived,
            completion::kind::RESPONSE_RECEIVED => CompletionKind::ResponseReceived,
            other => CompletionKind::Unknown(other),
        };
        let status = match host_abi::get(entry, completion::STATUS) as u8 {
            completion::status::OK => CompletionStatus::Ok,
            completion::status::BAD_DESCRIPTOR => CompletionStatus::BadDescriptor,
            completion::status::DMA_ERROR => CompletionStatus::DmaError,
            completion::status::TIMEOUT => CompletionStatus::Timeout,
            other => CompletionStatus::Unknown(other),
        };
        Completion {
            kind,
            status,
            rpc_id: host_abi::get(entry, completion::RPC_ID),
            peer_ip: host_abi::get(entry, completion::PEER_IP) as u32,
            peer_port: host_abi::get(entry, completion::PEER_PORT) as u16,
            peer_mac: host_abi::get_mac(entry, completion::PEER_MAC),
            length: host_abi::get(entry, completion::LENGTH) as u32,
            buffer_offset: host_abi::get(entry, completion::BUFFER_OFFSET),
            more_bpages: {
                let mut more = [0u32; completion::MAX_MESSAGE_BPAGES - 1];
                let list = completion::bpage_list(entry, completion::MAX_MESSAGE_BPAGES);
                more.copy_from_slice(&list);
                more
            },
            cookie: host_abi::get(entry, completion::COOKIE),
        }
    }

    /// The bpage a received message starts in (at the bpage's start).
    pub fn bpage(&self) -> u32 {
        (self.buffer_offset / BPAGE_BYTES) as u32
    }

    /// Every bpage a received message occupies, in message order: byte i is
    /// at byte `i % BPAGE_BYTES` of bpage `bpages()[i / BPAGE_BYTES]`.
    pub fn bpages(&self) -> Vec<u32> {
        let count = (self.length as u64).div_ceil(BPAGE_BYTES).max(1) as usize;
        std::iter::once(self.bpage())
            .chain(self.more_bpages.iter().copied())
            .take(count.min(completion::MAX_MESSAGE_BPAGES))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptor_fields_land_where_the_host_abi_says() {
        let d = TxDescriptor {
            opcode: TxOpcode::Response,
            peer_port: 0x1234,
            length: 40_000,
            rpc_id: 0x0102_0304_0506_0709,
            buffer: 0x1_0000_0040,
            peer_ip: 0x0a00_0002,
            peer_mac: [2, 0, 0, 0, 0, 9],
            cookie: 77,
        };
        let e = d.encode();
        assert_eq!(
            host_abi::get(&e, tx_desc::OPCODE) as u8,
            tx_desc::opcode::SEND_RESPONSE
        );
        assert_eq!(host_abi::get(&e, tx_desc::PEER_PORT), 0x1234);
        assert_eq!(host_abi::get(&e, tx_desc::LENGTH), 40_000);
        assert_eq!(host_abi::get(&e, tx_desc::RPC_ID), 0x0102_0304_0506_0709);
        assert_eq!(host_abi::get(&e, tx_desc::BUFFER), 0x1_0000_0040);
        assert_eq!(host_abi::get(&e, tx_desc::PEER_IP), 0x0a00_0002);
        assert_eq!(host_abi::get_mac(&e, tx_desc::PEER_MAC), [2, 0, 0, 0, 0, 9]);
        assert_eq!(host_abi::get(&e, tx_desc::COOKIE), 77);
    }

    #[test]
    fn completions_decode_every_field() {
        let mut e = [0u8; ENTRY_BYTES];
        host_abi::put(
            &mut e,
            completion::KIND,
            completion::kind::REQUEST_RECEIVED.into(),
        );
        host_abi::put(
            &mut e,
            completion::STATUS,
            completion::status::DMA_ERROR.into(),
        );
        host_abi::put(&mut e, completion::PEER_PORT, 99);
        host_abi::put(&mut e, completion::LENGTH, 1425);
        host_abi::put(&mut e, completion::RPC_ID, 7);
        host_abi::put(&mut e, completion::BUFFER_OFFSET, 3 * BPAGE_BYTES);
        host_abi::put(&mut e, completion::PEER_IP, 0x0a00_0001);
        host_abi::put_mac(&mut e, completion::PEER_MAC, [2, 0, 0, 0, 0, 1]);
        host_abi::put(&mut e, completion::COOKIE, 5);
        let c = Completion::decode(&e);
        assert_eq!(c.kind, CompletionKind::RequestReceived);
        assert_eq!(c.status, CompletionStatus::DmaError);
        assert_eq!(
            (c.peer_port, c.length, c.rpc_id, c.peer_ip, c.cookie),
            (99, 1425, 7, 0x0a00_0001, 5)
        );
        assert_eq!(c.peer_mac, [2, 0, 0, 0, 0, 1]);
        assert_eq!(c.bpage(), 3);
        assert_eq!(c.bpages(), [3]);
        // A message of three bpages names the other two in BPAGES.
        host_abi::put(&mut e, completion::LENGTH, 2 * BPAGE_BYTES + 1);
        completion::put_bpage_list(&mut e, &[40, 4095]);
        assert_eq!(Completion::decode(&e).bpages(), [3, 40, 4095]);
        host_abi::put(&mut e, completion::KIND, 0xee);
        assert_eq!(Completion::decode(&e).kind, CompletionKind::Unknown(0xee));
    }
}

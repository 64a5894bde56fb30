//! The register map: what the driver finds behind the card's CSR window.
//!
//! DESIGN NOTES
//! ------------
//! Registers are grouped in blocks that form a linked list, the convention
//! Corundum uses: every block starts with three words, its type, its version and
//! the byte address of the next block (0 ends the list). The list starts at
//! address 0. A driver walks the list, finds each block by type, and checks the
//! version before it touches anything else, so it never hard-codes an offset it
//! could discover and refuses a bitstream it does not understand.
//!
//! This file is the one place block types, versions, bases and register offsets
//! are written down: the RTL generators take them from here, and so do the
//! driver and the tests. Every register is 32 bits wide and word aligned;
//! reads have no side effects.
//!
//! Versions are `major << 16 | minor`; a driver accepts a block whose major
//! version it knows and whose minor version is at least the one it needs.

/// Bytes of CSR address space each register block occupies.
pub const BLOCK_SPAN: u32 = 0x100;

/// Width of the CSR byte address at the core's port (16 MiB window).
pub const CSR_ADDR_BITS: usize = 24;

/// Offsets of the header words every block starts with.
pub mod header {
    pub const TYPE: u32 = 0x00;
    pub const VERSION: u32 = 0x04;
    pub const NEXT: u32 = 0x08;
    /// First register after the header.
    pub const FIRST_REGISTER: u32 = 0x0c;
}

/// Block type codes: "HM" and a block number, so a dump of the CSR space is
/// recognisable at a glance.
pub mod block_type {
    pub const ID: u32 = 0x484d_0001;
    pub const SCRATCH: u32 = 0x484d_0002;
    pub const RX_COUNTERS: u32 = 0x484d_0003;
    pub const INTERFACE: u32 = 0x484d_0004;
    pub const ENDPOINT: u32 = 0x484d_0005;
    pub const GRANT: u32 = 0x484d_0006;
    pub const TIMER: u32 = 0x484d_0007;
    pub const INTERRUPT: u32 = 0x484d_0008;
}

/// The ID block: what this bitstream is and how it was built. Always first.
pub mod id {
    pub const BASE: u32 = 0x0000;
    pub const VERSION: u32 = 0x0001_0000;
    /// Design version: `major << 16 | minor << 8 | patch` of the homa-nic release.
    pub const DESIGN_VERSION: u32 = 0x0c;
    /// Core clock in kHz (250 000 on the card).
    pub const CLOCK_KHZ: u32 = 0x10;
    /// Width of the Ethernet and DMA datapaths in bits.
    pub const DATAPATH_BITS: u32 = 0x14;
    /// The Homa wire format the core speaks, as `0xYYYYMM00` of the
    /// HomaModule format change it follows (see homa_wire::layout).
    pub const WIRE_FORMAT: u32 = 0x18;
    /// Value of WIRE_FORMAT for the 2025-07 format.
    pub const WIRE_FORMAT_2025_07: u32 = 0x2025_0700;
}

/// A read/write scratch register, for bring-up: proves CSR writes land.
pub mod scratch {
    pub const BASE: u32 = 0x0100;
    pub const VERSION: u32 = 0x0001_0000;
    /// Read/write; 0 after reset.
    pub const SCRATCH: u32 = 0x0c;
    /// Read-only: the bitwise complement of SCRATCH (proves read logic is live).
    pub const SCRATCH_INVERTED: u32 = 0x10;
}

/// Frames received, one counter per RX parser verdict (`homa_hw::rx::parser::RxVerdict`).
pub mod rx_counters {
    pub const BASE: u32 = 0x0200;
    /// 1.2: the RX path counters after the verdict counters; 0x64 counts
    /// duplicates (it counted out-of-order DATA in 1.1), control packets by
    /// kind from 0x68. 1.3: CUTOFFS sent, acks in DATA, bad doorbells from 0x88.
    /// 1.4: DATA_ACCEPTED (0x98). 1.5: RESENDs and ACKs served (no longer
    /// in 0x4c), sender events dropped at 0x78, the sender's counters from
    /// 0x9c. 1.6: the receiver's from 0xbc. 1.7: BUSYs and RPC_UNKNOWNs
    /// sent (0xc4, 0xc8); ACKS_SENT counts the TX engine's answers too.
    /// 1.8: completions dropped for closed endpoints (0xcc).
    pub const VERSION: u32 = 0x0001_0008;
    /// Counter of verdict v (0 = accepted, else the drop reason) is at
    /// `FIRST_COUNTER + 4 v`; 32 bits, wrapping.
    pub const FIRST_COUNTER: u32 = 0x0c;
    /// Accepted frames the RX FIFO had no room for.
    pub const FIFO_OVERFLOWS: u32 = 0x44;
    /// Messages delivered into an endpoint's buffers and completed.
    pub const MESSAGES_DELIVERED: u32 = 0x48;
    /// Control packets counted and ignored: BUSY, RPC_UNKNOWN, FREEZE, and
    /// NEED_ACK for a port no endpoint serves.
    pub const OTHER_CONTROL: u32 = 0x4c;
    /// DATA for a port no endpoint serves.
    pub const DROP_NO_ENDPOINT: u32 = 0x50;
    /// DATA of a new RPC whose RPC table set was full.
    pub const DROP_RPC_FULL: u32 = 0x54;
    /// DATA of a new RPC whose endpoint had no bpage.
    pub const DROP_NO_BPAGE: u32 = 0x58;
    /// DATA of a message of 0 bytes or more than 1,000,000.
    pub const DROP_TOO_BIG: u32 = 0x5c;
    /// ARP requests for the card's address answered.
    pub const ARP_REPLIES: u32 = 0x60;
    /// DATA whose bytes were all in already (or of a message completed
    /// moments ago): dropped.
    pub const DUPLICATES: u32 = 0x64;
    /// DATA dropped for its range: partly in already, past its message's
    /// end, of another length than the message's, or opening a fifth gap.
    pub const DROP_BAD_RANGE: u32 = 0x68;
    /// GRANT packets received.
    pub const GRANTS_RECEIVED: u32 = 0x6c;
    /// CUTOFFS packets received.
    pub const CUTOFFS_RECEIVED: u32 = 0x70;
    /// GRANTs for no outbound message in flight (late, or not ours).
    pub const GRANTS_UNKNOWN: u32 = 0x74;
    /// Sender events (GRANT, RESEND, ACK, an ack in DATA, a response begun)
    /// dropped because the TX engine's queue of them was full.
    pub const SENDER_EVENTS_DROPPED: u32 = 0x78;
    /// NEED_ACKs received for an open port.
    pub const NEED_ACKS_RECEIVED: u32 = 0x7c;
    /// ACKs sent: for each response completed, and in answer to a NEED_ACK
    /// for an RPC the card no longer has.
    pub const ACKS_SENT: u32 = 0x80;
    /// ACKs of responses completed not sent: another was waiting to go (the
    /// server asks again with NEED_ACK).
    pub const ACKS_DROPPED: u32 = 0x84;
    /// CUTOFFS sent to peers whose DATA carried another cutoff version.
    pub const CUTOFFS_SENT: u32 = 0x88;
    /// CUTOFFS not sent: another was waiting to go.
    pub const CUTOFFS_DROPPED: u32 = 0x8c;
    /// Acks of finished RPCs (the card as client) carried in DATA packets.
    pub const ACKS_PIGGYBACKED: u32 = 0x90;
    /// TX doorbells more than a ring ahead of the descriptors the card took
    /// (bad host input): skipped, the ring going on from that index.
    pub const DOORBELLS_BEYOND_RING: u32 = 0x94;
    /// DATA packets the RX engine took (their bytes counted, the payload
    /// written): with the drop counters, every accepted frame is counted
    /// once (`FIFO_OVERFLOWS` + `DATA_ACCEPTED` + the RX engine's drops and
    /// control counts = frames accepted). Kept by the counters block itself.
    pub const DATA_ACCEPTED: u32 = 0x98;
    /// RESEND packets received.
    pub const RESENDS_RECEIVED: u32 = 0x9c;
    /// ACK packets received.
    pub const ACKS_RECEIVED: u32 = 0xa0;
    /// RESENDs for no outbound message here (released, or not ours): each
    /// answered with BUSY or RPC_UNKNOWN.
    pub const RESENDS_UNKNOWN: u32 = 0xa4;
    /// DATA packets sent again (RESEND served).
    pub const PACKETS_RETRANSMITTED: u32 = 0xa8;
    /// Outbound messages released by timeout_ticks of their peer's silence
    /// (no ack, no response, no grant came).
    pub const LINGERS_EXPIRED: u32 = 0xac;
    /// NEED_ACKs sent (a response all sent, its client silent).
    pub const NEED_ACKS_SENT: u32 = 0xb0;
    /// RESENDs sent for a response (a request all sent, its server silent).
    pub const RESPONSE_RESENDS_SENT: u32 = 0xb4;
    /// Outbound messages the TX engine holds now (being sent, or sent and
    /// not yet released): a level, not a count; 0 when all is settled.
    pub const TX_MESSAGES_HELD: u32 = 0xb8;
    /// Inbound messages forgotten unfinished after timeout_ticks of their
    /// sender's silence: slot, bpages and grants reclaimed (a response's
    /// RPC failed with status TIMEOUT; a request was never seen by the
    /// host). Delivered requests that expire unanswered are not counted.
    pub const INBOUND_EXPIRED: u32 = 0xbc;
    /// RPC table slots in use now: inbound messages arriving, and requests
    /// delivered whose response is not yet released. A level, not a count;
    /// 0 when all is settled.
    pub const RX_MESSAGES_HELD: u32 = 0xc0;
    /// BUSYs sent: a client asked for a response the host has not posted
    /// yet (its request is here, in service), so the client keeps waiting.
    pub const BUSYS_SENT: u32 = 0xc4;
    /// RPC_UNKNOWNs sent: a RESEND for an RPC the card has no trace of (its
    /// client restarts a request, its server forgets a response).
    pub const RPC_UNKNOWNS_SENT: u32 = 0xc8;
    /// Completions not written because their endpoint had closed (or its
    /// port was written) by the time they were due: nobody reads that ring.
    pub const COMPLETIONS_DROPPED: u32 = 0xcc;
    /// The counters after the sender's (the receiver's state, answers to
    /// RESENDs, completions dropped) in address order.
    pub const RECEIVER_COUNTERS: [u32; 5] = [
        INBOUND_EXPIRED,
        RX_MESSAGES_HELD,
        BUSYS_SENT,
        RPC_UNKNOWNS_SENT,
        COMPLETIONS_DROPPED,
    ];
    /// The sender's counters (after DATA_ACCEPTED) in address order.
    pub const SENDER_COUNTERS: [u32; 8] = [
        RESENDS_RECEIVED,
        ACKS_RECEIVED,
        RESENDS_UNKNOWN,
        PACKETS_RETRANSMITTED,
        LINGERS_EXPIRED,
        NEED_ACKS_SENT,
        RESPONSE_RESENDS_SENT,
        TX_MESSAGES_HELD,
    ];
    /// The RX path counters in address order, 4 bytes apart.
    pub const PATH_COUNTERS: [u32; 21] = [
        FIFO_OVERFLOWS,
        MESSAGES_DELIVERED,
        OTHER_CONTROL,
        DROP_NO_ENDPOINT,
        DROP_RPC_FULL,
        DROP_NO_BPAGE,
        DROP_TOO_BIG,
        ARP_REPLIES,
        DUPLICATES,
        DROP_BAD_RANGE,
        GRANTS_RECEIVED,
        CUTOFFS_RECEIVED,
        GRANTS_UNKNOWN,
        SENDER_EVENTS_DROPPED,
        NEED_ACKS_RECEIVED,
        ACKS_SENT,
        ACKS_DROPPED,
        CUTOFFS_SENT,
        CUTOFFS_DROPPED,
        ACKS_PIGGYBACKED,
        DOORBELLS_BEYOND_RING,
    ];
}

/// The card's own addresses on the network.
pub mod interface {
    pub const BASE: u32 = 0x0300;
    /// 1.1: RESET.
    pub const VERSION: u32 = 0x0001_0001;
    /// MAC address: bytes 0..4 in wire order in bits 31:0 (byte 0 in bits
    /// 7:0), bytes 4..6 in MAC_HI bits 15:0. RW.
    pub const MAC_LO: u32 = 0x0c;
    pub const MAC_HI: u32 = 0x10;
    /// IPv4 address as a number (10.0.0.1 is 0x0a000001). RW.
    pub const IPV4: u32 = 0x14;
    /// Write RESET_MAGIC: the card reset. Every RPC the card holds is
    /// dropped and every endpoint closed: the engines, tables, pools, timers
    /// and counters go back to their state after power-on, without a
    /// completion for anything. The addresses here and the tunables (grant
    /// and timer blocks) stay. Reads 1 until the card is ready again (it
    /// first lets the frame and the DMA write under way finish, then
    /// settles for `core::BOOT_CYCLES`), then 0. Other values are ignored.
    pub const RESET: u32 = 0x18;
    /// "RST!".
    pub const RESET_MAGIC: u32 = 0x5253_5421;
}

/// The receiver's grant scheduler: HomaModule's tunables (same names and
/// defaults; writes take effect for the next event) and its state.
pub mod grant {
    pub const BASE: u32 = 0x0400;
    pub const VERSION: u32 = 0x0001_0000;
    /// Most bytes granted but not yet received over all inbound messages. RW.
    pub const MAX_INCOMING: u32 = 0x0c;
    /// Messages granted to at once, 1..=8 (written values are clamped). RW.
    pub const MAX_OVERCOMMIT: u32 = 0x10;
    /// Bytes granted ahead of what arrived; 0: max_incoming / (active + 1). RW.
    pub const WINDOW: u32 = 0x14;
    /// Highest priority for scheduled bytes, 0..=7. RW.
    pub const MAX_SCHED_PRIO: u32 = 0x18;
    /// Bytes a sender sends without grants (must match the senders'). RW.
    pub const UNSCHED_BYTES: u32 = 0x1c;
    /// Per mille of granted bytes that go to the oldest message; 0: none. RW.
    pub const GRANT_FIFO_FRACTION: u32 = 0x20;
    /// Bytes of each FIFO grant. RW.
    pub const FIFO_GRANT_INCREMENT: u32 = 0x24;
    /// Bytes granted but not yet received, now. RO.
    pub const TOTAL_INCOMING: u32 = 0x28;
    /// Messages in the active set, now. RO.
    pub const ACTIVE_COUNT: u32 = 0x2c;
    /// GRANT packets sent (wraps). RO.
    pub const GRANTS_SENT: u32 = 0x30;
    /// HomaModule's max_incoming, the register's reset value.
    pub const MAX_INCOMING_DEFAULT: u32 = 400_000;
    /// HomaModule's unsched_bytes, the register's reset value.
    pub const UNSCHED_BYTES_DEFAULT: u32 = 40_000;
    /// The tunables' registers and HomaModule's defaults.
    pub const DEFAULTS: [(u32, u32); 7] = [
        (MAX_INCOMING, MAX_INCOMING_DEFAULT),
        (MAX_OVERCOMMIT, 8),
        (WINDOW, 0),
        (MAX_SCHED_PRIO, 3),
        (UNSCHED_BYTES, UNSCHED_BYTES_DEFAULT),
        (GRANT_FIFO_FRACTION, 50),
        (FIFO_GRANT_INCREMENT, 50_000),
    ];
}

/// The timer block: the tick and HomaModule's retransmission tunables, in
/// ticks (HomaModule's names), and what the resend timer did.
pub mod timer {
    pub const BASE: u32 = 0x0500;
    pub const VERSION: u32 = 0x0001_0003;
    /// The tick, in ns (1 to 2^24; the core counts it in cycles of 4 ns).
    /// HomaModule ticks every 1 ms; a card can afford far less. 0: the
    /// core's prescaler stops and each cycle its `timer_tick` input is high
    /// is a tick (a harness running a slow simulated card against real-time
    /// peers drives it from wall time; the board top levels tie it low, so
    /// there 0 stops the timers). RW.
    pub const TICK_NS: u32 = 0x0c;
    /// Ticks of silence before a receiver's first RESEND; 0: none. RW.
    pub const RESEND_TICKS: u32 = 0x10;
    /// Ticks between RESENDs while the silence lasts. RW.
    pub const RESEND_INTERVAL: u32 = 0x14;
    /// RESEND packets sent (wraps). RO.
    pub const RESENDS_SENT: u32 = 0x18;
    /// Sweeps of the resend timer over every RPC slot finished (wraps). RO.
    pub const SWEEPS: u32 = 0x1c;
    /// HomaModule's timeout_ticks: ticks of a peer's silence after which
    /// the card gives up on a message. Sending: released without an ack
    /// (its receiver has it all, or is gone; a request's RPC fails).
    /// Receiving: forgotten, its slot and bpages reclaimed (a response's
    /// RPC fails). 0 reads as 1. RW.
    pub const TIMEOUT_TICKS: u32 = 0x20;
    /// The default tick: 10 us, above a sweep while a few hundred
    /// messages are in flight (1,024 cycles plus 16 per busy group of 16
    /// slots: `rx::resend_timer`).
    pub const TICK_NS_DEFAULT: u32 = 10_000;
    /// The tunables' registers and their defaults: HomaModule's resend
    /// ticks (5, 5) on a 10 us tick give the first RESEND 40-50 us into a
    /// silence, a hundred times sooner than HomaModule's 5 ms (its tick is
    /// 1 ms), and a datacenter RTT of a few microseconds many times over.
    /// timeout_ticks is 200 (2 ms), not HomaModule's 100 ticks (100 ms):
    /// forty RESEND intervals of silence is a peer gone, and every tick a
    /// sent message lingers holds the host's buffer.
    pub const DEFAULTS: [(u32, u32); 4] = [
        (TICK_NS, TICK_NS_DEFAULT),
        (RESEND_TICKS, RESEND_TICKS_DEFAULT),
        (RESEND_INTERVAL, RESEND_INTERVAL_DEFAULT),
        (TIMEOUT_TICKS, TIMEOUT_TICKS_DEFAULT),
    ];
    pub const RESEND_TICKS_DEFAULT: u32 = 5;
    pub const RESEND_INTERVAL_DEFAULT: u32 = 5;
    pub const TIMEOUT_TICKS_DEFAULT: u32 = 200;
}

/// MSI-X interrupts: vector v tells the host that endpoint v's completion
/// ring holds an entry it has not consumed. A vector fires once per arming:
/// the host consumes what it finds, writes CPL_CONSUMER, writes ARM, and
/// sleeps; the card sends the vector's message as soon as the ring is not
/// empty (at once, if a completion came in between), then disarms it. So a
/// host that polls while busy takes no interrupts, and one that sleeps
/// misses none.
///
/// The MSI-X table and its Pending Bit Array are in this block (the IP's
/// "MSI-X External" option: its capability points into BAR 0 here), 16
/// bytes a vector as PCIe lays them out. The card sends a message as an
/// ordinary posted write through its DMA write port, behind the completion
/// it announces, so the host never wakes before the entry is visible.
pub mod interrupt {
    pub const BASE: u32 = 0x0600;
    pub const VERSION: u32 = 0x0001_0000;
    /// Vectors: one per endpoint. RO.
    pub const VECTORS: u32 = 0x0c;
    /// Moderation: the least time between two messages of one vector, in
    /// ns (0 to 2^22; counted in 4 ns cycles). A vector re-armed sooner
    /// waits out the rest. RW.
    pub const HOLDOFF_NS: u32 = 0x10;
    /// Write: arm the vectors whose bits are set (others unchanged). Read:
    /// the armed vectors. RW.
    pub const ARM: u32 = 0x14;
    /// Messages sent (wraps). RO.
    pub const SENT: u32 = 0x18;
    /// Bit 0: MSI-X is enabled in the function's configuration space; bit
    /// 1: the function is masked (both from the PCIe block). RO.
    pub const STATUS: u32 = 0x1c;
    /// Byte addresses in the BAR of the MSI-X table and PBA. RO.
    pub const TABLE_OFFSET: u32 = 0x20;
    pub const PBA_OFFSET: u32 = 0x24;
    /// The MSI-X table: vector v's entry at `TABLE + 16 v`, words message
    /// address low, high, message data, vector control (bit 0: masked; set
    /// at reset). RW.
    pub const TABLE: u32 = 0x80;
    pub const ENTRY_BYTES: u32 = 16;
    pub const ENTRY_ADDR_LO: u32 = 0x0;
    pub const ENTRY_ADDR_HI: u32 = 0x4;
    pub const ENTRY_DATA: u32 = 0x8;
    pub const ENTRY_CONTROL: u32 = 0xc;
    /// The Pending Bit Array: bit v set while vector v has a message held
    /// back by a mask (the function's or its own); the second word reads 0.
    /// RO.
    pub const PBA: u32 = 0xc0;
    /// The default moderation: 2 us, at most 500,000 messages a second a
    /// vector, below what a host takes to wake a thread and re-arm.
    pub const HOLDOFF_NS_DEFAULT: u32 = 2_000;
    pub const HOLDOFF_NS_MAX: u32 = 1 << 22;
    pub const DEFAULTS: [(u32, u32); 1] = [(HOLDOFF_NS, HOLDOFF_NS_DEFAULT)];

    /// The table's and PBA's byte addresses in the BAR (the IP's MSI-X
    /// capability is configured with them).
    pub const fn table_offset() -> u32 {
        BASE + TABLE
    }
    pub const fn pba_offset() -> u32 {
        BASE + PBA
    }
}

/// One block per endpoint: an application's Homa port with its rings. The
/// record layouts the rings hold are in `homa_hw::host_abi`.
///
/// Ring indices are free-running 32-bit counters; an index's slot is
/// `index & ((1 << log2) - 1)`.
pub mod endpoint {
    /// Endpoints per card.
    pub const COUNT: usize = 4;
    /// Base of endpoint 0; endpoint e is at `BASE + e * BLOCK_SPAN`.
    pub const BASE: u32 = 0x1000;
    /// 1.1: a PORT write starts the endpoint over (ring indices to 0, RPCs
    /// of before left to the timers), an RX_AREA write empties its pool.
    pub const VERSION: u32 = 0x0001_0001;
    /// The Homa port this endpoint serves (16 bits); 0: closed. RW. Any
    /// write starts the endpoint over: TX_PRODUCER, TX_CONSUMER,
    /// CPL_CONSUMER and CPL_PRODUCER go to 0, and what the card holds for
    /// RPCs begun before is no longer this endpoint's (dropped, released
    /// or expired without completions).
    pub const PORT: u32 = 0x0c;
    /// IOVA of the TX descriptor ring, low and high words. RW.
    pub const TX_RING_LO: u32 = 0x10;
    pub const TX_RING_HI: u32 = 0x14;
    /// log2 of the TX ring's entries (0..=15). RW.
    pub const TX_RING_LOG2: u32 = 0x18;
    /// Index after the last descriptor the host has written: the doorbell. RW.
    pub const TX_PRODUCER: u32 = 0x1c;
    /// IOVA of the completion ring, low and high words. RW.
    pub const CPL_RING_LO: u32 = 0x20;
    pub const CPL_RING_HI: u32 = 0x24;
    /// log2 of the completion ring's entries (0..=15). RW.
    pub const CPL_RING_LOG2: u32 = 0x28;
    /// Index after the last completion the host has consumed. RW.
    pub const CPL_CONSUMER: u32 = 0x2c;
    /// IOVA of the receive buffer area, low and high words. RW. A write to
    /// either empties the endpoint's bpage pool (the pages named the old
    /// area); hand the card the new area's pages after both.
    pub const RX_AREA_LO: u32 = 0x30;
    pub const RX_AREA_HI: u32 = 0x34;
    /// Index after the last descriptor the card has taken. RO.
    pub const TX_CONSUMER: u32 = 0x38;
    /// Index after the last completion the card has written. RO.
    pub const CPL_PRODUCER: u32 = 0x3c;
    /// Write: hand the card bpage `value` (a 64 KiB page of the RX area, by
    /// index) for incoming messages. Reads as 0.
    pub const RX_BPAGE_PUSH: u32 = 0x40;
    /// Bpages the card holds for this endpoint. RO.
    pub const RX_BPAGES_FREE: u32 = 0x44;

    /// Base of endpoint `e`'s block.
    pub const fn base(e: usize) -> u32 {
        BASE + e as u32 * super::BLOCK_SPAN
    }
}

/// The blocks of the core in list order: (type, version, base).
pub const BLOCKS: &[(u32, u32, u32)] = &[
    (block_type::ID, id::VERSION, id::BASE),
    (block_type::SCRATCH, scratch::VERSION, scratch::BASE),
    (
        block_type::RX_COUNTERS,
        rx_counters::VERSION,
        rx_counters::BASE,
    ),
    (block_type::INTERFACE, interface::VERSION, interface::BASE),
    (block_type::GRANT, grant::VERSION, grant::BASE),
    (block_type::TIMER, timer::VERSION, timer::BASE),
    (block_type::INTERRUPT, interrupt::VERSION, interrupt::BASE),
    (block_type::ENDPOINT, endpoint::VERSION, endpoint::base(0)),
    (block_type::ENDPOINT, endpoint::VERSION, endpoint::base(1)),
    (block_type::ENDPOINT, endpoint::VERSION, endpoint::base(2)),
    (block_type::ENDPOINT, endpoint::VERSION, endpoint::base(3)),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_endpoint_block_per_endpoint_in_address_order() {
        let bases: Vec<u32> = BLOCKS
            .iter()
            .filter(|b| b.0 == block_type::ENDPOINT)
            .map(|b| b.2)
            .collect();
        assert_eq!(
            bases,
            (0..endpoint::COUNT).map(endpoint::base).collect::<Vec<_>>()
        );
        for pair in BLOCKS.windows(2) {
            assert!(pair[0].2 < pair[1].2, "blocks listed in address order");
        }
    }
}

/// The NEXT word of the block at `base`: the base of the block after it in
/// [`BLOCKS`], or 0 for the last.
pub fn next_block(base: u32) -> u32 {
    let i = BLOCKS
        .iter()
        .position(|b| b.2 == base)
        .expect("base of a known block");
    BLOCKS.get(i + 1).map_or(0, |b| b.2)
}

/// `major << 16 | minor << 8 | patch` of a "major.minor.patch" version string.
pub fn pack_design_version(version: &str) -> u32 {
    let mut parts = version.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let mut next = || parts.next().unwrap_or(0) & 0xff;
    (next() << 16) | (next() << 8) | next()
}

/// The board's register block, on a card in a board (the Alveo top levels
/// of `homa-firmware`, and a simulated card built with a board): what card
/// and bitstream this is, the reboot trigger, and the configuration flash's
/// SPI port. It sits at a fixed base in the upper half of the CSR window (the
/// core decodes the lower half) and is not in the core's block list: a bare
/// core has no board. The RTL is `homa_firmware::top::board_regs`.
pub mod board {
    /// Base of the block in the CSR window (address bit 23).
    pub const BASE: u32 = 0x80_0000;
    /// Type code: "HM" and block number 0x10.
    pub const TYPE: u32 = 0x484d_0010;
    pub const VERSION: u32 = 0x0001_0000;
    /// Board name ("u250"), ASCII, byte 0 in bits 7:0.
    pub const BOARD_NAME: u32 = 0x0c;
    /// Vivado part, ASCII, NUL-padded, 6 words (24 bytes), byte 0 of each word in bits 7:0.
    pub const PART: u32 = 0x10;
    pub const PART_WORDS: usize = 6;
    /// Build time, seconds since 1970 (UTC), low and high words.
    pub const BUILD_TIME_LO: u32 = 0x28;
    pub const BUILD_TIME_HI: u32 = 0x2c;
    /// Git commit of the source, 20 bytes of SHA-1 in 5 words, byte 0 in bits 7:0 of the first.
    pub const GIT_COMMIT: u32 = 0x30;
    pub const GIT_COMMIT_WORDS: usize = 5;
    /// 1 when the source tree had uncommitted changes.
    pub const GIT_DIRTY: u32 = 0x44;
    /// Write REBOOT_MAGIC: the FPGA reconfigures from flash (IPROG through
    /// ICAPE3). Reads 0.
    pub const REBOOT: u32 = 0x48;
    pub const REBOOT_MAGIC: u32 = 0x4950_524f; // "IPRO"
    /// Bit 0: the MAC's receiver is aligned.
    pub const MAC_STATUS: u32 = 0x4c;
    /// The configuration flash's SPI port: bit 0 selects the chip (CS# low),
    /// bit 1 gives the pins to the card. RW.
    pub const FLASH_CONTROL: u32 = 0x50;
    pub const FLASH_SELECT: u32 = 1 << 0;
    pub const FLASH_OWN: u32 = 1 << 1;
    /// Write: shift a byte out (bits 7:0). Read: the byte shifted in (7:0), busy (bit 8).
    pub const FLASH_DATA: u32 = 0x54;
    pub const FLASH_BUSY: u32 = 1 << 8;
    /// Registers holding the bitstream's identity, from BOARD_NAME to GIT_DIRTY.
    pub const ID_WORDS: usize = 1 + PART_WORDS + 2 + GIT_COMMIT_WORDS + 1;

    /// The configuration flash's layout on every supported board (BOARDS.md
    /// §1.6): the factory golden image below, user images from here up.
    pub const FLASH_USER_IMAGE: u32 = 0x0100_2000;
    /// Bytes of configuration flash (one MT25QU01G).
    pub const FLASH_BYTES: u32 = 128 << 20;
}

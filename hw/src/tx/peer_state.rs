//! Peer state: what the sender knows of each peer. The unscheduled cutoffs
//! it announced in its CUTOFFS packets, and one ack the card owes it.
//!
//! DESIGN NOTES
//! ------------
//! Both live in direct-mapped tables of `PEERS` entries indexed by the
//! peer's IPv4 address folded to 8 bits (the XOR of its bytes: every host of
//! a /24 gets its own entry), each entry tagged with the full address.
//! Another peer folding to the same entry takes it over. For cutoffs, the
//! evicted peer's messages go at HomaModule's "not yet known" priority until
//! it sends CUTOFFS again (it does whenever our DATA carries an old version).
//! For acks, the evicted ack is never piggybacked; the server asks for it
//! with NEED_ACK and the RX engine answers with an ACK packet. So a
//! collision costs a little priority or one control packet, never
//! correctness, and no CAM is needed.
//!
//! Cutoffs: a message's unscheduled priority is the highest `i` with
//! `cutoffs[i] >= length` (HomaModule's rule), its DATA carries the version
//! it was chosen with. A peer not (or no longer) in the table gets priority
//! 6 and version 0, what HomaModule does before it has heard from a peer.
//! Limits are kept saturated at 2^20 (above any message). The answer comes
//! two cycles after the query's inputs.
//!
//! Acks: the RX engine adds one when a response completes (the card was the
//! client); the TX engine reads the entry of each DATA packet's peer and,
//! if it holds an ack for that peer, puts it in the packet and takes it. An
//! add and a take share the table's one write port: the add wins, and a take
//! is skipped when an add reached the same entry in this cycle or the last
//! (what the take read is then stale). A skipped take sends the ack twice
//! (HomaModule ignores an ack for an RPC it no longer has); it never loses a
//! newer one.

use rust_hdl::prelude::*;

/// Entries of each table, and the bits of their index.
pub const PEERS: usize = 256;
pub const PEER_INDEX_BITS: usize = 8;
/// Priority and cutoff version of unscheduled DATA to a peer whose cutoffs
/// are not known (HomaModule's defaults before a CUTOFFS arrives).
pub const UNKNOWN_PEER_LEVEL: u64 = 6;

/// Cutoffs entry: valid [0], ip [32:1], version [48:33], then limit i at
/// 49 + 21 i.
const CUTOFF_ENTRY_BITS: usize = 49 + 8 * 21;
/// Ack entry: valid [0], ip [32:1], client id [96:33], server port [112:97].
const ACK_ENTRY_BITS: usize = 113;

#[derive(LogicBlock)]
pub struct PeerState {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, bool>,
    /// A CUTOFFS packet received (a strobe): its sender, version and limits
    /// (`cutoffs[0]` in the top 32 bits).
    pub s_cutoffs_valid: Signal<In, bool>,
    pub s_cutoffs_ip: Signal<In, Bits<32>>,
    pub s_cutoffs_version: Signal<In, Bits<16>>,
    pub s_cutoffs_limits: Signal<In, Bits<256>>,
    /// Query: a message to `q_ip` of `q_length` bytes. Two cycles later:
    /// its unscheduled priority and the cutoff version to put in its DATA.
    pub q_ip: Signal<In, Bits<32>>,
    pub q_length: Signal<In, Bits<20>>,
    pub q_level: Signal<Out, Bits<3>>,
    pub q_version: Signal<Out, Bits<16>>,
    /// An ack owed (a strobe from the RX engine): the server and our RPC.
    pub s_ack_valid: Signal<In, bool>,
    pub s_ack_ip: Signal<In, Bits<32>>,
    pub s_ack_client_id: Signal<In, Bits<64>>,
    pub s_ack_server_port: Signal<In, Bits<16>>,
    /// Ack lookup for a DATA packet to `a_ip`: one cycle later, whether an
    /// ack is owed to it, and which. `a_take` (in that cycle) takes it.
    pub a_ip: Signal<In, Bits<32>>,
    pub a_hit: Signal<Out, bool>,
    pub a_client_id: Signal<Out, Bits<64>>,
    pub a_server_port: Signal<Out, Bits<16>>,
    pub a_take: Signal<In, bool>,
    /// Acks taken into DATA packets (wraps).
    pub acks_piggybacked: Signal<Out, Bits<32>>,

    cutoffs: RAM<Bits<CUTOFF_ENTRY_BITS>, PEER_INDEX_BITS>,
    acks: RAM<Bits<ACK_ENTRY_BITS>, PEER_INDEX_BITS>,
    // ---- the cutoffs query's stage 1 ----
    q_ip_r: DFF<Bits<32>>,
    q_length_r: DFF<Bits<20>>,
    /// Stage 2: hit, version, and which limits the length fits under.
    s2_hit: DFF<bool>,
    s2_version: DFF<Bits<16>>,
    s2_fits: DFF<Bits<8>>,
    // ---- acks ----
    a_ip_r: DFF<Bits<32>>,
    a_index_r: DFF<Bits<PEER_INDEX_BITS>>,
    /// An add reached the looked-up entry last cycle.
    add_last: DFF<bool>,
    piggybacked: DFF<Bits<32>>,
    // ---- locals ----
    limit: [Signal<Local, Bits<21>>; 8],
    cutoff_entry: Signal<Local, Bits<CUTOFF_ENTRY_BITS>>,
    ack_index: Signal<Local, Bits<PEER_INDEX_BITS>>,
    a_index: Signal<Local, Bits<PEER_INDEX_BITS>>,
    q_index: Signal<Local, Bits<PEER_INDEX_BITS>>,
    cutoffs_index: Signal<Local, Bits<PEER_INDEX_BITS>>,
    fits: Signal<Local, Bits<8>>,
    q_length_21: Signal<Local, Bits<21>>,
    saturated: Constant<Bits<21>>,
    /// An entry's valid bit.
    valid_cutoffs: Constant<Bits<CUTOFF_ENTRY_BITS>>,
    valid_ack: Constant<Bits<ACK_ENTRY_BITS>>,
    unknown_level: Constant<Bits<3>>,
    /// Per limit i: its lsb in a CUTOFFS packet's limits, the lsb of its
    /// top 12 bits there, its lsb in an entry, its bit in `fits`, and i.
    limit_at: [Constant<Bits<16>>; 8],
    limit_top_at: [Constant<Bits<16>>; 8],
    entry_at: [Constant<Bits<16>>; 8],
    fit_bit: [Constant<Bits<8>>; 8],
    level_of: [Constant<Bits<3>>; 8],
}

impl Default for PeerState {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            s_cutoffs_valid: Default::default(),
            s_cutoffs_ip: Default::default(),
            s_cutoffs_version: Default::default(),
            s_cutoffs_limits: Default::default(),
            q_ip: Default::default(),
            q_length: Default::default(),
            q_level: Default::default(),
            q_version: Default::default(),
            s_ack_valid: Default::default(),
            s_ack_ip: Default::default(),
            s_ack_client_id: Default::default(),
            s_ack_server_port: Default::default(),
            a_ip: Default::default(),
            a_hit: Default::default(),
            a_client_id: Default::default(),
            a_server_port: Default::default(),
            a_take: Default::default(),
            acks_piggybacked: Default::default(),
            cutoffs: Default::default(),
            acks: Default::default(),
            q_ip_r: Default::default(),
            q_length_r: Default::default(),
            s2_hit: Default::default(),
            s2_version: Default::default(),
            s2_fits: Default::default(),
            a_ip_r: Default::default(),
            a_index_r: Default::default(),
            add_last: Default::default(),
            piggybacked: Default::default(),
            limit: Default::default(),
            cutoff_entry: Default::default(),
            ack_index: Default::default(),
            a_index: Default::default(),
            q_index: Default::default(),
            cutoffs_index: Default::default(),
            fits: Default::default(),
            q_length_21: Default::default(),
            saturated: Constant::new((1u64 << 20).to_bits()),
            valid_cutoffs: Constant::new(1u64.to_bits()),
            valid_ack: Constant::new(1u64.to_bits()),
            unknown_level: Constant::new(UNKNOWN_PEER_LEVEL.to_bits()),
            limit_at: std::array::from_fn(|i| {
                Constant::new(((256 - 32 * (i + 1)) as u64).to_bits())
            }),
            limit_top_at: std::array::from_fn(|i| {
                Constant::new(((256 - 32 * (i + 1) + 20) as u64).to_bits())
            }),
            entry_at: std::array::from_fn(|i| Constant::new(((49 + 21 * i) as u64).to_bits())),
            fit_bit: std::array::from_fn(|i| Constant::new((1u64 << i).to_bits())),
            level_of: std::array::from_fn(|i| Constant::new((i as u64).to_bits())),
        }
    }
}

/// The table index of an IPv4 address: its four bytes XORed.
pub fn peer_index(ip: u32) -> usize {
    (ip ^ (ip >> 8) ^ (ip >> 16) ^ (ip >> 24)) as usize & (PEERS - 1)
}

impl Logic for PeerState {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            q_ip_r,
            q_length_r,
            s2_hit,
            s2_version,
            s2_fits,
            a_ip_r,
            a_index_r,
            add_last,
            piggybacked
        );
        self.cutoffs.read_clock.next = self.clock.val();
        self.cutoffs.write_clock.next = self.clock.val();
        self.acks.read_clock.next = self.clock.val();
        self.acks.write_clock.next = self.clock.val();

        // ---- cutoffs: learn ----
        // Each limit saturated to 21 bits (2^20 is above any message).
        self.cutoff_entry.next = self.valid_cutoffs.val()
            | (bit_cast::<CUTOFF_ENTRY_BITS, 32>(self.s_cutoffs_ip.val()) << 1)
            | (bit_cast::<CUTOFF_ENTRY_BITS, 16>(self.s_cutoffs_version.val()) << 33);
        for i in 0..8 {
            self.limit[i].next = self
                .s_cutoffs_limits
                .val()
                .get_bits::<21>(self.limit_at[i].val().index());
            if self
                .s_cutoffs_limits
                .val()
                .get_bits::<12>(self.limit_top_at[i].val().index())
                != 0
            {
                self.limit[i].next = self.saturated.val();
            }
        }
        // (Unrolled: `bit_cast` cannot take a loop index in `hdl_gen`.)
        self.cutoff_entry.next = self.cutoff_entry.val()
            | (bit_cast::<CUTOFF_ENTRY_BITS, 21>(self.limit[0].val()) << 49)
            | (bit_cast::<CUTOFF_ENTRY_BITS, 21>(self.limit[1].val()) << 70)
            | (bit_cast::<CUTOFF_ENTRY_BITS, 21>(self.limit[2].val()) << 91)
            | (bit_cast::<CUTOFF_ENTRY_BITS, 21>(self.limit[3].val()) << 112)
            | (bit_cast::<CUTOFF_ENTRY_BITS, 21>(self.limit[4].val()) << 133)
            | (bit_cast::<CUTOFF_ENTRY_BITS, 21>(self.limit[5].val()) << 154)
            | (bit_cast::<CUTOFF_ENTRY_BITS, 21>(self.limit[6].val()) << 175)
            | (bit_cast::<CUTOFF_ENTRY_BITS, 21>(self.limit[7].val()) << 196);
        self.cutoffs_index.next = self.s_cutoffs_ip.val().get_bits::<8>(0)
            ^ self.s_cutoffs_ip.val().get_bits::<8>(8)
            ^ self.s_cutoffs_ip.val().get_bits::<8>(16)
            ^ self.s_cutoffs_ip.val().get_bits::<8>(24);
        self.cutoffs.write_address.next = self.cutoffs_index.val();
        self.cutoffs.write_data.next = self.cutoff_entry.val();
        self.cutoffs.write_enable.next = self.s_cutoffs_valid.val();

        // ---- cutoffs: query (RAM read, compare, encode) ----
        self.q_index.next = self.q_ip.val().get_bits::<8>(0)
            ^ self.q_ip.val().get_bits::<8>(8)
            ^ self.q_ip.val().get_bits::<8>(16)
            ^ self.q_ip.val().get_bits::<8>(24);
        self.cutoffs.read_address.next = self.q_index.val();
        self.q_ip_r.d.next = self.q_ip.val();
        self.q_length_r.d.next = self.q_length.val();
        self.s2_hit.d.next = self.cutoffs.read_data.val().get_bit(0)
            & (self.cutoffs.read_data.val().get_bits::<32>(1) == self.q_ip_r.q.val());
        self.s2_version.d.next = self.cutoffs.read_data.val().get_bits::<16>(33);
        self.q_length_21.next = bit_cast::<21, 20>(self.q_length_r.q.val());
        self.fits.next = 0.into();
        for i in 0..8 {
            if self.q_length_21.val()
                <= self
                    .cutoffs
                    .read_data
                    .val()
                    .get_bits::<21>(self.entry_at[i].val().index())
            {
                self.fits.next = self.fits.val() | self.fit_bit[i].val();
            }
        }
        self.s2_fits.d.next = self.fits.val();
        self.q_level.next = 0.into();
        for i in 0..8 {
            if (self.s2_fits.q.val() & self.fit_bit[i].val()) != 0 {
                self.q_level.next = self.level_of[i].val();
            }
        }
        self.q_version.next = self.s2_version.q.val();
        if !self.s2_hit.q.val() {
            self.q_level.next = self.unknown_level.val();
            self.q_version.next = 0.into();
        }

        // ---- acks ----
        self.ack_index.next = self.s_ack_ip.val().get_bits::<8>(0)
            ^ self.s_ack_ip.val().get_bits::<8>(8)
            ^ self.s_ack_ip.val().get_bits::<8>(16)
            ^ self.s_ack_ip.val().get_bits::<8>(24);
        self.a_index.next = self.a_ip.val().get_bits::<8>(0)
            ^ self.a_ip.val().get_bits::<8>(8)
            ^ self.a_ip.val().get_bits::<8>(16)
            ^ self.a_ip.val().get_bits::<8>(24);
        self.acks.read_address.next = self.a_index.val();
        self.a_ip_r.d.next = self.a_ip.val();
        self.a_index_r.d.next = self.a_index.val();
        self.add_last.d.next =
            self.s_ack_valid.val() & (self.ack_index.val() == self.a_index.val());
        self.a_hit.next = self.acks.read_data.val().get_bit(0)
            & (self.acks.read_data.val().get_bits::<32>(1) == self.a_ip_r.q.val());
        self.a_client_id.next = self.acks.read_data.val().get_bits::<64>(33);
        self.a_server_port.next = self.acks.read_data.val().get_bits::<16>(97);
        // One write port: an add, else a take (an empty entry).
        self.acks.write_address.next = self.a_index_r.q.val();
        self.acks.write_data.next = 0.into();
        self.acks.write_enable.next = false;
        if self.a_take.val() & self.a_hit.val() {
            self.piggybacked.d.next = self.piggybacked.q.val() + 1;
            if !self.s_ack_valid.val() & !self.add_last.q.val() {
                self.acks.write_enable.next = true;
            }
        }
        if self.s_ack_valid.val() {
            self.acks.write_address.next = self.ack_index.val();
            self.acks.write_data.next = self.valid_ack.val()
                | (bit_cast::<ACK_ENTRY_BITS, 32>(self.s_ack_ip.val()) << 1)
                | (bit_cast::<ACK_ENTRY_BITS, 64>(self.s_ack_client_id.val()) << 33)
                | (bit_cast::<ACK_ENTRY_BITS, 16>(self.s_ack_server_port.val()) << 97);
            self.acks.write_enable.next = true;
        }
        self.acks_piggybacked.next = self.piggybacked.q.val();
        if self.reset.val() {
            self.piggybacked.d.next = 0.into();
        }
    }
}

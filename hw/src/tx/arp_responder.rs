//! ARP responder: answers "who has <our IPv4 address>?" with our MAC, in
//! hardware, so a Linux peer can reach the card without any host software.
//!
//! DESIGN NOTES
//! ------------
//! It watches the RX stream beside the parser. An ARP packet over Ethernet
//! ends at byte 42, inside a frame's first beat, so one beat tells all: an
//! ARP request (IPv4 over Ethernet) whose target is `local_ip` latches the
//! requester's MAC and IPv4 address (one cycle after the beat: the field
//! compares are registered first, in three groups, so that neither the
//! compares nor the latch decision is deeper than a few LUT levels), and the reply, a one-beat 60-byte frame
//! built from those and `local_mac`, waits on `m_axis_*` until the MAC takes
//! it. One reply is held at a time; a request that arrives while one waits
//! replaces it (ARP retries, so answering the latest asker is enough) and
//! `replaced` counts it. Everything else (other ARP, Homa, IPv6) is ignored
//! here; the parser counts those frames as it always does.
//!
//! Why hardware and not a slow-path queue to the driver: ARP is the only
//! non-Homa protocol the card must speak, and answering it takes one register
//! of state and a 42-byte template; a slow path would need its own ring, an
//! interrupt or polling thread, and a TX path for raw frames.

use rust_hdl::prelude::*;

use crate::leaf::byte_swap::ByteSwap512;
use homa_wire::layout::{arp, eth, Field};

/// Bit position of a big-endian field of an ARP frame (at frame byte `base +
/// field.offset`) in a byte-swapped beat (byte 0 in bits 511:504).
fn lsb(base: usize, field: Field) -> Constant<Bits<16>> {
    Constant::new(((8 * (64 - base - field.end())) as u64).to_bits())
}

#[derive(LogicBlock)]
pub struct ArpResponder {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: nothing pending, counters 0.
    pub reset: Signal<In, bool>,
    /// The RX stream, watched (never back-pressured).
    pub s_axis_tdata: Signal<In, Bits<512>>,
    pub s_axis_tkeep: Signal<In, Bits<64>>,
    pub s_axis_tvalid: Signal<In, bool>,
    pub s_axis_tlast: Signal<In, bool>,
    /// The card's addresses (MAC byte 0, first on the wire, in bits 47:40).
    pub local_mac: Signal<In, Bits<48>>,
    pub local_ip: Signal<In, Bits<32>>,
    /// The reply: one beat, 60 bytes.
    pub m_axis_tdata: Signal<Out, Bits<512>>,
    pub m_axis_tkeep: Signal<Out, Bits<64>>,
    pub m_axis_tvalid: Signal<Out, bool>,
    pub m_axis_tready: Signal<In, bool>,
    pub m_axis_tlast: Signal<Out, bool>,
    /// Replies sent, and requests answered by a later one instead (wrap).
    pub replies: Signal<Out, Bits<32>>,
    pub replaced: Signal<Out, Bits<32>>,

    swap_in: ByteSwap512,
    swap_out: ByteSwap512,
    /// The next beat is the first of a frame.
    at_start: DFF<bool>,
    pending: DFF<bool>,
    /// The requester's MAC and IPv4 address.
    peer_mac: DFF<Bits<48>>,
    peer_ip: DFF<Bits<32>>,
    reply_count: DFF<Bits<32>>,
    replaced_count: DFF<Bits<32>>,
    is_request: Signal<Local, bool>,
    /// The beat seen last cycle: valid and the first of a frame; its ARP
    /// header fields (all but the target address), target address and
    /// lanes are those of a request for us; its sender's MAC and address.
    c1_first: DFF<bool>,
    c1_header_ok: DFF<bool>,
    c1_target_ok: DFF<bool>,
    c1_keep_ok: DFF<bool>,
    c1_sha: DFF<Bits<48>>,
    c1_spa: DFF<Bits<32>>,
    /// The reply, big-endian (byte 0 in bits 511:504), before swapping.
    reply: Signal<Local, Bits<512>>,
    at_ethertype: Constant<Bits<16>>,
    at_htype: Constant<Bits<16>>,
    at_ptype: Constant<Bits<16>>,
    at_hlen: Constant<Bits<16>>,
    at_plen: Constant<Bits<16>>,
    at_oper: Constant<Bits<16>>,
    at_sha: Constant<Bits<16>>,
    at_spa: Constant<Bits<16>>,
    at_tha: Constant<Bits<16>>,
    at_tpa: Constant<Bits<16>>,
    at_eth_dst: Constant<Bits<16>>,
    at_eth_src: Constant<Bits<16>>,
    ethertype_arp: Constant<Bits<16>>,
    ethertype_ipv4: Constant<Bits<16>>,
    htype_ethernet: Constant<Bits<16>>,
    oper_request: Constant<Bits<16>>,
    oper_reply: Constant<Bits<16>>,
    hlen: Constant<Bits<8>>,
    plen: Constant<Bits<8>>,
    min_keep: Constant<Bits<64>>,
    reply_keep: Constant<Bits<64>>,
}

impl Default for ArpResponder {
    fn default() -> Self {
        let a = eth::HEADER_LEN;
        let c16 = |v: u64| Constant::new(v.to_bits());
        let lanes = |n: usize| Constant::new((((1u128 << n) - 1) as u64).to_bits());
        Self {
            clock: Default::default(),
            reset: Default::default(),
            s_axis_tdata: Default::default(),
            s_axis_tkeep: Default::default(),
            s_axis_tvalid: Default::default(),
            s_axis_tlast: Default::default(),
            local_mac: Default::default(),
            local_ip: Default::default(),
            m_axis_tdata: Default::default(),
            m_axis_tkeep: Default::default(),
            m_axis_tvalid: Default::default(),
            m_axis_tready: Default::default(),
            m_axis_tlast: Default::default(),
            replies: Default::default(),
            replaced: Default::default(),
            swap_in: Default::default(),
            swap_out: Default::default(),
            at_start: Default::default(),
            pending: Default::default(),
            peer_mac: Default::default(),
            peer_ip: Default::default(),
            reply_count: Default::default(),
            replaced_count: Default::default(),
            is_request: Default::default(),
            c1_first: Default::default(),
            c1_header_ok: Default::default(),
            c1_target_ok: Default::default(),
            c1_keep_ok: Default::default(),
            c1_sha: Default::default(),
            c1_spa: Default::default(),
            reply: Default::default(),
            at_ethertype: lsb(0, eth::ETHERTYPE),
            at_htype: lsb(a, arp::HTYPE),
            at_ptype: lsb(a, arp::PTYPE),
            at_hlen: lsb(a, arp::HLEN),
            at_plen: lsb(a, arp::PLEN),
            at_oper: lsb(a, arp::OPER),
            at_sha: lsb(a, arp::SHA),
            at_spa: lsb(a, arp::SPA),
            at_tha: lsb(a, arp::THA),
            at_tpa: lsb(a, arp::TPA),
            at_eth_dst: lsb(0, eth::DST),
            at_eth_src: lsb(0, eth::SRC),
            ethertype_arp: c16(eth::ETHERTYPE_ARP as u64),
            ethertype_ipv4: c16(eth::ETHERTYPE_IPV4 as u64),
            htype_ethernet: c16(arp::HTYPE_ETHERNET as u64),
            oper_request: c16(arp::OPER_REQUEST as u64),
            oper_reply: c16(arp::OPER_REPLY as u64),
            hlen: Constant::new(6u64.to_bits()),
            plen: Constant::new(4u64.to_bits()),
            min_keep: lanes(eth::HEADER_LEN + arp::PACKET_LEN),
            reply_keep: lanes(eth::MIN_FRAME_LEN),
        }
    }
}

impl Logic for ArpResponder {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            at_start,
            pending,
            peer_mac,
            peer_ip,
            reply_count,
            replaced_count,
            c1_first,
            c1_header_ok,
            c1_target_ok,
            c1_keep_ok,
            c1_sha,
            c1_spa
        );
        self.swap_in.beat.next = self.s_axis_tdata.val();

        // A first beat holding a whole ARP request for our address: the
        // compares, registered; then the decision on them.
        self.c1_first.d.next = self.s_axis_tvalid.val() & self.at_start.q.val();
        self.c1_keep_ok.d.next =
            (self.s_axis_tkeep.val() & self.min_keep.val()) == self.min_keep.val();
        self.c1_header_ok.d.next = (self
            .swap_in
            .swapped
            .val()
            .get_bits::<16>(self.at_ethertype.val().index())
            == self.ethertype_arp.val())
            & (self
                .swap_in
                .swapped
                .val()
                .get_bits::<16>(self.at_htype.val().index())
                == self.htype_ethernet.val())
            & (self
                .swap_in
                .swapped
                .val()
                .get_bits::<16>(self.at_ptype.val().index())
                == self.ethertype_ipv4.val())
            & (self
                .swap_in
                .swapped
                .val()
                .get_bits::<8>(self.at_hlen.val().index())
                == self.hlen.val())
            & (self
                .swap_in
                .swapped
                .val()
                .get_bits::<8>(self.at_plen.val().index())
                == self.plen.val())
            & (self
                .swap_in
                .swapped
                .val()
                .get_bits::<16>(self.at_oper.val().index())
                == self.oper_request.val());
        self.c1_target_ok.d.next = self
            .swap_in
            .swapped
            .val()
            .get_bits::<32>(self.at_tpa.val().index())
            == self.local_ip.val();
        self.c1_sha.d.next = self
            .swap_in
            .swapped
            .val()
            .get_bits::<48>(self.at_sha.val().index());
        self.c1_spa.d.next = self
            .swap_in
            .swapped
            .val()
            .get_bits::<32>(self.at_spa.val().index());
        if self.s_axis_tvalid.val() {
            self.at_start.d.next = self.s_axis_tlast.val();
        }
        self.is_request.next = self.c1_first.q.val()
            & self.c1_keep_ok.q.val()
            & self.c1_header_ok.q.val()
            & self.c1_target_ok.q.val();
        if self.is_request.val() {
            self.peer_mac.d.next = self.c1_sha.q.val();
            self.peer_ip.d.next = self.c1_spa.q.val();
            self.pending.d.next = true;
            if self.pending.q.val() & !self.m_axis_tready.val() {
                self.replaced_count.d.next = self.replaced_count.q.val() + 1;
            }
        }

        // The reply, laid out big-endian, then swapped into lane order.
        self.reply.next = (bit_cast::<512, 48>(self.peer_mac.q.val()) << self.at_eth_dst.val())
            | (bit_cast::<512, 48>(self.local_mac.val()) << self.at_eth_src.val())
            | (bit_cast::<512, 16>(self.ethertype_arp.val()) << self.at_ethertype.val())
            | (bit_cast::<512, 16>(self.htype_ethernet.val()) << self.at_htype.val())
            | (bit_cast::<512, 16>(self.ethertype_ipv4.val()) << self.at_ptype.val())
            | (bit_cast::<512, 8>(self.hlen.val()) << self.at_hlen.val())
            | (bit_cast::<512, 8>(self.plen.val()) << self.at_plen.val())
            | (bit_cast::<512, 16>(self.oper_reply.val()) << self.at_oper.val())
            | (bit_cast::<512, 48>(self.local_mac.val()) << self.at_sha.val())
            | (bit_cast::<512, 32>(self.local_ip.val()) << self.at_spa.val())
            | (bit_cast::<512, 48>(self.peer_mac.q.val()) << self.at_tha.val())
            | (bit_cast::<512, 32>(self.peer_ip.q.val()) << self.at_tpa.val());
        self.swap_out.beat.next = self.reply.val();
        self.m_axis_tdata.next = self.swap_out.swapped.val();
        self.m_axis_tkeep.next = self.reply_keep.val();
        self.m_axis_tlast.next = true;
        self.m_axis_tvalid.next = self.pending.q.val();
        if self.pending.q.val() & self.m_axis_tready.val() {
            self.reply_count.d.next = self.reply_count.q.val() + 1;
            // A request latched this very cycle stays pending for its own reply.
            if !self.is_request.val() {
                self.pending.d.next = false;
            }
        }
        self.replies.next = self.reply_count.q.val();
        self.replaced.next = self.replaced_count.q.val();
        if self.reset.val() {
            self.at_start.d.next = true;
            self.pending.d.next = false;
            self.c1_first.d.next = false;
            self.reply_count.d.next = 0.into();
            self.replaced_count.d.next = 0.into();
        }
    }
}

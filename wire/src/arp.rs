//! ARP (RFC 826) for IPv4 over Ethernet: what a Linux peer sends to learn the
//! card's MAC address, and what the card answers. Layout in `layout::arp`.

use std::net::Ipv4Addr;

use crate::layout::{self, arp, eth};
use crate::{DecodeError, MacAddr};

/// An ARP packet in an Ethernet frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArpFrame {
    pub eth_dst: MacAddr,
    pub eth_src: MacAddr,
    /// `layout::arp::OPER_REQUEST` or `OPER_REPLY`.
    pub oper: u16,
    pub sender_mac: MacAddr,
    pub sender_ip: Ipv4Addr,
    pub target_mac: MacAddr,
    pub target_ip: Ipv4Addr,
}

impl ArpFrame {
    /// "Who has `target_ip`? Tell `sender_ip`": broadcast.
    pub fn request(sender_mac: MacAddr, sender_ip: Ipv4Addr, target_ip: Ipv4Addr) -> ArpFrame {
        ArpFrame {
            eth_dst: MacAddr::BROADCAST,
            eth_src: sender_mac,
            oper: arp::OPER_REQUEST,
            sender_mac,
            sender_ip,
            target_mac: MacAddr::default(),
            target_ip,
        }
    }

    /// Encodes the frame, padded to Ethernet's minimum of 60 bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut f = vec![0u8; eth::MIN_FRAME_LEN];
        f[eth::DST.offset..eth::DST.end()].copy_from_slice(&self.eth_dst.0);
        f[eth::SRC.offset..eth::SRC.end()].copy_from_slice(&self.eth_src.0);
        layout::put(&mut f, eth::ETHERTYPE, eth::ETHERTYPE_ARP as u64);
        let a = &mut f[eth::HEADER_LEN..];
        layout::put(a, arp::HTYPE, arp::HTYPE_ETHERNET as u64);
        layout::put(a, arp::PTYPE, eth::ETHERTYPE_IPV4 as u64);
        layout::put(a, arp::HLEN, 6);
        layout::put(a, arp::PLEN, 4);
        layout::put(a, arp::OPER, self.oper as u64);
        a[arp::SHA.offset..arp::SHA.end()].copy_from_slice(&self.sender_mac.0);
        layout::put(a, arp::SPA, u32::from(self.sender_ip) as u64);
        a[arp::THA.offset..arp::THA.end()].copy_from_slice(&self.target_mac.0);
        layout::put(a, arp::TPA, u32::from(self.target_ip) as u64);
        f
    }

    /// Decodes an ARP frame for IPv4 over Ethernet; anything else is an error.
    pub fn decode(bytes: &[u8]) -> Result<ArpFrame, DecodeError> {
        let need = eth::HEADER_LEN + arp::PACKET_LEN;
        if bytes.len() < need {
            return Err(DecodeError::Truncated {
                what: "ARP packet",
                need,
                have: bytes.len(),
            });
        }
        let ethertype = layout::get(bytes, eth::ETHERTYPE) as u16;
        if ethertype != eth::ETHERTYPE_ARP {
            return Err(DecodeError::NotArp { ethertype });
        }
        let a = &bytes[eth::HEADER_LEN..];
        let mac = |f: layout::Field, b: &[u8]| MacAddr(b[f.offset..f.end()].try_into().unwrap());
        if layout::get(a, arp::HTYPE) != arp::HTYPE_ETHERNET as u64
            || layout::get(a, arp::PTYPE) != eth::ETHERTYPE_IPV4 as u64
            || layout::get(a, arp::HLEN) != 6
            || layout::get(a, arp::PLEN) != 4
        {
            return Err(DecodeError::ArpNotIpv4OverEthernet);
        }
        Ok(ArpFrame {
            eth_dst: mac(eth::DST, bytes),
            eth_src: mac(eth::SRC, bytes),
            oper: layout::get(a, arp::OPER) as u16,
            sender_mac: mac(arp::SHA, a),
            sender_ip: Ipv4Addr::from(layout::get(a, arp::SPA) as u32),
            target_mac: mac(arp::THA, a),
            target_ip: Ipv4Addr::from(layout::get(a, arp::TPA) as u32),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_by_hand() {
        let req = ArpFrame::request(
            MacAddr([2, 0, 0, 0, 0, 1]),
            Ipv4Addr::new(10, 0, 0, 1),
            Ipv4Addr::new(10, 0, 0, 2),
        );
        let want: Vec<u8> = [
            &[0xff; 6][..],
            &[2, 0, 0, 0, 0, 1],
            &[0x08, 0x06],
            &[0, 1, 0x08, 0, 6, 4, 0, 1],
            &[2, 0, 0, 0, 0, 1, 10, 0, 0, 1],
            &[0, 0, 0, 0, 0, 0, 10, 0, 0, 2],
            &[0; 18],
        ]
        .concat();
        assert_eq!(req.encode(), want);
        assert_eq!(ArpFrame::decode(&want), Ok(req));
    }

    #[test]
    fn non_arp_and_short_frames_are_errors() {
        let mut f =
            ArpFrame::request(MacAddr([2; 6]), Ipv4Addr::LOCALHOST, Ipv4Addr::LOCALHOST).encode();
        assert!(matches!(
            ArpFrame::decode(&f[..30]),
            Err(DecodeError::Truncated { .. })
        ));
        f[eth::HEADER_LEN + 3] = 0xdd; // ptype not IPv4
        assert_eq!(
            ArpFrame::decode(&f),
            Err(DecodeError::ArpNotIpv4OverEthernet)
        );
        f[12] = 0x86;
        f[13] = 0xdd;
        assert_eq!(
            ArpFrame::decode(&f),
            Err(DecodeError::NotArp { ethertype: 0x86dd })
        );
    }
}

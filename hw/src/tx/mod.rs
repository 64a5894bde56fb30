//! The transmit path: `engine` fetches descriptors and payload from host
//! memory and decides what leaves next, `header` builds each packet's
//! Ethernet/IPv4/Homa headers, `framer` streams headers and payload to the
//! MAC; `arp_responder` slips ARP replies in between frames, and
//! `control_sender` the GRANTs the grant scheduler decides, the ACKs that
//! answer NEED_ACK and the CUTOFFS a stale peer needs; `peer_state` keeps
//! what the sender knows per peer (its cutoffs, an ack owed to it).

pub mod arp_responder;
pub mod control_sender;
pub mod engine;
pub mod framer;
pub mod header;
pub mod peer_state;

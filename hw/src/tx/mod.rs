//! The transmit path: `engine` fetches descriptors and payload from host
//! memory and decides what leaves next, `header` builds each packet's
//! Ethernet/IPv4/Homa headers, `framer` streams headers and payload to the
//! MAC; `arp_responder` slips ARP replies in between frames, and
//! `grant_sender` the GRANTs the grant scheduler decides.

pub mod arp_responder;
pub mod engine;
pub mod framer;
pub mod grant_sender;
pub mod header;

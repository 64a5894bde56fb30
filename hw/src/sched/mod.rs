//! Homa's scheduling, in hardware: the ordered sets behind the receiver's
//! grant scheduler and the sender's SRPT choice.
//!
//! - `winner_tree`: the best of 16,384 entries (any entry's key changed once
//!   per cycle), the shared leaf of both schedulers.
//! - `grant_scheduler`: which inbound messages get GRANTs, how far, at what
//!   priority (an active set in registers in front of two winner trees).
//! - `send_scheduler`: which outbound message sends the next packet (bypass
//!   class, SRPT, and the pacer's FIFO fraction).

pub mod grant_scheduler;
pub mod send_scheduler;
pub mod winner_tree;

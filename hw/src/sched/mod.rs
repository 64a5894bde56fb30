//! Homa's scheduling: the ordered sets behind the receiver's grant scheduler
//! and the sender's SRPT choice. `winner_tree` keeps the best of up to 16,384
//! entries, one update per cycle.

pub mod grant_scheduler;
pub mod winner_tree;

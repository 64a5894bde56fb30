//! The receive path, in the order a frame meets it: `parser` checks and
//! classifies every frame (its verdicts counted by `counters`) while `fifo`
//! holds it store-and-forward; `engine` takes accepted DATA, finds or creates
//! its RPC in `rpc_table`, takes receive buffers from `bpage_pool`, and
//! DMA-writes the payload into host memory.

pub mod bpage_pool;
pub mod counters;
pub mod engine;
pub mod fifo;
pub mod parser;
pub mod resend_timer;
pub mod rpc_table;

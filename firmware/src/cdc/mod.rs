//! Clock-domain crossings of the board level: what moves frames between the
//! MACs' clocks and the core's.

pub mod axis_async_fifo;

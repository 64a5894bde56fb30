//! Small reusable blocks that the paths share: a byte-order swap of a whole
//! beat, a register slice and a FIFO for any stream (and the DMA write
//! port's fields over each), field extraction from a header window, and the completion-ring
//! writer.

pub mod byte_swap;
pub mod cpl_writer;
pub mod dma_write_fifo;
pub mod dma_write_slice;
pub mod header_fields;
pub mod register_slice;
pub mod stream_fifo;

//! Received messages: views of the bpage the card wrote them into, which go
//! back to the card when the view is dropped.
//!
//! DESIGN NOTES
//! ------------
//! A message lives where the card put it: at the start of one bpage (64 KiB)
//! of its endpoint's RX area, `Completion::buffer_offset` bytes in. The
//! [`Message`] owns that bpage until it is dropped, then writes its index to
//! RX_BPAGE_PUSH, so the card may fill it again. No copy is made on receive.
//! On a real card the RX area is host memory and [`Message::bytes`] borrows
//! it; the simulated card's memory lives inside the simulation, so there the
//! bytes are copied out on access (the driver's `DmaBuffer` has no host
//! pointer), which changes nothing an application can see.
//!
//! A message keeps its endpoint's receive area alive (an `Arc`); if the
//! endpoint was closed first, the bpage is not given back (the card's pool
//! for a closed endpoint is not the application's any more).

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use homa_driver::RxArea;

use crate::nic::NicInner;

/// What an endpoint shares with the messages it received.
pub(crate) struct RxShared {
    pub(crate) nic: Arc<NicInner>,
    pub(crate) area: RxArea,
    /// False once the endpoint is closed.
    pub(crate) open: AtomicBool,
}

/// A received message: `len` bytes at `offset` in its endpoint's RX area.
pub struct Message {
    rx: Arc<RxShared>,
    /// Byte offset of the message in the RX area (a bpage boundary).
    offset: u64,
    /// Bytes in the message.
    len: usize,
    /// Bpage index held until drop.
    bpage: u32,
}

impl Message {
    pub(crate) fn new(rx: Arc<RxShared>, offset: u64, len: usize, bpage: u32) -> Message {
        Message {
            rx,
            offset,
            len,
            bpage,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The message's bytes: borrowed from the receive buffer on a real card,
    /// copied out of the simulation on a simulated one.
    pub fn bytes(&self) -> Cow<'_, [u8]> {
        let buffer = self.rx.area.buffer();
        match buffer.host_ptr() {
            // SAFETY: the RX area is mapped for as long as `self.rx` lives,
            // the range lies inside it (the card wrote `len` bytes at
            // `offset`, within one bpage), and the card does not write this
            // bpage again until `drop` gives it back.
            Some(p) => Cow::Borrowed(unsafe {
                std::slice::from_raw_parts(p.as_ptr().add(self.offset as usize), self.len)
            }),
            None => Cow::Owned(self.to_vec()),
        }
    }

    /// Copies `out.len()` bytes from byte `at` of the message.
    pub fn read(&self, at: usize, out: &mut [u8]) {
        assert!(at + out.len() <= self.len, "read past the message's end");
        self.rx.area.buffer().read(self.offset as usize + at, out);
    }

    /// The message's bytes, copied.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = vec![0u8; self.len];
        self.read(0, &mut out);
        out
    }

    /// The bpage holding the message (given back on drop).
    pub fn bpage(&self) -> u32 {
        self.bpage
    }
}

impl std::fmt::Debug for Message {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Message")
            .field("len", &self.len)
            .field("bpage", &self.bpage)
            .finish()
    }
}

impl Drop for Message {
    fn drop(&mut self) {
        if !self.rx.open.load(Ordering::Acquire) {
            return;
        }
        if let Err(e) = self.rx.area.give_back(&self.rx.nic.device, self.bpage) {
            tracing::warn!(bpage = self.bpage, "could not give a bpage back: {e}");
        }
    }
}

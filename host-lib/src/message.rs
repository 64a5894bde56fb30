//! Received messages: views of the bpages the card wrote them into, which go
//! back to the card when the view is dropped.
//!
//! DESIGN NOTES
//! ------------
//! A message lives where the card put it, as HomaModule lays one out: byte i
//! at byte `i % 64 KiB` of the message's bpage `i / 64 KiB`, in bpages of its
//! endpoint's RX area that need not be next to each other (the completion
//! lists them). The [`Message`] owns those bpages until it is dropped, then
//! writes each index to RX_BPAGE_PUSH, so the card may fill them again. No
//! copy is made on receive: [`Message::segments`] gives one slice per bpage,
//! and [`Message::bytes`] one slice when the message fits a bpage (it copies
//! otherwise). On a real card the RX area is host memory and these borrow
//! it; the simulated card's memory lives inside the simulation, so there the
//! bytes are copied out on access (the driver's `DmaBuffer` has no host
//! pointer), which changes nothing an application can see.
//!
//! A message keeps its endpoint's receive area alive (an `Arc`); if the
//! endpoint was closed first, the bpages are not given back (the card's pool
//! for a closed endpoint is not the application's any more).

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use homa_driver::RxArea;
use homa_hw::rx::bpage_pool::BPAGE_BYTES;

use crate::nic::NicInner;

/// What an endpoint shares with the messages it received.
pub(crate) struct RxShared {
    pub(crate) nic: Arc<NicInner>,
    pub(crate) area: RxArea,
    /// False once the endpoint is closed.
    pub(crate) open: AtomicBool,
    /// The card's resets when the endpoint opened: after another, its pages
    /// are nobody's on the card (and its endpoint block may be another's).
    pub(crate) resets: u64,
}

/// A received message: `len` bytes in `bpages` of its endpoint's RX area.
pub struct Message {
    rx: Arc<RxShared>,
    /// Bytes in the message.
    len: usize,
    /// The bpages holding the message, in order; held until drop.
    bpages: Vec<u32>,
}

const BPAGE: usize = BPAGE_BYTES as usize;

impl Message {
    pub(crate) fn new(rx: Arc<RxShared>, len: usize, bpages: Vec<u32>) -> Message {
        debug_assert_eq!(bpages.len(), len.div_ceil(BPAGE).max(1));
        Message { rx, len, bpages }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The message's bytes: borrowed from the receive buffer on a real card
    /// when the message fits one bpage; copied otherwise, and always out of
    /// the simulation on a simulated one.
    pub fn bytes(&self) -> Cow<'_, [u8]> {
        let mut segments = self.segments();
        match segments.len() {
            1 => segments.pop().unwrap(),
            _ => Cow::Owned(self.to_vec()),
        }
    }

    /// The message as one slice per bpage, in order (all but the last
    /// 64 KiB): borrowed on a real card, copied on a simulated one.
    pub fn segments(&self) -> Vec<Cow<'_, [u8]>> {
        let buffer = self.rx.area.buffer();
        self.bpages
            .iter()
            .enumerate()
            .map(|(i, &page)| {
                let start = i * BPAGE;
                let len = (self.len - start).min(BPAGE);
                let offset = page as usize * BPAGE;
                match buffer.host_ptr() {
                    // SAFETY: the RX area is mapped for as long as `self.rx`
                    // lives, the range lies inside it (bpage `page` of the
                    // area, `len` <= 64 KiB of it), and the card does not
                    // write this bpage again until `drop` gives it back.
                    Some(p) => Cow::Borrowed(unsafe {
                        std::slice::from_raw_parts(p.as_ptr().add(offset), len)
                    }),
                    None => {
                        let mut out = vec![0u8; len];
                        buffer.read(offset, &mut out);
                        Cow::Owned(out)
                    }
                }
            })
            .collect()
    }

    /// Copies `out.len()` bytes from byte `at` of the message.
    pub fn read(&self, at: usize, out: &mut [u8]) {
        assert!(at + out.len() <= self.len, "read past the message's end");
        let buffer = self.rx.area.buffer();
        let mut done = 0;
        while done < out.len() {
            let i = at + done;
            let n = (BPAGE - i % BPAGE).min(out.len() - done);
            let offset = self.bpages[i / BPAGE] as usize * BPAGE + i % BPAGE;
            buffer.read(offset, &mut out[done..done + n]);
            done += n;
        }
    }

    /// The message's bytes, copied.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = vec![0u8; self.len];
        self.read(0, &mut out);
        out
    }

    /// The bpages holding the message, in order (given back on drop).
    pub fn bpages(&self) -> &[u32] {
        &self.bpages
    }
}

impl std::fmt::Debug for Message {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Message")
            .field("len", &self.len)
            .field("bpages", &self.bpages)
            .finish()
    }
}

impl Drop for Message {
    fn drop(&mut self) {
        if !self.rx.open.load(Ordering::Acquire)
            || self.rx.nic.resets.load(Ordering::SeqCst) != self.rx.resets
        {
            return;
        }
        for &page in &self.bpages {
            if let Err(e) = self.rx.area.give_back(&self.rx.nic.device, page) {
                tracing::warn!(bpage = page, "could not give a bpage back: {e}");
            }
        }
    }
}

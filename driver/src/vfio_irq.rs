//! Interrupts of a device behind VFIO, delivered through eventfds.
//!
//! DESIGN NOTES
//! ------------
//! VFIO_DEVICE_SET_IRQS hands the kernel one eventfd per vector of an
//! interrupt kind (INTx, MSI or MSI-X); the kernel's handler adds 1 to the
//! eventfd's counter each time the vector fires. Waiting is `poll` on that fd
//! with a timeout, then a read, which returns the count and zeroes it, so
//! several interrupts between two waits are counted, not lost.
//!
//! INTx is level triggered and shared: VFIO masks the line when it fires, and
//! the device keeps it asserted until the driver clears the cause in the
//! device. So INTx is: wait, clear the cause in the device, then
//! [`Interrupts::unmask`]. MSI and MSI-X are edge messages: no unmask.
//!
//! Only one kind can be enabled at a time (PCI allows one); the
//! [`Interrupts`] value borrows its backend and turns its kind off when
//! dropped, so teardown order is enforced by the borrow checker. The Homa
//! card's MSI-X vectors are the backend's own instead
//! (`Backend::enable_interrupts`): host-lib waits on them through the
//! `Backend` trait, so `VfioBackend` keeps their eventfds and turns them off
//! when it is dropped. Both use [`enable_eventfds`] and [`wait_eventfd`].

use std::fmt;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::time::{Duration, Instant};

use vfio_bindings::bindings::vfio as sys;
use vfio_ioctls::VfioDevice;
use vmm_sys_util::eventfd::{EventFd, EFD_NONBLOCK};

use crate::pci::PciAddress;
use crate::vfio::VfioError;

/// An interrupt kind (VFIO's IRQ index of a PCI device).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IrqKind {
    /// The legacy shared line; one vector.
    Intx,
    Msi,
    MsiX,
}

impl IrqKind {
    pub(crate) fn index(self) -> u32 {
        match self {
            IrqKind::Intx => sys::VFIO_PCI_INTX_IRQ_INDEX,
            IrqKind::Msi => sys::VFIO_PCI_MSI_IRQ_INDEX,
            IrqKind::MsiX => sys::VFIO_PCI_MSIX_IRQ_INDEX,
        }
    }
}

impl fmt::Display for IrqKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            IrqKind::Intx => "INTx",
            IrqKind::Msi => "MSI",
            IrqKind::MsiX => "MSI-X",
        })
    }
}

/// Enabled interrupt vectors of one kind; disabled when dropped.
pub struct Interrupts<'a> {
    device: &'a VfioDevice,
    address: PciAddress,
    kind: IrqKind,
    /// One eventfd per vector, in vector order.
    fds: Vec<EventFd>,
}

impl<'a> Interrupts<'a> {
    pub(crate) fn enable(
        device: &'a VfioDevice,
        address: PciAddress,
        kind: IrqKind,
        count: u32,
    ) -> Result<Self, VfioError> {
        let fds = enable_eventfds(device, address, kind, count)?;
        Ok(Interrupts {
            device,
            address,
            kind,
            fds,
        })
    }

    pub fn kind(&self) -> IrqKind {
        self.kind
    }

    /// Vectors enabled.
    pub fn count(&self) -> u32 {
        self.fds.len() as u32
    }

    /// The eventfd of `vector`, for a caller's own event loop (epoll).
    pub fn eventfd(&self, vector: u32) -> Option<BorrowedFd<'_>> {
        let fd = self.fds.get(vector as usize)?;
        // SAFETY: the fd is owned by `self.fds` and outlives the borrow.
        Some(unsafe { BorrowedFd::borrow_raw(fd.as_raw_fd()) })
    }

    /// Waits up to `timeout` for `vector` to fire; returns how many times it
    /// fired since the last wait (at least 1).
    pub fn wait(&self, vector: u32, timeout: Duration) -> Result<u64, VfioError> {
        let fd = self
            .fds
            .get(vector as usize)
            .ok_or(VfioError::IrqUnavailable {
                address: self.address,
                kind: self.kind,
                available: self.count(),
                wanted: vector + 1,
            })?;
        wait_eventfd(fd, self.address, self.kind, vector, timeout)
    }

    /// Re-arms INTx after the device's interrupt cause was cleared (see the
    /// DESIGN NOTES); MSI and MSI-X need no unmask, and this does nothing.
    pub fn unmask(&self) -> Result<(), VfioError> {
        if self.kind != IrqKind::Intx {
            return Ok(());
        }
        self.device
            .unmask_irq(self.kind.index())
            .map_err(|source| VfioError::Irq {
                address: self.address,
                kind: self.kind,
                action: "unmasking",
                source,
            })
    }
}

impl Drop for Interrupts<'_> {
    fn drop(&mut self) {
        if let Err(e) = self.device.disable_irq(self.kind.index()) {
            tracing::warn!(address = %self.address, kind = %self.kind, "disabling interrupts: {e}");
        }
    }
}

/// Waits up to `timeout` for `fd` (vector `vector` of `kind`) to be
/// signalled; returns its count (at least 1), and resets it.
pub(crate) fn wait_eventfd(
    fd: &EventFd,
    address: PciAddress,
    kind: IrqKind,
    vector: u32,
    timeout: Duration,
) -> Result<u64, VfioError> {
    let start = Instant::now();
    let fd_error = |source| VfioError::EventFd {
        address,
        kind,
        vector,
        source,
    };
    loop {
        match fd.read() {
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(fd_error(e)),
        }
        let left = timeout.saturating_sub(start.elapsed());
        if left.is_zero() {
            return Err(VfioError::IrqTimeout {
                address,
                kind,
                vector,
                waited_ms: start.elapsed().as_millis(),
            });
        }
        let mut pfd = libc::pollfd {
            fd: fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = left.as_millis().clamp(1, i32::MAX as u128) as i32;
        // SAFETY: one valid pollfd, for the duration of the call.
        let r = unsafe { libc::poll(&mut pfd, 1, ms) };
        if r < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(fd_error(e));
            }
        }
    }
}

/// Turns on `count` vectors of `kind` on `device`, one new eventfd each.
pub(crate) fn enable_eventfds(
    device: &VfioDevice,
    address: PciAddress,
    kind: IrqKind,
    count: u32,
) -> Result<Vec<EventFd>, VfioError> {
    let available = device.get_irq_info(kind.index()).map_or(0, |i| i.count);
    if count == 0 || count > available {
        return Err(VfioError::IrqUnavailable {
            address,
            kind,
            available,
            wanted: count,
        });
    }
    let fds = (0..count)
        .map(|vector| {
            EventFd::new(EFD_NONBLOCK).map_err(|source| VfioError::EventFd {
                address,
                kind,
                vector,
                source,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    device
        .enable_irq(kind.index(), fds.iter().collect())
        .map_err(|source| VfioError::Irq {
            address,
            kind,
            action: "enabling",
            source,
        })?;
    tracing::debug!(%address, %kind, count, "interrupts enabled");
    Ok(fds)
}

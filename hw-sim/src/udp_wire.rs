//! A simulated card's Ethernet port on a real wire: each Ethernet frame (no
//! FCS) travels as one UDP datagram, the format of QEMU's `-netdev dgram`
//! (and `-netdev socket,udp=`). A card listening on A and sending to B shares
//! a wire with a VM started with
//! `-netdev dgram,id=n0,local.type=inet,local.host=127.0.0.1,local.port=B,`
//! `remote.type=inet,remote.host=127.0.0.1,remote.port=A -device e1000,netdev=n0`,
//! or with another simulated card in another process.
//!
//! The socket is non-blocking: the card's clock never waits for the network.
//! Its receive buffer is made as large as the host allows (`RECV_BUFFER_BYTES`,
//! capped by net.core.rmem_max): a Linux peer sends a grant's worth of DATA
//! (200 KB and more) in one burst, faster than a simulated card drains the
//! socket, and with the default 208 KiB the kernel dropped 19 of its frames
//! (observed: the host's RcvbufErrors), which a card without RESEND never
//! recovers.
//! A datagram that is not a plausible Ethernet frame (shorter than a header,
//! longer than a jumbo frame) is dropped and counted; the card's parser deals
//! with everything else.
//!
//! Loss on receive ([`UdpWire::set_receive_loss`], seeded): each frame that
//! arrives is dropped with a given probability before the card sees it, and
//! counted; what a lossy link in front of the card would do.

use std::io::ErrorKind;
use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

/// Shortest datagram taken as a frame: an Ethernet header.
pub const MIN_FRAME_BYTES: usize = 14;
/// Longest: a 9000-byte jumbo frame with its Ethernet header.
pub const MAX_FRAME_BYTES: usize = 9014;
/// The socket receive buffer asked for: about 1,300 full frames waiting
/// (the kernel counts about 3 KiB per queued datagram).
pub const RECV_BUFFER_BYTES: usize = 4 << 20;

/// Why the wire could not be set up or used.
#[derive(Debug, thiserror::Error)]
pub enum UdpWireError {
    #[error("cannot bind the UDP wire to {local}: {source}")]
    Bind {
        local: SocketAddr,
        source: std::io::Error,
    },
    #[error("UDP wire {local} -> {remote}: {source}")]
    Io {
        local: SocketAddr,
        remote: SocketAddr,
        source: std::io::Error,
    },
}

/// What went over the wire.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UdpWireStats {
    pub frames_sent: u64,
    pub frames_received: u64,
    /// Datagrams too short or too long to be frames.
    pub datagrams_dropped: u64,
    /// Datagrams from an address other than the remote end.
    pub foreign_datagrams: u64,
    /// Frames dropped on receive by the configured loss
    /// ([`UdpWire::set_receive_loss`]); not in `frames_received`.
    pub frames_lost: u64,
}

/// One end of the wire.
pub struct UdpWire {
    socket: UdpSocket,
    local: SocketAddr,
    remote: SocketAddr,
    stats: UdpWireStats,
    /// Frames in a million dropped on receive, and the draws' state
    /// (xorshift64*).
    loss_ppm: u32,
    loss_rng: u64,
}

impl UdpWire {
    /// Listens on `local`, sends to `remote`.
    pub fn bind(local: SocketAddr, remote: SocketAddr) -> Result<UdpWire, UdpWireError> {
        let socket =
            UdpSocket::bind(local).map_err(|source| UdpWireError::Bind { local, source })?;
        let local = socket
            .local_addr()
            .map_err(|source| UdpWireError::Bind { local, source })?;
        grow_receive_buffer(&socket);
        socket
            .set_nonblocking(true)
            .map_err(|source| UdpWireError::Io {
                local,
                remote,
                source,
            })?;
        Ok(UdpWire {
            socket,
            local,
            remote,
            stats: UdpWireStats::default(),
            loss_ppm: 0,
            loss_rng: 1,
        })
    }

    /// Drops each frame received with probability `fraction` (0.0 to 1.0),
    /// drawn from `seed`: the same seed, the same frames lost (counting
    /// frames as they arrive).
    pub fn set_receive_loss(&mut self, fraction: f64, seed: u64) {
        self.loss_ppm = (fraction.clamp(0.0, 1.0) * 1e6).round() as u32;
        self.loss_rng = seed | 1;
    }

    /// The next draw against the loss rate: true to drop.
    fn lose(&mut self) -> bool {
        if self.loss_ppm == 0 {
            return false;
        }
        self.loss_rng ^= self.loss_rng >> 12;
        self.loss_rng ^= self.loss_rng << 25;
        self.loss_rng ^= self.loss_rng >> 27;
        let draw = (self.loss_rng.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) % 1_000_000;
        draw < u64::from(self.loss_ppm)
    }

    /// Sends to `remote` from now on (for wiring two ends bound to port 0).
    pub fn set_remote(&mut self, remote: SocketAddr) {
        self.remote = remote;
    }

    /// The address it listens on (useful after binding port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    pub fn stats(&self) -> &UdpWireStats {
        &self.stats
    }

    /// Sends one frame as one datagram.
    pub fn send(&mut self, frame: &[u8]) -> Result<(), UdpWireError> {
        match self.socket.send_to(frame, self.remote) {
            Ok(_) => {
                self.stats.frames_sent += 1;
                Ok(())
            }
            // Nobody listening yet (ICMP port unreachable from an earlier
            // send): the frame is lost, as on a cable with no peer.
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => Ok(()),
            Err(source) => Err(UdpWireError::Io {
                local: self.local,
                remote: self.remote,
                source,
            }),
        }
    }

    /// Waits up to `timeout` (wall time) for a datagram to arrive; true if
    /// one is waiting (it stays queued for [`UdpWire::receive`]). For a
    /// process whose card has nothing to do: it sleeps here instead of
    /// clocking an idle model.
    pub fn wait_readable(&mut self, timeout: Duration) -> Result<bool, UdpWireError> {
        let io = |source| UdpWireError::Io {
            local: self.local,
            remote: self.remote,
            source,
        };
        self.socket.set_nonblocking(false).map_err(io)?;
        self.socket
            .set_read_timeout(Some(timeout.max(Duration::from_micros(1))))
            .map_err(io)?;
        // Peeking one byte of a longer datagram truncates only the copy.
        let peeked = self.socket.peek_from(&mut [0u8; 1]);
        self.socket.set_nonblocking(true).map_err(io)?;
        match peeked {
            Ok(_) => Ok(true),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => Ok(false),
            // An ICMP error from an earlier send, now consumed: no frame, but
            // no reason to sleep either.
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => Ok(true),
            Err(source) => Err(io(source)),
        }
    }

    /// Every frame that has arrived since the last call, in order.
    pub fn receive(&mut self) -> Result<Vec<Vec<u8>>, UdpWireError> {
        let mut frames = Vec::new();
        let mut buf = vec![0u8; MAX_FRAME_BYTES + 1];
        loop {
            match self.socket.recv_from(&mut buf) {
                Ok((n, from)) => {
                    if from != self.remote {
                        self.stats.foreign_datagrams += 1;
                        continue;
                    }
                    if !(MIN_FRAME_BYTES..=MAX_FRAME_BYTES).contains(&n) {
                        self.stats.datagrams_dropped += 1;
                        continue;
                    }
                    if self.lose() {
                        self.stats.frames_lost += 1;
                        continue;
                    }
                    self.stats.frames_received += 1;
                    frames.push(buf[..n].to_vec());
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(frames),
                Err(e) if e.kind() == ErrorKind::ConnectionRefused => continue,
                Err(source) => {
                    return Err(UdpWireError::Io {
                        local: self.local,
                        remote: self.remote,
                        source,
                    })
                }
            }
        }
    }
}

/// Asks for a `RECV_BUFFER_BYTES` receive buffer; the kernel caps it at
/// net.core.rmem_max, and a smaller one only makes losses under load likelier,
/// so a refusal is logged, not an error.
fn grow_receive_buffer(socket: &UdpSocket) {
    use std::os::fd::AsRawFd;
    let bytes = RECV_BUFFER_BYTES as libc::c_int;
    // SAFETY: a plain setsockopt on our socket with an int argument.
    let r = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            &bytes as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r != 0 {
        tracing::warn!(
            "UDP wire: SO_RCVBUF {bytes}: {}",
            std::io::Error::last_os_error()
        );
    }
}

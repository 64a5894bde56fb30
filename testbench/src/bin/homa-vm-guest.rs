//! The guest side of the kernel-Homa VM test (`make homa-vm-test`; the host
//! side is `testbench/tests/homa_vm.rs`): a Homa client and a Homa echo
//! server on the guest's HomaModule, speaking to the simulated card over
//! QEMU's UDP wire.
//!
//! `client` sends one request per `--size` to the card's echo server and
//! checks each response byte for byte; `server` answers `--count` requests
//! with their own bytes (the card's `homa-nic rpc` checks them) and then
//! waits until the card has acked every response, which is when HomaModule
//! frees it (the socket stays open meanwhile: closing it would abort a
//! response still being resent). Each prints
//! one `HOMA-VM ...` line per RPC and ends with `HOMA-VM CLIENT PASS`,
//! `HOMA-VM SERVER PASS` or `HOMA-VM ... FAIL: <why>`; the host reads them on
//! the serial console. A watchdog ends a stuck run with the socket's RPC
//! states (HOMAIOCINFO: bytes sent, granted, still to receive) and
//! HomaModule's packet counters, so a stall says where it stalled.
//!
//! DESIGN NOTES
//! ------------
//! HomaModule's user API is declared here from its documentation (homa.h
//! and the man pages homa(7), sendmsg(2), recvmsg(2) of the commit
//! `testbench/vm/fetch-homa.sh` pins), not generated from its header, so the
//! test needs no C toolchain for the guest. Sizes are checked at compile time
//! against the sizes HomaModule's own log prints at load (e.g. its recvmsg
//! control block is 88 bytes).
//!
//! Received messages are read in place from the socket's buffer region (the
//! bpages recvmsg names) and their bpages handed back on the next recvmsg,
//! as the API intends; the echo server copies a request out before sending it
//! back, so the response does not depend on when HomaModule copies from user
//! memory.

use std::io::Write;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context};
use clap::{Parser, Subcommand};

/// HomaModule's user API (homa.h), our declarations.
mod api {
    /// IANA's IP protocol number for Homa; also the socket option level.
    pub const IPPROTO_HOMA: i32 = 146;
    /// setsockopt: the buffer region for received messages.
    pub const SO_HOMA_RCVBUF: i32 = 10;
    pub const BPAGE_BYTES: usize = 1 << 16;
    pub const MAX_MESSAGE_BYTES: usize = 1_000_000;
    pub const MAX_BPAGES: usize = MAX_MESSAGE_BYTES.div_ceil(BPAGE_BYTES);

    /// sendmsg's msg_control. `id` 0 sends a request (and returns its id);
    /// otherwise the response to request `id`.
    #[repr(C)]
    #[derive(Default)]
    pub struct SendmsgArgs {
        pub id: u64,
        pub completion_cookie: u64,
        pub flags: u32,
        pub reserved: u32,
    }

    /// recvmsg's msg_control (in: bpages being returned; out: the message's).
    #[repr(C)]
    #[derive(Default)]
    pub struct RecvmsgArgs {
        pub id: u64,
        pub completion_cookie: u64,
        pub num_bpages: u32,
        pub reserved: u32,
        pub bpage_offsets: [u32; MAX_BPAGES],
    }

    #[repr(C)]
    pub struct RcvbufArgs {
        pub start: u64,
        pub length: u64,
    }

    /// One RPC's state, as HOMAIOCINFO reports it.
    #[repr(C)]
    #[derive(Clone, Copy)]
    pub struct RpcInfo {
        pub id: u64,
        /// A sockaddr_storage (a sockaddr_in for IPv4 peers).
        pub peer: [u64; 16],
        pub completion_cookie: u64,
        pub tx_length: i32,
        pub tx_sent: u32,
        pub tx_granted: u32,
        pub tx_prio: u32,
        pub rx_length: i32,
        pub rx_remaining: u32,
        pub rx_gaps: u32,
        pub rx_gap_bytes: u32,
        pub rx_granted: u32,
        pub flags: u16,
    }

    #[repr(C)]
    pub struct Info {
        pub rpc_info: u64,
        pub rpc_info_length: u64,
        pub bpool_avail_bytes: u64,
        pub port: u32,
        pub num_rpcs: u32,
        pub error_msg: [u8; 104],
    }

    /// _IOWR('h', 0x90, struct homa_info).
    pub const HOMAIOCINFO: u64 =
        (3 << 30) | ((std::mem::size_of::<Info>() as u64) << 16) | ((b'h' as u64) << 8) | 0x90;

    const _: () = assert!(std::mem::size_of::<SendmsgArgs>() == 24);
    const _: () = assert!(std::mem::size_of::<RecvmsgArgs>() == 88);
    const _: () = assert!(std::mem::size_of::<RpcInfo>() == 184);
    const _: () = assert!(std::mem::size_of::<Info>() == 136);
}

/// A Homa client and echo server for the kernel-Homa VM test.
#[derive(Parser)]
#[command(name = "homa-vm-guest")]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
    /// Give up (printing the socket's RPC states) after this many seconds.
    #[arg(long, default_value_t = 240)]
    timeout_s: u64,
}

#[derive(Subcommand)]
enum Cmd {
    /// Send one request per size to `--to` and check each echoed response.
    Client {
        #[arg(long)]
        to: SocketAddrV4,
        /// Request sizes in bytes (1 to 1,000,000), comma-separated.
        #[arg(long, value_delimiter = ',', required = true)]
        size: Vec<usize>,
    },
    /// Answer `--count` requests on `--port` with their own bytes, then wait
    /// until the client has acked every response.
    Server {
        #[arg(long, default_value_t = 99)]
        port: u16,
        #[arg(long)]
        count: usize,
        /// Fail if responses are still held (unacked) this long after the last
        /// one was handed to the kernel.
        #[arg(long, default_value_t = 120)]
        drain_s: u64,
    },
}

/// An open Homa socket with its receive buffer region.
struct HomaSocket {
    fd: OwnedFd,
    region: *mut u8,
    region_bytes: usize,
    /// bpages of the last message received, handed back on the next recvmsg.
    to_return: Vec<u32>,
}

/// One received message, in place in the buffer region.
struct Message {
    id: u64,
    peer: SocketAddrV4,
    bytes: Vec<u8>,
}

fn errno_context(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

impl HomaSocket {
    /// Opens a socket (bound to `port` to act as a server) with a buffer
    /// region of `region_bytes`.
    fn open(port: Option<u16>, region_bytes: usize) -> anyhow::Result<Self> {
        // SAFETY: plain syscalls; results checked.
        let raw = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM, api::IPPROTO_HOMA) };
        if raw < 0 {
            bail!(errno_context(
                "socket(AF_INET, SOCK_DGRAM, IPPROTO_HOMA) (is homa.ko loaded?)"
            ));
        }
        // SAFETY: raw is a new descriptor we own.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        if let Some(port) = port {
            let addr = sockaddr(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, port));
            // SAFETY: addr is a valid sockaddr_in.
            let r = unsafe {
                libc::bind(
                    fd.as_raw_fd(),
                    &addr as *const _ as *const libc::sockaddr,
                    std::mem::size_of::<libc::sockaddr_in>() as u32,
                )
            };
            ensure!(r == 0, errno_context(&format!("bind to Homa port {port}")));
        }
        // SAFETY: anonymous private mapping; checked.
        let region = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                region_bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        ensure!(
            region != libc::MAP_FAILED,
            errno_context("mmap of the buffer region")
        );
        let args = api::RcvbufArgs {
            start: region as u64,
            length: region_bytes as u64,
        };
        // SAFETY: args is the struct SO_HOMA_RCVBUF takes.
        let r = unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                api::IPPROTO_HOMA,
                api::SO_HOMA_RCVBUF,
                &args as *const _ as *const libc::c_void,
                std::mem::size_of::<api::RcvbufArgs>() as u32,
            )
        };
        ensure!(r == 0, errno_context("setsockopt(SO_HOMA_RCVBUF)"));
        Ok(HomaSocket {
            fd,
            region: region as *mut u8,
            region_bytes,
            to_return: Vec::new(),
        })
    }

    /// Sends a request (`id` 0, returns the new RPC's id) or the response to
    /// request `id`.
    fn send(&self, to: SocketAddrV4, id: u64, data: &[u8]) -> anyhow::Result<u64> {
        let mut args = api::SendmsgArgs {
            id,
            ..Default::default()
        };
        let mut addr = sockaddr(to);
        let mut iov = libc::iovec {
            iov_base: data.as_ptr() as *mut libc::c_void,
            iov_len: data.len(),
        };
        // SAFETY: zeroed msghdr is valid; fields set below.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_name = &mut addr as *mut _ as *mut libc::c_void;
        msg.msg_namelen = std::mem::size_of::<libc::sockaddr_in>() as u32;
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        // HomaModule reads its arguments from msg_control with msg_controllen 0 (sendmsg(2)).
        msg.msg_control = &mut args as *mut _ as *mut libc::c_void;
        msg.msg_controllen = 0;
        // SAFETY: every pointer in msg is live for the call.
        let r = unsafe { libc::sendmsg(self.fd.as_raw_fd(), &msg, 0) };
        ensure!(
            r >= 0,
            "{} ({})",
            errno_context("sendmsg"),
            self.error_msg()
        );
        Ok(args.id)
    }

    /// Waits for the next message (request or response), returning the
    /// previous message's bpages to HomaModule.
    fn receive(&mut self) -> anyhow::Result<Message> {
        let mut args = api::RecvmsgArgs {
            num_bpages: self.to_return.len() as u32,
            ..Default::default()
        };
        args.bpage_offsets[..self.to_return.len()].copy_from_slice(&self.to_return);
        self.to_return.clear();
        // SAFETY: zeroed sockaddr_in and msghdr are valid.
        let mut addr: libc::sockaddr_in = unsafe { std::mem::zeroed() };
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_name = &mut addr as *mut _ as *mut libc::c_void;
        msg.msg_namelen = std::mem::size_of::<libc::sockaddr_in>() as u32;
        msg.msg_control = &mut args as *mut _ as *mut libc::c_void;
        msg.msg_controllen = std::mem::size_of::<api::RecvmsgArgs>();
        // SAFETY: every pointer in msg is live for the call.
        let length = unsafe { libc::recvmsg(self.fd.as_raw_fd(), &mut msg, 0) };
        let bpages = &args.bpage_offsets[..(args.num_bpages as usize).min(api::MAX_BPAGES)];
        self.to_return.extend_from_slice(bpages);
        ensure!(
            length >= 0,
            "{} for RPC {} ({})",
            errno_context("recvmsg"),
            args.id,
            self.error_msg()
        );
        let length = length as usize;
        // All bpages but the last are full; the last holds the rest.
        let mut bytes = Vec::with_capacity(length);
        for &offset in bpages {
            let take = (length - bytes.len()).min(api::BPAGE_BYTES);
            ensure!(
                offset as usize + take <= self.region_bytes,
                "recvmsg named bpage offset {offset} beyond the {}-byte region",
                self.region_bytes
            );
            // SAFETY: inside the mapped region (checked above), written by HomaModule.
            let chunk =
                unsafe { std::slice::from_raw_parts(self.region.add(offset as usize), take) };
            bytes.extend_from_slice(chunk);
        }
        ensure!(
            bytes.len() == length,
            "recvmsg returned {length} bytes in {} bpages: they hold only {}",
            bpages.len(),
            bytes.len()
        );
        Ok(Message {
            id: args.id,
            peer: SocketAddrV4::new(
                Ipv4Addr::from(u32::from_be(addr.sin_addr.s_addr)),
                u16::from_be(addr.sin_port),
            ),
            bytes,
        })
    }

    /// HomaModule's explanation of the socket's last error.
    fn error_msg(&self) -> String {
        self.info(0).map(|(i, _)| i).unwrap_or_default()
    }

    /// HOMAIOCINFO: the last error message, and each RPC's state (up to `max_rpcs`).
    fn info(&self, max_rpcs: usize) -> anyhow::Result<(String, Vec<api::RpcInfo>)> {
        let mut rpcs: Vec<api::RpcInfo> = Vec::with_capacity(max_rpcs);
        let mut info = api::Info {
            rpc_info: rpcs.as_mut_ptr() as u64,
            rpc_info_length: (max_rpcs * std::mem::size_of::<api::RpcInfo>()) as u64,
            bpool_avail_bytes: 0,
            port: 0,
            num_rpcs: 0,
            error_msg: [0; 104],
        };
        // SAFETY: info and the rpc array it names are live and sized as declared.
        let r = unsafe { libc::ioctl(self.fd.as_raw_fd(), api::HOMAIOCINFO as _, &mut info) };
        ensure!(r == 0, errno_context("ioctl(HOMAIOCINFO)"));
        // SAFETY: HomaModule wrote min(num_rpcs, capacity) entries.
        unsafe { rpcs.set_len((info.num_rpcs as usize).min(max_rpcs)) };
        let end = info.error_msg.iter().position(|&b| b == 0).unwrap_or(104);
        let text = format!(
            "{} (port {}, {} RPCs, {} buffer bytes free)",
            String::from_utf8_lossy(&info.error_msg[..end]),
            info.port,
            info.num_rpcs,
            info.bpool_avail_bytes
        );
        Ok((text, rpcs))
    }

    /// One line per RPC the socket holds: where each direction stands.
    fn describe_rpcs(&self) -> String {
        match self.info(64) {
            Ok((summary, rpcs)) => {
                let mut s = format!("socket: {summary}\n");
                for r in rpcs {
                    s.push_str(&format!(
                        "  rpc {}: tx {}/{} sent, granted {}, prio {}; rx length {}, remaining {}, granted {}, gaps {} ({} bytes), flags {:#x}\n",
                        r.id, r.tx_sent, r.tx_length, r.tx_granted, r.tx_prio, r.rx_length,
                        r.rx_remaining, r.rx_granted, r.rx_gaps, r.rx_gap_bytes, r.flags
                    ));
                }
                s
            }
            Err(e) => format!("socket: {e}\n"),
        }
    }
}

fn sockaddr(a: SocketAddrV4) -> libc::sockaddr_in {
    // SAFETY: zeroed sockaddr_in is valid.
    let mut s: libc::sockaddr_in = unsafe { std::mem::zeroed() };
    s.sin_family = libc::AF_INET as u16;
    s.sin_port = a.port().to_be();
    s.sin_addr.s_addr = u32::from(*a.ip()).to_be();
    s
}

/// Request content: every byte depends on its offset and the message size,
/// so a misplaced, stale or truncated chunk shows.
fn pattern(size: usize) -> Vec<u8> {
    (0..size)
        .map(|i| ((i as u64).wrapping_mul(0x9e37_79b9) >> 7 ^ (i as u64 >> 16) ^ size as u64) as u8)
        .collect()
}

/// HomaModule's counters that say how the transfer went (nonzero ones only).
fn homa_metrics() -> String {
    const KEEP: &[&str] = &[
        "packets_sent_",
        "packets_rcvd_",
        "resent_",
        "rpc_timeouts",
        "unknown_rpcs",
        "short_packets",
        "packet_discards",
        "server_rpc_discards",
        "ignored_need_acks",
        "buffer_alloc_failures",
        "dropped_data_no_bufs",
        "gaps_created",
        "fifo_grant_bytes",
    ];
    let Ok(text) = std::fs::read_to_string("/proc/net/homa_metrics") else {
        return "no /proc/net/homa_metrics".into();
    };
    text.lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let (name, value) = (w.next()?, w.next()?);
            (KEEP.iter().any(|k| name.starts_with(k)) && value != "0")
                .then(|| format!("{name}={value}"))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn say(line: &str) {
    // The console is the serial port: one write per line keeps lines whole.
    let _ = writeln!(std::io::stdout(), "{line}");
    let _ = std::io::stdout().flush();
}

fn client(socket: &mut HomaSocket, to: SocketAddrV4, sizes: &[usize]) -> anyhow::Result<()> {
    for &size in sizes {
        ensure!(
            (1..=api::MAX_MESSAGE_BYTES).contains(&size),
            "--size {size}: requests are 1 to {} bytes",
            api::MAX_MESSAGE_BYTES
        );
        let request = pattern(size);
        let start = Instant::now();
        let id = socket
            .send(to, 0, &request)
            .with_context(|| format!("{size}-byte request"))?;
        let response = socket
            .receive()
            .with_context(|| format!("response to {size}-byte request {id}"))?;
        let ms = start.elapsed().as_secs_f64() * 1e3;
        ensure!(
            response.id == id,
            "response for RPC {} while waiting for {id}",
            response.id
        );
        ensure!(
            response.bytes.len() == size,
            "RPC {id}: response of {} bytes to a {size}-byte request",
            response.bytes.len()
        );
        if let Some(at) = response
            .bytes
            .iter()
            .zip(&request)
            .position(|(a, b)| a != b)
        {
            bail!(
                "RPC {id}: response differs from the {size}-byte request at byte {at} (got {:#04x}, sent {:#04x})",
                response.bytes[at],
                request[at]
            );
        }
        say(&format!("HOMA-VM rpc bytes={size} id={id} ok ms={ms:.1}"));
    }
    Ok(())
}

fn server(socket: &mut HomaSocket, port: u16, count: usize, drain_s: u64) -> anyhow::Result<()> {
    say(&format!("HOMA-VM SERVER READY port {port}"));
    for n in 0..count {
        let request = socket.receive().with_context(|| format!("request {n}"))?;
        ensure!(
            request.id & 1 == 1,
            "message {} is a response, not a request",
            request.id
        );
        socket
            .send(request.peer, request.id, &request.bytes)
            .with_context(|| format!("response to request {}", request.id))?;
        say(&format!(
            "HOMA-VM served bytes={} id={} from={}",
            request.bytes.len(),
            request.id,
            request.peer
        ));
    }
    // send() returns once the response is queued, not once it is delivered:
    // closing the socket now would abort a response still being sent (or
    // resent after a loss) and answer the client's RESENDs with ICMP port
    // unreachable. HomaModule frees a server RPC when its client acks it (in
    // a later DATA, or with ACK when asked by NEED_ACK): wait for that.
    let start = Instant::now();
    loop {
        let (_, held) = socket.info(64)?;
        if held.is_empty() {
            break;
        }
        ensure!(
            start.elapsed() < Duration::from_secs(drain_s),
            "{} responses still held (not acked) {drain_s} s after the last was sent\n{}",
            held.len(),
            socket.describe_rpcs()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    say(&format!(
        "HOMA-VM server: every response acked and freed {:.2} s after the last was sent",
        start.elapsed().as_secs_f64()
    ));
    Ok(())
}

fn main() {
    let cli = Cli::parse();
    let (role, port, region_bytes) = match &cli.command {
        Cmd::Client { .. } => ("CLIENT", None, 64 << 20),
        Cmd::Server { port, .. } => ("SERVER", Some(*port), 64 << 20),
    };
    let mut socket = match HomaSocket::open(port, region_bytes) {
        Ok(s) => s,
        Err(e) => {
            say(&format!("HOMA-VM {role} FAIL: {e:#}"));
            std::process::exit(1);
        }
    };
    // The watchdog shares the descriptor only to ask HOMAIOCINFO.
    let fd = socket.fd.as_raw_fd();
    let timeout = Duration::from_secs(cli.timeout_s);
    let region = socket.region as usize;
    std::thread::spawn(move || {
        std::thread::sleep(timeout);
        let probe = HomaSocket {
            // SAFETY: dup gives the watchdog its own descriptor for the same socket.
            fd: unsafe { OwnedFd::from_raw_fd(libc::dup(fd)) },
            region: region as *mut u8,
            region_bytes: 0,
            to_return: Vec::new(),
        };
        say(&format!(
            "HOMA-VM {role} FAIL: no progress within {} s\n{}homa_metrics: {}",
            timeout.as_secs(),
            probe.describe_rpcs(),
            homa_metrics()
        ));
        std::process::exit(2);
    });
    let result = match &cli.command {
        Cmd::Client { to, size } => client(&mut socket, *to, size),
        Cmd::Server {
            port,
            count,
            drain_s,
        } => server(&mut socket, *port, *count, *drain_s),
    };
    say(&format!("HOMA-VM {role} homa_metrics: {}", homa_metrics()));
    match result {
        Ok(()) => say(&format!("HOMA-VM {role} PASS")),
        Err(e) => {
            say(&format!(
                "HOMA-VM {role} FAIL: {e:#}\n{}",
                socket.describe_rpcs()
            ));
            std::process::exit(1);
        }
    }
}

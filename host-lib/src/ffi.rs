//! The C ABI: opaque handles over [`Nic`], [`Endpoint`] and a simulated
//! network, status codes for errors, caller-owned buffers in and out. The
//! header, `include/homa_nic.h`, is generated from this file by cbindgen
//! (the test `tests/c_abi.rs` fails when the committed header is stale;
//! `HOMA_UPDATE_HEADER=1 cargo test -p homa-host --test c_abi` rewrites it).
//!
//! Conventions: every call returns `HOMA_OK` (0), `HOMA_AGAIN` (1: nothing
//! yet, for the `try` calls) or a negative `HOMA_ERR_*`; `homa_strerror`
//! names them. Handles are created by `*_open`/`*_new` and released by
//! `*_close`/`*_free` (close endpoints before their NIC, NICs before their
//! network). Received messages are copied into the caller's buffer and their
//! bpage given back at once; a buffer too small gets `HOMA_ERR_BUFFER_TOO_SMALL`
//! with the needed length in `*len_out`, and the message stays queued.
//! IPv4 addresses are numbers in host order (10.0.0.1 is 0x0a000001). A
//! panic inside the library returns `HOMA_ERR_INTERNAL` instead of unwinding
//! into C. Handles are not thread safe: one thread per handle at a time.

use std::ffi::c_char;
use std::net::Ipv4Addr;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

use crate::endpoint::{Endpoint, Peer, RpcId};
use crate::error::Error;
use crate::nic::{Nic, WaitStart};
use crate::SimNetwork;

/// Success.
pub const HOMA_OK: i32 = 0;
/// Nothing has arrived yet (the `try` calls).
pub const HOMA_AGAIN: i32 = 1;
pub const HOMA_ERR_MESSAGE_TOO_LONG: i32 = -1;
pub const HOMA_ERR_EMPTY_MESSAGE: i32 = -2;
pub const HOMA_ERR_RING_FULL: i32 = -3;
pub const HOMA_ERR_NO_SUCH_RPC: i32 = -4;
pub const HOMA_ERR_SEND_FAILED: i32 = -5;
pub const HOMA_ERR_PORT_IN_USE: i32 = -6;
pub const HOMA_ERR_BAD_PORT: i32 = -7;
pub const HOMA_ERR_NO_FREE_ENDPOINT: i32 = -8;
pub const HOMA_ERR_BUFFER_TOO_SMALL: i32 = -9;
pub const HOMA_ERR_DEVICE: i32 = -10;
/// A NULL handle or pointer, or an index out of range.
pub const HOMA_ERR_INVALID_ARGUMENT: i32 = -11;
/// A bug in the library (a Rust panic, caught).
pub const HOMA_ERR_INTERNAL: i32 = -12;
/// The homa.conf the card was opened with is invalid, or the card refused it
/// (the log says which key, line and allowed range).
pub const HOMA_ERR_CONFIG: i32 = -13;
/// The RPC's peer went silent (the card gave up after timeout_ticks): like
/// ETIMEDOUT from HomaModule.
pub const HOMA_ERR_TIMEOUT: i32 = -14;
/// The card was reset (homa_nic_reset) since the endpoint was opened: the
/// endpoint and its RPCs are gone; open a new one.
pub const HOMA_ERR_CARD_RESET: i32 = -15;
/// The card did not finish a reset.
pub const HOMA_ERR_RESET_STUCK: i32 = -16;
/// Largest message, in bytes. (A literal so cbindgen writes it into the
/// header; the assertion keeps it the card's limit.)
pub const HOMA_MAX_MESSAGE_BYTES: usize = 1_000_000;
const _: () = assert!(HOMA_MAX_MESSAGE_BYTES == crate::MAX_MESSAGE_BYTES);

/// A peer: IPv4 address (host order), MAC address (wire order), Homa port.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct HomaPeer {
    pub ip: u32,
    pub mac: [u8; 6],
    pub port: u16,
}

impl From<HomaPeer> for Peer {
    fn from(p: HomaPeer) -> Peer {
        Peer::new(Ipv4Addr::from(p.ip), p.mac, p.port)
    }
}

impl From<Peer> for HomaPeer {
    fn from(p: Peer) -> HomaPeer {
        HomaPeer {
            ip: p.ip.into(),
            mac: p.mac,
            port: p.port,
        }
    }
}

/// Simulated cards sharing one clock.
pub struct HomaSimNetwork {
    network: Arc<Mutex<SimNetwork>>,
}

/// An opened card.
pub struct HomaNic {
    nic: Nic,
}

/// An open Homa port.
pub struct HomaEndpoint {
    endpoint: Endpoint,
}

fn code(e: &Error) -> i32 {
    match e {
        Error::MessageTooLong { .. } => HOMA_ERR_MESSAGE_TOO_LONG,
        Error::EmptyMessage => HOMA_ERR_EMPTY_MESSAGE,
        Error::RingFull { .. } => HOMA_ERR_RING_FULL,
        Error::NoSuchRpc(_) => HOMA_ERR_NO_SUCH_RPC,
        Error::SendFailed { .. } => HOMA_ERR_SEND_FAILED,
        Error::PortInUse(_) => HOMA_ERR_PORT_IN_USE,
        Error::BadPort => HOMA_ERR_BAD_PORT,
        Error::NoFreeEndpoint(_) => HOMA_ERR_NO_FREE_ENDPOINT,
        Error::BufferTooSmall { .. } => HOMA_ERR_BUFFER_TOO_SMALL,
        Error::Device(_) => HOMA_ERR_DEVICE,
        Error::Config(_) => HOMA_ERR_CONFIG,
        Error::Timeout(_) => HOMA_ERR_TIMEOUT,
        Error::CardReset => HOMA_ERR_CARD_RESET,
        Error::ResetStuck => HOMA_ERR_RESET_STUCK,
    }
}

/// Runs `f`, turning errors into codes (logged) and panics into `HOMA_ERR_INTERNAL`.
fn guard(f: impl FnOnce() -> Result<i32, Error>) -> i32 {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(c)) => c,
        Ok(Err(e)) => {
            tracing::debug!("C call failed: {e}");
            code(&e)
        }
        Err(_) => HOMA_ERR_INTERNAL,
    }
}

/// A static, NUL-terminated description of a status code.
#[no_mangle]
pub extern "C" fn homa_strerror(code: i32) -> *const c_char {
    let s: &'static [u8] = match code {
        HOMA_OK => b"ok\0",
        HOMA_AGAIN => b"nothing yet\0",
        HOMA_ERR_MESSAGE_TOO_LONG => b"message longer than the limit\0",
        HOMA_ERR_EMPTY_MESSAGE => b"empty message\0",
        HOMA_ERR_RING_FULL => b"TX ring full\0",
        HOMA_ERR_NO_SUCH_RPC => b"no such RPC\0",
        HOMA_ERR_SEND_FAILED => b"the card could not send the message\0",
        HOMA_ERR_PORT_IN_USE => b"port already open on this card\0",
        HOMA_ERR_BAD_PORT => b"port 0 is not a Homa port\0",
        HOMA_ERR_NO_FREE_ENDPOINT => b"all endpoints of the card are open\0",
        HOMA_ERR_BUFFER_TOO_SMALL => b"buffer smaller than the message\0",
        HOMA_ERR_DEVICE => b"device error\0",
        HOMA_ERR_INVALID_ARGUMENT => b"invalid argument\0",
        HOMA_ERR_INTERNAL => b"internal error\0",
        HOMA_ERR_CONFIG => b"homa.conf invalid or refused by the card\0",
        HOMA_ERR_TIMEOUT => b"the RPC's peer went silent: timed out\0",
        HOMA_ERR_CARD_RESET => b"the card was reset: the endpoint is gone\0",
        HOMA_ERR_RESET_STUCK => b"the card did not finish its reset\0",
        _ => b"unknown status\0",
    };
    s.as_ptr().cast()
}

/// `cards` simulated cards (1 to 16) on one network (a cable for two, a
/// switch for more); NULL if `cards` is out of range.
#[no_mangle]
pub extern "C" fn homa_sim_network_new(cards: u32) -> *mut HomaSimNetwork {
    if !(1..=16).contains(&cards) {
        return std::ptr::null_mut();
    }
    catch_unwind(|| {
        let network = SimNetwork::new("c-abi", cards as usize, Default::default());
        Box::into_raw(Box::new(HomaSimNetwork {
            network: Arc::new(Mutex::new(network)),
        }))
    })
    .unwrap_or(std::ptr::null_mut())
}

/// Releases a network (its NICs must be closed first).
///
/// # Safety
/// `network` is NULL or a handle from `homa_sim_network_new`, not used after.
#[no_mangle]
pub unsafe extern "C" fn homa_sim_network_free(network: *mut HomaSimNetwork) {
    if !network.is_null() {
        // SAFETY: the caller passes a handle from Box::into_raw, once.
        drop(unsafe { Box::from_raw(network) });
    }
}

/// Cycles (4 ns) the network has simulated.
///
/// # Safety
/// `network` is a live handle from `homa_sim_network_new`.
#[no_mangle]
pub unsafe extern "C" fn homa_sim_network_cycle(network: *const HomaSimNetwork) -> u64 {
    // SAFETY: the caller passes a live handle.
    match unsafe { network.as_ref() } {
        Some(n) => n.network.lock().unwrap_or_else(|e| e.into_inner()).cycle(),
        None => 0,
    }
}

/// Opens card `index` of a simulated network into `*nic_out`.
///
/// # Safety
/// `network` is a live handle; `nic_out` points to writable memory.
#[no_mangle]
pub unsafe extern "C" fn homa_nic_open_sim(
    network: *const HomaSimNetwork,
    index: u32,
    nic_out: *mut *mut HomaNic,
) -> i32 {
    // SAFETY: the caller passes a live handle (or NULL).
    let Some(network) = (unsafe { network.as_ref() }) else {
        return HOMA_ERR_INVALID_ARGUMENT;
    };
    if nic_out.is_null() {
        return HOMA_ERR_INVALID_ARGUMENT;
    }
    let cards = network
        .network
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .len();
    if index as usize >= cards {
        return HOMA_ERR_INVALID_ARGUMENT;
    }
    guard(|| {
        let nic = Nic::open_sim(&network.network, index as usize)?;
        // SAFETY: checked non-NULL; the caller provides the slot.
        unsafe { *nic_out = Box::into_raw(Box::new(HomaNic { nic })) };
        Ok(HOMA_OK)
    })
}

/// Releases a NIC (its endpoints must be closed first).
///
/// # Safety
/// `nic` is NULL or a handle from `homa_nic_open_sim`, not used after.
#[no_mangle]
pub unsafe extern "C" fn homa_nic_close(nic: *mut HomaNic) {
    if !nic.is_null() {
        // SAFETY: a handle from Box::into_raw, released once.
        drop(unsafe { Box::from_raw(nic) });
    }
}

/// Sets the card's MAC (6 bytes, wire order) and IPv4 address (host order).
///
/// # Safety
/// `nic` is a live handle; `mac` points to 6 readable bytes.
#[no_mangle]
pub unsafe extern "C" fn homa_nic_set_address(nic: *const HomaNic, mac: *const u8, ip: u32) -> i32 {
    // SAFETY: the caller passes a live handle (or NULL).
    let Some(nic) = (unsafe { nic.as_ref() }) else {
        return HOMA_ERR_INVALID_ARGUMENT;
    };
    if mac.is_null() {
        return HOMA_ERR_INVALID_ARGUMENT;
    }
    // SAFETY: the caller provides 6 bytes at `mac`.
    let mac: [u8; 6] = unsafe { std::ptr::read_unaligned(mac.cast()) };
    guard(|| {
        nic.nic.set_address(mac, Ipv4Addr::from(ip))?;
        Ok(HOMA_OK)
    })
}

/// Resets the card: every RPC it holds is dropped and every endpoint closed
/// (addresses and tunables stay). Every endpoint opened before is dead: its
/// calls return HOMA_ERR_CARD_RESET; close them and open new ones.
///
/// # Safety
/// `nic` is a live handle.
#[no_mangle]
pub unsafe extern "C" fn homa_nic_reset(nic: *const HomaNic) -> i32 {
    // SAFETY: the caller passes a live handle (or NULL).
    let Some(nic) = (unsafe { nic.as_ref() }) else {
        return HOMA_ERR_INVALID_ARGUMENT;
    };
    guard(|| {
        nic.nic.reset()?;
        Ok(HOMA_OK)
    })
}

/// Lets the card (and, simulated, its whole network) make progress a little:
/// what a program polling `try` calls does between polls.
///
/// # Safety
/// `nic` is a live handle.
#[no_mangle]
pub unsafe extern "C" fn homa_nic_wait(nic: *const HomaNic) {
    // SAFETY: the caller passes a live handle (or NULL).
    if let Some(nic) = unsafe { nic.as_ref() } {
        let _ = catch_unwind(AssertUnwindSafe(|| nic.nic.wait()));
    }
}

/// Opens Homa port `port` on the card into `*endpoint_out`.
///
/// # Safety
/// `nic` is a live handle; `endpoint_out` points to writable memory.
#[no_mangle]
pub unsafe extern "C" fn homa_endpoint_open(
    nic: *const HomaNic,
    port: u16,
    endpoint_out: *mut *mut HomaEndpoint,
) -> i32 {
    // SAFETY: the caller passes a live handle (or NULL).
    let Some(nic) = (unsafe { nic.as_ref() }) else {
        return HOMA_ERR_INVALID_ARGUMENT;
    };
    if endpoint_out.is_null() {
        return HOMA_ERR_INVALID_ARGUMENT;
    }
    guard(|| {
        let endpoint = Endpoint::open(&nic.nic, port)?;
        // SAFETY: checked non-NULL; the caller provides the slot.
        unsafe { *endpoint_out = Box::into_raw(Box::new(HomaEndpoint { endpoint })) };
        Ok(HOMA_OK)
    })
}

/// Closes an endpoint (waits for the card to finish sending its messages).
///
/// # Safety
/// `endpoint` is NULL or a handle from `homa_endpoint_open`, not used after.
#[no_mangle]
pub unsafe extern "C" fn homa_endpoint_close(endpoint: *mut HomaEndpoint) {
    if !endpoint.is_null() {
        // SAFETY: a handle from Box::into_raw, released once.
        let endpoint = unsafe { Box::from_raw(endpoint) };
        let _ = catch_unwind(AssertUnwindSafe(move || drop(endpoint)));
    }
}

/// The endpoint behind a handle, and the bytes of a caller's buffer.
///
/// # Safety
/// As the calls that use it: a live handle, `len` readable bytes at `buf`.
unsafe fn endpoint_and_bytes<'a>(
    endpoint: *mut HomaEndpoint,
    buf: *const u8,
    len: usize,
) -> Option<(&'a mut Endpoint, &'a [u8])> {
    // SAFETY: the caller passes a live handle (or NULL), used by one thread.
    let endpoint = unsafe { endpoint.as_mut() }?;
    let bytes = if len == 0 {
        &[][..]
    } else if buf.is_null() {
        return None;
    } else {
        // SAFETY: the caller provides `len` readable bytes at `buf`.
        unsafe { std::slice::from_raw_parts(buf, len) }
    };
    Some((&mut endpoint.endpoint, bytes))
}

/// Sends a request of `len` bytes at `buf` to `peer`; its RPC id goes to `*id_out`.
///
/// # Safety
/// `endpoint` is a live handle; `peer` is readable; `buf` holds `len`
/// bytes; `id_out` is writable.
#[no_mangle]
pub unsafe extern "C" fn homa_send_request(
    endpoint: *mut HomaEndpoint,
    peer: *const HomaPeer,
    buf: *const u8,
    len: usize,
    id_out: *mut u64,
) -> i32 {
    // SAFETY: as documented for the caller.
    let Some((endpoint, bytes)) = (unsafe { endpoint_and_bytes(endpoint, buf, len) }) else {
        return HOMA_ERR_INVALID_ARGUMENT;
    };
    // SAFETY: the caller passes a readable peer (or NULL).
    let Some(peer) = (unsafe { peer.as_ref() }).copied() else {
        return HOMA_ERR_INVALID_ARGUMENT;
    };
    if id_out.is_null() {
        return HOMA_ERR_INVALID_ARGUMENT;
    }
    guard(|| {
        let id = endpoint.send_request(peer.into(), bytes)?;
        // SAFETY: checked non-NULL.
        unsafe { *id_out = id.0 };
        Ok(HOMA_OK)
    })
}

/// Replies to request `id` (as a receive call gave it) with `len` bytes at `buf`.
///
/// # Safety
/// `endpoint` is a live handle; `buf` holds `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn homa_reply(
    endpoint: *mut HomaEndpoint,
    id: u64,
    buf: *const u8,
    len: usize,
) -> i32 {
    // SAFETY: as documented for the caller.
    let Some((endpoint, bytes)) = (unsafe { endpoint_and_bytes(endpoint, buf, len) }) else {
        return HOMA_ERR_INVALID_ARGUMENT;
    };
    guard(|| {
        endpoint.reply(RpcId(id), bytes)?;
        Ok(HOMA_OK)
    })
}

/// Copies a received message into `buf` (`capacity` bytes) and its length
/// into `*len_out`; too small, the length is still written.
///
/// # Safety
/// `buf` has `capacity` writable bytes; `len_out` is writable.
unsafe fn copy_out(
    message: &crate::Message,
    buf: *mut u8,
    capacity: usize,
    len_out: *mut usize,
) -> Result<(), Error> {
    // SAFETY: the callers checked `len_out` is non-NULL.
    unsafe { *len_out = message.len() };
    if message.len() > capacity || buf.is_null() {
        return Err(Error::BufferTooSmall {
            len: message.len(),
            capacity,
        });
    }
    // SAFETY: the caller provides `capacity` >= len writable bytes at `buf`.
    let out = unsafe { std::slice::from_raw_parts_mut(buf, message.len()) };
    message.read(0, out);
    Ok(())
}

/// The next request, if one has arrived (`HOMA_AGAIN` if not): its bytes
/// into `buf`, length into `*len_out`, RPC id (to reply with) into
/// `*id_out`, the client into `*peer_out`.
///
/// # Safety
/// `endpoint` is a live handle; `buf` has `capacity` writable bytes;
/// `len_out`, `id_out` and `peer_out` are writable.
#[no_mangle]
pub unsafe extern "C" fn homa_try_recv_request(
    endpoint: *mut HomaEndpoint,
    buf: *mut u8,
    capacity: usize,
    len_out: *mut usize,
    id_out: *mut u64,
    peer_out: *mut HomaPeer,
) -> i32 {
    // SAFETY: the caller passes a live handle (or NULL).
    let Some(endpoint) = (unsafe { endpoint.as_mut() }) else {
        return HOMA_ERR_INVALID_ARGUMENT;
    };
    if len_out.is_null() || id_out.is_null() || peer_out.is_null() {
        return HOMA_ERR_INVALID_ARGUMENT;
    }
    let endpoint = &mut endpoint.endpoint;
    guard(|| {
        let Some(request) = endpoint.try_recv_request()? else {
            return Ok(HOMA_AGAIN);
        };
        // SAFETY: as documented for the caller.
        if let Err(e) = unsafe { copy_out(request.message(), buf, capacity, len_out) } {
            endpoint.unreceive_request(request);
            return Err(e);
        }
        // SAFETY: checked non-NULL.
        unsafe {
            *id_out = request.id().0;
            *peer_out = request.peer().into();
        }
        Ok(HOMA_OK)
    })
}

/// The response to request `id`, if it has arrived (`HOMA_AGAIN` if not):
/// its bytes into `buf`, its length into `*len_out`.
///
/// # Safety
/// `endpoint` is a live handle; `buf` has `capacity` writable bytes;
/// `len_out` is writable.
#[no_mangle]
pub unsafe extern "C" fn homa_try_recv_response(
    endpoint: *mut HomaEndpoint,
    id: u64,
    buf: *mut u8,
    capacity: usize,
    len_out: *mut usize,
) -> i32 {
    // SAFETY: the caller passes a live handle (or NULL).
    let Some(endpoint) = (unsafe { endpoint.as_mut() }) else {
        return HOMA_ERR_INVALID_ARGUMENT;
    };
    if len_out.is_null() {
        return HOMA_ERR_INVALID_ARGUMENT;
    }
    let endpoint = &mut endpoint.endpoint;
    guard(|| {
        let Some(response) = endpoint.try_recv_response(RpcId(id))? else {
            return Ok(HOMA_AGAIN);
        };
        // SAFETY: as documented for the caller.
        if let Err(e) = unsafe { copy_out(response.message(), buf, capacity, len_out) } {
            endpoint.unreceive_response(response);
            return Err(e);
        }
        Ok(HOMA_OK)
    })
}

/// As `homa_try_recv_request`, waiting until a request arrives: polling
/// for `busy_poll_us` (homa.conf), then sleeping on the endpoint's MSI-X
/// interrupt.
///
/// # Safety
/// As `homa_try_recv_request`.
#[no_mangle]
pub unsafe extern "C" fn homa_recv_request(
    endpoint: *mut HomaEndpoint,
    buf: *mut u8,
    capacity: usize,
    len_out: *mut usize,
    id_out: *mut u64,
    peer_out: *mut HomaPeer,
) -> i32 {
    let mut start = None;
    loop {
        // SAFETY: as documented for the caller.
        let rc =
            unsafe { homa_try_recv_request(endpoint, buf, capacity, len_out, id_out, peer_out) };
        if rc != HOMA_AGAIN {
            return rc;
        }
        // SAFETY: non-NULL (the try call checked it), live per the caller.
        wait_on(unsafe { &*endpoint }, &mut start);
    }
}

/// As `homa_try_recv_response`, waiting until the response arrives:
/// polling for `busy_poll_us` (homa.conf), then sleeping on the endpoint's
/// MSI-X interrupt.
///
/// # Safety
/// As `homa_try_recv_response`.
#[no_mangle]
pub unsafe extern "C" fn homa_recv_response(
    endpoint: *mut HomaEndpoint,
    id: u64,
    buf: *mut u8,
    capacity: usize,
    len_out: *mut usize,
) -> i32 {
    let mut start = None;
    loop {
        // SAFETY: as documented for the caller.
        let rc = unsafe { homa_try_recv_response(endpoint, id, buf, capacity, len_out) };
        if rc != HOMA_AGAIN {
            return rc;
        }
        // SAFETY: non-NULL (the try call checked it), live per the caller.
        wait_on(unsafe { &*endpoint }, &mut start);
    }
}

/// One round of a blocked call's wait, as `Endpoint::recv_*` waits: polls,
/// then sleeps on the endpoint's interrupt (`start`: when the call began,
/// set at its first round). An error here (a card gone) is left for the
/// next try call to report.
fn wait_on(endpoint: &HomaEndpoint, start: &mut Option<WaitStart>) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let e = &endpoint.endpoint;
        let start = start.get_or_insert_with(|| e.nic().wait_start());
        e.wait_on(start)
    }));
}

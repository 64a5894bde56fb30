//! `homa_nic._native`: the Python binding of homa-host (the `homa_nic`
//! package re-exports it and adds the asyncio forms; see python/README.md).
//!
//! DESIGN NOTES
//! ------------
//! - Blocking calls release the GIL and poll in slices: each slice tries the
//!   call and lets the card progress (`Nic::wait`) for at most
//!   [`POLL_SLICE`] without the GIL, then takes the GIL back to check for
//!   signals (Ctrl-C) and the caller's timeout. The endpoint's lock is held
//!   for one try at a time, so a thread may send on an endpoint while another
//!   waits on it.
//! - A received message is a [`Message`] object owning host-lib's message
//!   (and so its bpage). It exports its bytes through the buffer protocol:
//!   `memoryview(msg)` points into the bpage itself on a real card (no copy);
//!   on a simulated card the bytes live inside the simulation, so they are
//!   copied out once when the message arrives and the view points at that
//!   copy. Each view holds a reference to the message, so the bpage is not
//!   given back to the card while any view is alive; `release()` with a view
//!   still open raises `BufferError` (as `mmap.close()` does).
//! - host-lib's typed errors become the exception classes of
//!   `homa_nic/_errors.py` (one per `homa_host::Error` variant, all under
//!   `HomaError`), with the variant's fields as attributes.
//! - The asyncio forms do not consume anything off the event loop: they wait
//!   in a thread for something to be ready ([`Endpoint::wait_request`] and
//!   friends, which take nothing), then take it on the loop's thread, so a
//!   cancelled task loses no message.

use std::ffi::{c_int, c_void};
use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use homa_host::config::{self, Reading};
use homa_host::{Error, HomaConf, RpcId, SimNetwork};
use pyo3::exceptions::{PyBufferError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use pyo3::{ffi, BoundObject, PyTypeInfo};

/// Longest stretch a blocking call polls without the GIL.
const POLL_SLICE: Duration = Duration::from_millis(20);

/// The exception for a host-lib error (classes in homa_nic/_errors.py).
fn py_error(py: Python<'_>, e: Error) -> PyErr {
    let message = e.to_string();
    let (class, attributes): (&str, Vec<(&str, Py<PyAny>)>) = match &e {
        Error::MessageTooLong { len, max } => (
            "MessageTooLong",
            vec![
                ("length", (*len).into_py_any(py)),
                ("max", (*max).into_py_any(py)),
            ],
        ),
        Error::EmptyMessage => ("EmptyMessage", vec![]),
        Error::RingFull { slots } => ("RingFull", vec![("slots", (*slots).into_py_any(py))]),
        Error::NoSuchRpc(id) => ("NoSuchRpc", vec![("id", id.0.into_py_any(py))]),
        Error::SendFailed { id, status } => (
            "SendFailed",
            vec![
                ("id", id.0.into_py_any(py)),
                ("status", (*status).into_py_any(py)),
            ],
        ),
        Error::Timeout(id) => ("RpcTimedOut", vec![("id", id.0.into_py_any(py))]),
        Error::CardReset => ("CardReset", vec![]),
        Error::ResetStuck => ("ResetStuck", vec![]),
        Error::PortInUse(port) => ("PortInUse", vec![("port", (*port).into_py_any(py))]),
        Error::BadPort => ("BadPort", vec![]),
        Error::NoFreeEndpoint(count) => {
            ("NoFreeEndpoint", vec![("count", (*count).into_py_any(py))])
        }
        Error::BufferTooSmall { len, capacity } => (
            "BufferTooSmall",
            vec![
                ("length", (*len).into_py_any(py)),
                ("capacity", (*capacity).into_py_any(py)),
            ],
        ),
        Error::Config(c) => ("ConfigError", config_attributes(py, c)),
        Error::Device(_) => ("DeviceError", vec![]),
    };
    raise(py, class, message, attributes)
}

trait IntoPyAny {
    fn into_py_any(self, py: Python<'_>) -> Py<PyAny>;
}

impl<T: for<'py> IntoPyObject<'py>> IntoPyAny for T {
    fn into_py_any(self, py: Python<'_>) -> Py<PyAny> {
        match self.into_pyobject(py) {
            Ok(v) => v.into_any().unbind(),
            Err(_) => py.None(),
        }
    }
}

fn config_attributes(py: Python<'_>, c: &homa_host::ConfigError) -> Vec<(&'static str, Py<PyAny>)> {
    let problems: Vec<(String, Option<usize>, String, Option<String>)> = c
        .problems
        .iter()
        .map(|p| (p.key.clone(), p.line, p.message.clone(), p.allowed.clone()))
        .collect();
    vec![
        ("origin", c.origin.clone().into_py_any(py)),
        ("problems", problems.into_py_any(py)),
    ]
}

/// An instance of `homa_nic._errors.<class>(message)` with `attributes` set.
fn raise(
    py: Python<'_>,
    class: &str,
    message: String,
    attributes: Vec<(&str, Py<PyAny>)>,
) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let class = py.import("homa_nic._errors")?.getattr(class)?;
        let exception = class.call1((message.clone(),))?;
        for (name, value) in attributes {
            exception.setattr(name, value)?;
        }
        Ok(PyErr::from_value(exception))
    };
    build().unwrap_or_else(|e| e)
}

fn timeout_error(py: Python<'_>, what: &str, seconds: f64) -> PyErr {
    raise(
        py,
        "Timeout",
        format!("{what}: nothing within {seconds} s"),
        vec![("timeout", seconds.into_py_any(py))],
    )
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// homa.conf for a card: the file at `path`, or the machine's (`$HOMA_CONF`,
/// /etc/homa.conf, defaults).
fn load_config(py: Python<'_>, path: Option<PathBuf>) -> PyResult<HomaConf> {
    let conf = match path {
        Some(p) => HomaConf::load(&p),
        None => HomaConf::from_env(),
    };
    conf.map_err(|e| py_error(py, e.into()))
}

fn parse_mac(text: &str) -> PyResult<[u8; 6]> {
    let parts: Vec<&str> = text.split(':').collect();
    let bad = || {
        PyValueError::new_err(format!(
            "{text:?} is not a MAC address (like 02:00:00:00:00:01)"
        ))
    };
    if parts.len() != 6 {
        return Err(bad());
    }
    let mut mac = [0u8; 6];
    for (byte, part) in mac.iter_mut().zip(parts) {
        *byte = u8::from_str_radix(part, 16).map_err(|_| bad())?;
    }
    Ok(mac)
}

fn show_mac(mac: [u8; 6]) -> String {
    mac.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

fn parse_ip(text: &str) -> PyResult<Ipv4Addr> {
    text.parse()
        .map_err(|_| PyValueError::new_err(format!("{text:?} is not an IPv4 address")))
}

/// Checks a homa.conf file; returns nothing, raises ConfigError naming every
/// problem (key, line, allowed values).
#[pyfunction]
fn check_config(py: Python<'_>, path: PathBuf) -> PyResult<()> {
    HomaConf::load(&path)
        .map(|_| ())
        .map_err(|e| py_error(py, e.into()))
}

/// The example homa.conf: every tunable at its default, commented.
#[pyfunction]
fn example_config() -> String {
    config::example()
}

/// A simulated network of Homa NICs (the cards' RTL in Verilator, PCIe and
/// host memory modelled, 100 Gb/s links through a switch): the cards a test
/// or an example talks between, in one process.
#[pyclass(module = "homa_nic._native", frozen)]
struct Network {
    inner: Arc<Mutex<SimNetwork>>,
    cards: usize,
}

#[pymethods]
impl Network {
    #[new]
    #[pyo3(signature = (cards = 2, name = "python"))]
    fn new(py: Python<'_>, cards: usize, name: &str) -> PyResult<Self> {
        if cards == 0 {
            return Err(PyValueError::new_err("a network has at least one card"));
        }
        let name = name.to_string();
        let inner = py.detach(move || SimNetwork::new(&name, cards, Default::default()));
        Ok(Network {
            inner: Arc::new(Mutex::new(inner)),
            cards,
        })
    }

    /// Cards on the network.
    #[getter]
    fn cards(&self) -> usize {
        self.cards
    }

    /// Opens card `index` with `config` (a homa.conf path; None: $HOMA_CONF,
    /// /etc/homa.conf, or the defaults). Its addresses start as
    /// 02:00:00:00:00:<index+1> and 10.0.0.<index+1> (change with set_address).
    #[pyo3(signature = (index, config = None))]
    fn open(&self, py: Python<'_>, index: usize, config: Option<PathBuf>) -> PyResult<Nic> {
        if index >= self.cards {
            return Err(PyValueError::new_err(format!(
                "card {index} of a network of {}",
                self.cards
            )));
        }
        let conf = load_config(py, config)?;
        let network = self.inner.clone();
        let nic = py
            .detach(move || -> Result<homa_host::Nic, Error> {
                let nic = homa_host::Nic::open_sim_with_config(&network, index, conf)?;
                let n = index as u8 + 1;
                nic.set_address([2, 0, 0, 0, 0, n], Ipv4Addr::new(10, 0, 0, n))?;
                Ok(nic)
            })
            .map_err(|e| py_error(py, e))?;
        Ok(Nic { nic })
    }

    /// Core clock cycles simulated so far (4 ns each).
    #[getter]
    fn cycle(&self) -> u64 {
        lock(&self.inner).cycle()
    }
}

/// An opened Homa NIC.
#[pyclass(module = "homa_nic._native", frozen)]
struct Nic {
    nic: homa_host::Nic,
}

#[pymethods]
impl Nic {
    /// Opens the card at PCI address `bdf` (e.g. "0000:01:00.0") through
    /// VFIO, its registers in BAR `bar`, with `config` as in Network.open.
    #[staticmethod]
    #[pyo3(signature = (bdf, bar = 0, config = None))]
    fn open_vfio(py: Python<'_>, bdf: &str, bar: u32, config: Option<PathBuf>) -> PyResult<Nic> {
        let address: homa_driver::PciAddress = bdf
            .parse()
            .map_err(|e| PyValueError::new_err(format!("{bdf:?}: {e}")))?;
        let conf = load_config(py, config)?;
        let nic = py
            .detach(move || -> Result<homa_host::Nic, Error> {
                let vfio = homa_driver::VfioConfig {
                    bar,
                    ..homa_driver::VfioConfig::new(address)
                };
                let backend = homa_driver::VfioBackend::open(&vfio)?;
                homa_host::Nic::open_with_config(backend, conf)
            })
            .map_err(|e| py_error(py, e))?;
        Ok(Nic { nic })
    }

    /// Sets the card's MAC ("02:00:00:00:00:01") and IPv4 ("10.0.0.1") addresses.
    fn set_address(&self, py: Python<'_>, mac: &str, ip: &str) -> PyResult<()> {
        let (mac, ip) = (parse_mac(mac)?, parse_ip(ip)?);
        py.detach(|| self.nic.set_address(mac, ip))
            .map_err(|e| py_error(py, e))
    }

    /// Resets the card: every RPC it holds is dropped and every endpoint
    /// closed (addresses and tunables stay). Endpoints opened before are
    /// dead: their calls raise `CardReset`.
    fn reset(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| self.nic.reset()).map_err(|e| py_error(py, e))
    }

    #[getter]
    fn mac(&self) -> String {
        show_mac(self.nic.mac())
    }

    #[getter]
    fn ip(&self) -> String {
        self.nic.ip().to_string()
    }

    /// What reaches the card ("simulated card (...)", "VFIO 0000:01:00.0 BAR0").
    #[getter]
    fn describe(&self) -> String {
        self.nic.device().backend().describe()
    }

    /// Core clock cycles simulated so far; None on a real card.
    #[getter]
    fn cycle(&self) -> Option<u64> {
        self.nic.cycle()
    }

    /// A peer on port `port` of this card (to send requests to).
    fn peer(&self, port: u16) -> Peer {
        Peer {
            peer: homa_host::Peer::new(self.nic.ip(), self.nic.mac(), port),
        }
    }

    /// Where the card's homa.conf came from (a path, or "defaults").
    #[getter]
    fn config_origin(&self) -> String {
        self.nic.config().origin().to_string()
    }

    /// Every tunable as the card holds it now: {name: value}, value an int,
    /// a list (arrays), or for endpoint sizes {"next": n, "open": {port: n}}.
    fn config_show<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let live = py
            .detach(|| config::read_live(self.nic.device(), self.nic.config()))
            .map_err(|e| py_error(py, e))?;
        let out = PyDict::new(py);
        for (tunable, reading) in live {
            let value: Py<PyAny> = match reading {
                Reading::Register(v) | Reading::Fixed(v) if v.len() == 1 => v[0].into_py_any(py),
                Reading::Register(v) | Reading::Fixed(v) => v.into_py_any(py),
                Reading::Host(v) => v.into_py_any(py),
                Reading::Endpoints { next, open } => {
                    let d = PyDict::new(py);
                    d.set_item("next", next)?;
                    d.set_item(
                        "open",
                        open.into_iter()
                            .collect::<std::collections::BTreeMap<_, _>>(),
                    )?;
                    d.into_any().unbind()
                }
            };
            out.set_item(tunable.name, value)?;
        }
        Ok(out)
    }
}

/// Where an RPC goes or came from: IPv4 address, MAC address (no ARP on the
/// sending side yet) and Homa port.
#[pyclass(module = "homa_nic._native", frozen, eq, hash)]
#[derive(PartialEq, Eq, Hash, Clone)]
struct Peer {
    peer: homa_host::Peer,
}

#[pymethods]
impl Peer {
    #[new]
    fn new(ip: &str, mac: &str, port: u16) -> PyResult<Self> {
        Ok(Peer {
            peer: homa_host::Peer::new(parse_ip(ip)?, parse_mac(mac)?, port),
        })
    }

    #[getter]
    fn ip(&self) -> String {
        self.peer.ip.to_string()
    }

    #[getter]
    fn mac(&self) -> String {
        show_mac(self.peer.mac)
    }

    #[getter]
    fn port(&self) -> u16 {
        self.peer.port
    }

    fn __repr__(&self) -> String {
        format!(
            "Peer('{}', '{}', {})",
            self.ip(),
            self.mac(),
            self.peer.port
        )
    }
}

/// A received message. Its bytes are exported through the buffer protocol
/// (`memoryview(message)`, read-only) and stay valid while any view is held;
/// the bpage goes back to the card when the message and every view are gone,
/// or at `release()`.
#[pyclass(module = "homa_nic._native", frozen)]
struct Message {
    /// host-lib's message: holds the bpage. None once released.
    message: Mutex<Option<homa_host::Message>>,
    /// Where the bytes are: in the bpage (real card) or in `copy`.
    ptr: *const u8,
    len: usize,
    /// The bytes copied out of a simulated card's memory.
    _copy: Option<Box<[u8]>>,
    zero_copy: bool,
    bpage: u32,
    /// Buffer views exported and not yet released.
    exports: AtomicUsize,
}

// SAFETY: `ptr` points into memory owned by `message` (a bpage, mapped for as
// long as the message lives) or by `_copy`, both immutable while shared; the
// message itself is Send + Sync.
unsafe impl Send for Message {}
unsafe impl Sync for Message {}

impl Message {
    fn new(message: homa_host::Message) -> Message {
        let len = message.len();
        let bpage = message.bpages()[0];
        let (ptr, copy, zero_copy) = match message.bytes() {
            std::borrow::Cow::Borrowed(bytes) => (bytes.as_ptr(), None, true),
            std::borrow::Cow::Owned(bytes) => {
                let copy = bytes.into_boxed_slice();
                (copy.as_ptr(), Some(copy), false)
            }
        };
        Message {
            message: Mutex::new(Some(message)),
            ptr,
            len,
            _copy: copy,
            zero_copy,
            bpage,
            exports: AtomicUsize::new(0),
        }
    }

    fn live(&self) -> PyResult<()> {
        if lock(&self.message).is_none() {
            return Err(PyValueError::new_err("the message was released"));
        }
        Ok(())
    }

    fn slice(&self) -> &[u8] {
        // SAFETY: see the Send/Sync impls; callers check `live` first.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

#[pymethods]
impl Message {
    fn __len__(&self) -> usize {
        self.len
    }

    /// The bytes, copied into a `bytes` object.
    fn __bytes__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        self.live()?;
        Ok(PyBytes::new(py, self.slice()))
    }

    /// The bytes, copied into a `bytes` object.
    fn tobytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        self.__bytes__(py)
    }

    /// True when views point into the card's receive buffer itself (a real
    /// card); False on a simulated card, whose memory views copy out once.
    #[getter]
    fn zero_copy(&self) -> bool {
        self.zero_copy
    }

    /// The first bpage (64 KiB receive page) holding the message.
    #[getter]
    fn bpage(&self) -> u32 {
        self.bpage
    }

    /// True until `release()`.
    #[getter(live)]
    fn is_live(&self) -> bool {
        lock(&self.message).is_some()
    }

    /// Gives the bpage back to the card now. Raises BufferError while a
    /// memoryview of the message is held.
    fn release(&self, py: Python<'_>) -> PyResult<()> {
        let exports = self.exports.load(Ordering::Acquire);
        if exports > 0 {
            return Err(PyBufferError::new_err(format!(
                "{exports} memoryview(s) of the message are still held: release them first"
            )));
        }
        let message = lock(&self.message).take();
        py.detach(move || drop(message));
        Ok(())
    }

    fn __enter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    fn __exit__(
        &self,
        py: Python<'_>,
        _t: Option<Py<PyAny>>,
        _v: Option<Py<PyAny>>,
        _tb: Option<Py<PyAny>>,
    ) -> PyResult<()> {
        self.release(py)
    }

    fn __repr__(&self) -> String {
        format!(
            "<homa_nic.Message {} bytes in bpage {}>",
            self.len, self.bpage
        )
    }

    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut ffi::Py_buffer,
        flags: c_int,
    ) -> PyResult<()> {
        let this = slf.get();
        this.live()?;
        if flags & ffi::PyBUF_WRITABLE == ffi::PyBUF_WRITABLE {
            return Err(PyBufferError::new_err("a received message is read-only"));
        }
        // Fills the view and takes a reference to `slf` (view.obj), which
        // keeps the message, and so its bpage, alive until the view is
        // released.
        let rc = ffi::PyBuffer_FillInfo(
            view,
            slf.as_ptr(),
            this.ptr as *mut c_void,
            this.len as ffi::Py_ssize_t,
            1,
            flags,
        );
        if rc != 0 {
            return Err(PyErr::fetch(slf.py()));
        }
        this.exports.fetch_add(1, Ordering::AcqRel);
        Ok(())
    }

    unsafe fn __releasebuffer__(&self, _view: *mut ffi::Py_buffer) {
        self.exports.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A request received by a server: reply with `Endpoint.reply(request.id, ...)`.
#[pyclass(module = "homa_nic._native", frozen)]
struct Request {
    #[pyo3(get)]
    id: u64,
    #[pyo3(get)]
    peer: Peer,
    #[pyo3(get)]
    message: Py<Message>,
}

#[pymethods]
impl Request {
    fn __repr__(&self) -> String {
        format!(
            "<homa_nic.Request id={} from {} ({} bytes)>",
            self.id,
            self.peer.__repr__(),
            self.message.get().len
        )
    }
}

/// A response received by a client, to the request `id`.
#[pyclass(module = "homa_nic._native", frozen)]
struct Response {
    #[pyo3(get)]
    id: u64,
    #[pyo3(get)]
    peer: Peer,
    #[pyo3(get)]
    message: Py<Message>,
}

#[pymethods]
impl Response {
    fn __repr__(&self) -> String {
        format!(
            "<homa_nic.Response id={} from {} ({} bytes)>",
            self.id,
            self.peer.__repr__(),
            self.message.get().len
        )
    }
}

fn request(py: Python<'_>, r: homa_host::Request) -> PyResult<Request> {
    let (id, peer) = (r.id().0, Peer { peer: r.peer() });
    Ok(Request {
        id,
        peer,
        message: Py::new(py, Message::new(r.into_message()))?,
    })
}

fn response(py: Python<'_>, r: homa_host::Response) -> PyResult<Response> {
    let (id, peer) = (r.id().0, Peer { peer: r.peer() });
    Ok(Response {
        id,
        peer,
        message: Py::new(py, Message::new(r.into_message()))?,
    })
}

/// An open Homa port on a card.
#[pyclass(module = "homa_nic._native", frozen, subclass)]
struct Endpoint {
    nic: homa_host::Nic,
    port: u16,
    /// None once closed.
    endpoint: Mutex<Option<homa_host::Endpoint>>,
}

impl Endpoint {
    /// Runs `f` on the open endpoint (its lock held for the call only).
    fn with<R>(
        &self,
        f: impl FnOnce(&mut homa_host::Endpoint) -> Result<R, Error>,
    ) -> Result<R, Closed> {
        match lock(&self.endpoint).as_mut() {
            Some(e) => f(e).map_err(Closed::Error),
            None => Err(Closed::Closed),
        }
    }

    /// Tries `attempt` until it gives a value or `timeout` seconds pass,
    /// letting the card progress in between, the GIL released; `what` names
    /// the call in a Timeout.
    fn wait_for<T: Send>(
        &self,
        py: Python<'_>,
        what: &str,
        timeout: Option<f64>,
        attempt: impl Fn(&mut homa_host::Endpoint) -> Result<Option<T>, Error> + Sync,
    ) -> PyResult<T> {
        if let Some(t) = timeout {
            if !(t >= 0.0 && t.is_finite()) {
                return Err(PyValueError::new_err(format!(
                    "timeout {t}: seconds, >= 0, or None"
                )));
            }
        }
        let deadline = timeout.map(|t| Instant::now() + Duration::from_secs_f64(t));
        loop {
            let got = py.detach(|| -> Result<Option<T>, Closed> {
                let slice_end = Instant::now() + POLL_SLICE;
                loop {
                    if let Some(v) = self.with(&attempt)? {
                        return Ok(Some(v));
                    }
                    let now = Instant::now();
                    if now >= slice_end || deadline.is_some_and(|d| now >= d) {
                        return Ok(None);
                    }
                    self.nic.wait();
                }
            });
            match got {
                Ok(Some(v)) => return Ok(v),
                Ok(None) => {}
                Err(e) => return Err(e.into_py(py, self.port)),
            }
            py.check_signals()?;
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Err(timeout_error(py, what, timeout.unwrap_or_default()));
            }
        }
    }

    fn call<R>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut homa_host::Endpoint) -> Result<R, Error> + Send,
    ) -> PyResult<R>
    where
        R: Send,
    {
        py.detach(|| self.with(f))
            .map_err(|e| e.into_py(py, self.port))
    }
}

/// An endpoint call that failed, or found the endpoint closed.
enum Closed {
    Error(Error),
    Closed,
}

impl Closed {
    fn into_py(self, py: Python<'_>, port: u16) -> PyErr {
        match self {
            Closed::Error(e) => py_error(py, e),
            Closed::Closed => PyValueError::new_err(format!("endpoint on port {port} is closed")),
        }
    }
}

/// The bytes of a bytes-like object (copied only if it is not `bytes`).
fn bytes_of<'py>(data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    match data.cast::<PyBytes>() {
        Ok(b) => Ok(b.clone()),
        Err(_) => Ok(PyBytes::type_object(data.py())
            .call1((data,))?
            .cast_into::<PyBytes>()?),
    }
}

#[pymethods]
impl Endpoint {
    /// Opens `port` on `nic`, with `bpages` receive bpages (default: the
    /// card's homa.conf, endpoint_bpages).
    #[new]
    #[pyo3(signature = (nic, port, bpages = None))]
    fn new(py: Python<'_>, nic: &Nic, port: u16, bpages: Option<u32>) -> PyResult<Self> {
        let max = homa_driver::rx_area::MAX_BPAGES;
        if let Some(b) = bpages {
            if !(1..=max).contains(&b) {
                return Err(PyValueError::new_err(format!(
                    "bpages {b}: an endpoint has 1..={max}"
                )));
            }
        }
        let card = nic.nic.clone();
        let endpoint = py
            .detach(move || match bpages {
                Some(b) => homa_host::Endpoint::open_with_bpages(&card, port, b),
                None => homa_host::Endpoint::open(&card, port),
            })
            .map_err(|e| py_error(py, e))?;
        Ok(Endpoint {
            nic: nic.nic.clone(),
            port,
            endpoint: Mutex::new(Some(endpoint)),
        })
    }

    #[getter]
    fn port(&self) -> u16 {
        self.port
    }

    /// This endpoint as a peer (to send requests to it).
    #[getter]
    fn address(&self) -> Peer {
        Peer {
            peer: homa_host::Peer::new(self.nic.ip(), self.nic.mac(), self.port),
        }
    }

    /// Sends a request of `data` (any bytes-like object) to `peer`; returns its id.
    fn send_request(&self, py: Python<'_>, peer: &Peer, data: &Bound<'_, PyAny>) -> PyResult<u64> {
        let data = bytes_of(data)?;
        let (to, bytes) = (peer.peer, data.as_bytes());
        self.call(py, |e| e.send_request(to, bytes)).map(|id| id.0)
    }

    /// Replies to request `id` with `data`.
    fn reply(&self, py: Python<'_>, id: u64, data: &Bound<'_, PyAny>) -> PyResult<()> {
        let data = bytes_of(data)?;
        let bytes = data.as_bytes();
        self.call(py, |e| e.reply(RpcId(id), bytes))
    }

    /// The next request; waits up to `timeout` seconds (None: for ever),
    /// then raises Timeout.
    #[pyo3(signature = (timeout = None))]
    fn recv_request(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<Request> {
        let r = self.wait_for(py, "recv_request", timeout, |e| e.try_recv_request())?;
        request(py, r)
    }

    /// The next request if one has arrived, else None.
    fn try_recv_request(&self, py: Python<'_>) -> PyResult<Option<Request>> {
        match self.call(py, |e| e.try_recv_request())? {
            Some(r) => Ok(Some(request(py, r)?)),
            None => Ok(None),
        }
    }

    /// The response to request `id`; waits up to `timeout` seconds.
    #[pyo3(signature = (id, timeout = None))]
    fn recv_response(&self, py: Python<'_>, id: u64, timeout: Option<f64>) -> PyResult<Response> {
        let r = self.wait_for(py, "recv_response", timeout, |e| {
            e.try_recv_response(RpcId(id))
        })?;
        response(py, r)
    }

    /// The response to request `id` if it has arrived, else None.
    fn try_recv_response(&self, py: Python<'_>, id: u64) -> PyResult<Option<Response>> {
        match self.call(py, |e| e.try_recv_response(RpcId(id)))? {
            Some(r) => Ok(Some(response(py, r)?)),
            None => Ok(None),
        }
    }

    /// The first response of any outstanding request; waits up to `timeout`
    /// seconds. Raises NoSuchRpc when no request is outstanding.
    #[pyo3(signature = (timeout = None))]
    fn recv_any_response(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<Response> {
        let r = self.wait_for(py, "recv_any_response", timeout, |e| {
            match e.try_recv_any_response()? {
                Some(r) => Ok(Some(r)),
                None if e.outstanding() == 0 => Err(Error::NoSuchRpc(RpcId(0))),
                None => Ok(None),
            }
        })?;
        response(py, r)
    }

    /// Waits up to `timeout` seconds for a request to be ready, without
    /// taking it; True if one is (the asyncio forms use this).
    #[pyo3(signature = (timeout))]
    fn wait_request(&self, py: Python<'_>, timeout: f64) -> PyResult<bool> {
        ready(self.wait_for(py, "wait_request", Some(timeout), |e| {
            Ok(e.request_ready()?.then_some(()))
        }))
    }

    /// Waits up to `timeout` seconds for the response to `id` (or any
    /// response, with id None) to be ready, without taking it.
    #[pyo3(signature = (id, timeout))]
    fn wait_response(&self, py: Python<'_>, id: Option<u64>, timeout: f64) -> PyResult<bool> {
        ready(self.wait_for(py, "wait_response", Some(timeout), |e| {
            let is_ready = match id {
                Some(id) => e.response_ready(RpcId(id))?,
                None => e.any_response_ready()?,
            };
            Ok(is_ready.then_some(()))
        }))
    }

    /// Requests sent whose responses have not been taken.
    #[getter]
    fn outstanding(&self, py: Python<'_>) -> PyResult<usize> {
        self.call(py, |e| Ok(e.outstanding()))
    }

    /// Bpages the card holds free for this endpoint.
    fn bpages_free(&self, py: Python<'_>) -> PyResult<u32> {
        self.call(py, |e| e.bpages_free())
    }

    /// Closes the endpoint (waits a bounded time for the card to finish
    /// sending). Messages received from it stay readable.
    fn close(&self, py: Python<'_>) {
        let endpoint = lock(&self.endpoint).take();
        py.detach(move || drop(endpoint));
    }

    #[getter]
    fn closed(&self) -> bool {
        lock(&self.endpoint).is_none()
    }

    fn __enter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    fn __exit__(
        &self,
        py: Python<'_>,
        _t: Option<Py<PyAny>>,
        _v: Option<Py<PyAny>>,
        _tb: Option<Py<PyAny>>,
    ) {
        self.close(py)
    }

    fn __repr__(&self) -> String {
        format!(
            "<homa_nic.Endpoint port {} on {}>",
            self.port,
            self.nic.ip()
        )
    }
}

/// A wait's outcome: ready, or not within the timeout (not an error here).
fn ready(r: PyResult<()>) -> PyResult<bool> {
    Python::attach(|py| match r {
        Ok(()) => Ok(true),
        Err(e) if e.is_instance(py, &py.import("homa_nic._errors")?.getattr("Timeout")?) => {
            Ok(false)
        }
        Err(e) => Err(e),
    })
}

/// The largest message host-lib sends and receives today, in bytes.
const MAX_MESSAGE_BYTES: usize = homa_host::MAX_MESSAGE_BYTES;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("MAX_MESSAGE_BYTES", MAX_MESSAGE_BYTES)?;
    m.add("BPAGE_BYTES", homa_hw::rx::bpage_pool::BPAGE_BYTES)?;
    m.add_class::<Network>()?;
    m.add_class::<Nic>()?;
    m.add_class::<Peer>()?;
    m.add_class::<Endpoint>()?;
    m.add_class::<Message>()?;
    m.add_class::<Request>()?;
    m.add_class::<Response>()?;
    m.add_function(wrap_pyfunction!(check_config, m)?)?;
    m.add_function(wrap_pyfunction!(example_config, m)?)?;
    Ok(())
}

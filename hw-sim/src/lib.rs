//! Verilator models of the Homa NIC core and a safe way to clock them.
//!
//! Owns: the build of every design in `homa_hw::designs()` into a Verilator
//! model (see build.rs: rebuilt only when the generated Verilog changes), typed
//! access to each model's ports (`models::homa_core::HomaCore`: one setter per
//! input, one getter per port), [`Sim`], which clocks a model and writes VCD
//! waveforms on request, the host's view of the core ([`csr`]), and the host
//! side of the card's DMA: sparse host memory behind IOMMU-style regions
//! ([`host_memory`]) and the PCIe link's latency and bandwidth ([`pcie`]);
//! the host behind the PCIe hard block at TLP level: BAR requests
//! ([`tlp`]) and the root complex that serves the card's DMA TLPs
//! ([`root_complex`]); and a plain host ([`plain_host`]: rings, registers
//! and bpages handled in the plainest way) for the card's testbenches and
//! the fuzzer, which must not lean on the driver they are checking.
//!
//! Must not know about: Homa's protocol, the driver or the host library: it
//! offers the card's wires, nothing above them.
//!
//! Waveforms: set `HOMA_VCD=DIR` to trace every simulation into DIR, or build
//! a [`Sim`] with [`Sim::traced_on_failure`] to get a trace (of its first
//! `TRACE_ON_FAILURE_CYCLES`) only when the test panics. VCD time is in
//! picoseconds with a 4 ns (250 MHz) clock.

pub mod axis;
pub mod bar_link;
pub mod board;
pub mod cable;
pub mod card;
pub mod csr;
pub mod dma_link;
pub mod flash_chip;
pub mod host_memory;
pub mod network;
pub mod pcie;
pub mod plain_host;
pub mod root_complex;
pub mod tlp;
pub mod udp_wire;

use std::ffi::CString;
use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Generated bindings: one module per design.
#[allow(clippy::all)]
pub mod models {
    include!(concat!(env!("OUT_DIR"), "/models.rs"));
}

pub use models::grant_scheduler::GrantScheduler;
pub use models::homa_core::HomaCore;
pub use models::interrupt_block::InterruptBlock;
pub use models::pcie_completer::PcieCompleter;
pub use models::pcie_requester::PcieRequester;
pub use models::resend_timer::ResendTimer;
pub use models::rpc_table::RpcTable;
pub use models::rx_fifo::RxFifo;
pub use models::rx_parser::RxParser;
pub use models::send_scheduler::SendScheduler;
pub use models::tx_framer::TxFramer;
pub use models::tx_header::TxHeader;
pub use models::winner_tree::WinnerTree;

/// Path of the Verilog the `homa_core` model was built from.
pub const HOMA_CORE_VERILOG: &str = env!("HOMA_VERILOG_HOMA_CORE");

/// Clock period in picoseconds (250 MHz), the VCD time unit per cycle.
pub const CLOCK_PERIOD_PS: u64 = 4000;

/// What every generated model offers; implemented in the generated bindings.
pub trait Model {
    fn new() -> Self;
    /// Evaluates the model (always: Verilator's `eval()`).
    fn eval(&mut self);
    /// Evaluates the model if an input changed since the last evaluation
    /// (the setters keep track); otherwise it is settled already.
    fn settle(&mut self);
    /// One rising edge of the clock, which is high between edges: settles
    /// pending input changes, then clocks the registers. See `fast_edge`.
    fn rise(&mut self);
    /// Whether [`Model::rise`] skips Verilator's input-combinational region
    /// (build.rs found the generated `eval()` laid out as it expects). If
    /// not, a rise is "clock low, eval, clock high, eval".
    fn fast_edge() -> bool;
    /// Lowers the clock input for a waveform's low phase without marking an
    /// input changed (the next [`Model::rise`] raises it again).
    fn show_clock_low(&mut self);
    fn set_clock(&mut self, v: bool);
    /// How many 32-bit words hold every input but the clock.
    fn input_words() -> usize;
    /// Copies every input but the clock into `w` (`input_words()` long), in
    /// port order; ports wider than 32 bits take several words, low first.
    fn save_inputs(&self, w: &mut [u32]);
    /// Drives every input but the clock from `w`, as the setters would.
    fn load_inputs(&mut self, w: &[u32]);
    /// Starts a VCD trace: 0 on success.
    fn trace_open(&mut self, path: &std::ffi::CStr) -> i32;
    fn trace_dump(&mut self, time_ps: u64);
    fn trace_close(&mut self);
}

/// An error starting a waveform trace.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("cannot write a VCD trace to {0}: the path is not valid UTF-8 or holds a NUL byte")]
    BadPath(PathBuf),
    #[error("Verilator could not open {0} for a VCD trace")]
    Open(PathBuf),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// A model with its clock: inputs are set through `Deref` to the model, then
/// [`Sim::tick`] advances one clock cycle.
pub struct Sim<M: Model> {
    model: M,
    cycle: u64,
    /// The VCD being written ([`Sim::trace_to`], `HOMA_VCD`).
    trace: Option<PathBuf>,
    /// The inputs, kept to write a VCD if the test fails ([`Sim::traced_on_failure`]).
    recording: Option<InputLog>,
    /// Clock every edge the reference way (see [`Sim::set_reference_edges`]).
    reference_edges: bool,
}

/// Every input of a model at every clock edge, from its creation: enough to
/// run the simulation again, edge for edge, into a VCD. A model's state is
/// a function of its inputs at each rising edge alone (its registers see
/// nothing else, and a new model starts from the same state), so the
/// replayed waveform is the one a trace written all along would have been,
/// value for value (`tests/waveform.rs` checks it).
///
/// Why not write the VCD as the test runs and delete it when the test
/// passes: dumping every signal at both edges was up to two thirds of the
/// time of the tests that did it (`card_tx` 29 s with it, 10 s without;
/// `dead_peer` 88 and 51; 8 December 2026), for a file almost never kept.
/// Saving the inputs costs one copy of a few dozen words an edge.
struct InputLog {
    path: PathBuf,
    /// The inputs when the model was created.
    first: Vec<u32>,
    /// The inputs at the last edge logged.
    last: Vec<u32>,
    /// Scratch for the inputs at this edge.
    now: Vec<u32>,
    /// Per edge: a mask of the input words that changed since the edge
    /// before (`mask_words()` words, bit i of the mask for word i), then
    /// the words that changed, in order.
    edges: Vec<u32>,
    logged: u64,
}

/// Cycles a waveform written on failure covers, from the start (800 us of
/// the card's time): a VCD of every signal of a card grows by megabytes per
/// thousand cycles, and a long lossy run that fails must not fill the disk.
/// The runs are deterministic, so a failure past the window is traced whole
/// by running it again with `HOMA_VCD` set (the failure message says so).
pub const TRACE_ON_FAILURE_CYCLES: u64 = 200_000;

static SIM_COUNTER: AtomicU64 = AtomicU64::new(0);

impl<M: Model> Sim<M> {
    /// A new model with its clock low, traced into `$HOMA_VCD/` when that is set.
    pub fn new(name: &str) -> Self {
        let mut sim = Self::untraced();
        if let Some(dir) = std::env::var_os("HOMA_VCD") {
            let n = SIM_COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = Path::new(&dir).join(format!("{name}-{n}.vcd"));
            if let Err(e) = sim.trace_to(&path) {
                tracing::warn!("HOMA_VCD set but tracing failed: {e}");
            }
        }
        sim
    }

    fn untraced() -> Self {
        let mut sim = Sim {
            model: M::new(),
            cycle: 0,
            trace: None,
            recording: None,
            reference_edges: false,
        };
        sim.model.set_clock(false);
        sim.model.eval();
        sim
    }

    /// A new model whose waveform is written to `target/vcd/<name>.vcd` if
    /// the thread panics (a failing test) while it is dropped, and its path
    /// printed; nothing is written otherwise (see [`InputLog`]).
    pub fn traced_on_failure(name: &str) -> Self {
        let mut sim: Sim<M> = Sim::new(name);
        if sim.trace.is_none() {
            let mut first = vec![0; M::input_words()];
            sim.model.save_inputs(&mut first);
            sim.recording = Some(InputLog {
                path: vcd_dir().join(format!("{name}.vcd")),
                last: first.clone(),
                now: first.clone(),
                first,
                edges: Vec::new(),
                logged: 0,
            });
        }
        sim
    }

    /// Starts writing a VCD of every signal to `path`.
    pub fn trace_to(&mut self, path: &Path) -> Result<(), TraceError> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|source| TraceError::Io {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        let c = path
            .to_str()
            .and_then(|s| CString::new(s).ok())
            .ok_or_else(|| TraceError::BadPath(path.to_path_buf()))?;
        if self.model.trace_open(&c) != 0 {
            return Err(TraceError::Open(path.to_path_buf()));
        }
        self.trace = Some(path.to_path_buf());
        self.recording = None;
        Ok(())
    }

    /// Where the trace goes (or would go, on failure), if tracing.
    pub fn trace_path(&self) -> Option<&Path> {
        match (&self.trace, &self.recording) {
            (Some(path), _) => Some(path),
            (None, Some(log)) => Some(&log.path),
            (None, None) => None,
        }
    }

    /// Settles combinational logic after inputs changed, without a clock
    /// edge (nothing to do when no input changed since the last evaluation).
    pub fn eval(&mut self) {
        if self.reference_edges {
            self.model.eval();
        } else {
            self.model.settle();
        }
    }

    /// Clocks every edge as "clock low, eval, clock high, eval", Verilator's
    /// plain way, instead of [`Model::rise`]'s fast path, and evaluates on
    /// every [`Sim::eval`] whether or not an input changed: for tests that
    /// check the fast path gives the same simulation.
    pub fn set_reference_edges(&mut self, on: bool) {
        self.reference_edges = on;
    }

    /// One clock cycle: a rising edge (registers take the inputs set since the
    /// last tick), then the falling edge. Outputs read afterwards are those of
    /// the new cycle. The clock stays high between ticks.
    pub fn tick(&mut self) {
        let t = self.cycle * CLOCK_PERIOD_PS;
        self.cycle += 1;
        if let Some(log) = &mut self.recording {
            if log.logged < TRACE_ON_FAILURE_CYCLES {
                log.log_edge(&self.model);
            }
        }
        let tracing = self.trace.is_some();
        if self.reference_edges || !M::fast_edge() {
            // The falling edge and the inputs set since the last tick settle
            // together (registers only act on rising edges); then the rising
            // edge.
            self.model.set_clock(false);
            self.model.eval();
            if tracing {
                self.model.trace_dump(t);
            }
            self.model.set_clock(true);
            self.model.eval();
            if tracing {
                self.model.trace_dump(t + CLOCK_PERIOD_PS / 2);
            }
            return;
        }
        if tracing {
            // The low phase: the inputs settled, the clock shown low (the
            // falling edge moves nothing in these designs).
            self.model.settle();
            self.model.show_clock_low();
            self.model.trace_dump(t);
            self.model.rise();
            self.model.trace_dump(t + CLOCK_PERIOD_PS / 2);
        } else {
            self.model.rise();
        }
    }

    /// Clock cycles since the model was created.
    pub fn cycle(&self) -> u64 {
        self.cycle
    }
}

impl<M: Model> Deref for Sim<M> {
    type Target = M;
    fn deref(&self) -> &M {
        &self.model
    }
}

impl<M: Model> DerefMut for Sim<M> {
    fn deref_mut(&mut self) -> &mut M {
        &mut self.model
    }
}

impl<M: Model> Drop for Sim<M> {
    fn drop(&mut self) {
        if self.trace.take().is_some() {
            self.model.trace_dump(self.cycle * CLOCK_PERIOD_PS);
            self.model.trace_close();
        }
        if let Some(log) = self.recording.take() {
            if std::thread::panicking() {
                self.write_failure_waveform(log);
            }
        }
    }
}

impl<M: Model> Sim<M> {
    /// Runs the logged inputs through a new model of the same design, traced.
    fn write_failure_waveform(&mut self, mut log: InputLog) {
        let whole = log.logged == self.cycle;
        let mut replay: Sim<M> = Sim::untraced();
        replay.reference_edges = self.reference_edges;
        replay.model.load_inputs(&log.first);
        if let Err(e) = replay.trace_to(&log.path) {
            eprintln!("no waveform of the failing simulation: {e}");
            return;
        }
        let mut at = 0;
        let mut inputs = log.first.clone();
        for _ in 0..log.logged {
            at = log.apply_edge(at, &mut inputs);
            replay.model.load_inputs(&inputs);
            replay.tick();
        }
        if whole {
            // Inputs set after the last edge show in the VCD's last values.
            self.model.save_inputs(&mut log.now);
            replay.model.load_inputs(&log.now);
        }
        drop(replay);
        eprintln!(
            "waveform of the failing simulation: {} (cycle {}{})",
            log.path.display(),
            self.cycle,
            if whole {
                String::new()
            } else {
                format!(
                    "; the waveform holds its first {TRACE_ON_FAILURE_CYCLES} cycles: \
                     run the test again with HOMA_VCD=DIR for all of them"
                )
            }
        );
    }
}

impl InputLog {
    fn mask_words(&self) -> usize {
        self.first.len().div_ceil(32)
    }

    /// Logs the inputs `model` has at this edge.
    fn log_edge<M: Model>(&mut self, model: &M) {
        model.save_inputs(&mut self.now);
        let mask_at = self.edges.len();
        self.edges.resize(mask_at + self.mask_words(), 0);
        for (i, (now, last)) in self.now.iter().zip(&self.last).enumerate() {
            if now != last {
                self.edges[mask_at + i / 32] |= 1 << (i % 32);
                self.edges.push(*now);
            }
        }
        std::mem::swap(&mut self.now, &mut self.last);
        self.logged += 1;
    }

    /// Applies the edge logged at `at` in `edges` to `inputs`; returns where
    /// the next edge starts.
    fn apply_edge(&self, at: usize, inputs: &mut [u32]) -> usize {
        let mask = &self.edges[at..at + self.mask_words()];
        let mut next = at + self.mask_words();
        for (i, input) in inputs.iter_mut().enumerate() {
            if mask[i / 32] & (1 << (i % 32)) != 0 {
                *input = self.edges[next];
                next += 1;
            }
        }
        next
    }
}

/// `target/vcd`, next to the cached models.
fn vcd_dir() -> PathBuf {
    let verilog = Path::new(HOMA_CORE_VERILOG);
    verilog
        .ancestors()
        .nth(3)
        .map(|target| target.join("vcd"))
        .unwrap_or_else(|| std::env::temp_dir().join("homa-vcd"))
}

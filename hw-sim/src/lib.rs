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
//! a [`Sim`] with [`Sim::traced_on_failure`] (its first `TRACE_ON_FAILURE_CYCLES`)
//! to keep a trace only when the test
//! panics. VCD time is in picoseconds with a 4 ns (250 MHz) clock.

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
    trace: Option<Trace>,
    /// Clock every edge the reference way (see [`Sim::set_reference_edges`]).
    reference_edges: bool,
}

struct Trace {
    path: PathBuf,
    /// Delete the file on drop unless the thread is panicking.
    keep_only_on_failure: bool,
    /// Closed at `TRACE_ON_FAILURE_CYCLES` (traces kept only on failure).
    stopped: bool,
}

/// Cycles a trace kept only on failure covers, from the start (800 us of
/// the card's time): a VCD of every signal of a card grows by megabytes per
/// thousand cycles, and a long lossy run that fails must not fill the disk.
/// Tracing is also most of a traced test's time: at 1,000,000 cycles
/// `card_rpc`, `card_tx` and `dead_peer` took 21, 16 and 25 s, at 200,000
/// 18, 11 and 20 (untraced 9.5, 7 and 13). The runs are deterministic, so a
/// failure past the window is traced whole by running it again with
/// `HOMA_VCD` set (the failure message says so).
pub const TRACE_ON_FAILURE_CYCLES: u64 = 200_000;

static SIM_COUNTER: AtomicU64 = AtomicU64::new(0);

impl<M: Model> Sim<M> {
    /// A new model with its clock low, traced into `$HOMA_VCD/` when that is set.
    pub fn new(name: &str) -> Self {
        let mut sim = Sim {
            model: M::new(),
            cycle: 0,
            trace: None,
            reference_edges: false,
        };
        sim.model.set_clock(false);
        sim.model.eval();
        if let Some(dir) = std::env::var_os("HOMA_VCD") {
            let n = SIM_COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = Path::new(&dir).join(format!("{name}-{n}.vcd"));
            if let Err(e) = sim.trace_to(&path, false) {
                tracing::warn!("HOMA_VCD set but tracing failed: {e}");
            }
        }
        sim
    }

    /// A new model traced into `target/vcd/<name>.vcd`; the file is deleted
    /// when the `Sim` is dropped, unless the thread is panicking (a failing
    /// test), in which case its path is printed.
    pub fn traced_on_failure(name: &str) -> Self {
        let mut sim: Sim<M> = Sim::new(name);
        if sim.trace.is_none() {
            let dir = vcd_dir();
            let path = dir.join(format!("{name}.vcd"));
            if let Err(e) = sim.trace_to(&path, true) {
                tracing::warn!("tracing failed: {e}");
            }
        }
        sim
    }

    /// Starts writing a VCD of every signal to `path`.
    pub fn trace_to(&mut self, path: &Path, keep_only_on_failure: bool) -> Result<(), TraceError> {
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
        self.trace = Some(Trace {
            path: path.to_path_buf(),
            keep_only_on_failure,
            stopped: false,
        });
        Ok(())
    }

    /// Where the trace goes, if tracing.
    pub fn trace_path(&self) -> Option<&Path> {
        self.trace.as_ref().map(|t| t.path.as_path())
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
        if let Some(trace) = &mut self.trace {
            if trace.keep_only_on_failure && !trace.stopped && self.cycle > TRACE_ON_FAILURE_CYCLES
            {
                self.model.trace_close();
                trace.stopped = true;
            }
        }
        let tracing = self.trace.as_ref().is_some_and(|t| !t.stopped);
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
        let Some(trace) = self.trace.take() else {
            return;
        };
        if !trace.stopped {
            self.model.trace_dump(self.cycle * CLOCK_PERIOD_PS);
            self.model.trace_close();
        }
        if std::thread::panicking() {
            eprintln!(
                "waveform of the failing simulation: {} (cycle {}{})",
                trace.path.display(),
                self.cycle,
                if trace.stopped {
                    format!(
                        "; the waveform holds its first {TRACE_ON_FAILURE_CYCLES} cycles: \
                         run the test again with HOMA_VCD=DIR for all of them"
                    )
                } else {
                    String::new()
                }
            );
        } else if trace.keep_only_on_failure {
            let _ = std::fs::remove_file(&trace.path);
        }
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

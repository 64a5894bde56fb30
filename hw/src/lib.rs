//! The Homa NIC transport core in RustHDL, and its Verilog generation.
//!
//! Owns: every hardware block (one file each, named for the block, grouped
//! by path: `rx/`, `tx/`, `sched/`, `csr/`, and `leaf/` for shared leaves), the
//! register map (`regmap`), and the functions that turn the blocks into Verilog
//! for Verilator and for Vivado.
//!
//! Must not know about: how the Verilog is simulated or synthesized, the
//! driver, or the host. Its only dependency of ours is `homa-wire`, for field
//! offsets; nothing of ours depends on it at run time except through the
//! generated Verilog.

pub mod core;
pub mod csr;
pub mod host_abi;
pub mod leaf;
pub mod pcie;
pub mod regmap;
pub mod rx;
pub mod sched;
pub mod tx;

use rust_hdl::prelude::*;

/// Build options baked into a core's Verilog, readable back from the ID block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CoreConfig {
    /// `major << 16 | minor << 8 | patch` of this release.
    pub design_version: u32,
    /// Core clock in kHz.
    pub clock_khz: u32,
    /// Width of the Ethernet and DMA datapaths in bits.
    pub datapath_bits: u32,
}

impl Default for CoreConfig {
    /// The card's configuration: 250 MHz, 512-bit datapaths.
    fn default() -> Self {
        CoreConfig {
            design_version: regmap::pack_design_version(env!("CARGO_PKG_VERSION")),
            clock_khz: 250_000,
            datapath_bits: 512,
        }
    }
}

/// Stack for RustHDL's passes over a design (see [`Design::generate`]).
pub const GENERATE_STACK_BYTES: usize = 256 << 20;

/// One Verilog design to simulate or synthesize: its top module is `name`
/// (and the Verilator model `V<name>`).
pub struct Design {
    pub name: &'static str,
    pub verilog: String,
}

impl Design {
    /// Generates the Verilog of `block`, renaming RustHDL's top module `top`
    /// (and its submodules `top$...`) to `name`.
    ///
    /// RustHDL's connection and code-generation passes recurse through the
    /// design; the whole core goes deeper than a test thread's 2 MiB stack,
    /// so they run on a thread of their own with `GENERATE_STACK_BYTES`.
    pub fn generate<B: Block + Send>(name: &'static str, block: B) -> Design {
        // On the heap: the core's struct is large, and copies of it on the
        // way into the thread would cost the caller's stack too.
        let mut block = Box::new(block);
        let verilog = std::thread::scope(|scope| {
            std::thread::Builder::new()
                .name(format!("generate {name}"))
                .stack_size(GENERATE_STACK_BYTES)
                .spawn_scoped(scope, move || {
                    block.connect_all();
                    generate_verilog(block.as_ref())
                })
                .expect("a thread to generate Verilog on")
                .join()
                .unwrap_or_else(|e| std::panic::resume_unwind(e))
        });
        Design {
            name,
            verilog: rename_top_module(&verilog, name),
        }
    }
}

/// Verilog of the whole core for `config`, top module `homa_core`.
pub fn core_design(config: &CoreConfig) -> Design {
    Design::generate("homa_core", core::HomaCore::new(config))
}

/// Every design hw-sim builds a Verilator model of: the whole core, and any
/// block that has a testbench of its own.
pub fn designs() -> Vec<Design> {
    vec![
        core_design(&CoreConfig::default()),
        Design::generate("rpc_table", rx::rpc_table::RpcTable::default()),
        Design::generate("pcie_completer", pcie::completer::PcieCompleter::default()),
        Design::generate("pcie_requester", pcie::requester::PcieRequester::default()),
        Design::generate("rx_parser", rx::parser::RxParser::default()),
        Design::generate(
            "interrupt_block",
            csr::interrupt_block::InterruptBlockHarness::default(),
        ),
        Design::generate("resend_timer", rx::resend_timer::ResendTimer::default()),
        Design::generate("tx_header", tx::header::TxHeaderBuilder::default()),
        Design::generate("tx_framer", tx::framer::TxFramer::default()),
        Design::generate("rx_fifo", rx::fifo::RxFifo::default()),
        Design::generate("winner_tree", sched::winner_tree::WinnerTree::default()),
        Design::generate(
            "grant_scheduler",
            sched::grant_scheduler::GrantScheduler::default(),
        ),
        Design::generate(
            "send_scheduler",
            sched::send_scheduler::SendScheduler::default(),
        ),
    ]
}

/// Replaces the identifier `top` where it names a module: `module top(`, and
/// `top$` at the start of an identifier. A `top$` inside a longer identifier
/// (`stop$x`) is left alone.
fn rename_top_module(verilog: &str, name: &str) -> String {
    let mut out = String::with_capacity(verilog.len());
    let mut rest = verilog;
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$';
    let mut prev: Option<char> = None;
    while !rest.is_empty() {
        let at_boundary = prev.is_none_or(|c| !is_ident(c));
        if at_boundary && (rest.starts_with("top$") || rest.starts_with("top(")) {
            out.push_str(name);
            rest = &rest[3..];
            prev = Some('p');
            continue;
        }
        let c = rest.chars().next().unwrap();
        out.push(c);
        prev = Some(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn rename_top_module_touches_only_module_names() {
        let v = "module top(a);\n top$x x(.q(stop$y), .r(top$x$q));\nendmodule\nmodule top$x(q);";
        assert_eq!(
            super::rename_top_module(v, "core"),
            "module core(a);\n core$x x(.q(stop$y), .r(core$x$q));\nendmodule\nmodule core$x(q);"
        );
    }
}

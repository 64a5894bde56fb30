//! A yosys JSON netlist of Xilinx cells (after `synth_xilinx` and `flatten`):
//! what it uses, block by block, and its deepest register-to-register path.
//!
//! DESIGN NOTES
//! ------------
//! yosys prints cell counts but no path depth for Xilinx cells (its `sta`
//! knows only its internal cell library), so the depth is computed here, from
//! the netlist `write_json` leaves:
//!
//! - Paths start at the outputs of sequential cells (flip-flops, block RAM,
//!   URAM, SRL, LUT-RAM, DSP) and at the top module's input ports; they end at
//!   the inputs of sequential cells and at output ports. Everything else is
//!   combinational and passed through.
//! - Depth is counted in LUT levels: each LUT1..LUT6 or INV passed is one
//!   level, and so is each MUXF7/MUXF8/MUXF9 (a conservative choice: a MUXF is
//!   a dedicated mux in the slice, faster than a LUT plus its routing, so the
//!   report also says how many of the levels are MUXFs). The asynchronous read
//!   of a LUT-RAM or an SRL (address pins to data out) is one level too: it is a
//!   LUT read. Carry cells (CARRY4, which yosys 0.23 maps even for UltraScale+,
//!   or CARRY8) are not levels; they are counted beside them, since a long
//!   carry chain costs time as well. The deepest path is the one with the most
//!   levels, ties to the one with more carry cells.
//! - Arcs are per cell, not per pin: any input of a combinational cell reaches
//!   any of its outputs. Exact for LUTs and MUXFs; for a carry cell it can
//!   only overstate (an `S[3]` input does not reach `O[0]`), never miss a path.
//! - Constants (GND/VCC cells, "0"/"1"/"x" bits) start no path.
//!
//! Blocks: in the core's run, the top module's children are kept as their own
//! hierarchy through synthesis and flattened only afterwards, so every cell's
//! name starts with its instance (`rx_parser.`, or `$flatten\rx_parser.` for
//! yosys's own names). A cell of no known child belongs to the top module's
//! own logic. A path belongs to the block of the cell it ends in.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

/// Errors reading or analysing a netlist.
#[derive(Debug, thiserror::Error)]
pub enum NetlistError {
    #[error("not a yosys JSON netlist: {0}")]
    Json(#[from] serde_json::Error),
    #[error("module `{0}` is not in the netlist (modules that are not blackboxes: {1})")]
    NoModule(String, String),
    #[error("cell `{cell}` ({kind}): pin `{pin}` has no direction; was the netlist written by yosys with the cell library loaded?")]
    NoDirection {
        cell: String,
        kind: String,
        pin: String,
    },
    #[error("combinational loop through cell `{0}`")]
    Loop(String),
}

// ---- the JSON as yosys writes it ----

#[derive(Deserialize)]
struct JsonDesign {
    modules: HashMap<String, JsonModule>,
}

#[derive(Deserialize)]
struct JsonModule {
    #[serde(default)]
    attributes: HashMap<String, serde_json::Value>,
    #[serde(default)]
    ports: BTreeMap<String, JsonPort>,
    #[serde(default)]
    cells: BTreeMap<String, JsonCell>,
    #[serde(default)]
    netnames: BTreeMap<String, JsonNet>,
}

#[derive(Deserialize)]
struct JsonPort {
    direction: String,
    bits: Vec<JsonBit>,
}

#[derive(Deserialize)]
struct JsonCell {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    port_directions: HashMap<String, String>,
    connections: BTreeMap<String, Vec<JsonBit>>,
}

#[derive(Deserialize)]
struct JsonNet {
    hide_name: u8,
    bits: Vec<JsonBit>,
}

/// A bit of a connection: a net number, or a constant ("0", "1", "x", "z").
#[derive(Deserialize, Clone, Copy)]
#[serde(untagged)]
enum JsonBit {
    Net(usize),
    Const(#[allow(dead_code)] char),
}

// ---- the netlist ----

/// What a cell is, for counting and for paths.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CellClass {
    /// LUT1..LUT6, and INV (a LUT1 to the device).
    Lut,
    /// MUXF7, MUXF8, MUXF9.
    MuxF,
    /// CARRY4 or CARRY8.
    Carry,
    /// FDRE, FDSE, FDCE, FDPE (and latches, which should not be there).
    FlipFlop,
    Ramb36,
    Ramb18,
    Uram,
    /// A LUT used as RAM; `luts` is how many LUTs it takes.
    LutRam {
        luts: u32,
    },
    /// A LUT used as a shift register.
    Srl,
    Dsp,
    /// GND, VCC.
    Constant,
    /// A type this tool does not know: passed through as combinational,
    /// without a level, and reported.
    Unknown,
}

impl CellClass {
    pub fn of(kind: &str) -> CellClass {
        match kind {
            "LUT1" | "LUT2" | "LUT3" | "LUT4" | "LUT5" | "LUT6" | "INV" => CellClass::Lut,
            "MUXF7" | "MUXF8" | "MUXF9" => CellClass::MuxF,
            "CARRY4" | "CARRY8" => CellClass::Carry,
            "FDRE" | "FDSE" | "FDCE" | "FDPE" | "FDRE_1" | "FDSE_1" | "FDCE_1" | "FDPE_1"
            | "LDCE" | "LDPE" => CellClass::FlipFlop,
            "GND" | "VCC" => CellClass::Constant,
            "SRL16E" | "SRLC16E" | "SRLC32E" => CellClass::Srl,
            "DSP48E2" | "DSP48E1" => CellClass::Dsp,
            "URAM288" | "URAM288_BASE" => CellClass::Uram,
            k if k.starts_with("RAMB36") => CellClass::Ramb36,
            k if k.starts_with("RAMB18") => CellClass::Ramb18,
            "RAM32X1S" | "RAM64X1S" => CellClass::LutRam { luts: 1 },
            "RAM32X1D" | "RAM64X1D" | "RAM128X1S" => CellClass::LutRam { luts: 2 },
            "RAM32M" | "RAM64M" | "RAM128X1D" | "RAM256X1S" => CellClass::LutRam { luts: 4 },
            "RAM32M16" | "RAM64M8" | "RAM256X1D" | "RAM512X1S" => CellClass::LutRam { luts: 8 },
            _ => CellClass::Unknown,
        }
    }

    /// Cells a path passes through (the rest start and end paths).
    fn is_combinational(self) -> bool {
        matches!(
            self,
            CellClass::Lut | CellClass::MuxF | CellClass::Carry | CellClass::Unknown
        )
    }
}

/// Does input `pin` of a LUT-RAM or SRL reach its data outputs without a
/// clock edge (a read address)? Its other inputs (data, write enable, clock)
/// end paths.
fn is_read_address(pin: &str) -> bool {
    pin.starts_with("ADDR")
        || pin.starts_with("DPRA")
        || (pin.starts_with('A') && pin[1..].chars().all(|c| c.is_ascii_digit()))
}

/// Is `pin` a clock input (which ends no data path)?
fn is_clock(pin: &str) -> bool {
    pin == "C" || pin.contains("CLK")
}

/// One cell: its class, block and connections as net numbers (constants dropped).
#[derive(Clone, Debug)]
pub struct Cell {
    pub name: String,
    pub kind: String,
    pub class: CellClass,
    /// Index into `Netlist::blocks`.
    pub block: usize,
    /// (pin, bit index, net) of every input bit driven by a net.
    pub inputs: Vec<(String, usize, usize)>,
    pub outputs: Vec<(String, usize, usize)>,
}

/// A flat netlist: cells, the top module's ports, and names for nets.
pub struct Netlist {
    pub cells: Vec<Cell>,
    /// Block names; index 0 is the top module's own logic.
    pub blocks: Vec<String>,
    /// (port name, bit index, net) of the top module's inputs and outputs.
    pub input_ports: Vec<(String, usize, usize)>,
    pub output_ports: Vec<(String, usize, usize)>,
    /// The most readable name of each named net bit.
    net_names: HashMap<usize, String>,
}

/// Resource counts of one block.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Resources {
    /// LUT1..LUT6 and INV.
    pub luts: u64,
    /// LUTs used as RAM or shift registers.
    pub lutram_luts: u64,
    pub flip_flops: u64,
    pub ramb36: u64,
    pub ramb18: u64,
    pub uram: u64,
    /// MUXF7/8/9.
    pub muxf: u64,
    /// Carry cells as mapped (CARRY4 from yosys 0.23).
    pub carry4: u64,
    /// CARRY8 cells these chains take on UltraScale+: each chain of n CARRY4
    /// packs into ceil(n / 2).
    pub carry8: u64,
    pub dsp: u64,
    /// Cells of a type this tool does not know.
    pub unknown: u64,
}

impl Resources {
    /// Block RAM in RAMB36 equivalents (a RAMB18 is half of one).
    pub fn ramb36_equivalent(&self) -> f64 {
        self.ramb36 as f64 + self.ramb18 as f64 / 2.0
    }

    pub fn add(&mut self, other: &Resources) {
        self.luts += other.luts;
        self.lutram_luts += other.lutram_luts;
        self.flip_flops += other.flip_flops;
        self.ramb36 += other.ramb36;
        self.ramb18 += other.ramb18;
        self.uram += other.uram;
        self.muxf += other.muxf;
        self.carry4 += other.carry4;
        self.carry8 += other.carry8;
        self.dsp += other.dsp;
        self.unknown += other.unknown;
    }
}

/// Depth of a path: LUT levels (of which `muxf` are MUXFs) and carry cells.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Depth {
    pub levels: u32,
    pub carries: u32,
    pub muxf: u32,
}

/// One step of a path: a cell passed, and the net it drives.
#[derive(Clone, Debug, Serialize)]
pub struct Step {
    pub cell: String,
    pub kind: String,
    /// The readable name of the net the step drives, if it has one.
    pub net: Option<String>,
}

/// A register-to-register path.
#[derive(Clone, Debug, Serialize)]
pub struct Path {
    pub depth: Depth,
    /// Where it starts: a register's output in RustHDL's naming
    /// (`tx_engine.offset.q[3]`), a RAM's output, or an input port.
    pub from: String,
    /// Where it ends: the register it loads (named by its output, as in RustHDL),
    /// a RAM input, or an output port.
    pub to: String,
    /// The combinational cells in order, first after `from`.
    pub steps: Vec<Step>,
}

/// Arrival at a net: the depth of the deepest path to it, and the input of
/// the net's driver that path came through (None at a path's start).
#[derive(Clone, Copy)]
struct Arrival {
    depth: Depth,
    from: Option<usize>,
}

const START: Arrival = Arrival {
    depth: Depth {
        levels: 0,
        carries: 0,
        muxf: 0,
    },
    from: None,
};

impl Netlist {
    /// Parses `json` (yosys `write_json`) and takes module `top`, which must
    /// be flat. Cells whose name starts with `<child>.` or `$flatten\<child>.`
    /// for a `child` in `children` belong to that block; the rest to the top.
    pub fn from_json(json: &str, top: &str, children: &[String]) -> Result<Netlist, NetlistError> {
        let design: JsonDesign = serde_json::from_str(json)?;
        let Some(module) = design.modules.get(top) else {
            let mut real: Vec<&str> = design
                .modules
                .iter()
                .filter(|(_, m)| !m.attributes.contains_key("blackbox"))
                .map(|(n, _)| n.as_str())
                .collect();
            real.sort();
            return Err(NetlistError::NoModule(top.to_string(), real.join(", ")));
        };
        let mut blocks = vec![top.to_string()];
        blocks.extend(children.iter().cloned());
        let block_of = |cell: &str| -> usize {
            let name = cell.strip_prefix("$flatten\\").unwrap_or(cell);
            // yosys's own names start with `$` and may contain dots of their own.
            if name.starts_with('$') {
                return 0;
            }
            let prefix = name.split('.').next().unwrap_or("");
            children
                .iter()
                .position(|c| c == prefix)
                .map_or(0, |i| i + 1)
        };
        let mut cells = Vec::with_capacity(module.cells.len());
        for (name, c) in &module.cells {
            let class = CellClass::of(&c.kind);
            let mut inputs = Vec::new();
            let mut outputs = Vec::new();
            for (pin, bits) in &c.connections {
                let dir = c
                    .port_directions
                    .get(pin)
                    .ok_or_else(|| NetlistError::NoDirection {
                        cell: name.clone(),
                        kind: c.kind.clone(),
                        pin: pin.clone(),
                    })?;
                for (i, b) in bits.iter().enumerate() {
                    if let JsonBit::Net(n) = b {
                        match dir.as_str() {
                            "output" => outputs.push((pin.clone(), i, *n)),
                            _ => inputs.push((pin.clone(), i, *n)),
                        }
                    }
                }
            }
            cells.push(Cell {
                name: name.clone(),
                kind: c.kind.clone(),
                class,
                block: block_of(name),
                inputs,
                outputs,
            });
        }
        let mut input_ports = Vec::new();
        let mut output_ports = Vec::new();
        for (name, p) in &module.ports {
            for (i, b) in p.bits.iter().enumerate() {
                if let JsonBit::Net(n) = b {
                    match p.direction.as_str() {
                        "input" => input_ports.push((name.clone(), i, *n)),
                        "output" => output_ports.push((name.clone(), i, *n)),
                        _ => {
                            input_ports.push((name.clone(), i, *n));
                            output_ports.push((name.clone(), i, *n));
                        }
                    }
                }
            }
        }
        // The most readable name of each bit: public, a register's `.q` if
        // there is one, dots rather than yosys's `$` port aliases, shortest.
        let mut net_names: HashMap<usize, (i32, String)> = HashMap::new();
        for (name, net) in &module.netnames {
            if net.hide_name != 0 {
                continue;
            }
            let score = -(name.matches('$').count() as i32) * 100
                + if name.ends_with(".q") { 1000 } else { 0 }
                - name.len() as i32;
            for (i, b) in net.bits.iter().enumerate() {
                if let JsonBit::Net(n) = b {
                    let full = if net.bits.len() == 1 {
                        name.clone()
                    } else {
                        format!("{name}[{i}]")
                    };
                    let better = net_names.get(n).is_none_or(|(s, _)| score > *s);
                    if better {
                        net_names.insert(*n, (score, full));
                    }
                }
            }
        }
        Ok(Netlist {
            cells,
            blocks,
            input_ports,
            output_ports,
            net_names: net_names
                .into_iter()
                .map(|(n, (_, s))| (n, rusthdl_name(&s)))
                .collect(),
        })
    }

    /// Resource counts per block, in `blocks` order.
    pub fn resources(&self) -> Vec<Resources> {
        let mut per_block = vec![Resources::default(); self.blocks.len()];
        for cell in &self.cells {
            let r = &mut per_block[cell.block];
            match cell.class {
                CellClass::Lut => r.luts += 1,
                CellClass::MuxF => r.muxf += 1,
                CellClass::Carry => r.carry4 += if cell.kind == "CARRY8" { 2 } else { 1 },
                CellClass::FlipFlop => r.flip_flops += 1,
                CellClass::Ramb36 => r.ramb36 += 1,
                CellClass::Ramb18 => r.ramb18 += 1,
                CellClass::Uram => r.uram += 1,
                CellClass::LutRam { luts } => r.lutram_luts += luts as u64,
                CellClass::Srl => r.lutram_luts += 1,
                CellClass::Dsp => r.dsp += 1,
                CellClass::Constant => {}
                CellClass::Unknown => r.unknown += 1,
            }
        }
        for (block, carry8) in self.carry8_per_block().into_iter().enumerate() {
            per_block[block].carry8 = carry8;
        }
        per_block
    }

    /// CARRY8s per block: CARRY4 chains (CO[3] into the next one's CI) of n
    /// cells take ceil(n / 2); a CARRY8 counts as itself.
    fn carry8_per_block(&self) -> Vec<u64> {
        let driver = self.drivers();
        let mut next_in_chain = vec![false; self.cells.len()];
        let mut out = vec![0u64; self.blocks.len()];
        for (i, cell) in self.cells.iter().enumerate() {
            if cell.kind != "CARRY4" {
                continue;
            }
            let fed = cell.inputs.iter().any(|(pin, _, net)| {
                pin == "CI"
                    && driver
                        .get(net)
                        .is_some_and(|&d| self.cells[d].kind == "CARRY4")
            });
            next_in_chain[i] = fed;
        }
        // Walk each chain from its head.
        let mut fanout: HashMap<usize, usize> = HashMap::new();
        for (i, cell) in self.cells.iter().enumerate() {
            if cell.kind != "CARRY4" {
                continue;
            }
            for (pin, _, net) in &cell.inputs {
                if pin == "CI" {
                    if let Some(&d) = driver.get(net) {
                        if self.cells[d].kind == "CARRY4" {
                            fanout.insert(d, i);
                        }
                    }
                }
            }
        }
        for (i, cell) in self.cells.iter().enumerate() {
            match cell.kind.as_str() {
                "CARRY8" => out[cell.block] += 1,
                "CARRY4" if !next_in_chain[i] => {
                    let mut n: u64 = 1;
                    let mut at = i;
                    while let Some(&next) = fanout.get(&at) {
                        n += 1;
                        at = next;
                    }
                    out[cell.block] += n.div_ceil(2);
                }
                _ => {}
            }
        }
        out
    }

    /// The cell driving each net.
    fn drivers(&self) -> HashMap<usize, usize> {
        let mut driver = HashMap::new();
        for (i, cell) in self.cells.iter().enumerate() {
            for (_, _, net) in &cell.outputs {
                driver.insert(*net, i);
            }
        }
        driver
    }

    /// The deepest paths ending in each block, in `blocks` order: up to
    /// `per_block` of them, deepest first, each to a different register (or
    /// RAM, or port), whatever the bit.
    pub fn deepest_paths(&self, per_block: usize) -> Result<Vec<Vec<Path>>, NetlistError> {
        let driver = self.drivers();
        let inputs: std::collections::HashSet<usize> =
            self.input_ports.iter().map(|(_, _, n)| *n).collect();
        let mut arrival: HashMap<usize, Option<Arrival>> = HashMap::new();
        // Every path end: (depth, block, net, end name).
        let mut ends: Vec<(Depth, usize, usize, String)> = Vec::new();
        for cell in &self.cells {
            if cell.class.is_combinational() || cell.class == CellClass::Constant {
                continue;
            }
            for (pin, bit, net) in &cell.inputs {
                if is_clock(pin) {
                    continue;
                }
                let Some(a) = self.arrive(*net, &driver, &inputs, &mut arrival)? else {
                    continue;
                };
                let to = match cell.class {
                    CellClass::FlipFlop => cell
                        .outputs
                        .first()
                        .and_then(|(_, _, q)| self.net_names.get(q).cloned())
                        .unwrap_or_else(|| format!("{} ({})", rusthdl_name(&cell.name), cell.kind)),
                    _ => format!("{} ({} {pin}[{bit}])", rusthdl_name(&cell.name), cell.kind),
                };
                ends.push((a.depth, cell.block, *net, to));
            }
        }
        for (port, bit, net) in &self.output_ports {
            let Some(a) = self.arrive(*net, &driver, &inputs, &mut arrival)? else {
                continue;
            };
            // An output port's path belongs to the block that drives it.
            let block = driver.get(net).map_or(0, |&d| self.cells[d].block);
            ends.push((a.depth, block, *net, format!("port {port}[{bit}]")));
        }
        ends.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.3.cmp(&b.3)));
        let mut out: Vec<Vec<Path>> = vec![Vec::new(); self.blocks.len()];
        let mut taken: std::collections::HashSet<(usize, String)> =
            std::collections::HashSet::new();
        for (_, block, net, to) in ends {
            if out[block].len() >= per_block {
                continue;
            }
            // One path per register: `x.q[3]` and `x.q[4]` are the same one.
            let register = match to.rfind('[') {
                Some(i) if to.ends_with(']') => to[..i].to_string(),
                _ => to.clone(),
            };
            if taken.insert((block, register)) {
                out[block].push(self.trace(net, to, &driver, &arrival));
            }
        }
        Ok(out)
    }

    /// Inputs of `cell` that reach its outputs without a clock edge.
    fn through_inputs(&self, cell: &Cell) -> Vec<usize> {
        match cell.class {
            c if c.is_combinational() => cell.inputs.iter().map(|(_, _, n)| *n).collect(),
            CellClass::LutRam { .. } | CellClass::Srl => cell
                .inputs
                .iter()
                .filter(|(pin, _, _)| is_read_address(pin))
                .map(|(_, _, n)| *n)
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The arrival at `net`, computing its fan-in cone first (iteratively:
    /// cones can be deeper than the stack).
    fn arrive(
        &self,
        net: usize,
        driver: &HashMap<usize, usize>,
        input_ports: &std::collections::HashSet<usize>,
        arrival: &mut HashMap<usize, Option<Arrival>>,
    ) -> Result<Option<Arrival>, NetlistError> {
        if let Some(a) = arrival.get(&net) {
            return Ok(*a);
        }
        // (net, its inputs have been pushed)
        let mut stack: Vec<(usize, bool)> = vec![(net, false)];
        let mut open: std::collections::HashSet<usize> = std::collections::HashSet::new();
        while let Some(&(top, expanded)) = stack.last() {
            if arrival.contains_key(&top) {
                stack.pop();
                continue;
            }
            let Some(&ci) = driver.get(&top) else {
                // Undriven nets start nothing; input ports start paths.
                arrival.insert(top, input_ports.contains(&top).then_some(START));
                stack.pop();
                continue;
            };
            let cell = &self.cells[ci];
            let through = self.through_inputs(cell);
            if !expanded {
                open.insert(top);
                stack.last_mut().unwrap().1 = true;
                for input in through {
                    if arrival.contains_key(&input) {
                        continue;
                    }
                    if open.contains(&input) {
                        return Err(NetlistError::Loop(rusthdl_name(&cell.name)));
                    }
                    stack.push((input, false));
                }
                continue;
            }
            // Every input is known: this net's arrival.
            let mut worst: Option<(Depth, usize)> = None;
            for input in through {
                if let Some(a) = arrival[&input] {
                    if worst.is_none_or(|(d, _)| a.depth > d) {
                        worst = Some((a.depth, input));
                    }
                }
            }
            let through_arrival = worst.map(|(d, input)| Arrival {
                depth: add_cell(d, cell.class),
                from: Some(input),
            });
            let a = match cell.class {
                CellClass::Constant => None,
                c if c.is_combinational() => through_arrival,
                // A LUT-RAM or SRL output starts a path, or continues the
                // one through its read address, whichever is deeper.
                _ => Some(through_arrival.map_or(START, |t| {
                    if t.depth > START.depth {
                        t
                    } else {
                        START
                    }
                })),
            };
            arrival.insert(top, a);
            open.remove(&top);
            stack.pop();
        }
        Ok(arrival[&net])
    }

    /// The path that arrives at `net`, ending at `to`.
    fn trace(
        &self,
        net: usize,
        to: String,
        driver: &HashMap<usize, usize>,
        arrival: &HashMap<usize, Option<Arrival>>,
    ) -> Path {
        let depth = arrival[&net].map(|a| a.depth).unwrap_or_default();
        let mut steps = Vec::new();
        let mut at = net;
        while let Some(Some(Arrival {
            from: Some(prev), ..
        })) = arrival.get(&at)
        {
            let cell = &self.cells[driver[&at]];
            steps.push(Step {
                cell: rusthdl_name(&cell.name),
                kind: cell.kind.clone(),
                net: self.net_names.get(&at).cloned(),
            });
            at = *prev;
        }
        steps.reverse();
        Path {
            depth,
            from: self.start_name(at, driver),
            to,
            steps,
        }
    }

    /// The name of a path's start: a register's output, a RAM's, or a port.
    fn start_name(&self, net: usize, driver: &HashMap<usize, usize>) -> String {
        if let Some(&d) = driver.get(&net) {
            let cell = &self.cells[d];
            if cell.class == CellClass::FlipFlop {
                if let Some(name) = self.net_names.get(&net) {
                    return name.clone();
                }
            }
            let (pin, bit, _) = cell.outputs.iter().find(|(_, _, n)| *n == net).unwrap();
            return format!("{} ({} {pin}[{bit}])", rusthdl_name(&cell.name), cell.kind);
        }
        if let Some((port, bit, _)) = self.input_ports.iter().find(|(_, _, n)| *n == net) {
            return format!("port {port}[{bit}]");
        }
        self.net_names
            .get(&net)
            .cloned()
            .unwrap_or_else(|| format!("net {net}"))
    }
}

fn add_cell(d: Depth, class: CellClass) -> Depth {
    match class {
        // A LUT-RAM or SRL read through its address is a LUT read.
        CellClass::Lut | CellClass::LutRam { .. } | CellClass::Srl => Depth {
            levels: d.levels + 1,
            ..d
        },
        CellClass::MuxF => Depth {
            levels: d.levels + 1,
            muxf: d.muxf + 1,
            ..d
        },
        CellClass::Carry => Depth {
            carries: d.carries + 1,
            ..d
        },
        _ => d,
    }
}

/// A Verilog name of RustHDL's back in RustHDL's spelling: `endpoints$2.regs$0.q`
/// is `endpoints[2].regs[0].q`; yosys's `$flatten\` prefixes are dropped and
/// its own names (a part starting with `$`) are left as they are.
pub fn rusthdl_name(name: &str) -> String {
    let name = name.replace("$flatten\\", "");
    let parts: Vec<String> = name
        .split('.')
        .map(|part| {
            if part.starts_with('$') {
                return part.to_string();
            }
            let mut out = String::with_capacity(part.len() + 2);
            let mut chars = part.chars().peekable();
            while let Some(c) = chars.next() {
                if c == '$' && chars.peek().is_some_and(|d| d.is_ascii_digit()) {
                    out.push('[');
                    while let Some(d) = chars.next_if(|d| d.is_ascii_digit()) {
                        out.push(d);
                    }
                    out.push(']');
                } else {
                    out.push(c);
                }
            }
            out
        })
        .collect();
    parts.join(".")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    /// A cell of `kind` with its pins: (name, direction, bits).
    fn cell(kind: &str, pins: &[(&str, &str, Value)]) -> Value {
        let mut dirs = serde_json::Map::new();
        let mut conns = serde_json::Map::new();
        for (pin, dir, bits) in pins {
            dirs.insert(pin.to_string(), json!(dir));
            conns.insert(pin.to_string(), bits.clone());
        }
        json!({"type": kind, "port_directions": dirs, "connections": conns})
    }

    fn ff(d: Value, q: usize) -> Value {
        cell(
            "FDRE",
            &[
                ("C", "input", json!([2])),
                ("CE", "input", json!(["1"])),
                ("R", "input", json!(["0"])),
                ("D", "input", d),
                ("Q", "output", json!([q])),
            ],
        )
    }

    fn lut(kind: &str, ins: &[Value], o: usize) -> Value {
        let mut pins: Vec<(String, &str, Value)> = ins
            .iter()
            .enumerate()
            .map(|(i, b)| (format!("I{i}"), "input", json!([b])))
            .collect();
        pins.push(("O".into(), "output", json!([o])));
        let pins: Vec<(&str, &str, Value)> = pins
            .iter()
            .map(|(p, d, b)| (p.as_str(), *d, b.clone()))
            .collect();
        cell(kind, &pins)
    }

    fn carry4(ci: Value, s: usize, o: [usize; 4], co: [usize; 4]) -> Value {
        cell(
            "CARRY4",
            &[
                ("CI", "input", json!([ci])),
                ("CYINIT", "input", json!(["0"])),
                ("DI", "input", json!(["0", "0", "0", "0"])),
                ("S", "input", json!([s, s, s, s])),
                ("O", "output", json!(o)),
                ("CO", "output", json!(co)),
            ],
        )
    }

    /// Blocks `src` and `dst` under top `t`:
    ///   src.r (FF) -> LUT2 -> MUXF7 -> CARRY4 -> CARRY4 -> LUT1 -> dst.r (FF)
    ///   src.r -> LUT1 -> src.s (FF)
    ///   GND -> LUT1 -> src.k (FF)                      (no path: a constant)
    ///   src.r -> LUT1 -> RAM64X1D DPRA0 ~> DPO -> LUT1 -> dst.m (FF)
    ///   dst.r -> LUT1 -> port y;  port a -> src.r
    fn design() -> String {
        let cells = json!({
            "src.r_reg": ff(json!([3]), 4),
            "$flatten\\src.$abc$1$l1": lut("LUT2", &[json!(4), json!(4)], 5),
            "$flatten\\dst.$abc$2$m1": cell("MUXF7", &[
                ("I0", "input", json!([5])), ("I1", "input", json!([5])),
                ("S", "input", json!([4])), ("O", "output", json!([6]))]),
            "$flatten\\dst.$abc$3$c1": carry4(json!("0"), 6, [7, 8, 9, 10], [11, 12, 13, 14]),
            "$flatten\\dst.$abc$3$c2": carry4(json!(14), 6, [15, 16, 17, 18], [19, 20, 21, 22]),
            "$flatten\\dst.$abc$4$l2": lut("LUT1", &[json!(15)], 16 + 100),
            "dst.r_reg": ff(json!([116]), 30),
            "$flatten\\src.$abc$5$l3": lut("LUT1", &[json!(4)], 31),
            "src.s_reg": ff(json!([31]), 32),
            "$gnd": cell("GND", &[("G", "output", json!([40]))]),
            "$flatten\\src.$abc$6$l4": lut("LUT1", &[json!(40)], 41),
            "src.k_reg": ff(json!([41]), 42),
            "src.ram": cell("RAM64X1D", &[
                ("WCLK", "input", json!([2])), ("WE", "input", json!(["1"])),
                ("D", "input", json!([4])),
                ("A0", "input", json!([4])), ("A1", "input", json!(["0"])),
                ("A2", "input", json!(["0"])), ("A3", "input", json!(["0"])),
                ("A4", "input", json!(["0"])), ("A5", "input", json!(["0"])),
                ("DPRA0", "input", json!([31])), ("DPRA1", "input", json!(["0"])),
                ("DPRA2", "input", json!(["0"])), ("DPRA3", "input", json!(["0"])),
                ("DPRA4", "input", json!(["0"])), ("DPRA5", "input", json!(["0"])),
                ("SPO", "output", json!([50])), ("DPO", "output", json!([51]))]),
            "$flatten\\dst.$abc$7$l5": lut("LUT1", &[json!(51)], 52),
            "dst.m_reg": ff(json!([52]), 53),
            "$abc$8$l6": lut("LUT1", &[json!(30)], 60),
        });
        json!({"modules": {
            "FDRE": {"attributes": {"blackbox": 1}},
            "t": {
                "attributes": {"top": 1},
                "ports": {
                    "clk": {"direction": "input", "bits": [2]},
                    "a": {"direction": "input", "bits": [3]},
                    "y": {"direction": "output", "bits": [60]},
                },
                "cells": cells,
                "netnames": {
                    "src.r.q": {"hide_name": 0, "bits": [4]},
                    "src.r$q": {"hide_name": 0, "bits": [4]},
                    "dst.r.q": {"hide_name": 0, "bits": [30]},
                    "dst.sum": {"hide_name": 0, "bits": [15, 16, 17, 18]},
                    "dst.m.q": {"hide_name": 0, "bits": [53]},
                    "src.s.q": {"hide_name": 0, "bits": [32]},
                    "$hidden": {"hide_name": 1, "bits": [5]},
                }
            }
        }})
        .to_string()
    }

    fn netlist() -> Netlist {
        Netlist::from_json(&design(), "t", &["src".into(), "dst".into()]).unwrap()
    }

    #[test]
    fn resources_are_counted_per_block() {
        let n = netlist();
        assert_eq!(n.blocks, ["t", "src", "dst"]);
        let r = n.resources();
        // src: l1, l3, l4 and three FFs, a 2-LUT RAM; dst: l2, l5, the MUXF,
        // two chained CARRY4 (one CARRY8), two FFs; top: l6.
        assert_eq!((r[1].luts, r[1].flip_flops, r[1].lutram_luts), (3, 3, 2));
        assert_eq!((r[2].luts, r[2].flip_flops, r[2].muxf), (2, 2, 1));
        assert_eq!((r[2].carry4, r[2].carry8), (2, 1));
        assert_eq!((r[0].luts, r[0].flip_flops), (1, 0));
    }

    #[test]
    fn the_deepest_path_is_found_and_named() {
        let n = netlist();
        let paths = n.deepest_paths(1).unwrap();
        let dst = &paths[2][0];
        assert_eq!(
            dst.depth,
            Depth {
                levels: 3,
                carries: 2,
                muxf: 1
            }
        );
        assert_eq!(dst.from, "src.r.q");
        assert_eq!(dst.to, "dst.r.q");
        let kinds: Vec<&str> = dst.steps.iter().map(|s| s.kind.as_str()).collect();
        assert_eq!(kinds, ["LUT2", "MUXF7", "CARRY4", "CARRY4", "LUT1"]);
        assert_eq!(dst.steps[3].net.as_deref(), Some("dst.sum[0]"));
        // src's deepest: one LUT (the constant-fed LUT starts nothing; the
        // port -> src.r path has no level).
        let src = &paths[1][0];
        assert_eq!(src.depth.levels, 1);
        assert_eq!(src.depth.carries, 0);
        // The output port's path belongs to the top, whose LUT drives it.
        let top = &paths[0][0];
        assert_eq!((top.depth.levels, top.to.as_str()), (1, "port y[0]"));
        assert_eq!(top.from, "dst.r.q");
    }

    #[test]
    fn the_next_deepest_paths_end_in_other_registers() {
        let n = netlist();
        let paths = n.deepest_paths(5).unwrap();
        // dst: dst.r (3 levels, 2 carries), then dst.m (3 levels, no carry).
        let ends: Vec<(&str, u32)> = paths[2]
            .iter()
            .map(|p| (p.to.as_str(), p.depth.levels))
            .collect();
        assert_eq!(ends, [("dst.r.q", 3), ("dst.m.q", 3)]);
        // src: src.s and the RAM's read address (1 level), its write data,
        // write address and src.r from the port (0 levels); no clock pin.
        let ends: Vec<&str> = paths[1].iter().map(|p| p.to.as_str()).collect();
        assert_eq!(
            ends,
            [
                "src.ram (RAM64X1D DPRA0[0])",
                "src.s.q",
                "src.r.q",
                "src.ram (RAM64X1D A0[0])",
                "src.ram (RAM64X1D D[0])"
            ]
        );
    }

    #[test]
    fn a_lut_ram_read_is_a_level_and_its_write_ends_a_path() {
        // src.r -> LUT1 -> DPRA0 ~> DPO -> LUT1 -> dst.m: three levels,
        // but shallower than dst.r's, so look at the arrival directly.
        let n = netlist();
        let driver = n.drivers();
        let inputs = n.input_ports.iter().map(|(_, _, x)| *x).collect();
        let mut arrival = HashMap::new();
        let a = n
            .arrive(52, &driver, &inputs, &mut arrival)
            .unwrap()
            .unwrap();
        assert_eq!(a.depth.levels, 3);
        let p = n.trace(52, "dst.m.q".into(), &driver, &arrival);
        assert_eq!(p.from, "src.r.q");
        let kinds: Vec<&str> = p.steps.iter().map(|s| s.kind.as_str()).collect();
        assert_eq!(kinds, ["LUT1", "RAM64X1D", "LUT1"]);
    }

    #[test]
    fn a_combinational_loop_is_an_error() {
        let design = json!({"modules": {"t": {
            "ports": {"y": {"direction": "output", "bits": [3]}},
            "cells": {
                "a": lut("LUT1", &[json!(4)], 3),
                "b": lut("LUT1", &[json!(3)], 4),
            },
            "netnames": {}
        }}});
        let n = Netlist::from_json(&design.to_string(), "t", &[]).unwrap();
        assert!(matches!(n.deepest_paths(1), Err(NetlistError::Loop(_))));
    }

    #[test]
    fn a_missing_module_names_the_ones_there() {
        let err = Netlist::from_json(&design(), "nope", &[]).err().unwrap();
        assert_eq!(
            err.to_string(),
            "module `nope` is not in the netlist (modules that are not blackboxes: t)"
        );
    }

    #[test]
    fn names_read_as_rusthdl_writes_them() {
        assert_eq!(
            rusthdl_name("endpoints$2.regs$10.q[3]"),
            "endpoints[2].regs[10].q[3]"
        );
        assert_eq!(
            rusthdl_name("$flatten\\rx_fifo.beats.mem.0.8"),
            "rx_fifo.beats.mem.0.8"
        );
        assert_eq!(rusthdl_name("$abc$123$x"), "$abc$123$x");
    }
}

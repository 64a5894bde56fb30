//! homa.conf: the card's tunables in one TOML file, checked against the table
//! in `tunables.rs`, applied to a card, and read back from it.
//!
//! DESIGN NOTES
//! ------------
//! - Everything is checked before anything is written: [`HomaConf::parse`]
//!   finds every problem of a file (syntax, unknown keys, types, ranges,
//!   values the card refuses, combinations) and reports them all, each with
//!   its key, line and allowed values, so one run of `homa-nic config check`
//!   shows everything to fix. A [`HomaConf`] that exists is valid.
//! - [`apply`] writes the register tunables and reads each back; if the card
//!   holds a different value than written (it refused it), every register
//!   written so far is restored to what it held before, so a card is never
//!   left half configured.
//! - Where the file comes from when a card is opened ([`HomaConf::from_env`]):
//!   `$HOMA_CONF` if set, else `/etc/homa.conf` if it exists, else the
//!   defaults. HomaModule's sysctls are per machine; so is this file.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use homa_driver::Device;
use homa_hw::regmap::{block_type, endpoint};

use crate::error::Error;
use crate::tunables::{
    self, show_value, EndpointSetting, HostSetting, Shape, Target, Tunable, TUNABLES,
};

/// Environment variable naming the homa.conf a card is opened with.
pub const ENV_VAR: &str = "HOMA_CONF";

/// The machine-wide homa.conf, read when `$HOMA_CONF` is not set.
pub const SYSTEM_PATH: &str = "/etc/homa.conf";

/// One thing wrong with a file (or refused by a card).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// The key it concerns (empty for a syntax error).
    pub key: String,
    /// 1-based line of the key's value in the file, when there is one.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
    /// The values the key takes, when that helps.
    pub allowed: Option<String>,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(line) = self.line {
            write!(f, "line {line}: ")?;
        }
        if !self.key.is_empty() {
            write!(f, "{}: ", self.key)?;
        }
        write!(f, "{}", self.message)?;
        if let Some(allowed) = &self.allowed {
            write!(f, " (allowed: {allowed})")?;
        }
        Ok(())
    }
}

/// A homa.conf that cannot be used, with every problem found.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct ConfigError {
    /// Where the file came from (its path, or a name given by the caller).
    pub origin: String,
    /// At least one.
    pub problems: Vec<Problem>,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.problems.as_slice() {
            [one] => write!(f, "{}: {one}", self.origin),
            many => {
                write!(f, "{}: {} problems", self.origin, many.len())?;
                for p in many {
                    write!(f, "\n  {p}")?;
                }
                Ok(())
            }
        }
    }
}

/// A valid set of tunables: the defaults, overridden by a file's values.
#[derive(Clone, Debug)]
pub struct HomaConf {
    table: &'static [Tunable],
    /// Every tunable of `table`, by name.
    values: BTreeMap<&'static str, Vec<u32>>,
    /// Line of each value the file set.
    lines: BTreeMap<&'static str, usize>,
    origin: String,
}

impl Default for HomaConf {
    fn default() -> Self {
        Self::defaults_of(TUNABLES, "defaults")
    }
}

impl HomaConf {
    fn defaults_of(table: &'static [Tunable], origin: &str) -> Self {
        HomaConf {
            table,
            values: table.iter().map(|t| (t.name, t.default.to_vec())).collect(),
            lines: BTreeMap::new(),
            origin: origin.to_string(),
        }
    }

    /// Parses and checks `source` (the text of a homa.conf); `origin` names
    /// it in errors.
    pub fn parse(source: &str, origin: &str) -> Result<HomaConf, ConfigError> {
        Self::parse_with(TUNABLES, source, origin)
    }

    /// As [`HomaConf::parse`], against another table of tunables (tests).
    pub fn parse_with(
        table: &'static [Tunable],
        source: &str,
        origin: &str,
    ) -> Result<HomaConf, ConfigError> {
        let error = |problems| ConfigError {
            origin: origin.to_string(),
            problems,
        };
        let parsed = toml::de::DeTable::parse(source).map_err(|e| {
            error(vec![Problem {
                key: String::new(),
                line: e.span().map(|s| line_of(source, s.start)),
                message: format!("not valid TOML: {}", e.message().trim_end()),
                allowed: None,
            }])
        })?;
        let mut conf = Self::defaults_of(table, origin);
        let mut problems = Vec::new();
        for (key, value) in parsed.get_ref().iter() {
            let line = line_of(source, key.span().start);
            let name = key.get_ref().as_ref();
            let Some(tunable) = table.iter().find(|t| t.name == name) else {
                problems.push(unknown_key(table, name, line));
                continue;
            };
            match read_value(tunable, value.get_ref()) {
                Ok(v) => {
                    conf.values.insert(tunable.name, v);
                    conf.lines.insert(tunable.name, line);
                }
                Err(message) => problems.push(Problem {
                    key: tunable.name.to_string(),
                    line: Some(line),
                    message,
                    allowed: Some(tunable.allowed()),
                }),
            }
        }
        if problems.is_empty() {
            problems = conf.check_combinations();
        }
        if problems.is_empty() {
            Ok(conf)
        } else {
            problems.sort_by_key(|p| p.line);
            Err(error(problems))
        }
    }

    /// Reads and checks the file at `path`.
    pub fn load(path: &Path) -> Result<HomaConf, ConfigError> {
        let origin = path.display().to_string();
        let source = std::fs::read_to_string(path).map_err(|e| ConfigError {
            origin: origin.clone(),
            problems: vec![Problem {
                key: String::new(),
                line: None,
                message: format!("cannot read the file: {e}"),
                allowed: None,
            }],
        })?;
        Self::parse(&source, &origin)
    }

    /// The homa.conf a card is opened with: `$HOMA_CONF` if set, else
    /// `/etc/homa.conf` if it exists, else the defaults.
    pub fn from_env() -> Result<HomaConf, ConfigError> {
        match std::env::var_os(ENV_VAR) {
            Some(path) if !path.is_empty() => Self::load(Path::new(&path)),
            _ if Path::new(SYSTEM_PATH).exists() => Self::load(Path::new(SYSTEM_PATH)),
            _ => Ok(Self::default()),
        }
    }

    /// Where the values came from (a path, or "defaults").
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The value of tunable `name` (one element unless it is an array).
    ///
    /// # Panics
    /// If `name` is not a tunable of the table (a bug in the caller).
    pub fn get(&self, name: &str) -> &[u32] {
        self.values
            .get(name)
            .unwrap_or_else(|| panic!("no tunable named {name}"))
    }

    /// Line of `name`'s value in the file, if the file set it.
    pub fn line(&self, name: &str) -> Option<usize> {
        self.lines.get(name).copied()
    }

    /// Every tunable with its value, in table order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static Tunable, &[u32])> + '_ {
        self.table
            .iter()
            .map(move |t| (t, self.values[t.name].as_slice()))
    }

    /// An endpoint setting's value (its default if the table lacks it).
    pub fn endpoint(&self, setting: EndpointSetting) -> u32 {
        self.table
            .iter()
            .find(|t| t.target == Target::Endpoint(setting))
            .map(|t| self.values[t.name][0])
            .unwrap_or_else(|| {
                let t = TUNABLES
                    .iter()
                    .find(|t| t.target == Target::Endpoint(setting))
                    .expect("every endpoint setting is in TUNABLES");
                t.default[0]
            })
    }

    /// A host-lib setting's value (its default if the table lacks it).
    pub fn host(&self, setting: HostSetting) -> u32 {
        self.table
            .iter()
            .chain(TUNABLES)
            .find(|t| t.target == Target::Host(setting))
            .map(|t| self.values.get(t.name).map_or(t.default[0], |v| v[0]))
            .expect("every host setting is in TUNABLES")
    }

    /// Tunable `name`'s (first) value, or its default in [`TUNABLES`] when
    /// this file's table lacks it (the card then keeps its reset value,
    /// which is that default).
    ///
    /// # Panics
    /// If `name` is in neither table (a bug in the caller).
    pub fn value_or_default(&self, name: &str) -> u32 {
        self.scalar(name).unwrap_or_else(|| {
            tunables::find(name)
                .unwrap_or_else(|| panic!("no tunable named {name}"))
                .default[0]
        })
    }

    fn scalar(&self, name: &str) -> Option<u32> {
        self.values.get(name).map(|v| v[0])
    }

    /// The rules across keys: combinations the card, or host-lib, refuses.
    fn check_combinations(&self) -> Vec<Problem> {
        let mut problems = Vec::new();
        let mut refuse = |key: &str, message: String, allowed: String| {
            problems.push(Problem {
                key: key.to_string(),
                line: self.line(key),
                message,
                allowed: Some(allowed),
            })
        };
        // A completion per TX slot and per bpage may be waiting at once; the
        // card writes completions without checking for room.
        if let (Some(cpl), Some(tx), Some(bpages)) = (
            self.scalar("endpoint_completion_ring_entries"),
            self.scalar("endpoint_tx_ring_entries"),
            self.scalar("endpoint_bpages"),
        ) {
            if cpl < tx + bpages {
                refuse(
                    "endpoint_completion_ring_entries",
                    format!(
                        "{cpl} entries cannot hold a completion for each of the \
                         {tx} TX entries and {bpages} bpages ({} at once)",
                        tx + bpages
                    ),
                    format!(
                        "a power of two >= endpoint_tx_ring_entries + endpoint_bpages = {}",
                        tx + bpages
                    ),
                );
            }
        }
        if let (Some(sched), Some(levels)) =
            (self.scalar("max_sched_prio"), self.scalar("num_priorities"))
        {
            if sched >= levels {
                refuse(
                    "max_sched_prio",
                    format!("{sched} is not a level of num_priorities = {levels}"),
                    format!("0..={}", levels.saturating_sub(1)),
                );
            }
        }
        if let (Some(window), Some(incoming)) = (self.scalar("window"), self.scalar("max_incoming"))
        {
            if window > incoming {
                refuse(
                    "window",
                    format!("a window of {window} bytes is more than max_incoming = {incoming}"),
                    format!("0 (dynamic) or 1..={incoming}"),
                );
            }
        }
        problems
    }
}

/// 1-based line of byte `at` of `source`.
fn line_of(source: &str, at: usize) -> usize {
    source.as_bytes()[..at.min(source.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// The problem of a key no tunable has, with the nearest name if one is near.
fn unknown_key(table: &[Tunable], name: &str, line: usize) -> Problem {
    let nearest = table
        .iter()
        .map(|t| (edit_distance(name, t.name), t.name))
        .min()
        .filter(|(d, _)| *d <= 3)
        .map(|(_, n)| n);
    let message = match nearest {
        Some(n) => format!("unknown key (did you mean `{n}`?)"),
        None => "unknown key".to_string(),
    };
    Problem {
        key: name.to_string(),
        line: Some(line),
        message,
        allowed: Some(format!(
            "the keys of `homa-nic config show`: {}",
            table.iter().map(|t| t.name).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// Levenshtein distance, for "did you mean".
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let next = (row[j + 1] + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != cb));
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// The value of `tunable` in `value`, or what is wrong with it.
fn read_value(tunable: &Tunable, value: &toml::de::DeValue<'_>) -> Result<Vec<u32>, String> {
    let values = match (tunable.shape, value) {
        (Shape::Array(n), toml::de::DeValue::Array(items)) => {
            if items.len() != n {
                return Err(format!("an array of {} values; it takes {n}", items.len()));
            }
            items
                .iter()
                .map(|item| integer(item.get_ref()))
                .collect::<Result<Vec<u32>, String>>()?
        }
        (Shape::Array(n), other) => {
            return Err(format!(
                "{} where an array of {n} integers goes",
                kind(other)
            ))
        }
        (_, toml::de::DeValue::Table(_)) => return Err(
            "a table: homa.conf is flat, as HomaModule's sysctls are (one `key = value` a line)"
                .to_string(),
        ),
        (_, v) => vec![integer(v)?],
    };
    for &v in &values {
        if v < tunable.min || v > tunable.max {
            return Err(format!("{v} is out of range"));
        }
        if tunable.shape == Shape::PowerOfTwo && !v.is_power_of_two() {
            return Err(format!("{v} is not a power of two"));
        }
    }
    if let Target::Fixed { why } = tunable.target {
        if values != tunable.default {
            return Err(format!("the card refuses {}: {why}", show_value(&values)));
        }
    }
    Ok(values)
}

fn integer(value: &toml::de::DeValue<'_>) -> Result<u32, String> {
    let toml::de::DeValue::Integer(i) = value else {
        return Err(format!("{} where an integer goes", kind(value)));
    };
    match u64::from_str_radix(i.as_str(), i.radix()) {
        Ok(v) => u32::try_from(v).map_err(|_| format!("{v} is out of range")),
        Err(_) => Err(format!("{i} is out of range")),
    }
}

fn kind(value: &toml::de::DeValue<'_>) -> &'static str {
    match value {
        toml::de::DeValue::String(_) => "a string",
        toml::de::DeValue::Integer(_) => "an integer",
        toml::de::DeValue::Float(_) => "a float",
        toml::de::DeValue::Boolean(_) => "a boolean",
        toml::de::DeValue::Datetime(_) => "a date",
        toml::de::DeValue::Array(_) => "an array",
        toml::de::DeValue::Table(_) => "a table",
    }
}

/// Base of the block of `block_type` on `device`.
fn block_base(device: &Device, block_type: u32) -> Option<u32> {
    device.blocks().find(block_type).map(|b| b.base)
}

/// Writes every register tunable of `conf` to the card and reads each back.
/// The card is left as it was if any register does not hold what was
/// written, or if a register's block is missing; nothing is written before
/// every block is found.
pub fn apply(device: &Device, conf: &HomaConf) -> Result<(), Error> {
    let refused = |tunable: &Tunable, message: String| ConfigError {
        origin: conf.origin.clone(),
        problems: vec![Problem {
            key: tunable.name.to_string(),
            line: conf.line(tunable.name),
            message,
            allowed: Some(tunable.allowed()),
        }],
    };
    // (tunable, register address, value) for every register word.
    let mut writes = Vec::new();
    for (tunable, values) in conf.iter() {
        let Target::Csr { block_type, offset } = tunable.target else {
            continue;
        };
        let base = block_base(device, block_type).ok_or_else(|| {
            refused(
                tunable,
                format!(
                    "the card has no register block of type {block_type:#010x} for it \
                     (its bitstream predates this tunable)"
                ),
            )
        })?;
        for (i, &v) in values.iter().enumerate() {
            writes.push((tunable, base + offset + 4 * i as u32, v));
        }
    }
    let backend = device.backend();
    let old = writes
        .iter()
        .map(|&(_, address, _)| backend.csr_read(address))
        .collect::<Result<Vec<u32>, _>>()?;
    let mut failure = None;
    for (done, &(tunable, address, value)) in writes.iter().enumerate() {
        backend.csr_write(address, value)?;
        let held = backend.csr_read(address)?;
        if held != value {
            failure = Some((
                done,
                refused(
                    tunable,
                    format!("the card refused {value}: the register at {address:#x} holds {held}"),
                ),
            ));
            break;
        }
    }
    let Some((done, error)) = failure else {
        tracing::info!(
            origin = conf.origin(),
            registers = writes.len(),
            "homa.conf applied"
        );
        return Ok(());
    };
    for (&(_, address, _), &value) in writes[..=done].iter().zip(&old).rev() {
        backend.csr_write(address, value)?;
    }
    Err(error.into())
}

/// A tunable as the card holds it now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reading {
    /// Read from its register.
    Register(Vec<u32>),
    /// Built into the RTL: this value.
    Fixed(Vec<u32>),
    /// Per open endpoint (port, value read from its block); for bpages the
    /// card's count of free ones. `next` is what host-lib gives the next
    /// endpoint it opens.
    Endpoints { next: u32, open: Vec<(u16, u32)> },
    /// host-lib's own: what this process opened the card with.
    Host(u32),
}

/// Reads every tunable of `conf`'s table back from `device` (writes nothing;
/// `conf` gives the table, and the sizes the next endpoint opens with).
pub fn read_live(
    device: &Device,
    conf: &HomaConf,
) -> Result<Vec<(&'static Tunable, Reading)>, Error> {
    let backend = device.backend();
    let endpoint_bases: Vec<u32> = device
        .blocks()
        .blocks()
        .iter()
        .filter(|b| b.block_type == block_type::ENDPOINT)
        .map(|b| b.base)
        .collect();
    let mut out = Vec::new();
    for (tunable, values) in conf.iter() {
        let reading = match tunable.target {
            Target::Fixed { .. } => Reading::Fixed(tunable.default.to_vec()),
            Target::Csr { block_type, offset } => {
                let base = block_base(device, block_type).ok_or_else(|| ConfigError {
                    origin: conf.origin.clone(),
                    problems: vec![Problem {
                        key: tunable.name.to_string(),
                        line: None,
                        message: format!(
                            "the card has no register block of type {block_type:#010x}"
                        ),
                        allowed: None,
                    }],
                })?;
                Reading::Register(
                    (0..values.len() as u32)
                        .map(|i| backend.csr_read(base + offset + 4 * i))
                        .collect::<Result<_, _>>()?,
                )
            }
            Target::Host(setting) => Reading::Host(conf.host(setting)),
            Target::Endpoint(setting) => {
                let mut open = Vec::new();
                for &base in &endpoint_bases {
                    let port = backend.csr_read(base + endpoint::PORT)? as u16;
                    if port == 0 {
                        continue;
                    }
                    let value = match setting {
                        EndpointSetting::TxRingEntries => {
                            1 << backend.csr_read(base + endpoint::TX_RING_LOG2)?
                        }
                        EndpointSetting::CompletionRingEntries => {
                            1 << backend.csr_read(base + endpoint::CPL_RING_LOG2)?
                        }
                        EndpointSetting::Bpages => {
                            backend.csr_read(base + endpoint::RX_BPAGES_FREE)?
                        }
                    };
                    open.push((port, value));
                }
                Reading::Endpoints {
                    next: values[0],
                    open,
                }
            }
        };
        out.push((tunable, reading));
    }
    Ok(out)
}

/// The example homa.conf: every tunable at its default, commented. The file
/// `homa.conf` at the repository root is this text (a test keeps them equal).
pub fn example() -> String {
    let mut out = String::from(
        "# homa.conf: the Homa NIC's tunables, HomaModule's sysctl names, every one at its\n\
         # default. Check with `homa-nic config check FILE`, apply with `homa-nic config apply`;\n\
         # host-lib reads $HOMA_CONF (else /etc/homa.conf) when it opens a card.\n\
         # \"fixed\": built into this card's RTL today; the file may restate it, not change it.\n",
    );
    for t in tunables::TUNABLES {
        let fixed = match t.target {
            Target::Fixed { why } => format!(" [fixed: {why}]"),
            _ => String::new(),
        };
        let range = match t.target {
            Target::Fixed { .. } => String::new(),
            _ => format!(" ({})", t.allowed()),
        };
        out.push_str(&format!(
            "\n# {}{range}{fixed}\n{} = {}\n",
            t.help,
            t.name,
            show_value(t.default)
        ));
    }
    out
}

//! Message-size distributions W1-W5 of the Homa SIGCOMM 2018 paper (as
//! HomaModule's `util/dist.cc` tabulates them), and Poisson arrivals.
//!
//! The tables are compiled in from `testbench/workloads/*.csv` (copies of the
//! project's shared/data/workloads, kept in the repository so a clone builds
//! on its own), so the binary needs no data files; `Workload::from_csv` reads another table with
//! the same format: a `#` comment line, the header `length,weight`, then rows.
//! A table is a discrete distribution over the listed lengths.

use rand::Rng;
use serde::Serialize;

/// W1..W5, compiled in (`name`, csv text).
pub const BUILTIN: [(&str, &str); 5] = [
    ("w1", include_str!("../workloads/w1.csv")),
    ("w2", include_str!("../workloads/w2.csv")),
    ("w3", include_str!("../workloads/w3.csv")),
    ("w4", include_str!("../workloads/w4.csv")),
    ("w5", include_str!("../workloads/w5.csv")),
];

/// Environment variable naming a directory of workload tables that
/// overrides the built-in ones.
pub const WORKLOADS_DIR_ENV: &str = "HOMA_WORKLOADS_DIR";

/// A workload table could not be used.
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    #[error("unknown workload {0:?}: expected one of w1, w2, w3, w4, w5")]
    Unknown(String),
    #[error("workload {name}, line {line}: {problem}")]
    Parse {
        name: String,
        line: usize,
        problem: String,
    },
    #[error("reading workload table {path}: {message} (unset HOMA_WORKLOADS_DIR to use the built-in tables)")]
    Read { path: String, message: String },
    #[error("workload {0}: no rows with positive weight")]
    Empty(String),
}

/// A message-size distribution.
#[derive(Clone, Debug, Serialize)]
pub struct Workload {
    pub name: String,
    /// Distinct lengths, ascending.
    pub lengths: Vec<u32>,
    /// Cumulative probability up to and including `lengths[i]`; last is 1.
    pub cdf: Vec<f64>,
}

impl Workload {
    /// One of the built-in tables, by name (`w1`..`w5`, case-insensitive).
    pub fn builtin(name: &str) -> Result<Workload, WorkloadError> {
        let lower = name.to_ascii_lowercase();
        let (_, text) = BUILTIN
            .iter()
            .find(|(n, _)| *n == lower)
            .ok_or_else(|| WorkloadError::Unknown(name.to_string()))?;
        Workload::from_csv(&lower, text)
    }

    /// A named table: from `$HOMA_WORKLOADS_DIR/<name>.csv` when that
    /// variable is set (to try edited tables without rebuilding), else built in.
    pub fn named(name: &str) -> Result<Workload, WorkloadError> {
        match std::env::var_os(WORKLOADS_DIR_ENV) {
            Some(dir) => {
                let path =
                    std::path::Path::new(&dir).join(format!("{}.csv", name.to_ascii_lowercase()));
                let text = std::fs::read_to_string(&path).map_err(|e| WorkloadError::Read {
                    path: path.display().to_string(),
                    message: e.to_string(),
                })?;
                Workload::from_csv(&name.to_ascii_lowercase(), &text)
            }
            None => Workload::builtin(name),
        }
    }

    /// Parses a table.
    pub fn from_csv(name: &str, text: &str) -> Result<Workload, WorkloadError> {
        let err = |line: usize, problem: String| WorkloadError::Parse {
            name: name.to_string(),
            line,
            problem,
        };
        let mut rows: Vec<(u32, f64)> = Vec::new();
        let mut seen_header = false;
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if !seen_header {
                if line != "length,weight" {
                    return Err(err(
                        i + 1,
                        format!("expected header `length,weight`, found {line:?}"),
                    ));
                }
                seen_header = true;
                continue;
            }
            let (l, w) = line
                .split_once(',')
                .ok_or_else(|| err(i + 1, format!("expected `length,weight`, found {line:?}")))?;
            let length: u32 = l
                .trim()
                .parse()
                .map_err(|e| err(i + 1, format!("length {l:?}: {e}")))?;
            let weight: f64 = w
                .trim()
                .parse()
                .map_err(|e| err(i + 1, format!("weight {w:?}: {e}")))?;
            if length == 0 || weight.is_nan() || weight < 0.0 {
                return Err(err(
                    i + 1,
                    "length must be positive and weight not negative".into(),
                ));
            }
            if weight > 0.0 {
                rows.push((length, weight));
            }
        }
        rows.sort_by_key(|r| r.0);
        Workload::from_weights(name, &rows).ok_or_else(|| WorkloadError::Empty(name.to_string()))
    }

    fn from_weights(name: &str, rows: &[(u32, f64)]) -> Option<Workload> {
        let total: f64 = rows.iter().map(|r| r.1).sum();
        if rows.is_empty() || total <= 0.0 {
            return None;
        }
        let mut lengths: Vec<u32> = Vec::new();
        let mut cdf: Vec<f64> = Vec::new();
        let mut acc = 0.0;
        for &(l, w) in rows {
            acc += w / total;
            if lengths.last() == Some(&l) {
                *cdf.last_mut().unwrap() = acc;
            } else {
                lengths.push(l);
                cdf.push(acc);
            }
        }
        *cdf.last_mut().unwrap() = 1.0;
        Some(Workload {
            name: name.to_string(),
            lengths,
            cdf,
        })
    }

    /// The same distribution with lengths above `max` merged into `max`
    /// (HomaModule's benchmark does the same at its max message length).
    pub fn capped(&self, max: u32) -> Workload {
        let mut rows: Vec<(u32, f64)> = Vec::new();
        let mut prev = 0.0;
        for (&l, &c) in self.lengths.iter().zip(&self.cdf) {
            rows.push((l.min(max), c - prev));
            prev = c;
        }
        Workload::from_weights(&self.name, &rows).expect("non-empty")
    }

    /// Probability of each length.
    pub fn probabilities(&self) -> impl Iterator<Item = (u32, f64)> + '_ {
        let mut prev = 0.0;
        self.lengths.iter().zip(&self.cdf).map(move |(&l, &c)| {
            let p = c - prev;
            prev = c;
            (l, p)
        })
    }

    /// Mean message length in bytes.
    pub fn mean(&self) -> f64 {
        self.probabilities().map(|(l, p)| l as f64 * p).sum()
    }

    /// Expectation of `f(length)`.
    pub fn expect(&self, f: impl Fn(u32) -> f64) -> f64 {
        self.probabilities().map(|(l, p)| f(l) * p).sum()
    }

    /// Smallest length with cumulative probability >= q.
    pub fn quantile(&self, q: f64) -> u32 {
        let i = self.cdf.partition_point(|&c| c < q);
        self.lengths[i.min(self.lengths.len() - 1)]
    }

    /// Draws a message length.
    pub fn sample<R: Rng>(&self, rng: &mut R) -> u32 {
        self.quantile(rng.gen::<f64>())
    }
}

/// Draws an exponential inter-arrival time with the given mean (Poisson arrivals).
pub fn exponential<R: Rng>(rng: &mut R, mean: f64) -> f64 {
    let u: f64 = rng.gen::<f64>();
    -mean * (1.0 - u).ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_tables_have_the_published_means() {
        // WIRE.md: W1 mean 189 B, W2 442 B, W3 2.9 KB, W4 128 KB, W5 2.56 MB.
        let expect = [
            ("w1", 189.0),
            ("w2", 442.0),
            ("w3", 2900.0),
            ("w4", 128_000.0),
            ("w5", 2_560_000.0),
        ];
        for (name, mean) in expect {
            let w = Workload::builtin(name).unwrap();
            let m = w.mean();
            assert!(
                (m / mean - 1.0).abs() < 0.15,
                "{name}: mean {m}, expected about {mean}"
            );
        }
        assert_eq!(
            Workload::builtin("w4").unwrap().quantile(0.5),
            662,
            "W4 median"
        );
    }

    #[test]
    fn capping_merges_the_tail_into_the_cap() {
        let w = Workload::builtin("w4").unwrap().capped(1_000_000);
        assert_eq!(*w.lengths.last().unwrap(), 1_000_000);
        assert!(w.mean() < Workload::builtin("w4").unwrap().mean());
        assert!((w.cdf.last().unwrap() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn rejects_a_bad_table() {
        assert!(matches!(
            Workload::from_csv("x", "# c\nlen,w\n1,1\n"),
            Err(WorkloadError::Parse { .. })
        ));
        assert!(matches!(
            Workload::builtin("w9"),
            Err(WorkloadError::Unknown(_))
        ));
    }
}

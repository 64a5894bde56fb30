//! `homa-nic synth`: yosys `synth_xilinx -family xcup` on every design's
//! generated Verilog; LUTs, flip-flops, block RAM, URAM and carry cells per
//! block, and the deepest register-to-register path in LUT levels, named in
//! RustHDL's signal names.
//!
//! The designs run one after the other (the machine is shared); the core's
//! top-level children are kept apart through synthesis so each gets its own
//! row, which also keeps yosys from optimizing across their boundaries (the
//! numbers are a little above a flat run's). Netlists, logs and scripts stay
//! in `--out` for a second look (`--analyze-only` reads them again).

mod netlist;
mod yosys;

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context};
use serde::Serialize;

use netlist::{Netlist, Path, Resources};

#[derive(clap::Args)]
pub struct SynthArgs {
    /// Directory for the Verilog, yosys scripts, logs and netlists.
    #[arg(long, default_value = "out/synth")]
    pub out: PathBuf,
    /// Only these designs (as `homa-nic verilog` names them: homa_core,
    /// rx_parser, ...); repeat or separate by commas. Default: all.
    #[arg(long, value_delimiter = ',')]
    pub design: Vec<String>,
    /// Only this block of the core (a row of its table: rx_engine,
    /// tx_engine, ...), synthesized alone: a quick look while working on
    /// one block. Its inputs are ports here, so a path that starts in
    /// another block is seen only from this block's edge.
    #[arg(long, conflicts_with = "design")]
    pub block: Option<String>,
    /// The report as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Every cell on each block's deepest path, not just its ends.
    #[arg(long)]
    pub paths: bool,
    /// List this many of each block's deepest paths, each to another register.
    #[arg(long, default_value_t = 1)]
    pub worst: usize,
    /// Paths deeper than this many LUT levels are marked (`!`).
    #[arg(long, default_value_t = 8)]
    pub max_levels: u32,
    /// Fail (exit status 1) when a path is deeper than `--max-levels`.
    #[arg(long)]
    pub check: bool,
    /// Do not run yosys: analyse the netlists a previous run left in `--out`.
    #[arg(long)]
    pub analyze_only: bool,
    /// The yosys to run.
    #[arg(long, default_value = "yosys")]
    pub yosys: PathBuf,
}

/// One row: a design, or one block of the core.
#[derive(Serialize)]
struct Row {
    block: String,
    #[serde(flatten)]
    resources: Resources,
    ramb36_equivalent: f64,
    /// The deepest paths ending in this block, deepest first (`--worst`).
    deepest: Vec<Path>,
}

#[derive(Serialize)]
struct DesignReport {
    design: String,
    /// Wall time of the yosys run, and the CPU time it reports (the two
    /// differ when the machine is shared).
    yosys_seconds: f64,
    yosys_cpu_seconds: Option<f64>,
    analysis_seconds: f64,
    total: Row,
    /// The top module's children, then its own logic (`<design> (top)`);
    /// empty for designs not broken down.
    blocks: Vec<Row>,
}

#[derive(Serialize)]
struct Report {
    yosys: String,
    synth: &'static str,
    max_levels: u32,
    designs: Vec<DesignReport>,
    wall_seconds: f64,
}

/// The design broken down by its top-level children.
const BROKEN_DOWN: &str = "homa_core";

pub fn run(args: &SynthArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    let jobs = jobs(args)?;
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    let yosys_version = if args.analyze_only {
        "(netlists from an earlier run)".to_string()
    } else {
        yosys::version(&args.yosys)?
    };
    let mut designs = Vec::new();
    for job in &jobs {
        let files = yosys::Files::new(&args.out, &job.name);
        let children = if job.top == BROKEN_DOWN {
            yosys::children(&job.verilog, &job.top)
        } else {
            Vec::new()
        };
        let kept: Vec<String> = children.iter().map(|(m, _)| m.clone()).collect();
        let instances: Vec<String> = children.iter().map(|(_, i)| i.clone()).collect();
        let mut yosys_seconds = 0.0;
        let mut yosys_cpu_seconds = None;
        if !args.analyze_only {
            std::fs::write(&files.verilog, &job.verilog)
                .with_context(|| format!("writing {}", files.verilog.display()))?;
            std::fs::write(
                &files.script,
                yosys::with_deep_memories_in_uram(
                    &yosys::script(&job.top, &files.verilog, &kept, &files.json),
                    &job.verilog,
                ),
            )?;
            tracing::info!(design = job.name, "running yosys");
            eprint!("yosys: {} ...", job.name);
            let took = yosys::run(&args.yosys, &files.script, &files.log)?;
            yosys_seconds = took.as_secs_f64();
            yosys_cpu_seconds = std::fs::read_to_string(&files.log)
                .ok()
                .and_then(|log| yosys::cpu_seconds(&log));
            eprintln!(" {yosys_seconds:.1} s");
        }
        let analysis = Instant::now();
        let json = std::fs::read_to_string(&files.json).with_context(|| {
            format!(
                "reading {} (run without --analyze-only to make it)",
                files.json.display()
            )
        })?;
        let net = Netlist::from_json(&json, &job.top, &instances)
            .with_context(|| format!("reading the netlist {}", files.json.display()))?;
        let resources = net.resources();
        let paths = net.deepest_paths(args.worst.max(1))?;
        let mut rows: Vec<Row> = net
            .blocks
            .iter()
            .zip(resources)
            .zip(paths)
            .map(|((block, resources), deepest)| Row {
                block: netlist::rusthdl_name(block),
                ramb36_equivalent: resources.ramb36_equivalent(),
                resources,
                deepest,
            })
            .collect();
        // The top's own logic goes after its children.
        let own = rows.remove(0);
        let mut total = Row {
            block: job.name.clone(),
            resources: Resources::default(),
            ramb36_equivalent: 0.0,
            deepest: Vec::new(),
        };
        for row in rows.iter().chain(std::iter::once(&own)) {
            total.resources.add(&row.resources);
            total.deepest.extend(row.deepest.iter().cloned());
        }
        total.deepest.sort_by_key(|p| std::cmp::Reverse(p.depth));
        total.deepest.truncate(args.worst.max(1));
        total.ramb36_equivalent = total.resources.ramb36_equivalent();
        let blocks = if instances.is_empty() {
            Vec::new()
        } else {
            rows.push(Row {
                block: format!("{} (top)", job.name),
                ..own
            });
            rows
        };
        designs.push(DesignReport {
            design: job.name.clone(),
            yosys_seconds,
            yosys_cpu_seconds,
            analysis_seconds: analysis.elapsed().as_secs_f64(),
            total,
            blocks,
        });
    }
    let report = Report {
        yosys: yosys_version,
        synth: yosys::SYNTH,
        max_levels: args.max_levels,
        designs,
        wall_seconds: started.elapsed().as_secs_f64(),
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
    } else {
        print_table(&mut out, &report, args.paths)?;
    }
    let over: Vec<String> = report
        .designs
        .iter()
        .flat_map(|d| d.blocks.iter().chain(std::iter::once(&d.total)))
        .filter(|r| {
            r.deepest
                .first()
                .is_some_and(|p| p.depth.levels > args.max_levels)
        })
        .map(|r| r.block.clone())
        .collect();
    if args.check && !over.is_empty() {
        bail!(
            "paths deeper than {} LUT levels in: {}",
            args.max_levels,
            over.join(", ")
        );
    }
    Ok(())
}

/// One yosys run: a design, or (`--block`) one block of the core.
struct Job {
    /// The report's and the files' name.
    name: String,
    /// The module synthesized.
    top: String,
    verilog: String,
}

fn jobs(args: &SynthArgs) -> anyhow::Result<Vec<Job>> {
    let all = homa_hw::designs();
    if let Some(block) = &args.block {
        let core = all
            .into_iter()
            .find(|d| d.name == BROKEN_DOWN)
            .context("the core's design")?;
        let children = yosys::children(&core.verilog, BROKEN_DOWN);
        let Some((module, _)) = children
            .iter()
            .find(|(_, instance)| netlist::rusthdl_name(instance) == *block)
        else {
            let names: Vec<String> = children
                .iter()
                .map(|(_, i)| netlist::rusthdl_name(i))
                .collect();
            bail!(
                "no block `{block}` in {BROKEN_DOWN}; its blocks are: {}",
                names.join(", ")
            );
        };
        return Ok(vec![Job {
            name: format!("{BROKEN_DOWN}.{block}"),
            top: module.clone(),
            verilog: core.verilog,
        }]);
    }
    for wanted in &args.design {
        if !all.iter().any(|d| d.name == wanted) {
            let names: Vec<&str> = all.iter().map(|d| d.name).collect();
            bail!(
                "no design `{wanted}`; the designs are: {}",
                names.join(", ")
            );
        }
    }
    Ok(all
        .into_iter()
        .filter(|d| args.design.is_empty() || args.design.iter().any(|w| w == d.name))
        .map(|d| Job {
            name: d.name.to_string(),
            top: d.name.to_string(),
            verilog: d.verilog,
        })
        .collect())
}

fn print_table(out: &mut impl Write, report: &Report, steps: bool) -> anyhow::Result<()> {
    writeln!(
        out,
        "{} `{}`; LUT levels count LUT1-6/INV and MUXF7/8/9 (in brackets), carry cells apart; `!` above {}",
        report.yosys, report.synth, report.max_levels
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "| block | LUT | LUTRAM | FF | RAMB36 | RAMB18 | BRAM (36k eq) | URAM | CARRY8 | DSP | deepest path: LUT levels (MUXF) + carry |"
    )?;
    writeln!(out, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|")?;
    let row_line = |r: &Row, indent: &str| {
        let res = &r.resources;
        let depth = r.deepest.first().map_or("-".to_string(), |p| {
            format!(
                "{}{} ({}) + {}",
                p.depth.levels,
                if p.depth.levels > report.max_levels {
                    "!"
                } else {
                    ""
                },
                p.depth.muxf,
                p.depth.carries
            )
        });
        format!(
            "| {indent}{} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.block,
            res.luts,
            res.lutram_luts,
            res.flip_flops,
            res.ramb36,
            res.ramb18,
            r.ramb36_equivalent,
            res.uram,
            res.carry8,
            res.dsp,
            depth
        )
    };
    for d in &report.designs {
        writeln!(out, "{}", row_line(&d.total, ""))?;
        for b in &d.blocks {
            writeln!(out, "{}", row_line(b, "&nbsp;&nbsp;"))?;
        }
    }
    writeln!(out)?;
    writeln!(out, "Deepest paths (from -> to, RustHDL names):")?;
    for d in &report.designs {
        let rows: Vec<&Row> = if d.blocks.is_empty() {
            vec![&d.total]
        } else {
            d.blocks.iter().collect()
        };
        for (r, p) in rows
            .into_iter()
            .flat_map(|r| r.deepest.iter().map(move |p| (r, p)))
        {
            let name = if r.block == d.design {
                r.block.clone()
            } else {
                format!("{}/{}", d.design, r.block)
            };
            writeln!(
                out,
                "  {name}: {} levels ({} MUXF) + {} carry: {} -> {}",
                p.depth.levels, p.depth.muxf, p.depth.carries, p.from, p.to
            )?;
            if steps {
                for s in &p.steps {
                    writeln!(out, "      {}", step_line(s, !d.blocks.is_empty()))?;
                }
            }
        }
    }
    let unknown: u64 = report
        .designs
        .iter()
        .map(|d| d.total.resources.unknown)
        .sum();
    if unknown > 0 {
        writeln!(
            out,
            "{unknown} cells of types this tool does not know were passed through as wires (no level)"
        )?;
    }
    writeln!(out)?;
    for d in &report.designs {
        writeln!(
            out,
            "{}: yosys {:.1} s ({} CPU), analysis {:.1} s",
            d.design,
            d.yosys_seconds,
            d.yosys_cpu_seconds
                .map_or("-".to_string(), |c| format!("{c:.1} s")),
            d.analysis_seconds
        )?;
    }
    writeln!(out, "wall time {:.1} s", report.wall_seconds)?;
    Ok(())
}

/// A step of a path for people: the cell type, the block it is in, and the
/// net it drives when that has a name (yosys's own cell names say nothing).
fn step_line(s: &netlist::Step, broken_down: bool) -> String {
    let mut line = format!("{:7}", s.kind);
    if broken_down {
        let block = if s.cell.starts_with('$') {
            "(top)"
        } else {
            s.cell.split('.').next().unwrap_or("")
        };
        line.push_str(&format!(" in {block}"));
    }
    let public = !s.cell.contains('$');
    if public {
        line.push_str(&format!(" ({})", s.cell));
    }
    if let Some(net) = &s.net {
        line.push_str(&format!(" -> {net}"));
    }
    line
}

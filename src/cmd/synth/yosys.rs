//! Running yosys on one design: the script, the blocks kept apart, the run.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

/// The synthesis command: UltraScale+, flattened below the kept blocks, no
/// I/O or clock buffers (out of context: the core sits inside a shell), URAM
/// allowed for large memories.
pub const SYNTH: &str = "synth_xilinx -family xcup -flatten -noiopad -noclkbuf -uram";

/// Instances of `top`'s children worth a row of their own: every submodule
/// instantiated in `top`'s body, except RustHDL's one-register modules
/// (`module x(d,q,clock)`), which stay with the top's own logic. Returns
/// (module, instance) pairs in the order of the Verilog.
pub fn children(verilog: &str, top: &str) -> Vec<(String, String)> {
    let header = format!("module {top}(");
    let Some(start) = verilog.find(&header) else {
        return Vec::new();
    };
    let body = &verilog[start..];
    let body = &body[..body.find("\nendmodule").unwrap_or(body.len())];
    let prefix = format!("{top}$");
    let mut out = Vec::new();
    for line in body.lines() {
        let line = line.trim();
        let Some(rest) = line.strip_prefix(&prefix) else {
            continue;
        };
        let mut words = rest.split_whitespace();
        let (Some(module_tail), Some(instance)) = (words.next(), words.next()) else {
            continue;
        };
        let module = format!("{prefix}{module_tail}");
        let instance = instance.trim_end_matches('(').to_string();
        let is_register = verilog.contains(&format!("module {module}(d,q,clock);"));
        if !is_register {
            out.push((module, instance));
        }
    }
    out
}

/// The yosys script for `design` in `verilog_file`, keeping `kept` modules
/// apart through synthesis and writing the flat netlist to `json_file`.
pub fn script(design: &str, verilog_file: &Path, kept: &[String], json_file: &Path) -> String {
    let mut s = format!(
        "read_verilog -noautowire {}\nhierarchy -check -top {design}\n",
        verilog_file.display()
    );
    if !kept.is_empty() {
        s.push_str(&format!(
            "setattr -mod -set keep_hierarchy 1 {}\n",
            kept.join(" ")
        ));
    }
    s.push_str(SYNTH);
    s.push('\n');
    if !kept.is_empty() {
        s.push_str("setattr -mod -unset keep_hierarchy\nflatten\n");
    }
    s.push_str(&format!("write_json {}\n", json_file.display()));
    s
}

/// Memories of at least this many words are put in UltraRAM (`ram_style`).
pub const ULTRA_MIN_WORDS: usize = 4096;

/// `script` with every memory of `ULTRA_MIN_WORDS` words or more in
/// `verilog` (RustHDL's `reg [w:0] mem[n:0];`, one per RAM module) marked
/// `ram_style = "ultra"` before synthesis. Why: yosys 0.23 maps a deep RAM
/// whose read and write address are one signal (the RX engine's 16,384-entry
/// state RAM) to LUT-RAM and aborts ("invalid OPTION_ABITS/WIDTH"); a RAM that
/// deep belongs in URAM anyway.
pub fn with_deep_memories_in_uram(script: &str, verilog: &str) -> String {
    let mut module = "";
    let mut marks = String::new();
    for line in verilog.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("module ") {
            module = rest.split('(').next().unwrap_or("").trim();
            continue;
        }
        let Some(rest) = t.strip_prefix("reg") else {
            continue;
        };
        let Some(at) = rest.find("mem[") else {
            continue;
        };
        let words = rest[at + 4..]
            .split(':')
            .next()
            .and_then(|n| n.trim().parse::<usize>().ok())
            .map_or(0, |n| n + 1);
        if words >= ULTRA_MIN_WORDS && !module.is_empty() {
            marks.push_str(&format!(
                "setattr -set ram_style \"ultra\" {module}/m:mem\n"
            ));
        }
    }
    match script.find('\n') {
        Some(first) if !marks.is_empty() => {
            // After `read_verilog` and `hierarchy` (the first two lines).
            let second = script[first + 1..]
                .find('\n')
                .map_or(script.len(), |i| first + 1 + i + 1);
            format!("{}{marks}{}", &script[..second], &script[second..])
        }
        _ => script.to_string(),
    }
}

/// Runs `yosys` on `script_file`, logging to `log_file`; returns the wall time.
pub fn run(yosys: &Path, script_file: &Path, log_file: &Path) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let output = Command::new(yosys)
        .arg("-q")
        .arg("-l")
        .arg(log_file)
        .arg("-s")
        .arg(script_file)
        .output()
        .with_context(|| {
            format!(
                "running {} (install it with `apt-get install yosys`, or `make synth`, which does)",
                yosys.display()
            )
        })?;
    if !output.status.success() {
        let log = std::fs::read_to_string(log_file).unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(15).collect();
        bail!(
            "yosys failed ({}) on {}; the end of {}:\n{}{}",
            output.status,
            script_file.display(),
            log_file.display(),
            tail.into_iter().rev().collect::<Vec<_>>().join("\n"),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(started.elapsed())
}

/// The CPU seconds (user + system) yosys reports at the end of its log
/// ("End of script. ... CPU: user 50.81s system 1.32s, ..."), if it does.
pub fn cpu_seconds(log: &str) -> Option<f64> {
    let line = log.lines().rev().find(|l| l.contains("CPU: user"))?;
    let field = |name: &str| -> Option<f64> {
        let at = line.find(name)? + name.len();
        let rest = line[at..].trim_start();
        rest[..rest.find('s')?].parse().ok()
    };
    Some(field("user ")? + field("system ")?)
}

/// The first line of `yosys -V`, to record which yosys made the numbers.
pub fn version(yosys: &Path) -> anyhow::Result<String> {
    let out = Command::new(yosys).arg("-V").output().with_context(|| {
        format!(
            "running {} -V (install yosys with `apt-get install yosys`, or run `make synth`, which does)",
            yosys.display()
        )
    })?;
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Where the files of one design go.
pub struct Files {
    pub verilog: PathBuf,
    pub script: PathBuf,
    pub log: PathBuf,
    pub json: PathBuf,
}

impl Files {
    pub fn new(dir: &Path, design: &str) -> Files {
        Files {
            verilog: dir.join(format!("{design}.v")),
            script: dir.join(format!("{design}.ys")),
            log: dir.join(format!("{design}.log")),
            json: dir.join(format!("{design}.json")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VERILOG: &str = "\
module core(clock,a,b);
    core$rx rx(
        .clock(clock));
    core$busy busy(
        .d(a), .q(b), .clock(clock));
    core$endpoints$0 endpoints$0(
        .clock(clock));
endmodule // core
module core$rx(clock);
endmodule
module core$busy(d,q,clock);
endmodule
module core$endpoints$0(clock);
endmodule
";

    #[test]
    fn children_are_the_top_modules_instances_but_single_registers() {
        assert_eq!(
            children(VERILOG, "core"),
            vec![
                ("core$rx".to_string(), "rx".to_string()),
                ("core$endpoints$0".to_string(), "endpoints$0".to_string()),
            ]
        );
        assert!(children(VERILOG, "rx").is_empty());
    }

    #[test]
    fn cpu_time_is_read_from_the_log() {
        let log = "5. Executing JSON backend.\n\nEnd of script. Logfile hash: b50a385910, \
                   CPU: user 68.06s system 0.48s, MEM: 542.77 MB peak\nYosys 0.23\n";
        assert_eq!(cpu_seconds(log), Some(68.54));
        assert_eq!(cpu_seconds("no such line"), None);
    }

    #[test]
    fn deep_memories_are_put_in_uram() {
        let v = "module top$big(a);\n    reg[47:0] mem[16383:0];\nendmodule\n\
                 module top$small(a);\n    reg[15:0] mem[255:0];\nendmodule\n";
        let s = with_deep_memories_in_uram("read_verilog x.v\nhierarchy -top top\nsynth\n", v);
        assert_eq!(
            s,
            "read_verilog x.v\nhierarchy -top top\nsetattr -set ram_style \"ultra\" top$big/m:mem\nsynth\n"
        );
    }

    #[test]
    fn the_script_keeps_blocks_apart_then_flattens() {
        let s = script(
            "core",
            Path::new("d/core.v"),
            &["core$rx".to_string()],
            Path::new("d/core.json"),
        );
        let keep = s.find("keep_hierarchy 1 core$rx").unwrap();
        let synth = s.find(SYNTH).unwrap();
        let flatten = s.find("\nflatten").unwrap();
        assert!(keep < synth && synth < flatten, "{s}");
        assert!(s.ends_with("write_json d/core.json\n"));
        assert!(!script("rx", Path::new("rx.v"), &[], Path::new("rx.json")).contains("flatten\n"));
    }
}

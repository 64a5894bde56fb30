#!/usr/bin/env python3
"""Runs the workspace's Rust tests with the test binaries side by side.

`cargo test --workspace` runs its test binaries one after another, and many
of ours spend most of their time in one long test (a simulated card running
for seconds), leaving the second core idle: measured, 1.6 of 2 cores busy.
This script builds the tests with cargo, then runs the binaries itself, as
many at once as there are cores, the longest first, each as `cargo test`
would (working directory its package's root, CARGO_MANIFEST_DIR and
CARGO_PKG_NAME set, and .cargo/config.toml's [env]), and prints each
binary's whole output when it ends, so the log reads as cargo's does. Then
the doc tests, through cargo. Exit status non-zero when any test fails; the
failing binaries are named at the end.

    tools/run_tests.py [--jobs N] [BINARY ...] [-- ARGS FOR EVERY TEST BINARY]

BINARY names test binaries to run (card_rx, fuzz, homa_hw for a crate's unit
tests); without any, all of them and the doc tests.

Durations of the last run are kept in target/test-durations.json and order
the next run; on a fresh clone the binaries listed in SLOW_FIRST go first.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

# Measured on 7 December 2026 (debug build, 2 cores), the binaries of 10 s
# and more: on a fresh clone they start first, so none of them is left to run
# alone at the end. Only the order depends on this list.
SLOW_FIRST = [
    "fuzz", "dead_peer", "card_rpc", "card_tx", "board_lint", "cli",
    "vivado_stub", "card_rx", "rpc_table", "network", "recovery", "sim_cli",
    "vfio_vm", "grant_scheduler_rtl", "endpoint", "interrupts",
]

RESULT = re.compile(r"^test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored")


class TestBinary(NamedTuple):
    name: str  # the target's name: card_rx, homa_hw, ...
    src: str  # its source, relative to the package: tests/card_rx.rs
    exe: str
    package_dir: str
    package: str  # the package's name, as CARGO_PKG_NAME

    @property
    def key(self):
        """Its entry in target/test-durations.json."""
        return f"{self.package_dir}:{self.src}"


def build(cargo, root):
    """Builds every test binary; returns a TestBinary for each."""
    cmd = [cargo, "test", "--workspace", "--no-run", "--message-format=json-render-diagnostics"]
    proc = subprocess.Popen(cmd, cwd=root, stdout=subprocess.PIPE, text=True)
    binaries, names = [], {}
    for line in proc.stdout:
        msg = json.loads(line)
        if msg.get("reason") == "compiler-message":
            sys.stderr.write(msg["message"].get("rendered") or "")
            continue
        if msg.get("reason") != "compiler-artifact" or not msg["profile"]["test"]:
            continue
        if not msg.get("executable"):
            continue
        target = msg["target"]
        manifest = msg["manifest_path"]
        if manifest not in names:
            with open(manifest, "rb") as f:
                names[manifest] = tomllib.load(f)["package"]["name"]
        package_dir = os.path.dirname(manifest)
        binaries.append(TestBinary(target["name"], os.path.relpath(target["src_path"], package_dir),
                                   msg["executable"], package_dir, names[manifest]))
    if proc.wait() != 0:
        sys.exit(f"run_tests: `{' '.join(cmd)}` failed")
    return binaries


def config_env(root):
    """The [env] table of .cargo/config.toml, which cargo gives the tests too."""
    try:
        with open(os.path.join(root, ".cargo", "config.toml"), "rb") as f:
            table = tomllib.load(f).get("env", {})
    except OSError:
        return {}
    return {k: v if isinstance(v, str) else v["value"] for k, v in table.items()}


def run_binary(binary, args, base_env):
    env = dict(base_env)
    env["CARGO_MANIFEST_DIR"] = binary.package_dir
    env["CARGO_PKG_NAME"] = binary.package
    start = time.monotonic()
    proc = subprocess.run([binary.exe] + args, cwd=binary.package_dir, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          errors="replace")
    return proc.returncode, proc.stdout, time.monotonic() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2,
                        help="test binaries run at once (default: the cores)")
    parser.add_argument("binaries", nargs="*", metavar="BINARY",
                        help="run only these test binaries (default: all, and the doc tests)")
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    opts = parser.parse_args(argv[:split])
    opts.args = argv[split + 1:]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cargo = os.environ.get("CARGO", "cargo")

    binaries = build(cargo, root)
    if opts.binaries:
        unknown = set(opts.binaries) - {b.name for b in binaries}
        if unknown:
            sys.exit(f"run_tests: no test binary named {', '.join(sorted(unknown))}")
        binaries = [b for b in binaries if b.name in opts.binaries]
    # What every binary's environment starts from (cargo's [env] does not
    # override what is already set).
    base_env = config_env(root)
    base_env.update(os.environ)
    deps = os.path.join(root, "target", "debug", "deps")
    base_env["LD_LIBRARY_PATH"] = deps + os.pathsep + base_env.get("LD_LIBRARY_PATH", "")
    durations_path = os.path.join(root, "target", "test-durations.json")
    try:
        with open(durations_path) as f:
            last = json.load(f)
    except (OSError, ValueError):
        last = {}

    def expected(b):
        if b.key in last:
            return last[b.key]
        return 1000 - SLOW_FIRST.index(b.name) if b.name in SLOW_FIRST else 0

    binaries.sort(key=expected, reverse=True)
    lock = threading.Lock()
    failed, durations = [], {}
    totals = [0, 0, 0]
    start = time.monotonic()

    def one(binary):
        rc, out, seconds = run_binary(binary, opts.args, base_env)
        rel = os.path.relpath(binary.exe, root)
        with lock:
            print(f"     Running {binary.src} ({rel}) [{seconds:.1f} s]")
            sys.stdout.write(out)
            sys.stdout.flush()
            durations[binary.key] = round(seconds, 2)
            for line in out.splitlines():
                m = RESULT.match(line)
                if m:
                    for i in range(3):
                        totals[i] += int(m.group(i + 1))
            if rc != 0:
                failed.append(f"{os.path.relpath(binary.package_dir, root)}: {binary.src}")

    with ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as pool:
        list(pool.map(one, binaries))
    wall = time.monotonic() - start
    last.update(durations)
    with open(durations_path, "w") as f:
        json.dump(last, f, indent=0, sort_keys=True)

    if not opts.binaries:
        doc = subprocess.run([cargo, "test", "--workspace", "--doc"], cwd=root)
        if doc.returncode != 0:
            failed.append("doc tests")
    print(f"run_tests: {len(binaries)} test binaries in {wall:.0f} s, {opts.jobs} at once: "
          f"{totals[0]} passed, {totals[1]} failed, {totals[2]} ignored (doc tests apart)")
    if failed:
        print("run_tests: FAILED: " + "; ".join(failed))
        sys.exit(1)


if __name__ == "__main__":
    main()

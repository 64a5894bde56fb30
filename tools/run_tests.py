#!/usr/bin/env python3
"""Runs the workspace's Rust tests with the test binaries side by side.

`cargo test --workspace` runs its test binaries one after another, and many
of ours spend most of their time in one long test (a simulated card running
for seconds), leaving the second core idle: measured, 1.6 of 2 cores busy.
This script builds the tests with cargo, then runs the binaries itself, as
many at once as there are cores, the longest first, each as `cargo test`
would (working directory its package's root, CARGO_MANIFEST_DIR and
CARGO_PKG_NAME set, and .cargo/config.toml's [env]), and prints each binary's whole output when it ends, so
the log reads as cargo's does. Then the doc tests, through cargo. Exit status
non-zero when any test fails; the failing binaries are named at the end.

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

# Measured on 7 December 2026 (debug build, 2 cores), the binaries of 10 s
# and more: on a fresh clone they start first, so none of them is left to run
# alone at the end. Only the order depends on this list.
SLOW_FIRST = [
    "fuzz", "dead_peer", "card_rpc", "card_tx", "board_lint", "cli",
    "vivado_stub", "card_rx", "rpc_table", "network", "recovery", "sim_cli",
    "vfio_vm", "grant_scheduler_rtl", "endpoint", "interrupts",
]

RESULT = re.compile(r"^test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored")


def build(cargo, root):
    """Builds every test binary; returns [(name, source, executable, package dir)]."""
    cmd = [cargo, "test", "--workspace", "--no-run", "--message-format=json-render-diagnostics"]
    proc = subprocess.Popen(cmd, cwd=root, stdout=subprocess.PIPE, text=True)
    binaries = []
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
        package = os.path.dirname(msg["manifest_path"])
        src = os.path.relpath(target["src_path"], package)
        binaries.append((target["name"], src, msg["executable"], package, msg["package_id"]))
    if proc.wait() != 0:
        sys.exit(f"run_tests: `{' '.join(cmd)}` failed")
    return binaries


def package_name(package_id):
    # "path+file:///work/main/hw-sim#homa-hw-sim@0.1.0" or the older
    # "homa-hw-sim 0.1.0 (path+file://...)".
    if "#" in package_id:
        tail = package_id.rsplit("#", 1)[1]
        return tail.split("@", 1)[0] if "@" in tail else os.path.basename(package_id.split("#")[0])
    return package_id.split(" ", 1)[0]


def config_env(root):
    """The [env] table of .cargo/config.toml, which cargo gives the tests too."""
    try:
        with open(os.path.join(root, ".cargo", "config.toml"), "rb") as f:
            table = tomllib.load(f).get("env", {})
    except OSError:
        return {}
    return {k: v if isinstance(v, str) else v["value"] for k, v in table.items()}


def run_binary(binary, args, root):
    name, src, exe, package, package_id = binary
    env = config_env(root)
    env.update(os.environ)
    env["CARGO_MANIFEST_DIR"] = package
    env["CARGO_PKG_NAME"] = package_name(package_id)
    deps = os.path.join(root, "target", "debug", "deps")
    env["LD_LIBRARY_PATH"] = deps + os.pathsep + env.get("LD_LIBRARY_PATH", "")
    start = time.monotonic()
    proc = subprocess.run([exe] + args, cwd=package, env=env,
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
        unknown = set(opts.binaries) - {b[0] for b in binaries}
        if unknown:
            sys.exit(f"run_tests: no test binary named {', '.join(sorted(unknown))}")
        binaries = [b for b in binaries if b[0] in opts.binaries]
    durations_path = os.path.join(root, "target", "test-durations.json")
    try:
        with open(durations_path) as f:
            last = json.load(f)
    except (OSError, ValueError):
        last = {}

    def expected(b):
        key = f"{b[3]}:{b[1]}"
        if key in last:
            return last[key]
        return 1000 - SLOW_FIRST.index(b[0]) if b[0] in SLOW_FIRST else 0

    binaries.sort(key=expected, reverse=True)
    lock = threading.Lock()
    failed, durations = [], {}
    totals = [0, 0, 0]
    start = time.monotonic()

    def one(binary):
        rc, out, seconds = run_binary(binary, opts.args, root)
        rel = os.path.relpath(binary[2], root)
        with lock:
            print(f"     Running {binary[1]} ({rel}) [{seconds:.1f} s]")
            sys.stdout.write(out)
            sys.stdout.flush()
            durations[f"{binary[3]}:{binary[1]}"] = round(seconds, 2)
            for line in out.splitlines():
                m = RESULT.match(line)
                if m:
                    for i in range(3):
                        totals[i] += int(m.group(i + 1))
            if rc != 0:
                failed.append(f"{os.path.relpath(binary[3], root)}: {binary[1]}")

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

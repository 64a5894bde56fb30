# Homa NIC: the two commands of the quick start, and the tools they need.
#   make demo   the main job (runs in release)
#   make test   the whole test suite (debug build), the VFIO VM test and the Python binding's pytest included
#   make vfio-test  only the VFIO VM test (the driver's VFIO backend against QEMU's edu in a guest)
#   make homa-vm-test  the kernel-Homa VM test (HomaModule in a guest and the card on a UDP wire; opt-in)
# Both install what is missing first (`make deps`).

CARGO ?= cargo
APT_PACKAGES := verilator g++ make tcl python3 python3-venv
# The Python binding's test tool (pytest) lives in a venv.
PYTHON ?= python3
PY_VENV := target/python-venv
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: homa-vm-deps homa-vm-test
.PHONY: deps vfio-deps python-deps python-test demo test vfio-test verilog lint synth synth-deps clean

deps:
	@missing=""; for tool in verilator g++ make tclsh; do command -v $$tool >/dev/null 2>&1 || missing=1; done; \
	$(PYTHON) -c 'import venv, ensurepip' >/dev/null 2>&1 || missing=1; \
	if [ -n "$$missing" ]; then \
		echo "installing $(APT_PACKAGES) with apt-get"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $(APT_PACKAGES); \
	fi

demo: deps
	$(CARGO) build --release --quiet
	mkdir -p out
	target/release/homa-nic demo --count 200 --pcap out/demo.pcap
	target/release/homa-nic sim --hosts 16 --workload w4 --load 0.8 --duration-us 5000 --plot out/slowdown-w4.svg

# A venv with pytest and pytest-xdist, made once (kept in target/, so `make
# clean` removes it). The suite runs on both cores (`-n 2`): most of its time
# is each test's two simulated cards, one process each.
python-deps:
	@$(PY_VENV)/bin/python -c 'import pytest, xdist' 2>/dev/null || { \
		echo "making $(PY_VENV) (pytest, pytest-xdist)"; \
		$(PYTHON) -m venv $(PY_VENV) && \
		$(PY_VENV)/bin/pip install -q --disable-pip-version-check 'pytest>=7' 'pytest-xdist>=3'; }

# The Rust tests: built by `cargo test --workspace --no-run`, then the test
# binaries run side by side, the longest first (tools/run_tests.py: cargo
# runs them one after another, leaving a core idle behind each long one).
test: deps vfio-deps
	CARGO=$(CARGO) $(PYTHON) tools/run_tests.py
	@$(MAKE) --no-print-directory python-test

# The Python binding, built in debug by cargo (not `maturin develop`), laid
# out as the package in $(PY_STAGE), and its pytest suite run against it.
# The build names every target `cargo test` builds (tests, bins, examples)
# beside the libraries: then cargo resolves the dependencies' features as the
# tests' build did (dev-dependencies included) and reuses its homa-hw, hw-sim
# and host-lib, compiling only the extension (about 20 s, not 140-160).
# Users build wheels with maturin (python/README.md); PYO3_BUILD_EXTENSION_MODULE
# is what maturin sets so the module does not link libpython.
PY_STAGE := target/python-stage

python-test: deps python-deps
	PYO3_BUILD_EXTENSION_MODULE=1 $(CARGO) build --workspace --lib --bins --tests --examples --quiet
	rm -rf $(PY_STAGE) && mkdir -p $(PY_STAGE)/homa_nic
	cp python/homa_nic/*.py python/homa_nic/*.pyi python/homa_nic/py.typed $(PY_STAGE)/homa_nic/
	cp target/debug/lib_native.so $(PY_STAGE)/homa_nic/_native.abi3.so
	PYTHONPATH=$(CURDIR)/$(PY_STAGE) $(PY_VENV)/bin/python -m pytest -q -n 2 python/tests

# The VFIO VM test's tools: QEMU and busybox-static from apt, and Debian's kernel
# package unpacked (not installed) into $(VFIO_KERNEL_DIR). Never fails: where they
# cannot be had, the test says so and skips. A newer qemu-utils (from backports) cannot stay
# beside bookworm's QEMU and apt removes it: bookworm's is put back, so qemu-img stays.
VFIO_APT_PACKAGES := qemu-system-x86 busybox-static
VFIO_KERNEL_DIR := target/vfio-vm/kernel

vfio-deps:
	@if ! command -v qemu-system-x86_64 >/dev/null 2>&1 || [ ! -x /bin/busybox ]; then \
		echo "installing $(VFIO_APT_PACKAGES) with apt-get (for the VFIO VM test)"; \
		( $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $(VFIO_APT_PACKAGES) >/dev/null ) \
			|| echo "vfio-deps: cannot install $(VFIO_APT_PACKAGES): the VFIO VM test will skip"; \
		command -v qemu-img >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends qemu-utils >/dev/null || true; \
	fi
	@testbench/vm/fetch-kernel.sh $(VFIO_KERNEL_DIR) || echo "vfio-deps: no guest kernel: the VFIO VM test will skip"

vfio-test: deps vfio-deps
	$(CARGO) test -p homa-testbench --test vfio_vm -- --nocapture

# The kernel-Homa VM test (testbench/tests/homa_vm.rs; docs/udp-wire.md): Debian's 6.12
# kernel (bookworm-backports, downloaded and unpacked, not installed) and HomaModule built
# against it into $(HOMA_VM_DIR) by fetch-homa.sh (HOMA_MODULE_REPO=a local clone where
# GitHub is out of reach); the card is the release build. Opt-in: it takes minutes, not
# seconds (see the test's output), so `make test` does not run it.
HOMA_VM_DIR := target/homa-vm

homa-vm-deps: vfio-deps
	@testbench/vm/fetch-homa.sh $(HOMA_VM_DIR) || echo "homa-vm-deps: no HomaModule guest: the kernel-Homa VM test will skip"

homa-vm-test: deps homa-vm-deps
	$(CARGO) build --release --bin homa-nic
	HOMA_VM_TEST=1 $(CARGO) test -p homa-testbench --test homa_vm -- --nocapture

verilog: deps
	$(CARGO) run --quiet -- verilog --out out/verilog

lint: verilog
	cd out/verilog && verilator --lint-only -Wall verilator.vlt homa_core.v

# Every Alveo board's top level linted, every board's Vivado script through stubbed Tcl (also in `make test`).
.PHONY: lint-boards
lint-boards: deps
	$(MAKE) -C firmware check

# Resources and path depth per block: yosys synth_xilinx (UltraScale+) on every design,
# one after the other; the table in README.md's resources section comes from here.
# SYNTH_ARGS passes options (--json, --paths, --design homa_core, --check).
synth: deps synth-deps
	$(CARGO) run --quiet -- synth --out out/synth $(SYNTH_ARGS)

# yosys for `make synth` only (not needed by `make test`).
synth-deps:
	@command -v yosys >/dev/null 2>&1 || { \
		echo "installing yosys with apt-get"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq yosys; \
	}

clean:
	$(CARGO) clean
	rm -rf out

